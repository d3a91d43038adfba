//! Table entries end to end: resigning through the real gRPC service in every game, timeouts
//! under both policies and aborts appended by the server's internal entry point, exported and
//! re-executed logs holding them, idempotent retries, and old snapshots ignored. Each scenario
//! runs on the memory store, on a real `redis-server` of its own and on a Redis Cluster of its
//! own (three masters).

use crate::common;

use std::sync::Arc;

use common::*;
use futures::StreamExt;
use tabula::games::Seed;
use tabula::games::common::GameRng;
use tabula::hosting::SYSTEM_SEAT;
use tabula::proto::v1 as pb;
use tabula::proto::{la_strada, manila, strozzi};
use tabula::service::{TableEntryResult, Tabula};
use tabula::store::Snapshot;
use tonic::Code;

on_every_store!(
    resigning_works_in_every_game,
    the_last_seat_standing_wins,
    timeouts_play_the_default_or_forfeit,
    a_move_that_arrives_first_beats_a_timeout,
    an_abort_ends_the_game_with_no_winners,
    a_retried_resignation_is_answered_not_repeated,
    seats_cannot_append_server_entries,
    an_older_snapshot_is_ignored,
);

fn config(game: pb::game_config::Game, policy: pb::TimeoutPolicy) -> pb::GameConfig {
    pb::GameConfig {
        game: Some(game),
        table: Some(pb::TableConfig {
            timeout_policy: policy as i32,
            ..Default::default()
        }),
    }
}

/// Every hosted game, at its smallest table and one larger (where it has one), with the options
/// that hide something from other seats or change who acts on at one of them: Strozzi's hidden
/// money at the smallest table, Manila's pirates at the larger.
fn every_game() -> Vec<(u32, pb::game_config::Game)> {
    use pb::game_config::Game;
    let mut games = Vec::new();
    for game in tabula::hosting::registry() {
        let facts = game.game_type;
        let larger = (facts.min_seats < facts.max_seats).then_some(facts.min_seats + 1);
        for players in std::iter::once(facts.min_seats).chain(larger) {
            let smallest = players == facts.min_seats;
            let config = match game.config_case(players) {
                Game::Strozzi(config) => Game::Strozzi(strozzi::v1::Config {
                    hidden_money: smallest,
                    ..config
                }),
                Game::Manila(config) => Game::Manila(manila::v1::Config {
                    pirate_variant: !smallest,
                    ..config
                }),
                other => other,
            };
            games.push((players, config));
        }
    }
    games
}

fn table(kind: pb::table_action::Kind) -> pb::TableAction {
    pb::TableAction { kind: Some(kind) }
}

fn timeout(seat: u32) -> pb::TableAction {
    table(pb::table_action::Kind::Timeout(pb::table_action::Timeout {
        seat,
    }))
}

fn abort(reason: &str) -> pb::TableAction {
    table(pb::table_action::Kind::Abort(pb::table_action::Abort {
        reason: reason.into(),
    }))
}

fn table_events(events: &[pb::Event]) -> Vec<pb::table_event::Kind> {
    events
        .iter()
        .filter_map(|event| match &event.game {
            Some(pb::event::Game::Table(table)) => table.kind.clone(),
            _ => None,
        })
        .collect()
}

async fn resign(
    client: &mut Client,
    game: &pb::CreateGameResponse,
    seat: u32,
    request_id: &str,
) -> Result<pb::ActResponse, tonic::Status> {
    client
        .act(authorized(
            pb::ActRequest {
                narrate: false,
                game_id: game.game_id.clone(),
                action: Some(resign_action()),
                expected_version: None,
                request_id: request_id.into(),
                omit_view: false,
            },
            &token(game, seat),
        ))
        .await
        .map(tonic::Response::into_inner)
}

/// A random legal move by the seat to act; its answer.
async fn random_move(
    client: &mut Client,
    game: &pb::CreateGameResponse,
    rng: &mut GameRng,
) -> Option<pb::ActResponse> {
    let public = spectator_view(client, &game.game_id).await;
    let seat = public.status.expect("status").to_act?;
    let mine = seat_view(client, &game.game_id, &token(game, seat)).await;
    let action = choose(&mine.legal_actions, rng);
    Some(
        client
            .act(authorized(
                pb::ActRequest {
                    narrate: false,
                    game_id: game.game_id.clone(),
                    action: Some(action),
                    expected_version: Some(mine.version),
                    request_id: format!("move-{}", mine.version),
                    omit_view: false,
                },
                &token(game, seat),
            ))
            .await
            .expect("a listed move is accepted")
            .into_inner(),
    )
}

