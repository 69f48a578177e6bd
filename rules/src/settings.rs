//! Resolved settings: which rules run at which severity, the cluster the
//! objects are for ([`Cluster`]), and the thresholds of the rules that have them.
//!
//! The YAML configuration file is read by [`crate::config`]; this module holds
//! the result and the parsing of the small command-line values.

use std::str::FromStr;

use crate::cluster::{Cluster, KubeVersion, Millis};
use crate::diagnostic::Severity;
use crate::registry::{self, Category, Rule};
use crate::rules::{deprecated_api_version, target_replicas_conflict};

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
            cluster: Cluster::new(kube_version),
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
