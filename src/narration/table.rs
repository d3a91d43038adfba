//! The table's entries in words, the same in every game: resignations, timeouts, bots taking
//! seats, invitations, undos, an abort and the table's end of the game.

use super::Names;
use crate::proto::v1 as pb;
use pb::table_event::Kind;

/// What a table event tells a person (see [`super::Narrate::event_text`]).
pub fn table_event_text(event: &pb::TableEvent, names: &Names) -> Option<String> {
    Some(match event.kind.as_ref()? {
        Kind::SeatResigned(resigned) if resigned.forfeit => format!(
            "{} forfeits the game: their time ran out.",
            names.seat(resigned.seat)
        ),
        Kind::SeatResigned(resigned) => format!("{} resigns.", names.seat(resigned.seat)),
        Kind::SeatTimedOut(timed_out) => {
            let name = names.seat(timed_out.seat);
            match pb::TimeoutPolicy::try_from(timed_out.policy) {
                Ok(pb::TimeoutPolicy::Forfeit) => format!("{name} ran out of time."),
                _ => format!("{name} ran out of time: the server moves for them."),
            }
        }
        Kind::DefaultActionPlayed(played) if played.timed_out => {
            format!(
                "The server plays {}'s default move.",
                names.seat(played.seat)
            )
        }
        Kind::DefaultActionPlayed(played) => format!(
            "{} has resigned: the server plays their default move.",
            names.seat(played.seat)
        ),
        Kind::GameAborted(aborted) => {
            format!("The game was aborted: {}", with_stop(&aborted.reason))
        }
        Kind::GameEnded(ended) => match pb::GameEnding::try_from(ended.ending) {
            Ok(pb::GameEnding::Aborted) => "The game ends with no winner.".to_owned(),
            Ok(pb::GameEnding::Resignation) => {
                format!(
                    "The game is over: {} wins, everyone else resigned.",
                    names.list(&ended.winners)
                )
            }
            _ if ended.winners.is_empty() => "The game is over, with no winner.".to_owned(),
            _ => format!(
                "The game is over: {} {} (a seat that resigned never wins).",
                names.list(&ended.winners),
                if ended.winners.len() == 1 {
                    "wins"
                } else {
                    "win"
                }
            ),
        },
        Kind::SeatHandedToBot(handed) => {
            let seat = handed.bot.as_ref().map(|bot| bot.seat).unwrap_or_default();
            format!("A bot takes over {}'s seat.", names.seat(seat))
        }
        Kind::SeatJoined(joined) => {
            let player = joined.player.as_ref();
            let seat = player.map(|player| player.seat).unwrap_or_default();
            match player
                .map(|player| player.display_name.trim())
                .filter(|name| !name.is_empty())
            {
                Some(name) => format!("{name} joins the game as {}.", names.seat(seat)),
                None => format!("A player takes {}.", names.seat(seat)),
            }
        }
        Kind::GameStarted(_) => "Every seat is taken: the game starts.".to_owned(),
        Kind::UndoRequested(asked) => format!(
            "{} asks to take back the game to move {}; everyone still playing must agree.",
            names.seat(asked.seat),
            asked.to_version
        ),
        Kind::UndoAnswered(answer) if answer.accepted => {
            format!("{} agrees to take the moves back.", names.seat(answer.seat))
        }
        Kind::UndoAnswered(answer) => format!(
            "{} declines to take the moves back: the game goes on.",
            names.seat(answer.seat)
        ),
        Kind::MovesTakenBack(back) => format!(
            "{} takes back the game to move {}.",
            names.seat(back.seat),
            back.to_version
        ),
    })
}

/// `text` ending with a full stop (an operator's reason may lack one); "no reason given." when
/// empty.
fn with_stop(text: &str) -> String {
    let text = text.trim();
    if text.is_empty() {
        return "no reason given.".into();
    }
    if text.ends_with(['.', '!', '?']) {
        text.to_owned()
    } else {
        format!("{text}.")
    }
}
