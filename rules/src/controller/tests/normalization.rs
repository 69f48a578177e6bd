//! Normalization vectors (C6, C7): `TestNormalizeDesiredReplicas`,
//! `TestNormalizeDesiredReplicasWithBehavior`, `TestScalingWithRules`,
//! `TestStoreScaleEvents`, `TestConvertDesiredReplicasWithRules`,
//! `TestCalculateScaleUpLimitWithScalingRules`,
//! `TestCalculateScaleDownLimitWithBehaviors`.

use super::{MINUTE, NOW, SECOND};
use crate::controller::normalize::*;
use crate::controller::{ControllerFlags, Millis};
use crate::model::hpa::{ScalingPolicy, default_scaling_rules};

fn rec(replicas: i32, age: Millis) -> Recommendation {
    Recommendation {
        replicas,
        at: NOW - age,
    }
}

fn event(change: i32, age: Millis) -> ScaleEvent {
    ScaleEvent {
        change,
        at: NOW - age,
        outdated: false,
    }
}

/// Go: `generateScalingRules(pods, podsPeriod, percent, percentPeriod, window)`,
/// defaulted like `GenerateHPAScale{Up,Down}Rules` (an empty list is nil there).
fn generated(
    direction: &str,
    pods: i32,
    pods_period: i32,
    percent: i32,
    percent_period: i32,
    window: i32,
) -> Rules {
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
    let mut rules = default_scaling_rules(direction);
    rules.stabilization_window_seconds = Some(window);
    if !policies.is_empty() {
        rules.policies = Some(policies);
    }
    Rules::from_spec(&rules, 300)
}

fn default_rules(direction: &str) -> Rules {
    Rules::from_spec(&default_scaling_rules(direction), 300)
}

/// Go: `generateEventsUniformDistribution`: events spread over the period,
/// their ages truncated to whole seconds (a float `time.Duration`).
fn uniform(changes: &[i32], period_seconds: i32) -> Vec<ScaleEvent> {
    let segment = f64::from(period_seconds) / changes.len() as f64;
    changes
        .iter()
        .enumerate()
        .map(|(i, &change)| {
            let age =
                (f64::from(period_seconds) - segment * (i as f64 + 1.0) + segment / 2.0) as i64;
            event(change, age * SECOND)
        })
        .collect()
}

#[test]
fn normalize_desired_replicas_legacy() {
    // Go: TestNormalizeDesiredReplicas (C6.1, window 5 min).
    let cases: [(&str, Vec<Recommendation>, i32, i32, usize); 5] = [
        ("empty log", vec![], 5, 5, 1),
        (
            "stabilize",
            vec![rec(4, 2 * MINUTE), rec(5, MINUTE)],
            3,
            5,
            3,
        ),
        (
            "no stabilize",
            vec![rec(1, 2 * MINUTE), rec(2, MINUTE)],
            3,
            3,
            3,
        ),
        (
            "no stabilize - old recommendations",
            vec![rec(10, 10 * MINUTE), rec(9, 9 * MINUTE)],
            3,
            3,
            2,
        ),
        (
            "stabilize - old recommendations",
            vec![
                rec(10, 10 * MINUTE),
                rec(4, MINUTE),
                rec(5, 2 * MINUTE),
                rec(9, 9 * MINUTE),
            ],
            3,
            5,
            4,
        ),
    ];
    for (name, recs, desired, expected, log_length) in cases {
        let mut recs = Recommendations::from(recs);
        let stabilized = stabilize_legacy(&mut recs, desired, NOW, 5 * MINUTE);
        assert_eq!(stabilized, expected, "{name}");
        assert_eq!(recs.slots().len(), log_length, "{name}");
    }
}

