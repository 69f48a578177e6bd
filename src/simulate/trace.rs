//! Load traces: a CSV file (`time` then `replicas` or one column per metric)
//! or Prometheus `query_range` responses (a `matrix`) per metric, read as
//! `--prometheus` reads live answers. Every problem is an error naming the
//! file and the line (CSV) or the sample (JSON), with the text it quotes shown
//! with its control characters escaped; values are quantities, converted to
//! milli-units as the API server converts them (rounded up). A UTF-8 byte
//! order mark is skipped.

use std::collections::BTreeMap;
use std::path::Path;

use crate::prometheus::replay;
use crate::prometheus::time::UnixMillis;
use anyhow::{Result, bail};
use hpa_lint_rules::controller::flags::DurationError;
use hpa_lint_rules::controller::reconcile::MetricKind;
use hpa_lint_rules::controller::{Autoscaler, Millis, parse_duration};
use hpa_lint_rules::model::quantity::Quantity;

/// Larger trace files are refused rather than read into memory.
pub const MAX_TRACE_BYTES: u64 = 256 << 20;

/// The name of the CSV column with the controller's raw recommendation,
/// unless the HPA has a metric of that name (then it is that metric, as in a
/// Prometheus trace).
pub const RECOMMENDATION_COLUMN: &str = "replicas";

pub use crate::emit::escaped;

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

/// Each metric's key: its name (the resource or `metric.name`), or, when
/// another metric of the HPA has the same name, `name[i]` with `i` its index
/// in `spec.metrics` (two External metrics of one name with other selectors
/// are two series; a metric that is named `q[1]` gets an index too when
/// another's key is `q[1]`). `None` for a metric with no name.
pub fn metric_keys(autoscaler: &Autoscaler) -> Vec<Option<String>> {
    let names: Vec<&str> = autoscaler.metrics.iter().map(|m| m.shown_name()).collect();
    let mut keys: Vec<Option<String>> = names
        .iter()
        .map(|name| (!name.is_empty()).then(|| (*name).to_owned()))
        .collect();
    // Each round indexes the plain keys (a metric's own name) that another
    // key equals. Indexed keys are unique (the last `[` is the index's), so
    // a second round only meets names such as `q[1]`.
    loop {
        let clashing: Vec<usize> = (0..keys.len())
            .filter(|&i| {
                keys[i].as_deref() == Some(names[i])
                    && keys.iter().filter(|k| **k == keys[i]).count() > 1
            })
            .collect();
        if clashing.is_empty() {
            return keys;
        }
        for i in clashing {
            keys[i] = Some(format!("{}[{i}]", names[i]));
        }
    }
}

/// The trace columns the metrics of one or more HPAs read: a column per
/// metric key ([`metric_keys`]); a metric with no column of its key reads
/// the column of its name when several metrics share it (`cpu` for `cpu[0]`
/// and `cpu[1]`). Invalid metrics read none (every sync fails them).
#[derive(Debug)]
pub struct MetricColumns {
    /// Each key once, with the name of its metric.
    named: Vec<(String, String)>,
    /// The names several metrics of one HPA have (invalid ones included).
    shared: Vec<String>,
    /// The keys of invalid metrics, with why the controller fails them.
    invalid: Vec<(String, String)>,
}

impl MetricColumns {
    pub fn of(autoscalers: &[&Autoscaler]) -> Self {
        let (mut named, mut shared): (Vec<(String, String)>, Vec<String>) = Default::default();
        let mut invalid = Vec::new();
        for autoscaler in autoscalers {
            let metrics = &autoscaler.metrics;
            for (metric, key) in metrics.iter().zip(metric_keys(autoscaler)) {
                let name = metric.shown_name();
                if !name.is_empty()
                    && metrics.iter().filter(|m| m.shown_name() == name).count() > 1
                    && !shared.iter().any(|s| s == name)
                {
                    shared.push(name.to_owned());
                }
                if let (MetricKind::Invalid { message, .. }, Some(key)) = (metric, &key) {
                    invalid.push((key.clone(), message.clone()));
                }
                if let Some(key) = key.filter(|_| !metric.name().is_empty())
                    && !named.iter().any(|(k, _)| *k == key)
                {
                    named.push((key, metric.name().to_owned()));
                }
            }
        }
        Self {
            named,
            shared,
            invalid,
        }
    }

