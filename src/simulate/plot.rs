//! `--plot FILE.svg`: per metric, its demand and its per-pod value against
//! the target; then replicas with their bounds, the recommendation, the syncs
//! where stabilization or a limit held the count back and the stretches where
//! `maxReplicas` did. Reference lines are drawn first and the data over them;
//! a value axis that a few spikes would flatten is cut, and the legend says
//! where. Written to a temporary file and renamed, so a failed run leaves no
//! half-written picture.

use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use hpa_lint_rules::controller::flags::format_duration;
use hpa_lint_rules::controller::normalize::TOO_MANY_REPLICAS;
use hpa_lint_rules::controller::reconcile::{MetricKind, MetricResult, ResourceTarget};
use hpa_lint_rules::controller::simulate::Step;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::output::{has_utilization, units};
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
const OBSERVED: RGBColor = RGBColor(40, 40, 40);
/// The stretches where `maxReplicas` held the count back.
const CAPPED: RGBAColor = RGBAColor(214, 39, 40, 0.13);
/// The markers at the top edge where values are cut.
const CUT: RGBColor = RGBColor(120, 0, 0);

/// How a line is drawn: its colour and width, and its dash and gap in pixels
/// (`None`: solid).
#[derive(Clone, Copy)]
pub struct Stroke {
    pub style: ShapeStyle,
    pub dash: Option<(u32, u32)>,
}

impl Stroke {
    pub const fn new(color: RGBColor, width: u32, dash: Option<(u32, u32)>) -> Self {
        let RGBColor(r, g, b) = color;
        Self {
            style: ShapeStyle {
                color: RGBAColor(r, g, b, 1.0),
                filled: false,
                stroke_width: width,
            },
            dash,
        }
    }

    pub fn draw(&self, chart: &mut Chart<'_, '_>, points: Vec<(f64, f64)>) -> DrawResult {
        match self.dash {
            None => chart.draw_series(LineSeries::new(points, self.style))?,
            Some((dash, gap)) => {
                chart.draw_series(DashedLineSeries::new(points, dash, gap, self.style))?
            }
        };
        Ok(())
    }
}

