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

use super::games::Game;
use super::{ServiceResult, Tabula, auth, check_game_id};
use crate::games::Viewer;
use crate::proto::v1 as pb;
use crate::store::{LogEntry, StoreError};

/// Messages buffered per stream before the stream waits for its client.
const STREAM_BUFFER: usize = 16;

type Sender = mpsc::Sender<Result<pb::ObserveResponse, Status>>;

pub(super) async fn observe(
    tabula: Arc<Tabula>,
    metadata: &MetadataMap,
    request: pb::ObserveRequest,
) -> ServiceResult<mpsc::Receiver<Result<pb::ObserveResponse, Status>>> {
    check_game_id(&request.game_id)?;
    let (latest, _) = tabula.games.get(&request.game_id).await?;
    let viewer = auth::viewer(&latest.meta, metadata)?;
    // Subscribe before reading the state, so nothing appended in between can be missed.
    let feed = tabula.games.store().subscribe(&request.game_id).await?;
    let game = match request.from_version {
        Some(version) => tabula.games.at_version(&request.game_id, version).await?,
        None => tabula.games.current(&request.game_id).await?,
    };
    let (sender, receiver) = mpsc::channel(STREAM_BUFFER);
    let follow = async move {
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
        if !self.send(None, &[]).await {
            return Ok(());
        }
        if !self.read_missed().await? {
            return Ok(());
        }
        while !self.game.state.is_finished() {
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
            .games
            .store()
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
        let events = self.game.apply_entry(entry)?;
        let action = super::games::decode_action(&entry.action)?;
        let logged = pb::LoggedAction {
            seat: entry.seat,
            action: Some(action),
        };
        Ok(self.send(Some(logged), &events).await)
    }

    async fn send(&self, action: Option<pb::LoggedAction>, events: &[pb::Event]) -> Listening {
        let state = &self.game.state;
        let message = pb::ObserveResponse {
            version: self.game.version,
            view: Some(state.view(self.viewer)),
            action,
            events: state.redact(events, self.viewer),
            status: Some(state.status()),
            legal_actions: state.legal_actions(self.viewer),
        };
        self.sender.send(Ok(message)).await.is_ok()
    }
}
