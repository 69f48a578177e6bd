//! Load traces: a CSV file (`time` then `replicas` or one column per metric)
//! or Prometheus `query_range` responses (a `matrix`) per metric. Every
//! problem is an error naming the file and the line (CSV) or the sample
//! (JSON), with the text it quotes shown with its control characters escaped;
//! values are quantities, converted to milli-units as the API server converts
//! them (rounded up). A UTF-8 byte order mark is skipped.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Result, bail};
use hpa_lint_rules::controller::flags::DurationError;
use hpa_lint_rules::controller::{Millis, parse_duration};
use hpa_lint_rules::model::quantity::Quantity;
use serde_json::Value;

/// Larger trace files are refused rather than read into memory.
pub const MAX_TRACE_BYTES: u64 = 256 << 20;

/// The name of the CSV column with the controller's raw recommendation,
/// unless the HPA has a metric of that name (then it is that metric, as in a
/// Prometheus trace).
pub const RECOMMENDATION_COLUMN: &str = "replicas";

/// `text` with its control characters (a carriage return, an escape
/// sequence) escaped, so that a message shows them rather than obeys them.
pub fn escaped(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            shown.extend(c.escape_default());
        } else {
            shown.push(c);
        }
    }
    shown
}

/// [`escaped`] text between backticks.
pub fn quoted(text: &str) -> String {
    format!("`{}`", escaped(text))
}

/// A file's name for messages.
fn file_name(path: &Path) -> String {
    escaped(&path.display().to_string())
}

/// What a trace gives at each of its times.
#[derive(Debug, PartialEq)]
pub enum Columns {
    /// The controller's raw recommendation.
    Replicas,
    /// Named metrics, values in milli-units.
    Metrics(Vec<String>),
}

/// A trace: rows of values from their time on, until the next row.
#[derive(Debug)]
pub struct Trace {
    pub columns: Columns,
    /// `(time, values)`, times strictly increasing from 0.
    pub rows: Vec<(Millis, Vec<i64>)>,
}

impl Trace {
    /// The last row's time.
    pub fn end(&self) -> Millis {
        self.rows.last().map_or(0, |r| r.0)
    }
}

fn read_text(path: &Path) -> Result<String> {
    let name = file_name(path);
    let size = std::fs::metadata(path)
        .map_err(|e| anyhow::anyhow!("{name}: {e}"))?
        .len();
    if size > MAX_TRACE_BYTES {
        bail!(
            "{name}: the trace is {} MiB, larger than the limit of {} MiB",
            size >> 20,
            MAX_TRACE_BYTES >> 20
        );
    }
    let bytes = std::fs::read(path).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    let mut text = String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{name}: not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })?;
    if text.starts_with('\u{feff}') {
        text.drain(..'\u{feff}'.len_utf8());
    }
    Ok(text)
}

/// A value in milli-units: a non-negative quantity (`3.2`, `3200m`, `256Mi`).
fn milli(text: &str) -> Result<i64, String> {
    let shown = quoted(text);
    let quantity =
        Quantity::parse(text).map_err(|_| format!("{shown} is not a number or quantity"))?;
    if quantity.is_negative() {
        return Err(format!("{shown} is negative"));
    }
    quantity
        .milli_value()
        .ok_or_else(|| format!("{shown} is too large"))
}

/// The records of a CSV text with the line each starts on: fields trimmed,
/// quoted fields unquoted, lines starting with `#` and blank lines skipped.
/// Only a line feed ends a line (a carriage return before it is trimmed).
fn csv_records(text: &str) -> impl Iterator<Item = Result<(usize, Vec<String>), String>> {
    let reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_reader(text.as_bytes());
    reader.into_records().filter_map(|record| match record {
        Ok(record) => {
            let line = record.position().map_or(0, |p| p.line());
            let fields: Vec<String> = record.iter().map(str::to_owned).collect();
            let blank = fields.iter().all(String::is_empty);
            (!blank).then(|| Ok((usize::try_from(line).unwrap_or(usize::MAX), fields)))
        }
        Err(error) => {
            let line = error.position().map_or(0, |p| p.line());
            Some(Err(format!("{line}: {error}")))
        }
    })
}

