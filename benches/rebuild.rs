//! Cold rebuild and memory per finished game, per game kind.
//!
//! `cargo bench --bench rebuild -- [--games N] [--samples N]`
//!
//! Starts its own `redis-server` (no persistence) on a free loopback port and, for each kind at
//! its longest table (Medici vs Strozzi 2p, Strozzi 6p, Manila 5p, La Strada 4p), plays `--games`
//! random games to the end through a real gRPC replica, with a request id on every Act like real
//! clients, and keeps the longest. Two replicas write the games: one that never snapshots and one
//! that snapshots every 64 actions (the default). Then it measures, `--samples` times each:
//! - **load + replay**: one store read (`load`: meta, newest snapshot, log tail) and re-executing
//!   the log on the engine, as a replica does for a game it has not cached;
//! - **cold GetView**: a GetView of the finished game on a replica started with an empty cache,
//!   which is what a client waits for (rebuild, view, gRPC round trip) — a new replica per sample;
//! - **Redis memory** of the game (`MEMORY USAGE` of its keys), and how much of it the request
//!   ids take.

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::Instant;

use common::*;
use hdrhistogram::Histogram;
use prost::Message;
use tabula::games::Seed;
use tabula::games::common::GameRng;
use tabula::hosting;
use tabula::proto::v1 as pb;
use tabula::service::ServiceOptions;
use tabula::store::GameLog;
use tabula::store::redis::{RedisOptions, RedisStore};

struct Args {
    games: u64,
    samples: u64,
}

fn args() -> Args {
    let mut args = Args {
        games: 20,
        samples: 200,
    };
    let mut iter = std::env::args().skip(1);
    while let Some(arg) = iter.next() {
        let value = |iter: &mut dyn Iterator<Item = String>| {
            iter.next().and_then(|v| v.parse().ok()).expect("a number")
        };
        match arg.as_str() {
            "--games" => args.games = value(&mut iter),
            "--samples" => args.samples = value(&mut iter),
            _ => {} // cargo bench passes --bench
        }
    }
    args
}

