//! Random play: the engine contract, the invariants and termination over thousands of games.

use super::*;

fn random_games(players: u32, games: u64) {
    let config = config(players);
    let light = Checks::INVARIANTS;
    let mut reasons = std::collections::BTreeMap::new();
    let mut rounds = 0;
    for seed in 0..games {
        let checks = if seed < 200 { Checks::STANDARD } else { light };
        let game: RandomGame<LaStrada> = play(&config, Seed::from_u64(seed), 2_000, checks)
            .unwrap_or_else(|e| panic!("{players} players, seed {seed}: {e}"));
        let Phase::Finished { reason, .. } = game.final_state.phase else {
            panic!("not finished")
        };
        *reasons.entry(format!("{reason:?}")).or_insert(0) += 1;
        rounds += game.final_state.round;
    }
    println!(
        "{players} players: {games} games, {:.1} rounds avg, end reasons {reasons:?}",
        f64::from(rounds) / games as f64
    );
}

#[test]
fn random_play_2_players() {
    random_games(2, 10_000);
}

#[test]
fn random_play_3_players() {
    random_games(3, 10_000);
}

#[test]
fn random_play_4_players() {
    random_games(4, 10_000);
}

/// One button per distinct move (issue #31): at sampled steps of 240 seeded games at every seat
/// count, no two listed moves (workshops, roads, passes) have the same effect. A turn lists up to
/// hundreds of roads, each applied to its own copy, so steps are sampled sparsely.
#[test]
fn every_listed_move_is_a_distinct_move() {
    use crate::games::common::distinct_moves::check_distinct_moves;
    for players in 2..=4 {
        check_distinct_moves::<LaStrada>(
            &config(players),
            u64::from(players) * 1_000,
            80,
            7,
            2_000,
        );
    }
}

/// Taking back alone (issue #30): La Strada draws nothing after setup and hides nothing, so at
/// sampled steps of 60 seeded games at every seat count every listed move may be taken back alone,
/// and none shows any viewer anything.
#[test]
fn no_move_taken_back_alone_drew_or_revealed_anything() {
    use crate::games::common::takeback::check_takeback;
    for players in 2..=4 {
        let takeable = check_takeback::<LaStrada>(
            &config(players),
            5_000 + u64::from(players) * 1_000,
            20,
            29,
            2_000,
        );
        assert!(
            takeable > 100,
            "{players} players: only {takeable} moves were takeable"
        );
    }
}
