//! The round loop (spec A7–A9, A11): revealing ships, the single clockwise decision pass, resolving
//! a claim (port, speed order, goods, scrolls, progress tile), moving markers, and the round end.
//!
//! Everything here runs after `Strozzi::validate` accepted the action, so nothing can fail.

use crate::games::Seat;
use crate::games::common::{clockwise_from, left_of};
use crate::proto::v1::strozzi as pb;

use super::view::{self, event};
use super::{
    CardId, City, Claim, Decision, FlagKind, NextActiveRule, Phase, ROUNDS, RoundStartRule,
    Strozzi, TileId, removed_cards,
};

/// Why a round ended (spec A9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundEnd {
    FlagsUsed,
    DeckEmpty,
}

impl Strozzi {
    // ----------------------------------------------------------------------------------------
    // Queries shared by listing and validation

    /// The flags `seat` may put on the card now (spec A5, A7). With no standing claim: any flag in
    /// hand. After a +1/goods claim: only the pirate flag (S10), or with `tentative_overbid` also
    /// +1/goods if the seat has not yet placed a tentative flag on this card.
    pub(super) fn playable_flags(&self, seat: Seat, decision: &Decision) -> Vec<FlagKind> {
        let hand = &self.players[seat as usize].flags;
        hand.iter()
            .copied()
            .filter(|&flag| self.check_flag_play(seat, decision, flag).is_ok())
            .collect()
    }

    /// Whether `seat` may play `flag` on the card (see [`Self::playable_flags`]).
    pub(super) fn check_flag_play(
        &self,
        seat: Seat,
        decision: &Decision,
        flag: FlagKind,
    ) -> Result<(), crate::games::ActionError> {
        use crate::games::ActionError;
        if !self.players[seat as usize].flags.contains(&flag) {
            return Err(ActionError::illegal(
                "§A5",
                format!("you no longer hold your {flag:?} flag this round"),
            ));
        }
        if decision.claim.is_some() && flag != FlagKind::Pirate {
            if !self.options.tentative_overbid {
                return Err(ActionError::illegal(
                    "§A13 S10",
                    "the card is already claimed: only a pirate flag can take it now (or pass)",
                ));
            }
            if decision.tentative_by.contains(&seat) {
                return Err(ActionError::illegal(
                    "§A13 S10",
                    "you already placed a tentative flag on this card: only your pirate flag can take it now",
                ));
            }
        }
        Ok(())
    }

    /// Whether `seat` has anything to decide on the card: it holds a flag it could play (passing
    /// alone is no decision, spec A7: without a pirate flag a player cannot take a claimed card).
    fn can_decide(&self, seat: Seat, decision: &Decision) -> bool {
        !self.playable_flags(seat, decision).is_empty()
    }

    /// Ports where `seat` has no ship yet this round (spec A8.1).
    pub(super) fn free_ports(&self, seat: Seat) -> Vec<City> {
        City::PORTS
            .into_iter()
            .filter(|port| {
                !self.ports[port.index()]
                    .iter()
                    .any(|berth| berth.owner == seat)
            })
            .collect()
    }

    /// Whether placing `card` in `port` with `flag` earns the goods flag's extra step (spec A5,
    /// A8.3; A13 S7: unconditional unless `goods_flag_needs_match`).
    fn goods_flag_step_exists(&self, flag: FlagKind, card: CardId, port: City) -> bool {
        flag == FlagKind::Goods
            && (!self.options.goods_flag_needs_match
                || port
                    .goods()
                    .is_some_and(|goods| self.card(card).goods(goods) > 0))
    }

    /// The allowed values of `decline_goods_flag_step` (spec A13 S8).
    pub(super) fn goods_flag_step_choices(
        &self,
        flag: FlagKind,
        card: CardId,
        port: City,
    ) -> Vec<bool> {
        if self.options.optional_extra_steps && self.goods_flag_step_exists(flag, card, port) {
            vec![false, true]
        } else {
            vec![false]
        }
    }

    /// The allowed values of `decline_goods_step` for a tile (spec A8.5, A13 S8).
    pub(super) fn tile_step_choices(&self, tile: TileId) -> Vec<bool> {
        if self.options.optional_extra_steps && self.tile(tile).goods.is_some() {
            vec![false, true]
        } else {
            vec![false]
        }
    }

    // ----------------------------------------------------------------------------------------
    // Applying an accepted action

