//! `duplicate-key`: a mapping key that appears twice in one YAML mapping.

use crate::diagnostic::Severity;
use crate::quote::quoted;
use crate::registry::{Category, Check, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "duplicate-key",
    category: Category::Input,
    severity: Severity::Error,
    summary: "a YAML mapping has the same key twice",
    docs: r#"## What it does
Reports every repeated key in a YAML mapping, at the repeated key. The rest of
the document is still linted, with the last value winning as in most YAML
readers.

## Why is this bad?
`kubectl` rejects the document (`mapping key "maxReplicas" already defined`),
and tools that accept it disagree about which value wins: one of the two values
is silently ignored.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 5
  maxReplicas: 10
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
"#,
    fix: FixAvailability::None,
    check: Check::Input,
};

/// The message for a repeated key, worded like kubectl's YAML reader.
pub fn message(key: &str) -> String {
    format!("mapping key {} already defined", quoted(key))
}
