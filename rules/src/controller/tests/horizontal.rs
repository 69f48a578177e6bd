//! Controller-level vectors of `horizontal_test.go` (C3, C4): one sync of an
//! HPA as the Go harness sets it up. Its pods have two containers that each
//! request half of `requests[i]` and report half of `levels[i]`; samples are
//! stamped now with a one-minute window; a pod's Ready transition is its
//! start time (Go's zero time when unset); the flags are tolerance 0.1, a
//! 5 min scale-down window, CPU initialization 2 min, readiness delay 10 s,
//! and the legacy scale-up factor 8 (`init()`). Go's `lastScaleTime` is not
//! an input: the controller's decision no longer reads it.

use super::{MINUTE, NOW, SECOND, ZERO_TIME};
use crate::cluster::FeatureGates;
use crate::controller::normalize::{EffectiveBehavior, Recommendation, Recommendations, Rules};
use crate::controller::reconcile::*;
use crate::controller::replicas::*;
use crate::controller::{ControllerFlags, Millis};
use crate::model::hpa::{ScalingPolicy, ScalingRules, default_scaling_rules};
use crate::model::quantity::Quantity;

const HOT: Millis = NOW;
const COOL: Millis = NOW - 3 * MINUTE;

#[derive(Clone, Default)]
struct Tc {
    min: i32,
    max: i32,
    spec: i32,
    status: i32,
    cpu_target: i32,
    levels: Vec<i64>,
    requests: Option<Vec<&'static str>>,
    readiness: Vec<bool>,
    start: Vec<Millis>,
    phase: Vec<Phase>,
    deleting: Vec<bool>,
    metrics: Vec<MetricKind>,
    up: Option<ScalingRules>,
    down: Option<ScalingRules>,
    recommendations: Option<Vec<Recommendation>>,
    tolerance_gate_off: bool,
    /// `HPAScaleToZero` is enabled.
    scale_to_zero: bool,
    /// The HPA starts with `ScaledToZero: True` (Go's `initialConditions`).
    scaled_to_zero: bool,
    /// The metrics APIs that fail ("something went wrong").
    failing: &'static [Api],
    expected: i32,
    conditions: Option<Vec<(&'static str, &'static str)>>,
}

/// The metrics APIs Go's harness fakes, each with its own client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Api {
    /// `metrics.k8s.io` (Resource, ContainerResource).
    Resource,
    /// `custom.metrics.k8s.io` (Pods, Object).
    Custom,
    /// `external.metrics.k8s.io`.
    External,
}

impl Api {
    /// The API that serves a metric's readings.
    fn of(kind: &MetricKind) -> Option<Api> {
        match kind {
            MetricKind::Resource { .. } => Some(Api::Resource),
            MetricKind::Pods { .. }
            | MetricKind::Value {
                external: false, ..
            }
            | MetricKind::AverageOfTotal {
                external: false, ..
            } => Some(Api::Custom),
            MetricKind::Value { external: true, .. }
            | MetricKind::AverageOfTotal { external: true, .. } => Some(Api::External),
            MetricKind::Invalid { .. } => None,
        }
    }
}

fn flags() -> ControllerFlags {
    ControllerFlags {
        cpu_initialization_period: 2 * MINUTE,
        initial_readiness_delay: 10 * SECOND,
        scale_up_limit_factor: 8.0,
        ..ControllerFlags::default()
    }
}

fn milli(text: &str) -> i64 {
    Quantity::parse(text).unwrap().milli_value().unwrap()
}

/// Go: `generateScalingRules`.
fn rules(
    pods: i32,
    pods_period: i32,
    percent: i32,
    percent_period: i32,
    window: i32,
) -> ScalingRules {
    let mut policies = Vec::new();
    if pods != 0 {
        policies.push(ScalingPolicy {
            type_: "Pods".into(),
            value: pods,
            period_seconds: pods_period,
        });
    }
    if percent != 0 {
        policies.push(ScalingPolicy {
            type_: "Percent".into(),
            value: percent,
            period_seconds: percent_period,
        });
    }
    ScalingRules {
        stabilization_window_seconds: Some(window),
        select_policy: Some("Max".into()),
        policies: (!policies.is_empty()).then_some(policies),
        tolerance: None,
    }
}

/// `SetDefaults_HorizontalPodAutoscalerBehavior` for one direction.
fn defaulted(direction: &str, user: Option<ScalingRules>) -> ScalingRules {
    let mut rules = default_scaling_rules(direction);
    if let Some(user) = user {
        rules.stabilization_window_seconds = user
            .stabilization_window_seconds
            .or(rules.stabilization_window_seconds);
        rules.select_policy = user.select_policy.or(rules.select_policy);
        rules.policies = user.policies.or(rules.policies);
        rules.tolerance = user.tolerance;
    }
    rules
}

