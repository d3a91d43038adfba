//! The small and large pilots before roll 3 (spec §4.6, §9 A16).

use crate::games::manila::data::*;
use crate::games::manila::wire::*;
use crate::games::manila::*;
use crate::games::{ActionError, Seat};
use crate::proto::manila::v1 as pb;
use pb::event::Kind as E;

impl Manila {
    /// Opens the small or large pilot's decision when that pilot is placed and a punt is at sea
    /// (spec §4.6).
    pub(super) fn open_pilot(&mut self, large: bool) -> bool {
        let pilot = if large {
            self.voyage.large_pilot
        } else {
            self.voyage.small_pilot
        };
        if pilot.is_none() || !self.voyage.punts.iter().any(|p| p.at_sea()) {
            return false;
        }
        self.phase = Phase::Pilot { large };
        true
    }

    /// Every move the pilot may make, doing nothing first.
    pub(super) fn pilot_options(&self, large: bool) -> Vec<Vec<(Ware, i32)>> {
        let at_sea: Vec<&Punt> = self.voyage.punts.iter().filter(|p| p.at_sea()).collect();
        let fits = |p: &Punt, spaces: i32| p.position as i32 + spaces >= 0;
        let mut options = vec![Vec::new()];
        let reaches: &[i32] = if large { &[1, -1, 2, -2] } else { &[1, -1] };
        for punt in &at_sea {
            for &spaces in reaches {
                if fits(punt, spaces) {
                    options.push(vec![(punt.ware, spaces)]);
                }
            }
        }
        if large {
            for (a, first) in at_sea.iter().enumerate() {
                for second in &at_sea[a + 1..] {
                    for x in [1, -1] {
                        for y in [1, -1] {
                            if fits(first, x) && fits(second, y) {
                                options.push(vec![(first.ware, x), (second.ware, y)]);
                            }
                        }
                    }
                }
            }
        }
        options
    }

    /// The pilot's move: small, one punt ±1; large, one punt ±1/±2 or two punts ±1; or nothing
    /// (spec §4.6, §9 A16).
    pub(in crate::games::manila) fn pilot_punts(
        &mut self,
        seat: Seat,
        pilot: &pb::PilotPunts,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        let mut shifts = Vec::with_capacity(pilot.shifts.len());
        for shift in &pilot.shifts {
            shifts.push((ware_from_pb(shift.ware, "each pilot shift")?, shift.spaces));
        }
        let Phase::Pilot { large } = self.phase else {
            return Err(self.wrong_phase());
        };
        let rule = "§4.6";
        match (large, shifts.as_slice()) {
            (_, []) => {}
            // `unsigned_abs`: the client's `spaces` may be any i32, and `i32::MIN.abs()` overflows.
            (false, [(_, s)]) if s.unsigned_abs() == 1 => {}
            (false, _) => {
                return Err(ActionError::illegal(
                    rule,
                    "the small pilot moves one punt 1 space, or nothing",
                ));
            }
            (true, [(_, s)]) if (1..=2).contains(&s.unsigned_abs()) => {}
            (true, [(a, x), (b, y)])
                if a != b && x.unsigned_abs() == 1 && y.unsigned_abs() == 1 => {}
            (true, _) => {
                return Err(ActionError::illegal(
                    rule,
                    "the large pilot moves one punt up to 2 spaces, or two different punts 1 space each",
                ));
            }
        }
        let mut targets = Vec::with_capacity(shifts.len());
        for &(ware, spaces) in &shifts {
            let Some(i) = self
                .voyage
                .punt_index(ware)
                .filter(|&i| self.voyage.punts[i].at_sea())
            else {
                return Err(ActionError::illegal(
                    "§9 A16",
                    format!("the {ware:?} punt is not at sea"),
                ));
            };
            if (self.voyage.punts[i].position as i32) + spaces < 0 {
                return Err(ActionError::illegal(
                    "§9 A16",
                    "a punt cannot move back beyond space 0",
                ));
            }
            targets.push((i, ware, spaces));
        }
        let proto_shifts = shifts
            .iter()
            .map(|&(w, spaces)| pb::PuntShift {
                ware: w.to_pb(),
                spaces,
            })
            .collect();
        events.push(event(E::PilotActed(pb::PilotActed {
            seat,
            large,
            shifts: proto_shifts,
        })));
        for (i, ware, spaces) in targets {
            // A pilot's punt reaching 13 is never attacked now (spec §4.5): pirates act on rolls.
            if let Some(berth) = self.shift_punt(i, spaces) {
                events.push(event(E::PuntArrived(pb::PuntArrived {
                    ware: ware.to_pb(),
                    berth: berth_to_pb(berth),
                })));
            }
        }
        self.next_step(events);
        Ok(())
    }
}
