//! The tonic adapters of `tabula.v1.GameService` and, for the operator, `tabula.v1.AdminService`:
//! each RPC gets its span (`rpc_span!`), runs its handler (one file per RPC) and has its outcome
//! recorded and its error mapped to a gRPC status ([`finish`]).

use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use tonic::{Request, Response, Status};
use tracing::Instrument;

use super::error::ServiceResult;
use super::tabula::Tabula;
use super::tenants::Caller;
use super::{
    act, count_games, create_game, end_game, error, export_log, export_log_unredacted, get_view,
    hand_seat_to_bot, list_games, list_turns, observe, observe_games, operator, play, replay_log,
    tenant_admin, verify_log, watch_events, webhook_admin,
};
use crate::proto::v1 as pb;

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
            // The game's tenant, or the caller's on the operator's API (see `tenants.rs`).
            tenant = tracing::field::Empty,
            $($field = rpc_span!(@value $($value)?),)*
        )
    };
    (@value) => { tracing::field::Empty };
    (@value $value:expr) => { $value };
}

/// The tonic adapter: records each RPC's span and outcome, and maps errors to statuses.
#[derive(Clone)]
pub struct GameServiceImpl(pub Arc<Tabula>);

fn finish<T>(result: ServiceResult<T>) -> Result<Response<T>, Status> {
    finish_status(result.map_err(|error| {
        tracing::Span::current().record("outcome", error.outcome());
        error.into()
    }))
}

/// [`finish`] for a handler whose errors are statuses already, the outcome recorded (a status
/// carries no `ServiceError` to name it).
fn finish_status<T>(result: Result<T, Status>) -> Result<Response<T>, Status> {
    let span = tracing::Span::current();
    match result {
        Ok(response) => {
            span.record("outcome", "ok");
            span.record("rpc.grpc.status_code", 0_i64);
            Ok(Response::new(response))
        }
        Err(status) => {
            // OpenTelemetry semantic conventions: the gRPC code, and an error status on failure.
            span.record("rpc.grpc.status_code", i64::from(status.code() as i32));
            span.record("otel.status_code", "ERROR");
            span.record("otel.status_message", status.message());
            tracing::info!(%status, "request refused");
            Err(status)
        }
    }
}

type PlayStream = Pin<Box<dyn Stream<Item = Result<pb::PlayResponse, Status>> + Send>>;
type ObserveStream = Pin<Box<dyn Stream<Item = Result<pb::ObserveResponse, Status>> + Send>>;
type ObserveGamesStream =
    Pin<Box<dyn Stream<Item = Result<pb::ObserveGamesResponse, Status>> + Send>>;
