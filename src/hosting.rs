//! How the service hosts any game: the bridge between the generic wire messages
//! (`tabula.v1.Action`, `Event`, `View`, `GameConfig`, each a `oneof` over the games) and one
//! game's [`Engine`], behind the object-safe [`GameState`].
//!
//! Adding a game takes one line in the `hosted_games!` invocation in `hosting/registry.rs` (nothing
//! else here changes), besides its own folder, proto file and oneof cases (ARCHITECTURE.md). The
//! same line enters the game in the [`fn@registry`], from which the command line, the service's
//! `ListGameTypes`, tests and benchmarks learn which games there are.
//!
//! Beside each engine state the host keeps the game's `table`: who resigned, and whether the
//! table (a resignation, an abort) ended the game. Table entries are the same in every game.

mod clock;
mod hosted;
mod registry;
mod seating;
mod table;
mod undo;

use sha2::{Digest, Sha256};

pub use clock::{CORRESPONDENCE_DAYS, MAX_INCREMENT_MS, MAX_LIMIT_MS, MIN_LIMIT_MS};
pub use registry::{
    RegisteredGame, UnknownGame, check_rules_version, cli_names, find_game, kind_of, registered,
    registry, restore, rules_version, setup, setup_under, with_amount,
};
pub use table::{MAX_ABORT_REASON_LEN, MAX_BOT_ITERATIONS, SYSTEM_SEAT};

use hosted::Hosted;

use crate::bots::{Bot, BotError};
use crate::games::{ActionError, ConfigError, Engine, Seat, Seed, Viewer};
use crate::proto::v1 as pb;

/// A random move of the seat to act in `state`, picked among its listed legal actions (an
/// amount, where the entry takes one, drawn from its range): the tests' random play through
/// the hosting layer.
#[cfg(test)]
pub(crate) fn random_legal_move(
    state: &dyn GameState,
    rng: &mut crate::games::common::GameRng,
) -> (Seat, pb::Action) {
    let seat = state.status().to_act.expect("someone acts");
    let legal = state.legal_actions(Viewer::Seat(seat));
    let entry = &legal[rng.index(legal.len())];
    let listed = entry
        .action
        .as_ref()
        .expect("a listed entry has its action");
    let action = match &entry.amount_range {
        Some(range) => with_amount(listed, range.min + rng.below(range.max - range.min + 1)),
        None => listed.clone(),
    };
    (seat, action)
}

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
    /// How sentences name this game's seats, given its `players` (`crate::narration::Names`).
    fn names(&self, players: &[pb::Player]) -> crate::narration::Names;
    /// `event`, as a viewer received it (redacted), in English sentences; `None` when it adds
    /// nothing to the log (`crate::narration`).
    fn event_text(&self, event: &pb::Event, names: &crate::narration::Names) -> Option<String>;
    /// Sets the label of each of `legal`, the legal actions of `viewer`, as that seat's view of
    /// the game says them (`crate::narration::Narrate::choice_label`).
    fn label_legal_actions(
        &self,
        viewer: Viewer,
        legal: &mut [pb::LegalAction],
        names: &crate::narration::Names,
    );
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

/// An [`Engine`] whose messages are cases of the generic wire `oneof`s.
pub trait HostedGame: Engine + crate::narration::Narrate {
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
