//! `invalid-suppression`: a `hpa-lint.io/ignore.<rule>` annotation without a
//! reason, or naming no rule.

use crate::diagnostic::Severity;
use crate::quote::code;
use crate::registry::{self, Category, Check, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "invalid-suppression",
    category: Category::Input,
    severity: Severity::Warning,
    summary: "a suppression annotation has no reason or names an unknown rule",
    docs: r#"## What it does
Checks the annotations that suppress findings,
`hpa-lint.io/ignore.<rule-name>: "<reason>"`: the reason must not be empty,
and the rule name must exist.

## Why is this bad?
A suppression without a reason is a finding nobody can judge later; one with a
misspelt rule name suppresses nothing.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  annotations:
    hpa-lint.io/ignore.min-equals-max: ""
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 3
  maxReplicas: 3
```

Use instead:
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  annotations:
    hpa-lint.io/ignore.min-equals-max: "pinned at 3 during the migration, see TICKET-42"
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 3
  maxReplicas: 3
```
"#,
    fix: FixAvailability::None,
    check: Check::Input,
};

/// The help shown with every finding of this rule.
pub const HELP: &str =
    "write why the rule does not apply: `hpa-lint.io/ignore.<rule-name>: \"<reason>\"`";

/// What is wrong with `hpa-lint.io/ignore.<name>: <value>`, if anything.
pub fn problem(name: &str, value: &serde_json::Value) -> Option<String> {
    if registry::by_name(name).is_none() {
        let hint = crate::suggest::did_you_mean(registry::closest_name(name));
        return Some(format!(
            "suppression names unknown rule {}{hint}",
            code(name)
        ));
    }
    let reason = value.as_str().unwrap_or_default().trim();
    reason
        .is_empty()
        .then(|| format!("suppression of {} gives no reason", code(name)))
}
