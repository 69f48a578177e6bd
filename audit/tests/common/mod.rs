//! A small shop on the API-server stand-in, with HPAs whose statuses are
//! recorded the way kube-controller-manager writes them, and the real
//! `kubectl-hpa_lint` binary run against it through a kubeconfig file.

#![allow(dead_code)] // Each test file uses a different part.

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use kube_standin::proxy::{Proxy, RunningProxy};
use kube_standin::{Cluster, Running};
use serde_json::{Value, json};

/// When the audits judge durations (`--now`).
pub const NOW: &str = "2026-03-04T08:00:00Z";

fn conditions(active: Value, limited: Value) -> Value {
    json!([
        {"type": "AbleToScale", "status": "True", "lastTransitionTime": "2026-02-01T00:00:00Z", "reason": "ReadyForNewScale", "message": "recommended size matches current size"},
        active,
        limited,
    ])
}

fn valid_metric() -> Value {
    json!({"type": "ScalingActive", "status": "True", "lastTransitionTime": "2026-02-01T00:00:00Z", "reason": "ValidMetricFound", "message": "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)"})
}

fn within_range() -> Value {
    json!({"type": "ScalingLimited", "status": "False", "lastTransitionTime": "2026-02-01T00:00:00Z", "reason": "DesiredWithinRange", "message": "the desired count is within the acceptable range"})
}

