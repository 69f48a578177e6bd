//! Prometheus metrics. The registry lives in the application state (no global
//! recorder), so every test and every server in a process has its own.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::admission::{Decision, Finding};
use crate::cache::ClusterIndex;
use crate::report::evaluate::HpaFindings;

/// Every label value comes from a fixed set (`&'static str`): each distinct
/// value is a series kept for the life of the process, so none may be taken
/// from a request.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    endpoint: &'static str,
    operation: &'static str,
    kind: &'static str,
    decision: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EndpointLabels {
    endpoint: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FindingLabels {
    rule: &'static str,
    action: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: &'static str,
}

/// The findings standing in the cluster: namespaces and HPAs are the
/// cluster's (as kube-state-metrics labels its series), and a series goes
/// when its HPA or its finding does.
#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
struct HpaFindingLabels {
    namespace: String,
    /// Empty when the per-HPA series are off.
    horizontalpodautoscaler: Option<String>,
    rule: &'static str,
    severity: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

/// Every metric the webhook exports.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<EndpointLabels, Histogram>,
    findings: Family<FindingLabels, Counter>,
    cache_objects: Family<KindLabels, Gauge>,
    certificate_expiry: Gauge,
    hpa_findings: Family<HpaFindingLabels, Gauge>,
    /// The series of [`Metrics::hpa_findings`] by namespace, to remove those
    /// that end.
    hpa_finding_series: Mutex<BTreeMap<String, BTreeMap<HpaFindingLabels, i64>>>,
    last_evaluation: Gauge,
    evaluation_duration: Histogram,
    leader: Gauge,
    report_writes: Family<OutcomeLabels, Counter>,
    events: Family<OutcomeLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("hpa_webhook");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "requests",
            "Admission reviews by endpoint, operation, kind and decision",
            requests.clone(),
        );
        // 50 µs to about 1.6 s.
        let latency = Family::<EndpointLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets(0.000_05, 2.0, 16))
        });
        registry.register(
            "request_duration_seconds",
            "Time from the start of a request to its answer, by endpoint",
            latency.clone(),
        );
        let findings = Family::<FindingLabels, Counter>::default();
        registry.register(
            "findings",
            "Findings by rule and what they did (deny, warn, log)",
            findings.clone(),
        );
        let cache_objects = Family::<KindLabels, Gauge>::default();
        registry.register(
            "cache_objects",
            "Objects in the caches, by kind",
            cache_objects.clone(),
        );
        let certificate_expiry = Gauge::default();
        registry.register(
            "certificate_expiry_timestamp_seconds",
            "When the serving certificate expires, in seconds since the epoch",
            certificate_expiry.clone(),
        );
        let hpa_findings = Family::<HpaFindingLabels, Gauge>::default();
        registry.register(
            "hpa_findings",
            "Findings standing on the HPAs in the cluster, by namespace, HPA, rule and severity (reporting mode)",
            hpa_findings.clone(),
        );
        let last_evaluation = Gauge::default();
        registry.register(
            "last_evaluation_timestamp_seconds",
            "When the reporting mode last evaluated HPAs, in seconds since the epoch",
            last_evaluation.clone(),
        );
        // 1 ms to about 33 s.
        let evaluation_duration = Histogram::new(exponential_buckets(0.001, 2.0, 16));
        registry.register(
            "evaluation_duration_seconds",
            "Time one evaluation round took (the rules over the HPAs of the namespaces that changed)",
            evaluation_duration.clone(),
        );
        let leader = Gauge::default();
        registry.register(
            "reporting_leader",
            "1 while this replica holds the Lease and writes reports and Events, else 0",
            leader.clone(),
        );
        let report_writes = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "report_writes",
            "Report writes by outcome (applied, deleted, failed)",
            report_writes.clone(),
        );
        let events = Family::<OutcomeLabels, Counter>::default();
        registry.register(
            "events",
            "Events about new findings by outcome (published, dropped by the rate limit, failed)",
            events.clone(),
        );
        Self {
            registry,
            requests,
            latency,
            findings,
            cache_objects,
            certificate_expiry,
            hpa_findings,
            hpa_finding_series: Mutex::default(),
            last_evaluation,
            evaluation_duration,
            leader,
            report_writes,
            events,
        }
    }
}

