//! Random play: invariants and, at every action, the information-set check for every viewer.

use super::*;

fn random_games(
    option: pb::MarkerMovement,
    max_price: u32,
    seeds: std::ops::Range<u64>,
    checks: Checks,
) -> usize {
    let config = pb::Config {
        marker_movement: option as i32,
        max_price,
    };
    let mut finished = 0;
    for i in seeds {
        let game = play::<MediciVsStrozzi>(&config, Seed::from_u64(i), 2_000, checks)
            .unwrap_or_else(|e| panic!("{option:?} seed {i}: {e}"));
        let state = &game.final_state;
        assert_eq!(state.round(), ROUNDS);
        assert_eq!(
            game.outcome.scores,
            state.players.iter().map(|p| p.money).collect::<Vec<_>>()
        );
        finished += 1;
    }
    finished
}

/// 10,000+ seeded games over both marker options and two price caps, every one checked for the
/// invariants after every action; a fifth of them also get the standard contract checks.
#[test]
fn random_play_keeps_the_invariants() {
    let light = Checks::INVARIANTS;
    let mut games = 0;
    games += random_games(pb::MarkerMovement::Net, 0, 0..1_000, Checks::STANDARD);
    games += random_games(
        pb::MarkerMovement::Sequential,
        0,
        1_000..2_000,
        Checks::STANDARD,
    );
    games += random_games(pb::MarkerMovement::Net, 0, 2_000..4_000, light);
    games += random_games(pb::MarkerMovement::Sequential, 30, 4_000..7_000, light);
    games += random_games(pb::MarkerMovement::Net, 15, 7_000..8_500, light);
    games += random_games(pb::MarkerMovement::Sequential, 0, 8_500..10_000, light);
    assert_eq!(games, 10_000);
}

/// Every action of every game, for both seats and a spectator: views, whose turn, own legal
/// actions, the action as seen and its events are the same under a redrawn draw order. 3,000
/// seeded games over both marker options and two price caps (about 6 s of CPU in the test profile).
#[test]
fn no_viewer_learns_the_draw_order_in_random_play() {
    let mut games = 0;
    games += random_games(pb::MarkerMovement::Net, 0, 20_000..21_000, Checks::HIDDEN);
    games += random_games(
        pb::MarkerMovement::Sequential,
        0,
        21_000..22_000,
        Checks::HIDDEN,
    );
    games += random_games(pb::MarkerMovement::Net, 12, 22_000..23_000, Checks::HIDDEN);
    assert_eq!(games, 3_000);
}

/// One button per distinct move (issue #31): at sampled steps of 400 seeded games over both
/// marker options and a price cap, no two listed moves have the same effect. Loading the lot onto
/// a ship already in a harbour is listed once, with its harbour (apply still accepts it without).
#[test]
fn every_listed_move_is_a_distinct_move() {
    use crate::games::common::distinct_moves::check_distinct_moves;
    for (index, (option, max_price)) in [
        (pb::MarkerMovement::Net, 0),
        (pb::MarkerMovement::Sequential, 30),
    ]
    .into_iter()
    .enumerate()
    {
        let config = pb::Config {
            marker_movement: option as i32,
            max_price,
        };
        check_distinct_moves::<MediciVsStrozzi>(&config, index as u64 * 1_000, 200, 3, 2_000);
    }
}

/// Taking back alone (issue #30): at sampled steps of 200 seeded games over both marker options,
/// no move a seat may take back on its own shows any viewer anything that 48 redraws of the
/// hidden tiles can tell apart, and every draw from the bag is never one of them.
#[test]
fn no_move_taken_back_alone_drew_or_revealed_anything() {
    use crate::games::common::takeback::check_takeback;
    let mut takeable = 0;
    for (index, option) in [pb::MarkerMovement::Net, pb::MarkerMovement::Sequential]
        .into_iter()
        .enumerate()
    {
        let config = pb::Config {
            marker_movement: option as i32,
            max_price: 0,
        };
        takeable +=
            check_takeback::<MediciVsStrozzi>(&config, 5_000 + index as u64 * 1_000, 100, 3, 2_000);
    }
    assert!(
        takeable > 1_000,
        "only {takeable} moves were takeable: the check proved little"
    );
}
