//! What the configuration file makes the webhook do: the rule settings (the
//! same as the CLI's), what each finding does at admission, and the behavior
//! defaults `/mutate` writes. Built once per version of the file and swapped
//! whole when the file changes.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use hpa_lint_rules::cluster::Millis;
use hpa_lint_rules::config::{AdmissionMode, Config, ConfigErrors};
use hpa_lint_rules::mutate::settings_for;
use hpa_lint_rules::{Diagnostic, Settings, Severity};

/// Default `webhook.maxBodyBytes`: 3 MiB, the API server's own request limit.
pub const DEFAULT_MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

/// What a finding does to an admission request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// The request is rejected.
    Deny,
    /// The request is allowed with a warning.
    Warn,
    /// Only the log line mentions it.
    Log,
}

impl Action {
    /// The name used in logs and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Deny => "deny",
            Action::Warn => "warn",
            Action::Log => "log",
        }
    }
}

/// Which object a finding was reported for at admission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admitted {
    /// An HPA being created or updated.
    Hpa,
    /// A workload that live HPAs scale.
    Workload,
}

/// The resolved configuration.
#[derive(Debug)]
pub struct Policy {
    /// Rule settings, exactly as the CLI would resolve the same file.
    pub settings: Settings,
    /// `webhook.mode`: `warn` turns denials into warnings, `off` admits
    /// everything silently.
    mode: AdmissionMode,
    /// `webhook.rules`.
    rules: HashMap<&'static str, AdmissionMode>,
    /// `webhook.targets`: what error findings do when a workload is admitted.
    targets: AdmissionMode,
    /// `webhook.maxBodyBytes`.
    pub max_body_bytes: usize,
    /// `webhook.watchNamespaces`, read at start only.
    pub watch_namespaces: Vec<String>,
    /// What `/mutate` lints with: only the rules of `webhook.mutate`, whose
    /// fixes it applies (and the behavior of `webhook.defaults`).
    pub mutation: Settings,
}

impl Default for Policy {
    /// The policy without a configuration file.
    fn default() -> Self {
        // The empty configuration names no rule and no defaults, so nothing
        // in it can fail to resolve.
        Self::from_config(&Config::default()).unwrap_or_else(|_| unreachable!())
    }
}

impl Policy {
    /// Resolves a parsed configuration; reports every problem, in file order.
    pub fn from_config(config: &Config) -> Result<Self, ConfigErrors> {
        let (settings, mutation, modes) = (
            config.settings(None, None),
            config.mutation_rules(),
            config.webhook_rule_modes(),
        );
        let (settings, mutation, modes) = match (settings, mutation, modes) {
            (Ok(settings), Ok(mutation), Ok(modes)) => (settings, mutation, modes),
            (settings, mutation, modes) => {
                let errors = [settings.err(), mutation.err(), modes.err()];
                return Err(ConfigErrors::merged(errors.into_iter().flatten()));
            }
        };
        let webhook = &config.webhook;
        let mutation = settings_for(&settings, &mutation);
        let rules = modes
            .into_iter()
            .map(|(rule, mode)| (rule.name, mode))
            .collect();
        Ok(Self {
            settings,
            mode: webhook.mode.unwrap_or(AdmissionMode::Deny),
            rules,
            targets: webhook.targets.unwrap_or(AdmissionMode::Warn),
            max_body_bytes: webhook.max_body_bytes.unwrap_or(DEFAULT_MAX_BODY_BYTES),
            watch_namespaces: webhook.watch_namespaces.clone(),
            mutation,
        })
    }

    /// Resolves a configuration given as text.
    pub fn parse(text: &str) -> Result<Self, ConfigErrors> {
        Self::from_config(&Config::parse(text)?)
    }

    /// The settings the reporting mode lints live objects with: the rule
    /// settings with the `live` rules on (unless configured off) and the
    /// rules about manifests off, as `kubectl hpa-lint` lints, judging
    /// durations as of `now`.
    pub fn live_settings(&self, now: Option<Millis>) -> Settings {
        let mut settings = self.settings.clone();
        settings.live = true;
        settings.now = now;
        settings
    }

    /// Whether the webhook is switched off (`webhook.mode: off`): every
    /// request is then admitted as is, without checks or patches.
    pub fn is_off(&self) -> bool {
        self.mode == AdmissionMode::Off
    }

    /// Whether workloads are checked at all (`webhook.targets: off` skips them).
    pub fn checks_workloads(&self) -> bool {
        !self.is_off() && self.targets != AdmissionMode::Off
    }

    /// What a finding does: errors deny, warnings warn, infos are only
    /// logged; `webhook.rules` overrides that per rule; findings about an
    /// admitted workload deny only with `webhook.targets: deny`; and
    /// `webhook.mode: warn` turns every denial into a warning.
    pub fn action(&self, diagnostic: &Diagnostic, admitted: Admitted) -> Action {
        let by_rule = match self.rules.get(diagnostic.rule.name) {
            Some(AdmissionMode::Deny) => Action::Deny,
            Some(AdmissionMode::Warn) => Action::Warn,
            Some(AdmissionMode::Off) => Action::Log,
            None => match diagnostic.severity {
                Severity::Error => Action::Deny,
                Severity::Warning => Action::Warn,
                Severity::Info => Action::Log,
            },
        };
        let capped = |cap: AdmissionMode, action: Action| match (cap, action) {
            (AdmissionMode::Off, _) => Action::Log,
            (AdmissionMode::Warn, Action::Deny) => Action::Warn,
            _ => action,
        };
        let action = match admitted {
            Admitted::Hpa => by_rule,
            Admitted::Workload => capped(self.targets, by_rule),
        };
        capped(self.mode, action)
    }
}

