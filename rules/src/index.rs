//! Cross-object lookups. Rules ask an [`Index`] for the objects around an HPA
//! (its target, other autoscalers, disruption budgets); front ends provide it:
//! [`MemoryIndex`] over manifests, the webhook over its cluster caches.

use std::ops::Range;
use std::sync::{Arc, OnceLock};

use crate::model::autoscaler::{Autoscalers, FEW, Scaler, VPA, Vpa, owners, scale_target};
use crate::model::disruption::{Block, PDB, widest_block};
use crate::model::workload::{DefaultRequests, LIMIT_RANGE, Target};
use crate::names::{Key, Name, Names, Ranks, Ref};
use crate::object::{Identity, KeyRef, Kind, Object, ObjectKey, ObjectRef, Origin};
use crate::packed;

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

impl<T> Lookup<T> {
    /// The answer with `f` applied to what was found.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Lookup<U> {
        match self {
            Lookup::Found(found) => Lookup::Found(f(found)),
            Lookup::Missing => Lookup::Missing,
            Lookup::Unreadable => Lookup::Unreadable,
            Lookup::Unknown => Lookup::Unknown,
        }
    }
}

/// Everything a rule may ask about objects other than the one being checked.
pub trait Index: Sync {
    /// The object a reference points to (group, kind, namespace, name; any version).
    fn get(&self, target: &ObjectRef) -> Lookup<Arc<Object>>;

    /// [`Index::get`] for an HPA's scale target, which rules read as a
    /// [`Target`]: an index holding the object packed lends its bytes
    /// rather than unpacking them into a serde_json value.
    fn get_target(&self, target: &ObjectRef) -> Lookup<Target<'_>> {
        self.get(target).map(|object| Target::owned(&object))
    }
    /// The autoscalers (HPAs, KEDA ScaledObjects) whose scale target is `target`.
    fn scalers_of(&self, target: &ObjectRef) -> Arc<Autoscalers>;
    /// Objects of one group and kind in one namespace; [`Lookup::Unknown`]
    /// when the index does not hold that kind (a webhook that does not watch
    /// it), which is not the same as none.
    fn list(&self, namespace: &str, group: &str, kind: &str) -> Lookup<Vec<Arc<Object>>>;

    /// [`Index::list`], lending each object to `visit` in turn rather than
    /// collecting them: rules list a namespace's objects for every HPA in
    /// it, and most of those objects are not the ones they look for. The
    /// answer says whether there was a list ([`Lookup::Found`]).
    fn visit_list(
        &self,
        namespace: &str,
        group: &str,
        kind: &str,
        visit: &mut dyn FnMut(&Arc<Object>),
    ) -> Lookup<()> {
        match self.list(namespace, group, kind) {
            Lookup::Found(objects) => {
                objects.iter().for_each(visit);
                Lookup::Found(())
            }
            Lookup::Missing => Lookup::Missing,
            Lookup::Unreadable => Lookup::Unreadable,
            Lookup::Unknown => Lookup::Unknown,
        }
    }

    /// What the LimitRanges of `namespace` give containers that request
    /// nothing ([`DefaultRequests`]); `None` when the index does not hold
    /// LimitRanges.
    fn default_requests(&self, namespace: &str) -> Option<DefaultRequests> {
        let mut defaults = DefaultRequests::default();
        let listed = self.visit_list(
            namespace,
            LIMIT_RANGE.group,
            LIMIT_RANGE.kind,
            &mut |range| defaults.add(&range.value),
        );
        matches!(listed, Lookup::Found(())).then_some(defaults)
    }

    /// The PodDisruptionBudgets of a namespace that block evictions at some
    /// replica count, each lent to `visit` with its [`widest_block`], in the
    /// order [`Index::visit_list`] lends them: a rule looks at them for
    /// every HPA of the namespace, and most budgets never block. An index
    /// that holds them may work each one's block out once.
    fn visit_budgets(&self, namespace: &str, visit: &mut dyn FnMut(&Arc<Object>, Block)) {
        self.visit_list(namespace, PDB.group, PDB.kind, &mut |pdb| {
            if let Some(block) = widest_block(pdb) {
                visit(pdb, block);
            }
        });
    }

    /// The VerticalPodAutoscalers of `target`'s namespace whose
    /// `spec.targetRef` is `target` and that change running pods, lent to
    /// `visit` in the order [`Index::visit_list`] lends them: a rule looks
    /// for them for every HPA, and most of a namespace's VPAs target other
    /// workloads. An index that holds them may sort them out once.
    fn visit_vpas(&self, target: &ObjectRef, visit: &mut dyn FnMut(&Arc<Object>)) {
        self.visit_list(&target.namespace, VPA.group, VPA.kind, &mut |vpa| {
            if resizes(vpa, target) {
                visit(vpa);
            }
        });
    }
}

/// Whether a VPA targets `target` and changes its running pods.
fn resizes(object: &Object, target: &ObjectRef) -> bool {
    Vpa::targeting(object, target).is_some_and(|vpa| vpa.changes_pods())
}

