//! `tabula load`: a load generator for any running deployment, shaped like real clients.
//!
//! A benchmark figure means little unless the load looks like the clients a deployment will have,
//! so every game here is played the way a third-party backend plays it: it creates the game,
//! learns whose turn it is from the Act answers and, when the turn passes to another seat, from that
//! seat's own `GetView` or, with `--turns observe`, from the Observe stream every seat holds (see
//! [`Turns`]); it sends every `Act` with the version it expects (`expected_version`) and a
//! fresh request id, and retries a call that failed in transit with the *same* request id (the
//! service answers a retry of an applied move with the original result). Calls go to the replicas
//! round-robin or at random, per call, so consecutive moves of one game land on different replicas
//! the way they do behind a load balancer, or by game ([`Pick::ByGame`]), the way they do behind
//! one that routes on the game id. Optional spectators follow each game with `Observe`,
//! and the time from a move's acknowledgement to its arrival on their streams is the delivery
//! latency.
//!
//! Nothing here knows a game's rules: moves are drawn from the server's legal-action listing, with
//! amounts drawn from the listed range, so the same code drives every game.
//!
//! Beside the load, two probes sample the floor under an Act's latency in the same run: a gRPC
//! echo (a health check: one round trip through the same network path and HTTP/2 stack, no game
//! work) and, when given the store's URL, the raw append script round trip against Redis. The CPU
//! time the replicas spent per Act comes from the kernel's accounting of each replica process
//! (`--replica-pid`, Linux `/proc`).

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use futures::StreamExt;
use hdrhistogram::Histogram;
use serde::Serialize;
use tonic::transport::Channel;

use crate::games::Seed;
use crate::games::common::GameRng;
use crate::hosting;
use crate::proto::v1 as pb;

use super::{code_name, connect};

mod player;
mod probes;
mod replicas;
mod report;

use crate::durations::{DAY, DurationRange, HOUR, SECOND, bounded, ms, range};
use player::{LaneArgs, play_lane};
use probes::{
    command_cost, probe_append, probe_echo, progress_bar, redis_commandstats, redis_cpu,
    replica_cpu,
};
use replicas::Replicas;
use report::{measure_from, new_histogram, record};

/// `tabula load --duration`.
const LOAD_DURATION: DurationRange = range(ms(SECOND), ms(7 * DAY));
/// `tabula load --think` and `--warm-up`: 0 plays flat out, records from the start.
const LOAD_PAUSE: DurationRange = range(ms(0), ms(HOUR));

pub use player::choose;
pub use report::{CommandCost, LoadReport, Percentiles, RedisCommandCost, render};

/// How the load generator picks the replica for each call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Pick {
    /// Each call goes to the next replica in turn.
    RoundRobin,
    /// Each call goes to a replica drawn at random.
    Random,
    /// Every call of a game's seats goes to one replica, the one that created it (a retry after a
    /// failure in transit goes to the next): what a balancer that routes on the game id does
    /// (e.g. consistent hashing on a request header), so the replica's cached state is current and
    /// an Act needs no catch-up read. Spectators are still spread round-robin, so that delivery
    /// is measured across replicas.
    ByGame,
}

/// How a seat learns that its turn has come when the previous Act's answer does not say so (the
/// answer lists the mover's next legal actions only when the mover acts again).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Turns {
    /// The seat whose turn came asks for its view (`GetView`): a backend that polls, or one told
    /// of its turn by other means. A GetView costs a replica a store read (is the log still at
    /// the cached version?).
    #[default]
    View,
    /// Every seat holds an Observe stream from the start and acts when a message on it says its
    /// turn has come, with the legal actions the message carries: a web client or chat bot that
    /// keeps a stream open. No GetView; a replica pushes the message from the state its commit
    /// left (or, on another replica, from the entry it was told about).
    Observe,
    /// Every seat holds a `Play` stream from the start: it sends its moves on it and is told on
    /// it when its turn has come (with its legal actions). A bot or a backend playing a seat move
    /// after move. No GetView and no call per move. A stream that fails ends the game for the
    /// load (counted by its code); it is not reopened.
    Play,
}

