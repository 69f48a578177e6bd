//! Resolved settings: which rules run at which severity, and the cluster the
//! manifests are meant for (Kubernetes version, feature gates, default namespace).
//!
//! The YAML configuration file is read by [`crate::config`]; this module holds
//! the result and the parsing of the small command-line values.

use std::fmt;
use std::str::FromStr;

use crate::controller::Millis;
use crate::diagnostic::Severity;
use crate::registry::{self, Category, Rule};
use crate::rules::{deprecated_api_version, target_replicas_conflict};

/// Oldest and newest Kubernetes minor versions whose rules we know.
pub const SUPPORTED_MINORS: std::ops::RangeInclusive<u32> = 23..=37;
/// The default `--kube-version`.
pub const DEFAULT_MINOR: u32 = 36;

/// A Kubernetes release `1.<minor>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct KubeVersion {
    minor: u32,
}

impl KubeVersion {
    /// `1.<minor>`.
    pub const fn new(minor: u32) -> Self {
        Self { minor }
    }

    /// The minor version.
    pub fn minor(self) -> u32 {
        self.minor
    }

    /// Whether this is `1.<minor>` or newer.
    pub fn at_least(self, minor: u32) -> bool {
        self.minor >= minor
    }
}

impl Default for KubeVersion {
    fn default() -> Self {
        Self::new(DEFAULT_MINOR)
    }
}

impl fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "1.{}", self.minor)
    }
}

impl FromStr for KubeVersion {
    type Err = String;

    /// Accepts `1.31`, `v1.31` and `1.31.2`.
    fn from_str(s: &str) -> Result<Self, String> {
        let error = || {
            format!(
                "invalid Kubernetes version `{s}`: expected 1.{}..1.{} such as `1.{DEFAULT_MINOR}`",
                SUPPORTED_MINORS.start(),
                SUPPORTED_MINORS.end()
            )
        };
        let mut parts = s.trim().trim_start_matches('v').split('.');
        let (Some("1"), Some(minor)) = (parts.next(), parts.next()) else {
            return Err(error());
        };
        let minor: u32 = minor.parse().map_err(|_| error())?;
        if parts
            .next()
            .is_some_and(|patch| patch.parse::<u32>().is_err())
            || !SUPPORTED_MINORS.contains(&minor)
        {
            return Err(error());
        }
        Ok(Self::new(minor))
    }
}

/// The feature gates that change how the API server treats HPAs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeatureGates {
    /// `HPAScaleToZero`: allows `minReplicas: 0` (alpha, off in every release).
    pub scale_to_zero: bool,
    /// `HPAConfigurableTolerance`: keeps `behavior.*.tolerance` (1.33 alpha, 1.35 beta on).
    pub configurable_tolerance: bool,
    /// `HPAContainerMetrics`: keeps `containerResource` metrics (1.27 beta on, GA 1.30).
    pub container_metrics: bool,
}

/// Gate names accepted by `--feature-gates` and `featureGates:`.
pub const FEATURE_GATES: [&str; 3] = [
    "HPAScaleToZero",
    "HPAConfigurableTolerance",
    "HPAContainerMetrics",
];

impl FeatureGates {
    /// The defaults of a release.
    pub fn defaults(version: KubeVersion) -> Self {
        Self {
            scale_to_zero: false,
            configurable_tolerance: version.at_least(35),
            container_metrics: version.at_least(27),
        }
    }

    /// Sets one gate by name.
    pub fn set(&mut self, name: &str, enabled: bool) -> Result<(), String> {
        let gate = match name {
            "HPAScaleToZero" => &mut self.scale_to_zero,
            "HPAConfigurableTolerance" => &mut self.configurable_tolerance,
            "HPAContainerMetrics" => &mut self.container_metrics,
            _ => {
                return Err(format!(
                    "unknown feature gate `{name}`: expected one of {}",
                    FEATURE_GATES.join(", ")
                ));
            }
        };
        *gate = enabled;
        Ok(())
    }

    /// Applies `Name=true,Other=false` overrides.
    pub fn apply_overrides(&mut self, list: &str) -> Result<(), String> {
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let Some((name, value)) = item.split_once('=') else {
                return Err(format!(
                    "invalid feature gate `{item}`: expected Name=true|false"
                ));
            };
            let enabled = value
                .trim()
                .parse()
                .map_err(|_| format!("invalid value for feature gate `{name}`: `{value}`"))?;
            self.set(name.trim(), enabled)?;
        }
        Ok(())
    }
}

