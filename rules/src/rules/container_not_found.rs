//! `container-not-found`: a `ContainerResource` metric names a container the target's pods do not have.

use crate::diagnostic::Severity;
use crate::context::{Check, Context, Report};
use crate::model::workload::PodTemplate;
use crate::path::Json;
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
not in the pod template, though the pods have it: a metric naming
`istio-proxy` (Istio) or `linkerd-proxy` (Linkerd) is not reported unless the
template turns the injection off (`sidecar.istio.io/inject: "false"`,
`linkerd.io/inject: disabled`), as injection is often turned on for the
whole namespace; one naming `daprd` (Dapr) or `vault-agent` (Vault) is not
reported when the template turns the injection on (`dapr.io/enabled: "true"`,
`vault.hashicorp.com/agent-inject: "true"`).

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

/// A sidecar injected into pods at admission: its container's name, the
/// annotation (or label) of the pod template that turns the injection on or
/// off, and whether the pods get it unless that says otherwise (the
/// injection can be on for the whole namespace), else only when it says so.
struct Injected {
    container: &'static str,
    key: &'static str,
    unless_off: bool,
}

const INJECTED: [Injected; 4] = [
    Injected {
        container: "istio-proxy",
        key: "sidecar.istio.io/inject",
        unless_off: true,
    },
    Injected {
        container: "linkerd-proxy",
        key: "linkerd.io/inject",
        unless_off: true,
    },
    Injected {
        container: "daprd",
        key: "dapr.io/enabled",
        unless_off: false,
    },
    Injected {
        container: "vault-agent",
        key: "vault.hashicorp.com/agent-inject",
        unless_off: false,
    },
];

/// Whether pods of `template` may get the container `name` injected.
fn may_be_injected<V: Json>(template: &PodTemplate<'_, V>, name: &str) -> bool {
    INJECTED
        .iter()
        .filter(|injected| injected.container == name)
        .any(|injected| match template.annotation_or_label(injected.key) {
            Some(value) => matches!(value, "true" | "enabled" | "ingress"),
            None => injected.unless_off,
        })
}

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
            .get_or_insert_with(|| template.all_containers())
            .iter()
            .find(|c| c.name == name);
        let counted = || {
            let counted: Vec<String> = template
                .counted_containers()
                .iter()
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
            None if may_be_injected(&template, name) => continue,
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
