//! Random-play benchmark for every engine: games/s and applied actions/s on one core, and the
//! time one legal-action listing takes (La Strada's includes enumerating every legal road).
//!
//! `cargo bench --bench random_play -- [--games N] [--only PREFIX]` (`--only la_strada` runs
//! only the lines whose name starts with the prefix, e.g. to time one engine under `time`).
//!
//! Rates are per second of the benchmark thread's own CPU time, so that other work on a shared
//! machine does not count against the engine (wall-clock rates are printed beside them). The
//! allocator is the service binary's (mimalloc), as in `bot_strength`: engines allocate their
//! actions and events, so the figures are those an engine sees inside a replica.

use std::time::{Duration, Instant};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use tabula::games::common::GameRng;
use tabula::games::common::random_play::{Checks, choose_action, play};
use tabula::games::la_strada::LaStrada;
use tabula::games::manila::Manila;
use tabula::games::medici_vs_strozzi::MediciVsStrozzi;
use tabula::games::strozzi::Strozzi;
use tabula::games::{Engine, Seed};
use tabula::proto::{
    la_strada::v1 as la_strada, manila::v1 as manila, medici_vs_strozzi::v1 as medici_vs_strozzi,
    strozzi::v1 as strozzi,
};

fn main() {
    let mut games = 2_000u64;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--games" {
            games = args.next().and_then(|v| v.parse().ok()).unwrap_or(games);
        } else if arg == "--only" {
            let prefix = args.next().unwrap_or_default();
            // The bench functions read the filter once; a process runs one filter.
            ONLY.set(prefix).ok();
        }
    }
    println!(
        "tabula random_play: {games} seeded games per line (La Strada: a quarter), one core, \
         no contract checks; rates per CPU second of the benchmark thread"
    );
    println!(
        "{:<20} {:>9} {:>11} {:>15} {:>13} {:>17} {:>16}",
        "game",
        "games/s",
        "actions/s",
        "actions/s wall",
        "actions/game",
        "listing µs (mean)",
        "listing µs (max)"
    );
    bench::<MediciVsStrozzi>(
        "medici_vs_strozzi",
        &medici_vs_strozzi::Config::default(),
        games,
    );
    for players in 3..=6 {
        let config = strozzi::Config {
            players,
            ..Default::default()
        };
        bench::<Strozzi>(&format!("strozzi {players}p"), &config, games);
    }
    for players in 3..=5 {
        let config = manila::Config {
            players,
            ..Default::default()
        };
        bench::<Manila>(&format!("manila {players}p"), &config, games);
    }
    for players in 2..=4 {
        let config = la_strada::Config {
            players,
            ..Default::default()
        };
        bench::<LaStrada>(&format!("la_strada {players}p"), &config, games / 4);
    }
}

/// `--only PREFIX`: run only the lines whose name starts with it.
static ONLY: std::sync::OnceLock<String> = std::sync::OnceLock::new();

fn bench<E: Engine>(name: &str, config: &E::Config, games: u64) {
    if !name.starts_with(ONLY.get().map(String::as_str).unwrap_or("")) {
        return;
    }
    // One untimed game first, so that one-time set-up (map data and lookup tables built on
    // first use) is not counted against the engine's steady rate.
    play::<E>(config, Seed::from_u64(u64::MAX), 100_000, Checks::NONE)
        .unwrap_or_else(|error| panic!("{name} warm-up game: {error}"));
    let started = Instant::now();
    let started_cpu = thread_cpu_time();
    let mut actions = 0usize;
    for i in 0..games {
        match play::<E>(config, Seed::from_u64(i), 100_000, Checks::NONE) {
            Ok(game) => actions += game.actions.len(),
            Err(error) => panic!("{name} seed {i}: {error}"),
        }
    }
    let wall = started.elapsed().as_secs_f64();
    let secs = (thread_cpu_time() - started_cpu).as_secs_f64();

    // Listing cost alone: time every legal_actions call over a few games.
    let mut listing = Duration::ZERO;
    let mut slowest = Duration::ZERO;
    let mut calls = 0u32;
    for i in 0..(games / 10).max(1) {
        let mut state = E::setup(config, &Seed::from_u64(i)).expect("setup");
        let mut rng = GameRng::from_seed(&Seed::from_u64(!i));
        while let Some(seat) = state.to_act() {
            let begin = thread_cpu_time();
            let legal = state.legal_actions(seat);
            let took = thread_cpu_time() - begin;
            listing += took;
            slowest = slowest.max(took);
            calls += 1;
            let action = choose_action::<E>(&legal, &mut rng);
            state.apply(seat, &action).expect("listed action applies");
        }
    }
    println!(
        "{name:<20} {:>9.0} {:>11.0} {:>15.0} {:>13.1} {:>17.2} {:>16.1}",
        games as f64 / secs,
        actions as f64 / secs,
        actions as f64 / wall,
        actions as f64 / games as f64,
        listing.as_secs_f64() * 1e6 / f64::from(calls.max(1)),
        slowest.as_secs_f64() * 1e6,
    );
}

/// The CPU time this thread has used.
fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec for clock_gettime to write into.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}
