//! Manila's words: the auction for harbour master, the punts and their wares (ginseng, nutmeg,
//! silk, jade), accomplices on crews, wharves, shipyard berths, the pirate ship, the pilots and
//! the insurance office, all in pesos, named as the web board names them
//! (`web/src/boards/manila.ts`).
//!
//! A voyage's end is told as the payouts come: each payout says why it is paid ("A punt lies at
//! wharf A: Ann's accomplice there earns 6 pesos."), so the sequence of wrecks, payouts, the
//! insurance and the rise in values reads as the voyage's summary. What a viewer may not see (the
//! wares of another seat's dealt, mortgaged or redeemed shares) is said to be hidden.

use super::{Names, Narrate, and_list, capitalized, count};
use crate::games::Seat;
use crate::games::manila::Manila;
use crate::proto::manila::v1 as pb;
use pb::action::Kind as A;
use pb::event::Kind as E;

// The board's numbers come from the engine's data (spec §2, §4, §5, §6): the words say what the
// rules charge, never a copy of them.
use crate::games::manila::data::{
    BERTH_COSTS, INSURANCE_PREMIUM, LARGE_PILOT_COST, LAST_SPACE, MIN_SHARE_PRICE, MORTGAGE_LOAN,
    PIRATE_COST, REDEMPTION_PRICE, SMALL_PILOT_COST, VALUE_TRACK,
};

/// The top of the black-market track: a ware reaching it ends the game (spec §6).
const TOP_VALUE: u64 = VALUE_TRACK[VALUE_TRACK.len() - 1];

impl Narrate for Manila {
    fn event_text(event: &pb::Event, names: &Names) -> Option<String> {
        Some(match event.kind.as_ref()? {
            E::SharesDealt(dealt) => shares_dealt(dealt, names),
            E::VoyageStarted(started) => format!(
                "Voyage {} begins: {} opens the auction for harbour master.",
                started.voyage,
                names.seat(started.opener)
            ),
            E::BidPlaced(bid) => format!(
                "{} bids {} for harbour master.",
                names.seat(bid.seat),
                pesos(bid.amount)
            ),
            E::AuctionPassed(passed) => format!(
                "{} passes and is out of this auction.",
                names.seat(passed.seat)
            ),
            E::HarbourMasterChosen(chosen) if chosen.uncontested => format!(
                "Nobody bids: {}, who opened the auction, is harbour master {}.",
                names.seat(chosen.seat),
                for_price(chosen.price)
            ),
            E::HarbourMasterChosen(chosen) => format!(
                "{} wins the auction and becomes harbour master {}.",
                names.seat(chosen.seat),
                for_price(chosen.price)
            ),
            E::ShareBought(bought) => format!(
                "{} buys {} {}.",
                names.seat(bought.seat),
                share(bought.ware),
                for_price(bought.price)
            ),
            E::PurchaseSkipped(skipped) => {
                format!("{} buys no share this voyage.", names.seat(skipped.seat))
            }
            E::PuntsLoaded(loaded) => punts_loaded(loaded, names),
            E::AccomplicePlaced(placed) => accomplice_placed(placed, names),
            E::PlacementDeclined(declined) => format!(
                "{} stops placing accomplices for this voyage.",
                names.seat(declined.seat)
            ),
            E::DiceRolled(rolled) => dice_rolled(rolled),
            E::PuntArrived(arrived) => format!(
                "{} reaches the harbour and ties up at {}.",
                capitalized(&punt(arrived.ware)),
                wharf(arrived.berth)
            ),
            E::PirateBoarded(boarded) => pirate_boarded(boarded, names),
            E::PirateStayed(stayed) => format!(
                "{}'s pirate stays on the pirate ship.",
                names.seat(stayed.seat)
            ),
            E::PilotActed(acted) => pilot_acted(acted, names),
            E::PuntPlundered(plundered) => {
                let punt = punt(plundered.ware);
                if plundered.crew_returned.is_empty() {
                    format!("The pirates plunder {punt} on space 13; it has no crew to send home.")
                } else {
                    let verb = if plundered.crew_returned.len() == 1 {
                        "goes"
                    } else {
                        "go"
                    };
                    format!(
                        "The pirates plunder {punt} on space 13: {} {verb} home with nothing.",
                        crew_of(&plundered.crew_returned, names)
                    )
                }
            }
            E::PlunderDirected(directed) => {
                let to = match pb::PlunderDestination::try_from(directed.destination) {
                    Ok(pb::PlunderDestination::Shipyard) => shipyard_berth(directed.berth),
                    _ => format!("{} in the harbour", wharf(directed.berth)),
                };
                format!(
                    "{}, the pirate captain, sends the plundered {} to {to}.",
                    names.seat(directed.seat),
                    punt_noun(directed.ware)
                )
            }
            E::PuntWrecked(wrecked) => format!(
                "{} does not reach the harbour: it is wrecked and towed to {}.",
                capitalized(&punt(wrecked.ware)),
                shipyard_berth(wrecked.berth)
            ),
            E::Payout(payout) => payout_text(payout, names),
            E::InsuranceSettled(settled) => insurance_settled(settled, names),
            E::ShareMortgaged(mortgaged) if mortgaged.forced => format!(
                "{} must mortgage {} for {} to cover a payment.",
                names.seat(mortgaged.seat),
                share(mortgaged.ware),
                pesos(MORTGAGE_LOAN)
            ),
            E::ShareMortgaged(mortgaged) => format!(
                "{} mortgages {} for {}.",
                names.seat(mortgaged.seat),
                share(mortgaged.ware),
                pesos(MORTGAGE_LOAN)
            ),
            E::ShareRedeemed(redeemed) => format!(
                "{} redeems {} for {}.",
                names.seat(redeemed.seat),
                share(redeemed.ware),
                pesos(REDEMPTION_PRICE)
            ),
            E::ValuesRaised(raised) => values_raised(raised),
            E::GameEnded(ended) => game_ended(ended, names),
        })
    }

