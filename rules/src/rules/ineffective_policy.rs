//! `ineffective-policy`: a scaling policy that is never the one applied.

use crate::controller::normalize::Select;
use crate::controller::velocity;
use crate::diagnostic::Severity;
use crate::context::{Check, Context, Report};
use crate::path::{FieldPath, Json};
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "ineffective-policy",
    category: Category::Suspicious,
    severity: Severity::Warning,
    summary: "a scaling policy is never the one applied between `minReplicas` and `maxReplicas`",
    docs: r#"## What it does
For each scaling policy written in `behavior.scaleUp` or `behavior.scaleDown`,
checks whether it can ever be the policy the controller applies for a replica
count between `minReplicas` and `maxReplicas`: under `selectPolicy: Max` the
policy allowing the largest change applies, under `Min` the smallest. A policy
is reported when, at every count from `minReplicas` to `maxReplicas`, another
policy with the same `periodSeconds` allows a strictly larger change (`Max`)
or a strictly smaller one (`Min`). Policies with the same period count the
same scale events, so they start from the same count and the comparison is
exact; a policy whose period no other policy shares is never reported, since
which one applies then depends on the scale events of each period. Ties count
as applied. The comparison walks every count, so it is made only while counts ×
policies stay within two million (a million counts with two policies); wider
ranges are not judged.

## Why is this bad?
A policy that never applies does nothing but mislead. Below, the reader
assumes that the 10 % policy takes over as the Deployment grows; but with
`maxReplicas: 30` it removes at most 3 pods a minute (10 % of 30), never more
than the 4 pods of the policy beside it, and under `selectPolicy: Max` (the
default) the larger change wins: the 10 % policy never applies. Usually the
values were meant for a different replica range, or `Min` was meant instead
of `Max`.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 30
  behavior:
    scaleDown:
      policies:
      - {type: Pods, value: 4, periodSeconds: 60}
      - {type: Percent, value: 10, periodSeconds: 60}
```

Use instead:
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 30
  behavior:
    scaleDown:
      policies:
      - {type: Pods, value: 4, periodSeconds: 60}
```
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    let hpa = cx.hpa;
    let (Some(min), Some(max)) = (hpa.min_replicas, hpa.max_replicas) else {
        return;
    };
    if !hpa.decodable || min < 0 || max <= min {
        return;
    }
    let autoscaler = cx.autoscaler();
    let Some(behavior) = &autoscaler.behavior else {
        return;
    };
    for (name, rules, up) in [
        ("scaleUp", &behavior.scale_up, true),
        ("scaleDown", &behavior.scale_down, false),
    ] {
        // Only the policies the manifest writes; the defaults are nobody's choice.
        let written = (cx.object.value)
            .at(&["spec", "behavior", name, "policies"])
            .is_some_and(|p| p.items().is_some());
        let valid = rules
            .policies
            .iter()
            .all(|p| p.value > 0 && p.period_seconds > 0);
        if !written || !valid {
            continue;
        }
        let Some(never) = velocity::ineffective_policies(rules, up, min, max) else {
            continue;
        };
        let (larger, direction) = match (rules.select, up) {
            (Select::Max, true) => ("more pods", "up"),
            (Select::Max, false) => ("more pods", "down"),
            (_, true) => ("fewer pods", "up"),
            (_, false) => ("fewer pods", "down"),
        };
        let select = if rules.select == Select::Max {
            "Max"
        } else {
            "Min"
        };
        for index in never {
            let policy = &rules.policies[index];
            out.report(
                FieldPath::fields("spec.behavior").field(name).field("policies").index(index),
                format!(
                    "`{policy}` is never applied from {min} to {max} replicas: under `selectPolicy: {select}` a policy with the same period always lets the HPA scale {direction} by {larger}"
                ),
            )
            .help("remove the policy, or change its value so that it wins where it should (`hpa-lint behavior` shows which policy sets each step)");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RULE;
    use crate::testing::{check_fixture, lint_yaml, only};

    #[test]
    fn fixture() {
        insta::assert_snapshot!(check_fixture(&RULE));
    }

    /// "Why is this bad?" explains the example: the 10 % policy (the second)
    /// is the one reported, and it is outdone by the 4-pod policy.
    #[test]
    fn the_docs_explain_their_example() {
        let example = RULE.docs.split("```yaml\n").nth(1).unwrap();
        let example = &example[..example.find("```").unwrap()];
        let findings = lint_yaml(example, &only(&RULE));
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(
            findings[0].text.starts_with(
                "spec.behavior.scaleDown.policies[1]: `Percent 10 per 60s` is never applied"
            ),
            "{findings:?}"
        );
        assert!(RULE.docs.contains("removes at most 3 pods a minute (10 % of 30)"));
    }
}
