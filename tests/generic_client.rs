//! A generic client plays every hosted game to the end with no per-game code, through a real gRPC
//! server: the contract of `tabula.v1.LegalAction` a third-party client relies on.
//!
//! The client knows only the generic service (`tabula.v1`). It learns the games from server
//! reflection (following imports, as grpcurl does), creates one game per case of
//! `GameConfig.game` and per player count the server accepts (the `players` field, when a game's
//! config has one), asks `GameStatus.to_act` who must act, picks an entry of that seat's listing
//! and, when the entry has an `amount_range`, sets the field its `amount_field` path names to a
//! value in the range through `prost-reflect` dynamic messages. Nothing here names a game.

use crate::common;

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::time::Duration;

use common::*;
use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage, FieldDescriptor, Kind, ReflectMessage, Value};
use tabula::games::Seed;
use tabula::games::common::GameRng;
use tabula::proto::v1 as pb;
use tonic::transport::Channel;
use tonic_reflection::pb::v1 as reflection;

/// More actions than any game takes: a game still running after this many is a bug.
const MAX_ACTIONS: u64 = 20_000;
/// Player counts probed for games whose config has a `players` field.
const PLAYER_COUNTS: std::ops::RangeInclusive<u32> = 1..=8;

/// The encoded file descriptors one reflection request returns.
async fn reflect(
    client: &mut reflection::server_reflection_client::ServerReflectionClient<Channel>,
    request: reflection::server_reflection_request::MessageRequest,
) -> Vec<Vec<u8>> {
    let request = reflection::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(request),
    };
    let mut responses = client
        .server_reflection_info(futures::stream::iter([request]))
        .await
        .expect("reflection")
        .into_inner();
    let response = responses
        .message()
        .await
        .expect("a reflection answer")
        .expect("a reflection message");
    match response.message_response {
        Some(reflection::server_reflection_response::MessageResponse::FileDescriptorResponse(
            files,
        )) => files.file_descriptor_proto,
        other => panic!("unexpected reflection answer: {other:?}"),
    }
}

/// Every descriptor the service's file needs, fetched by server reflection: the file defining
/// `tabula.v1.GameService`, then each import by file name until none is missing.
async fn descriptors_from_reflection(channel: Channel) -> DescriptorPool {
    use reflection::server_reflection_request::MessageRequest;
    let mut client = reflection::server_reflection_client::ServerReflectionClient::new(channel);
    let mut files: HashMap<String, prost_types::FileDescriptorProto> = HashMap::new();
    let mut pending: VecDeque<Vec<u8>> = reflect(
        &mut client,
        MessageRequest::FileContainingSymbol("tabula.v1.GameService".into()),
    )
    .await
    .into();
    while let Some(bytes) = pending.pop_front() {
        let file = prost_types::FileDescriptorProto::decode(bytes.as_slice()).expect("a file");
        for import in &file.dependency {
            if !files.contains_key(import) {
                pending.extend(
                    reflect(&mut client, MessageRequest::FileByFilename(import.clone())).await,
                );
            }
        }
        files.insert(file.name().to_owned(), file);
    }
    let mut pool = DescriptorPool::new();
    pool.add_file_descriptor_protos(files.into_values())
        .expect("a consistent set of files");
    pool
}

/// The cases of `GameConfig.game`: one per hosted game.
fn game_cases(pool: &DescriptorPool) -> Vec<FieldDescriptor> {
    let config = pool
        .get_message_by_name("tabula.v1.GameConfig")
        .expect("tabula.v1.GameConfig");
    let game = config
        .oneofs()
        .find(|oneof| oneof.name() == "game")
        .expect("GameConfig.game");
    game.fields().collect()
}

/// A `GameConfig` choosing `case`, with the game's `players` field set when given.
fn config(pool: &DescriptorPool, case: &FieldDescriptor, players: Option<u32>) -> pb::GameConfig {
    let Kind::Message(game_config) = case.kind() else {
        panic!("{} is not a message", case.full_name());
    };
    let mut inner = DynamicMessage::new(game_config);
    if let Some(players) = players {
        inner.set_field_by_name("players", Value::U32(players));
    }
    let mut config = DynamicMessage::new(
        pool.get_message_by_name("tabula.v1.GameConfig")
            .expect("GameConfig"),
    );
    config.set_field(case, Value::Message(inner));
    pb::GameConfig::decode(config.encode_to_vec().as_slice()).expect("a GameConfig")
}

