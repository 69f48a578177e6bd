//! `min-equals-max`: the HPA's floor and ceiling are equal, so it can never scale.

use crate::diagnostic::Severity;
use crate::context::{Check, Context, Report};
use crate::path::FieldPath;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "min-equals-max",
    category: Category::Suspicious,
    severity: Severity::Warning,
    summary: "`minReplicas` equals `maxReplicas`: the HPA can never scale",
    docs: r#"## What it does
Reports an HPA whose `minReplicas` (1 when unset) equals its `maxReplicas`.

## Why is this bad?
Such an HPA pins the replica count and never scales; it only adds a controller
loop, metric queries and confusing `kubectl get hpa` output. It is often a
leftover of an incident ("freeze at 10") that nobody reverted.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 4
  maxReplicas: 4
```

Use instead:
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 4
  maxReplicas: 12
```
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    let (Some(min), Some(max)) = (cx.hpa.min_replicas, cx.hpa.max_replicas) else {
        return;
    };
    if min != max || max < 1 {
        return;
    }
    out.report(
        FieldPath::fields("spec.maxReplicas"),
        format!("`minReplicas` and `maxReplicas` are both {max}: the HPA can never scale"),
    )
    .help("raise `maxReplicas` above `minReplicas`, or delete the HPA and set `spec.replicas` on the workload");
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
