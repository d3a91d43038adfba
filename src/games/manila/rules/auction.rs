//! The auction for harbour master (spec §4.1, §9 A2, A3) and the start of each voyage.

use crate::games::common::seats::left_of;
use crate::games::manila::wire::*;
use crate::games::manila::*;
use crate::games::{ActionError, Seat};
use crate::proto::manila::v1 as pb;
use pb::event::Kind as E;

impl Manila {
    /// Starts the next voyage with the auction opened by `opener` (spec §4.1, §4.9).
    pub(in crate::games::manila) fn start_voyage(
        &mut self,
        opener: Seat,
        events: &mut Vec<pb::Event>,
    ) {
        let number = self.voyage.number + 1;
        // The dice rolled stay on view until the next voyage's first roll: they are public (spec
        // §9 A6), and the move that rolled the last of them also settled the voyage.
        let dice = std::mem::take(&mut self.voyage.dice);
        self.voyage = Voyage::new(number, self.values);
        self.voyage.dice = dice;
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
        events.push(event(E::VoyageStarted(pb::VoyageStarted {
            voyage: number,
            opener,
        })));
    }

    /// A bid for harbour master: more than the high bid, at most what the bidder can raise
    /// (spec §4.1).
    pub(in crate::games::manila) fn bid(
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
        events.push(event(E::BidPlaced(pb::BidPlaced { seat, amount })));
        self.continue_auction(seat, events);
        Ok(())
    }

    /// Passing in the auction, final for this auction (spec §4.1).
    pub(in crate::games::manila) fn pass_auction(
        &mut self,
        seat: Seat,
        events: &mut Vec<pb::Event>,
    ) -> Result<(), ActionError> {
        let Phase::Auction(auction) = &mut self.phase else {
            return Err(self.wrong_phase());
        };
        auction.passed[seat as usize] = true;
        events.push(event(E::AuctionPassed(pb::AuctionPassed { seat })));
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
        events.push(event(E::HarbourMasterChosen(pb::HarbourMasterChosen {
            seat,
            price,
            uncontested,
        })));
        self.pay(seat, price, events);
        self.voyage.harbour_master = Some(seat);
        self.phase = Phase::Purchase;
    }
}
