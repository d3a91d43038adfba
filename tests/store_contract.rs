//! The store contract, one suite run against every store: the memory store, a Redis node and a
//! Redis Cluster. What the service relies on — atomic conditional appends, conflicts that return
//! the missing entries, idempotent request ids, snapshot rules, the log read back in order, and
//! the feed — must hold the same way on each, through the `Store` trait alone.

use crate::common;

use std::time::Duration;

use common::*;
use tabula::games::Seed;
use tabula::proto::v1::GameKind;
use tabula::store::{
    Append, BotTurn, GameFilter, GameMeta, IndexPosition, ListOrder, ListQuery, LogEntry, NewEntry,
    Settled, Snapshot, Store, StoreError,
};

on_every_store!(
    create_then_load_returns_the_meta_and_an_empty_log,
    create_refuses_a_taken_id,
    appends_are_numbered_from_one_and_read_back_in_order,
    a_conflict_returns_the_current_version_and_the_missing_entries,
    a_duplicate_request_id_appends_nothing,
    request_ids_are_scoped_to_their_seat,
    request_ids_expire_after_their_ttl_but_the_log_keeps_them,
    unknown_games_are_absent_everywhere,
    an_older_snapshot_never_replaces_a_newer_one,
    a_snapshot_of_other_rules_is_ignored,
    subscribers_receive_appends_from_every_handle_in_order,
    listings_page_through_every_filter_in_order_ties_included,
    a_tenants_listing_holds_its_own_games_in_full_pages,
    pending_bot_turns_are_claimed_when_due_and_until_cleared,
    finished_games_are_found_by_finish_time_read_whole_and_removed,
    idle_running_games_are_found_and_active_ones_are_not,
    a_retry_at_its_version_is_recognised_right_after_it,
    moves_proposed_at_a_version_append_conflict_and_reach_the_feed,
    the_webhook_outbox_claims_settles_and_keeps_dead_letters,
);

/// The layouts of a Redis store's keys (docs/compatibility.md): layout 1, written while 1.0.0
/// replicas may share the store, and layout 2, where appends write only what the log does not
/// answer. Each keeps the whole contract; what each writes beside the log is checked here.
mod layouts {
    use super::*;

    /// A store on a fresh Redis node marked with `layout` first.
    async fn store_in_layout(layout: u32) -> (Backend, std::sync::Arc<dyn Store>) {
        let backend = Backend::redis();
        let url = backend.redis_url().expect("a Redis backend");
        let mut raw = ::redis::Client::open(url.as_str())
            .and_then(|client| client.get_connection())
            .expect("a raw connection");
        let _: () = ::redis::cmd("SET")
            .arg("tabula:layout")
            .arg(layout)
            .query(&mut raw)
            .expect("SET");
        let store = backend.store().await;
        (backend, store)
    }

    /// What the request-id index holds for the game, and whether the meta has `active_ms`.
    fn written_beside_the_log(backend: &Backend, id: &str) -> (Vec<String>, bool) {
        let url = backend.redis_url().expect("a Redis backend");
        let mut raw = ::redis::Client::open(url.as_str())
            .and_then(|client| client.get_connection())
            .expect("a raw connection");
        let indexed: Vec<String> = ::redis::cmd("HKEYS")
            .arg(format!("tabula:{{{id}}}:req"))
            .query(&mut raw)
            .expect("HKEYS");
        let active: bool = ::redis::cmd("HEXISTS")
            .arg(format!("tabula:{{{id}}}:meta"))
            .arg("active_ms")
            .query(&mut raw)
            .expect("HEXISTS");
        (indexed, active)
    }

