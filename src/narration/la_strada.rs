//! La Strada's words: workshops put on the plains, turns with their income, roads built from a
//! hub over plains, forest and hill to a settlement, and the final gold.
//!
//! Places are named as the board names them: a hex by its coordinates "(q, r)" (with a true minus
//! sign), a settlement by its size ("the town at (3, −1)"), a road tile by its terrain ("the
//! forest at (0, −3)"). Nothing in La Strada is hidden, so no value is ever redacted.

use super::{Names, Narrate, and_list, count};
use crate::games::la_strada::LaStrada;
use crate::proto::la_strada::v1 as pb;
use pb::event::Kind;

/// Road tile costs by terrain (spec §5 rule 7): plains 2, forest 3, hill 4.
fn tile_cost(terrain: i32) -> Option<u32> {
    match pb::Terrain::try_from(terrain) {
        Ok(pb::Terrain::Plains) => Some(2),
        Ok(pb::Terrain::Forest) => Some(3),
        Ok(pb::Terrain::Hill) => Some(4),
        _ => None,
    }
}

/// A coordinate as a person writes it: a true minus sign for a negative value.
fn coordinate(value: i32) -> String {
    if value < 0 {
        format!("\u{2212}{}", value.unsigned_abs())
    } else {
        value.to_string()
    }
}

/// A hex as the board names it: "(2, −1)".
fn place(hex: Option<&pb::Hex>) -> String {
    match hex {
        Some(hex) => format!("({}, {})", coordinate(hex.q), coordinate(hex.r)),
        None => "an unnamed hex".to_owned(),
    }
}

/// Whether two hexes are the same.
fn same(a: Option<&pb::Hex>, b: Option<&pb::Hex>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if a.q == b.q && a.r == b.r)
}

/// A settlement's size in a word: "hamlet", "village", "town", "city".
fn kind_word(kind: i32) -> &'static str {
    match pb::SettlementKind::try_from(kind) {
        Ok(pb::SettlementKind::Hamlet) => "hamlet",
        Ok(pb::SettlementKind::Village) => "village",
        Ok(pb::SettlementKind::Town) => "town",
        Ok(pb::SettlementKind::City) => "city",
        _ => "settlement",
    }
}

/// The plural of [`kind_word`].
fn kind_plural(kind: i32) -> &'static str {
    match pb::SettlementKind::try_from(kind) {
        Ok(pb::SettlementKind::Hamlet) => "hamlets",
        Ok(pb::SettlementKind::Village) => "villages",
        Ok(pb::SettlementKind::Town) => "towns",
        Ok(pb::SettlementKind::City) => "cities",
        _ => "settlements",
    }
}

/// A settlement with its place: "the village at (−1, −2)".
fn settlement(kind: i32, hex: Option<&pb::Hex>) -> String {
    format!("the {} at {}", kind_word(kind), place(hex))
}

/// A terrain in a word: "plains", "forest", "hill" ("hex" for anything else).
fn terrain_word(terrain: i32) -> &'static str {
    match pb::Terrain::try_from(terrain) {
        Ok(pb::Terrain::Plains) => "plains",
        Ok(pb::Terrain::Forest) => "forest",
        Ok(pb::Terrain::Hill) => "hill",
        _ => "hex",
    }
}

/// A road's tiles in order, runs of one terrain together: "the plains at (0, −2) and (0, −3)
/// and the forest at (1, −4)".
fn tiles_text(tiles: &[pb::RoadTile]) -> String {
    let mut runs: Vec<(&'static str, Vec<String>)> = Vec::new();
    for tile in tiles {
        let word = terrain_word(tile.terrain);
        let at = place(tile.hex.as_ref());
        match runs.last_mut() {
            Some((last, places)) if *last == word => places.push(at),
            _ => runs.push((word, vec![at])),
        }
    }
    let runs: Vec<String> = runs
        .into_iter()
        .map(|(word, places)| format!("the {word} at {}", and_list(&places)))
        .collect();
    and_list(&runs)
}

/// The compass name of land piece position `position` (spec §10: position k spans directions k
/// and k + 1, counted anticlockwise from the east).
fn compass(position: usize) -> &'static str {
    [
        "north-east",
        "north",
        "north-west",
        "south-west",
        "south",
        "south-east",
    ]
    .get(position)
    .copied()
    .unwrap_or("middle")
}

