//! How the service hosts any game: the bridge between the generic wire messages
//! (`tabula.v1.Action`, `Event`, `View`, `GameConfig`, each a `oneof` over the games) and one
//! game's [`Engine`], behind the object-safe [`GameState`].
//!
//! Adding a game is one line in the `hosted_games!` invocation at the end of this file; nothing
//! else here changes.
//!
//! Beside each engine state the host keeps the game's [`table`]: who resigned, and whether the
//! table (a resignation, an abort) ended the game. Table entries are the same in every game.

mod clock;
mod table;

use sha2::{Digest, Sha256};

pub use clock::{CORRESPONDENCE_DAYS, MAX_INCREMENT_MS, MAX_LIMIT_MS, MIN_LIMIT_MS};
pub use table::{MAX_ABORT_REASON_LEN, MAX_BOT_ITERATIONS, SYSTEM_SEAT};

use crate::bots::{Bot, BotError};
use crate::games::{ActionError, ConfigError, Engine, LegalAction, Redaction, Seat, Seed, Viewer};
use crate::proto::v1 as pb;

/// The start of every encoded state ([`GameState::encode`]): the format of the encoding, the
/// table and the engine state, then the turn clock. A snapshot of an older format (the engine
/// state alone, before table entries existed; no bot seats, before those; no clock, before turn
/// clocks) lacks it and is ignored, and the game replayed from its log, instead of being decoded as something it is not.
const STATE_FORMAT: &[u8] = b"tabula-state/4:";

/// What the state hash covers: the table and the engine state, encoded as [`STATE_FORMAT`] does,
/// under the prefix of the format that had no clock. The clock is derived from the server times
/// logged with the entries, which the rules never read, so it is left out: a replay without
/// those times (VerifyLog) reaches the same hash, and hashes of games from before turn clocks
/// are unchanged.
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
    /// A stored snapshot does not decode as the game's state.
    #[error("cannot decode a {game} state: {reason}")]
    Restore {
        /// The game's [`Engine::NAME`].
        game: &'static str,
        /// The decoder's complaint.
        reason: String,
    },
}

/// An [`Engine`] whose messages are cases of the generic wire `oneof`s.
pub trait HostedGame: Engine {
    /// The game's number on the wire.
    const KIND: pb::GameKind;
    /// The proto name of the game's field in the generic `oneof`s (`Action.manila`, …): the
    /// first segment of every `LegalAction.amount_field` path.
    const WIRE_CASE: &'static str;
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
}

