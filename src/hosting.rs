//! How the service hosts any game: the bridge between the generic wire messages
//! (`tabula.v1.Action`, `Event`, `View`, `GameConfig`, each a `oneof` over the games) and one
//! game's [`Engine`], behind the object-safe [`GameState`].
//!
//! Adding a game takes one line in the `hosted_games!` invocation at the end of this file (nothing
//! else here changes), besides its own folder, proto file and oneof cases (ARCHITECTURE.md). The same line enters the game in the [`registry`], from which the command
//! line, the service's `ListGameTypes`, tests and benchmarks learn which games there are.
//!
//! Beside each engine state the host keeps the game's [`table`]: who resigned, and whether the
//! table (a resignation, an abort) ended the game. Table entries are the same in every game.

mod clock;
mod seating;
mod table;
mod undo;

use sha2::{Digest, Sha256};

pub use clock::{CORRESPONDENCE_DAYS, MAX_INCREMENT_MS, MAX_LIMIT_MS, MIN_LIMIT_MS};
pub use table::{MAX_ABORT_REASON_LEN, MAX_BOT_ITERATIONS, SYSTEM_SEAT};

use crate::bots::{Bot, BotError};
use crate::games::{
    ActionError, Chance, ConfigError, Engine, GameType, Information, LegalAction, Redaction, Seat,
    Seed, Viewer,
};
use crate::proto::v1 as pb;

/// The start of every encoded state ([`GameState::encode`]): the format of the encoding, the
/// table and the engine state, then the turn clock. A snapshot of an older format (the engine
/// state alone, before table entries existed; no bot seats, before those; no clock, before turn
/// clocks; no open seats nor kept moves, before those) lacks it and is ignored, and the game replayed from its
/// log, instead of being decoded as something it is not.
const STATE_FORMAT: &[u8] = b"tabula-state/5:";

/// What the state hash covers: the table and the engine state, encoded as [`STATE_FORMAT`] does,
/// under the prefix of the format that had no clock. The clock is derived from the server times
/// logged with the entries, which the rules never read, so it is left out: a replay without
/// those times (VerifyLog) reaches the same hash, and hashes of games from before turn clocks
/// are unchanged. A game with open seats appends its seating ([`seating::Seating`]), one with an
/// undo policy its kept moves ([`undo::Takeback`]); games without either hash as they did before
/// those existed.
const HASHED_STATE_FORMAT: &[u8] = b"tabula-state/2:";

/// A game's engine seen through the generic wire messages.
pub trait GameState: Send + Sync + std::fmt::Debug {
    /// Which game this is.
    fn kind(&self) -> pb::GameKind;
    /// How many seats the table has.
    fn seat_count(&self) -> u32;
    /// Who must act, and scores and winners once the game has ended; who resigned, and how the
    /// game ended.
    fn status(&self) -> pb::GameStatus;
    /// True once the game has ended (no seat must act).
    fn is_finished(&self) -> bool;
    /// The default action of the seat to act (see [`Engine::default_action`]), as a wire action;
    /// `None` once the game has ended.
    fn default_action(&self) -> Option<pb::Action>;
    /// The viewer's legal actions: empty for spectators and for seats that need not act.
    fn legal_actions(&self, viewer: Viewer) -> Vec<pb::LegalAction>;
    /// Applies `action` by `seat`, returning the unredacted events. On error nothing changes.
    /// `action` is a move of the game, or a table entry (`Action.table`): a seat's resignation,
    /// or a timeout or an abort by the server, whose entries carry [`SYSTEM_SEAT`].
    /// The turn clock is left as it is: [`GameState::apply_at`] is how logged entries apply.
    fn apply(&mut self, seat: Seat, action: &pb::Action) -> Result<Vec<pb::Event>, ActionError>;
    /// [`GameState::apply`] of an entry logged at `server_time_ms` (server clock), which the turn
    /// clock accounts for (see `clock.rs`). The rules never read the time.
    fn apply_at(
        &mut self,
        seat: Seat,
        action: &pb::Action,
        server_time_ms: u64,
    ) -> Result<Vec<pb::Event>, ActionError>;
    /// Starts the turn clock, if the game has one, at the game's creation time (the first
    /// decision's start). Call once, right after [`setup`].
    fn start_clock(&mut self, created_at_ms: u64);
    /// Whether the game has a turn clock.
    fn has_clock(&self) -> bool;
    /// When the seat to act runs out of time, and which seat that is: `None` without a turn clock
    /// or once the game has ended.
    fn deadline(&self) -> Option<(Seat, u64)>;
    /// When the seat to act's current decision started (the clock runs from it to
    /// [`GameState::deadline`]): `None` whenever `deadline` is.
    fn decision_started_ms(&self) -> Option<u64>;
    /// The turn clock as a view shows it at `now_ms` (`None` without a turn clock).
    fn clock_state(&self, now_ms: u64) -> Option<pb::ClockState>;
    /// The state as `viewer` may see it.
    fn view(&self, viewer: Viewer) -> pb::View;
    /// `events` as `viewer` may see them.
    fn redact(&self, events: &[pb::Event], viewer: Viewer) -> Vec<pb::Event>;
    /// `action`, taken by `author`, as `viewer` may see it while the game runs.
    fn redact_action(&self, action: &pb::Action, author: Seat, viewer: Viewer) -> pb::Action;
    /// The events setup produced (unredacted); meaningful on the state right after setup.
    fn opening_events(&self) -> Vec<pb::Event>;
    /// The canonical encoding of the engine state (snapshots, state hashes).
    fn encode(&self) -> Vec<u8>;
    /// A deep copy (the speculative apply of a move works on one).
    fn clone_box(&self) -> Box<dyn GameState>;
    /// The move `bot` makes for `seat`, decided only from what `seat` may see (see
    /// [`crate::bots`]); the same `seed` gives the same move in every state `seat` cannot tell
    /// apart.
    fn bot_action(&self, seat: Seat, bot: &Bot, seed: &Seed) -> Result<pb::Action, BotError>;
    /// The seat to act and the bot that plays it (its search cut short at `time_limit`), when a
    /// bot seat must act: `None` when a human seat must, or the game has ended.
    fn bot_to_act(&self, time_limit: Option<std::time::Duration>) -> Option<(Seat, Bot)>;
    /// Whether `seat` is played by a bot (from creation, or handed over): its token may not act.
    fn is_bot_seat(&self, seat: Seat) -> bool;
    /// Whether the game was created with open seats (`TableConfig.open_seats`), joined since or
    /// not.
    fn has_open_seating(&self) -> bool;
    /// The hash of the token `seat` got when it took an open seat (JoinGame), if it did: that
    /// token, not the one made at creation, acts for the seat.
    fn joined_token_hash(&self, seat: Seat) -> Option<[u8; 32]>;
    /// Whether invitation `invitation` (its position in the game's invitations) took a seat.
    fn invitation_used(&self, invitation: u32) -> bool;
    /// The players who took open seats, as they described themselves, in seat order.
    fn joined_players(&self) -> Vec<pb::Player>;

