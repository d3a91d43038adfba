//! The auction for harbour master (spec §4.1, §9 A2, A3).

use super::*;

#[test]
fn auction_bids_pass_clockwise_and_passing_is_final() {
    let mut state = new_game(&cfg(4));
    // The opener may bid 1..=30 + 2 × 12.
    let legal = state.legal_actions(0);
    assert!(legal.contains(&LegalAction::Amount {
        action: pb::Action {
            kind: Some(A::Bid(pb::Bid { price: 1 }))
        },
        min: 1,
        max: 54,
    }));
    act(&mut state, A::Bid(pb::Bid { price: 5 }));
    assert_eq!(state.to_act(), Some(1));
    act(&mut state, A::PassAuction(pb::PassAuction {}));
    assert_eq!(state.to_act(), Some(2));
    assert_illegal(&state, 2, &action(A::Bid(pb::Bid { price: 5 })), "§4.1");
    act(&mut state, A::Bid(pb::Bid { price: 6 }));
    act(&mut state, A::PassAuction(pb::PassAuction {}));
    // Seat 1 passed for good: back to seat 0.
    assert_eq!(state.to_act(), Some(0));
    act(&mut state, A::Bid(pb::Bid { price: 40 }));
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
    let events = act(&mut state, A::Bid(pb::Bid { price: 1 }));
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
    act(&mut state, A::Bid(pb::Bid { price: 3 }));
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
