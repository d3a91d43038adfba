//! The search cache (see [`SearchCache`]): what every road search of a seat starts from, kept in
//! step with the board by the rules' hooks instead of rebuilt per search, and what the end tests
//! last found.

use std::sync::OnceLock;

use smallvec::SmallVec;

use super::MAX_ROAD_TILES;
use crate::games::Seat;
use crate::games::la_strada::data::{DISTANCE_BLOCK, HexId, MAP, MAX_HEXES, Terrain};
use crate::games::la_strada::rules::setup::{HEX_WORDS, HexBits};
use crate::games::la_strada::{LaStrada, MAX_PLAYERS, Occupant};

impl LaStrada {
    /// `seat`'s [`SearchBasis`], built on first use and kept up to date by the hooks below
    /// (see [`SearchCache`]). The tests check every use against a fresh one, so a change the
    /// cache was not told of cannot go unnoticed.
    pub(super) fn search_basis(&self, seat: Seat) -> &SearchBasis {
        let basis = self.search_cache.seats[seat as usize].get_or_init(|| self.fresh_basis(seat));
        debug_assert!(
            *basis == self.fresh_basis(seat),
            "stale road-search cache for seat {seat}"
        );
        basis
    }

    /// The board as the search reads it (see [`SearchCache`]), checked like [`Self::search_basis`].
    pub(super) fn search_board(&self) -> &[u8; HEX_TABLE] {
        let board = self.search_cache.board.get_or_init(|| self.fresh_board());
        debug_assert!(*board == self.fresh_board(), "stale road-search board");
        board
    }

    /// Every empty plains hex (spec §3.5: where a workshop may stand, spacing aside), read from
    /// the search's board: one byte per hex says both terrain and occupancy. Taken eight hexes
    /// at a time as one word (setup asks for it at every placement).
    pub(in crate::games::la_strada) fn empty_plains(&self) -> HexBits {
        const EMPTY_PLAINS: u8 = match Terrain::Plains.tile_index() {
            Some(kind) => board_hex(kind, Terrain::Plains.cost()),
            None => BLOCKED,
        };
        let board = self.search_board();
        let hexes = board.get(..self.terrain.len()).unwrap_or_default();
        let mut words = [0; HEX_WORDS];
        let (groups, rest) = hexes.as_chunks::<8>();
        for (index, group) in groups.iter().enumerate() {
            if let Some(word) = words.get_mut(index / 8) {
                *word |= bytes_equal(*group, EMPTY_PLAINS) << (index % 8 * 8);
            }
        }
        // The hexes past the last whole group, one by one.
        for (offset, hex) in rest.iter().enumerate() {
            let at = groups.len() * 8 + offset;
            if let Some(word) = words.get_mut(at / 64) {
                *word |= u64::from(*hex == EMPTY_PLAINS) << (at % 64);
            }
        }
        HexBits::from_words(words, hexes.len())
    }

    /// Builds `seat`'s [`SearchBasis`] from the state.
    fn fresh_basis(&self, seat: Seat) -> SearchBasis {
        // Every settlement that is not a hub and where a merchant can go is a target (spec §5
        // rules 1-2).
        let targets: TargetHexes = self
            .sites
            .iter()
            .filter(|site| !site.is_connected(seat) && self.merchant_error(seat, site).is_none())
            .map(|site| site.hex)
            .collect();
        let near = nearest_targets(&targets);
        let mut need = Box::new([u8::MAX; HEX_TABLE]);
        fill_need(&mut need[..], &near, &self.search_board()[..]);
        SearchBasis {
            hubs: self.hubs(seat),
            near,
            need,
            targets,
        }
    }

