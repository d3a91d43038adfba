//! CreateGame retried with a request id, through real gRPC clients against real replicas on every
//! store: a retry answers with the first call's game, its seat tokens, invitations, host token and
//! webhooks, and creates nothing; concurrent first calls on two replicas make one game; a request
//! id is its creator's (another tenant's or the operator's names another game); an anonymous
//! request id, a changed request and an over-long request id are refused with what to do; and a
//! retry once retention has archived the game is refused, naming it.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use tabula::archive::Archive;
use tabula::games::Seed;
use tabula::proto::v1 as pb;
use tabula::service::{OperatorOptions, RetentionOptions, ServiceOptions, WebhookOptions};
use tonic::Code;

on_every_store!(
    a_retry_answers_with_the_first_calls_game_and_creates_nothing,
    concurrent_calls_with_one_request_id_on_two_replicas_make_one_game,
    a_retry_of_a_game_with_open_seats_hands_out_the_same_invitations,
);

fn options() -> ServiceOptions {
    ServiceOptions {
        operator: Some(OperatorOptions {
            token: OPERATOR.parse().expect("an operator token"),
            required_for_create: false,
        }),
        // The game's own webhook below points at a loopback port.
        webhooks: WebhookOptions {
            allow_private: true,
            ..WebhookOptions::default()
        },
        ..test_options()
    }
}

/// A CreateGame of Medici vs Strozzi with request id `request_id` and a player.
fn request(request_id: &str, seed: u64) -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        config: Some(medici_config()),
        seed: Some(Seed::from_u64(seed).0.to_vec()),
        players: vec![pb::Player {
            seat: 1,
            display_name: "Lorenzo".into(),
            external_id: "user-1".into(),
        }],
        request_id: request_id.into(),
        ..Default::default()
    }
}

/// [`request`] with a webhook of the game's own, as only a tenant's game has.
fn tenant_request(request_id: &str, seed: u64) -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        webhooks: vec![pb::GameWebhook {
            url: "http://127.0.0.1:9/hook".into(),
            kinds: vec![pb::WebhookEventKind::GameFinished as i32],
        }],
        ..request(request_id, seed)
    }
}

async fn try_create(
    client: &mut Client,
    request: pb::CreateGameRequest,
    credential: Option<&str>,
) -> Result<pb::CreateGameResponse, tonic::Status> {
    let call = match credential {
        Some(credential) => authorized(request, credential),
        None => tonic::Request::new(request),
    };
    client
        .create_game(call)
        .await
        .map(tonic::Response::into_inner)
}

/// The tenant's games, counted through its own key.
async fn games_of(admin: &mut Admin, key: &str) -> u32 {
    admin
        .count_games(authorized(pb::CountGamesRequest::default(), key))
        .await
        .expect("CountGames")
        .into_inner()
        .games_counted
}

/// `created` without what may change between a call and its retry (the game as it is now: its
/// version, status, view and players, who may have joined since; and `replayed`): what must be
/// the same.
fn fixed_part(created: &pb::CreateGameResponse) -> pb::CreateGameResponse {
    pb::CreateGameResponse {
        version: 0,
        status: None,
        view: None,
        players: Vec::new(),
        replayed: false,
        ..created.clone()
    }
}

