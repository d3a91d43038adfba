//! Golden logs (issue #25, item 3): a committed corpus of game logs played by each release, with
//! the state hash and outcome each must reach, replayed by every build.
//!
//! `tests/golden/<release>/` holds one release's corpus (the directory is named after the crate's
//! version, `1.0.0`): every hosted game (Nim, a test-only game, aside) at every seat count of its
//! range, finished and unfinished, with turn clocks and timeouts, bot seats and a hand-over to a
//! bot, a resignation and an operator's abort, each log in protobuf (`.binpb`, an encoded
//! `tabula.v1.GameLog`) and in canonical proto3 JSON (`.json`: what `tabula export` prints, on one
//! line instead of indented; `tabula verify FILE` reads either), and `manifest.json`: for each
//! log its files, game, seat count, scenario, rules version, number of entries, and the state hash
//! (hex) and `GameStatus` (canonical JSON) a replay must end with. See `tests/golden/README.md`.
//!
//! - [`every_golden_log_replays_to_its_recorded_end`] (CI, every build): for every corpus under
//!   `tests/golden/*/`, every log in both encodings is decoded and re-executed with this build
//!   ([`tabula::service::verify::verify`]) and sent through the `VerifyLog` RPC of one real server; each
//!   must be valid and reach the recorded state hash and status, under the rules version it was
//!   played by: a rules change is a new rules version (docs/compatibility.md), and a build keeps
//!   playing every version a golden log uses.
//! - [`write_corpus`] (ignored; run by hand once per release) generates the corpus of this
//!   release by playing every scenario through the real gRPC service (an in-process replica on a
//!   memory store, as `tests/common` starts them):
//!
//!   ```text
//!   TABULA_WRITE_GOLDEN=1 cargo test --test integration -- golden::write_corpus --ignored
//!   ```
//!
//!   It writes `tests/golden/<version>/` and refuses to touch a directory that exists: a corpus is
//!   kept for ever, and a later release adds a directory of its own. `TABULA_GOLDEN_DIR=<dir>`
//!   writes to `<dir>` instead (to compare two generations).
//!
//! Finished games are exported as a spectator (`ExportLog` without a token): once a game has
//! ended its log is complete and public, seed included. A running game's export is redacted for
//! its caller and carries no seed, so an unfinished game's log is assembled from `ExportLog`
//! answers: each entry's action from the export of the seat that made it (a seat sees its own
//! actions unredacted; the server's table entries are public), the seed the generator created the
//! game with inserted (and checked against the exported commitment), and no events (no viewer of a
//! running game sees all of them; a replay checks events only where a log records them).

use crate::common;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::*;
use prost::Message;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tabula::games::Seed;
use tabula::games::common::GameRng;
use tabula::hosting::RegisteredGame;
use tabula::proto::v1 as pb;
use tabula::service::verify::verify;
use tabula::service::{BotOptions, OperatorOptions, ServiceOptions, SweeperOptions};

/// Where the corpora live, one directory per release.
const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden");

/// This release: the name of the directory [`write_corpus`] writes.
const RELEASE: &str = env!("CARGO_PKG_VERSION");

/// The file of each corpus that lists its logs and what each must reach.
const MANIFEST: &str = "manifest.json";

/// What every failure of the replay test adds.
const POLICY: &str = "the golden logs are games a release played, and every later build must \
    replay each of them to the same state and outcome. If this change alters a game's rules on \
    purpose, give the game a new rules version (see docs/compatibility.md) instead of changing \
    or removing a golden log; otherwise the change broke compatibility";

/// A corpus's `manifest.json`.
#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    /// The release that played the logs.
    tabula_version: String,
    /// How the logs were made (for readers; not checked).
    about: String,
    logs: Vec<GoldenLog>,
}

