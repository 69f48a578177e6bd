//! `duplicate-target`: another HPA or a KEDA ScaledObject scales the same workload.

use crate::diagnostic::Severity;
use crate::context::{Check, Context, Report};
use crate::model::autoscaler::Member;
use crate::path::FieldPath;
use crate::reads::Reads;
use crate::registry::{Category, FixAvailability, Rule};

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
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[Reads::Autoscalers],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

/// How many other autoscalers a finding names; the rest are counted.
const NAMED: usize = 3;

fn describe(member: &Member) -> String {
    if member.keda {
        format!(
            "{} (KEDA, which creates an HPA of its own)",
            member.key.describe()
        )
    } else {
        member.key.describe()
    }
}

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    let target = cx.target_ref();
    if target.kind.is_empty() || target.name.is_empty() {
        return;
    }
    let scalers = cx.index.scalers_of(target);
    let peers = scalers.peers(&cx.object.key, &cx.object.value, NAMED);
    if peers.count == 0 {
        return;
    }
    let mut names: Vec<String> = peers.first.iter().map(describe).collect();
    let unnamed = peers.count - names.len();
    if unnamed > 0 {
        names.push(format!("{unnamed} more"));
    }
    let last = names.pop().expect("at least one peer");
    let list = if names.is_empty() {
        last
    } else {
        format!("{} and {last}", names.join(", "))
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
