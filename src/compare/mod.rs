//! `hpa-lint compare OLD NEW`: two specs of one HPA on the same demand, side
//! by side. Each spec runs through the same simulation as `simulate`
//! ([`crate::simulate::drive`]) into a [`summary::Tally`] (and, for the CSV
//! and the plot, a [`Series`]); the demand comes from a [`Demand`], whatever
//! its source.

pub mod output;
pub mod plot;
pub mod summary;

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;

use crate::prometheus::replay::{Fidelity, ReplayArgs};
use crate::prometheus::time::{self, TimeArg, UnixMillis, parse_time_arg};
use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use hpa_lint_rules::controller::simulate::{Simulation, Step};
use hpa_lint_rules::controller::{Autoscaler, ControllerFlags, Millis};
use hpa_lint_rules::{Object, Settings};

use crate::hpas::{self, ControllerArgs, Found, PickArgs};
use crate::input;
use crate::loads::{self, Load, NotApplicable, Resolved};
use crate::simulate::source::{self, Source};
use crate::simulate::trace::{Columns, MetricColumns, Trace};
use crate::simulate::{self, ModelArgs, Setup, Sink};
use summary::{Summary, Tally};

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The spec before: a file or directory with the HPA (its target may be
    /// on either side).
    pub old: PathBuf,
    /// The spec after.
    pub new: PathBuf,
    #[command(flatten)]
    pub pick: PickArgs,
    #[command(flatten)]
    pub controller: ControllerArgs,
    /// A standard load scaled to both specs: `step`, `spike`, `ramp` or
    /// `daily`, with parameters as `step:at=5m,hold=20m` (see docs/simulate.md).
    #[arg(
        long,
        value_name = "KIND[:KEY=VALUE,…]",
        required_unless_present_any = ["trace", "prometheus"],
        conflicts_with_all = ["trace", "prometheus"]
    )]
    pub load: Option<Load>,
    /// Or the load from files, as `simulate --trace` reads them.
    #[arg(long, value_name = "[METRIC=]FILE", conflicts_with = "prometheus")]
    pub trace: Vec<String>,
    /// Or the load from Prometheus, as `simulate --prometheus` replays it
    /// (the old spec's target).
    #[command(flatten)]
    pub replay: ReplayArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Compare until this time: a duration from the start, or (with
    /// Prometheus) an RFC 3339 time [default: the end of the load or trace;
    /// with --prometheus, now].
    #[arg(long, value_name = "DURATION|TIME", value_parser = parse_time_arg)]
    pub until: Option<TimeArg>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// What a comparison writes.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = CompareFormat::Text)]
    pub format: CompareFormat,
    /// Also draw both specs' replicas over the demand as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    /// The summary as a table.
    Text,
    /// One JSON object; see docs/simulate.md for the contract.
    Json,
    /// One row per sync: the demand and both specs' replicas.
    Csv,
}

/// One spec of an HPA, as the controller runs it.
pub struct Side {
    pub found: Found,
    pub autoscaler: Autoscaler,
    /// Per metric, the pods' request (utilization targets), or why there is none.
    pub requests: Vec<Result<i64, String>>,
    /// The resources whose request is assumed, [`ASSUMED_REQUEST`], because
    /// the target is not in the input; and why.
    pub assumed: Option<(Vec<String>, String)>,
}

/// The request of a pod whose target is not in the input, for standard
/// loads: their demand is a multiple of the request, so the replicas are
/// the same whatever it is.
const ASSUMED_REQUEST: &str = "1";

