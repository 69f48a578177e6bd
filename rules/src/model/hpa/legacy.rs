//! The legacy shapes: `autoscaling/v2beta1` (and `v2alpha1`), and `autoscaling/v1`
//! with its annotations (§2.3), converted the way the API server converts them.
//! Each `v2beta1` metric source becomes its `v2` shape with
//! [`v2beta1_member_to_v2`] (the conversion `deprecated-api-version`'s fix
//! writes) and is then read as `v2` reads it.

use serde_json::Value;

use crate::path::{Json, Shape};

use super::schema::*;
use super::upgrade::v2beta1_member_to_v2;
use super::v2::{
    MEMBERS, apply_spec_defaults, cpu_utilization, decode_member, decode_metadata,
    decode_reference, decode_scaling_rules, decode_selector, source_struct,
};
use super::*;
use crate::model::decode::{Decoder, GoStruct, Record, go_field};

/// The `v2beta1` struct of a metric source.
fn legacy_struct(member: &str) -> &'static GoStruct {
    match member {
        "object" => &LEGACY_OBJECT_SOURCE,
        "pods" => &LEGACY_PODS_SOURCE,
        "resource" => &LEGACY_RESOURCE_SOURCE,
        "containerResource" => &LEGACY_CONTAINER_RESOURCE_SOURCE,
        _ => &LEGACY_EXTERNAL_SOURCE,
    }
}

/// Where the `v2` fields of a converted `v2beta1` source were written, relative
/// to its metric: (`v2` path, `v2beta1` path).
fn written_as(member: &str) -> &'static [(&'static str, &'static str)] {
    match member {
        "object" => &[
            ("object.describedObject", "object.target"),
            ("object.metric.name", "object.metricName"),
            ("object.metric.selector", "object.selector"),
            ("object.target.value", "object.targetValue"),
            ("object.target.averageValue", "object.averageValue"),
            ("object.target", "object"),
            ("object.metric", "object"),
        ],
        "pods" => &[
            ("pods.metric.name", "pods.metricName"),
            ("pods.metric.selector", "pods.selector"),
            ("pods.target.averageValue", "pods.targetAverageValue"),
            ("pods.target", "pods"),
            ("pods.metric", "pods"),
        ],
        "resource" => &[
            (
                "resource.target.averageUtilization",
                "resource.targetAverageUtilization",
            ),
            (
                "resource.target.averageValue",
                "resource.targetAverageValue",
            ),
            ("resource.target", "resource"),
        ],
        "containerResource" => &[
            (
                "containerResource.target.averageUtilization",
                "containerResource.targetAverageUtilization",
            ),
            (
                "containerResource.target.averageValue",
                "containerResource.targetAverageValue",
            ),
            ("containerResource.target", "containerResource"),
        ],
        _ => &[
            ("external.metric.name", "external.metricName"),
            ("external.metric.selector", "external.metricSelector"),
            ("external.target.value", "external.targetValue"),
            (
                "external.target.averageValue",
                "external.targetAverageValue",
            ),
            ("external.target", "external"),
            ("external.metric", "external"),
        ],
    }
}

/// Whether a metric source of an `autoscaling/v2` object is written in the
/// `v2beta1` shape: every field is one of `v2beta1`'s, and one at least is not
/// one of `v2`'s (such as `targetAverageUtilization`).
pub(super) fn is_v2beta1_source<V: Json>(member: &str, written: &V) -> bool {
    let Shape::Object(_, fields) = written.shape() else {
        return false;
    };
    let legacy = legacy_struct(member).fields;
    let v2 = source_struct(member).fields;
    let (mut all_legacy, mut some_not_v2) = (true, false);
    for (key, _) in fields {
        all_legacy &= legacy.contains(&key);
        some_not_v2 |= !v2.contains(&key);
    }
    all_legacy && some_not_v2
}

/// Reads `written`, a `v2beta1` metric source, into `spec` as the server
/// converted it, and records where its fields were written (`internal` is the
/// metric's path).
pub(super) fn convert_member<V: Json>(
    member: &str,
    written: &V,
    internal: &FieldPath,
    spec: &mut MetricSpec,
    aliases: &mut Vec<(FieldPath, FieldPath)>,
) {
    let Some(converted) = v2beta1_member_to_v2(member, &written.to_value()) else {
        return;
    };
    // Decoding errors are the `v2beta1` source's own, reported by the caller.
    let mut lenient = Decoder::new(false, "v2");
    let source = lenient.root(&converted, source_struct(member));
    decode_member(&mut lenient, member, &source, spec);
    aliases.extend(written_as(member).iter().map(|(v2, legacy)| {
        (
            internal.join(&FieldPath::fields(v2)),
            internal.join(&FieldPath::fields(legacy)),
        )
    }));
}