impl Default for FeatureGates {
    fn default() -> Self {
        Self::defaults(KubeVersion::default())
    }
}

/// A rule's configured level: off, or on at a severity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// The rule does not run.
    Off,
    /// The rule runs and reports at this severity.
    On(Severity),
}

impl FromStr for Level {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "off" => Ok(Level::Off),
            "error" => Ok(Level::On(Severity::Error)),
            "warning" => Ok(Level::On(Severity::Warning)),
            "info" => Ok(Level::On(Severity::Info)),
            _ => Err(format!(
                "invalid rule level `{s}`: expected off, error, warning or info"
            )),
        }
    }
}

/// A kind known to have a `/scale` subresource, matched on group and kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupKind {
    /// API group.
    pub group: String,
    /// Kind.
    pub kind: String,
}

/// Everything the rules need to know besides the objects.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The Kubernetes release the manifests are for.
    pub kube_version: KubeVersion,
    /// Feature gates of that release (defaults plus overrides).
    pub feature_gates: FeatureGates,
    /// Namespace of objects that do not name one.
    pub default_namespace: String,
    /// Custom kinds with a `/scale` subresource (besides the built-in list).
    pub scalable_kinds: Vec<GroupKind>,
    /// `slow-scale-up` reports an HPA whose fastest scale-up from
    /// `minReplicas` to `maxReplicas` takes longer (milliseconds; 10 min).
    pub slow_scale_up_threshold: i64,
    /// The objects were read from a cluster (`kubectl hpa-lint`), not from
    /// manifests: the `live` rules run unless configured off, and the rules
    /// about manifests do not run ([`Settings::is_manifest_only`]).
    pub live: bool,
    /// When the objects were read (milliseconds since the Unix epoch): what
    /// the `live` rules measure how long a condition has held against. Rules
    /// never read the clock; without it they do not judge durations.
    pub now: Option<Millis>,
    /// `pinned-at-max-replicas` and `overprovisioned-min-replicas` report an
    /// HPA held at a bound for longer than this (milliseconds; 24 h).
    pub pinned_threshold: Millis,
    /// `overprovisioned-min-replicas`: every metric at or below this percentage
    /// of its target (50).
    pub far_below_target: u32,
    /// Configured level of each rule, indexed like [`registry::ALL`]; `None`
    /// keeps the rule's default.
    levels: Vec<Option<Level>>,
}

impl Default for Settings {
    fn default() -> Self {
        Self::new(KubeVersion::default())
    }
}

impl Settings {
    /// Default settings for a Kubernetes release: every rule outside the pedantic
    /// category on at its default severity.
    pub fn new(kube_version: KubeVersion) -> Self {
        Self {
            kube_version,
            feature_gates: FeatureGates::defaults(kube_version),
            default_namespace: "default".to_owned(),
            scalable_kinds: Vec::new(),
            slow_scale_up_threshold: 600_000,
            live: false,
            now: None,
            pinned_threshold: 24 * 3_600_000,
            far_below_target: 50,
            levels: vec![None; registry::ALL.len()],
        }
    }

    /// The severity a rule reports at, `None` when it is off. Pedantic rules are
    /// off unless configured, and so are `live` rules on manifests; on live
    /// objects, the rules about manifests are off whatever is configured.
    pub fn severity(&self, rule: &Rule) -> Option<Severity> {
        if self.live && Self::is_manifest_only(rule) {
            return None;
        }
        match self.levels[registry::position(rule)] {
            Some(Level::Off) => None,
            Some(Level::On(severity)) => Some(severity),
            None if rule.category == Category::Pedantic => None,
            None if rule.category == Category::Live && !self.live => None,
            None => Some(rule.severity),
        }
    }

    /// Rules about manifests rather than live objects: the input rules; every
    /// live workload has `spec.replicas` (`target-replicas-conflict`); and
    /// objects are read at the version asked for (`deprecated-api-version`).
    pub fn is_manifest_only(rule: &Rule) -> bool {
        rule.category == Category::Input
            || *rule == target_replicas_conflict::RULE
            || *rule == deprecated_api_version::RULE
    }

    /// Whether the configuration pinned this rule's severity (a rule may then
    /// not raise the severity of a finding on its own).
    pub fn is_pinned(&self, rule: &Rule) -> bool {
        matches!(self.levels[registry::position(rule)], Some(Level::On(_)))
    }