impl Side {
    /// The spec of `found`, its target taken from `fallback` (the other
    /// side) as [`with_target`] takes it.
    pub fn new(
        found: &Found,
        fallback: Option<&Found>,
        flags: &ControllerFlags,
        settings: &Settings,
        requests: &[String],
    ) -> Result<Self> {
        let found = with_target(found, fallback);
        let autoscaler = Autoscaler::new(&found.hpa, flags.clone(), &settings.cluster);
        let columns = Columns::Metrics(MetricColumns::of(&[&autoscaler]).keys());
        let (requests, assumed) = match simulate::requests(&found, &autoscaler, requests, &columns)
        {
            Ok(known) => (known, None),
            // A target in the input whose requests the input does not show
            // (an injected sidecar's) is not one to assume them for.
            Err(missing) if found.target.is_some() => return Err(missing),
            Err(missing) => {
                let given: Vec<&str> = requests
                    .iter()
                    .filter_map(|r| Some(r.split_once('=')?.0.trim()))
                    .collect();
                let mut resources: Vec<String> = autoscaler
                    .metrics
                    .iter()
                    .filter(|m| simulate::output::has_utilization(m) && !given.contains(&m.name()))
                    .map(|m| m.name().to_owned())
                    .collect();
                resources.dedup();
                let mut all = requests.to_vec();
                all.extend(resources.iter().map(|r| format!("{r}={ASSUMED_REQUEST}")));
                let known = simulate::requests(&found, &autoscaler, &all, &columns)?;
                (known, Some((resources, format!("{missing:#}"))))
            }
        };
        Ok(Self {
            found,
            autoscaler,
            requests,
            assumed,
        })
    }

    fn scale(&self) -> loads::Scale<'_> {
        loads::Scale {
            autoscaler: &self.autoscaler,
            requests: &self.requests,
        }
    }
}

/// `found`, its target (with its namespace's LimitRanges) taken from
/// `other` (the other side) when its own input has none and the other's is
/// the same object.
pub fn with_target(found: &Found, other: Option<&Found>) -> Found {
    let wanted = found.hpa.target(&found.object.key.namespace);
    let same = |t: &Arc<Object>| {
        t.key.kind == wanted.kind
            && t.key.name == wanted.name
            && t.key.namespace == wanted.namespace
    };
    let borrowed =
        other.filter(|other| found.target.is_none() && other.target.as_ref().is_some_and(same));
    Found {
        object: found.object.clone(),
        hpa: found.hpa.clone(),
        file: found.file.clone(),
        target: found.target.clone().or_else(|| borrowed?.target.clone()),
        default_requests: borrowed.unwrap_or(found).default_requests.clone(),
    }
}

/// Where a demand came from.
#[derive(Clone, Debug)]
pub enum About {
    Load(Resolved),
    /// Trace files, as given.
    Trace(Vec<String>),
    /// A Prometheus server.
    Prometheus(String),
}

/// The demand the specs run on, with its source: any of `simulate`'s
/// ([`source`]), or a standard load scaled to both specs.
pub struct Demand {
    pub about: About,
    pub trace: Trace,
    /// The last sync's time.
    pub end: Millis,
    /// The Unix time of time 0, when the demand has dates (Prometheus).
    pub start: Option<UnixMillis>,
    /// The replicas kube-state-metrics saw at each sync (empty: none).
    pub observed: Vec<Option<i32>>,
    /// The resources whose requests were assumed (a load only).
    pub assumed: Vec<String>,
}

impl Demand {
    /// The trace columns every spec of `sides` reads.
    fn wanted(sides: &[&Side]) -> MetricColumns {
        let autoscalers: Vec<&Autoscaler> = sides.iter().map(|s| &s.autoscaler).collect();
        MetricColumns::of(&autoscalers)
    }

    fn new(about: About, source: Source, assumed: Vec<String>) -> Self {
        Self {
            about,
            trace: source.trace,
            end: source.end,
            start: source.start,
            observed: source.observed,
            assumed,
        }
    }

    /// A standard load, scaled to `sides`.
    pub fn load(load: &Load, sides: &[&Side], until: Option<TimeArg>) -> Result<Self> {
        let scales: Vec<_> = sides.iter().map(|s| s.scale()).collect();
        let period = sides[0].autoscaler.flags.sync_period;
        let (source, resolved) =
            source::standard(load, &scales, &Self::wanted(sides).keys(), until, period)?;
        let mut assumed: Vec<String> = sides
            .iter()
            .filter_map(|s| s.assumed.as_ref())
            .flat_map(|(resources, _)| resources.iter().cloned())
            .collect();
        assumed.sort();
        assumed.dedup();
        Ok(Self::new(About::Load(resolved), source, assumed))
    }

