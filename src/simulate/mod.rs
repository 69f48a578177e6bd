//! `hpa-lint simulate`: replicas over time for an HPA under a load trace, as
//! the HPA controller decides them, sync by sync, against the pod model of
//! `hpa_lint_rules::controller::simulate`.
//!
//! A run is a [`Setup`] (the HPA, its metrics' keys, the syncs to run) and a
//! trace; each sync's [`Step`] goes to the [`Sink`]s as it is made (the
//! output format, the plot), so that nothing grows with the number of syncs
//! but what a sink keeps.

pub mod output;
pub mod plot;
pub mod source;
pub mod trace;

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;

use crate::prometheus::replay::ReplayArgs;
use crate::prometheus::time::{TimeArg, UnixMillis, parse_time_arg};
use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use hpa_lint_rules::controller::flags::{format_duration, thousandths};
use hpa_lint_rules::controller::reconcile::{MetricKind, ResourceTarget};
use hpa_lint_rules::controller::replicas::template_request;
use hpa_lint_rules::controller::simulate::{Demand, MAX_PODS, Model, Simulation, Step};
use hpa_lint_rules::controller::{Autoscaler, Millis, parse_duration};
use hpa_lint_rules::model::quantity::Quantity;
use hpa_lint_rules::model::workload::PodTemplate;

use crate::hpas::{self, ControllerArgs, Found, InputArgs};
use crate::loads;
use source::Source;
use trace::{Columns, MetricColumns, Trace};

/// The most syncs one simulation runs.
pub(crate) const MAX_SYNCS: i64 = 10_000_000;

/// The most pods one simulation follows, summed over its syncs: a sync's
/// cost grows with its pods (the controller reads each one).
const MAX_POD_SYNCS: i64 = 1_000_000_000;

#[derive(Debug, Args)]
pub struct SimulateArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub controller: ControllerArgs,
    /// The load: a CSV file (`time,replicas` or `time,<metric>,…`), or
    /// `METRIC=FILE.json` with a Prometheus `query_range` response, once per metric.
    #[arg(
        long,
        value_name = "[METRIC=]FILE",
        required_unless_present_any = ["prometheus", "load"],
        conflicts_with_all = ["prometheus", "load"]
    )]
    pub trace: Vec<String>,
    /// The load from Prometheus: `--prometheus URL --since 7d`.
    #[command(flatten)]
    pub replay: ReplayArgs,
    /// Or a standard load scaled to the HPA: `step`, `spike`, `ramp` or
    /// `daily`, with parameters as `step:at=5m,hold=20m` (see docs/simulate.md).
    #[arg(long, value_name = "KIND[:KEY=VALUE,…]", conflicts_with = "prometheus")]
    pub load: Option<crate::loads::Load>,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Simulate until this time: a duration from the start, or (with
    /// --prometheus or Prometheus files) an RFC 3339 time [default: the
    /// trace's last time; with --prometheus, now].
    #[arg(long, value_name = "DURATION|TIME", value_parser = parse_time_arg)]
    pub until: Option<TimeArg>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// What a simulation writes.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = SimulateFormat::Text)]
    pub format: SimulateFormat,
    /// Also draw demand, per-pod metric and replicas over time as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

/// The pod model's options, and the pods' requests.
#[derive(Debug, Args)]
pub struct ModelArgs {
    /// Pod requests, e.g. `cpu=250m,memory=256Mi`: for a target not in the
    /// input, or in place of the target's (a what-if, noted on standard error).
    #[arg(long, value_name = "RESOURCE=QUANTITY,…", value_delimiter = ',')]
    pub requests: Vec<String>,
    /// Replicas at time 0 [default: the observed replicas with --prometheus,
    /// else minReplicas].
    #[arg(long, value_name = "N")]
    pub replicas: Option<i32>,
    /// From a scale-up until the new pods are Ready.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub pod_startup: Millis,
    /// The metric samples' window (metrics-server's resolution).
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = parse_duration)]
    pub metric_window: Millis,
}

