//! `tabula load` as an operator runs it: the real binary against two real `tabula serve` replicas
//! sharing a real Redis, with spectators; its JSON summary must add up, and every game it says it
//! finished must verify from its exported log.

use crate::common;

use std::time::Duration;

use common::servers::{TabulaServe, tabula, wait_serving};
use common::*;
use tabula::proto::v1 as pb;

/// Replica flags that lift the per-caller rate limits: the load comes from one address.
const UNLIMITED: [&str; 10] = [
    "--create-game-rate",
    "0",
    "--act-rate-per-address",
    "0",
    "--act-rate-per-token",
    "0",
    "--observe-rate-per-address",
    "0",
    "--observe-rate-per-token",
    "0",
];

/// Two `tabula serve` replicas sharing the Redis at `redis_url`, without rate limits, both
/// answering their health checks.
fn two_serving_replicas(redis_url: &str) -> [TabulaServe; 2] {
    let mut args = vec!["--redis-url", redis_url];
    args.extend_from_slice(&UNLIMITED);
    let replicas = [TabulaServe::start(&args), TabulaServe::start(&args)];
    for replica in &replicas {
        let health = wait_serving(&replica.address(), &[], Duration::from_secs(20));
        assert!(health.status.success(), "{health:?}");
    }
    replicas
}

fn load_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["load", "--json"];
    all.extend_from_slice(args);
    let output = tabula(&all);
    assert!(
        output.status.success(),
        "tabula load failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the summary is JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_plays_every_game_over_two_replicas_with_spectators_and_reports_it() {
    let redis = RedisServer::start();
    let redis_url = redis.url();
    let replicas = two_serving_replicas(&redis_url);
    let pid = |replica: &TabulaServe| replica.process.0.id().to_string();
    let (pid_a, pid_b) = (pid(&replicas[0]), pid(&replicas[1]));
    let servers = format!("{},{}", replicas[0].address(), replicas[1].address());
    let report = load_json(&[
        "--server",
        &servers,
        "--game",
        "mix",
        "--games",
        "4",
        "--observers",
        "2",
        "--total-games",
        "8",
        "--duration",
        "120s",
        "--probe-redis",
        &redis_url,
        "--replica-pid",
        &pid_a,
        "--replica-pid",
        &pid_b,
    ]);

    let number = |field: &str| report[field].as_f64().unwrap_or_else(|| panic!("{field}"));
    assert!(number("games_finished") >= 8.0, "{report:#}");
    assert_eq!(number("games_abandoned"), 0.0, "{report:#}");
    assert_eq!(report["errors"], serde_json::json!({}), "{report:#}");
    let acts = number("acts");
    assert!(acts > 100.0, "{report:#}");
    assert_eq!(report["act_latency"]["count"].as_f64(), Some(acts));
    // Every acknowledged move reached both spectators of its game.
    assert!(
        report["observe_delivery"]["count"].as_f64() >= Some(acts * 1.9),
        "{report:#}"
    );
    assert!(report["grpc_echo"]["count"].as_f64() > Some(0.0));
    assert!(report["append_round_trip"]["count"].as_f64() > Some(0.0));
    assert!(number("replica_cpu_us_per_act") > 0.0, "{report:#}");

    // The games it played are real games: each finished one verifies from its exported log.
    let verified = verify_finished_games(&redis_url, &replicas[1]).await;
    assert!(
        verified as f64 >= number("games_finished"),
        "{verified} verified"
    );
}

/// Six mixed games played to the end by three lanes against one replica (on its own Redis) started
/// with `replica_flags`, the load run with `load_flags` besides: its report, once it says every
/// game finished, none was abandoned and no call failed.
fn six_mixed_games_played_to_the_end(
    replica_flags: &[&str],
    load_flags: &[&str],
) -> serde_json::Value {
    let redis = RedisServer::start();
    let redis_url = redis.url();
    let mut args = replica_flags.to_vec();
    args.extend_from_slice(&["--redis-url", redis_url.as_str()]);
    args.extend_from_slice(&UNLIMITED);
    let replica = TabulaServe::start(&args);
    let health = wait_serving(&replica.address(), &[], Duration::from_secs(20));
    assert!(health.status.success(), "{health:?}");
    let address = replica.address();
    let mut load = vec!["--server", address.as_str()];
    load.extend_from_slice(load_flags);
    load.extend_from_slice(&[
        "--game",
        "mix",
        "--games",
        "3",
        "--total-games",
        "6",
        "--duration",
        "120s",
    ]);
    let report = load_json(&load);
    let number = |field: &str| report[field].as_f64().unwrap_or_else(|| panic!("{field}"));
    assert!(number("games_finished") >= 6.0, "{report:#}");
    assert_eq!(number("games_abandoned"), 0.0, "{report:#}");
    assert_eq!(report["errors"], serde_json::json!({}), "{report:#}");
    report
}

