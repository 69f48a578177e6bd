//! `invalid-select-policy`: a `selectPolicy` other than Max, Min or Disabled (B3).

use crate::diagnostic::{Reason, Severity};
use crate::context::{Check, Context, Report};
use crate::path::FieldPath;
use crate::quote::quoted;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "invalid-select-policy",
    category: Category::ApiServer,
    severity: Severity::Error,
    summary: "`selectPolicy` is not `Max`, `Min` or `Disabled`",
    docs: r#"## What it does
Checks `spec.behavior.{scaleUp,scaleDown}.selectPolicy`: when set (even to an
empty string) it must be exactly `Max`, `Min` or `Disabled`. The values are
case-sensitive.

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
    scaleDown:
      selectPolicy: minimum
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
      selectPolicy: Min
```

## API server
`spec.behavior.scaleDown.selectPolicy: Unsupported value: "minimum": supported values: "Disabled", "Max", "Min"`
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
        let Some(policy) = rules.and_then(|r| r.select_policy.as_deref()) else {
            continue;
        };
        if matches!(policy, "Max" | "Min" | "Disabled") {
            continue;
        }
        let path = FieldPath::fields("spec.behavior")
            .field(direction)
            .field("selectPolicy");
        out.field_error(
            path,
            Reason::NotSupported,
            Some(quoted(policy)),
            r#"supported values: "Disabled", "Max", "Min""#,
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
