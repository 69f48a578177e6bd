//! The reporting mode end to end: the real `hpa-webhook` binary against the
//! changing API-server stand-in (`kube_standin::live`): objects created,
//! changed and deleted, status conditions patched in as the HPA controller
//! writes them, and what comes out: metrics, policy reports, Events, the
//! Lease, and admission all along.

mod common;

use std::time::{Duration, Instant};

use common::{Client, Webhook};
use kube_standin::live::Live;
use serde_json::{Value, json};
use tempfile::TempDir;

// The stand-in serves from the test's runtime while the test blocks on the
// child's logs: every test runs on a multi-threaded runtime.

/// How long anything in these tests may take to show.
const PATIENCE: Duration = Duration::from_secs(20);

/// A `hpa-webhook` started against the stand-in, plain HTTP, with short
/// debounce and lease timings.
struct Replica {
    webhook: Webhook,
    _dir: TempDir,
}

impl Replica {
    fn start(standin: &Live, extra: &[&str]) -> Self {
        let dir = TempDir::new().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        std::fs::write(&kubeconfig, standin.kubeconfig("hpa-lint")).unwrap();
        let mut args = vec![
            "--insecure-http",
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
            "--report-quiet-ms",
            "100",
            "--report-most-ms",
            "500",
            "--drain-delay",
            "0",
        ];
        args.extend_from_slice(extra);
        let webhook = Webhook::start(&args);
        webhook.wait_for_log("caches synced", PATIENCE);
        Self { webhook, _dir: dir }
    }

    async fn metrics(&self) -> String {
        let mut client = Client::connect_plain(self.webhook.address).await.unwrap();
        client.get("/metrics").await.text()
    }

    /// Waits until the metrics satisfy `check`; the last metrics.
    async fn metrics_until(&self, check: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let metrics = self.metrics().await;
            if check(&metrics) {
                return metrics;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "metrics never matched:\n{metrics}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The series of the findings metric, without the comments.
fn findings(metrics: &str) -> Vec<&str> {
    metrics
        .lines()
        .filter(|l| l.starts_with("hpa_webhook_hpa_findings{"))
        .collect()
}

fn condition(type_: &str, status: &str, reason: &str, since: &str, message: &str) -> Value {
    json!({"type": type_, "status": status, "reason": reason, "lastTransitionTime": since, "message": message})
}

/// The status kube-controller-manager writes for an HPA that scales on CPU.
fn working() -> Value {
    json!({"currentReplicas": 3, "desiredReplicas": 3,
    "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 41, "averageValue": "100m"}}}],
    "conditions": [
        condition("AbleToScale", "True", "ReadyForNewScale", "2026-02-01T00:00:00Z", "recommended size matches current size"),
        condition("ScalingActive", "True", "ValidMetricFound", "2026-02-01T00:00:00Z", "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)"),
        condition("ScalingLimited", "False", "DesiredWithinRange", "2026-02-01T00:00:00Z", "the desired count is within the acceptable range"),
    ]})
}

/// `working()` with the metrics API gone: `ScalingActive=False`.
fn inactive() -> Value {
    let mut status = working();
    status["currentMetrics"] = json!([{"type": ""}]);
    status["conditions"][1] = condition(
        "ScalingActive",
        "False",
        "FailedGetResourceMetric",
        "2026-03-01T08:00:00Z",
        "the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API",
    );
    status
}

fn hpa(namespace: &str, name: &str) -> Value {
    json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                 "minReplicas": 2, "maxReplicas": 10,
                 "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]},
        "status": working(),
    })
}

fn deployment(namespace: &str, name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": name}},
        "spec": {"selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "app", "image": "app:1", "resources": {"requests": {"cpu": "250m"}}}]}}},
        "status": {"replicas": 3},
    })
}

fn api_service(name: &str) -> Value {
    json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": name},
           "status": {"conditions": [{"type": "Available", "status": "True", "reason": "Passed", "message": "all checks passed"}]}})
}

/// A cluster with the metrics API and a healthy HPA `shop/web`.
async fn shop() -> Live {
    let standin = Live::start("v1.33.4").await.unwrap();
    for namespace in ["hpa-lint", "shop"] {
        standin.namespace(namespace);
    }
    standin.put(api_service("v1beta1.metrics.k8s.io"));
    standin.put(deployment("shop", "web"));
    standin.put(hpa("shop", "web"));
    standin
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn findings_follow_the_objects_as_they_change() {
    let standin = shop().await;
    let replica = Replica::start(&standin, &[]);
    // Evaluated once synced: nothing to report.
    let metrics = replica
        .metrics_until(|m| m.contains("hpa_webhook_last_evaluation_timestamp_seconds "))
        .await;
    assert_eq!(findings(&metrics), Vec::<&str>::new());

    // The metrics API goes away: the controller writes ScalingActive=False.
    standin.set_status(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        "shop",
        "web",
        inactive(),
    );
    let metrics = replica.metrics_until(|m| !findings(m).is_empty()).await;
    assert_eq!(
        findings(&metrics),
        [
            "hpa_webhook_hpa_findings{namespace=\"shop\",horizontalpodautoscaler=\"web\",rule=\"scaling-inactive\",severity=\"error\"} 1"
        ]
    );

    // A target deleted, another HPA created: both seen.
    standin.set_status(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        "shop",
        "web",
        working(),
    );
    standin.delete("apps/v1", "Deployment", "shop", "web");
    standin.put(hpa("shop", "api"));
    replica
        .metrics_until(|m| {
            let mut found = findings(m);
            found.sort_unstable();
            found == [
                "hpa_webhook_hpa_findings{namespace=\"shop\",horizontalpodautoscaler=\"api\",rule=\"target-not-found\",severity=\"warning\"} 1",
                "hpa_webhook_hpa_findings{namespace=\"shop\",horizontalpodautoscaler=\"web\",rule=\"target-not-found\",severity=\"warning\"} 1",
            ]
        })
        .await;

    // Both HPAs deleted: their series go.
    standin.delete("autoscaling/v2", "HorizontalPodAutoscaler", "shop", "web");
    standin.delete("autoscaling/v2", "HorizontalPodAutoscaler", "shop", "api");
    replica.metrics_until(|m| findings(m).is_empty()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_per_hpa_series_can_be_summed_per_namespace() {
    let standin = shop().await;
    standin.delete("apps/v1", "Deployment", "shop", "web");
    standin.put(hpa("shop", "api"));
    let replica = Replica::start(&standin, &["--metrics-per-hpa=false"]);
    let metrics = replica.metrics_until(|m| !findings(m).is_empty()).await;
    assert_eq!(
        findings(&metrics),
        [
            "hpa_webhook_hpa_findings{namespace=\"shop\",horizontalpodautoscaler=\"\",rule=\"target-not-found\",severity=\"warning\"} 2"
        ]
    );
}
