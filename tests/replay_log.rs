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
            game_id: game_id.to_owned(),
            version: Some(version),
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
            game_id: log.game_id.clone(),
            version: Some(0),
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
