use std::collections::BTreeSet;

use super::map::{
    Axial, HexId, MAP, MapData, POSITIONS, STANDIN_MAP_JSON, SettlementKind, Terrain,
};
use super::rules::{RESOURCE_CAP, RoadPlan};
use super::*;
use crate::games::common::random_play::{Checks, RandomGame, play};

// ----- Helpers -----

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
    Options::from_config(&config(players)).expect("valid config")
}

fn assert_illegal(result: Result<Vec<pb::Event>, ActionError>, rule: &str) {
    match result {
        Err(ActionError::Illegal {
            rule: cited,
            message,
        }) => {
            assert_eq!(cited, rule, "wrong rule cited ({message})");
        }
        other => panic!("expected an illegal-action error citing {rule}, got {other:?}"),
    }
}

/// Applies `action` and checks that a rejection left the state untouched.
fn try_apply(
    state: &mut LaStrada,
    seat: Seat,
    action: &pb::Action,
) -> Result<Vec<pb::Event>, ActionError> {
    let before = postcard::to_stdvec(state).expect("serializes");
    let result = state.apply(seat, action);
    if result.is_err() {
        assert_eq!(
            postcard::to_stdvec(state).expect("serializes"),
            before,
            "a rejected action changed the state"
        );
    }
    result
}