/// The complete log re-executes, and reaches `status`.
async fn verifies(client: &mut Client, game_id: &str, status: &pb::GameStatus) -> pb::GameLog {
    let log = export(client, game_id).await;
    assert!(log.complete, "an ended game's log is complete");
    assert_eq!(log.seed.len(), 32, "and reveals the seed");
    let report = client
        .verify_log(pb::VerifyLogRequest {
            log: Some(log.clone()),
        })
        .await
        .expect("VerifyLog")
        .into_inner();
    assert!(report.valid, "verification failed: {}", report.error);
    assert_eq!(report.verified_version, log.entries.len() as u64);
    assert_eq!(report.status.as_ref(), Some(status));
    log
}

/// A seat resigns in every game, through the gRPC service: two-player games end at once with the
/// opponent winning; larger ones are played to the end by the others, the resigned seat's
/// decisions taken by its default actions, and it does not win. The exported log re-executes.
async fn resigning_works_in_every_game(backend: &Backend) {
    let (a, b) = (Replica::start(backend).await, Replica::start(backend).await);
    let mut clients = [a.client().await, b.client().await];
    for (index, (players, game_config)) in every_game().into_iter().enumerate() {
        let seed = 40 + index as u64;
        let config = config(game_config, pb::TimeoutPolicy::Unspecified);
        let mut game = create(&mut clients[0], config.clone(), seed).await;
        let mut rng = GameRng::from_seed(&Seed::from_u64(seed));
        for step in 0..rng.below(12) {
            random_move(&mut clients[step as usize % 2], &game, &mut rng).await;
        }
        // A short game (any registered game may be) can end within those moves: then the seat
        // resigns at the start of a fresh game instead, still in the middle of a game.
        let ended = spectator_view(&mut clients[0], &game.game_id)
            .await
            .status
            .is_some_and(|status| status.finished);
        if ended {
            game = create(&mut clients[0], config, seed + 1_000).await;
        }
        // Any seat may resign, on its turn or not.
        let resigned = rng.below(u64::from(players)) as u32;
        let answer = resign(&mut clients[1], &game, resigned, "resign")
            .await
            .expect("Resign");
        let kinds = table_events(&answer.events);
        assert!(
            matches!(&kinds[0], pb::table_event::Kind::SeatResigned(r) if r.seat == resigned && !r.forfeit),
            "{kinds:?}"
        );
        assert!(
            answer.legal_actions.is_empty(),
            "a resigned seat has no moves"
        );
        let status = answer.status.expect("status");
        assert_eq!(status.resigned, vec![resigned]);
        if players == 2 {
            assert!(status.finished);
            assert_eq!(status.ending, pb::GameEnding::Resignation as i32);
            assert_eq!(status.winners, vec![1 - resigned]);
            verifies(&mut clients[0], &game.game_id, &status).await;
            continue;
        }
        assert!(!status.finished);
        assert_ne!(status.to_act, Some(resigned));
        let mut moves = 0;
        while let Some(answer) = random_move(&mut clients[moves % 2], &game, &mut rng).await {
            moves += 1;
            assert!(moves < 5_000, "the game ends");
            let status = answer.status.expect("status");
            assert_ne!(
                status.to_act,
                Some(resigned),
                "nobody waits for a resigned seat"
            );
        }
        let status = spectator_view(&mut clients[0], &game.game_id)
            .await
            .status
            .expect("status");
        assert!(status.finished);
        assert_eq!(status.ending, pb::GameEnding::Rules as i32);
        assert_eq!(status.scores.len(), players as usize);
        assert!(!status.winners.is_empty() && !status.winners.contains(&resigned));
        // The seat cannot move any more, nor resign twice.
        let again = resign(&mut clients[0], &game, resigned, "again").await;
        assert_eq!(
            again.expect_err("game over").code(),
            Code::FailedPrecondition
        );
        let log = verifies(&mut clients[1], &game.game_id, &status).await;
        // The resignation is the seat's own entry; defaults played for it are announced.
        let entry = log
            .entries
            .iter()
            .find(|entry| entry.action == Some(resign_action()))
            .expect("the resignation is logged");
        assert_eq!(entry.seat, resigned);
        assert!(!entry.system);
        let defaults = log
            .entries
            .iter()
            .flat_map(|entry| table_events(&entry.events))
            .filter(|kind| matches!(kind, pb::table_event::Kind::DefaultActionPlayed(p) if p.seat == resigned))
            .count();
        assert!(
            defaults > 0,
            "the resigned seat's decisions were played for it"
        );
    }
}

