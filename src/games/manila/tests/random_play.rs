//! Seeded random play: the engine contract and the §10 invariants over thousands of games.

use super::*;
use crate::games::common::random_play::{Checks, play};

/// ≥ 10,000 games per player count, all with invariants after every action; the first ones
/// with the harness's full contract checks (views, serde, replay), the rest lighter for time.
fn random_games(players: u32, games: u64, standard: u64) {
    let options = [
        cfg(players),
        every_option(players),
        pb::Config {
            players,
            pirate_variant: true,
            ..Default::default()
        },
    ];
    let light = Checks::INVARIANTS;
    for i in 0..games {
        let config = &options[(i % 3) as usize];
        let checks = if i < standard {
            Checks::STANDARD
        } else {
            light
        };
        let seed = Seed::from_u64(i + 1000 * u64::from(players));
        if let Err(e) = play::<Manila>(config, seed, 20_000, checks) {
            panic!("{players} players, game {i} ({config:?}): {e}");
        }
    }
}

#[test]
fn random_play_3_players() {
    random_games(3, 10_000, 1_000);
}

#[test]
fn random_play_4_players() {
    random_games(4, 10_000, 1_000);
}

#[test]
fn random_play_5_players() {
    random_games(5, 10_000, 1_000);
}

/// One button per distinct move (issue #31): at sampled steps of 300 seeded games at every seat
/// count, with the rule options off and on, no two listed moves have the same effect (the
/// harbour master's loadings, bids at their range's ends, placements, pilots' moves, plunder).
#[test]
fn every_listed_move_is_a_distinct_move() {
    use crate::games::common::distinct_moves::check_distinct_moves;
    for players in 3..=5 {
        let variants = every_option(players);
        let seeds = u64::from(players) * 1_000;
        check_distinct_moves::<Manila>(&cfg(players), seeds, 50, 3, 5_000);
        check_distinct_moves::<Manila>(&variants, seeds + 500, 50, 3, 5_000);
    }
}
