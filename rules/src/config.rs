//! The configuration file, `.hpa-lint.yaml`: one schema for the CLI and the webhook.
//!
//! ```yaml
//! kubeVersion: "1.31"
//! namespace: default
//! featureGates: {HPAScaleToZero: true}
//! rules:
//!   target-not-found: off
//!   min-equals-max: error
//! scalableKinds:
//!   - {apiVersion: example.com/v1, kind: Worker}
//! ignorePaths: ["charts/**", "vendor/"]
//! slowScaleUpThreshold: 10m
//! pinnedThreshold: 24h
//! farBelowTarget: 50%
//! ```
//!
//! Unknown keys, rule names, levels and gates are errors with their position.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde_saphyr::{MessageFormatter, Spanned, UserMessageFormatter};

use serde_json::{Value, json};

use crate::cluster::{GroupKind, KubeVersion};
use crate::context::Operation;
use crate::defaults::{BehaviorDefaults, DefaultsError, NamespacedDefaults, check_selector};
use crate::diagnostic::Severity;
use crate::index::MemoryIndex;
use crate::lint::lint;
use crate::object::{Object, Origin, group_of};
use crate::registry::{Category, FixAvailability, Rule};
use crate::rules::implicit_behavior;
use crate::settings::{Level, Settings};

/// The file's content.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Config {
    /// Kubernetes version the manifests are for.
    pub kube_version: Option<Spanned<String>>,
    /// Namespace of objects that name none.
    pub namespace: Option<String>,
    /// Feature gate overrides.
    #[serde(default)]
    pub feature_gates: BTreeMap<String, Spanned<bool>>,
    /// Per-rule level: `off`, `error`, `warning`, `info`.
    #[serde(default)]
    pub rules: BTreeMap<String, Spanned<String>>,
    /// Custom kinds with a `/scale` subresource.
    #[serde(default)]
    pub scalable_kinds: Vec<ScalableKind>,
    /// Globs of paths the CLI skips.
    #[serde(default)]
    pub ignore_paths: Vec<String>,
    /// `slow-scale-up`'s threshold, a duration such as `10m`.
    pub slow_scale_up_threshold: Option<Spanned<String>>,
    /// How long an HPA may sit at a bound before the `live` rules say so, a
    /// duration such as `24h`.
    pub pinned_threshold: Option<Spanned<String>>,
    /// `overprovisioned-min-replicas`: metrics at or below this share of
    /// their targets, a percentage such as `50%`.
    pub far_below_target: Option<Spanned<String>>,
    /// Settings of the admission webhook (the CLI ignores them).
    #[serde(default)]
    pub webhook: WebhookConfig,
}

/// What an admission finding does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AdmissionMode {
    /// Reject the request.
    Deny,
    /// Allow it, with a warning `kubectl` prints.
    Warn,
    /// Say nothing.
    Off,
}

/// The `webhook:` section.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WebhookConfig {
    /// `warn` turns every denial into a warning (audit mode); default `deny`.
    pub mode: Option<AdmissionMode>,
    /// Per-rule admission mode, overriding what the rule's severity implies
    /// (errors deny, warnings warn).
    #[serde(default)]
    pub rules: BTreeMap<String, Spanned<AdmissionMode>>,
    /// What error findings about a workload do when the workload itself is
    /// admitted (a Deployment update that an HPA scales): default `warn`.
    pub targets: Option<AdmissionMode>,
    /// Largest request body accepted, in bytes (default 3 MiB).
    pub max_body_bytes: Option<usize>,
    /// Namespaces whose objects the caches watch (default: all).
    #[serde(default)]
    pub watch_namespaces: Vec<String>,
    /// Behavior `/mutate` writes into HPAs, per namespace (and what
    /// `implicit-behavior` writes out): the first entry whose
    /// `namespaceSelector` matches the HPA's namespace wins; an entry without a
    /// selector matches every namespace. Default: the API server's defaults
    /// plus a 300 s scale-down window.
    #[serde(default)]
    pub defaults: Vec<BehaviorDefaultsConfig>,
    /// The rules whose fixes, unsafe ones included, `/mutate` applies (default:
    /// `[implicit-behavior]`; `[]` turns mutation off).
    pub mutate: Option<Vec<Spanned<String>>>,
}