impl ModelArgs {
    /// The model for an HPA that starts at `replicas` unless `--replicas`
    /// says otherwise.
    pub fn model(&self, replicas: i32) -> Result<Model> {
        let model = Model {
            replicas: self.replicas.unwrap_or(replicas),
            pod_startup: self.pod_startup,
            metric_window: self.metric_window,
        };
        if !(0..=MAX_PODS).contains(&model.replicas) {
            bail!(
                "--replicas must be from 0 to {MAX_PODS} (the simulation follows each pod, and no cluster holds more)"
            );
        }
        Ok(model)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SimulateFormat {
    /// A table of the syncs where something changed, and a chart.
    Text,
    /// One JSON object; see docs/simulate.md for the contract.
    Json,
    /// One row per sync.
    Csv,
}

/// What a run is about, known before its first sync.
pub struct Setup<'a> {
    pub found: &'a Found,
    pub autoscaler: &'a Autoscaler,
    /// Per metric of the HPA: its key in the outputs and its trace column,
    /// or `None` when the trace has no column for it.
    pub metrics: Vec<Option<(String, Option<usize>)>>,
    /// The number of syncs, one every sync period from time 0.
    pub syncs: i64,
    /// The Unix time of time 0, when the trace has dates (Prometheus).
    pub start: Option<UnixMillis>,
    /// Whether the syncs come with the replicas kube-state-metrics saw.
    pub observed: bool,
}

impl Setup<'_> {
    /// The time of the last sync.
    pub fn end(&self) -> Millis {
        (self.syncs - 1) * self.autoscaler.flags.sync_period
    }

    /// The metrics shown: `(index, key, column)`, the column `None` for an
    /// invalid metric (it reads none: every sync fails it).
    pub fn shown_metrics(&self) -> impl Iterator<Item = (usize, &str, Option<usize>)> {
        self.metrics
            .iter()
            .enumerate()
            .filter_map(|(m, shown)| shown.as_ref().map(|(key, c)| (m, key.as_str(), *c)))
    }
}

/// Where the syncs of a run go, one at a time.
pub trait Sink {
    /// One sync: what the controller decided, the trace's values at it (per
    /// column; empty when the trace gives recommendations), and the replicas
    /// kube-state-metrics saw then (when [`Setup::observed`]).
    fn step(&mut self, step: &Step, demand: &[i64], observed: Option<i32>) -> Result<()>;
    /// After the last sync.
    fn finish(&mut self) -> Result<()>;
}

/// `hpa-lint simulate`: the HPA of the input on its demand, written to
/// `out` (and the plot).
pub fn run(args: &SimulateArgs, out: impl Write) -> Result<u8> {
    let flags = args.controller.flags()?;
    let (found, settings) = hpas::read_one(&args.input)?;
    let autoscaler = Autoscaler::new(&found.hpa, flags, &settings.cluster);
    let wanted = MetricColumns::of(&[&autoscaler]);
    let period = autoscaler.flags.sync_period;
    let source = match &args.load {
        Some(load) => {
            let columns = Columns::Metrics(wanted.keys());
            let requests = requests(&found, &autoscaler, &args.model.requests, &columns)?;
            let scale = loads::Scale {
                autoscaler: &autoscaler,
                requests: &requests,
            };
            source::standard(load, &[scale], &wanted.keys(), args.until, period)?.0
        }
        None => source::load(
            &args.trace,
            &args.replay,
            args.until,
            &found,
            &[&autoscaler],
            &wanted,
        )?,
    };
    simulate(&found, &autoscaler, &source, &args.model, &args.output, out)?;
    Ok(0)
}

/// Simulates `autoscaler` (the controller's view of `found`) on `source`,
/// writing each sync to `out` in the format asked for, and to the plot.
pub fn simulate(
    found: &Found,
    autoscaler: &Autoscaler,
    source: &Source,
    model: &ModelArgs,
    output: &OutputArgs,
    out: impl Write,
) -> Result<()> {
    let trace = &source.trace;
    let requests = requests(found, autoscaler, &model.requests, &trace.columns)?;
    note_replaced_requests(found, autoscaler, &model.requests);
    let observed_start = source.observed.first().copied().flatten();
    let model = model.model(observed_start.unwrap_or(autoscaler.min_replicas))?;
    let syncs = syncs(source.end, autoscaler.flags.sync_period)?;
    let setup = Setup {
        found,
        metrics: keys(autoscaler, &trace.columns),
        autoscaler,
        syncs,
        start: source.start,
        observed: !source.observed.is_empty(),
    };
    // The plot's file is checked before anything is written.
    let mut plot = output
        .plot
        .as_deref()
        .map(|path| plot::Plot::new(&setup, path))
        .transpose()?;
    let out = io::BufWriter::new(out);
    let mut output: Box<dyn Sink + '_> = match output.format {
        SimulateFormat::Text => Box::new(output::Text::new(&setup, out)?),
        SimulateFormat::Json => Box::new(output::Json::new(&setup, out)?),
        SimulateFormat::Csv => Box::new(output::Csv::new(&setup, out)?),
    };
    let mut sinks: Vec<&mut dyn Sink> = vec![output.as_mut()];
    if let Some(plot) = plot.as_mut() {
        sinks.push(plot);
    }
    let simulation = Simulation::new(autoscaler, model, requests);
    drive(&setup, simulation, trace, &source.observed, &mut sinks)
}

