//! A rolling upgrade (issue #25, item 4): the previous release (the commit `PREVIOUS_RELEASE`
//! names, built by `scripts/previous-release.sh`) and this build run as two `tabula serve`
//! replicas on one real Redis (AOF on), under load, as a deploy replaces one with the other:
//!
//! 1. the first build alone: games of every kind both builds host are created on it, plain, with
//!    a short turn clock, or with bot seats; observers follow every game; each clocked game's
//!    player lets its clock run out once, so the first build's sweeper logs a timeout, and its bot
//!    workers play the bot seats;
//! 2. the second build joins: clients spread their calls over both (round robin, as a load
//!    balancer does), more observers follow every game on the second replica, and play goes on;
//! 3. the first replica gets SIGTERM mid-play, as a rolling deploy stops it: its streams are cut
//!    and resume on the second replica, calls that reach it while it drains are retried there, and
//!    once it has exited the games are played to their end on the second build alone (each clocked
//!    game letting its clock run out once more, for the second build's sweeper).
//!
//! Every client sends request ids and expected versions. Pass: every error a client saw is one a
//! client is meant to retry or resolve by re-reading (see [`Retry`]); every acknowledged move is in
//! the log exactly once, at the version it was acknowledged with, and every move of a human seat in
//! the log was acknowledged; every Observe stream, resumed across replicas, saw every version once
//! in order; the timeouts are where the silent seats let them happen; and every game's exported log
//! verifies (VerifyLog) on the replica left, and its JSON export by the previous release's
//! `tabula export` imports and verifies with this build's `tabula verify FILE`.
//!
//! It runs both ways: the upgrade (previous, then current) and the rollback (current, then
//! previous: the old build joining replicas of the new one, reading what the new one wrote).
//!
//! The previous build's binary comes from `TABULA_PREVIOUS_BINARY` (scripts/test.sh sets it); when
//! unset, the test runs `scripts/previous-release.sh` itself (it builds the previous release once,
//! a few minutes, and reuses that binary afterwards).

use crate::common;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use common::servers::{ServerProcess, TABULA, TabulaServe};
use common::*;
use futures::StreamExt;
use tabula::games::Seed;
use tabula::games::common::GameRng;
use tabula::proto::v1 as pb;
use tokio::sync::watch;
use tonic::Code;

/// The environment variable naming the previous release's `tabula` binary.
const PREVIOUS_BINARY: &str = "TABULA_PREVIOUS_BINARY";

/// How a developer gets the previous release's binary by hand.
const BUILD_COMMAND: &str = "TABULA_PREVIOUS_BINARY=\"$(scripts/previous-release.sh)\" cargo test \
                             --test integration rolling_upgrade::";

/// The games of each kind and variant (plain, clocked, with bots).
const GAMES_PER_VARIANT: usize = 2;

/// The moves each player makes in each of the first two phases before it waits for the next.
const MOVES_PER_PHASE: u64 = 8;

/// The clocked games' limit per decision: short, so a silent seat times out quickly.
const TURN_LIMIT_MS: u64 = 400;

/// The phases: the first build alone, both builds, then the first one stopped.
const ALONE: usize = 0;
const BOTH: usize = 1;
const LAST: usize = 2;

/// The longest the whole scenario may take; every wait in it has this deadline at the latest.
const SCENARIO_DEADLINE: Duration = Duration::from_secs(240);

/// The previous release's binary: from `TABULA_PREVIOUS_BINARY`, or built (once per test run) by
/// `scripts/previous-release.sh`.
fn previous_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        if let Some(path) = std::env::var_os(PREVIOUS_BINARY) {
            let path = PathBuf::from(path);
            assert!(
                path.is_file(),
                "{PREVIOUS_BINARY}={} is not a file; build it with: {BUILD_COMMAND}",
                path.display()
            );
            return path;
        }
        let root = env!("CARGO_MANIFEST_DIR");
        eprintln!(
            "{PREVIOUS_BINARY} is not set: running scripts/previous-release.sh (a few minutes the \
             first time, then reused)"
        );
        let mut script = Command::new(format!("{root}/scripts/previous-release.sh"));
        // Build beside this test binary (<target>/debug/deps/integration-…), reusing its
        // dependencies, when the target directory is not given.
        if std::env::var_os("CARGO_TARGET_DIR").is_none()
            && let Some(target) = std::env::current_exe()
                .ok()
                .and_then(|exe| exe.ancestors().nth(3).map(Path::to_path_buf))
        {
            script.env("CARGO_TARGET_DIR", target);
        }
        let output = script
            .stderr(Stdio::inherit())
            .output()
            .expect("scripts/previous-release.sh runs");
        assert!(
            output.status.success(),
            "scripts/previous-release.sh failed (see above); the test needs the previous \
             release's binary: {BUILD_COMMAND}"
        );
        PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
    })
}

