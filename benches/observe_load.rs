//! Observers at scale: `--games` games with `--observers` Observe streams each, on one replica
//! (the real `tabula serve` binary, in its own process, so its memory is its own), while
//! `--players` clients play `--moves` random legal moves in every game through the same replica.
//!
//! `cargo bench --bench observe_load -- [--games N] [--observers M] [--moves K] [--players P]`
//!
//! Reports the Redis connections the replica holds (`CLIENT LIST` on the bench's own
//! `redis-server`), the replica's resident memory per observer (its RSS with every stream open,
//! minus before), Observe delivery latency (Act acknowledged → message on a stream; 0 when the
//! message came first) and Act latency.

#[path = "../tests/common/mod.rs"]
mod common;

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use futures::StreamExt;
use hdrhistogram::Histogram;
use tabula::games::common::GameRng;
use tabula::games::{Seed, Viewer};
use tabula::hosting;
use tabula::proto::v1 as pb;
use tokio::sync::mpsc;

struct Args {
    games: usize,
    observers: usize,
    moves: u64,
    players: usize,
}

fn args() -> Args {
    let mut args = Args {
        games: 1_000,
        observers: 10,
        moves: 20,
        players: 32,
    };
    let mut iter = std::env::args().skip(1);
    while let Some(arg) = iter.next() {
        let mut number =
            |default: usize| iter.next().and_then(|v| v.parse().ok()).unwrap_or(default);
        match arg.as_str() {
            "--games" => args.games = number(args.games),
            "--observers" => args.observers = number(args.observers),
            "--moves" => args.moves = number(args.moves as usize) as u64,
            "--players" => args.players = number(args.players).max(1),
            _ => {} // cargo bench passes --bench
        }
    }
    args
}

/// Observe streams per gRPC connection (the server allows 64 by default).
const STREAMS_PER_CONNECTION: usize = 50;

/// `tabula serve` on a free port with the edge's rate limits off, killed when dropped.
struct ServeProcess {
    child: Child,
    url: String,
}

