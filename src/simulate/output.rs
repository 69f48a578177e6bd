//! The simulation as a text table and terminal chart, as JSON (the stable
//! contract documented in docs/simulate.md) and as CSV, each written sync by sync.
//! JSON and CSV carry the same fields, with the same numbers.

use std::io::Write;

use crate::prometheus::replay::{Fidelity, Tally};
use crate::prometheus::time;
use anyhow::Result;
use hpa_lint_rules::controller::flags::{format_duration, thousandths};
use hpa_lint_rules::controller::reconcile::{Condition, MetricKind, MetricResult, ResourceTarget};
use hpa_lint_rules::controller::simulate::Step;
use serde_json::{Map, Value, json};

use super::{Setup, Sink};

/// Milli-units in the metric's unit, as a number.
pub fn units(milli: i64) -> f64 {
    milli as f64 / 1000.0
}

/// Milliseconds as seconds.
fn seconds(ms: i64) -> Value {
    thousandths(ms)
}

/// `3.2`, `800m`: milli-units written as a quantity.
fn quantity(milli: i64) -> String {
    if milli % 1000 == 0 {
        (milli / 1000).to_string()
    } else {
        format!("{milli}m")
    }
}

/// What a metric shows per pod: `80%` or `800m`, and its target.
fn per_pod(kind: &MetricKind, result: &MetricResult) -> String {
    match result {
        MetricResult::Failed { reason, .. } => reason.to_string(),
        MetricResult::Proposed {
            utilization: Some(u),
            ..
        } => format!("{u}%"),
        MetricResult::Proposed { current, .. } => {
            let per = if matches!(kind, MetricKind::Value { .. }) {
                ""
            } else {
                "/pod"
            };
            format!("{}{per}", quantity(*current))
        }
    }
}

/// The target of a metric as `kubectl get hpa` shows it.
fn target(kind: &MetricKind) -> String {
    match kind {
        MetricKind::Resource {
            target: ResourceTarget::Utilization(u),
            ..
        } => format!("{u}%"),
        MetricKind::Resource {
            target: ResourceTarget::AverageValue(t),
            ..
        }
        | MetricKind::Pods { target: t, .. }
        | MetricKind::AverageOfTotal { target: t, .. } => format!("{}/pod", quantity(*t)),
        MetricKind::Value { target, .. } => quantity(*target),
        MetricKind::Invalid { reason, .. } => (*reason).to_owned(),
    }
}

/// The metric's `type` in `spec.metrics`.
fn metric_type(kind: &MetricKind) -> &str {
    match kind {
        MetricKind::Resource {
            container: None, ..
        } => "Resource",
        MetricKind::Resource { .. } => "ContainerResource",
        MetricKind::Pods { .. } => "Pods",
        MetricKind::Value { external, .. } | MetricKind::AverageOfTotal { external, .. } => {
            if *external {
                "External"
            } else {
                "Object"
            }
        }
        MetricKind::Invalid { type_, .. } => type_,
    }
}

/// The field of the metric's current value: `value` (Object and External
/// `Value` targets) or `averageValue`.
fn value_field(kind: &MetricKind) -> &'static str {
    if matches!(kind, MetricKind::Value { .. }) {
        "value"
    } else {
        "averageValue"
    }
}

/// Whether the metric's target is a utilization (a percentage of requests).
pub fn has_utilization(kind: &MetricKind) -> bool {
    matches!(
        kind,
        MetricKind::Resource {
            target: ResourceTarget::Utilization(_),
            ..
        }
    )
}

fn reason(step: &Step) -> String {
    let conditions = &step.conditions;
    let mut parts = Vec::new();
    if let Some(c) = conditions.able_to_scale.filter(|c| !c.status) {
        parts.push(c.reason);
    }
    if let Some(c) = conditions.scaling_active.filter(|c| !c.status) {
        parts.push(c.reason);
    }
    if let Some(n) = step.outcome.normalized {
        if n.able_to_scale != "ReadyForNewScale" {
            parts.push(n.able_to_scale);
        }
        if n.scaling_limited != "DesiredWithinRange" {
            parts.push(n.scaling_limited);
        }
    }
    parts.join(", ")
}

fn optional(value: Option<i32>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

/// What a text line compares with the line before.
#[derive(PartialEq)]
struct Shown {
    desired: i32,
    recommendation: Option<i32>,
    reason: String,
    demand: Vec<i64>,
    observed: Option<i32>,
}

/// The table of the syncs where something changed, then a chart.
pub struct Text<'s, W: Write> {
    setup: &'s Setup<'s>,
    out: W,
    previous: Option<Shown>,
    syncs: i64,
    chart: Chart,
    tally: Tally,
    /// Each shown metric's per-pod column width: its header's, 12 at least.
    widths: Vec<usize>,
}

