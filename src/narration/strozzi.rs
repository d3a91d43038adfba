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
            "The claim stands: {name} takes {ship} with {flag}, which counts one sail faster in its port this round."
        ),
        Ok(pb::Flag::Goods) => format!(
            "The claim stands: {name} takes {ship} with {flag}, which earns one extra step on its port's track."
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
            "{name}'s ship goes to the port of {port}, the only port left to them: it is {standing}."
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
mod tests {
    use super::*;
    use crate::games::{Engine, LegalAction, Seed, Viewer};
    use crate::proto::v1 as table_pb;

    fn names() -> Names {
        let players: Vec<table_pb::Player> = ["Anna", "Ben", "Cleo"]
            .iter()
            .enumerate()
            .map(|(seat, name)| table_pb::Player {
                seat: seat as Seat,
                display_name: (*name).to_owned(),
                external_id: String::new(),
            })
            .collect();
        Names::new(3, &players, |_| None)
    }

    fn text(kind: Event) -> String {
        Strozzi::event_text(&pb::Event { kind: Some(kind) }, &names()).unwrap_or_default()
    }

    fn card(
        sails: u32,
        gold: u32,
        grain: u32,
        cloth: u32,
        scrolls: u32,
        progress: bool,
    ) -> pb::ShipCard {
        pb::ShipCard {
            id: 11,
            label: "X12".to_owned(),
            sails,
            gold,
            grain,
            cloth,
            scrolls,
            progress,
        }
    }

    #[test]
    fn a_card_and_its_claim_read_as_a_person_says_them() {
        assert_eq!(
            text(Event::RoundStarted(pb::RoundStarted {
                round: 1,
                start_seat: 0,
                deck_count: 12,
                removed_count: 17,
            })),
            "Round 1 begins and Anna starts. The deck holds 12 ship cards; 17 more cards are removed face down, unseen."
        );
        assert_eq!(
            text(Event::CardRevealed(pb::CardRevealed {
                active_seat: 0,
                card: Some(card(4, 1, 1, 0, 0, true)),
                deck_count: 0,
            })),
            "Anna reveals a ship of 4 sails with 1 gold, 1 grain and the progress symbol (no cards left in the deck)."
        );
        assert_eq!(
            text(Event::FlagPlayed(pb::FlagPlayed {
                seat: 1,
                flag: pb::Flag::Goods as i32,
                tentative: true,
            })),
            "Ben claims the ship with the goods flag (one extra step on its port's track); a later pirate flag may still take it."
        );
        assert_eq!(
            text(Event::FlagPlayed(pb::FlagPlayed {
                seat: 2,
                flag: pb::Flag::Pirate as i32,
                tentative: false,
            })),
            "Cleo plays the pirate flag."
        );
        assert_eq!(
            text(Event::FlagReturned(pb::FlagReturned {
                seat: 1,
                flag: pb::Flag::Goods as i32,
            })),
            "Ben gets the goods flag back, unused."
        );
        assert_eq!(
            text(Event::ShipTaken(pb::ShipTaken {
                seat: 2,
                flag: pb::Flag::Pirate as i32,
                card: Some(card(4, 1, 1, 0, 0, true)),
            })),
            "Cleo takes the ship of 4 sails with the pirate flag."
        );
        assert_eq!(
            text(Event::ShipPlaced(pb::ShipPlaced {
                seat: 2,
                port: pb::City::Venice as i32,
                speed: 4,
                place: 1,
                automatic: false,
            })),
            "Cleo places the ship in the port of Venice: it is the 2nd fastest there at speed 4."
        );
        assert_eq!(
            text(Event::MarkerMoved(pb::MarkerMoved {
                seat: 2,
                city: pb::City::Venice as i32,
                cause: pb::MoveCause::CardGoods as i32,
                steps: 1,
                from_space: 0,
                to_space: 1,
                slot: 0,
            })),
            "Cleo's Venice marker climbs 1 space for the 1 gold on the ship, from the starting space to space 1; it stands first from the left."
        );
        assert_eq!(
            text(Event::MarkerMoved(pb::MarkerMoved {
                seat: 0,
                city: pb::City::Florence as i32,
                cause: pb::MoveCause::Scrolls as i32,
                steps: 2,
                from_space: 9,
                to_space: 10,
                slot: 1,
            })),
            "Anna's Florence marker climbs 1 space for the ship's 2 scrolls, from space 9 to space 10, the top of the track (1 step lost); it stands right of 1 marker already there."
        );
        assert_eq!(
            text(Event::ProgressTileTaken(pb::ProgressTileTaken {
                seat: 2,
                tile: Some(pb::ProgressTile {
                    id: 0,
                    category: pb::Category::Art as i32,
                    value: 1,
                    goods: pb::Goods::Gold as i32,
                }),
            })),
            "Cleo takes an art tile of value 1 with gold."
        );
        assert_eq!(
            text(Event::DisplayRefilled(pb::DisplayRefilled {
                tile: None,
                stack_count: 0,
            })),
            "The progress stack is empty: no tile is turned face up."
        );
        assert_eq!(
            text(Event::CardSetAside(pb::CardSetAside {
                active_seat: 1,
                card: Some(card(8, 0, 0, 0, 0, false)),
            })),
            "Everybody passes on the card Ben revealed: a ship of 8 sails with no goods is set aside for this round."
        );
    }

    fn scored(money_hidden: bool) -> pb::Event {
        let payout = |seat, kind: pb::PayoutKind, city: pb::City, place, coins| pb::Payout {
            seat,
            kind: kind as i32,
            city: city as i32,
            place,
            coins,
        };
        pb::Event {
            kind: Some(Event::RoundScored(pb::RoundScored {
                round: 2,
                reason: pb::RoundEndReason::FlagsUsed as i32,
                payouts: vec![
                    payout(0, pb::PayoutKind::Ship, pb::City::Venice, 1, 15),
                    payout(1, pb::PayoutKind::Ship, pb::City::Venice, 2, 10),
                    payout(0, pb::PayoutKind::Track, pb::City::Florence, 1, 15),
                    payout(0, pb::PayoutKind::BonusSpace, pb::City::Florence, 8, 10),
                ],
                money: vec![
                    pb::SeatMoney {
                        seat: 0,
                        earned: 40,
                        total: 65,
                    },
                    pb::SeatMoney {
                        seat: 1,
                        earned: 10,
                        total: 10,
                    },
                    pb::SeatMoney {
                        seat: 2,
                        earned: 0,
                        total: 0,
                    },
                ],
                money_hidden,
            })),
        }
    }

    #[test]
    fn round_scoring_sums_up_who_earned_what_and_why() {
        assert_eq!(
            Strozzi::event_text(&scored(false), &names()).unwrap_or_default(),
            "Round 2 ends: every player has used all three flags. \
             Anna earns 40 coins: 15 coins for the fastest ship in Venice, 15 coins for the leading marker on the Florence track and 10 coins for the bonus space 8 on the Florence track; Anna now has 65 coins. \
             Ben earns 10 coins: 10 coins for the 2nd fastest ship in Venice; Ben now has 10 coins. \
             Cleo earns no coins; Cleo now has no coins."
        );
    }

    #[test]
    fn hidden_money_is_said_hidden_not_nothing() {
        let event = scored(true);
        let seen = |viewer| match Strozzi::redact_event(&event, viewer) {
            crate::games::Redaction::Replaced(event) => event,
            other => panic!("round scoring with hidden money is replaced, not {other:?}"),
        };
        assert_eq!(
            Strozzi::event_text(&seen(Viewer::Seat(1)), &names()).unwrap_or_default(),
            "Round 2 ends: every player has used all three flags. \
             Ben earns 10 coins: 10 coins for the 2nd fastest ship in Venice; Ben now has 10 coins. \
             Money is kept hidden: each player sees only their own."
        );
        assert_eq!(
            Strozzi::event_text(&seen(Viewer::Spectator), &names()).unwrap_or_default(),
            "Round 2 ends: every player has used all three flags. \
             Money is kept hidden: each player sees only their own."
        );
    }

    #[test]
    fn the_game_end_names_the_majorities_and_the_winner() {
        let award = |category: pb::Category, seat, total, place, coins| pb::ProgressAward {
            category: category as i32,
            seat,
            total,
            place,
            coins,
        };
        let event = pb::Event {
            kind: Some(Event::GameEnded(pb::GameEnded {
                awards: vec![
                    award(pb::Category::Art, 1, 3, 1, 30),
                    award(pb::Category::Art, 0, 3, 2, 20),
                    award(pb::Category::Science, 2, 2, 1, 30),
                ],
                money: vec![120, 135, 120],
                winners: vec![1],
            })),
        };
        assert_eq!(
            Strozzi::event_text(&event, &names()).unwrap_or_default(),
            "The game ends after round 3, and the progress majorities pay out. \
             In art, Ben is 1st with 3 (30 coins) and Anna is 2nd with 3 (20 coins). \
             In science, Cleo is 1st with 2 (30 coins). \
             Nobody scores in architecture. \
             Equal totals are ranked by the Florence track. \
             Final money: Ben 135 coins, Anna 120 coins and Cleo 120 coins. Ben wins."
        );
    }

    /// Plays seed 1 at 3 seats until someone must choose a progress tile: the first seat able to
    /// takes every ship with the progress symbol, every other card is passed.
    #[test]
    fn a_progress_tile_button_says_what_the_tile_is() {
        let config = Strozzi::config_for(3);
        let mut state = Strozzi::setup(&config, &Seed::from_u64(1)).expect("setup");
        for _ in 0..200 {
            let seat = state.to_act().expect("the game goes on");
            let view = state.view(Viewer::Seat(seat));
            let actions: Vec<pb::Action> = state
                .legal_actions(seat)
                .into_iter()
                .map(|legal| match legal {
                    LegalAction::Exact(action) => action,
                    LegalAction::Amount { action, .. } => action,
                })
                .collect();
            let pick = |wanted: &dyn Fn(&pb::action::Kind) -> bool| {
                actions
                    .iter()
                    .find(|action| action.kind.as_ref().is_some_and(wanted))
                    .copied()
            };
            if view.phase == pb::Phase::ChoosingTile as i32 {
                let labels: Vec<String> = actions
                    .iter()
                    .map(|action| Strozzi::choice_label(action, &view, &names()))
                    .collect();
                for (label, tile) in labels.iter().zip(&view.display) {
                    assert!(label.starts_with("Take the "), "{label}");
                    assert!(
                        label.contains(&format!("tile of value {}", tile.value)),
                        "{label}"
                    );
                    assert!(!label.contains("id"), "{label}");
                }
                assert_eq!(
                    labels,
                    [
                        "Take the architecture tile of value 1 with grain: Rome marker +1",
                        "Take the art tile of value 1 with gold: Venice marker +1",
                        "Take the art tile of value 1 with grain: Rome marker +1",
                    ]
                );
                return;
            }
            let progress = view.card.as_ref().is_some_and(|card| card.progress);
            let wanted = if view.phase == pb::Phase::Deciding as i32 && progress {
                pick(
                    &|kind| matches!(kind, pb::action::Kind::PlayFlag(play) if play.flag == pb::Flag::Pirate as i32),
                )
            } else {
                None
            };
            let action = wanted
                .or_else(|| pick(&|kind| matches!(kind, pb::action::Kind::PassCard(_))))
                .unwrap_or(actions[0]);
            state.apply(seat, &action).expect("legal");
        }
        panic!("nobody took a ship with the progress symbol");
    }

    #[test]
    fn flag_and_port_buttons_say_what_they_do() {
        let config = Strozzi::config_for(3);
        let state = Strozzi::setup(&config, &Seed::from_u64(1)).expect("setup");
        let seat = state.to_act().expect("someone decides");
        let mut view = state.view(Viewer::Seat(seat));
        view.card = Some(card(4, 1, 1, 0, 0, true));
        let label = |kind: pb::action::Kind, view: &pb::View| {
            Strozzi::choice_label(&pb::Action { kind: Some(kind) }, view, &names())
        };
        let flag = |flag: pb::Flag| pb::action::Kind::PlayFlag(pb::PlayFlag { flag: flag as i32 });
        assert_eq!(
            label(pb::action::Kind::PassCard(pb::PassCard {}), &view),
            "Pass"
        );
        assert_eq!(
            label(flag(pb::Flag::Pirate), &view),
            "Play the pirate flag: take the ship at once"
        );
        assert_eq!(
            label(flag(pb::Flag::PlusOne), &view),
            "Play the +1 flag: claim the ship at speed 5"
        );
        assert_eq!(
            label(flag(pb::Flag::Goods), &view),
            "Play the goods flag: claim the ship, one extra step in its port"
        );
        view.claim = Some(pb::Claim {
            seat: 1,
            flag: pb::Flag::Goods as i32,
        });
        assert_eq!(
            label(flag(pb::Flag::Pirate), &view),
            "Play the pirate flag: take the ship from Ben"
        );
        assert_eq!(
            label(pb::action::Kind::PassCard(pb::PassCard {}), &view),
            "Pass: leave the ship to Ben"
        );
        view.claim = None;
        view.taker = Some(pb::Claim {
            seat,
            flag: pb::Flag::Goods as i32,
        });
        let place = |port: pb::City| {
            pb::action::Kind::PlaceShip(pb::PlaceShip {
                port: port as i32,
                decline_goods_flag_step: false,
            })
        };
        assert_eq!(
            label(place(pb::City::Venice), &view),
            "Place the ship in Venice: the fastest there, Venice marker +2"
        );
        assert_eq!(
            label(place(pb::City::Naples), &view),
            "Place the ship in Naples: the fastest there, Naples marker +1"
        );
        // Two face-up tiles alike are told apart by where they lie, left to right.
        let art = pb::ProgressTile {
            id: 0,
            category: pb::Category::Art as i32,
            value: 1,
            goods: pb::Goods::Gold as i32,
        };
        view.display = vec![
            art,
            pb::ProgressTile { id: 1, ..art },
            pb::ProgressTile {
                id: 35,
                category: pb::Category::Architecture as i32,
                value: 2,
                goods: pb::Goods::Unspecified as i32,
            },
        ];
        let take = |tile_id: u32, decline_goods_step: bool| {
            pb::action::Kind::TakeProgressTile(pb::TakeProgressTile {
                tile_id,
                decline_goods_step,
            })
        };
        assert_eq!(
            label(take(0, false), &view),
            "Take the art tile of value 1 with gold on the left: Venice marker +1"
        );
        assert_eq!(
            label(take(1, true), &view),
            "Take the art tile of value 1 with gold in the middle without the Venice step"
        );
        assert_eq!(
            label(take(35, false), &view),
            "Take the architecture tile of value 2"
        );
    }

    /// Random play with every option on (hidden money, optional steps, overbids, the full pirate
    /// circle, the goods flag needing a match): buttons stay distinct phrases and every event each
    /// viewer receives reads as sentences.
    #[test]
    fn every_option_still_reads_as_sentences() {
        let config = pb::Config {
            players: 4,
            hidden_money: true,
            optional_extra_steps: true,
            tentative_overbid: true,
            pirate_chance_full_circle: true,
            goods_flag_needs_match: true,
            ..Default::default()
        };
        let viewers = [
            Viewer::Seat(0),
            Viewer::Seat(1),
            Viewer::Seat(2),
            Viewer::Seat(3),
            Viewer::Spectator,
        ];
        for seed in 0..5u64 {
            let mut state = Strozzi::setup(&config, &Seed::from_u64(seed)).expect("setup");
            let mut step = seed as usize;
            while let Some(seat) = state.to_act() {
                let view = state.view(Viewer::Seat(seat));
                let actions: Vec<pb::Action> = state
                    .legal_actions(seat)
                    .into_iter()
                    .map(|legal| match legal {
                        LegalAction::Exact(action) => action,
                        LegalAction::Amount { action, .. } => action,
                    })
                    .collect();
                let labels: Vec<String> = actions
                    .iter()
                    .map(|action| Strozzi::choice_label(action, &view, &names()))
                    .collect();
                for (i, label) in labels.iter().enumerate() {
                    assert!(!label.ends_with('.') && !label.contains('_'), "{label}");
                    assert!(!labels[..i].contains(label), "two buttons read {label:?}");
                }
                step = step.wrapping_mul(31).wrapping_add(7);
                let action = &actions[step % actions.len()];
                let events = state.apply(seat, action).expect("legal");
                for viewer in viewers {
                    for event in &events {
                        let Some(seen) = Strozzi::redact_event(event, viewer).seen(event) else {
                            continue;
                        };
                        let line = Strozzi::event_text(&seen, &names()).unwrap_or_default();
                        assert!(line.ends_with('.') && !line.contains('_'), "{line:?}");
                    }
                }
            }
        }
    }
}
