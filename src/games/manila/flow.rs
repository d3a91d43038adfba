//! A voyage step by step (spec §4): the auction for harbour master (§4.1), the harbour master's
//! share purchase, loading and launch (§4.2), placement rounds (§4.3), dice (§4.4), boarding
//! (§4.5), pilots (§4.6) and plunder (§4.7), tied together by the schedule in `mod.rs`.

use super::{Auction, Manila, Phase, Punt, PuntPlace, Step, Voyage, Ware, data::*, emit};
use crate::games::common::seats::left_of;
use crate::games::{ActionError, LegalAction, Seat};
use crate::proto::v1::manila as pb;
use pb::action::Kind as A;
use pb::event::Kind as E;

/// A space an accomplice can take (spec §2.2, §2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Space {
    /// The cheapest empty crew slot of this ware's punt.
    Crew(Ware),
    Harbour(usize),
    Shipyard(usize),
    Pirate,
    SmallPilot,
    LargePilot,
    Insurance,
}

const ALL_SPACES: [Space; 14] = [
    Space::Crew(Ware::Ginseng),
    Space::Crew(Ware::Nutmeg),
    Space::Crew(Ware::Silk),
    Space::Crew(Ware::Jade),
    Space::Harbour(0),
    Space::Harbour(1),
    Space::Harbour(2),
    Space::Shipyard(0),
    Space::Shipyard(1),
    Space::Shipyard(2),
    Space::Pirate,
    Space::SmallPilot,
    Space::LargePilot,
    Space::Insurance,
];

/// The agreed terms of a placement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Terms {
    pub cost: u64,
    /// Crew slot or pirate-ship place taken.
    pub slot: usize,
    /// Free crew placement (spec §5 stowaway).
    pub stowaway: bool,
}

pub(super) fn berth_to_proto(berth: usize) -> i32 {
    (match berth {
        0 => pb::Berth::A,
        1 => pb::Berth::B,
        _ => pb::Berth::C,
    }) as i32
}

fn berth_from_proto(value: i32) -> Option<usize> {
    match pb::Berth::try_from(value).ok()? {
        pb::Berth::Unspecified => None,
        pb::Berth::A => Some(0),
        pb::Berth::B => Some(1),
        pb::Berth::C => Some(2),
    }
}

fn space_from_proto(place: &pb::PlaceAccomplice) -> Result<Space, ActionError> {
    use pb::SpaceKind as K;
    let kind = K::try_from(place.kind).map_err(|_| ActionError::malformed("unknown space kind"))?;
    let ware = place.ware;
    let berth = place.berth;
    let needs_nothing = |space: Space| {
        if ware != 0 || berth != 0 {
            Err(ActionError::malformed(
                "ware and berth are only set for crew / harbour / shipyard spaces",
            ))
        } else {
            Ok(space)
        }
    };
    match kind {
        K::Unspecified => Err(ActionError::malformed(
            "place_accomplice needs a space kind",
        )),
        K::Crew => {
            if berth != 0 {
                return Err(ActionError::malformed(
                    "a crew space takes a ware, not a berth",
                ));
            }
            Ware::from_proto(ware)
                .map(Space::Crew)
                .ok_or_else(|| ActionError::malformed("a crew space needs a ware"))
        }
        K::Harbour | K::Shipyard => {
            if ware != 0 {
                return Err(ActionError::malformed(
                    "a harbour or shipyard space takes a berth, not a ware",
                ));
            }
            let berth = berth_from_proto(berth)
                .ok_or_else(|| ActionError::malformed("this space needs a berth"))?;
            Ok(if kind == K::Harbour {
                Space::Harbour(berth)
            } else {
                Space::Shipyard(berth)
            })
        }
        K::Pirate => needs_nothing(Space::Pirate),
        K::SmallPilot => needs_nothing(Space::SmallPilot),
        K::LargePilot => needs_nothing(Space::LargePilot),
        K::Insurance => needs_nothing(Space::Insurance),
    }
}

