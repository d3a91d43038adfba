//! The round loop (spec A6.4, A7, A9, A11): revealing the next card, ending a round when every
//! flag is used or the deck is out, and starting the next one (reshuffle, removal, start player).

use crate::games::Seat;
use crate::games::common::clockwise_from;
use crate::proto::strozzi::v1 as pb;

use super::super::wire;
use super::super::{
    CardId, City, Decision, FlagKind, Phase, ROUNDS, RoundEnd, RoundStartRule, Strozzi,
    removed_cards,
};

impl Strozzi {
    /// The top of the round loop (spec A7, A9): end the round when every flag is used or the deck
    /// is out; otherwise the first player clockwise from `from` who still holds a flag (S12) becomes
    /// active and reveals the top card.
    pub(in crate::games::strozzi) fn next_turn(&mut self, from: Seat, events: &mut Vec<pb::Event>) {
        if self.players.iter().all(|p| p.flags.is_empty()) {
            return self.end_round(RoundEnd::FlagsUsed, events);
        }
        let Some(card) = self.deck.last().copied() else {
            return self.end_round(RoundEnd::DeckEmpty, events);
        };
        let n = self.n();
        let Some(active) =
            clockwise_from(from, n).find(|&s| !self.players[s as usize].flags.is_empty())
        else {
            return;
        };
        self.deck.pop();
        self.active = active;
        events.push(wire::card_revealed(
            active,
            self.card(card),
            card,
            self.deck.len(),
        ));
        // One clockwise pass starting with the active player; the right-hand neighbour is last.
        let decision = Decision {
            card,
            claim: None,
            deciders: clockwise_from(active, n).collect(),
            tentative_by: Vec::new(),
        };
        self.phase = Phase::Deciding(decision);
        self.advance_decision(events);
    }

    /// Spec A6.4 and A11: flags back, ports cleared, all 29 cards reshuffled, the same number
    /// removed face down, and the start player reveals.
    pub(in crate::games::strozzi) fn start_round(
        &mut self,
        start: Seat,
        events: &mut Vec<pb::Event>,
    ) {
        for player in &mut self.players {
            player.flags = FlagKind::ALL.to_vec();
        }
        for column in &mut self.ports {
            column.clear();
        }
        self.arrivals = 0;
        self.set_aside.clear();
        let mut cards: Vec<CardId> = (0..self.catalogue.cards.len() as u8).collect();
        self.rng.shuffle(&mut cards);
        self.deck = cards.split_off(removed_cards(self.n()));
        self.removed = cards;
        self.round_start_seat = start;
        events.push(wire::round_started(
            self.round,
            start,
            self.deck.len(),
            self.removed.len(),
        ));
        self.next_turn(start, events);
    }

    /// Spec A9–A12: score the round; start the next one, or finish the game after round 3.
    pub(in crate::games::strozzi) fn end_round(
        &mut self,
        reason: RoundEnd,
        events: &mut Vec<pb::Event>,
    ) {
        events.push(self.score_round(reason));
        if self.round == ROUNDS {
            self.phase = Phase::Finished;
            events.push(self.score_game());
            return;
        }
        // Spec A11 (S3): the best Florence marker starts; with the option, nobody having moved in
        // Florence keeps the previous start player.
        let nobody_moved = self.tracks[City::Florence.index()][0].len() == self.n() as usize;
        let start = match (self.options.round_start_rule, nobody_moved) {
            (RoundStartRule::KeepWhileNobodyMoved, true) => self.round_start_seat,
            _ => self
                .track_order(City::Florence)
                .next()
                .map_or(self.round_start_seat, |(_, seat)| seat),
        };
        self.round += 1;
        self.start_round(start, events);
    }
}
