//! What each viewer is shown: the view and event redaction. Everything but the draw order is
//! public (spec B9 M14), so every viewer gets the same view and every event unredacted; the draw
//! order lives only in the RNG, which nothing here reads.

use super::{MediciVsStrozzi, Ship, Stage};
use crate::games::{Redaction, Viewer};
use crate::proto::medici_vs_strozzi::v1 as pb;

impl MediciVsStrozzi {
    /// The view for `viewer`: the same for both seats and spectators (spec B9 M14).
    pub(super) fn build_view(&self, _viewer: Viewer) -> pb::View {
        // Everything but the RNG is public (spec B9 M14), so every viewer sees the same view.
        let (phase, price, buyer) = match self.stage {
            Stage::Drawing => (pb::Phase::Drawing, None, None),
            Stage::Deciding { price } => (pb::Phase::Deciding, Some(price), None),
            Stage::Loading { price, buyer } => (pb::Phase::Loading, Some(price), Some(buyer)),
            Stage::Finished => (pb::Phase::Finished, None, None),
        };
        let draw_limit = match self.stage {
            Stage::Drawing => self.draws_left() as u32,
            _ => 0,
        };
        pb::View {
            round: self.round,
            phase: phase as i32,
            active_seat: self.active,
            lot: self.lot.iter().map(|t| t.to_pb()).collect(),
            price,
            buyer,
            draw_limit,
            players: self
                .players
                .iter()
                .enumerate()
                .map(|(seat, p)| pb::PlayerView {
                    seat: seat as u32,
                    money: p.money,
                    ships: p.ships.iter().map(Ship::to_pb).collect(),
                })
                .collect(),
            tracks: self
                .board
                .tracks
                .iter()
                .zip(&self.markers)
                .map(|(track, &marker)| pb::Track {
                    harbour: track.harbour,
                    goods: track.goods.to_pb() as i32,
                    marker,
                    spaces_per_side: track.spaces_per_side,
                    bonus_by_distance: track.bonus_by_distance.clone(),
                })
                .collect(),
            harbour_count: self.board.harbour_count(),
            bag_count: self.bag.len() as u32,
            discarded: self.discarded.iter().map(|t| t.to_pb()).collect(),
        }
    }
}

/// `event` as `viewer` may see it.
pub(super) fn redact(_event: &pb::Event, _viewer: Viewer) -> Redaction<pb::Event> {
    // Drawn tiles are face up and money is public (spec B4, M14): events hide nothing.
    Redaction::Public
}