async fn a_retry_answers_with_the_first_calls_game_and_creates_nothing(backend: &Backend) {
    let replica = Replica::start_with(backend, options()).await;
    let mut client = replica.client().await;
    let mut admin = admin(&replica).await;
    let alpha = tenant_with_key(&mut admin, "alpha", "Alpha").await;
    let beta = tenant_with_key(&mut admin, "beta", "Beta").await;

    let first = try_create(&mut client, tenant_request("order-7", 1), Some(&alpha))
        .await
        .expect("CreateGame with a request id");
    assert!(!first.replayed);
    assert_eq!(first.seats.len(), 2);
    assert_eq!(first.webhooks.len(), 1);
    assert!(first.webhooks[0].secret.starts_with("whsec_"));
    let retry = try_create(&mut client, tenant_request("order-7", 1), Some(&alpha))
        .await
        .expect("the retry");
    assert!(retry.replayed, "a retry says so");
    assert_eq!(fixed_part(&retry), fixed_part(&first));
    assert_eq!(retry.players, first.players);
    assert_eq!(retry.view, first.view);
    assert_eq!(
        games_of(&mut admin, &alpha).await,
        1,
        "the retry created nothing"
    );
    // A request id is the tenant's, whichever of its keys sends it.
    let alpha_second_key = admin
        .issue_tenant_key(authorized(
            pb::IssueTenantKeyRequest {
                tenant_id: "alpha".into(),
            },
            OPERATOR,
        ))
        .await
        .expect("a second key")
        .into_inner()
        .key;
    let by_second_key = try_create(
        &mut client,
        tenant_request("order-7", 1),
        Some(&alpha_second_key),
    )
    .await
    .expect("the retry with the tenant's other key");
    assert!(by_second_key.replayed);
    assert_eq!(fixed_part(&by_second_key), fixed_part(&first));

    // The tokens the retry handed out are the game's: seat 0 moves with its token.
    let mut rng = tabula::games::common::GameRng::from_seed(&Seed::from_u64(2));
    let listing = client
        .get_view(authorized(
            pb::GetViewRequest {
                game_id: first.game_id.clone(),
                ..Default::default()
            },
            &token(&retry, 0),
        ))
        .await
        .expect("GetView with the retry's token")
        .into_inner();
    client
        .act(authorized(
            pb::ActRequest {
                game_id: first.game_id.clone(),
                action: Some(choose(&listing.legal_actions, &mut rng)),
                request_id: "move-1".into(),
                ..Default::default()
            },
            &token(&retry, 0),
        ))
        .await
        .expect("Act with the retry's token");
    // A retry after the move answers with the game as it is now.
    let later = try_create(&mut client, tenant_request("order-7", 1), Some(&alpha))
        .await
        .expect("a later retry");
    assert!(later.replayed);
    assert_eq!(later.version, 1);
    assert_eq!(fixed_part(&later), fixed_part(&first));

    // The same request id with another request: refused, naming the game, creating nothing.
    let changed = try_create(&mut client, tenant_request("order-7", 2), Some(&alpha))
        .await
        .expect_err("another request under the same id");
    assert_eq!(changed.code(), Code::InvalidArgument);
    assert!(
        changed.message().contains("different request"),
        "{changed:?}"
    );
    assert!(changed.message().contains(&first.game_id), "{changed:?}");
    assert!(!changed.message().contains("  "), "one line: {changed:?}");
    assert_eq!(games_of(&mut admin, &alpha).await, 1);

    // A request id is its creator's: another tenant's, and the operator's, make other games.
    let other = try_create(&mut client, tenant_request("order-7", 1), Some(&beta))
        .await
        .expect("another tenant's request id");
    assert!(!other.replayed);
    assert_ne!(other.game_id, first.game_id);
    assert_ne!(token(&other, 0), token(&first, 0));
    let operators = try_create(&mut client, request("order-7", 1), Some(OPERATOR))
        .await
        .expect("the operator's request id");
    assert!(!operators.replayed);
    assert_ne!(operators.game_id, first.game_id);
    assert_ne!(operators.game_id, other.game_id);
    let operators_retry = try_create(&mut client, request("order-7", 1), Some(OPERATOR))
        .await
        .expect("the operator's retry");
    assert!(operators_retry.replayed);
    assert_eq!(fixed_part(&operators_retry), fixed_part(&operators));
    assert_eq!(games_of(&mut admin, &alpha).await, 1);
    assert_eq!(games_of(&mut admin, &beta).await, 1);

    // Anonymous callers may not name one; nor may anyone name one over the limit.
    let anonymous = try_create(&mut client, request("order-7", 1), None)
        .await
        .expect_err("an anonymous request id");
    assert_eq!(anonymous.code(), Code::InvalidArgument);
    assert!(anonymous.message().contains("API key"), "{anonymous:?}");
    assert!(
        !anonymous.message().contains("  "),
        "one line: {anonymous:?}"
    );
    let long = try_create(
        &mut client,
        tenant_request(&"r".repeat(129), 1),
        Some(&alpha),
    )
    .await
    .expect_err("a request id over 128 bytes");
    assert_eq!(long.code(), Code::InvalidArgument);
    assert!(long.message().contains("128"), "{long:?}");

    // Without a request id every call makes a game, as before.
    for _ in 0..2 {
        let made = try_create(&mut client, tenant_request("", 1), Some(&alpha))
            .await
            .expect("CreateGame without a request id");
        assert!(!made.replayed);
    }
    assert_eq!(games_of(&mut admin, &alpha).await, 3);
}

