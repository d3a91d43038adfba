//! The placement and road rules: where a workshop may stand (spec §3.5, §9), which roads are legal
//! (spec §5, one function per check so each rule lives in one place), the complete enumeration of
//! legal roads (spec §11) and the end tests built on it (spec §7, §9).

use super::map::{HexId, MAP, Terrain};
use super::{CurveRule, LaStrada, Occupant, WorkshopSpacingRule};
use crate::games::{ActionError, Seat};

/// The most resources a player can hold (spec §4.2), hence the budget of the end tests (spec §7).
pub const RESOURCE_CAP: u32 = 10;
/// Income at the start of every turn (spec §4.2).
pub const INCOME: u32 = 6;

/// A road as a client describes it: hub, tiles in order, target (spec §5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoadPlan {
    pub hub: HexId,
    pub tiles: Vec<HexId>,
    pub target: HexId,
}

impl CurveRule {
    /// The allowed values of (e_out − e_in) mod 6 inside a tile (spec §5 rule 5): 3 is the
    /// straight face, the rest the curve face.
    pub fn allowed_turns(self) -> &'static [usize] {
        match self {
            CurveRule::Gentle => &[2, 3, 4],
            CurveRule::Sharp => &[1, 3, 5],
            CurveRule::Both => &[1, 2, 3, 4, 5],
        }
    }
}

impl LaStrada {
    // ----- Workshops (spec §3.5, §9) -----

    /// Why `seat` may not put a workshop on `hex`, or `None` when it may: an empty plains hex
    /// (no site, no workshop) at least one hex away from other players' workshops (all workshops
    /// with the `ALL` spacing option, ruling A7).
    pub(super) fn workshop_spot_error(&self, seat: Seat, hex: HexId) -> Option<ActionError> {
        if self.terrain[hex as usize] != Terrain::Plains {
            return Some(ActionError::illegal(
                "§3.5",
                format!(
                    "a workshop must stand on a plains hex, not {:?}",
                    self.terrain[hex as usize]
                ),
            ));
        }
        if self.occupant[hex as usize] != Occupant::Empty {
            return Some(ActionError::illegal(
                "§3.5",
                "a workshop must stand on an empty hex",
            ));
        }
        let too_close = self.players.iter().enumerate().any(|(owner, player)| {
            let counts =
                owner as Seat != seat || self.options.workshop_spacing == WorkshopSpacingRule::All;
            counts
                && player
                    .workshops
                    .iter()
                    .any(|w| MAP.hex(*w).distance(MAP.hex(hex)) < 2)
        });
        if too_close {
            return Some(ActionError::illegal(
                "§3.5",
                "there must be at least one hex between your workshop and another player's workshop",
            ));
        }
        None
    }

    pub(super) fn legal_workshop_hexes(&self, seat: Seat) -> Vec<HexId> {
        (0..MAP.hexes.len() as HexId)
            .filter(|hex| self.workshop_spot_error(seat, *hex).is_none())
            .collect()
    }

    // ----- Hubs and targets (spec §5 rules 1-2, §9) -----

    /// Where `seat`'s roads may start (spec §5): its workshops and every settlement it is
    /// connected to (with a merchant, or in a 2-player game as a visitor).
    pub fn hubs(&self, seat: Seat) -> Vec<HexId> {
        let player = &self.players[seat as usize];
        let mut hubs = player.workshops.clone();
        hubs.extend(
            self.sites
                .iter()
                .filter(|site| site.is_connected(seat))
                .map(|site| site.hex),
        );
        hubs
    }

