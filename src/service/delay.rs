//! Spectator delay (issue #30, item 4): a game may show spectators its state some moves, or some
//! time, behind (`TableConfig.spectator_delay`), so that a streamed game cannot be used to whisper
//! to a player. Every path a spectator reads goes through [`visible_version`]: GetView (current,
//! at a version, at least a version), Observe, ExportLog; error texts name only what is visible.
//! Seats see the game live, and once the game has ended everything is public at once.
//!
//! A spectator here is whoever sees the game as one: a caller without a seat token, and a
//! tenant's API key. Hiding works by version: a delayed spectator is served the game exactly as a
//! spectator saw it at the visible version, so whatever the hidden moves were, everything it
//! receives is the same (the tests resample them).

use super::cache::{Game, GameCache, decode_config};
use super::error::{ServiceError, ServiceResult};
use crate::games::Viewer;
use crate::store::LogEntry;

/// How many entries a time delay reads back at first, before reading the whole log.
const TIME_WINDOW: u64 = 256;

/// How far behind spectators see a running game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpectatorDelay {
    /// Entries hidden at the end of the log.
    pub moves: u64,
    /// Entries younger than this are hidden (by their server time).
    pub ms: u64,
}

impl SpectatorDelay {
    /// The delay of `game` for `viewer`: `None` for a seat, for a game shown live, and for a
    /// game that has ended (then everything is public).
    pub fn for_viewer(game: &Game, viewer: Viewer) -> Option<SpectatorDelay> {
        if viewer != Viewer::Spectator || game.is_finished() {
            return None;
        }
        let delay = decode_config(&game.meta).ok()?.table?.spectator_delay?;
        (delay.moves > 0 || delay.ms > 0).then_some(SpectatorDelay {
            moves: u64::from(delay.moves),
            ms: delay.ms,
        })
    }

    /// Whether `entry`, followed by `later` entries, is visible at `now_ms`.
    pub fn shows(&self, entry: &LogEntry, later: u64, now_ms: u64) -> bool {
        later >= self.moves && entry.server_time_ms.saturating_add(self.ms) <= now_ms
    }

    /// In words, for error texts.
    pub fn describe(&self) -> String {
        match (self.moves, self.ms) {
            (0, ms) => format!("{ms} ms"),
            (moves, 0) => format!("{moves} moves"),
            (moves, ms) => format!("{moves} moves and {ms} ms"),
        }
    }

    /// The refusal of a version a delayed spectator may not see yet: it names the delay, never
    /// the game's version.
    pub fn not_yet(&self, game_id: &str, version: u64) -> ServiceError {
        ServiceError::OutOfRange(format!(
            "spectators see game {game_id} {} behind while it runs: version {version} is not \
             visible to them yet (a seat sees it live; everything is public once the game ends)",
            self.describe()
        ))
    }
}

/// The version of `game` (the current one) that `viewer` may see at `now_ms`, and the delay that
/// applies (`None`: the game's own version).
pub async fn visible_version(
    cache: &GameCache,
    game: &Game,
    viewer: Viewer,
    now_ms: u64,
) -> ServiceResult<(u64, Option<SpectatorDelay>)> {
    let Some(delay) = SpectatorDelay::for_viewer(game, viewer) else {
        return Ok((game.version, None));
    };
    let by_moves = game.version.saturating_sub(delay.moves);
    if delay.ms == 0 || by_moves == 0 {
        return Ok((by_moves, Some(delay)));
    }
    // The newest entry at or before `by_moves` old enough to show: read back a window of the log,
    // then, if every entry in it is too young, the whole log.
    let cutoff = now_ms.saturating_sub(delay.ms);
    let mut from = by_moves.saturating_sub(TIME_WINDOW);
    loop {
        let entries = cache.entries_after(&game.meta.game_id, from).await?;
        let visible = entries
            .iter()
            .take_while(|entry| entry.version <= by_moves)
            .filter(|entry| entry.server_time_ms <= cutoff)
            .map(|entry| entry.version)
            .last();
        match visible {
            Some(version) => return Ok((version, Some(delay))),
            None if from == 0 => return Ok((0, Some(delay))),
            None => from = 0,
        }
    }
}
