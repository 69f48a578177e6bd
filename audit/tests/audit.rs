//! `kubectl hpa-lint` against the API-server stand-in: findings, output
//! formats, exit codes, scoping, pagination, refused and absent kinds.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{Stage, findings, run, shop, stderr, stdout};
use kube_standin::Cluster;
use serde_json::Value;

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(rule, object)| ((*rule).to_owned(), (*object).to_owned()))
        .collect()
}

/// Everything the shop's audit finds, in report order.
const SHOP: [(&str, &str); 8] = [
    (
        "overprovisioned-min-replicas",
        "batch/HorizontalPodAutoscaler/reports",
    ),
    ("scaling-inactive", "shop/HorizontalPodAutoscaler/api"),
    ("target-not-found", "shop/HorizontalPodAutoscaler/api"),
    (
        "pinned-at-max-replicas",
        "shop/HorizontalPodAutoscaler/cart",
    ),
    ("target-missing-requests", "shop/Deployment/checkout"),
    ("scaling-inactive", "shop/HorizontalPodAutoscaler/checkout"),
    ("pdb-blocks-eviction", "shop/PodDisruptionBudget/web"),
    (
        "unknown-metric-value",
        "shop/HorizontalPodAutoscaler/worker",
    ),
];

#[test]
fn audits_every_namespace_with_the_same_rules_plus_the_live_ones() {
    let stage = Stage::new(shop());
    let output = stage.audit(&["-A"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(stderr(&output), "");
    // The sample output of docs/audit.md.
    insta::assert_snapshot!(stdout(&output));
    let output = stage.audit(&["-A", "--format", "json"]);
    assert_eq!(findings(&output), pairs(&SHOP));
}

#[test]
fn reads_only_lists_and_discovery() {
    let stage = Stage::new(shop());
    assert_eq!(stderr(&stage.audit(&["-A", "--quiet"])), "");
    let requests = stage.standin.requests();
    for request in &requests {
        let path = request.split('?').next().unwrap();
        let read = path == "/version"
            || path == "/apis"
            || path.starts_with("/apis/argoproj.io/")
            || request.contains("limit=500");
        assert!(read, "{request}");
    }
    // Custom kinds: the group found by discovery; absent CRDs are not listed.
    assert!(requests.contains(&"/apis/argoproj.io/v1alpha1/rollouts?limit=500".to_owned()));
    assert!(
        !requests
            .iter()
            .any(|r| r.contains("verticalpodautoscalers") || r.contains("scaledobjects"))
    );
}

#[test]
fn json_names_objects_and_keeps_the_contract_keys() {
    let stage = Stage::new(shop());
    let output = stage.audit(&["-A", "--format", "json"]);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let first = &report["diagnostics"][0];
    for key in ["file", "document", "line", "column"] {
        assert_eq!(first[key], Value::Null, "{key}");
    }
    assert_eq!(first["rule"], "overprovisioned-min-replicas");
    assert_eq!(first["severity"], "info");
    assert_eq!(
        first["object"],
        serde_json::json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "namespace": "batch", "name": "reports"})
    );
    assert_eq!(first["field"], "spec.minReplicas");
    assert_eq!(first["reason"], Value::Null);
    let summary = &report["summary"];
    assert_eq!(
        (
            &summary["context"],
            &summary["hpas"],
            &summary["errors"],
            &summary["warnings"],
            &summary["unread"]
        ),
        (
            &Value::from("shop-prod"),
            &Value::from(7),
            &Value::from(3),
            &Value::from(3),
            &Value::from(0)
        )
    );
    assert_eq!(
        (&summary["files"], &summary["documents"]),
        (&Value::from(0), &Value::from(0))
    );
}

#[test]
fn sarif_and_github_formats_place_findings_on_objects() {
    let stage = Stage::new(shop());
    let sarif: Value =
        serde_json::from_slice(&stage.audit(&["-A", "--format", "sarif"]).stdout).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), SHOP.len());
    let location = &results[0]["locations"][0];
    assert_eq!(location.get("physicalLocation"), None);
    assert_eq!(
        location["logicalLocations"][0]["fullyQualifiedName"],
        "HorizontalPodAutoscaler/batch/reports:spec.minReplicas"
    );
    let github = stdout(&stage.audit(&["-A", "--format", "github"]));
    let first = github.lines().next().unwrap();
    assert!(
        first.starts_with("::notice title=hpa-lint overprovisioned-min-replicas::batch/HorizontalPodAutoscaler/reports: spec.minReplicas: held at `minReplicas` (8)"),
        "{first}"
    );
    assert!(!github.contains("file="), "{github}");
}

#[test]
fn pages_through_lists_with_continue() {
    let stage = Stage::new(shop());
    let paged = stage.audit(&["-A", "--chunk-size", "4", "--format", "json"]);
    assert_eq!(findings(&paged), pairs(&SHOP));
    let requests = stage.standin.requests();
    let deployments: Vec<&String> = requests
        .iter()
        .filter(|r| r.starts_with("/apis/apps/v1/deployments"))
        .collect();
    // 34 Deployments, 4 a page.
    assert_eq!(deployments.len(), 9, "{deployments:?}");
    assert_eq!(
        deployments[1],
        "/apis/apps/v1/deployments?limit=4&continue=standin-4"
    );
}