/// When every seat but one has resigned, that seat wins at once.
async fn the_last_seat_standing_wins(backend: &Backend) {
    let replica = Replica::start(backend).await;
    let mut client = replica.client().await;
    let game = create(
        &mut client,
        config(
            pb::game_config::Game::Manila(manila::v1::Config {
                players: 4,
                ..Default::default()
            }),
            pb::TimeoutPolicy::Unspecified,
        ),
        12,
    )
    .await;
    for seat in [2, 0] {
        let status = resign(&mut client, &game, seat, "r")
            .await
            .expect("resigns")
            .status;
        assert!(!status.expect("status").finished);
    }
    let last = resign(&mut client, &game, 3, "r").await.expect("resigns");
    let status = last.status.expect("status");
    assert!(status.finished);
    assert_eq!(status.ending, pb::GameEnding::Resignation as i32);
    assert_eq!(status.winners, vec![1]);
    assert_eq!(status.resigned, vec![2, 0, 3]);
    assert!(status.scores.is_empty());
    verifies(&mut client, &game.game_id, &status).await;
}

/// The server's own service instance on the test's store, as another replica (its own cache).
async fn server_side(backend: &Backend) -> Arc<Tabula> {
    Tabula::new(backend.store().await, test_options())
}

/// A timeout appended by the server: the seat's default action is played for it (default
/// policy), or it forfeits (forfeit policy). The entries are the server's (`system`), observers
/// see them, and the log re-executes.
async fn timeouts_play_the_default_or_forfeit(backend: &Backend) {
    let replica = Replica::start(backend).await;
    let mut client = replica.client().await;
    let server = server_side(backend).await;
    let strozzi4 = || {
        pb::game_config::Game::Strozzi(strozzi::v1::Config {
            players: 4,
            hidden_money: true,
            ..Default::default()
        })
    };

    // Default action.
    let game = create(
        &mut client,
        config(strozzi4(), pb::TimeoutPolicy::DefaultAction),
        21,
    )
    .await;
    let mut stream = observe(&mut client, &game.game_id, None).await;
    let first = stream.next().await.expect("a first message").expect("ok");
    let waiting = first.status.expect("status").to_act.expect("someone acts");
    let result = server
        .append_table_entry(&game.game_id, Some(0), timeout(waiting), "timeout-0".into())
        .await
        .expect("appended");
    let TableEntryResult::Appended {
        version: 1,
        status: Some(status),
    } = result
    else {
        panic!("not appended at version 1: {result:?}");
    };
    assert!(status.resigned.is_empty());
    assert_ne!(status.to_act, Some(waiting));
    let seen = stream
        .next()
        .await
        .expect("the timeout streams")
        .expect("ok");
    assert_eq!(seen.version, 1);
    let logged = seen.action.expect("the entry");
    assert!(logged.system);
    assert_eq!(logged.seat, SYSTEM_SEAT);
    let kinds = table_events(&seen.events);
    assert!(matches!(&kinds[0], pb::table_event::Kind::SeatTimedOut(t) if t.seat == waiting));
    assert!(
        matches!(&kinds[1], pb::table_event::Kind::DefaultActionPlayed(p) if p.seat == waiting && p.timed_out)
    );
    // The same request id again: nothing more is appended.
    let retried = server
        .append_table_entry(&game.game_id, Some(0), timeout(waiting), "timeout-0".into())
        .await
        .expect("answered");
    assert!(matches!(
        retried,
        TableEntryResult::Appended {
            version: 1,
            status: None
        }
    ));
    let mut rng = GameRng::from_seed(&Seed::from_u64(21));
    while random_move(&mut client, &game, &mut rng).await.is_some() {}
    let status = spectator_view(&mut client, &game.game_id)
        .await
        .status
        .expect("status");
    let log = verifies(&mut client, &game.game_id, &status).await;
    assert!(log.entries[0].system && log.entries[0].seat == SYSTEM_SEAT);

    // Forfeit.
    let game = create(
        &mut client,
        config(strozzi4(), pb::TimeoutPolicy::Forfeit),
        22,
    )
    .await;
    let waiting = game
        .status
        .as_ref()
        .and_then(|s| s.to_act)
        .expect("someone acts");
    let result = server
        .append_table_entry(&game.game_id, Some(0), timeout(waiting), String::new())
        .await
        .expect("appended");
    let TableEntryResult::Appended {
        status: Some(status),
        ..
    } = result
    else {
        panic!("not appended: {result:?}");
    };
    assert_eq!(status.resigned, vec![waiting]);
    // The forfeited seat is out: its moves are refused, and the others play to the end.
    let view = seat_view(&mut client, &game.game_id, &token(&game, waiting)).await;
    assert!(view.legal_actions.is_empty());
    while random_move(&mut client, &game, &mut rng).await.is_some() {}
    let status = spectator_view(&mut client, &game.game_id)
        .await
        .status
        .expect("status");
    assert!(!status.winners.contains(&waiting));
    let log = verifies(&mut client, &game.game_id, &status).await;
    assert!(table_events(&log.entries[0].events).iter().any(
        |kind| matches!(kind, pb::table_event::Kind::SeatResigned(r) if r.seat == waiting && r.forfeit)
    ));

    // Two-player forfeit: the opponent wins.
    let game = create(
        &mut client,
        config(
            pb::game_config::Game::MediciVsStrozzi(Default::default()),
            pb::TimeoutPolicy::Forfeit,
        ),
        23,
    )
    .await;
    let result = server
        .append_table_entry(&game.game_id, Some(0), timeout(0), String::new())
        .await
        .expect("appended");
    let TableEntryResult::Appended {
        status: Some(status),
        ..
    } = result
    else {
        panic!("not appended: {result:?}");
    };
    assert_eq!(status.ending, pb::GameEnding::Resignation as i32);
    assert_eq!(status.winners, vec![1]);
    verifies(&mut client, &game.game_id, &status).await;
}

