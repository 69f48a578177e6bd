//! Which object an autoscaler scales: HPAs of any version and KEDA ScaledObjects
//! (which create an HPA of their own for their target); and what a
//! VerticalPodAutoscaler does to the pods of its target.

use std::collections::HashMap;

use serde_json::Value;

use crate::object::{HPA, Kind, Object, ObjectKey, ObjectRef, group_of};
use crate::path::{get, member};

/// KEDA's `ScaledObject`.
pub const SCALED_OBJECT: Kind = Kind::new("keda.sh", "ScaledObject");

/// The kinds of autoscalers: HPAs and KEDA ScaledObjects.
pub const AUTOSCALERS: [Kind; 2] = [HPA, SCALED_OBJECT];

/// The scale target of an autoscaler, or `None` for other objects.
pub fn scale_target(object: &Object) -> Option<ObjectRef> {
    let reference = get(&object.value, &["spec", "scaleTargetRef"])?;
    let field = |name: &str| member(reference, name).and_then(Value::as_str);
    let (api_version, kind) = if object.is_hpa() {
        (field("apiVersion").unwrap_or_default(), field("kind")?)
    } else if is_keda_scaled_object(object) {
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
        namespace: object.key.namespace.clone(),
        name: field("name")?.to_owned(),
    })
}

/// Whether the object is a KEDA `ScaledObject`.
pub fn is_keda_scaled_object(object: &Object) -> bool {
    SCALED_OBJECT.is(object.key.group(), &object.key.kind)
}

/// The objects `object` names in its `ownerReferences`, in its namespace (how
/// KEDA marks the HPA it creates for a ScaledObject).
fn owners(object: &Object) -> impl Iterator<Item = ObjectRef> + '_ {
    get(&object.value, &["metadata", "ownerReferences"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|reference| {
            let field = |name: &str| member(reference, name).and_then(Value::as_str);
            Some(ObjectRef {
                group: group_of(field("apiVersion").unwrap_or_default()).to_owned(),
                kind: field("kind")?.to_owned(),
                namespace: object.key.namespace.clone(),
                name: field("name")?.to_owned(),
            })
        })
}

/// One autoscaler of a workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// Its identity.
    pub key: ObjectKey,
    /// Whether it is a KEDA ScaledObject (which creates an HPA of its own).
    pub keda: bool,
    /// The listed ScaledObject that created it, if one did: then it is part
    /// of that ScaledObject, not an autoscaler of its own.
    creator: Option<usize>,
}

/// The autoscalers of one workload (HPAs and KEDA ScaledObjects), each once.
/// Worked out once per workload, so that asking for each autoscaler's peers
/// costs the same however many there are.
#[derive(Debug, Default)]
pub struct Autoscalers {
    /// Every autoscaler, in input order.
    all: Vec<Member>,
    /// How many are autoscalers of their own.
    distinct: usize,
    /// Where each one is in `all`, once there are too many to search.
    position: Option<HashMap<ObjectRef, usize>>,
}

/// The other autoscalers of a workload, as one of them sees them.
#[derive(Debug)]
pub struct Peers<'a> {
    /// How many there are.
    pub count: usize,
    /// The first few of them, in input order.
    pub first: Vec<&'a Member>,
}

/// Beyond this many autoscalers, a workload's are found through a map.
const FEW: usize = 8;

/// Whether `key` is the object `reference` names.
fn is(key: &ObjectKey, reference: &ObjectRef) -> bool {
    key.name == reference.name
        && key.kind == reference.kind
        && key.namespace == reference.namespace
        && key.group() == reference.group
}

impl Autoscalers {
    /// Groups the autoscalers of one workload (one object per reference).
    pub fn new<'o>(objects: impl IntoIterator<Item = &'o Object>) -> Self {
        let objects: Vec<&Object> = objects.into_iter().collect();
        let mut this = Self {
            all: objects
                .iter()
                .map(|object| Member {
                    key: object.key.clone(),
                    keda: is_keda_scaled_object(object),
                    creator: None,
                })
                .collect(),
            distinct: 0,
            position: None,
        };
        if this.all.len() > FEW {
            this.position = Some(
                this.all
                    .iter()
                    .enumerate()
                    .map(|(i, member)| (member.key.to_ref(), i))
                    .collect(),
            );
        }
        for (i, object) in objects.iter().enumerate() {
            this.all[i].creator = this.creator_of(object);
        }
        this.distinct = this.all.iter().filter(|m| m.creator.is_none()).count();
        this
    }

    fn position(&self, reference: &ObjectRef) -> Option<usize> {
        match &self.position {
            Some(map) => map.get(reference).copied(),
            None => self.all.iter().position(|m| is(&m.key, reference)),
        }
    }

    /// The listed ScaledObject that created `object`, if one did.
    fn creator_of(&self, object: &Object) -> Option<usize> {
        owners(object)
            .filter_map(|owner| self.position(&owner))
            .find(|&i| self.all[i].keda)
    }

    /// Every autoscaler, in input order.
    pub fn all(&self) -> &[Member] {
        &self.all
    }

    /// The autoscalers other than `this` (and than the ScaledObject that
    /// created it, or the HPA it created), at most `limit` of them named.
    pub fn peers(&self, this: &Object, limit: usize) -> Peers<'_> {
        let own = self.position(&this.key.to_ref());
        // The ScaledObject that created `this`, even when `this` is not listed.
        let creator = own
            .and_then(|i| self.all[i].creator)
            .or_else(|| self.creator_of(this));
        let excluded = |i: usize| Some(i) == own || Some(i) == creator;
        let is_distinct = |i: &usize| self.all[*i].creator.is_none();
        let mut left_out: Vec<usize> = own.into_iter().chain(creator).filter(is_distinct).collect();
        left_out.dedup();
        let first = (0..self.all.len())
            .filter(|i| is_distinct(i) && !excluded(*i))
            .take(limit)
            .map(|i| &self.all[i])
            .collect();
        Peers {
            count: self.distinct - left_out.len(),
            first,
        }
    }
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

    /// Whether `spec.targetRef` is `target`. An empty `apiVersion` matches any
    /// group: the VPA resolves well-known workloads by kind.
    pub fn targets(&self, target: &ObjectRef) -> bool {
        let Some(reference) = member(self.spec, "targetRef") else {
            return false;
        };
        let field = |name: &str| member(reference, name).and_then(Value::as_str);
        let group = group_of(field("apiVersion").unwrap_or_default());
        self.namespace == target.namespace
            && field("kind") == Some(target.kind.as_str())
            && field("name") == Some(target.name.as_str())
            && (group.is_empty() || group == target.group)
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
