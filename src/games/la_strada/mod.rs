//! La Strada (Martin Wallace, 2004), 2-4 players: build roads across a hex map from your workshop
//! to settlements, place merchants there, and score gold by settlement size and competition.
//!
//! Spec: the project's rules document `docs/rules/la-strada.md` (sections cited as §N follow the
//! rules specification it was written from). Where each rule lives:
//! - this file: the state and the [`Engine`] impl (dispatch only);
//! - `data.rs` + `standin_map.json`: hex geometry and the map data (the §10 STAND-IN board), parsed
//!   once and validated by a test;
//! - `rules/setup.rs`: setup (§3): the layout draw, placement order, first turn, workshops (§3.5,
//!   §9);
//! - `rules/roads.rs`: hubs and the road rules of §5, one check per rule, and building a road;
//! - `rules/search/`: the enumeration of every legal road (§11) behind the listing, the random
//!   draw and the end tests;
//! - `rules/turns.rs`: the turn sequence (§4), the end of the game (§7, §9) and the stall guard;
//! - `scoring.rs`: gold and winners (§8, §9);
//! - `view.rs`: the view and the (empty) redaction of events and actions;
//! - `wire.rs`: protobuf conversions and event builders;
//! - `invariants.rs`: the spec's invariants, checked by the random-play tests;
//! - `tests/`: the tests by topic.
//!
//! Nothing is hidden once the board is set up: the only secret is the RNG, which is used at
//! setup only (arrangement, settlement tiles, start player). Views, events and actions are the
//! same for every viewer (docs/rules/la-strada.md, "Hidden information").

mod data;
mod invariants;
mod rules;
mod scoring;
#[cfg(test)]
mod tests;
mod view;
mod wire;

use serde::{Deserialize, Serialize};

use self::data::{HexId, MAP, POSITIONS, SettlementKind, Terrain};
use self::rules::SearchCache;
use crate::games::common::GameRng;
use crate::games::{
    ActionError, Chance, ConfigError, Engine, GameType, Information, LegalAction, Outcome,
    Redaction, Seat, Seed, Viewer,
};
use crate::proto::la_strada::v1 as pb;

/// Road tiles per player at the start: plains, forest, hill (spec §1, §3.3).
pub(crate) const STARTING_SUPPLY: [u8; 3] = [18, 8, 5];
/// Road tiles a player owns in all (spec §1: 31): no road is longer.
pub(crate) const TILES_OWNED: usize =
    STARTING_SUPPLY[0] as usize + STARTING_SUPPLY[1] as usize + STARTING_SUPPLY[2] as usize;
/// Merchants per player (spec §1).
pub(crate) const MERCHANTS: u8 = 12;
/// Players per game (spec §1).
pub(crate) const PLAYERS: std::ops::RangeInclusive<u32> = 2..=4;
/// The most players a game has: the length of per-seat tables.
pub(crate) const MAX_PLAYERS: usize = *PLAYERS.end() as usize;

/// The curve face's turn (spec §5 rule 5, ruling A2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum CurveRule {
    Gentle,
    Sharp,
    Both,
}

/// Budget of the 3-4 player end test (spec §7, ruling A5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum EndBudgetRule {
    /// 10, the resource cap.
    Cap,
    /// What the player would hold this turn: min(10, resources + 6).
    Current,
}

/// Which workshops the spacing rule keeps apart (spec §3.5, ruling A7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum WorkshopSpacingRule {
    OtherPlayers,
    All,
}

/// The create-time options, decoded from [`pb::Config`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Options {
    pub players: u32,
    pub curve: CurveRule,
    pub end_budget: EndBudgetRule,
    pub workshop_spacing: WorkshopSpacingRule,
    /// 2-player game: the first workshop placer also takes the first turn (ruling A10 option).
    pub first_placer_starts: bool,
}

/// What stands on a board hex besides its printed terrain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Occupant {
    Empty,
    Workshop(Seat),
    Tile(PlacedTile),
}

/// A road tile on the board: its owner and its two road ends (spec §5 rule 5, §10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PlacedTile {
    pub owner: Seat,
    /// Direction from this hex back toward the road's hub.
    pub edge_in: u8,
    /// Direction on toward the road's target.
    pub edge_out: u8,
}

impl PlacedTile {
    /// Straight when the ends are opposite (spec §10), otherwise the curve face.
    pub fn is_straight(&self) -> bool {
        (self.edge_out + 6 - self.edge_in) % 6 == 3
    }
}