    /// The encoding [`GameState::state_hash`] covers: [`GameState::encode`] without the turn
    /// clock.
    fn hashed_encoding(&self) -> Vec<u8>;

    /// SHA-256 of the game's state (the turn clock aside): two replicas agree on a game iff their
    /// hashes agree.
    fn state_hash(&self) -> [u8; 32] {
        Sha256::digest(self.hashed_encoding()).into()
    }
}

impl Clone for Box<dyn GameState> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// Why a game could not be set up or restored.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The config's `oneof` is unset: a client bug.
    #[error("the config names no game: set one of the GameConfig cases")]
    NoGame,
    /// The game refused the config (player count, options).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A stored game names a kind this build does not host.
    #[error("unknown game kind {0:?}")]
    UnknownKind(pb::GameKind),
    /// The config chooses a case of `GameConfig` that this build does not host (the wire knows
    /// every game; a build may leave some out).
    #[error(
        "this server does not host the game the config chooses: ListGameTypes lists those it hosts"
    )]
    NotHosted,
    /// A game (or a log) of a rules version this build does not play: one a newer release
    /// added, or one an older release dropped (docs/compatibility.md, *Rules versions*).
    #[error(
        "{game} rules version {asked} is not played by this build (Tabula {release}), which plays \
         {played}: a replica of the release that added it does",
        release = crate::RELEASE
    )]
    RulesVersion {
        /// The game's [`Engine::NAME`].
        game: &'static str,
        /// The version asked for, quoted and cut short.
        asked: String,
        /// The versions this build plays, oldest first.
        played: String,
    },
    /// A stored snapshot does not decode as the game's state.
    #[error("cannot decode a {game} state: {reason}")]
    Restore {
        /// The game's [`Engine::NAME`].
        game: &'static str,
        /// The decoder's complaint.
        reason: String,
    },
}

/// A rules version as an error may quote it: a stored or submitted value, so cut short.
fn quoted_version(rules_version: &str) -> String {
    const LONGEST: usize = 64;
    match rules_version.char_indices().nth(LONGEST) {
        Some((end, _)) => format!("{:?}…", &rules_version[..end]),
        None => format!("{rules_version:?}"),
    }
}

/// An [`Engine`] whose messages are cases of the generic wire `oneof`s.
pub trait HostedGame: Engine {
    /// The game's number on the wire.
    const KIND: pb::GameKind;
    /// The proto name of the game's field in the generic `oneof`s (`Action.manila`, …): the
    /// first segment of every `LegalAction.amount_field` path.
    const WIRE_CASE: &'static str;
    /// `config` as the generic wire case.
    fn wrap_config(config: Self::Config) -> pb::game_config::Game;
    /// This game's config, if `config` is this game's case.
    fn config_of(config: &pb::game_config::Game) -> Option<&Self::Config>;
    /// This game's action, if `action` is this game's case.
    fn action_of(action: &pb::action::Game) -> Option<&Self::Action>;
    /// This game's event, if `event` is this game's case.
    fn event_of(event: &pb::event::Game) -> Option<&Self::Event>;
    /// `action` as the generic wire case.
    fn wrap_action(action: Self::Action) -> pb::action::Game;
    /// `event` as the generic wire case.
    fn wrap_event(event: Self::Event) -> pb::event::Game;
    /// `view` as the generic wire case.
    fn wrap_view(view: Self::View) -> pb::view::Game;
}

