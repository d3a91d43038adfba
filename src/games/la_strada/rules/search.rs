//! The enumeration of every legal road (spec §11): a depth-first search from each hub behind the
//! legal-action listing and the end tests (spec §7, §9).
//!
//! It runs on every listing and at the start of every turn, so it is the engine's hot path: most
//! searches are small, so the search does no per-board preparation. It decides once per search
//! which settlements are legal targets, walks the map's neighbour table directly, keeps the path
//! in a fixed array, and allocates nothing while it walks.

use crate::games::Seat;
#[cfg(test)]
use crate::games::la_strada::RoadPlan;
use crate::games::la_strada::data::{HexId, MAP};
use crate::games::la_strada::{LaStrada, Occupant};

impl LaStrada {
    // ----- Enumeration (spec §11) -----

    /// Calls `visit(hub, tiles, target)` for every legal road of `seat` within `budget`, until it
    /// returns `true` (stop). A depth-first search from each hub over simple paths of empty hexes,
    /// turning only as the tile faces allow, within the supply and the budget; each exit into a
    /// settlement that is a legal target yields a road. Rules 1-7 of §5 hold by construction, so
    /// everything visited passes [`LaStrada::check_road`] (a test checks this). Roads come hub by
    /// hub (in [`LaStrada::hubs`] order), then by first direction 0-5, then depth first with the
    /// turns in [`crate::games::la_strada::CurveRule::allowed_turns`] order.
    pub(crate) fn for_each_road(
        &self,
        seat: Seat,
        budget: u32,
        visit: &mut dyn FnMut(HexId, &[HexId], HexId) -> bool,
    ) {
        let map = &*MAP;
        let mut search = RoadSearch {
            state: self,
            neighbours: &map.neighbours,
            targets: (0..self.sites.len())
                .map(|site| self.target_error(seat, site).is_none())
                .collect(),
            budget,
            hub: 0,
            turns: self.options.curve.allowed_turns(),
            supply: self.players[seat as usize].supply,
            path: [0; MAX_PATH],
            length: 0,
            visit,
            stopped: false,
        };
        for hub in self.hubs(seat) {
            search.hub = hub;
            for direction in 0..6 {
                if let Some(first) = map.neighbour(hub, direction) {
                    search.try_step(first, 0, (direction + 3) % 6);
                }
                if search.stopped {
                    return;
                }
            }
        }
    }

    /// Every legal road of `seat` within `budget` (the tests compare it with the listing).
    #[cfg(test)]
    pub(crate) fn legal_roads(&self, seat: Seat, budget: u32) -> Vec<RoadPlan> {
        let mut roads = Vec::new();
        self.for_each_road(seat, budget, &mut |hub, tiles, target| {
            roads.push(RoadPlan {
                hub,
                tiles: tiles.to_vec(),
                target,
            });
            false
        });
        roads
    }

    /// Whether `seat` has at least one legal road within `budget` (the end tests, spec §7, §9).
    pub(crate) fn has_any_road(&self, seat: Seat, budget: u32) -> bool {
        let mut found = false;
        self.for_each_road(seat, budget, &mut |_, _, _| {
            found = true;
            true
        });
        found
    }
}

/// The longest path the search holds: every tile costs at least 2 (spec §5 rule 7) and a
/// player owns 31 tiles (spec §1), so no budget can make a longer road; checked anyway.
const MAX_PATH: usize = 32;

/// The depth-first road search of [`LaStrada::for_each_road`].
struct RoadSearch<'a> {
    state: &'a LaStrada,
    neighbours: &'a [[Option<HexId>; 6]],
    /// Per settlement (site index): whether it is a legal target (spec §5 rule 2).
    targets: Vec<bool>,
    budget: u32,
    hub: HexId,
    turns: &'static [usize],
    /// Tiles left, minus those on the current path.
    supply: [u8; 3],
    path: [HexId; MAX_PATH],
    length: usize,
    visit: &'a mut dyn FnMut(HexId, &[HexId], HexId) -> bool,
    stopped: bool,
}

impl RoadSearch<'_> {
    /// Lays a tile on `hex` (if it is empty, new to the path, in supply and affordable), then
    /// tries every exit the tile faces allow from `back` (the edge toward the previous hex).
    fn try_step(&mut self, hex: HexId, cost: u32, back: usize) {
        let state = self.state;
        let slot = usize::from(hex);
        if state.occupant[slot] != Occupant::Empty || self.path[..self.length].contains(&hex) {
            return;
        }
        // A site has no tile kind: roads never pass through settlements (ruling A15).
        let terrain = state.terrain[slot];
        let Some(kind) = terrain.tile_index() else {
            return;
        };
        let cost = cost + terrain.cost();
        if self.supply[kind] == 0 || cost > self.budget || self.length == MAX_PATH {
            return;
        }
        self.supply[kind] -= 1;
        self.path[self.length] = hex;
        self.length += 1;
        let exits = self.neighbours[slot];
        for turn in self.turns {
            let direction = (back + turn) % 6;
            let Some(next) = exits[direction] else {
                continue;
            };
            if let Some(site) = state.site_at[usize::from(next)] {
                if next != self.hub && self.targets[usize::from(site)] {
                    self.stopped = (self.visit)(self.hub, &self.path[..self.length], next);
                }
            } else {
                self.try_step(next, cost, (direction + 3) % 6);
            }
            if self.stopped {
                break;
            }
        }
        self.length -= 1;
        self.supply[kind] += 1;
    }
}
