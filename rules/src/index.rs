//! Cross-object lookups. Rules ask an [`Index`] for the objects around an HPA
//! (its target, other autoscalers, disruption budgets); front ends provide it:
//! [`MemoryIndex`] over manifests, the webhook over its cluster caches.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;

use crate::model::autoscaler::{Autoscalers, scale_target};
use crate::object::{Object, ObjectKey, ObjectRef, Origin};

/// The answer to a lookup. `Unknown` means the index cannot tell (a cache that is
/// not synced yet); rules say nothing then, rather than guess.
#[derive(Clone, Debug)]
pub enum Lookup<T> {
    /// The object exists.
    Found(T),
    /// The object is not there.
    Missing,
    /// The object is there, but could not be read (its YAML is broken).
    Unreadable,
    /// The index cannot tell.
    Unknown,
}

/// Everything a rule may ask about objects other than the one being checked.
pub trait Index: Sync {
    /// The object a reference points to (group, kind, namespace, name; any version).
    fn get(&self, target: &ObjectRef) -> Lookup<Arc<Object>>;
    /// The autoscalers (HPAs, KEDA ScaledObjects) whose scale target is `target`.
    fn scalers_of(&self, target: &ObjectRef) -> Arc<Autoscalers>;
    /// Objects of one group and kind in one namespace; [`Lookup::Unknown`]
    /// when the index does not hold that kind (a webhook that does not watch
    /// it), which is not the same as none.
    fn list(&self, namespace: &str, group: &str, kind: &str) -> Lookup<Vec<Arc<Object>>>;
}

/// How an index holds an object: parsed, or as JSON text parsed again on each
/// use, which takes a fraction of the memory, for the many objects that are
/// looked at once or twice (workloads in a large repository).
#[derive(Clone, Debug)]
pub enum Stored {
    /// Ready to use.
    Parsed(Arc<Object>),
    /// Compact: the value as JSON text.
    Text {
        /// Identity.
        key: ObjectKey,
        /// Front-end handle.
        origin: Origin,
        /// `serde_json` text of the value.
        json: Box<str>,
    },
    /// An object whose document could not be read: known by name only.
    Unreadable {
        /// Identity, as far as it was read.
        key: ObjectKey,
    },
}

impl Stored {
    /// The compact form of an object.
    pub fn text(object: &Object) -> Self {
        Stored::Text {
            key: object.key.clone(),
            origin: object.origin,
            json: object.value.to_string().into_boxed_str(),
        }
    }

    /// The same entry with another front-end handle.
    #[must_use]
    pub fn with_origin(mut self, origin: Origin) -> Self {
        match &mut self {
            Stored::Parsed(object) => Arc::make_mut(object).origin = origin,
            Stored::Text { origin: own, .. } => *own = origin,
            Stored::Unreadable { .. } => {}
        }
        self
    }

    /// The object's identity.
    pub fn key(&self) -> &ObjectKey {
        match self {
            Stored::Parsed(object) => &object.key,
            Stored::Text { key, .. } | Stored::Unreadable { key } => key,
        }
    }

    /// The object, parsed if it is held as text; `None` when it was unreadable.
    pub fn object(&self) -> Option<Arc<Object>> {
        match self {
            Stored::Parsed(object) => Some(Arc::clone(object)),
            Stored::Text { key, origin, json } => Some(Arc::new(Object {
                key: key.clone(),
                // The text was written by serde_json from a value: it parses.
                value: serde_json::from_str(json).unwrap_or_default(),
                origin: *origin,
            })),
            Stored::Unreadable { .. } => None,
        }
    }
}

/// An index over a fixed set of objects: everything the CLI read, or a test fixture.
#[derive(Default)]
pub struct MemoryIndex {
    entries: Vec<Stored>,
    /// The entry each reference resolves to: the first one given.
    by_ref: HashMap<ObjectRef, usize>,
    scalers: HashMap<ObjectRef, Arc<Autoscalers>>,
    by_kind: HashMap<(String, String, String), Vec<usize>>,
}

