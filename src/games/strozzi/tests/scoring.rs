//! Round end and scoring (spec A9–A12): ships, tracks, bonuses, progress majorities, the winner.

use super::*;

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
    state.end_round(RoundEnd::DeckEmpty, &mut events);
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
    state.end_round(RoundEnd::DeckEmpty, &mut events);
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
        state.end_round(RoundEnd::DeckEmpty, &mut events);
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
    state.end_round(RoundEnd::DeckEmpty, &mut events);
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
    state.end_round(RoundEnd::DeckEmpty, &mut events);
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
    state.end_round(RoundEnd::DeckEmpty, &mut events);
    assert_eq!(state.players[0].money, state.players[2].money);
    assert_eq!(state.winners, vec![2]);
}
