//! Workloads as the HPA controller sees them: the pod template and the
//! containers whose requests it adds up.

use serde_json::{Map, Value};

use crate::object::Object;
use crate::path::FieldPath;

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

/// One container of a pod template.
pub struct Container<'a> {
    /// Path of the container in its object, e.g. `spec.template.spec.containers[1]`.
    pub path: FieldPath,
    /// `name`.
    pub name: &'a str,
    /// The container as written.
    pub value: &'a Value,
    /// Whether it is an init container.
    pub is_init: bool,
}

impl<'a> Container<'a> {
    /// `resources.requests[resource]`, if set.
    pub fn request(&self, resource: &str) -> Option<&'a Value> {
        self.value.pointer("/resources/requests")?.get(resource)
    }

    /// `resources.limits[resource]`, if set.
    pub fn limit(&self, resource: &str) -> Option<&'a Value> {
        self.value.pointer("/resources/limits")?.get(resource)
    }

    /// An init container with `restartPolicy: Always`: a native sidecar, which the
    /// HPA controller counts like a regular container.
    pub fn is_sidecar(&self) -> bool {
        self.is_init && self.value.get("restartPolicy").and_then(Value::as_str) == Some("Always")
    }
}

/// The pod template of a workload.
pub struct PodTemplate<'a> {
    /// Path of the template in its object.
    pub path: FieldPath,
    value: &'a Value,
}

impl<'a> PodTemplate<'a> {
    /// `spec.template` of a workload, if it has one.
    pub fn of(object: &'a Object) -> Option<Self> {
        let value = object
            .value
            .pointer("/spec/template")
            .filter(|v| v.is_object())?;
        Some(Self {
            path: FieldPath::fields("spec.template"),
            value,
        })
    }

    /// `metadata.labels` of the template.
    pub fn labels(&self) -> Option<&'a Map<String, Value>> {
        self.value.pointer("/metadata/labels")?.as_object()
    }

    fn list(&self, field: &str, is_init: bool) -> Vec<Container<'a>> {
        let Some(items) = self
            .value
            .pointer(&format!("/spec/{field}"))
            .and_then(Value::as_array)
        else {
            return Vec::new();
        };
        let base = self.path.field("spec").field(field);
        items
            .iter()
            .enumerate()
            .map(|(i, value)| Container {
                path: base.index(i),
                name: value
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
                value,
                is_init,
            })
            .collect()
    }

    /// Regular containers followed by init containers.
    pub fn all_containers(&self) -> Vec<Container<'a>> {
        let mut all = self.list("containers", false);
        all.extend(self.list("initContainers", true));
        all
    }

    /// The containers whose usage and requests the HPA controller adds up:
    /// every regular container plus native sidecars.
    pub fn counted_containers(&self) -> Vec<Container<'a>> {
        self.all_containers()
            .into_iter()
            .filter(|c| !c.is_init || c.is_sidecar())
            .collect()
    }
}
