//! Tenants, through real gRPC clients against real replicas on every store: the operator creates
//! tenants and issues their API keys; a tenant's key creates games it then operates, and every
//! RPC it sends about another tenant's games fails as for a missing game, with nothing of the
//! other tenant in the error; keys rotate (two at once) and a revoked key is refused by every
//! replica within the directory's refresh; anonymous creation can be turned off; tenants
//! declared in a file work without an operator token.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use futures::StreamExt;
use tabula::proto::v1 as pb;
use tabula::service::tenants::{DeclaredKey, DeclaredTenant, TENANT_REFRESH, TenantsFile, new_key};
use tabula::service::{OperatorOptions, ServiceOptions};
use tonic::Code;

on_every_store!(
    a_tenant_key_reaches_nothing_of_another_tenant,
    keys_rotate_and_a_revoked_key_is_refused_by_every_replica,
    anonymous_creation_can_be_turned_off_and_declared_tenants_need_no_operator,
    quotas_hold_across_replicas_and_name_themselves,
    stream_and_bot_seat_quotas_hold_across_replicas,
);

fn operator_options() -> ServiceOptions {
    ServiceOptions {
        operator: Some(OperatorOptions {
            token: OPERATOR.parse().expect("an operator token"),
            required_for_create: false,
        }),
        ..test_options()
    }
}

/// CreateGame of a Medici vs Strozzi game with `credential`, as it answers.
async fn try_create(
    client: &mut Client,
    credential: &str,
) -> Result<tonic::Response<pb::CreateGameResponse>, tonic::Status> {
    client
        .create_game(authorized(
            pb::CreateGameRequest {
                config: Some(medici_config()),
                ..Default::default()
            },
            credential,
        ))
        .await
}

/// CreateGame with `credential` (a tenant key or the operator token).
async fn create_as(client: &mut Client, credential: &str, seed: u64) -> pb::CreateGameResponse {
    client
        .create_game(authorized(
            pb::CreateGameRequest {
                config: Some(medici_config()),
                seed: Some(tabula::games::Seed::from_u64(seed).0.to_vec()),
                players: vec![pb::Player {
                    seat: 0,
                    display_name: "Beatrice of Beta".into(),
                    external_id: "beta-user-77".into(),
                }],
                ..Default::default()
            },
            credential,
        ))
        .await
        .expect("CreateGame")
        .into_inner()
}

