//! Replica calculator vectors (C5): every test of `replica_calculator_test.go`
//! that computes replicas. The Go harness gives each pod two containers that
//! both request `requests[i]` and report `levels[i][c]`; unset start and
//! transition times are Go's zero time; samples are stamped with the case's
//! (zero) timestamp and a one-minute window; the CPU initialization period is
//! 2 min and the initial readiness delay 10 s.

use super::{MINUTE, NOW, SECOND, ZERO_TIME};
use crate::controller::replicas::*;
use crate::controller::{ControllerFlags, Millis};
use crate::model::quantity::Quantity;

fn flags() -> ControllerFlags {
    ControllerFlags {
        cpu_initialization_period: 2 * MINUTE,
        initial_readiness_delay: 10 * SECOND,
        ..ControllerFlags::default()
    }
}

const HOT: Millis = NOW;
const COOL: Millis = NOW - 3 * MINUTE;
const MAX64: i64 = i64::MAX;

#[derive(Clone, Copy, Default)]
enum Metric {
    #[default]
    Pods,
    Object,
    ObjectPerPod,
    External,
    ExternalPerPod,
}

#[derive(Clone, Default)]
struct Case {
    current: i32,
    expected: i32,
    error: Option<&'static str>,
    readiness: Vec<bool>,
    start: Vec<Millis>,
    phase: Vec<Phase>,
    deleting: Vec<bool>,
    tolerances: Option<(f64, f64)>,
    // Resource metrics.
    requests: Vec<&'static str>,
    levels: Vec<Vec<i64>>,
    pod_names: Vec<&'static str>,
    target_utilization: i32,
    utilization: i32,
    raw: i64,
    container: Option<&'static str>,
    // Custom and external metrics.
    metric: Option<Metric>,
    values: Vec<i64>,
    target: i64,
    per_pod_target: i64,
    usage: i64,
}

/// Go: `makePodMetricLevels`: both containers of each pod report the value.
fn levels(values: &[i64]) -> Vec<Vec<i64>> {
    values.iter().map(|&v| vec![v, v]).collect()
}

fn milli(text: &str) -> i64 {
    Quantity::parse(text).unwrap().milli_value().unwrap()
}

impl Case {
    fn pods(&self) -> Vec<PodState> {
        let count = usize::try_from(self.current).unwrap().max(self.phase.len());
        (0..count)
            .map(|i| PodState {
                phase: self.phase.get(i).copied().unwrap_or(Phase::Running),
                deleting: self.deleting.get(i).copied().unwrap_or(false),
                start: Some(self.start.get(i).copied().unwrap_or(ZERO_TIME)),
                ready: Some(ReadyCondition::new(
                    self.readiness.get(i).copied().unwrap_or(true),
                    ZERO_TIME,
                )),
            })
            .collect()
    }

    fn tolerances(&self) -> Tolerances {
        let (down, up) = self.tolerances.unwrap_or((0.1, 0.1));
        Tolerances { down, up }
    }

    /// The pod's usage: both containers summed, or the named one; `None`
    /// when a container lacks the metric.
    fn usage_of(&self, level: &[i64]) -> Option<i64> {
        match self.container {
            Some("container1") => level.first().copied(),
            Some(_) => level.get(1).copied(),
            None => (level.len() == 2).then(|| level.iter().sum()),
        }
    }

