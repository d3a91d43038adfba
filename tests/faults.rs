//! Faults with real processes: Redis connections that go silent (half-open, through a TCP proxy
//! in the test that stops forwarding on its existing connections while new ones work), and a
//! Redis that is frozen (SIGSTOP) and thawed. The service must heal by itself, answer within its
//! deadlines meanwhile, and its observers must miss nothing or be told to resume elsewhere.

use crate::common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::servers::{self, TabulaServe};
use common::*;
use futures::StreamExt;
use tabula::games::Seed;
use tabula::games::common::GameRng;
use tabula::proto::v1 as pb;
use tabula::server::{self, StoreChoice};
use tabula::store::redis::RedisOptions;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tonic::Code;

/// A TCP proxy to a Redis that can black-hole every connection it has accepted so far: their
/// bytes are swallowed and nothing is closed (no FIN, no RST), as after a network fault, while
/// connections accepted later are forwarded normally.
struct BlackHoleProxy {
    port: u16,
    /// Connections accepted in an epoch below this are black-holed.
    cut_before: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl BlackHoleProxy {
    async fn start(target_port: u16) -> BlackHoleProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("address").port();
        let cut_before = Arc::new(AtomicU64::new(0));
        let epoch = cut_before.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(("127.0.0.1", target_port)).await else {
                    continue;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                let accepted_in = epoch.load(Ordering::SeqCst);
                let (client_read, client_write) = client.into_split();
                let (server_read, server_write) = server.into_split();
                tokio::spawn(forward(
                    client_read,
                    server_write,
                    accepted_in,
                    epoch.clone(),
                ));
                tokio::spawn(forward(
                    server_read,
                    client_write,
                    accepted_in,
                    epoch.clone(),
                ));
            }
        });
        BlackHoleProxy {
            port,
            cut_before,
            task,
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Black-holes every connection open now.
    fn cut_existing(&self) {
        self.cut_before.fetch_add(1, Ordering::SeqCst);
    }
}

impl Drop for BlackHoleProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn forward(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    accepted_in: u64,
    cut_before: Arc<AtomicU64>,
) {
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        let read = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        if accepted_in < cut_before.load(Ordering::SeqCst) {
            // Swallow this and everything after it, holding both sockets open for good.
            let _held = (from, to);
            std::future::pending::<()>().await;
            return;
        }
        if to.write_all(&buffer[..read]).await.is_err() {
            return;
        }
    }
}

/// A replica serving on loopback with a store opened from `choice`, stopped when dropped.
async fn replica_on(choice: &StoreChoice) -> Replica {
    let store = server::open_store(choice).await.expect("store");
    Replica::serving(store, test_options()).await
}

const SERVING: i32 = tonic_health::pb::health_check_response::ServingStatus::Serving as i32;

/// What an observer received: the versions in order, and how its stream ended.
#[derive(Default)]
struct Observed {
    versions: Vec<u64>,
    ended: Option<Result<(), tonic::Status>>,
}

/// Observes `game_id` from version 0 in the background.
fn observe_in_background(mut client: Client, game_id: String) -> Arc<Mutex<Observed>> {
    let observed = Arc::new(Mutex::new(Observed::default()));
    let record = observed.clone();
    tokio::spawn(async move {
        let request = pb::ObserveRequest {
            narrate: false,
            game_id,
            from_version: Some(0),
        };
        let mut stream = match client.observe(request).await {
            Ok(response) => response.into_inner(),
            Err(status) => {
                record.lock().expect("lock").ended = Some(Err(status));
                return;
            }
        };
        while let Some(message) = stream.next().await {
            match message {
                Ok(message) => record.lock().expect("lock").versions.push(message.version),
                Err(status) => {
                    record.lock().expect("lock").ended = Some(Err(status));
                    return;
                }
            }
        }
        record.lock().expect("lock").ended = Some(Ok(()));
    });
    observed
}

