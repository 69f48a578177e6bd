//! `slow-scale-up`: under sustained demand the HPA needs too long to get from
//! `minReplicas` to `maxReplicas`.

use crate::controller::flags::format_duration;
use crate::controller::normalize::{Rules, Select};
use crate::controller::velocity::{self, End, Limiter, Path};
use crate::controller::{Autoscaler, Millis};
use crate::diagnostic::Severity;
use crate::context::{Check, Context, Report};
use crate::path::FieldPath;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "slow-scale-up",
    category: Category::Suspicious,
    severity: Severity::Warning,
    summary: "under sustained demand the HPA needs longer than 10 minutes (configurable) to reach `maxReplicas`",
    docs: r#"## What it does
Runs the HPA controller's normalization (stabilization, scaling policies over
their periods, `selectPolicy`; or the legacy cap without `behavior`) as it
would run under sustained demand for `maxReplicas`, with the controller's
default 15 s sync period, and reports the HPA when getting from `minReplicas`
to `maxReplicas` takes longer than the threshold: 10 minutes, or
`slowScaleUpThreshold` in the configuration. The message gives the time, the
steps and the policy that limits them; the help gives the value that would
meet the threshold. `hpa-lint behavior` shows the whole path. An HPA with
more than 100 scale-up policies is not judged: its walk costs in proportion,
and no HPA needs that many.

## Why is this bad?
A traffic spike does not wait. A policy such as "1 pod per minute" looks
careful in review, but from 2 to 40 replicas it takes 38 minutes, during
which the pods that exist are overloaded. The scale-up stabilization window
adds its length before the first step.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 40
  behavior:
    scaleUp:
      policies:
      - {type: Pods, value: 1, periodSeconds: 60}
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
  maxReplicas: 40
  behavior:
    scaleUp:
      policies:
      - {type: Pods, value: 4, periodSeconds: 60}
