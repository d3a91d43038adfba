//! Pirates: boarding after roll 2, the pirate variant and plunder (spec §4.5, §4.7, §8, §9 A8,
//! A13).

use super::*;

#[test]
fn boarding_order_when_the_captain_stays() {
    let mut state = boarding_scene(&cfg(4));
    act(&mut state, A::StayAboard(pb::StayAboard {}));
    // The second pirate decides next and boards; the captain keeps the bow.
    assert_eq!(state.to_act(), Some(1));
    act(
        &mut state,
        A::BoardPunt(pb::BoardPunt {
            ware: Ware::Ginseng.to_pb(),
            displace_slot: None,
        }),
    );
    assert_eq!(state.voyage.pirates, [Some(0), None]);
    assert_eq!(punt(&state, Ware::Ginseng).crew, vec![2, 3, 1]);
}

#[test]
fn pirate_variant_displaces_only_when_no_slot_is_empty() {
    let config = pb::Config {
        players: 4,
        pirate_variant: true,
        ..Default::default()
    };
    let mut state = boarding_scene(&config);
    // Ginseng still has an empty slot: it must be filled first (spec §8).
    assert_illegal(
        &state,
        0,
        &action(A::BoardPunt(pb::BoardPunt {
            ware: Ware::Jade.to_pb(),
            displace_slot: Some(0),
        })),
        "§8",
    );
    act(
        &mut state,
        A::BoardPunt(pb::BoardPunt {
            ware: Ware::Ginseng.to_pb(),
            displace_slot: None,
        }),
    );
    // Now both punts are full: the new captain (seat 1) may displace anyone but the pirate who
    // has just boarded.
    assert_eq!(state.to_act(), Some(1));
    assert_illegal(
        &state,
        1,
        &action(A::BoardPunt(pb::BoardPunt {
            ware: Ware::Ginseng.to_pb(),
            displace_slot: Some(2),
        })),
        "§8",
    );
    assert_illegal(
        &state,
        1,
        &action(A::BoardPunt(pb::BoardPunt {
            ware: Ware::Jade.to_pb(),
            displace_slot: None,
        })),
        "§8",
    );
    let boards = listed(&state)
        .iter()
        .filter(|a| matches!(a.kind, Some(A::BoardPunt(_))))
        .count();
    assert_eq!(boards, 4 + 2, "4 jade slots and ginseng slots 0-1");
    let events = act(
        &mut state,
        A::BoardPunt(pb::BoardPunt {
            ware: Ware::Jade.to_pb(),
            displace_slot: Some(1),
        }),
    );
    assert!(has_event(
        &events,
        |e| matches!(e, E::PirateBoarded(b) if b.displaced == Some(3))
    ));
    assert_eq!(punt(&state, Ware::Jade).crew, vec![2, 1, 0, 1]);
    // The displaced accomplice went home and may be placed again (spec §9 A8).
    assert_eq!(state.players[3].in_hand, 2);
    assert_eq!(state.voyage.pirates, [None, None]);
}

#[test]
fn without_the_variant_full_punts_cannot_be_boarded() {
    let mut state = boarding_scene(&cfg(4));
    assert_illegal(
        &state,
        0,
        &action(A::BoardPunt(pb::BoardPunt {
            ware: Ware::Jade.to_pb(),
            displace_slot: Some(0),
        })),
        "§8",
    );
    act(&mut state, A::StayAboard(pb::StayAboard {}));
    assert_eq!(state.to_act(), Some(1));
    assert_illegal(
        &state,
        1,
        &action(A::BoardPunt(pb::BoardPunt {
            ware: Ware::Jade.to_pb(),
            displace_slot: None,
        })),
        "§4.5",
    );
}

