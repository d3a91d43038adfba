//! Tests: the rulebook example (spec A14) step by step, each rule and ruling of A5–A13 on a
//! precisely arranged state, every option, the hidden-information guarantees, rejected actions with
//! the rule they cite, and seeded random play over every player count.

use super::*;
use crate::games::common::random_play::{Checks, play};
use pb::action::Kind;
use pb::event::Kind as Ev;

// ------------------------------------------------------------------------------------------------
// Helpers

fn config(players: u32) -> pb::Config {
    pb::Config {
        players,
        ..pb::Config::default()
    }
}

fn new_game(config: &pb::Config, seed: u64) -> Strozzi {
    Strozzi::setup(config, &Seed::from_u64(seed)).expect("valid config")
}

fn card_id(state: &Strozzi, label: &str) -> CardId {
    state
        .catalogue
        .cards
        .iter()
        .position(|c| c.label == label)
        .expect("known label") as CardId
}

/// A game with nothing revealed yet: the card revealed at setup goes back on the deck, the state
/// waits for the test to arrange it and call [`reveal`].
fn arranged(config: &pb::Config) -> Strozzi {
    let mut state = new_game(config, 1);
    if let Phase::Deciding(decision) = &state.phase {
        state.deck.push(decision.card);
    }
    state.phase = Phase::Finished;
    state
}

/// Takes `card` out of the deck or the removed pile (keeping the removed count), to place it.
fn take_card(state: &mut Strozzi, card: CardId) {
    if let Some(i) = state.deck.iter().position(|&c| c == card) {
        state.deck.remove(i);
    } else if let Some(i) = state.removed.iter().position(|&c| c == card) {
        state.removed.remove(i);
        let replacement = state.deck.remove(0);
        state.removed.push(replacement);
    }
}

/// Puts the cards with these labels on top of the deck, the first one on top.
fn stack_deck(state: &mut Strozzi, labels: &[&str]) {
    for label in labels.iter().rev() {
        let card = card_id(state, label);
        take_card(state, card);
        state.deck.push(card);
    }
}

/// Gives `seat` a ship already in `port`, taken with `flag` (the flag leaves its hand).
fn give_ship(state: &mut Strozzi, seat: Seat, port: City, flag: FlagKind, label: &str) {
    let card = card_id(state, label);
    take_card(state, card);
    state.players[seat as usize].flags.retain(|&f| f != flag);
    let speed = state.card(card).sails + u8::from(flag == FlagKind::PlusOne);
    let column = &mut state.ports[port.index()];
    let place = column.iter().take_while(|b| b.speed >= speed).count();
    column.insert(
        place,
        Berth {
            owner: seat,
            card,
            flag,
            speed,
            arrival: state.arrivals,
        },
    );
    state.arrivals += 1;
}

/// Puts `seat`'s marker on `position` of `city`, rightmost in that space.
fn put_marker(state: &mut Strozzi, seat: Seat, city: City, position: u8) {
    for space in &mut state.tracks[city.index()] {
        space.retain(|&s| s != seat);
    }
    state.tracks[city.index()][usize::from(position)].push(seat);
}

/// Makes `tiles` the face-up display (the rest stays in the stack, order unchanged).
fn set_display(state: &mut Strozzi, tiles: &[TileId]) {
    let mut all: Vec<TileId> = state.stack.iter().chain(&state.display).copied().collect();
    all.retain(|t| !tiles.contains(t));
    state.stack = all;
    state.display = tiles.to_vec();
}

/// The active player reveals the top card.
fn reveal(state: &mut Strozzi, active: Seat) -> Vec<pb::Event> {
    let mut events = Vec::new();
    state.next_turn(active, &mut events);
    state
        .check_invariants()
        .expect("arranged state is consistent");
    events
}

fn act(state: &mut Strozzi, seat: Seat, kind: Kind) -> Vec<pb::Event> {
    let action = pb::Action { kind: Some(kind) };
    let events = state
        .apply(seat, &action)
        .unwrap_or_else(|e| panic!("seat {seat} {action:?}: {e}"));
    state.check_invariants().expect("invariants hold");
    events
}

fn pass() -> Kind {
    Kind::Pass(pb::Pass {})
}

fn flag(flag: pb::Flag) -> Kind {
    Kind::PlayFlag(pb::PlayFlag { flag: flag as i32 })
}

fn place(port: pb::City) -> Kind {
    Kind::PlaceShip(pb::PlaceShip {
        port: port as i32,
        decline_goods_flag_step: false,
    })
}

fn take_tile(tile: TileId) -> Kind {
    Kind::TakeProgressTile(pb::TakeProgressTile {
        tile_id: u32::from(tile),
        decline_goods_step: false,
    })
}

fn rejected(state: &Strozzi, seat: Seat, kind: Kind) -> ActionError {
    let mut probe = state.clone();
    let before = postcard::to_stdvec(state).expect("serializes");
    let error = probe
        .apply(seat, &pb::Action { kind: Some(kind) })
        .expect_err("must be rejected");
    assert_eq!(
        postcard::to_stdvec(&probe).expect("serializes"),
        before,
        "rejection changed the state"
    );
    error
}

fn rule_of(error: &ActionError) -> &'static str {
    match error {
        ActionError::Illegal { rule, .. } | ActionError::NotYourTurn { rule, .. } => rule,
        other => panic!("expected an illegal-move error, got {other:?}"),
    }
}

fn deciders(state: &Strozzi) -> Vec<Seat> {
    match &state.phase {
        Phase::Deciding(d) => d.deciders.clone(),
        other => panic!("not deciding: {other:?}"),
    }
}

fn moves(events: &[pb::Event]) -> Vec<(Seat, pb::City, pb::MoveCause, u32, u32, u32)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            Some(Ev::MarkerMoved(m)) => Some((m.seat, m.city(), m.cause(), m.steps, m.from, m.to)),
            _ => None,
        })
        .collect()
}

fn revealed_by(events: &[pb::Event]) -> Option<Seat> {
    events.iter().find_map(|e| match &e.kind {
        Some(Ev::CardRevealed(r)) => Some(r.active_seat),
        _ => None,
    })
}

fn port_owners(state: &Strozzi, port: City) -> Vec<Seat> {
    state.ports[port.index()].iter().map(|b| b.owner).collect()
}

fn tile_where(state: &Strozzi, category: Category, value: u8, goods: Option<Goods>) -> TileId {
    state
        .catalogue
        .tiles
        .iter()
        .position(|t| t.category == category && t.value == value && t.goods == goods)
        .expect("such a tile exists") as TileId
}

// ------------------------------------------------------------------------------------------------
// Data and setup

