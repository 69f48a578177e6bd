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

use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use hpa_lint_rules::controller::simulate::{Simulation, Step};
use hpa_lint_rules::controller::{Autoscaler, ControllerFlags, Millis, parse_duration};
use hpa_lint_rules::{Object, Settings};

use crate::hpas::{self, ControllerArgs, Found, PickArgs};
use crate::input;
use crate::loads::{self, Load, Resolved};
use crate::simulate::trace::{Columns, Trace};
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
    /// `daily`, with parameters as `step:at=5m,hold=20m` (see the README).
    #[arg(
        long,
        value_name = "KIND[:KEY=VALUE,…]",
        required_unless_present = "trace",
        conflicts_with = "trace"
    )]
    pub load: Option<Load>,
    /// The load from a file, as `simulate --trace` reads it.
    #[arg(long, value_name = "[METRIC=]FILE")]
    pub trace: Vec<String>,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Compare until this time [default: the end of the load or trace].
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub until: Option<Millis>,
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
    /// One JSON object; see the README for the contract.
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
    /// The spec of `found`, its target taken from `fallback` when its own
    /// input has none (the other side's).
    pub fn new(
        found: &Found,
        fallback: Option<&Arc<Object>>,
        flags: &ControllerFlags,
        settings: &Settings,
        requests: &[String],
    ) -> Result<Self> {
        let found = Found {
            object: found.object.clone(),
            hpa: found.hpa.clone(),
            file: found.file.clone(),
            target: found.target.clone().or_else(|| fallback.cloned()),
        };
        let autoscaler = Autoscaler::new(&found.hpa, flags.clone(), &settings.cluster);
        let columns = Columns::Metrics(simulate::trace_names(&autoscaler));
        let (requests, assumed) = match simulate::requests(&found, &autoscaler, requests, &columns)
        {
            Ok(known) => (known, None),
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

/// Where a demand came from.
#[derive(Clone, Debug)]
pub enum About {
    Load(Resolved),
    /// The trace files, as given.
    Trace(Vec<String>),
}

/// The demand the specs run on, with its source.
pub struct Demand {
    pub about: About,
    pub trace: Trace,
    /// The last sync's time.
    pub end: Millis,
    /// The resources whose requests were assumed (a load only).
    pub assumed: Vec<String>,
}

impl Demand {
    /// The trace column names every spec of `sides` reads, each once.
    fn names(sides: &[&Side]) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for side in sides {
            for name in simulate::trace_names(&side.autoscaler) {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        names
    }

    /// A standard load, scaled to `sides`.
    pub fn load(load: &Load, sides: &[&Side], until: Option<Millis>) -> Result<Self> {
        let scales: Vec<_> = sides.iter().map(|s| s.scale()).collect();
        let resolved = load.resolve(&scales, &Self::names(sides))?;
        let period = sides[0].autoscaler.flags.sync_period;
        let end = until.unwrap_or(resolved.end);
        // Refused before its rows are made.
        simulate::syncs(end, period)?;
        let mut assumed: Vec<String> = sides
            .iter()
            .filter_map(|s| s.assumed.as_ref())
            .flat_map(|(resources, _)| resources.iter().cloned())
            .collect();
        assumed.sort();
        assumed.dedup();
        Ok(Self {
            trace: resolved.trace(period),
            end,
            about: About::Load(resolved),
            assumed,
        })
    }

    /// Trace files, read for the metrics of `sides`.
    pub fn trace(specs: &[String], sides: &[&Side], until: Option<Millis>) -> Result<Self> {
        // A trace's demand is in units: the requests must be known.
        if let Some((_, missing)) = sides.iter().find_map(|s| s.assumed.as_ref()) {
            bail!("{missing}");
        }
        let trace = simulate::read_trace(specs, &Self::names(sides))?;
        if trace.columns == Columns::Replicas {
            bail!(
                "a `{}` trace gives the controller's recommendation, the same for every spec: comparing specs needs the metrics' demand (a column per metric)",
                simulate::trace::RECOMMENDATION_COLUMN
            );
        }
        Ok(Self {
            end: until.unwrap_or_else(|| trace.end()),
            trace,
            about: About::Trace(specs.to_vec()),
            assumed: Vec::new(),
        })
    }

    /// `step: …`, or the trace files.
    pub fn label(&self) -> String {
        match &self.about {
            About::Load(load) => load.to_string(),
            About::Trace(files) => format!("trace {}", files.join(", ")),
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

    /// A short name: the load's kind, or `trace`.
    pub fn name(&self) -> &'static str {
        match &self.about {
            About::Load(load) => load.shape.name(),
            About::Trace(_) => "trace",
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
    fn step(&mut self, step: &Step, _: &[i64]) -> Result<()> {
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

/// Runs `side` on `demand`.
fn run_side(side: &Side, demand: &Demand, syncs: i64, model: &ModelArgs) -> Result<Run> {
    let setup = Setup {
        found: &side.found,
        autoscaler: &side.autoscaler,
        columns: &demand.trace.columns,
        metrics: simulate::keys(&side.autoscaler, &demand.trace.columns),
        syncs,
    };
    let mut tally = Tally::new(&setup, &side.requests);
    let mut series = Series::default();
    let model = model.model(side.autoscaler.min_replicas)?;
    let simulation = Simulation::new(&side.autoscaler, model, side.requests.clone());
    simulate::drive(
        &setup,
        simulation,
        &demand.trace,
        &mut [&mut tally, &mut series],
    )?;
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

/// The HPA of one side: the one `--hpa` names, or the only one.
fn read_side(
    path: &PathBuf,
    settings: &Settings,
    pick: &PickArgs,
    ignore: (&[String], &std::path::Path),
) -> Result<(Found, Vec<Arc<Object>>)> {
    let (sources, errors) = input::collect(std::slice::from_ref(path), &[], ignore.0, ignore.1)
        .map_err(anyhow::Error::msg)?;
    if let Some(error) = errors.first() {
        bail!("{error}");
    }
    let mut selection = hpas::select(&sources, settings, pick.hpa.as_deref())?;
    let count = selection.found.len() + selection.refused.len();
    let shown = path.display();
    if count == 0 {
        match &pick.hpa {
            Some(name) => bail!("{shown}: no HorizontalPodAutoscaler `{name}`"),
            None => bail!("{shown}: no HorizontalPodAutoscaler"),
        }
    }
    if count > 1 {
        let mut keys: Vec<String> = selection.found.iter().map(Found::key).collect();
        keys.extend(selection.refused.iter().map(|r| r.key.clone()));
        keys.sort();
        bail!(
            "{shown}: {count} HorizontalPodAutoscalers ({}); pick one with --hpa",
            keys.join(", ")
        );
    }
    if let Some(refused) = selection.refused.pop() {
        bail!("{shown}: {refused}");
    }
    let found = selection.found.pop().expect("one HPA");
    let targets = found.target.iter().cloned().collect();
    Ok((found, targets))
}

pub fn run(args: &CompareArgs) -> Result<u8> {
    let flags = args.controller.flags()?;
    let (settings, ignore_paths, config_dir) = hpas::resolve(&args.pick)?;
    let ignore = (ignore_paths.as_slice(), config_dir.as_path());
    let (old, old_targets) = read_side(&args.old, &settings, &args.pick, ignore)?;
    let (new, new_targets) = read_side(&args.new, &settings, &args.pick, ignore)?;
    // A target missing on one side is the other's, when it is the same object.
    let fallback = |found: &Found, targets: &[Arc<Object>]| {
        let wanted = found.hpa.target(&found.object.key.namespace);
        targets
            .iter()
            .find(|t| {
                t.key.kind == wanted.kind
                    && t.key.name == wanted.name
                    && t.key.namespace == wanted.namespace
            })
            .cloned()
    };
    let requests = &args.model.requests;
    let old_side = Side::new(
        &old,
        fallback(&old, &new_targets).as_ref(),
        &flags,
        &settings,
        requests,
    )?;
    let new_side = Side::new(
        &new,
        fallback(&new, &old_targets).as_ref(),
        &flags,
        &settings,
        requests,
    )?;
    let sides = [&old_side, &new_side];
    let demand = match &args.load {
        Some(load) => Demand::load(load, &sides, args.until)?,
        None => Demand::trace(&args.trace, &sides, args.until)?,
    };
    // The plot's file is checked before the run, and drawn before anything
    // is written.
    let plot = args.plot.as_deref().map(plot::File::new).transpose()?;
    let comparison = compare(sides, demand, &args.model)?;
    let svg = match &plot {
        Some(_) => {
            let title = format!("HorizontalPodAutoscaler {}", old_side.found.key());
            Some(plot::render(
                &title,
                sides,
                LABELS,
                std::slice::from_ref(&comparison),
            )?)
        }
        None => None,
    };
    let mut out = io::BufWriter::new(io::stdout().lock());
    match args.format {
        CompareFormat::Text => output::text(sides, &comparison, &mut out)?,
        CompareFormat::Json => output::json(sides, &comparison, &mut out)?,
        CompareFormat::Csv => output::csv(&comparison, &mut out)?,
    }
    out.flush()?;
    if let (Some(plot), Some(svg)) = (plot, svg) {
        plot.write(&svg)?;
    }
    Ok(0)
}
