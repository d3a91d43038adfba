//! Refusals: each rule of §5 named, malformed and out-of-turn actions, and hostile values (integer
//! extremes, huge lists, unknown seats) refused without a state change or an unbounded message.

use super::*;

#[test]
fn illegal_roads_are_rejected_with_the_rule_named() {
    let mut state = example_game();
    let g = GREY;
    // §5.1: the town is not yet a hub.
    assert_illegal(&state, g, &road(TOWN, &[(-3, 5)], CITY), "§5.1");
    // Ruling A4: at least one tile.
    assert_illegal(&state, g, &road(GREY_WORKSHOP, &[], TOWN), "§12 A4");
    // §5.2: the target must be a settlement, never a workshop.
    assert_illegal(&state, g, &road(GREY_WORKSHOP, &[(-4, 6)], (-4, 5)), "§5.2");
    assert_illegal(
        &state,
        g,
        &road(GREY_WORKSHOP, &[(-3, 6)], BLACK_WORKSHOP),
        "§5.2",
    );
    // §5.3: no tile on a settlement, a workshop, a road tile; no hex twice.
    assert_illegal(
        &state,
        g,
        &road(GREY_WORKSHOP, &[(-3, 6), TOWN], CITY),
        "§5.3",
    );
    assert_illegal(
        &state,
        g,
        &road(GREY_WORKSHOP, &[BLACK_WORKSHOP], CITY),
        "§5.3",
    );
    assert_illegal(
        &state,
        g,
        &road(GREY_WORKSHOP, &[(-4, 6), (-4, 6)], HAMLET_WEST),
        "§5.3",
    );
    // §5.4: the road must be continuous.
    assert_illegal(&state, g, &road(GREY_WORKSHOP, &[(-3, 5)], CITY), "§5.4");
    assert_illegal(&state, g, &road(GREY_WORKSHOP, &[(-4, 6)], CITY), "§5.4");
    // §5.5: no sharp turn under the gentle rule.
    assert_illegal(
        &state,
        g,
        &road(GREY_WORKSHOP, &[(-4, 6), (-5, 7)], HAMLET_WEST),
        "§5.5",
    );
    // §5.6: tiles of the hex's own terrain from the supply.
    let mut no_hills = state.clone();
    no_hills.players[g as usize].supply[2] = 0;
    assert_illegal(&no_hills, g, &road(GREY_WORKSHOP, &[(-3, 6)], TOWN), "§5.6");
    // Build the town (4 of 6 resources).
    apply_ok(&mut state, g, &road(GREY_WORKSHOP, &[(-3, 6)], TOWN));
    // §5.7: the forest tile (3) is more than the 2 resources left.
    assert_illegal(
        &state,
        g,
        &road(GREY_WORKSHOP, &[(-5, 7)], HAMLET_WEST),
        "§5.7",
    );
    // §5.3: the hill hex now holds grey's own road: roads never merge.
    assert_illegal(
        &state,
        g,
        &road(GREY_WORKSHOP, &[(-3, 6), (-2, 6)], CITY),
        "§5.3",
    );
    // §5.2: not back to the hub, not to a settlement already connected (several roads per turn,
    // but each to a new settlement).
    assert_illegal(&state, g, &road(TOWN, &[(-3, 5)], TOWN), "§5.2");
    assert_illegal(
        &state,
        g,
        &road(GREY_WORKSHOP, &[(-4, 6), (-4, 5)], TOWN),
        "§5.2",
    );
    // §5.2: a merchant is needed for a 3-4 player connection.
    let mut no_merchants = state.clone();
    no_merchants.players[g as usize].merchants_left = 0;
    no_merchants.forget_search_cache();
    assert_illegal(&no_merchants, g, &road(TOWN, &[(-3, 5)], CITY), "§5.2");
    assert!(listed_roads(&no_merchants, g).is_empty());
    // Chaining (ruling A3): the town just connected is already a hub.
    apply_ok(&mut state, g, &road(TOWN, &[(-3, 5)], CITY));
    // Malformed and out-of-turn actions.
    assert!(matches!(
        try_apply(&mut state, g, &pb::Action::default()),
        Err(ActionError::Malformed(_))
    ));
    let missing_hub = pb::Action {
        kind: Some(pb::action::Kind::BuildRoad(pb::BuildRoad {
            hub: None,
            tiles: vec![pb_hex(-4, 6)],
            target: Some(pb_hex(-5, 6)),
        })),
    };
    assert!(matches!(
        try_apply(&mut state, g, &missing_hub),
        Err(ActionError::Malformed(_))
    ));
    let far = road(GREY_WORKSHOP, &[(i32::MAX, i32::MIN)], HAMLET_WEST);
    assert!(matches!(
        try_apply(&mut state, g, &far),
        Err(ActionError::Malformed(_))
    ));
    let long = road(GREY_WORKSHOP, &[(-4, 6); 40], HAMLET_WEST);
    assert!(matches!(
        try_apply(&mut state, g, &long),
        Err(ActionError::Malformed(_))
    ));
    assert!(matches!(
        try_apply(&mut state, 7, &end_turn()),
        Err(ActionError::Malformed(_))
    ));
    assert!(matches!(
        try_apply(&mut state, BLACK, &end_turn()),
        Err(ActionError::NotYourTurn { .. })
    ));
    assert_illegal(&state, g, &workshop(0, 1), "§3.5");
}

#[test]
fn extreme_client_values_are_refused_without_a_change() {
    let state = example_game();
    let extremes = [
        i32::MIN,
        i32::MIN + 1,
        -1_000_000,
        -8,
        8,
        1_000_000,
        i32::MAX,
    ];
    let mut refused = 0;
    for &q in &extremes {
        for &r in &extremes.iter().chain(&[0]).copied().collect::<Vec<_>>() {
            for action in [
                workshop(q, r),
                road((q, r), &[(-3, 6)], TOWN),
                road(GREY_WORKSHOP, &[(q, r)], TOWN),
                road(GREY_WORKSHOP, &[(-3, 6)], (q, r)),
            ] {
                let mut probe = state.clone();
                let result = probe.apply(GREY, &action);
                assert!(
                    matches!(
                        result,
                        Err(ActionError::Malformed(_) | ActionError::Illegal { .. })
                    ),
                    "{action:?}: {result:?}"
                );
                assert_eq!(
                    encode(&probe),
                    encode(&state),
                    "{action:?} changed the state"
                );
                let message = result.err().map(|e| e.to_string()).unwrap_or_default();
                assert!(message.len() < 200, "unbounded message: {message}");
                refused += 1;
            }
        }
    }
    assert_eq!(refused, extremes.len() * (extremes.len() + 1) * 4);
    // Seats outside the table, however large, and a road longer than anyone's supply.
    for seat in [3, 4, u32::MAX] {
        let mut probe = state.clone();
        assert!(matches!(
            probe.apply(seat, &end_turn()),
            Err(ActionError::Malformed(_))
        ));
        assert_eq!(encode(&probe), encode(&state));
    }
    let long: Vec<(i32, i32)> = (0..100_000).map(|i| (i % 7, -(i % 7))).collect();
    let mut probe = state.clone();
    let result = probe.apply(GREY, &road(GREY_WORKSHOP, &long, TOWN));
    assert!(
        matches!(result, Err(ActionError::Malformed(_))),
        "{result:?}"
    );
    assert!(
        result
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
            .len()
            < 200
    );
    assert_eq!(encode(&probe), encode(&state));
}
