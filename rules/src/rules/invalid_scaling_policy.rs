//! `invalid-scaling-policy`: scaling policies the API server rejects (B4–B8).

use crate::diagnostic::{Reason, Severity};
use crate::context::{Check, Context, Report};
use crate::path::FieldPath;
use crate::quote::quoted;
use crate::registry::{Category, FixAvailability, Rule};

/// `MaxPeriodSeconds` in the API server: half an hour.
const MAX_PERIOD_SECONDS: i32 = 1800;

/// The rule.
pub static RULE: Rule = Rule {
    name: "invalid-scaling-policy",
    category: Category::ApiServer,
    severity: Severity::Error,
    summary: "an empty `policies` list, or a policy with a bad `type`, `value` or `periodSeconds`",
    docs: r#"## What it does
Checks `spec.behavior.{scaleUp,scaleDown}.policies`:
- the list must not be empty (an explicit `policies: []`);
- each `type` must be `Pods` or `Percent`;
- each `value` must be greater than 0 (there is no upper bound: `Percent: 1000` is fine);
- each `periodSeconds` must be in 1..1800.

An omitted `value` or `periodSeconds` counts as 0.

## Why is this bad?
The HPA is rejected with HTTP 422. Periods above 30 minutes are a frequent
slip when a stabilization window (up to an hour) is confused with a policy
period.

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
      policies:
      - {type: Pods, value: 4, periodSeconds: 3600}
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
      policies:
      - {type: Pods, value: 4, periodSeconds: 60}
```

## API server
- `spec.behavior.scaleUp.policies: Required value: must specify at least one Policy`
- `spec.behavior.scaleUp.policies[0].type: Unsupported value: "pods": supported values: "Percent", "Pods"`
- `spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero`
- `spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 3600: must be less than or equal to 1800`
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
        let Some(rules) = rules else {
            continue;
        };
        // Paths are made for findings only: most policies have none.
        let policies_path = || {
            FieldPath::fields("spec.behavior")
                .field(direction)
                .field("policies")
        };
        let policies = rules.policies.as_deref().unwrap_or_default();
        if policies.is_empty() {
            out.field_error(
                policies_path(),
                Reason::Required,
                None,
                "must specify at least one Policy",
            );
        }
        for (i, policy) in policies.iter().enumerate() {
            let path = || policies_path().index(i);
            if !matches!(policy.type_.as_str(), "Pods" | "Percent") {
                out.field_error(
                    path().field("type"),
                    Reason::NotSupported,
                    Some(quoted(&policy.type_)),
                    r#"supported values: "Percent", "Pods""#,
                );
            }
            if policy.value <= 0 {
                out.field_error(
                    path().field("value"),
                    Reason::Invalid,
                    Some(policy.value.to_string()),
                    "must be greater than zero",
                );
            }
            let period = policy.period_seconds;
            let detail = if period <= 0 {
                "must be greater than zero".to_owned()
            } else if period > MAX_PERIOD_SECONDS {
                format!("must be less than or equal to {MAX_PERIOD_SECONDS}")
            } else {
                continue;
            };
            out.field_error(
                path().field("periodSeconds"),
                Reason::Invalid,
                Some(period.to_string()),
                &detail,
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
