//! The game engines: pure, deterministic rules with no I/O, no clock and no global RNG.
//!
//! Every game has the same shape (after OpenSpiel's game API and boardgame.io's setup / moves /
//! `playerView` split), described by [`Engine`]:
//! - [`Engine::setup`] builds the initial state from a typed config and a 256-bit [`Seed`]; the
//!   seeded RNG lives inside the state, so `state = fold(apply, setup(config, seed), actions)`
//!   exactly, on every replica;
//! - [`Engine::to_act`] names the seat that must act, [`Engine::legal_actions`] lists everything it
//!   may do;
//! - [`Engine::apply`] validates and applies one action, returning the events it produced or a
//!   typed error naming the rule (spec section) that forbids it; a rejected action leaves the state
//!   untouched;
//! - [`Engine::view`] and [`Engine::redact_event`] give each viewer only what it may see (an event
//!   is [`Redaction::Public`], [`Redaction::Hidden`] or [`Redaction::Replaced`] for a viewer, so
//!   the service passes public events on as they are);
//! - [`Engine::outcome`] reports scores and winners once the game is over.
//!
//! The action, event, view and config types are the game's protobuf messages (`proto/`), so what
//! the engine speaks is exactly what clients and the log see; the state itself is plain Rust.
//!
//! # One shape for every game
//!
//! Every game folder `src/games/<game>/` is laid out the same way, so a newcomer finds any rule in
//! the same place in each:
//!
//! | file | holds |
//! | --- | --- |
//! | `mod.rs` | the state, setup and the [`Engine`] impl (the only `pub` surface) |
//! | `rules.rs` or `rules/` | the moves: legal-action listing, validation and effects, split by spec section when long (`rules/auction.rs`, `rules/dice.rs`, …); every refusal cites its section |
//! | `view.rs` | views and per-viewer redaction of events and actions |
//! | `wire.rs` | protobuf conversions (`to_pb` / `from_pb`) and the `event` builder |
//! | `invariants.rs` | the spec's invariants, checked after every random-play action |
//! | `scoring.rs` | scores, ranking and the outcome |
//! | `data.rs` (+ `*.json`) | component data: bundled with `include_str!`, parsed and validated once into a `LazyLock<Result<_, String>>` (setup refuses a game with a [`ConfigError`] if the data is unusable, never a panic), checked by a test that the bundled data loads; provisional values are labelled as such |
//! | `tests/` | tests by topic: the spec's worked examples, illegal moves, hidden information, random play, …, sharing `common::testing` |
//!
//! Submodules are private; modules of one game import each other in one direction only (the wire
//! and data layers below the rules, the view beside them).

pub mod common;
pub mod la_strada;
pub mod manila;
pub mod medici_vs_strozzi;
#[cfg(feature = "nim")]
pub mod nim;
pub mod strozzi;

use serde::{Serialize, de::DeserializeOwned};

/// A game's facts, the same whatever its config (after OpenSpiel's `GameType`): each engine states
/// them once, as [`Engine::GAME_TYPE`], and everything that lists or describes games (the command
/// line, the web client's game list through the service, tests and benchmarks) reads them from
/// there rather than restating them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameType {
    /// Stable identifier in snake case, e.g. `medici_vs_strozzi`: the game's proto package
    /// (`tabula.<name>.v1`) and its case of the generic `oneof`s. The command line takes it with
    /// dashes (see [`GameType::cli_name`]).
    pub name: &'static str,
    /// The name people read, e.g. "Medici vs Strozzi".
    pub display_name: &'static str,
    /// The fewest seats a table may have.
    pub min_seats: u32,
    /// The most seats a table may have (equal to `min_seats` for a fixed count).
    pub max_seats: u32,
    /// Whether chance plays a part.
    pub chance: Chance,
    /// Whether some seat may hold what another may not see.
    pub information: Information,
}

impl GameType {
    /// The seat counts a table of this game may have.
    pub fn seats(&self) -> std::ops::RangeInclusive<u32> {
        self.min_seats..=self.max_seats
    }

    /// The name the command line takes: [`GameType::name`] with dashes (`medici-vs-strozzi`).
    pub fn cli_name(&self) -> String {
        self.name.replace('_', "-")
    }
}

/// Whether chance plays a part in a game (OpenSpiel's `ChanceMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chance {
    /// No randomness at all: the config alone decides the initial state, and the seed is unused.
    Deterministic,
    /// Shuffles, draws and dice, all derived from the game's seed (see [`Seed`]).
    Seeded,
}

/// Whether a game hides anything from some seats (OpenSpiel's `Information`). What chance has not
/// yet revealed (a deck's order, future dice) is hidden from everyone alike and does not count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Information {
    /// Every seat and every spectator sees the whole state.
    Perfect,
    /// Some seat may hold what others may not see (in every game, or under some of its options):
    /// views and events are redacted per viewer.
    Imperfect,
}

