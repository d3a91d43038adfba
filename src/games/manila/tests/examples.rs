//! The worked examples of spec §10, step by step, and its arrival-probability table.

use super::*;

#[test]
fn example_1_share_prices() {
    for (ware, step, price) in [
        (Ware::Nutmeg, 2, 10),
        (Ware::Silk, 3, 20),
        (Ware::Ginseng, 0, 5),
        (Ware::Jade, 1, 5),
    ] {
        let mut state = new_game(&cfg(4));
        set_values(&mut state, [0, 2, 3, 1]);
        assert_eq!(state.values[ware.index()], step);
        pass_all(&mut state);
        let before = state.supply[ware.index()];
        let events = act(&mut state, A::BuyShare(pb::BuyShare { ware: ware.to_pb() }));
        assert!(has_event(
            &events,
            |e| matches!(e, E::ShareBought(b) if b.price == price)
        ));
        assert_eq!(cash(&state, 0), 30 - price);
        assert_eq!(state.supply[ware.index()], before - 1);
        assert_eq!(state.players[0].bought, vec![ware]);
        assert_eq!(state.phase, Phase::Loading);
    }
}

#[test]
fn example_2_start_spaces_sum_to_nine() {
    let mut state = new_game(&cfg(4));
    pass_all(&mut state);
    act(&mut state, A::SkipPurchase(pb::SkipPurchase {}));
    let seat = 0;
    // 4 + 5 already make 9: the third punt must start on 0.
    for third in 1..=5 {
        assert_illegal(
            &state,
            seat,
            &action(load_kind(&[
                (Ware::Nutmeg, 4),
                (Ware::Silk, 5),
                (Ware::Jade, third),
            ])),
            "§2.5",
        );
    }
    assert_illegal(
        &state,
        seat,
        &action(load_kind(&[
            (Ware::Nutmeg, 6),
            (Ware::Silk, 3),
            (Ware::Jade, 0),
        ])),
        "§2.5",
    );
    assert_illegal(
        &state,
        seat,
        &action(load_kind(&[(Ware::Nutmeg, 4), (Ware::Silk, 5)])),
        "§4.2",
    );
    assert_illegal(
        &state,
        seat,
        &action(load_kind(&[
            (Ware::Nutmeg, 4),
            (Ware::Nutmeg, 5),
            (Ware::Jade, 0),
        ])),
        "§4.2",
    );
    assert_malformed(
        &state,
        seat,
        Some(A::LoadPunts(pb::LoadPunts {
            punts: vec![pb::PuntStart::default(); 3],
        })),
    );
    // The listing holds the 4 × 25 valid loadings.
    let loads: Vec<pb::LoadPunts> = listed(&state)
        .into_iter()
        .filter_map(|a| match a.kind {
            Some(A::LoadPunts(load)) => Some(load),
            _ => None,
        })
        .collect();
    assert_eq!(loads.len(), 100);
    assert!(
        loads
            .iter()
            .all(|l| l.punts.len() == 3 && l.punts.iter().map(|p| p.start).sum::<u32>() == 9)
    );
    let mut valid = state.clone();
    act(
        &mut valid,
        load_kind(&[(Ware::Nutmeg, 4), (Ware::Silk, 5), (Ware::Jade, 0)]),
    );
    act(
        &mut state,
        load_kind(&[(Ware::Jade, 2), (Ware::Nutmeg, 4), (Ware::Silk, 3)]),
    );
    let starts: Vec<(Ware, u32)> = state
        .voyage
        .punts
        .iter()
        .map(|p| (p.ware, p.position))
        .collect();
    assert_eq!(
        starts,
        vec![(Ware::Nutmeg, 4), (Ware::Silk, 3), (Ware::Jade, 2)]
    );
}

