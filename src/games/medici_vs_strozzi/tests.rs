//! Scenario tests for the spec's examples and rulings, illegal-action tests and random play.

use super::scoring::move_marker;
use super::*;
use crate::games::common::random_play::{Checks, play};
use pb::action::Kind;
use pb::event::Kind as Ev;

// ---------------------------------------------------------------------------------------------
// Helpers: actions, checked application, and a test-only way to set up precise positions.

fn act(kind: Kind) -> pb::Action {
    pb::Action { kind: Some(kind) }
}
fn draw() -> pb::Action {
    act(Kind::DrawTile(pb::DrawTile {}))
}
fn offer(price: u32) -> pb::Action {
    act(Kind::OfferLot(pb::OfferLot { price }))
}
fn buy() -> pb::Action {
    act(Kind::BuyLot(pb::BuyLot {}))
}
fn decline() -> pb::Action {
    act(Kind::DeclineLot(pb::DeclineLot {}))
}
fn load(ship: u32, harbour: Option<u32>) -> pb::Action {
    act(Kind::LoadLot(pb::LoadLot { ship, harbour }))
}
fn discard() -> pb::Action {
    act(Kind::DiscardLot(pb::DiscardLot {}))
}

fn game_with(config: &pb::Config) -> MediciVsStrozzi {
    MediciVsStrozzi::setup(config, &Seed::from_u64(7)).expect("valid config")
}
fn game() -> MediciVsStrozzi {
    game_with(&pb::Config::default())
}

fn encode(g: &MediciVsStrozzi) -> Vec<u8> {
    postcard::to_stdvec(g).expect("serializes")
}

/// Applies an action that must be accepted, then checks the invariants.
fn ok(g: &mut MediciVsStrozzi, seat: Seat, action: pb::Action) -> Vec<pb::Event> {
    let events = g
        .apply(seat, &action)
        .unwrap_or_else(|e| panic!("{action:?} by {seat} rejected: {e}"));
    g.check_invariants()
        .unwrap_or_else(|e| panic!("invariant broken after {action:?}: {e}"));
    events
}

/// Applies an action that must be refused as illegal, checks the state is untouched and returns
/// the rule it cites.
fn illegal(g: &mut MediciVsStrozzi, seat: Seat, action: pb::Action) -> &'static str {
    let before = encode(g);
    let err = g
        .apply(seat, &action)
        .expect_err("the action must be refused");
    assert_eq!(encode(g), before, "a refused action changed the state");
    match err {
        ActionError::Illegal { rule, .. } => rule,
        other => panic!("expected an illegal-move error, got {other:?}"),
    }
}

fn tile(goods: Goods, value: u32) -> Tile {
    Tile::new(goods, value)
}

/// Takes one tile out of the bag (test set-up only; keeps the 26 tiles conserved).
fn take(g: &mut MediciVsStrozzi, wanted: Tile) -> Tile {
    let index = g
        .bag
        .iter()
        .position(|t| *t == wanted)
        .unwrap_or_else(|| panic!("{wanted:?} not in the bag"));
    g.bag.remove(index)
}

/// Puts tiles from the bag on `seat`'s ship of `capacity`, placed in `harbour`.
fn stow(g: &mut MediciVsStrozzi, seat: Seat, capacity: u32, harbour: u32, tiles: &[Tile]) {
    let taken: Vec<Tile> = tiles.iter().map(|&t| take(g, t)).collect();
    let ship = g.players[seat as usize]
        .ships
        .iter_mut()
        .find(|s| s.capacity == capacity)
        .expect("ship exists");
    ship.harbour = Some(harbour);
    ship.tiles.extend(taken);
}

/// Discards every bag tile except `keep` (which stay in the bag).
fn leave_in_bag(g: &mut MediciVsStrozzi, keep: &[Tile]) {
    let mut kept = Vec::new();
    for &t in keep {
        kept.push(take(g, t));
    }
    g.discarded.append(&mut g.bag);
    kept.sort();
    g.bag = kept;
}

/// Sets money through the ledger so the money invariant still holds.
fn set_money(g: &mut MediciVsStrozzi, seat: Seat, money: i64) {
    let p = &mut g.players[seat as usize];
    p.money = money;
    p.paid = (STARTING_MONEY - money).max(0);
    p.earned = (money - STARTING_MONEY).max(0);
}

/// The index of the track of `goods` in `harbour` in the provisional board.
fn track(g: &MediciVsStrozzi, harbour: u32, goods: Goods) -> usize {
    g.board
        .tracks
        .iter()
        .position(|t| t.harbour == harbour && t.goods == goods)
        .expect("track exists in the provisional board")
}

