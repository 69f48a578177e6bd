//! `container-not-found`: a `ContainerResource` metric names a container the target's pods do not have.

use crate::diagnostic::Severity;
use crate::context::{Check, Context, Report};
use crate::quote::code;
use crate::reads::Reads;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "container-not-found",
    category: Category::Correctness,
    severity: Severity::Error,
    summary: "a `ContainerResource` metric names a container the target's pod template does not have",
    docs: r#"## What it does
Checks that the `container` of each `ContainerResource` metric is one of the
containers of the target's pod template: a regular container or a native
sidecar (an init container with `restartPolicy: Always`). A plain init
container has finished before the pod runs and has no usage to measure.

A sidecar that a service mesh or an agent injects into pods at admission is
not in the pod template, though the pods have it. A metric naming
`istio-proxy` (Istio) or `linkerd-proxy` (Linkerd) is not reported unless
the template turns the injection off (the label, else the annotation,
`sidecar.istio.io/inject: "false"`; the annotation `linkerd.io/inject:
disabled`), as injection is often on for the whole namespace; one naming
`daprd` (Dapr) or `vault-agent` (Vault) is not reported when the template's
annotation turns the injection on (`dapr.io/enabled: "true"`,
`vault.hashicorp.com/agent-inject: "true"`, with the values each injector
reads as true).

## Why is this bad?
The controller finds no metrics for the container, reports
`FailedGetContainerResourceMetric`, and the metric never takes part in a
scaling decision; with no other metric the HPA does not scale. Renaming a
container in the Deployment without updating the HPA is the usual cause.

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
    - type: ContainerResource
      containerResource:
        name: cpu
        container: application
        target: {type: Utilization, averageUtilization: 70}
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
        - {name: app, image: web:1.0, resources: {requests: {cpu: 500m}}}
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
    - type: ContainerResource
      containerResource:
        name: cpu
        container: app
        target: {type: Utilization, averageUtilization: 70}
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
        - {name: app, image: web:1.0, resources: {requests: {cpu: 500m}}}
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
    // Most HPAs name no container: the containers are listed for those that do.
    let mut all = None;
    for metric in cx.hpa.resource_metrics() {
        let Some(name) = metric.container().filter(|name| !name.is_empty()) else {
            continue;
        };
        let same_name = all
            .get_or_insert_with(|| template.all_containers().collect::<Vec<_>>())
            .iter()
            .find(|c| c.name == name);
        let counted = || {
            let counted: Vec<String> = template
                .counted_containers()
                .map(|c| code(c.name))
                .collect();
            if counted.is_empty() {
                "none".to_owned()
            } else {
                counted.join(", ")
            }
        };
        let message = match same_name {
            Some(c) if !c.is_init || c.is_sidecar() => continue,
            None if template.injector_of(name).is_some() => continue,
            Some(_) => format!(
                "container {} of {} is an init container that runs to completion, not a \
                 native sidecar: the HPA controller measures only {}",
                code(name),
                target.key.describe(),
                counted()
            ),
            None => format!(
                "{} has no container {}; its containers are {}",
                target.key.describe(),
                code(name),
                counted()
            ),
        };
        out.report(metric.path("container"), message).help(
            "set `container` to a container or native sidecar (`restartPolicy: Always`) of the \
             pod template",
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