/// Waits up to `limit` for `condition`; the time it took, or `None`.
async fn wait_for(limit: Duration, mut condition: impl AsyncFnMut() -> bool) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if condition().await {
            return Some(start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    None
}

/// Black-holed connections: a replica whose every Redis connection went silent (Redis itself
/// healthy, new connections fine) heals within a few seconds; its observer misses no move played
/// meanwhile on another replica, and the game then finishes through both and verifies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_open_store_connections_heal_and_observers_miss_nothing() {
    let redis = RedisServer::start();
    let proxy = BlackHoleProxy::start(redis.port).await;
    let faulty = replica_on(&StoreChoice::Redis(RedisOptions::single(proxy.url()))).await;
    let direct = replica_on(&redis.choice()).await;
    let mut on_faulty = faulty.client().await;
    let mut on_direct = direct.client().await;

    let game = create(&mut on_faulty, medici_config(), 21).await;
    let mut rng = GameRng::from_seed(&Seed::from_u64(21));
    let observed = observe_in_background(faulty.client().await, game.game_id.clone());
    let before = play_steps(&mut on_faulty, &game, &mut rng, 3).await;
    assert!(
        wait_for(Duration::from_secs(5), async || {
            observed.lock().expect("lock").versions.last() == Some(&before)
        })
        .await
        .is_some(),
        "the observer follows before the fault"
    );

    proxy.cut_existing();
    let during = play_steps(&mut on_direct, &game, &mut rng, 20).await;
    assert!(during > before, "moves were played during the fault");

    // The faulty replica answers again within a few seconds (its first calls may be UNAVAILABLE).
    let game_id = game.game_id.clone();
    let healed = wait_for(Duration::from_secs(15), async || {
        let view = on_faulty
            .get_view(pb::GetViewRequest {
                narrate: false,
                game_id: game_id.clone(),
                version: None,
                min_version: None,
                omit_view: false,
            })
            .await;
        match view {
            Ok(view) => view.into_inner().version == during,
            Err(status) => {
                assert_eq!(status.code(), Code::Unavailable, "{status:?}");
                false
            }
        }
    })
    .await;
    let healed = healed.expect("the replica heals by itself");
    eprintln!("GetView on the faulty replica healed after {healed:?}");

    // Its observer catches up with every move played meanwhile.
    let caught_up = wait_for(Duration::from_secs(15), async || {
        observed.lock().expect("lock").versions.last() == Some(&during)
    })
    .await;
    {
        let observed = observed.lock().expect("lock");
        assert!(
            caught_up.is_some(),
            "observer caught up: got {:?}, ended {:?}",
            observed.versions,
            observed.ended
        );
        assert!(observed.ended.is_none(), "{:?}", observed.ended);
    }
    let health = wait_for(Duration::from_secs(10), async || {
        faulty.health().await == SERVING
    })
    .await;
    assert!(health.is_some(), "health is SERVING again");

    // Both replicas finish the game; the observer sees every version exactly once, in order.
    let mut clients = vec![on_faulty, on_direct];
    let last = play_random(&mut clients, &game, &mut rng, 5_000).await;
    let ended = wait_for(Duration::from_secs(15), async || {
        observed.lock().expect("lock").ended.is_some()
    })
    .await;
    assert!(ended.is_some(), "the stream ends after the final state");
    let observed = std::mem::take(&mut *observed.lock().expect("lock"));
    assert!(
        matches!(observed.ended, Some(Ok(()))),
        "{:?}",
        observed.ended
    );
    let expected: Vec<u64> = (0..=last).collect();
    assert_eq!(observed.versions, expected, "no gap, no repeat");
    let log = export(&mut clients[0], &game.game_id).await;
    let verified = clients[1]
        .verify_log(pb::VerifyLogRequest { log: Some(log) })
        .await
        .expect("VerifyLog")
        .into_inner();
    assert!(verified.valid, "{verified:?}");
}

/// A store choice with short deadlines, so the fault tests stay fast.
fn quick_choice(url: String, deadline: Duration) -> StoreChoice {
    StoreChoice::Redis(RedisOptions {
        response_timeout: deadline,
        connection_timeout: deadline,
        ..RedisOptions::single(url)
    })
}

/// `status` (UNAVAILABLE) says what kind of store failure it was and that a retry may help, in
/// the service's words: nothing of Redis's own error text (its server's address, a script's
/// line, its memory settings), which goes to the replica's log instead.
fn assert_names_no_store(status: &tonic::Status, redis_url: &str) {
    let message = status.message();
    let kinds = [
        "no answer in time",
        "the connection failed",
        "the command was refused",
    ];
    assert!(
        kinds
            .iter()
            .any(|kind| message == format!("game store unavailable: {kind}; retry later")),
        "{status:?}"
    );
    let port = redis_url.rsplit(':').next().expect("a port");
    assert!(!message.contains(port), "{status:?}");
}