fn only_round_scored(events: &[pb::Event]) -> pb::RoundScored {
    let scored: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            Some(Ev::RoundScored(r)) => Some(r.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(scored.len(), 1, "exactly one RoundScored in {events:?}");
    scored[0].clone()
}

fn exact(legal: &[LegalAction<pb::Action>]) -> Vec<pb::Action> {
    legal
        .iter()
        .filter_map(|l| match l {
            LegalAction::Exact(a) => Some(*a),
            LegalAction::Amount { .. } => None,
        })
        .collect()
}

/// Ends the round with the single tile left in the bag: `drawer` draws it, offers it for 0, the
/// opponent buys it and discards it.
fn end_round_with_last_tile(g: &mut MediciVsStrozzi) -> Vec<pb::Event> {
    assert_eq!(g.bag.len(), 1);
    let drawer = g.active;
    ok(g, drawer, draw());
    ok(g, drawer, offer(0));
    ok(g, opponent(drawer), buy());
    ok(g, opponent(drawer), discard())
}

// ---------------------------------------------------------------------------------------------
// Data and setup.

#[test]
fn the_provisional_board_parses_and_is_consistent() {
    let board = Board::provisional().expect("board.json parses");
    assert_eq!(board.harbour_count(), 3, "spec B1: three harbours");
    assert_eq!(board.tracks.len(), 8, "spec B1: eight tracks");
    let per_harbour: Vec<usize> = (0..3)
        .map(|h| board.tracks.iter().filter(|t| t.harbour == h).count())
        .collect();
    assert_eq!(
        per_harbour,
        vec![3, 3, 2],
        "spec B1: harbours of 3, 3 and 2 tracks"
    );
    for goods in Goods::TRADED {
        assert_eq!(
            board.tracks.iter().filter(|t| t.goods == goods).count(),
            2,
            "{goods:?} on two tracks"
        );
    }
    for t in &board.tracks {
        assert_eq!(t.spaces_per_side, 5);
        assert_eq!(t.bonus_by_distance, vec![0, 0, 0, 10, 20]);
    }
    let raw: serde_json::Value = serde_json::from_str(include_str!("board.json")).expect("json");
    assert_eq!(
        raw["provisional"],
        serde_json::Value::Bool(true),
        "the guessed data is labelled provisional"
    );
}

#[test]
fn bad_board_files_are_refused() {
    let gold = r#"{"provisional":true,"note":"","harbours":[
        {"name":"A","tracks":[{"goods":"gold","spaces_per_side":5}]},{"name":"B","tracks":[]},{"name":"C","tracks":[]}]}"#;
    assert!(Board::parse(gold, 3).unwrap_err().contains("gold"));
    let off_track = r#"{"provisional":true,"note":"","harbours":[
        {"name":"A","tracks":[{"goods":"dye","spaces_per_side":3,"bonus":{"4":10}}]},{"name":"B","tracks":[]},{"name":"C","tracks":[]}]}"#;
    assert!(
        Board::parse(off_track, 3)
            .unwrap_err()
            .contains("off the track")
    );
    let two_harbours = r#"{"provisional":true,"note":"","harbours":[{"name":"A","tracks":[]},{"name":"B","tracks":[]}]}"#;
    assert!(
        Board::parse(two_harbours, 3)
            .unwrap_err()
            .contains("harbours")
    );
}

#[test]
fn setup_follows_b3_and_config_defaults() {
    let g = game();
    assert_eq!(g.bag.len(), 26);
    assert_eq!(g.bag, data::full_tile_set());
    assert_eq!(g.bag.iter().map(|t| t.value).sum::<u32>(), 4 * 14 + 10);
    assert!(g.players.iter().all(|p| p.money == 300));
    assert_eq!(g.to_act(), Some(MEDICI), "spec B4: Medici starts round 1");
    assert!(g.markers.iter().all(|&m| m == 0));
    assert_eq!(
        g.settings,
        Settings {
            marker_movement: MarkerMovement::Net,
            max_price: 999
        }
    );
    g.check_invariants().expect("invariants at setup");

    let sequential = game_with(&pb::Config {
        marker_movement: pb::MarkerMovement::Sequential as i32,
        max_price: 40,
    });
    assert_eq!(
        sequential.settings,
        Settings {
            marker_movement: MarkerMovement::Sequential,
            max_price: 40
        }
    );
    let bad = MediciVsStrozzi::setup(
        &pb::Config {
            marker_movement: 9,
            max_price: 0,
        },
        &Seed::from_u64(1),
    );
    assert!(bad.is_err());
}

// ---------------------------------------------------------------------------------------------
// The rulebook examples.

