//! Illegal and malformed actions: each refusal cites its rule and changes nothing.

use super::*;

#[test]
fn every_illegal_action_cites_its_rule() {
    let mut g = game_with(&pb::Config {
        marker_movement: 0,
        max_price: 10,
    });
    // Drawing, empty lot.
    assert_illegal(&g, MEDICI, &offer(3), "§B4"); // draw at least one tile first
    for wrong in [buy(), decline(), load(3, Some(0)), discard()] {
        assert_illegal(&g, MEDICI, &wrong, "§B4"); // wrong phase
    }
    apply_ok(&mut g, MEDICI, &draw());
    assert_illegal(&g, MEDICI, &offer(11), "§B9 M9"); // above max_price
    apply_ok(&mut g, MEDICI, &offer(10));
    // Deciding.
    for wrong in [draw(), offer(1), load(3, Some(0)), discard()] {
        assert_illegal(&g, STROZZI, &wrong, "§B4"); // wrong phase
    }
    apply_ok(&mut g, STROZZI, &buy());
    // Loading.
    for wrong in [draw(), offer(1), buy(), decline()] {
        assert_illegal(&g, STROZZI, &wrong, "§B4"); // wrong phase
    }
    assert_illegal(&g, STROZZI, &load(3, None), "§B4"); // an empty ship needs a harbour

    // Malformed actions and out-of-turn actions leave the state untouched too.
    let before = encode(&g);
    assert!(matches!(
        g.apply(STROZZI, &pb::Action::default()),
        Err(ActionError::Malformed(_))
    ));
    assert!(matches!(
        g.apply(STROZZI, &load(6, Some(0))),
        Err(ActionError::Malformed(_))
    ));
    // A refusal names harbours as the board does, with the number a client sends.
    match g.apply(STROZZI, &load(3, Some(3))) {
        Err(ActionError::Malformed(message)) => assert_eq!(
            message,
            "harbour 3 does not exist: the board's harbours are harbour A (0), harbour B (1) and \
             harbour C (2)"
        ),
        other => panic!("a fourth harbour: {other:?}"),
    }
    assert!(matches!(
        g.apply(MEDICI, &discard()),
        Err(ActionError::NotYourTurn { rule: "§B4", .. })
    ));
    assert!(matches!(
        g.apply(9, &discard()),
        Err(ActionError::NotYourTurn { .. })
    ));
    assert_eq!(encode(&g), before);
    // The other illegal kinds (§B4 M3, §B4 M4, §B4 M7, harbour rules) are asserted in the
    // scenario tests above.
}

/// The integer extremes in every client-chosen field are refused (or, for a price within a
/// `u32::MAX` cap, accepted without overflow), and a refusal leaves the state byte-identical.
#[test]
fn extreme_field_values_never_overflow() {
    let mut g = game();
    apply_ok(&mut g, MEDICI, &draw());
    assert_illegal(&g, MEDICI, &offer(u32::MAX), "§B9 M9");
    apply_ok(&mut g, MEDICI, &offer(0));
    apply_ok(&mut g, STROZZI, &buy());
    let before = encode(&g);
    for (ship, harbour) in [
        (u32::MAX, None),
        (u32::MAX, Some(u32::MAX)),
        (3, Some(u32::MAX)),
        (0, Some(0)),
    ] {
        assert!(matches!(
            g.apply(STROZZI, &load(ship, harbour)),
            Err(ActionError::Malformed(_))
        ));
        assert_eq!(encode(&g), before);
    }
    for seat in [2, u32::MAX] {
        assert!(matches!(
            g.apply(seat, &discard()),
            Err(ActionError::NotYourTurn { .. })
        ));
    }
    assert_eq!(encode(&g), before);

    // The highest cap a config can set: every purchase at u32::MAX still adds up exactly (loans
    // are unlimited, spec B8), far from the i64 limits over a whole game.
    let mut rich = game_with(&pb::Config {
        marker_movement: 0,
        max_price: u32::MAX,
    });
    for _ in 0..3 {
        let seat = rich.to_act().expect("running");
        apply_ok(&mut rich, seat, &draw());
        apply_ok(&mut rich, seat, &offer(u32::MAX));
        apply_ok(&mut rich, opponent(seat), &decline());
        apply_ok(&mut rich, seat, &discard());
        assert_eq!(
            rich.player(seat).money,
            STARTING_MONEY - i64::from(u32::MAX)
        );
        set_money(&mut rich, seat, STARTING_MONEY);
    }
}
