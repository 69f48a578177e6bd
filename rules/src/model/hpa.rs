//! The HorizontalPodAutoscaler as the API server validates it: the internal
//! (= `autoscaling/v2`) shape, after decoding, conversion and defaulting
//! (apiserver-hpa-rules.md §0 and §2).
//!
//! Every supported version is decoded into this one shape, so rules never care
//! which version was written. `autoscaling/v2` and `v1` are decoded strictly (the
//! errors are parity findings); the removed `v2beta1`/`v2beta2` leniently. Paths of
//! converted fields are mapped back to where they were written via [`Hpa::source_path`].

use serde_json::Value;

use crate::model::decode::{DecodeError, Decoder, GoStruct, Record};
use crate::model::quantity::Quantity;
use crate::object::{Object, ObjectRef, group_of};
use crate::path::FieldPath;
use crate::settings::Settings;

/// Annotation that carries extra metrics of an `autoscaling/v1` HPA.
pub const V1_METRICS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/metrics";
/// Annotation that carries the behavior of an `autoscaling/v1` HPA.
pub const V1_BEHAVIOR_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/behavior";

/// Annotations the API server's conversion removes before validation (§0 step 3).
const ROUND_TRIP_ANNOTATIONS: [&str; 4] = [
    V1_METRICS_ANNOTATION,
    "autoscaling.alpha.kubernetes.io/current-metrics",
    "autoscaling.alpha.kubernetes.io/conditions",
    V1_BEHAVIOR_ANNOTATION,
];

/// The `autoscaling` API version an HPA was written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HpaVersion {
    /// `autoscaling/v1`: CPU only, v2 features in annotations.
    V1,
    /// `autoscaling/v2`.
    V2,
    /// `autoscaling/v2beta1`, removed in 1.25.
    V2beta1,
    /// `autoscaling/v2beta2`, removed in 1.26.
    V2beta2,
    /// `autoscaling/v2alpha1`, removed in 1.8.
    V2alpha1,
}

impl HpaVersion {
    /// Parses `autoscaling/<version>`.
    pub fn from_api_version(api_version: &str) -> Option<Self> {
        match api_version {
            "autoscaling/v1" => Some(Self::V1),
            "autoscaling/v2" => Some(Self::V2),
            "autoscaling/v2beta1" => Some(Self::V2beta1),
            "autoscaling/v2beta2" => Some(Self::V2beta2),
            "autoscaling/v2alpha1" => Some(Self::V2alpha1),
            _ => None,
        }
    }

    /// Whether the API server validates documents of this version. The removed
    /// betas are not served at all; `deprecated-api-version` reports them.
    pub fn is_validated(self) -> bool {
        matches!(self, Self::V1 | Self::V2)
    }
}

/// `CrossVersionObjectReference`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ObjectReference {
    /// `kind`.
    pub kind: String,
    /// `name`.
    pub name: String,
    /// `apiVersion`.
    pub api_version: String,
}

/// `MetricIdentifier`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MetricIdentifier {
    /// `name`.
    pub name: String,
}

/// `MetricTarget`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MetricTarget {
    /// `type`: `Utilization`, `Value` or `AverageValue`.
    pub type_: String,
    /// `value`.
    pub value: Option<Quantity>,
    /// `averageValue`.
    pub average_value: Option<Quantity>,
    /// `averageUtilization` (percent of the request).
    pub average_utilization: Option<i32>,
}

/// `ObjectMetricSource`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ObjectMetric {
    /// `describedObject`.
    pub described_object: ObjectReference,
    /// `metric`.
    pub metric: MetricIdentifier,
    /// `target`.
    pub target: MetricTarget,
}

/// `PodsMetricSource` and `ExternalMetricSource` (same shape).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NamedMetric {
    /// `metric`.
    pub metric: MetricIdentifier,
    /// `target`.
    pub target: MetricTarget,
}

/// `ResourceMetricSource` and `ContainerResourceMetricSource` (`container` empty
/// for the former).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResourceMetric {
    /// `name`: the resource, e.g. `cpu`.
    pub name: String,
    /// `container` (ContainerResource only).
    pub container: String,
    /// `target`.
    pub target: MetricTarget,
}