fn ok(state: &mut LaStrada, seat: Seat, action: &pb::Action) -> Vec<pb::Event> {
    let events =
        try_apply(state, seat, action).unwrap_or_else(|e| panic!("{action:?} rejected: {e}"));
    state.check_invariants().expect("invariants hold");
    events
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
    ok(
        &mut state,
        GREY,
        &workshop(GREY_WORKSHOP.0, GREY_WORKSHOP.1),
    );
    ok(
        &mut state,
        BLACK,
        &workshop(BLACK_WORKSHOP.0, BLACK_WORKSHOP.1),
    );
    ok(
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

// ----- The map data (spec §10) -----

#[test]
fn the_map_file_parses_and_is_consistent() {
    let map = MapData::parse(STANDIN_MAP_JSON).expect("stand-in parses");
    assert!(
        map.provisional,
        "the stand-in must stay labelled provisional"
    );
    assert!(map.name.contains("stand-in"));
    assert_eq!(map.radius, 7);
    assert_eq!(map.hexes.len(), 169);
    assert_eq!(map.pieces.len(), 6);
    assert_eq!(map.pieces[map.start_piece].name, "A");
    assert_eq!(map.centre, Terrain::Site);
    let count = |kind| map.settlement_tiles.iter().filter(|k| **k == kind).count();
    assert_eq!(
        [
            count(SettlementKind::City),
            count(SettlementKind::Town),
            count(SettlementKind::Village),
            count(SettlementKind::Hamlet)
        ],
        [4, 5, 5, 5]
    );
    assert_eq!(map.seating_for(2), ["North", "South"]);
    assert_eq!(map.seating_for(4), ["North", "East", "South", "West"]);
    for (id, axial) in map.hexes.iter().enumerate() {
        assert_eq!(map.id_of(*axial), Some(id as HexId));
        for d in 0..6 {
            if let Some(n) = map.neighbour(id as HexId, d) {
                assert_eq!(
                    map.neighbour(n, (d + 3) % 6),
                    Some(id as HexId),
                    "neighbours are symmetric"
                );
            }
        }
    }
    assert_eq!(map.id_of(Axial::new(8, 0)), None);
    assert_eq!(map.id_of(Axial::new(i32::MIN, i32::MAX)), None);
    // A broken file is refused, not half-loaded.
    let broken = STANDIN_MAP_JSON.replace("\"PPHPPFP\"", "\"PPHPPF\"");
    assert!(MapData::parse(&broken).is_err());
    let extra_site = STANDIN_MAP_JSON.replace("\"PPHPPFP\"", "\"PPHPPFC\"");
    assert!(MapData::parse(&extra_site).unwrap_err().contains("sites"));
}

#[test]
fn every_piece_has_the_spec_shape() {
    let expected = [
        ("A", [15, 6, 4]),
        ("B", [14, 7, 4]),
        ("C", [15, 6, 4]),
        ("D", [14, 7, 4]),
        ("E", [15, 6, 4]),
        ("F", [14, 7, 4]),
    ];
    for (piece, (name, counts)) in MAP.pieces.iter().zip(expected) {
        assert_eq!(piece.name, name);
        let cells: Vec<Terrain> = piece.rows.iter().flatten().copied().collect();
        assert_eq!(cells.len(), 28);
        let count = |t| cells.iter().filter(|c| **c == t).count();
        assert_eq!(
            [
                count(Terrain::Plains),
                count(Terrain::Forest),
                count(Terrain::Hill)
            ],
            counts,
            "piece {name}"
        );
        assert_eq!(count(Terrain::Site), 3, "piece {name}");
        for (row, cells) in piece.rows.iter().enumerate() {
            let n = row + 1;
            for (b, cell) in cells.iter().enumerate() {
                if *cell == Terrain::Site {
                    let a = n - b;
                    assert!(
                        a >= 2 && b >= 1 && (3..=6).contains(&n),
                        "piece {name}: site at a={a} b={b}"
                    );
                }
            }
        }
    }
}

fn permutations(items: Vec<usize>) -> Vec<Vec<usize>> {
    if items.len() <= 1 {
        return vec![items];
    }
    let mut all = Vec::new();
    for i in 0..items.len() {
        let mut rest = items.clone();
        let first = rest.remove(i);
        for mut tail in permutations(rest) {
            tail.insert(0, first);
            all.push(tail);
        }
    }
    all
}

#[test]
fn all_720_arrangements_keep_the_map_properties() {
    let arrangements = permutations((0..6).collect());
    assert_eq!(arrangements.len(), 720);
    for arrangement in arrangements {
        let arrangement: [usize; POSITIONS] = arrangement.try_into().expect("six");
        let (terrain, owner) = MAP.lay_out(&arrangement);
        let count = |t| terrain.iter().filter(|c| **c == t).count();
        assert_eq!(
            [
                count(Terrain::Plains),
                count(Terrain::Forest),
                count(Terrain::Hill),
                count(Terrain::Site)
            ],
            [87, 39, 24, 19],
            "{arrangement:?}"
        );
        // Every piece covers its 28 hexes (the start piece also the centre).
        for piece in 0..6 {
            let hexes = owner.iter().filter(|o| usize::from(**o) == piece).count();
            assert_eq!(hexes, if piece == MAP.start_piece { 29 } else { 28 });
        }
        let sites: Vec<Axial> = (0..terrain.len())
            .filter(|h| terrain[*h] == Terrain::Site)
            .map(|h| MAP.hex(h as HexId))
            .collect();
        let mut closest = i64::MAX;
        for (i, a) in sites.iter().enumerate() {
            for b in &sites[i + 1..] {
                closest = closest.min(a.distance(*b));
            }
        }
        assert_eq!(closest, 2, "{arrangement:?}: sites adjacent or too sparse");
        let mut rings = [0; 8];
        for site in &sites {
            rings[site.ring() as usize] += 1;
        }
        assert_eq!(rings, [1, 0, 0, 3, 3, 5, 7, 0], "{arrangement:?}");
    }
}

#[test]
fn the_default_arrangement_is_the_spec_table() {
    // Spec §10 "Default arrangement", row by row (terrain, then owning piece).
    let table = [
        ("PFPPHFPP", "CBBBBBBB"),
        ("PPPCPFCHP", "CCBBBBBBA"),
        ("FFHFPHPPHF", "CCCBBBBBAA"),
        ("HPPPPHCPFPP", "CCCCBBBBAAA"),
        ("PPCPPPFFHCFP", "CCCCCBBBAAAA"),
        ("FCPFCPPFPPPFH", "CCCCCCBBAAAAA"),
        ("PHPFFPHPPCFPCP", "CCCCCCCBAAAAAA"),
        ("PFPFPPPCPPFPHPP", "DDDDDDDAAAAAAAA"),
        ("HPCPHFPFFPPFFP", "DDDDDDEFFFFFFF"),
        ("PHFCPHPPFFCPP", "DDDDDEEFFFFFF"),
        ("FCFPPCPPCPHH", "DDDDEEEFFFFF"),
        ("PPHFPPHPPPP", "DDDEEEEFFFF"),
        ("PPHFPCPHCF", "DDEEEEEFFF"),
        ("FPFCFPPPP", "DEEEEEEFF"),
        ("HPPFPFPH", "EEEEEEEF"),
    ];
    let (terrain, owner) = MAP.lay_out(&MapData::default_arrangement());
    let letter = |t: Terrain| match t {
        Terrain::Plains => 'P',
        Terrain::Forest => 'F',
        Terrain::Hill => 'H',
        Terrain::Site => 'C',
    };
    let mut id = 0;
    for (row, (letters, pieces)) in table.iter().enumerate() {
        let r = row as i32 - 7;
        for (column, (l, p)) in letters.chars().zip(pieces.chars()).enumerate() {
            let q = (-7).max(-7 - r) + column as i32;
            assert_eq!(MAP.id_of(Axial::new(q, r)), Some(id));
            assert_eq!(letter(terrain[id as usize]), l, "({q}, {r})");
            assert_eq!(
                MAP.pieces[usize::from(owner[id as usize])].name,
                p.to_string(),
                "({q}, {r})"
            );
            id += 1;
        }
    }
    assert_eq!(id, 169);
}

#[test]
fn setup_arranges_the_pieces_and_settlements_at_random() {
    let mut start_positions = BTreeSet::new();
    let mut arrangements = BTreeSet::new();
    let mut city_sites = BTreeSet::new();
    let mut start_seats = BTreeSet::new();
    for seed in 0..200 {
        let state = LaStrada::setup(&config(4), &Seed::from_u64(seed)).expect("setup");
        let mut pieces = state.arrangement.to_vec();
        pieces.sort_unstable();
        assert_eq!(pieces, (0..6).collect::<Vec<_>>());
        start_positions.insert(state.arrangement.iter().position(|p| *p == MAP.start_piece));
        arrangements.insert(state.arrangement);
        city_sites.extend(
            state
                .sites
                .iter()
                .enumerate()
                .filter(|(_, s)| s.kind == SettlementKind::City)
                .map(|(i, _)| i),
        );
        start_seats.insert(state.start_seat);
        state.check_invariants().expect("invariants after setup");
        assert_eq!(state.to_act(), Some(state.start_seat));
    }
    assert_eq!(
        start_positions.len(),
        6,
        "the start piece goes in every position"
    );
    assert!(
        arrangements.len() > 150,
        "arrangements vary: {}",
        arrangements.len()
    );
    assert_eq!(
        city_sites.len(),
        19,
        "cities land on every site slot over 200 games"
    );
    assert_eq!(start_seats.len(), 4);
    let a = LaStrada::setup(&config(3), &Seed::from_u64(9)).expect("setup");
    let b = LaStrada::setup(&config(3), &Seed::from_u64(9)).expect("setup");
    assert_eq!(
        postcard::to_stdvec(&a).expect("ser"),
        postcard::to_stdvec(&b).expect("ser")
    );
}

#[test]
fn config_is_validated_and_zero_means_default() {
    for players in [0, 1, 5] {
        assert!(LaStrada::setup(&config(players), &Seed::from_u64(0)).is_err());
    }
    let defaults = options(2);
    assert_eq!(defaults.curve, CurveRule::Gentle);
    assert_eq!(defaults.end_budget, EndBudgetRule::Cap);
    assert_eq!(defaults.workshop_spacing, WorkshopSpacingRule::OtherPlayers);
    assert!(!defaults.first_placer_starts);
    let bad = pb::Config {
        players: 3,
        curve: 9,
        ..pb::Config::default()
    };
    assert!(LaStrada::setup(&bad, &Seed::from_u64(0)).is_err());
    let bad = pb::Config {
        players: 3,
        end_budget: 7,
        ..pb::Config::default()
    };
    assert!(LaStrada::setup(&bad, &Seed::from_u64(0)).is_err());
    let all = pb::Config {
        players: 2,
        curve: pb::Curve::Both as i32,
        end_budget: pb::EndBudget::Current as i32,
        workshop_spacing: pb::WorkshopSpacing::All as i32,
        two_player_first_turn: pb::TwoPlayerFirstTurn::FirstPlacer as i32,
    };
    let options = Options::from_config(&all).expect("valid");
    assert_eq!(
        options,
        Options {
            players: 2,
            curve: CurveRule::Both,
            end_budget: EndBudgetRule::Current,
            workshop_spacing: WorkshopSpacingRule::All,
            first_placer_starts: true,
        }
    );
}

// ----- The rulebook's three-turn example (spec §14 seed), on a fixed map -----

#[test]
fn the_rulebook_three_turn_example() {
    let mut state = example_game();
    assert_eq!(state.to_act(), Some(GREY));
    assert_eq!(state.round(), 1);
    assert_eq!(state.player(GREY).resources, 6, "first turn: 6 resources");

    // Turn 1, grey: a straight hill tile to the town (4), then a curved plains tile to the city (2).
    let events = ok(&mut state, GREY, &road(GREY_WORKSHOP, &[(-3, 6)], TOWN));
    let built = road_built(&events);
    assert_eq!((built.cost, built.resources), (4, 2));
    assert_eq!(built.tiles[0].face, pb::Face::Straight as i32);
    assert_eq!(built.tiles[0].terrain, pb::Terrain::Hill as i32);
    assert_eq!(built.target_kind, pb::SettlementKind::Town as i32);
    assert!(built.merchant_placed);
    let events = ok(&mut state, GREY, &road(TOWN, &[(-3, 5)], CITY));
    let built = road_built(&events);
    assert_eq!((built.cost, built.resources), (2, 0));
    assert_eq!(built.tiles[0].face, pb::Face::Curve as i32);
    assert_eq!(state.player(GREY).merchants_left, 10);
    assert_eq!(state.player(GREY).supply, [17, 8, 4]);
    assert_eq!(
        state.legal_actions(GREY),
        vec![LegalAction::Exact(end_turn())],
        "nothing affordable at 0"
    );
    ok(&mut state, GREY, &end_turn());

    // Black connects the far city; the third player passes.
    assert_eq!(state.player(BLACK).resources, 6);
    ok(
        &mut state,
        BLACK,
        &road(BLACK_WORKSHOP, &[(-6, 2)], BLACK_CITY),
    );
    ok(&mut state, BLACK, &end_turn());
    ok(&mut state, WHITE, &end_turn());

    // Turn 2, grey: 6 resources, not enough to reach black's city this turn.
    assert_eq!(state.player(GREY).resources, 6);
    assert!(!targets(&listed_roads(&state, GREY)).contains(&BLACK_CITY));
    assert_eq!(state.gold()[BLACK as usize], 5, "black alone in the city");
    // Three plains tiles to the two hamlets, two merchants, all 6 resources.
    ok(
        &mut state,
        GREY,
        &road(GREY_WORKSHOP, &[(-4, 6)], HAMLET_WEST),
    );
    let events = ok(
        &mut state,
        GREY,
        &road(CITY, &[(-3, 3), (-3, 2)], HAMLET_NORTH),
    );
    assert_eq!(road_built(&events).resources, 0);
    assert_eq!(state.player(GREY).merchants_left, 8);
    assert_eq!(state.player(GREY).supply, [14, 8, 4]);
    ok(&mut state, GREY, &end_turn());

    // Black could run a road along the map edge to grey's western hamlet; it saves instead.
    let edge_road = road(BLACK_CITY, &[(-6, 4), (-6, 5), (-6, 6)], HAMLET_WEST);
    assert!(listed_roads(&state, BLACK).contains(&edge_road));
    ok(&mut state, BLACK, &end_turn());
    ok(&mut state, WHITE, &end_turn());

    // Turn 3, grey: black's city is now one forest tile (3) away, and also three plains tiles (6)
    // away along the edge. Both are listed; grey takes the detour to wall black off.
    let forest_road = road(HAMLET_NORTH, &[(-5, 2)], BLACK_CITY);
    let detour = road(HAMLET_WEST, &[(-6, 6), (-6, 5), (-6, 4)], BLACK_CITY);
    let listed = listed_roads(&state, GREY);
    assert!(listed.contains(&forest_road));
    assert!(listed.contains(&detour));
    let mut forest_state = state.clone();
    assert_eq!(
        road_built(&ok(&mut forest_state, GREY, &forest_road)).cost,
        3
    );
    let events = ok(&mut state, GREY, &detour);
    let built = road_built(&events);
    assert_eq!((built.cost, built.resources), (6, 0));
    assert_eq!(
        state
            .site_at(hex(BLACK_CITY.0, BLACK_CITY.1))
            .expect("site")
            .merchants,
        vec![BLACK, GREY]
    );
    // Grey will earn 4 there; black has lost 1 (5 → 4).
    let gold = state.gold();
    assert_eq!(gold[GREY as usize], 4 + 5 + 2 + 2 + 4);
    assert_eq!(gold[BLACK as usize], 4);
    ok(&mut state, GREY, &end_turn());
    // Black's turn 3: the edge is blocked.
    assert_eq!(state.to_act(), Some(BLACK));
    assert!(!listed_roads(&state, BLACK).contains(&edge_road));
    assert_illegal(try_apply(&mut state, BLACK, &edge_road), "§5.3");
}

// ----- Workshops (spec §3.5, §9) -----

#[test]
fn workshop_placement_rules() {
    let mut state = example_setup_with(options(3));
    // Not on forest, hill or a site; not out of turn; no road or end of turn yet.
    assert_illegal(try_apply(&mut state, GREY, &workshop(-5, 7)), "§3.5"); // forest
    assert_illegal(try_apply(&mut state, GREY, &workshop(-3, 6)), "§3.5"); // hill
    assert_illegal(
        try_apply(&mut state, GREY, &workshop(TOWN.0, TOWN.1)),
        "§3.5",
    );
    assert_illegal(try_apply(&mut state, GREY, &end_turn()), "§3.5");
    assert_illegal(
        try_apply(&mut state, GREY, &road(GREY_WORKSHOP, &[(-3, 6)], TOWN)),
        "§4",
    );
    assert!(matches!(
        try_apply(&mut state, BLACK, &workshop(0, 1)),
        Err(ActionError::NotYourTurn { .. })
    ));
    assert!(matches!(
        try_apply(&mut state, GREY, &workshop(0, 99)),
        Err(ActionError::Malformed(_))
    ));
    let listed = state.legal_actions(GREY);
    assert_eq!(
        listed.len(),
        87,
        "every plains hex is open to the first workshop"
    );
    ok(
        &mut state,
        GREY,
        &workshop(GREY_WORKSHOP.0, GREY_WORKSHOP.1),
    );
    // Black may not take the hex, nor a neighbour of grey's workshop; distance 2 is fine.
    assert_illegal(
        try_apply(
            &mut state,
            BLACK,
            &workshop(GREY_WORKSHOP.0, GREY_WORKSHOP.1),
        ),
        "§3.5",
    );
    assert_illegal(try_apply(&mut state, BLACK, &workshop(-4, 6)), "§3.5");
    let black_listing = state.legal_actions(BLACK);
    assert!(!black_listing.contains(&LegalAction::Exact(workshop(-4, 6))));
    assert!(black_listing.contains(&LegalAction::Exact(workshop(-4, 5))));
    ok(&mut state, BLACK, &workshop(-4, 5));
    ok(
        &mut state,
        WHITE,
        &workshop(WHITE_WORKSHOP.0, WHITE_WORKSHOP.1),
    );
    assert_eq!(state.to_act(), Some(GREY));
    assert_illegal(try_apply(&mut state, GREY, &workshop(0, 1)), "§3.5");
}

#[test]
fn two_player_placement_order_and_first_turn() {
    for (first_placer_starts, expected_first) in [(false, 1), (true, 0)] {
        let options = Options {
            first_placer_starts,
            ..options(2)
        };
        let kinds = MAP.settlement_tiles.clone();
        let rng = GameRng::from_seed(&Seed::from_u64(0));
        let mut state =
            LaStrada::with_layout(options, rng, MapData::default_arrangement(), &kinds, 0);
        // P1 P2 P1 P2 (spec §9), own workshops may be adjacent by default.
        assert_eq!(state.to_act(), Some(0));
        ok(&mut state, 0, &workshop(1, -2));
        assert_eq!(state.to_act(), Some(1));
        ok(&mut state, 1, &workshop(-3, 4));
        assert_eq!(state.to_act(), Some(0));
        ok(&mut state, 0, &workshop(1, -3));
        assert_eq!(state.to_act(), Some(1));
        ok(&mut state, 1, &workshop(-6, 4));
        assert_eq!(
            state.to_act(),
            Some(expected_first),
            "first turn (ruling A10)"
        );
        assert_eq!(state.player(expected_first).resources, 6);
        assert_eq!(state.player(1 - expected_first).resources, 0);
        assert_eq!(
            state.hubs(0),
            vec![hex(1, -2), hex(1, -3)],
            "both workshops are hubs"
        );
    }
    // Spacing option ALL: your own workshops must also be apart (ruling A7).
    let options = Options {
        workshop_spacing: WorkshopSpacingRule::All,
        ..options(2)
    };
    let rng = GameRng::from_seed(&Seed::from_u64(0));
    let mut state = LaStrada::with_layout(
        options,
        rng,
        MapData::default_arrangement(),
        &MAP.settlement_tiles,
        0,
    );
    ok(&mut state, 0, &workshop(1, -2));
    ok(&mut state, 1, &workshop(-3, 4));
    assert_illegal(try_apply(&mut state, 0, &workshop(1, -3)), "§3.5");
    ok(&mut state, 0, &workshop(0, -4));
}

// ----- Road geometry (spec §5 rule 5, §10) -----

#[test]
fn the_spec_example_road_is_a_straight_tile() {
    // Spec §10: workshop (1,-2), one plains tile at (0,-2) with ends E and W, reaches (-1,-2).
    let rng = GameRng::from_seed(&Seed::from_u64(0));
    let mut state = LaStrada::with_layout(
        options(2),
        rng,
        MapData::default_arrangement(),
        &MAP.settlement_tiles,
        0,
    );
    for (seat, (q, r)) in [(0, (1, -2)), (1, (-6, 4)), (0, (3, 4)), (1, (-6, -1))] {
        ok(&mut state, seat, &workshop(q, r));
    }
    let mut state0 = state.clone();
    state0.phase = Phase::Playing { seat: 0 };
    state0.players[0].resources = 6;
    let events = ok(&mut state0, 0, &road((1, -2), &[(0, -2)], (-1, -2)));
    let tile = &road_built(&events).tiles[0];
    assert_eq!(
        (tile.edge_in, tile.edge_out, tile.face),
        (0, 3, pb::Face::Straight as i32)
    );
    assert_eq!(road_built(&events).cost, 2);
    assert_eq!(
        state0.occupant(hex(0, -2)),
        Occupant::Tile(PlacedTile {
            owner: 0,
            edge_in: 0,
            edge_out: 3
        })
    );
}

/// A bare board (the default arrangement) with one workshop for seat 0 at `at`, in play.
fn bare_board(curve: CurveRule, at: (i32, i32)) -> LaStrada {
    let options = Options {
        curve,
        ..options(3)
    };
    let rng = GameRng::from_seed(&Seed::from_u64(0));
    let mut state = LaStrada::with_layout(
        options,
        rng,
        MapData::default_arrangement(),
        &MAP.settlement_tiles,
        0,
    );
    let hub = hex(at.0, at.1);
    state.occupant[hub as usize] = Occupant::Workshop(0);
    state.players[0].workshops.push(hub);
    state.phase = Phase::Playing { seat: 0 };
    state.players[0].resources = RESOURCE_CAP;
    state
}

#[test]
fn gentle_curves_reach_every_hex_at_distance_two_with_one_tile() {
    // Spec §5 "geometric consequences": from a hub, one tile reaches all 12 hexes at distance 2
    // (6 straight, 6 curved), and none at distance 1 or 3.
    let hub = hex(0, 1);
    let mut reached = BTreeSet::new();
    for first in 0..6 {
        let Some(tile) = MAP.neighbour(hub, first) else {
            continue;
        };
        for turn in CurveRule::Gentle.allowed_turns() {
            if let Some(end) = MAP.neighbour(tile, ((first + 3) % 6 + turn) % 6) {
                reached.insert(end);
            }
        }
    }
    assert_eq!(reached.len(), 12);
    assert!(
        reached
            .iter()
            .all(|h| MAP.hex(*h).distance(MAP.hex(hub)) == 2)
    );
    // The engine agrees, from every plains hex of the default board: the 1-tile roads reach
    // exactly the sites at distance 2 that share an empty neighbour with the hub.
    let mut one_tile_roads = 0;
    for plains in (0..MAP.hexes.len() as HexId)
        .filter(|h| bare_board(CurveRule::Gentle, (0, 1)).terrain(*h) == Terrain::Plains)
    {
        let axial = MAP.hex(plains);
        let state = bare_board(CurveRule::Gentle, (axial.q, axial.r));
        let listed: BTreeSet<HexId> = state
            .legal_roads(0, RESOURCE_CAP)
            .into_iter()
            .filter(|p| p.tiles.len() == 1)
            .map(|p| p.target)
            .collect();
        let expected: BTreeSet<HexId> = state
            .sites()
            .iter()
            .map(|s| s.hex)
            .filter(|site| MAP.hex(*site).distance(axial) == 2)
            .filter(|site| {
                (0..6).any(|d| {
                    MAP.neighbour(plains, d).is_some_and(|middle| {
                        state.site_at(middle).is_none()
                            && (0..6).any(|e| MAP.neighbour(middle, e) == Some(*site))
                    })
                })
            })
            .collect();
        assert_eq!(listed, expected, "hub {axial:?}");
        one_tile_roads += listed.len();
    }
    assert!(
        one_tile_roads > 50,
        "only {one_tile_roads} one-tile roads checked"
    );
}

#[test]
fn an_adjacent_settlement_needs_a_loop_under_gentle_and_one_tile_under_sharp() {
    // Workshop (1,0) next to the centre site (0,0).
    let workshop_hex = (1, 0);
    let centre = hex(0, 0);
    let shortest = |curve| {
        bare_board(curve, workshop_hex)
            .legal_roads(0, RESOURCE_CAP)
            .into_iter()
            .filter(|p| p.target == centre)
            .map(|p| p.tiles.len())
            .min()
    };
    let gentle = shortest(CurveRule::Gentle).expect("reachable by a loop");
    assert!(
        gentle >= 4,
        "gentle needs a loop of at least 4 tiles, found {gentle}"
    );
    assert_eq!(shortest(CurveRule::Sharp), Some(1));
    assert_eq!(shortest(CurveRule::Both), Some(1));
}

#[test]
fn curve_options_decide_which_turns_a_tile_makes() {
    // W(-4,7) → (-4,6) → (-5,7) → hamlet (-5,6): two sharp 120° turns.
    let zigzag = road(GREY_WORKSHOP, &[(-4, 6), (-5, 7)], HAMLET_WEST);
    // W → (-4,6) → hamlet: one gentle curve.
    let gentle = road(GREY_WORKSHOP, &[(-4, 6)], HAMLET_WEST);
    // W → hill → town: straight.
    let straight = road(GREY_WORKSHOP, &[(-3, 6)], TOWN);
    for (curve, zigzag_ok, gentle_ok) in [
        (CurveRule::Gentle, false, true),
        (CurveRule::Sharp, true, false),
        (CurveRule::Both, true, true),
    ] {
        let mut base = example_setup_with(Options {
            curve,
            ..options(3)
        });
        for (seat, (q, r)) in [
            (GREY, GREY_WORKSHOP),
            (BLACK, BLACK_WORKSHOP),
            (WHITE, WHITE_WORKSHOP),
        ] {
            ok(&mut base, seat, &workshop(q, r));
        }
        for (action, legal) in [
            (&zigzag, zigzag_ok),
            (&gentle, gentle_ok),
            (&straight, true),
        ] {
            let mut state = base.clone();
            let listed = listed_roads(&state, GREY).contains(action);
            assert_eq!(listed, legal, "{curve:?}: listing of {action:?}");
            if legal {
                ok(&mut state, GREY, action);
            } else {
                assert_illegal(try_apply(&mut state, GREY, action), "§5.5");
            }
        }
    }
}

// ----- Illegal roads, each rule named (spec §5) -----

#[test]
fn illegal_roads_are_rejected_with_the_rule_named() {
    let mut state = example_game();
    let g = GREY;
    // §5.1: the town is not yet a hub.
    assert_illegal(
        try_apply(&mut state, g, &road(TOWN, &[(-3, 5)], CITY)),
        "§5.1",
    );
    // Ruling A4: at least one tile.
    assert_illegal(
        try_apply(&mut state, g, &road(GREY_WORKSHOP, &[], TOWN)),
        "§12 A4",
    );
    // §5.2: the target must be a settlement, never a workshop.
    assert_illegal(
        try_apply(&mut state, g, &road(GREY_WORKSHOP, &[(-4, 6)], (-4, 5))),
        "§5.2",
    );
    assert_illegal(
        try_apply(
            &mut state,
            g,
            &road(GREY_WORKSHOP, &[(-3, 6)], BLACK_WORKSHOP),
        ),
        "§5.2",
    );
    // §5.3: no tile on a settlement, a workshop, a road tile; no hex twice.
    assert_illegal(
        try_apply(&mut state, g, &road(GREY_WORKSHOP, &[(-3, 6), TOWN], CITY)),
        "§5.3",
    );
    assert_illegal(
        try_apply(&mut state, g, &road(GREY_WORKSHOP, &[BLACK_WORKSHOP], CITY)),
        "§5.3",
    );
    assert_illegal(
        try_apply(
            &mut state,
            g,
            &road(GREY_WORKSHOP, &[(-4, 6), (-4, 6)], HAMLET_WEST),
        ),
        "§5.3",
    );
    // §5.4: the road must be continuous.
    assert_illegal(
        try_apply(&mut state, g, &road(GREY_WORKSHOP, &[(-3, 5)], CITY)),
        "§5.4",
    );
    assert_illegal(
        try_apply(&mut state, g, &road(GREY_WORKSHOP, &[(-4, 6)], CITY)),
        "§5.4",
    );
    // §5.5: no sharp turn under the gentle rule.
    assert_illegal(
        try_apply(
            &mut state,
            g,
            &road(GREY_WORKSHOP, &[(-4, 6), (-5, 7)], HAMLET_WEST),
        ),
        "§5.5",
    );
    // §5.6: tiles of the hex's own terrain from the supply.
    let mut no_hills = state.clone();
    no_hills.players[g as usize].supply[2] = 0;
    assert_illegal(
        try_apply(&mut no_hills, g, &road(GREY_WORKSHOP, &[(-3, 6)], TOWN)),
        "§5.6",
    );
    // Build the town (4 of 6 resources).
    ok(&mut state, g, &road(GREY_WORKSHOP, &[(-3, 6)], TOWN));
    // §5.7: the forest tile (3) is more than the 2 resources left.
    assert_illegal(
        try_apply(&mut state, g, &road(GREY_WORKSHOP, &[(-5, 7)], HAMLET_WEST)),
        "§5.7",
    );
    // §5.3: the hill hex now holds grey's own road: roads never merge.
    assert_illegal(
        try_apply(
            &mut state,
            g,
            &road(GREY_WORKSHOP, &[(-3, 6), (-2, 6)], CITY),
        ),
        "§5.3",
    );
    // §5.2: not back to the hub, not to a settlement already connected (several roads per turn,
    // but each to a new settlement).
    assert_illegal(
        try_apply(&mut state, g, &road(TOWN, &[(-3, 5)], TOWN)),
        "§5.2",
    );
    assert_illegal(
        try_apply(
            &mut state,
            g,
            &road(GREY_WORKSHOP, &[(-4, 6), (-4, 5)], TOWN),
        ),
        "§5.2",
    );
    // §5.2: a merchant is needed for a 3-4 player connection.
    let mut no_merchants = state.clone();
    no_merchants.players[g as usize].merchants_left = 0;
    assert_illegal(
        try_apply(&mut no_merchants, g, &road(TOWN, &[(-3, 5)], CITY)),
        "§5.2",
    );
    assert!(listed_roads(&no_merchants, g).is_empty());
    // Chaining (ruling A3): the town just connected is already a hub.
    ok(&mut state, g, &road(TOWN, &[(-3, 5)], CITY));
    // Malformed and out-of-turn actions.
    assert!(matches!(
        try_apply(&mut state, g, &pb::Action::default()),
        Err(ActionError::Malformed(_))
    ));
    let missing_hub = pb::Action {
        kind: Some(pb::action::Kind::BuildRoad(pb::BuildRoad {
            hub: None,
            tiles: vec![pb_hex(-4, 6)],
            target: Some(pb_hex(-5, 6)),
        })),
    };
    assert!(matches!(
        try_apply(&mut state, g, &missing_hub),
        Err(ActionError::Malformed(_))
    ));
    let far = road(GREY_WORKSHOP, &[(i32::MAX, i32::MIN)], HAMLET_WEST);
    assert!(matches!(
        try_apply(&mut state, g, &far),
        Err(ActionError::Malformed(_))
    ));
    let long = road(GREY_WORKSHOP, &[(-4, 6); 40], HAMLET_WEST);
    assert!(matches!(
        try_apply(&mut state, g, &long),
        Err(ActionError::Malformed(_))
    ));
    assert!(matches!(
        try_apply(&mut state, 7, &end_turn()),
        Err(ActionError::Malformed(_))
    ));
    assert!(matches!(
        try_apply(&mut state, BLACK, &end_turn()),
        Err(ActionError::NotYourTurn { .. })
    ));
    assert_illegal(try_apply(&mut state, g, &workshop(0, 1)), "§3.5");
}

/// Every road a brute force over ALL simple paths (any turn) of up to `max_tiles` empty hexes
/// accepts through [`LaStrada::check_road`].
fn brute_force_roads(
    state: &LaStrada,
    seat: Seat,
    budget: u32,
    max_tiles: usize,
) -> BTreeSet<(HexId, Vec<HexId>, HexId)> {
    fn walk(
        state: &LaStrada,
        seat: Seat,
        budget: u32,
        max_tiles: usize,
        hub: HexId,
        path: &mut Vec<HexId>,
        found: &mut BTreeSet<(HexId, Vec<HexId>, HexId)>,
    ) {
        let last = *path.last().unwrap_or(&hub);
        for d in 0..6 {
            let Some(next) = MAP.neighbour(last, d) else {
                continue;
            };
            if state.site_at(next).is_some() && !path.is_empty() {
                let plan = RoadPlan {
                    hub,
                    tiles: path.clone(),
                    target: next,
                };
                if state.check_road(seat, &plan, budget).is_ok() {
                    found.insert((hub, path.clone(), next));
                }
            }
            if path.len() < max_tiles
                && state.occupant(next) == Occupant::Empty
                && state.site_at(next).is_none()
                && !path.contains(&next)
            {
                path.push(next);
                walk(state, seat, budget, max_tiles, hub, path, found);
                path.pop();
            }
        }
    }
    let mut found = BTreeSet::new();
    for hub in state.hubs(seat) {
        walk(
            state,
            seat,
            budget,
            max_tiles,
            hub,
            &mut Vec::new(),
            &mut found,
        );
    }
    found
}

#[test]
fn the_road_listing_is_complete_and_sound() {
    // On positions from random games under each curve rule, the depth-first enumeration equals a
    // brute force over every simple path checked by the validator (so the listing is complete
    // and every listed road is legal), and the listing contains no duplicates.
    let mut compared = 0;
    for curve in [pb::Curve::Gentle, pb::Curve::Sharp, pb::Curve::Both] {
        for players in 2..=4 {
            let config = pb::Config {
                players,
                curve: curve as i32,
                ..pb::Config::default()
            };
            for seed in 0..3 {
                let game: RandomGame<LaStrada> =
                    play(&config, Seed::from_u64(seed), 5_000, Checks::NONE).expect("game ends");
                let mut state = LaStrada::setup(&config, &Seed::from_u64(seed)).expect("setup");
                for (step, (seat, action)) in game.actions.iter().enumerate() {
                    if step % 7 == 0 && matches!(state.phase, Phase::Playing { .. }) {
                        let seat = state.to_act().expect("to act");
                        for budget in [state.player(seat).resources, RESOURCE_CAP] {
                            let listed: Vec<(HexId, Vec<HexId>, HexId)> = state
                                .legal_roads(seat, budget)
                                .into_iter()
                                .map(|p| (p.hub, p.tiles, p.target))
                                .collect();
                            let unique: BTreeSet<_> = listed.iter().cloned().collect();
                            assert_eq!(unique.len(), listed.len(), "duplicates in the listing");
                            assert_eq!(
                                unique,
                                brute_force_roads(&state, seat, budget, 5),
                                "step {step}"
                            );
                            assert_eq!(state.has_any_road(seat, budget), !unique.is_empty());
                            compared += 1;
                        }
                    }
                    state.apply(*seat, action).expect("replay");
                }
            }
        }
    }
    assert!(compared > 100, "compared {compared} positions");
}

// ----- Turn sequence, end of game, stall guard (spec §4, §7, §9) -----

#[test]
fn income_is_six_capped_at_ten_and_two_silent_rounds_stall() {
    let mut state = example_game();
    // Round 1: everyone passes with 6; round 2: income +4 only (cap 10).
    for seat in [GREY, BLACK, WHITE] {
        assert_eq!(state.player(seat).resources, 6);
        ok(&mut state, seat, &end_turn());
    }
    assert_eq!(state.player(GREY).resources, 10);
    assert_eq!(
        state.silent_turns, 3,
        "one silent round does not end the game"
    );
    for seat in [GREY, BLACK] {
        let events = ok(&mut state, seat, &end_turn());
        assert_eq!(
            turn_started(&events).map(|t| (t.income, t.resources)),
            Some((4, 10))
        );
    }
    // The 6th silent turn ends the game (two full rounds, ruling A13).
    let events = ok(&mut state, WHITE, &end_turn());
    let ended = game_ended(&events).expect("stall ends the game");
    assert_eq!(ended.reason, pb::EndReason::Stall as i32);
    assert_eq!(ended.gold, vec![0, 0, 0]);
    assert_eq!(
        ended.winners,
        vec![0, 1, 2],
        "all tied on gold and resources: shared win"
    );
    assert_eq!(state.to_act(), None);
    assert!(state.legal_actions(GREY).is_empty());
    assert_eq!(
        try_apply(&mut state, GREY, &end_turn()),
        Err(ActionError::GameOver)
    );
    // A road resets the count.
    let mut state = example_game();
    ok(&mut state, GREY, &end_turn());
    ok(
        &mut state,
        BLACK,
        &road(BLACK_WORKSHOP, &[(-6, 2)], BLACK_CITY),
    );
    ok(&mut state, BLACK, &end_turn());
    assert_eq!(state.silent_turns, 0);
}

#[test]
fn a_player_who_cannot_reach_ends_the_game_before_income() {
    // Spec §7, ruling A9: tested at the start of the turn, before income. Black has no merchant
    // left (set directly: the only way to exhaust them quickly).
    let mut state = example_game();
    ok(&mut state, GREY, &road(GREY_WORKSHOP, &[(-3, 6)], TOWN));
    state.players[BLACK as usize].merchants_left = 0;
    state.players[BLACK as usize].resources = 3;
    let events = state.apply(GREY, &end_turn()).expect("end turn");
    let ended = game_ended(&events).expect("game over");
    assert_eq!(ended.reason, pb::EndReason::CannotReach as i32);
    assert_eq!(ended.trigger_seat, Some(BLACK));
    assert!(turn_started(&events).is_none());
    assert_eq!(
        state.player(BLACK).resources,
        3,
        "no income for the ending player"
    );
    assert_eq!(ended.gold, vec![4, 0, 0]);
    assert_eq!(ended.winners, vec![GREY]);
    assert_eq!(
        state.outcome(),
        Some(Outcome {
            scores: vec![4, 0, 0],
            winners: vec![GREY]
        })
    );
}

#[test]
fn the_end_budget_option_tests_this_turns_resources() {
    // Find, in random 4-player games, a turn hand-over where the next player can reach something
    // with 10 but not with what it will hold this turn; the default continues, the option ends.
    let mut found = 0;
    'games: for seed in 0..200 {
        let config = config(4);
        let game: RandomGame<LaStrada> =
            play(&config, Seed::from_u64(seed), 5_000, Checks::NONE).expect("ends");
        let mut state = LaStrada::setup(&config, &Seed::from_u64(seed)).expect("setup");
        for (seat, action) in &game.actions {
            if matches!(action.kind, Some(pb::action::Kind::EndTurn(_))) {
                let next = left_of(*seat, 4);
                let this_turn = (state.player(next).resources + INCOME).min(RESOURCE_CAP);
                if state.silent_turns + 1 < 8
                    && state.has_any_road(next, RESOURCE_CAP)
                    && !state.has_any_road(next, this_turn)
                {
                    let mut strict = state.clone();
                    strict.options.end_budget = EndBudgetRule::Current;
                    let events = strict.apply(*seat, action).expect("end turn");
                    let ended = game_ended(&events).expect("the option ends the game");
                    assert_eq!(ended.trigger_seat, Some(next));
                    let mut default = state.clone();
                    let events = default.apply(*seat, action).expect("end turn");
                    assert!(
                        game_ended(&events).is_none(),
                        "budget 10 keeps the game going"
                    );
                    assert_eq!(turn_started(&events).map(|t| t.seat), Some(next));
                    found += 1;
                    continue 'games;
                }
            }
            state.apply(*seat, action).expect("replay");
        }
    }
    assert!(found >= 3, "found only {found} such positions");
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

#[test]
fn two_player_settlements_hold_one_merchant_and_can_be_visited() {
    let config = config(2);
    let (mut visits, mut full_ends, mut fallback_ends) = (0, 0, 0);
    for seed in 0..200 {
        let game: RandomGame<LaStrada> =
            play(&config, Seed::from_u64(seed), 5_000, Checks::NONE).expect("ends");
        for (before, seat, action, events) in replay_steps(&config, seed, &game) {
            let Some(built) = events.iter().find_map(|e| match &e.kind {
                Some(pb::event::Kind::RoadBuilt(b)) => Some(b),
                _ => None,
            }) else {
                continue;
            };
            let target = built.target.as_ref().expect("target");
            let target = hex(target.q, target.r);
            let site = before.site_at(target).expect("site");
            if site.merchants.is_empty() {
                assert!(built.merchant_placed);
            } else {
                // Spec §9: connecting the opponent's settlement places no merchant.
                assert!(!built.merchant_placed);
                assert_eq!(site.merchants, vec![1 - seat]);
                let mut after = before.clone();
                after.apply(seat, &action).expect("same road");
                assert_eq!(
                    after.player(seat).merchants_left,
                    before.player(seat).merchants_left
                );
                assert_eq!(after.site_at(target).expect("site").visitors, vec![seat]);
                assert!(
                    after.hubs(seat).contains(&target),
                    "a visited settlement is a hub"
                );
                assert!(
                    !after
                        .legal_roads(seat, RESOURCE_CAP)
                        .iter()
                        .any(|p| p.target == target)
                );
                visits += 1;
            }
            if let Some(ended) = game_ended(&events) {
                // Spec §9: the game ends at once when all 19 settlements hold a merchant.
                assert_eq!(ended.reason, pb::EndReason::AllSettlementsOccupied as i32);
                assert_eq!(
                    ended.resources[seat as usize], built.resources,
                    "resources kept for the tie-break"
                );
                full_ends += 1;
            }
        }
        match game.final_state.phase {
            Phase::Finished {
                reason: EndReason::NoRoadsLeft,
                ..
            } => {
                fallback_ends += 1;
                assert!(!game.final_state.has_any_road(0, RESOURCE_CAP));
                assert!(!game.final_state.has_any_road(1, RESOURCE_CAP));
            }
            Phase::Finished {
                reason: EndReason::AllSettlementsOccupied | EndReason::Stall,
                ..
            } => {}
            ref other => panic!("2-player game ended by {other:?}"),
        }
    }
    assert!(visits > 50, "visits {visits}");
    assert!(full_ends > 100, "full-occupation ends {full_ends}");
    println!(
        "2p: {visits} visits, {full_ends} full-occupation ends, {fallback_ends} fallback ends"
    );
}

#[test]
fn cannot_reach_ends_three_and_four_player_games_without_income() {
    for players in [3, 4] {
        let config = config(players);
        for seed in 0..50 {
            let game: RandomGame<LaStrada> =
                play(&config, Seed::from_u64(seed), 5_000, Checks::NONE).expect("ends");
            let steps = replay_steps(&config, seed, &game);
            let (before, _, _, events) = steps.last().expect("actions");
            let ended = game_ended(events).expect("last action ends the game");
            if ended.reason == pb::EndReason::CannotReach as i32 {
                let trigger = ended.trigger_seat.expect("trigger seat");
                assert!(!game.final_state.has_any_road(trigger, RESOURCE_CAP));
                assert_eq!(
                    game.final_state.player(trigger).resources,
                    before.player(trigger).resources
                );
            }
        }
    }
}

// ----- Scoring (spec §8, §9) -----

#[test]
fn scoring_follows_the_table_and_ties_break_on_resources() {
    let mut state = example_game();
    // Fill one settlement of each kind with 1..4 merchants directly (scoring is per settlement).
    let kinds = [
        SettlementKind::Hamlet,
        SettlementKind::Village,
        SettlementKind::Town,
        SettlementKind::City,
    ];
    let table = [[2, 1, 0, 0], [3, 2, 1, 0], [4, 3, 2, 1], [5, 4, 3, 2]];
    state.players.push(state.players[0].clone());
    state.options.players = 4;
    for (kind, row) in kinds.iter().zip(table) {
        for n in 1..=4 {
            let mut scored = state.clone();
            let site = scored
                .sites
                .iter_mut()
                .find(|s| s.kind == *kind)
                .expect("kind present");
            site.merchants = (0..n).collect();
            let gold = scored.gold();
            assert!(
                gold[..n as usize].iter().all(|g| *g == row[n as usize - 1]),
                "{kind:?} n={n}: {gold:?}"
            );
        }
    }
    // Tie on gold: most resources wins; full tie is shared.
    let mut tied = state.clone();
    tied.sites[0].merchants = vec![0];
    tied.sites[1].merchants = vec![1];
    let equal = tied.sites[0].kind;
    tied.sites[1].kind = equal;
    tied.players[0].resources = 3;
    tied.players[1].resources = 5;
    let gold = tied.gold();
    assert_eq!(tied.winners(&gold), vec![1]);
    tied.players[0].resources = 5;
    assert_eq!(tied.winners(&gold), vec![0, 1]);
    // 2-player: every merchant scores the top value.
    let rng = GameRng::from_seed(&Seed::from_u64(0));
    let mut two = LaStrada::with_layout(
        options(2),
        rng,
        MapData::default_arrangement(),
        &MAP.settlement_tiles,
        0,
    );
    for site in two.sites.iter_mut() {
        site.merchants = vec![0];
    }
    assert_eq!(two.gold()[0], 4 * 5 + 5 * 4 + 5 * 3 + 5 * 2);
}

// ----- Views and hidden information -----

#[test]
fn views_hide_nothing_and_reveal_nothing_secret() {
    let mut state = example_game();
    ok(&mut state, GREY, &road(GREY_WORKSHOP, &[(-3, 6)], TOWN));
    let spectator = state.view(Viewer::Spectator);
    for seat in 0..3 {
        assert_eq!(
            state.view(Viewer::Seat(seat)),
            spectator,
            "everything on the table is public"
        );
    }
    let resampled = state.resample_hidden(Viewer::Spectator, &Seed::from_u64(77));
    assert_ne!(
        postcard::to_stdvec(&resampled.rng).ok(),
        postcard::to_stdvec(&state.rng).ok()
    );
    assert_eq!(resampled.view(Viewer::Seat(1)), state.view(Viewer::Seat(1)));
    assert_eq!(spectator.board.len(), 169);
    assert!(spectator.map_provisional);
    assert_eq!(spectator.arrangement, ["A", "B", "C", "D", "F", "E"]);
    let grey = &spectator.players[0];
    assert_eq!((grey.resources, grey.merchants_left, grey.gold), (2, 11, 4));
    assert_eq!(grey.side, "North");
    assert_eq!(grey.hubs, vec![pb_hex(-4, 7), pb_hex(-2, 5)]);
    let tile = spectator
        .board
        .iter()
        .find(|b| b.hex == Some(pb_hex(-3, 6)))
        .expect("hex");
    assert_eq!(
        tile.road.as_ref().map(|r| (r.owner, r.face)),
        Some((0, pb::Face::Straight as i32))
    );
    // The view encodes no seed: the serialized view is identical whatever the RNG.
    use prost::Message;
    assert_eq!(
        resampled.view(Viewer::Spectator).encode_to_vec(),
        spectator.encode_to_vec()
    );
}

// ----- Random play (contract, invariants, termination) -----

fn random_games(players: u32, games: u64) {
    let config = config(players);
    let light = Checks {
        invariants: true,
        deep_every: 0,
        replay: false,
    };
    let mut reasons = std::collections::BTreeMap::new();
    let mut rounds = 0;
    for seed in 0..games {
        let checks = if seed < 200 { Checks::STANDARD } else { light };
        let game: RandomGame<LaStrada> = play(&config, Seed::from_u64(seed), 2_000, checks)
            .unwrap_or_else(|e| panic!("{players} players, seed {seed}: {e}"));
        let Phase::Finished { reason, .. } = game.final_state.phase else {
            panic!("not finished")
        };
        *reasons.entry(format!("{reason:?}")).or_insert(0) += 1;
        rounds += game.final_state.round;
    }
    println!(
        "{players} players: {games} games, {:.1} rounds avg, end reasons {reasons:?}",
        f64::from(rounds) / games as f64
    );
}

#[test]
fn random_play_2_players() {
    random_games(2, 10_000);
}

#[test]
fn random_play_3_players() {
    random_games(3, 10_000);
}

#[test]
fn random_play_4_players() {
    random_games(4, 10_000);
}