impl<'s, W: Write> Text<'s, W> {
    pub fn new(setup: &'s Setup<'s>, mut out: W) -> Result<Self> {
        let a = setup.autoscaler;
        let from = setup
            .start
            .map_or_else(String::new, |t| format!(" (0s is {})", time::format(t)));
        let span = if setup.syncs == 1 {
            "1 sync at 0s".to_owned()
        } else {
            format!(
                "{} syncs from 0s to {}",
                setup.syncs,
                format_duration(setup.end())
            )
        };
        writeln!(
            out,
            "HorizontalPodAutoscaler {}: {} to {} replicas, a sync every {}, {span}{from}",
            setup.found.key(),
            a.min_replicas,
            a.max_replicas,
            format_duration(a.flags.sync_period),
        )?;
        let mut header = format!("{:>8}", "time");
        let mut widths = Vec::new();
        for (m, key, _) in setup.shown_metrics() {
            let per_pod = format!("per pod ({})", target(&a.metrics[m]));
            let width = per_pod.chars().count().max(12);
            header += &format!("  {key:>10}  {per_pod:>width$}");
            widths.push(width);
        }
        header += &format!("  {:>4}  {:>6}  {:>8}", "rec", "stable", "replicas");
        if setup.observed {
            header += &format!("  {:>8}", "observed");
        }
        header += "  reason";
        writeln!(out, "{header}")?;
        Ok(Self {
            setup,
            out,
            previous: None,
            syncs: 0,
            chart: Chart::new(setup.syncs),
            tally: Tally::default(),
            widths,
        })
    }
}

impl<W: Write> Sink for Text<'_, W> {
    fn step(&mut self, step: &Step, demand: &[i64], observed: Option<i32>) -> Result<()> {
        self.tally.add(step.current, observed);
        let shown = Shown {
            desired: step.outcome.desired,
            recommendation: step.outcome.recommendation,
            reason: reason(step),
            demand: demand.to_vec(),
            observed,
        };
        self.syncs += 1;
        self.chart.add(step.outcome.desired);
        let last = self.syncs == self.setup.syncs;
        if self.previous.as_ref() == Some(&shown) && !last {
            return Ok(());
        }
        let a = self.setup.autoscaler;
        let mut line = format!("{:>8}", format_duration(step.time));
        for ((m, _, column), width) in self.setup.shown_metrics().zip(&self.widths) {
            let value = step
                .outcome
                .metrics
                .get(m)
                .map_or_else(|| "-".to_owned(), |r| per_pod(&a.metrics[m], r));
            // As the trace writes it (`1.2`, `4`): one unit down the column.
            let demand =
                column.map_or_else(|| "-".to_owned(), |c| thousandths(demand[c]).to_string());
            line += &format!("  {demand:>10}  {value:>width$}");
        }
        let stable = step.outcome.normalized.map(|n| n.stabilized);
        let replicas = if step.outcome.desired == step.current {
            step.current.to_string()
        } else {
            format!("{} → {}", step.current, step.outcome.desired)
        };
        line += &format!(
            "  {:>4}  {:>6}  {replicas:>8}",
            optional(step.outcome.recommendation),
            optional(stable),
        );
        if self.setup.observed {
            line += &format!("  {:>8}", optional(observed));
        }
        line += &format!("  {}", shown.reason);
        writeln!(self.out, "{}", line.trim_end())?;
        self.previous = Some(shown);
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        if let Some(fidelity) = self.tally.fidelity() {
            writeln!(
                self.out,
                "\nobserved (kube-state-metrics): the simulated replicas equal the observed at {:.1} % of {} syncs; mean absolute difference {:.2} replicas",
                fidelity.equal * 100.0,
                fidelity.syncs,
                fidelity.mean_absolute_difference
            )?;
        }
        writeln!(self.out)?;
        let top = self.setup.autoscaler.max_replicas;
        self.chart.write(top, self.setup.end(), &mut self.out)?;
        if self.setup.syncs == 1 {
            writeln!(
                self.out,
                "\nthis is one sync, at 0s; --until simulates longer (e.g. --until 30m)"
            )?;
        }
        self.out.flush()?;
        Ok(())
    }
}

/// Replicas over time in the terminal: one column per time slice (its
/// highest count), filled as the syncs come.
struct Chart {
    per_column: i64,
    columns: Vec<i32>,
    count: i64,
}

impl Chart {
    const WIDTH: i64 = 64;
    const HEIGHT: i32 = 10;

    fn new(syncs: i64) -> Self {
        Self {
            per_column: (syncs + Self::WIDTH - 1) / Self::WIDTH,
            columns: Vec::new(),
            count: 0,
        }
    }

    fn add(&mut self, replicas: i32) {
        if self.count % self.per_column.max(1) == 0 {
            self.columns.push(replicas);
        } else if let Some(column) = self.columns.last_mut() {
            *column = (*column).max(replicas);
        }
        self.count += 1;
    }

