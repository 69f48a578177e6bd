//! The HorizontalPodAutoscaler as the API server validates it: the internal
//! (= `autoscaling/v2`) shape, after decoding, conversion and defaulting
//! (apiserver-hpa-rules.md §0 and §2).
//!
//! Every supported version is decoded into this one shape, so rules never care
//! which version was written. The versions the cluster's release serves are
//! decoded strictly, as the server decodes them (the errors are parity
//! findings): `autoscaling/v2` and `v1`, `v2beta2` until 1.25 and `v2beta1`
//! until 1.24; the others leniently, for the rules that are not the server's.
//! Paths of converted fields are mapped back to where they were written via
//! [`Hpa::source_path`].

use crate::cluster::{Cluster, KubeVersion};
use crate::model::decode::{DecodeError, Decoder, StringMap, any_fatal};
use crate::model::quantity::Quantity;
use crate::object::{self, Object, ObjectKey, ObjectRef, group_of};
use crate::path::{FieldPath, Json};

mod legacy;
mod schema;
mod status;
mod upgrade;
mod v2;

pub use upgrade::{v2beta1_member_to_v2, v2beta1_status_member_to_v2};

pub use v2::default_scaling_rules;

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
    /// Any other `autoscaling/…` version (a typo such as `autoscaling/v3`):
    /// never served, read as `autoscaling/v2`, what it was most likely
    /// meant to be.
    Unknown,
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
            other => other.starts_with("autoscaling/").then_some(Self::Unknown),
        }
    }

    /// The Kubernetes minor release that deprecated it.
    pub fn deprecated_in(self) -> Option<u32> {
        match self {
            Self::V2beta1 => Some(22),
            Self::V2beta2 => Some(23),
            Self::V1 | Self::V2 | Self::V2alpha1 | Self::Unknown => None,
        }
    }

    /// The last Kubernetes minor release that serves it; `None` while served,
    /// or when it never was (apiserver-hpa-rules.md §5).
    pub fn last_served(self) -> Option<u32> {
        match self {
            Self::V2alpha1 => Some(7),
            Self::V2beta1 => Some(24),
            Self::V2beta2 => Some(25),
            Self::V1 | Self::V2 | Self::Unknown => None,
        }
    }

    /// Whether a `kube` API server serves it: then it decodes, converts,
    /// defaults and validates documents of this version; otherwise it rejects
    /// them whole (`deprecated-api-version` reports that).
    pub fn is_served(self, kube: KubeVersion) -> bool {
        self != Self::Unknown && self.last_served().is_none_or(|last| kube.minor() <= last)
    }

    /// Its Go package, as the server's decoding errors name types (`v2beta2.MetricTarget`).
    fn go_package(self) -> &'static str {
        match self {
            Self::V1 => "v1",
            Self::V2 | Self::Unknown => "v2",
            Self::V2beta1 => "v2beta1",
            Self::V2beta2 => "v2beta2",
            Self::V2alpha1 => "v2alpha1",
        }
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

/// Where a metric's member is, `spec.metrics[index].<member>`: a path is
/// made of it when a finding needs one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourcePath {
    /// The metric's index in `spec.metrics`.
    pub index: usize,
    /// The member's JSON name.
    pub member: &'static str,
}

impl SourcePath {
    /// `spec.metrics[index].<member>`.
    pub fn path(&self) -> FieldPath {
        FieldPath::fields("spec.metrics")
            .index(self.index)
            .field(self.member)
    }
}

