//! The schedule of a voyage (spec §4.3): placement rounds, rolls and the pirates' and pilots'
//! decisions in order, with automatic steps run until a seat must decide.

use crate::games::manila::*;
use crate::proto::manila::v1 as pb;

/// The steps of a voyage after the harbour master's actions (spec §4.3 schedule).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(in crate::games::manila) enum Step {
    Place,
    Roll,
    Boarding,
    SmallPilot,
    LargePilot,
    Plunder,
    Settle,
}

/// 4-5 players: three placement rounds, each followed by a roll (spec §4.3).
const SCHEDULE_STANDARD: &[Step] = &[
    Step::Place,
    Step::Roll,
    Step::Place,
    Step::Roll,
    Step::Boarding,
    Step::Place,
    Step::SmallPilot,
    Step::LargePilot,
    Step::Roll,
    Step::Plunder,
    Step::Settle,
];
/// 3 players: two placement rounds before the first roll (spec §4.3).
const SCHEDULE_THREE: &[Step] = &[
    Step::Place,
    Step::Place,
    Step::Roll,
    Step::Place,
    Step::Roll,
    Step::Boarding,
    Step::Place,
    Step::SmallPilot,
    Step::LargePilot,
    Step::Roll,
    Step::Plunder,
    Step::Settle,
];
/// 3 players, fan-sheet timing (spec §4.3 note): the extra round comes before roll 2.
const SCHEDULE_THREE_LATE_EXTRA: &[Step] = &[
    Step::Place,
    Step::Roll,
    Step::Place,
    Step::Place,
    Step::Roll,
    Step::Boarding,
    Step::Place,
    Step::SmallPilot,
    Step::LargePilot,
    Step::Roll,
    Step::Plunder,
    Step::Settle,
];

impl Manila {
    /// The voyage's steps for this player count and options (spec §4.3).
    pub(in crate::games::manila) fn schedule(&self) -> &'static [Step] {
        match (
            self.players_count,
            self.options.three_player_extra_round_before_roll_two,
        ) {
            (3, false) => SCHEDULE_THREE,
            (3, true) => SCHEDULE_THREE_LATE_EXTRA,
            _ => SCHEDULE_STANDARD,
        }
    }

    /// Moves past the current step and runs the schedule on.
    pub(super) fn next_step(&mut self, events: &mut Vec<pb::Event>) {
        self.voyage.step += 1;
        self.run_schedule(events);
    }

    /// Runs automatic steps (rolls, skipped decisions, settlement) until a seat must decide.
    pub(super) fn run_schedule(&mut self, events: &mut Vec<pb::Event>) {
        while let Some(step) = self.schedule().get(self.voyage.step).copied() {
            let waiting = match step {
                Step::Place => self.open_placement_round(),
                Step::Roll => {
                    self.roll_dice(events);
                    false
                }
                Step::Boarding => self.open_boarding(),
                Step::SmallPilot => self.open_pilot(false),
                Step::LargePilot => self.open_pilot(true),
                Step::Plunder => self.open_plunder(events),
                Step::Settle => {
                    self.settle(events);
                    return;
                }
            };
            if waiting {
                return;
            }
            self.voyage.step += 1;
        }
    }
}
