//! `kubectl hpa-lint replay` against the API-server stand-in and a real
//! Prometheus (Debian's package, `.ci/install-tools`) loaded with a
//! generated history: the replay of a live HPA equals `hpa-lint simulate
//! --prometheus` of the same objects saved to a file, sync for sync, in
//! every format and on the plot; the replay reads the HPA and its target
//! with `get` and nothing else; and what stops it (an HPA not found, a
//! `get` refused, Prometheus unreachable) is a clear error, exit code 2 and
//! nothing written.
//!
//! `hpa-lint simulate` runs in this process, through the library function
//! its binary calls with the same command line (`hpa_lint::simulate::run`):
//! the binary of another package cannot be a dependency of these tests. Its
//! own tests (`tests/replay.rs` at the root) check that binary against a
//! real Prometheus.

mod common;

use std::path::Path;
use std::process::Output;

use clap::{Args, Parser};
use kube_standin::Cluster;
use serde_json::{Value, json};

use common::{Stage, plugin_command, run, stderr, stdout};
use hpa_lint::prometheus::time::format;
use hpa_lint_test_support::history::{Events, History, SYNC, rising_demand};
use hpa_lint_test_support::prometheus::Prometheus;

/// 2025-01-01T00:00:00Z, the replay's start.
const START: i64 = 1_735_689_600;

/// The HPA as the API server serves it: the defaulted `behavior`, managed
/// fields (a spec written an hour into the replay), the status.
fn live_hpa(target: &str) -> Value {
    json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {
            "name": "web", "namespace": "shop", "uid": "3f1c4f4e-hpa", "resourceVersion": "81234",
            "generation": 3, "creationTimestamp": "2024-11-02T09:00:00Z",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
            "managedFields": [
                {"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "autoscaling/v2",
                 "time": "2025-01-01T01:00:00Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:spec": {"f:maxReplicas": {}, "f:metrics": {}, "f:minReplicas": {}, "f:scaleTargetRef": {}}}},
                {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "autoscaling/v2",
                 "time": "2025-01-01T02:00:00Z", "fieldsType": "FieldsV1", "subresource": "status",
                 "fieldsV1": {"f:status": {"f:currentReplicas": {}}}}]},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "minReplicas": 2, "maxReplicas": 12,
            "metrics": [
                {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}},
                {"type": "ContainerResource", "containerResource": {"name": "memory", "container": "web",
                 "target": {"type": "AverageValue", "averageValue": "300Mi"}}}],
            "behavior": {
                "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
                    {"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]},
                "scaleDown": {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}}},
        "status": {
            "currentReplicas": 3, "desiredReplicas": 3, "lastScaleTime": "2025-01-01T03:00:00Z",
            "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 41, "averageValue": "205m"}}}],
            "conditions": [{"type": "AbleToScale", "status": "True", "lastTransitionTime": "2024-11-02T09:00:00Z", "reason": "ReadyForNewScale", "message": "recommended size matches current size"}]},
    })
}

/// The Deployment as the API server serves it, its template defaulted: the
/// `sidecar` has limits only (its pods request them).
fn live_deployment() -> Value {
    let container = |name: &str, resources: Value| {
        json!({"name": name, "image": format!("registry.example/{name}:1.4"), "resources": resources,
               "imagePullPolicy": "IfNotPresent", "terminationMessagePath": "/dev/termination-log",
               "terminationMessagePolicy": "File"})
    };
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "uid": "9d0a-deploy", "generation": 14, "resourceVersion": "81200",
                     "annotations": {"deployment.kubernetes.io/revision": "7"},
                     "managedFields": [{"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "apps/v1",
                                        "time": "2024-12-20T10:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}}}]},
        "spec": {
            "replicas": 3, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        container("web", json!({"requests": {"cpu": "400m", "memory": "256Mi"}})),
                        container("sidecar", json!({"limits": {"cpu": "100m", "memory": "64Mi"}}))],
                    "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
                    "securityContext": {}, "schedulerName": "default-scheduler"}}},
        "status": {"observedGeneration": 14, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 3},
    })
}

