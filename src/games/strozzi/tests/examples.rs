//! The rulebook's worked example (spec A14), step by step.

use super::*;

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
