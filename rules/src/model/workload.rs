//! Workloads as the HPA controller sees them: the pod template and the
//! containers whose requests it adds up.

use serde_json::Value;

use crate::cluster::{Cluster, FeatureGates};
use crate::model::quantity::Quantity;
use crate::object::{Kind, Object, ObjectKey, ObjectRef, Origin, SUPPRESSION_PREFIX};
use crate::path::{FieldPath, Json, Shape};
use crate::source::Tree;

/// Kinds with a `/scale` subresource in Kubernetes itself, as (group, kind).
pub const SCALABLE_KINDS: [(&str, &str); 4] = [
    ("apps", "Deployment"),
    ("apps", "StatefulSet"),
    ("apps", "ReplicaSet"),
    ("", "ReplicationController"),
];

/// Custom kinds known to have a `/scale` subresource, as (group, kind).
pub const KNOWN_SCALABLE_CUSTOM_KINDS: [(&str, &str); 5] = [
    ("argoproj.io", "Rollout"),
    ("kafka.strimzi.io", "KafkaNodePool"),
    ("kafka.strimzi.io", "KafkaConnect"),
    ("opentelemetry.io", "OpenTelemetryCollector"),
    ("apps.kruise.io", "CloneSet"),
];

/// Built-in kinds without a `/scale` subresource that people point HPAs at.
pub const NOT_SCALABLE_KINDS: [(&str, &str); 8] = [
    ("apps", "DaemonSet"),
    ("batch", "Job"),
    ("batch", "CronJob"),
    ("", "Pod"),
    ("", "Service"),
    ("", "ConfigMap"),
    ("", "Secret"),
    ("", "PersistentVolumeClaim"),
];

/// API groups served by Kubernetes itself. A kind in one of them is scalable
/// only when [`SCALABLE_KINDS`] lists it; any other group is a custom one,
/// whose kinds may have a `/scale` subresource (only the cluster knows).
/// `autoscaling.k8s.io` (VPA) and the `*.x-k8s.io` groups are CRDs, not listed.
pub const BUILT_IN_GROUPS: [&str; 23] = [
    "",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "apps",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "extensions",
    "flowcontrol.apiserver.k8s.io",
    "internal.apiserver.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "resource.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
];

/// What the HPA controller can do with a scale target, judged by group and kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TargetKind {
    /// A built-in workload with a `/scale` subresource (Deployment, …).
    BuiltIn,
    /// A custom kind known, or configured, to have one (Argo Rollout, …).
    KnownCustom,
    /// A kind of a custom group: it may have one.
    Custom,
    /// No `/scale` subresource: the controller cannot scale it.
    NotScalable(NotScalable),
}

/// Why a target kind cannot be scaled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotScalable {
    /// A built-in kind without `/scale` (DaemonSet, Job, Service, …).
    NoScale,
    /// A scalable kind named with a built-in group it does not live in
    /// (`extensions` Deployment, `apps` Rollout); `group` is where it lives.
    WrongGroup {
        /// The group the kind lives in.
        group: String,
    },
    /// A kind the built-in group does not have; `similar` is a scalable
    /// (group, kind) spelt the same up to case, if any.
    UnknownKind {
        /// A scalable kind differing only in case.
        similar: Option<(&'static str, &'static str)>,
    },
}

impl TargetKind {
    /// Classifies `kind` of `group` (the group of `scaleTargetRef.apiVersion`).
    pub fn classify(cluster: &Cluster, group: &str, kind: &str) -> Self {
        let is = |list: &[(&str, &str)]| list.iter().any(|&(g, k)| g == group && k == kind);
        if is(&SCALABLE_KINDS) {
            return Self::BuiltIn;
        }
        if is(&KNOWN_SCALABLE_CUSTOM_KINDS) || cluster.is_custom_scalable(group, kind) {
            return Self::KnownCustom;
        }
        if !BUILT_IN_GROUPS.contains(&group) {
            return Self::Custom;
        }
        // A built-in group serves only its own kinds, whatever the version.
        let reason = if NOT_SCALABLE_KINDS.iter().any(|&(_, k)| k == kind) {
            NotScalable::NoScale
        } else if let Some(&(right, _)) = SCALABLE_KINDS
            .iter()
            .chain(&KNOWN_SCALABLE_CUSTOM_KINDS)
            .find(|&&(_, k)| k == kind)
        {
            NotScalable::WrongGroup {
                group: right.to_owned(),
            }
        } else if let Some(custom) = cluster.scalable_kinds.iter().find(|k| k.kind == kind) {
            NotScalable::WrongGroup {
                group: custom.group.clone(),
            }
        } else {
            NotScalable::UnknownKind {
                similar: SCALABLE_KINDS
                    .iter()
                    .copied()
                    .find(|&(_, k)| k.eq_ignore_ascii_case(kind)),
            }
        };
        Self::NotScalable(reason)
    }

