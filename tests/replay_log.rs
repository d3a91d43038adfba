//! `ReplayLog` through a real gRPC client: a finished game's exported log, taken to a replica that
//! does not hold the game (its own memory store), shows at every version exactly what a spectator
//! of the game's own replica saw then (GetView at that version, without a token); logs that cannot
//! be replayed are refused with the code and a message that says why.

use crate::common;

use common::*;
use tabula::games::Seed;
use tabula::games::common::GameRng;
use tabula::proto::manila::v1 as manila;
use tabula::proto::v1 as pb;
use tonic::Code;

/// Plays a game of `config` to its end on one replica; its exported log and a client of it.
async fn finished_game(config: pb::GameConfig, seed: u64) -> (Replica, Client, pb::GameLog) {
    let home = Replica::start(&Backend::memory()).await;
    let mut client = home.client().await;
    let game = create(&mut client, config, seed).await;
    let mut rng = GameRng::from_seed(&Seed::from_u64(seed + 1000));
    play_random(std::slice::from_mut(&mut client), &game, &mut rng, 5_000).await;
    let log = export(&mut client, &game.game_id).await;
    assert!(log.complete && log.seed.len() == 32);
    (home, client, log)
}

async fn replay(
    client: &mut Client,
    log: &pb::GameLog,
    version: Option<u64>,
) -> Result<pb::ReplayLogResponse, tonic::Status> {
    client
        .replay_log(pb::ReplayLogRequest {
            log: Some(log.clone()),
            version,
        })
        .await
        .map(tonic::Response::into_inner)
}

async fn spectator_at(client: &mut Client, game_id: &str, version: u64) -> pb::GetViewResponse {
    client
        .get_view(pb::GetViewRequest {
            narrate: false,
            game_id: game_id.to_owned(),
            version: Some(version),
            min_version: None,
            omit_view: false,
        })
        .await
        .expect("GetView at a version")
        .into_inner()
}

