//! Roads (spec §5): a player's hubs, whether a settlement is a legal target, the validation of
//! one road rule by rule (one check per rule of §5, in its order), and building it.

use super::search::MAX_ROAD_TILES;
use crate::games::la_strada::data::{HexId, MAP};
use crate::games::la_strada::wire::{check_tile_count, event, hex_to_pb};
use crate::games::la_strada::{
    EndReason, LaStrada, Occupant, Phase, PlacedTile, Road, RoadPlan, Site, TILES_OWNED,
};
use crate::games::{ActionError, Seat};
use crate::proto::la_strada::v1 as pb;

impl LaStrada {
    // ----- Hubs and targets (spec §5 rules 1-2, §9) -----

    /// Where `seat`'s roads may start (spec §5): its workshops and every settlement it is
    /// connected to (with a merchant, or in a 2-player game as a visitor).
    pub(crate) fn hubs(&self, seat: Seat) -> Vec<HexId> {
        let player = &self.players[seat as usize];
        // Room for every settlement: the search's copy gains one hub per road (`note_road_built`).
        let mut hubs = Vec::with_capacity(player.workshops.len() + self.sites.len());
        hubs.extend_from_slice(&player.workshops);
        hubs.extend(
            self.sites
                .iter()
                .filter(|site| site.is_connected(seat))
                .map(|site| site.hex),
        );
        hubs
    }

    /// Whether `hex` is one of `seat`'s hubs (spec §5 rule 1): [`LaStrada::hubs`] without
    /// listing them.
    fn is_hub(&self, seat: Seat, hex: HexId) -> bool {
        self.players[seat as usize].workshops.contains(&hex)
            || self.site_at[hex as usize]
                .is_some_and(|site| self.sites[usize::from(site)].is_connected(seat))
    }

