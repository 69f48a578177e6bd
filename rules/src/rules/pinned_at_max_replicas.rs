//! `pinned-at-max-replicas`: a live HPA has wanted more than `maxReplicas` for a long time.

use crate::controller::normalize::TOO_MANY_REPLICAS;
use crate::diagnostic::Severity;
use crate::context::{Check, Context, Report};
use crate::model::status::{age, list_readings, readings};
use crate::rules::live::limited_for_long;
use crate::path::FieldPath;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "pinned-at-max-replicas",
    category: Category::Live,
    severity: Severity::Info,
    summary: "a live HPA has wanted more than `maxReplicas` for longer than 24 hours (configurable)",
    docs: r#"## What it does
Reports a live HPA whose `ScalingLimited` condition has been True with the
reason `TooManyReplicas` for longer than `pinnedThreshold` (24 hours by
default): for all that time the metrics asked for more replicas than
`maxReplicas`, and the controller capped them. The message gives the
metrics as `kubectl get hpa` shows them.

The time is measured from the condition's `lastTransitionTime` to the moment
the audit read the HPA; without that moment (manifests) the rule says
nothing. It runs in `kubectl hpa-lint`.

## Why is this bad?
An HPA at its ceiling no longer autoscales: the workload runs at a fixed size
while its load is above target, so latency and error rates rise with every
peak. Either the ceiling is too low for today's traffic (it was set when the
service was smaller), or something else keeps the metric high (a slow
dependency, a metric that does not fall with more replicas).

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
  currentReplicas: 10
  desiredReplicas: 10
  currentMetrics:
    - type: Resource
      resource: {name: cpu, current: {averageUtilization: 97, averageValue: 485m}}
  conditions:
    - {type: AbleToScale, status: "True", reason: ReadyForNewScale, message: recommended size matches current size}
    - {type: ScalingActive, status: "True", reason: ValidMetricFound, message: the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)}
    - {type: ScalingLimited, status: "True", lastTransitionTime: "2026-01-02T03:04:05Z", reason: TooManyReplicas, message: the desired replica count is more than the maximum replica count}
```

Use instead (a ceiling the workload stays under):
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 20
status:
  currentReplicas: 14
  desiredReplicas: 14
  currentMetrics:
    - type: Resource
      resource: {name: cpu, current: {averageUtilization: 69, averageValue: 345m}}
  conditions:
    - {type: AbleToScale, status: "True", reason: ReadyForNewScale, message: recommended size matches current size}
    - {type: ScalingActive, status: "True", reason: ValidMetricFound, message: the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)}
    - {type: ScalingLimited, status: "False", lastTransitionTime: "2026-01-02T05:00:00Z", reason: DesiredWithinRange, message: the desired count is within the acceptable range}
```

## Options
- `pinnedThreshold` (configuration file): how long the condition must hold, e.g. `6h`.
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    let Some((status, limited, held)) = limited_for_long(cx, TOO_MANY_REPLICAS) else {
        return;
    };
    let Some(max) = cx.hpa.max_replicas else {
        return;
    };
    out.report(
        FieldPath::fields("spec.maxReplicas"),
        format!(
            "held at `maxReplicas` ({max}) for {}: {}: {} (metrics: {})",
            age(held),
            limited.describe(None),
            limited.message,
            list_readings(&readings(cx.hpa, &status))
        ),
    )
    .help(format!(
        "raise `maxReplicas` if the workload needs more replicas and the cluster has room for \
         them, or find out why the load stays above what {max} replicas serve"
    ));
}

#[cfg(test)]
mod tests {
    use super::RULE;
    use crate::testing::check_live_fixture;

    #[test]
    fn fixture() {
        insta::assert_snapshot!(check_live_fixture(&RULE));
    }
}
