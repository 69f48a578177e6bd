//! The legacy shapes: `autoscaling/v2beta1` (and `v2alpha1`), and `autoscaling/v1`
//! with its annotations (§2.3), converted the way the API server converts them.

use serde_json::Value;

use super::schema::*;
use super::v2::{
    apply_spec_defaults, cpu_utilization, decode_metadata, decode_reference, decode_scaling_rules,
};
use super::*;
use crate::model::decode::{Decoder, Record};

/// Converts one v2beta1-style metric the way the API server's conversion does,
/// recording where each internal field was written.
fn decode_legacy_metric(
    d: &mut Decoder,
    metric: &Record<'_>,
    internal: &FieldPath,
    aliases: &mut Vec<(FieldPath, FieldPath)>,
) -> MetricSpec {
    let source = metric.base();
    let mut alias = |from: &str, to: &str| {
        let from = FieldPath::fields(from);
        let to = FieldPath::fields(to);
        aliases.push((internal.join(&from), source.join(&to)));
    };
    let mut spec = MetricSpec {
        type_: metric.string(d, "type").unwrap_or_default(),
        ..MetricSpec::default()
    };
    let zero = || Quantity::parse("0").ok();

    let object = metric.record(d, "object", &LEGACY_OBJECT_SOURCE);
    if object.is_present() {
        for (from, to) in [
            ("object.describedObject", "object.target"),
            ("object.metric.name", "object.metricName"),
            ("object.target.value", "object.targetValue"),
            ("object.target.averageValue", "object.averageValue"),
            ("object.target", "object"),
            ("object.metric", "object"),
        ] {
            alias(from, to);
        }
        let average_value = object.quantity(d, "averageValue");
        spec.object = Some(ObjectMetric {
            described_object: decode_reference(d, &object, "target", &V2_REFERENCE),
            metric: MetricIdentifier {
                name: object.string(d, "metricName").unwrap_or_default(),
            },
            target: MetricTarget {
                type_: if average_value.is_none() {
                    "Value"
                } else {
                    "AverageValue"
                }
                .into(),
                value: object.quantity(d, "targetValue").or_else(zero),
                average_value,
                average_utilization: None,
            },
        });
    }

    let pods = metric.record(d, "pods", &LEGACY_PODS_SOURCE);
    if pods.is_present() {
        for (from, to) in [
            ("pods.metric.name", "pods.metricName"),
            ("pods.target.averageValue", "pods.targetAverageValue"),
            ("pods.target", "pods"),
            ("pods.metric", "pods"),
        ] {
            alias(from, to);
        }
        spec.pods = Some(NamedMetric {
            metric: MetricIdentifier {
                name: pods.string(d, "metricName").unwrap_or_default(),
            },
            target: MetricTarget {
                type_: "AverageValue".into(),
                average_value: pods.quantity(d, "targetAverageValue").or_else(zero),
                ..MetricTarget::default()
            },
        });
    }

    for member in ["resource", "containerResource"] {
        let resource = metric.record(d, member, &LEGACY_RESOURCE_SOURCE);
        if !resource.is_present() {
            continue;
        }
        for (from, to) in [
            ("target.averageUtilization", "targetAverageUtilization"),
            ("target.averageValue", "targetAverageValue"),
            ("target", ""),
        ] {
            alias(&format!("{member}.{from}"), &format!("{member}.{to}"));
        }
        let utilization = resource.int32(d, "targetAverageUtilization");
        let converted = ResourceMetric {
            name: resource.string(d, "name").unwrap_or_default(),
            container: resource.string(d, "container").unwrap_or_default(),
            target: MetricTarget {
                type_: if utilization.is_none() {
                    "AverageValue"
                } else {
                    "Utilization"
                }
                .into(),
                average_value: resource.quantity(d, "targetAverageValue"),
                average_utilization: utilization,
                value: None,
            },
        };
        if member == "resource" {
            spec.resource = Some(converted);
        } else {
            spec.container_resource = Some(converted);
        }
    }

    let external = metric.record(d, "external", &LEGACY_EXTERNAL_SOURCE);
    if external.is_present() {
        for (from, to) in [
            ("external.metric.name", "external.metricName"),
            ("external.target.value", "external.targetValue"),
            (
                "external.target.averageValue",
                "external.targetAverageValue",
            ),
            ("external.target", "external"),
            ("external.metric", "external"),
        ] {
            alias(from, to);
        }
        let value = external.quantity(d, "targetValue");
        spec.external = Some(NamedMetric {
            metric: MetricIdentifier {
                name: external.string(d, "metricName").unwrap_or_default(),
            },
            target: MetricTarget {
                type_: if value.is_none() {
                    "AverageValue"
                } else {
                    "Value"
                }
                .into(),
                value,
                average_value: external.quantity(d, "targetAverageValue"),
                average_utilization: None,
            },
        });
    }
    spec
}

