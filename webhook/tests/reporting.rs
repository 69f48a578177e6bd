//! The reporting mode end to end: the real `hpa-webhook` binary against the
//! changing API-server stand-in (`kube_standin::live`): objects created,
//! changed and deleted, status conditions patched in as the HPA controller
//! writes them, and what comes out: metrics, policy reports, Events, the
//! Lease, and admission all along.

mod common;

use std::time::{Duration, Instant};

use common::{Client, PATIENCE, Webhook};
use kube_standin::live::Live;
use serde_json::{Value, json};
use tempfile::TempDir;

// The stand-in serves from the test's runtime while the test blocks on the
// child's logs: every test runs on a multi-threaded runtime.

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

const REPORT: (&str, &str) = ("openreports.io/v1alpha1", "Report");

/// Waits until `check` holds.
async fn until(what: &str, check: impl Fn() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < PATIENCE, "never: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// (HPA, policy, result) of each result of a report.
fn results(report: &Value) -> Vec<(String, String, String)> {
    report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let text = |p: &str| r.pointer(p).and_then(Value::as_str).unwrap().to_owned();
            (text("/resources/0/name"), text("/policy"), text("/result"))
        })
        .collect()
}

fn result(hpa: &str, policy: &str, outcome: &str) -> (String, String, String) {
    (hpa.to_owned(), policy.to_owned(), outcome.to_owned())
}

/// Writes of reports so far (applies and deletes).
fn report_writes(standin: &Live) -> usize {
    standin
        .requests_of("reports.openreports.io")
        .iter()
        .filter(|r| r.starts_with("PATCH") || r.starts_with("DELETE"))
        .count()
}