/// The field `path` names, walking from `message` (creating empty messages on the way, as
/// setting a proto field does).
fn field_at<'m>(
    message: &'m mut DynamicMessage,
    path: &str,
) -> (&'m mut DynamicMessage, FieldDescriptor) {
    let mut segments = path.split('.').peekable();
    let mut current = message;
    loop {
        let name = segments.next().expect("a non-empty path");
        let field = current
            .descriptor()
            .get_field_by_name(name)
            .unwrap_or_else(|| panic!("amount_field {path:?}: no field {name:?}"));
        if segments.peek().is_none() {
            return (current, field);
        }
        current = current
            .get_field_mut(&field)
            .as_message_mut()
            .unwrap_or_else(|| panic!("amount_field {path:?}: {name:?} is not a message"));
    }
}

/// The amount in `action` at `path`, checking that it is an unsigned integer field able to hold
/// every value up to `max`.
fn amount_at(pool: &DescriptorPool, action: &pb::Action, path: &str, max: u64) -> u64 {
    let mut dynamic = dynamic_action(pool, action);
    let (message, field) = field_at(&mut dynamic, path);
    match field.kind() {
        Kind::Uint32 => {
            assert!(
                max <= u64::from(u32::MAX),
                "{path} is uint32 but max is {max}"
            );
            message.get_field(&field).as_u32().map(u64::from)
        }
        Kind::Uint64 => message.get_field(&field).as_u64(),
        other => panic!("amount_field {path:?} is a {other:?}, not an unsigned integer"),
    }
    .expect("an integer")
}

/// `action` with the field at `path` set to `amount`.
fn with_amount(pool: &DescriptorPool, action: &pb::Action, path: &str, amount: u64) -> pb::Action {
    let mut dynamic = dynamic_action(pool, action);
    let (message, field) = field_at(&mut dynamic, path);
    let value = match field.kind() {
        Kind::Uint32 => Value::U32(u32::try_from(amount).expect("checked against the type")),
        _ => Value::U64(amount),
    };
    message.set_field(&field, value);
    pb::Action::decode(dynamic.encode_to_vec().as_slice()).expect("an Action")
}

fn dynamic_action(pool: &DescriptorPool, action: &pb::Action) -> DynamicMessage {
    let descriptor = pool
        .get_message_by_name("tabula.v1.Action")
        .expect("tabula.v1.Action");
    DynamicMessage::decode(descriptor, action.encode_to_vec().as_slice()).expect("an Action")
}

/// What the games played so far exercised of the amount contract.
#[derive(Default)]
struct AmountsSeen {
    /// Ranged entries sent.
    sent: u64,
    /// Of those, sent with an amount other than the listed `min`.
    changed: u64,
}

/// One concrete move from `entry`, checking the entry keeps the contract: `amount_field` is set
/// exactly when `amount_range` is, names an unsigned field and the listed action carries `min`.
fn concrete_action(
    pool: &DescriptorPool,
    entry: &pb::LegalAction,
    rng: &mut GameRng,
    seen: &mut AmountsSeen,
) -> pb::Action {
    let action = entry.action.clone().expect("a listed action");
    let Some(range) = &entry.amount_range else {
        assert!(
            entry.amount_field.is_empty(),
            "amount_field {:?} without a range",
            entry.amount_field
        );
        return action;
    };
    let path = entry.amount_field.as_str();
    assert!(!path.is_empty(), "a range without an amount_field");
    assert!(range.min <= range.max, "empty range {range:?}");
    assert_eq!(
        amount_at(pool, &action, path, range.max),
        range.min,
        "the listed action carries min at {path}"
    );
    // Mostly small amounts, so games look like play, but the whole range is covered.
    let top = if rng.below(4) == 0 {
        range.max
    } else {
        range.max.min(range.min.saturating_add(30))
    };
    let amount = range.min + rng.below(top - range.min + 1);
    seen.sent += 1;
    if amount != range.min {
        seen.changed += 1;
    }
    with_amount(pool, &action, path, amount)
}