#[test]
fn example_3_dice_move_punts_and_surplus_is_lost() {
    let mut state = launched(
        &cfg(4),
        &[(Ware::Nutmeg, 2), (Ware::Silk, 2), (Ware::Jade, 5)],
    );
    use Space::*;
    let events = play_rounds(
        &mut state,
        &[(
            &[
                Some(Harbour(0)),
                Some(Harbour(1)),
                Some(Shipyard(0)),
                Some(Shipyard(1)),
            ],
            [1, 2, 6],
        )],
    );
    assert!(has_event(
        &events,
        |e| matches!(e, E::DiceRolled(d) if d.roll == 1)
    ));
    assert_eq!(
        [
            punt(&state, Ware::Nutmeg).position,
            punt(&state, Ware::Silk).position
        ],
        [3, 4]
    );
    assert_eq!(punt(&state, Ware::Jade).position, 11);
    // Roll 2: nutmeg die 4 moves 4, silk die 2 moves 2; jade needs 3, rolls 5: it arrives and
    // the other 2 pips are lost.
    let events = play_rounds(
        &mut state,
        &[(&[Some(Shipyard(2)), None, None, None], [4, 2, 5])],
    );
    assert!(has_event(
        &events,
        |e| matches!(e, E::DiceRolled(d) if d.roll == 2)
    ));
    assert_eq!(punt(&state, Ware::Nutmeg).position, 7);
    assert_eq!(punt(&state, Ware::Silk).position, 6);
    assert_eq!(punt(&state, Ware::Jade).place, PuntPlace::Harbour(0));
    assert_eq!(punt(&state, Ware::Jade).position, 14);
    assert!(has_event(&events, |e| matches!(e, E::PuntArrived(a)
        if a.ware == Ware::Jade.to_pb() && a.berth == pb::Berth::A as i32)));
    // The fourth die is never rolled (spec §9 A5).
    assert!(
        state
            .voyage
            .dice
            .iter()
            .flatten()
            .all(|(w, _)| *w != Ware::Ginseng)
    );
}

#[test]
fn example_4_berths_fill_a_then_b_and_c() {
    let mut state = launched(
        &cfg(4),
        &[(Ware::Nutmeg, 2), (Ware::Silk, 2), (Ware::Jade, 5)],
    );
    use Space::*;
    play_rounds(
        &mut state,
        &[(
            &[Some(Harbour(0)), Some(Harbour(1)), Some(Harbour(2)), None],
            [6, 5, 6],
        )],
    );
    assert_eq!(state.voyage.docked, 0);
    play_rounds(&mut state, &[(&[Some(Shipyard(0)), None, None], [1, 1, 3])]);
    assert_eq!(punt(&state, Ware::Jade).place, PuntPlace::Harbour(0));
    assert_eq!(
        [
            punt(&state, Ware::Nutmeg).position,
            punt(&state, Ware::Silk).position
        ],
        [9, 8]
    );
    // Roll 3: both others arrive together and take B and C.
    let events = play_rounds(&mut state, &[(&[None], [5, 6, 1])]);
    let berths: Vec<i32> = events
        .iter()
        .filter_map(|e| match &e.kind {
            Some(E::PuntArrived(a)) => Some(a.berth),
            _ => None,
        })
        .collect();
    assert_eq!(berths, vec![pb::Berth::B as i32, pb::Berth::C as i32]);
    // Three punts in port: all three wharves pay (6, 8, 15), and the three wares rise.
    assert_eq!(paid(&events, 0, pb::PayoutReason::Harbour), 6);
    assert_eq!(paid(&events, 1, pb::PayoutReason::Harbour), 8);
    assert_eq!(paid(&events, 2, pb::PayoutReason::Harbour), 15);
    assert_eq!(state.values, [0, 1, 1, 1]);
    assert_eq!(
        state
            .last_settlement
            .as_ref()
            .map(|s| (s.docked, s.wrecked)),
        Some((3, 0))
    );
}

