//! The kube-controller-manager flags the HPA controller reads (C1.1), named
//! without their `horizontal-pod-autoscaler-` prefix, with their real defaults,
//! and the duration syntax they take.

/// Time in milliseconds: exact, and fine enough for every flag and trace.
pub use crate::cluster::Millis;

/// The controller's flags.
#[derive(Clone, Debug, PartialEq)]
pub struct ControllerFlags {
    /// `--horizontal-pod-autoscaler-sync-period` (15 s).
    pub sync_period: Millis,
    /// `--horizontal-pod-autoscaler-tolerance` (0.1).
    pub tolerance: f64,
    /// `--horizontal-pod-autoscaler-downscale-stabilization` (5 m).
    pub downscale_stabilization: Millis,
    /// `--horizontal-pod-autoscaler-cpu-initialization-period` (5 m).
    pub cpu_initialization_period: Millis,
    /// `--horizontal-pod-autoscaler-initial-readiness-delay` (30 s).
    pub initial_readiness_delay: Millis,
    /// The legacy path's scale-up factor (C1.2): 2, a package variable that
    /// `horizontal_test.go` sets to 8, so its vectors can be ported.
    pub(crate) scale_up_limit_factor: f64,
}

impl Default for ControllerFlags {
    fn default() -> Self {
        Self {
            sync_period: 15_000,
            tolerance: 0.1,
            downscale_stabilization: 300_000,
            cpu_initialization_period: 300_000,
            initial_readiness_delay: 30_000,
            scale_up_limit_factor: 2.0,
        }
    }
}

/// The longest duration: Go's (`time.Duration` counts nanoseconds in an
/// `int64`: 2562047h47m16.854775807s), in whole milliseconds. The
/// controller's flags are Go durations, and every time of a simulation stays
/// far from overflowing.
pub const MAX_DURATION: Millis = i64::MAX / 1_000_000;

/// A duration that is not one.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum DurationError {
    /// Not a duration.
    #[error("invalid duration `{0}`: expected seconds or e.g. `90s`, `5m`, `1h`")]
    Invalid(String),
    /// Longer than [`MAX_DURATION`].
    #[error("duration `{0}` is longer than the longest Go duration, 2562047h47m16.854s")]
    TooLong(String),
}

/// Parses a duration: plain seconds (`90`, `1.5`) or Go's syntax (`90s`, `5m`,
/// `1m30s`, `500ms`, `1h`), exact to the millisecond, at most [`MAX_DURATION`].
pub fn parse_duration(text: &str) -> Result<Millis, DurationError> {
    let text = text.trim();
    let total = parse_any_duration(text).ok_or_else(|| DurationError::Invalid(text.to_owned()))?;
    if total > MAX_DURATION {
        return Err(DurationError::TooLong(text.to_owned()));
    }
    Ok(total)
}

/// A duration of any length (an overlong one saturates at `i64::MAX`).
fn parse_any_duration(text: &str) -> Option<Millis> {
    if text.is_empty() {
        return None;
    }
    if text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return scaled(text, 1000);
    }
    let mut total: Millis = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let number_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        let (number, tail) = rest.split_at(number_end);
        let unit_end = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_end);
        let factor = match unit {
            "ms" => 1,
            "s" => 1000,
            "m" => 60_000,
            "h" => 3_600_000,
            _ => return None,
        };
        total = total.saturating_add(scaled(number, factor)?);
        rest = tail;
    }
    Some(total)
}

/// `number × factor` for a decimal `number`, if exact in whole milliseconds
/// (saturating at `i64::MAX`).
fn scaled(number: &str, factor: i64) -> Option<Millis> {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
        return None;
    }
    let mut value: i64 = 0;
    for digit in whole.bytes() {
        value = value
            .saturating_mul(10)
            .saturating_add(i64::from(digit - b'0'));
    }
    value = value.saturating_mul(factor);
    let mut unit = factor;
    for digit in fraction.bytes() {
        if unit % 10 != 0 {
            // A digit finer than a millisecond must be zero.
            if digit != b'0' {
                return None;
            }
            continue;
        }
        unit /= 10;
        value = value.saturating_add(i64::from(digit - b'0') * unit);
    }
    Some(value)
}

/// A count of thousandths (milliseconds, milli-units) as a JSON number of
/// units: whole when it is (`15`, not `15.0`).
pub fn thousandths(value: i64) -> serde_json::Value {
    if value % 1000 == 0 {
        serde_json::json!(value / 1000)
    } else {
        serde_json::json!(value as f64 / 1000.0)
    }
}

/// Renders milliseconds the way the flags are written (`90s`, `5m`, `1h30m`,
/// `500ms`, and as Go writes a duration, `15.001s`, `16m39.999s`).
pub fn format_duration(ms: Millis) -> String {
    if ms == 0 {
        return "0s".to_owned();
    }
    if ms.abs() < 1000 {
        return format!("{ms}ms");
    }
    let sign = if ms < 0 { "-" } else { "" };
    let ms = ms.unsigned_abs();
    let seconds = ms / 1000;
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    let mut out = sign.to_owned();
    if h > 0 {
        out += &format!("{h}h");
    }
    if m > 0 {
        out += &format!("{m}m");
    }
    let fraction = ms % 1000;
    if fraction > 0 {
        let digits = format!("{fraction:03}");
        out += &format!("{s}.{}s", digits.trim_end_matches('0'));
    } else if s > 0 {
        out += &format!("{s}s");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_seconds_and_go_durations() {
        for (text, ms) in [
            ("15", 15_000),
            ("1.5", 1_500),
            ("90s", 90_000),
            ("5m", 300_000),
            ("1m30s", 90_000),
            ("500ms", 500),
            ("1h", 3_600_000),
            ("0", 0),
            ("0.25s", 250),
        ] {
            assert_eq!(parse_duration(text), Ok(ms), "{text}");
        }
        for text in ["", "-5s", "5d", "1.0005s", "s", "1..5", "1e3"] {
            assert!(
                matches!(parse_duration(text), Err(DurationError::Invalid(_))),
                "{text}"
            );
        }
        // Go's longest duration, and past it (once wrapped around to negative times).
        assert_eq!(parse_duration("2562047h47m16.854s"), Ok(MAX_DURATION));
        for text in [
            "2562047h47m16.855s",
            "2562047788015h",
            "99999999999999999999999s",
            "9223372036854775807ms",
        ] {
            assert!(
                matches!(parse_duration(text), Err(DurationError::TooLong(_))),
                "{text}"
            );
        }
    }

    #[test]
    fn formats_durations() {
        assert_eq!(format_duration(75_000), "1m15s");
        assert_eq!(format_duration(300_000), "5m");
        assert_eq!(format_duration(15_000), "15s");
        assert_eq!(format_duration(0), "0s");
        assert_eq!(format_duration(1_500), "1.5s");
        assert_eq!(format_duration(500), "500ms");
        assert_eq!(format_duration(999_999), "16m39.999s");
        assert_eq!(format_duration(3_600_010), "1h0.01s");
        assert_eq!(format_duration(MAX_DURATION), "2562047h47m16.854s");
    }
}
