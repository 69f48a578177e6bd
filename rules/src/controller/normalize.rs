//! Normalization of the metrics' recommendation: without `behavior` (the
//! legacy path, C6) and with it (C7), and the scale events that policies count
//! (C7.5). Windows and periods use the strict boundary of C2.2: an entry of age
//! `a` is inside a window of `w` iff `a < w`, expired iff `a >= w`. What the
//! controller remembers between syncs is kept in `history`.

use super::flags::{ControllerFlags, Millis};
pub use super::history::{Recommendation, Recommendations, ScaleEvent, ScaleEvents};
use crate::model::go::{ceil_i32, f64_to_i32};
use crate::model::hpa::{Behavior, ScalingRules};

/// `ScaleUpLimit`: a policy (or the legacy cap) held a scale-up back.
pub const SCALE_UP_LIMIT: &str = "ScaleUpLimit";
/// `ScaleDownLimit`: a policy held a scale-down back.
pub const SCALE_DOWN_LIMIT: &str = "ScaleDownLimit";
/// `TooManyReplicas`: `maxReplicas` capped the count.
pub const TOO_MANY_REPLICAS: &str = "TooManyReplicas";
/// `TooFewReplicas`: `minReplicas` raised the count.
pub const TOO_FEW_REPLICAS: &str = "TooFewReplicas";
/// `DesiredWithinRange`: nothing capped the count.
pub const DESIRED_WITHIN_RANGE: &str = "DesiredWithinRange";
/// `ScaleUpStabilized`.
pub const SCALE_UP_STABILIZED: &str = "ScaleUpStabilized";
/// `ScaleDownStabilized`.
pub const SCALE_DOWN_STABILIZED: &str = "ScaleDownStabilized";
/// `ReadyForNewScale`.
pub const READY_FOR_NEW_SCALE: &str = "ReadyForNewScale";

/// What the controller remembers of one HPA between syncs (C2.3).
#[derive(Clone, Debug, Default)]
pub struct Memory {
    /// `None` until the first sync records the current count (C3.1 step 4).
    pub recommendations: Option<Recommendations>,
    /// Scale-up events (only with `behavior`).
    pub up_events: ScaleEvents,
    /// Scale-down events (only with `behavior`).
    pub down_events: ScaleEvents,
}

/// `selectPolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Select {
    /// The policy allowing the largest change (also any unknown value, as in Go).
    Max,
    /// The policy allowing the smallest change.
    Min,
    /// No change in this direction.
    Disabled,
}

/// A policy's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyKind {
    /// `Pods`: a number of pods.
    Pods,
    /// `Percent`: a percentage of the count at the period's start.
    Percent,
}

/// `HPAScalingPolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Type.
    pub kind: PolicyKind,
    /// `value`.
    pub value: i32,
    /// `periodSeconds`.
    pub period_seconds: i32,
}

impl Policy {
    /// The period in milliseconds.
    pub fn period(&self) -> Millis {
        Millis::from(self.period_seconds) * 1000
    }

    /// The policy's limit from `start` replicas (C7.3): Percent rounds up when
    /// scaling up and truncates when scaling down, in f64 as Go does.
    pub fn limit(&self, start: i32, up: bool) -> i32 {
        match (self.kind, up) {
            (PolicyKind::Pods, true) => start.wrapping_add(self.value),
            (PolicyKind::Pods, false) => start.wrapping_sub(self.value),
            (PolicyKind::Percent, true) => {
                ceil_i32(f64::from(start) * (1.0 + f64::from(self.value) / 100.0))
            }
            (PolicyKind::Percent, false) => {
                f64_to_i32(f64::from(start) * (1.0 - f64::from(self.value) / 100.0))
            }
        }
    }
}

impl std::fmt::Display for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            PolicyKind::Pods => write!(f, "Pods {} per {}s", self.value, self.period_seconds),
            PolicyKind::Percent => {
                write!(f, "Percent {} per {}s", self.value, self.period_seconds)
            }
        }
    }
}

/// One direction's rules as the controller uses them: defaulted (C7.1).
#[derive(Clone, Debug, PartialEq)]
pub struct Rules {
    /// `stabilizationWindowSeconds`.
    pub window_seconds: i32,
    /// `selectPolicy`.
    pub select: Select,
    /// `policies`.
    pub policies: Vec<Policy>,
    /// `tolerance`, when set and honoured (C5.2).
    pub tolerance: Option<f64>,
}

impl Rules {
    /// From the API server's defaulted rules; a still unset window takes
    /// `default_window` seconds (the scale-down flag, C7.1).
    pub fn from_spec(rules: &ScalingRules, default_window: i32) -> Self {
        let policies = rules
            .policies
            .iter()
            .flatten()
            .map(|p| Policy {
                kind: if p.type_ == "Percent" {
                    PolicyKind::Percent
                } else {
                    PolicyKind::Pods
                },
                value: p.value,
                period_seconds: p.period_seconds,
            })
            .collect();
        Self {
            window_seconds: rules.stabilization_window_seconds.unwrap_or(default_window),
            select: match rules.select_policy.as_deref() {
                Some("Min") => Select::Min,
                Some("Disabled") => Select::Disabled,
                _ => Select::Max,
            },
            policies,
            tolerance: rules.tolerance.as_ref().and_then(|q| q.stored_f64()),
        }
    }

