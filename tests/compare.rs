//! End-to-end tests of `hpa-lint compare` and the standard loads
//! (`--load`): figures worked out by hand, the same replicas as `simulate`
//! gives each spec on the same load, the JSON contract, the CSV and the plot,
//! and bad input (a clear error, exit code 2, nothing written).

mod common;

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::{Value, json};

fn hpa_lint(subcommand: &str) -> Command {
    let mut command = Command::cargo_bin("hpa-lint").expect("the binary is built");
    command
        .arg(subcommand)
        .arg("--isolated")
        .env_remove("HPA_LINT_KUBE_VERSION");
    command
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// An HPA on a `requests_per_second` Pods metric of target 1 per pod:
/// demand in pods at target is the demand itself.
fn pods_hpa(max: i32, scale_up: &str) -> String {
    format!(
        "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {{name: web, namespace: shop}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}
  minReplicas: 1
  maxReplicas: {max}
  metrics:
  - type: Pods
    pods:
      metric: {{name: requests_per_second}}
      target: {{type: AverageValue, averageValue: '1'}}
  behavior:
    scaleUp: {scale_up}
    scaleDown: {{stabilizationWindowSeconds: 0}}
"
    )
}

fn json_of(command: &mut Command) -> Value {
    let output = command.args(["--format", "json"]).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// A step from 1 to 4 pods' worth at 5m, held 10m, then 10m at 1: the fast
/// spec (the default scale-up) sets 4 replicas at once; the slow one adds a
/// pod a minute. Every figure below is counted by hand from the pod model
/// (pods Ready 30 s after they are made; a sync stands for the 15 s before it).
#[test]
fn figures_are_those_counted_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let fast = write(dir.path(), "fast.yaml", &pods_hpa(4, "{}"));
    let slow = write(
        dir.path(),
        "slow.yaml",
        &pods_hpa(4, "{policies: [{type: Pods, value: 1, periodSeconds: 60}]}"),
    );
    let document = json_of(
        hpa_lint("compare")
            .args([&fast, &slow])
            .args(["--load", "step:at=5m,hold=10m,settle=10m"]),
    );
    assert_eq!(document["hpa"], json!({"namespace": "shop", "name": "web"}));
    assert_eq!(document["syncs"], 101);
    assert_eq!(document["end"], 1500);
    assert_eq!(
        document["demand"]["load"],
        json!({"kind": "step", "low": 0, "high": 1, "at": 300, "hold": 600, "settle": 600,
               "spans": {"requests_per_second": {"low": 1, "high": 4}}})
    );
    let summary = &document["summary"];
    // 20 syncs at 1 pod, 40 at 4, 40 at 1: 3300 pod-seconds over 1500 s.
    assert_eq!(
        summary["old"],
        json!({"podHours": 0.917, "peakReplicas": 4, "meanReplicas": 2.2, "atMaxReplicas": 600,
               "aboveTarget": 30, "worstExcess": 3, "worstAt": 300, "scaleUps": 1, "scaleDowns": 1,
               "biggestRise": {"from": 1, "to": 4, "at": 300, "reachedAfter": 0}})
    );
    // 1 → 2 at 5m, 3 at 6m, 4 at 7m; the Ready pods carry 4 until 7m30s.
    assert_eq!(
        summary["new"],
        json!({"podHours": 0.867, "peakReplicas": 4, "meanReplicas": 2.08, "atMaxReplicas": 480,
               "aboveTarget": 150, "worstExcess": 3, "worstAt": 300, "scaleUps": 3, "scaleDowns": 1,
               "biggestRise": {"from": 1, "to": 4, "at": 300, "reachedAfter": 120}})
    );
    assert_eq!(
        summary["difference"],
        json!({"podHours": -0.05, "peakReplicas": 0, "meanReplicas": -0.12, "atMaxReplicas": -120,
               "aboveTarget": 120, "worstExcess": 0, "scaleEvents": 2, "reachedAfter": 120})
    );
    assert_eq!(document["old"]["file"], fast);
    assert_eq!(document["new"]["maxReplicas"], 4);
}

/// The text table says the same as the JSON.
#[test]
fn text_shows_both_specs_and_the_difference() {
    let dir = tempfile::tempdir().unwrap();
    let fast = write(dir.path(), "fast.yaml", &pods_hpa(4, "{}"));
    let slow = write(
        dir.path(),
        "slow.yaml",
        &pods_hpa(4, "{policies: [{type: Pods, value: 1, periodSeconds: 60}]}"),
    );
    let output = hpa_lint("compare")
        .args([&fast, &slow])
        .args(["--load", "step:at=5m,hold=10m,settle=10m"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    for line in [
        "demand: step: 0%, 100% from 5m for 10m, then 0% for 10m",
        "  requests_per_second: 0% is 1, 100% is 4 (total)",
        "101 syncs, one every 15s, from 0s to 25m",
        "                                                 old               new  difference",
        "pod-hours                                       0.92              0.87  -0.05 (-5.5%)",
        "time above target beyond tolerance               30s             2m30s  +2m",
        "worst excess over target                 +300% at 5m       +300% at 5m  0 pts",
        "scale events                        2 (1 up, 1 down)  4 (3 up, 1 down)  +2",
        "time to reach the biggest rise      0s (1 → 4 at 5m)  2m (1 → 4 at 5m)  +2m",
    ] {
        assert!(text.contains(line), "no `{line}` in\n{text}");
    }
}

/// Each spec's replicas in the comparison are those `simulate --load` gives
/// it alone, sync for sync, on every standard load (the specs share their
/// bounds and target, so the load is scaled the same).
#[test]
fn each_spec_runs_as_simulate_runs_it() {
    let dir = tempfile::tempdir().unwrap();
    let target = "---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: nginx, resources: {requests: {cpu: 250m}}}
";
    let hpa = |behavior: &str| {
        format!(
            "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {{name: web, namespace: shop}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}
  minReplicas: 2
  maxReplicas: 15
  metrics:
  - type: Resource
    resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 60}}}}
{behavior}{target}"
        )
    };
    let old = write(dir.path(), "old.yaml", &hpa(""));
    let new = write(
        dir.path(),
        "new.yaml",
        &hpa(
            "  behavior:\n    scaleUp: {policies: [{type: Percent, value: 50, periodSeconds: 30}]}\n    scaleDown: {stabilizationWindowSeconds: 60}\n",
        ),
    );
    for load in ["step", "spike", "ramp:rise=10m,fall=5m", "daily:days=1"] {
        let output = hpa_lint("compare")
            .args([&old, &new, "--load", load, "--format", "csv"])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{load}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let compared = String::from_utf8(output.stdout).unwrap();
        let header: Vec<&str> = compared.lines().next().unwrap().split(',').collect();
        assert_eq!(
            header,
            [
                "time",
                "cpu",
                "old.currentReplicas",
                "old.desiredReplicas",
                "old.readyReplicas",
                "new.currentReplicas",
                "new.desiredReplicas",
                "new.readyReplicas"
            ]
        );
        for (side, file) in [(0, &old), (1, &new)] {
            let output = hpa_lint("simulate")
                .args([file.as_str(), "--load", load, "--format", "csv"])
                .output()
                .unwrap();
            assert!(output.status.success());
            let alone = String::from_utf8(output.stdout).unwrap();
            let simulated: Vec<(String, String, String)> = alone
                .lines()
                .skip(1)
                .map(|line| {
                    let fields: Vec<&str> = line.split(',').collect();
                    // time, currentReplicas, …, desiredReplicas, …, cpu.demand
                    (
                        fields[0].to_owned(),
                        fields[1].to_owned(),
                        fields[4].to_owned(),
                    )
                })
                .collect();
            let compared: Vec<(String, String, String)> = compared
                .lines()
                .skip(1)
                .map(|line| {
                    let fields: Vec<&str> = line.split(',').collect();
                    let at = 2 + 3 * side;
                    (
                        fields[0].to_owned(),
                        fields[at].to_owned(),
                        fields[at + 1].to_owned(),
                    )
                })
                .collect();
            assert_eq!(simulated.len(), compared.len(), "{load}");
            assert!(
                simulated == compared,
                "{load}: spec {side} differs from simulate"
            );
            assert!(
                compared.iter().any(|c| c.1 != "2"),
                "{load}: the load moves the replicas"
            );
        }
    }
}

