//! `invalid-yaml`: a document that is not valid YAML, or too large or deep to read safely.

use crate::context::{Check, DocumentFinding};
use crate::diagnostic::Severity;
use crate::registry::{Category, FixAvailability, Rule};
use crate::source::{Problem, ProblemKind};

/// The rule.
pub static RULE: Rule = Rule {
    name: "invalid-yaml",
    category: Category::Input,
    severity: Severity::Error,
    summary: "a document is not valid YAML (or exceeds the parser's safety limits)",
    docs: r#"## What it does
Reports a YAML document that cannot be parsed, at the line and column where the
parser stopped. The other documents of the file are still linted.

The parser also stops documents that would take unbounded time or memory:
alias bombs ("billion laughs"), nesting deeper than 128 levels and documents
with more than a few million nodes.

## Why is this bad?
`kubectl apply` rejects the whole file, so nothing in it reaches the cluster.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  maxReplicas: [5
```

Use instead:
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 5
```
"#,
    fix: FixAvailability::None,
    manifests_only: true,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Document(check);

fn check(problem: &Problem) -> Option<DocumentFinding> {
    matches!(problem.kind, ProblemKind::Syntax | ProblemKind::Conversion).then(|| DocumentFinding {
        message: problem.message.clone(),
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