fn resources(n: u32) -> String {
    count(n, "resource", "resources")
}

fn gold(n: u32) -> String {
    count(n, "gold", "gold")
}

impl Narrate for LaStrada {
    fn event_text(event: &pb::Event, names: &Names) -> Option<String> {
        Some(match event.kind.as_ref()? {
            Kind::GameSetUp(set_up) => set_up_text(set_up, names),
            Kind::WorkshopPlaced(placed) => format!(
                "{} puts a workshop on {}.",
                names.seat(placed.seat),
                place(placed.hex.as_ref())
            ),
            Kind::TurnStarted(started) => turn_started_text(started, names),
            Kind::RoadBuilt(road) => road_built_text(road, names),
            Kind::TurnEnded(ended) => format!(
                "{} ends their turn, keeping {}.",
                names.seat(ended.seat),
                resources(ended.resources)
            ),
            Kind::GameEnded(ended) => game_ended_text(ended, names),
        })
    }

    fn choice_label(action: &pb::Action, view: &pb::View, names: &Names) -> String {
        match action.kind.as_ref() {
            Some(pb::action::Kind::PlaceWorkshop(workshop)) => {
                format!("Place a workshop on {}", place(workshop.hex.as_ref()))
            }
            Some(pb::action::Kind::BuildRoad(road)) => road_label(road, view, names),
            Some(pb::action::Kind::EndTurn(_)) if view.built_this_turn => "End the turn".to_owned(),
            Some(pb::action::Kind::EndTurn(_)) => "End the turn without building".to_owned(),
            None => "Make no move".to_owned(),
        }
    }
}

/// The opening: the land pieces, the settlements revealed, the start player, the workshop order
/// and the first turn.
fn set_up_text(set_up: &pb::GameSetUp, names: &Names) -> String {
    let mut sentences = Vec::new();
    let pieces: Vec<String> = if set_up.arrangement.len() == 6 {
        set_up
            .arrangement
            .iter()
            .enumerate()
            .map(|(position, piece)| format!("{piece} in the {}", compass(position)))
            .collect()
    } else {
        set_up.arrangement.clone()
    };
    if !pieces.is_empty() {
        sentences.push(format!(
            "The land pieces are laid out: {}.",
            and_list(&pieces)
        ));
    }
    // Largest first, as the scoring ranks them.
    let kinds = [
        pb::SettlementKind::City as i32,
        pb::SettlementKind::Town as i32,
        pb::SettlementKind::Village as i32,
        pb::SettlementKind::Hamlet as i32,
    ];
    let of_kind = |kind: i32| -> Vec<String> {
        set_up
            .settlements
            .iter()
            .filter(|site| site.kind == kind)
            .map(|site| place(site.hex.as_ref()))
            .collect()
    };
    let mut counts: Vec<String> = kinds
        .iter()
        .map(|kind| {
            let n = of_kind(*kind).len() as u32;
            count(n, kind_word(*kind), kind_plural(*kind))
        })
        .collect();
    let others = set_up
        .settlements
        .iter()
        .filter(|site| !kinds.contains(&site.kind))
        .count() as u32;
    if others > 0 {
        counts.push(count(others, "other settlement", "other settlements"));
    }
    sentences.push(format!(
        "{} are turned face up: {}.",
        capitalized_count(set_up.settlements.len() as u32),
        and_list(&counts)
    ));
    for kind in kinds {
        let places = of_kind(kind);
        match places.len() {
            0 => {}
            1 => sentences.push(format!("The {} is at {}.", kind_word(kind), places[0])),
            _ => sentences.push(format!(
                "The {} are at {}.",
                kind_plural(kind),
                and_list(&places)
            )),
        }
    }
    sentences.push(format!(
        "{} is drawn to start.",
        names.seat(set_up.start_seat)
    ));
    if !set_up.placement_order.is_empty() {
        sentences.push(format!(
            "Workshops are placed in the order {}, and {} takes the first turn.",
            names.list(&set_up.placement_order),
            names.seat(set_up.first_turn_seat)
        ));
    } else {
        sentences.push(format!(
            "{} takes the first turn.",
            names.seat(set_up.first_turn_seat)
        ));
    }
    sentences.join(" ")
}

