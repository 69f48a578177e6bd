//! `invalid-metric-target`: a metric `target` the API server rejects (MT1–MT5,
//! O5, X3, X4, P3, RS3, RS4, CR6, CR7).

use crate::diagnostic::{Reason, Severity};
use crate::context::{Check, Context, Report};
use crate::model::hpa::{MetricSource, MetricTarget};
use crate::path::FieldPath;
use crate::quote::quoted;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "invalid-metric-target",
    category: Category::ApiServer,
    severity: Severity::Error,
    summary: "a metric `target` with a bad `type`, a value that is not positive, or the wrong value fields for its source",
    docs: r#"## What it does
Checks the `target` of each metric (of the member the server validates: the
first set one of `object`, `external`, `pods`, `resource`,
`containerResource`):
- `type` must be `Utilization`, `Value` or `AverageValue`;
- `value` and `averageValue` must be greater than 0, `averageUtilization` at
  least 1 (there is no upper bound);
- the value fields the source needs must be set:
  - `object`: `value` or `averageValue` (or both);
  - `external`: `value` or `averageValue`, not both;
  - `pods`: `averageValue`;
  - `resource`, `containerResource`: `averageUtilization` or
    `averageValue`, not both (a `value` does not count).

The server does not check that `type` matches the value field that is set,
nor that `Utilization` is only used on resource metrics.

## Why is this bad?
The API server rejects the HPA with HTTP 422. A target converted from an old
API version often keeps a field the new shape does not take, such as `value`
on a Resource metric.

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
    resource:
      name: memory
      target: {type: Value, value: 512Mi}
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
    resource:
      name: memory
      target: {type: AverageValue, averageValue: 512Mi}
```

## API server
- `spec.metrics[0].resource.target.type: Required value: must specify a metric target type`
- `spec.metrics[0].resource.target.type: Invalid value: "Average": must be either Utilization, Value, or AverageValue`
- `spec.metrics[0].pods.target.averageValue: Invalid value: "0": must be positive` (likewise `value`)
- `spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0`
- `spec.metrics[0].object.target.averageValue: Required value: must set either a target value or averageValue`
- `spec.metrics[0].external.target.averageValue: Required value: must set either a target value for metric or a per-pod target`
- `spec.metrics[0].external.target.value: Forbidden: may not set both a target value for metric and a per-pod target`
- `spec.metrics[0].pods.target.averageValue: Required value: must specify a positive target averageValue`
- `spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization`
- `spec.metrics[0].resource.target.averageValue: Forbidden: may not set both a target raw value and a target utilization`
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    for (path, source) in cx.validated_sources() {
        // Made for findings only: most targets have none.
        let path = || path.path().field("target");
        check_target(out, &path, source.target());
        check_source_fields(out, &path, source);
    }
}

/// `validateMetricTarget` (MT1–MT5).
fn check_target(out: &mut Report<'_>, path: &dyn Fn() -> FieldPath, target: &MetricTarget) {
    let type_path = || path().field("type");
    if target.type_.is_empty() {
        out.field_error(
            type_path(),
            Reason::Required,
            None,
            "must specify a metric target type",
        );
    }
    if !matches!(
        target.type_.as_str(),
        "Utilization" | "Value" | "AverageValue"
    ) {
        out.field_error(
            type_path(),
            Reason::Invalid,
            Some(quoted(&target.type_)),
            "must be either Utilization, Value, or AverageValue",
        );
    }
    for (field, quantity) in [
        ("value", &target.value),
        ("averageValue", &target.average_value),
    ] {
        if let Some(quantity) = quantity.as_ref().filter(|q| !q.is_positive()) {
            out.field_error(
                path().field(field),
                Reason::Invalid,
                Some(quoted(&quantity.text)),
                "must be positive",
            );
        }
    }
    if let Some(utilization) = target.average_utilization.filter(|u| *u < 1) {
        out.field_error(
            path().field("averageUtilization"),
            Reason::Invalid,
            Some(utilization.to_string()),
            "must be greater than 0",
        );
    }
}

/// The value fields each source needs (O5, X3, X4, P3, RS3, RS4, CR6, CR7).
fn check_source_fields(
    out: &mut Report<'_>,
    path: &dyn Fn() -> FieldPath,
    source: MetricSource<'_>,
) {
    let target = source.target();
    let value = target.value.is_some();
    let average = target.average_value.is_some();
    let utilization = target.average_utilization.is_some();
    let mut error = |field: &str, reason: Reason, detail: &str| {
        out.field_error(path().field(field), reason, None, detail);
    };
    match source {
        MetricSource::Object(_) => {
            if !value && !average {
                error(
                    "averageValue",
                    Reason::Required,
                    "must set either a target value or averageValue",
                );
            }
        }
        MetricSource::External(_) => {
            if !value && !average {
                error(
                    "averageValue",
                    Reason::Required,
                    "must set either a target value for metric or a per-pod target",
                );
            }
            if value && average {
                error(
                    "value",
                    Reason::Forbidden,
                    "may not set both a target value for metric and a per-pod target",
                );
            }
        }
        MetricSource::Pods(_) => {
            if !average {
                error(
                    "averageValue",
                    Reason::Required,
                    "must specify a positive target averageValue",
                );
            }
        }
        MetricSource::Resource(_) | MetricSource::ContainerResource(_) => {
            if !utilization && !average {
                error(
                    "averageUtilization",
                    Reason::Required,
                    "must set either a target raw value or a target utilization",
                );
            }
            if utilization && average {
                error(
                    "averageValue",
                    Reason::Forbidden,
                    "may not set both a target raw value and a target utilization",
                );
            }
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
