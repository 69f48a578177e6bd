//! The HPA being linted, as the rules read it.

use std::cell::OnceCell;

use crate::model::workload::tree;
use crate::object::{Object, ObjectKey, Origin, SUPPRESSION_PREFIX};
use crate::path::{Json, Shape};
use crate::source::Tree;

/// The HPA being linted, as the rules read it: its identity, and its value
/// as a tree borrowing its strings, from the packed bytes the CLI kept or
/// from the [`Object`] a front end was given. A serde_json value costs many
/// times what a tree does to build and to drop, and few rules need one.
pub struct Linted<'a> {
    /// Identity.
    pub key: ObjectKey,
    /// Front-end handle.
    pub origin: Origin,
    /// The HPA as written.
    pub value: Tree<'a>,
    /// [`Linted::whole`] when a front end gave it.
    given: Option<&'a Object>,
    /// [`Linted::whole`] made from the tree.
    made: OnceCell<Object>,
}

impl<'a> Linted<'a> {
    /// The HPA `key` identifies, read from `value`.
    pub fn new(key: ObjectKey, origin: Origin, value: Tree<'a>) -> Self {
        Self {
            key,
            origin,
            value,
            given: None,
            made: OnceCell::new(),
        }
    }

    /// `object`, its strings borrowed.
    pub fn of(object: &'a Object) -> Self {
        Self {
            key: object.key.clone(),
            origin: object.origin,
            value: tree(&object.value),
            given: Some(object),
            made: OnceCell::new(),
        }
    }

    /// The HPA as a serde_json value: for the few readers that need one
    /// (its status, the fixes of decoding errors), made from the tree the
    /// first time one asks.
    pub fn whole(&self) -> &Object {
        self.given.unwrap_or_else(|| {
            self.made.get_or_init(|| Object {
                key: self.key.clone(),
                origin: self.origin,
                value: self.value.to_value(),
            })
        })
    }

    /// The rules the HPA suppresses, as [`Object::suppressions`] finds them.
    pub fn suppressions(&self) -> impl Iterator<Item = (&str, &str)> {
        let annotations = self.value.at(&["metadata", "annotations"]);
        let entries = match annotations.map(Json::shape) {
            Some(Shape::Object(_, entries)) => Some(entries),
            _ => None,
        };
        entries
            .into_iter()
            .flatten()
            .filter_map(|(key, value)| Some((key.strip_prefix(SUPPRESSION_PREFIX)?, value.text()?)))
    }
}
