//! The decision pass (spec A5, A7, A13 S9–S12): flags, claims, passing, who is asked.

use super::*;

#[test]
fn pirate_by_the_active_player_takes_at_once() {
    let mut state = arranged(&config(4));
    stack_deck(&mut state, &["X11", "X01"]);
    reveal(&mut state, 1);
    let events = act(&mut state, 1, flag(pb::Flag::Pirate));
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.kind, Some(Ev::ShipTaken(t)) if t.seat == 1))
    );
    assert_eq!(state.to_act(), Some(1));
    assert!(matches!(
        state.phase,
        Phase::PlacingShip {
            taker: 1,
            flag: FlagKind::Pirate,
            ..
        }
    ));
}

#[test]
fn a_tentative_claim_is_offered_to_each_later_pirate_then_stands() {
    let mut state = arranged(&config(4));
    stack_deck(&mut state, &["X11", "X01"]);
    reveal(&mut state, 1);
    act(&mut state, 1, flag(pb::Flag::PlusOne));
    // Every other player in turn, ending with the active player's right-hand neighbour (seat 0).
    assert_eq!(deciders(&state), vec![2, 3, 0]);
    // Only the pirate flag may be played now (S10) — the listing offers Pass and Pirate.
    let legal = state.legal_actions(2);
    assert_eq!(legal.len(), 2);
    act(&mut state, 2, pass());
    act(&mut state, 3, pass());
    let events = act(&mut state, 0, pass());
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.kind, Some(Ev::ShipTaken(t))
        if t.seat == 1 && t.flag() == pb::Flag::PlusOne))
    );
    assert!(matches!(
        state.phase,
        Phase::PlacingShip {
            taker: 1,
            flag: FlagKind::PlusOne,
            ..
        }
    ));
}

#[test]
fn players_without_a_pirate_flag_are_not_asked_after_a_claim() {
    let mut state = arranged(&config(4));
    give_ship(&mut state, 2, City::Venice, FlagKind::Pirate, "X27");
    stack_deck(&mut state, &["X11", "X01"]);
    reveal(&mut state, 1);
    act(&mut state, 1, flag(pb::Flag::Goods));
    assert_eq!(deciders(&state), vec![3, 0]);
}

#[test]
fn one_pass_per_card_earlier_passers_get_no_second_chance() {
    // Default (S9): the active player passes, seat 3 claims; only seat 0 (right of active 1) is
    // still asked; seats 1 and 2, who passed, are not.
    let mut state = arranged(&config(4));
    stack_deck(&mut state, &["X11", "X01"]);
    reveal(&mut state, 1);
    act(&mut state, 1, pass());
    act(&mut state, 2, pass());
    act(&mut state, 3, flag(pb::Flag::PlusOne));
    assert_eq!(deciders(&state), vec![0]);
    act(&mut state, 0, pass());
    assert!(matches!(state.phase, Phase::PlacingShip { taker: 3, .. }));
    // So the right-hand neighbour's claim cannot be stolen at all.
    let mut state = arranged(&config(4));
    stack_deck(&mut state, &["X11", "X01"]);
    reveal(&mut state, 1);
    for seat in [1, 2, 3] {
        act(&mut state, seat, pass());
    }
    act(&mut state, 0, flag(pb::Flag::Goods));
    assert!(matches!(
        state.phase,
        Phase::PlacingShip {
            taker: 0,
            flag: FlagKind::Goods,
            ..
        }
    ));
}

#[test]
fn option_full_circle_gives_earlier_passers_a_pirate_chance() {
    let options = pb::Config {
        players: 4,
        pirate_chance_full_circle: true,
        ..pb::Config::default()
    };
    let mut state = arranged(&options);
    stack_deck(&mut state, &["X11", "X01"]);
    reveal(&mut state, 1);
    act(&mut state, 1, pass());
    act(&mut state, 2, pass());
    act(&mut state, 3, flag(pb::Flag::PlusOne));
    assert_eq!(deciders(&state), vec![0, 1, 2]);
    act(&mut state, 0, pass());
    let events = act(&mut state, 1, flag(pb::Flag::Pirate));
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.kind, Some(Ev::FlagReturned(r)) if r.seat == 3))
    );
    assert!(matches!(
        state.phase,
        Phase::PlacingShip {
            taker: 1,
            flag: FlagKind::Pirate,
            ..
        }
    ));
}

#[test]
fn a_claimed_card_can_only_be_taken_with_a_pirate_flag() {
    let mut state = arranged(&config(4));
    stack_deck(&mut state, &["X11", "X01"]);
    reveal(&mut state, 1);
    act(&mut state, 1, flag(pb::Flag::PlusOne));
    let error = rejected(&state, 2, flag(pb::Flag::Goods));
    assert_eq!(rule_of(&error), "§A13 S10");
}

