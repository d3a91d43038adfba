//! What a replica's webhook worker remembers between passes that nothing settles for it when it
//! stops hearing of a notification or a game (the failed attempts of a notification, a mark seen
//! ahead of its log), and when it forgets them (`webhook_delivery.rs` sweeps every
//! [`SWEEP_EVERY`]).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::options::WebhookOptions;

/// How long a mark may stay ahead of the log before it is taken for an append that failed.
pub(super) const STALE_MARK: Duration = Duration::from_secs(60);

/// How often a replica drops what it remembers of notifications and games it stopped hearing of.
pub(super) const SWEEP_EVERY: Duration = Duration::from_secs(60);

/// How long a notification's failed attempts are remembered after the last one: twice the
/// longest a notification still being retried here waits between two attempts (the longest
/// backoff, a lease a takeover waits out, and the call's own deadline).
pub(super) fn attempts_kept(options: &WebhookOptions) -> Duration {
    2 * (options.max_backoff + options.lease + options.timeout)
}

/// Forgets the failed attempts of notifications not attempted here for `attempts_kept`, and the
/// marks ahead of their log first seen more than twice [`STALE_MARK`] ago.
///
/// Both maps lose an entry when it is settled: a notification delivered or given up, a game
/// delivered or its mark dropped. One this replica stops hearing of would stay for good: another
/// replica took the game over (its lease ran out), or the game, its webhook or its tenant is
/// gone. On a service that runs for months those add up, so they are dropped once nothing can
/// still be waiting on them. Forgetting one still in use costs little: the attempts are counted
/// again from one (more attempts before a dead letter), a mark's minute starts again.
pub(super) fn forget_untouched(
    attempts: &mut HashMap<String, (u32, Instant)>,
    stale_since: &mut HashMap<String, Instant>,
    now: Instant,
    attempts_kept: Duration,
) {
    attempts
        .retain(|_, (_, last_failed)| now.saturating_duration_since(*last_failed) <= attempts_kept);
    stale_since.retain(|_, since| now.saturating_duration_since(*since) <= 2 * STALE_MARK);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An instant an hour after now, so that the entries below can be dated before it.
    fn an_hour_on() -> Instant {
        Instant::now() + Duration::from_secs(3_600)
    }

    #[test]
    fn what_nothing_touches_any_more_is_forgotten() {
        let now = an_hour_on();
        let ago = |seconds: u64| now - Duration::from_secs(seconds);
        let mut attempts = HashMap::from([
            ("hook/retried".to_string(), (3, ago(600))),
            ("hook/edge".to_string(), (1, ago(1_280))),
            ("hook/taken-over".to_string(), (2, ago(1_281))),
            ("hook/gone".to_string(), (9, ago(3_600))),
        ]);
        let mut stale_since = HashMap::from([
            ("game-in-flight".to_string(), ago(1)),
            ("game-due-to-drop".to_string(), ago(120)),
            ("game-vanished".to_string(), ago(121)),
        ]);
        forget_untouched(
            &mut attempts,
            &mut stale_since,
            now,
            Duration::from_secs(1_280),
        );
        let mut left: Vec<_> = attempts.keys().cloned().collect();
        left.sort();
        assert_eq!(left, ["hook/edge", "hook/retried"]);
        assert_eq!(attempts["hook/retried"].0, 3, "a kept count is unchanged");
        let mut left: Vec<_> = stale_since.keys().cloned().collect();
        left.sort();
        assert_eq!(left, ["game-due-to-drop", "game-in-flight"]);
    }

    #[test]
    fn a_notification_still_being_retried_keeps_its_count() {
        // Between two attempts of one notification here: at most the longest backoff, a lease
        // (the claim of the game) and a call's deadline. Its count survives that gap, and is
        // forgotten once twice that has passed.
        let options = WebhookOptions::default();
        let longest_gap = options.max_backoff + options.lease + options.timeout;
        let now = an_hour_on();
        let mut attempts = HashMap::from([
            ("hook/retried".to_string(), (5, now - longest_gap)),
            (
                "hook/abandoned".to_string(),
                (5, now - 2 * longest_gap - Duration::from_secs(1)),
            ),
        ]);
        forget_untouched(
            &mut attempts,
            &mut HashMap::new(),
            now,
            attempts_kept(&options),
        );
        assert_eq!(
            attempts.get("hook/retried").map(|(count, _)| *count),
            Some(5)
        );
        assert!(!attempts.contains_key("hook/abandoned"));
    }
}
