//! What the core tells the workers that act on new entries: who proposed an entry ([`Proposer`]),
//! the game right after it ([`Commit`]), and the [`EntryObserver`] trait such a worker implements
//! (the bot workers, `bots.rs`). Beneath the core, which holds the observers (`tabula.rs`) and
//! calls them after every commit (`commit.rs`): neither the core nor the commit path names a
//! worker.

use super::cache::Game;

/// Who proposes an entry: what the effects after a commit may need to know of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Proposer {
    /// A seat's client, through Act.
    Player,
    /// The server itself: a timeout, an abort, a hand-over (as [`crate::hosting::SYSTEM_SEAT`]).
    Server,
    /// This replica's bot workers, for a seat a bot plays.
    Bot,
}

/// What one effect after a commit sees: the game right after the committed entry, and who
/// proposed it.
pub(super) struct Commit<'a> {
    /// The game at the committed entry's version.
    pub game: &'a Game,
    /// The game the entry was appended to (one version before `game`); `None` for a new game's
    /// entry 0.
    pub before: Option<&'a Game>,
    /// Who proposed the entry.
    pub proposer: Proposer,
}

/// A background worker that acts on a game's new entries (the bot workers, `bots.rs`), registered
/// with the core when the workers start (`Tabula::observe_entries`). The core calls it and
/// never names it: the workers build on the core, not the other way round.
pub(super) trait EntryObserver: Send + Sync {
    /// An entry this replica committed (or a game it created: its entry 0), with the game right
    /// after it. Must return at once: anything slow belongs in a task of its own.
    fn committed(&self, commit: &Commit<'_>);
    /// An entry another replica committed, learned of from the store's notifications (Observe
    /// streams follow them), with the game right after it. Must return at once.
    fn followed(&self, game: &Game);
}
