//! `Play`: one seat's session on one game over one bidirectional stream.
//!
//! A bot or a backend playing a seat move after move otherwise makes two calls per move: its Act,
//! and, after the other seats' moves, a GetView to learn that its turn has come and what it may
//! do. On a stream both become messages: each `act` is answered in order (through the same
//! `act::act` as the unary RPC, so the same checks, commit path, exactly-once retries and
//! errors), and the session tells the seat when its turn comes, following the game's feed as an
//! Observe stream does. What a call costs a replica beyond its work (an HTTP/2 stream, its headers,
//! the routing, the token's hash on every GetView, the GetView's freshness check in the store) is
//! then paid once per game instead of once per move.
//!
//! Every message the seat receives is what the unary RPCs would have answered it: `turn` is
//! GetView's answer (`get_view::answer`), `acted` Act's, `refused` Act's error. Nothing else of
//! the game reaches the stream, so it discloses nothing the seat's own calls would not.
//!
//! Limits: the stream counts as an Observe stream (the edge's stream caps and Observe rates when
//! it opens, its tenant's `observe_streams` quota while it is open), and every `act` is metered
//! by the edge's Act rates ([`ActMeter`]) as a unary Act is. Answers wait for the client: with
//! `STREAM_BUFFER` unread, the session stops reading requests, and HTTP/2 flow control stops
//! the client.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{broadcast, mpsc};
use tonic::metadata::MetadataMap;
use tonic::{Status, Streaming};
use tracing::Instrument;

use super::act;
use super::cache::Game;
use super::error::{ServiceError, ServiceResult};
use super::get_view::{self, Shape};
use super::tabula::{Tabula, check_game_id};
use crate::games::{Seat, Viewer};
use crate::proto::v1 as pb;
use crate::store::LogEntry;
use crate::store::feed::FeedStep;

/// Answers buffered per stream before the session waits for its client.
const STREAM_BUFFER: usize = 16;

/// How long a client has, after opening the stream, to send `start`: a stream that never says
/// which game it plays would otherwise hold a stream slot for nothing.
pub const START_DEADLINE: Duration = Duration::from_secs(10);

/// The edge's per-message admission of a stream's `act`s: the Act rates of the stream's peer
/// address and token, which a unary Act meets at the edge. Put in the call's extensions by the
/// edge; a server without it (tests of the service alone) meters nothing.
#[derive(Clone)]
pub struct ActMeter(pub Arc<dyn Fn() -> Result<(), Status> + Send + Sync>);

type Sender = mpsc::Sender<Result<pb::PlayResponse, Status>>;

/// Opens a session: waits for `start`, checks the seat's token against the game and sends the
/// first `turn`; the rest runs on its own task. Errors before that fail the call itself.
pub(super) async fn play(
    tabula: Arc<Tabula>,
    metadata: MetadataMap,
    meter: Option<ActMeter>,
    mut requests: Streaming<pb::PlayRequest>,
) -> Result<mpsc::Receiver<Result<pb::PlayResponse, Status>>, Status> {
    let opened = match tokio::time::timeout(START_DEADLINE, requests.message()).await {
        Err(_) => {
            tracing::Span::current().record("outcome", "deadline_exceeded");
            return Err(Status::deadline_exceeded(format!(
                "send PlayRequest.start within {} s of opening a Play stream",
                START_DEADLINE.as_secs()
            )));
        }
        Ok(Err(status)) => {
            tracing::Span::current().record("outcome", "invalid_argument");
            return Err(status);
        }
        Ok(Ok(None)) => Err(ServiceError::InvalidArgument(
            "the Play stream closed before its PlayRequest.start".into(),
        )),
        Ok(Ok(Some(pb::PlayRequest {
            kind: Some(pb::play_request::Kind::Start(start)),
        }))) => Session::open(tabula, metadata, meter, start).await,
        Ok(Ok(Some(_))) => Err(ServiceError::InvalidArgument(
            "the first message of a Play stream must be PlayRequest.start".into(),
        )),
    };
    let session = opened.map_err(|error| {
        tracing::Span::current().record("outcome", error.outcome());
        Status::from(error)
    })?;
    let (sender, receiver) = mpsc::channel(STREAM_BUFFER);
    let run = async move {
        let mut session = session;
        if let Err(error) = session.run(&mut requests, &sender).await {
            tracing::warn!(%error, "play stream ended with an error");
            let _ = sender.send(Err(error.into())).await;
        }
    };
    tokio::spawn(run.instrument(tracing::Span::current()));
    Ok(receiver)
}

