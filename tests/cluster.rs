//! The Redis store in cluster mode: replicas sharing a real three-master Redis Cluster of the
//! test's own (`redis-server --cluster-enabled yes` on free loopback ports), with games spread
//! over the nodes by their hash-tagged keys.

use crate::common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::*;
use futures::StreamExt;
use tabula::games::Seed;
use tabula::games::common::GameRng;
use tabula::proto::v1 as pb;
use tabula::server::{self, StoreChoice};
use tabula::store::redis::RedisOptions;
use tabula::store::{Append, GameMeta, NewEntry};
use tonic::Code;

fn cluster(backend: &Backend) -> &RedisCluster {
    let Backend::RedisCluster(cluster) = backend else {
        unreachable!("a cluster backend")
    };
    cluster
}

/// One random legal action by the seat to act, through `client`; returns the new version.
async fn act_once(
    client: &mut Client,
    game: &pb::CreateGameResponse,
    rng: &mut GameRng,
    request_id: String,
) -> u64 {
    let (request, token) = next_act(client, game, rng, &request_id).await;
    let expected = request.expected_version.expect("expected version");
    let response = client
        .act(authorized(request, &token))
        .await
        .expect("Act")
        .into_inner();
    assert_eq!(response.version, expected + 1);
    response.version
}

/// (a) A store that knows a single seed node finds the rest of the cluster: after a game played
/// through two replicas, it reads the game's snapshot and the log after it, wherever they live.
/// (The service scenarios of tests/service.rs also run against a cluster.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_seed_node_is_enough() {
    let backend = Backend::redis_cluster();
    let (a, b) = (
        Replica::start(&backend).await,
        Replica::start(&backend).await,
    );
    let mut clients = vec![a.client().await, b.client().await];
    let game = create(&mut clients[0], medici_config(), 1).await;
    let mut rng = GameRng::from_seed(&Seed::from_u64(100));
    let final_version = play_random(&mut clients, &game, &mut rng, 5_000).await;

    tokio::time::sleep(Duration::from_millis(200)).await; // background snapshots
    let one_seed = StoreChoice::Redis(RedisOptions {
        urls: vec![cluster(&backend).urls()[0].clone()],
        cluster: true,
        ..RedisOptions::single(String::new())
    });
    let store = server::open_store(&one_seed).await.expect("store");
    store.ping().await.expect("PING every master");
    let loaded = store
        .load(&game.game_id)
        .await
        .expect("load")
        .expect("game");
    let snapshot = loaded.snapshot.expect("a snapshot (every 16 versions)");
    assert!(snapshot.version >= 16 && snapshot.version <= final_version);
    assert_eq!(
        snapshot.version + loaded.entries.len() as u64,
        final_version,
        "the log after the snapshot"
    );
}

/// (b) Games land on different nodes by their hash tag; each is played a few actions through
/// alternating replicas, and all of a game's keys stay in its one slot, on its one node.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn games_spread_over_the_nodes() {
    let backend = Backend::redis_cluster();
    let nodes = cluster(&backend);
    let (a, b) = (
        Replica::start(&backend).await,
        Replica::start(&backend).await,
    );
    let mut clients = [a.client().await, b.client().await];

    // Game ids are random: create games until every node owns at least one.
    let mut games: Vec<(pb::CreateGameResponse, u16, usize)> = Vec::new();
    let mut owners = BTreeSet::new();
    for seed in 0..40u64 {
        if owners.len() == 3 {
            break;
        }
        let game = create(&mut clients[seed as usize % 2], medici_config(), 500 + seed).await;
        let slot = nodes.key_slot(&format!("tabula:{{{}}}:log", game.game_id));
        for suffix in ["meta", "req", "snap"] {
            let key = format!("tabula:{{{}}}:{suffix}", game.game_id);
            assert_eq!(nodes.key_slot(&key), slot, "{key} shares the game's slot");
        }
        let owner = nodes.owner_of_slot(slot);
        owners.insert(owner);
        games.push((game, slot, owner));
    }
    assert_eq!(owners.len(), 3, "games on every node: {owners:?}");

    let actions = 6;
    for (index, (game, _, _)) in games.iter().enumerate() {
        let mut rng = GameRng::from_seed(&Seed::from_u64(index as u64));
        for step in 0..actions {
            let client = &mut clients[step % 2];
            let version = act_once(client, game, &mut rng, format!("step-{step}")).await;
            assert_eq!(version, step as u64 + 1);
        }
    }

    for (index, (game, slot, owner)) in games.iter().enumerate() {
        // The other replica sees the same state; the log holds exactly the actions.
        let view_a = spectator_view(&mut clients[0], &game.game_id).await;
        let view_b = spectator_view(&mut clients[1], &game.game_id).await;
        assert_eq!(view_a, view_b);
        assert_eq!(view_a.version, actions as u64);
        let log = export(&mut clients[index % 2], &game.game_id).await;
        assert_eq!(log.entries.len(), actions);
        // meta and log on the owner (and no request-id index: every move named its version,
        // store layout 2), nothing elsewhere.
        for node in 0..3 {
            let keys = nodes.keys_in_slot(node, *slot);
            if node == *owner {
                assert!(keys >= 2, "node {node} holds game {}", game.game_id);
            } else {
                assert_eq!(keys, 0, "node {node} holds nothing of slot {slot}");
            }
        }
    }
}

