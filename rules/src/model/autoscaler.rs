//! Which object an autoscaler scales: HPAs of any version and KEDA ScaledObjects
//! (which create an HPA of their own for their target); and what a
//! VerticalPodAutoscaler does to the pods of its target.

use serde_json::Value;

use crate::object::{Object, ObjectRef, group_of};

/// The scale target of an autoscaler, or `None` for other objects.
pub fn scale_target(object: &Object) -> Option<ObjectRef> {
    let reference = object.value.pointer("/spec/scaleTargetRef")?;
    let field = |name: &str| reference.get(name).and_then(Value::as_str);
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
    object.key.kind == "ScaledObject" && object.key.group() == "keda.sh"
}

/// The API group of `VerticalPodAutoscaler`.
pub const VPA_GROUP: &str = "autoscaling.k8s.io";
/// The kind.
pub const VPA_KIND: &str = "VerticalPodAutoscaler";

/// A VerticalPodAutoscaler: which workload it resizes, how, and which
/// resources of which containers.
pub struct Vpa<'a> {
    spec: &'a Value,
    namespace: &'a str,
}

impl<'a> Vpa<'a> {
    /// The VPA view of an object, `None` for other objects.
    pub fn of(object: &'a Object) -> Option<Self> {
        if object.key.kind != VPA_KIND || object.key.group() != VPA_GROUP {
            return None;
        }
        Some(Self {
            spec: object.value.get("spec")?,
            namespace: &object.key.namespace,
        })
    }

    /// Whether `spec.targetRef` is `target`. An empty `apiVersion` matches any
    /// group: the VPA resolves well-known workloads by kind.
    pub fn targets(&self, target: &ObjectRef) -> bool {
        let Some(reference) = self.spec.get("targetRef") else {
            return false;
        };
        let field = |name: &str| reference.get(name).and_then(Value::as_str);
        let group = group_of(field("apiVersion").unwrap_or_default());
        self.namespace == target.namespace
            && field("kind") == Some(target.kind.as_str())
            && field("name") == Some(target.name.as_str())
            && (group.is_empty() || group == target.group)
    }

    /// `spec.updatePolicy.updateMode`; unset means `Auto` (`Recreate` today).
    pub fn update_mode(&self) -> &'a str {
        self.spec
            .pointer("/updatePolicy/updateMode")
            .and_then(Value::as_str)
            .unwrap_or("Auto")
    }

    /// Whether the VPA changes running pods: every mode but `Off` (recommend
    /// only) and `Initial` (only sets requests of new pods).
    pub fn changes_pods(&self) -> bool {
        !matches!(self.update_mode(), "Off" | "Initial")
    }

    fn policies(&self) -> &'a [Value] {
        self.spec
            .pointer("/resourcePolicy/containerPolicies")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    /// Whether a container policy (or the default one, none given) lets the
    /// VPA set `resource`: not `mode: Off`, and `resource` among
    /// `controlledResources` (default cpu and memory).
    fn policy_controls(policy: Option<&Value>, resource: &str) -> bool {
        let field = |name: &str| policy.and_then(|p| p.get(name));
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
                .find(|p| p.get("containerName").and_then(Value::as_str) == Some(name))
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