/// A settlement site with its tile (spec §3.2) and who is connected to it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Site {
    pub hex: HexId,
    pub kind: SettlementKind,
    /// Seats with a merchant here, in order of arrival (spec §6).
    pub merchants: SiteSeats,
    /// 2-player game: seats connected without a merchant (spec §9, ruling A12).
    pub visitors: SiteSeats,
}

/// The seats on one settlement: at most one per player, so held inline (a road adds one, and
/// building roads is the engine's hot path); serialized as a plain sequence.
pub(crate) type SiteSeats = smallvec::SmallVec<[Seat; MAX_PLAYERS]>;

impl Site {
    /// Whether `seat` has reached this settlement (it is then one of its hubs, spec §5).
    #[inline]
    pub fn is_connected(&self, seat: Seat) -> bool {
        holds(&self.merchants, seat) | holds(&self.visitors, seat)
    }
}

/// Whether `seats` holds `seat`: a plain loop over a few seats that inlines into the road
/// search, which asks it of every settlement.
#[inline]
fn holds(seats: &[Seat], seat: Seat) -> bool {
    let mut found = false;
    for held in seats {
        found |= *held == seat;
    }
    found
}

/// One seat's pieces and resources.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Player {
    /// 0..=10 (spec §4.2).
    pub resources: u32,
    /// Road tiles left: plains, forest, hill.
    pub supply: [u8; 3],
    pub merchants_left: u8,
    pub workshops: Vec<HexId>,
}

/// A road built, kept for the view's history and the invariants.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Road {
    pub owner: Seat,
    pub hub: HexId,
    pub tiles: Vec<HexId>,
    pub target: HexId,
}

/// A road as a client describes it: hub, tiles in order, target (spec §5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RoadPlan {
    pub hub: HexId,
    pub tiles: Vec<HexId>,
    pub target: HexId,
}

impl RoadPlan {
    /// The `index`-th hex along the road: the hub, then the tiles, then the target (any index
    /// past the tiles).
    pub fn step(&self, index: usize) -> HexId {
        match index.checked_sub(1) {
            None => self.hub,
            Some(tile) => self.tiles.get(tile).copied().unwrap_or(self.target),
        }
    }
}

/// Why the game ended (spec §7, §9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum EndReason {
    CannotReach,
    AllSettlementsOccupied,
    NoRoadsLeft,
    Stall,
}

/// Where the game stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Phase {
    /// `order[next]` places the next workshop (spec §3.5, §9).
    PlacingWorkshops { order: Vec<Seat>, next: usize },
    /// `seat` is taking its turn (spec §4).
    Playing { seat: Seat },
    Finished {
        reason: EndReason,
        trigger_seat: Option<Seat>,
        gold: Vec<u32>,
        winners: Vec<Seat>,
    },
}

/// A game of La Strada: the whole state, hosted through its [`Engine`] impl. Nothing in it is
/// hidden but the RNG, which only setup uses.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LaStrada {
    options: Options,
    /// Used at setup only; kept so the state is the single source of randomness.
    rng: GameRng,
    /// `arrangement[k]` is the piece (index into the map's pieces) in position k (spec §3.1).
    arrangement: [usize; POSITIONS],
    /// Printed terrain per hex (copied from the map so a snapshot is self-contained).
    terrain: Vec<Terrain>,
    /// Piece per hex.
    piece_of: Vec<u8>,
    sites: Vec<Site>,
    /// Site index per hex.
    site_at: Vec<Option<u8>>,
    occupant: Vec<Occupant>,
    players: Vec<Player>,
    roads: Vec<Road>,
    phase: Phase,
    /// The random start player (spec §3.4); in a 2-player game the first workshop placer.
    start_seat: Seat,
    /// The seat whose turn begins each round.
    first_turn_seat: Seat,
    round: u32,
    /// Whether the seat to act placed a tile this turn.
    built_this_turn: bool,
    /// Consecutive finished turns without a tile placed (stall guard, spec §7).
    silent_turns: u32,
    /// Derived from the fields above to speed up the road search; never serialized (a decoded
    /// state rebuilds it on first use). See `rules/search/`.
    #[serde(skip)]
    search_cache: SearchCache,
}

/// What the tests read of the state (the rules use the fields).
#[cfg(test)]
impl LaStrada {
    pub(crate) fn player(&self, seat: Seat) -> &Player {
        &self.players[seat as usize]
    }

    pub(crate) fn terrain(&self, hex: HexId) -> Terrain {
        self.terrain[hex as usize]
    }