/// (e) Store level: one handle's subscriber (sharded channels, one connection per node) follows
/// games on every node that another handle appends to, promptly and in order, also after idling
/// for a few heartbeats.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchers_follow_games_on_every_node() {
    let backend = Backend::redis_cluster();
    let nodes = cluster(&backend);
    let (writer, reader) = (backend.store().await, backend.store().await);

    // One game per node: pick ids by the slot their hash tag maps to.
    let mut ids: Vec<Option<String>> = vec![None; 3];
    for n in 0u32.. {
        if ids.iter().all(Option::is_some) {
            break;
        }
        let id = format!("{n:032x}");
        let owner = nodes.owner_of_slot(nodes.key_slot(&format!("tabula:{{{id}}}:log")));
        ids[owner].get_or_insert(id);
    }
    let ids: Vec<String> = ids.into_iter().flatten().collect();
    for id in &ids {
        writer
            .create(&GameMeta {
                game_id: id.clone(),
                kind: tabula::proto::v1::GameKind::MediciVsStrozzi,
                config: vec![],
                rules_version: "test".into(),
                seed: Seed::from_u64(1),
                token_hashes: vec![[0; 32]; 2],
                created_at_ms: 0,
                players: Vec::new(),
                created_by: tabula::RELEASE.to_owned(),
                tenant: None,
                webhooks: Vec::new(),
                seating: Vec::new(),
                signed_commitment: Vec::new(),
                creation: Vec::new(),
            })
            .await
            .expect("create");
    }
    let mut feeds = Vec::new();
    for id in &ids {
        feeds.push(reader.subscribe(id).await.expect("subscribe"));
    }

    let mut slowest = Duration::ZERO;
    for version in 1..=6u64 {
        if version == 4 {
            // Idle for a few heartbeats (the subscriber's PINGs) meanwhile.
            tokio::time::sleep(Duration::from_millis(2_500)).await;
        }
        for (id, feed) in ids.iter().zip(&mut feeds) {
            let entry = NewEntry {
                retry: tabula::store::RetryScope::AnyVersion,
                seat: (version % 2) as u32,
                action: version.to_be_bytes().to_vec(),
                request_id: format!("r{version}"),
                finishes: false,
                server_time_ms: 0,
                head: None,
                deadline: None,
            };
            let sent = Instant::now();
            let appended = writer
                .append(id, version - 1, &entry)
                .await
                .expect("append");
            assert_eq!(appended, Append::Appended { version });
            let received = tokio::time::timeout(Duration::from_millis(1_500), feed.recv())
                .await
                .unwrap_or_else(|_| panic!("game {id} version {version} not announced"))
                .expect("feed");
            slowest = slowest.max(sent.elapsed());
            assert_eq!(received.version, version);
            assert_eq!(received.action, entry.action);
            assert_eq!(received.request_id, entry.request_id);
        }
    }
    eprintln!("slowest announcement across nodes: {slowest:?}");
}

