//! `scaling-inactive`: the live HPA's conditions say it does not scale.

use crate::diagnostic::Severity;
use crate::context::{Check, Context, Report};
use crate::model::workload::LIMIT_RANGE;
use crate::model::status::{API_SERVICE, Condition, Status, metrics_api_of};
use crate::rules::live::metrics_api_problem;
use crate::reads::Reads;
use crate::registry::{Category, FixAvailability, Rule};
use crate::rules::{
    container_not_found, duplicate_target, target_missing_requests, target_not_found,
    target_not_scalable,
};

/// The rule.
pub static RULE: Rule = Rule {
    name: "scaling-inactive",
    category: Category::Live,
    severity: Severity::Error,
    summary: "the status of a live HPA says it cannot scale: `AbleToScale` or `ScalingActive` is False",
    docs: r#"## What it does
Reads the conditions the HPA controller writes into a live HPA's status and
reports `AbleToScale=False` (it cannot read or update the target's scale:
`FailedGetScale`, `FailedUpdateScale`) or, when the scale can be read,
`ScalingActive=False` (it cannot compute a replica count:
`FailedGetResourceMetric`, `FailedGetContainerResourceMetric`,
`FailedGetPodsMetric`, `FailedGetObjectMetric`, `FailedGetExternalMetric`,
`InvalidSelector`, `AmbiguousSelector`, `InvalidMetricSourceType`, or
`ScalingDisabled` when the target has zero replicas), with the controller's
reason and message.

Where it can, it names the cause: the finding of the rule that explains the
failure (`target-not-found`, `target-not-scalable`,
`target-missing-requests`, `container-not-found`, `duplicate-target`), or the
`APIService` that should serve the metrics API (`v1beta1.metrics.k8s.io`,
`custom.metrics.k8s.io`, `external.metrics.k8s.io`) when it is missing or
not `Available`.

`ScalingDisabled` is a warning (a workload parked at zero on purpose is
common); the other reasons are errors. A status older than the spec
(`status.observedGeneration` behind `metadata.generation`) is not judged.
The rule runs in `kubectl hpa-lint`; on manifests (a saved
`kubectl get -o yaml`) select it with `--select live`.

## Why is this bad?
An HPA that cannot scale looks fine in every manifest and every dashboard
that shows only replica counts: the workload keeps whatever replica count it
had, through load peaks and quiet nights, until someone runs
`kubectl describe hpa`. The usual causes are a metrics API that is not
installed or not healthy, a container without a CPU request, and a target
that was renamed.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
status:
  currentReplicas: 3
  desiredReplicas: 3
  conditions:
    - type: AbleToScale
      status: "True"
      reason: SucceededGetScale
      message: the HPA controller was able to get the target's current scale
    - type: ScalingActive
      status: "False"
      reason: FailedGetResourceMetric
      message: "the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)"
```

Use instead (once metrics-server serves the pods' metrics):
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
status:
  currentReplicas: 3
  desiredReplicas: 3
  conditions:
    - type: AbleToScale
      status: "True"
      reason: ReadyForNewScale
      message: recommended size matches current size
    - type: ScalingActive
      status: "True"
      reason: ValidMetricFound
      message: the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)
```
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    // The metrics `APIService`s, and what the rules that explain a failure
    // read (`explaining_rules`).
    reads: &[
        Reads::Named(API_SERVICE),
        Reads::ScaleTarget,
        Reads::Listed(LIMIT_RANGE),
        Reads::Autoscalers,
    ],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

/// The rules whose findings can explain a failure reason.
fn explaining_rules(reason: &str) -> Vec<(&'static Rule, Check)> {
    match reason {
        "FailedGetScale" => vec![
            (&target_not_found::RULE, target_not_found::CHECK),
            (&target_not_scalable::RULE, target_not_scalable::CHECK),
        ],
        "FailedGetResourceMetric" | "FailedGetContainerResourceMetric" => vec![
            (&target_missing_requests::RULE, target_missing_requests::CHECK),
            (&container_not_found::RULE, container_not_found::CHECK),
        ],
        "AmbiguousSelector" => vec![(&duplicate_target::RULE, duplicate_target::CHECK)],
        _ => Vec::new(),
    }
}

/// What fixes a failure, by reason.
fn help(reason: &str) -> &'static str {
    match reason {
        "FailedGetScale" => {
            "point `spec.scaleTargetRef` at a workload in the HPA's namespace whose kind has a \
             `/scale` subresource"
        }
        "FailedUpdateScale" => {
            "check what rejects the update of the target's scale: an admission webhook, a quota, \
             or the controller's permissions"
        }
        "ScalingDisabled" => {
            "scale the target above zero replicas (the HPA does not scale a workload up from \
             zero), or delete the HPA while the workload is parked"
        }
        "InvalidSelector" | "AmbiguousSelector" => {
            "give the target a selector that no other HPA's target shares: one HPA per set of pods"
        }
        "FailedGetResourceMetric" | "FailedGetContainerResourceMetric" => {
            "make the resource metrics API (metrics-server) serve the pods' usage, and give every \
             container the HPA counts a request for the resource"
        }
        "FailedGetPodsMetric" | "FailedGetObjectMetric" => {
            "make the custom metrics API (custom.metrics.k8s.io) serve this metric for these objects"
        }
        "FailedGetExternalMetric" => {
            "make the external metrics API (external.metrics.k8s.io) serve this metric"
        }
        _ => "fix the metric the condition's message names",
    }
}