/// Spec B5: Medici draws 2 tiles and asks 7; Strozzi declines; Medici pays 7, loads both tiles on
/// one ship and places it; Medici draws next.
#[test]
fn b5_rulebook_example() {
    let mut g = game();
    let mut drawn = Vec::new();
    for _ in 0..2 {
        let events = ok(&mut g, MEDICI, draw());
        match &events[..] {
            [
                pb::Event {
                    kind: Some(Ev::TileDrawn(d)),
                },
            ] => {
                assert_eq!(d.seat, MEDICI);
                drawn.push(d.tile.expect("tile"));
            }
            other => panic!("unexpected events {other:?}"),
        }
    }
    assert_eq!(g.view(Viewer::Spectator).draw_limit, 1);
    assert_eq!(
        ok(&mut g, MEDICI, offer(7)),
        vec![pb::Event {
            kind: Some(Ev::LotOffered(pb::LotOffered {
                seat: MEDICI,
                price: 7
            }))
        }]
    );
    assert_eq!(g.to_act(), Some(STROZZI));
    assert_eq!(
        ok(&mut g, STROZZI, decline()),
        vec![pb::Event {
            kind: Some(Ev::LotSold(pb::LotSold {
                buyer: MEDICI,
                price: 7,
                declined: true
            }))
        }]
    );
    assert_eq!(g.player(MEDICI).money, 293);
    assert_eq!(g.player(STROZZI).money, 300);
    assert_eq!(g.to_act(), Some(MEDICI), "the buyer loads");
    let events = ok(&mut g, MEDICI, load(4, Some(1)));
    assert_eq!(
        events,
        vec![pb::Event {
            kind: Some(Ev::LotLoaded(pb::LotLoaded {
                seat: MEDICI,
                ship: 4,
                harbour: 1,
                placed: true,
                tiles: drawn.clone()
            }))
        }]
    );
    let ship = &g.player(MEDICI).ships[1];
    assert_eq!((ship.capacity, ship.harbour), (4, Some(1)));
    assert_eq!(
        ship.tiles.iter().map(|t| t.to_proto()).collect::<Vec<_>>(),
        drawn
    );
    assert_eq!(g.stage(), Stage::Drawing);
    assert_eq!(g.to_act(), Some(MEDICI), "the buyer draws next");
    assert_eq!(g.bag.len(), 24);
    assert!(g.lot.is_empty());

    // The same ship takes a later lot where it stands; it is not placed again.
    ok(&mut g, MEDICI, draw());
    ok(&mut g, MEDICI, offer(0));
    ok(&mut g, STROZZI, decline());
    let events = ok(&mut g, MEDICI, load(4, None));
    assert!(matches!(&events[0].kind, Some(Ev::LotLoaded(l)) if !l.placed && l.harbour == 1));
    assert_eq!(g.player(MEDICI).ships[1].tiles.len(), 3);
}

/// Spec B7: Medici wins two harbours (40), the centre harbour is tied (0) and Medici has four
/// markers on its side (40); Strozzi has three, one of them on a 20 bonus (30 + 20 = 50).
#[test]
fn b7_scoring_example() {
    let mut g = game();
    g.round = 2;
    g.active = MEDICI;
    // Markers from round 1 (never reset): Strozzi holds B-cloth at the end and B-dye at 2.
    let b_cloth = track(&g, 1, Goods::Cloth);
    let b_dye = track(&g, 1, Goods::Dye);
    g.markers[b_cloth] = 5;
    g.markers[b_dye] = 2;
    // Harbour A (0): Medici 3 + 2 = 5 against 1. Harbour B (1): gold 5 each, a tie.
    // Harbour C (2): Medici 4 + 3 = 7 against a value-0 dye, which has no track in C.
    stow(
        &mut g,
        MEDICI,
        3,
        0,
        &[tile(Goods::Cloth, 3), tile(Goods::Dye, 2)],
    );
    stow(&mut g, MEDICI, 5, 1, &[tile(Goods::Gold, 5)]);
    stow(
        &mut g,
        MEDICI,
        4,
        2,
        &[tile(Goods::Fur, 4), tile(Goods::Spice, 3)],
    );
    stow(&mut g, STROZZI, 4, 0, &[tile(Goods::Fur, 1)]);
    stow(&mut g, STROZZI, 3, 1, &[tile(Goods::Gold, 5)]);
    stow(&mut g, STROZZI, 5, 2, &[tile(Goods::Dye, 0)]);
    leave_in_bag(&mut g, &[tile(Goods::Spice, 0)]);
    g.check_invariants().expect("set-up is consistent");

    let events = end_round_with_last_tile(&mut g);
    let scored = only_round_scored(&events);
    assert_eq!(scored.round, 2);
    assert_eq!(scored.reason, pb::RoundEndReason::BagEmpty as i32);
    let harbour = |harbour, cargo_value: Vec<u32>, winner: Option<u32>| pb::HarbourScored {
        harbour,
        cargo_value,
        winner,
        payout: if winner.is_some() { 20 } else { 0 },
    };
    assert_eq!(
        scored.harbours,
        vec![
            harbour(0, vec![5, 1], Some(MEDICI)),
            harbour(1, vec![5, 5], None),
            harbour(2, vec![7, 0], Some(MEDICI)),
        ]
    );
    let moved = |harbour, goods: Goods, to| pb::MarkerMoved {
        harbour,
        goods: goods.to_proto() as i32,
        from: 0,
        to,
    };
    assert_eq!(
        scored.markers,
        vec![
            moved(0, Goods::Cloth, -1),
            moved(0, Goods::Dye, -1),
            moved(0, Goods::Fur, 1),
            moved(2, Goods::Fur, -1),
            moved(2, Goods::Spice, -1),
        ]
    );
    assert_eq!(
        scored.income,
        vec![
            pb::MonopolyIncome {
                seat: MEDICI,
                markers: 4,
                bonus: 0,
                total: 40
            },
            pb::MonopolyIncome {
                seat: STROZZI,
                markers: 3,
                bonus: 20,
                total: 50
            },
        ]
    );
    assert_eq!(scored.money, vec![300 + 40 + 40, 300 + 50]);
    assert_eq!(
        g.markers.iter().filter(|&&m| m == 0).count(),
        1,
        "one marker in the centre pays nobody"
    );

    // Round 3 follows: Strozzi starts, every tile back in the bag, ships empty, markers kept.
    assert!(events.iter().any(|e| matches!(&e.kind,
        Some(Ev::RoundStarted(r)) if r.round == 3 && r.start_seat == STROZZI)));
    assert_eq!(g.round(), 3);
    assert_eq!(g.to_act(), Some(STROZZI));
    assert_eq!(g.bag, data::full_tile_set());
    assert!(g.discarded.is_empty());
    assert!(
        g.players
            .iter()
            .flat_map(|p| &p.ships)
            .all(|s| s.tiles.is_empty() && s.harbour.is_none())
    );
    assert_eq!(g.markers[b_cloth], 5);
    assert_eq!(g.markers[track(&g, 0, Goods::Fur)], 1);
}