    /// Whether the controller may be able to scale it.
    pub fn is_scalable(&self) -> bool {
        !matches!(self, Self::NotScalable(_))
    }

    /// Whether it is a workload known to keep its replica count in
    /// `spec.replicas` (built-in, or a known or configured custom kind).
    pub fn is_known_workload(&self) -> bool {
        matches!(self, Self::BuiltIn | Self::KnownCustom)
    }
}

/// The object a scale target reference means when it names a scalable kind
/// with a group the kind does not live in (`kind: Deployment` without
/// `apiVersion`): that kind in its own group. `None` for other references.
pub fn meant_target(cluster: &Cluster, target: &ObjectRef) -> Option<ObjectRef> {
    let TargetKind::NotScalable(NotScalable::WrongGroup { group }) =
        TargetKind::classify(cluster, &target.group, &target.kind)
    else {
        return None;
    };
    Some(ObjectRef {
        group,
        ..target.clone()
    })
}

/// A scale target as the rules read it: its identity, and the fields kept
/// of it ([`crate::reads::WORKLOAD_FIELDS`]) as a tree. An index that holds
/// the target packed lends the tree its strings
/// ([`crate::index::Index::get_target`]): most HPAs read their target once,
/// and a [`Value`]'s maps and strings cost many times what reading them
/// does.
#[derive(Clone, Debug)]
pub struct Target<'a> {
    /// Identity.
    pub key: ObjectKey,
    /// Front-end handle.
    pub origin: Origin,
    /// The kept fields.
    pub value: Tree<'a>,
}

impl<'a> Target<'a> {
    /// The target `object` is, its strings borrowed.
    pub fn of(object: &'a Object) -> Self {
        Self {
            key: object.key.clone(),
            origin: object.origin,
            value: Tree::borrowing(&object.value),
        }
    }

    /// The target `object` is, holding its strings.
    pub fn owned(object: &Object) -> Target<'static> {
        Target {
            key: object.key.clone(),
            origin: object.origin,
            value: Tree::borrowing(&object.value).into_owned(),
        }
    }

    /// The reason given in `hpa-lint.io/ignore.<rule>` for suppressing a
    /// rule, as [`Object::suppression`] finds it.
    pub fn suppression(&self, rule: &str) -> Option<&str> {
        suppressions(&self.value).find_map(|(name, reason)| (name == rule).then_some(reason))
    }

    /// The pod template (see [`PodTemplate::of`]).
    pub fn template(&self) -> Option<PodTemplate<'_, Tree<'a>>> {
        PodTemplate::within(&self.value)
    }
}

/// The rules an object (its value) suppresses, with their reasons, as
/// [`Object::suppressions`] finds them.
pub(crate) fn suppressions<V: Json>(value: &V) -> impl Iterator<Item = (&str, &str)> {
    let annotations = value.at(&["metadata", "annotations"]);
    let entries = match annotations.map(Json::shape) {
        Some(Shape::Object(_, entries)) => Some(entries),
        _ => None,
    };
    entries
        .into_iter()
        .flatten()
        .filter_map(|(key, value)| Some((key.strip_prefix(SUPPRESSION_PREFIX)?, value.text()?)))
}

/// One container of a pod template.
pub struct Container<'a, V = Value> {
    /// `name`.
    pub name: &'a str,
    /// The container as written.
    pub value: &'a V,
    /// Whether it is an init container.
    pub is_init: bool,
    /// Its position in its list.
    index: usize,
}

impl<'a, V: Json> Container<'a, V> {
    /// Path of the container in its object, e.g.
    /// `spec.template.spec.containers[1]`: made when a finding needs it.
    pub fn path(&self) -> FieldPath {
        let list = if self.is_init {
            "initContainers"
        } else {
            "containers"
        };
        FieldPath::fields("spec.template.spec")
            .field(list)
            .index(self.index)
    }