/// One entry of `webhook.defaults`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BehaviorDefaultsConfig {
    /// A label selector on the namespace (`matchLabels`, `matchExpressions`).
    pub namespace_selector: Option<serde_json::Value>,
    /// A `spec.behavior` object: the fields it sets replace the built-in defaults.
    pub behavior: serde_json::Value,
}

/// A custom scalable kind.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScalableKind {
    /// `group/version` (the version is ignored).
    pub api_version: String,
    /// Kind.
    pub kind: String,
}

/// A configuration problem, with its position in the file when known.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct ConfigError {
    /// What is wrong.
    pub message: String,
    /// 1-based line and column.
    pub position: Option<(usize, usize)>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some((line, column)) => write!(f, "{line}:{column}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// Every problem found in a configuration's values, in file order (those
/// without a position last). Reading the file's structure stops at its first
/// error, which is then the only one.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigErrors(pub Vec<ConfigError>);

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}

impl From<ConfigError> for ConfigErrors {
    fn from(error: ConfigError) -> Self {
        Self(vec![error])
    }
}

impl ConfigErrors {
    /// The problems of several checks, in file order.
    pub fn merged(all: impl IntoIterator<Item = ConfigErrors>) -> Self {
        let mut errors: Vec<ConfigError> = all.into_iter().flat_map(|e| e.0).collect();
        // `None` sorts first: problems without a position go last.
        errors.sort_by_key(|e| (e.position.is_none(), e.position));
        Self(errors)
    }

    /// Each problem on its own line, after `prefix` (the file's name and a colon).
    pub fn lines(&self, prefix: &str) -> String {
        let lines: Vec<String> = self.0.iter().map(|e| format!("{prefix}{e}")).collect();
        lines.join("\n")
    }
}

/// The values of `results`, or every error among them in file order.
fn all_or_errors<T>(
    results: impl IntoIterator<Item = Result<T, ConfigError>>,
) -> Result<Vec<T>, ConfigErrors> {
    let (mut values, mut errors) = (Vec::new(), Vec::new());
    for result in results {
        match result {
            Ok(value) => values.push(value),
            Err(error) => errors.push(error),
        }
    }
    in_file_order(errors).map(|()| values)
}

/// Nothing, or `errors` in file order.
fn in_file_order(errors: Vec<ConfigError>) -> Result<(), ConfigErrors> {
    if errors.is_empty() {
        return Ok(());
    }
    Err(ConfigErrors::merged([ConfigErrors(errors)]))
}

fn at<T>(spanned: &Spanned<T>, message: impl fmt::Display) -> ConfigError {
    ConfigError {
        message: message.to_string(),
        position: Some((
            spanned.referenced.line() as usize,
            spanned.referenced.column() as usize,
        )),
    }
}

/// The rule named in a configuration key, or an error at the key's value.
fn known_rule<T>(
    name: &str,
    value: &Spanned<T>,
) -> Result<&'static crate::registry::Rule, ConfigError> {
    crate::rules::by_name(name).ok_or_else(|| {
        let hint = crate::suggest::did_you_mean(crate::rules::closest_name(name));
        at(value, format!("unknown rule `{name}`{hint}"))
    })
}

