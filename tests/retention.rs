//! Retention and archive (issue #14 item 3), end to end on the memory store, a `redis-server` of
//! the test's own and a Redis Cluster of its own, with a directory archive: a finished game past
//! retention leaves the store (checked key by key with a raw Redis client: the game's keys, its
//! request ids, its index entries), is in the archive, and is still exported, verified, viewed at
//! any version and observed from version 0 through the gRPC service, by a replica that never saw
//! it; acting on it is FAILED_PRECONDITION. An idle game is ended by the abort entry with reason
//! `abandoned`, once, with two replicas racing to do it; two replicas retiring the same games lose
//! and corrupt nothing.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::servers::TabulaServe;
use common::*;
use tabula::archive::Archive;
use tabula::games::Seed;
use tabula::games::common::GameRng;
use tabula::hosting::SYSTEM_SEAT;
use tabula::proto::v1 as pb;
use tabula::service::{RetentionOptions, ServiceOptions};
use tabula::store::Store;
use tonic::Code;

on_every_store!(
    a_finished_game_past_retention_moves_to_the_archive,
    a_replica_that_cached_a_game_serves_it_from_the_archive_once_retired,
    a_replica_that_cached_an_abandoned_game_sees_it_ended,
    an_idle_game_is_ended_as_abandoned_once,
    two_replicas_retire_the_same_games_safely,
    a_finished_game_in_the_store_is_viewed_while_the_archive_is_unreachable,
    an_archived_game_is_unavailable_while_the_archive_is_and_the_error_names_no_path,
);

/// Tiny durations so a test sees retention happen.
fn retention(retain: Option<Duration>, abandon: Option<Duration>) -> RetentionOptions {
    RetentionOptions {
        retain_finished: retain,
        abandon_after: abandon,
        interval: Duration::from_millis(100),
        batch: 50,
        call_timeout: Duration::from_secs(5),
    }
}

fn options(archive: &Arc<Archive>, retention: Option<RetentionOptions>) -> ServiceOptions {
    ServiceOptions {
        archive: Some(archive.clone()),
        retention,
        ..test_options()
    }
}

fn directory_archive(dir: &tempfile::TempDir) -> Arc<Archive> {
    let url = format!("file://{}", dir.path().display());
    Arc::new(Archive::open(&url, Duration::from_secs(5)).expect("a directory archive"))
}

/// Plays a Medici game to its end through `client`; its final version.
async fn finished_game(client: &mut Client, seed: u64) -> (pb::CreateGameResponse, u64) {
    let game = create(client, medici_config(), seed).await;
    let mut rng = GameRng::from_seed(&Seed::from_u64(seed));
    // The first move names no expected version, so its request id goes into the game's
    // request-id index (moves with a version need none): retention must remove that key too.
    let seat = spectator_view(client, &game.game_id)
        .await
        .status
        .and_then(|status| status.to_act)
        .expect("a seat to act");
    let mine = seat_view(client, &game.game_id, &token(&game, seat)).await;
    client
        .act(authorized(
            pb::ActRequest {
                narrate: false,
                game_id: game.game_id.clone(),
                action: Some(choose(&mine.legal_actions, &mut rng)),
                expected_version: None,
                request_id: "unversioned".into(),
                omit_view: false,
            },
            &token(&game, seat),
        ))
        .await
        .expect("Act");
    let version = play_random(std::slice::from_mut(client), &game, &mut rng, 2_000).await;
    (game, version)
}

