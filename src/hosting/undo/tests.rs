//! Undo over every game: random play in which seats keep asking to take moves back (and the
//! others accept), checking after every undo that every viewer sees exactly what it saw at the
//! version gone back to, and that the kept moves survive a snapshot.

use crate::games::common::GameRng;
use crate::games::{Seed, Viewer};
use crate::hosting::{GameState, registry, restore, setup};
use crate::proto::v1 as pb;

fn table(kind: pb::table_action::Kind) -> pb::Action {
    pb::Action {
        game: Some(pb::action::Game::Table(pb::TableAction {
            kind: Some(kind),
        })),
    }
}

/// Everything the viewers see of `state`: each seat's and the spectators' views and listings, and
/// the status (without the request being answered).
fn seen(state: &dyn GameState) -> String {
    let mut status = state.status();
    status.undo_request = None;
    let viewers = (0..state.seat_count())
        .map(Viewer::Seat)
        .chain(std::iter::once(Viewer::Spectator));
    let mut seen = format!("{status:?}");
    for viewer in viewers {
        seen.push_str(&format!(
            "{:?}{:?}",
            state.view(viewer),
            state.legal_actions(viewer)
        ));
    }
    seen
}

#[test]
fn every_undo_returns_every_viewer_to_the_version_it_names() {
    let mut undone = 0;
    let mut requested = 0;
    for game in registry() {
        for game_seed in 0..12u64 {
            let config = pb::GameConfig {
                game: Some(game.config_case(game.game_type.min_seats)),
                table: Some(pb::TableConfig {
                    undo: pb::UndoPolicy::WithConsent as i32,
                    ..Default::default()
                }),
            };
            let mut state = setup(&config, &Seed::from_u64(game_seed)).expect("setup");
            let mut rng = GameRng::from_seed(&Seed::from_u64(1_000 + game_seed));
            let mut history = vec![seen(&*state)];
            let apply = |state: &mut Box<dyn GameState>, seat, action: &pb::Action| {
                let events = state.apply(seat, action);
                if events.is_ok() {
                    // The kept moves survive a snapshot.
                    let restored = restore(game.kind, &state.encode()).expect("restores");
                    assert_eq!(restored.hashed_encoding(), state.hashed_encoding());
                }
                events
            };
            for _ in 0..3_000 {
                let Some(seat) = state.status().to_act else {
                    break;
                };
                if rng.index(4) == 0 {
                    let asked = apply(
                        &mut state,
                        seat,
                        &table(pb::table_action::Kind::Undo(Default::default())),
                    );
                    let Ok(mut events) = asked else {
                        continue;
                    };
                    history.push(seen(&*state));
                    if let Some(request) = state.status().undo_request {
                        requested += 1;
                        for other in request.waiting_for {
                            events = apply(
                                &mut state,
                                other,
                                &table(pb::table_action::Kind::AcceptUndo(Default::default())),
                            )
                            .expect("an acceptance");
                            history.push(seen(&*state));
                        }
                    }
                    let to_version = events
                        .iter()
                        .find_map(|event| match &event.game {
                            Some(pb::event::Game::Table(pb::TableEvent {
                                kind: Some(pb::table_event::Kind::MovesTakenBack(back)),
                            })) => Some(back.to_version),
                            _ => None,
                        })
                        .expect("the moves were taken back");
                    assert_eq!(
                        history.last(),
                        history.get(to_version as usize),
                        "{} seed {game_seed}: the undo to version {to_version} shows another game",
                        game.game_type.name
                    );
                    undone += 1;
                    continue;
                }
                let legal = state.legal_actions(Viewer::Seat(seat));
                let action = legal[rng.index(legal.len())]
                    .action
                    .clone()
                    .expect("an action");
                apply(&mut state, seat, &action).expect("a legal move");
                history.push(seen(&*state));
            }
        }
    }
    assert!(undone > 100, "only {undone} undos");
    assert!(requested > 10, "only {requested} requests");
}