fn cpu(percent: i32) -> MetricKind {
    MetricKind::Resource {
        resource: "cpu".into(),
        container: None,
        target: ResourceTarget::Utilization(percent),
    }
}

fn container_cpu(percent: i32) -> MetricKind {
    MetricKind::Resource {
        resource: "cpu".into(),
        container: Some("container1".into()),
        target: ResourceTarget::Utilization(percent),
    }
}

fn invalid() -> MetricKind {
    MetricKind::Invalid {
        reason: "InvalidMetricSourceType",
        message: "unknown metric source type \"CheddarCheese\"".into(),
        name: String::new(),
        type_: "CheddarCheese".into(),
    }
}

fn pods_qps(target: i64) -> MetricKind {
    MetricKind::Pods {
        name: "qps".into(),
        target,
    }
}

/// An `Object` (or `External`) `qps` metric with a `Value` target.
fn object_qps(external: bool, target: i64) -> MetricKind {
    MetricKind::Value {
        name: "qps".into(),
        external,
        target,
    }
}

/// An `Object` (or `External`) `qps` metric with an `AverageValue` target.
fn per_pod_qps(external: bool, target: i64) -> MetricKind {
    MetricKind::AverageOfTotal {
        name: "qps".into(),
        external,
        target,
    }
}

const OBJECT: bool = false;
const EXTERNAL: bool = true;

/// The order the port lists conditions in; Go keeps the order they were
/// first set in (an initial `ScaledToZero` comes first there).
const CONDITION_ORDER: [&str; 4] = [
    "AbleToScale",
    "ScalingActive",
    "ScalingLimited",
    "ScaledToZero",
];

const STATUS_OK: [(&str, &str); 3] = [
    ("AbleToScale", "SucceededRescale"),
    ("ScalingActive", "ValidMetricFound"),
    ("ScalingLimited", "DesiredWithinRange"),
];

/// Go: `statusOkWithOverrides`.
fn ok_with(
    overrides: &[(&'static str, &'static str)],
) -> Option<Vec<(&'static str, &'static str)>> {
    let mut list = STATUS_OK.to_vec();
    for (kind, reason) in overrides {
        match list.iter_mut().find(|(k, _)| k == kind) {
            Some(entry) => entry.1 = reason,
            None => list.push((kind, reason)),
        }
    }
    Some(list)
}