/// One hosted game's state: the engine's, and the table around it.
#[derive(Clone, Debug)]
struct Hosted<E> {
    table: table::Table,
    engine: E,
    clock: Option<clock::Clock>,
    /// The open seats, for a game created with some (`None` otherwise).
    seating: Option<seating::Seating>,
    /// The moves kept for taking back, for a game with an undo policy (`None` otherwise).
    undo: Option<Box<undo::Takeback<E>>>,
}

impl<E: HostedGame> Hosted<E> {
    /// The game `config` (this game's case) sets up, with randomness from `seed`.
    fn set_up(
        config: &E::Config,
        table: Option<&pb::TableConfig>,
        seed: &Seed,
        rules_version: &str,
    ) -> Result<Self, HostError> {
        check_rules_version(E::KIND, rules_version)?;
        let engine = E::setup_under(rules_version, config, seed)?;
        let clock = clock::Clock::new(table, engine.seat_count())?;
        let seats = engine.seat_count();
        let hosted_table = table::Table::new(table, seats)?;
        let seating = seating::Seating::new(table, seats, |seat| hosted_table.bot(seat).is_some())?;
        Ok(Hosted {
            table: hosted_table,
            engine,
            clock,
            seating,
            undo: undo::Takeback::new(table)?.map(Box::new),
        })
    }

    /// A state back from [`GameState::encode`].
    fn decode(bytes: &[u8]) -> Result<Self, HostError> {
        let restore_error = |reason: String| HostError::Restore {
            game: E::NAME,
            reason,
        };
        let encoded = bytes.strip_prefix(STATE_FORMAT).ok_or_else(|| {
            restore_error("not the current state format (an older snapshot?)".into())
        })?;
        let ((table, engine), rest): ((table::Table, E), &[u8]) =
            postcard::take_from_bytes(encoded).map_err(|e| restore_error(e.to_string()))?;
        let (clock, rest): (Option<clock::Clock>, &[u8]) =
            postcard::take_from_bytes(rest).map_err(|e| restore_error(e.to_string()))?;
        let (seating, rest): (Option<seating::Seating>, &[u8]) =
            postcard::take_from_bytes(rest).map_err(|e| restore_error(e.to_string()))?;
        let (undo, rest): (Option<Box<undo::Takeback<E>>>, &[u8]) =
            postcard::take_from_bytes(rest).map_err(|e| restore_error(e.to_string()))?;
        if !rest.is_empty() {
            return Err(restore_error(format!(
                "{} bytes left over after the state",
                rest.len()
            )));
        }
        Ok(Hosted {
            table,
            engine,
            clock,
            seating,
            undo,
        })
    }
}

fn wrap_event<E: HostedGame>(event: E::Event) -> pb::Event {
    pb::Event {
        game: Some(E::wrap_event(event)),
    }
}

impl<E: HostedGame> GameState for Hosted<E> {
    fn kind(&self) -> pb::GameKind {
        E::KIND
    }

    fn seat_count(&self) -> u32 {
        self.engine.seat_count()
    }

    fn status(&self) -> pb::GameStatus {
        self.table_status()
    }

    fn is_finished(&self) -> bool {
        self.seat_to_act().is_none() && !self.waiting_for_seats()
    }

    fn default_action(&self) -> Option<pb::Action> {
        self.wire_default_action()
    }

    fn legal_actions(&self, viewer: Viewer) -> Vec<pb::LegalAction> {
        let Viewer::Seat(seat) = viewer else {
            return Vec::new();
        };
        // Nobody acts once the table ended the game, and a resigned seat never does (unless it was
        // handed to a bot, which then decides for it).
        let resigned = self.table.has_left(seat) && self.table.bot(seat).is_none();
        if seat >= self.engine.seat_count()
            || self.is_finished()
            || self.waiting_for_seats()
            || resigned
        {
            return Vec::new();
        }
        self.engine
            .legal_actions(seat)
            .into_iter()
            .map(|legal| {
                let (action, amount_range, amount_field) = match legal {
                    LegalAction::Exact(action) => (action, None, String::new()),
                    LegalAction::Amount { action, min, max } => {
                        // The path from the generic Action: this game's case, then the game's
                        // own path to the field.
                        let field = E::amount_field(&action)
                            .map(|path| format!("{}.{path}", E::WIRE_CASE))
                            .unwrap_or_default();
                        (action, Some(pb::AmountRange { min, max }), field)
                    }
                };
                pb::LegalAction {
                    action: Some(pb::Action {
                        game: Some(E::wrap_action(action)),
                    }),
                    amount_range,
                    amount_field,
                }
            })
            .collect()
    }