/// The number of syncs from 0 to `end`, one every `period`: an error past
/// [`MAX_SYNCS`].
pub fn syncs(end: Millis, period: Millis) -> Result<i64> {
    let syncs = end / period + 1;
    if syncs > MAX_SYNCS {
        bail!(
            "the simulation would run {syncs} syncs (one every {} until {}), more than the limit of {MAX_SYNCS}; shorten --until or lengthen --sync-period",
            format_duration(period),
            format_duration(end)
        );
    }
    Ok(syncs)
}

/// Runs the syncs of `setup` over the trace, giving each to every sink, then
/// finishes them (not after an error: a sink's output then stops where the
/// run did, and no plot is written).
pub fn drive(
    setup: &Setup<'_>,
    mut simulation: Simulation<'_>,
    trace: &Trace,
    observed: &[Option<i32>],
    sinks: &mut [&mut dyn Sink],
) -> Result<()> {
    let autoscaler = setup.autoscaler;
    let period = autoscaler.flags.sync_period;
    let mut row = 0;
    let mut pod_syncs: i64 = 0;
    for sync in 0..setup.syncs {
        let now = sync * period;
        while row + 1 < trace.rows.len() && trace.rows[row + 1].0 <= now {
            row += 1;
        }
        let values = &trace.rows[row].1;
        let demand = match &trace.columns {
            Columns::Replicas => Demand::Replicas(i32::try_from(values[0]).unwrap_or(i32::MAX)),
            Columns::Metrics(_) => Demand::Metrics(
                setup
                    .metrics
                    .iter()
                    .map(|shown| {
                        shown
                            .as_ref()
                            .and_then(|(_, c)| *c)
                            .map_or(0, |c| values[c])
                    })
                    .collect(),
            ),
        };
        let step = simulation.sync(now, &demand)?;
        pod_syncs += i64::from(step.current);
        if pod_syncs > MAX_POD_SYNCS {
            bail!(
                "by {} the simulation has followed {MAX_POD_SYNCS} pods summed over its syncs, the most one run does; shorten --until or lengthen --sync-period",
                format_duration(now)
            );
        }
        let shown: &[i64] = match trace.columns {
            Columns::Replicas => &[],
            Columns::Metrics(_) => values,
        };
        let observed = usize::try_from(sync)
            .ok()
            .and_then(|i| observed.get(i))
            .copied()
            .flatten();
        for sink in sinks.iter_mut() {
            sink.step(&step, shown, observed)?;
        }
    }
    for sink in sinks.iter_mut() {
        sink.finish()?;
    }
    Ok(())
}

/// Each metric's key, with its trace column (see [`trace::metric_keys`]):
/// `None` for a metric with no name, or for every metric with a trace of
/// recommendations; the column is `None` for an invalid metric.
pub fn keys(autoscaler: &Autoscaler, columns: &Columns) -> Vec<Option<(String, Option<usize>)>> {
    let Columns::Metrics(names) = columns else {
        return vec![None; autoscaler.metrics.len()];
    };
    trace::metric_keys(autoscaler)
        .into_iter()
        .map(|key| {
            let key = key?;
            let column = names.iter().position(|n| *n == key);
            Some((key, column))
        })
        .collect()
}

/// `--requests`: milli-units per resource.
fn parse_requests(given: &[String]) -> Result<BTreeMap<String, i64>> {
    let mut overrides = BTreeMap::new();
    for item in given {
        let Some((resource, quantity)) = item.split_once('=') else {
            bail!("--requests {item}: expected RESOURCE=QUANTITY, e.g. cpu=250m");
        };
        let milli = Quantity::parse(quantity)
            .ok()
            .and_then(|q| q.milli_value())
            .filter(|m| *m > 0)
            .with_context(|| {
                format!("--requests {item}: `{quantity}` is not a positive quantity")
            })?;
        overrides.insert(resource.trim().to_owned(), milli);
    }
    Ok(overrides)
}

