//! `unknown-field`: a field the HPA's type does not have (strict decoding).

use serde_json::Value;

use crate::context::{Check, Report};
use crate::diagnostic::Severity;
use crate::fix::{Edit, Fix};
use crate::model::decode::{DecodeError, DecodeErrorKind, Wanted};
use crate::object::Object;
use crate::path::Segment;
use crate::quote::code;
use crate::registry::{Category, FixAvailability, Rule};
use crate::suggest::closest;

/// The rule.
pub static RULE: Rule = Rule {
    name: "unknown-field",
    category: Category::ApiServer,
    severity: Severity::Error,
    summary: "a field the API version does not define (a typo, or a field of another version)",
    docs: r#"## What it does
Reports fields that `autoscaling/v2` or `autoscaling/v1` does not define,
exactly as the API server's strict decoding does: a typo such as
`stabilizationWindowSecond`, a v2beta1 field such as `targetAverageUtilization`
in a v2 object, or `tolerance` before Kubernetes 1.33.

## Why is this bad?
`kubectl apply` validates strictly by default and fails with
`strict decoding error: unknown field "spec.behavior.scaleDown.stabilizationWindowSecond"`.
With validation off, the field is silently dropped: the HPA runs without the
setting you wrote.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
  behavior:
    scaleDown:
      stabilizationWindowSecond: 600
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
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 600
```

## API server
Rejected with HTTP 400 (`BadRequest`) before validation: `strict decoding error: unknown field "<path>"`.
The reason in hpa-lint's output is `BadRequest`.

## Fix safety
When exactly one field of the same object is within two typing mistakes of the
unknown one (a wrong letter case, a missing, extra, swapped or wrong letter)
and is not set already, `--unsafe-fixes` renames the key to it. It is unsafe:
the renamed field starts to take effect, which changes how the HPA behaves.
"#,
    fix: FixAvailability::Sometimes,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Decode(check);

fn check(error: &DecodeError, object: &Object, out: &mut Report<'_>) {
    if error.kind == DecodeErrorKind::UnknownField {
        let finding = out.decode_error(error);
        if let Some(fix) = fix(error, &object.value) {
            finding.fix(fix);
        }
    }
}

/// Most typing mistakes a misspelt field name is taken to have.
const MAX_MISTAKES: usize = 2;

/// The rename of a misspelt field to the one field of its object it is close
/// to, when there is exactly one and it is not set already.
pub(crate) fn fix(error: &DecodeError, object: &Value) -> Option<Fix> {
    let Wanted::Field(fields) = error.wanted else {
        return None;
    };
    let Some(Segment::Field(name) | Segment::Key(name)) = error.path.segments().last() else {
        return None;
    };
    let siblings = object
        .pointer(&error.path.parent()?.pointer())?
        .as_object()?;
    // Short names are too easily close to another field by chance.
    let max = MAX_MISTAKES.min(name.chars().count() / 4);
    let field = closest(name, fields.iter().copied(), max)?;
    if siblings.contains_key(field) {
        return None;
    }
    Some(Fix::unsafe_edit(
        format!("rename {} to {}", code(name), code(field)),
        vec![Edit::Rename {
            path: error.path.clone(),
            to: field.to_owned(),
        }],
    ))
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