/// A cluster at 1.36 serving `hpa` and the Deployment.
fn cluster(hpa: Value) -> Cluster {
    let mut cluster = Cluster::new("v1.36.2");
    cluster
        .serve(
            "autoscaling/v2",
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
            true,
            vec![hpa],
        )
        .serve(
            "apps/v1",
            "Deployment",
            "deployments",
            true,
            vec![live_deployment()],
        )
        .serve("v1", "LimitRange", "limitranges", true, Vec::new());
    cluster
}

/// Two outputs, line by line: a difference shows as its line, not as two
/// whole outputs.
fn assert_same_lines(got: &str, expected: &str, what: &str) {
    assert_eq!(got.lines().count(), expected.lines().count(), "{what}");
    for (k, (got, expected)) in got.lines().zip(expected.lines()).enumerate() {
        assert_eq!(got, expected, "{what}, line {k}");
    }
}

/// A subcommand's arguments, parsed as its binary parses them.
#[derive(Parser)]
struct Command<A: Args> {
    #[command(flatten)]
    args: A,
}

/// `hpa-lint COMMAND` with `args`, as its binary runs it (`run`): its
/// standard output.
fn hpa_lint<A: Args>(
    command: &str,
    args: &[String],
    run: impl Fn(&A, &mut Vec<u8>) -> anyhow::Result<u8>,
) -> String {
    let command_line = [format!("hpa-lint {command}"), "--isolated".to_owned()];
    let parsed = Command::<A>::try_parse_from(command_line.iter().chain(args)).unwrap();
    let mut out = Vec::new();
    run(&parsed.args, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// `hpa-lint simulate` with `args`: its standard output.
fn simulate(args: &[String]) -> String {
    hpa_lint("simulate", args, |args, out| {
        hpa_lint::simulate::run(args, out)
    })
}

/// `kubectl hpa-lint replay` with `args` on the stage.
fn replay(stage: &Stage, args: &[String]) -> Output {
    let mut command = plugin_command(stage.dir.path());
    command.arg("replay").args(args);
    run(command)
}

fn owned(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| (*a).to_owned()).collect()
}

fn path(path: &Path) -> String {
    path.to_str().unwrap().to_owned()
}

/// A Prometheus whose history is that of the live HPA over `syncs` syncs
/// from [`START`]: the pods follow the simulation of [`demand`] (with a
/// rolling update and a pod that ends early), and kube-state-metrics saw
/// them but for a few syncs where the controller lagged. With the history
/// and `--prometheus … --since … --until …` for it.
fn recorded(stage: &Stage, saved: &Path, syncs: usize) -> (Prometheus, History, Vec<String>) {
    let dir = stage.dir.path();
    let (cpu, memory) = rising_demand(syncs);
    let mut history = History {
        namespace: "shop".to_owned(),
        deployment: "web".to_owned(),
        hpa: "web".to_owned(),
        start: START,
        cpu,
        memory,
        pods: Vec::new(),
        observed: Vec::new(),
        scrapes: vec![14, 9, 4],
        noise: true,
        kube_state_metrics: true,
    };
    let trace = dir.join("demand.csv");
    std::fs::write(&trace, history.csv()).unwrap();
    let csv = simulate(&[
        path(saved),
        "--trace".into(),
        path(&trace),
        "--format".into(),
        "csv".into(),
    ]);
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let replicas = |name: &str| -> Vec<i32> {
        rows.iter()
            .map(|r| r[column(name)].parse().unwrap())
            .collect()
    };
    let (current, desired) = (replicas("currentReplicas"), replicas("desiredReplicas"));
    assert!(
        desired.iter().max() > desired.iter().min(),
        "the HPA scales"
    );
    let events = Events {
        rolling_update: Some(100),
        pod_ends: Some(60),
    };
    history.pods = History::pods("shop", "web", 2, &desired, &events);
    history.observed = current;
    for k in 150..162 {
        history.observed[k] += 1;
    }
    let prometheus = Prometheus::start(|out| history.write_openmetrics(out));
    let end = START + SYNC * (syncs as i64 - 1);
    let range = owned(&[
        "--prometheus",
        &prometheus.url,
        "--since",
        &format(START * 1000),
        "--until",
        &format(end * 1000),
        "--rate-interval",
        "15s",
    ]);
    (prometheus, history, range)
}

/// `kubectl get -o json` of the live HPA and its Deployment, saved in the
/// stage's directory.
fn saved(stage: &Stage) -> std::path::PathBuf {
    let saved = stage.dir.path().join("web.yaml");
    std::fs::write(
        &saved,
        format!("{}\n---\n{}\n", live_hpa("web"), live_deployment()),
    )
    .unwrap();
    saved
}

#[test]
fn the_replay_of_a_live_hpa_equals_simulate_of_it_saved_to_a_file() {
    let syncs = 240;
    let stage = Stage::new(cluster(live_hpa("web")));
    let dir = stage.dir.path();
    let saved = saved(&stage);
    let (_prometheus, history, range) = recorded(&stage, &saved, syncs);

    for output in ["csv", "json", "text"] {
        let (replayed_plot, simulated_plot) = (
            dir.join(format!("replay-{output}.svg")),
            dir.join(format!("simulate-{output}.svg")),
        );
        let extra = |plot: &Path| owned(&["--format", output, "--plot", &path(plot)]);
        let replayed = replay(
            &stage,
            &[
                vec!["shop/web".to_owned()],
                range.clone(),
                extra(&replayed_plot),
            ]
            .concat(),
        );
        assert_eq!(
            replayed.status.code(),
            Some(0),
            "{output}: {}",
            stderr(&replayed)
        );
        let simulated =
            simulate(&[vec![path(&saved)], range.clone(), extra(&simulated_plot)].concat());
        let replayed = stdout(&replayed);
        assert_same_lines(&replayed, &simulated, output);
        assert_eq!(
            std::fs::read_to_string(&replayed_plot).unwrap(),
            std::fs::read_to_string(&simulated_plot).unwrap(),
            "{output}: the plots"
        );
        if output == "csv" {
            // One row per sync, with what kube-state-metrics saw.
            let mut lines = replayed.lines();
            assert!(lines.next().unwrap().ends_with(",observedReplicas"));
            let observed: Vec<String> = lines
                .map(|l| l.rsplit_once(',').unwrap().1.to_owned())
                .collect();
            let expected: Vec<String> = history.observed.iter().map(i32::to_string).collect();
            assert_eq!(observed, expected);
        }
    }

    // The HPA named in the context's namespace, or with -n; only reads.
    for name in [&["web"][..], &["-n", "shop", "web"]] {
        let args = [owned(name), range.clone(), owned(&["--format", "json"])].concat();
        let replayed = replay(&stage, &args);
        assert_eq!(replayed.status.code(), Some(0), "{}", stderr(&replayed));
        let document: Value = serde_json::from_str(&stdout(&replayed)).unwrap();
        assert_eq!(document["hpa"], json!({"namespace": "shop", "name": "web"}));
        assert_eq!(document["fidelity"]["syncs"], syncs);
        assert!(
            !stderr(&replayed).contains("cannot list"),
            "{}",
            stderr(&replayed)
        );
        // The spec was written after the start: the replay says what it assumes.
        assert!(
            stderr(&replayed).contains("kubectl hpa-lint: note: `kubectl-client-side-apply` wrote the HPA's spec at 2025-01-01T01:00:00Z, after the replay's start (2025-01-01T00:00:00Z): the replay runs the spec as it is now over the whole range\n"),
            "{}",
            stderr(&replayed)
        );
    }
    let requests = stage.standin.requests();
    let reads: Vec<&str> = requests.iter().map(String::as_str).collect();
    let one = [
        "/version",
        "/apis/autoscaling/v2/namespaces/shop/horizontalpodautoscalers/web",
        "/apis/apps/v1/namespaces/shop/deployments/web",
        // What the namespace's LimitRanges give containers without requests.
        "/api/v1/namespaces/shop/limitranges?limit=500",
    ];
    assert_eq!(reads, [one; 5].concat());
}

/// Runs the replay with `args` on `stage`, expecting exit code 2, an error
/// containing `expected`, nothing on standard output and no plot.
fn fails(stage: &Stage, args: &[String], expected: &str) {
    let plot = stage.dir.path().join("failed.svg");
    let output = replay(
        stage,
        &[args.to_vec(), owned(&["--plot", &path(&plot)])].concat(),
    );
    let stderr = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(
        stderr.contains(expected),
        "{args:?}: expected {expected:?} in {stderr}"
    );
    assert!(
        output.stdout.is_empty(),
        "{args:?}: wrote {}",
        stdout(&output)
    );
    assert!(!plot.exists(), "{args:?} left a plot");
}

#[test]
fn what_stops_a_replay_is_a_clear_error_and_writes_nothing() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let closed = format!("http://127.0.0.1:{port}");
    let range = owned(&["--prometheus", &closed, "--since", "1h"]);
    let with = |name: &str| [owned(&[name]), range.clone()].concat();

    let stage = Stage::new(cluster(live_hpa("web")));
    fails(
        &stage,
        &with("shop/nope"),
        "kubectl hpa-lint: HorizontalPodAutoscaler shop/nope not found (context `shop-prod`)\n",
    );
    fails(
        &stage,
        &with("shop/web"),
        &format!("kubectl hpa-lint: cannot reach Prometheus at {closed}: "),
    );
    fails(
        &stage,
        &with("/web"),
        "kubectl hpa-lint: `/web`: expected the HPA as NAMESPACE/NAME or NAME, e.g. shop/web\n",
    );

    let mut forbidden = cluster(live_hpa("web"));
    forbidden.forbid("autoscaling", "horizontalpodautoscalers");
    fails(
        &Stage::new(forbidden),
        &with("shop/web"),
        "kubectl hpa-lint: cannot get HorizontalPodAutoscaler shop/web: horizontalpodautoscalers.autoscaling \"web\" is forbidden: User \"auditor\" cannot get resource \"horizontalpodautoscalers\" in API group \"autoscaling\" in the namespace \"shop\" (a replay needs `get` on horizontalpodautoscalers.autoscaling: see docs/audit.md, RBAC)\n",
    );
    let mut forbidden = cluster(live_hpa("web"));
    forbidden.forbid("apps", "deployments");
    fails(
        &Stage::new(forbidden),
        &with("shop/web"),
        "kubectl hpa-lint: cannot get the target Deployment shop/web: deployments.apps \"web\" is forbidden: User \"auditor\" cannot get resource \"deployments\" in API group \"apps\" in the namespace \"shop\" (a replay needs `get` on deployments.apps: see docs/audit.md, RBAC)\n",
    );
    fails(
        &Stage::new(cluster(live_hpa("gone"))),
        &with("shop/web"),
        "kubectl hpa-lint: the target Deployment shop/gone of HorizontalPodAutoscaler shop/web is not found: the controller cannot scale it, so there is nothing to replay\n",
    );

    // The audit's own options are not the replay's.
    let output = run({
        let mut command = plugin_command(stage.dir.path());
        command.args(["-A", "replay"]).args(with("shop/web"));
        command
    });
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains(
            "error: --all-namespaces is an option of the audit, not of `replay` (see `kubectl hpa-lint replay --help`)"
        ),
        "{}",
        stderr(&output)
    );
}