/// `--turns observe`: every seat learns its turn from its own Observe stream, so the load sends no
/// GetView; the replica and the load generator both run the single-threaded scheduler
/// (`--worker-threads 1`), as `scripts/bench-load.sh` runs them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seats_that_follow_their_own_streams_play_every_game_to_the_end() {
    let report = six_mixed_games_played_to_the_end(
        &["--worker-threads", "1"],
        &[
            "--worker-threads",
            "1",
            "--pick",
            "by-game",
            "--turns",
            "observe",
            "--warm-up",
            "1s",
        ],
    );
    let number = |field: &str| report[field].as_f64().unwrap_or_else(|| panic!("{field}"));
    // Counts cover the whole run; latencies only what came after the warm-up.
    assert!(
        report["act_latency"]["count"].as_f64() < Some(number("acts")),
        "{report:#}"
    );
    assert_eq!(report["turns"], "observe", "{report:#}");
    assert_eq!(number("views"), 0.0, "no GetView: {report:#}");
    // Every move reached every seat's stream (two seats at least), besides each stream's first
    // message.
    let acts = number("acts");
    assert!(acts > 100.0, "{report:#}");
    assert!(number("seat_messages") >= 2.0 * acts, "{report:#}");
}

/// `--turns play`: every seat plays on its own Play stream, so the load sends neither GetView nor
/// a call per move, and every hosted game (each at a player count drawn from its range) still
/// ends; a turn message told each seat whose turn came by another seat's move.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seats_that_play_on_play_streams_play_every_game_to_the_end() {
    let report = six_mixed_games_played_to_the_end(
        &[],
        &["--pick", "by-game", "--turns", "play", "--omit-views"],
    );
    let number = |field: &str| report[field].as_f64().unwrap_or_else(|| panic!("{field}"));
    assert_eq!(report["turns"], "play", "{report:#}");
    assert_eq!(number("views"), 0.0, "no GetView: {report:#}");
    let acts = number("acts");
    assert!(acts > 100.0, "{report:#}");
    // At least each stream's first message and each game's end on a seat that did not make the
    // last move; fewer than one per act (a seat's own answers list its next moves).
    assert!(number("seat_messages") >= 6.0 * 3.0, "{report:#}");
    assert!(number("seat_messages") < 2.0 * acts, "{report:#}");
}

/// `--omit-views`: every Act and GetView asks for its answer without the view, and the status and
/// legal actions those answers still carry are enough to play every hosted game to the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_that_omit_views_play_every_game_to_the_end() {
    let report = six_mixed_games_played_to_the_end(&[], &["--omit-views"]);
    assert_eq!(report["omit_views"], true, "{report:#}");
    let views = report["views"].as_f64().unwrap_or_else(|| panic!("views"));
    assert!(views > 0.0, "turns passed through GetView: {report:#}");
}

