//! `status`, decoded for its errors only: the server clears it when an HPA is
//! created or updated, but decodes the whole request first, so a wrong type
//! or an unknown field there fails the request as it would in `spec`.

use crate::cluster::Cluster;
use crate::path::Json;

use super::schema::*;
use super::v2::{decode_reference, decode_selector};
use crate::model::decode::{Decoder, GoStruct, Record};

/// The metric shapes of a version's `currentMetrics`.
#[derive(Clone, Copy)]
pub(super) enum Shape {
    /// `autoscaling/v2` and `v2beta2`: a metric identifier and a `current`.
    V2,
    /// `autoscaling/v2beta1`: `metricName` and `current…` fields.
    V2beta1,
}

/// The `status` of an `autoscaling/v2`, `v2beta2` or `v2beta1` HPA.
pub(super) fn decode_status<V: Json>(
    d: &mut Decoder,
    root: &Record<'_, '_, V>,
    shape: Shape,
    cluster: &Cluster,
) {
    let status = root.record(d, "status", &STATUS);
    decode_common(d, &status);
    for metric in status
        .records(
            d,
            "currentMetrics",
            &METRIC_STATUS,
            "[]autoscaling.MetricStatus",
        )
        .unwrap_or_default()
    {
        metric.string_as(d, "type", "autoscaling.MetricSourceType");
        for member in super::v2::MEMBERS {
            match shape {
                Shape::V2 => decode_member(d, &metric, member),
                Shape::V2beta1 => decode_legacy_member(d, &metric, member),
            }
        }
    }
    let observes = cluster.kube_version.at_least(37);
    for condition in status
        .records(
            d,
            "conditions",
            if observes {
                &CONDITION_1_37
            } else {
                &CONDITION
            },
            "[]autoscaling.HorizontalPodAutoscalerCondition",
        )
        .unwrap_or_default()
    {
        condition.string_as(
            d,
            "type",
            "autoscaling.HorizontalPodAutoscalerConditionType",
        );
        condition.string_as(d, "status", "v1.ConditionStatus");
        condition.time(d, "lastTransitionTime");
        condition.string(d, "reason");
        condition.string(d, "message");
        if observes {
            condition.int64(d, "observedGeneration");
        }
    }
}

/// The `status` of an `autoscaling/v1` HPA.
pub(super) fn decode_v1_status<V: Json>(d: &mut Decoder, root: &Record<'_, '_, V>) {
    let status = root.record(d, "status", &V1_STATUS);
    decode_common(d, &status);
    status.int32(d, "currentCPUUtilizationPercentage");
}

/// The fields every version's status has.
fn decode_common<V: Json>(d: &mut Decoder, status: &Record<'_, '_, V>) {
    status.int64(d, "observedGeneration");
    status.time(d, "lastScaleTime");
    status.int32(d, "currentReplicas");
    status.int32(d, "desiredReplicas");
}

fn decode_member<V: Json>(d: &mut Decoder, metric: &Record<'_, '_, V>, member: &'static str) {
    let go: &'static GoStruct = match member {
        "object" => &OBJECT_STATUS,
        "pods" => &PODS_STATUS,
        "resource" => &RESOURCE_STATUS,
        "containerResource" => &CONTAINER_RESOURCE_STATUS,
        _ => &EXTERNAL_STATUS,
    };
    let source = metric.record(d, member, go);
    if !source.is_present() {
        return;
    }
    if matches!(member, "resource" | "containerResource") {
        source.string_as(d, "name", "v1.ResourceName");
    } else {
        let identifier = source.record(d, "metric", &METRIC_IDENTIFIER);
        identifier.string(d, "name");
        decode_selector(d, &identifier, "selector");
    }
    if member == "containerResource" {
        source.string(d, "container");
    }
    if member == "object" {
        decode_reference(d, &source, "describedObject", &REFERENCE);
    }
    let current = source.record(d, "current", &METRIC_VALUE_STATUS);
    current.quantity(d, "value");
    current.quantity(d, "averageValue");
    current.int32(d, "averageUtilization");
}

fn decode_legacy_member<V: Json>(
    d: &mut Decoder,
    metric: &Record<'_, '_, V>,
    member: &'static str,
) {
    let go: &'static GoStruct = match member {
        "object" => &LEGACY_OBJECT_STATUS,
        "pods" => &LEGACY_PODS_STATUS,
        "resource" => &LEGACY_RESOURCE_STATUS,
        "containerResource" => &LEGACY_CONTAINER_RESOURCE_STATUS,
        _ => &LEGACY_EXTERNAL_STATUS,
    };
    let source = metric.record(d, member, go);
    if !source.is_present() {
        return;
    }
    match member {
        "object" => {
            decode_reference(d, &source, "target", &REFERENCE);
            source.string(d, "metricName");
            source.quantity(d, "currentValue");
            decode_selector(d, &source, "selector");
            source.quantity(d, "averageValue");
        }
        "pods" => {
            source.string(d, "metricName");
            source.quantity(d, "currentAverageValue");
            decode_selector(d, &source, "selector");
        }
        "resource" | "containerResource" => {
            source.string_as(d, "name", "v1.ResourceName");
            source.int32(d, "currentAverageUtilization");
            source.quantity(d, "currentAverageValue");
            if member == "containerResource" {
                source.string(d, "container");
            }
        }
        _ => {
            source.string(d, "metricName");
            decode_selector(d, &source, "metricSelector");
            source.quantity(d, "currentValue");
            source.quantity(d, "currentAverageValue");
        }
    }
}