/// `maxReplicas`: dark, in long dashes; `minReplicas`: light, dotted.
pub const MAX_REPLICAS: Stroke = Stroke::new(RGBColor(70, 70, 70), 1, Some((8, 4)));
pub const MIN_REPLICAS: Stroke = Stroke::new(RGBColor(150, 150, 150), 2, Some((2, 4)));
/// A metric's target.
const TARGET: Stroke = Stroke::new(RGBColor(90, 90, 90), 1, Some((6, 3)));
/// The metrics' recommendation, before stabilization and limits.
const RECOMMENDATION: Stroke = Stroke::new(COLORS[1], 1, None);

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
        self.peak().1
    }

    /// The highest value and when it was first reached; `(0, 0)` without one.
    fn peak(&self) -> (f64, f64) {
        self.changes
            .iter()
            .fold((0.0, 0.0), |peak, &c| if c.1 > peak.1 { c } else { peak })
    }

    /// The value the line stays at or below for `share` of the time up to
    /// `end` (each value weighs the time it holds; a run of one sync weighs
    /// its one value).
    fn percentile(&self, end: f64, share: f64) -> f64 {
        let mut held: Vec<(f64, f64)> = self
            .changes
            .iter()
            .enumerate()
            .map(|(i, &(time, value))| {
                let until = self.changes.get(i + 1).map_or(end, |next| next.0);
                (value, until - time)
            })
            .collect();
        let total: f64 = held.iter().map(|h| h.1).sum();
        if total <= 0.0 {
            return self.top();
        }
        held.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut sum = 0.0;
        for (value, time) in held {
            sum += time;
            if sum >= share * total {
                return value;
            }
        }
        self.top()
    }

    /// When each stretch above `level` starts.
    fn starts_above(&self, level: f64) -> Vec<f64> {
        let mut above = false;
        let mut starts = Vec::new();
        for &(time, value) in &self.changes {
            if value > level && !above {
                starts.push(time);
            }
            above = value > level;
        }
        starts
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

/// Stretches of time: those of the syncs added, each lasting a sync period.
#[derive(Default)]
struct Spans {
    spans: Vec<(f64, f64)>,
}

impl Spans {
    fn add(&mut self, time: f64, until: f64) {
        match self.spans.last_mut() {
            Some(last) if last.1 >= time => last.1 = until,
            _ => self.spans.push((time, until)),
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
    /// Where `maxReplicas` held the count back (`TooManyReplicas`).
    capped: Spans,
}

impl<'s> Plot<'s> {
    pub fn new(setup: &'s Setup<'s>, path: &Path) -> Result<Self> {
        let metrics = setup
            .shown_metrics()
            // An invalid metric has no demand to draw.
            .filter_map(|(metric, key, column)| Some((metric, key, column?)))
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
            capped: Spans::default(),
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
            if n.scaling_limited == TOO_MANY_REPLICAS {
                let period = x(self.setup.autoscaler.flags.sync_period);
                self.capped.add(time, time + period);
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

/// The first step that needs at most [`MAX_TICKS`] marks up to `top`.
fn step_for(top: f64, mut steps: impl Iterator<Item = f64>) -> f64 {
    steps
        .find(|step| top / step <= MAX_TICKS)
        .expect("steps grow without bound")
}

/// Marks from 0 to `top` at multiples of the first step that needs at most
/// [`MAX_TICKS`] of them.
fn ticks(top: f64, steps: impl Iterator<Item = f64>) -> Vec<f64> {
    let step = step_for(top, steps);
    // Within rounding: 12 × 0.1 is a little more than 1.2.
    (0..)
        .map(|i| f64::from(i) * step)
        .take_while(|tick| *tick <= top * (1.0 + 1e-9))
        .collect()
}

/// `value` rounded up to a mark, for the top of an axis that is cut there.
fn round_up(value: f64, steps: impl Iterator<Item = f64>) -> f64 {
    let step = step_for(value, steps);
    let marks = (value / step - 1e-9).ceil();
    if step < 1.0 {
        // 7 ÷ 5 is 1.4, where 7 × 0.2 is a little more.
        marks / (1.0 / step).round()
    } else {
        marks * step
    }
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

/// A value to a thousandth, without trailing zeros: `6`, `0.5`, `140`.
fn rounded(value: f64) -> String {
    format!("{}", (value * 1000.0).round() / 1000.0)
}

/// A value mark: `6`, `0.5`, `2500`; from 10,000 on with the suffix of a
/// Kubernetes quantity (`12k`, `250M`, `1.4G`), so that it fits left of the
/// axis.
pub fn value_label(value: &f64) -> String {
    const SUFFIXES: [(f64, &str); 6] = [
        (1e18, "E"),
        (1e15, "P"),
        (1e12, "T"),
        (1e9, "G"),
        (1e6, "M"),
        (1e3, "k"),
    ];
    match SUFFIXES.iter().find(|(size, _)| value.abs() >= *size) {
        Some((size, suffix)) if value.abs() >= 1e4 => format!("{}{suffix}", rounded(value / size)),
        _ => rounded(*value),
    }
}

/// `2,500`, `0.25`: a value in a note, its thousands grouped.
fn figure(value: f64) -> String {
    let text = rounded(value);
    let (whole, fraction) = match text.split_once('.') {
        Some((whole, fraction)) => (whole, format!(".{fraction}")),
        None => (text.as_str(), String::new()),
    };
    let (sign, digits) = match whole.strip_prefix('-') {
        Some(digits) => ("-", digits),
        None => ("", whole),
    };
    let mut grouped = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    format!("{sign}{grouped}{fraction}")
}

/// The unit values are shown in: its name on the axis, what follows a value
/// in a note (`%`, `cores`; nothing for a metric's own unit), and how many of
/// the trace's units make one.
struct Unit {
    axis: String,
    suffix: &'static str,
    size: f64,
}

impl Unit {
    fn named(axis: impl Into<String>, suffix: &'static str) -> Self {
        Self {
            axis: axis.into(),
            suffix,
            size: 1.0,
        }
    }

    /// The binary unit of bytes that shows `value` as 1 or more with the
    /// fewest digits; `per` follows its name on the axis.
    fn bytes(value: f64, per: &str) -> Self {
        const UNITS: [(&str, i32); 4] = [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)];
        let (name, power) = UNITS
            .into_iter()
            .find(|&(_, power)| value >= 2_f64.powi(power))
            .unwrap_or(("bytes", 0));
        Self {
            axis: format!("{name}{per}"),
            suffix: name,
            size: 2_f64.powi(power),
        }
    }

    /// A value already in this unit as a note writes it: `2,500 %`, `0.5 cores`.
    fn show(&self, value: f64) -> String {
        match self.suffix {
            "" => figure(value),
            suffix => format!("{} {suffix}", figure(value)),
        }
    }
}

/// Resources counted in bytes.
fn in_bytes(resource: &str) -> bool {
    matches!(resource, "memory" | "ephemeral-storage") || resource.starts_with("hugepages-")
}

/// The unit of a metric's demand, whose values reach `top`: the resource's,
/// or the metric's own, named after it.
fn demand_unit(kind: &MetricKind, top: f64) -> Unit {
    match kind {
        MetricKind::Resource { resource, .. } if resource == "cpu" => Unit::named("cores", "cores"),
        MetricKind::Resource { resource, .. } if in_bytes(resource) => Unit::bytes(top, ""),
        MetricKind::Resource { resource: name, .. }
        | MetricKind::Pods { name, .. }
        | MetricKind::Value { name, .. }
        | MetricKind::AverageOfTotal { name, .. } => Unit::named(name.as_str(), ""),
        MetricKind::Invalid { .. } => Unit::named("value", ""),
    }
}

/// The unit of a metric's value per pod (for a `value` target, of the
/// value), whose target is `target`.
fn per_pod_unit(kind: &MetricKind, target: f64) -> Unit {
    match kind {
        MetricKind::Resource {
            target: ResourceTarget::Utilization(_),
            ..
        } => Unit::named("% of request", "%"),
        MetricKind::Resource { resource, .. } if resource == "cpu" => {
            Unit::named("cores per pod", "cores")
        }
        MetricKind::Resource { resource, .. } if in_bytes(resource) => {
            Unit::bytes(target, " per pod")
        }
        MetricKind::Value { name, .. } => Unit::named(name.as_str(), ""),
        MetricKind::Resource { resource: name, .. }
        | MetricKind::Pods { name, .. }
        | MetricKind::AverageOfTotal { name, .. } => Unit::named(format!("{name} per pod"), ""),
        MetricKind::Invalid { .. } => Unit::named("value", ""),
    }
}

/// A metric's target as its per-pod line shows it: the percentage for
/// utilization, else the value.
fn target(kind: &MetricKind) -> f64 {
    match kind {
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
    }
}

/// The share of the time a line's bulk covers.
const BULK: f64 = 0.99;
/// How far past its bulk a line's peak may go before the axis is cut.
const SPIKE: f64 = 1.5;
/// How far past a metric's target its axis reaches at least.
const TARGET_ROOM: f64 = 1.5;

/// A value axis: its top (in the unit shown), and when a few spikes are cut
/// there, the highest value and its time.
struct Scale {
    top: f64,
    cut: Option<(f64, f64)>,
}

impl Scale {
    /// The axis for `line`, shown in units of `unit` (`whole` for counts),
    /// that reaches `floor` at least: up to the line's peak with room above,
    /// unless the peak passes [`SPIKE`] times the line's bulk (the value it
    /// stays at or below [`BULK`] of the time, or `floor` if higher); then up
    /// to the bulk with room above, rounded up to a mark, and cut there.
    fn new(line: &Held, floor: f64, end: f64, unit: f64, whole: bool) -> Self {
        let (time, peak) = line.peak();
        let (peak, floor) = (peak / unit, floor / unit);
        let bulk = (line.percentile(end, BULK) / unit).max(floor);
        if bulk <= 0.0 || peak <= bulk * SPIKE {
            let top = peak.max(floor) * 1.1;
            return Self {
                top: if top > 0.0 { top } else { 1.0 },
                cut: None,
            };
        }
        let steps = decimal_steps().filter(|step| !whole || *step >= 1.0);
        Self {
            top: round_up(bulk * 1.1, steps),
            cut: Some((time, peak)),
        }
    }

    /// A line's points in units of `unit`, those above the top at the top.
    fn shown(&self, points: Vec<(f64, f64)>, unit: f64) -> Vec<(f64, f64)> {
        points
            .into_iter()
            .map(|(time, value)| (time, (value / unit).min(self.top)))
            .collect()
    }

    /// Where `line` is cut: a marker at the top edge where each stretch above
    /// it starts, and a note in the legend.
    fn cut_marks(
        &self,
        chart: &mut Chart<'_, '_>,
        legend: &mut Legend,
        line: &Held,
        unit: &Unit,
        end: f64,
    ) -> DrawResult {
        let Some((time, peak)) = self.cut else {
            return Ok(());
        };
        let mut marks = Dots {
            end,
            points: Vec::new(),
        };
        for start in line.starts_above(self.top * unit.size) {
            marks.add(start, self.top);
        }
        chart.draw_series(marks.points.into_iter().map(|point| {
            // Below the edge, its tip on it.
            EmptyElement::at(point) + TriangleMarker::new((0, 5), 5, CUT.filled())
        }))?;
        legend.add(Swatch::Cut, format!("cut above {}", unit.show(self.top)));
        let at = format_duration((time * 1000.0) as i64);
        legend.add(Swatch::Blank, format!("(peak {} at {at})", unit.show(peak)));
        Ok(())
    }
}

pub type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
pub type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<Marked, Marked>>;
pub type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// A chart on `area` from 0 to `end` seconds and from 0 to `top` (`whole`
/// for counts), its marks and grid drawn, its value axis named `axis`; the
/// legend goes right of it.
pub fn chart<'a, 'b>(
    area: &'a Area<'b>,
    title: &str,
    axis: &str,
    whole: bool,
    end: f64,
    top: f64,
) -> Result<Chart<'a, 'b>, Box<dyn std::error::Error>> {
    let y_steps = decimal_steps().filter(|step| !whole || *step >= 1.0);
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 16))
        .margin(8)
        .margin_right(LEGEND_WIDTH)
        .x_label_area_size(28)
        .y_label_area_size(56)
        .build_cartesian_2d(
            Marked::new(end.max(1.0), time_steps()),
            Marked::new(top, y_steps),
        )?;
    chart
        .configure_mesh()
        .bold_line_style(RGBColor(225, 225, 225))
        .x_label_formatter(&|s| format_duration((*s * 1000.0) as i64))
        .y_label_formatter(&value_label)
        .y_desc(axis)
        .draw()?;
    Ok(chart)
}

/// What a legend entry shows left of its label.
#[derive(Clone, Copy)]
pub enum Swatch {
    Line(Stroke),
    Dot(RGBColor),
    Area(RGBAColor),
    /// The marker of a cut axis.
    Cut,
    /// Nothing: the label goes on from the entry above.
    Blank,
}

/// A panel's legend, right of the plot where it hides nothing.
#[derive(Default)]
pub struct Legend {
    entries: Vec<(Swatch, String)>,
}

impl Legend {
    /// An entry, unless one has its label already (a line in pieces).
    pub fn add(&mut self, swatch: Swatch, label: impl Into<String>) {
        let label = label.into();
        if !self.entries.iter().any(|entry| entry.1 == label) {
            self.entries.push((swatch, label));
        }
    }

    pub fn draw(&self, area: &Area<'_>) -> DrawResult {
        let left = i32::try_from(area.dim_in_pixel().0 - LEGEND_WIDTH)? + 16;
        for (i, (swatch, label)) in self.entries.iter().enumerate() {
            let y = 40 + 16 * i32::try_from(i)?;
            let ends = vec![(left, y), (left + 16, y)];
            match *swatch {
                Swatch::Line(Stroke { style, dash: None }) => {
                    area.draw(&PathElement::new(ends, style))?;
                }
                Swatch::Line(Stroke {
                    style,
                    dash: Some((dash, gap)),
                }) => area.draw(&DashedPathElement::new(ends, dash, gap, style))?,
                Swatch::Dot(color) => area.draw(&Circle::new((left + 8, y), 3, color.filled()))?,
                Swatch::Area(color) => {
                    let corners = [(left, y - 5), (left + 16, y + 5)];
                    area.draw(&Rectangle::new(corners, color.filled()))?;
                }
                Swatch::Cut => {
                    area.draw(&TriangleMarker::new((left + 8, y), 5, CUT.filled()))?;
                }
                Swatch::Blank => {}
            }
            area.draw(&Text::new(
                label.as_str(),
                (left + 24, y - 6),
                ("sans-serif", 12),
            ))?;
        }
        Ok(())
    }
}

/// A panel: its chart, then `layers` (what is drawn first lies under the
/// rest), then the legend they filled.
fn panel(
    area: &Area<'_>,
    title: &str,
    axis: &str,
    whole: bool,
    end: f64,
    top: f64,
    layers: impl FnOnce(&mut Chart<'_, '_>, &mut Legend) -> DrawResult,
) -> DrawResult {
    let mut chart = chart(area, title, axis, whole, end, top)?;
    let mut legend = Legend::default();
    layers(&mut chart, &mut legend)?;
    legend.draw(area)
}

impl Plot<'_> {
    fn render(&self) -> Result<String, Box<dyn std::error::Error>> {
        // Per metric its demand and its value per pod, then the replicas.
        let panels = 2 * self.metrics.len() + 1;
        let mut svg = String::new();
        {
            let height = PANEL * u32::try_from(panels)? + 40;
            let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
            root.fill(&WHITE)?;
            let (title, body) = root.split_vertically(40);
            title.titled(
                &format!("HorizontalPodAutoscaler {}", self.setup.found.key()),
                ("sans-serif", 20),
            )?;
            let areas = body.split_evenly((panels, 1));
            for (n, (lines, areas)) in self.metrics.iter().zip(areas.chunks(2)).enumerate() {
                self.metric_panels(areas, lines, COLORS[n % COLORS.len()])?;
            }
            self.replicas_panel(areas.last().expect("one panel at least"))?;
            root.present()?;
        }
        Ok(svg)
    }

    /// A metric's demand, and its value per pod over its target.
    fn metric_panels(
        &self,
        areas: &[Area<'_>],
        lines: &MetricLines,
        color: RGBColor,
    ) -> DrawResult {
        let kind = &self.setup.autoscaler.metrics[lines.metric];
        let (end, key) = (self.end, lines.label.as_str());
        let stroke = Stroke::new(color, 2, None);
        let value_target = matches!(kind, MetricKind::Value { .. });
        let unit = demand_unit(kind, lines.demand.top());
        let scale = Scale::new(&lines.demand, 0.0, end, unit.size, false);
        let title = match kind {
            MetricKind::Value { .. } | MetricKind::AverageOfTotal { .. } => {
                format!("{key}: demand")
            }
            _ => format!("{key}: demand, the workload's total"),
        };
        panel(
            &areas[0],
            &title,
            &unit.axis,
            false,
            end,
            scale.top,
            |chart, legend| {
                stroke.draw(chart, scale.shown(lines.demand.points(end), unit.size))?;
                legend.add(Swatch::Line(stroke), key);
                scale.cut_marks(chart, legend, &lines.demand, &unit, end)
            },
        )?;
        let goal = target(kind);
        let unit = per_pod_unit(kind, goal);
        let scale = Scale::new(&lines.per_pod, goal * TARGET_ROOM, end, unit.size, false);
        let title = if value_target {
            format!("{key}: value against its target")
        } else {
            format!("{key}: per pod against its target")
        };
        panel(
            &areas[1],
            &title,
            &unit.axis,
            false,
            end,
            scale.top,
            |chart, legend| {
                let level = goal / unit.size;
                TARGET.draw(chart, vec![(0.0, level), (end, level)])?;
                // Over the target, which it hides where they are equal.
                stroke.draw(chart, scale.shown(lines.per_pod.points(end), unit.size))?;
                legend.add(Swatch::Line(stroke), key);
                legend.add(Swatch::Line(TARGET), format!("target {}", unit.show(level)));
                scale.cut_marks(chart, legend, &lines.per_pod, &unit, end)
            },
        )
    }

    /// The replicas over their bounds, with the recommendation, the syncs
    /// held back and the stretches where `maxReplicas` capped the count.
    fn replicas_panel(&self, area: &Area<'_>) -> DrawResult {
        let a = self.setup.autoscaler;
        let end = self.end;
        let (min, max) = (f64::from(a.min_replicas), f64::from(a.max_replicas));
        let floor = self.replicas.top().max(self.observed.top()).max(max);
        let scale = Scale::new(&self.recommended, floor, end, 1.0, true);
        let replicas = Stroke::new(COLORS[0], 2, None);
        let observed = Stroke::new(OBSERVED, 2, None);
        panel(
            area,
            "replicas",
            "replicas",
            true,
            end,
            scale.top,
            |chart, legend| {
                legend.add(Swatch::Line(replicas), "replicas");
                legend.add(Swatch::Line(RECOMMENDATION), "recommendation");
                if !self.observed.pieces.is_empty() {
                    legend.add(Swatch::Line(observed), "observed");
                }
                legend.add(Swatch::Line(MAX_REPLICAS), format!("maxReplicas {max}"));
                legend.add(Swatch::Line(MIN_REPLICAS), format!("minReplicas {min}"));
                // Under everything else.
                let bands = self.capped.spans.iter().map(|&(from, until)| {
                    Rectangle::new([(from, 0.0), (until.min(end), scale.top)], CAPPED.filled())
                });
                chart.draw_series(bands)?;
                legend.add(Swatch::Area(CAPPED), "held at maxReplicas");
                // The bounds, then the lines over them.
                MAX_REPLICAS.draw(chart, vec![(0.0, max), (end, max)])?;
                MIN_REPLICAS.draw(chart, vec![(0.0, min), (end, min)])?;
                RECOMMENDATION.draw(chart, scale.shown(self.recommended.points(end), 1.0))?;
                // Under the simulated count, which hides it where they agree.
                for piece in &self.observed.pieces {
                    observed.draw(chart, piece.clone())?;
                }
                replicas.draw(chart, self.replicas.points(end))?;
                for (label, color, dots) in [
                    ("held by stabilization", STABILIZED, &self.stabilized),
                    ("limited by a policy", LIMITED, &self.limited),
                ] {
                    let circles = dots
                        .points
                        .iter()
                        .map(|&p| Circle::new(p, 3, color.filled()));
                    chart.draw_series(circles)?;
                    legend.add(Swatch::Dot(color), label);
                }
                scale.cut_marks(chart, legend, &self.recommended, &Unit::named("", ""), end)
            },
        )
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
        assert_eq!(value_label(&2500.0), "2500");
        assert_eq!(value_label(&12_000.0), "12k");
        assert_eq!(value_label(&250e6), "250M");
        assert_eq!(value_label(&1.4e9), "1.4G");
        assert_eq!(ticks(1.2, decimal_steps()).len(), 7, "1.2 itself is a mark");
        assert_eq!(round_up(123.75, decimal_steps()), 140.0);
        assert_eq!(round_up(1.32, decimal_steps()), 1.4);
        assert_eq!(round_up(9.9, decimal_steps().filter(|s| *s >= 1.0)), 10.0);
    }

    #[test]
    fn notes_group_thousands_and_name_units() {
        assert_eq!(figure(2424.0), "2,424");
        assert_eq!(figure(1_234_567.5), "1,234,567.5");
        assert_eq!(figure(140.0), "140");
        assert_eq!(figure(-1500.0), "-1,500");
        assert_eq!(Unit::named("% of request", "%").show(2424.0), "2,424 %");
        assert_eq!(Unit::named("x per pod", "").show(12.0), "12");
        let mib = Unit::bytes(300.0 * 1024.0 * 1024.0, " per pod");
        assert_eq!((mib.axis.as_str(), mib.size), ("MiB per pod", 1_048_576.0));
        assert_eq!(Unit::bytes(2.5 * 1024.0 * 1024.0 * 1024.0, "").axis, "GiB");
        assert_eq!(Unit::bytes(512.0, "").axis, "bytes");
    }

    fn line(values: &[(f64, f64)]) -> Held {
        let mut held = Held::default();
        for &(time, value) in values {
            held.add(time, value);
        }
        held
    }

    #[test]
    fn the_bulk_weighs_each_value_by_the_time_it_holds() {
        // 2,400 for 15 s of an hour, then 60.
        let spike = line(&[(0.0, 2400.0), (15.0, 60.0)]);
        assert_eq!(spike.percentile(3600.0, BULK), 60.0);
        assert_eq!(spike.peak(), (0.0, 2400.0));
        assert_eq!(spike.starts_above(100.0), [0.0]);
        // One sync: its value.
        assert_eq!(line(&[(0.0, 7.0)]).percentile(0.0, BULK), 7.0);
        // A peak held longer than 1 % of the time is the bulk.
        let plateau = line(&[(0.0, 50.0), (1000.0, 145.0), (1100.0, 50.0)]);
        assert_eq!(plateau.percentile(2400.0, BULK), 145.0);
        assert_eq!(
            line(&[(0.0, 200.0), (10.0, 5.0), (20.0, 300.0), (30.0, 5.0)]).starts_above(100.0),
            [0.0, 20.0]
        );
    }

    #[test]
    fn an_axis_is_cut_only_where_a_spike_would_flatten_it() {
        let spike = line(&[(0.0, 2400.0), (15.0, 60.0)]);
        // Against a 75 % target: the bulk is the floor, 112.5 %.
        let cut = Scale::new(&spike, 112.5, 3600.0, 1.0, false);
        assert_eq!((cut.top, cut.cut), (140.0, Some((0.0, 2400.0))));
        assert_eq!(
            cut.shown(spike.points(3600.0), 1.0),
            [(0.0, 140.0), (15.0, 140.0), (15.0, 60.0), (3600.0, 60.0)]
        );
        // A peak up to 1.5 times the bulk is shown whole, with room above.
        let whole = Scale::new(
            &line(&[(0.0, 160.0), (15.0, 60.0)]),
            112.5,
            3600.0,
            1.0,
            false,
        );
        assert_eq!(whole.cut, None);
        assert!((whole.top - 176.0).abs() < 1e-9);
        // In a unit: bytes shown as MiB.
        let mib = 1_048_576.0;
        let memory = line(&[(0.0, 1024.0 * mib), (15.0, 200.0 * mib)]);
        let scale = Scale::new(&memory, 450.0 * mib, 3600.0, mib, false);
        assert_eq!((scale.top, scale.cut), (500.0, Some((0.0, 1024.0))));
        // Nothing at all: an axis to 1.
        assert_eq!(
            Scale::new(&line(&[(0.0, 0.0)]), 0.0, 60.0, 1.0, true).top,
            1.0
        );
    }
}