#[test]
fn data_files_parse_and_are_consistent() {
    for layout in [Layout::Short, Layout::Numbered] {
        let catalogue = data::catalogue(layout).expect("data files parse");
        catalogue.validate().expect("data files are consistent");
        assert_eq!(catalogue.cards.len(), 29);
        assert_eq!(catalogue.tiles.len(), 36);
        for category in Category::ALL {
            assert_eq!(
                catalogue
                    .tiles
                    .iter()
                    .filter(|t| t.category == category)
                    .count(),
                12
            );
        }
        for track in &catalogue.tracks {
            assert_eq!(
                track.bonus_at(track.top),
                Some(15),
                "the top space is the 15 bonus"
            );
        }
    }
    let short = data::catalogue(Layout::Short).expect("parses");
    assert_eq!(short.tracks[0].top, 10);
    assert_eq!(short.tracks[0].bonus_at(6), Some(5));
    assert_eq!(short.tracks[0].bonus_at(8), Some(10));
    let numbered = data::catalogue(Layout::Numbered).expect("parses");
    assert_eq!(numbered.tracks[3].top, 15);
    assert_eq!(numbered.tracks[3].bonus_at(5), Some(5));
    // Every file says it is provisional.
    for text in [
        include_str!("ships.json"),
        include_str!("progress_tiles.json"),
        include_str!("tracks.json"),
    ] {
        assert!(text.contains("\"provisional\": true"));
    }
}

#[test]
fn validation_refuses_broken_data() {
    let good = data::catalogue(Layout::Short).expect("parses");
    let mut bad = good.clone();
    bad.cards.pop();
    assert!(bad.validate().is_err());
    let mut bad = good.clone();
    bad.cards[0].sails = 9;
    assert!(bad.validate().is_err());
    let mut bad = good.clone();
    bad.tiles[0].goods = None;
    assert!(bad.validate().is_err());
    let mut bad = good.clone();
    bad.tracks[1].bonus[2].coins = 20;
    assert!(bad.validate().is_err());
    let mut bad = good;
    bad.tracks[2].bonus[0].coins = 7;
    assert!(bad.validate().is_err());
}

#[test]
fn config_errors() {
    for players in [0, 1, 2, 7] {
        assert!(
            Strozzi::setup(&config(players), &Seed::from_u64(0)).is_err(),
            "{players} players"
        );
    }
    let bad_seat = pb::Config {
        players: 4,
        first_seat: 4,
        ..pb::Config::default()
    };
    assert!(Strozzi::setup(&bad_seat, &Seed::from_u64(0)).is_err());
    let bad_enum = pb::Config {
        players: 4,
        track_layout: 9,
        ..pb::Config::default()
    };
    assert!(Strozzi::setup(&bad_enum, &Seed::from_u64(0)).is_err());
}

#[test]
fn setup_follows_a6() {
    for players in 3..=6u32 {
        let state = new_game(&config(players), 7);
        // A6.4: 17/14/11/8 removed, 3·N+3 in the deck; one is already face up.
        assert_eq!(state.removed.len(), [17, 14, 11, 8][players as usize - 3]);
        assert_eq!(state.deck.len() + 1, 3 * players as usize + 3);
        // A6.3: three tiles face up.
        assert_eq!(state.display.len(), 3);
        assert_eq!(state.stack.len(), 33);
        // A6.1, S3: markers on the starting spaces, in seat order from the start player.
        for city in City::ALL {
            assert_eq!(
                state.tracks[city.index()][0],
                (0..players).collect::<Vec<_>>()
            );
        }
        // A6.2: no money; A5: three flags each.
        assert!(
            state
                .players
                .iter()
                .all(|p| p.money == 0 && p.flags.len() == 3)
        );
        assert_eq!(state.to_act(), Some(0));
        assert_eq!(state.active, 0);
    }
    let third = pb::Config {
        players: 4,
        first_seat: 2,
        ..pb::Config::default()
    };
    let state = new_game(&third, 7);
    assert_eq!(state.to_act(), Some(2));
    assert_eq!(state.tracks[City::Florence.index()][0], vec![2, 3, 0, 1]);
    let random = pb::Config {
        players: 5,
        random_first_seat: true,
        ..pb::Config::default()
    };
    let starts: std::collections::BTreeSet<Seat> =
        (0..40).map(|i| new_game(&random, i).active).collect();
    assert!(starts.len() > 1, "the seeded draw varies: {starts:?}");
}

// ------------------------------------------------------------------------------------------------
// The rulebook example (spec A14)

#[test]
fn rulebook_example() {
    // Five players: Anna 0, Scott 1, Todd 2, Heather 3, James 4. Round 1, 7 of 15 flags used.
    let (anna, scott, todd, heather, james) = (0, 1, 2, 3, 4);
    let mut state = arranged(&config(5));
    give_ship(&mut state, anna, City::Naples, FlagKind::PlusOne, "X24");
    give_ship(&mut state, anna, City::Rome, FlagKind::Goods, "X15");
    give_ship(&mut state, scott, City::Venice, FlagKind::Pirate, "X27");
    give_ship(&mut state, scott, City::Naples, FlagKind::PlusOne, "X23");
    give_ship(&mut state, todd, City::Venice, FlagKind::PlusOne, "X19");
    give_ship(&mut state, heather, City::Venice, FlagKind::PlusOne, "X16");
    give_ship(&mut state, james, City::Rome, FlagKind::Pirate, "X28");
    let used: usize = state.players.iter().map(|p| 3 - p.flags.len()).sum();
    assert_eq!(used, 7);
    // The card of the example: 2 grain, 2 cloth, a progress symbol, no gold (sails not stated).
    let example = card_id(&state, "X20");
    state.catalogue.cards[usize::from(example)] = ShipCard {
        label: "EXAMPLE".into(),
        sails: 6,
        gold: 0,
        cloth: 2,
        grain: 2,
        scrolls: 0,
        progress: true,
    };
    stack_deck(&mut state, &["EXAMPLE", "X01"]);
    let art_gold = tile_where(&state, Category::Art, 1, Some(Goods::Gold));
    let science_two = tile_where(&state, Category::Science, 2, None);
    let architecture_two = tile_where(&state, Category::Architecture, 2, None);
    set_display(&mut state, &[art_gold, science_two, architecture_two]);
    let stack_top = *state.stack.last().expect("stack");

    // Anna reveals the card and passes: she holds only her pirate flag.
    let events = reveal(&mut state, anna);
    assert_eq!(revealed_by(&events), Some(anna));
    assert_eq!(state.to_act(), Some(anna));
    assert_eq!(state.players[anna as usize].flags, vec![FlagKind::Pirate]);
    act(&mut state, anna, pass());
    // Scott puts his goods flag on it (tentative).
    assert_eq!(state.to_act(), Some(scott));
    let events = act(&mut state, scott, flag(pb::Flag::Goods));
    assert!(matches!(&events[0].kind, Some(Ev::FlagPlayed(f)) if f.seat == scott && f.tentative));
    // Todd passes (he could have played his pirate flag).
    assert_eq!(state.to_act(), Some(todd));
    act(&mut state, todd, pass());
    // Heather plays her pirate flag and takes the ship; Scott's goods flag goes back to him.
    assert_eq!(state.to_act(), Some(heather));
    let events = act(&mut state, heather, flag(pb::Flag::Pirate));
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.kind, Some(Ev::FlagReturned(r))
        if r.seat == scott && r.flag() == pb::Flag::Goods))
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.kind, Some(Ev::ShipTaken(t))
        if t.seat == heather && t.flag() == pb::Flag::Pirate))
    );
    assert!(
        state.players[scott as usize]
            .flags
            .contains(&FlagKind::Goods)
    );
    // James, last to decide, can do nothing: the game now waits for Heather's port.
    assert!(
        !events
            .iter()
            .any(|e| matches!(&e.kind, Some(Ev::Passed(p)) if p.seat == james))
    );
    assert_eq!(state.to_act(), Some(heather));
    assert!(matches!(state.phase, Phase::PlacingShip { taker: 3, .. }));
    // She places it in Naples: Naples marker +2 (two cloth).
    let events = act(&mut state, heather, place(pb::City::Naples));
    assert_eq!(
        moves(&events),
        vec![(heather, pb::City::Naples, pb::MoveCause::CardGoods, 2, 0, 2)]
    );
    assert_eq!(state.marker(heather, City::Naples), (2, 0));
    // She takes the face-up art tile of value 1 with the Venice symbol: Venice +1.
    assert_eq!(state.to_act(), Some(heather));
    let events = act(&mut state, heather, take_tile(art_gold));
    assert_eq!(
        moves(&events),
        vec![(
            heather,
            pb::City::Venice,
            pb::MoveCause::ProgressTile,
            1,
            0,
            1
        )]
    );
    assert_eq!(state.players[heather as usize].tiles, vec![art_gold]);
    // The display is refilled from the stack.
    assert_eq!(
        state.display,
        vec![science_two, architecture_two, stack_top]
    );
    // James becomes active and reveals the next card.
    assert_eq!(revealed_by(&events), Some(james));
    assert_eq!(state.active, james);
    assert_eq!(state.to_act(), Some(james));
    // Naples column: Anna's 7 (+1 = 8), Scott's 6 (+1 = 7), Heather's 6.
    assert_eq!(
        port_owners(&state, City::Naples),
        vec![anna, scott, heather]
    );
}

