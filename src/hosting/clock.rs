//! Turn clocks (issue #14, item 1): how long the seat to act may take, derived from the server
//! times logged with each entry.
//!
//! The clock never changes what the game does: the rules never read it, and a timeout is an
//! ordinary logged entry ([`crate::proto::v1::TableAction`]) appended by the server. The clock
//! only says *when* the server should append one. Its state is a fold over the logged entries'
//! server times, so every replica that replays the same log computes the same deadline, and a
//! replay (VerifyLog) needs no clock at all: the clock is kept out of the state hash.
//!
//! A decision runs from the entry that made a seat the seat to act (or from the game's creation)
//! to that seat's next entry; each entry is one decision. Every game in this build has at most
//! one seat to act at a time (`Engine::to_act`), so a deadline concerns one seat.

use serde::{Deserialize, Serialize};

use crate::games::{ConfigError, Seat};
use crate::proto::v1 as pb;
use pb::turn_clock::Kind as ClockKind;

/// The shortest limit accepted: shorter than a round trip is no clock a player could meet.
pub const MIN_LIMIT_MS: u64 = 100;
/// The longest per-decision limit and Fischer bank accepted (7 days).
pub const MAX_LIMIT_MS: u64 = 7 * DAY_MS;
/// The largest Fischer increment accepted (1 day).
pub const MAX_INCREMENT_MS: u64 = DAY_MS;
/// Correspondence limits accepted, in days per decision.
pub const CORRESPONDENCE_DAYS: std::ops::RangeInclusive<u32> = 1..=60;
const DAY_MS: u64 = 24 * 3600 * 1000;

/// What the clock allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum Rule {
    /// The same limit for every decision (fixed or correspondence).
    PerDecision { limit_ms: u64 },
    /// A bank per seat plus an increment after each of its entries.
    Fischer { increment_ms: u64 },
}

/// A game's turn clock: its rule and where each seat stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Clock {
    rule: Rule,
    /// Each seat's bank (Fischer), as of the start of its current or next decision.
    banks_ms: Vec<u64>,
    /// When the current decision started: `None` until the first entry (the game's creation time,
    /// `created_at_ms`, is then the start).
    decision_started_ms: Option<u64>,
    /// When the game was created (the meta's `created_at_ms`): the start of the first decision.
    created_at_ms: u64,
}

impl Clock {
    /// The clock `config` asks for, for a table of `seats`; `None` for no clock.
    pub(super) fn new(
        config: Option<&pb::TableConfig>,
        seats: u32,
    ) -> Result<Option<Clock>, ConfigError> {
        let Some(kind) = config
            .and_then(|config| config.clock.as_ref())
            .and_then(|clock| clock.kind.as_ref())
        else {
            return Ok(None);
        };
        let in_bounds = |field: &str, value: u64, min: u64, max: u64| {
            if (min..=max).contains(&value) {
                Ok(value)
            } else {
                Err(ConfigError(format!(
                    "table.clock.{field} is {value}; it must be from {min} to {max} milliseconds"
                )))
            }
        };
        let (rule, bank_ms) = match kind {
            ClockKind::PerDecision(fixed) => {
                let limit_ms = in_bounds(
                    "per_decision.limit_ms",
                    fixed.limit_ms,
                    MIN_LIMIT_MS,
                    MAX_LIMIT_MS,
                )?;
                (Rule::PerDecision { limit_ms }, 0)
            }
            ClockKind::Fischer(fischer) => {
                let bank = in_bounds(
                    "fischer.initial_ms",
                    fischer.initial_ms,
                    MIN_LIMIT_MS,
                    MAX_LIMIT_MS,
                )?;
                let increment_ms = in_bounds(
                    "fischer.increment_ms",
                    fischer.increment_ms,
                    0,
                    MAX_INCREMENT_MS,
                )?;
                (Rule::Fischer { increment_ms }, bank)
            }
            ClockKind::Correspondence(correspondence) => {
                let days = correspondence.days_per_move;
                if !CORRESPONDENCE_DAYS.contains(&days) {
                    return Err(ConfigError(format!(
                        "table.clock.correspondence.days_per_move is {days}; it must be from {} \
                         to {}",
                        CORRESPONDENCE_DAYS.start(),
                        CORRESPONDENCE_DAYS.end()
                    )));
                }
                (
                    Rule::PerDecision {
                        limit_ms: u64::from(days) * DAY_MS,
                    },
                    0,
                )
            }
        };
        Ok(Some(Clock {
            rule,
            banks_ms: vec![bank_ms; seats as usize],
            decision_started_ms: None,
            created_at_ms: 0,
        }))
    }

    /// Sets the start of the first decision: the game's creation time (not part of the config,
    /// so not known at setup).
    pub(super) fn start(&mut self, created_at_ms: u64) {
        self.created_at_ms = created_at_ms;
    }

