//! Figures derived from an HPA's behavior: the fastest way from `minReplicas`
//! to `maxReplicas` and back under sustained demand, and which scaling policy
//! sets the largest step at which replica count. Both come from the same
//! normalization the controller runs, never from a formula of their own.

use super::flags::Millis;
use super::normalize::{Policy, Rules, SCALE_DOWN_LIMIT, SCALE_UP_LIMIT, Select};
use super::reconcile::{Autoscaler, Observation, Source, State};

/// How far a path is followed before it counts as never arriving.
const HORIZON: Millis = 24 * 3_600_000;

/// What held a step of a path back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Limiter {
    /// The legacy path's `max(2 × current, 4)` per sync (no `behavior`).
    LegacyLimit,
    /// These policies of the direction (indices into its `policies`).
    Policies(Vec<usize>),
}

/// The fastest path between the bounds under sustained demand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    /// Replicas at time 0, the last sync before the demand changes.
    pub from: i32,
    /// Replicas the demand asks for.
    pub to: i32,
    /// `(time, replicas)` after each change, in order.
    pub steps: Vec<(Millis, i32)>,
    /// When `to` is reached; `None` when it never is (within a day).
    pub arrival: Option<Millis>,
    /// What held each step back, when something did.
    pub limiters: Vec<Option<Limiter>>,
}

impl Path {
    /// The first sync at which the replicas changed.
    pub fn first_change(&self) -> Option<Millis> {
        self.steps.first().map(|s| s.0)
    }

    /// Indices of the policies that held back the most steps.
    pub fn main_limiter(&self) -> Option<&Limiter> {
        let mut best: Option<(&Limiter, usize)> = None;
        for limiter in self.limiters.iter().flatten() {
            let count = self
                .limiters
                .iter()
                .flatten()
                .filter(|l| *l == limiter)
                .count();
            if best.is_none_or(|(_, c)| count > c) {
                best = Some((limiter, count));
            }
        }
        best.map(|(l, _)| l)
    }
}

/// The fastest scale-up (`up`) from `minReplicas` to `maxReplicas`, or
/// scale-down from `maxReplicas` to `minReplicas`. Time 0 is the last sync
/// at the start count (its recommendation was that count, and the HPA had
/// been there long before); every sync from then on recommends the other
/// bound, as sustained demand does.
pub fn fastest(autoscaler: &Autoscaler, up: bool) -> Path {
    fastest_within(autoscaler, up, HORIZON)
}

/// [`fastest`], followed for `horizon` at most.
pub fn fastest_within(autoscaler: &Autoscaler, up: bool, horizon: Millis) -> Path {
    let (from, to) = if up {
        (autoscaler.min_replicas, autoscaler.max_replicas)
    } else {
        (autoscaler.max_replicas, autoscaler.min_replicas)
    };
    let period = autoscaler.flags.sync_period.max(1);
    let mut state = State::default();
    let mut path = Path {
        from,
        to,
        steps: Vec::new(),
        arrival: (from == to).then_some(0),
        limiters: Vec::new(),
    };
    let mut current = from;
    let mut now = 0;
    while path.arrival.is_none() && now <= horizon {
        let recommendation = if now == 0 { from } else { to };
        let rules = autoscaler
            .behavior
            .as_ref()
            .map(|b| if up { &b.scale_up } else { &b.scale_down });
        let winners = rules.map(|rules| {
            let limits = rules.policy_limits(current, &state.memory, now, up);
            let selected = rules.select_limit(current, &limits, up);
            (0..limits.len())
                .filter(|&i| limits[i] == selected)
                .collect::<Vec<_>>()
        });
        let observation = Observation {
            now,
            spec_replicas: current,
            status_replicas: current,
            pods: &[],
            source: Source::Recommendation(recommendation),
        };
        let outcome = autoscaler.reconcile(&mut state, &observation);
        let limited = outcome.normalized.is_some_and(|n| {
            n.scaling_limited == SCALE_UP_LIMIT || n.scaling_limited == SCALE_DOWN_LIMIT
        });
        if outcome.rescaled {
            path.steps.push((now, outcome.desired));
            path.limiters
                .push(limited.then(|| winners.map_or(Limiter::LegacyLimit, Limiter::Policies)));
            current = outcome.desired;
            if current == to {
                path.arrival = Some(now);
            }
        }
        now += period;
    }
    path
}

/// One row of the step table: the largest step from `replicas` (with no
/// scale event in any period) and the policies that allow it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepRow {
    /// The count at the period's start.
    pub replicas: i32,
    /// The limit `selectPolicy` picks: the count the direction can reach in one period.
    pub limit: i32,
    /// The policies whose limit it is.
    pub winners: Vec<usize>,
}