#[test]
fn example_5_captain_boards_the_only_empty_slot_and_the_second_becomes_captain() {
    let mut state = boarding_scene(&cfg(4));
    assert_eq!(state.to_act(), Some(0));
    let board_ginseng = pb::Action {
        kind: Some(A::BoardPunt(pb::BoardPunt {
            ware: Ware::Ginseng.to_pb(),
            displace_slot: None,
        })),
    };
    let stay = pb::Action {
        kind: Some(A::StayAboard(pb::StayAboard {})),
    };
    let listing = listed(&state);
    assert!(listing.contains(&board_ginseng) && listing.contains(&stay));
    assert!(
        !listing
            .iter()
            .any(|a| matches!(&a.kind, Some(A::BoardPunt(b)) if b.ware == Ware::Jade.to_pb()))
    );
    assert_illegal(
        &state,
        0,
        &action(A::BoardPunt(pb::BoardPunt {
            ware: Ware::Jade.to_pb(),
            displace_slot: None,
        })),
        "§4.5",
    );
    assert_illegal(
        &state,
        0,
        &action(A::BoardPunt(pb::BoardPunt {
            ware: Ware::Silk.to_pb(),
            displace_slot: None,
        })),
        "§4.5",
    );
    let events = act(
        &mut state,
        A::BoardPunt(pb::BoardPunt {
            ware: Ware::Ginseng.to_pb(),
            displace_slot: None,
        }),
    );
    assert!(has_event(
        &events,
        |e| matches!(e, E::PirateBoarded(b) if b.seat == 0 && b.slot == 2)
    ));
    assert_eq!(punt(&state, Ware::Ginseng).crew, vec![2, 3, 0]);
    // Both punts are full: the second pirate cannot board and simply becomes captain.
    assert_eq!(state.voyage.pirates, [Some(1), None]);
    assert_eq!(state.phase, Phase::Placement { offset: 0 });
    assert_eq!(state.voyage.rolls, 2);
}

