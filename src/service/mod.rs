//! The gRPC services `tabula.v1.GameService` and, for the operator, `tabula.v1.AdminService`: one
//! file per RPC, after mini-redis's one file per command. Each RPC authenticates the caller, gets
//! the game from the [`GameCache`] (which alone talks to the store) and answers with what the
//! caller may see ([`disclosure`]). Nothing here knows a game's rules.

mod act;
mod auth;
mod bots;
mod cache;
mod commit;
mod create_game;
mod disclosure;
mod end_game;
pub(crate) mod error;
mod export_log;
mod get_view;
mod hand_seat_to_bot;
mod list_games;
mod observe;
pub mod operator;
pub(crate) mod players;
mod replay_log;
pub mod retention;
pub mod sweeper;
mod table_entry;
mod verify_log;
pub mod workers;

use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use tonic::{Request, Response, Status};
use tracing::Instrument;

pub use bots::{BOT_REQUEST_PREFIX, BotOptions};
pub use cache::{Game, GameCache};
pub use error::{ServiceError, ServiceResult};
pub use operator::{OperatorGate, OperatorOptions, OperatorToken};
pub use retention::RetentionOptions;
pub use sweeper::{SweepReport, SweeperOptions};
pub use table_entry::TableEntryResult;

use crate::proto::v1 as pb;
use crate::store::{BotTurnQueue, DeadlineSchedule, GameListing, RetentionIndex, Store};

/// Service settings that are not about the store.
#[derive(Clone, Debug)]
pub struct ServiceOptions {
    /// Accept client-chosen seeds in CreateGame (tests, reproducible tournaments).
    pub allow_client_seed: bool,
    /// How many games this replica keeps rebuilt in memory.
    pub cache_capacity: usize,
    /// Store a snapshot every this many versions (0: never).
    pub snapshot_every: u64,
    /// The operator's token and what it guards; `None`: no operator API (`AdminService` is not
    /// served) and anyone may create games.
    pub operator: Option<OperatorOptions>,
    /// How this replica plays bot seats (see `bots.rs`).
    pub bots: BotOptions,
    /// Where finished games go before they leave the store, and where the service reads games
    /// the store no longer has (`--archive`); `None`: no archive.
    pub archive: Option<Arc<crate::archive::Archive>>,
    /// The retention task `serve` starts (see [`retention`]); `None`: no task (tests and
    /// benchmarks that run passes themselves).
    pub retention: Option<RetentionOptions>,
    /// How this replica sweeps for expired turn clocks (see [`sweeper`]).
    pub sweeper: SweeperOptions,
}

impl Default for ServiceOptions {
    fn default() -> Self {
        ServiceOptions {
            allow_client_seed: false,
            cache_capacity: 10_000,
            snapshot_every: 64,
            operator: None,
            bots: BotOptions::default(),
            archive: None,
            retention: None,
            sweeper: SweeperOptions::default(),
        }
    }
}

/// Shared by every request on this replica: the game cache (and through it the store) and the
/// service's settings.
pub struct Tabula {
    /// The games, through the store's logs: what every RPC on a game reads and appends to.
    cache: GameCache,
    /// The game index, for the operator's listings.
    listing: Arc<dyn GameListing>,
    /// The deadline index of clocked games (creation indexes a game's first deadline; the
    /// sweeper reads and corrects it).
    deadlines: Arc<dyn DeadlineSchedule>,
    /// The pending bot turns.
    bot_turns: Arc<dyn BotTurnQueue>,
    /// What retention reads and removes.
    retained: Arc<dyn RetentionIndex>,
    options: ServiceOptions,
    /// This replica's bot workers.
    bots: bots::BotWorkers,
    /// The `Arc` this replica's service lives in, for the background tasks it starts.
    me: std::sync::Weak<Tabula>,
    /// Log replays (VerifyLog, ReplayLog) running at once: one per core. Each holds a request of
    /// up to the size limit and a blocking thread, so callers cannot make the replica hold more.
    replays: tokio::sync::Semaphore,
}

impl Tabula {
    /// A replica's service over `store`, each part of which goes only to what uses it.
    pub fn new(store: Arc<dyn Store>, options: ServiceOptions) -> Arc<Self> {
        let cache = GameCache::new(
            store.clone(),
            options.cache_capacity,
            options.snapshot_every,
        )
        .with_archive(options.archive.clone());
        let bots = bots::BotWorkers::new(options.bots.clone());
        Arc::new_cyclic(|me| Tabula {
            cache,
            listing: store.clone(),
            deadlines: store.clone(),
            bot_turns: store.clone(),
            retained: store,
            options,
            bots,
            me: me.clone(),
            replays: tokio::sync::Semaphore::new(
                std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get),
            ),
        })
    }

    /// The service's settings.
    pub fn options(&self) -> &ServiceOptions {
        &self.options
    }
}

/// The longest game id the service accepts (ids it generates are 32 hex digits).
pub const MAX_GAME_ID_LEN: usize = 64;
/// The longest request id the service accepts.
pub const MAX_REQUEST_ID_LEN: usize = 128;

