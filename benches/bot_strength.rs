//! Bot strength: the search bot against random bots in every game, on one core.
//!
//! `cargo bench --bench bot_strength -- [--games N] [--iterations N] [--millis MS] [--only PREFIX]`
//!
//! - Two-player games (Medici vs Strozzi, La Strada 2p): the search bot's win rate against the
//!   random bot (a shared win counts as half). Target: ≥ 90 %.
//! - Multi-player games (Strozzi 3–6, Manila 3–5, La Strada 3–4): one search bot and random bots;
//!   the search bot's win share (a win shared by k counts 1/k) against one random bot's average
//!   share. Target: ≥ 2×.
//! - La Strada 2p with a search bot in both seats: the share of games ended by the stall guard
//!   (two silent rounds, spec §7 ruling A13; the spec expects ~5 % for sensible players).
//!
//! The search bot sits in each seat in turn (game i: seat i mod players), so seat advantages
//! cancel out. Every game and every bot decision is seeded: a run with the default iteration
//! budget replays exactly. Intervals are Wilson score intervals at 95 % on the win share (with
//! shared wins counted fractionally, an approximation). Decision times are those of the search
//! bot (forced moves, decided without a search, included): wall time, and the thread's CPU time,
//! which on a shared machine is the better measure of what one decision costs one core. The
//! allocator is the service binary's (mimalloc), so the figures are those a replica would see.

use std::time::{Duration, Instant};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use tabula::bots::{Bot, DEFAULT_ITERATIONS, SearchSettings, decide, rewards};
use tabula::games::la_strada::LaStrada;
use tabula::games::manila::Manila;
use tabula::games::medici_vs_strozzi::MediciVsStrozzi;
use tabula::games::strozzi::Strozzi;
use tabula::games::{Engine, Seed, Viewer};
use tabula::proto::{
    la_strada::v1 as la_strada, manila::v1 as manila, medici_vs_strozzi::v1 as medici_vs_strozzi,
    strozzi::v1 as strozzi,
};

/// The command line.
struct Options {
    games: u64,
    settings: SearchSettings,
    only: String,
}

fn main() {
    let mut options = Options {
        games: 200,
        settings: SearchSettings::default(),
        only: String::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = |args: &mut dyn Iterator<Item = String>| args.next().unwrap_or_default();
        match arg.as_str() {
            "--games" => options.games = value(&mut args).parse().unwrap_or(options.games),
            "--iterations" => {
                options.settings.iterations =
                    value(&mut args).parse().unwrap_or(DEFAULT_ITERATIONS);
            }
            "--millis" => {
                options.settings.time_limit =
                    value(&mut args).parse().ok().map(Duration::from_millis);
            }
            "--only" => options.only = value(&mut args),
            _ => {} // `cargo bench` passes `--bench`.
        }
    }
    println!(
        "tabula bot_strength: {} games per line, search bot at {} iterations{}, one core",
        options.games,
        options.settings.iterations,
        options
            .settings
            .time_limit
            .map(|limit| format!(" or {} ms", limit.as_millis()))
            .unwrap_or_default()
    );
    println!(
        "{:<22} {:>22} {:>8} {:>19} {:>21} {:>21} {:>7}",
        "line",
        "search win share [95%]",
        "random",
        "ratio [95%]",
        "decision ms p50/p90",
        "decision CPU ms p50/p90",
        "wall s"
    );
    let started = Instant::now();
    versus_random::<MediciVsStrozzi>(
        &options,
        "medici_vs_strozzi 2p",
        &medici_vs_strozzi::Config::default(),
    );
    versus_random::<LaStrada>(&options, "la_strada 2p", &la_strada_config(2));
    for players in 3..=6 {
        let config = strozzi::Config {
            players,
            ..Default::default()
        };
        versus_random::<Strozzi>(&options, &format!("strozzi {players}p"), &config);
    }
    for players in 3..=5 {
        let config = manila::Config {
            players,
            ..Default::default()
        };
        versus_random::<Manila>(&options, &format!("manila {players}p"), &config);
    }
    for players in 3..=4 {
        versus_random::<LaStrada>(
            &options,
            &format!("la_strada {players}p"),
            &la_strada_config(players),
        );
    }
    stall_share(&options);
    println!("total wall time {:.0} s", started.elapsed().as_secs_f64());
}

fn la_strada_config(players: u32) -> la_strada::Config {
    la_strada::Config {
        players,
        ..Default::default()
    }
}

/// One finished game: every seat's win share, the search bots' decision times, the final state.
struct Played<E> {
    shares: Vec<f64>,
    decisions: Times,
    state: E,
}

/// Decision times: wall clock and the thread's CPU time.
#[derive(Default)]
struct Times {
    wall: Vec<Duration>,
    cpu: Vec<Duration>,
}

impl Times {
    fn extend(&mut self, other: Times) {
        self.wall.extend(other.wall);
        self.cpu.extend(other.cpu);
    }

    /// "p50/p90" of the wall times and of the CPU times, in milliseconds.
    fn summary(&mut self) -> (String, String) {
        let show = |times: &mut Vec<Duration>| {
            format!(
                "{:.1}/{:.1}",
                percentile(times, 0.5),
                percentile(times, 0.9)
            )
        };
        (show(&mut self.wall), show(&mut self.cpu))
    }
}

