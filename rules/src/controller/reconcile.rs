//! One sync of one HPA (`reconcileAutoscaler`, C3) and the combination of its
//! metrics (`computeReplicasForMetrics`, C4): which branch runs, the raw
//! recommendation, normalization, the rescale and the status conditions.
//!
//! Not modelled: failures to read or update the scale subresource, and label
//! selectors (the pods given are the target's; no other HPA selects them).

use super::flags::{ControllerFlags, Millis};
use super::normalize::{
    EffectiveBehavior, Memory, Normalized, Recommendation, Recommendations, normalize_legacy,
    normalize_with_behavior, store_scale_event,
};
use super::replicas::{
    self, PodMetrics, PodState, Tolerances, average_of_total, average_value, resource_utilization,
};
use crate::cluster::{Cluster, FeatureGates};
use crate::model::hpa::{Hpa, MetricSource, MetricTarget};

/// What a resource metric aims for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResourceTarget {
    /// `averageUtilization`, percent of the request.
    Utilization(i32),
    /// `averageValue`, milli-units per pod.
    AverageValue(i64),
}

/// A metric as the controller dispatches it (C5.1); targets in milli-units.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MetricKind {
    /// `Resource` (no container) or `ContainerResource`.
    Resource {
        /// The resource, e.g. `cpu`.
        resource: String,
        /// The container of a `ContainerResource` metric.
        container: Option<String>,
        /// The target.
        target: ResourceTarget,
    },
    /// `Pods` with an `averageValue`.
    Pods {
        /// `metric.name`.
        name: String,
        /// `averageValue`.
        target: i64,
    },
    /// `Object` or `External` with a `value` target (C5.7).
    Value {
        /// `metric.name`.
        name: String,
        /// An `External` metric.
        external: bool,
        /// `value`.
        target: i64,
    },
    /// `Object` or `External` with an `averageValue` target (C5.8).
    AverageOfTotal {
        /// `metric.name`.
        name: String,
        /// An `External` metric.
        external: bool,
        /// `averageValue`.
        target: i64,
    },
    /// A metric the controller cannot evaluate; every sync fails it.
    Invalid {
        /// The `ScalingActive` reason.
        reason: &'static str,
        /// Why.
        message: String,
        /// Its name in the spec (the resource or `metric.name`; empty
        /// without a source), by which outputs show it.
        name: String,
        /// Its `type` in the spec.
        type_: String,
    },
}

impl MetricKind {
    /// The name a trace column uses for the metric: the resource, or `metric.name`.
    pub fn name(&self) -> &str {
        match self {
            MetricKind::Resource { resource, .. } => resource,
            MetricKind::Pods { name, .. }
            | MetricKind::Value { name, .. }
            | MetricKind::AverageOfTotal { name, .. } => name,
            MetricKind::Invalid { .. } => "",
        }
    }

    /// The name outputs show the metric by: [`MetricKind::name`], or an
    /// invalid metric's name in the spec (it reads no trace column).
    pub fn shown_name(&self) -> &str {
        match self {
            MetricKind::Invalid { name, .. } => name,
            _ => self.name(),
        }
    }

    /// Whether the metric is measured per pod (its values are samples of pods).
    pub fn is_per_pod(&self) -> bool {
        matches!(self, MetricKind::Resource { .. } | MetricKind::Pods { .. })
    }