/// `MetricSpec`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MetricSpec {
    /// `type`.
    pub type_: String,
    /// `object`.
    pub object: Option<ObjectMetric>,
    /// `pods`.
    pub pods: Option<NamedMetric>,
    /// `resource`.
    pub resource: Option<ResourceMetric>,
    /// `containerResource`.
    pub container_resource: Option<ResourceMetric>,
    /// `external`.
    pub external: Option<NamedMetric>,
}

/// One populated member of a [`MetricSpec`].
#[derive(Clone, Copy, Debug)]
pub enum MetricSource<'a> {
    /// `object`.
    Object(&'a ObjectMetric),
    /// `external`.
    External(&'a NamedMetric),
    /// `pods`.
    Pods(&'a NamedMetric),
    /// `resource`.
    Resource(&'a ResourceMetric),
    /// `containerResource`.
    ContainerResource(&'a ResourceMetric),
}

impl MetricSource<'_> {
    /// The JSON member name.
    pub fn member(&self) -> &'static str {
        match self {
            MetricSource::Object(_) => "object",
            MetricSource::External(_) => "external",
            MetricSource::Pods(_) => "pods",
            MetricSource::Resource(_) => "resource",
            MetricSource::ContainerResource(_) => "containerResource",
        }
    }

    /// The source's target.
    pub fn target(&self) -> &MetricTarget {
        match self {
            MetricSource::Object(m) => &m.target,
            MetricSource::External(m) | MetricSource::Pods(m) => &m.target,
            MetricSource::Resource(m) | MetricSource::ContainerResource(m) => &m.target,
        }
    }

    /// The source's metric identifier (`object`, `external` and `pods` only).
    pub fn metric(&self) -> Option<&MetricIdentifier> {
        match self {
            MetricSource::Object(m) => Some(&m.metric),
            MetricSource::External(m) | MetricSource::Pods(m) => Some(&m.metric),
            MetricSource::Resource(_) | MetricSource::ContainerResource(_) => None,
        }
    }
}

impl MetricSpec {
    /// The populated members, in the order the API server looks at them
    /// (object, external, pods, resource, containerResource).
    pub fn populated(&self) -> Vec<MetricSource<'_>> {
        let mut out = Vec::new();
        out.extend(self.object.as_ref().map(MetricSource::Object));
        out.extend(self.external.as_ref().map(MetricSource::External));
        out.extend(self.pods.as_ref().map(MetricSource::Pods));
        out.extend(self.resource.as_ref().map(MetricSource::Resource));
        out.extend(
            self.container_resource
                .as_ref()
                .map(MetricSource::ContainerResource),
        );
        out
    }

    /// The member the API server validates: the first populated one (rule T3).
    pub fn validated_source(&self) -> Option<MetricSource<'_>> {
        self.populated().into_iter().next()
    }

    /// The member the `type` names, if it is populated: what the controller uses.
    pub fn source(&self) -> Option<MetricSource<'_>> {
        match self.type_.as_str() {
            "Object" => self.object.as_ref().map(MetricSource::Object),
            "External" => self.external.as_ref().map(MetricSource::External),
            "Pods" => self.pods.as_ref().map(MetricSource::Pods),
            "Resource" => self.resource.as_ref().map(MetricSource::Resource),
            "ContainerResource" => self
                .container_resource
                .as_ref()
                .map(MetricSource::ContainerResource),
            _ => None,
        }
    }
}

/// A `Resource` or `ContainerResource` metric as the HPA controller evaluates
/// it: the member its `type` names.
#[derive(Clone, Copy, Debug)]
pub struct ResourceMetricRef<'a> {
    /// Index in `spec.metrics`.
    pub index: usize,
    /// The source.
    pub metric: &'a ResourceMetric,
    /// `containerResource` rather than `resource`.
    pub is_container: bool,
    /// The API server's default metric (CPU at 80 %): nothing was written.
    pub defaulted: bool,
}

