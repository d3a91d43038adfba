//! Medici vs Strozzi (Knizia, 2006), two players: seat 0 is Medici, seat 1 is Strozzi.
//!
//! Spec: `medici-vs-strozzi.md` Part B; project rules: `docs/rules/medici-vs-strozzi.md`.
//! Where the rules live:
//! - `data.rs` + `board.json`: tiles (B1) and the PROVISIONAL harbour / track data (B2, M1);
//! - `rules.rs`: the turn loop — draw cap, offer, buy or decline, load or discard, round end
//!   (B4, B6, M3–M9, M13);
//! - `scoring.rs`: round scoring and the end of the game (B7, B8, M2, M10–M12);
//! - this file: the state, setup (B3), the [`Engine`] plumbing, views and invariants.

mod data;
mod rules;
mod scoring;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::games::common::{GameRng, top_group};
use crate::games::{ActionError, ConfigError, Engine, LegalAction, Outcome, Seat, Seed, Viewer};
use crate::proto::v1::medici_vs_strozzi as pb;

pub use data::{Board, Goods, Tile, TrackSpec};

/// The Medici player's seat; it starts round 1 (spec B4) and markers move toward it by
/// decreasing (negative positions are on the Medici side).
pub const MEDICI: Seat = 0;
/// The Strozzi player's seat; it starts rounds 2 and 3 (spec B4, B8).
pub const STROZZI: Seat = 1;
const SEATS: u32 = 2;
/// Ship capacities, the same for both players (spec B1).
pub const SHIP_CAPACITIES: [u32; data::SHIPS_PER_PLAYER] = [3, 4, 5];
/// Starting money (spec B1, B3).
pub const STARTING_MONEY: i64 = 300;
/// The game lasts three rounds (spec B8).
pub const ROUNDS: u32 = 3;
/// The price cap used when the config leaves `max_price` at 0 (spec B9 M9).
pub const DEFAULT_MAX_PRICE: u32 = 999;

/// How round-end scoring moves a marker that both players push (spec B9 M2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum MarkerMovement {
    /// Medici's steps minus Strozzi's, applied once, clamped at the ends (the recommended ruling).
    Net,
    /// Medici's steps first, clamped, then Strozzi's, clamped.
    Sequential,
}

/// The create-time options, validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    pub marker_movement: MarkerMovement,
    pub max_price: u32,
}

impl Settings {
    fn from_config(config: &pb::Config) -> Result<Settings, ConfigError> {
        let marker_movement = match pb::MarkerMovement::try_from(config.marker_movement) {
            Ok(pb::MarkerMovement::Unspecified | pb::MarkerMovement::Net) => MarkerMovement::Net,
            Ok(pb::MarkerMovement::Sequential) => MarkerMovement::Sequential,
            Err(_) => {
                return Err(ConfigError(format!(
                    "unknown marker_movement {} (spec B9 M2: NET or SEQUENTIAL)",
                    config.marker_movement
                )));
            }
        };
        let max_price = if config.max_price == 0 {
            DEFAULT_MAX_PRICE
        } else {
            config.max_price
        };
        Ok(Settings {
            marker_movement,
            max_price,
        })
    }
}

/// One ship. It has no harbour while empty; its first lot places it (spec B4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ship {
    pub capacity: u32,
    pub harbour: Option<u32>,
    pub tiles: Vec<Tile>,
}

impl Ship {
    fn empty(capacity: u32) -> Ship {
        Ship {
            capacity,
            harbour: None,
            tiles: Vec::new(),
        }
    }

    pub fn free_space(&self) -> usize {
        (self.capacity as usize).saturating_sub(self.tiles.len())
    }

    pub fn is_full(&self) -> bool {
        self.free_space() == 0
    }

    fn to_proto(&self) -> pb::Ship {
        pb::Ship {
            capacity: self.capacity,
            harbour: self.harbour,
            tiles: self.tiles.iter().map(|t| t.to_proto()).collect(),
        }
    }
}

/// A player's money and ships, plus a ledger proving money moves only by payments and scoring.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Player {
    /// May go negative: unlimited loans, repaid at the end (spec B8).
    pub money: i64,
    /// Ordered by capacity 3, 4, 5.
    pub ships: Vec<Ship>,
    /// Total paid for lots so far.
    paid: i64,
    /// Total received from scoring so far.
    earned: i64,
}