impl ServeProcess {
    fn start(redis_url: &str, streams: usize) -> ServeProcess {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let child = Command::new(env!("CARGO_BIN_EXE_tabula"))
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .args(["--redis-url", redis_url, "--allow-client-seed"])
            .args(["--create-game-rate", "0", "--act-rate-per-address", "0"])
            .args(["--act-rate-per-token", "0", "--observe-rate-per-token", "0"])
            .args(["--observe-rate-per-address", "0"])
            .args(["--max-observe-per-replica", &(streams + 100).to_string()])
            .args(["--access-log", "false", "--log-filter", "warn"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("tabula serve");
        ServeProcess {
            child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }

    /// The process's resident memory, in bytes (`VmRSS` in /proc).
    fn resident_bytes(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("/proc/<pid>/status");
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| {
                rest.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
            .map(|kb| kb * 1024)
            .expect("VmRSS")
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn connect(url: &str) -> Client {
    for _ in 0..250 {
        if let Ok(client) = Client::connect(url.to_owned()).await {
            return client;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the replica at {url} did not accept connections");
}

/// The clients connected to the Redis, except the connection asking.
fn redis_clients(redis: &RedisServer) -> usize {
    let mut connection = redis::Client::open(redis.url())
        .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(2)))
        .expect("redis connection");
    let list: String = redis::cmd("CLIENT")
        .arg("LIST")
        .query(&mut connection)
        .expect("CLIENT LIST");
    list.lines().count().saturating_sub(1)
}

/// Acts (version, acknowledged at) per game.
type Acks = Vec<Vec<(u64, Instant)>>;

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let args = args();
    let streams = args.games * args.observers;
    let redis = RedisServer::start();
    let replica = ServeProcess::start(&redis.url(), streams);
    let mut setup = connect(&replica.url).await;
    println!(
        "tabula observe_load: {} games × {} observers = {streams} streams on one replica, {} moves per game by {} players",
        args.games, args.observers, args.moves, args.players
    );

    let mut games = Vec::with_capacity(args.games);
    for n in 0..args.games as u64 {
        games.push((
            create(&mut setup, medici_config(), 90_000 + n).await,
            90_000 + n,
        ));
    }
    let connections_before = redis_clients(&redis);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let memory_before = replica.resident_bytes();

    // (game index, version, received at) from every stream.
    let (received, mut received_rx) = mpsc::unbounded_channel::<(usize, u64, Instant)>();
    let (opened, mut opened_rx) = mpsc::unbounded_channel::<()>();
    let mut clients = Vec::new();
    let mut stream_number = 0;
    for (index, (game, _)) in games.iter().enumerate() {
        for _ in 0..args.observers {
            if stream_number % STREAMS_PER_CONNECTION == 0 {
                clients.push(connect(&replica.url).await);
            }
            stream_number += 1;
            let mut client = clients.last().expect("a client").clone();
            let game_id = game.game_id.clone();
            let (received, opened) = (received.clone(), opened.clone());
            let last = args.moves;
            tokio::spawn(async move {
                let request = pb::ObserveRequest {
                    narrate: false,
                    game_id,
                    from_version: None,
                };
                let mut stream = client.observe(request).await.expect("Observe").into_inner();
                let _ = opened.send(());
                while let Some(Ok(message)) = stream.next().await {
                    if message.version > 0 {
                        let _ = received.send((index, message.version, Instant::now()));
                    }
                    if message.version >= last {
                        break;
                    }
                }
            });
        }
    }
    drop((received, opened));
    tokio::time::timeout(Duration::from_secs(300), async {
        for _ in 0..streams {
            opened_rx.recv().await.expect("a stream opened");
        }
    })
    .await
    .expect("every stream opened within 300 s");
    tokio::time::sleep(Duration::from_secs(2)).await; // subscriptions confirmed
    let memory_observed = replica.resident_bytes();
    let connections_observed = redis_clients(&redis);
    println!(
        "Redis connections held by the replica: {connections_before} before any observer, {connections_observed} with {streams} streams open"
    );
    println!(
        "replica memory: {:.1} MiB before, {:.1} MiB with every stream open = {:.2} KiB per observer",
        memory_before as f64 / 1048576.0,
        memory_observed as f64 / 1048576.0,
        memory_observed.saturating_sub(memory_before) as f64 / 1024.0 / streams.max(1) as f64
    );

    // Players: each plays its share of the games, one move per game per round.
    let acks: Arc<std::sync::Mutex<Acks>> =
        Arc::new(std::sync::Mutex::new(vec![Vec::new(); args.games]));
    let mut players = Vec::new();
    let per_player: Vec<Vec<(usize, pb::CreateGameResponse, u64)>> = (0..args.players)
        .map(|lane| {
            games
                .iter()
                .enumerate()
                .filter(|(index, _)| index % args.players == lane)
                .map(|(index, (game, seed))| (index, game.clone(), *seed))
                .collect()
        })
        .collect();
    let started = Instant::now();
    for (lane, share) in per_player.into_iter().enumerate() {
        let mut client = connect(&replica.url).await;
        let acks = acks.clone();
        let moves = args.moves;
        players.push(tokio::spawn(async move {
            let mut latencies = Histogram::<u64>::new(3).expect("histogram");
            let mut rng = GameRng::from_seed(&Seed::from_u64(lane as u64));
            let mut mirrors: Vec<_> = share
                .iter()
                .map(|(_, _, seed)| {
                    hosting::setup(&medici_config(), &Seed::from_u64(*seed)).expect("setup")
                })
                .collect();
            for round in 0..moves {
                for ((index, game, _), mirror) in share.iter().zip(&mut mirrors) {
                    let Some(seat) = mirror.status().to_act else {
                        continue;
                    };
                    let action = choose(&mirror.legal_actions(Viewer::Seat(seat)), &mut rng);
                    let request = pb::ActRequest {
                        narrate: false,
                        game_id: game.game_id.clone(),
                        action: Some(action.clone()),
                        expected_version: Some(round),
                        request_id: format!("r{round}"),
                        omit_view: false,
                    };
                    let begin = Instant::now();
                    let version = client
                        .act(authorized(request, &token(game, seat)))
                        .await
                        .expect("Act")
                        .into_inner()
                        .version;
                    let acknowledged = Instant::now();
                    latencies
                        .record((acknowledged - begin).as_micros() as u64)
                        .expect("record");
                    acks.lock().expect("acks")[*index].push((version, acknowledged));
                    mirror.apply(seat, &action).expect("mirror agrees");
                }
            }
            latencies
        }));
    }
    let mut act_latency = Histogram::<u64>::new(3).expect("histogram");
    for player in players {
        act_latency
            .add(player.await.expect("player"))
            .expect("same bounds");
    }
    let elapsed = started.elapsed().as_secs_f64();

    let mut receipts = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(receipt) = received_rx.recv().await {
            receipts.push(receipt);
        }
    })
    .await;
    let acks = acks.lock().expect("acks");
    let mut delivery = Histogram::<u64>::new(3).expect("histogram");
    for (index, version, at) in &receipts {
        if let Some((_, acknowledged)) = acks[*index].iter().find(|(v, _)| v == version) {
            delivery
                .record(at.saturating_duration_since(*acknowledged).as_micros() as u64)
                .expect("record");
        }
    }
    let acts = act_latency.len();
    let expected_receipts = acts as usize * args.observers;
    println!(
        "Act: {acts} acts in {elapsed:.1} s = {:.0} acts/s; p50 {} µs, p99 {} µs, max {} µs",
        acts as f64 / elapsed,
        act_latency.value_at_quantile(0.50),
        act_latency.value_at_quantile(0.99),
        act_latency.max()
    );
    println!(
        "Observe delivery (Act acknowledged → stream message): {} of {expected_receipts} messages; p50 {} µs, p99 {} µs, max {} µs",
        receipts.len(),
        delivery.value_at_quantile(0.50),
        delivery.value_at_quantile(0.99),
        delivery.max()
    );
}
