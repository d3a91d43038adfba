//! Default actions (docs/rules/strozzi.md, "Default actions"): pass on every card (§A7), the first
//! free port (§A8.1) and the first face-up tile (§A8.5), and games of default actions end.

use super::*;
use crate::games::common::testing::check_default_play;

#[test]
fn a_decider_passes_by_default() {
    let state = new_game(&config(4), 1);
    assert!(matches!(state.phase, Phase::Deciding(_)));
    assert_eq!(
        state.default_action(),
        Some(pb::Action {
            kind: Some(Kind::PassCard(pb::PassCard {}))
        })
    );
}

#[test]
fn a_taker_places_in_the_first_free_port_and_takes_the_first_tile() {
    let mut state = new_game(&config(3), 2);
    let seat = state.to_act().expect("someone decides");
    // Take the card with the pirate flag: the taker then chooses a port (or it is forced).
    apply_ok(
        &mut state,
        seat,
        &pb::Action {
            kind: Some(Kind::PlayFlag(pb::PlayFlag {
                flag: pb::Flag::Pirate as i32,
            })),
        },
    );
    for _ in 0..3 {
        let Some(actor) = state.to_act() else { break };
        let default = state.default_action().expect("a default");
        match (&state.phase, &default.kind) {
            (Phase::PlacingShip { taker, .. }, Some(Kind::PlaceShip(place))) => {
                let first = state.free_ports(*taker)[0];
                assert_eq!(place.port, first.to_pb() as i32);
                assert!(!place.decline_goods_flag_step);
            }
            (Phase::ChoosingTile { .. }, Some(Kind::TakeProgressTile(take))) => {
                assert_eq!(take.tile_id, u32::from(state.display[0]));
                assert!(!take.decline_goods_step);
            }
            (Phase::Deciding(_), Some(Kind::PassCard(_))) => {}
            (phase, other) => panic!("default {other:?} in phase {phase:?}"),
        }
        apply_ok(&mut state, actor, &default);
    }
}

#[test]
fn games_of_default_actions_end_and_defaults_hide_nothing() {
    for players in 3..=6 {
        let hidden_money = pb::Config {
            hidden_money: true,
            ..config(players)
        };
        let longest = check_default_play::<Strozzi>(&hidden_money, 500, 50, 5_000);
        // Everybody passes: each card goes once round the table, three decks.
        let cards = 3 * deck_size(players);
        assert!(
            longest <= cards * players as usize,
            "{players} players: longest all-default game {longest} actions"
        );
    }
}
