//! The enumeration of every legal road (spec §11): a depth-first search from each hub behind the
//! legal-action listing and the end tests (spec §7, §9).
//!
//! It runs on every listing and at the start of every turn, so it is the engine's hot path. What
//! changes only when a road or a workshop is placed (a seat's hubs, its legal targets, and per
//! hex the distance to the nearest target) is derived once and cached beside the state
//! ([`SearchCache`]); the search prunes every branch that cannot afford that distance, walks the
//! map's neighbour table directly, keeps the path in a fixed array and a bit set, and allocates
//! nothing.

mod cache;

use std::sync::LazyLock;

use smallvec::SmallVec;

pub(in crate::games::la_strada) use cache::SearchCache;
use cache::{HEX_TABLE, SearchBasis, slot};

use crate::games::Seat;
#[cfg(test)]
use crate::games::la_strada::RoadPlan;
use crate::games::la_strada::data::{HexId, MAP, Terrain};
use crate::games::la_strada::{CurveRule, LaStrada};

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
        // The longest road the budget and the supply allow: a hub farther than one hex beyond
        // it from every target has no road, and a road can only continue from a hex toward a
        // target it can still afford to reach (`SearchBasis::need`). Pruning on it only cuts
        // branches that yield no road, so the roads and their order are unchanged.
        let max_tiles = self.max_road_tiles(seat, budget);
        self.run_search(seat, budget, max_tiles, visit, Run::Every);
    }

    /// Draws one of `seat`'s legal roads within `budget` without listing them all, for the
    /// random-play sampler (a full budget with several hubs has hundreds). One search counts
    /// the roads, noting where each branch (a hub and a first direction) starts in the order of
    /// [`LaStrada::for_each_road`]; `choose` is given the count and returns an index, or `None`
    /// for no road; a second search runs only the branch that holds the road at that index and
    /// hands it to `build`. The road is the one the listing holds at that index.
    pub(crate) fn draw_road<R>(
        &self,
        seat: Seat,
        budget: u32,
        choose: impl FnOnce(usize) -> Option<usize>,
        build: impl FnOnce(HexId, &[HexId], HexId) -> R,
    ) -> Option<R> {
        let max_tiles = self.max_road_tiles(seat, budget);
        if max_tiles == 0 || self.known_to_have_no_road(seat, budget) {
            // No road, without a search: the draw among none.
            choose(0);
            return None;
        }
        let mut branches = Branches::default();
        self.run_search(
            seat,
            budget,
            max_tiles,
            |_, _, _| false,
            Run::Counting(&mut branches),
        );
        let index = choose(branches.roads)?;
        let branch = branches.holding(index)?;
        let mut skip = index - branch.first_road;
        let mut build = Some(build);
        let mut built = None;
        let visit = |hub: HexId, tiles: &[HexId], target: HexId| {
            if skip > 0 {
                skip -= 1;
                return false;
            }
            built = build.take().map(|build| build(hub, tiles, target));
            true
        };
        self.run_search(seat, budget, max_tiles, visit, Run::Branch(branch));
        built
    }

    /// The longest road the budget and the supply allow (every tile costs at least
    /// MIN_TILE_COST, spec §5 rules 6-7).
    fn max_road_tiles(&self, seat: Seat, budget: u32) -> u32 {
        let player = &self.players[seat as usize];
        let supply_tiles = player.supply.iter().map(|n| u32::from(*n)).sum::<u32>();
        (budget / Terrain::MIN_TILE_COST)
            .min(supply_tiles)
            .min(MAX_ROAD_TILES as u32)
    }

    /// Runs `run` of the search for the game's curve rule, compiled for its number of ways on.
    fn run_search<F>(&self, seat: Seat, budget: u32, max_tiles: u32, visit: F, run: Run<'_>)
    where
        F: FnMut(HexId, &[HexId], HexId) -> bool,
    {
        match self.options.curve {
            CurveRule::Gentle => self.search::<GentleTurns, F>(seat, budget, max_tiles, visit, run),
            CurveRule::Sharp => self.search::<SharpTurns, F>(seat, budget, max_tiles, visit, run),
            CurveRule::Both => self.search::<BothTurns, F>(seat, budget, max_tiles, visit, run),
        }
    }

    /// [`LaStrada::for_each_road`] with the turns of the game's curve rule as `T`, for roads
    /// of at most `max_tiles` tiles.
    fn search<T: Turns, F>(&self, seat: Seat, budget: u32, max_tiles: u32, visit: F, run: Run<'_>)
    where
        F: FnMut(HexId, &[HexId], HexId) -> bool,
    {
        if max_tiles < T::CURVE.shortest_loop() {
            // No road this short can close a loop (spec §5 rule 3 holds by itself).
            self.search_with::<T, F, false>(seat, budget, max_tiles, visit, run);
        } else {
            self.search_with::<T, F, true>(seat, budget, max_tiles, visit, run);
        }
    }

    /// [`LaStrada::search`], checking for hexes visited twice or not.
    fn search_with<T: Turns, F, const CHECK_PATH: bool>(
        &self,
        seat: Seat,
        budget: u32,
        max_tiles: u32,
        visit: F,
        run: Run<'_>,
    ) where
        F: FnMut(HexId, &[HexId], HexId) -> bool,
    {
        let basis = self.search_basis(seat);
        // A hub farther than one hex beyond the longest road from every target has no road.
        let reach = max_tiles + 1;
        match run {
            Run::Every => self
                .road_search::<F, T, CHECK_PATH>(seat, basis, budget, visit)
                .run_from_hubs(&basis.hubs, &basis.near, reach),
            Run::Counting(branches) => {
                // Counting alone needs neither the path nor a visitor (see `RoadCounter`), and
                // the tiles in hand only when some kind can run short.
                let [plains, forest, hill] = self.players[seat as usize].supply;
                let supply = [plains, forest, hill, 0];
                if self.supply_binds(seat, budget, max_tiles) {
                    self.road_counter::<T, CHECK_PATH, true>(basis, budget, supply)
                        .count_from_hubs(&basis.hubs, &basis.near, reach, branches)
                } else {
                    self.road_counter::<T, CHECK_PATH, false>(basis, budget, supply)
                        .count_from_hubs(&basis.hubs, &basis.near, reach, branches)
                }
            }
            Run::Branch(branch) => self
                .road_search::<F, T, CHECK_PATH>(seat, basis, budget, visit)
                .search_branch(branch.hub, usize::from(branch.direction)),
        }
    }

    /// Whether some road of `seat` within `budget` and `max_tiles` could need more tiles of a
    /// kind than it has left (spec §5 rule 6): with `budget` resources a road holds at most
    /// `budget / cost` tiles of a kind. Early in a game no kind can run short.
    fn supply_binds(&self, seat: Seat, budget: u32, max_tiles: u32) -> bool {
        let supply = &self.players[seat as usize].supply;
        [Terrain::Plains, Terrain::Forest, Terrain::Hill]
            .into_iter()
            .filter_map(|terrain| Some((terrain.cost(), supply[terrain.tile_index()?])))
            .any(|(cost, left)| u32::from(left) < (budget / cost).min(max_tiles))
    }

    /// The count of a seat's roads within `budget` from its `basis` and with its `supply` (by
    /// supply index, a fourth, empty entry after them), before it starts.
    fn road_counter<'a, T: Turns, const CHECK_PATH: bool, const SUPPLY: bool>(
        &'a self,
        basis: &'a SearchBasis,
        budget: u32,
        supply: [u8; 4],
    ) -> RoadCounter<'a, T, CHECK_PATH, SUPPLY> {
        RoadCounter {
            board: self.search_board(),
            ways_on: T::ways_on(),
            need: &basis.need,
            budget,
            supply,
            on_path: [0; HEX_TABLE / 64],
            turns: std::marker::PhantomData,
        }
    }

    /// The search of `seat`'s roads within `budget` from its `basis`, before it starts.
    fn road_search<'a, F, T: Turns, const CHECK_PATH: bool>(
        &'a self,
        seat: Seat,
        basis: &'a SearchBasis,
        budget: u32,
        visit: F,
    ) -> RoadSearch<'a, F, T, CHECK_PATH>
    where
        F: FnMut(HexId, &[HexId], HexId) -> bool,
    {
        let [plains, forest, hill] = self.players[seat as usize].supply;
        RoadSearch {
            board: self.search_board(),
            exits: &MAP.exits,
            ways_on: T::ways_on(),
            need: &basis.need,
            budget,
            hub: 0,
            supply: [plains, forest, hill, 0],
            path: [0; MAX_ROAD_TILES],
            on_path: [0; HEX_TABLE / 64],
            length: 0,
            visit,
            stopped: false,
            turns: std::marker::PhantomData,
        }
    }

    /// Whether a draw's counting search for `seat` within `budget` runs without the tiles in
    /// hand (the tests check that both kinds of count are exercised).
    #[cfg(test)]
    pub(crate) fn counts_without_supply(&self, seat: Seat, budget: u32) -> bool {
        !self.supply_binds(seat, budget, self.max_road_tiles(seat, budget))
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

    /// Whether `seat` has at least one legal road within `budget`, by a search (the tests
    /// compare the end tests' [`LaStrada::can_still_build`] with it).
    #[cfg(test)]
    pub(crate) fn has_any_road(&self, seat: Seat, budget: u32) -> bool {
        let mut found = false;
        self.for_each_road(seat, budget, |_, _, _| {
            found = true;
            true
        });
        found
    }
}

