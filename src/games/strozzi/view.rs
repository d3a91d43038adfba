//! What each viewer is shown (spec A13 S16): the per-viewer view and event redaction. The deck
//! order, the removed cards and the progress stack are never put in a view or event; with
//! `hidden_money`, money is shown only to its owner until the game ends.

use crate::games::{Redaction, Seat, Viewer};
use crate::proto::strozzi::v1 as pb;

use super::{City, Claim, Phase, Strozzi};

/// `event` as `viewer` may see it. Only round scoring under hidden money carries anything private:
/// each seat keeps its own payouts and money, a spectator none. Every other event is public.
pub(super) fn redact(event: &pb::Event, viewer: Viewer) -> Redaction<pb::Event> {
    if !matches!(&event.kind, Some(pb::event::Kind::RoundScored(scored)) if scored.money_hidden) {
        return Redaction::Public;
    }
    let mut event = event.clone();
    if let Some(pb::event::Kind::RoundScored(scored)) = &mut event.kind {
        scored.payouts.retain(|p| viewer.is(p.seat));
        scored.money.retain(|m| viewer.is(m.seat));
    }
    Redaction::Replaced(event)
}

impl Strozzi {
    /// Whether `viewer` may see `seat`'s money now (spec A10, A13 S16).
    pub(super) fn money_visible(&self, seat: Seat, viewer: Viewer) -> bool {
        !self.options.hidden_money || self.phase == Phase::Finished || viewer.is(seat)
    }

    /// The state as `viewer` may see it: counts instead of hidden cards and tiles, and money only where visible.
    pub(super) fn build_view(&self, viewer: Viewer) -> pb::View {
        let (phase, card, claim, taker, deciders) = match &self.phase {
            Phase::Deciding(decision) => (
                pb::Phase::Deciding,
                Some(decision.card),
                decision.claim.map(Claim::to_pb),
                None,
                decision.deciders.clone(),
            ),
            Phase::PlacingShip { taker, flag, card } => (
                pb::Phase::PlacingShip,
                Some(*card),
                None,
                Some(
                    Claim {
                        seat: *taker,
                        flag: *flag,
                    }
                    .to_pb(),
                ),
                Vec::new(),
            ),
            Phase::ChoosingTile { taker, flag, card } => (
                pb::Phase::ChoosingTile,
                Some(*card),
                None,
                Some(
                    Claim {
                        seat: *taker,
                        flag: *flag,
                    }
                    .to_pb(),
                ),
                Vec::new(),
            ),
            Phase::Finished => (pb::Phase::Finished, None, None, None, Vec::new()),
        };
        let players = self
            .players
            .iter()
            .enumerate()
            .map(|(seat, player)| {
                let seat = seat as Seat;
                pb::PlayerView {
                    seat,
                    flags: player.flags.iter().map(|&f| f.to_pb() as i32).collect(),
                    money: self.money_visible(seat, viewer).then_some(player.money),
                    tiles: player
                        .tiles
                        .iter()
                        .map(|&t| self.tile(t).to_pb(t))
                        .collect(),
                }
            })
            .collect();
        let ports = City::PORTS
            .iter()
            .map(|&port| pb::Port {
                city: port.to_pb() as i32,
                ships: self.ports[port.index()]
                    .iter()
                    .map(|berth| pb::Berth {
                        owner: berth.owner,
                        card: Some(self.card(berth.card).to_pb(berth.card)),
                        flag: berth.flag.to_pb() as i32,
                        speed: u32::from(berth.speed),
                    })
                    .collect(),
            })
            .collect();
        let tracks = City::ALL
            .iter()
            .map(|&city| {
                let geometry = &self.catalogue.tracks[city.index()];
                pb::Track {
                    city: city.to_pb() as i32,
                    top: u32::from(geometry.top),
                    bonus_spaces: geometry
                        .bonus
                        .iter()
                        .map(|b| pb::BonusSpace {
                            position: u32::from(b.position),
                            coins: b.coins,
                        })
                        .collect(),
                    spaces: self.tracks[city.index()]
                        .iter()
                        .enumerate()
                        .rev()
                        .filter(|(_, seats)| !seats.is_empty())
                        .map(|(position, seats)| pb::Space {
                            position: position as u32,
                            seats: seats.clone(),
                        })
                        .collect(),
                }
            })
            .collect();
        pb::View {
            round: self.round,
            phase: phase as i32,
            active_seat: self.active,
            card: card.map(|id| self.card(id).to_pb(id)),
            claim,
            taker,
            deciders,
            players,
            ports,
            tracks,
            display: self
                .display
                .iter()
                .map(|&t| self.tile(t).to_pb(t))
                .collect(),
            stack_count: self.stack.len() as u32,
            deck_count: self.deck.len() as u32,
            removed_count: self.removed.len() as u32,
            set_aside: self
                .set_aside
                .iter()
                .map(|&c| self.card(c).to_pb(c))
                .collect(),
            round_start_seat: self.round_start_seat,
            winners: self.winners.clone(),
            config: Some(self.options.to_pb()),
        }
    }
}
