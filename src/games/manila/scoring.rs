//! The end of the game and final scoring (spec §6, §9 A12, A17).

use super::data::*;
use super::wire::*;
use super::*;
use crate::games::common::top_group;
use crate::proto::manila::v1 as pb;
use pb::event::Kind as E;

impl Manila {
    /// Fortune at the end (spec §6): cash + every share at its value − 15 per mortgaged share.
    pub(super) fn score(&self, seat: Seat) -> i64 {
        let player = &self.players[seat as usize];
        let holdings = player.holdings();
        let shares: u64 = Ware::ALL
            .iter()
            .map(|w| u64::from(holdings[w.index()]) * self.value(*w))
            .sum();
        player.cash as i64 + shares as i64
            - (REDEMPTION_PRICE * u64::from(player.mortgaged_count())) as i64
    }

    /// The game ends once a ware reaches 30, after the whole voyage is paid (spec §6, §9 A17).
    /// Highest fortune wins; ties share the win unless the cash tie-breaker is chosen (§9 A12).
    pub(super) fn end_game(&mut self, events: &mut Vec<pb::Event>) {
        let scores: Vec<i64> = (0..self.players_count).map(|s| self.score(s)).collect();
        let seats: Vec<Seat> = (0..self.players_count).collect();
        let winners = self.best_of(&seats);
        events.push(event(E::GameEnded(pb::GameEnded {
            scores: scores.clone(),
            winners: winners.clone(),
        })));
        self.result = Some((scores, winners));
        self.phase = Phase::Over;
    }
}

impl Manila {
    /// The winners among `seats` (spec §6, §9 A12): the highest score; ties share the win unless
    /// the cash tie-breaker is chosen (most cash among the tied; still tied players share).
    pub(super) fn best_of(&self, seats: &[Seat]) -> Vec<Seat> {
        let score = |s: &Seat| self.score(*s);
        let mut winners = top_group(seats, |a, b| score(a).cmp(&score(b)));
        if self.options.tie_break_most_cash {
            let cash = |s: &Seat| self.players[*s as usize].cash;
            winners = top_group(&winners, |a, b| cash(a).cmp(&cash(b)));
        }
        winners
    }
}