/// One seat's session.
struct Session {
    tabula: Arc<Tabula>,
    /// The stream's metadata: every `act` is authorised with it, as a unary Act would be.
    metadata: MetadataMap,
    meter: Option<ActMeter>,
    seat: Seat,
    /// The game as far as the session has followed its feed.
    game: Game,
    feed: broadcast::Receiver<LogEntry>,
    /// The newest version the seat has been shown, by a `turn` or by an answer to its `act`: a
    /// `turn` is sent only for a later one.
    shown: u64,
    /// The first `turn`, sent by [`Session::run`].
    first: Option<pb::GetViewResponse>,
    /// What each later `turn` holds.
    turns: Shape,
    /// The tenant's `observe_streams` slot, held while the session lives.
    _slot: Option<super::quotas::StreamSlot>,
}

/// Whether the client is still listening.
type Listening = bool;

impl Session {
    async fn open(
        tabula: Arc<Tabula>,
        metadata: MetadataMap,
        meter: Option<ActMeter>,
        start: pb::PlayStart,
    ) -> ServiceResult<Session> {
        check_game_id(&start.game_id)?;
        tracing::Span::current().record("game_id", super::error::bounded(&start.game_id));
        let (known, _) = tabula.cache.get(&start.game_id).await?;
        let seat = tabula.seat_of(&known, &metadata).await?;
        tracing::Span::current().record("seat", seat);
        let slot = tabula.admit_stream(&known.meta).await?;
        // Subscribe before reading the state, so nothing appended in between can be missed.
        let feed = tabula.cache.subscribe(&start.game_id).await?;
        let game = tabula.cache.current(&start.game_id).await?;
        let links = super::seating::links(&tabula.cache, &game).await?;
        // Later turns leave out what seldom changes (the first one has it).
        let turns = Shape {
            omit_view: start.omit_view,
            narrate: start.narrate,
            is_current: true,
            whole: false,
        };
        let whole = Shape {
            whole: true,
            ..turns
        };
        let first = get_view::answer(&game, Viewer::Seat(seat), whole, links);
        Ok(Session {
            tabula,
            metadata,
            meter,
            seat,
            shown: game.version,
            game,
            feed,
            first: Some(first),
            turns,
            _slot: slot,
        })
    }

    async fn run(
        &mut self,
        requests: &mut Streaming<pb::PlayRequest>,
        sender: &Sender,
    ) -> ServiceResult<()> {
        if let Some(first) = self.first.take()
            && !send(sender, pb::play_response::Kind::Turn(first)).await
        {
            return Ok(());
        }
        while !self.game.is_finished() {
            tokio::select! {
                // Answers first: a seat waiting on one is waiting to move.
                biased;
                request = requests.message() => match request {
                    Ok(Some(request)) => {
                        if !self.request(request, sender).await? {
                            return Ok(());
                        }
                    }
                    // The client closed its side and every act it sent is answered.
                    Ok(None) => return Ok(()),
                    // The client reset the stream, or sent bytes that are no message.
                    Err(status) => {
                        tracing::info!(%status, "play stream's requests failed");
                        return Ok(());
                    }
                },
                received = self.feed.recv() => {
                    self.follow(received).await?;
                    if !self.tell(sender).await {
                        return Ok(());
                    }
                }
                () = sender.closed() => return Ok(()),
            }
        }
        Ok(())
    }