/// A `v2beta1` metric: decoded as the server decoded that version (for its
/// errors), then converted.
fn decode_legacy_metric<V: Json>(
    d: &mut Decoder,
    metric: &Record<'_, '_, V>,
    internal: &FieldPath,
    aliases: &mut Vec<(FieldPath, FieldPath)>,
) -> MetricSpec {
    let mut spec = MetricSpec {
        type_: metric
            .string_as(d, "type", "autoscaling.MetricSourceType")
            .unwrap_or_default(),
        ..MetricSpec::default()
    };
    for member in MEMBERS {
        let source = metric.record(d, member, legacy_struct(member));
        let Some(written) = metric.raw(member).filter(|_| source.is_present()) else {
            continue;
        };
        check_legacy_source(d, member, &source);
        if d.reads_as_written() {
            let written = as_go_named(written.to_value(), legacy_struct(member));
            convert_member(member, &written, internal, &mut spec, aliases);
        } else {
            convert_member(member, written, internal, &mut spec, aliases);
        }
    }
    spec
}

/// `value`, a `v2beta1` metric source in an annotation, with its keys named
/// as the fields Go's `encoding/json` sets from them (ignoring case; of
/// keys naming one field, the last one counts), its reference's and
/// selectors' too: what the conversion reads.
fn as_go_named(value: Value, go: &GoStruct) -> Value {
    let Value::Object(map) = value else {
        return value;
    };
    let mut named = serde_json::Map::new();
    for (key, value) in map {
        let Some(field) = go_field(go, &key) else {
            continue;
        };
        let value = match field {
            "target" => as_go_named(value, &REFERENCE),
            "selector" | "metricSelector" => {
                let mut selector = as_go_named(value, &LABEL_SELECTOR);
                if let Some(Value::Array(requirements)) = selector.get_mut("matchExpressions") {
                    for requirement in requirements.iter_mut() {
                        *requirement =
                            as_go_named(std::mem::take(requirement), &SELECTOR_REQUIREMENT);
                    }
                }
                selector
            }
            _ => value,
        };
        named.insert(field.to_owned(), value);
    }
    Value::Object(named)
}

/// The fields of a `v2beta1` metric source, checked for their Go types.
fn check_legacy_source<V: Json>(d: &mut Decoder, member: &str, source: &Record<'_, '_, V>) {
    match member {
        "object" => {
            decode_reference(d, source, "target", &REFERENCE);
            source.string(d, "metricName");
            source.quantity(d, "targetValue");
            decode_selector(d, source, "selector");
            source.quantity(d, "averageValue");
        }
        "pods" => {
            source.string(d, "metricName");
            source.quantity(d, "targetAverageValue");
            decode_selector(d, source, "selector");
        }
        "resource" | "containerResource" => {
            source.string_as(d, "name", "v1.ResourceName");
            source.int32(d, "targetAverageUtilization");
            source.quantity(d, "targetAverageValue");
            if member == "containerResource" {
                source.string(d, "container");
            }
        }
        _ => {
            source.string(d, "metricName");
            decode_selector(d, source, "metricSelector");
            source.quantity(d, "targetValue");
            source.quantity(d, "targetAverageValue");
        }
    }
}

pub(super) fn decode_v2beta1<V: Json>(d: &mut Decoder, value: &V, cluster: &Cluster) -> Hpa {
    let root = d.root(value, &HPA);
    super::status::decode_status(d, &root, super::status::Shape::V2beta1, cluster);
    let mut hpa = empty_hpa();
    hpa.metadata = decode_metadata(d, &root);
    let spec = root.record(d, "spec", &V2BETA1_SPEC);
    hpa.scale_target_ref = decode_reference(d, &spec, "scaleTargetRef", &REFERENCE);
    hpa.min_replicas = spec.int32(d, "minReplicas");
    hpa.max_replicas = spec.int32(d, "maxReplicas");
    let mut aliases = Vec::new();
    hpa.metrics = spec
        .records(
            d,
            "metrics",
            &LEGACY_METRIC_SPEC,
            "[]autoscaling.MetricSpec",
        )
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(i, metric)| {
            let internal = FieldPath::fields("spec.metrics").index(i);
            decode_legacy_metric(d, metric, &internal, &mut aliases)
        })
        .collect();
    // `v2beta1` has no `spec.behavior`: it travels in an annotation, as in `v1`.
    set_annotated_behavior(&mut hpa, cluster, &mut aliases);
    hpa.aliases = aliases;
    apply_spec_defaults(&mut hpa);
    hpa
}