/// A `tabula serve` replica on `redis_url` logging JSON lines to `log` (client seeds allowed, no
/// CreateGame rate limit, no access log), with `extra` flags.
fn json_logged_replica(redis_url: &str, extra: &[&str], log: &std::path::Path) -> TabulaServe {
    let mut args = vec![
        "--redis-url",
        redis_url,
        "--allow-client-seed",
        "--create-game-rate",
        "0",
        "--log-format",
        "json",
        "--access-log",
        "false",
    ];
    args.extend_from_slice(extra);
    TabulaServe::logged(&args, log)
}

/// Redis refusing commands (here: over its `maxmemory`, so every write is refused with `OOM`):
/// the callers get UNAVAILABLE in the service's words, the replica logs Redis's own once (not
/// once per refusal), and calls work again once Redis accepts them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_redis_refuses_is_unavailable_in_the_services_words_and_logged_once() {
    let redis = servers::ServerProcess::start("redis-server", &[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("replica.log");
    let replica = json_logged_replica(&redis.url(), &[], &log);
    let mut client = replica.client().await;
    create(&mut client, medici_config(), 70).await;

    let mut admin = redis.connection();
    let set_maxmemory = |admin: &mut redis::Connection, bytes: &str| {
        redis::cmd("CONFIG")
            .arg("SET")
            .arg("maxmemory")
            .arg(bytes)
            .query::<()>(admin)
            .expect("CONFIG SET maxmemory");
    };
    set_maxmemory(&mut admin, "1");
    let mut refused = 0;
    for seed in 71..91 {
        let created = try_create(&mut client, medici_config(), seed).await;
        let status = created.expect_err("Redis refuses every write");
        assert_eq!(status.code(), Code::Unavailable, "{status:?}");
        assert_eq!(
            status.message(),
            "game store unavailable: the command was refused; retry later",
            "{status:?}"
        );
        assert_names_no_store(&status, &redis.url());
        refused += 1;
    }
    set_maxmemory(&mut admin, "0");
    create(&mut client, medici_config(), 91).await;

    tokio::time::sleep(Duration::from_millis(300)).await;
    let text = std::fs::read_to_string(&log).expect("the replica's log");
    let logged: Vec<&str> = text
        .lines()
        .filter(|line| line.contains("Redis refused a command"))
        .collect();
    assert_eq!(logged.len(), 1, "one line for {refused} refusals: {text}");
    assert!(
        logged[0].contains("OOM"),
        "Redis's words are logged: {}",
        logged[0]
    );
}

/// Redis frozen (SIGSTOP) and thawed: meanwhile every call fails within the deadline (a new
/// connection's handshake plus one command), then the replica recovers by itself and the game
/// finishes and verifies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frozen_redis_fails_fast_and_recovers_by_itself() {
    let deadline = Duration::from_millis(500);
    let redis = servers::ServerProcess::start("redis-server", &[]);
    let replica = replica_on(&quick_choice(redis.url(), deadline)).await;
    let mut client = replica.client().await;
    let game = create(&mut client, medici_config(), 31).await;
    let mut rng = GameRng::from_seed(&Seed::from_u64(31));
    let before = play_steps(&mut client, &game, &mut rng, 3).await;
    assert!(before > 0, "moves were played before the freeze");
    let observed = observe_in_background(replica.client().await, game.game_id.clone());

    redis.signal("-STOP");
    let frozen_at = Instant::now();
    let bound = deadline * 2 + Duration::from_millis(400);
    let mut slowest = Duration::ZERO;
    let mut calls = 0;
    while frozen_at.elapsed() < Duration::from_secs(3) {
        let started = Instant::now();
        let result = client
            .get_view(pb::GetViewRequest {
                narrate: false,
                game_id: game.game_id.clone(),
                version: None,
                min_version: None,
                omit_view: false,
            })
            .await;
        let took = started.elapsed();
        slowest = slowest.max(took);
        calls += 1;
        let refused = result.expect_err("the store is frozen");
        assert_eq!(refused.code(), Code::Unavailable, "{refused:?}");
        assert!(
            took <= bound,
            "a call waited {took:?} (bound {bound:?}): {refused:?}"
        );
    }
    assert!(calls >= 3, "{calls} calls while frozen");
    redis.signal("-CONT");
    eprintln!("slowest call while frozen: {slowest:?} (bound {bound:?})");

    let game_id = game.game_id.clone();
    let recovered = wait_for(Duration::from_secs(10), async || {
        client
            .get_view(pb::GetViewRequest {
                narrate: false,
                game_id: game_id.clone(),
                version: None,
                min_version: None,
                omit_view: false,
            })
            .await
            .is_ok()
    })
    .await;
    assert!(recovered.is_some(), "the replica recovers by itself");
    let health = wait_for(Duration::from_secs(10), async || {
        replica.health().await == SERVING
    })
    .await;
    assert!(health.is_some(), "health is SERVING again");

    let mut clients = vec![client];
    let last = play_random(&mut clients, &game, &mut rng, 5_000).await;
    // The observer either followed throughout or was told to resume (UNAVAILABLE); either way
    // what it got has no gap.
    wait_for(Duration::from_secs(10), async || {
        observed.lock().expect("lock").ended.is_some()
    })
    .await;
    let observed = std::mem::take(&mut *observed.lock().expect("lock"));
    let got = &observed.versions;
    assert!(
        got.windows(2).all(|pair| pair[1] == pair[0] + 1),
        "no gap: {got:?}"
    );
    match &observed.ended {
        Some(Ok(())) => assert_eq!(got.last(), Some(&last)),
        Some(Err(status)) => assert_eq!(status.code(), Code::Unavailable, "{status:?}"),
        None => panic!("the stream neither ended nor finished: {got:?}"),
    }
    let log = export(&mut clients[0], &game.game_id).await;
    let verified = clients[0]
        .verify_log(pb::VerifyLogRequest { log: Some(log) })
        .await
        .expect("VerifyLog")
        .into_inner();
    assert!(verified.valid, "{verified:?}");
}

