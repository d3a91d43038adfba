//! The rules of a voyage, one file per spec section, all as methods on [`Manila`]:
//! - `auction.rs`: the auction for harbour master and the start of a voyage (§4.1, §9 A2, A3);
//! - `harbour_master.rs`: the share purchase, loading and start spaces (§4.2, §2.5, §9 A1, A15);
//! - `schedule.rs`: the order of placement rounds, rolls and decisions in a voyage (§4.3);
//! - `placement.rs`: placing accomplices, costs and stowaways (§4.3, §5, §9 A7, A8, A9, A18);
//! - `dice.rs`: rolls, movement and berths (§4.4, §9 A4, A5);
//! - `boarding.rs`: pirates boarding after roll 2 and the pirate variant (§4.5, §8);
//! - `pilots.rs`: the pilots before roll 3 (§4.6, §9 A16);
//! - `plunder.rs`: roll 3's plunder and the unguarded 13 (§4.7, §9 A13, A14);
//! - `settlement.rs`: payouts and the value increase (§4.8, §4.9);
//! - `money.rs`: mortgages, redemptions and forced mortgages (§5, §9 A10, A11).
//!
//! This file holds what spans them: the rule governing the current decision and the listing of
//! every legal move.

mod auction;
mod boarding;
mod dice;
mod harbour_master;
mod money;
mod pilots;
mod placement;
mod plunder;
mod schedule;
mod settlement;

pub(super) use schedule::Step;

use harbour_master::start_triples;

use crate::games::manila::data::*;
use crate::games::manila::wire::*;
use crate::games::manila::*;
use crate::games::{ActionError, LegalAction, Seat};
use crate::proto::manila::v1 as pb;
use pb::action::Kind as A;

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

    /// The refusal of a move the current phase does not take, naming what the game waits for.
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

    /// The default action of the seat to act (see `Engine::default_action`; listed in
    /// `docs/rules/manila.md` §11): the most passive legal choice of each decision. None of them
    /// costs money, so a default never forces a mortgage (§5) and never depends on a secret.
    pub(super) fn default_choice(&self) -> Option<pb::Action> {
        let kind = match &self.phase {
            // Passing is always allowed and final (§4.1).
            Phase::Auction(_) => A::PassAuction(pb::PassAuction {}),
            // The purchase is optional (§4.2 a).
            Phase::Purchase => A::SkipPurchase(pb::SkipPurchase {}),
            // Loading has no passive choice (§4.2 b, A1): the first three wares in ware order,
            // Ginseng, Nutmeg and Silk, evenly on space 3 each (3 + 3 + 3 = 9).
            Phase::Loading => A::LoadPunts(pb::LoadPunts {
                punts: [Ware::Ginseng, Ware::Nutmeg, Ware::Silk]
                    .into_iter()
                    .map(|ware| pb::PuntStart {
                        ware: ware.to_pb(),
                        start: START_SUM / 3,
                    })
                    .collect(),
            }),
            // Declining ends the seat's placements for the voyage (§4.3).
            Phase::Placement { .. } => A::DeclinePlacement(pb::DeclinePlacement {}),
            // A pirate may always stay aboard (§4.5).
            Phase::Boarding { .. } => A::StayAboard(pb::StayAboard {}),
            // An empty move list does nothing (§4.6, A16).
            Phase::Pilot { .. } => A::PilotPunts(pb::PilotPunts { shifts: Vec::new() }),
            // The first plundered punt in ware order goes on to the harbour (§4.7), where an
            // unguarded punt would have gone (A13); the shipyard is the pirates' choice.
            Phase::Plunder { pending } => A::DirectPlunder(pb::DirectPlunder {
                ware: pending.first()?.to_pb(),
                destination: pb::PlunderDestination::Harbour as i32,
            }),
            Phase::Over => return None,
        };
        Some(action(kind))
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
                        action: action(A::Bid(pb::Bid { price: min })),
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
                            ware: ware.to_pb(),
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
                                ware: ware.to_pb(),
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
                        legal.push(LegalAction::Exact(action(A::PlaceAccomplice(space_to_pb(
                            space,
                        )))));
                    }
                }
                legal.push(LegalAction::Exact(action(A::DeclinePlacement(
                    pb::DeclinePlacement {},
                ))));
            }
            Phase::Boarding { boarded, .. } => {
                for (ware, displace) in self.boarding_options(boarded) {
                    let board = pb::BoardPunt {
                        ware: ware.to_pb(),
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
                            ware: ware.to_pb(),
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
                            ware: ware.to_pb(),
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
}