/// What one road search covers.
enum Run<'a> {
    /// Every branch of every hub.
    Every,
    /// Every branch of every hub, noting where each branch that holds a road starts.
    Counting(&'a mut Branches),
    /// The one branch.
    Branch(Branch),
}

/// Where the branches of a search start ([`LaStrada::draw_road`]).
#[derive(Default)]
struct Branches {
    /// The branches that hold a road, in search order: on the stack for a usual draw (a seat
    /// has about nine hubs, and few of their first steps lead to a road), since every draw
    /// notes them.
    starts: SmallVec<[Branch; 32]>,
    /// How many roads there are in all.
    roads: usize,
}

impl Branches {
    /// The branch that holds the road at `index` in search order.
    fn holding(&self, index: usize) -> Option<Branch> {
        if index >= self.roads {
            return None;
        }
        let after = self
            .starts
            .partition_point(|branch| branch.first_road <= index);
        after.checked_sub(1).map(|at| self.starts[at])
    }
}

/// The roads from one hub whose first tile lies in one direction: a branch of the search.
#[derive(Clone, Copy, Debug)]
struct Branch {
    hub: HexId,
    direction: u8,
    /// The index, in search order, of the branch's first road.
    first_road: usize,
}

/// The longest path the search holds: every tile costs at least 2 (spec §5 rule 7) and a
/// player owns 31 tiles (spec §1), so no budget can make a longer road; checked anyway.
pub(in crate::games::la_strada) const MAX_ROAD_TILES: usize = 32;