/// One log of a corpus and what its replay must reach.
#[derive(Debug, Serialize, Deserialize)]
struct GoldenLog {
    /// The log's name, the stem of its files.
    name: String,
    /// The encoded `tabula.v1.GameLog`.
    protobuf: String,
    /// The same log in canonical JSON.
    json: String,
    /// The game (`GameType.name`).
    game: String,
    /// The seat count.
    players: u32,
    /// How the game was played (see [`Scenario`]).
    scenario: String,
    /// Game options that differ from the defaults, in words ("defaults" when none).
    options: String,
    /// The rules version the log was played by (as the log says).
    rules_version: String,
    /// The number of entries (the game's version when exported).
    entries: u64,
    /// Whether the game had ended (the exported log was complete).
    finished: bool,
    /// Where the log's seed comes from: "exported" (a finished game's log reveals it) or
    /// "inserted" (an unfinished game's: the seed the game was created with).
    seed: String,
    /// SHA-256 of the engine state after the last entry, hex.
    state_hash: String,
    /// The `GameStatus` after the last entry, canonical JSON.
    status: serde_json::Value,
}

// ------------------------------------------------------------------------------------------------
// The replay (CI)
// ------------------------------------------------------------------------------------------------

/// Every corpus directory under `tests/golden/` (each holding a manifest), in name order.
fn corpora() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(GOLDEN)
        .unwrap_or_else(|e| panic!("{GOLDEN}: {e}"))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.join(MANIFEST).is_file())
        .collect();
    dirs.sort();
    dirs
}

fn read_manifest(dir: &Path) -> Manifest {
    let path = dir.join(MANIFEST);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A log file decoded by its encoding, as `tabula verify FILE` reads it.
fn decode(path: &Path, json: bool) -> Result<pb::GameLog, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot be read: {e}"))?;
    if json {
        let text = std::str::from_utf8(&bytes).map_err(|e| format!("is not UTF-8: {e}"))?;
        tabula::json::from_json(text, "tabula.v1.GameLog")
            .map_err(|e| format!("no longer parses as a JSON tabula.v1.GameLog: {e:#}"))
    } else {
        pb::GameLog::decode(bytes.as_slice())
            .map_err(|e| format!("no longer decodes as a tabula.v1.GameLog: {e}"))
    }
}

/// The status recorded in a manifest.
fn recorded_status(log: &GoldenLog) -> Result<pb::GameStatus, String> {
    tabula::json::from_json(&log.status.to_string(), "tabula.v1.GameStatus")
        .map_err(|e| format!("its recorded status does not parse: {e:#}"))
}

/// What is wrong with `report`, a replay of `log` (`via` names the path it took), if anything.
fn check_report(
    report: &pb::VerifyLogResponse,
    golden: &GoldenLog,
    expected: &pb::GameStatus,
    entries: u64,
    via: &str,
) -> Option<String> {
    if !report.valid {
        return Some(format!(
            "{via}: no longer valid (entry {:?}): {}",
            report.invalid_version, report.error
        ));
    }
    if report.verified_version != entries {
        return Some(format!(
            "{via}: re-executed {} of its {entries} entries",
            report.verified_version
        ));
    }
    let hash = hex::encode(&report.state_hash);
    if hash != golden.state_hash {
        return Some(format!(
            "{via}: ends in state hash {hash}, not the recorded {}",
            golden.state_hash
        ));
    }
    if report.status.as_ref() != Some(expected) {
        let got = report.status.as_ref().map(|status| {
            let pretty = tabula::json::to_json(status, "tabula.v1.GameStatus").expect("JSON");
            serde_json::from_str::<serde_json::Value>(&pretty)
                .expect("JSON")
                .to_string()
        });
        return Some(format!(
            "{via}: ends with status {}, not the recorded {}",
            got.unwrap_or_else(|| "(none)".into()),
            golden.status
        ));
    }
    None
}

