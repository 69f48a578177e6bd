//! `invalid-scale-to-zero`: `minReplicas: 0` without an Object or External metric (Z1).

use crate::diagnostic::{Reason, Severity};
use crate::context::{Check, Context, Report};
use crate::path::FieldPath;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "invalid-scale-to-zero",
    category: Category::ApiServer,
    severity: Severity::Error,
    summary: "`minReplicas: 0` without an Object or External metric",
    docs: r#"## What it does
Checks that an HPA with `minReplicas: 0` has at least one metric of `type:
Object` or `type: External`. Only the `type` strings count. Without
`metrics`, the HPA gets the default CPU (Resource) metric, which does not
count either.

The check does not depend on the `HPAScaleToZero` feature gate: without the
gate, `minReplicas: 0` is also rejected by `invalid-replicas`.

## Why is this bad?
The API server rejects the HPA with HTTP 422. At zero replicas there are no
pods to measure, so only a metric that exists without pods (a queue length,
requests at an ingress) can scale the workload up again.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: worker
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: worker}
  minReplicas: 0
  maxReplicas: 10
```

Use instead:
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: worker
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: worker}
  minReplicas: 0
  maxReplicas: 10
  metrics:
  - type: External
    external:
      metric: {name: queue_messages_ready}
      target: {type: AverageValue, averageValue: "30"}
```

## API server
- `spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas`
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    let hpa = cx.hpa;
    let scales_without_pods = hpa
        .metrics
        .iter()
        .any(|m| matches!(m.type_.as_str(), "Object" | "External"));
    if hpa.min_replicas == Some(0) && !scales_without_pods {
        out.field_error(
            FieldPath::fields("spec.metrics"),
            Reason::Forbidden,
            None,
            "must specify at least one Object or External metric to support scaling to zero replicas",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::RULE;
    use crate::testing::check_fixture;

    #[test]
    fn fixture() {
        insta::assert_snapshot!(check_fixture(&RULE));
    }
}
