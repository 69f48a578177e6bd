//! Which object an autoscaler scales: HPAs of any version and KEDA ScaledObjects
//! (which create an HPA of their own for their target); and what a
//! VerticalPodAutoscaler does to the pods of its target.

use std::sync::Arc;

use serde_json::Value;

use crate::names::{Key, Names, Parts, Ref};
use crate::object::{HPA, Kind, Object, ObjectKey, ObjectRef, group_of};
use crate::path::{Json, Shape, get, member};

/// KEDA's `ScaledObject`.
pub const SCALED_OBJECT: Kind = Kind::new("keda.sh", "ScaledObject");

/// The kinds of autoscalers: HPAs and KEDA ScaledObjects.
pub const AUTOSCALERS: [Kind; 2] = [HPA, SCALED_OBJECT];

/// The scale target of an autoscaler, or `None` for other objects.
pub fn scale_target(object: &Object) -> Option<ObjectRef> {
    target_of(&object.key, &object.value)
}

/// [`scale_target`] of an object given by its identity and its value (a
/// serde_json value or a document's tree).
fn target_of<V: Json>(key: &ObjectKey, value: &V) -> Option<ObjectRef> {
    let reference = value.member("spec")?.member("scaleTargetRef")?;
    let field = |name: &str| reference.member(name).and_then(Json::text);
    let (api_version, kind) = if HPA.is(key.group(), &key.kind) {
        (field("apiVersion").unwrap_or_default(), field("kind")?)
    } else if SCALED_OBJECT.is(key.group(), &key.kind) {
        // KEDA defaults an unset kind and apiVersion to apps/v1 Deployment.
        (
            field("apiVersion").unwrap_or("apps/v1"),
            field("kind").unwrap_or("Deployment"),
        )
    } else {
        return None;
    };
    Some(ObjectRef {
        group: group_of(api_version).to_owned(),
        kind: kind.to_owned(),
        namespace: key.namespace.clone(),
        name: field("name")?.to_owned(),
    })
}

/// Whether the object is a KEDA `ScaledObject`.
pub fn is_keda_scaled_object(object: &Object) -> bool {
    SCALED_OBJECT.is(object.key.group(), &object.key.kind)
}

/// The objects `object` names in its `ownerReferences`, in its namespace (how
/// KEDA marks the HPA it creates for a ScaledObject).
pub fn owners(object: &Object) -> impl Iterator<Item = ObjectRef> + '_ {
    owners_of(&object.key, &object.value)
}

/// [`owners`] of an object given by its identity and its value.
fn owners_of<'v, V: Json>(
    key: &'v ObjectKey,
    value: &'v V,
) -> impl Iterator<Item = ObjectRef> + 'v {
    let references = value
        .member("metadata")
        .and_then(|metadata| metadata.member("ownerReferences"));
    let references: &[V] = match references.map(Json::shape) {
        Some(Shape::Array(references)) => references,
        _ => &[],
    };
    references.iter().filter_map(|reference| {
        let field = |name: &str| reference.member(name).and_then(Json::text);
        Some(ObjectRef {
            group: group_of(field("apiVersion").unwrap_or_default()).to_owned(),
            kind: field("kind")?.to_owned(),
            namespace: key.namespace.clone(),
            name: field("name")?.to_owned(),
        })
    })
}

/// What the autoscalers of a workload are grouped by, of one of them: its
/// scale target and its owners.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scaler {
    /// See [`scale_target`].
    pub target: ObjectRef,
    /// The objects it names in its `ownerReferences`.
    pub owners: Vec<ObjectRef>,
}

impl Scaler {
    /// What an autoscaler is grouped by; `None` for other objects.
    pub fn of(object: &Object) -> Option<Self> {
        Self::read(&object.key, &object.value)
    }

    /// [`Scaler::of`] an object given by its identity and its value (a
    /// serde_json value or a document's tree).
    pub fn read<V: Json>(key: &ObjectKey, value: &V) -> Option<Self> {
        Some(Self {
            target: target_of(key, value)?,
            owners: owners_of(key, value).collect(),
        })
    }
}

/// One autoscaler of a workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// Its identity.
    pub key: ObjectKey,
    /// Whether it is a KEDA ScaledObject (which creates an HPA of its own).
    pub keda: bool,
}

/// An autoscaler of a workload, as a group holds it.
#[derive(Debug)]
struct Held {
    /// Where its identity is in the group's keys.
    key: u32,
    /// The listed ScaledObject that created it, if one did: then it is part
    /// of that ScaledObject, not an autoscaler of its own.
    creator: Option<u32>,
}