/// `hpa-lint compare` with `args`: its standard output.
fn compare(args: &[String]) -> String {
    hpa_lint("compare", args, |args, out| {
        hpa_lint::compare::run(args, out)
    })
}

/// A proposed spec of the HPA named `name`, without a namespace (a replay
/// puts it in the live HPA's) nor its target (the live one serves): aims
/// lower, reaches higher.
fn proposed(name: &str) -> String {
    format!(
        "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {{name: {name}}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}
  minReplicas: 3
  maxReplicas: 20
  metrics:
  - type: Resource
    resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 45}}}}
  - type: ContainerResource
    containerResource: {{name: memory, container: web, target: {{type: AverageValue, averageValue: 300Mi}}}}
"
    )
}

#[test]
fn a_replay_with_a_proposed_spec_equals_compare_of_the_live_one_saved_to_a_file() {
    let syncs = 240;
    let stage = Stage::new(cluster(live_hpa("web")));
    let dir = stage.dir.path();
    let saved = saved(&stage);
    let (_prometheus, history, range) = recorded(&stage, &saved, syncs);
    let new = dir.join("proposed.yaml");
    std::fs::write(&new, proposed("web")).unwrap();
    // The saved file's objects name their namespace; the proposed one is
    // read in the live HPA's, as the replay reads it.
    let namespace = owned(&["--namespace", "shop"]);
    for output in ["csv", "json", "text"] {
        let (replayed_plot, compared_plot) = (
            dir.join(format!("replay-{output}.svg")),
            dir.join(format!("compare-{output}.svg")),
        );
        let extra = |plot: &Path| owned(&["--format", output, "--plot", &path(plot)]);
        let replayed = replay(
            &stage,
            &[
                owned(&["shop/web", "--with", &path(&new)]),
                range.clone(),
                extra(&replayed_plot),
            ]
            .concat(),
        );
        assert_eq!(
            replayed.status.code(),
            Some(0),
            "{output}: {}",
            stderr(&replayed)
        );
        // The live spec is named after the context it came from, the saved
        // one after its file.
        let live = |text: String| text.replace(&path(&saved), "context shop-prod");
        let compared = live(compare(
            &[
                vec![path(&saved), path(&new)],
                namespace.clone(),
                range.clone(),
                extra(&compared_plot),
            ]
            .concat(),
        ));
        let replayed = stdout(&replayed);
        assert_same_lines(&replayed, &compared, output);
        assert_eq!(
            std::fs::read_to_string(&replayed_plot).unwrap(),
            live(std::fs::read_to_string(&compared_plot).unwrap()),
            "{output}: the plots"
        );
        match output {
            "csv" => {
                // One row per sync, with what kube-state-metrics saw.
                let mut lines = replayed.lines();
                let header = lines.next().unwrap();
                assert!(header.contains(",old.currentReplicas,"), "{header}");
                assert!(header.ends_with(",observedReplicas"), "{header}");
                let observed: Vec<String> = lines
                    .map(|l| l.rsplit_once(',').unwrap().1.to_owned())
                    .collect();
                let expected: Vec<String> = history.observed.iter().map(i32::to_string).collect();
                assert_eq!(observed, expected);
            }
            "json" => {
                let document: Value = serde_json::from_str(&replayed).unwrap();
                assert_eq!(document["old"]["file"], "context shop-prod");
                assert_eq!(document["new"]["maxReplicas"], 20);
                assert_eq!(document["syncs"], syncs);
                // The new spec costs more: it aims lower.
                let pod_hours = |side: &str| document["summary"][side]["podHours"].as_f64().unwrap();
                assert!(pod_hours("new") > pod_hours("old"), "{document}");
            }
            _ => assert!(
                replayed.starts_with(&format!(
                    "HorizontalPodAutoscaler shop/web: context shop-prod (2 to 12 replicas) → {} (3 to 20 replicas)\n",
                    path(&new)
                )),
                "{replayed}"
            ),
        }
    }

    // A proposed spec of another name is compared as a spec of the live
    // HPA, and the output says so.
    let renamed = dir.join("renamed.yaml");
    std::fs::write(&renamed, proposed("web-next")).unwrap();
    let replayed = replay(
        &stage,
        &[
            owned(&["shop/web", "--with", &path(&renamed)]),
            range.clone(),
        ]
        .concat(),
    );
    assert_eq!(replayed.status.code(), Some(0), "{}", stderr(&replayed));
    assert!(
        stdout(&replayed).contains(
            "\n  the new spec is HorizontalPodAutoscaler shop/web-next, compared as a spec of shop/web\n"
        ),
        "{}",
        stdout(&replayed)
    );
    let replayed = replay(
        &stage,
        &[
            owned(&["shop/web", "--with", &path(&renamed), "--format", "json"]),
            range,
        ]
        .concat(),
    );
    let document: Value = serde_json::from_str(&stdout(&replayed)).unwrap();
    assert_eq!(document["hpa"], json!({"namespace": "shop", "name": "web"}));
    assert_eq!(
        document["new"]["hpa"],
        json!({"namespace": "shop", "name": "web-next"})
    );
}