/// Which games the load plays: one of the hosted games ([`hosting::registry`]), or `mix`.
#[derive(Clone, Copy, Debug)]
pub enum GameChoice {
    /// This game, at the player count `--players` gives (default: the fewest it allows).
    Game(&'static hosting::RegisteredGame),
    /// Every game in turn, each at a player count drawn from its range.
    Mix,
}

impl GameChoice {
    /// The game chosen, unless every game is.
    fn game(self) -> Option<&'static hosting::RegisteredGame> {
        match self {
            GameChoice::Game(game) => Some(game),
            GameChoice::Mix => None,
        }
    }
}

impl PartialEq for GameChoice {
    fn eq(&self, other: &Self) -> bool {
        self.game().map(|game| game.kind) == other.game().map(|game| game.kind)
    }
}

impl Eq for GameChoice {}

impl Default for GameChoice {
    /// The first hosted game.
    fn default() -> Self {
        hosting::registry()
            .first()
            .map_or(GameChoice::Mix, GameChoice::Game)
    }
}

/// The command-line values: every hosted game's name, then `mix`, each with its help.
static CHOICES: std::sync::LazyLock<Vec<(GameChoice, String, String)>> =
    std::sync::LazyLock::new(|| {
        hosting::registry()
            .iter()
            .map(|game| {
                let facts = game.game_type;
                let players = if facts.min_seats == facts.max_seats {
                    format!("{} players", facts.min_seats)
                } else {
                    format!("{}–{} players", facts.min_seats, facts.max_seats)
                };
                (
                    GameChoice::Game(game),
                    facts.cli_name(),
                    format!("{} ({players})", facts.display_name),
                )
            })
            .chain([(
                GameChoice::Mix,
                "mix".to_owned(),
                "Every game in turn, each at a player count drawn from its range".to_owned(),
            )])
            .collect()
    });

impl clap::ValueEnum for GameChoice {
    fn value_variants<'a>() -> &'a [Self] {
        static VARIANTS: std::sync::LazyLock<Vec<GameChoice>> =
            std::sync::LazyLock::new(|| CHOICES.iter().map(|(choice, _, _)| *choice).collect());
        &VARIANTS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let choices: &'static [(GameChoice, String, String)] = &CHOICES;
        let (_, name, help) = choices.iter().find(|(choice, _, _)| choice == self)?;
        Some(clap::builder::PossibleValue::new(name.as_str()).help(help.as_str()))
    }
}

