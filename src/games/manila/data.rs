//! The board: its numbers (spec §2), the wares and the spaces an accomplice can take.
//!
//! Loading policy: every number here is marked CERTAIN by the spec, so the board lives in code as
//! constants, checked by `tests/data.rs`; there is no bundled data file to parse (the games whose
//! numbers are provisional bundle theirs with `include_str!`).

use serde::{Deserialize, Serialize};

/// One of the four wares (spec §2.1), in order of payoff.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Ware {
    Ginseng,
    Nutmeg,
    Silk,
    Jade,
}

impl Ware {
    pub const ALL: [Ware; 4] = [Ware::Ginseng, Ware::Nutmeg, Ware::Silk, Ware::Jade];

    pub fn index(self) -> usize {
        self as usize
    }

    /// Crew slot costs, cheapest first (spec §2.1).
    pub fn crew_costs(self) -> &'static [u64] {
        match self {
            Ware::Ginseng => &[1, 2, 3],
            Ware::Nutmeg => &[2, 3, 4],
            Ware::Silk => &[3, 4, 5],
            Ware::Jade => &[3, 4, 5, 5],
        }
    }

    /// What the punt's crew share when it reaches Manila, or the pirates' loot (spec §2.1).
    pub fn payoff(self) -> u64 {
        match self {
            Ware::Ginseng => 18,
            Ware::Nutmeg => 24,
            Ware::Silk => 30,
            Ware::Jade => 36,
        }
    }
}

/// A space an accomplice can take (spec §2.2, §2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Space {
    /// The cheapest empty crew slot of this ware's punt.
    Crew(Ware),
    Harbour(usize),
    Shipyard(usize),
    Pirate,
    SmallPilot,
    LargePilot,
    Insurance,
}

/// Every space, in the order the placement listing offers them.
pub(super) const ALL_SPACES: [Space; 14] = [
    Space::Crew(Ware::Ginseng),
    Space::Crew(Ware::Nutmeg),
    Space::Crew(Ware::Silk),
    Space::Crew(Ware::Jade),
    Space::Harbour(0),
    Space::Harbour(1),
    Space::Harbour(2),
    Space::Shipyard(0),
    Space::Shipyard(1),
    Space::Shipyard(2),
    Space::Pirate,
    Space::SmallPilot,
    Space::LargePilot,
    Space::Insurance,
];

/// Black-market value track (spec §2.4); a ware's value is an index into it.
pub const VALUE_TRACK: [u64; 5] = [0, 5, 10, 20, 30];
/// The track index at which the game ends (value 30, spec §6).
pub const TOP_STEP: usize = VALUE_TRACK.len() - 1;

/// Cost of harbour wharf / shipyard berth A, B, C (spec §2.2).
pub const BERTH_COSTS: [u64; 3] = [4, 3, 2];
/// Pay of harbour wharf / shipyard berth A, B, C when a punt lies there (spec §2.2).
pub const BERTH_PAYS: [u64; 3] = [6, 8, 15];
/// What the insurer owes for 0, 1, 2, 3 wrecks (spec §4.8 D, §10 invariant).
pub const INSURANCE_LIABILITY: [u64; 4] = [0, 6, 14, 29];

pub const PIRATE_COST: u64 = 5;
pub const SMALL_PILOT_COST: u64 = 2;
pub const LARGE_PILOT_COST: u64 = 5;
/// Paid to whoever takes the insurance office (spec §2.3).
pub const INSURANCE_PREMIUM: u64 = 10;

/// The last lane space; a punt moving beyond it reaches Manila (spec §2.5).
pub const LAST_SPACE: u32 = 13;
/// Highest start space and the required sum of the three starts (spec §2.5).
pub const MAX_START: u32 = 5;
pub const START_SUM: u32 = 9;

pub const STARTING_CASH: u64 = 30;
/// Shares per ware in the box, of which 3 per ware are shuffled and dealt (spec §3.3).
pub const SHARES_PER_WARE: u32 = 5;
pub const DEALT_POOL_PER_WARE: u32 = 3;
pub const SHARES_DEALT_EACH: usize = 2;

/// Mortgage loan and redemption price per share (spec §5).
pub const MORTGAGE_LOAN: u64 = 12;
pub const REDEMPTION_PRICE: u64 = 15;
/// The least the harbour master pays for a share (spec §4.2 a).
pub const MIN_SHARE_PRICE: u64 = 5;

/// Accomplices per player (spec §3.2).
pub fn accomplices_for(players: u32) -> u32 {
    if players == 3 { 4 } else { 3 }
}
