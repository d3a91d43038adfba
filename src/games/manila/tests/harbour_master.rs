//! The harbour master's share purchase (spec §4.2 a, §9 A15).

use super::*;

#[test]
fn share_purchase_needs_supply_and_means() {
    let mut state = new_game(&cfg(4));
    pass_all(&mut state);
    // An exhausted ware cannot be bought (spec §9 A15).
    let ginseng_holders: u32 = state.players.iter().map(|p| p.holdings()[0]).sum();
    state.supply[0] = 0;
    state.players[1].bought.extend(std::iter::repeat_n(
        Ware::Ginseng,
        (5 - ginseng_holders) as usize,
    ));
    state.check_invariants().expect("consistent");
    assert_illegal(
        &state,
        0,
        &action(A::BuyShare(pb::BuyShare {
            ware: Ware::Ginseng.to_pb(),
        })),
        "§4.2",
    );
    // Too expensive even with mortgages.
    set_values(&mut state, [0, 0, 3, 0]);
    state.players[0].cash = 0;
    state.players[0].mortgaged = state.players[0].holdings();
    assert_illegal(
        &state,
        0,
        &action(A::BuyShare(pb::BuyShare {
            ware: Ware::Silk.to_pb(),
        })),
        "§4.2",
    );
    assert_eq!(
        listed(&state),
        vec![pb::Action {
            kind: Some(A::SkipPurchase(pb::SkipPurchase {}))
        }]
    );
}
