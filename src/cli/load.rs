//! `tabula load`: a load generator for any running deployment, shaped like real clients.
//!
//! A benchmark figure means little unless the load looks like the clients a deployment will have,
//! so every game here is played the way a third-party backend plays it: it creates the game,
//! learns whose turn it is from the Act answers and, when the turn passes to another seat, from that
//! seat's own `GetView`; it sends every `Act` with the version it expects (`expected_version`) and a
//! fresh request id, and retries a call that failed in transit with the *same* request id (the
//! service answers a retry of an applied move with the original result). Calls go to the replicas
//! round-robin or at random, per call, so consecutive moves of one game land on different replicas
//! the way they do behind a load balancer. Optional spectators follow each game with `Observe`,
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

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
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

/// How the load generator picks the replica for each call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Pick {
    /// Each call goes to the next replica in turn.
    RoundRobin,
    /// Each call goes to a replica drawn at random.
    Random,
}

/// Which games the load plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GameChoice {
    /// Medici vs Strozzi (2 players).
    MediciVsStrozzi,
    /// Strozzi (3–6 players).
    Strozzi,
    /// Manila (3–5 players).
    Manila,
    /// La Strada (2–4 players).
    LaStrada,
    /// Every game in turn, each at a player count drawn from its range.
    Mix,
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
    /// Which game to play.
    #[arg(long, value_enum, default_value_t = GameChoice::MediciVsStrozzi)]
    pub game: GameChoice,
    /// Players per game (default: each game's smallest count; ignored with `--game mix`).
    #[arg(long)]
    pub players: Option<u32>,
    /// Spectator Observe streams per game.
    #[arg(long, default_value_t = 0)]
    pub observers: usize,
    /// How long to run (e.g. `30s`, `2m`).
    #[arg(long, default_value = "10s", value_parser = crate::config::parse_duration)]
    pub duration: Duration,
    /// Stop earlier, once this many games have been played to the end.
    #[arg(long)]
    pub total_games: Option<u64>,
    /// Each seat's thinking time before a move, drawn uniformly from 0 to twice this (mean this),
    /// like people at a table (e.g. `500ms`). Zero, the default, plays flat out: every lane sends
    /// its next call as soon as the previous one is answered, which measures the most a deployment
    /// sustains; with thinking time the offered rate is fixed (about games ÷ think Acts/s) and the
    /// latencies are those of a deployment that is not saturated.
    #[arg(long, default_value = "0s", value_parser = crate::config::parse_duration)]
    pub think: Duration,
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
}

/// Latency percentiles in microseconds.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Percentiles {
    /// How many samples.
    pub count: u64,
    /// Median.
    pub p50_us: u64,
    /// 90th percentile.
    pub p90_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// Largest sample.
    pub max_us: u64,
}

impl Percentiles {
    fn of(histogram: &Histogram<u64>) -> Percentiles {
        if histogram.is_empty() {
            return Percentiles::default();
        }
        Percentiles {
            count: histogram.len(),
            p50_us: histogram.value_at_quantile(0.50),
            p90_us: histogram.value_at_quantile(0.90),
            p99_us: histogram.value_at_quantile(0.99),
            max_us: histogram.max(),
        }
    }
}

