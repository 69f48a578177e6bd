//! `invalid-labels`: label keys and values the API server rejects (M7, M8).

use crate::diagnostic::{Reason, Severity};
use crate::context::{Check, Context, Report};
use crate::model::names::{label_value, qualified_name};
use crate::path::FieldPath;
use crate::quote::quoted;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "invalid-labels",
    category: Category::ApiServer,
    severity: Severity::Error,
    summary: "a label key is not a qualified name or a label value is not a valid label value",
    docs: r#"## What it does
Checks `metadata.labels`:
- each key must be a qualified name: an optional DNS subdomain prefix and `/`,
  then a name of at most 63 bytes of letters, digits, `-`, `_` and `.`,
  starting and ending with a letter or digit;
- each value must be empty or at most 63 bytes of the same characters,
  starting and ending with a letter or digit.

The server reports every problem at `metadata.labels`, with the bad key or
value as the value.

## Why is this bad?
The API server rejects the HPA with HTTP 422. Values copied from elsewhere
(versions with `+`, URLs, long descriptions) are the usual culprits; such
data belongs in an annotation.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  labels:
    app.kubernetes.io/version: 1.2.3+build.4
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
  labels:
    app.kubernetes.io/version: 1.2.3-build.4
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
```

## API server
- `metadata.labels: Invalid value: "1.2.3+build.4": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`
- `metadata.labels: Invalid value: "…": must be no more than 63 bytes` (up to 1.34: `characters`)
- `metadata.labels: Invalid value: "app/web/x": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')` (up to 1.34: `a qualified name must …`)
- `metadata.labels: Invalid value: "/web": prefix part must be non-empty`
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    let version = cx.settings.cluster.kube_version;
    // Made for findings only: most labels have none.
    let path = || FieldPath::fields("metadata.labels");
    for (key, value) in cx.hpa.metadata.labels.iter() {
        for message in qualified_name(key, version) {
            out.field_error(path(), Reason::Invalid, Some(quoted(key)), &message);
        }
        for message in label_value(value, version) {
            out.field_error(path(), Reason::Invalid, Some(quoted(value)), &message);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RULE;
    use crate::cluster::KubeVersion;
    use crate::settings::Settings;
    use crate::testing::{check_fixture, lint_yaml, only_with};

    #[test]
    fn fixture() {
        insta::assert_snapshot!(check_fixture(&RULE));
    }

    fn messages(labels: &str, minor: u32) -> Vec<String> {
        let text = format!(
            "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: web\n  labels: {labels}\nspec:\n  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}\n  maxReplicas: 3\n"
        );
        lint_yaml(
            &text,
            &only_with(&RULE, Settings::new(KubeVersion::new(minor))),
        )
        .into_iter()
        .map(|f| f.text)
        .collect()
    }

    #[test]
    fn m7_m8_wording_changed_in_1_35() {
        let labels = format!("{{a/b/c: x, app: {}}}", "v".repeat(64));
        let old = messages(&labels, 34);
        let new = messages(&labels, 35);
        assert!(old[0].contains(r#"Invalid value: "a/b/c": a qualified name must consist"#));
        assert!(new[0].contains(r#"Invalid value: "a/b/c": a valid label key must consist"#));
        assert!(old[1].ends_with(": must be no more than 63 characters"));
        assert!(new[1].ends_with(": must be no more than 63 bytes"));
    }
}
