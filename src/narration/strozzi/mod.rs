//! Strozzi's words: ships revealed and claimed with the pirate, +1 and goods flags, placed in the
//! ports of Venice, Rome and Naples, markers climbing the four city tracks, progress tiles (art,
//! science, architecture) and the coins each round and the game's end pay out. Names are the
//! board's (`web/src/boards/strozzi.ts`): "the pirate flag", "the +1 flag", "the goods flag",
//! "the port of Venice", "an art tile of value 1 with gold", money in coins.

use super::{Names, Narrate, and_list, capitalized, count};
use crate::games::Seat;
use crate::games::strozzi::Strozzi;
use crate::proto::strozzi::v1 as pb;

use pb::event::Kind as Event;

impl Narrate for Strozzi {
    fn event_text(event: &pb::Event, names: &Names) -> Option<String> {
        Some(match event.kind.as_ref()? {
            Event::RoundStarted(started) => format!(
                "Round {} begins and {} starts. The deck holds {}; {} removed face down, unseen.",
                started.round,
                names.seat(started.start_seat),
                count(started.deck_count, "ship card", "ship cards"),
                were(started.removed_count, "more card", "more cards"),
            ),
            Event::CardRevealed(revealed) => format!(
                "{} reveals {} ({} left in the deck).",
                names.seat(revealed.active_seat),
                ship_words(revealed.card.as_ref()),
                count(revealed.deck_count, "card", "cards"),
            ),
            Event::Passed(passed) => format!("{} passes.", names.seat(passed.seat)),
            Event::FlagPlayed(played) => flag_played_text(played, names),
            Event::FlagReturned(returned) => format!(
                "{} gets {} back, unused.",
                names.seat(returned.seat),
                flag_name(returned.flag),
            ),
            Event::CardSetAside(aside) => format!(
                "Everybody passes on the card {} revealed: {} is set aside for this round.",
                names.seat(aside.active_seat),
                ship_words(aside.card.as_ref()),
            ),
            Event::ShipTaken(taken) => ship_taken_text(taken, names),
            Event::ShipPlaced(placed) => ship_placed_text(placed, names),
            Event::MarkerMoved(moved) => marker_moved_text(moved, names),
            Event::StepDeclined(declined) => format!(
                "{} declines {}.",
                names.seat(declined.seat),
                match pb::MoveCause::try_from(declined.cause) {
                    Ok(pb::MoveCause::GoodsFlag) => "the goods flag's extra step",
                    Ok(pb::MoveCause::ProgressTile) => "the progress tile's goods step",
                    Ok(pb::MoveCause::Scrolls) => "the Florence step of the scrolls",
                    Ok(pb::MoveCause::CardGoods) => "the step for the ship's goods",
                    _ => "an extra step",
                },
            ),
            Event::ProgressTileTaken(taken) => format!(
                "{} takes {}.",
                names.seat(taken.seat),
                taken.tile.as_ref().map_or_else(
                    || "a progress tile".to_owned(),
                    |tile| tile_words(tile, true)
                ),
            ),
            Event::DisplayRefilled(refilled) => match &refilled.tile {
                Some(tile) => format!(
                    "{} is turned face up from the progress stack ({} left in it).",
                    capitalized(&tile_words(tile, true)),
                    count(refilled.stack_count, "tile", "tiles"),
                ),
                None => "The progress stack is empty: no tile is turned face up.".to_owned(),
            },
            Event::RoundScored(scored) => round_scored_text(scored, names),
            Event::GameEnded(ended) => game_ended_text(ended, names),
        })
    }

