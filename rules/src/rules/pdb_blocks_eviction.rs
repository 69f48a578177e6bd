//! `pdb-blocks-eviction`: a PodDisruptionBudget allows no eviction while the HPA sits at its floor.

use crate::diagnostic::Severity;
use crate::context::{Check, Context, Report};
use crate::model::disruption::{Block, PDB, blocking_fields, selects};
use crate::quote::code;
use crate::reads::Reads;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "pdb-blocks-eviction",
    category: Category::Suspicious,
    severity: Severity::Warning,
    summary: "a PodDisruptionBudget allows no eviction while the HPA sits at `minReplicas`",
    docs: r#"## What it does
Finds the PodDisruptionBudgets (group `policy`) in the target's namespace whose
selector matches the labels of the target's pod template, and reports a budget
that leaves no pod to evict when the workload runs `minReplicas` pods:
- `maxUnavailable: 0` or `"0%"`, which never allows an eviction;
- `minAvailable` of at least `minReplicas` (compared with `>=`: two pods and
  `minAvailable: 2` leave nothing to evict), or a percentage that rounds up
  to every pod (`"100%"` always; `"50%"` at one pod).

The finding is on the budget's field and names the HPA.

## Why is this bad?
At low load the HPA scales the workload down to `minReplicas`, and stays there
at night and on weekends, exactly when node upgrades and cluster-autoscaler
scale-downs drain nodes. The eviction API then refuses every eviction of these
pods, and the drain hangs until someone deletes the pods by hand or the
upgrade times out.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 10
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: web:1.0}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
spec:
  minAvailable: 2
  selector: {matchLabels: {app: web}}
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
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: web:1.0}]
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: web}}
```
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[Reads::ScaleTarget, Reads::Listed(PDB)],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    let Some(target) = cx.workload() else {
        return;
    };
    let Some(labels) = target.template().and_then(|t| t.labels()) else {
        return;
    };
    // At zero replicas (scale to zero) there is nothing to evict.
    let Some(floor) = cx.hpa.min_replicas.map(i64::from).filter(|m| *m >= 1) else {
        return;
    };
    cx.index.visit_budgets(&target.key.namespace, &mut |pdb, block| {
        // Whether the budget blocks first: matching the selector costs more.
        if !block.blocks_at(floor) || !selects(pdb, labels) {
            return;
        }
        for blocking in blocking_fields(pdb) {
            if !blocking.block.blocks_at(floor) {
                continue;
            }
            let field = code(&format!("{}: {}", blocking.field, blocking.value));
            let workload = target.key.describe();
            let (message, help) = match blocking.block {
                Block::Always => (
                    format!(
                        "{field} allows no eviction of the pods of {workload}, which {} scales: \
                         node drains block at any replica count",
                        cx.hpa_name()
                    ),
                    "allow one disruption at a time: `maxUnavailable: 1`".to_owned(),
                ),
                Block::AtOrBelow(limit) => (
                    format!(
                        "{field} leaves no pod to evict while {workload} runs {limit} or fewer \
                         pods, and `minReplicas` of {} is {floor}: node drains block whenever \
                         the HPA sits at its floor",
                        cx.hpa_name()
                    ),
                    format!(
                        "use `maxUnavailable: 1` instead, or raise `minReplicas` above {limit}"
                    ),
                ),
            };
            out.report_on(pdb.as_ref(), blocking.path, message).help(help);
        }
    });
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