/// Every golden log of every release, in both encodings, re-executes with this build (in process
/// and through the VerifyLog RPC of one real server) to exactly the state hash and status its
/// manifest records, under the rules version it was played by (a build that dropped a version a
/// golden log uses fails here). Every failure is listed, each naming its file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_golden_log_replays_to_its_recorded_end() {
    let started = Instant::now();
    let corpora = corpora();
    assert!(
        !corpora.is_empty(),
        "no golden corpus under {GOLDEN} (see tests/golden/README.md)"
    );
    let backend = Backend::memory();
    let replica = Replica::start(&backend).await;
    let mut client = replica.client().await;
    let mut failures = Vec::new();
    let mut replayed = 0;
    for dir in &corpora {
        let manifest = read_manifest(dir);
        failures.extend(unlisted_files(dir, &manifest));
        for golden in &manifest.logs {
            let expected = match recorded_status(golden) {
                Ok(status) => status,
                Err(why) => {
                    failures.push(format!("{}: {}: {why}", dir.display(), golden.name));
                    continue;
                }
            };
            let mut decoded = Vec::new();
            for (file, json) in [(&golden.protobuf, false), (&golden.json, true)] {
                let path = dir.join(file);
                let log = match decode(&path, json) {
                    Ok(log) => log,
                    Err(why) => {
                        failures.push(format!("{}: {why}", path.display()));
                        continue;
                    }
                };
                let played = tabula::hosting::registry()
                    .iter()
                    .find(|game| game.game_type.name == golden.game)
                    .is_some_and(|game| game.plays(&log.rules_version));
                let outcome = if played {
                    replayed += 1;
                    check_log(&mut client, &log, golden, &expected).await
                } else {
                    Some(format!(
                        "played by {} rules version {:?}, which this build no longer plays: keep \
                         it in the engine's EARLIER_RULES_VERSIONS while any golden log uses it",
                        golden.game, log.rules_version
                    ))
                };
                if let Some(why) = outcome {
                    failures.push(format!("{}: {why}", path.display()));
                }
                decoded.push((path, log));
            }
            if let [(_, binary), (json_path, json)] = decoded.as_slice()
                && binary != json
            {
                failures.push(format!(
                    "{}: no longer decodes to the same log as {}",
                    json_path.display(),
                    golden.protobuf
                ));
            }
        }
    }
    eprintln!(
        "golden logs: {replayed} files replayed from {} corpora, in {:.1?}",
        corpora.len(),
        started.elapsed()
    );
    assert!(
        failures.is_empty(),
        "{} golden log check(s) failed:\n{}\n\nWhy this fails: {POLICY}.",
        failures.len(),
        failures.join("\n")
    );
}

/// What is wrong with a log this build must replay: decoded, it re-executes (in process and over
/// VerifyLog) to the recorded entries, state hash and status.
async fn check_log(
    client: &mut Client,
    log: &pb::GameLog,
    golden: &GoldenLog,
    expected: &pb::GameStatus,
) -> Option<String> {
    let entries = log.entries.len() as u64;
    if entries != golden.entries {
        return Some(format!(
            "holds {entries} entries, the manifest says {}",
            golden.entries
        ));
    }
    if let Some(why) = check_report(&verify(log), golden, expected, entries, "replayed here") {
        return Some(why);
    }
    match client
        .verify_log(pb::VerifyLogRequest {
            log: Some(log.clone()),
        })
        .await
    {
        Ok(response) => check_report(
            &response.into_inner(),
            golden,
            expected,
            entries,
            "VerifyLog RPC",
        ),
        Err(status) => Some(format!("VerifyLog RPC refused it: {status:?}")),
    }
}

/// Files of a corpus its manifest does not list (a log without expectations replays nothing).
fn unlisted_files(dir: &Path, manifest: &Manifest) -> Vec<String> {
    let listed: Vec<&str> = manifest
        .logs
        .iter()
        .flat_map(|log| [log.protobuf.as_str(), log.json.as_str()])
        .chain([MANIFEST, "README.md"])
        .collect();
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").file_name())
        .filter(|name| !listed.contains(&name.to_string_lossy().as_ref()))
        .map(|name| {
            format!(
                "{}: not listed in {MANIFEST} (list it with its expected end, or remove it)",
                dir.join(name).display()
            )
        })
        .collect()
}

// ------------------------------------------------------------------------------------------------
// The generator (by hand, once per release)
// ------------------------------------------------------------------------------------------------

