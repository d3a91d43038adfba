//! What each viewer sees (docs/rules/la-strada.md, "Hidden information"): everything. La Strada
//! hides nothing once the board is set up, so the view is the same for every seat and spectator,
//! and events and actions pass unredacted. The seed (the only secret) is never in a view.

use super::data::{HexId, MAP};
use super::wire::hex_to_pb;
use super::{LaStrada, Occupant, Phase, Site};
use crate::games::{Redaction, Seat, Viewer};
use crate::proto::la_strada::v1 as pb;

impl LaStrada {
    /// The view every viewer gets: everything on the table is public (spec §1-§3).
    pub(super) fn public_view(&self) -> pb::View {
        let board = (0..MAP.hexes.len())
            .map(|hex| {
                let (workshop, road) = match self.occupant[hex] {
                    Occupant::Empty => (None, None),
                    Occupant::Workshop(seat) => (Some(seat), None),
                    Occupant::Tile(tile) => {
                        (None, Some(tile.to_pb(hex as HexId, self.terrain[hex])))
                    }
                };
                pb::BoardHex {
                    hex: Some(hex_to_pb(hex as HexId)),
                    terrain: self.terrain[hex].to_pb() as i32,
                    piece: MAP.pieces[self.piece_of[hex] as usize].name.clone(),
                    workshop,
                    road,
                }
            })
            .collect();
        let settlements = self.sites.iter().map(Site::to_pb).collect();
        let gold = match &self.phase {
            Phase::Finished { gold, .. } => gold.clone(),
            _ => self.gold(),
        };
        let sides = MAP.seating_for(self.options.players);
        let players = self
            .players
            .iter()
            .enumerate()
            .map(|(seat, player)| pb::PlayerView {
                seat: seat as Seat,
                side: sides.get(seat).cloned().unwrap_or_default(),
                resources: player.resources,
                supply: Some(pb::Supply {
                    plains: u32::from(player.supply[0]),
                    forest: u32::from(player.supply[1]),
                    hill: u32::from(player.supply[2]),
                }),
                merchants_left: u32::from(player.merchants_left),
                workshops: player.workshops.iter().map(|h| hex_to_pb(*h)).collect(),
                hubs: self.hubs(seat as Seat).into_iter().map(hex_to_pb).collect(),
                gold: gold.get(seat).copied().unwrap_or_default(),
            })
            .collect();
        let (phase, end_reason, winners) = match &self.phase {
            Phase::PlacingWorkshops { .. } => (
                pb::Phase::PlacingWorkshops,
                pb::EndReason::Unspecified,
                Vec::new(),
            ),
            Phase::Playing { .. } => (pb::Phase::Playing, pb::EndReason::Unspecified, Vec::new()),
            Phase::Finished {
                reason, winners, ..
            } => (pb::Phase::Finished, reason.to_pb(), winners.clone()),
        };
        pb::View {
            phase: phase as i32,
            start_seat: self.start_seat,
            round: self.round,
            arrangement: self.arrangement_names(),
            board,
            settlements,
            players,
            built_this_turn: self.built_this_turn,
            silent_turns: self.silent_turns,
            end_reason: end_reason as i32,
            winners,
            map_name: MAP.name.clone(),
            map_provisional: MAP.provisional,
            curve: self.options.curve.to_pb() as i32,
        }
    }
}

/// Events are public: no event carries anything a viewer may not know (spec §1-§3).
pub(super) fn redact_event(_event: &pb::Event, _viewer: Viewer) -> Redaction<pb::Event> {
    Redaction::Public
}

/// Every action is public: a workshop's hex, a road's hub, tiles and target, and ending the turn
/// are all laid open on the table (spec §3.5, §5), and nobody holds anything secret that an action
/// could reveal.
pub(super) fn redact_action(action: &pb::Action, _author: Seat, _viewer: Viewer) -> pb::Action {
    action.clone()
}
