//! `invalid-stabilization-window`: a stabilization window outside [0, 3600] (B1, B2).

use crate::diagnostic::{Reason, Severity};
use crate::context::{Check, Context, Report};
use crate::path::FieldPath;
use crate::registry::{Category, FixAvailability, Rule};

/// `MaxStabilizationWindowSeconds` in the API server: one hour.
const MAX_STABILIZATION_WINDOW_SECONDS: i32 = 3600;

/// The rule.
pub static RULE: Rule = Rule {
    name: "invalid-stabilization-window",
    category: Category::ApiServer,
    severity: Severity::Error,
    summary: "`stabilizationWindowSeconds` below 0 or above 3600",
    docs: r#"## What it does
Checks `spec.behavior.scaleUp.stabilizationWindowSeconds` and
`spec.behavior.scaleDown.stabilizationWindowSeconds`: the API server accepts
0 to 3600 seconds.

## Why is this bad?
The HPA is rejected with HTTP 422. Windows longer than an hour are usually a
unit mistake (minutes written as seconds, or milliseconds).

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 7200
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
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 3600
```

## API server
`spec.behavior.scaleDown.stabilizationWindowSeconds: Invalid value: 7200: must be less than or equal to 3600`;
below zero: `must be greater than or equal to zero`.
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    let Some(behavior) = &cx.hpa.behavior else {
        return;
    };
    for (direction, rules) in behavior.directions() {
        let Some(window) = rules.and_then(|r| r.stabilization_window_seconds) else {
            continue;
        };
        let detail = if window < 0 {
            "must be greater than or equal to zero".to_owned()
        } else if window > MAX_STABILIZATION_WINDOW_SECONDS {
            format!("must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}")
        } else {
            continue;
        };
        let path = FieldPath::fields("spec.behavior")
            .field(direction)
            .field("stabilizationWindowSeconds");
        out.field_error(path, Reason::Invalid, Some(window.to_string()), &detail);
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
