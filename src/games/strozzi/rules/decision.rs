//! The decision pass on a revealed card (spec A5, A7, A13 S9–S12): one clockwise pass from the
//! active player; a pirate flag takes the card at once, a +1 or goods flag is a tentative claim a
//! later pirate may override; when nobody is left to ask, the claim stands or the card is set
//! aside.

use crate::games::Seat;
use crate::games::common::{clockwise_from, left_of};
use crate::proto::strozzi::v1 as pb;

use super::super::wire;
use super::super::{CardId, Claim, FlagKind, Phase, Strozzi};

impl Strozzi {
    /// Spec A5, A7: a pirate flag takes the card at once (a standing claim's flag goes back to its
    /// owner); a +1/goods flag is a tentative claim the rest of the pass may still override.
    pub(in crate::games::strozzi) fn play_flag(
        &mut self,
        seat: Seat,
        flag: FlagKind,
        events: &mut Vec<pb::Event>,
    ) {
        let Phase::Deciding(mut decision) = std::mem::replace(&mut self.phase, Phase::Finished)
        else {
            return;
        };
        self.players[seat as usize].flags.retain(|&f| f != flag);
        events.push(wire::flag_played(seat, flag, flag != FlagKind::Pirate));
        if let Some(old) = decision.claim.take() {
            // Overridden (by a pirate, or by an overbid under S10's option): back to its owner.
            self.return_flag(old);
            events.push(wire::flag_returned(old));
        }
        if flag == FlagKind::Pirate {
            self.take_ship(Claim { seat, flag }, decision.card, events);
            return;
        }
        decision.claim = Some(Claim { seat, flag });
        decision.tentative_by.push(seat);
        decision.deciders.remove(0);
        if self.options.pirate_chance_full_circle {
            // Spec A13 S9 (option): everybody else gets a chance, going once round from the claimer.
            decision.deciders = clockwise_from(left_of(seat, self.n()), self.n())
                .filter(|&s| s != seat)
                .collect();
        }
        self.phase = Phase::Deciding(decision);
        self.advance_decision(events);
    }

    /// An overridden claim's flag goes back to its owner's hand, unused (spec A5).
    fn return_flag(&mut self, claim: Claim) {
        let hand = &mut self.players[claim.seat as usize].flags;
        hand.push(claim.flag);
        hand.sort();
    }

    /// Drops deciders who cannot do anything (no flags; after a claim, no pirate flag); when
    /// nobody is left, the pass is over: the standing claim takes the ship, or the card is set
    /// aside and the same player reveals again (spec A7).
    pub(in crate::games::strozzi) fn advance_decision(&mut self, events: &mut Vec<pb::Event>) {
        let Phase::Deciding(mut decision) = std::mem::replace(&mut self.phase, Phase::Finished)
        else {
            return;
        };
        // Whether a seat can act changes only when a claim is placed, so pruning the whole list
        // here keeps it exact (the view shows it).
        let still_able: Vec<Seat> = decision
            .deciders
            .iter()
            .copied()
            .filter(|&seat| self.can_decide(seat, &decision))
            .collect();
        decision.deciders = still_able;
        if !decision.deciders.is_empty() {
            self.phase = Phase::Deciding(decision);
            return;
        }
        match decision.claim {
            Some(claim) => self.take_ship(claim, decision.card, events),
            None => {
                events.push(wire::card_set_aside(
                    self.active,
                    self.card(decision.card),
                    decision.card,
                ));
                self.set_aside.push(decision.card);
                self.next_turn(self.active, events);
            }
        }
    }

    /// The claim stands: `claim.seat` takes the ship and must place it (spec A7, A8.1).
    fn take_ship(&mut self, claim: Claim, card: CardId, events: &mut Vec<pb::Event>) {
        events.push(wire::ship_taken(claim, self.card(card), card));
        self.phase = Phase::PlacingShip {
            taker: claim.seat,
            flag: claim.flag,
            card,
        };
    }
}
