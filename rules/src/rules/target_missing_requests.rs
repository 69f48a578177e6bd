//! `target-missing-requests`: a container of the target lacks the request a utilization metric needs.

use crate::diagnostic::Severity;
use crate::context::{Check, Context, Report};
use crate::model::workload::LIMIT_RANGE;
use crate::controller::replicas::{PodRequest, RequestFrom, template_request};
use crate::model::workload::{Container, DefaultRequests, PodTemplate};
use crate::path::Json;
use crate::path::FieldPath;
use crate::quote::{code, quoted, shown};
use crate::reads::Reads;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "target-missing-requests",
    category: Category::Correctness,
    severity: Severity::Error,
    summary: "a container of the target has no request for a resource the HPA scales on by utilization",
    docs: r#"## What it does
For every metric the HPA controller evaluates as a utilization (a `Resource`
metric with `averageUtilization` and no `averageValue`, including the default
CPU 80 % metric of an HPA without `metrics`), checks that each container the
controller counts requests that resource: every regular container and every
native sidecar (an init container with `restartPolicy: Always`). Plain init
containers do not count. For a `ContainerResource` metric only the named
container must have the request.

A limit without a request counts as a request (the API server copies it), and
so does a default request from a `LimitRange` of the namespace when it is in
the input (its `defaultRequest`, else `default`, `max` or `min`, which the
API server copies into a missing `defaultRequest`). While the `PodLevelResources` gate is on (from Kubernetes 1.34),
a pod with pod-level requests or limits for cpu, memory or hugepages has its
`Resource` metrics' requests taken from the pod level: the pod-level request,
else what the containers request together (a container without it adds
nothing), else the pod-level limit; only a resource requested nowhere is
reported then, at the pod level, where the controller finds it missing.
`ContainerResource` metrics still need the container's own.

Requests that add up to 0 per pod (`cpu: "0"` in every counted container, or
a pod-level `cpu: 0`) are reported too: the controller reads each request
rounded up to a thousandth (a millionth of a core counts as `1m`), and with a
total of 0 it cannot divide by it.

The finding is on the container in the target's manifest.

## Why is this bad?
Utilization is usage divided by the request. With one request missing the
controller cannot compute it, reports `FailedGetResourceMetric: missing request
for cpu in container ...` and does not scale at all; with requests of 0 it
reports `no metrics returned matched known pods`. A sidecar added later
(a service mesh proxy, a log shipper) is the classic cause: the HPA worked
until the pod got a second container.

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
          resources: {requests: {cpu: 500m}}
        - name: log-shipper
          image: shipper:2.1
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
          resources: {requests: {cpu: 500m}}
        - name: log-shipper
          image: shipper:2.1
          resources: {requests: {cpu: 50m}}
