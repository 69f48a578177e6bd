//! End-to-end tests of `hpa-lint behavior` and `hpa-lint simulate`: the
//! shipped examples, the KEP-853 stories and the Kubernetes docs' policy
//! examples as the controller runs them (hpa-controller-algorithm.md C8),
//! the JSON contract, and bad input (each a clear error, exit code 2, no
//! half-written plot).

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

const FIXTURES: &str = "tests/fixtures/simulate";

fn hpa_lint(subcommand: &str) -> Command {
    let mut command = Command::cargo_bin("hpa-lint").expect("the binary is built");
    command
        .arg(subcommand)
        .arg("--isolated")
        .env_remove("HPA_LINT_KUBE_VERSION");
    command
}

fn fixture(name: &str) -> String {
    format!("{FIXTURES}/{name}")
}

fn json(command: &mut Command) -> Value {
    let output = command.arg("--format").arg("json").output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// `(time, current → desired)` of the syncs that rescaled.
fn changes(document: &Value) -> Vec<(i64, i64, i64)> {
    document["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["currentReplicas"] != s["desiredReplicas"])
        .map(|s| {
            let n = |k: &str| s[k].as_i64().unwrap();
            (n("time"), n("currentReplicas"), n("desiredReplicas"))
        })
        .collect()
}

#[test]
fn kep_scale_down_story_changes_at_the_eleventh_minute() {
    // C8.1: no change for ten minutes, 10 → 9 at the 11th sync (t = 600 s).
    let document = json(
        hpa_lint("simulate")
            .arg(fixture("kep-scale-down.yaml"))
            .args([
                "--trace",
                &fixture("kep-scale-down.csv"),
                "--sync-period",
                "60s",
                "--replicas",
                "10",
            ]),
    );
    assert_eq!(changes(&document), [(600, 10, 9)]);
    let steps = document["steps"].as_array().unwrap();
    assert_eq!(steps[1]["conditions"]["AbleToScale"], "ScaleDownStabilized");
    assert_eq!(steps[10]["conditions"]["AbleToScale"], "SucceededRescale");
    assert_eq!(steps[10]["recommendation"], 7);
}

#[test]
fn kep_scale_up_story_changes_at_the_sixth_minute() {
    // C8.2: a 300 s window at one-minute syncs holds the current
    // recommendation and the four before it: 2 → 3 at t = 300 s, one minute
    // before the KEP's narrative.
    let document = json(
        hpa_lint("simulate")
            .arg(fixture("kep-scale-up.yaml"))
            .args([
                "--trace",
                &fixture("kep-scale-up.csv"),
                "--sync-period",
                "60s",
                "--replicas",
                "2",
            ]),
    );
    assert_eq!(changes(&document), [(300, 2, 3)]);
    assert_eq!(
        document["steps"][6]["conditions"]["AbleToScale"],
        "ScaleUpStabilized"
    );
}

#[test]
fn docs_default_scale_up_is_four_pods_or_doubling_every_fifteen_seconds() {
    // A 15 s period at 15 s syncs does not hold back the next sync (C2.2).
    let document = json(
        hpa_lint("simulate")
            .arg(fixture("docs-policies.yaml"))
            .args([
                "--hpa",
                "default-behavior",
                "--trace",
                &fixture("rush.csv"),
                "--until",
                "2m",
            ]),
    );
    assert_eq!(
        changes(&document),
        [
            (15, 1, 5),
            (30, 5, 10),
            (45, 10, 20),
            (60, 20, 40),
            (75, 40, 80),
            (90, 80, 100)
        ]
    );
    assert_eq!(
        document["steps"][1]["conditions"]["ScalingLimited"],
        "ScaleUpLimit"
    );
}

#[test]
fn docs_scale_down_policies_percent_wins_above_40_replicas() {
    let output = hpa_lint("behavior")
        .arg(fixture("docs-policies.yaml"))
        .args(["--hpa", "pods-and-percent-down"])
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success());
    // Pods 4 allow the larger step up to 30 replicas, both the same from 31
    // to 40 (10 % truncated is 4 pods), and Percent 10 above 40.
    for row in [
        "       5  to 10 (Percent 100 per 15s)               to 1 (Pods 4 per 60s)",
        "      31  to 62 (Percent 100 per 15s)               to 27 (Pods 4 per 60s, Percent 10 per 60s)",
        "      41  to 82 (Percent 100 per 15s)               to 36 (Percent 10 per 60s)",
        "     100  to 100 (maxReplicas; Percent 100 per 15s)  to 90 (Percent 10 per 60s)",
    ] {
        assert!(text.contains(row), "{row}\n{text}");
    }
    // The default 300 s window before the first step, then Percent 10 % a minute.
    let document = json(
        hpa_lint("simulate")
            .arg(fixture("docs-policies.yaml"))
            .args([
                "--hpa",
                "pods-and-percent-down",
                "--trace",
                &fixture("drop.csv"),
                "--replicas",
                "80",
                "--until",
                "8m",
            ]),
    );
    assert_eq!(
        changes(&document),
        [(300, 80, 72), (360, 72, 64), (420, 64, 57), (480, 57, 51)]
    );
}

#[test]
fn docs_disabled_scale_down_never_scales_down() {
    let document = json(
        hpa_lint("simulate")
            .arg(fixture("docs-policies.yaml"))
            .args([
                "--hpa",
                "scale-down-disabled",
                "--trace",
                &fixture("drop.csv"),
                "--replicas",
                "80",
                "--until",
                "30m",
            ]),
    );
    assert_eq!(changes(&document), []);
    assert_eq!(
        document["steps"][30]["conditions"]["ScalingLimited"],
        "ScaleDownLimit"
    );
}

#[test]
fn json_output_is_the_documented_contract() {
    let document = json(
        hpa_lint("simulate")
            .arg("examples/shop/cart/cart.yaml")
            .args(["--trace", "examples/traces/cart-cpu.csv", "--until", "5m"]),
    );
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&document), ["hpa", "syncPeriod", "steps"]);
    assert_eq!(
        document["hpa"],
        serde_json::json!({"namespace": "shop", "name": "cart"})
    );
    assert_eq!(document["syncPeriod"], 15);
    let steps = document["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 21, "one step per sync from 0 while time <= 5m");
    assert_eq!(
        keys(&steps[0]),
        [
            "time",
            "currentReplicas",
            "recommendation",
            "desiredReplicas",
            "conditions",
            "metrics"
        ]
    );
    // 1.2 cores over 3 pods requesting 550m (cart 500m + a sidecar 50m): 72 %.
    assert_eq!(
        steps[0]["metrics"]["cpu"],
        serde_json::json!({"demand": 1.2, "averageUtilization": 72, "averageValue": 0.4, "replicas": 3})
    );
    // 2.4 cores at 2m: 145 % of 75 % asks for 6.
    assert_eq!(steps[8]["time"], 120);
    assert_eq!(
        (
            steps[8]["recommendation"].as_i64(),
            steps[8]["desiredReplicas"].as_i64()
        ),
        (Some(6), Some(6))
    );
    for window in steps.windows(2) {
        assert_eq!(window[0]["desiredReplicas"], window[1]["currentReplicas"]);
    }
}

