//! The enumeration of every legal road (spec §11): a depth-first search from each hub behind the
//! legal-action listing and the end tests (spec §7, §9).
//!
//! It runs on every listing and at the start of every turn, so it is the engine's hot path. What
//! changes only when a road or a workshop is placed (a seat's hubs, its legal targets, and per
//! hex the distance to the nearest target) is derived once and cached beside the state
//! ([`SearchCache`]); the search prunes every branch that cannot afford that distance, walks the
//! map's neighbour table directly, keeps the path in a fixed array and a bit set, and allocates
//! nothing.

use std::sync::OnceLock;

use crate::games::Seat;
#[cfg(test)]
use crate::games::la_strada::RoadPlan;
use crate::games::la_strada::data::{HexId, MAP, MAX_HEXES, Terrain};
use crate::games::la_strada::{LaStrada, MAX_PLAYERS, Occupant};

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
        let player = &self.players[seat as usize];
        let basis = self.search_basis(seat);
        // The longest road the budget and the supply allow (every tile costs at least
        // MIN_TILE_COST, spec §5 rules 6-7): a hub farther than one hex beyond it from every
        // target has no road, and a road can only continue from a hex toward a target it can
        // still afford to reach (`basis.near`). Pruning on it only cuts branches that yield no
        // road, so the roads and their order are unchanged.
        let supply_tiles = player.supply.iter().map(|n| u32::from(*n)).sum::<u32>();
        let max_tiles = (budget / Terrain::MIN_TILE_COST)
            .min(supply_tiles)
            .min(MAX_ROAD_TILES as u32);
        let reach = max_tiles + 1;
        let mut search = RoadSearch {
            state: self,
            neighbours: &map.neighbours,
            near: &basis.near,
            budget,
            hub: 0,
            turns: self.options.curve.allowed_turns(),
            supply: player.supply,
            path: [0; MAX_ROAD_TILES],
            on_path: [0; MAX_HEXES.div_ceil(64)],
            length: 0,
            visit,
            stopped: false,
        };
        for &hub in &basis.hubs {
            if u32::from(basis.near[usize::from(hub)]) > reach {
                // No target near enough to this hub.
                continue;
            }
            search.hub = hub;
            for direction in 0..6 {
                if let Some(first) = map.neighbour(hub, direction) {
                    search.try_step(first, 0, wrap_direction(direction + 3));
                }
                if search.stopped {
                    return;
                }
            }
        }
    }

    /// `seat`'s [`SearchBasis`], built on first use after the last change to it (see
    /// [`SearchCache`]). The tests check every use against a fresh one, so a change the cache
    /// was not told of cannot go unnoticed.
    fn search_basis(&self, seat: Seat) -> &SearchBasis {
        let basis = self.search_cache.seats[seat as usize].get_or_init(|| self.fresh_basis(seat));
        debug_assert!(
            *basis == self.fresh_basis(seat),
            "stale road-search cache for seat {seat}"
        );
        basis
    }

    /// Builds `seat`'s [`SearchBasis`] from the state.
    fn fresh_basis(&self, seat: Seat) -> SearchBasis {
        let map = &*MAP;
        // The hubs in [`LaStrada::hubs`] order: workshops, then connected settlements.
        let hubs = self.hubs(seat);
        // Every settlement that is not a hub and where a merchant can go is a target (spec §5
        // rules 1-2); `near` is the distance to the nearest one, 0 on the targets themselves.
        let mut near = vec![u8::MAX; map.hexes.len()];
        for site in &self.sites {
            if site.is_connected(seat) || self.merchant_error(seat, site).is_some() {
                continue;
            }
            for (nearest, distance) in near.iter_mut().zip(map.distances_from(site.hex)) {
                *nearest = (*nearest).min(*distance);
            }
        }
        SearchBasis { hubs, near }
    }

    /// Forgets the cached road-search basis of the seats whose hubs or targets `seat`'s road or
    /// workshop just changed: its own, and in a 2-player game the opponent's too (a settlement
    /// that now holds a merchant needs none from a visitor, spec §9).
    pub(in crate::games::la_strada) fn forget_search_basis(&mut self, seat: Seat) {
        if self.is_two_player() {
            self.search_cache = SearchCache::default();
        } else if let Some(cached) = self.search_cache.seats.get_mut(seat as usize) {
            cached.take();
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

/// What every road search of one seat starts from, which only a road or a workshop of that seat
/// (or, in a 2-player game, of either seat) changes: its hubs and how far each hex is from its
/// nearest target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::games::la_strada) struct SearchBasis {
    /// Where roads start, in [`LaStrada::hubs`] order (spec §5 rule 1).
    hubs: Vec<HexId>,
    /// Per hex, the hex distance to the nearest legal target (spec §5 rule 2): 0 exactly on the
    /// targets, so it also tells which settlements a road may end at. A road through a hex needs
    /// at least `near - 1` more tiles, a lower bound the search prunes on.
    near: Vec<u8>,
}

/// The seats' [`SearchBasis`], derived from the state on first use and forgotten whenever a road
/// or workshop changes it ([`LaStrada::forget_search_basis`]). It only saves work: it is never
/// serialized (a decoded state starts empty and rebuilds it), holds nothing that is not on the
/// table, and the search reads the same roads with or without it.
#[derive(Clone, Default)]
pub(in crate::games::la_strada) struct SearchCache {
    seats: [OnceLock<SearchBasis>; MAX_PLAYERS],
}

impl std::fmt::Debug for SearchCache {
    /// Derived data: a state prints the same whatever was cached.
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("SearchCache")
    }
}

