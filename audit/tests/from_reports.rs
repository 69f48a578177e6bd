//! `kubectl hpa-lint --from-reports`: the findings of the policy reports the
//! webhook's reporting mode writes, read by a user who may list reports and
//! nothing else.

mod common;

use common::{audit_in, findings, stderr};
use kube_standin::live::Live;
use serde_json::{Value, json};

fn hpa(namespace: &str, name: &str) -> Value {
    json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "namespace": namespace, "name": name, "uid": format!("uid-{name}")})
}

/// A report as the webhook writes it (webhook/src/report/reports.rs).
fn report(api_version: &str, kind: &str, namespace: &str, results: Vec<Value>) -> Value {
    json!({
        "apiVersion": api_version, "kind": kind,
        "metadata": {"name": "hpa-lint", "namespace": namespace, "labels": {"app.kubernetes.io/managed-by": "hpa-lint"}},
        "summary": {"pass": 1, "fail": 2, "warn": 2, "error": 0, "skip": 0},
        "results": results,
    })
}

fn shop_results() -> Vec<Value> {
    vec![
        json!({"source": "hpa-lint", "policy": "scaling-inactive", "rule": "scaling-inactive", "category": "live", "severity": "high", "result": "fail",
               "message": "status.conditions[1]: ScalingActive is False since 2026-03-01T08:00:00Z (FailedGetResourceMetric): the HPA does not scale",
               "resources": [hpa("shop", "web")], "timestamp": {"seconds": 1_772_352_000, "nanos": 0}}),
        json!({"source": "hpa-lint", "policy": "target-missing-requests", "rule": "target-missing-requests", "category": "correctness", "severity": "high", "result": "fail",
               "message": "spec.template.spec.containers[1].resources.requests.cpu: container `istio-proxy` has no CPU request",
               "resources": [hpa("shop", "checkout"), {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "shop", "name": "checkout"}],
               "properties": {"findings": "2"}, "timestamp": {"seconds": 1_772_352_000, "nanos": 0}}),
        json!({"source": "hpa-lint", "policy": "target-not-found", "rule": "target-not-found", "category": "correctness", "severity": "medium", "result": "warn",
               "message": "spec.scaleTargetRef.name: Deployment `api` does not exist", "resources": [hpa("shop", "api")], "timestamp": {"seconds": 1_772_352_000, "nanos": 0}}),
        json!({"source": "hpa-lint", "policy": "pinned-at-max-replicas", "rule": "pinned-at-max-replicas", "category": "live", "severity": "info", "result": "warn",
               "message": "status.conditions[2]: held at `maxReplicas` (6) for 4 days", "resources": [hpa("shop", "cart")], "timestamp": {"seconds": 1_772_352_000, "nanos": 0}}),
        json!({"source": "hpa-lint", "policy": "hpa-lint", "result": "pass", "message": "no enabled rule found anything", "resources": [hpa("shop", "frontend")], "timestamp": {"seconds": 1_772_352_000, "nanos": 0}}),
    ]
}

struct Scene {
    standin: Live,
    dir: tempfile::TempDir,
    _runtime: tokio::runtime::Runtime,
}

/// A cluster with the reports of two namespaces in `api_version` `kind`
/// (none when `None`) and a kubeconfig whose namespace is `shop`; lists of
/// everything but the reports refused.
fn scene(api: Option<(&str, &str, &str)>) -> Scene {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let standin = runtime.block_on(Live::start("v1.33.4")).unwrap();
    for namespace in ["shop", "batch"] {
        standin.namespace(namespace);
    }
    if let Some((api_version, kind, plural)) = api {
        standin.install(api_version, kind, plural, true);
        standin.put(report(api_version, kind, "shop", shop_results()));
        let batch = json!({"source": "hpa-lint", "policy": "overprovisioned-min-replicas", "rule": "overprovisioned-min-replicas", "category": "live", "severity": "info", "result": "warn",
                           "message": "spec.minReplicas: every metric far below its target", "resources": [hpa("batch", "reports")], "timestamp": {"seconds": 1, "nanos": 0}});
        standin.put(report(api_version, kind, "batch", vec![batch]));
    }
    for (group, plural) in [
        ("autoscaling", "horizontalpodautoscalers"),
        ("apps", "deployments"),
        ("", "namespaces"),
    ] {
        standin.forbid(group, plural);
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("kubeconfig"), standin.kubeconfig("shop")).unwrap();
    Scene {
        standin,
        dir,
        _runtime: runtime,
    }
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[test]
fn the_reports_findings_are_the_findings() {
    let scene = scene(Some(("openreports.io/v1alpha1", "Report", "reports")));
    let output = audit_in(scene.dir.path(), &["--from-reports", "--format", "json"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(
        findings(&output),
        pairs(&[
            ("target-not-found", "shop/HorizontalPodAutoscaler/api"),
            (
                "pinned-at-max-replicas",
                "shop/HorizontalPodAutoscaler/cart"
            ),
            ("target-missing-requests", "shop/Deployment/checkout"),
            ("scaling-inactive", "shop/HorizontalPodAutoscaler/web"),
        ])
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let severities: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["severity"].as_str().unwrap())
        .collect();
    assert_eq!(severities, ["warning", "info", "error", "error"]);
    assert_eq!(report["summary"]["hpas"], 5);
    // Only the reports were read: the workloads and HPAs would have been refused.
    let reads: Vec<String> = scene
        .standin
        .requests()
        .into_iter()
        .filter(|r| r.contains("?"))
        .collect();
    assert!(reads.iter().all(|r| r.contains("/reports?")), "{reads:#?}");

    // Every namespace, or a few HPAs.
    let all = audit_in(
        scene.dir.path(),
        &["--from-reports", "-A", "--format", "json"],
    );
    assert_eq!(findings(&all).len(), 5);
    let named = audit_in(
        scene.dir.path(),
        &["--from-reports", "web", "api", "--format", "json"],
    );
    assert_eq!(
        findings(&named),
        pairs(&[
            ("target-not-found", "shop/HorizontalPodAutoscaler/api"),
            ("scaling-inactive", "shop/HorizontalPodAutoscaler/web")
        ])
    );
    // The text output as anywhere else.
    let text = audit_in(
        scene.dir.path(),
        &["--from-reports", "--color", "never", "batch"],
    );
    assert_eq!(text.status.code(), Some(0), "{}", stderr(&text));
}

#[test]
fn wg_policy_reports_are_read_where_they_are_the_api_served() {
    let scene = scene(Some((
        "wgpolicyk8s.io/v1alpha2",
        "PolicyReport",
        "policyreports",
    )));
    let output = audit_in(
        scene.dir.path(),
        &["--from-reports", "-n", "batch", "--format", "json"],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        findings(&output),
        pairs(&[(
            "overprovisioned-min-replicas",
            "batch/HorizontalPodAutoscaler/reports"
        )])
    );
}

#[test]
fn without_a_report_api_it_says_so() {
    let scene = scene(None);
    let output = audit_in(scene.dir.path(), &["--from-reports"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("no report API is served"),
        "{}",
        stderr(&output)
    );
}