/// A round-trip annotation's JSON as Go's `json.Unmarshal` reads it into its
/// type: `None` when it does not fit the type (the server then ignores the
/// annotation). Unknown fields are no error there.
fn unmarshal<T>(json: &Value, decode: impl FnOnce(&mut Decoder, &Value) -> T) -> Option<T> {
    let mut d = Decoder::new(true, "autoscaling").reading_as_written();
    let decoded = decode(&mut d, json);
    (!d.has_fatal_errors()).then_some(decoded)
}

fn annotation(metadata: &Metadata, key: &str) -> Option<Value> {
    metadata
        .annotations
        .get(key)
        .and_then(|v| serde_json::from_str::<Value>(v).ok())
}

fn annotation_path(key: &str) -> FieldPath {
    FieldPath::fields("metadata.annotations").key(key)
}

/// Sets `hpa.behavior` (and what it writes) from its annotation.
fn set_annotated_behavior(
    hpa: &mut Hpa,
    cluster: &Cluster,
    aliases: &mut Vec<(FieldPath, FieldPath)>,
) {
    hpa.behavior = annotated_behavior(&hpa.metadata, cluster, aliases);
    if let Some(behavior) = &hpa.behavior {
        hpa.written = WrittenBehavior::of(behavior.scale_up.as_ref(), behavior.scale_down.as_ref());
    }
}

/// The behavior annotation of `v1` and `v2beta1`: JSON of the internal type,
/// moved to `spec.behavior` when it decodes and is not empty, and not
/// defaulted.
fn annotated_behavior(
    metadata: &Metadata,
    cluster: &Cluster,
    aliases: &mut Vec<(FieldPath, FieldPath)>,
) -> Option<Behavior> {
    let json = annotation(metadata, V1_BEHAVIOR_ANNOTATION)?;
    let has_tolerance = cluster.kube_version.at_least(33);
    let behavior = unmarshal(&json, |d, json| {
        let record = d.root(json, &BEHAVIOR);
        let mut direction = |name| {
            let rules = record.record(d, name, &SCALING_RULES);
            rules
                .is_present()
                .then(|| decode_scaling_rules(d, &rules, has_tolerance))
        };
        Behavior {
            scale_up: direction("scaleUp"),
            scale_down: direction("scaleDown"),
        }
    })
    .filter(|b| b.scale_up.is_some() || b.scale_down.is_some())?;
    aliases.push((
        FieldPath::fields("spec.behavior"),
        annotation_path(V1_BEHAVIOR_ANNOTATION),
    ));
    Some(behavior)
}

pub(super) fn decode_v1<V: Json>(d: &mut Decoder, value: &V, cluster: &Cluster) -> Hpa {
    let root = d.root(value, &HPA);
    super::status::decode_v1_status(d, &root);
    let mut hpa = empty_hpa();
    hpa.metadata = decode_metadata(d, &root);
    let spec = root.record(d, "spec", &V1_SPEC);
    hpa.scale_target_ref = decode_reference(d, &spec, "scaleTargetRef", &REFERENCE);
    hpa.min_replicas = spec.int32(d, "minReplicas");
    hpa.max_replicas = spec.int32(d, "maxReplicas");
    let cpu = spec.int32(d, "targetCPUUtilizationPercentage");

    // Extra metrics travel in an annotation, placed before the CPU metric.
    let mut aliases = Vec::new();
    let listed = annotation(&hpa.metadata, V1_METRICS_ANNOTATION)
        .map(|json| serde_json::json!({ "metrics": json }));
    let mut metrics = listed
        .and_then(|listed| {
            unmarshal(&listed, |d, listed| {
                let list = d.root(listed, &V2BETA1_SPEC);
                let items = list.records(d, "metrics", &LEGACY_METRIC_SPEC, "[]v1.MetricSpec");
                let mut ignored = Vec::new();
                items
                    .unwrap_or_default()
                    .iter()
                    .enumerate()
                    .map(|(i, item)| {
                        let internal = FieldPath::fields("spec.metrics").index(i);
                        decode_legacy_metric(d, item, &internal, &mut ignored)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .unwrap_or_default();
    for i in 0..metrics.len() {
        aliases.push((
            FieldPath::fields("spec.metrics").index(i),
            annotation_path(V1_METRICS_ANNOTATION),
        ));
    }
    if let Some(percent) = cpu {
        aliases.push((
            FieldPath::fields("spec.metrics").index(metrics.len()),
            FieldPath::fields("spec.targetCPUUtilizationPercentage"),
        ));
        metrics.push(cpu_utilization(percent));
    }
    hpa.metrics = metrics;
    set_annotated_behavior(&mut hpa, cluster, &mut aliases);
    hpa.aliases = aliases;
    apply_spec_defaults(&mut hpa);
    hpa
}
