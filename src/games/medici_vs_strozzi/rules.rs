//! The turn loop (spec B4) and the end of a round (spec B6): draw 1–3 tiles, name a price, the
//! opponent buys or declines, the buyer pays and loads the whole lot on one ship or discards it,
//! and the buyer draws next.

use super::wire::{action, event, round_started};
use super::{MediciVsStrozzi, RoundEnd, Stage, data};
use crate::games::{ActionError, LegalAction, Seat};
use crate::proto::medici_vs_strozzi::v1 as pb;
use pb::action::Kind;

/// At most three tiles per lot (spec B4).
pub const MAX_DRAW: usize = 3;

impl MediciVsStrozzi {
    /// How many tiles the current lot may hold at most: three, no more than fit on one of the
    /// DRAWER'S OWN ships (the opponent's space plays no part, M3), and no more than the bag
    /// still holds (M7).
    pub(super) fn draw_cap(&self) -> usize {
        MAX_DRAW
            .min(self.player(self.active).max_free_space())
            .min(self.lot.len() + self.bag.len())
    }

    /// How many more tiles the active player may draw for this lot.
    pub(super) fn draws_left(&self) -> usize {
        self.draw_cap().saturating_sub(self.lot.len())
    }

    /// The complete listing for the seat to act (the caller checked it is that seat's turn).
    pub(super) fn legal_for_actor(&self) -> Vec<LegalAction<pb::Action>> {
        match self.stage {
            Stage::Drawing => {
                let mut legal = Vec::new();
                if self.draws_left() > 0 {
                    legal.push(LegalAction::Exact(action(Kind::DrawTile(pb::DrawTile {}))));
                }
                if !self.lot.is_empty() {
                    legal.push(LegalAction::Amount {
                        action: action(Kind::OfferLot(pb::OfferLot { price: 0 })),
                        min: 0,
                        max: u64::from(self.settings.max_price),
                    });
                }
                legal
            }
            Stage::Deciding { .. } => vec![
                LegalAction::Exact(action(Kind::BuyLot(pb::BuyLot {}))),
                LegalAction::Exact(action(Kind::DeclineLot(pb::DeclineLot {}))),
            ],
            Stage::Loading { buyer, .. } => {
                let player = self.player(buyer);
                let mut legal = Vec::new();
                for ship in player
                    .ships
                    .iter()
                    .filter(|s| s.free_space() >= self.lot.len())
                {
                    let load = |harbour| {
                        LegalAction::Exact(action(Kind::LoadLot(pb::LoadLot {
                            ship: ship.capacity,
                            harbour,
                        })))
                    };
                    match ship.harbour {
                        // A ship in a harbour stays there this round (spec B4): one move, listed
                        // once, in the explicit form an empty ship's loading takes. `load_lot`
                        // still accepts it without the harbour, the same move, which older
                        // clients sent and older logs hold; a client shows one button per listed
                        // entry, so listing both was two buttons for one move (issue #31).
                        Some(harbour) => legal.push(load(Some(harbour))),
                        None => {
                            for harbour in 0..self.board.harbour_count() {
                                if player.ship_in(harbour).is_none() {
                                    legal.push(load(Some(harbour)));
                                }
                            }
                        }
                    }
                }
                // Discarding is always allowed (B4, M4, M5).
                legal.push(LegalAction::Exact(action(Kind::DiscardLot(
                    pb::DiscardLot {},
                ))));
                legal
            }
            Stage::Finished => Vec::new(),
        }
    }

    /// The default action of the seat to act (see `Engine::default_action`; listed in
    /// `docs/rules/medici-vs-strozzi.md`): the most passive legal choice at each stage (spec B4).
    pub(super) fn default_for_actor(&self) -> Option<pb::Action> {
        let kind = match self.stage {
            // A lot needs at least one tile (B4): draw one, and stop there.
            Stage::Drawing if self.lot.is_empty() => Kind::DrawTile(pb::DrawTile {}),
            // The lowest price (B4, M9).
            Stage::Drawing => Kind::OfferLot(pb::OfferLot { price: 0 }),
            // Declining is the opponent's passive answer (B4): the drawer then buys its own lot.
            Stage::Deciding { .. } => Kind::DeclineLot(pb::DeclineLot {}),
            // Discarding is always allowed (B4, M4) and chooses no ship or harbour.
            Stage::Loading { .. } => Kind::DiscardLot(pb::DiscardLot {}),
            Stage::Finished => return None,
        };
        Some(action(kind))
    }

