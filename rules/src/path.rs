//! Field paths inside one object.
//!
//! One representation, two renderings: `Display` gives the API server's syntax
//! (`spec.metrics[0].resource.target.averageUtilization`, map keys as `[key]`,
//! long names and keys cut as [`shown`] cuts them),
//! [`FieldPath::pointer`] gives an RFC 6901 JSON Pointer for spans and patches.

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Number, Value};

use crate::quote::shown;

/// One step of a [`FieldPath`]. Names are shared: a path extended by one
/// step copies the steps before it, which rules and decoding do for every
/// field they look at.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Segment {
    /// A struct field, rendered `.name`.
    Field(Arc<str>),
    /// A key of a map such as `metadata.annotations`, rendered `[key]`.
    Key(Arc<str>),
    /// A list index, rendered `[i]`.
    Index(usize),
}

/// A path to a field inside one object.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldPath(Vec<Segment>);

impl FieldPath {
    /// The path of the object itself.
    pub fn root() -> Self {
        Self::default()
    }

    /// Builds a path from dotted struct fields, e.g. `FieldPath::parse("spec.maxReplicas")`.
    pub fn fields(dotted: &str) -> Self {
        Self(
            dotted
                .split('.')
                .filter(|s| !s.is_empty())
                .map(|s| Segment::Field(s.into()))
                .collect(),
        )
    }

    /// This path extended by a struct field.
    #[must_use]
    pub fn field(&self, name: &str) -> Self {
        self.with(Segment::Field(name.into()))
    }

    /// This path extended by a map key.
    #[must_use]
    pub fn key(&self, key: &str) -> Self {
        self.with(Segment::Key(key.into()))
    }

    /// This path extended by a list index.
    #[must_use]
    pub fn index(&self, index: usize) -> Self {
        self.with(Segment::Index(index))
    }

    /// This path followed by all segments of `tail`.
    #[must_use]
    pub fn join(&self, tail: &FieldPath) -> Self {
        let mut segments = self.0.clone();
        segments.extend(tail.0.iter().cloned());
        Self(segments)
    }

    fn with(&self, segment: Segment) -> Self {
        let mut segments = Vec::with_capacity(self.0.len() + 1);
        segments.extend(self.0.iter().cloned());
        segments.push(segment);
        Self(segments)
    }

    /// A path from its segments, outermost first.
    pub fn from_segments(segments: Vec<Segment>) -> Self {
        Self(segments)
    }

    /// The path without its last segment; `None` for the root.
    pub fn parent(&self) -> Option<Self> {
        let (_, parent) = self.0.split_last()?;
        Some(Self(parent.to_vec()))
    }

    /// The segments, outermost first.
    pub fn segments(&self) -> &[Segment] {
        &self.0
    }

    /// Whether `prefix` is this path or one of its ancestors.
    pub fn starts_with(&self, prefix: &FieldPath) -> bool {
        self.0.starts_with(&prefix.0)
    }

    /// The part of this path after `prefix`, if `prefix` is an ancestor.
    pub fn strip_prefix(&self, prefix: &FieldPath) -> Option<FieldPath> {
        self.0
            .strip_prefix(prefix.0.as_slice())
            .map(|rest| Self(rest.to_vec()))
    }

    /// The RFC 6901 JSON Pointer form, e.g. `/spec/metrics/0/type`.
    pub fn pointer(&self) -> String {
        let mut out = String::new();
        for segment in &self.0 {
            out.push('/');
            match segment {
                Segment::Field(name) | Segment::Key(name) => {
                    out.push_str(&name.replace('~', "~0").replace('/', "~1"));
                }
                Segment::Index(i) => out.push_str(&i.to_string()),
            }
        }
        out
    }

    /// Looks the path up in a JSON value.
    pub fn lookup<'v>(&self, value: &'v Value) -> Option<&'v Value> {
        self.0
            .iter()
            .try_fold(value, |value, segment| match segment {
                Segment::Field(name) | Segment::Key(name) => member(value, name),
                Segment::Index(i) => value.get(*i),
            })
    }
}

/// Maps at most this long are searched entry by entry: cheaper than hashing
/// the name (serde_json's maps hash with SipHash), and objects' maps are
/// mostly this small.
const SCANNED: usize = 12;

/// `map[name]`, as `Map::get` finds it.
#[inline]
pub fn entry<'v>(map: &'v Map<String, Value>, name: &str) -> Option<&'v Value> {
    if map.len() <= SCANNED {
        map.iter()
            .find_map(|(key, value)| (key == name).then_some(value))
    } else {
        map.get(name)
    }
}

/// The member `name` of `value` when it is an object, as `Value::get` finds it.
// Asked for all over the rules, mostly with a constant name: inlined (with
// `entry`), whatever the partition into codegen units.
#[inline]
pub fn member<'v>(value: &'v Value, name: &str) -> Option<&'v Value> {
    entry(value.as_object()?, name)
}

/// The field at the end of a chain of object members, e.g.
/// `get(&object.value, &["spec", "selector"])`: a constant JSON Pointer
/// without the allocations of `Value::pointer`.
pub fn get<'v>(value: &'v Value, names: &[&str]) -> Option<&'v Value> {
    names
        .iter()
        .try_fold(value, |value, name| member(value, name))
}

