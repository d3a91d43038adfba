//! Durations as flags take them (`500ms`, `10s`, `2m`, `1h`, `30d`, or `off`), each flag within a
//! stated range: the parsers the server's flags (`config.rs`) and the client commands
//! (`cli/`) share. Imports nothing of the crate.

use std::time::Duration;

/// The range a duration flag accepts, refused at start outside it (with the flag's name, by
/// clap). Lower bounds keep a replica out of busy loops (a 0s retention interval or clock sweep
/// would query the store flat out) and out of nonsense (a request-id TTL shorter than any retry);
/// upper bounds keep values within what the store and timers take (Redis expiries are
/// milliseconds in a signed 64-bit integer) and catch unit slips (`60d` for `60s`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DurationRange {
    /// The shortest accepted.
    pub min: Duration,
    /// The longest accepted.
    pub max: Duration,
}

/// The range from `min` to `max`.
pub const fn range(min: Duration, max: Duration) -> DurationRange {
    DurationRange { min, max }
}

/// Durations in milliseconds, for ranges.
pub const MS: u64 = 1;
/// A second in milliseconds.
pub const SECOND: u64 = 1000 * MS;
/// A minute in milliseconds.
pub const MINUTE: u64 = 60 * SECOND;
/// An hour in milliseconds.
pub const HOUR: u64 = 60 * MINUTE;
/// A day in milliseconds.
pub const DAY: u64 = 24 * HOUR;

/// `n` milliseconds.
pub const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A clap parser of durations within `range` (see [`parse_duration`]).
pub fn bounded(
    range: DurationRange,
) -> impl Fn(&str) -> Result<Duration, String> + Clone + Send + Sync + 'static {
    move |text| parse_duration(text).and_then(|duration| within(duration, text, range))
}

/// A clap parser of `off` or a duration within `range` (see [`parse_optional_duration`]).
pub fn bounded_or_off(
    range: DurationRange,
) -> impl Fn(&str) -> Result<OptionalDuration, String> + Clone + Send + Sync + 'static {
    move |text| match parse_optional_duration(text)? {
        OptionalDuration(Some(duration)) => {
            within(duration, text, range).map(|d| OptionalDuration(Some(d)))
        }
        off => Ok(off),
    }
}

fn within(duration: Duration, text: &str, range: DurationRange) -> Result<Duration, String> {
    if duration < range.min || duration > range.max {
        return Err(format!(
            "{:?} is out of range: from {} to {}",
            text.trim(),
            display_duration(range.min),
            display_duration(range.max)
        ));
    }
    Ok(duration)
}

/// `duration` in the largest unit that shows it whole (`100ms`, `1m`, `365d`).
pub fn display_duration(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis == 0 {
        return "0s".to_owned();
    }
    for (unit, size) in [("d", DAY), ("h", HOUR), ("m", MINUTE), ("s", SECOND)] {
        let size = u128::from(size);
        if millis >= size && millis.is_multiple_of(size) {
            return format!("{}{unit}", millis / size);
        }
    }
    format!("{millis}ms")
}

/// A duration that can be `off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionalDuration(pub Option<Duration>);

/// Parses `off` or a duration as [`parse_duration`] does.
pub fn parse_optional_duration(text: &str) -> Result<OptionalDuration, String> {
    match text.trim() {
        "off" | "never" | "0" => Ok(OptionalDuration(None)),
        other => parse_duration(other).map(|d| OptionalDuration(Some(d))),
    }
}

/// Parses a duration written as `<number><unit>` with unit `ms`, `s`, `m`, `h` or `d`; a bare
/// number is seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (e.g. 10s, 500ms, 1m)"))?;
    let seconds = match unit.trim() {
        "" | "s" => number,
        "ms" => number / 1000.0,
        "m" => number * 60.0,
        "h" => number * 3600.0,
        "d" => number * 86_400.0,
        other => {
            return Err(format!(
                "unknown duration unit {other:?} (ms, s, m, h or d)"
            ));
        }
    };
    Duration::try_from_secs_f64(seconds).map_err(|error| format!("{text:?}: {error}"))
}
