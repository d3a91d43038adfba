//! Manila's labels: what a placement's button says it costs the seat that decides.

use super::*;

/// The deciding seat in its own view: the one player whose shares the view shows (every player
/// owns shares from setup on, and a seat's view shows only its own).
pub(super) fn actor(view: &pb::View) -> Option<&pb::PlayerView> {
    let mut own = view
        .players
        .iter()
        .filter(|player| !player.shares.is_empty());
    let first = own.next()?;
    own.next().is_none().then_some(first)
}

/// "for 4 pesos", "for free", or "for 4 pesos, mortgaging to pay" when cash is short.
pub(super) fn paying(cost: u64, actor: Option<&pb::PlayerView>) -> String {
    let price = for_price(cost);
    if actor.is_some_and(|player| player.cash < cost) {
        format!("{price}, mortgaging to pay")
    } else {
        price
    }
}

pub(super) fn placement_label(
    place: &pb::PlaceAccomplice,
    view: &pb::View,
    actor: Option<&pb::PlayerView>,
) -> String {
    let berth_cost = |berth: i32| berth_index(berth).map(|i| BERTH_COSTS[i]);
    match pb::SpaceKind::try_from(place.kind) {
        Ok(pb::SpaceKind::Crew) => {
            let ware = ware_word(place.ware);
            let cost = view
                .punts
                .iter()
                .find(|p| p.ware == place.ware)
                .and_then(|p| p.slot_costs.get(p.crew.len()))
                .map(|cost| u64::from(*cost));
            match cost {
                Some(cost) if actor.is_some_and(|player| player.capacity < cost) => {
                    format!("Stow away on {} for free", punt(place.ware))
                }
                Some(cost) => format!("Join the {ware} crew {}", paying(cost, actor)),
                None => format!("Join the {ware} crew"),
            }
        }
        Ok(pb::SpaceKind::Harbour) => match berth_cost(place.berth) {
            Some(cost) => format!("Take {} {}", wharf(place.berth), paying(cost, actor)),
            None => format!("Take {}", wharf(place.berth)),
        },
        Ok(pb::SpaceKind::Shipyard) => match berth_cost(place.berth) {
            Some(cost) => format!(
                "Take {} {}",
                shipyard_berth(place.berth),
                paying(cost, actor)
            ),
            None => format!("Take {}", shipyard_berth(place.berth)),
        },
        Ok(pb::SpaceKind::Pirate) => {
            let place_name = if view.pirate_captain.is_none() {
                "as captain"
            } else {
                "as second pirate"
            };
            format!(
                "Join the pirate ship {place_name} {}",
                paying(PIRATE_COST, actor)
            )
        }
        Ok(pb::SpaceKind::SmallPilot) => {
            format!("Become the small pilot {}", paying(SMALL_PILOT_COST, actor))
        }
        Ok(pb::SpaceKind::LargePilot) => {
            format!("Become the large pilot {}", paying(LARGE_PILOT_COST, actor))
        }
        Ok(pb::SpaceKind::Insurance) => format!(
            "Take the insurance office and receive {}",
            pesos(INSURANCE_PREMIUM)
        ),
        Ok(pb::SpaceKind::Unspecified) | Err(_) => "Place an accomplice".to_owned(),
    }
}