#[test]
fn prometheus_traces_are_summed_per_metric() {
    let document = json(
        hpa_lint("simulate")
            .arg("examples/shop/cart/cart.yaml")
            .args(["--trace", &format!("cpu={}", fixture("cpu.json"))]),
    );
    let steps = document["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 17, "0 to 240 s");
    assert_eq!(steps[0]["metrics"]["cpu"]["demand"], 1.2);
    assert_eq!(steps[8]["metrics"]["cpu"]["demand"], 2.4);
}

#[test]
fn csv_output_has_one_row_per_sync() {
    let output = hpa_lint("simulate")
        .arg("examples/shop/cart/cart.yaml")
        .args([
            "--trace",
            "examples/traces/cart-cpu.csv",
            "--until",
            "1m",
            "--format",
            "csv",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6, "{text}");
    assert!(
        lines[0].starts_with("time,currentReplicas,recommendation,stabilized,desiredReplicas,")
    );
    assert_eq!(
        lines[1],
        "0,3,3,3,3,ReadyForNewScale,ValidMetricFound,DesiredWithinRange,1.2,72%,3"
    );
}

#[test]
fn requests_come_from_the_command_line_without_a_target() {
    let dir = tempfile::tempdir().unwrap();
    let hpa = dir.path().join("hpa.yaml");
    std::fs::write(&hpa, "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  maxReplicas: 10\n").unwrap();
    hpa_lint("simulate")
        .arg(&hpa)
        .args(["--trace", "examples/traces/cart-cpu.csv"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--requests cpu="));
    let document = json(hpa_lint("simulate").arg(&hpa).args([
        "--trace",
        "examples/traces/cart-cpu.csv",
        "--requests",
        "cpu=1",
    ]));
    // The default metric: cpu at 80 %; 1.2 cores on one pod requesting 1 core.
    assert_eq!(
        document["steps"][0]["metrics"]["cpu"]["averageUtilization"],
        120
    );
}

#[test]
fn behavior_of_the_examples() {
    let output = hpa_lint("behavior").arg("examples").output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    let errors = String::from_utf8(output.stderr).unwrap();
    assert!(output.status.success(), "{errors}");
    // The broken HPAs are skipped, the others shown.
    assert!(
        errors.contains("skipped: HorizontalPodAutoscaler shop/checkout is invalid"),
        "{errors}"
    );
    assert!(
        text.contains("HorizontalPodAutoscaler shop/cart (examples/shop/cart/cart.yaml)"),
        "{text}"
    );
    assert!(
        text.contains("    stabilizationWindowSeconds: 600\n"),
        "{text}"
    );
    assert!(
        text.contains("    selectPolicy: Max  # default\n"),
        "{text}"
    );
    assert!(
        text.contains("fastest scale-up (3 → 9): 3 → 7 → 9 in 30s; limited by Pods 4 per 15s"),
        "{text}"
    );
    assert!(
        text.contains("fastest scale-down (9 → 3): 9 → 8 → 7 → 6 → 5 → 4 → 3 in 20m"),
        "{text}"
    );
    assert!(
        text.contains(
            "fastest scale-up (2 → 20): 2 → 4 → 8 → 16 → 20 in 1m; limited by the legacy"
        ),
        "{text}"
    );
    let document = json(hpa_lint("behavior").arg("examples/shop/cart/cart.yaml"));
    let cart = &document["hpas"][0];
    assert_eq!(cart["legacy"], false);
    assert_eq!(
        cart["behavior"]["scaleDown"]["stabilizationWindowSeconds"],
        serde_json::json!({"value": 600, "default": false})
    );
    assert_eq!(
        cart["behavior"]["scaleUp"]["selectPolicy"],
        serde_json::json!({"value": "Max", "default": true})
    );
    assert_eq!(cart["scaleUp"]["seconds"], 30);
}

#[test]
fn behavior_output_yaml_is_the_webhooks_mutation() {
    let output = hpa_lint("behavior")
        .arg("examples/search/api/hpa.yaml")
        .args(["--output", "yaml", "--downscale-stabilization", "10m"])
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success());
    assert!(text.contains("stabilizationWindowSeconds: 600"), "{text}");
    assert!(text.contains("hpa-lint.io/injected-behavior"), "{text}");
    assert!(text.contains("selectPolicy: Max"), "{text}");
}

#[test]
fn behavior_of_the_largest_range_the_api_server_allows() {
    // maxReplicas 2^31 - 1 once made the step table walk every count.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hpa.yaml");
    std::fs::write(
        &path,
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: wide}\n\
         spec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  \
         minReplicas: 1\n  maxReplicas: 2147483647\n",
    )
    .unwrap();
    let with_behavior = std::fs::read_to_string(&path).unwrap()
        + "  behavior:\n    scaleUp:\n      policies: [{type: Pods, value: 4, periodSeconds: 60}, {type: Percent, value: 10, periodSeconds: 60}]\n";
    std::fs::write(&path, with_behavior).unwrap();
    let output = hpa_lint("behavior").arg(&path).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{text}");
    assert!(text.contains("replicas: 1 to 2147483647"), "{text}");
    assert!(
        text.contains("    2147483647  to"),
        "the step table ends at maxReplicas: {text}"
    );
    // The simulation follows each pod: no more than a cluster holds.
    let trace = dir.path().join("trace.csv");
    std::fs::write(&trace, "time,replicas\n0,1\n15,2147483647\n").unwrap();
    hpa_lint("simulate")
        .arg(&path)
        .arg("--trace")
        .arg(&trace)
        .args(["--until", "6h"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "more pods than the simulation follows (150000",
        ));
}

/// Runs `simulate` with a trace of this text and checks the error.
fn bad_trace(text: &[u8], expected: &str) {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.csv");
    std::fs::write(&trace, text).unwrap();
    let plot = dir.path().join("out.svg");
    hpa_lint("simulate")
        .arg("examples/shop/cart/cart.yaml")
        .arg("--trace")
        .arg(&trace)
        .arg("--plot")
        .arg(&plot)
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains(expected));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "nothing but the trace: no plot, no temporary file"
    );
}

