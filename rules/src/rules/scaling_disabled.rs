//! `scaling-disabled`: both directions have `selectPolicy: Disabled`.

use crate::diagnostic::Severity;
use crate::context::{Check, Context, Report};
use crate::path::FieldPath;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "scaling-disabled",
    category: Category::Suspicious,
    severity: Severity::Warning,
    summary: "scale-up and scale-down are both `Disabled`: the HPA is frozen",
    docs: r#"## What it does
Reports an HPA whose `behavior.scaleUp.selectPolicy` and
`behavior.scaleDown.selectPolicy` are both `Disabled`.

## Why is this bad?
The HPA never changes the replica count; it only keeps the workload inside
`[minReplicas, maxReplicas]`. Disabling one direction is a legitimate tool
(for example no scale-down during a migration); disabling both is usually a
forgotten emergency switch.

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
    scaleUp: {selectPolicy: Disabled}
    scaleDown: {selectPolicy: Disabled}
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
    scaleDown: {selectPolicy: Disabled}
```
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
    let disabled =
        |rules: Option<&crate::model::hpa::ScalingRules>| rules.is_some_and(|r| r.is_disabled());
    if disabled(behavior.scale_up.as_ref()) && disabled(behavior.scale_down.as_ref()) {
        out.report(
            FieldPath::fields("spec.behavior"),
            "both scale-up and scale-down are `Disabled`: the HPA never changes the replica count",
        )
        .help(
            "re-enable at least one direction (remove `selectPolicy: Disabled`), or delete the HPA",
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
