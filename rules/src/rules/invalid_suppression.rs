//! `invalid-suppression`: a `hpa-lint.io/ignore.<rule>` annotation without a
//! reason, or naming no rule.

use serde_json::Value;

use crate::context::{Check, Report};
use crate::diagnostic::Severity;
use crate::object::{Object, SUPPRESSION_PREFIX};
use crate::path::{FieldPath, get};
use crate::quote::code;
use crate::registry::{Category, FixAvailability, Rule};
use crate::rules::{by_name, closest_name};
use crate::suggest::did_you_mean;

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
    manifests_only: true,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Object(check);

const HELP: &str =
    "write why the rule does not apply: `hpa-lint.io/ignore.<rule-name>: \"<reason>\"`";

fn check(object: &Object, out: &mut Report<'_>) {
    let annotations = get(&object.value, &["metadata", "annotations"]).and_then(Value::as_object);
    for (key, value) in annotations.into_iter().flatten() {
        let Some(name) = key.strip_prefix(SUPPRESSION_PREFIX) else {
            continue;
        };
        if let Some(message) = problem(name, value) {
            let path = FieldPath::fields("metadata.annotations").key(key);
            out.report(path, message).help(HELP);
        }
    }
}

/// What is wrong with `hpa-lint.io/ignore.<name>: <value>`, if anything.
fn problem(name: &str, value: &Value) -> Option<String> {
    if by_name(name).is_none() {
        let hint = did_you_mean(closest_name(name));
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

#[cfg(test)]
mod tests {
    use super::RULE;
    use crate::testing::check_fixture;

    #[test]
    fn fixture() {
        insta::assert_snapshot!(check_fixture(&RULE));
    }
}
