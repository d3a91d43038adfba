//! The operator's API and what comes with it, through real gRPC clients against real replicas:
//! `AdminService.ListGames` filtering and paging across creations and finished games on every
//! store (and the Redis index repairing itself from the games' metas), the operator token's gate
//! (absent without a token, UNAUTHENTICATED without it or with another), `EndGame` (the abort
//! entry, followed by every view, the log and the listing),
//! `--require-operator-for-create`, and the player metadata set at CreateGame, returned by every
//! RPC that describes a game.

use crate::common;

use std::collections::HashSet;
use std::time::{Duration, Instant};

use common::servers::TabulaServe;
use common::*;
use futures::StreamExt;
use tabula::games::Seed;
use tabula::games::common::GameRng;
use tabula::proto::la_strada::v1 as la_strada;
use tabula::proto::manila::v1 as manila;
use tabula::proto::strozzi::v1 as strozzi;
use tabula::proto::v1 as pb;
use tabula::service::{OperatorOptions, ServiceOptions};
use tonic::Code;
use tonic::transport::Channel;

on_every_store!(
    listings_filter_and_page_across_creation_and_finish,
    player_metadata_round_trips,
    end_game_aborts_the_game_and_the_listing_follows,
);

/// Runs each scenario against a single Redis node and a Redis Cluster.
macro_rules! on_redis {
    ($($scenario:ident),+ $(,)?) => {
        mod redis_index {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $scenario() {
                    super::$scenario(&super::Backend::redis()).await;
                }
            )+
        }
        mod redis_cluster_index {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $scenario() {
                    super::$scenario(&super::Backend::redis_cluster()).await;
                }
            )+
        }
    };
}

on_redis!(
    the_index_repairs_itself_from_the_games,
    a_tenants_index_repairs_itself_from_the_games,
);

fn operator_options(required_for_create: bool) -> ServiceOptions {
    ServiceOptions {
        operator: Some(OperatorOptions {
            token: OPERATOR.parse().expect("an operator token"),
            required_for_create,
        }),
        ..test_options()
    }
}

/// One page, as the operator.
async fn list(admin: &mut Admin, request: pb::ListGamesRequest) -> pb::ListGamesResponse {
    admin
        .list_games(authorized(request, OPERATOR))
        .await
        .expect("ListGames")
        .into_inner()
}

/// Every page of a listing from `request.page_token` on, `page_size` games at a time; the games
/// and the number of pages.
async fn list_all(
    admin: &mut Admin,
    request: pb::ListGamesRequest,
    page_size: u32,
) -> (Vec<pb::GameSummary>, usize) {
    let mut games = Vec::new();
    let mut page_token = request.page_token.clone();
    for pages in 1..=1000 {
        let page = list(
            admin,
            pb::ListGamesRequest {
                page_size,
                page_token,
                ..request.clone()
            },
        )
        .await;
        assert!(page.games.len() <= page_size as usize, "a page is bounded");
        games.extend(page.games);
        if page.next_page_token.is_empty() {
            return (games, pages);
        }
        page_token = page.next_page_token;
    }
    panic!("a listing of a few games did not end within 1000 pages");
}

fn ids(games: &[pb::GameSummary]) -> Vec<String> {
    games.iter().map(|game| game.game_id.clone()).collect()
}

fn ids_of<'a>(games: impl IntoIterator<Item = &'a pb::CreateGameResponse>) -> Vec<String> {
    games.into_iter().map(|game| game.game_id.clone()).collect()
}

fn millis(time: &prost_types::Timestamp) -> i64 {
    time.seconds * 1000 + i64::from(time.nanos / 1_000_000)
}

fn strozzi_config(players: u32) -> pb::GameConfig {
    pb::GameConfig {
        game: Some(pb::game_config::Game::Strozzi(strozzi::Config {
            players,
            ..Default::default()
        })),
        ..Default::default()
    }
}

fn manila_config(players: u32) -> pb::GameConfig {
    pb::GameConfig {
        game: Some(pb::game_config::Game::Manila(manila::Config {
            players,
            ..Default::default()
        })),
        ..Default::default()
    }
}

fn la_strada_config(players: u32) -> pb::GameConfig {
    pb::GameConfig {
        game: Some(pb::game_config::Game::LaStrada(la_strada::Config {
            players,
            ..Default::default()
        })),
        ..Default::default()
    }
}

/// Creates a game of each config in turn, a few milliseconds apart so that their creation times
/// (whole milliseconds) differ.
async fn create_apart(
    client: &mut Client,
    configs: Vec<pb::GameConfig>,
    first_seed: u64,
) -> Vec<pb::CreateGameResponse> {
    let mut games = Vec::new();
    for (index, config) in configs.into_iter().enumerate() {
        tokio::time::sleep(Duration::from_millis(3)).await;
        games.push(create(client, config, first_seed + index as u64).await);
    }
    games
}

/// Plays `game` to its end; its final version.
async fn finish(client: &Client, game: &pb::CreateGameResponse, seed: u64) -> u64 {
    let mut rng = GameRng::from_seed(&Seed::from_u64(seed));
    play_random(&mut [client.clone()], game, &mut rng, 10_000).await
}