#[test]
fn example_6_pilots_move_punts_and_a_pilot_made_13_is_not_attacked() {
    let mut state = launched(
        &cfg(4),
        &[(Ware::Ginseng, 3), (Ware::Nutmeg, 5), (Ware::Jade, 1)],
    );
    use Space::*;
    play_rounds(
        &mut state,
        &[
            (
                &[
                    Some(SmallPilot),
                    Some(LargePilot),
                    Some(Harbour(0)),
                    Some(Shipyard(0)),
                ],
                [4, 4, 4],
            ),
            (
                &[
                    Some(Crew(Ware::Nutmeg)),
                    Some(Crew(Ware::Ginseng)),
                    Some(Crew(Ware::Jade)),
                    Some(Harbour(1)),
                ],
                [5, 4, 5],
            ),
        ],
    );
    assert_eq!(
        [Ware::Ginseng, Ware::Nutmeg, Ware::Jade].map(|w| punt(&state, w).position),
        [12, 13, 10],
        "no pirates yet, so nutmeg on 13 is not boarded"
    );
    let events = play_rounds(
        &mut state,
        &[(&[Some(Pirate), None, None, None], [1, 6, 1])],
    );
    assert!(!has_event(&events, |e| matches!(e, E::DiceRolled(_))));
    assert_eq!(state.phase, Phase::Pilot { large: false });
    assert_eq!(state.to_act(), Some(0));
    assert_illegal(
        &state,
        0,
        &action(A::PilotPunts(pb::PilotPunts {
            shifts: vec![pb::PuntShift {
                ware: Ware::Nutmeg.to_pb(),
                spaces: 2,
            }],
        })),
        "§4.6",
    );
    // The small pilot pushes nutmeg +1 into port: it takes berth A.
    let events = act(
        &mut state,
        A::PilotPunts(pb::PilotPunts {
            shifts: vec![pb::PuntShift {
                ware: Ware::Nutmeg.to_pb(),
                spaces: 1,
            }],
        }),
    );
    assert!(has_event(&events, |e| matches!(e, E::PuntArrived(a)
        if a.ware == Ware::Nutmeg.to_pb() && a.berth == pb::Berth::A as i32)));
    assert_eq!(state.phase, Phase::Pilot { large: true });
    // The large pilot can no longer touch nutmeg.
    assert!(
        !listed(&state)
            .iter()
            .any(|a| matches!(&a.kind, Some(A::PilotPunts(p))
        if p.shifts.iter().any(|s| s.ware == Ware::Nutmeg.to_pb())))
    );
    assert_eq!(
        listed(&state)
            .iter()
            .filter(|a| matches!(a.kind, Some(A::PilotPunts(_))))
            .count(),
        1 + 2 * 4 + 4
    );
    assert_illegal(
        &state,
        1,
        &action(A::PilotPunts(pb::PilotPunts {
            shifts: vec![pb::PuntShift {
                ware: Ware::Nutmeg.to_pb(),
                spaces: -1,
            }],
        })),
        "§9 A16",
    );
    assert_illegal(
        &state,
        1,
        &action(A::PilotPunts(pb::PilotPunts {
            shifts: vec![
                pb::PuntShift {
                    ware: Ware::Jade.to_pb(),
                    spaces: 1,
                },
                pb::PuntShift {
                    ware: Ware::Jade.to_pb(),
                    spaces: 1,
                },
            ],
        })),
        "§4.6",
    );
    // Jade −1 and ginseng +1 onto 13: no pirate attack from that; roll 3 follows at once.
    let events = act(
        &mut state,
        A::PilotPunts(pb::PilotPunts {
            shifts: vec![
                pb::PuntShift {
                    ware: Ware::Jade.to_pb(),
                    spaces: -1,
                },
                pb::PuntShift {
                    ware: Ware::Ginseng.to_pb(),
                    spaces: 1,
                },
            ],
        }),
    );
    assert!(has_event(
        &events,
        |e| matches!(e, E::PilotActed(p) if p.seat == 1 && p.large)
    ));
    assert!(!has_event(&events, |e| matches!(
        e,
        E::PuntPlundered(_) | E::PirateBoarded(_)
    )));
    assert!(has_event(
        &events,
        |e| matches!(e, E::DiceRolled(d) if d.roll == 3
        && d.moves.iter().any(|m| m.ware == Ware::Ginseng.to_pb() && m.from_space == 13)
        && d.moves.iter().any(|m| m.ware == Ware::Jade.to_pb() && m.from_space == 9 && m.to_space == 10))
    ));
    // Ginseng arrived on roll 3 (berth B); jade was wrecked; the voyage is settled.
    assert_eq!(state.voyage.number, 2);
    assert_eq!(paid(&events, 0, pb::PayoutReason::Crew), 24);
    assert_eq!(paid(&events, 1, pb::PayoutReason::Crew), 18);
    assert_eq!(paid(&events, 2, pb::PayoutReason::Harbour), 6);
    assert_eq!(paid(&events, 3, pb::PayoutReason::Harbour), 8);
    assert_eq!(paid(&events, 3, pb::PayoutReason::Shipyard), 6);
    assert_eq!(paid(&events, 0, pb::PayoutReason::Plunder), 0);
}

