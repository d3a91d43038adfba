//! `--durability`: what an acknowledged append waits for, against real servers — a Redis replica
//! (`redis-server --replicaof`) for `replicas=N`, and Valkey 8 (which has WAITAOF) for `fsync`.

use crate::common;

use std::time::Duration;

use common::servers::{ServerProcess, valkey_server};
use tabula::games::Seed;
use tabula::store::redis::{Durability, RedisOptions, RedisStore};
use tabula::store::{Append, GameLog, GameMeta, NewEntry, StoreError};

fn options(url: String, durability: Durability) -> RedisOptions {
    RedisOptions {
        durability,
        response_timeout: Duration::from_millis(800),
        ..RedisOptions::single(url)
    }
}

fn meta(game_id: &str) -> GameMeta {
    GameMeta {
        game_id: game_id.into(),
        kind: tabula::proto::v1::GameKind::MediciVsStrozzi,
        config: Vec::new(),
        rules_version: "r".into(),
        seed: Seed::from_u64(1),
        token_hashes: vec![[0; 32]],
        created_at_ms: 0,
        players: Vec::new(),
        created_by: tabula::RELEASE.to_owned(),
        tenant: None,
        webhooks: Vec::new(),
        seating: Vec::new(),
        signed_commitment: Vec::new(),
        creation: Vec::new(),
    }
}

fn entry(request_id: &str) -> NewEntry {
    NewEntry {
        retry: tabula::store::RetryScope::AnyVersion,
        seat: 0,
        action: vec![8, 1],
        request_id: request_id.into(),
        finishes: false,
        server_time_ms: 0,
        head: None,
        deadline: None,
    }
}

fn log_length(server: &ServerProcess, game_id: &str) -> u64 {
    redis::cmd("XLEN")
        .arg(format!("tabula:{{{game_id}}}:log"))
        .query(&mut server.connection())
        .expect("XLEN")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_durability_acknowledges_only_what_a_replica_has() {
    let primary = ServerProcess::start("redis-server", &[]);
    let replica = primary.start_replica();
    let store = RedisStore::connect(&options(primary.url(), Durability::Replicas(1)))
        .await
        .expect("connect");
    store.create(&meta("durable")).await.expect("create");
    for version in 1..=20u64 {
        let appended = store
            .append("durable", version - 1, &entry(&format!("r{version}")))
            .await
            .expect("append");
        assert_eq!(appended, Append::Appended { version });
        // Acknowledged means the replica has it already.
        assert_eq!(log_length(&replica, "durable"), version);
    }

    // With its replica frozen the primary cannot confirm: the append stands but is not
    // acknowledged, and the retry with the same request id reports it applied.
    replica.signal("-STOP");
    let unconfirmed = store
        .append("durable", 20, &entry("r21"))
        .await
        .expect_err("no replica confirms");
    assert!(
        matches!(unconfirmed, StoreError::Unavailable(ref m) if m.contains("replicas")),
        "{unconfirmed:?}"
    );
    replica.signal("-CONT");
    let retried = store
        .append("durable", 20, &entry("r21"))
        .await
        .expect("retry");
    assert_eq!(retried, Append::Duplicate { version: 21 });

    // Two replicas asked, one exists: never acknowledged.
    let two = RedisStore::connect(&options(primary.url(), Durability::Replicas(2)))
        .await
        .expect("connect");
    let short = two
        .append("durable", 21, &entry("r22"))
        .await
        .expect_err("only one replica");
    assert!(matches!(short, StoreError::Unavailable(_)), "{short:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fsync_durability_needs_waitaof_and_appendonly() {
    // Debian's Redis 7.0 has no WAITAOF: refused at start-up, not at the first move.
    let redis = ServerProcess::start("redis-server", &["--appendonly", "yes"]);
    let refused = RedisStore::connect(&options(redis.url(), Durability::Fsync))
        .await
        .err()
        .expect("Redis 7.0 is refused");
    assert!(refused.to_string().contains("WAITAOF"), "{refused}");

    // Valkey 8 without appendonly: refused too.
    let valkey = valkey_server();
    let no_aof = ServerProcess::start(&valkey, &[]);
    let refused = RedisStore::connect(&options(no_aof.url(), Durability::Fsync))
        .await
        .err()
        .expect("no AOF is refused");
    assert!(refused.to_string().contains("appendonly"), "{refused}");

    // Valkey 8 with an AOF fsynced every second: each append waits for its fsync.
    let aof = ServerProcess::start(
        &valkey,
        &["--appendonly", "yes", "--appendfsync", "everysec"],
    );
    let store = RedisStore::connect(&options(aof.url(), Durability::Fsync))
        .await
        .expect("connect");
    store.create(&meta("fsynced")).await.expect("create");
    for version in 1..=3u64 {
        let appended = store
            .append("fsynced", version - 1, &entry(&format!("f{version}")))
            .await
            .expect("append");
        assert_eq!(appended, Append::Appended { version });
    }
    // What was acknowledged survives SIGKILL of the server.
    let mut aof = aof;
    aof.restart();
    assert_eq!(log_length(&aof, "fsynced"), 3);
}

#[test]
fn durability_settings_parse() {
    assert_eq!("none".parse(), Ok(Durability::None));
    assert_eq!("fsync".parse(), Ok(Durability::Fsync));
    assert_eq!("replicas=2".parse(), Ok(Durability::Replicas(2)));
    assert!("replicas=0".parse::<Durability>().is_err());
    assert!("always".parse::<Durability>().is_err());
    assert_eq!(Durability::Replicas(3).to_string(), "replicas=3");
}