    /// Whether the settlement `site` is a legal new target for `seat` (spec §5 rule 2, §6, §9).
    pub(in crate::games::la_strada) fn target_error(
        &self,
        seat: Seat,
        site: usize,
    ) -> Option<&'static str> {
        let site = &self.sites[site];
        if site.is_connected(seat) {
            return Some(
                "you are already connected to this settlement: a road must reach a new one",
            );
        }
        self.merchant_error(seat, site)
    }

    /// Whether `seat` can connect to `site` as far as merchants go (spec §5 rule 2, §9): it needs
    /// one left to place, unless in a 2-player game the opponent's merchant is already there.
    pub(in crate::games::la_strada) fn merchant_error(
        &self,
        seat: Seat,
        site: &Site,
    ) -> Option<&'static str> {
        let merchant_needed = !self.is_two_player() || site.merchants.is_empty();
        if merchant_needed && self.players[seat as usize].merchants_left == 0 {
            return Some("you have no merchant left to place on the settlement");
        }
        None
    }

    // ----- Validation of one road (spec §5) -----

    /// Checks a road `seat` wants to build, rule by rule in the order of spec §5, with `budget`
    /// resources. Returns its cost and the direction of each of its steps.
    pub(in crate::games::la_strada) fn check_road(
        &self,
        seat: Seat,
        plan: &RoadPlan,
        budget: u32,
    ) -> Result<CheckedRoad, ActionError> {
        // Rule 1: the start is a hub.
        if !self.is_hub(seat, plan.hub) {
            return Err(ActionError::illegal(
                "§5.1",
                "a road must start at your workshop or at a settlement you are connected to",
            ));
        }
        // Ruling A4: no zero-tile connections.
        if plan.tiles.is_empty() {
            return Err(ActionError::illegal(
                "§12 A4",
                "a road needs at least one tile",
            ));
        }
        // Rule 2: the target is a settlement, not the hub, new for the player, merchant available.
        let Some(site) = self.site_at[plan.target as usize] else {
            let what = match self.occupant[plan.target as usize] {
                Occupant::Workshop(_) => "a road may never end at a workshop",
                _ => "a road must end at a settlement",
            };
            return Err(ActionError::illegal("§5.2", what));
        };
        if plan.target == plan.hub {
            return Err(ActionError::illegal(
                "§5.2",
                "a road cannot end at the hub it starts from",
            ));
        }
        if let Some(message) = self.target_error(seat, site as usize) {
            return Err(ActionError::illegal("§5.2", message));
        }
        // Rule 3: every tile hex is empty, and no hex is used twice.
        for (index, tile) in plan.tiles.iter().enumerate() {
            let message = if self.site_at[*tile as usize].is_some() {
                Some("a road cannot pass through a settlement (ruling A15)")
            } else {
                match self.occupant[*tile as usize] {
                    Occupant::Workshop(_) => Some("a road cannot pass through a workshop"),
                    Occupant::Tile(_) => {
                        Some("a hex already holds a road tile: roads never cross or merge")
                    }
                    Occupant::Empty => None,
                }
            };
            if let Some(message) = message {
                return Err(ActionError::illegal(
                    "§5.3",
                    format!("tile {index}: {message}"),
                ));
            }
            if plan.tiles[..index].contains(tile) {
                return Err(ActionError::illegal(
                    "§5.3",
                    format!("tile {index}: the road visits a hex twice"),
                ));
            }
        }
        // Rule 4: continuity. Each step's direction is kept for rule 5 and for laying the tiles.
        // RoadPlan::from_pb refuses these already; checked again so that `directions` holds
        // every step of any plan.
        check_tile_count(plan.tiles.len())?;
        let steps = plan.tiles.len() + 2;
        let mut directions = [0u8; MAX_ROAD_TILES + 1];
        for (index, slot) in directions[..steps - 1].iter_mut().enumerate() {
            if let Some(direction) = MAP.direction_between(plan.step(index), plan.step(index + 1)) {
                *slot = direction as u8;
            } else {
                return Err(ActionError::illegal(
                    "§5.4",
                    format!(
                        "the road breaks between step {index} and step {}: hexes not adjacent",
                        index + 1
                    ),
                ));
            }
        }
        // Rule 5: tile geometry.
        for index in 0..steps - 2 {
            let (edge_in, edge_out) = tile_edges(&directions, index);
            if !self
                .options
                .curve
                .allowed_turns()
                .contains(&((edge_out + 6 - edge_in) % 6))
            {
                return Err(ActionError::illegal(
                    "§5.5",
                    format!(
                        "tile {index}: no tile face joins edges {edge_in} and {edge_out} ({:?} curves)",
                        self.options.curve
                    ),
                ));
            }
        }
        // Rule 6: terrain supply.
        let mut needed = [0u32; 3];
        let mut cost = 0;
        for tile in &plan.tiles {
            let terrain = self.terrain[*tile as usize];
            if let Some(index) = terrain.tile_index() {
                needed[index] += 1;
            }
            cost += terrain.cost();
        }
        let supply = &self.players[seat as usize].supply;
        for (index, name) in ["plains", "forest", "hill"].iter().enumerate() {
            if needed[index] > u32::from(supply[index]) {
                return Err(ActionError::illegal(
                    "§5.6",
                    format!(
                        "the road needs {} {name} tiles but you have {} left",
                        needed[index], supply[index]
                    ),
                ));
            }
        }
        // Rule 7: cost.
        if cost > budget {
            return Err(ActionError::illegal(
                "§5.7",
                format!("the road costs {cost} but you have {budget} resources"),
            ));
        }
        Ok(CheckedRoad { cost, directions })
    }

    /// Builds `plan` for `seat` once [`LaStrada::check_road`] accepts it: tiles laid with their
    /// orientation fixed by the path, resources and tiles paid, the merchant placed (spec §5, §9).
    pub(in crate::games::la_strada) fn build_road(
        &mut self,
        seat: Seat,
        plan: RoadPlan,
    ) -> Result<Vec<pb::Event>, ActionError> {
        if !matches!(self.phase, Phase::Playing { .. }) {
            return Err(ActionError::illegal(
                "§4",
                "roads are built only during play, after workshop placement",
            ));
        }
        let CheckedRoad { cost, directions } =
            self.check_road(seat, &plan, self.players[seat as usize].resources)?;
        // Validated: apply.
        let mut tiles = Vec::with_capacity(plan.tiles.len());
        for index in 0..plan.tiles.len() {
            let hex = plan.step(index + 1);
            let (edge_in, edge_out) = tile_edges(&directions, index);
            let tile = PlacedTile {
                owner: seat,
                edge_in: edge_in as u8,
                edge_out: edge_out as u8,
            };
            self.occupant[hex as usize] = Occupant::Tile(tile);
            let terrain = self.terrain[hex as usize];
            if let Some(index) = terrain.tile_index() {
                self.players[seat as usize].supply[index] -= 1;
            }
            tiles.push(tile.to_pb(hex, terrain));
        }
        let site_index = self.site_at[plan.target as usize].unwrap_or_default() as usize;
        let two_player = self.is_two_player();
        let site = &mut self.sites[site_index];
        // Spec §5 / §9: a merchant goes on the target, except in a 2-player game when the
        // opponent's merchant is already there (then the player connects as a visitor).
        let merchant_placed = !two_player || site.merchants.is_empty();
        if merchant_placed {
            site.merchants.push(seat);
        } else {
            site.visitors.push(seat);
        }
        let target_kind = site.kind.to_pb();
        let player = &mut self.players[seat as usize];
        if merchant_placed {
            player.merchants_left -= 1;
        }
        player.resources -= cost;
        let resources = player.resources;
        self.note_road_built(seat, &plan.tiles, site_index);
        self.built_this_turn = true;
        self.roads.push(Road {
            owner: seat,
            hub: plan.hub,
            tiles: plan.tiles,
            target: plan.target,
        });
        let mut events = vec![event(pb::event::Kind::RoadBuilt(pb::RoadBuilt {
            seat,
            hub: Some(hex_to_pb(plan.hub)),
            tiles,
            target: Some(hex_to_pb(plan.target)),
            target_kind: target_kind as i32,
            merchant_placed,
            cost,
            resources,
        }))];
        // Spec §9: the 2-player game ends at once when every settlement holds a merchant.
        if two_player && self.sites.iter().all(|s| !s.merchants.is_empty()) {
            self.finish(EndReason::AllSettlementsOccupied, None, &mut events);
        }
        Ok(events)
    }
}

const _: () = assert!(
    MAX_ROAD_TILES >= TILES_OWNED,
    "a road's steps must fit `directions`"
);

/// A road [`LaStrada::check_road`] accepted.
pub(in crate::games::la_strada) struct CheckedRoad {
    /// What it costs (spec §5 rule 7).
    pub cost: u32,
    /// `directions[i]`: the direction from step `i` of the road to step `i + 1` (step 0 is the
    /// hub, the last step the target), as [`crate::games::la_strada::data::MapData::neighbours`]
    /// numbers them.
    directions: [u8; MAX_ROAD_TILES + 1],
}

/// The edges of tile `index` of a road (its step `index + 1`) from the road's step directions:
/// the edge back toward the previous step and the edge on toward the next (spec §5 rule 5),
/// as [`super::edges`] gives them.
fn tile_edges(directions: &[u8; MAX_ROAD_TILES + 1], index: usize) -> (usize, usize) {
    let edge_in = (usize::from(directions[index]) + 3) % 6;
    (edge_in, usize::from(directions[index + 1]))
}
