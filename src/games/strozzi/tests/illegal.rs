//! Rejected actions: each refusal cites its rule (or is malformed) and changes nothing.

use super::*;

#[test]
fn rejected_actions_cite_their_rule_and_change_nothing() {
    let mut state = arranged(&config(4));
    give_ship(&mut state, 1, City::Venice, FlagKind::Pirate, "X27");
    stack_deck(&mut state, &["X11", "X01"]);
    reveal(&mut state, 1);
    // Out of turn.
    assert_eq!(rule_of(&rejected(&state, 2, pass())), "§A7");
    // A flag no longer held.
    assert_eq!(rule_of(&rejected(&state, 1, flag(pb::Flag::Pirate))), "§A5");
    // Wrong phase.
    assert_eq!(rule_of(&rejected(&state, 1, place(pb::City::Rome))), "§A7");
    assert_eq!(
        rule_of(&rejected(&state, 1, take_tile(state.display[0]))),
        "§A7"
    );
    // Malformed: no kind, unknown flag, unknown city, unknown tile.
    let mut probe = state.clone();
    assert!(matches!(
        probe.apply(1, &pb::Action::default()),
        Err(ActionError::Malformed(_))
    ));
    assert!(matches!(
        rejected(&state, 1, flag(pb::Flag::Unspecified)),
        ActionError::Malformed(_)
    ));
    assert!(matches!(
        rejected(&state, 1, Kind::PlayFlag(pb::PlayFlag { flag: 42 })),
        ActionError::Malformed(_)
    ));
    act(&mut state, 1, flag(pb::Flag::Goods));
    act(&mut state, 2, pass());
    act(&mut state, 3, pass());
    act(&mut state, 0, pass());
    assert!(matches!(state.phase, Phase::PlacingShip { taker: 1, .. }));
    assert_eq!(rule_of(&rejected(&state, 1, pass())), "§A8.1");
    assert_eq!(rule_of(&rejected(&state, 0, place(pb::City::Rome))), "§A8");
    assert!(matches!(
        rejected(
            &state,
            1,
            Kind::PlaceShip(pb::PlaceShip {
                port: 0,
                decline_goods_flag_step: false
            })
        ),
        ActionError::Malformed(_)
    ));
    // X11 has no progress symbol; take a progress ship to reach the tile phase.
    let mut state = arranged(&config(4));
    stack_deck(&mut state, &["X19", "X01"]);
    reveal(&mut state, 0);
    act(&mut state, 0, flag(pb::Flag::Pirate));
    act(&mut state, 0, place(pb::City::Rome));
    assert!(matches!(state.phase, Phase::ChoosingTile { .. }));
    assert_eq!(rule_of(&rejected(&state, 0, pass())), "§A8.5");
    assert!(matches!(
        rejected(&state, 0, take_tile(200)),
        ActionError::Malformed(_)
    ));
    assert!(matches!(
        rejected(
            &state,
            0,
            Kind::TakeProgressTile(pb::TakeProgressTile {
                tile_id: 1 << 20,
                decline_goods_step: false
            })
        ),
        ActionError::Malformed(_)
    ));
}

/// The integer extremes in every client-chosen field are refused as malformed, citing no
/// unbounded input, and leave the state byte-identical.
#[test]
fn extreme_field_values_are_refused() {
    let mut state = arranged(&config(4));
    stack_deck(&mut state, &["X19", "X01"]);
    reveal(&mut state, 0);
    for value in [i32::MIN, -1, 4, i32::MAX] {
        assert!(matches!(
            rejected(&state, 0, Kind::PlayFlag(pb::PlayFlag { flag: value })),
            ActionError::Malformed(_)
        ));
    }
    act(&mut state, 0, flag(pb::Flag::Pirate));
    for value in [i32::MIN, -1, 5, i32::MAX] {
        assert!(matches!(
            rejected(
                &state,
                0,
                Kind::PlaceShip(pb::PlaceShip {
                    port: value,
                    decline_goods_flag_step: true
                })
            ),
            ActionError::Malformed(_)
        ));
    }
    act(&mut state, 0, place(pb::City::Rome));
    for tile_id in [36, 255, 256, u32::MAX] {
        let error = rejected(
            &state,
            0,
            Kind::TakeProgressTile(pb::TakeProgressTile {
                tile_id,
                decline_goods_step: true,
            }),
        );
        assert!(matches!(error, ActionError::Malformed(_)));
        assert!(error.to_string().len() < 100, "a short message: {error}");
    }
    for seat in [4, u32::MAX] {
        assert!(matches!(
            rejected(&state, seat, pass()),
            ActionError::NotYourTurn { .. }
        ));
    }
}
