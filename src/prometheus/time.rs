//! Times on the command line and in messages: RFC 3339 times, durations with
//! days and weeks (`--since 7d`), and the range a replay covers.

use hpa_lint_rules::controller::flags::{DurationError, MAX_DURATION};
use hpa_lint_rules::controller::{Millis, parse_duration};

/// Milliseconds since the Unix epoch (Prometheus' timestamps, to the millisecond).
pub type UnixMillis = i64;

const DAY: Millis = 86_400_000;

/// A point in time as `--since` and `--until` take it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeArg {
    /// An RFC 3339 time, e.g. `2025-01-31T00:00:00Z`.
    At(UnixMillis),
    /// A duration: `--since` counts it back, `--until` forward from the start.
    Span(Millis),
}

/// Parses `--since`/`--until`: an RFC 3339 time, or a duration in seconds or
/// Prometheus' syntax (`90s`, `5m`, `12h`, `7d`, `2w`, `1d12h`).
pub fn parse_time_arg(text: &str) -> Result<TimeArg, String> {
    let text = text.trim();
    if text.contains(':') || text.contains('T') || text.contains('-') && !text.starts_with('-') {
        return parse_rfc3339(text).map(TimeArg::At);
    }
    parse_span(text).map(TimeArg::Span)
}

/// An RFC 3339 time with its offset, e.g. `2025-01-31T00:00:00Z`.
pub fn parse_rfc3339(text: &str) -> Result<UnixMillis, String> {
    text.parse::<jiff::Timestamp>()
        .map(jiff::Timestamp::as_millisecond)
        .map_err(|_| {
            format!(
                "invalid time `{text}`: expected an RFC 3339 time such as `2025-01-31T00:00:00Z`"
            )
        })
}

/// A duration: seconds, or Go's syntax with days and weeks in front (`7d`,
/// `1w2d`, `1d12h`), at most the longest Go duration (as every duration).
pub fn parse_span(text: &str) -> Result<Millis, String> {
    let invalid = || {
        format!(
            "invalid duration `{text}`: expected seconds or e.g. `90s`, `5m`, `12h`, `7d`, `2w`"
        )
    };
    let too_long = || DurationError::TooLong(text.to_owned()).to_string();
    let mut total: Millis = 0;
    let mut rest = text;
    for (unit, length) in [('w', 7 * DAY), ('d', DAY)] {
        if let Some(end) = rest.find(unit) {
            let count = &rest[..end];
            if count.is_empty() || !count.bytes().all(|b| b.is_ascii_digit()) {
                return Err(invalid());
            }
            let count: Millis = count.parse().map_err(|_| too_long())?;
            total = count
                .checked_mul(length)
                .and_then(|part| total.checked_add(part))
                .ok_or_else(too_long)?;
            rest = &rest[end + 1..];
        }
    }
    if !rest.is_empty() {
        let part = parse_duration(rest).map_err(|error| match error {
            DurationError::TooLong(_) => too_long(),
            DurationError::Invalid(_) => invalid(),
        })?;
        total = total.checked_add(part).ok_or_else(too_long)?;
    } else if rest.len() == text.len() {
        return Err(invalid());
    }
    if total > MAX_DURATION {
        return Err(too_long());
    }
    Ok(total)
}

/// `2025-01-31T00:00:00Z`: a timestamp for messages.
pub fn format(time: UnixMillis) -> String {
    jiff::Timestamp::from_millisecond(time).map_or_else(|_| format!("{time} ms"), |t| t.to_string())
}

/// The current time.
pub fn now() -> UnixMillis {
    jiff::Timestamp::now().as_millisecond()
}

/// The times a replay queries: `start` to `end` inclusive, every `step`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub start: UnixMillis,
    pub end: UnixMillis,
    pub step: Millis,
}

