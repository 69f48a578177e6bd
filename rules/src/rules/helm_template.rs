//! `helm-template`: a file holding Helm template syntax, which is not YAML yet.

use crate::diagnostic::Severity;
use crate::registry::{Category, Check, FixAvailability, Rule};

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
    check: Check::Input,
};

/// The note shown for a skipped template.
pub const MESSAGE: &str = "this file is a Helm template, not YAML; it was skipped";
/// The help shown for a skipped template.
pub const HELP: &str =
    "lint the rendered chart instead: `helm template <release> <chart> | hpa-lint -`";
