//! Component data (spec A2–A4): the 29 ship cards, the 36 progress tiles and the track geometry.
//!
//! None of it has been checked against a physical copy, so all of it is PROVISIONAL and lives in
//! JSON files next to this module (`ships.json`, `progress_tiles.json`, `tracks.json`), compiled in
//! with `include_str!` and parsed once. Replacing a file changes the game without touching the rules
//! code; [`Catalogue::validate`] refuses files that break what the spec does know for certain.

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

/// Number of ship cards in the box (spec A1).
pub const SHIP_CARD_COUNT: usize = 29;
/// Number of progress tiles in the box: 12 per category (spec A1, A4).
pub const PROGRESS_TILE_COUNT: usize = 36;
/// Tiles per category (spec A4).
pub const TILES_PER_CATEGORY: usize = 12;

/// The four cities (spec A2). Index order matches the proto `City` enum minus one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum City {
    Venice,
    Rome,
    Naples,
    Florence,
}

impl City {
    /// The four cities in track order (the order of `Catalogue::tracks`).
    pub const ALL: [City; 4] = [City::Venice, City::Rome, City::Naples, City::Florence];
    /// The three ports, the only places ships go (spec A8.1).
    pub const PORTS: [City; 3] = [City::Venice, City::Rome, City::Naples];

    /// The position of this city in [`City::ALL`] and in per-city tables.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The goods symbol a port's track counts (spec A2); Florence has none.
    pub fn goods(self) -> Option<Goods> {
        match self {
            City::Venice => Some(Goods::Gold),
            City::Rome => Some(Goods::Grain),
            City::Naples => Some(Goods::Cloth),
            City::Florence => None,
        }
    }
}

/// The goods symbols (spec A2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Goods {
    Gold,
    Grain,
    Cloth,
}

impl Goods {
    /// The port whose track this symbol moves (spec A2).
    pub fn port(self) -> City {
        match self {
            Goods::Gold => City::Venice,
            Goods::Grain => City::Rome,
            Goods::Cloth => City::Naples,
        }
    }
}

/// Progress-tile categories (spec A4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    Art,
    Science,
    Architecture,
}

impl Category {
    /// The three categories, in the order final scoring awards them.
    pub const ALL: [Category; 3] = [Category::Art, Category::Science, Category::Architecture];
}

/// One ship card (spec A3).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShipCard {
    pub label: String,
    pub sails: u8,
    pub gold: u8,
    pub cloth: u8,
    pub grain: u8,
    pub scrolls: u8,
    pub progress: bool,
}

impl ShipCard {
    /// How many symbols of `goods` the card shows.
    pub fn goods(&self, goods: Goods) -> u8 {
        match goods {
            Goods::Gold => self.gold,
            Goods::Grain => self.grain,
            Goods::Cloth => self.cloth,
        }
    }
}

/// One progress tile (spec A4): value 1 with a goods symbol, or value 2 without.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgressTile {
    pub category: Category,
    pub value: u8,
    pub goods: Option<Goods>,
}

/// A space that pays coins to a marker standing on it at round end (spec A2, A10).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BonusSpace {
    pub position: u8,
    pub coins: u32,
}

/// One city's track (spec A2): spaces `0..=top`, 0 the starting space.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrackGeometry {
    pub top: u8,
    pub bonus: Vec<BonusSpace>,
}

impl TrackGeometry {
    /// The coins paid by the space at `position`, if it is a bonus space.
    pub fn bonus_at(&self, position: u8) -> Option<u32> {
        self.bonus
            .iter()
            .find(|b| b.position == position)
            .map(|b| b.coins)
    }
}

/// The geometry of the four tracks in one layout.
#[derive(Clone, Debug, Deserialize)]
struct CityTracks {
    venice: TrackGeometry,
    rome: TrackGeometry,
    naples: TrackGeometry,
    florence: TrackGeometry,
}

impl CityTracks {
    fn in_city_order(&self) -> Vec<TrackGeometry> {
        vec![
            self.venice.clone(),
            self.rome.clone(),
            self.naples.clone(),
            self.florence.clone(),
        ]
    }
}

#[derive(Clone, Debug, Deserialize)]
struct Layouts {
    short: CityTracks,
    numbered: CityTracks,
}

#[derive(Debug, Deserialize)]
struct ShipsFile {
    #[allow(dead_code)]
    provisional: bool,
    cards: Vec<ShipCard>,
}

#[derive(Debug, Deserialize)]
struct TilesFile {
    #[allow(dead_code)]
    provisional: bool,
    tiles: Vec<ProgressTile>,
}

#[derive(Debug, Deserialize)]
struct TracksFile {
    #[allow(dead_code)]
    provisional: bool,
    layouts: Layouts,
}

