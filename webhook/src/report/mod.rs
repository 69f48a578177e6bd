//! The reporting mode: the rules, the live ones included, over the HPAs the
//! caches hold, again whenever something they read changes (debounced, see
//! [`crate::changes`]) and every period for the rules that judge durations.
//! Every replica evaluates and exports the findings as metrics; the one that
//! holds the Lease also writes policy reports and Events.

pub mod evaluate;
pub mod lease;
pub mod reports;
pub mod writer;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use kube::Client;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::cache::ClusterIndex;
use crate::metrics::Metrics;
use crate::policy::SharedPolicy;
use evaluate::{Findings, evaluate, now};
use lease::LeaseOptions;
use writer::{Writer, WriterOptions};

/// How the reporting mode runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// Evaluate once no change came for this long...
    pub quiet: Duration,
    /// ...or at most this long after the first change.
    pub most: Duration,
    /// Evaluate everything at least this often (for the rules that judge
    /// how long a condition has held).
    pub period: Duration,
    /// Export a findings series per HPA (else per namespace).
    pub per_hpa_metrics: bool,
}

/// The namespaces whose findings changed in a round, and the findings of all.
pub struct Round<'a> {
    /// Namespaces whose findings differ from the round before (or that
    /// hold no HPA any more).
    pub changed: BTreeSet<String>,
    /// Every namespace's findings.
    pub findings: &'a Findings,
}

/// Evaluates until the process ends; `after` gets every round, and says
/// how soon it wants another one (to retry what it could not do).
pub async fn run(
    index: Arc<ClusterIndex>,
    policy: SharedPolicy,
    metrics: Arc<Metrics>,
    options: Options,
    mut after: impl AsyncFnMut(Round<'_>) -> Option<Duration>,
) {
    index.wait_until_synced().await;
    let mut findings = Findings::new();
    let mut current = policy.current();
    let mut next_period = Instant::now();
    let mut again: Option<Instant> = None;
    index.changes().everything();
    loop {
        let deadline = again.map_or(next_period, |again| again.min(next_period));
        let mut dirty = index
            .changes()
            .settled(options.quiet, options.most, deadline)
            .await;
        let latest = policy.current();
        if Instant::now() >= next_period || !Arc::ptr_eq(&latest, &current) {
            dirty.all = true;
            next_period = Instant::now() + options.period;
            current = latest;
        }
        let started = Instant::now();
        let settings = current.live_settings(Some(now()));
        let known: Findings = findings.keys().map(|ns| (ns.clone(), Vec::new())).collect();
        let index_for_round = Arc::clone(&index);
        // The rules run off the runtime's threads, which serve admission.
        let evaluated = tokio::task::spawn_blocking(move || {
            evaluate(&index_for_round, &settings, &dirty, &known)
        })
        .await
        .unwrap_or_default();
        let mut changed = BTreeSet::new();
        for (namespace, hpas) in evaluated {
            if findings.get(&namespace) == Some(&hpas) {
                continue;
            }
            metrics.hpa_findings(&namespace, &hpas, options.per_hpa_metrics);
            changed.insert(namespace.clone());
            if hpas.is_empty() {
                findings.remove(&namespace);
            } else {
                findings.insert(namespace, hpas);
            }
        }
        metrics.evaluated(now() / 1000, started.elapsed());
        again = after(Round {
            changed,
            findings: &findings,
        })
        .await
        .map(|delay| Instant::now() + delay);
    }
}

/// The reporting mode, running.
pub struct Reporting {
    stop: watch::Sender<bool>,
    lease: JoinHandle<()>,
}

impl Reporting {
    /// Starts evaluating, holding the Lease when it can and writing while
    /// it does.
    pub fn start(
        client: Client,
        index: Arc<ClusterIndex>,
        policy: SharedPolicy,
        metrics: Arc<Metrics>,
        options: Options,
        writer: WriterOptions,
        lease: LeaseOptions,
    ) -> Self {
        let (stop, stopping) = watch::channel(false);
        let (leading, mut led) = watch::channel(false);
        let mut writer = Writer::new(client.clone(), writer, Arc::clone(&metrics), led.clone());
        let lease = tokio::spawn(lease::hold(client, lease, leading, stopping));
        // A change of leadership is a reason for a round.
        let changes = Arc::clone(index.changes());
        tokio::spawn(async move {
            while led.changed().await.is_ok() {
                changes.nudge();
            }
        });
        tokio::spawn(run(index, policy, metrics, options, async move |round| {
            writer.after(round).await
        }));
        Self { stop, lease }
    }

    /// Stops writing and releases the Lease (waiting a few seconds at most).
    pub async fn stop(self) {
        self.stop.send_replace(true);
        let _ = tokio::time::timeout(Duration::from_secs(3), self.lease).await;
    }
}
