//! `Play` streams, through a real gRPC client against real replicas: whole games played on one
//! stream per seat (seats on different replicas sharing a real Redis), every `turn` message the
//! same as the seat's own GetView at that moment, refusals that leave the stream open and lose
//! nothing, retries answered exactly once, and the opening's errors.

use crate::common;

use std::time::Duration;

use common::*;
use tabula::games::Seed;
use tabula::games::common::GameRng;
use tabula::proto::v1 as pb;
use tokio::sync::mpsc;
use tonic::Code;

use pb::play_response::Kind;

/// The longest any message may take to arrive: nothing here waits without a deadline.
const PATIENCE: Duration = Duration::from_secs(10);

/// A seat's open Play stream.
struct Session {
    requests: mpsc::Sender<pb::PlayRequest>,
    responses: tonic::Streaming<pb::PlayResponse>,
}

fn start(game_id: &str) -> pb::PlayRequest {
    pb::PlayRequest {
        kind: Some(pb::play_request::Kind::Start(pb::PlayStart {
            game_id: game_id.to_owned(),
            omit_view: false,
            narrate: false,
        })),
    }
}

/// Opens a Play stream with `first` as its first message, as `token`'s seat (none: no token).
async fn open_with(
    client: &mut Client,
    first: Option<pb::PlayRequest>,
    token: Option<&str>,
) -> Result<Session, tonic::Status> {
    let (requests, outgoing) = mpsc::channel(16);
    if let Some(first) = first {
        requests.send(first).await.expect("queued");
    }
    let stream = tokio_stream::wrappers::ReceiverStream::new(outgoing);
    let request = match token {
        Some(token) => authorized(stream, token),
        None => tonic::Request::new(stream),
    };
    let responses = tokio::time::timeout(PATIENCE, client.play(request))
        .await
        .expect("Play answers in time")?
        .into_inner();
    Ok(Session {
        requests,
        responses,
    })
}

async fn open(client: &mut Client, game_id: &str, token: &str) -> Session {
    open_with(client, Some(start(game_id)), Some(token))
        .await
        .expect("Play opens")
}

impl Session {
    /// The next message; `None` when the server ended the stream with OK.
    async fn next(&mut self) -> Option<Kind> {
        let message = tokio::time::timeout(PATIENCE, self.responses.message())
            .await
            .expect("a message in time")
            .expect("the stream does not fail")?;
        Some(message.kind.expect("a message has a kind"))
    }

    async fn turn(&mut self) -> pb::GetViewResponse {
        match self.next().await {
            Some(Kind::Turn(turn)) => turn,
            other => panic!("expected a turn, got {other:?}"),
        }
    }

    async fn act(&mut self, act: pb::ActRequest) -> Kind {
        self.requests
            .send(pb::PlayRequest {
                kind: Some(pb::play_request::Kind::Act(act)),
            })
            .await
            .expect("the stream takes requests");
        self.next().await.expect("an answer")
    }
}

fn act_request(action: pb::Action, expected_version: u64, request_id: &str) -> pb::ActRequest {
    pb::ActRequest {
        game_id: String::new(),
        action: Some(action),
        expected_version: Some(expected_version),
        request_id: request_id.to_owned(),
        narrate: false,
        omit_view: false,
    }
}

/// The seat's own GetView now.
async fn seat_view_now(client: &mut Client, game_id: &str, token: &str) -> pb::GetViewResponse {
    seat_view(client, game_id, token).await
}

