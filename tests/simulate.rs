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
        "       5  to 10 (Percent 100 per 15s)                 to 1 (Pods 4 per 60s)",
        "      31  to 62 (Percent 100 per 15s)                 to 27 (Pods 4 per 60s, Percent 10 per 60s)",
        "      41  to 82 (Percent 100 per 15s)                 to 36 (Percent 10 per 60s)",
        "     100  to 100 (maxReplicas; Percent 100 per 15s)   to 90 (Percent 10 per 60s)",
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
    assert_eq!(keys(&document), ["hpa", "syncPeriod", "metrics", "steps"]);
    assert_eq!(
        document["metrics"],
        serde_json::json!({"cpu": {"type": "Resource", "name": "cpu", "index": 0}})
    );
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
            "stabilized",
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
    assert_eq!(
        lines[0],
        "time,currentReplicas,recommendation,stabilized,desiredReplicas,AbleToScale,ScalingActive,ScalingLimited,ScaledToZero,\
         cpu.demand,cpu.averageUtilization,cpu.averageValue,cpu.replicas,cpu.error"
    );
    assert_eq!(
        lines[1],
        "0,3,3,3,3,ReadyForNewScale,ValidMetricFound,DesiredWithinRange,,1.2,72,0.4,3,"
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
    // The broken HPAs are refused with their errors (exit 2), the others shown.
    assert_eq!(output.status.code(), Some(2), "{errors}");
    assert!(
        errors.contains(
            "HorizontalPodAutoscaler shop/checkout: refused, the API server would reject it (no controller runs it):\n  \
             spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 3600: must be less than or equal to 1800"
        ),
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
        text.contains("fastest scale-up (2 → 10): 2 → 4 → 8 → 10 in 45s; limited by the legacy"),
        "{text}"
    );
    // A version 1.36 no longer serves, and a DaemonSet, are refused too.
    assert!(
        errors.contains(
            "HorizontalPodAutoscaler search/search-api: refused, the API server would reject it"
        ),
        "{errors}"
    );
    assert!(
        errors.contains("HorizontalPodAutoscaler search/indexer: refused, the controller cannot scale its target"),
        "{errors}"
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
        .args([
            "--kube-version",
            "1.25",
            "--feature-gates",
            "HPAContainerMetrics=true",
        ])
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
        b"time,cpu\n0,1\n29.9999,2\n",
        "trace.csv:3: time `29.9999` is finer than a millisecond: trace times are whole milliseconds",
    );
    bad_trace(
        b"time,cpu\n0,1\n500us,2\n",
        "trace.csv:3: invalid time `500us`: expected seconds or a duration such as `90s`, `5m` (units ms, s, m, h)",
    );
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
            "HorizontalPodAutoscaler shop/checkout: refused, the API server would reject it",
        ));
}

/// The worked example of docs/simulate.md: its text output and SVG are what the
/// binary produces now (`UPDATE_DOCS=1 cargo test` rewrites them).
#[test]
fn page_example_is_current() {
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
    let page_path = Path::new("docs/simulate.md");
    let page = std::fs::read_to_string(page_path).unwrap();
    let (start, end) = (
        "<!-- simulate-example:start -->\n```text\n",
        "```\n<!-- simulate-example:end -->",
    );
    let before = &page[..page.find(start).expect("docs/simulate.md has the example") + start.len()];
    let after = &page[page.find(end).expect("the example ends")..];
    let svg_path = Path::new("examples/traces/cart-cpu.svg");
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(page_path, format!("{before}{text}{after}")).unwrap();
        std::fs::write(svg_path, &svg).unwrap();
        return;
    }
    let committed = &page[before.len()..page.len() - after.len()];
    assert_eq!(
        committed, text,
        "docs/simulate.md's simulate example is stale: run `UPDATE_DOCS=1 cargo test --test simulate`"
    );
    assert_eq!(
        std::fs::read_to_string(svg_path).unwrap(),
        svg,
        "examples/traces/cart-cpu.svg is stale: run `UPDATE_DOCS=1 cargo test --test simulate`"
    );
}

/// Writes `text` as `name` in `dir` and returns its path as a string.
fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// An `autoscaling/v2` HPA of `web` with this `spec` tail (indented by two).
fn hpa(name: &str, spec: &str) -> String {
    format!(
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {{name: {name}, namespace: shop}}\n\
         spec:\n  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}\n{spec}"
    )
}

#[test]
fn behavior_and_simulate_refuse_an_hpa_the_api_server_rejects() {
    let dir = tempfile::tempdir().unwrap();
    let invalid = hpa("inverted", "  minReplicas: 5\n  maxReplicas: 3\n");
    let bad = write(dir.path(), "bad.yaml", &invalid);
    let trace = write(dir.path(), "trace.csv", "time,replicas\n0,5\n60,1\n");
    let error = "HorizontalPodAutoscaler shop/inverted: refused, the API server would reject it \
                 (no controller runs it):\n  spec.maxReplicas: Invalid value: 3: must be greater \
                 than or equal to `minReplicas`";
    // No path and no flapping simulation: the errors, exit 2.
    for (format, nothing) in [
        ("text", ""),
        ("json", "{\n  \"syncPeriod\": 15,\n  \"hpas\": []\n}\n"),
    ] {
        hpa_lint("behavior")
            .arg(&bad)
            .args(["--format", format])
            .assert()
            .code(2)
            .stdout(nothing)
            .stderr(predicate::str::contains(error));
    }
    hpa_lint("simulate")
        .arg(&bad)
        .args(["--trace", &trace])
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains(error));
    // Beside a valid HPA: `behavior` reports the valid one and refuses the
    // other (exit 2); `simulate` needs one HPA and counts both.
    let both = write(
        dir.path(),
        "both.yaml",
        &format!("{invalid}---\n{}", hpa("fine", "  maxReplicas: 4\n")),
    );
    let output = hpa_lint("behavior").arg(&both).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(text.contains("HorizontalPodAutoscaler shop/fine"), "{text}");
    assert!(!text.contains("inverted"), "{text}");
    assert!(String::from_utf8(output.stderr).unwrap().contains(error));
    hpa_lint("simulate")
        .arg(&both)
        .args(["--trace", &trace])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "2 HorizontalPodAutoscalers in the input (shop/inverted, shop/fine); pick one with --hpa",
        ));
    hpa_lint("simulate")
        .arg(&both)
        .args(["--hpa", "fine", "--trace", &trace])
        .assert()
        .success();
}

