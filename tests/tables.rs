//! Tables people expect (issue #30), end to end through real gRPC clients on two replicas sharing
//! one store (memory, a `redis-server` of its own, a Redis Cluster of its own): open seats and
//! invitations (one winner of 50 racing joins, expired, reused, forged and other tenants' codes,
//! the creator filling the rest with bots, a spectator never seeing a code); the spectator delay
//! on every path, against a resampling of the moves it hides; rematches, asked for at once on two
//! replicas, each old token redeeming its new seat once; undo by Board Game Arena's policy (own
//! quiet moves at once, a draw only with consent, the state exactly as it was).

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use futures::StreamExt;
use tabula::games::common::GameRng;
use tabula::proto::v1 as pb;
use tabula::service::{OperatorOptions, ServiceOptions};
use tonic::Code;

on_every_store!(
    one_of_fifty_racing_joins_takes_the_seat_and_the_game_starts_with_it,
    codes_expire_join_once_and_the_creator_fills_the_rest_with_bots,
    a_tenants_codes_join_only_with_its_key,
    a_delayed_spectator_receives_the_same_whatever_the_last_moves_were,
    a_time_delay_shows_entries_once_old_enough,
    a_rematch_starts_when_every_seat_asked_and_each_token_redeems_one_seat,
    a_rematch_at_once_starts_with_the_first_ask,
    undo_takes_back_own_quiet_moves_and_a_draw_only_with_consent,
);

/// A game config with `open_seats` left open and a per-decision clock of `clock_ms` (none for 0).
fn open_config(game: pb::game_config::Game, open_seats: Vec<u32>, clock_ms: u64) -> pb::GameConfig {
    pb::GameConfig {
        game: Some(game),
        table: Some(pb::TableConfig {
            open_seats,
            clock: (clock_ms > 0).then_some(pb::TurnClock {
                kind: Some(pb::turn_clock::Kind::PerDecision(
                    pb::turn_clock::PerDecision { limit_ms: clock_ms },
                )),
            }),
            ..Default::default()
        }),
    }
}

fn join_request(code: &str, name: &str, request_id: &str) -> pb::JoinGameRequest {
    pb::JoinGameRequest {
        code: code.to_owned(),
        player: Some(pb::Player {
            seat: 0,
            display_name: name.to_owned(),
            external_id: String::new(),
        }),
        request_id: request_id.to_owned(),
    }
}

/// The code of the invitation to `seat` (`None`: to any open seat; the first such).
fn code(created: &pb::CreateGameResponse, seat: Option<u32>) -> String {
    created
        .invitations
        .iter()
        .find(|invitation| invitation.seat == seat)
        .expect("an invitation")
        .code
        .clone()
}

/// `created` with the token of a seat taken by a join, for the helpers that read tokens from a
/// CreateGame answer.
fn with_seat(created: &pb::CreateGameResponse, seat: u32, token: &str) -> pb::CreateGameResponse {
    let mut seated = created.clone();
    seated.seats.push(pb::SeatToken {
        seat,
        token: token.to_owned(),
    });
    seated
}

/// Fails if anything in `message` (its debug form) holds one of the game's invitation codes or
/// its host token.
fn holds_no_secret(created: &pb::CreateGameResponse, what: &str, message: &impl std::fmt::Debug) {
    let text = format!("{message:?}");
    for invitation in &created.invitations {
        assert!(
            !text.contains(&invitation.code[4..]),
            "{what} shows an invitation code"
        );
    }
    assert!(
        !text.contains(&created.host_token),
        "{what} shows the host token"
    );
}

