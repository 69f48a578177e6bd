//! What the end-to-end tests share: the binary, the test manifests, output readers.

#![allow(dead_code, reason = "each test file uses its own part")]

pub mod svg;

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

pub fn hpa_lint() -> Command {
    let mut command = Command::cargo_bin("hpa-lint").expect("the binary is built");
    // Tests must not pick up a configuration from the machine they run on.
    command
        .arg("--isolated")
        .env_remove("HPA_LINT_KUBE_VERSION");
    command
}

pub const HPA_MAX_ZERO: &str = "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 1
";

/// The Deployment the test HPAs scale, so they find their target.
pub const TARGET: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: nginx, resources: {requests: {cpu: 100m}}}
";

/// An HPA together with its target.
pub fn with_target(hpa: &str) -> String {
    format!("{hpa}---\n{TARGET}")
}

pub const CLEAN: &str = "apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {a: b}
";

pub fn write(dir: &Path, name: &str, content: impl AsRef<[u8]>) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

pub fn json_output(command: &mut Command) -> Value {
    let output = command.arg("--format").arg("json").output().unwrap();
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)))
}

pub fn rules_of(report: &Value) -> Vec<String> {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["rule"].as_str().unwrap().to_owned())
        .collect()
}

/// An `autoscaling/v2` HPA `shop/web` of Deployment `web`, up to 10
/// replicas, on cpu utilization at `percent`.
pub fn cpu_hpa(percent: u32) -> String {
    format!(
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {{name: web, namespace: shop}}\n\
         spec:\n  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}\n  maxReplicas: 10\n  \
         metrics: [{{type: Resource, resource: {{name: cpu, target: {{type: Utilization, averageUtilization: {percent}}}}}}}]\n"
    )
}