    /// `resources.requests[resource]`, if set.
    pub fn request(&self, resource: &str) -> Option<&'a V> {
        self.value.at(&["resources", "requests", resource])
    }

    /// `resources.limits[resource]`, if set.
    pub fn limit(&self, resource: &str) -> Option<&'a V> {
        self.value.at(&["resources", "limits", resource])
    }

    /// The request the container's pods get for `resource`: `requests`, else
    /// `limits` (the API server copies a limit into a missing request when it
    /// creates the pod).
    pub fn effective_request(&self, resource: &str) -> Option<&'a V> {
        self.request(resource)
            .filter(|v| !v.is_null())
            .or_else(|| self.limit(resource).filter(|v| !v.is_null()))
    }

    /// An init container with `restartPolicy: Always`: a native sidecar, which the
    /// HPA controller counts like a regular container.
    pub fn is_sidecar(&self) -> bool {
        self.is_init && self.value.member("restartPolicy").and_then(V::text) == Some("Always")
    }
}

/// The pod template of a workload (`spec.template`).
pub struct PodTemplate<'a, V = Value> {
    value: &'a V,
}

impl<'a> PodTemplate<'a> {
    /// `spec.template` of a workload, if it is a pod template (has a pod
    /// `spec`). Some custom kinds use `spec.template` for something else
    /// (Strimzi's is a map of customisations), and an Argo Rollout may refer
    /// to a Deployment's template instead (`workloadRef`): `None` then.
    pub fn of(object: &'a Object) -> Option<Self> {
        Self::within(&object.value)
    }
}

impl<'a, V: Json> PodTemplate<'a, V> {
    /// `spec.template` of a workload's value (see [`PodTemplate::of`]).
    pub fn within(workload: &'a V) -> Option<Self> {
        let value = workload
            .at(&["spec", "template"])
            .filter(|v| v.member("spec").is_some_and(V::is_mapping))?;
        Some(Self { value })
    }

    /// Whether the HPA controller takes the pods' requests for a `Resource`
    /// metric from the pod level (`IsPodLevelRequestsSet`): the cluster keeps
    /// pod-level `resources` (`gates`) and they request (or limit, which the
    /// API server copies into requests) cpu, memory or hugepages (see
    /// `template_request` in the controller for the request of a resource).
    pub fn uses_pod_level(&self, gates: &FeatureGates) -> bool {
        gates.pod_level_resources
            && (self.sets_pod_level("requests") || self.sets_pod_level("limits"))
    }

    /// Whether the template sets pod-level limits (`defaultPodRequests`
    /// then fills the pod-level requests at decoding), while the cluster
    /// keeps them (`gates`).
    pub fn has_pod_level_limits(&self, gates: &FeatureGates) -> bool {
        gates.pod_level_resources && self.sets_pod_level("limits")
    }

    /// Whether pod-level `requests` or `limits` (`field`) set a resource the
    /// pod level supports: cpu, memory or hugepages.
    fn sets_pod_level(&self, field: &str) -> bool {
        let supported = |resource: &str| {
            matches!(resource, "cpu" | "memory") || resource.starts_with("hugepages-")
        };
        match self.value.at(&["spec", "resources", field]).map(V::shape) {
            Some(Shape::Object(_, mut entries)) => entries.any(|(k, _)| supported(k)),
            _ => false,
        }
    }

