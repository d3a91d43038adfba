//! Computer players for every game: a random bot and a search bot, generic over [`Engine`].
//!
//! Bots are engine-level like the games: no I/O, and no clock unless a time budget is asked for.
//! Given a state, the seat to decide for, a [`Bot`] and a seed, [`decide`] returns the move.
//! The hosting layer reaches them through [`crate::hosting::GameState::bot_action`], which wraps
//! the move as the generic wire action.
//!
//! - [`Bot::Random`] picks uniformly among the listed legal actions (and uniformly within an
//!   amount range), exactly like the random-play harness: the baseline.
//! - [`Bot::Search`] is information-set Monte Carlo tree search (`search.rs`): the single-observer
//!   variant with partially observable moves (SO-ISMCTS + POM) of Cowling, Powley and
//!   Whitehouse, "Information Set Monte Carlo Tree Search", IEEE Transactions on Computational
//!   Intelligence and AI in Games 4(2), 2012. Every iteration samples a *determinization* (a
//!   complete state the bot's seat cannot tell apart from the real one), descends one shared tree
//!   by UCT over the moves legal in that determinization, adds one node, plays the game out at
//!   random and credits every seat on the path with its own reward (its win share,
//!   `reward.rs`), so each node maximizes the reward of the seat that acts there. OpenSpiel's
//!   ISMCTS (`open_spiel/algorithms/is_mcts.cc`) is the same loop with nodes keyed by the acting
//!   player's information state; here the tree is keyed by the moves as the bot's seat sees them,
//!   which needs nothing from an engine beyond the [`Engine`] trait.
//!
//! # A bot knows only its seat's information set
//!
//! The search never looks at the real state except through
//! [`Engine::resample_hidden`]`(Viewer::Seat(seat), seed)`: every determinization, its root
//! included, is drawn from it with seeds from the bot's own generator. The engines make that
//! resampling a function of the seat's information and the seed only (they sort hidden pools
//! before shuffling them, so the true order cannot shine through), and the rest of the search is
//! a function of the determinizations and the bot's seed. So two states the seat cannot tell
//! apart get the same decision for the same bot seed; `tests.rs` checks exactly that for every
//! game over many states from seeded games, and that a bot which peeks is caught by the check.
//!
//! The random bot reads only the seat's legal actions, which the engine contract makes equal in
//! states the seat cannot tell apart (checked by the random-play harness).
//!
//! # Budgets and determinism
//!
//! The search's budget is a number of iterations ([`SearchSettings::iterations`]), optionally
//! cut short by a time limit ([`SearchSettings::time_limit`]). With the iteration budget alone
//! (the default) a decision is a pure function of the seat's information and the seed:
//! reproducible across machines, which tests and tournaments need. A time limit makes the
//! result depend on the machine's speed; the hosting layer can use it as a safety net.
//!
//! # Seats that left the table
//!
//! Hosting's table rules (`src/hosting/table.rs`) let a seat resign: it then ranks last and never
//! wins, and unless an operator handed it to a bot, the table plays the engine's default action
//! for it whenever it must decide. A search that ignored this would expect a resigned seat to
//! play at random and to win its share, and would misjudge the game. [`decide_at_table`] takes
//! the [`Departures`] (public: every viewer sees who resigned), and the search plays a departed
//! seat's default actions in its tree and rollouts exactly as the table would, and scores a
//! finished rollout with [`Engine::winners_among`] the seats still playing. A bot deciding *for*
//! a resigned seat (one handed to a bot) cannot win whatever it does, so it plays for the result
//! it would have had if it could still win: the rank among the seats still playing and itself.
//!
//! What the search does not model: opponents are assumed to play like the search itself
//! (UCT at their nodes, random in rollouts), and determinizations are drawn uniformly from the
//! engine's resampling, not weighted by how likely the opponents' past moves made them
//! (the "strategy fusion" and "non-locality" limits of determinization, Cowling et al. §II-C).

mod amounts;
mod random;
mod reward;
mod search;
#[cfg(test)]
mod tests;

use std::time::Duration;

use crate::games::{Engine, Seat, Seed};

pub use reward::rewards;
pub use search::{SearchOutcome, search, search_at_table};

/// Which computer player decides.
#[derive(Clone, Debug, PartialEq)]
pub enum Bot {
    /// Uniformly random legal moves: the baseline.
    Random,
    /// Information-set Monte Carlo tree search with these settings.
    Search(SearchSettings),
}

