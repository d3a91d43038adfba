//! Resolving a claim (spec A8, A13 S6–S8, S13–S15): the taker berths the ship in speed order,
//! the port's goods and the goods flag move its marker, scrolls move Florence, and a progress
//! symbol earns a face-up tile; then the next player becomes active. Also moving markers and
//! reading the tracks' order.

use crate::games::Seat;
use crate::games::common::left_of;
use crate::proto::strozzi::v1 as pb;

use super::super::wire;
use super::super::{Berth, CardId, City, FlagKind, NextActiveRule, Phase, Strozzi, TileId};

impl Strozzi {
    /// A choice with a single option is no decision: the engine makes it (a forced port, a lone
    /// face-up tile without an optional step).
    pub(in crate::games::strozzi) fn settle_forced_choices(&mut self, events: &mut Vec<pb::Event>) {
        loop {
            let choices = self.choices();
            let [only] = choices.as_slice() else { return };
            match (only, self.phase.clone()) {
                (pb::action::Kind::PlaceShip(place), Phase::PlacingShip { taker, flag, card }) => {
                    let Ok(port) = City::from_pb(place.port) else {
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
    pub(in crate::games::strozzi) fn place_ship(
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
            Berth {
                owner: taker,
                card,
                flag,
                speed,
                arrival: self.arrivals,
            },
        );
        self.arrivals += 1;
        events.push(wire::ship_placed(taker, port, speed, place, automatic));
        // Spec A8.3: one step per matching symbol; other ports' symbols do nothing.
        let matching = port.goods().map_or(0, |goods| ship.goods(goods));
        if matching > 0 {
            self.move_marker(taker, port, matching, pb::MoveCause::CardGoods, events);
        }
        if self.goods_flag_step_exists(flag, card, port) {
            if decline_flag_step {
                events.push(wire::step_declined(taker, pb::MoveCause::GoodsFlag));
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
    pub(in crate::games::strozzi) fn take_tile(
        &mut self,
        taker: Seat,
        tile: TileId,
        decline_step: bool,
        events: &mut Vec<pb::Event>,
    ) {
        self.display.retain(|&t| t != tile);
        self.players[taker as usize].tiles.push(tile);
        events.push(wire::tile_taken(taker, self.tile(tile), tile));
        if let Some(goods) = self.tile(tile).goods {
            if decline_step {
                events.push(wire::step_declined(taker, pb::MoveCause::ProgressTile));
            } else {
                self.move_marker(taker, goods.port(), 1, pb::MoveCause::ProgressTile, events);
            }
        }
        let refill = self.stack.pop();
        if let Some(new_tile) = refill {
            self.display.push(new_tile);
        }
        events.push(wire::display_refilled(
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

    /// Spec A8 "moving a marker": up `steps`, never past the top (extra steps are lost); placed to
    /// the right of every marker already on the space reached. A move that ends where it started
    /// keeps the marker's place within the space.
    pub(in crate::games::strozzi) fn move_marker(
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
        events.push(wire::marker_moved(seat, city, cause, steps, from, to, slot));
    }

    /// A seat's marker on a city's track: (space, place from the left).
    pub(in crate::games::strozzi) fn marker(&self, seat: Seat, city: City) -> (u8, usize) {
        for (position, space) in self.tracks[city.index()].iter().enumerate() {
            if let Some(slot) = space.iter().position(|&s| s == seat) {
                return (position as u8, slot);
            }
        }
        (0, 0)
    }

    /// Markers of a city from best to worst: higher space first, leftmost first within a space.
    pub(in crate::games::strozzi) fn track_order(
        &self,
        city: City,
    ) -> impl Iterator<Item = (u8, Seat)> + '_ {
        self.tracks[city.index()]
            .iter()
            .enumerate()
            .rev()
            .flat_map(|(position, space)| space.iter().map(move |&seat| (position as u8, seat)))
    }

    /// Each seat's rank in Florence (0 = best), the tie-break of spec A11 and A12.
    pub(in crate::games::strozzi) fn florence_ranks(&self) -> Vec<usize> {
        let mut ranks = vec![0; self.n() as usize];
        for (rank, (_, seat)) in self.track_order(City::Florence).enumerate() {
            ranks[seat as usize] = rank;
        }
        ranks
    }
}
