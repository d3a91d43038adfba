//! The table in words and on one stream (issue #31), through real gRPC clients: with `narrate`,
//! every viewer receives exactly what it receives without, plus sentences and button labels;
//! ObserveGames carries every viewer's stream on one call, message for message the same as each
//! viewer's own Observe; a narrated export verifies; and one subscription's failure ends it alone.

use crate::common;

use std::collections::BTreeMap;

use common::*;
use futures::StreamExt;
use tabula::games::common::GameRng;
use tabula::proto::v1 as pb;
use tonic::Code;

on_every_store!(every_viewer_receives_the_same_on_one_stream_and_in_words);

fn observe_request(game_id: &str, narrate: bool) -> pb::ObserveRequest {
    pb::ObserveRequest {
        game_id: game_id.to_owned(),
        from_version: Some(0),
        narrate,
    }
}

/// An Observe stream's every message, as `token` (empty: a spectator), until the game ends.
fn observed(
    client: &Client,
    game_id: &str,
    token: &str,
    narrate: bool,
) -> tokio::task::JoinHandle<Vec<pb::ObserveResponse>> {
    let mut client = client.clone();
    let request = observe_request(game_id, narrate);
    let token = token.to_owned();
    tokio::spawn(async move {
        let request = if token.is_empty() {
            tonic::Request::new(request)
        } else {
            authorized(request, &token)
        };
        collect_stream(&mut client, request).await
    })
}

/// `message` without its sentences and labels: what a client that did not ask receives.
fn without_words(mut message: pb::ObserveResponse) -> pb::ObserveResponse {
    for event in &mut message.events {
        event.text.clear();
    }
    for legal in &mut message.legal_actions {
        legal.label.clear();
    }
    message
}

async fn every_viewer_receives_the_same_on_one_stream_and_in_words(backend: &Backend) {
    let replica = Replica::start(backend).await;
    let mut client = replica.client().await;
    for (index, game) in tabula::hosting::registry().iter().enumerate() {
        let name = game.game_type.name;
        let seats = game.game_type.min_seats;
        let created = create(&mut client, game.config(seats), 310 + index as u64).await;
        let game_id = created.game_id.clone();
        // Each seat, then a spectator.
        let tokens: Vec<String> = (0..seats)
            .map(|seat| token(&created, seat))
            .chain([String::new()])
            .collect();
        let plain: Vec<_> = tokens
            .iter()
            .map(|token| observed(&client, &game_id, token, false))
            .collect();
        let narrated: Vec<_> = tokens
            .iter()
            .map(|token| observed(&client, &game_id, token, true))
            .collect();
        let multiplexed = {
            let mut client = client.clone();
            let subscriptions = tokens
                .iter()
                .map(|token| pb::GameSubscription {
                    observe: Some(observe_request(&game_id, true)),
                    token: token.clone(),
                })
                .collect();
            let mut stream = client
                .observe_games(pb::ObserveGamesRequest { subscriptions })
                .await
                .expect("ObserveGames")
                .into_inner();
            tokio::spawn(async move {
                let mut by_subscription: BTreeMap<u32, (Vec<pb::ObserveResponse>, bool)> =
                    BTreeMap::new();
                while let Some(message) = stream.next().await {
                    let message = message.expect("an ObserveGames message");
                    let entry = by_subscription.entry(message.subscription).or_default();
                    assert!(!entry.1, "a message after its subscription ended");
                    assert!(message.error.is_none(), "{:?}", message.error);
                    entry.0.extend(message.update);
                    entry.1 = message.ended;
                }
                by_subscription
            })
        };
        let mut rng = GameRng::from_seed(&tabula::games::Seed::from_u64(index as u64));
        play_random(std::slice::from_mut(&mut client), &created, &mut rng, 5_000).await;

        let multiplexed = multiplexed.await.expect("the ObserveGames reader");
        assert_eq!(multiplexed.len(), tokens.len(), "{name}");
        for (viewer, (plain, narrated)) in plain.into_iter().zip(narrated).enumerate() {
            let (plain, narrated) = (
                plain.await.expect("reader"),
                narrated.await.expect("reader"),
            );
            let (on_one, ended) = &multiplexed[&(viewer as u32)];
            assert!(ended, "{name}: subscription {viewer} ended with its game");
            assert_eq!(on_one, &narrated, "{name}: viewer {viewer} on ObserveGames");
            assert_eq!(plain.len(), narrated.len(), "{name}: viewer {viewer}");
            for (plain, narrated) in plain.iter().zip(&narrated) {
                assert_eq!(
                    plain,
                    &without_words(narrated.clone()),
                    "{name}: viewer {viewer}"
                );
                assert!(
                    plain.events.iter().all(|event| event.text.is_empty())
                        && plain
                            .legal_actions
                            .iter()
                            .all(|legal| legal.label.is_empty()),
                    "{name}: words nobody asked for"
                );
                // Every entry reads as at least one sentence, every move has its button.
                if !narrated.events.is_empty() {
                    assert!(
                        narrated.events.iter().any(|event| !event.text.is_empty()),
                        "{name}: viewer {viewer} at {} reads nothing: {:?}",
                        narrated.version,
                        narrated.events
                    );
                }
                assert!(
                    narrated
                        .legal_actions
                        .iter()
                        .all(|legal| !legal.label.is_empty()),
                    "{name}: a move without a label"
                );
            }
        }

        // The log in words verifies like the log without.
        let log = client
            .export_log(pb::ExportLogRequest {
                game_id: game_id.clone(),
                narrate: true,
            })
            .await
            .expect("ExportLog")
            .into_inner()
            .log
            .expect("a log");
        assert!(
            log.entries
                .iter()
                .flat_map(|entry| &entry.events)
                .any(|event| !event.text.is_empty()),
            "{name}: the export has no sentences"
        );
        let verified = client
            .verify_log(pb::VerifyLogRequest { log: Some(log) })
            .await
            .expect("VerifyLog")
            .into_inner();
        assert!(verified.valid, "{name}: {}", verified.error);
    }
}

