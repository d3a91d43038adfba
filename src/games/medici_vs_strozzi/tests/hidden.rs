//! Hidden information (spec M14): nothing but the draw order is hidden, from anybody.

use super::*;

#[test]
fn views_and_events_never_reveal_the_draw_order() {
    let mut g = game();
    apply_ok(&mut g, MEDICI, &draw());
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
        let events = apply_ok(&mut other, MEDICI, &draw());
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
    let events = apply_ok(&mut g, MEDICI, &offer(3));
    for viewer in [Viewer::Seat(STROZZI), Viewer::Spectator] {
        assert_eq!(
            MediciVsStrozzi::redact_event(&events[0], viewer),
            crate::games::Redaction::Public
        );
    }
}

#[test]
fn the_opening_events_start_round_one_with_medici() {
    let g = game();
    let opening = g.opening_events();
    assert_eq!(
        opening,
        vec![pb::Event {
            kind: Some(Ev::RoundStarted(pb::RoundStarted {
                round: 1,
                start_seat: MEDICI
            }))
        }]
    );
    for viewer in [
        Viewer::Seat(MEDICI),
        Viewer::Seat(STROZZI),
        Viewer::Spectator,
    ] {
        assert_eq!(
            MediciVsStrozzi::redact_event(&opening[0], viewer),
            crate::games::Redaction::Public
        );
    }
}

/// Actions are public in this game: every viewer sees each action exactly as it was taken.
#[test]
fn actions_are_seen_unredacted_by_everyone() {
    for action in [
        draw(),
        offer(7),
        buy(),
        decline(),
        load(4, Some(2)),
        discard(),
    ] {
        for author in [MEDICI, STROZZI] {
            for viewer in [
                Viewer::Seat(MEDICI),
                Viewer::Seat(STROZZI),
                Viewer::Spectator,
            ] {
                assert_eq!(
                    MediciVsStrozzi::redact_action(&action, author, viewer),
                    action
                );
            }
        }
    }
}
