//! A comparison as a table (text, and Markdown for `diff`), as JSON (the
//! stable contract documented in docs/simulate.md) and as CSV (one row per sync).

use std::io::Write;

use anyhow::Result;
use hpa_lint_rules::controller::flags::{format_duration, thousandths};
use serde_json::{Value, json};

use crate::prometheus::replay::Fidelity;
use crate::prometheus::time;

use super::summary::{Rise, Summary, Worst};
use super::{About, Comparison, LABELS, Side};
use crate::simulate::output::fidelity_json;

/// A number rounded to `places` decimals, as JSON.
fn rounded(value: f64, places: i32) -> Value {
    let scale = 10_f64.powi(places);
    let value = (value * scale).round() / scale;
    if value.fract() == 0.0 && value.abs() < 1e15 {
        json!(value as i64)
    } else {
        json!(value)
    }
}

/// `+1m30s`, `-45s`, `0s`.
fn signed_duration(ms: i64) -> String {
    if ms > 0 {
        format!("+{}", format_duration(ms))
    } else {
        format_duration(ms)
    }
}

fn signed(value: f64, places: usize) -> String {
    let text = format!("{value:+.places$}");
    if text
        .trim_start_matches(['+', '-'])
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        text.trim_start_matches(['+', '-']).to_owned()
    } else {
        text
    }
}

/// `+62% at 5m15s`, `no Ready pod at 0s`, `none`.
fn worst_text(worst: Option<Worst>) -> String {
    match worst {
        None => "none".to_owned(),
        Some(w) if w.ratio.is_infinite() => format!("no Ready pod at {}", format_duration(w.time)),
        Some(w) => format!(
            "+{:.0}% at {}",
            (w.ratio - 1.0) * 100.0,
            format_duration(w.time)
        ),
    }
}

/// The excess over target as a fraction (0 without one; `None`: no Ready pod).
fn excess(worst: Option<Worst>) -> Option<f64> {
    match worst {
        None => Some(0.0),
        Some(w) if w.ratio.is_infinite() => None,
        Some(w) => Some(w.ratio - 1.0),
    }
}

fn rise_text(rise: Option<Rise>) -> String {
    match rise {
        None => "no rise".to_owned(),
        Some(r) => {
            let when = format!("{} → {} at {}", r.from, r.to, format_duration(r.at));
            match r.reached_after {
                Some(after) => format!("{} ({when})", format_duration(after)),
                None => format!("not reached ({when})"),
            }
        }
    }
}

/// One line of the summary table: its label, each spec's value (and a
/// shorter form, for tables of several demands), the difference.
pub struct Row {
    pub label: &'static str,
    pub values: [String; 2],
    pub short: [String; 2],
    pub difference: String,
    /// The relative change, where it says more than the difference (cost).
    pub relative: Option<String>,
}

