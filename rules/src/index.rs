//! Cross-object lookups. Rules ask an [`Index`] for the objects around an HPA
//! (its target, other autoscalers, disruption budgets); front ends provide it:
//! [`MemoryIndex`] over manifests, the webhook over its cluster caches.

use std::collections::HashMap;
use std::sync::Arc;

use crate::model::autoscaler::scale_target;
use crate::object::{Object, ObjectRef};

/// The answer to a lookup. `Unknown` means the index cannot tell (a cache that is
/// not synced yet); rules say nothing then, rather than guess.
#[derive(Clone, Debug)]
pub enum Lookup<T> {
    /// The object exists.
    Found(T),
    /// The object is not there.
    Missing,
    /// The index cannot tell.
    Unknown,
}

/// Everything a rule may ask about objects other than the one being checked.
pub trait Index: Sync {
    /// The object a reference points to (group, kind, namespace, name; any version).
    fn get(&self, target: &ObjectRef) -> Lookup<Arc<Object>>;
    /// Every autoscaler (HPA or KEDA ScaledObject) whose scale target is `target`.
    fn scalers_of(&self, target: &ObjectRef) -> Vec<Arc<Object>>;
    /// Objects of one group and kind in one namespace.
    fn list(&self, namespace: &str, group: &str, kind: &str) -> Vec<Arc<Object>>;
}

/// An index over a fixed set of objects: everything the CLI read, or a test fixture.
#[derive(Default)]
pub struct MemoryIndex {
    by_ref: HashMap<ObjectRef, Arc<Object>>,
    scalers: HashMap<ObjectRef, Vec<Arc<Object>>>,
    by_kind: HashMap<(String, String, String), Vec<Arc<Object>>>,
}

impl MemoryIndex {
    /// Indexes objects; when two share group, kind, namespace and name, the first wins.
    pub fn new(objects: impl IntoIterator<Item = Arc<Object>>) -> Self {
        let mut index = Self::default();
        for object in objects {
            let key = &object.key;
            index
                .by_kind
                .entry((
                    key.namespace.clone(),
                    key.group().to_owned(),
                    key.kind.clone(),
                ))
                .or_default()
                .push(Arc::clone(&object));
            if let Some(target) = scale_target(&object) {
                index
                    .scalers
                    .entry(target)
                    .or_default()
                    .push(Arc::clone(&object));
            }
            index.by_ref.entry(key.to_ref()).or_insert(object);
        }
        index
    }
}

impl Index for MemoryIndex {
    fn get(&self, target: &ObjectRef) -> Lookup<Arc<Object>> {
        self.by_ref
            .get(target)
            .map_or(Lookup::Missing, |o| Lookup::Found(Arc::clone(o)))
    }

    fn scalers_of(&self, target: &ObjectRef) -> Vec<Arc<Object>> {
        self.scalers.get(target).cloned().unwrap_or_default()
    }

    fn list(&self, namespace: &str, group: &str, kind: &str) -> Vec<Arc<Object>> {
        self.by_kind
            .get(&(namespace.to_owned(), group.to_owned(), kind.to_owned()))
            .cloned()
            .unwrap_or_default()
    }
}