impl Player {
    fn new() -> Player {
        Player {
            money: STARTING_MONEY,
            ships: SHIP_CAPACITIES.iter().map(|&c| Ship::empty(c)).collect(),
            paid: 0,
            earned: 0,
        }
    }

    /// The most tiles one of this player's ships can still take (spec B4, M3).
    pub fn max_free_space(&self) -> usize {
        self.ships.iter().map(Ship::free_space).max().unwrap_or(0)
    }

    /// All three ships are full: this ends the round (spec B6, M8).
    pub fn all_ships_full(&self) -> bool {
        self.ships.iter().all(Ship::is_full)
    }

    /// The ship this player has in `harbour`, if any.
    pub fn ship_in(&self, harbour: u32) -> Option<&Ship> {
        self.ships.iter().find(|s| s.harbour == Some(harbour))
    }

    fn pay(&mut self, amount: u32) {
        self.money -= i64::from(amount);
        self.paid += i64::from(amount);
    }

    fn receive(&mut self, amount: u32) {
        self.money += i64::from(amount);
        self.earned += i64::from(amount);
    }
}

/// Where the current lot stands (spec B4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stage {
    /// The active player draws tiles, then names a price.
    Drawing,
    /// The opponent buys or declines the lot at `price`.
    Deciding {
        price: u32,
    },
    /// `buyer` has paid `price` and loads or discards the lot.
    Loading {
        price: u32,
        buyer: Seat,
    },
    Finished,
}

/// The whole game state. Nothing is hidden from anybody except the RNG, which fixes the order in
/// which tiles come out of the bag (the bag itself is kept sorted and is public-derivable, M14).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MediciVsStrozzi {
    settings: Settings,
    board: Board,
    round: u32,
    stage: Stage,
    /// The player who draws (and prices) the current lot.
    active: Seat,
    /// Tiles drawn for the current lot, in draw order.
    lot: Vec<Tile>,
    /// Tiles still in the bag, sorted.
    bag: Vec<Tile>,
    /// Tiles discarded this round, in discard order (out of play until the round ends, M5).
    discarded: Vec<Tile>,
    players: Vec<Player>,
    /// Marker position per track (same order as `board.tracks`): negative = Medici side.
    markers: Vec<i32>,
    rng: GameRng,
}

/// The other player.
pub fn opponent(seat: Seat) -> Seat {
    crate::games::common::left_of(seat, SEATS)
}

fn seat_name(seat: Seat) -> &'static str {
    if seat == MEDICI { "Medici" } else { "Strozzi" }
}

impl MediciVsStrozzi {
    fn new(settings: Settings, board: Board, seed: &Seed) -> MediciVsStrozzi {
        let markers = vec![0; board.tracks.len()];
        MediciVsStrozzi {
            settings,
            board,
            round: 1,
            stage: Stage::Drawing,
            active: MEDICI,
            lot: Vec::new(),
            bag: data::full_tile_set(),
            discarded: Vec::new(),
            players: (0..SEATS).map(|_| Player::new()).collect(),
            markers,
            rng: GameRng::from_seed(seed),
        }
    }

    pub fn round(&self) -> u32 {
        self.round
    }

    pub fn stage(&self) -> Stage {
        self.stage
    }

    pub fn player(&self, seat: Seat) -> &Player {
        &self.players[seat as usize]
    }

    fn expected_label(&self) -> String {
        match self.to_act() {
            Some(seat) => format!("seat {seat} ({})", seat_name(seat)),
            None => "nobody".into(),
        }
    }

    /// Every tile in play, sorted: must always be the full set of 26 (spec B1).
    fn all_tiles(&self) -> Vec<Tile> {
        let mut tiles: Vec<Tile> = self
            .bag
            .iter()
            .chain(&self.lot)
            .chain(&self.discarded)
            .chain(
                self.players
                    .iter()
                    .flat_map(|p| p.ships.iter().flat_map(|s| &s.tiles)),
            )
            .copied()
            .collect();
        tiles.sort();
        tiles
    }
}