impl Default for Bot {
    /// The search bot at its default budget.
    fn default() -> Self {
        Bot::Search(SearchSettings::default())
    }
}

/// The search bot's budget and knobs.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchSettings {
    /// Iterations (determinization + descent + rollout) per decision. The deterministic budget.
    pub iterations: u32,
    /// Stop earlier once this much time has passed (the result then depends on the machine).
    pub time_limit: Option<Duration>,
    /// UCT's exploration constant `c` in `mean + c·√(ln available / visits)`; rewards lie in
    /// 0..=1, for which 0.7 (≈ 1/√2, Kocsis and Szepesvári's choice) is the usual value, and
    /// the one Cowling et al. use.
    pub exploration: f64,
    /// A rollout that has not ended after this many moves is scored as a tie among all seats
    /// (the engines end every game, so this only guards against an engine bug).
    pub max_rollout_actions: u32,
}

/// The default iteration budget. At 500 the search bot beats random bots far beyond the targets
/// in every game while a decision costs one core a few ms (Medici vs Strozzi) to a few tens of
/// ms (Manila, La Strada) at the median; README "Bots" has the measured figures
/// (`cargo bench --bench bot_strength`). Its cost is the rollouts, i.e. the engines' speed.
pub const DEFAULT_ITERATIONS: u32 = 500;

impl Default for SearchSettings {
    fn default() -> Self {
        SearchSettings {
            iterations: DEFAULT_ITERATIONS,
            time_limit: None,
            exploration: 0.7,
            max_rollout_actions: 20_000,
        }
    }
}

/// Why a bot could not decide.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BotError {
    /// The game is over: nobody decides anything.
    #[error("the game has ended")]
    GameOver,
    /// Another seat must act.
    #[error("seat {seat} cannot act now: seat {to_act} must act")]
    NotToAct {
        /// The seat the bot was asked to play.
        seat: Seat,
        /// The seat that must act.
        to_act: Seat,
    },
    /// The engine listed nothing for the seat that must act (a broken engine contract).
    #[error("seat {0} must act but the engine lists no legal action")]
    NoLegalAction(Seat),
    /// The engine refused a move it had listed as legal (a broken engine contract).
    #[error("the engine refused a listed move: {0}")]
    EngineRefused(String),
}

/// The move `bot` makes for `seat` in `state`, deciding only from what `seat` may know (see the
/// module docs); the same `seed` gives the same move in every state `seat` cannot tell apart.
/// Every seat is assumed still at the table; [`decide_at_table`] knows who left.
pub fn decide<E: Engine>(
    state: &E,
    seat: Seat,
    bot: &Bot,
    seed: &Seed,
) -> Result<E::Action, BotError> {
    decide_at_table(state, seat, bot, seed, &Departures::default())
}

/// [`decide`] at a table that some seats left (see "Seats that left the table" above).
pub fn decide_at_table<E: Engine>(
    state: &E,
    seat: Seat,
    bot: &Bot,
    seed: &Seed,
    departures: &Departures,
) -> Result<E::Action, BotError> {
    match bot {
        Bot::Random => random::decide(state, seat, seed),
        Bot::Search(settings) => {
            search_at_table(state, seat, settings, seed, departures).map(|outcome| outcome.action)
        }
    }
}

/// The seats that left the table, as the search must model them. Public information.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Departures {
    /// Seats that resigned or forfeited: they rank last and never win.
    pub resigned: Vec<Seat>,
    /// Of those, the seats whose default action the table plays whenever they must decide (all
    /// but those handed to a bot).
    pub playing_defaults: Vec<Seat>,
}

impl Departures {
    /// Whether the table plays `seat`'s default actions.
    pub fn plays_default(&self, seat: Seat) -> bool {
        self.playing_defaults.contains(&seat)
    }

    /// Whether nobody left.
    pub fn is_empty(&self) -> bool {
        self.resigned.is_empty()
    }
}

/// Checks that `seat` is the one to act in `state`.
fn check_turn<E: Engine>(state: &E, seat: Seat) -> Result<(), BotError> {
    match state.to_act() {
        None => Err(BotError::GameOver),
        Some(to_act) if to_act != seat => Err(BotError::NotToAct { seat, to_act }),
        Some(_) => Ok(()),
    }
}
