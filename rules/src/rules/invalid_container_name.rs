//! `invalid-container-name`: a ContainerResource metric's `container` the API
//! server rejects (CR3, CR4).

use crate::diagnostic::{Reason, Severity};
use crate::context::{Check, Context, Report};
use crate::model::hpa::MetricSource;
use crate::model::names::dns1123_label;
use crate::quote::quoted;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "invalid-container-name",
    category: Category::ApiServer,
    severity: Severity::Error,
    summary: "a ContainerResource metric without a `container`, or one that is not a valid container name",
    docs: r#"## What it does
Checks `container` of ContainerResource metrics: it is required and must be
a valid container name, a lowercase RFC 1123 label (at most 63 bytes of
lowercase letters, digits and `-`, starting and ending with a letter or
digit).

Whether the target's pods have a container of that name is not checked by
the server.

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
      name: cpu
      container: App_Server
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
      container: app-server
      target: {type: Utilization, averageUtilization: 70}
```

## API server
- `spec.metrics[0].containerResource.container: Required value: must specify a container`
- `spec.metrics[0].containerResource.container: Invalid value: "App_Server": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`
- `… Invalid value: "app.server": must not contain dots`, `… must be no more than 63 characters`
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    for (path, source) in cx.validated_sources() {
        let MetricSource::ContainerResource(metric) = source else {
            continue;
        };
        let path = || path.path().field("container");
        if metric.container.is_empty() {
            out.field_error(path(), Reason::Required, None, "must specify a container");
            continue;
        }
        for message in dns1123_label(&metric.container) {
            out.field_error(
                path(),
                Reason::Invalid,
                Some(quoted(&metric.container)),
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