/// The plot is one SVG with both specs' replicas over the demand; a target
/// on one side only serves both (the other file holds only the HPA).
#[test]
fn plot_shows_both_lines_over_the_demand() {
    let dir = tempfile::tempdir().unwrap();
    let deployment = "---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: nginx, resources: {requests: {cpu: 500m}}}
";
    let hpa = |max: i32, utilization: i32| {
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
"
        )
    };
    let old = write(dir.path(), "old.yaml", &(hpa(8, 80) + deployment));
    let new = write(dir.path(), "new.yaml", &hpa(12, 60));
    let plot = dir.path().join("compare.svg");
    hpa_lint("compare")
        .args([&old, &new, "--load", "ramp"])
        .arg("--plot")
        .arg(&plot)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "cpu: 0% is 600m, 100% is 3600m (total)",
        ));
    let svg = std::fs::read_to_string(&plot).unwrap();
    for label in [
        "HorizontalPodAutoscaler shop/web",
        "ramp: 0%, from 5m up to 100%",
        "demand at old target",
        "demand at new target",
        "old maxReplicas",
        "new maxReplicas",
        "minReplicas",
        "old replicas",
        "new replicas",
    ] {
        assert!(svg.contains(label), "no `{label}` in the plot");
    }
    // Both replica lines: the old one wide under the new one.
    assert!(svg.contains("stroke-width=\"5\""));
    assert!(svg.matches("<polyline").count() >= 2);
}

