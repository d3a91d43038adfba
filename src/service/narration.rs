//! Sentences and button labels for a response whose request asked for them (`narrate` on
//! Observe, GetView and Act; `crate::narration` writes them). They are written from what the
//! response already holds, after redaction for its viewer, so they can say no more than it does.

use super::cache::Game;
use super::players;
use crate::games::Viewer;
use crate::proto::v1 as pb;

/// Fills `Event.text` of `events` and `LegalAction.label` of `legal` (the legal actions of
/// `viewer`), naming seats by the game's players.
pub fn narrate(
    game: &Game,
    viewer: Viewer,
    events: &mut [pb::Event],
    legal: &mut [pb::LegalAction],
) {
    let names = game
        .state
        .names(&players::of_game(&game.meta, &*game.state));
    for event in events {
        if let Some(text) = game.state.event_text(event, &names) {
            event.text = text;
        }
    }
    game.state.label_legal_actions(viewer, legal, &names);
}
