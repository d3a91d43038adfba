//! Manila's events in sentences: what the voyage's moves, dice, payouts and the game's end say.

use super::*;

pub(super) fn shares_dealt(dealt: &pb::SharesDealt, names: &Names) -> String {
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

pub(super) fn punts_loaded(loaded: &pb::PuntsLoaded, names: &Names) -> String {
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

pub(super) fn accomplice_placed(placed: &pb::AccomplicePlaced, names: &Names) -> String {
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

pub(super) fn dice_rolled(rolled: &pb::DiceRolled) -> String {
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

pub(super) fn pirate_boarded(boarded: &pb::PirateBoarded, names: &Names) -> String {
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

pub(super) fn pilot_acted(acted: &pb::PilotActed, names: &Names) -> String {
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
pub(super) fn payout_text(payout: &pb::Payout, names: &Names) -> String {
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
                        "{who}'s accomplice on {on} earns {amount}, {part} of its {total}-peso \
                         cargo."
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

pub(super) fn insurance_settled(settled: &pb::InsuranceSettled, names: &Names) -> String {
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

pub(super) fn values_raised(raised: &pb::ValuesRaised) -> String {
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

pub(super) fn game_ended(ended: &pb::GameEnded, names: &Names) -> String {
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
        "The game is over. Final fortunes, counting cash and every share at its final value, \
         less 15 pesos per mortgaged share: {}. {verdict}",
        and_list(&fortunes)
    )
}
