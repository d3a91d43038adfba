//! Per-game announcement of appended entries, shared by every observer on this replica.
//!
//! One `broadcast` channel per observed game, created by the first subscriber and dropped when the
//! last one leaves. The channel is bounded: an observer that falls behind is told it lagged and
//! re-reads what it missed from the store, so a slow client never grows memory or holds others back.

use parking_lot::Mutex;
use std::collections::HashMap;

use tokio::sync::broadcast;

use super::LogEntry;

/// How many entries a feed buffers for its slowest receiver before that receiver lags.
pub const FEED_CAPACITY: usize = 256;

/// Per-game broadcast feeds of appended entries, shared by the observers on this replica.
pub struct Feeds {
    channels: Mutex<HashMap<String, broadcast::Sender<LogEntry>>>,
    capacity: usize,
}

impl Default for Feeds {
    fn default() -> Self {
        Feeds::with_capacity(FEED_CAPACITY)
    }
}

impl Feeds {
    /// Feeds that buffer `capacity` entries (at least 1) for their slowest receiver.
    pub fn with_capacity(capacity: usize) -> Self {
        Feeds {
            channels: Mutex::default(),
            capacity: capacity.max(1),
        }
    }

    /// Subscribes to `game_id`'s feed. Returns the receiver and, when this call created the feed,
    /// its sender, so the caller can start whatever fills it (the Redis store subscribes to the
    /// game's announcements).
    pub fn subscribe(
        &self,
        game_id: &str,
    ) -> (
        broadcast::Receiver<LogEntry>,
        Option<broadcast::Sender<LogEntry>>,
    ) {
        let mut channels = self.channels.lock();
        if let Some(sender) = channels.get(game_id)
            && sender.receiver_count() > 0
        {
            return (sender.subscribe(), None);
        }
        let (sender, receiver) = broadcast::channel(self.capacity);
        channels.insert(game_id.to_owned(), sender.clone());
        (receiver, Some(sender))
    }

    /// Announces `entry` to the game's subscribers on this replica, if it has any.
    pub fn publish(&self, game_id: &str, entry: &LogEntry) {
        let channels = self.channels.lock();
        if let Some(sender) = channels.get(game_id) {
            // No receivers is fine: nobody is watching.
            let _ = sender.send(entry.clone());
        }
    }

    /// Drops `game_id`'s feed if nobody listens any more; true when it was dropped (or absent).
    pub fn release_if_unused(&self, game_id: &str, sender: &broadcast::Sender<LogEntry>) -> bool {
        let mut channels = self.channels.lock();
        if sender.receiver_count() > 0 {
            return false;
        }
        if channels
            .get(game_id)
            .is_some_and(|current| current.same_channel(sender))
        {
            channels.remove(game_id);
        }
        true
    }

    /// Closes `game_id`'s feed (if `sender` is still its sender): once the caller drops `sender`,
    /// every receiver sees `Closed` after the entries already sent. The next subscriber starts a
    /// new feed.
    pub fn close(&self, game_id: &str, sender: &broadcast::Sender<LogEntry>) {
        let mut channels = self.channels.lock();
        if channels
            .get(game_id)
            .is_some_and(|current| current.same_channel(sender))
        {
            channels.remove(game_id);
        }
    }
}

/// What a stream following a game makes of what its feed brought, at `version` (the last entry
/// it has): the same rule for every follower (Observe, a delayed spectator's Observe, Play).
#[derive(Debug)]
pub enum FeedStep {
    /// An entry the follower already has (a feed may bring one twice, or one it read from the
    /// store meanwhile): nothing to do.
    Stale,
    /// The entry right after `version`: follow it.
    Next(LogEntry),
    /// A gap or a lag: what the follower missed is in the store, in order.
    Missed,
}

impl FeedStep {
    /// Classifies `received` for a follower at `version`; a closed feed is an error (its game can
    /// no longer be followed on this replica, and the client should resume elsewhere).
    pub fn of(
        received: Result<LogEntry, broadcast::error::RecvError>,
        version: u64,
    ) -> Result<FeedStep, super::StoreError> {
        match received {
            Ok(entry) if entry.version <= version => Ok(FeedStep::Stale),
            Ok(entry) if entry.version == version + 1 => Ok(FeedStep::Next(entry)),
            Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => Ok(FeedStep::Missed),
            Err(broadcast::error::RecvError::Closed) => Err(super::StoreError::Unavailable(
                "the game's feed closed".into(),
            )),
        }
    }
}