/// ListGames lists exactly the games the store holds, in creation order either way, filtered by
/// kind, progress and creation time, and pages through them without skipping or repeating one —
/// also when games are created or finish while a listing is under way.
async fn listings_filter_and_page_across_creation_and_finish(backend: &Backend) {
    let replica = Replica::start_with(backend, operator_options(false)).await;
    let mut client = replica.client().await;
    let mut admin = admin(&replica).await;

    let everything = pb::ListGamesRequest::default();
    assert!(list(&mut admin, everything.clone()).await.games.is_empty());

    // 0 medici, 1 strozzi, 2 manila, 3 la strada, 4 medici, 5 medici, 6 strozzi.
    let games = create_apart(
        &mut client,
        vec![
            medici_config(),
            strozzi_config(3),
            manila_config(3),
            la_strada_config(2),
            medici_config(),
            medici_config(),
            strozzi_config(4),
        ],
        10,
    )
    .await;
    let newest_first: Vec<String> = ids_of(games.iter().rev());
    let oldest_first: Vec<String> = ids_of(&games);

    let listed = list(&mut admin, everything.clone()).await;
    assert_eq!(ids(&listed.games), newest_first, "newest first by default");
    assert!(listed.next_page_token.is_empty(), "one page holds them all");
    for (summary, game) in listed.games.iter().rev().zip(&games) {
        assert_eq!(summary.game, game.game);
        assert_eq!(summary.rules_version, game.rules_version);
        assert_eq!(summary.seat_count as usize, game.seats.len());
        assert_eq!(summary.progress, pb::GameProgress::Running as i32);
        assert_eq!(summary.version, 0);
        assert_eq!(summary.finish_time, None);
        assert!(summary.players.is_empty(), "created without players");
    }
    let create_times: Vec<i64> = listed
        .games
        .iter()
        .rev()
        .map(|game| millis(game.create_time.as_ref().expect("a creation time")))
        .collect();
    assert!(
        create_times.windows(2).all(|pair| pair[0] < pair[1]),
        "creation times follow creation order: {create_times:?}"
    );

    let oldest = pb::ListGamesRequest {
        order: pb::ListGamesOrder::OldestFirst as i32,
        ..everything.clone()
    };
    assert_eq!(
        ids(&list(&mut admin, oldest.clone()).await.games),
        oldest_first
    );

    // Pages of two, either way: the same games, in the same order, each once.
    let (paged, pages) = list_all(&mut admin, everything.clone(), 2).await;
    assert_eq!(ids(&paged), newest_first);
    assert_eq!(pages, 4);
    let (paged, _) = list_all(&mut admin, oldest.clone(), 3).await;
    assert_eq!(ids(&paged), oldest_first);

    // By kind.
    let medici = pb::ListGamesRequest {
        game: pb::GameKind::MediciVsStrozzi as i32,
        ..everything.clone()
    };
    let medici_games = ids_of([&games[5], &games[4], &games[0]]);
    assert_eq!(
        ids(&list(&mut admin, medici.clone()).await.games),
        medici_games
    );
    let (paged, _) = list_all(&mut admin, medici.clone(), 1).await;
    assert_eq!(ids(&paged), medici_games);

    // By creation time: [created_from, created_until).
    let at = |ms: i64| prost_types::Timestamp {
        seconds: ms / 1000,
        nanos: ((ms % 1000) * 1_000_000) as i32,
    };
    let window = pb::ListGamesRequest {
        created_from: Some(at(create_times[2])),
        created_until: Some(at(create_times[5])),
        ..everything.clone()
    };
    assert_eq!(
        ids(&list(&mut admin, window.clone()).await.games),
        ids_of([&games[4], &games[3], &games[2]])
    );
    let (paged, _) = list_all(
        &mut admin,
        pb::ListGamesRequest {
            order: pb::ListGamesOrder::OldestFirst as i32,
            ..window
        },
        2,
    )
    .await;
    assert_eq!(ids(&paged), ids_of([&games[2], &games[3], &games[4]]));

    // Two medici games end: the listing says so, with the final version and when.
    let before_finish = tabula::store::unix_millis() as i64;
    let final_versions = [
        finish(&client, &games[0], 100).await,
        finish(&client, &games[4], 104).await,
    ];
    let finished = pb::ListGamesRequest {
        progress: pb::GameProgress::Finished as i32,
        ..everything.clone()
    };
    let listed = list(&mut admin, finished.clone()).await;
    assert_eq!(ids(&listed.games), ids_of([&games[4], &games[0]]));
    for (summary, version) in listed.games.iter().zip(final_versions.iter().rev()) {
        assert_eq!(summary.progress, pb::GameProgress::Finished as i32);
        assert_eq!(summary.version, *version);
        let finished_at = millis(summary.finish_time.as_ref().expect("a finish time"));
        assert!(
            finished_at >= before_finish,
            "finished after the test began"
        );
    }
    let running = pb::ListGamesRequest {
        progress: pb::GameProgress::Running as i32,
        ..everything.clone()
    };
    let running_ids = ids_of([&games[6], &games[5], &games[3], &games[2], &games[1]]);
    assert_eq!(
        ids(&list(&mut admin, running.clone()).await.games),
        running_ids
    );
    let (paged, _) = list_all(&mut admin, running.clone(), 2).await;
    assert_eq!(ids(&paged), running_ids);
    let unfiltered = list(&mut admin, everything.clone()).await;
    assert_eq!(
        ids(&unfiltered.games),
        newest_first,
        "finished games stay listed"
    );
    let finished_medici = pb::ListGamesRequest {
        progress: pb::GameProgress::Finished as i32,
        ..medici.clone()
    };
    assert_eq!(
        ids(&list(&mut admin, finished_medici).await.games),
        ids_of([&games[4], &games[0]])
    );

    // A game that finishes while a listing of running games is under way is not listed by the
    // later pages.
    let running_oldest = pb::ListGamesRequest {
        order: pb::ListGamesOrder::OldestFirst as i32,
        page_size: 2,
        ..running.clone()
    };
    let first = list(&mut admin, running_oldest.clone()).await;
    assert_eq!(ids(&first.games), ids_of([&games[1], &games[2]]));
    finish(&client, &games[5], 105).await;
    let (rest, _) = list_all(
        &mut admin,
        pb::ListGamesRequest {
            page_token: first.next_page_token,
            ..running_oldest.clone()
        },
        2,
    )
    .await;
    assert_eq!(ids(&rest), ids_of([&games[3], &games[6]]));

    // A game created while a listing is under way: an oldest-first listing reaches it at its
    // end; a newest-first one has already passed its place (it is newer than the first page).
    let first_oldest = list(
        &mut admin,
        pb::ListGamesRequest {
            page_size: 3,
            ..oldest.clone()
        },
    )
    .await;
    let first_newest = list(
        &mut admin,
        pb::ListGamesRequest {
            page_size: 3,
            ..everything.clone()
        },
    )
    .await;
    tokio::time::sleep(Duration::from_millis(3)).await;
    let late = create(&mut client, la_strada_config(3), 200).await;
    let (rest, _) = list_all(
        &mut admin,
        pb::ListGamesRequest {
            page_token: first_oldest.next_page_token,
            ..oldest.clone()
        },
        3,
    )
    .await;
    let mut listed = ids(&first_oldest.games);
    listed.extend(ids(&rest));
    let mut expected = oldest_first.clone();
    expected.push(late.game_id.clone());
    assert_eq!(listed, expected);
    let (rest, _) = list_all(
        &mut admin,
        pb::ListGamesRequest {
            page_token: first_newest.next_page_token,
            ..everything.clone()
        },
        3,
    )
    .await;
    let mut listed = ids(&first_newest.games);
    listed.extend(ids(&rest));
    assert_eq!(listed, newest_first);
    let all: HashSet<String> = ids(&list(&mut admin, everything.clone()).await.games)
        .into_iter()
        .collect();
    assert!(all.contains(&late.game_id) && all.len() == 8);

    // What a listing refuses, with INVALID_ARGUMENT.
    let second_page = list(
        &mut admin,
        pb::ListGamesRequest {
            page_size: 1,
            ..everything.clone()
        },
    )
    .await
    .next_page_token;
    let refused = |request: pb::ListGamesRequest| {
        let mut admin = admin.clone();
        async move {
            admin
                .list_games(authorized(request, OPERATOR))
                .await
                .expect_err("refused")
        }
    };
    for (request, mentions) in [
        (
            pb::ListGamesRequest {
                page_token: "not-a-token".into(),
                ..everything.clone()
            },
            "page_token",
        ),
        (
            pb::ListGamesRequest {
                page_token: second_page.clone(),
                ..finished.clone()
            },
            "other filters",
        ),
        (
            pb::ListGamesRequest {
                created_from: Some(at(create_times[3])),
                created_until: Some(at(create_times[3])),
                ..everything.clone()
            },
            "created_from must be before created_until",
        ),
        (
            pb::ListGamesRequest {
                game: 99,
                ..everything.clone()
            },
            "GameKind",
        ),
        (
            pb::ListGamesRequest {
                created_from: Some(prost_types::Timestamp {
                    seconds: -5,
                    nanos: 0,
                }),
                ..everything.clone()
            },
            "created_from",
        ),
    ] {
        let status = refused(request).await;
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(status.message().contains(mentions), "{status:?}");
    }
    // A page size beyond the maximum is served (capped), not refused.
    let huge = list(
        &mut admin,
        pb::ListGamesRequest {
            page_size: 1_000_000,
            ..everything
        },
    )
    .await;
    assert_eq!(huge.games.len(), 8);
}