#[test]
fn closed_pirate_ship_option_forbids_new_pirates_after_boarding() {
    // Default (§9 A8): the emptied place can be taken in the last round.
    let mut state = boarding_scene(&cfg(4));
    act(
        &mut state,
        A::BoardPunt(pb::BoardPunt {
            ware: Ware::Ginseng.to_pb(),
            displace_slot: None,
        }),
    );
    let events = place(&mut state, Space::Pirate);
    assert!(has_event(
        &events,
        |e| matches!(e, E::AccomplicePlaced(p) if p.seat == 0 && p.slot == 1)
    ));
    // Alternative: closed.
    let config = pb::Config {
        players: 4,
        close_pirate_ship_after_boarding: true,
        ..Default::default()
    };
    let mut state = boarding_scene(&config);
    act(
        &mut state,
        A::BoardPunt(pb::BoardPunt {
            ware: Ware::Ginseng.to_pb(),
            displace_slot: None,
        }),
    );
    assert_illegal(&state, 0, &action(place_kind(Space::Pirate)), "§9 A8");
}

#[test]
fn plundered_punt_sent_to_the_shipyard_does_not_rise() {
    let mut state = launched(
        &cfg(4),
        &[(Ware::Nutmeg, 4), (Ware::Silk, 5), (Ware::Jade, 0)],
    );
    use Space::*;
    play_rounds(
        &mut state,
        &[
            (&[Some(Pirate), Some(Shipyard(0)), None, None], [1, 1, 1]),
            (&[None, Some(Shipyard(2))], [3, 1, 1]),
        ],
    );
    let events = play_rounds(&mut state, &[(&[None], [5, 1, 1])]);
    assert!(has_event(
        &events,
        |e| matches!(e, E::DiceRolled(d) if d.roll == 3)
    ));
    let events = act(
        &mut state,
        A::DirectPlunder(pb::DirectPlunder {
            ware: Ware::Nutmeg.to_pb(),
            destination: pb::PlunderDestination::Shipyard as i32,
        }),
    );
    // A lone pirate takes all 24; three punts in the shipyard; the bank pays A (6) and C (15).
    assert_eq!(paid(&events, 0, pb::PayoutReason::Plunder), 24);
    assert_eq!(paid(&events, 1, pb::PayoutReason::Shipyard), 6 + 15);
    assert_eq!(state.values, [0; 4]);
    assert_eq!(state.last_settlement.as_ref().map(|s| s.wrecked), Some(3));
}

#[test]
fn an_unguarded_punt_on_13_reaches_the_harbour_or_is_wrecked_by_option() {
    for wreck_option in [false, true] {
        let config = pb::Config {
            players: 4,
            wreck_unguarded_on_13: wreck_option,
            ..Default::default()
        };
        let mut state = launched(
            &config,
            &[(Ware::Nutmeg, 4), (Ware::Silk, 5), (Ware::Jade, 0)],
        );
        use Space::*;
        let events = play_rounds(
            &mut state,
            &[
                (&[Some(Crew(Ware::Nutmeg)), None, None, None], [1, 1, 1]),
                (&[Some(Crew(Ware::Nutmeg))], [3, 1, 1]),
                (&[None], [5, 1, 1]),
            ],
        );
        let nutmeg = Ware::Nutmeg.to_pb();
        assert!(has_event(
            &events,
            |e| matches!(e, E::DiceRolled(d) if d.roll == 3
            && d.moves.iter().any(|m| m.ware == nutmeg && m.to_space == 13))
        ));
        let a = pb::Berth::A as i32;
        if wreck_option {
            assert!(has_event(
                &events,
                |e| matches!(e, E::PuntWrecked(w) if w.ware == nutmeg && w.berth == a)
            ));
            assert_eq!(paid(&events, 0, pb::PayoutReason::Crew), 0);
            assert_eq!(state.values, [0; 4]);
        } else {
            assert!(has_event(
                &events,
                |e| matches!(e, E::PuntArrived(w) if w.ware == nutmeg && w.berth == a)
            ));
            assert_eq!(paid(&events, 0, pb::PayoutReason::Crew), 24);
            assert_eq!(state.values, [0, 1, 0, 0]);
        }
    }
}