/// What a load run measured.
#[derive(Clone, Debug, Serialize)]
pub struct LoadReport {
    /// The replicas the load went to.
    pub servers: Vec<String>,
    /// Concurrent games.
    pub games: usize,
    /// Spectator streams per game.
    pub observers_per_game: usize,
    /// Mean thinking time before each move, in milliseconds (0: flat out).
    pub think_ms: u64,
    /// Seconds the load ran.
    pub seconds: f64,
    /// Acts acknowledged.
    pub acts: u64,
    /// Acts acknowledged per second.
    pub acts_per_second: f64,
    /// Act latency, as the client saw it (including retries of one request id).
    pub act_latency: Percentiles,
    /// GetView calls (a seat learning that its turn has come).
    pub views: u64,
    /// Games played to the end.
    pub games_finished: u64,
    /// Games abandoned after an error the load could not recover from.
    pub games_abandoned: u64,
    /// Act acknowledged → the same version on a spectator's stream.
    pub observe_delivery: Percentiles,
    /// Messages the spectators received.
    pub observe_messages: u64,
    /// Failed calls by gRPC status code (retries included).
    pub errors: BTreeMap<String, u64>,
    /// A health check round trip to a replica, sampled during the run.
    pub grpc_echo: Percentiles,
    /// The append script round trip against Redis, sampled during the run (with `--probe-redis`).
    pub append_round_trip: Option<Percentiles>,
    /// CPU time the replicas (`--replica-pid`) spent per acknowledged Act, in microseconds.
    pub replica_cpu_us_per_act: Option<f64>,
    /// The load generator's own CPU time per Act acknowledged, in microseconds (Linux): on a
    /// machine it shares with the replicas, what the clients cost.
    pub load_cpu_us_per_act: Option<f64>,
    /// Redis's CPU time per Act acknowledged, in microseconds (`INFO cpu` of `--probe-redis`; it
    /// includes the probe's own appends, about a hundred per second).
    pub redis_cpu_us_per_act: Option<f64>,
}

/// How often a call failed in transit may be retried with its request id before the game is given up.
const RETRIES: u32 = 5;
/// Every call's deadline: a load generator that hangs measures nothing.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// Streams and calls share HTTP/2 connections; the server admits 64 Observe streams per connection.
const CALLS_PER_CONNECTION: usize = 48;

/// The connections to the replicas, and the per-call choice between them.
struct Replicas {
    /// Per replica, a few connections; a caller keeps to one connection index (`lane`).
    channels: Vec<Vec<Channel>>,
    pick: Pick,
    next: AtomicU64,
}

impl Replicas {
    async fn connect(args: &LoadArgs) -> anyhow::Result<Replicas> {
        anyhow::ensure!(!args.servers.is_empty(), "give at least one --server");
        let callers = args.games * (1 + args.observers);
        let per_replica = callers.div_ceil(CALLS_PER_CONNECTION).max(1);
        let mut channels = Vec::new();
        for server in &args.servers {
            let mut connections = Vec::with_capacity(per_replica);
            for _ in 0..per_replica {
                connections.push(connect(server, args.ca_cert.as_deref(), CALL_TIMEOUT).await?);
            }
            channels.push(connections);
        }
        Ok(Replicas {
            channels,
            pick: args.pick,
            next: AtomicU64::new(0),
        })
    }

    /// The replica for the next call.
    fn replica(&self, rng: &mut GameRng) -> usize {
        match self.pick {
            Pick::RoundRobin => {
                (self.next.fetch_add(1, Ordering::Relaxed) % self.channels.len() as u64) as usize
            }
            Pick::Random => rng.index(self.channels.len()),
        }
    }

    /// A client of `replica` on the connection of `lane`.
    fn client(
        &self,
        replica: usize,
        lane: usize,
    ) -> pb::game_service_client::GameServiceClient<Channel> {
        let connections = &self.channels[replica];
        pb::game_service_client::GameServiceClient::new(
            connections[lane % connections.len()].clone(),
        )
        .max_decoding_message_size(16 << 20)
    }
}

/// What every task adds to, read by the progress line and the final report.
#[derive(Default)]
struct Tally {
    acts: AtomicU64,
    views: AtomicU64,
    finished: AtomicU64,
    abandoned: AtomicU64,
    observe_messages: AtomicU64,
    errors: Mutex<BTreeMap<String, u64>>,
}

impl Tally {
    fn error(&self, code: tonic::Code) {
        let mut errors = self.errors.lock().unwrap_or_else(|p| p.into_inner());
        *errors.entry(code_name(code).to_owned()).or_default() += 1;
    }
}

/// When each version of one game was acknowledged, for the spectators' delivery latency.
#[derive(Default)]
struct Acknowledged(Mutex<Vec<Option<Instant>>>);