#[test]
fn example_7_two_pirates_split_a_plundered_nutmeg() {
    let mut state = launched(
        &cfg(4),
        &[(Ware::Nutmeg, 4), (Ware::Silk, 5), (Ware::Jade, 0)],
    );
    use Space::*;
    play_rounds(
        &mut state,
        &[
            (
                &[
                    Some(Pirate),
                    Some(Pirate),
                    Some(Crew(Ware::Nutmeg)),
                    Some(Crew(Ware::Nutmeg)),
                ],
                [1, 1, 1],
            ),
            (&[Some(Harbour(0)), None, None, None], [3, 1, 1]),
        ],
    );
    assert_eq!(punt(&state, Ware::Nutmeg).position, 8);
    let events = play_rounds(&mut state, &[(&[None], [5, 1, 1])]);
    assert!(has_event(&events, |e| matches!(e, E::PuntPlundered(p)
        if p.ware == Ware::Nutmeg.to_pb() && p.crew_returned == vec![2, 3])));
    assert_eq!(
        state.phase,
        Phase::Plunder {
            pending: vec![Ware::Nutmeg]
        }
    );
    assert_eq!(state.to_act(), Some(0));
    assert_illegal(
        &state,
        0,
        &action(A::DirectPlunder(pb::DirectPlunder {
            ware: Ware::Silk.to_pb(),
            destination: pb::PlunderDestination::Harbour as i32,
        })),
        "§4.7",
    );
    // The captain sends it to the harbour: it takes berth A and nutmeg still rises.
    let events = act(
        &mut state,
        A::DirectPlunder(pb::DirectPlunder {
            ware: Ware::Nutmeg.to_pb(),
            destination: pb::PlunderDestination::Harbour as i32,
        }),
    );
    assert_eq!(paid(&events, 0, pb::PayoutReason::Plunder), 12);
    assert_eq!(paid(&events, 1, pb::PayoutReason::Plunder), 12);
    for crew in [2, 3] {
        assert_eq!(paid(&events, crew, pb::PayoutReason::Crew), 0);
    }
    assert_eq!(paid(&events, 0, pb::PayoutReason::Harbour), 6);
    assert_eq!(state.values, [0, 1, 0, 0]);
    assert_eq!(
        [
            cash(&state, 0),
            cash(&state, 1),
            cash(&state, 2),
            cash(&state, 3)
        ],
        [39, 37, 28, 27]
    );
}

#[test]
fn example_8_jade_crew_red_red_yellow() {
    let mut state = launched(
        &cfg(4),
        &[(Ware::Ginseng, 0), (Ware::Silk, 4), (Ware::Jade, 5)],
    );
    use Space::*;
    play_rounds(
        &mut state,
        &[(
            &[Some(Crew(Ware::Jade)), Some(Crew(Ware::Jade)), None, None],
            [1, 1, 6],
        )],
    );
    let events = play_rounds(&mut state, &[(&[Some(Crew(Ware::Jade)), None], [1, 1, 6])]);
    assert!(has_event(
        &events,
        |e| matches!(e, E::AccomplicePlaced(p) if p.cost == 5 && p.slot == 2)
    ));
    assert_eq!(punt(&state, Ware::Jade).place, PuntPlace::Harbour(0));
    assert_eq!(punt(&state, Ware::Jade).crew, vec![0, 1, 0]);
    let events = play_rounds(&mut state, &[(&[None], [1, 1, 1])]);
    assert_eq!(paid(&events, 0, pb::PayoutReason::Crew), 24);
    assert_eq!(paid(&events, 1, pb::PayoutReason::Crew), 12);
    assert_eq!(cash(&state, 0), 30 - 3 - 5 + 24);
    assert_eq!(cash(&state, 1), 30 - 4 + 12);
}

#[test]
fn example_9_two_punts_in_port_pay_wharves_a_and_b_only() {
    use Space::*;
    let (_, events) = two_in_port_one_wreck(
        [Some(Harbour(0)), Some(Harbour(1)), Some(Harbour(2)), None],
        Shipyard(2),
    );
    assert_eq!(paid(&events, 0, pb::PayoutReason::Harbour), 6);
    assert_eq!(paid(&events, 1, pb::PayoutReason::Harbour), 8);
    assert_eq!(
        paid(&events, 2, pb::PayoutReason::Harbour),
        0,
        "blue on C gets nothing"
    );
    assert_eq!(
        paid(&events, 0, pb::PayoutReason::Shipyard),
        0,
        "one wreck: shipyard C is empty"
    );
}