/// The depth-first road search of [`LaStrada::for_each_road`]. Generic over the visitor so that
/// counting or testing for any road compiles to a tight loop (it runs at every random-play step),
/// over the curve rule `T`, and over `CHECK_PATH`: whether a hex may come up twice on one path,
/// which only a search that can close a loop has to test (see [`LaStrada::for_each_road`]). A
/// draw's count goes through the leaner [`RoadCounter`] instead.
struct RoadSearch<'a, F, T: Turns, const CHECK_PATH: bool> {
    /// Per hex, the tile it takes or [`BLOCKED`](cache::BLOCKED) (see [`SearchCache`]).
    board: &'a [u8; HEX_TABLE],
    /// Per hex, its neighbours by direction (see [`crate::games::la_strada::data::MapData::exits`]).
    exits: &'a [[HexId; 6]],
    /// Per hex and edge a road enters it by, where the road may go on ([`Turns::ways_on`]).
    ways_on: &'a WaysOn<T::Ways>,
    /// Per hex, 0 on a legal target, else the least a road laying its next tile there spends
    /// (see [`SearchBasis::need`]).
    need: &'a [u8; HEX_TABLE],
    budget: u32,
    hub: HexId,
    /// Tiles left by supply index, minus those on the current path (a fourth, empty entry
    /// lets the kind be read from two bits without a bounds check).
    supply: [u8; 4],
    path: [HexId; MAX_ROAD_TILES],
    /// The hexes of `path[..length]`, as a bit set by hex id (spec §5 rule 3: no hex twice);
    /// kept only with `CHECK_PATH`.
    on_path: [u64; HEX_TABLE / 64],
    length: usize,
    visit: F,
    stopped: bool,
    /// The curve rule ([`Turns`]).
    turns: std::marker::PhantomData<T>,
}

/// A curve rule (spec §5 rule 5) as a type, so that each search is compiled for its rule: its
/// number of ways on from a hex is then a constant.
trait Turns {
    const CURVE: CurveRule;
    /// The ways on from a hex entered by one edge: an array of as many as the rule allows.
    type Ways: Copy + Default + AsRef<[WayOn]> + AsMut<[WayOn]> + 'static;
    /// The rule's table of the ways on, built once from the map.
    fn ways_on() -> &'static WaysOn<Self::Ways>;
}

