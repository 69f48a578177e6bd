//! A document's value as the reader builds it: shaped like a JSON value, but
//! borrowing its keys and strings from the document's text where it can, and
//! holding a mapping's entries in a vector, in order, without hashing them.
//! Most of what a document keeps is packed ([`crate::packed`]) or only looked
//! at for its identity, and a tree is cheap to build and to drop; it becomes a
//! [`Value`] ([`Tree::into_value`]) where one is needed.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Number, Value};

use super::keep::{ALL, Keep};
use crate::path::{Json, Shape};

/// A JSON value read from a document's text (`'t`).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Tree<'t> {
    /// `null`.
    #[default]
    Null,
    /// A boolean.
    Bool(bool),
    /// A number, as serde_json holds it.
    Number(Number),
    /// A string.
    String(Cow<'t, str>),
    /// A sequence.
    Array(Vec<Tree<'t>>),
    /// A mapping: its entries in order, each key once.
    Object(Vec<(Cow<'t, str>, Tree<'t>)>),
}

/// A mapping's entries as the reader gathers them.
pub(crate) type Entries<'t> = Vec<(Cow<'t, str>, Tree<'t>)>;

impl<'t> Tree<'t> {
    /// `value` as a tree borrowing its strings (what a front end that holds
    /// serde_json values gives the rules).
    pub fn borrowing(value: &'t Value) -> Self {
        match value {
            Value::Null => Tree::Null,
            Value::Bool(b) => Tree::Bool(*b),
            Value::Number(n) => Tree::Number(n.clone()),
            Value::String(s) => Tree::String(Cow::Borrowed(s)),
            Value::Array(items) => Tree::Array(items.iter().map(Tree::borrowing).collect()),
            Value::Object(map) => Tree::Object(
                map.iter()
                    .map(|(key, value)| (Cow::Borrowed(key.as_str()), Tree::borrowing(value)))
                    .collect(),
            ),
        }
    }

    /// The same value as a serde_json [`Value`].
    pub fn into_value(self) -> Value {
        match self {
            Tree::Null => Value::Null,
            Tree::Bool(b) => Value::Bool(b),
            Tree::Number(n) => Value::Number(n),
            Tree::String(s) => Value::String(s.into_owned()),
            Tree::Array(items) => Value::Array(items.into_iter().map(Tree::into_value).collect()),
            Tree::Object(entries) => Value::Object(
                entries
                    .into_iter()
                    .map(|(key, value)| (key.into_owned(), value.into_value()))
                    .collect(),
            ),
        }
    }

    /// The same value, holding its strings: for a tree of a text that is
    /// not kept.
    pub fn into_owned(self) -> Tree<'static> {
        match self {
            Tree::Null => Tree::Null,
            Tree::Bool(b) => Tree::Bool(b),
            Tree::Number(n) => Tree::Number(n),
            Tree::String(s) => Tree::String(Cow::Owned(s.into_owned())),
            Tree::Array(items) => Tree::Array(items.into_iter().map(Tree::into_owned).collect()),
            Tree::Object(entries) => Tree::Object(
                entries
                    .into_iter()
                    .map(|(key, value)| (Cow::Owned(key.into_owned()), value.into_owned()))
                    .collect(),
            ),
        }
    }

    /// What `keep` keeps of this value, as a serde_json [`Value`]: the
    /// same as `keep.prune(self.into_value())`, without building the rest.
    pub fn kept_value(&self, keep: &'static Keep) -> Value {
        match (keep, self) {
            (Keep::Fields(_) | Keep::Prefixed(_), Tree::Object(entries)) => Value::Object(
                entries
                    .iter()
                    .filter_map(|(key, value)| {
                        Some((key.to_string(), value.kept_value(keep.field(key)?)))
                    })
                    .collect(),
            ),
            (Keep::Items(item), Tree::Array(items)) => {
                Value::Array(items.iter().map(|v| v.kept_value(item)).collect())
            }
            (_, Tree::Array(items)) => {
                Value::Array(items.iter().map(|v| v.kept_value(&ALL)).collect())
            }
            (_, Tree::Object(entries)) => Value::Object(
                entries
                    .iter()
                    .map(|(key, value)| (key.to_string(), value.kept_value(&ALL)))
                    .collect(),
            ),
            (_, Tree::String(s)) => Value::String(s.to_string()),
            (_, Tree::Number(n)) => Value::Number(n.clone()),
            (_, Tree::Bool(b)) => Value::Bool(*b),
            (_, Tree::Null) => Value::Null,
        }
    }
}

