//! `autoscaling/v2beta1` metrics in the `autoscaling/v2` shape, converted the way
//! the API server converted them while it served `v2beta1`
//! (`Convert_v2beta1_*MetricSource_To_autoscaling_*MetricSource`); `v2beta2`
//! has the `v2` shape already.

use serde_json::{Map, Value, json};

/// The member of a `v2beta1` metric (`object`, `pods`, `resource`,
/// `containerResource`, `external`) in the `v2` shape; `None` for anything
/// that is not such a member, or not a mapping.
pub fn v2beta1_member_to_v2(member: &str, source: &Value) -> Option<Value> {
    let source = source.as_object()?;
    let field = |name: &str| source.get(name).filter(|v| !v.is_null()).cloned();
    // Quantities the `v2beta1` types held by value read as zero when absent.
    let zero = || Value::from("0");
    let mut out = Map::new();
    match member {
        "object" => {
            let average = field("averageValue");
            let mut target = Map::new();
            target.insert(
                "type".into(),
                json!(if average.is_none() {
                    "Value"
                } else {
                    "AverageValue"
                }),
            );
            target.insert("value".into(), field("targetValue").unwrap_or_else(zero));
            target.extend(average.map(|v| ("averageValue".into(), v)));
            out.extend(field("target").map(|v| ("describedObject".into(), v)));
            out.insert(
                "metric".into(),
                identifier(field("metricName"), field("selector")),
            );
            out.insert("target".into(), Value::Object(target));
        }
        "pods" => {
            out.insert(
                "metric".into(),
                identifier(field("metricName"), field("selector")),
            );
            out.insert(
                "target".into(),
                json!({
                    "type": "AverageValue",
                    "averageValue": field("targetAverageValue").unwrap_or_else(zero),
                }),
            );
        }
        "resource" | "containerResource" => {
            out.extend(field("name").map(|v| ("name".into(), v)));
            if member == "containerResource" {
                out.extend(field("container").map(|v| ("container".into(), v)));
            }
            let utilization = field("targetAverageUtilization");
            let mut target = Map::new();
            target.insert(
                "type".into(),
                json!(if utilization.is_none() {
                    "AverageValue"
                } else {
                    "Utilization"
                }),
            );
            target.extend(field("targetAverageValue").map(|v| ("averageValue".into(), v)));
            target.extend(utilization.map(|v| ("averageUtilization".into(), v)));
            out.insert("target".into(), Value::Object(target));
        }
        "external" => {
            let value = field("targetValue");
            let mut target = Map::new();
            target.insert(
                "type".into(),
                json!(if value.is_none() {
                    "AverageValue"
                } else {
                    "Value"
                }),
            );
            target.extend(value.map(|v| ("value".into(), v)));
            target.extend(field("targetAverageValue").map(|v| ("averageValue".into(), v)));
            out.insert(
                "metric".into(),
                identifier(field("metricName"), field("metricSelector")),
            );
            out.insert("target".into(), Value::Object(target));
        }
        _ => return None,
    }
    Some(Value::Object(out))
}

/// The member of a `v2beta1` metric status (`status.currentMetrics[i]`) in
/// the `v2` shape (`Convert_v2beta1_*MetricStatus_To_autoscaling_*MetricStatus`);
/// `None` for anything that is not such a member, or not a mapping.
pub fn v2beta1_status_member_to_v2(member: &str, status: &Value) -> Option<Value> {
    let status = status.as_object()?;
    let field = |name: &str| status.get(name).filter(|v| !v.is_null()).cloned();
    // Quantities the `v2beta1` types held by value read as zero when absent.
    let zero = || Value::from("0");
    let mut current = Map::new();
    let mut out = Map::new();
    match member {
        "object" => {
            current.insert("value".into(), field("currentValue").unwrap_or_else(zero));
            current.extend(field("averageValue").map(|v| ("averageValue".into(), v)));
            out.extend(field("target").map(|v| ("describedObject".into(), v)));
            out.insert(
                "metric".into(),
                identifier(field("metricName"), field("selector")),
            );
        }
        "pods" => {
            let average = field("currentAverageValue").unwrap_or_else(zero);
            current.insert("averageValue".into(), average);
            out.insert(
                "metric".into(),
                identifier(field("metricName"), field("selector")),
            );
        }
        "resource" | "containerResource" => {
            out.extend(field("name").map(|v| ("name".into(), v)));
            if member == "containerResource" {
                out.extend(field("container").map(|v| ("container".into(), v)));
            }
            let average = field("currentAverageValue").unwrap_or_else(zero);
            current.insert("averageValue".into(), average);
            current.extend(
                field("currentAverageUtilization").map(|v| ("averageUtilization".into(), v)),
            );
        }
        "external" => {
            current.insert("value".into(), field("currentValue").unwrap_or_else(zero));
            current.extend(field("currentAverageValue").map(|v| ("averageValue".into(), v)));
            out.insert(
                "metric".into(),
                identifier(field("metricName"), field("metricSelector")),
            );
        }
        _ => return None,
    }
    out.insert("current".into(), Value::Object(current));
    Some(Value::Object(out))
}