#[test]
fn plot_is_written_through_an_exclusive_temporary_file_and_refuses_special_files() {
    let dir = tempfile::tempdir().unwrap();
    let simulate = |plot: &Path| {
        let mut command = hpa_lint("simulate");
        command
            .arg("examples/shop/cart/cart.yaml")
            .args(["--trace", "examples/traces/cart-cpu.csv", "--plot"])
            .arg(plot);
        command
    };
    // A link to a file: the file it names gets the picture, the link stays.
    let picture = dir.path().join("picture.svg");
    std::fs::write(&picture, "old").unwrap();
    let link = dir.path().join("link.svg");
    std::os::unix::fs::symlink(&picture, &link).unwrap();
    simulate(&link).assert().success();
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert!(
        std::fs::read_to_string(&picture)
            .unwrap()
            .starts_with("<svg")
    );
    // Special files are refused, and left as they are.
    let fifo = dir.path().join("fifo.svg");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let to_device = dir.path().join("null.svg");
    std::os::unix::fs::symlink("/dev/null", &to_device).unwrap();
    let directory = dir.path().join("directory.svg");
    std::fs::create_dir(&directory).unwrap();
    let dangling = dir.path().join("dangling.svg");
    std::os::unix::fs::symlink(dir.path().join("missing/x.svg"), &dangling).unwrap();
    let nowhere = dir.path().join("missing/out.svg");
    for (path, expected) in [
        (&nowhere, "cannot write in"),
        (&fifo, "not a regular file (a named pipe)"),
        (&to_device, "not a regular file (a device)"),
        (&directory, "not a regular file (a directory)"),
        (&dangling, "a symbolic link to nothing"),
    ] {
        simulate(path)
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(expected));
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(std::fs::symlink_metadata(&to_device).unwrap().is_symlink());
    // The temporary file's name is not predictable: a link planted where
    // it once was (`.NAME.PID.tmp`) is not followed. The run waits on its
    // standard output until the link is there (the plot is written last).
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep").unwrap();
    let plot = dir.path().join("out.svg");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("hpa-lint"))
        .env_remove("HPA_LINT_KUBE_VERSION")
        .args(["simulate", "--isolated", "examples/shop/cart/cart.yaml"])
        .args(["--trace", "examples/traces/cart-cpu.csv", "--until", "2h"])
        .args(["--sync-period", "1s", "--format", "csv", "--plot"])
        .arg(&plot)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let planted = dir.path().join(format!(".out.svg.{}.tmp", child.id()));
    std::os::unix::fs::symlink(&victim, &planted).unwrap();
    let mut rows = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut rows).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(
        rows.lines().count(),
        7202,
        "a row per second, and the header"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    assert!(std::fs::read_to_string(&plot).unwrap().starts_with("<svg"));
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            format!(".out.svg.{}.tmp", child.id()),
            "dangling.svg".to_owned(),
            "directory.svg".to_owned(),
            "fifo.svg".to_owned(),
            "link.svg".to_owned(),
            "null.svg".to_owned(),
            "out.svg".to_owned(),
            "picture.svg".to_owned(),
            "victim".to_owned(),
        ],
        "no temporary file is left behind"
    );
}

#[test]
fn huge_durations_are_refused_and_the_largest_stay_exact() {
    let cart_with = |trace: &str| {
        let mut command = hpa_lint("simulate");
        command.args(["examples/shop/cart/cart.yaml", "--trace", trace]);
        command
    };
    let cart = || cart_with("examples/traces/cart-cpu.csv");
    // Once these wrapped around: endless syncs at negative times.
    for flag in ["--sync-period", "--until", "--pod-startup"] {
        cart()
            .args([flag, "2562047788015h"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "duration `2562047788015h` is longer than the longest Go duration, 2562047h47m16.854s",
            ));
    }
    hpa_lint("behavior")
        .args([
            "examples/shop/cart/cart.yaml",
            "--sync-period",
            "2562047h47m16.855s",
        ])
        .assert()
        .code(2);
    let dir = tempfile::tempdir().unwrap();
    let trace = write(dir.path(), "late.csv", "time,cpu\n0,1\n2562047788015h,2\n");
    cart_with(&trace)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "late.csv:3: time `2562047788015h` is later than the latest time a simulation reaches",
        ));
    // The longest sync period Go allows: two syncs, at whole positive times.
    let output = cart()
        .args([
            "--sync-period",
            "2562047h",
            "--until",
            "2562047h",
            "--format",
            "csv",
        ])
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    let times: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(times, ["0", "9223369200"]);
    let document = json(hpa_lint("behavior").args([
        "examples/shop/cart/cart.yaml",
        "--sync-period",
        "2562047h47m16.854s",
    ]));
    let up = &document["hpas"][0]["scaleUp"];
    assert_eq!(up["steps"][0]["time"], 9_223_372_036.854);
    assert_eq!(up["end"], "horizon");
    // Syncs beyond the limit are refused before the first one runs.
    cart()
        .args(["--sync-period", "1ms", "--until", "3h"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "the simulation would run 10800001 syncs (one every 1ms until 3h), more than the limit of 10000000",
        ));
}

#[test]
fn small_sync_periods_finish_with_the_controllers_answers() {
    // A 1 ms sync period once walked a 300,000-entry window at every sync;
    // a sync's cost no longer depends on the windows and periods.
    let output = hpa_lint("simulate")
        .args([
            "examples/shop/cart/cart.yaml",
            "--trace",
            "examples/traces/cart-cpu.csv",
        ])
        .args([
            "--sync-period",
            "1ms",
            "--until",
            "2m30s",
            "--format",
            "csv",
        ])
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(text.lines().count(), 150_002);
    // 2.4 cores from 2m: 3 → 6 at the first sync that sees them.
    let changes: Vec<&str> = text
        .lines()
        .filter(|l| {
            let f: Vec<&str> = l.split(',').collect();
            f[1] != f[4] && f[0] != "time"
        })
        .collect();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert!(changes[0].starts_with("120,3,6,6,6,SucceededRescale,"));
    // `behavior` follows a path for a day or a bounded number of syncs, and
    // says which; both directions disabled is found stuck at once.
    let cart = hpa_lint("behavior")
        .args(["examples/shop/cart/cart.yaml", "--sync-period", "1ms"])
        .output()
        .unwrap();
    let text = String::from_utf8(cart.stdout).unwrap();
    assert!(cart.status.success());
    assert!(
        text.contains("fastest scale-up (3 → 9): 3 → 7 → 9 in 15.001s; limited by Pods 4 per 15s"),
        "{text}"
    );
    assert!(
        text.contains(
            "fastest scale-down (9 → 3): 9 → 8 → 7 → 6 → 5 by 16m; not 3 within 16m39.999s, \
             the longest `behavior` follows a path at a sync every 1ms, 1000000 syncs"
        ),
        "{text}"
    );
    let dir = tempfile::tempdir().unwrap();
    let frozen = write(
        dir.path(),
        "frozen.yaml",
        &hpa(
            "frozen",
            "  maxReplicas: 10\n  behavior:\n    scaleUp: {selectPolicy: Disabled}\n    scaleDown: {selectPolicy: Disabled}\n",
        ),
    );
    let document = json(hpa_lint("behavior").args([&frozen, "--sync-period", "20ms"]));
    let up = &document["hpas"][0]["scaleUp"];
    assert_eq!(
        (&up["end"], &up["seconds"]),
        (&json_str("stuck"), &Value::Null)
    );
    hpa_lint("behavior")
        .args([&frozen, "--sync-period", "20ms"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "fastest scale-up (1 → 10): never scales (selectPolicy: Disabled)",
        ));
}

fn json_str(text: &str) -> Value {
    Value::String(text.to_owned())
}

#[test]
fn json_steps_are_written_as_the_syncs_run() {
    // The document is written sync by sync, not held: a run that stops at a
    // sync (here: more pods than the model follows) has written the syncs
    // before it, and exits with 2.
    let dir = tempfile::tempdir().unwrap();
    let wide = write(
        dir.path(),
        "wide.yaml",
        &hpa("wide", "  minReplicas: 1\n  maxReplicas: 2147483647\n"),
    );
    let trace = write(
        dir.path(),
        "rush.csv",
        "time,replicas\n0,1\n15,2147483647\n",
    );
    let output = hpa_lint("simulate")
        .args([
            &wide, "--trace", &trace, "--until", "1h", "--format", "json",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.starts_with("{\"hpa\":{\"namespace\":\"shop\",\"name\":\"wide\"},\"syncPeriod\":15,\"metrics\":{},\"steps\":[{\"time\":0,"), "{text}");
    // 1 → 4 → 8 → … → 131072 at 15 s a doubling; the next would pass 150,000.
    assert!(text.contains("\"desiredReplicas\":131072"), "{text}");
    assert!(!text.ends_with("]}\n"));
    assert!(
        String::from_utf8(output.stderr)
            .unwrap()
            .contains("at 255s the controller scales to 262144 replicas")
    );
}

#[test]
fn behavior_says_the_horizon_where_it_does_not_know_never() {
    // One pod per 1800 s after a 3600 s window: 100 replicas take 50 h.
    let dir = tempfile::tempdir().unwrap();
    let slow = write(
        dir.path(),
        "slow.yaml",
        &hpa(
            "slow",
            "  maxReplicas: 100\n  behavior:\n    scaleUp:\n      stabilizationWindowSeconds: 3600\n      \
             policies: [{type: Pods, value: 1, periodSeconds: 1800}]\n",
        ),
    );
    hpa_lint("behavior")
        .arg(&slow)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "fastest scale-up (1 → 100): 1 → 2 → 3 → 4 → 5 → 6 → … → 46 → 47 → 48 by 24h; \
             not 100 within 24h, the longest `behavior` follows a path\n",
        ));
    let document = json(hpa_lint("behavior").arg(&slow));
    let up = &document["hpas"][0]["scaleUp"];
    assert_eq!(up["end"], "horizon");
    assert_eq!(up["followedFor"], 86_400);
    assert_eq!(up["seconds"], Value::Null);
    // The simulation, given the time, gets there at 50 h.
    let trace = write(dir.path(), "trace.csv", "time,replicas\n0,1\n15,100\n");
    let run = json(hpa_lint("simulate").args([&slow, "--trace", &trace, "--until", "51h"]));
    assert_eq!(changes(&run).last(), Some(&(180_000, 99, 100)));
}

