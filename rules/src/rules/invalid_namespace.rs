//! `invalid-namespace`: a `metadata.namespace` the API server rejects (M5).

use crate::diagnostic::{Reason, Severity};
use crate::context::{Check, Context, Operation, Report};
use crate::model::names::dns1123_label;
use crate::path::FieldPath;
use crate::quote::quoted;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "invalid-namespace",
    category: Category::ApiServer,
    severity: Severity::Error,
    summary: "`metadata.namespace` is not a lowercase DNS label",
    docs: r#"## What it does
Checks a `metadata.namespace` written in the HPA: it must be a lowercase
RFC 1123 label, at most 63 bytes of lowercase letters, digits and `-`,
starting and ending with a letter or digit (no dots).

A missing namespace is not a problem in a manifest: the API server takes it
from the request (the namespace `kubectl` targets), so its "namespace
required" error cannot happen here. On update the namespace is immutable and
not checked again.

## Why is this bad?
The API server rejects the HPA with HTTP 422. Namespaces are stricter than
object names: `team.prod` is a valid HPA name but not a valid namespace.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  namespace: team.prod
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
```

Use instead:
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  namespace: team-prod
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
```

## API server
- `metadata.namespace: Invalid value: "team.prod": must not contain dots`
- `metadata.namespace: Invalid value: "Team_A": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`
- `metadata.namespace: Invalid value: "…": must be no more than 63 characters`
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    // M4 (empty) cannot happen: the request supplies the namespace. On update the
    // namespace is only compared with the stored one (it is immutable).
    let namespace = &cx.hpa.metadata.namespace;
    if namespace.is_empty() || !matches!(cx.operation, Operation::Create) {
        return;
    }
    for message in dns1123_label(namespace) {
        out.field_error(
            FieldPath::fields("metadata.namespace"),
            Reason::Invalid,
            Some(quoted(namespace)),
            &message,
        );
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
