//! From the summed series of each metric to a demand table: rows in
//! milli-units from the first time every metric has a value to the last,
//! each value holding until the metric's next one, and short gaps held.

use hpa_lint_rules::controller::Millis;
use hpa_lint_rules::controller::flags::format_duration;

use super::time::{UnixMillis, format};
use crate::emit::plural;

/// One metric's values over time (the sum of its series), times increasing.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub name: String,
    pub values: Vec<(UnixMillis, f64)>,
}

/// The demand of every metric from a common start.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// Time 0 of the rows.
    pub start: UnixMillis,
    /// `(time from start, value per column in milli-units)`: a row holds
    /// until the next one.
    pub rows: Vec<(Millis, Vec<i64>)>,
    /// Gaps that were held, one line per metric that had some.
    pub notes: Vec<String>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum DemandError {
    #[error("`{name}` has no samples")]
    Empty { name: String },
    #[error("`{name}` is {value} at {}: a demand cannot be negative", format(*.time))]
    Negative {
        name: String,
        time: UnixMillis,
        value: f64,
    },
    #[error("`{name}` is {value} at {}: too large a demand", format(*.time))]
    TooLarge {
        name: String,
        time: UnixMillis,
        value: f64,
    },
    #[error(
        "`{name}` has no samples from {} to {} ({}), longer than --max-gap {}: pick a range without the gap with --since and --until, or hold the last value over it with a longer --max-gap",
        format(*.from), format(*.to), format_duration(*.length), format_duration(*.max_gap)
    )]
    Gap {
        name: String,
        from: UnixMillis,
        to: UnixMillis,
        length: Millis,
        max_gap: Millis,
    },
    #[error(
        "the metrics have no time in common: `{ends}` ends at {}, before `{starts}` starts at {}",
        format(*.end), format(*.start)
    )]
    Disjoint {
        ends: String,
        end: UnixMillis,
        starts: String,
        start: UnixMillis,
    },
}

impl DemandError {
    /// The metric the error is about, if one.
    pub fn metric(&self) -> Option<&str> {
        match self {
            DemandError::Empty { name }
            | DemandError::Negative { name, .. }
            | DemandError::TooLarge { name, .. }
            | DemandError::Gap { name, .. } => Some(name),
            DemandError::Disjoint { .. } => None,
        }
    }
}

/// Why a value is no demand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotDemand {
    Negative,
    TooLarge,
}

/// A value in milli-units as the metrics pipeline counts it: rounded to the
/// nano-unit first (metrics-server reports CPU in nanocores; this also drops
/// the float noise of Prometheus' arithmetic, such as 0.20000000000000004),
/// then up to the milli-unit, as the API server rounds quantities.
pub fn milli(value: f64) -> Result<i64, NotDemand> {
    let milli = ((value * 1e9).round() / 1e6).ceil();
    if milli < 0.0 {
        Err(NotDemand::Negative)
    } else if milli.is_nan() || milli >= 9.2e18 {
        Err(NotDemand::TooLarge)
    } else {
        Ok(milli as i64)
    }
}