/// "The 19 settlement tiles", "The 1 settlement tile", "No settlement tiles".
fn capitalized_count(n: u32) -> String {
    match n {
        0 => "No settlement tiles".to_owned(),
        1 => "The one settlement tile".to_owned(),
        n => format!("The {n} settlement tiles"),
    }
}

/// A turn's start with its income, which the cap of 10 may cut.
fn turn_started_text(started: &pb::TurnStarted, names: &Names) -> String {
    let name = names.seat(started.seat);
    let opening = format!("{name} starts their turn in round {}", started.round);
    if started.income == 0 {
        format!(
            "{opening} and gains no resources: they already hold {}, the most the track allows.",
            started.resources
        )
    } else if started.resources >= 10 && started.income < 6 {
        format!(
            "{opening} and gains {}, reaching the track's limit of {}.",
            resources(started.income),
            started.resources
        )
    } else {
        format!(
            "{opening} and gains {}, for {} in all.",
            resources(started.income),
            started.resources
        )
    }
}

/// A road: from its hub over its tiles to its settlement, what it cost and what it left.
fn road_built_text(road: &pb::RoadBuilt, names: &Names) -> String {
    let name = names.seat(road.seat);
    let over = if road.tiles.is_empty() {
        String::new()
    } else {
        format!(" over {}", tiles_text(&road.tiles))
    };
    let target = settlement(road.target_kind, road.target.as_ref());
    let merchant = if road.merchant_placed {
        " and places a merchant there.".to_owned()
    } else {
        format!(
            ", which already holds their opponent's merchant, so {name} connects without placing \
             one."
        )
    };
    let left = match road.resources {
        0 => "none".to_owned(),
        n => n.to_string(),
    };
    format!(
        "{name} builds a road from {}{over} to {target}{merchant} It costs {}, leaving {left}.",
        place(road.hub.as_ref()),
        resources(road.cost),
    )
}

/// The end: why, everyone's gold and resources left, how gold is earned, and who wins.
fn game_ended_text(ended: &pb::GameEnded, names: &Names) -> String {
    let mut sentences = Vec::new();
    sentences.push(match pb::EndReason::try_from(ended.reason) {
        Ok(pb::EndReason::CannotReach) => match ended.trigger_seat {
            Some(seat) => format!(
                "{} cannot connect any new settlement at the start of their turn, so the game \
                 ends.",
                names.seat(seat)
            ),
            None => "A player cannot connect any new settlement, so the game ends.".to_owned(),
        },
        Ok(pb::EndReason::AllSettlementsOccupied) => {
            "Every settlement now holds a merchant, so the game ends.".to_owned()
        }
        Ok(pb::EndReason::NoRoadsLeft) => {
            "Neither player can build another road, even with 10 resources, so the game ends."
                .to_owned()
        }
        Ok(pb::EndReason::Stall) => {
            "Two full rounds pass without a road built, so the game ends.".to_owned()
        }
        _ => "The game ends.".to_owned(),
    });
    let scores: Vec<String> = ended
        .gold
        .iter()
        .enumerate()
        .map(|(seat, amount)| {
            let left = match ended.resources.get(seat) {
                Some(left) => format!(" with {} left", resources(*left)),
                None => String::new(),
            };
            format!("{} scores {}{left}", names.seat(seat as u32), gold(*amount))
        })
        .collect();
    if !scores.is_empty() {
        sentences.push(format!("{}.", scores.join("; ")));
    }
    sentences.push(if ended.gold.len() == 2 {
        "Each merchant earns its settlement's full value: 5 gold in a city, 4 in a town, 3 in a \
         village and 2 in a hamlet."
            .to_owned()
    } else {
        "Each merchant earns its settlement's value, 5 gold in a city, 4 in a town, 3 in a village \
         and 2 in a hamlet, less 1 for every other merchant there."
            .to_owned()
    });
    sentences.push(winners_text(ended, names));
    sentences.join(" ")
}

