//! `duplicate-key`: a mapping key that appears twice in one YAML mapping.

use crate::diagnostic::Severity;
use crate::context::{Check, DocumentFinding};
use crate::path::Segment;
use crate::quote::{quoted, shown};
use crate::registry::{Category, FixAvailability, Rule};
use crate::source::{Problem, ProblemKind};

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
    manifests_only: true,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Document(check);

fn check(problem: &Problem) -> Option<DocumentFinding> {
    if problem.kind != ProblemKind::DuplicateKey {
        return None;
    }
    let key = match problem.path.segments().last() {
        Some(Segment::Field(name) | Segment::Key(name)) => shown(name).into_owned(),
        _ => String::new(),
    };
    Some(DocumentFinding {
        message: format!("mapping key {} already defined", quoted(&key)),
        help: None,
    })
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