impl MetricSpec {
    /// The populated members, in the order the API server looks at them
    /// (object, external, pods, resource, containerResource).
    pub fn populated(&self) -> impl Iterator<Item = MetricSource<'_>> + Clone {
        [
            self.object.as_ref().map(MetricSource::Object),
            self.external.as_ref().map(MetricSource::External),
            self.pods.as_ref().map(MetricSource::Pods),
            self.resource.as_ref().map(MetricSource::Resource),
            self.container_resource
                .as_ref()
                .map(MetricSource::ContainerResource),
        ]
        .into_iter()
        .flatten()
    }

    /// The member the API server validates: the first populated one (rule T3).
    pub fn validated_source(&self) -> Option<MetricSource<'_>> {
        self.populated().next()
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

    /// The rules in `autoscaling/v2`'s JSON, with the fields that are set.
    pub fn to_json(&self) -> serde_json::Value {
        let mut out = serde_json::Map::new();
        if let Some(window) = self.stabilization_window_seconds {
            out.insert("stabilizationWindowSeconds".into(), window.into());
        }
        if let Some(select) = &self.select_policy {
            out.insert("selectPolicy".into(), select.as_str().into());
        }
        if let Some(policies) = &self.policies {
            let policies = policies
                .iter()
                .map(|p| {
                    serde_json::json!({"type": p.type_, "value": p.value, "periodSeconds": p.period_seconds})
                })
                .collect();
            out.insert("policies".into(), serde_json::Value::Array(policies));
        }
        if let Some(tolerance) = &self.tolerance {
            out.insert("tolerance".into(), tolerance.to_string().into());
        }
        serde_json::Value::Object(out)
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
    /// The behavior in `autoscaling/v2`'s JSON, with the directions that are set.
    pub fn to_json(&self) -> serde_json::Value {
        let directions = self
            .directions()
            .into_iter()
            .filter_map(|(name, rules)| Some((name.to_owned(), rules?.to_json())));
        serde_json::Value::Object(directions.collect())
    }

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

/// What a manifest sets of `behavior` (in `spec.behavior`, or in the behavior
/// annotation of `v1` and `v2beta1`, read as Go reads it): before the API
/// server merges in its defaults and drops the fields whose gate is off.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WrittenBehavior {
    /// `scaleUp`, then `scaleDown`.
    directions: [WrittenRules; 2],
}

#[derive(Clone, Debug, Default, PartialEq)]
struct WrittenRules {
    stabilization_window_seconds: bool,
    select_policy: bool,
    policies: bool,
    tolerance: Option<Quantity>,
}

impl WrittenRules {
    fn of(rules: Option<&ScalingRules>) -> Self {
        rules.map_or_else(Self::default, |rules| Self {
            stabilization_window_seconds: rules.stabilization_window_seconds.is_some(),
            select_policy: rules.select_policy.is_some(),
            policies: rules.policies.is_some(),
            tolerance: rules.tolerance.clone(),
        })
    }
}

impl WrittenBehavior {
    /// What `scale_up` and `scale_down`, as decoded, set.
    pub(super) fn of(scale_up: Option<&ScalingRules>, scale_down: Option<&ScalingRules>) -> Self {
        Self {
            directions: [WrittenRules::of(scale_up), WrittenRules::of(scale_down)],
        }
    }

    fn direction(&self, direction: &str) -> &WrittenRules {
        &self.directions[usize::from(direction != "scaleUp")]
    }

    /// Whether the manifest sets `field` (its JSON name) of `direction`
    /// (`scaleUp` or `scaleDown`).
    pub fn sets(&self, direction: &str, field: &str) -> bool {
        let rules = self.direction(direction);
        match field {
            "stabilizationWindowSeconds" => rules.stabilization_window_seconds,
            "selectPolicy" => rules.select_policy,
            "policies" => rules.policies,
            "tolerance" => rules.tolerance.is_some(),
            _ => false,
        }
    }

    /// The tolerance the manifest sets for `direction`, whether the API
    /// server keeps it or not.
    pub fn tolerance(&self, direction: &str) -> Option<&Quantity> {
        self.direction(direction).tolerance.as_ref()
    }
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
    pub labels: StringMap,
    /// `annotations`, in document order.
    pub annotations: StringMap,
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
    /// What the manifest itself sets of `behavior`.
    pub written: WrittenBehavior,
    /// Whether the cluster's release serves the version: then the API server
    /// decodes it strictly and validates it.
    pub served: bool,
    /// Strict decoding failures (of served versions only).
    pub decode_errors: Vec<DecodeError>,
    /// `false` when the server would reject the body before validating it.
    pub decodable: bool,
    /// Internal path prefixes that were written elsewhere (longest first).
    aliases: Vec<(FieldPath, FieldPath)>,
}

impl Hpa {
    /// Decodes an HPA object of any supported `autoscaling` version; `None` for other
    /// objects. `old` is the previous version on update (for the server's ratchets).
    pub fn decode(object: &Object, cluster: &Cluster, old: Option<&Hpa>) -> Option<Self> {
        Self::read(&object.key, &object.value, cluster, old)
    }

