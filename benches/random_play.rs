//! Random-play benchmark for every engine: games/s and applied actions/s on one core, and the
//! time one legal-action listing takes (La Strada's includes enumerating every legal road).
//!
//! `cargo bench --bench random_play -- [--games N] [--min-cpu-ms MS] [--only PREFIX]`
//! (`--only la_strada` runs only the lines whose name starts with the prefix, e.g. to time one
//! engine under `time`).
//!
//! Each line plays its `N` seeds (La Strada a quarter of them), and then as many further seeds
//! again, round after round, until its thread has spent at least `MS` milliseconds of CPU
//! (default 500). One round alone takes 15-45 ms on this machine, a window in which a scheduler
//! hiccup or a cold cache on a shared virtual machine moved a figure by a third between runs
//! seconds apart.
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
    let mut min_cpu = DEFAULT_MIN_CPU;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--games" {
            games = args.next().and_then(|v| v.parse().ok()).unwrap_or(games);
        } else if arg == "--min-cpu-ms" {
            if let Some(ms) = args.next().and_then(|v| v.parse().ok()) {
                min_cpu = Duration::from_millis(ms);
            }
        } else if arg == "--only" {
            let prefix = args.next().unwrap_or_default();
            // The bench functions read the filter once; a process runs one filter.
            ONLY.set(prefix).ok();
        }
    }
    println!(
        "tabula random_play: rounds of {games} seeded games per line (La Strada: a quarter) until \
         the line has used {} ms of CPU; one core, no contract checks; rates per CPU second \
         of the benchmark thread",
        min_cpu.as_millis()
    );
    println!(
        "{:<20} {:>7} {:>9} {:>11} {:>15} {:>13} {:>17} {:>16}",
        "game",
        "games",
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
        min_cpu,
    );
    for players in 3..=6 {
        let config = strozzi::Config {
            players,
            ..Default::default()
        };
        bench::<Strozzi>(&format!("strozzi {players}p"), &config, games, min_cpu);
    }
    for players in 3..=5 {
        let config = manila::Config {
            players,
            ..Default::default()
        };
        bench::<Manila>(&format!("manila {players}p"), &config, games, min_cpu);
    }
    for players in 2..=4 {
        let config = la_strada::Config {
            players,
            ..Default::default()
        };
        bench::<LaStrada>(
            &format!("la_strada {players}p"),
            &config,
            games / 4,
            min_cpu,
        );
    }
}

/// `--only PREFIX`: run only the lines whose name starts with it.
static ONLY: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// The least CPU time a line measures (`--min-cpu-ms`).
const DEFAULT_MIN_CPU: Duration = Duration::from_millis(500);

/// One line: rounds of `games` seeded games from seed 0 until the thread has used `min_cpu`,
/// and the listing cost over a tenth of `games`.
fn bench<E: Engine>(name: &str, config: &E::Config, games: u64, min_cpu: Duration) {
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
    let mut played = 0u64;
    // Rounds of `games` further seeds: the CPU clock (a system call, about a microsecond) is read
    // once a round, not once a game, so that reading it costs the figure nothing.
    loop {
        for seed in played..played + games {
            match play::<E>(config, Seed::from_u64(seed), 100_000, Checks::NONE) {
                Ok(game) => actions += game.actions.len(),
                Err(error) => panic!("{name} seed {seed}: {error}"),
            }
        }
        played += games;
        if games == 0 || thread_cpu_time() - started_cpu >= min_cpu {
            break;
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
        "{name:<20} {played:>7} {:>9.0} {:>11.0} {:>15.0} {:>13.1} {:>17.2} {:>16.1}",
        played as f64 / secs,
        actions as f64 / secs,
        actions as f64 / wall,
        actions as f64 / played as f64,
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