fn cpu(utilization: i64) -> Value {
    json!([{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": utilization, "averageValue": "100m"}}}])
}

/// An HPA on CPU at 70 % as a cluster serves it (managed fields and all).
pub fn hpa(namespace: &str, name: &str, kind: &str, min: i64, max: i64, status: Value) -> Value {
    let api_version = match kind {
        "Rollout" => "argoproj.io/v1alpha1",
        _ => "apps/v1",
    };
    json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": namespace, "uid": format!("uid-{name}"), "resourceVersion": "77", "generation": 1,
                     "labels": {"team": namespace},
                     "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
                     "managedFields": [{"manager": "argocd-controller", "operation": "Apply", "apiVersion": "autoscaling/v2", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]},
        "spec": {"scaleTargetRef": {"apiVersion": api_version, "kind": kind, "name": name},
                 "minReplicas": min, "maxReplicas": max,
                 "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]},
        "status": status,
    })
}

/// A workload of `kind` with a CPU request on every container but the
/// sidecar, when `sidecar` is set.
pub fn workload(
    api_version: &str,
    kind: &str,
    namespace: &str,
    name: &str,
    sidecar: bool,
) -> Value {
    let mut containers = vec![
        json!({"name": "app", "image": format!("{name}:1.0"), "env": [{"name": "MODE", "value": "prod"}], "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}}}),
    ];
    if sidecar {
        containers.push(json!({"name": "istio-proxy", "image": "proxyv2:1.22"}));
    }
    json!({
        "apiVersion": api_version, "kind": kind,
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": name},
                     "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
                     "managedFields": [{"manager": "kubectl", "operation": "Update"}]},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": containers}}},
        "status": {"replicas": 3, "readyReplicas": 3},
    })
}

fn api_service(name: &str, available: bool) -> Value {
    let (version, group) = name.split_once('.').unwrap();
    let condition = if available {
        json!({"type": "Available", "status": "True", "reason": "Passed", "message": "all checks passed"})
    } else {
        let url = format!("https://10.96.80.4:443/apis/{group}/{version}");
        json!({"type": "Available", "status": "False", "reason": "FailedDiscoveryCheck", "message": format!("failing or missing response from {url}: Get \"{url}\": dial tcp 10.96.80.4:443: connect: connection refused")})
    };
    json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
           "metadata": {"name": name}, "spec": {"group": group, "version": version},
           "status": {"conditions": [condition]}})
}

/// The shop: one HPA per problem the audit finds, healthy ones, and
/// unrelated Deployments enough for several pages.
pub fn shop() -> Cluster {
    let working = json!({"currentReplicas": 3, "desiredReplicas": 3, "currentMetrics": cpu(41), "conditions": conditions(valid_metric(), within_range())});
    let missing_request = json!({"currentReplicas": 2, "desiredReplicas": 2, "currentMetrics": [{"type": ""}],
        "conditions": conditions(json!({"type": "ScalingActive", "status": "False", "lastTransitionTime": "2026-03-01T08:00:00Z", "reason": "FailedGetResourceMetric",
            "message": "the HPA was unable to compute the replica count: failed to get cpu utilization: missing request for cpu in container \"istio-proxy\" of Pod \"checkout-6d4cf56db6-8xk2p\""}), within_range())});
    let no_target = json!({"currentReplicas": 0, "desiredReplicas": 0, "conditions": [
        {"type": "AbleToScale", "status": "False", "lastTransitionTime": "2026-03-02T08:00:00Z", "reason": "FailedGetScale", "message": "the HPA controller was unable to get the target's current scale: deployments.apps \"api\" not found"}]});
    let pinned = json!({"currentReplicas": 6, "desiredReplicas": 6, "currentMetrics": cpu(97), "conditions": conditions(valid_metric(),
        json!({"type": "ScalingLimited", "status": "True", "lastTransitionTime": "2026-02-28T07:15:00Z", "reason": "TooManyReplicas", "message": "the desired replica count is more than the maximum replica count"}))});
    let idle = json!({"currentReplicas": 8, "desiredReplicas": 8, "currentMetrics": cpu(6), "conditions": conditions(valid_metric(),
        json!({"type": "ScalingLimited", "status": "True", "lastTransitionTime": "2026-02-20T00:00:00Z", "reason": "TooFewReplicas", "message": "the desired replica count is less than the minimum replica count"}))});
    let mut worker = hpa(
        "shop",
        "worker",
        "Deployment",
        1,
        10,
        json!({"currentReplicas": 4, "desiredReplicas": 4,
        "currentMetrics": [cpu(35)[0].clone(), {"type": ""}], "conditions": conditions(valid_metric(), within_range())}),
    );
    worker["spec"]["metrics"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "External", "external": {"metric": {"name": "queue_depth"}, "target": {"type": "AverageValue", "averageValue": "30"}}}));

    let hpas = vec![
        hpa("batch", "reports", "Deployment", 8, 20, idle),
        hpa("shop", "api", "Deployment", 2, 10, no_target),
        hpa("shop", "cart", "StatefulSet", 2, 6, pinned),
        hpa("shop", "checkout", "Deployment", 2, 10, missing_request),
        hpa("shop", "frontend", "Rollout", 2, 10, working.clone()),
        hpa("shop", "web", "Deployment", 2, 10, working),
        worker,
    ];
    let mut deployments = vec![
        workload("apps/v1", "Deployment", "batch", "reports", false),
        workload("apps/v1", "Deployment", "shop", "checkout", true),
        workload("apps/v1", "Deployment", "shop", "web", false),
        workload("apps/v1", "Deployment", "shop", "worker", false),
    ];
    deployments.extend((0..30).map(|i| {
        workload(
            "apps/v1",
            "Deployment",
            "shop",
            &format!("unrelated-{i}"),
            false,
        )
    }));
    let mut cluster = Cluster::new("v1.33.4");
    cluster
        .serve(
            "autoscaling/v2",
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
            true,
            hpas,
        )
        .serve("apps/v1", "Deployment", "deployments", true, deployments)
        .serve(
            "apps/v1",
            "StatefulSet",
            "statefulsets",
            true,
            vec![workload("apps/v1", "StatefulSet", "shop", "cart", false)],
        )
        .serve(
            "argoproj.io/v1alpha1",
            "Rollout",
            "rollouts",
            true,
            vec![workload(
                "argoproj.io/v1alpha1",
                "Rollout",
                "shop",
                "frontend",
                false,
            )],
        )
        .with_scale()
        .serve(
            "policy/v1",
            "PodDisruptionBudget",
            "poddisruptionbudgets",
            true,
            vec![json!({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
            "status": {"disruptionsAllowed": 1}})],
        )
        .serve("v1", "LimitRange", "limitranges", true, Vec::new())
        .serve(
            "apiregistration.k8s.io/v1",
            "APIService",
            "apiservices",
            false,
            vec![
                api_service("v1beta1.metrics.k8s.io", true),
                api_service("v1beta1.external.metrics.k8s.io", false),
            ],
        );
    cluster
}