/// Replays `log` on a replica that never saw its game and compares with the game's own replica
/// at `versions`.
async fn replays_as_the_home_replica_showed(
    home: &mut Client,
    log: &pb::GameLog,
    versions: impl Iterator<Item = u64>,
) {
    let elsewhere = Replica::start(&Backend::memory()).await;
    let mut client = elsewhere.client().await;
    let absent = client
        .get_view(pb::GetViewRequest {
            narrate: false,
            game_id: log.game_id.clone(),
            version: Some(0),
            min_version: None,
            omit_view: false,
        })
        .await
        .expect_err("the other replica does not hold the game");
    assert_eq!(absent.code(), Code::NotFound);
    let last = log.entries.len() as u64;
    for version in versions {
        let replayed = replay(&mut client, log, Some(version))
            .await
            .unwrap_or_else(|status| panic!("ReplayLog at {version}: {status:?}"));
        let seen = spectator_at(home, &log.game_id, version).await;
        assert_eq!(replayed.version, version);
        assert_eq!(replayed.last_version, last);
        assert_eq!(replayed.game, log.game);
        assert_eq!(replayed.players, log.players);
        assert_eq!(
            replayed.view, seen.view,
            "the spectator's view at {version}"
        );
        assert_eq!(replayed.status, seen.status, "the status at {version}");
    }
    // Unset: the end of the game.
    let end = replay(&mut client, log, None).await.expect("ReplayLog");
    assert_eq!(end.version, last);
    assert!(end.status.expect("status").finished);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_medici_vs_strozzi_log_replays_at_every_version_on_another_replica() {
    let (_home, mut client, log) = finished_game(medici_config(), 7).await;
    let last = log.entries.len() as u64;
    replays_as_the_home_replica_showed(&mut client, &log, 0..=last).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manila_log_replays_with_the_spectators_redaction() {
    let config = pb::GameConfig {
        game: Some(pb::game_config::Game::Manila(manila::Config {
            players: 3,
            ..Default::default()
        })),
        ..Default::default()
    };
    let (_home, mut client, log) = finished_game(config, 11).await;
    let last = log.entries.len() as u64;
    // Manila hides each player's shares from the others (spec §7): the replayed view of a
    // running version is a spectator's, not the finished log's everything-public.
    let middle = replay(&mut client, &log, Some(last / 2))
        .await
        .expect("ReplayLog");
    let Some(pb::view::Game::Manila(view)) = middle.view.and_then(|view| view.game) else {
        panic!("a Manila view");
    };
    assert!(
        view.players.iter().all(|player| player.shares.is_empty()),
        "no seat's shares are shown to a spectator mid-game: {view:?}"
    );
    let step = (last / 12).max(1);
    replays_as_the_home_replica_showed(&mut client, &log, (0..=last).step_by(step as usize)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_that_cannot_be_replayed_are_refused_with_why() {
    let (_home, mut client, log) = finished_game(medici_config(), 3).await;
    let last = log.entries.len() as u64;

    // A running game's log carries no seed.
    let mut unfinished = log.clone();
    unfinished.seed.clear();
    unfinished.complete = false;
    let refused = replay(&mut client, &unfinished, Some(1))
        .await
        .expect_err("no seed");
    assert_eq!(refused.code(), Code::FailedPrecondition, "{refused:?}");
    assert!(
        refused.message().contains("no seed") && refused.message().contains("finished"),
        "{refused:?}"
    );

    // Beyond the last version.
    let refused = replay(&mut client, &log, Some(last + 1))
        .await
        .expect_err("out of range");
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
    assert!(
        refused
            .message()
            .contains(&format!("beyond the log's last version {last}")),
        "{refused:?}"
    );

    // A tampered log: refused whichever version is asked, even one before the tampered entry.
    let mut tampered = log.clone();
    let victim = tampered.entries.len() / 2;
    tampered.entries[victim].seat = 1 - tampered.entries[victim].seat;
    let refused = replay(&mut client, &tampered, Some(1))
        .await
        .expect_err("tampered");
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
    assert!(
        refused.message().contains("does not verify")
            && refused.message().contains(&format!("entry {}", victim + 1)),
        "{refused:?}"
    );

    // A seed that is not the committed one.
    let mut reseeded = log.clone();
    reseeded.seed = Seed::from_u64(4).0.to_vec();
    let refused = replay(&mut client, &reseeded, Some(0))
        .await
        .expect_err("reseeded");
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
    assert!(refused.message().contains("commitment"), "{refused:?}");

    // A log of no game this server runs.
    let mut unknown = log.clone();
    unknown.config = Some(pb::GameConfig::default());
    let refused = replay(&mut client, &unknown, Some(0))
        .await
        .expect_err("unknown game");
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
    assert!(refused.message().contains("names no game"), "{refused:?}");

    // No log at all.
    let refused = client
        .replay_log(pb::ReplayLogRequest {
            log: None,
            version: None,
        })
        .await
        .expect_err("no log");
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
    assert!(refused.message().contains("log is required"), "{refused:?}");
}

/// Issue #24 (4): every field of a submitted log is held to the live API's limits. A finished
/// game's log with one field blown up — to a megabyte where the field is free text — is refused
/// by VerifyLog and ReplayLog alike with INVALID_ARGUMENT naming the field and the limit, and the
/// message never repeats the oversized value. The same logs, as canonical JSON, are reported
/// invalid by `tabula verify FILE`. (VerifyLog used to call such logs valid.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submitted_logs_are_held_to_the_live_apis_limits() {
    let (_home, mut client, log) = finished_game(medici_config(), 5).await;
    let verified = client
        .verify_log(pb::VerifyLogRequest {
            log: Some(log.clone()),
        })
        .await
        .expect("VerifyLog")
        .into_inner();
    assert!(verified.valid, "the log as exported: {verified:?}");

    const MEGABYTE: usize = 1 << 20;
    let huge = "x".repeat(MEGABYTE);
    let with = |change: &dyn Fn(&mut pb::GameLog)| {
        let mut changed = log.clone();
        change(&mut changed);
        changed
    };
    let player = |seat: u32, display_name: &str, external_id: &str| pb::Player {
        seat,
        display_name: display_name.into(),
        external_id: external_id.into(),
    };
    let last = log.entries.len() - 1;
    // Each: the log, the field the refusal names, and what it says of the limit.
    let cases: Vec<(pb::GameLog, String, &str)> = vec![
        (
            with(&|l| l.game_id = huge.clone()),
            "log.game_id".to_owned(),
            "1–64 letters, digits",
        ),
        (
            with(&|l| l.game_id = "not/a game id".into()),
            "log.game_id".to_owned(),
            "is not a game id",
        ),
        (
            with(&|l| l.entries[0].request_id = huge.clone()),
            "log.entries[0].request_id".to_owned(),
            "1048576 bytes long; the limit is 128 bytes",
        ),
        (
            with(&|l| l.entries[last].request_id = "r".repeat(129)),
            format!("log.entries[{last}].request_id"),
            "129 bytes long; the limit is 128 bytes",
        ),
        (
            with(&|l| l.rules_version = huge.clone()),
            "log.rules_version".to_owned(),
            "the limit is 64 bytes",
        ),
        (
            with(&|l| l.seed_commitment = vec![7; MEGABYTE]),
            "log.seed_commitment".to_owned(),
            "it is 32 bytes",
        ),
        (
            with(&|l| l.players = vec![player(0, &huge, "")]),
            "log.players[0] (seat 0)".to_owned(),
            "display_name is 1048576 characters long; the limit is 64",
        ),
        (
            with(&|l| l.players = vec![player(1, "", &huge)]),
            "log.players[0] (seat 1)".to_owned(),
            "external_id is 1048576 bytes long; the limit is 128 bytes",
        ),
        (
            with(&|l| l.players = vec![player(0, "a", ""), player(0, "b", "")]),
            "log.players[1] (seat 0)".to_owned(),
            "already described by players[0]",
        ),
        (
            // Medici vs Strozzi has two seats: only known once the config is set up.
            with(&|l| l.players = vec![player(2, "Lorenzo", "")]),
            "log.players[0] (seat 2)".to_owned(),
            "this game has 2 seats",
        ),
        (
            with(&|l| {
                l.entries.push(pb::LogEntry {
                    version: l.entries.len() as u64 + 1,
                    seat: tabula::hosting::SYSTEM_SEAT,
                    action: Some(pb::Action {
                        game: Some(pb::action::Game::Table(pb::TableAction {
                            kind: Some(pb::table_action::Kind::Abort(pb::table_action::Abort {
                                reason: huge.clone(),
                            })),
                        })),
                    }),
                    system: true,
                    ..Default::default()
                });
            }),
            format!("log.entries[{}].action.table.abort.reason", last + 1),
            "1048576 bytes long; the limit is 256 bytes",
        ),
    ];
    let dir = tempfile::tempdir().expect("dir");
    for (changed, field, limit) in &cases {
        let verify = client
            .verify_log(pb::VerifyLogRequest {
                log: Some(changed.clone()),
            })
            .await;
        let replay = replay(&mut client, changed, None).await;
        for (rpc, answer) in [
            ("VerifyLog", verify.map(|_| ())),
            ("ReplayLog", replay.map(|_| ())),
        ] {
            let refused =
                answer.expect_err(&format!("{rpc} refuses a log with {field} over its limit"));
            assert_eq!(
                refused.code(),
                Code::InvalidArgument,
                "{rpc} {field}: {refused:?}"
            );
            let message = refused.message();
            assert!(
                message.starts_with(&format!("{rpc}Request.{field}: ")) && message.contains(limit),
                "{rpc} names {field} and its limit ({limit}): {message}"
            );
            assert!(
                message.len() < 512 && !message.contains(&"x".repeat(100)),
                "{rpc} {field}: the value is not echoed: {} bytes",
                message.len()
            );
        }
        // The JSON form of the same log, through the command line.
        let file = dir.path().join("log.json");
        let json = tabula::json::to_json(changed, "tabula.v1.GameLog").expect("JSON");
        std::fs::write(&file, json).expect("write");
        let verify = common::servers::tabula(&["verify", file.to_str().expect("utf-8 path")]);
        let report = String::from_utf8_lossy(&verify.stdout);
        assert_eq!(verify.status.code(), Some(1), "{field}: {report:.300}");
        let short_field = field.trim_start_matches("log.");
        assert!(
            report.contains(&format!("the log's {short_field}: ")) && report.contains(limit),
            "`tabula verify` names {short_field}: {report:.300}"
        );
    }

    // The limits are the live API's, not tighter: a log at each limit verifies. Edited by hand,
    // it is no longer what the server signed (the players are signed): it goes unsigned.
    let at_limits = with(&|l| {
        l.entries[0].request_id = "r".repeat(128);
        l.players = vec![player(0, &"é".repeat(64), &"i".repeat(128))];
        l.signed_commitment = None;
        l.signed_final_head = None;
        for entry in &mut l.entries {
            entry.action_commitment.clear();
            entry.head.clear();
        }
    });
    let verified = client
        .verify_log(pb::VerifyLogRequest {
            log: Some(at_limits.clone()),
        })
        .await
        .expect("VerifyLog")
        .into_inner();
    assert!(verified.valid, "{verified:?}");
    replay(&mut client, &at_limits, Some(1))
        .await
        .expect("ReplayLog at the limits");
}