impl ResourceMetricRef<'_> {
    /// The JSON member name.
    pub fn member(&self) -> &'static str {
        if self.is_container {
            "containerResource"
        } else {
            "resource"
        }
    }

    /// The container a `ContainerResource` metric measures.
    pub fn container(&self) -> Option<&str> {
        self.is_container.then_some(self.metric.container.as_str())
    }

    /// The utilization (percent of the request) the controller aims for: it
    /// uses `averageValue` when set, else `averageUtilization`.
    pub fn utilization(&self) -> Option<i32> {
        let target = &self.metric.target;
        target
            .average_utilization
            .filter(|_| target.average_value.is_none())
    }

    /// The path of a field of the source, e.g. `target.averageUtilization`;
    /// `spec.metrics` for the default metric, which has no fields to point at.
    pub fn path(&self, field: &str) -> FieldPath {
        if self.defaulted {
            return FieldPath::fields("spec.metrics");
        }
        FieldPath::fields("spec.metrics")
            .index(self.index)
            .field(self.member())
            .join(&FieldPath::fields(field))
    }
}

/// `HPAScalingPolicy`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScalingPolicy {
    /// `type`: `Pods` or `Percent`.
    pub type_: String,
    /// `value`.
    pub value: i32,
    /// `periodSeconds`.
    pub period_seconds: i32,
}

/// `HPAScalingRules`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScalingRules {
    /// `stabilizationWindowSeconds`.
    pub stabilization_window_seconds: Option<i32>,
    /// `selectPolicy`.
    pub select_policy: Option<String>,
    /// `policies` (`Some(vec![])` for an explicit empty list).
    pub policies: Option<Vec<ScalingPolicy>>,
    /// `tolerance`.
    pub tolerance: Option<Quantity>,
}

impl ScalingRules {
    /// Whether `selectPolicy: Disabled` turns this direction off.
    pub fn is_disabled(&self) -> bool {
        self.select_policy.as_deref() == Some("Disabled")
    }
}

/// `HorizontalPodAutoscalerBehavior`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Behavior {
    /// `scaleUp`.
    pub scale_up: Option<ScalingRules>,
    /// `scaleDown`.
    pub scale_down: Option<ScalingRules>,
}

impl Behavior {
    /// Both directions with their JSON names, scale-up first (the server's order).
    pub fn directions(&self) -> [(&'static str, Option<&ScalingRules>); 2] {
        [
            ("scaleUp", self.scale_up.as_ref()),
            ("scaleDown", self.scale_down.as_ref()),
        ]
    }
}

/// `OwnerReference`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OwnerReference {
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// `name`.
    pub name: String,
    /// `uid`.
    pub uid: String,
    /// `controller`.
    pub controller: Option<bool>,
    /// `blockOwnerDeletion`.
    pub block_owner_deletion: Option<bool>,
}

/// The `ObjectMeta` fields the API server validates.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Metadata {
    /// `name`.
    pub name: String,
    /// `generateName`.
    pub generate_name: String,
    /// `namespace`.
    pub namespace: String,
    /// `generation`.
    pub generation: i64,
    /// `labels`, in document order.
    pub labels: Vec<(String, String)>,
    /// `annotations`, in document order.
    pub annotations: Vec<(String, String)>,
    /// `ownerReferences`.
    pub owner_references: Vec<OwnerReference>,
    /// `finalizers`.
    pub finalizers: Vec<String>,
}

/// An HPA in the internal shape, ready for validation and checks.
#[derive(Clone, Debug, PartialEq)]
pub struct Hpa {
    /// The version it was written in.
    pub version: HpaVersion,
    /// Validated metadata.
    pub metadata: Metadata,
    /// `spec.scaleTargetRef`.
    pub scale_target_ref: ObjectReference,
    /// `spec.minReplicas` (defaulted to 1).
    pub min_replicas: Option<i32>,
    /// `spec.maxReplicas`, `None` when absent or undecodable (the server sees 0).
    pub max_replicas: Option<i32>,
    /// `spec.metrics` (defaulted to CPU at 80 % when empty).
    pub metrics: Vec<MetricSpec>,
    /// Whether `metrics` is the API server's default, not written by the user.
    pub metrics_defaulted: bool,
    /// `spec.behavior` with the API server's defaults merged in.
    pub behavior: Option<Behavior>,
    /// Strict decoding failures (`autoscaling/v2` and `v1` only).
    pub decode_errors: Vec<DecodeError>,
    /// `false` when the server would reject the body before validating it.
    pub decodable: bool,
    /// Internal path prefixes that were written elsewhere (longest first).
    aliases: Vec<(FieldPath, FieldPath)>,
}