/// XRANGE's reply: entry ids with their field/value pairs.
type StreamEntries = Vec<(String, Vec<(String, Vec<u8>)>)>;

/// One acknowledged move: the game, the version, the request id.
type Acknowledged = (String, u64, String);

/// Plays `game` to its end, retrying every call that fails until it succeeds; each Act is retried
/// with its request id until it is answered, so a move is applied at most once. Returns the
/// acknowledged moves.
async fn play_through_faults(
    mut client: Client,
    game: pb::CreateGameResponse,
    seed: u64,
) -> Vec<Acknowledged> {
    let mut rng = GameRng::from_seed(&Seed::from_u64(seed));
    let mut acknowledged = Vec::new();
    let give_up = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < give_up, "game {} stuck", game.game_id);
        let Ok(view) = client
            .get_view(pb::GetViewRequest {
                narrate: false,
                game_id: game.game_id.clone(),
                version: None,
                min_version: None,
                omit_view: false,
            })
            .await
        else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let view = view.into_inner();
        let Some(seat) = view.status.expect("status").to_act else {
            return acknowledged;
        };
        let Ok(mine) = client
            .get_view(authorized(
                pb::GetViewRequest {
                    narrate: false,
                    game_id: game.game_id.clone(),
                    version: None,
                    min_version: None,
                    omit_view: false,
                },
                &token(&game, seat),
            ))
            .await
        else {
            continue;
        };
        let mine = mine.into_inner();
        let request_id = format!("{}-v{}", game.game_id, mine.version);
        let request = pb::ActRequest {
            narrate: false,
            game_id: game.game_id.clone(),
            action: Some(choose(&mine.legal_actions, &mut rng)),
            expected_version: Some(mine.version),
            request_id: request_id.clone(),
            omit_view: false,
        };
        loop {
            assert!(Instant::now() < give_up, "game {} stuck", game.game_id);
            match client
                .act(authorized(request.clone(), &token(&game, seat)))
                .await
            {
                Ok(response) => {
                    let version = response.into_inner().version;
                    assert_eq!(
                        version,
                        mine.version + 1,
                        "the move lands where it was sent"
                    );
                    acknowledged.push((game.game_id.clone(), version, request_id.clone()));
                    break;
                }
                Err(status) if matches!(status.code(), Code::Unavailable | Code::Unknown) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(status) => panic!("Act refused: {status:?}"),
            }
        }
    }
}