/// What `tabula load` is asked to do.
#[derive(Clone, Debug, clap::Args)]
pub struct LoadArgs {
    /// A replica's address (`host:port` or a URI); repeat for several replicas.
    #[arg(
        long = "server",
        env = "TABULA_SERVER",
        value_delimiter = ',',
        default_value = "127.0.0.1:50051"
    )]
    pub servers: Vec<String>,
    /// How each call picks its replica.
    #[arg(long, value_enum, default_value_t = Pick::RoundRobin)]
    pub pick: Pick,
    /// Games played at once; each finished game is replaced by a new one.
    #[arg(long, default_value_t = 16)]
    pub games: usize,
    /// Which game to play (default: the first).
    #[arg(long, value_enum, default_value_t)]
    pub game: GameChoice,
    /// Players per game (default: each game's smallest count; ignored with `--game mix`).
    #[arg(long)]
    pub players: Option<u32>,
    /// Spectator Observe streams per game.
    #[arg(long, default_value_t = 0)]
    pub observers: usize,
    /// How a seat learns its turn has come: its own GetView, or its own Observe stream.
    #[arg(long, value_enum, default_value_t)]
    pub turns: Turns,
    /// Ask for answers without the view (`omit_view` on every Act and GetView): clients that
    /// need only the status and their legal actions, such as bots or a backend that keeps its own
    /// picture of the game from the events. Off by default: every answer then carries the view,
    /// as for a client that draws the table.
    #[arg(long)]
    pub omit_views: bool,
    /// How long to run (e.g. `30s`, `2m`): 1s to 7d.
    #[arg(long, default_value = "10s", value_parser = bounded(LOAD_DURATION))]
    pub duration: Duration,
    /// Stop earlier, once this many games have been played to the end.
    #[arg(long)]
    pub total_games: Option<u64>,
    /// Each seat's thinking time before a move, drawn uniformly from 0 to twice this (mean this),
    /// like people at a table (e.g. `500ms`). Zero, the default, plays flat out: every lane sends
    /// its next call as soon as the previous one is answered, which measures the most a deployment
    /// sustains; with thinking time the offered rate is fixed (about games ÷ think Acts/s) and the
    /// latencies are those of a deployment that is not saturated. At most 1h.
    #[arg(long, default_value = "0s", value_parser = bounded(LOAD_PAUSE))]
    pub think: Duration,
    /// Latencies are recorded only after this long (part of `--duration`): opening thousands of
    /// games and spectator streams at once is a burst no steady state has, and with thinking time
    /// its few seconds would otherwise be the p99. Counts and rates cover the whole run. At most
    /// 1h.
    #[arg(long, default_value = "0s", value_parser = bounded(LOAD_PAUSE))]
    pub warm_up: Duration,
    /// Seed of the load's own choices (moves, amounts, replicas), for repeatable runs.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Also measure the raw append script round trip against this Redis (a URL), in the same run.
    /// It appends to a scratch game of its own.
    #[arg(long)]
    pub probe_redis: Option<String>,
    /// A replica's process id, to report the CPU time it spent per Act (Linux); repeatable.
    #[arg(long = "replica-pid")]
    pub replica_pids: Vec<u32>,
    /// PEM CA certificate(s) to verify https:// servers with.
    #[arg(long, env = "TABULA_CA_CERT")]
    pub ca_cert: Option<PathBuf>,
    /// Print the summary as JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Create the games with this tenant API key (README, *Tenants*): they are then the tenant's
    /// and count against its quotas.
    #[arg(long, env = "TABULA_KEY", hide_env_values = true)]
    pub key: Option<String>,
    /// Send an Act refused with RESOURCE_EXHAUSTED (a quota, a rate limit) again after this
    /// pause instead of giving up the game: a client that floods (e.g. `5ms`). At most 1h.
    #[arg(long, value_parser = bounded(LOAD_PAUSE))]
    pub retry_exhausted: Option<Duration>,
    /// Register this URL as a webhook of the `--key` tenant (every event kind) before the load
    /// starts, and remove it after: the notifications then cost what they cost
    /// (scripts/bench-webhooks.sh). The servers must allow the address (`--webhook-allow-private`
    /// for loopback).
    #[arg(long, requires = "key")]
    pub webhook: Option<String>,
}

/// How often a call failed in transit may be retried with its request id before the game is given up.
const RETRIES: u32 = 5;
/// Every call's deadline: a load generator that hangs measures nothing.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// Streams and calls share HTTP/2 connections; the server admits 64 Observe streams per connection.
const CALLS_PER_CONNECTION: usize = 48;

/// What every task adds to, read by the progress line and the final report.
#[derive(Default)]
struct Tally {
    acts: AtomicU64,
    views: AtomicU64,
    finished: AtomicU64,
    abandoned: AtomicU64,
    observe_messages: AtomicU64,
    seat_messages: AtomicU64,
    errors: Mutex<BTreeMap<String, u64>>,
}

impl Tally {
    fn error(&self, code: tonic::Code) {
        let mut errors = self.errors.lock();
        *errors.entry(code_name(code).to_owned()).or_default() += 1;
    }
}

