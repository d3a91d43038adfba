//! The rulebook's worked examples (spec B5 and the B7 scoring example), step by step.

use super::*;

/// Spec B5: Medici draws 2 tiles and asks 7; Strozzi declines; Medici pays 7, loads both tiles on
/// one ship and places it; Medici draws next.
#[test]
fn b5_rulebook_example() {
    let mut g = game();
    let mut drawn = Vec::new();
    for _ in 0..2 {
        let events = apply_ok(&mut g, MEDICI, &draw());
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
        apply_ok(&mut g, MEDICI, &offer(7)),
        vec![pb::Event {
            kind: Some(Ev::LotOffered(pb::LotOffered {
                seat: MEDICI,
                price: 7
            }))
        }]
    );
    assert_eq!(g.to_act(), Some(STROZZI));
    assert_eq!(
        apply_ok(&mut g, STROZZI, &decline()),
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
    let events = apply_ok(&mut g, MEDICI, &load(4, Some(1)));
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
        ship.tiles.iter().map(|t| t.to_pb()).collect::<Vec<_>>(),
        drawn
    );
    assert_eq!(g.stage(), Stage::Drawing);
    assert_eq!(g.to_act(), Some(MEDICI), "the buyer draws next");
    assert_eq!(g.bag.len(), 24);
    assert!(g.lot.is_empty());

    // The same ship takes a later lot where it stands; it is not placed again.
    apply_ok(&mut g, MEDICI, &draw());
    apply_ok(&mut g, MEDICI, &offer(0));
    apply_ok(&mut g, STROZZI, &decline());
    let events = apply_ok(&mut g, MEDICI, &load(4, None));
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
        goods: goods.to_pb() as i32,
        from_position: 0,
        to_position: to,
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
