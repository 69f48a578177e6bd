//! Fixes: what a finding proposes to change, said once as [`Edit`]s on the
//! document's field paths. The CLI turns them into text edits that keep the
//! file's formatting ([`crate::source::text_edits`]); the webhook into an
//! RFC 6902 JSON Patch ([`Fix::json_patch`]).

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use crate::path::{FieldPath, Segment};
pub use crate::source::{Edit, EditError, Editor, TextEdit, apply, text_edits};

/// A JSON Patch (RFC 6902) operation a fix makes.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum PatchOp {
    /// Adds a value; the parent must exist.
    Add {
        /// JSON Pointer of the new value.
        #[serde(serialize_with = "as_pointer")]
        path: FieldPath,
        /// The value to add.
        value: serde_json::Value,
    },
    /// Removes a value.
    Remove {
        /// JSON Pointer of the value to remove.
        #[serde(serialize_with = "as_pointer")]
        path: FieldPath,
    },
}

fn as_pointer<S: serde::Serializer>(path: &FieldPath, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&path.pointer())
}

/// Whether a fix may be applied without review.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Applicability {
    /// Keeps the meaning the author evidently intended: `--fix` applies it.
    Safe,
    /// Changes what runs: applied only with `--unsafe-fixes`, after review.
    Unsafe,
}

impl Applicability {
    /// The lowercase name used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::Safe => "safe",
            Applicability::Unsafe => "unsafe",
        }
    }
}

/// A proposed change to the document a finding is in.
#[derive(Clone, Debug, PartialEq)]
pub struct Fix {
    /// What it does, imperative: "set `apiVersion` to `apps/v1`".
    pub title: Cow<'static, str>,
    /// Whether it may be applied without review.
    pub applicability: Applicability,
    /// The changes, on paths of the document as written.
    pub edits: Vec<Edit>,
}

impl Fix {
    /// A fix that keeps the meaning the author intended.
    pub fn safe(title: impl Into<Cow<'static, str>>, edits: Vec<Edit>) -> Self {
        Self {
            title: title.into(),
            applicability: Applicability::Safe,
            edits,
        }
    }

    /// A fix that changes what runs.
    pub fn unsafe_edit(title: impl Into<Cow<'static, str>>, edits: Vec<Edit>) -> Self {
        Self {
            title: title.into(),
            applicability: Applicability::Unsafe,
            edits,
        }
    }

    /// Whether the fix would add a key to the mapping that holds `field` in
    /// `document` and leave `field` there: none of its edits removes,
    /// renames or replaces `field`, or a value holding it.
    pub fn adds_beside(&self, field: &FieldPath, document: &Value) -> bool {
        let Some(mapping) = field.parent() else {
            return false;
        };
        let depth = mapping.segments().len();
        let deals_with = self.edits.iter().any(|edit| field.starts_with(edit.path()));
        !deals_with
            && self.edits.iter().any(|edit| {
                let Edit::Set { path, .. } = edit else {
                    return false;
                };
                // The key it writes in the mapping, if it writes in it.
                let key = path.segments().get(..=depth).map(<[Segment]>::to_vec);
                path.starts_with(&mapping)
                    && key
                        .is_some_and(|key| FieldPath::from_segments(key).lookup(document).is_none())
            })
    }

    /// The JSON Patch that makes the edits to `document`. Missing parent
    /// mappings are added with the value; an edit of a field that is not there
    /// (a removal or rename) is left out.
    pub fn json_patch(&self, document: &Value) -> Vec<PatchOp> {
        let mut out = Vec::new();
        for edit in &self.edits {
            match edit {
                Edit::Set { path, value } => out.push(set(document, path, value)),
                Edit::Remove { path } => {
                    if document.pointer(&path.pointer()).is_some() {
                        out.push(PatchOp::Remove { path: path.clone() });
                    }
                }
                Edit::Rename { path, to } => {
                    let (Some(value), Some(parent)) =
                        (document.pointer(&path.pointer()), path.parent())
                    else {
                        continue;
                    };
                    out.push(PatchOp::Add {
                        path: parent.field(to),
                        value: value.clone(),
                    });
                    out.push(PatchOp::Remove { path: path.clone() });
                }
            }
        }
        out
    }
}

