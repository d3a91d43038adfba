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

/// Taking back alone (issue #30): at sampled steps of 72 seeded games at every seat count, with
/// the rule options off and on, no move a seat may take back on its own shows any viewer anything
/// that 48 redraws of the dice and the dealt shares can tell apart (a roll never is one).
#[test]
fn no_move_taken_back_alone_drew_or_revealed_anything() {
    use crate::games::common::takeback::check_takeback;
    let mut takeable = 0;
    for players in 3..=5 {
        let seeds = 5_000 + u64::from(players) * 1_000;
        takeable += check_takeback::<Manila>(&cfg(players), seeds, 12, 6, 5_000);
        takeable += check_takeback::<Manila>(&every_option(players), seeds + 500, 12, 6, 5_000);
    }
    assert!(
        takeable > 1_000,
        "only {takeable} moves were takeable: the check proved little"
    );
}
