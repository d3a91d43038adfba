//! Scoring and tie-breaks (spec §8, §9).

use super::*;

#[test]
fn scoring_follows_the_table_and_ties_break_on_resources() {
    let mut state = example_game();
    // Fill one settlement of each kind with 1..4 merchants directly (scoring is per settlement).
    let kinds = [
        SettlementKind::Hamlet,
        SettlementKind::Village,
        SettlementKind::Town,
        SettlementKind::City,
    ];
    let table = [[2, 1, 0, 0], [3, 2, 1, 0], [4, 3, 2, 1], [5, 4, 3, 2]];
    state.players.push(state.players[0].clone());
    state.options.players = 4;
    for (kind, row) in kinds.iter().zip(table) {
        for n in 1..=4 {
            let mut scored = state.clone();
            let site = scored
                .sites
                .iter_mut()
                .find(|s| s.kind == *kind)
                .expect("kind present");
            site.merchants = (0..n).collect();
            let gold = scored.gold();
            assert!(
                gold[..n as usize].iter().all(|g| *g == row[n as usize - 1]),
                "{kind:?} n={n}: {gold:?}"
            );
        }
    }
    // Tie on gold: most resources wins; full tie is shared.
    let mut tied = state.clone();
    tied.sites[0].merchants = SiteSeats::from_slice(&[0]);
    tied.sites[1].merchants = SiteSeats::from_slice(&[1]);
    let equal = tied.sites[0].kind;
    tied.sites[1].kind = equal;
    tied.players[0].resources = 3;
    tied.players[1].resources = 5;
    let gold = tied.gold();
    assert_eq!(tied.winners(&gold), vec![1]);
    tied.players[0].resources = 5;
    assert_eq!(tied.winners(&gold), vec![0, 1]);
    // 2-player: every merchant scores the top value.
    let rng = GameRng::from_seed(&Seed::from_u64(0));
    let mut two = LaStrada::with_layout(
        options(2),
        rng,
        MapData::default_arrangement(),
        &MAP.settlement_tiles,
        0,
    );
    for site in two.sites.iter_mut() {
        site.merchants = SiteSeats::from_slice(&[0]);
    }
    assert_eq!(two.gold()[0], 4 * 5 + 5 * 4 + 5 * 3 + 5 * 2);
}
