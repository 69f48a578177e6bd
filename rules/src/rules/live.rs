//! What the `live` rules share: how long a live HPA has been held at a bound,
//! and why a metrics API does not answer.

use serde_json::Value;

use crate::cluster::Millis;
use crate::context::Context;
use crate::index::Lookup;
use crate::model::status::API_SERVICE;
use crate::model::status::{Condition, SCALING_LIMITED, Status};
use crate::object::ObjectRef;
use crate::path::get;

/// A live HPA held at a bound for long: `ScalingLimited` True with `reason`
/// for longer than [`Settings::pinned_threshold`] before [`Settings::now`];
/// its status, that condition and how long it has held.
///
/// [`Settings::pinned_threshold`]: crate::settings::Settings::pinned_threshold
/// [`Settings::now`]: crate::settings::Settings::now
pub fn limited_for_long<'a>(
    cx: &Context<'a>,
    reason: &str,
) -> Option<(Status<'a>, Condition<'a>, Millis)> {
    let status = Status::of_linted(cx.object)?;
    let limited = status
        .condition(SCALING_LIMITED)
        .filter(|c| c.status == "True" && c.reason == reason)?;
    let held = limited
        .held(cx.settings.now)
        .filter(|held| *held > cx.settings.pinned_threshold)?;
    Some((status, limited, held))
}

/// Why a metrics API does not answer, as the cluster's `APIService`s tell:
/// none registered for its group, or none of them `Available`. `None` when
/// one is available, or when nobody can tell: on manifests (an `APIService`
/// missing from the files is no evidence), or when the audit could not read
/// `APIService`s.
pub fn metrics_api_problem(cx: &Context<'_>, group: &str) -> Option<String> {
    if !cx.settings.live {
        return None;
    }
    // The custom metrics client prefers v1beta2 and falls back to v1beta1.
    let versions: &[&str] = if group == "custom.metrics.k8s.io" {
        &["v1beta2", "v1beta1"]
    } else {
        &["v1beta1"]
    };
    let mut unavailable = Vec::new();
    for version in versions {
        let name = format!("{version}.{group}");
        let reference = ObjectRef {
            group: API_SERVICE.group.to_owned(),
            kind: API_SERVICE.kind.to_owned(),
            namespace: String::new(),
            name: name.clone(),
        };
        match cx.index.get(&reference) {
            Lookup::Found(service) => {
                let available = get(&service.value, &["status", "conditions"])
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .find(|c| c.get("type").and_then(Value::as_str) == Some("Available"));
                let text = |field: &str| {
                    available
                        .and_then(|c| c.get(field))
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                };
                if text("status") == "True" {
                    return None;
                }
                unavailable.push(format!(
                    "APIService `{name}` is not available ({}: {})",
                    text("reason"),
                    text("message")
                ));
            }
            Lookup::Missing => {}
            Lookup::Unreadable | Lookup::Unknown => return None,
        }
    }
    if unavailable.is_empty() {
        let usual = match group {
            "metrics.k8s.io" => "metrics-server",
            "custom.metrics.k8s.io" => "a custom metrics adapter such as prometheus-adapter",
            _ => "an external metrics adapter such as KEDA or prometheus-adapter",
        };
        return Some(format!(
            "no APIService serves `{group}`: {usual} is not installed"
        ));
    }
    Some(unavailable.join("; "))
}