impl Config {
    /// Parses the file. An empty file is the default configuration.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        let options = serde_saphyr::options! { with_snippet: false };
        serde_saphyr::from_str_with_options(text, options).map_err(|error| ConfigError {
            // The user-facing wording, without the library's advice to its callers.
            message: UserMessageFormatter.format_message(&error).into_owned(),
            position: error
                .location()
                .map(|l| (l.line() as usize, l.column() as usize)),
        })
    }

    /// The configured Kubernetes version, if any.
    pub fn kube_version(&self) -> Result<Option<KubeVersion>, ConfigError> {
        self.kube_version
            .as_ref()
            .map(|v| v.value.parse().map_err(|e| at(v, e)))
            .transpose()
    }

    /// The admission mode of each rule named in `webhook.rules`, checked.
    pub fn webhook_rule_modes(
        &self,
    ) -> Result<Vec<(&'static crate::registry::Rule, AdmissionMode)>, ConfigErrors> {
        all_or_errors(
            self.webhook
                .rules
                .iter()
                .map(|(name, mode)| Ok((known_rule(name, mode)?, mode.value))),
        )
    }

    /// The rules whose fixes `/mutate` applies, checked: each must have a fix.
    pub fn mutation_rules(&self) -> Result<Vec<&'static Rule>, ConfigErrors> {
        let Some(names) = &self.webhook.mutate else {
            return Ok(vec![&implicit_behavior::RULE]);
        };
        all_or_errors(names.iter().map(|name| {
            let rule = known_rule(&name.value, name)?;
            if rule.fix == FixAvailability::None {
                return Err(at(
                    name,
                    format!("rule `{}` has no fix to apply", rule.name),
                ));
            }
            Ok(rule)
        }))
    }

    /// Reads `webhook.defaults`: each entry's behavior must pass the API
    /// server's validation at `settings`.
    fn namespaced_defaults(&self, settings: &Settings) -> Result<NamespacedDefaults, ConfigErrors> {
        let entries = self.webhook.defaults.iter().enumerate().map(|(i, entry)| {
            let error = |message: String| ConfigError {
                message: format!("webhook.defaults[{i}]: {message}"),
                position: None,
            };
            let defaults =
                validated_defaults(&entry.behavior, settings).map_err(|e| error(e.to_string()))?;
            if let Some(selector) = &entry.namespace_selector {
                check_selector(selector).map_err(|e| error(e.to_string()))?;
            }
            Ok((entry.namespace_selector.clone(), defaults))
        });
        Ok(NamespacedDefaults::new(all_or_errors(entries)?))
    }

    /// Applies feature gates, rule levels, scalable kinds, the namespace,
    /// thresholds and the behavior defaults; reports every problem among them.
    pub fn apply(&self, settings: &mut Settings) -> Result<(), ConfigErrors> {
        let mut errors = Vec::new();
        for (name, enabled) in &self.feature_gates {
            let release = settings.cluster.kube_version;
            if let Err(e) = settings
                .cluster
                .feature_gates
                .set(release, name, enabled.value)
            {
                errors.push(at(enabled, e));
            }
        }
        for (name, level) in &self.rules {
            match (known_rule(name, level), level.value.parse::<Level>()) {
                (Ok(rule), Ok(parsed)) => settings.set_level(rule, parsed),
                (rule, parsed) => {
                    errors.extend(rule.err());
                    errors.extend(parsed.err().map(|e| at(level, e)));
                }
            }
        }
        settings
            .cluster
            .scalable_kinds
            .extend(self.scalable_kinds.iter().map(|k| GroupKind {
                group: group_of(&k.api_version).to_owned(),
                kind: k.kind.clone(),
            }));
        if let Some(namespace) = &self.namespace {
            settings.cluster.default_namespace.clone_from(namespace);
        }
        let duration = |threshold: &Spanned<String>| {
            crate::controller::parse_duration(&threshold.value).map_err(|e| at(threshold, e))
        };
        if let Some(threshold) = &self.slow_scale_up_threshold {
            match duration(threshold) {
                Ok(ms) => settings.slow_scale_up_threshold = ms,
                Err(e) => errors.push(e),
            }
        }
        if let Some(threshold) = &self.pinned_threshold {
            match duration(threshold) {
                Ok(ms) => settings.pinned_threshold = ms,
                Err(e) => errors.push(e),
            }
        }
        if let Some(percent) = &self.far_below_target {
            match parse_percent(&percent.value) {
                Ok(p) => settings.far_below_target = p,
                Err(e) => errors.push(at(percent, e)),
            }
        }
        match self.namespaced_defaults(settings) {
            Ok(defaults) => settings.behavior_defaults = defaults,
            Err(ConfigErrors(more)) => errors.extend(more),
        }
        in_file_order(errors)
    }

    /// The settings this configuration gives: its Kubernetes version (unless
    /// `version` overrides it; `fallback` when it names none) with everything
    /// [`Config::apply`] applies. Reports every problem, in file order.
    pub fn settings(
        &self,
        version: Option<KubeVersion>,
        fallback: Option<KubeVersion>,
    ) -> Result<Settings, ConfigErrors> {
        let mut errors = Vec::new();
        let version = version.or_else(|| match self.kube_version() {
            Ok(configured) => configured.or(fallback),
            Err(error) => {
                errors.push(error);
                fallback
            }
        });
        let mut settings = Settings::new(version.unwrap_or_default());
        if let Err(ConfigErrors(more)) = self.apply(&mut settings) {
            errors.extend(more);
        }
        in_file_order(errors).map(|()| settings)
    }
}