    /// Builds the search's board: per hex, the tile it would take, or [`BLOCKED`]; then
    /// [`BLOCKED`] off the board (see [`crate::games::la_strada::data::MapData::exits`]) and to
    /// the table's end.
    fn fresh_board(&self) -> HexTable {
        /// What an empty hex of each terrain reads, by `Terrain as usize`: a site takes no tile
        /// (ruling A15). A table rather than a match, so that the loop below has no branch.
        const EMPTY: [u8; 4] = {
            let terrains = [
                Terrain::Plains,
                Terrain::Forest,
                Terrain::Hill,
                Terrain::Site,
            ];
            let mut bytes = [BLOCKED; 4];
            let mut index = 0;
            while index < terrains.len() {
                let terrain = terrains[index];
                if let Some(kind) = terrain.tile_index() {
                    bytes[terrain as usize] = board_hex(kind, terrain.cost());
                }
                index += 1;
            }
            bytes
        };
        let mut board = Box::new([BLOCKED; HEX_TABLE]);
        // Both tables have an entry per board hex.
        let hexes = self.occupant.iter().zip(&self.terrain);
        for (hex, (occupant, terrain)) in board.iter_mut().zip(hexes) {
            // Spec §5 rule 3: only an empty hex takes a tile.
            let empty = matches!(occupant, Occupant::Empty);
            *hex = if empty {
                EMPTY[*terrain as usize]
            } else {
                BLOCKED
            };
        }
        board
    }

    /// Keeps the search cache in step with a workshop `seat` just placed on `hex`: the hex is
    /// taken (spec §5 rule 3) and the workshop is a new hub of `seat` (spec §5 rule 1).
    pub(in crate::games::la_strada) fn note_workshop_placed(&mut self, seat: Seat, hex: HexId) {
        self.search_cache.block(&[hex]);
        self.search_cache.rebuild_seat(seat as usize);
    }

    /// Keeps the search cache in step with a road `seat` just built to the settlement `site`
    /// over `tiles` (merchant and supply already updated): the tiles block every seat's roads
    /// (spec §5 rule 3); the target becomes a hub of `seat` and stops being one of its targets
    /// (spec §5 rules 1-2), and with no merchant left it has no target at all (spec §6). In a
    /// 2-player game a settlement that now holds a merchant needs none from an opponent who has
    /// run out (spec §9): that seat's basis is rebuilt.
    pub(in crate::games::la_strada) fn note_road_built(
        &mut self,
        seat: Seat,
        tiles: &[HexId],
        site: usize,
    ) {
        let cache = &mut self.search_cache;
        cache.block(tiles);
        // The new hub can start roads that were not there (spec §5 rule 1).
        cache.known[seat as usize].forget_no_road();
        let two_player = self.players.len() == 2;
        let merchants_left = self.players[seat as usize].merchants_left;
        if two_player {
            let opponent = 1 - seat as usize;
            if self.players[opponent].merchants_left == 0 {
                cache.rebuild_seat(opponent);
            }
            if merchants_left == 0 {
                // Its targets are now the opponent's settlements: rebuilt on use.
                cache.rebuild_seat(seat as usize);
                return;
            }
        }
        let Some(basis) = cache.seats[seat as usize].get_mut() else {
            return;
        };
        let hex = self.sites[site].hex;
        // A settlement is a target once at most: find it and close the gap.
        if let Some(at) = basis.targets.iter().position(|target| *target == hex) {
            basis.targets.remove(at);
        }
        if merchants_left == 0 {
            basis.targets.clear();
            basis.near.fill(u8::MAX);
            basis.need.fill(u8::MAX);
        } else {
            let removed = MAP.padded_distances_from(hex);
            let refilled = drop_nearest_target(&mut basis.near, removed, &basis.targets);
            if let Some(board) = cache.board.get() {
                // Elsewhere the distances are as they were, and `block` has marked the hexes
                // the road took.
                let mut blocks = refilled;
                while blocks != 0 {
                    let block = blocks.trailing_zeros() as usize;
                    blocks &= blocks - 1;
                    let hexes = block * DISTANCE_BLOCK..(block + 1) * DISTANCE_BLOCK;
                    let (Some(need), Some(near)) = (
                        basis.need.get_mut(hexes.clone()),
                        basis.near.get(hexes.clone()),
                    ) else {
                        continue;
                    };
                    fill_need(need, near, &board[hexes.start.min(HEX_TABLE)..]);
                }
            } else {
                // Without a board there is no basis either: both are built on first use.
                cache.rebuild_seat(seat as usize);
                return;
            }
        }
        // Settlement hubs follow the workshops in site order, which is hex order.
        let workshops = self.players[seat as usize].workshops.len();
        let at = workshops + basis.hubs[workshops..].partition_point(|hub| *hub < hex);
        basis.hubs.insert(at, hex);
    }