#[test]
fn bad_input_is_an_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "good.yaml", &pods_hpa(4, "{}"));
    let invalid = write(
        dir.path(),
        "invalid.yaml",
        &pods_hpa(4, "{}").replace("minReplicas: 1", "minReplicas: 5"),
    );
    let value = write(
        dir.path(),
        "value.yaml",
        "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 4
  metrics:
  - type: External
    external:
      metric: {name: queue_depth}
      target: {type: Value, value: '30'}
",
    );
    let plot = dir.path().join("never.svg");
    let (good, invalid, value) = (good.as_str(), invalid.as_str(), value.as_str());
    for (args, wanted) in [
        (
            vec![good, invalid, "--load", "step"],
            "refused, the API server would reject it",
        ),
        (vec![good, good, "--load", "wave"], "unknown load `wave`"),
        (
            vec![good, good, "--load", "step:hold=1m,hold=2m"],
            "`hold` given twice",
        ),
        (vec![good, good], "--load"),
        (
            vec![value, value, "--load", "step"],
            "an Object or External `value` does not follow the replicas",
        ),
        (
            vec![
                good,
                good,
                "--load",
                "daily:days=60",
                "--sync-period",
                "100ms",
            ],
            "more than the limit of 10000000",
        ),
    ] {
        hpa_lint("compare")
            .args(&args)
            .arg("--plot")
            .arg(&plot)
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(wanted));
        assert!(!plot.exists(), "{args:?}");
        let leftovers = std::fs::read_dir(dir.path()).unwrap().filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(".hpa-lint-plot")
        });
        assert_eq!(leftovers.count(), 0, "{args:?}: a temporary plot is left");
    }
}

/// A trace gives both specs the same demand; a `replicas` trace cannot
/// (it is the controller's recommendation, the same whatever the spec).
#[test]
fn trace_feeds_both_specs() {
    let dir = tempfile::tempdir().unwrap();
    let fast = write(dir.path(), "fast.yaml", &pods_hpa(4, "{}"));
    let slow = write(
        dir.path(),
        "slow.yaml",
        &pods_hpa(4, "{policies: [{type: Pods, value: 1, periodSeconds: 60}]}"),
    );
    let trace = write(
        dir.path(),
        "rps.csv",
        "time,requests_per_second\n0,1\n5m,4\n15m,1\n25m,1\n",
    );
    let document = json_of(hpa_lint("compare").args([&fast, &slow, "--trace", &trace]));
    assert_eq!(document["demand"], json!({"trace": [trace]}));
    // The same figures as the step load of the same shape.
    assert_eq!(
        document["summary"]["new"]["biggestRise"]["reachedAfter"],
        120
    );
    assert_eq!(document["summary"]["old"]["podHours"], 0.917);
    let replicas = write(dir.path(), "replicas.csv", "time,replicas\n0,1\n5m,4\n");
    hpa_lint("compare")
        .args([&fast, &slow, "--trace", &replicas])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "comparing specs needs the metrics' demand",
        ));
}