#[test]
fn behavior_scales_up_from_zero_as_simulate_does() {
    // An HPA that scales to zero leaves `ScaledToZero: True`, and scales up
    // again when its External metric asks: 0 → 4 → 8 → 10 (legacy path).
    let dir = tempfile::tempdir().unwrap();
    let queue = write(
        dir.path(),
        "queue.yaml",
        &hpa(
            "queue",
            "  minReplicas: 0\n  maxReplicas: 10\n  metrics:\n  - type: External\n    external:\n      \
             metric: {name: queue_depth}\n      target: {type: AverageValue, averageValue: \"10\"}\n",
        ),
    );
    let gate = ["--feature-gates", "HPAScaleToZero=true"];
    hpa_lint("behavior")
        .arg(&queue)
        .args(gate)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "fastest scale-up (0 → 10): 0 → 4 → 8 → 10 in 45s; limited by the legacy max(2 × current, 4) per sync\n    \
             from 0 replicas as the HPA leaves a workload it scaled to zero (ScaledToZero: True)",
        ));
    let up = &json(hpa_lint("behavior").arg(&queue).args(gate))["hpas"][0]["scaleUp"];
    assert_eq!(
        up["steps"],
        serde_json::json!([
            {"time": 15, "replicas": 4, "limitedBy": "legacy"},
            {"time": 30, "replicas": 8, "limitedBy": "legacy"},
            {"time": 45, "replicas": 10, "limitedBy": null}
        ])
    );
    // The simulation from 0 at rest: the same steps when the queue fills.
    let trace = write(dir.path(), "queue.csv", "time,queue_depth\n0,0\n15,500\n");
    let run = json(
        hpa_lint("simulate")
            .arg(&queue)
            .args(gate)
            .args(["--trace", &trace, "--until", "1m"]),
    );
    assert_eq!(changes(&run), [(15, 0, 4), (30, 4, 8), (45, 8, 10)]);
}

#[test]
fn legacy_path_past_two_to_the_thirty_shows_the_refused_scale_update() {
    // Go's int32(2 × current) overflows past 2^30: the controller asks for
    // -2147483648 replicas and the API server refuses the update, each sync.
    let dir = tempfile::tempdir().unwrap();
    let wide = write(
        dir.path(),
        "wide.yaml",
        &hpa("wide", "  minReplicas: 1\n  maxReplicas: 2147483647\n"),
    );
    let output = hpa_lint("behavior").arg(&wide).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success());
    assert!(
        text.contains(
            "fastest scale-up (1 → 2147483647): 1 → 4 → 8 → 16 → 32 → 64 → … → 268435456 → 536870912 → 1073741824, \
             then stops: never reaches 2147483647: from 7m30s on, each sync asks the API server to scale \
             1073741824 replicas to -2147483648 (Go's int32 arithmetic overflowed), and it refuses that update"
        ),
        "{text}"
    );
    assert!(
        text.contains("fastest scale-down (2147483647 → 1): never scales: from 0s on"),
        "{text}"
    );
    let document = json(hpa_lint("behavior").arg(&wide));
    for direction in ["scaleUp", "scaleDown"] {
        let path = &document["hpas"][0][direction];
        assert_eq!(path["end"], "stuck");
        assert_eq!(path["refused"]["replicas"], -2_147_483_648_i64);
        for step in path["steps"].as_array().unwrap() {
            assert!(step["replicas"].as_i64().unwrap() > 0, "{step}");
        }
    }
}

/// An HPA of `web` with these metrics, and a target for its requests.
fn with_metrics(metrics: &str) -> String {
    hpa("web", &format!("  maxReplicas: 20\n  metrics:\n{metrics}"))
        + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n\
         spec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    \
         spec:\n      containers:\n      - name: app\n        image: web\n        resources: {requests: {cpu: 500m}}\n"
}

#[test]
fn a_metric_named_replicas_is_that_metric_in_every_trace_format() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "hpa.yaml",
        &with_metrics(
            "  - type: External\n    external:\n      metric: {name: replicas}\n      \
             target: {type: Value, value: \"10\"}\n",
        ),
    );
    let csv = write(dir.path(), "trace.csv", "time,replicas\n0,10\n60,40\n");
    let prometheus = write(
        dir.path(),
        "replicas.json",
        r#"{"data": {"resultType": "matrix", "result": [{"values": [[1000, "10"], [1060, "40"]]}]}}"#,
    );
    let from_csv = json(hpa_lint("simulate").args([&file, "--trace", &csv]));
    let mut from_prometheus =
        json(hpa_lint("simulate").args([&file, "--trace", &format!("replicas={prometheus}")]));
    // A Prometheus trace has dates: its time 0 is 1000 s after the epoch.
    let start = from_prometheus.as_object_mut().unwrap().remove("start");
    assert_eq!(start, Some("1970-01-01T00:16:40Z".into()));
    assert_eq!(from_csv, from_prometheus);
    assert_eq!(
        from_csv["steps"][4]["metrics"]["replicas"],
        serde_json::json!({"demand": 40, "value": 40, "replicas": 4})
    );
    // Without such a metric, a lone `replicas` column is the recommendation.
    let cart = json(hpa_lint("simulate").args(["examples/shop/cart/cart.yaml", "--trace", &csv]));
    assert_eq!(cart["steps"][0]["recommendation"], 10);
    assert_eq!(cart["steps"][0]["metrics"], serde_json::json!({}));
}

#[test]
fn metrics_of_one_name_have_keys_of_their_own() {
    // A Resource and a ContainerResource cpu metric: both kept, apart.
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "hpa.yaml",
        &with_metrics(
            "  - type: Resource\n    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}\n  \
             - type: ContainerResource\n    containerResource: {name: cpu, container: app, \
             target: {type: AverageValue, averageValue: 100m}}\n",
        ),
    );
    let trace = write(dir.path(), "trace.csv", "time,cpu\n0,1\n");
    let document = json(hpa_lint("simulate").args([&file, "--trace", &trace, "--until", "0s"]));
    assert_eq!(
        document["metrics"],
        serde_json::json!({
            "cpu[0]": {"type": "Resource", "name": "cpu", "index": 0},
            "cpu[1]": {"type": "ContainerResource", "name": "cpu", "index": 1, "container": "app"},
        })
    );
    // 1 core on one pod: 200 % of 500m asks for 4; 1000m of 100m for 10.
    assert_eq!(
        document["steps"][0]["metrics"],
        serde_json::json!({
            "cpu[0]": {"demand": 1, "averageUtilization": 200, "averageValue": 1, "replicas": 4},
            "cpu[1]": {"demand": 1, "averageValue": 1, "replicas": 10},
        })
    );
    assert_eq!(document["steps"][0]["recommendation"], 10);
    let csv = hpa_lint("simulate")
        .args([&file, "--trace", &trace, "--until", "0s", "--format", "csv"])
        .output()
        .unwrap();
    let header = String::from_utf8(csv.stdout).unwrap();
    assert!(
        header.lines().next().unwrap().ends_with(
            ",cpu[0].demand,cpu[0].averageUtilization,cpu[0].averageValue,cpu[0].replicas,cpu[0].error,\
             cpu[1].demand,cpu[1].averageValue,cpu[1].replicas,cpu[1].error"
        ),
        "{header}"
    );
}

