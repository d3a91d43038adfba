//! The spec's worked examples: the rulebook's three-turn example and the §10 example road.

use super::*;

#[test]
fn the_rulebook_three_turn_example() {
    let mut state = example_game();
    assert_eq!(state.to_act(), Some(GREY));
    assert_eq!(state.round(), 1);
    assert_eq!(state.player(GREY).resources, 6, "first turn: 6 resources");

    // Turn 1, grey: a straight hill tile to the town (4), then a curved plains tile to the city (2).
    let events = apply_ok(&mut state, GREY, &road(GREY_WORKSHOP, &[(-3, 6)], TOWN));
    let built = road_built(&events);
    assert_eq!((built.cost, built.resources), (4, 2));
    assert_eq!(built.tiles[0].face, pb::Face::Straight as i32);
    assert_eq!(built.tiles[0].terrain, pb::Terrain::Hill as i32);
    assert_eq!(built.target_kind, pb::SettlementKind::Town as i32);
    assert!(built.merchant_placed);
    let events = apply_ok(&mut state, GREY, &road(TOWN, &[(-3, 5)], CITY));
    let built = road_built(&events);
    assert_eq!((built.cost, built.resources), (2, 0));
    assert_eq!(built.tiles[0].face, pb::Face::Curve as i32);
    assert_eq!(state.player(GREY).merchants_left, 10);
    assert_eq!(state.player(GREY).supply, [17, 8, 4]);
    assert_eq!(
        state.legal_actions(GREY),
        vec![LegalAction::Exact(end_turn())],
        "nothing affordable at 0"
    );
    apply_ok(&mut state, GREY, &end_turn());

    // Black connects the far city; the third player passes.
    assert_eq!(state.player(BLACK).resources, 6);
    apply_ok(
        &mut state,
        BLACK,
        &road(BLACK_WORKSHOP, &[(-6, 2)], BLACK_CITY),
    );
    apply_ok(&mut state, BLACK, &end_turn());
    apply_ok(&mut state, WHITE, &end_turn());

    // Turn 2, grey: 6 resources, not enough to reach black's city this turn.
    assert_eq!(state.player(GREY).resources, 6);
    assert!(!targets(&listed_roads(&state, GREY)).contains(&BLACK_CITY));
    assert_eq!(state.gold()[BLACK as usize], 5, "black alone in the city");
    // Three plains tiles to the two hamlets, two merchants, all 6 resources.
    apply_ok(
        &mut state,
        GREY,
        &road(GREY_WORKSHOP, &[(-4, 6)], HAMLET_WEST),
    );
    let events = apply_ok(
        &mut state,
        GREY,
        &road(CITY, &[(-3, 3), (-3, 2)], HAMLET_NORTH),
    );
    assert_eq!(road_built(&events).resources, 0);
    assert_eq!(state.player(GREY).merchants_left, 8);
    assert_eq!(state.player(GREY).supply, [14, 8, 4]);
    apply_ok(&mut state, GREY, &end_turn());

    // Black could run a road along the map edge to grey's western hamlet; it saves instead.
    let edge_road = road(BLACK_CITY, &[(-6, 4), (-6, 5), (-6, 6)], HAMLET_WEST);
    assert!(listed_roads(&state, BLACK).contains(&edge_road));
    apply_ok(&mut state, BLACK, &end_turn());
    apply_ok(&mut state, WHITE, &end_turn());

    // Turn 3, grey: black's city is now one forest tile (3) away, and also three plains tiles (6)
    // away along the edge. Both are listed; grey takes the detour to wall black off.
    let forest_road = road(HAMLET_NORTH, &[(-5, 2)], BLACK_CITY);
    let detour = road(HAMLET_WEST, &[(-6, 6), (-6, 5), (-6, 4)], BLACK_CITY);
    let listed = listed_roads(&state, GREY);
    assert!(listed.contains(&forest_road));
    assert!(listed.contains(&detour));
    let mut forest_state = state.clone();
    assert_eq!(
        road_built(&apply_ok(&mut forest_state, GREY, &forest_road)).cost,
        3
    );
    let events = apply_ok(&mut state, GREY, &detour);
    let built = road_built(&events);
    assert_eq!((built.cost, built.resources), (6, 0));
    assert_eq!(
        state
            .site_at(hex(BLACK_CITY.0, BLACK_CITY.1))
            .expect("site")
            .merchants
            .as_slice(),
        [BLACK, GREY]
    );
    // Grey will earn 4 there; black has lost 1 (5 → 4).
    let gold = state.gold();
    assert_eq!(gold[GREY as usize], 4 + 5 + 2 + 2 + 4);
    assert_eq!(gold[BLACK as usize], 4);
    apply_ok(&mut state, GREY, &end_turn());
    // Black's turn 3: the edge is blocked.
    assert_eq!(state.to_act(), Some(BLACK));
    assert!(!listed_roads(&state, BLACK).contains(&edge_road));
    assert_illegal(&state, BLACK, &edge_road, "§5.3");
}

#[test]
fn the_spec_example_road_is_a_straight_tile() {
    // Spec §10: workshop (1,-2), one plains tile at (0,-2) with ends E and W, reaches (-1,-2).
    let rng = GameRng::from_seed(&Seed::from_u64(0));
    let mut state = LaStrada::with_layout(
        options(2),
        rng,
        MapData::default_arrangement(),
        &MAP.settlement_tiles,
        0,
    );
    for (seat, (q, r)) in [(0, (1, -2)), (1, (-6, 4)), (0, (3, 4)), (1, (-6, -1))] {
        apply_ok(&mut state, seat, &workshop(q, r));
    }
    let mut state0 = state.clone();
    state0.phase = Phase::Playing { seat: 0 };
    state0.players[0].resources = 6;
    let events = apply_ok(&mut state0, 0, &road((1, -2), &[(0, -2)], (-1, -2)));
    let tile = &road_built(&events).tiles[0];
    assert_eq!(
        (tile.edge_in, tile.edge_out, tile.face),
        (0, 3, pb::Face::Straight as i32)
    );
    assert_eq!(road_built(&events).cost, 2);
    assert_eq!(
        state0.occupant(hex(0, -2)),
        Occupant::Tile(PlacedTile {
            owner: 0,
            edge_in: 0,
            edge_out: 3
        })
    );
}
