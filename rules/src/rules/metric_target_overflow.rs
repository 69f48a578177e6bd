//! `metric-target-overflow`: a target too large for the controller's arithmetic.

use crate::context::{Check, Context, Report};
use crate::diagnostic::Severity;
use crate::path::FieldPath;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "metric-target-overflow",
    category: Category::Suspicious,
    severity: Severity::Warning,
    summary: "a metric target too large for the HPA controller's integer arithmetic",
    docs: r#"## What it does
Checks each metric's `target.value` and `target.averageValue`: the HPA
controller reads them in thousandths of a unit as a 64-bit integer
(`MilliValue()`), which holds at most 9,223,372,036,854,775,807, so a target
from about 9.2 × 10¹⁵ up (`10Pi`, `1Ei`, `1e16`) does not fit. The API
server accepts such a target: it only asks that it be positive.

## Why is this bad?
Go's `MilliValue()` does not fail when the value does not fit: it wraps
around or returns 0, depending on how the quantity was written. The
controller then divides the metric by a meaningless target, and the HPA
scales to a count unrelated to the load, or to `maxReplicas` at once.
`hpa-lint simulate` does not follow it there: it counts such a metric as
failing.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: ingest
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: ingest}
  maxReplicas: 10
  metrics:
    - type: External
      external:
        metric: {name: bytes_received}
        target: {type: AverageValue, averageValue: 1Ei}
```

Use instead:
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: ingest
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: ingest}
  maxReplicas: 10
  metrics:
    - type: External
      external:
        metric: {name: bytes_received_gib}
        target: {type: AverageValue, averageValue: "512"}
```
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    for (i, spec) in cx.hpa.metrics.iter().enumerate() {
        let Some(source) = spec.source() else {
            continue;
        };
        let target = source.target();
        for (field, quantity) in [
            ("value", &target.value),
            ("averageValue", &target.average_value),
        ] {
            let Some(quantity) = quantity.as_ref().filter(|q| q.is_positive()) else {
                continue;
            };
            if quantity.milli_value().is_some() {
                continue;
            }
            let path = FieldPath::fields("spec.metrics")
                .index(i)
                .field(source.member())
                .field("target")
                .field(field);
            out.report(
                path,
                format!(
                    "`{field}: {quantity}` does not fit the HPA controller's integer arithmetic: \
                     in thousandths it exceeds 9,223,372,036,854,775,807, and the controller \
                     computes with an overflowed number"
                ),
            )
            .help("scale the metric down (a unit a thousand or a million times larger) and its target with it");
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