pub(super) fn space_to_proto(space: Space) -> pb::PlaceAccomplice {
    use pb::SpaceKind as K;
    let (kind, ware, berth) = match space {
        Space::Crew(ware) => (K::Crew, ware.to_proto(), 0),
        Space::Harbour(b) => (K::Harbour, 0, berth_to_proto(b)),
        Space::Shipyard(b) => (K::Shipyard, 0, berth_to_proto(b)),
        Space::Pirate => (K::Pirate, 0, 0),
        Space::SmallPilot => (K::SmallPilot, 0, 0),
        Space::LargePilot => (K::LargePilot, 0, 0),
        Space::Insurance => (K::Insurance, 0, 0),
    };
    pb::PlaceAccomplice {
        kind: kind as i32,
        ware,
        berth,
    }
}

fn action(kind: A) -> pb::Action {
    pb::Action { kind: Some(kind) }
}

fn parse_ware(value: i32, what: &str) -> Result<Ware, ActionError> {
    Ware::from_proto(value).ok_or_else(|| ActionError::malformed(format!("{what} needs a ware")))
}

/// The 25 ordered start triples 0..=5 summing to 9 (spec §2.5).
fn start_triples() -> impl Iterator<Item = [u32; 3]> {
    (0..=MAX_START).flat_map(|a| {
        (0..=MAX_START).filter_map(move |b| {
            let c = START_SUM.checked_sub(a + b)?;
            (c <= MAX_START).then_some([a, b, c])
        })
    })
}