impl Hpa {
    /// Decodes an HPA object of any supported `autoscaling` version; `None` for other
    /// objects. `old` is the previous version on update (for the server's ratchets).
    pub fn decode(object: &Object, settings: &Settings, old: Option<&Hpa>) -> Option<Self> {
        if !object.is_hpa() || !object.value.is_object() {
            return None;
        }
        let version = HpaVersion::from_api_version(&object.key.api_version)?;
        let strict = matches!(version, HpaVersion::V1 | HpaVersion::V2);
        let mut d = Decoder::new(strict);
        let mut hpa = match version {
            HpaVersion::V2 | HpaVersion::V2beta2 => decode_v2(&mut d, &object.value, settings),
            HpaVersion::V1 => decode_v1(&mut d, &object.value),
            HpaVersion::V2beta1 | HpaVersion::V2alpha1 => decode_v2beta1(&mut d, &object.value),
        };
        hpa.version = version;
        hpa.metadata
            .annotations
            .retain(|(key, _)| !ROUND_TRIP_ANNOTATIONS.contains(&key.as_str()));
        hpa.decodable = !d.has_fatal_errors();
        hpa.decode_errors = d.errors;
        hpa.drop_disabled_fields(settings, old);
        hpa.aliases
            .sort_by_key(|(internal, _)| std::cmp::Reverse(internal.segments().len()));
        Some(hpa)
    }

    /// The `Resource` and `ContainerResource` metrics the controller evaluates.
    pub fn resource_metrics(&self) -> Vec<ResourceMetricRef<'_>> {
        self.metrics
            .iter()
            .enumerate()
            .filter_map(|(index, spec)| {
                let (metric, is_container) = match spec.source()? {
                    MetricSource::Resource(m) => (m, false),
                    MetricSource::ContainerResource(m) => (m, true),
                    _ => return None,
                };
                Some(ResourceMetricRef {
                    index,
                    metric,
                    is_container,
                    defaulted: self.metrics_defaulted,
                })
            })
            .collect()
    }

    /// Each metric's member that the API server validates (rule T3), with its
    /// path `spec.metrics[i].<member>`.
    pub fn validated_sources(&self) -> Vec<(FieldPath, MetricSource<'_>)> {
        self.metrics
            .iter()
            .enumerate()
            .filter_map(|(i, metric)| {
                let source = metric.validated_source()?;
                let path = FieldPath::fields("spec.metrics")
                    .index(i)
                    .field(source.member());
                Some((path, source))
            })
            .collect()
    }

    /// Whether scale-up or scale-down has a `tolerance`.
    pub fn has_tolerance(&self) -> bool {
        self.behavior.as_ref().is_some_and(|b| {
            b.directions()
                .iter()
                .any(|(_, rules)| rules.is_some_and(|r| r.tolerance.is_some()))
        })
    }

    /// Where an internal path was written in the source document.
    pub fn source_path(&self, path: &FieldPath) -> FieldPath {
        self.aliases
            .iter()
            .find_map(|(internal, source)| {
                path.strip_prefix(internal).map(|rest| source.join(&rest))
            })
            .unwrap_or_else(|| path.clone())
    }

    /// The object `spec.scaleTargetRef` points to, in the HPA's namespace.
    pub fn target(&self, namespace: &str) -> ObjectRef {
        ObjectRef {
            group: group_of(&self.scale_target_ref.api_version).to_owned(),
            kind: self.scale_target_ref.kind.clone(),
            namespace: namespace.to_owned(),
            name: self.scale_target_ref.name.clone(),
        }
    }

    /// What the strategy removes before validation (apiserver-hpa-rules.md §0 step 5):
    /// `tolerance` while `HPAConfigurableTolerance` is off (kept on update when the
    /// old object had one), `containerResource` while `HPAContainerMetrics` is off.
    fn drop_disabled_fields(&mut self, settings: &Settings, old: Option<&Hpa>) {
        let gates = settings.feature_gates;
        let old_had_tolerance = old.is_some_and(Hpa::has_tolerance);
        if let Some(behavior) = &mut self.behavior
            && !gates.configurable_tolerance
            && !old_had_tolerance
        {
            for rules in [&mut behavior.scale_up, &mut behavior.scale_down]
                .into_iter()
                .flatten()
            {
                rules.tolerance = None;
            }
        }
        if !gates.container_metrics {
            for metric in &mut self.metrics {
                metric.container_resource = None;
            }
        }
    }
}