// ------------------------------------------------------------------------------------------------
// The decision pass (spec A5, A7, A13 S9–S12)

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

// ------------------------------------------------------------------------------------------------
// Resolving a claim (spec A8)

#[test]
fn one_ship_per_player_per_port_and_never_florence() {
    let mut state = arranged(&config(3));
    give_ship(&mut state, 0, City::Venice, FlagKind::Goods, "X01");
    stack_deck(&mut state, &["X27", "X28"]);
    reveal(&mut state, 0);
    act(&mut state, 0, flag(pb::Flag::Pirate));
    assert_eq!(
        rule_of(&rejected(&state, 0, place(pb::City::Venice))),
        "§A8.1"
    );
    assert_eq!(
        rule_of(&rejected(&state, 0, place(pb::City::Florence))),
        "§A8.1"
    );
    assert_eq!(state.legal_actions(0).len(), 2, "Rome and Naples");
}

#[test]
fn the_last_flag_has_one_port_left_and_is_placed_automatically() {
    let mut state = arranged(&config(3));
    give_ship(&mut state, 0, City::Venice, FlagKind::Goods, "X01");
    give_ship(&mut state, 0, City::Rome, FlagKind::PlusOne, "X02");
    stack_deck(&mut state, &["X27", "X28"]);
    reveal(&mut state, 0);
    let events = act(&mut state, 0, flag(pb::Flag::Pirate));
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.kind, Some(Ev::ShipPlaced(p))
        if p.automatic && p.port() == pb::City::Naples))
    );
    assert_eq!(port_owners(&state, City::Naples), vec![0]);
    assert_eq!(revealed_by(&events), Some(1));
}

#[test]
fn speed_order_plus_one_counts_and_ties_go_below() {
    let mut state = arranged(&config(4));
    // X12 has 4 sails; X16 has 5; X24 has 7.
    give_ship(&mut state, 0, City::Rome, FlagKind::Pirate, "X16");
    stack_deck(&mut state, &["X12", "X24", "X20", "X01"]);
    reveal(&mut state, 1);
    // Seat 1 takes the 4 with +1: speed 5, ties with seat 0's 5 and goes below it.
    act(&mut state, 1, flag(pb::Flag::PlusOne));
    assert_eq!(
        deciders(&state),
        vec![2, 3],
        "seat 0 has used its pirate flag"
    );
    act(&mut state, 2, pass());
    act(&mut state, 3, pass());
    let events = act(&mut state, 1, place(pb::City::Rome));
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.kind, Some(Ev::ShipPlaced(p)) if p.speed == 5 && p.place == 1))
    );
    // X12 shows a progress symbol: take any tile.
    let tile = state.display[0];
    act(&mut state, 1, take_tile(tile));
    // Seat 2 takes the 7 and puts it on top.
    assert_eq!(state.to_act(), Some(2));
    act(&mut state, 2, flag(pb::Flag::Pirate));
    act(&mut state, 2, place(pb::City::Rome));
    assert_eq!(port_owners(&state, City::Rome), vec![2, 0, 1]);
    // Seat 3 takes the 6 with +1 = 7: ties with the 7 already there, goes below it but above 5s.
    act(&mut state, 3, flag(pb::Flag::PlusOne));
    // Seats 0 and 2 have used their pirate flags: only seat 1 is asked.
    assert_eq!(deciders(&state), vec![1]);
    act(&mut state, 1, pass());
    act(&mut state, 3, place(pb::City::Rome));
    let speeds: Vec<u8> = state.ports[City::Rome.index()]
        .iter()
        .map(|b| b.speed)
        .collect();
    assert_eq!(speeds, vec![7, 7, 5, 5]);
    assert_eq!(port_owners(&state, City::Rome), vec![2, 3, 0, 1]);
}

#[test]
fn goods_symbols_and_the_goods_flag_move_the_ports_marker() {
    let mut state = arranged(&config(3));
    // X04: 2 gold, 1 cloth, sails 2. In Venice: 2 steps for gold, +1 for the goods flag.
    stack_deck(&mut state, &["X04", "X27"]);
    reveal(&mut state, 0);
    act(&mut state, 0, flag(pb::Flag::Goods));
    act(&mut state, 1, pass());
    act(&mut state, 2, pass());
    let events = act(&mut state, 0, place(pb::City::Venice));
    assert_eq!(
        moves(&events),
        vec![
            (0, pb::City::Venice, pb::MoveCause::CardGoods, 2, 0, 2),
            (0, pb::City::Venice, pb::MoveCause::GoodsFlag, 1, 2, 3),
        ]
    );
}

#[test]
fn symbols_of_other_ports_do_nothing_but_the_goods_flag_still_steps() {
    let mut state = arranged(&config(3));
    // X04 in Rome: no grain, so only the goods flag's step (S7: unconditional).
    stack_deck(&mut state, &["X04", "X27"]);
    reveal(&mut state, 0);
    act(&mut state, 0, flag(pb::Flag::Goods));
    act(&mut state, 1, pass());
    act(&mut state, 2, pass());
    let events = act(&mut state, 0, place(pb::City::Rome));
    assert_eq!(
        moves(&events),
        vec![(0, pb::City::Rome, pb::MoveCause::GoodsFlag, 1, 0, 1)]
    );
}