/// Specs whose metrics are keyed apart (`rps[0]`, `rps[1]` against `rps`)
/// read one trace: each metric its own column, else its shared name's.
#[test]
fn a_trace_feeds_specs_keyed_apart() {
    let dir = tempfile::tempdir().unwrap();
    let new = pods_hpa(4, "{}");
    let second = "  - type: Pods\n    pods:\n      metric: {name: requests_per_second, selector: {matchLabels: {path: api}}}\n      \
                  target: {type: AverageValue, averageValue: '2'}\n  behavior:";
    let old = new.replacen("  behavior:", second, 1);
    let (old, new) = (
        write(dir.path(), "old.yaml", &old),
        write(dir.path(), "new.yaml", &new),
    );
    let run = |header: &str, row: &str| {
        let trace = write(
            dir.path(),
            "trace.csv",
            &format!("time,{header}\n0,{row}\n5m,{row}\n"),
        );
        hpa_lint("compare")
            .args([&old, &new, "--trace", &trace])
            .output()
            .unwrap()
    };
    assert!(run("requests_per_second", "4").status.success());
    let own = run(
        "requests_per_second[0],requests_per_second[1],requests_per_second",
        "4,4,4",
    );
    assert!(
        own.status.success(),
        "{}",
        String::from_utf8_lossy(&own.stderr)
    );
    let missing = run("requests_per_second[0],requests_per_second", "4,4");
    assert!(missing.status.success(), "the shared column gives [1]");
    let short = run("requests_per_second[0],requests_per_second[1]", "4,4");
    assert_eq!(short.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&short.stderr)
            .contains("no column for the HPA's metric `requests_per_second`"),
        "{}",
        String::from_utf8_lossy(&short.stderr)
    );
}

/// The `compare` example of docs/simulate.md is what the binary writes now
/// (`UPDATE_DOCS=1 cargo test --test compare` rewrites it).
#[test]
fn page_example_is_current() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "fast.yaml", &pods_hpa(4, "{}"));
    write(
        dir.path(),
        "slow.yaml",
        &pods_hpa(4, "{policies: [{type: Pods, value: 1, periodSeconds: 60}]}"),
    );
    let output = hpa_lint("compare")
        .current_dir(dir.path())
        .args([
            "fast.yaml",
            "slow.yaml",
            "--load",
            "step:at=5m,hold=10m,settle=10m",
        ])
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    let page_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/simulate.md");
    let page = std::fs::read_to_string(&page_path).unwrap();
    let (start, end) = (
        "<!-- compare-example:start -->\n```text\n",
        "```\n<!-- compare-example:end -->",
    );
    let before = &page[..page.find(start).expect("docs/simulate.md has the example") + start.len()];
    let after = &page[page.find(end).expect("the example ends")..];
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&page_path, format!("{before}{text}{after}")).unwrap();
        return;
    }
    assert_eq!(
        &page[before.len()..page.len() - after.len()],
        text,
        "docs/simulate.md's compare example is stale: run `UPDATE_DOCS=1 cargo test --test compare`"
    );
}

/// Without the target, a standard load still runs (its demand is a
/// multiple of the request, which is assumed and said), a trace does not.
#[test]
fn requests_assumed_for_a_load_only() {
    let dir = tempfile::tempdir().unwrap();
    let hpa = |utilization: i32| {
        format!(
            "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {{name: web, namespace: shop}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}
  minReplicas: 2
  maxReplicas: 10
  metrics:
  - type: Resource
    resource: {{name: cpu, target: {{type: Utilization, averageUtilization: {utilization}}}}}
"
        )
    };
    let old = write(dir.path(), "old.yaml", &hpa(80));
    let new = write(dir.path(), "new.yaml", &hpa(50));
    let document = json_of(hpa_lint("compare").args([&old, &new, "--load", "step"]));
    assert_eq!(document["demand"]["assumedRequests"], json!(["cpu"]));
    assert_eq!(document["summary"]["new"]["peakReplicas"], 10);
    hpa_lint("compare")
        .args([&old, &new, "--load", "step"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "  the target is not in the input: a pod's cpu request is taken as 1 (the replicas do not depend on it, the totals do)",
        ));
    let trace = write(dir.path(), "cpu.csv", "time,cpu\n0,1\n5m,4\n");
    hpa_lint("compare")
        .args([&old, &new, "--trace", &trace])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "the target Deployment `web` is not in the input: give the pods' requests with --requests cpu=",
        ));
}

