//! `invalid-quantity`: a quantity string the API server cannot parse.

use crate::context::{Check, Report};
use crate::model::decode::{DecodeError, DecodeErrorKind};
use crate::object::Object;
use crate::diagnostic::Severity;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "invalid-quantity",
    category: Category::ApiServer,
    severity: Severity::Error,
    summary: "a quantity (`value`, `averageValue`, `tolerance`) does not follow the quantity grammar",
    docs: r#"## What it does
Parses `target.value`, `target.averageValue` and `behavior.*.tolerance` with
the API server's quantity grammar: an optional sign, a decimal number, and one
suffix (`m`, `k`, `M`, `G`, ... decimal; `Ki`, `Mi`, `Gi`, ... binary; or an
exponent such as `e3`).

## Why is this bad?
The request fails at decoding with HTTP 400. Common slips are `1K` (the suffix
is lower-case `k`), `100mi` (`Mi`), `1.5 G` (no spaces) and `10%`.

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
  - type: Pods
    pods:
      metric: {name: requests_per_second}
      target: {type: AverageValue, averageValue: 1K}
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
  - type: Pods
    pods:
      metric: {name: requests_per_second}
      target: {type: AverageValue, averageValue: 1k}
```

## API server
Rejected with HTTP 400: `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
`unable to parse quantity's suffix` or `unable to parse numeric part of quantity`.
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Decode(check);

fn check(error: &DecodeError, _: &Object, out: &mut Report<'_>) {
    if error.kind == DecodeErrorKind::Quantity {
        out.decode_error(error);
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
