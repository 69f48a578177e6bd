//! `invalid-replicas`: `minReplicas`/`maxReplicas` the API server rejects (S1–S3).

use crate::diagnostic::{Reason, Severity};
use crate::context::{Check, Context, Report};
use crate::path::FieldPath;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "invalid-replicas",
    category: Category::ApiServer,
    severity: Severity::Error,
    summary: "`minReplicas` below 1, `maxReplicas` missing or below 1, or `maxReplicas` < `minReplicas`",
    docs: r#"## What it does
Checks the replica bounds the way the API server does, after its defaulting
(`minReplicas` defaults to 1):
- `minReplicas` must be at least 1 (0 only with the `HPAScaleToZero` feature
  gate, or on update of an HPA that already had 0);
- `maxReplicas` must be set and at least 1;
- `maxReplicas` must be at least `minReplicas`.

## Why is this bad?
The API server rejects the HPA with HTTP 422. A forgotten `maxReplicas` is the
common case: it is required, and with the default `minReplicas: 1` it fails two
checks at once.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 5
  maxReplicas: 3
```

Use instead:
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 3
  maxReplicas: 5
```

## API server
- `spec.minReplicas: Invalid value: 0: must be greater than or equal to 1`
- `spec.maxReplicas: Required value: must be set and greater than 0` (1.36+; before: `Invalid value: 0: must be greater than 0`)
- `spec.maxReplicas: Invalid value: -1: must be greater than or equal to 1` (1.36+)
- ``spec.maxReplicas: Invalid value: 3: must be greater than or equal to `minReplicas` ``
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    let hpa = cx.hpa;
    // Scale to zero needs the gate, except on update of an HPA already at 0 (ratchet).
    let min_bound = if cx.settings.cluster.feature_gates.scale_to_zero
        || cx.old_hpa.is_some_and(|old| old.min_replicas == Some(0))
    {
        0
    } else {
        1
    };
    // Made for findings only: most HPAs have none.
    let min_path = || FieldPath::fields("spec.minReplicas");
    let max_path = || FieldPath::fields("spec.maxReplicas");
    if let Some(min) = hpa.min_replicas.filter(|min| *min < min_bound) {
        out.field_error(
            min_path(),
            Reason::Invalid,
            Some(min.to_string()),
            &format!("must be greater than or equal to {min_bound}"),
        );
    }
    // An absent maxReplicas is 0 to the server.
    let max = hpa.max_replicas.unwrap_or(0);
    if cx.settings.cluster.kube_version.at_least(36) {
        if max == 0 {
            out.field_error(
                max_path(),
                Reason::Required,
                None,
                "must be set and greater than 0",
            );
        } else if max < 0 {
            out.field_error(
                max_path(),
                Reason::Invalid,
                Some(max.to_string()),
                "must be greater than or equal to 1",
            );
        }
    } else if max < 1 {
        out.field_error(
            max_path(),
            Reason::Invalid,
            Some(max.to_string()),
            "must be greater than 0",
        );
    }
    if hpa.min_replicas.is_some_and(|min| max < min) {
        out.field_error(
            max_path(),
            Reason::Invalid,
            Some(max.to_string()),
            "must be greater than or equal to `minReplicas`",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::RULE;
    use crate::cluster::KubeVersion;
    use crate::index::MemoryIndex;
    use crate::context::Operation;
    use crate::lint::lint;
    use crate::object::{Object, Origin};
    use crate::settings::Settings;
    use crate::testing::{check_fixture, lint_yaml, only_with};

    const AT_ZERO: &str = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 0\n";

    fn messages(text: &str, settings: Settings) -> Vec<String> {
        let mut texts: Vec<String> = lint_yaml(text, &only_with(&RULE, settings))
            .into_iter()
            .map(|f| f.text)
            .collect();
        texts.sort();
        texts
    }

    #[test]
    fn fixture() {
        insta::assert_snapshot!(check_fixture(&RULE));
    }

    #[test]
    fn before_1_36_a_missing_max_is_invalid_not_required() {
        // S2-old replaces S2/S2b up to 1.35; S3 is independent of it.
        assert_eq!(
            messages(AT_ZERO, Settings::new(KubeVersion::new(35))),
            [
                "spec.maxReplicas: Invalid value: 0: must be greater than 0",
                "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1",
            ]
        );
    }

    #[test]
    fn the_scale_to_zero_gate_lowers_the_bound() {
        let mut settings = Settings::default();
        settings.cluster.feature_gates.scale_to_zero = true;
        assert_eq!(
            messages(AT_ZERO, settings),
            ["spec.maxReplicas: Required value: must be set and greater than 0"]
        );
    }

    #[test]
    fn an_update_keeps_an_hpa_already_at_zero() {
        // S1 ratchet: the old object had minReplicas 0, so 0 stays allowed without the gate.
        let hpa = |min: i32| {
            let value = serde_json::json!({
                "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": "web"},
                "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                         "minReplicas": min, "maxReplicas": 3,
                         "metrics": [{"type": "External", "external": {"metric": {"name": "queue"}, "target": {"type": "Value", "value": "10"}}}]}
            });
            Object::new(value, Origin(0), "default").unwrap()
        };
        let settings = only_with(&RULE, Settings::default());
        let index = MemoryIndex::default();
        let (old_at_zero, old_at_one, new) = (hpa(0), hpa(1), hpa(0));
        assert!(
            lint(
                &new,
                Operation::Update { old: &old_at_zero },
                &index,
                &settings
            )
            .is_empty()
        );
        assert_eq!(
            lint(
                &new,
                Operation::Update { old: &old_at_one },
                &index,
                &settings
            )
            .len(),
            1
        );
        assert_eq!(lint(&new, Operation::Create, &index, &settings).len(), 1);
    }
}
