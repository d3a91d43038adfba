//! The codec writes exactly prost's bytes, for the answers of every game at every step of a game.

use prost::Message;

use super::encode;
use crate::games::common::GameRng;
use crate::games::{Seed, Viewer};
use crate::hosting::{GameState, random_legal_move, setup};
use crate::proto::v1 as pb;
use crate::proto::{la_strada, manila, nim, strozzi};

/// `message` as the codec writes it, checked against prost's own bytes.
fn assert_as_prost<M: Message + Clone + 'static>(message: &M) {
    let mut written = Vec::new();
    encode(&mut message.clone(), &mut written);
    assert_eq!(
        written,
        message.encode_to_vec(),
        "the codec's bytes differ from prost's for a {}",
        std::any::type_name::<M>()
    );
}

/// Every answer that carries `view`, in every wrapping the service sends, with the other fields
/// filled from the game as the service fills them.
fn check_answers(
    state: &dyn GameState,
    version: u64,
    view: Option<pb::View>,
    events: &[pb::Event],
) {
    let status = state.status();
    let seat = status.to_act;
    let legal_actions = seat.map_or_else(Vec::new, |seat| state.legal_actions(Viewer::Seat(seat)));
    let act = pb::ActResponse {
        version,
        view: view.clone(),
        events: events.to_vec(),
        status: Some(status.clone()),
        legal_actions: legal_actions.clone(),
        replayed: !version.is_multiple_of(2),
        head: vec![7; (version % 33) as usize],
    };
    let get_view = pb::GetViewResponse {
        version,
        view: view.clone(),
        status: Some(status.clone()),
        legal_actions: legal_actions.clone(),
        seat,
        game: 1,
        players: vec![pb::Player::default(); (version % 3) as usize],
        clock: None,
        signed_commitment: None,
        links: version.is_multiple_of(2).then(pb::GameLinks::default),
    };
    let observe = pb::ObserveResponse {
        version,
        view: view.clone(),
        events: events.to_vec(),
        status: Some(status),
        legal_actions,
        head: vec![1, 2, 3],
        ..Default::default()
    };
    assert_as_prost(&act);
    assert_as_prost(&get_view);
    assert_as_prost(&observe);
    assert_as_prost(&pb::PlayResponse {
        kind: Some(pb::play_response::Kind::Acted(act)),
    });
    assert_as_prost(&pb::PlayResponse {
        kind: Some(pb::play_response::Kind::Turn(get_view)),
    });
    for subscription in [0, 1, 300] {
        assert_as_prost(&pb::ObserveGamesResponse {
            subscription,
            update: Some(observe.clone()),
            ..Default::default()
        });
    }
}

#[test]
fn answers_of_every_game_are_written_as_prost_writes_them() {
    let games = [
        pb::game_config::Game::MediciVsStrozzi(Default::default()),
        pb::game_config::Game::Strozzi(strozzi::v1::Config {
            players: 4,
            hidden_money: true,
            ..Default::default()
        }),
        pb::game_config::Game::Manila(manila::v1::Config {
            players: 3,
            ..Default::default()
        }),
        pb::game_config::Game::LaStrada(la_strada::v1::Config {
            players: 3,
            ..Default::default()
        }),
    ];
    for (index, game) in games.into_iter().enumerate() {
        let config = pb::GameConfig {
            game: Some(game),
            table: None,
        };
        let mut state = setup(&config, &Seed::from_u64(index as u64)).expect("setup");
        let mut rng = GameRng::from_seed(&Seed::from_u64(index as u64 + 10));
        let mut events = Vec::new();
        let mut version = 0;
        // A version of 0 and the large ones of a long game (multi-byte varints) both occur.
        while version < 400 && !state.is_finished() {
            let seat = state.status().to_act.expect("someone acts");
            for viewer in [Viewer::Seat(seat), Viewer::Spectator] {
                check_answers(&*state, version, Some(state.view(viewer)), &events);
            }
            let (seat, action) = random_legal_move(&*state, &mut rng);
            events = state
                .apply(seat, &action)
                .expect("a listed move is accepted");
            version += 1;
        }
        check_answers(
            &*state,
            version + 1_000_000,
            Some(state.view(Viewer::Spectator)),
            &events,
        );
    }
}

#[test]
fn answers_without_a_view_or_a_game_are_written_as_prost_writes_them() {
    let config = pb::GameConfig {
        game: Some(pb::game_config::Game::MediciVsStrozzi(Default::default())),
        table: None,
    };
    let state = setup(&config, &Seed::from_u64(3)).expect("setup");
    for version in [0, 1, 127, 128, u64::MAX] {
        // No view (`omit_view`), an empty view, and a game's view that is all defaults.
        check_answers(&*state, version, None, &[]);
        check_answers(&*state, version, Some(pb::View::default()), &[]);
        check_answers(
            &*state,
            version,
            Some(pb::View {
                game: Some(pb::view::Game::Nim(nim::v1::View::default())),
            }),
            &[],
        );
    }
    assert_as_prost(&pb::PlayResponse { kind: None });
    assert_as_prost(&pb::PlayResponse {
        kind: Some(pb::play_response::Kind::Refused(pb::PlayRefusal {
            request_id: "r-1".into(),
            code: 9,
            message: "not your turn".into(),
        })),
    });
    assert_as_prost(&pb::ObserveGamesResponse::default());
    // Everything else goes to prost as it is.
    assert_as_prost(&pb::ActRequest {
        game_id: "g".into(),
        expected_version: Some(4),
        ..Default::default()
    });
}