/// Whether `game_id` has the form of a game id: 1 to [`MAX_GAME_ID_LEN`] ASCII letters, digits,
/// `-` or `_`.
pub(crate) fn is_game_id(game_id: &str) -> bool {
    !game_id.is_empty()
        && game_id.len() <= MAX_GAME_ID_LEN
        && game_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Game ids are generated by the server; anything else is refused before it reaches the store
/// (ids become Redis keys, so a stray `}` must never get that far). The refusal quotes at most
/// the start of what was sent: a client's input is never echoed unbounded.
fn check_game_id(game_id: &str) -> ServiceResult<()> {
    if is_game_id(game_id) {
        Ok(())
    } else {
        Err(ServiceError::InvalidArgument(format!(
            "game_id {} is not a game id (1–{MAX_GAME_ID_LEN} letters, digits, '-' or '_')",
            error::quote(game_id)
        )))
    }
}

/// The span of one RPC: its name, the OpenTelemetry semantic conventions' RPC fields (its status
/// recorded by [`finish`]), and the RPC's own fields: `name = value`, or a bare name for one
/// recorded later (`seat`, `version`).
macro_rules! rpc_span {
    ($service:literal, $method:literal $(, $field:ident $(= $value:expr)?)* $(,)?) => {
        tracing::info_span!(
            $method,
            otel.kind = "server",
            otel.name = concat!("tabula.v1.", $service, "/", $method),
            rpc.system = "grpc",
            rpc.service = concat!("tabula.v1.", $service),
            rpc.method = $method,
            rpc.grpc.status_code = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
            otel.status_message = tracing::field::Empty,
            outcome = tracing::field::Empty,
            $($field = rpc_span!(@value $($value)?),)*
        )
    };
    (@value) => { tracing::field::Empty };
    (@value $value:expr) => { $value };
}

/// The tonic adapter: records each RPC's span and outcome, and maps errors to statuses.
#[derive(Clone)]
pub struct GameServiceImpl(pub Arc<Tabula>);

impl Tabula {
    /// Runs the log replay `work` on the blocking pool, in the caller's span: re-executing a log
    /// of up to the request size limit takes milliseconds of CPU, which must not stall the async
    /// workers that carry every other call and stream. At most one replay per core runs at once;
    /// past that the call is refused at once (RESOURCE_EXHAUSTED) rather than queued.
    async fn replay_off_the_workers<T, Work>(&self, work: Work) -> ServiceResult<T>
    where
        T: Send + 'static,
        Work: FnOnce() -> ServiceResult<T> + Send + 'static,
    {
        let Ok(_permit) = self.replays.try_acquire() else {
            return Err(ServiceError::Busy(
                "this replica is replaying as many logs as it has cores; retry shortly".into(),
            ));
        };
        let span = tracing::Span::current();
        tokio::task::spawn_blocking(move || span.in_scope(work))
            .await
            .map_err(|error| ServiceError::Internal(format!("the replay stopped: {error}")))?
    }
}

fn finish<T>(result: ServiceResult<T>) -> Result<Response<T>, Status> {
    let span = tracing::Span::current();
    match result {
        Ok(response) => {
            span.record("outcome", "ok");
            span.record("rpc.grpc.status_code", 0_i64);
            Ok(Response::new(response))
        }
        Err(error) => {
            span.record("outcome", error.outcome());
            // OpenTelemetry semantic conventions: the gRPC code, and an error status on failure.
            span.record("rpc.grpc.status_code", i64::from(error.code() as i32));
            span.record("otel.status_code", "ERROR");
            span.record("otel.status_message", error.to_string());
            tracing::info!(%error, "request refused");
            Err(error.into())
        }
    }
}

type ObserveStream = Pin<Box<dyn Stream<Item = Result<pb::ObserveResponse, Status>> + Send>>;

#[tonic::async_trait]
impl pb::game_service_server::GameService for GameServiceImpl {
    async fn create_game(
        &self,
        request: Request<pb::CreateGameRequest>,
    ) -> Result<Response<pb::CreateGameResponse>, Status> {
        let span = rpc_span!("GameService", "CreateGame", game_id);
        async move {
            let (metadata, _, request) = request.into_parts();
            finish(create_game::create_game(&self.0, &metadata, request).await)
        }
        .instrument(span)
        .await
    }

    async fn act(
        &self,
        request: Request<pb::ActRequest>,
    ) -> Result<Response<pb::ActResponse>, Status> {
        let span = rpc_span!(
            "GameService",
            "Act",
            game_id = error::bounded(&request.get_ref().game_id),
            seat,
            version
        );
        async move {
            let (metadata, _, request) = request.into_parts();
            finish(act::act(&self.0, &metadata, request).await)
        }
        .instrument(span)
        .await
    }

    type ObserveStream = ObserveStream;

    async fn observe(
        &self,
        request: Request<pb::ObserveRequest>,
    ) -> Result<Response<Self::ObserveStream>, Status> {
        let span = rpc_span!(
            "GameService",
            "Observe",
            game_id = error::bounded(&request.get_ref().game_id)
        );
        async move {
            let (metadata, _, request) = request.into_parts();
            let stream = observe::observe(self.0.clone(), &metadata, request)
                .instrument(tracing::Span::current())
                .await
                .map(|receiver| {
                    Box::pin(tokio_stream::wrappers::ReceiverStream::new(receiver)) as ObserveStream
                });
            finish(stream)
        }
        .instrument(span)
        .await
    }

    async fn get_view(
        &self,
        request: Request<pb::GetViewRequest>,
    ) -> Result<Response<pb::GetViewResponse>, Status> {
        let span = rpc_span!(
            "GameService",
            "GetView",
            game_id = error::bounded(&request.get_ref().game_id),
            version
        );
        async move {
            let (metadata, _, request) = request.into_parts();
            finish(get_view::get_view(&self.0, &metadata, request).await)
        }
        .instrument(span)
        .await
    }

    async fn export_log(
        &self,
        request: Request<pb::ExportLogRequest>,
    ) -> Result<Response<pb::ExportLogResponse>, Status> {
        let span = rpc_span!(
            "GameService",
            "ExportLog",
            game_id = error::bounded(&request.get_ref().game_id),
            version
        );
        async move {
            let (metadata, _, request) = request.into_parts();
            finish(export_log::export_log(&self.0, &metadata, request).await)
        }
        .instrument(span)
        .await
    }

    async fn verify_log(
        &self,
        request: Request<pb::VerifyLogRequest>,
    ) -> Result<Response<pb::VerifyLogResponse>, Status> {
        let span = rpc_span!("GameService", "VerifyLog");
        async move {
            let request = request.into_inner();
            finish(
                self.0
                    .replay_off_the_workers(move || verify_log::verify_log(request))
                    .await,
            )
        }
        .instrument(span)
        .await
    }

    async fn replay_log(
        &self,
        request: Request<pb::ReplayLogRequest>,
    ) -> Result<Response<pb::ReplayLogResponse>, Status> {
        let span = rpc_span!("GameService", "ReplayLog", version);
        async move {
            let request = request.into_inner();
            finish(
                self.0
                    .replay_off_the_workers(move || replay_log::replay_log(request))
                    .await,
            )
        }
        .instrument(span)
        .await
    }

    async fn list_game_types(
        &self,
        _request: Request<pb::ListGameTypesRequest>,
    ) -> Result<Response<pb::ListGameTypesResponse>, Status> {
        let span = rpc_span!("GameService", "ListGameTypes");
        async move {
            // The registry of this build: the same on every replica running it, and no secret.
            finish(Ok(pb::ListGameTypesResponse {
                game_types: crate::hosting::registry()
                    .iter()
                    .map(crate::hosting::RegisteredGame::to_pb)
                    .collect(),
            }))
        }
        .instrument(span)
        .await
    }
}

/// The tonic adapter of the operator's API. Served only with an operator token, behind an
/// [`OperatorGate`] that refuses every call without it (see `server.rs`).
#[derive(Clone)]
pub struct AdminServiceImpl(pub Arc<Tabula>);

#[tonic::async_trait]
impl pb::admin_service_server::AdminService for AdminServiceImpl {
    async fn list_games(
        &self,
        request: Request<pb::ListGamesRequest>,
    ) -> Result<Response<pb::ListGamesResponse>, Status> {
        let span = rpc_span!("AdminService", "ListGames");
        async move { finish(list_games::list_games(&self.0, request.into_inner()).await) }
            .instrument(span)
            .await
    }

    async fn end_game(
        &self,
        request: Request<pb::EndGameRequest>,
    ) -> Result<Response<pb::EndGameResponse>, Status> {
        let span = rpc_span!(
            "AdminService",
            "EndGame",
            game_id = error::bounded(&request.get_ref().game_id)
        );
        async move { finish(end_game::end_game(&self.0, request.into_inner()).await) }
            .instrument(span)
            .await
    }

    async fn hand_seat_to_bot(
        &self,
        request: Request<pb::HandSeatToBotRequest>,
    ) -> Result<Response<pb::HandSeatToBotResponse>, Status> {
        let span = rpc_span!(
            "AdminService",
            "HandSeatToBot",
            game_id = error::bounded(&request.get_ref().game_id)
        );
        async move {
            finish(hand_seat_to_bot::hand_seat_to_bot(&self.0, request.into_inner()).await)
        }
        .instrument(span)
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::memory::MemoryStore;

    #[tokio::test]
    async fn replays_past_one_per_core_are_refused_at_once_not_queued() {
        let tabula = Tabula::new(Arc::new(MemoryStore::new()), ServiceOptions::default());
        let cores = u32::try_from(tabula.replays.available_permits()).expect("a few cores");
        let running = tabula
            .replays
            .try_acquire_many(cores)
            .expect("every permit");
        let refused = tabula
            .replay_off_the_workers(|| Ok(()))
            .await
            .expect_err("every core is replaying");
        assert_eq!(refused.code(), tonic::Code::ResourceExhausted, "{refused}");
        drop(running);
        let replayed = tabula.replay_off_the_workers(|| Ok(7)).await;
        assert_eq!(replayed.expect("a core is free again"), 7);
    }
}
