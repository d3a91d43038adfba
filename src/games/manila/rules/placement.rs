//! Placing accomplices (spec §4.3, §9 A7, A8, A18): who places, which spaces are open, what they
//! cost, and stowaways (§5, §9 A9).

use crate::games::manila::data::*;
use crate::games::manila::wire::*;
use crate::games::manila::*;
use crate::games::{ActionError, Seat};
use crate::proto::manila::v1 as pb;
use pb::event::Kind as E;

/// The agreed terms of a placement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Terms {
    pub cost: u64,
    /// Crew slot or pirate-ship place taken.
    pub slot: usize,
    /// Free crew placement (spec §5 stowaway).
    pub stowaway: bool,
}

impl Manila {
    fn may_place(&self, seat: Seat) -> bool {
        let player = &self.players[seat as usize];
        !player.declined && player.in_hand > 0
    }

    /// The first seat from `offset` places clockwise of the harbour master that may still place.
    fn placer_from(&self, offset: u32) -> Option<u32> {
        let hm = self.voyage.harbour_master?;
        (offset..self.players_count).find(|o| self.may_place((hm + o) % self.players_count))
    }

    /// Every placement round starts with the harbour master (spec §4.3, §9 A18).
    pub(super) fn open_placement_round(&mut self) -> bool {
        match self.placer_from(0) {
            Some(offset) => {
                self.phase = Phase::Placement { offset };
                true
            }
            None => false,
        }
    }

    fn end_placement_turn(&mut self, events: &mut Vec<pb::Event>) {
        let Phase::Placement { offset } = self.phase else {
            return;
        };
        match self.placer_from(offset + 1) {
            Some(next) => self.phase = Phase::Placement { offset: next },
            None => self.next_step(events),
        }
    }

    /// Whether `space` is empty and may be taken now; its cost and slot (spec §2, §4.3, §9 A7/A8).
    fn open_space(&self, space: Space) -> Result<(u64, usize), ActionError> {
        let voyage = &self.voyage;
        let taken = |what: &str| {
            Err(ActionError::illegal(
                "§4.3",
                format!("{what} is already taken"),
            ))
        };
        match space {
            Space::Crew(ware) => {
                let Some(punt) = voyage.punt(ware) else {
                    return Err(ActionError::illegal(
                        "§4.2",
                        format!("{ware:?} is not loaded this voyage"),
                    ));
                };
                if !punt.has_empty_slot() {
                    return taken(&format!("every crew slot of the {ware:?} punt"));
                }
                if self.options.forbid_placing_on_docked && !punt.at_sea() {
                    return Err(ActionError::illegal(
                        "§9 A7",
                        format!(
                            "the {ware:?} punt has arrived; this game forbids joining its crew"
                        ),
                    ));
                }
                let slot = punt.crew.len();
                Ok((ware.crew_costs()[slot], slot))
            }
            Space::Harbour(berth) => {
                if voyage.wharves[berth].is_some() {
                    return taken("that wharf");
                }
                if self.options.forbid_placing_on_docked && berth < voyage.docked {
                    return Err(ActionError::illegal(
                        "§9 A7",
                        "a punt already lies at that wharf; this game forbids taking it now",
                    ));
                }
                Ok((BERTH_COSTS[berth], berth))
            }
            Space::Shipyard(berth) => {
                if voyage.shipyard[berth].is_some() {
                    return taken("that shipyard berth");
                }
                Ok((BERTH_COSTS[berth], berth))
            }
            Space::Pirate => {
                if self.options.close_pirate_ship_after_boarding && voyage.pirate_boarded {
                    return Err(ActionError::illegal(
                        "§9 A8",
                        "a pirate boarded this voyage; this game closes the pirate ship",
                    ));
                }
                match voyage.pirates.iter().position(Option::is_none) {
                    Some(place) => Ok((PIRATE_COST, place)),
                    None => taken("the pirate ship"),
                }
            }
            Space::SmallPilot if voyage.small_pilot.is_some() => taken("the small pilot"),
            Space::SmallPilot => Ok((SMALL_PILOT_COST, 0)),
            Space::LargePilot if voyage.large_pilot.is_some() => taken("the large pilot"),
            Space::LargePilot => Ok((LARGE_PILOT_COST, 0)),
            Space::Insurance if voyage.insurer.is_some() => taken("the insurance office"),
            Space::Insurance => Ok((0, 0)),
        }
    }