// ---------------------------------------------------------------------------------------------
// The turn loop.

#[test]
fn the_draw_cap_uses_the_drawers_own_ships_only() {
    // Medici: ship 3 full, ship 4 has room for 1, ship 5 for 2 → at most 2 tiles. Strozzi's
    // empty ships (room for 5) play no part (M3).
    let mut g = game();
    stow(
        &mut g,
        MEDICI,
        3,
        0,
        &[
            tile(Goods::Dye, 1),
            tile(Goods::Dye, 2),
            tile(Goods::Dye, 3),
        ],
    );
    stow(
        &mut g,
        MEDICI,
        4,
        1,
        &[
            tile(Goods::Fur, 1),
            tile(Goods::Fur, 2),
            tile(Goods::Fur, 3),
        ],
    );
    stow(
        &mut g,
        MEDICI,
        5,
        2,
        &[
            tile(Goods::Spice, 1),
            tile(Goods::Spice, 2),
            tile(Goods::Spice, 3),
        ],
    );
    g.check_invariants().expect("set-up");
    assert_eq!(g.view(Viewer::Seat(MEDICI)).draw_limit, 2);
    ok(&mut g, MEDICI, draw());
    ok(&mut g, MEDICI, draw());
    assert_eq!(g.view(Viewer::Seat(MEDICI)).draw_limit, 0);
    let legal = g.legal_actions(MEDICI);
    assert!(
        !exact(&legal).contains(&draw()),
        "no DrawTile listed beyond the cap"
    );
    assert_eq!(legal.len(), 1, "only OfferLot remains");
    assert_eq!(illegal(&mut g, MEDICI, draw()), "§B4 M3");

    // The other way round: Strozzi's ships have room for 1 each, Medici's are empty → 3 tiles.
    let mut g = game();
    stow(
        &mut g,
        STROZZI,
        3,
        0,
        &[tile(Goods::Dye, 1), tile(Goods::Dye, 2)],
    );
    stow(
        &mut g,
        STROZZI,
        4,
        1,
        &[
            tile(Goods::Fur, 1),
            tile(Goods::Fur, 2),
            tile(Goods::Fur, 3),
        ],
    );
    stow(
        &mut g,
        STROZZI,
        5,
        2,
        &[
            tile(Goods::Spice, 1),
            tile(Goods::Spice, 2),
            tile(Goods::Spice, 3),
            tile(Goods::Spice, 4),
        ],
    );
    assert_eq!(g.view(Viewer::Spectator).draw_limit, 3);
    for _ in 0..3 {
        ok(&mut g, MEDICI, draw());
    }
    assert_eq!(
        illegal(&mut g, MEDICI, draw()),
        "§B4",
        "never more than 3 tiles"
    );
}

