//! `hpa-lint simulate`: replicas over time for an HPA under a load trace, as
//! the HPA controller decides them, sync by sync, against the pod model of
//! `hpa_lint_rules::controller::simulate`.

mod output;
mod plot;
mod source;
mod trace;

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use hpa_lint::prometheus::replay::ReplayArgs;
use hpa_lint::prometheus::time::{TimeArg, UnixMillis, parse_time_arg};
use hpa_lint_rules::controller::reconcile::{MetricKind, ResourceTarget};
use hpa_lint_rules::controller::replicas::pod_request;
use hpa_lint_rules::controller::simulate::{Demand, MAX_PODS, Model, Simulation, Step};
use hpa_lint_rules::controller::{Autoscaler, Millis, parse_duration};
use hpa_lint_rules::model::quantity::Quantity;
use hpa_lint_rules::model::workload::PodTemplate;

use crate::hpas::{self, ControllerArgs, Found, InputArgs};
use trace::Columns;

/// The most syncs one simulation runs.
const MAX_STEPS: i64 = 10_000_000;

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
        required_unless_present = "prometheus",
        conflicts_with = "prometheus"
    )]
    pub trace: Vec<String>,
    /// The load from Prometheus: `--prometheus URL --since 7d`.
    #[command(flatten)]
    pub replay: ReplayArgs,
    /// Pod requests when the target is not in the input, e.g. `cpu=250m,memory=256Mi`.
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
    /// Simulate until this time: a duration from the start, or (with
    /// --prometheus or Prometheus files) an RFC 3339 time [default: the
    /// trace's last time; with --prometheus, now].
    #[arg(long, value_name = "DURATION|TIME", value_parser = parse_time_arg)]
    pub until: Option<TimeArg>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = SimulateFormat::Text)]
    pub format: SimulateFormat,
    /// Also draw demand, per-pod metric and replicas over time as SVG.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SimulateFormat {
    /// A table of the syncs where something changed, and a chart.
    Text,
    /// One JSON object; see the README for the contract.
    Json,
    /// One row per sync.
    Csv,
}

/// A finished simulation and what is needed to show it.
pub struct Run<'a> {
    pub found: &'a Found,
    pub autoscaler: &'a Autoscaler,
    pub columns: Columns,
    /// The demand per sync, per column (empty in `replicas` mode).
    pub demand: Vec<Vec<i64>>,
    pub steps: Vec<Step>,
    /// The Unix time of time 0, when the trace has dates.
    pub start: Option<UnixMillis>,
    /// The replicas kube-state-metrics saw at each sync (empty: none).
    pub observed: Vec<Option<i32>>,
}

impl Run<'_> {
    /// The trace column of each metric of the HPA (`None`: no column).
    pub fn column_of(&self, metric: usize) -> Option<usize> {
        let Columns::Metrics(names) = &self.columns else {
            return None;
        };
        names
            .iter()
            .position(|n| n == self.autoscaler.metrics[metric].name())
    }
}