    fn write(&self, max_replicas: i32, end: i64, out: &mut impl Write) -> std::io::Result<()> {
        let columns = &self.columns;
        let top = columns
            .iter()
            .copied()
            .max()
            .unwrap_or(0)
            .max(max_replicas)
            .max(1);
        writeln!(out, "replicas")?;
        for level in (1..=Self::HEIGHT).rev() {
            let height = f64::from(Self::HEIGHT);
            let threshold = f64::from(top) * f64::from(level) / height;
            let label = if level == Self::HEIGHT {
                format!("{top:>6} ┤")
            } else {
                format!("{:>6} │", "")
            };
            let bar: String = columns
                .iter()
                .map(|&c| {
                    if f64::from(c) >= threshold - f64::from(top) / height / 2.0 {
                        '█'
                    } else {
                        ' '
                    }
                })
                .collect();
            writeln!(out, "{label}{}", bar.trim_end())?;
        }
        writeln!(out, "{:>6} └{}", 0, "─".repeat(columns.len()))?;
        if end == 0 {
            return writeln!(out, "{:>8}", "0s");
        }
        // The end under the last column, and never against the `0s`.
        let end = format_duration(end);
        let width = columns.len().saturating_sub(1).max(end.len() + 1);
        writeln!(out, "{:>8}{end:>width$}", "0s")
    }
}

/// One metric's fields at a sync, as JSON and CSV carry them: `demand`,
/// `averageUtilization` (utilization targets), `averageValue` or `value`,
/// `replicas` (the metric's proposal), and `error` (the `ScalingActive`
/// reason when the metric failed). `None`: not set at this sync.
fn metric_fields(
    kind: &MetricKind,
    demand: Option<i64>,
    result: Option<&MetricResult>,
) -> Vec<(&'static str, Option<Value>)> {
    let mut fields = vec![("demand", demand.map(thousandths))];
    let proposed = match result {
        Some(MetricResult::Proposed {
            replicas,
            utilization,
            current,
        }) => Some((*replicas, *utilization, *current)),
        _ => None,
    };
    if has_utilization(kind) {
        fields.push((
            "averageUtilization",
            proposed.and_then(|(_, u, _)| u).map(|u| json!(u)),
        ));
    }
    fields.push((
        value_field(kind),
        proposed.map(|(_, _, current)| thousandths(current)),
    ));
    fields.push(("replicas", proposed.map(|(r, _, _)| json!(r))));
    let error = match result {
        Some(MetricResult::Failed { reason, .. }) => Some(json!(reason)),
        _ => None,
    };
    fields.push(("error", error));
    fields
}

/// The conditions as `kubectl describe hpa` lists them: type, reason.
const CONDITIONS: [&str; 4] = [
    "AbleToScale",
    "ScalingActive",
    "ScalingLimited",
    "ScaledToZero",
];

fn conditions(step: &Step) -> [Option<Condition>; 4] {
    let c = &step.conditions;
    [
        c.able_to_scale,
        c.scaling_active,
        c.scaling_limited,
        c.scaled_to_zero,
    ]
}

/// One JSON document, written as the syncs come: the header, then one step
/// per sync, then the closing brackets.
pub struct Json<'s, W: Write> {
    setup: &'s Setup<'s>,
    out: W,
    first: bool,
    tally: Tally,
}

impl<'s, W: Write> Json<'s, W> {
    pub fn new(setup: &'s Setup<'s>, mut out: W) -> Result<Self> {
        let key = &setup.found.object.key;
        let metrics: Map<String, Value> = setup
            .shown_metrics()
            .map(|(m, key, _)| {
                let kind = &setup.autoscaler.metrics[m];
                let mut about =
                    json!({"type": metric_type(kind), "name": kind.shown_name(), "index": m});
                if let MetricKind::Resource {
                    container: Some(container),
                    ..
                } = kind
                {
                    about["container"] = json!(container);
                }
                (key.to_owned(), about)
            })
            .collect();
        let mut head = json!({
            "hpa": {"namespace": key.namespace, "name": key.name},
            "syncPeriod": seconds(setup.autoscaler.flags.sync_period),
        });
        if let Some(start) = setup.start {
            head["start"] = json!(time::format(start));
        }
        head["metrics"] = Value::Object(metrics);
        let head = serde_json::to_string(&head)?;
        // The object without its closing brace, then the steps.
        write!(out, "{},\"steps\":[", &head[..head.len() - 1])?;
        Ok(Self {
            setup,
            out,
            first: true,
            tally: Tally::default(),
        })
    }
}

