//! `invalid-metric-name`: a metric identifier name the API server rejects (MI1, MI2).

use crate::diagnostic::{Reason, Severity};
use crate::context::{Check, Context, Report};
use crate::model::names::path_segment;
use crate::quote::quoted;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "invalid-metric-name",
    category: Category::ApiServer,
    severity: Severity::Error,
    summary: "an Object, External or Pods metric without a usable `metric.name`",
    docs: r#"## What it does
Checks `metric.name` of Object, External and Pods metrics: it is required,
and must be usable in a URL path of the metrics APIs: not `.` or `..`, no `/`
or `%`. Nothing else is checked (upper case and `:` pass), and neither is
`metric.selector`.

## Why is this bad?
The API server rejects the HPA with HTTP 422. Metric names copied from a
Prometheus query with a `/` or a URL-encoded character are the usual cause.

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
  - type: Pods
    pods:
      metric: {name: http/requests_per_second}
      target: {type: AverageValue, averageValue: "100"}
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
  - type: Pods
    pods:
      metric: {name: http_requests_per_second}
      target: {type: AverageValue, averageValue: "100"}
```

## API server
- `spec.metrics[0].pods.metric.name: Required value: must specify a metric name`
- `spec.metrics[0].pods.metric.name: Invalid value: "http/requests_per_second": may not contain '/'` (also `may not be '.'`, `may not be '..'`, `may not contain '%'`)
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    for (path, source) in cx.validated_sources() {
        // Resource sources name a resource, not a metric.
        let Some(metric) = source.metric() else {
            continue;
        };
        let path = || path.path().field("metric").field("name");
        if metric.name.is_empty() {
            out.field_error(path(), Reason::Required, None, "must specify a metric name");
            continue;
        }
        for message in path_segment(&metric.name) {
            out.field_error(
                path(),
                Reason::Invalid,
                Some(quoted(&metric.name)),
                &message,
            );
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
