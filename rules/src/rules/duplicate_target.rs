//! `duplicate-target`: another HPA or a KEDA ScaledObject scales the same workload.

use serde_json::Value;

use crate::diagnostic::Severity;
use crate::lint::{Context, Report};
use crate::model::autoscaler::is_keda_scaled_object;
use crate::object::{Object, group_of};
use crate::path::FieldPath;
use crate::registry::{Category, Check, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "duplicate-target",
    category: Category::Correctness,
    severity: Severity::Error,
    summary: "another HPA or a KEDA ScaledObject scales the same workload",
    docs: r#"## What it does
Looks for other autoscalers of the HPA's target: HPAs of any version and KEDA
ScaledObjects (which create an HPA of their own), matched by the target's
group, kind, name and namespace (not its version). The HPA that KEDA creates
for a ScaledObject is not counted twice.

## Why is this bad?
Each HPA computes its own replica count and writes it to the same `/scale`
subresource, so the workload flips between their answers every sync period
(15 s by default). Newer controllers notice HPAs whose pods overlap and stop
scaling them all (`AmbiguousSelector`); either way nothing scales as intended. KEDA's
admission webhook rejects a ScaledObject next to an HPA, but an HPA next to a
ScaledObject gets through.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web-cpu
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web-memory
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
  metrics:
    - type: Resource
      resource: {name: memory, target: {type: Utilization, averageUtilization: 80}}
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
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
    - type: Resource
      resource: {name: memory, target: {type: Utilization, averageUtilization: 80}}
```

An HPA with several metrics scales to the highest replica count any of them
asks for.
"#,
    check: Check::Hpa(check),
};

/// Whether `owner` is among the `ownerReferences` of `object` (how KEDA marks
/// the HPA it creates for a ScaledObject).
fn is_owned_by(object: &Object, owner: &Object) -> bool {
    let Some(references) = object
        .value
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
    else {
        return false;
    };
    references.iter().any(|reference| {
        let field = |name: &str| reference.get(name).and_then(Value::as_str);
        field("kind") == Some(owner.key.kind.as_str())
            && field("name") == Some(owner.key.name.as_str())
            && group_of(field("apiVersion").unwrap_or_default()) == owner.key.group()
    })
}

fn describe(object: &Object) -> String {
    if is_keda_scaled_object(object) {
        format!(
            "{} (KEDA, which creates an HPA of its own)",
            object.key.describe()
        )
    } else {
        object.key.describe()
    }
}

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    let target = cx.target_ref();
    if target.kind.is_empty() || target.name.is_empty() {
        return;
    }
    let this = cx.object.key.to_ref();
    let scalers = cx.index.scalers_of(&target);
    let others: Vec<String> = scalers
        .iter()
        // This HPA, in whatever version the index holds it.
        .filter(|other| other.key.to_ref() != this)
        // The ScaledObject that created this HPA, and the HPA another listed
        // ScaledObject created: each pair is one autoscaler.
        .filter(|other| !is_owned_by(cx.object, other))
        .filter(|other| !scalers.iter().any(|owner| is_owned_by(other, owner)))
        .map(|other| describe(other))
        .collect();
    let Some((last, first)) = others.split_last() else {
        return;
    };
    let list = if first.is_empty() {
        last.clone()
    } else {
        format!("{} and {last}", first.join(", "))
    };
    out.report(
        FieldPath::fields("spec.scaleTargetRef"),
        format!("{} is also scaled by {list}", target.describe()),
    )
    .help(
        "keep one autoscaler per workload: put all metrics into one HPA (it follows the metric \
         that asks for the most replicas), or all triggers into one ScaledObject",
    );
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