/// CPU time this thread has used.
fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec for clock_gettime to write into.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// Plays game `index` with `bots[seat]` deciding for each seat.
fn play<E: Engine>(config: &E::Config, index: u64, bots: &[Bot]) -> Played<E> {
    let mut state = E::setup(config, &Seed::from_u64(index)).expect("setup");
    let mut decisions = Times::default();
    let mut step = 0u64;
    while let Some(seat) = state.to_act() {
        let bot = &bots[seat as usize];
        let seed = Seed::from_u64(index << 24 ^ step << 4 ^ u64::from(seat));
        let (began, began_cpu) = (Instant::now(), thread_cpu_time());
        let action = decide(&state, seat, bot, &seed).expect("the bot decides");
        if matches!(bot, Bot::Search(_)) {
            decisions.wall.push(began.elapsed());
            decisions
                .cpu
                .push(thread_cpu_time().saturating_sub(began_cpu));
        }
        state.apply(seat, &action).expect("the bot's move applies");
        step += 1;
    }
    let outcome = state.outcome().expect("a finished game has an outcome");
    Played {
        shares: rewards(&outcome, state.seat_count()),
        decisions,
        state,
    }
}

/// One search bot against random bots, rotating its seat; prints one line.
fn versus_random<E: Engine>(options: &Options, name: &str, config: &E::Config) {
    if !name.starts_with(&options.only) {
        return;
    }
    let started = Instant::now();
    let mut search_share = 0.0;
    let mut decisions = Times::default();
    let mut players = 0;
    for index in 0..options.games {
        let probe = E::setup(config, &Seed::from_u64(index)).expect("setup");
        players = probe.seat_count() as usize;
        let search_seat = (index % players as u64) as usize;
        let bots: Vec<Bot> = (0..players)
            .map(|seat| {
                if seat == search_seat {
                    Bot::Search(options.settings.clone())
                } else {
                    Bot::Random
                }
            })
            .collect();
        let played = play::<E>(config, index, &bots);
        search_share += played.shares[search_seat];
        decisions.extend(played.decisions);
    }
    let games = options.games as f64;
    let share = search_share / games;
    let (low, high) = wilson(search_share, games);
    let others = (players - 1) as f64;
    // One random bot's average share, and the search bot's share as a multiple of it (the ratio
    // rises with the share, so the share's interval maps onto the ratio's). Two-player lines
    // are read as a win rate.
    let random = (1.0 - share) / others;
    let ratio = |share: f64| {
        if share >= 1.0 {
            "∞".to_string()
        } else {
            format!("{:.1}", share * others / (1.0 - share))
        }
    };
    let ratio = if players > 2 {
        format!("{}× [{}, {}]", ratio(share), ratio(low), ratio(high))
    } else {
        String::new()
    };
    let (wall, cpu) = decisions.summary();
    println!(
        "{name:<22} {:>6.1} % [{:>5.1}, {:>5.1}] {:>6.1} % {ratio:>19} {wall:>21} {cpu:>21} {:>7.0}",
        share * 100.0,
        low * 100.0,
        high * 100.0,
        random * 100.0,
        started.elapsed().as_secs_f64()
    );
}

/// La Strada 2p with a search bot in both seats: how many games the stall guard ends.
fn stall_share(options: &Options) {
    let name = "la_strada 2p search×2";
    if !name.starts_with(&options.only) {
        return;
    }
    let started = Instant::now();
    let bots = vec![Bot::Search(options.settings.clone()); 2];
    let mut stalls = 0.0;
    let mut decisions = Times::default();
    for index in 0..options.games {
        let played = play::<LaStrada>(&la_strada_config(2), index, &bots);
        if played.state.view(Viewer::Spectator).end_reason() == la_strada::EndReason::Stall {
            stalls += 1.0;
        }
        decisions.extend(played.decisions);
    }
    let games = options.games as f64;
    let (low, high) = wilson(stalls, games);
    let (wall, cpu) = decisions.summary();
    println!(
        "{name:<22} ended by the stall guard: {:.1} % [{:.1}, {:.1}] of {} games {wall:>21} {cpu:>21} {:>7.0}",
        stalls / games * 100.0,
        low * 100.0,
        high * 100.0,
        options.games,
        started.elapsed().as_secs_f64()
    );
}

/// The Wilson score interval at 95 % for `successes` out of `trials`.
fn wilson(successes: f64, trials: f64) -> (f64, f64) {
    if trials == 0.0 {
        return (0.0, 1.0);
    }
    let z = 1.96f64;
    let p = successes / trials;
    let denominator = 1.0 + z * z / trials;
    let centre = (p + z * z / (2.0 * trials)) / denominator;
    let half = z * (p * (1.0 - p) / trials + z * z / (4.0 * trials * trials)).sqrt() / denominator;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The `q` quantile of `times`, in milliseconds.
fn percentile(times: &mut [Duration], q: f64) -> f64 {
    if times.is_empty() {
        return 0.0;
    }
    times.sort_unstable();
    let index = ((times.len() - 1) as f64 * q).round() as usize;
    times[index].as_secs_f64() * 1e3
}
