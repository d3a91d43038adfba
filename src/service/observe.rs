//! `Observe`: stream a viewer's view of a game as it changes.
//!
//! The first message shows the state at the starting version; then one message per appended
//! action, in order and without gaps, until the game's final state has been sent. Appends by any
//! replica arrive through the store's feed. Backpressure is per stream: a slow client only delays
//! its own stream (bounded buffer); if it falls behind the shared feed, it re-reads what it missed
//! from the store instead of anyone buffering for it.

use std::sync::Arc;

use tokio::sync::{broadcast, mpsc};
use tonic::Status;
use tonic::metadata::MetadataMap;
use tracing::Instrument;

use std::collections::VecDeque;

use super::cache::{Applied, Game};
use super::delay::SpectatorDelay;
use super::disclosure::Disclosure;
use super::error::ServiceResult;
use super::players;
use super::tabula::{Tabula, check_game_id};
use crate::games::Viewer;
use crate::proto::v1 as pb;
use crate::store::feed::FeedStep;
use crate::store::{LogEntry, unix_millis};

/// Messages buffered per stream before the stream waits for its client.
const STREAM_BUFFER: usize = 16;

type Sender = mpsc::Sender<Result<pb::ObserveResponse, Status>>;

pub(super) async fn observe(
    tabula: Arc<Tabula>,
    metadata: &MetadataMap,
    request: pb::ObserveRequest,
) -> ServiceResult<mpsc::Receiver<Result<pb::ObserveResponse, Status>>> {
    check_game_id(&request.game_id)?;
    let (known, _) = tabula.cache.get(&request.game_id).await?;
    let viewer = tabula.viewer_of(&known, metadata).await?;
    let meta = known.meta.clone();
    // The stream counts in its game's tenant's quota while it is open (see `quotas.rs`).
    let slot = tabula.admit_stream(&meta).await?;
    // Subscribe before reading the state, so nothing appended in between can be missed.
    let feed = tabula.cache.subscribe(&request.game_id).await?;
    let current = tabula.cache.current(&request.game_id).await?;
    // A delayed spectator starts, and stays, at the version it may see (`delay.rs`).
    let (visible, delay) =
        super::delay::visible_version(&tabula.cache, &current, viewer, unix_millis()).await?;
    let start = match (request.from_version, delay) {
        (Some(version), Some(delay)) if version > visible => {
            return Err(delay.not_yet(&request.game_id, version));
        }
        (Some(version), _) => version,
        (None, _) => visible,
    };
    let game = if start == current.version {
        current.clone()
    } else {
        tabula.cache.at_version(&request.game_id, start).await?
    };
    let links = super::seating::links(&tabula.cache, &game).await?;
    let delayed = delay.map(|delay| Delayed {
        delay,
        ahead: current,
        held: VecDeque::new(),
    });
    let (sender, receiver) = mpsc::channel(STREAM_BUFFER);
    let follow = async move {
        let _slot = slot;
        let mut stream = Follower {
            tabula,
            game,
            viewer,
            feed,
            sender,
            delayed,
            links,
            narrate: request.narrate,
        };
        if let Err(error) = stream.run().await {
            tracing::warn!(%error, "observe stream ended with an error");
            let _ = stream.sender.send(Err(error.into())).await;
        }
    };
    tokio::spawn(follow.instrument(tracing::Span::current()));
    Ok(receiver)
}

struct Follower {
    tabula: Arc<Tabula>,
    /// The game at the version the stream has sent.
    game: Game,
    viewer: Viewer,
    feed: broadcast::Receiver<LogEntry>,
    sender: Sender,
    /// For a delayed spectator, what it may not see yet.
    delayed: Option<Delayed>,
    /// The game's links, for the first message.
    links: Option<pb::GameLinks>,
    /// Whether to fill in sentences and labels (`ObserveRequest.narrate`).
    narrate: bool,
}

/// A delayed spectator's stream (`delay.rs`): the entries it has not been sent, held until they
/// are far enough behind, and the game at the newest of them, which says when the game ends
/// (then every held entry is sent at once).
struct Delayed {
    delay: SpectatorDelay,
    /// The game at the newest entry known.
    ahead: Game,
    /// The entries after the stream's version, up to `ahead`'s, in order.
    held: VecDeque<LogEntry>,
}

/// Whether the client is still listening.
type Listening = bool;

impl Follower {
    async fn run(&mut self) -> ServiceResult<()> {
        // A stream from the very start shows what setup did (the opening events).
        let opening = if self.game.version == 0 {
            self.game.state.opening_events()
        } else {
            Vec::new()
        };
        if !self.send(None, &opening).await {
            return Ok(());
        }
        if self.delayed.is_some() {
            return self.run_delayed().await;
        }
        if !self.read_missed().await? {
            return Ok(());
        }
        while !self.game.is_finished() {
            let received = tokio::select! {
                received = self.feed.recv() => received,
                () = self.sender.closed() => return Ok(()),
            };
            let listening = match FeedStep::of(received, self.game.version)? {
                FeedStep::Stale => true,
                FeedStep::Next(entry) => self.send_entry(&entry).await?,
                FeedStep::Missed => self.read_missed().await?,
            };
            if !listening {
                return Ok(());
            }
        }
        Ok(())
    }

