//! `invalid-field-type`: a value of the wrong JSON type, or an integer out of range.

use crate::diagnostic::Severity;
use crate::registry::{Category, Check, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "invalid-field-type",
    category: Category::ApiServer,
    severity: Severity::Error,
    summary: "a field has the wrong type (a quoted number, a list for an object) or overflows int32",
    docs: r#"## What it does
Reports values the API server cannot decode into the HPA's Go types: a string
where a number belongs (`maxReplicas: "5"`), an object where a list belongs,
a number in a label value (`version: 1.0`), or an integer outside int32.

## Why is this bad?
The API server rejects the request before it validates anything:
`json: cannot unmarshal string into Go struct field HorizontalPodAutoscalerSpec.spec.maxReplicas of type int32`.
While an HPA has such an error, hpa-lint skips the other API-server rules on
it, as the server does.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: "10"
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
```

## API server
Rejected with HTTP 400 (`BadRequest`); the message is Go's JSON decoding error.
"#,
    check: Check::Input,
};
