//! The spec's invariants (A14 and those implied by A1–A12), checked after every action in tests.

use crate::games::Seat;

use super::{CardId, City, FlagKind, Phase, ROUNDS, Strozzi, deck_size, removed_cards};

impl Strozzi {
    /// Every invariant of the spec, or the first one broken.
    pub(super) fn invariants(&self) -> Result<(), String> {
        let n = self.n() as usize;
        if self.players.len() != n || self.arrived_round.len() != n {
            return Err("one player record per seat expected".into());
        }
        if !(1..=ROUNDS).contains(&self.round) {
            return Err(format!("round {} outside 1..={ROUNDS}", self.round));
        }
        self.check_cards()?;
        self.check_flags_and_ports()?;
        self.check_tracks()?;
        self.check_tiles()?;
        self.check_money()?;
        self.check_phase()
    }

    /// The card currently face up (being decided on, or being placed).
    fn card_in_play(&self) -> Option<CardId> {
        match &self.phase {
            Phase::Deciding(decision) => Some(decision.card),
            Phase::PlacingShip { card, .. } => Some(*card),
            Phase::ChoosingTile { .. } | Phase::Finished => None,
        }
    }

    /// All 29 cards are somewhere exactly once; the round's deck had 3·N + 3 cards (spec A6.4, A14).
    fn check_cards(&self) -> Result<(), String> {
        let mut seen = 0u64;
        let berths = self.ports.iter().flatten().map(|b| b.card);
        let all = self
            .deck
            .iter()
            .chain(&self.removed)
            .chain(&self.set_aside)
            .copied()
            .chain(berths)
            .chain(self.card_in_play());
        for card in all {
            if usize::from(card) >= self.catalogue.cards.len() || seen & (1 << card) != 0 {
                return Err(format!(
                    "card {card} is missing from the catalogue or in two places"
                ));
            }
            seen |= 1 << card;
        }
        if seen.count_ones() as usize != self.catalogue.cards.len() {
            return Err(format!(
                "{} cards accounted for, expected {}",
                seen.count_ones(),
                self.catalogue.cards.len()
            ));
        }
        if self.removed.len() != removed_cards(self.n()) {
            return Err(format!(
                "{} cards removed, expected {}",
                self.removed.len(),
                removed_cards(self.n())
            ));
        }
        let round_deck = self.catalogue.cards.len() - self.removed.len();
        if round_deck != deck_size(self.n()) {
            return Err(format!(
                "the round's deck had {round_deck} cards, expected 3·N+3 = {}",
                deck_size(self.n())
            ));
        }
        Ok(())
    }

    /// During a round every seat's three flags are accounted for: in hand, on the card, being
    /// placed, or on one of its ships; so ships + flags = 3. Each port holds at most one ship per
    /// player, and its column is sorted by effective speed, ties by arrival (spec A8, A14).
    fn check_flags_and_ports(&self) -> Result<(), String> {
        let mut flags_of: Vec<Vec<FlagKind>> =
            self.players.iter().map(|p| p.flags.clone()).collect();
        match &self.phase {
            Phase::Deciding(decision) => {
                if let Some(claim) = decision.claim {
                    flags_of[claim.seat as usize].push(claim.flag);
                }
            }
            Phase::PlacingShip { taker, flag, .. } => flags_of[*taker as usize].push(*flag),
            Phase::ChoosingTile { .. } | Phase::Finished => {}
        }
        for (port, column) in City::PORTS.iter().zip(&self.ports) {
            for (i, berth) in column.iter().enumerate() {
                let card = self.card(berth.card);
                if berth.speed != card.sails + u8::from(berth.flag == FlagKind::PlusOne) {
                    return Err(format!(
                        "{port:?}: ship {} has speed {}",
                        card.label, berth.speed
                    ));
                }
                if column[..i].iter().any(|other| other.owner == berth.owner) {
                    return Err(format!("{port:?} holds two ships of seat {}", berth.owner));
                }
                if let Some(above) = i.checked_sub(1).map(|j| &column[j])
                    && (above.speed < berth.speed
                        || (above.speed == berth.speed && above.arrival > berth.arrival))
                {
                    return Err(format!("{port:?} is not in speed order (ties by arrival)"));
                }
                if berth.arrival >= self.arrivals {
                    return Err(format!(
                        "{port:?}: arrival {} not yet counted",
                        berth.arrival
                    ));
                }
                flags_of[berth.owner as usize].push(berth.flag);
            }
        }
        for (seat, flags) in flags_of.iter_mut().enumerate() {
            let ships = self
                .ports
                .iter()
                .flatten()
                .filter(|b| b.owner == seat as Seat)
                .count();
            let hand = self.players[seat].flags.len();
            let placing =
                matches!(self.phase, Phase::PlacingShip { taker, .. } if taker as usize == seat);
            let tentative = matches!(&self.phase, Phase::Deciding(d) if d.claim.is_some_and(|c| c.seat as usize == seat));
            if self.phase != Phase::Finished
                && ships + hand + usize::from(placing) + usize::from(tentative) != 3
            {
                return Err(format!(
                    "seat {seat}: {ships} ships + {hand} flags in hand != 3"
                ));
            }
            if !self.players[seat].flags.is_sorted() {
                return Err(format!("seat {seat}: hand not kept sorted"));
            }
            flags.sort();
            if self.phase != Phase::Finished && flags.as_slice() != FlagKind::ALL {
                return Err(format!(
                    "seat {seat}: flags {flags:?} are not exactly one of each"
                ));
            }
        }
        Ok(())
    }

