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
    pub(crate) fn for_each_road<F>(&self, seat: Seat, budget: u32, visit: F)
    where
        F: FnMut(HexId, &[HexId], HexId) -> bool,
    {
        let map = &*MAP;
        // One pass over the settlements: the connected ones are hubs, the others targets where
        // a merchant can go (spec §5 rules 1-2).
        let mut connected = SiteSet::default();
        let mut targets = SiteSet::default();
        for (index, site) in self.sites.iter().enumerate() {
            if site.is_connected(seat) {
                connected.insert(index);
            } else if self.merchant_error(seat, site).is_none() {
                targets.insert(index);
            }
        }
        let mut search = RoadSearch {
            state: self,
            neighbours: &map.neighbours,
            targets,
            budget,
            hub: 0,
            turns: self.options.curve.allowed_turns(),
            supply: self.players[seat as usize].supply,
            path: [0; MAX_ROAD_TILES],
            length: 0,
            visit,
            stopped: false,
        };
        // The hubs in [`LaStrada::hubs`] order, without collecting them.
        let workshops = self.players[seat as usize].workshops.iter().copied();
        let settlements = (0..self.sites.len())
            .filter(|index| connected.contains(*index))
            .map(|index| self.sites[index].hex);
        for hub in workshops.chain(settlements) {
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
        self.for_each_road(seat, budget, |hub, tiles, target| {
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
        self.for_each_road(seat, budget, |_, _, _| {
            found = true;
            true
        });
        found
    }
}

/// The longest path the search holds: every tile costs at least 2 (spec §5 rule 7) and a
/// player owns 31 tiles (spec §1), so no budget can make a longer road; checked anyway.
pub(in crate::games::la_strada) const MAX_ROAD_TILES: usize = 32;

/// A set of settlements (site indexes, which are `u8`: spec §10's map data holds at most 256).
#[derive(Clone, Copy, Default)]
struct SiteSet([u64; 4]);

impl SiteSet {
    fn insert(&mut self, site: usize) {
        self.0[site / 64] |= 1 << (site % 64);
    }

    fn contains(&self, site: usize) -> bool {
        self.0[site / 64] & (1 << (site % 64)) != 0
    }
}

/// The depth-first road search of [`LaStrada::for_each_road`]. Generic over the visitor so that
/// counting or testing for any road compiles to a tight loop (it runs at every random-play step).
struct RoadSearch<'a, F> {
    state: &'a LaStrada,
    neighbours: &'a [[Option<HexId>; 6]],
    /// The settlements that are legal targets (spec §5 rule 2).
    targets: SiteSet,
    budget: u32,
    hub: HexId,
    turns: &'static [usize],
    /// Tiles left, minus those on the current path.
    supply: [u8; 3],
    path: [HexId; MAX_ROAD_TILES],
    length: usize,
    visit: F,
    stopped: bool,
}

impl<F: FnMut(HexId, &[HexId], HexId) -> bool> RoadSearch<'_, F> {
    /// Lays a tile on `hex` if it may take the next tile of the road, then goes on from there.
    fn try_step(&mut self, hex: HexId, cost: u32, back: usize) {
        if let Some((kind, cost)) = self.tile_on(hex, cost) {
            self.extend(hex, kind, cost, back);
        }
    }

    /// Whether `hex` may take the next tile of a road that has cost `cost` so far: it is empty and
    /// not a settlement (ruling A15), not already on the path, a tile of its terrain is in supply,
    /// and the road stays affordable. Returns the tile kind and the road's cost with it. Checked
    /// before descending, since most hexes the search looks at are refused here.
    #[inline(always)]
    fn tile_on(&self, hex: HexId, cost: u32) -> Option<(usize, u32)> {
        let state = self.state;
        let slot = usize::from(hex);
        if state.occupant[slot] != Occupant::Empty || self.path[..self.length].contains(&hex) {
            return None;
        }
        // A site has no tile kind: roads never pass through settlements (ruling A15).
        let terrain = state.terrain[slot];
        let kind = terrain.tile_index()?;
        let cost = cost + terrain.cost();
        (self.supply[kind] > 0 && cost <= self.budget && self.length < MAX_ROAD_TILES)
            .then_some((kind, cost))
    }

    /// Lays a tile of `kind` on `hex` (accepted by [`RoadSearch::tile_on`]), then tries every exit
    /// the tile faces allow from `back` (the edge toward the previous hex).
    fn extend(&mut self, hex: HexId, kind: usize, cost: u32, back: usize) {
        let state = self.state;
        self.supply[kind] -= 1;
        self.path[self.length] = hex;
        self.length += 1;
        let exits = self.neighbours[usize::from(hex)];
        for turn in self.turns {
            let direction = (back + turn) % 6;
            let Some(next) = exits[direction] else {
                continue;
            };
            if let Some(site) = state.site_at[usize::from(next)] {
                if next != self.hub && self.targets.contains(usize::from(site)) {
                    self.stopped = (self.visit)(self.hub, &self.path[..self.length], next);
                }
            } else if let Some((next_kind, next_cost)) = self.tile_on(next, cost) {
                self.extend(next, next_kind, next_cost, (direction + 3) % 6);
            }
            if self.stopped {
                break;
            }
        }
        self.length -= 1;
        self.supply[kind] += 1;
    }
}
