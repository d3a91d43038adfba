//! Dice and movement (spec §4.4, §9 A5, A6).

use super::*;
use crate::games::common::random_play::choose_action;

#[test]
fn no_punt_arrives_on_roll_1() {
    let base = launched(
        &cfg(4),
        &[(Ware::Ginseng, 5), (Ware::Silk, 4), (Ware::Jade, 0)],
    );
    for pips in 1..=6 {
        let mut state = base.clone();
        state.move_by_dice(
            &[
                (Ware::Ginseng, pips),
                (Ware::Silk, pips),
                (Ware::Jade, pips),
            ],
            &mut Vec::new(),
        );
        assert_eq!(state.voyage.docked, 0);
        assert!(state.voyage.punts.iter().all(|p| p.position <= 11));
    }
}

#[test]
fn the_view_shows_every_roll_of_the_voyage_until_the_next_voyage_rolls() {
    let mut state = new_game(&cfg(4));
    let mut chooser = GameRng::from_seed(&Seed::from_u64(3));
    let mut rolled: Vec<pb::RollView> = Vec::new();
    let mut voyages = 0;
    while let Some(seat) = state.to_act() {
        let action = choose_action::<Manila>(&state.legal_actions(seat), &mut chooser);
        let events = state.apply(seat, &action).expect("a listed action");
        for event in &events {
            match &event.kind {
                Some(E::DiceRolled(roll)) => {
                    if roll.roll == 1 {
                        rolled.clear();
                    }
                    rolled.push(pb::RollView {
                        roll: roll.roll,
                        dice: roll.dice.clone(),
                    });
                }
                Some(E::VoyageStarted(_)) => voyages += 1,
                _ => {}
            }
        }
        let view = state.view(Viewer::Spectator);
        assert_eq!(view.rolled, rolled);
        assert_eq!(
            view.last_roll,
            rolled.last().map(|r| r.dice.clone()).unwrap_or_default()
        );
    }
    assert!(voyages >= 3, "only {voyages} voyages were played");
}
