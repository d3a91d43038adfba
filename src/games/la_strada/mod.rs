//! La Strada (Martin Wallace, 2004), 2-4 players: build roads across a hex map from your workshop
//! to settlements, place merchants there, and score gold by settlement size and competition.
//!
//! Spec: the project's rules document `docs/rules/la-strada.md` (sections cited as §N follow the
//! rules specification it was written from). Layout of this module:
//! - `map.rs` + `standin_map.json`: hex geometry and the map data (the §10 STAND-IN board);
//! - `rules.rs`: workshop placement, the road rules of §5 and the enumeration of legal roads;
//! - `scoring.rs`: gold and winners (§8, §9);
//! - this file: the state, setup (§3), the turn sequence (§4), the end of the game (§7, §9), views
//!   and events.
//!
//! Nothing is hidden once the board is set up: the only secret is the RNG, which is used at
//! setup only (arrangement, settlement tiles, start player).

mod invariants;
pub mod map;
pub mod rules;
pub mod scoring;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use self::map::{HexId, MAP, POSITIONS, SettlementKind, Terrain};
use self::rules::{INCOME, RESOURCE_CAP, RoadPlan, edges};
use crate::games::common::{GameRng, clockwise_from, left_of};
use crate::games::{ActionError, ConfigError, Engine, LegalAction, Outcome, Seat, Seed, Viewer};
use crate::proto::v1::la_strada as pb;

/// Road tiles per player at the start: plains, forest, hill (spec §1, §3.3).
pub const STARTING_SUPPLY: [u8; 3] = [18, 8, 5];
/// Merchants per player (spec §1).
pub const MERCHANTS: u8 = 12;

/// The curve face's turn (spec §5 rule 5, ruling A2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CurveRule {
    Gentle,
    Sharp,
    Both,
}

/// Budget of the 3-4 player end test (spec §7, ruling A5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EndBudgetRule {
    /// 10, the resource cap.
    Cap,
    /// What the player would hold this turn: min(10, resources + 6).
    Current,
}

/// Which workshops the spacing rule keeps apart (spec §3.5, ruling A7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WorkshopSpacingRule {
    OtherPlayers,
    All,
}

/// The create-time options, decoded from [`pb::Config`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Options {
    pub players: u32,
    pub curve: CurveRule,
    pub end_budget: EndBudgetRule,
    pub workshop_spacing: WorkshopSpacingRule,
    /// 2-player game: the first workshop placer also takes the first turn (ruling A10 option).
    pub first_placer_starts: bool,
}

impl Options {
    fn from_config(config: &pb::Config) -> Result<Options, ConfigError> {
        if !(2..=4).contains(&config.players) {
            return Err(ConfigError(format!(
                "La Strada needs 2 to 4 players, not {}",
                config.players
            )));
        }
        let curve = match pb::Curve::try_from(config.curve) {
            Ok(pb::Curve::Unspecified | pb::Curve::Gentle) => CurveRule::Gentle,
            Ok(pb::Curve::Sharp) => CurveRule::Sharp,
            Ok(pb::Curve::Both) => CurveRule::Both,
            Err(_) => return Err(ConfigError(format!("unknown curve {}", config.curve))),
        };
        let end_budget = match pb::EndBudget::try_from(config.end_budget) {
            Ok(pb::EndBudget::Unspecified | pb::EndBudget::Cap) => EndBudgetRule::Cap,
            Ok(pb::EndBudget::Current) => EndBudgetRule::Current,
            Err(_) => {
                return Err(ConfigError(format!(
                    "unknown end budget {}",
                    config.end_budget
                )));
            }
        };
        let workshop_spacing = match pb::WorkshopSpacing::try_from(config.workshop_spacing) {
            Ok(pb::WorkshopSpacing::Unspecified | pb::WorkshopSpacing::OtherPlayers) => {
                WorkshopSpacingRule::OtherPlayers
            }
            Ok(pb::WorkshopSpacing::All) => WorkshopSpacingRule::All,
            Err(_) => {
                return Err(ConfigError(format!(
                    "unknown workshop spacing {}",
                    config.workshop_spacing
                )));
            }
        };
        let first_placer_starts =
            match pb::TwoPlayerFirstTurn::try_from(config.two_player_first_turn) {
                Ok(pb::TwoPlayerFirstTurn::Unspecified | pb::TwoPlayerFirstTurn::SecondPlacer) => {
                    false
                }
                Ok(pb::TwoPlayerFirstTurn::FirstPlacer) => true,
                Err(_) => {
                    return Err(ConfigError(format!(
                        "unknown two-player first turn {}",
                        config.two_player_first_turn
                    )));
                }
            };
        Ok(Options {
            players: config.players,
            curve,
            end_budget,
            workshop_spacing,
            first_placer_starts,
        })
    }