async fn one_of_fifty_racing_joins_takes_the_seat_and_the_game_starts_with_it(backend: &Backend) {
    let replicas = [Replica::start(backend).await, Replica::start(backend).await];
    let mut clients = [replicas[0].client().await, replicas[1].client().await];
    let created = clients[0]
        .create_game(pb::CreateGameRequest {
            config: Some(open_config(
                pb::game_config::Game::MediciVsStrozzi(Default::default()),
                vec![1],
                60_000,
            )),
            seed: Some(tabula::games::Seed::from_u64(30).0.to_vec()),
            players: vec![pb::Player {
                seat: 0,
                display_name: "Ada".into(),
                external_id: String::new(),
            }],
            any_seat_invitations: 1,
            ..Default::default()
        })
        .await
        .expect("CreateGame")
        .into_inner();
    let game_id = created.game_id.clone();
    // Seat 0 has its token; seat 1 is open: an invitation to it, one to any seat, a host token.
    assert_eq!(
        created.seats.iter().map(|s| s.seat).collect::<Vec<_>>(),
        [0]
    );
    assert_eq!(created.invitations.len(), 2);
    assert_eq!(created.invitations[0].seat, Some(1));
    assert_eq!(created.invitations[1].seat, None);
    assert!(created.host_token.starts_with("tbl_"));
    let status = created.status.clone().expect("status");
    assert_eq!(status.open_seats, [1]);
    assert_eq!(status.to_act, None);
    assert!(!status.finished);

    // Nobody acts, and no clock runs, before the game starts.
    let waiting = seat_view(&mut clients[1], &game_id, &token(&created, 0)).await;
    assert!(waiting.legal_actions.is_empty());
    assert_eq!(
        waiting.clock.as_ref().and_then(|clock| clock.deadline_ms),
        None
    );
    let resign = clients[1]
        .act(authorized(
            pb::ActRequest {
                game_id: game_id.clone(),
                action: Some(resign_action()),
                ..Default::default()
            },
            &token(&created, 0),
        ))
        .await
        .expect_err("a resignation before the start");
    assert_eq!(resign.code(), Code::FailedPrecondition);
    assert!(
        resign.message().contains("has not started") && resign.message().contains("seat 1"),
        "{}",
        resign.message()
    );
    let mut watching = observe(&mut clients[1], &game_id, None).await;

    // Fifty callers race for seat 1 with its code, half through each replica: one wins.
    let seat_code = code(&created, Some(1));
    let racers: Vec<_> = (0..50)
        .map(|n| {
            let mut client = clients[n % 2].clone();
            let request = join_request(&seat_code, &format!("Racer {n}"), &format!("racer-{n}"));
            tokio::spawn(async move { (n, client.join_game(request).await) })
        })
        .collect();
    let mut winners = Vec::new();
    for racer in racers {
        let (n, answer) = racer.await.expect("a racer");
        match answer {
            Ok(joined) => winners.push((n, joined.into_inner())),
            Err(status) => {
                assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
                assert!(status.message().contains("has been used"), "{status:?}");
            }
        }
    }
    assert_eq!(winners.len(), 1, "exactly one racer takes the seat");
    let (winner, joined) = winners.pop().expect("a winner");
    assert_eq!(joined.game_id, game_id);
    assert_eq!(joined.seat, 1);
    assert_eq!(joined.version, 1);
    let started = joined.status.clone().expect("status");
    assert!(started.open_seats.is_empty());
    assert_eq!(started.to_act, Some(0));

    // The winner's retry gets the same seat and token; another racer's retry does not.
    let retried = clients[(winner + 1) % 2]
        .join_game(join_request(
            &seat_code,
            &format!("Racer {winner}"),
            &format!("racer-{winner}"),
        ))
        .await
        .expect("a retried join")
        .into_inner();
    assert_eq!(
        (retried.seat, &retried.token, retried.version),
        (1, &joined.token, 1)
    );
    let loser = clients[0]
        .join_game(join_request(
            &seat_code,
            "Late",
            &format!("racer-{}", (winner + 1) % 50),
        ))
        .await
        .expect_err("a loser's retry");
    assert_eq!(loser.code(), Code::FailedPrecondition);
    // The invitation to any seat finds the table full.
    let full = clients[1]
        .join_game(join_request(&code(&created, None), "Too late", ""))
        .await
        .expect_err("a join of a full table");
    assert_eq!(full.code(), Code::FailedPrecondition);
    assert!(
        full.message().contains("table is full"),
        "{}",
        full.message()
    );

    // The joined token works on either replica at once (the other one's copy may be older than
    // the join); the players include the joiner; the clock started with the join.
    for client in clients.iter_mut() {
        let mine = seat_view(client, &game_id, &joined.token).await;
        assert_eq!(mine.seat, Some(1));
        let names: Vec<(u32, String)> = mine
            .players
            .iter()
            .map(|player| (player.seat, player.display_name.clone()))
            .collect();
        assert_eq!(
            names,
            [(0, "Ada".to_owned()), (1, format!("Racer {winner}"))]
        );
        let clock = mine.clock.expect("a clock");
        assert_eq!(clock.seat, Some(0));
    }

    // The spectator's stream told of the join and the start, and never of a code.
    let first = watching.next().await.expect("a message").expect("first");
    holds_no_secret(&created, "Observe", &first);
    let join_message = watching.next().await.expect("a message").expect("the join");
    assert_eq!(join_message.version, 1);
    let kinds: Vec<_> = join_message
        .events
        .iter()
        .filter_map(|event| match &event.game {
            Some(pb::event::Game::Table(table)) => table.kind.clone(),
            _ => None,
        })
        .collect();
    assert!(matches!(
        &kinds[..],
        [
            pb::table_event::Kind::SeatJoined(pb::table_event::SeatJoined {
                player: Some(pb::Player { seat: 1, .. })
            }),
            pb::table_event::Kind::GameStarted(_)
        ]
    ));
    holds_no_secret(&created, "Observe", &join_message);
    holds_no_secret(
        &created,
        "GetView",
        &spectator_view(&mut clients[0], &game_id).await,
    );

    // Played to its end, the log (joins included) exports and verifies, still without a code.
    let seated = with_seat(&created, 1, &joined.token);
    let mut rng = GameRng::from_seed(&tabula::games::Seed::from_u64(31));
    play_random(&mut clients, &seated, &mut rng, 2_000).await;
    let log = export(&mut clients[1], &game_id).await;
    holds_no_secret(&created, "ExportLog", &log);
    let report = clients[0]
        .verify_log(pb::VerifyLogRequest { log: Some(log) })
        .await
        .expect("VerifyLog")
        .into_inner();
    assert!(report.valid, "{}", report.error);
}