    pub(crate) fn occupant(&self, hex: HexId) -> Occupant {
        self.occupant[hex as usize]
    }

    /// The current round (0 during workshop placement).
    pub(crate) fn round(&self) -> u32 {
        self.round
    }
}

impl LaStrada {
    pub(crate) fn sites(&self) -> &[Site] {
        &self.sites
    }

    pub(crate) fn site_at(&self, hex: HexId) -> Option<&Site> {
        self.site_at[hex as usize].map(|i| &self.sites[i as usize])
    }

    /// The land pieces' names by position (spec §3.1, §10).
    pub(crate) fn arrangement_names(&self) -> Vec<String> {
        self.arrangement
            .iter()
            .map(|p| MAP.pieces[*p].name.clone())
            .collect()
    }

    /// The random start player (spec §3.4).
    pub(crate) fn start_seat(&self) -> Seat {
        self.start_seat
    }

    /// The seat that took (or takes) the first turn of play (spec §3.6, ruling A10).
    pub(crate) fn first_turn_seat(&self) -> Seat {
        self.first_turn_seat
    }
}

impl Engine for LaStrada {
    type Config = pb::Config;
    type Action = pb::Action;
    type Event = pb::Event;
    type View = pb::View;

    const GAME_TYPE: GameType = GameType {
        name: "la_strada",
        display_name: "La Strada",
        min_seats: *PLAYERS.start(),
        max_seats: *PLAYERS.end(),
        chance: Chance::Seeded,
        information: Information::Perfect,
    };
    const RULES_VERSION: &'static str = "la_strada-1";

    fn config_for(players: u32) -> pb::Config {
        pb::Config {
            players,
            ..Default::default()
        }
    }

    /// Spec §3: arrange the pieces, shuffle the settlement tiles onto the sites, draw the start
    /// player (`rules/setup.rs`).
    fn setup(config: &pb::Config, seed: &Seed) -> Result<Self, ConfigError> {
        // Every rule reads the bundled map (`data::MAP`): no game starts without it.
        data::bundled_map()
            .map_err(|reason| ConfigError(format!("la_strada map data is unusable: {reason}")))?;
        let options = Options::from_pb(config)?;
        Ok(LaStrada::draw(options, GameRng::from_seed(seed)))
    }

    fn seat_count(&self) -> u32 {
        self.options.players
    }

    fn to_act(&self) -> Option<Seat> {
        match &self.phase {
            Phase::PlacingWorkshops { order, next } => order.get(*next).copied(),
            Phase::Playing { seat } => Some(*seat),
            Phase::Finished { .. } => None,
        }
    }

    /// Workshop placement: every legal hex. Play: every legal road within the current resources
    /// (complete, detours included, spec §5) and `EndTurn`.
    fn legal_actions(&self, seat: Seat) -> Vec<LegalAction<pb::Action>> {
        if self.to_act() != Some(seat) {
            return Vec::new();
        }
        match &self.phase {
            Phase::PlacingWorkshops { .. } => self
                .legal_workshop_hexes(seat)
                .into_iter()
                .map(|hex| LegalAction::Exact(wire::place_workshop(hex)))
                .collect(),
            Phase::Playing { .. } => {
                let mut actions = Vec::new();
                self.for_each_road(
                    seat,
                    self.players[seat as usize].resources,
                    |hub, tiles, target| {
                        actions.push(LegalAction::Exact(wire::build_road(hub, tiles, target)));
                        false
                    },
                );
                actions.push(LegalAction::Exact(wire::end_turn()));
                actions
            }
            Phase::Finished { .. } => Vec::new(),
        }
    }

    /// The listing is all exact entries: during play every road then `EndTurn`, during setup
    /// every legal workshop hex. Draw an index into the same list in the same order as the
    /// listing's draw would, without building an action per entry.
    fn random_action(&self, seat: Seat, rng: &mut GameRng) -> Option<pb::Action> {
        if self.to_act() != Some(seat) {
            return None;
        }
        if let Phase::PlacingWorkshops { .. } = self.phase {
            // The listing is one exact entry per legal hex, in hex order (spec §3.5).
            let hexes = self.workshop_hexes(seat);
            let count = hexes.len();
            if count == 0 {
                return None;
            }
            return hexes.nth(rng.index(count)).map(wire::place_workshop);
        }
        // The listing is every road then `EndTurn`: draw an index among them all, and only
        // the road drawn becomes an action (see `LaStrada::draw_road`).
        let budget = self.players[seat as usize].resources;
        let road = self.draw_road(
            seat,
            budget,
            |roads| {
                let pick = rng.index(roads + 1);
                (pick < roads).then_some(pick)
            },
            wire::build_road,
        );
        Some(road.unwrap_or_else(wire::end_turn))
    }

