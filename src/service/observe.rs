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

use super::cache::{Applied, Game};
use super::disclosure::Disclosure;
use super::error::ServiceResult;
use super::players;
use super::tabula::{Tabula, check_game_id};
use crate::games::Viewer;
use crate::proto::v1 as pb;
use crate::store::{LogEntry, StoreError, unix_millis};

/// Messages buffered per stream before the stream waits for its client.
const STREAM_BUFFER: usize = 16;

type Sender = mpsc::Sender<Result<pb::ObserveResponse, Status>>;

pub(super) async fn observe(
    tabula: Arc<Tabula>,
    metadata: &MetadataMap,
    request: pb::ObserveRequest,
) -> ServiceResult<mpsc::Receiver<Result<pb::ObserveResponse, Status>>> {
    check_game_id(&request.game_id)?;
    let meta = tabula.cache.meta(&request.game_id).await?;
    let viewer = tabula.tenants.viewer(&meta, metadata)?;
    // The stream counts in its game's tenant's quota while it is open (see `quotas.rs`).
    let slot = match &meta.tenant {
        Some(tenant) => match tabula.tenants.limits(tenant).observe_streams {
            Some(limit) => Some(tabula.quotas.admit_stream(tenant, limit).await?),
            None => None,
        },
        None => None,
    };
    // Subscribe before reading the state, so nothing appended in between can be missed.
    let feed = tabula.cache.subscribe(&request.game_id).await?;
    let game = match request.from_version {
        Some(version) => tabula.cache.at_version(&request.game_id, version).await?,
        None => tabula.cache.current(&request.game_id).await?,
    };
    let (sender, receiver) = mpsc::channel(STREAM_BUFFER);
    let follow = async move {
        let _slot = slot;
        let mut stream = Follower {
            tabula,
            game,
            viewer,
            feed,
            sender,
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
    game: Game,
    viewer: Viewer,
    feed: broadcast::Receiver<LogEntry>,
    sender: Sender,
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
        if !self.read_missed().await? {
            return Ok(());
        }
        while !self.game.is_finished() {
            let received = tokio::select! {
                received = self.feed.recv() => received,
                () = self.sender.closed() => return Ok(()),
            };
            let listening = match received {
                Ok(entry) if entry.version <= self.game.version => true,
                Ok(entry) if entry.version == self.game.version + 1 => {
                    self.send_entry(&entry).await?
                }
                // A gap or a lag: the store has everything, in order.
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => self.read_missed().await?,
                Err(broadcast::error::RecvError::Closed) => {
                    return Err(StoreError::Unavailable("the game's feed closed".into()).into());
                }
            };
            if !listening {
                return Ok(());
            }
        }
        Ok(())
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
        let message = pb::ObserveResponse {
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
            // Once, on the first message: it never changes.
            players: if applied.is_none() {
                players::to_proto(&game.meta.players)
            } else {
                Vec::new()
            },
            clock: game.state.clock_state(unix_millis()),
            signed_commitment: if applied.is_none() {
                super::commitment::signed(&game.meta)
            } else {
                None
            },
            head: game.head.map(|head| head.to_vec()).unwrap_or_default(),
        };
        self.sender.send(Ok(message)).await.is_ok()
    }
}