    fn choice_label(action: &pb::Action, view: &pb::View, names: &Names) -> String {
        use pb::action::Kind as Action;
        match &action.kind {
            Some(Action::PassCard(_)) => match &view.claim {
                Some(claim) => format!("Pass: leave the ship to {}", names.seat(claim.seat)),
                None => "Pass".to_owned(),
            },
            Some(Action::PlayFlag(play)) => flag_label(play.flag, view, names),
            Some(Action::PlaceShip(place)) => place_label(place, view),
            Some(Action::TakeProgressTile(take)) => tile_label(take, view),
            None => "Wait".to_owned(),
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Names of things

/// The board's name of a city ("Venice"); "a city" for a value the game does not know.
fn city_name(city: i32) -> &'static str {
    match pb::City::try_from(city) {
        Ok(pb::City::Venice) => "Venice",
        Ok(pb::City::Rome) => "Rome",
        Ok(pb::City::Naples) => "Naples",
        Ok(pb::City::Florence) => "Florence",
        _ => "an unknown city",
    }
}

/// The goods symbol a port's track counts (spec A2): gold for Venice, grain for Rome, cloth for
/// Naples; Florence has none.
fn port_goods(city: i32) -> Option<pb::Goods> {
    match pb::City::try_from(city) {
        Ok(pb::City::Venice) => Some(pb::Goods::Gold),
        Ok(pb::City::Rome) => Some(pb::Goods::Grain),
        Ok(pb::City::Naples) => Some(pb::Goods::Cloth),
        _ => None,
    }
}

/// The port a goods symbol moves (spec A2).
fn goods_port(goods: pb::Goods) -> Option<pb::City> {
    match goods {
        pb::Goods::Gold => Some(pb::City::Venice),
        pb::Goods::Grain => Some(pb::City::Rome),
        pb::Goods::Cloth => Some(pb::City::Naples),
        pb::Goods::Unspecified => None,
    }
}

fn goods_name(goods: pb::Goods) -> &'static str {
    match goods {
        pb::Goods::Gold => "gold",
        pb::Goods::Grain => "grain",
        pb::Goods::Cloth => "cloth",
        pb::Goods::Unspecified => "goods",
    }
}

/// How many symbols of `goods` `card` shows.
fn goods_on(card: &pb::ShipCard, goods: pb::Goods) -> u32 {
    match goods {
        pb::Goods::Gold => card.gold,
        pb::Goods::Grain => card.grain,
        pb::Goods::Cloth => card.cloth,
        pb::Goods::Unspecified => 0,
    }
}

/// "the pirate flag", "the +1 flag", "the goods flag".
fn flag_name(flag: i32) -> &'static str {
    match pb::Flag::try_from(flag) {
        Ok(pb::Flag::Pirate) => "the pirate flag",
        Ok(pb::Flag::PlusOne) => "the +1 flag",
        Ok(pb::Flag::Goods) => "the goods flag",
        _ => "a flag",
    }
}

/// A ship card as the board prints it: "a ship of 4 sails with 1 gold, 1 grain and the progress
/// symbol".
fn ship_words(card: Option<&pb::ShipCard>) -> String {
    let Some(card) = card else {
        return "the ship".to_owned();
    };
    let mut items = Vec::new();
    for (n, goods) in [
        (card.gold, pb::Goods::Gold),
        (card.grain, pb::Goods::Grain),
        (card.cloth, pb::Goods::Cloth),
    ] {
        if n > 0 {
            items.push(format!("{n} {}", goods_name(goods)));
        }
    }
    if card.scrolls > 0 {
        items.push(count(card.scrolls, "scroll", "scrolls"));
    }
    if card.progress {
        items.push("the progress symbol".to_owned());
    }
    let cargo = if items.is_empty() {
        "no goods".to_owned()
    } else {
        and_list(&items)
    };
    format!(
        "a ship of {} with {cargo}",
        count(card.sails, "sail", "sails")
    )
}