    /// [`Hpa::decode`] of the object `key` identifies, read as a serde_json
    /// value or a tree.
    pub fn read<V: Json>(
        key: &ObjectKey,
        value: &V,
        cluster: &Cluster,
        old: Option<&Hpa>,
    ) -> Option<Self> {
        if !object::HPA.is(key.group(), &key.kind) || !value.is_mapping() {
            return None;
        }
        let version = HpaVersion::from_api_version(&key.api_version)?;
        let served = version.is_served(cluster.kube_version);
        let mut d = Decoder::new(served, version.go_package());
        let mut hpa = match version {
            HpaVersion::V2 | HpaVersion::V2beta2 | HpaVersion::Unknown => {
                v2::decode_v2(&mut d, value, cluster)
            }
            HpaVersion::V1 => legacy::decode_v1(&mut d, value, cluster),
            HpaVersion::V2beta1 | HpaVersion::V2alpha1 => {
                legacy::decode_v2beta1(&mut d, value, cluster)
            }
        };
        hpa.version = version;
        hpa.served = served;
        hpa.metadata
            .annotations
            .retain(|key| !ROUND_TRIP_ANNOTATIONS.contains(&key));
        hpa.decodable = !d.has_fatal_errors();
        hpa.decode_errors = d.errors;
        // A `minReplicas` the server cannot decode is not the default 1: no
        // rule may read a floor the author did not write.
        if !hpa.decode_errors.is_empty() {
            let min_path = FieldPath::fields("spec.minReplicas");
            if hpa.decode_errors.iter().any(|e| e.path == min_path) {
                hpa.min_replicas = None;
            }
        }
        hpa.drop_disabled_fields(cluster, old);
        hpa.aliases
            .sort_by_key(|(internal, _)| std::cmp::Reverse(internal.segments().len()));
        Some(hpa)
    }

    /// Forgets what decoding found in `status`, for an object read from a
    /// cluster: its server wrote that status, and a newer release than the
    /// one linted for has fields there that this one does not know.
    pub fn forget_status_errors(&mut self) {
        let status = FieldPath::fields("status");
        self.decode_errors.retain(|e| !e.path.starts_with(&status));
        self.decodable = !any_fatal(&self.decode_errors);
    }

