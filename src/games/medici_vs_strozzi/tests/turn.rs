//! The turn loop (spec B4, B6): the draw cap, harbours and ships, discards, the round end.

use super::*;
use crate::games::common::distinct_moves::distinct_at;

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
    apply_ok(&mut g, MEDICI, &draw());
    apply_ok(&mut g, MEDICI, &draw());
    assert_eq!(g.view(Viewer::Seat(MEDICI)).draw_limit, 0);
    let legal = g.legal_actions(MEDICI);
    assert!(
        !exact(&legal).contains(&draw()),
        "no DrawTile listed beyond the cap"
    );
    assert_eq!(legal.len(), 1, "only OfferLot remains");
    assert_illegal(&g, MEDICI, &draw(), "§B4 M3");

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
        apply_ok(&mut g, MEDICI, &draw());
    }
    assert_illegal(&g, MEDICI, &draw(), "§B4"); // never more than 3 tiles
}

#[test]
fn one_ship_per_harbour_and_ships_stay_put() {
    let mut g = game();
    apply_ok(&mut g, MEDICI, &draw());
    apply_ok(&mut g, MEDICI, &offer(1));
    apply_ok(&mut g, STROZZI, &decline());
    apply_ok(&mut g, MEDICI, &load(3, Some(0)));
    // Not full ships yet (M8): the round goes on although a ship is loaded.
    assert_eq!(g.round(), 1);
    apply_ok(&mut g, MEDICI, &draw());
    apply_ok(&mut g, MEDICI, &offer(1));
    apply_ok(&mut g, STROZZI, &decline());
    let listed = exact(&g.legal_actions(MEDICI));
    assert!(
        !listed.contains(&load(4, Some(0))),
        "harbour 0 already holds a Medici ship"
    );
    assert!(listed.contains(&load(4, Some(1))) && listed.contains(&load(5, Some(2))));
    // A placed ship's loading is listed once, with its harbour: one button for one move (issue
    // #31).
    assert!(listed.contains(&load(3, Some(0))) && !listed.contains(&load(3, None)));
    assert!(!listed.contains(&load(3, Some(1))));
    assert_illegal(&g, MEDICI, &load(4, Some(0)), "§B4"); // one ship per harbour per player
    assert_illegal(&g, MEDICI, &load(3, Some(1)), "§B4"); // a placed ship stays put
    assert_illegal(&g, MEDICI, &load(4, None), "§B4"); // an empty ship needs a harbour
    // Listed both ways, the two spellings are the duplicate the generic check finds.
    let mut both = g.legal_actions(MEDICI);
    both.push(LegalAction::Exact(load(3, None)));
    assert!(distinct_at(&g, MEDICI, &both).is_err());
    // The spelling without the harbour, which older logs hold, is still accepted, and it is
    // the same move: the same state, the same events.
    let mut unlisted = g.clone();
    let unlisted_events = apply_ok(&mut unlisted, MEDICI, &load(3, None));
    assert_eq!(apply_ok(&mut g, MEDICI, &load(3, Some(0))), unlisted_events);
    assert_eq!(encode(&g), encode(&unlisted));
    assert_eq!(g.player(MEDICI).ships[0].harbour, Some(0));
    assert_eq!(g.player(MEDICI).ships[0].tiles.len(), 2);

    // Strozzi may use harbour 0 as well: the rule is per player.
    apply_ok(&mut g, MEDICI, &draw());
    apply_ok(&mut g, MEDICI, &offer(0));
    apply_ok(&mut g, STROZZI, &buy());
    apply_ok(&mut g, STROZZI, &load(5, Some(0)));
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
    apply_ok(&mut g, MEDICI, &draw());
    apply_ok(&mut g, MEDICI, &draw());
    apply_ok(&mut g, MEDICI, &offer(5));
    apply_ok(&mut g, STROZZI, &buy());
    assert_eq!(
        g.player(STROZZI).money,
        295,
        "the buyer pays even if it cannot load (M4)"
    );
    assert_eq!(exact(&g.legal_actions(STROZZI)), vec![discard()]);
    assert_illegal(&g, STROZZI, &load(4, None), "§B4 M4");
    assert_illegal(&g, STROZZI, &load(5, Some(2)), "§B4 M4");
    let lot = g.lot.clone();
    let events = apply_ok(&mut g, STROZZI, &discard());
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
    apply_ok(&mut g, MEDICI, &draw());
    apply_ok(&mut g, MEDICI, &offer(0));
    apply_ok(&mut g, STROZZI, &decline());
    let events = apply_ok(&mut g, MEDICI, &load(5, None));
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
    apply_ok(&mut g, MEDICI, &draw());
    apply_ok(&mut g, MEDICI, &draw());
    assert!(!exact(&g.legal_actions(MEDICI)).contains(&draw()));
    assert_illegal(&g, MEDICI, &draw(), "§B4 M7");
    apply_ok(&mut g, MEDICI, &offer(12));
    apply_ok(&mut g, STROZZI, &buy());
    let events = apply_ok(&mut g, STROZZI, &load(3, Some(0)));
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
