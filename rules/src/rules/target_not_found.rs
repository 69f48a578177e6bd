//! `target-not-found`: the object `scaleTargetRef` points to is not in the input.

use crate::diagnostic::Severity;
use crate::index::Lookup;
use crate::context::{Check, Context, Report};
use crate::model::workload::TargetKind;
use crate::path::FieldPath;
use crate::quote::code;
use crate::reads::Reads;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "target-not-found",
    category: Category::Correctness,
    severity: Severity::Warning,
    summary: "the workload `scaleTargetRef` points to is not in the input",
    docs: r#"## What it does
Looks up the object `spec.scaleTargetRef` names, by API group, kind, name and
the HPA's namespace, among the other objects linted with the HPA (the CLI:
every file of the run; the webhook: the cluster). The version is ignored:
`apps/v1beta2` and `apps/v1` name the same Deployment.

It stays silent when `kind` or `name` is empty (the API server rejects that)
and when the kind cannot be scaled at all (`target-not-scalable` reports it).

## Why is this bad?
An HPA whose target does not exist does nothing; `kubectl describe hpa` shows
`FailedGetScale` and nobody looks. The usual causes are a typo in the name, a
wrong `kind` or group, or the HPA in another namespace than its workload.

When the target lives in another repository or is created by an operator,
lint it together with the HPA, or turn this rule off for the HPA.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  namespace: shop
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: web:1.0, resources: {requests: {cpu: 100m}}}]
```

Use instead:
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  namespace: shop
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: web:1.0, resources: {requests: {cpu: 100m}}}]
```
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[Reads::ScaleTarget],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    let target = cx.target_ref();
    if target.kind.is_empty() || target.name.is_empty() {
        return;
    }
    if !TargetKind::classify(&cx.settings.cluster, &target.group, &target.kind).is_scalable() {
        return;
    }
    // `Unknown` (a cache that is not synced) is not evidence of absence.
    match cx.target() {
        Lookup::Missing => {}
        Lookup::Unreadable => {
            out.report(
                FieldPath::fields("spec.scaleTargetRef"),
                format!(
                    "{} (namespace `{}`) is in the input but could not be read, so it was not checked",
                    target.describe(),
                    target.namespace
                ),
            )
            .help("fix the YAML errors reported for the target, then lint again");
            return;
        }
        Lookup::Found(_) | Lookup::Unknown => return,
    }
    // Live objects were read from the cluster, which is the whole input.
    let input = if cx.settings.live { "cluster" } else { "input" };
    out.report(
        FieldPath::fields("spec.scaleTargetRef"),
        format!(
            "{} (namespace {}) is not in the {input}",
            target.describe(),
            code(&target.namespace)
        ),
    )
    .help(if cx.settings.live {
        "check `kind`, `name` and `apiVersion` of `scaleTargetRef`: the target must be in the \
         HPA's namespace"
    } else {
        "lint the HPA together with its target, or check `kind`, `name` and `apiVersion` of \
         `scaleTargetRef` and the namespace of both objects"
    });
}

#[cfg(test)]
mod tests {
    use super::RULE;
    use crate::context::Operation;
    use crate::lint::lint;
    use crate::testing::{UnknownIndex, check_fixture, objects, only};

    #[test]
    fn fixture() {
        insta::assert_snapshot!(check_fixture(&RULE));
    }

    #[test]
    fn an_unknown_lookup_is_not_a_missing_target() {
        let hpa = objects(
            "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  maxReplicas: 3\n",
        );
        assert!(lint(&hpa[0], Operation::Create, &UnknownIndex, &only(&RULE)).is_empty());
    }
}