/// An object as it is given to an index: parsed, or packed
/// ([`crate::packed`]) and unpacked on each use, which takes a fraction of
/// the memory (a kept Deployment: some 1 KB packed, 8 KB parsed), for the
/// many objects that are looked at once or twice (workloads in a large
/// repository).
#[derive(Clone, Debug)]
pub enum Stored {
    /// Ready to use.
    Parsed(Arc<Object>),
    /// Compact: the value packed.
    Compact {
        /// Identity.
        key: Identity,
        /// Front-end handle.
        origin: Origin,
        /// The value, packed by [`crate::packed::pack`].
        packed: Box<[u8]>,
    },
    /// An autoscaler that rules only read as one of its target's
    /// autoscalers ([`Index::scalers_of`]), never by reference or in a list:
    /// held by identity only. Lookups of it answer [`Lookup::Unknown`].
    Grouped {
        /// Identity.
        key: Identity,
    },
    /// An object whose document could not be read: known by name only.
    Unreadable {
        /// Identity, as far as it was read.
        key: ObjectKey,
    },
}

impl Stored {
    /// The compact form of an object.
    pub fn compact(object: Object) -> Self {
        Stored::Compact {
            packed: packed::pack(&object.value),
            key: Identity::new(object.key.as_ref()),
            origin: object.origin,
        }
    }

    /// The object's identity.
    pub fn key(&self) -> KeyRef<'_> {
        match self {
            Stored::Parsed(object) => object.key.as_ref(),
            Stored::Compact { key, .. } | Stored::Grouped { key } => key.get(),
            Stored::Unreadable { key } => key.as_ref(),
        }
    }

    /// The object, unpacked if it is held compact; `None` when it was
    /// unreadable or is held by identity only.
    pub fn object(&self) -> Option<Arc<Object>> {
        match self {
            Stored::Parsed(object) => Some(Arc::clone(object)),
            Stored::Compact {
                key,
                origin,
                packed,
            } => Some(unpack(key.get().to_key(), *origin, packed)),
            Stored::Grouped { .. } | Stored::Unreadable { .. } => None,
        }
    }
}

fn unpack(key: ObjectKey, origin: Origin, packed: &[u8]) -> Arc<Object> {
    Arc::new(Object {
        key,
        value: packed::unpack(packed),
        origin,
    })
}

/// What an index holds of an object besides its identity.
#[derive(Debug)]
enum Body {
    Parsed(Arc<Object>),
    Compact { origin: Origin, packed: Box<[u8]> },
    Grouped,
    Unreadable,
}

