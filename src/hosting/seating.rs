//! Open seats (issue #30, item 1): seats left open at creation for players who join later with an
//! invitation code, the same in every game.
//!
//! A game created with `TableConfig.open_seats` waits until no seat is open: nobody acts, no
//! clock runs, and only three entries are accepted, all appended by the server:
//!
//! - **Join** (JoinGame): an invited player takes one open seat, named or (an invitation to any
//!   open seat) the lowest still open. Each invitation joins once: the entry names it, and a
//!   second entry naming it is refused, so of callers racing with one code, or for the last
//!   seat, the conditional append lets exactly one in. The entry carries the hash of the seat's
//!   new token, so that the seat's token comes from the log like everything else.
//! - **Fill open seats** (FillOpenSeats, asked by the game's creator): a bot takes every open seat.
//! - **Abort** (EndGame, abandonment), as in a running game.
//!
//! The entry that takes the last open seat starts the game ([`pb::table_event::GameStarted`]).
//! Which invitation may take which seat, and until when, is the service's to check against the
//! game's meta (the codes are secret and never enter the log); the log's part is the race.

use serde::{Deserialize, Serialize};

use crate::games::{ActionError, ConfigError, Seat};
use crate::proto::v1 as pb;

/// Cited by refusals of seating entries.
const SEATING_RULES: &str = "table rules: open seats";

/// A player who took an open seat.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Joined {
    pub(super) seat: Seat,
    /// SHA-256 of the seat's token since the join.
    pub(super) token_hash: [u8; 32],
    pub(super) display_name: String,
    pub(super) external_id: String,
}

/// The seats of a game created with open seats: which are still open, which invitations were
/// used, and who joined.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Seating {
    /// Seats not yet taken, in seat order.
    open: Vec<Seat>,
    /// The invitations used, in the order they were.
    used_invitations: Vec<u32>,
    /// The seats taken by a join, in the order they were.
    joined: Vec<Joined>,
}

impl Seating {
    /// The seating `config` asks for at a table of `seats` seats whose bot seats are `is_bot`:
    /// `None` for a game without open seats.
    pub(super) fn new(
        config: Option<&pb::TableConfig>,
        seats: u32,
        is_bot: impl Fn(Seat) -> bool,
    ) -> Result<Option<Seating>, ConfigError> {
        let requested = config.map_or(&[][..], |config| &config.open_seats[..]);
        if requested.is_empty() {
            return Ok(None);
        }
        let mut open: Vec<Seat> = Vec::with_capacity(requested.len());
        for &seat in requested {
            if seat >= seats {
                return Err(ConfigError(format!(
                    "table.open_seats names seat {seat}; this game has {seats} seats, numbered 0 \
                     to {}",
                    seats.saturating_sub(1)
                )));
            }
            if open.contains(&seat) {
                return Err(ConfigError(format!(
                    "table.open_seats names seat {seat} twice"
                )));
            }
            if is_bot(seat) {
                return Err(ConfigError(format!(
                    "seat {seat} is both open and a bot seat (table.bots): a bot needs no invitation"
                )));
            }
            open.push(seat);
        }
        open.sort_unstable();
        Ok(Some(Seating {
            open,
            used_invitations: Vec::new(),
            joined: Vec::new(),
        }))
    }

    /// The seats still open, in seat order.
    pub(super) fn open(&self) -> &[Seat] {
        &self.open
    }

    /// True while a seat is open: the game has not started.
    pub(super) fn waiting(&self) -> bool {
        !self.open.is_empty()
    }

    /// Whether invitation `invitation` took a seat.
    pub(super) fn invitation_used(&self, invitation: u32) -> bool {
        self.used_invitations.contains(&invitation)
    }

    /// The players who joined, in the order they did.
    pub(super) fn joined(&self) -> &[Joined] {
        &self.joined
    }

    /// The hash of the token `seat` got when it joined, if it joined.
    pub(super) fn token_hash(&self, seat: Seat) -> Option<&[u8; 32]> {
        self.joined
            .iter()
            .find(|joined| joined.seat == seat)
            .map(|joined| &joined.token_hash)
    }

    /// A join: takes the seat, or refuses with the reason a joiner can act on. The events say
    /// who joined and, for the last seat, that the game started.
    pub(super) fn join(&mut self, join: &pb::table_action::Join) -> Result<(), ActionError> {
        if self.invitation_used(join.invitation) {
            return Err(used(join.invitation));
        }
        let seat = match join.seat {
            Some(seat) => {
                if !self.open.contains(&seat) {
                    return Err(ActionError::illegal(
                        SEATING_RULES,
                        format!("seat {seat} is not open: it was taken, or never open"),
                    ));
                }
                seat
            }
            None => *self.open.first().ok_or_else(|| {
                ActionError::illegal(SEATING_RULES, "no seat is open: the table is full")
            })?,
        };
        let token_hash: [u8; 32] = join.token_hash.as_slice().try_into().map_err(|_| {
            ActionError::malformed(format!(
                "join.token_hash is {} bytes; a SHA-256 hash is 32",
                join.token_hash.len()
            ))
        })?;
        let player = join.player.clone().unwrap_or_default();
        self.open.retain(|open| *open != seat);
        self.used_invitations.push(join.invitation);
        self.joined.push(Joined {
            seat,
            token_hash,
            display_name: player.display_name,
            external_id: player.external_id,
        });
        Ok(())
    }

