//! `helm-template`: a file holding Helm template syntax, which is not YAML yet.

use crate::context::{Check, DocumentFinding};
use crate::diagnostic::Severity;
use crate::registry::{Category, FixAvailability, Rule};
use crate::source::{Problem, ProblemKind};

/// The rule.
pub static RULE: Rule = Rule {
    name: "helm-template",
    category: Category::Input,
    severity: Severity::Info,
    summary: "a file is a Helm template; it is skipped",
    docs: r#"## What it does
Detects Helm (Go template) actions such as `{{ .Values.replicas }}` or
`{{- if .Values.autoscaling.enabled }}` where YAML would read them as syntax,
and skips the whole file with this note, at the first action. Template actions
inside quoted strings, block scalars and comments are plain text and do not
count.

## Why is this bad?
A template is not a manifest: what it produces depends on the values, so
linting the template text would report noise. Lint what Helm renders instead:

```text
helm template my-release ./chart -f values-prod.yaml | hpa-lint -
```

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: {{ .Values.autoscaling.maxReplicas }}
```

Use instead (the rendered output):
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
    (problem.kind == ProblemKind::Template).then(|| DocumentFinding {
        message: "this file is a Helm template, not YAML; it was skipped".to_owned(),
        help: Some("lint the rendered chart instead: `helm template <release> <chart> | hpa-lint -`"),
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