    /// The pod-level request for `resource` as written; `None` while
    /// `PodLevelResources` is off, as the API server then drops pod-level
    /// `resources` from the template.
    pub fn pod_level_request(&self, resource: &str, gates: &FeatureGates) -> Option<&'a V> {
        self.pod_level("requests", resource, gates)
    }

    /// The pod-level limit for `resource` (see [`PodTemplate::pod_level_request`]).
    pub fn pod_level_limit(&self, resource: &str, gates: &FeatureGates) -> Option<&'a V> {
        self.pod_level("limits", resource, gates)
    }

    fn pod_level(&self, field: &str, resource: &str, gates: &FeatureGates) -> Option<&'a V> {
        gates.pod_level_resources.then_some(())?;
        self.value
            .at(&["spec", "resources", field, resource])
            .filter(|v| !v.is_null())
    }

    /// What injects the container `name` into the pods at admission, if
    /// they may get it that way though the template lacks it ([`INJECTORS`]).
    pub fn injector_of(&self, name: &str) -> Option<&'static str> {
        let injector = INJECTORS.iter().find(|i| i.container == name)?;
        let text = |field: &str| self.value.at(&["metadata", field, injector.key])?.text();
        let written = if injector.label_first {
            text("labels").or_else(|| text("annotations"))
        } else {
            text("annotations")
        };
        let on = written
            .and_then(injector.reads)
            .unwrap_or(injector.unless_off);
        on.then_some(injector.name)
    }

    /// `metadata.labels` of the template, when it is a mapping.
    pub fn labels(&self) -> Option<&'a V> {
        self.value
            .at(&["metadata", "labels"])
            .filter(|labels| labels.is_mapping())
    }

    fn list(
        &self,
        field: &str,
        is_init: bool,
    ) -> impl Iterator<Item = Container<'a, V>> + use<'a, V> {
        let items = self
            .value
            .at(&["spec", field])
            .and_then(V::items)
            .unwrap_or_default();
        items
            .iter()
            .enumerate()
            .map(move |(index, value)| Container {
                name: value.member("name").and_then(V::text).unwrap_or_default(),
                value,
                is_init,
                index,
            })
    }

    /// Regular containers followed by init containers.
    pub fn all_containers(&self) -> impl Iterator<Item = Container<'a, V>> + use<'a, V> {
        self.list("containers", false)
            .chain(self.list("initContainers", true))
    }

    /// What the containers request of `resource` together, as the kubelet
    /// adds it up (`AggregateContainerRequests`): the regular containers and
    /// native sidecars, or an init container with the sidecars before it if
    /// that is more; a container without the request adds `default` (a
    /// LimitRange's, which admission gives it), else nothing. `None` when no
    /// container requests it (or a request does not parse).
    pub fn aggregate_request(&self, resource: &str, default: Option<&Value>) -> Option<i64> {
        let default = default.and_then(Quantity::milli_from_json);
        let milli = |c: &Container<'a, V>| -> Option<Option<i64>> {
            match c.effective_request(resource) {
                None => Some(default),
                Some(v) => Some(Some(Quantity::milli_from_json(v)?)),
            }
        };
        let (mut total, mut sidecars, mut init_peak, mut any) = (0i64, 0i64, 0i64, false);
        for container in self.list("containers", false) {
            let request = milli(&container)?;
            any |= request.is_some();
            total = total.saturating_add(request.unwrap_or(0));
        }
        for container in self.list("initContainers", true) {
            let request = milli(&container)?;
            any |= request.is_some();
            let request = request.unwrap_or(0);
            if container.is_sidecar() {
                total = total.saturating_add(request);
                sidecars = sidecars.saturating_add(request);
                init_peak = init_peak.max(sidecars);
            } else {
                init_peak = init_peak.max(request.saturating_add(sidecars));
            }
        }
        any.then_some(total.max(init_peak))
    }

    /// The containers whose usage and requests the HPA controller adds up:
    /// every regular container plus native sidecars.
    pub fn counted_containers(&self) -> impl Iterator<Item = Container<'a, V>> + use<'a, V> {
        self.all_containers()
            .filter(|c| !c.is_init || c.is_sidecar())
    }
}

/// A sidecar a mutating webhook injects into pods at admission.
pub struct Injector {
    /// What injects it.
    pub name: &'static str,
    /// Its container's name.
    pub container: &'static str,
    /// The annotation (and with `label_first`, first the label) of the pod
    /// template that turns the injection on or off.
    pub key: &'static str,
    pub label_first: bool,
    /// Whether a value turns it on or off; `None` for one that leaves it
    /// to the default.
    pub reads: fn(&str) -> Option<bool>,
    /// Whether the pods get it unless the template turns it off: the
    /// injection can be on for a whole namespace, which manifests of pods
    /// do not show.
    pub unless_off: bool,
}