/// A timeout decided at a version the log has left is not appended: the move won. A timeout
/// naming a seat that is not the seat to act is refused, and one for a version not reached yet
/// is out of range.
async fn a_move_that_arrives_first_beats_a_timeout(backend: &Backend) {
    let replica = Replica::start(backend).await;
    let mut client = replica.client().await;
    let server = server_side(backend).await;
    let game = create(
        &mut client,
        config(
            pb::game_config::Game::MediciVsStrozzi(Default::default()),
            pb::TimeoutPolicy::DefaultAction,
        ),
        31,
    )
    .await;
    // The server's cache learns the game at version 0.
    let premature = server
        .append_table_entry(&game.game_id, Some(1), timeout(0), String::new())
        .await
        .expect_err("version 1 does not exist yet");
    assert_eq!(tonic::Status::from(premature).code(), Code::OutOfRange);
    let wrong_seat = server
        .append_table_entry(&game.game_id, Some(0), timeout(1), String::new())
        .await
        .expect_err("seat 1 is not to act");
    assert_eq!(
        tonic::Status::from(wrong_seat).code(),
        Code::FailedPrecondition
    );
    // A move arrives through the replica before the timeout.
    let mut rng = GameRng::from_seed(&Seed::from_u64(31));
    random_move(&mut client, &game, &mut rng)
        .await
        .expect("moved");
    let lost = server
        .append_table_entry(&game.game_id, Some(0), timeout(0), String::new())
        .await
        .expect("answered");
    assert_eq!(lost, TableEntryResult::LostRace { current: 1 });
    assert_eq!(export(&mut client, &game.game_id).await.entries.len(), 1);
}

