//! Refused actions: out of turn, malformed, in the wrong phase, and hostile numbers; a refusal
//! never changes the state.

use super::*;

#[test]
fn actions_out_of_turn_malformed_or_in_the_wrong_phase_are_refused() {
    let state = new_game(&cfg(4));
    assert!(matches!(
        state.clone().apply(
            2,
            &pb::Action {
                kind: Some(A::PassAuction(pb::PassAuction {}))
            }
        ),
        Err(ActionError::NotYourTurn { seat: 2, .. })
    ));
    assert_malformed(&state, 0, None);
    assert_malformed(&state, 9, Some(A::PassAuction(pb::PassAuction {})));
    assert_malformed(&state, 0, Some(A::BuyShare(pb::BuyShare { ware: 0 })));
    assert_illegal(
        &state,
        0,
        &action(A::SkipPurchase(pb::SkipPurchase {})),
        "§4.1",
    );
    assert_illegal(&state, 0, &action(place_kind(Space::Insurance)), "§4.1");
    assert_illegal(&state, 0, &action(A::Bid(pb::Bid { price: 0 })), "§4.1");
    assert_illegal(&state, 0, &action(A::Bid(pb::Bid { price: 55 })), "§4.1");
    assert_illegal(&state, 0, &action(A::StayAboard(pb::StayAboard {})), "§4.1");
    assert_illegal(
        &state,
        0,
        &action(A::PilotPunts(pb::PilotPunts { shifts: vec![] })),
        "§4.1",
    );
    assert_illegal(
        &state,
        0,
        &action(A::DirectPlunder(pb::DirectPlunder {
            ware: Ware::Jade.to_pb(),
            destination: pb::PlunderDestination::Harbour as i32,
        })),
        "§4.1",
    );
    let placing = launched(
        &cfg(4),
        &[(Ware::Nutmeg, 3), (Ware::Silk, 3), (Ware::Jade, 3)],
    );
    assert_illegal(&placing, 0, &action(A::Bid(pb::Bid { price: 3 })), "§4.3");
    assert_illegal(
        &placing,
        0,
        &action(load_kind(&[
            (Ware::Nutmeg, 3),
            (Ware::Silk, 3),
            (Ware::Jade, 3),
        ])),
        "§4.3",
    );
    let mut broke = placing.clone();
    broke.players[0].cash = 3;
    broke.players[0].mortgaged = broke.players[0].holdings();
    assert_illegal(&broke, 0, &action(place_kind(Space::Pirate)), "§5");
    assert_malformed(
        &placing,
        0,
        Some(A::DirectPlunder(pb::DirectPlunder {
            ware: Ware::Jade.to_pb(),
            destination: 0,
        })),
    );
}

#[test]
fn pilot_shifts_at_the_integer_extremes_are_refused() {
    // `spaces` is any sint32 a client sends; `i32::MIN` has no absolute value in i32.
    let mut state = launched(
        &cfg(4),
        &[(Ware::Ginseng, 3), (Ware::Nutmeg, 3), (Ware::Jade, 3)],
    );
    use Space::*;
    play_rounds(
        &mut state,
        &[
            (&[Some(SmallPilot), Some(LargePilot), None, None], [1, 1, 1]),
            (&[None, None], [1, 1, 1]),
        ],
    );
    assert_eq!(state.phase, Phase::Pilot { large: false });
    let shift = |ware: Ware, spaces: i32| pb::PuntShift {
        ware: ware.to_pb(),
        spaces,
    };
    let pilot = |shifts: Vec<pb::PuntShift>| A::PilotPunts(pb::PilotPunts { shifts });
    for spaces in [i32::MIN, i32::MIN + 1, i32::MAX, 2, -2] {
        assert_illegal(
            &state,
            0,
            &action(pilot(vec![shift(Ware::Ginseng, spaces)])),
            "§4.6",
        );
    }
    act(&mut state, pilot(vec![]));
    assert_eq!(state.phase, Phase::Pilot { large: true });
    for spaces in [i32::MIN, i32::MIN + 1, i32::MAX, 3, -3] {
        assert_illegal(
            &state,
            1,
            &action(pilot(vec![shift(Ware::Jade, spaces)])),
            "§4.6",
        );
        assert_illegal(
            &state,
            1,
            &action(pilot(vec![
                shift(Ware::Jade, 1),
                shift(Ware::Ginseng, spaces),
            ])),
            "§4.6",
        );
    }
    // The largest legal move still works.
    act(&mut state, pilot(vec![shift(Ware::Jade, -2)]));
}
