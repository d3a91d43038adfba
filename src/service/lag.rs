//! When a move is in time (issue #24, item 7): the lag policy Act and the turn-clock sweeper
//! share.
//!
//! A move counts as in time when the replica it was sent to *received* it by the deadline plus
//! [`LAG_ALLOWANCE_MS`] (the network's share, as lichess compensates lag), however long it then
//! waited to be validated and appended; Act checks that time, not the time it gets to the move.
//! The sweeper logs no timeout before the deadline plus [`TIMEOUT_DELAY_MS`], which adds
//! [`COMMIT_GRACE_MS`] to the allowance: a move received in time has that long to be appended
//! before its timeout can overtake it. A move received later is refused, and the timeout follows.

/// How late after its deadline a move may reach a replica and still count as in time (see the
/// module docs): the network's share of a decision, measured at the replica's receipt.
pub const LAG_ALLOWANCE_MS: u64 = 250;

/// How long after the last moment a move counts as in time the server waits before it logs the
/// timeout: room for a move received in time to be validated and appended on a loaded replica,
/// behind a slow store round trip, or after a conflict and a catch-up.
pub const COMMIT_GRACE_MS: u64 = 1000;

/// How long after a deadline its timeout may be logged, at the earliest.
pub const TIMEOUT_DELAY_MS: u64 = LAG_ALLOWANCE_MS + COMMIT_GRACE_MS;
