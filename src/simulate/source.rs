//! Where a simulation's demand comes from: `--trace` files (CSV, or
//! Prometheus `query_range` answers), or `--prometheus` with `--since`;
//! with Prometheus, also the replicas kube-state-metrics saw.

use crate::prometheus::query::Target;
use crate::prometheus::replay::{self, Metric, ReplayArgs};
use crate::prometheus::time::{self, Range, TimeArg, UnixMillis};
use anyhow::{Result, bail};
use hpa_lint_rules::controller::flags::format_duration;
use hpa_lint_rules::controller::{Autoscaler, Millis};

use super::MAX_SYNCS;
use super::trace::{self, Columns, MetricColumns, Trace, escaped};
use crate::hpas::Found;
use crate::loads::{self, Load};

/// An error with the control characters of each line escaped: it quotes
/// the HPA's metric names and the queries.
fn shown(error: impl Into<anyhow::Error>) -> anyhow::Error {
    let text = format!("{:#}", error.into());
    anyhow::anyhow!(text.split('\n').map(escaped).collect::<Vec<_>>().join("\n"))
}

/// A simulation's input besides the HPA.
pub struct Source {
    pub trace: Trace,
    /// The Unix time of the trace's time 0, when it has one (Prometheus).
    pub start: Option<UnixMillis>,
    /// Observed replicas at each sync from time 0 (empty: none).
    pub observed: Vec<Option<i32>>,
    /// Simulate until this time from the start.
    pub end: Millis,
}

/// Reads `--trace` or fetches from `--prometheus`; `wanted` are the trace
/// columns of the metrics of the HPA's specs in `autoscalers` (one for
/// `simulate`, two for `compare` and `diff`: a key is queried as the first
/// spec that has it measures it), `found` the HPA whose target is replayed.
pub fn load(
    traces: &[String],
    replay: &ReplayArgs,
    until: Option<TimeArg>,
    found: &Found,
    autoscalers: &[&Autoscaler],
    wanted: &MetricColumns,
) -> Result<Source> {
    if replay.client.prometheus.is_none() {
        let (trace, start) = trace::read(traces, wanted, replay.max_gap)?;
        let period = autoscalers[0].flags.sync_period;
        let end = match (until, start) {
            // The first sync that sees the last row (rows need not fall on syncs).
            (None, _) => (trace.end() + period - 1) / period * period,
            (Some(TimeArg::Span(span)), _) => span,
            (Some(TimeArg::At(at)), Some(start)) if at >= start => at - start,
            (Some(TimeArg::At(at)), Some(start)) => bail!(
                "--until {} is before the trace's start, {}",
                time::format(at),
                time::format(start)
            ),
            (Some(TimeArg::At(_)), None) => bail!(
                "--until: a CSV trace has no dates: give a duration from its start, e.g. --until 2h"
            ),
        };
        return Ok(Source {
            trace,
            start,
            observed: Vec::new(),
            end,
        });
    }
    let Some(since) = replay.since else {
        bail!("--prometheus needs --since: how far back to replay, e.g. --since 7d");
    };
    let client = crate::prometheus::client::Client::new(&replay.client).map_err(shown)?;
    let period = autoscalers[0].flags.sync_period;
    let range = Range::resolve(since, until, time::now(), period).map_err(anyhow::Error::msg)?;
    // Refused before anything is fetched.
    if range.points() > MAX_SYNCS {
        bail!(
            "the replay from {} to {} would run {} syncs (one every {}), more than the limit of {MAX_SYNCS}; shorten --since or lengthen --sync-period",
            time::format(range.start),
            time::format(range.end),
            range.points(),
            format_duration(period)
        );
    }
    let keys = wanted.keys();
    let kinds: Vec<Metric<'_>> = keys
        .iter()
        .map(|key| Metric {
            name: key,
            kind: autoscalers
                .iter()
                .flat_map(|a| a.metrics.iter().zip(trace::metric_keys(a)))
                .find(|(_, k)| k.as_ref() == Some(key))
                .expect("every key is a metric's")
                .0,
        })
        .collect();
    let key = &found.object.key;
    let target_ref = &found.hpa.scale_target_ref;
    let target = Target {
        namespace: &key.namespace,
        kind: &target_ref.kind,
        name: &target_ref.name,
    };
    if kinds.is_empty() {
        bail!(
            "HorizontalPodAutoscaler {} has no metric to replay",
            found.key()
        );
    }
    let fetched =
        replay::fetch(&client, &kinds, &target, &key.name, replay, range).map_err(shown)?;
    for note in &fetched.notes {
        crate::tell!("hpa-lint: note: {}", escaped(note));
    }
    let demand = fetched.demand;
    let trace = Trace {
        columns: Columns::Metrics(keys.clone()),
        rows: demand.rows,
    };
    Ok(Source {
        end: trace.end(),
        trace,
        start: Some(demand.start),
        observed: fetched.observed,
    })
}

/// A standard load (`--load`) scaled to the specs of `scales`, until
/// `until` (a duration) or its own end; and the load as resolved.
pub fn standard(
    load: &Load,
    scales: &[loads::Scale<'_>],
    names: &[String],
    until: Option<TimeArg>,
    period: Millis,
) -> Result<(Source, loads::Resolved)> {
    let resolved = load.resolve(scales, names)?;
    let end = match until {
        None => resolved.end,
        Some(TimeArg::Span(span)) => span,
        Some(TimeArg::At(_)) => {
            bail!(
                "--until: a standard load has no dates: give a duration from its start, e.g. --until 2h"
            )
        }
    };
    // Refused before its rows are made.
    super::syncs(end, period)?;
    let source = Source {
        trace: resolved.trace(period),
        start: None,
        observed: Vec::new(),
        end,
    };
    Ok((source, resolved))
}
