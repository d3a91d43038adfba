//! Observers at scale, with real processes: the Redis connections a replica holds do not grow with
//! the number of games observed on it (one subscriber per Redis node, not one connection per
//! game), every stream still receives every move played on another replica, and a game's channel
//! is let go once its last observer on the replica has left.

use crate::common;

use std::collections::HashSet;
use std::time::Duration;

use common::*;
use futures::StreamExt;
use tabula::games::Seed;
use tabula::games::common::GameRng;
use tabula::proto::v1 as pb;
use tokio::sync::mpsc;

/// Games observed at once on the observing replica.
const GAMES: usize = 500;
/// Moves played in each game while it is observed.
const MOVES: u64 = 3;
/// Observe streams per gRPC connection (below the server's per-connection cap).
const STREAMS_PER_CONNECTION: usize = 50;
/// The most Redis connections the observing replica may hold per Redis node.
const MAX_CONNECTIONS_PER_NODE: usize = 8;

/// The ports of the backend's Redis nodes.
fn node_ports(backend: &Backend) -> Vec<u16> {
    match backend {
        Backend::Redis(redis) => vec![redis.port],
        Backend::RedisCluster(cluster) => cluster.ports().collect(),
        Backend::Memory(_) => unreachable!("a Redis backend"),
    }
}

fn node_connection(port: u16) -> redis::Connection {
    redis::Client::open(format!("redis://127.0.0.1:{port}/"))
        .and_then(|client| client.get_connection_with_timeout(Duration::from_secs(2)))
        .expect("a connection to the node")
}

/// The ids of the clients connected to the node, except the connection asking.
fn client_ids(port: u16) -> HashSet<u64> {
    let mut connection = node_connection(port);
    let own: u64 = redis::cmd("CLIENT")
        .arg("ID")
        .query(&mut connection)
        .expect("CLIENT ID");
    let list: String = redis::cmd("CLIENT")
        .arg("LIST")
        .query(&mut connection)
        .expect("CLIENT LIST");
    list.lines()
        .filter_map(|line| {
            line.split(' ')
                .find_map(|field| field.strip_prefix("id="))
                .and_then(|id| id.parse().ok())
        })
        .filter(|&id| id != own)
        .collect()
}

/// How many of `games`' announcement channels have a subscriber, summed over the nodes. On a
/// Cluster, a node answers only for the shard channels of its own slots (others are MOVED).
fn subscribed_channels(backend: &Backend, games: &[pb::CreateGameResponse]) -> u64 {
    let command = match backend {
        Backend::RedisCluster(_) => "SHARDNUMSUB",
        _ => "NUMSUB",
    };
    let mut total = 0;
    for port in node_ports(backend) {
        let mut connection = node_connection(port);
        for game in games {
            // A flat reply: channel, count.
            let reply: redis::RedisResult<Vec<redis::Value>> = redis::cmd("PUBSUB")
                .arg(command)
                .arg(format!("tabula:{{{}}}:appended", game.game_id))
                .query(&mut connection);
            if let Ok(reply) = reply
                && matches!(reply.get(1), Some(redis::Value::Int(count)) if *count > 0)
            {
                total += 1;
            }
        }
    }
    total
}

/// One random legal move by the seat to act, with its expected version and a request id.
async fn play_one(client: &mut Client, game: &pb::CreateGameResponse, rng: &mut GameRng) -> u64 {
    let seat = spectator_view(client, &game.game_id)
        .await
        .status
        .expect("status")
        .to_act
        .expect("a seat to act");
    let token = token(game, seat);
    let mine = seat_view(client, &game.game_id, &token).await;
    let request = pb::ActRequest {
        narrate: false,
        game_id: game.game_id.clone(),
        action: Some(choose(&mine.legal_actions, rng)),
        expected_version: Some(mine.version),
        request_id: format!("move-{}", mine.version),
        omit_view: false,
    };
    client
        .act(authorized(request, &token))
        .await
        .expect("Act")
        .into_inner()
        .version
}

