//! The behavior the mutating webhook writes into HPAs that leave it, or parts of
//! it, unset: the API server's defaults (apiserver-hpa-rules.md §2.1, D4/D5) plus
//! the 300 s scale-down window the controller applies without writing it, or an
//! organisation's own defaults, per namespace. `kubectl get -o yaml` then shows
//! the behavior that really runs. Fields the user set are never touched.

use serde_json::{Map, Value, json};

use crate::config::{BehaviorDefaultsConfig, ConfigError};
use crate::context::Operation;
use crate::diagnostic::Severity;
use crate::fix::PatchOp;
use crate::index::MemoryIndex;
use crate::lint::lint;
use crate::model::selector;
use crate::object::{Object, Origin};
use crate::path::FieldPath;
use crate::registry::Category;
use crate::settings::Settings;

/// Annotation listing the fields `/mutate` wrote, e.g.
/// `scaleDown.stabilizationWindowSeconds,scaleUp.policies`.
pub const INJECTED_ANNOTATION: &str = "hpa-lint.io/injected-behavior";

/// The fields of one direction, in the order they are written.
const FIELDS: [&str; 4] = [
    "stabilizationWindowSeconds",
    "selectPolicy",
    "policies",
    "tolerance",
];
const DIRECTIONS: [&str; 2] = ["scaleUp", "scaleDown"];

/// The behavior to write, one JSON object per direction.
#[derive(Clone, Debug, PartialEq)]
pub struct BehaviorDefaults {
    scale_up: Map<String, Value>,
    scale_down: Map<String, Value>,
}

impl BehaviorDefaults {
    /// The API server's defaults, plus `scaleDown.stabilizationWindowSeconds:
    /// 300`, the controller's default window (`--horizontal-pod-autoscaler-downscale-stabilization`).
    pub fn built_in() -> Self {
        let object = |value: Value| match value {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        Self {
            scale_up: object(json!({
                "stabilizationWindowSeconds": 0,
                "selectPolicy": "Max",
                "policies": [
                    {"type": "Pods", "value": 4, "periodSeconds": 15},
                    {"type": "Percent", "value": 100, "periodSeconds": 15},
                ],
            })),
            scale_down: object(json!({
                "stabilizationWindowSeconds": 300,
                "selectPolicy": "Max",
                "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
            })),
        }
    }

    /// The whole behavior, as `spec.behavior` holds it.
    fn behavior(&self) -> Value {
        json!({"scaleUp": self.scale_up, "scaleDown": self.scale_down})
    }

    fn direction(&self, name: &str) -> &Map<String, Value> {
        if name == "scaleUp" {
            &self.scale_up
        } else {
            &self.scale_down
        }
    }

    /// The built-in defaults with the fields a `behavior` object sets replaced.
    /// The result must pass the API server's validation at `settings`.
    pub fn with_overrides(overrides: &Value, settings: &Settings) -> Result<Self, String> {
        let Some(overrides) = overrides.as_object() else {
            return Err("`behavior` must be an object".to_owned());
        };
        let mut defaults = Self::built_in();
        for (direction, fields) in overrides {
            let target = match direction.as_str() {
                "scaleUp" => &mut defaults.scale_up,
                "scaleDown" => &mut defaults.scale_down,
                _ => {
                    return Err(format!(
                        "unknown direction `{direction}`: expected scaleUp or scaleDown"
                    ));
                }
            };
            let Some(fields) = fields.as_object() else {
                return Err(format!("`{direction}` must be an object"));
            };
            for (field, value) in fields {
                if !FIELDS.contains(&field.as_str()) {
                    return Err(format!("unknown field `{direction}.{field}`"));
                }
                target.insert(field.clone(), value.clone());
            }
        }
        defaults.validate(settings)?;
        Ok(defaults)
    }

    /// Runs the API-server rules on an HPA carrying this behavior.
    fn validate(&self, settings: &Settings) -> Result<(), String> {
        let hpa = json!({
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "defaults"},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "defaults"},
                "maxReplicas": 1,
                "behavior": self.behavior(),
            },
        });
        let object = Object::new(hpa, Origin::default(), "default").ok_or("not an object")?;
        let errors: Vec<String> = lint(
            &object,
            Operation::Create,
            &MemoryIndex::default(),
            settings,
        )
        .into_iter()
        .filter(|d| d.rule.category == Category::ApiServer && d.severity == Severity::Error)
        .map(|d| d.field_message())
        .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }

    /// The JSON Patch that fills the unset parts of an HPA's `spec.behavior`
    /// (absent or `null`) from these defaults, and records them in
    /// [`INJECTED_ANNOTATION`]. Empty when nothing is unset, so a second pass
    /// changes nothing. An explicit empty `policies: []` is the user's (the API
    /// server rejects it) and stays.
    pub fn patch(&self, hpa: &Object) -> Vec<PatchOp> {
        let Some(spec) = hpa.value.get("spec").and_then(Value::as_object) else {
            return Vec::new();
        };
        let set = |value: Option<&Value>| value.is_some_and(|v| !v.is_null());
        let behavior_path = FieldPath::fields("spec.behavior");
        let mut ops = Vec::new();
        let mut injected = Vec::new();
        let mut add = |path: FieldPath, value: &Value, fields: Vec<String>| {
            ops.push(PatchOp::Add {
                path,
                value: value.clone(),
            });
            injected.extend(fields);
        };
        let leaves = |direction: &str, fields: &Map<String, Value>| {
            FIELDS
                .iter()
                .filter(|f| fields.contains_key(**f))
                .map(|f| format!("{direction}.{f}"))
                .collect::<Vec<_>>()
        };
        match spec.get("behavior") {
            None | Some(Value::Null) => {
                let all = DIRECTIONS
                    .iter()
                    .flat_map(|d| leaves(d, self.direction(d)))
                    .collect();
                add(behavior_path, &self.behavior(), all);
            }
            Some(Value::Object(behavior)) => {
                for direction in DIRECTIONS {
                    let defaults = self.direction(direction);
                    let path = behavior_path.field(direction);
                    match behavior.get(direction) {
                        None | Some(Value::Null) => {
                            let value = Value::Object(defaults.clone());
                            add(path, &value, leaves(direction, defaults));
                        }
                        Some(Value::Object(current)) => {
                            for field in FIELDS {
                                if let Some(value) =
                                    defaults.get(field).filter(|_| !set(current.get(field)))
                                {
                                    add(
                                        path.field(field),
                                        value,
                                        vec![format!("{direction}.{field}")],
                                    );
                                }
                            }
                        }
                        // Not an object: the API server rejects it; nothing to fill.
                        Some(_) => {}
                    }
                }
            }
            Some(_) => {}
        }
        if !injected.is_empty() {
            ops.push(annotation_op(hpa, &injected.join(",")));
        }
        ops
    }
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

