//! The board data (spec §2, §10): hex geometry and the map, bundled as `standin_map.json`.
//!
//! The printed map is unknown, so the map is DATA: `standin_map.json` holds the spec's §10
//! stand-in (labelled provisional there). Dropping in another file with the same shape (any radius,
//! six triangular pieces, the start piece holding the centre) changes the board without touching
//! the rules.
//!
//! Loading follows the policy of every game's data: the file is parsed and validated once, into a
//! `LazyLock<Result<_, String>>` ([`bundled_map`]), and setup refuses a game with a typed error
//! when the data is unusable instead of panicking. The rules then read the map through [`MAP`].

use std::ops::Deref;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

/// Axial coordinates (q, r), pointy-top hexes, r growing southward (spec §10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Axial {
    pub q: i32,
    pub r: i32,
}

impl Axial {
    pub const ORIGIN: Axial = Axial { q: 0, r: 0 };

    pub fn new(q: i32, r: i32) -> Self {
        Axial { q, r }
    }

    /// The neighbour in direction `d` (0..6).
    pub fn step(self, d: usize) -> Axial {
        let (dq, dr) = DIRECTIONS[d % 6];
        Axial {
            q: self.q + dq,
            r: self.r + dr,
        }
    }

    fn scaled_add(self, d: usize, times: i32) -> Axial {
        let (dq, dr) = DIRECTIONS[d % 6];
        Axial {
            q: self.q + dq * times,
            r: self.r + dr * times,
        }
    }

    /// Hex distance from the centre: max(|q|, |r|, |s|) with s = -q-r.
    /// Computed in i64 so that any coordinate a client sends is safe.
    pub fn ring(self) -> i64 {
        let (q, r) = (i64::from(self.q), i64::from(self.r));
        q.abs().max(r.abs()).max((q + r).abs())
    }

    pub fn distance(self, other: Axial) -> i64 {
        let (dq, dr) = (
            i64::from(self.q) - i64::from(other.q),
            i64::from(self.r) - i64::from(other.r),
        );
        dq.abs().max(dr.abs()).max((dq + dr).abs())
    }
}

/// Directions by index (spec §10): 0 E, 1 NE, 2 NW, 3 W, 4 SW, 5 SE. The opposite of d is d+3.
pub const DIRECTIONS: [(i32, i32); 6] = [(1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1)];

/// Index of a hex on the board (row-major: by r, then q).
pub type HexId = u16;

/// Terrain of a board hex (spec §1, §10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Terrain {
    Plains,
    Forest,
    Hill,
    /// A settlement site: never takes a road tile.
    Site,
}

impl Terrain {
    fn from_letter(letter: &str) -> Option<Terrain> {
        match letter {
            "P" => Some(Terrain::Plains),
            "F" => Some(Terrain::Forest),
            "H" => Some(Terrain::Hill),
            "C" => Some(Terrain::Site),
            _ => None,
        }
    }

    /// Index into a road-tile supply (plains, forest, hill); `None` for a site.
    pub const fn tile_index(self) -> Option<usize> {
        match self {
            Terrain::Plains => Some(0),
            Terrain::Forest => Some(1),
            Terrain::Hill => Some(2),
            Terrain::Site => None,
        }
    }

    /// The cheapest road tile (spec §5 rule 7): plains, 2.
    pub const MIN_TILE_COST: u32 = 2;

    /// Resource cost of a road tile on this terrain (spec §5 rule 7): plains 2, forest 3, hill 4.
    pub const fn cost(self) -> u32 {
        match self {
            Terrain::Plains => 2,
            Terrain::Forest => 3,
            Terrain::Hill => 4,
            Terrain::Site => 0,
        }
    }
}

/// Settlement types (spec §1, §8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum SettlementKind {
    Hamlet,
    Village,
    Town,
    City,
}

impl SettlementKind {
    /// Gold to a lone merchant (spec §8): 2, 3, 4, 5.
    pub fn base_value(self) -> u32 {
        match self {
            SettlementKind::Hamlet => 2,
            SettlementKind::Village => 3,
            SettlementKind::Town => 4,
            SettlementKind::City => 5,
        }
    }
}

