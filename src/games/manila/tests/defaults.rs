//! Default actions (docs/rules/manila.md §11): pass, skip, decline, stay, no pilot move, the
//! harbour for plunder, a fixed even loading; none costs money; games of default actions end.

use super::*;
use crate::games::common::testing::check_default_play;

fn default_kind(state: &Manila) -> A {
    state
        .default_action()
        .and_then(|action| action.kind)
        .expect("a default action")
}

#[test]
fn auction_purchase_loading_and_placement_defaults() {
    let mut state = new_game(&cfg(4));
    assert_eq!(default_kind(&state), A::PassAuction(pb::PassAuction {}));
    pass_all(&mut state);
    assert_eq!(default_kind(&state), A::SkipPurchase(pb::SkipPurchase {}));
    act(&mut state, A::SkipPurchase(pb::SkipPurchase {}));
    // Ginseng, nutmeg and silk on space 3 each (§4.2 b: three wares, starts summing to 9).
    let loading = default_kind(&state);
    assert_eq!(
        loading,
        load_kind(&[(Ware::Ginseng, 3), (Ware::Nutmeg, 3), (Ware::Silk, 3)])
    );
    act(&mut state, loading);
    assert_eq!(
        default_kind(&state),
        A::DeclinePlacement(pb::DeclinePlacement {})
    );
}

#[test]
fn a_pirate_stays_aboard_by_default() {
    let mut state = boarding_scene(&cfg(4));
    assert!(matches!(state.phase, Phase::Boarding { .. }));
    assert_eq!(default_kind(&state), A::StayAboard(pb::StayAboard {}));
    let seat = state.to_act().expect("the captain decides");
    let default = state.default_action().expect("default");
    apply_ok(&mut state, seat, &default);
}

#[test]
fn every_default_is_free() {
    // Whoever plays defaults pays nothing: no bid, no purchase, no placement, so no mortgage.
    for seed in 0..50 {
        let config = cfg(3 + (seed % 3) as u32);
        let mut state = Manila::setup(&config, &Seed::from_u64(seed)).expect("setup");
        let cash_before: Vec<u64> = state.players.iter().map(|p| p.cash).collect();
        while let Some(seat) = state.to_act() {
            if state.voyage.number > 1 {
                break;
            }
            let default = state.default_action().expect("default");
            let events = apply_ok(&mut state, seat, &default);
            assert!(!has_event(&events, |e| matches!(e, E::ShareMortgaged(_))));
        }
        // Voyage 1 paid nobody (nobody placed) and cost nobody anything.
        let cash_after: Vec<u64> = state.players.iter().map(|p| p.cash).collect();
        assert_eq!(cash_before, cash_after, "seed {seed}");
    }
}

#[test]
fn games_of_default_actions_end_and_defaults_hide_nothing() {
    for players in 3..=5 {
        let pirates = pb::Config {
            pirate_variant: true,
            ..cfg(players)
        };
        check_default_play::<Manila>(&cfg(players), 700, 40, 20_000);
        check_default_play::<Manila>(&pirates, 0, 40, 20_000);
    }
}
