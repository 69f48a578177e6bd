//! The comparison as SVG: per demand, one panel with the demand (in pods at
//! each spec's target: the replicas it asks for) and both specs' replicas
//! over it, with their `maxReplicas`. Written to a temporary file and renamed,
//! as `simulate --plot` is.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use plotters::prelude::*;

use super::{Comparison, Side};
use crate::loads::per_pod_target;
use crate::simulate::keys;
use crate::simulate::plot::{
    Area, COLORS, Chart, DrawResult, Held, Legend, MAX_REPLICAS, MIN_REPLICAS, STABILIZED, Stroke,
    Swatch, WIDTH, chart, destination, temporary, x,
};

const PANEL: u32 = 300;
/// The old spec's line is drawn wide under the new one's, so that both show
/// where they are the same.
const SPEC_COLORS: [RGBColor; 2] = [COLORS[0], STABILIZED];
const DEMAND: RGBAColor = RGBAColor(215, 215, 215, 1.0);
/// The demand at the new spec's target, where it differs.
const NEW_DEMAND: Stroke = Stroke::new(RGBColor(120, 120, 120), 1, Some((6, 4)));
const OBSERVED: RGBColor = RGBColor(40, 40, 40);

/// A plot's file: checked and created (as a temporary file) before the run.
pub struct File {
    path: PathBuf,
    file: tempfile::NamedTempFile,
}

impl File {
    pub fn new(path: &Path) -> Result<Self> {
        let path = destination(path)?;
        Ok(Self {
            file: temporary(&path)?,
            path,
        })
    }

    pub fn write(mut self, svg: &str) -> Result<()> {
        let shown = self.path.display();
        self.file
            .write_all(svg.as_bytes())
            .with_context(|| format!("writing {shown}"))?;
        self.file
            .persist(&self.path)
            .map_err(|e| anyhow!("writing {shown}: {}", e.error))?;
        Ok(())
    }
}

/// The demand in pods at `side`'s targets: the largest of its metrics'
/// demand ÷ target per pod, where the demand changes; `None` without a
/// per-pod target.
fn demand_in_pods(side: &Side, comparison: &Comparison) -> Option<Held> {
    let columns = &comparison.demand.trace.columns;
    let targets: Vec<(usize, f64)> = keys(&side.autoscaler, columns)
        .iter()
        .enumerate()
        .filter_map(|(m, shown)| {
            let column = shown.as_ref()?.1?;
            let per_pod = per_pod_target(&side.autoscaler.metrics[m], side.requests.get(m))?;
            (per_pod > 0.0).then_some((column, per_pod))
        })
        .collect();
    if targets.is_empty() {
        return None;
    }
    let mut held = Held::default();
    for (time, values) in &comparison.demand.trace.rows {
        let pods = targets
            .iter()
            .map(|&(column, per_pod)| values[column] as f64 / per_pod)
            .fold(0.0, f64::max);
        held.add(x(*time), pods);
    }
    Some(held)
}

/// A spec's replicas (what each sync set) over time.
fn replicas(comparison: &Comparison, i: usize) -> Held {
    let mut held = Held::default();
    for &(sync, _, desired, _) in &comparison.runs[i].series.changes {
        held.add(x(sync * comparison.period), f64::from(desired));
    }
    held
}

/// What kube-state-metrics saw, each count held over the sync period before
/// its sync (as `simulate --plot` draws it), in pieces around gaps.
fn observed(comparison: &Comparison) -> Vec<Vec<(f64, f64)>> {
    let period = comparison.period;
    let mut pieces = Vec::new();
    let mut piece: Vec<(f64, f64)> = Vec::new();
    for (sync, seen) in (0..comparison.syncs).zip(&comparison.demand.observed) {
        let Some(count) = seen.map(f64::from) else {
            if !piece.is_empty() {
                pieces.push(std::mem::take(&mut piece));
            }
            continue;
        };
        let (from, to) = (x((sync - 1).max(0) * period), x(sync * period));
        match piece.last_mut() {
            Some(last) if last.1 == count => last.0 = to,
            _ => piece.extend([(from, count), (to, count)]),
        }
    }
    if !piece.is_empty() {
        pieces.push(piece);
    }
    pieces
}

/// A bound of both specs: one line where they agree, else one per spec in
/// its colour.
fn draw_bound(
    chart: &mut Chart<'_, '_>,
    legend: &mut Legend,
    bound: Stroke,
    values: [f64; 2],
    name: &str,
    labels: [&str; 2],
    end: f64,
) -> DrawResult {
    if values[0] == values[1] {
        bound.draw(chart, vec![(0.0, values[0]), (end, values[0])])?;
        legend.add(Swatch::Line(bound), name);
        return Ok(());
    }
    for (i, value) in values.into_iter().enumerate() {
        let stroke = Stroke {
            style: SPEC_COLORS[i]
                .mix(0.7)
                .stroke_width(bound.style.stroke_width),
            ..bound
        };
        stroke.draw(chart, vec![(0.0, value), (end, value)])?;
        legend.add(Swatch::Line(stroke), format!("{} {name}", labels[i]));
    }
    Ok(())
}