impl<W: Write> Sink for Json<'_, W> {
    fn step(&mut self, step: &Step, demand: &[i64], observed: Option<i32>) -> Result<()> {
        self.tally.add(step.current, observed);
        let conditions: Map<String, Value> = CONDITIONS
            .iter()
            .zip(conditions(step))
            .filter_map(|(name, c)| Some(((*name).to_owned(), json!(c?.reason))))
            .collect();
        let mut metrics = Map::new();
        for (m, key, column) in self.setup.shown_metrics() {
            let kind = &self.setup.autoscaler.metrics[m];
            let entry: Map<String, Value> =
                metric_fields(kind, column.map(|c| demand[c]), step.outcome.metrics.get(m))
                    .into_iter()
                    .filter_map(|(field, value)| Some((field.to_owned(), value?)))
                    .collect();
            metrics.insert(key.to_owned(), Value::Object(entry));
        }
        let mut value = json!({
            "time": seconds(step.time),
            "currentReplicas": step.current,
            "recommendation": step.outcome.recommendation,
            "stabilized": step.outcome.normalized.map(|n| n.stabilized),
            "desiredReplicas": step.outcome.desired,
            "conditions": conditions,
            "metrics": metrics,
        });
        if self.setup.observed {
            value["observedReplicas"] = json!(observed);
        }
        if !std::mem::take(&mut self.first) {
            self.out.write_all(b",")?;
        }
        serde_json::to_writer(&mut self.out, &value)?;
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        self.out.write_all(b"]")?;
        if let Some(fidelity) = self.tally.fidelity() {
            write!(self.out, ",\"fidelity\":")?;
            serde_json::to_writer(&mut self.out, &fidelity_json(&fidelity))?;
        }
        self.out.write_all(b"}\n")?;
        self.out.flush()?;
        Ok(())
    }
}

pub fn fidelity_json(fidelity: &Fidelity) -> Value {
    json!({
        "syncs": fidelity.syncs,
        "equal": fidelity.equal,
        "meanAbsoluteDifference": fidelity.mean_absolute_difference,
    })
}

/// One CSV row per sync, the fields of the JSON steps as columns (a
/// metric's as `<key>.<field>`), numbers written as in JSON.
pub struct Csv<'s, W: Write> {
    setup: &'s Setup<'s>,
    out: csv::Writer<W>,
    row: Vec<String>,
}

/// A CSV error as what it is: a failed write stays an `io::Error` (a closed
/// pipe is no error).
fn csv_error(error: csv::Error) -> anyhow::Error {
    match error.into_kind() {
        csv::ErrorKind::Io(error) => error.into(),
        other => anyhow::anyhow!("writing CSV: {other:?}"),
    }
}

/// A JSON value as a CSV field: numbers and strings as JSON writes them,
/// without quotes; nothing for null.
fn field(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

impl<'s, W: Write> Csv<'s, W> {
    pub fn new(setup: &'s Setup<'s>, out: W) -> Result<Self> {
        let mut out = csv::Writer::from_writer(out);
        let mut header: Vec<String> = [
            "time",
            "currentReplicas",
            "recommendation",
            "stabilized",
            "desiredReplicas",
        ]
        .into_iter()
        .chain(CONDITIONS)
        .map(str::to_owned)
        .collect();
        for (m, key, _) in setup.shown_metrics() {
            let kind = &setup.autoscaler.metrics[m];
            for (name, _) in metric_fields(kind, None, None) {
                header.push(format!("{key}.{name}"));
            }
        }
        if setup.observed {
            header.push("observedReplicas".to_owned());
        }
        out.write_record(&header).map_err(csv_error)?;
        Ok(Self {
            setup,
            out,
            row: Vec::new(),
        })
    }
}

impl<W: Write> Sink for Csv<'_, W> {
    fn step(&mut self, step: &Step, demand: &[i64], observed: Option<i32>) -> Result<()> {
        let row = &mut self.row;
        row.clear();
        let number = |v: Option<i32>| field(v.map(|v| json!(v)).as_ref());
        row.push(field(Some(&seconds(step.time))));
        row.push(step.current.to_string());
        row.push(number(step.outcome.recommendation));
        row.push(number(step.outcome.normalized.map(|n| n.stabilized)));
        row.push(step.outcome.desired.to_string());
        row.extend(
            conditions(step)
                .iter()
                .map(|c| c.map_or_else(String::new, |c| c.reason.to_owned())),
        );
        for (m, _, column) in self.setup.shown_metrics() {
            let kind = &self.setup.autoscaler.metrics[m];
            let fields =
                metric_fields(kind, column.map(|c| demand[c]), step.outcome.metrics.get(m));
            row.extend(fields.iter().map(|(_, value)| field(value.as_ref())));
        }
        if self.setup.observed {
            row.push(number(observed));
        }
        self.out.write_record(&*row).map_err(csv_error)
    }

    fn finish(&mut self) -> Result<()> {
        self.out.flush()?;
        Ok(())
    }
}