    /// Drops the search cache, for tests that edit the state's fields directly (the rules
    /// change them only through the hooks above).
    #[cfg(test)]
    pub(crate) fn forget_search_cache(&mut self) {
        self.search_cache = SearchCache::default();
    }

    /// Whether `seat` has at least one legal road within `budget` (the tests'
    /// `LaStrada::has_any_road`), for the end tests at the start of a turn (spec §7, §9), which
    /// first asks what the last search for `seat` found. A road found then answers yes while it
    /// is still legal. No road within a budget at least this one answers no until `seat` gains
    /// a hub or a target: in between, roads only go (tiles block hexes, supply shrinks), so in
    /// a game's last rounds a seat that cannot build is not searched again every turn.
    /// Otherwise it searches, and keeps what it finds.
    pub(in crate::games::la_strada) fn can_still_build(&mut self, seat: Seat, budget: u32) -> bool {
        if self.known_to_have_no_road(seat, budget) {
            return false;
        }
        if let Known::Road(road) = &self.search_cache.known[seat as usize]
            && self.is_still_legal(seat, road, budget)
        {
            return true;
        }
        let mut found = None;
        self.for_each_road(seat, budget, |_, tiles, target| {
            let mut witness = Witness {
                tiles: [0; MAX_ROAD_TILES],
                length: tiles.len(),
                target,
            };
            witness.tiles[..tiles.len()].copy_from_slice(tiles);
            found = Some(witness);
            true
        });
        let any = found.is_some();
        self.search_cache.known[seat as usize] = match found {
            Some(road) => Known::Road(road),
            None => Known::NoRoad { within: budget },
        };
        any
    }

    /// Whether the last end test found that `seat` has no road within `budget` or more, and it
    /// still holds: `seat` has gained no hub and no target since (see
    /// [`LaStrada::can_still_build`]). A random draw then needs no search either: in a 2-player
    /// game's last rounds, a seat that cannot build draws only `EndTurn` while the other builds.
    pub(in crate::games::la_strada) fn known_to_have_no_road(
        &self,
        seat: Seat,
        budget: u32,
    ) -> bool {
        let Known::NoRoad { within } = self.search_cache.known[seat as usize] else {
            return false;
        };
        if budget > within {
            return false;
        }
        debug_assert!(
            {
                let mut any = false;
                self.for_each_road(seat, budget, |_, _, _| {
                    any = true;
                    true
                });
                !any
            },
            "seat {seat} was known to have no road within {within}, but has one within {budget}"
        );
        true
    }

    /// Whether `road`, legal for `seat` when it was found, still is within `budget`. Its hub
    /// (not kept) still is one (hubs never disappear, spec §5) and its shape still follows the tile faces
    /// (rules 4-5), so what may have changed is: the target (rule 2), the hexes (rule 3), the
    /// supply (rule 6) and the budget (rule 7).
    fn is_still_legal(&self, seat: Seat, road: &Witness, budget: u32) -> bool {
        let basis = self.search_basis(seat);
        let board = self.search_board();
        if basis.near[usize::from(road.target)] != 0 {
            return false;
        }
        let mut needed = [0u8; 4];
        let mut cost = 0;
        for tile in &road.tiles[..road.length] {
            let hex = board[usize::from(*tile)];
            if hex == BLOCKED {
                return false;
            }
            needed[usize::from(hex & 3)] += 1;
            cost += u32::from(hex >> 2);
        }
        let supply = self.players[seat as usize].supply;
        cost <= budget && (0..3).all(|kind| needed[kind] <= supply[kind])
    }
}

/// A road found by [`LaStrada::can_still_build`], kept to answer the next end test quickly.
#[derive(Clone, Debug)]
struct Witness {
    tiles: [HexId; MAX_ROAD_TILES],
    length: usize,
    target: HexId,
}

