//! The Go structs of the HPA's API versions, as strict decoding sees them: field
//! lists (unknown fields are errors) and names (for Go-style type errors).

use crate::model::decode::GoStruct;

macro_rules! go_struct {
    ($id:ident, $name:literal, $qualified:literal, [$($field:literal),* $(,)?]) => {
        pub(super) static $id: GoStruct = GoStruct { name: $name, qualified: $qualified, fields: &[$($field),*] };
    };
}

go_struct!(
    HPA,
    "HorizontalPodAutoscaler",
    "autoscaling.HorizontalPodAutoscaler",
    ["apiVersion", "kind", "metadata", "spec", "status"]
);
go_struct!(
    OBJECT_META,
    "ObjectMeta",
    "v1.ObjectMeta",
    [
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    ]
);
go_struct!(
    OWNER_REFERENCE,
    "OwnerReference",
    "v1.OwnerReference",
    [
        "apiVersion",
        "kind",
        "name",
        "uid",
        "controller",
        "blockOwnerDeletion"
    ]
);
go_struct!(
    MANAGED_FIELDS,
    "ManagedFieldsEntry",
    "v1.ManagedFieldsEntry",
    [
        "manager",
        "operation",
        "apiVersion",
        "time",
        "fieldsType",
        "fieldsV1",
        "subresource"
    ]
);
go_struct!(
    V2_SPEC,
    "HorizontalPodAutoscalerSpec",
    "autoscaling.HorizontalPodAutoscalerSpec",
    [
        "scaleTargetRef",
        "minReplicas",
        "maxReplicas",
        "metrics",
        "behavior"
    ]
);
go_struct!(
    V1_SPEC,
    "HorizontalPodAutoscalerSpec",
    "autoscaling.HorizontalPodAutoscalerSpec",
    [
        "scaleTargetRef",
        "minReplicas",
        "maxReplicas",
        "targetCPUUtilizationPercentage"
    ]
);
// The `autoscaling/v2beta1` shape (served until 1.24). Its metric sources are
// also the shape of the `autoscaling/v1` metrics annotation.
go_struct!(
    V2BETA1_SPEC,
    "HorizontalPodAutoscalerSpec",
    "autoscaling.HorizontalPodAutoscalerSpec",
    ["scaleTargetRef", "minReplicas", "maxReplicas", "metrics"]
);
go_struct!(
    REFERENCE,
    "CrossVersionObjectReference",
    "autoscaling.CrossVersionObjectReference",
    ["kind", "name", "apiVersion"]
);
go_struct!(
    METRIC_SPEC,
    "MetricSpec",
    "autoscaling.MetricSpec",
    [
        "type",
        "object",
        "pods",
        "resource",
        "containerResource",
        "external"
    ]
);
go_struct!(
    OBJECT_SOURCE,
    "ObjectMetricSource",
    "autoscaling.ObjectMetricSource",
    ["describedObject", "target", "metric"]
);
go_struct!(
    PODS_SOURCE,
    "PodsMetricSource",
    "autoscaling.PodsMetricSource",
    ["metric", "target"]
);
go_struct!(
    RESOURCE_SOURCE,
    "ResourceMetricSource",
    "autoscaling.ResourceMetricSource",
    ["name", "target"]
);
go_struct!(
    CONTAINER_RESOURCE_SOURCE,
    "ContainerResourceMetricSource",
    "autoscaling.ContainerResourceMetricSource",
    ["name", "target", "container"]
);
go_struct!(
    EXTERNAL_SOURCE,
    "ExternalMetricSource",
    "autoscaling.ExternalMetricSource",
    ["metric", "target"]
);
go_struct!(
    METRIC_IDENTIFIER,
    "MetricIdentifier",
    "autoscaling.MetricIdentifier",
    ["name", "selector"]
);
go_struct!(
    LABEL_SELECTOR,
    "LabelSelector",
    "v1.LabelSelector",
    ["matchLabels", "matchExpressions"]
);
go_struct!(
    SELECTOR_REQUIREMENT,
    "LabelSelectorRequirement",
    "v1.LabelSelectorRequirement",
    ["key", "operator", "values"]
);
go_struct!(
    METRIC_TARGET,
    "MetricTarget",
    "autoscaling.MetricTarget",
    ["type", "value", "averageValue", "averageUtilization"]
);
go_struct!(
    BEHAVIOR,
    "HorizontalPodAutoscalerBehavior",
    "autoscaling.HorizontalPodAutoscalerBehavior",
    ["scaleUp", "scaleDown"]
);
go_struct!(
    SCALING_RULES,
    "HPAScalingRules",
    "autoscaling.HPAScalingRules",
    [
        "stabilizationWindowSeconds",
        "selectPolicy",
        "policies",
        "tolerance"
    ]
);
// Before 1.33 `tolerance` does not exist, so strict decoding rejects it.
go_struct!(
    SCALING_RULES_PRE_1_33,
    "HPAScalingRules",
    "autoscaling.HPAScalingRules",
    ["stabilizationWindowSeconds", "selectPolicy", "policies"]
);
go_struct!(
    SCALING_POLICY,
    "HPAScalingPolicy",
    "autoscaling.HPAScalingPolicy",
    ["type", "value", "periodSeconds"]
);
go_struct!(
    LEGACY_METRIC_SPEC,
    "MetricSpec",
    "autoscaling.MetricSpec",
    [
        "type",
        "object",
        "pods",
        "resource",
        "containerResource",
        "external"
    ]
);
go_struct!(
    LEGACY_OBJECT_SOURCE,
    "ObjectMetricSource",
    "autoscaling.ObjectMetricSource",
    [
        "target",
        "metricName",
        "targetValue",
        "selector",
        "averageValue"
    ]
);
go_struct!(
    LEGACY_PODS_SOURCE,
    "PodsMetricSource",
    "autoscaling.PodsMetricSource",
    ["metricName", "targetAverageValue", "selector"]
);
go_struct!(
    LEGACY_RESOURCE_SOURCE,
    "ResourceMetricSource",
    "autoscaling.ResourceMetricSource",
    ["name", "targetAverageUtilization", "targetAverageValue"]
);
go_struct!(
    LEGACY_CONTAINER_RESOURCE_SOURCE,
    "ContainerResourceMetricSource",
    "autoscaling.ContainerResourceMetricSource",
    [
        "name",
        "targetAverageUtilization",
        "targetAverageValue",
        "container"
    ]
);
go_struct!(
    LEGACY_EXTERNAL_SOURCE,
    "ExternalMetricSource",
    "autoscaling.ExternalMetricSource",
    [
        "metricName",
        "metricSelector",
        "targetValue",
        "targetAverageValue"
    ]
);
// `status`: the server clears it on create, but decodes it first.
go_struct!(
    STATUS,
    "HorizontalPodAutoscalerStatus",
    "autoscaling.HorizontalPodAutoscalerStatus",
    [
        "observedGeneration",
        "lastScaleTime",
        "currentReplicas",
        "desiredReplicas",
        "currentMetrics",
        "conditions"
    ]
);
go_struct!(
    V1_STATUS,
    "HorizontalPodAutoscalerStatus",
    "autoscaling.HorizontalPodAutoscalerStatus",
    [
        "observedGeneration",
        "lastScaleTime",
        "currentReplicas",
        "desiredReplicas",
        "currentCPUUtilizationPercentage"
    ]
);
go_struct!(
    CONDITION,
    "HorizontalPodAutoscalerCondition",
    "autoscaling.HorizontalPodAutoscalerCondition",
    ["type", "status", "lastTransitionTime", "reason", "message"]
);
// 1.37 adds `observedGeneration` to conditions.
go_struct!(
    CONDITION_1_37,
    "HorizontalPodAutoscalerCondition",
    "autoscaling.HorizontalPodAutoscalerCondition",
    [
        "type",
        "status",
        "lastTransitionTime",
        "reason",
        "message",
        "observedGeneration"
    ]
);
go_struct!(
    METRIC_STATUS,
    "MetricStatus",
    "autoscaling.MetricStatus",
    [
        "type",
        "object",
        "pods",
        "resource",
        "containerResource",
        "external"
    ]
);
go_struct!(
    OBJECT_STATUS,
    "ObjectMetricStatus",
    "autoscaling.ObjectMetricStatus",
    ["metric", "current", "describedObject"]
);
go_struct!(
    PODS_STATUS,
    "PodsMetricStatus",
    "autoscaling.PodsMetricStatus",
    ["metric", "current"]
);
go_struct!(
    RESOURCE_STATUS,
    "ResourceMetricStatus",
    "autoscaling.ResourceMetricStatus",
    ["name", "current"]
);
go_struct!(
    CONTAINER_RESOURCE_STATUS,
    "ContainerResourceMetricStatus",
    "autoscaling.ContainerResourceMetricStatus",
    ["name", "current", "container"]
);
go_struct!(
    EXTERNAL_STATUS,
    "ExternalMetricStatus",
    "autoscaling.ExternalMetricStatus",
    ["metric", "current"]
);
go_struct!(
    METRIC_VALUE_STATUS,
    "MetricValueStatus",
    "autoscaling.MetricValueStatus",
    ["value", "averageValue", "averageUtilization"]
);
go_struct!(
    LEGACY_OBJECT_STATUS,
    "ObjectMetricStatus",
    "autoscaling.ObjectMetricStatus",
    [
        "target",
        "metricName",
        "currentValue",
        "selector",
        "averageValue"
    ]
);
go_struct!(
    LEGACY_PODS_STATUS,
    "PodsMetricStatus",
    "autoscaling.PodsMetricStatus",
    ["metricName", "currentAverageValue", "selector"]
);
go_struct!(
    LEGACY_RESOURCE_STATUS,
    "ResourceMetricStatus",
    "autoscaling.ResourceMetricStatus",
    ["name", "currentAverageUtilization", "currentAverageValue"]
);
go_struct!(
    LEGACY_CONTAINER_RESOURCE_STATUS,
    "ContainerResourceMetricStatus",
    "autoscaling.ContainerResourceMetricStatus",
    [
        "name",
        "currentAverageUtilization",
        "currentAverageValue",
        "container"
    ]
);
go_struct!(
    LEGACY_EXTERNAL_STATUS,
    "ExternalMetricStatus",
    "autoscaling.ExternalMetricStatus",
    [
        "metricName",
        "metricSelector",
        "currentValue",
        "currentAverageValue"
    ]
);