async fn concurrent_calls_with_one_request_id_on_two_replicas_make_one_game(backend: &Backend) {
    let first = Replica::start_with(backend, options()).await;
    let mut admin = admin(&first).await;
    let key = tenant_with_key(&mut admin, "alpha", "Alpha").await;
    // Started after the key was issued, the second replica knows it from the start.
    let second = Replica::serving(backend.store().await, options()).await;
    let mut calls = Vec::new();
    for call in 0..8 {
        let replica = if call % 2 == 0 { &first } else { &second };
        let mut client = replica.client().await;
        let key = key.clone();
        calls.push(tokio::spawn(async move {
            try_create(&mut client, tenant_request("order-9", 1), Some(&key)).await
        }));
    }
    let mut answers = Vec::new();
    for call in calls {
        answers.push(
            call.await
                .expect("the call's task")
                .expect("every call answers"),
        );
    }
    assert_eq!(
        answers.iter().filter(|answer| !answer.replayed).count(),
        1,
        "exactly one call created the game"
    );
    for answer in &answers {
        assert_eq!(fixed_part(answer), fixed_part(&answers[0]));
    }
    assert_eq!(games_of(&mut admin, &key).await, 1);
}

async fn a_retry_of_a_game_with_open_seats_hands_out_the_same_invitations(backend: &Backend) {
    let replica = Replica::start_with(backend, options()).await;
    let mut client = replica.client().await;
    let open = || pb::CreateGameRequest {
        config: Some(pb::GameConfig {
            table: Some(pb::TableConfig {
                open_seats: vec![1],
                ..Default::default()
            }),
            ..medici_config()
        }),
        any_seat_invitations: 1,
        request_id: "table-3".into(),
        ..Default::default()
    };
    let first = try_create(&mut client, open(), Some(OPERATOR))
        .await
        .expect("a game with an open seat");
    assert_eq!(first.invitations.len(), 2);
    assert!(!first.host_token.is_empty());
    assert_eq!(first.seats.len(), 1, "the open seat has no token yet");
    let retry = try_create(&mut client, open(), Some(OPERATOR))
        .await
        .expect("the retry");
    assert!(retry.replayed);
    assert_eq!(fixed_part(&retry), fixed_part(&first));

    // The retry's invitation takes the seat; once taken, a retry still shows the first answer.
    let joined = client
        .join_game(pb::JoinGameRequest {
            code: retry.invitations[0].code.clone(),
            player: Some(pb::Player {
                seat: 0,
                display_name: "Clarice".into(),
                external_id: String::new(),
            }),
            request_id: "join-1".into(),
        })
        .await
        .expect("JoinGame with the retry's code")
        .into_inner();
    assert_eq!(joined.seat, 1);
    let after_join = try_create(&mut client, open(), Some(OPERATOR))
        .await
        .expect("a retry after the join");
    assert!(after_join.replayed);
    assert_eq!(fixed_part(&after_join), fixed_part(&first));
    assert!(
        after_join.status.expect("a status").open_seats.is_empty(),
        "the game as it is now"
    );
}

/// Memory store alone: what is checked is the service's answer once the game has left the store,
/// the same on every store (the archive's own tests run on each).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_retention_archived_the_game_is_refused() {
    let backend = Backend::memory();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let archive = std::sync::Arc::new(
        Archive::open(
            &format!("file://{}", dir.path().display()),
            Duration::from_secs(5),
        )
        .expect("a directory archive"),
    );
    let replica = Replica::start_with(
        &backend,
        ServiceOptions {
            archive: Some(archive),
            retention: Some(RetentionOptions {
                retain_finished: Some(Duration::from_millis(200)),
                abandon_after: None,
                interval: Duration::from_millis(100),
                batch: 50,
                call_timeout: Duration::from_secs(5),
            }),
            ..options()
        },
    )
    .await;
    let mut client = replica.client().await;
    let first = try_create(&mut client, request("order-1", 1), Some(OPERATOR))
        .await
        .expect("CreateGame with a request id");
    client
        .act(authorized(
            pb::ActRequest {
                game_id: first.game_id.clone(),
                action: Some(resign_action()),
                ..Default::default()
            },
            &token(&first, 0),
        ))
        .await
        .expect("seat 0 resigns, which ends the game");
    let store = backend.store().await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while store
        .read_whole(&first.game_id)
        .await
        .expect("store")
        .is_some()
    {
        assert!(Instant::now() < deadline, "the game never left the store");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let refused = try_create(&mut client, request("order-1", 1), Some(OPERATOR))
        .await
        .expect_err("a retry once the game was archived");
    assert_eq!(refused.code(), Code::FailedPrecondition, "{refused:?}");
    assert!(refused.message().contains("archived"), "{refused:?}");
    assert!(refused.message().contains(&first.game_id), "{refused:?}");
    assert!(!refused.message().contains("  "), "one line: {refused:?}");
}
