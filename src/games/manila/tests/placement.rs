//! Placement rounds, costs, options and stowaways (spec §4.3, §5, §9 A7, A9, A18).

use super::*;

#[test]
fn placement_costs_and_cheapest_slot_first() {
    let mut state = launched(
        &cfg(4),
        &[(Ware::Nutmeg, 3), (Ware::Silk, 3), (Ware::Jade, 3)],
    );
    use Space::*;
    rig(&mut state, [1, 1, 1]);
    for (seat, cost) in [3, 4, 5, 5].into_iter().enumerate() {
        let events = place(&mut state, Crew(Ware::Jade));
        assert!(has_event(&events, |e| matches!(e, E::AccomplicePlaced(p)
            if p.cost == cost && p.slot == seat as u32)));
        assert_eq!(cash(&state, seat as u32), 30 - cost);
    }
    // Jade is full; ginseng is not loaded.
    assert_illegal(&state, 0, &action(place_kind(Crew(Ware::Jade))), "§4.3");
    assert_illegal(&state, 0, &action(place_kind(Crew(Ware::Ginseng))), "§4.2");
    let fixed = [
        (Pirate, 5),
        (Pirate, 5),
        (SmallPilot, 2),
        (LargePilot, 5),
        (Harbour(0), 4),
        (Harbour(1), 3),
    ];
    for (space, cost) in fixed {
        let seat = state.to_act().expect("someone places");
        let before = cash(&state, seat);
        place(&mut state, space);
        assert_eq!(before - cash(&state, seat), cost, "{space:?}");
    }
    assert_eq!(state.voyage.pirates, [Some(0), Some(1)]);
    assert_eq!(state.to_act(), Some(2));
    for taken in [Pirate, Harbour(0), SmallPilot, LargePilot] {
        assert_illegal(&state, 2, &action(place_kind(taken)), "§4.3");
    }
    assert_malformed(
        &state,
        2,
        Some(A::PlaceAccomplice(pb::PlaceAccomplice::default())),
    );
    assert_malformed(
        &state,
        2,
        Some(A::PlaceAccomplice(pb::PlaceAccomplice {
            kind: pb::SpaceKind::Pirate as i32,
            ware: Ware::Jade.to_pb(),
            berth: 0,
        })),
    );
    assert_malformed(
        &state,
        2,
        Some(A::PlaceAccomplice(pb::PlaceAccomplice {
            kind: pb::SpaceKind::Harbour as i32,
            ware: 0,
            berth: 0,
        })),
    );
    // Insurance costs nothing and pays 10 at once.
    let before = cash(&state, 2);
    let events = place(&mut state, Insurance);
    assert!(has_event(
        &events,
        |e| matches!(e, E::AccomplicePlaced(p) if p.received == 10 && p.cost == 0)
    ));
    assert_eq!(cash(&state, 2), before + 10);
    let before = cash(&state, 3);
    place(&mut state, Harbour(2));
    assert_eq!(before - cash(&state, 3), 2);
    // The last placement round is over: the small pilot (seat 2) acts before roll 3.
    assert_eq!(state.phase, Phase::Pilot { large: false });
}

#[test]
fn declining_ends_a_players_placements_for_the_voyage() {
    let mut state = launched(
        &cfg(4),
        &[(Ware::Nutmeg, 3), (Ware::Silk, 3), (Ware::Jade, 3)],
    );
    use Space::*;
    play_rounds(
        &mut state,
        &[(
            &[Some(Harbour(0)), None, Some(Harbour(1)), Some(Harbour(2))],
            [1, 1, 1],
        )],
    );
    // Round 2: seat 1 is skipped.
    assert_eq!(state.to_act(), Some(0));
    place(&mut state, Shipyard(0));
    assert_eq!(state.to_act(), Some(2));
    assert!(state.players[1].declined);
}

#[test]
fn three_players_place_twice_before_the_first_roll() {
    let mut state = launched(
        &cfg(3),
        &[(Ware::Nutmeg, 3), (Ware::Silk, 3), (Ware::Jade, 3)],
    );
    assert_eq!(state.players[0].in_hand, 4);
    let mut events = Vec::new();
    for space in [Space::Harbour(0), Space::Harbour(1), Space::Harbour(2)] {
        events.extend(place(&mut state, space));
    }
    assert!(!has_event(&events, |e| matches!(e, E::DiceRolled(_))));
    assert_eq!(state.to_act(), Some(0));
    let mut events = Vec::new();
    for space in [Space::Shipyard(0), Space::Shipyard(1), Space::Shipyard(2)] {
        events.extend(place(&mut state, space));
    }
    assert!(has_event(
        &events,
        |e| matches!(e, E::DiceRolled(d) if d.roll == 1)
    ));
    assert_eq!(
        state.build_view(Viewer::Spectator).placement_rounds_total,
        4
    );
}

#[test]
fn fan_timing_option_moves_the_extra_round_before_roll_two() {
    let config = pb::Config {
        players: 3,
        three_player_extra_round_before_roll_two: true,
        ..Default::default()
    };
    let mut state = launched(
        &config,
        &[(Ware::Nutmeg, 3), (Ware::Silk, 3), (Ware::Jade, 3)],
    );
    let mut events = Vec::new();
    for space in [Space::Harbour(0), Space::Harbour(1), Space::Harbour(2)] {
        events.extend(place(&mut state, space));
    }
    assert!(has_event(
        &events,
        |e| matches!(e, E::DiceRolled(d) if d.roll == 1)
    ));
    let mut events = Vec::new();
    for space in [Space::Shipyard(0), Space::Shipyard(1), Space::Shipyard(2)] {
        events.extend(place(&mut state, space));
    }
    assert!(!has_event(&events, |e| matches!(e, E::DiceRolled(_))));
    let events = round_three(&mut state);
    assert!(has_event(
        &events,
        |e| matches!(e, E::DiceRolled(d) if d.roll == 2)
    ));
}

