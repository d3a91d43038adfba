//! La Strada's tests by topic, with the shared fixtures here: hexes and actions by coordinates,
//! the rulebook example's fixed map, event finders, and replay helpers. `apply_ok`,
//! `assert_illegal` and `encode` come from `games::common::testing`.

mod data;
mod defaults;
mod examples;
mod hidden;
mod illegal;
mod random_play;
mod recorded_games;
mod reference_search;
mod roads;
mod scoring;
mod setup;
mod turns;

use std::collections::BTreeSet;

use super::data::{
    Axial, HexId, MAP, MapData, POSITIONS, STANDIN_MAP_JSON, SettlementKind, Terrain, bundled_map,
};
use super::rules::{INCOME, RESOURCE_CAP};
use super::*;
use crate::games::common::random_play::{Checks, RandomGame, play};
use crate::games::common::testing::{apply_ok, assert_illegal, encode};
use crate::games::common::{GameRng, left_of};

fn hex(q: i32, r: i32) -> HexId {
    MAP.id_of(Axial::new(q, r)).expect("test hex on the board")
}

fn pb_hex(q: i32, r: i32) -> pb::Hex {
    pb::Hex { q, r }
}

fn road(hub: (i32, i32), tiles: &[(i32, i32)], target: (i32, i32)) -> pb::Action {
    pb::Action {
        kind: Some(pb::action::Kind::BuildRoad(pb::BuildRoad {
            hub: Some(pb_hex(hub.0, hub.1)),
            tiles: tiles.iter().map(|(q, r)| pb_hex(*q, *r)).collect(),
            target: Some(pb_hex(target.0, target.1)),
        })),
    }
}

fn workshop(q: i32, r: i32) -> pb::Action {
    pb::Action {
        kind: Some(pb::action::Kind::PlaceWorkshop(pb::PlaceWorkshop {
            hex: Some(pb_hex(q, r)),
        })),
    }
}

fn end_turn() -> pb::Action {
    pb::Action {
        kind: Some(pb::action::Kind::EndTurn(pb::EndTurn {})),
    }
}

fn config(players: u32) -> pb::Config {
    pb::Config {
        players,
        ..pb::Config::default()
    }
}

fn options(players: u32) -> Options {
    Options::from_pb(&config(players)).expect("valid config")
}

/// Applies `action` and checks that a rejection left the state untouched.
fn try_apply(
    state: &mut LaStrada,
    seat: Seat,
    action: &pb::Action,
) -> Result<Vec<pb::Event>, ActionError> {
    let before = encode(state);
    let result = state.apply(seat, action);
    if result.is_err() {
        assert_eq!(encode(state), before, "a rejected action changed the state");
    }
    result
}

fn road_built(events: &[pb::Event]) -> &pb::RoadBuilt {
    events
        .iter()
        .find_map(|e| match &e.kind {
            Some(pb::event::Kind::RoadBuilt(built)) => Some(built),
            _ => None,
        })
        .expect("a RoadBuilt event")
}

fn game_ended(events: &[pb::Event]) -> Option<&pb::GameEnded> {
    events.iter().find_map(|e| match &e.kind {
        Some(pb::event::Kind::GameEnded(ended)) => Some(ended),
        _ => None,
    })
}

fn turn_started(events: &[pb::Event]) -> Option<&pb::TurnStarted> {
    events.iter().find_map(|e| match &e.kind {
        Some(pb::event::Kind::TurnStarted(started)) => Some(started),
        _ => None,
    })
}

/// The settlement kinds in site order for `arrangement`, with `fixed` kinds at given hexes and
/// the rest of the 19 tiles in a fixed order.
fn kinds_with(
    arrangement: &[usize; POSITIONS],
    fixed: &[((i32, i32), SettlementKind)],
) -> Vec<SettlementKind> {
    let (terrain, _) = MAP.lay_out(arrangement);
    let mut pool = MAP.settlement_tiles.clone();
    for (_, kind) in fixed {
        let index = pool.iter().position(|k| k == kind).expect("kind available");
        pool.remove(index);
    }
    let mut rest = pool.into_iter();
    (0..terrain.len())
        .filter(|h| terrain[*h] == Terrain::Site)
        .map(|h| {
            let axial = MAP.hex(h as HexId);
            fixed
                .iter()
                .find(|((q, r), _)| Axial::new(*q, *r) == axial)
                .map(|(_, kind)| *kind)
                .unwrap_or_else(|| rest.next().expect("19 tiles"))
        })
        .collect()
}

/// Pieces A, B, C, D, F, E in positions 0..5: the fixed map of the rulebook example.
const EXAMPLE_ARRANGEMENT: [usize; POSITIONS] = [0, 1, 2, 3, 5, 4];
const GREY: Seat = 0;
const BLACK: Seat = 1;
const WHITE: Seat = 2;
const GREY_WORKSHOP: (i32, i32) = (-4, 7);
const BLACK_WORKSHOP: (i32, i32) = (-6, 1);
const WHITE_WORKSHOP: (i32, i32) = (4, -4);
const TOWN: (i32, i32) = (-2, 5);
const CITY: (i32, i32) = (-3, 4);
const HAMLET_WEST: (i32, i32) = (-5, 6);
const HAMLET_NORTH: (i32, i32) = (-4, 2);
const BLACK_CITY: (i32, i32) = (-6, 3);

