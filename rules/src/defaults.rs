//! The behavior an HPA runs with where it leaves `spec.behavior`, or parts of
//! it, unset: the API server's defaults (apiserver-hpa-rules.md §2.1, D4/D5)
//! plus the 300 s scale-down window the controller applies without writing
//! it; or an organisation's own defaults, per namespace, which its admission
//! webhook writes. `implicit-behavior` writes them out; `/mutate` injects them.

use serde_json::{Map, Value, json};
use thiserror::Error;

use crate::fix::Edit;
use crate::model::selector;
use crate::path::{FieldPath, Json, Segment, Shape};

/// The fields of one direction, in the order they are written.
const FIELDS: [&str; 4] = [
    "stabilizationWindowSeconds",
    "selectPolicy",
    "policies",
    "tolerance",
];
const DIRECTIONS: [&str; 2] = ["scaleUp", "scaleDown"];

/// A `behavior` object of the configuration that is not one.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum DefaultsError {
    /// Not a mapping where one belongs.
    #[error("`{0}` must be an object")]
    NotAnObject(&'static str),
    /// A direction other than `scaleUp` and `scaleDown`.
    #[error("unknown direction `{0}`: expected scaleUp or scaleDown")]
    UnknownDirection(String),
    /// A field a direction does not have.
    #[error("unknown field `{0}`")]
    UnknownField(String),
    /// Behavior the API server rejects: its field errors.
    #[error("{0}")]
    Rejected(String),
    /// A namespace selector that selects nothing.
    #[error("`namespaceSelector` is not a valid label selector")]
    InvalidSelector,
}

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
    pub fn behavior(&self) -> Value {
        // Cloned, not serialized again (`json!` would): the maps come out
        // their size, and an HPA without behavior gets one per finding.
        Value::Object(Map::from_iter([
            ("scaleUp".to_owned(), Value::Object(self.scale_up.clone())),
            (
                "scaleDown".to_owned(),
                Value::Object(self.scale_down.clone()),
            ),
        ]))
    }

    /// One direction's fields.
    pub fn direction(&self, name: &str) -> &Map<String, Value> {
        if name == "scaleUp" {
            &self.scale_up
        } else {
            &self.scale_down
        }
    }

    /// The built-in defaults with the fields a `behavior` object sets replaced.
    /// Whether the API server accepts the result is for the caller to check.
    pub fn with_overrides(overrides: &Value) -> Result<Self, DefaultsError> {
        let overrides = overrides
            .as_object()
            .ok_or(DefaultsError::NotAnObject("behavior"))?;
        let mut defaults = Self::built_in();
        for (direction, fields) in overrides {
            let (target, name) = match direction.as_str() {
                "scaleUp" => (&mut defaults.scale_up, "scaleUp"),
                "scaleDown" => (&mut defaults.scale_down, "scaleDown"),
                _ => return Err(DefaultsError::UnknownDirection(direction.clone())),
            };
            let fields = fields.as_object().ok_or(DefaultsError::NotAnObject(name))?;
            for (field, value) in fields {
                if !FIELDS.contains(&field.as_str()) {
                    return Err(DefaultsError::UnknownField(format!("{name}.{field}")));
                }
                target.insert(field.clone(), value.clone());
            }
        }
        Ok(defaults)
    }

    /// The edits that fill the unset parts of an HPA's `spec.behavior`
    /// (absent or `null`) from these defaults; none when nothing is unset or
    /// the HPA has no `spec` mapping. An explicit empty `policies: []` is the
    /// user's (the API server rejects it) and stays.
    pub fn fill<V: Json>(&self, hpa: &V) -> Vec<Edit> {
        let Some(spec) = hpa.member("spec").filter(|spec| spec.is_mapping()) else {
            return Vec::new();
        };
        let unset = |value: Option<&V>| value.is_none_or(V::is_null);
        let behavior_path = FieldPath::fields("spec.behavior");
        let set = |path: FieldPath, value: Value| Edit::Set { path, value };
        let Some(behavior) = spec.member("behavior").filter(|b| !b.is_null()) else {
            return vec![set(behavior_path, self.behavior())];
        };
        // Not an object: the API server rejects it; nothing to fill.
        if !behavior.is_mapping() {
            return Vec::new();
        }
        let mut edits = Vec::new();
        for direction in DIRECTIONS {
            let defaults = self.direction(direction);
            let path = behavior_path.field(direction);
            match behavior
                .member(direction)
                .map(|current| (current, current.shape()))
            {
                None | Some((_, Shape::Null)) => {
                    edits.push(set(path, Value::Object(defaults.clone())));
                }
                Some((current, Shape::Object(..))) => {
                    for field in FIELDS {
                        if let Some(value) =
                            defaults.get(field).filter(|_| unset(current.member(field)))
                        {
                            edits.push(set(path.field(field), value.clone()));
                        }
                    }
                }
                Some(_) => {}
            }
        }
        edits
    }
}

/// The behavior fields `edits` of [`BehaviorDefaults::fill`] write, as
/// `direction.field`, e.g. `scaleDown.stabilizationWindowSeconds`.
pub fn filled_fields(edits: &[Edit]) -> Vec<String> {
    let mut fields = Vec::new();
    for edit in edits {
        let Edit::Set { path, value } = edit else {
            continue;
        };
        let mut names = path.segments().iter().map(|segment| match segment {
            Segment::Field(name) => Some(&**name),
            Segment::Key(_) | Segment::Index(_) => None,
        });
        if names.next() != Some(Some("spec")) || names.next() != Some(Some("behavior")) {
            continue;
        }
        let names: Vec<&str> = names.map_while(|name| name).collect();
        let keys = |value: &Value| -> Vec<String> {
            let map = value.as_object().cloned().unwrap_or_default();
            FIELDS
                .iter()
                .filter(|f| map.contains_key(**f))
                .map(|f| (*f).to_owned())
                .collect()
        };
        match names.as_slice() {
            [] => {
                for direction in DIRECTIONS {
                    fields.extend(
                        keys(&value[direction])
                            .iter()
                            .map(|f| format!("{direction}.{f}")),
                    );
                }
            }
            [direction] => fields.extend(keys(value).iter().map(|f| format!("{direction}.{f}"))),
            [direction, field] => fields.push(format!("{direction}.{field}")),
            _ => {}
        }
    }
    fields
}

/// Defaults per namespace: the first entry whose namespace selector matches
/// wins; the built-in defaults apply where none does.
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
    /// Entries with their namespace selectors (see [`check_selector`]).
    pub fn new(entries: Vec<(Option<Value>, BehaviorDefaults)>) -> Self {
        Self {
            entries,
            ..Self::default()
        }
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

/// Whether a namespace selector is a valid label selector.
pub fn check_selector(selector: &Value) -> Result<(), DefaultsError> {
    selector::matches(selector, &Map::new())
        .map(|_| ())
        .ok_or(DefaultsError::InvalidSelector)
}
