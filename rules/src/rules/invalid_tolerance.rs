//! `invalid-tolerance`: a negative `behavior.*.tolerance` (B9).

use crate::diagnostic::{Reason, Severity};
use crate::context::{Check, Context, Report};
use crate::path::FieldPath;
use crate::quote::quoted;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "invalid-tolerance",
    category: Category::ApiServer,
    severity: Severity::Error,
    summary: "`tolerance` is negative",
    docs: r#"## What it does
Checks `spec.behavior.{scaleUp,scaleDown}.tolerance` (Kubernetes 1.33+): it
must not be negative. Zero is allowed.

While the `HPAConfigurableTolerance` feature gate is off (1.33 and 1.34 by
default) the API server drops the field before validating it, so this rule is
silent then; `tolerance-dropped` reports the dropped field instead.

## Why is this bad?
The HPA is rejected with HTTP 422.

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
    scaleUp:
      tolerance: -50m
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
    scaleUp:
      tolerance: 50m
```

## API server
`spec.behavior.scaleUp.tolerance: Invalid value: "-50m": must be greater than or equal to 0`
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
        let Some(tolerance) = rules.and_then(|r| r.tolerance.as_ref()) else {
            continue;
        };
        if tolerance.is_negative() {
            let path = FieldPath::fields("spec.behavior")
                .field(direction)
                .field("tolerance");
            out.field_error(
                path,
                Reason::Invalid,
                Some(quoted(&tolerance.text)),
                "must be greater than or equal to 0",
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
