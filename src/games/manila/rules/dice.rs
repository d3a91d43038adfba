//! The dice and movement (spec §4.4, §9 A4, A5): rolls, punts moving, arrivals taking the next
//! free wharf, and wrecks taking the next free shipyard berth.

use crate::games::manila::data::*;
use crate::games::manila::wire::*;
use crate::games::manila::*;
use crate::proto::manila::v1 as pb;
use pb::event::Kind as E;

impl Manila {
    /// The harbour master rolls the dice of the three loaded wares (never the fourth, §9 A5).
    pub(super) fn roll_dice(&mut self, events: &mut Vec<pb::Event>) {
        let wares: Vec<Ware> = self.voyage.punts.iter().map(|p| p.ware).collect();
        let dice: Vec<(Ware, u32)> = wares
            .into_iter()
            .map(|ware| (ware, self.rng.roll(6)))
            .collect();
        self.move_by_dice(&dice, events);
    }

    /// Moves every punt at sea by its die; arrivals take the next free wharf (spec §4.4). Punts
    /// move in lane order, which cannot change any outcome (§9 A4).
    pub(in crate::games::manila) fn move_by_dice(
        &mut self,
        dice: &[(Ware, u32)],
        events: &mut Vec<pb::Event>,
    ) {
        self.voyage.rolls += 1;
        if self.voyage.rolls == 1 {
            self.voyage.dice.clear();
        }
        self.voyage.dice.push(dice.to_vec());
        let mut moves = Vec::new();
        let mut arrivals = Vec::new();
        for &(ware, pips) in dice {
            let Some(i) = self.voyage.punt_index(ware) else {
                continue;
            };
            if !self.voyage.punts[i].at_sea() {
                continue;
            }
            let from = self.voyage.punts[i].position;
            if let Some(berth) = self.shift_punt(i, pips as i32) {
                arrivals.push((ware, berth));
            }
            moves.push(pb::PuntMoved {
                ware: ware.to_pb(),
                from_space: from,
                to_space: self.voyage.punts[i].position,
            });
        }
        let dice = dice
            .iter()
            .map(|&(ware, pips)| pb::DieView {
                ware: ware.to_pb(),
                pips,
            })
            .collect();
        events.push(event(E::DiceRolled(pb::DiceRolled {
            roll: self.voyage.rolls,
            dice,
            moves,
        })));
        for (ware, berth) in arrivals {
            events.push(event(E::PuntArrived(pb::PuntArrived {
                ware: ware.to_pb(),
                berth: berth_to_pb(berth),
            })));
        }
    }

    /// Moves punt `i` (at sea) by `spaces`; past 13 it reaches Manila and takes the next free
    /// wharf, surplus movement being lost (spec §2.5, §4.4). Returns the berth on arrival.
    pub(super) fn shift_punt(&mut self, i: usize, spaces: i32) -> Option<usize> {
        let voyage = &mut self.voyage;
        let punt = &mut voyage.punts[i];
        let target = (punt.position as i32 + spaces).max(0) as u32;
        if target > LAST_SPACE {
            punt.position = LAST_SPACE + 1;
            punt.place = PuntPlace::Harbour(voyage.docked);
            voyage.docked += 1;
            Some(voyage.docked - 1)
        } else {
            punt.position = target;
            None
        }
    }

    /// Puts punt `i` in the next free harbour berth (by a plunder choice or the A13 ruling).
    pub(super) fn dock(&mut self, i: usize) -> usize {
        let voyage = &mut self.voyage;
        voyage.punts[i].place = PuntPlace::Harbour(voyage.docked);
        voyage.punts[i].position = LAST_SPACE + 1;
        voyage.docked += 1;
        voyage.docked - 1
    }

    /// Puts punt `i` in the next free shipyard berth (spec §4.7).
    pub(super) fn wreck(&mut self, i: usize) -> usize {
        let voyage = &mut self.voyage;
        voyage.punts[i].place = PuntPlace::Shipyard(voyage.wrecked);
        voyage.wrecked += 1;
        voyage.wrecked - 1
    }

    /// The punts at sea on space 13 (the pirates' target, spec §4.5, §4.7).
    pub(super) fn punts_on_13(&self) -> Vec<usize> {
        (0..self.voyage.punts.len())
            .filter(|&i| {
                self.voyage.punts[i].at_sea() && self.voyage.punts[i].position == LAST_SPACE
            })
            .collect()
    }
}