#[test]
fn normalize_desired_replicas_with_behavior() {
    // Go: TestNormalizeDesiredReplicasWithBehavior (C7.2). Windows in seconds;
    // the expected log lists the recommendations after the call.
    struct Case {
        name: &'static str,
        recs: Vec<Recommendation>,
        current: i32,
        desired: i32,
        expected: i32,
        log: Option<Vec<i32>>,
        up: i32,
        down: i32,
    }
    let cases = [
        Case {
            name: "empty recommendations for scaling down",
            recs: vec![],
            current: 100,
            desired: 5,
            expected: 5,
            log: Some(vec![5]),
            up: 0,
            down: 0,
        },
        Case {
            name: "simple scale down stabilization",
            recs: vec![rec(4, 2 * MINUTE), rec(5, MINUTE)],
            current: 100,
            desired: 3,
            expected: 5,
            log: Some(vec![4, 5, 3]),
            up: 0,
            down: 180,
        },
        Case {
            name: "simple scale up stabilization",
            recs: vec![rec(4, 2 * MINUTE), rec(5, MINUTE)],
            current: 1,
            desired: 7,
            expected: 4,
            log: Some(vec![4, 5, 7]),
            up: 300,
            down: 0,
        },
        Case {
            name: "no scale down stabilization",
            recs: vec![rec(1, 2 * MINUTE), rec(2, MINUTE)],
            current: 100,
            desired: 3,
            expected: 3,
            log: Some(vec![1, 2, 3]),
            up: 300,
            down: 0,
        },
        Case {
            name: "no scale up stabilization",
            recs: vec![rec(4, 2 * MINUTE), rec(5, MINUTE)],
            current: 1,
            desired: 3,
            expected: 3,
            log: Some(vec![4, 5, 3]),
            up: 0,
            down: 300,
        },
        Case {
            name: "no scale down stabilization, reuse recommendation element",
            recs: vec![rec(10, 10 * MINUTE), rec(9, 9 * MINUTE)],
            current: 100,
            desired: 3,
            expected: 3,
            log: Some(vec![10, 3]),
            up: 0,
            down: 0,
        },
        Case {
            name: "no scale up stabilization, reuse recommendation element",
            recs: vec![rec(10, 10 * MINUTE), rec(9, 9 * MINUTE)],
            current: 1,
            desired: 100,
            expected: 100,
            log: Some(vec![10, 100]),
            up: 0,
            down: 0,
        },
        Case {
            name: "scale down stabilization, reuse one of obsolete recommendation element",
            recs: vec![
                rec(10, 10 * MINUTE),
                rec(4, MINUTE),
                rec(5, 2 * MINUTE),
                rec(9, 9 * MINUTE),
            ],
            current: 100,
            desired: 3,
            expected: 5,
            log: Some(vec![10, 4, 5, 3]),
            up: 0,
            down: 180,
        },
        Case {
            name: "scale up stabilization, reuse one of obsolete recommendation element",
            recs: vec![
                rec(10, 100 * MINUTE),
                rec(6, MINUTE),
                rec(5, 2 * MINUTE),
                rec(9, 3 * MINUTE),
            ],
            current: 1,
            desired: 100,
            expected: 5,
            log: Some(vec![100, 6, 5, 9]),
            up: 300,
            down: 0,
        },
        Case {
            name: "scale up and down stabilization, do not scale up when prenormalized rec goes down",
            recs: vec![rec(2, 100 * MINUTE), rec(3, 3 * MINUTE)],
            current: 2,
            desired: 1,
            expected: 2,
            log: None,
            up: 300,
            down: 300,
        },
        Case {
            name: "scale up and down stabilization, do not scale down when prenormalized rec goes up",
            recs: vec![rec(2, 100 * MINUTE), rec(1, 3 * MINUTE)],
            current: 2,
            desired: 3,
            expected: 2,
            log: None,
            up: 300,
            down: 300,
        },
    ];
    for case in cases {
        let rules = |window| Rules {
            window_seconds: window,
            select: Select::Max,
            policies: vec![],
            tolerance: None,
        };
        let behavior = EffectiveBehavior {
            scale_up: rules(case.up),
            scale_down: rules(case.down),
        };
        let mut recs = Recommendations::from(case.recs);
        let (stabilized, _) =
            stabilize_with_behavior(&mut recs, &behavior, case.current, case.desired, NOW);
        assert_eq!(stabilized, case.expected, "{}", case.name);
        if let Some(log) = case.log {
            let stored: Vec<i32> = recs.slots().iter().map(|r| r.replicas).collect();
            assert_eq!(stored, log, "{}", case.name);
        }
    }
}