#[test]
fn option_goods_flag_needs_a_matching_symbol() {
    let options = pb::Config {
        players: 3,
        goods_flag_needs_match: true,
        ..pb::Config::default()
    };
    let mut state = arranged(&options);
    stack_deck(&mut state, &["X04", "X27"]);
    reveal(&mut state, 0);
    act(&mut state, 0, flag(pb::Flag::Goods));
    act(&mut state, 1, pass());
    act(&mut state, 2, pass());
    let events = act(&mut state, 0, place(pb::City::Rome));
    assert!(moves(&events).is_empty());
}

#[test]
fn moves_are_mandatory_by_default_and_optional_with_the_option() {
    let mut state = arranged(&config(3));
    stack_deck(&mut state, &["X04", "X27"]);
    reveal(&mut state, 0);
    act(&mut state, 0, flag(pb::Flag::Goods));
    act(&mut state, 1, pass());
    act(&mut state, 2, pass());
    let decline = Kind::PlaceShip(pb::PlaceShip {
        port: pb::City::Venice as i32,
        decline_goods_flag_step: true,
    });
    assert_eq!(rule_of(&rejected(&state, 0, decline)), "§A13 S8");

    let options = pb::Config {
        players: 3,
        optional_extra_steps: true,
        ..pb::Config::default()
    };
    let mut state = arranged(&options);
    stack_deck(&mut state, &["X04", "X27"]);
    reveal(&mut state, 0);
    act(&mut state, 0, flag(pb::Flag::Goods));
    act(&mut state, 1, pass());
    act(&mut state, 2, pass());
    assert_eq!(
        state.legal_actions(0).len(),
        6,
        "three ports, each with and without the step"
    );
    let events = act(&mut state, 0, decline);
    assert_eq!(
        moves(&events),
        vec![(0, pb::City::Venice, pb::MoveCause::CardGoods, 2, 0, 2)]
    );
    assert!(events.iter().any(
        |e| matches!(&e.kind, Some(Ev::StepDeclined(d)) if d.cause() == pb::MoveCause::GoodsFlag)
    ));
}

#[test]
fn declining_a_step_that_does_not_exist_is_refused() {
    let options = pb::Config {
        players: 3,
        optional_extra_steps: true,
        ..pb::Config::default()
    };
    let mut state = arranged(&options);
    stack_deck(&mut state, &["X04", "X27"]);
    reveal(&mut state, 0);
    act(&mut state, 0, flag(pb::Flag::Pirate));
    let decline = Kind::PlaceShip(pb::PlaceShip {
        port: pb::City::Venice as i32,
        decline_goods_flag_step: true,
    });
    assert_eq!(rule_of(&rejected(&state, 0, decline)), "§A8.3");
}

#[test]
fn scrolls_move_florence_and_markers_queue_left_to_right() {
    let mut state = arranged(&config(3));
    put_marker(&mut state, 2, City::Florence, 2);
    put_marker(&mut state, 1, City::Florence, 2);
    // X07: two scrolls (and a progress symbol), sails 2.
    stack_deck(&mut state, &["X07", "X27"]);
    reveal(&mut state, 0);
    act(&mut state, 0, flag(pb::Flag::Pirate));
    let events = act(&mut state, 0, place(pb::City::Rome));
    assert_eq!(
        moves(&events),
        vec![(0, pb::City::Florence, pb::MoveCause::Scrolls, 2, 0, 2)]
    );
    assert_eq!(
        state.tracks[City::Florence.index()][2],
        vec![2, 1, 0],
        "arrivals go to the right"
    );
    assert_eq!(state.florence_ranks(), vec![2, 1, 0]);
}

#[test]
fn markers_stop_at_the_top_and_a_blocked_move_keeps_its_place() {
    let mut state = arranged(&config(3));
    let top = state.catalogue.tracks[City::Venice.index()].top;
    put_marker(&mut state, 0, City::Venice, top - 1);
    put_marker(&mut state, 1, City::Venice, top);
    put_marker(&mut state, 2, City::Venice, top);
    let mut events = Vec::new();
    // Seat 1 is leftmost at the top and cannot climb: it keeps its place.
    state.move_marker(1, City::Venice, 2, pb::MoveCause::CardGoods, &mut events);
    assert_eq!(state.marker(1, City::Venice), (top, 0));
    // Seat 0 climbs 3 but only 1 space exists: it lands on the top, rightmost.
    state.move_marker(0, City::Venice, 3, pb::MoveCause::CardGoods, &mut events);
    assert_eq!(
        state.tracks[City::Venice.index()][usize::from(top)],
        vec![1, 2, 0]
    );
    assert_eq!(
        moves(&events)[1],
        (
            0,
            pb::City::Venice,
            pb::MoveCause::CardGoods,
            3,
            u32::from(top) - 1,
            u32::from(top)
        )
    );
}

#[test]
fn progress_tile_choice_moves_its_goods_port_and_refills() {
    let mut state = arranged(&config(3));
    let cloth = tile_where(&state, Category::Science, 1, Some(Goods::Cloth));
    let two = tile_where(&state, Category::Art, 2, None);
    let gold = tile_where(&state, Category::Architecture, 1, Some(Goods::Gold));
    set_display(&mut state, &[cloth, two, gold]);
    // X19: sails 5, no goods, progress.
    stack_deck(&mut state, &["X19", "X27"]);
    reveal(&mut state, 0);
    act(&mut state, 0, flag(pb::Flag::Pirate));
    act(&mut state, 0, place(pb::City::Venice));
    assert_eq!(state.legal_actions(0).len(), 3);
    let wrong = tile_where(&state, Category::Art, 1, Some(Goods::Grain));
    assert!(!state.display.contains(&wrong));
    assert_eq!(rule_of(&rejected(&state, 0, take_tile(wrong))), "§A8.5");
    let events = act(&mut state, 0, take_tile(cloth));
    // The cloth symbol moves Naples, although the ship went to Venice.
    assert_eq!(
        moves(&events),
        vec![(0, pb::City::Naples, pb::MoveCause::ProgressTile, 1, 0, 1)]
    );
    assert_eq!(state.display.len(), 3);
    // A value-2 tile gives no step.
    let mut state2 = arranged(&config(3));
    set_display(&mut state2, &[two]);
    state2.stack.clear();
    let taken: Vec<TileId> = (0..36).filter(|&t| t != two).collect();
    state2.players[1].tiles = taken;
    stack_deck(&mut state2, &["X19", "X29", "X27"]);
    reveal(&mut state2, 0);
    act(&mut state2, 0, flag(pb::Flag::Pirate));
    // Only one tile face up and nothing to decline: taken automatically; the stack is empty (S13).
    let events = act(&mut state2, 0, place(pb::City::Venice));
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.kind, Some(Ev::ProgressTileTaken(t)) if t.seat == 0))
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.kind, Some(Ev::DisplayRefilled(r)) if r.tile.is_none()))
    );
    assert!(state2.display.is_empty());
    // With nothing face up, a progress symbol gives nothing (S13).
    assert_eq!(state2.to_act(), Some(1));
    act(&mut state2, 1, flag(pb::Flag::Pirate));
    let events = act(&mut state2, 1, place(pb::City::Rome));
    assert!(
        !events
            .iter()
            .any(|e| matches!(&e.kind, Some(Ev::ProgressTileTaken(_))))
    );
    assert_eq!(revealed_by(&events), Some(2));
}

