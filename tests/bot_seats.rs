//! Bot seats through the real gRPC service, two replicas on a real Redis (issue #15): every game
//! with a mix of human and bot seats played to the end (the humans by random legal moves through
//! the client, alternating replicas), each bot move appended exactly once (the exported log has
//! contiguous versions and one entry per bot decision), all-bot games finishing on their own, a
//! replica without bot threads leaving its bot turns to the other replica's sweep, the operator's
//! hand-over (after a resign too) and a bot seat's token refused.

use crate::common;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use common::*;
use tabula::games::Seed;
use tabula::games::common::GameRng;
use tabula::proto::manila::v1 as manila;
use tabula::proto::v1 as pb;
use tabula::service::{BOT_REQUEST_PREFIX, BotOptions, OperatorOptions, ServiceOptions};
use tonic::Code;

/// How long a test waits for bots to reach a human's turn or the end of a game.
const BOT_DEADLINE: Duration = Duration::from_secs(60);

fn options(threads: usize) -> ServiceOptions {
    ServiceOptions {
        operator: Some(OperatorOptions {
            token: OPERATOR.parse().expect("an operator token"),
            required_for_create: false,
        }),
        bots: BotOptions {
            threads,
            think_time: Duration::from_millis(100),
        },
        ..test_options()
    }
}

/// Every hosted game, at its smallest table.
fn every_game() -> Vec<(u32, pb::game_config::Game)> {
    tabula::hosting::registry()
        .iter()
        .map(|game| {
            let players = game.game_type.min_seats;
            (players, game.config_case(players))
        })
        .collect()
}

fn random_bot(seat: u32) -> pb::BotSeat {
    pb::BotSeat {
        seat,
        kind: pb::BotKind::Random as i32,
        iterations: 0,
    }
}

/// A search bot with a tiny budget (fast, and still the real search).
fn search_bot(seat: u32) -> pb::BotSeat {
    pb::BotSeat {
        seat,
        kind: pb::BotKind::Search as i32,
        iterations: 8,
    }
}

fn config(game: pb::game_config::Game, bots: Vec<pb::BotSeat>) -> pb::GameConfig {
    pb::GameConfig {
        game: Some(game),
        table: Some(pb::TableConfig {
            bots,
            ..Default::default()
        }),
    }
}