/// Redis SIGKILLed and restarted twice under load (AOF with `appendfsync always`), clients
/// retrying by request id: no acknowledged move is lost, none is applied twice, every game
/// verifies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_killed_under_load_loses_nothing_acknowledged() {
    let mut redis = servers::ServerProcess::start(
        "redis-server",
        &["--appendonly", "yes", "--appendfsync", "always"],
    );
    let replica = replica_on(&quick_choice(redis.url(), Duration::from_millis(500))).await;
    let mut players = Vec::new();
    for n in 0..8u64 {
        let mut client = replica.client().await;
        let game = create(&mut client, medici_config(), 40 + n).await;
        players.push(tokio::spawn(play_through_faults(client, game, 40 + n)));
    }
    for _ in 0..2 {
        tokio::time::sleep(Duration::from_millis(700)).await;
        redis.kill();
        tokio::time::sleep(Duration::from_millis(300)).await;
        redis.restart();
    }
    let mut acknowledged = Vec::new();
    for player in players {
        acknowledged.extend(player.await.expect("player"));
    }
    assert!(acknowledged.len() > 100, "{} moves", acknowledged.len());

    let mut conn = redis.connection();
    let mut client = replica.client().await;
    let mut games: Vec<&String> = acknowledged.iter().map(|(g, _, _)| g).collect();
    games.dedup();
    for game_id in games {
        let stream: StreamEntries = redis::cmd("XRANGE")
            .arg(format!("tabula:{{{game_id}}}:log"))
            .arg("-")
            .arg("+")
            .query(&mut conn)
            .expect("XRANGE");
        let request_ids: Vec<String> = stream
            .iter()
            .map(|(_, fields)| {
                let req = fields.iter().find(|(name, _)| name == "req").expect("req");
                String::from_utf8_lossy(&req.1).into_owned()
            })
            .collect();
        let unique: std::collections::HashSet<&String> = request_ids.iter().collect();
        assert_eq!(unique.len(), request_ids.len(), "no move applied twice");
        for (_, version, request_id) in acknowledged.iter().filter(|(g, _, _)| g == game_id) {
            assert_eq!(
                request_ids.get(*version as usize - 1),
                Some(request_id),
                "acknowledged version {version} of {game_id} is in the log"
            );
        }
        let log = export(&mut client, game_id).await;
        let verified = client
            .verify_log(pb::VerifyLogRequest { log: Some(log) })
            .await
            .expect("VerifyLog")
            .into_inner();
        assert!(verified.valid, "{game_id}: {verified:?}");
    }
}

/// `tabula serve` (the real binary) against the Redis at `redis_url`, with no rate limits.
fn serve_binary(redis_url: &str) -> TabulaServe {
    TabulaServe::start(&[
        "--redis-url",
        redis_url,
        "--allow-client-seed",
        "--create-game-rate",
        "0",
        "--act-rate-per-token",
        "0",
        "--observe-rate-per-token",
        "0",
        "--observe-rate-per-address",
        "0",
    ])
}

/// Whether a failed call means "this replica is gone or cannot answer": try another.
fn replica_failed(status: &tonic::Status) -> bool {
    matches!(
        status.code(),
        Code::Unavailable | Code::Unknown | Code::Cancelled | Code::Internal
    )
}

/// Plays `game` to its end on `clients[0]`, moving to the next client whenever a call fails as a
/// dead replica does; each Act is retried with its request id. Returns the final version.
async fn play_with_failover(
    mut clients: Vec<Client>,
    game: pb::CreateGameResponse,
    seed: u64,
) -> u64 {
    let mut rng = GameRng::from_seed(&Seed::from_u64(seed));
    let mut current = 0;
    let give_up = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < give_up, "stuck");
        let client = &mut clients[current];
        let spectator = match client
            .get_view(pb::GetViewRequest {
                narrate: false,
                game_id: game.game_id.clone(),
                version: None,
                min_version: None,
                omit_view: false,
            })
            .await
        {
            Ok(view) => view.into_inner(),
            Err(status) if replica_failed(&status) => {
                current = (current + 1).min(clients.len() - 1);
                continue;
            }
            Err(status) => panic!("GetView: {status:?}"),
        };
        let Some(seat) = spectator.status.expect("status").to_act else {
            return spectator.version;
        };
        let mine = match client
            .get_view(authorized(
                pb::GetViewRequest {
                    narrate: false,
                    game_id: game.game_id.clone(),
                    version: None,
                    min_version: None,
                    omit_view: false,
                },
                &token(&game, seat),
            ))
            .await
        {
            Ok(view) => view.into_inner(),
            Err(status) if replica_failed(&status) => {
                current = (current + 1).min(clients.len() - 1);
                continue;
            }
            Err(status) => panic!("GetView as a seat: {status:?}"),
        };
        let request = pb::ActRequest {
            narrate: false,
            game_id: game.game_id.clone(),
            action: Some(choose(&mine.legal_actions, &mut rng)),
            expected_version: Some(mine.version),
            request_id: format!("move-{}", mine.version),
            omit_view: false,
        };
        loop {
            assert!(Instant::now() < give_up, "stuck");
            match clients[current]
                .act(authorized(request.clone(), &token(&game, seat)))
                .await
            {
                Ok(response) => {
                    assert_eq!(response.into_inner().version, mine.version + 1);
                    // At a human-ish pace, so the replica dies mid-game.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    break;
                }
                Err(status) if replica_failed(&status) => {
                    current = (current + 1).min(clients.len() - 1);
                }
                Err(status) => panic!("Act: {status:?}"),
            }
        }
    }
}

