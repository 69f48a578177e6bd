//! `--plot FILE.svg`: demand, the per-pod metric against its target, and
//! replicas with their bounds and the syncs where stabilization or a limit
//! held the count back. Written to a temporary file and renamed, so a failed
//! run leaves no half-written picture.

use std::ops::Range;
use std::path::Path;

use anyhow::{Context, Result, anyhow};
use hpa_lint_rules::controller::flags::format_duration;
use hpa_lint_rules::controller::reconcile::{MetricKind, MetricResult, ResourceTarget};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::Run;
use super::output::{has_metrics, units};

const WIDTH: u32 = 960;
const PANEL: u32 = 260;
/// Room right of each plot for its legend.
const LEGEND_WIDTH: u32 = 170;
const COLORS: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];
const LIMITED: RGBColor = RGBColor(214, 39, 40);
const STABILIZED: RGBColor = RGBColor(255, 127, 14);
const BOUND: RGBColor = RGBColor(150, 150, 150);
const OBSERVED: RGBColor = RGBColor(40, 40, 40);

pub fn write(run: &Run<'_>, path: &Path) -> Result<()> {
    let svg = render(run).map_err(|e| anyhow!("drawing {}: {e}", path.display()))?;
    let file_name = path
        .file_name()
        .context("--plot needs a file name")?
        .to_string_lossy();
    let temporary = path.with_file_name(format!(".{file_name}.{}.tmp", std::process::id()));
    std::fs::write(&temporary, svg).with_context(|| format!("writing {}", temporary.display()))?;
    std::fs::rename(&temporary, path).map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        anyhow!("writing {}: {e}", path.display())
    })
}

/// Seconds on the x axis.
fn x(ms: i64) -> f64 {
    ms as f64 / 1000.0
}

/// The most tick marks an axis gets.
const MAX_TICKS: f64 = 10.0;

/// Steps between time marks, in seconds: round durations, then weeks.
fn time_steps() -> impl Iterator<Item = f64> {
    const ROUND: [f64; 15] = [
        15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0, 10800.0, 21600.0,
        43200.0, 86400.0, 172_800.0,
    ];
    ROUND
        .into_iter()
        .chain((1..).map(|weeks| f64::from(weeks) * 604_800.0))
}

/// Steps between value marks: 1, 2 and 5 times the powers of ten.
fn decimal_steps() -> impl Iterator<Item = f64> {
    (-3..).flat_map(|exponent| [1.0, 2.0, 5.0].map(|m| m * 10_f64.powi(exponent)))
}

/// Marks from 0 to `top` at multiples of the first step that needs at most
/// [`MAX_TICKS`] of them.
fn ticks(top: f64, mut steps: impl Iterator<Item = f64>) -> Vec<f64> {
    let step = steps
        .find(|step| top / step <= MAX_TICKS)
        .expect("steps grow without bound");
    (0..)
        .map(|i| f64::from(i) * step)
        .take_while(|tick| *tick <= top)
        .collect()
}

/// An axis from 0 with the marks given: plotters' own `with_key_points`
/// loses the value formatting a mesh needs on an `f64` axis.
struct Marked {
    axis: RangedCoordf64,
    marks: Vec<f64>,
}

impl Marked {
    fn new(top: f64, steps: impl Iterator<Item = f64>) -> Self {
        Self {
            axis: (0.0..top).into(),
            marks: ticks(top, steps),
        }
    }
}

impl Ranged for Marked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.axis.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // No light mesh lines: the marks are the grid.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.marks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.axis.range()
    }
}

/// A value mark without trailing zeros: `6`, `0.5`, `140`.
fn value_label(value: &f64) -> String {
    format!("{}", (value * 1000.0).round() / 1000.0)
}

/// Points of a value that holds from one sync to the next.
fn steps(times: &[i64], values: &[f64]) -> Vec<(f64, f64)> {
    let mut points = Vec::with_capacity(values.len() * 2);
    for (i, (&t, &v)) in times.iter().zip(values).enumerate() {
        points.push((x(t), v));
        if let Some(&next) = times.get(i + 1) {
            points.push((x(next), v));
        }
    }
    points
}

/// A labelled line: its points.
type Line = (String, RGBColor, Vec<(f64, f64)>);
/// Labelled markers at points.
type Marks<'l> = (&'l str, RGBColor, Vec<(f64, f64)>);

type Panel<'a, 'b> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// The vertical axis of a panel: its label and whether it counts (replicas).
struct Axis<'l> {
    label: &'l str,
    whole: bool,
}