/// A progress tile as the board prints it: "an art tile of value 1 with gold" (`article`), or
/// "art tile of value 1 with gold".
fn tile_words(tile: &pb::ProgressTile, article: bool) -> String {
    let (a, category) = match pb::Category::try_from(tile.category) {
        Ok(pb::Category::Art) => ("an", "art"),
        Ok(pb::Category::Science) => ("a", "science"),
        Ok(pb::Category::Architecture) => ("an", "architecture"),
        _ => ("a", "progress"),
    };
    let mut words = format!("{category} tile of value {}", tile.value);
    if let Ok(goods) = pb::Goods::try_from(tile.goods)
        && goods != pb::Goods::Unspecified
    {
        words.push_str(&format!(" with {}", goods_name(goods)));
    }
    if article {
        format!("{a} {words}")
    } else {
        words
    }
}

/// "1st", "2nd", "3rd", "4th", … "11th", "21st".
fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// "17 more cards are", "1 more card is", "no more cards are".
fn were(n: u32, singular: &str, plural: &str) -> String {
    let verb = if n == 1 { "is" } else { "are" };
    format!("{} {verb}", count(n, singular, plural))
}

/// A ship's place in its port, 0-based: "the fastest", "the 2nd fastest".
fn port_place(place: u32) -> String {
    match place {
        0 => "the fastest".to_owned(),
        n => format!("the {} fastest", ordinal(n + 1)),
    }
}

// ------------------------------------------------------------------------------------------------
// Events

fn flag_played_text(played: &pb::FlagPlayed, names: &Names) -> String {
    let name = names.seat(played.seat);
    let flag = flag_name(played.flag);
    if !played.tentative {
        return format!("{name} plays {flag}.");
    }
    let effect = match pb::Flag::try_from(played.flag) {
        Ok(pb::Flag::PlusOne) => " (one sail faster in its port)",
        Ok(pb::Flag::Goods) => " (one extra step on its port's track)",
        _ => "",
    };
    format!("{name} claims the ship with {flag}{effect}; a later pirate flag may still take it.")
}

fn ship_taken_text(taken: &pb::ShipTaken, names: &Names) -> String {
    let name = names.seat(taken.seat);
    let ship = match &taken.card {
        Some(card) => format!("the ship of {}", count(card.sails, "sail", "sails")),
        None => "the ship".to_owned(),
    };
    let flag = flag_name(taken.flag);
    match pb::Flag::try_from(taken.flag) {
        Ok(pb::Flag::Pirate) => format!("{name} takes {ship} with {flag}."),
        Ok(pb::Flag::PlusOne) => format!(
            "The claim stands: {name} takes {ship} with {flag}, which counts one sail faster in \
             its port this round."
        ),
        Ok(pb::Flag::Goods) => format!(
            "The claim stands: {name} takes {ship} with {flag}, which earns one extra step on \
             its port's track."
        ),
        _ => format!("{name} takes {ship}."),
    }
}

fn ship_placed_text(placed: &pb::ShipPlaced, names: &Names) -> String {
    let name = names.seat(placed.seat);
    let port = city_name(placed.port);
    let standing = format!(
        "{} there at speed {}",
        port_place(placed.place),
        placed.speed
    );
    if placed.automatic {
        format!(
            "{name}'s ship goes to the port of {port}, the only port left to them: it is \
             {standing}."
        )
    } else {
        format!("{name} places the ship in the port of {port}: it is {standing}.")
    }
}

