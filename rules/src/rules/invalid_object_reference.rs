//! `invalid-object-reference`: `spec.scaleTargetRef` and an Object metric's
//! `describedObject` the API server rejects (R1–R6, O1, O2).

use crate::diagnostic::{Reason, Severity};
use crate::context::{Check, Context, Report};
use crate::model::hpa::{Hpa, MetricSource, ObjectReference};
use crate::model::names::{parse_group_version, path_segment};
use crate::path::FieldPath;
use crate::quote::quoted;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "invalid-object-reference",
    category: Category::ApiServer,
    severity: Severity::Error,
    summary: "`scaleTargetRef` or an Object metric's `describedObject` without a usable kind, name or apiVersion",
    docs: r#"## What it does
Checks `spec.scaleTargetRef` and the `describedObject` of Object metrics:
- `kind` and `name` are required and must be usable in a URL path: not `.` or
  `..`, no `/` or `%`. Nothing else is checked: `deployment` or `Web` pass;
- since Kubernetes 1.34, `apiVersion` must not contain more than one `/`, and
  the one of `scaleTargetRef` must name an API group (`apps/v1`, not `v1` or
  nothing), except for kind `ReplicationController`. The version part is not
  checked (`apps/` passes). On update, `scaleTargetRef.apiVersion` is not
  checked when it and `kind` are unchanged, and no `describedObject.apiVersion`
  is checked when the old object already had an unparsable one.

## Why is this bad?
The API server rejects the HPA with HTTP 422. `apiVersion: v1` on a
Deployment target was accepted before 1.34, so old manifests start failing
after an upgrade.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: v1, kind: Deployment, name: web}
  maxReplicas: 10
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
- `spec.scaleTargetRef.kind: Required value`
- `spec.scaleTargetRef.name: Invalid value: "web/v2": may not contain '/'` (also `may not be '.'`, `may not be '..'`, `may not contain '%'`)
- `spec.scaleTargetRef.apiVersion: Invalid value: "v1": apiVersion must specify API group` (1.34+)
- `spec.metrics[0].object.describedObject.apiVersion: Invalid value: "networking.k8s.io/v1/ingress": unexpected GroupVersion string: networking.k8s.io/v1/ingress` (1.34+)
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

/// How an `apiVersion` is validated: the strategy's
/// `CrossVersionObjectReferenceValidationOptions`.
#[derive(Clone, Copy)]
enum ApiVersionRule {
    /// Not at all: before 1.34, or an update ratchet.
    Unchecked,
    /// It must parse (R5, O2).
    Parsable,
    /// It must parse and name an API group (R5, R6).
    WithGroup,
}

/// `ValidateAPIVersion`: why `api_version` breaks `rule`, if it does.
fn api_version_error(api_version: &str, rule: ApiVersionRule) -> Option<String> {
    let group_required = match rule {
        ApiVersionRule::Unchecked => return None,
        ApiVersionRule::Parsable => false,
        ApiVersionRule::WithGroup => true,
    };
    match parse_group_version(api_version) {
        Err(message) => Some(message),
        Ok(("", _)) if group_required => Some("apiVersion must specify API group".to_owned()),
        Ok(_) => None,
    }
}

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    let checks_api_version = cx.settings.cluster.kube_version.at_least(34);
    let target = &cx.hpa.scale_target_ref;
    // R5/R6 ratchet: an update that keeps apiVersion and kind does not check apiVersion.
    let unchanged = cx.old_hpa.is_some_and(|old| {
        let old = &old.scale_target_ref;
        old.api_version == target.api_version && old.kind == target.kind
    });
    let target_rule = if !checks_api_version || unchanged {
        ApiVersionRule::Unchecked
    } else if target.kind == "ReplicationController" {
        // The only scalable kind of the core group, which has no name.
        ApiVersionRule::Parsable
    } else {
        ApiVersionRule::WithGroup
    };
    check_reference(
        out,
        &|| FieldPath::fields("spec.scaleTargetRef"),
        target,
        target_rule,
    );

    // O2 ratchet: skipped when the old object already had an unparsable one.
    let object_rule =
        if checks_api_version && !cx.old_hpa.is_some_and(has_unparsable_object_api_version) {
            ApiVersionRule::Parsable
        } else {
            ApiVersionRule::Unchecked
        };
    for (path, source) in cx.validated_sources() {
        if let MetricSource::Object(object) = source {
            check_reference(
                out,
                &|| path.path().field("describedObject"),
                &object.described_object,
                object_rule,
            );
        }
    }
}

