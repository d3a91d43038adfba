//! The turn sequence (spec §4), the end of the game (spec §7, §9) and the stall guard.

use super::*;

#[test]
fn income_is_six_capped_at_ten_and_two_silent_rounds_stall() {
    let mut state = example_game();
    // Round 1: everyone passes with 6; round 2: income +4 only (cap 10).
    for seat in [GREY, BLACK, WHITE] {
        assert_eq!(state.player(seat).resources, 6);
        apply_ok(&mut state, seat, &end_turn());
    }
    assert_eq!(state.player(GREY).resources, 10);
    assert_eq!(
        state.silent_turns, 3,
        "one silent round does not end the game"
    );
    for seat in [GREY, BLACK] {
        let events = apply_ok(&mut state, seat, &end_turn());
        assert_eq!(
            turn_started(&events).map(|t| (t.income, t.resources)),
            Some((4, 10))
        );
    }
    // The 6th silent turn ends the game (two full rounds, ruling A13).
    let events = apply_ok(&mut state, WHITE, &end_turn());
    let ended = game_ended(&events).expect("stall ends the game");
    assert_eq!(ended.reason, pb::EndReason::Stall as i32);
    assert_eq!(ended.gold, vec![0, 0, 0]);
    assert_eq!(
        ended.winners,
        vec![0, 1, 2],
        "all tied on gold and resources: shared win"
    );
    assert_eq!(state.to_act(), None);
    assert!(state.legal_actions(GREY).is_empty());
    assert_eq!(
        try_apply(&mut state, GREY, &end_turn()),
        Err(ActionError::GameOver)
    );
    // A road resets the count.
    let mut state = example_game();
    apply_ok(&mut state, GREY, &end_turn());
    apply_ok(
        &mut state,
        BLACK,
        &road(BLACK_WORKSHOP, &[(-6, 2)], BLACK_CITY),
    );
    apply_ok(&mut state, BLACK, &end_turn());
    assert_eq!(state.silent_turns, 0);
}

#[test]
fn a_player_who_cannot_reach_ends_the_game_before_income() {
    // Spec §7, ruling A9: tested at the start of the turn, before income. Black has no merchant
    // left (set directly: the only way to exhaust them quickly).
    let mut state = example_game();
    apply_ok(&mut state, GREY, &road(GREY_WORKSHOP, &[(-3, 6)], TOWN));
    state.players[BLACK as usize].merchants_left = 0;
    state.players[BLACK as usize].resources = 3;
    state.forget_search_cache();
    let events = state.apply(GREY, &end_turn()).expect("end turn");
    let ended = game_ended(&events).expect("game over");
    assert_eq!(ended.reason, pb::EndReason::CannotReach as i32);
    assert_eq!(ended.trigger_seat, Some(BLACK));
    assert!(turn_started(&events).is_none());
    assert_eq!(
        state.player(BLACK).resources,
        3,
        "no income for the ending player"
    );
    assert_eq!(ended.gold, vec![4, 0, 0]);
    assert_eq!(ended.winners, vec![GREY]);
    assert_eq!(
        state.outcome(),
        Some(Outcome {
            scores: vec![4, 0, 0],
            winners: vec![GREY]
        })
    );
}

#[test]
fn the_end_budget_option_tests_this_turns_resources() {
    // Find, in random 4-player games, a turn hand-over where the next player can reach something
    // with 10 but not with what it will hold this turn; the default continues, the option ends.
    let mut found = 0;
    'games: for seed in 0..200 {
        let config = config(4);
        let game: RandomGame<LaStrada> =
            play(&config, Seed::from_u64(seed), 5_000, Checks::NONE).expect("ends");
        let mut state = LaStrada::setup(&config, &Seed::from_u64(seed)).expect("setup");
        for (seat, action) in &game.actions {
            if matches!(action.kind, Some(pb::action::Kind::EndTurn(_))) {
                let next = left_of(*seat, 4);
                let this_turn = (state.player(next).resources + INCOME).min(RESOURCE_CAP);
                if state.silent_turns + 1 < 8
                    && state.has_any_road(next, RESOURCE_CAP)
                    && !state.has_any_road(next, this_turn)
                {
                    let mut strict = state.clone();
                    strict.options.end_budget = EndBudgetRule::Current;
                    let events = strict.apply(*seat, action).expect("end turn");
                    let ended = game_ended(&events).expect("the option ends the game");
                    assert_eq!(ended.trigger_seat, Some(next));
                    let mut default = state.clone();
                    let events = default.apply(*seat, action).expect("end turn");
                    assert!(
                        game_ended(&events).is_none(),
                        "budget 10 keeps the game going"
                    );
                    assert_eq!(turn_started(&events).map(|t| t.seat), Some(next));
                    found += 1;
                    continue 'games;
                }
            }
            state.apply(*seat, action).expect("replay");
        }
    }
    assert!(found >= 3, "found only {found} such positions");
}