impl MemoryIndex {
    /// Indexes objects; when two share group, kind, namespace and name, the first wins.
    pub fn new(objects: impl IntoIterator<Item = Arc<Object>>) -> Self {
        Self::with_scale_targets(objects.into_iter().map(|object| {
            let target = scale_target(&object);
            (Stored::Parsed(object), target)
        }))
    }

    /// Indexes stored objects with their scale targets (see
    /// [`crate::model::autoscaler::scale_target`]), worked out while they were
    /// read. Each reference counts once, whatever repeats: the first object
    /// given for it wins, as in [`MemoryIndex::new`].
    pub fn with_scale_targets(
        entries: impl IntoIterator<Item = (Stored, Option<ObjectRef>)>,
    ) -> Self {
        let mut index = Self::default();
        let mut scalers: HashMap<ObjectRef, Vec<usize>> = HashMap::new();
        for (i, (stored, target)) in entries.into_iter().enumerate() {
            let key = stored.key();
            let first = match index.by_ref.entry(key.to_ref()) {
                Entry::Vacant(slot) => {
                    slot.insert(i);
                    true
                }
                Entry::Occupied(_) => false,
            };
            if first && !matches!(stored, Stored::Unreadable { .. }) {
                index
                    .by_kind
                    .entry((
                        key.namespace.clone(),
                        key.group().to_owned(),
                        key.kind.clone(),
                    ))
                    .or_default()
                    .push(i);
                if let Some(target) = target {
                    scalers.entry(target).or_default().push(i);
                }
            }
            index.entries.push(stored);
        }
        // Autoscalers are grouped per target once the input is complete, each
        // group from its objects parsed for the moment.
        index.scalers = scalers
            .into_iter()
            .map(|(target, members)| {
                let objects: Vec<Arc<Object>> =
                    members.iter().filter_map(|&i| index.object(i)).collect();
                let autoscalers = Autoscalers::new(objects.iter().map(Arc::as_ref));
                (target, Arc::new(autoscalers))
            })
            .collect();
        index
    }

    /// Number of objects.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The `i`-th object, in the order given; `None` when it was unreadable.
    pub fn object(&self, i: usize) -> Option<Arc<Object>> {
        self.entries[i].object()
    }
}

impl Index for MemoryIndex {
    fn get(&self, target: &ObjectRef) -> Lookup<Arc<Object>> {
        match self.by_ref.get(target) {
            None => Lookup::Missing,
            Some(&i) => self.object(i).map_or(Lookup::Unreadable, Lookup::Found),
        }
    }

    fn scalers_of(&self, target: &ObjectRef) -> Arc<Autoscalers> {
        self.scalers.get(target).cloned().unwrap_or_default()
    }

    /// Holds every object of the input: a kind not in it has none.
    fn list(&self, namespace: &str, group: &str, kind: &str) -> Lookup<Vec<Arc<Object>>> {
        Lookup::Found(
            self.by_kind
                .get(&(namespace.to_owned(), group.to_owned(), kind.to_owned()))
                .map(|indices| indices.iter().filter_map(|&i| self.object(i)).collect())
                .unwrap_or_default(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_and_parsed_entries_answer_alike() {
        let deployment = Object::new(
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 2}}),
            Origin(7),
            "shop",
        )
        .unwrap();
        let parsed = MemoryIndex::new([Arc::new(deployment.clone())]);
        let text = MemoryIndex::with_scale_targets([(Stored::text(&deployment), None)]);
        let target = deployment.key.to_ref();
        for index in [&parsed, &text] {
            let Lookup::Found(found) = index.get(&target) else {
                panic!("not found")
            };
            assert_eq!(
                (&found.key, &found.value, found.origin),
                (&deployment.key, &deployment.value, Origin(7))
            );
            assert!(
                matches!(index.list("shop", "apps", "Deployment"), Lookup::Found(list) if list.len() == 1)
            );
        }
    }
}