/// (f) With the cluster hung (nodes suspended, connections open), RPCs fail with UNAVAILABLE
/// within the response timeout, the cluster client's retries included, rather than hanging. Once
/// it answers again, retrying the failed Act with its request id settles it exactly once, both
/// replicas carry on, and an observer on the other replica missed nothing (carrying on, or resuming
/// once if the outage outlasted its replica's follow deadline). With the cluster gone, UNAVAILABLE
/// at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_outage_is_unavailable_and_recovers() {
    let mut backend = Backend::redis_cluster();
    let (a, b) = (
        Replica::start(&backend).await,
        Replica::start(&backend).await,
    );
    let (mut client_a, mut client_b) = (a.client().await, b.client().await);
    let game = create(&mut client_a, medici_config(), 9).await;
    let mut rng = GameRng::from_seed(&Seed::from_u64(9));
    act_once(&mut client_a, &game, &mut rng, "first".into()).await;
    let mut stream = client_b
        .observe(pb::ObserveRequest {
            narrate: false,
            game_id: game.game_id.clone(),
            from_version: None,
        })
        .await
        .expect("Observe")
        .into_inner();
    assert_eq!(stream.next().await.expect("first").expect("ok").version, 1);
    let (pending, pending_token) = next_act(&mut client_a, &game, &mut rng, "pending").await;

    let Backend::RedisCluster(cluster) = &mut backend else {
        unreachable!()
    };
    cluster.freeze();
    expect_unavailable(
        &mut client_a,
        &mut client_b,
        &pending,
        &pending_token,
        "hung",
    )
    .await;
    cluster.thaw();

    // The timed-out append may or may not have reached the log (the script was sent before the
    // nodes stopped answering, and they run it when they resume); the retry settles it once.
    let started = Instant::now();
    let retried = client_b
        .act(authorized(pending.clone(), &pending_token))
        .await
        .expect("retry after the outage")
        .into_inner();
    assert_eq!(retried.version, 2);
    let mut version = retried.version;
    for step in 0..3 {
        let client = if step % 2 == 0 {
            &mut client_a
        } else {
            &mut client_b
        };
        version = act_once(client, &game, &mut rng, format!("after-{step}")).await;
    }
    eprintln!(
        "recovered (retry replayed: {}): 4 actions in {:?}",
        retried.replayed,
        started.elapsed()
    );
    assert_eq!(version, 5);
    let log = export(&mut client_a, &game.game_id).await;
    let ids: Vec<&str> = log.entries.iter().map(|e| e.request_id.as_str()).collect();
    assert_eq!(ids, ["first", "pending", "after-0", "after-1", "after-2"]);
    // The observer on B missed nothing across the outage. Its replica's subscriber catches up,
    // unless the outage outlasted the follow deadline: then the stream ended with UNAVAILABLE and
    // the client resumes after the last version it has, as the Observe contract tells it to.
    let mut seen = 1;
    let mut resumed = false;
    while seen < 5 {
        let next = tokio::time::timeout(Duration::from_secs(10), stream.next())
            .await
            .expect("the observer carries on or ends")
            .expect("a message or an error");
        match next {
            Ok(message) => {
                if message.action.is_some() {
                    assert_eq!(message.version, seen + 1, "gapless, in order");
                    seen = message.version;
                } else {
                    assert!(resumed, "only a resumed stream opens with a bare view");
                    assert_eq!(message.version, seen);
                }
            }
            Err(status) => {
                assert_eq!(status.code(), Code::Unavailable, "{status:?}");
                assert!(!resumed, "ended twice: {status:?}");
                resumed = true;
                stream = client_b
                    .observe(pb::ObserveRequest {
                        narrate: false,
                        game_id: game.game_id.clone(),
                        from_version: Some(seen),
                    })
                    .await
                    .expect("Observe again after the outage")
                    .into_inner();
            }
        }
    }
    eprintln!("the observer saw versions 2..=5 (resumed after the outage: {resumed})");

    let (next, next_token) = next_act(&mut client_a, &game, &mut rng, "never").await;
    cluster.stop();
    expect_unavailable(&mut client_a, &mut client_b, &next, &next_token, "gone").await;
}

/// The seat to act's next random legal action as an Act request (expected version and request id
/// set), with that seat's token.
async fn next_act(
    client: &mut Client,
    game: &pb::CreateGameResponse,
    rng: &mut GameRng,
    request_id: &str,
) -> (pb::ActRequest, String) {
    let status = spectator_view(client, &game.game_id)
        .await
        .status
        .expect("status");
    let token = token(game, status.to_act.expect("a seat to act"));
    let mine = client
        .get_view(authorized(
            pb::GetViewRequest {
                narrate: false,
                game_id: game.game_id.clone(),
                version: None,
                min_version: None,
                omit_view: false,
            },
            &token,
        ))
        .await
        .expect("GetView as seat")
        .into_inner();
    let request = pb::ActRequest {
        narrate: false,
        game_id: game.game_id.clone(),
        action: Some(choose(&mine.legal_actions, rng)),
        expected_version: Some(mine.version),
        request_id: request_id.to_owned(),
        omit_view: false,
    };
    (request, token)
}

/// An Act through A and an ExportLog through B both fail with UNAVAILABLE, within the store's
/// response timeout (2 s per RPC) plus slack.
async fn expect_unavailable(
    client_a: &mut Client,
    client_b: &mut Client,
    act: &pb::ActRequest,
    token: &str,
    outage: &str,
) {
    let started = Instant::now();
    let down = client_a
        .act(authorized(act.clone(), token))
        .await
        .expect_err("cluster down");
    assert_eq!(down.code(), Code::Unavailable, "{outage}: {down:?}");
    let lookup = client_b
        .export_log(pb::ExportLogRequest {
            narrate: false,
            game_id: act.game_id.clone(),
        })
        .await
        .expect_err("cluster down");
    assert_eq!(lookup.code(), Code::Unavailable, "{outage}: {lookup:?}");
    let elapsed = started.elapsed();
    eprintln!("{outage} cluster: two RPCs failed in {elapsed:?}");
    assert!(elapsed < Duration::from_secs(10), "{outage}: {elapsed:?}");
}