#[test]
fn scaling_with_rules() {
    // Go: TestScalingWithRules (C7.3): convertDesiredReplicasWithBehaviorRate.
    // `up`/`down` are generateScalingRules arguments; None is the default rules.
    type Gen = Option<(i32, i32, i32, i32, i32)>;
    struct Case {
        name: &'static str,
        up_events: Vec<ScaleEvent>,
        down_events: Vec<ScaleEvent>,
        min: i32,
        max: i32,
        up: Gen,
        down: Gen,
        current: i32,
        desired: i32,
        expected: i32,
        condition: &'static str,
    }
    let case = |name, min, max, up: Gen, down: Gen, current, desired, expected, condition| Case {
        name,
        up_events: vec![],
        down_events: vec![],
        min,
        max,
        up,
        down,
        current,
        desired,
        expected,
        condition,
    };
    let u = uniform;
    let cases = vec![
        case(
            "prenormalized desired replicas within range",
            3,
            8,
            None,
            None,
            5,
            7,
            7,
            DESIRED_WITHIN_RANGE,
        ),
        case(
            "prenormalized desired replicas < minReplicas",
            2,
            8,
            None,
            None,
            3,
            1,
            2,
            TOO_FEW_REPLICAS,
        ),
        case(
            "prenormalized desired replicas within range when minReplicas is 0",
            0,
            10,
            None,
            None,
            1,
            0,
            0,
            DESIRED_WITHIN_RANGE,
        ),
        case(
            "maxReplicas is the limit because maxReplicas < scaleUpLimit",
            1,
            10,
            None,
            None,
            20,
            1000,
            10,
            TOO_MANY_REPLICAS,
        ),
        case(
            "desired replica count is more than the maximum replica count",
            100,
            150,
            None,
            None,
            100,
            1000,
            150,
            TOO_MANY_REPLICAS,
        ),
        case(
            "scaleUpLimit is the limit because scaleUpLimit < maxReplicas with user policies",
            1,
            2000,
            Some((0, 0, 1, 60, 0)),
            None,
            3,
            1000,
            4,
            SCALE_UP_LIMIT,
        ),
        // Skipped in Go (`testThis`), and true here.
        case(
            "scaleDownLimit is the limit because scaleDownLimit > minReplicas with user defined policies",
            3,
            2000,
            None,
            Some((20, 60, 0, 0, 0)),
            1000,
            3,
            980,
            SCALE_DOWN_LIMIT,
        ),
        case(
            "scaleUp with default behavior",
            1,
            1000,
            None,
            None,
            10,
            50,
            20,
            SCALE_UP_LIMIT,
        ),
        case(
            "scaleUp with pods policy larger than percent policy",
            1,
            1000,
            Some((100, 60, 100, 60, 0)),
            None,
            10,
            500,
            110,
            SCALE_UP_LIMIT,
        ),
        case(
            "scaleUp with percent policy larger than pods policy",
            1,
            1000,
            Some((2, 60, 100, 60, 0)),
            None,
            10,
            500,
            20,
            SCALE_UP_LIMIT,
        ),
        case(
            "scaleUp with spec MaxReplicas limitation with large pod policy",
            1,
            1000,
            Some((100, 60, 0, 0, 0)),
            None,
            10,
            50,
            50,
            DESIRED_WITHIN_RANGE,
        ),
        case(
            "scaleUp with spec MaxReplicas limitation with large percent policy",
            1,
            1000,
            Some((10000, 60, 0, 0, 0)),
            None,
            10,
            50,
            50,
            DESIRED_WITHIN_RANGE,
        ),
        case(
            "scaleUp with pod policy limitation",
            1,
            1000,
            Some((30, 60, 0, 0, 0)),
            None,
            10,
            50,
            40,
            SCALE_UP_LIMIT,
        ),
        case(
            "scaleUp with percent policy limitation",
            1,
            1000,
            Some((0, 0, 200, 60, 0)),
            None,
            10,
            50,
            30,
            SCALE_UP_LIMIT,
        ),
        case(
            "scaleDown with percent policy larger than pod policy",
            1,
            1000,
            None,
            Some((20, 60, 1, 60, 300)),
            100,
            2,
            80,
            SCALE_DOWN_LIMIT,
        ),
        case(
            "scaleDown with pod policy larger than percent policy",
            1,
            1000,
            None,
            Some((2, 60, 1, 60, 300)),
            100,
            2,
            98,
            SCALE_DOWN_LIMIT,
        ),
        case(
            "scaleDown with spec MinReplicas=nil limitation with large pod policy",
            1,
            1000,
            None,
            Some((100, 60, 0, 0, 300)),
            10,
            0,
            1,
            TOO_FEW_REPLICAS,
        ),
        case(
            "scaleDown with spec MinReplicas limitation with large pod policy",
            1,
            1000,
            None,
            Some((100, 60, 0, 0, 300)),
            10,
            0,
            1,
            TOO_FEW_REPLICAS,
        ),
        case(
            "scaleDown with spec MinReplicas limitation with large percent policy",
            5,
            1000,
            None,
            Some((0, 0, 100, 60, 300)),
            10,
            2,
            5,
            TOO_FEW_REPLICAS,
        ),
        case(
            "scaleDown with pod policy limitation",
            1,
            1000,
            None,
            Some((5, 60, 0, 0, 300)),
            10,
            2,
            5,
            SCALE_DOWN_LIMIT,
        ),
        case(
            "scaleDown with percent policy limitation",
            1,
            1000,
            None,
            Some((0, 0, 50, 60, 300)),
            10,
            5,
            5,
            DESIRED_WITHIN_RANGE,
        ),
        Case {
            up_events: u(&[1, 5, 9], 120),
            ..case(
                "scaleUp with spec MaxReplicas limitation with large pod policy and events",
                1,
                200,
                Some((300, 60, 0, 0, 0)),
                None,
                100,
                500,
                200,
                TOO_MANY_REPLICAS,
            )
        },
        Case {
            up_events: u(&[1, 5, 9], 120),
            ..case(
                "scaleUp with spec MaxReplicas limitation with large percent policy and events",
                1,
                200,
                Some((0, 0, 10000, 60, 0)),
                None,
                100,
                500,
                200,
                TOO_MANY_REPLICAS,
            )
        },
        Case {
            up_events: u(&[1, 5, 9], 120),
            ..case(
                "scaleUp with currentReplicas limitation with rate.PeriodSeconds with a lot of recent scale up events",
                1,
                1000,
                Some((5, 120, 0, 0, 0)),
                None,
                100,
                500,
                100,
                SCALE_UP_LIMIT,
            )
        },
        Case {
            up_events: u(&[1, 5, 9], 120),
            ..case(
                "scaleUp with pod policy and previous scale up events",
                1,
                1000,
                Some((150, 120, 0, 0, 0)),
                None,
                100,
                500,
                235,
                SCALE_UP_LIMIT,
            )
        },
        Case {
            up_events: u(&[1, 5, 9], 120),
            ..case(
                "scaleUp with percent policy and previous scale up events",
                1,
                1000,
                Some((0, 0, 200, 120, 0)),
                None,
                100,
                500,
                255,
                SCALE_UP_LIMIT,
            )
        },
        Case {
            up_events: u(&[4], 120),
            down_events: u(&[2], 120),
            ..case(
                "scaleUp with percent policy and previous scale up and down events",
                1,
                1000,
                Some((0, 0, 300, 300, 0)),
                None,
                6,
                24,
                16,
                SCALE_UP_LIMIT,
            )
        },
        Case {
            down_events: u(&[1, 5, 9], 120),
            ..case(
                "scaleDown with default policy and previous events",
                1,
                1000,
                None,
                None,
                10,
                5,
                5,
                DESIRED_WITHIN_RANGE,
            )
        },
        Case {
            down_events: u(&[1, 5, 9], 120),
            ..case(
                "scaleDown with spec MinReplicas=nil limitation with large pod policy and previous events",
                1,
                1000,
                None,
                Some((115, 120, 0, 0, 300)),
                100,
                0,
                1,
                TOO_FEW_REPLICAS,
            )
        },
        Case {
            down_events: u(&[1, 5, 9], 120),
            ..case(
                "scaleDown with spec MinReplicas limitation with large pod policy and previous events",
                5,
                1000,
                None,
                Some((130, 120, 0, 0, 300)),
                100,
                0,
                5,
                TOO_FEW_REPLICAS,
            )
        },
        Case {
            down_events: u(&[1, 5, 9], 120),
            ..case(
                "scaleDown with spec MinReplicas limitation with large percent policy and previous events",
                5,
                1000,
                None,
                Some((0, 0, 100, 120, 300)),
                100,
                2,
                5,
                TOO_FEW_REPLICAS,
            )
        },
        Case {
            down_events: u(&[1, 5, 9], 120),
            ..case(
                "scaleDown with pod policy limitation and previous events",
                1,
                1000,
                None,
                Some((5, 120, 0, 0, 300)),
                100,
                2,
                100,
                SCALE_DOWN_LIMIT,
            )
        },
        Case {
            down_events: u(&[2, 4, 6], 120),
            ..case(
                "scaleDown with percent policy limitation and previous events",
                1,
                1000,
                None,
                Some((0, 0, 50, 120, 300)),
                100,
                0,
                56,
                SCALE_DOWN_LIMIT,
            )
        },
        Case {
            up_events: u(&[2], 120),
            down_events: u(&[4], 120),
            ..case(
                "scaleDown with percent policy and previous scale up and down events",
                1,
                1000,
                None,
                Some((0, 0, 50, 180, 0)),
                10,
                1,
                6,
                SCALE_DOWN_LIMIT,
            )
        },
        Case {
            down_events: u(&[10, 10, 10], 120),
            ..case(
                "scaleDown with previous events preventing further scale down",
                1,
                1000,
                None,
                Some((0, 0, 10, 120, 300)),
                100,
                0,
                100,
                SCALE_DOWN_LIMIT,
            )
        },
        Case {
            down_events: u(&[10, 10, 10], 120),
            ..case(
                "scaleDown with with previous events still allowing more scale down",
                1,
                1000,
                None,
                Some((0, 0, 1000, 120, 300)),
                10,
                5,
                5,
                DESIRED_WITHIN_RANGE,
            )
        },
        Case {
            up_events: u(&[8, 12, 9, 11], 120),
            ..case(
                "check 'outdated' flag for events for one behavior for up",
                1,
                1000,
                Some((1000, 60, 0, 0, 0)),
                None,
                100,
                200,
                200,
                DESIRED_WITHIN_RANGE,
            )
        },
        Case {
            up_events: u(&[8, 12, 9, 11], 120),
            ..case(
                "check that events were not marked 'outdated' for two different policies in the behavior for up",
                1,
                1000,
                Some((1000, 120, 100, 60, 0)),
                None,
                100,
                200,
                200,
                DESIRED_WITHIN_RANGE,
            )
        },
        Case {
            up_events: u(&[8, 12, 9, 11], 120),
            ..case(
                "check that events were marked 'outdated' for two different policies in the behavior for up",
                1,
                1000,
                Some((1000, 30, 100, 60, 0)),
                None,
                100,
                200,
                200,
                DESIRED_WITHIN_RANGE,
            )
        },
        Case {
            down_events: u(&[8, 12, 9, 11], 120),
            ..case(
                "check 'outdated' flag for events for one behavior for down",
                1,
                1000,
                None,
                Some((1000, 60, 0, 0, 300)),
                100,
                5,
                5,
                DESIRED_WITHIN_RANGE,
            )
        },
        Case {
            down_events: u(&[8, 12, 9, 11], 120),
            ..case(
                "check that events were not marked 'outdated' for two different policies in the behavior for down",
                1,
                1000,
                None,
                Some((1000, 120, 100, 60, 300)),
                100,
                5,
                5,
                DESIRED_WITHIN_RANGE,
            )
        },
        Case {
            down_events: u(&[8, 12, 9, 11], 120),
            ..case(
                "check that events were marked 'outdated' for two different policies in the behavior for down",
                1,
                1000,
                None,
                Some((1000, 30, 100, 60, 300)),
                100,
                5,
                5,
                DESIRED_WITHIN_RANGE,
            )
        },
    ];
    assert_eq!(cases.len(), 42);
    for case in cases {
        let rules = |direction, spec: Gen| match spec {
            Some((a, b, c, d, e)) => generated(direction, a, b, c, d, e),
            None => default_rules(direction),
        };
        let behavior = EffectiveBehavior {
            scale_up: rules("scaleUp", case.up),
            scale_down: rules("scaleDown", case.down),
        };
        let memory = Memory {
            recommendations: None,
            up_events: case.up_events.into(),
            down_events: case.down_events.into(),
        };
        let (replicas, condition) = convert_with_behavior(
            &behavior,
            &memory,
            case.current,
            case.desired,
            case.min,
            case.max,
            NOW,
        );
        assert_eq!(
            (replicas, condition),
            (case.expected, case.condition),
            "{}",
            case.name
        );
    }
}