#[test]
fn option_optional_tile_step() {
    let options = pb::Config {
        players: 3,
        optional_extra_steps: true,
        ..pb::Config::default()
    };
    let mut state = arranged(&options);
    let cloth = tile_where(&state, Category::Science, 1, Some(Goods::Cloth));
    let two = tile_where(&state, Category::Art, 2, None);
    let gold = tile_where(&state, Category::Architecture, 1, Some(Goods::Gold));
    set_display(&mut state, &[cloth, two, gold]);
    stack_deck(&mut state, &["X19", "X27"]);
    reveal(&mut state, 0);
    act(&mut state, 0, flag(pb::Flag::Pirate));
    act(&mut state, 0, place(pb::City::Venice));
    assert_eq!(
        state.legal_actions(0).len(),
        5,
        "value-1 tiles with and without the step"
    );
    let decline_two = Kind::TakeProgressTile(pb::TakeProgressTile {
        tile_id: u32::from(two),
        decline_goods_step: true,
    });
    assert_eq!(rule_of(&rejected(&state, 0, decline_two)), "§A8.5");
    let events = act(
        &mut state,
        0,
        Kind::TakeProgressTile(pb::TakeProgressTile {
            tile_id: u32::from(cloth),
            decline_goods_step: true,
        }),
    );
    assert!(moves(&events).is_empty());
    assert!(events.iter().any(
        |e| matches!(&e.kind, Some(Ev::StepDeclined(d)) if d.cause() == pb::MoveCause::ProgressTile)
    ));
}

// ------------------------------------------------------------------------------------------------
// Round end and scoring (spec A9–A12)

/// Plays a round to its end by passing on everything except what `claim` says.
fn round_scored(events: &[pb::Event]) -> Option<&pb::RoundScored> {
    events.iter().find_map(|e| match &e.kind {
        Some(Ev::RoundScored(r)) => Some(r),
        _ => None,
    })
}

#[test]
fn the_round_ends_when_every_flag_is_used_and_scores_ships_tracks_and_bonuses() {
    let mut state = arranged(&config(3));
    // Seats 0 and 1 have used everything; seat 2 has one flag left and takes the next ship.
    give_ship(&mut state, 0, City::Venice, FlagKind::Pirate, "X27"); // 8
    give_ship(&mut state, 0, City::Rome, FlagKind::PlusOne, "X24"); // 7+1
    give_ship(&mut state, 0, City::Naples, FlagKind::Goods, "X01"); // 1
    give_ship(&mut state, 1, City::Venice, FlagKind::Pirate, "X02"); // 1
    give_ship(&mut state, 1, City::Rome, FlagKind::PlusOne, "X03"); // 1+1
    give_ship(&mut state, 1, City::Naples, FlagKind::Goods, "X25"); // 7
    give_ship(&mut state, 2, City::Venice, FlagKind::PlusOne, "X26"); // 7+1
    give_ship(&mut state, 2, City::Rome, FlagKind::Goods, "X05"); // 2
    // Markers: Venice 0 on 8 (bonus 10), 1 on 8 to its right; Rome: only seat 2 moved (6, bonus 5);
    // Florence: 1 on 10 (top, bonus 15).
    put_marker(&mut state, 0, City::Venice, 8);
    put_marker(&mut state, 1, City::Venice, 8);
    put_marker(&mut state, 2, City::Rome, 6);
    put_marker(&mut state, 1, City::Florence, 10);
    stack_deck(&mut state, &["X23", "X28"]); // X23: 6 sails, one scroll
    let events = reveal(&mut state, 2);
    assert_eq!(revealed_by(&events), Some(2));
    let events = act(&mut state, 2, flag(pb::Flag::Pirate));
    // Forced into Naples (its last free port); the scroll moves seat 2 to Florence 1.
    let scored = round_scored(&events).expect("the round ended: every flag used");
    assert_eq!(scored.reason(), pb::RoundEndReason::FlagsUsed);
    let mut coins = [0i64; 3];
    for p in &scored.payouts {
        coins[p.seat as usize] += i64::from(p.coins);
    }
    // Ships: Venice 0 (8) 15, 2 (8, later) 10, 1 (1) 5. Rome 0 (8) 15, 1 (2) 10, 2 (2, later) 5.
    // Naples 1 (7) 15, 2 (6) 10, 0 (1) 5.
    // Tracks: Venice 0 15, 1 10 (+10 bonus each). Rome 2 15 (+5 bonus). Naples nobody.
    // Florence 1 15 (+15 bonus), 2 10.
    let expected = [
        15 + 15 + 5 + 15 + 10,
        5 + 10 + 15 + 10 + 10 + 15 + 15,
        10 + 5 + 10 + 15 + 5 + 10,
    ];
    assert_eq!(coins, expected);
    assert_eq!(
        state.players.iter().map(|p| p.money).collect::<Vec<_>>(),
        expected.to_vec()
    );
    // Round 2 starts with the best Florence marker (seat 1) and everyone's flags back.
    assert_eq!(state.round, 2);
    assert_eq!(state.round_start_seat, 1);
    assert_eq!(state.active, 1);
    assert!(state.players.iter().all(|p| p.flags.len() == 3));
    assert!(state.ports.iter().all(Vec::is_empty));
    assert_eq!(state.deck.len() + 1, 12);
    // Markers stay.
    assert_eq!(state.marker(1, City::Florence), (10, 0));
}

#[test]
fn option_bonus_only_on_arrival() {
    let options = pb::Config {
        players: 3,
        bonus_payment: pb::BonusPayment::OnArrival as i32,
        ..pb::Config::default()
    };
    let mut state = arranged(&options);
    put_marker(&mut state, 0, City::Venice, 6);
    state.arrived_round[0][City::Venice.index()] = 1;
    put_marker(&mut state, 1, City::Rome, 6); // arrived in an earlier round: never counted
    let mut events = Vec::new();
    state.end_round(rules::RoundEnd::DeckEmpty, &mut events);
    let scored = round_scored(&events).expect("scored");
    let bonus: Vec<(Seat, u32)> = scored
        .payouts
        .iter()
        .filter(|p| p.kind() == pb::PayoutKind::BonusSpace)
        .map(|p| (p.seat, p.coins))
        .collect();
    assert_eq!(bonus, vec![(0, 5)]);
    // Default: every round.
    let mut state = arranged(&config(3));
    put_marker(&mut state, 1, City::Rome, 6);
    let mut events = Vec::new();
    state.end_round(rules::RoundEnd::DeckEmpty, &mut events);
    let scored = round_scored(&events).expect("scored");
    assert!(
        scored
            .payouts
            .iter()
            .any(|p| p.kind() == pb::PayoutKind::BonusSpace && p.seat == 1)
    );
}

