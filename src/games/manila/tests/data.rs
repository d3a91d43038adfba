//! Board data (spec §2).

use super::*;

#[test]
fn board_data_is_consistent() {
    // Every payoff divides by every possible crew size, and by 2 pirates (spec §2.1 note).
    for ware in Ware::ALL {
        let slots = ware.crew_costs().len() as u64;
        assert!(
            (1..=slots).all(|crew| ware.payoff() % crew == 0),
            "{ware:?}"
        );
        assert!(
            ware.crew_costs().windows(2).all(|w| w[0] <= w[1]),
            "{ware:?} slots not cheapest first"
        );
        assert_eq!(Ware::from_pb(ware.to_pb()), Some(ware));
    }
    // The insurer's liability is the running sum of the shipyard payouts (spec §4.8 D).
    let mut running = 0;
    for (wrecks, owed) in INSURANCE_LIABILITY.iter().enumerate().skip(1) {
        running += BERTH_PAYS[wrecks - 1];
        assert_eq!(*owed, running);
    }
    assert_eq!(VALUE_TRACK[TOP_STEP], 30);
    // 25 ordered start triples (spec §2.5), as the loading listing shows (4 × 25 = 100).
    let triples = (0..=5u32)
        .flat_map(|a| (0..=5u32).flat_map(move |b| (0..=5u32).map(move |c| a + b + c)))
        .filter(|s| *s == 9);
    assert_eq!(triples.count(), 25);
}
