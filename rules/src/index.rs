//! Cross-object lookups. Rules ask an [`Index`] for the objects around an HPA
//! (its target, other autoscalers, disruption budgets); front ends provide it:
//! [`MemoryIndex`] over manifests, the webhook over its cluster caches.

use std::cmp::Ordering;
use std::collections::HashMap;
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
///
/// Objects are found through sorted lists of their positions, which hold no
/// copy of their names: an input may have many thousands of objects.
#[derive(Default)]
pub struct MemoryIndex {
    entries: Vec<Stored>,
    /// The entry each reference resolves to (the first one given), in the
    /// order of [`by_reference`].
    by_ref: Box<[u32]>,
    /// The readable entries of `by_ref`, in the order of [`by_listing`] and
    /// then in the order given.
    by_kind: Box<[u32]>,
    scalers: HashMap<ObjectRef, Arc<Autoscalers>>,
}

/// Orders objects by reference: name, kind, namespace, then group. Names
/// tell most objects apart; the group is read out of `apiVersion` only when
/// the rest is equal.
fn by_reference(a: &ObjectKey, b: &ObjectKey) -> Ordering {
    (&a.name, &a.kind, &a.namespace)
        .cmp(&(&b.name, &b.kind, &b.namespace))
        .then_with(|| a.group().cmp(b.group()))
}

/// [`by_reference`], for an object and a reference.
fn to_reference(key: &ObjectKey, target: &ObjectRef) -> Ordering {
    (&key.name, &key.kind, &key.namespace)
        .cmp(&(&target.name, &target.kind, &target.namespace))
        .then_with(|| key.group().cmp(&target.group))
}

/// Orders objects by where they are listed: namespace, kind, then group.
fn by_listing(key: &ObjectKey, namespace: &str, group: &str, kind: &str) -> Ordering {
    (key.namespace.as_str(), key.kind.as_str())
        .cmp(&(namespace, kind))
        .then_with(|| key.group().cmp(group))
}

/// An entry's position, as the sorted lists hold it.
fn position(i: usize) -> u32 {
    u32::try_from(i).expect("fewer than 2³² objects")
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
        let entries = entries.into_iter();
        let mut stored = Vec::with_capacity(entries.size_hint().0);
        let mut targets = Vec::new();
        for (i, (entry, target)) in entries.enumerate() {
            if let Some(target) = target {
                targets.push((target, position(i)));
            }
            stored.push(entry);
        }
        let key = |i: &u32| stored[*i as usize].key();
        // Stable: of the entries for one reference, the first given leads.
        let mut by_ref: Vec<u32> = (0..stored.len()).map(position).collect();
        by_ref.sort_by(|a, b| by_reference(key(a), key(b)));
        by_ref.dedup_by(|later, first| by_reference(key(later), key(first)).is_eq());
        let mut first = vec![false; stored.len()];
        for &i in &by_ref {
            first[i as usize] = !matches!(stored[i as usize], Stored::Unreadable { .. });
        }
        let mut by_kind: Vec<u32> = by_ref
            .iter()
            .copied()
            .filter(|&i| first[i as usize])
            .collect();
        by_kind.sort_by(|a, b| {
            let (a_key, b_key) = (key(a), key(b));
            (&a_key.namespace, &a_key.kind)
                .cmp(&(&b_key.namespace, &b_key.kind))
                .then_with(|| a_key.group().cmp(b_key.group()))
                .then(a.cmp(b))
        });
        let mut scalers: HashMap<ObjectRef, Vec<u32>> = HashMap::new();
        for (target, i) in targets {
            if first[i as usize] {
                scalers.entry(target).or_default().push(i);
            }
        }
        let mut index = Self {
            entries: stored,
            by_ref: by_ref.into(),
            by_kind: by_kind.into(),
            scalers: HashMap::new(),
        };
        // Autoscalers are grouped per target once the input is complete, each
        // group from its objects parsed for the moment.
        index.scalers = scalers
            .into_iter()
            .map(|(target, members)| {
                let objects: Vec<Arc<Object>> = members
                    .iter()
                    .filter_map(|&i| index.object(i as usize))
                    .collect();
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

    fn key(&self, i: u32) -> &ObjectKey {
        self.entries[i as usize].key()
    }
}

impl Index for MemoryIndex {
    fn get(&self, target: &ObjectRef) -> Lookup<Arc<Object>> {
        match self
            .by_ref
            .binary_search_by(|&i| to_reference(self.key(i), target))
        {
            Err(_) => Lookup::Missing,
            Ok(at) => self
                .object(self.by_ref[at] as usize)
                .map_or(Lookup::Unreadable, Lookup::Found),
        }
    }

    fn scalers_of(&self, target: &ObjectRef) -> Arc<Autoscalers> {
        self.scalers.get(target).cloned().unwrap_or_default()
    }

    /// Holds every object of the input: a kind not in it has none.
    fn list(&self, namespace: &str, group: &str, kind: &str) -> Lookup<Vec<Arc<Object>>> {
        let order = |i: &u32| by_listing(self.key(*i), namespace, group, kind);
        let start = self.by_kind.partition_point(|i| order(i).is_lt());
        let end = start + self.by_kind[start..].partition_point(|i| order(i).is_eq());
        Lookup::Found(
            self.by_kind[start..end]
                .iter()
                .filter_map(|&i| self.object(i as usize))
                .collect(),
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

    #[test]
    fn the_first_object_of_a_reference_wins_and_lists_keep_input_order() {
        let object = |kind: &str, name: &str, replicas: u32| {
            let value = json!({"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name}, "spec": {"replicas": replicas}});
            Object::new(value, Origin(replicas), "shop").unwrap()
        };
        let unreadable = Stored::Unreadable {
            key: object("Deployment", "broken", 0).key,
        };
        let index = MemoryIndex::with_scale_targets([
            (Stored::text(&object("Deployment", "web", 1)), None),
            (Stored::text(&object("StatefulSet", "db", 2)), None),
            (Stored::text(&object("Deployment", "api", 3)), None),
            (Stored::text(&object("Deployment", "web", 4)), None),
            (unreadable, None),
            (Stored::text(&object("Deployment", "broken", 6)), None),
        ]);
        let replicas = |object: &Object| object.value["spec"]["replicas"].as_u64();
        let get = |kind: &str, name: &str| index.get(&object(kind, name, 0).key.to_ref());
        assert!(
            matches!(get("Deployment", "web"), Lookup::Found(web) if replicas(&web) == Some(1))
        );
        assert!(matches!(get("Deployment", "broken"), Lookup::Unreadable));
        assert!(matches!(get("Deployment", "gone"), Lookup::Missing));
        let Lookup::Found(deployments) = index.list("shop", "apps", "Deployment") else {
            panic!("a memory index knows every kind")
        };
        let listed: Vec<_> = deployments.iter().map(|d| replicas(d)).collect();
        assert_eq!(listed, [Some(1), Some(3)]);
        assert!(
            matches!(index.list("other", "apps", "Deployment"), Lookup::Found(none) if none.is_empty())
        );
    }
}
