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

// ---------------------------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------------------------

fn shares_dealt(dealt: &pb::SharesDealt, names: &Names) -> String {
    let who = names.seat(dealt.seat);
    let hidden = dealt
        .wares
        .iter()
        .filter(|ware| ware_name(**ware).is_none())
        .count();
    let mut known: Vec<(&'static str, usize)> = Vec::new();
    for name in dealt.wares.iter().filter_map(|ware| ware_name(*ware)) {
        match known.iter_mut().find(|(known_name, _)| *known_name == name) {
            Some((_, n)) => *n += 1,
            None => known.push((name, 1)),
        }
    }
    let mut parts: Vec<String> = known
        .iter()
        .map(|&(name, n)| {
            if n == 1 {
                format!("a {name} share")
            } else {
                format!("{n} {name} shares")
            }
        })
        .collect();
    match (parts.is_empty(), hidden) {
        (true, 0) => format!("{who} is dealt no shares."),
        (true, 1) => format!("{who} is dealt 1 share face down; its ware is hidden."),
        (true, n) => format!("{who} is dealt {n} shares face down; their wares are hidden."),
        (false, 0) => format!("{who} is dealt {} in secret.", and_list(&parts)),
        (false, n) => {
            parts.push(format!("{} face down", count(n as u64, "share", "shares")));
            format!(
                "{who} is dealt {}; the face-down wares are hidden.",
                and_list(&parts)
            )
        }
    }
}

fn punts_loaded(loaded: &pb::PuntsLoaded, names: &Names) -> String {
    let starts: Vec<String> = loaded
        .punts
        .iter()
        .enumerate()
        .map(|(i, start)| {
            if i == 0 {
                format!("{} on space {}", ware_word(start.ware), start.start)
            } else {
                format!("{} on {}", ware_word(start.ware), start.start)
            }
        })
        .collect();
    let mut text = format!(
        "{} loads the punts and launches them: {}",
        names.seat(loaded.seat),
        and_list(&starts)
    );
    if let Some(left_out) = ware_name(loaded.left_out) {
        text.push_str(&format!("; {left_out} sits out this voyage"));
    }
    text.push('.');
    text
}

fn accomplice_placed(placed: &pb::AccomplicePlaced, names: &Names) -> String {
    let who = names.seat(placed.seat);
    let price = for_price(placed.cost);
    let mut text = match pb::SpaceKind::try_from(placed.kind) {
        Ok(pb::SpaceKind::Crew) if placed.stowaway => format!(
            "{who}, short of money, stows away on {}, in its {} crew place, {price}",
            punt(placed.ware),
            ordinal(placed.slot)
        ),
        Ok(pb::SpaceKind::Crew) => format!(
            "{who} puts an accomplice in the {} crew place of {} {price}",
            ordinal(placed.slot),
            punt(placed.ware)
        ),
        Ok(pb::SpaceKind::Harbour) => format!(
            "{who} puts an accomplice on {} in the harbour {price}",
            wharf(placed.berth)
        ),
        Ok(pb::SpaceKind::Shipyard) => format!(
            "{who} puts an accomplice on {} {price}",
            shipyard_berth(placed.berth)
        ),
        Ok(pb::SpaceKind::Pirate) if placed.slot == 0 => {
            format!("{who} takes the captain's place on the pirate ship {price}")
        }
        Ok(pb::SpaceKind::Pirate) => {
            format!("{who} takes the second place on the pirate ship {price}")
        }
        Ok(pb::SpaceKind::SmallPilot) => format!("{who} becomes the small pilot {price}"),
        Ok(pb::SpaceKind::LargePilot) => format!("{who} becomes the large pilot {price}"),
        Ok(pb::SpaceKind::Insurance) => format!("{who} takes the insurance office {price}"),
        Ok(pb::SpaceKind::Unspecified) | Err(_) => format!("{who} places an accomplice {price}"),
    };
    if placed.received > 0 {
        text.push_str(&format!(" and receives {} at once", pesos(placed.received)));
    }
    text.push('.');
    text
}

fn dice_rolled(rolled: &pb::DiceRolled) -> String {
    let dice: Vec<String> = rolled
        .dice
        .iter()
        .map(|die| format!("{} {}", ware_word(die.ware), die.pips))
        .collect();
    let mut text = format!(
        "Roll {} of 3: the dice show {}.",
        rolled.roll,
        and_list(&dice)
    );
    let moves: Vec<String> = rolled
        .moves
        .iter()
        .map(|moved| {
            if moved.to_space > LAST_SPACE {
                format!(
                    "{} sails from space {} into the harbour",
                    punt(moved.ware),
                    moved.from_space
                )
            } else {
                format!(
                    "{} moves from space {} to space {}",
                    punt(moved.ware),
                    moved.from_space,
                    moved.to_space
                )
            }
        })
        .collect();
    if moves.is_empty() {
        text.push_str(" No punt is left at sea to move.");
    } else {
        text.push_str(&format!(" {}.", capitalized(&and_list(&moves))));
    }
    text
}

fn pirate_boarded(boarded: &pb::PirateBoarded, names: &Names) -> String {
    let mut text = format!(
        "{}'s pirate leaves the pirate ship and boards {} on space 13, taking its {} crew place",
        names.seat(boarded.seat),
        punt(boarded.ware),
        ordinal(boarded.slot)
    );
    if let Some(displaced) = boarded.displaced {
        text.push_str(&format!(
            " and sending {}'s accomplice home",
            names.seat(displaced)
        ));
    }
    text.push('.');
    text
}

fn pilot_acted(acted: &pb::PilotActed, names: &Names) -> String {
    let pilot = if acted.large {
        "large pilot"
    } else {
        "small pilot"
    };
    let who = names.seat(acted.seat);
    if acted.shifts.is_empty() {
        return format!("{who}, the {pilot}, leaves the punts where they are.");
    }
    let moves: Vec<String> = acted
        .shifts
        .iter()
        .map(|shift| format!("{} {}", punt(shift.ware), shift_words(shift.spaces)))
        .collect();
    format!("{who}, the {pilot}, moves {}.", and_list(&moves))
}

/// One payout of the voyage's end, with its reason first, so that the payouts read as the
/// voyage's summary.
fn payout_text(payout: &pb::Payout, names: &Names) -> String {
    let who = names.seat(payout.seat);
    let amount = pesos(payout.amount);
    // Payoffs always divide evenly (spec §2.1), so a share tells how many shared.
    let sharers = payoff(payout.ware)
        .filter(|total| payout.amount > 0 && total % payout.amount == 0)
        .map(|total| (total, total / payout.amount));
    match pb::PayoutReason::try_from(payout.reason) {
        Ok(pb::PayoutReason::Plunder) => {
            let cargo = match ware_name(payout.ware) {
                Some(name) => format!("the plundered {name} cargo"),
                None => "a plundered cargo".to_owned(),
            };
            match sharers {
                Some((_, 1)) => format!("{who}'s pirate takes the whole of {cargo}: {amount}."),
                Some((total, 2)) => {
                    format!("{who}'s pirate takes half of {cargo}: {amount} of its {total}.")
                }
                _ => format!("{who}'s pirate takes {amount} of {cargo}."),
            }
        }
        Ok(pb::PayoutReason::Crew) => {
            let on = punt(payout.ware);
            match sharers {
                Some((total, 1)) => format!(
                    "{who}'s accomplice, alone on {on}, earns its whole cargo: {}.",
                    pesos(total)
                ),
                Some((total, n)) => {
                    let part = match n {
                        2 => "half".to_owned(),
                        3 => "a third".to_owned(),
                        4 => "a quarter".to_owned(),
                        n => format!("one share in {n}"),
                    };
                    format!(
                        "{who}'s accomplice on {on} earns {amount}, {part} of its {total}-peso cargo."
                    )
                }
                None => format!("{who}'s accomplice on {on} earns {amount}."),
            }
        }
        Ok(pb::PayoutReason::Harbour) => format!(
            "A punt lies at {}: {who}'s accomplice there earns {amount}.",
            wharf(payout.berth)
        ),
        Ok(pb::PayoutReason::Shipyard) => {
            let payer = match payout.paid_by {
                Some(insurer) => format!("{}'s insurance", names.seat(insurer)),
                None => "the bank".to_owned(),
            };
            format!(
                "A wreck lies at {}: {payer} pays {who}'s accomplice there {amount}.",
                shipyard_berth(payout.berth)
            )
        }
        Ok(pb::PayoutReason::Unspecified) | Err(_) => format!("{who} receives {amount}."),
    }
}

fn insurance_settled(settled: &pb::InsuranceSettled, names: &Names) -> String {
    let insurer = names.seat(settled.insurer);
    if settled.owed == 0 {
        return format!("No punt lies in the shipyard: {insurer}'s insurance owes nothing.");
    }
    let own = settled
        .owed
        .saturating_sub(settled.paid.saturating_add(settled.bank_covered));
    let mut parts = vec![if settled.paid == 0 {
        format!("{insurer} pays nothing")
    } else {
        format!("{insurer} pays {}", pesos(settled.paid))
    }];
    if settled.bank_covered > 0 {
        parts.push(format!(
            "the bank covers the {} {insurer} cannot raise",
            pesos(settled.bank_covered)
        ));
    }
    if own > 0 {
        // Each berth owes 6, 8 or 15 (spec §4.8 D): one of these amounts is one berth.
        let accomplices = if matches!(own, 6 | 8 | 15) {
            "accomplice"
        } else {
            "accomplices"
        };
        parts.push(format!(
            "the {} owed to {insurer}'s own {accomplices} in the shipyard cancel out",
            pesos(own)
        ));
    }
    format!(
        "{insurer}'s insurance covers the shipyard and owes {}: {}.",
        pesos(settled.owed),
        and_list(&parts)
    )
}

fn values_raised(raised: &pb::ValuesRaised) -> String {
    let rises: Vec<String> = raised
        .raised
        .iter()
        .map(|status| {
            let mut rise = format!(
                "{} to {}",
                ware_word(status.ware),
                pesos(u64::from(status.value))
            );
            if u64::from(status.value) >= TOP_VALUE {
                rise.push_str(", the top of the track");
            }
            rise
        })
        .collect();
    let text = format!(
        "The wares that reached the harbour rise on the black market: {}.",
        and_list(&rises)
    );
    if raised
        .raised
        .iter()
        .any(|status| u64::from(status.value) >= TOP_VALUE)
    {
        format!("{text} This is the last voyage.")
    } else {
        text
    }
}

fn game_ended(ended: &pb::GameEnded, names: &Names) -> String {
    let fortunes: Vec<String> = ended
        .scores
        .iter()
        .enumerate()
        .map(|(seat, score)| format!("{} with {}", names.seat(seat as Seat), fortune(*score)))
        .collect();
    let verdict = match ended.winners.as_slice() {
        [] => "Nobody wins.".to_owned(),
        [winner] => format!("{} wins.", names.seat(*winner)),
        winners => format!("{} share the victory.", names.list(winners)),
    };
    format!(
        "The game is over. Final fortunes, counting cash and every share at its final value, less 15 pesos per mortgaged share: {}. {verdict}",
        and_list(&fortunes)
    )
}

// ---------------------------------------------------------------------------------------------
// Labels
// ---------------------------------------------------------------------------------------------

/// The deciding seat in its own view: the one player whose shares the view shows (every player
/// owns shares from setup on, and a seat's view shows only its own).
fn actor(view: &pb::View) -> Option<&pb::PlayerView> {
    let mut own = view
        .players
        .iter()
        .filter(|player| !player.shares.is_empty());
    let first = own.next()?;
    own.next().is_none().then_some(first)
}

/// "for 4 pesos", "for free", or "for 4 pesos, mortgaging to pay" when cash is short.
fn paying(cost: u64, actor: Option<&pb::PlayerView>) -> String {
    let price = for_price(cost);
    if actor.is_some_and(|player| player.cash < cost) {
        format!("{price}, mortgaging to pay")
    } else {
        price
    }
}

fn placement_label(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::{Engine, LegalAction, Redaction, Seed, Viewer};
    use crate::proto::v1 as tabula;

    fn names() -> Names {
        let players: Vec<tabula::Player> = ["Ann", "Ben", "Cleo"]
            .iter()
            .enumerate()
            .map(|(seat, name)| tabula::Player {
                seat: seat as u32,
                display_name: (*name).to_owned(),
                external_id: String::new(),
            })
            .collect();
        Names::new(3, &players, |_| None)
    }

    fn text(kind: E) -> String {
        let event = pb::Event { kind: Some(kind) };
        Manila::event_text(&event, &names()).expect("a sentence")
    }

    fn ware(ware: pb::Ware) -> i32 {
        ware as i32
    }

    #[test]
    fn dealt_shares_are_hidden_from_other_seats() {
        let event = pb::Event {
            kind: Some(E::SharesDealt(pb::SharesDealt {
                seat: 1,
                wares: vec![ware(pb::Ware::Silk), ware(pb::Ware::Jade)],
            })),
        };
        let Redaction::Replaced(seen) = Manila::redact_event(&event, Viewer::Seat(0)) else {
            panic!("another seat's shares are redacted");
        };
        assert_eq!(
            Manila::event_text(&seen, &names()).as_deref(),
            Some("Ben is dealt 2 shares face down; their wares are hidden.")
        );
        assert_eq!(
            Manila::event_text(&event, &names()).as_deref(),
            Some("Ben is dealt a silk share and a jade share in secret.")
        );
        let same = E::SharesDealt(pb::SharesDealt {
            seat: 2,
            wares: vec![ware(pb::Ware::Nutmeg), ware(pb::Ware::Nutmeg)],
        });
        assert_eq!(text(same), "Cleo is dealt 2 nutmeg shares in secret.");
    }

    #[test]
    fn a_mortgage_hides_its_ware_from_others() {
        let event = pb::Event {
            kind: Some(E::ShareMortgaged(pb::ShareMortgaged {
                seat: 0,
                ware: ware(pb::Ware::Ginseng),
                forced: true,
            })),
        };
        let Redaction::Replaced(seen) = Manila::redact_event(&event, Viewer::Spectator) else {
            panic!("a mortgaged share's ware is redacted");
        };
        assert_eq!(
            Manila::event_text(&seen, &names()).as_deref(),
            Some("Ann must mortgage a share of a hidden ware for 12 pesos to cover a payment.")
        );
        assert_eq!(
            Manila::event_text(&event, &names()).as_deref(),
            Some("Ann must mortgage a ginseng share for 12 pesos to cover a payment.")
        );
    }

    #[test]
    fn the_harbour_master_is_chosen_and_loads() {
        assert_eq!(
            text(E::HarbourMasterChosen(pb::HarbourMasterChosen {
                seat: 1,
                price: 12,
                uncontested: false,
            })),
            "Ben wins the auction and becomes harbour master for 12 pesos."
        );
        assert_eq!(
            text(E::HarbourMasterChosen(pb::HarbourMasterChosen {
                seat: 0,
                price: 0,
                uncontested: true,
            })),
            "Nobody bids: Ann, who opened the auction, is harbour master for free."
        );
        assert_eq!(
            text(E::ShareBought(pb::ShareBought {
                seat: 1,
                ware: ware(pb::Ware::Silk),
                price: 15,
            })),
            "Ben buys a silk share for 15 pesos."
        );
        let punts = [
            (pb::Ware::Nutmeg, 0),
            (pb::Ware::Silk, 4),
            (pb::Ware::Jade, 5),
        ]
        .into_iter()
        .map(|(w, start)| pb::PuntStart {
            ware: ware(w),
            start,
        })
        .collect();
        assert_eq!(
            text(E::PuntsLoaded(pb::PuntsLoaded {
                seat: 1,
                left_out: ware(pb::Ware::Ginseng),
                punts,
            })),
            "Ben loads the punts and launches them: nutmeg on space 0, silk on 4 and jade on 5; \
             ginseng sits out this voyage."
        );
    }

    #[test]
    fn placements_and_dice_read_as_the_board_shows_them() {
        assert_eq!(
            text(E::AccomplicePlaced(pb::AccomplicePlaced {
                seat: 2,
                kind: pb::SpaceKind::Crew as i32,
                ware: ware(pb::Ware::Jade),
                berth: 0,
                slot: 0,
                cost: 3,
                received: 0,
                stowaway: false,
            })),
            "Cleo puts an accomplice in the first crew place of the jade punt for 3 pesos."
        );
        assert_eq!(
            text(E::AccomplicePlaced(pb::AccomplicePlaced {
                seat: 0,
                kind: pb::SpaceKind::Insurance as i32,
                ware: 0,
                berth: 0,
                slot: 0,
                cost: 0,
                received: 10,
                stowaway: false,
            })),
            "Ann takes the insurance office for free and receives 10 pesos at once."
        );
        let dice = [
            (pb::Ware::Nutmeg, 3),
            (pb::Ware::Silk, 5),
            (pb::Ware::Jade, 4),
        ]
        .into_iter()
        .map(|(w, pips)| pb::DieView {
            ware: ware(w),
            pips,
        })
        .collect();
        let moves = vec![
            pb::PuntMoved {
                ware: ware(pb::Ware::Nutmeg),
                from_space: 4,
                to_space: 7,
            },
            pb::PuntMoved {
                ware: ware(pb::Ware::Silk),
                from_space: 10,
                to_space: 14,
            },
        ];
        assert_eq!(
            text(E::DiceRolled(pb::DiceRolled {
                roll: 2,
                dice,
                moves,
            })),
            "Roll 2 of 3: the dice show nutmeg 3, silk 5 and jade 4. The nutmeg punt moves from \
             space 4 to space 7 and the silk punt sails from space 10 into the harbour."
        );
    }

    #[test]
    fn a_voyage_end_reads_as_a_summary() {
        let payout = |seat, amount, reason: pb::PayoutReason, w: i32, berth: pb::Berth, paid_by| {
            text(E::Payout(pb::Payout {
                seat,
                amount,
                reason: reason as i32,
                ware: w,
                berth: berth as i32,
                paid_by,
            }))
        };
        assert_eq!(
            text(E::PuntWrecked(pb::PuntWrecked {
                ware: ware(pb::Ware::Nutmeg),
                berth: pb::Berth::A as i32,
            })),
            "The nutmeg punt does not reach the harbour: it is wrecked and towed to shipyard \
             berth A."
        );
        assert_eq!(
            payout(
                1,
                15,
                pb::PayoutReason::Plunder,
                ware(pb::Ware::Silk),
                pb::Berth::Unspecified,
                None
            ),
            "Ben's pirate takes half of the plundered silk cargo: 15 pesos of its 30."
        );
        assert_eq!(
            payout(
                0,
                12,
                pb::PayoutReason::Crew,
                ware(pb::Ware::Jade),
                pb::Berth::Unspecified,
                None
            ),
            "Ann's accomplice on the jade punt earns 12 pesos, a third of its 36-peso cargo."
        );
        assert_eq!(
            payout(2, 6, pb::PayoutReason::Harbour, 0, pb::Berth::A, None),
            "A punt lies at wharf A: Cleo's accomplice there earns 6 pesos."
        );
        assert_eq!(
            text(E::InsuranceSettled(pb::InsuranceSettled {
                insurer: 2,
                owed: 14,
                paid: 5,
                bank_covered: 3,
            })),
            "Cleo's insurance covers the shipyard and owes 14 pesos: Cleo pays 5 pesos, \
             the bank covers the 3 pesos Cleo cannot raise and the 6 pesos owed to Cleo's own \
             accomplice in the shipyard cancel out."
        );
        assert_eq!(
            payout(1, 8, pb::PayoutReason::Shipyard, 0, pb::Berth::B, Some(2)),
            "A wreck lies at shipyard berth B: Cleo's insurance pays Ben's accomplice there 8 pesos."
        );
        assert_eq!(
            text(E::ValuesRaised(pb::ValuesRaised {
                raised: vec![
                    pb::WareStatus {
                        ware: ware(pb::Ware::Silk),
                        value: 20,
                        supply: 2,
                    },
                    pb::WareStatus {
                        ware: ware(pb::Ware::Jade),
                        value: 30,
                        supply: 1,
                    },
                ],
            })),
            "The wares that reached the harbour rise on the black market: silk to 20 pesos and \
             jade to 30 pesos, the top of the track. This is the last voyage."
        );
        assert_eq!(
            text(E::GameEnded(pb::GameEnded {
                scores: vec![85, -3, 85],
                winners: vec![0, 2],
            })),
            "The game is over. Final fortunes, counting cash and every share at its final value, \
             less 15 pesos per mortgaged share: Ann with 85 pesos, Ben with minus 3 pesos and Cleo \
             with 85 pesos. Ann and Cleo share the victory."
        );
    }

    /// Plays a 3-player game until the harbour master may buy: everyone passes, so the opener
    /// (seat 0) keeps the office for free.
    fn at_purchase() -> Manila {
        let mut game = Manila::setup(&Manila::config_for(3), &Seed::from_u64(1)).expect("setup");
        for seat in 0..3 {
            let pass = pb::Action {
                kind: Some(A::PassAuction(pb::PassAuction {})),
            };
            game.apply(seat, &pass).expect("a pass");
        }
        game
    }

    fn labels(game: &Manila, seat: Seat) -> Vec<String> {
        let view = game.view(Viewer::Seat(seat));
        game.legal_actions(seat)
            .iter()
            .map(|legal| {
                let action = match legal {
                    LegalAction::Exact(action) | LegalAction::Amount { action, .. } => action,
                };
                Manila::choice_label(action, &view, &names())
            })
            .collect()
    }

    #[test]
    fn labels_name_prices_from_the_view() {
        let game = Manila::setup(&Manila::config_for(3), &Seed::from_u64(1)).expect("setup");
        let auction = labels(&game, 0);
        assert!(
            auction.contains(&"Bid for harbour master".to_owned()),
            "{auction:?}"
        );
        assert!(auction.contains(&"Pass".to_owned()), "{auction:?}");

        let mut game = at_purchase();
        let purchase = labels(&game, 0);
        // Every ware starts at 0 on the black market: a share costs the minimum, 5 pesos.
        assert!(
            purchase.contains(&"Buy a silk share for 5 pesos".to_owned()),
            "{purchase:?}"
        );
        assert!(
            purchase.contains(&"Buy no share".to_owned()),
            "{purchase:?}"
        );
        let skip = pb::Action {
            kind: Some(A::SkipPurchase(pb::SkipPurchase {})),
        };
        game.apply(0, &skip).expect("skip");
        let loading = labels(&game, 0);
        assert!(
            loading.contains(&"Load ginseng, nutmeg and silk; start them at 0, 4 and 5".to_owned()),
            "{loading:?}"
        );
        assert!(loading.len() >= 100, "{loading:?}");
    }

    #[test]
    fn placement_labels_say_what_a_space_costs() {
        let mut game = at_purchase();
        let skip = pb::Action {
            kind: Some(A::SkipPurchase(pb::SkipPurchase {})),
        };
        game.apply(0, &skip).expect("skip");
        let load = pb::Action {
            kind: Some(A::LoadPunts(pb::LoadPunts {
                punts: [
                    (pb::Ware::Nutmeg, 3),
                    (pb::Ware::Silk, 3),
                    (pb::Ware::Jade, 3),
                ]
                .into_iter()
                .map(|(w, start)| pb::PuntStart {
                    ware: ware(w),
                    start,
                })
                .collect(),
            })),
        };
        game.apply(0, &load).expect("load");
        let placement = labels(&game, 0);
        for expected in [
            "Join the nutmeg crew for 2 pesos",
            "Join the jade crew for 3 pesos",
            "Take wharf A for 4 pesos",
            "Take shipyard berth C for 2 pesos",
            "Join the pirate ship as captain for 5 pesos",
            "Become the small pilot for 2 pesos",
            "Take the insurance office and receive 10 pesos",
            "Stop placing this voyage",
        ] {
            assert!(
                placement.contains(&expected.to_owned()),
                "{expected}: {placement:?}"
            );
        }
    }
}
