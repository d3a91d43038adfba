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
//! bot (forced moves, decided without a search, included), measured on the calling thread.

use std::time::{Duration, Instant};

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
        "{:<24} {:>22} {:>9} {:>17} {:>10} {:>10} {:>8}",
        "line", "search win share [95%]", "random", "ratio [95%]", "median ms", "p90 ms", "wall s"
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
    decisions: Vec<Duration>,
    state: E,
}

/// Plays game `index` with `bots[seat]` deciding for each seat.
fn play<E: Engine>(config: &E::Config, index: u64, bots: &[Bot]) -> Played<E> {
    let mut state = E::setup(config, &Seed::from_u64(index)).expect("setup");
    let mut decisions = Vec::new();
    let mut step = 0u64;
    while let Some(seat) = state.to_act() {
        let bot = &bots[seat as usize];
        let seed = Seed::from_u64(index << 24 ^ step << 4 ^ u64::from(seat));
        let began = Instant::now();
        let action = decide(&state, seat, bot, &seed).expect("the bot decides");
        if matches!(bot, Bot::Search(_)) {
            decisions.push(began.elapsed());
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
    let mut decisions = Vec::new();
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
    // rises with the share, so the share's interval maps onto the ratio's).
    let random = (1.0 - share) / others;
    let ratio = |share: f64| share * others / (1.0 - share).max(1e-9);
    println!(
        "{name:<24} {:>6.1} % [{:>4.1}, {:>4.1}] {:>7.1} % {:>6.2}× [{:.2}, {:.2}] {:>10.1} {:>10.1} {:>8.0}",
        share * 100.0,
        low * 100.0,
        high * 100.0,
        random * 100.0,
        ratio(share),
        ratio(low),
        ratio(high),
        percentile(&mut decisions, 0.5),
        percentile(&mut decisions, 0.9),
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
    let mut decisions = Vec::new();
    for index in 0..options.games {
        let played = play::<LaStrada>(&la_strada_config(2), index, &bots);
        if played.state.view(Viewer::Spectator).end_reason() == la_strada::EndReason::Stall {
            stalls += 1.0;
        }
        decisions.extend(played.decisions);
    }
    let games = options.games as f64;
    let (low, high) = wilson(stalls, games);
    println!(
        "{name:<24} ended by the stall guard: {:.1} % [{:.1}, {:.1}] of {} games; decision median {:.1} ms, p90 {:.1} ms; {:.0} s",
        stalls / games * 100.0,
        low * 100.0,
        high * 100.0,
        options.games,
        percentile(&mut decisions, 0.5),
        percentile(&mut decisions, 0.9),
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
