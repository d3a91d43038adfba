//! Medici vs Strozzi (Knizia, 2006), two players: seat 0 is Medici, seat 1 is Strozzi.
//!
//! Spec: `medici-vs-strozzi.md` Part B; project rules: `docs/rules/medici-vs-strozzi.md`.
//! Where each rule lives (the same layout in every game folder):
//! - `mod.rs` (here): the state, setup (B3) and the [`Engine`] implementation, which delegates;
//! - `rules.rs`: the turn loop — draw cap, offer, buy or decline, load or discard, round end
//!   (B4, B6, M3–M9, M13);
//! - `scoring.rs`: round scoring and the end of the game (B7, B8, M2, M10–M12);
//! - `view.rs`: what each viewer sees, and event redaction (nothing but the draw order is hidden,
//!   M14);
//! - `wire.rs`: protobuf conversions (`to_pb` / `from_pb`) and the action and event builders;
//! - `invariants.rs`: the spec's invariants, checked after every action in tests;
//! - `data.rs` + `board.json`: tiles (B1) and the PROVISIONAL harbour / track data (B2, M1),
//!   bundled with `include_str!` and parsed and validated once;
//! - `tests/`: the spec's worked examples, each rule and ruling, illegal actions, hidden
//!   information and random play.

mod data;
mod invariants;
mod rules;
mod scoring;
#[cfg(test)]
mod tests;
mod view;
mod wire;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::games::common::{GameRng, top_group};
use crate::games::{
    ActionError, Chance, ConfigError, Engine, GameType, Information, LegalAction, Outcome,
    Redaction, Seat, Seed, Viewer,
};
use crate::proto::medici_vs_strozzi::v1 as pb;

pub(crate) use data::harbour_name;
use data::{Board, Goods, Tile, TrackSpec};

/// The Medici player's seat; it starts round 1 (spec B4) and markers move toward it by
/// decreasing (negative positions are on the Medici side).
pub(crate) const MEDICI: Seat = 0;
/// The Strozzi player's seat; it starts rounds 2 and 3 (spec B4, B8).
pub(crate) const STROZZI: Seat = 1;
const SEATS: u32 = 2;
/// Ship capacities, the same for both players (spec B1).
pub(crate) const SHIP_CAPACITIES: [u32; data::SHIPS_PER_PLAYER] = [3, 4, 5];
/// Starting money (spec B1, B3).
pub(crate) const STARTING_MONEY: i64 = 300;
/// The game lasts three rounds (spec B8).
pub(crate) const ROUNDS: u32 = 3;
/// The price cap used when the config leaves `max_price` at 0 (spec B9 M9).
pub(crate) const DEFAULT_MAX_PRICE: u32 = 999;

/// How round-end scoring moves a marker that both players push (spec B9 M2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum MarkerMovement {
    /// Medici's steps minus Strozzi's, applied once, clamped at the ends (the recommended ruling).
    Net,
    /// Medici's steps first, clamped, then Strozzi's, clamped.
    Sequential,
}

/// The create-time options, validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Settings {
    pub marker_movement: MarkerMovement,
    pub max_price: u32,
}

/// One ship. It has no harbour while empty; its first lot places it (spec B4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Ship {
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

    /// How many more tiles fit on this ship.
    pub fn free_space(&self) -> usize {
        (self.capacity as usize).saturating_sub(self.tiles.len())
    }

    /// No tile fits any more.
    pub fn is_full(&self) -> bool {
        self.free_space() == 0
    }
}

/// A player's money and ships, plus a ledger proving money moves only by payments and scoring.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Player {
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
pub(crate) enum Stage {
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

/// Why a round ended (spec B6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RoundEnd {
    /// A player's three ships are all full (M8).
    ShipsFull,
    /// The bag is empty (M7).
    BagEmpty,
}

/// The whole game state. Nothing is hidden from anybody except the RNG, which fixes the order in
/// which tiles come out of the bag (the bag itself is kept sorted and is public-derivable, M14).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MediciVsStrozzi {
    settings: Settings,
    /// The printed board (data.rs), shared by every copy of the state: a replica copies the state
    /// for each move it applies, and the board never changes during a game. Snapshots hold it
    /// as before (`Arc` serializes as what it points to).
    board: Arc<Board>,
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
pub(crate) fn opponent(seat: Seat) -> Seat {
    crate::games::common::left_of(seat, SEATS)
}

fn seat_name(seat: Seat) -> &'static str {
    if seat == MEDICI { "Medici" } else { "Strozzi" }
}

impl MediciVsStrozzi {
    fn new(settings: Settings, board: Arc<Board>, seed: &Seed) -> MediciVsStrozzi {
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

    /// The current round, 1..=3 (spec B8).
    #[cfg(test)]
    pub(crate) fn round(&self) -> u32 {
        self.round
    }

    /// Where the current lot stands.
    #[cfg(test)]
    pub(crate) fn stage(&self) -> Stage {
        self.stage
    }

    /// The money and ships of `seat`.
    pub(crate) fn player(&self, seat: Seat) -> &Player {
        &self.players[seat as usize]
    }

    fn expected_label(&self) -> String {
        match self.to_act() {
            Some(seat) => format!("seat {seat} ({})", seat_name(seat)),
            None => "nobody".into(),
        }
    }
}

impl Engine for MediciVsStrozzi {
    type Config = pb::Config;
    type Action = pb::Action;
    type Event = pb::Event;
    type View = pb::View;

    const GAME_TYPE: GameType = GameType {
        name: "medici_vs_strozzi",
        display_name: "Medici vs Strozzi",
        min_seats: SEATS,
        max_seats: SEATS,
        chance: Chance::Seeded,
        information: Information::Perfect,
    };
    const RULES_VERSION: &'static str = "medici_vs_strozzi-1";

    fn config_for(_players: u32) -> pb::Config {
        pb::Config::default()
    }

    fn setup(config: &pb::Config, seed: &Seed) -> Result<Self, ConfigError> {
        let settings = Settings::from_pb(config)?;
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

    fn amount_field(action: &pb::Action) -> Option<&'static str> {
        match &action.kind {
            Some(pb::action::Kind::OfferLot(_)) => Some("offer_lot.price"),
            _ => None,
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

    fn view(&self, viewer: Viewer) -> pb::View {
        self.build_view(viewer)
    }

    fn redact_event(event: &pb::Event, viewer: Viewer) -> Redaction<pb::Event> {
        view::redact(event, viewer)
    }

    // `redact_action` keeps the default (public): no action carries a secret. Draws are blind,
    // prices are announced aloud, buying, declining, loading and discarding happen on the open
    // table (spec B4, M14).

    fn opening_events(&self) -> Vec<pb::Event> {
        // Setup (spec B3) starts round 1 with Medici to draw (B4); nothing is drawn yet.
        vec![wire::round_started(self.round, self.active)]
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

    fn default_action(&self) -> Option<pb::Action> {
        self.default_for_actor()
    }

    fn same_undisclosed(&self, other: &Self) -> bool {
        // The RNG, which picks each tile drawn: the bag's contents are public (spec M14), only
        // which tile comes out next is not.
        self.rng == other.rng
    }

    fn resample_hidden(&self, _viewer: Viewer, seed: &Seed) -> Self {
        // Only the draw order is hidden, from everybody alike; it lives in the RNG alone.
        let mut resampled = self.clone();
        resampled.rng = GameRng::from_seed(seed);
        resampled
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.invariants()
    }
}