    fn run(&self) -> Result<(i32, i64, i32), String> {
        let pods = self.pods();
        let name = |i: usize| {
            self.pod_names
                .get(i)
                .map_or(format!("test-pod-{i}"), |n| (*n).to_owned())
        };
        let flags = flags();
        let tolerances = self.tolerances();
        let Some(metric) = self.metric else {
            let mut samples = vec![None; pods.len()];
            let mut unlisted = Vec::new();
            for (j, level) in self.levels.iter().enumerate() {
                let Some(value) = self.usage_of(level) else {
                    continue;
                };
                let sample = Sample {
                    value,
                    timestamp: ZERO_TIME,
                    window: MINUTE,
                };
                match (0..pods.len()).find(|&i| format!("test-pod-{i}") == name(j)) {
                    Some(i) => samples[i] = Some(sample),
                    None => unlisted.push(value),
                }
            }
            let per_container = if self.container.is_some() { 1 } else { 2 };
            let requests: Result<Vec<i64>, String> = (0..pods.len())
                .map(|i| {
                    self.requests
                        .get(i)
                        .map(|q| per_container * milli(q))
                        .ok_or_else(|| format!("missing request for cpu in container container1 of Pod test-pod-{i}"))
                })
                .collect();
            let input = PodMetrics {
                pods: &pods,
                samples: &samples,
                unlisted: &unlisted,
                requests: requests.as_deref().map_err(String::as_str),
            };
            let proposal = resource_utilization(
                &input,
                self.current,
                self.target_utilization,
                true,
                tolerances,
                &flags,
                NOW,
            )?;
            return Ok((
                proposal.replicas,
                proposal.average,
                proposal.utilization.unwrap(),
            ));
        };
        let (replicas, usage) = match metric {
            Metric::Pods => {
                let samples: Vec<Option<Sample>> = (0..pods.len())
                    .map(|i| {
                        self.values.get(i).map(|&value| Sample {
                            value,
                            timestamp: ZERO_TIME,
                            window: MINUTE,
                        })
                    })
                    .collect();
                let input = PodMetrics {
                    pods: &pods,
                    samples: &samples,
                    unlisted: &[],
                    requests: Err("unused"),
                };
                let p = average_value(
                    &input,
                    self.current,
                    self.target,
                    false,
                    tolerances,
                    &flags,
                    NOW,
                )?;
                (p.replicas, p.average)
            }
            Metric::Object => (
                value(self.values[0], self.target, self.current, &pods, tolerances)?,
                self.values[0],
            ),
            Metric::External => {
                let usage = external_sum(&self.values, false);
                (
                    value(usage, self.target, self.current, &pods, tolerances)?,
                    usage,
                )
            }
            Metric::ObjectPerPod => average_of_total(
                self.values[0],
                self.per_pod_target,
                self.current,
                tolerances,
                false,
            ),
            Metric::ExternalPerPod => {
                let usage = external_sum(&self.values, true);
                average_of_total(usage, self.per_pod_target, self.current, tolerances, true)
            }
        };
        Ok((replicas, usage, 0))
    }

    fn check(&self, name: &str) {
        match (self.run(), self.error) {
            (Err(error), Some(expected)) => assert!(error.contains(expected), "{name}: {error}"),
            (Ok(_), Some(expected)) => panic!("{name}: expected the error {expected:?}"),
            (Err(error), None) => panic!("{name}: {error}"),
            (Ok((replicas, value, utilization)), None) => {
                assert_eq!(replicas, self.expected, "{name}: replicas");
                if self.metric.is_some() {
                    assert_eq!(value, self.usage, "{name}: usage");
                } else {
                    assert_eq!(
                        (utilization, value),
                        (self.utilization, self.raw),
                        "{name}: utilization, raw"
                    );
                }
            }
        }
    }
}

fn ones(n: usize) -> Vec<&'static str> {
    vec!["1.0"; n]
}

fn resource(
    current: i32,
    expected: i32,
    requests: Vec<&'static str>,
    levels: Vec<Vec<i64>>,
    target: i32,
    utilization: i32,
    raw: i64,
) -> Case {
    Case {
        current,
        expected,
        requests,
        levels,
        target_utilization: target,
        utilization,
        raw,
        ..Case::default()
    }
}

fn custom(
    metric: Metric,
    current: i32,
    expected: i32,
    values: Vec<i64>,
    target: i64,
    usage: i64,
) -> Case {
    let per_pod = matches!(metric, Metric::ObjectPerPod | Metric::ExternalPerPod);
    Case {
        current,
        expected,
        metric: Some(metric),
        values,
        target: if per_pod { 0 } else { target },
        per_pod_target: if per_pod { target } else { 0 },
        usage,
        ..Case::default()
    }
}