impl Range {
    /// `--since` and `--until` at `now`: a duration in `--since` counts back
    /// from `--until` when that is a time, else from now; a duration in
    /// `--until` counts forward from the start. Both ends are moved back to a
    /// multiple of the step (the same grid on every run, which result caches
    /// in front of Prometheus also use), and the end is at most now.
    pub fn resolve(
        since: TimeArg,
        until: Option<TimeArg>,
        now: UnixMillis,
        step: Millis,
    ) -> Result<Range, String> {
        let start = match (since, until) {
            (TimeArg::At(start), _) => start,
            (TimeArg::Span(span), Some(TimeArg::At(until))) => until.saturating_sub(span),
            (TimeArg::Span(span), _) => now.saturating_sub(span),
        };
        let end = match until {
            None => now,
            Some(TimeArg::At(end)) => end,
            Some(TimeArg::Span(span)) => start.saturating_add(span),
        }
        .min(now);
        let (start, end) = (start.div_euclid(step) * step, end.div_euclid(step) * step);
        if end <= start {
            return Err(format!(
                "the range from {} to {} holds no sync: --since must be before --until and before now",
                format(start),
                format(end)
            ));
        }
        Ok(Range { start, end, step })
    }

    /// The number of times in the range.
    pub fn points(&self) -> i64 {
        (self.end - self.start) / self.step + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_spans_with_days_and_weeks() {
        for (text, ms) in [
            ("7d", 7 * DAY),
            ("2w", 14 * DAY),
            ("1w2d", 9 * DAY),
            ("1d12h", DAY + 12 * 3_600_000),
            ("90m", 5_400_000),
            ("3600", 3_600_000),
        ] {
            assert_eq!(parse_span(text), Ok(ms), "{text}");
        }
        for text in ["", "d", "7x", "1.5d", "-7d", "7d1w"] {
            assert!(
                parse_span(text)
                    .unwrap_err()
                    .starts_with("invalid duration"),
                "{text}"
            );
        }
        for text in ["99999999999999w", "106752d", "2562047788015h"] {
            assert!(
                parse_span(text)
                    .unwrap_err()
                    .contains("longer than the longest Go duration"),
                "{text}"
            );
        }
    }

    #[test]
    fn parses_times_and_spans() {
        assert_eq!(
            parse_time_arg("2025-01-01T00:00:00Z"),
            Ok(TimeArg::At(1_735_689_600_000))
        );
        assert_eq!(
            parse_time_arg("2025-01-01T02:00:00+02:00"),
            Ok(TimeArg::At(1_735_689_600_000))
        );
        assert_eq!(parse_time_arg("7d"), Ok(TimeArg::Span(7 * DAY)));
        let error = parse_time_arg("2025-01-01").unwrap_err();
        assert!(error.contains("RFC 3339"), "{error}");
        assert_eq!(format(1_735_689_600_000), "2025-01-01T00:00:00Z");
    }

    #[test]
    fn resolves_ranges_on_the_step_grid() {
        let now = 1_735_689_600_000 + 7_500;
        let range = Range::resolve(TimeArg::Span(60_000), None, now, 15_000).unwrap();
        assert_eq!(range.end, 1_735_689_600_000);
        assert_eq!(range.start, 1_735_689_600_000 - 60_000);
        assert_eq!(range.points(), 5);
        // A span in --since counts back from a time in --until.
        let until = TimeArg::At(1_700_000_000_000);
        let range = Range::resolve(TimeArg::Span(DAY), Some(until), now, 15_000).unwrap();
        assert_eq!(range.end - range.start, DAY);
        // A span in --until counts forward from the start.
        let since = TimeArg::At(1_700_000_000_000);
        let range = Range::resolve(since, Some(TimeArg::Span(DAY)), now, 15_000).unwrap();
        assert_eq!(range.end - range.start, DAY);
        // The end is at most now.
        let range = Range::resolve(
            TimeArg::At(now - 60_000),
            Some(TimeArg::At(now + DAY)),
            now,
            15_000,
        );
        assert_eq!(range.unwrap().end, 1_735_689_600_000);
        let error = Range::resolve(TimeArg::At(now), Some(TimeArg::At(now - 1)), now, 15_000);
        assert!(error.unwrap_err().contains("holds no sync"));
    }
}