/// Player metadata set at CreateGame comes back from CreateGame, GetView (any viewer, any
/// replica), Observe's first message, ExportLog and ListGames; games without it keep working
/// with none; entries beyond the limits are refused with INVALID_ARGUMENT, and nothing is
/// created.
async fn player_metadata_round_trips(backend: &Backend) {
    let (a, b) = (
        Replica::start_with(backend, operator_options(false)).await,
        Replica::start_with(backend, operator_options(false)).await,
    );
    let mut client = a.client().await;
    let mut other = b.client().await;
    let mut admin = admin(&a).await;

    let players = vec![
        pb::Player {
            seat: 1,
            display_name: "Filippo Strozzi".into(),
            external_id: "user-7f3a".into(),
        },
        pb::Player {
            seat: 0,
            display_name: "Cosimo de’ Medici 🎲".into(),
            external_id: String::new(),
        },
    ];
    let mut expected = players.clone();
    expected.reverse(); // in seat order
    let game = client
        .create_game(pb::CreateGameRequest {
            config: Some(medici_config()),
            seed: Some(Seed::from_u64(3).0.to_vec()),
            players,
            rules_version: String::new(),
            webhooks: Vec::new(),
            ..Default::default()
        })
        .await
        .expect("CreateGame with players")
        .into_inner();
    assert_eq!(game.players, expected, "CreateGameResponse");

    for client in [&mut client, &mut other] {
        assert_eq!(
            spectator_view(client, &game.game_id).await.players,
            expected
        );
        let seat = seat_view(client, &game.game_id, &token(&game, 1)).await;
        assert_eq!(seat.players, expected, "GetView as a seat");
        assert_eq!(export(client, &game.game_id).await.players, expected);
    }

    // Observe: on the first message, not repeated on the next ones.
    let mut stream = observe(&mut other, &game.game_id, None).await;
    let first = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("a first message in time")
        .expect("a first message")
        .expect("ok");
    assert_eq!(first.players, expected, "Observe's first message");
    let mine = seat_view(&mut client, &game.game_id, &token(&game, 0)).await;
    let to_act = mine
        .status
        .and_then(|status| status.to_act)
        .expect("someone acts");
    let acting = seat_view(&mut client, &game.game_id, &token(&game, to_act)).await;
    let mut rng = GameRng::from_seed(&Seed::from_u64(9));
    client
        .act(authorized(
            pb::ActRequest {
                narrate: false,
                game_id: game.game_id.clone(),
                action: Some(choose(&acting.legal_actions, &mut rng)),
                expected_version: Some(acting.version),
                request_id: "first".into(),
                omit_view: false,
            },
            &token(&game, to_act),
        ))
        .await
        .expect("Act");
    let second = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("a second message in time")
        .expect("a second message")
        .expect("ok");
    assert_eq!(second.version, 1);
    assert!(second.players.is_empty(), "sent once, on the first message");

    let listed = list(&mut admin, pb::ListGamesRequest::default()).await;
    assert_eq!(listed.games.len(), 1);
    assert_eq!(listed.games[0].players, expected, "ListGames");

    // Without players: none anywhere, and the game plays as always.
    let plain = create(&mut client, medici_config(), 4).await;
    assert!(plain.players.is_empty());
    assert!(
        spectator_view(&mut other, &plain.game_id)
            .await
            .players
            .is_empty()
    );
    assert!(export(&mut other, &plain.game_id).await.players.is_empty());
    finish(&other, &plain, 44).await;
    assert!(export(&mut client, &plain.game_id).await.complete);

    // Refusals: INVALID_ARGUMENT naming the entry and the limit, quoting nothing that was sent.
    let secret = "do-not-echo-me";
    let long_name = format!("{secret}{}", "x".repeat(64));
    let long_id = format!("{secret}{}", "y".repeat(128));
    let cases: Vec<(Vec<pb::Player>, &str)> = vec![
        (
            vec![pb::Player {
                seat: 2,
                display_name: secret.into(),
                external_id: String::new(),
            }],
            "numbered 0 to 1",
        ),
        (
            vec![
                pb::Player {
                    seat: 0,
                    display_name: secret.into(),
                    external_id: String::new(),
                },
                pb::Player {
                    seat: 0,
                    display_name: "again".into(),
                    external_id: String::new(),
                },
            ],
            "already described",
        ),
        (
            vec![pb::Player {
                seat: 0,
                display_name: long_name,
                external_id: String::new(),
            }],
            "the limit is 64",
        ),
        (
            vec![pb::Player {
                seat: 1,
                display_name: String::new(),
                external_id: long_id,
            }],
            "the limit is 128 bytes",
        ),
        (
            vec![pb::Player {
                seat: 0,
                display_name: format!("{secret}\u{0}"),
                external_id: String::new(),
            }],
            "U+0000",
        ),
        (
            vec![pb::Player {
                seat: 0,
                display_name: String::new(),
                external_id: format!("{secret} spaced"),
            }],
            "no spaces",
        ),
        (
            vec![pb::Player {
                seat: 1,
                display_name: String::new(),
                external_id: String::new(),
            }],
            "neither display_name nor external_id",
        ),
    ];
    for (players, mentions) in cases {
        let status = client
            .create_game(pb::CreateGameRequest {
                config: Some(medici_config()),
                seed: None,
                players,
                rules_version: String::new(),
                webhooks: Vec::new(),
                ..Default::default()
            })
            .await
            .expect_err("refused");
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(
            status.message().contains(mentions),
            "{mentions}: {status:?}"
        );
        assert!(status.message().contains("CreateGameRequest.players["));
        assert!(!status.message().contains(secret), "{status:?}");
    }
    let listed = list(&mut admin, pb::ListGamesRequest::default()).await;
    assert_eq!(listed.games.len(), 2, "refused creations stored nothing");
}