/// The autoscalers of one workload (HPAs and KEDA ScaledObjects), each once.
/// Worked out once per workload, so that asking for each autoscaler's peers
/// costs the same however many there are. Their identities are held in
/// [`Names`] and keys shared with the index they come from.
#[derive(Debug, Default)]
pub struct Autoscalers {
    names: Arc<Names>,
    keys: Arc<[Key]>,
    /// Every autoscaler, in input order.
    all: Vec<Held>,
    /// How many are autoscalers of their own.
    distinct: usize,
    /// Their positions in `all` by reference, once there are too many to
    /// search one by one.
    by_ref: Option<Box<[u32]>>,
}

/// The other autoscalers of a workload, as one of them sees them.
#[derive(Debug)]
pub struct Peers {
    /// How many there are.
    pub count: usize,
    /// The first few of them, in input order.
    pub first: Vec<Member>,
}

/// Beyond this many autoscalers, a workload's are found through a sorted list.
pub(crate) const FEW: usize = 8;

impl Autoscalers {
    /// Groups the autoscalers of one workload (one object per reference).
    pub fn new<'o>(objects: impl IntoIterator<Item = &'o Object>) -> Self {
        let mut names = Names::default();
        let (keys, owners): (Vec<Key>, Vec<Vec<Ref>>) = objects
            .into_iter()
            .map(|object| {
                let owners = owners(object).map(|o| names.reference(&o)).collect();
                (names.key(&object.key), owners)
            })
            .unzip();
        names.freeze();
        Self::of(
            Arc::new(names),
            keys.into(),
            (0..owners.len()).map(position),
            |i| owners[i as usize].clone(),
        )
    }

    /// Groups the autoscalers of one workload, each given by where its
    /// identity is in `keys`, with their owners, in `names`.
    pub fn of(
        names: Arc<Names>,
        keys: Arc<[Key]>,
        members: impl IntoIterator<Item = u32>,
        owners: impl Fn(u32) -> Vec<Ref>,
    ) -> Self {
        let mut this = Self {
            all: members
                .into_iter()
                .map(|key| Held { key, creator: None })
                .collect(),
            keys,
            names,
            distinct: 0,
            by_ref: None,
        };
        if this.all.len() > FEW {
            let mut by_ref: Vec<u32> = (0..this.all.len()).map(position).collect();
            // Stable: of members with one reference, the first leads.
            by_ref.sort_by(|&a, &b| {
                this.key(a as usize)
                    .cmp_in(this.key(b as usize), &this.names)
            });
            this.by_ref = Some(by_ref.into());
        }
        for i in 0..this.all.len() {
            let owners = owners(this.all[i].key);
            let creator = this.creator_among(owners.iter().map(|o| o.parts(&this.names)));
            this.all[i].creator = creator.map(position);
        }
        this.distinct = this.all.iter().filter(|m| m.creator.is_none()).count();
        this
    }

    fn key(&self, i: usize) -> Key {
        self.keys[self.all[i].key as usize]
    }

    fn parts(&self, i: usize) -> Parts<'_> {
        self.key(i).parts(&self.names)
    }

    fn is_keda(&self, i: usize) -> bool {
        let parts = self.parts(i);
        SCALED_OBJECT.is(parts.group(), parts.kind)
    }

    fn position(&self, reference: Parts<'_>) -> Option<usize> {
        match &self.by_ref {
            Some(by_ref) => {
                let at = by_ref.partition_point(|&i| self.parts(i as usize) < reference);
                let i = *by_ref.get(at)? as usize;
                (self.parts(i) == reference).then_some(i)
            }
            None => (0..self.all.len()).find(|&i| self.parts(i) == reference),
        }
    }

    /// The listed ScaledObject among `owners`, if there is one.
    fn creator_among<'p>(&self, mut owners: impl Iterator<Item = Parts<'p>>) -> Option<usize> {
        owners.find_map(|owner| self.position(owner).filter(|&i| self.is_keda(i)))
    }

    fn member(&self, i: usize) -> Member {
        Member {
            key: self.key(i).get(&self.names),
            keda: self.is_keda(i),
        }
    }

    /// Every autoscaler, in input order.
    pub fn all(&self) -> Vec<Member> {
        (0..self.all.len()).map(|i| self.member(i)).collect()
    }

    /// The autoscalers other than the one `key` identifies, read from `value`
    /// (and than the ScaledObject that created it, or the HPA it created), at
    /// most `limit` of them named.
    pub fn peers<V: Json>(&self, key: &ObjectKey, value: &V, limit: usize) -> Peers {
        let own = self.position(Parts::of_key(key));
        let creator_of = |i: usize| self.all[i].creator.map(|c| c as usize);
        // The ScaledObject that created `this`, even when `this` is not listed.
        let creator = own.and_then(creator_of).or_else(|| {
            let owners: Vec<ObjectRef> = owners_of(key, value).collect();
            self.creator_among(owners.iter().map(Parts::of))
        });
        let excluded = |i: usize| Some(i) == own || Some(i) == creator;
        let is_distinct = |i: &usize| creator_of(*i).is_none();
        let mut left_out: Vec<usize> = own.into_iter().chain(creator).filter(is_distinct).collect();
        left_out.dedup();
        let first = (0..self.all.len())
            .filter(|i| is_distinct(i) && !excluded(*i))
            .take(limit)
            .map(|i| self.member(i))
            .collect();
        Peers {
            count: self.distinct - left_out.len(),
            first,
        }
    }
}

