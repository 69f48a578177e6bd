//! The simulator's pod model and trace-driven run: the cluster side that the
//! controller (reconcile.rs) reads at every sync.
//!
//! Pod model (docs/simulate.md, "Pod model"): at time 0 the starting pods are Running
//! and Ready since long before. A scale-up by k at a sync at time t creates k
//! Running pods started at t, not Ready (transition at t), Ready from
//! t + startup (transition then). A scale-down by k deletes the k most
//! recently created pods at once. At every sync every pod reports a sample
//! stamped with the sync's time and the metric window: Ready pods share the
//! demand equally in milli-units (floor share, one more for the first
//! `total mod ready` Ready pods in creation order), pods not yet Ready report 0.

use super::flags::Millis;
use super::reconcile::{
    Autoscaler, Conditions, MetricKind, Observation, Outcome, Reading, Source, State,
};
use super::replicas::{Phase, PodMetrics, PodState, ReadyCondition, Sample};

/// "Since long before": far enough in the past for every flag, near enough
/// that no arithmetic on it overflows.
const LONG_AGO: Millis = -(1 << 50);

/// The most pods the model holds: it follows each pod, and 150,000 is the
/// most a Kubernetes cluster supports.
pub const MAX_PODS: i32 = 150_000;

/// A sync that would scale past [`MAX_PODS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "at {}s the controller scales to {desired} replicas: more pods than the simulation follows ({MAX_PODS}, the most a Kubernetes cluster supports)",
    time / 1000
)]
pub struct TooManyPods {
    /// The sync's time.
    pub time: Millis,
    /// What the controller set.
    pub desired: i32,
}

/// The model's options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Model {
    /// Replicas at time 0.
    pub replicas: i32,
    /// From a scale-up until the new pods are Ready.
    pub pod_startup: Millis,
    /// The metric samples' window.
    pub metric_window: Millis,
}

/// The demand at one sync.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Demand {
    /// The controller's raw recommendation.
    Replicas(i32),
    /// Per metric of the HPA, in milli-units: the workload's total for
    /// per-pod metrics, the reported value for Object and External ones.
    Metrics(Vec<i64>),
}

/// One sync of a simulation.
#[derive(Clone, Debug)]
pub struct Step {
    /// The sync's time.
    pub time: Millis,
    /// Replicas when the sync started.
    pub current: i32,
    /// Pods that were Ready at the sync.
    pub ready: i32,
    /// What the controller decided.
    pub outcome: Outcome,
    /// The status conditions after the sync.
    pub conditions: Conditions,
}

#[derive(Clone, Copy)]
struct Pod {
    created: Millis,
    ready_at: Millis,
}

/// A running simulation of one HPA.
pub struct Simulation<'a> {
    autoscaler: &'a Autoscaler,
    model: Model,
    /// Each metric's per-pod request (utilization metrics), or the error the
    /// controller would meet computing it.
    requests: Vec<Result<i64, String>>,
    state: State,
    pods: Vec<Pod>,
}

impl<'a> Simulation<'a> {
    /// A simulation at time 0, before the first sync.
    pub fn new(
        autoscaler: &'a Autoscaler,
        model: Model,
        requests: Vec<Result<i64, String>>,
    ) -> Self {
        let count = usize::try_from(model.replicas).unwrap_or(0);
        Self {
            autoscaler,
            model,
            requests,
            state: State::at_rest(autoscaler, model.replicas),
            pods: vec![
                Pod {
                    created: LONG_AGO,
                    ready_at: LONG_AGO
                };
                count
            ],
        }
    }

    /// Runs the sync at `now` with this demand, then scales the pods.
    pub fn sync(&mut self, now: Millis, demand: &Demand) -> Result<Step, TooManyPods> {
        let states: Vec<PodState> = self
            .pods
            .iter()
            .map(|pod| {
                let ready = now >= pod.ready_at;
                PodState {
                    phase: Phase::Running,
                    deleting: false,
                    start: Some(pod.created),
                    ready: Some(ReadyCondition::new(
                        ready,
                        if ready { pod.ready_at } else { pod.created },
                    )),
                }
            })
            .collect();
        let ready_count = states
            .iter()
            .filter(|p| p.ready.is_some_and(|r| r.ready))
            .count();
        let current = i32::try_from(self.pods.len()).unwrap_or(i32::MAX);
        let window = self.model.metric_window;
        type PerMetric<'r> = (Vec<Vec<Option<Sample>>>, Vec<Result<Vec<i64>, &'r str>>);
        let (samples, request_lists): PerMetric<'_> = match demand {
            Demand::Replicas(_) => (Vec::new(), Vec::new()),
            Demand::Metrics(totals) => totals
                .iter()
                .zip(&self.requests)
                .map(|(&total, request)| {
                    let shares = spread(total, &states, ready_count);
                    let samples = shares
                        .into_iter()
                        .map(|value| {
                            Some(Sample {
                                value,
                                timestamp: now,
                                window,
                            })
                        })
                        .collect();
                    let requests = request
                        .as_ref()
                        .map(|r| vec![*r; states.len()])
                        .map_err(String::as_str);
                    (samples, requests)
                })
                .unzip(),
        };
        let readings: Vec<Reading<'_>> = match demand {
            Demand::Replicas(_) => Vec::new(),
            Demand::Metrics(totals) => self
                .autoscaler
                .metrics
                .iter()
                .enumerate()
                .map(|(i, kind)| match kind {
                    MetricKind::Resource { .. } | MetricKind::Pods { .. } => {
                        Reading::PerPod(PodMetrics {
                            pods: &states,
                            samples: &samples[i],
                            unlisted: &[],
                            requests: request_lists[i].as_deref().map_err(|e| *e),
                        })
                    }
                    _ => Reading::Total(totals[i]),
                })
                .collect(),
        };
        let source = match demand {
            Demand::Replicas(replicas) => Source::Recommendation(*replicas),
            Demand::Metrics(_) => Source::Metrics(&readings),
        };
        let observation = Observation {
            now,
            spec_replicas: current,
            status_replicas: current,
            pods: &states,
            source,
        };
        let outcome = self.autoscaler.reconcile(&mut self.state, &observation);
        if outcome.desired > MAX_PODS {
            return Err(TooManyPods {
                time: now,
                desired: outcome.desired,
            });
        }
        let desired = usize::try_from(outcome.desired).unwrap_or(0);
        if desired > self.pods.len() {
            let pod = Pod {
                created: now,
                ready_at: now.saturating_add(self.model.pod_startup),
            };
            self.pods.resize(desired, pod);
        } else {
            self.pods.truncate(desired);
        }
        Ok(Step {
            time: now,
            current,
            ready: i32::try_from(ready_count).unwrap_or(i32::MAX),
            outcome,
            conditions: self.state.conditions,
        })
    }
}

/// Each pod's share of `total`: Ready pods split it, the others report 0.
fn spread(total: i64, pods: &[PodState], ready: usize) -> Vec<i64> {
    let ready = i64::try_from(ready).unwrap_or(i64::MAX);
    let (base, mut extra) = if ready == 0 {
        (0, 0)
    } else {
        (total / ready, total % ready)
    };
    pods.iter()
        .map(|pod| {
            if !pod.ready.is_some_and(|r| r.ready) {
                return 0;
            }
            let one_more = i64::from(extra > 0);
            extra -= one_more;
            base + one_more
        })
        .collect()
}