#[derive(Deserialize)]
struct MapFile {
    provisional: bool,
    name: String,
    radius: i32,
    start_piece: String,
    centre: String,
    pieces: Vec<PieceFile>,
    settlements: SettlementCounts,
    sides: Vec<SideFile>,
    seating: Vec<SeatingFile>,
}

#[derive(Deserialize)]
struct PieceFile {
    name: String,
    rows: Vec<String>,
}

#[derive(Deserialize)]
struct SettlementCounts {
    city: usize,
    town: usize,
    village: usize,
    hamlet: usize,
}

#[derive(Deserialize)]
struct SideFile {
    name: String,
}

#[derive(Deserialize)]
struct SeatingFile {
    players: u32,
    sides: Vec<String>,
}

/// One land piece: its terrain by local cell, rows as in the data file.
#[derive(Clone, Debug)]
pub struct Piece {
    pub name: String,
    /// `rows[n - 1][b]` is the terrain of local cell (a = n - b, b).
    pub rows: Vec<Vec<Terrain>>,
}

/// The map: geometry plus the piece data, validated.
#[derive(Debug)]
pub struct MapData {
    pub name: String,
    pub provisional: bool,
    pub radius: i32,
    /// The board's hexes in id order (row-major).
    pub hexes: Vec<Axial>,
    /// `neighbours[h][d]`: the board hex next to `h` in direction `d`.
    pub neighbours: Vec<[Option<HexId>; 6]>,
    /// `neighbours` for the road search (spec §11), with [`MapData::off_board`] for no hex: the
    /// search's per-hex tables hold one more entry there, marked as taking no tile, so its
    /// inner loop needs no test for the board's edge.
    pub exits: Vec<[HexId; 6]>,
    /// Hex ids by (r + radius) * (2 radius + 1) + (q + radius), for coordinate lookup.
    grid: Vec<Option<HexId>>,
    /// `distances[a * row_width() + b]`: the hex distance between hexes `a` and `b`, capped at
    /// 255 (the road search's lower bound on the tiles still needed, spec §11); each row is
    /// padded with 255 (no hex) to [`MapData::row_width`].
    distances: Vec<u8>,
    pub pieces: Vec<Piece>,
    /// `piece_hexes[position]`: the board hex under each cell of a piece laid in `position`, in
    /// the order of its cells (`Piece::rows`, row by row), so that laying out a board
    /// ([`MapData::lay_out`], at every setup) copies terrain instead of placing each cell anew.
    /// Every piece has the same shape (checked on loading), so one table serves them all.
    piece_hexes: [Vec<Option<HexId>>; POSITIONS],
    /// Index of the start piece in `pieces` (it holds the centre, spec §2).
    pub start_piece: usize,
    pub centre: Terrain,
    /// The settlement tiles to shuffle onto the sites (spec §1): one entry per tile.
    pub settlement_tiles: Vec<SettlementKind>,
    /// `(players, side names in seat order)`.
    pub seating: Vec<(u32, Vec<String>)>,
}

/// The bundled map (the §10 stand-in), parsed and validated once, or why it is unusable.
static BUNDLED_MAP: LazyLock<Result<MapData, String>> = LazyLock::new(|| {
    MapData::parse(STANDIN_MAP_JSON).map_err(|error| format!("standin_map.json: {error}"))
});

/// The bundled map, or why it is unusable. [`Engine::setup`](crate::games::Engine::setup) checks
/// it first and refuses the game with a `ConfigError` when it does not load, so no game is ever
/// played on a broken map.
pub fn bundled_map() -> Result<&'static MapData, String> {
    BUNDLED_MAP.as_ref().map_err(Clone::clone)
}

/// The map in force, as the rules read it: dereferences to the [`bundled_map`].
///
/// Only the rules of a game that setup built (or a snapshot of one) read it, and setup refuses
/// to build one unless the map loads, so in play it is always the bundled map. Were the data
/// unusable, loading itself would not panic: `MAP` would read as an empty board (no hexes, no
/// pieces, no sites).
pub static MAP: MapInForce = MapInForce;