    /// Sets one rule's level.
    pub fn set_level(&mut self, rule: &Rule, level: Level) {
        self.levels[registry::position(rule)] = Some(level);
    }

    /// Turns a rule on at its default severity unless it already runs.
    pub fn enable(&mut self, rule: &Rule) {
        if self.severity(rule).is_none() {
            let i = registry::position(rule);
            self.levels[i] = if matches!(rule.category, Category::Pedantic | Category::Live) {
                Some(Level::On(rule.severity))
            } else {
                None
            };
        }
    }

    /// Keeps only the rules matched by `selectors` (`--select`).
    pub fn select(&mut self, selectors: &[String]) -> Result<(), String> {
        let mut keep = vec![false; registry::ALL.len()];
        for selector in selectors {
            for rule in registry::select(selector)? {
                keep[registry::position(rule)] = true;
            }
        }
        for (i, rule) in registry::ALL.iter().enumerate() {
            if keep[i] {
                self.enable(rule);
            } else {
                self.levels[i] = Some(Level::Off);
            }
        }
        Ok(())
    }

    /// Turns off the rules matched by `selectors` (`--ignore`).
    pub fn ignore(&mut self, selectors: &[String]) -> Result<(), String> {
        for selector in selectors {
            for rule in registry::select(selector)? {
                self.set_level(rule, Level::Off);
            }
        }
        Ok(())
    }

    /// Whether a kind is one of the configured scalable custom kinds.
    pub fn is_custom_scalable(&self, group: &str, kind: &str) -> bool {
        self.scalable_kinds
            .iter()
            .any(|k| k.group == group && k.kind == kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_versions() {
        assert_eq!("1.31".parse::<KubeVersion>(), Ok(KubeVersion::new(31)));
        assert_eq!("v1.23.4".parse::<KubeVersion>(), Ok(KubeVersion::new(23)));
        assert!("1.22".parse::<KubeVersion>().is_err());
        assert!("1.38".parse::<KubeVersion>().is_err());
        assert!("2.1".parse::<KubeVersion>().is_err());
        assert!("1.x".parse::<KubeVersion>().is_err());
    }

    #[test]
    fn live_objects_run_the_live_rules_and_not_the_manifest_ones() {
        let rule = |name| registry::by_name(name).unwrap();
        let mut settings = Settings::default();
        assert_eq!(settings.severity(rule("scaling-inactive")), None);
        assert!(
            settings
                .severity(rule("target-replicas-conflict"))
                .is_some()
        );
        settings.live = true;
        assert_eq!(
            settings.severity(rule("scaling-inactive")),
            Some(Severity::Error)
        );
        for manifest_only in [
            "target-replicas-conflict",
            "deprecated-api-version",
            "invalid-yaml",
        ] {
            assert_eq!(
                settings.severity(rule(manifest_only)),
                None,
                "{manifest_only}"
            );
        }
        // Configured off stays off, selected or not.
        settings.set_level(rule("scaling-inactive"), Level::Off);
        assert_eq!(settings.severity(rule("scaling-inactive")), None);
        settings
            .select(&["target-replicas-conflict".to_owned()])
            .unwrap();
        assert_eq!(settings.severity(rule("target-replicas-conflict")), None);
        // On manifests, `--select live` turns them on.
        let mut manifests = Settings::default();
        manifests.select(&["live".to_owned()]).unwrap();
        assert_eq!(
            manifests.severity(rule("pinned-at-max-replicas")),
            Some(Severity::Info)
        );
    }

    #[test]
    fn gate_defaults_follow_releases() {
        let gates = FeatureGates::defaults(KubeVersion::new(34));
        assert!(!gates.configurable_tolerance && gates.container_metrics && !gates.scale_to_zero);
        assert!(FeatureGates::defaults(KubeVersion::new(35)).configurable_tolerance);
        assert!(!FeatureGates::defaults(KubeVersion::new(26)).container_metrics);
    }

    #[test]
    fn applies_gate_overrides() {
        let mut gates = FeatureGates::default();
        gates
            .apply_overrides("HPAScaleToZero=true, HPAConfigurableTolerance=false")
            .unwrap();
        assert!(gates.scale_to_zero && !gates.configurable_tolerance);
        assert!(
            gates
                .apply_overrides("Nope=true")
                .unwrap_err()
                .contains("unknown feature gate")
        );
        assert!(gates.apply_overrides("HPAScaleToZero").is_err());
    }
}