/// How a golden game is played.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scenario {
    /// Random legal moves by every seat to the end.
    Finished,
    /// Random legal moves, stopped about halfway.
    Unfinished,
    /// A turn clock (per decision with default actions, or Fischer with forfeits); a seat lets
    /// its time run out once, the rest is played to the end.
    Clocked,
    /// Seat 0 a random bot from creation; later the operator hands seat 1 to a random bot
    /// (HandSeatToBot); the humans play random moves to the end.
    Bots,
    /// A seat that is not to act resigns a third of the way in; the others play to the end.
    Resigned,
    /// The operator ends the game (AdminService.EndGame) a third of the way in.
    Aborted,
}

impl Scenario {
    fn name(self) -> &'static str {
        match self {
            Scenario::Finished => "finished",
            Scenario::Unfinished => "unfinished",
            Scenario::Clocked => "clocked",
            Scenario::Bots => "bots",
            Scenario::Resigned => "resigned",
            Scenario::Aborted => "aborted",
        }
    }
}

/// The scenarios besides [`Scenario::Finished`], played once per game each.
const ONE_PER_GAME: [Scenario; 5] = [
    Scenario::Unfinished,
    Scenario::Clocked,
    Scenario::Bots,
    Scenario::Resigned,
    Scenario::Aborted,
];

/// The longest any wait for the server (a bot's move, a timeout) may take.
const WAIT: Duration = Duration::from_secs(60);

/// The per-decision limit of clocked games: far above a random move's round trips, so only the
/// decision the generator leaves alone times out.
const DECISION_MS: u64 = 3_000;

/// The games of the corpus: the release's, Nim (a test-only game) aside.
fn release_games() -> Vec<&'static RegisteredGame> {
    tabula::hosting::registry()
        .iter()
        .filter(|game| game.game_type.name != "nim")
        .collect()
}

/// 32 bytes derived from `label`: the golden games' seeds and the generator's choices depend on
/// their names only.
fn derived(label: &str) -> Seed {
    Seed(Sha256::digest(format!("tabula-golden/{RELEASE}/{label}")).into())
}

/// One golden game to play.
struct Plan {
    game: &'static RegisteredGame,
    players: u32,
    scenario: Scenario,
}

impl Plan {
    fn name(&self) -> String {
        format!(
            "{}-{}p-{}",
            self.game.game_type.name,
            self.players,
            self.scenario.name()
        )
    }

    /// Options that differ from the defaults where something hidden is involved (Strozzi's
    /// hidden money, Manila's pirates), in the unfinished and resignation games.
    fn options(&self) -> (pb::game_config::Game, &'static str) {
        use pb::game_config::Game;
        let case = self.game.config_case(self.players);
        if !matches!(self.scenario, Scenario::Unfinished | Scenario::Resigned) {
            return (case, "defaults");
        }
        match case {
            Game::Strozzi(config) => (
                Game::Strozzi(tabula::proto::strozzi::v1::Config {
                    hidden_money: true,
                    ..config
                }),
                "hidden_money",
            ),
            Game::Manila(config) => (
                Game::Manila(tabula::proto::manila::v1::Config {
                    pirate_variant: true,
                    ..config
                }),
                "pirate_variant",
            ),
            other => (other, "defaults"),
        }
    }

    /// The table: a clock for [`Scenario::Clocked`] (per decision with default actions for the
    /// first and third game of the registry, Fischer with forfeits for the others), a bot seat
    /// for [`Scenario::Bots`].
    fn table(&self, index: usize) -> Option<pb::TableConfig> {
        use pb::turn_clock::{Fischer, Kind, PerDecision};
        match self.scenario {
            Scenario::Clocked if index.is_multiple_of(2) => Some(pb::TableConfig {
                timeout_policy: pb::TimeoutPolicy::DefaultAction as i32,
                clock: Some(pb::TurnClock {
                    kind: Some(Kind::PerDecision(PerDecision {
                        limit_ms: DECISION_MS,
                    })),
                }),
                ..Default::default()
            }),
            Scenario::Clocked => Some(pb::TableConfig {
                timeout_policy: pb::TimeoutPolicy::Forfeit as i32,
                clock: Some(pb::TurnClock {
                    kind: Some(Kind::Fischer(Fischer {
                        initial_ms: DECISION_MS,
                        increment_ms: 10,
                    })),
                }),
                ..Default::default()
            }),
            Scenario::Bots => Some(pb::TableConfig {
                bots: vec![random_bot(0)],
                ..Default::default()
            }),
            _ => None,
        }
    }
}