/// Observes `game_id` from version 0 on `clients[0]`; when a stream breaks, resumes on the next
/// client from the last version seen. Returns every version seen (the resumed stream's first
/// message, the state at the version already seen, is not counted twice) once the game ends.
async fn observe_with_failover(mut clients: Vec<Client>, game_id: String) -> Vec<u64> {
    let mut versions: Vec<u64> = Vec::new();
    let mut current = 0;
    let give_up = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < give_up, "observer stuck at {versions:?}");
        let request = pb::ObserveRequest {
            narrate: false,
            game_id: game_id.clone(),
            from_version: Some(versions.last().copied().unwrap_or(0)),
        };
        let mut stream = match clients[current].observe(request).await {
            Ok(response) => response.into_inner(),
            Err(status) if replica_failed(&status) => {
                current = (current + 1).min(clients.len() - 1);
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
            Err(status) => panic!("Observe: {status:?}"),
        };
        loop {
            match stream.next().await {
                Some(Ok(message)) => {
                    if versions.last() != Some(&message.version) {
                        versions.push(message.version);
                    }
                    if message.status.is_some_and(|s| s.finished) {
                        return versions;
                    }
                }
                Some(Err(status)) => {
                    assert!(replica_failed(&status), "{status:?}");
                    current = (current + 1).min(clients.len() - 1);
                    break;
                }
                None => {
                    current = (current + 1).min(clients.len() - 1);
                    break;
                }
            }
        }
    }
}

/// A replica (the real binary) SIGKILLed mid-game: its clients and observers carry on on the
/// other replica with no gap, and the game verifies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_mid_game_hands_over_with_no_gap() {
    let redis = RedisServer::start();
    let mut doomed = serve_binary(&redis.url());
    let survivor = serve_binary(&redis.url());
    let mut setup = survivor.client().await;
    let game = create(&mut setup, medici_config(), 51).await;
    let observer = tokio::spawn(observe_with_failover(
        vec![doomed.client().await, survivor.client().await],
        game.game_id.clone(),
    ));
    let player = tokio::spawn(play_with_failover(
        vec![doomed.client().await, survivor.client().await],
        game.clone(),
        51,
    ));
    // Let play start on the doomed replica, then kill it mid-game.
    let game_id = game.game_id.clone();
    let started = wait_for(Duration::from_secs(10), async || {
        spectator_view(&mut setup, &game_id).await.version >= 10
    })
    .await;
    assert!(started.is_some(), "play started");
    doomed.kill();
    let at_kill = spectator_view(&mut setup, &game.game_id).await.version;
    let last = player.await.expect("player");
    let seen = observer.await.expect("observer");
    let expected: Vec<u64> = (0..=last).collect();
    assert_eq!(
        seen, expected,
        "the observer saw every version once, in order"
    );
    let log = export(&mut setup, &game.game_id).await;
    let verified = setup
        .verify_log(pb::VerifyLogRequest { log: Some(log) })
        .await
        .expect("VerifyLog")
        .into_inner();
    assert!(verified.valid, "{verified:?}");
    assert!(
        last > at_kill,
        "the game went on after the kill (from {at_kill} to {last})"
    );
    eprintln!("replica killed at version {at_kill}; the game ended at {last}");
}