/// (HPA, reason, type) of the Events so far.
fn events(standin: &Live) -> Vec<(String, String, String)> {
    let mut events: Vec<(String, String, String)> = standin
        .list("events.k8s.io/v1", "Event")
        .iter()
        .map(|e| {
            let text = |p: &str| {
                e.pointer(p)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            (text("/regarding/name"), text("/reason"), text("/type"))
        })
        .collect();
    events.sort();
    events
}

/// The shop with OpenReports installed and an HPA whose target is missing.
async fn shop_with_reports() -> Live {
    let standin = shop().await;
    standin.install("openreports.io/v1alpha1", "Report", "reports", true);
    standin.put(hpa("shop", "api"));
    standin
}

const FAST_LEASE: [&str; 4] = ["--lease-duration", "2", "--lease-renew", "1"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_and_events_follow_the_findings() {
    let standin = shop_with_reports().await;
    let _replica = Replica::start(&standin, &FAST_LEASE);
    let report = || standin.get(REPORT.0, REPORT.1, "shop", "hpa-lint");
    until("the report", || report().is_some()).await;
    let written = report().unwrap();
    assert_eq!(
        results(&written),
        [
            result("api", "target-not-found", "warn"),
            result("web", "hpa-lint", "pass")
        ]
    );
    assert_eq!(
        written["summary"],
        json!({"pass": 1, "fail": 0, "warn": 1, "error": 0, "skip": 0})
    );
    assert_eq!(
        written["metadata"]["managedFields"][0]["manager"],
        "hpa-lint"
    );
    assert_eq!(
        written["metadata"]["managedFields"][0]["operation"],
        "Apply"
    );
    let uid = standin
        .get("autoscaling/v2", "HorizontalPodAutoscaler", "shop", "api")
        .unwrap()["metadata"]["uid"]
        .clone();
    assert_eq!(written["results"][0]["resources"][0]["uid"], uid);
    until("the Event", || !events(&standin).is_empty()).await;
    assert_eq!(
        events(&standin),
        [result("api", "target-not-found", "Warning")]
    );
    let writes = report_writes(&standin);
    assert_eq!(writes, 1);

    // The controller patches ScalingActive=False into web: one more write, one more Event.
    standin.set_status(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        "shop",
        "web",
        inactive(),
    );
    until("web's finding", || {
        report().is_some_and(|r| r["summary"]["fail"] == 1)
    })
    .await;
    assert_eq!(
        results(&report().unwrap()),
        [
            result("web", "scaling-inactive", "fail"),
            result("api", "target-not-found", "warn")
        ]
    );
    until("web's Event", || events(&standin).len() == 2).await;
    assert_eq!(
        events(&standin)[1],
        result("web", "scaling-inactive", "Warning")
    );
    assert_eq!(report_writes(&standin), writes + 1);

    // A change the rules cannot see writes nothing and announces nothing.
    let mut labelled = standin.get("apps/v1", "Deployment", "shop", "web").unwrap();
    labelled["metadata"]["annotations"] = json!({"deployment.kubernetes.io/revision": "7"});
    standin.put(labelled);
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(report_writes(&standin), writes + 1);
    assert_eq!(events(&standin).len(), 2);

    // A finding that goes and comes back is announced again (kube's
    // recorder counts it in the same Event's series); the one that stood
    // all along is not.
    standin.set_status(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        "shop",
        "web",
        working(),
    );
    until("web passes", || {
        report().is_some_and(|r| r["summary"]["pass"] == 1)
    })
    .await;
    standin.set_status(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        "shop",
        "web",
        inactive(),
    );
    until("web fails again", || {
        report().is_some_and(|r| r["summary"]["fail"] == 1)
    })
    .await;
    let series = |reason: &str| {
        standin
            .list("events.k8s.io/v1", "Event")
            .iter()
            .find(|e| e["reason"] == reason)
            .and_then(|e| e.pointer("/series/count").cloned())
    };
    until("web's second Event", || {
        series("scaling-inactive") == Some(json!(2))
    })
    .await;
    assert_eq!(series("target-not-found"), None);

    // The HPA deleted: its results go; every HPA deleted: the report goes.
    standin.delete("autoscaling/v2", "HorizontalPodAutoscaler", "shop", "api");
    until("api's result gone", || {
        report().is_some_and(|r| results(&r).len() == 1)
    })
    .await;
    standin.delete("autoscaling/v2", "HorizontalPodAutoscaler", "shop", "web");
    until("the report deleted", || report().is_none()).await;
    assert_chart_grants_exactly_what_was_used(&standin);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_report_api_is_the_one_installed_even_later() {
    let standin = shop().await;
    standin.put(hpa("shop", "api"));
    let replica = Replica::start(
        &standin,
        &[&FAST_LEASE[..], &["--report-rediscover", "1"]].concat(),
    );
    replica.webhook.wait_for_line(
        |l| {
            l["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("no report API served"))
        },
        PATIENCE,
    );
    // Events need no report API.
    until("the Event", || events(&standin).len() == 1).await;
    // Kyverno's default API is installed later: found, written.
    standin.install(
        "wgpolicyk8s.io/v1alpha2",
        "PolicyReport",
        "policyreports",
        true,
    );
    until("the PolicyReport", || {
        standin
            .get(
                "wgpolicyk8s.io/v1alpha2",
                "PolicyReport",
                "shop",
                "hpa-lint",
            )
            .is_some()
    })
    .await;
    let report = standin
        .get(
            "wgpolicyk8s.io/v1alpha2",
            "PolicyReport",
            "shop",
            "hpa-lint",
        )
        .unwrap();
    assert_eq!(
        results(&report),
        [
            result("api", "target-not-found", "warn"),
            result("web", "hpa-lint", "pass")
        ]
    );
    assert_eq!(report.get("source"), None);
    // The finding was announced already: no second Event.
    assert_eq!(events(&standin).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_403_on_reports_is_logged_once_and_admission_goes_on() {
    let standin = shop_with_reports().await;
    standin.forbid("openreports.io", "reports");
    let replica = Replica::start(&standin, &FAST_LEASE);
    let refused = |l: &Value| {
        l["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("cannot read reports"))
    };
    replica.webhook.wait_for_line(refused, PATIENCE);
    // Two retries later (kube's backoff: 0.8 s doubling, with jitter), and a
    // moment for their lines to arrive: still one line.
    until("two retries", || {
        standin.requests_of("reports.openreports.io").len() > 2
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        replica.webhook.logs().iter().filter(|l| refused(l)).count(),
        1
    );
    // Admission as ever; Events too.
    let mut client = Client::connect_plain(replica.webhook.address)
        .await
        .unwrap();
    let reply = client
        .post("/validate", common::fixture("hpa-create.json").to_string())
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.json()["response"]["uid"],
        common::fixture("hpa-create.json")["request"]["uid"]
    );
    until("the Event", || events(&standin).len() == 1).await;
    // RBAC fixed: the report is written.
    standin.allow("openreports.io", "reports");
    until("the report", || {
        standin
            .get(REPORT.0, REPORT.1, "shop", "hpa-lint")
            .is_some()
    })
    .await;
}

/// Whether a replica says it holds the Lease (`None` once it is gone).
async fn leads(replica: &Replica) -> Option<bool> {
    let mut client = Client::connect_plain(replica.webhook.address).await.ok()?;
    let reply = client.request("GET", "/metrics", Vec::new()).await.ok()?;
    let text = String::from_utf8_lossy(&reply.body).into_owned();
    Some(text.lines().any(|l| l == "hpa_webhook_reporting_leader 1"))
}

fn holder(standin: &Live) -> Option<String> {
    standin
        .get(
            "coordination.k8s.io/v1",
            "Lease",
            "hpa-lint",
            "hpa-lint-reporter",
        )?
        .pointer("/spec/holderIdentity")?
        .as_str()
        .map(str::to_owned)
}

/// Waits until one of `replicas` leads, checking all along that no two lead
/// at once; which one, and how long it took.
async fn one_leader(replicas: &[&Replica]) -> (usize, Duration) {
    let start = Instant::now();
    loop {
        let mut leading = Vec::new();
        for (i, replica) in replicas.iter().enumerate() {
            if leads(replica).await == Some(true) {
                leading.push(i);
            }
        }
        match leading.as_slice() {
            [] => {}
            [leader] => return (*leader, start.elapsed()),
            _ => panic!("two leaders: {leading:?}"),
        }
        assert!(start.elapsed() < PATIENCE, "no replica took over");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lease_hands_over_between_running_replicas() {
    let standin = shop_with_reports().await;
    let start = |identity: &str| {
        Replica::start(
            &standin,
            &[&FAST_LEASE[..], &["--identity", identity]].concat(),
        )
    };
    let a = start("a");
    one_leader(&[&a]).await;
    let report = || standin.get(REPORT.0, REPORT.1, "shop", "hpa-lint");
    until("the report", || report().is_some()).await;
    until("the Event", || events(&standin).len() == 1).await;
    let mut others = vec![start("b"), start("c")];
    // Followers evaluate too (their metrics), and write nothing.
    others[0].metrics_until(|m| !findings(m).is_empty()).await;
    let writes = report_writes(&standin);
    assert_eq!(holder(&standin).as_deref(), Some("a"));

    // SIGTERM: `a` releases the Lease; `b` or `c` takes it.
    a.webhook.terminate();
    let (leader, took) = one_leader(&[&others[0], &others[1]]).await;
    eprintln!("hand-over after SIGTERM: {took:?}");
    assert_eq!(holder(&standin).as_deref(), Some(["b", "c"][leader]));
    // Nothing rewritten, nothing announced again.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(report_writes(&standin), writes);
    assert_eq!(events(&standin).len(), 1);
    // The new leader writes what changes.
    standin.set_status(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        "shop",
        "web",
        inactive(),
    );
    until("web's finding", || {
        report().is_some_and(|r| r["summary"]["fail"] == 1)
    })
    .await;
    assert_eq!(report_writes(&standin), writes + 1);

    // The leader dies without a word (SIGKILL): the other takes over once
    // the Lease expires.
    drop(others.remove(leader));
    let (_, took) = one_leader(&[&others[0]]).await;
    eprintln!("hand-over after a crash: {took:?}");
    standin.set_status(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        "shop",
        "web",
        working(),
    );
    until("web passes again", || {
        report().is_some_and(|r| r["summary"]["pass"] == 1)
    })
    .await;
}

/// A replica of the shop that writes its first report.
async fn writing(standin: &Live) -> Replica {
    let replica = Replica::start(standin, &FAST_LEASE);
    until("the report", || {
        standin
            .get(REPORT.0, REPORT.1, "shop", "hpa-lint")
            .is_some()
    })
    .await;
    replica
}

fn fails(standin: &Live) -> bool {
    standin
        .get(REPORT.0, REPORT.1, "shop", "hpa-lint")
        .is_some_and(|r| r["summary"]["fail"] == 1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conflict_on_update_is_retried_and_nothing_is_lost() {
    let standin = shop_with_reports().await;
    let _replica = writing(&standin).await;
    let writes = report_writes(&standin);
    standin.conflict_next("openreports.io", "reports", 1);
    standin.set_status(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        "shop",
        "web",
        inactive(),
    );
    until("web's finding, after a retry", || fails(&standin)).await;
    // The refused write and the one that went through.
    assert_eq!(report_writes(&standin), writes + 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_deleted_while_its_report_is_written_takes_it_along() {
    let standin = shop_with_reports().await;
    standin.namespace("batch");
    standin.put(hpa("batch", "reports"));
    let replica = writing(&standin).await;
    standin.terminate_for(Duration::from_secs(1));
    standin.delete("v1", "Namespace", "", "shop");
    // The controller still writes statuses while the namespace terminates:
    // a new finding, whose report cannot be written any more.
    standin.set_status(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        "shop",
        "web",
        inactive(),
    );
    until("the namespace gone", || {
        standin.get("v1", "Namespace", "", "shop").is_none()
    })
    .await;
    assert_eq!(standin.get(REPORT.0, REPORT.1, "shop", "hpa-lint"), None);
    // Dropped, not retried: a few writes at most, and no warning.
    let refused = standin
        .requests_of("reports.openreports.io")
        .iter()
        .filter(|r| r.contains("/namespaces/shop/"))
        .count();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let later = standin
        .requests_of("reports.openreports.io")
        .iter()
        .filter(|r| r.contains("/namespaces/shop/"))
        .count();
    assert_eq!(
        later,
        refused,
        "{:#?}",
        standin.requests_of("reports.openreports.io")
    );
    assert!(
        replica
            .webhook
            .logs()
            .iter()
            .all(|l| l["level"] != "WARN" || !l["message"].as_str().unwrap().contains("report")),
        "{:#?}",
        replica.webhook.logs()
    );
    // The other namespaces' reports are written as ever.
    standin.delete("apps/v1", "Deployment", "batch", "reports");
    assert!(
        standin
            .get(REPORT.0, REPORT.1, "batch", "hpa-lint")
            .is_some()
    );
}

/// How long the API server stays down in the outage test: 3 s by default,
/// `HPA_LINT_OUTAGE_SECONDS=60` for the minute of docs/reports.md.
fn outage() -> Duration {
    let seconds = std::env::var("HPA_LINT_OUTAGE_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    Duration::from_secs(seconds)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_server_outage_loses_nothing_writes_nothing_twice_and_admission_goes_on() {
    let standin = shop_with_reports().await;
    let replica = writing(&standin).await;
    until("the Event", || events(&standin).len() == 1).await;
    let writes = report_writes(&standin);
    standin.down();
    // The controller (which still reaches etcd in this story) marks web inactive.
    standin.set_status(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        "shop",
        "web",
        inactive(),
    );
    let mut client = Client::connect_plain(replica.webhook.address)
        .await
        .unwrap();
    let admitted = Instant::now();
    while admitted.elapsed() < outage() {
        let reply = client
            .post("/validate", common::fixture("hpa-create.json").to_string())
            .await;
        assert_eq!(reply.status, 200, "{}", reply.text());
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(!fails(&standin));
    standin.up();
    until("web's finding after the outage", || fails(&standin)).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        report_writes(&standin),
        writes + 1,
        "{:#?}",
        standin.requests_of("reports.openreports.io")
    );
    assert_eq!(
        events(&standin),
        [
            result("api", "target-not-found", "Warning"),
            result("web", "scaling-inactive", "Warning")
        ]
    );
}

/// (group, resource, verb, name) grants of a list of RBAC rules.
fn grants(rules: &Value) -> Vec<(String, String, String, Option<String>)> {
    let texts = |rule: &Value, field: &str| -> Vec<String> {
        rule[field]
            .as_array()
            .into_iter()
            .flatten()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    };
    let mut out = Vec::new();
    for rule in rules.as_array().unwrap() {
        let names = texts(rule, "resourceNames");
        for group in texts(rule, "apiGroups") {
            for resource in texts(rule, "resources") {
                for verb in texts(rule, "verbs") {
                    let name = |n: Option<&String>| {
                        (group.clone(), resource.clone(), verb.clone(), n.cloned())
                    };
                    if names.is_empty() {
                        out.push(name(None));
                    } else {
                        out.extend(names.iter().map(|n| name(Some(n))));
                    }
                }
            }
        }
    }
    out
}

/// The rules of the chart's reporting roles (ClusterRole, then Role), with
/// the Lease named as the tests name it.
fn chart_grants() -> Vec<(String, String, String, Option<String>)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../charts/hpa-lint/templates/rbac-reporting.yaml"
    );
    let text = std::fs::read_to_string(path).unwrap().replace(
        "{{ include \"hpa-lint.fullname\" . | quote }}",
        "\"hpa-lint-reporter\"",
    );
    let mut all = Vec::new();
    for document in text.split("\n---\n") {
        let Some(start) = document.find("\nrules:\n") else {
            continue;
        };
        let rules = &document[start..];
        let parsed =
            hpa_lint_rules::source::read_document(rules, &|_, _| &hpa_lint_rules::source::ALL);
        all.extend(grants(&parsed.values[0].0["rules"]));
    }
    all
}

/// The RBAC verb of a request the reporting mode made, and the object it
/// names; `None` for discovery, which every user may read.
fn verb(request: &str) -> Option<(String, String, String, Option<String>)> {
    let (method, uri) = request.split_once(' ').unwrap();
    let (path, query) = uri.split_once('?').unwrap_or((uri, ""));
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, rest) = match segments.as_slice() {
        ["api", "v1", rest @ ..] => ("", rest),
        ["apis", group, _, rest @ ..] => (*group, rest),
        _ => panic!("{request}"),
    };
    let rest = match rest {
        ["namespaces", _, rest @ ..] => rest,
        rest => rest,
    };
    let (resource, name) = (rest.first()?, rest.get(1).map(|n| (*n).to_owned()));
    let verb = match (method, &name) {
        ("GET", None) if query.contains("watch=true") => "watch",
        ("GET", None) => "list",
        ("GET", Some(_)) => "get",
        ("POST", _) => "create",
        ("PATCH", _) => "patch",
        ("DELETE", _) => "delete",
        ("PUT", _) => "update",
        _ => panic!("{request}"),
    };
    Some((
        group.to_owned(),
        (*resource).to_owned(),
        verb.to_owned(),
        name,
    ))
}

/// The chart grants the reporting mode exactly what it asked for: every
/// request it made to reports, Events and Leases is granted (a server-side
/// apply also needs `create`, for the report it creates), and every grant
/// was used (the wg-policy API's as the OpenReports API's).
fn assert_chart_grants_exactly_what_was_used(standin: &Live) {
    let granted = chart_grants();
    let is_granted = |(group, resource, verb, name): &(String, String, String, Option<String>)| {
        granted.iter().any(|(g, r, v, n)| {
            g == group && r == resource && v == verb && (n.is_none() || n == name)
        })
    };
    let mut used = Vec::new();
    for request in standin.requests() {
        let Some(asked) = verb(&request) else {
            continue;
        };
        if !matches!(
            asked.0.as_str(),
            "openreports.io" | "events.k8s.io" | "coordination.k8s.io"
        ) {
            continue;
        }
        assert!(is_granted(&asked), "not granted by the chart: {request}");
        let applied = request
            .split(['?', '&'])
            .any(|p| p == "fieldManager=hpa-lint");
        if asked.2 == "patch" && applied {
            used.push((asked.0.clone(), asked.1.clone(), "create".to_owned(), None));
        }
        used.push(asked);
    }
    for grant in &granted {
        let (group, resource) = match (grant.0.as_str(), grant.1.as_str()) {
            ("wgpolicyk8s.io", "policyreports") => ("openreports.io", "reports"),
            (group, resource) => (group, resource),
        };
        assert!(
            used.iter()
                .any(|(g, r, v, _)| g == group && r == resource && *v == grant.2),
            "granted, never used: {grant:?}"
        );
    }
}