/// A member's position, as a group holds it.
fn position(i: usize) -> u32 {
    u32::try_from(i).expect("fewer than 2³² autoscalers")
}

/// `VerticalPodAutoscaler` (a CRD of the autoscaler project).
pub const VPA: Kind = Kind::new("autoscaling.k8s.io", "VerticalPodAutoscaler");

/// A VerticalPodAutoscaler: which workload it resizes, how, and which
/// resources of which containers.
pub struct Vpa<'a> {
    spec: &'a Value,
    namespace: &'a str,
}

impl<'a> Vpa<'a> {
    /// The VPA view of an object, `None` for other objects.
    pub fn of(object: &'a Object) -> Option<Self> {
        if !VPA.is(object.key.group(), &object.key.kind) {
            return None;
        }
        Some(Self {
            spec: member(&object.value, "spec")?,
            namespace: &object.key.namespace,
        })
    }

    /// [`Vpa::of`] a VPA whose `spec.targetRef` is `target`: its name read
    /// first, which tells apart most of the VPAs of a namespace, each listed
    /// for every HPA of it.
    pub fn targeting(object: &'a Object, target: &ObjectRef) -> Option<Self> {
        if Self::target_name(object) != Some(target.name.as_str()) {
            return None;
        }
        Self::of(object).filter(|vpa| vpa.targets(target))
    }

    /// `spec.targetRef.name` of an object, read without taking it for a VPA.
    pub fn target_name(object: &Object) -> Option<&str> {
        get(&object.value, &["spec", "targetRef", "name"]).and_then(Value::as_str)
    }

    /// Whether `spec.targetRef` is `target`. An empty `apiVersion` matches any
    /// group: the VPA resolves well-known workloads by kind.
    pub fn targets(&self, target: &ObjectRef) -> bool {
        let Some(reference) = member(self.spec, "targetRef") else {
            return false;
        };
        let field = |name: &str| member(reference, name).and_then(Value::as_str);
        // The name first: it tells apart most of the VPAs of a namespace.
        field("name") == Some(target.name.as_str())
            && self.namespace == target.namespace
            && field("kind") == Some(target.kind.as_str())
            && {
                let group = group_of(field("apiVersion").unwrap_or_default());
                group.is_empty() || group == target.group
            }
    }

    /// `spec.updatePolicy.updateMode`; unset means `Auto` (`Recreate` today).
    pub fn update_mode(&self) -> &'a str {
        get(self.spec, &["updatePolicy", "updateMode"])
            .and_then(Value::as_str)
            .unwrap_or("Auto")
    }

    /// Whether the VPA changes running pods: every mode but `Off` (recommend
    /// only) and `Initial` (only sets requests of new pods).
    pub fn changes_pods(&self) -> bool {
        !matches!(self.update_mode(), "Off" | "Initial")
    }

    fn policies(&self) -> &'a [Value] {
        get(self.spec, &["resourcePolicy", "containerPolicies"])
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    /// Whether a container policy (or the default one, none given) lets the
    /// VPA set `resource`: not `mode: Off`, and `resource` among
    /// `controlledResources` (default cpu and memory).
    fn policy_controls(policy: Option<&Value>, resource: &str) -> bool {
        let field = |name: &str| policy.and_then(|p| member(p, name));
        if field("mode").and_then(Value::as_str) == Some("Off") {
            return false;
        }
        match field("controlledResources").and_then(Value::as_array) {
            Some(list) => list.iter().any(|r| r.as_str() == Some(resource)),
            None => matches!(resource, "cpu" | "memory"),
        }
    }

    /// Whether the VPA sets `resource` of the container `name`: its own
    /// policy, else the `*` policy, else the defaults.
    pub fn controls(&self, container: &str, resource: &str) -> bool {
        let named = |name: &str| {
            self.policies()
                .iter()
                .find(|p| member(p, "containerName").and_then(Value::as_str) == Some(name))
        };
        Self::policy_controls(named(container).or_else(|| named("*")), resource)
    }

    /// Whether the VPA sets `resource` of some container, when the containers
    /// are not known: any policy, or the fallback for unnamed containers.
    pub fn controls_any(&self, resource: &str) -> bool {
        self.controls("*", resource)
            || self
                .policies()
                .iter()
                .any(|p| Self::policy_controls(Some(p), resource))
    }
}