    /// A stowaway places free on a punt when he has nothing left to pay with, or every open space
    /// is beyond his means; by default not if he holds the insurance office (spec §5, §9 A9).
    pub(in crate::games::manila) fn may_stow_away(&self, seat: Seat) -> bool {
        if !self.options.stowaway_insurer_allowed && self.voyage.insurer == Some(seat) {
            return false;
        }
        let capacity = self.players[seat as usize].capacity();
        let cheapest = ALL_SPACES
            .iter()
            .filter_map(|s| self.open_space(*s).ok())
            .map(|(cost, _)| cost)
            .min();
        capacity == 0 || cheapest.is_some_and(|cost| cost > capacity)
    }

    /// What taking `space` costs `seat` now, or why he may not (spec §4.3, §5 stowaways).
    pub(super) fn placement_terms(&self, seat: Seat, space: Space) -> Result<Terms, ActionError> {
        let (cost, slot) = self.open_space(space)?;
        let capacity = self.players[seat as usize].capacity();
        if cost <= capacity {
            return Ok(Terms {
                cost,
                slot,
                stowaway: false,
            });
        }
        if matches!(space, Space::Crew(_)) && self.may_stow_away(seat) {
            return Ok(Terms {
                cost: 0,
                slot,
                stowaway: true,
            });
        }
        Err(ActionError::illegal(
            "§5",
            format!("that space costs {cost} but you can raise at most {capacity}"),
        ))
    }

    /// Places one accomplice on an open space and pays for it (spec §4.3).
    pub(in crate::games::manila) fn place_accomplice(
        &mut self,
        seat: Seat,
        place: &pb::PlaceAccomplice,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        let space = space_from_pb(place)?;
        if !matches!(self.phase, Phase::Placement { .. }) {
            return Err(self.wrong_phase());
        }
        let terms = self.placement_terms(seat, space)?;
        self.pay(seat, terms.cost, events);
        let mut received = 0;
        let voyage = &mut self.voyage;
        match space {
            Space::Crew(ware) => {
                if let Some(i) = voyage.punt_index(ware) {
                    voyage.punts[i].crew.push(seat);
                }
            }
            Space::Harbour(berth) => voyage.wharves[berth] = Some(seat),
            Space::Shipyard(berth) => voyage.shipyard[berth] = Some(seat),
            Space::Pirate => voyage.pirates[terms.slot] = Some(seat),
            Space::SmallPilot => voyage.small_pilot = Some(seat),
            Space::LargePilot => voyage.large_pilot = Some(seat),
            Space::Insurance => {
                voyage.insurer = Some(seat);
                received = INSURANCE_PREMIUM;
            }
        }
        let player = &mut self.players[seat as usize];
        player.in_hand -= 1;
        player.cash += received;
        let proto = space_to_pb(space);
        events.push(event(E::AccomplicePlaced(pb::AccomplicePlaced {
            seat,
            kind: proto.kind,
            ware: proto.ware,
            berth: proto.berth,
            slot: terms.slot as u32,
            cost: terms.cost,
            received,
            stowaway: terms.stowaway,
        })));
        self.end_placement_turn(events);
        Ok(())
    }

    /// Stops placing for the rest of this voyage (spec §4.3).
    pub(in crate::games::manila) fn decline_placement(
        &mut self,
        seat: Seat,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        if !matches!(self.phase, Phase::Placement { .. }) {
            return Err(self.wrong_phase());
        }
        self.players[seat as usize].declined = true;
        events.push(event(E::PlacementDeclined(pb::PlacementDeclined { seat })));
        self.end_placement_turn(events);
        Ok(())
    }
}
