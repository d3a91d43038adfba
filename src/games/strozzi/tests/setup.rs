//! Data and setup (spec A1–A4, A6): the provisional component files and the starting position.

use super::*;

#[test]
fn data_files_parse_and_are_consistent() {
    for layout in [Layout::Short, Layout::Numbered] {
        let catalogue = data::catalogue(layout).expect("data files parse");
        catalogue.validate().expect("data files are consistent");
        assert_eq!(catalogue.cards.len(), 29);
        assert_eq!(catalogue.tiles.len(), 36);
        for category in Category::ALL {
            assert_eq!(
                catalogue
                    .tiles
                    .iter()
                    .filter(|t| t.category == category)
                    .count(),
                12
            );
        }
        for track in &catalogue.tracks {
            assert_eq!(
                track.bonus_at(track.top),
                Some(15),
                "the top space is the 15 bonus"
            );
        }
    }
    let short = data::catalogue(Layout::Short).expect("parses");
    assert_eq!(short.tracks[0].top, 10);
    assert_eq!(short.tracks[0].bonus_at(6), Some(5));
    assert_eq!(short.tracks[0].bonus_at(8), Some(10));
    let numbered = data::catalogue(Layout::Numbered).expect("parses");
    assert_eq!(numbered.tracks[3].top, 15);
    assert_eq!(numbered.tracks[3].bonus_at(5), Some(5));
    // Every file says it is provisional.
    for text in [
        include_str!("../ships.json"),
        include_str!("../progress_tiles.json"),
        include_str!("../tracks.json"),
    ] {
        assert!(text.contains("\"provisional\": true"));
    }
}

#[test]
fn validation_refuses_broken_data() {
    let good = data::catalogue(Layout::Short).expect("parses");
    let mut bad = good.clone();
    bad.cards.pop();
    assert!(bad.validate().is_err());
    let mut bad = good.clone();
    bad.cards[0].sails = 9;
    assert!(bad.validate().is_err());
    let mut bad = good.clone();
    bad.tiles[0].goods = None;
    assert!(bad.validate().is_err());
    let mut bad = good.clone();
    bad.tracks[1].bonus[2].coins = 20;
    assert!(bad.validate().is_err());
    let mut bad = good;
    bad.tracks[2].bonus[0].coins = 7;
    assert!(bad.validate().is_err());
}

#[test]
fn config_errors() {
    for players in [0, 1, 2, 7] {
        assert!(
            Strozzi::setup(&config(players), &Seed::from_u64(0)).is_err(),
            "{players} players"
        );
    }
    let bad_seat = pb::Config {
        players: 4,
        first_seat: 4,
        ..pb::Config::default()
    };
    assert!(Strozzi::setup(&bad_seat, &Seed::from_u64(0)).is_err());
    let bad_enum = pb::Config {
        players: 4,
        track_layout: 9,
        ..pb::Config::default()
    };
    assert!(Strozzi::setup(&bad_enum, &Seed::from_u64(0)).is_err());
}

#[test]
fn setup_follows_a6() {
    for players in 3..=6u32 {
        let state = new_game(&config(players), 7);
        // A6.4: 17/14/11/8 removed, 3·N+3 in the deck; one is already face up.
        assert_eq!(state.removed.len(), [17, 14, 11, 8][players as usize - 3]);
        assert_eq!(state.deck.len() + 1, 3 * players as usize + 3);
        // A6.3: three tiles face up.
        assert_eq!(state.display.len(), 3);
        assert_eq!(state.stack.len(), 33);
        // A6.1, S3: markers on the starting spaces, in seat order from the start player.
        for city in City::ALL {
            assert_eq!(
                state.tracks[city.index()][0],
                (0..players).collect::<Vec<_>>()
            );
        }
        // A6.2: no money; A5: three flags each.
        assert!(
            state
                .players
                .iter()
                .all(|p| p.money == 0 && p.flags.len() == 3)
        );
        assert_eq!(state.to_act(), Some(0));
        assert_eq!(state.active, 0);
    }
    let third = pb::Config {
        players: 4,
        first_seat: 2,
        ..pb::Config::default()
    };
    let state = new_game(&third, 7);
    assert_eq!(state.to_act(), Some(2));
    assert_eq!(state.tracks[City::Florence.index()][0], vec![2, 3, 0, 1]);
    let random = pb::Config {
        players: 5,
        random_first_seat: true,
        ..pb::Config::default()
    };
    let starts: std::collections::BTreeSet<Seat> =
        (0..40).map(|i| new_game(&random, i).active).collect();
    assert!(starts.len() > 1, "the seeded draw varies: {starts:?}");
}
