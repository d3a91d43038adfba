//! Scoring (spec A10, A12): ships and tracks every round end, progress majorities and the winner
//! at the end of the game. All amounts are multiples of 5 (spec A14).

use crate::games::Seat;
use crate::games::common::{rank_groups, top_group};
use crate::proto::strozzi::v1 as pb;

use super::wire;
use super::{BonusPayment, Category, City, RoundEnd, Strozzi};

/// Coins for the 1st, 2nd and 3rd ship of a port and marker of a track (spec A10).
pub const ROUND_PLACES: [u32; 3] = [15, 10, 5];
/// Coins for the 1st, 2nd and 3rd progress total of a category (spec A12.1).
pub const PROGRESS_PLACES: [u32; 3] = [30, 20, 10];

impl Strozzi {
    /// Spec A10. Ships: the three fastest of each port (the order was fixed on arrival, so there
    /// are no ties). Tracks: the three best markers off the starting space (higher space first,
    /// leftmost within a space). Bonus spaces pay every marker on them on top of that (S6: every
    /// round, or with the option only in the round the marker arrived). Missing places are simply
    /// not awarded (S5).
    pub(super) fn score_round(&mut self, reason: RoundEnd) -> pb::Event {
        let mut payouts = Vec::new();
        for port in City::PORTS {
            for (place, berth) in self.ports[port.index()]
                .iter()
                .take(ROUND_PLACES.len())
                .enumerate()
            {
                payouts.push(payout(
                    berth.owner,
                    pb::PayoutKind::Ship,
                    port,
                    place as u32 + 1,
                    ROUND_PLACES[place],
                ));
            }
        }
        for city in City::ALL {
            let ranked = self.track_order(city).filter(|&(position, _)| position > 0);
            for (place, (_, seat)) in ranked.take(ROUND_PLACES.len()).enumerate() {
                payouts.push(payout(
                    seat,
                    pb::PayoutKind::Track,
                    city,
                    place as u32 + 1,
                    ROUND_PLACES[place],
                ));
            }
        }
        for city in City::ALL {
            let geometry = &self.catalogue.tracks[city.index()];
            for (position, seat) in self.track_order(city) {
                let Some(coins) = geometry.bonus_at(position) else {
                    continue;
                };
                let pays = match self.options.bonus_payment {
                    BonusPayment::EveryRound => true,
                    BonusPayment::OnArrival => {
                        self.arrived_round[seat as usize][city.index()] == self.round
                    }
                };
                if pays {
                    payouts.push(payout(
                        seat,
                        pb::PayoutKind::BonusSpace,
                        city,
                        u32::from(position),
                        coins,
                    ));
                }
            }
        }
        let mut earned = vec![0i64; self.players.len()];
        for p in &payouts {
            earned[p.seat as usize] += i64::from(p.coins);
        }
        for (player, amount) in self.players.iter_mut().zip(&earned) {
            player.money += amount;
        }
        let money = self.players.iter().map(|p| p.money).collect::<Vec<_>>();
        wire::round_scored(
            self.round,
            reason,
            payouts,
            &earned,
            &money,
            self.options.hidden_money,
        )
    }

    /// Each seat's total tile value in `category` (spec A12.1).
    pub(super) fn progress_totals(&self, category: Category) -> Vec<u32> {
        self.players
            .iter()
            .map(|player| {
                player
                    .tiles
                    .iter()
                    .map(|&t| self.tile(t))
                    .filter(|tile| tile.category == category)
                    .map(|tile| u32::from(tile.value))
                    .sum()
            })
            .collect()
    }

    /// Spec A12: progress majorities 30/20/10 per category (ties to the better Florence marker;
    /// S4: a total of 0 is not ranked unless `rank_zero_progress_totals`), then the winner: most
    /// money, ties to the better Florence marker.
    pub(super) fn score_game(&mut self) -> pb::Event {
        let florence = self.florence_ranks();
        let seats: Vec<Seat> = (0..self.n()).collect();
        let mut awards = Vec::new();
        for category in Category::ALL {
            let totals = self.progress_totals(category);
            let ranked: Vec<Seat> = seats
                .iter()
                .copied()
                .filter(|&s| totals[s as usize] > 0 || self.options.rank_zero_progress_totals)
                .collect();
            let order = rank_groups(&ranked, |&a, &b| {
                totals[a as usize]
                    .cmp(&totals[b as usize])
                    .then(florence[b as usize].cmp(&florence[a as usize]))
            });
            for (place, seat) in order
                .into_iter()
                .flatten()
                .take(PROGRESS_PLACES.len())
                .enumerate()
            {
                let coins = PROGRESS_PLACES[place];
                self.players[seat as usize].money += i64::from(coins);
                awards.push(pb::ProgressAward {
                    category: category.to_pb() as i32,
                    seat,
                    total: totals[seat as usize],
                    place: place as u32 + 1,
                    coins,
                });
            }
        }
        let money: Vec<i64> = self.players.iter().map(|p| p.money).collect();
        self.winners = self.best_of(&seats);
        wire::game_ended(awards, money, self.winners.clone())
    }

    /// The winner among `seats` (spec A12.2): the most money, equal money to the better Florence
    /// marker, so always exactly one (none when `seats` is empty).
    pub(super) fn best_of(&self, seats: &[Seat]) -> Vec<Seat> {
        let florence = self.florence_ranks();
        let money = |seat: Seat| self.players[seat as usize].money;
        top_group(seats, |&a, &b| {
            money(a)
                .cmp(&money(b))
                .then(florence[b as usize].cmp(&florence[a as usize]))
        })
    }
}

fn payout(seat: Seat, kind: pb::PayoutKind, city: City, place: u32, coins: u32) -> pb::Payout {
    pb::Payout {
        seat,
        kind: kind as i32,
        city: city.to_pb() as i32,
        place,
        coins,
    }
}