async fn codes_expire_join_once_and_the_creator_fills_the_rest_with_bots(backend: &Backend) {
    let replicas = [Replica::start(backend).await, Replica::start(backend).await];
    let mut clients = [replicas[0].client().await, replicas[1].client().await];
    let strozzi = tabula::hosting::registry()
        .iter()
        .find(|game| game.kind == pb::GameKind::Strozzi)
        .expect("Strozzi")
        .config_case(3);
    // Seat 0 is named; seats 1 and 2 are open; the invitations last one second.
    let created = clients[0]
        .create_game(pb::CreateGameRequest {
            config: Some(open_config(strozzi, vec![2, 1], 0)),
            any_seat_invitations: 2,
            invitation_ttl_seconds: 1,
            ..Default::default()
        })
        .await
        .expect("CreateGame")
        .into_inner();
    let game_id = created.game_id.clone();
    assert_eq!(
        created
            .invitations
            .iter()
            .map(|invitation| invitation.seat)
            .collect::<Vec<_>>(),
        [Some(1), Some(2), None, None]
    );

    // What is no code, a code no game issued and a forged one.
    let malformed = clients[0]
        .join_game(join_request("inv_nope", "Eve", ""))
        .await
        .expect_err("no code");
    assert_eq!(malformed.code(), Code::InvalidArgument);
    let seat_one = code(&created, Some(1));
    let elsewhere = format!("inv_{}{}", "0".repeat(32), &seat_one[36..]);
    let unknown = clients[0]
        .join_game(join_request(&elsewhere, "Eve", ""))
        .await
        .expect_err("a code of no game");
    assert_eq!(unknown.code(), Code::NotFound);
    let mut forged = seat_one.clone();
    let last = forged.pop().expect("a code");
    forged.push(if last == '0' { '1' } else { '0' });
    let forged = clients[1]
        .join_game(join_request(&forged, "Eve", ""))
        .await
        .expect_err("a forged code");
    assert_eq!(forged.code(), Code::NotFound);
    assert!(
        !forged.message().contains(&game_id),
        "a guess learns nothing of the game"
    );
    // Limits the creator must keep.
    let too_long = clients[0]
        .create_game(pb::CreateGameRequest {
            config: Some(open_config(strozzi, vec![1], 0)),
            invitation_ttl_seconds: 31 * 24 * 3600,
            ..Default::default()
        })
        .await
        .expect_err("invitations valid for 31 days");
    assert_eq!(too_long.code(), Code::InvalidArgument);
    let no_open_seats = clients[0]
        .create_game(pb::CreateGameRequest {
            config: Some(open_config(strozzi, Vec::new(), 0)),
            any_seat_invitations: 1,
            ..Default::default()
        })
        .await
        .expect_err("invitations without open seats");
    assert_eq!(no_open_seats.code(), Code::InvalidArgument);

    // An invitation to any seat takes the lowest open one, and joins once.
    let first = clients[1]
        .join_game(join_request(&code(&created, None), "Bea", ""))
        .await
        .expect("a join")
        .into_inner();
    assert_eq!(first.seat, 1);
    let used = clients[0]
        .join_game(join_request(&code(&created, None), "Bea again", ""))
        .await
        .expect_err("a used code");
    assert_eq!(used.code(), Code::FailedPrecondition);
    // Seat 1's own code finds its seat taken.
    let taken = clients[0]
        .join_game(join_request(&seat_one, "Cy", ""))
        .await
        .expect_err("a taken seat");
    assert_eq!(taken.code(), Code::FailedPrecondition);
    assert!(taken.message().contains("not open"), "{}", taken.message());

    // A second later every code has expired.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let expired = clients[1]
        .join_game(join_request(&code(&created, Some(2)), "Dee", ""))
        .await
        .expect_err("an expired code");
    assert_eq!(expired.code(), Code::FailedPrecondition);
    assert!(
        expired.message().contains("expired"),
        "{}",
        expired.message()
    );

    // Only the creator's host token fills the rest.
    let fill = |game_id: &str| pb::FillOpenSeatsRequest {
        game_id: game_id.to_owned(),
        kind: pb::BotKind::Random as i32,
        iterations: 0,
        request_id: "fill".into(),
    };
    let anonymous = clients[0]
        .fill_open_seats(fill(&game_id))
        .await
        .expect_err("no token");
    assert_eq!(anonymous.code(), Code::Unauthenticated);
    let seat_token = clients[0]
        .fill_open_seats(authorized(fill(&game_id), &first.token))
        .await
        .expect_err("a seat's token");
    assert_eq!(seat_token.code(), Code::PermissionDenied);
    let filled = clients[1]
        .fill_open_seats(authorized(fill(&game_id), &created.host_token))
        .await
        .expect("FillOpenSeats")
        .into_inner();
    let status = filled.status.expect("status");
    assert!(status.open_seats.is_empty());
    assert_eq!(
        status.bots.iter().map(|bot| bot.seat).collect::<Vec<_>>(),
        [2]
    );
    assert_eq!(status.to_act, Some(0));
    // A retry answers the same entry; a second fill finds nothing to fill.
    let again = clients[0]
        .fill_open_seats(authorized(fill(&game_id), &created.host_token))
        .await
        .expect("a retried fill")
        .into_inner();
    assert_eq!(again.version, filled.version);

    // Seats 0 and 1 play against the bot to the end.
    let tokens = [token(&created, 0), first.token.clone()];
    let mut rng = GameRng::from_seed(&tabula::games::Seed::from_u64(32));
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut step = 0usize;
    loop {
        assert!(Instant::now() < deadline, "the game did not end in time");
        let client = &mut clients[step % 2];
        let view = spectator_view(client, &game_id).await;
        let status = view.status.expect("status");
        if status.finished {
            break;
        }
        let Some(seat @ (0 | 1)) = status.to_act else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let mine = seat_view(client, &game_id, &tokens[seat as usize]).await;
        if mine.legal_actions.is_empty() {
            continue;
        }
        let action = choose(&mine.legal_actions, &mut rng);
        let acted = move_at(
            client,
            &game_id,
            &tokens[seat as usize],
            action,
            mine.version,
            format!("step-{step}"),
        )
        .await;
        if let Err(status) = acted {
            // The bot may have moved in between (a hand-off of the turn): try again.
            assert_eq!(status.code(), Code::Aborted, "{status:?}");
        }
        step += 1;
    }
}

async fn a_tenants_codes_join_only_with_its_key(backend: &Backend) {
    let options = ServiceOptions {
        operator: Some(OperatorOptions {
            token: OPERATOR.parse().expect("an operator token"),
            required_for_create: false,
        }),
        ..test_options()
    };
    let replica = Replica::start_with(backend, options).await;
    let mut client = replica.client().await;
    let mut admin = admin(&replica).await;
    let alpha = tenant_with_key(&mut admin, "alpha", "Alpha").await;
    let beta = tenant_with_key(&mut admin, "beta", "Beta").await;
    let created = client
        .create_game(authorized(
            pb::CreateGameRequest {
                config: Some(open_config(
                    pb::game_config::Game::MediciVsStrozzi(Default::default()),
                    vec![0, 1],
                    0,
                )),
                ..Default::default()
            },
            &alpha,
        ))
        .await
        .expect("CreateGame")
        .into_inner();
    assert!(created.seats.is_empty(), "every seat is open");
    let seat_zero = code(&created, Some(0));
    for (who, request) in [
        (
            "nobody",
            tonic::Request::new(join_request(&seat_zero, "Ann", "")),
        ),
        (
            "another tenant",
            authorized(join_request(&seat_zero, "Ann", ""), &beta),
        ),
    ] {
        let refused = client
            .join_game(request)
            .await
            .expect_err("a tenant's game joined without its key");
        assert_eq!(refused.code(), Code::NotFound, "{who}: {refused:?}");
        assert!(!refused.message().contains(&created.game_id), "{who}");
    }
    let joined = client
        .join_game(authorized(
            pb::JoinGameRequest {
                code: seat_zero.clone(),
                // Nameless: a joiner need not say who they are.
                player: None,
                request_id: String::new(),
            },
            &alpha,
        ))
        .await
        .expect("the tenant's own key joins")
        .into_inner();
    assert_eq!(joined.seat, 0);
    // The joined token acts for its seat, not the tenant's key.
    let view = seat_view(&mut client, &created.game_id, &joined.token).await;
    assert_eq!(view.seat, Some(0));
    assert_eq!(
        view.status.expect("status").open_seats,
        [1],
        "the game waits for seat 1"
    );

    // Filling the open seat with a bot counts in the tenant's bot seats: with its one place
    // taken by another game's bot, the fill is refused, and the game still waits.
    admin
        .set_tenant_limits(authorized(
            pb::SetTenantLimitsRequest {
                tenant_id: "alpha".into(),
                limits: Some(pb::TenantLimits {
                    bot_seats: 1,
                    ..Default::default()
                }),
            },
            OPERATOR,
        ))
        .await
        .expect("SetTenantLimits");
    tokio::time::sleep(Duration::from_secs(3)).await;
    client
        .create_game(authorized(
            pb::CreateGameRequest {
                config: Some(pb::GameConfig {
                    game: Some(pb::game_config::Game::MediciVsStrozzi(Default::default())),
                    table: Some(pb::TableConfig {
                        bots: vec![pb::BotSeat {
                            seat: 1,
                            kind: pb::BotKind::Random as i32,
                            iterations: 0,
                        }],
                        ..Default::default()
                    }),
                }),
                ..Default::default()
            },
            &alpha,
        ))
        .await
        .expect("a game with the tenant's one bot seat");
    let refused = client
        .fill_open_seats(authorized(
            pb::FillOpenSeatsRequest {
                game_id: created.game_id.clone(),
                kind: pb::BotKind::Random as i32,
                iterations: 0,
                request_id: String::new(),
            },
            &created.host_token,
        ))
        .await
        .expect_err("a bot seat over the quota");
    assert_eq!(refused.code(), Code::ResourceExhausted, "{refused:?}");
    assert_eq!(
        spectator_view(&mut client, &created.game_id)
            .await
            .status
            .expect("status")
            .open_seats,
        [1]
    );
}

