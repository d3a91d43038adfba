//! The spec's invariants, checked after every action by the random-play tests.

use super::data::{HexId, MAP, SettlementKind, Terrain};
use super::rules::{RESOURCE_CAP, edges};
use super::{
    EndReason, LaStrada, MERCHANTS, Occupant, Phase, STARTING_SUPPLY, WorkshopSpacingRule,
};
use crate::games::Seat;

impl LaStrada {
    pub(super) fn check_state(&self) -> Result<(), String> {
        let hexes = MAP.hexes.len();
        if self.terrain.len() != hexes
            || self.occupant.len() != hexes
            || self.site_at.len() != hexes
        {
            return Err("per-hex tables do not match the board".into());
        }
        self.check_board()?;
        self.check_players()?;
        self.check_sites()?;
        self.check_roads()?;
        self.check_phase()
    }

    /// Spec §10, §5 rules 3 and 5: sites hold nothing; tiles lie on their own terrain with a
    /// face the curve rule allows.
    fn check_board(&self) -> Result<(), String> {
        let site_count = self.terrain.iter().filter(|t| **t == Terrain::Site).count();
        if site_count != self.sites.len() || site_count != MAP.settlement_tiles.len() {
            return Err(format!(
                "{site_count} sites on the board, {} settlements",
                self.sites.len()
            ));
        }
        let mut kinds: Vec<SettlementKind> = self.sites.iter().map(|s| s.kind).collect();
        let mut expected = MAP.settlement_tiles.clone();
        kinds.sort();
        expected.sort();
        if kinds != expected {
            return Err("the settlement tiles on the sites are not the 19 of spec §1".into());
        }
        for (hex, occupant) in self.occupant.iter().enumerate() {
            let terrain = self.terrain[hex];
            if (terrain == Terrain::Site) != self.site_at[hex].is_some() {
                return Err(format!("hex {hex}: site table out of step"));
            }
            match occupant {
                Occupant::Empty => {}
                Occupant::Workshop(_) if terrain != Terrain::Plains => {
                    return Err(format!("hex {hex}: workshop on {terrain:?} (spec §3.5)"));
                }
                Occupant::Workshop(_) => {}
                Occupant::Tile(tile) => {
                    if terrain == Terrain::Site {
                        return Err(format!("hex {hex}: road tile on a settlement (spec §5.3)"));
                    }
                    let turn = usize::from((tile.edge_out + 6 - tile.edge_in) % 6);
                    if !self.options.curve.allowed_turns().contains(&turn) {
                        return Err(format!("hex {hex}: tile face not allowed (spec §5.5)"));
                    }
                }
            }
        }
        Ok(())
    }

    /// Spec §1, §3, §4: supplies and merchants are conserved, resources stay within 0..=10,
    /// workshops stand where §3.5 allows.
    fn check_players(&self) -> Result<(), String> {
        let workshops_each = if self.is_two_player() { 2 } else { 1 };
        for (seat, player) in self.players.iter().enumerate() {
            let seat = seat as Seat;
            if player.resources > RESOURCE_CAP {
                return Err(format!(
                    "seat {seat} holds {} resources, above the cap",
                    player.resources
                ));
            }
            let mut on_board = [0u32; 3];
            for (hex, occupant) in self.occupant.iter().enumerate() {
                if let Occupant::Tile(tile) = occupant
                    && tile.owner == seat
                    && let Some(index) = self.terrain[hex].tile_index()
                {
                    on_board[index] += 1;
                }
            }
            for index in 0..3 {
                if u32::from(player.supply[index]) + on_board[index]
                    != u32::from(STARTING_SUPPLY[index])
                {
                    return Err(format!(
                        "seat {seat}: road tiles of kind {index} not conserved"
                    ));
                }
            }
            let placed = self
                .sites
                .iter()
                .filter(|s| s.merchants.contains(&seat))
                .count();
            if placed + usize::from(player.merchants_left) != usize::from(MERCHANTS) {
                return Err(format!("seat {seat}: merchants not conserved"));
            }
            if player.workshops.len() > workshops_each
                || (!matches!(self.phase, Phase::PlacingWorkshops { .. })
                    && player.workshops.len() != workshops_each)
            {
                return Err(format!(
                    "seat {seat} has {} workshops",
                    player.workshops.len()
                ));
            }
            for workshop in &player.workshops {
                if self.occupant[*workshop as usize] != Occupant::Workshop(seat) {
                    return Err(format!(
                        "seat {seat}: workshop hex {workshop} does not hold it"
                    ));
                }
                for (other, other_player) in self.players.iter().enumerate() {
                    let spaced = other as Seat != seat
                        || self.options.workshop_spacing == WorkshopSpacingRule::All;
                    let too_close = other_player
                        .workshops
                        .iter()
                        .any(|w| w != workshop && MAP.hex(*w).distance(MAP.hex(*workshop)) < 2);
                    if spaced && too_close {
                        return Err(format!(
                            "workshops of seats {seat} and {other} are adjacent (spec §3.5)"
                        ));
                    }
                }
            }
        }
        let workshops_on_board = self
            .occupant
            .iter()
            .filter(|o| matches!(o, Occupant::Workshop(_)))
            .count();
        let workshops_listed: usize = self.players.iter().map(|p| p.workshops.len()).sum();
        if workshops_on_board != workshops_listed {
            return Err("workshops on the board and in the players' lists differ".into());
        }
        Ok(())
    }