pub fn run(args: &SimulateArgs) -> Result<u8> {
    let flags = args.controller.flags()?;
    let (found, settings) = hpas::read(&args.input)?;
    let found = match found.as_slice() {
        [one] => one,
        many => bail!(
            "{} HorizontalPodAutoscalers in the input ({}); pick one with --hpa",
            many.len(),
            many.iter().map(Found::key).collect::<Vec<_>>().join(", ")
        ),
    };
    let autoscaler = Autoscaler::new(&found.hpa, flags, &settings.cluster);
    let metric_names = column_names(&autoscaler);
    let source = source::load(
        &args.trace,
        &args.replay,
        args.until,
        found,
        &autoscaler,
        &metric_names,
    )?;
    let trace = source.trace;
    let requests = requests(found, &autoscaler, &args.requests, &trace.columns)?;
    let observed_start = source.observed.first().copied().flatten();
    let model = Model {
        replicas: args
            .replicas
            .or(observed_start)
            .unwrap_or(autoscaler.min_replicas),
        pod_startup: args.pod_startup,
        metric_window: args.metric_window,
    };
    if !(0..=MAX_PODS).contains(&model.replicas) {
        bail!(
            "--replicas must be from 0 to {MAX_PODS} (the simulation follows each pod, and no cluster holds more)"
        );
    }
    let end = source.end;
    let period = autoscaler.flags.sync_period;
    if end / period >= MAX_STEPS {
        bail!(
            "the simulation would run {} syncs, more than the limit of {MAX_STEPS}; shorten --until or lengthen --sync-period",
            end / period + 1
        );
    }
    let mut simulation = Simulation::new(&autoscaler, model, requests);
    let (mut steps, mut demand) = (Vec::new(), Vec::new());
    let mut row = 0;
    let mut now = 0;
    while now <= end {
        while row + 1 < trace.rows.len() && trace.rows[row + 1].0 <= now {
            row += 1;
        }
        let values = &trace.rows[row].1;
        let sync_demand = match &trace.columns {
            Columns::Replicas => Demand::Replicas(i32::try_from(values[0]).unwrap_or(i32::MAX)),
            Columns::Metrics(names) => Demand::Metrics(
                autoscaler
                    .metrics
                    .iter()
                    .map(|m| {
                        names
                            .iter()
                            .position(|n| n == m.name())
                            .map_or(0, |c| values[c])
                    })
                    .collect(),
            ),
        };
        steps.push(simulation.sync(now, &sync_demand)?);
        if matches!(trace.columns, Columns::Metrics(_)) {
            demand.push(values.clone());
        }
        now += period;
    }
    let mut observed = source.observed;
    if !observed.is_empty() {
        observed.resize(steps.len(), None);
    }
    let run = Run {
        found,
        autoscaler: &autoscaler,
        columns: trace.columns,
        demand,
        steps,
        start: source.start,
        observed,
    };
    if let Some(path) = &args.plot {
        plot::write(&run, path)?;
    }
    let mut out = io::BufWriter::new(io::stdout().lock());
    match args.format {
        SimulateFormat::Text => output::text(&run, &mut out)?,
        SimulateFormat::Json => output::json(&run, &mut out)?,
        SimulateFormat::Csv => output::csv(&run, &mut out)?,
    }
    out.flush()?;
    Ok(0)
}

/// The trace column names of the HPA's metrics, once each.
fn column_names(autoscaler: &Autoscaler) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for metric in &autoscaler.metrics {
        let name = metric.name();
        if !name.is_empty() && !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    }
    names
}

/// Each metric's per-pod request, for utilization targets: from `--requests`,
/// else from the target's pod template (after the API server's defaulting:
/// a container with only a limit requests its limit).
fn requests(
    found: &Found,
    autoscaler: &Autoscaler,
    given: &[String],
    columns: &Columns,
) -> Result<Vec<Result<i64, String>>> {
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
            Ok(template_request(template, resource, container.as_deref()))
        })
        .collect()
}

/// The request a pod of the template has (`calculateRequests`): pod-level
/// requests for a Resource metric when set, else the named container's, else
/// the sum over containers and sidecars.
fn template_request(
    template: &PodTemplate<'_>,
    resource: &str,
    container: Option<&str>,
) -> Result<i64, String> {
    let quantity = |v: Option<&serde_json::Value>| {
        v.and_then(Quantity::from_json)
            .and_then(|q| q.milli_value())
    };
    if container.is_none() && template.has_pod_level(resource) {
        let pod_level = template.pod_level_request(resource);
        if let Some(milli) = quantity(pod_level) {
            return Ok(milli);
        }
    }
    let containers: Vec<(String, Option<i64>)> = template
        .counted_containers()
        .iter()
        .map(|c| (c.name.to_owned(), quantity(c.effective_request(resource))))
        .collect();
    pod_request(&containers, container, resource, "of the target")
}
