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

/// A duration that is not one.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid duration `{0}`: expected seconds or e.g. `90s`, `5m`, `1h`")]
pub struct DurationError(pub String);

/// Parses a duration: plain seconds (`90`, `1.5`) or Go's syntax (`90s`, `5m`,
/// `1m30s`, `500ms`, `1h`), exact to the millisecond.
pub fn parse_duration(text: &str) -> Result<Millis, DurationError> {
    let text = text.trim();
    let error = || DurationError(text.to_owned());
    if text.is_empty() {
        return Err(error());
    }
    if text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return scaled(text, 1000).ok_or_else(error);
    }
    let mut total: Millis = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(error)?;
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
            _ => return Err(error()),
        };
        let part = scaled(number, factor).ok_or_else(error)?;
        total = total.checked_add(part).ok_or_else(error)?;
        rest = tail;
    }
    Ok(total)
}

/// `number × factor` for a decimal `number`, if exact in whole milliseconds.
fn scaled(number: &str, factor: i64) -> Option<Millis> {
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
        return None;
    }
    let mut value: i64 = 0;
    for digit in whole.bytes() {
        value = value
            .checked_mul(10)?
            .checked_add(i64::from(digit - b'0'))?;
    }
    value = value.checked_mul(factor)?;
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
        value = value.checked_add(i64::from(digit - b'0') * unit)?;
    }
    Some(value)
}

/// Renders milliseconds the way the flags are written (`90s`, `5m`, `1h30m`).
pub fn format_duration(ms: Millis) -> String {
    if ms % 1000 != 0 {
        return format!("{ms}ms");
    }
    let seconds = ms / 1000;
    if seconds == 0 {
        return "0s".to_owned();
    }
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    let mut out = String::new();
    if h > 0 {
        out += &format!("{h}h");
    }
    if m > 0 {
        out += &format!("{m}m");
    }
    if s > 0 {
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
            assert!(parse_duration(text).is_err(), "{text}");
        }
    }

    #[test]
    fn formats_durations() {
        assert_eq!(format_duration(75_000), "1m15s");
        assert_eq!(format_duration(300_000), "5m");
        assert_eq!(format_duration(15_000), "15s");
        assert_eq!(format_duration(0), "0s");
        assert_eq!(format_duration(1_500), "1500ms");
    }
}
