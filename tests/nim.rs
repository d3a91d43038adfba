//! Nim, the test-only game (the `nim` feature), played end to end through the real gRPC service
//! by name alone: found in ListGameTypes, created from its registry config, played by two seats
//! from their legal-action listings (an amount set through `amount_field`), and verified.

use std::collections::BTreeMap;

use crate::common;

use common::*;
use tabula::proto::v1 as pb;
use tabula::service::{OperatorOptions, ServiceOptions};

on_every_store!(a_game_keeps_the_rules_version_it_was_created_under);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nim_is_listed_created_played_to_the_end_and_verified() {
    let replica = Replica::start(&Backend::memory()).await;
    let mut client = replica.client().await;
    let listed = list_game_types(&mut client).await;
    let nim = listed
        .iter()
        .find(|game| game.name == "nim")
        .expect("the test build hosts Nim");
    assert_eq!(nim.game, pb::GameKind::Nim as i32);
    assert_eq!((nim.min_seats, nim.max_seats), (2, 2));
    assert_eq!(nim.chance(), pb::ChanceMode::Deterministic);
    assert_eq!(nim.information(), pb::InformationKind::Perfect);

    let registered = tabula::hosting::find_game("nim").expect("registered");
    let game = create(&mut client, registered.config(2), 1).await;
    assert_eq!(game.game, pb::GameKind::Nim as i32);
    assert_eq!(game.seats.len(), 2);

    // nim-2, the newest rules: four heaps (3, 4, 5, 6) by default, taken whole heap by heap, so
    // seat 1 takes the last.
    assert_eq!(game.rules_version, "nim-2");
    let (version, winners) = play_heaps_whole(&mut client, &game).await;
    assert_eq!((version, winners), (4, vec![1]));
    let log = export(&mut client, &game.game_id).await;
    assert!(log.complete);
    let verdict = client
        .verify_log(pb::VerifyLogRequest { log: Some(log) })
        .await
        .expect("VerifyLog")
        .into_inner();
    assert!(verdict.valid, "{}", verdict.error);
    assert_eq!(verdict.status.map(|status| status.winners), Some(vec![1]));
}

/// Plays `game` to its end, each seat taking the whole of the first heap left (the listing's
/// range, sent through the amount field the listing names). The final version and the winners.
async fn play_heaps_whole(client: &mut Client, game: &pb::CreateGameResponse) -> (u64, Vec<u32>) {
    let mut version = 0;
    loop {
        let view = spectator_view(client, &game.game_id).await;
        let status = view.status.expect("status");
        let Some(seat) = status.to_act else {
            assert!(status.finished);
            return (version, status.winners);
        };
        let mine = seat_view(client, &game.game_id, &token(game, seat)).await;
        let entry = mine.legal_actions.first().expect("a legal move");
        let action = match &entry.amount_range {
            Some(range) => {
                assert_eq!(entry.amount_field, "nim.count");
                tabula::hosting::with_amount(entry.action.as_ref().expect("action"), range.max)
            }
            None => entry.action.clone().expect("action"),
        };
        let answer = client
            .act(authorized(
                pb::ActRequest {
                    narrate: false,
                    game_id: game.game_id.clone(),
                    action: Some(action),
                    expected_version: Some(version),
                    request_id: format!("nim-{version}"),
                    omit_view: false,
                },
                &token(game, seat),
            ))
            .await
            .expect("Act")
            .into_inner();
        version = answer.version;
        assert!(version < 50, "Nim's default heaps end within 18 moves");
    }
}

