//! Protobuf conversions (`proto/tabula/la_strada/v1/la_strada.proto`) and the event builders.
//!
//! One naming scheme: a type's `to_pb` turns an engine value into its message and `from_pb`
//! decodes a client's message into one (refusing what is malformed); `hex_to_pb` / `hex_from_pb`
//! do the same for a hex id (a plain integer). Action builders are named after the action
//! (`build_road`, `place_workshop`, `end_turn`), [`event`] wraps an event kind. Decoding is where client input meets the engine, so every bound is checked here: a hex
//! must lie on the board, a road may not list more tiles than anyone owns, and refusals quote at
//! most two coordinates or a count (never unbounded input).

use super::data::{Axial, HexId, MAP, SettlementKind, Terrain};
use super::{
    CurveRule, EndBudgetRule, EndReason, LaStrada, Options, PlacedTile, RoadPlan, Site,
    TILES_OWNED, WorkshopSpacingRule,
};
use crate::games::{ActionError, ConfigError, Seat};
use crate::proto::la_strada::v1 as pb;

// ----- Config -----

impl Options {
    /// Decodes the create-time options; zero values mean the default rulings (docs: "Options").
    pub(super) fn from_pb(config: &pb::Config) -> Result<Options, ConfigError> {
        if !super::PLAYERS.contains(&config.players) {
            return Err(ConfigError(format!(
                "La Strada needs {} to {} players, not {}",
                super::PLAYERS.start(),
                super::PLAYERS.end(),
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
}

impl CurveRule {
    pub(super) fn to_pb(self) -> pb::Curve {
        match self {
            CurveRule::Gentle => pb::Curve::Gentle,
            CurveRule::Sharp => pb::Curve::Sharp,
            CurveRule::Both => pb::Curve::Both,
        }
    }
}

// ----- Board values -----

pub(super) fn hex_to_pb(hex: HexId) -> pb::Hex {
    let axial = MAP.hex(hex);
    pb::Hex {
        q: axial.q,
        r: axial.r,
    }
}

/// The board hex a client names; `what` says which field, for the refusal.
pub(super) fn hex_from_pb(hex: Option<&pb::Hex>, what: &str) -> Result<HexId, ActionError> {
    hex_from_pb_with(hex, || what.to_string())
}

/// [`hex_from_pb`] with the field named only when the hex is refused (the name of a road's tile
/// `tile {i}` is built only then, not for every tile of every road).
fn hex_from_pb_with(
    hex: Option<&pb::Hex>,
    what: impl Fn() -> String,
) -> Result<HexId, ActionError> {
    let hex = hex.ok_or_else(|| ActionError::malformed(format!("{}: missing hex", what())))?;
    MAP.id_of(Axial::new(hex.q, hex.r)).ok_or_else(|| {
        ActionError::malformed(format!(
            "{}: ({}, {}) is not on the board",
            what(),
            hex.q,
            hex.r
        ))
    })
}

impl Terrain {
    pub(super) fn to_pb(self) -> pb::Terrain {
        match self {
            Terrain::Plains => pb::Terrain::Plains,
            Terrain::Forest => pb::Terrain::Forest,
            Terrain::Hill => pb::Terrain::Hill,
            Terrain::Site => pb::Terrain::Site,
        }
    }
}

impl SettlementKind {
    pub(super) fn to_pb(self) -> pb::SettlementKind {
        match self {
            SettlementKind::Hamlet => pb::SettlementKind::Hamlet,
            SettlementKind::Village => pb::SettlementKind::Village,
            SettlementKind::Town => pb::SettlementKind::Town,
            SettlementKind::City => pb::SettlementKind::City,
        }
    }
}

impl EndReason {
    pub(super) fn to_pb(self) -> pb::EndReason {
        match self {
            EndReason::CannotReach => pb::EndReason::CannotReach,
            EndReason::AllSettlementsOccupied => pb::EndReason::AllSettlementsOccupied,
            EndReason::NoRoadsLeft => pb::EndReason::NoRoadsLeft,
            EndReason::Stall => pb::EndReason::Stall,
        }
    }
}

impl PlacedTile {
    /// The tile on `hex` (of `terrain`) as the view and `RoadBuilt` show it (spec §5 rule 5,
    /// §10).
    pub(super) fn to_pb(self, hex: HexId, terrain: Terrain) -> pb::RoadTile {
        pb::RoadTile {
            hex: Some(hex_to_pb(hex)),
            owner: self.owner,
            terrain: terrain.to_pb() as i32,
            edge_in: u32::from(self.edge_in),
            edge_out: u32::from(self.edge_out),
            face: if self.is_straight() {
                pb::Face::Straight
            } else {
                pb::Face::Curve
            } as i32,
        }
    }
}

impl Site {
    pub(super) fn to_pb(&self) -> pb::Settlement {
        pb::Settlement {
            hex: Some(hex_to_pb(self.hex)),
            kind: self.kind.to_pb() as i32,
            merchants: self.merchants.to_vec(),
            visitors: self.visitors.to_vec(),
        }
    }
}

// ----- Actions -----

/// Decodes a `BuildRoad` (spec §5). The rules are checked later; here only the shape: every hex
/// on the board and no more tiles than a player owns (spec §1: 31).
impl RoadPlan {
    pub(super) fn from_pb(road: &pb::BuildRoad) -> Result<RoadPlan, ActionError> {
        check_tile_count(road.tiles.len())?;
        let hub = hex_from_pb(road.hub.as_ref(), "hub")?;
        let target = hex_from_pb(road.target.as_ref(), "target")?;
        // Sized once: every road is applied through here.
        let mut tiles = Vec::with_capacity(road.tiles.len());
        for (i, hex) in road.tiles.iter().enumerate() {
            tiles.push(hex_from_pb_with(Some(hex), || format!("tile {i}"))?);
        }
        Ok(RoadPlan { hub, tiles, target })
    }
}

/// Refuses a road of more tiles than a player owns (spec §1), before anything else is read.
pub(super) fn check_tile_count(tiles: usize) -> Result<(), ActionError> {
    if tiles > TILES_OWNED {
        return Err(ActionError::malformed(format!(
            "a road of {tiles} tiles: nobody owns that many"
        )));
    }
    Ok(())
}

/// The `BuildRoad` action for a road (the listing's entries).
pub(super) fn build_road(hub: HexId, tiles: &[HexId], target: HexId) -> pb::Action {
    pb::Action {
        kind: Some(pb::action::Kind::BuildRoad(pb::BuildRoad {
            hub: Some(hex_to_pb(hub)),
            tiles: tiles.iter().map(|t| hex_to_pb(*t)).collect(),
            target: Some(hex_to_pb(target)),
        })),
    }
}

pub(super) fn place_workshop(hex: HexId) -> pb::Action {
    pb::Action {
        kind: Some(pb::action::Kind::PlaceWorkshop(pb::PlaceWorkshop {
            hex: Some(hex_to_pb(hex)),
        })),
    }
}

pub(super) fn end_turn() -> pb::Action {
    pb::Action {
        kind: Some(pb::action::Kind::EndTurn(pb::EndTurn {})),
    }
}

// ----- Events -----

/// Wraps an event kind into the game's `Event`.
pub(super) fn event(kind: pb::event::Kind) -> pb::Event {
    pb::Event { kind: Some(kind) }
}

/// The opening `GameSetUp` (spec §3): what setup drew, from the state setup returned.
pub(super) fn game_set_up(state: &LaStrada, placement_order: Vec<Seat>) -> pb::Event {
    event(pb::event::Kind::GameSetUp(pb::GameSetUp {
        arrangement: state.arrangement_names(),
        // Nobody is connected at setup; the tiles alone, whenever the event is asked for.
        settlements: state
            .sites()
            .iter()
            .map(|site| pb::Settlement {
                hex: Some(hex_to_pb(site.hex)),
                kind: site.kind.to_pb() as i32,
                merchants: Vec::new(),
                visitors: Vec::new(),
            })
            .collect(),
        start_seat: state.start_seat(),
        placement_order,
        first_turn_seat: state.first_turn_seat(),
    }))
}