    /// Spec §6, §9: one merchant per player per settlement; in a 2-player game one merchant per
    /// settlement in total, visitors only where the opponent's merchant stands.
    fn check_sites(&self) -> Result<(), String> {
        for site in &self.sites {
            let mut merchants = site.merchants.clone();
            merchants.sort_unstable();
            merchants.dedup();
            if merchants.len() != site.merchants.len() {
                return Err(format!(
                    "hex {}: a player has two merchants there (spec §6)",
                    site.hex
                ));
            }
            if site
                .merchants
                .iter()
                .chain(&site.visitors)
                .any(|s| *s >= self.options.players)
            {
                return Err(format!("hex {}: unknown seat", site.hex));
            }
            if self.is_two_player() {
                if site.merchants.len() > 1 {
                    return Err(format!(
                        "hex {}: two merchants in a 2-player game (spec §9)",
                        site.hex
                    ));
                }
                if site
                    .visitors
                    .iter()
                    .any(|v| site.merchants.is_empty() || site.merchants.contains(v))
                    || site.visitors.len() > 1
                {
                    return Err(format!(
                        "hex {}: visitor without an opponent's merchant (spec §9)",
                        site.hex
                    ));
                }
            } else if !site.visitors.is_empty() {
                return Err(format!(
                    "hex {}: visitors exist only in the 2-player game",
                    site.hex
                ));
            }
        }
        Ok(())
    }

    /// Spec §5: every tile belongs to exactly one complete road, built from a hub the owner had
    /// at the time, and every connection is the target of exactly one of the owner's roads.
    fn check_roads(&self) -> Result<(), String> {
        let mut tiles_in_roads = 0;
        for (index, road) in self.roads.iter().enumerate() {
            let owner = road.owner;
            let hub_ok = self.players[owner as usize].workshops.contains(&road.hub)
                || self.roads[..index]
                    .iter()
                    .any(|r| r.owner == owner && r.target == road.hub);
            if !hub_ok {
                return Err(format!(
                    "road {index} starts at hex {} which was not a hub",
                    road.hub
                ));
            }
            let chain: Vec<HexId> = std::iter::once(road.hub)
                .chain(road.tiles.iter().copied())
                .chain([road.target])
                .collect();
            for window in chain.windows(3) {
                let (edge_in, edge_out) = edges(window[0], window[1], window[2]);
                match self.occupant[window[1] as usize] {
                    Occupant::Tile(tile)
                        if tile.owner == owner
                            && usize::from(tile.edge_in) == edge_in
                            && usize::from(tile.edge_out) == edge_out => {}
                    _ => {
                        return Err(format!(
                            "road {index}: tile at hex {} missing or misoriented",
                            window[1]
                        ));
                    }
                }
            }
            if chain
                .windows(2)
                .any(|pair| MAP.direction_between(pair[0], pair[1]).is_none())
            {
                return Err(format!("road {index} is not continuous"));
            }
            match self.site_at(road.target) {
                Some(site) if site.is_connected(owner) => {}
                _ => {
                    return Err(format!(
                        "road {index} ends at hex {} without a connection",
                        road.target
                    ));
                }
            }
            tiles_in_roads += road.tiles.len();
        }
        let tiles_on_board = self
            .occupant
            .iter()
            .filter(|o| matches!(o, Occupant::Tile(_)))
            .count();
        if tiles_on_board != tiles_in_roads {
            return Err(format!(
                "{tiles_on_board} tiles on the board but {tiles_in_roads} in roads"
            ));
        }
        for site in &self.sites {
            for seat in site.merchants.iter().chain(&site.visitors) {
                let reaching = self
                    .roads
                    .iter()
                    .filter(|r| r.owner == *seat && r.target == site.hex)
                    .count();
                if reaching != 1 {
                    return Err(format!(
                        "seat {seat} is connected to hex {} by {reaching} roads",
                        site.hex
                    ));
                }
            }
        }
        Ok(())
    }

    /// Spec §4, §7, §9: whose turn it is and when the game must be over.
    fn check_phase(&self) -> Result<(), String> {
        let all_occupied = self.sites.iter().all(|s| !s.merchants.is_empty());
        match &self.phase {
            Phase::PlacingWorkshops { order, next } => {
                if *next >= order.len() || !self.roads.is_empty() {
                    return Err("workshop placement out of step".into());
                }
            }
            Phase::Playing { seat } => {
                if *seat >= self.options.players {
                    return Err("unknown seat to act".into());
                }
                if self.is_two_player() && all_occupied {
                    return Err(
                        "2-player game still running with every settlement occupied (spec §9)"
                            .into(),
                    );
                }
                if self.silent_turns >= 2 * self.options.players {
                    return Err("stall guard missed (spec §7)".into());
                }
            }
            Phase::Finished {
                reason,
                gold,
                winners,
                ..
            } => {
                if *reason == EndReason::AllSettlementsOccupied && !all_occupied {
                    return Err("ended for full occupation but a settlement is empty".into());
                }
                if *gold != self.gold() || winners.is_empty() {
                    return Err("final score out of step with the board".into());
                }
            }
        }
        Ok(())
    }
}