/// The entries of a mapping in which a key may be given more than once (a
/// repeated key, or one a merge key adds): each key once, where it first
/// came, with the value it was given last, as a serde_json map collects
/// them.
pub(crate) fn unique<'t>(entries: Entries<'t>) -> Entries<'t> {
    let mut unique: Entries<'t> = Vec::with_capacity(entries.len());
    let mut at: HashMap<Cow<'t, str>, usize> = HashMap::with_capacity(entries.len());
    for (key, value) in entries {
        match at.get(&key) {
            Some(&i) => unique[i].1 = value,
            None => {
                at.insert(key.clone(), unique.len());
                unique.push((key, value));
            }
        }
    }
    unique
}

/// A mapping's entries, read as [`Json`] reads them: a type of its own,
/// inlined where it is read (a function pointer mapping the entries was
/// called for each).
#[derive(Clone)]
pub struct TreeEntries<'v, 't>(std::slice::Iter<'v, (Cow<'t, str>, Tree<'t>)>);

impl<'v, 't> Iterator for TreeEntries<'v, 't> {
    type Item = (&'v str, &'v Tree<'t>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(key, value)| (key.as_ref(), value))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl<'t> Json for Tree<'t> {
    type Entries<'v>
        = TreeEntries<'v, 't>
    where
        Self: 'v;

    fn shape(&self) -> Shape<'_, Self> {
        match self {
            Tree::Null => Shape::Null,
            Tree::Bool(b) => Shape::Bool(*b),
            Tree::Number(n) => Shape::Number(n),
            Tree::String(s) => Shape::String(s),
            Tree::Array(items) => Shape::Array(items),
            Tree::Object(entries) => Shape::Object(entries.len(), TreeEntries(entries.iter())),
        }
    }

    // Only for the few readers that need a value (a status, a fix's
    // patch): the copy of the tree costs little beside the value.
    fn to_value(&self) -> Value {
        self.clone().into_value()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_repeated_key_keeps_its_first_place_and_its_last_value() {
        let entries = ["a", "b", "a", "c", "b"]
            .into_iter()
            .zip(1..)
            .map(|(key, n)| (Cow::Borrowed(key), Tree::Number(n.into())))
            .collect();
        let unique = Tree::Object(unique(entries));
        assert_eq!(unique.into_value().to_string(), r#"{"a":3,"b":5,"c":4}"#);
    }

    #[test]
    fn kept_values_are_pruned_values() {
        static KEEP: Keep = Keep::Fields(&[
            ("a", Keep::All),
            ("b", Keep::Items(&Keep::Prefixed("x"))),
            ("c", Keep::Fields(&[("d", Keep::All)])),
        ]);
        let tree = Tree::Object(vec![
            (Cow::Borrowed("z"), Tree::Null),
            (
                Cow::Borrowed("b"),
                Tree::Array(vec![
                    Tree::Object(vec![
                        (Cow::Borrowed("xy"), Tree::Bool(true)),
                        (Cow::Borrowed("y"), Tree::Bool(false)),
                    ]),
                    Tree::String(Cow::Borrowed("s")),
                ]),
            ),
            (Cow::Borrowed("c"), Tree::String(Cow::Owned("t".into()))),
            (Cow::Borrowed("a"), Tree::Array(vec![Tree::Null])),
        ]);
        let kept = tree.kept_value(&KEEP);
        assert_eq!(kept, KEEP.prune(tree.into_value()));
        assert_eq!(
            kept,
            json!({"b": [{"xy": true}, "s"], "c": "t", "a": [null]})
        );
    }

    /// Every document of the real-world corpus and the examples, and
    /// documents with merge keys, anchors, repeated keys and lists, read
    /// whole and as the scan keeps them: a tree packs into the bytes its
    /// value packs into, keeps what its value keeps, and reads as it does
    /// (identity, the grouping of autoscalers, the object stage).
    #[test]
    fn trees_pack_and_keep_as_their_values_do() {
        use crate::lint::object_stage_reads;
        use crate::model::autoscaler::Scaler;
        use crate::object::{Object, ObjectKey, Origin};
        use crate::reads::{IDENTITY_FIELDS, SCALER_FIELDS, WORKLOAD_FIELDS};
        let settings = crate::settings::Settings::default();
        let needs = crate::rules::reads(&settings);
        let scanned =
            |api_version: &str, kind: &str| needs.keep_for(&settings.cluster, api_version, kind);
        let mut texts = vec![
            "base: &b {x: 1, w: 2}\nm:\n  x: 0\n  <<: *b\n  z: *b\n".to_owned(),
            "m:\n  <<: [{a: 1}, {a: 2, b: 2}]\n  b: 3\n  a: 4\n".to_owned(),
            "a: 1\nb:\n  c: 1\n  c: 2\na: 3\n".to_owned(),
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: &m {name: web, annotations: {hpa-lint.io/ignore.x: y, z: w}}\nspec: {replicas: 1.0, paused: 0x1F, template: *m}\n".to_owned(),
            "apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata: {name: s, namespace: n, ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: d}, {kind: X}]}\nspec: {scaleTargetRef: {name: web}}\n".to_owned(),
            "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h, annotations: {hpa-lint.io/ignore.min-equals-max: ''}, ownerReferences: [{apiVersion: keda.sh/v1alpha1, kind: ScaledObject, name: s}]}\nspec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, maxReplicas: 3}\n".to_owned(),
            "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: apps/v1, kind: Deployment, metadata: {name: a}, spec: {replicas: 2, selector: {}}}\n- {apiVersion: v1, kind: ConfigMap, <<: {kind: Secret}, data: {a: b}}\n".to_owned(),
        ];
        for file in crate::testing::manifest_files() {
            texts.push(std::fs::read_to_string(&file).unwrap());
        }
        let (mut documents, mut scalers, mut annotated) = (0, 0, 0);
        for text in &texts {
            for chunk in super::super::split_documents(text) {
                let wholly = |_: &str, _: &str| &ALL;
                for choose in [&wholly as super::super::Choose<'_>, &scanned] {
                    let read = super::super::read_tree(chunk.text, choose);
                    for (tree, _) in read
                        .values
                        .into_iter()
                        .chain(read.partial.map(|p| (p, crate::path::FieldPath::root())))
                    {
                        documents += 1;
                        let value = tree.clone().into_value();
                        // Read alike: identity, autoscaler grouping, the object stage.
                        let key = ObjectKey::of(&tree, "default");
                        assert_eq!(key, ObjectKey::of(&value, "default"));
                        if let Some(key) = key {
                            let object = Object {
                                key: key.clone(),
                                value: value.clone(),
                                origin: Origin::default(),
                            };
                            let scaler = Scaler::read(&key, &tree);
                            assert_eq!(scaler, Scaler::of(&object));
                            scalers += usize::from(scaler.is_some_and(|s| !s.owners.is_empty()));
                        }
                        assert_eq!(object_stage_reads(&tree), object_stage_reads(&value));
                        annotated += usize::from(object_stage_reads(&tree));
                        assert_eq!(
                            crate::packed::pack(&tree),
                            crate::packed::pack(&value),
                            "{value}"
                        );
                        for keep in [&IDENTITY_FIELDS, &SCALER_FIELDS, &WORKLOAD_FIELDS] {
                            let pruned = keep.prune(value.clone());
                            assert_eq!(tree.kept_value(keep), pruned);
                            let pruned_tree = keep.prune_tree(tree.clone());
                            assert_eq!(
                                crate::packed::pack(&pruned_tree),
                                crate::packed::pack(&pruned)
                            );
                            assert_eq!(pruned_tree.into_value().to_string(), pruned.to_string());
                        }
                    }
                }
            }
        }
        assert!(documents > 200, "{documents}");
        assert!(
            scalers >= 4 && annotated >= 4 && annotated < documents / 2,
            "{scalers} {annotated}"
        );
    }
}
