//! What a viewer may receive of a game's events and logged actions (Act, Observe, ExportLog).
//! Views come from the engine's own `view` for the viewer, which applies the same rules.
//!
//! While a game runs, every piece of it that reaches a client goes through the engine's redaction
//! for that viewer: views, events, and logged actions (an action can carry what only its author
//! knows, like the ware of a share Manila's rules turn face down). Once the game has ended,
//! everything is public, as it is at a real table when the game is over and the cards are shown.

use super::cache::Game;
use crate::games::{Seat, Viewer};
use crate::hosting::SYSTEM_SEAT;
use crate::proto::v1 as pb;

/// How much `viewer` may see of one game at one version.
#[derive(Clone, Copy, Debug)]
pub struct Disclosure {
    viewer: Viewer,
    /// The game has ended: nothing is hidden any more.
    public: bool,
}

impl Disclosure {
    /// What `viewer` may see of `game` as it stands.
    pub fn of(game: &Game, viewer: Viewer) -> Disclosure {
        Disclosure {
            viewer,
            public: game.is_finished(),
        }
    }

    /// What `viewer` may see of a game that has (`ended`) or has not ended.
    pub fn with_end(viewer: Viewer, ended: bool) -> Disclosure {
        Disclosure {
            viewer,
            public: ended,
        }
    }

    /// `events` as the viewer may see them.
    pub fn events(&self, game: &Game, events: &[pb::Event]) -> Vec<pb::Event> {
        if self.public {
            events.to_vec()
        } else {
            game.state.redact(events, self.viewer)
        }
    }

    /// `action`, taken by `author`, as the viewer may see it.
    pub fn action(&self, game: &Game, author: Seat, action: &pb::Action) -> pb::Action {
        if self.public {
            action.clone()
        } else {
            game.state.redact_action(action, author, self.viewer)
        }
    }

    /// A logged action as the viewer may see it, logged at `server_time_ms` (public: no redaction).
    pub fn logged_action(
        &self,
        game: &Game,
        author: Seat,
        action: &pb::Action,
        server_time_ms: u64,
    ) -> pb::LoggedAction {
        pb::LoggedAction {
            seat: author,
            action: Some(self.action(game, author, action)),
            system: author == SYSTEM_SEAT,
            server_time_ms,
        }
    }
}