/// One build of `tabula`: a name for messages, and its binary.
#[derive(Clone, Copy)]
struct Build {
    name: &'static str,
    binary: &'static Path,
}

fn previous() -> Build {
    Build {
        name: "previous release",
        binary: previous_binary(),
    }
}

fn current() -> Build {
    Build {
        name: "current build",
        binary: Path::new(TABULA),
    }
}

/// The upgrade: the previous release's replica is replaced by the current build's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn previous_release_replaced_by_the_current_build_under_load() {
    rolling_deploy(previous(), current()).await;
}

/// The rollback: the previous release's replica joins the current build's, which is then stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn current_build_rolled_back_to_the_previous_release_under_load() {
    rolling_deploy(current(), previous()).await;
}

/// The flags of both replicas: every one a flag the previous release has too.
fn serve_args(redis_url: &str) -> Vec<String> {
    [
        "--redis-url",
        redis_url,
        "--allow-client-seed",
        "--create-game-rate",
        "0",
        "--act-rate-per-token",
        "0",
        "--observe-rate-per-token",
        "0",
        "--observe-rate-per-address",
        "0",
        // Snapshots written by one build are read by the other.
        "--snapshot-every",
        "16",
        "--clock-sweep-interval",
        "100ms",
        "--bot-threads",
        "1",
        "--bot-think-ms",
        "50",
        "--shutdown-grace",
        "5s",
        "--worker-threads",
        "2",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// `build`'s `tabula serve` on the test's Redis, logging to `<dir>/<name>.log`.
fn start_replica(build: Build, redis_url: &str, dir: &Path, name: &str) -> TabulaServe {
    let args = serve_args(redis_url);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    TabulaServe::logged_binary(build.binary, &args, &dir.join(format!("{name}.log")))
}

/// The games `build` hosts (its ListGameTypes), from a short-lived replica on a memory store
/// logging to `log`.
async fn hosted_by(build: Build, log: &Path) -> HashSet<String> {
    let replica = TabulaServe::logged_binary(build.binary, &[], log);
    let mut client = replica.client().await;
    list_game_types(&mut client)
        .await
        .into_iter()
        .map(|game| game.name)
        .collect()
}

/// What a client does after a failed call.
#[derive(Debug, PartialEq)]
enum Retry {
    /// Send the same request again (same request id and expected version), to the next replica:
    /// UNAVAILABLE (the replica is draining or gone, or its store did not answer in time), or
    /// ABORTED without a current version (contention: other appenders kept winning the race). A
    /// request that did land is answered from the log (its request id), not applied twice.
    Same,
    /// Read the game again and decide anew: the request was not applied and cannot be. ABORTED
    /// with `tabula-current-version` (the expected version is stale: a bot, a timeout or a
    /// retried request's first attempt got in first); FAILED_PRECONDITION because the seat's turn
    /// clock ran out (its timeout is being logged) or the game has finished (a timeout or a bot
    /// ended it). Both are decided against the log, whichever replica answers.
    Reread,
}

/// Whether the call failed in the client's own transport, before any answer from a replica came:
/// the connection was refused, closed or reset (tonic then reports UNAVAILABLE, or CANCELLED /
/// UNKNOWN for a call caught on a connection as it closes, e.g. sent just as the draining replica
/// closed it after its GOAWAY; tonic does not retry those by itself). Such a status carries the
/// transport's error as its source; a status a replica sent never does. The request may or may
/// not have reached the replica, so it is sent again, to the next replica: safe for reads, and for
/// Act through its request id.
fn transport_failure(status: &tonic::Status) -> bool {
    let Some(source) = std::error::Error::source(status) else {
        return false;
    };
    // A draining replica's GOAWAY (NO_ERROR) that a new call raced: the client's transport
    // reports it as INTERNAL, but the call never reached the replica, and a client retries it.
    let refused_by_goaway = status.code() == Code::Internal && {
        let source = format!("{source:?}");
        source.contains("GoAway") && source.contains("NO_ERROR")
    };
    refused_by_goaway
        || matches!(
            status.code(),
            Code::Unavailable | Code::Cancelled | Code::Unknown
        )
}

/// How a client may handle a failed call, or `None` for an error no client should see in a
/// rolling deploy (a bug, or an incompatibility between the builds).
fn retry_for(status: &tonic::Status) -> Option<Retry> {
    if transport_failure(status) {
        return Some(Retry::Same);
    }
    match status.code() {
        Code::Unavailable => Some(Retry::Same),
        Code::Aborted if status.metadata().contains_key("tabula-current-version") => {
            Some(Retry::Reread)
        }
        Code::Aborted => Some(Retry::Same),
        Code::FailedPrecondition
            if status.message().contains("ran out of time")
                || status.message().contains("has finished") =>
        {
            Some(Retry::Reread)
        }
        _ => None,
    }
}

/// One error a client saw: the call, the replica (0: the first build's, 1: the second's).
struct SeenError {
    call: &'static str,
    replica: usize,
    code: Code,
    /// Raised by the client's transport, not sent by a replica.
    transport: bool,
    message: String,
    allowed: bool,
}

/// One acknowledged move.
#[derive(Clone, Debug)]
struct Ack {
    game_id: String,
    version: u64,
    seat: u32,
    request_id: String,
}

/// The replicas the clients spread their calls over, in turn, as a load balancer does.
#[derive(Default)]
struct Pool {
    members: Mutex<Vec<(usize, Client)>>,
    next: AtomicUsize,
}

impl Pool {
    /// The next replica in turn.
    fn pick(&self) -> (usize, Client) {
        let members = self.members.lock().expect("lock");
        assert!(!members.is_empty(), "no replica to call");
        members[self.next.fetch_add(1, Ordering::Relaxed) % members.len()].clone()
    }

    /// Replica `index`, if it is still in the pool; else the next in turn.
    fn prefer(&self, index: usize) -> (usize, Client) {
        let members = self.members.lock().expect("lock");
        match members.iter().find(|(i, _)| *i == index) {
            Some(member) => member.clone(),
            None => {
                drop(members);
                self.pick()
            }
        }
    }

    fn join(&self, index: usize, client: Client) {
        self.members.lock().expect("lock").push((index, client));
    }

    fn leave(&self, index: usize) {
        self.members
            .lock()
            .expect("lock")
            .retain(|(i, _)| *i != index);
    }
}

/// What every task of the scenario shares.
struct Shared {
    pool: Pool,
    /// The phase: [`ALONE`], [`BOTH`], [`LAST`].
    phase: watch::Receiver<usize>,
    /// Set once the first replica has exited.
    first_gone: AtomicBool,
    errors: Mutex<Vec<SeenError>>,
    acks: Mutex<Vec<Ack>>,
    /// Acknowledged moves counted, for the driver's progress conditions.
    acked: AtomicU64,
    /// The timeouts the silent seats waited for: game, the timeout's version, the phase (and
    /// whether the first replica had exited).
    silences: Mutex<Vec<(String, u64, usize, bool)>>,
    give_up: Instant,
}

impl Shared {
    /// Records a failed call; true if a client may retry or re-read after it.
    fn saw(&self, call: &'static str, replica: usize, status: &tonic::Status) -> Option<Retry> {
        let retry = retry_for(status);
        // Reads and streams are only ever retried as they were: after UNAVAILABLE, from a
        // replica or from the transport.
        let allowed = match call {
            "Act" => retry.is_some(),
            _ => retry == Some(Retry::Same) && status.code() != Code::Aborted,
        };
        self.errors.lock().expect("lock").push(SeenError {
            call,
            replica,
            code: status.code(),
            transport: transport_failure(status),
            message: status.message().chars().take(300).collect(),
            allowed,
        });
        if allowed { retry } else { None }
    }

    fn check_deadline(&self, what: &str) {
        if Instant::now() < self.give_up {
            return;
        }
        let errors = self.errors.lock().expect("lock");
        let refused: Vec<String> = errors
            .iter()
            .filter(|e| !e.allowed)
            .take(5)
            .map(|e| {
                format!(
                    "{} on replica {}: {:?}: {}",
                    e.call, e.replica, e.code, e.message
                )
            })
            .collect();
        panic!("the scenario's deadline passed: {what}; errors not allowed so far: {refused:#?}");
    }

    /// GetView through the pool, retrying calls that failed as a draining replica's do.
    async fn view(&self, game_id: &str, token: Option<&str>) -> pb::GetViewResponse {
        loop {
            self.check_deadline(&format!("GetView of {game_id}"));
            let (replica, mut client) = self.pool.pick();
            let request = pb::GetViewRequest {
                narrate: false,
                game_id: game_id.to_owned(),
                version: None,
                min_version: None,
                omit_view: false,
            };
            let answer = match token {
                Some(token) => client.get_view(authorized(request, token)).await,
                None => client.get_view(request).await,
            };
            match answer {
                Ok(view) => return view.into_inner(),
                Err(status) => {
                    if self.saw("GetView", replica, &status).is_none() {
                        panic!("GetView of {game_id} on replica {replica}: {status:?}");
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        }
    }
}

/// How a game is set up.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Variant {
    /// Human seats only, no clock.
    Plain,
    /// Human seats only, each decision limited to [`TURN_LIMIT_MS`] (default action on timeout).
    Clocked,
    /// Seat 0 a search bot (and seat 2, if any, a random bot); the rest human.
    Bots,
}

/// One game of the scenario.
struct Table {
    index: usize,
    kind: String,
    variant: Variant,
    game_id: String,
    /// The human seats and their tokens.
    humans: Vec<(u32, String)>,
    bots: HashSet<u32>,
    /// The last phase this game's player finished its share of (phase + 1), or `u64::MAX` once the
    /// game has ended.
    done: AtomicU64,
}

fn config(game: pb::game_config::Game, variant: Variant, seats: u32) -> pb::GameConfig {
    let table = match variant {
        Variant::Plain => None,
        Variant::Clocked => Some(pb::TableConfig {
            timeout_policy: pb::TimeoutPolicy::DefaultAction as i32,
            clock: Some(pb::TurnClock {
                kind: Some(pb::turn_clock::Kind::PerDecision(
                    pb::turn_clock::PerDecision {
                        limit_ms: TURN_LIMIT_MS,
                    },
                )),
            }),
            ..Default::default()
        }),
        Variant::Bots => {
            let mut bots = vec![pb::BotSeat {
                seat: 0,
                kind: pb::BotKind::Search as i32,
                iterations: 8,
            }];
            if seats > 2 {
                bots.push(pb::BotSeat {
                    seat: 2,
                    kind: pb::BotKind::Random as i32,
                    iterations: 0,
                });
            }
            Some(pb::TableConfig {
                bots,
                ..Default::default()
            })
        }
    };
    pb::GameConfig {
        game: Some(game),
        table,
    }
}

/// Plays `table`'s human seats by random legal moves through the pool: [`MOVES_PER_PHASE`] moves
/// in each of the first two phases (and, in a clocked game, one decision left to time out), then
/// waits for the next phase; in the last, to the end (letting the clock run out once more after
/// the first replica has gone).
async fn play(shared: Arc<Shared>, table: Arc<Table>) {
    let game_id = table.game_id.as_str();
    let mut rng = GameRng::from_seed(&Seed::from_u64(7_000 + table.index as u64));
    let mut phases = shared.phase.clone();
    let mut phase = usize::MAX;
    let mut moves = 0;
    let mut silent = true;
    let mut decision = 0u64;
    loop {
        shared.check_deadline(&format!("game {game_id} ({})", table.kind));
        let now = *phases.borrow_and_update();
        if now != phase {
            phase = now;
            moves = 0;
            silent = table.variant != Variant::Clocked;
        }
        let view = shared.view(game_id, None).await;
        let status = view.status.clone().expect("status");
        let Some(seat) = status.to_act else {
            assert!(
                status.finished,
                "{game_id}: nobody to act in a running game"
            );
            table.done.store(u64::MAX, Ordering::SeqCst);
            return;
        };
        if phase < LAST && moves >= MOVES_PER_PHASE && silent {
            table.done.store(phase as u64 + 1, Ordering::SeqCst);
            let left = shared.give_up.saturating_duration_since(Instant::now());
            let changed = tokio::time::timeout(left, phases.changed()).await;
            assert!(
                matches!(changed, Ok(Ok(()))),
                "{game_id}: the next phase never came"
            );
            continue;
        }
        if table.bots.contains(&seat) {
            // The bots (of either replica) play their turns by themselves.
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        }
        if !silent && (phase < LAST || shared.first_gone.load(Ordering::SeqCst)) {
            // Let the clock run out: wait until the game moves on without this seat.
            loop {
                shared.check_deadline(&format!("{game_id}: the timeout at {}", view.version));
                if shared.view(game_id, None).await.version > view.version {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
            let gone = shared.first_gone.load(Ordering::SeqCst);
            shared.silences.lock().expect("lock").push((
                game_id.to_owned(),
                view.version + 1,
                phase,
                gone,
            ));
            silent = true;
            continue;
        }
        let token = &table
            .humans
            .iter()
            .find(|(s, _)| *s == seat)
            .unwrap_or_else(|| panic!("{game_id}: seat {seat} is neither a bot nor a human"))
            .1;
        let mine = shared.view(game_id, Some(token)).await;
        if mine.version != view.version || mine.legal_actions.is_empty() {
            continue;
        }
        decision += 1;
        let request = pb::ActRequest {
            narrate: false,
            game_id: game_id.to_owned(),
            action: Some(choose(&mine.legal_actions, &mut rng)),
            expected_version: Some(mine.version),
            request_id: format!("t{}-d{decision}", table.index),
            omit_view: false,
        };
        loop {
            shared.check_deadline(&format!("{game_id}: Act at {}", mine.version));
            let (replica, mut client) = shared.pool.pick();
            match client.act(authorized(request.clone(), token)).await {
                Ok(response) => {
                    let response = response.into_inner();
                    assert_eq!(
                        response.version,
                        mine.version + 1,
                        "{game_id}: the move was acknowledged at another version"
                    );
                    shared.acks.lock().expect("lock").push(Ack {
                        game_id: game_id.to_owned(),
                        version: response.version,
                        seat,
                        request_id: request.request_id.clone(),
                    });
                    shared.acked.fetch_add(1, Ordering::SeqCst);
                    moves += 1;
                    break;
                }
                Err(status) => match shared.saw("Act", replica, &status) {
                    Some(Retry::Same) => tokio::time::sleep(Duration::from_millis(20)).await,
                    // Refused (or not allowed: recorded, and the game goes on from a fresh read).
                    Some(Retry::Reread) | None => break,
                },
            }
        }
    }
}

/// What one observer saw: every version once, and how often its stream was cut and resumed.
struct Observed {
    game_id: String,
    versions: Vec<u64>,
    resumed: usize,
}

/// Observes `game_id` from version 0, first on replica `start`; when a stream is cut (or refused),
/// resumes on the next replica from the last version seen, until the game's final state.
async fn observe_game(shared: Arc<Shared>, game_id: String, start: usize) -> Observed {
    let mut versions: Vec<u64> = Vec::new();
    let mut resumed = 0;
    let mut first = true;
    loop {
        shared.check_deadline(&format!("observer of {game_id} at {versions:?}"));
        let (replica, mut client) = if first {
            shared.pool.prefer(start)
        } else {
            shared.pool.pick()
        };
        first = false;
        let request = pb::ObserveRequest {
            narrate: false,
            game_id: game_id.clone(),
            from_version: Some(versions.last().copied().unwrap_or(0)),
        };
        let mut stream = match client.observe(request).await {
            Ok(response) => response.into_inner(),
            Err(status) => {
                if shared.saw("Observe", replica, &status).is_none() {
                    panic!("Observe of {game_id} on replica {replica}: {status:?}");
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        loop {
            let left = shared.give_up.saturating_duration_since(Instant::now());
            let next = tokio::time::timeout(left, stream.next())
                .await
                .unwrap_or_else(|_| panic!("observer of {game_id} stuck at {versions:?}"));
            match next {
                Some(Ok(message)) => {
                    // A resumed stream starts with the state at the version already seen.
                    if versions.last() != Some(&message.version) {
                        versions.push(message.version);
                    }
                    if message.status.is_some_and(|s| s.finished) {
                        return Observed {
                            game_id,
                            versions,
                            resumed,
                        };
                    }
                }
                Some(Err(status)) => {
                    if shared.saw("Observe stream", replica, &status).is_none() {
                        panic!("the Observe stream of {game_id} on replica {replica}: {status:?}");
                    }
                    resumed += 1;
                    break;
                }
                None => {
                    panic!("the Observe stream of {game_id} on replica {replica} ended early");
                }
            }
        }
    }
}

/// Waits (at most until the scenario's deadline) until `condition` holds.
async fn until(shared: &Shared, what: &str, condition: impl Fn() -> bool) {
    while !condition() {
        shared.check_deadline(what);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Whether `entry` is a timeout (the server's entry for a seat whose clock ran out).
fn is_timeout(entry: &pb::LogEntry) -> bool {
    matches!(
        entry.action.as_ref().and_then(|a| a.game.as_ref()),
        Some(pb::action::Game::Table(pb::TableAction {
            kind: Some(pb::table_action::Kind::Timeout(_)),
        }))
    )
}

/// The lines of a replica's log that report an error or a warning.
fn troubles(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|line| line.contains("ERROR") || line.contains("WARN") || line.contains("panic"))
        .map(str::to_owned)
        .collect()
}

/// The replicas' log files, whose ends are printed if the test fails.
struct ReplicaLogs(tempfile::TempDir);

impl ReplicaLogs {
    fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for ReplicaLogs {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        for name in ["first", "second"] {
            let text = std::fs::read_to_string(self.path().join(format!("{name}.log")));
            let text = text.unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            eprintln!("--- the end of the {name} replica's log:");
            for line in &lines[lines.len().saturating_sub(40)..] {
                eprintln!("{line}");
            }
        }
    }
}

/// The scenario: `first` alone, then beside `second`, then stopped (see the module's docs).
async fn rolling_deploy(first: Build, second: Build) {
    let started = Instant::now();
    let redis = ServerProcess::start("redis-server", &["--appendonly", "yes"]);
    // The store of a deployment that ran the previous release: layout 1, which both builds write
    // (a new store would start in layout 2, which the previous release refuses).
    let mut raw = ::redis::Client::open(redis.url().as_str())
        .and_then(|client| client.get_connection())
        .expect("a raw Redis connection");
    let _: () = ::redis::cmd("SET")
        .arg("tabula:layout")
        .arg(1)
        .query(&mut raw)
        .expect("SET tabula:layout");
    let logs = ReplicaLogs(tempfile::tempdir().expect("temp dir"));
    let both: HashSet<String> = hosted_by(first, &logs.path().join("first-games.log"))
        .await
        .intersection(&hosted_by(second, &logs.path().join("second-games.log")).await)
        .cloned()
        .collect();

    let mut old = start_replica(first, &redis.url(), logs.path(), "first");
    let (phase_tx, phase_rx) = watch::channel(ALONE);
    let shared = Arc::new(Shared {
        pool: Pool::default(),
        phase: phase_rx,
        first_gone: AtomicBool::new(false),
        errors: Mutex::default(),
        acks: Mutex::default(),
        acked: AtomicU64::new(0),
        silences: Mutex::default(),
        give_up: Instant::now() + SCENARIO_DEADLINE,
    });
    shared.pool.join(0, old.client().await);

    // Phase 1: the first build alone. Games of every kind both builds host, of every variant.
    let mut tables = Vec::new();
    for hosted in tabula::hosting::registry() {
        if !both.contains(hosted.game_type.name) {
            continue;
        }
        let seats = hosted.game_type.min_seats;
        let variants = [Variant::Plain, Variant::Clocked, Variant::Bots];
        for variant in variants.repeat(GAMES_PER_VARIANT) {
            let index = tables.len();
            let (_, mut client) = shared.pool.pick();
            let created = client
                .create_game(pb::CreateGameRequest {
                    config: Some(config(hosted.config_case(seats), variant, seats)),
                    seed: Some(Seed::from_u64(500 + index as u64).0.to_vec()),
                    ..Default::default()
                })
                .await
                .unwrap_or_else(|s| {
                    panic!("CreateGame {variant:?} {}: {s:?}", hosted.game_type.name)
                })
                .into_inner();
            let bots: HashSet<u32> = match variant {
                Variant::Bots => [0, 2].into_iter().filter(|s| *s < seats).collect(),
                _ => HashSet::new(),
            };
            tables.push(Arc::new(Table {
                index,
                kind: hosted.game_type.name.to_owned(),
                variant,
                game_id: created.game_id.clone(),
                humans: created
                    .seats
                    .iter()
                    .map(|seat| (seat.seat, seat.token.clone()))
                    .collect(),
                bots,
                done: AtomicU64::new(0),
            }));
        }
    }
    assert!(
        tables.len() >= 4 * 3 * GAMES_PER_VARIANT,
        "{} games: {both:?}",
        tables.len()
    );
    let mut observers = Vec::new();
    for table in &tables {
        observers.push(tokio::spawn(observe_game(
            shared.clone(),
            table.game_id.clone(),
            0,
        )));
    }
    let players: Vec<_> = tables
        .iter()
        .map(|table| tokio::spawn(play(shared.clone(), table.clone())))
        .collect();
    let phase_done = |phase: usize| {
        let tables = tables.clone();
        move || {
            tables
                .iter()
                .all(|t| t.done.load(Ordering::SeqCst) > phase as u64)
        }
    };
    until(
        &shared,
        "phase 1 (the first build alone)",
        phase_done(ALONE),
    )
    .await;
    let alone = started.elapsed();

    // Phase 2: the second build joins; observers on it too.
    let new = start_replica(second, &redis.url(), logs.path(), "second");
    shared.pool.join(1, new.client().await);
    for table in &tables {
        observers.push(tokio::spawn(observe_game(
            shared.clone(),
            table.game_id.clone(),
            1,
        )));
    }
    phase_tx.send_replace(BOTH);
    until(&shared, "phase 2 (both builds)", phase_done(BOTH)).await;
    let together = started.elapsed();

    // Phase 3: play on, and stop the first replica mid-play.
    let before = shared.acked.load(Ordering::SeqCst);
    phase_tx.send_replace(LAST);
    let running = tables
        .iter()
        .filter(|t| t.done.load(Ordering::SeqCst) != u64::MAX)
        .count() as u64;
    until(&shared, "play resumes before the stop", || {
        shared.acked.load(Ordering::SeqCst) >= before + running.min(6)
    })
    .await;
    old.process.signal("-TERM");
    let stopped_at = started.elapsed();
    let exit = old.process.exit_within(Duration::from_secs(15)).await;
    assert!(
        exit.success(),
        "the {} replica exits cleanly on SIGTERM: {exit:?}",
        first.name
    );
    shared.pool.leave(0);
    shared.first_gone.store(true, Ordering::SeqCst);
    let exited_at = started.elapsed();

    for player in players {
        player.await.expect("a player");
    }
    let mut observed = Vec::new();
    for observer in observers {
        observed.push(observer.await.expect("an observer"));
    }
    let played = started.elapsed();

    // Every error a client saw is one it may retry or resolve by re-reading.
    let errors = std::mem::take(&mut *shared.errors.lock().expect("lock"));
    let mut by_kind: HashMap<(&str, usize, Code, bool), usize> = HashMap::new();
    for error in &errors {
        *by_kind
            .entry((error.call, error.replica, error.code, error.transport))
            .or_default() += 1;
    }
    let mut by_kind: Vec<_> = by_kind.into_iter().collect();
    by_kind.sort_by_key(|(kind, _)| format!("{kind:?}"));
    let refused: Vec<String> = errors
        .iter()
        .filter(|e| !e.allowed)
        .map(|e| {
            let from = if e.transport { "transport" } else { "replica" };
            format!(
                "{} on replica {} ({from}): {:?}: {}",
                e.call, e.replica, e.code, e.message
            )
        })
        .collect();
    assert!(
        refused.is_empty(),
        "errors no client should see in a rolling deploy ({} → {}): {refused:#?}",
        first.name,
        second.name
    );

    // Every game's log: acknowledged moves exactly once at their version, the silent seats'
    // timeouts, the bots' moves; it verifies on the replica left.
    let acks = std::mem::take(&mut *shared.acks.lock().expect("lock"));
    let silences = std::mem::take(&mut *shared.silences.lock().expect("lock"));
    let mut client = new.client().await;
    let (mut entries, mut bot_moves, mut timeouts) = (0, 0, 0);
    for table in &tables {
        let game_id = &table.game_id;
        let log = export(&mut client, game_id).await;
        let last = log.entries.len() as u64;
        entries += last;
        let mut seen = HashSet::new();
        for (index, entry) in log.entries.iter().enumerate() {
            assert_eq!(entry.version, index as u64 + 1, "{game_id}: contiguous");
            if is_timeout(entry) {
                timeouts += 1;
            }
            if entry.request_id.is_empty() {
                continue;
            }
            assert!(
                seen.insert((entry.seat, entry.request_id.clone())),
                "{game_id}: request id {:?} of seat {} is in the log twice",
                entry.request_id,
                entry.seat
            );
            if table.bots.contains(&entry.seat) && !entry.system {
                bot_moves += 1;
            }
            if !entry.system && !table.bots.contains(&entry.seat) {
                assert!(
                    acks.iter().any(|ack| ack.game_id == *game_id
                        && ack.version == entry.version
                        && ack.request_id == entry.request_id),
                    "{game_id}: the move at version {} ({:?}) was never acknowledged",
                    entry.version,
                    entry.request_id
                );
            }
        }
        for ack in acks.iter().filter(|ack| ack.game_id == *game_id) {
            let entry = log.entries.get(ack.version as usize - 1);
            assert!(
                entry.is_some_and(|entry| entry.seat == ack.seat
                    && entry.request_id == ack.request_id
                    && !entry.system),
                "{game_id}: acknowledged {ack:?} but the log has {entry:?} there"
            );
        }
        for (_, version, phase, _) in silences.iter().filter(|s| s.0 == *game_id) {
            let entry = log.entries.get(*version as usize - 1);
            assert!(
                entry.is_some_and(is_timeout),
                "{game_id}: the seat left silent in phase {} timed out at version {version}: \
                 {entry:?}",
                phase + 1
            );
        }
        let verified = client
            .verify_log(pb::VerifyLogRequest { log: Some(log) })
            .await
            .expect("VerifyLog")
            .into_inner();
        assert!(verified.valid, "{game_id} ({}): {verified:?}", table.kind);
        assert_eq!(verified.verified_version, last, "{game_id}");
        for observer in observed.iter().filter(|o| o.game_id == *game_id) {
            let expected: Vec<u64> = (0..=last).collect();
            assert_eq!(
                observer.versions, expected,
                "{game_id}: an observer saw every version once, in order"
            );
        }
    }

    // Exported JSON logs of the previous release still import and verify (issue #25, item 5):
    // every game exported as canonical JSON by the previous release's `tabula export`, then read
    // and re-executed by this build's `tabula verify FILE`.
    for table in &tables {
        let file = logs.path().join(format!("{}.json", table.game_id));
        let errors = logs.path().join(format!("{}.stderr", table.game_id));
        let exported = run_within(
            Command::new(previous_binary()).args([
                "export",
                "--server",
                &new.address(),
                &table.game_id,
            ]),
            &file,
            &errors,
        );
        assert!(
            exported.success(),
            "{}: the previous release's export: {}",
            table.game_id,
            std::fs::read_to_string(&errors).unwrap_or_default()
        );
        let report = logs.path().join(format!("{}.verified", table.game_id));
        let verified = run_within(
            Command::new(TABULA).arg("verify").arg(&file),
            &report,
            &errors,
        );
        assert!(
            verified.success(),
            "{} ({}): the JSON the previous release exported does not verify here: {}{}",
            table.game_id,
            table.kind,
            std::fs::read_to_string(&report).unwrap_or_default(),
            std::fs::read_to_string(&errors).unwrap_or_default()
        );
    }

    // Each build's sweeper logged timeouts: in phase 1 only the first replica ran, and the last
    // silences came after it had exited.
    let clocked = tables
        .iter()
        .filter(|t| t.variant == Variant::Clocked)
        .count();
    let alone_timeouts = silences.iter().filter(|s| s.2 == ALONE).count();
    let late_timeouts = silences.iter().filter(|s| s.3).count();
    assert_eq!(
        alone_timeouts, clocked,
        "a timeout per clocked game in phase 1"
    );
    assert!(late_timeouts > 0, "timeouts after the first replica left");
    assert!(bot_moves > 0, "the bots played");
    let resumed: usize = observed.iter().map(|o| o.resumed).sum();
    assert!(
        resumed > 0,
        "streams of the stopped replica resumed on the other"
    );

    let first_troubles = troubles(&logs.path().join("first.log"));
    let second_troubles = troubles(&logs.path().join("second.log"));
    eprintln!(
        "rolling deploy {} → {}: {} games, {entries} entries ({} acknowledged moves, {bot_moves} \
         bot moves, {timeouts} timeouts, {} of them waited for), {} observers ({resumed} streams \
         resumed); phase 1 ended at {alone:?}, phase 2 at {together:?}, SIGTERM at \
         {stopped_at:?}, exit at {exited_at:?}, games ended at {played:?}; errors seen ((call, \
         replica, code, from the transport), count): {by_kind:?}; log lines with ERROR/WARN: first {}, second {}",
        first.name,
        second.name,
        tables.len(),
        acks.len(),
        silences.len(),
        observed.len(),
        first_troubles.len(),
        second_troubles.len(),
    );
    for line in first_troubles.iter().chain(&second_troubles).take(20) {
        eprintln!("  {line}");
    }

    // The upgrade finished: the operator moves the store to layout 2 (docs/compatibility.md,
    // *Upgrading*); the replica left keeps playing, and the previous release can no longer join.
    if second.binary == Path::new(TABULA) {
        let out = logs.path().join("upgrade-store.out");
        let errors = logs.path().join("upgrade-store.err");
        let upgraded = run_within(
            Command::new(TABULA).args(["upgrade-store", "--redis-url", &redis.url()]),
            &out,
            &errors,
        );
        let said = std::fs::read_to_string(&out).unwrap_or_default();
        assert!(
            upgraded.success() && said.contains("from layout 1 to layout 2"),
            "upgrade-store: {said}{}",
            std::fs::read_to_string(&errors).unwrap_or_default()
        );
        let game = create(&mut client, medici_config(), 99).await;
        tokio::time::sleep(tabula::store::redis::LAYOUT_REFRESH + Duration::from_secs(1)).await;
        let seat = spectator_view(&mut client, &game.game_id)
            .await
            .status
            .and_then(|status| status.to_act)
            .expect("a seat to act");
        let mine = seat_view(&mut client, &game.game_id, &token(&game, seat)).await;
        let moved = client
            .act(authorized(
                pb::ActRequest {
                    narrate: false,
                    game_id: game.game_id.clone(),
                    action: mine.legal_actions[0].action.clone(),
                    expected_version: Some(0),
                    request_id: "after-the-upgrade".into(),
                    omit_view: false,
                },
                &token(&game, seat),
            ))
            .await
            .expect("an Act in layout 2")
            .into_inner();
        assert_eq!(moved.version, 1);
        // The previous release, started now, waits for a store it can read and never serves.
        let refused_log = logs.path().join("previous-after.log");
        let listen = format!("127.0.0.1:{}", free_port());
        let mut refused = Command::new(previous_binary())
            .args(["serve", "--redis-url", &redis.url(), "--listen", &listen])
            .stdout(std::fs::File::create(&refused_log).expect("log file"))
            .stderr(Stdio::null())
            .spawn()
            .expect("start the previous release");
        let deadline = Instant::now() + Duration::from_secs(20);
        let said = loop {
            let said = std::fs::read_to_string(&refused_log).unwrap_or_default();
            if said.contains("layout 2") || Instant::now() > deadline {
                break said;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let health = run_within(
            Command::new(TABULA).args(["health", "--server", &listen, "--timeout", "1s"]),
            &logs.path().join("previous-after.health"),
            &logs.path().join("previous-after.health.err"),
        );
        let _ = refused.kill();
        let _ = refused.wait();
        assert!(
            said.contains("layout 2") && !health.success(),
            "the previous release refuses to serve a store in layout 2: {said}"
        );
    }
}

/// Runs `command` to its end with its output in the file `stdout` and its errors in `stderr`,
/// killing it after 30 s (a command-line call that hangs fails the test instead of hanging it).
fn run_within(command: &mut Command, stdout: &Path, stderr: &Path) -> std::process::ExitStatus {
    let mut child = command
        .stdout(std::fs::File::create(stdout).expect("the output file"))
        .stderr(std::fs::File::create(stderr).expect("the error file"))
        .spawn()
        .expect("start the command");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match child.try_wait().expect("wait for the command") {
            Some(status) => return status,
            None if Instant::now() > deadline => {
                let _ = child.kill();
                panic!("{command:?} did not finish within 30 s");
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}