/// When each version of one game was acknowledged, for the spectators' delivery latency.
#[derive(Default)]
struct Acknowledged(Mutex<Vec<Option<Instant>>>);

impl Acknowledged {
    fn record(&self, version: u64, at: Instant) {
        let mut times = self.0.lock();
        let index = version as usize;
        if times.len() <= index {
            times.resize(index + 1, None);
        }
        times[index] = Some(at);
    }

    /// How long after its acknowledgement `version` arrived (zero when it arrived first: a stream
    /// may deliver a move before the Act's answer reaches its caller).
    fn delay(&self, version: u64, arrived: Instant) -> Duration {
        let times = self.0.lock();
        match times.get(version as usize).copied().flatten() {
            Some(acknowledged) => arrived.saturating_duration_since(acknowledged),
            None => Duration::ZERO,
        }
    }
}

/// Registers `url` as a webhook of the tenant `key` is (every kind); its id.
async fn add_webhook(replicas: &Replicas, key: &str, url: &str) -> anyhow::Result<String> {
    let mut admin =
        pb::admin_service_client::AdminServiceClient::new(replicas.channels[0][0].clone());
    let added = admin
        .add_webhook(player::authorized(
            pb::AddWebhookRequest {
                tenant_id: String::new(),
                url: url.to_owned(),
                kinds: (1..=5).collect(),
            },
            key,
        ))
        .await
        .context("AddWebhook")?
        .into_inner();
    // Every replica reads the tenant's webhooks within 2 seconds.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    Ok(added
        .webhook
        .map(|webhook| webhook.webhook_id)
        .unwrap_or_default())
}

/// Removes the webhook `add_webhook` registered.
async fn remove_webhook(replicas: &Replicas, key: &str, webhook_id: String) -> anyhow::Result<()> {
    let mut admin =
        pb::admin_service_client::AdminServiceClient::new(replicas.channels[0][0].clone());
    admin
        .remove_webhook(player::authorized(
            pb::RemoveWebhookRequest {
                tenant_id: String::new(),
                webhook_id,
            },
            key,
        ))
        .await
        .context("RemoveWebhook")?;
    Ok(())
}