fn panel(
    area: &Area<'_>,
    sides: [&Side; 2],
    labels: [&str; 2],
    comparison: &Comparison,
) -> DrawResult {
    let end = x(comparison
        .demand
        .end
        .min((comparison.syncs - 1) * comparison.period))
    .max(1.0);
    let demand = sides.map(|side| demand_in_pods(side, comparison));
    let lines = [replicas(comparison, 0), replicas(comparison, 1)];
    let maxima = sides.map(|s| f64::from(s.autoscaler.max_replicas));
    let most_observed = comparison.demand.observed.iter().flatten().max().copied();
    let top = demand
        .iter()
        .flatten()
        .chain(&lines)
        .map(Held::top)
        .chain(maxima)
        .chain(most_observed.map(f64::from))
        .fold(1.0, f64::max)
        * 1.1;
    let title = comparison.demand.label();
    let mut chart = chart(area, &title, "replicas", true, end, top)?;
    let mut legend = Legend::default();
    let same_demand = match &demand {
        [Some(old), Some(new)] => old.points(end) == new.points(end),
        _ => false,
    };
    if let Some(old) = &demand[0] {
        let mut outline = old.points(end);
        outline.extend([(end, 0.0), (0.0, 0.0)]);
        chart.draw_series(std::iter::once(Polygon::new(outline, DEMAND.filled())))?;
        let label = if same_demand || demand[1].is_none() {
            "demand, pods at target".to_owned()
        } else {
            format!("demand at {} target", labels[0])
        };
        legend.add(Swatch::Area(DEMAND), label);
    }
    if let Some(new) = demand[1].as_ref().filter(|_| !same_demand) {
        NEW_DEMAND.draw(&mut chart, new.points(end))?;
        legend.add(
            Swatch::Line(NEW_DEMAND),
            format!("demand at {} target", labels[1]),
        );
    }
    let minima = sides.map(|s| f64::from(s.autoscaler.min_replicas));
    for (bound, values, name) in [
        (MAX_REPLICAS, maxima, "maxReplicas"),
        (MIN_REPLICAS, minima, "minReplicas"),
    ] {
        draw_bound(&mut chart, &mut legend, bound, values, name, labels, end)?;
    }
    for (i, line) in lines.iter().enumerate() {
        let stroke = Stroke::new(SPEC_COLORS[i], if i == 0 { 5 } else { 2 }, None);
        stroke.draw(&mut chart, line.points(end))?;
        legend.add(Swatch::Line(stroke), format!("{} replicas", labels[i]));
    }
    // Over the specs' lines: where it runs inside the old one's, the old
    // spec did what the cluster did.
    let seen_stroke = Stroke::new(OBSERVED, 1, None);
    let seen = observed(comparison);
    for piece in &seen {
        seen_stroke.draw(&mut chart, piece.clone())?;
    }
    if !seen.is_empty() {
        legend.add(Swatch::Line(seen_stroke), "observed");
    }
    legend.draw(area)
}

/// The picture: a title, then a panel per comparison of the two specs.
/// `labels` name the specs in the legend.
pub fn render(
    title: &str,
    sides: [&Side; 2],
    labels: [&str; 2],
    comparisons: &[Comparison],
) -> Result<String> {
    let draw = || -> Result<String, Box<dyn std::error::Error>> {
        let mut svg = String::new();
        {
            let panels = u32::try_from(comparisons.len())?.max(1);
            let root =
                SVGBackend::with_string(&mut svg, (WIDTH, PANEL * panels + 60)).into_drawing_area();
            root.fill(&WHITE)?;
            let (head, body) = root.split_vertically(60);
            head.titled(title, ("sans-serif", 20))?;
            let subtitle = format!(
                "{} ({}) → {} ({})",
                sides[0].found.file,
                super::output::bounds(sides[0]),
                sides[1].found.file,
                super::output::bounds(sides[1])
            );
            head.draw(&Text::new(subtitle, (16, 36), ("sans-serif", 13)))?;
            let areas = body.split_evenly((comparisons.len().max(1), 1));
            for (area, comparison) in areas.iter().zip(comparisons) {
                panel(area, sides, labels, comparison)?;
            }
            root.present()?;
        }
        Ok(svg)
    };
    draw().map_err(|e| anyhow!("drawing the plot: {e}"))
}