/// Go's `strconv.ParseBool`.
fn go_bool(value: &str) -> Option<bool> {
    match value {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// The injectors of the sidecars HPAs name: Istio's `injectRequired`
/// (the label before the annotation, `"true"` or `"false"` only, else the
/// namespace's policy), Linkerd's `linkerd.io/inject` (`enabled`,
/// `ingress`, `disabled`), Dapr's `IsTruthy` and Vault's `ShouldInject`
/// (`strconv.ParseBool`; any other value injects nothing).
pub const INJECTORS: [Injector; 4] = [
    Injector {
        name: "Istio",
        container: "istio-proxy",
        key: "sidecar.istio.io/inject",
        label_first: true,
        reads: |value| match value {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        },
        unless_off: true,
    },
    Injector {
        name: "Linkerd",
        container: "linkerd-proxy",
        key: "linkerd.io/inject",
        label_first: false,
        reads: |value| match value {
            "enabled" | "ingress" => Some(true),
            "disabled" => Some(false),
            _ => None,
        },
        unless_off: true,
    },
    Injector {
        name: "Dapr",
        container: "daprd",
        key: "dapr.io/enabled",
        label_first: false,
        reads: |value| {
            let truthy = ["y", "yes", "true", "t", "on", "1"];
            Some(truthy.iter().any(|t| value.eq_ignore_ascii_case(t)))
        },
        unless_off: false,
    },
    Injector {
        name: "Vault",
        container: "vault-agent",
        key: "vault.hashicorp.com/agent-inject",
        label_first: false,
        reads: |value| Some(go_bool(value) == Some(true)),
        unless_off: false,
    },
];

/// `LimitRange`, whose defaults give containers the requests they lack.
pub const LIMIT_RANGE: Kind = Kind::new("", "LimitRange");

/// The requests a namespace's `LimitRange`s give a container that requests
/// (and limits) nothing, as the `LimitRanger` admission plugin applies them
/// to a new pod: the first LimitRange that sets a resource gives it; within
/// one, the last `Container` item. An item's default request is its
/// `defaultRequest`, else its `default`, else its `max`, else its `min`
/// (`SetDefaults_LimitRangeItem`).
#[derive(Clone, Debug, Default)]
pub struct DefaultRequests(Vec<(String, Value)>);

impl DefaultRequests {
    /// Adds what `limit_range` (an object's value) gives, after the
    /// LimitRanges added before it.
    pub fn add(&mut self, limit_range: &Value) {
        let mut given: Vec<(String, Value)> = Vec::new();
        let items = limit_range
            .at(&["spec", "limits"])
            .and_then(Value::as_array);
        for item in items.into_iter().flatten() {
            if item.get("type").and_then(Value::as_str) != Some("Container") {
                continue;
            }
            for field in ["min", "max", "default", "defaultRequest"] {
                for (resource, quantity) in item
                    .get(field)
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                {
                    given.retain(|(r, _)| r != resource);
                    given.push((resource.clone(), quantity.clone()));
                }
            }
        }
        for (resource, quantity) in given {
            if self.get(&resource).is_none() {
                self.0.push((resource, quantity));
            }
        }
    }

    /// The default request for `resource`, if one is given.
    pub fn get(&self, resource: &str) -> Option<&Value> {
        self.0.iter().find(|(r, _)| r == resource).map(|(_, q)| q)
    }
}

/// The highest average utilization of `resource` the counted `containers`
/// can reach, in percent of their requests: usage cannot exceed a limit (CPU
/// is throttled, memory is OOM-killed), so it is the sum of limits over the
/// sum of effective requests. `None` when any container has no limit, no
/// request, or one that does not parse.
pub fn max_utilization<'c, 'a: 'c, V: Json + 'a>(
    containers: impl IntoIterator<Item = &'c Container<'a, V>>,
    resource: &str,
) -> Option<f64> {
    let (mut limits, mut requests, mut any) = (0.0, 0.0, false);
    for container in containers {
        limits += Quantity::from_json(container.limit(resource)?)?.approx();
        requests += Quantity::from_json(container.effective_request(resource)?)?.approx();
        any = true;
    }
    (any && requests > 0.0).then(|| limits / requests * 100.0)
}

#[cfg(test)]
mod tests {
    use super::PodTemplate;
    use serde_json::json;

    /// `AggregateContainerRequests`: containers and sidecars add up; an init
    /// container counts with the sidecars started before it, if that is more;
    /// a container without the request adds nothing.
    #[test]
    fn adds_up_container_requests_as_the_kubelet_does() {
        let workload = |init: serde_json::Value| {
            json!({"spec": {"template": {"spec": {
                "containers": [{"name": "app", "resources": {"requests": {"cpu": "500m"}}}, {"name": "log"}],
                "initContainers": init,
            }}}})
        };
        let aggregate = |init| {
            let workload = workload(init);
            PodTemplate::within(&workload)
                .unwrap()
                .aggregate_request("cpu", None)
        };
        assert_eq!(aggregate(json!([])), Some(500));
        let sidecar = json!({"name": "proxy", "restartPolicy": "Always", "resources": {"limits": {"cpu": "100m"}}});
        assert_eq!(aggregate(json!([sidecar])), Some(600));
        let migrate = json!({"name": "migrate", "resources": {"requests": {"cpu": "2"}}});
        assert_eq!(aggregate(json!([sidecar, migrate])), Some(2100));
        assert_eq!(aggregate(json!([migrate, sidecar])), Some(2000));
        let workload = workload(json!([]));
        let template = PodTemplate::within(&workload).unwrap();
        assert_eq!(template.aggregate_request("memory", None), None);
    }
}
