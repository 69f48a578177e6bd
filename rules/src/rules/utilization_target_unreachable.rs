//! `utilization-target-unreachable`: a utilization target above what the pods' limits let them use.

use std::cell::OnceCell;

use crate::diagnostic::Severity;
use crate::context::{Check, Context, Report};
use crate::model::workload::max_utilization;
use crate::quote::{code, shown};
use crate::reads::Reads;
use crate::registry::{Category, FixAvailability, Rule};

/// The HPA controller's default `--horizontal-pod-autoscaler-tolerance`.
const DEFAULT_TOLERANCE: f64 = 0.1;

/// The rule.
pub static RULE: Rule = Rule {
    name: "utilization-target-unreachable",
    category: Category::Suspicious,
    severity: Severity::Warning,
    summary: "a cpu or memory utilization target the pods cannot reach under their limits",
    docs: r#"## What it does
For each cpu or memory metric with an `averageUtilization` target, computes
the highest utilization the target's pods can reach: when every counted
container (regular containers and native sidecars; for `ContainerResource`
the named one) has a limit for the resource, usage cannot exceed the sum of
the limits, so utilization tops out at sum(limits) / sum(requests) × 100 %.

The controller scales up only when utilization exceeds the target by more
than the tolerance (`behavior.scaleUp.tolerance`, else the controller's
default of 10 %). The rule reports a target for which that never happens.
It is silent when any counted container has no limit or no request.

## Why is this bad?
Usage cannot pass a limit: CPU is throttled, and memory is OOM-killed. With
`requests` equal to `limits` (Guaranteed pods) utilization never exceeds
100 %, so a target of 100 % or 95 % never triggers a scale-up: under load the
pods are throttled or restarted while the HPA stays at its current size.

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
    - type: Resource
      resource: {name: memory, target: {type: Utilization, averageUtilization: 100}}
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
      containers:
        - name: app
          image: web:1.0
          resources:
            requests: {memory: 1Gi}
            limits: {memory: 1Gi}
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
      resource: {name: memory, target: {type: Utilization, averageUtilization: 75}}
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
      containers:
        - name: app
          image: web:1.0
          resources:
            requests: {memory: 1Gi}
            limits: {memory: 1Gi}
```
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[Reads::ScaleTarget],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    let Some(target) = cx.workload() else {
        return;
    };
    let Some(template) = target.template() else {
        return;
    };
    // Read for the first CPU or memory utilization target only.
    let counted = OnceCell::new();
    let tolerance = cx
        .hpa
        .behavior
        .as_ref()
        .and_then(|b| b.scale_up.as_ref())
        .and_then(|rules| rules.tolerance.as_ref())
        .map_or(DEFAULT_TOLERANCE, |t| t.approx());
    for metric in cx.hpa.resource_metrics() {
        let resource = metric.metric.name.as_str();
        let Some(percent) = metric.utilization() else {
            continue;
        };
        // Requests from the pod level: not judged (the limits are the containers').
        let gates = &cx.settings.cluster.feature_gates;
        if !matches!(resource, "cpu" | "memory")
            || (metric.container().is_none() && template.uses_pod_level(gates))
        {
            continue;
        }
        let containers = counted
            .get_or_init(|| template.counted_containers().collect::<Vec<_>>())
            .iter()
            .filter(|c| metric.container().is_none_or(|name| c.name == name));
        let Some(max) = max_utilization(containers, resource) else {
            continue;
        };
        // Scale-up needs utilization / target > 1 + tolerance.
        let needed = f64::from(percent) * (1.0 + tolerance);
        if max > needed {
            continue;
        }
        let why = if tolerance > 0.0 {
            format!(
                "`averageUtilization` {percent} plus the {:.0} % tolerance",
                tolerance * 100.0
            )
        } else {
            format!("`averageUtilization` {percent}")
        };
        let default = if metric.defaulted {
            " (the default metric)"
        } else {
            ""
        };
        let resource = shown(resource);
        let cap = match metric.container() {
            Some(name) => format!(
                "the {resource} limit of container {} caps its usage at {max:.0} % of its request",
                code(name)
            ),
            None => format!("{resource} limits cap usage at {max:.0} % of the requests"),
        };
        out.report(
            metric.path("target.averageUtilization"),
            format!(
                "{cap}, but a scale-up needs more than {needed:.0} % ({why}){default}: the HPA \
                 never scales up"
            ),
        )
        .help(format!(
            "set `averageUtilization` well below {max:.0}, or raise the {resource} limits above \
             the requests"
        ));
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
