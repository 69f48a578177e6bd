//! The reporting mode: the rules, the live ones included, over the HPAs the
//! caches hold, again whenever something they read changes (debounced, see
//! [`crate::changes`]) and every period for the rules that judge durations.
//! Every replica evaluates and exports the findings as metrics; the one that
//! holds the Lease also writes policy reports and Events.

pub mod evaluate;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::cache::ClusterIndex;
use crate::metrics::Metrics;
use crate::policy::SharedPolicy;
use evaluate::{Findings, evaluate, now};

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

/// Evaluates until the process ends; `after` gets every round.
pub async fn run(
    index: Arc<ClusterIndex>,
    policy: SharedPolicy,
    metrics: Arc<Metrics>,
    options: Options,
    mut after: impl AsyncFnMut(Round<'_>),
) {
    index.wait_until_synced().await;
    let mut findings = Findings::new();
    let mut current = policy.current();
    let mut next_period = Instant::now();
    index.changes().everything();
    loop {
        let mut dirty = index
            .changes()
            .settled(options.quiet, options.most, next_period)
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
        after(Round {
            changed,
            findings: &findings,
        })
        .await;
    }
}