fn random_bot(seat: u32) -> pb::BotSeat {
    pb::BotSeat {
        seat,
        kind: pb::BotKind::Random as i32,
        iterations: 0,
    }
}

/// Every golden game of this release: each game at every seat count played to the end, then
/// each other scenario once per game, at seat counts spread over its range.
fn plans() -> Vec<Plan> {
    let games = release_games();
    let mut plans = Vec::new();
    for game in &games {
        for players in game.game_type.seats() {
            plans.push(Plan {
                game,
                players,
                scenario: Scenario::Finished,
            });
        }
    }
    for (index, game) in games.iter().enumerate() {
        let seats: Vec<u32> = game.game_type.seats().collect();
        for (k, scenario) in ONE_PER_GAME.into_iter().enumerate() {
            plans.push(Plan {
                game,
                players: seats[(index + k) % seats.len()],
                scenario,
            });
        }
    }
    plans
}

/// The replica the generator plays on, and its clients.
struct Generator {
    _backend: Backend,
    _replica: Replica,
    client: Client,
    admin: Admin,
    /// Entries of each game's finished game per seat count: where the other scenarios stop.
    lengths: HashMap<(&'static str, u32), u64>,
}

impl Generator {
    async fn start() -> Generator {
        let backend = Backend::memory();
        let options = ServiceOptions {
            operator: Some(OperatorOptions {
                token: OPERATOR.parse().expect("an operator token"),
                required_for_create: false,
            }),
            bots: BotOptions {
                threads: 1,
                think_time: Duration::from_millis(500),
            },
            sweeper: SweeperOptions {
                interval: Duration::from_millis(40),
                ..SweeperOptions::default()
            },
            ..test_options()
        };
        let replica = Replica::start_with(&backend, options).await;
        let client = replica.client().await;
        let admin = admin(&replica).await;
        Generator {
            _backend: backend,
            _replica: replica,
            client,
            admin,
            lengths: HashMap::new(),
        }
    }

