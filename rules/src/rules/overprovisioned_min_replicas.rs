//! `overprovisioned-min-replicas`: a live HPA sits at `minReplicas` with its metrics far below target.

use crate::controller::normalize::TOO_FEW_REPLICAS;
use crate::diagnostic::Severity;
use crate::context::{Check, Context, Report};
use crate::model::status::{age, list_readings, readings};
use crate::rules::live::limited_for_long;
use crate::path::FieldPath;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "overprovisioned-min-replicas",
    category: Category::Live,
    severity: Severity::Info,
    summary: "a live HPA has sat at `minReplicas` for over 24 hours with every metric under half its target (configurable)",
    docs: r#"## What it does
Reports a live HPA whose `ScalingLimited` condition has been True with the
reason `TooFewReplicas` for longer than `pinnedThreshold` (24 hours by
default), while every metric's current value is at most `farBelowTarget`
(50 % by default) of its target: the metrics ask for fewer replicas than
`minReplicas`, and have for a long time. The message estimates how many
replicas the metrics ask for at the current load.

It says nothing when a metric has no current value, when `minReplicas` is
1, and without the moment the audit read the HPA (manifests). It runs in
`kubectl hpa-lint`.

## Why is this bad?
Replicas the load never needs cost money and capacity every hour. A high
floor is often a leftover of a launch or an incident, or a way to absorb
peaks that a faster scale-up (`spec.behavior.scaleUp`) absorbs more cheaply.
Keep it when the headroom is deliberate (a peak that arrives faster than pods
start), and say so by suppressing the rule on the HPA.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 12
  maxReplicas: 30
status:
  currentReplicas: 12
  desiredReplicas: 12
  currentMetrics:
    - type: Resource
      resource: {name: cpu, current: {averageUtilization: 9, averageValue: 45m}}
  conditions:
    - {type: AbleToScale, status: "True", reason: ReadyForNewScale, message: recommended size matches current size}
    - {type: ScalingActive, status: "True", reason: ValidMetricFound, message: the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)}
    - {type: ScalingLimited, status: "True", lastTransitionTime: "2026-01-02T03:04:05Z", reason: TooFewReplicas, message: the desired replica count is less than the minimum replica count}
```

Use instead (a floor the load reaches):
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 30
status:
  currentReplicas: 2
  desiredReplicas: 2
  currentMetrics:
    - type: Resource
      resource: {name: cpu, current: {averageUtilization: 54, averageValue: 270m}}
  conditions:
    - {type: AbleToScale, status: "True", reason: ReadyForNewScale, message: recommended size matches current size}
    - {type: ScalingActive, status: "True", reason: ValidMetricFound, message: the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)}
    - {type: ScalingLimited, status: "False", lastTransitionTime: "2026-01-02T05:00:00Z", reason: DesiredWithinRange, message: the desired count is within the acceptable range}
```

## Options
- `pinnedThreshold` (configuration file): how long the condition must hold, e.g. `6h`.
- `farBelowTarget` (configuration file): the share of its target every metric must stay under, e.g. `30%`.
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    let Some((status, _, held)) = limited_for_long(cx, TOO_FEW_REPLICAS) else {
        return;
    };
    let Some(min) = cx.hpa.min_replicas.filter(|min| *min > 1) else {
        return;
    };
    let readings = readings(cx.hpa, &status);
    let bound = f64::from(cx.settings.far_below_target) / 100.0;
    // The controller follows the metric that asks for the most replicas.
    let Some(highest) = readings
        .iter()
        .map(|r| r.ratio.filter(|ratio| *ratio <= bound))
        .collect::<Option<Vec<f64>>>()
        .and_then(|ratios| ratios.into_iter().reduce(f64::max))
    else {
        return;
    };
    let current = status.current_replicas().unwrap_or(i64::from(min));
    // ceil(current × ratio), as the replica calculator rounds; at least one.
    #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
    let asked = ((current as f64 * highest).ceil() as i64).max(1);
    out.report(
        FieldPath::fields("spec.minReplicas"),
        format!(
            "held at `minReplicas` ({min}) for {} with every metric at most {}% of its target \
             ({}): at this load the metrics ask for about {asked} replica{}",
            age(held),
            cx.settings.far_below_target,
            list_readings(&readings),
            if asked == 1 { "" } else { "s" }
        ),
    )
    .help(
        "lower `minReplicas` unless the headroom is deliberate; a faster \
         `spec.behavior.scaleUp` absorbs sudden peaks for less than idle replicas",
    );
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