pub(super) fn decode_v2beta1(d: &mut Decoder, value: &Value) -> Hpa {
    let root = d.root(value, &V2_HPA);
    let mut hpa = empty_hpa();
    hpa.metadata = decode_metadata(d, &root);
    let spec = root.record(d, "spec", &V2BETA1_SPEC);
    hpa.scale_target_ref = decode_reference(d, &spec, "scaleTargetRef", &V2_REFERENCE);
    hpa.min_replicas = spec.int32(d, "minReplicas");
    hpa.max_replicas = spec.int32(d, "maxReplicas");
    let mut aliases = Vec::new();
    hpa.metrics = spec
        .records(d, "metrics", &LEGACY_METRIC_SPEC, "[]v2beta1.MetricSpec")
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(i, metric)| {
            let internal = FieldPath::fields("spec.metrics").index(i);
            decode_legacy_metric(d, metric, &internal, &mut aliases)
        })
        .collect();
    hpa.aliases = aliases;
    apply_spec_defaults(&mut hpa);
    hpa
}

pub(super) fn decode_v1(d: &mut Decoder, value: &Value) -> Hpa {
    let root = d.root(value, &V1_HPA);
    root.any("status");
    let mut hpa = empty_hpa();
    hpa.metadata = decode_metadata(d, &root);
    let spec = root.record(d, "spec", &V1_SPEC);
    hpa.scale_target_ref = decode_reference(d, &spec, "scaleTargetRef", &V1_REFERENCE);
    hpa.min_replicas = spec.int32(d, "minReplicas");
    hpa.max_replicas = spec.int32(d, "maxReplicas");
    let cpu = spec.int32(d, "targetCPUUtilizationPercentage");

    let annotation_path = |key: &str| FieldPath::fields("metadata.annotations").key(key);
    let annotation = |key: &str| {
        hpa.metadata
            .annotations
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| serde_json::from_str::<Value>(v).ok())
    };
    // Extra metrics travel in an annotation; a malformed one is ignored (1.36).
    let mut metrics = Vec::new();
    let mut aliases = Vec::new();
    if let Some(Value::Array(items)) = annotation(V1_METRICS_ANNOTATION) {
        let mut lenient = Decoder::new(false);
        for item in &items {
            let internal = FieldPath::fields("spec.metrics").index(metrics.len());
            aliases.push((internal.clone(), annotation_path(V1_METRICS_ANNOTATION)));
            let record = lenient.root(item, &LEGACY_METRIC_SPEC);
            let mut ignored = Vec::new();
            metrics.push(decode_legacy_metric(
                &mut lenient,
                &record,
                &internal,
                &mut ignored,
            ));
        }
    }
    if let Some(percent) = cpu {
        aliases.push((
            FieldPath::fields("spec.metrics").index(metrics.len()),
            FieldPath::fields("spec.targetCPUUtilizationPercentage"),
        ));
        metrics.push(cpu_utilization(percent));
    }
    // Behavior travels as JSON of the internal type; it is not defaulted.
    let behavior = annotation(V1_BEHAVIOR_ANNOTATION).map(|json| {
        aliases.push((
            FieldPath::fields("spec.behavior"),
            annotation_path(V1_BEHAVIOR_ANNOTATION),
        ));
        let json = lower_first_letter_of_keys(json);
        let mut lenient = Decoder::new(false);
        let record = lenient.root(&json, &BEHAVIOR);
        let mut direction = |name| {
            let rules = record.record(&mut lenient, name, &SCALING_RULES);
            rules
                .is_present()
                .then(|| decode_scaling_rules(&mut lenient, &rules, true))
        };
        Behavior {
            scale_up: direction("scaleUp"),
            scale_down: direction("scaleDown"),
        }
    });
    hpa.metrics = metrics;
    hpa.behavior = behavior;
    hpa.aliases = aliases;
    apply_spec_defaults(&mut hpa);
    hpa
}

/// Go's JSON decoder matches field names case-insensitively, so the v1 behavior
/// annotation may use Go names (`ScaleUp`); map them to the JSON names.
fn lower_first_letter_of_keys(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(key, value)| {
                    let mut chars = key.chars();
                    let key = chars
                        .next()
                        .map(|c| c.to_ascii_lowercase().to_string() + chars.as_str())
                        .unwrap_or_default();
                    (key, lower_first_letter_of_keys(value))
                })
                .collect(),
        ),
        Value::Array(items) => {
            Value::Array(items.into_iter().map(lower_first_letter_of_keys).collect())
        }
        other => other,
    }
}
