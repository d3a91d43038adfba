//! Components: the goods tiles (confirmed, spec B1) and the harbour board (UNCERTAIN, spec B2 /
//! B9 M1), which is read from the provisional data file `board.json` so that it can be corrected
//! against a physical copy without touching the rules code.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use serde::{Deserialize, Serialize};

/// The goods printed on a tile (spec B1). Gold has no monopoly track and never moves a marker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Goods {
    Dye,
    Fur,
    Spice,
    Cloth,
    Gold,
}

impl Goods {
    /// The four goods that have monopoly tracks (spec B1).
    pub const TRADED: [Goods; 4] = [Goods::Dye, Goods::Fur, Goods::Spice, Goods::Cloth];
}

/// One goods tile. Ordered so that the bag can be kept sorted: its order then carries no
/// information, and the draw order lives only in the RNG.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Tile {
    pub goods: Goods,
    pub value: u32,
}

impl Tile {
    /// A tile of `goods` worth `value`.
    pub const fn new(goods: Goods, value: u32) -> Self {
        Tile { goods, value }
    }
}

/// Values of the six tiles of each traded goods type (spec B1: 0, 1, 2, 3, 4, 4).
const TRADED_VALUES: [u32; 6] = [0, 1, 2, 3, 4, 4];
/// Gold tiles: two of value 5 (spec B1).
const GOLD_TILES: usize = 2;
const GOLD_VALUE: u32 = 5;
/// The number of tiles in the game (spec B1).
pub const TILE_COUNT: usize = 26;

/// All 26 tiles, sorted: the content of a full bag (spec B1, B3).
pub fn full_tile_set() -> Vec<Tile> {
    let mut tiles: Vec<Tile> = Goods::TRADED
        .iter()
        .flat_map(|&goods| {
            TRADED_VALUES
                .iter()
                .map(move |&value| Tile::new(goods, value))
        })
        .chain(std::iter::repeat_n(
            Tile::new(Goods::Gold, GOLD_VALUE),
            GOLD_TILES,
        ))
        .collect();
    tiles.sort();
    tiles
}

/// One monopoly track: which harbour it belongs to, which goods move its marker, and its geometry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrackSpec {
    pub harbour: u32,
    pub goods: Goods,
    /// Spaces on each side of the centre; the marker lives in `-spaces..=spaces`.
    pub spaces_per_side: u32,
    /// Bonus coins by distance from the centre; index 0 = distance 1 (spec B7.3).
    pub bonus_by_distance: Vec<u32>,
}

impl TrackSpec {
    /// The bonus printed on the space `distance` steps from the centre (0 for the centre).
    pub fn bonus_at(&self, distance: u32) -> u32 {
        distance
            .checked_sub(1)
            .and_then(|index| self.bonus_by_distance.get(index as usize))
            .copied()
            .unwrap_or(0)
    }

    /// The position of the track end on the Strozzi side (its negation is the Medici end).
    pub fn end(&self) -> i32 {
        i32::try_from(self.spaces_per_side).unwrap_or(i32::MAX)
    }
}

/// The harbours and their tracks, in data-file order (tracks of harbour 0 first).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Board {
    pub harbour_names: Vec<String>,
    pub tracks: Vec<TrackSpec>,
}

impl Board {
    /// How many harbours the board has.
    pub fn harbour_count(&self) -> u32 {
        self.harbour_names.len() as u32
    }

    /// A harbour as a refusal names it: by the board's name, which the players see, and its
    /// number on the wire, which a client sends ("harbour B (1)").
    pub fn harbour_label(&self, harbour: u32) -> String {
        match self.harbour_names.get(harbour as usize) {
            Some(name) => format!("harbour {name} ({harbour})"),
            None => format!("harbour {harbour}"),
        }
    }

    /// Every harbour as [`Board::harbour_label`] names it: "harbour A (0), harbour B (1) and
    /// harbour C (2)".
    pub fn harbour_list(&self) -> String {
        let labels: Vec<String> = (0..self.harbour_count())
            .map(|harbour| self.harbour_label(harbour))
            .collect();
        match labels.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => labels.concat(),
        }
    }

    /// The board from `board.json`, parsed and validated once.
    pub fn provisional() -> Result<Arc<Board>, String> {
        BOARD.clone()
    }

    /// Parses and validates a board file. `min_harbours` is the number of ships per player: every
    /// ship must be able to find a harbour of its own (spec B4).
    pub fn parse(json: &str, min_harbours: usize) -> Result<Board, String> {
        let file: BoardFile = serde_json::from_str(json).map_err(|e| format!("board.json: {e}"))?;
        if file.harbours.len() < min_harbours {
            return Err(format!(
                "board.json: {} harbours, but each of a player's {min_harbours} ships needs its own",
                file.harbours.len()
            ));
        }
        let mut tracks = Vec::new();
        for (index, harbour) in file.harbours.iter().enumerate() {
            let mut seen = Vec::new();
            for track in &harbour.tracks {
                let at = format!("board.json harbour {}", harbour.name);
                if track.goods == Goods::Gold {
                    return Err(format!("{at}: gold has no monopoly track (spec B1)"));
                }
                if seen.contains(&track.goods) {
                    return Err(format!("{at}: two {:?} tracks", track.goods));
                }
                seen.push(track.goods);
                if track.spaces_per_side == 0 || track.spaces_per_side > 100 {
                    return Err(format!("{at}: spaces_per_side must be 1..=100"));
                }
                let mut bonus_by_distance = vec![0; track.spaces_per_side as usize];
                for (&distance, &coins) in &track.bonus {
                    let slot = distance
                        .checked_sub(1)
                        .and_then(|i| bonus_by_distance.get_mut(i as usize))
                        .ok_or_else(|| {
                            format!("{at}: bonus at distance {distance} is off the track")
                        })?;
                    *slot = coins;
                }
                tracks.push(TrackSpec {
                    harbour: index as u32,
                    goods: track.goods,
                    spaces_per_side: track.spaces_per_side,
                    bonus_by_distance,
                });
            }
        }
        Ok(Board {
            harbour_names: file.harbours.into_iter().map(|h| h.name).collect(),
            tracks,
        })
    }
}

/// The number of ships each player has; the board needs at least this many harbours.
pub const SHIPS_PER_PLAYER: usize = 3;

/// The board data's name for harbour `harbour` ("A"), as every game is set up with it
/// ([`Board::provisional`]): for words about events, which carry the harbour's number.
pub fn harbour_name(harbour: u32) -> Option<&'static str> {
    let board = BOARD.as_ref().ok()?;
    board
        .harbour_names
        .get(harbour as usize)
        .map(String::as_str)
}

static BOARD: LazyLock<Result<Arc<Board>, String>> =
    LazyLock::new(|| Board::parse(include_str!("board.json"), SHIPS_PER_PLAYER).map(Arc::new));

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BoardFile {
    #[allow(dead_code)]
    provisional: bool,
    #[allow(dead_code)]
    note: String,
    harbours: Vec<HarbourFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HarbourFile {
    name: String,
    tracks: Vec<TrackFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TrackFile {
    goods: Goods,
    spaces_per_side: u32,
    #[serde(default)]
    bonus: BTreeMap<u32, u32>,
}