#[test]
fn survives_a_slow_page_and_an_expired_continue_token() {
    let mut cluster = shop();
    cluster
        .slow("deployments", Duration::from_millis(400))
        .expire_first_continue("deployments");
    let stage = Stage::new(cluster);
    let output = stage.audit(&["-A", "--chunk-size", "20", "--format", "json"]);
    assert_eq!(findings(&output), pairs(&SHOP), "{}", stderr(&output));
    // The expired list started over from its first page.
    let firsts = stage
        .standin
        .requests()
        .iter()
        .filter(|r| *r == "/apis/apps/v1/deployments?limit=20")
        .count();
    assert_eq!(firsts, 2);
}

#[test]
fn a_forbidden_kind_is_reported_once_and_its_rule_stays_silent() {
    let mut cluster = shop();
    cluster
        .forbid("policy", "poddisruptionbudgets")
        .forbid("", "limitranges");
    let stage = Stage::new(cluster);
    let output = stage.audit(&["-A", "--format", "json"]);
    assert_eq!(output.status.code(), Some(2));
    let expected: Vec<_> = SHOP
        .iter()
        .filter(|(rule, _)| !["pdb-blocks-eviction", "target-missing-requests"].contains(rule))
        .copied()
        .collect();
    assert_eq!(findings(&output), pairs(&expected));
    assert_eq!(
        stderr(&output),
        "kubectl hpa-lint: cannot read limitranges: limitranges is forbidden: User \"auditor\" cannot list resource \"limitranges\" in API group \"\" at the cluster scope; the rules that read them say nothing that depends on them: `target-missing-requests`, `scaling-inactive`\n\
         kubectl hpa-lint: cannot read poddisruptionbudgets.policy: poddisruptionbudgets.policy is forbidden: User \"auditor\" cannot list resource \"poddisruptionbudgets\" in API group \"policy\" at the cluster scope; the rules that read them say nothing that depends on them: `pdb-blocks-eviction`\n"
    );
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["summary"]["unread"], 2);
    let text = stdout(&stage.audit(&["-A"]));
    assert!(text.ends_with("Could not read 2 inputs; found 2 errors, 2 warnings and 2 infos in the 7 HPAs (45 objects) of context `shop-prod` read.\n"), "{text}");
}

#[test]
fn forbidden_targets_are_unknown_not_missing() {
    let mut cluster = shop();
    cluster.forbid("apps", "deployments");
    let stage = Stage::new(cluster);
    let output = stage.audit(&["-A", "--format", "json"]);
    assert_eq!(output.status.code(), Some(2));
    let found = findings(&output);
    // Nothing about the Deployments: neither missing (api) nor without requests (checkout).
    assert!(
        !found
            .iter()
            .any(|(rule, _)| rule == "target-not-found" || rule == "target-missing-requests"),
        "{found:?}"
    );
    assert!(found.contains(&(
        "scaling-inactive".to_owned(),
        "shop/HorizontalPodAutoscaler/api".to_owned()
    )));
    assert!(
        stderr(&output).contains("the HPAs that scale a Deployment are not checked against it")
    );
}