#[test]
fn example_10_one_wreck_without_insurer_pays_shipyard_a_from_the_bank() {
    use Space::*;
    let (state, events) = two_in_port_one_wreck(
        [Some(Shipyard(0)), Some(Shipyard(1)), None, None],
        Harbour(2),
    );
    assert_eq!(paid(&events, 0, pb::PayoutReason::Shipyard), 6);
    assert_eq!(paid(&events, 1, pb::PayoutReason::Shipyard), 0);
    assert!(has_event(
        &events,
        |e| matches!(e, E::Payout(p) if p.seat == 0 && p.paid_by.is_none())
    ));
    assert_eq!(
        paid(&events, 0, pb::PayoutReason::Harbour),
        0,
        "two in port: wharf C pays nothing"
    );
    assert_eq!(cash(&state, 0), 30 - 4 - 2 + 6);
}

#[test]
fn example_11_insurer_on_shipyard_a_pays_only_orange_on_b() {
    // Blue = seat 2 (insurer, shipyard A), orange = seat 3 (shipyard B). Two wrecks (ginseng,
    // silk); jade arrives.
    let mut state = launched(
        &cfg(4),
        &[(Ware::Ginseng, 4), (Ware::Silk, 0), (Ware::Jade, 5)],
    );
    use Space::*;
    play_rounds(
        &mut state,
        &[
            (
                &[
                    Some(Harbour(0)),
                    Some(Harbour(1)),
                    Some(Insurance),
                    Some(Shipyard(1)),
                ],
                [1, 1, 6],
            ),
            (&[None, None, Some(Shipyard(0)), None], [1, 1, 1]),
        ],
    );
    assert_eq!(cash(&state, 2), 30 + 10 - 4);
    let events = play_rounds(&mut state, &[(&[None], [1, 1, 6])]);
    assert!(has_event(&events, |e| matches!(e, E::InsuranceSettled(i)
        if i.insurer == 2 && i.owed == 14 && i.paid == 8 && i.bank_covered == 0)));
    assert_eq!(paid(&events, 3, pb::PayoutReason::Shipyard), 8);
    assert!(has_event(
        &events,
        |e| matches!(e, E::Payout(p) if p.seat == 3 && p.paid_by == Some(2))
    ));
    assert_eq!(paid(&events, 2, pb::PayoutReason::Shipyard), 0);
    assert_eq!(cash(&state, 2), 30 + 10 - 4 - 8);
    assert_eq!(cash(&state, 3), 30 - 3 + 8);
    assert_eq!(
        state.last_settlement.as_ref().and_then(|s| s.insurance),
        Some((2, 14))
    );
}

#[test]
fn arrival_probabilities_match_the_table_by_exact_enumeration() {
    const ARRIVE: [u32; 6] = [35, 56, 81, 108, 135, 160];
    const ON_13: [u32; 6] = [21, 25, 27, 27, 25, 21];
    let base = launched(
        &cfg(4),
        &[(Ware::Ginseng, 3), (Ware::Silk, 3), (Ware::Jade, 3)],
    );
    for start in 0..=5u32 {
        let (mut arrived, mut on_13) = (0, 0);
        for dice in 0..216u32 {
            let rolls = [dice / 36 + 1, dice / 6 % 6 + 1, dice % 6 + 1];
            let mut state = base.clone();
            state.voyage.punts[0].position = start;
            for pips in rolls {
                // Only the ginseng punt is observed; the others stay put.
                state.move_by_dice(&[(Ware::Ginseng, pips)], &mut Vec::new());
            }
            match punt(&state, Ware::Ginseng) {
                p if p.place == PuntPlace::Harbour(0) => arrived += 1,
                p if p.position == 13 => on_13 += 1,
                _ => {}
            }
        }
        assert_eq!(arrived, ARRIVE[start as usize], "arrivals from {start}");
        assert_eq!(on_13, ON_13[start as usize], "ends on 13 from {start}");
    }
}