/// `add` at the first segment of `path` that `document` lacks, with the rest
/// of the path as nested mappings around `value`.
fn set(document: &Value, path: &FieldPath, value: &Value) -> PatchOp {
    let segments = path.segments();
    let mut node = document;
    let mut depth = 0;
    for segment in segments {
        let child = match (segment, node) {
            (Segment::Field(name) | Segment::Key(name), Value::Object(map)) => map.get(&**name),
            (Segment::Index(i), Value::Array(items)) => items.get(*i),
            _ => None,
        };
        match child {
            Some(child) if depth + 1 < segments.len() => {
                node = child;
                depth += 1;
            }
            _ => break,
        }
    }
    let mut nested = value.clone();
    for segment in segments[depth + 1..].iter().rev() {
        let name = match segment {
            Segment::Field(name) | Segment::Key(name) => name.to_string(),
            Segment::Index(i) => i.to_string(),
        };
        nested = Value::Object([(name, nested)].into_iter().collect());
    }
    PatchOp::Add {
        path: FieldPath::from_segments(segments[..=depth].to_vec()),
        value: nested,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn patched(document: &Value, fix: &Fix) -> Value {
        let patch: json_patch::Patch =
            serde_json::from_value(serde_json::to_value(fix.json_patch(document)).unwrap())
                .unwrap();
        let mut out = document.clone();
        json_patch::patch(&mut out, &patch).unwrap();
        out
    }

    #[test]
    fn a_fix_adds_beside_an_unknown_field_it_leaves_there() {
        let document =
            json!({"spec": {"behavior": {"scaleDown": {"window": 900, "selectPolicy": "Max"}}}});
        let set = |path: &str| Edit::Set {
            path: FieldPath::fields(path),
            value: json!(1),
        };
        let beside = |edits: Vec<Edit>, field: &str| {
            Fix::safe("t", edits).adds_beside(&FieldPath::fields(field), &document)
        };
        let window = "spec.behavior.scaleDown.window";
        assert!(beside(
            vec![set("spec.behavior.scaleDown.stabilizationWindowSeconds")],
            window
        ));
        assert!(beside(vec![set("spec.behavior.scaleDown.x.y")], window));
        // A key that is there is not added; other mappings are not beside it.
        assert!(!beside(
            vec![set("spec.behavior.scaleDown.selectPolicy")],
            window
        ));
        assert!(!beside(
            vec![set("spec.behavior.scaleUp.selectPolicy")],
            window
        ));
        // A fix that renames, removes or replaces the field deals with it.
        let rename = Edit::Rename {
            path: FieldPath::fields(window),
            to: "stabilizationWindowSeconds".into(),
        };
        let added = set("spec.behavior.scaleDown.policies");
        assert!(!beside(vec![rename, added.clone()], window));
        assert!(!beside(vec![set("spec.behavior.scaleDown"), added], window));
        // A misspelt parent: the key it may be meant as is added beside it.
        let misspelt = json!({"spec": {"behaviour": {"scaleUp": {}}}});
        let behaviour = FieldPath::fields("spec.behaviour");
        assert!(Fix::safe("t", vec![set("spec.behavior")]).adds_beside(&behaviour, &misspelt));
    }

    #[test]
    fn patches_set_remove_and_rename() {
        let document =
            json!({"spec": {"replicas": 3, "behavior": {"scaleUp": {}}, "minReplica": 1}});
        let fix = Fix::safe(
            "t",
            vec![
                Edit::Set {
                    path: FieldPath::fields("spec.behavior.scaleDown.stabilizationWindowSeconds"),
                    value: json!(300),
                },
                Edit::Set {
                    path: FieldPath::fields("spec.behavior.scaleUp.selectPolicy"),
                    value: json!("Max"),
                },
                Edit::Remove {
                    path: FieldPath::fields("spec.replicas"),
                },
                Edit::Rename {
                    path: FieldPath::fields("spec.minReplica"),
                    to: "minReplicas".into(),
                },
            ],
        );
        assert_eq!(
            patched(&document, &fix),
            json!({"spec": {"behavior": {
                "scaleUp": {"selectPolicy": "Max"},
                "scaleDown": {"stabilizationWindowSeconds": 300}
            }, "minReplicas": 1}})
        );
        let bare = json!({});
        assert_eq!(
            patched(
                &bare,
                &Fix::safe(
                    "t",
                    vec![Edit::Set {
                        path: FieldPath::fields("metadata.annotations"),
                        value: json!({"a": "b"})
                    }]
                )
            ),
            json!({"metadata": {"annotations": {"a": "b"}}})
        );
    }
}