/// The container a `ContainerResource` metric names when the pod template
/// lacks it, with what injects it when a webhook may at admission (the pods
/// then have it, with a request the input does not show; else the
/// controller fails the metric, whatever the requests).
fn absent_container<'c>(
    template: &PodTemplate<'_>,
    container: Option<&'c str>,
) -> Option<(&'c str, Option<&'static str>)> {
    let name = container?;
    let present = template.all_containers().any(|c| c.name == name);
    (!present).then(|| (name, template.injector_of(name)))
}

/// Each metric's per-pod request, for utilization targets: from `--requests`,
/// else from the target's pod template (after the API server's defaulting:
/// a container with only a limit requests its limit).
pub fn requests(
    found: &Found,
    autoscaler: &Autoscaler,
    given: &[String],
    columns: &Columns,
) -> Result<Vec<Result<i64, String>>> {
    let overrides = parse_requests(given)?;
    let template = found.target.as_deref().and_then(PodTemplate::of);
    autoscaler
        .metrics
        .iter()
        .map(|metric| {
            let MetricKind::Resource { resource, container, target: ResourceTarget::Utilization(_) } = metric else {
                return Ok(Ok(0));
            };
            if matches!(columns, Columns::Replicas) {
                return Ok(Ok(0));
            }
            let absent = template.as_ref().and_then(|t| absent_container(t, container.as_deref()));
            if let Some((name, None)) = absent {
                return Ok(Err(format!("container {name} not found in Pod of the target")));
            }
            if let Some(milli) = overrides.get(resource) {
                return Ok(Ok(*milli));
            }
            let Some(template) = &template else {
                let target = &found.hpa.scale_target_ref;
                bail!(
                    "the target {} `{}` is not in the input: give the pods' requests with --requests {resource}=…",
                    target.kind,
                    target.name
                );
            };
            if let Some((name, Some(injector))) = absent {
                bail!(
                    "container `{name}` is not in the pod template of the target: {injector} injects it at admission, with a request the input does not show: give it with --requests {resource}=…"
                );
            }
            let gates = &autoscaler.feature_gates;
            let request = template_request(
                template,
                resource,
                container.as_deref(),
                gates,
                &found.default_requests,
            );
            Ok(request.map(|request| request.milli))
        })
        .collect()
}

/// Says on standard error where `--requests` replaces a request the
/// target in the input has: a what-if, as asked, but not what the cluster
/// would run.
pub fn note_replaced_requests(found: &Found, autoscaler: &Autoscaler, given: &[String]) {
    let (Ok(overrides), Some(template)) = (
        parse_requests(given),
        found.target.as_deref().and_then(PodTemplate::of),
    ) else {
        return;
    };
    let mut noted = Vec::new();
    for metric in &autoscaler.metrics {
        let MetricKind::Resource {
            resource,
            container,
            target: ResourceTarget::Utilization(_),
        } = metric
        else {
            continue;
        };
        let Some(&milli) = overrides.get(resource) else {
            continue;
        };
        if absent_container(&template, container.as_deref()).is_some() {
            // No request of the input is replaced: an injected sidecar's is
            // not in it, and `--requests` gives it.
            continue;
        }
        let gates = &autoscaler.feature_gates;
        let own = template_request(
            &template,
            resource,
            container.as_deref(),
            gates,
            &found.default_requests,
        )
        .map(|own| own.milli);
        if own != Ok(milli) && !noted.contains(resource) {
            noted.push(resource.clone());
            let target = &found.hpa.scale_target_ref;
            let target = format!("{} `{}` in the input", target.kind, target.name);
            let replaced = match own {
                Ok(own) => format!(
                    "in place of the {} that {target} requests",
                    thousandths(own)
                ),
                // Without it the controller fails the metric.
                Err(_) => format!("where {target} requests none"),
            };
            crate::tell!(
                "hpa-lint: note: --requests: {resource} {} per pod {replaced} (a what-if)",
                thousandths(milli)
            );
        }
    }
}