/// Plays `game` to the end: `to_act` from the last status, that seat's listing from its own
/// GetView (or from its Act answer when it acts again), one random entry per move.
async fn play(
    client: &mut Client,
    pool: &DescriptorPool,
    game: &pb::CreateGameResponse,
    rng: &mut GameRng,
    seen: &mut AmountsSeen,
) -> pb::GameStatus {
    let mut status = game.status.clone().expect("CreateGame returns the status");
    // CreateGame shows exactly what a spectator's GetView shows: no more (hidden information),
    // no less (the client needs no GetView before the first move).
    let spectator = spectator_view(client, &game.game_id).await;
    assert!(game.view.is_some(), "CreateGame returns the public view");
    assert_eq!(game.view, spectator.view);
    assert_eq!(Some(&status), spectator.status.as_ref());
    assert_eq!(game.version, spectator.version);
    let mut version = game.version;
    let mut carried: Option<(u32, Vec<pb::LegalAction>)> = None;
    while let Some(seat) = status.to_act {
        assert!(version < MAX_ACTIONS, "game {} never ends", game.game_id);
        let token = token(game, seat);
        let listing = match carried.take() {
            Some((carried_for, listing)) if carried_for == seat => listing,
            _ => seat_view(client, &game.game_id, &token).await.legal_actions,
        };
        assert!(
            !listing.is_empty(),
            "seat {seat} must act but may do nothing"
        );
        let entry = &listing[rng.index(listing.len())];
        let action = concrete_action(pool, entry, rng, seen);
        let request = pb::ActRequest {
            narrate: false,
            game_id: game.game_id.clone(),
            action: Some(action),
            expected_version: Some(version),
            request_id: format!("move-{version}"),
            omit_view: false,
        };
        let answer = client
            .act(authorized(request, &token))
            .await
            .unwrap_or_else(|e| panic!("a listed move is accepted: {e}"))
            .into_inner();
        assert_eq!(answer.version, version + 1);
        version = answer.version;
        status = answer.status.expect("Act returns the status");
        // The answer lists the caller's own moves, and only when it must act again.
        assert_eq!(
            status.to_act == Some(seat),
            !answer.legal_actions.is_empty(),
            "the Act answer lists the caller's legal actions exactly when it acts next"
        );
        carried = Some((seat, answer.legal_actions));
    }
    status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generic_client_plays_every_game_to_the_end() {
    let backend = Backend::memory();
    let replica = Replica::start(&backend).await;
    let mut client = replica.client().await;
    let channel = Channel::from_shared(format!("http://{}", replica.address))
        .expect("url")
        .connect()
        .await
        .expect("connect");

    let run = async {
        let pool = descriptors_from_reflection(channel).await;
        let cases = game_cases(&pool);
        assert!(!cases.is_empty(), "reflection shows the games");
        let mut rng = GameRng::from_seed(&Seed::from_u64(13));
        let mut seen = AmountsSeen::default();
        let mut kinds_played = BTreeSet::new();
        let mut seed = 0;
        for case in &cases {
            let Kind::Message(game_config) = case.kind() else {
                panic!("{} is not a message", case.full_name());
            };
            // Games for a variable number of players take it in their config's `players`.
            let player_counts: Vec<Option<u32>> =
                if game_config.get_field_by_name("players").is_some() {
                    PLAYER_COUNTS.map(Some).collect()
                } else {
                    vec![None]
                };
            let mut accepted = 0;
            for players in player_counts {
                seed += 1;
                let request = pb::CreateGameRequest {
                    config: Some(config(&pool, case, players)),
                    seed: Some(Seed::from_u64(seed).0.to_vec()),
                    ..Default::default()
                };
                let game = match client.create_game(request).await {
                    Ok(game) => game.into_inner(),
                    Err(status) if status.code() == tonic::Code::InvalidArgument => continue,
                    Err(status) => panic!("CreateGame {}: {status}", case.name()),
                };
                accepted += 1;
                let status = play(&mut client, &pool, &game, &mut rng, &mut seen).await;
                assert!(
                    status.finished,
                    "{} ({players:?} players) ended",
                    case.name()
                );
                assert_eq!(status.scores.len(), game.seats.len());
                assert!(!status.winners.is_empty(), "somebody wins");
                kinds_played.insert(game.game);
            }
            assert!(accepted > 0, "{} accepts some player count", case.name());
        }

        // Every kind of game was played, not only those the GameConfig cases happen to show.
        let kinds = pool
            .get_enum_by_name("tabula.v1.GameKind")
            .expect("GameKind");
        let hosted: BTreeSet<i32> = kinds
            .values()
            .map(|v| v.number())
            .filter(|&n| n != 0)
            .collect();
        assert_eq!(kinds_played, hosted);
        // And they are the games the server says it hosts.
        let listed: BTreeSet<i32> = client
            .list_game_types(pb::ListGameTypesRequest {})
            .await
            .expect("ListGameTypes")
            .into_inner()
            .game_types
            .iter()
            .map(|game_type| game_type.game)
            .collect();
        assert_eq!(kinds_played, listed);
        // The amount path was really exercised, with amounts other than the listed one.
        assert!(
            seen.sent > 0 && seen.changed > 0,
            "amounts sent: {}",
            seen.sent
        );
    };
    tokio::time::timeout(Duration::from_secs(600), run)
        .await
        .expect("every game played within 10 minutes");
}