#[test]
fn bad_traces_are_clear_errors_with_their_line() {
    bad_trace(
        b"seconds,cpu\n0,1\n",
        "trace.csv:1: the first column must be `time`, not `seconds`",
    );
    bad_trace(
        b"time,rps\n0,1\n",
        "trace.csv:1: unknown column `rps`: the HPA's metrics are cpu",
    );
    bad_trace(
        b"time,cpu\n0,1\n30,2\n20,3\n",
        "trace.csv:4: time 20s is not after the previous row's 30s",
    );
    bad_trace(b"time,cpu\n0,1\n-5,2\n", "trace.csv:3: negative time `-5`");
    bad_trace(
        b"time,cpu\n5,1\n",
        "trace.csv:2: the first row is at 5s; the trace must start at time 0",
    );
    bad_trace(b"", "the trace is empty");
    bad_trace(b"time,cpu\n", "the trace has a header but no rows");
    bad_trace(
        b"time,cpu\n0,1\n15,NaN\n",
        "trace.csv:3: `NaN` is not a number or quantity",
    );
    bad_trace(b"time,cpu\n0,-1\n", "trace.csv:2: `-1` is negative");
    bad_trace(
        b"time,cpu\n0,1,2\n",
        "trace.csv:2: 3 fields, the header has 2",
    );
    bad_trace(
        b"time,replicas\n0,many\n",
        "trace.csv:2: `many` is not a replica count",
    );
}