/// How far behind the delayed spectators of these tests see.
const DELAY: u32 = 3;
/// The moves both games share before the hidden ones.
const SHARED: u64 = 6;

/// Everything a delayed spectator receives from game `game_id`, with what names the game itself
/// (its id, its signed commitment and chain heads, which bind the id) and the server's times
/// cleared: what would tell two games apart even if they were played alike.
async fn what_a_delayed_spectator_receives(
    client: &mut Client,
    game_id: &str,
    stream: &mut tonic::Streaming<pb::ObserveResponse>,
) -> Vec<String> {
    let mut received = Vec::new();
    let anonymous = |text: String| text.replace(game_id, "GAME");
    // The stream: every message up to the visible version, and nothing after it.
    loop {
        let next = tokio::time::timeout(Duration::from_millis(300), stream.next()).await;
        let Ok(Some(message)) = next else { break };
        let mut message = message.expect("a stream message");
        message.signed_commitment = None;
        message.head.clear();
        if let Some(action) = &mut message.action {
            action.server_time_ms = 0;
        }
        assert_eq!(message.clock, None, "a delayed spectator gets no clock");
        received.push(anonymous(format!("{message:?}")));
    }
    // GetView now, at the visible version, and past it.
    let mut view = spectator_view(client, game_id).await;
    assert_eq!(
        view.version, SHARED,
        "the spectator sees {DELAY} moves behind"
    );
    view.signed_commitment = None;
    received.push(anonymous(format!("{view:?}")));
    for (what, request) in [
        (
            "version",
            pb::GetViewRequest {
                narrate: false,
                game_id: game_id.to_owned(),
                version: Some(SHARED + 1),
                min_version: None,
                omit_view: false,
            },
        ),
        (
            "min_version",
            pb::GetViewRequest {
                narrate: false,
                game_id: game_id.to_owned(),
                version: None,
                min_version: Some(SHARED + 1),
                omit_view: false,
            },
        ),
    ] {
        let refused = client
            .get_view(request)
            .await
            .expect_err("a version the spectator may not see");
        assert_eq!(refused.code(), Code::OutOfRange, "{what}");
        received.push(anonymous(refused.message().to_owned()));
    }
    let from_the_future = client
        .observe(pb::ObserveRequest {
            narrate: false,
            game_id: game_id.to_owned(),
            from_version: Some(SHARED + 2),
        })
        .await
        .expect_err("a stream from a hidden version");
    received.push(anonymous(from_the_future.message().to_owned()));
    // The exported log.
    let mut log = export(client, game_id).await;
    assert_eq!(log.entries.len() as u64, SHARED);
    assert!(!log.complete);
    log.signed_commitment = None;
    for entry in &mut log.entries {
        entry.head.clear();
        entry.server_time_ms = 0;
    }
    received.push(anonymous(format!("{log:?}")));
    received
}

async fn a_delayed_spectator_receives_the_same_whatever_the_last_moves_were(backend: &Backend) {
    let replicas = [Replica::start(backend).await, Replica::start(backend).await];
    let mut clients = [replicas[0].client().await, replicas[1].client().await];
    let config = pb::GameConfig {
        game: Some(pb::game_config::Game::MediciVsStrozzi(Default::default())),
        table: Some(pb::TableConfig {
            spectator_delay: Some(pb::SpectatorDelay {
                moves: DELAY,
                ms: 0,
            }),
            ..Default::default()
        }),
    };
    // Two games alike (one seed), each watched by a delayed spectator from its start.
    let games = [
        create(&mut clients[0], config.clone(), 33).await,
        create(&mut clients[1], config.clone(), 33).await,
    ];
    let mut streams = Vec::new();
    for (n, game) in games.iter().enumerate() {
        streams.push(observe(&mut clients[(n + 1) % 2], &game.game_id, None).await);
    }
    // The same first moves in both; then each game its own last moves: the first legal action
    // in one, the last in the other.
    let mut differed = false;
    for step in 0..SHARED + u64::from(DELAY) {
        let mut chosen = Vec::new();
        for (n, game) in games.iter().enumerate() {
            let client = &mut clients[n];
            // Seats see the game live (a spectator is behind): seat 0's view says who acts.
            let live = seat_view(client, &game.game_id, &token(game, 0)).await;
            let seat = live.status.expect("status").to_act.expect("running");
            let mine = seat_view(client, &game.game_id, &token(game, seat)).await;
            let index = if step < SHARED || n == 0 {
                0
            } else {
                mine.legal_actions.len() - 1
            };
            let action = mine.legal_actions[index].action.clone().expect("an action");
            chosen.push(action.clone());
            move_at(
                client,
                &game.game_id,
                &token(game, seat),
                action,
                mine.version,
                format!("step-{step}"),
            )
            .await
            .expect("Act");
        }
        differed |= chosen[0] != chosen[1];
    }
    assert!(differed, "the hidden moves differ between the games");
    // Seats see their game live.
    let seat_sees = seat_view(&mut clients[0], &games[0].game_id, &token(&games[0], 0)).await;
    assert_eq!(seat_sees.version, SHARED + u64::from(DELAY));

    let mut received = Vec::new();
    for (n, (game, stream)) in games.iter().zip(streams.iter_mut()).enumerate() {
        received
            .push(what_a_delayed_spectator_receives(&mut clients[n], &game.game_id, stream).await);
    }
    assert_eq!(received[0].len(), received[1].len());
    for (one, other) in received[0].iter().zip(&received[1]) {
        assert_eq!(one, other, "a delayed spectator tells the games apart");
    }
    assert!(
        received[0][0].contains("version: 0"),
        "the stream starts at the start"
    );

    // Once the game ends, everything is public at once: the stream sends the rest and ends.
    let mut rng = GameRng::from_seed(&tabula::games::Seed::from_u64(34));
    let last = play_to_the_end_as_seats(&mut clients, &games[0], &mut rng).await;
    let mut rest = Vec::new();
    while let Ok(Some(message)) =
        tokio::time::timeout(Duration::from_secs(10), streams[0].next()).await
    {
        rest.push(message.expect("a stream message").version);
    }
    assert_eq!(rest.first(), Some(&(SHARED + 1)));
    assert_eq!(rest.last(), Some(&last), "the stream reached the end");
    assert_eq!(
        spectator_view(&mut clients[1], &games[0].game_id)
            .await
            .version,
        last
    );
    assert!(export(&mut clients[1], &games[0].game_id).await.complete);
}