#[test]
fn one_ship_per_harbour_and_ships_stay_put() {
    let mut g = game();
    ok(&mut g, MEDICI, draw());
    ok(&mut g, MEDICI, offer(1));
    ok(&mut g, STROZZI, decline());
    ok(&mut g, MEDICI, load(3, Some(0)));
    // Not full ships yet (M8): the round goes on although a ship is loaded.
    assert_eq!(g.round(), 1);
    ok(&mut g, MEDICI, draw());
    ok(&mut g, MEDICI, offer(1));
    ok(&mut g, STROZZI, decline());
    let listed = exact(&g.legal_actions(MEDICI));
    assert!(
        !listed.contains(&load(4, Some(0))),
        "harbour 0 already holds a Medici ship"
    );
    assert!(listed.contains(&load(4, Some(1))) && listed.contains(&load(5, Some(2))));
    assert!(listed.contains(&load(3, None)) && listed.contains(&load(3, Some(0))));
    assert!(!listed.contains(&load(3, Some(1))));
    assert_eq!(
        illegal(&mut g, MEDICI, load(4, Some(0))),
        "§B4",
        "one ship per harbour per player"
    );
    assert_eq!(
        illegal(&mut g, MEDICI, load(3, Some(1))),
        "§B4",
        "a placed ship stays put"
    );
    assert_eq!(
        illegal(&mut g, MEDICI, load(4, None)),
        "§B4",
        "an empty ship needs a harbour"
    );
    ok(&mut g, MEDICI, load(3, Some(0)));
    assert_eq!(g.player(MEDICI).ships[0].harbour, Some(0));
    assert_eq!(g.player(MEDICI).ships[0].tiles.len(), 2);

    // Strozzi may use harbour 0 as well: the rule is per player.
    ok(&mut g, MEDICI, draw());
    ok(&mut g, MEDICI, offer(0));
    ok(&mut g, STROZZI, buy());
    ok(&mut g, STROZZI, load(5, Some(0)));
    assert_eq!(g.player(STROZZI).ship_in(0).map(|s| s.capacity), Some(5));
    assert_eq!(g.to_act(), Some(STROZZI), "the buyer draws next");
}

#[test]
fn a_lot_that_fits_no_ship_must_be_discarded() {
    // Strozzi's ships have room for 0, 1 and 1 tiles; Medici draws 2 (its own ships are empty).
    let mut g = game();
    stow(
        &mut g,
        STROZZI,
        3,
        0,
        &[
            tile(Goods::Dye, 1),
            tile(Goods::Dye, 2),
            tile(Goods::Dye, 3),
        ],
    );
    stow(
        &mut g,
        STROZZI,
        4,
        1,
        &[
            tile(Goods::Fur, 1),
            tile(Goods::Fur, 2),
            tile(Goods::Fur, 3),
        ],
    );
    stow(
        &mut g,
        STROZZI,
        5,
        2,
        &[
            tile(Goods::Spice, 1),
            tile(Goods::Spice, 2),
            tile(Goods::Spice, 3),
            tile(Goods::Spice, 4),
        ],
    );
    ok(&mut g, MEDICI, draw());
    ok(&mut g, MEDICI, draw());
    ok(&mut g, MEDICI, offer(5));
    ok(&mut g, STROZZI, buy());
    assert_eq!(
        g.player(STROZZI).money,
        295,
        "the buyer pays even if it cannot load (M4)"
    );
    assert_eq!(exact(&g.legal_actions(STROZZI)), vec![discard()]);
    assert_eq!(illegal(&mut g, STROZZI, load(4, None)), "§B4 M4");
    assert_eq!(illegal(&mut g, STROZZI, load(5, Some(2))), "§B4 M4");
    let lot = g.lot.clone();
    let events = ok(&mut g, STROZZI, discard());
    assert!(
        matches!(&events[0].kind, Some(Ev::LotDiscarded(d)) if d.seat == STROZZI && d.tiles.len() == 2)
    );
    assert_eq!(g.discarded, lot);
    assert_eq!(g.to_act(), Some(STROZZI));
    assert_eq!(g.stage(), Stage::Drawing);
}

#[test]
fn the_round_ends_when_a_player_fills_all_three_ships() {
    let mut g = game();
    stow(
        &mut g,
        MEDICI,
        3,
        0,
        &[
            tile(Goods::Dye, 0),
            tile(Goods::Dye, 1),
            tile(Goods::Dye, 2),
        ],
    );
    stow(
        &mut g,
        MEDICI,
        4,
        1,
        &[
            tile(Goods::Fur, 0),
            tile(Goods::Fur, 1),
            tile(Goods::Fur, 2),
            tile(Goods::Fur, 3),
        ],
    );
    stow(
        &mut g,
        MEDICI,
        5,
        2,
        &[
            tile(Goods::Spice, 0),
            tile(Goods::Spice, 1),
            tile(Goods::Spice, 2),
            tile(Goods::Spice, 3),
        ],
    );
    stow(&mut g, STROZZI, 3, 2, &[tile(Goods::Gold, 5)]);
    assert_eq!(
        g.view(Viewer::Spectator).draw_limit,
        1,
        "only ship 5 has room, for one tile"
    );
    ok(&mut g, MEDICI, draw());
    ok(&mut g, MEDICI, offer(0));
    ok(&mut g, STROZZI, decline());
    let events = ok(&mut g, MEDICI, load(5, None));
    let scored = only_round_scored(&events);
    assert_eq!(scored.round, 1);
    assert_eq!(scored.reason, pb::RoundEndReason::ShipsFull as i32);
    // The other player's ships score as loaded (M6): Strozzi's gold sits in harbour 2.
    assert_eq!(scored.harbours[2].cargo_value[1], 5);
    assert_eq!(g.round(), 2);
    assert_eq!(g.to_act(), Some(STROZZI), "spec B8: Strozzi starts round 2");
    assert_eq!(g.bag.len(), 26);
    let markers_after_round_1 = g.markers.clone();
    assert!(markers_after_round_1.iter().any(|&m| m != 0));
    assert!(
        g.players
            .iter()
            .flat_map(|p| &p.ships)
            .all(|s| s.tiles.is_empty() && s.harbour.is_none())
    );
}