    /// A history: trace files, or a replay from Prometheus of the first
    /// spec's target (the one deployed), for the metrics of all `sides`.
    pub fn history(
        traces: &[String],
        replay: &ReplayArgs,
        sides: &[&Side],
        until: Option<TimeArg>,
    ) -> Result<Self> {
        // A history's demand is in units: the requests must be known.
        if let Some((_, missing)) = sides.iter().find_map(|s| s.assumed.as_ref()) {
            bail!("{missing}");
        }
        let autoscalers: Vec<&Autoscaler> = sides.iter().map(|s| &s.autoscaler).collect();
        let found = &sides[0].found;
        let wanted = Self::wanted(sides);
        let source = source::load(traces, replay, until, found, &autoscalers, &wanted)?;
        if source.trace.columns == Columns::Replicas {
            bail!(
                "a `{}` trace gives the controller's recommendation, the same for every spec: comparing specs needs the metrics' demand (a column per metric)",
                simulate::trace::RECOMMENDATION_COLUMN
            );
        }
        let about = match &replay.client.prometheus {
            Some(url) => About::Prometheus(url.to_string()),
            None => About::Trace(traces.to_vec()),
        };
        Ok(Self::new(about, source, Vec::new()))
    }

    /// `step: …`, the trace files, or the Prometheus server and start.
    pub fn label(&self) -> String {
        match &self.about {
            About::Load(load) => load.to_string(),
            About::Trace(files) => format!("trace {}", files.join(", ")),
            About::Prometheus(url) => {
                let from = self
                    .start
                    .map_or_else(String::new, |t| format!(" from {}", time::format(t)));
                format!("Prometheus {url}{from}")
            }
        }
    }

    /// What was assumed of the requests, if anything.
    pub fn assumption(&self) -> Option<String> {
        (!self.assumed.is_empty()).then(|| {
            format!(
                "the target is not in the input: a pod's {} request is taken as {ASSUMED_REQUEST} (the replicas do not depend on it, the totals do)",
                self.assumed.join(" and ")
            )
        })
    }

    /// A short name: the load's kind, `trace` or `prometheus`.
    pub fn name(&self) -> &'static str {
        match &self.about {
            About::Load(load) => load.shape.name(),
            About::Trace(_) => "trace",
            About::Prometheus(_) => "prometheus",
        }
    }

    /// The trace's values at each of `syncs` syncs `period` apart, as
    /// `drive` reads them, with the sync's index.
    pub fn at_syncs(&self, period: Millis, syncs: i64) -> impl Iterator<Item = (i64, &[i64])> {
        let rows = &self.trace.rows;
        let mut row = 0;
        (0..syncs).map(move |sync| {
            let now = sync * period;
            while row + 1 < rows.len() && rows[row + 1].0 <= now {
                row += 1;
            }
            (sync, rows[row].1.as_slice())
        })
    }
}

/// The replicas of a run where they change: `(sync, current, desired, ready)`.
#[derive(Default)]
pub struct Series {
    pub changes: Vec<(i64, i32, i32, i32)>,
    syncs: i64,
}