/// What every road search of one seat starts from, which only a road or a workshop changes: its
/// hubs, its targets and how far each hex is from the nearest target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::games::la_strada) struct SearchBasis {
    /// Where roads start, in [`LaStrada::hubs`] order (spec §5 rule 1).
    pub(super) hubs: Vec<HexId>,
    /// Where the settlements a road may end at are (spec §5 rule 2), in site order (which is hex
    /// order): kept as hexes, since the one use of the set is reading the targets' distance rows
    /// after every road ([`drop_nearest_target`]).
    targets: TargetHexes,
    /// Per hex, the hex distance to the nearest target: 0 exactly on the targets. A road
    /// through a hex needs at least `near - 1` more tiles.
    pub(super) near: Vec<u8>,
    /// Per hex, what the search reads ([`fill_need`]): 0 on a target; [`u8::MAX`] where no
    /// tile can go (off the board and to the table's end too); otherwise the least a road laying
    /// its next tile there still spends: that tile, then the cheapest tiles over the `near - 1`
    /// hexes left (spec §5 rule 7). One table, so that one load decides whether a hex ends the
    /// road, extends it or neither.
    pub(super) need: HexTable,
}

/// [`SearchBasis::need`] from the distances `near` and the search's `board`, over the hexes
/// `near` covers (the rest of `need` stays [`u8::MAX`]). Written as saturating byte arithmetic and selects, without branches, so that it compiles to
/// vector instructions (it runs after every road).
fn fill_need(need: &mut [u8], near: &[u8], board: &[u8]) {
    const _: () = assert!(
        Terrain::MIN_TILE_COST == 2,
        "to_target doubles the distance"
    );
    for ((need, near), hex) in need.iter_mut().zip(near).zip(board) {
        // The cheapest tiles over the hexes after this one: MIN_TILE_COST each (255 far away).
        let after = near.saturating_sub(1);
        let to_target = after.saturating_add(after);
        // This hex's tile, then those: 255 (never within budget) when it does not fit a byte.
        let through = (hex >> 2).saturating_add(to_target);
        let open = if *hex == BLOCKED { u8::MAX } else { through };
        *need = if *near == 0 { 0 } else { open };
    }
}

/// Per hex, the distance to the nearest of `targets` (255 everywhere without one), then 255
/// off the board (see [`crate::games::la_strada::data::MapData::exits`]) and up to the padded
/// row's width ([`crate::games::la_strada::data::MapData::row_width`]).
fn nearest_targets(targets: &[HexId]) -> Vec<u8> {
    let mut near = vec![u8::MAX; MAP.row_width()];
    // Block by block of the padded distance rows, the minimum over every target's row is kept
    // in registers and stored once.
    for (block, nearest) in near.chunks_exact_mut(DISTANCE_BLOCK).enumerate() {
        fill_nearest_block(nearest, block, targets);
    }
    near
}

/// [`nearest_targets`] in place after one target, whose padded distance row is `removed`, left the
/// set that `near` was built from (`targets` no longer holds it), after every road (spec §5
/// rule 2): only a hex the removed target was nearest to can be farther now, so only the blocks
/// holding such a hex are rebuilt (on the standin map a road touches 2.4 of its 3 blocks on
/// average, README *Performance*). Returns the blocks it rebuilt, a bit per block (a row has at
/// most 20 on the largest board, [`crate::games::la_strada::data::MAX_RADIUS`]).
fn drop_nearest_target(near: &mut [u8], removed: &[u8], targets: &[HexId]) -> u32 {
    let mut refilled = 0;
    for (block, nearest) in near.chunks_exact_mut(DISTANCE_BLOCK).enumerate() {
        let start = block * DISTANCE_BLOCK;
        // Every row has the table's width (`MapData::row_width`); a mismatch rebuilds.
        let nearest_to_removed = removed
            .get(start..start + DISTANCE_BLOCK)
            .is_none_or(|gone| {
                // Folded without a short cut so that it compiles to vector compares. 255 is
                // "no target": a hex no target reaches stays so.
                nearest.iter().zip(gone).fold(false, |any, (near, gone)| {
                    any | ((near == gone) & (*gone != u8::MAX))
                })
            });
        if nearest_to_removed {
            fill_nearest_block(nearest, block, targets);
            refilled |= 1 << block;
        }
    }
    refilled
}

/// A seat's targets, by hex: inline for a map of up to 32 settlements.
type TargetHexes = SmallVec<[HexId; 32]>;