/// The step table's row of a direction at a count.
pub fn step(rules: &Rules, up: bool, replicas: i32) -> StepRow {
    let limits: Vec<i32> = rules
        .policies
        .iter()
        .map(|p| p.limit(replicas, up))
        .collect();
    let limit = rules.select_limit(replicas, &limits, up);
    let winners = (0..limits.len()).filter(|&i| limits[i] == limit).collect();
    StepRow {
        replicas,
        limit,
        winners,
    }
}

/// The most policy limits a walk over replica counts computes (counts ×
/// policies): the figures below are exact within it, and an admission
/// review with hundreds of policies over a wide range stays cheap.
pub const MAX_COMPARISONS: i64 = 2_000_000;

/// The last count from `min` towards `max` that a walk comparing `policies`
/// policies at each count reaches within [`MAX_COMPARISONS`].
fn walk_end(min: i32, max: i32, policies: usize) -> i32 {
    let counts = MAX_COMPARISONS / i64::try_from(policies.max(1)).unwrap_or(i64::MAX);
    i32::try_from(i64::from(min) + counts - 1).map_or(max, |end| end.min(max))
}

/// The counts between `min` and `max` at which the winning policies change,
/// plus both bounds: where the step table says something. Changes are looked
/// for as far as [`MAX_COMPARISONS`] allows.
pub fn turning_points(rules: &Rules, up: bool, min: i32, max: i32) -> Vec<i32> {
    let mut counts = vec![min];
    let mut previous = None;
    for replicas in min..=walk_end(min, max, rules.policies.len()) {
        let row = step(rules, up, replicas);
        if previous.as_ref().is_some_and(|p| *p != row.winners) {
            counts.push(row.replicas);
        }
        previous = Some(row.winners);
    }
    if *counts.last().unwrap_or(&min) != max {
        counts.push(max);
    }
    counts
}

/// The policies that can never be the one applied (C7.3): at every count
/// from `min` to `max` at a period's start, a policy with the same period
/// (which counts the same events, so starts from the same count) allows a
/// strictly larger change under `Max` (smaller under `Min`). Policies of other
/// periods are not compared: which of those wins depends on the scale events.
/// `None` when the direction is disabled or the walk would take more than
/// [`MAX_COMPARISONS`].
pub fn ineffective_policies(rules: &Rules, up: bool, min: i32, max: i32) -> Option<Vec<usize>> {
    let policies: &[Policy] = &rules.policies;
    if rules.select == Select::Disabled || walk_end(min, max, policies.len()) < max {
        return None;
    }
    // A higher limit is a larger change up and a smaller change down.
    let higher_wins = (rules.select == Select::Max) == up;
    let better = |a: i32, b: i32| if higher_wins { a.max(b) } else { a.min(b) };
    // The policies of each period: only they compete with each other.
    let mut periods: Vec<Vec<usize>> = Vec::new();
    for (p, policy) in policies.iter().enumerate() {
        match periods
            .iter_mut()
            .find(|group| policies[group[0]].period_seconds == policy.period_seconds)
        {
            Some(group) => group.push(p),
            None => periods.push(vec![p]),
        }
    }
    // Policies beaten at every count walked so far; one without a rival of
    // its period never is.
    let mut beaten = vec![false; policies.len()];
    for group in periods.iter().filter(|group| group.len() > 1) {
        for &p in group {
            beaten[p] = true;
        }
    }
    let mut limits = vec![0; policies.len()];
    for start in min..=max {
        if !beaten.contains(&true) {
            break;
        }
        for (limit, policy) in limits.iter_mut().zip(policies) {
            *limit = policy.limit(start, up);
        }
        for group in &periods {
            let best = group.iter().map(|&p| limits[p]).reduce(better);
            for &p in group {
                // Beaten: the best limit of its period is not its own.
                beaten[p] &= best != Some(limits[p]);
            }
        }
    }
    Some((0..policies.len()).filter(|&p| beaten[p]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::hpa::{ScalingPolicy, default_scaling_rules};

    /// Scale-up rules with Pods policies of these values, all per minute.
    fn pods_per_minute(values: impl IntoIterator<Item = i32>) -> Rules {
        let mut spec = default_scaling_rules("scaleUp");
        spec.policies = Some(
            values
                .into_iter()
                .map(|value| ScalingPolicy {
                    type_: "Pods".into(),
                    value,
                    period_seconds: 60,
                })
                .collect(),
        );
        Rules::from_spec(&spec, 0)
    }

    #[test]
    fn policy_comparisons_stay_within_their_budget() {
        // Under Max, every Pods policy but the largest is beaten everywhere.
        let rules = pods_per_minute(1..=200);
        let never: Vec<usize> = (0..199).collect();
        assert_eq!(ineffective_policies(&rules, true, 1, 10_000), Some(never));
        // 200 policies over a million counts is past the budget: not judged.
        assert_eq!(ineffective_policies(&rules, true, 1, 1_000_000), None);
        // The step table still ends at the bounds.
        let points = turning_points(&rules, true, 1, i32::MAX);
        assert_eq!((points[0], points[points.len() - 1]), (1, i32::MAX));
    }
}