/// A stand-in serving `cluster`, on a runtime of its own, and a directory
/// with a kubeconfig for it (context `shop-prod`, namespace `shop`).
pub struct Stage {
    pub standin: Running,
    pub dir: tempfile::TempDir,
    runtime: tokio::runtime::Runtime,
}

impl Stage {
    /// Over plain HTTP.
    pub fn new(cluster: Cluster) -> Self {
        Self::start(cluster, false)
    }

    /// Over TLS, the kubeconfig trusting the stand-in's CA.
    pub fn tls(cluster: Cluster) -> Self {
        Self::start(cluster, true)
    }

    fn start(cluster: Cluster, tls: bool) -> Self {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let standin = if tls {
            runtime.block_on(cluster.start_tls())
        } else {
            runtime.block_on(cluster.start())
        }
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("kubeconfig"),
            standin.kubeconfig("shop-prod", "shop"),
        )
        .unwrap();
        Self {
            standin,
            dir,
            runtime,
        }
    }

    /// Starts `proxy` on the stage's runtime.
    pub fn proxy(&self, proxy: Proxy) -> RunningProxy {
        self.runtime.block_on(proxy.start()).unwrap()
    }

    /// Runs `kubectl-hpa_lint` with `args` in the stage's directory.
    pub fn audit(&self, args: &[&str]) -> Output {
        audit_in(self.dir.path(), args)
    }
}

/// Runs `kubectl-hpa_lint` in `dir` with the kubeconfig there, at [`NOW`]
/// unless `args` say `--now`.
pub fn audit_in(dir: &Path, args: &[&str]) -> Output {
    run(audit_command(dir, args))
}

/// The proxy variables of the environment, which no test inherits.
pub const PROXY_VARIABLES: [&str; 7] = [
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "NO_PROXY",
    "no_proxy",
    "REQUEST_METHOD",
];

/// `kubectl-hpa_lint` in `dir` with the kubeconfig there. No proxy from
/// the test's environment.
pub fn plugin_command(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kubectl-hpa_lint"));
    command
        .current_dir(dir)
        .env("KUBECONFIG", dir.join("kubeconfig"))
        .env_remove("HPA_LINT_KUBE_VERSION");
    for variable in PROXY_VARIABLES {
        command.env_remove(variable);
    }
    command
}

/// The command [`audit_in`] runs, to add to.
pub fn audit_command(dir: &Path, args: &[&str]) -> Command {
    let mut command = plugin_command(dir);
    if !args.contains(&"--now") {
        command.args(["--now", NOW]);
    }
    command.args(args);
    command
}

/// How long a run may take: a run that hangs fails its test, it never
/// holds CI up.
const DEADLINE: Duration = Duration::from_secs(120);

/// Runs `command` to its end, or kills it and fails after [`DEADLINE`].
pub fn run(mut command: Command) -> Output {
    let (stdout, stderr) = (tempfile::tempfile().unwrap(), tempfile::tempfile().unwrap());
    // No terminal: exec plugins behave the same wherever the tests run.
    let mut child = command
        .stdin(Stdio::null())
        .stdout(stdout.try_clone().unwrap())
        .stderr(stderr.try_clone().unwrap())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running after {DEADLINE:?}: {command:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let read = |mut file: std::fs::File| {
        let mut bytes = Vec::new();
        file.seek(SeekFrom::Start(0)).unwrap();
        file.read_to_end(&mut bytes).unwrap();
        bytes
    };
    Output {
        status,
        stdout: read(stdout),
        stderr: read(stderr),
    }
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

/// `(rule, namespace/kind/name)` of each finding of a JSON report.
pub fn findings(output: &Output) -> Vec<(String, String)> {
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let o = &d["object"];
            (
                d["rule"].as_str().unwrap().to_owned(),
                format!(
                    "{}/{}/{}",
                    o["namespace"].as_str().unwrap(),
                    o["kind"].as_str().unwrap(),
                    o["name"].as_str().unwrap()
                ),
            )
        })
        .collect()
}