    /// The `ScalingActive` reason when the metric fails.
    fn failure_reason(&self) -> &'static str {
        match self {
            MetricKind::Resource {
                container: None, ..
            } => "FailedGetResourceMetric",
            MetricKind::Resource {
                container: Some(_), ..
            } => "FailedGetContainerResourceMetric",
            MetricKind::Pods { .. } => "FailedGetPodsMetric",
            MetricKind::Value { external, .. } | MetricKind::AverageOfTotal { external, .. } => {
                if *external {
                    "FailedGetExternalMetric"
                } else {
                    "FailedGetObjectMetric"
                }
            }
            MetricKind::Invalid { reason, .. } => reason,
        }
    }

    fn from_spec(metric: &crate::model::hpa::MetricSpec) -> Self {
        let milli =
            |q: &Option<crate::model::quantity::Quantity>| q.as_ref().and_then(|q| q.milli_value());
        // The name is copied only for an invalid metric.
        let invalid = |reason, message: &str| MetricKind::Invalid {
            reason,
            message: message.to_owned(),
            name: metric
                .source()
                .map_or_else(String::new, |source| match source {
                    MetricSource::Resource(m) | MetricSource::ContainerResource(m) => {
                        m.name.clone()
                    }
                    MetricSource::Pods(m) | MetricSource::External(m) => m.metric.name.clone(),
                    MetricSource::Object(m) => m.metric.name.clone(),
                }),
            type_: metric.type_.clone(),
        };
        let Some(source) = metric.source() else {
            return invalid("InvalidMetricSourceType", "unknown metric source type");
        };
        let has = |target: &MetricTarget| (target.value.is_some(), target.average_value.is_some());
        match source {
            MetricSource::Resource(m) | MetricSource::ContainerResource(m) => {
                let container = matches!(source, MetricSource::ContainerResource(_))
                    .then(|| m.container.clone());
                let target = if m.target.average_value.is_some() {
                    milli(&m.target.average_value).map(ResourceTarget::AverageValue)
                } else {
                    m.target
                        .average_utilization
                        .map(ResourceTarget::Utilization)
                };
                match target {
                    Some(target) => MetricKind::Resource {
                        resource: m.name.clone(),
                        container,
                        target,
                    },
                    None => invalid(
                        if container.is_some() {
                            "FailedGetContainerResourceMetric"
                        } else {
                            "FailedGetResourceMetric"
                        },
                        "invalid resource metric source: neither an average utilization target nor an average value (usage) target was set",
                    ),
                }
            }
            MetricSource::Pods(m) => match milli(&m.target.average_value) {
                Some(target) => MetricKind::Pods {
                    name: m.metric.name.clone(),
                    target,
                },
                None => invalid(
                    "FailedGetPodsMetric",
                    "invalid pods metric source: no average value target",
                ),
            },
            MetricSource::Object(m) => {
                let (value, average) = has(&m.target);
                let metric_name = m.metric.name.clone();
                if m.target.type_ == "Value" && value {
                    milli(&m.target.value).map_or_else(
                        || invalid("FailedGetObjectMetric", "value target out of range"),
                        |target| MetricKind::Value {
                            name: metric_name,
                            external: false,
                            target,
                        },
                    )
                } else if m.target.type_ == "AverageValue" && average {
                    milli(&m.target.average_value).map_or_else(
                        || invalid("FailedGetObjectMetric", "average value target out of range"),
                        |target| MetricKind::AverageOfTotal {
                            name: metric_name,
                            external: false,
                            target,
                        },
                    )
                } else {
                    invalid(
                        "FailedGetObjectMetric",
                        "invalid object metric source: neither a value target nor an average value target was set",
                    )
                }
            }
            MetricSource::External(m) => {
                let metric_name = m.metric.name.clone();
                if let Some(target) = milli(&m.target.average_value) {
                    MetricKind::AverageOfTotal {
                        name: metric_name,
                        external: true,
                        target,
                    }
                } else if let Some(target) = milli(&m.target.value) {
                    MetricKind::Value {
                        name: metric_name,
                        external: true,
                        target,
                    }
                } else {
                    invalid(
                        "FailedGetExternalMetric",
                        "invalid external metric source: neither a value target nor an average value target was set",
                    )
                }
            }
        }
    }
}

/// An HPA's spec as the controller evaluates it, with the controller's flags.
#[derive(Clone, Debug)]
pub struct Autoscaler {
    /// `minReplicas` (1 when unset).
    pub min_replicas: i32,
    /// `maxReplicas`.
    pub max_replicas: i32,
    /// The metrics, in order.
    pub metrics: Vec<MetricKind>,
    /// `None`: the legacy path (C6).
    pub behavior: Option<EffectiveBehavior>,
    /// The tolerances (C5.2).
    pub tolerances: Tolerances,
    /// The controller's flags.
    pub flags: ControllerFlags,
    /// The cluster's feature gates: `HPAScaleToZero`, and
    /// `PodLevelResources`, which decides how a pod's request is found (C5.4).
    pub feature_gates: FeatureGates,
}

