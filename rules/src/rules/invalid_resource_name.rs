//! `invalid-resource-name`: a Resource or ContainerResource metric's resource
//! `name` the API server rejects (RS1, CR1, CR2).

use crate::diagnostic::{Reason, Severity};
use crate::context::{Check, Context, Report};
use crate::model::hpa::MetricSource;
use crate::model::names::container_resource_name;
use crate::quote::quoted;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "invalid-resource-name",
    category: Category::ApiServer,
    severity: Severity::Error,
    summary: "a Resource metric without a resource `name`, or a ContainerResource metric's `name` that is not a container resource",
    docs: r#"## What it does
Checks `name` of Resource and ContainerResource metrics:
- it is required in both;
- in a ContainerResource metric it must be a resource containers request:
  `cpu`, `memory`, `ephemeral-storage`, `hugepages-<size>`, or an extended
  resource with a domain prefix such as `example.com/gpu`.

A Resource metric's name is not checked beyond being set: `foo/bar` is
accepted.

## Why is this bad?
The API server rejects the HPA with HTTP 422.

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
      name: CPU
      container: app
      target: {type: Utilization, averageUtilization: 70}
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
```

## API server
- `spec.metrics[0].resource.name: Required value: must specify a resource name`
- `spec.metrics[0].containerResource.name: Invalid value: "CPU": must be a standard resource type or fully qualified`
- `spec.metrics[0].containerResource.name: Invalid value: "CPU": must be a standard resource for containers`
- `spec.metrics[0].containerResource.name: Invalid value: "requests.example.com/gpu": doesn't follow extended resource name standard`
- qualified-name messages, e.g. `… Invalid value: "/gpu": prefix part must be non-empty`
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    for (path, source) in cx.validated_sources() {
        let (metric, is_container) = match source {
            MetricSource::Resource(metric) => (metric, false),
            MetricSource::ContainerResource(metric) => (metric, true),
            _ => continue,
        };
        let path = || path.path().field("name");
        if metric.name.is_empty() {
            out.field_error(path(), Reason::Required, None, "must specify a resource name");
        } else if is_container {
            for message in container_resource_name(&metric.name, cx.settings.cluster.kube_version) {
                out.field_error(
                    path(),
                    Reason::Invalid,
                    Some(quoted(&metric.name)),
                    &message,
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