/// `overrides` over the built-in behavior defaults, checked by the
/// API-server rules at `settings`.
pub fn validated_defaults(
    overrides: &Value,
    settings: &Settings,
) -> Result<BehaviorDefaults, DefaultsError> {
    let defaults = BehaviorDefaults::with_overrides(overrides)?;
    let hpa = json!({
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "defaults"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "defaults"},
            "maxReplicas": 1,
            "behavior": defaults.behavior(),
        },
    });
    let object = Object::new(hpa, Origin::default(), "default").expect("an object");
    let errors: Vec<String> = lint(
        &object,
        Operation::Create,
        &MemoryIndex::default(),
        settings,
    )
    .into_iter()
    .filter(|d| d.rule.category == Category::ApiServer && d.severity == Severity::Error)
    .map(|d| d.field_message())
    .collect();
    if errors.is_empty() {
        Ok(defaults)
    } else {
        Err(DefaultsError::Rejected(errors.join("; ")))
    }
}

/// A percentage between 1 and 99, written `50%` or `50`.
fn parse_percent(text: &str) -> Result<u32, String> {
    text.trim()
        .trim_end_matches('%')
        .trim_end()
        .parse()
        .ok()
        .filter(|p| (1..100).contains(p))
        .ok_or_else(|| format!("invalid percentage `{text}`: expected 1% to 99%"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Severity;

    #[test]
    fn applies_a_full_configuration() {
        let config = Config::parse(
            "kubeVersion: \"1.31\"\nnamespace: team-a\nfeatureGates: {HPAScaleToZero: true}\nrules:\n  min-equals-max: error\n  scaling-disabled: off\nscalableKinds:\n  - {apiVersion: example.com/v1, kind: Worker}\nignorePaths: [vendor/]\n",
        )
        .unwrap();
        let version = config.kube_version().unwrap().unwrap();
        assert_eq!(version, KubeVersion::new(31));
        let mut settings = Settings::new(version);
        config.apply(&mut settings).unwrap();
        assert!(settings.cluster.feature_gates.scale_to_zero);
        assert_eq!(settings.cluster.default_namespace, "team-a");
        let rule = |name| crate::rules::by_name(name).unwrap();
        assert_eq!(
            settings.severity(rule("min-equals-max")),
            Some(Severity::Error)
        );
        assert_eq!(settings.severity(rule("scaling-disabled")), None);
        assert!(settings.cluster.is_custom_scalable("example.com", "Worker"));
        assert_eq!(config.ignore_paths, ["vendor/"]);
        let config = Config::parse("slowScaleUpThreshold: 3m\n").unwrap();
        config.apply(&mut settings).unwrap();
        assert_eq!(settings.slow_scale_up_threshold, 180_000);
        let config = Config::parse("pinnedThreshold: 6h\nfarBelowTarget: 30%\n").unwrap();
        config.apply(&mut settings).unwrap();
        assert_eq!(
            (settings.pinned_threshold, settings.far_below_target),
            (21_600_000, 30)
        );
        let config = Config::parse("farBelowTarget: 100%\n").unwrap();
        assert_eq!(
            config.apply(&mut settings).unwrap_err().0[0].position,
            Some((1, 17))
        );
        let config = Config::parse("slowScaleUpThreshold: soon\n").unwrap();
        assert_eq!(
            config.apply(&mut settings).unwrap_err().0[0].position,
            Some((1, 23))
        );
    }

    #[test]
    fn mutation_rules_must_have_fixes() {
        let names = |text: &str| -> Result<Vec<&str>, String> {
            Config::parse(text)
                .unwrap()
                .mutation_rules()
                .map(|rules| rules.iter().map(|r| r.name).collect())
                .map_err(|e| e.to_string())
        };
        assert_eq!(names(""), Ok(vec!["implicit-behavior"]));
        assert_eq!(names("webhook: {mutate: []}"), Ok(vec![]));
        assert_eq!(
            names("webhook:\n  mutate: [target-not-scalable, implicit-behavior]\n"),
            Ok(vec!["target-not-scalable", "implicit-behavior"])
        );
        assert_eq!(
            names("webhook:\n  mutate: [min-equals-max]\n"),
            Err("2:12: rule `min-equals-max` has no fix to apply".to_owned())
        );
    }

    #[test]
    fn reads_the_webhook_section() {
        let config = Config::parse(
            "webhook:\n  mode: warn\n  targets: deny\n  rules: {min-equals-max: off}\n  maxBodyBytes: 1024\n  watchNamespaces: [shop]\n  defaults:\n  - namespaceSelector: {matchLabels: {env: prod}}\n    behavior: {scaleDown: {stabilizationWindowSeconds: 600}}\n",
        )
        .unwrap();
        let webhook = &config.webhook;
        assert_eq!(
            (webhook.mode, webhook.targets),
            (Some(AdmissionMode::Warn), Some(AdmissionMode::Deny))
        );
        assert_eq!(webhook.max_body_bytes, Some(1024));
        assert_eq!(
            webhook.defaults[0].behavior["scaleDown"]["stabilizationWindowSeconds"],
            600
        );
        let modes = config.webhook_rule_modes().unwrap();
        assert_eq!(
            (modes[0].0.name, modes[0].1),
            ("min-equals-max", AdmissionMode::Off)
        );
        let bad = Config::parse("webhook:\n  rules: {min-equal-max: off}\n").unwrap();
        assert!(
            bad.webhook_rule_modes().unwrap_err().0[0]
                .message
                .contains("did you mean")
        );
        assert!(Config::parse("webhook:\n  mode: loud\n").is_err());
    }

    #[test]
    fn reports_unknown_keys_and_values_with_positions() {
        let error = Config::parse("kubeVersion: \"1.31\"\nrulez: {}\n").unwrap_err();
        assert_eq!(error.position.map(|p| p.0), Some(2), "{error}");
        assert!(error.message.contains("rulez"), "{error}");

        let config = Config::parse("rules:\n  min-equal-max: off\n").unwrap();
        let error = &config.apply(&mut Settings::default()).unwrap_err().0[0];
        assert_eq!(error.position, Some((2, 18)));
        assert!(
            error.message.contains("did you mean `min-equals-max`"),
            "{error}"
        );

        let config = Config::parse("rules:\n  min-equals-max: loud\n").unwrap();
        assert!(
            config.apply(&mut Settings::default()).unwrap_err().0[0]
                .message
                .contains("invalid rule level")
        );
        let config = Config::parse("kubeVersion: \"1.99\"\n").unwrap();
        assert_eq!(config.kube_version().unwrap_err().position, Some((1, 14)));
    }

    /// Every problem of the values is reported, in file order, whatever
    /// order the settings are applied in.
    #[test]
    fn reports_every_problem_in_file_order() {
        let config = Config::parse(
            "farBelowTarget: 200%\nkubeVersion: \"1.99\"\nrules:\n  zz-unknown: off\n  min-equals-max: loud\n  a-unknown: never\nfeatureGates: {NoSuchGate: true}\nwebhook:\n  defaults:\n  - behavior: {scaleUp: {selectPolicy: Fastest}}\n",
        )
        .unwrap();
        let errors = config.settings(None, None).unwrap_err();
        let positions: Vec<_> = errors.0.iter().map(|e| e.position).collect();
        assert_eq!(
            positions,
            [
                Some((1, 17)),
                Some((2, 14)),
                Some((4, 15)),
                Some((5, 19)),
                Some((6, 14)),
                Some((6, 14)),
                Some((7, 28)),
                None
            ],
            "{errors}"
        );
        assert!(
            errors.0[7].message.starts_with("webhook.defaults[0]"),
            "{errors}"
        );
        assert_eq!(errors.lines("f:").lines().count(), 8);
    }

    #[test]
    fn parse_errors_are_worded_for_the_user() {
        for (text, expected) in [
            ("rules: {}\n---\nrules: {}\n", "multiple"),
            ("rules: {a: off, a: off}\n", "duplicate mapping key `a`"),
        ] {
            let error = Config::parse(text).unwrap_err();
            assert!(error.message.contains(expected), "{error}");
            for advice in ["from_str_multiple", "DuplicateKeyPolicy", " at line "] {
                assert!(!error.message.contains(advice), "{error}");
            }
        }
    }
}
