//! `compare` and `diff` on a history replayed from a real Prometheus
//! (Debian's package, `.ci/install-tools`): the same figures, sync for sync,
//! as on a CSV trace of the same demand, with what kube-state-metrics saw
//! beside the old spec and how closely it followed.

use std::path::Path;
use std::process::Command as Process;

use assert_cmd::Command;
use serde_json::Value;

use hpa_lint_test_support::history::{Events, History, rising_demand};
use hpa_lint_test_support::prometheus::Prometheus;

/// 2025-01-01T00:00:00Z.
const START: i64 = 1_735_689_600;
const SYNCS: usize = 240;

/// CPU utilization over both containers and the `web` container's memory;
/// the new spec aims lower, reaches higher and scales up in bigger steps.
fn manifests(utilization: i32, max: i32, scale_up: &str) -> String {
    format!(
        "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {{name: web, namespace: shop}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}
  minReplicas: 2
  maxReplicas: {max}
  metrics:
  - type: Resource
    resource: {{name: cpu, target: {{type: Utilization, averageUtilization: {utilization}}}}}
  - type: ContainerResource
    containerResource: {{name: memory, container: web, target: {{type: AverageValue, averageValue: 300Mi}}}}
  behavior:
    scaleUp: {scale_up}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: shop}}
spec:
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
      - {{name: web, image: web, resources: {{requests: {{cpu: 400m, memory: 256Mi}}}}}}
      - {{name: sidecar, image: proxy, resources: {{requests: {{cpu: 100m, memory: 64Mi}}}}}}
"
    )
}

fn hpa_lint(dir: &Path, subcommand: &str) -> Command {
    let mut command = Command::cargo_bin("hpa-lint").expect("the binary is built");
    command
        .current_dir(dir)
        .arg(subcommand)
        .arg("--isolated")
        .env_remove("HPA_LINT_KUBE_VERSION");
    command
}

fn stdout(command: &mut Command) -> String {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// `--since` and `--until` of the history.
fn range() -> [String; 4] {
    let at = |seconds| jiff::Timestamp::from_second(seconds).unwrap().to_string();
    [
        "--since".into(),
        at(START),
        "--until".into(),
        at(START + 15 * (SYNCS as i64 - 1)),
    ]
}

fn git(dir: &Path, args: &[&str]) {
    let status = Process::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Dev")
        .env("GIT_AUTHOR_EMAIL", "dev@example.com")
        .env("GIT_COMMITTER_NAME", "Dev")
        .env("GIT_COMMITTER_EMAIL", "dev@example.com")
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

#[test]
fn replayed_history_compares_as_its_trace() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("old.yaml"), manifests(60, 12, "{}")).unwrap();
    std::fs::write(
        root.join("new.yaml"),
        manifests(
            50,
            16,
            "{policies: [{type: Pods, value: 6, periodSeconds: 15}]}",
        ),
    )
    .unwrap();
    let (cpu, memory) = rising_demand(SYNCS);
    let mut csv = String::from("time,cpu,memory\n");
    for (k, (cpu, memory)) in cpu.iter().zip(&memory).enumerate() {
        csv += &format!("{},{cpu}m,{memory}\n", k * 15);
    }
    std::fs::write(root.join("demand.csv"), csv).unwrap();
    let compare = |extra: &[&str], format: &str| {
        stdout(
            hpa_lint(root, "compare")
                .args(["old.yaml", "new.yaml", "--format", format])
                .args(extra),
        )
    };
    let traced = compare(&["--trace", "demand.csv"], "csv");
    // The cluster ran the old spec: its pods followed the old spec's
    // simulation; kube-state-metrics saw one pod more for a few syncs.
    let rows: Vec<Vec<&str>> = traced
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let desired: Vec<i32> = rows.iter().map(|r| r[4].parse().unwrap()).collect();
    let mut observed: Vec<i32> = rows.iter().map(|r| r[3].parse().unwrap()).collect();
    assert!(
        observed.iter().max() > observed.iter().min(),
        "the old spec scales"
    );
    for count in &mut observed[150..162] {
        *count += 1;
    }
    let history = History {
        pods: History::pods(
            "shop",
            "web",
            2,
            &desired,
            &Events {
                rolling_update: Some(100),
                pod_ends: Some(60),
            },
        ),
        namespace: "shop".to_owned(),
        deployment: "web".to_owned(),
        hpa: "web".to_owned(),
        start: START,
        cpu,
        memory,
        observed: observed.clone(),
        scrapes: vec![14, 9, 4],
        noise: true,
        kube_state_metrics: true,
    };
    let prometheus = Prometheus::start(|out| history.write_openmetrics(out));
    let url = prometheus.url.as_str();
    let replay: Vec<String> = ["--prometheus", url, "--rate-interval", "15s"]
        .into_iter()
        .map(str::to_owned)
        .chain(range())
        .collect();
    let replay: Vec<&str> = replay.iter().map(String::as_str).collect();
    // Sync for sync: the same demand and replicas, and what was observed.
    let replayed = compare(&replay, "csv");
    let mut lines = replayed.lines();
    assert_eq!(
        lines.next().unwrap(),
        format!("{},observedReplicas", traced.lines().next().unwrap())
    );
    for (k, (line, expected)) in lines.zip(traced.lines().skip(1)).enumerate() {
        let (simulated, seen) = line.rsplit_once(',').unwrap();
        assert_eq!(simulated, expected, "sync {k}");
        assert_eq!(seen, observed[k].to_string(), "sync {k}");
    }
    let traced: Value = serde_json::from_str(&compare(&["--trace", "demand.csv"], "json")).unwrap();
    let replayed: Value = serde_json::from_str(&compare(&replay, "json")).unwrap();
    assert_eq!(replayed["summary"], traced["summary"]);
    assert_eq!(replayed["demand"]["prometheus"], url);
    assert_eq!(replayed["demand"]["start"], "2025-01-01T00:00:00Z");
    let lagged = 12.0 / SYNCS as f64;
    assert_eq!(replayed["fidelity"]["syncs"], SYNCS);
    assert_eq!(replayed["fidelity"]["equal"], 1.0 - lagged);
    assert_eq!(traced.get("fidelity"), None);
    let plot = root.join("compare.svg");
    let mut with_plot = replay.clone();
    with_plot.extend(["--plot", plot.to_str().unwrap()]);
    let text = compare(&with_plot, "text");
    assert!(
        text.contains("observed (kube-state-metrics): the old spec's simulated replicas equal the observed at 95.0 % of 240 syncs; mean absolute difference 0.05 replicas"),
        "{text}"
    );
    assert!(
        std::fs::read_to_string(&plot)
            .unwrap()
            .contains("\nobserved\n</text>")
    );

    // A pull request from the old spec to the new one, replayed as well.
    let repo = root.join("repo");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::copy(root.join("old.yaml"), repo.join("web.yaml")).unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "old"]);
    std::fs::copy(root.join("new.yaml"), repo.join("web.yaml")).unwrap();
    let diff: Value = serde_json::from_str(&stdout(
        hpa_lint(&repo, "diff")
            .args(["main", "--load", "step", "--format", "json"])
            .args(&replay),
    ))
    .unwrap();
    let comparisons = diff["hpas"][0]["comparisons"].as_array().unwrap();
    assert_eq!(comparisons.len(), 2);
    assert_eq!(comparisons[1]["summary"], traced["summary"]);
    assert_eq!(comparisons[1]["fidelity"], replayed["fidelity"]);
}