/// Block `block` of [`nearest_targets`]: the least distance from the `targets` (their
/// hexes) there, stored once.
fn fill_nearest_block(nearest: &mut [u8], block: usize, targets: &[HexId]) {
    let (blocks, blocks_per_row) = MAP.distance_blocks();
    let mut least = [u8::MAX; DISTANCE_BLOCK];
    for target in targets {
        // Every hex has a row, so this always holds; a checked read keeps a mismatch from
        // panicking the replica.
        let Some(distances) = blocks.get(usize::from(*target) * blocks_per_row + block) else {
            continue;
        };
        for (least, distance) in least.iter_mut().zip(distances) {
            *least = (*least).min(*distance);
        }
    }
    nearest.copy_from_slice(&least);
}

/// A bit per byte of `group`, bit `i` set when byte `i` is `value`: the bytes compared as one
/// word, without a branch (see [`LaStrada::empty_plains`]).
fn bytes_equal(group: [u8; 8], value: u8) -> u64 {
    /// Every byte's low seven bits.
    const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    // Zero exactly in the bytes equal to `value`.
    let diff = u64::from_le_bytes(group) ^ u64::from_le_bytes([value; 8]);
    // The top bit of a byte set when the byte is not zero; adding to the low seven bits alone
    // never carries into the next byte.
    let nonzero = (((diff & LOW) + LOW) | diff) & !LOW;
    // The top bits of the equal bytes, moved to the bottom of each byte, then gathered into the
    // top byte by one multiplication (each lands on its own bit, with no carries).
    let equal = (!nonzero & !LOW) >> 7;
    equal.wrapping_mul(0x0102_0408_1020_4080) >> 56
}

/// Entries of a per-hex table of the search ([`HexTable`]): a power of two past every hex id of
/// the largest board and the off-board id, so that an id masked by [`slot`] indexes it without a
/// bounds check (the search reads these tables at every step).
pub(super) const HEX_TABLE: usize = (MAX_HEXES + 1).next_power_of_two();

/// A per-hex table of the search: the board, or a seat's [`SearchBasis::need`].
pub(super) type HexTable = Box<[u8; HEX_TABLE]>;

/// Where `hex` sits in a [`HexTable`] (its id, which is always below [`HEX_TABLE`]).
#[inline(always)]
pub(super) fn slot(hex: HexId) -> usize {
    usize::from(hex) & (HEX_TABLE - 1)
}

/// A hex of the search's board that takes no tile: a site (ruling A15), a workshop or a tile
/// (spec §5 rule 3). Any other hex holds [`board_hex`] of the tile it would take.
pub(super) const BLOCKED: u8 = 0;

/// A hex that takes a tile of supply index `kind` costing `cost` (spec §5 rules 6-7), packed in
/// one byte so the search reads one table: the cost above two bits of kind. Never [`BLOCKED`]:
/// every tile costs something.
const fn board_hex(kind: usize, cost: u32) -> u8 {
    ((cost as u8) << 2) | kind as u8
}

/// What the road search derives from the state and keeps between searches: per seat its
/// [`SearchBasis`], and the board as the search reads it (one byte per hex, see [`board_hex`]).
/// Built on first use, then kept in step by [`LaStrada::note_road_built`] and
/// [`LaStrada::note_workshop_placed`]. It only saves work: it is never serialized (a decoded
/// state starts without it and rebuilds it), holds nothing that is not on the table, and the
/// search lists the same roads with or without it.
#[derive(Clone, Default)]
pub(in crate::games::la_strada) struct SearchCache {
    board: OnceLock<HexTable>,
    seats: [OnceLock<SearchBasis>; MAX_PLAYERS],
    /// Per seat, what the last search of [`LaStrada::can_still_build`] found.
    known: [Known; MAX_PLAYERS],
}

/// What [`LaStrada::can_still_build`] last found for a seat.
#[derive(Clone, Debug, Default)]
enum Known {
    /// No search yet, or what it found no longer holds.
    #[default]
    Nothing,
    /// A road that was legal; checked before it answers.
    Road(Witness),
    /// No road within budget `within`, while the seat has gained no hub and no target since.
    NoRoad { within: u32 },
}

impl Known {
    /// The seat may have roads it did not have: a "no road" answer no longer holds (a road
    /// found still does, once checked).
    fn forget_no_road(&mut self) {
        if matches!(self, Known::NoRoad { .. }) {
            *self = Known::Nothing;
        }
    }
}

