//! `--plot FILE.svg`: demand, the per-pod metric against its target, and
//! replicas with their bounds and the syncs where stabilization or a limit
//! held the count back. Written to a temporary file and renamed, so a failed
//! run leaves no half-written picture.

use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use hpa_lint_rules::controller::flags::format_duration;
use hpa_lint_rules::controller::reconcile::{MetricKind, MetricResult, ResourceTarget};
use hpa_lint_rules::controller::simulate::Step;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::output::{has_utilization, units};
use super::trace::Columns;
use super::{Setup, Sink};

pub const WIDTH: u32 = 960;
const PANEL: u32 = 260;
/// Room right of each plot for its legend.
pub const LEGEND_WIDTH: u32 = 170;
pub const COLORS: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];
const LIMITED: RGBColor = RGBColor(214, 39, 40);
pub const STABILIZED: RGBColor = RGBColor(255, 127, 14);
pub const BOUND: RGBColor = RGBColor(150, 150, 150);
const OBSERVED: RGBColor = RGBColor(40, 40, 40);

/// Where the plot goes: the file named, or the one a symbolic link names;
/// an error for anything but a regular file or a new name.
pub fn destination(path: &Path) -> Result<PathBuf> {
    let shown = path.display();
    if path.file_name().is_none() {
        bail!("--plot {shown}: needs a file name");
    }
    match std::fs::symlink_metadata(path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(path.to_owned()),
        Err(error) => bail!("--plot {shown}: {error}"),
        Ok(_) => {
            // As `--fix` does: a link stays a link, the file it names is replaced.
            let target = std::fs::canonicalize(path)
                .with_context(|| format!("--plot {shown}: a symbolic link to nothing"))?;
            let metadata = std::fs::metadata(&target).with_context(|| format!("--plot {shown}"))?;
            if !metadata.is_file() {
                bail!(
                    "--plot {shown}: not a regular file ({}); give the name of a file to write",
                    kind(&metadata.file_type())
                );
            }
            Ok(target)
        }
    }
}

/// What a file that is not a regular one is.
fn kind(file_type: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_block_device() || file_type.is_char_device() {
            return "a device";
        }
        if file_type.is_fifo() {
            return "a named pipe";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// The temporary file the plot is written to before it is renamed over
/// `path`: a random name, created exclusively in the same directory (with the
/// permissions of the file it replaces, or those of a new file), before the
/// run, so that an unwritable place fails at once. Dropped, it is removed.
pub fn temporary(path: &Path) -> Result<tempfile::NamedTempFile> {
    let shown = path.display();
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".hpa-lint-plot").suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // As a plain create: 0666 less the umask.
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let file = builder
        .tempfile_in(directory)
        .with_context(|| format!("--plot {shown}: cannot write in {}", directory.display()))?;
    if let Ok(replaced) = std::fs::metadata(path) {
        file.as_file()
            .set_permissions(replaced.permissions())
            .with_context(|| format!("--plot {shown}"))?;
    }
    Ok(file)
}

/// A value that holds from one sync to the next: its value at the first
/// sync and at each sync where it changed.
#[derive(Default)]
pub struct Held {
    changes: Vec<(f64, f64)>,
}

impl Held {
    pub fn add(&mut self, time: f64, value: f64) {
        if self.changes.last().is_none_or(|(_, last)| *last != value) {
            self.changes.push((time, value));
        }
    }

    pub fn top(&self) -> f64 {
        self.changes.iter().map(|c| c.1).fold(0.0, f64::max)
    }

    /// The line's points up to `end`.
    pub fn points(&self, end: f64) -> Vec<(f64, f64)> {
        let mut points = Vec::with_capacity(self.changes.len() * 2);
        for (i, &(time, value)) in self.changes.iter().enumerate() {
            points.push((time, value));
            let until = self.changes.get(i + 1).map_or(end, |next| next.0);
            if until > time {
                points.push((until, value));
            }
        }
        points
    }
}

/// The replicas kube-state-metrics saw: the count at a sync held since the
/// sync before (as the simulated count at that sync's start is), in pieces
/// around the syncs without a sample, each kept only where it changes.
#[derive(Default)]
struct Observed {
    pieces: Vec<Vec<(f64, f64)>>,
    open: bool,
}

impl Observed {
    fn add(&mut self, time: f64, since: f64, value: Option<f64>) {
        let Some(value) = value else {
            self.open = false;
            return;
        };
        if !std::mem::replace(&mut self.open, true) {
            self.pieces.push(Vec::new());
        }
        let piece = self.pieces.last_mut().expect("a piece is open");
        match piece.last_mut() {
            Some(last) if last.1 == value => last.0 = time,
            _ => piece.extend([(since, value), (time, value)]),
        }
    }

    fn top(&self) -> f64 {
        self.pieces
            .iter()
            .flatten()
            .map(|p| p.1)
            .fold(0.0, f64::max)
    }
}

/// Syncs held back by stabilization or a policy, as dots: one per
/// two-thousandth of the time axis and count (finer than a pixel), however
/// many syncs fall there.
struct Dots {
    /// The time axis's length in seconds.
    end: f64,
    points: Vec<(f64, f64)>,
}

impl Dots {
    const SLOTS: f64 = 2000.0;

    fn slot(&self, time: f64) -> i64 {
        (time / self.end.max(f64::MIN_POSITIVE) * Self::SLOTS) as i64
    }

    fn add(&mut self, time: f64, value: f64) {
        let shown = self
            .points
            .last()
            .is_some_and(|&(t, v)| v == value && self.slot(t) == self.slot(time));
        if !shown {
            self.points.push((time, value));
        }
    }
}

/// One metric's lines.
struct MetricLines {
    /// Its index in the HPA's metrics, and its trace column.
    metric: usize,
    column: usize,
    label: String,
    demand: Held,
    per_pod: Held,
}

/// `--plot FILE.svg`: collects what it draws as the syncs come (each line
/// only where it changes), and draws and writes it at the end.
pub struct Plot<'s> {
    setup: &'s Setup<'s>,
    path: PathBuf,
    /// Where the picture is written first; `None` once it is renamed.
    file: Option<tempfile::NamedTempFile>,
    end: f64,
    metrics: Vec<MetricLines>,
    replicas: Held,
    recommended: Held,
    observed: Observed,
    stabilized: Dots,
    limited: Dots,
}