#[test]
fn the_round_ends_when_the_bag_runs_out_mid_draw() {
    let mut g = game();
    leave_in_bag(&mut g, &[tile(Goods::Cloth, 4), tile(Goods::Dye, 0)]);
    assert_eq!(
        g.view(Viewer::Spectator).draw_limit,
        2,
        "the cap includes the tiles left (M7)"
    );
    ok(&mut g, MEDICI, draw());
    ok(&mut g, MEDICI, draw());
    assert!(!exact(&g.legal_actions(MEDICI)).contains(&draw()));
    assert_eq!(illegal(&mut g, MEDICI, draw()), "§B4 M7");
    ok(&mut g, MEDICI, offer(12));
    ok(&mut g, STROZZI, buy());
    let events = ok(&mut g, STROZZI, load(3, Some(0)));
    let scored = only_round_scored(&events);
    assert_eq!(scored.reason, pb::RoundEndReason::BagEmpty as i32);
    // Strozzi wins harbour A with 4 and moves its cloth marker 1 and its dye marker 2.
    assert_eq!(scored.harbours[0].winner, Some(STROZZI));
    assert_eq!(g.markers[track(&g, 0, Goods::Cloth)], 1);
    assert_eq!(
        g.markers[track(&g, 0, Goods::Dye)],
        2,
        "a value-0 tile moves its marker 2 spaces"
    );
    assert_eq!(g.player(STROZZI).money, 300 - 12 + 20 + 2 * 10);
    assert_eq!(g.round(), 2);
}

// ---------------------------------------------------------------------------------------------
// Scoring rulings.

#[test]
fn net_and_sequential_movement_differ_near_a_track_end() {
    let spec = TrackSpec {
        harbour: 0,
        goods: Goods::Cloth,
        spaces_per_side: 5,
        bonus_by_distance: vec![0, 0, 0, 10, 20],
    };
    // From 4 spaces on Medici's side, Medici pushes 3 and Strozzi 2.
    assert_eq!(
        move_marker(MarkerMovement::Net, &spec, -4, 3, 2),
        -5,
        "net −1, clamped at the end"
    );
    assert_eq!(
        move_marker(MarkerMovement::Sequential, &spec, -4, 3, 2),
        -3,
        "−7 clamps to −5, then +2"
    );
    // Medici moves first, so only a clamp at Medici's end can lose steps that netting would
    // keep; at Strozzi's end both options agree.
    assert_eq!(move_marker(MarkerMovement::Net, &spec, 4, 1, 4), 5);
    assert_eq!(move_marker(MarkerMovement::Sequential, &spec, 4, 1, 4), 5);
    assert_eq!(move_marker(MarkerMovement::Net, &spec, -5, 2, 1), -5);
    assert_eq!(move_marker(MarkerMovement::Sequential, &spec, -5, 2, 1), -4);
    assert_eq!(
        move_marker(MarkerMovement::Net, &spec, 0, 2, 1),
        -1,
        "away from the ends they agree"
    );
    assert_eq!(move_marker(MarkerMovement::Sequential, &spec, 0, 2, 1), -1);

    // The same position scored through the engine under both options.
    for (option, expected_marker, expected_income) in [
        (pb::MarkerMovement::Unspecified, -5, 10 + 20),
        (pb::MarkerMovement::Sequential, -3, 10),
    ] {
        let mut g = game_with(&pb::Config {
            marker_movement: option as i32,
            max_price: 0,
        });
        let a_cloth = track(&g, 0, Goods::Cloth);
        g.markers[a_cloth] = -4;
        // Medici: three cloth tiles (3 steps). Strozzi: cloth 0 (2 steps). Values 1+2+3 vs 0.
        stow(
            &mut g,
            MEDICI,
            3,
            0,
            &[
                tile(Goods::Cloth, 1),
                tile(Goods::Cloth, 2),
                tile(Goods::Cloth, 3),
            ],
        );
        stow(&mut g, STROZZI, 3, 0, &[tile(Goods::Cloth, 0)]);
        leave_in_bag(&mut g, &[tile(Goods::Gold, 5)]);
        let scored = only_round_scored(&end_round_with_last_tile(&mut g));
        assert_eq!(g.markers[a_cloth], expected_marker, "{option:?}");
        assert_eq!(
            scored.income[MEDICI as usize].total, expected_income,
            "{option:?}"
        );
        assert_eq!(
            scored.markers,
            vec![pb::MarkerMoved {
                harbour: 0,
                goods: Goods::Cloth.to_proto() as i32,
                from: -4,
                to: expected_marker
            }]
        );
    }
}

