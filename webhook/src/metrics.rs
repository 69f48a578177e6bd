//! Prometheus metrics. The registry lives in the application state (no global
//! recorder), so every test and every server in a process has its own.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::admission::{Decision, Finding};
use crate::cache::ClusterIndex;

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

/// Every metric the webhook exports.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<EndpointLabels, Histogram>,
    findings: Family<FindingLabels, Counter>,
    cache_objects: Family<KindLabels, Gauge>,
    certificate_expiry: Gauge,
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
        Self {
            registry,
            requests,
            latency,
            findings,
            cache_objects,
            certificate_expiry,
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