/// The type of [`MAP`]: a handle that dereferences to the map every game is played on.
#[derive(Debug)]
pub struct MapInForce;

impl Deref for MapInForce {
    type Target = MapData;

    fn deref(&self) -> &MapData {
        match &*BUNDLED_MAP {
            Ok(map) => map,
            Err(_) => &EMPTY_MAP,
        }
    }
}

/// What [`MAP`] reads when the bundled data is unusable (never in a game: see [`MAP`]).
static EMPTY_MAP: MapData = MapData {
    name: String::new(),
    provisional: true,
    radius: 0,
    hexes: Vec::new(),
    neighbours: Vec::new(),
    exits: Vec::new(),
    grid: Vec::new(),
    distances: Vec::new(),
    pieces: Vec::new(),
    piece_hexes: [const { Vec::new() }; POSITIONS],
    start_piece: 0,
    centre: Terrain::Plains,
    settlement_tiles: Vec::new(),
    seating: Vec::new(),
};

/// The §10 stand-in map file, compiled in.
pub const STANDIN_MAP_JSON: &str = include_str!("standin_map.json");

/// The six positions around the centre (spec §10).
pub const POSITIONS: usize = 6;

/// The largest board radius a map file may have.
pub const MAX_RADIUS: i32 = 20;

/// The most hexes a board can have: 3 r (r + 1) + 1 at [`MAX_RADIUS`] (so that per-hex scratch
/// space can live on the stack).
pub const MAX_HEXES: usize = (3 * MAX_RADIUS * (MAX_RADIUS + 1) + 1) as usize;

/// The bytes of a distance row taken at once by the road search: four 16-byte vectors.
pub const DISTANCE_BLOCK: usize = 64;

/// [`MapData::row_width`] for a map of `hexes` hexes.
fn row_width(hexes: usize) -> usize {
    (hexes + 1).next_multiple_of(DISTANCE_BLOCK)
}