#[test]
fn store_scale_events() {
    // Go: TestStoreScaleEvents (C7.5): (change, age in seconds), then the
    // events after storing a change of 5 as (change, outdated).
    type Gen = Option<(i32, i32, i32, i32, i32)>;
    type Case = (&'static str, Vec<(i32, i64)>, Vec<(i32, bool)>, Gen, i32);
    let cases: Vec<Case> = vec![
        (
            "empty entries with default behavior",
            vec![],
            vec![],
            None,
            0,
        ),
        (
            "empty entries with two-policy-behavior",
            vec![],
            vec![(5, false)],
            Some((10, 60, 100, 60, 0)),
            0,
        ),
        (
            "one outdated entry to be kept untouched without behavior",
            vec![(7, 61)],
            vec![(7, false)],
            None,
            0,
        ),
        (
            "one outdated entry to be replaced with behavior",
            vec![(7, 61)],
            vec![(5, false)],
            Some((10, 60, 100, 60, 0)),
            0,
        ),
        (
            "one actual entry to be not touched with behavior",
            vec![(7, 58)],
            vec![(7, false), (5, false)],
            Some((10, 60, 100, 60, 0)),
            7,
        ),
        (
            "two entries, one of them to be replaced",
            vec![(7, 61), (6, 59)],
            vec![(5, false), (6, false)],
            Some((10, 60, 0, 0, 0)),
            6,
        ),
        (
            "replace one entry, use policies with different periods",
            vec![(8, 29), (6, 59), (7, 61), (9, 61)],
            vec![(8, false), (6, false), (7, true), (5, false)],
            Some((10, 60, 100, 30, 0)),
            14,
        ),
        (
            "two entries, both actual",
            vec![(7, 58), (6, 59)],
            vec![(7, false), (6, false), (5, false)],
            Some((10, 120, 100, 30, 0)),
            13,
        ),
    ];
    for (name, previous, expected, rules, change_in_60s) in cases {
        for up in [true, false] {
            let events: Vec<ScaleEvent> = previous
                .iter()
                .map(|&(c, age)| event(c, age * SECOND))
                .collect();
            let direction = if up { "scaleUp" } else { "scaleDown" };
            let behavior = rules.map(|(a, b, c, d, e)| {
                let rules = generated(direction, a, b, c, d, e);
                EffectiveBehavior {
                    scale_up: rules.clone(),
                    scale_down: rules,
                }
            });
            let mut memory = Memory::default();
            let total = |events: &[ScaleEvent]| {
                events
                    .iter()
                    .filter(|e| NOW - e.at < 60 * SECOND)
                    .map(|e| e.change)
                    .sum::<i32>()
            };
            assert_eq!(total(&events), change_in_60s, "{name}");
            if up {
                memory.up_events = events.into();
                store_scale_event(&mut memory, behavior.as_ref(), 10, 15, NOW);
            } else {
                memory.down_events = events.into();
                store_scale_event(&mut memory, behavior.as_ref(), 10, 5, NOW);
            }
            let stored = if up {
                memory.up_events.slots()
            } else {
                memory.down_events.slots()
            };
            let got: Vec<(i32, bool)> = stored.iter().map(|e| (e.change, e.outdated)).collect();
            assert_eq!(got, expected, "{name} ({direction})");
        }
    }
}

#[test]
fn convert_desired_replicas_with_rules() {
    // Go: TestConvertDesiredReplicasWithRules (C6.2), factor 8 as in the Go harness.
    let factor = 8.0;
    for (current, desired, min, max, expected, condition) in [
        (5, 7, 3, 8, 7, DESIRED_WITHIN_RANGE),
        (3, 1, 2, 8, 2, TOO_FEW_REPLICAS),
        (1, 0, 0, 10, 0, DESIRED_WITHIN_RANGE),
        (20, 1000, 1, 10, 10, TOO_MANY_REPLICAS),
        (3, 1000, 1, 2000, 24, SCALE_UP_LIMIT),
    ] {
        assert_eq!(
            convert_legacy(current, desired, min, max, factor),
            (expected, condition)
        );
    }
    // With the real factor 2: max(2 × 3, 4) = 6.
    assert_eq!(
        convert_legacy(
            3,
            1000,
            1,
            2000,
            ControllerFlags::default().scale_up_limit_factor
        ),
        (6, SCALE_UP_LIMIT)
    );
    assert_eq!(convert_legacy(1, 1000, 1, 2000, 2.0), (4, SCALE_UP_LIMIT));
}

#[test]
fn calculate_scale_limits_with_min_policy() {
    // Go: TestCalculateScaleUpLimitWithScalingRules, TestCalculateScaleDownLimitWithBehaviors.
    let rules = Rules {
        window_seconds: 300,
        select: Select::Min,
        policies: vec![
            Policy {
                kind: PolicyKind::Pods,
                value: 2,
                period_seconds: 60,
            },
            Policy {
                kind: PolicyKind::Percent,
                value: 50,
                period_seconds: 60,
            },
        ],
        tolerance: None,
    };
    assert_eq!(rules.limit(1, &Memory::default(), NOW, true), 2);
    assert_eq!(rules.limit(5, &Memory::default(), NOW, false), 3);
}

#[test]
fn percent_limits_keep_float_artefacts() {
    // C7.3: start 25 with Percent 12 up is ceil(28.000000000000004) = 29;
    // start 10 with Percent 80 down is trunc(1.9999999999999996) = 1.
    let percent = |value| Policy {
        kind: PolicyKind::Percent,
        value,
        period_seconds: 60,
    };
    assert_eq!(percent(12).limit(25, true), 29);
    assert_eq!(percent(80).limit(10, false), 1);
    assert_eq!(percent(1000).limit(40, false), -360);
}
