//! The protobuf side of the game: config decoding, conversions of tiles, goods and ships to their
//! messages (`to_pb` / `from_pb`), and the action and event builders (`action`, `event`).

use super::{DEFAULT_MAX_PRICE, Goods, MarkerMovement, RoundEnd, Settings, Ship, Tile};
use crate::games::{ConfigError, Seat};
use crate::proto::medici_vs_strozzi::v1 as pb;
use pb::action::Kind;

impl Settings {
    /// The create-time options from the config, validated (unset fields take the defaults).
    pub(super) fn from_pb(config: &pb::Config) -> Result<Settings, ConfigError> {
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

impl Goods {
    /// The goods as its protobuf enum.
    pub fn to_pb(self) -> pb::Goods {
        match self {
            Goods::Dye => pb::Goods::Dye,
            Goods::Fur => pb::Goods::Fur,
            Goods::Spice => pb::Goods::Spice,
            Goods::Cloth => pb::Goods::Cloth,
            Goods::Gold => pb::Goods::Gold,
        }
    }
}

impl Tile {
    /// The tile as its protobuf message.
    pub fn to_pb(self) -> pb::Tile {
        pb::Tile {
            goods: self.goods.to_pb() as i32,
            value: self.value,
        }
    }
}

impl Ship {
    /// The ship as its protobuf message.
    pub(super) fn to_pb(&self) -> pb::Ship {
        pb::Ship {
            capacity: self.capacity,
            harbour: self.harbour,
            tiles: self.tiles.iter().map(|t| t.to_pb()).collect(),
        }
    }
}

impl RoundEnd {
    /// The reason as its protobuf enum.
    pub fn to_pb(self) -> pb::RoundEndReason {
        match self {
            RoundEnd::ShipsFull => pb::RoundEndReason::ShipsFull,
            RoundEnd::BagEmpty => pb::RoundEndReason::BagEmpty,
        }
    }
}

/// An action of `kind`.
pub(super) fn action(kind: Kind) -> pb::Action {
    pb::Action { kind: Some(kind) }
}

/// An event of `kind`.
pub(super) fn event(kind: pb::event::Kind) -> pb::Event {
    pb::Event { kind: Some(kind) }
}

/// A round began with `start_seat` to draw (spec B4, B8): after setup (round 1) and after each
/// round's scoring.
pub(super) fn round_started(round: u32, start_seat: Seat) -> pb::Event {
    event(pb::event::Kind::RoundStarted(pb::RoundStarted {
        round,
        start_seat,
    }))
}
