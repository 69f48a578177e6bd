//! The simulation as a text table and terminal chart, as JSON (the stable
//! contract documented in the README) and as CSV.

use std::io::{self, Write};

use hpa_lint::prometheus::replay::Fidelity;
use hpa_lint::prometheus::time;
use hpa_lint_rules::controller::flags::format_duration;
use hpa_lint_rules::controller::reconcile::{MetricKind, MetricResult, ResourceTarget};
use hpa_lint_rules::controller::simulate::Step;
use serde_json::{Map, Value, json};

use super::{Columns, Run};

/// Milli-units in the metric's unit, as a number.
pub fn units(milli: i64) -> f64 {
    milli as f64 / 1000.0
}

fn seconds(ms: i64) -> Value {
    if ms % 1000 == 0 {
        json!(ms / 1000)
    } else {
        json!(ms as f64 / 1000.0)
    }
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
pub fn target(kind: &MetricKind) -> String {
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

fn reason(step: &Step) -> String {
    let conditions = &step.conditions;
    let mut parts = Vec::new();
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

pub fn text(run: &Run<'_>, out: &mut impl Write) -> io::Result<()> {
    let a = run.autoscaler;
    let last = run.steps.last().map_or(0, |s| s.time);
    let from = run
        .start
        .map_or_else(String::new, |t| format!(" (0s is {})", time::format(t)));
    writeln!(
        out,
        "HorizontalPodAutoscaler {}: {} to {} replicas, a sync every {}, {} syncs from 0s to {}{from}",
        run.found.key(),
        a.min_replicas,
        a.max_replicas,
        format_duration(a.flags.sync_period),
        run.steps.len(),
        format_duration(last)
    )?;
    let mut header = format!("{:>8}", "time");
    for (i, metric) in a.metrics.iter().enumerate() {
        if run.column_of(i).is_some() {
            let name = metric.name();
            header += &format!(
                "  {:>10}  {:>12}",
                name,
                format!("per pod ({})", target(metric))
            );
        }
    }
    let observed = !run.observed.is_empty();
    header += &format!("  {:>4}  {:>6}  {:>8}", "rec", "stable", "replicas");
    if observed {
        header += &format!("  {:>8}", "observed");
    }
    header += "  reason";
    writeln!(out, "{header}")?;
    let mut previous: Option<(&Step, String)> = None;
    for (i, step) in run.steps.iter().enumerate() {
        let reason = reason(step);
        let changed = previous.as_ref().is_none_or(|(p, r)| {
            p.outcome.desired != step.outcome.desired
                || p.outcome.recommendation != step.outcome.recommendation
                || *r != reason
                || run.demand.get(i) != run.demand.get(i - 1)
                || run.observed.get(i) != run.observed.get(i - 1)
        });
        if changed || i + 1 == run.steps.len() {
            let mut line = format!("{:>8}", format_duration(step.time));
            for (m, metric) in a.metrics.iter().enumerate() {
                let Some(column) = run.column_of(m) else {
                    continue;
                };
                let shown = step
                    .outcome
                    .metrics
                    .get(m)
                    .map_or_else(|| "-".to_owned(), |r| per_pod(metric, r));
                line += &format!("  {:>10}  {:>12}", quantity(run.demand[i][column]), shown);
            }
            let stable = step.outcome.normalized.map(|n| n.stabilized);
            let replicas = if step.outcome.desired == step.current {
                step.current.to_string()
            } else {
                format!("{} → {}", step.current, step.outcome.desired)
            };
            line += &format!(
                "  {:>4}  {:>6}  {:>8}",
                optional(step.outcome.recommendation),
                optional(stable),
                replicas
            );
            if observed {
                line += &format!("  {:>8}", optional(run.observed[i]));
            }
            line += &format!("  {reason}");
            writeln!(out, "{}", line.trim_end())?;
        }
        previous = Some((step, reason));
    }
    if let Some(fidelity) = fidelity(run) {
        writeln!(
            out,
            "\nobserved (kube-state-metrics): the simulated replicas equal the observed at {:.1} % of {} syncs; mean absolute difference {:.2} replicas",
            fidelity.equal * 100.0,
            fidelity.syncs,
            fidelity.mean_absolute_difference
        )?;
    }
    writeln!(out)?;
    chart(run, out)
}

/// The simulated `currentReplicas` against the observed, when there are any.
pub fn fidelity(run: &Run<'_>) -> Option<Fidelity> {
    let simulated: Vec<i32> = run.steps.iter().map(|s| s.current).collect();
    Fidelity::of(&simulated, &run.observed)
}

/// Replicas over time in the terminal: one column per time slice (its highest count).
fn chart(run: &Run<'_>, out: &mut impl Write) -> io::Result<()> {
    const WIDTH: usize = 64;
    const HEIGHT: i32 = 10;
    let counts: Vec<i32> = run.steps.iter().map(|s| s.outcome.desired).collect();
    let top = counts
        .iter()
        .copied()
        .max()
        .unwrap_or(0)
        .max(run.autoscaler.max_replicas)
        .max(1);
    let per_column = counts.len().div_ceil(WIDTH).max(1);
    let columns: Vec<i32> = counts
        .chunks(per_column)
        .map(|c| c.iter().copied().max().unwrap_or(0))
        .collect();
    writeln!(out, "replicas")?;
    for level in (1..=HEIGHT).rev() {
        let threshold = f64::from(top) * f64::from(level) / f64::from(HEIGHT);
        let label = if level == HEIGHT {
            format!("{top:>6} ┤")
        } else {
            format!("{:>6} │", "")
        };
        let bar: String = columns
            .iter()
            .map(|&c| {
                if f64::from(c) >= threshold - f64::from(top) / f64::from(HEIGHT) / 2.0 {
                    '█'
                } else {
                    ' '
                }
            })
            .collect();
        writeln!(out, "{label}{}", bar.trim_end())?;
    }
    let end = run.steps.last().map_or(0, |s| s.time);
    writeln!(out, "{:>6} └{}", 0, "─".repeat(columns.len()))?;
    writeln!(
        out,
        "{:>8}{:>width$}",
        "0s",
        format_duration(end),
        width = columns.len().saturating_sub(1)
    )
}

pub fn json(run: &Run<'_>, out: &mut impl Write) -> io::Result<()> {
    let key = &run.found.object.key;
    let steps: Vec<Value> = run
        .steps
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let conditions: Map<String, Value> = step
                .conditions
                .list()
                .into_iter()
                .map(|(name, c)| (name.to_owned(), json!(c.reason)))
                .collect();
            let mut metrics = Map::new();
            for (m, kind) in run.autoscaler.metrics.iter().enumerate() {
                let Some(column) = run.column_of(m) else {
                    continue;
                };
                let mut entry = Map::new();
                entry.insert("demand".into(), json!(units(run.demand[i][column])));
                match step.outcome.metrics.get(m) {
                    Some(MetricResult::Proposed {
                        replicas,
                        utilization,
                        current,
                    }) => {
                        if let Some(u) = utilization {
                            entry.insert("averageUtilization".into(), json!(u));
                        }
                        let field = if matches!(kind, MetricKind::Value { .. }) {
                            "value"
                        } else {
                            "averageValue"
                        };
                        entry.insert(field.into(), json!(units(*current)));
                        entry.insert("replicas".into(), json!(replicas));
                    }
                    Some(MetricResult::Failed { reason, .. }) => {
                        entry.insert("error".into(), json!(reason));
                    }
                    None => {}
                }
                metrics.insert(kind.name().to_owned(), Value::Object(entry));
            }
            let mut entry = json!({
                "time": seconds(step.time),
                "currentReplicas": step.current,
                "recommendation": step.outcome.recommendation,
                "desiredReplicas": step.outcome.desired,
                "conditions": conditions,
                "metrics": metrics,
            });
            if !run.observed.is_empty() {
                entry["observedReplicas"] = json!(run.observed[i]);
            }
            entry
        })
        .collect();
    let mut document = json!({
        "hpa": {"namespace": key.namespace, "name": key.name},
        "syncPeriod": seconds(run.autoscaler.flags.sync_period),
    });
    if let Some(start) = run.start {
        document["start"] = json!(time::format(start));
    }
    if let Some(fidelity) = fidelity(run) {
        document["fidelity"] = json!({
            "syncs": fidelity.syncs,
            "equal": fidelity.equal,
            "meanAbsoluteDifference": fidelity.mean_absolute_difference,
        });
    }
    document["steps"] = Value::Array(steps);
    serde_json::to_writer(&mut *out, &document)?;
    writeln!(out)
}

pub fn csv(run: &Run<'_>, out: &mut impl Write) -> io::Result<()> {
    let mut header = String::from(
        "time,currentReplicas,recommendation,stabilized,desiredReplicas,AbleToScale,ScalingActive,ScalingLimited",
    );
    let metrics: Vec<(usize, usize)> = (0..run.autoscaler.metrics.len())
        .filter_map(|m| run.column_of(m).map(|c| (m, c)))
        .collect();
    for &(m, _) in &metrics {
        let name = run.autoscaler.metrics[m].name();
        header += &format!(",{name}.demand,{name}.current,{name}.replicas");
    }
    if !run.observed.is_empty() {
        header += ",observedReplicas";
    }
    writeln!(out, "{header}")?;
    for (i, step) in run.steps.iter().enumerate() {
        let c = &step.conditions;
        let reason = |c: Option<hpa_lint_rules::controller::reconcile::Condition>| {
            c.map_or("", |c| c.reason)
        };
        let optional = |v: Option<i32>| v.map_or(String::new(), |v| v.to_string());
        let mut line = format!(
            "{},{},{},{},{},{},{},{}",
            seconds(step.time),
            step.current,
            optional(step.outcome.recommendation),
            optional(step.outcome.normalized.map(|n| n.stabilized)),
            step.outcome.desired,
            reason(c.able_to_scale),
            reason(c.scaling_active),
            reason(c.scaling_limited),
        );
        for &(m, column) in &metrics {
            let (current, replicas) = match step.outcome.metrics.get(m) {
                Some(MetricResult::Proposed {
                    replicas,
                    utilization,
                    current,
                }) => (
                    utilization.map_or_else(|| units(*current).to_string(), |u| format!("{u}%")),
                    replicas.to_string(),
                ),
                Some(MetricResult::Failed { reason, .. }) => ((*reason).to_owned(), String::new()),
                None => (String::new(), String::new()),
            };
            line += &format!(",{},{current},{replicas}", units(run.demand[i][column]));
        }
        if let Some(observed) = run.observed.get(i) {
            line += &format!(",{}", observed.map_or_else(String::new, |o| o.to_string()));
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// Whether the trace gives metrics (not a `replicas` column).
pub fn has_metrics(run: &Run<'_>) -> bool {
    matches!(run.columns, Columns::Metrics(_))
}
