//! Assembling a replica: the store it uses and the gRPC server with everything generic clients
//! expect around the game service (health checking, reflection v1 and v1alpha, gRPC-Web).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tonic::transport::Server;
use tonic::transport::server::TcpIncoming;

use crate::proto::{self, v1 as pb};
use crate::service::{GameServiceImpl, ServiceOptions, Tabula};
use crate::store::memory::MemoryStore;
use crate::store::redis::{RedisOptions, RedisStore};
use crate::store::{Store, StoreResult};

/// Which store a replica uses.
#[derive(Clone, Debug)]
pub enum StoreChoice {
    Memory,
    Redis(RedisOptions),
}

pub async fn open_store(choice: &StoreChoice) -> StoreResult<Arc<dyn Store>> {
    Ok(match choice {
        StoreChoice::Memory => Arc::new(MemoryStore::new()),
        StoreChoice::Redis(options) => Arc::new(RedisStore::connect(options).await?),
    })
}

/// How often health checking re-checks the store.
const HEALTH_INTERVAL: Duration = Duration::from_secs(5);

/// Serves the game service on `listener` until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    store: Arc<dyn Store>,
    options: ServiceOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), tonic::transport::Error> {
    let tabula = Tabula::new(store.clone(), options);
    let (health_reporter, health_service) = tonic_health::server::health_reporter();
    tokio::spawn(report_health(health_reporter, store));

    let reflection_v1 = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()
        .map_err(|e| log_reflection_error(&e))
        .ok();
    let reflection_v1alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1alpha()
        .map_err(|e| log_reflection_error(&e))
        .ok();

    // Small request/response exchanges: without TCP_NODELAY, Nagle and delayed ACKs add ~40 ms.
    let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
    Server::builder()
        .accept_http1(true)
        .layer(tonic_web::GrpcWebLayer::new())
        .add_service(health_service)
        .add_optional_service(reflection_v1)
        .add_optional_service(reflection_v1alpha)
        .add_service(pb::game_service_server::GameServiceServer::new(
            GameServiceImpl(tabula),
        ))
        .serve_with_incoming_shutdown(incoming, shutdown)
        .await
}

fn log_reflection_error(error: &tonic_reflection::server::Error) {
    tracing::error!(%error, "server reflection disabled: the descriptor set did not load");
}

/// Keeps the health status in step with the store: NOT_SERVING while it does not answer.
async fn report_health(reporter: tonic_health::server::HealthReporter, store: Arc<dyn Store>) {
    type Game = pb::game_service_server::GameServiceServer<GameServiceImpl>;
    let mut serving = None;
    loop {
        let healthy = store.ping().await.is_ok();
        if serving != Some(healthy) {
            if healthy {
                reporter.set_serving::<Game>().await;
                reporter
                    .set_service_status("", tonic_health::ServingStatus::Serving)
                    .await;
            } else {
                tracing::warn!(
                    store = store.kind(),
                    "store unreachable: reporting NOT_SERVING"
                );
                reporter.set_not_serving::<Game>().await;
                reporter
                    .set_service_status("", tonic_health::ServingStatus::NotServing)
                    .await;
            }
            serving = Some(healthy);
        }
        tokio::time::sleep(HEALTH_INTERVAL).await;
    }
}