/// The summary table of a comparison.
pub fn rows(runs: [&Summary; 2]) -> Vec<Row> {
    let [old, new] = runs;
    let row = |label,
               value: &dyn Fn(&Summary) -> String,
               short: Option<&dyn Fn(&Summary) -> String>,
               difference: String| {
        let values = [value(old), value(new)];
        Row {
            label,
            short: short.map_or_else(|| values.clone(), |short| [short(old), short(new)]),
            values,
            difference,
            relative: None,
        }
    };
    let change = new.pod_hours() - old.pod_hours();
    let relative =
        (old.pod_ms > 0).then(|| format!("{}%", signed(change / old.pod_hours() * 100.0, 1)));
    let pod_hours = match &relative {
        Some(relative) => format!("{} ({relative})", signed(change, 2)),
        None => signed(change, 2),
    };
    let excess_difference = match (excess(old.worst), excess(new.worst)) {
        (Some(o), Some(n)) => format!("{} pts", signed((n - o) * 100.0, 0)),
        _ => "–".to_owned(),
    };
    let reached = |s: &Summary| s.rise.and_then(|r| r.reached_after);
    let rise_difference = match (reached(old), reached(new)) {
        (Some(o), Some(n)) => signed_duration(n - o),
        _ => "–".to_owned(),
    };
    let short_worst = |s: &Summary| {
        worst_text(s.worst)
            .split(" at ")
            .next()
            .unwrap_or_default()
            .to_owned()
    };
    let short_rise = |s: &Summary| match s.rise {
        None => "no rise".to_owned(),
        Some(Rise {
            reached_after: None,
            ..
        }) => "not reached".to_owned(),
        Some(Rise {
            reached_after: Some(after),
            ..
        }) => format_duration(after),
    };
    let mut cost = row(
        "pod-hours",
        &|s| format!("{:.2}", s.pod_hours()),
        None,
        pod_hours,
    );
    cost.relative = relative;
    vec![
        cost,
        row(
            "peak replicas",
            &|s| s.peak.to_string(),
            None,
            signed(f64::from(new.peak - old.peak), 0),
        ),
        row(
            "mean replicas",
            &|s| format!("{:.2}", s.mean()),
            None,
            signed(new.mean() - old.mean(), 2),
        ),
        row(
            "time at maxReplicas",
            &|s| format_duration(s.at_max),
            None,
            signed_duration(new.at_max - old.at_max),
        ),
        row(
            "time above target beyond tolerance",
            &|s| format_duration(s.under),
            None,
            signed_duration(new.under - old.under),
        ),
        row(
            "worst excess over target",
            &|s| worst_text(s.worst),
            Some(&short_worst),
            excess_difference,
        ),
        row(
            "scale events",
            &|s| {
                format!(
                    "{} ({} up, {} down)",
                    s.scale_events(),
                    s.scale_ups,
                    s.scale_downs
                )
            },
            Some(&|s: &Summary| s.scale_events().to_string()),
            signed((new.scale_events() - old.scale_events()) as f64, 0),
        ),
        row(
            "time to reach the biggest rise",
            &|s| rise_text(s.rise),
            Some(&short_rise),
            rise_difference,
        ),
    ]
}

/// The header lines: the HPA, the files, the demand, the syncs.
fn header(sides: [&Side; 2], comparison: &Comparison, out: &mut impl Write) -> Result<()> {
    let a = &sides[0].autoscaler;
    writeln!(
        out,
        "HorizontalPodAutoscaler {}: {} ({}) → {} ({})",
        sides[0].found.key(),
        sides[0].found.file,
        bounds(sides[0]),
        sides[1].found.file,
        bounds(sides[1]),
    )?;
    if sides[1].found.key() != sides[0].found.key() {
        writeln!(
            out,
            "  the new spec is HorizontalPodAutoscaler {}, compared as a spec of {}",
            sides[1].found.key(),
            sides[0].found.key()
        )?;
    }
    writeln!(out, "demand: {}", comparison.demand.label())?;
    if let About::Load(load) = &comparison.demand.about {
        for (name, span) in &load.spans {
            if let Some((low, high)) = span {
                writeln!(
                    out,
                    "  {name}: 0% is {}, 100% is {} (total)",
                    quantity(*low),
                    quantity(*high)
                )?;
            }
        }
    }
    if let Some(assumption) = comparison.demand.assumption() {
        writeln!(out, "  {assumption}")?;
    }
    if let Some(fidelity) = comparison.fidelity() {
        writeln!(out, "{}", fidelity_text(&fidelity))?;
    }
    writeln!(
        out,
        "{}, one every {}, from 0s to {}",
        crate::emit::plural(
            usize::try_from(comparison.syncs).unwrap_or(usize::MAX),
            "sync"
        ),
        format_duration(a.flags.sync_period),
        format_duration(comparison.demand.end)
    )?;
    Ok(())
}