impl MapData {
    pub fn parse(json: &str) -> Result<MapData, String> {
        let file: MapFile = serde_json::from_str(json).map_err(|e| e.to_string())?;
        let radius = file.radius;
        if !(2..=MAX_RADIUS).contains(&radius) {
            return Err(format!("radius {radius} out of range"));
        }
        let mut hexes = Vec::new();
        for r in -radius..=radius {
            for q in -radius..=radius {
                let hex = Axial::new(q, r);
                if hex.ring() <= i64::from(radius) {
                    hexes.push(hex);
                }
            }
        }
        let width = (2 * radius + 1) as usize;
        let mut grid: Vec<Option<HexId>> = vec![None; width * width];
        let grid_index = |hex: Axial| -> Option<usize> {
            (hex.ring() <= i64::from(radius))
                .then(|| (hex.r + radius) as usize * width + (hex.q + radius) as usize)
        };
        for (id, hex) in hexes.iter().enumerate() {
            if let Some(slot) = grid_index(*hex) {
                grid[slot] = Some(id as HexId);
            }
        }
        let neighbours = hexes
            .iter()
            .map(|hex| std::array::from_fn(|d| grid_index(hex.step(d)).and_then(|slot| grid[slot])))
            .collect::<Vec<[Option<HexId>; 6]>>();
        let off_board = hexes.len() as HexId;
        let exits = neighbours
            .iter()
            .map(|around| around.map(|hex| hex.unwrap_or(off_board)))
            .collect();
        let padding = row_width(hexes.len()) - hexes.len();
        let distances = hexes
            .iter()
            .flat_map(|a| {
                hexes
                    .iter()
                    .map(|b| a.distance(*b).min(255) as u8)
                    .chain(std::iter::repeat_n(u8::MAX, padding))
            })
            .collect();
        if file.pieces.len() != POSITIONS {
            return Err(format!(
                "{} pieces, expected {POSITIONS}",
                file.pieces.len()
            ));
        }
        let mut pieces = Vec::new();
        for piece in &file.pieces {
            if piece.rows.len() != radius as usize {
                return Err(format!(
                    "piece {} has {} rows, expected {radius}",
                    piece.name,
                    piece.rows.len()
                ));
            }
            let mut rows = Vec::new();
            for (n, row) in piece.rows.iter().enumerate() {
                let cells: Option<Vec<Terrain>> = row
                    .chars()
                    .map(|c| Terrain::from_letter(&c.to_string()))
                    .collect();
                let cells = cells.ok_or(format!(
                    "piece {} row {}: unknown letter",
                    piece.name,
                    n + 1
                ))?;
                if cells.len() != n + 1 {
                    return Err(format!(
                        "piece {} row {} has {} cells",
                        piece.name,
                        n + 1,
                        cells.len()
                    ));
                }
                rows.push(cells);
            }
            pieces.push(Piece {
                name: piece.name.clone(),
                rows,
            });
        }
        let start_piece = pieces
            .iter()
            .position(|p| p.name == file.start_piece)
            .ok_or(format!("start piece {} not found", file.start_piece))?;
        let centre = Terrain::from_letter(&file.centre).ok_or("unknown centre letter")?;
        let counts = &file.settlements;
        let settlement_tiles: Vec<SettlementKind> = [
            (SettlementKind::City, counts.city),
            (SettlementKind::Town, counts.town),
            (SettlementKind::Village, counts.village),
            (SettlementKind::Hamlet, counts.hamlet),
        ]
        .into_iter()
        .flat_map(|(kind, count)| std::iter::repeat_n(kind, count))
        .collect();
        let sites = pieces
            .iter()
            .flat_map(|p| p.rows.iter().flatten())
            .filter(|t| **t == Terrain::Site)
            .count()
            + usize::from(centre == Terrain::Site);
        if sites != settlement_tiles.len() {
            return Err(format!(
                "{sites} sites but {} settlement tiles",
                settlement_tiles.len()
            ));
        }
        let sides: Vec<String> = file.sides.iter().map(|s| s.name.clone()).collect();
        let mut seating = Vec::new();
        for entry in &file.seating {
            if entry.sides.len() != entry.players as usize
                || entry.sides.iter().any(|s| !sides.contains(s))
            {
                return Err(format!(
                    "seating for {} players is inconsistent",
                    entry.players
                ));
            }
            seating.push((entry.players, entry.sides.clone()));
        }
        for players in 2..=4 {
            if !seating.iter().any(|(p, _)| *p == players) {
                return Err(format!("no seating for {players} players"));
            }
        }
        let mut map = MapData {
            name: file.name,
            provisional: file.provisional,
            radius,
            hexes,
            neighbours,
            exits,
            grid,
            distances,
            pieces,
            start_piece,
            centre,
            settlement_tiles,
            seating,
            piece_hexes: Default::default(),
        };
        map.piece_hexes = std::array::from_fn(|position| map.cells_in_position(position));
        Ok(map)
    }

    /// The board hex under each cell of a piece laid in `position` (see
    /// [`MapData::piece_hexes`]): local cell (a = n - b, b) of row n lies n - b steps in the
    /// position's direction and b in the next one from the centre.
    fn cells_in_position(&self, position: usize) -> Vec<Option<HexId>> {
        (1..=self.radius)
            .flat_map(|n| (0..n).map(move |b| (n, b)))
            .map(|(n, b)| {
                self.id_of(
                    Axial::ORIGIN
                        .scaled_add(position, n - b)
                        .scaled_add(position + 1, b),
                )
            })
            .collect()
    }

    /// The id of `hex`, if it is on the board.
    pub fn id_of(&self, hex: Axial) -> Option<HexId> {
        // The grid's square holds the board's hexagon, and `None` in its corners: a coordinate
        // in range picks its cell (decoding every road a client sends asks this per hex).
        let radius = i64::from(self.radius);
        let width = usize::try_from(2 * radius + 1).ok()?;
        let column = usize::try_from(i64::from(hex.q) + radius).ok()?;
        let row = usize::try_from(i64::from(hex.r) + radius).ok()?;
        if column >= width || row >= width {
            return None;
        }
        self.grid.get(row * width + column).copied().flatten()
    }