    fn curve_proto(&self) -> pb::Curve {
        match self.curve {
            CurveRule::Gentle => pb::Curve::Gentle,
            CurveRule::Sharp => pb::Curve::Sharp,
            CurveRule::Both => pb::Curve::Both,
        }
    }
}

/// What stands on a board hex besides its printed terrain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Occupant {
    Empty,
    Workshop(Seat),
    Tile(PlacedTile),
}

/// A road tile on the board: its owner and its two road ends (spec §5 rule 5, §10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlacedTile {
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
pub struct Site {
    pub hex: HexId,
    pub kind: SettlementKind,
    /// Seats with a merchant here, in order of arrival (spec §6).
    pub merchants: Vec<Seat>,
    /// 2-player game: seats connected without a merchant (spec §9, ruling A12).
    pub visitors: Vec<Seat>,
}

impl Site {
    /// Whether `seat` has reached this settlement (it is then one of its hubs, spec §5).
    pub fn is_connected(&self, seat: Seat) -> bool {
        self.merchants.contains(&seat) || self.visitors.contains(&seat)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Player {
    /// 0..=10 (spec §4.2).
    pub resources: u32,
    /// Road tiles left: plains, forest, hill.
    pub supply: [u8; 3],
    pub merchants_left: u8,
    pub workshops: Vec<HexId>,
}

/// A road built, kept for the view's history and the invariants.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Road {
    pub owner: Seat,
    pub hub: HexId,
    pub tiles: Vec<HexId>,
    pub target: HexId,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EndReason {
    CannotReach,
    AllSettlementsOccupied,
    NoRoadsLeft,
    Stall,
}

impl EndReason {
    fn proto(self) -> pb::EndReason {
        match self {
            EndReason::CannotReach => pb::EndReason::CannotReach,
            EndReason::AllSettlementsOccupied => pb::EndReason::AllSettlementsOccupied,
            EndReason::NoRoadsLeft => pb::EndReason::NoRoadsLeft,
            EndReason::Stall => pb::EndReason::Stall,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Phase {
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

/// The whole game state.
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
}

impl LaStrada {
    /// A game on a given arrangement and settlement order (`kinds[i]` goes on the i-th site in
    /// hex id order), with `start_seat` as start player. [`Engine::setup`] draws these at random.
    pub fn with_layout(
        options: Options,
        rng: GameRng,
        arrangement: [usize; POSITIONS],
        kinds: &[SettlementKind],
        start_seat: Seat,
    ) -> LaStrada {
        let (terrain, piece_of) = MAP.lay_out(&arrangement);
        let mut sites = Vec::new();
        let mut site_at = vec![None; terrain.len()];
        for (hex, t) in terrain.iter().enumerate() {
            if *t == Terrain::Site {
                site_at[hex] = Some(sites.len() as u8);
                let kind = kinds
                    .get(sites.len())
                    .copied()
                    .unwrap_or(SettlementKind::Hamlet);
                sites.push(Site {
                    hex: hex as HexId,
                    kind,
                    merchants: Vec::new(),
                    visitors: Vec::new(),
                });
            }
        }
        let players = (0..options.players)
            .map(|_| Player {
                resources: 0,
                supply: STARTING_SUPPLY,
                merchants_left: MERCHANTS,
                workshops: Vec::new(),
            })
            .collect();
        let n = options.players;
        // Spec §3.5: start player first, then clockwise; spec §9: P1 P2 P1 P2.
        let order: Vec<Seat> = if n == 2 {
            vec![
                start_seat,
                left_of(start_seat, 2),
                start_seat,
                left_of(start_seat, 2),
            ]
        } else {
            clockwise_from(start_seat, n).collect()
        };
        // Spec §4.1 / §9 (ruling A10): in a 2-player game the second placer moves first.
        let first_turn_seat = if n == 2 && !options.first_placer_starts {
            left_of(start_seat, 2)
        } else {
            start_seat
        };
        LaStrada {
            options,
            rng,
            arrangement,
            terrain,
            piece_of,
            sites,
            site_at,
            occupant: vec![Occupant::Empty; MAP.hexes.len()],
            players,
            roads: Vec::new(),
            phase: Phase::PlacingWorkshops { order, next: 0 },
            start_seat,
            first_turn_seat,
            round: 0,
            built_this_turn: false,
            silent_turns: 0,
        }
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    pub fn phase(&self) -> &Phase {
        &self.phase
    }

    pub fn player(&self, seat: Seat) -> &Player {
        &self.players[seat as usize]
    }

    pub fn sites(&self) -> &[Site] {
        &self.sites
    }

    pub fn terrain(&self, hex: HexId) -> Terrain {
        self.terrain[hex as usize]
    }

    pub fn occupant(&self, hex: HexId) -> Occupant {
        self.occupant[hex as usize]
    }

    pub fn site_at(&self, hex: HexId) -> Option<&Site> {
        self.site_at[hex as usize].map(|i| &self.sites[i as usize])
    }

    /// The current round (0 during workshop placement).
    pub fn round(&self) -> u32 {
        self.round
    }

    pub fn roads(&self) -> &[Road] {
        &self.roads
    }

    // ----- Turn sequence (spec §4, §7, §9) -----

    /// Starts `seat`'s turn: the end checks first (ruling A9), then income (spec §4.2).
    fn begin_turn(&mut self, seat: Seat, events: &mut Vec<pb::Event>) {
        if seat == self.first_turn_seat {
            self.round += 1;
        }
        if self.is_two_player() {
            // Spec §9, ruling A11: end when neither player can build any road with 10 resources.
            if !self.has_any_road(0, RESOURCE_CAP) && !self.has_any_road(1, RESOURCE_CAP) {
                self.finish(EndReason::NoRoadsLeft, None, events);
                return;
            }
        } else {
            // Spec §7: the game ends when the player to start a turn cannot connect any new
            // settlement, tested with budget 10 (ruling A5) or this turn's resources (option).
            let resources = self.players[seat as usize].resources;
            let budget = match self.options.end_budget {
                EndBudgetRule::Cap => RESOURCE_CAP,
                EndBudgetRule::Current => (resources + INCOME).min(RESOURCE_CAP),
            };
            if !self.has_any_road(seat, budget) {
                self.finish(EndReason::CannotReach, Some(seat), events);
                return;
            }
        }
        let player = &mut self.players[seat as usize];
        let before = player.resources;
        player.resources = (before + INCOME).min(RESOURCE_CAP);
        self.phase = Phase::Playing { seat };
        self.built_this_turn = false;
        events.push(event(pb::event::Kind::TurnStarted(pb::TurnStarted {
            seat,
            round: self.round,
            income: player.resources - before,
            resources: player.resources,
        })));
    }

    /// Ends the game and scores it (spec §8).
    fn finish(
        &mut self,
        reason: EndReason,
        trigger_seat: Option<Seat>,
        events: &mut Vec<pb::Event>,
    ) {
        let gold = self.gold();
        let winners = self.winners(&gold);
        events.push(event(pb::event::Kind::GameEnded(pb::GameEnded {
            reason: reason.proto() as i32,
            trigger_seat,
            gold: gold.clone(),
            resources: self.players.iter().map(|p| p.resources).collect(),
            winners: winners.clone(),
        })));
        self.phase = Phase::Finished {
            reason,
            trigger_seat,
            gold,
            winners,
        };
    }

    fn place_workshop(&mut self, seat: Seat, hex: HexId) -> Result<Vec<pb::Event>, ActionError> {
        let Phase::PlacingWorkshops { order, next } = &self.phase else {
            return Err(ActionError::illegal(
                "§3.5",
                "workshops are placed only during setup",
            ));
        };
        let (order, next) = (order.clone(), *next);
        if let Some(error) = self.workshop_spot_error(seat, hex) {
            return Err(error);
        }
        self.occupant[hex as usize] = Occupant::Workshop(seat);
        self.players[seat as usize].workshops.push(hex);
        let mut events = vec![event(pb::event::Kind::WorkshopPlaced(pb::WorkshopPlaced {
            seat,
            hex: Some(hex_proto(hex)),
        }))];
        if next + 1 < order.len() {
            self.phase = Phase::PlacingWorkshops {
                order,
                next: next + 1,
            };
        } else {
            self.begin_turn(self.first_turn_seat, &mut events);
        }
        Ok(events)
    }

    fn build_road(&mut self, seat: Seat, plan: &RoadPlan) -> Result<Vec<pb::Event>, ActionError> {
        if !matches!(self.phase, Phase::Playing { .. }) {
            return Err(ActionError::illegal(
                "§4",
                "roads are built only during play, after workshop placement",
            ));
        }
        let cost = self.check_road(seat, plan, self.players[seat as usize].resources)?;
        // Validated: apply.
        let chain: Vec<HexId> = std::iter::once(plan.hub)
            .chain(plan.tiles.iter().copied())
            .chain([plan.target])
            .collect();
        let mut tiles = Vec::new();
        for window in chain.windows(3) {
            let (edge_in, edge_out) = edges(window[0], window[1], window[2]);
            let tile = PlacedTile {
                owner: seat,
                edge_in: edge_in as u8,
                edge_out: edge_out as u8,
            };
            let hex = window[1];
            self.occupant[hex as usize] = Occupant::Tile(tile);
            let terrain = self.terrain[hex as usize];
            if let Some(index) = terrain.tile_index() {
                self.players[seat as usize].supply[index] -= 1;
            }
            tiles.push(self.tile_proto(hex, tile));
        }
        let site_index = self.site_at[plan.target as usize].unwrap_or_default() as usize;
        let two_player = self.is_two_player();
        let site = &mut self.sites[site_index];
        // Spec §5 / §9: a merchant goes on the target, except in a 2-player game when the
        // opponent's merchant is already there (then the player connects as a visitor).
        let merchant_placed = !two_player || site.merchants.is_empty();
        if merchant_placed {
            site.merchants.push(seat);
        } else {
            site.visitors.push(seat);
        }
        let target_kind = kind_proto(site.kind);
        let player = &mut self.players[seat as usize];
        if merchant_placed {
            player.merchants_left -= 1;
        }
        player.resources -= cost;
        self.built_this_turn = true;
        self.roads.push(Road {
            owner: seat,
            hub: plan.hub,
            tiles: plan.tiles.clone(),
            target: plan.target,
        });
        let mut events = vec![event(pb::event::Kind::RoadBuilt(pb::RoadBuilt {
            seat,
            hub: Some(hex_proto(plan.hub)),
            tiles,
            target: Some(hex_proto(plan.target)),
            target_kind: target_kind as i32,
            merchant_placed,
            cost,
            resources: player.resources,
        }))];
        // Spec §9: the 2-player game ends at once when every settlement holds a merchant.
        if two_player && self.sites.iter().all(|s| !s.merchants.is_empty()) {
            self.finish(EndReason::AllSettlementsOccupied, None, &mut events);
        }
        Ok(events)
    }

    fn end_turn(&mut self, seat: Seat) -> Result<Vec<pb::Event>, ActionError> {
        if !matches!(self.phase, Phase::Playing { .. }) {
            return Err(ActionError::illegal("§3.5", "place your workshop first"));
        }
        let mut events = vec![event(pb::event::Kind::TurnEnded(pb::TurnEnded {
            seat,
            resources: self.players[seat as usize].resources,
        }))];
        self.silent_turns = if self.built_this_turn {
            0
        } else {
            self.silent_turns + 1
        };
        // Stall guard (spec §7, ruling A13): two full rounds without a tile end the game.
        if self.silent_turns >= 2 * self.options.players {
            self.finish(EndReason::Stall, None, &mut events);
        } else {
            self.begin_turn(left_of(seat, self.options.players), &mut events);
        }
        Ok(events)
    }

    // ----- Proto conversions -----

    fn decode_hex(hex: Option<&pb::Hex>, what: &str) -> Result<HexId, ActionError> {
        let hex = hex.ok_or_else(|| ActionError::malformed(format!("{what}: missing hex")))?;
        MAP.id_of(map::Axial::new(hex.q, hex.r)).ok_or_else(|| {
            ActionError::malformed(format!(
                "{what}: ({}, {}) is not on the board",
                hex.q, hex.r
            ))
        })
    }

    fn decode_road(road: &pb::BuildRoad) -> Result<RoadPlan, ActionError> {
        // No player owns more than 31 tiles (spec §1); longer lists are client bugs.
        let max_tiles = STARTING_SUPPLY
            .iter()
            .map(|n| usize::from(*n))
            .sum::<usize>();
        if road.tiles.len() > max_tiles {
            return Err(ActionError::malformed(format!(
                "a road of {} tiles: nobody owns that many",
                road.tiles.len()
            )));
        }
        let hub = Self::decode_hex(road.hub.as_ref(), "hub")?;
        let target = Self::decode_hex(road.target.as_ref(), "target")?;
        let tiles = road
            .tiles
            .iter()
            .enumerate()
            .map(|(i, hex)| Self::decode_hex(Some(hex), &format!("tile {i}")))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(RoadPlan { hub, tiles, target })
    }

    fn road_action(&self, hub: HexId, tiles: &[HexId], target: HexId) -> pb::Action {
        pb::Action {
            kind: Some(pb::action::Kind::BuildRoad(pb::BuildRoad {
                hub: Some(hex_proto(hub)),
                tiles: tiles.iter().map(|t| hex_proto(*t)).collect(),
                target: Some(hex_proto(target)),
            })),
        }
    }

    fn tile_proto(&self, hex: HexId, tile: PlacedTile) -> pb::RoadTile {
        pb::RoadTile {
            hex: Some(hex_proto(hex)),
            owner: tile.owner,
            terrain: terrain_proto(self.terrain[hex as usize]) as i32,
            edge_in: u32::from(tile.edge_in),
            edge_out: u32::from(tile.edge_out),
            face: if tile.is_straight() {
                pb::Face::Straight
            } else {
                pb::Face::Curve
            } as i32,
        }
    }
}

fn event(kind: pb::event::Kind) -> pb::Event {
    pb::Event { kind: Some(kind) }
}

pub fn hex_proto(hex: HexId) -> pb::Hex {
    let axial = MAP.hex(hex);
    pb::Hex {
        q: axial.q,
        r: axial.r,
    }
}

fn terrain_proto(terrain: Terrain) -> pb::Terrain {
    match terrain {
        Terrain::Plains => pb::Terrain::Plains,
        Terrain::Forest => pb::Terrain::Forest,
        Terrain::Hill => pb::Terrain::Hill,
        Terrain::Site => pb::Terrain::Site,
    }
}

fn kind_proto(kind: SettlementKind) -> pb::SettlementKind {
    match kind {
        SettlementKind::Hamlet => pb::SettlementKind::Hamlet,
        SettlementKind::Village => pb::SettlementKind::Village,
        SettlementKind::Town => pb::SettlementKind::Town,
        SettlementKind::City => pb::SettlementKind::City,
    }
}

impl Engine for LaStrada {
    type Config = pb::Config;
    type Action = pb::Action;
    type Event = pb::Event;
    type View = pb::View;

    const NAME: &'static str = "la_strada";
    const RULES_VERSION: &'static str = "la_strada-1";

    /// Spec §3: arrange the pieces (start piece in a random position, the other five shuffled
    /// around it), shuffle the settlement tiles onto the sites, draw the start player.
    fn setup(config: &pb::Config, seed: &Seed) -> Result<Self, ConfigError> {
        let options = Options::from_config(config)?;
        let mut rng = GameRng::from_seed(seed);
        let start_position = rng.index(POSITIONS);
        let mut others: Vec<usize> = (0..POSITIONS).filter(|p| *p != MAP.start_piece).collect();
        rng.shuffle(&mut others);
        let mut arrangement = [MAP.start_piece; POSITIONS];
        let mut rest = others.into_iter();
        for (position, slot) in arrangement.iter_mut().enumerate() {
            if position != start_position {
                *slot = rest.next().unwrap_or(MAP.start_piece);
            }
        }
        let mut kinds = MAP.settlement_tiles.clone();
        rng.shuffle(&mut kinds);
        let start_seat = rng.below(u64::from(options.players)) as Seat;
        Ok(LaStrada::with_layout(
            options,
            rng,
            arrangement,
            &kinds,
            start_seat,
        ))
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
                .map(|hex| {
                    LegalAction::Exact(pb::Action {
                        kind: Some(pb::action::Kind::PlaceWorkshop(pb::PlaceWorkshop {
                            hex: Some(hex_proto(hex)),
                        })),
                    })
                })
                .collect(),
            Phase::Playing { .. } => {
                let mut actions = Vec::new();
                self.for_each_road(
                    seat,
                    self.players[seat as usize].resources,
                    &mut |hub, tiles, target| {
                        actions.push(LegalAction::Exact(self.road_action(hub, tiles, target)));
                        false
                    },
                );
                actions.push(LegalAction::Exact(pb::Action {
                    kind: Some(pb::action::Kind::EndTurn(pb::EndTurn {})),
                }));
                actions
            }
            Phase::Finished { .. } => Vec::new(),
        }
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
                let hex = Self::decode_hex(place.hex.as_ref(), "workshop")?;
                self.place_workshop(seat, hex)
            }
            pb::action::Kind::BuildRoad(road) => {
                let plan = Self::decode_road(road)?;
                self.build_road(seat, &plan)
            }
            pb::action::Kind::EndTurn(_) => self.end_turn(seat),
        }
    }

    fn view(&self, _viewer: Viewer) -> pb::View {
        // Everything on the table is public (spec §1-§3); the view is the same for every viewer.
        let board = (0..MAP.hexes.len())
            .map(|hex| {
                let (workshop, road) = match self.occupant[hex] {
                    Occupant::Empty => (None, None),
                    Occupant::Workshop(seat) => (Some(seat), None),
                    Occupant::Tile(tile) => (None, Some(self.tile_proto(hex as HexId, tile))),
                };
                pb::BoardHex {
                    hex: Some(hex_proto(hex as HexId)),
                    terrain: terrain_proto(self.terrain[hex]) as i32,
                    piece: MAP.pieces[self.piece_of[hex] as usize].name.clone(),
                    workshop,
                    road,
                }
            })
            .collect();
        let settlements = self
            .sites
            .iter()
            .map(|site| pb::Settlement {
                hex: Some(hex_proto(site.hex)),
                kind: kind_proto(site.kind) as i32,
                merchants: site.merchants.clone(),
                visitors: site.visitors.clone(),
            })
            .collect();
        let gold = match &self.phase {
            Phase::Finished { gold, .. } => gold.clone(),
            _ => self.gold(),
        };
        let sides = MAP.seating_for(self.options.players);
        let players = self
            .players
            .iter()
            .enumerate()
            .map(|(seat, player)| pb::PlayerView {
                seat: seat as Seat,
                side: sides.get(seat).cloned().unwrap_or_default(),
                resources: player.resources,
                supply: Some(pb::Supply {
                    plains: u32::from(player.supply[0]),
                    forest: u32::from(player.supply[1]),
                    hill: u32::from(player.supply[2]),
                }),
                merchants_left: u32::from(player.merchants_left),
                workshops: player.workshops.iter().map(|h| hex_proto(*h)).collect(),
                hubs: self.hubs(seat as Seat).into_iter().map(hex_proto).collect(),
                gold: gold.get(seat).copied().unwrap_or_default(),
            })
            .collect();
        let (phase, end_reason, winners) = match &self.phase {
            Phase::PlacingWorkshops { .. } => (
                pb::Phase::PlacingWorkshops,
                pb::EndReason::Unspecified,
                Vec::new(),
            ),
            Phase::Playing { .. } => (pb::Phase::Playing, pb::EndReason::Unspecified, Vec::new()),
            Phase::Finished {
                reason, winners, ..
            } => (pb::Phase::Finished, reason.proto(), winners.clone()),
        };
        pb::View {
            phase: phase as i32,
            to_act: self.to_act(),
            start_seat: self.start_seat,
            round: self.round,
            arrangement: self
                .arrangement
                .iter()
                .map(|p| MAP.pieces[*p].name.clone())
                .collect(),
            board,
            settlements,
            players,
            built_this_turn: self.built_this_turn,
            silent_turns: self.silent_turns,
            end_reason: end_reason as i32,
            winners,
            map_name: MAP.name.clone(),
            map_provisional: MAP.provisional,
            curve: self.options.curve_proto() as i32,
        }
    }

    fn redact_event(event: &pb::Event, _viewer: Viewer) -> Option<pb::Event> {
        // No event carries private information.
        Some(event.clone())
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

    /// Only the RNG is hidden, and it is not used after setup: redraw it.
    fn resample_hidden(&self, _viewer: Viewer, seed: &Seed) -> Self {
        let mut state = self.clone();
        state.rng = GameRng::from_seed(seed);
        state
    }

    fn check_invariants(&self) -> Result<(), String> {
        self.check_state()
    }
}
