//! The rules of play, by spec section:
//! - here: what the seat to act may do (the listing, §A5, A7, A8.1, A8.5, A13 S7–S10), the
//!   validation of an action against it, and the dispatch of an accepted action;
//! - `decision.rs`: the single clockwise decision pass on a revealed card (§A5, A7, A13 S9–S12);
//! - `ship.rs`: resolving a claim — port, speed order, goods, scrolls, the progress tile, and
//!   moving markers (§A8, A13 S6–S8, S13–S15);
//! - `round.rs`: revealing the next card, and the start and end of a round (§A6.4, A9, A11).
//!
//! Validation comes first: everything after `validate` accepted an action runs without failing.

mod decision;
mod round;
mod ship;

use crate::games::{ActionError, Seat};
use crate::proto::strozzi::v1 as pb;

use super::wire;
use super::{CardId, City, Decision, FlagKind, Phase, Strozzi, TileId};

impl Strozzi {
    /// Every action the seat to act may take, as plain values (shared by `legal_actions`, the
    /// forced-choice shortcut and validation).
    pub(super) fn choices(&self) -> Vec<pb::action::Kind> {
        use pb::action::Kind;
        match &self.phase {
            Phase::Deciding(decision) => {
                let Some(&seat) = decision.deciders.first() else {
                    return Vec::new();
                };
                let mut out = vec![Kind::PassCard(pb::PassCard {})];
                for flag in self.playable_flags(seat, decision) {
                    out.push(Kind::PlayFlag(pb::PlayFlag {
                        flag: flag.to_pb() as i32,
                    }));
                }
                out
            }
            Phase::PlacingShip { taker, flag, card } => {
                let mut out = Vec::new();
                for port in self.free_ports(*taker) {
                    for decline in self.goods_flag_step_choices(*flag, *card, port) {
                        out.push(Kind::PlaceShip(pb::PlaceShip {
                            port: port.to_pb() as i32,
                            decline_goods_flag_step: decline,
                        }));
                    }
                }
                out
            }
            Phase::ChoosingTile { .. } => {
                let mut out = Vec::new();
                for &tile in &self.display {
                    for decline in self.tile_step_choices(tile) {
                        out.push(Kind::TakeProgressTile(pb::TakeProgressTile {
                            tile_id: u32::from(tile),
                            decline_goods_step: decline,
                        }));
                    }
                }
                out
            }
            Phase::Finished => Vec::new(),
        }
    }

    /// The default action of the seat to act (see `Engine::default_action`; listed in
    /// `docs/rules/strozzi.md`): the most passive legal choice of each phase.
    pub(super) fn default_choice(&self) -> Option<pb::action::Kind> {
        use pb::action::Kind;
        match &self.phase {
            // Passing is always open to a decider (§A7).
            Phase::Deciding(_) => Some(Kind::PassCard(pb::PassCard {})),
            // The first free port in the order Venice, Rome, Naples (§A8.1), with every step
            // taken: declining is an option's extra choice (§A13 S8).
            Phase::PlacingShip { taker, .. } => self.free_ports(*taker).first().map(|port| {
                Kind::PlaceShip(pb::PlaceShip {
                    port: port.to_pb() as i32,
                    decline_goods_flag_step: false,
                })
            }),
            // A tile must be taken (§A8.5, §A13 S14): the first of the display, as the view
            // lists it.
            Phase::ChoosingTile { .. } => self.display.first().map(|&tile| {
                Kind::TakeProgressTile(pb::TakeProgressTile {
                    tile_id: u32::from(tile),
                    decline_goods_step: false,
                })
            }),
            Phase::Finished => None,
        }
    }

