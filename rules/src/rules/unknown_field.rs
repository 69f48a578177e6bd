//! `unknown-field`: a field the HPA's type does not have (strict decoding).

use serde_json::Value;

use crate::context::{Check, Report};
use crate::diagnostic::Severity;
use crate::fix::{Edit, Fix};
use crate::model::decode::{DecodeError, DecodeErrorKind, Wanted};
use crate::model::hpa::v2beta1_member_to_v2;
use crate::object::Object;
use crate::path::Segment;
use crate::quote::code;
use crate::registry::{Category, FixAvailability, Rule};
use crate::source::flow_yaml;
use crate::suggest::closest;

/// The rule.
pub static RULE: Rule = Rule {
    name: "unknown-field",
    category: Category::ApiServer,
    severity: Severity::Error,
    summary: "a field the API version does not define (a typo, or a field of another version)",
    docs: r#"## What it does
Reports fields that the HPA's API version does not define (`autoscaling/v2`,
`v1`, and `v2beta2` or `v2beta1` where the Kubernetes release still serves
them), exactly as the API server's strict decoding does: a typo such as
`stabilizationWindowSecond`, or `tolerance` before Kubernetes 1.33. Fields
in `status` count too (the server decodes it before it clears it), such as a
condition's `observedGeneration` before 1.37.

A metric written the `autoscaling/v2beta1` way in a newer version, such as
`resource: {name: cpu, targetAverageUtilization: 50}`, is one finding on the
metric source, which names the `v2beta1` fields and shows the source in the
shape of the HPA's version. Its message is the server's (each unknown field,
joined as the server joins them). Without strict field validation the server
drops those fields and rejects the metric for what is then missing (such as
`target.type: Required value`); hpa-lint reads the metric as `v2beta1` meant
it, so the other rules judge the target that was written rather than report
that it is missing.

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
A metric source in the `autoscaling/v2beta1` shape is rewritten in the shape
of the HPA's version, the way the API server converted `v2beta1`
(`targetAverageUtilization: 50` becomes `target: {type: Utilization,
averageUtilization: 50}`; the same conversion as `deprecated-api-version`'s
fix). It is safe: the API server rejects the HPA as written, and the fix makes
it mean what the fields meant in `v2beta1`.

Otherwise, when exactly one field of the same object is within two typing
mistakes of the unknown one (a wrong letter case, a missing, extra, swapped or
wrong letter) and is not set already, `--unsafe-fixes` renames the key to it. It is unsafe:
the renamed field starts to take effect, which changes how the HPA behaves.
"#,
    fix: FixAvailability::Sometimes,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Decode(check);

fn check(error: &DecodeError, object: &Object, out: &mut Report<'_>) {
    if error.kind != DecodeErrorKind::UnknownField {
        return;
    }
    let finding = out.decode_error(error);
    let fix = if error.wanted == Wanted::V2Shape {
        v2beta1_source(error, &object.value).map(|(help, fix)| {
            finding.help(help);
            fix
        })
    } else {
        fix(error, &object.value)
    };
    if let Some(fix) = fix {
        finding.fix(fix);
    }
}

/// A metric source written the `autoscaling/v2beta1` way: a help line naming
/// the `v2beta1` fields, and the source converted as the server converted it.
fn v2beta1_source(error: &DecodeError, object: &Value) -> Option<(String, Fix)> {
    let Some(Segment::Field(member)) = error.path.segments().last() else {
        return None;
    };
    let written = object.pointer(&error.path.pointer())?;
    let converted = v2beta1_member_to_v2(member, written)?;
    let legacy: Vec<String> = written
        .as_object()?
        .keys()
        .filter(|key| converted.get(key.as_str()).is_none())
        .map(|key| code(key))
        .collect();
    let (fields, are, them) = match legacy.as_slice() {
        [one] => (one.clone(), "is an", "it"),
        [rest @ .., last] => (format!("{} and {last}", rest.join(", ")), "are", "them"),
        [] => return None,
    };
    let help = format!(
        "{fields} {are} `autoscaling/v2beta1` field{s}: in `{version}` this metric is \
         `{member}: {shape}`. Without strict field validation the API server drops {them} and \
         rejects the metric for what is then missing",
        s = if legacy.len() == 1 { "" } else { "s" },
        version = object["apiVersion"].as_str().unwrap_or("autoscaling/v2"),
        shape = flow_yaml(&converted),
    );
    let fix = Fix::safe(
        format!("rewrite {} in the `autoscaling/v2` shape", code(member)),
        vec![Edit::Set {
            path: error.path.clone(),
            value: converted,
        }],
    );
    Some((help, fix))
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
    use crate::cluster::KubeVersion;
    use crate::settings::Settings;
    use crate::testing::{check_fix_fixture, check_fixture, check_fixture_with, rule_fixture};

    #[test]
    fn fixture() {
        insta::assert_snapshot!(check_fixture(&RULE));
    }

    /// `v2beta1` and `v2beta2` decode as strictly as `v2` where they are served.
    #[test]
    fn fixture_of_served_betas() {
        insta::assert_snapshot!(check_fixture_with(
            &RULE,
            &rule_fixture("unknown-field.served-betas"),
            Settings::new(KubeVersion::new(24))
        ));
    }

    #[test]
    fn fix() {
        insta::assert_snapshot!(check_fix_fixture(&RULE));
    }
}