impl Tc {
    fn run(&self, name: &str) {
        let mut metrics = Vec::new();
        if self.cpu_target > 0 {
            metrics.push(cpu(self.cpu_target));
        }
        metrics.extend(self.metrics.iter().cloned());
        if metrics.is_empty() {
            metrics.push(MetricKind::Invalid {
                reason: "FailedGetResourceMetric",
                message: "no target".into(),
                name: "cpu".into(),
                type_: "Resource".into(),
            });
        }
        let flags = flags();
        let behavior = (self.up.is_some() || self.down.is_some()).then(|| {
            let up = defaulted("scaleUp", self.up.clone());
            let down = defaulted("scaleDown", self.down.clone());
            EffectiveBehavior {
                scale_up: Rules::from_spec(&up, 0),
                scale_down: Rules::from_spec(&down, 300),
            }
        });
        let mut tolerances = Tolerances { down: 0.1, up: 0.1 };
        if let Some(b) = behavior.as_ref().filter(|_| !self.tolerance_gate_off) {
            tolerances.up = b.scale_up.tolerance.unwrap_or(0.1);
            tolerances.down = b.scale_down.tolerance.unwrap_or(0.1);
        }
        let autoscaler = Autoscaler {
            min_replicas: self.min,
            max_replicas: self.max,
            metrics,
            behavior,
            tolerances,
            flags,
            feature_gates: FeatureGates {
                scale_to_zero: self.scale_to_zero,
                ..FeatureGates::default()
            },
        };
        let requests: Vec<i64> = match &self.requests {
            Some(list) => list.iter().map(|q| 2 * (milli(q) / 2)).collect(),
            None => vec![1000; usize::try_from(self.status).unwrap()],
        };
        let pods: Vec<PodState> = (0..requests.len())
            .map(|i| {
                let start = self.start.get(i).copied().unwrap_or(ZERO_TIME);
                PodState {
                    phase: self.phase.get(i).copied().unwrap_or(Phase::Running),
                    deleting: self.deleting.get(i).copied().unwrap_or(false),
                    start: Some(start),
                    ready: Some(ReadyCondition::new(
                        self.readiness.get(i).copied().unwrap_or(true),
                        start,
                    )),
                }
            })
            .collect();
        let sample = |value| {
            Some(Sample {
                value,
                timestamp: NOW,
                window: MINUTE,
            })
        };
        let mut cpu_samples = vec![None; pods.len()];
        let mut cpu_unlisted = Vec::new();
        let mut custom_samples = vec![None; pods.len()];
        for (i, &level) in self.levels.iter().enumerate() {
            // Each container reports half, in integers.
            let value = 2 * (level / 2);
            match cpu_samples.get_mut(i) {
                Some(slot) => {
                    *slot = sample(value);
                    custom_samples[i] = sample(level);
                }
                None => cpu_unlisted.push(value),
            }
        }
        let readings: Vec<Reading<'_>> = autoscaler
            .metrics
            .iter()
            .map(|kind| match kind {
                _ if Api::of(kind).is_some_and(|api| self.failing.contains(&api)) => {
                    Reading::Failed("something went wrong")
                }
                MetricKind::Resource { .. } => Reading::PerPod(PodMetrics {
                    pods: &pods,
                    samples: &cpu_samples,
                    unlisted: &cpu_unlisted,
                    requests: Ok(&requests),
                }),
                MetricKind::Pods { .. } => Reading::PerPod(PodMetrics {
                    pods: &pods,
                    samples: &custom_samples,
                    unlisted: &[],
                    requests: Ok(&requests),
                }),
                MetricKind::Value { external: true, .. } => {
                    Reading::Total(external_sum(&self.levels, false))
                }
                MetricKind::AverageOfTotal { external: true, .. } => {
                    Reading::Total(external_sum(&self.levels, true))
                }
                _ => Reading::Total(self.levels.first().copied().unwrap_or(0)),
            })
            .collect();
        let mut state = State::default();
        state.memory.recommendations = self.recommendations.clone().map(Recommendations::from);
        if self.scaled_to_zero {
            state.conditions.scaled_to_zero = Some(Condition {
                status: true,
                reason: "ScaledToZero",
            });
        }
        let observation = Observation {
            now: NOW,
            spec_replicas: self.spec,
            status_replicas: self.status,
            pods: &pods,
            source: Source::Metrics(&readings),
        };
        let outcome = autoscaler.reconcile(&mut state, &observation);
        assert_eq!(outcome.desired, self.expected, "{name}: desired replicas");
        assert_eq!(
            outcome.rescaled,
            self.expected != self.spec,
            "{name}: rescaled"
        );
        let mut expected = self
            .conditions
            .clone()
            .unwrap_or_else(|| STATUS_OK.to_vec());
        expected.sort_by_key(|(kind, _)| CONDITION_ORDER.iter().position(|k| k == kind));
        let got: Vec<(&str, &str)> = state
            .conditions
            .list()
            .into_iter()
            .map(|(k, c)| (k, c.reason))
            .collect();
        assert_eq!(got, expected, "{name}: conditions");
    }
}

/// Go's `HPAScaleToZero=true|false` subtests: `on` with the gate, `off` without.
fn gated(name: &str, on: Tc, off: Tc) {
    Tc {
        scale_to_zero: true,
        ..on
    }
    .run(&format!("{name}/HPAScaleToZero=true"));
    off.run(&format!("{name}/HPAScaleToZero=false"));
}

