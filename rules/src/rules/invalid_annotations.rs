//! `invalid-annotations`: annotation keys and sizes the API server rejects (M9, M10).

use std::borrow::Cow;

use crate::diagnostic::{Reason, Severity};
use crate::context::{Check, Context, Report};
use crate::model::names::qualified_name;
use crate::path::FieldPath;
use crate::quote::quoted;
use crate::registry::{Category, FixAvailability, Rule};

/// `TotalAnnotationSizeLimitB`: 256 KiB of keys and values together.
const MAX_TOTAL_SIZE: usize = 256 * 1024;

/// The rule.
pub static RULE: Rule = Rule {
    name: "invalid-annotations",
    category: Category::ApiServer,
    severity: Severity::Error,
    summary: "an annotation key is not a qualified name, or the annotations exceed 256 KiB",
    docs: r#"## What it does
Checks `metadata.annotations`:
- each key, lower-cased, must be a qualified name: an optional DNS subdomain
  prefix and `/`, then a name of at most 63 bytes of letters, digits, `-`,
  `_` and `.`, starting and ending with a letter or digit (so, unlike label
  keys, `Example.com/Owner` is fine);
- all keys and values together must not exceed 262144 bytes.

Values are not checked otherwise.

## Why is this bad?
The API server rejects the HPA with HTTP 422. Keys with spaces or a second
`/` are typos; oversized annotations usually come from tools that store whole
documents in them.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  annotations:
    team.example.com/on call: platform
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
  annotations:
    team.example.com/on-call: platform
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
```

## API server
- `metadata.annotations: Invalid value: "team.example.com/on call": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`
- `metadata.annotations: Too long: may not be more than 262144 bytes`
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    let version = cx.settings.cluster.kube_version;
    // Made for findings only: most annotations have none.
    let path = || FieldPath::fields("metadata.annotations");
    let annotations = &cx.hpa.metadata.annotations;
    for (key, _) in annotations.iter() {
        // M9: case does not matter in annotation keys; the bad value is the key as written.
        let lower = if key.bytes().any(|b| b.is_ascii_uppercase() || !b.is_ascii()) {
            Cow::Owned(go_lowercase(key))
        } else {
            Cow::Borrowed(key)
        };
        for message in qualified_name(&lower, version) {
            out.field_error(path(), Reason::Invalid, Some(quoted(key)), &message);
        }
    }
    // M10: bytes of every key and value together.
    let size: usize = annotations.iter().map(|(k, v)| k.len() + v.len()).sum();
    if size > MAX_TOTAL_SIZE {
        out.field_error(
            path(),
            Reason::TooLong,
            None,
            &format!("may not be more than {MAX_TOTAL_SIZE} bytes"),
        );
    }
}

/// Go's `strings.ToLower`: each character's own lowercase. Rust's
/// `to_lowercase` makes `İ` two characters (`i` and a combining dot) and a
/// final `Σ` a `ς`; Go makes them `i` and `σ`.
fn go_lowercase(key: &str) -> String {
    key.chars()
        .flat_map(|c| if c == 'İ' { 'i' } else { c }.to_lowercase())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{MAX_TOTAL_SIZE, RULE};
    use crate::testing::{check_fixture, lint_yaml, only};

    #[test]
    fn fixture() {
        insta::assert_snapshot!(check_fixture(&RULE));
    }

    /// An HPA whose annotations take `size` bytes: the key `a` and a value.
    fn with_annotations_of(size: usize) -> String {
        format!(
            "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: web\n  annotations:\n    a: {}\nspec:\n  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}\n  maxReplicas: 3\n",
            "x".repeat(size - 1)
        )
    }

    /// Keys are lowercased as Go's `strings.ToLower` does before they are
    /// checked: `İ` becomes `i` and the Kelvin sign `k`, both valid.
    #[test]
    fn m9_lowercases_keys_as_go_does() {
        let hpa = |key: &str| {
            format!(
                "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: web\n  annotations:\n    {key}: x\nspec:\n  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}\n  maxReplicas: 3\n"
            )
        };
        for key in ["İstio.io/x", "\u{212A}ey", "Team.Example.COM/On-Call"] {
            assert!(lint_yaml(&hpa(key), &only(&RULE)).is_empty(), "{key}");
        }
        assert_eq!(lint_yaml(&hpa("ΑΣ/x"), &only(&RULE)).len(), 1);
        assert_eq!(super::go_lowercase("İΣΑΣ"), "iσασ");
    }

    #[test]
    fn m10_allows_exactly_256_kib() {
        assert!(lint_yaml(&with_annotations_of(MAX_TOTAL_SIZE), &only(&RULE)).is_empty());
        let findings = lint_yaml(&with_annotations_of(MAX_TOTAL_SIZE + 1), &only(&RULE));
        let texts: Vec<&str> = findings.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(
            texts,
            ["metadata.annotations: Too long: may not be more than 262144 bytes"]
        );
    }
}