/// Waits until the game is finished or a seat not in `bots` must act; the spectator's view then.
async fn until_human_or_end(
    client: &mut Client,
    game_id: &str,
    bots: &HashSet<u32>,
) -> pb::GetViewResponse {
    let deadline = Instant::now() + BOT_DEADLINE;
    loop {
        let view = spectator_view(client, game_id).await;
        let status = view.status.clone().expect("status");
        match status.to_act {
            None => return view,
            Some(seat) if !bots.contains(&seat) => return view,
            Some(_) => {}
        }
        assert!(
            Instant::now() < deadline,
            "game {game_id}: bots did not move within {BOT_DEADLINE:?} (at version {})",
            view.version
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Plays the game to its end: humans (the seats with a token in `tokens`) by random legal moves
/// sent alternately to each client, bots by themselves. Returns the final status.
async fn play_to_the_end(
    clients: &mut [Client],
    game_id: &str,
    tokens: &[(u32, String)],
    bots: &HashSet<u32>,
    rng: &mut GameRng,
) -> pb::GameStatus {
    for step in 0..20_000usize {
        let n = clients.len();
        let client = &mut clients[step % n];
        let view = until_human_or_end(client, game_id, bots).await;
        let status = view.status.expect("status");
        let Some(seat) = status.to_act else {
            return status;
        };
        let token = &tokens
            .iter()
            .find(|(s, _)| *s == seat)
            .unwrap_or_else(|| panic!("seat {seat} must act but is neither a bot nor a human"))
            .1;
        let mine = seat_view(client, game_id, token).await;
        if mine.status.as_ref().and_then(|s| s.to_act) != Some(seat) {
            continue;
        }
        let action = choose(&mine.legal_actions, rng);
        let response = client
            .act(authorized(
                pb::ActRequest {
                    narrate: false,
                    game_id: game_id.to_owned(),
                    action: Some(action),
                    expected_version: Some(mine.version),
                    request_id: format!("human-{step}"),
                    omit_view: false,
                },
                token,
            ))
            .await
            .expect("a human's random legal move is accepted")
            .into_inner();
        assert_eq!(response.version, mine.version + 1);
    }
    panic!("game {game_id} did not end");
}

/// The exported log: versions 1..=n without a gap, every entry of a bot seat carrying the request
/// id of the version it was decided at (so it is the one decision made there), and no request id
/// twice for a seat. Entries up to `bots_since` (the last hand-over) may be the seats' humans'.
/// Returns how many entries the bots made.
fn check_log(log: &pb::GameLog, bots: &HashSet<u32>, bots_since: u64) -> usize {
    let mut seen = HashSet::new();
    let mut bot_moves = 0;
    for (index, entry) in log.entries.iter().enumerate() {
        assert_eq!(entry.version, index as u64 + 1, "versions are contiguous");
        if !entry.request_id.is_empty() {
            assert!(
                seen.insert((entry.seat, entry.request_id.clone())),
                "request id {:?} of seat {} appended twice",
                entry.request_id,
                entry.seat
            );
        }
        if bots.contains(&entry.seat) && !entry.system && entry.version > bots_since {
            assert_eq!(
                entry.request_id,
                format!("{BOT_REQUEST_PREFIX}{}", entry.version - 1),
                "a bot's move is decided at the version before it"
            );
            bot_moves += 1;
        }
    }
    bot_moves
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_game_with_human_and_bot_seats_plays_to_the_end_on_two_replicas() {
    let backend = Backend::redis();
    let first = Replica::start_with(&backend, options(1)).await;
    let second = Replica::start_with(&backend, options(1)).await;
    let mut clients = [first.client().await, second.client().await];
    for (index, (seats, game)) in every_game().into_iter().enumerate() {
        // Seat 0 a search bot, seat 1 a human, seat 2 (if any) a random bot.
        let mut bot_seats = vec![search_bot(0)];
        if seats > 2 {
            bot_seats.push(random_bot(2));
        }
        let bots: HashSet<u32> = bot_seats.iter().map(|bot| bot.seat).collect();
        let created = clients[index % 2]
            .create_game(pb::CreateGameRequest {
                config: Some(config(game, bot_seats.clone())),
                seed: Some(Seed::from_u64(index as u64 + 1).0.to_vec()),
                ..Default::default()
            })
            .await
            .expect("CreateGame with bot seats")
            .into_inner();
        let tokens: Vec<(u32, String)> = created
            .seats
            .iter()
            .map(|seat| (seat.seat, seat.token.clone()))
            .collect();
        assert_eq!(
            tokens.iter().map(|(seat, _)| *seat).collect::<Vec<_>>(),
            (0..seats)
                .filter(|seat| !bots.contains(seat))
                .collect::<Vec<_>>(),
            "bot seats get no token"
        );
        assert_eq!(created.status.expect("status").bots, bot_seats);
        let mut rng = GameRng::from_seed(&Seed::from_u64(100 + index as u64));
        let status =
            play_to_the_end(&mut clients, &created.game_id, &tokens, &bots, &mut rng).await;
        assert!(status.finished, "{status:?}");
        assert_eq!(status.bots, bot_seats, "the status names the bot seats");
        let log = export(&mut clients[0], &created.game_id).await;
        assert_eq!(
            log.config
                .clone()
                .and_then(|config| config.table)
                .map(|table| table.bots),
            Some(bot_seats),
            "the exported log names the bot seats"
        );
        let bot_moves = check_log(&log, &bots, 0);
        assert!(bot_moves > 0, "the bots moved");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_bot_games_finish_on_their_own() {
    let backend = Backend::redis();
    let first = Replica::start_with(&backend, options(1)).await;
    let second = Replica::start_with(&backend, options(1)).await;
    let mut creator = first.client().await;
    let mut watcher = second.client().await;
    for (index, (seats, game)) in every_game().into_iter().enumerate() {
        let bot_seats: Vec<pb::BotSeat> = (0..seats).map(random_bot).collect();
        let bots: HashSet<u32> = (0..seats).collect();
        let created = creator
            .create_game(pb::CreateGameRequest {
                config: Some(config(game, bot_seats)),
                seed: Some(Seed::from_u64(200 + index as u64).0.to_vec()),
                ..Default::default()
            })
            .await
            .expect("CreateGame, every seat a bot")
            .into_inner();
        assert!(created.seats.is_empty(), "no seat has a token");
        let view = until_human_or_end(&mut watcher, &created.game_id, &bots).await;
        assert!(view.status.expect("status").finished);
        let log = export(&mut watcher, &created.game_id).await;
        assert_eq!(check_log(&log, &bots, 0), log.entries.len());
        assert!(log.complete);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_without_bot_threads_leaves_its_bot_turns_to_the_sweep() {
    let backend = Backend::redis();
    // The creating replica plays no bot: it only records the turn. Nobody observes the game, so
    // only the other replica's sweep of the pending turns can play it.
    let idle = Replica::start_with(&backend, options(0)).await;
    let sweeper = Replica::start_with(&backend, options(1)).await;
    let mut client = idle.client().await;
    let created = client
        .create_game(pb::CreateGameRequest {
            config: Some(config(
                pb::game_config::Game::MediciVsStrozzi(Default::default()),
                vec![random_bot(0), random_bot(1)],
            )),
            seed: Some(Seed::from_u64(300).0.to_vec()),
            ..Default::default()
        })
        .await
        .expect("CreateGame")
        .into_inner();
    let bots: HashSet<u32> = [0, 1].into();
    let view = until_human_or_end(&mut client, &created.game_id, &bots).await;
    assert!(view.status.expect("status").finished);
    let log = export(&mut sweeper.client().await, &created.game_id).await;
    assert_eq!(check_log(&log, &bots, 0), log.entries.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_hands_seats_to_bots_after_a_resign_and_their_tokens_stop_acting() {
    let backend = Backend::redis();
    let first = Replica::start_with(&backend, options(1)).await;
    let second = Replica::start_with(&backend, options(1)).await;
    let mut clients = [first.client().await, second.client().await];
    let mut operator = admin(&second).await;
    let created = create(
        &mut clients[0],
        pb::GameConfig {
            game: Some(pb::game_config::Game::Manila(manila::Config {
                players: 3,
                ..Default::default()
            })),
            table: None,
        },
        400,
    )
    .await;
    let game_id = created.game_id.clone();
    assert!(created.status.as_ref().expect("status").bots.is_empty());

    // Seat 0 resigns; then the operator hands it to a bot (its resignation stands).
    clients[0]
        .act(authorized(
            pb::ActRequest {
                narrate: false,
                game_id: game_id.clone(),
                action: Some(pb::Action {
                    game: Some(pb::action::Game::Table(pb::TableAction {
                        kind: Some(pb::table_action::Kind::Resign(pb::table_action::Resign {})),
                    })),
                }),
                expected_version: None,
                request_id: "resign".into(),
                omit_view: false,
            },
            &token(&created, 0),
        ))
        .await
        .expect("seat 0 resigns");
    let handed = operator
        .hand_seat_to_bot(authorized(
            pb::HandSeatToBotRequest {
                game_id: game_id.clone(),
                bot: Some(search_bot(0)),
                request_id: "hand-0".into(),
            },
            OPERATOR,
        ))
        .await
        .expect("a resigned seat is handed to a bot")
        .into_inner();
    let status = handed.status.expect("status");
    assert_eq!(status.bots, vec![search_bot(0)]);
    assert_eq!(status.resigned, vec![0]);

    // Handing it over again is refused; so are seats that do not exist and kindless bots.
    let again = operator
        .hand_seat_to_bot(authorized(
            pb::HandSeatToBotRequest {
                game_id: game_id.clone(),
                bot: Some(random_bot(0)),
                request_id: String::new(),
            },
            OPERATOR,
        ))
        .await
        .expect_err("already a bot");
    assert_eq!(again.code(), Code::FailedPrecondition, "{again:?}");
    for (bot, why) in [
        (random_bot(3), "no seat 3"),
        (
            pb::BotSeat {
                seat: 1,
                kind: pb::BotKind::Unspecified as i32,
                iterations: 0,
            },
            "no kind",
        ),
        (
            pb::BotSeat {
                seat: 1,
                kind: pb::BotKind::Search as i32,
                iterations: 1_000_000,
            },
            "too many iterations",
        ),
    ] {
        let refused = operator
            .hand_seat_to_bot(authorized(
                pb::HandSeatToBotRequest {
                    game_id: game_id.clone(),
                    bot: Some(bot),
                    request_id: String::new(),
                },
                OPERATOR,
            ))
            .await
            .expect_err(why);
        assert_eq!(refused.code(), Code::InvalidArgument, "{why}: {refused:?}");
    }

    // Seat 2 is handed over too (a player who left without resigning): its token stops acting,
    // through either replica.
    let handed_2 = operator
        .hand_seat_to_bot(authorized(
            pb::HandSeatToBotRequest {
                game_id: game_id.clone(),
                bot: Some(random_bot(2)),
                request_id: "hand-2".into(),
            },
            OPERATOR,
        ))
        .await
        .expect("seat 2 is handed to a bot")
        .into_inner();
    for client in clients.iter_mut() {
        let view = seat_view(client, &game_id, &token(&created, 2)).await;
        let refused = client
            .act(authorized(
                pb::ActRequest {
                    narrate: false,
                    game_id: game_id.clone(),
                    action: Some(pb::Action {
                        game: Some(pb::action::Game::Table(pb::TableAction {
                            kind: Some(pb::table_action::Kind::Resign(pb::table_action::Resign {})),
                        })),
                    }),
                    expected_version: Some(view.version),
                    request_id: String::new(),
                    omit_view: false,
                },
                &token(&created, 2),
            ))
            .await
            .expect_err("a bot seat's token may not act");
        assert_eq!(refused.code(), Code::PermissionDenied, "{refused:?}");
    }

    // Seat 1 plays on against the two bots to the end.
    let bots: HashSet<u32> = [0, 2].into();
    let tokens = vec![(1, token(&created, 1))];
    let mut rng = GameRng::from_seed(&Seed::from_u64(401));
    let status = play_to_the_end(&mut clients, &game_id, &tokens, &bots, &mut rng).await;
    assert!(status.finished);
    assert!(!status.winners.contains(&0), "a resigned seat never wins");
    let log = export(&mut clients[1], &game_id).await;
    let bot_moves = check_log(&log, &bots, handed_2.version);
    assert!(bot_moves > 0);
    // The resigned seat's later decisions were its bot's moves, not default actions.
    assert!(
        log.entries
            .iter()
            .any(|entry| entry.seat == 0 && !entry.system && entry.version > handed.version),
        "the resigned seat's bot moved"
    );
    let hand_overs = log
        .entries
        .iter()
        .filter(|entry| {
            matches!(
                entry
                    .action
                    .as_ref()
                    .and_then(|action| action.game.as_ref()),
                Some(pb::action::Game::Table(pb::TableAction {
                    kind: Some(pb::table_action::Kind::HandToBot(_))
                }))
            )
        })
        .count();
    assert_eq!(hand_overs, 2, "each hand-over is one logged entry");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_bot_seats_and_reserved_request_ids_are_refused() {
    let backend = Backend::memory();
    let replica = Replica::start_with(&backend, options(1)).await;
    let mut client = replica.client().await;
    let medici = || pb::game_config::Game::MediciVsStrozzi(Default::default());
    for (bots, why) in [
        (vec![random_bot(2)], "seat 2 of 2"),
        (vec![random_bot(0), search_bot(0)], "seat 0 twice"),
        (
            vec![pb::BotSeat {
                seat: 0,
                kind: 7,
                iterations: 0,
            }],
            "unknown kind",
        ),
    ] {
        let refused = client
            .create_game(pb::CreateGameRequest {
                config: Some(config(medici(), bots)),
                ..Default::default()
            })
            .await
            .expect_err(why);
        assert_eq!(refused.code(), Code::InvalidArgument, "{why}: {refused:?}");
    }
    let created = create(&mut client, config(medici(), vec![random_bot(1)]), 500).await;
    let refused = client
        .act(authorized(
            pb::ActRequest {
                narrate: false,
                game_id: created.game_id.clone(),
                action: Some(pb::Action {
                    game: Some(pb::action::Game::Table(pb::TableAction {
                        kind: Some(pb::table_action::Kind::Resign(pb::table_action::Resign {})),
                    })),
                }),
                expected_version: None,
                request_id: format!("{BOT_REQUEST_PREFIX}0"),
                omit_view: false,
            },
            &token(&created, 0),
        ))
        .await
        .expect_err("a bot's request id from a client");
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
}