    /// Whether the settlement `site` is a legal new target for `seat` (spec §5 rule 2, §6, §9).
    fn target_error(&self, seat: Seat, site: usize) -> Option<&'static str> {
        let site = &self.sites[site];
        if site.is_connected(seat) {
            return Some(
                "you are already connected to this settlement: a road must reach a new one",
            );
        }
        let merchant_needed = !self.is_two_player() || site.merchants.is_empty();
        if merchant_needed && self.players[seat as usize].merchants_left == 0 {
            return Some("you have no merchant left to place on the settlement");
        }
        None
    }

    // ----- Validation of one road (spec §5) -----

    /// Checks a road `seat` wants to build, rule by rule in the order of spec §5, with `budget`
    /// resources. Returns the total cost.
    pub(super) fn check_road(
        &self,
        seat: Seat,
        plan: &RoadPlan,
        budget: u32,
    ) -> Result<u32, ActionError> {
        // Rule 1: the start is a hub.
        if !self.hubs(seat).contains(&plan.hub) {
            return Err(ActionError::illegal(
                "§5.1",
                "a road must start at your workshop or at a settlement you are connected to",
            ));
        }
        // Ruling A4: no zero-tile connections.
        if plan.tiles.is_empty() {
            return Err(ActionError::illegal(
                "§12 A4",
                "a road needs at least one tile",
            ));
        }
        // Rule 2: the target is a settlement, not the hub, new for the player, merchant available.
        let Some(site) = self.site_at[plan.target as usize] else {
            let what = match self.occupant[plan.target as usize] {
                Occupant::Workshop(_) => "a road may never end at a workshop",
                _ => "a road must end at a settlement",
            };
            return Err(ActionError::illegal("§5.2", what));
        };
        if plan.target == plan.hub {
            return Err(ActionError::illegal(
                "§5.2",
                "a road cannot end at the hub it starts from",
            ));
        }
        if let Some(message) = self.target_error(seat, site as usize) {
            return Err(ActionError::illegal("§5.2", message));
        }
        // Rule 3: every tile hex is empty, and no hex is used twice.
        for (index, tile) in plan.tiles.iter().enumerate() {
            let message = if self.site_at[*tile as usize].is_some() {
                Some("a road cannot pass through a settlement (ruling A15)")
            } else {
                match self.occupant[*tile as usize] {
                    Occupant::Workshop(_) => Some("a road cannot pass through a workshop"),
                    Occupant::Tile(_) => {
                        Some("a hex already holds a road tile: roads never cross or merge")
                    }
                    Occupant::Empty => None,
                }
            };
            if let Some(message) = message {
                return Err(ActionError::illegal(
                    "§5.3",
                    format!("tile {index}: {message}"),
                ));
            }
            if plan.tiles[..index].contains(tile) {
                return Err(ActionError::illegal(
                    "§5.3",
                    format!("tile {index}: the road visits a hex twice"),
                ));
            }
        }
        // Rule 4: continuity.
        let chain: Vec<HexId> = std::iter::once(plan.hub)
            .chain(plan.tiles.iter().copied())
            .chain([plan.target])
            .collect();
        for (index, pair) in chain.windows(2).enumerate() {
            if MAP.direction_between(pair[0], pair[1]).is_none() {
                return Err(ActionError::illegal(
                    "§5.4",
                    format!(
                        "the road breaks between step {index} and step {}: hexes not adjacent",
                        index + 1
                    ),
                ));
            }
        }
        // Rule 5: tile geometry.
        for (index, window) in chain.windows(3).enumerate() {
            let (edge_in, edge_out) = edges(window[0], window[1], window[2]);
            if !self
                .options
                .curve
                .allowed_turns()
                .contains(&((edge_out + 6 - edge_in) % 6))
            {
                return Err(ActionError::illegal(
                    "§5.5",
                    format!(
                        "tile {index}: no tile face joins edges {edge_in} and {edge_out} ({:?} curves)",
                        self.options.curve
                    ),
                ));
            }
        }
        // Rule 6: terrain supply.
        let mut needed = [0u32; 3];
        let mut cost = 0;
        for tile in &plan.tiles {
            let terrain = self.terrain[*tile as usize];
            if let Some(index) = terrain.tile_index() {
                needed[index] += 1;
            }
            cost += terrain.cost();
        }
        let supply = &self.players[seat as usize].supply;
        for (index, name) in ["plains", "forest", "hill"].iter().enumerate() {
            if needed[index] > u32::from(supply[index]) {
                return Err(ActionError::illegal(
                    "§5.6",
                    format!(
                        "the road needs {} {name} tiles but you have {} left",
                        needed[index], supply[index]
                    ),
                ));
            }
        }
        // Rule 7: cost.
        if cost > budget {
            return Err(ActionError::illegal(
                "§5.7",
                format!("the road costs {cost} but you have {budget} resources"),
            ));
        }
        Ok(cost)
    }

    // ----- Enumeration (spec §11) -----

    /// Calls `visit(hub, tiles, target)` for every legal road of `seat` within `budget`, until it
    /// returns `true` (stop). A depth-first search from each hub over simple paths of empty hexes,
    /// turning only as the tile faces allow, within the supply and the budget; each exit into a
    /// settlement that is a legal target yields a road. Rules 1-7 of §5 hold by construction, so
    /// everything visited passes [`LaStrada::check_road`] (a test checks this).
    pub fn for_each_road(
        &self,
        seat: Seat,
        budget: u32,
        visit: &mut dyn FnMut(HexId, &[HexId], HexId) -> bool,
    ) {
        let mut search = RoadSearch {
            state: self,
            seat,
            budget,
            hub: 0,
            turns: self.options.curve.allowed_turns(),
            supply: self.players[seat as usize].supply,
            path: Vec::with_capacity(8),
            visit,
            stopped: false,
        };
        for hub in self.hubs(seat) {
            search.hub = hub;
            for direction in 0..6 {
                if let Some(first) = MAP.neighbour(hub, direction) {
                    search.try_step(first, 0, (direction + 3) % 6);
                }
                if search.stopped {
                    return;
                }
            }
        }
    }

    /// Every legal road of `seat` within `budget`.
    pub fn legal_roads(&self, seat: Seat, budget: u32) -> Vec<RoadPlan> {
        let mut roads = Vec::new();
        self.for_each_road(seat, budget, &mut |hub, tiles, target| {
            roads.push(RoadPlan {
                hub,
                tiles: tiles.to_vec(),
                target,
            });
            false
        });
        roads
    }

    /// Whether `seat` has at least one legal road within `budget` (the end tests, spec §7, §9).
    pub fn has_any_road(&self, seat: Seat, budget: u32) -> bool {
        let mut found = false;
        self.for_each_road(seat, budget, &mut |_, _, _| {
            found = true;
            true
        });
        found
    }

    pub(super) fn is_two_player(&self) -> bool {
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

/// The depth-first road search of [`LaStrada::for_each_road`].
struct RoadSearch<'a> {
    state: &'a LaStrada,
    seat: Seat,
    budget: u32,
    hub: HexId,
    turns: &'static [usize],
    /// Tiles left, minus those on the current path.
    supply: [u8; 3],
    path: Vec<HexId>,
    visit: &'a mut dyn FnMut(HexId, &[HexId], HexId) -> bool,
    stopped: bool,
}

impl RoadSearch<'_> {
    /// Lays a tile on `hex` (if it is empty, new to the path, in supply and affordable), then
    /// tries every exit the tile faces allow from `back` (the edge toward the previous hex).
    fn try_step(&mut self, hex: HexId, cost: u32, back: usize) {
        let state = self.state;
        if state.occupant[hex as usize] != Occupant::Empty || self.path.contains(&hex) {
            return;
        }
        let terrain = state.terrain[hex as usize];
        let Some(kind) = terrain.tile_index() else {
            return;
        };
        let cost = cost + terrain.cost();
        if self.supply[kind] == 0 || cost > self.budget {
            return;
        }
        self.supply[kind] -= 1;
        self.path.push(hex);
        for turn in self.turns {
            let direction = (back + turn) % 6;
            let Some(next) = MAP.neighbour(hex, direction) else {
                continue;
            };
            if let Some(site) = state.site_at[next as usize] {
                if next != self.hub && state.target_error(self.seat, site as usize).is_none() {
                    self.stopped = (self.visit)(self.hub, &self.path, next);
                }
            } else {
                self.try_step(next, cost, (direction + 3) % 6);
            }
            if self.stopped {
                break;
            }
        }
        self.path.pop();
        self.supply[kind] += 1;
    }
}