/// Plays `game` to its end with random legal moves, learning who acts from seat 0's live view (a
/// spectator's is delayed). Returns the final version.
async fn play_to_the_end_as_seats(
    clients: &mut [Client],
    game: &pb::CreateGameResponse,
    rng: &mut GameRng,
) -> u64 {
    for step in 0..2_000 {
        let client = &mut clients[step % 2];
        let live = seat_view(client, &game.game_id, &token(game, 0)).await;
        let status = live.status.expect("status");
        let Some(seat) = status.to_act else {
            assert!(status.finished);
            return live.version;
        };
        let mine = seat_view(client, &game.game_id, &token(game, seat)).await;
        let action = choose(&mine.legal_actions, rng);
        move_at(
            client,
            &game.game_id,
            &token(game, seat),
            action,
            mine.version,
            format!("end-{step}"),
        )
        .await
        .expect("Act");
    }
    panic!("game {} did not end in 2000 moves", game.game_id);
}

async fn a_time_delay_shows_entries_once_old_enough(backend: &Backend) {
    let replica = Replica::start(backend).await;
    let mut client = replica.client().await;
    let config = pb::GameConfig {
        game: Some(pb::game_config::Game::MediciVsStrozzi(Default::default())),
        table: Some(pb::TableConfig {
            spectator_delay: Some(pb::SpectatorDelay { moves: 0, ms: 700 }),
            ..Default::default()
        }),
    };
    let game = create(&mut client, config, 35).await;
    let mut stream = observe(&mut client, &game.game_id, None).await;
    assert_eq!(
        stream.next().await.expect("first").expect("first").version,
        0
    );
    let mut rng = GameRng::from_seed(&tabula::games::Seed::from_u64(36));
    for step in 0..2 {
        let live = seat_view(&mut client, &game.game_id, &token(&game, 0)).await;
        let seat = live.status.expect("status").to_act.expect("running");
        let mine = seat_view(&mut client, &game.game_id, &token(&game, seat)).await;
        move_at(
            &mut client,
            &game.game_id,
            &token(&game, seat),
            choose(&mine.legal_actions, &mut rng),
            mine.version,
            format!("step-{step}"),
        )
        .await
        .expect("Act");
    }
    let moved = Instant::now();
    // Younger than the delay: hidden on every path.
    assert_eq!(spectator_view(&mut client, &game.game_id).await.version, 0);
    assert!(export(&mut client, &game.game_id).await.entries.is_empty());
    // The stream sends them once they are old enough, not before.
    let first = stream.next().await.expect("a message").expect("a message");
    assert_eq!(first.version, 1);
    assert!(
        moved.elapsed() >= Duration::from_millis(500),
        "sent too early"
    );
    let second = stream.next().await.expect("a message").expect("a message");
    assert_eq!(second.version, 2);
    assert_eq!(spectator_view(&mut client, &game.game_id).await.version, 2);
    assert_eq!(export(&mut client, &game.game_id).await.entries.len(), 2);
    // Beyond the limits, CreateGame refuses.
    let refused = client
        .create_game(pb::CreateGameRequest {
            config: Some(pb::GameConfig {
                game: Some(pb::game_config::Game::MediciVsStrozzi(Default::default())),
                table: Some(pb::TableConfig {
                    spectator_delay: Some(pb::SpectatorDelay {
                        moves: 1_001,
                        ms: 0,
                    }),
                    ..Default::default()
                }),
            }),
            ..Default::default()
        })
        .await
        .expect_err("a delay of 1001 moves");
    assert_eq!(refused.code(), Code::InvalidArgument);
}

fn rematch_request(game_id: &str) -> pb::RematchRequest {
    pb::RematchRequest {
        game_id: game_id.to_owned(),
    }
}

/// A two-seat Medici vs Strozzi game of Ada (seat 0) and Ben (seat 1), played to its end.
async fn a_finished_game(
    clients: &mut [Client],
    at_once: bool,
    seed: u64,
) -> pb::CreateGameResponse {
    let created = clients[0]
        .create_game(pb::CreateGameRequest {
            config: Some(pb::GameConfig {
                game: Some(pb::game_config::Game::MediciVsStrozzi(Default::default())),
                table: Some(pb::TableConfig {
                    rematch_at_once: at_once,
                    ..Default::default()
                }),
            }),
            seed: Some(tabula::games::Seed::from_u64(seed).0.to_vec()),
            players: vec![
                pb::Player {
                    seat: 0,
                    display_name: "Ada".into(),
                    external_id: "ada-1".into(),
                },
                pb::Player {
                    seat: 1,
                    display_name: "Ben".into(),
                    external_id: "ben-2".into(),
                },
            ],
            ..Default::default()
        })
        .await
        .expect("CreateGame")
        .into_inner();
    let early = clients[1]
        .rematch(authorized(
            rematch_request(&created.game_id),
            &token(&created, 0),
        ))
        .await
        .expect_err("a rematch of a running game");
    assert_eq!(early.code(), Code::FailedPrecondition);
    let mut rng = GameRng::from_seed(&tabula::games::Seed::from_u64(seed + 1));
    play_random(clients, &created, &mut rng, 2_000).await;
    created
}