    /// Every seat has exactly one marker per track, on a space of the track (spec A6.1, A2).
    fn check_tracks(&self) -> Result<(), String> {
        for city in City::ALL {
            let spaces = &self.tracks[city.index()];
            if spaces.len() != usize::from(self.catalogue.tracks[city.index()].top) + 1 {
                return Err(format!("{city:?}: wrong number of spaces"));
            }
            let mut seen = 0u32;
            for seat in spaces.iter().flatten() {
                if *seat >= self.n() || seen & (1 << seat) != 0 {
                    return Err(format!(
                        "{city:?}: marker of seat {seat} is invalid or doubled"
                    ));
                }
                seen |= 1 << seat;
            }
            if seen.count_ones() != self.n() {
                return Err(format!("{city:?}: a marker is missing"));
            }
        }
        Ok(())
    }

    /// All 36 tiles are in the stack, the display or with a player; the display holds 3 while the
    /// stack lasts (spec A6.3, A8.5).
    fn check_tiles(&self) -> Result<(), String> {
        let mut seen = 0u64;
        let taken = self.players.iter().flat_map(|p| &p.tiles);
        for &tile in self.stack.iter().chain(&self.display).chain(taken) {
            if usize::from(tile) >= self.catalogue.tiles.len() || seen & (1 << tile) != 0 {
                return Err(format!("tile {tile} is invalid or in two places"));
            }
            seen |= 1 << tile;
        }
        if seen.count_ones() as usize != self.catalogue.tiles.len() {
            return Err("a progress tile is missing".into());
        }
        if self.display.len() > 3 || (self.display.len() < 3 && !self.stack.is_empty()) {
            return Err(format!(
                "display of {} tiles with {} in the stack",
                self.display.len(),
                self.stack.len()
            ));
        }
        Ok(())
    }

    /// Money only comes from scoring, in multiples of 5 (spec A6.2, A14).
    fn check_money(&self) -> Result<(), String> {
        for (seat, player) in self.players.iter().enumerate() {
            if player.money < 0 || player.money % 5 != 0 {
                return Err(format!(
                    "seat {seat} has {} coins: not a non-negative multiple of 5",
                    player.money
                ));
            }
        }
        Ok(())
    }

    /// Whoever must act can act: a decider holds a playable flag; a taker has a free port; a tile
    /// chooser sees a tile. The game ends only after round 3, with a winner.
    fn check_phase(&self) -> Result<(), String> {
        match &self.phase {
            Phase::Deciding(decision) => {
                let Some(&seat) = decision.deciders.first() else {
                    return Err("a card is being decided on but nobody is asked".into());
                };
                if self.playable_flags(seat, decision).is_empty() {
                    return Err(format!("seat {seat} is asked but has no flag it may play"));
                }
                if self.players[self.active as usize].flags.is_empty()
                    && decision.claim.is_none_or(|c| c.seat != self.active)
                {
                    return Err(format!("active seat {} holds no flag", self.active));
                }
            }
            Phase::PlacingShip { taker, .. } => {
                if self.free_ports(*taker).is_empty() {
                    return Err(format!("seat {taker} took a ship but has no free port"));
                }
            }
            Phase::ChoosingTile { .. } => {
                if self.display.is_empty() {
                    return Err("a tile must be chosen but none is face up".into());
                }
            }
            Phase::Finished => {
                if self.round != ROUNDS || self.winners.is_empty() {
                    return Err(
                        "the game ended before round 3 was scored, or without a winner".into(),
                    );
                }
            }
        }
        Ok(())
    }
}