#[test]
fn load_refuses_a_player_count_the_game_does_not_allow() {
    let output = tabula(&[
        "load",
        "--server",
        "127.0.0.1:1",
        "--game",
        "manila",
        "--players",
        "2",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("3 to 5 players"), "{stderr}");
}

/// Every complete game in the Redis at `redis_url` (the append probe's scratch game aside),
/// exported through `replica` and verified by it: how many there were. Panics on one that does
/// not verify.
async fn verify_finished_games(redis_url: &str, replica: &TabulaServe) -> usize {
    let mut admin = redis::Client::open(redis_url)
        .and_then(|client| client.get_connection())
        .expect("a Redis connection");
    let metas: Vec<String> = redis::cmd("KEYS")
        .arg("tabula:{*}:meta")
        .query(&mut admin)
        .expect("KEYS");
    let mut client = replica.client().await;
    let mut verified = 0;
    for meta in metas {
        let Some(game_id) = meta
            .strip_prefix("tabula:{")
            .and_then(|rest| rest.strip_suffix("}:meta"))
        else {
            continue;
        };
        if game_id.starts_with("load-probe-") {
            continue; // the append probe's scratch game
        }
        let log = export(&mut client, game_id).await;
        if !log.complete {
            continue;
        }
        let verdict = client
            .verify_log(pb::VerifyLogRequest { log: Some(log) })
            .await
            .expect("VerifyLog")
            .into_inner();
        assert!(verdict.valid, "{game_id}: {}", verdict.error);
        verified += 1;
    }
    verified
}

/// A replica killed in the middle of a run: the seats whose Play streams it held open them again
/// on the other replica and send their unanswered move again with its request id, and the games
/// it would have created are created on the other, so every game still finishes, none is
/// abandoned, and every finished game verifies from its exported log (no move lost or doubled).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seats_on_play_streams_carry_on_at_another_replica_when_theirs_dies() {
    games_carry_on_when_a_replica_dies(&["--pick", "by-game", "--turns", "play"]).await;
}

/// The same with every seat told its turn on its own Observe stream and a spectator per game: the
/// streams the killed replica held resume after their last version on the other, and the Acts
/// it would have answered go there with their request ids.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seats_and_spectators_on_observe_streams_carry_on_at_another_replica_when_theirs_dies() {
    let report =
        games_carry_on_when_a_replica_dies(&["--turns", "observe", "--observers", "1"]).await;
    let delivered = report["observe_delivery"]["count"].as_f64();
    assert!(delivered > Some(0.0), "{report:#}");
}

/// Medici vs Strozzi games played by `tabula load` with `load_flags` against two replicas, one
/// of which is killed while games are under way on both: every game still finishes, none is
/// abandoned, the only failures are those in transit, and every finished game verifies from its
/// exported log. The report.
async fn games_carry_on_when_a_replica_dies(load_flags: &[&str]) -> serde_json::Value {
    let redis = RedisServer::start();
    let redis_url = redis.url();
    let mut replicas = two_serving_replicas(&redis_url);
    let servers = format!("{},{}", replicas[0].address(), replicas[1].address());
    let mut load_args = vec![
        "load",
        "--json",
        "--server",
        &servers,
        "--game",
        "medici-vs-strozzi",
        "--games",
        "4",
        "--total-games",
        "24",
        "--think",
        "2ms",
        "--duration",
        "120s",
    ];
    load_args.extend_from_slice(load_flags);
    let mut load = std::process::Command::new(common::servers::TABULA)
        .args(&load_args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("tabula load");
    // Games are under way on both replicas (each seat moves every 0-4 ms, a game has about 200
    // moves, and each lane plays six games one after another).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    if load.try_wait().expect("try_wait").is_some() {
        let output = load.wait_with_output().expect("tabula load");
        panic!(
            "the load ended before the replica was killed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    replicas[0].process.kill();
    let output = load.wait_with_output().expect("tabula load");
    assert!(
        output.status.success(),
        "tabula load failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("the summary is JSON");
    let number = |field: &str| report[field].as_f64().unwrap_or_else(|| panic!("{field}"));
    assert!(number("games_finished") >= 24.0, "{report:#}");
    assert_eq!(number("games_abandoned"), 0.0, "{report:#}");
    // The kill was seen: calls and streams on it failed (the codes of failures in transit).
    let errors = report["errors"].as_object().expect("errors");
    assert!(!errors.is_empty(), "no failure seen: {report:#}");
    for code in errors.keys() {
        assert!(
            ["UNAVAILABLE", "UNKNOWN", "CANCELLED"].contains(&code.as_str()),
            "{code}: {report:#}"
        );
    }
    let verified = verify_finished_games(&redis_url, &replicas[1]).await;
    assert!(
        verified as f64 >= number("games_finished"),
        "{verified} verified"
    );
    report
}