async fn a_rematch_starts_when_every_seat_asked_and_each_token_redeems_one_seat(backend: &Backend) {
    let replicas = [Replica::start(backend).await, Replica::start(backend).await];
    let mut clients = [replicas[0].client().await, replicas[1].client().await];
    let first = a_finished_game(&mut clients, false, 40).await;
    let spectator = clients[0]
        .rematch(rematch_request(&first.game_id))
        .await
        .expect_err("a spectator asks");
    assert_eq!(spectator.code(), Code::Unauthenticated);

    // Seat 0 asks ten times at once, on both replicas: one rematch, one seat, one token.
    let asks: Vec<_> = (0..10)
        .map(|n| {
            let mut client = clients[n % 2].clone();
            let request = authorized(rematch_request(&first.game_id), &token(&first, 0));
            tokio::spawn(async move { client.rematch(request).await })
        })
        .collect();
    let mut answers = Vec::new();
    for ask in asks {
        answers.push(ask.await.expect("an ask").expect("Rematch").into_inner());
    }
    let asked = answers[0].clone();
    assert_ne!(asked.game_id, first.game_id);
    assert_eq!(asked.seat, 1, "seat 0's player moves to seat 1");
    for answer in &answers {
        assert_eq!(
            (&answer.game_id, answer.seat, &answer.token),
            (&asked.game_id, 1, &asked.token)
        );
    }
    let waiting = spectator_view(&mut clients[1], &asked.game_id).await;
    assert_eq!(waiting.version, 1, "one ask, one entry");
    assert_eq!(waiting.status.clone().expect("status").open_seats, [0]);
    assert_eq!(
        waiting.links.clone().expect("links").rematch_of,
        first.game_id
    );
    assert_eq!(
        spectator_view(&mut clients[0], &first.game_id)
            .await
            .links
            .expect("links")
            .rematch,
        asked.game_id
    );
    // The old token is no seat of the rematch.
    let old_token = clients[0]
        .get_view(authorized(
            pb::GetViewRequest {
                narrate: false,
                game_id: asked.game_id.clone(),
                version: None,
                min_version: None,
                omit_view: false,
            },
            &token(&first, 0),
        ))
        .await
        .expect_err("an old token in the rematch");
    assert_eq!(old_token.code(), Code::PermissionDenied);

    // Seat 1 asks: the rematch starts, each player in their new seat.
    let second = clients[1]
        .rematch(authorized(
            rematch_request(&first.game_id),
            &token(&first, 1),
        ))
        .await
        .expect("Rematch")
        .into_inner();
    assert_eq!(
        (second.game_id.as_str(), second.seat),
        (asked.game_id.as_str(), 0)
    );
    let status = second.status.clone().expect("status");
    assert!(status.open_seats.is_empty());
    assert!(status.to_act.is_some());
    let view = seat_view(&mut clients[0], &asked.game_id, &second.token).await;
    assert_eq!(view.seat, Some(0));
    let names: Vec<(u32, String)> = view
        .players
        .iter()
        .map(|player| (player.seat, player.external_id.clone()))
        .collect();
    assert_eq!(names, [(0, "ben-2".to_owned()), (1, "ada-1".to_owned())]);
    assert_eq!(view.version, 2, "two asks, two entries");
    // A new seed: a new commitment.
    let log = export(&mut clients[0], &asked.game_id).await;
    assert_ne!(log.seed_commitment, first.seed_commitment);
    assert_ne!(log.signed_commitment, first.signed_commitment);

    // The new tokens play it to the end.
    let mut rematch = first.clone();
    rematch.game_id = asked.game_id.clone();
    rematch.seats = vec![
        pb::SeatToken {
            seat: 0,
            token: second.token.clone(),
        },
        pb::SeatToken {
            seat: 1,
            token: asked.token.clone(),
        },
    ];
    let mut rng = GameRng::from_seed(&tabula::games::Seed::from_u64(42));
    play_random(&mut clients, &rematch, &mut rng, 2_000).await;
}

async fn a_rematch_at_once_starts_with_the_first_ask(backend: &Backend) {
    let replicas = [Replica::start(backend).await, Replica::start(backend).await];
    let mut clients = [replicas[0].client().await, replicas[1].client().await];
    let first = a_finished_game(&mut clients, true, 43).await;
    let asked = clients[1]
        .rematch(authorized(
            rematch_request(&first.game_id),
            &token(&first, 1),
        ))
        .await
        .expect("Rematch")
        .into_inner();
    assert_eq!(asked.seat, 0);
    assert_eq!(asked.version, 0, "nothing to log: it started at once");
    let status = asked.status.expect("status");
    assert!(status.open_seats.is_empty());
    assert!(status.to_act.is_some());
    // Seat 0's player had not asked; its old token redeems its new seat later, the same each time.
    let late = clients[0]
        .rematch(authorized(
            rematch_request(&first.game_id),
            &token(&first, 0),
        ))
        .await
        .expect("Rematch")
        .into_inner();
    let again = clients[1]
        .rematch(authorized(
            rematch_request(&first.game_id),
            &token(&first, 0),
        ))
        .await
        .expect("Rematch")
        .into_inner();
    assert_eq!((late.seat, &late.token), (1, &again.token));
    let view = seat_view(&mut clients[0], &asked.game_id, &late.token).await;
    assert_eq!(view.seat, Some(1));
    assert_eq!(view.players.len(), 2, "the players followed their seats");
}