fn panel<'a>(
    area: &Panel<'a, '_>,
    title: &str,
    axis: Axis<'_>,
    end: f64,
    top: f64,
    series: Vec<Line>,
    marks: Vec<Marks<'_>>,
) -> Result<(), Box<dyn std::error::Error>> {
    let (end, top) = (end.max(1.0), (top * 1.1).max(1.0));
    let y_steps = decimal_steps().filter(|step| !axis.whole || *step >= 1.0);
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 16))
        .margin(8)
        .margin_right(LEGEND_WIDTH)
        .x_label_area_size(28)
        .y_label_area_size(56)
        .build_cartesian_2d(Marked::new(end, time_steps()), Marked::new(top, y_steps))?;
    chart
        .configure_mesh()
        .bold_line_style(RGBColor(225, 225, 225))
        .x_label_formatter(&|s| format_duration((*s * 1000.0) as i64))
        .y_label_formatter(&value_label)
        .y_desc(axis.label)
        .draw()?;
    // The legend goes right of the plot, where it hides nothing.
    let x = i32::try_from(area.dim_in_pixel().0 - LEGEND_WIDTH)? + 16;
    let entry_y = |i: usize| 40 + 16 * i32::try_from(i).unwrap_or(0);
    let text = |label: &str, i| {
        Text::new(
            label.to_owned(),
            (x + 24, entry_y(i) - 6),
            ("sans-serif", 12),
        )
    };
    // A line in several pieces (one with gaps) has one legend entry.
    let mut labels: Vec<String> = Vec::new();
    for (label, color, points) in series {
        chart.draw_series(LineSeries::new(points, color.stroke_width(2)))?;
        if labels.contains(&label) {
            continue;
        }
        let i = labels.len();
        let swatch = vec![(x, entry_y(i)), (x + 16, entry_y(i))];
        area.draw(&PathElement::new(swatch, color.stroke_width(2)))?;
        area.draw(&text(&label, i))?;
        labels.push(label);
    }
    let lines = labels.len();
    for (i, (label, color, points)) in marks.into_iter().enumerate() {
        let dots = points
            .into_iter()
            .map(|p| Circle::new(p, 3, color.filled()));
        chart.draw_series(dots)?;
        area.draw(&Circle::new((x + 8, entry_y(lines + i)), 3, color.filled()))?;
        area.draw(&text(label, lines + i))?;
    }
    Ok(())
}

