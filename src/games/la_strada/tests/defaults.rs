//! Default actions (docs/rules/la-strada.md, "Default actions"): the first legal workshop hex
//! during setup (§3.5), ending the turn in play (§4.4); games of default actions end.

use super::*;
use crate::games::common::testing::check_default_play;

#[test]
fn setup_places_on_the_first_legal_hex_then_turns_end() {
    for players in 2..=4 {
        let mut state = LaStrada::setup(&config(players), &Seed::from_u64(11)).expect("setup");
        while let Phase::PlacingWorkshops { .. } = state.phase {
            let seat = state.to_act().expect("a placer");
            let first = state.legal_workshop_hexes(seat)[0];
            let default = state.default_action().expect("a default");
            assert_eq!(default, wire::place_workshop(first));
            apply_ok(&mut state, seat, &default);
        }
        if state.to_act().is_some() {
            assert_eq!(state.default_action(), Some(end_turn()));
        }
    }
}

#[test]
fn games_of_default_actions_end_by_the_stall_guard() {
    for players in 2..=4 {
        for seed in 0..20 {
            let everyone: Vec<Seat> = (0..players).collect();
            let game = crate::games::common::random_play::play_with_defaults::<LaStrada>(
                &config(players),
                Seed::from_u64(seed),
                500,
                Checks::STANDARD,
                &everyone,
            )
            .unwrap_or_else(|e| panic!("{players} players, seed {seed}: {e}"));
            // Nobody builds: two silent rounds end it (§7, ruling A13), unless a player cannot
            // reach anything at the start of a turn first.
            let Phase::Finished { reason, .. } = game.final_state.phase else {
                panic!("not finished")
            };
            assert!(
                matches!(reason, EndReason::Stall | EndReason::CannotReach),
                "{reason:?}"
            );
        }
    }
}

#[test]
fn defaults_end_and_hide_nothing() {
    for players in 2..=4 {
        check_default_play::<LaStrada>(&config(players), 1_000, 30, 2_000);
    }
}