    /// Answers one request: an `act`, through Act itself.
    async fn request(
        &mut self,
        request: pb::PlayRequest,
        sender: &Sender,
    ) -> ServiceResult<Listening> {
        let mut request = match request.kind {
            Some(pb::play_request::Kind::Act(request)) => request,
            Some(pb::play_request::Kind::Start(_)) => {
                return Err(ServiceError::InvalidArgument(
                    "PlayRequest.start is the first message of a Play stream, and only the first"
                        .into(),
                ));
            }
            None => {
                return Err(ServiceError::InvalidArgument(
                    "a PlayRequest needs a kind: start, then act".into(),
                ));
            }
        };
        let request_id = super::error::bounded(&request.request_id).to_owned();
        let span = tracing::info_span!(
            "Play.Act",
            game_id = self.game.meta.game_id.as_str(),
            seat = self.seat,
            version = tracing::field::Empty,
            outcome = tracing::field::Empty,
            tenant = tracing::field::Empty,
        );
        let answer = async {
            if let Some(meter) = &self.meter {
                // The edge's own words (which rate, per what), with its code.
                meter.0().map_err(|status| ServiceError::Exhausted(status.message().to_owned()))?;
            }
            if request.game_id.is_empty() {
                request.game_id = self.game.meta.game_id.clone();
            } else if request.game_id != self.game.meta.game_id {
                return Err(ServiceError::InvalidArgument(format!(
                    "this Play stream plays game {}; ActRequest.game_id {:?} is another (leave it \
                     empty)",
                    self.game.meta.game_id,
                    super::error::bounded(&request.game_id)
                )));
            }
            act::act(&self.tabula, &self.metadata, request).await
        }
        .instrument(span.clone())
        .await;
        let kind = match answer {
            Ok(answer) => {
                span.record("outcome", "ok");
                self.shown = self.shown.max(answer.version);
                pb::play_response::Kind::Acted(answer)
            }
            Err(error) => {
                span.record("outcome", error.outcome());
                let status = Status::from(error);
                pb::play_response::Kind::Refused(pb::PlayRefusal {
                    request_id,
                    code: status.code() as u32,
                    message: status.message().to_owned(),
                })
            }
        };
        Ok(send(sender, kind).await)
    }

    /// Follows the game to what the feed brought; a gap or a lag is read from the store.
    async fn follow(
        &mut self,
        received: Result<LogEntry, broadcast::error::RecvError>,
    ) -> ServiceResult<()> {
        match FeedStep::of(received, self.game.version)? {
            FeedStep::Stale => Ok(()),
            FeedStep::Next(entry) => self.apply(&entry),
            FeedStep::Missed => {
                let entries = self
                    .tabula
                    .cache
                    .entries_after(&self.game.meta.game_id, self.game.version)
                    .await?;
                for entry in &entries {
                    if entry.version == self.game.version + 1 {
                        self.apply(entry)?;
                    }
                }
                Ok(())
            }
        }
    }

    fn apply(&mut self, entry: &LogEntry) -> ServiceResult<()> {
        // The cache's copy when it has applied the entry already (the replica that appended it):
        // no rule runs again here.
        let (game, _) = self.tabula.cache.follow(&self.game, entry)?;
        self.game = game;
        self.tabula.entry_followed(&self.game);
        Ok(())
    }

    /// Sends a `turn` when the game has reached a version the seat has not been shown at which it
    /// must act, or its end.
    async fn tell(&mut self, sender: &Sender) -> Listening {
        if self.game.version <= self.shown {
            return true;
        }
        let status = self.game.state.status();
        let its_turn = status.to_act == Some(self.seat) && !self.game.state.is_bot_seat(self.seat);
        if !its_turn && !status.finished {
            return true;
        }
        self.shown = self.game.version;
        let turn = get_view::answer(&self.game, Viewer::Seat(self.seat), self.turns, None);
        send(sender, pb::play_response::Kind::Turn(turn)).await
    }
}

async fn send(sender: &Sender, kind: pb::play_response::Kind) -> Listening {
    sender
        .send(Ok(pb::PlayResponse { kind: Some(kind) }))
        .await
        .is_ok()
}