    fn choice_label(action: &pb::Action, view: &pb::View, names: &Names) -> String {
        let Some(kind) = action.kind.as_ref() else {
            return "Make no move".to_owned();
        };
        let actor = actor(view);
        match kind {
            A::Bid(_) => "Bid for harbour master".to_owned(),
            A::PassAuction(_) => "Pass".to_owned(),
            A::BuyShare(buy) => {
                let value = view
                    .wares
                    .iter()
                    .find(|status| status.ware == buy.ware)
                    .map(|status| u64::from(status.value));
                match value {
                    Some(value) => format!(
                        "Buy {} {}",
                        share(buy.ware),
                        paying(value.max(MIN_SHARE_PRICE), actor)
                    ),
                    None => format!("Buy {}", share(buy.ware)),
                }
            }
            A::SkipPurchase(_) => "Buy no share".to_owned(),
            A::LoadPunts(load) => {
                let wares: Vec<String> = load
                    .punts
                    .iter()
                    .map(|start| ware_word(start.ware).to_owned())
                    .collect();
                let starts: Vec<String> = load
                    .punts
                    .iter()
                    .map(|start| start.start.to_string())
                    .collect();
                format!(
                    "Load {}; start them at {}",
                    and_list(&wares),
                    and_list(&starts)
                )
            }
            A::PlaceAccomplice(place) => placement_label(place, view, actor),
            A::DeclinePlacement(_) => "Stop placing this voyage".to_owned(),
            A::BoardPunt(board) => {
                let punt_name = punt(board.ware);
                match board.displace_slot {
                    None => format!("Board {punt_name}"),
                    Some(slot) => {
                        let owner = view
                            .punts
                            .iter()
                            .find(|p| p.ware == board.ware)
                            .and_then(|p| p.crew.get(slot as usize));
                        let whose = match owner {
                            Some(&seat) => format!("{}'s accomplice", names.seat(seat)),
                            None => "the accomplice".to_owned(),
                        };
                        format!(
                            "Board {punt_name}, sending home {whose} in its {} crew place",
                            ordinal(slot)
                        )
                    }
                }
            }
            A::StayAboard(_) => "Stay on the pirate ship".to_owned(),
            A::PilotPunts(pilot) => {
                if pilot.shifts.is_empty() {
                    return "Leave the punts where they are".to_owned();
                }
                let moves: Vec<String> = pilot
                    .shifts
                    .iter()
                    .map(|shift| {
                        let position = view
                            .punts
                            .iter()
                            .find(|p| p.ware == shift.ware)
                            .map(|p| p.position);
                        let mut text =
                            format!("{} {}", punt(shift.ware), shift_words(shift.spaces));
                        if let Some(position) = position {
                            let target = i64::from(position) + i64::from(shift.spaces);
                            if target > i64::from(LAST_SPACE) {
                                text.push_str(", into the harbour");
                            } else {
                                text.push_str(&format!(", to space {}", target.max(0)));
                            }
                        }
                        text
                    })
                    .collect();
                format!("Move {}", and_list(&moves))
            }
            A::DirectPlunder(direct) => {
                let plundered = punt(direct.ware);
                match pb::PlunderDestination::try_from(direct.destination) {
                    Ok(pb::PlunderDestination::Shipyard) => match next_berth(&view.shipyard) {
                        Some(letter) => {
                            format!("Send {plundered} to shipyard berth {letter}")
                        }
                        None => format!("Send {plundered} to the shipyard"),
                    },
                    _ => match next_berth(&view.wharves) {
                        Some(letter) => {
                            format!("Send {plundered} to wharf {letter} in the harbour")
                        }
                        None => format!("Send {plundered} to the harbour"),
                    },
                }
            }
            A::MortgageShare(mortgage) => format!(
                "Mortgage {} for {}",
                share(mortgage.ware),
                pesos(MORTGAGE_LOAN)
            ),
            A::RedeemShare(redeem) => format!(
                "Redeem {} for {}",
                share(redeem.ware),
                pesos(REDEMPTION_PRICE)
            ),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Names of things
// ---------------------------------------------------------------------------------------------

/// The board's name of a ware; `None` when it is hidden (blanked) or unknown.
fn ware_name(ware: i32) -> Option<&'static str> {
    match pb::Ware::try_from(ware).ok()? {
        pb::Ware::Unspecified => None,
        pb::Ware::Ginseng => Some("ginseng"),
        pb::Ware::Nutmeg => Some("nutmeg"),
        pb::Ware::Silk => Some("silk"),
        pb::Ware::Jade => Some("jade"),
    }
}

/// A ware's name, or "a hidden ware".
fn ware_word(ware: i32) -> &'static str {
    ware_name(ware).unwrap_or("a hidden ware")
}

/// What a ware's punt pays when it reaches the harbour, or its loot when plundered (spec §2.1).
fn payoff(ware: i32) -> Option<u64> {
    match pb::Ware::try_from(ware).ok()? {
        pb::Ware::Unspecified => None,
        pb::Ware::Ginseng => Some(18),
        pb::Ware::Nutmeg => Some(24),
        pb::Ware::Silk => Some(30),
        pb::Ware::Jade => Some(36),
    }
}

/// "silk punt", or "punt".
fn punt_noun(ware: i32) -> String {
    match ware_name(ware) {
        Some(name) => format!("{name} punt"),
        None => "punt".to_owned(),
    }
}

/// "the silk punt", or "a punt".
fn punt(ware: i32) -> String {
    match ware_name(ware) {
        Some(name) => format!("the {name} punt"),
        None => "a punt".to_owned(),
    }
}

/// "a silk share", or "a share of a hidden ware" (what another seat's secret share reads as).
fn share(ware: i32) -> String {
    match ware_name(ware) {
        Some(name) => format!("a {name} share"),
        None => "a share of a hidden ware".to_owned(),
    }
}

/// The letter of a harbour or shipyard berth.
fn berth_letter(berth: i32) -> Option<&'static str> {
    match pb::Berth::try_from(berth).ok()? {
        pb::Berth::Unspecified => None,
        pb::Berth::A => Some("A"),
        pb::Berth::B => Some("B"),
        pb::Berth::C => Some("C"),
    }
}