#[test]
fn the_round_ends_when_the_deck_is_used_up() {
    let mut state = arranged(&config(3));
    // Only one card left in the deck; everyone passes on it.
    let keep = state.deck.pop().expect("deck");
    while let Some(card) = state.deck.pop() {
        state.set_aside.push(card);
    }
    state.deck.push(keep);
    reveal(&mut state, 0);
    act(&mut state, 0, pass());
    act(&mut state, 1, pass());
    let events = act(&mut state, 2, pass());
    let scored = round_scored(&events).expect("scored");
    assert_eq!(scored.reason(), pb::RoundEndReason::DeckEmpty);
    assert!(
        scored.payouts.is_empty(),
        "no ship, no marker off the start"
    );
    assert_eq!(state.round, 2);
    // Nobody moved in Florence: the first marker of the starting space (the round-1 start player).
    assert_eq!(state.round_start_seat, 0);
}

#[test]
fn round_start_rule_best_florence_vs_keep_while_nobody_moved() {
    for (rule, expected) in [
        (pb::RoundStartRule::Unspecified, 1),
        (pb::RoundStartRule::KeepWhileNobodyMoved, 2),
    ] {
        let options = pb::Config {
            players: 3,
            first_seat: 2,
            round_start_rule: rule as i32,
            ..pb::Config::default()
        };
        let mut state = arranged(&options);
        // Reorder the starting space of Florence: seat 1 leftmost.
        state.tracks[City::Florence.index()][0] = vec![1, 2, 0];
        let mut events = Vec::new();
        state.end_round(rules::RoundEnd::DeckEmpty, &mut events);
        assert_eq!(state.round_start_seat, expected, "{rule:?}");
    }
}

#[test]
fn final_scoring_progress_majorities_and_florence_tie_breaks() {
    let mut state = arranged(&config(4));
    state.round = ROUNDS;
    let art: Vec<TileId> = (0..36u8)
        .filter(|&t| state.tile(t).category == Category::Art)
        .collect();
    let art_ones: Vec<TileId> = art
        .iter()
        .copied()
        .filter(|&t| state.tile(t).value == 1)
        .collect();
    let art_twos: Vec<TileId> = art
        .iter()
        .copied()
        .filter(|&t| state.tile(t).value == 2)
        .collect();
    let science_one = tile_where(&state, Category::Science, 1, Some(Goods::Gold));
    // Art: seat 0 has 2, seat 1 has 2 (tie), seat 2 has 1, seat 3 none. Science: seat 3 has 1.
    state.players[0].tiles = vec![art_twos[0]];
    state.players[1].tiles = vec![art_ones[0], art_ones[1]];
    state.players[2].tiles = vec![art_ones[2]];
    state.players[3].tiles = vec![science_one];
    let mut held: Vec<TileId> = state.players.iter().flat_map(|p| p.tiles.clone()).collect();
    held.sort();
    state.stack.retain(|t| !held.contains(t));
    state.display.retain(|t| !held.contains(t));
    while state.display.len() < 3 {
        let t = state.stack.pop().expect("stack");
        state.display.push(t);
    }
    // Florence: seat 1 ahead of seat 0.
    put_marker(&mut state, 1, City::Florence, 3);
    put_marker(&mut state, 0, City::Florence, 2);
    let mut events = Vec::new();
    state.end_round(rules::RoundEnd::DeckEmpty, &mut events);
    let Some(Ev::GameEnded(ended)) = events.last().and_then(|e| e.kind.clone()) else {
        panic!("game ended")
    };
    let art_awards: Vec<(Seat, u32)> = ended
        .awards
        .iter()
        .filter(|a| a.category() == pb::Category::Art)
        .map(|a| (a.seat, a.coins))
        .collect();
    assert_eq!(art_awards, vec![(1, 30), (0, 20), (2, 10)]);
    // Science: only seat 3 has a total >= 1 (S4): 30, and no 20/10 for zero totals.
    let science: Vec<(Seat, u32)> = ended
        .awards
        .iter()
        .filter(|a| a.category() == pb::Category::Science)
        .map(|a| (a.seat, a.coins))
        .collect();
    assert_eq!(science, vec![(3, 30)]);
    assert!(
        !ended
            .awards
            .iter()
            .any(|a| a.category() == pb::Category::Architecture)
    );
    assert_eq!(state.phase, Phase::Finished);
    // Money from the round-3 scoring: Florence 15 to seat 1, 10 to seat 0. Then awards.
    let money: Vec<i64> = state.players.iter().map(|p| p.money).collect();
    assert_eq!(money, vec![10 + 20, 15 + 30, 10, 30]);
    assert_eq!(state.outcome().expect("over").winners, vec![1]);
    assert_eq!(state.to_act(), None);
    assert_eq!(state.legal_actions(1), vec![]);
    assert_eq!(
        state.clone().apply(1, &pb::Action { kind: Some(pass()) }),
        Err(ActionError::GameOver)
    );
}

#[test]
fn option_rank_zero_progress_totals() {
    let options = pb::Config {
        players: 3,
        rank_zero_progress_totals: true,
        ..pb::Config::default()
    };
    let mut state = arranged(&options);
    state.round = ROUNDS;
    let mut events = Vec::new();
    state.end_round(rules::RoundEnd::DeckEmpty, &mut events);
    let Some(Ev::GameEnded(ended)) = events.last().and_then(|e| e.kind.clone()) else {
        panic!("game ended")
    };
    // Everybody at 0 in every category: ranked by Florence order (starting space: 0, 1, 2).
    assert_eq!(ended.awards.len(), 9);
    assert!(
        ended
            .awards
            .iter()
            .all(|a| a.coins == [30, 20, 10][a.seat as usize])
    );
    assert_eq!(ended.winners, vec![0]);
}

#[test]
fn the_winner_tie_is_broken_by_florence() {
    let mut state = arranged(&config(3));
    state.round = ROUNDS;
    state.players[0].money = 50;
    state.players[2].money = 50;
    put_marker(&mut state, 2, City::Florence, 1); // seat 2: Florence 15 now, seat 0 nothing
    state.players[0].money += 15;
    let mut events = Vec::new();
    state.end_round(rules::RoundEnd::DeckEmpty, &mut events);
    assert_eq!(state.players[0].money, state.players[2].money);
    assert_eq!(state.winners, vec![2]);
}

// ------------------------------------------------------------------------------------------------
// Hidden information (spec A13 S16)