/// The demand table of `columns`. It starts at the latest first value of the
/// columns and ends at the earliest last one. Between two values of a column
/// more than its step apart (its smallest spacing), the earlier value holds
/// over the missing samples, but only up to `max_gap` of them (their count
/// times the step): a longer gap is an error.
pub fn table(columns: &[Column], max_gap: Millis) -> Result<Table, DemandError> {
    let mut converted = Vec::with_capacity(columns.len());
    for column in columns {
        let (Some(first), Some(last)) = (column.values.first(), column.values.last()) else {
            return Err(DemandError::Empty {
                name: column.name.clone(),
            });
        };
        let values = column
            .values
            .iter()
            .map(|&(time, value)| match milli(value) {
                Ok(milli) => Ok((time, milli)),
                Err(why) => {
                    let name = column.name.clone();
                    Err(match why {
                        NotDemand::Negative => DemandError::Negative { name, time, value },
                        NotDemand::TooLarge => DemandError::TooLarge { name, time, value },
                    })
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        converted.push((column, first.0, last.0, values));
    }
    let latest_start = converted.iter().max_by_key(|c| c.1);
    let earliest_end = converted.iter().min_by_key(|c| c.2);
    let (Some(starts), Some(ends)) = (latest_start, earliest_end) else {
        return Ok(Table {
            start: 0,
            rows: Vec::new(),
            notes: Vec::new(),
        });
    };
    let (start, end) = (starts.1, ends.2);
    if end < start {
        return Err(DemandError::Disjoint {
            ends: ends.0.name.clone(),
            end,
            starts: starts.0.name.clone(),
            start,
        });
    }
    let mut notes = Vec::new();
    for (column, _, _, values) in &converted {
        if let Some(note) = held_gaps(&column.name, values, start, end, max_gap)? {
            notes.push(note);
        }
    }
    // Every time any column has a value, each column at its latest value.
    let mut times: Vec<UnixMillis> = converted
        .iter()
        .flat_map(|c| c.3.iter().map(|v| v.0))
        .filter(|t| (start..=end).contains(t))
        .collect();
    times.sort_unstable();
    times.dedup();
    let mut next = vec![0; converted.len()];
    let rows = times
        .into_iter()
        .map(|time| {
            let values = converted
                .iter()
                .zip(&mut next)
                .map(|((_, _, _, values), next)| {
                    while *next + 1 < values.len() && values[*next + 1].0 <= time {
                        *next += 1;
                    }
                    values[*next].1
                })
                .collect();
            (time - start, values)
        })
        .collect();
    Ok(Table { start, rows, notes })
}

/// The gaps of one column between `start` and `end`: an error for one longer
/// than `max_gap`, else a note on those held (`None` without any).
fn held_gaps(
    name: &str,
    values: &[(UnixMillis, i64)],
    start: UnixMillis,
    end: UnixMillis,
    max_gap: Millis,
) -> Result<Option<String>, DemandError> {
    let step = values
        .windows(2)
        .map(|w| w[1].0 - w[0].0)
        .min()
        .unwrap_or(0);
    let (mut count, mut missing, mut longest) = (0, 0, (0, 0));
    for pair in values.windows(2) {
        let ((before, _), (after, _)) = (pair[0], pair[1]);
        let gap = after - before - step;
        if gap <= 0 || after <= start || before >= end {
            continue;
        }
        if gap > max_gap {
            return Err(DemandError::Gap {
                name: name.to_owned(),
                from: before + step,
                to: after - step,
                length: gap,
                max_gap,
            });
        }
        count += 1;
        missing += gap / step;
        if gap > longest.1 {
            longest = (before + step, gap);
        }
    }
    let (longest_from, longest) = (format(longest.0), format_duration(longest.1));
    let gaps = match count {
        0 => return Ok(None),
        1 => format!("one gap of {longest} from {longest_from}"),
        _ => format!("{count} gaps (the longest {longest} from {longest_from})"),
    };
    Ok(Some(format!(
        "`{name}` misses {} in {gaps}; the value before each gap holds (up to --max-gap {})",
        plural(usize::try_from(missing).unwrap_or(0), "sample"),
        format_duration(max_gap)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: UnixMillis = 1_735_689_600_000;

    fn column(name: &str, values: &[(i64, f64)]) -> Column {
        Column {
            name: name.to_owned(),
            values: values.iter().map(|&(s, v)| (T + s * 1000, v)).collect(),
        }
    }

    #[test]
    fn rounds_to_nano_then_up_to_milli() {
        assert_eq!(milli(0.20000000000000004), Ok(200));
        assert_eq!(milli(0.19999999999999998), Ok(200));
        assert_eq!(milli(0.2001), Ok(201));
        assert_eq!(milli(0.0000001), Ok(1));
        assert_eq!(milli(-1e-12), Ok(0));
        assert_eq!(milli(1.5e12), Ok(1_500_000_000_000_000));
        assert_eq!(milli(-0.5), Err(NotDemand::Negative));
        assert_eq!(milli(1e17), Err(NotDemand::TooLarge));
    }

    #[test]
    fn starts_where_every_metric_has_a_value_and_holds() {
        let cpu = column(
            "cpu",
            &[(0, 1.0), (15, 2.0), (30, 3.0), (45, 4.0), (60, 5.0)],
        );
        let memory = column("memory", &[(15, 100.0), (30, 200.0), (45, 300.0)]);
        let table = table(&[cpu, memory], 300_000).unwrap();
        assert_eq!(table.start, T + 15_000);
        assert_eq!(
            table.rows,
            [
                (0, vec![2000, 100_000]),
                (15_000, vec![3000, 200_000]),
                (30_000, vec![4000, 300_000])
            ]
        );
        assert!(table.notes.is_empty());
    }

    #[test]
    fn holds_short_gaps_with_a_note_and_refuses_long_ones() {
        let cpu = column(
            "cpu",
            &[(0, 1.0), (15, 2.0), (75, 3.0), (90, 4.0), (135, 5.0)],
        );
        let table = table(std::slice::from_ref(&cpu), 300_000).unwrap();
        let values: Vec<(Millis, i64)> = table.rows.iter().map(|(t, v)| (*t, v[0])).collect();
        assert_eq!(
            values,
            [
                (0, 1000),
                (15_000, 2000),
                (75_000, 3000),
                (90_000, 4000),
                (135_000, 5000)
            ]
        );
        assert_eq!(
            table.notes,
            [
                "`cpu` misses 5 samples in 2 gaps (the longest 45s from 2025-01-01T00:00:30Z); the value before each gap holds (up to --max-gap 5m)"
            ]
        );
        let error = super::table(&[cpu], 30_000).unwrap_err();
        assert_eq!(
            error.to_string(),
            "`cpu` has no samples from 2025-01-01T00:00:30Z to 2025-01-01T00:01:00Z (45s), longer than --max-gap 30s: pick a range without the gap with --since and --until, or hold the last value over it with a longer --max-gap"
        );
    }

    #[test]
    fn refuses_empty_negative_and_disjoint_metrics() {
        let empty = column("rps", &[]);
        assert_eq!(
            table(&[empty], 300_000).unwrap_err(),
            DemandError::Empty {
                name: "rps".to_owned()
            }
        );
        let negative = column("rps", &[(0, 1.0), (15, -2.0)]);
        assert!(
            table(&[negative], 300_000)
                .unwrap_err()
                .to_string()
                .contains("cannot be negative")
        );
        let early = column("cpu", &[(0, 1.0), (15, 1.0)]);
        let late = column("memory", &[(30, 1.0)]);
        assert!(matches!(
            table(&[early, late], 300_000),
            Err(DemandError::Disjoint { .. })
        ));
    }
}
