//! Resolving a claim (spec A8, A13 S6–S8, S13–S15): ports, speed order, markers, progress tiles.

use super::*;

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