/// Reads a CSV trace; `metrics` are the HPA's metric names.
pub fn read_csv(path: &Path, metrics: &[String]) -> Result<Trace> {
    let name = file_name(path);
    let text = read_text(path)?;
    let mut records = csv_records(&text);
    let at = |line: usize, message: String| anyhow::anyhow!("{name}:{line}: {message}");
    let Some(first) = records.next() else {
        bail!("{name}: the trace is empty: expected a header such as `time,replicas`");
    };
    let (header_line, header) = first.map_err(|e| anyhow::anyhow!("{name}:{e}"))?;
    if header[0] != "time" {
        return Err(at(
            header_line,
            format!(
                "the first column must be `time`, not {}",
                quoted(&header[0])
            ),
        ));
    }
    let names = &header[1..];
    let recommendation =
        names == [RECOMMENDATION_COLUMN] && !metrics.iter().any(|m| m == RECOMMENDATION_COLUMN);
    let columns = if recommendation {
        Columns::Replicas
    } else {
        for (i, column) in names.iter().enumerate() {
            if !metrics.contains(column) {
                let known = if metrics.is_empty() {
                    "none".to_owned()
                } else {
                    escaped(&metrics.join(", "))
                };
                return Err(at(
                    header_line,
                    format!(
                        "unknown column {}: the HPA's metrics are {known}, or use a single `{RECOMMENDATION_COLUMN}` column",
                        quoted(column)
                    ),
                ));
            }
            if names[..i].contains(column) {
                return Err(at(
                    header_line,
                    format!("column {} appears twice", quoted(column)),
                ));
            }
        }
        if let Some(missing) = metrics.iter().find(|m| !names.contains(m)) {
            return Err(at(
                header_line,
                format!("no column for the HPA's metric {}", quoted(missing)),
            ));
        }
        Columns::Metrics(names.to_vec())
    };
    let mut rows: Vec<(Millis, Vec<i64>)> = Vec::new();
    for record in records {
        let (line, fields) = record.map_err(|e| anyhow::anyhow!("{name}:{e}"))?;
        if fields.len() != header.len() {
            return Err(at(
                line,
                format!("{} fields, the header has {}", fields.len(), header.len()),
            ));
        }
        let time = parse_time(&fields[0]).map_err(|e| at(line, e))?;
        check_order(&rows, time).map_err(|e| at(line, e))?;
        let values = fields[1..]
            .iter()
            .map(|v| match columns {
                Columns::Replicas => v
                    .parse::<i32>()
                    .ok()
                    .filter(|r| *r >= 0)
                    .map(i64::from)
                    .ok_or_else(|| format!("{} is not a replica count", quoted(v))),
                Columns::Metrics(_) => milli(v),
            })
            .collect::<Result<Vec<i64>, String>>()
            .map_err(|e| at(line, e))?;
        rows.push((time, values));
    }
    if rows.is_empty() {
        bail!("{name}: the trace has a header but no rows");
    }
    Ok(Trace { columns, rows })
}

fn parse_time(text: &str) -> Result<Millis, String> {
    let shown = quoted(text);
    if text.starts_with('-') {
        return Err(format!("negative time {shown}"));
    }
    parse_duration(text).map_err(|error| match error {
        DurationError::TooLong(_) => format!(
            "time {shown} is later than the latest time a simulation reaches (2562047h47m16.854s, the longest Go duration)"
        ),
        DurationError::Invalid(_) => format!(
            "invalid time {shown}: expected seconds or a duration such as `90s`, `5m`"
        ),
    })
}

/// Times start at 0 and increase strictly.
fn check_order(rows: &[(Millis, Vec<i64>)], time: Millis) -> Result<(), String> {
    match rows.last() {
        None if time != 0 => Err(format!(
            "the first row is at {}s; the trace must start at time 0",
            time as f64 / 1000.0
        )),
        Some((previous, _)) if time <= *previous => Err(format!(
            "time {}s is not after the previous row's {}s: times must increase",
            time as f64 / 1000.0,
            *previous as f64 / 1000.0
        )),
        _ => Ok(()),
    }
}