/// Whether an Object metric (by `type`) of `hpa` has an unparsable
/// `describedObject.apiVersion` (R5).
fn has_unparsable_object_api_version(hpa: &Hpa) -> bool {
    hpa.metrics.iter().any(|metric| {
        metric.type_ == "Object"
            && metric.object.as_ref().is_some_and(|object| {
                parse_group_version(&object.described_object.api_version).is_err()
            })
    })
}

/// `ValidateCrossVersionObjectReference`: kind (R1, R2), name (R3, R4), then
/// apiVersion (R5, R6).
/// Checks a reference at `path` (made for findings only: most references
/// have none).
fn check_reference(
    out: &mut Report<'_>,
    path: &dyn Fn() -> FieldPath,
    reference: &ObjectReference,
    rule: ApiVersionRule,
) {
    for (field, value) in [("kind", &reference.kind), ("name", &reference.name)] {
        let path = || path().field(field);
        if value.is_empty() {
            out.field_error(path(), Reason::Required, None, "");
            continue;
        }
        for message in path_segment(value) {
            out.field_error(path(), Reason::Invalid, Some(quoted(value)), &message);
        }
    }
    if let Some(message) = api_version_error(&reference.api_version, rule) {
        out.field_error(
            path().field("apiVersion"),
            Reason::Invalid,
            Some(quoted(&reference.api_version)),
            &message,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::RULE;
    use crate::cluster::KubeVersion;
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

    fn hpa(target_api_version: &str, kind: &str, described_api_version: &str) -> Object {
        let value = serde_json::json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"apiVersion": target_api_version, "kind": kind, "name": "web"},
                     "maxReplicas": 3,
                     "metrics": [{"type": "Object", "object": {
                         "describedObject": {"apiVersion": described_api_version, "kind": "Ingress", "name": "main"},
                         "metric": {"name": "rps"}, "target": {"type": "Value", "value": "10"}}}]}
        });
        Object::new(value, Origin(0), "default").unwrap()
    }

    fn paths_at(minor: u32, new: &Object, operation: Operation<'_>) -> Vec<String> {
        let settings = only_with(&RULE, Settings::new(KubeVersion::new(minor)));
        lint(new, operation, &MemoryIndex::default(), &settings)
            .into_iter()
            .map(|d| d.path.to_string())
            .collect()
    }

    fn paths(new: &Object, operation: Operation<'_>) -> Vec<String> {
        paths_at(36, new, operation)
    }

    #[test]
    fn r5_r6_o2_since_1_34() {
        let new = hpa("v1", "Deployment", "a/b/c");
        assert!(paths_at(33, &new, Operation::Create).is_empty());
        assert_eq!(
            paths_at(34, &new, Operation::Create),
            [
                "spec.scaleTargetRef.apiVersion",
                "spec.metrics[0].object.describedObject.apiVersion"
            ]
        );
    }

    #[test]
    fn r5_r6_ratchet_when_api_version_and_kind_are_unchanged() {
        let new = hpa("v1", "Deployment", "networking.k8s.io/v1");
        let target = ["spec.scaleTargetRef.apiVersion"];
        assert_eq!(paths(&new, Operation::Create), target);
        let same = hpa("v1", "Deployment", "networking.k8s.io/v1");
        assert!(paths(&new, Operation::Update { old: &same }).is_empty());
        let other_kind = hpa("v1", "StatefulSet", "networking.k8s.io/v1");
        assert_eq!(paths(&new, Operation::Update { old: &other_kind }), target);
        let other_version = hpa("apps/v1", "Deployment", "networking.k8s.io/v1");
        assert_eq!(
            paths(
                &new,
                Operation::Update {
                    old: &other_version
                }
            ),
            target
        );
    }

    #[test]
    fn o2_ratchet_when_the_old_object_metric_was_unparsable() {
        let new = hpa("apps/v1", "Deployment", "a/b/c");
        let described = ["spec.metrics[0].object.describedObject.apiVersion"];
        assert_eq!(paths(&new, Operation::Create), described);
        let old_invalid = hpa("apps/v1", "Deployment", "x/y/z");
        assert!(paths(&new, Operation::Update { old: &old_invalid }).is_empty());
        let old_valid = hpa("apps/v1", "Deployment", "v1");
        assert_eq!(
            paths(&new, Operation::Update { old: &old_valid }),
            described
        );
    }
}