impl<'s> Plot<'s> {
    pub fn new(setup: &'s Setup<'s>, path: &Path) -> Result<Self> {
        let metrics = setup
            .shown_metrics()
            .map(|(metric, key, column)| MetricLines {
                metric,
                column,
                label: key.to_owned(),
                demand: Held::default(),
                per_pod: Held::default(),
            })
            .collect();
        let path = destination(path)?;
        Ok(Self {
            setup,
            file: Some(temporary(&path)?),
            path,
            end: 0.0,
            metrics,
            replicas: Held::default(),
            recommended: Held::default(),
            observed: Observed::default(),
            stabilized: Dots {
                end: x(setup.end()),
                points: Vec::new(),
            },
            limited: Dots {
                end: x(setup.end()),
                points: Vec::new(),
            },
        })
    }
}

impl Sink for Plot<'_> {
    fn step(&mut self, step: &Step, demand: &[i64], observed: Option<i32>) -> Result<()> {
        let time = x(step.time);
        self.end = time;
        let since = x((step.time - self.setup.autoscaler.flags.sync_period).max(0));
        self.observed.add(time, since, observed.map(f64::from));
        for lines in &mut self.metrics {
            lines.demand.add(time, units(demand[lines.column]));
            // Utilization targets show the percentage, the others the value.
            let utilization = has_utilization(&self.setup.autoscaler.metrics[lines.metric]);
            let current = match step.outcome.metrics.get(lines.metric) {
                Some(MetricResult::Proposed {
                    utilization: Some(u),
                    ..
                }) if utilization => f64::from(*u),
                Some(MetricResult::Proposed { current, .. }) if !utilization => units(*current),
                _ => 0.0,
            };
            lines.per_pod.add(time, current);
        }
        let desired = f64::from(step.outcome.desired);
        self.replicas.add(time, desired);
        self.recommended.add(
            time,
            f64::from(step.outcome.recommendation.unwrap_or(step.current)),
        );
        if let Some(n) = &step.outcome.normalized {
            if n.able_to_scale.ends_with("Stabilized") {
                self.stabilized.add(time, desired);
            }
            if n.scaling_limited == "ScaleUpLimit" || n.scaling_limited == "ScaleDownLimit" {
                self.limited.add(time, desired);
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        let shown = self.path.display();
        let svg = self.render().map_err(|e| anyhow!("drawing {shown}: {e}"))?;
        let mut file = self.file.take().context("the plot is written once")?;
        file.write_all(svg.as_bytes())
            .with_context(|| format!("writing {shown}"))?;
        file.persist(&self.path)
            .map_err(|e| anyhow!("writing {shown}: {}", e.error))?;
        Ok(())
    }
}

/// Seconds on the x axis.
pub fn x(ms: i64) -> f64 {
    ms as f64 / 1000.0
}

/// The most tick marks an axis gets.
const MAX_TICKS: f64 = 10.0;

/// Steps between time marks, in seconds: round durations, then weeks.
pub fn time_steps() -> impl Iterator<Item = f64> {
    const ROUND: [f64; 15] = [
        15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0, 10800.0, 21600.0,
        43200.0, 86400.0, 172_800.0,
    ];
    ROUND
        .into_iter()
        .chain((1..).map(|weeks| f64::from(weeks) * 604_800.0))
}

/// Steps between value marks: 1, 2 and 5 times the powers of ten.
pub fn decimal_steps() -> impl Iterator<Item = f64> {
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
pub struct Marked {
    axis: RangedCoordf64,
    marks: Vec<f64>,
}

impl Marked {
    pub fn new(top: f64, steps: impl Iterator<Item = f64>) -> Self {
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
pub fn value_label(value: &f64) -> String {
    format!("{}", (value * 1000.0).round() / 1000.0)
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
    // A line in pieces (one with gaps) has one legend entry.
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

impl Plot<'_> {
    fn render(&self) -> Result<String, Box<dyn std::error::Error>> {
        let a = self.setup.autoscaler;
        let end = self.end;
        let has_metrics = matches!(self.setup.columns, Columns::Metrics(_));
        let panels = if has_metrics { 3 } else { 1 };
        let mut svg = String::new();
        {
            let root =
                SVGBackend::with_string(&mut svg, (WIDTH, PANEL * panels + 40)).into_drawing_area();
            root.fill(&WHITE)?;
            let (title, body) = root.split_vertically(40);
            title.titled(
                &format!("HorizontalPodAutoscaler {}", self.setup.found.key()),
                ("sans-serif", 20),
            )?;
            let areas = body.split_evenly((panels as usize, 1));
            if has_metrics {
                let mut demand = Vec::new();
                let mut per_pod = Vec::new();
                let (mut demand_top, mut per_pod_top) = (0.0_f64, 0.0_f64);
                for (n, lines) in self.metrics.iter().enumerate() {
                    let kind = &a.metrics[lines.metric];
                    let color = COLORS[n % COLORS.len()];
                    demand_top = demand_top.max(lines.demand.top());
                    demand.push((
                        format!("{} (total)", lines.label),
                        color,
                        lines.demand.points(end),
                    ));
                    let goal = match kind {
                        MetricKind::Resource {
                            target: ResourceTarget::Utilization(u),
                            ..
                        } => f64::from(*u),
                        MetricKind::Resource {
                            target: ResourceTarget::AverageValue(t),
                            ..
                        }
                        | MetricKind::Pods { target: t, .. }
                        | MetricKind::Value { target: t, .. }
                        | MetricKind::AverageOfTotal { target: t, .. } => units(*t),
                        MetricKind::Invalid { .. } => 0.0,
                    };
                    per_pod_top = per_pod_top.max(goal).max(lines.per_pod.top());
                    let unit = if has_utilization(kind) { " %" } else { "" };
                    per_pod.push((
                        format!("{}{unit}", lines.label),
                        color,
                        lines.per_pod.points(end),
                    ));
                    per_pod.push((
                        format!("{} target", lines.label),
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
            let top = self
                .replicas
                .top()
                .max(self.observed.top())
                .max(f64::from(a.max_replicas));
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
            if !has_metrics {
                series.push((
                    "recommendation".to_owned(),
                    COLORS[1],
                    self.recommended.points(end),
                ));
            }
            // Under the simulated count, which hides it where they agree.
            for piece in &self.observed.pieces {
                series.push(("observed".to_owned(), OBSERVED, piece.clone()));
            }
            series.push(("replicas".to_owned(), COLORS[0], self.replicas.points(end)));
            let marks = vec![
                (
                    "held by stabilization",
                    STABILIZED,
                    self.stabilized.points.clone(),
                ),
                ("limited by a policy", LIMITED, self.limited.points.clone()),
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