/// Who wins, and whether the resources left broke a tie on gold.
fn winners_text(ended: &pb::GameEnded, names: &Names) -> String {
    let gold_of = |seat: u32| ended.gold.get(seat as usize).copied();
    let left_of = |seat: u32| ended.resources.get(seat as usize).copied();
    match ended.winners.as_slice() {
        [] => "Nobody wins.".to_owned(),
        [winner] => {
            let Some(best) = gold_of(*winner) else {
                return format!("{} wins.", names.seat(*winner));
            };
            let level: Vec<u32> = (0..ended.gold.len() as u32)
                .filter(|seat| gold_of(*seat) == Some(best))
                .collect();
            if level.len() <= 1 {
                format!("{} wins with {}.", names.seat(*winner), gold(best))
            } else {
                format!(
                    "{} tie on {}, and {} wins with the most resources left.",
                    names.list(&level),
                    gold(best),
                    names.seat(*winner)
                )
            }
        }
        winners => {
            let first = winners[0];
            match (gold_of(first), left_of(first)) {
                (Some(best), Some(left)) => format!(
                    "{} share the win, level on {} and on {} left.",
                    names.list(winners),
                    gold(best),
                    resources(left)
                ),
                _ => format!("{} share the win.", names.list(winners)),
            }
        }
    }
}