    fn with_amount(action: &pb::Action, _amount: u64) -> pb::Action {
        action.clone()
    }

    fn apply(&mut self, seat: Seat, action: &pb::Action) -> Result<Vec<pb::Event>, ActionError> {
        let kind = action
            .kind
            .as_ref()
            .ok_or_else(|| ActionError::malformed("action has no kind"))?;
        if seat >= self.options.players {
            return Err(ActionError::malformed(format!(
                "seat {seat} is not in this game"
            )));
        }
        let Some(expected) = self.to_act() else {
            return Err(ActionError::GameOver);
        };
        if expected != seat {
            let rule = if matches!(self.phase, Phase::PlacingWorkshops { .. }) {
                "§3.5"
            } else {
                "§4"
            };
            return Err(ActionError::NotYourTurn {
                seat,
                expected: format!("seat {expected}"),
                rule,
            });
        }
        match kind {
            pb::action::Kind::PlaceWorkshop(place) => {
                let hex = wire::hex_from_pb(place.hex.as_ref(), "workshop")?;
                self.place_workshop(seat, hex)
            }
            pb::action::Kind::BuildRoad(road) => {
                let plan = RoadPlan::from_pb(road)?;
                self.build_road(seat, plan)
            }
            pb::action::Kind::EndTurn(_) => self.end_turn(seat),
        }
    }

    /// Everything on the table is public (spec §1-§3): the same view for every viewer.
    fn view(&self, _viewer: Viewer) -> pb::View {
        self.public_view()
    }

    fn redact_event(event: &pb::Event, viewer: Viewer) -> Redaction<pb::Event> {
        view::redact_event(event, viewer)
    }

    fn redact_action(action: &pb::Action, author: Seat, viewer: Viewer) -> pb::Action {
        view::redact_action(action, author, viewer)
    }

    /// Setup's one event: the pieces laid out, the settlement tiles revealed, the start player
    /// drawn, the placement order and the first turn (spec §3). It depends only on what setup
    /// fixed, so it is the same whenever it is asked for.
    fn opening_events(&self) -> Vec<pb::Event> {
        vec![wire::game_set_up(
            self,
            rules::placement_order(self.start_seat, self.options.players),
        )]
    }

    fn outcome(&self) -> Option<Outcome> {
        match &self.phase {
            Phase::Finished { gold, winners, .. } => Some(Outcome {
                scores: gold.iter().map(|g| i64::from(*g)).collect(),
                winners: winners.clone(),
            }),
            _ => None,
        }
    }

    /// The most passive legal choice (listed in `docs/rules/la-strada.md`, "Default actions"):
    /// ending the turn without building (spec §4.4); during setup, where a workshop must be
    /// placed (§3.5), the first legal hex in the board's hex order (row by row from the north).
    fn default_action(&self) -> Option<pb::Action> {
        match &self.phase {
            Phase::PlacingWorkshops { .. } => {
                let seat = self.to_act()?;
                let hex = self.legal_workshop_hexes(seat).into_iter().next()?;
                Some(wire::place_workshop(hex))
            }
            Phase::Playing { .. } => Some(wire::end_turn()),
            Phase::Finished { .. } => None,
        }
    }

    fn winners_among(&self, candidates: &[Seat]) -> Vec<Seat> {
        match &self.phase {
            Phase::Finished { gold, .. } => self.best_of(candidates, gold),
            _ => Vec::new(),
        }
    }

    fn same_undisclosed(&self, other: &Self) -> bool {
        // Only the RNG, which the setup alone draws from (spec §3: the layout, the settlements and
        // the start player); after it, everything on the table is open.
        self.rng == other.rng
    }

    /// Nothing on the table is hidden from anyone (no hands, no decks, no secret money): the only
    /// secret is the RNG, whose draws were all spent at setup (arrangement, settlement tiles,
    /// start player, all public). Redrawing it is therefore all there is to resample, for every
    /// viewer alike.
    fn resample_hidden(&self, _viewer: Viewer, seed: &Seed) -> Self {
        let mut state = self.clone();
        state.rng = GameRng::from_seed(seed);
        state
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.check_state()
    }
}
