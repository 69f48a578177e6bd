//! `invalid-metric-source`: a metric whose `type` and populated members the API
//! server rejects (T1, T2, T4, T5, T6).

use crate::diagnostic::{Reason, Severity};
use crate::context::{Check, Context, Report};
use crate::path::FieldPath;
use crate::quote::quoted;
use crate::registry::{Category, FixAvailability, Rule};

const SUPPORTED_TYPES: &str =
    r#"supported values: "ContainerResource", "External", "Object", "Pods", "Resource""#;

/// The rule.
pub static RULE: Rule = Rule {
    name: "invalid-metric-source",
    category: Category::ApiServer,
    severity: Severity::Error,
    summary: "a metric's `type` is missing or unknown, its member is missing, or several members are set",
    docs: r#"## What it does
Checks each entry of `spec.metrics`:
- `type` must be one of `ContainerResource`, `External`, `Object`, `Pods` or
  `Resource` (exactly, case included);
- the member that `type` names (`containerResource`, `external`, `object`,
  `pods`, `resource`) must be set;
- no other member may be set alongside it.

The server reports an unknown `type` twice, with the same message. Before
Kubernetes 1.27 (`HPAContainerMetrics` off) a `containerResource` member is
dropped, so a `ContainerResource` metric always lacks its member.

## Why is this bad?
The API server rejects the HPA with HTTP 422. A lower-case `type: resource`
or a member left over from another metric type are the usual causes.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
  metrics:
  - type: resource
    resource:
      name: cpu
      target: {type: Utilization, averageUtilization: 70}
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
  metrics:
  - type: Resource
    resource:
      name: cpu
      target: {type: Utilization, averageUtilization: 70}
```

## API server
- `spec.metrics[0].type: Required value: must specify a metric source type`
- `spec.metrics[0].type: Unsupported value: "resource": supported values: "ContainerResource", "External", "Object", "Pods", "Resource"` (twice)
- `spec.metrics[0].resource: Required value: must populate information for the given metric source`
  (before 1.27, for `containerResource`: `… (only allowed when HPAContainerMetrics feature is enabled)`)
- `spec.metrics[0].pods: Forbidden: must populate the given metric source only`
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

/// The member a valid `type` names.
fn member_of(type_: &str) -> Option<&'static str> {
    Some(match type_ {
        "ContainerResource" => "containerResource",
        "External" => "external",
        "Object" => "object",
        "Pods" => "pods",
        "Resource" => "resource",
        _ => return None,
    })
}

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    for (i, metric) in cx.hpa.metrics.iter().enumerate() {
        // Paths are made for findings only: most metrics have none.
        let path = || FieldPath::fields("spec.metrics").index(i);
        let type_path = || path().field("type");
        let expected = member_of(&metric.type_);
        let not_supported = |out: &mut Report<'_>| {
            out.field_error(
                type_path(),
                Reason::NotSupported,
                Some(quoted(&metric.type_)),
                SUPPORTED_TYPES,
            );
        };
        if metric.type_.is_empty() {
            out.field_error(
                type_path(),
                Reason::Required,
                None,
                "must specify a metric source type",
            );
        }
        // T2; the server's per-source errors (other rules) come between T2 and T4.
        if expected.is_none() {
            not_supported(out);
        }
        let populated = metric.populated();
        match expected {
            // T4
            Some(member) if !populated.clone().any(|s| s.member() == member) => {
                let detail = if member == "containerResource"
                    && !cx.settings.cluster.feature_gates.container_metrics
                {
                    "must populate information for the given metric source (only allowed when HPAContainerMetrics feature is enabled)"
                } else {
                    "must populate information for the given metric source"
                };
                out.field_error(path().field(member), Reason::Required, None, detail);
            }
            Some(_) => {}
            // T5: the same error again.
            None => not_supported(out),
        }
        // T6: only when several members are set; then every one but the type's.
        if populated.clone().count() > 1 {
            for source in populated.filter(|s| Some(s.member()) != expected) {
                out.field_error(
                    path().field(source.member()),
                    Reason::Forbidden,
                    None,
                    "must populate the given metric source only",
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RULE;
    use crate::cluster::KubeVersion;
    use crate::settings::Settings;
    use crate::testing::{check_fixture, lint_yaml, only_with};

    #[test]
    fn fixture() {
        insta::assert_snapshot!(check_fixture(&RULE));
    }

    #[test]
    fn t4_mentions_the_gate_while_container_metrics_are_off() {
        // HPAContainerMetrics is off by default up to 1.26; the member is dropped.
        let text = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  maxReplicas: 3\n  metrics:\n  - type: ContainerResource\n    containerResource: {name: cpu, container: app, target: {type: Utilization, averageUtilization: 60}}\n";
        let texts = |minor| -> Vec<String> {
            lint_yaml(
                text,
                &only_with(&RULE, Settings::new(KubeVersion::new(minor))),
            )
            .into_iter()
            .map(|f| f.text)
            .collect()
        };
        assert_eq!(
            texts(26),
            [
                "spec.metrics[0].containerResource: Required value: must populate information for the given metric source (only allowed when HPAContainerMetrics feature is enabled)"
            ]
        );
        assert!(texts(27).is_empty());
    }
}