/// A road's button: from its hub over its tiles to its settlement, with its cost.
fn road_label(road: &pb::BuildRoad, view: &pb::View, names: &Names) -> String {
    let cell = |hex: Option<&pb::Hex>| view.board.iter().find(|cell| same(cell.hex.as_ref(), hex));
    let site = |hex: Option<&pb::Hex>| {
        view.settlements
            .iter()
            .find(|site| same(site.hex.as_ref(), hex))
    };
    let hub = match (cell(road.hub.as_ref()), site(road.hub.as_ref())) {
        (
            Some(pb::BoardHex {
                workshop: Some(_), ..
            }),
            _,
        ) => {
            format!("your workshop at {}", place(road.hub.as_ref()))
        }
        (_, Some(found)) => settlement(found.kind, road.hub.as_ref()),
        _ => place(road.hub.as_ref()),
    };
    let via: Vec<String> = road.tiles.iter().map(|hex| place(Some(hex))).collect();
    let via = if via.is_empty() {
        String::new()
    } else {
        format!(" via {}", and_list(&via))
    };
    let (target, others) = match site(road.target.as_ref()) {
        Some(found) => (
            settlement(found.kind, road.target.as_ref()),
            match found.merchants.len() {
                0 => String::new(),
                1 => format!(", where {} has a merchant,", names.list(&found.merchants)),
                _ => format!(", where {} have merchants,", names.list(&found.merchants)),
            },
        ),
        None => (
            format!("the settlement at {}", place(road.target.as_ref())),
            String::new(),
        ),
    };
    let cost: Option<u32> = road
        .tiles
        .iter()
        .map(|hex| cell(Some(hex)).and_then(|cell| tile_cost(cell.terrain)))
        .sum();
    let cost = match cost {
        Some(cost) => format!(" for {}", resources(cost)),
        None => String::new(),
    };
    format!("Build a road from {hub}{via} to {target}{others}{cost}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::{Engine, LegalAction, Seed, Viewer};

    fn hex(q: i32, r: i32) -> Option<pb::Hex> {
        Some(pb::Hex { q, r })
    }

    fn names() -> Names {
        let players: Vec<crate::proto::v1::Player> = ["Ann", "Ben", "Cleo"]
            .iter()
            .enumerate()
            .map(|(seat, name)| crate::proto::v1::Player {
                seat: seat as u32,
                display_name: (*name).to_owned(),
                external_id: String::new(),
            })
            .collect();
        Names::new(3, &players, |_| None)
    }

    fn text(kind: Kind) -> String {
        LaStrada::event_text(&pb::Event { kind: Some(kind) }, &names()).expect("a sentence")
    }

    fn road_tile(q: i32, r: i32, terrain: pb::Terrain) -> pb::RoadTile {
        pb::RoadTile {
            hex: hex(q, r),
            owner: 0,
            terrain: terrain as i32,
            edge_in: 0,
            edge_out: 3,
            face: pb::Face::Straight as i32,
        }
    }

    #[test]
    fn workshops_and_turns() {
        assert_eq!(
            text(Kind::WorkshopPlaced(pb::WorkshopPlaced {
                seat: 1,
                hex: hex(1, -2)
            })),
            "Ben puts a workshop on (1, \u{2212}2)."
        );
        assert_eq!(
            text(Kind::TurnStarted(pb::TurnStarted {
                seat: 0,
                round: 3,
                income: 6,
                resources: 8
            })),
            "Ann starts their turn in round 3 and gains 6 resources, for 8 in all."
        );
        assert_eq!(
            text(Kind::TurnStarted(pb::TurnStarted {
                seat: 0,
                round: 4,
                income: 2,
                resources: 10
            })),
            "Ann starts their turn in round 4 and gains 2 resources, reaching the track's limit \
             of 10."
        );
        assert_eq!(
            text(Kind::TurnStarted(pb::TurnStarted {
                seat: 2,
                round: 5,
                income: 0,
                resources: 10
            })),
            "Cleo starts their turn in round 5 and gains no resources: they already hold 10, the \
             most the track allows."
        );
        assert_eq!(
            text(Kind::TurnEnded(pb::TurnEnded {
                seat: 2,
                resources: 0
            })),
            "Cleo ends their turn, keeping no resources."
        );
        assert_eq!(
            text(Kind::TurnEnded(pb::TurnEnded {
                seat: 1,
                resources: 1
            })),
            "Ben ends their turn, keeping 1 resource."
        );
    }

    #[test]
    fn roads_say_where_they_run_and_what_they_cost() {
        assert_eq!(
            text(Kind::RoadBuilt(pb::RoadBuilt {
                seat: 0,
                hub: hex(1, -2),
                tiles: vec![road_tile(0, -2, pb::Terrain::Plains)],
                target: hex(-1, -2),
                target_kind: pb::SettlementKind::Village as i32,
                merchant_placed: true,
                cost: 2,
                resources: 4,
            })),
            "Ann builds a road from (1, \u{2212}2) over the plains at (0, \u{2212}2) to the \
             village at (\u{2212}1, \u{2212}2) and places a merchant there. It costs 2 resources, \
             leaving 4."
        );
        assert_eq!(
            text(Kind::RoadBuilt(pb::RoadBuilt {
                seat: 1,
                hub: hex(3, -1),
                tiles: vec![
                    road_tile(3, 0, pb::Terrain::Forest),
                    road_tile(2, 1, pb::Terrain::Hill),
                ],
                target: hex(3, 2),
                target_kind: pb::SettlementKind::City as i32,
                merchant_placed: false,
                cost: 7,
                resources: 0,
            })),
            "Ben builds a road from (3, \u{2212}1) over the forest at (3, 0) and the hill at \
             (2, 1) to the city at (3, 2), which already holds their opponent's merchant, so Ben \
             connects without placing one. It costs 7 resources, leaving none."
        );
        assert_eq!(
            text(Kind::RoadBuilt(pb::RoadBuilt {
                seat: 2,
                hub: hex(-7, 7),
                tiles: vec![
                    road_tile(-6, 6, pb::Terrain::Plains),
                    road_tile(-6, 5, pb::Terrain::Plains),
                    road_tile(-6, 4, pb::Terrain::Forest),
                ],
                target: hex(-5, 3),
                target_kind: pb::SettlementKind::Hamlet as i32,
                merchant_placed: true,
                cost: 7,
                resources: 3,
            })),
            "Cleo builds a road from (\u{2212}7, 7) over the plains at (\u{2212}6, 6) and \
             (\u{2212}6, 5) and the forest at (\u{2212}6, 4) to the hamlet at (\u{2212}5, 3) \
             and places a merchant there. It costs 7 resources, leaving 3."
        );
    }

    #[test]
    fn the_opening_lays_out_the_board() {
        let site = |q, r, kind: pb::SettlementKind| pb::Settlement {
            hex: hex(q, r),
            kind: kind as i32,
            merchants: Vec::new(),
            visitors: Vec::new(),
        };
        assert_eq!(
            text(Kind::GameSetUp(pb::GameSetUp {
                arrangement: ["C", "A", "F", "B", "E", "D"].map(str::to_owned).to_vec(),
                settlements: vec![
                    site(0, 0, pb::SettlementKind::City),
                    site(3, -1, pb::SettlementKind::Town),
                    site(-2, 3, pb::SettlementKind::Town),
                    site(1, 5, pb::SettlementKind::Hamlet),
                ],
                start_seat: 1,
                placement_order: vec![1, 0, 1, 0],
                first_turn_seat: 0,
            })),
            "The land pieces are laid out: C in the north-east, A in the north, F in the \
             north-west, B in the south-west, E in the south and D in the south-east. The 4 \
             settlement tiles are turned face up: 1 city, 2 towns, no villages and 1 hamlet. The \
             city is at (0, 0). The towns are at (3, \u{2212}1) and (\u{2212}2, 3). The hamlet is \
             at (1, 5). Ben is drawn to start. Workshops are placed in the order Ben, Ann, Ben \
             and Ann, and Ann takes the first turn."
        );
    }

    #[test]
    fn the_end_sums_up() {
        assert_eq!(
            text(Kind::GameEnded(pb::GameEnded {
                reason: pb::EndReason::CannotReach as i32,
                trigger_seat: Some(2),
                gold: vec![12, 9, 0],
                resources: vec![3, 1, 0],
                winners: vec![0],
            })),
            "Cleo cannot connect any new settlement at the start of their turn, so the game ends. \
             Ann scores 12 gold with 3 resources left; Ben scores 9 gold with 1 resource left; \
             Cleo scores no gold with no resources left. Each merchant earns its settlement's \
             value, 5 gold in a city, 4 in a town, 3 in a village and 2 in a hamlet, less 1 for \
             every other merchant there. Ann wins with 12 gold."
        );
        assert_eq!(
            text(Kind::GameEnded(pb::GameEnded {
                reason: pb::EndReason::AllSettlementsOccupied as i32,
                trigger_seat: None,
                gold: vec![30, 30],
                resources: vec![2, 5],
                winners: vec![1],
            })),
            "Every settlement now holds a merchant, so the game ends. Ann scores 30 gold with \
             2 resources left; Ben scores 30 gold with 5 resources left. Each merchant earns its \
             settlement's full value: 5 gold in a city, 4 in a town, 3 in a village and 2 in a \
             hamlet. Ann and Ben tie on 30 gold, and Ben wins with the most resources left."
        );
        assert_eq!(
            text(Kind::GameEnded(pb::GameEnded {
                reason: pb::EndReason::Stall as i32,
                trigger_seat: None,
                gold: vec![7, 7, 4],
                resources: vec![10, 10, 10],
                winners: vec![0, 1],
            })),
            "Two full rounds pass without a road built, so the game ends. Ann scores 7 gold with \
             10 resources left; Ben scores 7 gold with 10 resources left; Cleo scores 4 gold with \
             10 resources left. Each merchant earns its settlement's value, 5 gold in a city, 4 \
             in a town, 3 in a village and 2 in a hamlet, less 1 for every other merchant there. \
             Ann and Ben share the win, level on 7 gold and on 10 resources left."
        );
    }

    fn exact(legal: Vec<LegalAction<pb::Action>>) -> Vec<pb::Action> {
        legal
            .into_iter()
            .map(|entry| match entry {
                LegalAction::Exact(action) => action,
                other => panic!("an exact action, not {other:?}"),
            })
            .collect()
    }

    #[test]
    fn labels_name_places_and_costs() {
        let config = LaStrada::config_for(2);
        let mut game = LaStrada::setup(&config, &Seed::from_u64(1)).expect("setup");
        let names = Names::numbered(2);
        let labels = |game: &LaStrada| -> Vec<String> {
            let seat = game.to_act().expect("a seat to act");
            let view = game.view(Viewer::Seat(seat));
            exact(game.legal_actions(seat))
                .iter()
                .map(|action| LaStrada::choice_label(action, &view, &names))
                .collect()
        };
        let placing = labels(&game);
        assert_eq!(placing[0], "Place a workshop on (1, \u{2212}7)");
        assert_eq!(placing[39], "Place a workshop on (\u{2212}7, 0)");
        // Workshops go down, then the first turn lists roads and ending the turn.
        while let Some(seat) = game.to_act() {
            let view = game.view(Viewer::Seat(seat));
            if view.phase == pb::Phase::Playing as i32 {
                break;
            }
            let action = game.default_action().expect("a workshop");
            game.apply(seat, &action).expect("legal");
        }
        let playing = labels(&game);
        assert_eq!(
            playing,
            [
                "Build a road from your workshop at (3, \u{2212}7) via (2, \u{2212}6) to the \
                 town at (2, \u{2212}5) for 2 resources",
                "Build a road from your workshop at (3, \u{2212}7) via (3, \u{2212}6) to the \
                 town at (2, \u{2212}5) for 3 resources",
                "Build a road from your workshop at (3, \u{2212}7) via (3, \u{2212}6) and (4, \
                 \u{2212}6) to the town at (5, \u{2212}6) for 6 resources",
                "Build a road from your workshop at (4, \u{2212}7) via (5, \u{2212}7) to the \
                 town at (5, \u{2212}6) for 4 resources",
                "Build a road from your workshop at (4, \u{2212}7) via (3, \u{2212}6) to the \
                 town at (2, \u{2212}5) for 3 resources",
                "Build a road from your workshop at (4, \u{2212}7) via (4, \u{2212}6) and (3, \
                 \u{2212}5) to the town at (2, \u{2212}5) for 5 resources",
                "Build a road from your workshop at (4, \u{2212}7) via (4, \u{2212}6) to the \
                 town at (5, \u{2212}6) for 3 resources",
                "End the turn without building",
            ]
        );
        // A settlement reached is a hub; the turn's end no longer says "without building".
        let seat = game.to_act().expect("a seat to act");
        let first = exact(game.legal_actions(seat)).remove(0);
        game.apply(seat, &first).expect("legal");
        let built = labels(&game);
        assert_eq!(
            built[3],
            "Build a road from the town at (2, \u{2212}5) via (2, \u{2212}4) to the hamlet at \
             (2, \u{2212}3) for 2 resources"
        );
        assert_eq!(built.last().map(String::as_str), Some("End the turn"));
        // A merchant already at the target is named.
        let seat = game.to_act().expect("a seat to act");
        let mut view = game.view(Viewer::Seat(seat));
        let town = view
            .settlements
            .iter_mut()
            .find(|site| site.hex == hex(5, -6))
            .expect("the town");
        town.merchants.push(1 - seat);
        let road = exact(game.legal_actions(seat)).remove(1);
        assert_eq!(
            LaStrada::choice_label(&road, &view, &names),
            format!(
                "Build a road from your workshop at (4, \u{2212}7) via (4, \u{2212}6) to the \
                 town at (5, \u{2212}6), where Seat {} has a merchant, for 3 resources",
                1 - seat
            )
        );
    }
}