/// The scenario on any Redis backend: `GAMES` games created and played on replica B, each
/// observed through replica A (a real gRPC server). Meanwhile A holds at most
/// `MAX_CONNECTIONS_PER_NODE` Redis connections per node, and every stream receives every move.
async fn many_observed_games_hold_few_connections(backend: Backend) {
    let ports = node_ports(&backend);
    let player_replica = Replica::start(&backend).await;
    let mut player = player_replica.client().await;
    let mut games = Vec::with_capacity(GAMES);
    for n in 0..GAMES as u64 {
        games.push(create(&mut player, medici_config(), 7_000 + n).await);
    }
    // Every connection open now is B's or the test's; what appears later is A's.
    let before: Vec<HashSet<u64>> = ports.iter().map(|&port| client_ids(port)).collect();

    let observing_replica = Replica::start(&backend).await;
    let (started, mut started_rx) = mpsc::unbounded_channel::<()>();
    let mut observers = Vec::with_capacity(GAMES);
    for chunk in games.chunks(STREAMS_PER_CONNECTION) {
        let client = observing_replica.client().await;
        for game in chunk {
            let mut client = client.clone();
            let game_id = game.game_id.clone();
            let started = started.clone();
            observers.push(tokio::spawn(async move {
                let request = pb::ObserveRequest {
                    narrate: false,
                    game_id,
                    from_version: Some(0),
                };
                let mut stream = client.observe(request).await.expect("Observe").into_inner();
                let mut versions = Vec::new();
                while let Some(message) = stream.next().await {
                    let version = message.expect("stream message").version;
                    if versions.is_empty() {
                        let _ = started.send(());
                    }
                    versions.push(version);
                    if version == MOVES {
                        break;
                    }
                }
                versions
            }));
        }
    }
    tokio::time::timeout(Duration::from_secs(60), async {
        for _ in 0..GAMES {
            started_rx.recv().await.expect("an observer started");
        }
    })
    .await
    .expect("every stream sent its first message within 60 s");
    let subscribed = tokio::time::timeout(Duration::from_secs(30), async {
        while subscribed_channels(&backend, &games) < GAMES as u64 {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    assert!(
        subscribed.is_ok(),
        "every observed game's channel has a subscriber ({} of {GAMES})",
        subscribed_channels(&backend, &games)
    );
    let observing_connections = |label: &str| {
        for (port, before) in ports.iter().zip(&before) {
            let new: Vec<u64> = client_ids(*port).difference(before).copied().collect();
            eprintln!(
                "{label}: the observing replica holds {} connections to node {port}",
                new.len()
            );
            assert!(
                !new.is_empty() && new.len() <= MAX_CONNECTIONS_PER_NODE,
                "{label}: {} connections to node {port} for {GAMES} observed games",
                new.len()
            );
        }
    };
    observing_connections("all streams open");

    let mut rng = GameRng::from_seed(&Seed::from_u64(7));
    for _ in 0..MOVES {
        for game in &games {
            play_one(&mut player, game, &mut rng).await;
        }
    }
    let expected: Vec<u64> = (0..=MOVES).collect();
    for observer in observers {
        let versions = tokio::time::timeout(Duration::from_secs(30), observer)
            .await
            .expect("every stream receives every move within 30 s")
            .expect("observer task");
        assert_eq!(versions, expected, "every move, in order, once");
    }
    observing_connections("all moves delivered");

    // The streams are gone: within a few heartbeats the replica lets go of every channel.
    let released = tokio::time::timeout(Duration::from_secs(15), async {
        while subscribed_channels(&backend, &games) > 0 {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await;
    assert!(
        released.is_ok(),
        "channels still subscribed after their observers left: {}",
        subscribed_channels(&backend, &games)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_observing_many_games_holds_few_redis_connections() {
    many_observed_games_hold_few_connections(Backend::redis()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_observing_many_games_holds_few_connections_per_cluster_node() {
    many_observed_games_hold_few_connections(Backend::redis_cluster()).await;
}

/// Kills the node's pub/sub connections (`CLIENT KILL TYPE pubsub`: only subscribers go) and
/// refuses new connections (`maxclients` 1) until [`admit_connections`], on `connection`.
fn kill_subscribers(connection: &mut redis::Connection) -> u64 {
    redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxclients")
        .arg(1)
        .query::<()>(connection)
        .expect("CONFIG SET maxclients");
    redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("pubsub")
        .query(connection)
        .expect("CLIENT KILL TYPE pubsub")
}

fn admit_connections(connection: &mut redis::Connection) {
    redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxclients")
        .arg(10_000)
        .query::<()>(connection)
        .expect("CONFIG SET maxclients");
}

/// The observing replica's subscriber connection killed again and again while moves are played
/// on another replica, each time unable to reconnect for a round of moves: whatever was announced
/// while it was gone is read from the log after it subscribes again, so every stream still
/// receives every move, in order, without an error.
async fn killed_subscribers_miss_nothing(backend: Backend) {
    const KILLED_GAMES: usize = 20;
    const KILLED_MOVES: u64 = 12;
    let ports = node_ports(&backend);
    let player_replica = Replica::start(&backend).await;
    let observing_replica = Replica::start(&backend).await;
    let mut player = player_replica.client().await;
    let observing = observing_replica.client().await;
    let mut games = Vec::new();
    let mut observers = Vec::new();
    for n in 0..KILLED_GAMES as u64 {
        let game = create(&mut player, medici_config(), 8_000 + n).await;
        let mut client = observing.clone();
        let game_id = game.game_id.clone();
        observers.push(tokio::spawn(async move {
            let request = pb::ObserveRequest {
                narrate: false,
                game_id,
                from_version: Some(0),
            };
            let mut stream = client.observe(request).await.expect("Observe").into_inner();
            let mut versions = Vec::new();
            while let Some(message) = stream.next().await {
                let version = message.expect("no error on the stream").version;
                versions.push(version);
                if version == KILLED_MOVES {
                    break;
                }
            }
            versions
        }));
        games.push(game);
    }
    let subscribed = tokio::time::timeout(Duration::from_secs(30), async {
        while subscribed_channels(&backend, &games) < KILLED_GAMES as u64 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(subscribed.is_ok(), "every game subscribed");

    // Opened now, so that they are not refused while new connections are.
    let mut admins: Vec<redis::Connection> =
        ports.iter().map(|&port| node_connection(port)).collect();
    let mut rng = GameRng::from_seed(&Seed::from_u64(8));
    let mut killed = 0;
    for round in 0..KILLED_MOVES {
        // The last round too: what its moves announce while the subscriber is gone comes only
        // from the catch-up (no later move would reveal the gap to the streams).
        let kill = round % 3 == 2;
        if kill {
            killed += admins.iter_mut().map(kill_subscribers).sum::<u64>();
        }
        for game in &games {
            play_one(&mut player, game, &mut rng).await;
        }
        if kill {
            admins.iter_mut().for_each(admit_connections);
        }
        // Let the subscriber come back, so the next moves are announced live.
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert!(killed > 0, "subscriber connections were killed");
    let expected: Vec<u64> = (0..=KILLED_MOVES).collect();
    for observer in observers {
        let versions = tokio::time::timeout(Duration::from_secs(30), observer)
            .await
            .expect("every stream receives every move within 30 s")
            .expect("observer task");
        assert_eq!(versions, expected, "every move, in order, once");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_subscriber_connection_misses_nothing() {
    killed_subscribers_miss_nothing(Backend::redis()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_subscriber_connections_on_a_cluster_miss_nothing() {
    killed_subscribers_miss_nothing(Backend::redis_cluster()).await;
}

/// Streams opened on the very replica that appends the games' moves, while it appends them: a
/// move acknowledged during a stream's catch-up read (so the replica's cache is newer than what
/// the read returned) is not mistaken for the game having left the store. That mistake once ended
/// such streams with NOT_FOUND (seen in about one `tabula load` run in four).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_opened_while_their_replica_appends_end_only_with_the_game() {
    const GAMES: u64 = 8;
    const OBSERVERS: usize = 3;
    let backend = Backend::redis();
    let replica = Replica::start(&backend).await;
    let client = replica.client().await;
    let mut tasks = Vec::new();
    for n in 0..GAMES {
        let mut player = client.clone();
        let game = create(&mut player, medici_config(), 7_700 + n).await;
        let (done, _) = tokio::sync::watch::channel(false);
        for _ in 0..OBSERVERS {
            let mut client = client.clone();
            let game_id = game.game_id.clone();
            let done = done.subscribe();
            tasks.push(tokio::spawn(async move {
                let mut opened = 0;
                while !*done.borrow() {
                    let request = pb::ObserveRequest {
                        narrate: false,
                        game_id: game_id.clone(),
                        from_version: None,
                    };
                    let mut stream = client.observe(request).await.expect("Observe").into_inner();
                    let first = stream.next().await.expect("a first message").expect("ok");
                    opened += 1;
                    if first.status.is_some_and(|status| status.finished) {
                        break;
                    }
                    // The next move (or the end of the game) arrives, not an error.
                    let next = tokio::time::timeout(Duration::from_secs(10), stream.next())
                        .await
                        .expect("the next move within 10 s")
                        .expect("a message");
                    assert_eq!(next.expect("no error").version, first.version + 1);
                }
                opened
            }));
        }
        // The game's seats play back to back, each move from the previous answer's legal
        // actions, as fast as the replica answers.
        tasks.push(tokio::spawn(async move {
            let mut rng = GameRng::from_seed(&Seed::from_u64(n));
            let mut status = spectator_view(&mut player, &game.game_id).await;
            let mut version = status.version;
            let mut to_act = status.status.take().and_then(|status| status.to_act);
            while let Some(seat) = to_act {
                let token = token(&game, seat);
                let legal = seat_view(&mut player, &game.game_id, &token)
                    .await
                    .legal_actions;
                let request = pb::ActRequest {
                    narrate: false,
                    game_id: game.game_id.clone(),
                    action: Some(choose(&legal, &mut rng)),
                    expected_version: Some(version),
                    request_id: format!("move-{version}"),
                    omit_view: false,
                };
                let answer = player
                    .act(authorized(request, &token))
                    .await
                    .expect("Act")
                    .into_inner();
                version = answer.version;
                to_act = answer
                    .status
                    .filter(|status| !status.finished)
                    .and_then(|status| status.to_act);
            }
            done.send_replace(true);
            0
        }));
    }
    let mut opened = 0;
    for task in tasks {
        opened += task.await.expect("a task of the test");
    }
    assert!(opened > 100, "only {opened} streams were opened");
}

/// docs/compatibility.md, *Announcement*: an announcement in a later format (one a newer release
/// writes once every replica reads it: it starts with a letter) is not misread, and costs the
/// observing replica a read of the log, never an entry. The entry is written to the log by hand
/// (as the append script would) and announced only in the later form; the stream still gets it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_announcement_of_a_later_format_costs_a_read_never_an_entry() {
    use prost::Message;
    let backend = Backend::redis();
    let replica = Replica::start(&backend).await;
    let mut client = replica.client().await;
    let game = create(&mut client, medici_config(), 7_900).await;
    let seat = spectator_view(&mut client, &game.game_id)
        .await
        .status
        .and_then(|status| status.to_act)
        .expect("a seat to act");
    let legal = seat_view(&mut client, &game.game_id, &token(&game, seat))
        .await
        .legal_actions;
    let action = legal[0].action.clone().expect("an action");

    let mut stream = observe(&mut client, &game.game_id, Some(0)).await;
    let first = stream.next().await.expect("a first message").expect("ok");
    assert_eq!(first.version, 0);

    // Once the replica has subscribed to the game's channel (and read the log after it, which
    // every subscription is followed by), nothing but an announcement wakes the stream.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while subscribed_channels(&backend, std::slice::from_ref(&game)) == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the replica subscribes"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut raw = node_connection(node_ports(&backend)[0]);
    let _: String = redis::cmd("XADD")
        .arg(format!("tabula:{{{}}}:log", game.game_id))
        .arg("1-0")
        .arg("seat")
        .arg(seat)
        .arg("action")
        .arg(action.encode_to_vec())
        .arg("req")
        .arg("")
        .arg("at")
        .arg(1_700_000_000_000u64)
        .query(&mut raw)
        .expect("XADD");
    // Unannounced, the entry is not seen (the stream waits for announcements, it does not poll):
    // what follows is the later-format announcement's doing.
    assert!(
        tokio::time::timeout(Duration::from_millis(1500), stream.next())
            .await
            .is_err(),
        "no message before the announcement"
    );
    let _: i64 = redis::cmd("PUBLISH")
        .arg(format!("tabula:{{{}}}:appended", game.game_id))
        .arg("v2:a form this release does not know")
        .query(&mut raw)
        .expect("PUBLISH");
    let next = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("the entry within 10 s")
        .expect("a message")
        .expect("no error");
    assert_eq!(next.version, 1);
    assert_eq!(
        next.action.and_then(|logged| logged.action),
        Some(action),
        "the entry as the log holds it"
    );
}

/// A replica's own appends reach the streams it serves without waiting for their announcement
/// to come back from Redis: with its subscriber connection killed and unable to reconnect, the
/// moves played on the observing replica itself still reach its Observe stream at once, in
/// order, once each; and once the subscriber is back, the announcements it missed (already
/// delivered) add nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replicas_own_moves_reach_its_streams_without_the_announcement() {
    const MOVES: u64 = 4;
    let backend = Backend::redis();
    let ports = node_ports(&backend);
    let replica = Replica::start(&backend).await;
    let mut player = replica.client().await;
    let game = create(&mut player, medici_config(), 9_100).await;
    let mut observing = replica.client().await;
    let request = pb::ObserveRequest {
        narrate: false,
        game_id: game.game_id.clone(),
        from_version: Some(0),
    };
    let mut stream = observing
        .observe(request)
        .await
        .expect("Observe")
        .into_inner();
    let first = stream.next().await.expect("the opening").expect("no error");
    assert_eq!(first.version, 0);
    let games = [game.clone()];
    let subscribed = tokio::time::timeout(Duration::from_secs(30), async {
        while subscribed_channels(&backend, &games) < 1 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(subscribed.is_ok(), "the game is subscribed");

    let mut admin = node_connection(ports[0]);
    assert!(
        kill_subscribers(&mut admin) > 0,
        "the subscriber was killed"
    );
    let mut rng = GameRng::from_seed(&Seed::from_u64(9));
    for expected in 1..=MOVES {
        let version = play_one(&mut player, &game, &mut rng).await;
        assert_eq!(version, expected);
        // Well within the time the replica gives a game it cannot follow before it closes
        // the feed: only the replica's own delivery can bring the move this soon.
        let message = tokio::time::timeout(Duration::from_secs(1), stream.next())
            .await
            .unwrap_or_else(|_| panic!("move {expected} reached the stream without Redis"))
            .expect("the stream goes on")
            .expect("no error on the stream");
        assert_eq!(message.version, expected, "every move, in order, once");
    }
    admit_connections(&mut admin);
    // The subscriber comes back and catches up: nothing new, so nothing more on the stream,
    // until the next move, which arrives once.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    play_one(&mut player, &game, &mut rng).await;
    let message = tokio::time::timeout(Duration::from_secs(5), stream.next())
        .await
        .expect("the next move arrives")
        .expect("the stream goes on")
        .expect("no error on the stream");
    assert_eq!(message.version, MOVES + 1, "no move twice");
}