impl Acknowledged {
    fn record(&self, version: u64, at: Instant) {
        let mut times = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let index = version as usize;
        if times.len() <= index {
            times.resize(index + 1, None);
        }
        times[index] = Some(at);
    }

    /// How long after its acknowledgement `version` arrived (zero when it arrived first: a stream
    /// may deliver a move before the Act's answer reaches its caller).
    fn delay(&self, version: u64, arrived: Instant) -> Duration {
        let times = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match times.get(version as usize).copied().flatten() {
            Some(acknowledged) => arrived.saturating_duration_since(acknowledged),
            None => Duration::ZERO,
        }
    }
}

/// Runs the load described by `args` and returns what it measured. A progress line is drawn on
/// standard error while it runs (when that is a terminal).
pub async fn run(args: &LoadArgs) -> anyhow::Result<LoadReport> {
    if let (GameChoice::Mix, Some(_)) = (args.game, args.players) {
        anyhow::bail!("--players does not apply to --game mix (each game draws its own count)");
    }
    if let Some(players) = args.players {
        let (low, high) = player_range(args.game);
        anyhow::ensure!(
            (low..=high).contains(&players),
            "{:?} is played by {low} to {high} players, not {players}",
            args.game
        );
    }
    let replicas = Arc::new(Replicas::connect(args).await?);
    let tally = Arc::new(Tally::default());
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let deadline = started + args.duration;

    let cpu_before = replica_cpu(&args.replica_pids)?;
    let own_cpu_before = replica_cpu(&[std::process::id()])?;
    let redis_cpu_before = match &args.probe_redis {
        Some(url) => Some(redis_cpu(url).await?),
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
            total_games: args.total_games,
            think: args.think,
            deadline,
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
    let acts = act_latency.len();
    let per_act = |before: Option<Duration>, after: Option<Duration>| match (before, after) {
        (Some(before), Some(after)) if acts > 0 => {
            Some(after.saturating_sub(before).as_micros() as f64 / acts as f64)
        }
        _ => None,
    };
    let replica_cpu_us_per_act = per_act(cpu_before, cpu_after);
    let load_cpu_us_per_act = per_act(own_cpu_before, own_cpu_after);
    let redis_cpu_us_per_act = per_act(redis_cpu_before, redis_cpu_after);
    let errors = tally
        .errors
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    Ok(LoadReport {
        servers: args.servers.clone(),
        games: args.games,
        observers_per_game: args.observers,
        think_ms: u64::try_from(args.think.as_millis()).unwrap_or(u64::MAX),
        seconds,
        acts,
        acts_per_second: acts as f64 / seconds,
        act_latency: Percentiles::of(&act_latency),
        views: tally.views.load(Ordering::Relaxed),
        games_finished: tally.finished.load(Ordering::Relaxed),
        games_abandoned: tally.abandoned.load(Ordering::Relaxed),
        observe_delivery: Percentiles::of(&delivery),
        observe_messages: tally.observe_messages.load(Ordering::Relaxed),
        errors,
        grpc_echo: Percentiles::of(&grpc_echo),
        append_round_trip,
        replica_cpu_us_per_act,
        load_cpu_us_per_act,
        redis_cpu_us_per_act,
    })
}

/// The report as a few readable lines.
pub fn render(report: &LoadReport) -> String {
    let p = |label: &str, p: &Percentiles| {
        format!(
            "{label}: p50 {} µs, p90 {} µs, p99 {} µs, max {} µs ({} samples)\n",
            p.p50_us, p.p90_us, p.p99_us, p.max_us, p.count
        )
    };
    let mut text = format!(
        "tabula load: {} games at once, {} spectators per game, {} replica(s), {:.1} s, {}\n",
        report.games,
        report.observers_per_game,
        report.servers.len(),
        report.seconds,
        if report.think_ms == 0 {
            "flat out".to_owned()
        } else {
            format!("thinking {} ms per move on average", report.think_ms)
        }
    );
    text += &format!(
        "Acts: {} acknowledged = {:.0} Acts/s; {} views; {} games finished, {} abandoned\n",
        report.acts,
        report.acts_per_second,
        report.views,
        report.games_finished,
        report.games_abandoned
    );
    text += &p("Act latency", &report.act_latency);
    if report.observers_per_game > 0 {
        text += &p(
            "Observe delivery (ack → spectator)",
            &report.observe_delivery,
        );
    }
    text += &p("gRPC echo (health check)", &report.grpc_echo);
    if let Some(append) = &report.append_round_trip {
        text += &p("Append script round trip", append);
    }
    if let Some(cpu) = report.replica_cpu_us_per_act {
        text += &format!("Replica CPU per Act: {cpu:.1} µs (all replicas given)\n");
    }
    if let Some(cpu) = report.redis_cpu_us_per_act {
        text += &format!("Redis CPU per Act: {cpu:.1} µs\n");
    }
    if let Some(cpu) = report.load_cpu_us_per_act {
        text += &format!("Load generator CPU per Act: {cpu:.1} µs (the clients)\n");
    }
    if report.errors.is_empty() {
        text += "Errors: none\n";
    } else {
        let errors: Vec<String> = report
            .errors
            .iter()
            .map(|(code, count)| format!("{code} {count}"))
            .collect();
        text += &format!("Errors: {}\n", errors.join(", "));
    }
    text
}

fn new_histogram() -> Histogram<u64> {
    // Three significant figures from 1 µs up to an hour: every latency this can see.
    Histogram::new_with_bounds(1, 3_600_000_000, 3)
        .unwrap_or_else(|_| unreachable!("1 µs to an hour at 3 significant figures is valid"))
}

fn record(histogram: &mut Histogram<u64>, elapsed: Duration) {
    let micros = (elapsed.as_micros() as u64).max(1);
    // A sample beyond the histogram's range is saturated rather than lost.
    histogram.saturating_record(micros);
}

/// The player counts each game allows (rules specs: MvS 2, Strozzi 3–6, Manila 3–5, La Strada 2–4).
fn player_range(game: GameChoice) -> (u32, u32) {
    match game {
        GameChoice::MediciVsStrozzi => (2, 2),
        GameChoice::Strozzi => (3, 6),
        GameChoice::Manila => (3, 5),
        GameChoice::LaStrada => (2, 4),
        GameChoice::Mix => (2, 6),
    }
}

/// A game's configuration with default options.
fn config(game: GameChoice, players: u32) -> pb::GameConfig {
    use pb::game_config::Game;
    let game = match game {
        GameChoice::MediciVsStrozzi | GameChoice::Mix => {
            Game::MediciVsStrozzi(crate::proto::medici_vs_strozzi::v1::Config::default())
        }
        GameChoice::Strozzi => Game::Strozzi(crate::proto::strozzi::v1::Config {
            players,
            ..Default::default()
        }),
        GameChoice::Manila => Game::Manila(crate::proto::manila::v1::Config {
            players,
            ..Default::default()
        }),
        GameChoice::LaStrada => Game::LaStrada(crate::proto::la_strada::v1::Config {
            players,
            ..Default::default()
        }),
    };
    pb::GameConfig {
        table: None,
        game: Some(game),
    }
}

/// The game (and player count) lane `lane` plays as its `round`-th game.
fn game_for(args: &LaneArgs, round: u64, rng: &mut GameRng) -> (GameChoice, u32) {
    let game = match args.game {
        GameChoice::Mix => [
            GameChoice::MediciVsStrozzi,
            GameChoice::Strozzi,
            GameChoice::Manila,
            GameChoice::LaStrada,
        ][((args.lane as u64 + round) % 4) as usize],
        game => game,
    };
    let (low, high) = player_range(game);
    let players = match (args.game, args.players) {
        (GameChoice::Mix, _) => low + rng.below(u64::from(high - low) + 1) as u32,
        (_, Some(players)) => players,
        (_, None) => low,
    };
    (game, players)
}

struct LaneArgs {
    lane: usize,
    seed: u64,
    game: GameChoice,
    players: Option<u32>,
    observers: usize,
    total_games: Option<u64>,
    think: Duration,
    deadline: Instant,
}

/// One lane: plays games back to back until the deadline (or the total is reached). Returns its
/// Act latencies and its spectators' delivery delays.
async fn play_lane(
    args: LaneArgs,
    replicas: Arc<Replicas>,
    tally: Arc<Tally>,
    stop: Arc<AtomicBool>,
) -> (Histogram<u64>, Histogram<u64>) {
    let mut rng = GameRng::from_seed(&Seed::from_u64(
        args.seed
            .wrapping_mul(1_000_003)
            .wrapping_add(args.lane as u64),
    ));
    let mut latencies = new_histogram();
    let mut delivery = new_histogram();
    let mut round = 0;
    while Instant::now() < args.deadline && !stop.load(Ordering::Relaxed) {
        if let Some(total) = args.total_games
            && tally.finished.load(Ordering::Relaxed) >= total
        {
            break;
        }
        let (game, players) = game_for(&args, round, &mut rng);
        round += 1;
        let mut player = Player {
            lane: args.lane,
            replicas: &replicas,
            tally: &tally,
            rng: &mut rng,
            latencies: &mut latencies,
        };
        let outcome = player
            .play(
                config(game, players),
                args.observers,
                args.think,
                args.deadline,
            )
            .await;
        match outcome {
            Ok(Played {
                finished,
                spectators,
            }) => {
                if finished {
                    tally.finished.fetch_add(1, Ordering::Relaxed);
                }
                for spectator in spectators {
                    if let Ok(delays) = spectator.await {
                        let _ = delivery.add(delays);
                    }
                }
            }
            Err(code) => {
                tally.error(code);
                tally.abandoned.fetch_add(1, Ordering::Relaxed);
                // Do not spin on a replica that refuses everything.
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    (latencies, delivery)
}

struct Played {
    finished: bool,
    spectators: Vec<tokio::task::JoinHandle<Histogram<u64>>>,
}

/// One game's clients: every seat of it, played from one task.
struct Player<'a> {
    lane: usize,
    replicas: &'a Replicas,
    tally: &'a Arc<Tally>,
    rng: &'a mut GameRng,
    latencies: &'a mut Histogram<u64>,
}

impl Player<'_> {
    /// Creates a game and plays it until it ends or `deadline` passes.
    async fn play(
        &mut self,
        config: pb::GameConfig,
        observers: usize,
        think: Duration,
        deadline: Instant,
    ) -> Result<Played, tonic::Code> {
        let replica = self.replicas.replica(self.rng);
        let created = self
            .replicas
            .client(replica, self.lane)
            .create_game(pb::CreateGameRequest {
                config: Some(config),
                seed: None,
                ..Default::default()
            })
            .await
            .map_err(|status| status.code())?
            .into_inner();
        let tokens: Vec<String> = {
            let mut seats = created.seats.clone();
            seats.sort_by_key(|seat| seat.seat);
            seats.into_iter().map(|seat| seat.token).collect()
        };
        let acknowledged = Arc::new(Acknowledged::default());
        let mut spectators = Vec::with_capacity(observers);
        for _ in 0..observers {
            let replica = self.replicas.replica(self.rng);
            let client = self.replicas.client(replica, self.lane);
            spectators.push(tokio::spawn(spectate(
                client,
                created.game_id.clone(),
                acknowledged.clone(),
                deadline,
                self.tally.clone(),
            )));
        }
        let mut version = created.version;
        // Whose turn it is and, once known, that seat's legal actions.
        let mut turn: Option<(u32, Vec<pb::LegalAction>)> = None;
        let mut to_act = None;
        let mut finished = false;
        let mut next_request = 0_u64;
        while Instant::now() < deadline {
            let (seat, legal) = match turn.take() {
                Some(turn) => turn,
                None => {
                    // The seat whose turn came learns its legal actions from its own view.
                    let seat = to_act.unwrap_or(0);
                    let view = self.view(&created.game_id, &tokens[seat as usize]).await?;
                    version = view.version;
                    let status = view.status.unwrap_or_default();
                    if status.finished {
                        finished = true;
                        break;
                    }
                    match status.to_act {
                        Some(next) if next == seat => (seat, view.legal_actions),
                        next => {
                            to_act = next;
                            continue;
                        }
                    }
                }
            };
            if legal.is_empty() {
                return Err(tonic::Code::Internal);
            }
            let action = choose(&legal, self.rng);
            if !think.is_zero() {
                let millis = think.as_millis().min(u128::from(u32::MAX)) as u64;
                tokio::time::sleep(Duration::from_millis(self.rng.below(2 * millis + 1))).await;
            }
            next_request += 1;
            let request = pb::ActRequest {
                game_id: created.game_id.clone(),
                action: Some(action),
                expected_version: Some(version),
                request_id: format!("load-{}-{next_request}", self.lane),
            };
            let answer = self.act(request, &tokens[seat as usize]).await?;
            let acknowledged_at = Instant::now();
            acknowledged.record(answer.version, acknowledged_at);
            version = answer.version;
            let status = answer.status.unwrap_or_default();
            if status.finished {
                finished = true;
                break;
            }
            to_act = status.to_act;
            if status.to_act == Some(seat) && !answer.legal_actions.is_empty() {
                turn = Some((seat, answer.legal_actions));
            }
        }
        Ok(Played {
            finished,
            spectators,
        })
    }

    async fn view(
        &mut self,
        game_id: &str,
        token: &str,
    ) -> Result<pb::GetViewResponse, tonic::Code> {
        let view = self
            .with_retries(|mut client| {
                let request = authorized(
                    pb::GetViewRequest {
                        game_id: game_id.to_owned(),
                        version: None,
                    },
                    token,
                );
                async move { client.get_view(request).await }
            })
            .await?;
        self.tally.views.fetch_add(1, Ordering::Relaxed);
        Ok(view)
    }

    /// Sends one Act, retrying a failure in transit with the same request id on the next replica.
    async fn act(
        &mut self,
        request: pb::ActRequest,
        token: &str,
    ) -> Result<pb::ActResponse, tonic::Code> {
        let begin = Instant::now();
        let answer = self
            .with_retries(|mut client| {
                let request = authorized(request.clone(), token);
                async move { client.act(request).await }
            })
            .await?;
        record(self.latencies, begin.elapsed());
        self.tally.acts.fetch_add(1, Ordering::Relaxed);
        Ok(answer)
    }

    /// Makes `call` on a replica picked per attempt, retrying failures in transit (with backoff,
    /// up to [`RETRIES`] times); every failure is counted by its code.
    async fn with_retries<T, Call, Answer>(&mut self, mut call: Call) -> Result<T, tonic::Code>
    where
        Call: FnMut(pb::game_service_client::GameServiceClient<Channel>) -> Answer,
        Answer: std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        let mut attempt = 0;
        loop {
            let replica = self.replicas.replica(self.rng);
            match call(self.replicas.client(replica, self.lane)).await {
                Ok(answer) => return Ok(answer.into_inner()),
                Err(status) => {
                    self.tally.error(status.code());
                    if !retryable(status.code()) || attempt == RETRIES {
                        return Err(status.code());
                    }
                    backoff(attempt).await;
                    attempt += 1;
                }
            }
        }
    }
}

/// Follows `game_id` as a spectator until the game ends or `deadline`; returns each move's delay
/// from its acknowledgement to its arrival here.
async fn spectate(
    mut client: pb::game_service_client::GameServiceClient<Channel>,
    game_id: String,
    acknowledged: Arc<Acknowledged>,
    deadline: Instant,
    tally: Arc<Tally>,
) -> Histogram<u64> {
    let mut delays = new_histogram();
    let request = pb::ObserveRequest {
        game_id,
        from_version: None,
    };
    let Ok(stream) = client.observe(request).await else {
        return delays;
    };
    let mut stream = stream.into_inner();
    let until = tokio::time::Instant::from_std(deadline);
    loop {
        let next = match tokio::time::timeout_at(until, stream.next()).await {
            Ok(Some(Ok(message))) => message,
            _ => break,
        };
        let arrived = Instant::now();
        tally.observe_messages.fetch_add(1, Ordering::Relaxed);
        if next.action.is_some() {
            record(&mut delays, acknowledged.delay(next.version, arrived));
        }
        if next.status.is_some_and(|status| status.finished) {
            break;
        }
    }
    delays
}

fn authorized<T>(message: T, token: &str) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request.set_timeout(CALL_TIMEOUT);
    if let Ok(value) = format!("Bearer {token}").parse() {
        request.metadata_mut().insert("authorization", value);
    }
    request
}

