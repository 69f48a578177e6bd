//! `kubectl hpa-lint replay [NAMESPACE/]NAME --prometheus URL --since 7d`:
//! the live HPA and its target, read from the cluster (`get`, as the API
//! server serves them: defaulted), simulated on the demand Prometheus
//! recorded. From the objects on it is `hpa-lint simulate --prometheus`:
//! the same fetch, simulation and outputs, from the same library code.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use clap::Args;
use hpa_lint::compare::{self, CompareFormat, Demand};
use hpa_lint::hpas::{ControllerArgs, Found};
use hpa_lint::options::LintArgs;
use hpa_lint::prometheus::replay::ReplayArgs as PrometheusArgs;
use hpa_lint::prometheus::time::{self, TimeArg, UnixMillis, parse_time_arg};
use hpa_lint::settings::{self, Resolved};
use hpa_lint::simulate::{self, ModelArgs, OutputArgs, SimulateFormat};
use hpa_lint_rules::Settings;
use hpa_lint_rules::cluster::GroupKind;
use hpa_lint_rules::controller::Autoscaler;
use hpa_lint_rules::model::hpa::Hpa;
use hpa_lint_rules::model::status::parse_time;
use hpa_lint_rules::model::workload::DefaultRequests;
use hpa_lint_rules::object::{Object, ObjectRef, Origin};
use hpa_lint_rules::reads::OBJECT_FIELDS;
use serde_json::Value;

use crate::args::Args as AuditArgs;
use crate::cluster::{Cluster, Failure, Resource};
use crate::inventory::built_in;
use crate::progress::Progress;

