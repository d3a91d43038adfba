//! Every hosted game played to the end through gRPC, each action sent to one of two replicas
//! sharing a real `redis-server`, then exported and re-executed by VerifyLog and the engine.

use crate::common;

use common::*;
use tabula::games::Seed;
use tabula::games::common::GameRng;
use tabula::proto::v1 as pb;
use tabula::proto::{la_strada::v1 as la_strada, manila::v1 as manila, strozzi::v1 as strozzi};

/// Plays `config` to the end through two replicas and checks the exported log verifies to the
/// result the service reported.
async fn play_through_two_replicas(
    backend: &Backend,
    config: pb::GameConfig,
    seats: usize,
    seed: u64,
) {
    let (a, b) = (Replica::start(backend).await, Replica::start(backend).await);
    let mut clients = vec![a.client().await, b.client().await];
    let game = create(&mut clients[0], config, seed).await;
    assert_eq!(game.seats.len(), seats);
    let mut rng = GameRng::from_seed(&Seed::from_u64(seed ^ 0xABCD));
    let final_version = play_random(&mut clients, &game, &mut rng, 20_000).await;

    let view = spectator_view(&mut clients[1], &game.game_id).await;
    let status = view.status.expect("status");
    assert!(status.finished);
    assert_eq!(status.scores.len(), seats);

    let log = export(&mut clients[1], &game.game_id).await;
    assert!(log.complete);
    assert_eq!(log.entries.len() as u64, final_version);
    let report = clients[0]
        .verify_log(pb::VerifyLogRequest {
            log: Some(log.clone()),
        })
        .await
        .expect("VerifyLog")
        .into_inner();
    assert!(report.valid, "{}", report.error);
    assert_eq!(report.status, Some(status));
    // The library verifier (what `tabula verify` runs, with the deployment's keys) agrees.
    assert_eq!(
        tabula::service::verify::with_provenance(
            tabula::service::verify::verify(&log),
            &log,
            deployment_key().published()
        ),
        report
    );
}

fn strozzi(players: u32, hidden_money: bool) -> pb::GameConfig {
    let config = strozzi::Config {
        players,
        hidden_money,
        ..Default::default()
    };
    pb::GameConfig {
        table: None,
        game: Some(pb::game_config::Game::Strozzi(config)),
    }
}

fn la_strada(players: u32) -> pb::GameConfig {
    let config = la_strada::Config {
        players,
        ..Default::default()
    };
    pb::GameConfig {
        table: None,
        game: Some(pb::game_config::Game::LaStrada(config)),
    }
}

