//! Decoding of `autoscaling/v2` (and `v2beta2`, which has the same shape) with the
//! API server's defaulting (§2.1; `v2beta2` defaulted the same way), and the
//! pieces every version shares.

use crate::path::Json;

use super::schema::*;
use super::*;
use crate::model::decode::{DecodeErrorKind, Decoder, GoStruct, Record};

pub(super) fn decode_metadata<V: Json>(d: &mut Decoder, root: &Record<'_, '_, V>) -> Metadata {
    let meta = root.record(d, "metadata", &OBJECT_META);
    for name in ["selfLink", "uid", "resourceVersion"] {
        meta.string(d, name);
    }
    for name in ["creationTimestamp", "deletionTimestamp"] {
        meta.time(d, name);
    }
    meta.int64(d, "deletionGracePeriodSeconds");
    for entry in meta
        .records(
            d,
            "managedFields",
            &MANAGED_FIELDS,
            "[]v1.ManagedFieldsEntry",
        )
        .unwrap_or_default()
    {
        for name in ["manager", "apiVersion", "fieldsType", "subresource"] {
            entry.string(d, name);
        }
        entry.string_as(d, "operation", "v1.ManagedFieldsOperationType");
        entry.time(d, "time");
    }
    let owner_references = meta
        .records(
            d,
            "ownerReferences",
            &OWNER_REFERENCE,
            "[]v1.OwnerReference",
        )
        .unwrap_or_default()
        .into_iter()
        .map(|owner| {
            let block_owner_deletion = owner.bool(d, "blockOwnerDeletion");
            OwnerReference {
                api_version: owner.string(d, "apiVersion").unwrap_or_default(),
                kind: owner.string(d, "kind").unwrap_or_default(),
                name: owner.string(d, "name").unwrap_or_default(),
                uid: owner.string_as(d, "uid", "types.UID").unwrap_or_default(),
                controller: owner.bool(d, "controller"),
                block_owner_deletion,
            }
        })
        .collect();
    Metadata {
        name: meta.string(d, "name").unwrap_or_default(),
        generate_name: meta.string(d, "generateName").unwrap_or_default(),
        namespace: meta.string(d, "namespace").unwrap_or_default(),
        generation: meta.int64(d, "generation").unwrap_or_default(),
        labels: meta.string_map(d, "labels"),
        annotations: meta.string_map(d, "annotations"),
        owner_references,
        finalizers: meta.strings(d, "finalizers"),
    }
}

pub(super) fn decode_reference<V: Json>(
    d: &mut Decoder,
    parent: &Record<'_, '_, V>,
    name: &'static str,
    go: &'static GoStruct,
) -> ObjectReference {
    let record = parent.record(d, name, go);
    ObjectReference {
        kind: record.string(d, "kind").unwrap_or_default(),
        name: record.string(d, "name").unwrap_or_default(),
        api_version: record.string(d, "apiVersion").unwrap_or_default(),
    }
}

/// Checks a `LabelSelector` for decoding errors; its content is never validated (MI3).
pub(super) fn decode_selector<V: Json>(
    d: &mut Decoder,
    parent: &Record<'_, '_, V>,
    name: &'static str,
) {
    let selector = parent.record(d, name, &LABEL_SELECTOR);
    selector.string_map(d, "matchLabels");
    for requirement in selector
        .records(
            d,
            "matchExpressions",
            &SELECTOR_REQUIREMENT,
            "[]v1.LabelSelectorRequirement",
        )
        .unwrap_or_default()
    {
        requirement.string(d, "key");
        requirement.string_as(d, "operator", "v1.LabelSelectorOperator");
        requirement.strings(d, "values");
    }
}

pub(super) fn cpu_utilization(percent: i32) -> MetricSpec {
    MetricSpec {
        type_: "Resource".into(),
        resource: Some(ResourceMetric {
            name: "cpu".into(),
            container: String::new(),
            target: MetricTarget {
                type_: "Utilization".into(),
                average_utilization: Some(percent),
                ..MetricTarget::default()
            },
        }),
        ..MetricSpec::default()
    }
}

/// D1 and D2: `minReplicas: 1` and the CPU 80 % metric.
pub(super) fn apply_spec_defaults(hpa: &mut Hpa) {
    hpa.min_replicas.get_or_insert(1);
    if hpa.metrics.is_empty() {
        hpa.metrics.push(cpu_utilization(80));
        hpa.metrics_defaulted = true;
    }
}

