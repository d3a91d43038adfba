//! The engine keeps playing the same games: for a few seeds of each configuration, a digest of
//! what a seeded random game does, compared with the digest recorded before the engine's speed-up
//! of issue #26 (item 7). The games are drawn as the random-play benchmark draws them
//! (`random_play::play` with `Checks::NONE`, through [`Engine::random_action`]); the digest
//! covers every action, every event it produced, the legal-action listing before it, the
//! outcome and the final state. A change of behaviour (another road drawn, another listing
//! order, another event field) changes the digest.

use sha2::{Digest, Sha256};

use super::*;
use prost::Message;

/// The digest of the seeded games `seeds` of `config` (first 16 hex digits of a SHA-256), and how
/// many actions they took in all.
fn games_digest(config: &pb::Config, seeds: std::ops::Range<u64>) -> (String, usize) {
    let mut hasher = Sha256::new();
    let mut actions = 0;
    let feed = |hasher: &mut Sha256, bytes: &[u8]| {
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    };
    for seed in seeds {
        let game: RandomGame<LaStrada> =
            play(config, Seed::from_u64(seed), 5_000, Checks::NONE).expect("game ends");
        actions += game.actions.len();
        let mut state = LaStrada::setup(config, &Seed::from_u64(seed)).expect("setup");
        for event in state.opening_events() {
            feed(&mut hasher, &event.encode_to_vec());
        }
        for (seat, action) in &game.actions {
            assert_eq!(state.to_act(), Some(*seat), "{config:?} seed {seed}");
            let listing = state.legal_actions(*seat);
            feed(&mut hasher, &(listing.len() as u64).to_le_bytes());
            for entry in &listing {
                let LegalAction::Exact(listed) = entry else {
                    panic!("La Strada lists exact actions only");
                };
                feed(&mut hasher, &listed.encode_to_vec());
            }
            feed(&mut hasher, &seat.to_le_bytes());
            feed(&mut hasher, &action.encode_to_vec());
            let events = state.apply(*seat, action).expect("a listed action applies");
            feed(&mut hasher, &(events.len() as u64).to_le_bytes());
            for event in &events {
                feed(&mut hasher, &event.encode_to_vec());
            }
        }
        let outcome = state.outcome().expect("the game is over");
        for score in &outcome.scores {
            feed(&mut hasher, &score.to_le_bytes());
        }
        for winner in &outcome.winners {
            feed(&mut hasher, &winner.to_le_bytes());
        }
        feed(&mut hasher, &encode(&state));
        assert_eq!(
            encode(&state),
            encode(&game.final_state),
            "{config:?} seed {seed}"
        );
    }
    let digest = hasher.finalize();
    let hex = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    (hex, actions)
}

/// Checks the digest of `seeds` of `config` against the recorded one.
fn assert_recorded(config: pb::Config, seeds: std::ops::Range<u64>, recorded: (&str, usize)) {
    let (digest, actions) = games_digest(&config, seeds.clone());
    assert_eq!(
        (digest.as_str(), actions),
        recorded,
        "{config:?} seeds {seeds:?} no longer play the recorded games"
    );
}

#[test]
fn two_player_games_are_the_recorded_ones() {
    assert_recorded(config(2), 0..200, ("77f04364bf66615f", 10702));
}

#[test]
fn three_player_games_are_the_recorded_ones() {
    assert_recorded(config(3), 0..200, ("7bf0fcca1822a3db", 12879));
}

#[test]
fn four_player_games_are_the_recorded_ones() {
    assert_recorded(config(4), 0..200, ("e9077301304d42a7", 15140));
}

#[test]
fn games_with_the_other_options_are_the_recorded_ones() {
    let with = |players, change: fn(&mut pb::Config)| {
        let mut config = config(players);
        change(&mut config);
        config
    };
    assert_recorded(
        with(3, |c| c.curve = pb::Curve::Sharp as i32),
        100..140,
        ("65d09ce714d13a7f", 1887),
    );
    assert_recorded(
        with(4, |c| c.curve = pb::Curve::Both as i32),
        100..140,
        ("4f48c2272e9fe227", 2685),
    );
    assert_recorded(
        with(2, |c| c.curve = pb::Curve::Both as i32),
        100..140,
        ("92ef22314061984d", 2050),
    );
    assert_recorded(
        with(3, |c| c.end_budget = pb::EndBudget::Current as i32),
        100..140,
        ("79b50b641bb42733", 2244),
    );
    assert_recorded(
        with(4, |c| {
            c.workshop_spacing = pb::WorkshopSpacing::All as i32;
        }),
        100..140,
        ("58ac6c167dceea97", 3034),
    );
    assert_recorded(
        with(2, |c| {
            c.two_player_first_turn = pb::TwoPlayerFirstTurn::FirstPlacer as i32;
        }),
        100..140,
        ("d95980483def210a", 2094),
    );
}
