//! `/mutate` as a rule library call: the fixes of the findings that the rules
//! configured for mutation make on an HPA (by default `implicit-behavior`,
//! which writes out the behavior), as one RFC 6902 JSON Patch. Listing a rule
//! for mutation is the choice to apply its fixes, unsafe ones included (an
//! HPA without `behavior` leaves the controller's legacy path when it is
//! written). The same fixes `hpa-lint --fix --unsafe-fixes` writes into files.

use serde_json::{Value, json};

use crate::context::Operation;
use crate::defaults::filled_fields;
use crate::fix::PatchOp;
use crate::index::Index;
use crate::lint::lint;
use crate::object::Object;
use crate::path::{FieldPath, Segment};
use crate::registry::Rule;
use crate::rules::select;
use crate::settings::Settings;

/// Annotation listing the behavior fields `/mutate` wrote, e.g.
/// `scaleDown.stabilizationWindowSeconds,scaleUp.policies`.
pub const INJECTED_ANNOTATION: &str = "hpa-lint.io/injected-behavior";

/// `settings` with only `rules` on: what [`mutation`] lints with.
pub fn settings_for(settings: &Settings, rules: &[&'static Rule]) -> Settings {
    let mut only = settings.clone();
    let names: Vec<String> = rules.iter().map(|r| r.name.to_owned()).collect();
    select(&mut only, &names).expect("registered rules");
    only
}

/// The JSON Patch for an HPA: the fixes of what the rules enabled in
/// `settings` find (see [`settings_for`]), and [`INJECTED_ANNOTATION`] when
/// behavior fields were written. A fix whose edits touch a field an earlier
/// fix edits is left out (the next admission applies it). Empty when nothing
/// is to be fixed, so a second pass changes nothing.
pub fn mutation(hpa: &Object, index: &dyn Index, settings: &Settings) -> Vec<PatchOp> {
    let mut ops = Vec::new();
    let mut edited: Vec<FieldPath> = Vec::new();
    let mut injected = Vec::new();
    for finding in lint(hpa, Operation::Create, index, settings) {
        let Some(fix) = finding.fix else {
            continue;
        };
        let paths: Vec<&FieldPath> = fix.edits.iter().map(|e| e.path()).collect();
        if paths.iter().any(|p| edited.iter().any(|e| overlaps(p, e))) {
            continue;
        }
        edited.extend(paths.into_iter().cloned());
        injected.extend(filled_fields(&fix.edits));
        ops.extend(fix.json_patch(&hpa.value));
    }
    if !injected.is_empty() {
        ops.push(annotation_op(hpa, &injected.join(",")));
    }
    ops
}

/// Whether one path is the other or inside it.
fn overlaps(a: &FieldPath, b: &FieldPath) -> bool {
    let (a, b): (&[Segment], &[Segment]) = (a.segments(), b.segments());
    a.starts_with(b) || b.starts_with(a)
}

/// Adds the annotation, creating `metadata.annotations`, and `metadata`
/// itself, when missing (a JSON Patch `add` below a missing member fails).
fn annotation_op(hpa: &Object, value: &str) -> PatchOp {
    let metadata = hpa.value.get("metadata").filter(|m| m.is_object());
    let annotations = metadata
        .and_then(|m| m.get("annotations"))
        .filter(|a| a.is_object());
    let (path, value) = match (metadata, annotations) {
        (_, Some(_)) => (
            FieldPath::fields("metadata.annotations").key(INJECTED_ANNOTATION),
            Value::from(value),
        ),
        (Some(_), None) => (
            FieldPath::fields("metadata.annotations"),
            json!({ INJECTED_ANNOTATION: value }),
        ),
        (None, None) => (
            FieldPath::fields("metadata"),
            json!({"annotations": { INJECTED_ANNOTATION: value }}),
        ),
    };
    PatchOp::Add { path, value }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::validated_defaults;
    use crate::defaults::{BehaviorDefaults, NamespacedDefaults};
    use crate::index::MemoryIndex;
    use crate::object::Origin;
    use crate::registry::Category;
    use crate::rules::implicit_behavior;

    /// The mutation with `defaults` for every namespace.
    fn patch(defaults: &BehaviorDefaults, hpa: &Object) -> Vec<PatchOp> {
        let mut settings = settings_for(&Settings::default(), &[&implicit_behavior::RULE]);
        settings.behavior_defaults = NamespacedDefaults::new(vec![(None, defaults.clone())]);
        mutation(hpa, &MemoryIndex::default(), &settings)
    }

    fn hpa(spec_behavior: Option<Value>, annotations: Option<Value>) -> Object {
        let mut value = json!({
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 5},
        });
        if let Some(behavior) = spec_behavior {
            value["spec"]["behavior"] = behavior;
        }
        if let Some(annotations) = annotations {
            value["metadata"]["annotations"] = annotations;
        }
        Object::new(value, Origin::default(), "default").unwrap()
    }

    /// Applies the ops as the API server does: serialized as RFC 6902 JSON and
    /// applied with the json-patch crate.
    fn apply(object: &Object, ops: &[PatchOp]) -> Object {
        let patch: json_patch::Patch =
            serde_json::from_value(serde_json::to_value(ops).unwrap()).unwrap();
        let mut value = object.value.clone();
        json_patch::patch(&mut value, &patch).unwrap();
        Object::new(value, Origin::default(), "default").unwrap()
    }

    #[test]
    fn fills_a_missing_behavior_and_records_it() {
        let object = hpa(None, None);
        let ops = patch(&BehaviorDefaults::built_in(), &object);
        let patched = apply(&object, &ops);
        assert_eq!(
            patched.value["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"],
            300
        );
        assert_eq!(
            patched.value["spec"]["behavior"]["scaleUp"]["policies"][0]["type"],
            "Pods"
        );
        assert_eq!(
            patched.annotation(INJECTED_ANNOTATION),
            Some(
                "scaleUp.stabilizationWindowSeconds,scaleUp.selectPolicy,scaleUp.policies,scaleDown.stabilizationWindowSeconds,scaleDown.selectPolicy,scaleDown.policies"
            )
        );
        // Idempotent: nothing is left to fill.
        assert!(patch(&BehaviorDefaults::built_in(), &patched).is_empty());
    }

    #[test]
    fn never_touches_what_the_user_set() {
        let object = hpa(
            Some(
                json!({"scaleDown": {"stabilizationWindowSeconds": 60, "policies": null}, "scaleUp": null}),
            ),
            Some(json!({"team": "shop"})),
        );
        let ops = patch(&BehaviorDefaults::built_in(), &object);
        let paths: Vec<String> = ops
            .iter()
            .map(|op| match op {
                PatchOp::Add { path, .. } | PatchOp::Remove { path } => path.pointer(),
            })
            .collect();
        assert_eq!(
            paths,
            [
                "/spec/behavior/scaleUp",
                "/spec/behavior/scaleDown/selectPolicy",
                "/spec/behavior/scaleDown/policies",
                "/metadata/annotations/hpa-lint.io~1injected-behavior",
            ]
        );
        let patched = apply(&object, &ops);
        assert_eq!(
            patched.value["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"],
            60
        );
        assert_eq!(patched.value["metadata"]["annotations"]["team"], "shop");
        // An explicit empty list is the user's choice (and the API server's error).
        let empty = hpa(Some(json!({"scaleUp": {"policies": []}})), None);
        let ops = patch(&BehaviorDefaults::built_in(), &empty);
        assert!(!ops.iter().any(|op| matches!(op, PatchOp::Add { path, .. } if path.pointer() == "/spec/behavior/scaleUp/policies")));
    }

    #[test]
    fn the_patched_object_passes_validation() {
        let settings = Settings::default();
        for behavior in [
            None,
            Some(json!({})),
            Some(json!({"scaleUp": {"selectPolicy": "Disabled"}})),
        ] {
            let object = hpa(behavior, None);
            let patched = apply(&object, &patch(&BehaviorDefaults::built_in(), &object));
            let errors: Vec<String> = lint(
                &patched,
                Operation::Create,
                &MemoryIndex::default(),
                &settings,
            )
            .into_iter()
            .filter(|d| d.rule.category == Category::ApiServer)
            .map(|d| d.field_message())
            .collect();
            assert!(errors.is_empty(), "{errors:?}");
        }
    }

    #[test]
    fn organisation_defaults_replace_built_in_fields_per_namespace() {
        let mut settings = Settings::default();
        let config = crate::config::Config::parse(
            "webhook:\n  defaults:\n  - namespaceSelector: {matchLabels: {env: production}}\n    behavior:\n      scaleDown:\n        stabilizationWindowSeconds: 600\n        policies: [{type: Percent, value: 10, periodSeconds: 60}]\n",
        )
        .unwrap();
        config.apply(&mut settings).unwrap();
        let defaults = &settings.behavior_defaults;
        let production = json!({"env": "production"});
        let chosen = defaults.for_namespace(production.as_object());
        assert_eq!(
            chosen.direction("scaleDown")["stabilizationWindowSeconds"],
            600
        );
        assert_eq!(chosen.direction("scaleDown")["selectPolicy"], "Max");
        assert_eq!(
            chosen.direction("scaleUp"),
            BehaviorDefaults::built_in().direction("scaleUp")
        );
        assert_eq!(
            defaults.for_namespace(json!({"env": "dev"}).as_object()),
            &BehaviorDefaults::built_in()
        );
        // Namespace labels unknown (offline): only selector-less entries apply.
        assert_eq!(defaults.for_namespace(None), &BehaviorDefaults::built_in());
    }

    #[test]
    fn invalid_organisation_defaults_are_configuration_errors() {
        let settings = Settings::default();
        for (behavior, expected) in [
            (
                json!({"scaleDown": {"stabilizationWindowSeconds": 7200}}),
                "must be less than or equal to 3600",
            ),
            (
                json!({"scaleDown": {"stabilizationWindowSecond": 60}}),
                "unknown field `scaleDown.stabilizationWindowSecond`",
            ),
            (json!({"sideways": {}}), "unknown direction `sideways`"),
            (
                json!({"scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 3600}]}}),
                "must be less than or equal to 1800",
            ),
        ] {
            let error = validated_defaults(&behavior, &settings)
                .unwrap_err()
                .to_string();
            assert!(error.contains(expected), "{error}");
        }
    }
}