    /// Validates then applies one action of the seat to act. Every check comes before the first
    /// mutation, so a rejected action leaves the state untouched.
    pub(super) fn apply_kind(
        &mut self,
        seat: Seat,
        kind: &Kind,
    ) -> Result<Vec<pb::Event>, ActionError> {
        match (self.stage, kind) {
            (Stage::Drawing, Kind::DrawTile(_)) => self.draw_tile(seat),
            (Stage::Drawing, Kind::OfferLot(offer)) => self.offer_lot(seat, offer.price),
            (Stage::Deciding { price }, Kind::BuyLot(_)) => Ok(self.sell_lot(seat, price, false)),
            (Stage::Deciding { price }, Kind::DeclineLot(_)) => {
                Ok(self.sell_lot(self.active, price, true))
            }
            (Stage::Loading { buyer, .. }, Kind::LoadLot(load)) => self.load_lot(buyer, load),
            (Stage::Loading { buyer, .. }, Kind::DiscardLot(_)) => Ok(self.discard_lot(buyer)),
            (stage, kind) => Err(ActionError::illegal(
                "§B4",
                wrong_stage_message(stage, kind),
            )),
        }
    }

    /// Draws one tile uniformly from the bag (spec B4): at most three per lot, no more than fit on
    /// one of the drawer's own ships (M3), no more than the bag holds (M7).
    fn draw_tile(&mut self, seat: Seat) -> Result<Vec<pb::Event>, ActionError> {
        if self.lot.len() >= MAX_DRAW {
            return Err(ActionError::illegal(
                "§B4",
                "a lot has at most 3 tiles: name a price now",
            ));
        }
        let own_space = self.player(seat).max_free_space();
        if self.lot.len() >= own_space {
            return Err(ActionError::illegal(
                "§B4 M3",
                format!(
                    "none of your own ships could take more than {own_space} tiles: name a price now"
                ),
            ));
        }
        if self.bag.is_empty() {
            return Err(ActionError::illegal(
                "§B4 M7",
                "the bag is empty: name a price now",
            ));
        }
        // The bag is sorted, so which tile comes out is decided by the RNG alone.
        let tile = self.bag.remove(self.rng.index(self.bag.len()));
        self.lot.push(tile);
        Ok(vec![event(pb::event::Kind::TileDrawn(pb::TileDrawn {
            seat,
            tile: Some(tile.to_pb()),
        }))])
    }

    /// Names the price of the drawn lot (spec B4): any whole number from 0 to the cap (M9).
    fn offer_lot(&mut self, seat: Seat, price: u32) -> Result<Vec<pb::Event>, ActionError> {
        if self.lot.is_empty() {
            return Err(ActionError::illegal(
                "§B4",
                "draw at least one tile before naming a price",
            ));
        }
        if price > self.settings.max_price {
            return Err(ActionError::illegal(
                "§B9 M9",
                format!(
                    "the price may be at most {} in this game",
                    self.settings.max_price
                ),
            ));
        }
        self.stage = Stage::Deciding { price };
        Ok(vec![event(pb::event::Kind::LotOffered(pb::LotOffered {
            seat,
            price,
        }))])
    }

    /// The buyer pays the bank (money may go negative: loans, B8) and must now load or discard.
    fn sell_lot(&mut self, buyer: Seat, price: u32, declined: bool) -> Vec<pb::Event> {
        self.players[buyer as usize].pay(price);
        self.stage = Stage::Loading { price, buyer };
        vec![event(pb::event::Kind::LotSold(pb::LotSold {
            buyer,
            price,
            declined,
        }))]
    }

    /// Puts the whole lot on one ship with room for it (B4, M13). An empty ship is placed now in a
    /// harbour where the buyer has no ship yet; a placed ship stays where it is.
    fn load_lot(&mut self, buyer: Seat, load: &pb::LoadLot) -> Result<Vec<pb::Event>, ActionError> {
        let ship_index = super::SHIP_CAPACITIES
            .iter()
            .position(|&c| c == load.ship)
            .ok_or_else(|| {
                ActionError::malformed(format!(
                    "ship {} does not exist: ships are named 3, 4 and 5",
                    load.ship
                ))
            })?;
        if let Some(harbour) = load.harbour
            && harbour >= self.board.harbour_count()
        {
            return Err(ActionError::malformed(format!(
                "harbour {harbour} does not exist: the board's harbours are {}",
                self.board.harbour_list()
            )));
        }
        let player = self.player(buyer);
        let ship = &player.ships[ship_index];
        if ship.free_space() < self.lot.len() {
            return Err(ActionError::illegal(
                "§B4 M4",
                format!(
                    "ship {} has room for {} tiles but the lot has {}; a lot cannot be split: load it on a ship with room or discard it",
                    ship.capacity,
                    ship.free_space(),
                    self.lot.len()
                ),
            ));
        }
        let (harbour, placed) = match (ship.harbour, load.harbour) {
            (Some(at), None) => (at, false),
            (Some(at), Some(asked)) if asked == at => (at, false),
            (Some(at), Some(asked)) => {
                return Err(ActionError::illegal(
                    "§B4",
                    format!(
                        "ship {} is in {} and stays there this round, not {}",
                        ship.capacity,
                        self.board.harbour_label(at),
                        self.board.harbour_label(asked)
                    ),
                ));
            }
            (None, None) => {
                return Err(ActionError::illegal(
                    "§B4",
                    format!(
                        "ship {} is empty: give the harbour it sails to",
                        ship.capacity
                    ),
                ));
            }
            (None, Some(asked)) if player.ship_in(asked).is_some() => {
                return Err(ActionError::illegal(
                    "§B4",
                    format!(
                        "you already have a ship in {}: one ship per harbour per player",
                        self.board.harbour_label(asked)
                    ),
                ));
            }
            (None, Some(asked)) => (asked, true),
        };
        let tiles = std::mem::take(&mut self.lot);
        let event_tiles = tiles.iter().map(|t| t.to_pb()).collect();
        let ship = &mut self.players[buyer as usize].ships[ship_index];
        ship.harbour = Some(harbour);
        ship.tiles.extend(tiles);
        let mut events = vec![event(pb::event::Kind::LotLoaded(pb::LotLoaded {
            seat: buyer,
            ship: load.ship,
            harbour,
            placed,
            tiles: event_tiles,
        }))];
        self.finish_lot(buyer, &mut events);
        Ok(events)
    }

