//! Real parts for the integration tests: a `redis-server` of their own on a free loopback port (or
//! a three-node Redis Cluster of their own), replicas serving real gRPC on loopback, and clients
//! talking to them.

#![allow(dead_code)]

/// Runs each scenario — an `async fn(&Backend)` in the calling file — as three tests: on the
/// memory store, on a single Redis node and on a Redis Cluster, each in modules named after the
/// store so a failure says where. The calling file declares `#[macro_use] mod common;`.
#[allow(unused_macros)]
macro_rules! on_every_store {
    ($($scenario:ident),+ $(,)?) => {
        mod memory {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $scenario() {
                    super::$scenario(&super::Backend::memory()).await;
                }
            )+
        }
        mod redis {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $scenario() {
                    super::$scenario(&super::Backend::redis()).await;
                }
            )+
        }
        mod redis_cluster {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $scenario() {
                    super::$scenario(&super::Backend::redis_cluster()).await;
                }
            )+
        }
    };
}

pub mod browser;
pub mod servers;

use std::collections::HashSet;
use std::net::{SocketAddr, TcpListener as StdListener};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tabula::games::Seed;
use tabula::games::common::GameRng;
use tabula::proto::v1 as pb;
use tabula::server::{self, StoreChoice};
use tabula::service::ServiceOptions;
use tabula::store::Store;
use tabula::store::memory::MemoryStore;
use tabula::store::redis::RedisOptions;
use tokio::sync::oneshot;
use tonic::transport::Channel;

pub type Client = pb::game_service_client::GameServiceClient<Channel>;