/// Which track layout of `tracks.json` a game uses (Config `track_layout`, spec A13 S1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Layout {
    Short,
    Numbered,
}

/// Everything printed on the components, as one game uses it. A copy lives in each game state, so
/// a snapshot carries the data it was played with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Catalogue {
    pub cards: Vec<ShipCard>,
    pub tiles: Vec<ProgressTile>,
    /// Indexed by [`City::index`].
    pub tracks: Vec<TrackGeometry>,
}

struct Files {
    cards: Vec<ShipCard>,
    tiles: Vec<ProgressTile>,
    layouts: Layouts,
}

static FILES: LazyLock<Result<Files, String>> = LazyLock::new(|| {
    let ships: ShipsFile =
        serde_json::from_str(include_str!("ships.json")).map_err(|e| format!("ships.json: {e}"))?;
    let tiles: TilesFile = serde_json::from_str(include_str!("progress_tiles.json"))
        .map_err(|e| format!("progress_tiles.json: {e}"))?;
    let tracks: TracksFile = serde_json::from_str(include_str!("tracks.json"))
        .map_err(|e| format!("tracks.json: {e}"))?;
    let files = Files {
        cards: ships.cards,
        tiles: tiles.tiles,
        layouts: tracks.layouts,
    };
    for layout in [Layout::Short, Layout::Numbered] {
        files.catalogue(layout).validate()?;
    }
    Ok(files)
});

impl Files {
    fn catalogue(&self, layout: Layout) -> Catalogue {
        let tracks = match layout {
            Layout::Short => &self.layouts.short,
            Layout::Numbered => &self.layouts.numbered,
        };
        Catalogue {
            cards: self.cards.clone(),
            tiles: self.tiles.clone(),
            tracks: tracks.in_city_order(),
        }
    }
}

/// The component data for `layout`, or why the data files are unusable.
pub fn catalogue(layout: Layout) -> Result<Catalogue, String> {
    FILES
        .as_ref()
        .map(|files| files.catalogue(layout))
        .map_err(Clone::clone)
}

impl Catalogue {
    /// Checks what the spec knows for certain about the components (spec A1–A4), so a replaced
    /// data file cannot silently break the rules.
    pub fn validate(&self) -> Result<(), String> {
        if self.cards.len() != SHIP_CARD_COUNT {
            return Err(format!(
                "{} ship cards, expected {SHIP_CARD_COUNT} (spec A1)",
                self.cards.len()
            ));
        }
        for card in &self.cards {
            if !(1..=8).contains(&card.sails) {
                return Err(format!(
                    "card {}: sails {} outside 1..8 (spec A3)",
                    card.label, card.sails
                ));
            }
            if card.scrolls > 2 {
                return Err(format!(
                    "card {}: {} scrolls, at most 2 (spec A3)",
                    card.label, card.scrolls
                ));
            }
        }
        if self.tiles.len() != PROGRESS_TILE_COUNT {
            return Err(format!(
                "{} progress tiles, expected {PROGRESS_TILE_COUNT}",
                self.tiles.len()
            ));
        }
        for category in Category::ALL {
            let count = self.tiles.iter().filter(|t| t.category == category).count();
            if count != TILES_PER_CATEGORY {
                return Err(format!(
                    "{count} {category:?} tiles, expected {TILES_PER_CATEGORY} (spec A4)"
                ));
            }
        }
        for (i, tile) in self.tiles.iter().enumerate() {
            match (tile.value, tile.goods) {
                (1, Some(_)) | (2, None) => {}
                _ => {
                    return Err(format!(
                        "tile {i}: value 1 needs one goods symbol, value 2 none (spec A4)"
                    ));
                }
            }
        }
        if self.tracks.len() != City::ALL.len() {
            return Err("one track per city expected".into());
        }
        for (city, track) in City::ALL.iter().zip(&self.tracks) {
            if track.top == 0 {
                return Err(format!("{city:?}: the track needs spaces above the start"));
            }
            if track.bonus_at(track.top) != Some(15) {
                return Err(format!(
                    "{city:?}: the top space must be the 15-coin bonus space (spec A2)"
                ));
            }
            for (i, bonus) in track.bonus.iter().enumerate() {
                if bonus.position == 0 || bonus.position > track.top {
                    return Err(format!(
                        "{city:?}: bonus space {} off the track",
                        bonus.position
                    ));
                }
                if bonus.coins == 0 || bonus.coins % 5 != 0 {
                    return Err(format!(
                        "{city:?}: bonus {} is not a positive multiple of 5",
                        bonus.coins
                    ));
                }
                if track.bonus[..i]
                    .iter()
                    .any(|b| b.position == bonus.position)
                {
                    return Err(format!(
                        "{city:?}: bonus space {} listed twice",
                        bonus.position
                    ));
                }
            }
        }
        Ok(())
    }
}
