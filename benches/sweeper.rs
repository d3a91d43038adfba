//! The turn-clock sweeper's cost with many clocked games, on the memory store and on a real Redis.
//!
//! `cargo bench --bench sweeper -- [--games N] [--samples N] [--store memory|redis|both]`
//!
//! For each store, writes `--games` (default 100,000) clocked two-player games (Medici vs Strozzi,
//! a limit of one hour per decision, forfeit on timeout) straight into the store, each with its
//! deadline indexed as CreateGame does, then measures:
//! - **idle pass**: a sweep pass when none of them is due (`--samples` passes): what every replica
//!   pays every `--clock-sweep-interval` whatever the number of clocked games;
//! - **expiring**: sweep passes with the clock two hours on, until no deadline is due: every game
//!   is reloaded, re-checked and ends by one appended timeout (the forfeit), and leaves the index.
//!   Reported as timeouts per second of one replica, and the passes it took.
//!
//! Redis: its own `redis-server` (no persistence) on a free loopback port.

#[path = "../tests/common/mod.rs"]
mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use futures::StreamExt;
use hdrhistogram::Histogram;
use prost::Message;
use tabula::games::Seed;
use tabula::hosting;
use tabula::proto::v1 as pb;
use tabula::service::{ServiceOptions, SweepReport, SweeperOptions, Tabula};
use tabula::store::memory::MemoryStore;
use tabula::store::{GameMeta, Store, unix_millis};

const LIMIT_MS: u64 = 3_600_000;

struct Args {
    games: u64,
    samples: u64,
    stores: Vec<&'static str>,
}

fn args() -> Args {
    let mut args = Args {
        games: 100_000,
        samples: 200,
        stores: vec!["memory", "redis"],
    };
    let mut iter = std::env::args().skip(1);
    while let Some(arg) = iter.next() {
        match arg.as_str() {
            "--games" => args.games = iter.next().and_then(|v| v.parse().ok()).expect("N"),
            "--samples" => args.samples = iter.next().and_then(|v| v.parse().ok()).expect("N"),
            "--store" => {
                args.stores = match iter.next().as_deref() {
                    Some("memory") => vec!["memory"],
                    Some("redis") => vec!["redis"],
                    _ => vec!["memory", "redis"],
                }
            }
            _ => {} // cargo bench passes --bench
        }
    }
    args
}

fn config() -> pb::GameConfig {
    pb::GameConfig {
        table: Some(pb::TableConfig {
            timeout_policy: pb::TimeoutPolicy::Forfeit as i32,
            clock: Some(pb::TurnClock {
                kind: Some(pb::turn_clock::Kind::PerDecision(
                    pb::turn_clock::PerDecision { limit_ms: LIMIT_MS },
                )),
            }),
            ..Default::default()
        }),
        ..medici_config()
    }
}

/// Writes `games` clocked games created now, as CreateGame does (deadline indexed first).
async fn populate(store: &Arc<dyn Store>, games: u64) -> Duration {
    let config = config().encode_to_vec();
    let rules_version = hosting::rules_version(pb::GameKind::MediciVsStrozzi)
        .expect("hosted")
        .to_owned();
    let started = Instant::now();
    futures::stream::iter(0..games)
        .for_each_concurrent(128, |n| {
            let store = store.clone();
            let config = config.clone();
            let rules_version = rules_version.clone();
            async move {
                let created_at_ms = unix_millis();
                let meta = GameMeta {
                    game_id: format!("{n:032x}"),
                    kind: pb::GameKind::MediciVsStrozzi,
                    config,
                    rules_version,
                    seed: Seed::from_u64(n),
                    token_hashes: vec![[0; 32]; 2],
                    created_at_ms,
                    players: Vec::new(),
                    created_by: tabula::RELEASE.to_owned(),
                    tenant: None,
                    webhooks: Vec::new(),
                    seating: Vec::new(),
                    signed_commitment: Vec::new(),
                    creation: Vec::new(),
                };
                store
                    .set_deadline(&meta.game_id, 0, Some(created_at_ms + LIMIT_MS))
                    .await
                    .expect("index the deadline");
                store.create(&meta).await.expect("create");
            }
        })
        .await;
    started.elapsed()
}

fn options() -> ServiceOptions {
    ServiceOptions {
        cache_capacity: 10_000,
        sweeper: SweeperOptions {
            // Passes are run by hand here.
            enabled: false,
            ..SweeperOptions::default()
        },
        ..ServiceOptions::default()
    }
}

async fn measure(name: &str, store: Arc<dyn Store>, args: &Args) {
    let written = populate(&store, args.games).await;
    let tabula = Tabula::new(store, options());

    let mut idle = Histogram::<u64>::new(3).expect("histogram");
    for _ in 0..args.samples {
        let started = Instant::now();
        let report = tabula::service::sweep_once(&tabula, unix_millis())
            .await
            .expect("sweep");
        idle.record(started.elapsed().as_micros() as u64)
            .expect("record");
        assert_eq!(report, SweepReport::default(), "nothing is due yet");
    }

    // Past every deadline and the delay before its timeout may be logged.
    let later = unix_millis() + 2 * LIMIT_MS + tabula::service::lag::TIMEOUT_DELAY_MS;
    let started = Instant::now();
    let mut total = SweepReport::default();
    let mut passes = 0;
    loop {
        let report = tabula::service::sweep_once(&tabula, later)
            .await
            .expect("sweep");
        if report.due == 0 {
            break;
        }
        passes += 1;
        total.due += report.due;
        total.timeouts += report.timeouts;
        total.lost_races += report.lost_races;
        total.corrected += report.corrected;
        total.failed += report.failed;
    }
    let expiring = started.elapsed();
    assert_eq!(total.timeouts as u64, args.games, "{total:?}");
    println!(
        "{name:<7} {:>8} games (written in {:>5.1} s) | idle pass p50 {:>6} µs p99 {:>6} µs max {:>6} µs \
         | expiring: {} timeouts in {:>5.2} s = {:>7.0}/s over {passes} passes ({} failed)",
        args.games,
        written.as_secs_f64(),
        idle.value_at_quantile(0.5),
        idle.value_at_quantile(0.99),
        idle.max(),
        total.timeouts,
        expiring.as_secs_f64(),
        total.timeouts as f64 / expiring.as_secs_f64(),
        total.failed,
    );
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let args = args();
    println!(
        "tabula sweeper: {} clocked games per store, {} idle passes; one replica sweeping \
         (batch {} per shard, {} games at once)",
        args.games,
        args.samples,
        SweeperOptions::default().batch,
        SweeperOptions::default().concurrency
    );
    for store in args.stores.clone() {
        match store {
            "memory" => {
                measure("memory", Arc::new(MemoryStore::new()), &args).await;
            }
            _ => {
                let redis = Backend::redis();
                measure("redis", redis.store().await, &args).await;
            }
        }
    }
}