/// Redis gone for good: an Observe stream does not hang silently — once its replica has failed to
/// follow the log for a block time plus two deadlines, it ends with UNAVAILABLE.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_observer_whose_replica_cannot_follow_is_told_to_resume_elsewhere() {
    let mut redis = servers::ServerProcess::start("redis-server", &[]);
    let replica = replica_on(&quick_choice(redis.url(), Duration::from_millis(500))).await;
    let mut client = replica.client().await;
    let game = create(&mut client, medici_config(), 61).await;
    let observed = observe_in_background(replica.client().await, game.game_id.clone());
    let first = wait_for(Duration::from_secs(5), async || {
        !observed.lock().expect("lock").versions.is_empty()
    })
    .await;
    assert!(first.is_some(), "the stream started");
    redis.kill();
    let ended = wait_for(Duration::from_secs(15), async || {
        observed.lock().expect("lock").ended.is_some()
    })
    .await;
    let ended_after = ended.expect("the stream ends instead of hanging");
    eprintln!("the stream ended {ended_after:?} after Redis died");
    let observed = std::mem::take(&mut *observed.lock().expect("lock"));
    match observed.ended {
        Some(Err(status)) => assert_eq!(status.code(), Code::Unavailable, "{status:?}"),
        other => panic!("expected UNAVAILABLE, got {other:?}"),
    }
}

/// Issue #24 (6): while Redis is down, a `tabula serve` replica logs the outage's changes, not
/// each failure: one warning when it starts (the replica once logged "Redis connection retired"
/// for every failed command, 12,102 lines over a few short outages), and one line when Redis
/// answers again, saying how long it was down and how many commands failed. A few seconds of
/// outage under a steady stream of calls, each of which fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_outage_is_logged_as_state_changes_not_per_failure() {
    let mut redis = servers::ServerProcess::start("redis-server", &[]);
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("replica.log");
    let replica = json_logged_replica(&redis.url(), &["--redis-timeout-ms", "500"], &log);
    let mut client = replica.client().await;
    create(&mut client, medici_config(), 60).await;

    // The failures tell the caller to retry, in the service's words: none names the store.
    let redis_url = redis.url();
    redis.kill();
    let outage = Duration::from_secs(3);
    let until = Instant::now() + outage;
    let mut callers = Vec::new();
    for caller in 0..4u64 {
        let mut client = client.clone();
        let redis_url = redis_url.clone();
        callers.push(tokio::spawn(async move {
            let mut failed = 0u64;
            let mut seed = 1000 * (caller + 1);
            while Instant::now() < until {
                seed += 1;
                let created = try_create(&mut client, medici_config(), seed).await;
                if let Err(status) = created {
                    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
                    assert_names_no_store(&status, &redis_url);
                    failed += 1;
                }
            }
            failed
        }));
    }
    let mut failed = 0;
    for caller in callers {
        failed += caller.await.expect("caller");
    }
    assert!(
        failed >= 100,
        "only {failed} calls failed during the outage"
    );

    redis.restart();
    let back = wait_for(Duration::from_secs(20), async || {
        try_create(&mut client, medici_config(), 61).await.is_ok()
    })
    .await;
    assert!(back.is_some(), "calls work again once Redis is back");
    tokio::time::sleep(Duration::from_millis(300)).await;

    let text = std::fs::read_to_string(&log).expect("the replica's log");
    let warnings: Vec<&str> = text
        .lines()
        .filter(|line| line.contains("\"level\":\"WARN\""))
        .collect();
    let about_redis = |needle: &str| text.lines().filter(|line| line.contains(needle)).count();
    assert_eq!(
        about_redis("Redis connection retired"),
        0,
        "no line per retired connection"
    );
    assert_eq!(
        about_redis("Redis connection failed"),
        1,
        "one line when the outage starts: {warnings:#?}"
    );
    let up: Vec<&str> = text
        .lines()
        .filter(|line| line.contains("Redis reachable again after"))
        .collect();
    assert_eq!(up.len(), 1, "one line when it ends: {text}");
    let counted = up[0]
        .split("\"failures\":")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|digits| digits.parse::<u64>().ok())
        .expect("the failures counted");
    assert!(
        counted >= failed,
        "the end of the outage counts every failed command ({counted} < {failed})"
    );
    // Everything else that failed meanwhile (readiness, the turn-clock sweeps, the bot sweeps)
    // says so once too: a handful of warnings for thousands of failures, not one each.
    assert!(
        warnings.len() <= 6,
        "{} warnings for {failed} failed calls: {warnings:#?}",
        warnings.len()
    );
}