```

To scale on one container only, use a `ContainerResource` metric for it.
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[Reads::ScaleTarget, Reads::Listed(LIMIT_RANGE)],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    let Some(target) = cx.workload() else {
        return;
    };
    let Some(template) = target.template() else {
        return;
    };
    let containers: Vec<_> = template.counted_containers().collect();
    // One finding per container and resource, however many metrics need it.
    let mut reported: Vec<FieldPath> = Vec::new();
    for metric in cx.hpa.resource_metrics() {
        let resource = metric.metric.name.as_str();
        if metric.utilization().is_none() || resource.is_empty() {
            continue;
        }
        let lacking: Vec<&Container<'_, _>> = containers
            .iter()
            .filter(|container| {
                metric.container().is_none_or(|name| name == container.name)
                    && container.effective_request(resource).is_none()
            })
            .collect();
        let gates = &cx.settings.cluster.feature_gates;
        // From the pod level, a container without the request adds nothing:
        // only a resource requested nowhere fails.
        let pod_level = metric.container().is_none() && template.uses_pod_level(gates);
        let missing = if pod_level {
            template_request(&template, resource, None, gates, &DefaultRequests::default()).is_err()
        } else {
            !lacking.is_empty()
        };
        // The namespace's LimitRanges only where a container (any: admission
        // gives plain init containers theirs too) requests nothing: most
        // pods have theirs, and listing them costs more.
        let lacks = || {
            template
                .all_containers()
                .any(|c| c.effective_request(resource).is_none())
        };
        let defaults = if missing || lacks() {
            match cx.index.default_requests(&target.key.namespace) {
                Some(defaults) => defaults,
                None => continue,
            }
        } else {
            DefaultRequests::default()
        };
        let shown_resource = shown(resource);
        // Said only when something is reported: most HPAs have their requests.
        let scales = || {
            let needed_for = match metric.container() {
                _ if metric.defaulted => format!(
                    "its default metric, {shown_resource} utilization (no `metrics` are set)"
                ),
                Some(container) => format!(
                    "the {shown_resource} utilization of container {}",
                    code(container)
                ),
                None => format!("{shown_resource} utilization"),
            };
            format!(
                "{} scales {} on {needed_for}",
                cx.hpa_name(),
                target.key.describe()
            )
        };
        if missing && defaults.get(resource).is_none() {
            if pod_level {
                // `calculatePodLevelRequests`: the pod level is read, so that
                // is where the controller finds the request missing.
                let path = FieldPath::fields("spec.template.spec.resources.requests").field(resource);
                out.report_on(
                    target,
                    path,
                    format!(
                        "missing pod-level request for {shown_resource}: the pods set pod-level \
                         resources, and neither they nor any container request {shown_resource}: {}",
                        scales()
                    ),
                )
                .help(format!(
                    "set `resources.requests.{shown_resource}` at the pod level \
                     (`spec.template.spec.resources`) or on the containers: the HPA measures \
                     utilization against the requests, and while one is missing it does not \
                     scale at all"
                ));
                continue;
            }
        } else {
            // Nothing is missing; the controller divides by what a pod
            // requests, and fails when that is 0.
            let request = template_request(&template, resource, metric.container(), gates, &defaults);
            if let Ok(PodRequest { milli: 0, from }) = request {
                let defaulted = defaults.get(resource).is_some();
                for (path, defaulted) in zero_requests(&template, metric.container(), resource, from, defaulted) {
                    if reported.contains(&path) {
                        continue;
                    }
                    reported.push(path.clone());
                    let given = if defaulted {
                        " (the namespace's LimitRange gives this container 0)"
                    } else {
                        ""
                    };
                    out.report_on(
                        target,
                        path,
                        format!(
                            "the pods request 0 {shown_resource}{given}: {}, and \
                             utilization is usage divided by the request",
                            scales()
                        ),
                    )
                    .help(format!(
                        "request more than 0 of {shown_resource}: with a request of 0 the \
                         controller cannot work out utilization (`no metrics returned matched \
                         known pods`) and does not scale at all"
                    ));
                }
            }
            continue;
        }
        for container in lacking {
            let path = container
                .path()
                .field("resources")
                .field("requests")
                .field(resource);
            if reported.contains(&path) {
                continue;
            }
            reported.push(path.clone());
            out.report_on(
                target,
                path,
                format!(
                    "missing request for {shown_resource} in container {}: {}",
                    quoted(container.name),
                    scales(),
                ),
            )
            .help(format!(
                "set `resources.requests.{shown_resource}` on this container: the HPA measures \
                 utilization against the requests, and while one is missing it does not scale \
                 at all"
            ));
        }
    }
}

/// Where the zero requests a pod adds up to are written, as `from` says it
/// reads them: the pod-level request or limit; or the containers' (those of
/// the metric's container), one that requests nothing getting its
/// LimitRange's (`true` then) where admission `defaulted` it.
fn zero_requests<V: Json>(
    template: &PodTemplate<'_, V>,
    metric_container: Option<&str>,
    resource: &str,
    from: RequestFrom,
    defaulted: bool,
) -> Vec<(FieldPath, bool)> {
    let pod_level = FieldPath::fields("spec.template.spec.resources");
    let containers: Vec<_> = match from {
        RequestFrom::PodLevelRequest => {
            return vec![(pod_level.field("requests").field(resource), false)];
        }
        RequestFrom::PodLevelLimit => {
            return vec![(pod_level.field("limits").field(resource), false)];
        }
        RequestFrom::AllContainers { admitted } => template
            .all_containers()
            .filter(|c| c.effective_request(resource).is_some() || (admitted && defaulted))
            .collect(),
        RequestFrom::CountedContainers => template.counted_containers().collect(),
    };
    containers
        .iter()
        .filter(|c| metric_container.is_none_or(|name| name == c.name))
        .map(|c| {
            let written = |v: Option<&V>| v.is_some_and(|v| !v.is_null());
            let field = if !written(c.request(resource)) && written(c.limit(resource)) {
                "limits"
            } else {
                "requests"
            };
            let path = c.path().field("resources").field(field).field(resource);
            (path, c.effective_request(resource).is_none())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::RULE;
    use crate::testing::check_fixture;

    #[test]
    fn fixture() {
        insta::assert_snapshot!(check_fixture(&RULE));
    }

    /// Pod-level requests count while `PodLevelResources` is on (from 1.34,
    /// or when set from 1.32); while it is off the API server drops them.
    #[test]
    fn pod_level_requests_count_where_the_gate_is_on() {
        use crate::cluster::{Cluster, KubeVersion};
        use crate::settings::Settings;
        use crate::testing::{lint_yaml, only_with};

        let text = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\n\
            spec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  maxReplicas: 3\n  \
            metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]\n\
            ---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      \
            resources: {requests: {cpu: 500m}}\n      containers: [{name: app, image: web}]\n";
        let findings = |minor: u32, gates: &str| {
            let mut settings = Settings::default();
            let mut cluster = Cluster::new(KubeVersion::new(minor));
            let release = cluster.kube_version;
            cluster.feature_gates.apply_overrides(release, gates).unwrap();
            settings.cluster = cluster;
            lint_yaml(text, &only_with(&RULE, settings)).len()
        };
        assert_eq!(findings(36, ""), 0);
        assert_eq!(findings(34, ""), 0);
        assert_eq!(findings(33, ""), 1);
        assert_eq!(findings(33, "PodLevelResources=true"), 0);
        assert_eq!(findings(36, "PodLevelResources=false"), 1);
        // With pod-level requests the controller adds up what the containers
        // request of another resource (one without it adds nothing), and a
        // ContainerResource metric still reads its container's request.
        let other = |metric: &str, containers: &str| {
            let text = text
                .replace(
                    "{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}",
                    metric,
                )
                .replace("[{name: app, image: web}]", containers);
            lint_yaml(&text, &only_with(&RULE, Settings::default())).len()
        };
        let memory = "{type: Resource, resource: {name: memory, target: {type: Utilization, averageUtilization: 50}}}";
        let requested = "[{name: app, image: web, resources: {requests: {memory: 1Gi}}}, {name: log, image: log}]";
        assert_eq!(other(memory, requested), 0);
        assert_eq!(other(memory, "[{name: app, image: web}]"), 1);
        let container = "{type: ContainerResource, containerResource: {name: cpu, container: app, target: {type: Utilization, averageUtilization: 50}}}";
        assert_eq!(other(container, "[{name: app, image: web}]"), 1);
    }
}