fn policy(type_: &str, value: i32) -> ScalingPolicy {
    ScalingPolicy {
        type_: type_.into(),
        value,
        period_seconds: 15,
    }
}

/// The API server's default scaling rules for one direction (D4, D5).
pub fn default_scaling_rules(direction: &str) -> ScalingRules {
    if direction == "scaleUp" {
        ScalingRules {
            stabilization_window_seconds: Some(0),
            select_policy: Some("Max".into()),
            policies: Some(vec![policy("Pods", 4), policy("Percent", 100)]),
            tolerance: None,
        }
    } else {
        ScalingRules {
            stabilization_window_seconds: None,
            select_policy: Some("Max".into()),
            policies: Some(vec![policy("Percent", 100)]),
            tolerance: None,
        }
    }
}

/// D4/D5: each field the user set replaces the default; `policies` as a whole.
fn merge_with_defaults(direction: &str, user: Option<ScalingRules>) -> ScalingRules {
    let Some(mut rules) = user else {
        return default_scaling_rules(direction);
    };
    // The defaults are made only when some field is unset: they allocate.
    if rules.stabilization_window_seconds.is_none()
        || rules.select_policy.is_none()
        || rules.policies.is_none()
    {
        let default = default_scaling_rules(direction);
        rules.stabilization_window_seconds = rules
            .stabilization_window_seconds
            .or(default.stabilization_window_seconds);
        rules.select_policy = rules.select_policy.or(default.select_policy);
        rules.policies = rules.policies.or(default.policies);
    }
    rules
}

pub(super) fn decode_v2<V: Json>(d: &mut Decoder, value: &V, cluster: &Cluster) -> Hpa {
    let root = d.root(value, &HPA);
    super::status::decode_status(d, &root, super::status::Shape::V2, cluster);
    let mut hpa = empty_hpa();
    hpa.metadata = decode_metadata(d, &root);
    let spec = root.record(d, "spec", &V2_SPEC);
    hpa.scale_target_ref = decode_reference(d, &spec, "scaleTargetRef", &REFERENCE);
    hpa.min_replicas = spec.int32(d, "minReplicas");
    hpa.max_replicas = spec.int32(d, "maxReplicas");
    let mut aliases = Vec::new();
    hpa.metrics = spec
        .records(d, "metrics", &METRIC_SPEC, "[]autoscaling.MetricSpec")
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(i, metric)| decode_metric(d, metric, i, &mut aliases))
        .collect();
    hpa.aliases = aliases;
    let behavior = spec.record(d, "behavior", &BEHAVIOR);
    if behavior.is_present() {
        let rules_struct = if cluster.kube_version.at_least(33) {
            &SCALING_RULES
        } else {
            &SCALING_RULES_PRE_1_33
        };
        let mut direction = |name| {
            let rules = behavior.record(d, name, rules_struct);
            rules
                .is_present()
                .then(|| decode_scaling_rules(d, &rules, cluster.kube_version.at_least(33)))
        };
        let scale_up = direction("scaleUp");
        let scale_down = direction("scaleDown");
        hpa.written = WrittenBehavior::of(scale_up.as_ref(), scale_down.as_ref());
        hpa.behavior = Some(Behavior {
            scale_up: Some(merge_with_defaults("scaleUp", scale_up)),
            scale_down: Some(merge_with_defaults("scaleDown", scale_down)),
        });
    }
    apply_spec_defaults(&mut hpa);
    hpa
}

pub(super) fn decode_scaling_rules<V: Json>(
    d: &mut Decoder,
    rules: &Record<'_, '_, V>,
    has_tolerance: bool,
) -> ScalingRules {
    let policies = rules
        .records(
            d,
            "policies",
            &SCALING_POLICY,
            "[]autoscaling.HPAScalingPolicy",
        )
        .map(|policies| {
            policies
                .iter()
                .map(|p| ScalingPolicy {
                    type_: p
                        .string_as(d, "type", "autoscaling.HPAScalingPolicyType")
                        .unwrap_or_default(),
                    value: p.int32(d, "value").unwrap_or_default(),
                    period_seconds: p.int32(d, "periodSeconds").unwrap_or_default(),
                })
                .collect()
        });
    ScalingRules {
        stabilization_window_seconds: rules.int32(d, "stabilizationWindowSeconds"),
        select_policy: rules.string_as(d, "selectPolicy", "autoscaling.ScalingPolicySelect"),
        policies,
        tolerance: if has_tolerance {
            rules.quantity(d, "tolerance")
        } else {
            None
        },
    }
}