    fn apply(&mut self, seat: Seat, action: &pb::Action) -> Result<Vec<pb::Event>, ActionError> {
        let game = action.game.as_ref().ok_or_else(|| {
            ActionError::malformed("the action names no game: set the case for this game's actions")
        })?;
        if let pb::action::Game::Table(table) = game {
            let events = self.apply_table(seat, table)?;
            if let Some(takeback) = self.undo.as_mut() {
                takeback.table_entry(table::is_undo_entry(table));
            }
            return Ok(events);
        }
        // Logs under verification can name any seat; engines may index by seat.
        if seat == SYSTEM_SEAT {
            return Err(ActionError::malformed(
                "the server makes no moves: a system entry is a timeout or an abort",
            ));
        }
        if seat >= self.engine.seat_count() {
            return Err(ActionError::malformed(format!(
                "seat {seat} does not exist: this game has {} seats",
                self.engine.seat_count()
            )));
        }
        let action = E::action_of(game).ok_or_else(|| {
            ActionError::malformed(format!(
                "this is a {} game; the action is for another game",
                E::NAME
            ))
        })?;
        // A game with an undo policy keeps the state before each move (`undo.rs`).
        let before = self.undo.as_ref().map(|_| undo::Before {
            table: self.table.clone(),
            engine: self.engine.clone(),
            seating: self.seating.clone(),
        });
        let events = self.apply_move(seat, action)?;
        if let (Some(takeback), Some(before)) = (self.undo.as_mut(), before) {
            takeback.moved(seat, action, before);
        }
        Ok(events)
    }

    fn apply_at(
        &mut self,
        seat: Seat,
        action: &pb::Action,
        server_time_ms: u64,
    ) -> Result<Vec<pb::Event>, ActionError> {
        let before = self.seat_to_act();
        let waited = self.waiting_for_seats();
        let events = self.apply(seat, action)?;
        if waited && !self.waiting_for_seats() {
            // The entry that took the last open seat starts the game: the first decision's
            // clock runs from it, not from the creation.
            if let Some(clock) = &mut self.clock {
                clock.start(server_time_ms);
            }
            return Ok(events);
        }
        if self.clock.is_some() {
            let timed_out = matches!(
                &action.game,
                Some(pb::action::Game::Table(pb::TableAction {
                    kind: Some(pb::table_action::Kind::Timeout(_))
                }))
            );
            let after = self.seat_to_act();
            if let Some(clock) = &mut self.clock {
                clock.tick(seat, before, after, timed_out, server_time_ms);
            }
        }
        Ok(events)
    }

    fn start_clock(&mut self, created_at_ms: u64) {
        if let Some(clock) = &mut self.clock {
            clock.start(created_at_ms);
        }
    }

    fn has_clock(&self) -> bool {
        self.clock.is_some()
    }

    fn deadline(&self) -> Option<(Seat, u64)> {
        let clock = self.clock.as_ref()?;
        let seat = self.seat_to_act()?;
        Some((seat, clock.deadline_ms(seat)))
    }

    fn decision_started_ms(&self) -> Option<u64> {
        self.deadline()?;
        Some(self.clock.as_ref()?.decision_started_ms())
    }

    fn clock_state(&self, now_ms: u64) -> Option<pb::ClockState> {
        Some(self.clock.as_ref()?.state(self.seat_to_act(), now_ms))
    }

    fn view(&self, viewer: Viewer) -> pb::View {
        pb::View {
            game: Some(E::wrap_view(self.engine.view(viewer))),
        }
    }

    fn redact(&self, events: &[pb::Event], viewer: Viewer) -> Vec<pb::Event> {
        events
            .iter()
            .filter_map(|event| {
                if let Some(pb::event::Game::Table(table)) = &event.game {
                    return Some(table::redact_table_event::<E>(event, table, viewer));
                }
                // Not this game's event: it was never produced here, so nothing to show.
                let typed = event.game.as_ref().and_then(E::event_of)?;
                match E::redact_event(typed, viewer) {
                    // The wire event as it is: one copy, no unwrapping and wrapping again.
                    Redaction::Public => Some(event.clone()),
                    Redaction::Hidden => None,
                    Redaction::Replaced(redacted) => Some(wrap_event::<E>(redacted)),
                }
            })
            .collect()
    }

    fn redact_action(&self, action: &pb::Action, author: Seat, viewer: Viewer) -> pb::Action {
        // Table entries carry no secret: resigning, a timeout and an abort happen in the open.
        if let Some(pb::action::Game::Table(_)) = &action.game {
            return action.clone();
        }
        match action.game.as_ref().and_then(E::action_of) {
            Some(typed) => pb::Action {
                game: Some(E::wrap_action(E::redact_action(typed, author, viewer))),
            },
            // Not this game's action: it was never accepted, so there is nothing to hide, but
            // nothing to show either.
            None => pb::Action::default(),
        }
    }

    fn opening_events(&self) -> Vec<pb::Event> {
        self.engine
            .opening_events()
            .into_iter()
            .map(wrap_event::<E>)
            .collect()
    }