impl SearchCache {
    /// `seat`'s hubs or targets changed in a way the hooks do not follow step by step: its
    /// basis is rebuilt on next use, and it may have roads it did not have.
    fn rebuild_seat(&mut self, seat: usize) {
        self.seats[seat].take();
        self.known[seat].forget_no_road();
    }

    /// `hexes` now take no tile (spec §5 rule 3): on the board and in every seat's
    /// [`SearchBasis::need`].
    fn block(&mut self, hexes: &[HexId]) {
        if let Some(board) = self.board.get_mut() {
            for hex in hexes {
                board[slot(*hex)] = BLOCKED;
            }
        }
        for basis in self.seats.iter_mut().filter_map(OnceLock::get_mut) {
            for hex in hexes {
                basis.need[slot(*hex)] = u8::MAX;
            }
        }
    }
}

impl std::fmt::Debug for SearchCache {
    /// Derived data: a state prints the same whatever was cached.
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("SearchCache")
    }
}

#[cfg(test)]
mod tests {
    use super::{BLOCKED, board_hex, bytes_equal, drop_nearest_target, nearest_targets};
    use crate::games::la_strada::LaStrada;
    use crate::games::la_strada::data::{MAP, Terrain};
    use crate::games::{Engine, Seed};
    use crate::proto::la_strada::v1 as pb;

    #[test]
    fn dropping_targets_one_by_one_keeps_the_nearest_distances_exact() {
        // Every settlement a target, then removed one at a time in an order drawn from the
        // seed: after each removal the table updated in place equals one built afresh (the
        // search's pruning reads it, spec §5 rule 7), down to no target at all.
        for seed in 0..32u64 {
            let config = pb::Config {
                players: 3,
                ..pb::Config::default()
            };
            let state = LaStrada::setup(&config, &Seed::from_u64(seed)).expect("setup");
            let sites = &state.sites;
            let mut targets: Vec<_> = sites.iter().map(|site| site.hex).collect();
            let mut near = nearest_targets(&targets);
            let mut order: Vec<usize> = (0..sites.len()).collect();
            order.sort_by_key(|index| (*index as u64 ^ seed).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            for (removed, site) in order.into_iter().enumerate() {
                let hex = sites[site].hex;
                targets.retain(|target| *target != hex);
                let row = MAP.padded_distances_from(hex);
                drop_nearest_target(&mut near, row, &targets);
                assert_eq!(
                    near,
                    nearest_targets(&targets),
                    "seed {seed}, after removing {} sites",
                    removed + 1
                );
            }
            assert!(near.iter().all(|distance| *distance == u8::MAX));
        }
    }

    #[test]
    fn the_search_board_packs_every_tile() {
        // Every tile's kind and cost (spec §5 rules 6-7) survive the packing, and no tile reads
        // as blocked.
        for terrain in [Terrain::Plains, Terrain::Forest, Terrain::Hill] {
            let kind = terrain.tile_index().expect("a tile terrain");
            let packed = board_hex(kind, terrain.cost());
            assert_ne!(packed, BLOCKED);
            assert_eq!(usize::from(packed & 3), kind);
            assert_eq!(u32::from(packed >> 2), terrain.cost());
            assert!(terrain.cost() >= Terrain::MIN_TILE_COST);
        }
    }

    #[test]
    fn bytes_equal_marks_exactly_the_equal_bytes() {
        // The word trick against its definition, on groups that mix equal bytes with bytes one
        // bit away (0x80 and 0x7f included, where a carry or a borrow would show).
        let values = [0u8, 1, 0x7f, 0x80, 0x81, 0xfe, 0xff, 0x42];
        for value in values {
            for pattern in 0..=255u8 {
                let group: [u8; 8] = std::array::from_fn(|i| {
                    if pattern & (1 << i) != 0 {
                        value
                    } else {
                        values[(i + usize::from(pattern)) % values.len()] ^ 1
                    }
                });
                let expected = group
                    .iter()
                    .enumerate()
                    .map(|(i, byte)| u64::from(*byte == value) << i)
                    .sum::<u64>();
                assert_eq!(
                    bytes_equal(group, value),
                    expected,
                    "{group:?} against {value}"
                );
            }
        }
    }
}