/// [`CurveRule::Gentle`] as a [`Turns`].
struct GentleTurns;
impl Turns for GentleTurns {
    const CURVE: CurveRule = CurveRule::Gentle;
    type Ways = [WayOn; 3];
    fn ways_on() -> &'static WaysOn<Self::Ways> {
        static TABLE: LazyLock<Box<WaysOn<[WayOn; 3]>>> =
            LazyLock::new(|| ways_on_table(CurveRule::Gentle));
        &TABLE
    }
}

/// [`CurveRule::Sharp`] as a [`Turns`].
struct SharpTurns;
impl Turns for SharpTurns {
    const CURVE: CurveRule = CurveRule::Sharp;
    type Ways = [WayOn; 3];
    fn ways_on() -> &'static WaysOn<Self::Ways> {
        static TABLE: LazyLock<Box<WaysOn<[WayOn; 3]>>> =
            LazyLock::new(|| ways_on_table(CurveRule::Sharp));
        &TABLE
    }
}

/// [`CurveRule::Both`] as a [`Turns`].
struct BothTurns;
impl Turns for BothTurns {
    const CURVE: CurveRule = CurveRule::Both;
    type Ways = [WayOn; 5];
    fn ways_on() -> &'static WaysOn<Self::Ways> {
        static TABLE: LazyLock<Box<WaysOn<[WayOn; 5]>>> =
            LazyLock::new(|| ways_on_table(CurveRule::Both));
        &TABLE
    }
}

/// Where a road goes on from a hex: the next hex (off the board,
/// [`crate::games::la_strada::data::MapData::off_board`]) and its edge facing back.
#[derive(Clone, Copy, Debug, Default)]
struct WayOn {
    next: HexId,
    back: u8,
}

/// Per hex `h` (its [`slot`]) and edge `back` (the road came in through it, `back & 7`), the
/// ways on a curve rule allows, in [`CurveRule::allowed_turns`] order ([`Turns::ways_on`]).
/// Fixed sizes, so that the search indexes it without a bounds check; the rows of hexes past
/// the board and of edges 6 and 7 are never read.
type WaysOn<W> = [[W; 8]; HEX_TABLE];

/// Builds the [`WaysOn`] table of `curve` from the map's neighbour table.
fn ways_on_table<W: Copy + Default + AsMut<[WayOn]>>(curve: CurveRule) -> Box<WaysOn<W>> {
    let map = &*MAP;
    let turns = curve.allowed_turns();
    let mut table = Box::new([[W::default(); 8]; HEX_TABLE]);
    for (rows, exits) in table.iter_mut().zip(&map.exits[..map.off_board()]) {
        for (back, row) in rows.iter_mut().take(6).enumerate() {
            for (way, turn) in row.as_mut().iter_mut().zip(turns) {
                let direction = wrap_direction(back + turn);
                *way = WayOn {
                    next: exits[direction],
                    back: wrap_direction(direction + 3) as u8,
                };
            }
        }
    }
    table
}

