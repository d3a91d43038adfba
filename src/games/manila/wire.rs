//! Protobuf conversions and builders: the engine's types to and from the wire messages
//! (`to_pb` / `from_pb`), and the event and action builders (`event`, `action`).

use super::data::*;
use super::*;
use crate::games::ActionError;
use crate::proto::manila::v1 as pb;
use pb::action::Kind as A;
use pb::event::Kind as E;

impl Ware {
    /// The proto enum number of this ware.
    pub(super) fn to_pb(self) -> i32 {
        (match self {
            Ware::Ginseng => pb::Ware::Ginseng,
            Ware::Nutmeg => pb::Ware::Nutmeg,
            Ware::Silk => pb::Ware::Silk,
            Ware::Jade => pb::Ware::Jade,
        }) as i32
    }

    /// The ware a proto field names; `None` for unspecified or unknown values.
    pub(super) fn from_pb(value: i32) -> Option<Ware> {
        match pb::Ware::try_from(value).ok()? {
            pb::Ware::Unspecified => None,
            pb::Ware::Ginseng => Some(Ware::Ginseng),
            pb::Ware::Nutmeg => Some(Ware::Nutmeg),
            pb::Ware::Silk => Some(Ware::Silk),
            pb::Ware::Jade => Some(Ware::Jade),
        }
    }
}

/// Wraps an event kind into an event.
pub(super) fn event(kind: pb::event::Kind) -> pb::Event {
    pb::Event { kind: Some(kind) }
}

/// Wraps an action kind into an action.
pub(super) fn action(kind: A) -> pb::Action {
    pb::Action { kind: Some(kind) }
}

/// The ware a required action field names; `what` says which action needs it.
pub(super) fn ware_from_pb(value: i32, what: &str) -> Result<Ware, ActionError> {
    Ware::from_pb(value).ok_or_else(|| ActionError::malformed(format!("{what} needs a ware")))
}

/// The proto berth of harbour or shipyard berth 0..2 (A..C).
pub(super) fn berth_to_pb(berth: usize) -> i32 {
    (match berth {
        0 => pb::Berth::A,
        1 => pb::Berth::B,
        _ => pb::Berth::C,
    }) as i32
}

/// The berth (0..2) a proto field names; `None` for unspecified or unknown values.
fn berth_from_pb(value: i32) -> Option<usize> {
    match pb::Berth::try_from(value).ok()? {
        pb::Berth::Unspecified => None,
        pb::Berth::A => Some(0),
        pb::Berth::B => Some(1),
        pb::Berth::C => Some(2),
    }
}

/// The space a placement names; malformed when its kind, ware and berth do not fit together.
pub(super) fn space_from_pb(place: &pb::PlaceAccomplice) -> Result<Space, ActionError> {
    use pb::SpaceKind as K;
    let kind = K::try_from(place.kind).map_err(|_| ActionError::malformed("unknown space kind"))?;
    let ware = place.ware;
    let berth = place.berth;
    let needs_nothing = |space: Space| {
        if ware != 0 || berth != 0 {
            Err(ActionError::malformed(
                "ware and berth are only set for crew / harbour / shipyard spaces",
            ))
        } else {
            Ok(space)
        }
    };
    match kind {
        K::Unspecified => Err(ActionError::malformed(
            "place_accomplice needs a space kind",
        )),
        K::Crew => {
            if berth != 0 {
                return Err(ActionError::malformed(
                    "a crew space takes a ware, not a berth",
                ));
            }
            Ware::from_pb(ware)
                .map(Space::Crew)
                .ok_or_else(|| ActionError::malformed("a crew space needs a ware"))
        }
        K::Harbour | K::Shipyard => {
            if ware != 0 {
                return Err(ActionError::malformed(
                    "a harbour or shipyard space takes a berth, not a ware",
                ));
            }
            let berth = berth_from_pb(berth)
                .ok_or_else(|| ActionError::malformed("this space needs a berth"))?;
            Ok(if kind == K::Harbour {
                Space::Harbour(berth)
            } else {
                Space::Shipyard(berth)
            })
        }
        K::Pirate => needs_nothing(Space::Pirate),
        K::SmallPilot => needs_nothing(Space::SmallPilot),
        K::LargePilot => needs_nothing(Space::LargePilot),
        K::Insurance => needs_nothing(Space::Insurance),
    }
}