/// Runs the load described by `args` and returns what it measured. A progress line is drawn on
/// standard error while it runs (when that is a terminal).
pub async fn run(args: &LoadArgs) -> anyhow::Result<LoadReport> {
    if let (GameChoice::Mix, Some(_)) = (args.game, args.players) {
        anyhow::bail!("--players does not apply to --game mix (each game draws its own count)");
    }
    if let (Some(players), Some(game)) = (args.players, args.game.game()) {
        let facts = game.game_type;
        anyhow::ensure!(
            facts.seats().contains(&players),
            "{} is played by {} to {} players, not {players}",
            facts.display_name,
            facts.min_seats,
            facts.max_seats
        );
    }
    let replicas = Arc::new(Replicas::connect(args).await?);
    let webhook = match (&args.webhook, &args.key) {
        (Some(url), Some(key)) => Some(add_webhook(&replicas, key, url).await?),
        _ => None,
    };
    let tally = Arc::new(Tally::default());
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let deadline = started + args.duration;
    measure_from(started + args.warm_up.min(args.duration));

    let cpu_before = replica_cpu(&args.replica_pids)?;
    let own_cpu_before = replica_cpu(&[std::process::id()])?;
    let redis_cpu_before = match &args.probe_redis {
        Some(url) => Some(redis_cpu(url).await?),
        None => None,
    };
    let commandstats_before = match &args.probe_redis {
        Some(url) => Some(redis_commandstats(url).await?),
        None => None,
    };
    let echo = tokio::spawn(probe_echo(replicas.clone(), stop.clone()));
    let append = args
        .probe_redis
        .as_ref()
        .map(|url| tokio::spawn(probe_append(url.clone(), stop.clone())));
    let progress = progress_bar(args, tally.clone(), stop.clone(), started);

    let mut lanes = Vec::with_capacity(args.games);
    for lane in 0..args.games {
        let lane_args = LaneArgs {
            lane,
            seed: args.seed,
            game: args.game,
            players: args.players,
            observers: args.observers,
            turns: args.turns,
            omit_views: args.omit_views,
            total_games: args.total_games,
            think: args.think,
            deadline,
            key: args.key.clone(),
            retry_exhausted: args.retry_exhausted,
        };
        lanes.push(tokio::spawn(play_lane(
            lane_args,
            replicas.clone(),
            tally.clone(),
            stop.clone(),
        )));
    }
    let mut act_latency = new_histogram();
    let mut delivery = new_histogram();
    for lane in lanes {
        let (acts, delivered) = lane.await.context("a load task failed")?;
        act_latency.add(acts).context("histogram")?;
        delivery.add(delivered).context("histogram")?;
    }
    let seconds = started.elapsed().as_secs_f64();
    let cpu_after = replica_cpu(&args.replica_pids)?;
    let own_cpu_after = replica_cpu(&[std::process::id()])?;
    let redis_cpu_after = match &args.probe_redis {
        Some(url) => Some(redis_cpu(url).await?),
        None => None,
    };
    let commandstats_after = match &args.probe_redis {
        Some(url) => Some(redis_commandstats(url).await?),
        None => None,
    };
    stop.store(true, Ordering::Relaxed);
    let grpc_echo = echo.await.context("the echo probe failed")?;
    let append_round_trip = match append {
        Some(probe) => Some(Percentiles::of(
            &probe.await.context("the append probe failed")??,
        )),
        None => None,
    };
    if let Some(progress) = progress {
        let _ = progress.await;
    }
    // Every Act of the run, warm-up included: the counts, the rate and the CPU time per Act all
    // cover the whole run (the latency histogram only what came after the warm-up).
    let acts = tally.acts.load(Ordering::Relaxed);
    let per_act = |before: Option<Duration>, after: Option<Duration>| match (before, after) {
        (Some(before), Some(after)) if acts > 0 => {
            Some(after.saturating_sub(before).as_micros() as f64 / acts as f64)
        }
        _ => None,
    };
    let replica_cpu_us_per_act = per_act(cpu_before, cpu_after);
    let load_cpu_us_per_act = per_act(own_cpu_before, own_cpu_after);
    let redis_cpu_us_per_act = per_act(redis_cpu_before, redis_cpu_after);
    let errors = tally.errors.lock().clone();
    if let (Some(webhook_id), Some(key)) = (webhook, &args.key) {
        remove_webhook(&replicas, key, webhook_id).await?;
    }
    Ok(LoadReport {
        servers: args.servers.clone(),
        games: args.games,
        observers_per_game: args.observers,
        turns: args.turns,
        omit_views: args.omit_views,
        think_ms: u64::try_from(args.think.as_millis()).unwrap_or(u64::MAX),
        warm_up_ms: u64::try_from(args.warm_up.as_millis()).unwrap_or(u64::MAX),
        seconds,
        acts,
        acts_per_second: acts as f64 / seconds,
        act_latency: Percentiles::of(&act_latency),
        views: tally.views.load(Ordering::Relaxed),
        games_finished: tally.finished.load(Ordering::Relaxed),
        games_abandoned: tally.abandoned.load(Ordering::Relaxed),
        observe_delivery: Percentiles::of(&delivery),
        observe_messages: tally.observe_messages.load(Ordering::Relaxed),
        seat_messages: tally.seat_messages.load(Ordering::Relaxed),
        errors,
        grpc_echo: Percentiles::of(&grpc_echo),
        append_round_trip,
        replica_cpu_us_per_act,
        load_cpu_us_per_act,
        redis_cpu_us_per_act,
        redis_commands: match (&commandstats_before, &commandstats_after) {
            (Some(before), Some(after)) => command_cost(before, after, acts),
            _ => None,
        },
    })
}