impl Metrics {
    /// Counts one answered review; `findings` as [`crate::admission::tally`]
    /// counts them.
    pub fn review(
        &self,
        endpoint: &'static str,
        operation: &'static str,
        kind: &'static str,
        decision: Decision,
        findings: &[(Finding, u64)],
        elapsed: Duration,
    ) {
        self.requests
            .get_or_create(&RequestLabels {
                endpoint,
                operation,
                kind,
                decision: decision.as_str(),
            })
            .inc();
        self.latency
            .get_or_create(&EndpointLabels { endpoint })
            .observe(elapsed.as_secs_f64());
        for (finding, count) in findings {
            self.findings
                .get_or_create(&FindingLabels {
                    rule: finding.rule,
                    action: finding.action.as_str(),
                })
                .inc_by(*count);
        }
    }

    /// Records when the serving certificate expires.
    pub fn certificate_expires_at(&self, seconds_since_epoch: i64) {
        self.certificate_expiry.set(seconds_since_epoch);
    }

    /// Replaces the findings series of `namespace` with those of `hpas`
    /// (none when the namespace holds no HPA any more); per HPA, or summed
    /// per namespace when `per_hpa` is off.
    pub fn hpa_findings(&self, namespace: &str, hpas: &[HpaFindings], per_hpa: bool) {
        let mut series: BTreeMap<HpaFindingLabels, i64> = BTreeMap::new();
        for hpa in hpas {
            for found in &hpa.found {
                let labels = HpaFindingLabels {
                    namespace: namespace.to_owned(),
                    horizontalpodautoscaler: per_hpa.then(|| hpa.name.clone()),
                    rule: found.rule.name,
                    severity: found.severity.as_str(),
                };
                *series.entry(labels).or_default() +=
                    i64::try_from(found.count).unwrap_or(i64::MAX);
            }
        }
        let mut all = self
            .hpa_finding_series
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let old = all.remove(namespace).unwrap_or_default();
        for gone in old.keys().filter(|labels| !series.contains_key(*labels)) {
            self.hpa_findings.remove(gone);
        }
        for (labels, count) in &series {
            self.hpa_findings.get_or_create(labels).set(*count);
        }
        if !series.is_empty() {
            all.insert(namespace.to_owned(), series);
        }
    }

    /// Records an evaluation round that ended at `seconds_since_epoch`.
    pub fn evaluated(&self, seconds_since_epoch: i64, took: Duration) {
        self.last_evaluation.set(seconds_since_epoch);
        self.evaluation_duration.observe(took.as_secs_f64());
    }

    /// Records whether this replica leads.
    pub fn leading(&self, leading: bool) {
        self.leader.set(i64::from(leading));
    }

    /// Counts a report write: `applied`, `deleted` or `failed`.
    pub fn report_write(&self, outcome: &'static str) {
        self.report_writes
            .get_or_create(&OutcomeLabels { outcome })
            .inc();
    }

    /// Counts an Event: `published`, `dropped` or `failed`.
    pub fn event(&self, outcome: &'static str) {
        self.events.get_or_create(&OutcomeLabels { outcome }).inc();
    }

    /// The metrics in the Prometheus text format, with the cache sizes as
    /// they are now.
    pub fn render(&self, index: &ClusterIndex) -> String {
        for (kind, size) in index.sizes() {
            self.cache_objects
                .get_or_create(&KindLabels { kind: kind.name() })
                .set(i64::try_from(size).unwrap_or(i64::MAX));
        }
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}