#[test]
fn two_player_settlements_hold_one_merchant_and_can_be_visited() {
    let config = config(2);
    let (mut visits, mut full_ends, mut fallback_ends) = (0, 0, 0);
    for seed in 0..200 {
        let game: RandomGame<LaStrada> =
            play(&config, Seed::from_u64(seed), 5_000, Checks::NONE).expect("ends");
        for (before, seat, action, events) in replay_steps(&config, seed, &game) {
            let Some(built) = events.iter().find_map(|e| match &e.kind {
                Some(pb::event::Kind::RoadBuilt(b)) => Some(b),
                _ => None,
            }) else {
                continue;
            };
            let target = built.target.as_ref().expect("target");
            let target = hex(target.q, target.r);
            let site = before.site_at(target).expect("site");
            if site.merchants.is_empty() {
                assert!(built.merchant_placed);
            } else {
                // Spec §9: connecting the opponent's settlement places no merchant.
                assert!(!built.merchant_placed);
                assert_eq!(site.merchants.as_slice(), [1 - seat]);
                let mut after = before.clone();
                after.apply(seat, &action).expect("same road");
                assert_eq!(
                    after.player(seat).merchants_left,
                    before.player(seat).merchants_left
                );
                assert_eq!(
                    after.site_at(target).expect("site").visitors.as_slice(),
                    [seat]
                );
                assert!(
                    after.hubs(seat).contains(&target),
                    "a visited settlement is a hub"
                );
                assert!(
                    !after
                        .legal_roads(seat, RESOURCE_CAP)
                        .iter()
                        .any(|p| p.target == target)
                );
                visits += 1;
            }
            if let Some(ended) = game_ended(&events) {
                // Spec §9: the game ends at once when all 19 settlements hold a merchant.
                assert_eq!(ended.reason, pb::EndReason::AllSettlementsOccupied as i32);
                assert_eq!(
                    ended.resources[seat as usize], built.resources,
                    "resources kept for the tie-break"
                );
                full_ends += 1;
            }
        }
        match game.final_state.phase {
            Phase::Finished {
                reason: EndReason::NoRoadsLeft,
                ..
            } => {
                fallback_ends += 1;
                assert!(!game.final_state.has_any_road(0, RESOURCE_CAP));
                assert!(!game.final_state.has_any_road(1, RESOURCE_CAP));
            }
            Phase::Finished {
                reason: EndReason::AllSettlementsOccupied | EndReason::Stall,
                ..
            } => {}
            ref other => panic!("2-player game ended by {other:?}"),
        }
    }
    assert!(visits > 50, "visits {visits}");
    assert!(full_ends > 100, "full-occupation ends {full_ends}");
    println!(
        "2p: {visits} visits, {full_ends} full-occupation ends, {fallback_ends} fallback ends"
    );
}

#[test]
fn cannot_reach_ends_three_and_four_player_games_without_income() {
    for players in [3, 4] {
        let config = config(players);
        for seed in 0..50 {
            let game: RandomGame<LaStrada> =
                play(&config, Seed::from_u64(seed), 5_000, Checks::NONE).expect("ends");
            let steps = replay_steps(&config, seed, &game);
            let (before, _, _, events) = steps.last().expect("actions");
            let ended = game_ended(events).expect("last action ends the game");
            if ended.reason == pb::EndReason::CannotReach as i32 {
                let trigger = ended.trigger_seat.expect("trigger seat");
                assert!(!game.final_state.has_any_road(trigger, RESOURCE_CAP));
                assert_eq!(
                    game.final_state.player(trigger).resources,
                    before.player(trigger).resources
                );
            }
        }
    }
}