/// An abort ends the game with no winners and its reason; moves are refused afterwards; the log
/// is complete and re-executes to the aborted status.
async fn an_abort_ends_the_game_with_no_winners(backend: &Backend) {
    let replica = Replica::start(backend).await;
    let mut client = replica.client().await;
    let server = server_side(backend).await;
    let game = create(
        &mut client,
        config(
            pb::game_config::Game::Manila(manila::v1::Config {
                players: 3,
                ..Default::default()
            }),
            pb::TimeoutPolicy::Unspecified,
        ),
        41,
    )
    .await;
    // The server's replica learns the game at version 0.
    let too_long = server
        .append_table_entry(&game.game_id, None, abort(&"x".repeat(300)), String::new())
        .await
        .expect_err("reason too long");
    assert_eq!(tonic::Status::from(too_long).code(), Code::InvalidArgument);
    let mut rng = GameRng::from_seed(&Seed::from_u64(41));
    for _ in 0..5 {
        random_move(&mut client, &game, &mut rng).await;
    }
    // Five moves later, unknown to the server's cache: the abort follows the log.
    let result = server
        .append_table_entry(
            &game.game_id,
            None,
            abort("the operator ended it"),
            "end".into(),
        )
        .await
        .expect("aborted");
    let TableEntryResult::Appended {
        version: 6,
        status: Some(status),
    } = result
    else {
        panic!("not appended after the five moves: {result:?}");
    };
    assert!(status.finished);
    assert_eq!(status.ending, pb::GameEnding::Aborted as i32);
    assert_eq!(status.abort_reason, "the operator ended it");
    assert!(status.winners.is_empty());
    let view = spectator_view(&mut client, &game.game_id).await;
    assert_eq!(view.status.as_ref(), Some(&*status));
    let refused = client
        .act(authorized(
            pb::ActRequest {
                narrate: false,
                game_id: game.game_id.clone(),
                action: Some(resign_action()),
                expected_version: None,
                request_id: String::new(),
                omit_view: false,
            },
            &token(&game, 0),
        ))
        .await
        .expect_err("the game is over");
    assert_eq!(refused.code(), Code::FailedPrecondition);
    let again = server
        .append_table_entry(&game.game_id, None, abort("twice"), String::new())
        .await
        .expect_err("already over");
    assert_eq!(tonic::Status::from(again).code(), Code::FailedPrecondition);
    let log = verifies(&mut client, &game.game_id, &status).await;
    let last = log.entries.last().expect("the abort");
    assert!(last.system);
    assert_eq!(last.request_id, "end");

    // A tampered log: the server's entry claimed by a seat is refused at that entry.
    let mut tampered = log.clone();
    let index = tampered.entries.len() - 1;
    tampered.entries[index].system = false;
    let report = client
        .verify_log(pb::VerifyLogRequest {
            log: Some(tampered.clone()),
        })
        .await
        .expect("VerifyLog")
        .into_inner();
    assert!(!report.valid);
    assert_eq!(report.invalid_version, Some(index as u64 + 1));
    tampered.entries[index].seat = 0;
    let report = client
        .verify_log(pb::VerifyLogRequest {
            log: Some(tampered),
        })
        .await
        .expect("VerifyLog")
        .into_inner();
    assert_eq!(report.invalid_version, Some(index as u64 + 1));
    assert!(report.error.contains("only the server"), "{}", report.error);
}

/// Retrying a resignation with the same request id answers the first result again (from any
/// replica); a new request id is refused; a resigned seat's moves are refused.
async fn a_retried_resignation_is_answered_not_repeated(backend: &Backend) {
    let (a, b) = (Replica::start(backend).await, Replica::start(backend).await);
    let (mut client_a, mut client_b) = (a.client().await, b.client().await);
    let game = create(
        &mut client_a,
        config(
            pb::game_config::Game::LaStrada(la_strada::v1::Config {
                players: 4,
                ..Default::default()
            }),
            pb::TimeoutPolicy::Unspecified,
        ),
        51,
    )
    .await;
    let waiting = game
        .status
        .as_ref()
        .and_then(|s| s.to_act)
        .expect("someone acts");
    let first = resign(&mut client_a, &game, waiting, "resign-once")
        .await
        .expect("resigns");
    assert!(!first.replayed);
    let retry = resign(&mut client_b, &game, waiting, "resign-once")
        .await
        .expect("retry answered");
    assert!(retry.replayed);
    assert_eq!(retry.version, first.version);
    assert_eq!(retry.events, first.events);
    assert_eq!(retry.status, first.status);
    assert_eq!(export(&mut client_a, &game.game_id).await.entries.len(), 1);
    let twice = resign(&mut client_b, &game, waiting, "resign-again").await;
    assert_eq!(
        twice.expect_err("resigned already").code(),
        Code::FailedPrecondition
    );
    // Its default (placing a workshop) was played for it at once: the game waits for another.
    let kinds = table_events(&first.events);
    assert!(kinds.iter().any(
        |kind| matches!(kind, pb::table_event::Kind::DefaultActionPlayed(p) if p.seat == waiting)
    ));
    let status = first.status.expect("status");
    assert_ne!(status.to_act, Some(waiting));
    // A move sent by the resigned seat is refused.
    let next = status.to_act.expect("someone acts");
    let legal = seat_view(&mut client_a, &game.game_id, &token(&game, next))
        .await
        .legal_actions;
    let refused = client_a
        .act(authorized(
            pb::ActRequest {
                narrate: false,
                game_id: game.game_id.clone(),
                action: legal[0].action.clone(),
                expected_version: None,
                request_id: String::new(),
                omit_view: false,
            },
            &token(&game, waiting),
        ))
        .await
        .expect_err("not its turn, and resigned");
    assert_eq!(refused.code(), Code::FailedPrecondition);
}