fn base(
    min: i32,
    max: i32,
    replicas: i32,
    expected: i32,
    cpu_target: i32,
    levels: &[i64],
    requests: &[&'static str],
) -> Tc {
    Tc {
        min,
        max,
        spec: replicas,
        status: replicas,
        expected,
        cpu_target,
        levels: levels.to_vec(),
        requests: Some(requests.to_vec()),
        ..Tc::default()
    }
}

const T: bool = true;
const F: bool = false;

#[test]
fn scale_up() {
    let ones3 = ["1.0"; 3];
    base(2, 6, 3, 5, 30, &[300, 500, 700], &ones3).run("TestScaleUp");
    Tc {
        metrics: vec![container_cpu(30)],
        ..base(2, 6, 3, 5, 0, &[300, 500, 700], &ones3)
    }
    .run("TestScaleUpContainer");
    Tc {
        readiness: vec![F, T, T],
        ..base(2, 6, 3, 4, 30, &[300, 500, 700], &ones3)
    }
    .run("TestScaleUpUnreadyLessScale");
    Tc {
        start: vec![HOT, COOL, COOL],
        ..base(2, 6, 3, 4, 30, &[300, 500, 700], &ones3)
    }
    .run("TestScaleUpHotCpuLessScale");
    let ready = ok_with(&[("AbleToScale", "ReadyForNewScale")]);
    Tc {
        readiness: vec![T, F, F],
        conditions: ready.clone(),
        ..base(2, 6, 3, 3, 30, &[400, 500, 700], &ones3)
    }
    .run("TestScaleUpUnreadyNoScale");
    Tc {
        readiness: vec![T, F, F],
        start: vec![COOL, HOT, HOT],
        conditions: ready,
        ..base(2, 6, 3, 3, 30, &[400, 500, 700], &ones3)
    }
    .run("TestScaleUpHotCpuNoScale");
    let four = ["1.0"; 4];
    Tc {
        readiness: vec![T, T, F, F],
        phase: vec![Phase::Running, Phase::Running, Phase::Failed, Phase::Failed],
        ..base(2, 6, 2, 4, 30, &[500, 700], &four)
    }
    .run("TestScaleUpIgnoresFailedPods");
    Tc {
        readiness: vec![T, T, F, F],
        deleting: vec![F, F, T, T],
        ..base(2, 6, 2, 4, 30, &[500, 700], &four)
    }
    .run("TestScaleUpIgnoresDeletionPods");
    base(2, 6, 3, 5, 30, &[300, 500, 700], &ones3).run("TestScaleUpDeployment");
    base(2, 6, 3, 5, 30, &[300, 500, 700], &ones3).run("TestScaleUpReplicaSet");
}

/// A custom-metrics case: `replicas` pods with the default requests.
fn no_requests(
    min: i32,
    max: i32,
    replicas: i32,
    expected: i32,
    levels: &[i64],
    metric: MetricKind,
) -> Tc {
    Tc {
        metrics: vec![metric],
        requests: None,
        ..base(min, max, replicas, expected, 0, levels, &[])
    }
}

#[test]
fn scale_up_custom_metrics() {
    let up = |levels: &[i64], metric, expected| no_requests(2, 6, 3, expected, levels, metric);
    up(&[20000, 10000, 30000], pods_qps(15_000), 4).run("TestScaleUpCM");
    Tc {
        readiness: vec![T, T, F],
        start: vec![COOL, COOL, HOT],
        ..up(&[50000, 10000, 30000], pods_qps(15_000), 6)
    }
    .run("TestScaleUpCMUnreadyAndHotCpuNoLessScale");
    let too_many = ok_with(&[
        ("AbleToScale", "SucceededRescale"),
        ("ScalingLimited", "TooManyReplicas"),
    ]);
    Tc {
        readiness: vec![T, T, F],
        start: vec![HOT, COOL, HOT],
        conditions: too_many.clone(),
        ..up(&[50000, 15000, 30000], pods_qps(15_000), 6)
    }
    .run("TestScaleUpCMUnreadyandCpuHot");
    Tc {
        readiness: vec![T, T, F],
        start: vec![HOT, COOL, HOT],
        conditions: too_many,
        ..up(&[50000, 15000, 30000], pods_qps(15_000), 6)
    }
    .run("TestScaleUpHotCpuNoScaleWouldScaleDown");
    up(&[20000], object_qps(OBJECT, 15_000), 4).run("TestScaleUpCMObject");
    up(&[40000], per_pod_qps(OBJECT, 10_000), 4).run("TestScaleUpPerPodCMObject");
    up(&[8600], object_qps(EXTERNAL, 6666), 4).run("TestScaleUpCMExternal");
    up(&[8600], per_pod_qps(EXTERNAL, 2222), 4).run("TestScaleUpPerPodCMExternal");
    // A recent lastScaleTime does not hold a scale-up back.
    let backoff = Tc {
        conditions: ok_with(&[
            ("AbleToScale", "ReadyForNewScale"),
            ("AbleToScale", "SucceededRescale"),
            ("ScalingLimited", "DesiredWithinRange"),
        ]),
        ..no_requests(1, 5, 3, 4, &[20000, 10000, 30000], pods_qps(15_000))
    };
    backoff.clone().run("TestNoBackoffUpscaleCM");
    Tc {
        cpu_target: 10,
        expected: 5,
        conditions: ok_with(&[
            ("AbleToScale", "ReadyForNewScale"),
            ("AbleToScale", "SucceededRescale"),
            ("ScalingLimited", "TooManyReplicas"),
        ]),
        ..backoff
    }
    .run("TestNoBackoffUpscaleCMNoBackoffCpu");
}

#[test]
fn scale_down_custom_metrics() {
    let down = |levels: &[i64], metric| Tc {
        recommendations: Some(vec![]),
        ..no_requests(2, 6, 5, 3, levels, metric)
    };
    down(&[12000; 5], pods_qps(20_000)).run("TestScaleDownCM");
    down(&[12000], object_qps(OBJECT, 20_000)).run("TestScaleDownCMObject");
    down(&[60000], per_pod_qps(OBJECT, 20_000)).run("TestScaleDownPerPodCMObject");
    down(&[8600], object_qps(EXTERNAL, 14_400)).run("TestScaleDownCMExternal");
    down(&[8600], per_pod_qps(EXTERNAL, 3000)).run("TestScaleDownPerPodCMExternal");
}

#[test]
fn tolerance_custom_metrics() {
    let within = |min, max, replicas, levels: &[i64], metric| Tc {
        conditions: ok_with(&[("AbleToScale", "ReadyForNewScale")]),
        ..no_requests(min, max, replicas, replicas, levels, metric)
    };
    within(1, 5, 3, &[20000, 20001, 21000], pods_qps(20_000)).run("TestToleranceCM");
    within(1, 5, 3, &[20050], object_qps(OBJECT, 20_000)).run("TestToleranceCMObject");
    within(2, 6, 4, &[8600], object_qps(EXTERNAL, 8666)).run("TestToleranceCMExternal");
    within(2, 6, 4, &[8600], per_pod_qps(OBJECT, 2200)).run("TestTolerancePerPodCMObject");
    within(2, 6, 4, &[8600], per_pod_qps(EXTERNAL, 2200)).run("TestTolerancePerPodCMExternal");
}

#[test]
fn scale_down() {
    let five = ["1.0"; 5];
    let levels = [100, 300, 500, 250, 250];
    Tc {
        recommendations: Some(vec![]),
        ..base(2, 6, 5, 3, 50, &levels, &five)
    }
    .run("TestScaleDown");
    Tc {
        up: Some(rules(0, 0, 100, 15, 30)),
        recommendations: Some(vec![]),
        ..base(2, 6, 5, 3, 50, &levels, &five)
    }
    .run("TestScaleDownWithScalingRules");
    let stabilized = ok_with(&[("AbleToScale", "ScaleDownStabilized")]);
    Tc {
        conditions: stabilized.clone(),
        ..base(2, 6, 5, 5, 50, &levels, &five)
    }
    .run("TestScaleDownStabilizeInitialSize");
    Tc {
        readiness: vec![T, T, T, F, F],
        recommendations: Some(vec![]),
        ..base(2, 6, 5, 2, 50, &levels, &five)
    }
    .run("TestScaleDownIncludeUnreadyPods");
    Tc {
        start: vec![COOL, COOL, COOL, HOT, HOT],
        recommendations: Some(vec![]),
        ..base(2, 6, 5, 2, 50, &levels, &five)
    }
    .run("TestScaleDownIgnoreHotCpuPods");
    // Go names container2; both containers report and request half.
    Tc {
        metrics: vec![container_cpu(50)],
        recommendations: Some(vec![]),
        ..base(2, 6, 5, 3, 0, &levels, &five)
    }
    .run("TestScaleDownContainerResource");
    let seven = ["1.0"; 7];
    Tc {
        readiness: vec![T, T, T, T, T, F, F],
        phase: [[Phase::Running; 5].as_slice(), &[Phase::Failed; 2]].concat(),
        recommendations: Some(vec![]),
        ..base(2, 6, 5, 3, 50, &levels, &seven)
    }
    .run("TestScaleDownIgnoresFailedPods");
    Tc {
        readiness: vec![T, T, T, T, T, F, F],
        deleting: vec![F, F, F, F, F, T, T],
        recommendations: Some(vec![]),
        ..base(2, 6, 5, 3, 50, &levels, &seven)
    }
    .run("TestScaleDownIgnoresDeletionPods");
    // C8.6: recommendations (10, −10 min) and (4, −1 min) hold the count at 4.
    let recs = vec![
        Recommendation {
            replicas: 10,
            at: NOW - 10 * MINUTE,
        },
        Recommendation {
            replicas: 4,
            at: NOW - MINUTE,
        },
    ];
    Tc {
        recommendations: Some(recs),
        conditions: stabilized,
        ..base(1, 5, 4, 4, 100, &[50, 50, 50], &["0.1"; 3])
    }
    .run("TestStabilizeDownscale");
}

#[test]
fn tolerance_and_bounds() {
    let uneven = ["0.9", "1.0", "1.1"];
    let ready = ok_with(&[("AbleToScale", "ReadyForNewScale")]);
    Tc {
        conditions: ready.clone(),
        ..base(1, 5, 3, 3, 100, &[1010, 1030, 1020], &uneven)
    }
    .run("TestTolerance");
    // Go: TestConfigurableTolerance.
    let one_percent = ScalingRules {
        tolerance: Some(Quantity::parse("0.01").unwrap()),
        ..ScalingRules::default()
    };
    let ninety_percent = ScalingRules {
        tolerance: Some(Quantity::parse("0.9").unwrap()),
        ..ScalingRules::default()
    };
    Tc {
        up: Some(one_percent.clone()),
        ..base(1, 5, 3, 4, 100, &[1010, 1030, 1020], &uneven)
    }
    .run("TestConfigurableTolerance: Scaling up because of a 1% configurable tolerance");
    Tc {
        down: Some(ninety_percent),
        conditions: ready.clone(),
        ..base(1, 5, 3, 3, 100, &[300, 300, 300], &["1.0"; 3])
    }
    .run("TestConfigurableTolerance: No scale-down because of a 90% configurable tolerance");
    Tc {
        conditions: ready.clone(),
        ..base(1, 5, 3, 3, 100, &[1010, 1030, 1020], &uneven)
    }
    .run("TestConfigurableTolerance: No scaling because of the large default tolerance");
    Tc { up: Some(one_percent), tolerance_gate_off: true, conditions: ready.clone(), ..base(1, 5, 3, 3, 100, &[1010, 1030, 1020], &uneven) }
        .run("TestConfigurableTolerance: the configurable tolerance is ignored as the feature gate is disabled");
    let too_few = ok_with(&[("ScalingLimited", "TooFewReplicas")]);
    Tc {
        conditions: too_few.clone(),
        recommendations: Some(vec![]),
        ..base(2, 5, 3, 2, 90, &[10, 95, 10], &uneven)
    }
    .run("TestMinReplicas");
    Tc {
        conditions: ok_with(&[]),
        recommendations: Some(vec![]),
        ..base(0, 5, 3, 0, 90, &[0, 0, 0], &uneven)
    }
    .run("TestZeroMinReplicasDesiredZero");
    Tc {
        conditions: too_few,
        recommendations: Some(vec![]),
        ..base(2, 5, 3, 2, 90, &[0, 0, 0], &uneven)
    }
    .run("TestMinReplicasDesiredZero");
    Tc {
        conditions: Some(vec![
            ("AbleToScale", "SucceededGetScale"),
            ("ScalingActive", "ScalingDisabled"),
        ]),
        ..base(3, 5, 0, 0, 90, &[], &[])
    }
    .run("TestZeroReplicas");
    let rescaled = Some(vec![("AbleToScale", "SucceededRescale")]);
    Tc {
        conditions: rescaled.clone(),
        ..base(3, 5, 2, 3, 90, &[], &[])
    }
    .run("TestTooFewReplicas");
    Tc {
        conditions: rescaled.clone(),
        ..base(3, 5, 10, 5, 90, &[], &[])
    }
    .run("TestTooManyReplicas");
    // Out-of-bounds counts are corrected whatever lastScaleTime says.
    Tc {
        conditions: rescaled.clone(),
        ..base(2, 6, 1, 2, 0, &[0; 4], &["1.0"; 4])
    }
    .run("TestScaleUpRCImmediately");
    Tc {
        conditions: rescaled,
        ..base(2, 5, 6, 5, 50, &[8000, 9500, 1000], &uneven)
    }
    .run("TestScaleDownRCImmediately");
    let too_many = ok_with(&[("ScalingLimited", "TooManyReplicas")]);
    Tc {
        conditions: too_many.clone(),
        ..base(2, 5, 3, 5, 90, &[8000, 9500, 1000], &uneven)
    }
    .run("TestMaxReplicas");
    Tc {
        conditions: too_many,
        ..base(
            2,
            6,
            4,
            6,
            100,
            &[4000, 9500, 3000, 7000, 3200, 2000],
            &["1.0"; 4],
        )
    }
    .run("TestSuperfluousMetrics");
    Tc {
        recommendations: Some(vec![]),
        ..base(2, 6, 4, 3, 100, &[400, 95], &["1.0"; 4])
    }
    .run("TestMissingMetrics");
    Tc {
        recommendations: Some(vec![]),
        ..base(1, 5, 4, 2, 50, &[200], &["0.2"])
    }
    .run("TestMissingReports");
    Tc {
        conditions: ready,
        ..base(1, 8, 4, 4, 50, &[500; 5], &["1"; 5])
    }
    .run("TestMoreReplicasThanSpecNoScale");
}

/// Go: `TestComputedToleranceAlgImplementation`. Ten pods use 150m each and
/// request 300m ± {100, 10, 2, 1, 0}m (2,998m in all once halved per
/// container): 50 %. Go derives the targets as `int32(100 × (1/(2 × 0.9) + δ))`:
/// 56 % for δ = 0.01 (ratio 0.893, out of tolerance: ⌈8.93⌉ = 9 pods) and
/// 55 % for δ = 0.004 (ratio 0.909, within it: 10 stay).
#[test]
fn computed_tolerance() {
    let requests = [
        "400m", "200m", "310m", "290m", "302m", "298m", "301m", "299m", "300m", "300m",
    ];
    let case = |target, expected| Tc {
        recommendations: Some(vec![]),
        ..base(0, 1000, 10, expected, target, &[150; 10], &requests)
    };
    case(56, 9).run("TestComputedToleranceAlgImplementation: tc1");
    Tc {
        conditions: ok_with(&[("AbleToScale", "ReadyForNewScale")]),
        ..case(55, 10)
    }
    .run("TestComputedToleranceAlgImplementation: tc2");
}

#[test]
fn scale_to_zero() {
    let disabled = Some(vec![
        ("AbleToScale", "SucceededGetScale"),
        ("ScalingActive", "ScalingDisabled"),
    ]);
    let not_scaled_to_zero = |limited| {
        Some(vec![
            ("ScaledToZero", "NotScaledToZero"),
            ("AbleToScale", "SucceededRescale"),
            ("ScalingActive", "ValidMetricFound"),
            ("ScalingLimited", limited),
        ])
    };
    // From zero: only with the gate, the ScaledToZero condition and an
    // Object or External metric (or minReplicas raised above zero).
    let from_zero = |min, target, level, expected| {
        let tc = Tc {
            scaled_to_zero: true,
            ..no_requests(min, 6, 0, 0, &[level], object_qps(OBJECT, target))
        };
        let limited = if min > 0 {
            "TooFewReplicas"
        } else {
            "DesiredWithinRange"
        };
        let on = Tc {
            expected,
            conditions: not_scaled_to_zero(limited),
            ..tc.clone()
        };
        let off = Tc {
            conditions: disabled.clone(),
            ..tc
        };
        (on, off)
    };
    let (on, off) = from_zero(0, 15_000, 20000, 2);
    gated("TestScaleUpFromZeroCMObject", on, off);
    // ⌈1000 / 1000⌉ = 1: no tolerance from zero.
    let (on, off) = from_zero(0, 1000, 1000, 1);
    gated("TestScaleUpFromZeroIgnoresToleranceCMObject", on, off);
    let (on, off) = from_zero(2, 15_000, 10000, 2);
    gated("TestScaleUpFromZeroWhenMinReplicasIncreased", on, off);
    let without = Tc {
        scaled_to_zero: false,
        conditions: disabled.clone(),
        ..from_zero(0, 15_000, 20000, 0).1
    };
    gated(
        "TestScaleUpFromZeroWithoutCondition",
        without.clone(),
        without,
    );
    // A CPU metric never scales from zero.
    let cpu_only = Tc {
        metrics: vec![invalid()],
        recommendations: Some(vec![]),
        conditions: disabled.clone(),
        ..base(0, 6, 0, 0, 30, &[300, 400, 500], &["1.0"; 3])
    };
    gated(
        "TestScaleUpFromZeroOneMetricInvalid",
        cpu_only.clone(),
        cpu_only,
    );
    let manual = Tc {
        conditions: disabled,
        ..base(1, 6, 0, 0, 50, &[], &[])
    };
    gated("TestManualScaleToZeroDisablesHPA", manual.clone(), manual);
    // To zero: a zero reading with minReplicas 0; the condition only with the gate.
    let to_zero = |metric| {
        let off = Tc {
            recommendations: Some(vec![]),
            ..no_requests(0, 6, 5, 0, &[0], metric)
        };
        let on = Tc {
            conditions: ok_with(&[("ScaledToZero", "ScaledToZero")]),
            ..off.clone()
        };
        (on, off)
    };
    let (on, off) = to_zero(object_qps(OBJECT, 20_000));
    gated("TestScaleDownToZeroCMObject", on, off);
    let (on, off) = to_zero(object_qps(EXTERNAL, 14_400));
    gated("TestScaleDownToZeroCMExternal", on, off);
    let normal = Tc {
        scaled_to_zero: true,
        ..base(1, 6, 3, 5, 30, &[300, 500, 700], &["1.0"; 3])
    };
    let on = Tc {
        conditions: not_scaled_to_zero("DesiredWithinRange"),
        ..normal.clone()
    };
    gated(
        "TestScaledToZeroConditionHandledOnNormalRescale",
        on,
        normal,
    );
}

#[test]
fn upscale_cap() {
    // C8.5: Percent 700 per 60 s from 3 is 24; maxReplicas 20 caps it.
    let cap = Tc {
        up: Some(rules(0, 0, 700, 60, 0)),
        ..base(1, 100, 3, 24, 10, &[100, 200, 300], &["0.1"; 3])
    };
    Tc {
        conditions: ok_with(&[("ScalingLimited", "ScaleUpLimit")]),
        ..cap.clone()
    }
    .run("TestUpscaleCap");
    Tc {
        max: 20,
        expected: 20,
        conditions: ok_with(&[("ScalingLimited", "TooManyReplicas")]),
        ..cap
    }
    .run("TestUpscaleCapGreaterThanMaxReplicas");
}

#[test]
fn failing_metrics() {
    let failed = |reason| {
        Some(vec![
            ("AbleToScale", "SucceededGetScale"),
            ("ScalingActive", reason),
        ])
    };
    Tc {
        conditions: failed("FailedGetResourceMetric"),
        ..base(2, 6, 4, 4, 100, &[], &["1.0"; 4])
    }
    .run("TestEmptyMetrics");
    Tc {
        conditions: failed("FailedGetResourceMetric"),
        ..base(1, 5, 1, 1, 100, &[200], &[])
    }
    .run("TestEmptyCPURequest");
    Tc {
        metrics: vec![invalid()],
        conditions: failed("InvalidMetricSourceType"),
        ..base(2, 6, 3, 3, 0, &[20000], &["1.0"; 3])
    }
    .run("TestConditionInvalidSourceType");
    // C4: a scale-up goes ahead on the valid metric; a scale-down does not.
    Tc {
        metrics: vec![invalid()],
        ..base(2, 6, 3, 4, 30, &[300, 400, 500], &["1.0"; 3])
    }
    .run("TestScaleUpOneMetricInvalid");
    Tc {
        metrics: vec![invalid()],
        recommendations: Some(vec![]),
        conditions: failed("InvalidMetricSourceType"),
        ..base(2, 6, 5, 5, 50, &[100, 300, 500, 250, 250], &["1.0"; 5])
    }
    .run("TestNoScaleDownOneMetricInvalid");
    Tc {
        metrics: vec![invalid()],
        conditions: failed("InvalidMetricSourceType"),
        ..base(2, 6, 3, 3, 0, &[], &["1.0"; 3])
    }
    .run("TestScaleUpBothMetricsEmpty");
    // The external metrics API fails: the same as an invalid metric.
    let external_fails = |replicas, expected, levels: &[i64], cpu, target| Tc {
        metrics: vec![object_qps(EXTERNAL, target)],
        failing: &[Api::External],
        ..base(
            2,
            6,
            replicas,
            expected,
            cpu,
            levels,
            &vec!["1.0"; levels.len()],
        )
    };
    external_fails(3, 4, &[300, 400, 500], 30, 100).run("TestScaleUpOneMetricEmpty");
    Tc {
        recommendations: Some(vec![]),
        conditions: failed("FailedGetExternalMetric"),
        ..external_fails(5, 5, &[100, 300, 500, 250, 250], 50, 1000)
    }
    .run("TestNoScaleDownOneMetricEmpty");
}

/// Go: `TestConditionFailedGetMetrics`. Every metrics API fails; each metric
/// source type stops the sync with its own `ScalingActive` reason.
#[test]
fn failed_get_metrics() {
    let cases = [
        ("FailedGetResourceMetric", 10, None),
        ("FailedGetPodsMetric", 0, Some(pods_qps(15_000))),
        ("FailedGetObjectMetric", 0, Some(object_qps(OBJECT, 15_000))),
        (
            "FailedGetExternalMetric",
            0,
            Some(object_qps(EXTERNAL, 300)),
        ),
    ];
    for (reason, cpu_target, metric) in cases {
        Tc {
            metrics: metric.into_iter().collect(),
            failing: &[Api::Resource, Api::Custom, Api::External],
            conditions: Some(vec![
                ("AbleToScale", "SucceededGetScale"),
                ("ScalingActive", reason),
            ]),
            ..base(1, 100, 3, 3, cpu_target, &[100, 200, 300], &["0.1"; 3])
        }
        .run(&format!("TestConditionFailedGetMetrics/{reason}"));
    }
}