const T: bool = true;
const F: bool = false;
use Phase::{Failed, Pending, Running};

#[test]
fn scale_up() {
    resource(3, 5, ones(3), levels(&[300, 500, 700]), 30, 50, 1000).check("TestReplicaCalcScaleUp");
    Case {
        container: Some("container2"),
        ..resource(
            3,
            5,
            ones(3),
            vec![vec![1000, 300], vec![1000, 500], vec![1000, 700]],
            30,
            50,
            500,
        )
    }
    .check("TestReplicaCalcContainerScaleUp");
    Case {
        readiness: vec![F, T, T],
        ..resource(3, 4, ones(3), levels(&[300, 500, 700]), 30, 60, 1200)
    }
    .check("TestReplicaCalcScaleUpUnreadyLessScale");
    Case {
        start: vec![HOT, COOL, COOL],
        container: Some("container2"),
        ..resource(
            3,
            4,
            ones(3),
            vec![vec![0, 300], vec![0, 500], vec![0, 700]],
            30,
            60,
            600,
        )
    }
    .check("TestReplicaCalcScaleUpContainerHotCpuLessScale");
    Case {
        start: vec![HOT, COOL, COOL],
        ..resource(3, 4, ones(3), levels(&[300, 500, 700]), 30, 60, 1200)
    }
    .check("TestReplicaCalcScaleUpHotCpuLessScale");
    Case {
        readiness: vec![T, F, F],
        ..resource(3, 3, ones(3), levels(&[400, 500, 700]), 30, 40, 800)
    }
    .check("TestReplicaCalcScaleUpUnreadyNoScale");
    Case {
        readiness: vec![T, F, F],
        start: vec![COOL, HOT, HOT],
        ..resource(3, 3, ones(3), levels(&[400, 500, 700]), 30, 40, 800)
    }
    .check("TestReplicaCalcScaleHotCpuNoScale");
    let failed = Case {
        readiness: vec![T, T, F, F],
        phase: vec![Running, Running, Failed, Failed],
        ..resource(2, 4, ones(4), levels(&[500, 700]), 30, 60, 1200)
    };
    failed.check("TestReplicaCalcScaleUpIgnoresFailedPods");
    Case {
        container: Some("container2"),
        levels: vec![vec![1000, 500], vec![9000, 700], vec![1000], vec![9000]],
        raw: 600,
        ..failed
    }
    .check("TestReplicaCalcMissingContainerMetricScaleUpIgnoresFailedPods");
    Case {
        readiness: vec![T, T, F, F],
        phase: vec![Running, Running, Failed, Failed],
        container: Some("container2"),
        ..resource(
            2,
            4,
            ones(4),
            vec![vec![1000, 500], vec![9000, 700]],
            30,
            60,
            600,
        )
    }
    .check("TestReplicaCalcScaleUpContainerIgnoresFailedPods");
    let deleting = Case {
        readiness: vec![T, T, F, F],
        phase: vec![Running; 4],
        deleting: vec![F, F, T, T],
        ..resource(2, 4, ones(4), levels(&[500, 700]), 30, 60, 1200)
    };
    Case {
        container: Some("container1"),
        raw: 600,
        ..deleting.clone()
    }
    .check("TestReplicaCalcScaleUpContainerIgnoresDeletionPods");
    deleting.check("TestReplicaCalcScaleUpIgnoresDeletionPods");
}