/// The index (0..2) of a berth, for its cost.
fn berth_index(berth: i32) -> Option<usize> {
    match pb::Berth::try_from(berth).ok()? {
        pb::Berth::Unspecified => None,
        pb::Berth::A => Some(0),
        pb::Berth::B => Some(1),
        pb::Berth::C => Some(2),
    }
}

/// "wharf A", or "a wharf".
fn wharf(berth: i32) -> String {
    match berth_letter(berth) {
        Some(letter) => format!("wharf {letter}"),
        None => "a wharf".to_owned(),
    }
}

/// "shipyard berth A", or "a shipyard berth".
fn shipyard_berth(berth: i32) -> String {
    match berth_letter(berth) {
        Some(letter) => format!("shipyard berth {letter}"),
        None => "a shipyard berth".to_owned(),
    }
}

/// The letter of the next free berth of a row (berths fill A, B, C).
fn next_berth(row: &[pb::BerthView]) -> Option<&'static str> {
    let filled = row.iter().filter(|berth| berth.has_punt).count();
    ["A", "B", "C"].get(filled).copied()
}

/// "first", "second", … for a 0-based crew place or pirate-ship place.
fn ordinal(index: u32) -> String {
    match index {
        0 => "first".to_owned(),
        1 => "second".to_owned(),
        2 => "third".to_owned(),
        3 => "fourth".to_owned(),
        n => format!("number {}", n + 1),
    }
}