/// The kind of a Medici vs Strozzi action, by name (`DrawTile`, `BuyLot`, …).
fn medici_kind(action: &pb::Action) -> String {
    use tabula::proto::medici_vs_strozzi::v1::action::Kind;
    let Some(pb::action::Game::MediciVsStrozzi(action)) = &action.game else {
        return String::new();
    };
    match &action.kind {
        Some(Kind::DrawTile(_)) => "DrawTile",
        Some(Kind::OfferLot(_)) => "OfferLot",
        Some(Kind::BuyLot(_)) => "BuyLot",
        Some(Kind::DeclineLot(_)) => "DeclineLot",
        Some(Kind::LoadLot(_)) => "LoadLot",
        Some(Kind::DiscardLot(_)) => "DiscardLot",
        None => "",
    }
    .to_owned()
}

fn table_action(kind: pb::table_action::Kind) -> pb::Action {
    pb::Action {
        game: Some(pb::action::Game::Table(pb::TableAction {
            kind: Some(kind),
        })),
    }
}

fn undo(to_version: Option<u64>) -> pb::Action {
    table_action(pb::table_action::Kind::Undo(pb::table_action::Undo {
        to_version,
    }))
}

/// The table events of an Act answer, by name.
fn table_events(response: &pb::ActResponse) -> Vec<String> {
    response
        .events
        .iter()
        .filter_map(|event| match &event.game {
            Some(pb::event::Game::Table(table)) => match &table.kind {
                Some(pb::table_event::Kind::UndoRequested(_)) => Some("UndoRequested"),
                Some(pb::table_event::Kind::UndoAnswered(answer)) => Some(if answer.accepted {
                    "UndoAccepted"
                } else {
                    "UndoDeclined"
                }),
                Some(pb::table_event::Kind::MovesTakenBack(_)) => Some("MovesTakenBack"),
                _ => None,
            },
            _ => None,
        })
        .map(str::to_owned)
        .collect()
}

/// `token`'s Act of `action` in `game_id` at the version it saw, with a request id: how a real
/// client moves. The answer or the refusal.
async fn move_at(
    client: &mut Client,
    game_id: &str,
    token: &str,
    action: pb::Action,
    seen_version: u64,
    request_id: String,
) -> Result<pb::ActResponse, tonic::Status> {
    client
        .act(authorized(
            pb::ActRequest {
                narrate: false,
                game_id: game_id.to_owned(),
                action: Some(action),
                expected_version: Some(seen_version),
                request_id,
                omit_view: false,
            },
            token,
        ))
        .await
        .map(tonic::Response::into_inner)
}

/// `token`'s Act of `action` in `game_id`: the answer or the refusal.
async fn act_as(
    client: &mut Client,
    game_id: &str,
    token: &str,
    action: pb::Action,
) -> Result<pb::ActResponse, tonic::Status> {
    client
        .act(authorized(
            pb::ActRequest {
                game_id: game_id.to_owned(),
                action: Some(action),
                ..Default::default()
            },
            token,
        ))
        .await
        .map(tonic::Response::into_inner)
}

/// The seat to act, and its legal action of kind `kind`.
async fn legal_of_kind(
    client: &mut Client,
    game: &pb::CreateGameResponse,
    kind: &str,
) -> (u32, pb::Action) {
    let live = seat_view(client, &game.game_id, &token(game, 0)).await;
    let seat = live.status.expect("status").to_act.expect("running");
    let mine = seat_view(client, &game.game_id, &token(game, seat)).await;
    let action = mine
        .legal_actions
        .iter()
        .filter_map(|legal| legal.action.clone())
        .find(|action| medici_kind(action) == kind)
        .unwrap_or_else(|| panic!("seat {seat} has no legal {kind}"));
    (seat, action)
}

/// What every viewer sees of `game` now, beside what they saw at `version`: equal when the game
/// is exactly as it was then.
async fn every_view(
    client: &mut Client,
    game: &pb::CreateGameResponse,
    version: Option<u64>,
) -> Vec<String> {
    let mut seen = Vec::new();
    let credentials = [None, Some(token(game, 0)), Some(token(game, 1))];
    for credential in credentials {
        let request = pb::GetViewRequest {
            narrate: false,
            game_id: game.game_id.clone(),
            version,
            min_version: None,
            omit_view: false,
        };
        let request = match &credential {
            Some(token) => authorized(request, token),
            None => tonic::Request::new(request),
        };
        let view = client
            .get_view(request)
            .await
            .expect("GetView")
            .into_inner();
        let mut status = view.status.expect("status");
        status.undo_request = None;
        seen.push(format!("{:?} {:?}", view.view, status));
    }
    seen
}