    /// The `Resource` and `ContainerResource` metrics the controller evaluates.
    pub fn resource_metrics(&self) -> impl Iterator<Item = ResourceMetricRef<'_>> {
        self.metrics.iter().enumerate().filter_map(|(index, spec)| {
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
    }

    /// Each metric's member that the API server validates (rule T3), with
    /// where it is.
    pub fn validated_sources(&self) -> impl Iterator<Item = (SourcePath, MetricSource<'_>)> {
        self.metrics
            .iter()
            .enumerate()
            .filter_map(|(index, metric)| {
                let source = metric.validated_source()?;
                let member = source.member();
                Some((SourcePath { index, member }, source))
            })
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
    fn drop_disabled_fields(&mut self, cluster: &Cluster, old: Option<&Hpa>) {
        let gates = cluster.feature_gates;
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
        written: WrittenBehavior::default(),
        served: true,
        decode_errors: Vec::new(),
        decodable: true,
        aliases: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::v2::cpu_utilization;
    use super::*;
    use crate::cluster::KubeVersion;
    use crate::object::Origin;
    use serde_json::json;

    fn decode(value: Value) -> Hpa {
        let object = Object::new(value, Origin(0), "default").unwrap();
        Hpa::decode(&object, &Cluster::default(), None).unwrap()
    }

    /// What a manifest writes of `behavior` is kept apart from the defaults
    /// merged in: a null is not written, an empty list of policies is.
    #[test]
    fn behavior_records_what_is_written() {
        let hpa = decode(json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"maxReplicas": 3, "behavior": {"scaleDown": {
                "stabilizationWindowSeconds": null, "policies": [], "selectPolicy": "Min"}}},
        }));
        let written = |direction, field| hpa.written.sets(direction, field);
        assert!(written("scaleDown", "policies") && written("scaleDown", "selectPolicy"));
        assert!(!written("scaleDown", "stabilizationWindowSeconds"));
        assert!(!written("scaleUp", "selectPolicy"));
        let behavior = hpa.behavior.as_ref().unwrap();
        let up = behavior.scale_up.as_ref().unwrap();
        assert_eq!(up.select_policy.as_deref(), Some("Max"), "defaulted");
        let v1 = decode(json!({
            "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "annotations": {V1_BEHAVIOR_ANNOTATION:
                r#"{"scaleup":{"Tolerance":"0.05","selectPolicy":"Min","SELECTPOLICY":null}}"#}},
            "spec": {"maxReplicas": 3},
        }));
        assert_eq!(
            v1.written.tolerance("scaleUp"),
            Quantity::parse("0.05").ok().as_ref()
        );
        assert!(
            !v1.written.sets("scaleUp", "selectPolicy"),
            "the last key wins"
        );
        // Go folds `ſ` as `s` and the Kelvin sign as `k`, and no other
        // rune as an ASCII letter.
        let folded = decode(json!({
            "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "annotations": {V1_BEHAVIOR_ANNOTATION:
                "{\"ſcaleDown\":{\"ſelectPolicy\":\"Min\",\"policies\":[{\"type\":\"Pods\",\"value\":1,\"periodSeconds\":60}]},\
                 \"scaleUp\":{\"ſtabilizationWindowſeconds\":30,\"selectPolicy\":\"Disabled\",\"sélectPolicy\":\"Max\"}}"}},
            "spec": {"maxReplicas": 3},
        }));
        let behavior = folded.behavior.as_ref().unwrap();
        let down = behavior.scale_down.as_ref().unwrap();
        assert_eq!(down.select_policy.as_deref(), Some("Min"));
        let up = behavior.scale_up.as_ref().unwrap();
        assert_eq!(up.stabilization_window_seconds, Some(30));
        assert_eq!(up.select_policy.as_deref(), Some("Disabled"));
    }

    /// The validated member of each metric is the first populated one, and
    /// its path is the one the server names.
    #[test]
    fn validated_sources_are_the_first_populated_members() {
        let hpa = decode(json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"maxReplicas": 3, "metrics": [
                {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}},
                {"type": "Pods"},
                {"type": "Resource",
                 "pods": {"metric": {"name": "rps"}, "target": {"type": "AverageValue", "averageValue": "1"}},
                 "containerResource": {"name": "cpu", "container": "app", "target": {"type": "Utilization", "averageUtilization": 50}},
                 "external": {"metric": {"name": "queue"}, "target": {"type": "Value", "value": "1"}}}
            ]}
        }));
        let validated: Vec<String> = hpa
            .validated_sources()
            .map(|(at, source)| format!("{} {}", at.path(), source.member()))
            .collect();
        assert_eq!(
            validated,
            [
                "spec.metrics[0].resource resource",
                "spec.metrics[2].external external"
            ]
        );
        for metric in &hpa.metrics {
            assert_eq!(
                metric.validated_source().map(|s| s.member()),
                metric.populated().next().map(|s| s.member())
            );
        }
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

    fn decode_at(minor: u32, value: Value) -> Hpa {
        let object = Object::new(value, Origin(0), "default").unwrap();
        Hpa::decode(&object, &Cluster::new(KubeVersion::new(minor)), None).unwrap()
    }

    /// Conditions have an `observedGeneration` from 1.37; before, strict
    /// decoding refuses it. Live objects forget what `status` reports.
    #[test]
    fn decodes_the_status_of_each_release() {
        let hpa = json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3},
            "status": {"desiredReplicas": 1, "conditions": [
                {"type": "AbleToScale", "status": "True", "observedGeneration": 4}
            ]}
        });
        let paths = |hpa: &Hpa| -> Vec<String> {
            hpa.decode_errors
                .iter()
                .map(|e| e.path.to_string())
                .collect()
        };
        let mut at_36 = decode_at(36, hpa.clone());
        assert_eq!(paths(&at_36), ["status.conditions[0].observedGeneration"]);
        assert!(paths(&decode_at(37, hpa.clone())).is_empty());
        let mut wrong = hpa;
        wrong["status"]["desiredReplicas"] = json!("1");
        let mut wrong = decode_at(37, wrong);
        assert!(!wrong.decodable);
        wrong.forget_status_errors();
        assert!(wrong.decodable && wrong.decode_errors.is_empty());
        at_36.forget_status_errors();
        assert!(paths(&at_36).is_empty());
    }

    #[test]
    fn knows_which_releases_serve_each_version() {
        let served = |version: HpaVersion| -> Vec<u32> {
            (23..=37)
                .filter(|&minor| version.is_served(KubeVersion::new(minor)))
                .collect()
        };
        assert_eq!(served(HpaVersion::V2beta1), [23, 24]);
        assert_eq!(served(HpaVersion::V2beta2), [23, 24, 25]);
        assert_eq!(served(HpaVersion::V2alpha1), Vec::<u32>::new());
        assert_eq!(served(HpaVersion::V2).len(), 15);
        assert_eq!(served(HpaVersion::V1).len(), 15);
    }

    /// The betas decode as strictly as the server decoded them while it
    /// served them, with type names from their own Go packages; afterwards
    /// nothing is reported (the server rejects the version whole).
    #[test]
    fn decodes_betas_strictly_while_served() {
        let beta1 = json!({
            "apiVersion": "autoscaling/v2beta1", "kind": "HorizontalPodAutoscaler",
            "spec": {"maxReplicas": "3", "metrics": [
                {"type": "Resource", "resource": {"name": "cpu", "targetAverageUtilization": 70, "container": "app"}},
            ]}
        });
        let messages = |hpa: &Hpa| -> Vec<String> {
            hpa.decode_errors
                .iter()
                .map(|e| e.message.clone())
                .collect()
        };
        let served = decode_at(24, beta1.clone());
        assert_eq!(
            messages(&served),
            [
                "json: cannot unmarshal string into Go struct field HorizontalPodAutoscalerSpec.spec.maxReplicas of type int32",
                "unknown field \"spec.metrics[0].resource.container\"",
            ]
        );
        assert!(served.served && !served.decodable);
        let removed = decode_at(25, beta1);
        assert!(!removed.served && removed.decode_errors.is_empty());
        assert_eq!(
            removed.metrics[0]
                .resource
                .as_ref()
                .unwrap()
                .target
                .average_utilization,
            Some(70)
        );
        let beta2 = decode_at(
            25,
            json!({
                "apiVersion": "autoscaling/v2beta2", "kind": "HorizontalPodAutoscaler",
                "spec": {"maxReplicas": 3, "metrics": [{"type": "Resource", "resource": []}]}
            }),
        );
        assert_eq!(
            messages(&beta2),
            [
                "json: cannot unmarshal array into Go struct field MetricSpec.spec.metrics.resource of type v2beta2.ResourceMetricSource"
            ]
        );
    }

    /// `v2beta1` carried `behavior` in the annotation `v1` uses: moved to
    /// `spec.behavior` when it decodes and is not empty, not defaulted.
    #[test]
    fn reads_the_behavior_annotation_of_v2beta1() {
        let with = |behavior: &str| {
            decode_at(
                24,
                json!({
                    "apiVersion": "autoscaling/v2beta1", "kind": "HorizontalPodAutoscaler",
                    "metadata": {"annotations": {V1_BEHAVIOR_ANNOTATION: behavior}},
                    "spec": {"maxReplicas": 3}
                }),
            )
        };
        let hpa = with(r#"{"ScaleDown":{"StabilizationWindowSeconds":60}}"#);
        let down = hpa.behavior.as_ref().unwrap().scale_down.as_ref().unwrap();
        assert_eq!(down.stabilization_window_seconds, Some(60));
        assert_eq!(down.policies, None);
        assert!(hpa.metadata.annotations.is_empty());
        assert_eq!(
            hpa.source_path(&FieldPath::fields("spec.behavior.scaleDown"))
                .to_string(),
            format!("metadata.annotations[{V1_BEHAVIOR_ANNOTATION}].scaleDown")
        );
        for ignored in [
            "{}",
            r#"{"ScaleUp":null}"#,
            r#"{"ScaleUp":{"StabilizationWindowSeconds":"60"}}"#,
            "not json",
        ] {
            assert_eq!(with(ignored).behavior, None, "{ignored}");
        }
    }

    /// The round-trip annotations go to Go's `encoding/json` as written:
    /// keys name fields ignoring case (the last one counts), and an
    /// integer written as `5000.0` or `5e3` does not decode, so the server
    /// ignores the annotation.
    #[test]
    fn reads_the_v1_annotations_as_go_reads_json() {
        let with = |metrics: &str, behavior: &str| {
            decode(json!({
                "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
                "metadata": {"annotations": {
                    V1_METRICS_ANNOTATION: metrics,
                    V1_BEHAVIOR_ANNOTATION: behavior,
                }},
                "spec": {"maxReplicas": 3}
            }))
        };
        let pods = r#"[{"TYPE":"Pods","pods":{"MetricName":"q","targetaveragevalue":"1"}}]"#;
        let hpa = with(
            pods,
            r#"{"SCALEUP":{"stabilizationWindowSeconds":1,"StabilizationWindowSeconds":30}}"#,
        );
        assert_eq!(hpa.metrics.len(), 1);
        assert_eq!(hpa.metrics[0].pods.as_ref().unwrap().metric.name, "q");
        let up = hpa.behavior.as_ref().unwrap().scale_up.as_ref().unwrap();
        assert_eq!(up.stabilization_window_seconds, Some(30));
        for float in ["5000.0", "5e3"] {
            let behavior = format!(r#"{{"ScaleUp":{{"StabilizationWindowSeconds":{float}}}}}"#);
            assert_eq!(with("[]", &behavior).behavior, None, "{float}");
        }
        // Ignored: the metrics are the default ones, as with none.
        let cpu =
            r#"[{"type":"Resource","resource":{"name":"cpu","targetAverageUtilization":70.0}}]"#;
        assert_eq!(with(cpu, "{}").metrics, with("[]", "{}").metrics);
        let cpu = cpu.replace("70.0", "70");
        assert_ne!(with(&cpu, "{}").metrics, with("[]", "{}").metrics);
    }

    /// A metric source written the `v2beta1` way in `v2` is one decoding
    /// error, and is read the way `v2beta1` meant it.
    #[test]
    fn reads_a_v2beta1_source_in_v2_as_meant() {
        let hpa = decode(json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "spec": {"maxReplicas": 3, "metrics": [
                {"type": "Pods", "pods": {"metricName": "rps", "targetAverageValue": "10"}},
                {"type": "Resource", "resource": {"name": "cpu", "targetAverageUtilization": 70, "target": {}}},
            ]}
        }));
        let errors: Vec<(String, &str)> = hpa
            .decode_errors
            .iter()
            .map(|e| (e.path.to_string(), e.message.as_str()))
            .collect();
        assert_eq!(
            errors,
            [
                (
                    "spec.metrics[0].pods".to_owned(),
                    "unknown field \"spec.metrics[0].pods.metricName\", unknown field \"spec.metrics[0].pods.targetAverageValue\""
                ),
                (
                    "spec.metrics[1].resource.targetAverageUtilization".to_owned(),
                    "unknown field \"spec.metrics[1].resource.targetAverageUtilization\""
                ),
            ]
        );
        assert!(hpa.decodable);
        let pods = hpa.metrics[0].pods.as_ref().unwrap();
        assert_eq!(pods.metric.name, "rps");
        assert_eq!(pods.target.type_, "AverageValue");
        let path = FieldPath::fields("spec.metrics")
            .index(0)
            .join(&FieldPath::fields("pods.target.averageValue"));
        assert_eq!(
            hpa.source_path(&path).to_string(),
            "spec.metrics[0].pods.targetAverageValue"
        );
        // Beside a `v2` field, it is an unknown field like any other.
        assert_eq!(hpa.metrics[1].resource.as_ref().unwrap().target.type_, "");
    }

    #[test]
    fn drops_tolerance_while_the_gate_is_off() {
        let value = json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "spec": {"behavior": {"scaleUp": {"tolerance": "0.05"}}}
        });
        let object = Object::new(value, Origin(0), "default").unwrap();
        let on = Hpa::decode(&object, &Cluster::default(), None).unwrap();
        assert!(on.behavior.unwrap().scale_up.unwrap().tolerance.is_some());
        let mut cluster = Cluster::default();
        cluster.feature_gates.configurable_tolerance = false;
        let off = Hpa::decode(&object, &cluster, None).unwrap();
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
            &cluster,
            Some(&Hpa::decode(&object, &Cluster::default(), None).unwrap()),
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