/// An amount in pesos: "1 peso", "12 pesos", "no pesos".
fn pesos(amount: u64) -> String {
    count(amount, "peso", "pesos")
}

/// "for 4 pesos", or "for free".
fn for_price(amount: u64) -> String {
    if amount == 0 {
        "for free".to_owned()
    } else {
        format!("for {}", pesos(amount))
    }
}

/// A final fortune, which can be negative: "85 pesos", "minus 3 pesos", "0 pesos".
fn fortune(score: i64) -> String {
    let amount = score.unsigned_abs();
    let unit = if amount == 1 { "peso" } else { "pesos" };
    if score < 0 {
        format!("minus {amount} {unit}")
    } else {
        format!("{amount} {unit}")
    }
}

/// "1 space forward", "2 spaces back".
fn shift_words(spaces: i32) -> String {
    let distance = count(spaces.unsigned_abs(), "space", "spaces");
    if spaces < 0 {
        format!("{distance} back")
    } else {
        format!("{distance} forward")
    }
}

/// The accomplices of a crew, by owner in order of first place: "Ann's 2 accomplices and Ben's
/// accomplice".
fn crew_of(crew: &[Seat], names: &Names) -> String {
    let mut owners: Vec<(Seat, u32)> = Vec::new();
    for &seat in crew {
        match owners.iter_mut().find(|(owner, _)| *owner == seat) {
            Some((_, n)) => *n += 1,
            None => owners.push((seat, 1)),
        }
    }
    let parts: Vec<String> = owners
        .iter()
        .map(|&(seat, n)| {
            if n == 1 {
                format!("{}'s accomplice", names.seat(seat))
            } else {
                format!("{}'s {n} accomplices", names.seat(seat))
            }
        })
        .collect();
    and_list(&parts)
}

mod events;
mod labels;
#[cfg(test)]
mod tests;

use events::*;
use labels::*;