#[test]
fn bonuses_pay_every_round_and_markers_are_never_reset() {
    let mut g = game();
    let c_spice = track(&g, 2, Goods::Spice);
    g.markers[c_spice] = -5;
    leave_in_bag(&mut g, &[tile(Goods::Gold, 5)]);
    let scored = only_round_scored(&end_round_with_last_tile(&mut g));
    assert!(scored.markers.is_empty(), "no ship, no movement");
    assert_eq!(
        scored.income[MEDICI as usize],
        pb::MonopolyIncome {
            seat: MEDICI,
            markers: 1,
            bonus: 20,
            total: 30
        }
    );
    assert_eq!(scored.income[STROZZI as usize].total, 0);
    assert_eq!(g.markers[c_spice], -5);
    leave_in_bag(&mut g, &[tile(Goods::Gold, 5)]);
    let scored = only_round_scored(&end_round_with_last_tile(&mut g));
    assert_eq!(scored.round, 2);
    assert_eq!(
        scored.income[MEDICI as usize].total, 30,
        "M11: the bonus is paid again"
    );
    assert_eq!(g.player(MEDICI).money, 360);
}

#[test]
fn loans_let_money_go_negative() {
    let mut g = game();
    set_money(&mut g, MEDICI, 5);
    ok(&mut g, MEDICI, draw());
    ok(&mut g, MEDICI, offer(50));
    ok(&mut g, STROZZI, decline());
    assert_eq!(g.player(MEDICI).money, -45, "B8: unlimited loans");
    assert_eq!(g.view(Viewer::Spectator).players[0].money, -45);
    ok(&mut g, MEDICI, discard());
    // Still free to bid anything up to the cap while in debt.
    ok(&mut g, MEDICI, draw());
    match &g.legal_actions(MEDICI)[1] {
        LegalAction::Amount { min, max, .. } => assert_eq!((*min, *max), (0, 999)),
        other => panic!("expected the price range, got {other:?}"),
    }
    ok(&mut g, MEDICI, offer(999));
    ok(&mut g, STROZZI, decline());
    assert_eq!(g.player(MEDICI).money, -1044);

    // Debts count in the final score.
    g.round = 3;
    ok(&mut g, MEDICI, discard());
    leave_in_bag(&mut g, &[tile(Goods::Gold, 5)]);
    end_round_with_last_tile(&mut g);
    let outcome = g.outcome().expect("game over");
    assert_eq!(outcome.scores, vec![-1044, 300]);
    assert_eq!(outcome.winners, vec![STROZZI]);
}

#[test]
fn equal_money_shares_the_victory() {
    let mut g = game();
    g.round = 3;
    g.active = STROZZI;
    set_money(&mut g, MEDICI, 420);
    set_money(&mut g, STROZZI, 420);
    leave_in_bag(&mut g, &[tile(Goods::Dye, 3)]);
    let events = end_round_with_last_tile(&mut g);
    assert_eq!(
        events.last(),
        Some(&pb::Event {
            kind: Some(Ev::GameEnded(pb::GameEnded {
                money: vec![420, 420],
                winners: vec![MEDICI, STROZZI]
            }))
        })
    );
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            scores: vec![420, 420],
            winners: vec![MEDICI, STROZZI]
        })
    );
    assert_eq!(g.to_act(), None);
    assert_eq!(g.stage(), Stage::Finished);
    assert!(g.legal_actions(MEDICI).is_empty() && g.legal_actions(STROZZI).is_empty());
    assert_eq!(g.apply(STROZZI, &draw()), Err(ActionError::GameOver));
    assert_eq!(g.view(Viewer::Spectator).phase, pb::Phase::Finished as i32);
}

// ---------------------------------------------------------------------------------------------
// Illegal and malformed actions.