/// A plain connection to the test's Redis (node or cluster), for looking at and tampering with
/// the index as a crashed replica would have left it. (`::redis`: the scenario modules above are
/// named `redis` too.)
enum Raw {
    Single(::redis::aio::MultiplexedConnection),
    Cluster(::redis::cluster_async::ClusterConnection),
}

impl Raw {
    async fn open(backend: &Backend) -> Raw {
        match backend {
            Backend::Redis(server) => Raw::Single(
                ::redis::Client::open(server.url())
                    .expect("url")
                    .get_multiplexed_async_connection()
                    .await
                    .expect("connection"),
            ),
            Backend::RedisCluster(cluster) => Raw::Cluster(
                ::redis::cluster::ClusterClient::new(cluster.urls())
                    .expect("cluster client")
                    .get_async_connection()
                    .await
                    .expect("cluster connection"),
            ),
            Backend::Memory(_) => unreachable!("a Redis backend"),
        }
    }

    async fn run<T: ::redis::FromRedisValue>(&mut self, command: &::redis::Cmd) -> T {
        match self {
            Raw::Single(connection) => command.query_async(connection).await,
            Raw::Cluster(connection) => command.query_async(connection).await,
        }
        .expect("a Redis command")
    }

    async fn in_set(&mut self, kind: pb::GameKind, finished: bool, game_id: &str) -> bool {
        let shard = tabula::store::redis::keys::shard_of(game_id);
        let score: Option<f64> = self
            .run(
                ::redis::cmd("ZSCORE")
                    .arg(tabula::store::redis::keys::index_set(shard, kind, finished))
                    .arg(game_id),
            )
            .await;
        score.is_some()
    }