#[test]
fn scale_up_custom_and_external() {
    custom(Metric::Object, 3, i32::MAX, vec![MAX64], 1, MAX64)
        .check("TestReplicaCalcScaleUpOverflow");
    custom(Metric::ExternalPerPod, 1, i32::MAX, vec![MAX64], 1, MAX64)
        .check("TestExternalPerPodMetricReplicaOverflow");
    custom(Metric::ExternalPerPod, 1, 1, vec![MAX64], MAX64, MAX64)
        .check("TestExternalPerPodMetricUsageOverflow");
    custom(Metric::Pods, 3, 4, vec![20000, 10000, 30000], 15000, 20000)
        .check("TestReplicaCalcScaleUpCM");
    Case {
        readiness: vec![T, T, F],
        start: vec![COOL, COOL, HOT],
        ..custom(Metric::Pods, 3, 6, vec![50000, 10000, 30000], 15000, 30000)
    }
    .check("TestReplicaCalcScaleUpCMUnreadyHotCpuNoLessScale");
    Case {
        readiness: vec![F, T, F],
        start: vec![HOT, COOL, HOT],
        ..custom(Metric::Pods, 3, 7, vec![50000, 15000, 30000], 15000, 31666)
    }
    .check("TestReplicaCalcScaleUpCMUnreadyHotCpuScaleWouldScaleDown");
    custom(Metric::Object, 3, 4, vec![20000], 15000, 20000).check("TestReplicaCalcScaleUpCMObject");
    custom(Metric::ObjectPerPod, 3, 4, vec![20000], 5000, 6667)
        .check("TestReplicaCalcScaleUpCMPerPodObject");
    Case {
        readiness: vec![F, T, F],
        ..custom(Metric::Object, 3, 5, vec![50000], 10000, 50000)
    }
    .check("TestReplicaCalcScaleUpCMObjectIgnoresUnreadyPods");
    custom(Metric::Pods, 1, 2, vec![8600], 4400, 8600).check("TestReplicaCalcScaleUpCMExternal");
    Case {
        readiness: vec![F, T, F],
        ..custom(Metric::External, 3, 2, vec![8600], 4400, 8600)
    }
    .check("TestReplicaCalcScaleUpCMExternalIgnoresUnreadyPods");
    custom(Metric::Pods, 1, 2, vec![8600], 4400, 8600)
        .check("TestReplicaCalcScaleUpCMExternalNoLabels");
    custom(Metric::ExternalPerPod, 3, 4, vec![8600], 2150, 2867)
        .check("TestReplicaCalcScaleUpPerPodCMExternal");
}