/// A `spec.metrics` item: an External metric `name` with selector
/// `q: selector` and an `averageValue` target.
fn external_metric(name: &str, selector: &str, target: &str) -> String {
    format!(
        "  - type: External\n    external:\n      metric: {{name: \"{name}\", selector: {{matchLabels: {{q: {selector}}}}}}}\n      \
         target: {{type: AverageValue, averageValue: \"{target}\"}}\n"
    )
}

/// Every metric has a key of its own, even one named like another's key
/// (`q[1]`), and an invalid metric is shown with its error every sync,
/// with no column to read.
#[test]
fn every_metric_is_shown_under_a_key_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = external_metric("q", "a", "10")
        + &external_metric("q", "b", "10")
        + &external_metric("q[1]", "c", "10")
        + &external_metric("big", "d", "100E");
    let file = write(dir.path(), "hpa.yaml", &with_metrics(&metrics));
    let trace = write(
        dir.path(),
        "trace.csv",
        "time,q[0],q[1],q[1][2]\n0,10,20,30\n",
    );
    let document = json(hpa_lint("simulate").args([&file, "--trace", &trace, "--until", "0s"]));
    let keys: Vec<&String> = document["metrics"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["q[0]", "q[1]", "q[1][2]", "big"]);
    assert_eq!(document["metrics"]["big"]["type"], "External");
    let step = &document["steps"][0]["metrics"];
    assert_eq!(step["q[1][2]"]["demand"], 30);
    // An invalid metric reads no column, and an error says why.
    let extra = write(
        dir.path(),
        "extra.csv",
        "time,q[0],q[1],q[1][2],big\n0,10,20,30,1\n",
    );
    let output = hpa_lint("simulate")
        .args([&file, "--trace", &extra])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("column `big`: the controller cannot evaluate that metric ("),
        "{stderr}"
    );
    // `q[1]` is the second `q`'s column: the metric named so needs its own.
    let short = write(dir.path(), "short.csv", "time,q[0],q[1]\n0,10,20\n");
    let output = hpa_lint("simulate")
        .args([&file, "--trace", &short])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no column for the HPA's metric `q[1][2]`"),
        "{stderr}"
    );
    assert_eq!(
        step["big"],
        serde_json::json!({"error": "FailedGetExternalMetric"})
    );
}

/// A pod's request is its pod-level one while `PodLevelResources` is on
/// (from 1.34); before, the API server drops it and the containers' count.
#[test]
fn pod_level_requests_follow_their_gate() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "hpa.yaml",
        &with_metrics(
            "  - type: Resource\n    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}\n",
        )
        .replace(
            "      containers:\n",
            "      resources: {requests: {cpu: \"2\"}}\n      containers:\n",
        ),
    );
    let trace = write(dir.path(), "trace.csv", "time,cpu\n0,1\n");
    let recommendation = |version: &str| {
        json(hpa_lint("simulate").args([
            &file,
            "--trace",
            &trace,
            "--until",
            "0s",
            "--kube-version",
            version,
        ]))["steps"][0]["recommendation"]
            .clone()
    };
    // 1 core on one pod: 50 % of 2 cores wants 1 pod, 200 % of 500m 4.
    assert_eq!(recommendation("1.34"), 1);
    assert_eq!(recommendation("1.33"), 4);
    // A pod-level limit alone: the API server defaults the pod's request to
    // what the containers request (`defaultPodRequests`), not to the limit.
    let limited = write(
        dir.path(),
        "limited.yaml",
        &std::fs::read_to_string(&file).unwrap().replace(
            "resources: {requests: {cpu: \"2\"}}",
            "resources: {limits: {cpu: \"2\"}}",
        ),
    );
    let document = json(hpa_lint("simulate").args([&limited, "--trace", &trace, "--until", "0s"]));
    assert_eq!(document["steps"][0]["recommendation"], 4);
}

/// A `replicas` column of an HPA with metrics named `replicas` is those
/// metrics; an invalid metric still shares its name's column.
#[test]
fn shared_columns_feed_every_metric_of_their_name() {
    let dir = tempfile::tempdir().unwrap();
    let replicas = write(
        dir.path(),
        "replicas.yaml",
        &with_metrics(
            &(external_metric("replicas", "a", "10") + &external_metric("replicas", "b", "10")),
        ),
    );
    let trace = write(dir.path(), "trace.csv", "time,replicas\n0,50\n");
    let document = json(hpa_lint("simulate").args([&replicas, "--trace", &trace, "--until", "0s"]));
    assert_eq!(document["steps"][0]["metrics"]["replicas[1]"]["demand"], 50);
    assert_eq!(document["steps"][0]["recommendation"], 5);
    let invalid = write(
        dir.path(),
        "invalid.yaml",
        &with_metrics(
            &(external_metric("queue", "a", "100E") + &external_metric("queue", "b", "10")),
        ),
    );
    let trace = write(dir.path(), "queue.csv", "time,queue\n0,50\n");
    let document = json(hpa_lint("simulate").args([&invalid, "--trace", &trace, "--until", "0s"]));
    assert_eq!(document["steps"][0]["metrics"]["queue[1]"]["demand"], 50);
}

/// `--requests` for a target in the input replaces its requests, and says
/// so on standard error (once in `compare`, whose specs share the target).
#[test]
fn requests_given_for_a_target_in_the_input_are_a_noted_what_if() {
    let cart = "examples/shop/cart/cart.yaml";
    let trace = "examples/traces/cart-cpu.csv";
    let note = "hpa-lint: note: --requests: cpu 0.1 per pod in place of the 0.55 that StatefulSet `cart` in the input requests (a what-if)\n";
    let run = |args: &[&str]| {
        let output = hpa_lint(args[0]).args(&args[1..]).output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        (
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8(output.stderr).unwrap(),
        )
    };
    let (own, quiet) = run(&["simulate", cart, "--trace", trace, "--format", "csv"]);
    assert_eq!(quiet, "");
    let (replaced, noted) = run(&[
        "simulate",
        cart,
        "--trace",
        trace,
        "--requests",
        "cpu=100m",
        "--format",
        "csv",
    ]);
    assert_eq!(noted, note);
    assert_ne!(replaced, own, "the replaced requests are simulated");
    let (_, noted) = run(&[
        "compare",
        cart,
        cart,
        "--load",
        "step",
        "--requests",
        "cpu=100m",
    ]);
    assert_eq!(noted, note);
}