/// Issue #25, item 2: a rules change is a new rules version, and a game keeps the version it was
/// created under. Nim's nim-2 changed the default number of heaps; a game created under nim-1
/// (asked for by the creator, or pinned by the operator for new games) still plays three heaps and
/// verifies, and versions this build does not play are refused, naming the version, on every
/// path: CreateGame, a stored game (GetView, Act, ExportLog, Observe) and VerifyLog.
async fn a_game_keeps_the_rules_version_it_was_created_under(backend: &Backend) {
    let replica = Replica::start_with(
        backend,
        ServiceOptions {
            operator: Some(OperatorOptions {
                token: OPERATOR.parse().expect("an operator token"),
                required_for_create: false,
            }),
            ..test_options()
        },
    )
    .await;
    let mut client = replica.client().await;
    let nim = list_game_types(&mut client)
        .await
        .into_iter()
        .find(|game| game.name == "nim")
        .expect("Nim is listed");
    assert_eq!(nim.rules_versions, vec!["nim-1", "nim-2"]);
    assert_eq!(nim.rules_version, "nim-2", "new games get the newest");

    let config = tabula::hosting::find_game("nim")
        .expect("registered")
        .config(2);
    let create_under = |rules_version: &str| pb::CreateGameRequest {
        config: Some(config.clone()),
        rules_version: rules_version.to_owned(),
        ..Default::default()
    };
    let old = client
        .create_game(create_under("nim-1"))
        .await
        .expect("CreateGame under nim-1")
        .into_inner();
    assert_eq!(old.rules_version, "nim-1");
    let (version, winners) = play_heaps_whole(&mut client, &old).await;
    assert_eq!((version, winners), (3, vec![0]), "nim-1 keeps three heaps");
    let old_log = export(&mut client, &old.game_id).await;
    assert_eq!(old_log.rules_version, "nim-1");
    assert_eq!(old_log.created_by, tabula::RELEASE);
    let verdict = client
        .verify_log(pb::VerifyLogRequest {
            log: Some(old_log.clone()),
        })
        .await
        .expect("VerifyLog")
        .into_inner();
    assert!(verdict.valid, "{}", verdict.error);

    // A version this build does not play: refused at creation, naming the ones it plays.
    let refused = client
        .create_game(create_under("nim-9"))
        .await
        .expect_err("nim-9 is not played");
    assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused:?}");
    assert!(
        refused.message().contains("nim-9") && refused.message().contains("nim-1, nim-2"),
        "{refused:?}"
    );
    // ... and a log under it is not judged here (FAILED_PRECONDITION, not "invalid").
    let mut foreign = old_log.clone();
    foreign.rules_version = "nim-9".into();
    let refused = client
        .verify_log(pb::VerifyLogRequest { log: Some(foreign) })
        .await
        .expect_err("nim-9 logs are not judged");
    assert_eq!(
        refused.code(),
        tonic::Code::FailedPrecondition,
        "{refused:?}"
    );
    assert!(refused.message().contains("\"nim-9\""), "{refused:?}");

    // The operator lists the games of one rules version.
    let mut admin = admin(&replica).await;
    let newer = create(&mut client, config.clone(), 2).await;
    assert_eq!(newer.rules_version, "nim-2");
    for (rules_version, expected) in [("nim-1", &old.game_id), ("nim-2", &newer.game_id)] {
        let listed = admin
            .list_games(authorized(
                pb::ListGamesRequest {
                    game: pb::GameKind::Nim as i32,
                    rules_version: rules_version.into(),
                    ..Default::default()
                },
                OPERATOR,
            ))
            .await
            .expect("ListGames")
            .into_inner();
        let ids: Vec<&str> = listed
            .games
            .iter()
            .map(|game| game.game_id.as_str())
            .collect();
        assert_eq!(ids, vec![expected.as_str()], "games under {rules_version}");
        assert_eq!(listed.games[0].created_by, tabula::RELEASE);
    }

    // ... and counts them by rules version, in one call or a game per call.
    let count = |scan_limit: u32, page_token: String| pb::CountGamesRequest {
        game: pb::GameKind::Nim as i32,
        scan_limit,
        page_token,
        ..Default::default()
    };
    let whole = admin
        .count_games(authorized(count(0, String::new()), OPERATOR))
        .await
        .expect("CountGames")
        .into_inner();
    let nim_count = |rules_version: &str, running, finished| pb::GameCount {
        game: pb::GameKind::Nim as i32,
        rules_version: rules_version.into(),
        running,
        finished,
    };
    assert_eq!(
        whole.counts,
        vec![nim_count("nim-1", 0, 1), nim_count("nim-2", 1, 0)]
    );
    assert_eq!(whole.games_counted, 2);
    assert!(whole.next_page_token.is_empty(), "one call reads the index");
    let (mut summed, mut page_token, mut calls) = (BTreeMap::new(), String::new(), 0);
    loop {
        let part = admin
            .count_games(authorized(count(1, page_token.clone()), OPERATOR))
            .await
            .expect("CountGames, one game per call")
            .into_inner();
        assert!(part.games_counted <= 1, "{part:?}");
        for counted in part.counts {
            let sum: &mut (u64, u64) = summed.entry(counted.rules_version).or_default();
            sum.0 += counted.running;
            sum.1 += counted.finished;
        }
        calls += 1;
        assert!(calls <= 4, "two games take at most three calls");
        if part.next_page_token.is_empty() {
            break;
        }
        page_token = part.next_page_token;
        // The token belongs to the count of Nim games.
        let refused = admin
            .count_games(authorized(
                pb::CountGamesRequest {
                    page_token: page_token.clone(),
                    ..Default::default()
                },
                OPERATOR,
            ))
            .await
            .expect_err("a token of another count");
        assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused:?}");
    }
    assert_eq!(
        summed,
        BTreeMap::from([("nim-1".to_string(), (0, 1)), ("nim-2".to_string(), (1, 0))])
    );

    // The operator pins nim-1 for new games (a rollout that adds a version): a replica with the
    // pin creates nim-1 games unless the creator asks otherwise.
    let mut pinned_options = test_options();
    pinned_options
        .new_game_rules
        .insert(pb::GameKind::Nim, "nim-1");
    let pinned = Replica::start_with(backend, pinned_options).await;
    let mut pinned_client = pinned.client().await;
    let game = create(&mut pinned_client, config.clone(), 3).await;
    assert_eq!(game.rules_version, "nim-1");
    assert_eq!(
        play_heaps_whole(&mut pinned_client, &game).await,
        (3, vec![0])
    );

    // A stored game under a version this build does not play (a newer release created it), read
    // by a replica with a cold cache: every path answers FAILED_PRECONDITION naming the version.
    if let Some(url) = backend.redis_url() {
        let running = create(&mut client, config.clone(), 4).await;
        let mut raw = ::redis::Client::open(url.as_str())
            .and_then(|redis| redis.get_connection())
            .expect("a raw Redis connection");
        let _: () = ::redis::cmd("HSET")
            .arg(format!("tabula:{{{}}}:meta", running.game_id))
            .arg("rules_version")
            .arg("nim-9")
            .query(&mut raw)
            .expect("HSET");
        let cold = Replica::start(backend).await;
        let mut cold_client = cold.client().await;
        let expect_named = |status: tonic::Status| {
            assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");
            assert!(status.message().contains("\"nim-9\""), "{status:?}");
            assert!(status.message().contains("nim-1, nim-2"), "{status:?}");
        };
        let id = running.game_id.clone();
        expect_named(
            cold_client
                .get_view(pb::GetViewRequest {
                    game_id: id.clone(),
                    ..Default::default()
                })
                .await
                .expect_err("GetView"),
        );
        expect_named(
            cold_client
                .export_log(pb::ExportLogRequest {
                    narrate: false,
                    game_id: id.clone(),
                })
                .await
                .expect_err("ExportLog"),
        );
        expect_named(
            cold_client
                .act(authorized(
                    pb::ActRequest {
                        narrate: false,
                        game_id: id.clone(),
                        action: Some(pb::Action {
                            game: Some(pb::action::Game::Nim(Default::default())),
                        }),
                        expected_version: Some(0),
                        request_id: "r".into(),
                        omit_view: false,
                    },
                    &token(&running, 0),
                ))
                .await
                .expect_err("Act"),
        );
        let observed = match cold_client
            .observe(pb::ObserveRequest {
                game_id: id,
                ..Default::default()
            })
            .await
        {
            Err(status) => status,
            Ok(stream) => stream
                .into_inner()
                .message()
                .await
                .expect_err("the stream fails"),
        };
        expect_named(observed);
    }
}
