//! The spec's invariants (§10 and the bookkeeping they rest on), checked after every action by the
//! random-play tests.

use super::data::*;
use super::*;

impl Manila {
    /// The spec's invariants (§10 and the bookkeeping they rest on).
    pub(super) fn invariants(&self) -> Result<(), String> {
        let n = self.players_count as usize;
        if self.players.len() != n {
            return Err("wrong number of players".into());
        }
        // Shares: 5 per ware between the supply and the players (spec §1, §3.3).
        for ware in Ware::ALL {
            let held: u32 = self
                .players
                .iter()
                .map(|p| p.holdings()[ware.index()])
                .sum();
            if held + self.supply[ware.index()] != SHARES_PER_WARE {
                return Err(format!(
                    "{ware:?}: {held} held + {} in supply != 5",
                    self.supply[ware.index()]
                ));
            }
        }
        for (seat, player) in self.players.iter().enumerate() {
            if player.dealt.len() != SHARES_DEALT_EACH {
                return Err(format!(
                    "seat {seat} holds {} dealt shares",
                    player.dealt.len()
                ));
            }
            let holdings = player.holdings();
            if Ware::ALL
                .iter()
                .any(|w| player.mortgaged[w.index()] > holdings[w.index()])
            {
                return Err(format!("seat {seat} has more mortgaged shares than shares"));
            }
        }
        // Values stay on the track; the game is over exactly when a ware reached 30 (spec §6).
        if self.values.iter().any(|v| *v > TOP_STEP) {
            return Err("a value left the track".into());
        }
        let at_top = self.values.contains(&TOP_STEP);
        if at_top != matches!(self.phase, Phase::Over) || at_top != self.result.is_some() {
            return Err(format!(
                "game over ({:?}) but values {:?}",
                self.phase, self.values
            ));
        }
        if let Some(record) = &self.last_settlement {
            check_settlement(record)?;
        }
        self.voyage_invariants()
    }

    fn voyage_invariants(&self) -> Result<(), String> {
        let voyage = &self.voyage;
        if matches!(self.phase, Phase::Over) {
            return Ok(());
        }
        // Values only move at settlement (spec §4.9).
        if self.values != voyage.values_at_start {
            return Err("a value changed in the middle of a voyage".into());
        }
        if let Phase::Auction(auction) = &self.phase {
            if auction.passed[auction.turn as usize]
                || auction.high.is_some_and(|(s, _)| s == auction.turn)
            {
                return Err(
                    "the auction turn is on a seat that passed or holds the high bid".into(),
                );
            }
            if let Some((bidder, bid)) = auction.high
                && bid > self.players[bidder as usize].capacity()
            {
                return Err("the high bid exceeds the bidder's means".into());
            }
        }
        // Accomplices: every one is in hand or on exactly one space (spec §3.2).
        let mut placed = vec![0u32; self.players.len()];
        let spaces = voyage
            .punts
            .iter()
            .flat_map(|p| p.crew.iter().copied())
            .chain(voyage.wharves.iter().flatten().copied())
            .chain(voyage.shipyard.iter().flatten().copied())
            .chain(voyage.pirates.iter().flatten().copied())
            .chain(
                [voyage.small_pilot, voyage.large_pilot, voyage.insurer]
                    .into_iter()
                    .flatten(),
            );
        for seat in spaces {
            let slot = placed
                .get_mut(seat as usize)
                .ok_or("an accomplice of an unknown seat")?;
            *slot += 1;
        }
        for (seat, player) in self.players.iter().enumerate() {
            if player.in_hand + placed[seat] != self.accomplices_total() {
                return Err(format!(
                    "seat {seat}: {} in hand + {} placed != {}",
                    player.in_hand,
                    placed[seat],
                    self.accomplices_total()
                ));
            }
        }
        // The pirate bow fills first (spec §4.3, §4.5).
        if voyage.pirates[1].is_some() && voyage.pirates[0].is_none() {
            return Err("second pirate place taken while the bow is empty".into());
        }
        if voyage.punts.is_empty() {
            return Ok(());
        }
        // Exactly 3 distinct wares, starts 0..5 summing to 9 (spec §2.5, §4.2, §9 A1).
        if voyage.punts.len() != 3 || voyage.punts.windows(2).any(|w| w[0].ware >= w[1].ware) {
            return Err("the punts are not 3 distinct wares in ware order".into());
        }
        if voyage.punts.iter().map(|p| p.start).sum::<u32>() != START_SUM
            || voyage.punts.iter().any(|p| p.start > MAX_START)
        {
            return Err("start spaces break the 0..5 / sum 9 rule".into());
        }
        let mut harbour_berths = Vec::new();
        let mut shipyard_berths = Vec::new();
        for punt in &voyage.punts {
            if punt.crew.len() > punt.slots() {
                return Err(format!("{:?} has more crew than slots", punt.ware));
            }
            if punt.plundered && !punt.crew.is_empty() {
                return Err("a plundered punt still has crew".into());
            }
            match punt.place {
                PuntPlace::AtSea if punt.position > LAST_SPACE => {
                    return Err(format!("{:?} at sea beyond 13", punt.ware));
                }
                PuntPlace::AtSea => {}
                PuntPlace::Harbour(berth) => harbour_berths.push(berth),
                PuntPlace::Shipyard(berth) => shipyard_berths.push(berth),
            }
        }
        // Berths fill A, B, C in order (spec §2.2, §4.4).
        harbour_berths.sort_unstable();
        shipyard_berths.sort_unstable();
        if harbour_berths != (0..voyage.docked).collect::<Vec<_>>()
            || shipyard_berths != (0..voyage.wrecked).collect::<Vec<_>>()
        {
            return Err("harbour or shipyard berths are not filled A, B, C in order".into());
        }
        if voyage.rolls < 2 && voyage.docked > 0 {
            // After roll 1 no punt can have arrived (spec §4.4).
            return Err("a punt arrived before roll 2".into());
        }
        Ok(())
    }
}

/// The §10 invariants of a settled voyage.
fn check_settlement(record: &SettlementRecord) -> Result<(), String> {
    if record.docked + record.wrecked != 3 {
        return Err(format!(
            "harbour {} + shipyard {} != 3",
            record.docked, record.wrecked
        ));
    }
    if let Some((_, owed)) = record.insurance
        && owed != INSURANCE_LIABILITY[record.wrecked]
    {
        return Err(format!("insurer owed {owed} for {} wrecks", record.wrecked));
    }
    let mut raised = 0;
    for ware in Ware::ALL {
        let (before, after) = (
            record.values_before[ware.index()],
            record.values_after[ware.index()],
        );
        if after < before || after > before + 1 {
            return Err(format!("{ware:?} moved from step {before} to {after}"));
        }
        if after > before {
            raised += 1;
            if !record.loaded.contains(&ware) {
                return Err(format!("{ware:?} rose without being loaded"));
            }
        }
    }
    if raised != record.docked {
        return Err(format!(
            "{raised} wares rose but {} punts docked",
            record.docked
        ));
    }
    Ok(())
}
