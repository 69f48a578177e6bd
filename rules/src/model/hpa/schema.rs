//! The Go structs of the HPA's API versions, as strict decoding sees them: field
//! lists (unknown fields are errors) and names (for Go-style type errors).

use crate::model::decode::GoStruct;

macro_rules! go_struct {
    ($id:ident, $name:literal, $qualified:literal, [$($field:literal),* $(,)?]) => {
        pub(super) static $id: GoStruct = GoStruct { name: $name, qualified: $qualified, fields: &[$($field),*] };
    };
}

go_struct!(
    V2_HPA,
    "HorizontalPodAutoscaler",
    "v2.HorizontalPodAutoscaler",
    ["apiVersion", "kind", "metadata", "spec", "status"]
);
go_struct!(
    V1_HPA,
    "HorizontalPodAutoscaler",
    "v1.HorizontalPodAutoscaler",
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
    "v2.HorizontalPodAutoscalerSpec",
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
    "v1.HorizontalPodAutoscalerSpec",
    [
        "scaleTargetRef",
        "minReplicas",
        "maxReplicas",
        "targetCPUUtilizationPercentage"
    ]
);
go_struct!(
    V2BETA1_SPEC,
    "HorizontalPodAutoscalerSpec",
    "v2beta1.HorizontalPodAutoscalerSpec",
    ["scaleTargetRef", "minReplicas", "maxReplicas", "metrics"]
);
go_struct!(
    V2_REFERENCE,
    "CrossVersionObjectReference",
    "v2.CrossVersionObjectReference",
    ["kind", "name", "apiVersion"]
);
go_struct!(
    V1_REFERENCE,
    "CrossVersionObjectReference",
    "v1.CrossVersionObjectReference",
    ["kind", "name", "apiVersion"]
);
go_struct!(
    METRIC_SPEC,
    "MetricSpec",
    "v2.MetricSpec",
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
    "v2.ObjectMetricSource",
    ["describedObject", "target", "metric"]
);
go_struct!(
    PODS_SOURCE,
    "PodsMetricSource",
    "v2.PodsMetricSource",
    ["metric", "target"]
);
go_struct!(
    RESOURCE_SOURCE,
    "ResourceMetricSource",
    "v2.ResourceMetricSource",
    ["name", "target"]
);
go_struct!(
    CONTAINER_RESOURCE_SOURCE,
    "ContainerResourceMetricSource",
    "v2.ContainerResourceMetricSource",
    ["name", "target", "container"]
);
go_struct!(
    EXTERNAL_SOURCE,
    "ExternalMetricSource",
    "v2.ExternalMetricSource",
    ["metric", "target"]
);
go_struct!(
    METRIC_IDENTIFIER,
    "MetricIdentifier",
    "v2.MetricIdentifier",
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
    "v2.MetricTarget",
    ["type", "value", "averageValue", "averageUtilization"]
);
go_struct!(
    BEHAVIOR,
    "HorizontalPodAutoscalerBehavior",
    "v2.HorizontalPodAutoscalerBehavior",
    ["scaleUp", "scaleDown"]
);
go_struct!(
    SCALING_RULES,
    "HPAScalingRules",
    "v2.HPAScalingRules",
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
    "v2.HPAScalingRules",
    ["stabilizationWindowSeconds", "selectPolicy", "policies"]
);
go_struct!(
    SCALING_POLICY,
    "HPAScalingPolicy",
    "v2.HPAScalingPolicy",
    ["type", "value", "periodSeconds"]
);
// The v2beta1 metric shape, also used by the v1 metrics annotation.
go_struct!(
    LEGACY_METRIC_SPEC,
    "MetricSpec",
    "v2beta1.MetricSpec",
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
    "v2beta1.ObjectMetricSource",
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
    "v2beta1.PodsMetricSource",
    ["metricName", "targetAverageValue", "selector"]
);
go_struct!(
    LEGACY_RESOURCE_SOURCE,
    "ResourceMetricSource",
    "v2beta1.ResourceMetricSource",
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
    "v2beta1.ExternalMetricSource",
    [
        "metricName",
        "metricSelector",
        "targetValue",
        "targetAverageValue"
    ]
);