/// The depth-first road search of [`LaStrada::for_each_road`]. Generic over the visitor so that
/// counting or testing for any road compiles to a tight loop (it runs at every random-play step).
struct RoadSearch<'a, F> {
    state: &'a LaStrada,
    neighbours: &'a [[Option<HexId>; 6]],
    /// Per hex, the distance to the nearest legal target, 0 on the targets (see [`SearchBasis`]).
    near: &'a [u8],
    budget: u32,
    hub: HexId,
    turns: &'static [usize],
    /// Tiles left, minus those on the current path.
    supply: [u8; 3],
    path: [HexId; MAX_ROAD_TILES],
    /// The hexes of `path[..length]`, as a bit set by hex id (spec §5 rule 3: no hex twice).
    on_path: [u64; MAX_HEXES.div_ceil(64)],
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

    /// Whether `hex` may take the next tile of a road that has cost `cost` so far, and may still
    /// lead to a target: it is not a settlement (ruling A15), the road with it plus the cheapest
    /// tiles to the nearest reachable target stays within budget (spec §5 rule 7), a tile of its
    /// terrain is in supply (rule 6), it is empty and not already on the path (rule 3). Returns
    /// the tile kind and the road's cost with it. Checked before descending, since most hexes the
    /// search looks at are refused here.
    #[inline(always)]
    fn tile_on(&self, hex: HexId, cost: u32) -> Option<(usize, u32)> {
        let state = self.state;
        let slot = usize::from(hex);
        let terrain = state.terrain[slot];
        let kind = TILE_KIND[terrain as usize];
        let cost = cost + TILE_COST[terrain as usize];
        let still_needed = u32::from(self.near[slot]).saturating_sub(1) * Terrain::MIN_TILE_COST;
        // Every test is cheap: combined without branching, since which ones fail is hard to
        // predict. A site has no tile: roads never pass through settlements (ruling A15).
        let open = (terrain != Terrain::Site)
            & (cost + still_needed <= self.budget)
            & (self.supply[kind] > 0)
            & (self.length < MAX_ROAD_TILES)
            & matches!(state.occupant[slot], Occupant::Empty)
            & (self.on_path[slot / 64] & (1 << (slot % 64)) == 0);
        open.then_some((kind, cost))
    }

    /// Lays a tile of `kind` on `hex` (accepted by [`RoadSearch::tile_on`]), then tries every exit
    /// the tile faces allow from `back` (the edge toward the previous hex).
    fn extend(&mut self, hex: HexId, kind: usize, cost: u32, back: usize) {
        let slot = usize::from(hex);
        self.supply[kind] -= 1;
        self.path[self.length] = hex;
        self.length += 1;
        self.on_path[slot / 64] ^= 1 << (slot % 64);
        // No tile follows when the cheapest one is beyond the budget.
        let another_tile = cost + Terrain::MIN_TILE_COST <= self.budget;
        let exits = self.neighbours[slot];
        for turn in self.turns {
            let direction = wrap_direction(back + turn);
            let Some(next) = exits[direction] else {
                continue;
            };
            if self.near[usize::from(next)] == 0 {
                // A legal target (spec §5 rule 2): the road ends here. A hub is never a target,
                // being connected; the test is kept as the rule states it.
                if next != self.hub {
                    self.stopped = (self.visit)(self.hub, &self.path[..self.length], next);
                }
            } else if another_tile && let Some((next_kind, next_cost)) = self.tile_on(next, cost) {
                // Any other settlement refuses a tile in `tile_on` (ruling A15).
                self.extend(next, next_kind, next_cost, wrap_direction(direction + 3));
            }
            if self.stopped {
                break;
            }
        }
        self.on_path[slot / 64] ^= 1 << (slot % 64);
        self.length -= 1;
        self.supply[kind] += 1;
    }
}

/// `direction mod 6` for a direction below 12 (a direction plus a turn or the half turn).
#[inline(always)]
fn wrap_direction(direction: usize) -> usize {
    if direction >= 6 {
        direction - 6
    } else {
        direction
    }
}

/// The cost of a road tile by terrain, in [`Terrain`] order (spec §5 rule 7), as a table the
/// search indexes without branching; a site takes no tile.
const TILE_COST: [u32; 4] = [
    Terrain::Plains.cost(),
    Terrain::Forest.cost(),
    Terrain::Hill.cost(),
    Terrain::Site.cost(),
];

/// The supply index of a road tile by terrain, in [`Terrain`] order (spec §5 rule 6); a site
/// takes no tile and is refused before its entry (0) matters.
const TILE_KIND: [usize; 4] = [
    tile_kind(Terrain::Plains),
    tile_kind(Terrain::Forest),
    tile_kind(Terrain::Hill),
    tile_kind(Terrain::Site),
];

const fn tile_kind(terrain: Terrain) -> usize {
    match terrain.tile_index() {
        Some(kind) => kind,
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::{TILE_COST, TILE_KIND};
    use crate::games::la_strada::data::Terrain;

    #[test]
    fn the_search_tables_agree_with_the_terrain_rules() {
        // The tables are indexed by the enum's order (spec §5 rules 6-7).
        for terrain in [
            Terrain::Plains,
            Terrain::Forest,
            Terrain::Hill,
            Terrain::Site,
        ] {
            assert_eq!(TILE_COST[terrain as usize], terrain.cost());
            assert_eq!(
                TILE_KIND[terrain as usize],
                terrain.tile_index().unwrap_or(0)
            );
            assert!(terrain == Terrain::Site || terrain.cost() >= Terrain::MIN_TILE_COST);
        }
    }
}