/// A player's place at the table, numbered from 0 clockwise.
pub type Seat = u32;

/// Who is looking at the game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Viewer {
    /// A player, who also sees its own private information.
    Seat(Seat),
    /// Sees public information only.
    Spectator,
    /// Sees what every seat sees, together: each seat's private information (hands, hidden
    /// money, face-down shares), but still not what no seat knows (the deck's, bag's and dice's
    /// future, the RNG). The view of a game's host reviewing a running game (the operator's
    /// unredacted export); no seat and no spectator ever gets it.
    AllSeats,
}

impl Viewer {
    /// True when this viewer is allowed to see `seat`'s private information.
    pub fn is(&self, seat: Seat) -> bool {
        match self {
            Viewer::Seat(s) => *s == seat,
            Viewer::Spectator => false,
            Viewer::AllSeats => true,
        }
    }
}

/// The 256-bit seed a game's randomness is derived from.
#[derive(Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Seed(pub [u8; 32]);

impl std::fmt::Debug for Seed {
    // Never print a seed by accident (logs, panics): it would reveal every future draw.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Seed(<hidden>)")
    }
}

/// One entry of a legal-action listing.
#[derive(Clone, Debug, PartialEq)]
pub enum LegalAction<A> {
    /// Exactly this action is legal.
    Exact(A),
    /// `action` is legal with its amount (see [`Engine::with_amount`], in the field
    /// [`Engine::amount_field`] names) set to any value in `min..=max`; `action` itself carries
    /// `min`.
    Amount {
        /// The action, with its amount set to `min`.
        action: A,
        /// The smallest legal amount.
        min: u64,
        /// The largest legal amount.
        max: u64,
    },
}

/// What one viewer may see of one event: the answer of [`Engine::redact_event`].
///
/// Most events are public to most viewers, so redaction says so instead of returning a copy: the
/// service then passes the event it already holds on unchanged, and builds a new one only where
/// something must be blanked.
#[derive(Clone, Debug, PartialEq)]
pub enum Redaction<E> {
    /// The event as it is: nothing in it is hidden from this viewer.
    Public,
    /// Nothing at all: this viewer must not learn that the event happened.
    Hidden,
    /// This copy of the event, with what the viewer may not see blanked or left out.
    Replaced(E),
}

impl<E: Clone> Redaction<E> {
    /// What the viewer receives of `event` under this redaction: `event` itself (copied), nothing,
    /// or the replacement.
    pub fn seen(self, event: &E) -> Option<E> {
        match self {
            Redaction::Public => Some(event.clone()),
            Redaction::Hidden => None,
            Redaction::Replaced(replacement) => Some(replacement),
        }
    }
}

/// The result of a finished game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Final score per seat (index = seat).
    pub scores: Vec<i64>,
    /// Winning seats; several when the rules share the victory.
    pub winners: Vec<Seat>,
}

/// Why an action was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ActionError {
    /// The action is not well formed for this game (missing fields, unknown ids): a client bug.
    #[error("malformed action: {0}")]
    Malformed(String),
    /// It is not this seat's turn.
    #[error("not your turn: seat {seat} tried to act but {expected} must act ({rule})")]
    NotYourTurn {
        /// The seat that tried to act.
        seat: Seat,
        /// Who must act instead, in words ("seat 2", "the auction's high bidder").
        expected: String,
        /// The spec section that says whose turn it is.
        rule: &'static str,
    },
    /// The game is over; nothing more can be done.
    #[error("the game has ended")]
    GameOver,
    /// The action is well formed but the rules forbid it now.
    #[error("{message} ({rule})")]
    Illegal {
        /// The spec section that forbids it, e.g. `"§4.2"`.
        rule: &'static str,
        /// Why, for the client's developer.
        message: String,
    },
}

impl ActionError {
    /// An illegal move, citing the rule (spec section) that forbids it.
    pub fn illegal(rule: &'static str, message: impl Into<String>) -> Self {
        ActionError::Illegal {
            rule,
            message: message.into(),
        }
    }

    /// A malformed action (missing fields, unknown ids): a client bug, not a rules question.
    pub fn malformed(message: impl Into<String>) -> Self {
        ActionError::Malformed(message.into())
    }
}

/// Why a config was refused at setup.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid config: {0}")]
pub struct ConfigError(pub String);

