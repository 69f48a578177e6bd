//! The HPAs the `behavior` and `simulate` commands work on: read with the
//! linter's input pipeline, picked with `--hpa`, and checked to be objects
//! the API server accepts (the controller never sees the others: they are
//! refused with the server's errors).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Result, bail};
use clap::Args;
use hpa_lint_rules::controller::{ControllerFlags, Millis, parse_duration};
use hpa_lint_rules::index::Index;
use hpa_lint_rules::model::hpa::Hpa;
use hpa_lint_rules::model::workload::{DefaultRequests, TargetKind};
use hpa_lint_rules::rules::deprecated_api_version::not_served;
use hpa_lint_rules::rules::{is_rejection, target_not_scalable};
use hpa_lint_rules::{Lookup, Object, Operation, Settings, lint};

use crate::options::LintArgs;
use crate::settings;

use crate::{check, input};

/// Which manifests to read, and the cluster they are for.
#[derive(Debug, Args)]
pub struct InputArgs {
    /// Files and directories with the HPAs and their targets; `-` reads
    /// standard input.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,

    #[command(flatten)]
    pub pick: PickArgs,
}

/// Which HPA, and the cluster the manifests are for.
#[derive(Debug, Args)]
pub struct PickArgs {
    /// The HPA to use, as `[NAMESPACE/]NAME` (default: every HPA, or the only one).
    #[arg(long, value_name = "[NAMESPACE/]NAME")]
    pub hpa: Option<String>,

    /// Kubernetes version the manifests are for (1.23 to 1.37) [default: 1.36].
    #[arg(long, value_name = "VERSION", env = "HPA_LINT_KUBE_VERSION")]
    pub kube_version: Option<String>,

    /// Feature gate overrides, e.g. `HPAConfigurableTolerance=false`.
    #[arg(long, value_name = "GATES")]
    pub feature_gates: Option<String>,

    /// Namespace of objects that name none [default: default].
    #[arg(long, short = 'n')]
    pub namespace: Option<String>,

    /// Configuration file (default: the nearest `.hpa-lint.yaml`).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Ignore any configuration file.
    #[arg(long, conflicts_with = "config")]
    pub isolated: bool,
}

/// The kube-controller-manager flags, without their
/// `horizontal-pod-autoscaler-` prefix; durations as `90s`, `5m` or seconds.
#[derive(Debug, Args)]
pub struct ControllerArgs {
    /// `--horizontal-pod-autoscaler-sync-period`.
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = parse_duration)]
    pub sync_period: Millis,
    /// `--horizontal-pod-autoscaler-tolerance`.
    #[arg(long, value_name = "RATIO", default_value_t = 0.1)]
    pub tolerance: f64,
    /// `--horizontal-pod-autoscaler-downscale-stabilization`.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration)]
    pub downscale_stabilization: Millis,
    /// `--horizontal-pod-autoscaler-cpu-initialization-period`.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration)]
    pub cpu_initialization_period: Millis,
    /// `--horizontal-pod-autoscaler-initial-readiness-delay`.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub initial_readiness_delay: Millis,
}

impl ControllerArgs {
    pub fn flags(&self) -> Result<ControllerFlags> {
        if self.sync_period <= 0 {
            bail!("--sync-period must be longer than 0s");
        }
        if !(self.tolerance.is_finite() && self.tolerance >= 0.0) {
            bail!("--tolerance must be a number of at least 0");
        }
        let mut flags = ControllerFlags::default();
        flags.sync_period = self.sync_period;
        flags.tolerance = self.tolerance;
        flags.downscale_stabilization = self.downscale_stabilization;
        flags.cpu_initialization_period = self.cpu_initialization_period;
        flags.initial_readiness_delay = self.initial_readiness_delay;
        Ok(flags)
    }
}

/// One HPA of the input.
pub struct Found {
    pub object: Arc<Object>,
    pub hpa: Hpa,
    pub file: String,
    /// Its scale target, when the input has it.
    pub target: Option<Arc<Object>>,
    /// What the LimitRanges of the input give the target's containers that
    /// request nothing.
    pub default_requests: DefaultRequests,
}

impl Found {
    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.object.key.namespace, self.object.key.name)
    }
}

/// An HPA of the input whose scaling nothing can say: the API server would
/// reject it, or the controller cannot scale its target.
pub struct Refused {
    /// `namespace/name`.
    pub key: String,
    pub why: Refusal,
    /// The API server's errors, or the target's, as `field: message`.
    pub errors: Vec<String>,
    pub object: Arc<Object>,
    pub file: String,
}

/// Why an HPA is refused.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The controller never sees it.
    ServerRejects,
    /// The controller sees it, and fails on its target at every sync
    /// (`FailedGetScale`): it never changes the replicas.
    CannotScale,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let why = match self.why {
            Refusal::ServerRejects => "the API server would reject it (no controller runs it)",
            Refusal::CannotScale => {
                "the controller cannot scale its target (every sync fails with FailedGetScale)"
            }
        };
        write!(f, "HorizontalPodAutoscaler {}: refused, {why}:", self.key)?;
        for error in &self.errors {
            write!(f, "\n  {error}")?;
        }
        Ok(())
    }
}

/// The HPAs `--hpa` picks (every one without it), in the order of the input
/// (its files as given, each file's documents in order): those the API server
/// accepts, and those it would reject.
pub struct Selection {
    pub found: Vec<Found>,
    pub refused: Vec<Refused>,
    /// Every picked HPA's `namespace/name`, accepted or not, in input order.
    pub keys: Vec<String>,
}