    fn encode(&self) -> Vec<u8> {
        // Serializing plain data into a Vec cannot fail; an empty encoding would only make
        // hashes disagree (and a snapshot be ignored), never corrupt a log.
        let bytes = STATE_FORMAT.to_vec();
        postcard::to_extend(&(&self.table, &self.engine), bytes)
            .and_then(|bytes| postcard::to_extend(&self.clock, bytes))
            .and_then(|bytes| postcard::to_extend(&self.seating, bytes))
            .and_then(|bytes| postcard::to_extend(&self.undo, bytes))
            .unwrap_or_default()
    }

    fn hashed_encoding(&self) -> Vec<u8> {
        let bytes = HASHED_STATE_FORMAT.to_vec();
        let hashed = postcard::to_extend(&(&self.table, &self.engine), bytes);
        let hashed = match &self.seating {
            None => hashed,
            Some(seating) => hashed.and_then(|bytes| postcard::to_extend(seating, bytes)),
        };
        match &self.undo {
            None => hashed,
            Some(undo) => hashed.and_then(|bytes| postcard::to_extend(undo, bytes)),
        }
        .unwrap_or_default()
    }

    fn clone_box(&self) -> Box<dyn GameState> {
        Box::new(self.clone())
    }

    fn bot_action(&self, seat: Seat, bot: &Bot, seed: &Seed) -> Result<pb::Action, BotError> {
        // The bot knows who left the table: it plays their default actions in its search as the
        // table will, and does not count on them winning.
        let departures = self.table.departures();
        let action = crate::bots::decide_at_table(&self.engine, seat, bot, seed, &departures)?;
        Ok(pb::Action {
            game: Some(E::wrap_action(action)),
        })
    }

    fn bot_to_act(&self, time_limit: Option<std::time::Duration>) -> Option<(Seat, Bot)> {
        let seat = self.seat_to_act()?;
        let bot = self.table.bot(seat)?;
        Some((seat, bot.bot(time_limit)))
    }

    fn is_bot_seat(&self, seat: Seat) -> bool {
        self.table.bot(seat).is_some()
    }

    fn has_open_seating(&self) -> bool {
        self.seating.is_some()
    }

    fn joined_token_hash(&self, seat: Seat) -> Option<[u8; 32]> {
        self.seating.as_ref()?.token_hash(seat).copied()
    }

    fn invitation_used(&self, invitation: u32) -> bool {
        self.seating
            .as_ref()
            .is_some_and(|seating| seating.invitation_used(invitation))
    }

    fn joined_players(&self) -> Vec<pb::Player> {
        let Some(seating) = &self.seating else {
            return Vec::new();
        };
        let mut players: Vec<pb::Player> = seating
            .joined()
            .iter()
            .map(|joined| pb::Player {
                seat: joined.seat,
                display_name: joined.display_name.clone(),
                external_id: joined.external_id.clone(),
            })
            .collect();
        players.sort_by_key(|player| player.seat);
        players
    }
}

/// One game this build hosts, as the [`registry`] lists it: the facts its engine states
/// ([`Engine::GAME_TYPE`]), its number on the wire, its rules version, and its default config.
#[derive(Clone, Copy, Debug)]
pub struct RegisteredGame {
    /// The engine's facts.
    pub game_type: GameType,
    /// The game's number on the wire.
    pub kind: pb::GameKind,
    /// The rules version new games get: the newest this build plays.
    pub rules_version: &'static str,
    /// The earlier rules versions this build still plays, oldest first
    /// ([`Engine::EARLIER_RULES_VERSIONS`]).
    pub earlier_rules_versions: &'static [&'static str],
    /// The game's case of `GameConfig.game` for a table of that many seats, options at their
    /// defaults ([`Engine::config_for`]).
    config_case: fn(u32) -> pb::game_config::Game,
}

impl RegisteredGame {
    /// The config of a table of `players` seats with every option at its default (a fixed seat
    /// count ignores `players`), and the table's settings unset.
    pub fn config(&self, players: u32) -> pb::GameConfig {
        pb::GameConfig {
            game: Some(self.config_case(players)),
            table: None,
        }
    }

    /// The game's case of `GameConfig.game` for a table of `players` seats, options at their
    /// defaults: for callers that set the table's settings themselves.
    pub fn config_case(&self, players: u32) -> pb::game_config::Game {
        (self.config_case)(players)
    }

    /// Every rules version this build plays the game by, oldest first (the newest last).
    pub fn rules_versions(&self) -> Vec<&'static str> {
        let mut versions = self.earlier_rules_versions.to_vec();
        versions.push(self.rules_version);
        versions
    }

    /// Whether this build plays the game under `rules_version`.
    pub fn plays(&self, rules_version: &str) -> bool {
        rules_version == self.rules_version || self.earlier_rules_versions.contains(&rules_version)
    }

    /// The entry as `ListGameTypes` answers it.
    pub fn to_pb(&self) -> pb::GameType {
        let facts = &self.game_type;
        pb::GameType {
            game: self.kind as i32,
            name: facts.name.to_owned(),
            display_name: facts.display_name.to_owned(),
            min_seats: facts.min_seats,
            max_seats: facts.max_seats,
            chance: match facts.chance {
                Chance::Deterministic => pb::ChanceMode::Deterministic,
                Chance::Seeded => pb::ChanceMode::Seeded,
            } as i32,
            information: match facts.information {
                Information::Perfect => pb::InformationKind::Perfect,
                Information::Imperfect => pb::InformationKind::Imperfect,
            } as i32,
            rules_version: self.rules_version.to_owned(),
            rules_versions: self
                .rules_versions()
                .into_iter()
                .map(str::to_owned)
                .collect(),
        }
    }
}