#[test]
fn a_huge_trace_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("huge.csv");
    // A sparse 1 GiB file: refused on its size, never read.
    std::fs::File::create(&trace)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    hpa_lint("simulate")
        .arg("examples/shop/cart/cart.yaml")
        .arg("--trace")
        .arg(&trace)
        .args(["--until", "6h"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "the trace is 1024 MiB, larger than the limit of 256 MiB",
        ));
}

#[test]
fn bad_prometheus_traces_and_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        format!("cpu={}", path.display())
    };
    let cases = [
        (write("broken.json", "{\"data\": \n ["), "broken.json:2:"),
        (
            write(
                "vector.json",
                r#"{"data": {"resultType": "vector", "result": []}}"#,
            ),
            "expected `data.resultType` `matrix`",
        ),
        (
            write(
                "inf.json",
                r#"{"data": {"resultType": "matrix", "result": [{"values": [[1, "1"], [2, "+Inf"]]}]}}"#,
            ),
            "inf.json: the series {} is +Inf at 1970-01-01T00:00:02Z: a demand is a finite number",
        ),
        (
            write(
                "empty.json",
                r#"{"data": {"resultType": "matrix", "result": []}}"#,
            ),
            "the response has no samples",
        ),
    ];
    for (trace, expected) in cases {
        hpa_lint("simulate")
            .arg("examples/shop/cart/cart.yaml")
            .args(["--trace", &trace])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(expected));
    }
    let trace = write(
        "ok.json",
        r#"{"data": {"resultType": "matrix", "result": [{"values": [[1, "1"]]}]}}"#,
    )
    .replace("cpu=", "memory=");
    hpa_lint("simulate")
        .arg("examples/shop/cart/cart.yaml")
        .args(["--trace", &trace])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown metric `memory`"));
    hpa_lint("simulate")
        .arg("examples/")
        .args(["--trace", "examples/traces/cart-cpu.csv"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("pick one with --hpa"));
    hpa_lint("simulate")
        .arg("examples/")
        .args([
            "--hpa",
            "shop/checkout",
            "--trace",
            "examples/traces/cart-cpu.csv",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "is invalid, the API server would reject it",
        ));
}

/// The README's worked example: its text output and SVG are what the
/// binary produces now (`UPDATE_README=1 cargo test` rewrites them).
#[test]
fn readme_example_is_current() {
    let dir = tempfile::tempdir().unwrap();
    let plot = dir.path().join("cart.svg");
    let output = hpa_lint("simulate")
        .arg("examples/shop/cart/cart.yaml")
        .args([
            "--trace",
            "examples/traces/cart-cpu.csv",
            "--until",
            "40m",
            "--plot",
        ])
        .arg(&plot)
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    let svg = std::fs::read_to_string(&plot).unwrap();
    let readme_path = Path::new("README.md");
    let readme = std::fs::read_to_string(readme_path).unwrap();
    let (start, end) = (
        "<!-- simulate-example:start -->\n```text\n",
        "```\n<!-- simulate-example:end -->",
    );
    let before = &readme[..readme.find(start).expect("README has the example") + start.len()];
    let after = &readme[readme.find(end).expect("the example ends")..];
    let svg_path = Path::new("examples/traces/cart-cpu.svg");
    if std::env::var_os("UPDATE_README").is_some() {
        std::fs::write(readme_path, format!("{before}{text}{after}")).unwrap();
        std::fs::write(svg_path, &svg).unwrap();
        return;
    }
    let committed = &readme[before.len()..readme.len() - after.len()];
    assert_eq!(
        committed, text,
        "README's simulate example is stale: run `UPDATE_README=1 cargo test --test simulate`"
    );
    assert_eq!(
        std::fs::read_to_string(svg_path).unwrap(),
        svg,
        "examples/traces/cart-cpu.svg is stale: run `UPDATE_README=1 cargo test --test simulate`"
    );
}
