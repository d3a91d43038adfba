//! Nim's words (the test game behind the `nim` feature).

use super::{Names, Narrate, count};
use crate::games::nim::Nim;
use crate::proto::nim::v1 as pb;

impl Narrate for Nim {
    fn event_text(event: &pb::Event, names: &Names) -> Option<String> {
        Some(match event.kind.as_ref()? {
            pb::event::Kind::Took(took) => format!(
                "{} takes {} from heap {}, leaving {}.",
                names.seat(took.seat),
                count(took.count, "stone", "stones"),
                took.heap + 1,
                took.left
            ),
            pb::event::Kind::Won(won) => {
                format!("{} takes the last stone and wins.", names.seat(won.seat))
            }
        })
    }

    fn choice_label(action: &pb::Action, _view: &pb::View, _names: &Names) -> String {
        format!(
            "Take {} from heap {}",
            count(action.count, "stone", "stones"),
            action.heap + 1
        )
    }
}