/// The hosted game of kind `kind`, if this build hosts it.
pub fn registered(kind: pb::GameKind) -> Option<&'static RegisteredGame> {
    registry().iter().find(|game| game.kind == kind)
}

/// A game name the [`registry`] does not know, or knows several games by.
#[derive(Debug, thiserror::Error)]
#[error("{name:?} is not a game{}: use {}", if *.ambiguous { " (it could be several)" } else { "" }, cli_names())]
pub struct UnknownGame {
    /// The name as given.
    pub name: String,
    /// True when it is the start of several games' names.
    pub ambiguous: bool,
}

/// Every hosted game's command-line name, in words: "a, b or c".
pub fn cli_names() -> String {
    let names: Vec<String> = registry()
        .iter()
        .map(|game| game.game_type.cli_name())
        .collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => String::new(),
    }
}

/// The hosted game a person names `name` (the command line): its name in any case, with dashes,
/// underscores, spaces or none between the words (`medici-vs-strozzi`, `La Strada`, `lastrada`),
/// or the start of exactly one game's name (`medici`).
pub fn find_game(name: &str) -> Result<&'static RegisteredGame, UnknownGame> {
    // Compared without separators or case, so a name is found however it is written.
    let squash = |text: &str| -> String {
        text.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let wanted = squash(name);
    let unknown = |ambiguous| UnknownGame {
        name: name.to_owned(),
        ambiguous,
    };
    if wanted.is_empty() {
        return Err(unknown(false));
    }
    if let Some(game) = registry()
        .iter()
        .find(|game| squash(game.game_type.name) == wanted)
    {
        return Ok(game);
    }
    let mut starting = registry()
        .iter()
        .filter(|game| squash(game.game_type.name).starts_with(&wanted));
    match (starting.next(), starting.next()) {
        (Some(game), None) => Ok(game),
        (Some(_), Some(_)) => Err(unknown(true)),
        (None, _) => Err(unknown(false)),
    }
}