    async fn intent(&mut self, game_id: &str) -> Option<String> {
        let shard = tabula::store::redis::keys::shard_of(game_id);
        self.run(
            ::redis::cmd("HGET")
                .arg(tabula::store::redis::keys::finishing_intents(shard))
                .arg(game_id),
        )
        .await
    }

    async fn set_intent(&mut self, game_id: &str, written_ms: u64) {
        let shard = tabula::store::redis::keys::shard_of(game_id);
        let _: i64 = self
            .run(
                ::redis::cmd("HSET")
                    .arg(tabula::store::redis::keys::finishing_intents(shard))
                    .arg(game_id)
                    .arg(format!("{written_ms}:0badc0de")),
            )
            .await;
    }

    /// Moves `game_id`'s index entry to the set of (kind, `finished`), scored `created_ms`.
    async fn misfile(
        &mut self,
        game_id: &str,
        kind: pb::GameKind,
        finished: bool,
        created_ms: u64,
    ) {
        let shard = tabula::store::redis::keys::shard_of(game_id);
        for progress in [false, true] {
            let _: i64 = self
                .run(
                    ::redis::cmd("ZREM")
                        .arg(tabula::store::redis::keys::index_set(shard, kind, progress))
                        .arg(game_id),
                )
                .await;
        }
        let _: i64 = self
            .run(
                ::redis::cmd("ZADD")
                    .arg(tabula::store::redis::keys::index_set(shard, kind, finished))
                    .arg(created_ms)
                    .arg(game_id),
            )
            .await;
    }
}

/// A tenant's own index (`src/store/redis/index.rs`) is repaired by its listings as the shards'
/// are: an entry in the wrong progress set is moved, and another tenant's game found in it is
/// taken out (on a Cluster the two tenants' sets are in two slots) and put in its own tenant's.
async fn a_tenants_index_repairs_itself_from_the_games(backend: &Backend) {
    use tabula::store::redis::keys::tenant_index_set;
    use tabula::store::{GameFilter, GameMeta, ListOrder, ListQuery};
    let store = backend.store().await;
    let mut raw = Raw::open(backend).await;
    let kind = pb::GameKind::MediciVsStrozzi;
    let owned = |id: &str, tenant: &str, created_at_ms: u64| GameMeta {
        game_id: id.to_owned(),
        kind,
        config: Vec::new(),
        rules_version: "rules-1".into(),
        seed: Seed::from_u64(7),
        token_hashes: vec![[1; 32], [2; 32]],
        created_at_ms,
        players: Vec::new(),
        created_by: tabula::RELEASE.to_owned(),
        tenant: Some(tenant.to_owned()),
        webhooks: Vec::new(),
        seating: Vec::new(),
        signed_commitment: Vec::new(),
        creation: Vec::new(),
    };
    for (id, tenant, at) in [
        ("a", "alpha", 1_000),
        ("b", "alpha", 1_001),
        ("c", "beta", 1_002),
    ] {
        store.create(&owned(id, tenant, at)).await.expect("create");
    }
    let score = |tenant: &str, finished: bool, id: &str| {
        ::redis::cmd("ZSCORE")
            .arg(tenant_index_set(tenant, kind, finished))
            .arg(id)
            .clone()
    };
    // Game a filed as finished, and beta's game c in alpha's running set.
    let _: i64 = raw
        .run(
            ::redis::cmd("ZREM")
                .arg(tenant_index_set("alpha", kind, false))
                .arg("a"),
        )
        .await;
    let _: i64 = raw
        .run(
            ::redis::cmd("ZADD")
                .arg(tenant_index_set("alpha", kind, true))
                .arg(1_000)
                .arg("a"),
        )
        .await;
    let _: i64 = raw
        .run(
            ::redis::cmd("ZADD")
                .arg(tenant_index_set("alpha", kind, false))
                .arg(1_002)
                .arg("c"),
        )
        .await;

    let page = store
        .list_games(&ListQuery {
            filter: GameFilter {
                tenant: Some("alpha".into()),
                ..GameFilter::default()
            },
            order: ListOrder::OldestFirst,
            after: None,
            limit: 10,
        })
        .await
        .expect("alpha's listing");
    let listed: Vec<&str> = page.games.iter().map(|g| g.meta.game_id.as_str()).collect();
    assert_eq!(listed, ["a", "b"], "alpha's games only");
    let at = |found: Option<f64>| found.map(|score| score as u64);
    assert_eq!(
        at(raw.run(&score("alpha", false, "a")).await),
        Some(1_000),
        "a moved back"
    );
    assert_eq!(at(raw.run(&score("alpha", true, "a")).await), None);
    assert_eq!(
        at(raw.run(&score("alpha", false, "c")).await),
        None,
        "c taken out"
    );
    assert_eq!(
        at(raw.run(&score("beta", false, "c")).await),
        Some(1_002),
        "c in beta's"
    );
}