#[test]
fn scale_down() {
    resource(
        5,
        3,
        ones(5),
        levels(&[100, 300, 500, 250, 250]),
        50,
        28,
        560,
    )
    .check("TestReplicaCalcScaleDown");
    let c2 = |v: &[i64]| v.iter().map(|&x| vec![1000, x]).collect::<Vec<_>>();
    Case {
        container: Some("container2"),
        ..resource(5, 3, ones(5), c2(&[100, 300, 500, 250, 250]), 50, 28, 280)
    }
    .check("TestReplicaCalcContainerScaleDown");
    custom(Metric::Pods, 5, 3, vec![12000; 5], 20000, 12000).check("TestReplicaCalcScaleDownCM");
    custom(Metric::ObjectPerPod, 5, 3, vec![6000], 2000, 1200)
        .check("TestReplicaCalcScaleDownPerPodCMObject");
    custom(Metric::Object, 5, 3, vec![12000], 20000, 12000)
        .check("TestReplicaCalcScaleDownCMObject");
    custom(Metric::External, 5, 3, vec![8600], 14334, 8600)
        .check("TestReplicaCalcScaleDownCMExternal");
    custom(Metric::ExternalPerPod, 5, 3, vec![8600], 2867, 1720)
        .check("TestReplicaCalcScaleDownPerPodCMExternal");
    Case {
        readiness: vec![T, T, T, F, F],
        ..resource(
            5,
            2,
            ones(5),
            levels(&[100, 300, 500, 250, 250]),
            50,
            30,
            600,
        )
    }
    .check("TestReplicaCalcScaleDownExcludeUnreadyPods");
    Case {
        readiness: vec![T, T, T, F, F],
        container: Some("container2"),
        ..resource(5, 2, ones(5), c2(&[100, 300, 500, 250, 250]), 50, 30, 300)
    }
    .check("TestReplicaCalcScaleDownContainerExcludeUnreadyPods");
    let pending = vec![Running, Pending, Pending, Pending, Pending];
    Case {
        readiness: vec![T, F, F, F, F],
        phase: pending.clone(),
        ..resource(5, 1, ones(5), levels(&[100]), 50, 10, 200)
    }
    .check("TestReplicaCalcScaleDownExcludeUnscheduledPods");
    Case {
        readiness: vec![T, F, F, F, F],
        phase: pending,
        container: Some("container2"),
        ..resource(5, 1, ones(5), c2(&[100, 300, 500, 250, 250]), 50, 10, 100)
    }
    .check("TestReplicaCalcScaleDownContainerExcludeUnscheduledPods");
    let hot = vec![COOL, COOL, COOL, HOT, HOT];
    Case {
        start: hot.clone(),
        ..resource(
            5,
            2,
            ones(5),
            levels(&[100, 300, 500, 250, 250]),
            50,
            30,
            600,
        )
    }
    .check("TestReplicaCalcScaleDownIgnoreHotCpuPods");
    Case {
        start: hot,
        container: Some("container2"),
        ..resource(5, 2, ones(5), c2(&[100, 300, 500, 1000, 1000]), 50, 30, 300)
    }
    .check("TestReplicaCalcScaleDownContainerIgnoreHotCpuPods");
    let seven = |phase: Vec<Phase>, deleting: Vec<bool>, container, levels, raw| Case {
        readiness: vec![T, T, T, T, T, F, F],
        phase,
        deleting,
        container,
        ..resource(5, 3, ones(7), levels, 50, 28, raw)
    };
    let failed = vec![Running, Running, Running, Running, Running, Failed, Failed];
    seven(
        failed.clone(),
        vec![],
        None,
        levels(&[100, 300, 500, 250, 250]),
        560,
    )
    .check("TestReplicaCalcScaleDownIgnoresFailedPods");
    seven(
        failed,
        vec![],
        Some("container2"),
        c2(&[100, 300, 500, 250, 250]),
        280,
    )
    .check("TestReplicaCalcScaleDownContainerIgnoresFailedPods");
    let deleting = vec![F, F, F, F, F, T, T];
    seven(
        vec![Running; 7],
        deleting.clone(),
        None,
        levels(&[100, 300, 500, 250, 250]),
        560,
    )
    .check("TestReplicaCalcScaleDownIgnoresDeletionPods");
    seven(
        vec![Running; 7],
        deleting,
        Some("container2"),
        c2(&[100, 300, 500, 250, 250]),
        280,
    )
    .check("TestReplicaCalcScaleDownIgnoresDeletionPods_StillRunning");
}