/// A spec whose every metric fails at every sync never scales: it is not
/// passed off as the cheaper one (the pods request 0 cpu, or a metric's
/// target is out of range), on a standard load or a trace.
#[test]
fn a_spec_that_never_scales_is_not_compared() {
    let dir = tempfile::tempdir().unwrap();
    let spec = |request: &str| {
        format!(
            "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {{name: web, namespace: shop}}\n\
             spec:\n  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}\n  maxReplicas: 10\n\
             ---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: shop}}\n\
             spec:\n  template:\n    spec:\n      containers: [{{name: app, image: web, resources: {{requests: {{cpu: \"{request}\"}}}}}}]\n"
        )
    };
    let working = write(dir.path(), "working.yaml", &spec("100m"));
    let zero = write(dir.path(), "zero.yaml", &spec("0"));
    let trace = write(dir.path(), "cpu.csv", "time,cpu\n0,0.1\n5m,1\n");
    for demand in [["--load", "step"], ["--trace", trace.as_str()]] {
        hpa_lint("compare")
            .args([&working, &zero])
            .args(demand)
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(format!(
                "the new spec ({zero}): the pods request 0 cpu, so the controller cannot compute its utilization (no metrics returned matched known pods): every sync fails its metrics, so the HPA never scales"
            )));
    }
    // A metric that fails beside one that works: the run is the controller's
    // (scale-ups go on, scale-downs are held).
    let metrics = "  maxReplicas: 10\n  metrics:\n    - type: Resource\n      resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}\n    \
                   - type: Pods\n      pods: {metric: {name: rps}, target: {type: AverageValue, averageValue: \"1\"}}\n";
    let both = write(
        dir.path(),
        "both.yaml",
        &spec("0").replace("  maxReplicas: 10\n", metrics),
    );
    hpa_lint("compare")
        .args([&working, &both, "--load", "step"])
        .assert()
        .success();
}

/// A target in only one input serves both specs, with the LimitRanges of
/// its namespace there: a container that requests nothing gets their
/// default on both sides.
#[test]
fn a_borrowed_target_brings_its_limit_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let deployment = |resources: &str| {
        format!(
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: shop}}\n\
             spec:\n  template:\n    spec:\n      containers: [{{name: app, image: web{resources}}}]\n"
        )
    };
    let range = "---\napiVersion: v1\nkind: LimitRange\nmetadata: {name: defaults, namespace: shop}\n\
                 spec:\n  limits: [{type: Container, defaultRequest: {cpu: 200m}}]\n";
    let new = write(dir.path(), "new.yaml", &common::cpu_hpa(60));
    let defaulted = write(
        dir.path(),
        "defaulted.yaml",
        &(common::cpu_hpa(70) + &deployment("") + range),
    );
    let written = write(
        dir.path(),
        "written.yaml",
        &(common::cpu_hpa(70) + &deployment(", resources: {requests: {cpu: 200m}}")),
    );
    let summary = |old: &str| {
        json_of(hpa_lint("compare").args([old, new.as_str(), "--load", "step"]))["summary"].clone()
    };
    assert_eq!(summary(&defaulted), summary(&written));
}

/// A spec whose `ContainerResource` metric reads an injected sidecar (its
/// request not in the input) is not run on an assumed request: `compare`
/// asks for it, as `simulate` does.
#[test]
fn an_injected_sidecar_is_not_given_an_assumed_request() {
    let dir = tempfile::tempdir().unwrap();
    let old = write(
        dir.path(),
        "old.yaml",
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web, namespace: shop}\n\
         spec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  maxReplicas: 10\n\
         ---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n\
         spec:\n  template:\n    spec:\n      containers: [{name: app, image: web, resources: {requests: {cpu: 200m}}}]\n",
    );
    let new = write(
        dir.path(),
        "new.yaml",
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web, namespace: shop}\n\
         spec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  maxReplicas: 10\n  metrics:\n    \
         - type: ContainerResource\n      containerResource: {name: cpu, container: istio-proxy, target: {type: Utilization, averageUtilization: 50}}\n",
    );
    hpa_lint("compare")
        .args([&old, &new, "--load", "step"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "container `istio-proxy` is not in the pod template of the target: Istio injects it at admission",
        ));
}