/// A loopback port nobody listens on right now.
pub fn free_port() -> u16 {
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
            let child = servers::redis_command("redis-server", port, dir.path())
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
        let url = self.url();
        wait_answers_ping(&mut self.child, &url)
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

/// Waits until the `redis-server` at `url` answers PING; false if it exited (the port was taken
/// after all) or did not answer within 10 s.
fn wait_answers_ping(child: &mut Child, url: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return false;
        }
        if let Ok(client) = redis::Client::open(url)
            && let Ok(mut conn) = client.get_connection_with_timeout(Duration::from_secs(1))
            && redis::cmd("PING").query::<String>(&mut conn).is_ok()
        {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Nodes in a test cluster: the fewest masters Redis Cluster accepts.
const CLUSTER_NODES: usize = 3;

/// A Redis Cluster of three masters (no replicas) owned by one test, each node a `redis-server`
/// on its own free loopback port and in its own temp dir; all killed when dropped.
pub struct RedisCluster {
    nodes: Vec<ClusterNode>,
}

struct ClusterNode {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for ClusterNode {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free loopback port for a cluster node: its bus port (port + 10000) must be free and valid
/// too, and neither may be one already chosen for this cluster.
fn free_cluster_port(taken: &mut HashSet<u16>) -> u16 {
    for _ in 0..1000 {
        let port = free_port();
        let Some(bus) = port.checked_add(10_000) else {
            continue;
        };
        if port == 6379
            || taken.contains(&port)
            || taken.contains(&bus)
            || StdListener::bind(("127.0.0.1", bus)).is_err()
        {
            continue;
        }
        taken.insert(port);
        taken.insert(bus);
        return port;
    }
    panic!("no free loopback port pair for a cluster node");
}

fn node_url(port: u16) -> String {
    format!("redis://127.0.0.1:{port}/")
}

/// A plain (non-cluster) connection to one node, for inspecting the cluster.
fn node_connection(port: u16) -> redis::RedisResult<redis::Connection> {
    redis::Client::open(node_url(port))?.get_connection_with_timeout(Duration::from_secs(2))
}

impl RedisCluster {
    pub fn start() -> RedisCluster {
        for _ in 0..5 {
            if let Some(cluster) = Self::try_start() {
                return cluster;
            }
        }
        panic!("the Redis Cluster did not start");
    }

    /// One attempt: start the nodes, form the cluster, wait until every node reports it ok. On
    /// failure (a port taken after all, say) the nodes started so far are dropped, i.e. killed.
    fn try_start() -> Option<RedisCluster> {
        let mut taken = HashSet::new();
        let mut nodes = Vec::with_capacity(CLUSTER_NODES);
        for _ in 0..CLUSTER_NODES {
            let port = free_cluster_port(&mut taken);
            let dir = tempfile::tempdir().expect("temp dir");
            let config_file = dir.path().join(format!("nodes-{port}.conf"));
            let child = servers::redis_command("redis-server", port, dir.path())
                .args(["--cluster-enabled", "yes", "--cluster-config-file"])
                .arg(&config_file)
                .spawn()
                .expect("redis-server on PATH (scripts/test.sh installs it)");
            nodes.push(ClusterNode {
                child,
                port,
                _dir: dir,
            });
        }
        let mut cluster = RedisCluster { nodes };
        for node in &mut cluster.nodes {
            if !wait_answers_ping(&mut node.child, &node_url(node.port)) {
                return None;
            }
        }
        if !cluster.create() {
            return None;
        }
        cluster.wait_state_ok().then_some(cluster)
    }

    /// `redis-cli --cluster create`: assigns the slots evenly over the three masters.
    fn create(&self) -> bool {
        let mut cli = Command::new("redis-cli");
        cli.arg("--cluster").arg("create");
        for port in self.ports() {
            cli.arg(format!("127.0.0.1:{port}"));
        }
        let mut child = cli
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("redis-cli on PATH (it comes with redis-server)");
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            match child.try_wait() {
                Ok(Some(status)) if status.success() => return true,
                Ok(Some(_)) => break,
                Ok(None) => std::thread::sleep(Duration::from_millis(50)),
                Err(_) => break,
            }
        }
        let _ = child.kill();
        if let Ok(output) = child.wait_with_output() {
            eprintln!(
                "redis-cli --cluster create failed:\n{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        false
    }

    fn wait_state_ok(&self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            let all_ok = self.ports().all(|port| {
                node_connection(port)
                    .and_then(|mut conn| {
                        redis::cmd("CLUSTER").arg("INFO").query::<String>(&mut conn)
                    })
                    .is_ok_and(|info| info.lines().any(|line| line.trim() == "cluster_state:ok"))
            });
            if all_ok {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }

    /// Kills every node (the cluster is gone for good).
    pub fn stop(&mut self) {
        for node in &mut self.nodes {
            let _ = node.child.kill();
            let _ = node.child.wait();
        }
    }

    /// Suspends every node (SIGSTOP): connections stay open but nothing answers, as with a hung
    /// or partitioned cluster. Drop still kills them.
    pub fn freeze(&self) {
        self.signal("-STOP");
    }

    /// Resumes the nodes [`RedisCluster::freeze`] suspended (SIGCONT).
    pub fn thaw(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        for node in &self.nodes {
            servers::send_signal(node.child.id(), signal);
        }
    }

    pub fn ports(&self) -> impl Iterator<Item = u16> + '_ {
        self.nodes.iter().map(|node| node.port)
    }

    pub fn urls(&self) -> Vec<String> {
        self.ports().map(node_url).collect()
    }

    pub fn choice(&self) -> StoreChoice {
        StoreChoice::Redis(RedisOptions {
            urls: self.urls(),
            cluster: true,
            ..RedisOptions::single(String::new())
        })
    }

    /// The slot a key hashes to (`CLUSTER KEYSLOT`, which honours hash tags).
    pub fn key_slot(&self, key: &str) -> u16 {
        let mut conn = node_connection(self.nodes[0].port).expect("node connection");
        redis::cmd("CLUSTER")
            .arg("KEYSLOT")
            .arg(key)
            .query(&mut conn)
            .expect("CLUSTER KEYSLOT")
    }

    /// The index of the node that serves `slot`, as the nodes themselves report it.
    pub fn owner_of_slot(&self, slot: u16) -> usize {
        let owners: Vec<usize> = (0..self.nodes.len())
            .filter(|&index| self.own_slots(index).iter().any(|r| r.contains(&slot)))
            .collect();
        assert_eq!(owners.len(), 1, "slot {slot} has exactly one owner");
        owners[0]
    }

    /// The slot ranges node `index` serves (its `myself` line in `CLUSTER NODES`).
    pub fn own_slots(&self, index: usize) -> Vec<std::ops::RangeInclusive<u16>> {
        let mut conn = node_connection(self.nodes[index].port).expect("node connection");
        let nodes: String = redis::cmd("CLUSTER")
            .arg("NODES")
            .query(&mut conn)
            .expect("CLUSTER NODES");
        let myself = nodes
            .lines()
            .find(|line| line.split(' ').nth(2).is_some_and(|f| f.contains("myself")))
            .expect("a myself line");
        myself
            .split(' ')
            .skip(8)
            .filter(|field| !field.starts_with('['))
            .map(|range| {
                let (start, end) = range.split_once('-').unwrap_or((range, range));
                start.parse().expect("slot")..=end.parse().expect("slot")
            })
            .collect()
    }

    /// How many keys node `index` holds in `slot` (zero on nodes that do not serve it).
    pub fn keys_in_slot(&self, index: usize, slot: u16) -> u64 {
        let mut conn = node_connection(self.nodes[index].port).expect("node connection");
        redis::cmd("CLUSTER")
            .arg("COUNTKEYSINSLOT")
            .arg(slot)
            .query(&mut conn)
            .expect("CLUSTER COUNTKEYSINSLOT")
    }
}

/// Which store the replicas of a test share.
pub enum Backend {
    /// One in-process memory store shared by the test's replicas.
    Memory(Arc<MemoryStore>),
    Redis(RedisServer),
    RedisCluster(RedisCluster),
}

impl Backend {
    pub fn memory() -> Backend {
        Backend::Memory(Arc::new(MemoryStore::new()))
    }

    pub fn redis() -> Backend {
        Backend::Redis(RedisServer::start())
    }

    pub fn redis_cluster() -> Backend {
        Backend::RedisCluster(RedisCluster::start())
    }

    /// A fresh store handle that keeps request ids for only `ttl` after a game's last one.
    pub async fn store_with_request_id_ttl(&self, ttl: Duration) -> Arc<dyn Store> {
        let choice = match self {
            Backend::Memory(_) => {
                return Arc::new(MemoryStore::with_request_id_ttl(ttl));
            }
            Backend::Redis(redis) => redis.choice(),
            Backend::RedisCluster(cluster) => cluster.choice(),
        };
        let StoreChoice::Redis(options) = choice else {
            unreachable!("a Redis backend's choice is Redis")
        };
        let options = RedisOptions {
            request_id_ttl: ttl,
            ..options
        };
        server::open_store(&StoreChoice::Redis(options))
            .await
            .expect("store")
    }

    /// The URL of a single Redis node backing the test, for raw commands on a game's keys
    /// (`None` for memory, and for a Cluster, whose keys live on several nodes).
    pub fn redis_url(&self) -> Option<String> {
        match self {
            Backend::Redis(redis) => Some(redis.url()),
            Backend::Memory(_) | Backend::RedisCluster(_) => None,
        }
    }

    /// A fresh store handle (its own connections, for Redis), as a new replica would open.
    pub async fn store(&self) -> Arc<dyn Store> {
        match self {
            Backend::Memory(store) => store.clone(),
            Backend::Redis(redis) => server::open_store(&redis.choice()).await.expect("store"),
            Backend::RedisCluster(cluster) => server::open_store(&cluster.choice())
                .await
                .expect("cluster store"),
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
        Replica::serving(backend.store().await, options).await
    }

    /// A replica serving `store` with `options`: for a store no [`Backend`] describes (a proxy
    /// in front of Redis, tighter deadlines).
    pub async fn serving(store: Arc<dyn Store>, options: ServiceOptions) -> Replica {
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
        connect(&format!("http://{}", self.address)).await
    }

    /// The replica's readiness (`tabula.v1.GameService` on the health service) as a
    /// `ServingStatus` number; -1 when the health check itself fails.
    pub async fn health(&self) -> i32 {
        let channel = tonic::transport::Channel::from_shared(format!("http://{}", self.address))
            .expect("url")
            .connect()
            .await
            .expect("connect");
        tonic_health::pb::health_client::HealthClient::new(channel)
            .check(tonic_health::pb::HealthCheckRequest {
                service: "tabula.v1.GameService".into(),
            })
            .await
            .map(|r| r.into_inner().status)
            .unwrap_or(-1)
    }
}

/// A client of the gRPC server at `url`, once it accepts connections (within 5 s).
pub async fn connect(url: &str) -> Client {
    for _ in 0..250 {
        if let Ok(client) = Client::connect(url.to_owned()).await {
            return client;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{url} does not accept connections");
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
        operator: None,
        signing: Some(deployment_key()),
        ..ServiceOptions::default()
    }
}

/// The signing key of the tests' in-process replicas: one for all of them, as every replica of a
/// deployment shares one (a finished game's log is then signed alike by whichever exports it).
pub fn deployment_key() -> Arc<tabula::signing::SigningKeys> {
    static KEY: std::sync::OnceLock<Arc<tabula::signing::SigningKeys>> = std::sync::OnceLock::new();
    KEY.get_or_init(|| Arc::new(tabula::signing::SigningKeys::generate().expect("randomness")))
        .clone()
}

/// The operator token the operator-API tests serve with.
pub const OPERATOR: &str = "op_test_0123456789abcdef";

/// A client of the operator's API (`AdminService`).
pub type Admin = pb::admin_service_client::AdminServiceClient<Channel>;

/// An operator client of the replica at `url`, once it accepts connections (within 5 s).
pub async fn admin_at(url: &str) -> Admin {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match Admin::connect(url.to_owned()).await {
            Ok(admin) => return admin,
            Err(error) => assert!(Instant::now() < deadline, "{url}: {error}"),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// An operator client of `replica`.
pub async fn admin(replica: &Replica) -> Admin {
    admin_at(&format!("http://{}", replica.address)).await
}

/// Creates tenant `id` and issues it a key, as the operator; returns the key.
pub async fn tenant_with_key(admin: &mut Admin, id: &str, name: &str) -> String {
    admin
        .create_tenant(authorized(
            pb::CreateTenantRequest {
                tenant_id: id.into(),
                display_name: name.into(),
                limits: None,
            },
            OPERATOR,
        ))
        .await
        .expect("CreateTenant");
    admin
        .issue_tenant_key(authorized(
            pb::IssueTenantKeyRequest {
                tenant_id: id.into(),
            },
            OPERATOR,
        ))
        .await
        .expect("IssueTenantKey")
        .into_inner()
        .key
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

/// `log` as a game read back from the archive exports it: the same log but for `created_by`,
/// which archive format 1 does not keep (docs/compatibility.md: archive format 2 will).
pub fn as_archived(log: &pb::GameLog) -> pb::GameLog {
    assert_eq!(
        log.created_by,
        tabula::RELEASE,
        "a live game's log names its release"
    );
    pb::GameLog {
        created_by: String::new(),
        ..log.clone()
    }
}

/// A seat's resignation, as it sends it through Act.
pub fn resign_action() -> pb::Action {
    pb::Action {
        game: Some(pb::action::Game::Table(pb::TableAction {
            kind: Some(pb::table_action::Kind::Resign(pb::table_action::Resign {})),
        })),
    }
}

pub fn medici_config() -> pb::GameConfig {
    pb::GameConfig {
        table: None,
        game: Some(pb::game_config::Game::MediciVsStrozzi(Default::default())),
    }
}

pub async fn create(
    client: &mut Client,
    config: pb::GameConfig,
    seed: u64,
) -> pb::CreateGameResponse {
    try_create(client, config, seed).await.expect("CreateGame")
}

/// [`create`], with the refusal when it fails.
pub async fn try_create(
    client: &mut Client,
    config: pb::GameConfig,
    seed: u64,
) -> Result<pb::CreateGameResponse, tonic::Status> {
    client
        .create_game(pb::CreateGameRequest {
            config: Some(config),
            seed: Some(Seed::from_u64(seed).0.to_vec()),
            ..Default::default()
        })
        .await
        .map(tonic::Response::into_inner)
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
    // The same choice the load generator makes: one way to pick a random legal move.
    tabula::cli::load::choose(legal, rng)
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
                narrate: false,
                game_id: game.game_id.clone(),
                version: None,
                min_version: None,
                omit_view: false,
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
                    narrate: false,
                    game_id: game.game_id.clone(),
                    version: None,
                    min_version: None,
                    omit_view: false,
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
            narrate: false,
            game_id: game.game_id.clone(),
            action: Some(action),
            expected_version: Some(mine.version),
            request_id: format!("step-{step}"),
            omit_view: false,
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

/// The spectator's view of a game.
pub async fn spectator_view(client: &mut Client, game_id: &str) -> pb::GetViewResponse {
    client
        .get_view(pb::GetViewRequest {
            narrate: false,
            game_id: game_id.to_owned(),
            version: None,
            min_version: None,
            omit_view: false,
        })
        .await
        .expect("GetView")
        .into_inner()
}

/// A seat's view of a game (with its legal actions when it must act).
pub async fn seat_view(client: &mut Client, game_id: &str, token: &str) -> pb::GetViewResponse {
    client
        .get_view(authorized(
            pb::GetViewRequest {
                narrate: false,
                game_id: game_id.to_owned(),
                version: None,
                min_version: None,
                omit_view: false,
            },
            token,
        ))
        .await
        .expect("GetView as a seat")
        .into_inner()
}

/// The game's log as a spectator may export it.
pub async fn export(client: &mut Client, game_id: &str) -> pb::GameLog {
    client
        .export_log(pb::ExportLogRequest {
            narrate: false,
            game_id: game_id.to_owned(),
        })
        .await
        .expect("ExportLog")
        .into_inner()
        .log
        .expect("log")
}

/// An Observe stream of `game_id` from `from_version` (the current version when `None`), as a
/// spectator.
pub async fn observe(
    client: &mut Client,
    game_id: &str,
    from_version: Option<u64>,
) -> tonic::Streaming<pb::ObserveResponse> {
    client
        .observe(pb::ObserveRequest {
            narrate: false,
            game_id: game_id.to_owned(),
            from_version,
        })
        .await
        .expect("Observe")
        .into_inner()
}

/// Every message of an Observe stream, until the server ends it.
pub async fn collect_stream(
    client: &mut Client,
    request: tonic::Request<pb::ObserveRequest>,
) -> Vec<pb::ObserveResponse> {
    use futures::StreamExt;
    let mut stream = client.observe(request).await.expect("Observe").into_inner();
    let mut messages = Vec::new();
    while let Some(message) = stream.next().await {
        messages.push(message.expect("stream message"));
    }
    messages
}

/// `GET /metrics` from a replica's Prometheus scrape endpoint (`--metrics-listen`) on `port`.
pub fn scrape_metrics(port: u16) -> String {
    use std::io::{Read, Write};
    let mut socket = std::net::TcpStream::connect(("127.0.0.1", port)).expect("metrics endpoint");
    socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("read timeout");
    socket
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: tabula\r\n\r\n")
        .expect("request");
    let mut response = String::new();
    socket.read_to_string(&mut response).expect("response");
    assert!(response.starts_with("HTTP/1.1 200 OK"), "{response}");
    response
}

/// The value of the sample of `metric` whose labels include every one of `labels` in a scrape
/// (0 when there is none yet).
pub fn metric_sample(scraped: &str, metric: &str, labels: &[&str]) -> f64 {
    let matching: Vec<f64> = scraped
        .lines()
        .filter(|line| {
            line.strip_prefix(metric)
                .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
        })
        .filter(|line| labels.iter().all(|label| line.contains(label)))
        .map(|line| {
            line.rsplit(' ')
                .next()
                .and_then(|value| value.parse().ok())
                .expect("a numeric sample")
        })
        .collect();
    assert!(
        matching.len() <= 1,
        "{metric} {labels:?} is ambiguous: {matching:?}"
    );
    matching.first().copied().unwrap_or(0.0)
}

/// Plays up to `steps` random legal moves through `client`; returns the version reached.
pub async fn play_steps(
    client: &mut Client,
    game: &pb::CreateGameResponse,
    rng: &mut GameRng,
    steps: usize,
) -> u64 {
    let mut version = spectator_view(client, &game.game_id).await.version;
    for step in 0..steps {
        let spectator = spectator_view(client, &game.game_id).await;
        let Some(seat) = spectator.status.expect("status").to_act else {
            break;
        };
        let mine = seat_view(client, &game.game_id, &token(game, seat)).await;
        let request = pb::ActRequest {
            narrate: false,
            game_id: game.game_id.clone(),
            action: Some(choose(&mine.legal_actions, rng)),
            expected_version: Some(mine.version),
            request_id: format!("steps-{}-{step}", mine.version),
            omit_view: false,
        };
        version = client
            .act(authorized(request, &token(game, seat)))
            .await
            .expect("Act")
            .into_inner()
            .version;
    }
    version
}

/// The games the replica behind `client` hosts (ListGameTypes, no token).
pub async fn list_game_types(client: &mut Client) -> Vec<pb::GameType> {
    client
        .list_game_types(pb::ListGameTypesRequest {})
        .await
        .expect("ListGameTypes")
        .into_inner()
        .game_types
}