impl Engine for MediciVsStrozzi {
    type Config = pb::Config;
    type Action = pb::Action;
    type Event = pb::Event;
    type View = pb::View;

    const NAME: &'static str = "medici_vs_strozzi";
    const RULES_VERSION: &'static str = "medici_vs_strozzi-1";

    fn setup(config: &pb::Config, seed: &Seed) -> Result<Self, ConfigError> {
        let settings = Settings::from_config(config)?;
        let board = Board::provisional().map_err(ConfigError)?;
        Ok(MediciVsStrozzi::new(settings, board, seed))
    }

    fn seat_count(&self) -> u32 {
        SEATS
    }

    fn to_act(&self) -> Option<Seat> {
        match self.stage {
            Stage::Drawing => Some(self.active),
            Stage::Deciding { .. } => Some(opponent(self.active)),
            Stage::Loading { buyer, .. } => Some(buyer),
            Stage::Finished => None,
        }
    }

    fn legal_actions(&self, seat: Seat) -> Vec<LegalAction<pb::Action>> {
        if self.to_act() != Some(seat) {
            return Vec::new();
        }
        self.legal_for_actor()
    }

    fn with_amount(action: &pb::Action, amount: u64) -> pb::Action {
        match &action.kind {
            Some(pb::action::Kind::OfferLot(_)) => pb::Action {
                kind: Some(pb::action::Kind::OfferLot(pb::OfferLot {
                    price: u32::try_from(amount).unwrap_or(u32::MAX),
                })),
            },
            _ => *action,
        }
    }

    fn apply(&mut self, seat: Seat, action: &pb::Action) -> Result<Vec<pb::Event>, ActionError> {
        let Some(expected) = self.to_act() else {
            return Err(ActionError::GameOver);
        };
        if seat != expected {
            return Err(ActionError::NotYourTurn {
                seat,
                expected: self.expected_label(),
                rule: "§B4",
            });
        }
        let kind = action
            .kind
            .as_ref()
            .ok_or_else(|| ActionError::malformed("action has no kind"))?;
        self.apply_kind(seat, kind)
    }

    fn view(&self, _viewer: Viewer) -> pb::View {
        // Everything but the RNG is public (spec B9 M14), so every viewer sees the same view.
        let (phase, price, buyer) = match self.stage {
            Stage::Drawing => (pb::Phase::Drawing, None, None),
            Stage::Deciding { price } => (pb::Phase::Deciding, Some(price), None),
            Stage::Loading { price, buyer } => (pb::Phase::Loading, Some(price), Some(buyer)),
            Stage::Finished => (pb::Phase::Finished, None, None),
        };
        let draw_limit = match self.stage {
            Stage::Drawing => self.draws_left() as u32,
            _ => 0,
        };
        pb::View {
            round: self.round,
            phase: phase as i32,
            active_seat: self.active,
            lot: self.lot.iter().map(|t| t.to_proto()).collect(),
            price,
            buyer,
            draw_limit,
            players: self
                .players
                .iter()
                .enumerate()
                .map(|(seat, p)| pb::PlayerView {
                    seat: seat as u32,
                    money: p.money,
                    ships: p.ships.iter().map(Ship::to_proto).collect(),
                })
                .collect(),
            tracks: self
                .board
                .tracks
                .iter()
                .zip(&self.markers)
                .map(|(track, &marker)| pb::Track {
                    harbour: track.harbour,
                    goods: track.goods.to_proto() as i32,
                    marker,
                    spaces_per_side: track.spaces_per_side,
                    bonus_by_distance: track.bonus_by_distance.clone(),
                })
                .collect(),
            harbour_count: self.board.harbour_count(),
            bag_count: self.bag.len() as u32,
            discarded: self.discarded.iter().map(|t| t.to_proto()).collect(),
        }
    }

    fn redact_event(event: &pb::Event, _viewer: Viewer) -> Option<pb::Event> {
        // Drawn tiles are face up and money is public (spec B4, M14): events hide nothing.
        Some(event.clone())
    }

    fn outcome(&self) -> Option<Outcome> {
        if self.stage != Stage::Finished {
            return None;
        }
        // Final score = money (debts included); the richest win, ties share (spec B8).
        let scores: Vec<i64> = self.players.iter().map(|p| p.money).collect();
        let seats: Vec<Seat> = (0..SEATS).collect();
        let winners = top_group(&seats, |a, b| scores[*a as usize].cmp(&scores[*b as usize]));
        Some(Outcome { scores, winners })
    }