impl<E: HostedGame> Hosted<E> {
    /// The game `config` (this game's case) sets up, with randomness from `seed`.
    fn set_up(
        config: &E::Config,
        table: Option<&pb::TableConfig>,
        seed: &Seed,
    ) -> Result<Self, HostError> {
        let engine = E::setup(config, seed)?;
        let clock = clock::Clock::new(table, engine.seat_count())?;
        Ok(Hosted {
            table: table::Table::new(table, engine.seat_count())?,
            engine,
            clock,
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
        self.seat_to_act().is_none()
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
        if seat >= self.engine.seat_count() || self.is_finished() || resigned {
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
            return self.apply_table(seat, table);
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
        self.apply_move(seat, action)
    }

    fn apply_at(
        &mut self,
        seat: Seat,
        action: &pb::Action,
        server_time_ms: u64,
    ) -> Result<Vec<pb::Event>, ActionError> {
        let before = self.seat_to_act();
        let events = self.apply(seat, action)?;
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
            .unwrap_or_default()
    }

    fn hashed_encoding(&self) -> Vec<u8> {
        let bytes = HASHED_STATE_FORMAT.to_vec();
        postcard::to_extend(&(&self.table, &self.engine), bytes).unwrap_or_default()
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
}

/// Declares the hosted games: for each, the wire `oneof` case (its Rust variant and its proto
/// field name) and [`pb::GameKind`], generating its [`HostedGame`] impl and its arms in
/// [`setup`], [`restore`] and [`rules_version`].
macro_rules! hosted_games {
    ($($case:ident($wire_case:literal) => $engine:ty, $kind:expr;)+) => {
        $(
            impl HostedGame for $engine {
                const KIND: pb::GameKind = $kind;
                const WIRE_CASE: &'static str = $wire_case;

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

        /// The initial state of the game `config` selects, with randomness from `seed`, and its
        /// table as `config.table` says.
        pub fn setup(config: &pb::GameConfig, seed: &Seed) -> Result<Box<dyn GameState>, HostError> {
            let table = config.table.as_ref();
            match config.game.as_ref().ok_or(HostError::NoGame)? {
                $(pb::game_config::Game::$case(c) => {
                    Ok(Box::new(Hosted::<$engine>::set_up(c, table, seed)?))
                })+
            }
        }

        /// A state back from [`GameState::encode`]. A state of an older format is refused
        /// ([`HostError::Restore`]), never decoded as something it is not.
        pub fn restore(kind: pb::GameKind, bytes: &[u8]) -> Result<Box<dyn GameState>, HostError> {
            $(if kind == $kind {
                return Ok(Box::new(Hosted::<$engine>::decode(bytes)?));
            })+
            Err(HostError::UnknownKind(kind))
        }

        /// The rules version this build plays `kind` by.
        pub fn rules_version(kind: pb::GameKind) -> Option<&'static str> {
            $(if kind == $kind { return Some(<$engine as Engine>::RULES_VERSION); })+
            None
        }

        /// `action` with its amount field set (see [`crate::games::LegalAction::Amount`]).
        pub fn with_amount(action: &pb::Action, amount: u64) -> pb::Action {
            match action.game.as_ref() {
                $(Some(pb::action::Game::$case(a)) => pb::Action {
                    game: Some(pb::action::Game::$case(<$engine as Engine>::with_amount(a, amount))),
                },)+
                Some(pb::action::Game::Table(_)) | None => action.clone(),
            }
        }

        /// The kind of game `config` selects.
        pub fn kind_of(config: &pb::GameConfig) -> Option<pb::GameKind> {
            match config.game.as_ref()? {
                $(pb::game_config::Game::$case(_) => Some($kind),)+
            }
        }
    };
}

hosted_games! {
    MediciVsStrozzi("medici_vs_strozzi") => crate::games::medici_vs_strozzi::MediciVsStrozzi, pb::GameKind::MediciVsStrozzi;
    Strozzi("strozzi") => crate::games::strozzi::Strozzi, pb::GameKind::Strozzi;
    Manila("manila") => crate::games::manila::Manila, pb::GameKind::Manila;
    LaStrada("la_strada") => crate::games::la_strada::LaStrada, pb::GameKind::LaStrada;
}

#[cfg(test)]
mod tests {
    use prost::Message;
    use prost_reflect::{DescriptorPool, DynamicMessage};

    use super::*;

    /// `WIRE_CASE` names the field of `tabula.v1.Action` that carries `E`'s actions, so the
    /// `amount_field` paths clients follow start at the right field.
    fn assert_wire_case<E: HostedGame>() {
        let pool = DescriptorPool::decode(crate::proto::FILE_DESCRIPTOR_SET).expect("descriptors");
        let descriptor = pool
            .get_message_by_name("tabula.v1.Action")
            .expect("tabula.v1.Action");
        let field = descriptor
            .get_field_by_name(E::WIRE_CASE)
            .unwrap_or_else(|| panic!("tabula.v1.Action has no field {}", E::WIRE_CASE));
        let action = pb::Action {
            game: Some(E::wrap_action(E::Action::default())),
        };
        let dynamic =
            DynamicMessage::decode(descriptor, action.encode_to_vec().as_slice()).expect("decodes");
        assert!(
            dynamic.has_field(&field),
            "{} is not {}'s case",
            E::WIRE_CASE,
            E::NAME
        );
    }

    #[test]
    fn wire_cases_name_the_action_fields() {
        assert_wire_case::<crate::games::medici_vs_strozzi::MediciVsStrozzi>();
        assert_wire_case::<crate::games::strozzi::Strozzi>();
        assert_wire_case::<crate::games::manila::Manila>();
        assert_wire_case::<crate::games::la_strada::LaStrada>();
    }
}
