//! Round-end scoring (spec B7): harbour majorities, marker movement, monopoly income.

use super::{Goods, MEDICI, MarkerMovement, MediciVsStrozzi, RoundEnd, SEATS, STROZZI, TrackSpec};
use crate::games::Seat;
use crate::proto::medici_vs_strozzi::v1 as pb;

/// The higher cargo value in a harbour receives this much (B7.1).
pub const HARBOUR_PAYOUT: u32 = 20;
/// Income per marker on a player's side of the centre (B7.3: per track, not per space).
pub const INCOME_PER_MARKER: u32 = 10;
/// A tile of value 0 moves its marker two spaces; any other tile one (B7.2).
const ZERO_VALUE_STEPS: u32 = 2;
const OTHER_STEPS: u32 = 1;

/// The direction in which `seat` pushes markers: Medici toward negative positions.
fn direction(seat: Seat) -> i32 {
    if seat == MEDICI { -1 } else { 1 }
}

/// The marker after Medici pushes `medici_steps` and Strozzi `strozzi_steps` (M2). Steps beyond
/// a track end are lost.
pub fn move_marker(
    rule: MarkerMovement,
    track: &TrackSpec,
    from: i32,
    medici_steps: u32,
    strozzi_steps: u32,
) -> i32 {
    let end = track.end();
    let medici = direction(MEDICI) * i32::try_from(medici_steps).unwrap_or(i32::MAX);
    let strozzi = direction(STROZZI) * i32::try_from(strozzi_steps).unwrap_or(i32::MAX);
    match rule {
        MarkerMovement::Net => from
            .saturating_add(medici.saturating_add(strozzi))
            .clamp(-end, end),
        MarkerMovement::Sequential => {
            let after_medici = from.saturating_add(medici).clamp(-end, end);
            after_medici.saturating_add(strozzi).clamp(-end, end)
        }
    }
}

/// What a marker at `position` pays `seat`: nothing unless it stands on that seat's side (the
/// centre pays nobody, M12); otherwise 10 plus the bonus printed on its space (paid every round,
/// M11).
pub fn marker_income(track: &TrackSpec, position: i32, seat: Seat) -> Option<u32> {
    (position.signum() == direction(seat)).then(|| track.bonus_at(position.unsigned_abs()))
}

impl MediciVsStrozzi {
    /// The total tile value of `seat`'s ship in `harbour` (0 without a ship there, M10; gold 5).
    fn cargo_value(&self, seat: Seat, harbour: u32) -> u32 {
        self.player(seat)
            .ship_in(harbour)
            .map_or(0, |ship| ship.tiles.iter().map(|t| t.value).sum())
    }

    /// How far `seat`'s ship in `harbour` pushes the marker of `goods` (B7.2). Gold has no track.
    fn marker_steps(&self, seat: Seat, harbour: u32, goods: Goods) -> u32 {
        self.player(seat).ship_in(harbour).map_or(0, |ship| {
            ship.tiles
                .iter()
                .filter(|t| t.goods == goods)
                .map(|t| {
                    if t.value == 0 {
                        ZERO_VALUE_STEPS
                    } else {
                        OTHER_STEPS
                    }
                })
                .sum()
        })
    }

    /// Scores the round and pays everybody (B7). Markers are never reset (B8).
    pub(super) fn score_round(&mut self, reason: RoundEnd) -> pb::RoundScored {
        // 1. Harbour majorities: the strictly higher cargo value gets 20; ties pay nobody (M10).
        let mut harbours = Vec::new();
        for harbour in 0..self.board.harbour_count() {
            let values: Vec<u32> = (0..SEATS)
                .map(|seat| self.cargo_value(seat, harbour))
                .collect();
            let winner = match values[MEDICI as usize].cmp(&values[STROZZI as usize]) {
                std::cmp::Ordering::Greater => Some(MEDICI),
                std::cmp::Ordering::Less => Some(STROZZI),
                std::cmp::Ordering::Equal => None,
            };
            if let Some(seat) = winner {
                self.players[seat as usize].receive(HARBOUR_PAYOUT);
            }
            harbours.push(pb::HarbourScored {
                harbour,
                cargo_value: values,
                winner,
                payout: if winner.is_some() { HARBOUR_PAYOUT } else { 0 },
            });
        }

        // 2. Markers, moved per track by the goods in that track's harbour (M2).
        let mut markers = Vec::new();
        for (index, track) in self.board.tracks.iter().enumerate() {
            let medici_steps = self.marker_steps(MEDICI, track.harbour, track.goods);
            let strozzi_steps = self.marker_steps(STROZZI, track.harbour, track.goods);
            let from = self.markers[index];
            let to = move_marker(
                self.settings.marker_movement,
                track,
                from,
                medici_steps,
                strozzi_steps,
            );
            if to != from {
                markers.push(pb::MarkerMoved {
                    harbour: track.harbour,
                    goods: track.goods.to_pb() as i32,
                    from_position: from,
                    to_position: to,
                });
            }
            self.markers[index] = to;
        }

        // 3. Monopoly income: 10 per marker on your side plus the bonus of its space.
        let mut income = Vec::new();
        for seat in 0..SEATS {
            let paying: Vec<u32> = self
                .board
                .tracks
                .iter()
                .zip(&self.markers)
                .filter_map(|(track, &position)| marker_income(track, position, seat))
                .collect();
            let count = paying.len() as u32;
            let bonus: u32 = paying.iter().sum();
            let total = count * INCOME_PER_MARKER + bonus;
            self.players[seat as usize].receive(total);
            income.push(pb::MonopolyIncome {
                seat,
                markers: count,
                bonus,
                total,
            });
        }

        pb::RoundScored {
            round: self.round,
            reason: reason.to_pb() as i32,
            harbours,
            markers,
            income,
            money: self.players.iter().map(|p| p.money).collect(),
        }
    }
}