/// An object a [`MemoryIndex`] holds whole, as it holds it.
enum Whole<'i> {
    Parsed(&'i Arc<Object>),
    Compact(Origin, &'i [u8]),
}

/// Objects gathered for a [`MemoryIndex`], in the order given, their
/// identities and references held in [`Names`]: what a front end holds of
/// each object while it reads the rest.
#[derive(Debug, Default)]
pub struct Entries {
    names: Names,
    keys: Vec<Key>,
    bodies: Vec<Body>,
    /// The scale target of each autoscaler, by entry.
    targets: Vec<(u32, Ref)>,
    /// The owners of the autoscalers that name any, by entry.
    owners: Vec<(u32, Ref)>,
}

impl Entries {
    /// Room for `objects` objects.
    pub fn with_capacity(objects: usize) -> Self {
        Self {
            keys: Vec::with_capacity(objects),
            bodies: Vec::with_capacity(objects),
            ..Self::default()
        }
    }

    /// Number of objects.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Adds an object, with what its autoscaler group reads when it is an
    /// autoscaler.
    pub fn push(&mut self, stored: Stored, scaler: Option<Scaler>) {
        let i = position(self.keys.len());
        self.keys.push(self.names.identity(stored.key()));
        if let Some(Scaler { target, owners }) = scaler {
            self.targets.push((i, self.names.reference(&target)));
            for owner in &owners {
                self.owners.push((i, self.names.reference(owner)));
            }
        }
        self.bodies.push(match stored {
            Stored::Parsed(object) => Body::Parsed(object),
            Stored::Compact { origin, packed, .. } => Body::Compact { origin, packed },
            Stored::Grouped { .. } => Body::Grouped,
            Stored::Unreadable { .. } => Body::Unreadable,
        });
    }

    /// Adds `other`'s objects after these.
    pub fn append(&mut self, other: Entries) {
        if self.is_empty() && self.names.is_empty() {
            *self = other;
            return;
        }
        // Most often a file's few objects, which its catalog holds apart
        // ([`crate::workspace::Catalog`]): no entries, nothing to add.
        if other.is_empty() {
            return;
        }
        let to: Vec<Name> = (0..other.names.len())
            .map(|n| self.names.add(other.names.get(position(n))))
            .collect();
        let shift = position(self.keys.len());
        self.keys
            .extend(other.keys.iter().map(|key| key.renumbered(&to)));
        self.bodies.extend(other.bodies);
        let moved = |(i, reference): (u32, Ref)| (i + shift, reference.renumbered(&to));
        self.targets.extend(other.targets.into_iter().map(moved));
        self.owners.extend(other.owners.into_iter().map(moved));
    }

    /// Lets go of spare room.
    pub fn shrink_to_fit(&mut self) {
        self.names.shrink_to_fit();
        self.keys.shrink_to_fit();
        self.bodies.shrink_to_fit();
        self.targets.shrink_to_fit();
        self.owners.shrink_to_fit();
    }

    /// Gives each object its position as its front-end handle.
    pub fn number(&mut self) {
        for (i, body) in self.bodies.iter_mut().enumerate() {
            let origin = Origin(position(i));
            match body {
                Body::Parsed(object) => Arc::make_mut(object).origin = origin,
                Body::Compact { origin: own, .. } => *own = origin,
                Body::Grouped | Body::Unreadable => {}
            }
        }
    }
}

/// An index over a fixed set of objects: everything the CLI read, or a test fixture.
///
/// Objects are found through sorted lists of their positions, and
/// identities are held in [`Names`]: an input may have many thousands of
/// objects.
#[derive(Default)]
pub struct MemoryIndex {
    names: Arc<Names>,
    /// Shared with the autoscaler groups.
    keys: Arc<[Key]>,
    bodies: Box<[Body]>,
    /// The entry each reference resolves to (the first one given), in the
    /// order of [`Key::cmp_in`].
    by_ref: Box<[u32]>,
    /// The readable entries of `by_ref`, in the order of
    /// [`Key::cmp_listing`] and then in the order given.
    by_kind: Box<[u32]>,
    /// The autoscalers of `by_kind` with their scale targets, by target and
    /// then in the order given.
    scalers: Box<[(Ref, u32)]>,
    /// The autoscalers of targets that have more than a few, worked out
    /// once, by where they start in `scalers`. A few are worked out when
    /// asked for, as fast as they are found: most targets have one.
    groups: Box<[(u32, Arc<Autoscalers>)]>,
    /// The owners of autoscalers, by entry.
    owners: Box<[(u32, Ref)]>,
    /// What [`Index::visit_budgets`] lends, worked out when first asked.
    budgets: OnceLock<Box<[Budget]>>,
    /// What [`Index::visit_vpas`] looks through, worked out when first asked.
    vpas: OnceLock<Box<[Resizer]>>,
}

/// A PodDisruptionBudget that blocks evictions at some replica count, as a
/// [`MemoryIndex`] lends it: by namespace, then as listed.
struct Budget {
    namespace: Name,
    object: Arc<Object>,
    block: Block,
}

/// A VerticalPodAutoscaler that changes running pods, as a [`MemoryIndex`]
/// looks for it: by namespace and the name of its target, then as listed.
struct Resizer {
    namespace: Name,
    /// `spec.targetRef.name`.
    target: Box<str>,
    object: Arc<Object>,
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
        let mut all = Entries::with_capacity(entries.size_hint().0);
        for (stored, target) in entries {
            let scaler = target.map(|target| Scaler {
                target,
                owners: stored
                    .object()
                    .map(|object| owners(&object).collect())
                    .unwrap_or_default(),
            });
            all.push(stored, scaler);
        }
        Self::of(all)
    }

    /// Indexes gathered objects (see [`MemoryIndex::with_scale_targets`]).
    pub fn of(entries: Entries) -> Self {
        let Entries {
            mut names,
            keys,
            bodies,
            targets,
            owners,
        } = entries;
        names.freeze();
        // Sorted by numbers standing for the strings, worked out once for
        // each entry (a sort compares many times more often than there are
        // entries) and held only while it sorts: an index may hold many.
        let ranks = Ranks::new(&names, &keys);
        let names = Arc::new(names);
        let in_order = |i: &u32| ranks.in_order(keys[*i as usize]);
        // Stable: of the entries for one reference, the first given leads.
        let mut by_ref: Vec<u32> = (0..keys.len()).map(position).collect();
        by_ref.sort_by_cached_key(in_order);
        by_ref.dedup_by_key(|i| in_order(i));
        let mut first = vec![false; keys.len()];
        for &i in &by_ref {
            first[i as usize] = !matches!(bodies[i as usize], Body::Unreadable);
        }
        // Stable: in the order given, where the listing order is the same.
        let mut by_kind: Vec<u32> = (0..keys.len())
            .map(position)
            .filter(|&i| first[i as usize])
            .collect();
        by_kind.sort_by_cached_key(|&i| ranks.listing_order(keys[i as usize]));
        let mut scalers: Vec<(Ref, u32)> = targets
            .into_iter()
            .filter(|&(i, _)| first[i as usize])
            .map(|(i, target)| (target, i))
            .collect();
        // Stable: each target's autoscalers stay in the order given.
        scalers.sort_by_cached_key(|&(target, _)| ranks.ref_order(target));
        drop(ranks);
        let mut index = Self {
            keys: keys.into(),
            bodies: bodies.into(),
            by_ref: by_ref.into(),
            by_kind: by_kind.into(),
            scalers: scalers.into(),
            groups: Box::default(),
            owners: owners.into(),
            budgets: OnceLock::new(),
            vpas: OnceLock::new(),
            names,
        };
        let mut groups = Vec::new();
        let mut start = 0;
        while start < index.scalers.len() {
            let target = index.scalers[start].0;
            let end = start + index.scalers[start..].partition_point(|(other, _)| *other == target);
            if end - start > FEW {
                groups.push((position(start), Arc::new(index.group(start..end))));
            }
            start = end;
        }
        index.groups = groups.into();
        index
    }

    /// The autoscalers of `scalers[range]`, grouped.
    fn group(&self, range: Range<usize>) -> Autoscalers {
        Autoscalers::of(
            Arc::clone(&self.names),
            Arc::clone(&self.keys),
            self.scalers[range].iter().map(|&(_, i)| i),
            |i| self.owners_of(i),
        )
    }

    /// The owners of the `i`-th object, when it is an autoscaler.
    fn owners_of(&self, i: u32) -> Vec<Ref> {
        let start = self.owners.partition_point(|(owned, _)| *owned < i);
        let end = start + self.owners[start..].partition_point(|(owned, _)| *owned == i);
        self.owners[start..end].iter().map(|(_, o)| *o).collect()
    }

    /// Number of objects.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The `i`-th object, in the order given; `None` when it was unreadable
    /// or is held by identity only.
    pub fn object(&self, i: usize) -> Option<Arc<Object>> {
        match &self.bodies[i] {
            Body::Parsed(object) => Some(Arc::clone(object)),
            Body::Compact { origin, packed } => {
                Some(unpack(self.keys[i].get(&self.names), *origin, packed))
            }
            Body::Grouped | Body::Unreadable => None,
        }
    }

    fn key(&self, i: u32) -> Key {
        self.keys[i as usize]
    }

    /// The entry a reference resolves to, when it is held whole: an
    /// object held by identity only is [`Lookup::Unknown`], one that could
    /// not be read [`Lookup::Unreadable`].
    fn found(&self, target: &ObjectRef) -> Lookup<(usize, Whole<'_>)> {
        let Ok(at) = self
            .by_ref
            .binary_search_by(|&i| self.key(i).cmp_ref(target, &self.names))
        else {
            return Lookup::Missing;
        };
        let i = self.by_ref[at] as usize;
        match &self.bodies[i] {
            Body::Parsed(object) => Lookup::Found((i, Whole::Parsed(object))),
            Body::Compact { origin, packed } => Lookup::Found((i, Whole::Compact(*origin, packed))),
            Body::Grouped => Lookup::Unknown,
            Body::Unreadable => Lookup::Unreadable,
        }
    }

    /// The entries [`Index::list`] answers with, in order;
    /// [`Lookup::Unknown`] when some are held by identity only.
    fn listed(&self, namespace: &str, group: &str, kind: &str) -> Lookup<&[u32]> {
        let order = |i: &u32| self.key(*i).cmp_listed(namespace, group, kind, &self.names);
        let start = self.by_kind.partition_point(|i| order(i).is_lt());
        let rest = &self.by_kind[start..];
        // Walked to its end, each object in it being read anyway: those
        // that share the first one's strings are told by their numbers.
        let len = match rest.first() {
            Some(first) if order(first).is_eq() => {
                let first = self.key(*first);
                rest.iter()
                    .take_while(|i| self.key(**i).is_listed_with(first) || order(i).is_eq())
                    .count()
            }
            _ => 0,
        };
        let listed = &rest[..len];
        if listed
            .iter()
            .any(|&i| matches!(self.bodies[i as usize], Body::Grouped))
        {
            return Lookup::Unknown;
        }
        Lookup::Found(listed)
    }

    /// What `keep` makes of each object of `kind` that can be listed, in
    /// the order of `by_kind`: none of a namespace whose objects of `kind`
    /// cannot be listed (some are held by identity only).
    fn each_listable<T>(
        &self,
        kind: Kind,
        mut keep: impl FnMut(Name, Arc<Object>) -> Option<T>,
    ) -> Vec<T> {
        let mut kept = Vec::new();
        // The namespace being read, where its objects start, and whether
        // they can be listed.
        let mut namespace = None;
        let (mut start, mut listed) = (0, true);
        for &i in &self.by_kind {
            let key = self.key(i);
            let parts = key.parts(&self.names);
            if parts.kind != kind.kind || parts.group() != kind.group {
                continue;
            }
            if namespace != Some(key.namespace()) {
                namespace = Some(key.namespace());
                (start, listed) = (kept.len(), true);
            }
            if matches!(self.bodies[i as usize], Body::Grouped) {
                kept.truncate(start);
                listed = false;
            }
            let Some(object) = self.object(i as usize).filter(|_| listed) else {
                continue;
            };
            kept.extend(keep(key.namespace(), object));
        }
        kept
    }

    /// The budgets of every namespace that block at some count, in the
    /// order of `by_kind`.
    fn budgets(&self) -> &[Budget] {
        self.budgets.get_or_init(|| {
            let budgets = self.each_listable(PDB, |namespace, object| {
                let block = widest_block(&object)?;
                Some(Budget {
                    namespace,
                    object,
                    block,
                })
            });
            budgets.into()
        })
    }

    /// The VPAs of every namespace that change running pods, by namespace
    /// and target name, and then in the order of `by_kind`.
    fn vpas(&self) -> &[Resizer] {
        self.vpas.get_or_init(|| {
            let mut vpas = self.each_listable(VPA, |namespace, object| {
                let target = Vpa::target_name(&object)?.into();
                Vpa::of(&object)?.changes_pods().then_some(Resizer {
                    namespace,
                    target,
                    object,
                })
            });
            // Stable: a target's VPAs stay in the order listed.
            vpas.sort_by(|a, b| self.resizer_order(a).cmp(&self.resizer_order(b)));
            vpas.into()
        })
    }

    fn resizer_order<'a>(&'a self, vpa: &'a Resizer) -> (&'a str, &'a str) {
        (self.names.get(vpa.namespace), &vpa.target)
    }
}

