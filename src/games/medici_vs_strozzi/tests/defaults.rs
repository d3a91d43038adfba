//! Default actions (docs/rules/medici-vs-strozzi.md, "Default actions"): the most passive legal
//! choice at each stage of a lot (spec B4), and games of default actions end.

use super::*;
use crate::games::common::testing::check_default_play;

#[test]
fn each_stage_has_its_passive_default() {
    let mut g = game();
    // Drawing, nothing drawn yet: a lot needs a tile (B4).
    assert_eq!(g.default_action(), Some(draw()));
    apply_ok(&mut g, MEDICI, &draw());
    // A tile drawn: stop and name the lowest price (B4, M9).
    assert_eq!(g.default_action(), Some(offer(0)));
    apply_ok(&mut g, MEDICI, &offer(10));
    // The opponent declines (B4).
    assert_eq!(g.default_action(), Some(decline()));
    apply_ok(&mut g, STROZZI, &buy());
    // The buyer discards (B4, M4): always allowed, no ship chosen.
    assert_eq!(g.default_action(), Some(discard()));
}

#[test]
fn the_default_after_a_decline_is_the_drawers_discard() {
    let mut g = game();
    apply_ok(&mut g, MEDICI, &draw());
    apply_ok(&mut g, MEDICI, &offer(5));
    apply_ok(&mut g, STROZZI, &decline());
    assert_eq!(g.to_act(), Some(MEDICI));
    assert_eq!(g.default_action(), Some(discard()));
}

#[test]
fn a_finished_game_has_no_default() {
    let game = play::<MediciVsStrozzi>(
        &pb::Config::default(),
        Seed::from_u64(3),
        5_000,
        Checks::NONE,
    )
    .expect("plays");
    assert_eq!(game.final_state.default_action(), None);
}

#[test]
fn games_of_default_actions_end_and_defaults_hide_nothing() {
    let longest = check_default_play::<MediciVsStrozzi>(&pb::Config::default(), 2_000, 200, 5_000);
    // Each lot of one tile costs four actions; 26 tiles per round, three rounds.
    assert!(
        longest <= 3 * 26 * 4,
        "longest all-default game: {longest} actions"
    );
}
