//! Figures derived from an HPA's behavior: the fastest way from `minReplicas`
//! to `maxReplicas` and back under sustained demand, and which scaling policy
//! sets the largest step at which replica count. Both come from the same
//! normalization the controller runs, never from a formula of their own.

use super::flags::Millis;
use super::normalize::{Policy, Rules, SCALE_DOWN_LIMIT, SCALE_UP_LIMIT, Select};
use super::reconcile::{Autoscaler, Observation, Source, State};

/// How far a path is followed at most: a day.
pub const HORIZON: Millis = 24 * 3_600_000;

/// The most policy limits a path computes (syncs × (policies + 1)): with a
/// short sync period or many policies, the path ends sooner than
/// [`HORIZON`] (1,000,000 syncs with the two default policies).
pub const MAX_PATH_WORK: i64 = 3_000_000;

/// What held a step of a path back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Limiter {
    /// The legacy path's `max(2 × current, 4)` per sync (no `behavior`).
    LegacyLimit,
    /// These policies of the direction (indices into its `policies`).
    Policies(Vec<usize>),
}

/// How a path ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The other bound was reached at this time.
    Arrived(Millis),
    /// From this sync on, nothing the controller remembers changes any more
    /// (every window and policy period is past the last change), and each
    /// sync decides the same: the other bound is never reached.
    Stuck(Millis),
    /// Still on its way when the path stopped being followed, at this time:
    /// the horizon, or the most syncs the work bound allows.
    Unfinished(Millis),
}

/// A scale update the API server refuses: its count is negative, from Go's
/// `int32` arithmetic (the legacy path's `int32(2 × current)` once
/// `current` passes 2³⁰), and `spec.replicas` must be at least 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The first sync that asked for it (each later one asks again).
    pub time: Millis,
    /// The count asked for.
    pub replicas: i32,
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
    /// How it ended.
    pub end: End,
    /// What held each step back, when something did.
    pub limiters: Vec<Option<Limiter>>,
    /// A scale update the API server refused on the way, if any.
    pub refused: Option<Refused>,
}