/// Reads the input and returns the HPAs `--hpa` picks with the settings.
/// Unreadable input is an error, and so is an input without such an HPA.
pub fn read(args: &InputArgs) -> Result<(Selection, Settings)> {
    let (settings, ignore_paths, config_dir) = resolve(&args.pick)?;
    let (sources, errors) = input::collect(
        &args.paths,
        &[],
        &ignore_paths,
        &config_dir,
        input::Order::Given,
    )
    .map_err(anyhow::Error::msg)?;
    if let Some(error) = errors.first() {
        bail!("{error}");
    }
    let selection = select(&sources, &settings, args.pick.hpa.as_deref())?;
    if selection.found.is_empty() && selection.refused.is_empty() {
        match &args.pick.hpa {
            Some(name) => bail!("no HorizontalPodAutoscaler `{name}` in the input"),
            None => bail!("no HorizontalPodAutoscaler in the input"),
        }
    }
    Ok((selection, settings))
}

/// The rule settings of `args`, with the configuration's `ignorePaths` and
/// the directory they are relative to.
pub fn resolve(args: &PickArgs) -> Result<(Settings, Vec<String>, PathBuf)> {
    let lint_args = LintArgs {
        config: args.config.clone(),
        isolated: args.isolated,
        kube_version: args.kube_version.clone(),
        feature_gates: args.feature_gates.clone(),
        ..LintArgs::default()
    };
    let resolved = settings::resolve(&lint_args, args.namespace.as_deref(), None)?;
    Ok((
        resolved.settings,
        resolved.ignore_paths,
        resolved.config_dir,
    ))
}

/// The HPAs of `sources` that `wanted` (`[NAMESPACE/]NAME`) picks, every one
/// without it, in input order. Unreadable input is an error.
pub fn select(
    sources: &[input::SourceFile],
    settings: &Settings,
    wanted: Option<&str>,
) -> Result<Selection> {
    let inventory = check::read(sources, settings)?;
    if let Some(error) = inventory.input_errors.first() {
        bail!("{error}");
    }
    let wanted = wanted.map(|h| match h.split_once('/') {
        Some((namespace, name)) => (Some(namespace), name),
        None => (None, h),
    });
    let index = &inventory.index;
    let mut selection = Selection {
        found: Vec::new(),
        refused: Vec::new(),
        keys: Vec::new(),
    };
    for (object, file) in inventory.hpas(sources, settings)? {
        let Some(hpa) = Hpa::decode(&object, &settings.cluster, None) else {
            continue;
        };
        let key = &object.key;
        if wanted.is_some_and(|(namespace, name)| {
            name != key.name || namespace.is_some_and(|n| n != key.namespace)
        }) {
            continue;
        }
        let findings = lint(&object, Operation::Create, index, settings);
        let mut errors = inventory.document_errors(object.origin);
        errors.extend(
            findings
                .iter()
                .filter(|d| is_rejection(d))
                .map(|d| d.field_message()),
        );
        selection
            .keys
            .push(format!("{}/{}", key.namespace, key.name));
        if !hpa.served {
            let kube = settings.cluster.kube_version;
            errors.insert(
                0,
                format!("apiVersion: {}", not_served(&key.api_version, &hpa, kube)),
            );
        }
        if !hpa.decodable && errors.is_empty() {
            errors.push("the object does not decode as a HorizontalPodAutoscaler".to_owned());
        }
        let mut why = Refusal::ServerRejects;
        let target = hpa.target(&key.namespace);
        let classified = TargetKind::classify(&settings.cluster, &target.group, &target.kind);
        if errors.is_empty() && matches!(classified, TargetKind::NotScalable(_)) {
            why = Refusal::CannotScale;
            errors = findings
                .iter()
                .filter(|d| d.rule.name == target_not_scalable::RULE.name)
                .map(|d| d.field_message())
                .collect();
            if errors.is_empty() {
                errors.push(format!(
                    "spec.scaleTargetRef: {} `{}` cannot be scaled (`hpa-lint explain target-not-scalable`)",
                    target.kind, target.name
                ));
            }
        }
        if !errors.is_empty() {
            selection.refused.push(Refused {
                key: format!("{}/{}", key.namespace, key.name),
                why,
                errors,
                object: Arc::new(object),
                file: file.to_owned(),
            });
            continue;
        }
        let default_requests = index
            .default_requests(&target.namespace)
            .unwrap_or_default();
        let target = match index.get(&target) {
            Lookup::Found(target) => Some(target),
            _ => None,
        };
        selection.found.push(Found {
            object: Arc::new(object),
            hpa,
            file: file.to_owned(),
            target,
            default_requests,
        });
    }
    Ok(selection)
}

/// The one HPA `--hpa` picks, or the only one of the input: an error when
/// there are several (valid or not), or when the API server would reject it.
pub fn read_one(args: &InputArgs) -> Result<(Found, Settings)> {
    let (mut selection, settings) = read(args)?;
    let count = selection.keys.len();
    let first = selection.keys.first();
    if let Some(first) =
        first.filter(|&first| count > 1 && selection.keys.iter().all(|key| key == first))
    {
        // `--hpa` cannot tell them apart.
        bail!(
            "{count} HorizontalPodAutoscalers in the input are {first}: give only the file of the one to use (kubectl apply keeps the last one applied)"
        );
    }
    if count > 1 {
        bail!(
            "{count} HorizontalPodAutoscalers in the input ({}); pick one with --hpa",
            selection.keys.join(", ")
        );
    }
    if let Some(refused) = selection.refused.pop() {
        bail!("{refused}");
    }
    let found = selection.found.pop().expect("one HPA");
    Ok((found, settings))
}