/// The causes the cluster shows for a failure, each a sentence.
fn causes(cx: &Context<'_>, failure: &Condition<'_>) -> Vec<String> {
    let mut causes: Vec<String> = metrics_api_of(failure.reason)
        .and_then(|api| metrics_api_problem(cx, api))
        .into_iter()
        .collect();
    for (rule, check) in explaining_rules(failure.reason) {
        causes.extend(
            cx.findings_of(rule, check)
                .into_iter()
                .map(|d| format!("{} (`{}`)", d.message, rule.name)),
        );
    }
    causes
}

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    let Some(status) = Status::of_linted(cx.object) else {
        return;
    };
    let Some(failure) = status.failure() else {
        return;
    };
    let mut message = format!("{}: {}", failure.describe(cx.settings.now), failure.message);
    let causes = causes(cx, &failure);
    if !causes.is_empty() {
        message.push_str("; cause: ");
        message.push_str(&causes.join("; "));
    }
    // A workload parked at zero on purpose is common.
    let severity = if failure.reason == "ScalingDisabled" {
        Severity::Warning
    } else {
        Severity::Error
    };
    out.report_at(severity, failure.path(), message)
        .help(help(failure.reason));
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::RULE;
    use crate::index::MemoryIndex;
    use crate::context::Operation;
    use crate::lint::lint;
    use crate::object::{Object, Origin};
    use crate::testing::{check_fixture, objects, only};

    #[test]
    fn fixture() {
        insta::assert_snapshot!(check_fixture(&RULE));
    }

    /// An HPA whose CPU metric fails, next to `APIService`s as a cluster
    /// serves them (cluster-scoped: no namespace).
    fn messages(services: &str) -> Vec<String> {
        let hpa = "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
status:
  conditions:
  - {type: AbleToScale, status: \"True\", reason: SucceededGetScale, message: the HPA controller was able to get the target's current scale}
  - {type: ScalingActive, status: \"False\", reason: FailedGetResourceMetric, message: \"the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API\"}
";
        let mut all = objects(hpa);
        all.extend(
            objects(services)
                .into_iter()
                .map(|o| Arc::new(Object::new(o.value.clone(), Origin(0), "").expect("an object"))),
        );
        let index = MemoryIndex::new(all.iter().cloned());
        let mut settings = only(&RULE);
        settings.live = true;
        lint(&all[0], Operation::Create, &index, &settings)
            .into_iter()
            .map(|d| d.message)
            .collect()
    }

    #[test]
    fn names_the_metrics_api_service_that_is_missing_or_unavailable() {
        let missing = messages("");
        assert!(
            missing[0].ends_with(
                "; cause: no APIService serves `metrics.k8s.io`: metrics-server is not installed"
            ),
            "{missing:?}"
        );
        let unavailable = messages(
            "apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {name: v1beta1.metrics.k8s.io}\nspec: {group: metrics.k8s.io, version: v1beta1, service: {namespace: kube-system, name: metrics-server}}\nstatus:\n  conditions:\n  - {type: Available, status: \"False\", reason: FailedDiscoveryCheck, message: \"failing or missing response from https://10.96.12.7:443/apis/metrics.k8s.io/v1beta1: Get \\\"https://10.96.12.7:443/apis/metrics.k8s.io/v1beta1\\\": dial tcp 10.96.12.7:443: connect: connection refused\"}\n",
        );
        assert!(
            unavailable[0].contains("; cause: APIService `v1beta1.metrics.k8s.io` is not available (FailedDiscoveryCheck: failing or missing response from https://10.96.12.7:443/apis/metrics.k8s.io/v1beta1"),
            "{unavailable:?}"
        );
        let available = messages(
            "apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {name: v1beta1.metrics.k8s.io}\nspec: {group: metrics.k8s.io, version: v1beta1}\nstatus:\n  conditions:\n  - {type: Available, status: \"True\", reason: Passed, message: all checks passed}\n",
        );
        assert!(!available[0].contains("cause"), "{available:?}");
    }
}