/// `2 to 10 replicas`.
pub fn bounds(side: &Side) -> String {
    let a = &side.autoscaler;
    format!("{} to {} replicas", a.min_replicas, a.max_replicas)
}

/// Milli-units as a quantity: `2.4`, `250m`.
pub fn quantity(milli: f64) -> String {
    let milli = milli.round() as i64;
    if milli % 1000 == 0 {
        (milli / 1000).to_string()
    } else {
        format!("{milli}m")
    }
}

pub fn text(sides: [&Side; 2], comparison: &Comparison, out: &mut impl Write) -> Result<()> {
    header(sides, comparison, out)?;
    writeln!(out)?;
    let rows = rows([&comparison.runs[0].summary, &comparison.runs[1].summary]);
    let width = |f: &dyn Fn(&Row) -> usize, header: usize| {
        rows.iter().map(f).max().unwrap_or(0).max(header)
    };
    let label = width(&|r| r.label.chars().count(), 0);
    let old = width(&|r| r.values[0].chars().count(), 3);
    let new = width(&|r| r.values[1].chars().count(), 3);
    writeln!(
        out,
        "{:label$}  {:>old$}  {:>new$}  difference",
        "", LABELS[0], LABELS[1]
    )?;
    for row in &rows {
        writeln!(
            out,
            "{:label$}  {:>old$}  {:>new$}  {}",
            row.label, row.values[0], row.values[1], row.difference
        )?;
    }
    Ok(())
}

/// One spec's figures as JSON.
pub fn summary_json(s: &Summary) -> Value {
    json!({
        "podHours": rounded(s.pod_hours(), 3),
        "peakReplicas": s.peak,
        "meanReplicas": rounded(s.mean(), 3),
        "atMaxReplicas": thousandths(s.at_max),
        "aboveTarget": thousandths(s.under),
        "worstExcess": excess(s.worst).map(|e| rounded(e, 3)),
        "worstAt": s.worst.map(|w| thousandths(w.time)),
        "scaleUps": s.scale_ups,
        "scaleDowns": s.scale_downs,
        "biggestRise": s.rise.map(|r| json!({
            "from": r.from,
            "to": r.to,
            "at": thousandths(r.at),
            "reachedAfter": r.reached_after.map(thousandths),
        })),
    })
}

/// New minus old, for the figures both have.
pub fn difference_json(old: &Summary, new: &Summary) -> Value {
    let both = |o: Option<f64>, n: Option<f64>| match (o, n) {
        (Some(o), Some(n)) => rounded(n - o, 3),
        _ => Value::Null,
    };
    let reached = |s: &Summary| {
        s.rise
            .and_then(|r| r.reached_after)
            .map(|t| t as f64 / 1000.0)
    };
    json!({
        "podHours": rounded(new.pod_hours() - old.pod_hours(), 3),
        "peakReplicas": new.peak - old.peak,
        "meanReplicas": rounded(new.mean() - old.mean(), 3),
        "atMaxReplicas": thousandths(new.at_max - old.at_max),
        "aboveTarget": thousandths(new.under - old.under),
        "worstExcess": both(excess(old.worst), excess(new.worst)),
        "scaleEvents": new.scale_events() - old.scale_events(),
        "reachedAfter": both(reached(old), reached(new)),
    })
}

/// The demand as JSON: its source and, for a load, its parameters.
pub fn demand_json(comparison: &Comparison) -> Value {
    let demand = &comparison.demand;
    let mut about = match &demand.about {
        About::Load(load) => json!({"load": load.json()}),
        About::Trace(files) => json!({"trace": files}),
        About::Prometheus(url) => json!({"prometheus": url}),
    };
    if let Some(start) = demand.start {
        about["start"] = json!(time::format(start));
    }
    if !demand.assumed.is_empty() {
        about["assumedRequests"] = json!(demand.assumed);
    }
    about
}

