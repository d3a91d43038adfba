//! Tests: the worked examples of spec §10 step by step, the arrival-probability table, every rule
//! and option, hidden information, rejected actions, and seeded random play.

use super::flow::{Space, space_to_proto};
use super::*;
use crate::games::common::random_play::{Checks, play};
use pb::action::Kind as A;
use pb::event::Kind as E;

// ----- Helpers ---------------------------------------------------------------------------------

fn cfg(players: u32) -> pb::Config {
    pb::Config {
        players,
        ..Default::default()
    }
}

fn new_game(config: &pb::Config) -> Manila {
    Manila::setup(config, &Seed::from_u64(7)).expect("valid config")
}

fn encode(state: &Manila) -> Vec<u8> {
    postcard::to_stdvec(state).expect("serializes")
}

/// The seat to act plays `kind`; it must be accepted, and the invariants must hold after it.
fn act(state: &mut Manila, kind: A) -> Vec<pb::Event> {
    let seat = state.to_act().expect("someone must act");
    let events = state
        .apply(
            seat,
            &pb::Action {
                kind: Some(kind.clone()),
            },
        )
        .unwrap_or_else(|e| panic!("seat {seat} could not play {kind:?}: {e}"));
    state.check_invariants().expect("invariants hold");
    events
}

/// `kind` by `seat` is refused as illegal citing `rule`, and the state is untouched.
fn assert_illegal(state: &Manila, seat: Seat, kind: A, rule: &str) {
    let mut probe = state.clone();
    let before = encode(state);
    match probe.apply(
        seat,
        &pb::Action {
            kind: Some(kind.clone()),
        },
    ) {
        Err(ActionError::Illegal {
            rule: cited,
            message,
        }) => {
            assert_eq!(
                cited, rule,
                "{kind:?} refused citing {cited} ({message}), expected {rule}"
            );
        }
        other => panic!(
            "{kind:?} by seat {seat}: expected an illegal-move error citing {rule}, got {other:?}"
        ),
    }
    assert_eq!(
        encode(&probe),
        before,
        "a rejected action changed the state"
    );
}

fn assert_malformed(state: &Manila, seat: Seat, kind: Option<A>) {
    let mut probe = state.clone();
    let before = encode(state);
    let result = probe.apply(seat, &pb::Action { kind });
    assert!(
        matches!(result, Err(ActionError::Malformed(_))),
        "expected malformed, got {result:?}"
    );
    assert_eq!(encode(&probe), before);
}

fn listed(state: &Manila) -> Vec<pb::Action> {
    let seat = state.to_act().expect("someone must act");
    state
        .legal_actions(seat)
        .into_iter()
        .map(|entry| match entry {
            LegalAction::Exact(action) | LegalAction::Amount { action, .. } => action,
        })
        .collect()
}

fn place_kind(space: Space) -> A {
    A::PlaceAccomplice(space_to_proto(space))
}

fn place(state: &mut Manila, space: Space) -> Vec<pb::Event> {
    act(state, place_kind(space))
}

fn decline(state: &mut Manila) -> Vec<pb::Event> {
    act(state, A::DeclinePlacement(pb::DeclinePlacement {}))
}

/// Everyone passes: the opener becomes harbour master for free (spec §9 A2).
fn pass_all(state: &mut Manila) {
    while matches!(state.phase, Phase::Auction(_)) {
        act(state, A::PassAuction(pb::PassAuction {}));
    }
}

fn load_kind(punts: &[(Ware, u32)]) -> A {
    A::LoadPunts(pb::LoadPunts {
        punts: punts
            .iter()
            .map(|&(ware, start)| pb::PuntStart {
                ware: ware.to_proto(),
                start,
            })
            .collect(),
    })
}

/// A game at the first placement of voyage 1: seat 0 is harbour master (uncontested), bought
/// nothing, and launched `punts`.
fn launched(config: &pb::Config, punts: &[(Ware, u32)]) -> Manila {
    let mut state = new_game(config);
    pass_all(&mut state);
    act(&mut state, A::SkipPurchase(pb::SkipPurchase {}));
    act(&mut state, load_kind(punts));
    assert_eq!(state.phase, Phase::Placement { offset: 0 });
    state
}

/// Makes the next roll come out as `dice` (loaded wares in ware order) by choosing the RNG
/// stream from a searched seed: no test hook in the engine.
fn rig(state: &mut Manila, dice: [u32; 3]) {
    assert!(dice.iter().all(|d| (1..=6).contains(d)), "dice show 1 to 6");
    for n in 0u64.. {
        let seed = Seed::from_u64(n);
        let mut probe = GameRng::from_seed(&seed);
        if dice.iter().all(|d| probe.roll(6) == *d) {
            state.rng = GameRng::from_seed(&seed);
            return;
        }
    }
}

/// Sets the value track (test staging between voyages' bookkeeping).
fn set_values(state: &mut Manila, values: [usize; 4]) {
    state.values = values;
    state.voyage.values_at_start = values;
}

fn punt(state: &Manila, ware: Ware) -> &Punt {
    state.voyage.punt(ware).expect("loaded")
}

fn cash(state: &Manila, seat: Seat) -> u64 {
    state.players[seat as usize].cash
}

/// Total paid to `seat` by Payout events with `reason`.
fn paid(events: &[pb::Event], seat: Seat, reason: pb::PayoutReason) -> u64 {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            Some(E::Payout(p)) if p.seat == seat && p.reason == reason as i32 => Some(p.amount),
            _ => None,
        })
        .sum()
}

