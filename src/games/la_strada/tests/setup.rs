//! Setup (spec §3): the random layout, the config, workshop placement (§3.5, §9), and the opening
//! event that shows what setup drew.

use super::*;

#[test]
fn setup_arranges_the_pieces_and_settlements_at_random() {
    let mut start_positions = BTreeSet::new();
    let mut arrangements = BTreeSet::new();
    let mut city_sites = BTreeSet::new();
    let mut start_seats = BTreeSet::new();
    for seed in 0..200 {
        let state = LaStrada::setup(&config(4), &Seed::from_u64(seed)).expect("setup");
        let mut pieces = state.arrangement.to_vec();
        pieces.sort_unstable();
        assert_eq!(pieces, (0..6).collect::<Vec<_>>());
        start_positions.insert(state.arrangement.iter().position(|p| *p == MAP.start_piece));
        arrangements.insert(state.arrangement);
        city_sites.extend(
            state
                .sites
                .iter()
                .enumerate()
                .filter(|(_, s)| s.kind == SettlementKind::City)
                .map(|(i, _)| i),
        );
        start_seats.insert(state.start_seat);
        state.check_invariants().expect("invariants after setup");
        assert_eq!(state.to_act(), Some(state.start_seat));
    }
    assert_eq!(
        start_positions.len(),
        6,
        "the start piece goes in every position"
    );
    assert!(
        arrangements.len() > 150,
        "arrangements vary: {}",
        arrangements.len()
    );
    assert_eq!(
        city_sites.len(),
        19,
        "cities land on every site slot over 200 games"
    );
    assert_eq!(start_seats.len(), 4);
    let a = LaStrada::setup(&config(3), &Seed::from_u64(9)).expect("setup");
    let b = LaStrada::setup(&config(3), &Seed::from_u64(9)).expect("setup");
    assert_eq!(
        postcard::to_stdvec(&a).expect("ser"),
        postcard::to_stdvec(&b).expect("ser")
    );
}

#[test]
fn config_is_validated_and_zero_means_default() {
    for players in [0, 1, 5] {
        assert!(LaStrada::setup(&config(players), &Seed::from_u64(0)).is_err());
    }
    let defaults = options(2);
    assert_eq!(defaults.curve, CurveRule::Gentle);
    assert_eq!(defaults.end_budget, EndBudgetRule::Cap);
    assert_eq!(defaults.workshop_spacing, WorkshopSpacingRule::OtherPlayers);
    assert!(!defaults.first_placer_starts);
    let bad = pb::Config {
        players: 3,
        curve: 9,
        ..pb::Config::default()
    };
    assert!(LaStrada::setup(&bad, &Seed::from_u64(0)).is_err());
    let bad = pb::Config {
        players: 3,
        end_budget: 7,
        ..pb::Config::default()
    };
    assert!(LaStrada::setup(&bad, &Seed::from_u64(0)).is_err());
    let all = pb::Config {
        players: 2,
        curve: pb::Curve::Both as i32,
        end_budget: pb::EndBudget::Current as i32,
        workshop_spacing: pb::WorkshopSpacing::All as i32,
        two_player_first_turn: pb::TwoPlayerFirstTurn::FirstPlacer as i32,
    };
    let options = Options::from_pb(&all).expect("valid");
    assert_eq!(
        options,
        Options {
            players: 2,
            curve: CurveRule::Both,
            end_budget: EndBudgetRule::Current,
            workshop_spacing: WorkshopSpacingRule::All,
            first_placer_starts: true,
        }
    );
}