    async fn play(store: &dyn Store, id: &str) {
        store.create(&meta(id)).await.expect("create");
        let at_version = NewEntry {
            retry: tabula::store::RetryScope::AtVersion,
            server_time_ms: tabula::store::unix_millis(),
            ..entry(0, b"a", "versioned")
        };
        assert_eq!(appended(store, id, 0, &at_version).await, 1);
        assert_eq!(
            appended(store, id, 1, &entry(1, b"b", "unversioned")).await,
            2
        );
        // Both are recognised as retries in either layout.
        assert_eq!(
            store.append(id, 0, &at_version).await.expect("append"),
            Append::Duplicate { version: 1 }
        );
        assert_eq!(
            store
                .append(id, 2, &entry(1, b"b", "unversioned"))
                .await
                .expect("append"),
            Append::Duplicate { version: 2 }
        );
        assert_eq!(
            store
                .find_request(id, 0, "versioned", Some(0))
                .await
                .expect("find"),
            Some(1)
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn layout_1_writes_what_release_1_0_0_reads() {
        let (backend, store) = store_in_layout(1).await;
        play(&*store, "layout-1").await;
        let (mut indexed, active) = written_beside_the_log(&backend, "layout-1");
        indexed.sort();
        assert_eq!(indexed, vec!["0:versioned", "1:unversioned"]);
        assert!(active, "1.0.0's abandonment reads active_ms");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn layout_2_writes_only_what_the_log_does_not_answer() {
        let (backend, store) = store_in_layout(2).await;
        play(&*store, "layout-2").await;
        let (indexed, active) = written_beside_the_log(&backend, "layout-2");
        assert_eq!(
            indexed,
            vec!["1:unversioned"],
            "only requests without a version"
        );
        assert!(!active, "the last entry's time is the last activity");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_new_store_starts_in_layout_2_and_an_unknown_layout_is_refused() {
        let backend = Backend::redis();
        let _store = backend.store().await;
        let url = backend.redis_url().expect("a Redis backend");
        let mut raw = ::redis::Client::open(url.as_str())
            .and_then(|client| client.get_connection())
            .expect("a raw connection");
        let layout: String = ::redis::cmd("GET")
            .arg("tabula:layout")
            .query(&mut raw)
            .expect("GET");
        assert_eq!(layout, "2");
        let _: () = ::redis::cmd("SET")
            .arg("tabula:layout")
            .arg(3)
            .query(&mut raw)
            .expect("SET");
        let refused = tabula::store::redis::RedisStore::connect(
            &tabula::store::redis::RedisOptions::single(url.clone()),
        )
        .await
        .err()
        .expect("layout 3 is refused");
        assert!(matches!(refused, StoreError::NewerFormat(_)), "{refused}");
        assert!(refused.to_string().contains("layout 3"), "{refused}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn upgrading_a_store_moves_every_replica_to_layout_2() {
        let (backend, store) = store_in_layout(1).await;
        let url = backend.redis_url().expect("a Redis backend");
        let options = tabula::store::redis::RedisOptions::single(url);
        let layouts =
            |upgrade: tabula::store::redis::Upgrade| (upgrade.layout_before, upgrade.layout_after);
        assert_eq!(
            layouts(
                tabula::store::redis::upgrade_store(&options)
                    .await
                    .expect("upgrade")
            ),
            (1, 2)
        );
        assert_eq!(
            layouts(
                tabula::store::redis::upgrade_store(&options)
                    .await
                    .expect("again")
            ),
            (2, 2),
            "idempotent"
        );
        // The replica connected in layout 1 follows within its refresh period.
        tokio::time::sleep(tabula::store::redis::LAYOUT_REFRESH + Duration::from_secs(1)).await;
        store.create(&meta("upgraded")).await.expect("create");
        let versioned = NewEntry {
            retry: tabula::store::RetryScope::AtVersion,
            ..entry(0, b"a", "versioned")
        };
        assert_eq!(appended(&*store, "upgraded", 0, &versioned).await, 1);
        let (indexed, active) = written_beside_the_log(&backend, "upgraded");
        assert!(indexed.is_empty() && !active, "{indexed:?} {active}");
    }
}

/// The lean append script on a Redis node (`src/store/redis/scripts.rs`): the replica sends it for
/// an ordinary move and it writes the entry the full script writes; an empty log goes on to the
/// full script, which tells a game that left the store from a log that lost its writes.
mod lean_appends {
    use super::*;

    /// A stream entry as `XRANGE` returns it: its id and its fields in order.
    type StreamEntry = (String, Vec<(String, Vec<u8>)>);

    fn at_version(seat: u32, request_id: &str, head: Option<[u8; 32]>) -> NewEntry {
        NewEntry {
            retry: tabula::store::RetryScope::AtVersion,
            server_time_ms: 1_700_000_000_123,
            head,
            ..entry(seat, b"\x08\x01", request_id)
        }
    }

    /// The number of keys of every `EVALSHA` on the log `log` Redis ran since `SLOWLOG RESET`
    /// (the slow log holds every command while `slowlog-log-slower-than` is 0).
    fn scripts_run(raw: &mut ::redis::Connection, log: &str) -> Vec<String> {
        let slow_log: Vec<::redis::Value> = ::redis::cmd("SLOWLOG")
            .arg("GET")
            .arg(100)
            .query(raw)
            .expect("SLOWLOG GET");
        let mut numkeys = Vec::new();
        for item in slow_log {
            let ::redis::Value::Array(fields) = item else {
                continue;
            };
            let Some(::redis::Value::Array(args)) = fields.get(3) else {
                continue;
            };
            let text = |value: &::redis::Value| match value {
                ::redis::Value::BulkString(bytes) => String::from_utf8_lossy(bytes).into_owned(),
                other => format!("{other:?}"),
            };
            if args.first().map(text).as_deref() == Some("EVALSHA")
                && args.iter().any(|arg| text(arg) == log)
            {
                numkeys.push(args.get(2).map(text).unwrap_or_default());
            }
        }
        numkeys.reverse();
        numkeys
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_ordinary_move_writes_the_entry_the_full_script_writes() {
        let backend = Backend::redis();
        let store = backend.store().await;
        let mut raw = raw(&backend);
        let id = game_id("lean-same-entry");
        // The scripts are loaded into Redis on first use (an EVALSHA that fails, then one that
        // runs): a first game loads them before the slow log starts.
        let four_moves = |id: String| {
            let store = store.clone();
            async move {
                store.create(&meta(&id)).await.expect("create");
                // The first move (expected version 0): the full script, which tells an empty log
                // apart.
                appended(&*store, &id, 0, &at_version(0, "first", Some([1; 32]))).await;
                // Ordinary moves: the lean one, with and without a chain.
                appended(&*store, &id, 1, &at_version(1, "second", Some([2; 32]))).await;
                appended(&*store, &id, 2, &at_version(0, "third", None)).await;
                // A request id to check in the index: the full one again.
                appended(&*store, &id, 3, &entry(1, b"\x08\x01", "fourth")).await;
            }
        };
        four_moves(game_id("lean-warm-up")).await;
        let _: () = ::redis::cmd("CONFIG")
            .arg("SET")
            .arg("slowlog-log-slower-than")
            .arg(0)
            .query(&mut raw)
            .expect("CONFIG SET");
        let _: () = ::redis::cmd("SLOWLOG")
            .arg("RESET")
            .query(&mut raw)
            .expect("SLOWLOG RESET");
        four_moves(id.clone()).await;
        assert_eq!(
            scripts_run(&mut raw, &format!("tabula:{{{id}}}:log")),
            ["4", "2", "2", "4"]
        );
        let written: Vec<StreamEntry> = ::redis::cmd("XRANGE")
            .arg(format!("tabula:{{{id}}}:log"))
            .arg("-")
            .arg("+")
            .query(&mut raw)
            .expect("XRANGE");
        let expected = |version: u64, seat: &str, request_id: &str, head: Option<[u8; 32]>| {
            let mut fields = vec![
                ("seat".to_owned(), seat.as_bytes().to_vec()),
                ("action".to_owned(), b"\x08\x01".to_vec()),
                ("req".to_owned(), request_id.as_bytes().to_vec()),
                (
                    "at".to_owned(),
                    if request_id == "fourth" {
                        b"0".to_vec()
                    } else {
                        b"1700000000123".to_vec()
                    },
                ),
            ];
            if let Some(head) = head {
                fields.push(("h".to_owned(), head.to_vec()));
            }
            (format!("{version}-0"), fields)
        };
        assert_eq!(
            written,
            vec![
                expected(1, "0", "first", Some([1; 32])),
                expected(2, "1", "second", Some([2; 32])),
                expected(3, "0", "third", None),
                expected(4, "1", "fourth", None),
            ]
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_log_that_lost_its_writes_is_a_conflict_and_a_game_that_left_is_unknown() {
        let backend = Backend::redis();
        let store = backend.store().await;
        let mut raw = raw(&backend);
        let id = game_id("lean-lost");
        store.create(&meta(&id)).await.expect("create");
        appended(&*store, &id, 0, &at_version(0, "first", None)).await;
        appended(&*store, &id, 1, &at_version(1, "second", None)).await;
        // Redis lost the log's writes (restarted from an AOF written every second) while a
        // replica saw version 2: the next move must not leave a gap.
        delete(&mut raw, &format!("tabula:{{{id}}}:log"));
        assert_eq!(
            store
                .append(&id, 2, &at_version(0, "third", None))
                .await
                .expect("an answer"),
            Append::Conflict {
                current: 0,
                missing: Vec::new(),
            }
        );
        let length: u64 = ::redis::cmd("XLEN")
            .arg(format!("tabula:{{{id}}}:log"))
            .query(&mut raw)
            .expect("XLEN");
        assert_eq!(length, 0, "nothing appended");
        // The game's meta gone too: the game left the store.
        delete(&mut raw, &format!("tabula:{{{id}}}:meta"));
        assert_eq!(
            store
                .append(&id, 2, &at_version(0, "third", None))
                .await
                .expect("an answer"),
            Append::UnknownGame
        );
    }
}

/// Each tenant's own game index on a Redis store (`src/store/redis/index.rs`): what an older
/// store without it lists, how `tabula upgrade-store` fills it, and how a listing settles a
/// finish whose replica died before moving the game in the indexes.
mod tenant_index {
    use super::*;

    fn owned(id: &str, tenant: &str, created_at_ms: u64) -> GameMeta {
        GameMeta {
            tenant: Some(tenant.to_owned()),
            created_at_ms,
            ..meta(id)
        }
    }

    fn of(tenant: &str, finished: Option<bool>) -> GameFilter {
        GameFilter {
            tenant: Some(tenant.to_owned()),
            finished,
            ..GameFilter::default()
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn upgrading_an_older_store_fills_the_tenants_indexes() {
        let backend = Backend::redis();
        let store = backend.store().await;
        let alpha: Vec<String> = (0..3u64).map(|n| format!("alpha-{n}")).collect();
        for (n, id) in alpha.iter().enumerate() {
            store
                .create(&owned(id, "alpha", 1_000 + n as u64))
                .await
                .expect("create");
            appended(&*store, id, 0, &entry(0, b"a", "")).await;
        }
        let last = NewEntry {
            finishes: true,
            ..entry(1, b"end", "end")
        };
        appended(&*store, &alpha[0], 1, &last).await;
        for n in 0..10u64 {
            store
                .create(&owned(&format!("beta-{n}"), "beta", 2_000 + n))
                .await
                .expect("create");
        }
        // A store whose tenant games were created by replicas that kept no tenant index.
        let mut raw = raw(&backend);
        let tenant_keys: Vec<String> = ::redis::cmd("KEYS")
            .arg("tabula:{tgames-*")
            .query(&mut raw)
            .expect("KEYS");
        assert!(!tenant_keys.is_empty(), "this build keeps them");
        let _: () = ::redis::cmd("DEL")
            .arg(&tenant_keys)
            .arg(tabula::store::redis::keys::TENANT_INDEX_COMPLETE)
            .query(&mut raw)
            .expect("DEL");

        // A replica of this build on it reads the shards for a tenant, and lists the same games.
        let older = backend.store().await;
        let newest_first: Vec<String> = alpha.iter().rev().cloned().collect();
        let (listed, _) = list_all(&*older, &of("alpha", None), ListOrder::NewestFirst, 2).await;
        assert_eq!(listed, newest_first, "read from the shards");

        let options =
            tabula::store::redis::RedisOptions::single(backend.redis_url().expect("Redis"));
        let upgrade = tabula::store::redis::upgrade_store(&options)
            .await
            .expect("upgrade");
        assert_eq!(upgrade.tenant_entries_filled, 13, "every tenant game, once");
        assert_eq!((upgrade.layout_before, upgrade.layout_after), (2, 2));
        let again = tabula::store::redis::upgrade_store(&options)
            .await
            .expect("again");
        assert_eq!(again.tenant_entries_filled, 0, "complete: nothing to fill");

        // The replica connected before follows within its refresh period; one connecting now
        // reads the tenant's index at once. Either lists full pages, each game where it belongs.
        tokio::time::sleep(tabula::store::redis::LAYOUT_REFRESH + Duration::from_secs(1)).await;
        let newer = backend.store().await;
        for replica in [&older, &newer] {
            let (listed, sizes) =
                list_all(&**replica, &of("alpha", None), ListOrder::NewestFirst, 2).await;
            assert_eq!(listed, newest_first);
            assert_eq!(sizes, vec![2, 1], "full pages from the tenant's index");
            let (finished, _) = list_all(
                &**replica,
                &of("alpha", Some(true)),
                ListOrder::NewestFirst,
                5,
            )
            .await;
            assert_eq!(finished, vec![alpha[0].clone()]);
            let (running, sizes) = list_all(
                &**replica,
                &of("beta", Some(false)),
                ListOrder::OldestFirst,
                5,
            )
            .await;
            assert_eq!(running.len(), 10);
            assert_eq!(sizes, vec![5, 5]);
        }
    }

    /// A finishing replica records its intent, appends the final entry, then moves the game in
    /// its tenant's index and in its shard. One that died after the append leaves the game in
    /// the running sets: a tenant's listing settles the intent first, so the game is listed as
    /// finished, and moved in both indexes.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_tenants_listing_settles_a_finish_left_half_done() {
        let backend = Backend::redis();
        let store = backend.store().await;
        let id = "alpha-died";
        store
            .create(&owned(id, "alpha", 1_000))
            .await
            .expect("create");
        appended(&*store, id, 0, &entry(0, b"a", "")).await;
        let mut raw = raw(&backend);
        let now = tabula::store::unix_millis();
        let shard = tabula::store::redis::keys::shard_of(id);
        let _: () = ::redis::pipe()
            .cmd("HSET")
            .arg(format!("tabula:{{{id}}}:meta"))
            .arg("finished_at_ms")
            .arg(now)
            .ignore()
            .cmd("HSET")
            .arg(tabula::store::redis::keys::finishing_intents(shard))
            .arg(id)
            .arg(format!("{now}:0badc0de"))
            .ignore()
            .query(&mut raw)
            .expect("a final append whose replica died");

        let (finished, _) =
            list_all(&*store, &of("alpha", Some(true)), ListOrder::NewestFirst, 5).await;
        assert_eq!(finished, vec![id.to_owned()], "listed as finished");
        let (running, _) = list_all(
            &*store,
            &of("alpha", Some(false)),
            ListOrder::NewestFirst,
            5,
        )
        .await;
        assert!(running.is_empty(), "{running:?}");
        let mut score = |key: String| -> Option<f64> {
            ::redis::cmd("ZSCORE")
                .arg(key)
                .arg(id)
                .query(&mut raw)
                .expect("ZSCORE")
        };
        let kind = GameKind::MediciVsStrozzi;
        assert!(
            score(tabula::store::redis::keys::tenant_index_set(
                "alpha", kind, true
            ))
            .is_some()
        );
        assert!(
            score(tabula::store::redis::keys::tenant_index_set(
                "alpha", kind, false
            ))
            .is_none()
        );
        assert!(score(tabula::store::redis::keys::index_set(shard, kind, true)).is_some());
        assert!(score(tabula::store::redis::keys::index_set(shard, kind, false)).is_none());
    }
}

/// A request proposed at a version its sender named ([`tabula::store::RetryScope::AtVersion`]):
/// a retry at that version is a duplicate on every store, found right after the version, even
/// when the store does not index the request id; the same request id from another seat is not.
async fn a_retry_at_its_version_is_recognised_right_after_it(backend: &Backend) {
    let store = backend.store().await;
    let id = game_id("at-version");
    store.create(&meta(&id)).await.expect("create");
    let mine = |seat: u32, action: &[u8]| NewEntry {
        retry: tabula::store::RetryScope::AtVersion,
        ..entry(seat, action, "move-0")
    };
    assert_eq!(appended(&*store, &id, 0, &mine(0, b"a")).await, 1);
    assert_eq!(appended(&*store, &id, 1, &entry(1, b"b", "")).await, 2);
    assert_eq!(
        store.append(&id, 0, &mine(0, b"a")).await.expect("append"),
        Append::Duplicate { version: 1 }
    );
    assert_eq!(
        store
            .find_request(&id, 0, "move-0", Some(0))
            .await
            .expect("find"),
        Some(1)
    );
    // Another seat's request under the same id at that version: a conflict, not its retry.
    let other = store.append(&id, 0, &mine(1, b"a")).await.expect("append");
    assert!(
        matches!(other, Append::Conflict { current: 2, .. }),
        "{other:?}"
    );
    assert_eq!(
        store
            .find_request(&id, 1, "move-0", Some(0))
            .await
            .expect("find"),
        None
    );
    assert_eq!(
        store
            .entries_after(&id, 0)
            .await
            .expect("read")
            .expect("the game exists")
            .len(),
        2
    );
}

/// Moves as a client makes them: each proposed at the version it saw, with its own request id (on
/// Redis in layout 2, the lean append script's case: see `src/store/redis/scripts.rs`). They are
/// numbered on, a stale or early one is a conflict that returns what it missed, its retry is
/// recognised from those entries, a game that is not there refuses them, and every one reaches an
/// observer's feed in order.
async fn moves_proposed_at_a_version_append_conflict_and_reach_the_feed(backend: &Backend) {
    let store = backend.store().await;
    let observer = backend.store().await;
    let id = game_id("moves");
    store.create(&meta(&id)).await.expect("create");
    let mv = |version: u64| NewEntry {
        retry: tabula::store::RetryScope::AtVersion,
        server_time_ms: 1_700_000_000_000 + version,
        head: version.is_multiple_of(2).then_some([version as u8; 32]),
        ..entry(
            (version % 2) as u32,
            &[version as u8, b':'],
            &format!("move-{version}"),
        )
    };
    assert_eq!(appended(&*store, &id, 0, &mv(1)).await, 1);
    let mut feed = observer.subscribe(&id).await.expect("subscribe");
    for version in 2..=5u64 {
        assert_eq!(
            appended(&*store, &id, version - 1, &mv(version)).await,
            version
        );
    }
    let log = store
        .entries_after(&id, 0)
        .await
        .expect("read")
        .expect("the game exists");
    let written: Vec<LogEntry> = (1..=5)
        .map(|version| mv(version).logged_at(version))
        .collect();
    assert_eq!(log, written);
    let received = next_entries(&mut feed, 4).await;
    assert_eq!(received, log[1..], "each move once, in order");
    // Stale: a conflict with what it missed; early: a conflict with nothing.
    let stale = NewEntry {
        request_id: "late".into(),
        ..mv(3)
    };
    assert_eq!(
        store.append(&id, 2, &stale).await.expect("append"),
        Append::Conflict {
            current: 5,
            missing: log[2..].to_vec(),
        }
    );
    assert_eq!(
        store.append(&id, 9, &mv(10)).await.expect("append"),
        Append::Conflict {
            current: 5,
            missing: Vec::new(),
        }
    );
    // A retry of a move that was appended: found right after the version it was proposed at.
    assert_eq!(
        store.append(&id, 3, &mv(4)).await.expect("append"),
        Append::Duplicate { version: 4 }
    );
    assert_eq!(
        store
            .entries_after(&id, 0)
            .await
            .expect("read")
            .expect("the game exists"),
        log,
        "nothing more appended"
    );
    // A game the store does not hold refuses a move at any version.
    assert_eq!(
        store
            .append(&game_id("moves-unknown"), 3, &mv(4))
            .await
            .expect("an answer"),
        Append::UnknownGame
    );
}

/// A plain connection to the Redis node behind `backend`, for what the store does not expose.
fn raw(backend: &Backend) -> ::redis::Connection {
    let url = backend.redis_url().expect("a Redis backend");
    ::redis::Client::open(url.as_str())
        .and_then(|client| client.get_connection())
        .expect("a raw connection")
}

/// Deletes `key` behind the store's back (a lost write, a game that left).
fn delete(raw: &mut ::redis::Connection, key: &str) {
    let _: () = ::redis::cmd("DEL").arg(key).query(raw).expect("DEL");
}

fn meta(game_id: &str) -> GameMeta {
    GameMeta {
        game_id: game_id.to_owned(),
        kind: tabula::proto::v1::GameKind::MediciVsStrozzi,
        config: vec![1, 2, 3, 0, 255],
        rules_version: "rules-1".into(),
        seed: Seed::from_u64(7),
        token_hashes: vec![[1; 32], [2; 32]],
        created_at_ms: 1_700_000_000_000,
        players: Vec::new(),
        created_by: tabula::RELEASE.to_owned(),
        tenant: None,
        webhooks: Vec::new(),
        seating: Vec::new(),
        signed_commitment: Vec::new(),
        creation: Vec::new(),
    }
}

fn entry(seat: u32, action: &[u8], request_id: &str) -> NewEntry {
    NewEntry {
        retry: tabula::store::RetryScope::AnyVersion,
        seat,
        action: action.to_vec(),
        request_id: request_id.to_owned(),
        finishes: false,
        server_time_ms: 0,
        head: None,
        deadline: None,
    }
}

/// A game id unique to the case, so runs never see each other's keys.
fn game_id(case: &str) -> String {
    format!("contract-{case}")
}

/// The next `count` entries of a game's feed, each within 10 s (a feed that stalls fails the
/// case instead of hanging it).
async fn next_entries(
    feed: &mut tokio::sync::broadcast::Receiver<LogEntry>,
    count: usize,
) -> Vec<LogEntry> {
    let mut received = Vec::with_capacity(count);
    while received.len() < count {
        let entry = tokio::time::timeout(Duration::from_secs(10), feed.recv())
            .await
            .expect("an entry within 10 s")
            .expect("the feed is open");
        received.push(entry);
    }
    received
}

async fn appended(store: &dyn Store, game_id: &str, expected: u64, new: &NewEntry) -> u64 {
    match store.append(game_id, expected, new).await.expect("append") {
        Append::Appended { version } => version,
        other => panic!("expected an append at {}, got {other:?}", expected + 1),
    }
}

async fn create_then_load_returns_the_meta_and_an_empty_log(backend: &Backend) {
    let store = backend.store().await;
    let id = game_id("create");
    store.create(&meta(&id)).await.expect("create");
    let loaded = store.load(&id).await.expect("load").expect("the game");
    assert_eq!(loaded.meta, meta(&id));
    assert!(loaded.snapshot.is_none());
    assert!(loaded.entries.is_empty());
    assert!(
        store
            .entries_after(&id, 0)
            .await
            .expect("read")
            .expect("the game exists")
            .is_empty()
    );
    // The meta's optional fields come back as they went in.
    let full_id = game_id("create-full");
    let full = GameMeta {
        webhooks: br#"{"format":1,"webhooks":[]}"#.to_vec(),
        seating: br#"{"format":1}"#.to_vec(),
        signed_commitment: vec![7; 40],
        creation: br#"{"format":1,"secret":"00","request_hash":"11"}"#.to_vec(),
        ..meta(&full_id)
    };
    store.create(&full).await.expect("create");
    let loaded = store.load(&full_id).await.expect("load").expect("the game");
    assert_eq!(loaded.meta, full);
}

async fn create_refuses_a_taken_id(backend: &Backend) {
    let store = backend.store().await;
    let id = game_id("taken");
    store.create(&meta(&id)).await.expect("create");
    let mut other = meta(&id);
    other.config = vec![9];
    let refused = store.create(&other).await.expect_err("taken");
    assert!(matches!(refused, StoreError::AlreadyExists(ref taken) if *taken == id));
    let loaded = store.load(&id).await.expect("load").expect("game");
    assert_eq!(loaded.meta, meta(&id), "the first game is untouched");
}

async fn appends_are_numbered_from_one_and_read_back_in_order(backend: &Backend) {
    let store = backend.store().await;
    let id = game_id("order");
    store.create(&meta(&id)).await.expect("create");
    for version in 1..=5u64 {
        let new = entry(
            (version % 2) as u32,
            &[version as u8, 0, 7],
            &format!("r{version}"),
        );
        assert_eq!(appended(&*store, &id, version - 1, &new).await, version);
    }
    let everything = store
        .entries_after(&id, 0)
        .await
        .expect("read")
        .expect("the game exists");
    let versions: Vec<u64> = everything.iter().map(|e| e.version).collect();
    assert_eq!(versions, vec![1, 2, 3, 4, 5]);
    assert_eq!(
        everything[2],
        LogEntry {
            version: 3,
            seat: 1,
            action: vec![3, 0, 7],
            request_id: "r3".into(),
            server_time_ms: 0,
        }
    );
    let tail = store
        .entries_after(&id, 3)
        .await
        .expect("read")
        .expect("the game exists");
    assert_eq!(tail, everything[3..].to_vec());
    assert!(
        store
            .entries_after(&id, 5)
            .await
            .expect("read")
            .expect("the game exists")
            .is_empty()
    );
    // Past the log's end: a store may not tell that from a missing game, but never has entries.
    assert!(
        store
            .entries_after(&id, 99)
            .await
            .expect("read")
            .is_none_or(|entries| entries.is_empty())
    );
    // Another handle (another replica) reads the same log.
    let other = backend.store().await;
    let loaded = other.load(&id).await.expect("load").expect("game");
    assert_eq!(loaded.entries, everything);
    // An action without a request id is stored as such.
    let anonymous = entry(0, &[42], "");
    assert_eq!(appended(&*store, &id, 5, &anonymous).await, 6);
    let last = store
        .entries_after(&id, 5)
        .await
        .expect("read")
        .expect("the game exists");
    assert_eq!(last[0].request_id, "");
}

async fn a_conflict_returns_the_current_version_and_the_missing_entries(backend: &Backend) {
    let store = backend.store().await;
    let id = game_id("conflict");
    store.create(&meta(&id)).await.expect("create");
    for version in 1..=3u64 {
        appended(&*store, &id, version - 1, &entry(0, &[version as u8], "")).await;
    }
    let stale = store
        .append(&id, 1, &entry(1, &[99], "late"))
        .await
        .expect("append");
    let everything = store
        .entries_after(&id, 0)
        .await
        .expect("read")
        .expect("the game exists");
    assert_eq!(
        stale,
        Append::Conflict {
            current: 3,
            missing: everything[1..].to_vec(),
        }
    );
    // Ahead of the log: a conflict with nothing missing.
    let ahead = store
        .append(&id, 7, &entry(1, &[99], "early"))
        .await
        .expect("append");
    assert_eq!(
        ahead,
        Append::Conflict {
            current: 3,
            missing: Vec::new(),
        }
    );
    // Neither attempt appended or recorded its request id.
    assert_eq!(
        store
            .entries_after(&id, 0)
            .await
            .expect("read")
            .expect("the game exists"),
        everything
    );
    assert_eq!(
        store
            .find_request(&id, 1, "late", None)
            .await
            .expect("find"),
        None
    );
    assert_eq!(appended(&*store, &id, 3, &entry(1, &[4], "late")).await, 4);
}

async fn a_duplicate_request_id_appends_nothing(backend: &Backend) {
    let store = backend.store().await;
    let id = game_id("duplicate");
    store.create(&meta(&id)).await.expect("create");
    assert_eq!(appended(&*store, &id, 0, &entry(0, &[1], "once")).await, 1);
    assert_eq!(appended(&*store, &id, 1, &entry(1, &[2], "")).await, 2);
    // The retry names the version it was first appended at, even with a stale or current
    // expected version: the request id is checked first.
    for expected in [0, 2] {
        let retry = store
            .append(&id, expected, &entry(0, &[1], "once"))
            .await
            .expect("append");
        assert_eq!(retry, Append::Duplicate { version: 1 });
    }
    assert_eq!(
        store
            .find_request(&id, 0, "once", None)
            .await
            .expect("find"),
        Some(1)
    );
    assert_eq!(
        store
            .entries_after(&id, 0)
            .await
            .expect("read")
            .expect("the game exists")
            .len(),
        2
    );
}

async fn request_ids_are_scoped_to_their_seat(backend: &Backend) {
    let store = backend.store().await;
    let id = game_id("scoped");
    store.create(&meta(&id)).await.expect("create");
    assert_eq!(appended(&*store, &id, 0, &entry(0, &[1], "same")).await, 1);
    assert_eq!(appended(&*store, &id, 1, &entry(1, &[2], "same")).await, 2);
    assert_eq!(
        store
            .find_request(&id, 0, "same", None)
            .await
            .expect("find"),
        Some(1)
    );
    assert_eq!(
        store
            .find_request(&id, 1, "same", None)
            .await
            .expect("find"),
        Some(2)
    );
    assert_eq!(
        store
            .find_request(&id, 0, "other", None)
            .await
            .expect("find"),
        None
    );
}

async fn request_ids_expire_after_their_ttl_but_the_log_keeps_them(backend: &Backend) {
    let store = backend
        .store_with_request_id_ttl(Duration::from_secs(1))
        .await;
    let id = game_id("expiring");
    store.create(&meta(&id)).await.expect("create");
    assert_eq!(appended(&*store, &id, 0, &entry(0, &[1], "early")).await, 1);
    assert_eq!(
        store
            .find_request(&id, 0, "early", None)
            .await
            .expect("find"),
        Some(1)
    );
    // Past the TTL the index is gone: the id no longer marks a retry ...
    tokio::time::sleep(Duration::from_millis(2_100)).await;
    assert_eq!(
        store
            .find_request(&id, 0, "early", None)
            .await
            .expect("find"),
        None
    );
    // ... so a late "retry" is an ordinary append, which an expected version guards ...
    let late = store
        .append(&id, 0, &entry(0, &[1], "early"))
        .await
        .expect("append");
    assert!(
        matches!(late, Append::Conflict { current: 1, .. }),
        "{late:?}"
    );
    // ... while the log still carries the request id of the entry it named.
    let log = store
        .entries_after(&id, 0)
        .await
        .expect("read")
        .expect("the game exists");
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].request_id, "early");
    // A new write starts the index again.
    assert_eq!(appended(&*store, &id, 1, &entry(1, &[2], "fresh")).await, 2);
    assert_eq!(
        store
            .find_request(&id, 1, "fresh", None)
            .await
            .expect("find"),
        Some(2)
    );
}

async fn unknown_games_are_absent_everywhere(backend: &Backend) {
    let store = backend.store().await;
    let id = game_id("unknown");
    assert!(store.load(&id).await.expect("load").is_none());
    // Told apart from a game without entries (issue #24: a replica's cached copy of a game that
    // left the store must not be trusted).
    assert_eq!(store.entries_after(&id, 0).await.expect("read"), None);
    assert_eq!(store.entries_after(&id, 3).await.expect("read"), None);
    assert_eq!(
        store.find_request(&id, 0, "r", None).await.expect("find"),
        None
    );
    let refused = store
        .append(&id, 0, &entry(0, &[1], "r"))
        .await
        .expect("an answer");
    assert_eq!(refused, Append::UnknownGame);
    // A stray snapshot does not bring a game into being.
    let snapshot = Snapshot {
        version: 1,
        head: None,
        rules_version: "rules-1".into(),
        state: vec![1],
    };
    store.save_snapshot(&id, &snapshot).await.expect("snapshot");
    assert!(store.load(&id).await.expect("load").is_none());
}

async fn an_older_snapshot_never_replaces_a_newer_one(backend: &Backend) {
    let store = backend.store().await;
    let id = game_id("snapshots");
    store.create(&meta(&id)).await.expect("create");
    for version in 1..=6u64 {
        appended(&*store, &id, version - 1, &entry(0, &[version as u8], "")).await;
    }
    let at = |version: u64, state: u8| Snapshot {
        version,
        head: None,
        rules_version: "rules-1".into(),
        state: vec![state; 3],
    };
    store.save_snapshot(&id, &at(4, 4)).await.expect("save");
    let loaded = store.load(&id).await.expect("load").expect("game");
    assert_eq!(loaded.snapshot, Some(at(4, 4)));
    let tail: Vec<u64> = loaded.entries.iter().map(|e| e.version).collect();
    assert_eq!(tail, vec![5, 6], "the log after the snapshot");

    store.save_snapshot(&id, &at(2, 2)).await.expect("older");
    store.save_snapshot(&id, &at(4, 9)).await.expect("as new");
    let loaded = store.load(&id).await.expect("load").expect("game");
    assert_eq!(
        loaded.snapshot,
        Some(at(4, 4)),
        "neither older nor equal replaces it"
    );

    store.save_snapshot(&id, &at(6, 6)).await.expect("newer");
    let loaded = store.load(&id).await.expect("load").expect("game");
    assert_eq!(loaded.snapshot, Some(at(6, 6)));
    assert!(loaded.entries.is_empty());
}

async fn a_snapshot_of_other_rules_is_ignored(backend: &Backend) {
    let store = backend.store().await;
    let id = game_id("rules");
    store.create(&meta(&id)).await.expect("create");
    for version in 1..=3u64 {
        appended(&*store, &id, version - 1, &entry(0, &[version as u8], "")).await;
    }
    let foreign = Snapshot {
        version: 2,
        head: None,
        rules_version: "rules-0".into(),
        state: vec![2],
    };
    store.save_snapshot(&id, &foreign).await.expect("save");
    let loaded = store.load(&id).await.expect("load").expect("game");
    assert!(loaded.snapshot.is_none(), "made with other rules: unusable");
    let replayed: Vec<u64> = loaded.entries.iter().map(|e| e.version).collect();
    assert_eq!(replayed, vec![1, 2, 3], "the whole log is replayed instead");
}

async fn subscribers_receive_appends_from_every_handle_in_order(backend: &Backend) {
    let observer = backend.store().await;
    let writer = backend.store().await;
    let id = game_id("feed");
    writer.create(&meta(&id)).await.expect("create");
    appended(&*writer, &id, 0, &entry(0, &[1], "")).await;
    let mut feed = observer.subscribe(&id).await.expect("subscribe");
    for version in 2..=4u64 {
        appended(&*writer, &id, version - 1, &entry(1, &[version as u8], "")).await;
    }
    let received = next_entries(&mut feed, 3).await;
    let expected = writer
        .entries_after(&id, 1)
        .await
        .expect("read")
        .expect("the game exists");
    assert_eq!(received, expected, "appends after subscribing, in order");
}

/// The game index: every filter, both orders, small pages, with many games created in the same
/// millisecond (ordered by id, as the Redis sorted sets keep equal scores) and some finished by
/// an append that says so. Each listing must equal the filtered, sorted list of what was created,
/// each game once, whatever the page size.
async fn listings_page_through_every_filter_in_order_ties_included(backend: &Backend) {
    let store = backend.store().await;
    let kinds = [
        GameKind::MediciVsStrozzi,
        GameKind::Strozzi,
        GameKind::Manila,
        GameKind::LaStrada,
    ];
    // (creation time, id, kind, finished)
    let mut created = Vec::new();
    for i in 0..30u64 {
        // Ids out of creation order (17 is coprime with 64: all distinct), seven per millisecond.
        let id = format!("list-{:02x}", (i * 17) % 64);
        let mut game = meta(&id);
        game.kind = kinds[i as usize % kinds.len()];
        game.created_at_ms = 1_000 + i / 7;
        store.create(&game).await.expect("create");
        let finished = i % 3 == 0;
        let first = NewEntry {
            retry: tabula::store::RetryScope::AnyVersion,
            finishes: finished,
            server_time_ms: 0,
            deadline: None,
            ..entry(0, &[1], "")
        };
        appended(&*store, &id, 0, &first).await;
        created.push((game.created_at_ms, id, game.kind, finished));
    }
    let filters = [
        GameFilter::default(),
        GameFilter {
            kind: Some(GameKind::Strozzi),
            ..GameFilter::default()
        },
        GameFilter {
            finished: Some(true),
            ..GameFilter::default()
        },
        GameFilter {
            finished: Some(false),
            kind: Some(GameKind::LaStrada),
            ..GameFilter::default()
        },
        GameFilter {
            created_from_ms: Some(1_001),
            created_until_ms: Some(1_003),
            ..GameFilter::default()
        },
        GameFilter {
            created_from_ms: Some(2_000),
            ..GameFilter::default()
        },
    ];
    for filter in &filters {
        for order in [ListOrder::OldestFirst, ListOrder::NewestFirst] {
            let mut expected: Vec<&(u64, String, GameKind, bool)> = created
                .iter()
                .filter(|(at, _, kind, finished)| filter.admits(*kind, *finished, *at))
                .collect();
            expected.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
            if order == ListOrder::NewestFirst {
                expected.reverse();
            }
            let expected: Vec<String> = expected.iter().map(|game| game.1.clone()).collect();
            for limit in [1, 4, 100] {
                let mut listed = Vec::new();
                let mut after: Option<IndexPosition> = None;
                for _ in 0..100 {
                    let query = ListQuery {
                        filter: filter.clone(),
                        order,
                        after: after.clone(),
                        limit,
                    };
                    let page = store.list_games(&query).await.expect("a page");
                    assert!(page.games.len() <= limit);
                    for game in &page.games {
                        let finished = created
                            .iter()
                            .find(|(_, id, _, _)| *id == game.meta.game_id)
                            .map(|game| game.3);
                        assert_eq!(Some(game.finished_at_ms.is_some()), finished);
                        assert_eq!(game.version, 1);
                        assert_eq!(game.meta.token_hashes, meta("x").token_hashes);
                    }
                    listed.extend(page.games.into_iter().map(|game| game.meta.game_id));
                    after = page.next;
                    if after.is_none() {
                        break;
                    }
                }
                assert!(after.is_none(), "the listing ends");
                assert_eq!(listed, expected, "{filter:?} {order:?} pages of {limit}");
            }
        }
    }
}

/// Every page of `filter` in `order`, `limit` games at a time: the ids listed, and how many
/// games each page held.
async fn list_all(
    store: &dyn Store,
    filter: &GameFilter,
    order: ListOrder,
    limit: usize,
) -> (Vec<String>, Vec<usize>) {
    let mut listed = Vec::new();
    let mut sizes = Vec::new();
    let mut after: Option<IndexPosition> = None;
    for _ in 0..1000 {
        let query = ListQuery {
            filter: filter.clone(),
            order,
            after: after.clone(),
            limit,
        };
        let page = store.list_games(&query).await.expect("a page");
        sizes.push(page.games.len());
        listed.extend(page.games.into_iter().map(|game| game.meta.game_id));
        after = page.next;
        if after.is_none() {
            return (listed, sizes);
        }
    }
    panic!("{filter:?}: the listing does not end");
}

/// A tenant's listing holds its own games only, each once, in order, and in full pages however
/// many games other tenants have (newer and older than its own): the store reads the tenant's
/// own index, not every game's. Finishing moves a game in it, and retention takes it out.
async fn a_tenants_listing_holds_its_own_games_in_full_pages(backend: &Backend) {
    let store = backend.store().await;
    let owned = |id: &str, tenant: Option<&str>, created_at_ms: u64| GameMeta {
        tenant: tenant.map(str::to_owned),
        created_at_ms,
        ..meta(id)
    };
    // Other tenants' games and games of no tenant around the tenant's, before and after.
    for n in 0..25u64 {
        let id = format!("other-{n:02}");
        let tenant = if n % 5 == 0 { None } else { Some("beta") };
        store
            .create(&owned(&id, tenant, 1_000 + n))
            .await
            .expect("create");
        let id = format!("later-{n:02}");
        store
            .create(&owned(&id, Some("gamma"), 5_000 + n))
            .await
            .expect("create");
    }
    let alpha: Vec<String> = (0..5u64).map(|n| format!("alpha-{n}")).collect();
    for (n, id) in alpha.iter().enumerate() {
        store
            .create(&owned(id, Some("alpha"), 3_000 + n as u64))
            .await
            .expect("create");
        appended(&*store, id, 0, &entry(0, b"a", "")).await;
    }
    let last = NewEntry {
        finishes: true,
        ..entry(1, b"end", "end")
    };
    appended(&*store, &alpha[1], 1, &last).await;

    let mine = GameFilter {
        tenant: Some("alpha".into()),
        ..GameFilter::default()
    };
    let newest_first: Vec<String> = alpha.iter().rev().cloned().collect();
    for limit in [1, 2, 3, 100] {
        let (listed, sizes) = list_all(&*store, &mine, ListOrder::NewestFirst, limit).await;
        assert_eq!(listed, newest_first, "pages of {limit}");
        let full = sizes[..sizes.len() - 1].iter().all(|size| *size == limit);
        assert!(full, "every page but the last is full: {sizes:?}");
        let (listed, _) = list_all(&*store, &mine, ListOrder::OldestFirst, limit).await;
        assert_eq!(listed, alpha, "oldest first, pages of {limit}");
    }
    let finished = GameFilter {
        finished: Some(true),
        ..mine.clone()
    };
    let (listed, _) = list_all(&*store, &finished, ListOrder::NewestFirst, 10).await;
    assert_eq!(listed, vec![alpha[1].clone()], "finishing moved it");
    let running = GameFilter {
        finished: Some(false),
        ..mine.clone()
    };
    let (listed, sizes) = list_all(&*store, &running, ListOrder::NewestFirst, 2).await;
    let expected: Vec<String> = newest_first
        .iter()
        .filter(|id| **id != alpha[1])
        .cloned()
        .collect();
    assert_eq!(listed, expected);
    assert_eq!(sizes, vec![2, 2], "{sizes:?}");
    let (listed, _) = list_all(
        &*store,
        &GameFilter {
            tenant: Some("nobody".into()),
            ..GameFilter::default()
        },
        ListOrder::NewestFirst,
        10,
    )
    .await;
    assert!(listed.is_empty(), "a tenant without games lists none");
    let (everything, _) =
        list_all(&*store, &GameFilter::default(), ListOrder::OldestFirst, 100).await;
    assert_eq!(
        everything.len(),
        55,
        "the operator's listing still holds every game"
    );

    assert!(
        store.remove_finished(&alpha[1]).await.expect("remove"),
        "retention removes it"
    );
    let (listed, sizes) = list_all(&*store, &mine, ListOrder::NewestFirst, 2).await;
    assert_eq!(listed, expected, "gone from the tenant's listing");
    assert_eq!(sizes, vec![2, 2], "{sizes:?}");
}

/// The pending bot turns (the bot workers' fallback): a turn is claimed only once due, a claim
/// pushes its time forward (a second sweep right after finds nothing), an unclaimed turn comes
/// back once the claim expires, and a cleared turn never does. Turns of games in different shards
/// are all found (on a Cluster, on different nodes).
async fn pending_bot_turns_are_claimed_when_due_and_until_cleared(backend: &Backend) {
    let store = backend.store().await;
    let turns: Vec<BotTurn> = (0..40)
        .map(|n| BotTurn {
            game_id: game_id(&format!("bot-turn-{n}")),
            version: n,
        })
        .collect();
    let now = 1_800_000_000_000u64;
    for turn in &turns {
        store.mark_bot_turn(turn, now + 1_000).await.expect("mark");
    }
    assert!(
        store
            .claim_due_bot_turns(now, now + 5_000, 100)
            .await
            .expect("claim")
            .is_empty(),
        "nothing is due before its time"
    );
    let mut claimed = store
        .claim_due_bot_turns(now + 1_000, now + 5_000, 100)
        .await
        .expect("claim");
    claimed.sort_by_key(|turn| turn.version);
    assert_eq!(claimed, turns, "every due turn, from every shard");
    assert!(
        store
            .claim_due_bot_turns(now + 2_000, now + 5_000, 100)
            .await
            .expect("claim")
            .is_empty(),
        "claimed turns are left alone until the claim expires"
    );
    for turn in &turns[1..] {
        store.clear_bot_turn(turn).await.expect("clear");
    }
    let again = store
        .claim_due_bot_turns(now + 5_000, now + 9_000, 100)
        .await
        .expect("claim");
    assert_eq!(
        again,
        turns[..1],
        "an uncleared turn comes back; cleared ones do not"
    );
    let limited = {
        for turn in &turns {
            store.mark_bot_turn(turn, now).await.expect("mark");
        }
        store
            .claim_due_bot_turns(now + 10_000, now + 20_000, 5)
            .await
            .expect("claim")
    };
    assert_eq!(limited.len(), 5, "at most the limit");
    for turn in &turns {
        store.clear_bot_turn(turn).await.expect("clear");
    }
}

/// Retention's store methods: a finished game is listed by finish time once past the cutoff
/// (not before, and never while it runs), read whole (meta, finish time, every entry), and removed
/// with its index entries; a running game is never removed.
async fn finished_games_are_found_by_finish_time_read_whole_and_removed(backend: &Backend) {
    let store = backend.store().await;
    let running = game_id("retire-running");
    let done = game_id("retire-done");
    for id in [&running, &done] {
        store.create(&meta(id)).await.expect("create");
        appended(&*store, id, 0, &entry(0, b"a", "r1")).await;
    }
    assert!(
        store
            .finished_before(u64::MAX, 10)
            .await
            .expect("due")
            .is_empty(),
        "nothing has finished"
    );
    let before_finish = tabula::store::unix_millis();
    let last = NewEntry {
        retry: tabula::store::RetryScope::AnyVersion,
        finishes: true,
        ..entry(1, b"end", "r2")
    };
    appended(&*store, &done, 1, &last).await;
    let after_finish = tabula::store::unix_millis() + 1;
    assert!(
        store
            .finished_before(before_finish, 10)
            .await
            .expect("due")
            .is_empty(),
        "not due before it finished"
    );
    assert_eq!(
        store.finished_before(after_finish, 10).await.expect("due"),
        vec![done.clone()]
    );
    assert!(
        store
            .finished_before(after_finish, 0)
            .await
            .expect("due")
            .is_empty()
    );

    let whole = store
        .read_whole(&done)
        .await
        .expect("read")
        .expect("the game");
    assert_eq!(whole.meta, meta(&done));
    let finished_at = whole.finished_at_ms.expect("finished");
    assert!((before_finish..after_finish).contains(&finished_at));
    assert_eq!(whole.entries.len(), 2);
    assert_eq!(whole.entries[1].action, b"end");
    assert_eq!(whole.entries[1].request_id, "r2");
    let running_whole = store
        .read_whole(&running)
        .await
        .expect("read")
        .expect("game");
    assert_eq!(running_whole.finished_at_ms, None);

    assert!(
        !store.remove_finished(&running).await.expect("remove"),
        "a running game stays"
    );
    assert!(store.load(&running).await.expect("load").is_some());
    assert!(store.remove_finished(&done).await.expect("remove"));
    assert!(store.load(&done).await.expect("load").is_none());
    assert!(store.read_whole(&done).await.expect("read").is_none());
    // Gone, whatever version a replica last saw it at.
    for seen in [0, 1] {
        assert_eq!(
            store.entries_after(&done, seen).await.expect("read"),
            None,
            "a removed game read after version {seen}"
        );
    }
    assert_eq!(
        store
            .append(&done, 2, &entry(0, &[1], "late"))
            .await
            .expect("an answer"),
        Append::UnknownGame
    );
    assert_eq!(
        store
            .find_request(&done, 0, "r1", None)
            .await
            .expect("find"),
        None
    );
    assert!(
        store
            .finished_before(u64::MAX, 10)
            .await
            .expect("due")
            .is_empty()
    );
    let listed = store
        .list_games(&ListQuery {
            filter: GameFilter::default(),
            order: ListOrder::OldestFirst,
            after: None,
            limit: 10,
        })
        .await
        .expect("list");
    let ids: Vec<_> = listed
        .games
        .iter()
        .map(|g| g.meta.game_id.clone())
        .collect();
    assert_eq!(ids, vec![running.clone()]);
    // Removing again (a second replica) is harmless.
    store.remove_finished(&done).await.expect("remove again");
}

/// Abandonment's store method: a running game with no entry since the cutoff is found with its
/// version; one that moved since, or has finished, is not.
async fn idle_running_games_are_found_and_active_ones_are_not(backend: &Backend) {
    let store = backend.store().await;
    let idle = game_id("idle");
    let moved = game_id("moved");
    let finished = game_id("idle-finished");
    for id in [&idle, &moved, &finished] {
        // Created long ago (the meta's creation time is in 2023).
        store.create(&meta(id)).await.expect("create");
    }
    // Stamped with the time, as every replica stamps its entries: the last entry's time is the
    // game's last activity (layout 2 of Redis records nothing else).
    let now = |new: NewEntry| NewEntry {
        server_time_ms: tabula::store::unix_millis(),
        ..new
    };
    appended(&*store, &idle, 0, &now(entry(0, b"a", ""))).await;
    let cutoff = tabula::store::unix_millis() + 1;
    tokio::time::sleep(Duration::from_millis(5)).await;
    appended(&*store, &moved, 0, &now(entry(0, b"a", ""))).await;
    let last = NewEntry {
        retry: tabula::store::RetryScope::AnyVersion,
        finishes: true,
        ..entry(0, b"end", "")
    };
    appended(&*store, &finished, 0, &last).await;
    // The walk may take more than one call to cover every running set.
    let mut found = Vec::new();
    for _ in 0..200 {
        found.extend(store.idle_running(cutoff, 10).await.expect("idle"));
    }
    found.sort();
    found.dedup();
    assert_eq!(found, vec![(idle.clone(), 1)]);
}

async fn the_webhook_outbox_claims_settles_and_keeps_dead_letters(backend: &Backend) {
    use tabula::store::DeadLetter;
    let store = backend.store().await;
    // Marks: first and highest version kept, never lowered; due at once.
    store.mark_pending("game-a", 3, 1_000).await.expect("mark");
    store.mark_pending("game-a", 5, 1_000).await.expect("mark");
    store.mark_pending("game-a", 4, 1_000).await.expect("mark");
    store.mark_pending("game-b", 0, 5_000).await.expect("mark");
    let claimed = store.claim_pending(2_000, 60_000, 10).await.expect("claim");
    assert_eq!(claimed.len(), 1, "game-b is not due yet: {claimed:?}");
    assert_eq!(claimed[0].game_id, "game-a");
    assert_eq!((claimed[0].from_version, claimed[0].marked_version), (3, 5));
    // Leased: not claimed again before the lease ends, claimed after it.
    let again = store
        .claim_pending(10_000, 70_000, 10)
        .await
        .expect("claim");
    assert_eq!(
        again.iter().map(|p| p.game_id.as_str()).collect::<Vec<_>>(),
        ["game-b"]
    );
    assert_eq!(
        store
            .settle_pending("game-b", Some(0), 0, None)
            .await
            .expect("settle"),
        Settled::Dropped
    );
    assert_eq!(
        store
            .claim_pending(61_000, 90_000, 10)
            .await
            .expect("claim")[0]
            .game_id,
        "game-a"
    );
    // A mark above what was delivered keeps the game pending, due at the given time.
    store.mark_pending("game-a", 6, 1_000).await.expect("mark");
    assert_eq!(
        store
            .settle_pending("game-a", Some(5), 95_000, Some(500_000))
            .await
            .expect("settle"),
        Settled::DueAgain,
        "what was marked goes before any timer"
    );
    assert!(
        store
            .claim_pending(94_000, 99_000, 10)
            .await
            .expect("claim")
            .is_empty()
    );
    let due = store
        .claim_pending(95_000, 99_000, 10)
        .await
        .expect("claim");
    assert_eq!((due[0].from_version, due[0].marked_version), (3, 6));
    // A retry keeps it whatever the marks; delivering everything drops it.
    assert_eq!(
        store
            .settle_pending("game-a", None, 100_000, None)
            .await
            .expect("settle"),
        Settled::DueAgain
    );
    // A mark leaves a backoff alone.
    store.mark_pending("game-a", 6, 96_000).await.expect("mark");
    assert!(
        store
            .claim_pending(99_000, 99_000, 10)
            .await
            .expect("claim")
            .is_empty()
    );
    assert_eq!(
        store
            .settle_pending("game-a", Some(6), 0, None)
            .await
            .expect("settle"),
        Settled::Dropped
    );
    assert!(
        store
            .claim_pending(u64::MAX / 2, u64::MAX / 2, 10)
            .await
            .expect("claim")
            .is_empty()
    );
    // A new mark after a drop starts a new first version.
    store.mark_pending("game-a", 9, 1_000).await.expect("mark");
    let claimed = store.claim_pending(2_000, 3_000, 10).await.expect("claim");
    assert_eq!((claimed[0].from_version, claimed[0].marked_version), (9, 9));

    // A timer: everything delivered, the game stays pending until the timer, then is claimed
    // like any game (as delivered up to its version), and the claim ends the timer.
    store.mark_pending("game-t", 4, 1_000).await.expect("mark");
    let claimed = store
        .claim_game("game-t", 1_000, 5_000)
        .await
        .expect("claim");
    assert!(claimed.is_some());
    assert_eq!(
        store
            .settle_pending("game-t", Some(4), 0, Some(50_000))
            .await
            .expect("settle"),
        Settled::Timer
    );
    assert_eq!(
        store
            .claim_game("game-t", 49_999, 60_000)
            .await
            .expect("claim"),
        None
    );
    let woken = store
        .claim_game("game-t", 50_000, 60_000)
        .await
        .expect("claim")
        .expect("due at its timer");
    assert_eq!((woken.from_version, woken.marked_version), (5, 4));
    // Leased now: a mark leaves the lease alone.
    store.mark_pending("game-t", 5, 51_000).await.expect("mark");
    assert_eq!(
        store
            .claim_game("game-t", 52_000, 70_000)
            .await
            .expect("claim"),
        None
    );
    // A timer set again, then a mark: due at once, the timer gone.
    assert_eq!(
        store
            .settle_pending("game-t", Some(5), 0, Some(900_000))
            .await
            .expect("settle"),
        Settled::Timer
    );
    store.mark_pending("game-t", 6, 53_000).await.expect("mark");
    let marked = store
        .claim_game("game-t", 53_000, 80_000)
        .await
        .expect("claim")
        .expect("due at once after the mark");
    assert_eq!((marked.from_version, marked.marked_version), (6, 6));
    assert_eq!(
        store
            .settle_pending("game-t", Some(6), 0, None)
            .await
            .expect("settle"),
        Settled::Dropped
    );
    assert!(
        store
            .claim_pending(u64::MAX / 2, u64::MAX / 2, 10)
            .await
            .expect("claim")
            .iter()
            .all(|pending| pending.game_id != "game-t")
    );

    // One game claimed alone: when due, then leased like any claim.
    store.mark_pending("game-c", 2, 1_000).await.expect("mark");
    assert_eq!(
        store.claim_game("game-c", 500, 9_000).await.expect("claim"),
        None
    );
    let alone = store
        .claim_game("game-c", 2_000, 9_000)
        .await
        .expect("claim")
        .expect("due");
    assert_eq!((alone.from_version, alone.marked_version), (2, 2));
    assert_eq!(
        store
            .claim_game("game-c", 3_000, 9_000)
            .await
            .expect("claim"),
        None
    );
    assert_eq!(
        store
            .claim_game("game-none", 3_000, 9_000)
            .await
            .expect("claim"),
        None
    );

    // Cursors never move back.
    assert!(
        store
            .delivery_cursors("game-a")
            .await
            .expect("cursors")
            .is_empty()
    );
    let moves = |moves: &[(&str, u64)]| -> Vec<(String, u64)> {
        moves.iter().map(|(id, at)| (id.to_string(), *at)).collect()
    };
    store
        .advance_cursors("game-a", &moves(&[("hook1", 4)]))
        .await
        .expect("advance");
    store
        .advance_cursors("game-a", &moves(&[]))
        .await
        .expect("nothing to advance");
    // Several at once, each on its own: one moves back (kept), one forward, one new.
    store
        .advance_cursors(
            "game-a",
            &moves(&[("hook1", 2), ("hook3", 7), ("hook2", 0)]),
        )
        .await
        .expect("advance");
    store
        .advance_cursors("game-a", &moves(&[("hook3", 9), ("hook1", 3)]))
        .await
        .expect("advance");
    let cursors = store.delivery_cursors("game-a").await.expect("cursors");
    assert_eq!(cursors.get("hook1"), Some(&4));
    assert_eq!(cursors.get("hook2"), Some(&0));
    assert_eq!(cursors.get("hook3"), Some(&9));
    assert_eq!(cursors.len(), 3);
    assert!(
        store
            .delivery_cursors("game-b")
            .await
            .expect("cursors")
            .is_empty(),
        "another game's cursors are its own"
    );

    // Dead letters: per tenant, oldest first, capped, replaced by id, removable.
    for (n, at) in [(1u64, 30u64), (2, 10), (3, 20)] {
        let letter = DeadLetter {
            id: format!("hook1/event-{n}"),
            dead_at_ms: at,
            record: format!("{{\"n\":{n}}}").into_bytes(),
        };
        store
            .put_dead_letter("alpha", &letter, 2)
            .await
            .expect("dead letter");
    }
    let letters = store.dead_letters("alpha", 10).await.expect("dead letters");
    let ids: Vec<&str> = letters.iter().map(|l| l.id.as_str()).collect();
    assert_eq!(
        ids,
        ["hook1/event-3", "hook1/event-1"],
        "the oldest dropped past the cap"
    );
    assert_eq!(letters[1].record, b"{\"n\":1}");
    assert!(
        store
            .dead_letters("beta", 10)
            .await
            .expect("dead letters")
            .is_empty()
    );
    assert!(
        store
            .remove_dead_letter("alpha", "hook1/event-3")
            .await
            .expect("remove")
    );
    assert!(
        !store
            .remove_dead_letter("alpha", "hook1/event-3")
            .await
            .expect("remove")
    );
    assert_eq!(
        store
            .dead_letters("alpha", 10)
            .await
            .expect("dead letters")
            .len(),
        1
    );
}
