//! Roll 3's plunder: the pirate captain directs each plundered punt, and an unguarded punt on 13
//! reaches the harbour or, by option, is wrecked (spec §4.7, §9 A13, A14).

use crate::games::manila::wire::*;
use crate::games::manila::*;
use crate::games::{ActionError, Seat};
use crate::proto::manila::v1 as pb;
use pb::event::Kind as E;

impl Manila {
    /// After roll 3: pirates aboard plunder every punt on 13, or unguarded punts on 13 reach the
    /// harbour (or are wrecked by option); true while the captain must direct (spec §4.7, §9 A13).
    pub(super) fn open_plunder(&mut self, events: &mut Vec<pb::Event>) -> bool {
        let on_13 = self.punts_on_13();
        if on_13.is_empty() {
            return false;
        }
        if self.voyage.pirates[0].is_some() {
            let mut pending = Vec::new();
            for i in on_13 {
                let punt = &mut self.voyage.punts[i];
                punt.plundered = true;
                let crew = std::mem::take(&mut punt.crew);
                pending.push(punt.ware);
                events.push(event(E::PuntPlundered(pb::PuntPlundered {
                    ware: punt.ware.to_pb(),
                    crew_returned: crew.clone(),
                })));
                for owner in crew {
                    self.players[owner as usize].in_hand += 1;
                }
            }
            self.phase = Phase::Plunder { pending };
            return true;
        }
        for i in on_13 {
            let ware = self.voyage.punts[i].ware.to_pb();
            if self.options.wreck_unguarded_on_13 {
                let berth = berth_to_pb(self.wreck(i));
                events.push(event(E::PuntWrecked(pb::PuntWrecked { ware, berth })));
            } else {
                let berth = berth_to_pb(self.dock(i));
                events.push(event(E::PuntArrived(pb::PuntArrived { ware, berth })));
            }
        }
        false
    }

    /// The pirate captain sends a plundered punt to the harbour or the shipyard (spec §4.7).
    pub(in crate::games::manila) fn direct_plunder(
        &mut self,
        seat: Seat,
        direct: &pb::DirectPlunder,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        let ware = ware_from_pb(direct.ware, "direct_plunder")?;
        let destination = match pb::PlunderDestination::try_from(direct.destination) {
            Ok(pb::PlunderDestination::Harbour) => pb::PlunderDestination::Harbour,
            Ok(pb::PlunderDestination::Shipyard) => pb::PlunderDestination::Shipyard,
            _ => return Err(ActionError::malformed("direct_plunder needs a destination")),
        };
        let Phase::Plunder { pending } = &self.phase else {
            return Err(self.wrong_phase());
        };
        if !pending.contains(&ware) {
            return Err(ActionError::illegal(
                "§4.7",
                format!("the {ware:?} punt is not awaiting your decision"),
            ));
        }
        let Some(i) = self.voyage.punt_index(ware) else {
            return Err(ActionError::malformed(
                "unreachable: a pending punt is loaded",
            ));
        };
        let berth = if destination == pb::PlunderDestination::Harbour {
            self.dock(i)
        } else {
            self.wreck(i)
        };
        events.push(event(E::PlunderDirected(pb::PlunderDirected {
            seat,
            ware: ware.to_pb(),
            destination: destination as i32,
            berth: berth_to_pb(berth),
        })));
        if let Phase::Plunder { pending } = &mut self.phase {
            pending.retain(|w| *w != ware);
            if !pending.is_empty() {
                return Ok(());
            }
        }
        self.next_step(events);
        Ok(())
    }
}
