//! Real parts for the integration tests: a `redis-server` of their own on a free loopback port,
//! replicas serving real gRPC on loopback, and clients talking to them.

#![allow(dead_code)]

use std::net::{SocketAddr, TcpListener as StdListener};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tabula::games::Seed;
use tabula::games::common::GameRng;
use tabula::hosting;
use tabula::proto::v1 as pb;
use tabula::server::{self, StoreChoice};
use tabula::service::ServiceOptions;
use tabula::store::Store;
use tabula::store::memory::MemoryStore;
use tabula::store::redis::RedisOptions;
use tokio::sync::oneshot;
use tonic::transport::Channel;

pub type Client = pb::game_service_client::GameServiceClient<Channel>;

fn free_port() -> u16 {
    StdListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free loopback port")
}

/// A `redis-server` process owned by one test, killed when dropped.
pub struct RedisServer {
    child: Child,
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl RedisServer {
    pub fn start() -> RedisServer {
        for _ in 0..5 {
            let dir = tempfile::tempdir().expect("temp dir");
            let port = free_port();
            let child = Command::new("redis-server")
                .args([
                    "--port",
                    &port.to_string(),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                ])
                .args(["--appendonly", "no", "--protected-mode", "no"])
                .arg("--dir")
                .arg(dir.path())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("redis-server on PATH (scripts/test.sh installs it)");
            let mut server = RedisServer {
                child,
                port,
                _dir: dir,
            };
            if server.wait_ready() {
                return server;
            }
            let _ = server.child.kill();
        }
        panic!("redis-server did not start");
    }

    fn wait_ready(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false; // exited: the port was taken after all
            }
            if let Ok(client) = redis::Client::open(self.url())
                && let Ok(mut conn) = client.get_connection()
                && redis::cmd("PING").query::<String>(&mut conn).is_ok()
            {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    pub fn choice(&self) -> StoreChoice {
        StoreChoice::Redis(RedisOptions::single(self.url()))
    }

    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Which store the replicas of a test share.
pub enum Backend {
    /// One in-process memory store shared by the test's replicas.
    Memory(Arc<MemoryStore>),
    Redis(RedisServer),
}

impl Backend {
    pub fn memory() -> Backend {
        Backend::Memory(Arc::new(MemoryStore::new()))
    }

    pub fn redis() -> Backend {
        Backend::Redis(RedisServer::start())
    }

    /// A fresh store handle (its own connections, for Redis), as a new replica would open.
    pub async fn store(&self) -> Arc<dyn Store> {
        match self {
            Backend::Memory(store) => store.clone(),
            Backend::Redis(redis) => server::open_store(&redis.choice()).await.expect("store"),
        }
    }
}

/// A replica serving real gRPC on a loopback port, stopped when dropped.
pub struct Replica {
    pub address: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
}

impl Replica {
    pub async fn start(backend: &Backend) -> Replica {
        Self::start_with(backend, test_options()).await
    }

    pub async fn start_with(backend: &Backend, options: ServiceOptions) -> Replica {
        let store = backend.store().await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let address = listener.local_addr().expect("address");
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(server::serve(listener, store, options, async {
            let _ = stopped.await;
        }));
        Replica {
            address,
            stop: Some(stop),
        }
    }

    pub async fn client(&self) -> Client {
        let url = format!("http://{}", self.address);
        for _ in 0..100 {
            if let Ok(client) = Client::connect(url.clone()).await {
                return client;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("replica at {url} did not accept connections");
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

pub fn test_options() -> ServiceOptions {
    ServiceOptions {
        allow_client_seed: true,
        cache_capacity: 1000,
        snapshot_every: 16,
    }
}

/// A request carrying a seat token.
pub fn authorized<T>(message: T, token: &str) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("ascii token"),
    );
    request
}

pub fn medici_config() -> pb::GameConfig {
    pb::GameConfig {
        game: Some(pb::game_config::Game::MediciVsStrozzi(Default::default())),
    }
}

pub async fn create(
    client: &mut Client,
    config: pb::GameConfig,
    seed: u64,
) -> pb::CreateGameResponse {
    client
        .create_game(pb::CreateGameRequest {
            config: Some(config),
            seed: Some(Seed::from_u64(seed).0.to_vec()),
        })
        .await
        .expect("CreateGame")
        .into_inner()
}

pub fn token(game: &pb::CreateGameResponse, seat: u32) -> String {
    game.seats
        .iter()
        .find(|s| s.seat == seat)
        .expect("seat token")
        .token
        .clone()
}

/// Picks a random concrete action from a legal-action listing.
pub fn choose(legal: &[pb::LegalAction], rng: &mut GameRng) -> pb::Action {
    let entry = &legal[rng.index(legal.len())];
    let action = entry.action.clone().expect("listed action");
    match &entry.amount {
        Some(range) => {
            // Prefer small amounts so games look like play, but cover the whole range.
            let max = if rng.below(4) == 0 {
                range.max
            } else {
                range.max.min(range.min + 30)
            };
            hosting::with_amount(&action, range.min + rng.below(max - range.min + 1))
        }
        None => action,
    }
}

/// Plays a whole game with random legal actions, sending the i-th action to `clients[i % n]`.
/// Returns the final version.
pub async fn play_random(
    clients: &mut [Client],
    game: &pb::CreateGameResponse,
    rng: &mut GameRng,
    max_actions: u64,
) -> u64 {
    let mut version = 0;
    for step in 0..max_actions {
        let n = clients.len();
        let client = &mut clients[step as usize % n];
        let spectator = client
            .get_view(pb::GetViewRequest {
                game_id: game.game_id.clone(),
            })
            .await
            .expect("GetView")
            .into_inner();
        let status = spectator.status.expect("status");
        let Some(seat) = status.to_act else {
            assert!(status.finished);
            return spectator.version;
        };
        let mine = client
            .get_view(authorized(
                pb::GetViewRequest {
                    game_id: game.game_id.clone(),
                },
                &token(game, seat),
            ))
            .await
            .expect("GetView as seat")
            .into_inner();
        assert!(
            !mine.legal_actions.is_empty(),
            "seat {seat} to act has legal actions"
        );
        let action = choose(&mine.legal_actions, rng);
        let request = pb::ActRequest {
            game_id: game.game_id.clone(),
            action: Some(action),
            expected_version: Some(mine.version),
            request_id: format!("step-{step}"),
        };
        let response = client
            .act(authorized(request, &token(game, seat)))
            .await
            .expect("Act")
            .into_inner();
        assert_eq!(response.version, mine.version + 1);
        version = response.version;
    }
    panic!(
        "game {} did not end within {max_actions} actions (at version {version})",
        game.game_id
    );
}
