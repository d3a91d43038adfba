//! Taking moves back (issue #30, item 3), after Board Game Arena's written undo policy, the same in
//! every game (`TableConfig.undo`):
//!
//! - **Own moves**: a seat takes back its own consecutive moves while the turn has not passed (it
//!   is still the seat to act) and none of them drew randomness or revealed hidden information
//!   ([`crate::games::Engine::may_take_back`], by default proved by resampling).
//! - **With consent**: anything else within the kept moves, if every other seat still playing
//!   agrees: the undo is then a request that each of them accepts or declines, each answer a
//!   logged entry; the last acceptance takes the moves back. Any other entry withdraws it.
//!
//! An undo is an appended entry that the replay honours, never a truncation of the log: the table
//! keeps, beside the game, the state before each of the last [`MAX_KEPT_MOVES`] moves, and an
//! undo to version t makes the game exactly the state after entry t again, so every view and
//! event after it is what it was then. The kept states are part of the game's state (encoded in
//! snapshots and in the state hash of games with an undo policy), so every replica replaying the
//! log decides alike. A table entry other than an undo's (a resignation, a timeout, a hand-over, a
//! join) forgets them: moves are never taken back past one.

use prost::Message;
use serde::{Deserialize, Serialize};

use super::seating::Seating;
use super::table::{Table, table_event};
use crate::games::{ActionError, ConfigError, Engine, Seat};
use crate::proto::v1 as pb;

/// The most moves kept for taking back.
pub const MAX_KEPT_MOVES: usize = 16;

/// Cited by refusals of undo entries.
const UNDO_RULES: &str = "table rules: undo (Board Game Arena's policy)";

/// What a game's table allows ([`pb::UndoPolicy`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum Policy {
    OwnMoves,
    WithConsent,
}

/// The table and game before one move.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Before<E> {
    pub(super) table: Table,
    pub(super) engine: E,
    pub(super) seating: Option<Seating>,
}

/// One kept move: its entry's version, who made it, the move (encoded) and the state before it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Kept<E> {
    version: u64,
    author: Seat,
    action: Vec<u8>,
    before: Before<E>,
}

/// A request waiting for the other seats.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Pending {
    seat: Seat,
    to_version: u64,
    accepted: Vec<Seat>,
}

/// The undo state of a game with an undo policy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Takeback<E> {
    policy: Policy,
    /// The entries applied so far: the game's version.
    applied: u64,
    /// The kept moves, oldest first.
    kept: Vec<Kept<E>>,
    pending: Option<Pending>,
}

/// What an undo entry decided.
pub(super) enum Decision<E> {
    /// Go back: the state to restore, and the events to tell.
    GoBack(Box<Before<E>>, Vec<pb::Event>),
    /// Only the request changed (asked, accepted but not by all, declined).
    Events(Vec<pb::Event>),
}

impl<E: Engine> Takeback<E> {
    /// The undo state `config` asks for: `None` without an undo policy.
    pub(super) fn new(config: Option<&pb::TableConfig>) -> Result<Option<Self>, ConfigError> {
        let policy = config.map_or(0, |config| config.undo);
        let policy = match pb::UndoPolicy::try_from(policy) {
            Ok(pb::UndoPolicy::Unspecified) => return Ok(None),
            Ok(pb::UndoPolicy::OwnMoves) => Policy::OwnMoves,
            Ok(pb::UndoPolicy::WithConsent) => Policy::WithConsent,
            Err(_) => {
                return Err(ConfigError(format!(
                    "unknown table.undo {policy}: use UNDO_POLICY_OWN_MOVES or \
                     UNDO_POLICY_WITH_CONSENT (or leave it unset for no undo)"
                )));
            }
        };
        Ok(Some(Takeback {
            policy,
            applied: 0,
            kept: Vec::new(),
            pending: None,
        }))
    }

    /// Records a move just applied (`before` is the state before it): kept for taking back, and
    /// a pending request is withdrawn (the game moved on).
    pub(super) fn moved(&mut self, author: Seat, action: &E::Action, before: Before<E>) {
        self.applied += 1;
        self.pending = None;
        self.kept.push(Kept {
            version: self.applied,
            author,
            action: action.encode_to_vec(),
            before,
        });
        if self.kept.len() > MAX_KEPT_MOVES {
            self.kept.remove(0);
        }
    }

    /// Records a table entry just applied: an undo's own entries keep what they decided; any
    /// other forgets the kept moves and withdraws a request.
    pub(super) fn table_entry(&mut self, undo_entry: bool) {
        self.applied += 1;
        if !undo_entry {
            self.kept.clear();
            self.pending = None;
        }
    }

    /// The request waiting for answers, as the status shows it; `needed` are the seats whose
    /// answer counts (the seats still playing other than the requester).
    pub(super) fn request(&self, needed: &[Seat]) -> Option<pb::UndoRequest> {
        let pending = self.pending.as_ref()?;
        Some(pb::UndoRequest {
            seat: pending.seat,
            to_version: pending.to_version,
            accepted: pending.accepted.clone(),
            waiting_for: needed
                .iter()
                .copied()
                .filter(|seat| *seat != pending.seat && !pending.accepted.contains(seat))
                .collect(),
        })
    }

