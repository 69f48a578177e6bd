//! The figures of one spec's run, tallied sync by sync: cost, size, time at
//! the ceiling, under-provisioning, churn and the lag behind the biggest rise.
//!
//! A sync's observation (its replicas, its Ready pods, the demand) stands for
//! the sync period before it: a run from 0 to `end` covers `end`, and its
//! first sync only sets the start.

use anyhow::Result;
use hpa_lint_rules::controller::Millis;
use hpa_lint_rules::controller::simulate::Step;

use crate::loads::per_pod_target;
use crate::simulate::{Setup, Sink};

/// The largest excess over target: per-pod demand ÷ target, at a time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Worst {
    /// Per-pod demand over target (1.5: 50 % above); infinite when no pod
    /// was Ready to take a demand.
    pub ratio: f64,
    pub time: Millis,
}

/// The biggest rise of the replicas the demand needs, and when the spec
/// reached them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rise {
    pub from: i32,
    pub to: i32,
    /// The first sync at which the demand needed `to`.
    pub at: Millis,
    /// From `at` to the first sync that set at least `to` replicas.
    pub reached_after: Option<Millis>,
}

/// One spec's figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Replicas × milliseconds.
    pub pod_ms: i64,
    pub peak: i32,
    /// The time covered.
    pub span: Millis,
    pub at_max: Millis,
    /// Time with the per-pod demand above a metric's target by more than
    /// the scale-up tolerance.
    pub under: Millis,
    pub worst: Option<Worst>,
    pub scale_ups: i64,
    pub scale_downs: i64,
    pub rise: Option<Rise>,
}

impl Summary {
    pub fn pod_hours(&self) -> f64 {
        self.pod_ms as f64 / 3_600_000.0
    }

    /// Replicas averaged over time (the replicas at time 0 for a run of one sync).
    pub fn mean(&self) -> f64 {
        if self.span == 0 {
            f64::from(self.peak)
        } else {
            self.pod_ms as f64 / self.span as f64
        }
    }

    pub fn scale_events(&self) -> i64 {
        self.scale_ups + self.scale_downs
    }
}

/// Tallies a [`Summary`] as the syncs come.
pub struct Tally {
    period: Millis,
    min: i32,
    max: i32,
    /// The scale-up tolerance: the controller does not add pods while the
    /// demand is within it.
    tolerance: f64,
    /// Per metric with a per-pod target: its trace column and the target per
    /// pod in milli-units.
    targets: Vec<(usize, f64)>,
    summary: Summary,
    first: bool,
    /// The fewest replicas needed so far, for the biggest rise.
    lowest_need: Option<i32>,
}

impl Tally {
    pub fn new(setup: &Setup<'_>, requests: &[Result<i64, String>]) -> Self {
        let a = setup.autoscaler;
        let targets = setup
            .metrics
            .iter()
            .enumerate()
            .filter_map(|(m, shown)| {
                let column = shown.as_ref()?.1?;
                let per_pod = per_pod_target(&a.metrics[m], requests.get(m))?;
                (per_pod > 0.0).then_some((column, per_pod))
            })
            .collect();
        Self {
            period: a.flags.sync_period,
            min: a.min_replicas,
            max: a.max_replicas,
            tolerance: a.tolerances.up,
            targets,
            summary: Summary::default(),
            first: true,
            lowest_need: None,
        }
    }

    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// The fewest replicas at which the controller stops adding pods for
    /// this demand, within the bounds; `None` without a per-pod target.
    fn need(&self, demand: &[i64]) -> Option<i32> {
        self.targets
            .iter()
            .map(|&(column, per_pod)| {
                let pods = (demand[column] as f64 / (per_pod * (1.0 + self.tolerance))).ceil();
                pods.min(f64::from(i32::MAX)) as i32
            })
            .max()
            .map(|need| need.clamp(self.min, self.max.max(self.min)))
    }

    /// The largest per-pod demand over its target, the demand shared by the
    /// Ready pods.
    fn load(&self, demand: &[i64], ready: i32) -> Option<f64> {
        self.targets
            .iter()
            .map(|&(column, per_pod)| {
                let total = demand[column] as f64;
                match (total > 0.0, ready) {
                    (false, _) => 0.0,
                    (true, 0) => f64::INFINITY,
                    (true, ready) => total / f64::from(ready) / per_pod,
                }
            })
            .reduce(f64::max)
    }

    fn track_rise(&mut self, step: &Step, need: i32) {
        let s = &mut self.summary;
        let lowest = *self.lowest_need.get_or_insert(need);
        let biggest = s.rise.map_or(0, |r| r.to - r.from);
        if need - lowest > biggest {
            s.rise = Some(Rise {
                from: lowest,
                to: need,
                at: step.time,
                reached_after: None,
            });
        }
        if let Some(rise) = &mut s.rise
            && rise.reached_after.is_none()
            && step.outcome.desired >= rise.to
        {
            rise.reached_after = Some(step.time - rise.at);
        }
        self.lowest_need = Some(lowest.min(need));
    }
}

impl Sink for Tally {
    fn step(&mut self, step: &Step, demand: &[i64], _: Option<i32>) -> Result<()> {
        let current = step.current;
        let desired = step.outcome.desired;
        let s = &mut self.summary;
        s.peak = s.peak.max(current);
        match desired.cmp(&current) {
            std::cmp::Ordering::Greater => s.scale_ups += 1,
            std::cmp::Ordering::Less => s.scale_downs += 1,
            std::cmp::Ordering::Equal => {}
        }
        let first = std::mem::take(&mut self.first);
        if !first {
            let period = self.period;
            s.span += period;
            s.pod_ms = s.pod_ms.saturating_add(i64::from(current) * period);
            if current >= self.max {
                s.at_max += period;
            }
        }
        if !demand.is_empty() {
            if let Some(ratio) = self.load(demand, step.ready).filter(|_| !first) {
                let s = &mut self.summary;
                // Within the tolerance the controller adds no pods on purpose.
                if ratio > 1.0 + self.tolerance {
                    s.under += self.period;
                }
                if ratio > 1.0 && s.worst.is_none_or(|w| ratio > w.ratio) {
                    s.worst = Some(Worst {
                        ratio,
                        time: step.time,
                    });
                }
            }
            if let Some(need) = self.need(demand) {
                self.track_rise(step, need);
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}