    /// Discards the lot: always allowed, out of play until the round ends (B4, M4, M5).
    fn discard_lot(&mut self, buyer: Seat) -> Vec<pb::Event> {
        let tiles = std::mem::take(&mut self.lot);
        let event_tiles = tiles.iter().map(|t| t.to_pb()).collect();
        self.discarded.extend(tiles);
        let mut events = vec![event(pb::event::Kind::LotDiscarded(pb::LotDiscarded {
            seat: buyer,
            tiles: event_tiles,
        }))];
        self.finish_lot(buyer, &mut events);
        events
    }

    /// After each resolved lot: end the round if it is over (B6), otherwise the buyer draws next.
    fn finish_lot(&mut self, buyer: Seat, events: &mut Vec<pb::Event>) {
        match self.round_end() {
            Some(reason) => self.end_round(reason, events),
            None => {
                self.active = buyer;
                self.stage = Stage::Drawing;
            }
        }
    }

    /// The round is over when one player's three ships are all full (M8) or the bag is empty
    /// (M7). When both hold at once, the full ships are reported.
    pub(super) fn round_end(&self) -> Option<RoundEnd> {
        if self.players.iter().any(|p| p.all_ships_full()) {
            Some(RoundEnd::ShipsFull)
        } else if self.bag.is_empty() {
            Some(RoundEnd::BagEmpty)
        } else {
            None
        }
    }

    /// Scores the round (B7); then either ends the game after round 3 (B8) or starts the next
    /// round: every tile back in the bag, ships empty and unplaced, markers kept, Strozzi first.
    fn end_round(&mut self, reason: RoundEnd, events: &mut Vec<pb::Event>) {
        events.push(event(pb::event::Kind::RoundScored(
            self.score_round(reason),
        )));
        if self.round >= super::ROUNDS {
            self.stage = Stage::Finished;
            let outcome =
                crate::games::Engine::outcome(self).unwrap_or_else(|| crate::games::Outcome {
                    scores: Vec::new(),
                    winners: Vec::new(),
                });
            events.push(event(pb::event::Kind::GameEnded(pb::GameEnded {
                money: outcome.scores,
                winners: outcome.winners,
            })));
            return;
        }
        self.round += 1;
        self.bag = data::full_tile_set();
        self.discarded.clear();
        for ship in self.players.iter_mut().flat_map(|p| p.ships.iter_mut()) {
            ship.tiles.clear();
            ship.harbour = None;
        }
        self.active = super::STROZZI;
        self.stage = Stage::Drawing;
        events.push(round_started(self.round, self.active));
    }
}

fn wrong_stage_message(stage: Stage, kind: &Kind) -> String {
    let tried = match kind {
        Kind::DrawTile(_) => "DrawTile",
        Kind::OfferLot(_) => "OfferLot",
        Kind::BuyLot(_) => "BuyLot",
        Kind::DeclineLot(_) => "DeclineLot",
        Kind::LoadLot(_) => "LoadLot",
        Kind::DiscardLot(_) => "DiscardLot",
    };
    let expected = match stage {
        Stage::Drawing => "DrawTile or OfferLot (the active player is drawing)",
        Stage::Deciding { .. } => "BuyLot or DeclineLot (a lot is on offer)",
        Stage::Loading { .. } => "LoadLot or DiscardLot (the buyer must place the lot)",
        Stage::Finished => "nothing (the game is over)",
    };
    format!("{tried} is not possible now; expected {expected}")
}