fn manila(players: u32, pirate_variant: bool) -> pb::GameConfig {
    let config = manila::Config {
        players,
        pirate_variant,
        ..Default::default()
    };
    pb::GameConfig {
        table: None,
        game: Some(pb::game_config::Game::Manila(config)),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manila_three_to_five_players_over_redis() {
    let backend = Backend::redis();
    for players in 3..=5 {
        play_through_two_replicas(
            &backend,
            manila(players, false),
            players as usize,
            50 + u64::from(players),
        )
        .await;
    }
    play_through_two_replicas(&backend, manila(4, true), 4, 59).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn medici_vs_strozzi_full_game_over_redis() {
    play_through_two_replicas(&Backend::redis(), medici_config(), 2, 21).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strozzi_three_and_six_players_over_redis() {
    let backend = Backend::redis();
    play_through_two_replicas(&backend, strozzi(3, false), 3, 31).await;
    play_through_two_replicas(&backend, strozzi(6, false), 6, 36).await;
    play_through_two_replicas(&backend, strozzi(4, true), 4, 34).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn la_strada_two_to_four_players_over_redis() {
    let backend = Backend::redis();
    for players in 2..=4 {
        play_through_two_replicas(
            &backend,
            la_strada(players),
            players as usize,
            40 + u64::from(players),
        )
        .await;
    }
}

/// Hidden money (Strozzi option S16): while the game runs, another seat's view and a spectator's
/// never show a seat's money; its own view does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strozzi_hidden_money_stays_hidden_through_the_service() {
    let backend = Backend::memory();
    let replica = Replica::start(&backend).await;
    let mut client = replica.client().await;
    let game = create(&mut client, strozzi(3, true), 5).await;
    let mut rng = GameRng::from_seed(&Seed::from_u64(5));
    // Play until the first round has been scored (someone has money to hide), then look.
    for _ in 0..400 {
        let spectator = spectator_view(&mut client, &game.game_id).await;
        let Some(pb::view::Game::Strozzi(view)) = spectator.view.and_then(|v| v.game) else {
            panic!("a Strozzi view")
        };
        if view.round >= 2 || spectator.status.as_ref().is_some_and(|s| s.finished) {
            break;
        }
        let seat = spectator
            .status
            .and_then(|s| s.to_act)
            .expect("someone acts");
        let mine = seat_view(&mut client, &game.game_id, &token(&game, seat)).await;
        let action = choose(&mine.legal_actions, &mut rng);
        let request = pb::ActRequest {
            narrate: false,
            game_id: game.game_id.clone(),
            action: Some(action),
            expected_version: None,
            request_id: String::new(),
            omit_view: false,
        };
        client
            .act(authorized(request, &token(&game, seat)))
            .await
            .expect("act");
    }
    for seat in 0..3u32 {
        let mine = seat_view(&mut client, &game.game_id, &token(&game, seat)).await;
        let Some(pb::view::Game::Strozzi(view)) = mine.view.and_then(|v| v.game) else {
            panic!("a Strozzi view")
        };
        for player in &view.players {
            assert_eq!(
                player.money.is_some(),
                player.seat == seat,
                "seat {seat} sees money of {}",
                player.seat
            );
        }
    }
    let spectator = spectator_view(&mut client, &game.game_id).await;
    let Some(pb::view::Game::Strozzi(view)) = spectator.view.and_then(|v| v.game) else {
        panic!("a Strozzi view")
    };
    assert!(view.players.iter().all(|p| p.money.is_none()));
}

/// ListGameTypes answers the registry, through a real gRPC client, without a token: each game
/// with its facts, in the registry's order; and what it states holds at the service: a table of
/// each stated seat count is created with that many seats, one seat more is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_lists_the_games_it_hosts_and_their_facts_hold() {
    let replica = Replica::start(&Backend::memory()).await;
    let mut client = replica.client().await;
    let listed = list_game_types(&mut client).await;
    let registry = tabula::hosting::registry();
    assert_eq!(listed.len(), registry.len());
    for (game_type, game) in listed.iter().zip(registry) {
        assert_eq!(*game_type, game.to_pb());
        assert!(!game_type.display_name.is_empty());
        assert_ne!(game_type.chance(), pb::ChanceMode::Unspecified);
        assert_ne!(game_type.information(), pb::InformationKind::Unspecified);
        for players in [game_type.min_seats, game_type.max_seats] {
            let created = create(&mut client, game.config(players), 3).await;
            assert_eq!(created.game, game_type.game);
            assert_eq!(created.rules_version, game_type.rules_version);
            assert_eq!(created.seats.len() as u32, players, "{}", game_type.name);
        }
        if game_type.min_seats < game_type.max_seats {
            let refused = client
                .create_game(pb::CreateGameRequest {
                    config: Some(game.config(game_type.max_seats + 1)),
                    ..Default::default()
                })
                .await
                .expect_err("one seat too many");
            assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused}");
        }
    }
    let names: Vec<&str> = listed.iter().map(|game| game.name.as_str()).collect();
    for name in ["medici_vs_strozzi", "strozzi", "manila", "la_strada"] {
        assert!(names.contains(&name), "{name} is listed: {names:?}");
    }
}