/// One Prometheus series: `(unix time in ms, milli-units)`.
type Series = Vec<(Millis, i64)>;

/// Reads the `matrix` of a Prometheus `query_range` response.
fn read_matrix(path: &Path) -> Result<Vec<Series>> {
    let name = file_name(path);
    let text = read_text(path)?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| anyhow::anyhow!("{name}:{}:{}: not JSON: {e}", e.line(), e.column()))?;
    let data = value.get("data").unwrap_or(&Value::Null);
    if data.get("resultType").and_then(Value::as_str) != Some("matrix") {
        bail!(
            "{name}: not a Prometheus `query_range` response: expected `data.resultType` `matrix`"
        );
    }
    let Some(result) = data.get("result").and_then(Value::as_array) else {
        bail!("{name}: `data.result` is not a list");
    };
    let mut all = Vec::new();
    for (i, series) in result.iter().enumerate() {
        let Some(values) = series.get("values").and_then(Value::as_array) else {
            bail!("{name}: data.result[{i}] has no `values`");
        };
        let mut samples: Series = Vec::with_capacity(values.len());
        for (j, sample) in values.iter().enumerate() {
            let at = |message: String| {
                anyhow::anyhow!("{name}: data.result[{i}].values[{j}]: {message}")
            };
            let (Some(time), Some(text)) = (sample.get(0), sample.get(1).and_then(Value::as_str))
            else {
                return Err(at("expected [time, \"value\"]".to_owned()));
            };
            let time = time
                .as_number()
                .map(ToString::to_string)
                .unwrap_or_default();
            let time =
                parse_duration(&time).map_err(|_| at(format!("invalid time {}", quoted(&time))))?;
            if samples
                .last()
                .is_some_and(|(previous, _)| time <= *previous)
            {
                return Err(at("times must increase".to_owned()));
            }
            samples.push((time, milli(text).map_err(at)?));
        }
        if !samples.is_empty() {
            all.push(samples);
        }
    }
    if all.is_empty() {
        bail!("{name}: the response has no samples");
    }
    Ok(all)
}

/// Reads `NAME=FILE.json` Prometheus traces, one per metric. Time 0 is the
/// latest first sample, so every metric has a value from 0 on; a metric's
/// value is the sum of its series, each holding its last sample.
pub fn read_prometheus(files: &BTreeMap<String, &Path>, metrics: &[String]) -> Result<Trace> {
    for name in files.keys() {
        if !metrics.contains(name) {
            bail!(
                "--trace {}=…: unknown metric {}: the HPA's metrics are {}",
                escaped(name),
                quoted(name),
                escaped(&metrics.join(", "))
            );
        }
    }
    if let Some(missing) = metrics.iter().find(|m| !files.contains_key(*m)) {
        bail!(
            "no trace for the HPA's metric {}: add --trace {}=FILE",
            quoted(missing),
            escaped(missing)
        );
    }
    let columns: Vec<String> = files.keys().cloned().collect();
    let series: Vec<Vec<Series>> = files
        .values()
        .map(|p| read_matrix(p))
        .collect::<Result<_>>()?;
    let start = series.iter().flatten().map(|s| s[0].0).max().unwrap_or(0);
    let mut times: Vec<Millis> = series
        .iter()
        .flatten()
        .flatten()
        .map(|s| s.0)
        .filter(|t| *t > start)
        .collect();
    times.push(start);
    times.sort_unstable();
    times.dedup();
    let rows = times
        .into_iter()
        .map(|time| {
            let values = series
                .iter()
                .map(|metric| {
                    metric.iter().fold(0_i64, |sum, s| {
                        let at = s.partition_point(|(t, _)| *t <= time);
                        sum.saturating_add(s[at - 1].1)
                    })
                })
                .collect();
            (time - start, values)
        })
        .collect();
    Ok(Trace {
        columns: Columns::Metrics(columns),
        rows,
    })
}