/// Declares the hosted games: for each, its case of the generic wire `oneof`s (the Rust variant;
/// the proto field is named [`Engine::NAME`]), its engine and its [`pb::GameKind`], generating its [`HostedGame`] impl, its [`registry`] entry
/// and its arms in [`setup`], [`restore`] and [`rules_version`]. A line may carry attributes
/// (`#[cfg(feature = "…")]`) that apply to everything generated for it.
macro_rules! hosted_games {
    ($($(#[$attr:meta])* $case:ident => $engine:ty, $kind:expr;)+) => {
        $(
            $(#[$attr])*
            impl HostedGame for $engine {
                const KIND: pb::GameKind = $kind;
                // The generic oneofs' cases are named after the game (the registry test checks it).
                const WIRE_CASE: &'static str = <$engine as Engine>::NAME;

                fn wrap_config(config: Self::Config) -> pb::game_config::Game {
                    pb::game_config::Game::$case(config)
                }

                fn config_of(config: &pb::game_config::Game) -> Option<&Self::Config> {
                    #[allow(unreachable_patterns)]
                    match config { pb::game_config::Game::$case(c) => Some(c), _ => None }
                }

                fn action_of(action: &pb::action::Game) -> Option<&Self::Action> {
                    #[allow(unreachable_patterns)]
                    match action { pb::action::Game::$case(a) => Some(a), _ => None }
                }

                fn event_of(event: &pb::event::Game) -> Option<&Self::Event> {
                    #[allow(unreachable_patterns)]
                    match event { pb::event::Game::$case(e) => Some(e), _ => None }
                }

                fn wrap_action(action: Self::Action) -> pb::action::Game {
                    pb::action::Game::$case(action)
                }

                fn wrap_event(event: Self::Event) -> pb::event::Game {
                    pb::event::Game::$case(event)
                }

                fn wrap_view(view: Self::View) -> pb::view::Game {
                    pb::view::Game::$case(view)
                }
            }
        )+

        /// The games this build hosts, in the order of the `hosted_games!` invocation.
        pub fn registry() -> &'static [RegisteredGame] {
            static REGISTRY: &[RegisteredGame] = &[$(
                $(#[$attr])*
                RegisteredGame {
                    game_type: <$engine as Engine>::GAME_TYPE,
                    kind: $kind,
                    rules_version: <$engine as Engine>::RULES_VERSION,
                    earlier_rules_versions: <$engine as Engine>::EARLIER_RULES_VERSIONS,
                    config_case: |players| {
                        <$engine as HostedGame>::wrap_config(<$engine as Engine>::config_for(players))
                    },
                },
            )+];
            REGISTRY
        }

        /// The initial state of the game `config` selects, with randomness from `seed`, under the
        /// rules version `rules_version` (refused unless this build plays it), and its table as
        /// `config.table` says.
        pub fn setup_under(
            config: &pb::GameConfig,
            seed: &Seed,
            rules_version: &str,
        ) -> Result<Box<dyn GameState>, HostError> {
            let table = config.table.as_ref();
            let game = config.game.as_ref().ok_or(HostError::NoGame)?;
            $(
                $(#[$attr])*
                if let Some(c) = <$engine as HostedGame>::config_of(game) {
                    return Ok(Box::new(Hosted::<$engine>::set_up(c, table, seed, rules_version)?));
                }
            )+
            Err(HostError::NotHosted)
        }

        /// A state back from [`GameState::encode`]. A state of an older format is refused
        /// ([`HostError::Restore`]), never decoded as something it is not.
        pub fn restore(kind: pb::GameKind, bytes: &[u8]) -> Result<Box<dyn GameState>, HostError> {
            $(
                $(#[$attr])*
                if kind == $kind {
                    return Ok(Box::new(Hosted::<$engine>::decode(bytes)?));
                }
            )+
            Err(HostError::UnknownKind(kind))
        }

        /// `action` with its amount field set (see [`crate::games::LegalAction::Amount`]); a
        /// table entry, or an action of a game this build does not host, as it is.
        pub fn with_amount(action: &pb::Action, amount: u64) -> pb::Action {
            let Some(game) = action.game.as_ref() else {
                return action.clone();
            };
            $(
                $(#[$attr])*
                if let Some(a) = <$engine as HostedGame>::action_of(game) {
                    return pb::Action {
                        game: Some(<$engine as HostedGame>::wrap_action(
                            <$engine as Engine>::with_amount(a, amount),
                        )),
                    };
                }
            )+
            action.clone()
        }

        /// The kind of game `config` selects, if this build hosts it.
        pub fn kind_of(config: &pb::GameConfig) -> Option<pb::GameKind> {
            let game = config.game.as_ref()?;
            $(
                $(#[$attr])*
                if <$engine as HostedGame>::config_of(game).is_some() {
                    return Some($kind);
                }
            )+
            None
        }
    };
}

/// The initial state of the game `config` selects under its newest rules version (what a new game
/// gets unless told otherwise: see [`setup_under`]).
pub fn setup(config: &pb::GameConfig, seed: &Seed) -> Result<Box<dyn GameState>, HostError> {
    let kind = kind_of(config).ok_or(if config.game.is_none() {
        HostError::NoGame
    } else {
        HostError::NotHosted
    })?;
    let newest = rules_version(kind).ok_or(HostError::UnknownKind(kind))?;
    setup_under(config, seed, newest)
}

/// Checks that this build plays `kind` under `rules_version`: the one check behind setting a game
/// up, loading a stored game and verifying a log (docs/compatibility.md, *Rules versions*).
pub fn check_rules_version(kind: pb::GameKind, rules_version: &str) -> Result<(), HostError> {
    let game = registered(kind).ok_or(HostError::UnknownKind(kind))?;
    if game.plays(rules_version) {
        return Ok(());
    }
    Err(HostError::RulesVersion {
        game: game.game_type.name,
        asked: quoted_version(rules_version),
        played: game.rules_versions().join(", "),
    })
}

/// The rules version new games of `kind` get by default: the newest this build plays.
pub fn rules_version(kind: pb::GameKind) -> Option<&'static str> {
    registered(kind).map(|game| game.rules_version)
}

hosted_games! {
    MediciVsStrozzi => crate::games::medici_vs_strozzi::MediciVsStrozzi, pb::GameKind::MediciVsStrozzi;
    Strozzi => crate::games::strozzi::Strozzi, pb::GameKind::Strozzi;
    Manila => crate::games::manila::Manila, pb::GameKind::Manila;
    LaStrada => crate::games::la_strada::LaStrada, pb::GameKind::LaStrada;
    #[cfg(feature = "nim")] Nim => crate::games::nim::Nim, pb::GameKind::Nim;
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use prost::Message;
    use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor};

    use super::*;

    fn descriptor(name: &str) -> MessageDescriptor {
        DescriptorPool::decode(crate::proto::FILE_DESCRIPTOR_SET)
            .expect("descriptors")
            .get_message_by_name(name)
            .unwrap_or_else(|| panic!("no message {name}"))
    }

    /// True when `message`, encoded, sets the field of `message_name` called `field`.
    fn sets_field(message_name: &str, message: &impl Message, field: &str) -> bool {
        let descriptor = descriptor(message_name);
        let field = descriptor
            .get_field_by_name(field)
            .unwrap_or_else(|| panic!("{message_name} has no field {field}"));
        DynamicMessage::decode(descriptor, message.encode_to_vec().as_slice())
            .expect("decodes")
            .has_field(&field)
    }

    /// Each game's case of the generic `oneof`s is the field named after it, so `WIRE_CASE` (the
    /// first segment of the `amount_field` paths clients follow) and `GameType.name` name the
    /// right field: checked on its config and on an action it plays.
    #[test]
    fn each_game_is_the_oneof_case_named_after_it() {
        for game in registry() {
            let name = game.game_type.name;
            let config = game.config(game.game_type.min_seats);
            assert!(sets_field("tabula.v1.GameConfig", &config, name), "{name}");
            let state = setup(&config, &Seed::from_u64(1)).expect("sets up");
            let action = state.default_action().expect("the game has begun");
            assert!(sets_field("tabula.v1.Action", &action, name), "{name}");
            let view = state.view(Viewer::Spectator);
            assert!(sets_field("tabula.v1.View", &view, name), "{name}");
            assert_eq!(state.kind(), game.kind, "{name}");
        }
    }

    /// The seat counts each engine states are exactly those its setup accepts: every count in the
    /// range sets up a table of that many seats, and the counts just outside do not.
    #[test]
    fn stated_seat_ranges_are_what_setup_accepts() {
        for game in registry() {
            let facts = game.game_type;
            assert!(
                facts.min_seats >= 1 && facts.min_seats <= facts.max_seats,
                "{facts:?}"
            );
            for players in facts.seats() {
                let state = setup(&game.config(players), &Seed::from_u64(u64::from(players)))
                    .unwrap_or_else(|e| panic!("{} for {players}: {e}", facts.name));
                assert_eq!(state.seat_count(), players, "{}", facts.name);
            }
            for players in [facts.min_seats - 1, facts.max_seats + 1] {
                // A game with a fixed count has no `players` to refuse: its table keeps its size.
                if let Ok(state) = setup(&game.config(players), &Seed::from_u64(7)) {
                    assert_ne!(state.seat_count(), players, "{}", facts.name);
                }
            }
        }
    }

    /// A game stated deterministic ignores its seed; one stated seeded does not (two seeds set up
    /// different states).
    #[test]
    fn stated_chance_is_what_setup_does() {
        for game in registry() {
            let config = game.config(game.game_type.min_seats);
            let hashes: HashSet<[u8; 32]> = (0..4)
                .map(|seed| {
                    setup(&config, &Seed::from_u64(seed))
                        .expect("sets up")
                        .state_hash()
                })
                .collect();
            let expected = match game.game_type.chance {
                Chance::Deterministic => 1,
                Chance::Seeded => 4,
            };
            assert_eq!(hashes.len(), expected, "{}", game.game_type.name);
        }
    }

    #[test]
    fn registry_entries_are_distinct_and_agree_with_the_wire() {
        let games = registry();
        assert!(!games.is_empty());
        let names: HashSet<_> = games.iter().map(|game| game.game_type.name).collect();
        let kinds: HashSet<_> = games.iter().map(|game| game.kind).collect();
        assert_eq!(names.len(), games.len());
        assert_eq!(kinds.len(), games.len());
        for game in games {
            assert_ne!(game.kind, pb::GameKind::Unspecified);
            assert_eq!(registered(game.kind).map(|g| g.kind), Some(game.kind));
            assert_eq!(rules_version(game.kind), Some(game.rules_version));
            assert_eq!(
                kind_of(&game.config(game.game_type.min_seats)),
                Some(game.kind)
            );
            let wire = game.to_pb();
            assert_eq!(wire.name, game.game_type.name);
            assert_eq!(wire.game, game.kind as i32);
            assert_eq!(
                (wire.min_seats, wire.max_seats),
                (game.game_type.min_seats, game.game_type.max_seats)
            );
        }
        assert!(registered(pb::GameKind::Unspecified).is_none());
    }

    #[test]
    fn games_are_found_however_their_names_are_written() {
        let name = |text: &str| find_game(text).map(|game| game.game_type.name);
        assert_eq!(name("medici-vs-strozzi").ok(), Some("medici_vs_strozzi"));
        assert_eq!(name("medici_vs_strozzi").ok(), Some("medici_vs_strozzi"));
        assert_eq!(name("medici").ok(), Some("medici_vs_strozzi"));
        assert_eq!(name("Strozzi").ok(), Some("strozzi"));
        assert_eq!(name("la-strada").ok(), Some("la_strada"));
        assert_eq!(name("lastrada").ok(), Some("la_strada"));
        assert_eq!(name("La Strada").ok(), Some("la_strada"));
        assert_eq!(name("manila").ok(), Some("manila"));
        // "m" starts both Medici vs Strozzi and Manila.
        assert!(find_game("m").is_err_and(|error| error.ambiguous));
        let unknown = find_game("chess").expect_err("no chess here");
        assert!(!unknown.ambiguous);
        assert!(
            unknown.to_string().contains("medici-vs-strozzi"),
            "{unknown}"
        );
        assert!(find_game("").is_err());
        assert!(find_game("--").is_err());
    }
}