/// The current policy, replaced whole when the file changes; requests take
/// the version current when they start.
#[derive(Clone, Default)]
pub struct SharedPolicy(Arc<RwLock<Arc<Policy>>>);

impl SharedPolicy {
    /// Shares a policy.
    pub fn new(policy: Policy) -> Self {
        Self(Arc::new(RwLock::new(Arc::new(policy))))
    }

    /// The current version.
    pub fn current(&self) -> Arc<Policy> {
        // A writer cannot panic while holding the lock (it only swaps an
        // Arc), so a poisoned lock still holds a whole policy.
        Arc::clone(&self.0.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Replaces it.
    pub fn replace(&self, policy: Policy) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(policy);
    }
}

#[cfg(test)]
mod tests {
    use hpa_lint_rules::Object;
    use hpa_lint_rules::{Operation, lint};
    use serde_json::json;

    use super::*;

    /// The findings of an HPA with an API-server error (a stabilization window
    /// above 3600 s) and a warning (`minReplicas` equal to `maxReplicas`), each
    /// with its action.
    fn actions(config: &str, admitted: Admitted) -> Vec<(&'static str, Action)> {
        let policy = Policy::parse(config).unwrap();
        let hpa = Object::new(
            json!({
                "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": "web", "namespace": "shop"},
                "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                         "minReplicas": 2, "maxReplicas": 2,
                         "behavior": {"scaleUp": {"stabilizationWindowSeconds": 7200}}},
            }),
            hpa_lint_rules::Origin::default(),
            "default",
        )
        .unwrap();
        lint(
            &hpa,
            Operation::Create,
            &hpa_lint_rules::MemoryIndex::default(),
            &policy.settings,
        )
        .iter()
        .map(|d| (d.rule.name, policy.action(d, admitted)))
        .collect()
    }

    #[test]
    fn severity_decides_unless_configured() {
        let found = actions("", Admitted::Hpa);
        assert!(
            found.contains(&("invalid-stabilization-window", Action::Deny)),
            "{found:?}"
        );
        assert!(
            found.contains(&("min-equals-max", Action::Warn)),
            "{found:?}"
        );

        let found = actions(
            "webhook:\n  rules: {invalid-stabilization-window: warn, min-equals-max: deny}\n",
            Admitted::Hpa,
        );
        assert!(
            found.contains(&("invalid-stabilization-window", Action::Warn)),
            "{found:?}"
        );
        assert!(
            found.contains(&("min-equals-max", Action::Deny)),
            "{found:?}"
        );

        let found = actions("webhook:\n  rules: {min-equals-max: off}\n", Admitted::Hpa);
        assert!(
            found.contains(&("min-equals-max", Action::Log)),
            "{found:?}"
        );
    }

    #[test]
    fn audit_mode_and_targets_cap_denials() {
        let found = actions("webhook:\n  mode: warn\n", Admitted::Hpa);
        assert!(found.iter().all(|(_, a)| *a != Action::Deny), "{found:?}");
        assert!(found.contains(&("invalid-stabilization-window", Action::Warn)));

        // Findings of an admitted workload warn by default, deny when configured.
        let found = actions("", Admitted::Workload);
        assert!(found.contains(&("invalid-stabilization-window", Action::Warn)));
        let found = actions("webhook:\n  targets: deny\n", Admitted::Workload);
        assert!(found.contains(&("invalid-stabilization-window", Action::Deny)));
        let found = actions(
            "webhook:\n  targets: deny\n  mode: warn\n",
            Admitted::Workload,
        );
        assert!(found.contains(&("invalid-stabilization-window", Action::Warn)));
        assert!(
            !Policy::parse("webhook:\n  targets: off\n")
                .unwrap()
                .checks_workloads()
        );
        let found = actions("webhook:\n  mode: off\n", Admitted::Hpa);
        assert!(found.iter().all(|(_, a)| *a == Action::Log), "{found:?}");
    }

    #[test]
    fn reads_the_webhook_section_and_rejects_mistakes() {
        let policy =
            Policy::parse("webhook:\n  maxBodyBytes: 1024\n  watchNamespaces: [shop]\n").unwrap();
        assert_eq!(policy.max_body_bytes, 1024);
        assert_eq!(policy.watch_namespaces, ["shop"]);
        assert_eq!(Policy::default().max_body_bytes, DEFAULT_MAX_BODY_BYTES);
        let error = Policy::parse("webhook:\n  rules: {min-equal-max: off}\n").unwrap_err();
        assert!(error.to_string().contains("did you mean"), "{error}");
        let error = Policy::parse(
            "webhook:\n  defaults:\n  - behavior: {scaleDown: {stabilizationWindowSeconds: 7200}}\n",
        )
        .unwrap_err();
        assert!(error.to_string().contains("webhook.defaults[0]"), "{error}");
    }
}