impl Manila {
    /// The spec section governing the current decision, for errors.
    pub(super) fn phase_rule(&self) -> &'static str {
        match self.phase {
            Phase::Auction(_) => "§4.1",
            Phase::Purchase | Phase::Loading => "§4.2",
            Phase::Placement { .. } => "§4.3",
            Phase::Boarding { .. } => "§4.5",
            Phase::Pilot { .. } => "§4.6",
            Phase::Plunder { .. } => "§4.7",
            Phase::Over => "§6",
        }
    }

    fn wrong_phase(&self) -> ActionError {
        let waiting = match self.phase {
            Phase::Auction(_) => "a bid or a pass in the harbour-master auction",
            Phase::Purchase => "the harbour master's share purchase (buy_share or skip_purchase)",
            Phase::Loading => "the harbour master loading the punts (load_punts)",
            Phase::Placement { .. } => "a placement (place_accomplice or decline_placement)",
            Phase::Boarding { .. } => "a pirate's boarding decision (board_punt or stay_aboard)",
            Phase::Pilot { .. } => "a pilot's move (pilot_punts)",
            Phase::Plunder { .. } => {
                "the pirate captain directing a plundered punt (direct_plunder)"
            }
            Phase::Over => "nothing: the game is over",
        };
        ActionError::illegal(
            self.phase_rule(),
            format!("that move is not possible now; the game waits for {waiting}"),
        )
    }

    /// Everything but money actions that `seat` (the seat to act) may do now.
    pub(super) fn phase_actions(&self, seat: Seat) -> Vec<LegalAction<pb::Action>> {
        let mut legal = Vec::new();
        match &self.phase {
            Phase::Auction(auction) => {
                let min = auction.high.map_or(1, |(_, bid)| bid + 1);
                let max = self.players[seat as usize].capacity();
                if max >= min {
                    legal.push(LegalAction::Amount {
                        action: action(A::Bid(pb::Bid { amount: min })),
                        min,
                        max,
                    });
                }
                legal.push(LegalAction::Exact(action(A::PassAuction(
                    pb::PassAuction {},
                ))));
            }
            Phase::Purchase => {
                for ware in Ware::ALL {
                    if self.share_purchase_check(seat, ware).is_ok() {
                        legal.push(LegalAction::Exact(action(A::BuyShare(pb::BuyShare {
                            ware: ware.to_proto(),
                        }))));
                    }
                }
                legal.push(LegalAction::Exact(action(A::SkipPurchase(
                    pb::SkipPurchase {},
                ))));
            }
            Phase::Loading => {
                for left_out in Ware::ALL {
                    let loaded: Vec<Ware> =
                        Ware::ALL.into_iter().filter(|w| *w != left_out).collect();
                    for starts in start_triples() {
                        let punts = loaded
                            .iter()
                            .zip(starts)
                            .map(|(ware, start)| pb::PuntStart {
                                ware: ware.to_proto(),
                                start,
                            })
                            .collect();
                        legal.push(LegalAction::Exact(action(A::LoadPunts(pb::LoadPunts {
                            punts,
                        }))));
                    }
                }
            }
            Phase::Placement { .. } => {
                for space in ALL_SPACES {
                    if self.placement_terms(seat, space).is_ok() {
                        legal.push(LegalAction::Exact(action(A::PlaceAccomplice(
                            space_to_proto(space),
                        ))));
                    }
                }
                legal.push(LegalAction::Exact(action(A::DeclinePlacement(
                    pb::DeclinePlacement {},
                ))));
            }
            Phase::Boarding { boarded, .. } => {
                for (ware, displace) in self.boarding_options(boarded) {
                    let board = pb::BoardPunt {
                        ware: ware.to_proto(),
                        displace_slot: displace.map(|s| s as u32),
                    };
                    legal.push(LegalAction::Exact(action(A::BoardPunt(board))));
                }
                legal.push(LegalAction::Exact(action(A::StayAboard(pb::StayAboard {}))));
            }
            Phase::Pilot { large } => {
                for shifts in self.pilot_options(*large) {
                    let shifts = shifts
                        .into_iter()
                        .map(|(ware, spaces)| pb::PuntShift {
                            ware: ware.to_proto(),
                            spaces,
                        })
                        .collect();
                    legal.push(LegalAction::Exact(action(A::PilotPunts(pb::PilotPunts {
                        shifts,
                    }))));
                }
            }
            Phase::Plunder { pending } => {
                for ware in pending {
                    for destination in [
                        pb::PlunderDestination::Harbour,
                        pb::PlunderDestination::Shipyard,
                    ] {
                        let direct = pb::DirectPlunder {
                            ware: ware.to_proto(),
                            destination: destination as i32,
                        };
                        legal.push(LegalAction::Exact(action(A::DirectPlunder(direct))));
                    }
                }
            }
            Phase::Over => {}
        }
        legal
    }

    // ----- Voyage start and the auction (spec §4.1) -------------------------------------------

    /// Starts the next voyage with the auction opened by `opener` (spec §4.1, §4.9).
    pub(super) fn start_voyage(&mut self, opener: Seat, events: &mut Vec<pb::Event>) {
        let number = self.voyage.number + 1;
        self.voyage = Voyage::new(number, self.values);
        let total = self.accomplices_total();
        for player in &mut self.players {
            player.in_hand = total;
            player.declined = false;
        }
        self.phase = Phase::Auction(Auction {
            opener,
            turn: opener,
            high: None,
            passed: vec![false; self.players_count as usize],
        });
        emit(
            events,
            E::VoyageStarted(pb::VoyageStarted {
                voyage: number,
                opener,
            }),
        );
    }

    pub(super) fn bid(
        &mut self,
        seat: Seat,
        amount: u64,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        let Phase::Auction(auction) = &self.phase else {
            return Err(self.wrong_phase());
        };
        let min = auction.high.map_or(1, |(_, bid)| bid + 1);
        if amount < min {
            return Err(ActionError::illegal(
                "§4.1",
                format!("a bid must be at least {min} (more than the high bid)"),
            ));
        }
        let capacity = self.players[seat as usize].capacity();
        if amount > capacity {
            return Err(ActionError::illegal(
                "§4.1",
                format!("you can raise at most {capacity} (cash + 12 per unmortgaged share)"),
            ));
        }
        if let Phase::Auction(auction) = &mut self.phase {
            auction.high = Some((seat, amount));
        }
        emit(events, E::BidPlaced(pb::BidPlaced { seat, amount }));
        self.continue_auction(seat, events);
        Ok(())
    }

    pub(super) fn pass_auction(
        &mut self,
        seat: Seat,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        let Phase::Auction(auction) = &mut self.phase else {
            return Err(self.wrong_phase());
        };
        auction.passed[seat as usize] = true;
        emit(events, E::AuctionPassed(pb::AuctionPassed { seat }));
        self.continue_auction(seat, events);
        Ok(())
    }

    /// After `seat` bid or passed: end the auction or hand the turn to the next seat still in.
    fn continue_auction(&mut self, seat: Seat, events: &mut Vec<pb::Event>) {
        let n = self.players_count;
        let Phase::Auction(auction) = &mut self.phase else {
            return;
        };
        let still_in: Vec<Seat> = (0..n).filter(|s| !auction.passed[*s as usize]).collect();
        match auction.high {
            // Everyone else passed: the high bidder wins (spec §4.1).
            Some((bidder, price)) if still_in == [bidder] => {
                self.finish_auction(bidder, price, false, events)
            }
            // Nobody bid at all: the opener (voyage 1) or the previous harbour master, who is
            // always the opener, keeps the office for free (spec §4.1, §9 A2, A3).
            None if still_in.is_empty() => {
                let opener = auction.opener;
                self.finish_auction(opener, 0, true, events);
            }
            _ => {
                let mut next = left_of(seat, n);
                while auction.passed[next as usize] {
                    next = left_of(next, n);
                }
                auction.turn = next;
            }
        }
    }

    fn finish_auction(
        &mut self,
        seat: Seat,
        price: u64,
        uncontested: bool,
        events: &mut Vec<pb::Event>,
    ) {
        emit(
            events,
            E::HarbourMasterChosen(pb::HarbourMasterChosen {
                seat,
                price,
                uncontested,
            }),
        );
        self.pay(seat, price, events);
        self.voyage.harbour_master = Some(seat);
        self.phase = Phase::Purchase;
    }

    // ----- The harbour master (spec §4.2) ------------------------------------------------------

    /// The price of a share: its value, but at least 5 (spec §4.2 a).
    pub(super) fn share_price(&self, ware: Ware) -> u64 {
        self.value(ware).max(MIN_SHARE_PRICE)
    }

    fn share_purchase_check(&self, seat: Seat, ware: Ware) -> Result<u64, ActionError> {
        if self.supply[ware.index()] == 0 {
            return Err(ActionError::illegal(
                "§4.2",
                format!("no {ware:?} share is left in the supply"),
            ));
        }
        let price = self.share_price(ware);
        let capacity = self.players[seat as usize].capacity();
        if price > capacity {
            return Err(ActionError::illegal(
                "§4.2",
                format!("a {ware:?} share costs {price} but you can raise at most {capacity}"),
            ));
        }
        Ok(price)
    }

    pub(super) fn buy_share(
        &mut self,
        seat: Seat,
        ware: i32,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        let ware = parse_ware(ware, "buy_share")?;
        if self.phase != Phase::Purchase {
            return Err(self.wrong_phase());
        }
        let price = self.share_purchase_check(seat, ware)?;
        self.pay(seat, price, events);
        self.supply[ware.index()] -= 1;
        self.players[seat as usize].bought.push(ware);
        emit(
            events,
            E::ShareBought(pb::ShareBought {
                seat,
                ware: ware.to_proto(),
                price,
            }),
        );
        self.phase = Phase::Loading;
        Ok(())
    }

    pub(super) fn skip_purchase(
        &mut self,
        seat: Seat,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        if self.phase != Phase::Purchase {
            return Err(self.wrong_phase());
        }
        emit(events, E::PurchaseSkipped(pb::PurchaseSkipped { seat }));
        self.phase = Phase::Loading;
        Ok(())
    }

    pub(super) fn load_punts(
        &mut self,
        seat: Seat,
        load: &pb::LoadPunts,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        let mut starts = Vec::with_capacity(load.punts.len());
        for punt in &load.punts {
            starts.push((parse_ware(punt.ware, "each loaded punt")?, punt.start));
        }
        if self.phase != Phase::Loading {
            return Err(self.wrong_phase());
        }
        starts.sort_unstable();
        if starts.len() != 3 || starts.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err(ActionError::illegal(
                "§4.2",
                "load exactly 3 different wares, one per punt (the fourth sits out)",
            ));
        }
        if let Some((ware, start)) = starts.iter().find(|(_, start)| *start > MAX_START) {
            return Err(ActionError::illegal(
                "§2.5",
                format!("{ware:?} cannot start on {start}: starts are 0 to 5"),
            ));
        }
        let sum: u32 = starts.iter().map(|(_, start)| start).sum();
        if sum != START_SUM {
            return Err(ActionError::illegal(
                "§2.5",
                format!("the start spaces must sum to 9 (they sum to {sum})"),
            ));
        }
        let left_out = Ware::ALL
            .into_iter()
            .find(|w| starts.iter().all(|(ware, _)| ware != w))
            .unwrap_or(Ware::Jade);
        self.voyage.punts = starts
            .iter()
            .map(|&(ware, start)| Punt {
                ware,
                start,
                position: start,
                place: PuntPlace::AtSea,
                crew: Vec::new(),
                plundered: false,
            })
            .collect();
        let punts = starts
            .iter()
            .map(|&(ware, start)| pb::PuntStart {
                ware: ware.to_proto(),
                start,
            })
            .collect();
        emit(
            events,
            E::PuntsLoaded(pb::PuntsLoaded {
                seat,
                left_out: left_out.to_proto(),
                punts,
            }),
        );
        self.voyage.step = 0;
        self.run_schedule(events);
        Ok(())
    }

    // ----- The schedule (spec §4.3) ------------------------------------------------------------

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

    // ----- Placement (spec §4.3, §5 stowaways) -------------------------------------------------

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
    fn open_placement_round(&mut self) -> bool {
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
    pub(super) fn may_stow_away(&self, seat: Seat) -> bool {
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

    pub(super) fn place_accomplice(
        &mut self,
        seat: Seat,
        place: &pb::PlaceAccomplice,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        let space = space_from_proto(place)?;
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
        let proto = space_to_proto(space);
        emit(
            events,
            E::AccomplicePlaced(pb::AccomplicePlaced {
                seat,
                kind: proto.kind,
                ware: proto.ware,
                berth: proto.berth,
                slot: terms.slot as u32,
                cost: terms.cost,
                received,
                stowaway: terms.stowaway,
            }),
        );
        self.end_placement_turn(events);
        Ok(())
    }

    pub(super) fn decline_placement(
        &mut self,
        seat: Seat,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        if !matches!(self.phase, Phase::Placement { .. }) {
            return Err(self.wrong_phase());
        }
        self.players[seat as usize].declined = true;
        emit(events, E::PlacementDeclined(pb::PlacementDeclined { seat }));
        self.end_placement_turn(events);
        Ok(())
    }

    // ----- Movement (spec §4.4) ---------------------------------------------------------------

    /// The harbour master rolls the dice of the three loaded wares (never the fourth, §9 A5).
    fn roll_dice(&mut self, events: &mut Vec<pb::Event>) {
        let wares: Vec<Ware> = self.voyage.punts.iter().map(|p| p.ware).collect();
        let dice: Vec<(Ware, u32)> = wares
            .into_iter()
            .map(|ware| (ware, self.rng.roll(6)))
            .collect();
        self.move_by_dice(&dice, events);
    }

    /// Moves every punt at sea by its die; arrivals take the next free wharf (spec §4.4). Punts
    /// move in lane order, which cannot change any outcome (§9 A4).
    pub(super) fn move_by_dice(&mut self, dice: &[(Ware, u32)], events: &mut Vec<pb::Event>) {
        self.voyage.rolls += 1;
        self.voyage.last_roll = dice.to_vec();
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
                ware: ware.to_proto(),
                from,
                to: self.voyage.punts[i].position,
            });
        }
        let dice = dice
            .iter()
            .map(|&(ware, pips)| pb::DieView {
                ware: ware.to_proto(),
                pips,
            })
            .collect();
        emit(
            events,
            E::DiceRolled(pb::DiceRolled {
                roll: self.voyage.rolls,
                dice,
                moves,
            }),
        );
        for (ware, berth) in arrivals {
            emit(
                events,
                E::PuntArrived(pb::PuntArrived {
                    ware: ware.to_proto(),
                    berth: berth_to_proto(berth),
                }),
            );
        }
    }

    /// Moves punt `i` (at sea) by `spaces`; past 13 it reaches Manila and takes the next free
    /// wharf, surplus movement being lost (spec §2.5, §4.4). Returns the berth on arrival.
    fn shift_punt(&mut self, i: usize, spaces: i32) -> Option<usize> {
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
    fn dock(&mut self, i: usize) -> usize {
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

    fn punts_on_13(&self) -> Vec<usize> {
        (0..self.voyage.punts.len())
            .filter(|&i| {
                self.voyage.punts[i].at_sea() && self.voyage.punts[i].position == LAST_SPACE
            })
            .collect()
    }

    // ----- Boarding after roll 2 (spec §4.5, §8) ----------------------------------------------

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

    fn open_boarding(&mut self) -> bool {
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

    pub(super) fn board_punt(
        &mut self,
        seat: Seat,
        board: &pb::BoardPunt,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        let ware = parse_ware(board.ware, "board_punt")?;
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
        emit(
            events,
            E::PirateBoarded(pb::PirateBoarded {
                seat,
                ware: ware.to_proto(),
                slot: slot as u32,
                displaced,
            }),
        );
        self.record_boarding_decision(true);
        if !self.skip_idle_boarders() {
            self.next_step(events);
        }
        Ok(())
    }

    pub(super) fn stay_aboard(
        &mut self,
        seat: Seat,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        if !matches!(self.phase, Phase::Boarding { .. }) {
            return Err(self.wrong_phase());
        }
        emit(events, E::PirateStayed(pb::PirateStayed { seat }));
        self.record_boarding_decision(false);
        if !self.skip_idle_boarders() {
            self.next_step(events);
        }
        Ok(())
    }

    // ----- Pilots before roll 3 (spec §4.6, §9 A16) -------------------------------------------

    fn open_pilot(&mut self, large: bool) -> bool {
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
    fn pilot_options(&self, large: bool) -> Vec<Vec<(Ware, i32)>> {
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

    pub(super) fn pilot_punts(
        &mut self,
        seat: Seat,
        pilot: &pb::PilotPunts,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        let mut shifts = Vec::with_capacity(pilot.shifts.len());
        for shift in &pilot.shifts {
            shifts.push((parse_ware(shift.ware, "each pilot shift")?, shift.spaces));
        }
        let Phase::Pilot { large } = self.phase else {
            return Err(self.wrong_phase());
        };
        let rule = "§4.6";
        match (large, shifts.as_slice()) {
            (_, []) => {}
            (false, [(_, s)]) if s.abs() == 1 => {}
            (false, _) => {
                return Err(ActionError::illegal(
                    rule,
                    "the small pilot moves one punt 1 space, or nothing",
                ));
            }
            (true, [(_, s)]) if (1..=2).contains(&s.abs()) => {}
            (true, [(a, x), (b, y)]) if a != b && x.abs() == 1 && y.abs() == 1 => {}
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
                ware: w.to_proto(),
                spaces,
            })
            .collect();
        emit(
            events,
            E::PilotActed(pb::PilotActed {
                seat,
                large,
                shifts: proto_shifts,
            }),
        );
        for (i, ware, spaces) in targets {
            // A pilot's punt reaching 13 is never attacked now (spec §4.5): pirates act on rolls.
            if let Some(berth) = self.shift_punt(i, spaces) {
                emit(
                    events,
                    E::PuntArrived(pb::PuntArrived {
                        ware: ware.to_proto(),
                        berth: berth_to_proto(berth),
                    }),
                );
            }
        }
        self.next_step(events);
        Ok(())
    }

    // ----- Roll 3: plunder and the unguarded 13 (spec §4.7, §9 A13, A14) -----------------------

    fn open_plunder(&mut self, events: &mut Vec<pb::Event>) -> bool {
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
                emit(
                    events,
                    E::PuntPlundered(pb::PuntPlundered {
                        ware: punt.ware.to_proto(),
                        crew_returned: crew.clone(),
                    }),
                );
                for owner in crew {
                    self.players[owner as usize].in_hand += 1;
                }
            }
            self.phase = Phase::Plunder { pending };
            return true;
        }
        for i in on_13 {
            let ware = self.voyage.punts[i].ware.to_proto();
            if self.options.wreck_unguarded_on_13 {
                let berth = berth_to_proto(self.wreck(i));
                emit(events, E::PuntWrecked(pb::PuntWrecked { ware, berth }));
            } else {
                let berth = berth_to_proto(self.dock(i));
                emit(events, E::PuntArrived(pb::PuntArrived { ware, berth }));
            }
        }
        false
    }

    pub(super) fn direct_plunder(
        &mut self,
        seat: Seat,
        direct: &pb::DirectPlunder,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        let ware = parse_ware(direct.ware, "direct_plunder")?;
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
        emit(
            events,
            E::PlunderDirected(pb::PlunderDirected {
                seat,
                ware: ware.to_proto(),
                destination: destination as i32,
                berth: berth_to_proto(berth),
            }),
        );
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