    /// Checks `kind` by the seat to act against the rules, without changing anything.
    pub(super) fn validate(&self, kind: &pb::action::Kind) -> Result<(), ActionError> {
        use pb::action::Kind;
        match (kind, &self.phase) {
            (_, Phase::Finished) => Err(ActionError::GameOver),
            (Kind::PassCard(_), Phase::Deciding(_)) => Ok(()),
            (Kind::PlayFlag(play), Phase::Deciding(decision)) => {
                let flag = FlagKind::from_pb(play.flag)?;
                let seat = decision.deciders.first().copied().unwrap_or_default();
                self.check_flag_play(seat, decision, flag)
            }
            (Kind::PlaceShip(place), Phase::PlacingShip { taker, flag, card }) => {
                let port = City::from_pb(place.port)?;
                if port == City::Florence {
                    return Err(ActionError::illegal(
                        "§A8.1",
                        "Florence is not a port: choose Venice, Rome or Naples",
                    ));
                }
                if !self.free_ports(*taker).contains(&port) {
                    return Err(ActionError::illegal(
                        "§A8.1",
                        format!(
                            "you already have a ship in {port:?} this round: choose another port"
                        ),
                    ));
                }
                if place.decline_goods_flag_step
                    && !self
                        .goods_flag_step_choices(*flag, *card, port)
                        .contains(&true)
                {
                    return Err(self.decline_error("§A8.3", *flag == FlagKind::Goods));
                }
                Ok(())
            }
            (Kind::TakeProgressTile(take), Phase::ChoosingTile { .. }) => {
                let tile = u8::try_from(take.tile_id)
                    .ok()
                    .filter(|t| usize::from(*t) < self.catalogue.tiles.len())
                    .ok_or_else(|| {
                        ActionError::malformed(format!("no progress tile {}", take.tile_id))
                    })?;
                if !self.display.contains(&tile) {
                    return Err(ActionError::illegal(
                        "§A8.5",
                        format!(
                            "progress tile {} is not face up: choose one of the displayed tiles",
                            take.tile_id
                        ),
                    ));
                }
                if take.decline_goods_step && !self.tile_step_choices(tile).contains(&true) {
                    return Err(self.decline_error("§A8.5", self.tile(tile).value == 1));
                }
                Ok(())
            }
            (_, Phase::Deciding(_)) => Err(ActionError::illegal(
                "§A7",
                "a card is being decided on: pass or play a flag (Pass, PlayFlag)",
            )),
            (_, Phase::PlacingShip { .. }) => Err(ActionError::illegal(
                "§A8.1",
                "you took the ship: choose its port first (PlaceShip)",
            )),
            (_, Phase::ChoosingTile { .. }) => Err(ActionError::illegal(
                "§A8.5",
                "the ship shows the progress symbol: take a face-up tile first (TakeProgressTile)",
            )),
        }
    }

    /// Why a step cannot be declined: the option is off, or there is no such step.
    pub(super) fn decline_error(&self, rule: &'static str, step_exists: bool) -> ActionError {
        if !self.options.optional_extra_steps {
            ActionError::illegal(
                "§A13 S8",
                "moves are mandatory in this game (optional_extra_steps is off)",
            )
        } else if step_exists {
            ActionError::illegal(rule, "this step cannot be declined")
        } else {
            ActionError::illegal(rule, "there is no extra step to decline here")
        }
    }

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
    pub(super) fn can_decide(&self, seat: Seat, decision: &Decision) -> bool {
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
    pub(super) fn goods_flag_step_exists(&self, flag: FlagKind, card: CardId, port: City) -> bool {
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

    /// Applies an action `validate` accepted, then makes any forced choice that follows.
    pub(super) fn perform(
        &mut self,
        seat: Seat,
        kind: &pb::action::Kind,
        events: &mut Vec<pb::Event>,
    ) {
        use pb::action::Kind;
        match kind {
            Kind::PassCard(_) => {
                events.push(wire::passed(seat));
                if let Phase::Deciding(decision) = &mut self.phase {
                    decision.deciders.remove(0);
                }
                self.advance_decision(events);
            }
            Kind::PlayFlag(play) => {
                if let Ok(flag) = FlagKind::from_pb(play.flag) {
                    self.play_flag(seat, flag, events);
                }
            }
            Kind::PlaceShip(place) => {
                if let (Ok(port), Phase::PlacingShip { flag, card, .. }) =
                    (City::from_pb(place.port), self.phase.clone())
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
}