fn marker_moved_text(moved: &pb::MarkerMoved, names: &Names) -> String {
    let marker = format!(
        "{}'s {} marker",
        names.seat(moved.seat),
        city_name(moved.city)
    );
    let why = match pb::MoveCause::try_from(moved.cause) {
        Ok(pb::MoveCause::CardGoods) => match port_goods(moved.city) {
            Some(goods) => format!("for the {} {} on the ship", moved.steps, goods_name(goods)),
            None => "for the goods on the ship".to_owned(),
        },
        Ok(pb::MoveCause::GoodsFlag) => "for the goods flag".to_owned(),
        Ok(pb::MoveCause::Scrolls) => {
            format!("for the ship's {}", count(moved.steps, "scroll", "scrolls"))
        }
        Ok(pb::MoveCause::ProgressTile) => match port_goods(moved.city) {
            Some(goods) => format!("for the {} on the progress tile", goods_name(goods)),
            None => "for the progress tile".to_owned(),
        },
        _ => "for the ship".to_owned(),
    };
    if moved.to_space == moved.from_space {
        return format!(
            "{marker} stays on {}: it is at the top of the track, so the {} {why} {} lost.",
            space_name(moved.to_space),
            if moved.steps == 1 { "step" } else { "steps" },
            if moved.steps == 1 { "is" } else { "are" },
        );
    }
    let climbed = moved.to_space.saturating_sub(moved.from_space);
    let lost = moved.steps.saturating_sub(climbed);
    let lost_note = if lost > 0 {
        format!(
            ", the top of the track ({} lost)",
            count(lost, "step", "steps")
        )
    } else {
        String::new()
    };
    let place = match moved.slot {
        0 => "first from the left".to_owned(),
        n => format!("right of {} already there", count(n, "marker", "markers")),
    };
    format!(
        "{marker} climbs {} {why}, from {} to {}{lost_note}; it stands {place}.",
        count(climbed, "space", "spaces"),
        space_name(moved.from_space),
        space_name(moved.to_space),
    )
}

/// "the starting space", "space 6".
fn space_name(position: u32) -> String {
    match position {
        0 => "the starting space".to_owned(),
        n => format!("space {n}"),
    }
}

/// What one payout rewards: "15 coins for the fastest ship in Venice".
fn payout_words(payout: &pb::Payout) -> String {
    let city = city_name(payout.city);
    let coins = count(payout.coins, "coin", "coins");
    match pb::PayoutKind::try_from(payout.kind) {
        Ok(pb::PayoutKind::Ship) => format!(
            "{coins} for {} ship in {city}",
            port_place(payout.place.saturating_sub(1))
        ),
        Ok(pb::PayoutKind::Track) => match payout.place {
            1 => format!("{coins} for the leading marker on the {city} track"),
            n => format!("{coins} for the {} marker on the {city} track", ordinal(n)),
        },
        Ok(pb::PayoutKind::BonusSpace) => format!(
            "{coins} for the bonus space {} on the {city} track",
            payout.place
        ),
        _ => coins,
    }
}

fn round_scored_text(scored: &pb::RoundScored, names: &Names) -> String {
    let mut text = match pb::RoundEndReason::try_from(scored.reason) {
        Ok(pb::RoundEndReason::FlagsUsed) => format!(
            "Round {} ends: every player has used all three flags.",
            scored.round
        ),
        Ok(pb::RoundEndReason::DeckEmpty) => {
            format!("Round {} ends: the deck is used up.", scored.round)
        }
        _ => format!("Round {} ends.", scored.round),
    };
    // Every seat the event tells about: those with money, then any with only payouts.
    let mut seats: Vec<Seat> = scored.money.iter().map(|money| money.seat).collect();
    for payout in &scored.payouts {
        if !seats.contains(&payout.seat) {
            seats.push(payout.seat);
        }
    }
    for seat in seats {
        let name = names.seat(seat);
        let payouts: Vec<String> = scored
            .payouts
            .iter()
            .filter(|payout| payout.seat == seat)
            .map(payout_words)
            .collect();
        let money = scored.money.iter().find(|money| money.seat == seat);
        let earned = money.map_or_else(
            || {
                scored
                    .payouts
                    .iter()
                    .filter(|payout| payout.seat == seat)
                    .map(|payout| i64::from(payout.coins))
                    .sum()
            },
            |money| money.earned,
        );
        text.push(' ');
        if payouts.is_empty() {
            text.push_str(&format!("{name} earns no coins"));
        } else {
            text.push_str(&format!(
                "{name} earns {}: {}",
                count(earned, "coin", "coins"),
                and_list(&payouts)
            ));
        }
        match money {
            Some(money) => text.push_str(&format!(
                "; {name} now has {}.",
                count(money.total, "coin", "coins")
            )),
            None => text.push('.'),
        }
    }
    if scored.money_hidden {
        text.push_str(" Money is kept hidden: each player sees only their own.");
    }
    text
}