#[derive(Debug, Args)]
#[command(
    mut_arg("prometheus", |a| a.required(true)),
    mut_arg("since", |a| a.required(true))
)]
pub struct LiveReplayArgs {
    /// The HPA, as `NAMESPACE/NAME`, or `NAME` in the namespace of `-n`.
    #[arg(value_name = "[NAMESPACE/]NAME")]
    pub hpa: String,
    /// The namespace of an HPA named without one [default: the context's].
    #[arg(short = 'n', long)]
    pub namespace: Option<String>,
    /// A proposed spec of the HPA: a file with one HPA (and perhaps its
    /// target), compared with the live one on the same demand, as
    /// `hpa-lint compare LIVE PROPOSED` does.
    #[arg(long, value_name = "PROPOSED.yaml")]
    pub with: Option<PathBuf>,
    #[command(flatten)]
    pub controller: ControllerArgs,
    #[command(flatten)]
    pub prometheus: PrometheusArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    /// The end: an RFC 3339 time, or a duration from the start [default: now].
    #[arg(long, value_name = "DURATION|TIME", value_parser = parse_time_arg)]
    pub until: Option<TimeArg>,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Kubernetes version the controller runs (1.23 to 1.37) [default: the cluster's].
    #[arg(long, value_name = "VERSION", env = "HPA_LINT_KUBE_VERSION")]
    pub kube_version: Option<String>,
    /// Feature gate overrides, e.g. `HPAConfigurableTolerance=false`.
    #[arg(long, value_name = "GATES")]
    pub feature_gates: Option<String>,
    /// Configuration file (default: the nearest `.hpa-lint.yaml`).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Ignore any configuration file.
    #[arg(long, conflicts_with = "config")]
    pub isolated: bool,
}

/// Reads the live HPA and its target, then replays it (and, with `--with`,
/// compares the proposed spec with it): the outputs go to standard output
/// (and the plot).
pub fn run(
    runtime: &tokio::runtime::Runtime,
    args: &AuditArgs,
    replay: &LiveReplayArgs,
) -> Result<u8> {
    // The controller's flags are checked before anything is read.
    let flags = replay.controller.flags()?;
    let (found, resolved) = runtime.block_on(read(args, replay))?;
    let settings = &resolved.settings;
    let out = hpa_lint::report::stdout();
    if let Some(path) = &replay.with {
        let ignore = (
            resolved.ignore_paths.as_slice(),
            resolved.config_dir.as_path(),
        );
        let several = "give a file with one";
        let proposed = compare::read_side(path, settings, None, several, ignore)?;
        compare::note_requests(&found, &proposed, &flags, settings, &replay.model.requests);
        let [live, proposed] =
            compare::sides(&found, &proposed, &flags, settings, &replay.model.requests)?;
        let sides = [&live, &proposed];
        let demand = Demand::history(&[], &replay.prometheus, &sides, replay.until)?;
        note_spec_writes(&found, demand.start);
        let output = compare::OutputArgs {
            format: match replay.output.format {
                SimulateFormat::Text => CompareFormat::Text,
                SimulateFormat::Json => CompareFormat::Json,
                SimulateFormat::Csv => CompareFormat::Csv,
            },
            plot: replay.output.plot.clone(),
        };
        compare::write(sides, demand, &replay.model, &output, out)?;
        return Ok(0);
    }
    let autoscaler = Autoscaler::new(&found.hpa, flags, &settings.cluster);
    let source = simulate::source::load(
        &[],
        &replay.prometheus,
        replay.until,
        &found,
        &[&autoscaler],
        &simulate::trace::MetricColumns::of(&[&autoscaler]),
    )?;
    note_spec_writes(&found, source.start);
    simulate::simulate(
        &found,
        &autoscaler,
        &source,
        &replay.model,
        &replay.output,
        out,
    )?;
    Ok(0)
}

/// Says on standard error when the HPA's spec was written after the
/// replay's start: the replay runs today's spec over the whole range.
fn note_spec_writes(found: &Found, start: Option<UnixMillis>) {
    let Some(start) = start else { return };
    for (manager, at) in spec_writes_since(&found.object, start) {
        hpa_lint::tell!(
            "kubectl hpa-lint: note: `{}` wrote the HPA's spec at {at}, after the replay's start ({}): the replay runs the spec as it is now over the whole range",
            hpa_lint::emit::escaped(&manager),
            time::format(start)
        );
    }
}

/// `[NAMESPACE/]NAME` as (namespace, name), the namespace from `-n` or the
/// context when the argument names none.
fn parse_name(replay: &LiveReplayArgs, context_namespace: &str) -> Result<(String, String)> {
    let (namespace, name) = match replay.hpa.split_once('/') {
        Some((namespace, name)) => {
            if replay.namespace.as_deref().is_some_and(|n| n != namespace) {
                bail!(
                    "`{}` names namespace `{namespace}`, -n another: give one",
                    replay.hpa
                );
            }
            (namespace, name)
        }
        None => (
            replay.namespace.as_deref().unwrap_or(context_namespace),
            replay.hpa.as_str(),
        ),
    };
    if namespace.is_empty() || name.is_empty() || name.contains('/') {
        bail!(
            "`{}`: expected the HPA as NAMESPACE/NAME or NAME, e.g. shop/web",
            replay.hpa
        );
    }
    Ok((namespace.to_owned(), name.to_owned()))
}

/// The live HPA with its target, and the settings of the cluster's release
/// (objects of a `--with` file that name no namespace are in the HPA's).
async fn read(args: &AuditArgs, replay: &LiveReplayArgs) -> Result<(Found, Resolved)> {
    let cluster = Cluster::connect(args, Progress::new(true)).await?;
    let (namespace, name) = parse_name(replay, &cluster.namespace)?;
    let version = cluster.version().await?;
    let lint = LintArgs {
        config: replay.config.clone(),
        isolated: replay.isolated,
        kube_version: replay.kube_version.clone(),
        feature_gates: replay.feature_gates.clone(),
        ..LintArgs::default()
    };
    let mut resolved = settings::resolve(&lint, Some(&namespace), version)?;
    let settings = &mut resolved.settings;
    let hpas = Resource::new(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        true,
    );
    let shown = format!("HorizontalPodAutoscaler {namespace}/{name}");
    let value = match cluster.get_object(&hpas, &namespace, &name).await {
        Ok(value) => value,
        Err(Failure::Absent) => bail!("{shown} not found (context `{}`)", cluster.context),
        Err(failure) => bail!("cannot get {shown}: {}", refused(&failure, &hpas)),
    };
    let object = Object::new(served(value), Origin::default(), &namespace)
        .with_context(|| format!("{shown}: the server's answer is not an object"))?;
    let hpa = Hpa::decode(&object, &settings.cluster, None)
        .filter(|hpa| hpa.decodable)
        .with_context(|| format!("{shown}: the server's answer does not decode as an HPA"))?;
    let target = hpa.target(&namespace);
    let resource = target_resource(&cluster, &target, settings).await?;
    let shown_target = format!("the target {} {namespace}/{}", target.kind, target.name);
    let target = match cluster
        .get_object(&resource, &namespace, &target.name)
        .await
    {
        Ok(value) => Object::new(served(value), Origin::default(), &namespace)
            .with_context(|| format!("{shown_target}: the server's answer is not an object"))?,
        Err(Failure::Absent) => bail!(
            "{shown_target} of {shown} is not found: the controller cannot scale it, so there is nothing to replay"
        ),
        Err(failure) => bail!(
            "cannot get {shown_target}: {}",
            refused(&failure, &resource)
        ),
    };
    // Containers that request nothing get what the namespace's LimitRanges
    // give; without the right to list them, the replay goes on without.
    let ranges = Resource::new("v1", "LimitRange", "limitranges", true);
    let mut default_requests = DefaultRequests::default();
    let take = |value: Value| Some(value);
    match cluster
        .list(&ranges, Some(&namespace), None, &OBJECT_FIELDS, &take)
        .await
    {
        Ok((listed, _)) => listed.iter().for_each(|range| default_requests.add(range)),
        Err(failure) => hpa_lint::tell!(
            "kubectl hpa-lint: note: cannot list {ranges} in {namespace}: {failure}; containers without requests are taken to have none"
        ),
    }
    let found = Found {
        object: Arc::new(object),
        hpa,
        file: format!("context {}", cluster.context),
        target: Some(Arc::new(target)),
        default_requests,
    };
    Ok((found, resolved))
}

/// An object as the API server served it, without its `status`: the
/// simulation starts from the replicas observed at the replay's start, not
/// from today's. Its managed fields stay, to tell when the spec was written.
fn served(mut value: Value) -> Value {
    if let Some(object) = value.as_object_mut() {
        object.remove("status");
    }
    value
}

/// A failed `get`, with the permission it needs when the server refused it.
fn refused(failure: &Failure, resource: &Resource) -> String {
    match failure {
        Failure::Forbidden(message) => {
            format!("{message} (a replay needs `get` on {resource}: see docs/audit.md, RBAC)")
        }
        other => other.to_string(),
    }
}

/// The resource of the target's kind: built in, or found by discovery in
/// its group's preferred version (a custom kind with a `/scale`
/// subresource is then scalable for the rules, as in an audit).
async fn target_resource(
    cluster: &Cluster,
    target: &ObjectRef,
    settings: &mut Settings,
) -> Result<Resource> {
    if let Some(resource) = built_in(&target.group, &target.kind) {
        return Ok(resource);
    }
    let (group, kind) = (&target.group, &target.kind);
    let groups = cluster
        .groups()
        .await
        .map_err(|failure| anyhow::anyhow!("cannot read API discovery (/apis): {failure}"))?;
    let Some((_, version)) = groups.iter().find(|(name, _)| name == group) else {
        bail!(
            "the target's API group `{group}` is not served: the controller cannot scale a {kind}"
        );
    };
    match cluster.find_kind(group, version, kind).await {
        Ok(Some((resource, scalable))) => {
            if scalable && !settings.cluster.is_custom_scalable(group, kind) {
                settings.cluster.scalable_kinds.push(GroupKind {
                    group: group.clone(),
                    kind: kind.clone(),
                });
            }
            Ok(resource)
        }
        Ok(None) | Err(Failure::Absent) => {
            bail!("{group}/{version} serves no kind {kind}: the controller cannot scale it")
        }
        Err(failure) => bail!("cannot read API discovery of {group}/{version}: {failure}"),
    }
}

/// The writes of the HPA's spec after `start` that its managed fields
/// record, as (manager, time): each manager's last write of the fields it
/// owns under `spec` (not the status the controller writes). They cannot
/// tell what changed, only that something may have.
fn spec_writes_since(hpa: &Object, start: UnixMillis) -> Vec<(String, String)> {
    let entries = hpa
        .value
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array);
    entries
        .into_iter()
        .flatten()
        .filter(|entry| entry["subresource"].as_str().is_none_or(str::is_empty))
        .filter(|entry| entry.pointer("/fieldsV1/f:spec").is_some())
        .filter_map(|entry| {
            let at = entry["time"].as_str()?;
            let manager = entry["manager"].as_str().unwrap_or("an unnamed manager");
            (parse_time(at)? > start).then(|| (manager.to_owned(), at.to_owned()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn spec_writes_are_those_of_the_spec_after_the_start() {
        let hpa = Object::new(
            json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": "web", "namespace": "shop", "managedFields": [
                    {"manager": "kubectl", "operation": "Update", "time": "2025-01-01T12:00:00Z",
                     "fieldsV1": {"f:spec": {"f:maxReplicas": {}}}},
                    {"manager": "argocd", "operation": "Apply", "time": "2024-12-01T00:00:00Z",
                     "fieldsV1": {"f:spec": {"f:minReplicas": {}}}},
                    {"manager": "kube-controller-manager", "operation": "Update", "subresource": "status",
                     "time": "2025-01-02T00:00:00Z", "fieldsV1": {"f:status": {}}},
                    {"manager": "labeller", "operation": "Update", "time": "2025-01-02T00:00:00Z",
                     "fieldsV1": {"f:metadata": {"f:labels": {}}}}]}}),
            Origin::default(),
            "",
        )
        .unwrap();
        let start = parse_time("2025-01-01T00:00:00Z").unwrap();
        assert_eq!(
            spec_writes_since(&hpa, start),
            [("kubectl".to_owned(), "2025-01-01T12:00:00Z".to_owned())]
        );
        assert!(spec_writes_since(&hpa, start + 86_400_000).is_empty());
    }
}