/// A game's rules. See the module docs for the contract every game keeps.
pub trait Engine:
    std::fmt::Debug + Clone + Serialize + DeserializeOwned + Send + Sync + 'static
{
    /// The options chosen at creation (the game's `Config` message).
    type Config: prost::Message + std::fmt::Debug + Clone + Default + PartialEq;
    /// One move (the game's `Action` message).
    type Action: prost::Message + std::fmt::Debug + Clone + Default + PartialEq;
    /// Something a move made happen (the game's `Event` message).
    type Event: prost::Message + std::fmt::Debug + Clone + Default + PartialEq;
    /// The state as one viewer may see it (the game's `View` message).
    type View: prost::Message + std::fmt::Debug + Clone + Default + PartialEq;

    /// The game's facts (names, seat counts, chance and information): see [`GameType`].
    const GAME_TYPE: GameType;
    /// Stable identifier, e.g. `medici_vs_strozzi`: [`GameType::name`].
    const NAME: &'static str = Self::GAME_TYPE.name;
    /// The newest rules version: what new games get. Recorded in every log. A change that alters
    /// what an existing log replays to (a listing, an effect, a view, an outcome, a default
    /// option) is a new version, and the one before moves to [`Engine::EARLIER_RULES_VERSIONS`]
    /// (docs/compatibility.md, *Rules versions*).
    const RULES_VERSION: &'static str;
    /// The earlier rules versions this build still plays, oldest first: a game is always replayed
    /// and continued under the version it was created with, so a version stays here until no
    /// stored or archived game uses it. Empty for a game whose rules never changed.
    const EARLIER_RULES_VERSIONS: &'static [&'static str] = &[];

    /// The config of a table of `players` seats (within [`GameType::seats`]) with every option at
    /// its default: what a tool that knows no game's options (the command line, the load
    /// generator, tests over every game) creates. A game with a fixed seat count ignores `players`.
    fn config_for(players: u32) -> Self::Config;

    /// The initial state for `config`, with all randomness derived from `seed`, under the newest
    /// rules ([`Engine::RULES_VERSION`]).
    fn setup(config: &Self::Config, seed: &Seed) -> Result<Self, ConfigError>;

    /// The initial state under the rules version `rules_version`, one of [`Engine::RULES_VERSION`]
    /// and [`Engine::EARLIER_RULES_VERSIONS`] (the hosting layer checks that first). A game with
    /// earlier versions overrides this and keeps, in its state, whatever its rules must still
    /// tell apart; the default serves a game with one version.
    fn setup_under(
        rules_version: &str,
        config: &Self::Config,
        seed: &Seed,
    ) -> Result<Self, ConfigError> {
        debug_assert_eq!(rules_version, Self::RULES_VERSION);
        Self::setup(config, seed)
    }

    /// How many seats the table has.
    fn seat_count(&self) -> u32;

    /// The seat that must act now; `None` once the game is over.
    fn to_act(&self) -> Option<Seat>;

    /// Every action `seat` may take now (empty when it is not its turn). Complete: anything
    /// [`Engine::apply`] accepts from `seat` is covered by an entry, or is another spelling of a
    /// listed move with the very same effect (kept accepted for older logs, such as Medici vs
    /// Strozzi's loading of a docked ship without its harbour). Each move is listed once: no two
    /// entries have the same effect (a client shows one button per entry;
    /// `common::distinct_moves` checks it for every game).
    fn legal_actions(&self, seat: Seat) -> Vec<LegalAction<Self::Action>>;

    /// `action` with its amount field set to `amount` (for [`LegalAction::Amount`]); actions
    /// without an amount are returned unchanged.
    fn with_amount(action: &Self::Action, amount: u64) -> Self::Action;

    /// Where [`Engine::with_amount`] puts the amount of `action`: the path of proto field names
    /// from the game's `Action` message, dot-separated (`"bid.price"`); `None` for actions without
    /// an amount. Clients receive it, prefixed with the game's case of the generic `Action`, as
    /// `LegalAction.amount_field`, so that a generic client can set the amount without knowing
    /// the game.
    fn amount_field(action: &Self::Action) -> Option<&'static str> {
        let _ = action;
        None
    }

    /// Validates and applies `action` by `seat`. On error the state is unchanged.
    fn apply(&mut self, seat: Seat, action: &Self::Action)
    -> Result<Vec<Self::Event>, ActionError>;

    /// Whether `seat` may take back its move `action` from this state on its own, under a table's
    /// undo policy (issue #30, Board Game Arena's: no random draw and no hidden information
    /// revealed since). By default exactly the moves that leave what nobody knows untouched
    /// ([`Engine::same_undisclosed`]) and show no viewer anything it could not know, proved by
    /// resampling what each viewer cannot see ([`common::takeback::reveals_nothing`]); a game
    /// overrides it only to forbid more.
    fn may_take_back(&self, seat: Seat, action: &Self::Action) -> bool {
        common::takeback::reveals_nothing(self, seat, action)
    }

    /// Whether `other` holds the same undisclosed information as this state: what no viewer may
    /// know while the game runs, apart from each seat's own secrets. That is the RNG (every
    /// future die roll, draw and shuffle) and the order of every face-down deck, bag or stack. A
    /// move after which it differs drew something or turned something up, so its seat never takes
    /// it back alone ([`Engine::may_take_back`]). Exact where resampling is only likely: the draw
    /// of a tile of which the bag holds many alike changes the RNG's position every time, while a
    /// resampled bag may well yield the same tile.
    fn same_undisclosed(&self, other: &Self) -> bool;

    /// The state as `viewer` may see it: never anything hidden from that viewer.
    fn view(&self, viewer: Viewer) -> Self::View;

    /// What `viewer` may see of `event`: all of it ([`Redaction::Public`]), none of it
    /// ([`Redaction::Hidden`]) or a copy with the secrets blanked ([`Redaction::Replaced`]).
    fn redact_event(event: &Self::Event, viewer: Viewer) -> Redaction<Self::Event>;

    /// `action`, taken by `author`, as `viewer` may see it while the game runs. Actions are public
    /// unless a game says otherwise: an action can carry what only its author knows (Manila's
    /// mortgaged share is turned face down, so its ware is blanked for everyone else).
    fn redact_action(action: &Self::Action, author: Seat, viewer: Viewer) -> Self::Action {
        let _ = (author, viewer);
        action.clone()
    }

    /// What setup did, as events (the opening round started, the first card revealed, ...), so a
    /// client that animates from events sees the start of the game. Called on the state
    /// [`Engine::setup`] just returned; redacted per viewer with [`Engine::redact_event`] like any
    /// other event. Empty by default.
    fn opening_events(&self) -> Vec<Self::Event> {
        Vec::new()
    }

    /// Scores and winners once the game is over.
    fn outcome(&self) -> Option<Outcome>;

    /// One uniformly random legal action of `seat`, drawn with `rng` exactly as
    /// [`common::random_play::choose_action`] draws from [`Engine::legal_actions`] (an entry
    /// uniformly, then an amount uniformly within its range): the same `rng` state gives the same
    /// action and leaves `rng` in the same state. `None` when `seat` has no legal action.
    ///
    /// Random play (bot rollouts, the random-play harness and benchmark) draws thousands of
    /// actions per decision and needs only one of them, so an engine whose listing is costly to
    /// build (La Strada lists every road) overrides this to draw without materialising the
    /// listing. The random-play harness checks that both draws agree at every checked action.
    fn random_action(&self, seat: Seat, rng: &mut common::GameRng) -> Option<Self::Action> {
        let legal = self.legal_actions(seat);
        (!legal.is_empty()).then(|| common::random_play::choose_action::<Self>(&legal, rng))
    }

    /// The action played for the seat to act when it does not choose itself (it ran out of time,
    /// or it resigned from a game that goes on without it): the spec's most passive legal choice
    /// (pass, decline, end the turn, the lowest amount), listed per game in
    /// `docs/rules/<game>.md` under "Default actions". `None` once the game is over.
    ///
    /// It must be legal (an entry of [`Engine::legal_actions`] for the seat to act, with an
    /// amount, the entry's minimum); it must depend only on what every viewer sees, since the
    /// table watches it being played; and a game in which every seat always plays it must end.
    /// The random-play harness checks all three.
    fn default_action(&self) -> Option<Self::Action>;

    /// The winners of a finished game when only `candidates` may win (the others resigned): the
    /// best of them by the game's ranking and tie-breaks, several when the rules share the victory.
    /// Empty before the end or when `candidates` is. By default the highest scores among
    /// `candidates`; games with tie-breaks override it.
    fn winners_among(&self, candidates: &[Seat]) -> Vec<Seat> {
        let Some(outcome) = self.outcome() else {
            return Vec::new();
        };
        let score = |seat: &Seat| outcome.scores.get(*seat as usize).copied();
        common::top_group(candidates, |a, b| score(a).cmp(&score(b)))
    }

    /// A state `viewer` cannot tell apart from this one: everything hidden from `viewer` (the RNG's
    /// future, deck and bag order, other seats' secrets) is redrawn from `seed`. Tests use it to
    /// prove that views depend on nothing hidden (OpenSpiel's "resample from infostate").
    fn resample_hidden(&self, viewer: Viewer, seed: &Seed) -> Self;

    /// The spec's invariants for this state; random-play tests check them after every action.
    fn check_invariants(&self) -> Result<(), String>;
}

impl Seed {
    /// A seed spread from a small number: for tests, benchmarks and reproducible tournaments.
    pub fn from_u64(n: u64) -> Seed {
        let mut bytes = [0u8; 32];
        for (i, chunk) in bytes.chunks_mut(8).enumerate() {
            let word = n
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .rotate_left(i as u32 * 16)
                ^ i as u64;
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        Seed(bytes)
    }
}