#[test]
fn tolerance() {
    let uneven = vec!["0.9", "1.0", "1.1"];
    resource(
        3,
        3,
        uneven.clone(),
        levels(&[1010, 1030, 1020]),
        100,
        102,
        2040,
    )
    .check("TestReplicaCalcTolerance");
    custom(Metric::Pods, 3, 3, vec![20000, 21000, 21000], 20000, 20666)
        .check("TestReplicaCalcToleranceCM");
    custom(Metric::Object, 3, 3, vec![20666], 20000, 20666)
        .check("TestReplicaCalcToleranceCMObject");
    custom(Metric::ObjectPerPod, 4, 4, vec![20166], 5000, 5042)
        .check("TestReplicaCalcTolerancePerPodCMObject");
    custom(Metric::External, 3, 3, vec![8600], 8888, 8600)
        .check("TestReplicaCalcToleranceCMExternal");
    custom(Metric::ExternalPerPod, 3, 3, vec![8600], 2900, 2867)
        .check("TestReplicaCalcTolerancePerPodCMExternal");
    // Go: TestReplicaCalcConfigurableTolerance, (down, up) per case.
    for (name, tolerances, expected, values, utilization, raw) in [
        (
            "Outside of a 0% tolerance",
            (0.0, 0.0),
            4,
            [909, 1010, 1111],
            101,
            2020,
        ),
        (
            "Within a 200% scale-up tolerance",
            (0.1, 2.0),
            3,
            [1890, 1910, 1900],
            190,
            3800,
        ),
        (
            "Outside 8% scale-up tolerance (and superfuous scale-down tolerance)",
            (2.0, 0.08),
            4,
            [1100, 1080, 1090],
            109,
            2180,
        ),
        (
            "Within a 36% scale-down tolerance",
            (0.36, 0.1),
            3,
            [660, 640, 650],
            65,
            1300,
        ),
        (
            "Outside a 34% scale-down tolerance",
            (0.34, 0.1),
            2,
            [660, 640, 650],
            65,
            1300,
        ),
    ] {
        Case {
            tolerances: Some(tolerances),
            ..resource(
                3,
                expected,
                uneven.clone(),
                levels(&values),
                100,
                utilization,
                raw,
            )
        }
        .check(&format!("TestReplicaCalcConfigurableTolerance: {name}"));
    }
    let up = |case: Case| Case {
        tolerances: Some((0.1, 0.01)),
        ..case
    };
    up(custom(
        Metric::Pods,
        3,
        4,
        vec![20000, 21000, 21000],
        20000,
        20666,
    ))
    .check("TestReplicaCalcConfigurableToleranceCM");
    up(custom(Metric::Object, 3, 4, vec![20666], 20000, 20666))
        .check("TestReplicaCalcConfigurableToleranceCMObject");
    up(custom(Metric::ObjectPerPod, 4, 5, vec![20208], 5000, 5052))
        .check("TestReplicaCalcConfigurableTolerancePerPodCMObject");
    up(custom(Metric::External, 3, 4, vec![8900], 8800, 8900))
        .check("TestReplicaCalcConfigurableToleranceCMExternal");
    up(custom(Metric::ExternalPerPod, 3, 4, vec![8600], 2800, 2867))
        .check("TestReplicaCalcConfigurableTolerancePerPodCMExternal");
}

#[test]
fn missing_and_superfluous_metrics() {
    resource(
        4,
        24,
        ones(4),
        levels(&[4000, 9500, 3000, 7000, 3200, 2000]),
        100,
        587,
        11750,
    )
    .check("TestReplicaCalcSuperfluousMetrics");
    resource(4, 3, ones(4), levels(&[400, 95]), 100, 24, 495)
        .check("TestReplicaCalcMissingMetrics");
    Case {
        error: Some("no metrics returned"),
        ..resource(4, 0, ones(3), levels(&[]), 100, 0, 0)
    }
    .check("TestReplicaCalcEmptyMetrics");
    Case {
        error: Some("missing request for"),
        ..resource(1, 0, vec![], levels(&[200]), 100, 0, 0)
    }
    .check("TestReplicaCalcEmptyCPURequest");
    Case {
        pod_names: vec!["an-older-pod-name"],
        error: Some("no metrics returned matched known pods"),
        ..resource(1, 0, ones(1), levels(&[100]), 100, 0, 0)
    }
    .check("TestReplicaCalcDisjointResourcesMetrics");
    custom(Metric::Pods, 5, 5, vec![20000, 19000, 21000], 20000, 20000)
        .check("TestPlainMetricReplicaCalcMissingMetricsNoChangeEq");
    resource(2, 2, ones(2), levels(&[1000]), 100, 100, 2000)
        .check("TestReplicaCalcMissingMetricsNoChangeEq");
    resource(2, 2, ones(2), levels(&[1900]), 100, 190, 3800)
        .check("TestReplicaCalcMissingMetricsNoChangeGt");
    resource(2, 2, ones(2), levels(&[600]), 100, 60, 1200)
        .check("TestReplicaCalcMissingMetricsNoChangeLt");
    Case {
        readiness: vec![F, T, T],
        ..resource(3, 3, ones(3), levels(&[100, 450]), 50, 45, 900)
    }
    .check("TestReplicaCalcMissingMetricsUnreadyChange");
    Case {
        start: vec![HOT, COOL, COOL],
        ..resource(3, 3, ones(3), levels(&[100, 450]), 50, 45, 900)
    }
    .check("TestReplicaCalcMissingMetricsHotCpuNoChange");
    Case {
        readiness: vec![F, T, T],
        ..resource(3, 4, ones(3), levels(&[100, 2000]), 50, 200, 4000)
    }
    .check("TestReplicaCalcMissingMetricsUnreadyScaleUp");
    Case {
        readiness: vec![F, T, T],
        start: vec![HOT, COOL, COOL],
        ..resource(3, 4, ones(3), levels(&[100, 2000]), 50, 200, 4000)
    }
    .check("TestReplicaCalcMissingMetricsHotCpuScaleUp");
    Case {
        readiness: vec![F, T, T, T],
        ..resource(4, 3, ones(4), levels(&[100, 100, 100]), 50, 10, 200)
    }
    .check("TestReplicaCalcMissingMetricsUnreadyScaleDown");
    // C8.4.
    Case {
        readiness: vec![F, T, T, T],
        ..resource(
            4,
            2,
            vec!["1.0", "1.0", "2.0", "2.0"],
            levels(&[200, 100, 100]),
            300,
            6,
            200,
        )
    }
    .check("TestReplicaCalcMissingMetricsScaleDownTargetOver100");
    Case {
        phase: vec![Running; 3],
        ..resource(2, 2, ones(3), levels(&[100, 100]), 50, 10, 200)
    }
    .check("TestReplicaCalcDuringRollingUpdateWithMaxSurge");
    Case {
        phase: vec![Running; 3],
        ..custom(Metric::Pods, 2, 2, vec![10000, 10000], 17000, 10000)
    }
    .check("TestReplicaCalcDuringRollingUpdateWithMaxSurgeCM");
    custom(
        Metric::External,
        3,
        3,
        vec![MAX64 / 2 + 1, MAX64 / 2 + 1],
        MAX64,
        MAX64,
    )
    .check("TestReplicaCalcExternalMetricUsageOverflow");
}