/// Every hosted game at its largest table: the longest logs, the most state per game.
fn configs() -> Vec<(String, pb::GameConfig)> {
    hosting::registry()
        .iter()
        .map(|game| {
            let facts = game.game_type;
            (
                format!("{} {}p", facts.display_name, facts.max_seats),
                game.config(facts.max_seats),
            )
        })
        .collect()
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let args = args();
    let redis = RedisServer::start();
    let backend = Backend::Redis(redis);
    let Backend::Redis(redis) = &backend else {
        unreachable!()
    };
    let store = RedisStore::connect(&RedisOptions::single(redis.url()))
        .await
        .expect("redis");
    let mut admin = redis::Client::open(redis.url())
        .expect("url")
        .get_multiplexed_async_connection()
        .await
        .expect("redis connection");

    println!(
        "tabula rebuild: longest of {} random games per kind, {} samples each; Redis {} without persistence",
        args.games,
        args.samples,
        redis_version(&mut admin).await
    );
    println!(
        "{:<22} {:>8} {:>10} | {:>22} | {:>22} | {:>22} | {:>9} {:>9}",
        "game",
        "actions",
        "snapshot",
        "load+replay p50/p99 µs",
        "  of which load p50 µs",
        "cold GetView p50/p99 µs",
        "Redis KB",
        "req ids"
    );
    for (name, config) in configs() {
        for snapshot_every in [0, 64] {
            let options = ServiceOptions {
                allow_client_seed: true,
                cache_capacity: 1000,
                snapshot_every,
                operator: None,
                ..ServiceOptions::default()
            };
            let writer = Replica::start_with(&backend, options.clone()).await;
            let mut client = writer.client().await;
            let mut longest: Option<(String, u64)> = None;
            for seed in 0..args.games {
                let game = create(&mut client, config.clone(), 7_000 + seed).await;
                let mut rng = GameRng::from_seed(&Seed::from_u64(seed));
                let version =
                    play_random(std::slice::from_mut(&mut client), &game, &mut rng, 10_000).await;
                if longest.as_ref().is_none_or(|(_, best)| version > *best) {
                    longest = Some((game.game_id.clone(), version));
                }
            }
            let (game_id, actions) = longest.expect("at least one game");

            let mut rebuild = Histogram::<u64>::new(3).expect("histogram");
            let mut load_only = Histogram::<u64>::new(3).expect("histogram");
            for _ in 0..args.samples {
                let begin = Instant::now();
                let loaded = store.load(&game_id).await.expect("load").expect("game");
                load_only.record(begin.elapsed().as_micros() as u64).ok();
                let state = replay(&loaded);
                rebuild.record(begin.elapsed().as_micros() as u64).ok();
                assert!(state.status().finished, "{name}: replay reaches the end");
            }

            let mut cold = Histogram::<u64>::new(3).expect("histogram");
            for _ in 0..args.samples.min(50) {
                let fresh = Replica::start_with(&backend, options.clone()).await;
                let mut client = fresh.client().await;
                let begin = Instant::now();
                client
                    .get_view(pb::GetViewRequest {
                        narrate: false,
                        game_id: game_id.clone(),
                        version: None,
                        min_version: None,
                        omit_view: false,
                    })
                    .await
                    .expect("GetView");
                cold.record(begin.elapsed().as_micros() as u64).ok();
            }

            let (bytes, request_bytes) = memory(&mut admin, &game_id).await;
            println!(
                "{:<22} {:>8} {:>10} | {:>10} / {:>9} | {:>22} | {:>10} / {:>9} | {:>9.1} {:>9.1}",
                name,
                actions,
                if snapshot_every == 0 {
                    "none".to_owned()
                } else {
                    format!("every {snapshot_every}")
                },
                rebuild.value_at_quantile(0.5),
                rebuild.value_at_quantile(0.99),
                load_only.value_at_quantile(0.5),
                cold.value_at_quantile(0.5),
                cold.value_at_quantile(0.99),
                bytes as f64 / 1024.0,
                request_bytes as f64 / 1024.0,
            );
        }
    }
}

/// Re-executes what `load` returned, as a replica rebuilding a game does.
fn replay(loaded: &tabula::store::Loaded) -> Box<dyn hosting::GameState> {
    let meta = &loaded.meta;
    let mut state = match &loaded.snapshot {
        Some(snapshot) => hosting::restore(meta.kind, &snapshot.state).expect("snapshot"),
        None => {
            let config = pb::GameConfig::decode(meta.config.as_slice()).expect("config");
            hosting::setup(&config, &meta.seed).expect("setup")
        }
    };
    for entry in &loaded.entries {
        let action = pb::Action::decode(entry.action.as_slice()).expect("action");
        state.apply(entry.seat, &action).expect("legal");
    }
    state
}

/// Bytes Redis holds for the game (every key with its hash tag), and for its request ids alone.
async fn memory(admin: &mut redis::aio::MultiplexedConnection, game_id: &str) -> (u64, u64) {
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("tabula:{{{game_id}}}:*"))
        .query_async(admin)
        .await
        .expect("KEYS");
    let mut total = 0;
    let mut requests = 0;
    for key in keys {
        let bytes: u64 = redis::cmd("MEMORY")
            .arg("USAGE")
            .arg(&key)
            .arg("SAMPLES")
            .arg(0)
            .query_async(admin)
            .await
            .expect("MEMORY USAGE");
        total += bytes;
        if key.ends_with(":req") {
            requests += bytes;
        }
    }
    (total, requests)
}

async fn redis_version(admin: &mut redis::aio::MultiplexedConnection) -> String {
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query_async(admin)
        .await
        .expect("INFO");
    info.lines()
        .find_map(|line| line.strip_prefix("redis_version:"))
        .unwrap_or("?")
        .to_owned()
}