async fn a_tenant_key_reaches_nothing_of_another_tenant(backend: &Backend) {
    let replica = Replica::start_with(backend, operator_options()).await;
    let mut admin = admin(&replica).await;
    let mut client = replica.client().await;
    let alpha = tenant_with_key(&mut admin, "alpha", "Alpha Studio").await;
    let beta = tenant_with_key(&mut admin, "beta", "Beta Games Ltd").await;
    let own = create_as(&mut client, &alpha, 1).await;
    let theirs = create_as(&mut client, &beta, 2).await;
    // One move in beta's game, so that it has a log worth hiding.
    let view = client
        .get_view(authorized(
            pb::GetViewRequest {
                game_id: theirs.game_id.clone(),
                ..Default::default()
            },
            &token(&theirs, 0),
        ))
        .await
        .expect("beta's seat sees its game")
        .into_inner();
    let mover = view.status.as_ref().and_then(|s| s.to_act);
    if let Some(seat) = mover {
        let legal = client
            .get_view(authorized(
                pb::GetViewRequest {
                    game_id: theirs.game_id.clone(),
                    ..Default::default()
                },
                &token(&theirs, seat),
            ))
            .await
            .expect("view")
            .into_inner()
            .legal_actions;
        let mut rng = tabula::games::common::GameRng::from_seed(&tabula::games::Seed::from_u64(3));
        client
            .act(authorized(
                pb::ActRequest {
                    game_id: theirs.game_id.clone(),
                    action: Some(choose(&legal, &mut rng)),
                    ..Default::default()
                },
                &token(&theirs, seat),
            ))
            .await
            .expect("beta's seat moves");
    }

    // What a missing game answers, for comparison: same code, same words but the id.
    let missing_id = "0123456789abcdef0123456789abcdef";
    let missing = admin
        .end_game(authorized(
            pb::EndGameRequest {
                game_id: missing_id.into(),
                reason: "probe".into(),
                request_id: String::new(),
            },
            &alpha,
        ))
        .await
        .expect_err("a missing game");
    assert_eq!(missing.code(), Code::NotFound);
    let as_missing = |status: &tonic::Status, what: &str| {
        assert_eq!(status.code(), Code::NotFound, "{what}: {status:?}");
        assert_eq!(
            status.message(),
            missing.message().replace(missing_id, &theirs.game_id),
            "{what}: answers as a missing game does"
        );
    };

    let mut refusals: Vec<(String, tonic::Status)> = Vec::new();
    let game_id = theirs.game_id.clone();
    let end = admin
        .end_game(authorized(
            pb::EndGameRequest {
                game_id: game_id.clone(),
                reason: "alpha tries".into(),
                request_id: String::new(),
            },
            &alpha,
        ))
        .await
        .expect_err("EndGame on beta's game");
    as_missing(&end, "EndGame");
    refusals.push(("EndGame".into(), end));
    let hand = admin
        .hand_seat_to_bot(authorized(
            pb::HandSeatToBotRequest {
                game_id: game_id.clone(),
                bot: Some(pb::BotSeat {
                    seat: 1,
                    ..Default::default()
                }),
                request_id: String::new(),
            },
            &alpha,
        ))
        .await
        .expect_err("HandSeatToBot on beta's game");
    as_missing(&hand, "HandSeatToBot");
    refusals.push(("HandSeatToBot".into(), hand));
    let get_view = client
        .get_view(authorized(
            pb::GetViewRequest {
                game_id: game_id.clone(),
                ..Default::default()
            },
            &alpha,
        ))
        .await
        .expect_err("GetView of beta's game");
    as_missing(&get_view, "GetView");
    refusals.push(("GetView".into(), get_view));
    let export = client
        .export_log(authorized(
            pb::ExportLogRequest {
                narrate: false,
                game_id: game_id.clone(),
            },
            &alpha,
        ))
        .await
        .expect_err("ExportLog of beta's game");
    as_missing(&export, "ExportLog");
    refusals.push(("ExportLog".into(), export));
    let unredacted = admin
        .export_log_unredacted(authorized(
            pb::ExportLogUnredactedRequest {
                game_id: game_id.clone(),
            },
            &alpha,
        ))
        .await
        .expect_err("ExportLogUnredacted of beta's game");
    as_missing(&unredacted, "ExportLogUnredacted");
    refusals.push(("ExportLogUnredacted".into(), unredacted));
    let act = client
        .act(authorized(
            pb::ActRequest {
                game_id: game_id.clone(),
                action: Some(resign_action()),
                ..Default::default()
            },
            &alpha,
        ))
        .await
        .expect_err("Act in beta's game");
    as_missing(&act, "Act");
    refusals.push(("Act".into(), act));
    let observe = match client
        .observe(authorized(
            pb::ObserveRequest {
                game_id: game_id.clone(),
                ..Default::default()
            },
            &alpha,
        ))
        .await
    {
        Err(status) => status,
        Ok(stream) => match stream.into_inner().next().await {
            Some(Err(status)) => status,
            other => panic!("Observe of beta's game answered {other:?}"),
        },
    };
    as_missing(&observe, "Observe");
    refusals.push(("Observe".into(), observe));
    // Managing tenants is the operator's, whatever tenant is named.
    for (what, status) in [
        (
            "CreateTenant",
            admin
                .create_tenant(authorized(
                    pb::CreateTenantRequest {
                        tenant_id: "gamma".into(),
                        display_name: String::new(),
                        limits: None,
                    },
                    &alpha,
                ))
                .await
                .map(|_| ()),
        ),
        (
            "ListTenants",
            admin
                .list_tenants(authorized(pb::ListTenantsRequest {}, &alpha))
                .await
                .map(|_| ()),
        ),
        (
            "IssueTenantKey",
            admin
                .issue_tenant_key(authorized(
                    pb::IssueTenantKeyRequest {
                        tenant_id: "beta".into(),
                    },
                    &alpha,
                ))
                .await
                .map(|_| ()),
        ),
        (
            "RevokeTenantKey",
            admin
                .revoke_tenant_key(authorized(
                    pb::RevokeTenantKeyRequest {
                        tenant_id: "beta".into(),
                        key_id: beta[4..20].into(),
                    },
                    &alpha,
                ))
                .await
                .map(|_| ()),
        ),
    ] {
        let status = status.expect_err(what);
        assert_eq!(status.code(), Code::PermissionDenied, "{what}: {status:?}");
        refusals.push((what.into(), status));
    }
    // Listings and counts hold alpha's games only.
    let listed = admin
        .list_games(authorized(pb::ListGamesRequest::default(), &alpha))
        .await
        .expect("ListGames")
        .into_inner();
    let ids: Vec<&str> = listed.games.iter().map(|g| g.game_id.as_str()).collect();
    assert_eq!(ids, [own.game_id.as_str()], "alpha lists its own game only");
    assert_eq!(listed.games[0].tenant_id, "alpha");
    let counted = admin
        .count_games(authorized(pb::CountGamesRequest::default(), &alpha))
        .await
        .expect("CountGames")
        .into_inner();
    assert_eq!(counted.games_counted, 1, "alpha counts its own game only");
    // Read from alpha's own index: one game per page, and no page of beta's games before or
    // after it (beta's game is the newer), however small the page.
    let one = admin
        .list_games(authorized(
            pb::ListGamesRequest {
                page_size: 1,
                ..Default::default()
            },
            &alpha,
        ))
        .await
        .expect("ListGames")
        .into_inner();
    let ids: Vec<&str> = one.games.iter().map(|g| g.game_id.as_str()).collect();
    assert_eq!(
        ids,
        [own.game_id.as_str()],
        "alpha's game on the first page"
    );
    assert!(one.next_page_token.is_empty(), "and nothing after it");
    let counted = admin
        .count_games(authorized(
            pb::CountGamesRequest {
                scan_limit: 1,
                ..Default::default()
            },
            &alpha,
        ))
        .await
        .expect("CountGames")
        .into_inner();
    assert_eq!(counted.games_counted, 1, "one game read: alpha's own");
    assert!(counted.next_page_token.is_empty(), "nothing left to count");

    // Nothing of beta's in any refusal: its id, name, players, seat tokens, key or other game.
    let secrets = [
        "beta".to_owned(),
        "Beta Games".to_owned(),
        "Beatrice".to_owned(),
        "beta-user-77".to_owned(),
        token(&theirs, 0),
        token(&theirs, 1),
        beta.clone(),
    ];
    for (what, status) in &refusals {
        for secret in &secrets {
            assert!(
                !status.message().contains(secret.as_str()),
                "{what}'s refusal tells {secret:?}: {}",
                status.message()
            );
        }
    }

    // The owner and the operator keep their powers over beta's game, exporting it unredacted
    // while it runs among them (still without the seed); a seat's token is no credential there.
    for credential in [beta.as_str(), OPERATOR] {
        let log = admin
            .export_log_unredacted(authorized(
                pb::ExportLogUnredactedRequest {
                    game_id: theirs.game_id.clone(),
                },
                credential,
            ))
            .await
            .expect("the owner and the operator export beta's running game")
            .into_inner()
            .log
            .expect("a log");
        assert_eq!(log.game_id, theirs.game_id);
        assert!(
            !log.complete && log.seed.is_empty(),
            "no seed while it runs"
        );
        assert_eq!(log.entries.len(), usize::from(mover.is_some()));
    }
    let by_seat = admin
        .export_log_unredacted(authorized(
            pb::ExportLogUnredactedRequest {
                game_id: theirs.game_id.clone(),
            },
            &token(&theirs, 0),
        ))
        .await
        .expect_err("a seat token on the operator's API");
    assert_eq!(by_seat.code(), Code::Unauthenticated, "{by_seat:?}");
    let listed = admin
        .list_games(authorized(pb::ListGamesRequest::default(), &beta))
        .await
        .expect("beta lists")
        .into_inner();
    assert_eq!(listed.games.len(), 1);
    assert_eq!(listed.games[0].game_id, theirs.game_id);
    admin
        .end_game(authorized(
            pb::EndGameRequest {
                game_id: theirs.game_id.clone(),
                reason: "beta ends its own game".into(),
                request_id: String::new(),
            },
            &beta,
        ))
        .await
        .expect("beta ends its own game");
    admin
        .end_game(authorized(
            pb::EndGameRequest {
                game_id: own.game_id.clone(),
                reason: "the operator ends any game".into(),
                request_id: String::new(),
            },
            OPERATOR,
        ))
        .await
        .expect("the operator ends alpha's game");
    let everything = admin
        .list_games(authorized(pb::ListGamesRequest::default(), OPERATOR))
        .await
        .expect("the operator lists")
        .into_inner();
    assert_eq!(everything.games.len(), 2, "the operator lists every game");
    // The operator lists and counts one tenant's games by naming it; a tenant's key its own
    // only, naming itself or nothing.
    let named = |tenant_id: &str, page_size: u32| pb::ListGamesRequest {
        tenant_id: tenant_id.into(),
        page_size,
        ..Default::default()
    };
    for (tenant_id, game) in [("alpha", &own), ("beta", &theirs)] {
        let listed = admin
            .list_games(authorized(named(tenant_id, 1), OPERATOR))
            .await
            .expect("the operator lists a tenant's games")
            .into_inner();
        let ids: Vec<&str> = listed.games.iter().map(|g| g.game_id.as_str()).collect();
        assert_eq!(ids, [game.game_id.as_str()], "{tenant_id}'s game");
        assert!(listed.next_page_token.is_empty(), "{tenant_id}: one page");
        let counted = admin
            .count_games(authorized(
                pb::CountGamesRequest {
                    tenant_id: tenant_id.into(),
                    ..Default::default()
                },
                OPERATOR,
            ))
            .await
            .expect("the operator counts a tenant's games")
            .into_inner();
        assert_eq!(counted.games_counted, 1, "{tenant_id}'s game");
    }
    let nobody = admin
        .list_games(authorized(named("nobody", 10), OPERATOR))
        .await
        .expect("a tenant id with no games")
        .into_inner();
    assert!(nobody.games.is_empty());
    let bad = admin
        .list_games(authorized(named("Not A Tenant!", 10), OPERATOR))
        .await
        .expect_err("not a tenant id");
    assert_eq!(bad.code(), Code::InvalidArgument, "{bad:?}");
    let itself = admin
        .list_games(authorized(named("alpha", 10), &alpha))
        .await
        .expect("alpha names itself")
        .into_inner();
    assert_eq!(itself.games.len(), 1);
    assert_eq!(itself.games[0].game_id, own.game_id);
    let other = admin
        .list_games(authorized(named("beta", 10), &alpha))
        .await
        .expect_err("alpha names beta");
    assert_eq!(
        other.code(),
        Code::NotFound,
        "as a missing tenant: {other:?}"
    );
    // A tenant key acts for no seat, even in its own game.
    let own_act = client
        .act(authorized(
            pb::ActRequest {
                game_id: theirs.game_id.clone(),
                action: Some(resign_action()),
                ..Default::default()
            },
            &beta,
        ))
        .await
        .expect_err("a tenant key is no seat token");
    assert_eq!(own_act.code(), Code::PermissionDenied);
}