fn round_three(state: &mut Manila) -> Vec<pb::Event> {
    let mut events = Vec::new();
    for _ in 0..3 {
        events.extend(decline(state));
        if state.to_act().is_none() || state.voyage.rolls >= 2 {
            break;
        }
    }
    events
}

#[test]
fn placing_on_a_docked_punt_is_allowed_unless_the_option_forbids_it() {
    for forbid in [false, true] {
        let config = pb::Config {
            players: 4,
            forbid_placing_on_docked: forbid,
            ..Default::default()
        };
        let mut state = launched(
            &config,
            &[(Ware::Nutmeg, 2), (Ware::Silk, 2), (Ware::Jade, 5)],
        );
        use Space::*;
        play_rounds(
            &mut state,
            &[
                (
                    &[
                        Some(Shipyard(0)),
                        Some(Shipyard(1)),
                        Some(Shipyard(2)),
                        Some(SmallPilot),
                    ],
                    [1, 2, 6],
                ),
                (
                    &[Some(Harbour(2)), Some(LargePilot), Some(Insurance), None],
                    [4, 2, 5],
                ),
            ],
        );
        // Jade lies in berth A; round 3 starts with seat 0.
        assert_eq!(punt(&state, Ware::Jade).place, PuntPlace::Harbour(0));
        assert_eq!(state.to_act(), Some(0));
        for space in [Crew(Ware::Jade), Harbour(0)] {
            if forbid {
                assert_illegal(&state, 0, &action(place_kind(space)), "§9 A7");
            } else {
                assert!(
                    state
                        .clone()
                        .apply(
                            0,
                            &pb::Action {
                                kind: Some(place_kind(space))
                            }
                        )
                        .is_ok()
                );
            }
        }
        // Wharf B has no punt yet: always allowed.
        assert!(
            state
                .clone()
                .apply(
                    0,
                    &pb::Action {
                        kind: Some(place_kind(Harbour(1)))
                    }
                )
                .is_ok()
        );
    }
}

#[test]
fn a_broke_player_may_take_the_free_insurance_or_stow_away() {
    let mut state = launched(
        &cfg(4),
        &[(Ware::Nutmeg, 3), (Ware::Silk, 3), (Ware::Jade, 3)],
    );
    // Seat 0: no cash and every share mortgaged.
    state.players[0].cash = 0;
    state.players[0].mortgaged = state.players[0].holdings();
    let listing = listed(&state);
    let offered = |space: Space| {
        listing.contains(&pb::Action {
            kind: Some(place_kind(space)),
        })
    };
    assert!(offered(Space::Insurance));
    assert!(offered(Space::Crew(Ware::Nutmeg)) && offered(Space::Crew(Ware::Jade)));
    assert!(!offered(Space::Harbour(2)));
    assert_illegal(&state, 0, &action(place_kind(Space::Harbour(2))), "§5");
    place(&mut state, Space::Insurance);
    assert_eq!(cash(&state, 0), 10);
}

#[test]
fn stowaway_rules_in_detail() {
    let mut state = launched(
        &cfg(4),
        &[(Ware::Nutmeg, 3), (Ware::Silk, 3), (Ware::Jade, 3)],
    );
    play_rounds(
        &mut state,
        &[(
            &[
                Some(Space::Harbour(0)),
                Some(Space::Insurance),
                Some(Space::Harbour(1)),
                None,
            ],
            [1, 1, 1],
        )],
    );
    // Round 2, seat 0: broke (nothing to pay with) -> free crew slot.
    state.players[0].cash = 0;
    state.players[0].mortgaged = state.players[0].holdings();
    let events = place(&mut state, Space::Crew(Ware::Silk));
    assert!(has_event(
        &events,
        |e| matches!(e, E::AccomplicePlaced(p) if p.stowaway && p.cost == 0)
    ));
    // Seat 1 is the insurer: barred from stowing away by default (spec §9 A9).
    state.players[1].cash = 0;
    state.players[1].mortgaged = state.players[1].holdings();
    assert_illegal(
        &state,
        1,
        &action(place_kind(Space::Crew(Ware::Silk))),
        "§5",
    );
    let mut allowed = state.clone();
    allowed.options.stowaway_insurer_allowed = true;
    assert!(
        allowed
            .apply(
                1,
                &pb::Action {
                    kind: Some(place_kind(Space::Crew(Ware::Silk)))
                }
            )
            .is_ok()
    );
    decline(&mut state);
    // Seat 2: cash 1, no free share, insurance taken; the cheapest open space costs 2 (harbour
    // C, small pilot, shipyard C, nutmeg slot) -> every space is too dear: stowaway allowed.
    state.players[2].cash = 1;
    state.players[2].mortgaged = state.players[2].holdings();
    assert!(state.may_stow_away(2));
    let events = place(&mut state, Space::Crew(Ware::Nutmeg));
    assert!(has_event(
        &events,
        |e| matches!(e, E::AccomplicePlaced(p) if p.stowaway && p.seat == 2)
    ));
    assert_eq!(cash(&state, 2), 1);
}
