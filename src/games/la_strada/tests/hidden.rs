//! Hidden information (docs/rules/la-strada.md "Hidden information"): every viewer receives the
//! same, and the generic information-set proof over every option combination.

use super::*;

#[test]
fn views_hide_nothing_and_reveal_nothing_secret() {
    let mut state = example_game();
    apply_ok(&mut state, GREY, &road(GREY_WORKSHOP, &[(-3, 6)], TOWN));
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

#[test]
fn every_viewer_receives_the_same_actions_events_and_views() {
    let config = config(3);
    for seed in 0..5 {
        let game: RandomGame<LaStrada> =
            play(&config, Seed::from_u64(seed), 2_000, Checks::NONE).expect("ends");
        let viewers = [0, 1, 2]
            .map(Viewer::Seat)
            .into_iter()
            .chain([Viewer::Spectator]);
        for (before, seat, action, events) in replay_steps(&config, seed, &game) {
            for viewer in viewers.clone() {
                assert_eq!(LaStrada::redact_action(&action, seat, viewer), action);
                for event in &events {
                    assert_eq!(
                        LaStrada::redact_event(event, viewer),
                        crate::games::Redaction::Public
                    );
                }
                assert_eq!(before.view(viewer), before.view(Viewer::Spectator));
            }
        }
    }
}

/// Every option combination a config can name, one per seed in turn: the information-set proof
/// must hold under each rule variant.
fn option_variant(players: u32, seed: u64) -> pb::Config {
    // 3 curves × 2 end budgets × 2 first-turn rules × 2 spacing rules.
    let variant = seed % 24;
    let pick = |divisor: u64, count: u64| (variant / divisor % count) as usize;
    pb::Config {
        players,
        curve: [pb::Curve::Gentle, pb::Curve::Sharp, pb::Curve::Both][pick(1, 3)] as i32,
        end_budget: [pb::EndBudget::Cap, pb::EndBudget::Current][pick(3, 2)] as i32,
        two_player_first_turn: [
            pb::TwoPlayerFirstTurn::SecondPlacer,
            pb::TwoPlayerFirstTurn::FirstPlacer,
        ][pick(6, 2)] as i32,
        workshop_spacing: [pb::WorkshopSpacing::OtherPlayers, pb::WorkshopSpacing::All][pick(12, 2)]
            as i32,
    }
}

/// The generic information-set proof (`Checks::HIDDEN`) at every action of `games` seeded games:
/// every viewer's view, own legal actions, redacted actions and events are unchanged when what is
/// hidden from it (the RNG's future) is redrawn.
fn hidden_information_games(players: u32, games: u64) {
    for seed in 0..games {
        let config = option_variant(players, seed);
        play::<LaStrada>(&config, Seed::from_u64(seed), 2_000, Checks::HIDDEN)
            .unwrap_or_else(|e| panic!("{players} players, seed {seed}, {config:?}: {e}"));
    }
}

// Game counts: 2,000 seeded games per player count, spread over all 24 option combinations (the
// issue's "thousands"). Every action of every game is checked for every viewer, and each check
// builds about four views per viewer (169 board hexes each) and several road listings, so each
// test takes some 30-55 s of CPU in the test profile.
#[test]
fn hidden_information_2_players() {
    hidden_information_games(2, 2_000);
}

#[test]
fn hidden_information_3_players() {
    hidden_information_games(3, 2_000);
}

#[test]
fn hidden_information_4_players() {
    hidden_information_games(4, 2_000);
}