/// The Redis game index is derived data that a listing repairs from the games' metas: a game whose
/// final append landed but whose replica died before moving it in the index (its finishing intent
/// left behind) is listed as finished and moved; an entry in the wrong set is corrected; entries
/// of games that never came to exist are skipped, and removed once they are old; intents of
/// appends that never landed are dropped once they are old.
async fn the_index_repairs_itself_from_the_games(backend: &Backend) {
    let replica = Replica::start_with(backend, operator_options(false)).await;
    let mut client = replica.client().await;
    let mut admin = admin(&replica).await;
    let mut raw = Raw::open(backend).await;
    let medici = pb::GameKind::MediciVsStrozzi;

    let ended = create(&mut client, medici_config(), 1).await;
    tokio::time::sleep(Duration::from_millis(3)).await;
    let running = create(&mut client, medici_config(), 2).await;
    let final_version = finish(&client, &ended, 11).await;
    assert!(
        raw.in_set(medici, true, &ended.game_id).await,
        "moved on finishing"
    );
    assert!(!raw.in_set(medici, false, &ended.game_id).await);
    assert_eq!(
        raw.intent(&ended.game_id).await,
        None,
        "the intent is done with"
    );
    let created_ms = |summary: &pb::GameSummary| {
        millis(summary.create_time.as_ref().expect("a creation time")) as u64
    };
    let everything = list(&mut admin, pb::ListGamesRequest::default())
        .await
        .games;
    let ended_created = created_ms(&everything[1]);

    // The replica died after the final append, before the move: the entry is still with the
    // running games, the intent is there.
    raw.misfile(&ended.game_id, medici, false, ended_created)
        .await;
    raw.set_intent(&ended.game_id, tabula::store::unix_millis())
        .await;
    let finished = pb::ListGamesRequest {
        progress: pb::GameProgress::Finished as i32,
        ..Default::default()
    };
    let listed = list(&mut admin, finished.clone()).await.games;
    assert_eq!(ids(&listed), [ended.game_id.as_str()]);
    assert_eq!(listed[0].version, final_version);
    assert!(raw.in_set(medici, true, &ended.game_id).await, "repaired");
    assert!(!raw.in_set(medici, false, &ended.game_id).await);
    assert_eq!(raw.intent(&ended.game_id).await, None);

    // An entry in the wrong set without an intent: never listed under the wrong progress, and
    // put right by the listing that finds it.
    raw.misfile(&ended.game_id, medici, false, ended_created)
        .await;
    let running_only = pb::ListGamesRequest {
        progress: pb::GameProgress::Running as i32,
        ..Default::default()
    };
    assert_eq!(
        ids(&list(&mut admin, running_only.clone()).await.games),
        [running.game_id.as_str()]
    );
    assert!(raw.in_set(medici, true, &ended.game_id).await, "repaired");
    assert_eq!(
        ids(&list(&mut admin, finished).await.games),
        [ended.game_id.as_str()]
    );

    // Entries of games that do not exist: skipped; removed once old enough that no creation can
    // still be under way.
    let now = tabula::store::unix_millis();
    raw.misfile("ghost-old", medici, false, now - 3_600_000)
        .await;
    raw.misfile("ghost-new", medici, false, now - 1_000).await;
    let listed = list(&mut admin, pb::ListGamesRequest::default())
        .await
        .games;
    assert_eq!(
        ids(&listed),
        [running.game_id.clone(), ended.game_id.clone()]
    );
    assert!(
        !raw.in_set(medici, false, "ghost-old").await,
        "a dangling entry is removed"
    );
    assert!(
        raw.in_set(medici, false, "ghost-new").await,
        "a game perhaps still being created is left alone"
    );

    // Intents of appends that did not end the game: a recent one is left (its append may still
    // land), an old one is dropped; the game stays listed as running either way.
    raw.set_intent(&running.game_id, now - 3_600_000).await;
    let listed = list(&mut admin, running_only.clone()).await.games;
    assert_eq!(ids(&listed), [running.game_id.as_str()]);
    assert_eq!(
        raw.intent(&running.game_id).await,
        None,
        "an old intent is dropped"
    );
    raw.set_intent(&running.game_id, now).await;
    assert_eq!(
        ids(&list(&mut admin, running_only).await.games),
        [running.game_id.as_str()]
    );
    assert!(
        raw.intent(&running.game_id).await.is_some(),
        "a recent one is kept"
    );
    assert!(raw.in_set(medici, false, &running.game_id).await);
}

/// Without the operator token, nothing of the operator's API is available: UNAUTHENTICATED with
/// a message that says what to send, whether the token is missing, wrong, or a seat's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_api_refuses_callers_without_the_token() {
    let backend = Backend::memory();
    let replica = Replica::start_with(&backend, operator_options(false)).await;
    let mut client = replica.client().await;
    let mut admin = admin(&replica).await;
    // Creating games needs no token unless the server requires it.
    let game = create(&mut client, medici_config(), 1).await;

    let seat_token = token(&game, 0);
    for (credentials, what) in [
        (None, "none"),
        (Some("op_test_0123456789abcdeX"), "another token"),
        (Some(seat_token.as_str()), "a seat token"),
    ] {
        fn request<T>(message: T, credentials: Option<&str>) -> tonic::Request<T> {
            match credentials {
                Some(token) => authorized(message, token),
                None => tonic::Request::new(message),
            }
        }
        let status = admin
            .list_games(request(pb::ListGamesRequest::default(), credentials))
            .await
            .expect_err("refused");
        assert_eq!(status.code(), Code::Unauthenticated, "{what}: {status:?}");
        assert!(
            status.message().contains("operator token")
                && status.message().contains("TABULA_OPERATOR_TOKEN"),
            "{what}: {status:?}"
        );
        let status = admin
            .end_game(request(
                pb::EndGameRequest {
                    game_id: game.game_id.clone(),
                    reason: "test".into(),
                    ..Default::default()
                },
                credentials,
            ))
            .await
            .expect_err("refused");
        assert_eq!(status.code(), Code::Unauthenticated, "{what}: {status:?}");
    }
    let listed = list(&mut admin, pb::ListGamesRequest::default()).await;
    assert_eq!(ids(&listed.games), [game.game_id]);
}