type WatchEventsStream =
    Pin<Box<dyn Stream<Item = Result<pb::WatchEventsResponse, Status>> + Send>>;

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

    type PlayStream = PlayStream;

    async fn play(
        &self,
        request: Request<tonic::Streaming<pb::PlayRequest>>,
    ) -> Result<Response<Self::PlayStream>, Status> {
        // The game is named by the stream's first message; the session's span records it.
        let span = rpc_span!("GameService", "Play", game_id, seat);
        async move {
            let (metadata, extensions, requests) = request.into_parts();
            let meter = extensions.get::<play::ActMeter>().cloned();
            let opened = play::play(self.0.clone(), metadata, meter, requests)
                .instrument(tracing::Span::current())
                .await
                .map(|receiver| {
                    Box::pin(tokio_stream::wrappers::ReceiverStream::new(receiver)) as PlayStream
                });
            finish_status(opened)
        }
        .instrument(span)
        .await
    }

    type ObserveGamesStream = ObserveGamesStream;

    async fn observe_games(
        &self,
        request: Request<pb::ObserveGamesRequest>,
    ) -> Result<Response<Self::ObserveGamesStream>, Status> {
        let span = rpc_span!("GameService", "ObserveGames");
        async move {
            let (metadata, _, request) = request.into_parts();
            let stream = observe_games::observe_games(self.0.clone(), &metadata, request)
                .instrument(tracing::Span::current())
                .await
                .map(|receiver| {
                    Box::pin(tokio_stream::wrappers::ReceiverStream::new(receiver))
                        as ObserveGamesStream
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
            let keys = self.0.signing.published().to_vec();
            finish(
                self.0
                    .replay_off_the_workers(move || verify_log::verify_log(request, &keys))
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

    async fn get_signing_keys(
        &self,
        _request: Request<pb::GetSigningKeysRequest>,
    ) -> Result<Response<pb::GetSigningKeysResponse>, Status> {
        let span = rpc_span!("GameService", "GetSigningKeys");
        async move { finish(Ok(super::get_signing_keys::get_signing_keys(&self.0))) }
            .instrument(span)
            .await
    }

    async fn join_game(
        &self,
        request: Request<pb::JoinGameRequest>,
    ) -> Result<Response<pb::JoinGameResponse>, Status> {
        // The code is a secret: the span names the game it points to once it is read, never it.
        let span = rpc_span!("GameService", "JoinGame", game_id, seat);
        async move {
            let (metadata, _, request) = request.into_parts();
            finish(super::join_game::join_game(&self.0, &metadata, request).await)
        }
        .instrument(span)
        .await
    }

    async fn rematch(
        &self,
        request: Request<pb::RematchRequest>,
    ) -> Result<Response<pb::RematchResponse>, Status> {
        let span = rpc_span!(
            "GameService",
            "Rematch",
            game_id = error::bounded(&request.get_ref().game_id),
            seat
        );
        async move {
            let (metadata, _, request) = request.into_parts();
            finish(super::rematch::rematch(&self.0, &metadata, request).await)
        }
        .instrument(span)
        .await
    }

    async fn fill_open_seats(
        &self,
        request: Request<pb::FillOpenSeatsRequest>,
    ) -> Result<Response<pb::FillOpenSeatsResponse>, Status> {
        let span = rpc_span!(
            "GameService",
            "FillOpenSeats",
            game_id = error::bounded(&request.get_ref().game_id)
        );
        async move {
            let (metadata, _, request) = request.into_parts();
            finish(super::fill_open_seats::fill_open_seats(&self.0, &metadata, request).await)
        }
        .instrument(span)
        .await
    }
}

/// Runs an operator call (`AdminService`) as the caller its gate let through.
async fn as_caller<T, R, F, Fut>(request: Request<T>, call: F) -> Result<Response<R>, Status>
where
    F: FnOnce(Caller, T) -> Fut,
    Fut: std::future::Future<Output = ServiceResult<R>>,
{
    match operator::caller_of(&request) {
        Ok(caller) => finish(call(caller, request.into_inner()).await),
        Err(error) => finish(Err(error)),
    }
}

/// The tonic adapter of the operator's API. Served only with an operator token or a tenants
/// file, behind an [`AdminGate`](super::AdminGate) that refuses every call carrying neither the
/// operator token nor a live tenant API key (see `server.rs`).
#[derive(Clone)]
pub struct AdminServiceImpl(pub Arc<Tabula>);

#[tonic::async_trait]
impl pb::admin_service_server::AdminService for AdminServiceImpl {
    type WatchEventsStream = WatchEventsStream;

    async fn watch_events(
        &self,
        request: Request<pb::WatchEventsRequest>,
    ) -> Result<Response<Self::WatchEventsStream>, Status> {
        let span = rpc_span!("AdminService", "WatchEvents");
        as_caller(request, |caller, request| async move {
            watch_events::watch_events(self.0.clone(), &caller, request)
                .instrument(tracing::Span::current())
                .await
                .map(|receiver| {
                    Box::pin(tokio_stream::wrappers::ReceiverStream::new(receiver))
                        as WatchEventsStream
                })
        })
        .instrument(span)
        .await
    }

    async fn list_games(
        &self,
        request: Request<pb::ListGamesRequest>,
    ) -> Result<Response<pb::ListGamesResponse>, Status> {
        let span = rpc_span!("AdminService", "ListGames");
        as_caller(request, |caller, request| async move {
            list_games::list_games(&self.0, &caller, request).await
        })
        .instrument(span)
        .await
    }

    async fn count_games(
        &self,
        request: Request<pb::CountGamesRequest>,
    ) -> Result<Response<pb::CountGamesResponse>, Status> {
        let span = rpc_span!("AdminService", "CountGames");
        as_caller(request, |caller, request| async move {
            count_games::count_games(&self.0, &caller, request).await
        })
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
        as_caller(request, |caller, request| async move {
            end_game::end_game(&self.0, &caller, request).await
        })
        .instrument(span)
        .await
    }

    async fn export_log_unredacted(
        &self,
        request: Request<pb::ExportLogUnredactedRequest>,
    ) -> Result<Response<pb::ExportLogUnredactedResponse>, Status> {
        let span = rpc_span!(
            "AdminService",
            "ExportLogUnredacted",
            game_id = error::bounded(&request.get_ref().game_id),
            version
        );
        as_caller(request, |caller, request| async move {
            export_log_unredacted::export_log_unredacted(&self.0, &caller, request).await
        })
        .instrument(span)
        .await
    }

    async fn add_webhook(
        &self,
        request: Request<pb::AddWebhookRequest>,
    ) -> Result<Response<pb::AddWebhookResponse>, Status> {
        let span = rpc_span!("AdminService", "AddWebhook");
        as_caller(request, |caller, request| async move {
            webhook_admin::add_webhook(&self.0, &caller, request).await
        })
        .instrument(span)
        .await
    }

    async fn list_webhooks(
        &self,
        request: Request<pb::ListWebhooksRequest>,
    ) -> Result<Response<pb::ListWebhooksResponse>, Status> {
        let span = rpc_span!("AdminService", "ListWebhooks");
        as_caller(request, |caller, request| async move {
            webhook_admin::list_webhooks(&self.0, &caller, request).await
        })
        .instrument(span)
        .await
    }

    async fn remove_webhook(
        &self,
        request: Request<pb::RemoveWebhookRequest>,
    ) -> Result<Response<pb::RemoveWebhookResponse>, Status> {
        let span = rpc_span!("AdminService", "RemoveWebhook");
        as_caller(request, |caller, request| async move {
            webhook_admin::remove_webhook(&self.0, &caller, request).await
        })
        .instrument(span)
        .await
    }

    async fn list_dead_letters(
        &self,
        request: Request<pb::ListDeadLettersRequest>,
    ) -> Result<Response<pb::ListDeadLettersResponse>, Status> {
        let span = rpc_span!("AdminService", "ListDeadLetters");
        as_caller(request, |caller, request| async move {
            webhook_admin::list_dead_letters(&self.0, &caller, request).await
        })
        .instrument(span)
        .await
    }

    async fn redeliver_dead_letters(
        &self,
        request: Request<pb::RedeliverDeadLettersRequest>,
    ) -> Result<Response<pb::RedeliverDeadLettersResponse>, Status> {
        let span = rpc_span!("AdminService", "RedeliverDeadLetters");
        as_caller(request, |caller, request| async move {
            webhook_admin::redeliver_dead_letters(&self.0, &caller, request).await
        })
        .instrument(span)
        .await
    }

    async fn list_turns(
        &self,
        request: Request<pb::ListTurnsRequest>,
    ) -> Result<Response<pb::ListTurnsResponse>, Status> {
        let span = rpc_span!("AdminService", "ListTurns");
        as_caller(request, |caller, request| async move {
            list_turns::list_turns(&self.0, &caller, request).await
        })
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
        as_caller(request, |caller, request| async move {
            hand_seat_to_bot::hand_seat_to_bot(&self.0, &caller, request).await
        })
        .instrument(span)
        .await
    }

    async fn create_tenant(
        &self,
        request: Request<pb::CreateTenantRequest>,
    ) -> Result<Response<pb::CreateTenantResponse>, Status> {
        let span = rpc_span!("AdminService", "CreateTenant");
        as_caller(request, |caller, request| async move {
            tenant_admin::create_tenant(&self.0, &caller, request).await
        })
        .instrument(span)
        .await
    }

    async fn list_tenants(
        &self,
        request: Request<pb::ListTenantsRequest>,
    ) -> Result<Response<pb::ListTenantsResponse>, Status> {
        let span = rpc_span!("AdminService", "ListTenants");
        as_caller(request, |caller, _| async move {
            tenant_admin::list_tenants(&self.0, &caller).await
        })
        .instrument(span)
        .await
    }

    async fn issue_tenant_key(
        &self,
        request: Request<pb::IssueTenantKeyRequest>,
    ) -> Result<Response<pb::IssueTenantKeyResponse>, Status> {
        let span = rpc_span!("AdminService", "IssueTenantKey");
        as_caller(request, |caller, request| async move {
            tenant_admin::issue_tenant_key(&self.0, &caller, request).await
        })
        .instrument(span)
        .await
    }

    async fn set_tenant_limits(
        &self,
        request: Request<pb::SetTenantLimitsRequest>,
    ) -> Result<Response<pb::SetTenantLimitsResponse>, Status> {
        let span = rpc_span!("AdminService", "SetTenantLimits");
        as_caller(request, |caller, request| async move {
            tenant_admin::set_tenant_limits(&self.0, &caller, request).await
        })
        .instrument(span)
        .await
    }

    async fn revoke_tenant_key(
        &self,
        request: Request<pb::RevokeTenantKeyRequest>,
    ) -> Result<Response<pb::RevokeTenantKeyResponse>, Status> {
        let span = rpc_span!("AdminService", "RevokeTenantKey");
        as_caller(request, |caller, request| async move {
            tenant_admin::revoke_tenant_key(&self.0, &caller, request).await
        })
        .instrument(span)
        .await
    }
}