/// A 3-player game on the example map with grey as start player, before workshop placement.
fn example_setup_with(options: Options) -> LaStrada {
    use SettlementKind::*;
    let kinds = kinds_with(
        &EXAMPLE_ARRANGEMENT,
        &[
            (TOWN, Town),
            (CITY, City),
            (HAMLET_WEST, Hamlet),
            (HAMLET_NORTH, Hamlet),
            (BLACK_CITY, City),
        ],
    );
    LaStrada::with_layout(
        options,
        GameRng::from_seed(&Seed::from_u64(1)),
        EXAMPLE_ARRANGEMENT,
        &kinds,
        GREY,
    )
}

/// The example game after workshop placement: grey to play its first turn.
fn example_game() -> LaStrada {
    let mut state = example_setup_with(options(3));
    apply_ok(
        &mut state,
        GREY,
        &workshop(GREY_WORKSHOP.0, GREY_WORKSHOP.1),
    );
    apply_ok(
        &mut state,
        BLACK,
        &workshop(BLACK_WORKSHOP.0, BLACK_WORKSHOP.1),
    );
    apply_ok(
        &mut state,
        WHITE,
        &workshop(WHITE_WORKSHOP.0, WHITE_WORKSHOP.1),
    );
    state
}

fn listed_roads(state: &LaStrada, seat: Seat) -> Vec<pb::Action> {
    state
        .legal_actions(seat)
        .into_iter()
        .filter_map(|a| match a {
            LegalAction::Exact(action)
                if matches!(action.kind, Some(pb::action::Kind::BuildRoad(_))) =>
            {
                Some(action)
            }
            _ => None,
        })
        .collect()
}

fn targets(actions: &[pb::Action]) -> BTreeSet<(i32, i32)> {
    actions
        .iter()
        .filter_map(|a| match &a.kind {
            Some(pb::action::Kind::BuildRoad(r)) => r.target.as_ref().map(|t| (t.q, t.r)),
            _ => None,
        })
        .collect()
}

/// Replays `game` and returns each applied action with the state before it and its events.
fn replay_steps(
    config: &pb::Config,
    seed: u64,
    game: &RandomGame<LaStrada>,
) -> Vec<(LaStrada, Seat, pb::Action, Vec<pb::Event>)> {
    let mut state = LaStrada::setup(config, &Seed::from_u64(seed)).expect("setup");
    let mut steps = Vec::new();
    for (seat, action) in &game.actions {
        let before = state.clone();
        let events = state.apply(*seat, action).expect("replay");
        steps.push((before, *seat, action.clone(), events));
    }
    steps
}

/// A road as the road-listing comparisons hold it: hub, tiles, target.
type RoadTriple = (HexId, Vec<HexId>, HexId);

/// `seat`'s legal roads within `budget` as [`RoadTriple`]s, in listing order.
fn road_triples(state: &LaStrada, seat: Seat, budget: u32) -> Vec<RoadTriple> {
    state
        .legal_roads(seat, budget)
        .into_iter()
        .map(|plan| (plan.hub, plan.tiles, plan.target))
        .collect()
}

/// The budgets the listing comparisons probe for `seat`: its own resources, one in between and
/// the cap the end tests use (spec §7, §9).
fn probe_budgets(state: &LaStrada, seat: Seat) -> [u32; 3] {
    [state.player(seat).resources, 6, RESOURCE_CAP]
}

/// Every curve rule (spec §5 rule 5, ruling A2) with every player count: the configs the road
/// listing tests walk.
fn curve_configs() -> impl Iterator<Item = pb::Config> {
    [pb::Curve::Gentle, pb::Curve::Sharp, pb::Curve::Both]
        .into_iter()
        .flat_map(|curve| {
            PLAYERS.map(move |players| pb::Config {
                players,
                curve: curve as i32,
                ..pb::Config::default()
            })
        })
}

/// Visits every position in the playing phase of the seeded random games `seeds` of `config`,
/// with the seat to act there and a label naming the game and step, replaying each game's
/// recorded actions (a visit may touch only the state's search cache); the replay must reach the
/// game's own final state. The shared walk of the tests that compare the road listing with a
/// reference.
fn for_each_playing_position(
    config: &pb::Config,
    seeds: std::ops::Range<u64>,
    mut visit: impl FnMut(&mut LaStrada, Seat, &str),
) {
    for seed in seeds {
        let game: RandomGame<LaStrada> =
            play(config, Seed::from_u64(seed), 5_000, Checks::NONE).expect("game ends");
        let mut state = LaStrada::setup(config, &Seed::from_u64(seed)).expect("setup");
        for (step, (seat, action)) in game.actions.iter().enumerate() {
            if matches!(state.phase, Phase::Playing { .. }) {
                visit(
                    &mut state,
                    *seat,
                    &format!("{config:?} seed {seed} step {step}"),
                );
            }
            state.apply(*seat, action).expect("replay");
        }
        assert_eq!(
            encode(&state),
            encode(&game.final_state),
            "{config:?} seed {seed}"
        );
    }
}