/// A JSON value, read: serde_json's [`Value`], or a document's tree
/// (`crate::source::Tree`). What reads objects either way
/// ([`crate::object::ObjectKey::of`], [`crate::packed::pack`]) reads them
/// through this.
pub trait Json: Sized {
    /// A mapping's entries.
    type Entries<'v>: Iterator<Item = (&'v str, &'v Self)> + Clone
    where
        Self: 'v;

    /// What the value is.
    fn shape(&self) -> Shape<'_, Self>;

    /// The value at `name` of a mapping, found by comparing its keys:
    /// cheap for the few keys of an object's top level and metadata.
    fn member(&self, name: &str) -> Option<&Self> {
        match self.shape() {
            Shape::Object(_, mut entries) => {
                entries.find_map(|(key, value)| (key == name).then_some(value))
            }
            _ => None,
        }
    }

    /// The string, if the value is one.
    fn text(&self) -> Option<&str> {
        match self.shape() {
            Shape::String(s) => Some(s),
            _ => None,
        }
    }

    /// The field at the end of a chain of mapping members, as [`get`]
    /// finds it in a serde_json value.
    fn at(&self, names: &[&str]) -> Option<&Self> {
        names
            .iter()
            .try_fold(self, |value, name| value.member(name))
    }

    /// The items, if the value is a sequence.
    fn items(&self) -> Option<&[Self]> {
        match self.shape() {
            Shape::Array(items) => Some(items),
            _ => None,
        }
    }

    /// Whether the value is `null`.
    fn is_null(&self) -> bool {
        matches!(self.shape(), Shape::Null)
    }

    /// Whether the value is a mapping.
    fn is_mapping(&self) -> bool {
        matches!(self.shape(), Shape::Object(..))
    }

    /// The same value as a serde_json [`Value`]: for the rare reader that
    /// needs one (a fix's patch, a value printed as JSON).
    fn to_value(&self) -> Value;
}

/// What a [`Json`] value is.
pub enum Shape<'v, V: Json + 'v> {
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A number.
    Number(&'v Number),
    /// A string.
    String(&'v str),
    /// A sequence.
    Array(&'v [V]),
    /// A mapping: how many entries, and the entries.
    Object(usize, V::Entries<'v>),
}

fn value_entry<'v>((key, value): (&'v String, &'v Value)) -> (&'v str, &'v Value) {
    (key, value)
}

impl Json for Value {
    type Entries<'v> = std::iter::Map<
        serde_json::map::Iter<'v>,
        fn((&'v String, &'v Value)) -> (&'v str, &'v Value),
    >;

    fn member(&self, name: &str) -> Option<&Self> {
        member(self, name)
    }

    fn to_value(&self) -> Value {
        self.clone()
    }

    fn shape(&self) -> Shape<'_, Self> {
        match self {
            Value::Null => Shape::Null,
            Value::Bool(b) => Shape::Bool(*b),
            Value::Number(n) => Shape::Number(n),
            Value::String(s) => Shape::String(s),
            Value::Array(items) => Shape::Array(items),
            Value::Object(map) => {
                Shape::Object(map.len(), map.iter().map(value_entry as fn(_) -> _))
            }
        }
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Field(name) if i == 0 => f.write_str(&shown(name))?,
                Segment::Field(name) => write!(f, ".{}", shown(name))?,
                Segment::Key(key) => write!(f, "[{}]", shown(key))?,
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_api_server_syntax_and_pointer() {
        let path = FieldPath::fields("spec.metrics")
            .index(0)
            .field("resource")
            .field("target");
        assert_eq!(path.to_string(), "spec.metrics[0].resource.target");
        assert_eq!(path.pointer(), "/spec/metrics/0/resource/target");
    }

    #[test]
    fn escapes_map_keys_in_pointers() {
        let path = FieldPath::fields("metadata.annotations").key("hpa-lint.io/ignore.x~y");
        assert_eq!(
            path.to_string(),
            "metadata.annotations[hpa-lint.io/ignore.x~y]"
        );
        assert_eq!(
            path.pointer(),
            "/metadata/annotations/hpa-lint.io~1ignore.x~0y"
        );
    }

    #[test]
    fn lookup_agrees_with_json_pointer() {
        let value = serde_json::json!({"metadata": {"annotations": {"a/b": "x"}}, "spec": {"m": [1, {"k": 2}]}});
        for path in [
            FieldPath::fields("metadata.annotations").key("a/b"),
            FieldPath::fields("spec.m").index(1).field("k"),
            FieldPath::fields("spec.missing"),
        ] {
            assert_eq!(path.lookup(&value), value.pointer(&path.pointer()));
        }
    }

    #[test]
    fn member_lookups_agree_with_map_get_in_small_and_large_maps() {
        for size in [0, 1, SCANNED, SCANNED + 1, 40] {
            let map: Map<String, Value> = (0..size)
                .map(|i| (format!("k{i}"), Value::from(i)))
                .collect();
            let value = Value::Object(map.clone());
            for name in ["k0", "k5", "k12", "k13", "k39", "k", "k00", ""] {
                assert_eq!(entry(&map, name), map.get(name), "{size} {name}");
                assert_eq!(member(&value, name), value.get(name), "{size} {name}");
            }
        }
        let value = serde_json::json!({"spec": {"selector": {"app": "web"}, "n": [1]}});
        assert_eq!(
            get(&value, &["spec", "selector"]),
            value.pointer("/spec/selector")
        );
        assert_eq!(get(&value, &["spec", "n", "0"]), None);
        assert_eq!(get(&value, &[]), Some(&value));
        assert_eq!(member(&Value::from(3), "spec"), None);
    }
}