/// The placement that names `space`.
pub(super) fn space_to_pb(space: Space) -> pb::PlaceAccomplice {
    use pb::SpaceKind as K;
    let (kind, ware, berth) = match space {
        Space::Crew(ware) => (K::Crew, ware.to_pb(), 0),
        Space::Harbour(b) => (K::Harbour, 0, berth_to_pb(b)),
        Space::Shipyard(b) => (K::Shipyard, 0, berth_to_pb(b)),
        Space::Pirate => (K::Pirate, 0, 0),
        Space::SmallPilot => (K::SmallPilot, 0, 0),
        Space::LargePilot => (K::LargePilot, 0, 0),
        Space::Insurance => (K::Insurance, 0, 0),
    };
    pb::PlaceAccomplice {
        kind: kind as i32,
        ware,
        berth,
    }
}

/// The action of mortgaging a share of `ware` (spec §5).
pub(super) fn mortgage_share(ware: Ware) -> pb::Action {
    action(A::MortgageShare(pb::MortgageShare { ware: ware.to_pb() }))
}

/// The action of redeeming a mortgaged share of `ware` (spec §5).
pub(super) fn redeem_share(ware: Ware) -> pb::Action {
    action(A::RedeemShare(pb::RedeemShare { ware: ware.to_pb() }))
}

/// The event of `seat` being dealt `dealt` face down at setup (spec §3.3).
pub(super) fn shares_dealt(seat: Seat, dealt: &[Ware]) -> pb::event::Kind {
    pb::event::Kind::SharesDealt(pb::SharesDealt {
        seat,
        wares: dealt.iter().map(|w| w.to_pb()).collect(),
    })
}

/// A settlement payout to `seat` (spec §4.8); `paid_by` is set by the caller for the insurer.
pub(super) fn payout(
    seat: Seat,
    amount: u64,
    reason: pb::PayoutReason,
    ware: Option<Ware>,
    berth: Option<usize>,
) -> E {
    E::Payout(pb::Payout {
        seat,
        amount,
        reason: reason as i32,
        ware: ware.map_or(0, Ware::to_pb),
        berth: berth.map_or(0, berth_to_pb),
        paid_by: None,
    })
}

/// The proto phase of the decision the game waits for.
pub(super) fn phase_to_pb(phase: &Phase) -> pb::Phase {
    match phase {
        Phase::Auction(_) => pb::Phase::Auction,
        Phase::Purchase => pb::Phase::SharePurchase,
        Phase::Loading => pb::Phase::Loading,
        Phase::Placement { .. } => pb::Phase::Placement,
        Phase::Boarding { .. } => pb::Phase::Boarding,
        Phase::Pilot { large: false } => pb::Phase::SmallPilot,
        Phase::Pilot { large: true } => pb::Phase::LargePilot,
        Phase::Plunder { .. } => pb::Phase::Plunder,
        Phase::Over => pb::Phase::Finished,
    }
}

/// One roll's dice, in ware order.
pub(super) fn dice_to_pb(dice: &[(Ware, u32)]) -> Vec<pb::DieView> {
    dice.iter()
        .map(|&(ware, pips)| pb::DieView {
            ware: ware.to_pb(),
            pips,
        })
        .collect()
}

/// Counts per ware, leaving out the wares with none.
pub(super) fn ware_counts_to_pb(counts: [u32; 4]) -> Vec<pb::WareCount> {
    Ware::ALL
        .iter()
        .filter(|w| counts[w.index()] > 0)
        .map(|w| pb::WareCount {
            ware: w.to_pb(),
            count: counts[w.index()],
        })
        .collect()
}