impl<F, T, const CHECK_PATH: bool> RoadSearch<'_, F, T, CHECK_PATH>
where
    F: FnMut(HexId, &[HexId], HexId) -> bool,
    T: Turns,
{
    /// Searches from every hub in turn (see [`LaStrada::for_each_road`]), skipping the hubs
    /// farther than `reach` from every target (`near`).
    fn run_from_hubs(mut self, hubs: &[HexId], near: &[u8], reach: u32) {
        for &hub in hubs {
            if u32::from(near[usize::from(hub)]) > reach {
                // No target near enough to this hub.
                continue;
            }
            let mut open = open_first_steps(&self.exits[usize::from(hub)], self.need, self.budget);
            while open != 0 {
                let direction = open.trailing_zeros() as usize;
                open &= open - 1;
                self.search_branch(hub, direction);
                if self.stopped {
                    return;
                }
            }
        }
    }

    /// The roads from `hub` whose first tile lies in `direction`.
    #[inline(always)]
    fn search_branch(&mut self, hub: HexId, direction: usize) {
        self.hub = hub;
        let first = self.exits[usize::from(hub)][direction];
        // A target next to the hub takes no tile, and a road needs one (ruling A4).
        if self.need[slot(first)] != 0 {
            self.try_step(first, 0, wrap_direction(direction + 3));
        }
    }

    /// Lays the next tile of a road that has cost `cost` so far on `hex` (not a target) if it
    /// may take it, then goes on from there. Most hexes the search looks at are refused here, so it is
    /// inlined and decides on one load first: `need` says whether the hex takes a tile (not a
    /// settlement, ruling A15; empty, spec §5 rule 3) and whether the road with that tile and
    /// the cheapest ones on to the nearest target stays within budget (rule 7). Then a tile
    /// of its terrain must be in supply (rule 6), and the hex not already on the path (rule 3).
    #[inline(always)]
    fn try_step(&mut self, hex: HexId, cost: u32, back: usize) {
        let slot = slot(hex);
        if cost + u32::from(self.need[slot]) > self.budget {
            return;
        }
        let tile = self.board[slot];
        let kind = usize::from(tile & 3);
        let open = (self.supply[kind] > 0)
            & (self.length < MAX_ROAD_TILES)
            & (!CHECK_PATH || self.on_path[slot / 64] & (1 << (slot % 64)) == 0);
        if open {
            self.extend(hex, kind, cost + u32::from(tile >> 2), back);
        }
    }

    /// Lays a tile of `kind` on `hex` (accepted by [`RoadSearch::try_step`]), then tries every
    /// exit the tile faces allow from `back` (the edge toward the previous hex).
    fn extend(&mut self, hex: HexId, kind: usize, cost: u32, back: usize) {
        let slot = slot(hex);
        self.supply[kind] -= 1;
        self.path[self.length] = hex;
        self.length += 1;
        if CHECK_PATH {
            self.on_path[slot / 64] ^= 1 << (slot % 64);
        }
        for way in self.ways_on[slot][back & 7].as_ref() {
            // Off the board, `need` is 255: refused.
            let next = way.next;
            if self.need[self::slot(next)] == 0 {
                // A legal target (spec §5 rule 2): the road ends here. A hub is never a target,
                // being connected; the test is kept as the rule states it.
                if next != self.hub {
                    self.stopped = (self.visit)(self.hub, &self.path[..self.length], next);
                }
            } else {
                // Any other settlement refuses a tile (ruling A15).
                self.try_step(next, cost, usize::from(way.back));
            }
            if self.stopped {
                break;
            }
        }
        if CHECK_PATH {
            self.on_path[slot / 64] ^= 1 << (slot % 64);
        }
        self.length -= 1;
        self.supply[kind] += 1;
    }
}

/// The first search of [`LaStrada::draw_road`]: it counts the roads of each branch and nothing
/// else. It keeps no path, calls no visitor and cannot stop early; each step returns the roads
/// found below it, so the running total lives in a register rather than in the search. Per tile
/// laid, that is most of the bookkeeping of [`RoadSearch`]. It keeps the tiles in hand only with
/// `SUPPLY`: when no kind can run short ([`LaStrada::supply_binds`]) rule 6 refuses no tile. It
/// visits the hexes [`RoadSearch`] would, in the same order, and finds the same roads (the tests
/// compare every draw with the listing).
struct RoadCounter<'a, T: Turns, const CHECK_PATH: bool, const SUPPLY: bool> {
    /// As [`RoadSearch::board`].
    board: &'a [u8; HEX_TABLE],
    /// As [`RoadSearch::ways_on`].
    ways_on: &'a WaysOn<T::Ways>,
    /// As [`RoadSearch::need`].
    need: &'a [u8; HEX_TABLE],
    budget: u32,
    /// As [`RoadSearch::supply`]: kept only with `SUPPLY`.
    supply: [u8; 4],
    /// As [`RoadSearch::on_path`]: kept only with `CHECK_PATH`.
    on_path: [u64; HEX_TABLE / 64],
    /// The curve rule ([`Turns`]).
    turns: std::marker::PhantomData<T>,
}

