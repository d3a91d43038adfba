//! What a tenant's listing costs when other tenants hold most of the games, on a real Redis:
//! read from the tenant's own index, and read from the shared index as a store without one does.
//!
//! `cargo bench --bench tenant_listing -- [--others N] [--own N] [--page N] [--samples N]`
//!
//! Writes `--others` games (default 100,000) of other tenants and `--own` (default 50) of tenant
//! `alpha` straight into the store, as CreateGame does, the tenant's games created in the middle
//! of the others, then lists all of alpha's games, newest first, `--page` (default 50) at a time,
//! `--samples` times (default 20) each way:
//! - **own index**: the store as this build makes it ([`tabula::store::redis::keys::TENANT_INDEX_COMPLETE`]);
//! - **shared index**: the same store with the marker deleted, so that a replica connecting to it
//!   reads every game's index and keeps alpha's (a store that 1.0.0 or an earlier development
//!   build created, before `tabula upgrade-store`).
//!
//! Each line gives the pages a whole listing took, how many of them held none of alpha's games,
//! and the time to list them all (p50, max). Redis: its own `redis-server` (no persistence) on a
//! free loopback port.

#[path = "../tests/common/mod.rs"]
mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use futures::StreamExt;
use tabula::games::Seed;
use tabula::proto::v1 as pb;
use tabula::store::{GameFilter, GameMeta, IndexPosition, ListOrder, ListQuery, Store, StoreError};

struct Args {
    others: u64,
    own: u64,
    page: usize,
    samples: usize,
}

fn args() -> Args {
    let mut args = Args {
        others: 100_000,
        own: 50,
        page: 50,
        samples: 20,
    };
    let mut iter = std::env::args().skip(1);
    while let Some(arg) = iter.next() {
        let mut number = || iter.next().and_then(|v| v.parse::<u64>().ok()).expect("N");
        match arg.as_str() {
            "--others" => args.others = number(),
            "--own" => args.own = number(),
            "--page" => args.page = number().max(1) as usize,
            "--samples" => args.samples = number().max(1) as usize,
            _ => {} // cargo bench passes --bench
        }
    }
    args
}

/// Game `n`, of `tenant`, created at `created_at_ms`.
fn game(n: u64, tenant: &str, created_at_ms: u64) -> GameMeta {
    GameMeta {
        game_id: format!("{n:032x}"),
        kind: pb::GameKind::MediciVsStrozzi,
        config: Vec::new(),
        rules_version: "rules-1".into(),
        seed: Seed::from_u64(n),
        token_hashes: vec![[0; 32]; 2],
        created_at_ms,
        players: Vec::new(),
        created_by: tabula::RELEASE.to_owned(),
        tenant: Some(tenant.to_owned()),
        webhooks: Vec::new(),
        seating: Vec::new(),
        signed_commitment: Vec::new(),
        creation: Vec::new(),
    }
}

/// Writes the games: the others one per millisecond from a fixed time, alpha's spread over the
/// middle of them. Returns how long it took.
async fn populate(store: &Arc<dyn Store>, args: &Args) -> Duration {
    const START_MS: u64 = 1_700_000_000_000;
    let started = Instant::now();
    let others = (0..args.others).map(|n| game(n, "beta", START_MS + n));
    let middle = START_MS + args.others / 4;
    let own = (0..args.own).map(|n| game(args.others + n, "alpha", middle + n * 2 + 1));
    futures::stream::iter(others.chain(own))
        .for_each_concurrent(128, |meta| {
            let store = store.clone();
            async move { store.create(&meta).await.expect("create") }
        })
        .await;
    started.elapsed()
}

/// One whole listing of alpha's games: (games, pages, pages without any of them).
async fn list_alpha(store: &dyn Store, page: usize) -> Result<(usize, usize, usize), StoreError> {
    let filter = GameFilter {
        tenant: Some("alpha".into()),
        ..GameFilter::default()
    };
    let (mut games, mut pages, mut empty) = (0, 0, 0);
    let mut after: Option<IndexPosition> = None;
    loop {
        let listed = store
            .list_games(&ListQuery {
                filter: filter.clone(),
                order: ListOrder::NewestFirst,
                after: after.clone(),
                limit: page,
            })
            .await?;
        pages += 1;
        games += listed.games.len();
        if listed.games.is_empty() {
            empty += 1;
        }
        after = listed.next;
        if after.is_none() {
            return Ok((games, pages, empty));
        }
    }
}

async fn measure(name: &str, store: &dyn Store, args: &Args) {
    let mut times = Vec::with_capacity(args.samples);
    let mut shape = (0, 0, 0);
    for _ in 0..args.samples {
        let started = Instant::now();
        shape = list_alpha(store, args.page).await.expect("a listing");
        times.push(started.elapsed());
    }
    times.sort();
    let (games, pages, empty) = shape;
    assert_eq!(games as u64, args.own, "every one of alpha's games, once");
    println!(
        "{name:<13} {games:>5} games in {pages:>5} pages ({empty:>5} empty) | whole listing p50 \
         {:>9.2} ms, max {:>9.2} ms",
        times[times.len() / 2].as_secs_f64() * 1e3,
        times[times.len() - 1].as_secs_f64() * 1e3,
    );
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let args = args();
    let redis = Backend::redis();
    let store = redis.store().await;
    let written = populate(&store, &args).await;
    println!(
        "tabula tenant_listing: {} games of other tenants and {} of alpha (written in {:.1} s); \
         alpha lists its games newest first, {} a page, {} times each way",
        args.others,
        args.own,
        written.as_secs_f64(),
        args.page,
        args.samples
    );
    measure("own index", &*store, &args).await;

    let url = redis.redis_url().expect("a Redis node");
    let mut raw = ::redis::Client::open(url.as_str())
        .and_then(|client| client.get_connection())
        .expect("a raw connection");
    let _: () = ::redis::cmd("DEL")
        .arg(tabula::store::redis::keys::TENANT_INDEX_COMPLETE)
        .query(&mut raw)
        .expect("DEL");
    let shared = redis.store().await;
    measure("shared index", &*shared, &args).await;
}