async fn keys_rotate_and_a_revoked_key_is_refused_by_every_replica(backend: &Backend) {
    let first = Replica::start_with(backend, operator_options()).await;
    let second = Replica::start_with(backend, operator_options()).await;
    let mut admin_first = admin(&first).await;
    let mut admin_second = admin(&second).await;
    let old_key = tenant_with_key(&mut admin_first, "rotating", "Rotating").await;
    // The second replica learns of the key within a refresh.
    let listing = |key: String| pb::ListGamesRequest::default().with_key(key);
    let deadline = Instant::now() + TENANT_REFRESH * 2 + Duration::from_secs(3);
    loop {
        match admin_second.list_games(listing(old_key.clone())).await {
            Ok(_) => break,
            Err(status) => {
                assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");
                assert!(
                    Instant::now() < deadline,
                    "the key never reached the replica"
                );
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Rotation: a second key beside the first, not a third.
    let new = admin_first
        .issue_tenant_key(authorized(
            pb::IssueTenantKeyRequest {
                tenant_id: "rotating".into(),
            },
            OPERATOR,
        ))
        .await
        .expect("a second key")
        .into_inner();
    let third = admin_first
        .issue_tenant_key(authorized(
            pb::IssueTenantKeyRequest {
                tenant_id: "rotating".into(),
            },
            OPERATOR,
        ))
        .await
        .expect_err("two keys at most");
    assert_eq!(third.code(), Code::FailedPrecondition);
    admin_first
        .list_games(listing(old_key.clone()))
        .await
        .expect("the old key still works during the rotation");
    admin_first
        .list_games(listing(new.key.clone()))
        .await
        .expect("the new key works");
    // Revoked on the first replica: refused there at once, on the second within the bound.
    admin_first
        .revoke_tenant_key(authorized(
            pb::RevokeTenantKeyRequest {
                tenant_id: "rotating".into(),
                key_id: old_key[4..20].into(),
            },
            OPERATOR,
        ))
        .await
        .expect("revoked");
    let refused = admin_first
        .list_games(listing(old_key.clone()))
        .await
        .expect_err("revoked here");
    assert_eq!(refused.code(), Code::Unauthenticated);
    let revoked_at = Instant::now();
    loop {
        match admin_second.list_games(listing(old_key.clone())).await {
            Err(status) if status.code() == Code::Unauthenticated => break,
            other => {
                let waited = revoked_at.elapsed();
                assert!(
                    waited < TENANT_REFRESH + Duration::from_secs(2),
                    "the revoked key still works after {waited:?}: {other:?}"
                );
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    admin_second
        .list_games(listing(new.key.clone()))
        .await
        .expect("the new key works on every replica");
    let tenants = admin_second
        .list_tenants(authorized(pb::ListTenantsRequest {}, OPERATOR))
        .await
        .expect("ListTenants")
        .into_inner()
        .tenants;
    assert_eq!(tenants.len(), 1);
    assert_eq!(tenants[0].keys.len(), 2);
    assert!(tenants[0].keys[0].revoke_time.is_some());
    assert!(tenants[0].keys[1].revoke_time.is_none());
}

async fn anonymous_creation_can_be_turned_off_and_declared_tenants_need_no_operator(
    backend: &Backend,
) {
    let (key, key_id, hash) = new_key().expect("a key");
    let options = ServiceOptions {
        anonymous_create: false,
        tenants_file: Some(TenantsFile {
            tenants: vec![DeclaredTenant {
                id: "declared".into(),
                display_name: "Declared in a file".into(),
                keys: vec![DeclaredKey {
                    id: key_id,
                    sha256: hex::encode(hash),
                }],
                limits: Default::default(),
            }],
        }),
        ..test_options()
    };
    let replica = Replica::start_with(backend, options).await;
    let mut client = replica.client().await;
    let refused = client
        .create_game(pb::CreateGameRequest {
            config: Some(medici_config()),
            ..Default::default()
        })
        .await
        .expect_err("anonymous creation is off");
    assert_eq!(refused.code(), Code::Unauthenticated);
    assert!(
        refused.message().ends_with(
            "needs a tenant's API key (or the operator token): send `authorization: Bearer \
             <key>`; this server was started with --anonymous-create=false"
        ),
        "{refused:?}"
    );
    let game = create_as(&mut client, &key, 5).await;
    // The operator's API is served for the declared tenant, without an operator token.
    let mut admin = admin(&replica).await;
    let listed = admin
        .list_games(authorized(pb::ListGamesRequest::default(), &key))
        .await
        .expect("ListGames with the declared key")
        .into_inner();
    assert_eq!(listed.games.len(), 1);
    assert_eq!(listed.games[0].game_id, game.game_id);
    let nobody = admin
        .list_games(pb::ListGamesRequest::default())
        .await
        .expect_err("no credential");
    assert_eq!(nobody.code(), Code::Unauthenticated);
    assert!(
        nobody.message().ends_with(
            "needs a tenant's API key or the operator token: send `authorization: Bearer <key>` \
             metadata"
        ),
        "{nobody:?}"
    );
    let forged = admin
        .list_games(authorized(
            pb::ListGamesRequest::default(),
            &format!("{}{}", &key[..key.len() - 4], "ffff"),
        ))
        .await;
    if forged.is_ok() {
        assert!(key.ends_with("ffff"), "a forged key was accepted");
    }
}

/// A request carrying a tenant key.
trait WithKey: Sized {
    fn with_key(self, key: String) -> tonic::Request<Self>;
}

impl<T> WithKey for T {
    fn with_key(self, key: String) -> tonic::Request<Self> {
        authorized(self, &key)
    }
}

/// The quota a refusal names, after checking it is one.
fn quota_of(status: &tonic::Status) -> String {
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    status
        .metadata()
        .get("tabula-quota")
        .and_then(|value| value.to_str().ok())
        .expect("a quota refusal names its quota")
        .to_owned()
}

async fn quotas_hold_across_replicas_and_name_themselves(backend: &Backend) {
    let first = Replica::start_with(backend, operator_options()).await;
    let second = Replica::start_with(backend, operator_options()).await;
    let mut admin = admin(&first).await;
    let limited = tenant_with_key(&mut admin, "limited", "Limited").await;
    let free = tenant_with_key(&mut admin, "free", "Free").await;
    admin
        .set_tenant_limits(authorized(
            pb::SetTenantLimitsRequest {
                tenant_id: "limited".into(),
                limits: Some(pb::TenantLimits {
                    active_games: 2,
                    acts_per_second: 10,
                    ..Default::default()
                }),
            },
            OPERATOR,
        ))
        .await
        .expect("SetTenantLimits");
    // Both replicas know the limits within a refresh.
    tokio::time::sleep(TENANT_REFRESH + Duration::from_millis(500)).await;
    let mut clients = [first.client().await, second.client().await];

    // Active games: two, then refused (without a retry time: only finishing a game helps), then
    // one more once a game has ended.
    let one = create_as(&mut clients[0], &limited, 11).await;
    let _two = create_as(&mut clients[1], &limited, 12).await;
    let refused = try_create(&mut clients[0], &limited)
        .await
        .expect_err("a third running game");
    assert_eq!(quota_of(&refused), "active_games");
    assert!(refused.metadata().get("tabula-retry-after-ms").is_none());
    admin
        .end_game(authorized(
            pb::EndGameRequest {
                game_id: one.game_id.clone(),
                reason: "make room".into(),
                request_id: String::new(),
            },
            &limited,
        ))
        .await
        .expect("the tenant ends its game");
    let deadline = Instant::now() + Duration::from_secs(5);
    let three = loop {
        match try_create(&mut clients[1], &limited).await {
            Ok(game) => break game.into_inner(),
            Err(status) => {
                assert_eq!(quota_of(&status), "active_games");
                assert!(
                    Instant::now() < deadline,
                    "the ended game's place never freed"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    // Another tenant is not held back by this one's quota.
    let other = create_as(&mut clients[0], &free, 13).await;

    // Acts per second, over both replicas together: a burst inside one second admits at most
    // the limit (refused Acts answer RESOURCE_EXHAUSTED with a retry time; the others are
    // judged by the rules, here refused as out of turn or accepted).
    let mut checked = false;
    for _ in 0..5 {
        let now = tabula::store::unix_millis();
        tokio::time::sleep(Duration::from_millis(1000 - now % 1000 + 20)).await;
        let started_second = tabula::store::unix_millis() / 1000;
        let mut admitted = 0;
        let mut over = 0;
        for round in 0..40 {
            let client = &mut clients[round % 2];
            let answer = client
                .act(authorized(
                    pb::ActRequest {
                        game_id: three.game_id.clone(),
                        action: Some(resign_action()),
                        expected_version: Some(1_000_000),
                        ..Default::default()
                    },
                    &token(&three, 0),
                ))
                .await;
            match answer {
                Err(status) if status.code() == Code::ResourceExhausted => {
                    assert_eq!(quota_of(&status), "acts_per_second");
                    let retry: u64 = status
                        .metadata()
                        .get("tabula-retry-after-ms")
                        .and_then(|value| value.to_str().ok())
                        .and_then(|value| value.parse().ok())
                        .expect("a retry time");
                    assert!(retry <= 1000, "retry in {retry} ms");
                    over += 1;
                }
                _ => admitted += 1,
            }
        }
        if tabula::store::unix_millis() / 1000 != started_second {
            continue; // the burst crossed a second: try again in the next one
        }
        assert!(
            admitted <= 10,
            "{admitted} Acts admitted over a limit of 10 per second"
        );
        assert!(admitted >= 5, "only {admitted} of 10 admitted");
        assert_eq!(admitted + over, 40);
        checked = true;
        break;
    }
    assert!(checked, "no burst fit in a second");
    // The other tenant's game still takes Acts in the same second.
    let answer = clients[1]
        .act(authorized(
            pb::ActRequest {
                game_id: other.game_id.clone(),
                action: Some(resign_action()),
                expected_version: Some(1_000_000),
                ..Default::default()
            },
            &token(&other, 0),
        ))
        .await;
    if let Err(status) = answer {
        assert_ne!(status.code(), Code::ResourceExhausted, "{status:?}");
    }
}

/// A replica binary with a declared tenant (`--tenants`, and `tabula tenant-key`'s entry), JSON
/// logs and a metrics endpoint: the tenant's calls carry its id on every access-log line, and its
/// Acts, games and quota refusals are counted under its label.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenants_calls_are_labelled_in_metrics_and_access_logs() {
    let dir = tempfile::tempdir().expect("dir");
    let made = std::process::Command::new(env!("CARGO_BIN_EXE_tabula"))
        .arg("tenant-key")
        .output()
        .expect("tabula tenant-key");
    assert!(made.status.success(), "{made:?}");
    let printed = String::from_utf8(made.stdout).expect("utf-8");
    let key = printed
        .lines()
        .find_map(|line| line.strip_prefix("key: "))
        .expect("a key line")
        .to_owned();
    let entry: serde_json::Value = serde_json::from_str(
        printed
            .lines()
            .find_map(|line| line.strip_prefix("file entry: "))
            .expect("a file entry line"),
    )
    .expect("the entry is JSON");
    // The file entry holds the key's id and hash, never its secret.
    assert!(!entry.to_string().contains(&key[21..]), "{entry}");
    assert_eq!(entry["id"].as_str(), Some(&key[4..20]));
    let file = dir.path().join("tenants.json");
    std::fs::write(
        &file,
        serde_json::json!({"tenants": [{"id": "labelled", "display_name": "Labelled",
            "keys": [entry], "limits": {"games_per_minute": 1}}]})
        .to_string(),
    )
    .expect("tenants file");
    let metrics_port = free_port();
    let log = dir.path().join("tabula.log");
    let replica = common::servers::TabulaServe::logged(
        &[
            "--tenants",
            file.to_str().expect("path"),
            "--anonymous-create",
            "false",
            "--allow-client-seed",
            "--metrics-listen",
            &format!("127.0.0.1:{metrics_port}"),
            "--log-format",
            "json",
        ],
        &log,
    );
    let mut client = replica.client().await;
    let game = create_as(&mut client, &key, 21).await;
    // The second creation in the minute is over the quota (or, across a minute's end, allowed).
    let second = try_create(&mut client, &key).await;
    let refused = second.is_err();
    if let Err(status) = &second {
        assert_eq!(quota_of(status), "games_per_minute");
    }
    client
        .act(authorized(
            pb::ActRequest {
                game_id: game.game_id.clone(),
                action: Some(resign_action()),
                ..Default::default()
            },
            &token(&game, 0),
        ))
        .await
        .expect("seat 0 resigns");
    let scraped = scrape_metrics(metrics_port);
    let tenant = ["tenant=\"labelled\""];
    assert_eq!(
        metric_sample(&scraped, "tabula_tenant_acts_total", &tenant),
        1.0,
        "{scraped}"
    );
    assert!(metric_sample(&scraped, "tabula_tenant_games_created_total", &tenant) >= 1.0);
    if refused {
        assert_eq!(
            metric_sample(
                &scraped,
                "tabula_tenant_quota_refusals_total",
                &["tenant=\"labelled\"", "quota=\"games_per_minute\""]
            ),
            1.0,
            "{scraped}"
        );
    }
    for method in ["\"CreateGame\"", "\"Act\""] {
        let deadline = Instant::now() + Duration::from_secs(5);
        let line = loop {
            let text = std::fs::read_to_string(&log).expect("log");
            if let Some(line) = text
                .lines()
                .find(|line| line.contains("\"tabula::access\"") && line.contains(method))
            {
                break line.to_owned();
            }
            assert!(
                Instant::now() < deadline,
                "no access-log line for {method} in {text}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let line: serde_json::Value = serde_json::from_str(&line).expect("JSON");
        assert_eq!(line["tenant"], "labelled", "{line}");
    }
    drop(replica);
}

async fn stream_and_bot_seat_quotas_hold_across_replicas(backend: &Backend) {
    let first = Replica::start_with(backend, operator_options()).await;
    let second = Replica::start_with(backend, operator_options()).await;
    let mut admin = admin(&first).await;
    let key = tenant_with_key(&mut admin, "watched", "Watched").await;
    admin
        .set_tenant_limits(authorized(
            pb::SetTenantLimitsRequest {
                tenant_id: "watched".into(),
                limits: Some(pb::TenantLimits {
                    observe_streams: 2,
                    bot_seats: 1,
                    ..Default::default()
                }),
            },
            OPERATOR,
        ))
        .await
        .expect("SetTenantLimits");
    tokio::time::sleep(TENANT_REFRESH + Duration::from_millis(500)).await;
    let mut clients = [first.client().await, second.client().await];
    let game = create_as(&mut clients[0], &key, 31).await;
    let observe = |client: &mut Client, game_id: String| {
        let mut client = client.clone();
        async move {
            match client
                .observe(pb::ObserveRequest {
                    game_id,
                    ..Default::default()
                })
                .await
            {
                Err(status) => Err(status),
                Ok(stream) => {
                    let mut stream = stream.into_inner();
                    match stream.next().await {
                        Some(Ok(_)) => Ok(stream),
                        Some(Err(status)) => Err(status),
                        None => panic!("the stream ended at once"),
                    }
                }
            }
        }
    };
    // Two streams, one per replica; the third, on either, is over the quota.
    let one = observe(&mut clients[0], game.game_id.clone())
        .await
        .expect("a first stream");
    let two = observe(&mut clients[1], game.game_id.clone())
        .await
        .expect("a second stream");
    for client in clients.iter_mut() {
        let refused = observe(client, game.game_id.clone())
            .await
            .expect_err("a third stream");
        assert_eq!(quota_of(&refused), "observe_streams");
    }
    // Closing one frees its place, on whichever replica it was.
    drop(one);
    let deadline = Instant::now() + Duration::from_secs(5);
    let three = loop {
        match observe(&mut clients[1], game.game_id.clone()).await {
            Ok(stream) => break stream,
            Err(status) => {
                assert_eq!(quota_of(&status), "observe_streams");
                assert!(
                    Instant::now() < deadline,
                    "a closed stream's place never freed"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    drop((two, three));

    // Bot seats: one in a running game, then a second refused (at creation or at a hand-over).
    let with_bot = |seed: u64| pb::CreateGameRequest {
        config: Some(pb::GameConfig {
            table: Some(pb::TableConfig {
                bots: vec![pb::BotSeat {
                    seat: 1,
                    kind: pb::BotKind::Random as i32,
                    iterations: 0,
                }],
                ..Default::default()
            }),
            ..medici_config()
        }),
        seed: Some(tabula::games::Seed::from_u64(seed).0.to_vec()),
        ..Default::default()
    };
    let botted = clients[0]
        .create_game(authorized(with_bot(32), &key))
        .await
        .expect("a game with one bot seat")
        .into_inner();
    let refused = clients[1]
        .create_game(authorized(with_bot(33), &key))
        .await
        .expect_err("a second bot seat");
    assert_eq!(quota_of(&refused), "bot_seats");
    let handed = admin
        .hand_seat_to_bot(authorized(
            pb::HandSeatToBotRequest {
                game_id: game.game_id.clone(),
                bot: Some(pb::BotSeat {
                    seat: 1,
                    kind: pb::BotKind::Random as i32,
                    iterations: 0,
                }),
                request_id: String::new(),
            },
            &key,
        ))
        .await
        .expect_err("a hand-over over the quota");
    assert_eq!(quota_of(&handed), "bot_seats");
    // Once the game with the bot has ended, its bot seat is free again.
    admin
        .end_game(authorized(
            pb::EndGameRequest {
                game_id: botted.game_id.clone(),
                reason: "free the bot".into(),
                request_id: String::new(),
            },
            &key,
        ))
        .await
        .expect("ended");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match admin
            .hand_seat_to_bot(authorized(
                pb::HandSeatToBotRequest {
                    game_id: game.game_id.clone(),
                    bot: Some(pb::BotSeat {
                        seat: 1,
                        kind: pb::BotKind::Random as i32,
                        iterations: 0,
                    }),
                    request_id: "hand-1".into(),
                },
                &key,
            ))
            .await
        {
            Ok(_) => break,
            Err(status) => {
                assert_eq!(quota_of(&status), "bot_seats");
                assert!(
                    Instant::now() < deadline,
                    "the ended game's bot seat never freed"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// A tenant's finished game keeps its owner when retention moves it to the archive: the owner's
/// key still reaches it (ExportLog, GetView, ExportLogUnredacted) on the replica that retired it
/// and on a cold one that reads it from the archive alone, and another tenant's key still finds
/// nothing, in the same words as for a missing game.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_archived_game_stays_its_tenants() {
    use tabula::archive::Archive;
    use tabula::service::RetentionOptions;

    let backend = Backend::redis();
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("file://{}", dir.path().display());
    let archive =
        std::sync::Arc::new(Archive::open(&url, Duration::from_secs(5)).expect("an archive"));
    let with_archive = |retention: Option<RetentionOptions>| ServiceOptions {
        archive: Some(archive.clone()),
        retention,
        ..operator_options()
    };
    let retaining = Replica::start_with(
        &backend,
        with_archive(Some(RetentionOptions {
            retain_finished: Some(Duration::from_secs(1)),
            abandon_after: None,
            interval: Duration::from_millis(100),
            batch: 50,
            call_timeout: Duration::from_secs(5),
        })),
    )
    .await;
    let mut admin_client = admin(&retaining).await;
    let alpha = tenant_with_key(&mut admin_client, "alpha", "Alpha Studio").await;
    let beta = tenant_with_key(&mut admin_client, "beta", "Beta Games Ltd").await;
    let mut client = retaining.client().await;
    let game = create_as(&mut client, &alpha, 11).await;
    let mut rng = tabula::games::common::GameRng::from_seed(&tabula::games::Seed::from_u64(11));
    play_random(std::slice::from_mut(&mut client), &game, &mut rng, 2_000).await;
    let finished = export(&mut client, &game.game_id).await;
    assert!(finished.complete);

    let store = backend.store().await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while store
        .read_whole(&game.game_id)
        .await
        .expect("store")
        .is_some()
    {
        assert!(Instant::now() < deadline, "the game was not retired");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let archived = archive
        .get(&game.game_id)
        .await
        .expect("archive")
        .expect("archived");
    assert_eq!(archived.meta.tenant.as_deref(), Some("alpha"));

    let cold = Replica::start_with(&backend, with_archive(None)).await;
    let missing_id = "0123456789abcdef0123456789abcdef";
    for replica in [&retaining, &cold] {
        let mut client = replica.client().await;
        let mut admin_client = admin(replica).await;
        let log = client
            .export_log(authorized(
                pb::ExportLogRequest {
                    narrate: false,
                    game_id: game.game_id.clone(),
                },
                &alpha,
            ))
            .await
            .expect("the owner exports its archived game")
            .into_inner()
            .log
            .expect("a log");
        // As archived: the archive's format 1 does not keep `created_by`.
        assert!(
            log == as_archived(&finished),
            "the owner's export is the game's log"
        );
        client
            .get_view(authorized(
                pb::GetViewRequest {
                    game_id: game.game_id.clone(),
                    ..Default::default()
                },
                &alpha,
            ))
            .await
            .expect("the owner views its archived game");
        let unredacted = admin_client
            .export_log_unredacted(authorized(
                pb::ExportLogUnredactedRequest {
                    game_id: game.game_id.clone(),
                },
                &alpha,
            ))
            .await
            .expect("the owner exports its archived game unredacted")
            .into_inner()
            .log
            .expect("a log");
        assert!(unredacted == log, "an ended game hides nothing");
        let missing = client
            .export_log(authorized(
                pb::ExportLogRequest {
                    narrate: false,
                    game_id: missing_id.into(),
                },
                &beta,
            ))
            .await
            .expect_err("a missing game");
        let refused = client
            .export_log(authorized(
                pb::ExportLogRequest {
                    narrate: false,
                    game_id: game.game_id.clone(),
                },
                &beta,
            ))
            .await
            .expect_err("another tenant's archived game");
        assert_eq!(refused.code(), Code::NotFound, "{refused:?}");
        assert_eq!(
            refused.message(),
            missing.message().replace(missing_id, &game.game_id)
        );
        let refused = admin_client
            .export_log_unredacted(authorized(
                pb::ExportLogUnredactedRequest {
                    game_id: game.game_id.clone(),
                },
                &beta,
            ))
            .await
            .expect_err("another tenant's archived game, unredacted");
        assert_eq!(refused.code(), Code::NotFound, "{refused:?}");
    }
}