impl Sink for Series {
    fn step(&mut self, step: &Step, _: &[i64], _: Option<i32>) -> Result<()> {
        let now = (self.syncs, step.current, step.outcome.desired, step.ready);
        if self
            .changes
            .last()
            .is_none_or(|last| (last.1, last.2, last.3) != (now.1, now.2, now.3))
        {
            self.changes.push(now);
        }
        self.syncs += 1;
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

impl Series {
    /// `(current, desired, ready)` at each sync.
    pub fn at_syncs(&self, syncs: i64) -> impl Iterator<Item = (i32, i32, i32)> + '_ {
        let mut change = 0;
        (0..syncs).map(move |sync| {
            while change + 1 < self.changes.len() && self.changes[change + 1].0 <= sync {
                change += 1;
            }
            let (_, current, desired, ready) = self.changes[change];
            (current, desired, ready)
        })
    }
}

/// One spec's run on a demand.
pub struct Run {
    pub summary: Summary,
    pub series: Series,
}

/// Both specs on one demand.
pub struct Comparison {
    pub demand: Demand,
    pub period: Millis,
    pub syncs: i64,
    pub runs: [Run; 2],
}

impl Comparison {
    /// How closely the old spec's simulated replicas follow those
    /// kube-state-metrics saw (with Prometheus): it ran then.
    pub fn fidelity(&self) -> Option<Fidelity> {
        let simulated: Vec<i32> = self.runs[0]
            .series
            .at_syncs(self.syncs)
            .map(|(current, _, _)| current)
            .collect();
        Fidelity::of(&simulated, &self.demand.observed)
    }
}

/// Runs `side` on `demand`.
fn run_side(side: &Side, demand: &Demand, syncs: i64, model: &ModelArgs) -> Result<Run> {
    let setup = Setup {
        found: &side.found,
        autoscaler: &side.autoscaler,
        metrics: simulate::keys(&side.autoscaler, &demand.trace.columns),
        syncs,
        start: demand.start,
        observed: !demand.observed.is_empty(),
    };
    let mut tally = Tally::new(&setup, &side.requests);
    let mut series = Series::default();
    // Both specs start where the workload was, when that is known.
    let observed = demand.observed.first().copied().flatten();
    let model = model.model(observed.unwrap_or(side.autoscaler.min_replicas))?;
    let simulation = Simulation::new(&side.autoscaler, model, side.requests.clone());
    let sinks: &mut [&mut dyn Sink] = &mut [&mut tally, &mut series];
    simulate::drive(&setup, simulation, &demand.trace, &demand.observed, sinks)?;
    Ok(Run {
        summary: tally.summary().clone(),
        series,
    })
}

/// Runs both specs on `demand`; an error names the spec that met it.
pub fn compare(sides: [&Side; 2], demand: Demand, model: &ModelArgs) -> Result<Comparison> {
    let period = sides[0].autoscaler.flags.sync_period;
    let syncs = simulate::syncs(demand.end, period)?;
    let run = |i: usize| {
        run_side(sides[i], &demand, syncs, model)
            .map_err(|e| e.context(format!("the {} spec ({})", LABELS[i], sides[i].found.file)))
    };
    let runs = [run(0)?, run(1)?];
    Ok(Comparison {
        demand,
        period,
        syncs,
        runs,
    })
}

/// The sides' names in `compare`'s outputs.
pub const LABELS: [&str; 2] = ["old", "new"];

/// The HPA of one side, with its target when its input holds it: the one
/// `hpa` names, or the only one (`several` says what to do when there are
/// more).
pub fn read_side(
    path: &PathBuf,
    settings: &Settings,
    hpa: Option<&str>,
    several: &str,
    ignore: (&[String], &std::path::Path),
) -> Result<Found> {
    let (sources, errors) = input::collect(
        std::slice::from_ref(path),
        &[],
        ignore.0,
        ignore.1,
        input::Order::Given,
    )
    .map_err(anyhow::Error::msg)?;
    if let Some(error) = errors.first() {
        bail!("{error}");
    }
    let mut selection = hpas::select(&sources, settings, hpa)?;
    let count = selection.keys.len();
    let shown = path.display();
    if count == 0 {
        match hpa {
            Some(name) => bail!("{shown}: no HorizontalPodAutoscaler `{name}`"),
            None => bail!("{shown}: no HorizontalPodAutoscaler"),
        }
    }
    if count > 1 {
        bail!(
            "{shown}: {count} HorizontalPodAutoscalers ({}); {several}",
            selection.keys.join(", ")
        );
    }
    if let Some(refused) = selection.refused.pop() {
        bail!("{shown}: {refused}");
    }
    Ok(selection.found.pop().expect("one HPA"))
}

/// Says on standard error where `--requests` replaces the requests of a
/// target in the input: once per target, as the two specs often scale the
/// same one.
pub fn note_requests(
    old: &Found,
    new: &Found,
    flags: &ControllerFlags,
    settings: &Settings,
    requests: &[String],
) {
    let mut noted = Vec::new();
    for found in [old, new] {
        let target = found.target.as_ref().map(|t| &t.value);
        if !noted.contains(&target) {
            noted.push(target);
            let autoscaler = Autoscaler::new(&found.hpa, flags.clone(), &settings.cluster);
            simulate::note_replaced_requests(found, &autoscaler, requests);
        }
    }
}

/// The two specs: a target missing on one side is the other's, when it is
/// the same object.
pub fn sides(
    old: &Found,
    new: &Found,
    flags: &ControllerFlags,
    settings: &Settings,
    requests: &[String],
) -> Result<[Side; 2]> {
    let sides = [
        Side::new(old, Some(new), flags, settings, requests)?,
        Side::new(new, Some(old), flags, settings, requests)?,
    ];
    // A spec that never scales would pass for the cheaper one.
    let never = sides.each_ref().map(|side| side.scale().never_scales());
    let which = match &never {
        [None, None] => return Ok(sides),
        [Some(old), Some(new)] if old == new => format!("both specs: {old}"),
        _ => (never.iter().zip(&sides).zip(LABELS))
            .filter_map(|((why, side), label)| {
                Some(format!(
                    "the {label} spec ({}): {}",
                    side.found.file,
                    why.as_ref()?
                ))
            })
            .collect::<Vec<_>>()
            .join("; "),
    };
    let why = format!("{which}: every sync fails its metrics, so the HPA never scales");
    Err(NotApplicable(why).into())
}

/// `hpa-lint compare`: the two specs of the input on their demand, written
/// to `out` (and the plot).
pub fn run(args: &CompareArgs, out: impl Write) -> Result<u8> {
    let flags = args.controller.flags()?;
    let (settings, ignore_paths, config_dir) = hpas::resolve(&args.pick)?;
    let ignore = (ignore_paths.as_slice(), config_dir.as_path());
    let hpa = args.pick.hpa.as_deref();
    let several = "pick one with --hpa";
    let old = read_side(&args.old, &settings, hpa, several, ignore)?;
    let new = read_side(&args.new, &settings, hpa, several, ignore)?;
    note_requests(&old, &new, &flags, &settings, &args.model.requests);
    let [old_side, new_side] = sides(&old, &new, &flags, &settings, &args.model.requests)?;
    let sides = [&old_side, &new_side];
    let demand = match &args.load {
        Some(load) => Demand::load(load, &sides, args.until)?,
        None => Demand::history(&args.trace, &args.replay, &sides, args.until)?,
    };
    write(sides, demand, &args.model, &args.output, out)?;
    Ok(0)
}

/// Compares `sides` on `demand`, writing the comparison to `out` in the
/// format asked for, and the plot.
pub fn write(
    sides: [&Side; 2],
    demand: Demand,
    model: &ModelArgs,
    output: &OutputArgs,
    out: impl Write,
) -> Result<()> {
    // The plot's file is checked before the run, and drawn before anything
    // is written.
    let plot = output.plot.as_deref().map(plot::File::new).transpose()?;
    let comparison = compare(sides, demand, model)?;
    let svg = match &plot {
        Some(_) => {
            let title = format!("HorizontalPodAutoscaler {}", sides[0].found.key());
            Some(plot::render(
                &title,
                sides,
                LABELS,
                std::slice::from_ref(&comparison),
            )?)
        }
        None => None,
    };
    let mut out = io::BufWriter::new(out);
    match output.format {
        CompareFormat::Text => output::text(sides, &comparison, &mut out)?,
        CompareFormat::Json => output::json(sides, &comparison, &mut out)?,
        CompareFormat::Csv => output::csv(&comparison, &mut out)?,
    }
    out.flush()?;
    if let (Some(plot), Some(svg)) = (plot, svg) {
        plot.write(&svg)?;
    }
    Ok(())
}