/// Waits until the store no longer has `game_id` (within 20 s).
async fn wait_gone(store: &Arc<dyn Store>, game_id: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while store.read_whole(game_id).await.expect("store").is_some() {
        assert!(
            Instant::now() < deadline,
            "game {game_id} still in the store"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Every trace of `game_id` a raw Redis client finds on every node: keys naming it (meta, log,
/// request ids, snapshot), and entries for it in any sorted set or hash (the game index).
fn redis_traces(backend: &Backend, game_id: &str) -> Vec<String> {
    let urls = match backend {
        Backend::Memory(_) => return Vec::new(),
        Backend::Redis(server) => vec![server.url()],
        Backend::RedisCluster(cluster) => cluster.urls(),
    };
    let mut traces = Vec::new();
    for url in urls {
        let client = ::redis::Client::open(url.as_str()).expect("url");
        let mut conn = client.get_connection().expect("raw connection");
        let keys: Vec<String> = ::redis::cmd("KEYS")
            .arg("*")
            .query(&mut conn)
            .expect("KEYS");
        for key in keys {
            if key.contains(game_id) {
                traces.push(key);
                continue;
            }
            let kind: String = ::redis::cmd("TYPE")
                .arg(&key)
                .query(&mut conn)
                .expect("TYPE");
            let listed = match kind.as_str() {
                "zset" => ::redis::cmd("ZSCORE")
                    .arg(&key)
                    .arg(game_id)
                    .query::<Option<String>>(&mut conn)
                    .expect("ZSCORE")
                    .is_some(),
                "hash" => ::redis::cmd("HEXISTS")
                    .arg(&key)
                    .arg(game_id)
                    .query::<bool>(&mut conn)
                    .expect("HEXISTS"),
                _ => false,
            };
            if listed {
                traces.push(format!("{key} lists it"));
            }
        }
    }
    traces
}

/// Whether `game_id` has any key at all before retention (the raw check sees real keys).
fn redis_has_keys(backend: &Backend, game_id: &str) -> bool {
    !redis_traces(backend, game_id).is_empty()
}

/// `seat`'s resignation in `game` through `client`, which must be refused (`expecting` says why).
async fn resign_refused(
    client: &mut Client,
    game: &pb::CreateGameResponse,
    seat: u32,
    expecting: &str,
) -> tonic::Status {
    client
        .act(authorized(
            pb::ActRequest {
                narrate: false,
                game_id: game.game_id.clone(),
                action: Some(resign_action()),
                expected_version: None,
                request_id: String::new(),
                omit_view: false,
            },
            &token(game, seat),
        ))
        .await
        .expect_err(expecting)
}

async fn a_finished_game_past_retention_moves_to_the_archive(backend: &Backend) {
    let dir = tempfile::tempdir().expect("temp dir");
    let archive = directory_archive(&dir);
    // Retention of a second: the game leaves the store right after it ends, once the raw
    // client below has seen its keys.
    let retaining = Replica::start_with(
        backend,
        options(
            &archive,
            Some(retention(Some(Duration::from_secs(1)), None)),
        ),
    )
    .await;
    let mut client = retaining.client().await;
    let (game, version) = finished_game(&mut client, 7).await;
    let game_id = game.game_id.clone();
    let before = export(&mut client, &game_id).await;
    assert!(before.complete);
    if !matches!(backend, Backend::Memory(_)) {
        // Straight after the end, before retention: the raw client sees the game's keys.
        let traces = redis_traces(backend, &game_id);
        assert!(
            traces.iter().any(|t| t.ends_with(":req")),
            "request ids were written: {traces:?}"
        );
    }

    let store = backend.store().await;
    wait_gone(&store, &game_id).await;
    assert!(
        redis_traces(backend, &game_id).is_empty(),
        "nothing of the game is left in Redis: {:?}",
        redis_traces(backend, &game_id)
    );
    let listed = store
        .list_games(&tabula::store::ListQuery {
            filter: Default::default(),
            order: Default::default(),
            after: None,
            limit: 100,
        })
        .await
        .expect("listing");
    assert!(listed.games.iter().all(|g| g.meta.game_id != game_id));
    assert!(
        dir.path().join("games").join(&game_id).is_file(),
        "the archive holds the game"
    );
    let archived = archive
        .get(&game_id)
        .await
        .expect("archive")
        .expect("archived");
    assert_eq!(archived.entries.len() as u64, version);

    // The replica that retired it (its cache may hold the game) and a fresh one (cold: only the
    // archive has the game) both serve it as before.
    let cold = Replica::start_with(backend, options(&archive, None)).await;
    let mut cold_client = cold.client().await;
    for client in [&mut client, &mut cold_client] {
        let after = export(client, &game_id).await;
        assert_eq!(after, as_archived(&before), "the archived log is the log");
        let report = client
            .verify_log(pb::VerifyLogRequest {
                log: Some(after.clone()),
            })
            .await
            .expect("VerifyLog")
            .into_inner();
        assert!(report.valid, "verification failed: {}", report.error);
        assert_eq!(report.verified_version, version);
    }
    let view = cold_client
        .get_view(pb::GetViewRequest {
            narrate: false,
            game_id: game_id.clone(),
            version: Some(3),
            min_version: None,
            omit_view: false,
        })
        .await
        .expect("GetView at a version")
        .into_inner();
    assert_eq!(view.version, 3);
    let current = spectator_view(&mut cold_client, &game_id).await;
    assert_eq!(current.version, version);
    assert!(current.status.expect("status").finished);

    let replay = collect_stream(
        &mut cold_client,
        tonic::Request::new(pb::ObserveRequest {
            narrate: false,
            game_id: game_id.clone(),
            from_version: Some(0),
        }),
    )
    .await;
    assert_eq!(
        replay.len() as u64,
        version + 1,
        "version 0 and every entry"
    );
    for (expected, message) in replay.iter().enumerate() {
        assert_eq!(message.version, expected as u64);
    }
    assert!(
        replay
            .last()
            .and_then(|m| m.status.as_ref())
            .is_some_and(|s| s.finished)
    );

    let refused =
        resign_refused(&mut cold_client, &game, 0, "an archived game is not played").await;
    assert_eq!(refused.code(), Code::FailedPrecondition, "{refused:?}");
    assert!(refused.message().contains("finished"), "{refused:?}");
}

async fn an_idle_game_is_ended_as_abandoned_once(backend: &Backend) {
    let dir = tempfile::tempdir().expect("temp dir");
    let archive = directory_archive(&dir);
    // Retention long enough that the abandoned game stays in the store to be read back.
    let policy = retention(
        Some(Duration::from_secs(3600)),
        Some(Duration::from_millis(300)),
    );
    let first = Replica::start_with(backend, options(&archive, Some(policy.clone()))).await;
    let second = Replica::start_with(backend, options(&archive, Some(policy))).await;
    let mut client = first.client().await;
    let game = create(&mut client, medici_config(), 11).await;
    if !matches!(backend, Backend::Memory(_)) {
        assert!(redis_has_keys(backend, &game.game_id));
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    let log = loop {
        let log = export(&mut client, &game.game_id).await;
        if log.complete {
            break log;
        }
        assert!(Instant::now() < deadline, "the idle game was not ended");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // Both replicas' passes tried: exactly one abort entry.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let log = {
        let again = export(&mut second.client().await, &game.game_id).await;
        assert_eq!(again.entries.len(), log.entries.len());
        again
    };
    assert_eq!(log.entries.len(), 1, "one entry: the abort");
    let abort = &log.entries[0];
    assert!(abort.system);
    assert_eq!(abort.seat, SYSTEM_SEAT);
    let Some(pb::action::Game::Table(pb::TableAction {
        kind: Some(pb::table_action::Kind::Abort(pb::table_action::Abort { reason })),
    })) = abort.action.as_ref().and_then(|a| a.game.as_ref())
    else {
        panic!("the entry is an abort: {abort:?}");
    };
    assert_eq!(reason, "abandoned");
    let status = spectator_view(&mut client, &game.game_id)
        .await
        .status
        .expect("status");
    assert_eq!(status.ending, pb::GameEnding::Aborted as i32);
    assert_eq!(status.abort_reason, "abandoned");
}

async fn two_replicas_retire_the_same_games_safely(backend: &Backend) {
    let dir = tempfile::tempdir().expect("temp dir");
    let archive = directory_archive(&dir);
    let player = Replica::start_with(backend, options(&archive, None)).await;
    let mut client = player.client().await;
    let mut finished = Vec::new();
    for seed in 20..24 {
        let (game, version) = finished_game(&mut client, seed).await;
        let log = export(&mut client, &game.game_id).await;
        finished.push((game.game_id, version, log));
    }
    // Two replicas start retiring at once, on a short interval: they race for every game.
    let policy = RetentionOptions {
        interval: Duration::from_millis(20),
        ..retention(Some(Duration::from_millis(1)), None)
    };
    let first = Replica::start_with(backend, options(&archive, Some(policy.clone()))).await;
    let second = Replica::start_with(backend, options(&archive, Some(policy))).await;
    let store = backend.store().await;
    for (game_id, _, _) in &finished {
        wait_gone(&store, game_id).await;
        assert!(
            redis_traces(backend, game_id).is_empty(),
            "{:?}",
            redis_traces(backend, game_id)
        );
    }
    let reader = Replica::start_with(backend, options(&archive, None)).await;
    let mut reader_client = reader.client().await;
    for (game_id, version, log) in &finished {
        let archived = archive
            .get(game_id)
            .await
            .expect("archive")
            .expect("archived");
        assert_eq!(archived.entries.len() as u64, *version);
        assert_eq!(export(&mut reader_client, game_id).await, as_archived(log));
    }
    drop((first, second));
}

/// A `tabula serve` process's retention passes show on its metrics endpoint, by outcome: an idle
/// game ended as abandoned, then retired once its retention was over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retention_passes_are_counted_on_the_metrics_endpoint() {
    let metrics_port = free_port();
    let metrics_address = format!("127.0.0.1:{metrics_port}");
    // An archive, so the retired game can still be read below (without one it is gone).
    let dir = tempfile::tempdir().expect("temp dir");
    let archive_url = format!("file://{}", dir.path().display());
    let replica = TabulaServe::start(&[
        "--allow-client-seed",
        "--archive",
        &archive_url,
        "--metrics-listen",
        &metrics_address,
        "--abandon-after",
        "300ms",
        "--retain-finished",
        "300ms",
        "--retention-interval",
        "100ms",
    ]);
    let mut client = replica.client().await;
    let game = create(&mut client, medici_config(), 41).await;
    let games = "tabula_retention_games_total";
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let scraped = scrape_metrics(metrics_port);
        let abandoned = metric_sample(&scraped, games, &["outcome=\"abandoned\""]);
        let retired = metric_sample(&scraped, games, &["outcome=\"retired\""]);
        if abandoned >= 1.0 && retired >= 1.0 {
            assert_eq!(metric_sample(&scraped, games, &["outcome=\"failed\""]), 0.0);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "abandoned {abandoned}, retired {retired} after 20 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // It was this game: ended as abandoned, by the server.
    let view = client
        .get_view(pb::GetViewRequest {
            game_id: game.game_id.clone(),
            ..Default::default()
        })
        .await
        .expect("GetView")
        .into_inner();
    let status = view.status.expect("status");
    assert!(status.finished);
    assert_eq!(status.abort_reason, "abandoned");
}

/// Issue #24, item 1: a replica that read a game once (and keeps it in its cache) while another
/// replica plays it to the end, archives it and removes it from the store, must answer for the
/// game as it ended (from the archive), never from its copy of version 0.
/// A directory archive in its own directory under `dir`, which [`break_archive`] can break.
fn breakable_archive(dir: &tempfile::TempDir) -> (std::path::PathBuf, Arc<Archive>) {
    let root = dir.path().join("archive");
    std::fs::create_dir(&root).expect("the archive directory");
    let url = format!("file://{}", root.display());
    let archive = Arc::new(Archive::open(&url, Duration::from_secs(5)).expect("an archive"));
    (root, archive)
}

/// Makes the archive at `root` unreachable: its directory becomes a file, so every read fails.
fn break_archive(root: &std::path::Path) {
    std::fs::remove_dir_all(root).expect("remove the archive");
    std::fs::write(root, b"not a directory").expect("a file in its place");
}

/// A finished game still in the store is viewed and observed without reading the archive: its
/// rematch link is looked up in the archive only once the game itself has left the store. So an
/// unreachable archive (an object store outage) fails none of its views.
async fn a_finished_game_in_the_store_is_viewed_while_the_archive_is_unreachable(
    backend: &Backend,
) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (root, archive) = breakable_archive(&dir);
    let replica = Replica::start_with(backend, options(&archive, None)).await;
    let mut client = replica.client().await;
    let (game, version) = finished_game(&mut client, 41).await;
    break_archive(&root);

    for _ in 0..3 {
        let view = spectator_view(&mut client, &game.game_id).await;
        assert_eq!(view.version, version);
        assert!(view.status.expect("status").finished);
        assert!(view.links.is_none(), "no rematch: {:?}", view.links);
    }
    let mut stream = client
        .observe(pb::ObserveRequest {
            game_id: game.game_id.clone(),
            ..Default::default()
        })
        .await
        .expect("Observe of a finished game")
        .into_inner();
    let first = tokio::time::timeout(Duration::from_secs(10), stream.message())
        .await
        .expect("a first message within 10 s")
        .expect("no error")
        .expect("a message");
    assert_eq!(first.version, version, "{first:?}");
}

/// An archived game read while the archive is unreachable is UNAVAILABLE (a retry may help), and
/// the message names nothing of the operator's archive: its location goes to the replica's log.
async fn an_archived_game_is_unavailable_while_the_archive_is_and_the_error_names_no_path(
    backend: &Backend,
) {
    let dir = tempfile::tempdir().expect("temp dir");
    let (root, archive) = breakable_archive(&dir);
    let retiring = Replica::start_with(
        backend,
        options(
            &archive,
            Some(retention(Some(Duration::from_millis(100)), None)),
        ),
    )
    .await;
    let mut client = retiring.client().await;
    let (game, _) = finished_game(&mut client, 43).await;
    wait_gone(&backend.store().await, &game.game_id).await;
    break_archive(&root);

    // A replica that never read the game: it must go to the archive.
    let fresh = Replica::start_with(backend, options(&archive, None)).await;
    let mut fresh_client = fresh.client().await;
    let refused = fresh_client
        .get_view(pb::GetViewRequest {
            game_id: game.game_id.clone(),
            ..Default::default()
        })
        .await
        .expect_err("the archive cannot be read");
    assert_eq!(refused.code(), Code::Unavailable, "{refused:?}");
    assert!(refused.message().contains("retry"), "{refused:?}");
    let path = dir.path().display().to_string();
    assert!(!refused.message().contains(&path), "{refused:?}");
    assert!(!refused.message().contains("file"), "{refused:?}");
}

async fn a_replica_that_cached_a_game_serves_it_from_the_archive_once_retired(backend: &Backend) {
    let dir = tempfile::tempdir().expect("temp dir");
    let archive = directory_archive(&dir);
    let retiring = Replica::start_with(
        backend,
        options(
            &archive,
            Some(retention(Some(Duration::from_millis(100)), None)),
        ),
    )
    .await;
    let stale = Replica::start_with(backend, options(&archive, None)).await;
    let mut client = retiring.client().await;
    let mut stale_client = stale.client().await;
    let game = create(&mut client, medici_config(), 31).await;
    let game_id = game.game_id.clone();
    // The stale replica reads the game once, at version 0, and keeps it.
    assert_eq!(spectator_view(&mut stale_client, &game_id).await.version, 0);

    let mut rng = GameRng::from_seed(&Seed::from_u64(31));
    let version = play_random(std::slice::from_mut(&mut client), &game, &mut rng, 2_000).await;
    let before = export(&mut client, &game_id).await;
    assert!(before.complete);
    wait_gone(&backend.store().await, &game_id).await;

    let view = spectator_view(&mut stale_client, &game_id).await;
    assert_eq!(
        view.version, version,
        "the game as it ended, not the cached copy"
    );
    assert!(view.status.expect("status").finished);
    assert!(view.legal_actions.is_empty());
    let exported = export(&mut stale_client, &game_id).await;
    assert_eq!(
        exported,
        as_archived(&before),
        "the whole log, with its seed"
    );
    let report = stale_client
        .verify_log(pb::VerifyLogRequest {
            log: Some(exported),
        })
        .await
        .expect("VerifyLog")
        .into_inner();
    assert!(report.valid, "{}", report.error);
    let middle = version / 2;
    let past = stale_client
        .get_view(pb::GetViewRequest {
            narrate: false,
            game_id: game_id.clone(),
            version: Some(middle),
            min_version: None,
            omit_view: false,
        })
        .await
        .expect("GetView at a version the cached copy never reached")
        .into_inner();
    assert_eq!(past.version, middle);
    let replay = collect_stream(
        &mut stale_client,
        tonic::Request::new(pb::ObserveRequest {
            narrate: false,
            game_id: game_id.clone(),
            from_version: Some(0),
        }),
    )
    .await;
    let versions: Vec<u64> = replay.iter().map(|message| message.version).collect();
    assert_eq!(versions, (0..=version).collect::<Vec<_>>());
    let refused = resign_refused(&mut stale_client, &game, 0, "a retired game is not played").await;
    assert_eq!(refused.code(), Code::FailedPrecondition, "{refused:?}");
    assert!(refused.message().contains("finished"), "{refused:?}");
}

/// Issue #24, item 1, the abandoned case: both replicas read a game at version 2; retention ends
/// it as abandoned, archives it and removes it; the replica that did not do it answers the game
/// as ended (the abort at version 3), and an Act there is FAILED_PRECONDITION, not DATA_LOSS.
async fn a_replica_that_cached_an_abandoned_game_sees_it_ended(backend: &Backend) {
    let dir = tempfile::tempdir().expect("temp dir");
    let archive = directory_archive(&dir);
    let policy = retention(
        Some(Duration::from_millis(100)),
        Some(Duration::from_millis(500)),
    );
    let retiring = Replica::start_with(backend, options(&archive, Some(policy))).await;
    let stale = Replica::start_with(backend, options(&archive, None)).await;
    let mut client = retiring.client().await;
    let mut stale_client = stale.client().await;
    let game = create(&mut client, medici_config(), 32).await;
    let game_id = game.game_id.clone();
    let mut rng = GameRng::from_seed(&Seed::from_u64(32));
    assert_eq!(play_steps(&mut client, &game, &mut rng, 2).await, 2);
    let cached = spectator_view(&mut stale_client, &game_id).await;
    assert_eq!(cached.version, 2);
    let seat = cached
        .status
        .expect("status")
        .to_act
        .expect("a seat to act");
    wait_gone(&backend.store().await, &game_id).await;

    let view = spectator_view(&mut stale_client, &game_id).await;
    assert_eq!(view.version, 3, "the abort follows the two moves");
    let status = view.status.expect("status");
    assert!(status.finished, "{status:?}");
    assert_eq!(status.to_act, None);
    let refused = resign_refused(
        &mut stale_client,
        &game,
        seat,
        "an abandoned game is not played",
    )
    .await;
    assert_eq!(refused.code(), Code::FailedPrecondition, "{refused:?}");
}
