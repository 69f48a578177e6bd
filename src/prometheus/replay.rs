//! A replay's inputs from Prometheus: each metric's query (built in, or
//! `--query NAME=PROMQL`), fetched over the range at the sync period and
//! turned into the demand table; and the replicas kube-state-metrics saw,
//! with how often the simulation agrees with them. Also the same table
//! from `query_range` answers saved in files: one code path for both.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write as _};
use std::path::Path;

use clap::Args;
use hpa_lint_rules::controller::reconcile::MetricKind;
use hpa_lint_rules::controller::{Millis, parse_duration};

use super::client::{Client, ClientArgs};
use super::demand::{Column, DemandError, Table, table};
use super::matrix::{self, Matrix, ParseError};
use super::query::{self, NoQuery, PodMatch, Target};
use super::time::{Range, TimeArg, UnixMillis, format, parse_time_arg};

/// Larger `query_range` files are refused rather than read into memory.
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// `--prometheus` and what goes with it.
#[derive(Clone, Debug, Args)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub client: ClientArgs,
    /// With --prometheus: the start, as a duration back from --until (or
    /// now), e.g. `7d`, or an RFC 3339 time, e.g. `2025-01-31T00:00:00Z`.
    #[arg(long, value_name = "DURATION|TIME", value_parser = parse_time_arg, requires = "prometheus")]
    pub since: Option<TimeArg>,
    /// A metric's PromQL, giving what the trace column would: the workload's
    /// total for per-pod metrics, the value for Object and External ones
    /// (repeatable; several series are summed).
    #[arg(long = "query", value_name = "NAME=PROMQL", requires = "prometheus")]
    pub queries: Vec<String>,
    /// How the built-in queries find the target's pods: `owner` through
    /// kube-state-metrics' `kube_pod_owner` (and `kube_replicaset_owner`),
    /// `name` by the names their controller gives them.
    #[arg(long, value_enum, default_value_t = PodMatch::Owner)]
    pub pod_match: PodMatch,
    /// The window of the built-in CPU rate and of the last memory sample; at
    /// least twice the scrape interval of cAdvisor.
    #[arg(long, value_name = "DURATION", default_value = "1m", value_parser = parse_duration)]
    pub rate_interval: Millis,
    /// The longest a metric may have no samples (in Prometheus or in a
    /// file) before it is an error; shorter gaps hold the value before them.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration)]
    pub max_gap: Millis,
}

/// One metric to fetch: its trace column name and what it is.
pub struct Metric<'a> {
    pub name: &'a str,
    pub kind: &'a MetricKind,
}

/// What a replay starts from.
pub struct Replay {
    pub demand: Table,
    /// `status.currentReplicas` at each time of the grid from the demand's
    /// start (`None` where kube-state-metrics has no sample); empty when it
    /// has none at all.
    pub observed: Vec<Option<i32>>,
    /// What the user should know (gaps held, an end moved, Prometheus'
    /// warnings), one line each.
    pub notes: Vec<String>,
}