/// A `MetricIdentifier`: the name, and the selector when there is one.
fn identifier(name: Option<Value>, selector: Option<Value>) -> Value {
    let mut out = Map::new();
    out.insert("name".into(), name.unwrap_or_else(|| Value::from("")));
    out.extend(selector.map(|v| ("selector".into(), v)));
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_each_source_as_the_server_did() {
        assert_eq!(
            v2beta1_member_to_v2(
                "resource",
                &json!({"name": "cpu", "targetAverageUtilization": 70})
            ),
            Some(
                json!({"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}})
            )
        );
        assert_eq!(
            v2beta1_member_to_v2(
                "resource",
                &json!({"name": "memory", "targetAverageValue": "1Gi"})
            ),
            Some(
                json!({"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi"}})
            )
        );
        assert_eq!(
            v2beta1_member_to_v2(
                "pods",
                &json!({"metricName": "rps", "targetAverageValue": "10", "selector": {"matchLabels": {"a": "b"}}})
            ),
            Some(
                json!({"metric": {"name": "rps", "selector": {"matchLabels": {"a": "b"}}}, "target": {"type": "AverageValue", "averageValue": "10"}})
            )
        );
        assert_eq!(
            v2beta1_member_to_v2(
                "object",
                &json!({"target": {"kind": "Service", "name": "s"}, "metricName": "hits", "targetValue": "100"})
            ),
            Some(
                json!({"describedObject": {"kind": "Service", "name": "s"}, "metric": {"name": "hits"}, "target": {"type": "Value", "value": "100"}})
            )
        );
        assert_eq!(
            v2beta1_member_to_v2(
                "object",
                &json!({"target": {"kind": "Service", "name": "s"}, "metricName": "hits", "averageValue": "5"})
            ),
            Some(
                json!({"describedObject": {"kind": "Service", "name": "s"}, "metric": {"name": "hits"}, "target": {"type": "AverageValue", "value": "0", "averageValue": "5"}})
            )
        );
        assert_eq!(
            v2beta1_member_to_v2(
                "external",
                &json!({"metricName": "queue", "metricSelector": {"matchLabels": {"q": "jobs"}}, "targetAverageValue": "30"})
            ),
            Some(
                json!({"metric": {"name": "queue", "selector": {"matchLabels": {"q": "jobs"}}}, "target": {"type": "AverageValue", "averageValue": "30"}})
            )
        );
        assert_eq!(v2beta1_member_to_v2("type", &json!("Resource")), None);
    }

    #[test]
    fn converts_each_status_as_the_server_did() {
        assert_eq!(
            v2beta1_status_member_to_v2(
                "resource",
                &json!({"name": "cpu", "currentAverageUtilization": 45, "currentAverageValue": "90m"})
            ),
            Some(
                json!({"name": "cpu", "current": {"averageValue": "90m", "averageUtilization": 45}})
            )
        );
        assert_eq!(
            v2beta1_status_member_to_v2(
                "external",
                &json!({"metricName": "queue", "metricSelector": {"matchLabels": {"q": "a"}}, "currentValue": "7"})
            ),
            Some(
                json!({"metric": {"name": "queue", "selector": {"matchLabels": {"q": "a"}}}, "current": {"value": "7"}})
            )
        );
        assert_eq!(
            v2beta1_status_member_to_v2(
                "object",
                &json!({"target": {"kind": "Ingress", "name": "main"}, "metricName": "hits", "currentValue": "2k"})
            ),
            Some(
                json!({"describedObject": {"kind": "Ingress", "name": "main"}, "metric": {"name": "hits"}, "current": {"value": "2k"}})
            )
        );
        assert_eq!(
            v2beta1_status_member_to_v2("pods", &json!({"metricName": "rps"})),
            Some(json!({"metric": {"name": "rps"}, "current": {"averageValue": "0"}}))
        );
    }
}