    /// A delayed spectator's stream: entries are held as they arrive, and sent once far enough
    /// behind (by count, and by age, waking when the oldest one comes of age), or all at once
    /// when the game ends.
    async fn run_delayed(&mut self) -> ServiceResult<()> {
        let after = self.game.version;
        self.hold_from_store(after).await?;
        loop {
            if !self.release().await? || self.game.is_finished() {
                return Ok(());
            }
            let Some(delayed) = &self.delayed else {
                return Ok(());
            };
            // When the oldest held entry is old enough, if it is the only thing it waits for.
            let of_age = delayed
                .held
                .front()
                .filter(|_| delayed.held.len() as u64 > delayed.delay.moves)
                .map(|oldest| oldest.server_time_ms.saturating_add(delayed.delay.ms));
            let wait = of_age.map(|at| at.saturating_sub(unix_millis()).saturating_add(1));
            let received = tokio::select! {
                received = self.feed.recv() => Some(received),
                () = self.sender.closed() => return Ok(()),
                () = sleep_for(wait) => None,
            };
            let Some(received) = received else {
                continue;
            };
            let last_held = self.last_held();
            match FeedStep::of(received, last_held)? {
                FeedStep::Stale => {}
                FeedStep::Next(entry) => self.hold(entry)?,
                FeedStep::Missed => self.hold_from_store(last_held).await?,
            }
        }
    }

    /// The version of the newest entry known to a delayed stream.
    fn last_held(&self) -> u64 {
        self.delayed
            .as_ref()
            .and_then(|delayed| delayed.held.back())
            .map_or(self.game.version, |entry| entry.version)
    }

    /// Holds every entry the store has after version `after`.
    async fn hold_from_store(&mut self, after: u64) -> ServiceResult<()> {
        let entries = self
            .tabula
            .cache
            .entries_after(&self.game.meta.game_id, after)
            .await?;
        for entry in entries {
            self.hold(entry)?;
        }
        Ok(())
    }

    /// Holds `entry`, the next after the newest held, and follows the game to it.
    fn hold(&mut self, entry: LogEntry) -> ServiceResult<()> {
        if entry.version != self.last_held() + 1 {
            return Ok(());
        }
        let Some(delayed) = &mut self.delayed else {
            return Ok(());
        };
        if entry.version == delayed.ahead.version + 1 {
            let (ahead, _) = self.tabula.cache.follow(&delayed.ahead, &entry)?;
            delayed.ahead = ahead;
            self.tabula.entry_followed(&delayed.ahead);
        }
        delayed.held.push_back(entry);
        Ok(())
    }

    /// Sends the held entries the spectator may see now: all of them once the game has ended.
    async fn release(&mut self) -> ServiceResult<Listening> {
        loop {
            let Some(delayed) = &mut self.delayed else {
                return Ok(true);
            };
            let ended = delayed.ahead.is_finished();
            let later = (delayed.held.len() as u64).saturating_sub(1);
            let Some(oldest) = delayed.held.front() else {
                return Ok(true);
            };
            if !ended && !delayed.delay.shows(oldest, later, unix_millis()) {
                return Ok(true);
            }
            let Some(entry) = delayed.held.pop_front() else {
                return Ok(true);
            };
            // Applied to the stream's own copy: the cache keeps the newest state, not this one.
            let applied = self.game.apply_entry(&entry)?;
            if !self.send(Some(&applied), &applied.events).await {
                return Ok(false);
            }
        }
    }

    /// Sends everything the store has after the stream's version.
    async fn read_missed(&mut self) -> ServiceResult<Listening> {
        let entries = self
            .tabula
            .cache
            .entries_after(&self.game.meta.game_id, self.game.version)
            .await?;
        for entry in &entries {
            if !self.send_entry(entry).await? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    async fn send_entry(&mut self, entry: &LogEntry) -> ServiceResult<Listening> {
        if entry.version != self.game.version + 1 {
            return Ok(true);
        }
        let (game, applied) = self.tabula.cache.follow(&self.game, entry)?;
        self.game = game;
        // The notifications that drive this stream also wake this replica's bot workers: a
        // replica following the game may play a bot seat the appending replica could not.
        self.tabula.entry_followed(&self.game);
        Ok(self.send(Some(&applied), &applied.events).await)
    }

    /// Sends the state at the stream's version, with the entry that led there (if any) and its
    /// events, all as the viewer may see them.
    async fn send(&self, applied: Option<&Applied>, events: &[pb::Event]) -> Listening {
        let game = &self.game;
        let disclosure = Disclosure::of(game, self.viewer);
        let mut message = pb::ObserveResponse {
            version: game.version,
            view: Some(game.state.view(self.viewer)),
            action: applied.map(|applied| {
                disclosure.logged_action(
                    game,
                    applied.seat,
                    &applied.action,
                    applied.server_time_ms,
                )
            }),
            events: disclosure.events(game, events),
            status: Some(game.state.status()),
            legal_actions: game.state.legal_actions(self.viewer),
            // Once, on the first message: later, only a join changes it, and its event
            // (`TableEvent.seat_joined`) says how.
            players: if applied.is_none() {
                players::of_game(&game.meta, &*game.state)
            } else {
                Vec::new()
            },
            // A delayed spectator's clock would run on from a past decision: it gets none.
            clock: if self.delayed.is_some() {
                None
            } else {
                game.state.clock_state(unix_millis())
            },
            signed_commitment: if applied.is_none() {
                super::commitment::signed(&game.meta)
            } else {
                None
            },
            head: game.head.map(|head| head.to_vec()).unwrap_or_default(),
            links: if applied.is_none() {
                self.links.clone()
            } else {
                None
            },
        };
        if self.narrate {
            super::narration::narrate(
                game,
                self.viewer,
                &mut message.events,
                &mut message.legal_actions,
            );
        }
        self.sender.send(Ok(message)).await.is_ok()
    }
}

/// Sleeps for `millis`, or for ever when there is nothing to wait for.
async fn sleep_for(millis: Option<u64>) {
    match millis {
        Some(millis) => tokio::time::sleep(std::time::Duration::from_millis(millis)).await,
        None => std::future::pending().await,
    }
}