#[test]
fn option_overbid_replaces_a_tentative_claim() {
    let options = pb::Config {
        players: 4,
        tentative_overbid: true,
        ..pb::Config::default()
    };
    let mut state = arranged(&options);
    stack_deck(&mut state, &["X11", "X01"]);
    reveal(&mut state, 1);
    act(&mut state, 1, flag(pb::Flag::PlusOne));
    assert_eq!(state.legal_actions(2).len(), 4, "pass, pirate, +1, goods");
    let events = act(&mut state, 2, flag(pb::Flag::Goods));
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.kind, Some(Ev::FlagReturned(r))
        if r.seat == 1 && r.flag() == pb::Flag::PlusOne))
    );
    assert_eq!(state.players[1].flags.len(), 3);
    act(&mut state, 3, pass());
    act(&mut state, 0, pass());
    assert!(matches!(
        state.phase,
        Phase::PlacingShip {
            taker: 2,
            flag: FlagKind::Goods,
            ..
        }
    ));
}

#[test]
fn option_overbid_with_full_circle_lets_each_seat_claim_tentatively_once() {
    let options = pb::Config {
        players: 3,
        tentative_overbid: true,
        pirate_chance_full_circle: true,
        ..pb::Config::default()
    };
    let mut state = arranged(&options);
    stack_deck(&mut state, &["X11", "X01"]);
    reveal(&mut state, 0);
    act(&mut state, 0, flag(pb::Flag::PlusOne));
    act(&mut state, 1, flag(pb::Flag::PlusOne));
    assert_eq!(deciders(&state), vec![2, 0]);
    act(&mut state, 2, pass());
    // Seat 0 was overridden and may now only play its pirate flag.
    let error = rejected(&state, 0, flag(pb::Flag::Goods));
    assert_eq!(rule_of(&error), "§A13 S10");
    act(&mut state, 0, pass());
    assert!(matches!(
        state.phase,
        Phase::PlacingShip {
            taker: 1,
            flag: FlagKind::PlusOne,
            ..
        }
    ));
}

#[test]
fn when_all_pass_the_card_is_set_aside_and_the_same_player_reveals_again() {
    let mut state = arranged(&config(3));
    stack_deck(&mut state, &["X11", "X01"]);
    reveal(&mut state, 2);
    act(&mut state, 2, pass());
    act(&mut state, 0, pass());
    let events = act(&mut state, 1, pass());
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.kind, Some(Ev::CardSetAside(c)) if c.active_seat == 2))
    );
    assert_eq!(state.set_aside, vec![card_id(&state, "X11")]);
    assert_eq!(revealed_by(&events), Some(2));
    assert_eq!(state.to_act(), Some(2));
    // The set-aside card is public.
    let view = state.view(Viewer::Spectator);
    assert_eq!(view.set_aside.len(), 1);
    assert_eq!(view.set_aside[0].label, "X11");
}

#[test]
fn next_active_is_left_of_the_taker() {
    let mut state = arranged(&config(5));
    stack_deck(&mut state, &["X27", "X28"]);
    reveal(&mut state, 0);
    act(&mut state, 0, pass());
    act(&mut state, 1, pass());
    act(&mut state, 2, flag(pb::Flag::Pirate));
    let events = act(&mut state, 2, place(pb::City::Venice));
    assert_eq!(revealed_by(&events), Some(3));
}

#[test]
fn option_next_active_left_of_the_active_player() {
    let options = pb::Config {
        players: 5,
        next_active_rule: pb::NextActiveRule::LeftOfActive as i32,
        ..pb::Config::default()
    };
    let mut state = arranged(&options);
    stack_deck(&mut state, &["X27", "X28"]);
    reveal(&mut state, 0);
    act(&mut state, 0, pass());
    act(&mut state, 1, pass());
    act(&mut state, 2, flag(pb::Flag::Pirate));
    let events = act(&mut state, 2, place(pb::City::Venice));
    assert_eq!(revealed_by(&events), Some(1));
}

#[test]
fn players_without_flags_are_skipped_as_deciders_and_as_active() {
    let mut state = arranged(&config(4));
    // Seat 3 has used all three flags.
    give_ship(&mut state, 3, City::Venice, FlagKind::Pirate, "X01");
    give_ship(&mut state, 3, City::Rome, FlagKind::PlusOne, "X02");
    give_ship(&mut state, 3, City::Naples, FlagKind::Goods, "X03");
    stack_deck(&mut state, &["X27", "X28"]);
    reveal(&mut state, 1);
    assert_eq!(deciders(&state), vec![1, 2, 0], "seat 3 is not asked");
    act(&mut state, 1, pass());
    act(&mut state, 2, flag(pb::Flag::Pirate));
    // Left of seat 2 is seat 3, who has no flags: seat 0 becomes active (S12).
    let events = act(&mut state, 2, place(pb::City::Rome));
    assert_eq!(revealed_by(&events), Some(0));
}
