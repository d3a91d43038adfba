//! Load benchmark: Acts/s and latency percentiles through gRPC against the Redis store, with the
//! raw round trip of the append script measured in the same run.
//!
//! `cargo bench --bench service_load -- [--seconds N] [--games N] [--memory]
//! [--durability none|replicas=N|fsync]`
//!
//! Starts its own `redis-server` on a free loopback port and a replica in this process. With
//! `--durability replicas=N` the Redis has N replicas of its own (`redis-server --replicaof`); with
//! `--durability fsync` the store is a `valkey-server` (WAITAOF) with `appendfsync everysec`. Each of
//! `--games` concurrent clients plays its own Medici vs Strozzi game with random legal actions,
//! mirroring the game locally (client-chosen seed) so that only `Act` calls go over the wire.

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::*;
use hdrhistogram::Histogram;
use tabula::games::common::GameRng;
use tabula::games::{Seed, Viewer};
use tabula::hosting;
use tabula::proto::v1 as pb;
use tabula::server;
use tabula::store::redis::{Durability, RedisOptions, RedisStore};
use tabula::store::{GameLog, GameMeta, NewEntry, Store};

struct Args {
    seconds: u64,
    games: usize,
    memory: bool,
    durability: Durability,
}

fn args() -> Args {
    let mut args = Args {
        seconds: 10,
        games: 16,
        memory: false,
        durability: Durability::None,
    };
    let mut iter = std::env::args().skip(1);
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--seconds" => {
                args.seconds = iter
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(args.seconds)
            }
            "--games" => {
                args.games = iter
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(args.games)
            }
            "--memory" => args.memory = true,
            "--durability" => {
                args.durability = iter
                    .next()
                    .map(|v| v.parse().expect("--durability none|replicas=N|fsync"))
                    .unwrap_or_default()
            }
            _ => {} // cargo bench passes --bench
        }
    }
    args
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let args = args();
    let redis = RedisServer::start();
    let backend = if args.memory {
        Backend::memory()
    } else {
        Backend::Redis(RedisServer::start())
    };
    let store_name = if args.memory { "memory" } else { "redis" };
    // The servers a durable store needs live as long as the run.
    let mut held_servers = Vec::new();
    let store: std::sync::Arc<dyn Store> = match args.durability {
        Durability::None => backend.store().await,
        durability => {
            let primary = match durability {
                Durability::Fsync => servers::ServerProcess::start(
                    &servers::valkey_server(),
                    &["--appendonly", "yes", "--appendfsync", "everysec"],
                ),
                _ => servers::ServerProcess::start("redis-server", &[]),
            };
            if let Durability::Replicas(n) = durability {
                for _ in 0..n {
                    held_servers.push(primary.start_replica());
                }
            }
            let options = RedisOptions {
                durability,
                ..RedisOptions::single(primary.url())
            };
            held_servers.push(primary);
            std::sync::Arc::new(RedisStore::connect(&options).await.expect("durable store"))
        }
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(server::serve(
        listener,
        store,
        test_options(),
        std::future::pending(),
    ));
    let url = format!("http://{address}");

    println!(
        "tabula service_load: {} concurrent games, {} s, {store_name} store, durability {}",
        args.games, args.seconds, args.durability
    );
    let deadline = Instant::now() + Duration::from_secs(args.seconds);
    let mut players = Vec::new();
    for game in 0..args.games {
        let client = connect(&url).await;
        players.push(tokio::spawn(play_until(client, game as u64, deadline)));
    }
    let mut latencies = Histogram::<u64>::new(3).expect("histogram");
    let mut games_finished = 0;
    let started = Instant::now();
    for player in players {
        let (histogram, finished) = player.await.expect("player");
        latencies.add(histogram).expect("same bounds");
        games_finished += finished;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let acts = latencies.len();
    println!(
        "Act through gRPC: {acts} acts in {elapsed:.1} s = {:.0} acts/s; latency p50 {} µs, p90 {} µs, p99 {} µs, max {} µs; {games_finished} games finished",
        acts as f64 / elapsed,
        latencies.value_at_quantile(0.50),
        latencies.value_at_quantile(0.90),
        latencies.value_at_quantile(0.99),
        latencies.max(),
    );

    // The append script alone: one EVALSHA round trip, sequential, on its own connection.
    let store = RedisStore::connect(&RedisOptions::single(redis.url()))
        .await
        .expect("redis");
    let meta = GameMeta {
        game_id: "append-bench".into(),
        kind: pb::GameKind::MediciVsStrozzi,
        config: Vec::new(),
        rules_version: "bench".into(),
        seed: Seed([0; 32]),
        token_hashes: vec![[0; 32]; 2],
        created_at_ms: 0,
        players: Vec::new(),
        created_by: tabula::RELEASE.to_owned(),
        tenant: None,
        webhooks: Vec::new(),
        seating: Vec::new(),
        signed_commitment: Vec::new(),
        creation: Vec::new(),
    };
    store.create(&meta).await.expect("create");
    let mut append = Histogram::<u64>::new(3).expect("histogram");
    let appends = 20_000u64;
    let entry = NewEntry {
        retry: tabula::store::RetryScope::AtVersion,
        seat: 0,
        action: vec![0; 8],
        request_id: String::new(),
        finishes: false,
        server_time_ms: 0,
        head: None,
        deadline: None,
    };
    let started = Instant::now();
    for expected in 0..appends {
        let begin = Instant::now();
        store
            .append("append-bench", expected, &entry)
            .await
            .expect("append");
        append
            .record(begin.elapsed().as_micros() as u64)
            .expect("record");
    }
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "Append script round trip (EVALSHA, sequential): {appends} appends in {elapsed:.1} s = {:.0}/s; p50 {} µs, p99 {} µs",
        appends as f64 / elapsed,
        append.value_at_quantile(0.50),
        append.value_at_quantile(0.99),
    );
}

async fn connect(url: &str) -> Client {
    for _ in 0..100 {
        if let Ok(client) = Client::connect(url.to_owned()).await {
            return client;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the replica at {url} did not accept connections");
}

/// One client playing games back to back until `deadline`; returns its Act latencies (µs).
async fn play_until(mut client: Client, lane: u64, deadline: Instant) -> (Histogram<u64>, u64) {
    let mut latencies = Histogram::<u64>::new(3).expect("histogram");
    let mut rng = GameRng::from_seed(&Seed::from_u64(lane));
    let mut finished = 0;
    let mut seed = lane * 1_000_000;
    while Instant::now() < deadline {
        seed += 1;
        let game = create(&mut client, medici_config(), seed).await;
        let mut mirror = hosting::setup(&medici_config(), &Seed::from_u64(seed)).expect("setup");
        while let Some(seat) = mirror.status().to_act {
            if Instant::now() >= deadline {
                return (latencies, finished);
            }
            let action = choose(&mirror.legal_actions(Viewer::Seat(seat)), &mut rng);
            let request = pb::ActRequest {
                narrate: false,
                game_id: game.game_id.clone(),
                action: Some(action.clone()),
                expected_version: None,
                request_id: String::new(),
                omit_view: false,
            };
            let begin = Instant::now();
            client
                .act(authorized(request, &token(&game, seat)))
                .await
                .expect("Act");
            latencies
                .record(begin.elapsed().as_micros() as u64)
                .expect("record");
            mirror.apply(seat, &action).expect("mirror agrees");
        }
        finished += 1;
    }
    (latencies, finished)
}