/// Each metric's PromQL: `--query NAME=PROMQL` where given, else built in.
pub fn queries(
    metrics: &[Metric<'_>],
    target: &Target<'_>,
    args: &ReplayArgs,
) -> anyhow::Result<Vec<(String, String, bool)>> {
    let mut given = BTreeMap::new();
    for spec in &args.queries {
        let Some((name, query)) = spec.split_once('=') else {
            anyhow::bail!("--query {spec}: expected NAME=PROMQL, e.g. --query 'cpu=sum(rate(…))'");
        };
        let name = name.trim();
        // A metric's key, or a name several metrics share (it gives them all).
        if !metrics
            .iter()
            .any(|m| m.name == name || m.kind.name() == name)
        {
            let known: Vec<&str> = metrics.iter().map(|m| m.name).collect();
            anyhow::bail!(
                "--query {name}=…: unknown metric `{name}`: the HPA's metrics are {}",
                known.join(", ")
            );
        }
        if given.insert(name, query.trim()).is_some() {
            anyhow::bail!("--query {name}=…: given twice");
        }
    }
    metrics
        .iter()
        .map(
            |metric| match given.get(metric.name).or(given.get(metric.kind.name())) {
                Some(query) => Ok((metric.name.to_owned(), (*query).to_owned(), false)),
                None => {
                    let query =
                        query::builtin(metric.kind, target, args.pod_match, args.rate_interval)
                            // Named by its key, as `--query` takes it.
                            .map_err(|e| NoQuery {
                                name: metric.name.to_owned(),
                                ..e
                            })?;
                    Ok((metric.name.to_owned(), query, true))
                }
            },
        )
        .collect()
}

/// Why a built-in query matched nothing, as far as Prometheus can tell:
/// which of the series it joins has nothing in the namespace over the range.
fn diagnose(client: &Client, target: &Target<'_>, pods: PodMatch, range: Range) -> String {
    let seconds = (range.end - range.start) / 1000 + 1;
    let namespace = target.namespace;
    // Any series of the metric in the namespace at any time of the range.
    let found = |metric: &str| {
        let query =
            format!("count(last_over_time({metric}{{namespace={namespace:?}}}[{seconds}s]))");
        let at = Range {
            start: range.end,
            ..range
        };
        client
            .query_range(&query, at, &mut |_, _| {})
            .is_ok_and(|m| m.series.iter().any(|s| !s.samples.is_empty()))
    };
    let what = format!("{} `{}`", target.kind, target.name);
    let other = "--query NAME=PROMQL sets another query";
    if !found("container_cpu_usage_seconds_total") {
        return format!(
            "Prometheus has no cAdvisor series (`container_cpu_usage_seconds_total`) in namespace `{namespace}` over the range: is the kubelets' cAdvisor endpoint scraped, with its `namespace` and `pod` labels? {other}"
        );
    }
    match pods {
        PodMatch::Owner if !found("kube_pod_owner") => format!(
            "Prometheus has cAdvisor series in namespace `{namespace}` but no `kube_pod_owner`: is kube-state-metrics scraped, keeping its own `namespace` label (`honor_labels`)? --pod-match name needs cAdvisor only; {other}"
        ),
        PodMatch::Owner => format!(
            "kube-state-metrics names no pod of {what} in namespace `{namespace}` over the range; {other}"
        ),
        PodMatch::Name => format!(
            "no pod in namespace `{namespace}` is named as {what}'s are; --pod-match owner finds them through kube-state-metrics; {other}"
        ),
    }
}

/// Progress on standard error, only on a terminal: one line, erased at the end.
struct Progress {
    shown: bool,
}

impl Progress {
    fn new() -> Self {
        Progress {
            shown: std::io::stderr().is_terminal(),
        }
    }

    fn show(&self, what: &str, done: usize, total: usize) {
        if self.shown {
            let mut err = std::io::stderr().lock();
            let _ = write!(
                err,
                "\r\x1b[Khpa-lint: fetching {what} from Prometheus: {done}/{total}"
            );
            let _ = err.flush();
        }
    }

    fn clear(&self) {
        if self.shown {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[K");
        }
    }
}

/// Fetches every metric and the observed replicas over `range`.
pub fn fetch(
    client: &Client,
    metrics: &[Metric<'_>],
    target: &Target<'_>,
    hpa: &str,
    args: &ReplayArgs,
    range: Range,
) -> anyhow::Result<Replay> {
    let queries = queries(metrics, target, args)?;
    let progress = Progress::new();
    let mut notes = Vec::new();
    let mut columns = Vec::new();
    for (name, query, builtin) in &queries {
        let matrix = client.query_range(query, range, &mut |done, total| {
            progress.show(&format!("`{name}`"), done, total);
        });
        progress.clear();
        let matrix = matrix?;
        notes.extend(warnings(name, &matrix));
        let (from, to, url) = (format(range.start), format(range.end), client.url());
        if matrix.series.iter().all(|s| s.samples.is_empty()) {
            let hint = if *builtin {
                diagnose(client, target, args.pod_match, range)
            } else {
                "check it in Prometheus over the same range".to_owned()
            };
            anyhow::bail!(
                "`{name}` matches nothing in Prometheus at {url} from {from} to {to} ({hint})\n  the query: {query}"
            );
        }
        let values = matrix
            .sum()
            .map_err(|e| anyhow::anyhow!("`{name}`: {e}\n  the query: {query}"))?;
        if values.is_empty() {
            anyhow::bail!(
                "`{name}` is NaN at every time from {from} to {to} in Prometheus at {url}\n  the query: {query}"
            );
        }
        columns.push(Column {
            name: name.clone(),
            values,
        });
    }
    let demand = table(&columns, args.max_gap).map_err(|e| demand_error(e, &queries))?;
    notes.extend(demand.notes.iter().cloned());
    if demand.start > range.start {
        notes.push(format!(
            "no demand before {}: the replay starts there",
            format(demand.start)
        ));
    }
    let end = demand.start + demand.rows.last().map_or(0, |r| r.0);
    if end < range.end {
        notes.push(format!(
            "no demand after {}: the replay ends there",
            format(end)
        ));
    }
    let query = query::observed_replicas(target.namespace, hpa);
    let replicas = client.query_range(&query, range, &mut |done, total| {
        progress.show("the observed replicas", done, total);
    });
    progress.clear();
    let replicas = replicas?;
    let observed = observed_from(&replicas, demand.start, end, range.step);
    if observed.is_empty() {
        notes.push(format!(
            "kube-state-metrics' `kube_horizontalpodautoscaler_status_current_replicas` has no samples of {}/{hpa} in the range: no observed replicas",
            target.namespace
        ));
    }
    Ok(Replay {
        demand,
        observed,
        notes,
    })
}

/// The error of a demand table, with the query of the metric it names.
fn demand_error(error: DemandError, queries: &[(String, String, bool)]) -> anyhow::Error {
    match error
        .metric()
        .and_then(|n| queries.iter().find(|q| q.0 == n))
    {
        Some((_, query, _)) => anyhow::anyhow!("{error}\n  the query: {query}"),
        None => anyhow::anyhow!("{error}"),
    }
}

fn warnings(name: &str, matrix: &Matrix) -> Vec<String> {
    let mut seen: Vec<&String> = matrix.warnings.iter().collect();
    seen.sort();
    seen.dedup();
    seen.into_iter()
        .map(|w| format!("Prometheus warns about `{name}`: {w}"))
        .collect()
}

/// The observed replicas at each step from `start` to `end`, or nothing when
/// there is no sample at all.
fn observed_from(
    matrix: &Matrix,
    start: UnixMillis,
    end: UnixMillis,
    step: Millis,
) -> Vec<Option<i32>> {
    let Ok(values) = matrix.sum() else {
        return Vec::new();
    };
    let values: Vec<(UnixMillis, f64)> = values
        .into_iter()
        .filter(|(t, _)| (start..=end).contains(t))
        .collect();
    if values.is_empty() {
        return Vec::new();
    }
    let mut observed = vec![None; usize::try_from((end - start) / step + 1).unwrap_or(0)];
    for (time, value) in values {
        if let Some(slot) = usize::try_from((time - start) / step)
            .ok()
            .and_then(|i| observed.get_mut(i))
        {
            *slot = Some(value.round() as i32);
        }
    }
    observed
}

/// `NAME=FILE.json` traces: the same table as from Prometheus, from
/// `query_range` answers saved in files.
pub fn from_files(files: &[(String, &Path)], max_gap: Millis) -> anyhow::Result<Table> {
    let mut columns = Vec::with_capacity(files.len());
    for (name, path) in files {
        let at = |e: &dyn std::fmt::Display| anyhow::anyhow!("{}: {e}", path.display());
        let size = std::fs::metadata(path).map_err(|e| at(&e))?.len();
        if size > MAX_FILE_BYTES {
            anyhow::bail!(
                "{}: the trace is {} MiB, larger than the limit of {} MiB",
                path.display(),
                size >> 20,
                MAX_FILE_BYTES >> 20
            );
        }
        let bytes = std::fs::read(path).map_err(|e| at(&e))?;
        let matrix = matrix::parse(&bytes).map_err(|e| match e {
            ParseError::NotJson {
                line,
                column,
                message,
            } => anyhow::anyhow!("{}:{line}:{column}: not JSON: {message}", path.display()),
            other => at(&other),
        })?;
        if matrix.series.iter().all(|s| s.samples.is_empty()) {
            anyhow::bail!("{}: the response has no samples", path.display());
        }
        let values = matrix.sum().map_err(|e| at(&e))?;
        columns.push(Column {
            name: name.clone(),
            values,
        });
    }
    table(&columns, max_gap).map_err(|e| {
        match e.metric().and_then(|n| files.iter().find(|f| f.0 == n)) {
            Some((_, path)) => anyhow::anyhow!("{}: {e}", path.display()),
            None => anyhow::anyhow!("{e}"),
        }
    })
}

/// How closely a simulation follows what kube-state-metrics saw.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fidelity {
    /// Syncs with an observation.
    pub syncs: usize,
    /// Of those, the share where the simulated replicas equal the observed.
    pub equal: f64,
    /// The mean of |simulated − observed| over them.
    pub mean_absolute_difference: f64,
}

impl Fidelity {
    /// `simulated[k]` against `observed[k]`; `None` without any observation.
    pub fn of(simulated: &[i32], observed: &[Option<i32>]) -> Option<Fidelity> {
        let mut tally = Tally::default();
        for (simulated, observed) in simulated.iter().zip(observed) {
            tally.add(*simulated, *observed);
        }
        tally.fidelity()
    }
}

/// [`Fidelity`] counted sync by sync, as a simulation's outputs see them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    syncs: usize,
    equal: usize,
    difference: u64,
}

impl Tally {
    /// One sync: the simulated replicas and the observed ones, if any.
    pub fn add(&mut self, simulated: i32, observed: Option<i32>) {
        if let Some(observed) = observed {
            self.syncs += 1;
            self.equal += usize::from(simulated == observed);
            self.difference += u64::from(simulated.abs_diff(observed));
        }
    }

    /// The figure so far; `None` without any observation.
    pub fn fidelity(&self) -> Option<Fidelity> {
        (self.syncs > 0).then(|| Fidelity {
            syncs: self.syncs,
            equal: self.equal as f64 / self.syncs as f64,
            mean_absolute_difference: self.difference as f64 / self.syncs as f64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fidelity_counts_the_syncs_with_an_observation() {
        let fidelity = Fidelity::of(
            &[2, 3, 4, 4, 5],
            &[Some(2), Some(3), None, Some(6), Some(5)],
        );
        assert_eq!(
            fidelity,
            Some(Fidelity {
                syncs: 4,
                equal: 0.75,
                mean_absolute_difference: 0.5
            })
        );
        assert_eq!(Fidelity::of(&[1, 2], &[None, None]), None);
    }
}