    pub(super) fn perform(
        &mut self,
        seat: Seat,
        kind: &pb::action::Kind,
        events: &mut Vec<pb::Event>,
    ) {
        use pb::action::Kind;
        match kind {
            Kind::Pass(_) => {
                events.push(event::passed(seat));
                if let Phase::Deciding(decision) = &mut self.phase {
                    decision.deciders.remove(0);
                }
                self.advance_decision(events);
            }
            Kind::PlayFlag(play) => {
                if let Ok(flag) = view::flag_from_pb(play.flag) {
                    self.play_flag(seat, flag, events);
                }
            }
            Kind::PlaceShip(place) => {
                if let (Ok(port), Phase::PlacingShip { flag, card, .. }) =
                    (view::city_from_pb(place.port), self.phase.clone())
                {
                    self.place_ship(
                        seat,
                        flag,
                        card,
                        port,
                        place.decline_goods_flag_step,
                        false,
                        events,
                    );
                }
            }
            Kind::TakeProgressTile(take) => {
                if let Ok(tile) = u8::try_from(take.tile_id) {
                    self.take_tile(seat, tile, take.decline_goods_step, events);
                }
            }
        }
        self.settle_forced_choices(events);
    }

    /// Spec A5, A7: a pirate flag takes the card at once (a standing claim's flag goes back to its
    /// owner); a +1/goods flag is a tentative claim the rest of the pass may still override.
    fn play_flag(&mut self, seat: Seat, flag: FlagKind, events: &mut Vec<pb::Event>) {
        let Phase::Deciding(mut decision) = std::mem::replace(&mut self.phase, Phase::Finished)
        else {
            return;
        };
        self.players[seat as usize].flags.retain(|&f| f != flag);
        events.push(event::flag_played(seat, flag, flag != FlagKind::Pirate));
        if let Some(old) = decision.claim.take() {
            // Overridden (by a pirate, or by an overbid under S10's option): back to its owner.
            self.return_flag(old);
            events.push(event::flag_returned(old));
        }
        if flag == FlagKind::Pirate {
            self.take_ship(Claim { seat, flag }, decision.card, events);
            return;
        }
        decision.claim = Some(Claim { seat, flag });
        decision.tentative_by.push(seat);
        decision.deciders.remove(0);
        if self.options.pirate_chance_full_circle {
            // Spec A13 S9 (option): everybody else gets a chance, going once round from the claimer.
            decision.deciders = clockwise_from(left_of(seat, self.n()), self.n())
                .filter(|&s| s != seat)
                .collect();
        }
        self.phase = Phase::Deciding(decision);
        self.advance_decision(events);
    }

    fn return_flag(&mut self, claim: Claim) {
        let hand = &mut self.players[claim.seat as usize].flags;
        hand.push(claim.flag);
        hand.sort();
    }

    /// Drops deciders who cannot do anything (no flags; after a claim, no pirate flag); when nobody is left, the pass is over: the standing
    /// claim takes the ship, or the card is set aside and the same player reveals again (spec A7).
    fn advance_decision(&mut self, events: &mut Vec<pb::Event>) {
        let Phase::Deciding(mut decision) = std::mem::replace(&mut self.phase, Phase::Finished)
        else {
            return;
        };
        // Whether a seat can act changes only when a claim is placed, so pruning the whole list
        // here keeps it exact (the view shows it).
        let still_able: Vec<Seat> = decision
            .deciders
            .iter()
            .copied()
            .filter(|&seat| self.can_decide(seat, &decision))
            .collect();
        decision.deciders = still_able;
        if !decision.deciders.is_empty() {
            self.phase = Phase::Deciding(decision);
            return;
        }
        match decision.claim {
            Some(claim) => self.take_ship(claim, decision.card, events),
            None => {
                events.push(event::card_set_aside(
                    self.active,
                    self.card(decision.card),
                    decision.card,
                ));
                self.set_aside.push(decision.card);
                self.next_turn(self.active, events);
            }
        }
    }

    /// The claim stands: `claim.seat` takes the ship and must place it (spec A7, A8.1).
    fn take_ship(&mut self, claim: Claim, card: CardId, events: &mut Vec<pb::Event>) {
        events.push(event::ship_taken(claim, self.card(card), card));
        self.phase = Phase::PlacingShip {
            taker: claim.seat,
            flag: claim.flag,
            card,
        };
    }

    /// A choice with a single option is no decision: the engine makes it (a forced port, a lone
    /// face-up tile without an optional step).
    fn settle_forced_choices(&mut self, events: &mut Vec<pb::Event>) {
        loop {
            let choices = self.choices();
            let [only] = choices.as_slice() else { return };
            match (only, self.phase.clone()) {
                (pb::action::Kind::PlaceShip(place), Phase::PlacingShip { taker, flag, card }) => {
                    let Ok(port) = view::city_from_pb(place.port) else {
                        return;
                    };
                    self.place_ship(taker, flag, card, port, false, true, events);
                }
                (pb::action::Kind::TakeProgressTile(take), Phase::ChoosingTile { taker, .. }) => {
                    let Ok(tile) = u8::try_from(take.tile_id) else {
                        return;
                    };
                    self.take_tile(taker, tile, false, events);
                }
                _ => return,
            }
        }
    }

