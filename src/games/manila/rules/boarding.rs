//! Pirates boarding a punt on 13 after roll 2 (spec §4.5) and the official pirate variant (§8).

use crate::games::manila::data::*;
use crate::games::manila::wire::*;
use crate::games::manila::*;
use crate::games::{ActionError, Seat};
use crate::proto::manila::v1 as pb;
use pb::event::Kind as E;

impl Manila {
    /// Where the deciding pirate may board: the cheapest empty slot of a punt on 13; under the
    /// variant, once no punt on 13 has an empty slot, any crew slot except one a pirate boarded
    /// during this phase (spec §8).
    pub(super) fn boarding_options(&self, boarded: &[(Ware, usize)]) -> Vec<(Ware, Option<usize>)> {
        let on_13 = self.punts_on_13();
        let with_room: Vec<(Ware, Option<usize>)> = on_13
            .iter()
            .map(|&i| &self.voyage.punts[i])
            .filter(|p| p.has_empty_slot())
            .map(|p| (p.ware, None))
            .collect();
        if !with_room.is_empty() || !self.options.pirate_variant {
            return with_room;
        }
        on_13
            .iter()
            .map(|&i| &self.voyage.punts[i])
            .flat_map(|p| (0..p.crew.len()).map(move |slot| (p.ware, slot)))
            .filter(|target| !boarded.contains(target))
            .map(|(ware, slot)| (ware, Some(slot)))
            .collect()
    }

    /// Opens boarding after roll 2 when a pirate is aboard and a punt lies on 13; true while a
    /// pirate must decide (spec §4.5).
    pub(super) fn open_boarding(&mut self) -> bool {
        if self.voyage.pirates[0].is_none() || self.punts_on_13().is_empty() {
            return false;
        }
        self.phase = Phase::Boarding {
            decider: 0,
            decisions: 0,
            boarded: Vec::new(),
        };
        self.skip_idle_boarders()
    }

    /// Passes over pirates who cannot board anywhere; true while a pirate must decide.
    fn skip_idle_boarders(&mut self) -> bool {
        loop {
            let Phase::Boarding {
                decider,
                decisions,
                boarded,
            } = &self.phase
            else {
                return false;
            };
            if *decisions >= 2 {
                return false;
            }
            if self.voyage.pirates[*decider].is_some() && !self.boarding_options(boarded).is_empty()
            {
                return true;
            }
            self.record_boarding_decision(false);
        }
    }

    /// The captain decides first; if he boarded, the second pirate (now at the bow) decides,
    /// otherwise the second pirate in his place (spec §4.5).
    fn record_boarding_decision(&mut self, boarded_now: bool) {
        if let Phase::Boarding {
            decider, decisions, ..
        } = &mut self.phase
        {
            *decisions += 1;
            *decider = if boarded_now { 0 } else { 1 };
        }
    }

    /// A pirate boards a punt on 13: the cheapest empty slot, or under the variant a named slot
    /// whose accomplice goes home (spec §4.5, §8).
    pub(in crate::games::manila) fn board_punt(
        &mut self,
        seat: Seat,
        board: &pb::BoardPunt,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        let ware = ware_from_pb(board.ware, "board_punt")?;
        let Phase::Boarding {
            decider, boarded, ..
        } = &self.phase
        else {
            return Err(self.wrong_phase());
        };
        let decider = *decider;
        let Some(i) = self
            .voyage
            .punt_index(ware)
            .filter(|i| self.punts_on_13().contains(i))
        else {
            return Err(ActionError::illegal(
                "§4.5",
                format!("the {ware:?} punt is not on space 13"),
            ));
        };
        let punt = &self.voyage.punts[i];
        let displace = match board.displace_slot {
            Some(slot) => {
                let slot = slot as usize;
                if slot >= punt.crew.len() {
                    return Err(ActionError::malformed(format!(
                        "the {ware:?} punt has no accomplice in slot {slot}"
                    )));
                }
                Some(slot)
            }
            None => None,
        };
        let options = self.boarding_options(boarded);
        if !options.contains(&(ware, displace)) {
            let message = match displace {
                None if self.options.pirate_variant && options.iter().all(|(_, d)| d.is_some()) => {
                    "that punt is full: name the slot whose accomplice you send home (displace_slot)"
                }
                None => "that punt has no empty slot; a full punt cannot be boarded",
                Some(_) if !self.options.pirate_variant => {
                    "displacing crew needs the pirate variant (§8)"
                }
                Some(_) if options.iter().any(|(_, d)| d.is_none()) => {
                    "a punt on 13 still has an empty slot: empty slots are filled before anyone is displaced"
                }
                Some(_) => "the pirate who has just boarded cannot be displaced",
            };
            let rule = if displace.is_some() || self.options.pirate_variant {
                "§8"
            } else {
                "§4.5"
            };
            return Err(ActionError::illegal(rule, message));
        }
        // Leave the ship; if the captain boards, the second pirate moves to the bow.
        self.voyage.pirates[decider] = None;
        if decider == 0 {
            self.voyage.pirates[0] = self.voyage.pirates[1].take();
        }
        self.voyage.pirate_boarded = true;
        let punt = &mut self.voyage.punts[i];
        let (slot, displaced) = match displace {
            Some(slot) => (slot, Some(std::mem::replace(&mut punt.crew[slot], seat))),
            None => {
                punt.crew.push(seat);
                (punt.crew.len() - 1, None)
            }
        };
        if let Some(owner) = displaced {
            self.players[owner as usize].in_hand += 1;
        }
        if let Phase::Boarding { boarded, .. } = &mut self.phase {
            boarded.push((ware, slot));
        }
        events.push(event(E::PirateBoarded(pb::PirateBoarded {
            seat,
            ware: ware.to_pb(),
            slot: slot as u32,
            displaced,
        })));
        self.record_boarding_decision(true);
        if !self.skip_idle_boarders() {
            self.next_step(events);
        }
        Ok(())
    }

    /// The deciding pirate stays on the pirate ship (spec §4.5).
    pub(in crate::games::manila) fn stay_aboard(
        &mut self,
        seat: Seat,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        if !matches!(self.phase, Phase::Boarding { .. }) {
            return Err(self.wrong_phase());
        }
        events.push(event(E::PirateStayed(pb::PirateStayed { seat })));
        self.record_boarding_decision(false);
        if !self.skip_idle_boarders() {
            self.next_step(events);
        }
        Ok(())
    }
}