#[test]
fn every_illegal_action_cites_its_rule() {
    let mut g = game_with(&pb::Config {
        marker_movement: 0,
        max_price: 10,
    });
    // Drawing, empty lot.
    assert_eq!(
        illegal(&mut g, MEDICI, offer(3)),
        "§B4",
        "draw at least one tile first"
    );
    for wrong in [buy(), decline(), load(3, Some(0)), discard()] {
        assert_eq!(illegal(&mut g, MEDICI, wrong), "§B4", "wrong phase");
    }
    ok(&mut g, MEDICI, draw());
    assert_eq!(
        illegal(&mut g, MEDICI, offer(11)),
        "§B9 M9",
        "above max_price"
    );
    ok(&mut g, MEDICI, offer(10));
    // Deciding.
    for wrong in [draw(), offer(1), load(3, Some(0)), discard()] {
        assert_eq!(illegal(&mut g, STROZZI, wrong), "§B4", "wrong phase");
    }
    ok(&mut g, STROZZI, buy());
    // Loading.
    for wrong in [draw(), offer(1), buy(), decline()] {
        assert_eq!(illegal(&mut g, STROZZI, wrong), "§B4", "wrong phase");
    }
    assert_eq!(
        illegal(&mut g, STROZZI, load(3, None)),
        "§B4",
        "an empty ship needs a harbour"
    );

    // Malformed actions and out-of-turn actions leave the state untouched too.
    let before = encode(&g);
    assert!(matches!(
        g.apply(STROZZI, &pb::Action::default()),
        Err(ActionError::Malformed(_))
    ));
    assert!(matches!(
        g.apply(STROZZI, &load(6, Some(0))),
        Err(ActionError::Malformed(_))
    ));
    assert!(matches!(
        g.apply(STROZZI, &load(3, Some(3))),
        Err(ActionError::Malformed(_))
    ));
    assert!(matches!(
        g.apply(MEDICI, &discard()),
        Err(ActionError::NotYourTurn { rule: "§B4", .. })
    ));
    assert!(matches!(
        g.apply(9, &discard()),
        Err(ActionError::NotYourTurn { .. })
    ));
    assert_eq!(encode(&g), before);
    // The other illegal kinds (§B4 M3, §B4 M4, §B4 M7, harbour rules) are asserted in the
    // scenario tests above.
}

// ---------------------------------------------------------------------------------------------
// Hidden information.

#[test]
fn views_and_events_never_reveal_the_draw_order() {
    let mut g = game();
    ok(&mut g, MEDICI, draw());
    let views: Vec<pb::View> = [
        Viewer::Seat(MEDICI),
        Viewer::Seat(STROZZI),
        Viewer::Spectator,
    ]
    .iter()
    .map(|&v| g.view(v))
    .collect();
    assert!(
        views.iter().all(|v| *v == views[0]),
        "nothing is private: all viewers see the same"
    );
    assert_eq!(views[0].bag_count, 25);
    // Resampling the hidden RNG leaves every view unchanged but changes what comes next.
    let mut next_tiles = std::collections::BTreeSet::new();
    for n in 0..20 {
        let mut other = g.resample_hidden(Viewer::Spectator, &Seed::from_u64(1000 + n));
        for viewer in [
            Viewer::Seat(MEDICI),
            Viewer::Seat(STROZZI),
            Viewer::Spectator,
        ] {
            assert_eq!(other.view(viewer), g.view(viewer));
        }
        let events = ok(&mut other, MEDICI, draw());
        if let Some(Ev::TileDrawn(d)) = &events[0].kind {
            next_tiles.insert((d.tile.expect("tile").goods, d.tile.expect("tile").value));
        }
    }
    assert!(
        next_tiles.len() > 1,
        "the next draw depends on the (hidden) RNG only"
    );
    // The bag is kept sorted, so the state holds no draw order outside the RNG.
    assert!(g.bag.is_sorted());
    // Events carry only public facts and are the same for every viewer.
    let events = ok(&mut g, MEDICI, offer(3));
    for viewer in [Viewer::Seat(STROZZI), Viewer::Spectator] {
        assert_eq!(
            MediciVsStrozzi::redact_event(&events[0], viewer).as_ref(),
            Some(&events[0])
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Random play.

fn random_games(
    option: pb::MarkerMovement,
    max_price: u32,
    seeds: std::ops::Range<u64>,
    checks: Checks,
) -> usize {
    let config = pb::Config {
        marker_movement: option as i32,
        max_price,
    };
    let mut finished = 0;
    for i in seeds {
        let game = play::<MediciVsStrozzi>(&config, Seed::from_u64(i), 2_000, checks)
            .unwrap_or_else(|e| panic!("{option:?} seed {i}: {e}"));
        let state = &game.final_state;
        assert_eq!(state.round(), ROUNDS);
        assert_eq!(
            game.outcome.scores,
            state.players.iter().map(|p| p.money).collect::<Vec<_>>()
        );
        finished += 1;
    }
    finished
}

/// 10,000+ seeded games over both marker options and two price caps, every one checked for the
/// invariants after every action; a fifth of them also get the standard contract checks.
#[test]
fn random_play_keeps_the_invariants() {
    let light = Checks {
        invariants: true,
        deep_every: 0,
        replay: false,
    };
    let mut games = 0;
    games += random_games(pb::MarkerMovement::Net, 0, 0..1_000, Checks::STANDARD);
    games += random_games(
        pb::MarkerMovement::Sequential,
        0,
        1_000..2_000,
        Checks::STANDARD,
    );
    games += random_games(pb::MarkerMovement::Net, 0, 2_000..4_000, light);
    games += random_games(pb::MarkerMovement::Sequential, 30, 4_000..7_000, light);
    games += random_games(pb::MarkerMovement::Net, 15, 7_000..8_500, light);
    games += random_games(pb::MarkerMovement::Sequential, 0, 8_500..10_000, light);
    assert_eq!(games, 10_000);
}
