//! Nim's rules, its refusals, and random play under the engine contract.

use super::*;
use crate::games::common::random_play::{Checks, play};
use crate::games::common::testing::{apply_ok, assert_illegal, check_default_play};

fn config(heaps: u32, max_take: u32) -> pb::Config {
    pb::Config { heaps, max_take }
}

fn take(heap: u32, count: u32) -> pb::Action {
    pb::Action { heap, count }
}

#[test]
fn whoever_takes_the_last_counter_wins() {
    let mut nim = Nim::setup(&config(2, 0), &Seed::from_u64(0)).expect("sets up");
    assert_eq!(nim.heaps, vec![3, 4]);
    apply_ok(&mut nim, 0, &take(1, 4));
    assert_eq!(nim.to_act(), Some(1));
    apply_ok(&mut nim, 1, &take(0, 2));
    assert_eq!(nim.to_act(), Some(0));
    let events = apply_ok(&mut nim, 0, &take(0, 1));
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(nim.to_act(), None);
    let outcome = nim.outcome().expect("over");
    assert_eq!(outcome.winners, vec![0]);
    assert_eq!(outcome.scores, vec![1, 0]);
}

#[test]
fn refusals_cite_their_rule() {
    let nim = Nim::setup(&config(1, 2), &Seed::from_u64(0)).expect("sets up");
    assert_illegal(&nim, 0, &take(0, 0), "rule 2");
    assert_illegal(&nim, 0, &take(0, 3), "rule 2");
    assert!(matches!(
        nim.clone().apply(1, &take(0, 1)),
        Err(ActionError::NotYourTurn { .. })
    ));
    assert!(matches!(
        nim.clone().apply(0, &take(7, 1)),
        Err(ActionError::Malformed(_))
    ));
    assert_eq!(
        nim.legal_actions(0),
        vec![LegalAction::Amount {
            action: take(0, 1),
            min: 1,
            max: 2
        }]
    );
}

#[test]
fn configs_out_of_bounds_are_refused() {
    let seed = Seed::from_u64(0);
    assert!(Nim::setup(&config(MAX_HEAPS + 1, 0), &seed).is_err());
    assert!(Nim::setup(&config(MAX_HEAPS, 0), &seed).is_ok());
    let default = Nim::setup(&pb::Config::default(), &seed).expect("the default sets up");
    assert_eq!(default.heaps, vec![3, 4, 5, 6]);
}

#[test]
fn each_rules_version_keeps_its_own_default() {
    let seed = Seed::from_u64(0);
    let under =
        |version| Nim::setup_under(version, &pb::Config::default(), &seed).expect("sets up");
    assert_eq!(under("nim-1").heaps, vec![3, 4, 5], "nim-1: three heaps");
    assert_eq!(under("nim-2").heaps, vec![3, 4, 5, 6], "nim-2: four heaps");
    // A config that names its heaps plays the same under both.
    assert_eq!(
        Nim::setup_under("nim-1", &config(2, 0), &seed),
        Nim::setup_under("nim-2", &config(2, 0), &seed)
    );
}

#[test]
fn random_play_keeps_the_contract() {
    for (index, (heaps, max_take)) in [(3, 0), (5, 3), (1, 0), (MAX_HEAPS, 2)]
        .into_iter()
        .enumerate()
    {
        let config = config(heaps, max_take);
        for seed in 0..100 {
            play::<Nim>(&config, Seed::from_u64(seed), 1_000, Checks::FULL)
                .unwrap_or_else(|e| panic!("config {index}, seed {seed}: {e}"));
        }
        check_default_play::<Nim>(&config, 4, 20, 1_000);
    }
}

/// One button per distinct move (issue #31): no two listed takes have the same effect.
#[test]
fn every_listed_move_is_a_distinct_move() {
    use crate::games::common::distinct_moves::check_distinct_moves;
    check_distinct_moves::<Nim>(&config(3, 0), 0, 300, 1, 1_000);
    check_distinct_moves::<Nim>(&config(4, 2), 1_000, 300, 1, 1_000);
}