impl Autoscaler {
    /// The HPA as the controller sees it, under the flags and feature gates.
    pub fn new(hpa: &Hpa, flags: ControllerFlags, cluster: &Cluster) -> Self {
        let behavior = hpa
            .behavior
            .as_ref()
            .map(|b| EffectiveBehavior::new(b, &flags));
        let mut tolerances = Tolerances {
            down: flags.tolerance,
            up: flags.tolerance,
        };
        if let Some(behavior) = behavior
            .as_ref()
            .filter(|_| cluster.feature_gates.configurable_tolerance)
        {
            tolerances.up = behavior.scale_up.tolerance.unwrap_or(tolerances.up);
            tolerances.down = behavior.scale_down.tolerance.unwrap_or(tolerances.down);
        }
        Self {
            min_replicas: hpa.min_replicas.unwrap_or(1),
            max_replicas: hpa.max_replicas.unwrap_or(0),
            metrics: hpa.metrics.iter().map(MetricKind::from_spec).collect(),
            behavior,
            tolerances,
            flags,
            feature_gates: cluster.feature_gates,
        }
    }
}

/// One status condition: its status and reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Condition {
    /// `status: True`.
    pub status: bool,
    /// `reason`.
    pub reason: &'static str,
}

/// The HPA's status conditions (C3.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Conditions {
    /// `AbleToScale`.
    pub able_to_scale: Option<Condition>,
    /// `ScalingActive`.
    pub scaling_active: Option<Condition>,
    /// `ScalingLimited`.
    pub scaling_limited: Option<Condition>,
    /// `ScaledToZero` (only with `HPAScaleToZero`).
    pub scaled_to_zero: Option<Condition>,
}

impl Conditions {
    /// The conditions that are set, as `(type, condition)`, in a fixed order.
    pub fn list(&self) -> Vec<(&'static str, Condition)> {
        [
            ("AbleToScale", self.able_to_scale),
            ("ScalingActive", self.scaling_active),
            ("ScalingLimited", self.scaling_limited),
            ("ScaledToZero", self.scaled_to_zero),
        ]
        .into_iter()
        .filter_map(|(name, c)| Some((name, c?)))
        .collect()
    }
}

fn set(slot: &mut Option<Condition>, status: bool, reason: &'static str) {
    *slot = Some(Condition { status, reason });
}

/// What the controller carries from one sync of an HPA to the next.
#[derive(Clone, Debug, Default)]
pub struct State {
    /// Recommendations and scale events.
    pub memory: Memory,
    /// The status conditions.
    pub conditions: Conditions,
}

impl State {
    /// The state before the first sync of an HPA whose target has had
    /// `replicas` since long before, as the HPA left it: nothing remembered,
    /// and at zero replicas of an HPA that scales to zero (`HPAScaleToZero`,
    /// `minReplicas: 0` and an Object or External metric) the
    /// `ScaledToZero: True` it set when it scaled there, so that it scales up
    /// again when its metrics ask (C3.1 step 8). A workload scaled to zero by
    /// hand has no such condition and stays there.
    pub fn at_rest(autoscaler: &Autoscaler, replicas: i32) -> Self {
        let mut state = Self::default();
        if replicas == 0 && autoscaler.scales_to_zero() {
            set(&mut state.conditions.scaled_to_zero, true, "ScaledToZero");
        }
        state
    }
}

/// What one metric read at a sync.
#[derive(Clone, Copy, Debug)]
pub enum Reading<'a> {
    /// Per-pod samples (Resource, ContainerResource, Pods).
    PerPod(PodMetrics<'a>),
    /// The object's value, or the sum of the external series.
    Total(i64),
    /// The metrics API failed.
    Failed(&'a str),
}

/// Where the raw recommendation comes from.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// The metrics, one reading per metric of the HPA.
    Metrics(&'a [Reading<'a>]),
    /// A given recommendation (the KEP's examples are given that way).
    Recommendation(i32),
}

/// What a sync sees.
#[derive(Clone, Copy, Debug)]
pub struct Observation<'a> {
    /// The sync's time.
    pub now: Millis,
    /// `scale.spec.replicas`.
    pub spec_replicas: i32,
    /// `scale.status.replicas`.
    pub status_replicas: i32,
    /// The pods the target's selector lists.
    pub pods: &'a [PodState],
    /// The raw recommendation's source.
    pub source: Source<'a>,
}

/// One metric's result at a sync.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MetricResult {
    /// The proposal and what the status reports.
    Proposed {
        /// Replicas the metric proposes.
        replicas: i32,
        /// `current.averageUtilization`.
        utilization: Option<i32>,
        /// `current.averageValue` or `current.value`, milli-units.
        current: i64,
    },
    /// The metric failed.
    Failed {
        /// The `ScalingActive` reason it would set.
        reason: &'static str,
        /// Why.
        message: String,
    },
}