#[test]
fn forbidden_hpas_end_the_run() {
    let mut cluster = shop();
    cluster.forbid("autoscaling", "horizontalpodautoscalers");
    let output = Stage::new(cluster).audit(&["-A"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stdout(&output), "");
    assert!(
        stderr(&output).starts_with("kubectl hpa-lint: cannot list horizontalpodautoscalers.autoscaling: horizontalpodautoscalers.autoscaling is forbidden"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn an_absent_crd_is_no_error() {
    // No argoproj.io, no VPA, no KEDA: the Rollout an HPA names does not exist.
    let mut cluster = Cluster::new("v1.33.4");
    let hpa = common::hpa("shop", "frontend", "Rollout", 2, 10, serde_json::json!({}));
    cluster.serve(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        true,
        vec![hpa],
    );
    let stage = Stage::new(cluster);
    let output = stage.audit(&["-A", "--format", "json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stderr(&output), "");
    assert_eq!(
        findings(&output),
        pairs(&[("target-not-found", "shop/HorizontalPodAutoscaler/frontend")])
    );
}

#[test]
fn without_discovery_custom_kinds_are_unread() {
    let mut cluster = shop();
    cluster.hide_discovery();
    let output = Stage::new(cluster).audit(&["-A", "--format", "json"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        "kubectl hpa-lint: cannot read API discovery (/apis): forbidden: User \"auditor\" cannot get path \"/apis\"; custom kinds (VerticalPodAutoscalers, KEDA ScaledObjects, custom targets) are not read\n"
    );
    // The Rollout of `frontend` is unknown, not missing.
    assert_eq!(findings(&output), pairs(&SHOP));
}

#[test]
fn scopes_to_the_context_namespace_a_namespace_labels_or_names() {
    let stage = Stage::new(shop());
    let in_context = findings(&stage.audit(&["--format", "json"]));
    assert_eq!(in_context, pairs(&SHOP[1..]));
    assert!(
        stage
            .standin
            .requests()
            .contains(&"/apis/apps/v1/namespaces/shop/deployments?limit=500".to_owned())
    );
    let batch = findings(&stage.audit(&["-n", "batch", "--format", "json"]));
    assert_eq!(batch, pairs(&SHOP[..1]));
    let labelled = findings(&stage.audit(&["-A", "-l", "team=batch", "--format", "json"]));
    assert_eq!(labelled, pairs(&SHOP[..1]));
    assert!(
        stage
            .standin
            .requests()
            .iter()
            .any(|r| r.ends_with("labelSelector=team%3Dbatch"))
    );
    let named = findings(&stage.audit(&["cart", "api", "--format", "json"]));
    assert_eq!(named, pairs(&SHOP[1..4]));
    let missing = stage.audit(&["nope"]);
    assert_eq!(missing.status.code(), Some(2));
    assert_eq!(
        stderr(&missing),
        "kubectl hpa-lint: HorizontalPodAutoscaler `nope` not found\n"
    );
}

#[test]
fn select_ignore_and_the_configuration_file_apply() {
    let stage = Stage::new(shop());
    let live = findings(&stage.audit(&["-A", "--select", "live", "--format", "json"]));
    assert_eq!(live.len(), 5, "{live:?}");
    let without = findings(&stage.audit(&[
        "-A",
        "--ignore",
        "live,pdb-blocks-eviction",
        "--format",
        "json",
    ]));
    assert_eq!(without, pairs(&[SHOP[2], SHOP[4]]));
    std::fs::write(
        stage.dir.path().join(".hpa-lint.yaml"),
        "rules:\n  unknown-metric-value: off\npinnedThreshold: 120h\n",
    )
    .unwrap();
    let configured = findings(&stage.audit(&["-A", "--format", "json"]));
    let expected: Vec<_> = SHOP
        .iter()
        .filter(|(rule, _)| !["unknown-metric-value", "pinned-at-max-replicas"].contains(rule))
        .copied()
        .collect();
    assert_eq!(configured, pairs(&expected));
    // Manifest rules stay off whatever is selected: every live workload has `spec.replicas`.
    let manifest = findings(&stage.audit(&[
        "-A",
        "--isolated",
        "--select",
        "target-replicas-conflict",
        "--format",
        "json",
    ]));
    assert_eq!(manifest, Vec::<(String, String)>::new());
}

#[test]
fn exit_codes_follow_the_cli() {
    let stage = Stage::new(shop());
    // Infos only: clean.
    assert_eq!(stage.audit(&["-n", "batch"]).status.code(), Some(0));
    // Warnings fail only with --deny-warnings.
    let warnings = ["-A", "--select", "unknown-metric-value"];
    assert_eq!(stage.audit(&warnings).status.code(), Some(0));
    assert_eq!(
        stage
            .audit(&[&warnings[..], &["--deny-warnings"]].concat())
            .status
            .code(),
        Some(1)
    );
    // No cluster at all.
    let empty = tempfile::tempdir().unwrap();
    std::fs::write(empty.path().join("kubeconfig"), "apiVersion: v1\nkind: Config\ncurrent-context: gone\nclusters:\n- name: gone\n  cluster: {server: \"http://127.0.0.1:9\"}\ncontexts:\n- name: gone\n  context: {cluster: gone, user: u}\nusers:\n- name: u\n  user: {}\n").unwrap();
    let unreachable = common::audit_in(empty.path(), &["-A"]);
    assert_eq!(unreachable.status.code(), Some(2));
    // The first request says so: nothing else would come.
    assert!(
        stderr(&unreachable)
            .starts_with("kubectl hpa-lint: cannot read /version from http://127.0.0.1:9: "),
        "{}",
        stderr(&unreachable)
    );
}

#[test]
fn judges_durations_at_the_time_given() {
    let stage = Stage::new(shop());
    // Six hours after `cart` hit its ceiling: not pinned for a day yet.
    let early =
        findings(&stage.audit(&["-A", "--now", "2026-02-28T13:15:00Z", "--format", "json"]));
    assert!(
        !early
            .iter()
            .any(|(rule, _)| rule == "pinned-at-max-replicas"),
        "{early:?}"
    );
    let empty = Cluster::new("v1.33.4");
    let mut cluster = empty;
    cluster.serve(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        true,
        Vec::new(),
    );
    let output = Stage::new(cluster).audit(&["-A"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        stdout(&output),
        "No problems found in 0 HPAs (0 objects) of context `shop-prod`.\n"
    );
}

/// Without a kubeconfig and outside a pod, the audit says what is missing
/// and how to give it, once.
#[test]
fn without_a_cluster_the_audit_says_what_is_missing() {
    let home = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_kubectl-hpa_lint"));
    command
        .arg("-A")
        .env("HOME", home.path())
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST");
    let output = run(command);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains("no kubeconfig") && message.contains("not in a pod"),
        "{message}"
    );
    assert!(message.contains("--kubeconfig FILE"), "{message}");
    assert!(
        !message.contains("not found: environment variable"),
        "{message}"
    );
}