impl Path {
    /// When `to` is reached, if it is within the path.
    pub fn arrival(&self) -> Option<Millis> {
        match self.end {
            End::Arrived(time) => Some(time),
            End::Stuck(_) | End::Unfinished(_) => None,
        }
    }

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

/// How long the controller's memory of a change matters: past every
/// stabilization window and policy period after the last change, a sync
/// under the same demand decides as the one before.
fn memory_span(autoscaler: &Autoscaler) -> Millis {
    match &autoscaler.behavior {
        None => autoscaler.flags.downscale_stabilization,
        Some(b) => [
            b.scale_up.window(),
            b.scale_down.window(),
            b.scale_up.longest_period(),
            b.scale_down.longest_period(),
        ]
        .into_iter()
        .max()
        .unwrap_or(0),
    }
}

/// The most syncs a path of this HPA follows within [`MAX_PATH_WORK`].
pub fn max_path_syncs(autoscaler: &Autoscaler) -> i64 {
    let policies = autoscaler.behavior.as_ref().map_or(0, |b| {
        b.scale_up.policies.len().max(b.scale_down.policies.len())
    });
    let per_sync = i64::try_from(policies)
        .unwrap_or(i64::MAX)
        .saturating_add(1);
    (MAX_PATH_WORK / per_sync).max(1)
}

/// The longest a path of this HPA can be followed within [`MAX_PATH_WORK`].
fn work_horizon(autoscaler: &Autoscaler) -> Millis {
    let period = autoscaler.flags.sync_period.max(1);
    period.saturating_mul(max_path_syncs(autoscaler) - 1)
}

/// The fastest scale-up (`up`) from `minReplicas` to `maxReplicas`, or
/// scale-down from `maxReplicas` to `minReplicas`. Time 0 is the last sync
/// at the start count (its recommendation was that count, and the HPA had
/// been there long before, see [`State::at_rest`]); every sync from then on
/// recommends the other bound, as sustained demand does. Followed until the
/// bound is reached, the path is stuck, or [`HORIZON`].
pub fn fastest(autoscaler: &Autoscaler, up: bool) -> Path {
    fastest_within(autoscaler, up, HORIZON)
}

/// [`fastest`], followed for `horizon` at most, and no further than
/// [`MAX_PATH_WORK`] allows.
pub fn fastest_within(autoscaler: &Autoscaler, up: bool, horizon: Millis) -> Path {
    // At least the first sync after time 0, however long the sync period.
    let horizon = horizon
        .min(work_horizon(autoscaler))
        .max(autoscaler.flags.sync_period);
    let (from, to) = if up {
        (autoscaler.min_replicas, autoscaler.max_replicas)
    } else {
        (autoscaler.max_replicas, autoscaler.min_replicas)
    };
    let period = autoscaler.flags.sync_period.max(1);
    let span = memory_span(autoscaler);
    let mut state = State::at_rest(autoscaler, from);
    let mut path = Path {
        from,
        to,
        steps: Vec::new(),
        end: End::Arrived(0),
        limiters: Vec::new(),
        refused: None,
    };
    if from == to {
        return path;
    }
    let rules = autoscaler
        .behavior
        .as_ref()
        .map(|b| if up { &b.scale_up } else { &b.scale_down });
    let mut current = from;
    let mut last_change = 0;
    let mut now = 0;
    // Each sync's policy limits, before it changes what the controller
    // remembers; the policies that win are collected only for a step.
    let mut limits = Vec::new();
    loop {
        let recommendation = if now == 0 { from } else { to };
        let selected = rules.map(|rules| {
            limits.clear();
            limits.extend(rules.policy_limits(current, &state.memory, now, up));
            rules.select_limit(current, &limits, up)
        });
        let observation = Observation {
            now,
            spec_replicas: current,
            status_replicas: current,
            pods: &[],
            source: Source::Recommendation(recommendation),
        };
        let outcome = autoscaler.reconcile(&mut state, &observation);
        if let Some(replicas) = outcome.refused {
            path.refused.get_or_insert(Refused {
                time: now,
                replicas,
            });
        }
        if outcome.rescaled {
            let limited = outcome.normalized.is_some_and(|n| {
                n.scaling_limited == SCALE_UP_LIMIT || n.scaling_limited == SCALE_DOWN_LIMIT
            });
            path.steps.push((now, outcome.desired));
            let winners = selected.map(|selected| {
                (0..limits.len())
                    .filter(|&i| limits[i] == selected)
                    .collect()
            });
            path.limiters
                .push(limited.then(|| winners.map_or(Limiter::LegacyLimit, Limiter::Policies)));
            current = outcome.desired;
            last_change = now;
            if current == to {
                path.end = End::Arrived(now);
                return path;
            }
        } else if now > 0 && now - last_change >= span {
            path.end = End::Stuck(now);
            return path;
        }
        if now + period > horizon {
            path.end = End::Unfinished(now);
            return path;
        }
        now += period;
    }
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
    // The policies of each period, told by its first one: only they
    // compete with each other. One list for all the walk keeps.
    let mut walked: Vec<Walked> = policies
        .iter()
        .enumerate()
        .map(|(p, policy)| Walked {
            first: policies[..p]
                .iter()
                .position(|other| other.period_seconds == policy.period_seconds)
                .unwrap_or(p),
            limit: 0,
            best: 0,
            beaten: false,
        })
        .collect();
    // Policies beaten at every count walked so far; one without a rival of
    // its period never is.
    for p in 0..walked.len() {
        let first = walked[p].first;
        if first != p {
            walked[p].beaten = true;
            walked[first].beaten = true;
        }
    }
    for start in min..=max {
        if !walked.iter().any(|w| w.beaten) {
            break;
        }
        for (w, policy) in walked.iter_mut().zip(policies) {
            w.limit = policy.limit(start, up);
        }
        for p in 0..walked.len() {
            let (first, limit) = (walked[p].first, walked[p].limit);
            walked[first].best = if first == p {
                limit
            } else {
                better(walked[first].best, limit)
            };
        }
        for p in 0..walked.len() {
            // Beaten: the best limit of its period is not its own.
            let best = walked[walked[p].first].best;
            walked[p].beaten &= best != walked[p].limit;
        }
    }
    Some((0..walked.len()).filter(|&p| walked[p].beaten).collect())
}

/// A policy in the walk of [`ineffective_policies`].
struct Walked {
    /// The first policy of its period, which holds the period's best limit.
    first: usize,
    /// Its limit at the count walked.
    limit: i32,
    /// The best limit of its period at that count, when it is the first.
    best: i32,
    /// Whether it was beaten at every count so far.
    beaten: bool,
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

    /// The walk finds the policies that the definition says are never
    /// applied: at every count, another of its period does better.
    #[test]
    fn ineffective_policies_are_those_always_beaten_in_their_period() {
        use super::super::normalize::PolicyKind;
        let kinds = [PolicyKind::Pods, PolicyKind::Percent];
        for seed in 0..400_usize {
            let count = 1 + seed % 5;
            let policies: Vec<Policy> = (0..count)
                .map(|i| {
                    let mix = seed / 5 + i * 7;
                    Policy {
                        kind: kinds[mix % 2],
                        value: i32::try_from(1 + mix % 13 * 9).unwrap(),
                        period_seconds: [15, 60, 15, 30][(mix / 3) % 4],
                    }
                })
                .collect();
            let mut rules = pods_per_minute([]);
            rules.policies = policies.clone();
            for select in [Select::Max, Select::Min] {
                rules.select = select;
                for (up, min, max) in [(true, 1, 40), (false, 2, 25), (true, 7, 7)] {
                    let higher_wins = (select == Select::Max) == up;
                    let never: Vec<usize> = (0..count)
                        .filter(|&p| {
                            (min..=max).all(|start| {
                                let own = policies[p].limit(start, up);
                                policies.iter().any(|other| {
                                    let theirs = other.limit(start, up);
                                    other.period_seconds == policies[p].period_seconds
                                        && if higher_wins {
                                            theirs > own
                                        } else {
                                            theirs < own
                                        }
                                })
                            })
                        })
                        .collect();
                    assert_eq!(
                        ineffective_policies(&rules, up, min, max),
                        Some(never),
                        "{policies:?} {select:?} {up} {min}..={max}"
                    );
                }
            }
        }
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
