//! `unknown-field`: a field the HPA's type does not have (strict decoding).

use crate::diagnostic::Severity;
use crate::registry::{Category, Check, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "unknown-field",
    category: Category::ApiServer,
    severity: Severity::Error,
    summary: "a field the API version does not define (a typo, or a field of another version)",
    docs: r#"## What it does
Reports fields that `autoscaling/v2` or `autoscaling/v1` does not define,
exactly as the API server's strict decoding does: a typo such as
`stabilizationWindowSecond`, a v2beta1 field such as `targetAverageUtilization`
in a v2 object, or `tolerance` before Kubernetes 1.33.

## Why is this bad?
`kubectl apply` validates strictly by default and fails with
`strict decoding error: unknown field "spec.behavior.scaleDown.stabilizationWindowSecond"`.
With validation off, the field is silently dropped: the HPA runs without the
setting you wrote.

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
      stabilizationWindowSecond: 600
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
      stabilizationWindowSeconds: 600
```

## API server
Rejected with HTTP 400 (`BadRequest`) before validation: `strict decoding error: unknown field "<path>"`.
The reason in hpa-lint's output is `BadRequest`.
"#,
    check: Check::Input,
};
