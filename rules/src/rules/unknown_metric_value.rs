//! `unknown-metric-value`: a metric of a live HPA has no current value (`<unknown>`).

use crate::diagnostic::Severity;
use crate::context::{Check, Context, Report};
use crate::model::status::{API_SERVICE, Status, readings};
use crate::rules::live::metrics_api_problem;
use crate::reads::Reads;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "unknown-metric-value",
    category: Category::Live,
    severity: Severity::Warning,
    summary: "a metric of a live HPA has no current value: `kubectl get hpa` shows `<unknown>`",
    docs: r#"## What it does
Compares each metric of a live HPA with the value the controller recorded for
it in `status.currentMetrics` (in the order of `spec.metrics`), and reports
every metric without one: the `<unknown>/70%` of `kubectl get hpa`. When the
cluster shows why (the `APIService` of the metric's API is missing or not
`Available`), the message says so.

It stays silent while the HPA does not scale at all (`AbleToScale` or
`ScalingActive` False: `scaling-inactive` reports that), before the
controller's first sync, and when the status is older than the spec. The rule
runs in `kubectl hpa-lint`; on manifests select it with `--select live`.

## Why is this bad?
With one metric unknown, the controller still computes the others, and it
scales up when they ask for more replicas, but it never scales down: a
replica count it cannot justify for every metric is not lowered. An HPA with
a broken queue-length metric next to a healthy CPU metric looks alive, and
keeps every replica it ever reached.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: worker
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: worker}
  maxReplicas: 10
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
    - type: External
      external:
        metric: {name: queue_depth}
        target: {type: AverageValue, averageValue: "30"}
status:
  currentMetrics:
    - type: Resource
      resource: {name: cpu, current: {averageUtilization: 35, averageValue: 175m}}
    - type: ""
  conditions:
    - {type: AbleToScale, status: "True", reason: ReadyForNewScale, message: recommended size matches current size}
    - {type: ScalingActive, status: "True", reason: ValidMetricFound, message: the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)}
```

Use instead (once the external metrics adapter serves `queue_depth`):
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: worker
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: worker}
  maxReplicas: 10
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
    - type: External
      external:
        metric: {name: queue_depth}
        target: {type: AverageValue, averageValue: "30"}
status:
  currentMetrics:
    - type: Resource
      resource: {name: cpu, current: {averageUtilization: 35, averageValue: 175m}}
    - type: External
      external: {metric: {name: queue_depth}, current: {averageValue: "12"}}
  conditions:
    - {type: AbleToScale, status: "True", reason: ReadyForNewScale, message: recommended size matches current size}
    - {type: ScalingActive, status: "True", reason: ValidMetricFound, message: the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)}
```
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[Reads::Named(API_SERVICE)],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    let Some(status) = Status::of_linted(cx.object) else {
        return;
    };
    // `scaling-inactive` reports an HPA that does not scale at all.
    if status.failure().is_some() {
        return;
    }
    for reading in readings(cx.hpa, &status) {
        if reading.current.is_some() {
            continue;
        }
        let mut message = format!(
            "{} is `{}`: the controller got no value for it in its last sync",
            reading.name,
            reading.shown()
        );
        if let Some(problem) = metrics_api_problem(cx, reading.api) {
            message.push_str("; cause: ");
            message.push_str(&problem);
        }
        out.report(reading.path, message).help(
            "make the metrics API serve this metric (`kubectl describe hpa` shows the \
             controller's error): until it does, the HPA scales up on its other metrics but \
             never scales down",
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
