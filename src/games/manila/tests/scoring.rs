//! The end of the game and scoring (spec §6, §9 A12, A17).

use super::*;

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
