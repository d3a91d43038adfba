//! The game in sentences: what each event says to a person, and what each legal move's button
//! says, in English, for clients that show a log or buttons without knowing the game (the web
//! page, the terminal client, a chat bot). Asked for with `narrate` on Observe, GetView and Act,
//! they arrive as `Event.text` and `LegalAction.label`.
//!
//! Each game writes its own words in its file here ([`Narrate`], one impl per game, in the game's
//! own terms: the board's names, prices, "hidden" for what the viewer may not see); the table's
//! entries (resign, join, undo, …) are worded once for every game in `table.rs`. Sentences are
//! written from events *as the viewer received them*: an event is redacted before it is
//! narrated, so a sentence can never say more than the event it comes from.
//!
//! Narration is presentation only: no rule reads it, nothing stored holds it, and a log verifies
//! the same with or without it.

mod la_strada;
mod manila;
mod medici_vs_strozzi;
#[cfg(feature = "nim")]
mod nim;
mod strozzi;
mod table;

#[cfg(test)]
mod tests;

use crate::games::{Engine, Seat};
use crate::proto::v1 as pb;

pub use table::table_event_text;

/// A game's words: how its events read in a log, and how its legal moves read on buttons.
pub trait Narrate: Engine {
    /// The board's own name for `seat` when the player gave none (Medici vs Strozzi's seats are
    /// the Medici and the Strozzi); `None`: "Seat N".
    fn seat_name(_seat: Seat) -> Option<&'static str> {
        None
    }

    /// What `event` tells a person, as one or more whole sentences (each starting with a capital
    /// and ending with a full stop), naming seats by `names` and things by the board's names.
    /// `event` is as its viewer received it: a value the viewer may not see is redacted, and the
    /// sentence says it is hidden ("a face-down share"), never that it is nothing. An event that
    /// ends a round, a voyage or the game also sums it up: who scored what, and why.
    /// `None` only for an event that tells nothing the log needs (it repeats another).
    fn event_text(event: &Self::Event, names: &Names) -> Option<String>;

    /// How the button for `action`, a legal move of the seat whose `view` this is, reads: a short
    /// imperative phrase with no full stop ("Buy a silk share for 15 pesos", "Pass"), naming
    /// things as the board does and saying what the move costs or gains when the view tells.
    /// Distinct moves of one decision get distinct labels. For a move that takes an amount (a
    /// bid), the label names the move without the amount ("Bid"): the client asks for it.
    fn choice_label(action: &Self::Action, view: &Self::View, names: &Names) -> String;
}

/// How sentences name the seats: each player's display name, else the board's name for the seat,
/// else "Seat N".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Names {
    seats: Vec<String>,
}

impl Names {
    /// Names for a table of `seat_count` seats with these `players` (any order; unnamed seats
    /// get `board_name`'s name, else "Seat N").
    pub fn new(
        seat_count: u32,
        players: &[pb::Player],
        board_name: impl Fn(Seat) -> Option<&'static str>,
    ) -> Names {
        let seats = (0..seat_count)
            .map(|seat| {
                players
                    .iter()
                    .find(|player| player.seat == seat && !player.display_name.trim().is_empty())
                    .map(|player| player.display_name.trim().to_owned())
                    .or_else(|| board_name(seat).map(str::to_owned))
                    .unwrap_or_else(|| format!("Seat {seat}"))
            })
            .collect();
        Names { seats }
    }

    /// Plain "Seat N" names for `seat_count` seats (tests, logs without players).
    pub fn numbered(seat_count: u32) -> Names {
        Names::new(seat_count, &[], |_| None)
    }

    /// The name of `seat` ("Seat N" for a seat the table does not have).
    pub fn seat(&self, seat: Seat) -> String {
        self.seats
            .get(seat as usize)
            .cloned()
            .unwrap_or_else(|| format!("Seat {seat}"))
    }

    /// Several seats in words: "Alice", "Alice and Ben", "Alice, Ben and Cleo"; "nobody".
    pub fn list(&self, seats: &[Seat]) -> String {
        let names: Vec<String> = seats.iter().map(|seat| self.seat(*seat)).collect();
        if names.is_empty() {
            return "nobody".into();
        }
        and_list(&names)
    }
}

/// Items in words: "a", "a and b", "a, b and c"; empty for none.
pub fn and_list(items: &[String]) -> String {
    match items.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// A count with its noun: "1 florin", "3 florins", "no florins".
pub fn count(n: impl Into<i128>, singular: &str, plural: &str) -> String {
    match n.into() {
        0 => format!("no {plural}"),
        1 => format!("1 {singular}"),
        n => format!("{n} {plural}"),
    }
}

/// `text` with its first letter a capital.
pub fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