#[test]
fn a_proposed_spec_that_is_not_one_valid_hpa_is_a_clear_error() {
    let stage = Stage::new(cluster(live_hpa("web")));
    let dir = stage.dir.path();
    // Refused before Prometheus is asked: it is not there.
    let range = owned(&["--prometheus", "http://127.0.0.1:9", "--since", "1h"]);
    let with = |file: &str, text: &str| {
        let file = dir.join(file);
        std::fs::write(&file, text).unwrap();
        [owned(&["shop/web", "--with", &path(&file)]), range.clone()].concat()
    };
    let shown = |file: &str| path(&dir.join(file));
    fails(
        &stage,
        &with(
            "two.yaml",
            &format!("{}---\n{}", proposed("a"), proposed("b")),
        ),
        &format!(
            "kubectl hpa-lint: {}: 2 HorizontalPodAutoscalers (shop/a, shop/b); give a file with one\n",
            shown("two.yaml")
        ),
    );
    fails(
        &stage,
        &with("none.yaml", &live_deployment().to_string()),
        &format!(
            "kubectl hpa-lint: {}: no HorizontalPodAutoscaler\n",
            shown("none.yaml")
        ),
    );
    fails(
        &stage,
        &with(
            "rejected.yaml",
            &proposed("web").replace("minReplicas: 3", "minReplicas: 30"),
        ),
        &format!(
            "kubectl hpa-lint: {}: HorizontalPodAutoscaler shop/web: refused, the API server would reject it (no controller runs it):\n  spec.maxReplicas: Invalid value: 20: must be greater than or equal to `minReplicas`\n",
            shown("rejected.yaml")
        ),
    );
    fails(
        &stage,
        &[
            owned(&["shop/web", "--with", &shown("absent.yaml")]),
            range.clone(),
        ]
        .concat(),
        &shown("absent.yaml"),
    );
}

#[test]
fn an_unreachable_cluster_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("kubeconfig"), "apiVersion: v1\nkind: Config\ncurrent-context: gone\nclusters:\n- name: gone\n  cluster: {server: \"http://127.0.0.1:9\"}\ncontexts:\n- name: gone\n  context: {cluster: gone, user: u}\nusers:\n- name: u\n  user: {}\n").unwrap();
    let plot = dir.path().join("replay.svg");
    let output = run({
        let mut command = plugin_command(dir.path());
        command.args([
            "replay",
            "shop/web",
            "--prometheus",
            "http://127.0.0.1:9",
            "--since",
            "1h",
            "--plot",
            &path(&plot),
        ]);
        command
    });
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output)
            .starts_with("kubectl hpa-lint: cannot read /version from http://127.0.0.1:9: "),
        "{}",
        stderr(&output)
    );
    assert!(output.stdout.is_empty());
    assert!(!plot.exists());
}