    /// `seat` asks to go back to `to_version` (unset: before its own last kept move). `to_act`
    /// is the seat to act now; `needed` the seats whose consent counts (still playing, not
    /// bots). Decides at once under the own-moves rule, else (with consent) makes a request.
    pub(super) fn ask(
        &mut self,
        seat: Seat,
        to_version: Option<u64>,
        to_act: Option<Seat>,
        needed: &[Seat],
    ) -> Result<Decision<E>, ActionError> {
        let to_version = match to_version {
            Some(version) => version,
            None => self
                .kept
                .iter()
                .rev()
                .find(|kept| kept.author == seat)
                .map(|kept| kept.version - 1)
                .ok_or_else(|| {
                    ActionError::illegal(
                        UNDO_RULES,
                        format!(
                            "seat {seat} has no move to take back since the last table entry \
                             (and within the last {MAX_KEPT_MOVES} moves)"
                        ),
                    )
                })?,
        };
        let first = self.first_after(to_version)?;
        let taken_back = &self.kept[first..];
        let own = taken_back.iter().all(|kept| kept.author == seat)
            && to_act == Some(seat)
            && taken_back.iter().all(|kept| {
                E::Action::decode(kept.action.as_slice())
                    .is_ok_and(|action| kept.before.engine.may_take_back(seat, &action))
            });
        let others: Vec<Seat> = needed.iter().copied().filter(|s| *s != seat).collect();
        if own || (self.policy == Policy::WithConsent && others.is_empty()) {
            return Ok(self.go_back(first, seat, to_version, Vec::new()));
        }
        if self.policy == Policy::OwnMoves {
            return Err(ActionError::illegal(
                UNDO_RULES,
                format!(
                    "seat {seat} may take back only its own moves since its turn began, while it \
                     is still to act, and none that drew or revealed anything; this game allows \
                     nothing more (UNDO_POLICY_OWN_MOVES)"
                ),
            ));
        }
        if let Some(pending) = &self.pending {
            return Err(ActionError::illegal(
                UNDO_RULES,
                format!(
                    "seat {}'s request to go back to version {} waits for answers: one request at \
                     a time",
                    pending.seat, pending.to_version
                ),
            ));
        }
        self.pending = Some(Pending {
            seat,
            to_version,
            accepted: Vec::new(),
        });
        Ok(Decision::Events(vec![table_event(
            pb::table_event::Kind::UndoRequested(pb::table_event::UndoRequested {
                seat,
                to_version,
            }),
        )]))
    }

    /// `seat` answers the pending request; the last acceptance goes back.
    pub(super) fn answer(
        &mut self,
        seat: Seat,
        accepted: bool,
        needed: &[Seat],
    ) -> Result<Decision<E>, ActionError> {
        let Some(pending) = &mut self.pending else {
            return Err(ActionError::illegal(
                UNDO_RULES,
                "no request to take moves back is waiting for an answer",
            ));
        };
        if seat == pending.seat || !needed.contains(&seat) {
            return Err(ActionError::illegal(
                UNDO_RULES,
                format!(
                    "seat {seat}'s answer is not asked for: the other seats still playing answer"
                ),
            ));
        }
        if pending.accepted.contains(&seat) {
            return Err(ActionError::illegal(
                UNDO_RULES,
                format!("seat {seat} has already accepted"),
            ));
        }
        let answered = table_event(pb::table_event::Kind::UndoAnswered(
            pb::table_event::UndoAnswered { seat, accepted },
        ));
        if !accepted {
            self.pending = None;
            return Ok(Decision::Events(vec![answered]));
        }
        pending.accepted.push(seat);
        let all = needed
            .iter()
            .all(|other| *other == pending.seat || pending.accepted.contains(other));
        if !all {
            return Ok(Decision::Events(vec![answered]));
        }
        let (requester, to_version) = (pending.seat, pending.to_version);
        let first = self.first_after(to_version)?;
        Ok(self.go_back(first, requester, to_version, vec![answered]))
    }

    /// The position of the first kept move after `to_version`: refused when moves after it are
    /// not all kept, or there is none.
    fn first_after(&self, to_version: u64) -> Result<usize, ActionError> {
        if to_version >= self.applied {
            return Err(ActionError::illegal(
                UNDO_RULES,
                format!(
                    "version {to_version} is not in the past: the game is at version {}",
                    self.applied
                ),
            ));
        }
        let oldest = self
            .kept
            .first()
            .map_or(self.applied + 1, |kept| kept.version);
        if to_version + 1 < oldest {
            return Err(ActionError::illegal(
                UNDO_RULES,
                format!(
                    "the game cannot go back to version {to_version}: moves are kept from version \
                     {oldest} on (at most the last {MAX_KEPT_MOVES}, and none before a table \
                     entry)"
                ),
            ));
        }
        self.kept
            .iter()
            .position(|kept| kept.version > to_version)
            .ok_or_else(|| {
                ActionError::illegal(
                    UNDO_RULES,
                    format!("no move was made after version {to_version}: nothing to take back"),
                )
            })
    }

    /// Goes back to the state before kept move `first`: that state is returned, and the moves
    /// from it on are forgotten.
    fn go_back(
        &mut self,
        first: usize,
        seat: Seat,
        to_version: u64,
        mut events: Vec<pb::Event>,
    ) -> Decision<E> {
        let mut taken_back = self.kept.split_off(first);
        self.pending = None;
        let before = taken_back.swap_remove(0).before;
        events.push(table_event(pb::table_event::Kind::MovesTakenBack(
            pb::table_event::MovesTakenBack { seat, to_version },
        )));
        Decision::GoBack(Box::new(before), events)
    }
}

#[cfg(test)]
mod tests;
