//! Which object an autoscaler scales: HPAs of any version and KEDA ScaledObjects
//! (which create an HPA of their own for their target).

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