fn render(run: &Run<'_>) -> Result<String, Box<dyn std::error::Error>> {
    let a = run.autoscaler;
    let times: Vec<i64> = run.steps.iter().map(|s| s.time).collect();
    let end = x(*times.last().unwrap_or(&0));
    let metrics: Vec<(usize, usize)> = (0..a.metrics.len())
        .filter_map(|m| run.column_of(m).map(|c| (m, c)))
        .collect();
    let panels = if has_metrics(run) { 3 } else { 1 };
    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (WIDTH, PANEL * panels + 40)).into_drawing_area();
        root.fill(&WHITE)?;
        let (title, body) = root.split_vertically(40);
        title.titled(
            &format!("HorizontalPodAutoscaler {}", run.found.key()),
            ("sans-serif", 20),
        )?;
        let areas = body.split_evenly((panels as usize, 1));
        if has_metrics(run) {
            let mut demand = Vec::new();
            let mut per_pod = Vec::new();
            let (mut demand_top, mut per_pod_top) = (0.0_f64, 0.0_f64);
            for (n, &(m, column)) in metrics.iter().enumerate() {
                let kind = &a.metrics[m];
                let color = COLORS[n % COLORS.len()];
                let values: Vec<f64> = run.demand.iter().map(|d| units(d[column])).collect();
                demand_top = values.iter().copied().fold(demand_top, f64::max);
                demand.push((
                    format!("{} (total)", kind.name()),
                    color,
                    steps(&times, &values),
                ));
                let (current, goal): (Vec<f64>, f64) = match kind {
                    MetricKind::Resource {
                        target: ResourceTarget::Utilization(u),
                        ..
                    } => (
                        run.steps
                            .iter()
                            .map(|s| match s.outcome.metrics.get(m) {
                                Some(MetricResult::Proposed {
                                    utilization: Some(u),
                                    ..
                                }) => f64::from(*u),
                                _ => 0.0,
                            })
                            .collect(),
                        f64::from(*u),
                    ),
                    _ => (
                        run.steps
                            .iter()
                            .map(|s| match s.outcome.metrics.get(m) {
                                Some(MetricResult::Proposed { current, .. }) => units(*current),
                                _ => 0.0,
                            })
                            .collect(),
                        match kind {
                            MetricKind::Resource {
                                target: ResourceTarget::AverageValue(t),
                                ..
                            }
                            | MetricKind::Pods { target: t, .. }
                            | MetricKind::Value { target: t, .. }
                            | MetricKind::AverageOfTotal { target: t, .. } => units(*t),
                            _ => 0.0,
                        },
                    ),
                };
                per_pod_top = current
                    .iter()
                    .copied()
                    .fold(per_pod_top.max(goal), f64::max);
                let unit = if matches!(
                    kind,
                    MetricKind::Resource {
                        target: ResourceTarget::Utilization(_),
                        ..
                    }
                ) {
                    " %"
                } else {
                    ""
                };
                per_pod.push((
                    format!("{}{unit}", kind.name()),
                    color,
                    steps(&times, &current),
                ));
                per_pod.push((
                    format!("{} target", kind.name()),
                    BOUND,
                    vec![(0.0, goal), (end, goal)],
                ));
            }
            panel(
                &areas[0],
                "demand",
                Axis {
                    label: "total",
                    whole: false,
                },
                end,
                demand_top,
                demand,
                Vec::new(),
            )?;
            panel(
                &areas[1],
                "per-pod metric and target",
                Axis {
                    label: "per pod",
                    whole: false,
                },
                end,
                per_pod_top,
                per_pod,
                Vec::new(),
            )?;
        }
        let replicas: Vec<f64> = run
            .steps
            .iter()
            .map(|s| f64::from(s.outcome.desired))
            .collect();
        let top = replicas
            .iter()
            .copied()
            .chain(run.observed.iter().flatten().map(|o| f64::from(*o)))
            .fold(f64::from(a.max_replicas), f64::max);
        // The bounds first, so that the replicas are drawn over them.
        let mut series: Vec<_> = [
            ("maxReplicas", a.max_replicas),
            ("minReplicas", a.min_replicas),
        ]
        .into_iter()
        .map(|(label, bound)| {
            let line = vec![(0.0, f64::from(bound)), (end, f64::from(bound))];
            (label.to_owned(), BOUND, line)
        })
        .collect();
        if !has_metrics(run) {
            let recommended: Vec<f64> = run
                .steps
                .iter()
                .map(|s| f64::from(s.outcome.recommendation.unwrap_or(s.current)))
                .collect();
            series.push((
                "recommendation".to_owned(),
                COLORS[1],
                steps(&times, &recommended),
            ));
        }
        // What kube-state-metrics saw at a sync held since the sync before,
        // as the simulated count does: drawn under it, in pieces around gaps.
        let period = a.flags.sync_period;
        let mut piece: Vec<(f64, f64)> = Vec::new();
        for (time, observed) in times.iter().zip(&run.observed) {
            match observed {
                Some(count) => {
                    let count = f64::from(*count);
                    piece.extend([(x((time - period).max(0)), count), (x(*time), count)]);
                }
                None if !piece.is_empty() => {
                    series.push(("observed".to_owned(), OBSERVED, std::mem::take(&mut piece)));
                }
                None => {}
            }
        }
        if !piece.is_empty() {
            series.push(("observed".to_owned(), OBSERVED, piece));
        }
        series.push(("replicas".to_owned(), COLORS[0], steps(&times, &replicas)));
        let mark = |wanted: &dyn Fn(&hpa_lint_rules::controller::normalize::Normalized) -> bool| -> Vec<(f64, f64)> {
            run.steps
                .iter()
                .filter(|s| s.outcome.normalized.as_ref().is_some_and(wanted))
                .map(|s| (x(s.time), f64::from(s.outcome.desired)))
                .collect()
        };
        let limited =
            mark(&|n| n.scaling_limited == "ScaleUpLimit" || n.scaling_limited == "ScaleDownLimit");
        let stabilized = mark(&|n| n.able_to_scale.ends_with("Stabilized"));
        let marks = vec![
            ("held by stabilization", STABILIZED, stabilized),
            ("limited by a policy", LIMITED, limited),
        ];
        let last = areas.last().expect("one panel at least");
        let axis = Axis {
            label: "replicas",
            whole: true,
        };
        panel(last, "replicas", axis, end, top, series, marks)?;
        root.present()?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_fall_on_round_values() {
        let minutes = |marks: Vec<f64>| marks.iter().map(|s| s / 60.0).collect::<Vec<_>>();
        assert_eq!(
            minutes(ticks(2400.0, time_steps())),
            [0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0]
        );
        assert_eq!(minutes(ticks(3.0 * 3600.0, time_steps()))[1], 30.0);
        assert_eq!(ticks(45.0 * 86400.0, time_steps())[1], 7.0 * 86400.0);
        let whole = || decimal_steps().filter(|step| *step >= 1.0);
        assert_eq!(
            ticks(9.9, whole()),
            (0..10).map(f64::from).collect::<Vec<_>>()
        );
        assert_eq!(ticks(220.0, whole())[1], 50.0);
        assert_eq!(ticks(1.1, whole()), [0.0, 1.0]);
        assert_eq!(ticks(0.66, decimal_steps())[1], 0.1);
        assert_eq!(value_label(&0.1), "0.1");
        assert_eq!(value_label(&140.0), "140");
    }
}