    /// Spec A8.1–A8.4 (order per A13 S15): berth the ship in speed order, then the port's goods
    /// (and the goods flag's step), then the scrolls; then the progress tile if the card shows one.
    #[allow(clippy::too_many_arguments)]
    fn place_ship(
        &mut self,
        taker: Seat,
        flag: FlagKind,
        card: CardId,
        port: City,
        decline_flag_step: bool,
        automatic: bool,
        events: &mut Vec<pb::Event>,
    ) {
        let ship = self.card(card).clone();
        // Spec A5, A8.2: +1 counts as one more sail; an equal speed goes below the earlier ship.
        let speed = ship.sails + u8::from(flag == FlagKind::PlusOne);
        let column = &mut self.ports[port.index()];
        let place = column
            .iter()
            .take_while(|berth| berth.speed >= speed)
            .count();
        column.insert(
            place,
            super::Berth {
                owner: taker,
                card,
                flag,
                speed,
                arrival: self.arrivals,
            },
        );
        self.arrivals += 1;
        events.push(event::ship_placed(taker, port, speed, place, automatic));
        // Spec A8.3: one step per matching symbol; other ports' symbols do nothing.
        let matching = port.goods().map_or(0, |goods| ship.goods(goods));
        if matching > 0 {
            self.move_marker(taker, port, matching, pb::MoveCause::CardGoods, events);
        }
        if self.goods_flag_step_exists(flag, card, port) {
            if decline_flag_step {
                events.push(event::step_declined(taker, pb::MoveCause::GoodsFlag));
            } else {
                self.move_marker(taker, port, 1, pb::MoveCause::GoodsFlag, events);
            }
        }
        // Spec A8.4: one Florence step per scroll.
        if ship.scrolls > 0 {
            self.move_marker(
                taker,
                City::Florence,
                ship.scrolls,
                pb::MoveCause::Scrolls,
                events,
            );
        }
        // Spec A8.5, A13 S13/S14: a tile must be taken if any is face up; none face up gives nothing.
        if ship.progress && !self.display.is_empty() {
            self.phase = Phase::ChoosingTile { taker, flag, card };
        } else {
            self.finish_turn(taker, events);
        }
    }

    /// Spec A8.5: take the tile, climb its goods symbol's port (whichever port the ship went to),
    /// refill the display from the stack.
    fn take_tile(
        &mut self,
        taker: Seat,
        tile: TileId,
        decline_step: bool,
        events: &mut Vec<pb::Event>,
    ) {
        self.display.retain(|&t| t != tile);
        self.players[taker as usize].tiles.push(tile);
        events.push(event::tile_taken(taker, self.tile(tile), tile));
        if let Some(goods) = self.tile(tile).goods {
            if decline_step {
                events.push(event::step_declined(taker, pb::MoveCause::ProgressTile));
            } else {
                self.move_marker(taker, goods.port(), 1, pb::MoveCause::ProgressTile, events);
            }
        }
        let refill = self.stack.pop();
        if let Some(new_tile) = refill {
            self.display.push(new_tile);
        }
        events.push(event::display_refilled(
            refill.map(|t| (self.tile(t), t)),
            self.stack.len(),
        ));
        self.finish_turn(taker, events);
    }

    /// After a ship is dealt with: the next active player is left of the taker (spec A7, S11), or
    /// with the option left of the player who revealed it.
    fn finish_turn(&mut self, taker: Seat, events: &mut Vec<pb::Event>) {
        let from = match self.options.next_active_rule {
            NextActiveRule::LeftOfTaker => taker,
            NextActiveRule::LeftOfActive => self.active,
        };
        self.next_turn(left_of(from, self.n()), events);
    }

