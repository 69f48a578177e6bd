//! `invalid-name`: `metadata.name` and `metadata.generateName` the API server rejects (M1, M2, M3, M3b).

use std::borrow::Cow;

use crate::diagnostic::{Reason, Severity};
use crate::context::{Check, Context, Operation, Report};
use crate::model::names::dns1123_subdomain;
use crate::path::FieldPath;
use crate::quote::quoted;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "invalid-name",
    category: Category::ApiServer,
    severity: Severity::Error,
    summary: "`metadata.name` or `metadata.generateName` missing or not a lowercase DNS subdomain",
    docs: r#"## What it does
Checks the name of a new HPA the way the API server does:
- `metadata.name` or `metadata.generateName` is required;
- the name must be a lowercase RFC 1123 subdomain: at most 253 bytes of
  lowercase letters, digits, `-` and `.`, starting and ending with a letter or
  digit;
- `metadata.generateName`, when set, must be one too, except that it may end
  in `-` (an upstream quirk checks it with its last two bytes replaced by `a`);
- without a `name`, the server generates one (the first 58 bytes of
  `generateName` and 5 random characters, shown here as `xxxxx`) and checks
  it like a written name, so `generateName: ab.-` passes its own check but
  yields an invalid name.

On update the name is immutable and not checked again.

## Why is this bad?
The API server rejects the HPA with HTTP 422. Upper-case letters and
underscores, common in names copied from elsewhere, are not allowed.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: Web_HPA
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
```

Use instead:
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web-hpa
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
```

## API server
- `metadata.name: Required value: name or generateName is required`
- `metadata.name: Invalid value: "Web_HPA": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
- `metadata.name: Invalid value: "…": must be no more than 253 characters`
- `metadata.generateName: Invalid value: "Web-": …` (the same messages)
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

/// `generateName` is cut to this many bytes before the random suffix.
const MAX_GENERATED_PREFIX: usize = 58;

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    // On update the name is only compared with the stored one (it is immutable).
    if !matches!(cx.operation, Operation::Create) {
        return;
    }
    let meta = &cx.hpa.metadata;
    let prefix = &meta.generate_name;
    if !prefix.is_empty() {
        for message in dns1123_subdomain(&mask_trailing_dash(prefix)) {
            out.field_error(
                FieldPath::fields("metadata.generateName"),
                Reason::Invalid,
                Some(quoted(prefix)),
                &message,
            );
        }
    }
    // The name is generated before validation (apiserver-hpa-rules.md §0 step 4).
    let name = if meta.name.is_empty() && !prefix.is_empty() {
        Cow::Owned(format!("{}xxxxx", go_prefix(prefix, MAX_GENERATED_PREFIX)))
    } else {
        Cow::Borrowed(&meta.name)
    };
    // Made for findings only: most names have none.
    let path = || FieldPath::fields("metadata.name");
    if name.is_empty() {
        out.field_error(
            path(),
            Reason::Required,
            None,
            "name or generateName is required",
        );
        return;
    }
    for message in dns1123_subdomain(&name) {
        out.field_error(path(), Reason::Invalid, Some(quoted(&name)), &message);
    }
}

/// M1 quirk: a `generateName` longer than one byte that ends in `-` is checked
/// with its last two bytes replaced by `a` (`my-hpa-` as `my-hpa`, `ab--` as `aba`).
fn mask_trailing_dash(prefix: &str) -> Cow<'_, str> {
    if prefix.len() > 1 && prefix.ends_with('-') {
        Cow::Owned(format!("{}a", go_prefix(prefix, prefix.len() - 2)))
    } else {
        Cow::Borrowed(prefix)
    }
}

/// The first `len` bytes of `s`, cut the way Go cuts strings: possibly inside a
/// character. Non-ASCII bytes become `_`, which keeps the byte length and fails
/// the name rules exactly as they do.
fn go_prefix(s: &str, len: usize) -> String {
    s.bytes()
        .take(len)
        .map(|b| if b.is_ascii() { char::from(b) } else { '_' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::RULE;
    use crate::index::MemoryIndex;
    use crate::context::Operation;
    use crate::lint::lint;
    use crate::object::{Object, Origin};
    use crate::settings::Settings;
    use crate::testing::{check_fixture, only_with};

    #[test]
    fn fixture() {
        insta::assert_snapshot!(check_fixture(&RULE));
    }

    #[test]
    fn m1_m3_only_on_create() {
        // On update the name is immutable: it is compared, not validated.
        let value = serde_json::json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "Web_HPA", "generateName": "Web-"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "maxReplicas": 3}
        });
        let hpa = Object::new(value, Origin(0), "default").unwrap();
        let settings = only_with(&RULE, Settings::default());
        let index = MemoryIndex::default();
        assert!(lint(&hpa, Operation::Update { old: &hpa }, &index, &settings).is_empty());
        assert_eq!(lint(&hpa, Operation::Create, &index, &settings).len(), 2);
    }
}
