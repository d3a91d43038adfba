//! The spec's invariants, checked after every action in tests: the 26 tiles are conserved (B1),
//! ships hold at most their capacity and at most one per harbour per player (B4), money moves only
//! by payments and scoring (B8), markers stay on their tracks (B7.2), and the stage is consistent.

use super::{
    MediciVsStrozzi, ROUNDS, SEATS, SHIP_CAPACITIES, STARTING_MONEY, Stage, Tile, data, rules,
};

impl MediciVsStrozzi {
    /// Every tile in play, sorted: must always be the full set of 26 (spec B1).
    fn all_tiles(&self) -> Vec<Tile> {
        let mut tiles: Vec<Tile> = self
            .bag
            .iter()
            .chain(&self.lot)
            .chain(&self.discarded)
            .chain(
                self.players
                    .iter()
                    .flat_map(|p| p.ships.iter().flat_map(|s| &s.tiles)),
            )
            .copied()
            .collect();
        tiles.sort();
        tiles
    }

    /// Every invariant of the spec, or the first one broken.
    pub(super) fn invariants(&self) -> Result<(), String> {
        if !(1..=ROUNDS).contains(&self.round) {
            return Err(format!("round {} outside 1..={ROUNDS}", self.round));
        }
        if self.all_tiles() != data::full_tile_set() {
            return Err(format!(
                "the {} tiles are not conserved across bag, lot, ships and discards",
                data::TILE_COUNT
            ));
        }
        if !self.bag.is_sorted() {
            return Err("the bag must be kept sorted (its order is hidden in the RNG)".into());
        }
        if self.players.len() != SEATS as usize || self.active >= SEATS {
            return Err("there must be exactly two players".into());
        }
        for (seat, player) in self.players.iter().enumerate() {
            let capacities: Vec<u32> = player.ships.iter().map(|s| s.capacity).collect();
            if capacities != SHIP_CAPACITIES {
                return Err(format!(
                    "seat {seat}: ships {capacities:?}, expected 3, 4, 5"
                ));
            }
            let mut harbours = Vec::new();
            for ship in &player.ships {
                if ship.tiles.len() > ship.capacity as usize {
                    return Err(format!("seat {seat}: ship {} overloaded", ship.capacity));
                }
                match ship.harbour {
                    None if !ship.tiles.is_empty() => {
                        return Err(format!(
                            "seat {seat}: loaded ship {} has no harbour",
                            ship.capacity
                        ));
                    }
                    Some(_) if ship.tiles.is_empty() => {
                        return Err(format!(
                            "seat {seat}: empty ship {} is placed",
                            ship.capacity
                        ));
                    }
                    Some(h) if h >= self.board.harbour_count() => {
                        return Err(format!("seat {seat}: ship in unknown harbour {h}"));
                    }
                    Some(h) if harbours.contains(&h) => {
                        return Err(format!("seat {seat}: two ships in harbour {h}"));
                    }
                    Some(h) => harbours.push(h),
                    None => {}
                }
            }
            if player.money != STARTING_MONEY - player.paid + player.earned {
                return Err(format!(
                    "seat {seat}: money changed other than by payments and scoring"
                ));
            }
            if player.paid < 0 || player.earned < 0 {
                return Err(format!("seat {seat}: negative payment or income"));
            }
        }
        for (track, &marker) in self.board.tracks.iter().zip(&self.markers) {
            if marker.unsigned_abs() > track.spaces_per_side {
                return Err(format!(
                    "marker {marker} off a track of {} spaces",
                    track.spaces_per_side
                ));
            }
        }
        if self.markers.len() != self.board.tracks.len() {
            return Err("one marker per track".into());
        }
        let active = self.player(self.active);
        match self.stage {
            Stage::Drawing => {
                if self.lot.len() > self.draw_cap() {
                    return Err(format!("lot of {} exceeds the draw cap", self.lot.len()));
                }
                if self.lot.is_empty() && self.draw_cap() == 0 {
                    return Err("the active player cannot draw: the round should have ended".into());
                }
            }
            Stage::Deciding { price } | Stage::Loading { price, .. } => {
                if self.lot.is_empty() || self.lot.len() > rules::MAX_DRAW {
                    return Err(format!("an offered lot of {} tiles", self.lot.len()));
                }
                if self.lot.len() > active.max_free_space()
                    && matches!(self.stage, Stage::Deciding { .. })
                {
                    return Err("the offered lot is larger than any of the drawer's ships".into());
                }
                if price > self.settings.max_price {
                    return Err(format!("price {price} above the cap"));
                }
            }
            Stage::Finished => {
                if self.round != ROUNDS || !self.lot.is_empty() {
                    return Err("finished before round 3 was scored".into());
                }
            }
        }
        Ok(())
    }
}