/// ObserveGames refuses what it cannot hold, and one subscription's failure ends it alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_failing_subscription_ends_alone() {
    let replica = Replica::start(&Backend::memory()).await;
    let mut client = replica.client().await;
    let created = create(&mut client, medici_config(), 1).await;
    let other = create(&mut client, medici_config(), 2).await;
    let subscription = |game_id: &str, token: &str| pb::GameSubscription {
        observe: Some(observe_request(game_id, false)),
        token: token.to_owned(),
    };

    for count in [0, 17] {
        let refused = client
            .observe_games(pb::ObserveGamesRequest {
                subscriptions: vec![subscription(&created.game_id, ""); count],
            })
            .await
            .expect_err("too few or too many");
        assert_eq!(refused.code(), Code::InvalidArgument);
        assert!(
            refused.message().contains("1 to 16"),
            "{}",
            refused.message()
        );
    }
    let long = client
        .observe_games(pb::ObserveGamesRequest {
            subscriptions: vec![subscription(&created.game_id, &"x".repeat(300))],
        })
        .await
        .expect_err("a credential too long");
    assert_eq!(long.code(), Code::InvalidArgument);
    assert!(!long.message().contains("xxxx"), "the token is not echoed");

    // A seat of the game, an unknown game, another game's token, and a spectator.
    let mut stream = client
        .observe_games(pb::ObserveGamesRequest {
            subscriptions: vec![
                subscription(&created.game_id, &token(&created, 0)),
                subscription("0123456789abcdef0123456789abcdef", ""),
                subscription(&created.game_id, &token(&other, 0)),
                subscription(&created.game_id, ""),
            ],
        })
        .await
        .expect("ObserveGames")
        .into_inner();
    let mut ended = BTreeMap::new();
    let mut first = BTreeMap::new();
    while ended.len() < 2 {
        let message = stream.next().await.expect("more").expect("a message");
        if message.ended {
            ended.insert(message.subscription, message.error.expect("why it ended"));
        } else if let Some(update) = message.update {
            first.entry(message.subscription).or_insert(update);
        }
    }
    assert_eq!(ended[&1].code, Code::NotFound as i32, "{:?}", ended[&1]);
    assert_eq!(
        ended[&2].code,
        Code::PermissionDenied as i32,
        "{:?}",
        ended[&2]
    );
    // The others go on: a move reaches both.
    play_steps_until_version(&mut client, &created, 1).await;
    let mut moved = BTreeMap::new();
    while moved.len() < 2 {
        let message = stream.next().await.expect("more").expect("a message");
        assert!(!message.ended, "{message:?}");
        if let Some(update) = message.update
            && update.version == 1
        {
            moved.insert(message.subscription, update);
        }
    }
    assert!(
        moved.contains_key(&0) && moved.contains_key(&3),
        "{moved:?}"
    );
}

/// Plays random moves until `created` reaches `version`.
async fn play_steps_until_version(
    client: &mut Client,
    created: &pb::CreateGameResponse,
    version: u64,
) {
    let mut rng = GameRng::from_seed(&tabula::games::Seed::from_u64(9));
    loop {
        let view = spectator_view(client, &created.game_id).await;
        if view.version >= version {
            return;
        }
        let seat = view.status.expect("status").to_act.expect("running");
        let mine = seat_view(client, &created.game_id, &token(created, seat)).await;
        client
            .act(authorized(
                pb::ActRequest {
                    game_id: created.game_id.clone(),
                    action: Some(choose(&mine.legal_actions, &mut rng)),
                    expected_version: Some(mine.version),
                    request_id: format!("step-{}", mine.version),
                    narrate: true,
                    omit_view: false,
                },
                &token(created, seat),
            ))
            .await
            .expect("Act");
    }
}