    /// Why the controller cannot evaluate the metric of `key`, if it is
    /// an invalid one (it reads no column).
    fn why_invalid(&self, key: &str) -> Option<&str> {
        let found = self.invalid.iter().find(|(k, _)| k == key);
        found.map(|(_, why)| why.as_str())
    }

    /// Whether a column of this name gives some metric: a key, or a name
    /// several metrics share.
    pub fn gives(&self, column: &str) -> bool {
        self.named.iter().any(|(key, _)| key == column) || self.is_shared(column)
    }

    /// The keys, in the order of the metrics.
    pub fn keys(&self) -> Vec<String> {
        self.named.iter().map(|(key, _)| key.clone()).collect()
    }

    /// Whether several metrics of an HPA have the name `name` (a metric
    /// indexed only because its name is another's key, `q[1]`, does not
    /// share it).
    fn is_shared(&self, name: &str) -> bool {
        self.shared.iter().any(|s| s == name)
    }

    /// The metrics, as messages list them.
    pub fn describe(&self) -> String {
        if self.named.is_empty() {
            return "none".to_owned();
        }
        let mut shown = escaped(&self.keys().join(", "));
        let mut shared: Vec<&String> = self.shared.iter().collect();
        shared.sort_unstable();
        for name in shared {
            shown += &format!(" (`{}` gives every `{0}[…]`)", escaped(name));
        }
        shown
    }

    /// For each key, the index in `columns` of the column that gives it:
    /// its own, else its name's when that is shared. Every metric must have
    /// one, and every column give some metric.
    pub fn resolve(&self, columns: &[String]) -> Result<Vec<usize>, Unresolved> {
        // A column no metric knows: most likely a typo.
        if let Some(unknown) = columns.iter().find(|c| !self.gives(c)) {
            return Err(Unresolved::Unused(unknown.clone()));
        }
        let position = |name: &str| columns.iter().position(|c| c == name);
        let sources = (self.named.iter())
            .map(|(key, name)| {
                let shared = || position(name).filter(|_| key != name && self.is_shared(name));
                position(key)
                    .or_else(shared)
                    .ok_or_else(|| Unresolved::Missing(key.clone()))
            })
            .collect::<Result<Vec<usize>, Unresolved>>()?;
        match (0..columns.len()).find(|c| !sources.contains(c)) {
            Some(unused) => Err(Unresolved::Unused(columns[unused].clone())),
            None => Ok(sources),
        }
    }
}

/// Why a trace's columns do not give each metric once.
#[derive(Debug)]
pub enum Unresolved {
    /// No column gives this metric.
    Missing(String),
    /// This column gives no metric.
    Unused(String),
}

impl Unresolved {
    /// The error, naming the trace's parts as `what` (`column`, `trace`).
    pub fn describe(&self, wanted: &MetricColumns, what: &str) -> String {
        match self {
            Unresolved::Missing(key) => format!("no {what} for the HPA's metric {}", quoted(key)),
            Unresolved::Unused(column) if wanted.is_shared(column) => format!(
                "{what} {} gives no metric: each `{}[…]` has its own",
                quoted(column),
                escaped(column)
            ),
            Unresolved::Unused(column) if let Some(why) = wanted.why_invalid(column) => format!(
                "{what} {}: the controller cannot evaluate that metric ({}), so it reads none",
                quoted(column),
                escaped(why)
            ),
            Unresolved::Unused(column) => format!(
                "unknown {what} {}: the HPA's metrics are {}",
                quoted(column),
                wanted.describe()
            ),
        }
    }
}

