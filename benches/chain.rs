//! What signed logs cost a replica (issue #29, item 6): the hash chain's link per Act, and the
//! signatures made at creation and at a finished game's export.
//!
//! `cargo bench --bench chain -- [--links N]`
//!
//! The actions are real: random legal games of every kind, played on the engines, give the
//! encoded actions a replica links (their sizes vary from a few bytes to a few hundred). Each
//! figure is the median of 5 runs of N links (or N/100 signatures), on one core.

use std::time::{Duration, Instant};

use prost::Message;
use tabula::chain;
use tabula::games::Seed;
use tabula::games::common::GameRng;
use tabula::hosting;
use tabula::signing::{COMMITMENT_CONTEXT, SigningKeys, verify};

fn links_wanted() -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|arg| arg == "--links")
        .and_then(|at| args.get(at + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000)
}

/// The encoded actions of a few random games of every kind.
fn real_actions() -> Vec<Vec<u8>> {
    let mut actions = Vec::new();
    for registered in hosting::registry() {
        let config = registered.config(registered.game_type.max_seats);
        for game in 0..3u64 {
            let seed = Seed::from_u64(game);
            let Ok(mut state) = hosting::setup(&config, &seed) else {
                continue;
            };
            let mut rng = GameRng::from_seed(&seed);
            for _ in 0..2_000 {
                let Some(seat) = state.status().to_act else {
                    break;
                };
                let legal = state.legal_actions(tabula::games::Viewer::Seat(seat));
                if legal.is_empty() {
                    break;
                }
                let action = tabula::cli::load::choose(&legal, &mut rng);
                if state.apply(seat, &action).is_err() {
                    break;
                }
                actions.push(action.encode_to_vec());
            }
        }
    }
    actions
}

/// The median of 5 timings of `run`, per unit of `units`.
fn median_per(units: u64, mut run: impl FnMut()) -> Duration {
    let mut timings: Vec<Duration> = (0..5)
        .map(|_| {
            let started = Instant::now();
            run();
            started.elapsed() / units as u32
        })
        .collect();
    timings.sort();
    timings[2]
}

fn main() {
    let links = links_wanted();
    let actions = real_actions();
    assert!(!actions.is_empty(), "no actions played");
    let sizes: Vec<usize> = actions.iter().map(Vec::len).collect();
    let mean = sizes.iter().sum::<usize>() as f64 / sizes.len() as f64;
    println!(
        "{} real actions, {}–{} bytes, mean {mean:.0}",
        actions.len(),
        sizes.iter().min().unwrap_or(&0),
        sizes.iter().max().unwrap_or(&0)
    );
    let seed = [7u8; 32];
    let per_link = median_per(links, || {
        let mut head = chain::genesis(b"commitment");
        for version in 1..=links {
            let action = &actions[(version as usize) % actions.len()];
            head = chain::link_after(&head, &seed, version, 0, 1_700_000_000_000, action).head;
        }
        std::hint::black_box(head);
    });
    println!("chain link per Act (HMAC of the action + SHA-256 of the link): {per_link:?}");

    let keys = SigningKeys::generate().expect("randomness");
    let payload = vec![0u8; 200];
    let signatures = (links / 100).max(100);
    let per_signature = median_per(signatures, || {
        for _ in 0..signatures {
            std::hint::black_box(keys.sign(COMMITMENT_CONTEXT, &payload));
        }
    });
    println!("Ed25519 signature (creation, finished export): {per_signature:?}");
    let (key_id, signature) = keys.sign(COMMITMENT_CONTEXT, &payload);
    let per_verification = median_per(signatures, || {
        for _ in 0..signatures {
            std::hint::black_box(verify(
                keys.published(),
                &key_id,
                COMMITMENT_CONTEXT,
                &payload,
                &signature,
            ))
            .expect("verifies");
        }
    });
    println!("Ed25519 verification (VerifyLog, tabula verify): {per_verification:?}");
}