    fn resample_hidden(&self, _viewer: Viewer, seed: &Seed) -> Self {
        // Only the draw order is hidden, from everybody alike; it lives in the RNG alone.
        let mut resampled = self.clone();
        resampled.rng = GameRng::from_seed(seed);
        resampled
    }

    fn check_invariants(&self) -> Result<(), String> {
        if !(1..=ROUNDS).contains(&self.round) {
            return Err(format!("round {} outside 1..={ROUNDS}", self.round));
        }
        if self.all_tiles() != data::full_tile_set() {
            return Err(format!(
                "the {} tiles are not conserved across bag, lot, ships and discards",
                data::TILE_COUNT
            ));
        }
        if !self.bag.is_sorted() {
            return Err("the bag must be kept sorted (its order is hidden in the RNG)".into());
        }
        if self.players.len() != SEATS as usize || self.active >= SEATS {
            return Err("there must be exactly two players".into());
        }
        for (seat, player) in self.players.iter().enumerate() {
            let capacities: Vec<u32> = player.ships.iter().map(|s| s.capacity).collect();
            if capacities != SHIP_CAPACITIES {
                return Err(format!(
                    "seat {seat}: ships {capacities:?}, expected 3, 4, 5"
                ));
            }
            let mut harbours = Vec::new();
            for ship in &player.ships {
                if ship.tiles.len() > ship.capacity as usize {
                    return Err(format!("seat {seat}: ship {} overloaded", ship.capacity));
                }
                match ship.harbour {
                    None if !ship.tiles.is_empty() => {
                        return Err(format!(
                            "seat {seat}: loaded ship {} has no harbour",
                            ship.capacity
                        ));
                    }
                    Some(_) if ship.tiles.is_empty() => {
                        return Err(format!(
                            "seat {seat}: empty ship {} is placed",
                            ship.capacity
                        ));
                    }
                    Some(h) if h >= self.board.harbour_count() => {
                        return Err(format!("seat {seat}: ship in unknown harbour {h}"));
                    }
                    Some(h) if harbours.contains(&h) => {
                        return Err(format!("seat {seat}: two ships in harbour {h}"));
                    }
                    Some(h) => harbours.push(h),
                    None => {}
                }
            }
            if player.money != STARTING_MONEY - player.paid + player.earned {
                return Err(format!(
                    "seat {seat}: money changed other than by payments and scoring"
                ));
            }
            if player.paid < 0 || player.earned < 0 {
                return Err(format!("seat {seat}: negative payment or income"));
            }
        }
        for (track, &marker) in self.board.tracks.iter().zip(&self.markers) {
            if marker.unsigned_abs() > track.spaces_per_side {
                return Err(format!(
                    "marker {marker} off a track of {} spaces",
                    track.spaces_per_side
                ));
            }
        }
        if self.markers.len() != self.board.tracks.len() {
            return Err("one marker per track".into());
        }
        let active = self.player(self.active);
        match self.stage {
            Stage::Drawing => {
                if self.lot.len() > self.draw_cap() {
                    return Err(format!("lot of {} exceeds the draw cap", self.lot.len()));
                }
                if self.lot.is_empty() && self.draw_cap() == 0 {
                    return Err("the active player cannot draw: the round should have ended".into());
                }
            }
            Stage::Deciding { price } | Stage::Loading { price, .. } => {
                if self.lot.is_empty() || self.lot.len() > rules::MAX_DRAW {
                    return Err(format!("an offered lot of {} tiles", self.lot.len()));
                }
                if self.lot.len() > active.max_free_space()
                    && matches!(self.stage, Stage::Deciding { .. })
                {
                    return Err("the offered lot is larger than any of the drawer's ships".into());
                }
                if price > self.settings.max_price {
                    return Err(format!("price {price} above the cap"));
                }
            }
            Stage::Finished => {
                if self.round != ROUNDS || !self.lot.is_empty() {
                    return Err("finished before round 3 was scored".into());
                }
            }
        }
        Ok(())
    }
}