fn has_event(events: &[pb::Event], pred: impl Fn(&E) -> bool) -> bool {
    events.iter().any(|e| e.kind.as_ref().is_some_and(&pred))
}

// ----- Setup (spec §3) -------------------------------------------------------------------------

#[test]
fn setup_gives_cash_shares_and_accomplices() {
    for players in 3..=5 {
        let state = new_game(&cfg(players));
        let expected_accomplices = if players == 3 { 4 } else { 3 };
        for player in &state.players {
            assert_eq!(player.cash, 30);
            assert_eq!(player.dealt.len(), 2);
            assert_eq!(player.in_hand, expected_accomplices);
            assert_eq!(player.mortgaged_count(), 0);
        }
        // Supply: 5 per ware minus those dealt (2 left out + the undealt shuffled ones).
        let supply: u32 = state.supply.iter().sum();
        assert_eq!(supply, 20 - 2 * players);
        assert!(state.supply.iter().all(|s| (2..=5).contains(s)));
        assert_eq!(state.to_act(), Some(0));
        assert_eq!(state.values, [0; 4]);
        state.check_invariants().expect("invariants");
    }
}

#[test]
fn config_is_validated() {
    for players in [0, 1, 2, 6] {
        assert!(
            Manila::setup(&cfg(players), &Seed::from_u64(1)).is_err(),
            "{players} players accepted"
        );
    }
    let bad_start = pb::Config {
        players: 4,
        start_seat: 4,
        ..Default::default()
    };
    assert!(Manila::setup(&bad_start, &Seed::from_u64(1)).is_err());
    let bad_tie = pb::Config {
        players: 4,
        tie_break: 9,
        ..Default::default()
    };
    assert!(Manila::setup(&bad_tie, &Seed::from_u64(1)).is_err());
    let start = pb::Config {
        players: 4,
        start_seat: 2,
        ..Default::default()
    };
    assert_eq!(new_game(&start).to_act(), Some(2));
}

// ----- Auction (spec §4.1) ---------------------------------------------------------------------

#[test]
fn auction_bids_pass_clockwise_and_passing_is_final() {
    let mut state = new_game(&cfg(4));
    // The opener may bid 1..=30 + 2 × 12.
    let legal = state.legal_actions(0);
    assert!(legal.contains(&LegalAction::Amount {
        action: pb::Action {
            kind: Some(A::Bid(pb::Bid { amount: 1 }))
        },
        min: 1,
        max: 54,
    }));
    act(&mut state, A::Bid(pb::Bid { amount: 5 }));
    assert_eq!(state.to_act(), Some(1));
    act(&mut state, A::PassAuction(pb::PassAuction {}));
    assert_eq!(state.to_act(), Some(2));
    assert_illegal(&state, 2, A::Bid(pb::Bid { amount: 5 }), "§4.1");
    act(&mut state, A::Bid(pb::Bid { amount: 6 }));
    act(&mut state, A::PassAuction(pb::PassAuction {}));
    // Seat 1 passed for good: back to seat 0.
    assert_eq!(state.to_act(), Some(0));
    act(&mut state, A::Bid(pb::Bid { amount: 40 }));
    assert_eq!(state.to_act(), Some(2));
    let events = act(&mut state, A::PassAuction(pb::PassAuction {}));
    assert!(has_event(
        &events,
        |e| matches!(e, E::HarbourMasterChosen(h) if h.seat == 0 && h.price == 40)
    ));
    // 40 > 30 cash: one share mortgaged automatically (spec §5), 30 + 12 − 40 = 2.
    assert!(has_event(
        &events,
        |e| matches!(e, E::ShareMortgaged(m) if m.seat == 0 && m.forced)
    ));
    assert_eq!(cash(&state, 0), 2);
    assert_eq!(state.players[0].mortgaged_count(), 1);
    assert_eq!(state.voyage.harbour_master, Some(0));
    assert_eq!(state.phase, Phase::Purchase);
}

#[test]
fn nobody_bidding_leaves_the_opener_in_office() {
    // Voyage 1: the start seat becomes harbour master for free (spec §9 A2).
    let mut state = new_game(&pb::Config {
        players: 3,
        start_seat: 1,
        ..Default::default()
    });
    act(&mut state, A::PassAuction(pb::PassAuction {}));
    act(&mut state, A::PassAuction(pb::PassAuction {}));
    // The last player may still bid (spec §9 A3); he passes too.
    assert_eq!(state.to_act(), Some(0));
    let events = act(&mut state, A::PassAuction(pb::PassAuction {}));
    assert!(has_event(
        &events,
        |e| matches!(e, E::HarbourMasterChosen(h) if h.seat == 1 && h.uncontested)
    ));
    assert_eq!(cash(&state, 1), 30);
}

#[test]
fn the_last_player_may_still_bid_and_wins_at_once() {
    let mut state = new_game(&cfg(3));
    act(&mut state, A::PassAuction(pb::PassAuction {}));
    act(&mut state, A::PassAuction(pb::PassAuction {}));
    let events = act(&mut state, A::Bid(pb::Bid { amount: 1 }));
    assert!(has_event(
        &events,
        |e| matches!(e, E::HarbourMasterChosen(h) if h.seat == 2 && h.price == 1)
    ));
    assert_eq!(cash(&state, 2), 29);
}

