//! Resolved settings: which rules run at which severity, the cluster the
//! objects are for ([`Cluster`]), and the thresholds of the rules that have them.
//!
//! The YAML configuration file is read by [`crate::config`]; this module holds
//! the result and the parsing of the small command-line values.

use std::collections::HashMap;
use std::str::FromStr;

use crate::cluster::{Cluster, KubeVersion, Millis};
use crate::defaults::NamespacedDefaults;
use crate::diagnostic::Severity;
use crate::registry::{Category, Rule};

/// A rule's configured level: off, or on at a severity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// The rule does not run.
    Off,
    /// The rule runs and reports at this severity.
    On(Severity),
}

/// A rule level that is not one.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid rule level `{0}`: expected off, error, warning or info")]
pub struct LevelError(pub String);

impl FromStr for Level {
    type Err = LevelError;

    fn from_str(s: &str) -> Result<Self, LevelError> {
        match s {
            "off" => Ok(Level::Off),
            "error" => Ok(Level::On(Severity::Error)),
            "warning" => Ok(Level::On(Severity::Warning)),
            "info" => Ok(Level::On(Severity::Info)),
            _ => Err(LevelError(s.to_owned())),
        }
    }
}

/// Everything the rules need to know besides the objects.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The cluster the objects are for.
    pub cluster: Cluster,
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
    /// The behavior HPAs run with where they leave it unset, per namespace:
    /// what `implicit-behavior` writes out.
    pub behavior_defaults: NamespacedDefaults,
    /// The configured level of each rule by name; a rule not in it keeps
    /// its default.
    levels: HashMap<&'static str, Level>,
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
            cluster: Cluster::new(kube_version),
            slow_scale_up_threshold: 600_000,
            live: false,
            now: None,
            pinned_threshold: 24 * 3_600_000,
            far_below_target: 50,
            behavior_defaults: NamespacedDefaults::default(),
            levels: HashMap::new(),
        }
    }

    /// The severity a rule reports at, `None` when it is off. Pedantic rules are
    /// off unless configured, and so are `live` rules on manifests; on live
    /// objects, the rules about manifests are off whatever is configured.
    pub fn severity(&self, rule: &Rule) -> Option<Severity> {
        if self.live && rule.manifests_only {
            return None;
        }
        match self.levels.get(rule.name).copied() {
            Some(Level::Off) => None,
            Some(Level::On(severity)) => Some(severity),
            None if rule.category == Category::Pedantic => None,
            None if rule.category == Category::Live && !self.live => None,
            None => Some(rule.severity),
        }
    }

    /// Whether the configuration pinned this rule's severity (a rule may then
    /// not raise the severity of a finding on its own).
    pub fn is_pinned(&self, rule: &Rule) -> bool {
        matches!(self.levels.get(rule.name), Some(Level::On(_)))
    }

    /// Sets one rule's level.
    pub fn set_level(&mut self, rule: &'static Rule, level: Level) {
        self.levels.insert(rule.name, level);
    }

    /// Turns a rule on at its default severity unless it already runs.
    pub fn enable(&mut self, rule: &'static Rule) {
        if self.severity(rule).is_none() {
            if matches!(rule.category, Category::Pedantic | Category::Live) {
                self.levels.insert(rule.name, Level::On(rule.severity));
            } else {
                self.levels.remove(rule.name);
            }
        }
    }
}