fn game_ended_text(ended: &pb::GameEnded, names: &Names) -> String {
    let mut text = "The game ends after round 3, and the progress majorities pay out.".to_owned();
    let mut any_tie = false;
    for (category, word) in [
        (pb::Category::Art, "art"),
        (pb::Category::Science, "science"),
        (pb::Category::Architecture, "architecture"),
    ] {
        let mut awards: Vec<&pb::ProgressAward> = ended
            .awards
            .iter()
            .filter(|award| award.category == category as i32)
            .collect();
        awards.sort_by_key(|award| award.place);
        if awards.is_empty() {
            text.push_str(&format!(" Nobody scores in {word}."));
            continue;
        }
        let parts: Vec<String> = awards
            .iter()
            .map(|award| {
                format!(
                    "{} is {} with {} ({})",
                    names.seat(award.seat),
                    ordinal(award.place),
                    award.total,
                    count(award.coins, "coin", "coins"),
                )
            })
            .collect();
        any_tie |= awards.windows(2).any(|pair| pair[0].total == pair[1].total);
        text.push_str(&format!(" In {word}, {}.", and_list(&parts)));
    }
    if any_tie {
        text.push_str(" Equal totals are ranked by the Florence track.");
    }
    let mut standings: Vec<(Seat, i64)> = ended
        .money
        .iter()
        .enumerate()
        .map(|(seat, &money)| (seat as Seat, money))
        .collect();
    standings.sort_by_key(|&(_, money)| std::cmp::Reverse(money));
    if !standings.is_empty() {
        let parts: Vec<String> = standings
            .iter()
            .map(|&(seat, money)| format!("{} {}", names.seat(seat), count(money, "coin", "coins")))
            .collect();
        text.push_str(&format!(" Final money: {}.", and_list(&parts)));
    }
    match ended.winners.as_slice() {
        [] => text.push_str(" Nobody wins."),
        [winner] => {
            let money = ended.money.get(*winner as usize).copied();
            let tied: Vec<Seat> = standings
                .iter()
                .filter(|&&(seat, coins)| seat != *winner && Some(coins) == money)
                .map(|&(seat, _)| seat)
                .collect();
            if tied.is_empty() {
                text.push_str(&format!(" {} wins.", names.seat(*winner)));
            } else {
                text.push_str(&format!(
                    " {} wins: level on money with {}, with the better Florence marker.",
                    names.seat(*winner),
                    names.list(&tied)
                ));
            }
        }
        winners => text.push_str(&format!(" {} win.", names.list(winners))),
    }
    text
}

// ------------------------------------------------------------------------------------------------
// Labels

fn flag_label(flag: i32, view: &pb::View, names: &Names) -> String {
    let claimer = view.claim.as_ref().map(|claim| names.seat(claim.seat));
    let claim = match &claimer {
        Some(claimer) => format!("claim the ship in place of {claimer}"),
        None => "claim the ship".to_owned(),
    };
    match pb::Flag::try_from(flag) {
        Ok(pb::Flag::Pirate) => match &claimer {
            Some(claimer) => format!("Play the pirate flag: take the ship from {claimer}"),
            None => "Play the pirate flag: take the ship at once".to_owned(),
        },
        Ok(pb::Flag::PlusOne) => match &view.card {
            Some(card) => format!("Play the +1 flag: {claim} at speed {}", card.sails + 1),
            None => format!("Play the +1 flag: {claim}, one sail faster"),
        },
        Ok(pb::Flag::Goods) => {
            let condition = match &view.config {
                Some(config) if config.goods_flag_needs_match => " if it carries that port's goods",
                _ => "",
            };
            format!("Play the goods flag: {claim}, one extra step in its port{condition}")
        }
        _ => "Play a flag".to_owned(),
    }
}