    /// The top of the round loop (spec A7, A9): end the round when every flag is used or the deck
    /// is out; otherwise the first player clockwise from `from` who still holds a flag (S12) becomes
    /// active and reveals the top card.
    pub(super) fn next_turn(&mut self, from: Seat, events: &mut Vec<pb::Event>) {
        if self.players.iter().all(|p| p.flags.is_empty()) {
            return self.end_round(RoundEnd::FlagsUsed, events);
        }
        let Some(card) = self.deck.last().copied() else {
            return self.end_round(RoundEnd::DeckEmpty, events);
        };
        let n = self.n();
        let Some(active) =
            clockwise_from(from, n).find(|&s| !self.players[s as usize].flags.is_empty())
        else {
            return;
        };
        self.deck.pop();
        self.active = active;
        events.push(event::card_revealed(
            active,
            self.card(card),
            card,
            self.deck.len(),
        ));
        // One clockwise pass starting with the active player; the right-hand neighbour is last.
        let decision = Decision {
            card,
            claim: None,
            deciders: clockwise_from(active, n).collect(),
            tentative_by: Vec::new(),
        };
        self.phase = Phase::Deciding(decision);
        self.advance_decision(events);
    }

    /// Spec A8 "moving a marker": up `steps`, never past the top (extra steps are lost); placed to
    /// the right of every marker already on the space reached. A move that ends where it started
    /// keeps the marker's place within the space.
    pub(super) fn move_marker(
        &mut self,
        seat: Seat,
        city: City,
        steps: u8,
        cause: pb::MoveCause,
        events: &mut Vec<pb::Event>,
    ) {
        let top = self.catalogue.tracks[city.index()].top;
        let (from, slot) = self.marker(seat, city);
        let to = from.saturating_add(steps).min(top);
        let slot = if to == from {
            slot
        } else {
            let spaces = &mut self.tracks[city.index()];
            spaces[usize::from(from)].retain(|&s| s != seat);
            spaces[usize::from(to)].push(seat);
            self.arrived_round[seat as usize][city.index()] = self.round;
            spaces[usize::from(to)].len() - 1
        };
        events.push(event::marker_moved(
            seat, city, cause, steps, from, to, slot,
        ));
    }

    /// A seat's marker on a city's track: (space, place from the left).
    pub(super) fn marker(&self, seat: Seat, city: City) -> (u8, usize) {
        for (position, space) in self.tracks[city.index()].iter().enumerate() {
            if let Some(slot) = space.iter().position(|&s| s == seat) {
                return (position as u8, slot);
            }
        }
        (0, 0)
    }

    /// Markers of a city from best to worst: higher space first, leftmost first within a space.
    pub(super) fn track_order(&self, city: City) -> impl Iterator<Item = (u8, Seat)> + '_ {
        self.tracks[city.index()]
            .iter()
            .enumerate()
            .rev()
            .flat_map(|(position, space)| space.iter().map(move |&seat| (position as u8, seat)))
    }

    /// Each seat's rank in Florence (0 = best), the tie-break of spec A11 and A12.
    pub(super) fn florence_ranks(&self) -> Vec<usize> {
        let mut ranks = vec![0; self.n() as usize];
        for (rank, (_, seat)) in self.track_order(City::Florence).enumerate() {
            ranks[seat as usize] = rank;
        }
        ranks
    }

    // ----------------------------------------------------------------------------------------
    // Rounds

    /// Spec A6.4 and A11: flags back, ports cleared, all 29 cards reshuffled, the same number
    /// removed face down, and the start player reveals.
    pub(super) fn start_round(&mut self, start: Seat, events: &mut Vec<pb::Event>) {
        for player in &mut self.players {
            player.flags = FlagKind::ALL.to_vec();
        }
        for column in &mut self.ports {
            column.clear();
        }
        self.arrivals = 0;
        self.set_aside.clear();
        let mut cards: Vec<CardId> = (0..self.catalogue.cards.len() as u8).collect();
        self.rng.shuffle(&mut cards);
        self.deck = cards.split_off(removed_cards(self.n()));
        self.removed = cards;
        self.round_start_seat = start;
        events.push(event::round_started(
            self.round,
            start,
            self.deck.len(),
            self.removed.len(),
        ));
        self.next_turn(start, events);
    }

    /// Spec A9–A12: score the round; start the next one, or finish the game after round 3.
    pub(super) fn end_round(&mut self, reason: RoundEnd, events: &mut Vec<pb::Event>) {
        events.push(self.score_round(reason));
        if self.round == ROUNDS {
            self.phase = Phase::Finished;
            events.push(self.score_game());
            return;
        }
        // Spec A11 (S3): the best Florence marker starts; with the option, nobody having moved in
        // Florence keeps the previous start player.
        let nobody_moved = self.tracks[City::Florence.index()][0].len() == self.n() as usize;
        let start = match (self.options.round_start_rule, nobody_moved) {
            (RoundStartRule::KeepWhileNobodyMoved, true) => self.round_start_seat,
            _ => self
                .track_order(City::Florence)
                .next()
                .map_or(self.round_start_seat, |(_, seat)| seat),
        };
        self.round += 1;
        self.start_round(start, events);
    }
}