/// The comparison as JSON, without the HPA and files (for `diff`).
pub fn comparison_json(comparison: &Comparison) -> Value {
    let [old, new] = [&comparison.runs[0].summary, &comparison.runs[1].summary];
    let mut document = json!({
        "demand": demand_json(comparison),
        "end": thousandths(comparison.demand.end),
        "syncs": comparison.syncs,
        "summary": {
            LABELS[0]: summary_json(old),
            LABELS[1]: summary_json(new),
            "difference": difference_json(old, new),
        },
    });
    if let Some(fidelity) = comparison.fidelity() {
        document["fidelity"] = fidelity_json(&fidelity);
    }
    document
}

/// How closely the old spec's simulation follows what was observed.
pub fn fidelity_text(fidelity: &Fidelity) -> String {
    format!(
        "observed (kube-state-metrics): the old spec's simulated replicas equal the observed at {:.1} % of {} syncs; mean absolute difference {:.2} replicas",
        fidelity.equal * 100.0,
        fidelity.syncs,
        fidelity.mean_absolute_difference
    )
}

/// A spec's identity in JSON.
pub fn side_json(side: &Side) -> Value {
    let a = &side.autoscaler;
    let key = &side.found.object.key;
    json!({
        "hpa": {"namespace": key.namespace, "name": key.name},
        "file": side.found.file,
        "minReplicas": a.min_replicas,
        "maxReplicas": a.max_replicas,
    })
}

pub fn json(sides: [&Side; 2], comparison: &Comparison, out: &mut impl Write) -> Result<()> {
    let key = &sides[0].found.object.key;
    let mut document = json!({
        "hpa": {"namespace": key.namespace, "name": key.name},
        "syncPeriod": thousandths(sides[0].autoscaler.flags.sync_period),
        LABELS[0]: side_json(sides[0]),
        LABELS[1]: side_json(sides[1]),
    });
    if let (Value::Object(document), Value::Object(rest)) =
        (&mut document, comparison_json(comparison))
    {
        document.extend(rest);
    }
    serde_json::to_writer(&mut *out, &document)?;
    writeln!(out)?;
    Ok(())
}

/// One row per sync: the time, each trace column's demand, and per spec
/// `currentReplicas`, `desiredReplicas` and `readyReplicas`.
pub fn csv(comparison: &Comparison, out: &mut impl Write) -> Result<()> {
    let mut writer = csv::Writer::from_writer(out);
    let mut header = vec!["time".to_owned()];
    if let crate::simulate::trace::Columns::Metrics(names) = &comparison.demand.trace.columns {
        header.extend(names.iter().cloned());
    }
    for label in LABELS {
        for field in ["currentReplicas", "desiredReplicas", "readyReplicas"] {
            header.push(format!("{label}.{field}"));
        }
    }
    let observed = &comparison.demand.observed;
    if !observed.is_empty() {
        header.push("observedReplicas".to_owned());
    }
    writer.write_record(&header)?;
    let period = comparison.period;
    let mut old = comparison.runs[0].series.at_syncs(comparison.syncs);
    let mut new = comparison.runs[1].series.at_syncs(comparison.syncs);
    let mut row: Vec<String> = Vec::with_capacity(header.len());
    for (sync, demand) in comparison.demand.at_syncs(period, comparison.syncs) {
        row.clear();
        row.push(thousandths(sync * period).to_string());
        row.extend(demand.iter().map(|v| thousandths(*v).to_string()));
        for replicas in [old.next(), new.next()].into_iter().flatten() {
            row.extend([replicas.0, replicas.1, replicas.2].map(|r| r.to_string()));
        }
        if !observed.is_empty() {
            let seen = usize::try_from(sync)
                .ok()
                .and_then(|i| observed.get(i))
                .copied()
                .flatten();
            row.push(seen.map_or_else(String::new, |o| o.to_string()));
        }
        writer.write_record(&row)?;
    }
    writer.flush()?;
    Ok(())
}