    /// The stabilization window in milliseconds.
    pub fn window(&self) -> Millis {
        Millis::from(self.window_seconds) * 1000
    }

    /// `getLongestPolicyPeriod`.
    pub fn longest_period(&self) -> Millis {
        self.policies
            .iter()
            .map(Policy::period)
            .max()
            .unwrap_or(0)
            .max(0)
    }

    /// Each policy's limit at `current` given the recent events (C7.3), in
    /// order, worked out as they are read.
    pub fn policy_limits(
        &self,
        current: i32,
        memory: &Memory,
        now: Millis,
        up: bool,
    ) -> impl Iterator<Item = i32> {
        self.policies.iter().map(move |policy| {
            let added = memory.up_events.changes_within(policy.period(), now);
            let deleted = memory.down_events.changes_within(policy.period(), now);
            let start = current.wrapping_sub(added).wrapping_add(deleted);
            policy.limit(start, up)
        })
    }

    /// The direction's limit (`calculateScaleUpLimitWithScalingRules`,
    /// `calculateScaleDownLimitWithBehaviors`): `Max` takes the largest change,
    /// `Min` the smallest, `Disabled` keeps `current`.
    pub fn limit(&self, current: i32, memory: &Memory, now: Millis, up: bool) -> i32 {
        self.select_from(current, self.policy_limits(current, memory, now, up), up)
    }

    /// Picks among policy limits under `selectPolicy`.
    pub fn select_limit(&self, current: i32, limits: &[i32], up: bool) -> i32 {
        self.select_from(current, limits.iter().copied(), up)
    }

    /// [`Rules::select_limit`] of limits worked out one by one, without
    /// holding them: the controller's normalization asks at every sync.
    fn select_from(&self, current: i32, limits: impl Iterator<Item = i32>, up: bool) -> i32 {
        let largest_change = match self.select {
            Select::Disabled => return current,
            Select::Max => true,
            Select::Min => false,
        };
        let pick_max = largest_change == up;
        let init = if pick_max { i32::MIN } else { i32::MAX };
        limits.fold(
            init,
            |acc, l| if pick_max { acc.max(l) } else { acc.min(l) },
        )
    }
}

/// `HorizontalPodAutoscalerBehavior` as the controller uses it.
#[derive(Clone, Debug, PartialEq)]
pub struct EffectiveBehavior {
    /// `scaleUp`.
    pub scale_up: Rules,
    /// `scaleDown`.
    pub scale_down: Rules,
}

impl EffectiveBehavior {
    /// From the API server's defaulted behavior (`Hpa::behavior`) and the flags.
    pub fn new(behavior: &Behavior, flags: &ControllerFlags) -> Self {
        // `int32(window.Seconds())`: the flag truncated to whole seconds.
        let flag_window = i32::try_from(flags.downscale_stabilization / 1000).unwrap_or(i32::MAX);
        // Read where they are, not copied: only a missing direction is made.
        let rules = |rules: &Option<ScalingRules>, direction, default_window| match rules {
            Some(rules) => Rules::from_spec(rules, default_window),
            None => Rules::from_spec(
                &crate::model::hpa::default_scaling_rules(direction),
                default_window,
            ),
        };
        Self {
            scale_up: rules(&behavior.scale_up, "scaleUp", 0),
            scale_down: rules(&behavior.scale_down, "scaleDown", flag_window),
        }
    }
}

/// The outcome of normalization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Normalized {
    /// The stabilized recommendation.
    pub stabilized: i32,
    /// The replica count after the limits: what the controller sets.
    pub desired: i32,
    /// `AbleToScale` reason: `ReadyForNewScale`, `ScaleUpStabilized` or `ScaleDownStabilized`.
    pub able_to_scale: &'static str,
    /// `ScalingLimited` reason; `True` unless it is `DesiredWithinRange`.
    pub scaling_limited: &'static str,
}

/// Legacy stabilization (C6.1): the maximum of `desired` and the
/// recommendations of the last `window`, whatever the direction; records
/// `desired`.
pub fn stabilize_legacy(
    recommendations: &mut Recommendations,
    desired: i32,
    now: Millis,
    window: Millis,
) -> i32 {
    let stabilized = recommendations
        .highest(now, window)
        .map_or(desired, |highest| highest.max(desired));
    recommendations.record(desired, now, window);
    stabilized
}