    /// Takes every open seat for a bot: the seats taken, in seat order.
    pub(super) fn fill(&mut self) -> Vec<Seat> {
        std::mem::take(&mut self.open)
    }

    /// The event of the last join.
    pub(super) fn joined_event(&self) -> Option<pb::Event> {
        let joined = self.joined.last()?;
        Some(super::table::table_event(
            pb::table_event::Kind::SeatJoined(pb::table_event::SeatJoined {
                player: Some(pb::Player {
                    seat: joined.seat,
                    display_name: joined.display_name.clone(),
                    external_id: joined.external_id.clone(),
                }),
            }),
        ))
    }
}

/// Why a join or a fill is refused once the game has started: the invitation was used (whoever
/// raced with it lost), or the table is full; or the game never had open seats.
pub(super) fn late_for_seats(
    seating: Option<&Seating>,
    join: Option<&pb::table_action::Join>,
) -> ActionError {
    let Some(seating) = seating else {
        return ActionError::illegal(
            SEATING_RULES,
            "this game has no open seats (TableConfig.open_seats)",
        );
    };
    if let Some(join) = join
        && seating.invitation_used(join.invitation)
    {
        return used(join.invitation);
    }
    ActionError::illegal(
        SEATING_RULES,
        "no seat is open: the table is full and the game has started",
    )
}

fn used(invitation: u32) -> ActionError {
    ActionError::illegal(
        SEATING_RULES,
        format!("invitation {invitation} has been used: each invitation takes one seat"),
    )
}

/// Why an entry other than a seating one is refused while seats are open.
pub(super) fn waiting_refusal(open: &[Seat]) -> ActionError {
    let seats: Vec<String> = open.iter().map(|seat| seat.to_string()).collect();
    ActionError::illegal(
        SEATING_RULES,
        format!(
            "the game has not started: seat{} {} {} open (JoinGame takes an open seat; the \
             creator's FillOpenSeats gives the rest to bots)",
            if open.len() == 1 { "" } else { "s" },
            seats.join(", "),
            if open.len() == 1 { "is" } else { "are" }
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seating(open: &[u32]) -> Seating {
        Seating::new(
            Some(&pb::TableConfig {
                open_seats: open.to_vec(),
                ..Default::default()
            }),
            4,
            |seat| seat == 3,
        )
        .expect("valid")
        .expect("open seats")
    }

    fn join(seat: Option<u32>, invitation: u32) -> pb::table_action::Join {
        pb::table_action::Join {
            seat,
            invitation,
            token_hash: vec![7; 32],
            player: None,
        }
    }

    #[test]
    fn open_seats_are_checked_against_the_table() {
        let config = |open: Vec<u32>| pb::TableConfig {
            open_seats: open,
            ..Default::default()
        };
        let refused = |open: Vec<u32>| {
            Seating::new(Some(&config(open)), 4, |seat| seat == 3)
                .unwrap_err()
                .0
        };
        assert!(refused(vec![4]).contains("4 seats"));
        assert!(refused(vec![1, 1]).contains("twice"));
        assert!(refused(vec![3]).contains("bot"));
        assert_eq!(Seating::new(None, 4, |_| false).unwrap(), None);
    }

    #[test]
    fn each_invitation_joins_once_and_any_seat_takes_the_lowest() {
        let mut seating = seating(&[2, 0]);
        assert_eq!(seating.open(), &[0, 2]);
        seating.join(&join(None, 5)).expect("the lowest open seat");
        assert_eq!(seating.open(), &[2]);
        assert_eq!(seating.token_hash(0), Some(&[7; 32]));
        let used = seating.join(&join(Some(2), 5)).unwrap_err().to_string();
        assert!(used.contains("has been used"), "{used}");
        let taken = seating.join(&join(Some(0), 1)).unwrap_err().to_string();
        assert!(taken.contains("not open"), "{taken}");
        seating.join(&join(Some(2), 1)).expect("seat 2");
        assert!(!seating.waiting());
        let full = seating.join(&join(None, 2)).unwrap_err().to_string();
        assert!(full.contains("table is full"), "{full}");
    }

    #[test]
    fn a_malformed_token_hash_takes_no_seat() {
        let mut seating = seating(&[1]);
        let mut bad = join(Some(1), 0);
        bad.token_hash = vec![1; 31];
        assert!(matches!(seating.join(&bad), Err(ActionError::Malformed(_))));
        assert!(seating.waiting());
        assert!(!seating.invitation_used(0));
    }
}