/// `rows` of values per column, as values per key: each key's from the
/// column that gives it (`sources`, from [`MetricColumns::resolve`]).
fn by_key(rows: Vec<(Millis, Vec<i64>)>, sources: &[usize]) -> Vec<(Millis, Vec<i64>)> {
    rows.into_iter()
        .map(|(time, values)| (time, sources.iter().map(|&c| values[c]).collect()))
        .collect()
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

/// Reads a CSV trace of the metrics `wanted`.
pub fn read_csv(path: &Path, wanted: &MetricColumns) -> Result<Trace> {
    let name = file_name(path);
    let text = read_text(path)?;
    let mut records = csv_records(&text);
    let at = |line: usize, message: String| anyhow::anyhow!("{name}:{line}: {message}");
    let Some(first) = records.next() else {
        bail!("{name}: the trace is empty: expected a header such as `time,replicas`");
    };
    let keys = wanted.keys();
    if text.trim_start().starts_with('{') {
        let metric = keys.first().map_or("cpu", String::as_str);
        bail!(
            "{name}: a Prometheus `query_range` answer, not a CSV trace: name the metric it gives, e.g. --trace {}={name} (the HPA's metrics are {})",
            escaped(metric),
            wanted.describe()
        );
    }
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
    let recommendation = names == [RECOMMENDATION_COLUMN] && !wanted.gives(RECOMMENDATION_COLUMN);
    let (columns, sources) = if recommendation {
        (Columns::Replicas, Vec::new())
    } else {
        if let Some((_, column)) = (names.iter().enumerate()).find(|(i, c)| names[..*i].contains(c))
        {
            return Err(at(
                header_line,
                format!("column {} appears twice", quoted(column)),
            ));
        }
        let sources = wanted.resolve(names).map_err(|e| {
            let hint = match &e {
                // A column no metric has: maybe a trace of recommendations.
                Unresolved::Unused(c)
                    if !wanted.is_shared(c) && wanted.why_invalid(c).is_none() =>
                {
                    format!(", or use a single `{RECOMMENDATION_COLUMN}` column")
                }
                _ => String::new(),
            };
            at(header_line, e.describe(wanted, "column") + &hint)
        })?;
        (Columns::Metrics(keys), sources)
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
    if let Columns::Metrics(_) = columns {
        rows = by_key(rows, &sources);
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
        // Read, but not in whole milliseconds: the finest a run keeps.
        DurationError::Invalid(_)
            if text.bytes().all(|b| b.is_ascii_digit() || b == b'.') && text.parse::<f64>().is_ok() =>
        {
            format!("time {shown} is finer than a millisecond: trace times are whole milliseconds")
        }
        DurationError::Invalid(_) => format!(
            "invalid time {shown}: expected seconds or a duration such as `90s`, `5m` (units ms, s, m, h)"
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

/// Reads `--trace`: one CSV file, or `NAME=FILE.json` Prometheus
/// `query_range` answers, one per metric key (or per name several metrics
/// share), read as live answers are (see
/// [`crate::prometheus::replay::from_files`]). Returns the trace and, for
/// Prometheus answers, the Unix time of its time 0.
pub fn read(
    specs: &[String],
    wanted: &MetricColumns,
    max_gap: Millis,
) -> Result<(Trace, Option<UnixMillis>)> {
    if let [single] = specs
        && !single.contains('=')
    {
        return Ok((read_csv(single.as_ref(), wanted)?, None));
    }
    let mut files = BTreeMap::new();
    for spec in specs {
        let Some((name, path)) = spec.split_once('=') else {
            bail!(
                "--trace {}: with several traces, name each one's metric: --trace cpu=cpu.json",
                escaped(spec)
            );
        };
        if files.insert(name.to_owned(), Path::new(path)).is_some() {
            bail!("--trace {}=…: given twice", escaped(name));
        }
    }
    let files: Vec<(String, &Path)> = files.into_iter().collect();
    let names: Vec<String> = files.iter().map(|(name, _)| name.clone()).collect();
    let sources = wanted.resolve(&names).map_err(|e| match &e {
        Unresolved::Missing(key) => anyhow::anyhow!(
            "no trace for the HPA's metric {}: add --trace {}=FILE",
            quoted(key),
            escaped(key)
        ),
        Unresolved::Unused(name) => anyhow::anyhow!(
            "--trace {}=…: {}",
            escaped(name),
            e.describe(wanted, "metric")
        ),
    })?;
    let table = replay::from_files(&files, max_gap)?;
    for note in &table.notes {
        crate::tell!("hpa-lint: note: {}", escaped(note));
    }
    let trace = Trace {
        columns: Columns::Metrics(wanted.keys()),
        rows: by_key(table.rows, &sources),
    };
    Ok((trace, Some(table.start)))
}