/// Plays a whole game with random legal moves, seat `s` on `clients[s % n]`'s replica, each seat
/// on its own Play stream, and checks every message against what the seat's unary calls answer.
async fn play_a_whole_game(clients: &mut [Client], config: pb::GameConfig, seed: u64) {
    let game = create(&mut clients[0], config, seed).await;
    let seats = game.seats.len();
    let mut sessions = Vec::new();
    for seat in 0..seats as u32 {
        let client = &mut clients[seat as usize % clients.len()];
        let mut session = open(client, &game.game_id, &token(&game, seat)).await;
        // The first message: the state now, with what later turns leave out.
        let first = session.turn().await;
        assert_eq!(first.version, 0);
        assert_eq!(first.seat, Some(seat));
        assert!(first.signed_commitment.is_some(), "the first turn is whole");
        sessions.push((seat, session, first));
    }
    let mut rng = GameRng::from_seed(&Seed::from_u64(seed));
    let mut version = 0;
    // The seat to act, with the turn message (or answer) that told it.
    let status = sessions[0].2.status.clone().expect("status");
    let mut to_act = status.to_act.expect("someone acts first");
    let mut legal = sessions[to_act as usize].2.legal_actions.clone();
    for step in 0.. {
        assert!(step < 10_000, "the game ends");
        let (seat, session, _) = &mut sessions[to_act as usize];
        let seat = *seat;
        assert!(!legal.is_empty(), "seat {seat} is told its legal actions");
        let action = choose(&legal, &mut rng);
        let request_id = format!("step-{step}");
        let answer = match session
            .act(act_request(action.clone(), version, &request_id))
            .await
        {
            Kind::Acted(answer) => answer,
            other => panic!("step {step}: expected an answer, got {other:?}"),
        };
        assert_eq!(answer.version, version + 1, "one entry per act");
        assert!(!answer.replayed);
        version = answer.version;
        let status = answer.status.clone().expect("status");
        if status.finished {
            break;
        }
        let next = status.to_act.expect("someone acts");
        if next == seat {
            // Its own answer lists its next moves: no turn message follows.
            legal = answer.legal_actions;
            continue;
        }
        // The seat whose turn came is told so on its own stream, as its GetView would answer.
        let (_, next_session, _) = &mut sessions[next as usize];
        let turn = next_session.turn().await;
        assert_eq!(
            turn.version, version,
            "the turn names the version it came at"
        );
        assert_eq!(turn.status.as_ref().and_then(|s| s.to_act), Some(next));
        let client = &mut clients[next as usize % clients.len()];
        let view = seat_view_now(client, &game.game_id, &token(&game, next)).await;
        assert_eq!(view.version, turn.version);
        assert_eq!(view.view, turn.view, "the turn's view is the seat's own");
        assert_eq!(view.legal_actions, turn.legal_actions);
        assert_eq!(view.status, turn.status);
        assert!(turn.signed_commitment.is_none() && turn.players.is_empty());
        to_act = next;
        legal = turn.legal_actions;
    }
    // The end reaches every seat: the mover in its answer, the others as a last turn; then every
    // server ends its stream.
    for (seat, session, _) in &mut sessions {
        if *seat != to_act {
            let last = session.turn().await;
            assert_eq!(last.version, version);
            assert!(last.status.expect("status").finished);
        }
        assert!(
            session.next().await.is_none(),
            "the stream ends after the game"
        );
    }
    let log = export(&mut clients[0], &game.game_id).await;
    assert_eq!(log.entries.len() as u64, version, "every act appended once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whole_games_are_played_on_play_streams_in_memory() {
    let replica = Replica::start(&Backend::memory()).await;
    let mut clients = [replica.client().await];
    for seed in 0..3 {
        play_a_whole_game(&mut clients, medici_config(), seed).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seats_on_two_replicas_sharing_redis_are_told_their_turns() {
    let backend = Backend::redis();
    let first = Replica::start(&backend).await;
    let second = Replica::start(&backend).await;
    let mut clients = [first.client().await, second.client().await];
    play_a_whole_game(&mut clients, medici_config(), 7).await;
    // Three seats, where a turn passes across replicas in both directions.
    let manila = pb::GameConfig {
        table: None,
        game: Some(pb::game_config::Game::Manila(
            tabula::proto::manila::v1::Config {
                players: 3,
                ..Default::default()
            },
        )),
    };
    play_a_whole_game(&mut clients, manila, 8).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_act_leaves_the_stream_open_and_appends_nothing() {
    let replica = Replica::start(&Backend::memory()).await;
    let mut client = replica.client().await;
    let game = create(&mut client, medici_config(), 11).await;
    let first = spectator_view(&mut client, &game.game_id).await;
    let seat = first.status.expect("status").to_act.expect("to act");
    let mut session = open(&mut client, &game.game_id, &token(&game, seat)).await;
    let turn = session.turn().await;
    let mut rng = GameRng::from_seed(&Seed::from_u64(1));
    let action = choose(&turn.legal_actions, &mut rng);
    let refused = |kind: Kind| match kind {
        Kind::Refused(refusal) => refusal,
        other => panic!("expected a refusal, got {other:?}"),
    };
    // A stale version: ABORTED, as Act answers it.
    let stale = refused(session.act(act_request(action.clone(), 5, "stale")).await);
    assert_eq!(stale.code, Code::Aborted as u32, "{stale:?}");
    assert_eq!(stale.request_id, "stale");
    assert!(stale.message.contains("version"), "{stale:?}");
    // Another game's id.
    let mut elsewhere = act_request(action.clone(), 0, "elsewhere");
    elsewhere.game_id = "not-this-game".into();
    let elsewhere = refused(session.act(elsewhere).await);
    assert_eq!(
        elsewhere.code,
        Code::InvalidArgument as u32,
        "{elsewhere:?}"
    );
    // No action at all.
    let mut empty = act_request(action.clone(), 0, "empty");
    empty.action = None;
    let empty = refused(session.act(empty).await);
    assert_eq!(empty.code, Code::InvalidArgument as u32, "{empty:?}");
    assert_eq!(export(&mut client, &game.game_id).await.entries.len(), 0);
    // The same stream then plays, and a retry of the same request id is answered, not appended.
    let played = match session.act(act_request(action.clone(), 0, "move")).await {
        Kind::Acted(answer) => answer,
        other => panic!("expected an answer, got {other:?}"),
    };
    assert_eq!(played.version, 1);
    let mut retry = act_request(action, 0, "move");
    retry.expected_version = None;
    let retried = match session.act(retry).await {
        Kind::Acted(answer) => answer,
        other => panic!("expected an answer, got {other:?}"),
    };
    assert!(retried.replayed, "{retried:?}");
    assert_eq!(retried.version, 1);
    assert_eq!(export(&mut client, &game.game_id).await.entries.len(), 1);
    // Closing its side ends the stream once every act is answered.
    let Session {
        requests,
        mut responses,
    } = session;
    drop(requests);
    let end = tokio::time::timeout(PATIENCE, responses.message())
        .await
        .expect("in time")
        .expect("the stream ends with OK");
    assert!(end.is_none(), "{end:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_play_stream_needs_a_start_and_the_seats_token() {
    let replica = Replica::start(&Backend::memory()).await;
    let mut client = replica.client().await;
    let game = create(&mut client, medici_config(), 12).await;
    let other = create(&mut client, medici_config(), 13).await;
    let seat0 = token(&game, 0);
    let code = |result: Result<Session, tonic::Status>| match result {
        Ok(_) => panic!("the stream opened"),
        Err(status) => {
            // A message a client's developer can act on, never an echo of much input.
            assert!(!status.message().is_empty() && status.message().len() < 400);
            status.code()
        }
    };
    let opened = open_with(&mut client, Some(start(&game.game_id)), None).await;
    assert_eq!(code(opened), Code::Unauthenticated);
    let opened = open_with(
        &mut client,
        Some(start(&game.game_id)),
        Some(&token(&other, 0)),
    )
    .await;
    assert_eq!(code(opened), Code::PermissionDenied);
    let opened = open_with(&mut client, Some(start("no-such-game")), Some(&seat0)).await;
    assert_eq!(code(opened), Code::NotFound);
    let act_first = pb::PlayRequest {
        kind: Some(pb::play_request::Kind::Act(act_request(
            resign_action(),
            0,
            "early",
        ))),
    };
    let opened = open_with(&mut client, Some(act_first), Some(&seat0)).await;
    assert_eq!(code(opened), Code::InvalidArgument);
    let opened = open_with(
        &mut client,
        Some(pb::PlayRequest { kind: None }),
        Some(&seat0),
    )
    .await;
    assert_eq!(code(opened), Code::InvalidArgument);
    // A stream closed before its start.
    let (requests, outgoing) = mpsc::channel::<pb::PlayRequest>(1);
    drop(requests);
    let closed = client
        .play(authorized(
            tokio_stream::wrappers::ReceiverStream::new(outgoing),
            &seat0,
        ))
        .await
        .map(|_| ());
    assert_eq!(closed.expect_err("no start").code(), Code::InvalidArgument);
    // A second start fails the stream, whose acts are all answered before.
    let mut session = open(&mut client, &game.game_id, &seat0).await;
    session.turn().await;
    session
        .requests
        .send(start(&game.game_id))
        .await
        .expect("sent");
    let failed = tokio::time::timeout(PATIENCE, session.responses.message())
        .await
        .expect("in time")
        .expect_err("a second start fails the stream");
    assert_eq!(failed.code(), Code::InvalidArgument, "{failed:?}");
    assert_eq!(export(&mut client, &game.game_id).await.entries.len(), 0);
}

/// A stream that never says which game it plays is failed with DEADLINE_EXCEEDED once
/// `START_DEADLINE` has passed, rather than holding its stream slot for nothing; the replica
/// serves the next stream as usual.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_play_stream_without_a_start_is_failed_after_the_start_deadline() {
    let replica = Replica::start(&Backend::memory()).await;
    let mut client = replica.client().await;
    let game = create(&mut client, medici_config(), 14).await;
    let seat0 = token(&game, 0);
    // Held open, with nothing sent.
    let (_requests, outgoing) = mpsc::channel::<pb::PlayRequest>(1);
    let opened = std::time::Instant::now();
    let answer = tokio::time::timeout(
        tabula::service::play::START_DEADLINE + PATIENCE,
        client.play(authorized(
            tokio_stream::wrappers::ReceiverStream::new(outgoing),
            &seat0,
        )),
    )
    .await
    .expect("the server fails the stream in time");
    let status = answer.map(|_| ()).expect_err("no start, no stream");
    assert_eq!(status.code(), Code::DeadlineExceeded, "{status:?}");
    assert!(status.message().contains("start"), "{status:?}");
    assert!(opened.elapsed() >= tabula::service::play::START_DEADLINE);
    let mut session = open(&mut client, &game.game_id, &seat0).await;
    assert_eq!(session.turn().await.version, 0);
}
