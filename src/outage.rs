//! Failures that come in floods, logged as state changes. While the store is down every command,
//! and every periodic pass, fails the same way; a line for each failure floods the log (thousands
//! of identical warnings over a few short outages) and hides everything else. An [`Outage`] turns
//! the failures into three kinds of line: the first failure, one "still failing" line every
//! [`OUTAGE_REPORT_EVERY`] with the count so far, and the first success after, with how long it
//! lasted and how many failed meanwhile.

use std::time::{Duration, Instant};

/// How often a continuing outage is logged again, with its count of failures.
pub const OUTAGE_REPORT_EVERY: Duration = Duration::from_secs(10);

/// Up, or down since a first failure with the failures counted since. Pure (time is passed in),
/// so what it logs can be tested without waiting.
#[derive(Debug, Default)]
pub struct Outage {
    down: Option<Down>,
}

#[derive(Debug)]
struct Down {
    since: Instant,
    failures: u64,
    last_report: Instant,
}

/// What an [`Outage`] says should be logged.
#[derive(Debug, PartialEq, Eq)]
pub enum OutageReport {
    /// The first failure after a success (or at start).
    Down,
    /// Still failing: how long since the first failure, and the failures since (the first
    /// included).
    StillDown {
        /// Since the first failure.
        down_for: Duration,
        /// Failures since, the first included.
        failures: u64,
    },
    /// Working again after `down_for`, `failures` having failed.
    BackUp {
        /// From the first failure to this success.
        down_for: Duration,
        /// Failures meanwhile.
        failures: u64,
    },
}

impl Outage {
    /// A failure at `now`: what to log, if anything.
    pub fn failure(&mut self, now: Instant) -> Option<OutageReport> {
        let Some(down) = &mut self.down else {
            self.down = Some(Down {
                since: now,
                failures: 1,
                last_report: now,
            });
            return Some(OutageReport::Down);
        };
        down.failures += 1;
        if now.saturating_duration_since(down.last_report) < OUTAGE_REPORT_EVERY {
            return None;
        }
        down.last_report = now;
        Some(OutageReport::StillDown {
            down_for: now.saturating_duration_since(down.since),
            failures: down.failures,
        })
    }

    /// A success at `now`: what to log, if anything (only when it ends an outage).
    pub fn success(&mut self, now: Instant) -> Option<OutageReport> {
        let down = self.down.take()?;
        Some(OutageReport::BackUp {
            down_for: now.saturating_duration_since(down.since),
            failures: down.failures,
        })
    }

    /// Whether an outage is open.
    pub fn is_down(&self) -> bool {
        self.down.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outage_is_reported_when_it_starts_every_interval_and_when_it_ends() {
        let mut outage = Outage::default();
        let start = Instant::now();
        assert_eq!(outage.success(start), None, "up: nothing to say");
        assert_eq!(outage.failure(start), Some(OutageReport::Down));
        // A flood of failures within the interval: silent.
        for i in 1..1000 {
            assert_eq!(outage.failure(start + Duration::from_millis(i)), None);
        }
        let later = start + OUTAGE_REPORT_EVERY;
        assert_eq!(
            outage.failure(later),
            Some(OutageReport::StillDown {
                down_for: OUTAGE_REPORT_EVERY,
                failures: 1001
            })
        );
        assert_eq!(outage.failure(later + Duration::from_secs(1)), None);
        let end = later + Duration::from_secs(2);
        assert_eq!(
            outage.success(end),
            Some(OutageReport::BackUp {
                down_for: OUTAGE_REPORT_EVERY + Duration::from_secs(2),
                failures: 1002
            })
        );
        assert!(!outage.is_down());
        assert_eq!(outage.success(end), None, "said once");
        assert_eq!(
            outage.failure(end),
            Some(OutageReport::Down),
            "a new outage"
        );
    }
}