#[test]
fn workshop_placement_rules() {
    let mut state = example_setup_with(options(3));
    // Not on forest, hill or a site; not out of turn; no road or end of turn yet.
    assert_illegal(&state, GREY, &workshop(-5, 7), "§3.5"); // forest
    assert_illegal(&state, GREY, &workshop(-3, 6), "§3.5"); // hill
    assert_illegal(&state, GREY, &workshop(TOWN.0, TOWN.1), "§3.5");
    assert_illegal(&state, GREY, &end_turn(), "§3.5");
    assert_illegal(&state, GREY, &road(GREY_WORKSHOP, &[(-3, 6)], TOWN), "§4");
    assert!(matches!(
        try_apply(&mut state, BLACK, &workshop(0, 1)),
        Err(ActionError::NotYourTurn { .. })
    ));
    assert!(matches!(
        try_apply(&mut state, GREY, &workshop(0, 99)),
        Err(ActionError::Malformed(_))
    ));
    let listed = state.legal_actions(GREY);
    assert_eq!(
        listed.len(),
        87,
        "every plains hex is open to the first workshop"
    );
    apply_ok(
        &mut state,
        GREY,
        &workshop(GREY_WORKSHOP.0, GREY_WORKSHOP.1),
    );
    // Black may not take the hex, nor a neighbour of grey's workshop; distance 2 is fine.
    assert_illegal(
        &state,
        BLACK,
        &workshop(GREY_WORKSHOP.0, GREY_WORKSHOP.1),
        "§3.5",
    );
    assert_illegal(&state, BLACK, &workshop(-4, 6), "§3.5");
    let black_listing = state.legal_actions(BLACK);
    assert!(!black_listing.contains(&LegalAction::Exact(workshop(-4, 6))));
    assert!(black_listing.contains(&LegalAction::Exact(workshop(-4, 5))));
    apply_ok(&mut state, BLACK, &workshop(-4, 5));
    apply_ok(
        &mut state,
        WHITE,
        &workshop(WHITE_WORKSHOP.0, WHITE_WORKSHOP.1),
    );
    assert_eq!(state.to_act(), Some(GREY));
    assert_illegal(&state, GREY, &workshop(0, 1), "§3.5");
}

#[test]
fn two_player_placement_order_and_first_turn() {
    for (first_placer_starts, expected_first) in [(false, 1), (true, 0)] {
        let options = Options {
            first_placer_starts,
            ..options(2)
        };
        let kinds = MAP.settlement_tiles.clone();
        let rng = GameRng::from_seed(&Seed::from_u64(0));
        let mut state =
            LaStrada::with_layout(options, rng, MapData::default_arrangement(), &kinds, 0);
        // P1 P2 P1 P2 (spec §9), own workshops may be adjacent by default.
        assert_eq!(state.to_act(), Some(0));
        apply_ok(&mut state, 0, &workshop(1, -2));
        assert_eq!(state.to_act(), Some(1));
        apply_ok(&mut state, 1, &workshop(-3, 4));
        assert_eq!(state.to_act(), Some(0));
        apply_ok(&mut state, 0, &workshop(1, -3));
        assert_eq!(state.to_act(), Some(1));
        apply_ok(&mut state, 1, &workshop(-6, 4));
        assert_eq!(
            state.to_act(),
            Some(expected_first),
            "first turn (ruling A10)"
        );
        assert_eq!(state.player(expected_first).resources, 6);
        assert_eq!(state.player(1 - expected_first).resources, 0);
        assert_eq!(
            state.hubs(0),
            vec![hex(1, -2), hex(1, -3)],
            "both workshops are hubs"
        );
    }
    // Spacing option ALL: your own workshops must also be apart (ruling A7).
    let options = Options {
        workshop_spacing: WorkshopSpacingRule::All,
        ..options(2)
    };
    let rng = GameRng::from_seed(&Seed::from_u64(0));
    let mut state = LaStrada::with_layout(
        options,
        rng,
        MapData::default_arrangement(),
        &MAP.settlement_tiles,
        0,
    );
    apply_ok(&mut state, 0, &workshop(1, -2));
    apply_ok(&mut state, 1, &workshop(-3, 4));
    assert_illegal(&state, 0, &workshop(1, -3), "§3.5");
    apply_ok(&mut state, 0, &workshop(0, -4));
}