#[test]
fn views_never_show_deck_order_removed_cards_or_the_stack() {
    let state = new_game(&config(4), 3);
    for viewer in [Viewer::Seat(0), Viewer::Seat(2), Viewer::Spectator] {
        let view = state.view(viewer);
        let shown: Vec<u32> = view
            .card
            .iter()
            .chain(&view.set_aside)
            .map(|c| c.id)
            .chain(
                view.ports
                    .iter()
                    .flat_map(|p| p.ships.iter().filter_map(|s| s.card.as_ref().map(|c| c.id))),
            )
            .collect();
        assert_eq!(shown.len(), 1, "only the face-up card");
        assert_eq!(view.deck_count as usize, state.deck.len());
        assert_eq!(view.removed_count, 14);
        assert_eq!(view.stack_count, 33);
        let tiles: Vec<u32> = view.display.iter().map(|t| t.id).collect();
        assert_eq!(tiles.len(), 3);
        // Every resampling of the hidden parts gives the same view.
        for i in 0..20 {
            let other = state.resample_hidden(viewer, &Seed::from_u64(100 + i));
            assert_eq!(other.view(viewer), view);
        }
    }
    // The resampling really moves the hidden parts.
    let other = state.resample_hidden(Viewer::Seat(0), &Seed::from_u64(5));
    assert!(other.deck != state.deck || other.removed != state.removed);
    assert_ne!(other.stack, state.stack);
}

#[test]
fn hidden_money_is_shown_only_to_its_owner_until_the_end() {
    let options = pb::Config {
        players: 3,
        hidden_money: true,
        ..pb::Config::default()
    };
    let mut state = arranged(&options);
    put_marker(&mut state, 1, City::Rome, 6);
    let mut events = Vec::new();
    state.end_round(rules::RoundEnd::DeckEmpty, &mut events);
    assert_eq!(state.players[1].money, 20);
    let view = state.view(Viewer::Seat(1));
    assert_eq!(view.players[1].money, Some(20));
    assert!(
        view.players
            .iter()
            .all(|p| p.money.is_some() == (p.seat == 1))
    );
    let view0 = state.view(Viewer::Seat(0));
    assert_eq!(view0.players[1].money, None);
    assert_eq!(view0.players[0].money, Some(0));
    assert!(
        state
            .view(Viewer::Spectator)
            .players
            .iter()
            .all(|p| p.money.is_none())
    );
    let scored = &events[0];
    let for_seat0 = Strozzi::redact_event(scored, Viewer::Seat(0)).expect("visible");
    let Some(Ev::RoundScored(r0)) = for_seat0.kind else {
        panic!("round scored")
    };
    assert!(r0.payouts.iter().all(|p| p.seat == 0) && r0.money.iter().all(|m| m.seat == 0));
    let for_seat1 = Strozzi::redact_event(scored, Viewer::Seat(1)).expect("visible");
    let Some(Ev::RoundScored(r1)) = for_seat1.kind else {
        panic!("round scored")
    };
    assert_eq!(r1.payouts.len(), 2);
    assert_eq!(
        r1.money,
        vec![pb::SeatMoney {
            seat: 1,
            earned: 20,
            total: 20
        }]
    );
    let for_spectator = Strozzi::redact_event(scored, Viewer::Spectator).expect("visible");
    let Some(Ev::RoundScored(rs)) = for_spectator.kind else {
        panic!("round scored")
    };
    assert!(rs.payouts.is_empty() && rs.money.is_empty());
    // After the game, everything is public.
    state.round = ROUNDS;
    let mut events = Vec::new();
    state.end_round(rules::RoundEnd::DeckEmpty, &mut events);
    assert!(
        state
            .view(Viewer::Spectator)
            .players
            .iter()
            .all(|p| p.money.is_some())
    );
    let ended =
        Strozzi::redact_event(events.last().expect("ended"), Viewer::Spectator).expect("visible");
    assert!(matches!(ended.kind, Some(Ev::GameEnded(g)) if g.money.len() == 3));
    // Without the option, money is public and events are not redacted.
    let mut open = arranged(&config(3));
    let mut events = Vec::new();
    open.end_round(rules::RoundEnd::DeckEmpty, &mut events);
    assert_eq!(
        Strozzi::redact_event(&events[0], Viewer::Spectator).as_ref(),
        Some(&events[0])
    );
    assert!(
        open.view(Viewer::Spectator)
            .players
            .iter()
            .all(|p| p.money.is_some())
    );
}

/// The cards and tiles a view or event names.
fn named_cards(view: &pb::View) -> Vec<u8> {
    let ships = view
        .ports
        .iter()
        .flat_map(|p| &p.ships)
        .filter_map(|s| s.card.as_ref());
    view.card
        .iter()
        .chain(&view.set_aside)
        .chain(ships)
        .map(|c| c.id as u8)
        .collect()
}