/// How far `seat`'s marker on `city`'s track would climb with `steps` (capped at the top):
/// "Venice marker +2", "Venice marker +1 to the top", "Venice marker already at the top".
fn marker_gain(view: &pb::View, seat: Seat, city: pb::City, steps: u32) -> String {
    let name = city_name(city as i32);
    let track = view.tracks.iter().find(|track| track.city == city as i32);
    let position = track
        .and_then(|track| {
            track
                .spaces
                .iter()
                .find(|space| space.seats.contains(&seat))
        })
        .map_or(0, |space| space.position);
    let room = track.map_or(steps, |track| track.top.saturating_sub(position));
    match steps.min(room) {
        0 => format!("{name} marker already at the top"),
        gain if gain < steps => format!("{name} marker +{gain} to the top"),
        gain => format!("{name} marker +{gain}"),
    }
}

fn place_label(place: &pb::PlaceShip, view: &pb::View) -> String {
    let name = city_name(place.port);
    let decline = if place.decline_goods_flag_step {
        " without the goods flag's step"
    } else {
        ""
    };
    let (Some(card), Some(taker)) = (&view.card, &view.taker) else {
        return format!("Place the ship in {name}{decline}");
    };
    let flag = pb::Flag::try_from(taker.flag).unwrap_or(pb::Flag::Unspecified);
    let speed = card.sails + u32::from(flag == pb::Flag::PlusOne);
    let place_in_port = view
        .ports
        .iter()
        .find(|port| port.city == place.port)
        .map_or(0, |port| {
            port.ships
                .iter()
                .filter(|berth| berth.speed >= speed)
                .count()
        });
    let mut parts = vec![format!("{} there", port_place(place_in_port as u32))];
    let matching = port_goods(place.port).map_or(0, |goods| goods_on(card, goods));
    let needs_match = view
        .config
        .as_ref()
        .is_some_and(|config| config.goods_flag_needs_match);
    let flag_step =
        flag == pb::Flag::Goods && (!needs_match || matching > 0) && !place.decline_goods_flag_step;
    let steps = matching + u32::from(flag_step);
    if let Ok(city) = pb::City::try_from(place.port)
        && steps > 0
    {
        parts.push(marker_gain(view, taker.seat, city, steps));
    }
    format!("Place the ship in {name}{decline}: {}", parts.join(", "))
}

fn tile_label(take: &pb::TakeProgressTile, view: &pb::View) -> String {
    let Some(index) = view.display.iter().position(|tile| tile.id == take.tile_id) else {
        return "Take a progress tile".to_owned();
    };
    let tile = &view.display[index];
    let mut label = format!("Take the {}", tile_words(tile, false));
    // Two face-up tiles alike: say which one, as the board lays them out left to right.
    let alike = view
        .display
        .iter()
        .filter(|other| {
            other.category == tile.category
                && other.value == tile.value
                && other.goods == tile.goods
        })
        .count();
    if alike > 1 {
        let side = match (index, view.display.len()) {
            (0, _) => "on the left".to_owned(),
            (i, n) if i + 1 == n => "on the right".to_owned(),
            (1, 3) => "in the middle".to_owned(),
            (i, _) => format!("{} from the left", ordinal(i as u32 + 1)),
        };
        label.push_str(&format!(" {side}"));
    }
    let port = pb::Goods::try_from(tile.goods).ok().and_then(goods_port);
    if let Some(port) = port {
        let seat = view.taker.as_ref().map_or(0, |taker| taker.seat);
        if take.decline_goods_step {
            label.push_str(&format!(" without the {} step", city_name(port as i32)));
        } else {
            label.push_str(&format!(": {}", marker_gain(view, seat, port, 1)));
        }
    }
    label
}

#[cfg(test)]
mod tests;