#[test]
fn the_previous_harbour_master_opens_the_next_auction() {
    let mut state = new_game(&cfg(4));
    act(&mut state, A::PassAuction(pb::PassAuction {}));
    act(&mut state, A::Bid(pb::Bid { amount: 3 }));
    act(&mut state, A::PassAuction(pb::PassAuction {}));
    act(&mut state, A::PassAuction(pb::PassAuction {}));
    assert_eq!(state.voyage.harbour_master, Some(1));
    act(&mut state, A::SkipPurchase(pb::SkipPurchase {}));
    act(
        &mut state,
        load_kind(&[(Ware::Ginseng, 3), (Ware::Nutmeg, 3), (Ware::Silk, 3)]),
    );
    // Seat 1 places first in every round (spec §9 A18); everyone declines, the voyage plays out.
    assert_eq!(state.to_act(), Some(1));
    for _ in 0..4 {
        decline(&mut state);
    }
    assert_eq!(state.voyage.number, 2);
    assert_eq!(
        state.phase,
        Phase::Auction(Auction {
            opener: 1,
            turn: 1,
            high: None,
            passed: vec![false; 4]
        })
    );
    // Nobody bids: seat 1 keeps the office.
    pass_all(&mut state);
    assert_eq!(state.voyage.harbour_master, Some(1));
}

// ----- §10 worked example 1: share prices (spec §4.2 a) ----------------------------------------

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
        let events = act(
            &mut state,
            A::BuyShare(pb::BuyShare {
                ware: ware.to_proto(),
            }),
        );
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
fn share_purchase_needs_supply_and_means() {
    let mut state = new_game(&cfg(4));
    pass_all(&mut state);
    // An exhausted ware cannot be bought (spec §9 A15).
    let ginseng_holders: u32 = state.players.iter().map(|p| p.holdings()[0]).sum();
    state.supply[0] = 0;
    state.players[1].bought.extend(std::iter::repeat_n(
        Ware::Ginseng,
        (5 - ginseng_holders) as usize,
    ));
    state.check_invariants().expect("consistent");
    assert_illegal(
        &state,
        0,
        A::BuyShare(pb::BuyShare {
            ware: Ware::Ginseng.to_proto(),
        }),
        "§4.2",
    );
    // Too expensive even with mortgages.
    set_values(&mut state, [0, 0, 3, 0]);
    state.players[0].cash = 0;
    state.players[0].mortgaged = state.players[0].holdings();
    assert_illegal(
        &state,
        0,
        A::BuyShare(pb::BuyShare {
            ware: Ware::Silk.to_proto(),
        }),
        "§4.2",
    );
    assert_eq!(
        listed(&state),
        vec![pb::Action {
            kind: Some(A::SkipPurchase(pb::SkipPurchase {}))
        }]
    );
}