/// `convertDesiredReplicasWithRules` (C6.2): `minReplicas`, and the cap
/// `max(factor × current, 4)` or `maxReplicas`.
pub fn convert_legacy(
    current: i32,
    desired: i32,
    min: i32,
    max: i32,
    factor: f64,
) -> (i32, &'static str) {
    let up_limit = f64_to_i32((factor * f64::from(current)).max(4.0));
    let (allowed, why) = if max > up_limit {
        (up_limit, SCALE_UP_LIMIT)
    } else {
        (max, TOO_MANY_REPLICAS)
    };
    if desired < min {
        (min, TOO_FEW_REPLICAS)
    } else if desired > allowed {
        (allowed, why)
    } else {
        (desired, DESIRED_WITHIN_RANGE)
    }
}

/// `normalizeDesiredReplicas` (C6).
pub fn normalize_legacy(
    recommendations: &mut Recommendations,
    current: i32,
    desired: i32,
    min: i32,
    max: i32,
    flags: &ControllerFlags,
    now: Millis,
) -> Normalized {
    let stabilized = stabilize_legacy(recommendations, desired, now, flags.downscale_stabilization);
    let (result, why) = convert_legacy(current, stabilized, min, max, flags.scale_up_limit_factor);
    Normalized {
        stabilized,
        desired: result,
        able_to_scale: if stabilized == desired {
            READY_FOR_NEW_SCALE
        } else {
            SCALE_DOWN_STABILIZED
        },
        scaling_limited: why,
    }
}

/// `stabilizeRecommendationWithBehaviors` (C7.2): `current` clamped between
/// the lowest recommendation of the up window and the highest of the down
/// window; records `desired`.
pub fn stabilize_with_behavior(
    recommendations: &mut Recommendations,
    behavior: &EffectiveBehavior,
    current: i32,
    desired: i32,
    now: Millis,
) -> (i32, &'static str) {
    let (up_window, down_window) = (behavior.scale_up.window(), behavior.scale_down.window());
    let min_up = recommendations
        .lowest(now, up_window)
        .map_or(desired, |lowest| lowest.min(desired));
    let max_down = recommendations
        .highest(now, down_window)
        .map_or(desired, |highest| highest.max(desired));
    let stabilized = current.max(min_up).min(max_down);
    // A slot is reused once outside both windows.
    recommendations.record(desired, now, up_window.max(down_window));
    let reason = if desired >= current {
        SCALE_UP_STABILIZED
    } else {
        SCALE_DOWN_STABILIZED
    };
    (stabilized, reason)
}

/// `convertDesiredReplicasWithBehaviorRate` (C7.3).
pub fn convert_with_behavior(
    behavior: &EffectiveBehavior,
    memory: &Memory,
    current: i32,
    desired: i32,
    min: i32,
    max: i32,
    now: Millis,
) -> (i32, &'static str) {
    if desired > current {
        let limit = behavior
            .scale_up
            .limit(current, memory, now, true)
            .max(current);
        let (allowed, why) = if max > limit {
            (limit, SCALE_UP_LIMIT)
        } else {
            (max, TOO_MANY_REPLICAS)
        };
        if desired > allowed {
            return (allowed, why);
        }
    } else if desired < current {
        let limit = behavior
            .scale_down
            .limit(current, memory, now, false)
            .min(current);
        let (allowed, why) = if min < limit {
            (limit, SCALE_DOWN_LIMIT)
        } else {
            (min, TOO_FEW_REPLICAS)
        };
        if desired < allowed {
            return (allowed, why);
        }
    }
    (desired, DESIRED_WITHIN_RANGE)
}

/// `normalizeDesiredReplicasWithBehaviors` (C7).
pub fn normalize_with_behavior(
    memory: &mut Memory,
    behavior: &EffectiveBehavior,
    current: i32,
    desired: i32,
    min: i32,
    max: i32,
    now: Millis,
) -> Normalized {
    let recommendations = memory
        .recommendations
        .get_or_insert_with(Recommendations::default);
    let (stabilized, reason) =
        stabilize_with_behavior(recommendations, behavior, current, desired, now);
    let (result, why) = convert_with_behavior(behavior, memory, current, stabilized, min, max, now);
    Normalized {
        stabilized,
        desired: result,
        able_to_scale: if stabilized == desired {
            READY_FOR_NEW_SCALE
        } else {
            reason
        },
        scaling_limited: why,
    }
}

/// `storeScaleEvent` (C7.5): after a successful rescale, with `behavior` only.
/// Events older than the direction's longest period are marked outdated; the
/// new one takes the last outdated slot, or is appended.
pub fn store_scale_event(
    memory: &mut Memory,
    behavior: Option<&EffectiveBehavior>,
    previous: i32,
    new: i32,
    now: Millis,
) {
    let Some(behavior) = behavior else {
        return;
    };
    let (events, rules, change) = if new > previous {
        (
            &mut memory.up_events,
            &behavior.scale_up,
            new.wrapping_sub(previous),
        )
    } else {
        (
            &mut memory.down_events,
            &behavior.scale_down,
            previous.wrapping_sub(new),
        )
    };
    events.store(change, now, rules.longest_period());
}