    pub fn hex(&self, id: HexId) -> Axial {
        self.hexes[id as usize]
    }

    /// The board hex next to `id` in `direction`, if any (the tests walk the board with it).
    #[cfg(test)]
    pub fn neighbour(&self, id: HexId, direction: usize) -> Option<HexId> {
        self.neighbours[id as usize][direction]
    }

    /// The id [`MapData::exits`] gives where there is no hex: one past the last hex.
    pub fn off_board(&self) -> usize {
        self.hexes.len()
    }

    /// The hex distance from `from` to every hex, by hex id (capped at 255); the tests'
    /// reference search reads it.
    #[cfg(test)]
    pub fn distances_from(&self, from: HexId) -> &[u8] {
        &self.padded_distances_from(from)[..self.hexes.len()]
    }

    /// The tests' `MapData::distances_from`, then 255 up to [`MapData::row_width`] (off the
    /// board first): rows of whole blocks, so that a minimum over several rows runs in
    /// registers with no remainder (the road search's distances to the nearest target).
    pub fn padded_distances_from(&self, from: HexId) -> &[u8] {
        let width = self.row_width();
        let start = usize::from(from) * width;
        &self.distances[start..start + width]
    }

    /// The padded distance rows cut into [`DISTANCE_BLOCK`]s, and how many blocks a row has:
    /// block `b` of the row from hex `h` is at `h * blocks_per_row + b`. A block is an array, so
    /// code that takes the minimum over many rows reads each with one bounds check.
    pub fn distance_blocks(&self) -> (&[[u8; DISTANCE_BLOCK]], usize) {
        let (blocks, _) = self.distances.as_chunks::<DISTANCE_BLOCK>();
        (blocks, self.row_width() / DISTANCE_BLOCK)
    }

    /// The length of a padded distance row: the hexes and the off-board entry, rounded up to
    /// whole [`DISTANCE_BLOCK`]s.
    pub fn row_width(&self) -> usize {
        row_width(self.hexes.len())
    }

    /// The direction from `from` to the adjacent `to`, if they are adjacent: one pass over the
    /// row of `from` (building a road asks it at every step).
    pub fn direction_between(&self, from: HexId, to: HexId) -> Option<usize> {
        let around = self.neighbours.get(usize::from(from))?;
        around.iter().position(|next| *next == Some(to))
    }

    /// Lays the pieces out: `arrangement[k]` is the piece (index into `pieces`) in position k.
    /// Returns per hex its terrain and the piece it belongs to (spec §10: local (a, b) of the piece
    /// in position k is the hex `a·DIR[k] + b·DIR[k+1]`; the centre belongs to the start piece).
    pub fn lay_out(&self, arrangement: &[usize; POSITIONS]) -> (Vec<Terrain>, Vec<u8>) {
        let mut terrain = vec![self.centre; self.hexes.len()];
        let mut owner = vec![self.start_piece as u8; self.hexes.len()];
        for (position, piece_index) in arrangement.iter().enumerate() {
            let piece = &self.pieces[*piece_index];
            let cells = piece.rows.iter().flatten();
            for (cell, hex) in cells.zip(&self.piece_hexes[position]) {
                if let Some(id) = hex {
                    terrain[usize::from(*id)] = *cell;
                    owner[usize::from(*id)] = *piece_index as u8;
                }
            }
        }
        (terrain, owner)
    }

    /// The default arrangement of spec §10: pieces in file order in positions 0..5.
    #[cfg(test)]
    pub fn default_arrangement() -> [usize; POSITIONS] {
        std::array::from_fn(|k| k)
    }

    /// Side names for a game of `players`, in seat order.
    pub fn seating_for(&self, players: u32) -> Vec<String> {
        self.seating
            .iter()
            .find(|(p, _)| *p == players)
            .map(|(_, sides)| sides.clone())
            .unwrap_or_default()
    }
}