/// Two External metrics of one name with other selectors are two series:
/// each has a column of its own (`name[i]`), from CSV or Prometheus files;
/// a column of the shared name gives them both.
#[test]
fn metrics_of_one_name_read_columns_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "hpa.yaml",
        &with_metrics(
            "  - type: External\n    external:\n      metric: {name: queue, selector: {matchLabels: {q: orders}}}\n      \
             target: {type: AverageValue, averageValue: \"10\"}\n  \
             - type: External\n    external:\n      metric: {name: queue, selector: {matchLabels: {q: emails}}}\n      \
             target: {type: AverageValue, averageValue: \"100\"}\n",
        ),
    );
    let demand = |document: &Value| -> Vec<Value> {
        ["queue[0]", "queue[1]"]
            .iter()
            .map(|key| document["steps"][0]["metrics"][key]["demand"].clone())
            .collect()
    };
    let run = |trace: &[&str]| {
        let mut command = hpa_lint("simulate");
        command.args([&file, "--until", "0s"]);
        for spec in trace {
            command.args(["--trace", spec]);
        }
        json(&mut command)
    };
    // 50 on the first queue wants 5 pods, 900 on the second 9.
    let apart = write(
        dir.path(),
        "apart.csv",
        "time,queue[1],queue[0]\n0,900,50\n",
    );
    let document = run(&[&apart]);
    assert_eq!(demand(&document), [50, 900]);
    assert_eq!(document["steps"][0]["recommendation"], 9);
    let matrix = |value: u32| {
        format!(
            r#"{{"data": {{"resultType": "matrix", "result": [{{"values": [[1000, "{value}"]]}}]}}}}"#
        )
    };
    let orders = write(dir.path(), "orders.json", &matrix(50));
    let emails = write(dir.path(), "emails.json", &matrix(900));
    let from_files = run(&[&format!("queue[0]={orders}"), &format!("queue[1]={emails}")]);
    assert_eq!(demand(&from_files), [50, 900]);
    // One column of the shared name gives both metrics.
    let shared = write(dir.path(), "shared.csv", "time,queue\n0,50\n");
    assert_eq!(demand(&run(&[&shared])), [50, 50]);
    let shared = run(&[&format!("queue={orders}")]);
    assert_eq!(demand(&shared), [50, 50]);
    // A metric's own column first, the shared one for the rest.
    let mixed = write(dir.path(), "mixed.csv", "time,queue,queue[1]\n0,50,900\n");
    assert_eq!(demand(&run(&[&mixed])), [50, 900]);
    for (header, error) in [
        ("time,queue[0]", "no column for the HPA's metric `queue[1]`"),
        (
            "time,queue,queue[0],queue[1]",
            "column `queue` gives no metric: each `queue[…]` has its own",
        ),
        (
            "time,queue[2]",
            "unknown column `queue[2]`: the HPA's metrics are queue[0], queue[1] (`queue` gives every `queue[…]`)",
        ),
    ] {
        let trace = write(dir.path(), "bad.csv", &format!("{header}\n0,1,1\n"));
        let output = hpa_lint("simulate")
            .args([&file, "--trace", &trace])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{header}: {stderr}");
        assert!(stderr.contains(error), "{header}: {stderr}");
    }
}

#[test]
fn csv_and_json_carry_the_same_fields() {
    // A metric name with a comma and a quote: quoted in the trace's header
    // and in the output's.
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "hpa.yaml",
        &with_metrics(
            "  - type: Resource\n    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}\n  \
             - type: Pods\n    pods:\n      metric: {name: 'a,\"b'}\n      target: {type: AverageValue, averageValue: \"5\"}\n",
        ),
    );
    let trace = write(
        dir.path(),
        "trace.csv",
        "time,cpu,\"a,\"\"b\"\n0,1,5\n60,0.25,40\n120,3,0\n",
    );
    let run = |format: &str| {
        hpa_lint("simulate")
            .args([
                &file, "--trace", &trace, "--until", "5m", "--format", format,
            ])
            .output()
            .unwrap()
    };
    let document: Value = serde_json::from_slice(&run("json").stdout).unwrap();
    let csv = run("csv");
    assert!(csv.status.success());
    let mut reader = csv::Reader::from_reader(csv.stdout.as_slice());
    let header: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    assert!(
        header.contains(&"a,\"b.averageValue".to_owned()),
        "{header:?}"
    );
    let steps = document["steps"].as_array().unwrap();
    let mut rows = 0;
    for (row, step) in reader.records().zip(steps) {
        let row = row.unwrap();
        rows += 1;
        for (column, value) in header.iter().zip(row.iter()) {
            let expected = match column.split_once('.') {
                Some((key, field))
                    if !["time"].contains(&column.as_str())
                        && step["metrics"].get(key).is_some() =>
                {
                    step["metrics"][key][field].clone()
                }
                _ if step.get(column).is_some() => step[column].clone(),
                _ => step["conditions"][column].clone(),
            };
            let expected = match expected {
                Value::Null => String::new(),
                Value::String(text) => text,
                other => other.to_string(),
            };
            assert_eq!(value, expected, "{column} at {}", step["time"]);
        }
    }
    assert_eq!(rows, steps.len());
}

#[test]
fn traces_skip_a_byte_order_mark_and_escape_control_characters() {
    let dir = tempfile::tempdir().unwrap();
    let run = |text: &[u8]| {
        let trace = dir.path().join("trace.csv");
        std::fs::write(&trace, text).unwrap();
        hpa_lint("simulate")
            .arg("examples/shop/cart/cart.yaml")
            .arg("--trace")
            .arg(&trace)
            .output()
            .unwrap()
    };
    // A spreadsheet's UTF-8 export, with CRLF line ends.
    let output = run(b"\xef\xbb\xbftime,cpu\r\n0,1.2\r\n60,2.4\r\n");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // A lone carriage return is no line end, and is shown, not obeyed.
    let output = run(b"time,cpu\n0,1\r2\n");
    assert_eq!(output.status.code(), Some(2));
    let errors = String::from_utf8(output.stderr).unwrap();
    assert!(
        errors.contains("trace.csv:2: `1\\r2` is not a number or quantity"),
        "{errors}"
    );
    assert!(!errors.contains('\r'));
    let output = run(b"time,\x1b[2Jcpu\n0,1\n");
    let errors = String::from_utf8(output.stderr).unwrap();
    assert!(
        errors.contains("unknown column `\\u{1b}[2Jcpu`"),
        "{errors}"
    );
    assert!(!errors.contains('\x1b'));
}

mod random_traces {
    //! Traces made of what once went wrong (byte order marks, lone carriage
    //! returns, escape sequences, quotes, times past Go's longest duration,
    //! huge and negative numbers) with sync periods from 1 s to the longest:
    //! every run either simulates, with times from 0 up in steps of the sync
    //! period, or is refused with a clear error (exit 2), and no message
    //! carries a control character. The test command runs 48 traces;
    //! `HPA_LINT_FUZZ_CASES` runs more.
    use proptest::prelude::*;

    use super::*;

    const TIMES: [&str; 10] = [
        "0",
        "15",
        "1m",
        "90s",
        "1.5",
        "2562047h47m16.854s",
        "2562047788015h",
        "99999999999999999999",
        "-5",
        "\u{feff}0",
    ];
    const VALUES: [&str; 12] = [
        "1",
        "1.2",
        "250m",
        "0",
        "-1",
        "1e3",
        "NaN",
        "99999999999999999999",
        "\"2\"",
        "1\r2",
        "\u{1b}[1m",
        "\"a,\"\"b\"",
    ];
    const LINE_ENDS: [&str; 3] = ["\n", "\r\n", "\r"];

    /// Mostly a good trace (a row every 15 s from 0, good values), with
    /// what once went wrong mixed in.
    fn trace() -> impl Strategy<Value = String> {
        let row = (
            prop::option::weighted(0.15, prop::sample::select(TIMES.to_vec())),
            prop_oneof![
                3 => prop::sample::select(VALUES[..4].to_vec()),
                1 => prop::sample::select(VALUES.to_vec()),
            ],
        );
        (
            any::<bool>(),
            prop::sample::select(vec!["time,cpu", "time, cpu", "time,replicas", "time,rps"]),
            prop::collection::vec(row, 0..6),
            prop::sample::select(LINE_ENDS.to_vec()),
        )
            .prop_map(|(bom, header, rows, end)| {
                let mut text = if bom {
                    "\u{feff}".to_owned()
                } else {
                    String::new()
                };
                text += header;
                text += end;
                for (i, (time, value)) in rows.into_iter().enumerate() {
                    let time = time.map_or_else(|| (15 * i).to_string(), str::to_owned);
                    text += &format!("{time},{value}{end}");
                }
                text
            })
    }

