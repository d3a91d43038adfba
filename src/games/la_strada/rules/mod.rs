//! The rules of play, by spec section:
//! - `setup.rs`: setup (§3): layout draw, placement order, first turn, workshops (§3.5, §9);
//! - `roads.rs`: hubs, targets and the road rules of §5, and building a road;
//! - `search/`: the enumeration of every legal road (§11) and the end tests built on it
//!   (`search/cache.rs`: what the searches start from, kept in step with the board);
//! - `turns.rs`: the turn sequence (§4), the end of the game (§7, §9), the stall guard.
//!
//! This file holds what they share: the resource constants, the road plan, the tile geometry.

mod roads;
mod search;
mod setup;
mod turns;

pub(in crate::games::la_strada) use search::SearchCache;
pub use setup::placement_order;

use crate::games::la_strada::data::{HexId, MAP};
use crate::games::la_strada::{CurveRule, LaStrada};

/// The most resources a player can hold (spec §4.2), hence the budget of the end tests (spec §7).
pub const RESOURCE_CAP: u32 = 10;
/// Income at the start of every turn (spec §4.2).
pub const INCOME: u32 = 6;

impl CurveRule {
    /// The allowed values of (e_out − e_in) mod 6 inside a tile (spec §5 rule 5): 3 is the
    /// straight face, the rest the curve face.
    pub const fn allowed_turns(self) -> &'static [usize] {
        match self {
            CurveRule::Gentle => &[2, 3, 4],
            CurveRule::Sharp => &[1, 3, 5],
            CurveRule::Both => &[1, 2, 3, 4, 5],
        }
    }

    /// The fewest tiles a road with these turns needs to come back to a hex it passed: with
    /// gentle turns the travel direction changes by at most 60° per tile, so a loop goes all the
    /// way round a hex (6 steps); a sharp turn closes one around three hexes (3). A road with
    /// fewer tiles never visits a hex twice (spec §5 rule 3 then holds by itself).
    pub const fn shortest_loop(self) -> u32 {
        match self {
            CurveRule::Gentle => 6,
            CurveRule::Sharp | CurveRule::Both => 3,
        }
    }
}

impl LaStrada {
    /// The 2-player game has its own merchant and end rules (spec §9).
    pub(in crate::games::la_strada) fn is_two_player(&self) -> bool {
        self.players.len() == 2
    }
}

/// The two road ends of the tile on `middle` (spec §5 rule 5): the direction back toward `before`
/// and the direction on toward `after`. The hexes must be adjacent in that order.
pub fn edges(before: HexId, middle: HexId, after: HexId) -> (usize, usize) {
    let edge_in = MAP.direction_between(middle, before).unwrap_or(0);
    let edge_out = MAP.direction_between(middle, after).unwrap_or(0);
    (edge_in, edge_out)
}
