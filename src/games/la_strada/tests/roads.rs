//! Road geometry (spec §5 rule 5, §10) and the legal-road listing: complete and sound against a
//! brute force.

use super::*;

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
            apply_ok(&mut base, seat, &workshop(q, r));
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
                apply_ok(&mut state, GREY, action);
            } else {
                assert_illegal(&state, GREY, action, "§5.5");
            }
        }
    }
}

/// Every road a brute force over ALL simple paths (any turn) of up to `max_tiles` empty hexes
/// accepts through [`LaStrada::check_road`].
fn brute_force_roads(
    state: &LaStrada,
    seat: Seat,
    budget: u32,
    max_tiles: usize,
) -> BTreeSet<RoadTriple> {
    fn walk(
        state: &LaStrada,
        seat: Seat,
        budget: u32,
        max_tiles: usize,
        hub: HexId,
        path: &mut Vec<HexId>,
        found: &mut BTreeSet<RoadTriple>,
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
    for config in curve_configs() {
        for seed in 0..3 {
            let game: RandomGame<LaStrada> =
                play(&config, Seed::from_u64(seed), 5_000, Checks::NONE).expect("game ends");
            let mut state = LaStrada::setup(&config, &Seed::from_u64(seed)).expect("setup");
            for (step, (seat, action)) in game.actions.iter().enumerate() {
                if step % 7 == 0 && matches!(state.phase, Phase::Playing { .. }) {
                    let seat = state.to_act().expect("to act");
                    for budget in [state.player(seat).resources, RESOURCE_CAP] {
                        let listed = road_triples(&state, seat, budget);
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
    assert!(compared > 100, "compared {compared} positions");
}

/// The depth-first road search as it was first written (a straightforward transcription of
/// spec §5 rules 1-7, checking the occupant, the path and the target at every step): the
/// reference the optimized [`LaStrada::for_each_road`] must match road for road, in order.
fn reference_listing(state: &LaStrada, seat: Seat, budget: u32) -> Vec<RoadTriple> {
    struct Search<'a> {
        state: &'a LaStrada,
        seat: Seat,
        budget: u32,
        hub: HexId,
        turns: &'static [usize],
        supply: [u8; 3],
        path: Vec<HexId>,
        found: Vec<RoadTriple>,
    }
    impl Search<'_> {
        fn try_step(&mut self, hex: HexId, cost: u32, back: usize) {
            let state = self.state;
            if state.occupant[hex as usize] != Occupant::Empty || self.path.contains(&hex) {
                return;
            }
            let terrain = state.terrain[hex as usize];
            let Some(kind) = terrain.tile_index() else {
                return;
            };
            let cost = cost + terrain.cost();
            if self.supply[kind] == 0 || cost > self.budget {
                return;
            }
            self.supply[kind] -= 1;
            self.path.push(hex);
            for turn in self.turns {
                let direction = (back + turn) % 6;
                let Some(next) = MAP.neighbour(hex, direction) else {
                    continue;
                };
                if let Some(site) = state.site_at[next as usize] {
                    if next != self.hub && state.target_error(self.seat, site as usize).is_none() {
                        self.found.push((self.hub, self.path.clone(), next));
                    }
                } else {
                    self.try_step(next, cost, (direction + 3) % 6);
                }
            }
            self.path.pop();
            self.supply[kind] += 1;
        }
    }
    let mut search = Search {
        state,
        seat,
        budget,
        hub: 0,
        turns: state.options.curve.allowed_turns(),
        supply: state.players[seat as usize].supply,
        path: Vec::new(),
        found: Vec::new(),
    };
    for hub in state.hubs(seat) {
        search.hub = hub;
        for direction in 0..6 {
            if let Some(first) = MAP.neighbour(hub, direction) {
                search.try_step(first, 0, (direction + 3) % 6);
            }
        }
    }
    search.found
}

#[test]
fn the_optimized_listing_equals_the_reference_search_road_for_road() {
    // Every position of random games under every curve rule and player count, for every seat
    // and three budgets: the same roads in the same order, and the same early stop.
    let mut compared = 0;
    let mut roads = 0;
    for config in curve_configs() {
        for_each_playing_position(&config, 0..8, |state, _, at| {
            for viewer in 0..config.players {
                for budget in probe_budgets(state, viewer) {
                    let listed = road_triples(state, viewer, budget);
                    let reference = reference_listing(state, viewer, budget);
                    assert_eq!(listed, reference, "{at}");
                    assert_eq!(state.has_any_road(viewer, budget), !reference.is_empty());
                    roads += listed.len();
                    compared += 1;
                }
            }
        });
    }
    assert!(compared > 10_000, "compared {compared} positions");
    assert!(roads > 100_000, "compared only {roads} roads");
}

#[test]
fn drawing_a_road_by_index_gives_the_listed_road_at_that_index() {
    // The random-play sampler's draw counts the roads, then searches only the branch that holds
    // the one drawn: at every index it must give the listing's road, and no road when the
    // index is past the last one or none is asked for. Every playing position of random games
    // under every curve rule and player count, for the seat to act at three budgets.
    let mut drawn = 0;
    // Draws whose count kept the tiles in hand (a kind may run short) and draws whose count did
    // not: both must agree with the listing.
    let mut counted_with_supply = 0;
    let mut counted_without = 0;
    for config in curve_configs() {
        for_each_playing_position(&config, 0..4, |state, seat, at| {
            for budget in probe_budgets(state, seat) {
                let listed = road_triples(state, seat, budget);
                match (listed.is_empty(), state.counts_without_supply(seat, budget)) {
                    (true, _) => {}
                    (false, true) => counted_without += 1,
                    (false, false) => counted_with_supply += 1,
                }
                let draw = |index: Option<usize>| {
                    state.draw_road(
                        seat,
                        budget,
                        |count| {
                            assert_eq!(count, listed.len(), "{at}: the count");
                            index
                        },
                        |hub, tiles, target| (hub, tiles.to_vec(), target),
                    )
                };
                for (index, road) in listed.iter().enumerate() {
                    assert_eq!(draw(Some(index)).as_ref(), Some(road), "{at}: road {index}");
                    drawn += 1;
                }
                assert_eq!(draw(Some(listed.len())), None, "{at}: past the last road");
                assert_eq!(draw(None), None, "{at}: no road asked for");
            }
        });
    }
    assert!(drawn > 20_000, "drew only {drawn} roads");
    assert!(
        counted_with_supply > 100 && counted_without > 1_000,
        "counted {counted_with_supply} listings with the supply in hand, {counted_without} without"
    );
}