    fn cases() -> u32 {
        std::env::var("HPA_LINT_FUZZ_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(48)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(cases()))]

        #[test]
        fn any_trace_is_simulated_or_refused_clearly(
            trace in trace(),
            period in prop::sample::select(vec!["1s", "15s", "7s", "2562047h47m16.854s"]),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let path = write(dir.path(), "trace.csv", &trace);
            let output = hpa_lint("simulate")
                .args(["examples/shop/cart/cart.yaml", "--trace", &path])
                .args(["--sync-period", period, "--format", "csv"])
                .output()
                .unwrap();
            let errors = String::from_utf8(output.stderr).unwrap();
            prop_assert!(
                !errors.chars().any(|c| c.is_control() && c != '\n'),
                "{errors:?}"
            );
            match output.status.code() {
                Some(0) => {
                    let period = hpa_lint_rules::controller::parse_duration(period).unwrap();
                    let text = String::from_utf8(output.stdout).unwrap();
                    let times: Vec<f64> = text
                        .lines()
                        .skip(1)
                        .map(|l| l.split(',').next().unwrap().parse().unwrap())
                        .collect();
                    for (i, time) in times.iter().enumerate() {
                        let expected = (i as i64 * period) as f64 / 1000.0;
                        prop_assert_eq!(*time, expected);
                    }
                }
                Some(2) => prop_assert!(errors.contains("hpa-lint: "), "{errors}"),
                code => prop_assert!(false, "exit {code:?}: {errors}"),
            }
        }
    }
}

/// Issue 16: the HPAs in the order of the input (files as given, documents
/// in order), not by name, in every output of `behavior` and `simulate`.
#[test]
fn hpas_are_listed_in_file_order() {
    let dir = tempfile::tempdir().unwrap();
    let b = write(
        dir.path(),
        "b.yaml",
        &format!(
            "{}---\n{}",
            hpa("zeta", "  maxReplicas: 4\n"),
            hpa("beta", "  maxReplicas: 4\n")
        ),
    );
    let a = write(dir.path(), "a.yaml", &hpa("alpha", "  maxReplicas: 4\n"));
    let given = ["shop/zeta", "shop/beta", "shop/alpha"];
    let order = |text: &str| -> Vec<&str> {
        let mut found: Vec<(usize, &str)> = ["shop/zeta", "shop/beta", "shop/alpha"]
            .into_iter()
            .filter_map(|key| text.find(key).map(|at| (at, key)))
            .collect();
        found.sort();
        found.into_iter().map(|(_, key)| key).collect()
    };
    let output = hpa_lint("behavior").args([&b, &a]).output().unwrap();
    assert_eq!(order(&String::from_utf8(output.stdout).unwrap()), given);
    let document = json(hpa_lint("behavior").args([&b, &a]));
    let names: Vec<&str> = document["hpas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["zeta", "beta", "alpha"]);
    let yaml = hpa_lint("behavior")
        .args([&b, &a, "--output", "yaml"])
        .output()
        .unwrap();
    let yaml = String::from_utf8(yaml.stdout).unwrap();
    let names: Vec<&str> = yaml
        .lines()
        .filter_map(|l| l.strip_prefix("  name: "))
        .collect();
    assert_eq!(names, ["zeta", "beta", "alpha"], "{yaml}");
    hpa_lint("simulate")
        .args([&b, &a, "--load", "step"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "3 HorizontalPodAutoscalers in the input (shop/zeta, shop/beta, shop/alpha); pick one with --hpa",
        ));
    // A directory's files come in path order, each file's documents in order.
    let output = hpa_lint("behavior").arg(dir.path()).output().unwrap();
    assert_eq!(
        order(&String::from_utf8(output.stdout).unwrap()),
        ["shop/alpha", "shop/zeta", "shop/beta"]
    );
    // `compare` names a file's HPAs in its order too.
    hpa_lint("compare")
        .args([&b, &a, "--load", "step"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "2 HorizontalPodAutoscalers (shop/zeta, shop/beta); pick one with --hpa",
        ));
}

/// What `behavior` marks as a default: a field the manifest does not set,
/// in `spec.behavior` or in the `v1` behavior annotation (keys as Go reads
/// them), and a tolerance the API server drops while its gate is off.
#[test]
fn behavior_marks_what_the_manifest_does_not_set() {
    let dir = tempfile::tempdir().unwrap();
    let v1 = write(
        dir.path(),
        "v1.yaml",
        "apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: web\n  namespace: shop\n  \
         annotations:\n    autoscaling.alpha.kubernetes.io/behavior: '{\"ScaleDown\":{\"stabilizationWindowSeconds\":60,\
         \"SelectPolicy\":\"Min\",\"policies\":[{\"Type\":\"Pods\",\"Value\":1,\"PeriodSeconds\":60}]}}'\n\
         spec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  maxReplicas: 10\n",
    );
    let defaults = |args: &[&str]| -> Vec<(String, bool)> {
        let document = json(hpa_lint("behavior").args(args));
        let behavior = &document["hpas"][0]["behavior"];
        let mut marked = Vec::new();
        for direction in ["scaleUp", "scaleDown"] {
            for (field, value) in behavior[direction].as_object().unwrap() {
                marked.push((format!("{direction}.{field}"), value["default"] == true));
            }
        }
        marked
    };
    let marked = defaults(&[&v1]);
    let written: Vec<&str> = (marked.iter())
        .filter(|(_, default)| !default)
        .map(|(field, _)| field.as_str())
        .collect();
    assert_eq!(
        written,
        [
            "scaleDown.stabilizationWindowSeconds",
            "scaleDown.selectPolicy",
            "scaleDown.policies"
        ]
    );
    let tolerance = write(
        dir.path(),
        "tolerance.yaml",
        &hpa(
            "web",
            "  maxReplicas: 10\n  behavior:\n    scaleUp: {tolerance: 0.01}\n",
        ),
    );
    let up_tolerance = |version: &str| {
        let marked = defaults(&[&tolerance, "--kube-version", version]);
        marked
            .into_iter()
            .find(|(f, _)| f == "scaleUp.tolerance")
            .unwrap()
            .1
    };
    assert!(!up_tolerance("1.35"));
    assert!(up_tolerance("1.34"));
    let text = hpa_lint("behavior")
        .args([&tolerance, "--kube-version", "1.34"])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("    tolerance: 0.1  # dropped by the API server (HPAConfigurableTolerance is off, or absent before 1.33): default: --tolerance\n"),
        "{text}"
    );
}

/// Issue 16: the sync period every time of `behavior` is counted in, in
/// the text's first line and in JSON.
#[test]
fn behavior_shows_the_sync_period_in_force() {
    let cart = "examples/shop/cart/cart.yaml";
    let output = hpa_lint("behavior").arg(cart).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.starts_with(
            "a sync every 15s (the controller's default; set the cluster's with --sync-period)\n\n\
             HorizontalPodAutoscaler shop/cart"
        ),
        "{text}"
    );
    let output = hpa_lint("behavior")
        .args([cart, "--sync-period", "30s"])
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.starts_with("a sync every 30s (--sync-period)\n"),
        "{text}"
    );
    assert_eq!(json(hpa_lint("behavior").arg(cart))["syncPeriod"], 15);
    assert_eq!(
        json(hpa_lint("behavior").args([cart, "--sync-period", "1m30s"]))["syncPeriod"],
        90
    );
}