```
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

/// Whether the HPA is one the controller can run (the API-server rules report the others).
fn runs(cx: &Context<'_>) -> bool {
    let hpa = cx.hpa;
    let (Some(min), Some(max)) = (hpa.min_replicas, hpa.max_replicas) else {
        return false;
    };
    let rules_valid = hpa.behavior.as_ref().is_none_or(|b| {
        b.directions().iter().all(|(_, rules)| {
            rules.is_some_and(|r| {
                r.policies.as_ref().is_some_and(|p| {
                    !p.is_empty()
                        && p.iter()
                            .all(|p| p.value > 0 && (1..=1800).contains(&p.period_seconds))
                })
            })
        })
    });
    hpa.decodable && min >= 1 && max > min && rules_valid
}

/// The most scale-up policies judged: each sync of the walk (and of the
/// search for the value that would meet the threshold) computes every one.
const MAX_POLICIES: usize = 100;

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    if !runs(cx) {
        return;
    }
    let threshold = cx.settings.slow_scale_up_threshold;
    let autoscaler = cx.autoscaler();
    if autoscaler.behavior.as_ref().is_some_and(|b| {
        b.scale_down.select == Select::Disabled && b.scale_up.select == Select::Disabled
    }) {
        return; // scaling-disabled's
    }
    if autoscaler
        .behavior
        .as_ref()
        .is_some_and(|b| b.scale_up.policies.len() > MAX_POLICIES)
    {
        return;
    }
    let path = velocity::fastest_within(autoscaler, true, threshold);
    if path.arrival().is_some_and(|t| t <= threshold) {
        return;
    }
    let full = velocity::fastest(autoscaler, true);
    let (min, max) = (autoscaler.min_replicas, autoscaler.max_replicas);
    let limit = format_duration(threshold);
    let Some(behavior) = &autoscaler.behavior else {
        out.report(
            FieldPath::fields("spec.maxReplicas"),
            format!("the fastest scale-up from {min} to {max} replicas takes {}, longer than {limit}: without `behavior` the controller at most doubles the count per sync", describe(&full)),
        )
        .help("lower `maxReplicas`, or set `behavior.scaleUp.policies` that allow larger steps");
        return;
    };
    let rules = &behavior.scale_up;
    let direction = FieldPath::fields("spec.behavior.scaleUp");
    if rules.select == Select::Disabled {
        out.report(
            direction.field("selectPolicy"),
            format!("scale-up is `Disabled`: the HPA never scales up from {min} replicas"),
        )
        .help("remove `selectPolicy: Disabled` (the default is `Max`), or lower `maxReplicas` to `minReplicas`");
        return;
    }
    if full
        .first_change()
        .is_some_and(|t| t - autoscaler.flags.sync_period >= threshold)
    {
        out.report(
            direction.field("stabilizationWindowSeconds"),
            format!(
                "the fastest scale-up from {min} to {max} replicas takes {}, longer than {limit}: the {}s scale-up stabilization window holds the first step",
                describe(&full),
                rules.window_seconds
            ),
        )
        .help(match longest_window_meeting(autoscaler, threshold) {
            Some(window) => format!("lower `stabilizationWindowSeconds` to {window} (or less) to reach {max} replicas within {limit}"),
            None => format!("lower `stabilizationWindowSeconds` well below {} seconds", threshold / 1000),
        });
        return;
    }
    let policies: Vec<usize> = match full.main_limiter() {
        Some(Limiter::Policies(policies)) => policies.clone(),
        _ => (0..rules.policies.len()).collect(),
    };
    let names: Vec<String> = policies
        .iter()
        .map(|&i| format!("`{}`", rules.policies[i]))
        .collect();
    let first = policies.first().copied().unwrap_or(0);
    let diagnostic = out.report(
        direction.field("policies").index(first),
        format!(
            "the fastest scale-up from {min} to {max} replicas takes {}, longer than {limit}: limited by {}",
            describe(&full),
            names.join(" and ")
        ),
    );
    if let Some(value) = value_meeting(autoscaler, first, threshold) {
        diagnostic.help(format!(
            "raise this policy's `value` to {value} (or more) to reach {max} replicas within {limit}"
        ));
    } else {
        diagnostic.help(
            "allow larger steps: raise the policies' `value` or shorten their `periodSeconds`",
        );
    }
}

/// `2 → 3 → 4 → … → 40 in 38m`, or why it never arrives.
fn describe(path: &Path) -> String {
    let reached = path.steps.last().map_or(path.from, |s| s.1);
    let arrival = match path.end {
        End::Arrived(time) => time,
        End::Stuck(_) if path.steps.is_empty() => return "forever (it never scales up)".to_owned(),
        End::Stuck(_) => return format!("forever (it stops at {reached})"),
        End::Unfinished(time) => {
            return format!(
                "more than {} (it reaches {reached} by then)",
                format_duration(time)
            );
        }
    };
    let counts: Vec<String> = std::iter::once(path.from)
        .chain(path.steps.iter().map(|s| s.1))
        .map(|c| c.to_string())
        .collect();
    let shown = if counts.len() > 6 {
        format!(
            "{} → … → {}",
            counts[..3].join(" → "),
            counts[counts.len() - 1]
        )
    } else {
        counts.join(" → ")
    };
    format!("{} ({shown})", format_duration(arrival))
}

/// The longest scale-up window with which the fastest scale-up meets the
/// threshold (the time only grows with the window).
fn longest_window_meeting(autoscaler: &Autoscaler, threshold: Millis) -> Option<i32> {
    let meets = |window: i32| {
        let mut changed = autoscaler.clone();
        changed.behavior.as_mut()?.scale_up.window_seconds = window;
        velocity::fastest_within(&changed, true, threshold)
            .arrival()
            .filter(|t| *t <= threshold)
    };
    meets(0)?;
    let (mut low, mut high) = (0, autoscaler.behavior.as_ref()?.scale_up.window_seconds);
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        if meets(middle).is_some() {
            low = middle;
        } else {
            high = middle;
        }
    }
    Some(low)
}

/// The smallest value of policy `index` with which the fastest scale-up
/// meets the threshold (the time only shrinks as a value grows).
fn value_meeting(autoscaler: &Autoscaler, index: usize, threshold: Millis) -> Option<i32> {
    let with_value = |value: i32| {
        let mut changed = autoscaler.clone();
        let rules: &mut Rules = &mut changed.behavior.as_mut()?.scale_up;
        rules.policies[index].value = value;
        velocity::fastest_within(&changed, true, threshold)
            .arrival()
            .filter(|t| *t <= threshold)
    };
    let current = autoscaler.behavior.as_ref()?.scale_up.policies[index].value;
    let (mut low, mut high) = (current, 1_000_000);
    with_value(high)?;
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        if with_value(middle).is_some() {
            high = middle;
        } else {
            low = middle;
        }
    }
    Some(high)
}

#[cfg(test)]
mod tests {
    use super::{MAX_POLICIES, RULE};
    use crate::settings::Settings;
    use crate::testing::{check_fixture, check_fixture_with, lint_yaml, only, rule_fixture};

    #[test]
    fn more_policies_than_any_hpa_needs_are_not_judged() {
        let hpa = |policies: usize| {
            let one = "{type: Pods, value: 1, periodSeconds: 60}";
            format!(
                "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {{name: web}}\n\
                 spec:\n  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}\n  \
                 maxReplicas: 100\n  behavior:\n    scaleUp:\n      policies: [{}]\n",
                vec![one; policies].join(", ")
            )
        };
        assert_eq!(lint_yaml(&hpa(MAX_POLICIES), &only(&RULE)).len(), 1);
        assert!(lint_yaml(&hpa(MAX_POLICIES + 1), &only(&RULE)).is_empty());
    }

    #[test]
    fn fixture() {
        insta::assert_snapshot!(check_fixture(&RULE));
    }

    #[test]
    fn a_path_past_the_horizon_is_not_called_endless() {
        // One pod per 1800 s after a 3600 s window: 100 replicas take 50 h,
        // past the day a path is followed for; it is not "forever".
        let hpa = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\n\
                   spec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  \
                   maxReplicas: 100\n  behavior:\n    scaleUp:\n      stabilizationWindowSeconds: 60\n      \
                   policies: [{type: Pods, value: 1, periodSeconds: 1800}]\n";
        let found = lint_yaml(hpa, &only(&RULE));
        assert_eq!(found.len(), 1);
        assert!(
            found[0].text.contains(
                "takes more than 24h (it reaches 49 by then), longer than 10m: limited by `Pods 1 per 1800s`"
            ),
            "{}",
            found[0].text
        );
    }

    #[test]
    fn the_threshold_is_configurable() {
        // With 40 minutes, only the HPAs that never get there remain.
        let mut settings = Settings::default();
        settings.slow_scale_up_threshold = 40 * 60_000;
        let text = rule_fixture("slow-scale-up")
            .replace(
                "periodSeconds: 60}  # expect: slow-scale-up",
                "periodSeconds: 60}",
            )
            .replace("900  # expect: slow-scale-up", "900");
        insta::assert_snapshot!(check_fixture_with(&RULE, &text, settings));
    }
}
