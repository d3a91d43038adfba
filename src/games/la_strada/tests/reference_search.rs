//! The road listing as it was before the search kept a per-seat cache: a verbatim copy of the
//! previous `rules/search.rs` enumeration, kept as the reference the current one must match road
//! for road, in the same order (`the_listing_equals_the_previous_implementation`).

use super::*;
use crate::games::la_strada::data::MAX_HEXES;

/// Every legal road of `seat` within `budget`, by the previous implementation.
pub(super) fn reference_roads(state: &LaStrada, seat: Seat, budget: u32) -> Vec<RoadTriple> {
    let mut roads = Vec::new();
    reference_for_each_road(state, seat, budget, |hub, tiles, target| {
        roads.push((hub, tiles.to_vec(), target));
        false
    });
    roads
}

fn reference_for_each_road<F>(state: &LaStrada, seat: Seat, budget: u32, visit: F)
where
    F: FnMut(HexId, &[HexId], HexId) -> bool,
{
    let map = &*MAP;
    let player = &state.players[seat as usize];
    // One pass over the settlements: the connected ones are hubs, the others targets where
    // a merchant can go (spec §5 rules 1-2).
    let mut connected = SiteSet::default();
    let mut targets = SiteSet::default();
    for (index, site) in state.sites.iter().enumerate() {
        if site.is_connected(seat) {
            connected.insert(index);
        } else if state.merchant_error(seat, site).is_none() {
            targets.insert(index);
        }
    }
    // The hubs in [`LaStrada::hubs`] order, without allocating: workshops, then settlements.
    let mut hub_space = [0; MAX_HUBS];
    let mut hub_count = 0;
    let settlements = (0..state.sites.len())
        .filter(|index| connected.contains(*index))
        .map(|index| state.sites[index].hex);
    for hub in player.workshops.iter().copied().chain(settlements) {
        if let Some(slot) = hub_space.get_mut(hub_count) {
            *slot = hub;
            hub_count += 1;
        }
    }
    let hubs = &hub_space[..hub_count];
    // The longest road the budget and the supply allow (every tile costs at least
    // MIN_TILE_COST, spec §5 rules 6-7): a target farther than one hex beyond it from every
    // hub cannot be reached, and a road can only continue from a hex toward a target it can
    // still afford to reach. `near[h]` is the distance from `h` to the nearest target some hub
    // can reach: a road through `h` needs at least `near[h] - 1` more tiles. Pruning on it
    // only cuts branches that yield no road, so the roads and their order are unchanged.
    let supply_tiles = player.supply.iter().map(|n| u32::from(*n)).sum::<u32>();
    let max_tiles = (budget / Terrain::MIN_TILE_COST)
        .min(supply_tiles)
        .min(MAX_ROAD_TILES as u32);
    let reach = max_tiles + 1;
    let mut near_space = [u8::MAX; MAX_HEXES];
    let near = &mut near_space[..map.hexes.len()];
    let mut reachable = false;
    for (index, site) in state.sites.iter().enumerate() {
        if !targets.contains(index) {
            continue;
        }
        let from_site = map.distances_from(site.hex);
        if hubs
            .iter()
            .any(|hub| u32::from(from_site[usize::from(*hub)]) <= reach)
        {
            reachable = true;
            for (nearest, distance) in near.iter_mut().zip(from_site) {
                *nearest = (*nearest).min(*distance);
            }
        }
    }
    if !reachable {
        return;
    }
    let mut search = RoadSearch {
        state,
        neighbours: &map.neighbours,
        targets,
        near,
        budget,
        hub: 0,
        turns: state.options.curve.allowed_turns(),
        supply: player.supply,
        path: [0; MAX_ROAD_TILES],
        on_path: [0; MAX_HEXES.div_ceil(64)],
        length: 0,
        visit,
        stopped: false,
    };
    for &hub in hubs {
        if u32::from(search.near[usize::from(hub)]) > reach {
            // No reachable target near this hub.
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

/// The longest path the search holds: every tile costs at least 2 (spec §5 rule 7) and a
/// player owns 31 tiles (spec §1), so no budget can make a longer road; checked anyway.
const MAX_ROAD_TILES: usize = 32;

/// The most hubs a player can have: a workshop or two (spec §3.5, §9) and every settlement
/// (at most 256, see [`SiteSet`]).
const MAX_HUBS: usize = 2 + 256;

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
    /// Per hex, the distance to the nearest target within reach of a hub (see
    /// [`LaStrada::for_each_road`]).
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
        let state = self.state;
        let slot = usize::from(hex);
        self.supply[kind] -= 1;
        self.path[self.length] = hex;
        self.length += 1;
        self.on_path[slot / 64] ^= 1 << (slot % 64);
        // No target is next to `hex` unless the nearest is one hex away, and no tile follows
        // when the cheapest one is beyond the budget.
        let target_adjacent = self.near[slot] <= 1;
        let another_tile = cost + Terrain::MIN_TILE_COST <= self.budget;
        let exits = self.neighbours[slot];
        for turn in self.turns {
            let direction = wrap_direction(back + turn);
            let Some(next) = exits[direction] else {
                continue;
            };
            let next_slot = usize::from(next);
            if state.terrain[next_slot] == Terrain::Site {
                // The road ends here if this settlement is a legal target (spec §5 rule 2).
                if target_adjacent
                    && next != self.hub
                    && state.site_at[next_slot]
                        .is_some_and(|site| self.targets.contains(usize::from(site)))
                {
                    self.stopped = (self.visit)(self.hub, &self.path[..self.length], next);
                }
            } else if another_tile && let Some((next_kind, next_cost)) = self.tile_on(next, cost) {
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

/// The listing, the legal actions and the random draw of the previous implementation, for the
/// seat to act in `state`: every road then `EndTurn`.
fn reference_actions(state: &LaStrada, seat: Seat) -> Vec<pb::Action> {
    let resources = state.player(seat).resources;
    let mut actions: Vec<pb::Action> = reference_roads(state, seat, resources)
        .into_iter()
        .map(|(hub, tiles, target)| wire::build_road(hub, &tiles, target))
        .collect();
    actions.push(wire::end_turn());
    actions
}

#[test]
fn the_listing_equals_the_previous_implementation() {
    // Seeded random games under every player count, curve rule and end-test budget rule. At
    // every position of play, for every seat and three budgets: the same roads in the same
    // order as the previous implementation, and the same answer to "any road?" (spec §7, §9),
    // by a search and by the end tests' shortcut.
    // For the seat to act: the same legal actions, the same random draw, and a state decoded
    // from its encoding (which starts without the search cache) lists the same. Replaying the
    // recorded actions reaches the same encoded state as the game itself.
    let mut positions = 0;
    let mut roads = 0;
    for players in 2..=4 {
        for curve in [pb::Curve::Gentle, pb::Curve::Sharp, pb::Curve::Both] {
            for end_budget in [pb::EndBudget::Cap, pb::EndBudget::Current] {
                let config = pb::Config {
                    players,
                    curve: curve as i32,
                    end_budget: end_budget as i32,
                    ..pb::Config::default()
                };
                for_each_playing_position(&config, 0..40, |state, seat, at| {
                    for viewer in 0..players {
                        for budget in probe_budgets(state, viewer) {
                            let listed = road_triples(state, viewer, budget);
                            let reference = reference_roads(state, viewer, budget);
                            assert_eq!(listed, reference, "{at}, seat {viewer}");
                            assert_eq!(
                                state.has_any_road(viewer, budget),
                                !reference.is_empty(),
                                "{at}, seat {viewer}"
                            );
                            // The end tests' form, which first tries the road it found last
                            // time (kept in the state's cache).
                            assert_eq!(
                                state.can_still_build(viewer, budget),
                                !reference.is_empty(),
                                "{at}, seat {viewer}"
                            );
                            roads += listed.len();
                        }
                    }
                    let expected = reference_actions(state, seat);
                    let listed: Vec<pb::Action> = state
                        .legal_actions(seat)
                        .into_iter()
                        .map(|legal| match legal {
                            LegalAction::Exact(action) => action,
                            other => panic!("{at}: not an exact action: {other:?}"),
                        })
                        .collect();
                    assert_eq!(listed, expected, "{at}");
                    // A draw per position, from a generator seeded by the position.
                    let mut draws = GameRng::from_seed(&Seed::from_u64(positions ^ 0xD1FF));
                    let mut reference_draw = draws.clone();
                    let drawn = state.random_action(seat, &mut draws);
                    let pick = reference_draw.index(expected.len());
                    assert_eq!(drawn.as_ref(), Some(&expected[pick]), "{at}");
                    let decoded: LaStrada = postcard::from_bytes(&encode(state)).expect("decodes");
                    assert_eq!(decoded.legal_actions(seat), state.legal_actions(seat));
                    positions += 1;
                });
            }
        }
    }
    assert!(positions > 10_000, "compared only {positions} positions");
    assert!(roads > 1_000_000, "compared only {roads} roads");
}