/// The members of a `MetricSpec` (each a metric source), in the order of the Go struct.
pub(super) const MEMBERS: [&str; 5] = [
    "object",
    "pods",
    "resource",
    "containerResource",
    "external",
];

/// The `autoscaling/v2` struct of a member of a `MetricSpec`.
pub(super) fn source_struct(member: &str) -> &'static GoStruct {
    match member {
        "object" => &OBJECT_SOURCE,
        "pods" => &PODS_SOURCE,
        "resource" => &RESOURCE_SOURCE,
        "containerResource" => &CONTAINER_RESOURCE_SOURCE,
        _ => &EXTERNAL_SOURCE,
    }
}

/// The metric `spec.metrics[index]`. A source written in
/// the `autoscaling/v2beta1` shape is one decoding error (the fields the server
/// does not know), and is read the way `v2beta1` meant it (see
/// [`super::legacy::convert_member`]).
fn decode_metric<V: Json>(
    d: &mut Decoder,
    metric: &Record<'_, '_, V>,
    index: usize,
    aliases: &mut Vec<(FieldPath, FieldPath)>,
) -> MetricSpec {
    let mut spec = MetricSpec {
        type_: metric
            .string_as(d, "type", "autoscaling.MetricSourceType")
            .unwrap_or_default(),
        ..MetricSpec::default()
    };
    for member in MEMBERS {
        // An absent or null member decodes to nothing and reports nothing.
        let Some(written) = metric.raw(member) else {
            continue;
        };
        let mut probe = d.probe();
        let source = metric.record(&mut probe, member, source_struct(member));
        if !source.is_present() {
            d.errors.append(&mut probe.errors);
            continue;
        }
        decode_member(&mut probe, member, &source, &mut spec);
        let only_unknown_fields = probe
            .errors
            .iter()
            .all(|e| e.kind == DecodeErrorKind::UnknownField);
        if only_unknown_fields && super::legacy::is_v2beta1_source(member, written) {
            d.v2beta1_shape(metric.path(member), written, probe.errors);
            // In place of what `v2` made of it.
            let internal = FieldPath::fields("spec.metrics").index(index);
            super::legacy::convert_member(member, written, &internal, &mut spec, aliases);
        } else {
            d.errors.append(&mut probe.errors);
        }
    }
    spec
}

/// Decodes `source`, the member `member` of a metric, into `spec`.
pub(super) fn decode_member<V: Json>(
    d: &mut Decoder,
    member: &str,
    source: &Record<'_, '_, V>,
    spec: &mut MetricSpec,
) {
    let target = |d: &mut Decoder, source: &Record<'_, '_, V>| {
        let target = source.record(d, "target", &METRIC_TARGET);
        MetricTarget {
            type_: target
                .string_as(d, "type", "autoscaling.MetricTargetType")
                .unwrap_or_default(),
            value: target.quantity(d, "value"),
            average_value: target.quantity(d, "averageValue"),
            average_utilization: target.int32(d, "averageUtilization"),
        }
    };
    let identifier = |d: &mut Decoder, source: &Record<'_, '_, V>| {
        let id = source.record(d, "metric", &METRIC_IDENTIFIER);
        decode_selector(d, &id, "selector");
        MetricIdentifier {
            name: id.string(d, "name").unwrap_or_default(),
        }
    };
    let named = |d: &mut Decoder| NamedMetric {
        metric: identifier(d, source),
        target: target(d, source),
    };
    let resource = |d: &mut Decoder| ResourceMetric {
        name: source
            .string_as(d, "name", "v1.ResourceName")
            .unwrap_or_default(),
        container: if member == "containerResource" {
            source.string(d, "container").unwrap_or_default()
        } else {
            String::new()
        },
        target: target(d, source),
    };
    match member {
        "object" => {
            spec.object = Some(ObjectMetric {
                described_object: decode_reference(d, source, "describedObject", &REFERENCE),
                metric: identifier(d, source),
                target: target(d, source),
            });
        }
        "pods" => spec.pods = Some(named(d)),
        "resource" => spec.resource = Some(resource(d)),
        "containerResource" => spec.container_resource = Some(resource(d)),
        _ => spec.external = Some(named(d)),
    }
}