/// Defaults per namespace, from `webhook.defaults`.
#[derive(Clone, Debug)]
pub struct NamespacedDefaults {
    /// Entries in order, with their namespace selector (`None`: every namespace).
    entries: Vec<(Option<Value>, BehaviorDefaults)>,
    /// What applies where no entry matches.
    fallback: BehaviorDefaults,
}

impl Default for NamespacedDefaults {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
            fallback: BehaviorDefaults::built_in(),
        }
    }
}

impl NamespacedDefaults {
    /// Reads and validates the configured entries; the built-in defaults apply
    /// where none matches.
    pub fn from_config(
        entries: &[BehaviorDefaultsConfig],
        settings: &Settings,
    ) -> Result<Self, ConfigError> {
        let mut parsed = Vec::with_capacity(entries.len());
        for (i, entry) in entries.iter().enumerate() {
            let error = |message: String| ConfigError {
                message: format!("webhook.defaults[{i}]: {message}"),
                position: None,
            };
            let defaults =
                BehaviorDefaults::with_overrides(&entry.behavior, settings).map_err(error)?;
            if let Some(selector) = &entry.namespace_selector
                && selector::matches(selector, &Map::new()).is_none()
            {
                return Err(error(
                    "`namespaceSelector` is not a valid label selector".to_owned(),
                ));
            }
            parsed.push((entry.namespace_selector.clone(), defaults));
        }
        Ok(Self {
            entries: parsed,
            ..Self::default()
        })
    }

    /// The defaults for a namespace with these labels. `None` (labels unknown,
    /// e.g. offline) matches only entries without a selector.
    pub fn for_namespace(&self, labels: Option<&Map<String, Value>>) -> &BehaviorDefaults {
        self.entries
            .iter()
            .find(|(selector, _)| match (selector, labels) {
                (None, _) => true,
                (Some(selector), Some(labels)) => selector::matches(selector, labels) == Some(true),
                (Some(_), None) => false,
            })
            .map_or(&self.fallback, |(_, defaults)| defaults)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let ops = BehaviorDefaults::built_in().patch(&object);
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
        assert!(BehaviorDefaults::built_in().patch(&patched).is_empty());
    }

    #[test]
    fn never_touches_what_the_user_set() {
        let object = hpa(
            Some(
                json!({"scaleDown": {"stabilizationWindowSeconds": 60, "policies": null}, "scaleUp": null}),
            ),
            Some(json!({"team": "shop"})),
        );
        let ops = BehaviorDefaults::built_in().patch(&object);
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
        let ops = BehaviorDefaults::built_in().patch(&empty);
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
            let patched = apply(&object, &BehaviorDefaults::built_in().patch(&object));
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
        let settings = Settings::default();
        let config = crate::config::Config::parse(
            "webhook:\n  defaults:\n  - namespaceSelector: {matchLabels: {env: production}}\n    behavior:\n      scaleDown:\n        stabilizationWindowSeconds: 600\n        policies: [{type: Percent, value: 10, periodSeconds: 60}]\n",
        )
        .unwrap();
        let defaults =
            NamespacedDefaults::from_config(&config.webhook.defaults, &settings).unwrap();
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
            let error = BehaviorDefaults::with_overrides(&behavior, &settings).unwrap_err();
            assert!(error.contains(expected), "{error}");
        }
    }
}