impl Index for MemoryIndex {
    fn get(&self, target: &ObjectRef) -> Lookup<Arc<Object>> {
        self.found(target).map(|(i, whole)| match whole {
            Whole::Parsed(object) => Arc::clone(object),
            Whole::Compact(origin, packed) => unpack(self.keys[i].get(&self.names), origin, packed),
        })
    }

    /// The target as the index holds it: packed, it is read from the
    /// bytes, its strings borrowed.
    fn get_target(&self, target: &ObjectRef) -> Lookup<Target<'_>> {
        self.found(target).map(|(i, whole)| match whole {
            Whole::Parsed(object) => Target::of(object),
            Whole::Compact(origin, packed) => Target {
                key: self.keys[i].get(&self.names),
                origin,
                value: packed::unpack_tree(packed),
            },
        })
    }

    fn scalers_of(&self, target: &ObjectRef) -> Arc<Autoscalers> {
        let order = |(other, _): &(Ref, u32)| other.cmp_ref(target, &self.names);
        let start = self.scalers.partition_point(|s| order(s).is_lt());
        // Most targets have one autoscaler: counted rather than searched
        // for, up to more than a few (which are worked out already).
        let few = self.scalers[start..]
            .iter()
            .take(FEW + 1)
            .take_while(|s| order(s).is_eq())
            .count();
        if few <= FEW {
            return Arc::new(self.group(start..start + few));
        }
        let at = self.groups.partition_point(|(s, _)| (*s as usize) < start);
        Arc::clone(&self.groups[at].1)
    }

    /// Holds every object of the input: a kind not in it has none. A kind
    /// some of whose objects are held by identity only cannot be listed.
    fn list(&self, namespace: &str, group: &str, kind: &str) -> Lookup<Vec<Arc<Object>>> {
        let Lookup::Found(listed) = self.listed(namespace, group, kind) else {
            return Lookup::Unknown;
        };
        // Sized first: a namespace may list many.
        let mut objects = Vec::with_capacity(listed.len());
        objects.extend(listed.iter().filter_map(|&i| self.object(i as usize)));
        Lookup::Found(objects)
    }

    /// [`MemoryIndex::list`] without a copy of the list: the objects held
    /// parsed are lent as they are.
    fn visit_list(
        &self,
        namespace: &str,
        group: &str,
        kind: &str,
        visit: &mut dyn FnMut(&Arc<Object>),
    ) -> Lookup<()> {
        let Lookup::Found(listed) = self.listed(namespace, group, kind) else {
            return Lookup::Unknown;
        };
        for &i in listed {
            match &self.bodies[i as usize] {
                Body::Parsed(object) => visit(object),
                Body::Compact { .. } => {
                    if let Some(object) = self.object(i as usize) {
                        visit(&object);
                    }
                }
                Body::Grouped | Body::Unreadable => {}
            }
        }
        Lookup::Found(())
    }

    /// Each budget's block worked out once, and only those that block
    /// looked at: a namespace's budgets are lent for each of its HPAs.
    fn visit_budgets(&self, namespace: &str, visit: &mut dyn FnMut(&Arc<Object>, Block)) {
        let budgets = self.budgets();
        let start = budgets.partition_point(|b| self.names.get(b.namespace) < namespace);
        for budget in budgets[start..]
            .iter()
            .take_while(|b| self.names.get(b.namespace) == namespace)
        {
            visit(&budget.object, budget.block);
        }
    }

    /// Only the VPAs of the target's name looked at: the VPAs of a
    /// namespace are looked through for each of its HPAs.
    fn visit_vpas(&self, target: &ObjectRef, visit: &mut dyn FnMut(&Arc<Object>)) {
        let vpas = self.vpas();
        let wanted = (target.namespace.as_str(), target.name.as_str());
        let start = vpas.partition_point(|vpa| self.resizer_order(vpa) < wanted);
        for vpa in vpas[start..]
            .iter()
            .take_while(|vpa| self.resizer_order(vpa) == wanted)
        {
            if resizes(&vpa.object, target) {
                visit(&vpa.object);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::Json;
    use serde_json::json;

    #[test]
    fn compact_and_parsed_entries_answer_alike() {
        let deployment = Object::new(
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"replicas": 2}}),
            Origin(7),
            "shop",
        )
        .unwrap();
        let parsed = MemoryIndex::new([Arc::new(deployment.clone())]);
        let compact =
            MemoryIndex::with_scale_targets([(Stored::compact(deployment.clone()), None)]);
        let target = deployment.key.to_ref();
        for index in [&parsed, &compact] {
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

    /// An index answering only what every index must: targets are read
    /// as [`Index::get_target`] reads them by default.
    struct Plain(MemoryIndex);

    impl Index for Plain {
        fn get(&self, target: &ObjectRef) -> Lookup<Arc<Object>> {
            self.0.get(target)
        }

        fn scalers_of(&self, target: &ObjectRef) -> Arc<Autoscalers> {
            self.0.scalers_of(target)
        }

        fn list(&self, namespace: &str, group: &str, kind: &str) -> Lookup<Vec<Arc<Object>>> {
            self.0.list(namespace, group, kind)
        }
    }

    #[test]
    fn targets_read_alike_however_they_are_held() {
        let deployment = Object::new(
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "annotations": {"hpa-lint.io/ignore.vpa-conflict": "resized by hand"}},
                "spec": {"replicas": 2, "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "resources": {"requests": {"cpu": "100m"}}}]}}}}),
            Origin(7),
            "shop",
        )
        .unwrap();
        let parsed = MemoryIndex::new([Arc::new(deployment.clone())]);
        let compact =
            MemoryIndex::with_scale_targets([(Stored::compact(deployment.clone()), None)]);
        let plain = Plain(MemoryIndex::with_scale_targets([(
            Stored::compact(deployment.clone()),
            None,
        )]));
        let target = deployment.key.to_ref();
        for index in [&parsed, &compact, &plain as &dyn Index] {
            let Lookup::Found(found) = index.get_target(&target) else {
                panic!("not found")
            };
            assert_eq!((&found.key, found.origin), (&deployment.key, Origin(7)));
            assert_eq!(found.suppression("vpa-conflict"), Some("resized by hand"));
            assert_eq!(found.suppression("target-replicas-conflict"), None);
            let template = found.template().expect("a pod template");
            let containers: Vec<_> = template.counted_containers().collect();
            assert_eq!(containers[0].name, "web");
            assert_eq!(
                containers[0].request("cpu").and_then(Json::text),
                Some("100m")
            );
            assert_eq!(found.value.clone().into_value(), deployment.value);
            let missing = ObjectRef {
                name: "gone".into(),
                ..target.clone()
            };
            assert!(matches!(index.get_target(&missing), Lookup::Missing));
        }
    }

    /// The `turn`-th object of a listing test, held in turn compact and
    /// parsed; in namespace `held`, every other one by identity only, which
    /// makes the namespace's objects of its kind unlistable.
    fn held_in_turn(object: Object, turn: usize) -> Stored {
        match (object.key.namespace.as_str(), turn % 2) {
            ("held", 1) => Stored::Grouped {
                key: Identity::new(object.key.as_ref()),
            },
            (_, 0) => Stored::compact(object),
            _ => Stored::Parsed(Arc::new(object)),
        }
    }

    /// The budgets a memory index lends, their blocks worked out once, are
    /// those that block among the ones listed, in the same order, with the
    /// blocks their fields give: budgets of several versions, namespaces
    /// and specs, held parsed, compact or by identity only.
    #[test]
    fn budgets_are_lent_as_listed_with_their_blocks() {
        let specs = [
            json!({"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}}),
            json!({"maxUnavailable": 0, "selector": {}}),
            json!({"minAvailable": 2, "maxUnavailable": "0%"}),
            json!({"minAvailable": "60%", "selector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}}),
            json!({"minAvailable": 0}),
            json!({"minAvailable": 3, "maxUnavailable": "10%"}),
            json!({}),
            json!(null),
        ];
        let mut input = Vec::new();
        for (i, spec) in specs.iter().enumerate() {
            for (api_version, namespace) in [
                ("policy/v1", "shop"),
                ("policy/v1beta1", "shop"),
                ("policy/v1", "other"),
                ("v1", "shop"),
                ("policy/v1", "held"),
            ] {
                let value = json!({"apiVersion": api_version, "kind": "PodDisruptionBudget",
                    "metadata": {"name": format!("{i}-{api_version}"), "namespace": namespace},
                    "spec": spec});
                let object = Object::new(value, Origin(0), "default").unwrap();
                input.push((held_in_turn(object, i), None));
            }
        }
        // Other kinds in the namespaces, before and after.
        for kind in ["Deployment", "Role"] {
            let value = json!({"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "web"}});
            input.push((
                Stored::compact(Object::new(value, Origin(0), "shop").unwrap()),
                None,
            ));
        }
        let index = MemoryIndex::with_scale_targets(input.clone());
        let plain = Plain(MemoryIndex::with_scale_targets(input));
        let lent = |index: &dyn Index, namespace: &str| {
            let mut lent = Vec::new();
            index.visit_budgets(namespace, &mut |pdb, block| {
                lent.push((pdb.key.name.clone(), block));
            });
            lent
        };
        for namespace in ["shop", "other", "held", "default", "", "zzz"] {
            assert_eq!(
                lent(&index, namespace),
                lent(&plain, namespace),
                "{namespace}"
            );
        }
        let shop: Vec<String> = lent(&index, "shop")
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert_eq!(
            shop,
            [
                "1-policy/v1",
                "1-policy/v1beta1",
                "2-policy/v1",
                "2-policy/v1beta1",
                "3-policy/v1",
                "3-policy/v1beta1",
                "5-policy/v1",
                "5-policy/v1beta1"
            ]
        );
        assert!(lent(&index, "held").is_empty());
    }

    /// The VPAs a memory index lends, sorted out once by target, are those
    /// the listing gives that target the workload and change its pods, in
    /// the same order: VPAs of several versions, namespaces, targets and
    /// update modes, held parsed, compact or by identity only.
    #[test]
    fn vpas_are_lent_as_listed() {
        let targets = [
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}),
            json!({"kind": "Deployment", "name": "web"}),
            json!({"apiVersion": "v1", "kind": "Deployment", "name": "web"}),
            json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web"}),
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"}),
            json!({"apiVersion": "apps/v1", "kind": "Deployment"}),
            json!(null),
        ];
        let modes = [
            json!(null),
            json!({"updateMode": "Off"}),
            json!({"updateMode": "Initial"}),
            json!({"updateMode": "Recreate"}),
        ];
        let mut input = Vec::new();
        for (t, target) in targets.iter().enumerate() {
            for (m, mode) in modes.iter().enumerate() {
                for (api_version, namespace) in [
                    ("autoscaling.k8s.io/v1", "shop"),
                    ("autoscaling.k8s.io/v1beta2", "shop"),
                    ("autoscaling.k8s.io/v1", "other"),
                    ("v1", "shop"),
                    ("autoscaling.k8s.io/v1", "held"),
                ] {
                    // Named against the order given, which lists keep.
                    let name = format!("{}-{m}-{api_version}", 9 - t);
                    let value = json!({"apiVersion": api_version, "kind": "VerticalPodAutoscaler",
                        "metadata": {"name": name, "namespace": namespace},
                        "spec": {"targetRef": target, "updatePolicy": mode}});
                    let object = Object::new(value, Origin(0), "default").unwrap();
                    input.push((held_in_turn(object, t + m), None));
                }
            }
        }
        let index = MemoryIndex::with_scale_targets(input.clone());
        let plain = Plain(MemoryIndex::with_scale_targets(input));
        let lent = |index: &dyn Index, target: &ObjectRef| {
            let mut lent = Vec::new();
            index.visit_vpas(target, &mut |vpa| lent.push(vpa.key.name.clone()));
            lent
        };
        let workload = |group: &str, kind: &str, namespace: &str, name: &str| ObjectRef {
            group: group.into(),
            kind: kind.into(),
            namespace: namespace.into(),
            name: name.into(),
        };
        for namespace in ["shop", "other", "held", "zzz"] {
            for (group, kind, name) in [
                ("apps", "Deployment", "web"),
                ("", "Deployment", "web"),
                ("apps", "StatefulSet", "web"),
                ("apps", "Deployment", "api"),
                ("apps", "Deployment", ""),
                ("apps", "Deployment", "gone"),
            ] {
                let target = workload(group, kind, namespace, name);
                assert_eq!(lent(&index, &target), lent(&plain, &target), "{target}");
            }
        }
        assert_eq!(
            lent(&index, &workload("apps", "Deployment", "shop", "web")),
            [
                "9-0-autoscaling.k8s.io/v1",
                "9-0-autoscaling.k8s.io/v1beta2",
                "9-3-autoscaling.k8s.io/v1",
                "9-3-autoscaling.k8s.io/v1beta2",
                "8-0-autoscaling.k8s.io/v1",
                "8-0-autoscaling.k8s.io/v1beta2",
                "8-3-autoscaling.k8s.io/v1",
                "8-3-autoscaling.k8s.io/v1beta2",
                "7-0-autoscaling.k8s.io/v1",
                "7-0-autoscaling.k8s.io/v1beta2",
                "7-3-autoscaling.k8s.io/v1",
                "7-3-autoscaling.k8s.io/v1beta2"
            ]
        );
        assert!(lent(&index, &workload("apps", "Deployment", "held", "web")).is_empty());
    }

    #[test]
    fn lists_hold_every_version_of_a_group_and_nothing_else() {
        let index = MemoryIndex::new(
            [
                ("policy/v1", "PodDisruptionBudget", "a", "shop"),
                ("policy/v1beta1", "PodDisruptionBudget", "b", "shop"),
                ("policy/v1", "PodDisruptionBudget", "c", "shop"),
                ("policy/v1", "PodDisruptionBudget", "d", "other"),
                ("v1", "PodDisruptionBudget", "e", "shop"),
                ("policy/v1", "Eviction", "f", "shop"),
            ]
            .map(|(api_version, kind, name, namespace)| {
                let value = json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": namespace}});
                Arc::new(Object::new(value, Origin(0), "default").unwrap())
            }),
        );
        let listed = |namespace: &str, group: &str, kind: &str| {
            let Lookup::Found(list) = index.list(namespace, group, kind) else {
                panic!("a memory index knows every kind")
            };
            list.iter().map(|o| o.key.name.clone()).collect::<Vec<_>>()
        };
        assert_eq!(
            listed("shop", "policy", "PodDisruptionBudget"),
            ["a", "b", "c"]
        );
        assert_eq!(listed("other", "policy", "PodDisruptionBudget"), ["d"]);
        assert_eq!(listed("shop", "", "PodDisruptionBudget"), ["e"]);
        assert_eq!(listed("shop", "policy", "Eviction"), ["f"]);
        assert!(listed("shop", "apps", "PodDisruptionBudget").is_empty());
    }

    /// An HPA (or, with `keda`, a ScaledObject) of `shop` scaling `target`,
    /// created by the ScaledObject `owner` if one is given.
    fn scaler(name: &str, target: &str, keda: bool, owner: Option<&str>) -> Object {
        let (api_version, kind) = if keda {
            ("keda.sh/v1alpha1", "ScaledObject")
        } else {
            ("autoscaling/v2", "HorizontalPodAutoscaler")
        };
        let owners: Vec<_> = owner
            .into_iter()
            .map(|o| json!({"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject", "name": o}))
            .collect();
        let value = json!({
            "apiVersion": api_version, "kind": kind,
            "metadata": {"name": name, "ownerReferences": owners},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target}},
        });
        Object::new(value, Origin(0), "shop").unwrap()
    }

    fn deployment(name: &str, replicas: u32) -> Object {
        let value = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": {"replicas": replicas}});
        Object::new(value, Origin(0), "shop").unwrap()
    }

    /// What an index tells of the autoscalers of `target`: all of them, and
    /// each one's peers.
    fn groups(index: &MemoryIndex, target: &str, of: &[Object]) -> Vec<String> {
        let scalers = index.scalers_of(&deployment(target, 0).key.to_ref());
        let mut told: Vec<String> = scalers
            .all()
            .iter()
            .map(|m| format!("{} {}", m.key.to_ref(), m.keda))
            .collect();
        for object in of {
            let peers = scalers.peers(&object.key, &object.value, 3);
            let first: Vec<String> = peers.first.iter().map(|m| m.key.describe()).collect();
            told.push(format!("{}: {} {first:?}", object.key.name, peers.count));
        }
        told
    }

    #[test]
    fn autoscalers_held_by_identity_are_grouped_as_those_read_whole() {
        let mut input = vec![
            (
                Stored::Unreadable {
                    key: scaler("broken", "web", false, None).key,
                },
                None,
            ),
            (Stored::Parsed(Arc::new(deployment("web", 2))), None),
        ];
        let mut hpas = vec![
            scaler("broken", "web", false, None),
            scaler("web", "web", false, None),
            scaler("keda", "web", true, None),
            scaler("keda-hpa", "web", false, Some("keda")),
            // A repeated reference: the first one given counts.
            scaler("web", "api", false, None),
            scaler("api", "api", false, None),
        ];
        // More than a few: found through a sorted list.
        hpas.extend((0..10).map(|i| scaler(&format!("many-{}", 9 - i), "many", false, None)));
        hpas.push(scaler("many-keda", "many", true, None));
        hpas.push(scaler("created", "many", false, Some("many-keda")));
        for hpa in &hpas {
            input.push((Stored::compact(hpa.clone()), scale_target(hpa)));
        }
        let whole = MemoryIndex::with_scale_targets(input.clone());
        // Held as the CLI holds them: HPAs by identity, in two parts
        // gathered separately (files read in parallel).
        let mut parts = [Entries::default(), Entries::default()];
        for (i, (stored, _)) in input.into_iter().enumerate() {
            let object = stored.object();
            let scaler = object.as_deref().and_then(Scaler::of);
            let stored = match object {
                Some(object) if object.is_hpa() => Stored::Grouped {
                    key: Identity::new(object.key.as_ref()),
                },
                _ => stored,
            };
            parts[usize::from(i > 6)].push(stored, scaler);
        }
        let [mut entries, second] = parts;
        let len = entries.len();
        // A file of no objects adds nothing.
        entries.append(Entries::default());
        assert_eq!(entries.len(), len);
        entries.append(second);
        let grouped = MemoryIndex::of(entries);
        for target in ["web", "api", "many", "none"] {
            assert_eq!(
                groups(&grouped, target, &hpas),
                groups(&whole, target, &hpas),
                "{target}"
            );
        }
        let told = groups(&whole, "web", &hpas[1..4]);
        assert_eq!(
            told,
            [
                "HorizontalPodAutoscaler shop/web false",
                "ScaledObject shop/keda true",
                "HorizontalPodAutoscaler shop/keda-hpa false",
                "web: 1 [\"ScaledObject `keda`\"]",
                "keda: 1 [\"HorizontalPodAutoscaler `web`\"]",
                "keda-hpa: 1 [\"HorizontalPodAutoscaler `web`\"]",
            ]
        );
        let many = groups(&whole, "many", &hpas[16..]);
        assert_eq!(many.len(), 14);
        assert_eq!(
            many[12..],
            [
                "many-keda: 10 [\"HorizontalPodAutoscaler `many-9`\", \"HorizontalPodAutoscaler `many-8`\", \"HorizontalPodAutoscaler `many-7`\"]",
                "created: 10 [\"HorizontalPodAutoscaler `many-9`\", \"HorizontalPodAutoscaler `many-8`\", \"HorizontalPodAutoscaler `many-7`\"]"
            ]
        );
        // Other objects answer alike; autoscalers held by identity cannot
        // be looked up.
        let web = deployment("web", 0).key.to_ref();
        for index in [&whole, &grouped] {
            assert!(
                matches!(index.get(&web), Lookup::Found(d) if d.value["spec"]["replicas"] == 2)
            );
            assert!(
                matches!(index.list("shop", "apps", "Deployment"), Lookup::Found(l) if l.len() == 1)
            );
        }
        let (hpa, broken) = (hpas[1].key.to_ref(), hpas[0].key.to_ref());
        assert!(matches!(whole.get(&hpa), Lookup::Found(_)));
        assert!(matches!(grouped.get(&hpa), Lookup::Unknown));
        assert!(matches!(grouped.get(&broken), Lookup::Unreadable));
        assert!(
            matches!(whole.list("shop", "autoscaling", "HorizontalPodAutoscaler"), Lookup::Found(l) if l.len() == 14)
        );
        assert!(matches!(
            grouped.list("shop", "autoscaling", "HorizontalPodAutoscaler"),
            Lookup::Unknown
        ));
        let mut visited = 0;
        let answer = grouped.visit_list(
            "shop",
            "autoscaling",
            "HorizontalPodAutoscaler",
            &mut |_| {
                visited += 1;
            },
        );
        assert!(matches!(answer, Lookup::Unknown) && visited == 0);
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
            (Stored::compact(object("Deployment", "web", 1)), None),
            (Stored::compact(object("StatefulSet", "db", 2)), None),
            (Stored::compact(object("Deployment", "api", 3)), None),
            (Stored::compact(object("Deployment", "web", 4)), None),
            (unreadable, None),
            (Stored::compact(object("Deployment", "broken", 6)), None),
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
        // Visited, the same objects in the same order.
        let mut visited = Vec::new();
        let answer = index.visit_list("shop", "apps", "Deployment", &mut |d| {
            visited.push(replicas(d));
        });
        assert!(matches!(answer, Lookup::Found(())));
        assert_eq!(visited, listed);
        assert!(
            matches!(index.list("other", "apps", "Deployment"), Lookup::Found(none) if none.is_empty())
        );
    }
}
