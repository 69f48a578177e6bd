//! Load traces: a CSV file (`time` then `replicas` or one column per metric)
//! or Prometheus `query_range` responses (a `matrix`) per metric, read as
//! `--prometheus` reads live answers. Every problem is an error naming the
//! file and the line (CSV) or the sample (JSON); values are quantities,
//! converted to milli-units as the API server converts them (rounded up).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Result, bail};
use hpa_lint::prometheus::replay;
use hpa_lint::prometheus::time::UnixMillis;
use hpa_lint_rules::controller::{Millis, parse_duration};
use hpa_lint_rules::model::quantity::Quantity;

/// Larger trace files are refused rather than read into memory.
pub const MAX_TRACE_BYTES: u64 = 256 << 20;

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
    let name = path.display();
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
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{name}: not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// A value in milli-units: a non-negative quantity (`3.2`, `3200m`, `256Mi`).
fn milli(text: &str) -> Result<i64, String> {
    let quantity =
        Quantity::parse(text).map_err(|_| format!("`{text}` is not a number or quantity"))?;
    if quantity.is_negative() {
        return Err(format!("`{text}` is negative"));
    }
    quantity
        .milli_value()
        .ok_or_else(|| format!("`{text}` is too large"))
}

/// Reads a CSV trace; `metrics` are the HPA's metric names.
pub fn read_csv(path: &Path, metrics: &[String]) -> Result<Trace> {
    let name = path.display().to_string();
    let text = read_text(path)?;
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, line)| (i + 1, line.trim()))
        .filter(|(_, line)| !line.is_empty() && !line.starts_with('#'));
    let Some((header_line, header)) = lines.next() else {
        bail!("{name}: the trace is empty: expected a header such as `time,replicas`");
    };
    if header.starts_with('{') {
        let metric = metrics.first().map_or("cpu", String::as_str);
        bail!(
            "{name}: a Prometheus `query_range` answer, not a CSV trace: name the metric it gives, e.g. --trace {metric}={name} (the HPA's metrics are {})",
            if metrics.is_empty() {
                "none".to_owned()
            } else {
                metrics.join(", ")
            }
        );
    }
    let at = |line: usize, message: String| anyhow::anyhow!("{name}:{line}: {message}");
    let header: Vec<&str> = header.split(',').map(str::trim).collect();
    if header[0] != "time" {
        return Err(at(
            header_line,
            format!("the first column must be `time`, not `{}`", header[0]),
        ));
    }
    let names = &header[1..];
    let columns = if names == ["replicas"] {
        Columns::Replicas
    } else {
        for (i, column) in names.iter().enumerate() {
            if !metrics.iter().any(|m| m == column) {
                let known = if metrics.is_empty() {
                    "none".to_owned()
                } else {
                    metrics.join(", ")
                };
                return Err(at(
                    header_line,
                    format!(
                        "unknown column `{column}`: the HPA's metrics are {known}, or use a single `replicas` column"
                    ),
                ));
            }
            if names[..i].contains(column) {
                return Err(at(header_line, format!("column `{column}` appears twice")));
            }
        }
        if let Some(missing) = metrics.iter().find(|m| !names.contains(&m.as_str())) {
            return Err(at(
                header_line,
                format!("no column for the HPA's metric `{missing}`"),
            ));
        }
        Columns::Metrics(names.iter().map(|c| (*c).to_owned()).collect())
    };
    let mut rows: Vec<(Millis, Vec<i64>)> = Vec::new();
    for (line, row) in lines {
        let fields: Vec<&str> = row.split(',').map(str::trim).collect();
        if fields.len() != header.len() {
            return Err(at(
                line,
                format!("{} fields, the header has {}", fields.len(), header.len()),
            ));
        }
        let time = parse_time(fields[0]).map_err(|e| at(line, e))?;
        check_order(&rows, time).map_err(|e| at(line, e))?;
        let values = fields[1..]
            .iter()
            .map(|v| match columns {
                Columns::Replicas => v
                    .parse::<i32>()
                    .ok()
                    .filter(|r| *r >= 0)
                    .map(i64::from)
                    .ok_or_else(|| format!("`{v}` is not a replica count")),
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
    if text.starts_with('-') {
        return Err(format!("negative time `{text}`"));
    }
    parse_duration(text).map_err(|_| {
        format!("invalid time `{text}`: expected seconds or a duration such as `90s`, `5m`")
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

/// Reads `--trace`: one CSV file, or `NAME=FILE.json` Prometheus
/// `query_range` answers, one per metric (read as live answers are, see
/// [`hpa_lint::prometheus::replay::from_files`]). Returns the trace and, for
/// Prometheus answers, the Unix time of its time 0.
pub fn read(
    specs: &[String],
    metrics: &[String],
    max_gap: Millis,
) -> Result<(Trace, Option<UnixMillis>)> {
    if let [single] = specs
        && !single.contains('=')
    {
        return Ok((read_csv(single.as_ref(), metrics)?, None));
    }
    let mut files = BTreeMap::new();
    for spec in specs {
        let Some((name, path)) = spec.split_once('=') else {
            bail!(
                "--trace {spec}: with several traces, name each one's metric: --trace cpu=cpu.json"
            );
        };
        if files.insert(name.to_owned(), Path::new(path)).is_some() {
            bail!("--trace {name}=…: given twice");
        }
    }
    for name in files.keys() {
        if !metrics.contains(name) {
            bail!(
                "--trace {name}=…: unknown metric `{name}`: the HPA's metrics are {}",
                metrics.join(", ")
            );
        }
    }
    if let Some(missing) = metrics.iter().find(|m| !files.contains_key(*m)) {
        bail!("no trace for the HPA's metric `{missing}`: add --trace {missing}=FILE");
    }
    let files: Vec<(String, &Path)> = files.into_iter().collect();
    let table = replay::from_files(&files, max_gap)?;
    let trace = Trace {
        columns: Columns::Metrics(files.into_iter().map(|(name, _)| name).collect()),
        rows: table.rows,
    };
    for note in &table.notes {
        eprintln!("hpa-lint: note: {note}");
    }
    Ok((trace, Some(table.start)))
}
