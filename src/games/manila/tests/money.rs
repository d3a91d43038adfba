//! Money: mortgages, redemptions, the cycle guard and forced mortgages (spec §5, §9 A10, A11).

use super::*;

#[test]
fn mortgage_and_redeem_at_own_decision_points_with_the_cycle_guard() {
    let mut state = new_game(&cfg(4));
    let ware = state.players[0].dealt[0];
    let mortgage = A::MortgageShare(pb::MortgageShare { ware: ware.to_pb() });
    let redeem = A::RedeemShare(pb::RedeemShare { ware: ware.to_pb() });
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
    assert_illegal(&state, 0, &action(redeem.clone()), "§5");
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
    assert_illegal(&state, 0, &action(redeem.clone()), "§5");
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
    assert_illegal(&state, 0, &action(mortgage), "§5");
    // Redeeming needs 15 in cash.
    let mut poor = state.clone();
    poor.money_mode = MoneyMode::Free;
    poor.players[0].mortgaged[ware.index()] = 1;
    poor.players[0].cash = 14;
    assert_illegal(&poor, 0, &action(redeem), "§5");
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
