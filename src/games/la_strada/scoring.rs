//! Scoring and the winner (spec §8, §9).

use super::LaStrada;
use crate::games::Seat;
use crate::games::common::top_group;

impl LaStrada {
    /// Gold per seat (spec §8): each settlement on its own; each of its n merchants earns
    /// max(0, base − (n − 1)) with base hamlet 2, village 3, town 4, city 5. In a 2-player game
    /// (one merchant per settlement) every merchant earns the base (spec §9).
    pub(crate) fn gold(&self) -> Vec<u32> {
        let mut gold = vec![0; self.players.len()];
        for site in &self.sites {
            let competitors = site.merchants.len() as u32;
            let each = if self.is_two_player() {
                site.kind.base_value()
            } else {
                site.kind
                    .base_value()
                    .saturating_sub(competitors.saturating_sub(1))
            };
            for seat in &site.merchants {
                gold[*seat as usize] += each;
            }
        }
        gold
    }

    /// Most gold wins; ties go to the most resources left (spec §8); a remaining tie is shared
    /// (ruling A14). Winners come in seat order (`top_group` keeps it among equals).
    pub(super) fn winners(&self, gold: &[u32]) -> Vec<Seat> {
        let seats: Vec<Seat> = (0..self.players.len() as Seat).collect();
        self.best_of(&seats, gold)
    }

    /// The winners among `seats`, by the same ranking as [`LaStrada::winners`].
    pub(super) fn best_of(&self, seats: &[Seat], gold: &[u32]) -> Vec<Seat> {
        top_group(seats, |a, b| {
            let key = |s: &Seat| (gold[*s as usize], self.players[*s as usize].resources);
            key(a).cmp(&key(b))
        })
    }
}