async fn undo_takes_back_own_quiet_moves_and_a_draw_only_with_consent(backend: &Backend) {
    let replicas = [Replica::start(backend).await, Replica::start(backend).await];
    let mut clients = [replicas[0].client().await, replicas[1].client().await];
    let config = |policy: pb::UndoPolicy| pb::GameConfig {
        game: Some(pb::game_config::Game::MediciVsStrozzi(Default::default())),
        table: Some(pb::TableConfig {
            undo: policy as i32,
            ..Default::default()
        }),
    };

    // Own moves only: a draw is never taken back.
    let strict = create(&mut clients[0], config(pb::UndoPolicy::OwnMoves), 50).await;
    let (seat, draw) = legal_of_kind(&mut clients[0], &strict, "DrawTile").await;
    act_as(
        &mut clients[0],
        &strict.game_id,
        &token(&strict, seat),
        draw,
    )
    .await
    .expect("a draw");
    let refused = act_as(
        &mut clients[1],
        &strict.game_id,
        &token(&strict, seat),
        undo(None),
    )
    .await
    .expect_err("taking back a draw");
    assert_eq!(refused.code(), Code::FailedPrecondition);
    assert!(
        refused.message().contains("drew or revealed"),
        "{}",
        refused.message()
    );
    // A game without an undo policy refuses any undo.
    let none = create(&mut clients[0], medici_config(), 51).await;
    let (seat, draw) = legal_of_kind(&mut clients[0], &none, "DrawTile").await;
    act_as(&mut clients[0], &none.game_id, &token(&none, seat), draw)
        .await
        .expect("a draw");
    let no_policy = act_as(
        &mut clients[0],
        &none.game_id,
        &token(&none, seat),
        undo(None),
    )
    .await
    .expect_err("no undo");
    assert!(
        no_policy.message().contains("allows no undo"),
        "{}",
        no_policy.message()
    );

    // With consent: the draw's undo is a request; the other seat accepts; the game is exactly
    // as it was before the draw, for every viewer.
    let game = create(&mut clients[0], config(pb::UndoPolicy::WithConsent), 52).await;
    let at_start = every_view(&mut clients[0], &game, None).await;
    let (active, draw) = legal_of_kind(&mut clients[0], &game, "DrawTile").await;
    let other = 1 - active;
    act_as(&mut clients[0], &game.game_id, &token(&game, active), draw)
        .await
        .expect("a draw");
    let asked = act_as(
        &mut clients[1],
        &game.game_id,
        &token(&game, active),
        undo(None),
    )
    .await
    .expect("a request");
    assert_eq!(table_events(&asked), ["UndoRequested"]);
    let request = asked
        .status
        .clone()
        .expect("status")
        .undo_request
        .expect("a pending request");
    assert_eq!((request.seat, request.to_version), (active, 0));
    assert_eq!(request.waiting_for, [other]);
    let not_mine = act_as(
        &mut clients[0],
        &game.game_id,
        &token(&game, active),
        table_action(pb::table_action::Kind::AcceptUndo(Default::default())),
    )
    .await
    .expect_err("the requester answers its own request");
    assert_eq!(not_mine.code(), Code::FailedPrecondition);
    let accepted = act_as(
        &mut clients[0],
        &game.game_id,
        &token(&game, other),
        table_action(pb::table_action::Kind::AcceptUndo(Default::default())),
    )
    .await
    .expect("an acceptance");
    assert_eq!(table_events(&accepted), ["UndoAccepted", "MovesTakenBack"]);
    assert_eq!(
        accepted.version, 3,
        "the log keeps the draw, the request and the answer"
    );
    assert_eq!(every_view(&mut clients[1], &game, None).await, at_start);

    // A quiet move of one's own (buying the lot on offer) is taken back at once while its seat
    // is still to act.
    let (seat, draw) = legal_of_kind(&mut clients[0], &game, "DrawTile").await;
    act_as(&mut clients[0], &game.game_id, &token(&game, seat), draw)
        .await
        .expect("a draw");
    let (seat, offer) = legal_of_kind(&mut clients[1], &game, "OfferLot").await;
    act_as(&mut clients[1], &game.game_id, &token(&game, seat), offer)
        .await
        .expect("an offer");
    let (buyer, buy) = legal_of_kind(&mut clients[0], &game, "BuyLot").await;
    let before_buying = every_view(&mut clients[0], &game, None).await;
    let bought = act_as(&mut clients[0], &game.game_id, &token(&game, buyer), buy)
        .await
        .expect("a purchase");
    assert_eq!(
        bought.status.expect("status").to_act,
        Some(buyer),
        "the buyer loads next"
    );
    let taken_back = act_as(
        &mut clients[1],
        &game.game_id,
        &token(&game, buyer),
        undo(None),
    )
    .await
    .expect("an own undo");
    assert_eq!(table_events(&taken_back), ["MovesTakenBack"]);
    assert_eq!(
        every_view(&mut clients[0], &game, None).await,
        before_buying
    );
    // The other seat cannot take back the buyer's move alone: its undo is a request, which the
    // buyer declines.
    let (buyer, buy) = legal_of_kind(&mut clients[0], &game, "BuyLot").await;
    act_as(&mut clients[0], &game.game_id, &token(&game, buyer), buy)
        .await
        .expect("a purchase");
    let asked = act_as(
        &mut clients[0],
        &game.game_id,
        &token(&game, 1 - buyer),
        undo(None),
    )
    .await
    .expect("a request");
    assert_eq!(table_events(&asked), ["UndoRequested"]);
    let declined = act_as(
        &mut clients[1],
        &game.game_id,
        &token(&game, buyer),
        table_action(pb::table_action::Kind::DeclineUndo(Default::default())),
    )
    .await
    .expect("a decline");
    assert_eq!(table_events(&declined), ["UndoDeclined"]);
    assert!(declined.status.expect("status").undo_request.is_none());

    // Played to its end, the log with its undos replays to the same result.
    let mut rng = GameRng::from_seed(&tabula::games::Seed::from_u64(53));
    play_random(&mut clients, &game, &mut rng, 2_000).await;
    let log = export(&mut clients[1], &game.game_id).await;
    let report = clients[0]
        .verify_log(pb::VerifyLogRequest { log: Some(log) })
        .await
        .expect("VerifyLog")
        .into_inner();
    assert!(report.valid, "{}", report.error);
}

/// While the store may still have 1.0.0 replicas (layout 1), nothing they could not serve is
/// created: open seats, undo, a spectator delay (they would replay no join or undo, and show
/// spectators a delayed game live).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_1_0_0_replicas_cannot_serve_waits_for_the_stores_upgrade() {
    let backend = Backend::redis();
    let url = backend.redis_url().expect("a Redis backend");
    let mut raw = ::redis::Client::open(url.as_str())
        .and_then(|client| client.get_connection())
        .expect("a raw connection");
    let _: () = ::redis::cmd("SET")
        .arg("tabula:layout")
        .arg(1)
        .query(&mut raw)
        .expect("SET tabula:layout");
    let replica = Replica::start(&backend).await;
    let mut client = replica.client().await;
    let medici = pb::game_config::Game::MediciVsStrozzi(Default::default());
    for (feature, table) in [
        (
            "open seats",
            pb::TableConfig {
                open_seats: vec![1],
                ..Default::default()
            },
        ),
        (
            "an undo policy",
            pb::TableConfig {
                undo: pb::UndoPolicy::OwnMoves as i32,
                ..Default::default()
            },
        ),
        (
            "a spectator delay",
            pb::TableConfig {
                spectator_delay: Some(pb::SpectatorDelay { moves: 2, ms: 0 }),
                ..Default::default()
            },
        ),
    ] {
        let refused = client
            .create_game(pb::CreateGameRequest {
                config: Some(pb::GameConfig {
                    game: Some(medici),
                    table: Some(table),
                }),
                ..Default::default()
            })
            .await
            .expect_err(feature);
        assert_eq!(refused.code(), Code::FailedPrecondition, "{feature}");
        assert!(
            refused.message().starts_with(feature) && refused.message().contains("upgrade-store"),
            "{}",
            refused.message()
        );
    }
    create(&mut client, medici_config(), 60).await;
}