fn empty_hpa() -> Hpa {
    Hpa {
        version: HpaVersion::V2,
        metadata: Metadata::default(),
        scale_target_ref: ObjectReference::default(),
        min_replicas: None,
        max_replicas: None,
        metrics: Vec::new(),
        metrics_defaulted: false,
        behavior: None,
        decode_errors: Vec::new(),
        decodable: true,
        aliases: Vec::new(),
    }
}

// ---------------------------------------------------------------------------
// Go struct descriptions (field lists for strict decoding, names for messages)

macro_rules! go_struct {
    ($id:ident, $name:literal, $qualified:literal, [$($field:literal),* $(,)?]) => {
        static $id: GoStruct = GoStruct { name: $name, qualified: $qualified, fields: &[$($field),*] };
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

// ---------------------------------------------------------------------------
// Shared pieces

fn decode_metadata(d: &mut Decoder, root: &Record<'_>) -> Metadata {
    let meta = root.record(d, "metadata", &OBJECT_META);
    for name in ["selfLink", "uid", "resourceVersion"] {
        meta.string(d, name);
    }
    for name in ["creationTimestamp", "deletionTimestamp"] {
        meta.string_as(d, name, "v1.Time");
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
        entry.string_as(d, "time", "v1.Time");
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

fn decode_reference(
    d: &mut Decoder,
    parent: &Record<'_>,
    name: &str,
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
fn decode_selector(d: &mut Decoder, parent: &Record<'_>, name: &str) {
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

fn cpu_utilization(percent: i32) -> MetricSpec {
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
fn apply_spec_defaults(hpa: &mut Hpa) {
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
    let mut rules = default_scaling_rules(direction);
    if let Some(user) = user {
        if user.stabilization_window_seconds.is_some() {
            rules.stabilization_window_seconds = user.stabilization_window_seconds;
        }
        if user.select_policy.is_some() {
            rules.select_policy = user.select_policy;
        }
        if user.policies.is_some() {
            rules.policies = user.policies;
        }
        rules.tolerance = user.tolerance;
    }
    rules
}

// ---------------------------------------------------------------------------
// autoscaling/v2 (and v2beta2, which has the same shape)

fn decode_v2(d: &mut Decoder, value: &Value, settings: &Settings) -> Hpa {
    let root = d.root(value, &V2_HPA);
    root.any("status");
    let mut hpa = empty_hpa();
    hpa.metadata = decode_metadata(d, &root);
    let spec = root.record(d, "spec", &V2_SPEC);
    hpa.scale_target_ref = decode_reference(d, &spec, "scaleTargetRef", &V2_REFERENCE);
    hpa.min_replicas = spec.int32(d, "minReplicas");
    hpa.max_replicas = spec.int32(d, "maxReplicas");
    hpa.metrics = spec
        .records(d, "metrics", &METRIC_SPEC, "[]v2.MetricSpec")
        .unwrap_or_default()
        .iter()
        .map(|metric| decode_metric(d, metric))
        .collect();
    let behavior = spec.record(d, "behavior", &BEHAVIOR);
    if behavior.is_present() {
        let rules_struct = if settings.kube_version.at_least(33) {
            &SCALING_RULES
        } else {
            &SCALING_RULES_PRE_1_33
        };
        let mut direction = |name| {
            let rules = behavior.record(d, name, rules_struct);
            rules
                .is_present()
                .then(|| decode_scaling_rules(d, &rules, settings.kube_version.at_least(33)))
        };
        let scale_up = direction("scaleUp");
        let scale_down = direction("scaleDown");
        hpa.behavior = Some(Behavior {
            scale_up: Some(merge_with_defaults("scaleUp", scale_up)),
            scale_down: Some(merge_with_defaults("scaleDown", scale_down)),
        });
    }
    apply_spec_defaults(&mut hpa);
    hpa
}

fn decode_scaling_rules(d: &mut Decoder, rules: &Record<'_>, has_tolerance: bool) -> ScalingRules {
    let policies = rules
        .records(d, "policies", &SCALING_POLICY, "[]v2.HPAScalingPolicy")
        .map(|policies| {
            policies
                .iter()
                .map(|p| ScalingPolicy {
                    type_: p
                        .string_as(d, "type", "v2.HPAScalingPolicyType")
                        .unwrap_or_default(),
                    value: p.int32(d, "value").unwrap_or_default(),
                    period_seconds: p.int32(d, "periodSeconds").unwrap_or_default(),
                })
                .collect()
        });
    ScalingRules {
        stabilization_window_seconds: rules.int32(d, "stabilizationWindowSeconds"),
        select_policy: rules.string_as(d, "selectPolicy", "v2.ScalingPolicySelect"),
        policies,
        tolerance: if has_tolerance {
            rules.quantity(d, "tolerance")
        } else {
            None
        },
    }
}

fn decode_metric(d: &mut Decoder, metric: &Record<'_>) -> MetricSpec {
    let target = |d: &mut Decoder, source: &Record<'_>| {
        let target = source.record(d, "target", &METRIC_TARGET);
        MetricTarget {
            type_: target
                .string_as(d, "type", "v2.MetricTargetType")
                .unwrap_or_default(),
            value: target.quantity(d, "value"),
            average_value: target.quantity(d, "averageValue"),
            average_utilization: target.int32(d, "averageUtilization"),
        }
    };
    let identifier = |d: &mut Decoder, source: &Record<'_>| {
        let id = source.record(d, "metric", &METRIC_IDENTIFIER);
        decode_selector(d, &id, "selector");
        MetricIdentifier {
            name: id.string(d, "name").unwrap_or_default(),
        }
    };
    let named = |d: &mut Decoder, name, go| {
        let source = metric.record(d, name, go);
        source.is_present().then(|| NamedMetric {
            metric: identifier(d, &source),
            target: target(d, &source),
        })
    };
    let resource = |d: &mut Decoder, name, go| {
        let source = metric.record(d, name, go);
        source.is_present().then(|| ResourceMetric {
            name: source
                .string_as(d, "name", "v1.ResourceName")
                .unwrap_or_default(),
            container: if name == "containerResource" {
                source.string(d, "container").unwrap_or_default()
            } else {
                String::new()
            },
            target: target(d, &source),
        })
    };
    let object = metric.record(d, "object", &OBJECT_SOURCE);
    let object = object.is_present().then(|| ObjectMetric {
        described_object: decode_reference(d, &object, "describedObject", &V2_REFERENCE),
        metric: identifier(d, &object),
        target: target(d, &object),
    });
    MetricSpec {
        type_: metric
            .string_as(d, "type", "v2.MetricSourceType")
            .unwrap_or_default(),
        object,
        pods: named(d, "pods", &PODS_SOURCE),
        resource: resource(d, "resource", &RESOURCE_SOURCE),
        container_resource: resource(d, "containerResource", &CONTAINER_RESOURCE_SOURCE),
        external: named(d, "external", &EXTERNAL_SOURCE),
    }
}

// ---------------------------------------------------------------------------
// The v2beta1 metric shape (v2beta1 HPAs and the v1 metrics annotation)

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

fn decode_v2beta1(d: &mut Decoder, value: &Value) -> Hpa {
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

// ---------------------------------------------------------------------------
// autoscaling/v1 (§2.3)

fn decode_v1(d: &mut Decoder, value: &Value) -> Hpa {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::Origin;
    use serde_json::json;

    fn decode(value: Value) -> Hpa {
        let object = Object::new(value, Origin(0), "default").unwrap();
        Hpa::decode(&object, &Settings::default(), None).unwrap()
    }

    #[test]
    fn applies_v2_defaults() {
        // D1, D2, D4, D5: behavior present but empty gets both default directions.
        let hpa = decode(json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"maxReplicas": 3, "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}
        }));
        assert_eq!(hpa.min_replicas, Some(1));
        assert!(hpa.metrics_defaulted);
        assert_eq!(hpa.metrics, [cpu_utilization(80)]);
        let behavior = hpa.behavior.unwrap();
        assert_eq!(behavior.scale_up.unwrap(), default_scaling_rules("scaleUp"));
        let down = behavior.scale_down.unwrap();
        assert_eq!(down.stabilization_window_seconds, Some(60));
        assert_eq!(down.policies, default_scaling_rules("scaleDown").policies);
    }

    #[test]
    fn keeps_an_explicit_empty_policy_list() {
        let hpa = decode(json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "spec": {"behavior": {"scaleUp": {"policies": []}}}
        }));
        assert_eq!(
            hpa.behavior.unwrap().scale_up.unwrap().policies,
            Some(vec![])
        );
    }

    #[test]
    fn converts_v1_with_annotations_and_aliases() {
        let hpa = decode(json!({
            "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "annotations": {
                V1_METRICS_ANNOTATION: r#"[{"type":"Resource","resource":{"name":"memory","targetAverageUtilization":60}}]"#,
                V1_BEHAVIOR_ANNOTATION: r#"{"ScaleUp":{"StabilizationWindowSeconds":30}}"#,
            }},
            "spec": {"maxReplicas": 3, "targetCPUUtilizationPercentage": 0}
        }));
        assert_eq!(hpa.metrics.len(), 2);
        assert_eq!(hpa.metrics[0].resource.as_ref().unwrap().name, "memory");
        assert_eq!(hpa.metrics[1], cpu_utilization(0));
        let cpu = FieldPath::fields("spec.metrics")
            .index(1)
            .join(&FieldPath::fields("resource.target.averageUtilization"));
        assert_eq!(
            hpa.source_path(&cpu).pointer(),
            "/spec/targetCPUUtilizationPercentage/resource/target/averageUtilization"
        );
        // The annotation's behavior is not defaulted: no policies (rule B4 fires).
        let up = hpa.behavior.unwrap().scale_up.unwrap();
        assert_eq!(up.stabilization_window_seconds, Some(30));
        assert_eq!(up.policies, None);
    }

    #[test]
    fn maps_v2beta1_fields_back_to_their_source() {
        let hpa = decode(json!({
            "apiVersion": "autoscaling/v2beta1", "kind": "HorizontalPodAutoscaler",
            "spec": {"maxReplicas": 3, "metrics": [
                {"type": "Resource", "resource": {"name": "cpu", "targetAverageUtilization": 70}},
                {"type": "Object", "object": {"target": {"kind": "Service", "name": "s"}, "metricName": "rps", "targetValue": "10"}},
            ]}
        }));
        assert_eq!(
            hpa.metrics[0]
                .resource
                .as_ref()
                .unwrap()
                .target
                .average_utilization,
            Some(70)
        );
        let path = FieldPath::fields("spec.metrics")
            .index(0)
            .join(&FieldPath::fields("resource.target.averageUtilization"));
        assert_eq!(
            hpa.source_path(&path).to_string(),
            "spec.metrics[0].resource.targetAverageUtilization"
        );
        let object = hpa.metrics[1].object.as_ref().unwrap();
        assert_eq!(object.described_object.kind, "Service");
        assert_eq!(object.target.type_, "Value");
        let path = FieldPath::fields("spec.metrics")
            .index(1)
            .join(&FieldPath::fields("object.describedObject.name"));
        assert_eq!(
            hpa.source_path(&path).to_string(),
            "spec.metrics[1].object.target.name"
        );
    }

    #[test]
    fn drops_tolerance_while_the_gate_is_off() {
        let value = json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "spec": {"behavior": {"scaleUp": {"tolerance": "0.05"}}}
        });
        let object = Object::new(value, Origin(0), "default").unwrap();
        let on = Hpa::decode(&object, &Settings::default(), None).unwrap();
        assert!(on.behavior.unwrap().scale_up.unwrap().tolerance.is_some());
        let mut settings = Settings::default();
        settings.feature_gates.configurable_tolerance = false;
        let off = Hpa::decode(&object, &settings, None).unwrap();
        assert!(
            off.behavior
                .as_ref()
                .unwrap()
                .scale_up
                .as_ref()
                .unwrap()
                .tolerance
                .is_none()
        );
        // On update the field is kept when the old object already had one.
        let kept = Hpa::decode(
            &object,
            &settings,
            Some(&Hpa::decode(&object, &Settings::default(), None).unwrap()),
        )
        .unwrap();
        assert!(kept.behavior.unwrap().scale_up.unwrap().tolerance.is_some());
    }

    #[test]
    fn type_errors_make_the_object_undecodable() {
        let hpa = decode(json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "spec": {"maxReplicas": "5", "minReplica": 1}
        }));
        assert!(!hpa.decodable);
        assert_eq!(hpa.decode_errors.len(), 2);
        let typo_only = decode(json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "spec": {"maxReplicas": 5, "minReplica": 1}
        }));
        assert!(typo_only.decodable);
    }
}
