//! `single-replica-floor`: `minReplicas` is 1, so at low load one pod serves everything.

use crate::diagnostic::Severity;
use crate::context::{Check, Context, Report};
use crate::path::{FieldPath, Json};
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "single-replica-floor",
    category: Category::Pedantic,
    severity: Severity::Warning,
    summary: "`minReplicas` is 1: at low load a single pod serves everything",
    docs: r#"## What it does
Reports an HPA whose `minReplicas` is 1, including an HPA that does not set
it (the API server defaults it to 1).

## Why might you want this?
At night and on weekends the HPA scales the workload down to one pod. Every
node drain, eviction, rollout or crash of that pod is then an outage until a
replacement is ready, and a PodDisruptionBudget cannot help: with one pod it
either blocks the drain or allows the outage. Services that must stay
available want at least two replicas, spread over nodes or zones.

Batch workers, internal tools and development environments are fine with
one; this rule is therefore off unless selected.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
```

Use instead:
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 10
```
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    if cx.hpa.min_replicas != Some(1) {
        return;
    }
    let written = (cx.object.value)
        .at(&["spec", "minReplicas"])
        .is_some_and(|v| !v.is_null());
    let message = if written {
        "`minReplicas` is 1: at low load the workload runs a single pod, and any eviction or \
         crash of it is an outage"
    } else {
        "`minReplicas` is not set and defaults to 1: at low load the workload runs a single \
         pod, and any eviction or crash of it is an outage"
    };
    out.report(FieldPath::fields("spec.minReplicas"), message)
        .help("set `minReplicas: 2` or more, and spread the pods over nodes or zones");
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