/// Without an operator token configured the operator's API is not there at all: UNIMPLEMENTED,
/// not in reflection, unknown to health checking. With one it is in both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_api_is_absent_without_a_configured_token() {
    let backend = Backend::memory();
    let without = Replica::start(&backend).await;
    let with = Replica::start_with(&backend, operator_options(false)).await;

    let status = admin(&without)
        .await
        .list_games(authorized(pb::ListGamesRequest::default(), OPERATOR))
        .await
        .expect_err("not served");
    assert_eq!(status.code(), Code::Unimplemented, "{status:?}");

    for (replica, served) in [(&without, false), (&with, true)] {
        let channel = Channel::from_shared(format!("http://{}", replica.address))
            .expect("url")
            .connect()
            .await
            .expect("connect");
        assert_eq!(
            reflected_services(channel.clone())
                .await
                .contains("tabula.v1.AdminService"),
            served
        );
        let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let answer = health
                .check(tonic_health::pb::HealthCheckRequest {
                    service: "tabula.v1.AdminService".into(),
                })
                .await;
            match answer {
                Err(status) if !served => {
                    assert_eq!(status.code(), Code::NotFound, "{status:?}");
                    break;
                }
                Ok(answer)
                    if served
                        && answer.get_ref().status
                            == tonic_health::pb::health_check_response::ServingStatus::Serving
                                as i32 =>
                {
                    break;
                }
                other => assert!(Instant::now() < deadline, "health: {other:?}"),
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The services reflection lists.
async fn reflected_services(channel: Channel) -> HashSet<String> {
    use tonic_reflection::pb::v1;
    let request = v1::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(v1::server_reflection_request::MessageRequest::ListServices(
            String::new(),
        )),
    };
    let mut reflection = v1::server_reflection_client::ServerReflectionClient::new(channel);
    let mut responses = reflection
        .server_reflection_info(futures::stream::iter([request]))
        .await
        .expect("reflection")
        .into_inner();
    let response = responses.next().await.expect("an answer").expect("ok");
    let Some(v1::server_reflection_response::MessageResponse::ListServicesResponse(list)) =
        response.message_response
    else {
        panic!("unexpected reflection answer");
    };
    let names: HashSet<String> = list.service.into_iter().map(|s| s.name).collect();
    assert!(names.contains("tabula.v1.GameService"), "{names:?}");
    names
}

/// EndGame refuses what it cannot record (a missing, long or multi-line reason, a malformed id)
/// and games it cannot end (unknown, already ended), each with its code, leaving the game alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn end_game_refuses_what_it_cannot_do() {
    let backend = Backend::memory();
    let replica = Replica::start_with(&backend, operator_options(false)).await;
    let mut client = replica.client().await;
    let admin = admin(&replica).await;
    let running = create(&mut client, medici_config(), 1).await;
    let ended = create(&mut client, medici_config(), 2).await;
    finish(&client, &ended, 3).await;

    let end = |game_id: &str, reason: String, request_id: String| {
        let mut admin = admin.clone();
        let request = pb::EndGameRequest {
            game_id: game_id.to_owned(),
            reason,
            request_id,
        };
        async move {
            admin
                .end_game(authorized(request, OPERATOR))
                .await
                .expect_err("not ended")
        }
    };
    let running_id = running.game_id.as_str();
    for (game_id, reason, request_id, code, mentions) in [
        (
            running_id,
            String::new(),
            "",
            Code::InvalidArgument,
            "reason is required",
        ),
        (
            running_id,
            "x".repeat(257),
            "",
            Code::InvalidArgument,
            "the limit is 256 bytes",
        ),
        (
            running_id,
            "a\nb".into(),
            "",
            Code::InvalidArgument,
            "control character",
        ),
        (
            running_id,
            "left".into(),
            &"r".repeat(129),
            Code::InvalidArgument,
            "request_id",
        ),
        (
            "no such game!",
            "left".into(),
            "",
            Code::InvalidArgument,
            "not a game id",
        ),
        (
            "00000000000000000000000000000000",
            "left".into(),
            "",
            Code::NotFound,
            "not found",
        ),
        (
            ended.game_id.as_str(),
            "left".into(),
            "",
            Code::FailedPrecondition,
            "already ended",
        ),
    ] {
        let status = end(game_id, reason, request_id.to_owned()).await;
        assert_eq!(status.code(), code, "{status:?}");
        assert!(
            status.message().contains(mentions),
            "{mentions}: {status:?}"
        );
    }
    let view = spectator_view(&mut client, &running.game_id).await;
    assert_eq!(view.version, 0, "the game was left as it is");
    assert!(!view.status.expect("status").finished);
}