/// The outcome of a sync.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The recorded recommendation: the metrics' maximum (at least 0), before
    /// stabilization and limits; `None` when no metrics were computed or they failed.
    pub recommendation: Option<i32>,
    /// Normalization's details, when it ran.
    pub normalized: Option<Normalized>,
    /// What the controller sets: the next `spec.replicas`.
    pub desired: i32,
    /// Whether it rescaled.
    pub rescaled: bool,
    /// A count the scale update asked for and the API server refused
    /// (`spec.replicas` must be at least 0; only Go's `int32` arithmetic
    /// makes one negative): the update fails, `AbleToScale` is
    /// `False/FailedUpdateScale`, and nothing changes.
    pub refused: Option<i32>,
    /// Each metric's result (empty when the branch computed none).
    pub metrics: Vec<MetricResult>,
}

impl Autoscaler {
    /// `hasObjectOrExternalMetrics`.
    fn has_object_or_external(&self) -> bool {
        self.metrics.iter().any(|m| {
            matches!(
                m,
                MetricKind::Value { .. } | MetricKind::AverageOfTotal { .. }
            )
        })
    }

    /// Whether the controller scales this HPA to zero replicas and back:
    /// `HPAScaleToZero`, `minReplicas: 0` and an Object or External metric.
    pub fn scales_to_zero(&self) -> bool {
        self.feature_gates.scale_to_zero && self.min_replicas == 0 && self.has_object_or_external()
    }

    /// `computeReplicasForMetric`: one metric's proposal (C5.1).
    fn propose(
        &self,
        kind: &MetricKind,
        reading: &Reading<'_>,
        obs: &Observation<'_>,
    ) -> Result<(i32, Option<i32>, i64), String> {
        let (tol, flags, now, current) = (self.tolerances, &self.flags, obs.now, obs.spec_replicas);
        let per_pod = |result: Result<replicas::Proposal, String>| {
            result.map(|p| (p.replicas, p.utilization, p.average))
        };
        match (kind, reading) {
            (MetricKind::Invalid { message, .. }, _) => Err(message.clone()),
            (_, Reading::Failed(message)) => Err((*message).to_owned()),
            (
                MetricKind::Resource {
                    resource, target, ..
                },
                Reading::PerPod(input),
            ) => {
                let cpu = resource == "cpu";
                per_pod(match *target {
                    ResourceTarget::Utilization(percent) => {
                        resource_utilization(input, current, percent, cpu, tol, flags, now)
                    }
                    ResourceTarget::AverageValue(target) => {
                        average_value(input, current, target, cpu, tol, flags, now)
                    }
                })
            }
            (MetricKind::Pods { target, .. }, Reading::PerPod(input)) => per_pod(average_value(
                input, current, *target, false, tol, flags, now,
            )),
            (MetricKind::Value { target, .. }, Reading::Total(usage)) => {
                replicas::value(*usage, *target, current, obs.pods, tol).map(|r| (r, None, *usage))
            }
            (
                MetricKind::AverageOfTotal {
                    target, external, ..
                },
                Reading::Total(usage),
            ) => {
                let (replicas, average) =
                    average_of_total(*usage, *target, obs.status_replicas, tol, *external);
                Ok((replicas, None, average))
            }
            _ => Err("the reading does not fit the metric".to_owned()),
        }
    }