    /// Plays `plan` (the `index`-th game of the registry) and exports its log; the log, with
    /// whether its seed was inserted, and the game's live status.
    async fn play(&mut self, plan: &Plan, index: usize) -> (pb::GameLog, bool, pb::GameStatus) {
        let name = plan.name();
        let seed = derived(&format!("seed/{name}"));
        let mut rng = GameRng::from_seed(&derived(&format!("choices/{name}")));
        let (case, _) = plan.options();
        let players = (0..plan.players)
            .map(|seat| pb::Player {
                seat,
                display_name: format!("Golden {seat}"),
                external_id: format!("golden-{seat}"),
            })
            .collect();
        let game = self
            .client
            .create_game(pb::CreateGameRequest {
                config: Some(pb::GameConfig {
                    game: Some(case),
                    table: plan.table(index),
                }),
                seed: Some(seed.0.to_vec()),
                players,
                rules_version: String::new(),
                webhooks: Vec::new(),
                ..Default::default()
            })
            .await
            .expect("CreateGame")
            .into_inner();
        let length = self.lengths.get(&(plan.game.game_type.name, plan.players));
        let part = |fraction: u64| length.map_or(20, |length| (length / fraction).max(1));
        match plan.scenario {
            Scenario::Finished => {
                self.moves(&game, &mut rng, None).await;
            }
            Scenario::Unfinished => {
                self.moves(&game, &mut rng, Some(part(2))).await;
            }
            Scenario::Clocked => {
                let version = self.moves(&game, &mut rng, Some(part(4))).await;
                self.wait_beyond(&game.game_id, version).await;
                self.moves(&game, &mut rng, None).await;
            }
            Scenario::Bots => {
                self.moves(&game, &mut rng, Some(part(3))).await;
                self.admin
                    .hand_seat_to_bot(authorized(
                        pb::HandSeatToBotRequest {
                            game_id: game.game_id.clone(),
                            bot: Some(random_bot(1)),
                            request_id: "golden-hand-over".into(),
                        },
                        OPERATOR,
                    ))
                    .await
                    .expect("HandSeatToBot");
                self.moves(&game, &mut rng, None).await;
            }
            Scenario::Resigned => {
                self.moves(&game, &mut rng, Some(part(3))).await;
                let view = spectator_view(&mut self.client, &game.game_id).await;
                let to_act = view.status.and_then(|s| s.to_act).expect("a seat to act");
                let seat = (to_act + 1) % plan.players;
                self.client
                    .act(authorized(
                        pb::ActRequest {
                            narrate: false,
                            game_id: game.game_id.clone(),
                            action: Some(resign_action()),
                            expected_version: Some(view.version),
                            request_id: "golden-resign".into(),
                            omit_view: false,
                        },
                        &token(&game, seat),
                    ))
                    .await
                    .expect("a resignation");
                self.moves(&game, &mut rng, None).await;
            }
            Scenario::Aborted => {
                self.moves(&game, &mut rng, Some(part(3))).await;
                self.admin
                    .end_game(authorized(
                        pb::EndGameRequest {
                            game_id: game.game_id.clone(),
                            reason: "golden corpus: the operator ended the game".into(),
                            request_id: "golden-abort".into(),
                        },
                        OPERATOR,
                    ))
                    .await
                    .expect("EndGame");
            }
        }
        let live = spectator_view(&mut self.client, &game.game_id).await;
        let status = live.status.expect("status");
        let (log, inserted) = if status.finished {
            let log = export(&mut self.client, &game.game_id).await;
            assert!(log.complete, "{name}: a finished game's log is complete");
            assert_eq!(log.seed, seed.0, "{name}: the export reveals the seed");
            (log, false)
        } else {
            (self.assemble(&game, plan.players, &seed).await, true)
        };
        assert_eq!(
            log.entries.len() as u64,
            live.version,
            "{name}: every entry"
        );
        if plan.scenario == Scenario::Finished {
            self.lengths.insert(
                (plan.game.game_type.name, plan.players),
                log.entries.len() as u64,
            );
        }
        (log, inserted, status)
    }

    /// Random legal moves for the seats to act (waiting while a bot seat is to act) until the
    /// game ends, or has `stop_at` entries and a human seat is to act; the version reached.
    async fn moves(
        &mut self,
        game: &pb::CreateGameResponse,
        rng: &mut GameRng,
        stop_at: Option<u64>,
    ) -> u64 {
        let deadline = Instant::now() + WAIT * 10;
        loop {
            assert!(Instant::now() < deadline, "{}: no end", game.game_id);
            let view = spectator_view(&mut self.client, &game.game_id).await;
            let status = view.status.expect("status");
            let Some(seat) = status.to_act else {
                return view.version;
            };
            if status.bots.iter().any(|bot| bot.seat == seat) {
                // Never stop while a bot is to act: what comes next would race its move.
                tokio::time::sleep(Duration::from_millis(5)).await;
                continue;
            }
            if stop_at.is_some_and(|stop| view.version >= stop) {
                return view.version;
            }
            let mine = seat_view(&mut self.client, &game.game_id, &token(game, seat)).await;
            let action = choose(&mine.legal_actions, rng);
            self.client
                .act(authorized(
                    pb::ActRequest {
                        narrate: false,
                        game_id: game.game_id.clone(),
                        action: Some(action),
                        expected_version: Some(mine.version),
                        request_id: format!("golden-{}", mine.version),
                        omit_view: false,
                    },
                    &token(game, seat),
                ))
                .await
                .expect("a random legal move");
        }
    }