/// Issue 16: with `selectPolicy: Min` of Percent 10 and Pods 4 a minute,
/// Percent 10 allows fewer pods up to 30 replicas, both the same from 31 to
/// 40 (`ceil(1.1 × n)` is `n + 4`), and Pods 4 fewer above: each stretch of
/// the path names the policy whose limit the controller applied (C7.3). The
/// last step, onto maxReplicas, is within both.
#[test]
fn behavior_names_the_policy_that_limits_each_stretch() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "min.yaml",
        &hpa(
            "careful",
            "  minReplicas: 10\n  maxReplicas: 60\n  behavior:\n    scaleUp:\n      selectPolicy: Min\n      \
             policies:\n      - {type: Percent, value: 10, periodSeconds: 60}\n      \
             - {type: Pods, value: 4, periodSeconds: 60}\n",
        ),
    );
    let output = hpa_lint("behavior").arg(&path).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.contains(
            "  fastest scale-up (10 → 60): 10 → 11 → 13 → 15 → 17 → 19 → … → 53 → 57 → 60 in 16m15s; \
             limited by Percent 10 per 60s (10 → 33), \
             then Percent 10 per 60s and Pods 4 per 60s (33 → 41), \
             then Pods 4 per 60s (41 → 57)\n"
        ),
        "{text}"
    );
    let document = json(hpa_lint("behavior").arg(&path));
    let steps = document["hpas"][0]["scaleUp"]["steps"].as_array().unwrap();
    let limiter = |replicas: i64| {
        steps
            .iter()
            .find(|s| s["replicas"] == replicas)
            .map(|s| s["limitedBy"].clone())
            .unwrap()
    };
    assert_eq!(limiter(11), serde_json::json!(["Percent 10 per 60s"]));
    assert_eq!(limiter(33), serde_json::json!(["Percent 10 per 60s"]));
    assert_eq!(
        limiter(37),
        serde_json::json!(["Percent 10 per 60s", "Pods 4 per 60s"])
    );
    assert_eq!(limiter(45), serde_json::json!(["Pods 4 per 60s"]));
    assert_eq!(limiter(60), Value::Null);
}

/// Issue 16: `--output yaml` is not a file to write back, and says so; the
/// command it points to writes the behavior into the file, comments kept.
#[test]
fn behavior_output_yaml_says_what_it_prints_and_how_to_write_back() {
    let help = hpa_lint("behavior").arg("--help").output().unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(
        help.contains("hpa-lint --fix --unsafe-fixes --select implicit-behavior"),
        "{help}"
    );
    let dir = tempfile::tempdir().unwrap();
    let source = format!(
        "# the web tier\n{}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: other}}\n",
        hpa("web", "  maxReplicas: 4 # four at most\n")
    );
    let path = write(dir.path(), "web.yaml", &source);
    let output = hpa_lint("behavior")
        .args([&path, "--output", "yaml"])
        .output()
        .unwrap();
    let yaml = String::from_utf8(output.stdout).unwrap();
    assert!(
        yaml.starts_with(
            "# Each HPA as the admission webhook's mutation leaves it: its effective behavior\n\
             # written out. Comments, flow style and the files' other documents are not kept;\n\
             # to write the behavior into the files: hpa-lint --fix --unsafe-fixes --select implicit-behavior\n\
             # (an HPA without `behavior` runs the controller's legacy path until it is written)\n\
             ---\n"
        ),
        "{yaml}"
    );
    assert!(yaml.contains(&format!("---\n# from {path}\n")), "{yaml}");
    assert!(!yaml.contains("ConfigMap"), "{yaml}");
    // What it points to writes into the file and keeps the rest.
    Command::cargo_bin("hpa-lint")
        .unwrap()
        .args([
            "--isolated",
            "--fix",
            "--unsafe-fixes",
            "--select",
            "implicit-behavior",
            &path,
        ])
        .assert()
        .success();
    let fixed = std::fs::read_to_string(&path).unwrap();
    for kept in [
        "# the web tier\n",
        "maxReplicas: 4 # four at most\n",
        "kind: ConfigMap",
    ] {
        assert!(fixed.contains(kept), "{fixed}");
    }
    assert!(fixed.contains("scaleDown:"), "{fixed}");
    assert!(fixed.contains("selectPolicy: Max"), "{fixed}");
}

/// Issue 16: a trace of one row runs one sync: said in the singular, the
/// chart's axis has one label, and `--until` is named.
#[test]
fn a_one_row_trace_says_one_sync_and_names_until() {
    let dir = tempfile::tempdir().unwrap();
    let trace = write(dir.path(), "one.csv", "time,replicas\n0,5\n");
    let output = hpa_lint("simulate")
        .args(["examples/shop/cart/cart.yaml", "--trace", &trace])
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.starts_with(
            "HorizontalPodAutoscaler shop/cart: 3 to 9 replicas, a sync every 15s, 1 sync at 0s\n"
        ),
        "{text}"
    );
    assert!(!text.contains("0s0s"), "{text}");
    assert!(
        text.ends_with(
            "     0 └─\n      0s\n\n\
             this is one sync, at 0s; --until simulates longer (e.g. --until 30m)\n"
        ),
        "{text}"
    );
    // Two syncs: both labels, apart.
    let trace = write(dir.path(), "two.csv", "time,replicas\n0,5\n15,5\n");
    let output = hpa_lint("simulate")
        .args(["examples/shop/cart/cart.yaml", "--trace", &trace])
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains(", 2 syncs from 0s to 15s\n"), "{text}");
    assert!(text.ends_with("     0 └──\n      0s 15s\n"), "{text}");
    // A last row between syncs: the run goes on to the sync that sees it.
    let trace = write(dir.path(), "off.csv", "time,replicas\n0,5\n10,9\n");
    let document =
        json(hpa_lint("simulate").args(["examples/shop/cart/cart.yaml", "--trace", &trace]));
    let steps = document["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[1]["time"], 15);
    assert_eq!(steps[1]["recommendation"], 9);
}

/// A version the release no longer serves is rejected by its API server,
/// and a target without `/scale` is one the controller never scales:
/// neither gets a path or a simulation.
#[test]
fn behavior_and_simulate_refuse_unserved_versions_and_unscalable_targets() {
    let dir = tempfile::tempdir().unwrap();
    let beta = hpa("beta", "  maxReplicas: 4\n").replace("autoscaling/v2", "autoscaling/v2beta2");
    let beta = write(dir.path(), "beta.yaml", &beta);
    let daemons =
        hpa("daemons", "  maxReplicas: 4\n").replace("kind: Deployment", "kind: DaemonSet");
    let daemons = write(dir.path(), "daemons.yaml", &daemons);
    let unserved = "HorizontalPodAutoscaler shop/beta: refused, the API server would reject it \
                    (no controller runs it):\n  apiVersion: `autoscaling/v2beta2` is not served \
                    since Kubernetes 1.26: a 1.36 API server rejects the HPA";
    let unscalable = "HorizontalPodAutoscaler shop/daemons: refused, the controller cannot scale \
                      its target (every sync fails with FailedGetScale):\n  \
                      spec.scaleTargetRef.kind: DaemonSet has no `/scale` subresource";
    for (file, error) in [(&beta, unserved), (&daemons, unscalable)] {
        hpa_lint("behavior")
            .arg(file)
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(error));
        hpa_lint("simulate")
            .args([file, "--load", "step", "--requests", "cpu=200m"])
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(error));
    }
    // Where the release still serves it, the beta HPA runs.
    hpa_lint("behavior")
        .args([&beta, "--kube-version", "1.25"])
        .assert()
        .success();
}

/// The lines of `behavior`'s step table: its header, then its rows.
fn step_table(text: &str) -> Vec<&str> {
    text.lines()
        .skip_while(|line| !line.contains("largest step per period"))
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .collect()
}

/// The step table's columns line up however long a cell is (a cell that
/// names two policies once pushed its row's scale-down out of line).
#[test]
fn the_step_table_keeps_its_columns() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "hpa.yaml",
        &hpa(
            "web",
            "  minReplicas: 2\n  maxReplicas: 40\n  behavior: {}\n",
        ),
    );
    let output = hpa_lint("behavior").arg(&file).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    let table = step_table(&text);
    assert!(table.len() > 2, "{text}");
    assert!(
        table
            .iter()
            .any(|row| row.contains("Pods 4 per 15s, Percent 100 per 15s")),
        "{text}"
    );
    let column = table[0].find("scale-down").unwrap();
    for row in &table[1..] {
        assert_eq!(row.find("to 2 (minReplicas"), Some(column), "{text}");
    }
}