fn game_set_up(events: &[pb::Event]) -> &pb::GameSetUp {
    match events {
        [
            pb::Event {
                kind: Some(pb::event::Kind::GameSetUp(set_up)),
            },
        ] => set_up,
        other => panic!("expected exactly one GameSetUp opening event, got {other:?}"),
    }
}

#[test]
fn the_opening_event_shows_what_setup_drew() {
    for (players, first_placer_starts) in [(2, false), (2, true), (3, false), (4, false)] {
        let config = pb::Config {
            players,
            two_player_first_turn: if first_placer_starts {
                pb::TwoPlayerFirstTurn::FirstPlacer as i32
            } else {
                pb::TwoPlayerFirstTurn::SecondPlacer as i32
            },
            ..pb::Config::default()
        };
        for seed in 0..20 {
            let mut state = LaStrada::setup(&config, &Seed::from_u64(seed)).expect("setup");
            let opening = state.opening_events();
            let set_up = game_set_up(&opening).clone();
            let view = state.view(Viewer::Spectator);
            assert_eq!(set_up.arrangement, view.arrangement);
            assert_eq!(set_up.settlements, view.settlements);
            assert_eq!(set_up.settlements.len(), 19);
            assert_eq!(set_up.start_seat, view.start_seat);
            // The placement order is the order in which seats are asked to place, and the first
            // turn goes to the seat the event names (spec §3.5, §3.6, §9).
            let mut asked = Vec::new();
            let mut events = Vec::new();
            while let Phase::PlacingWorkshops { .. } = state.phase {
                let seat = state.to_act().expect("a placer");
                asked.push(seat);
                let Some(LegalAction::Exact(action)) = state.legal_actions(seat).first().cloned()
                else {
                    panic!("no workshop hex for seat {seat}");
                };
                events = apply_ok(&mut state, seat, &action);
            }
            assert_eq!(
                set_up.placement_order, asked,
                "{players} players, seed {seed}"
            );
            assert_eq!(
                turn_started(&events).map(|t| t.seat),
                Some(set_up.first_turn_seat)
            );
            let expected_first = if players == 2 && !first_placer_starts {
                asked[1]
            } else {
                asked[0]
            };
            assert_eq!(set_up.first_turn_seat, expected_first);
            // The event describes setup, whenever it is asked for.
            assert_eq!(state.opening_events(), opening);
        }
    }
}

#[test]
fn the_workshop_listing_is_exactly_the_hexes_the_placement_check_accepts() {
    // The listing reads the spacing from the map's distance table; the placement check measures
    // it hex by hex (spec §3.5, ruling A7). Every seat, at every placement, under both spacing
    // options and every player count: the same hexes.
    let mut compared = 0;
    for spacing in [pb::WorkshopSpacing::OtherPlayers, pb::WorkshopSpacing::All] {
        for players in 2..=4 {
            let config = pb::Config {
                players,
                workshop_spacing: spacing as i32,
                ..pb::Config::default()
            };
            for seed in 0..6 {
                let mut state = LaStrada::setup(&config, &Seed::from_u64(seed)).expect("setup");
                let mut rng = GameRng::from_seed(&Seed::from_u64(seed + 100));
                while matches!(state.phase, Phase::PlacingWorkshops { .. }) {
                    for seat in 0..players {
                        let checked: Vec<HexId> = (0..MAP.hexes.len() as HexId)
                            .filter(|hex| state.workshop_spot_error(seat, *hex).is_none())
                            .collect();
                        assert_eq!(state.legal_workshop_hexes(seat), checked);
                        compared += 1;
                    }
                    let seat = state.to_act().expect("a seat places");
                    let action = state.random_action(seat, &mut rng).expect("a hex is open");
                    apply_ok(&mut state, seat, &action);
                }
            }
        }
    }
    assert!(compared > 100, "compared {compared} listings");
}
