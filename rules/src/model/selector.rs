//! Label selectors (`matchLabels`, `matchExpressions`) matched against labels.

use serde_json::{Map, Value};

use crate::path::{entry, member};

/// Whether `selector` selects an object with `labels`. `None` when the selector is
/// malformed (an unknown operator, wrong types): callers stay silent then.
/// An empty selector selects everything, a null one nothing (policy/v1 semantics).
pub fn matches(selector: &Value, labels: &Map<String, Value>) -> Option<bool> {
    matches_with(selector, |key| entry(labels, key).and_then(Value::as_str))
}

/// [`matches`] with the labels given as a lookup: the value of a label, if
/// the object has it and it is a string.
pub fn matches_with<'l>(selector: &Value, label: impl Fn(&str) -> Option<&'l str>) -> Option<bool> {
    let selector = match selector {
        Value::Null => return Some(false),
        Value::Object(selector) => selector,
        _ => return None,
    };
    if let Some(match_labels) = entry(selector, "matchLabels").filter(|v| !v.is_null()) {
        for (key, value) in match_labels.as_object()? {
            if label(key) != Some(value.as_str()?) {
                return Some(false);
            }
        }
    }
    let expressions = match entry(selector, "matchExpressions") {
        None | Some(Value::Null) => &[][..],
        Some(list) => list.as_array()?.as_slice(),
    };
    for expression in expressions {
        let key = member(expression, "key")?.as_str()?;
        let values: Vec<&str> = match member(expression, "values") {
            None | Some(Value::Null) => Vec::new(),
            Some(values) => values
                .as_array()?
                .iter()
                .map(Value::as_str)
                .collect::<Option<_>>()?,
        };
        let value = label(key);
        let matched = match member(expression, "operator")?.as_str()? {
            "In" => value.is_some_and(|v| values.contains(&v)),
            "NotIn" => value.is_none_or(|v| !values.contains(&v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            _ => return None,
        };
        if !matched {
            return Some(false);
        }
    }
    Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(selector: Value, labels: Value) -> Option<bool> {
        matches(&selector, labels.as_object().unwrap())
    }

    #[test]
    fn match_labels_and_expressions() {
        let labels = json!({"app": "web", "tier": "front"});
        assert_eq!(
            check(json!({"matchLabels": {"app": "web"}}), labels.clone()),
            Some(true)
        );
        assert_eq!(
            check(json!({"matchLabels": {"app": "db"}}), labels.clone()),
            Some(false)
        );
        assert_eq!(
            check(
                json!({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["front", "x"]}]}),
                labels.clone()
            ),
            Some(true)
        );
        assert_eq!(
            check(
                json!({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["front"]}]}),
                labels.clone()
            ),
            Some(false)
        );
        assert_eq!(
            check(
                json!({"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]}),
                labels.clone()
            ),
            Some(true)
        );
        assert_eq!(check(json!({}), labels.clone()), Some(true));
        assert_eq!(check(Value::Null, labels.clone()), Some(false));
        assert_eq!(
            check(
                json!({"matchExpressions": [{"key": "x", "operator": "Bogus"}]}),
                labels
            ),
            None
        );
    }
}
