//! `vpa-conflict`: a VerticalPodAutoscaler resizes the resource the HPA scales on.

use std::sync::Arc;

use crate::diagnostic::Severity;
use crate::context::{Check, Context, Report};
use crate::model::autoscaler::{VPA, Vpa};
use crate::model::workload::Target;
use crate::quote::code;
use crate::reads::Reads;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "vpa-conflict",
    category: Category::Suspicious,
    severity: Severity::Warning,
    summary: "a VerticalPodAutoscaler changes the cpu or memory requests the HPA scales on",
    docs: r#"## What it does
Looks for VerticalPodAutoscalers (`autoscaling.k8s.io`) whose `spec.targetRef`
is the HPA's target and that change running pods (every `updateMode` but `Off`
and `Initial`; unset means `Auto`). It reports each `Resource` or
`ContainerResource` metric of the HPA on cpu or memory that such a VPA
controls for the containers the metric measures: its container policy (or the
`*` policy) is not `mode: Off`, and its `controlledResources` (cpu and memory
by default) include the resource.

## Why is this bad?
The two autoscalers answer the same signal. A utilization target is a
percentage of the requests, and the VPA moves the requests: when load rises
the VPA raises them, utilization falls, and the HPA scales in again, while
the VPA evicts pods to resize them. The Kubernetes and VPA documentation both
say not to combine them on cpu or memory. Let the VPA manage the other
resource, or scale the HPA on a custom or external metric.

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
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
---
apiVersion: autoscaling.k8s.io/v1
kind: VerticalPodAutoscaler
metadata:
  name: web
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
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
---
apiVersion: autoscaling.k8s.io/v1
kind: VerticalPodAutoscaler
metadata:
  name: web
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  resourcePolicy:
    containerPolicies:
      - {containerName: "*", controlledResources: [memory]}
```
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[Reads::ScaleTarget, Reads::Listed(VPA)],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    let target = cx.meant_ref();
    if target.kind.is_empty() || target.name.is_empty() {
        return;
    }
    // Only a CPU or memory metric can conflict: no need to list the VPAs
    // of an HPA without one.
    let metrics = || {
        cx.hpa
            .resource_metrics()
            .filter(|metric| matches!(metric.metric.name.as_str(), "cpu" | "memory"))
    };
    if metrics().next().is_none() {
        return;
    }
    let mut objects = Vec::new();
    cx.index
        .visit_vpas(target, &mut |object| objects.push(Arc::clone(object)));
    let vpas: Vec<(&str, Vpa<'_>)> = objects
        .iter()
        .filter_map(|o| Some((o.key.name.as_str(), Vpa::of(o)?)))
        .collect();
    if vpas.is_empty() {
        return;
    }
    // The containers a Resource metric measures, when the target is known.
    let template = cx.workload().and_then(Target::template);
    let containers: Option<Vec<&str>> = template
        .as_ref()
        .map(|t| t.counted_containers().map(|c| c.name).collect());
    for metric in metrics() {
        let resource = metric.metric.name.as_str();
        for (name, vpa) in &vpas {
            let controls = match (metric.container(), &containers) {
                (Some(container), _) => vpa.controls(container, resource),
                (None, Some(names)) => names.iter().any(|c| vpa.controls(c, resource)),
                (None, None) => vpa.controls_any(resource),
            };
            if !controls {
                continue;
            }
            let scaled_on = match (metric.utilization(), metric.defaulted) {
                (Some(_), true) => format!("{resource} utilization (its default metric)"),
                (Some(_), false) => format!("{resource} utilization"),
                (None, _) => format!("{resource} usage"),
            };
            let effect = if metric.utilization().is_some() {
                "every resize moves the requests the HPA's utilization is measured against"
            } else {
                "both react to the same load, one by resizing pods, the other by adding them"
            };
            out.report(
                metric.path("name"),
                format!(
                    "VerticalPodAutoscaler {} (update mode {}) changes the {resource} \
                     requests of {}, which this HPA scales on {scaled_on}: {effect}",
                    code(name),
                    code(vpa.update_mode()),
                    target.describe()
                ),
            )
            .help(format!(
                "leave {resource} to one autoscaler: drop it from the VPA's \
                 `controlledResources` (or use `updateMode: Off` for recommendations only), or \
                 scale the HPA on a custom or external metric"
            ));
        }
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