/// EndGame appends the abort entry: the game ends with no winners and the reason, everyone sees
/// it (status, log, streams), a retry with the same request id answers the same, and the listing
/// moves the game to the finished ones.
async fn end_game_aborts_the_game_and_the_listing_follows(backend: &Backend) {
    let (a, b) = (
        Replica::start_with(backend, operator_options(false)).await,
        Replica::start_with(backend, operator_options(false)).await,
    );
    let mut client = a.client().await;
    let mut other = b.client().await;
    let mut admin = admin(&a).await;
    let doomed = create(&mut client, medici_config(), 1).await;
    tokio::time::sleep(Duration::from_millis(3)).await;
    let spared = create(&mut client, medici_config(), 2).await;
    // A move first, through the other replica: the abort follows it.
    let mut rng = GameRng::from_seed(&Seed::from_u64(5));
    let to_act = doomed
        .status
        .clone()
        .and_then(|s| s.to_act)
        .expect("someone acts");
    let seat = seat_view(&mut other, &doomed.game_id, &token(&doomed, to_act)).await;
    other
        .act(authorized(
            pb::ActRequest {
                narrate: false,
                game_id: doomed.game_id.clone(),
                action: Some(choose(&seat.legal_actions, &mut rng)),
                expected_version: Some(0),
                request_id: "first".into(),
                omit_view: false,
            },
            &token(&doomed, to_act),
        ))
        .await
        .expect("Act");
    let mut stream = observe(&mut other, &doomed.game_id, Some(1)).await;

    let request = pb::EndGameRequest {
        game_id: doomed.game_id.clone(),
        reason: "a player left the table".into(),
        request_id: "end-1".into(),
    };
    let ended = admin
        .end_game(authorized(request.clone(), OPERATOR))
        .await
        .expect("EndGame")
        .into_inner();
    assert_eq!(ended.version, 2, "after the move that got in first");
    let status = ended.status.expect("a status");
    assert!(status.finished);
    assert_eq!(status.ending, pb::GameEnding::Aborted as i32);
    assert_eq!(status.abort_reason, "a player left the table");
    assert!(status.winners.is_empty() && status.to_act.is_none());

    let retried = admin
        .end_game(authorized(request, OPERATOR))
        .await
        .expect("a retry")
        .into_inner();
    assert_eq!(retried.version, 2, "ended once");
    assert_eq!(
        retried.status.as_ref().map(|s| s.ending),
        Some(status.ending)
    );

    // Everyone sees it: the other replica's view, the log (complete now), the stream's last message.
    let view = spectator_view(&mut other, &doomed.game_id).await;
    assert_eq!(view.version, 2);
    assert_eq!(view.status.as_ref(), Some(&status));
    let log = export(&mut other, &doomed.game_id).await;
    assert!(log.complete);
    let abort = log.entries.last().expect("the abort entry");
    assert!(abort.system, "appended by the server");
    let mut last = None;
    let deadline = Instant::now() + Duration::from_secs(10);
    while let Ok(Some(message)) = tokio::time::timeout_at(deadline.into(), stream.next()).await {
        last = Some(message.expect("a message"));
    }
    let last = last.expect("the stream reached the abort");
    assert_eq!(last.version, 2);
    assert!(last.action.expect("the abort").system);

    let finished = pb::ListGamesRequest {
        progress: pb::GameProgress::Finished as i32,
        ..Default::default()
    };
    let listed = list(&mut admin, finished).await.games;
    assert_eq!(ids(&listed), [doomed.game_id.as_str()]);
    assert_eq!(listed[0].version, 2);
    assert!(listed[0].finish_time.is_some());
    let running = pb::ListGamesRequest {
        progress: pb::GameProgress::Running as i32,
        ..Default::default()
    };
    assert_eq!(
        ids(&list(&mut admin, running).await.games),
        [spared.game_id.as_str()]
    );
}

/// With --require-operator-for-create only the operator creates games; seats then play with
/// their own tokens as always.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_operator_creates_games_when_required() {
    let backend = Backend::memory();
    let replica = Replica::start_with(&backend, operator_options(true)).await;
    let mut client = replica.client().await;
    let request = || pb::CreateGameRequest {
        config: Some(medici_config()),
        seed: None,
        ..Default::default()
    };

    let status = client.create_game(request()).await.expect_err("no token");
    assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");
    assert!(
        status.message().contains("--require-operator-for-create"),
        "{status:?}"
    );
    let status = client
        .create_game(authorized(request(), "op_test_0123456789abcdeX"))
        .await
        .expect_err("another token");
    assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");

    let game = client
        .create_game(authorized(request(), OPERATOR))
        .await
        .expect("the operator creates")
        .into_inner();
    // The operator's token is no seat; the seats' tokens work as always.
    let status = client
        .get_view(authorized(
            pb::GetViewRequest {
                narrate: false,
                game_id: game.game_id.clone(),
                version: None,
                min_version: None,
                omit_view: false,
            },
            OPERATOR,
        ))
        .await
        .expect_err("no seat");
    assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");
    let seat = seat_view(&mut client, &game.game_id, &token(&game, 0)).await;
    assert_eq!(seat.seat, Some(0));
    assert_eq!(spectator_view(&mut client, &game.game_id).await.version, 0);
}

/// The real binary takes the token from the environment (as a deployment passes a secret) and
/// refuses to start when --require-operator-for-create has no token to require.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tabula_serve_takes_the_operator_token_from_the_environment() {
    let server = TabulaServe::start_with_env(
        &["--require-operator-for-create"],
        &[("TABULA_OPERATOR_TOKEN", OPERATOR)],
    );
    let mut client = server.client().await;
    let mut admin = admin_at(&server.url()).await;
    let status = client
        .create_game(pb::CreateGameRequest {
            config: Some(medici_config()),
            ..Default::default()
        })
        .await
        .expect_err("no token");
    assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");
    let game = client
        .create_game(authorized(
            pb::CreateGameRequest {
                config: Some(medici_config()),
                ..Default::default()
            },
            OPERATOR,
        ))
        .await
        .expect("CreateGame with the operator token")
        .into_inner();
    let listed = list(&mut admin, pb::ListGamesRequest::default()).await;
    assert_eq!(ids(&listed.games), [game.game_id]);

    let refused = common::servers::tabula(&["serve", "--require-operator-for-create"]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("--operator-token"), "{stderr}");
    let weak = common::servers::tabula(&["serve", "--operator-token", "short"]);
    assert!(!weak.status.success());
    assert!(
        String::from_utf8_lossy(&weak.stderr).contains("openssl rand"),
        "{}",
        String::from_utf8_lossy(&weak.stderr)
    );
}