/// A policy whose limit overflows Go's int32 is no step: the controller
/// keeps the count (C7.3), and the table says so rather than showing the
/// wrapped, negative count.
#[test]
fn the_step_table_shows_an_overflowing_policy_as_no_step() {
    let dir = tempfile::tempdir().unwrap();
    let behavior = "  maxReplicas: 200\n  behavior:\n    scaleUp:\n      selectPolicy: Min\n      policies:\n      - {type: Pods, value: 2147483647, periodSeconds: 15}\n      - {type: Percent, value: 2147483647, periodSeconds: 15}\n";
    let file = write(dir.path(), "hpa.yaml", &hpa("web", behavior));
    let output = hpa_lint("behavior").arg(&file).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    let table = step_table(&text);
    assert!(table.len() > 1, "{text}");
    assert!(!text.contains("to -"), "{text}");
    assert!(
        table
            .iter()
            .any(|row| row.contains("to 1 (no step: Pods 2147483647 per 15s overflows int32)")),
        "{text}"
    );
}

/// A repeated key stops kubectl before the API server: the HPA is refused,
/// not run with the last value.
#[test]
fn an_hpa_with_a_repeated_key_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "hpa.yaml",
        &hpa("web", "  maxReplicas: 10\n  maxReplicas: 3\n"),
    );
    let load: &[&str] = &["--load", "step", "--requests", "cpu=200m"];
    for (command, extra) in [("behavior", &[][..]), ("simulate", load)] {
        hpa_lint(command)
            .arg(&file)
            .args(extra)
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(
                "refused, the API server would reject it",
            ))
            .stderr(predicate::str::contains(
                "spec.maxReplicas: mapping key \"maxReplicas\" already defined",
            ));
    }
}

/// Two HPAs of one name: `--hpa` cannot pick one, and the error says what
/// to do instead rather than to pick one with `--hpa`.
#[test]
fn two_hpas_of_one_name_are_no_dead_end() {
    let dir = tempfile::tempdir().unwrap();
    let one = hpa("web", "  maxReplicas: 10\n");
    let file = write(dir.path(), "hpa.yaml", &format!("{one}---\n{one}"));
    for pick in [&[][..], &["--hpa", "shop/web"][..]] {
        hpa_lint("simulate")
            .arg(&file)
            .args(pick)
            .args(["--load", "step", "--requests", "cpu=200m"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "2 HorizontalPodAutoscalers in the input are shop/web: give only the file of the one to use",
            ));
    }
}

/// A standard load on an HPA whose metrics every sync fails says why: a
/// metric the controller cannot evaluate, or pods that request 0 of the
/// resource it divides by.
#[test]
fn a_load_says_why_every_sync_fails() {
    let dir = tempfile::tempdir().unwrap();
    let out_of_range = hpa(
        "queue",
        "  maxReplicas: 10\n  metrics:\n    - type: Object\n      object:\n        \
         metric: {name: queue}\n        describedObject: {apiVersion: v1, kind: Service, name: q}\n        \
         target: {type: AverageValue, averageValue: 10E}\n",
    );
    let zero = format!(
        "{}---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: shop}}\n\
         spec:\n  template:\n    spec:\n      containers: [{{name: app, image: web, resources: {{requests: {{cpu: \"0\"}}}}}}]\n",
        hpa("web", "  maxReplicas: 10\n")
    );
    for (text, why) in [
        (
            out_of_range,
            "the controller cannot evaluate the queue metric (average value target out of range): every sync fails the metric",
        ),
        (
            zero,
            "the pods request 0 cpu, so the controller cannot compute its utilization (no metrics returned matched known pods): every sync fails the metric",
        ),
    ] {
        let path = write(dir.path(), "hpa.yaml", &text);
        hpa_lint("simulate")
            .args([&path, "--load", "step"])
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(why));
    }
}

/// A container that requests nothing gets its namespace's LimitRange default
/// (`defaultRequest`, else `default`, `max`, `min`), as lint reads it: the
/// run is the one with the request written out.
#[test]
fn limit_range_defaults_are_the_requests_of_containers_without() {
    let dir = tempfile::tempdir().unwrap();
    let deployment = |resources: &str| {
        format!(
            "{}---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: shop}}\n\
             spec:\n  template:\n    spec:\n      containers: [{{name: app, image: web{resources}}}]\n",
            hpa(
                "web",
                "  maxReplicas: 10\n  metrics:\n    - type: Resource\n      resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}\n"
            )
        )
    };
    let run = |text: String| {
        let path = write(dir.path(), "hpa.yaml", &text);
        json(hpa_lint("simulate").args([&path, "--load", "step"]))["steps"].clone()
    };
    let written = run(deployment(", resources: {requests: {cpu: 200m}}"));
    for item in [
        "defaultRequest: {cpu: 200m}",
        "max: {cpu: 200m}",
        "min: {cpu: 200m}, default: {memory: 1Gi}",
    ] {
        let range = format!(
            "---\napiVersion: v1\nkind: LimitRange\nmetadata: {{name: defaults, namespace: shop}}\n\
             spec:\n  limits: [{{type: Container, {item}}}]\n"
        );
        assert_eq!(run(deployment("") + &range), written, "{item}");
    }
    // At the pod level the controller adds up what the admitted containers
    // request: a plain init container's default counts (max(100m, 500m)).
    let pod_level = |init: &str| {
        deployment(", resources: {requests: {cpu: 100m}}").replace(
            "    spec:\n      containers:",
            &format!("    spec:\n      resources: {{requests: {{memory: 1Gi}}}}\n      initContainers: [{{name: init, image: init{init}}}]\n      containers:"),
        )
    };
    let range = "---\napiVersion: v1\nkind: LimitRange\nmetadata: {name: defaults, namespace: shop}\n\
                 spec:\n  limits: [{type: Container, defaultRequest: {cpu: 500m}}]\n";
    let written = run(pod_level(", resources: {requests: {cpu: 500m}}"));
    assert_ne!(written, run(pod_level("")), "without the LimitRange: 100m");
    assert_eq!(run(pod_level("") + range), written);
}

/// A `ContainerResource` metric on a sidecar injected at admission (here
/// Istio's, which the namespace may turn on): lint does not call it missing,
/// and `simulate` asks for its request, which the input cannot show.
#[test]
fn an_injected_sidecar_needs_its_request_given() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "{}---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: shop}}\n\
         spec:\n  template:\n    spec:\n      containers: [{{name: app, image: web, resources: {{requests: {{cpu: 100m}}}}}}]\n",
        hpa(
            "web",
            "  maxReplicas: 10\n  metrics:\n    - type: ContainerResource\n      containerResource: {name: cpu, container: istio-proxy, target: {type: Utilization, averageUtilization: 50}}\n"
        )
    );
    let path = write(dir.path(), "hpa.yaml", &text);
    Command::cargo_bin("hpa-lint")
        .unwrap()
        .args(["--isolated", &path])
        .assert()
        .success();
    hpa_lint("simulate")
        .args([&path, "--load", "step"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "container `istio-proxy` is not in the pod template of the target: Istio injects it at admission, with a request the input does not show: give it with --requests cpu=…",
        ));
    let given =
        json(hpa_lint("simulate").args([&path, "--load", "step", "--requests", "cpu=100m"]));
    assert!(!changes(&given).is_empty(), "it scales");
    // A container the pods do not have fails the metric, whatever the requests.
    let absent = write(
        dir.path(),
        "absent.yaml",
        &text.replace("istio-proxy", "appp"),
    );
    hpa_lint("simulate")
        .args([&absent, "--load", "step", "--requests", "cpu=100m"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "the controller cannot compute the cpu utilization (container appp not found in Pod of the target): every sync fails the metric",
        ));
}