// ----- §10 worked example 2: start spaces (spec §2.5, §4.2 c) ----------------------------------

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
            load_kind(&[(Ware::Nutmeg, 4), (Ware::Silk, 5), (Ware::Jade, third)]),
            "§2.5",
        );
    }
    assert_illegal(
        &state,
        seat,
        load_kind(&[(Ware::Nutmeg, 6), (Ware::Silk, 3), (Ware::Jade, 0)]),
        "§2.5",
    );
    assert_illegal(
        &state,
        seat,
        load_kind(&[(Ware::Nutmeg, 4), (Ware::Silk, 5)]),
        "§4.2",
    );
    assert_illegal(
        &state,
        seat,
        load_kind(&[(Ware::Nutmeg, 4), (Ware::Nutmeg, 5), (Ware::Jade, 0)]),
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

// ----- §10 worked examples 3 and 4: movement and berths (spec §4.4) ----------------------------

/// Plays placement rounds of voyage 1 (seat 0 harbour master). Each entry lists the moves of the
/// seats still placing in that round (a space, or `None` to decline), and the dice of the roll
/// that follows the round (rigged before its first move; rounds without a roll ignore them).
fn play_rounds(state: &mut Manila, rounds: &[(&[Option<Space>], [u32; 3])]) -> Vec<pb::Event> {
    let mut events = Vec::new();
    for (moves, dice) in rounds {
        rig(state, *dice);
        for space in *moves {
            events.extend(match space {
                Some(space) => place(state, *space),
                None => decline(state),
            });
        }
    }
    events
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
        if a.ware == Ware::Jade.to_proto() && a.berth == pb::Berth::A as i32)));
    // The fourth die is never rolled (spec §9 A5).
    assert!(
        state
            .voyage
            .last_roll
            .iter()
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

// ----- §10 worked example 5: boarding (spec §4.5) ----------------------------------------------

/// Ginseng and jade on 13 after roll 2, jade full, ginseng with one empty slot; seat 0 captain,
/// seat 1 second pirate. Returns the state at the boarding decision.
fn boarding_scene(config: &pb::Config) -> Manila {
    let mut state = launched(
        config,
        &[(Ware::Ginseng, 4), (Ware::Silk, 0), (Ware::Jade, 5)],
    );
    use Space::*;
    play_rounds(
        &mut state,
        &[
            (
                &[
                    Some(Pirate),
                    Some(Pirate),
                    Some(Crew(Ware::Jade)),
                    Some(Crew(Ware::Jade)),
                ],
                [3, 1, 3],
            ),
            (
                &[
                    Some(Crew(Ware::Jade)),
                    Some(Crew(Ware::Jade)),
                    Some(Crew(Ware::Ginseng)),
                    Some(Crew(Ware::Ginseng)),
                ],
                [6, 1, 5],
            ),
        ],
    );
    assert_eq!(state.voyage.pirates, [Some(0), Some(1)]);
    assert_eq!(punt(&state, Ware::Ginseng).position, 13);
    assert_eq!(punt(&state, Ware::Jade).position, 13);
    state
}

#[test]
fn example_5_captain_boards_the_only_empty_slot_and_the_second_becomes_captain() {
    let mut state = boarding_scene(&cfg(4));
    assert_eq!(state.to_act(), Some(0));
    let board_ginseng = pb::Action {
        kind: Some(A::BoardPunt(pb::BoardPunt {
            ware: Ware::Ginseng.to_proto(),
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
            .any(|a| matches!(&a.kind, Some(A::BoardPunt(b)) if b.ware == Ware::Jade.to_proto()))
    );
    assert_illegal(
        &state,
        0,
        A::BoardPunt(pb::BoardPunt {
            ware: Ware::Jade.to_proto(),
            displace_slot: None,
        }),
        "§4.5",
    );
    assert_illegal(
        &state,
        0,
        A::BoardPunt(pb::BoardPunt {
            ware: Ware::Silk.to_proto(),
            displace_slot: None,
        }),
        "§4.5",
    );
    let events = act(
        &mut state,
        A::BoardPunt(pb::BoardPunt {
            ware: Ware::Ginseng.to_proto(),
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
fn boarding_order_when_the_captain_stays() {
    let mut state = boarding_scene(&cfg(4));
    act(&mut state, A::StayAboard(pb::StayAboard {}));
    // The second pirate decides next and boards; the captain keeps the bow.
    assert_eq!(state.to_act(), Some(1));
    act(
        &mut state,
        A::BoardPunt(pb::BoardPunt {
            ware: Ware::Ginseng.to_proto(),
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
        A::BoardPunt(pb::BoardPunt {
            ware: Ware::Jade.to_proto(),
            displace_slot: Some(0),
        }),
        "§8",
    );
    act(
        &mut state,
        A::BoardPunt(pb::BoardPunt {
            ware: Ware::Ginseng.to_proto(),
            displace_slot: None,
        }),
    );
    // Now both punts are full: the new captain (seat 1) may displace anyone but the pirate who
    // has just boarded.
    assert_eq!(state.to_act(), Some(1));
    assert_illegal(
        &state,
        1,
        A::BoardPunt(pb::BoardPunt {
            ware: Ware::Ginseng.to_proto(),
            displace_slot: Some(2),
        }),
        "§8",
    );
    assert_illegal(
        &state,
        1,
        A::BoardPunt(pb::BoardPunt {
            ware: Ware::Jade.to_proto(),
            displace_slot: None,
        }),
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
            ware: Ware::Jade.to_proto(),
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
        A::BoardPunt(pb::BoardPunt {
            ware: Ware::Jade.to_proto(),
            displace_slot: Some(0),
        }),
        "§8",
    );
    act(&mut state, A::StayAboard(pb::StayAboard {}));
    assert_eq!(state.to_act(), Some(1));
    assert_illegal(
        &state,
        1,
        A::BoardPunt(pb::BoardPunt {
            ware: Ware::Jade.to_proto(),
            displace_slot: None,
        }),
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
            ware: Ware::Ginseng.to_proto(),
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
            ware: Ware::Ginseng.to_proto(),
            displace_slot: None,
        }),
    );
    assert_illegal(&state, 0, place_kind(Space::Pirate), "§9 A8");
}

// ----- §10 worked example 6: pilots (spec §4.6) ------------------------------------------------

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
        A::PilotPunts(pb::PilotPunts {
            shifts: vec![pb::PuntShift {
                ware: Ware::Nutmeg.to_proto(),
                spaces: 2,
            }],
        }),
        "§4.6",
    );
    // The small pilot pushes nutmeg +1 into port: it takes berth A.
    let events = act(
        &mut state,
        A::PilotPunts(pb::PilotPunts {
            shifts: vec![pb::PuntShift {
                ware: Ware::Nutmeg.to_proto(),
                spaces: 1,
            }],
        }),
    );
    assert!(has_event(&events, |e| matches!(e, E::PuntArrived(a)
        if a.ware == Ware::Nutmeg.to_proto() && a.berth == pb::Berth::A as i32)));
    assert_eq!(state.phase, Phase::Pilot { large: true });
    // The large pilot can no longer touch nutmeg.
    assert!(
        !listed(&state)
            .iter()
            .any(|a| matches!(&a.kind, Some(A::PilotPunts(p))
        if p.shifts.iter().any(|s| s.ware == Ware::Nutmeg.to_proto())))
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
        A::PilotPunts(pb::PilotPunts {
            shifts: vec![pb::PuntShift {
                ware: Ware::Nutmeg.to_proto(),
                spaces: -1,
            }],
        }),
        "§9 A16",
    );
    assert_illegal(
        &state,
        1,
        A::PilotPunts(pb::PilotPunts {
            shifts: vec![
                pb::PuntShift {
                    ware: Ware::Jade.to_proto(),
                    spaces: 1,
                },
                pb::PuntShift {
                    ware: Ware::Jade.to_proto(),
                    spaces: 1,
                },
            ],
        }),
        "§4.6",
    );
    // Jade −1 and ginseng +1 onto 13: no pirate attack from that; roll 3 follows at once.
    let events = act(
        &mut state,
        A::PilotPunts(pb::PilotPunts {
            shifts: vec![
                pb::PuntShift {
                    ware: Ware::Jade.to_proto(),
                    spaces: -1,
                },
                pb::PuntShift {
                    ware: Ware::Ginseng.to_proto(),
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
        && d.moves.iter().any(|m| m.ware == Ware::Ginseng.to_proto() && m.from == 13)
        && d.moves.iter().any(|m| m.ware == Ware::Jade.to_proto() && m.from == 9 && m.to == 10))
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

// ----- §10 worked example 7: plunder (spec §4.7) -----------------------------------------------

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
        if p.ware == Ware::Nutmeg.to_proto() && p.crew_returned == vec![2, 3])));
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
        A::DirectPlunder(pb::DirectPlunder {
            ware: Ware::Silk.to_proto(),
            destination: pb::PlunderDestination::Harbour as i32,
        }),
        "§4.7",
    );
    // The captain sends it to the harbour: it takes berth A and nutmeg still rises.
    let events = act(
        &mut state,
        A::DirectPlunder(pb::DirectPlunder {
            ware: Ware::Nutmeg.to_proto(),
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
            ware: Ware::Nutmeg.to_proto(),
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
        let nutmeg = Ware::Nutmeg.to_proto();
        assert!(has_event(
            &events,
            |e| matches!(e, E::DiceRolled(d) if d.roll == 3
            && d.moves.iter().any(|m| m.ware == nutmeg && m.to == 13))
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

// ----- §10 worked example 8: crew payout (spec §4.8 B) -----------------------------------------

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

// ----- §10 worked examples 9-11: harbour, shipyard, insurance (spec §4.8 C-D) ------------------

/// Ginseng and jade reach the harbour on roll 3 (A, B), silk is wrecked. Seat 0 places
/// `first[0]` in round 1 and `extra` in round 2, seats 1-3 `first[1..]` in round 1, then decline.
fn two_in_port_one_wreck(first: [Option<Space>; 4], extra: Space) -> (Manila, Vec<pb::Event>) {
    let mut state = launched(
        &cfg(4),
        &[(Ware::Ginseng, 4), (Ware::Silk, 0), (Ware::Jade, 5)],
    );
    let still_in = first.iter().filter(|s| s.is_some()).count() - 1;
    let mut second = vec![Some(extra)];
    second.extend(std::iter::repeat_n(None, still_in));
    let mut events = play_rounds(&mut state, &[(&first, [6, 1, 6]), (&second, [1, 1, 1])]);
    events.extend(play_rounds(&mut state, &[(&[None], [6, 1, 6])]));
    assert_eq!(
        state
            .last_settlement
            .as_ref()
            .map(|s| (s.docked, s.wrecked)),
        Some((2, 1))
    );
    (state, events)
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
fn a_short_insurer_mortgages_then_the_bank_covers_the_rest() {
    // Three wrecks, nobody in the shipyard: the insurer owes 29 to the bank.
    let mut state = launched(
        &cfg(4),
        &[(Ware::Ginseng, 3), (Ware::Silk, 3), (Ware::Jade, 3)],
    );
    use Space::*;
    play_rounds(
        &mut state,
        &[
            (&[Some(Harbour(0)), Some(Insurance), None, None], [1, 1, 1]),
            (&[Some(Harbour(1)), None], [1, 1, 1]),
        ],
    );
    // Seat 1 holds 2 shares: mortgaging both raises 24; 3 + 24 = 27 < 29, so the bank covers 2.
    state.players[1].cash = 3;
    let events = play_rounds(&mut state, &[(&[None], [1, 1, 1])]);
    let forced = events
        .iter()
        .filter(|e| matches!(&e.kind, Some(E::ShareMortgaged(m)) if m.seat == 1 && m.forced));
    assert_eq!(forced.count(), 2);
    assert!(has_event(&events, |e| matches!(e, E::InsuranceSettled(i)
        if i.owed == 29 && i.paid == 27 && i.bank_covered == 2)));
    assert_eq!(cash(&state, 1), 0);
    assert_eq!(state.players[1].mortgaged_count(), 2);
}

#[test]
fn forced_mortgage_takes_the_minimum_and_keeps_the_surplus() {
    let mut state = launched(
        &cfg(4),
        &[(Ware::Ginseng, 3), (Ware::Silk, 3), (Ware::Jade, 3)],
    );
    use Space::*;
    play_rounds(
        &mut state,
        &[
            (
                &[Some(Harbour(0)), Some(Insurance), Some(Shipyard(0)), None],
                [1, 1, 1],
            ),
            (&[Some(Harbour(1)), None, None], [1, 1, 1]),
        ],
    );
    state.players[1].cash = 20;
    // Owes 6 to seat 2 and 8 + 15 to the bank = 29; 20 + one mortgage (12) = 32, 3 left.
    let events = play_rounds(&mut state, &[(&[None], [1, 1, 1])]);
    assert!(has_event(
        &events,
        |e| matches!(e, E::InsuranceSettled(i) if i.paid == 29 && i.bank_covered == 0)
    ));
    assert_eq!(state.players[1].mortgaged_count(), 1);
    assert_eq!(cash(&state, 1), 3);
    assert_eq!(paid(&events, 2, pb::PayoutReason::Shipyard), 6);
}

// ----- §10 arrival-probability table (spec §2.5) -----------------------------------------------

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

#[test]
fn no_punt_arrives_on_roll_1() {
    let base = launched(
        &cfg(4),
        &[(Ware::Ginseng, 5), (Ware::Silk, 4), (Ware::Jade, 0)],
    );
    for pips in 1..=6 {
        let mut state = base.clone();
        state.move_by_dice(
            &[
                (Ware::Ginseng, pips),
                (Ware::Silk, pips),
                (Ware::Jade, pips),
            ],
            &mut Vec::new(),
        );
        assert_eq!(state.voyage.docked, 0);
        assert!(state.voyage.punts.iter().all(|p| p.position <= 11));
    }
}

// ----- Placement rules (spec §4.3, §5, §9 A7, A9) ----------------------------------------------

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
    assert_illegal(&state, 0, place_kind(Crew(Ware::Jade)), "§4.3");
    assert_illegal(&state, 0, place_kind(Crew(Ware::Ginseng)), "§4.2");
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
        assert_illegal(&state, 2, place_kind(taken), "§4.3");
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
            ware: Ware::Jade.to_proto(),
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
                assert_illegal(&state, 0, place_kind(space), "§9 A7");
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
    assert_illegal(&state, 0, place_kind(Space::Harbour(2)), "§5");
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
    assert_illegal(&state, 1, place_kind(Space::Crew(Ware::Silk)), "§5");
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

// ----- Money (spec §5, §9 A11 guard) -----------------------------------------------------------

#[test]
fn mortgage_and_redeem_at_own_decision_points_with_the_cycle_guard() {
    let mut state = new_game(&cfg(4));
    let ware = state.players[0].dealt[0];
    let mortgage = A::MortgageShare(pb::MortgageShare {
        ware: ware.to_proto(),
    });
    let redeem = A::RedeemShare(pb::RedeemShare {
        ware: ware.to_proto(),
    });
    // Not at another seat's decision point.
    assert!(matches!(
        state.clone().apply(
            1,
            &pb::Action {
                kind: Some(mortgage.clone())
            }
        ),
        Err(ActionError::NotYourTurn { .. })
    ));
    assert_illegal(&state, 0, redeem.clone(), "§5");
    let events = act(&mut state, mortgage.clone());
    assert!(has_event(
        &events,
        |e| matches!(e, E::ShareMortgaged(m) if !m.forced)
    ));
    assert_eq!(cash(&state, 0), 42);
    assert_eq!(state.to_act(), Some(0), "a mortgage does not end the turn");
    // The guard: no redemption after a mortgage at the same decision point.
    assert!(
        !listed(&state)
            .iter()
            .any(|a| matches!(a.kind, Some(A::RedeemShare(_))))
    );
    assert_illegal(&state, 0, redeem.clone(), "§5");
    act(&mut state, A::PassAuction(pb::PassAuction {}));
    pass_all(&mut state);
    // A new decision point (the purchase): redeeming is open again, then mortgaging is not.
    assert_eq!(state.to_act(), Some(0));
    act(&mut state, redeem.clone());
    assert_eq!(cash(&state, 0), 27);
    assert!(
        !listed(&state)
            .iter()
            .any(|a| matches!(a.kind, Some(A::MortgageShare(_))))
    );
    assert_illegal(&state, 0, mortgage, "§5");
    // Redeeming needs 15 in cash.
    let mut poor = state.clone();
    poor.money_mode = MoneyMode::Free;
    poor.players[0].mortgaged[ware.index()] = 1;
    poor.players[0].cash = 14;
    assert_illegal(&poor, 0, redeem, "§5");
}

// ----- Game end and scoring (spec §6, §9 A12, A17) ---------------------------------------------

#[test]
fn the_game_ends_after_the_voyage_in_which_a_ware_reaches_30() {
    let mut state = launched(
        &cfg(3),
        &[(Ware::Ginseng, 5), (Ware::Silk, 4), (Ware::Jade, 0)],
    );
    set_values(&mut state, [3, 2, 1, 0]);
    // Seat 1 mortgages a share (it still scores, minus 15).
    let share = state.players[1].dealt[0];
    state.players[1].mortgaged[share.index()] = 1;
    state.players[1].cash += 12;
    use Space::*;
    let mut events = play_rounds(
        &mut state,
        &[
            (
                &[
                    Some(Crew(Ware::Ginseng)),
                    Some(Harbour(0)),
                    Some(Harbour(1)),
                ],
                [1, 1, 1],
            ),
            (&[None, Some(Shipyard(0)), Some(Shipyard(1))], [3, 1, 1]),
            (&[Some(Shipyard(2)), None], [6, 1, 1]),
        ],
    );
    assert_eq!(punt(&state, Ware::Ginseng).place, PuntPlace::Harbour(0));
    events.extend(play_rounds(&mut state, &[(&[None], [1, 1, 1])]));
    // Ginseng rose 20 -> 30: the game is over after the payouts (crew 18 to seat 0).
    assert_eq!(state.values[0], TOP_STEP);
    assert_eq!(state.phase, Phase::Over);
    assert!(has_event(&events, |e| matches!(e, E::GameEnded(_))));
    assert_eq!(cash(&state, 0), 30 - 1 + 18);
    let outcome = state.outcome().expect("over");
    for seat in 0..3u32 {
        let player = &state.players[seat as usize];
        let holdings = player.holdings();
        let shares: i64 = Ware::ALL
            .iter()
            .map(|w| i64::from(holdings[w.index()]) * state.value(*w) as i64)
            .sum();
        let expected = player.cash as i64 + shares - 15 * i64::from(player.mortgaged_count());
        assert_eq!(outcome.scores[seat as usize], expected);
    }
    let best = *outcome.scores.iter().max().expect("scores");
    let winners: Vec<Seat> = (0..3)
        .filter(|s| outcome.scores[*s as usize] == best)
        .collect();
    assert_eq!(outcome.winners, winners);
    // Nothing more can be done.
    assert_eq!(
        state.apply(
            0,
            &pb::Action {
                kind: Some(A::PassAuction(pb::PassAuction {}))
            }
        ),
        Err(ActionError::GameOver)
    );
    assert!(state.legal_actions(0).is_empty());
    assert_eq!(state.to_act(), None);
}

#[test]
fn ties_share_the_win_unless_cash_breaks_them() {
    let mut state = new_game(&cfg(3));
    // Jade at 30 ends the game; nutmeg is worth 10, ginseng 0.
    state.values = [0, 2, 0, TOP_STEP];
    state.players[0].dealt = vec![Ware::Ginseng, Ware::Ginseng];
    state.players[1].dealt = vec![Ware::Nutmeg, Ware::Ginseng];
    state.players[2].dealt = vec![Ware::Ginseng, Ware::Ginseng];
    state.supply = [0, 4, 5, 5];
    // Seat 0: 40 cash; seat 1: 30 cash + a nutmeg share worth 10; seat 2: nothing.
    state.players[0].cash = 40;
    state.players[1].cash = 30;
    state.players[2].cash = 0;
    let mut shared = state.clone();
    shared.end_game(&mut Vec::new());
    shared.check_invariants().expect("consistent");
    let outcome = shared.outcome().expect("over");
    assert_eq!(outcome.scores, vec![40, 40, 0]);
    assert_eq!(outcome.winners, vec![0, 1]);
    state.options.tie_break_most_cash = true;
    state.end_game(&mut Vec::new());
    assert_eq!(state.outcome().map(|o| o.winners), Some(vec![0]));
}

#[test]
fn mortgaged_shares_still_count_minus_15() {
    let mut state = new_game(&cfg(3));
    state.values = [TOP_STEP, 0, 0, 0];
    state.players[0].dealt = vec![Ware::Ginseng, Ware::Ginseng];
    state.players[0].mortgaged = [1, 0, 0, 0];
    state.players[0].cash = 7;
    assert_eq!(state.score(0), 7 + 60 - 15);
    state.players[0].cash = 0;
    state.values = [0; 4];
    assert_eq!(state.score(0), -15, "a score can be negative");
}

// ----- Hidden information (spec §7) ------------------------------------------------------------

#[test]
fn views_hide_other_players_shares_and_mortgaged_wares() {
    let mut state = new_game(&cfg(4));
    let ware = state.players[1].dealt[0];
    act(&mut state, A::PassAuction(pb::PassAuction {}));
    let events = act(
        &mut state,
        A::MortgageShare(pb::MortgageShare {
            ware: ware.to_proto(),
        }),
    );
    for viewer in [Viewer::Seat(0), Viewer::Seat(2), Viewer::Spectator] {
        let view = state.view(viewer);
        let seat1 = &view.players[1];
        assert!(seat1.shares.is_empty() && seat1.mortgaged.is_empty());
        assert_eq!((seat1.share_count, seat1.mortgaged_count), (2, 1));
        let redacted = Manila::redact_event(&events[0], viewer).expect("visible");
        assert!(matches!(&redacted.kind, Some(E::ShareMortgaged(m)) if m.ware == 0 && m.seat == 1));
        // No view names any ware of another player's dealt shares.
        for (seat, player) in view.players.iter().enumerate() {
            if !viewer.is(seat as u32) {
                assert!(
                    player.shares.is_empty()
                        && player.mortgaged.is_empty()
                        && player.bought.is_empty()
                );
            }
        }
    }
    let own = state.view(Viewer::Seat(1));
    let total: u32 = own.players[1].shares.iter().map(|c| c.count).sum();
    assert_eq!(total, 2);
    assert_eq!(
        own.players[1].mortgaged,
        vec![pb::WareCount {
            ware: ware.to_proto(),
            count: 1
        }]
    );
    let mine = Manila::redact_event(&events[0], Viewer::Seat(1)).expect("visible");
    assert_eq!(mine, events[0]);
}

#[test]
fn views_do_not_depend_on_hidden_information() {
    let mut state = new_game(&cfg(5));
    let ware = state.players[0].dealt[0].to_proto();
    act(&mut state, A::MortgageShare(pb::MortgageShare { ware }));
    for viewer in (0..5).map(Viewer::Seat).chain([Viewer::Spectator]) {
        for n in 0..20 {
            let other = state.resample_hidden(viewer, &Seed::from_u64(n));
            assert_eq!(other.view(viewer), state.view(viewer));
            other
                .check_invariants()
                .expect("resampled state is consistent");
            if let Viewer::Seat(s) = viewer {
                assert_eq!(other.players[s as usize], state.players[s as usize]);
            }
        }
    }
    // Resampling really redraws: some other seat's dealt shares differ for some seed.
    let changed = (0..50).any(|n| {
        let other = state.resample_hidden(Viewer::Spectator, &Seed::from_u64(n));
        other
            .players
            .iter()
            .zip(&state.players)
            .any(|(a, b)| a.dealt != b.dealt)
    });
    assert!(changed);
    // The serialized view never contains the RNG seed bytes.
    let bytes = prost::Message::encode_to_vec(&state.view(Viewer::Spectator));
    let seed = Seed::from_u64(7).0;
    assert!(!bytes.windows(8).any(|w| w == &seed[..8]));
}

// ----- Rejected actions (contract) -------------------------------------------------------------

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
    assert_illegal(&state, 0, A::SkipPurchase(pb::SkipPurchase {}), "§4.1");
    assert_illegal(&state, 0, place_kind(Space::Insurance), "§4.1");
    assert_illegal(&state, 0, A::Bid(pb::Bid { amount: 0 }), "§4.1");
    assert_illegal(&state, 0, A::Bid(pb::Bid { amount: 55 }), "§4.1");
    assert_illegal(&state, 0, A::StayAboard(pb::StayAboard {}), "§4.1");
    assert_illegal(
        &state,
        0,
        A::PilotPunts(pb::PilotPunts { shifts: vec![] }),
        "§4.1",
    );
    assert_illegal(
        &state,
        0,
        A::DirectPlunder(pb::DirectPlunder {
            ware: Ware::Jade.to_proto(),
            destination: pb::PlunderDestination::Harbour as i32,
        }),
        "§4.1",
    );
    let placing = launched(
        &cfg(4),
        &[(Ware::Nutmeg, 3), (Ware::Silk, 3), (Ware::Jade, 3)],
    );
    assert_illegal(&placing, 0, A::Bid(pb::Bid { amount: 3 }), "§4.3");
    assert_illegal(
        &placing,
        0,
        load_kind(&[(Ware::Nutmeg, 3), (Ware::Silk, 3), (Ware::Jade, 3)]),
        "§4.3",
    );
    let mut broke = placing.clone();
    broke.players[0].cash = 3;
    broke.players[0].mortgaged = broke.players[0].holdings();
    assert_illegal(&broke, 0, place_kind(Space::Pirate), "§5");
    assert_malformed(
        &placing,
        0,
        Some(A::DirectPlunder(pb::DirectPlunder {
            ware: Ware::Jade.to_proto(),
            destination: 0,
        })),
    );
}

// ----- Seeded random play (contract + §10 invariants) ------------------------------------------

/// ≥ 10,000 games per player count, all with invariants after every action; the first ones
/// with the harness's full contract checks (views, serde, replay), the rest lighter for time.
fn random_games(players: u32, games: u64, standard: u64) {
    let options = [
        cfg(players),
        pb::Config {
            players,
            pirate_variant: true,
            forbid_placing_on_docked: true,
            stowaway_insurer_allowed: true,
            wreck_unguarded_on_13: true,
            tie_break: pb::TieBreak::MostCash as i32,
            close_pirate_ship_after_boarding: true,
            three_player_extra_round_before_roll_two: true,
            start_seat: players - 1,
        },
        pb::Config {
            players,
            pirate_variant: true,
            ..Default::default()
        },
    ];
    let light = Checks {
        invariants: true,
        deep_every: 0,
        replay: false,
    };
    for i in 0..games {
        let config = &options[(i % 3) as usize];
        let checks = if i < standard {
            Checks::STANDARD
        } else {
            light
        };
        let seed = Seed::from_u64(i + 1000 * u64::from(players));
        if let Err(e) = play::<Manila>(config, seed, 20_000, checks) {
            panic!("{players} players, game {i} ({config:?}): {e}");
        }
    }
}

#[test]
fn random_play_3_players() {
    random_games(3, 10_000, 1_000);
}

#[test]
fn random_play_4_players() {
    random_games(4, 10_000, 1_000);
}

#[test]
fn random_play_5_players() {
    random_games(5, 10_000, 1_000);
}

// ----- Board data (spec §2) ---------------------------------------------------------------------

#[test]
fn board_data_is_consistent() {
    // Every payoff divides by every possible crew size, and by 2 pirates (spec §2.1 note).
    for ware in Ware::ALL {
        let slots = ware.crew_costs().len() as u64;
        assert!(
            (1..=slots).all(|crew| ware.payoff() % crew == 0),
            "{ware:?}"
        );
        assert!(
            ware.crew_costs().windows(2).all(|w| w[0] <= w[1]),
            "{ware:?} slots not cheapest first"
        );
        assert_eq!(Ware::from_proto(ware.to_proto()), Some(ware));
    }
    // The insurer's liability is the running sum of the shipyard payouts (spec §4.8 D).
    let mut running = 0;
    for (wrecks, owed) in INSURANCE_LIABILITY.iter().enumerate().skip(1) {
        running += BERTH_PAYS[wrecks - 1];
        assert_eq!(*owed, running);
    }
    assert_eq!(VALUE_TRACK[TOP_STEP], 30);
    // 25 ordered start triples (spec §2.5), as the loading listing shows (4 × 25 = 100).
    let triples = (0..=5u32)
        .flat_map(|a| (0..=5u32).flat_map(move |b| (0..=5u32).map(move |c| a + b + c)))
        .filter(|s| *s == 9);
    assert_eq!(triples.count(), 25);
}