    /// `computeReplicasForMetrics` (C4): the maximum proposal, or the failure
    /// that stops the sync.
    fn combine(
        &self,
        state: &mut State,
        obs: &Observation<'_>,
        readings: &[Reading<'_>],
    ) -> (Option<i32>, Vec<MetricResult>) {
        let mut best: Option<i32> = None;
        let mut first_failure = None;
        let mut results = Vec::with_capacity(self.metrics.len());
        for (kind, reading) in self.metrics.iter().zip(readings) {
            match self.propose(kind, reading, obs) {
                Ok((replicas, utilization, current)) => {
                    if best.is_none_or(|b| b == 0 || replicas > b) {
                        best = Some(replicas);
                    }
                    results.push(MetricResult::Proposed {
                        replicas,
                        utilization,
                        current,
                    });
                }
                Err(message) => {
                    let reason = kind.failure_reason();
                    first_failure.get_or_insert(reason);
                    results.push(MetricResult::Failed { reason, message });
                }
            }
        }
        let conditions = &mut state.conditions;
        match (best, first_failure) {
            (Some(best), failure) if failure.is_none() || best >= obs.spec_replicas => {
                set(&mut conditions.scaling_active, true, "ValidMetricFound");
                (Some(best), results)
            }
            (_, failure) => {
                // Every metric failed, or some did and the rest would scale down.
                set(
                    &mut conditions.scaling_active,
                    false,
                    failure.unwrap_or("InvalidMetricSourceType"),
                );
                (None, results)
            }
        }
    }

    /// `reconcileAutoscaler` (C3.1) for one sync.
    pub fn reconcile(&self, state: &mut State, obs: &Observation<'_>) -> Outcome {
        let (now, current) = (obs.now, obs.spec_replicas);
        let (min, max) = (self.min_replicas, self.max_replicas);
        set(
            &mut state.conditions.able_to_scale,
            true,
            "SucceededGetScale",
        );
        state.memory.recommendations.get_or_insert_with(|| {
            Recommendations::from(vec![Recommendation {
                replicas: current,
                at: now,
            }])
        });
        let scaled_to_zero = self.feature_gates.scale_to_zero
            && state.conditions.scaled_to_zero.is_some_and(|c| c.status);
        let object_or_external = self.has_object_or_external();
        let mut outcome = Outcome {
            recommendation: None,
            normalized: None,
            desired: 0,
            rescaled: true,
            refused: None,
            metrics: Vec::new(),
        };
        let from_metrics = if current == 0 {
            let compute = scaled_to_zero && (min != 0 || object_or_external);
            if !compute {
                outcome.rescaled = false;
                set(
                    &mut state.conditions.scaling_active,
                    false,
                    "ScalingDisabled",
                );
                if !self.feature_gates.scale_to_zero {
                    state.conditions.scaled_to_zero = None;
                }
            }
            compute
        } else if current > max {
            outcome.desired = max;
            false
        } else if current < min {
            outcome.desired = min;
            false
        } else {
            true
        };
        if from_metrics {
            let metric_desired = match obs.source {
                Source::Recommendation(replicas) => {
                    set(
                        &mut state.conditions.scaling_active,
                        true,
                        "ValidMetricFound",
                    );
                    Some(replicas)
                }
                Source::Metrics(readings) => {
                    let (best, results) = self.combine(state, obs, readings);
                    outcome.metrics = results;
                    best
                }
            };
            let Some(metric_desired) = metric_desired else {
                // Fatal: nothing is recorded and nothing scales (C4).
                outcome.desired = current;
                outcome.rescaled = false;
                return outcome;
            };
            let desired = metric_desired.max(0);
            outcome.recommendation = Some(desired);
            let normalized = match &self.behavior {
                None => normalize_legacy(
                    state
                        .memory
                        .recommendations
                        .get_or_insert_with(Recommendations::default),
                    current,
                    desired,
                    min,
                    max,
                    &self.flags,
                    now,
                ),
                Some(behavior) => normalize_with_behavior(
                    &mut state.memory,
                    behavior,
                    current,
                    desired,
                    min,
                    max,
                    now,
                ),
            };
            let conditions = &mut state.conditions;
            set(
                &mut conditions.able_to_scale,
                true,
                normalized.able_to_scale,
            );
            let limited = normalized.desired != normalized.stabilized;
            set(
                &mut conditions.scaling_limited,
                limited,
                normalized.scaling_limited,
            );
            outcome.desired = normalized.desired;
            outcome.normalized = Some(normalized);
            if current == 0 && min != 0 && scaled_to_zero && outcome.desired < min {
                outcome.desired = min;
            }
            outcome.rescaled = outcome.desired != current;
        }
        if outcome.rescaled && outcome.desired < 0 {
            // The scale update fails validation; the controller stops there.
            set(
                &mut state.conditions.able_to_scale,
                false,
                "FailedUpdateScale",
            );
            outcome.refused = Some(outcome.desired);
            outcome.rescaled = false;
        }
        if outcome.rescaled {
            set(
                &mut state.conditions.able_to_scale,
                true,
                "SucceededRescale",
            );
            store_scale_event(
                &mut state.memory,
                self.behavior.as_ref(),
                current,
                outcome.desired,
                now,
            );
            let to_zero = current > 0 && outcome.desired == 0 && min == 0 && object_or_external;
            state.conditions.scaled_to_zero =
                self.feature_gates.scale_to_zero.then_some(Condition {
                    status: to_zero,
                    reason: if to_zero {
                        "ScaledToZero"
                    } else {
                        "NotScaledToZero"
                    },
                });
        } else {
            outcome.desired = current;
        }
        outcome
    }
}