/// Failures in transit or of a replica, after which the same call may be sent again.
fn retryable(code: tonic::Code) -> bool {
    matches!(
        code,
        tonic::Code::Unavailable
            | tonic::Code::DeadlineExceeded
            | tonic::Code::Cancelled
            | tonic::Code::Unknown
            | tonic::Code::ResourceExhausted
    )
}

async fn backoff(attempt: u32) {
    tokio::time::sleep(Duration::from_millis(20 << attempt.min(5))).await;
}

/// A legal action drawn at random, with its amount (if it has one) drawn from its range, smaller
/// amounts more often so games look like play.
pub fn choose(legal: &[pb::LegalAction], rng: &mut GameRng) -> pb::Action {
    let entry = &legal[rng.index(legal.len())];
    let action = entry.action.clone().unwrap_or_default();
    match &entry.amount_range {
        Some(range) if range.max >= range.min => {
            let top = if rng.below(4) == 0 {
                range.max
            } else {
                range.max.min(range.min.saturating_add(30))
            };
            let amount = range.min + rng.below(top - range.min + 1);
            hosting::with_amount(&action, amount)
        }
        _ => action,
    }
}

/// Health checks, one after another, until `stop`: the gRPC echo round trip.
async fn probe_echo(replicas: Arc<Replicas>, stop: Arc<AtomicBool>) -> Histogram<u64> {
    let mut samples = new_histogram();
    let mut rng = GameRng::from_seed(&Seed::from_u64(u64::MAX));
    while !stop.load(Ordering::Relaxed) {
        let replica = replicas.replica(&mut rng);
        let mut health = tonic_health::pb::health_client::HealthClient::new(
            replicas.channels[replica][0].clone(),
        );
        let mut request = tonic::Request::new(tonic_health::pb::HealthCheckRequest {
            service: String::new(),
        });
        request.set_timeout(CALL_TIMEOUT);
        let begin = Instant::now();
        if health.check(request).await.is_ok() {
            record(&mut samples, begin.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    samples
}

/// Appends to a scratch game of its own through the store's append script, one after another,
/// until `stop`: the raw round trip an Act's append costs, without the service around it.
/// The CPU time Redis has used so far (`used_cpu_sys` + `used_cpu_user` of `INFO cpu`).
async fn redis_cpu(url: &str) -> anyhow::Result<Duration> {
    let client = redis::Client::open(url).context("--probe-redis")?;
    let mut connection = client
        .get_multiplexed_async_connection()
        .await
        .context("--probe-redis: connecting")?;
    let info: String = redis::cmd("INFO")
        .arg("cpu")
        .query_async(&mut connection)
        .await
        .context("--probe-redis: INFO cpu")?;
    let seconds: f64 = info
        .lines()
        .filter_map(|line| line.split_once(':'))
        .filter(|(name, _)| *name == "used_cpu_sys" || *name == "used_cpu_user")
        .filter_map(|(_, value)| value.trim().parse::<f64>().ok())
        .sum();
    Ok(Duration::from_secs_f64(seconds))
}

async fn probe_append(url: String, stop: Arc<AtomicBool>) -> anyhow::Result<Histogram<u64>> {
    use crate::store::redis::{RedisOptions, RedisStore};
    use crate::store::{GameMeta, NewEntry, Store};

    let store = RedisStore::connect(&RedisOptions::single(url))
        .await
        .context("--probe-redis")?;
    let mut id = [0u8; 8];
    getrandom::fill(&mut id).map_err(|error| anyhow::anyhow!("no randomness: {error}"))?;
    let game_id = format!("load-probe-{}", hex::encode(id));
    let meta = GameMeta {
        game_id: game_id.clone(),
        kind: pb::GameKind::MediciVsStrozzi,
        config: Vec::new(),
        rules_version: "load-probe".into(),
        seed: Seed([0; 32]),
        token_hashes: vec![[0; 32]; 2],
        created_at_ms: 0,
        players: Vec::new(),
    };
    store.create(&meta).await.context("probe game")?;
    let mut samples = new_histogram();
    let mut version = 0;
    while !stop.load(Ordering::Relaxed) {
        // Like an Act's append: a small action and a request id (which the script also records).
        let entry = NewEntry {
            seat: 0,
            action: vec![0; 8],
            request_id: format!("probe-{version}"),
            finishes: false,
            server_time_ms: 0,
            deadline: None,
        };
        let begin = Instant::now();
        store
            .append(&game_id, version, &entry)
            .await
            .context("probe append")?;
        record(&mut samples, begin.elapsed());
        version += 1;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(samples)
}

/// The CPU time (user + system) the given processes have used so far, from `/proc/<pid>/stat`;
/// `None` when no process was given.
fn replica_cpu(pids: &[u32]) -> anyhow::Result<Option<Duration>> {
    if pids.is_empty() {
        return Ok(None);
    }
    // Clock ticks per second: 100 on every Linux this runs on (USER_HZ is fixed by the ABI).
    const TICKS_PER_SECOND: u64 = 100;
    let mut ticks = 0;
    for pid in pids {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .with_context(|| format!("--replica-pid {pid}: reading /proc/{pid}/stat"))?;
        // Fields after the command name, which is in parentheses and may contain spaces.
        let after = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest)
            .context("unexpected /proc stat format")?;
        let fields: Vec<&str> = after.split_whitespace().collect();
        // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after the name.
        let utime: u64 = fields.get(11).and_then(|f| f.parse().ok()).unwrap_or(0);
        let stime: u64 = fields.get(12).and_then(|f| f.parse().ok()).unwrap_or(0);
        ticks += utime + stime;
    }
    Ok(Some(Duration::from_millis(ticks * 1000 / TICKS_PER_SECOND)))
}

/// The progress line: Acts so far and the current rate, redrawn while the load runs.
fn progress_bar(
    args: &LoadArgs,
    tally: Arc<Tally>,
    stop: Arc<AtomicBool>,
    started: Instant,
) -> Option<tokio::task::JoinHandle<()>> {
    let bar = indicatif::ProgressBar::new(args.duration.as_secs().max(1));
    if bar.is_hidden() {
        return None;
    }
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {elapsed}/{len}s {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    Some(tokio::spawn(async move {
        let mut last = (Instant::now(), 0_u64);
        while !stop.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_millis(250)).await;
            let acts = tally.acts.load(Ordering::Relaxed);
            let now = Instant::now();
            let rate = (acts - last.1) as f64 / now.duration_since(last.0).as_secs_f64();
            last = (now, acts);
            let errors: u64 = tally
                .errors
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .values()
                .sum();
            bar.set_position(started.elapsed().as_secs());
            bar.set_message(format!(
                "{acts} Acts, {rate:.0}/s, {} games finished, {errors} errors",
                tally.finished.load(Ordering::Relaxed)
            ));
        }
        bar.finish_and_clear();
    }))
}