impl<T: Turns, const CHECK_PATH: bool, const SUPPLY: bool> RoadCounter<'_, T, CHECK_PATH, SUPPLY> {
    /// [`RoadSearch::run_from_hubs`], counting: notes in `branches` where each branch that
    /// holds a road starts, and how many roads there are in all.
    fn count_from_hubs(mut self, hubs: &[HexId], near: &[u8], reach: u32, branches: &mut Branches) {
        let exits = &MAP.exits;
        let mut found = 0;
        for &hub in hubs {
            if u32::from(near[usize::from(hub)]) > reach {
                continue;
            }
            // `roads_beyond` counts every target it reaches, which holds as no hub is a target.
            debug_assert_ne!(self.need[slot(hub)], 0, "hub {hub} is a target");
            let mut open = open_first_steps(&exits[usize::from(hub)], self.need, self.budget);
            while open != 0 {
                let direction = open.trailing_zeros() as usize;
                open &= open - 1;
                let first = exits[usize::from(hub)][direction];
                let Some(roads) = self.lay(first, 0, wrap_direction(direction + 3)) else {
                    // No tile of its kind in hand (spec §5 rule 6).
                    continue;
                };
                if roads > 0 {
                    branches.starts.push(Branch {
                        hub,
                        direction: direction as u8,
                        first_road: found,
                    });
                    found += roads;
                }
            }
        }
        branches.roads = found;
    }

    /// The roads that go on from a tile just laid on `hex`, entered by edge `back`, with the
    /// road so far costing `cost`: [`RoadSearch::extend`] with [`RoadSearch::try_step`] inlined,
    /// so that a hex refused costs no call. A hub is never a target (it is connected), so a
    /// target reached is always a road.
    fn roads_beyond(&mut self, hex: HexId, cost: u32, back: usize) -> usize {
        let slot = slot(hex);
        if CHECK_PATH {
            self.on_path[slot / 64] ^= 1 << (slot % 64);
        }
        let mut roads = 0;
        for way in self.ways_on[slot][back & 7].as_ref() {
            let next = self::slot(way.next);
            let need = self.need[next];
            if need == 0 {
                // A legal target (spec §5 rule 2).
                roads += 1;
            } else if self.may_take(next, cost, need) {
                roads += self.lay(way.next, cost, usize::from(way.back)).unwrap_or(0);
            }
        }
        if CHECK_PATH {
            self.on_path[slot / 64] ^= 1 << (slot % 64);
        }
        roads
    }

    /// Lays the next tile, on `hex` (accepted by [`RoadCounter::may_take`]), of a road that has
    /// cost `cost` so far and entered it by edge `back`, and counts the roads beyond it; `None`
    /// when no tile of its kind is left (spec §5 rule 6, only with `SUPPLY`).
    #[inline(always)]
    fn lay(&mut self, hex: HexId, cost: u32, back: usize) -> Option<usize> {
        let tile = self.board[slot(hex)];
        let kind = usize::from(tile & 3);
        if SUPPLY {
            if self.supply[kind] == 0 {
                return None;
            }
            self.supply[kind] -= 1;
        }
        let cost = cost + u32::from(tile >> 2);
        let roads = if cost + Terrain::MIN_TILE_COST > self.budget {
            // No tile after this one fits the budget (spec §5 rule 7: every hex that is not a
            // target needs at least one more tile), so the road can only end next to it: its
            // targets are counted here, without laying anything further.
            let ways = &self.ways_on[slot(hex)][back & 7];
            ways.as_ref()
                .iter()
                .filter(|way| self.need[slot(way.next)] == 0)
                .count()
        } else {
            self.roads_beyond(hex, cost, back)
        };
        if SUPPLY {
            self.supply[kind] += 1;
        }
        Some(roads)
    }

    /// Whether the hex `slot`, not a target, whose [`SearchBasis::need`] is `need`, takes the
    /// next tile of a road that has cost `cost` so far: spec §5 rules 3 and 7 in one load, then
    /// rule 3 again for a hex already on the path.
    #[inline(always)]
    fn may_take(&self, slot: usize, cost: u32, need: u8) -> bool {
        cost + u32::from(need) <= self.budget
            && (!CHECK_PATH || self.on_path[slot / 64] & (1 << (slot % 64)) == 0)
    }
}

/// The directions from a hub (its neighbours `exits`) whose first step may take a tile, as a bit
/// per direction: judged together, with one load per neighbour and no branch, since which of them
/// pass is unpredictable (a hub's neighbours fill with tiles as the game goes on). A refused one
/// would be refused by the search too: a target next to the hub (`need` 0, ruling A4), a hex
/// taking no tile (255) or one whose road could not reach a target within `budget` (spec §5
/// rule 7).
#[inline(always)]
fn open_first_steps(exits: &[HexId; 6], need: &[u8; HEX_TABLE], budget: u32) -> u8 {
    let mut open = 0u8;
    for (direction, first) in exits.iter().enumerate() {
        // `need - 1 < budget` is `need != 0 && need <= budget` in one compare: 0 wraps to the
        // largest value, which no budget exceeds.
        let need = u32::from(need[slot(*first)]);
        open |= u8::from(need.wrapping_sub(1) < budget) << direction;
    }
    open
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