/// Timeouts, aborts and hand-overs to a bot are the server's: a seat sending any of them is
/// refused with the same code, PERMISSION_DENIED (a hand-over once got FAILED_PRECONDITION from
/// the table's rules while the other two were refused up front), naming the entry it sent.
async fn seats_cannot_append_server_entries(backend: &Backend) {
    let replica = Replica::start(backend).await;
    let mut client = replica.client().await;
    let game = create(&mut client, medici_config(), 61).await;
    let hand_to_bot = table(pb::table_action::Kind::HandToBot(
        pb::table_action::HandToBot {
            bot: Some(pb::BotSeat {
                seat: 1,
                kind: pb::BotKind::Search as i32,
                iterations: 0,
            }),
        },
    ));
    for (name, entry) in [
        ("hand_to_bot", hand_to_bot),
        ("timeout", timeout(0)),
        ("abort", abort("mine")),
    ] {
        let refused = client
            .act(authorized(
                pb::ActRequest {
                    narrate: false,
                    game_id: game.game_id.clone(),
                    action: Some(pb::Action {
                        game: Some(pb::action::Game::Table(entry)),
                    }),
                    expected_version: None,
                    request_id: String::new(),
                    omit_view: false,
                },
                &token(&game, 0),
            ))
            .await
            .expect_err("refused");
        assert_eq!(
            refused.code(),
            Code::PermissionDenied,
            "{name}: {refused:?}"
        );
        assert!(
            refused
                .message()
                .starts_with(&format!("{name} entries are appended by the server")),
            "{name}: {}",
            refused.message()
        );
    }
    assert!(export(&mut client, &game.game_id).await.entries.is_empty());
}

/// A snapshot in the format before table entries (the engine state alone) is ignored: a cold
/// replica replays the log instead and reaches the same game.
async fn an_older_snapshot_is_ignored(backend: &Backend) {
    let replica = Replica::start(backend).await;
    let mut client = replica.client().await;
    let game = create(&mut client, medici_config(), 71).await;
    let mut rng = GameRng::from_seed(&Seed::from_u64(71));
    for _ in 0..20 {
        random_move(&mut client, &game, &mut rng).await;
    }
    let version = 20;
    // The engine state at version 20, encoded as snapshots were before: replay the log.
    let store = backend.store().await;
    let loaded = store
        .load(&game.game_id)
        .await
        .expect("load")
        .expect("game");
    let config: pb::GameConfig =
        prost::Message::decode(loaded.meta.config.as_slice()).expect("config");
    let mut engine =
        <tabula::games::medici_vs_strozzi::MediciVsStrozzi as tabula::games::Engine>::setup(
            &tabula::proto::medici_vs_strozzi::v1::Config::default(),
            &loaded.meta.seed,
        )
        .expect("setup");
    assert!(config.table.is_none(), "created without table settings");
    for entry in store
        .entries_after(&game.game_id, 0)
        .await
        .expect("log")
        .expect("the game exists")
    {
        let action: pb::Action = prost::Message::decode(entry.action.as_slice()).expect("action");
        let Some(pb::action::Game::MediciVsStrozzi(typed)) = action.game else {
            panic!("a move of the game")
        };
        tabula::games::Engine::apply(&mut engine, entry.seat, &typed).expect("replays");
    }
    store
        .save_snapshot(
            &game.game_id,
            &Snapshot {
                version,
                head: None,
                rules_version: loaded.meta.rules_version.clone(),
                state: postcard::to_stdvec(&engine).expect("encodes"),
            },
        )
        .await
        .expect("saved");
    let warm = spectator_view(&mut client, &game.game_id).await;
    let cold = Replica::start(backend).await;
    let mut cold_client = cold.client().await;
    assert_eq!(spectator_view(&mut cold_client, &game.game_id).await, warm);
    // And it plays on.
    random_move(&mut cold_client, &game, &mut rng).await;
}
