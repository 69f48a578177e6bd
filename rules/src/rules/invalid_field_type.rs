//! `invalid-field-type`: a value of the wrong JSON type, or an integer out of range.

use serde_json::Value;

use crate::context::{Check, Report};
use crate::diagnostic::Severity;
use crate::fix::{Edit, Fix};
use crate::model::decode::{DecodeError, DecodeErrorKind, Wanted};
use crate::object::Object;
use crate::quote::quoted;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "invalid-field-type",
    category: Category::ApiServer,
    severity: Severity::Error,
    summary: "a field has the wrong type (a quoted number, a list for an object) or overflows int32",
    docs: r#"## What it does
Reports values the API server cannot decode into the HPA's Go types: a string
where a number belongs (`maxReplicas: "5"`), an object where a list belongs,
a number in a label value (`version: 1.0`), an integer outside int32, or a
time Go's `time.Parse` does not read as RFC 3339 (`creationTimestamp:
"2024-01-01"`). `status` is checked too: the server clears it on create, but
only after decoding it (objects read from a cluster are not checked there).

## Why is this bad?
The API server rejects the request before it validates anything:
`json: cannot unmarshal string into Go struct field HorizontalPodAutoscalerSpec.spec.maxReplicas of type int32`.
While an HPA has such an error, hpa-lint skips the other API-server rules on
it, as the server does.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: "10"
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

## API server
Rejected with HTTP 400 (`BadRequest`); the message is Go's JSON decoding error.

## Fix safety
A number or boolean written in quotes (`maxReplicas: "5"`, `controller:
"true"`) is unquoted by `--fix`. It is safe: the value is the one the author
wrote, in the type the field has.
"#,
    fix: FixAvailability::Sometimes,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Decode(check);

fn check(error: &DecodeError, object: &Object, out: &mut Report<'_>) {
    if error.kind == DecodeErrorKind::Type {
        let finding = out.decode_error(error);
        if let Some(fix) = fix(error, &object.value) {
            finding.fix(fix);
        }
    }
}

/// Unquotes a number or boolean written as a string where the field wants one.
pub(crate) fn fix(error: &DecodeError, object: &Value) -> Option<Fix> {
    let Wanted::Type(go_type) = error.wanted else {
        return None;
    };
    let Value::String(text) = object.pointer(&error.path.pointer())? else {
        return None;
    };
    let value = match go_type {
        "int32" => Value::from(text.parse::<i32>().ok().filter(|_| is_decimal(text))?),
        "int64" => Value::from(text.parse::<i64>().ok().filter(|_| is_decimal(text))?),
        "bool" => Value::from(match text.as_str() {
            "true" => true,
            "false" => false,
            _ => return None,
        }),
        _ => return None,
    };
    Some(Fix::safe(
        format!("unquote {}", quoted(text)),
        vec![Edit::Set {
            path: error.path.clone(),
            value,
        }],
    ))
}

/// Digits with an optional minus: what JSON would have read as the number.
fn is_decimal(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && !(digits.len() > 1 && digits.starts_with('0'))
}

#[cfg(test)]
mod tests {
    use super::RULE;
    use crate::testing::{check_fix_fixture, check_fixture};

    #[test]
    fn fixture() {
        insta::assert_snapshot!(check_fixture(&RULE));
    }

    #[test]
    fn fix() {
        insta::assert_snapshot!(check_fix_fixture(&RULE));
    }
}