    /// Accounts for an entry logged at `at_ms` by `author` (a seat, or the server): `before` was
    /// the seat to act before it, `after` is the seat to act after it, and `timed_out` says the
    /// entry was the timeout of `before`.
    ///
    /// The decision of `before` ends when it acts, times out, or stops being the seat to act (the
    /// game ended, another seat's resignation moved play on); another seat's entry that leaves it
    /// to act (a resignation out of turn) does not interrupt its time. Fischer: the time spent
    /// leaves its bank, and its own entries earn the increment; a timeout empties the bank, and
    /// the increment is what the seat then has for its next decision.
    pub(super) fn tick(
        &mut self,
        author: Seat,
        before: Option<Seat>,
        after: Option<Seat>,
        timed_out: bool,
        at_ms: u64,
    ) {
        let Some(before) = before else {
            return;
        };
        let ended = author == before || timed_out || after != Some(before);
        if !ended {
            return;
        }
        let started = self.decision_started_ms.unwrap_or(self.created_at_ms);
        let spent = at_ms.saturating_sub(started);
        if let Rule::Fischer { increment_ms } = self.rule
            && let Some(bank) = self.banks_ms.get_mut(before as usize)
        {
            *bank = if timed_out {
                increment_ms
            } else if author == before {
                bank.saturating_sub(spent).saturating_add(increment_ms)
            } else {
                bank.saturating_sub(spent)
            };
        }
        self.decision_started_ms = Some(at_ms);
    }

    /// When `to_act`'s decision times out.
    pub(super) fn deadline_ms(&self, to_act: Seat) -> u64 {
        self.decision_started_ms()
            .saturating_add(self.allowance_ms(to_act))
    }

    /// When the current decision started.
    pub(super) fn decision_started_ms(&self) -> u64 {
        self.decision_started_ms.unwrap_or(self.created_at_ms)
    }

    /// How long `seat`'s decision may last from its start.
    fn allowance_ms(&self, seat: Seat) -> u64 {
        match self.rule {
            Rule::PerDecision { limit_ms } => limit_ms,
            Rule::Fischer { .. } => self.banks_ms.get(seat as usize).copied().unwrap_or(0),
        }
    }

    /// The clock as a view shows it at `now_ms`.
    pub(super) fn state(&self, to_act: Option<Seat>, now_ms: u64) -> pb::ClockState {
        let deadline_ms = to_act.map(|seat| self.deadline_ms(seat));
        let remaining_ms = (0..self.banks_ms.len() as Seat)
            .map(|seat| match (to_act, deadline_ms) {
                (Some(acting), Some(deadline)) if acting == seat => deadline.saturating_sub(now_ms),
                _ => self.allowance_ms(seat),
            })
            .collect();
        pb::ClockState {
            remaining_ms,
            deadline_ms,
            seat: deadline_ms.and(to_act),
            server_time_ms: now_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(kind: ClockKind) -> pb::TableConfig {
        pb::TableConfig {
            clock: Some(pb::TurnClock { kind: Some(kind) }),
            ..Default::default()
        }
    }

    fn fischer(initial_ms: u64, increment_ms: u64) -> Clock {
        Clock::new(
            Some(&table(ClockKind::Fischer(pb::turn_clock::Fischer {
                initial_ms,
                increment_ms,
            }))),
            2,
        )
        .expect("valid")
        .expect("a clock")
    }

    #[test]
    fn limits_out_of_bounds_are_refused_with_the_field() {
        let refused = [
            (
                ClockKind::PerDecision(pb::turn_clock::PerDecision { limit_ms: 99 }),
                "per_decision.limit_ms",
            ),
            (
                ClockKind::PerDecision(pb::turn_clock::PerDecision {
                    limit_ms: MAX_LIMIT_MS + 1,
                }),
                "per_decision.limit_ms",
            ),
            (
                ClockKind::Fischer(pb::turn_clock::Fischer {
                    initial_ms: 1000,
                    increment_ms: MAX_INCREMENT_MS + 1,
                }),
                "fischer.increment_ms",
            ),
            (
                ClockKind::Correspondence(pb::turn_clock::Correspondence { days_per_move: 0 }),
                "days_per_move",
            ),
        ];
        for (kind, field) in refused {
            let error = Clock::new(Some(&table(kind)), 2).expect_err("refused");
            assert!(error.0.contains(field), "{error:?}");
        }
        assert_eq!(Clock::new(None, 2).expect("no clock"), None);
        assert_eq!(
            Clock::new(Some(&pb::TableConfig::default()), 2).expect("no clock"),
            None
        );
    }

    #[test]
    fn fischer_spends_the_bank_and_adds_the_increment() {
        let mut clock = fischer(1000, 100);
        clock.start(10_000);
        // Created at 10 000: seat 0 has until 11 000.
        assert_eq!(clock.deadline_ms(0), 11_000);
        // Seat 0 moves after 300 ms: 700 left, +100.
        clock.tick(0, Some(0), Some(1), false, 10_300);
        assert_eq!(clock.banks_ms, vec![800, 1000]);
        assert_eq!(clock.deadline_ms(1), 11_300);
        // Seat 1 times out: its bank is the increment from now on.
        clock.tick(SYSTEM, Some(1), Some(0), true, 11_300);
        assert_eq!(clock.banks_ms, vec![800, 100]);
        assert_eq!(clock.deadline_ms(0), 12_100);
        let shown = clock.state(Some(0), 11_500);
        assert_eq!(shown.remaining_ms, vec![600, 100]);
        assert_eq!(shown.deadline_ms, Some(12_100));
        assert_eq!(shown.seat, Some(0));
    }

    const SYSTEM: Seat = crate::hosting::SYSTEM_SEAT;

    #[test]
    fn a_resignation_out_of_turn_does_not_interrupt_the_seat_to_act() {
        let mut clock = fischer(1000, 0);
        clock.start(10_000);
        clock.tick(1, Some(0), Some(0), false, 10_400);
        assert_eq!(clock.deadline_ms(0), 11_000);
        assert_eq!(clock.banks_ms, vec![1000, 1000]);
    }
}