#[test]
fn views_and_events_never_name_a_hidden_card_or_tile() {
    for players in 3..=6 {
        for seed in 0..20 {
            let game = play::<Strozzi>(&config(players), Seed::from_u64(seed), 5_000, Checks::NONE)
                .expect("plays");
            let mut replay = new_game(&config(players), seed);
            for (seat, action) in &game.actions {
                let events = replay.apply(*seat, action).expect("replays");
                let hidden_cards: Vec<u8> =
                    replay.deck.iter().chain(&replay.removed).copied().collect();
                for viewer in (0..players).map(Viewer::Seat).chain([Viewer::Spectator]) {
                    let view = replay.view(viewer);
                    assert!(named_cards(&view).iter().all(|c| !hidden_cards.contains(c)));
                    assert!(
                        view.display
                            .iter()
                            .all(|t| !replay.stack.contains(&(t.id as u8)))
                    );
                    assert_eq!(view.deck_count as usize, replay.deck.len());
                    assert_eq!(view.stack_count as usize, replay.stack.len());
                }
                // Events after the last reshuffle of this action name only face-up cards.
                let since_reshuffle = events
                    .iter()
                    .rposition(|e| matches!(e.kind, Some(Ev::RoundStarted(_))))
                    .map_or(0, |i| i + 1);
                for event in &events[since_reshuffle..] {
                    let card = match &event.kind {
                        Some(Ev::CardRevealed(r)) => r.card.as_ref(),
                        Some(Ev::CardSetAside(c)) => c.card.as_ref(),
                        Some(Ev::ShipTaken(t)) => t.card.as_ref(),
                        _ => None,
                    };
                    if let Some(card) = card {
                        assert!(
                            !hidden_cards.contains(&(card.id as u8)),
                            "event names hidden card {}",
                            card.id
                        );
                    }
                    if let Some(Ev::DisplayRefilled(r)) = &event.kind
                        && let Some(tile) = &r.tile
                    {
                        assert!(replay.display.contains(&(tile.id as u8)));
                    }
                }
            }
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Rejected actions

#[test]
fn rejected_actions_cite_their_rule_and_change_nothing() {
    let mut state = arranged(&config(4));
    give_ship(&mut state, 1, City::Venice, FlagKind::Pirate, "X27");
    stack_deck(&mut state, &["X11", "X01"]);
    reveal(&mut state, 1);
    // Out of turn.
    assert_eq!(rule_of(&rejected(&state, 2, pass())), "§A7");
    // A flag no longer held.
    assert_eq!(rule_of(&rejected(&state, 1, flag(pb::Flag::Pirate))), "§A5");
    // Wrong phase.
    assert_eq!(rule_of(&rejected(&state, 1, place(pb::City::Rome))), "§A7");
    assert_eq!(
        rule_of(&rejected(&state, 1, take_tile(state.display[0]))),
        "§A7"
    );
    // Malformed: no kind, unknown flag, unknown city, unknown tile.
    let mut probe = state.clone();
    assert!(matches!(
        probe.apply(1, &pb::Action::default()),
        Err(ActionError::Malformed(_))
    ));
    assert!(matches!(
        rejected(&state, 1, flag(pb::Flag::Unspecified)),
        ActionError::Malformed(_)
    ));
    assert!(matches!(
        rejected(&state, 1, Kind::PlayFlag(pb::PlayFlag { flag: 42 })),
        ActionError::Malformed(_)
    ));
    act(&mut state, 1, flag(pb::Flag::Goods));
    act(&mut state, 2, pass());
    act(&mut state, 3, pass());
    act(&mut state, 0, pass());
    assert!(matches!(state.phase, Phase::PlacingShip { taker: 1, .. }));
    assert_eq!(rule_of(&rejected(&state, 1, pass())), "§A8.1");
    assert_eq!(rule_of(&rejected(&state, 0, place(pb::City::Rome))), "§A8");
    assert!(matches!(
        rejected(
            &state,
            1,
            Kind::PlaceShip(pb::PlaceShip {
                port: 0,
                decline_goods_flag_step: false
            })
        ),
        ActionError::Malformed(_)
    ));
    // X11 has no progress symbol; take a progress ship to reach the tile phase.
    let mut state = arranged(&config(4));
    stack_deck(&mut state, &["X19", "X01"]);
    reveal(&mut state, 0);
    act(&mut state, 0, flag(pb::Flag::Pirate));
    act(&mut state, 0, place(pb::City::Rome));
    assert!(matches!(state.phase, Phase::ChoosingTile { .. }));
    assert_eq!(rule_of(&rejected(&state, 0, pass())), "§A8.5");
    assert!(matches!(
        rejected(&state, 0, take_tile(200)),
        ActionError::Malformed(_)
    ));
    assert!(matches!(
        rejected(
            &state,
            0,
            Kind::TakeProgressTile(pb::TakeProgressTile {
                tile_id: 1 << 20,
                decline_goods_step: false
            })
        ),
        ActionError::Malformed(_)
    ));
}

// ------------------------------------------------------------------------------------------------
// Random play (spec A14 invariants after every action)

/// `count` seeded games for `players`, the first `standard` with the full contract checks.
fn random_games(config: &pb::Config, count: u64, standard: u64) {
    let light = Checks {
        invariants: true,
        deep_every: 0,
        replay: false,
    };
    let mut rounds_by_flags = 0;
    for i in 0..count {
        let checks = if i < standard {
            Checks::STANDARD
        } else {
            light
        };
        let game = play::<Strozzi>(config, Seed::from_u64(i), 5_000, checks)
            .unwrap_or_else(|e| panic!("{} players, seed {i}: {e}", config.players));
        assert_eq!(game.outcome.winners.len(), 1);
        assert!(game.outcome.scores.iter().all(|s| s % 5 == 0));
        rounds_by_flags += usize::from(game.final_state.players.iter().all(|p| p.flags.is_empty()));
    }
    assert!(
        rounds_by_flags > 0,
        "some games end their last round by using every flag"
    );
}

#[test]
fn random_play_3_players() {
    random_games(&config(3), 10_000, 300);
}

#[test]
fn random_play_4_players() {
    random_games(&config(4), 10_000, 300);
}

#[test]
fn random_play_5_players() {
    random_games(&config(5), 10_000, 300);
}

#[test]
fn random_play_6_players() {
    random_games(&config(6), 10_000, 300);
}

#[test]
fn random_play_with_every_option() {
    let all_on = pb::Config {
        players: 0,
        first_seat: 0,
        random_first_seat: true,
        hidden_money: true,
        track_layout: pb::TrackLayout::Numbered as i32,
        round_start_rule: pb::RoundStartRule::KeepWhileNobodyMoved as i32,
        rank_zero_progress_totals: true,
        bonus_payment: pb::BonusPayment::OnArrival as i32,
        goods_flag_needs_match: true,
        optional_extra_steps: true,
        pirate_chance_full_circle: true,
        tentative_overbid: true,
        next_active_rule: pb::NextActiveRule::LeftOfActive as i32,
    };
    for players in 3..=6 {
        random_games(&pb::Config { players, ..all_on }, 300, 100);
        // Each option alone as well.
        let singles = [
            pb::Config {
                optional_extra_steps: true,
                ..config(players)
            },
            pb::Config {
                pirate_chance_full_circle: true,
                ..config(players)
            },
            pb::Config {
                tentative_overbid: true,
                ..config(players)
            },
            pb::Config {
                hidden_money: true,
                ..config(players)
            },
        ];
        for single in singles {
            random_games(&single, 100, 30);
        }
    }
}

/// Every action a client could send in this game (all kinds, ids and switches).
fn every_conceivable_action() -> Vec<pb::Action> {
    let mut kinds = vec![pass()];
    for f in [pb::Flag::Pirate, pb::Flag::PlusOne, pb::Flag::Goods] {
        kinds.push(flag(f));
    }
    for port in [
        pb::City::Venice,
        pb::City::Rome,
        pb::City::Naples,
        pb::City::Florence,
    ] {
        for decline in [false, true] {
            kinds.push(Kind::PlaceShip(pb::PlaceShip {
                port: port as i32,
                decline_goods_flag_step: decline,
            }));
        }
    }
    for tile in 0..36 {
        for decline in [false, true] {
            kinds.push(Kind::TakeProgressTile(pb::TakeProgressTile {
                tile_id: tile,
                decline_goods_step: decline,
            }));
        }
    }
    kinds
        .into_iter()
        .map(|kind| pb::Action { kind: Some(kind) })
        .collect()
}

#[test]
fn the_listing_is_exactly_what_apply_accepts() {
    let all = every_conceivable_action();
    let with_options = pb::Config {
        optional_extra_steps: true,
        tentative_overbid: true,
        pirate_chance_full_circle: true,
        goods_flag_needs_match: true,
        ..config(4)
    };
    for config in [config(3), config(5), with_options] {
        for seed in 0..6 {
            let game =
                play::<Strozzi>(&config, Seed::from_u64(seed), 5_000, Checks::NONE).expect("plays");
            let mut state = new_game(&config, seed);
            for (seat, action) in &game.actions {
                let others = [*seat, (*seat + 1) % config.players];
                for candidate in &all {
                    for who in others {
                        let listed = state
                            .legal_actions(who)
                            .contains(&LegalAction::Exact(*candidate));
                        let accepted = state.clone().apply(who, candidate).is_ok();
                        assert_eq!(
                            listed, accepted,
                            "seat {who} {candidate:?} listed {listed} accepted {accepted}"
                        );
                    }
                }
                state.apply(*seat, action).expect("replays");
            }
        }
    }
}
