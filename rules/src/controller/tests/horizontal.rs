//! Controller-level vectors of `horizontal_test.go` (C3, C4): one sync of an
//! HPA as the Go harness sets it up. Its pods have two containers that each
//! request half of `requests[i]` and report half of `levels[i]`; samples are
//! stamped now with a one-minute window; a pod's Ready transition is its
//! start time (Go's zero time when unset); the flags are tolerance 0.1, a
//! 5 min scale-down window, CPU initialization 2 min, readiness delay 10 s,
//! and the legacy scale-up factor 8 (`init()`).

use super::{MINUTE, NOW, SECOND, ZERO_TIME};
use crate::controller::normalize::{EffectiveBehavior, Recommendation, Rules};
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
    expected: i32,
    conditions: Option<Vec<(&'static str, &'static str)>>,
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

fn invalid() -> MetricKind {
    MetricKind::Invalid {
        reason: "InvalidMetricSourceType",
        message: "unknown metric source type \"CheddarCheese\"".into(),
    }
}

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
            scale_to_zero: false,
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
        state
            .memory
            .recommendations
            .clone_from(&self.recommendations);
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
        let expected = self
            .conditions
            .clone()
            .unwrap_or_else(|| STATUS_OK.to_vec());
        let got: Vec<(&str, &str)> = state
            .conditions
            .list()
            .into_iter()
            .map(|(k, c)| (k, c.reason))
            .collect();
        assert_eq!(got, expected, "{name}: conditions");
    }
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
    let container = MetricKind::Resource {
        resource: "cpu".into(),
        container: Some("container1".into()),
        target: ResourceTarget::Utilization(30),
    };
    Tc {
        metrics: vec![container],
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

#[test]
fn scale_up_custom_metrics() {
    let no_requests = |levels: &[i64], metric: MetricKind, expected| Tc {
        min: 2,
        max: 6,
        spec: 3,
        status: 3,
        expected,
        levels: levels.to_vec(),
        metrics: vec![metric],
        ..Tc::default()
    };
    let pods = MetricKind::Pods {
        name: "qps".into(),
        target: 15_000,
    };
    no_requests(&[20000, 10000, 30000], pods.clone(), 4).run("TestScaleUpCM");
    Tc {
        readiness: vec![T, T, F],
        start: vec![COOL, COOL, HOT],
        ..no_requests(&[50000, 10000, 30000], pods.clone(), 6)
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
        ..no_requests(&[50000, 15000, 30000], pods.clone(), 6)
    }
    .run("TestScaleUpCMUnreadyandCpuHot");
    Tc {
        readiness: vec![T, T, F],
        start: vec![HOT, COOL, HOT],
        conditions: too_many,
        ..no_requests(&[50000, 15000, 30000], pods, 6)
    }
    .run("TestScaleUpHotCpuNoScaleWouldScaleDown");
    let object = MetricKind::Value {
        name: "qps".into(),
        external: false,
        target: 15_000,
    };
    no_requests(&[20000], object, 4).run("TestScaleUpCMObject");
    let per_pod_object = MetricKind::AverageOfTotal {
        name: "qps".into(),
        external: false,
        target: 10_000,
    };
    no_requests(&[40000], per_pod_object, 4).run("TestScaleUpPerPodCMObject");
    let external = MetricKind::Value {
        name: "qps".into(),
        external: true,
        target: 6666,
    };
    no_requests(&[8600], external, 4).run("TestScaleUpCMExternal");
    let per_pod_external = MetricKind::AverageOfTotal {
        name: "qps".into(),
        external: true,
        target: 2222,
    };
    no_requests(&[8600], per_pod_external, 4).run("TestScaleUpPerPodCMExternal");
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
        conditions: rescaled,
        ..base(3, 5, 10, 5, 90, &[], &[])
    }
    .run("TestTooManyReplicas");
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
}