#[test]
fn computed_tolerance_alg_implementation() {
    // Go: TestReplicaCalcComputedToleranceAlgImplementation: 10 pods using
    // 150m each against requests around 300m, with targets just outside and
    // just inside the tolerance.
    let requests = vec![
        "400m", "200m", "310m", "290m", "302m", "298m", "301m", "299m", "300m", "300m",
    ];
    let target = (1.0_f64 / (2.0 * (1.0 - 0.1))).abs() + 0.01;
    let percent = (target * 100.0) as i32;
    let ratio = 1500.0 / (3000.0 * target);
    let expected = (ratio * 10.0).ceil() as i32;
    resource(
        10,
        expected,
        requests.clone(),
        levels(&[150; 10]),
        percent,
        50,
        300,
    )
    .check("scale down");
    let target = (1.0_f64 / (2.0 * (1.0 - 0.1))).abs() + 0.004;
    resource(
        10,
        10,
        requests,
        levels(&[150; 10]),
        (target * 100.0) as i32,
        50,
        300,
    )
    .check("no scale");
}

#[test]
fn group_pods() {
    // Go: TestGroupPods (C5.3; CPU initialization period 2 min, delay 10 s).
    use crate::controller::replicas::{Group, group};
    let flags = flags();
    let pod = |start: Option<Millis>, ready: Option<(bool, Millis)>| PodState {
        phase: Phase::Succeeded,
        deleting: false,
        start,
        ready: ready.map(|(r, since)| ReadyCondition::new(r, since)),
    };
    let sample = |timestamp, window| {
        Some(Sample {
            value: 1,
            timestamp,
            window,
        })
    };
    let some = sample(ZERO_TIME, 0);
    let cases = [
        (
            "count in a ready pod - memory",
            pod(None, None),
            sample(NOW, MINUTE),
            false,
            Group::Ready,
        ),
        (
            "unready a pod without ready condition - CPU",
            pod(Some(NOW), None),
            some,
            true,
            Group::Unready,
        ),
        (
            "count in a ready pod with fresh metrics during initialization period - CPU",
            pod(Some(NOW - MINUTE), Some((T, NOW - 30 * SECOND))),
            sample(NOW, 30 * SECOND),
            true,
            Group::Ready,
        ),
        (
            "unready a ready pod without fresh metrics during initialization period - CPU",
            pod(Some(NOW - MINUTE), Some((T, NOW - 30 * SECOND))),
            sample(NOW, MINUTE),
            true,
            Group::Unready,
        ),
        (
            "unready an unready pod during initialization period - CPU",
            pod(
                Some(NOW - 10 * MINUTE),
                Some((F, NOW - 9 * MINUTE - 54 * SECOND)),
            ),
            some,
            true,
            Group::Unready,
        ),
        (
            "count in a ready pod without fresh metrics after initialization period - CPU",
            pod(Some(NOW - 3 * MINUTE), Some((T, NOW - 3 * MINUTE))),
            sample(NOW - 2 * MINUTE, MINUTE),
            true,
            Group::Ready,
        ),
        (
            "count in an unready pod that was ready after initialization period - CPU",
            pod(Some(NOW - 10 * MINUTE), Some((F, NOW - 9 * MINUTE))),
            some,
            true,
            Group::Ready,
        ),
        (
            "unready pod that has never been ready after initialization period - CPU",
            pod(
                Some(NOW - 10 * MINUTE),
                Some((F, NOW - 9 * MINUTE - 50 * SECOND)),
            ),
            some,
            true,
            Group::Ready,
        ),
        (
            "a missing pod",
            pod(Some(NOW - 3 * MINUTE), None),
            None,
            true,
            Group::Missing,
        ),
        (
            "several pods: lucretius",
            pod(Some(NOW), None),
            some,
            true,
            Group::Unready,
        ),
        (
            "several pods: niccolo",
            pod(Some(NOW - 3 * MINUTE), Some((T, NOW - 3 * MINUTE))),
            some,
            true,
            Group::Ready,
        ),
        (
            "several pods: epicurus",
            pod(Some(NOW - 3 * MINUTE), None),
            None,
            true,
            Group::Missing,
        ),
        (
            "pending pods are unreadied",
            PodState {
                phase: Phase::Pending,
                ..pod(None, None)
            },
            None,
            true,
            Group::Unready,
        ),
        (
            "ignore pods with deletion timestamps",
            PodState {
                phase: Phase::Pending,
                deleting: true,
                ..pod(None, None)
            },
            some,
            true,
            Group::Ignored,
        ),
        (
            "ignore pods in a failed state",
            PodState {
                phase: Phase::Failed,
                ..pod(None, None)
            },
            some,
            true,
            Group::Ignored,
        ),
    ];
    for (name, pod, sample, cpu, expected) in cases {
        assert_eq!(
            group(&pod, sample.as_ref(), cpu, &flags, NOW),
            expected,
            "{name}"
        );
    }
}

#[test]
fn calculate_requests() {
    // Go: TestCalculateRequests, TestCalculatePodRequestsFromContainers_NonExistentContainer
    // (the container list: regular containers, then sidecars; plain init
    // containers are left out by the caller).
    let two = [("container1", Some(100)), ("container2", Some(50))];
    assert_eq!(pod_request(two, None, "cpu", "test-pod"), Ok(150));
    assert_eq!(
        pod_request(two, Some("container1"), "cpu", "test-pod"),
        Ok(100)
    );
    let missing = [("container1", None), ("container2", Some(50))];
    assert_eq!(
        pod_request(missing, None, "cpu", "test-pod"),
        Err("missing request for cpu in container container1 of Pod test-pod".to_owned())
    );
    let sidecar = [
        ("container1", Some(100)),
        ("restartable-container1", Some(50)),
    ];
    assert_eq!(pod_request(sidecar, None, "cpu", "test-pod"), Ok(150));
    let one = [("container1", Some(100))];
    assert_eq!(
        pod_request(one, Some("non-existent-container"), "cpu", "test-pod"),
        Err("container non-existent-container not found in Pod test-pod".to_owned())
    );
}