    /// Waits until the server appends an entry beyond `version` by itself (a timeout).
    async fn wait_beyond(&mut self, game_id: &str, version: u64) {
        let deadline = Instant::now() + WAIT;
        while spectator_view(&mut self.client, game_id).await.version <= version {
            assert!(Instant::now() < deadline, "{game_id}: no timeout");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// An unfinished game's log, from ExportLog answers: the spectator's export with each seat's
    /// own actions from that seat's export, the creation seed, and no events (see the module
    /// docs).
    async fn assemble(
        &mut self,
        game: &pb::CreateGameResponse,
        players: u32,
        seed: &Seed,
    ) -> pb::GameLog {
        let mut log = export(&mut self.client, &game.game_id).await;
        assert!(
            !log.complete && log.seed.is_empty(),
            "a running game's export"
        );
        assert_eq!(
            log.seed_commitment,
            Sha256::digest(seed.0).as_slice(),
            "the seed created with is the one committed to"
        );
        for seat in 0..players {
            let own = self
                .client
                .export_log(authorized(
                    pb::ExportLogRequest {
                        narrate: false,
                        game_id: game.game_id.clone(),
                    },
                    &token(game, seat),
                ))
                .await
                .expect("ExportLog as a seat")
                .into_inner()
                .log
                .expect("log");
            assert_eq!(own.entries.len(), log.entries.len(), "one game, one log");
            for (entry, theirs) in log.entries.iter_mut().zip(own.entries) {
                if !entry.system && entry.seat == seat {
                    entry.action = theirs.action;
                }
            }
        }
        for entry in &mut log.entries {
            entry.events.clear();
        }
        log.opening_events.clear();
        log.seed = seed.0.to_vec();
        log
    }
}

/// Writes this release's corpus (see the module docs): by hand, with `TABULA_WRITE_GOLDEN=1`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "writes the release's golden corpus: TABULA_WRITE_GOLDEN=1 (see tests/golden/README.md)"]
async fn write_corpus() {
    if std::env::var("TABULA_WRITE_GOLDEN").as_deref() != Ok("1") {
        eprintln!("golden::write_corpus writes nothing without TABULA_WRITE_GOLDEN=1");
        return;
    }
    let dir = match std::env::var_os("TABULA_GOLDEN_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(GOLDEN).join(RELEASE),
    };
    assert!(
        !dir.exists(),
        "{} exists: a golden corpus is never rewritten (a later release adds its own directory; \
         remove it only if it was never committed)",
        dir.display()
    );
    // Written beside it and renamed at the end, so a failed run leaves no corpus behind.
    let partial = dir.with_extension("partial");
    if partial.exists() {
        std::fs::remove_dir_all(&partial).expect("remove the previous partial corpus");
    }
    std::fs::create_dir_all(&partial).expect("create the corpus directory");

    let started = Instant::now();
    let mut generator = Generator::start().await;
    let games = release_games();
    let mut logs = Vec::new();
    let mut scenarios: BTreeMap<&str, usize> = BTreeMap::new();
    for plan in plans() {
        let name = plan.name();
        let index = games
            .iter()
            .position(|game| std::ptr::eq(*game, plan.game))
            .expect("a release game");
        let (log, inserted, live) = generator.play(&plan, index).await;
        let report = verify(&log);
        assert!(report.valid, "{name} does not verify: {}", report.error);
        let status = report.status.expect("a verified log's status");
        assert_eq!(status, live, "{name}: the replay ends as the live game did");
        check_scenario(&plan, &log, &status);

        let protobuf = format!("{name}.binpb");
        let json = format!("{name}.json");
        std::fs::write(partial.join(&protobuf), log.encode_to_vec()).expect("write");
        std::fs::write(partial.join(&json), compact_json(&log)).expect("write");
        let status_json = tabula::json::to_json(&status, "tabula.v1.GameStatus").expect("JSON");
        *scenarios.entry(plan.scenario.name()).or_default() += 1;
        logs.push(GoldenLog {
            name,
            protobuf,
            json,
            game: plan.game.game_type.name.to_owned(),
            players: plan.players,
            scenario: plan.scenario.name().to_owned(),
            options: plan.options().1.to_owned(),
            rules_version: log.rules_version.clone(),
            entries: log.entries.len() as u64,
            finished: status.finished,
            seed: if inserted { "inserted" } else { "exported" }.to_owned(),
            state_hash: hex::encode(&report.state_hash),
            status: serde_json::from_str(&status_json).expect("status JSON"),
        });
    }
    let manifest = Manifest {
        tabula_version: RELEASE.to_owned(),
        about: "Played through the gRPC service by tests/golden.rs (golden::write_corpus); \
            replayed by golden::every_golden_log_replays_to_its_recorded_end. See \
            tests/golden/README.md."
            .to_owned(),
        logs,
    };
    let text = serde_json::to_string_pretty(&manifest).expect("manifest JSON");
    std::fs::write(partial.join(MANIFEST), format!("{text}\n")).expect("write the manifest");
    std::fs::rename(&partial, &dir).expect("move the corpus into place");
    eprintln!(
        "wrote {} golden logs ({scenarios:?}) to {} in {:.1?}",
        manifest.logs.len(),
        dir.display(),
        started.elapsed()
    );
}

/// `log` as canonical proto3 JSON, the JSON `tabula export` prints (`tabula::json::to_json`) but
/// without its indentation (a third of the size), on one line.
fn compact_json(log: &pb::GameLog) -> String {
    use prost_reflect::{DescriptorPool, DynamicMessage, SerializeOptions};
    let pool = DescriptorPool::decode(tabula::proto::FILE_DESCRIPTOR_SET).expect("descriptors");
    let descriptor = pool
        .get_message_by_name("tabula.v1.GameLog")
        .expect("tabula.v1.GameLog");
    let dynamic =
        DynamicMessage::decode(descriptor, log.encode_to_vec().as_slice()).expect("a GameLog");
    let mut serializer = serde_json::Serializer::new(Vec::new());
    dynamic
        .serialize_with_options(&mut serializer, &SerializeOptions::new())
        .expect("JSON");
    let mut text = String::from_utf8(serializer.into_inner()).expect("UTF-8");
    text.push('\n');
    text
}

/// The generated game shows what its scenario is there for.
fn check_scenario(plan: &Plan, log: &pb::GameLog, status: &pb::GameStatus) {
    use pb::table_action::Kind;
    let name = plan.name();
    let table = |entry: &pb::LogEntry| match entry.action.as_ref().and_then(|a| a.game.as_ref()) {
        Some(pb::action::Game::Table(table)) => table.kind.clone(),
        _ => None,
    };
    let any = |wanted: fn(&Kind) -> bool| log.entries.iter().filter_map(table).any(|k| wanted(&k));
    match plan.scenario {
        Scenario::Finished => assert!(
            status.finished && !status.scores.is_empty(),
            "{name}: ends by the rules"
        ),
        Scenario::Unfinished => assert!(!status.finished, "{name}: still running"),
        Scenario::Clocked => assert!(
            status.finished && any(|k| matches!(k, Kind::Timeout(_))),
            "{name}: a timeout, and an end"
        ),
        Scenario::Bots => {
            assert!(status.finished, "{name}: ends");
            assert!(
                any(|k| matches!(k, Kind::HandToBot(_))),
                "{name}: a hand-over"
            );
            assert!(
                log.entries
                    .iter()
                    .any(|e| e.seat == 0 && !e.system && table(e).is_none()),
                "{name}: the bot seat moved"
            );
        }
        Scenario::Resigned => assert!(
            status.finished && any(|k| matches!(k, Kind::Resign(_))),
            "{name}: a resignation, and an end"
        ),
        Scenario::Aborted => assert!(
            status.finished && any(|k| matches!(k, Kind::Abort(_))),
            "{name}: an abort"
        ),
    }
}
