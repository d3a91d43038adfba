//! Data and setup (spec B1–B3): the provisional board file and the starting position.

use super::*;

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
    let raw: serde_json::Value = serde_json::from_str(include_str!("../board.json")).expect("json");
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
