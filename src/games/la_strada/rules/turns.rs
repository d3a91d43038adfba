//! The turn sequence (spec §4): the end checks at the start of a turn (spec §7, §9, rulings A9,
//! A11), income, ending a turn, the stall guard (spec §7, ruling A13) and the final scoring.

use super::{INCOME, RESOURCE_CAP};
use crate::games::common::left_of;
use crate::games::la_strada::wire::event;
use crate::games::la_strada::{EndBudgetRule, EndReason, LaStrada, Phase};
use crate::games::{ActionError, Seat};
use crate::proto::la_strada::v1 as pb;

impl LaStrada {
    /// Starts `seat`'s turn: the end checks first (ruling A9), then income (spec §4.2).
    pub(in crate::games::la_strada) fn begin_turn(
        &mut self,
        seat: Seat,
        events: &mut Vec<pb::Event>,
    ) {
        if seat == self.first_turn_seat {
            self.round += 1;
        }
        if self.is_two_player() {
            // Spec §9, ruling A11: end when neither player can build any road with 10 resources.
            if !self.can_still_build(0, RESOURCE_CAP) && !self.can_still_build(1, RESOURCE_CAP) {
                self.finish(EndReason::NoRoadsLeft, None, events);
                return;
            }
        } else {
            // Spec §7: the game ends when the player to start a turn cannot connect any new
            // settlement, tested with budget 10 (ruling A5) or this turn's resources (option).
            let resources = self.players[seat as usize].resources;
            let budget = match self.options.end_budget {
                EndBudgetRule::Cap => RESOURCE_CAP,
                EndBudgetRule::Current => (resources + INCOME).min(RESOURCE_CAP),
            };
            if !self.can_still_build(seat, budget) {
                self.finish(EndReason::CannotReach, Some(seat), events);
                return;
            }
        }
        let player = &mut self.players[seat as usize];
        let before = player.resources;
        player.resources = (before + INCOME).min(RESOURCE_CAP);
        self.phase = Phase::Playing { seat };
        self.built_this_turn = false;
        events.push(event(pb::event::Kind::TurnStarted(pb::TurnStarted {
            seat,
            round: self.round,
            income: player.resources - before,
            resources: player.resources,
        })));
    }

    /// Ends the game and scores it (spec §8).
    pub(in crate::games::la_strada) fn finish(
        &mut self,
        reason: EndReason,
        trigger_seat: Option<Seat>,
        events: &mut Vec<pb::Event>,
    ) {
        let gold = self.gold();
        let winners = self.winners(&gold);
        events.push(event(pb::event::Kind::GameEnded(pb::GameEnded {
            reason: reason.to_pb() as i32,
            trigger_seat,
            gold: gold.clone(),
            resources: self.players.iter().map(|p| p.resources).collect(),
            winners: winners.clone(),
        })));
        self.phase = Phase::Finished {
            reason,
            trigger_seat,
            gold,
            winners,
        };
    }

    /// Ends `seat`'s turn (spec §4.4); unspent resources carry over.
    pub(in crate::games::la_strada) fn end_turn(
        &mut self,
        seat: Seat,
    ) -> Result<Vec<pb::Event>, ActionError> {
        if !matches!(self.phase, Phase::Playing { .. }) {
            return Err(ActionError::illegal("§3.5", "place your workshop first"));
        }
        // Room for the next turn's start (or the end of the game) as well.
        let mut events = Vec::with_capacity(2);
        events.push(event(pb::event::Kind::TurnEnded(pb::TurnEnded {
            seat,
            resources: self.players[seat as usize].resources,
        })));
        self.silent_turns = if self.built_this_turn {
            0
        } else {
            self.silent_turns + 1
        };
        // Stall guard (spec §7, ruling A13): two full rounds without a tile end the game.
        if self.silent_turns >= 2 * self.options.players {
            self.finish(EndReason::Stall, None, &mut events);
        } else {
            self.begin_turn(left_of(seat, self.options.players), &mut events);
        }
        Ok(events)
    }
}
