//! Every game's words, checked over random play: every event every viewer receives reads as
//! sentences, every entry gives each viewer at least one line, and every decision's buttons read
//! as distinct phrases. A game's own file tests its worked examples (what a sentence says).

use std::collections::HashSet;

use super::Names;
use crate::games::common::rng::GameRng;
use crate::games::{Seed, Viewer};
use crate::hosting::{self, GameState, RegisteredGame};
use crate::proto::v1 as pb;

/// Signs that a sentence is a machine's: field dumps, debug forms, enum names, raw ids.
const ARTEFACTS: &[&str] = &[
    "{",
    "}",
    "_",
    "::",
    "Some(",
    "None",
    "UNSPECIFIED",
    "Unspecified",
    "[",
    "]",
    "\"",
    "  ",
];

fn check_words(text: &str, what: &str, sentence: bool) {
    assert!(!text.trim().is_empty(), "{what}: empty");
    for artefact in ARTEFACTS {
        assert!(
            !text.contains(artefact),
            "{what}: {text:?} contains {artefact:?}"
        );
    }
    let first = text.chars().next().unwrap_or(' ');
    assert!(
        first.is_uppercase() || first.is_ascii_digit(),
        "{what}: {text:?} does not start with a capital"
    );
    if sentence {
        assert!(
            text.ends_with(['.', '!', '?']),
            "{what}: {text:?} is not a whole sentence"
        );
    } else {
        assert!(
            !text.ends_with('.'),
            "{what}: {text:?}: a label has no full stop"
        );
    }
}

/// The viewers of a table of `seats`: each seat, then a spectator.
fn viewers(seats: u32) -> Vec<Viewer> {
    (0..seats)
        .map(Viewer::Seat)
        .chain([Viewer::Spectator])
        .collect()
}

fn check_events(state: &dyn GameState, events: &[pb::Event], names: &Names, what: &str) {
    for viewer in viewers(state.seat_count()) {
        let seen = state.redact(events, viewer);
        let lines: Vec<String> = seen
            .iter()
            .filter_map(|event| state.event_text(event, names))
            .collect();
        for line in &lines {
            check_words(line, &format!("{what}, {viewer:?}"), true);
        }
        if !seen.is_empty() {
            assert!(
                !lines.is_empty(),
                "{what}: {viewer:?} receives {seen:?} and reads nothing"
            );
        }
    }
}

fn check_labels(state: &dyn GameState, seat: u32, names: &Names, what: &str) {
    let mut legal = state.legal_actions(Viewer::Seat(seat));
    state.label_legal_actions(Viewer::Seat(seat), &mut legal, names);
    let mut seen = HashSet::new();
    for entry in &legal {
        check_words(
            &entry.label,
            &format!("{what}, a button of seat {seat}"),
            false,
        );
        assert!(
            seen.insert(entry.label.clone()),
            "{what}: two buttons read {:?}: {legal:?}",
            entry.label
        );
    }
}

/// Random play of `game` at `seats`, checking every entry's words.
fn play(game: &RegisteredGame, seats: u32, seed: u64) {
    let name = game.game_type.name;
    let mut state = hosting::setup(&game.config(seats), &Seed::from_u64(seed)).expect("setup");
    // Names as players give them, with one seat left to the board's or a number.
    let players: Vec<pb::Player> = (1..seats)
        .map(|seat| pb::Player {
            seat,
            display_name: format!("Player {seat}"),
            external_id: String::new(),
        })
        .collect();
    let names = state.names(&players);
    check_events(
        &*state,
        &state.opening_events(),
        &names,
        &format!("{name} setup"),
    );
    let mut rng = GameRng::from_seed(&Seed::from_u64(seed ^ 0x5eed));
    for step in 0..5_000 {
        let Some(seat) = state.status().to_act else {
            return;
        };
        let what = format!("{name} {seats}p seed {seed} step {step}");
        check_labels(&*state, seat, &names, &what);
        let legal = state.legal_actions(Viewer::Seat(seat));
        let chosen = &legal[rng.index(legal.len())];
        let action = chosen.action.clone().expect("an action");
        let events = state.apply(seat, &action).expect("a legal action applies");
        check_events(&*state, &events, &names, &what);
    }
    panic!("{name} did not end in 5000 moves");
}

fn play_many(name: &str, games: u64) {
    let game = hosting::find_game(name).expect("a game");
    for seats in game.game_type.seats() {
        for seed in 0..games {
            play(game, seats, seed);
        }
    }
}

#[test]
fn medici_vs_strozzi_reads_as_sentences() {
    play_many("medici_vs_strozzi", 40);
}

#[test]
fn strozzi_reads_as_sentences() {
    play_many("strozzi", 10);
}

#[test]
fn manila_reads_as_sentences() {
    play_many("manila", 10);
}

#[test]
fn la_strada_reads_as_sentences() {
    play_many("la_strada", 10);
}

#[test]
fn names_say_who_sits_where() {
    let players = [pb::Player {
        seat: 1,
        display_name: " Ben ".into(),
        external_id: String::new(),
    }];
    let names = Names::new(3, &players, |seat| (seat == 0).then_some("Medici"));
    assert_eq!(names.seat(0), "Medici");
    assert_eq!(names.seat(1), "Ben");
    assert_eq!(names.seat(2), "Seat 2");
    assert_eq!(names.list(&[0, 1, 2]), "Medici, Ben and Seat 2");
    assert_eq!(names.list(&[]), "nobody");
    assert_eq!(super::count(1, "florin", "florins"), "1 florin");
    assert_eq!(super::count(0, "florin", "florins"), "no florins");
}
