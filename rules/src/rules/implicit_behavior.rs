//! `implicit-behavior`: the HPA leaves `spec.behavior`, or parts of it, to defaults.

use serde_json::{Map, Value};

use crate::context::{Check, Context, Report};
use crate::defaults::filled_fields;
use crate::diagnostic::Severity;
use crate::fix::Fix;
use crate::index::Lookup;
use crate::model::hpa::HpaVersion;
use crate::object::{NAMESPACE, ObjectRef};
use crate::path::{FieldPath, Json, get};
use crate::quote::code;
use crate::reads::Reads;
use crate::registry::{Category, FixAvailability, Rule};

pub static RULE: Rule = Rule {
    name: "implicit-behavior",
    category: Category::Pedantic,
    severity: Severity::Info,
    summary: "`spec.behavior` is left, wholly or in part, to defaults the manifest does not show",
    docs: r#"## What it does
Reports an `autoscaling/v2` (or `v2beta2`) HPA that does not set `spec.behavior`, or leaves
some of its fields unset: `stabilizationWindowSeconds`, `selectPolicy` and
`policies` of either direction (and `tolerance` when the organisation's
defaults set one).

## Why might you want this?
An HPA without `behavior` runs the controller's legacy path: it scales up
to at most twice its replicas (at least 4) a sync and down no lower than the
highest recommendation of the last five minutes; one that sets `behavior` in
part gets the rest from the API server's defaults (up by 4 pods or 100%
every 15 seconds, down after a 300-second window). Nothing in the manifest
says so: whoever reads it, or `kubectl get -o yaml`, cannot tell how fast it
reacts, and a default that changes with the cluster's flags changes the HPA
silently. Written out, the behavior is reviewed like any other
setting.

Most HPAs are fine with the defaults; this rule is therefore off unless
selected. The admission webhook writes the same behavior into HPAs as they
are created (`/mutate`).

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 600
```

Use instead:
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
  behavior:
    scaleUp:
      stabilizationWindowSeconds: 0
      selectPolicy: Max
      policies:
      - {type: Pods, value: 4, periodSeconds: 15}
      - {type: Percent, value: 100, periodSeconds: 15}
    scaleDown:
      stabilizationWindowSeconds: 600
      selectPolicy: Max
      policies:
      - {type: Percent, value: 100, periodSeconds: 15}
```

## Fix safety
`--fix` writes the missing fields with the values the API server defaults
them to and the controller's 300-second scale-down window (the default of
`--horizontal-pod-autoscaler-downscale-stabilization`), or the organisation's
defaults for the HPA's namespace from `webhook.defaults` in the configuration
(which its admission webhook writes anyway). Fields that are set are never
changed.

Where `spec.behavior` is set in part, the fix is safe: it writes what the
server fills in, and the HPA behaves as before. Where `spec.behavior` is not
set at all, the fix is unsafe (`--unsafe-fixes`): the controller runs an HPA
without `behavior` on its legacy path, which differs from the written
defaults. The legacy path caps a scale-up at `max(2 × current, 4)` per sync
(4, 4 and 6 from 1, 2 and 3 replicas, where the defaults allow 5, 6 and 7),
its stabilization takes the highest recommendation of the last five minutes
in both directions, and it has no scale events or per-direction tolerance.
`hpa-lint behavior` shows both.
"#,
    fix: FixAvailability::Always,
    manifests_only: false,
    // The labels of the HPA's namespace choose the defaults.
    reads: &[Reads::Named(NAMESPACE)],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    // The versions with `spec.behavior`, which v2beta2 has in v2's shape.
    if !matches!(cx.hpa.version, HpaVersion::V2 | HpaVersion::V2beta2) {
        return;
    }
    let labels = namespace_labels(cx);
    let defaults = cx.settings.behavior_defaults.for_namespace(labels.as_ref());
    let edits = defaults.fill(&cx.object.value);
    if edits.is_empty() {
        return;
    }
    let fields = filled_fields(&edits);
    let behavior = cx.object.value.at(&["spec", "behavior"]);
    let (path, message, help, fix) = match behavior.filter(|b| !b.is_null()) {
        None => (
            FieldPath::fields("spec"),
            "`spec.behavior` is not set: the HPA scales on the controller's legacy path, which the manifest does not show".to_owned(),
            "`hpa-lint --fix --unsafe-fixes --select implicit-behavior` writes the default behavior; the HPA then leaves the legacy path for it (`hpa-lint behavior` shows both)",
            Fix::unsafe_edit(
                format!(
                    "write the {} default behavior fields (the HPA leaves the legacy path)",
                    fields.len()
                ),
                edits,
            ),
        ),
        Some(_) => (
            FieldPath::fields("spec.behavior"),
            format!(
                "`spec.behavior` leaves {} to defaults",
                fields.iter().map(|f| code(f)).collect::<Vec<_>>().join(", ")
            ),
            "`hpa-lint --fix --select implicit-behavior` writes the behavior the HPA runs with",
            Fix::safe(
                format!("write the {} defaulted behavior fields", fields.len()),
                edits,
            ),
        ),
    };
    out.report(path, message).help(help).fix(fix);
}

/// The labels of the HPA's namespace, when the index has the namespace: they
/// choose the organisation's defaults.
fn namespace_labels(cx: &Context<'_>) -> Option<Map<String, Value>> {
    let namespace = ObjectRef {
        group: NAMESPACE.group.to_owned(),
        kind: NAMESPACE.kind.to_owned(),
        namespace: String::new(),
        name: cx.object.key.namespace.clone(),
    };
    let Lookup::Found(object) = cx.index.get(&namespace) else {
        return None;
    };
    Some(
        get(&object.value, &["metadata", "labels"])
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::RULE;
    use crate::config::Config;
    use crate::settings::Settings;
    use crate::testing::{check_fix_fixture, check_fixes, check_fixture};

    #[test]
    fn fixture() {
        insta::assert_snapshot!(check_fixture(&RULE));
    }

    #[test]
    fn fix() {
        insta::assert_snapshot!(check_fix_fixture(&RULE));
    }

    /// The organisation's defaults for the HPA's namespace, chosen by the
    /// labels of the `Namespace` in the input.
    #[test]
    fn writes_the_defaults_of_the_namespace() {
        let mut settings = Settings::default();
        Config::parse(
            "webhook:\n  defaults:\n  - namespaceSelector: {matchLabels: {env: production}}\n    behavior: {scaleDown: {stabilizationWindowSeconds: 900}}\n",
        )
        .unwrap()
        .apply(&mut settings)
        .unwrap();
        let hpa = |namespace: &str| {
            format!(
                "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {{name: web, namespace: {namespace}}}\nspec:\n  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}\n  maxReplicas: 10\n  behavior:\n    scaleUp: {{selectPolicy: Max}}\n"
            )
        };
        let text = format!(
            "apiVersion: v1\nkind: Namespace\nmetadata: {{name: shop, labels: {{env: production}}}}\n---\n{}---\n{}",
            hpa("shop"),
            hpa("dev")
        );
        let fixed = check_fixes(&RULE, &text, settings);
        let windows: Vec<&str> = fixed
            .lines()
            .filter(|l| l.contains("stabilizationWindowSeconds: 900") || l.contains("stabilizationWindowSeconds: 300"))
            .map(str::trim)
            .collect();
        assert_eq!(
            windows,
            ["stabilizationWindowSeconds: 900", "stabilizationWindowSeconds: 300"],
            "{fixed}"
        );
    }
}
