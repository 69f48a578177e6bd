//! End-to-end tests of the old `autoscaling` versions: `v2beta2` and `v2beta1`
//! are decoded, converted, defaulted and validated as the API server did at
//! the releases that served them, their saved status is read as converted,
//! and the `v2beta1` habit inside a newer version is one finding with a fix.

mod common;

use common::*;
use serde_json::Value;

/// An HPA the API server rejects three ways, in any version that has `behavior`.
const REJECTED: &str = "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 5
  maxReplicas: 3
  behavior:
    scaleUp:
      policies: [{type: Pods, value: 0, periodSeconds: 15}]
";

fn lint(text: &str, kube_version: &str, args: &[&str]) -> (i32, Value) {
    let output = hpa_lint()
        .args(["--format", "json", "--kube-version", kube_version])
        .args(args)
        .arg("-")
        .write_stdin(text.to_owned())
        .output()
        .unwrap();
    let report = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)));
    (output.status.code().unwrap(), report)
}

/// `rule field line:column message` of each finding with an API-server
/// reason, and of `deprecated-api-version`.
fn server_findings(report: &Value) -> Vec<String> {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| !d["reason"].is_null() || d["rule"] == "deprecated-api-version")
        .map(|d| {
            format!(
                "{} {} {}:{} {}",
                d["rule"].as_str().unwrap(),
                d["field"].as_str().unwrap(),
                d["line"],
                d["column"],
                d["message"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn served_v2beta2_is_validated_like_v2() {
    let beta = REJECTED.replace("autoscaling/v2", "autoscaling/v2beta2");
    let (code, v2) = lint(REJECTED, "1.25", &[]);
    assert_eq!(code, 1);
    let (code, served) = lint(&beta, "1.25", &[]);
    assert_eq!(code, 1);
    let expected = [
        "invalid-replicas spec.maxReplicas 7:3 Invalid value: 3: must be greater than or equal to `minReplicas`",
        "invalid-scaling-policy spec.behavior.scaleUp.policies[0].value 10:31 Invalid value: 0: must be greater than zero",
    ];
    assert_eq!(server_findings(&v2), expected);
    let mut with_warning = vec![
        "deprecated-api-version apiVersion 1:1 `autoscaling/v2beta2` is deprecated since Kubernetes 1.23 and not served from 1.26".to_owned(),
    ];
    with_warning.extend(expected.map(str::to_owned));
    assert_eq!(server_findings(&served), with_warning);
    // From 1.26 the server rejects the version whole, before validating.
    let (code, removed) = lint(&beta, "1.26", &[]);
    assert_eq!(code, 1);
    assert_eq!(
        server_findings(&removed),
        [
            "deprecated-api-version apiVersion 1:1 `autoscaling/v2beta2` is not served since Kubernetes 1.26: a 1.26 API server rejects the HPA"
        ]
    );
}

/// `v2beta1` through 1.24: findings carry the server's (internal, `v2`)
/// field paths and point at the field as written.
#[test]
fn served_v2beta1_is_validated_with_the_servers_paths_at_the_written_fields() {
    let hpa = "apiVersion: autoscaling/v2beta1
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 3
  metrics:
  - type: Resource
    resource: {name: cpu, targetAverageUtilization: 0}
  - type: Pods
    pods: {metricName: \"\", targetAverageValue: 10}
  - type: Object
    object: {target: {kind: Service, name: s}, metricName: rps, averageValue: 10}
";
    let (code, report) = lint(hpa, "1.24", &[]);
    assert_eq!(code, 1);
    assert_eq!(
        server_findings(&report),
        [
            "deprecated-api-version apiVersion 1:1 `autoscaling/v2beta1` is deprecated since Kubernetes 1.22 and not served from 1.25",
            "invalid-metric-target spec.metrics[0].resource.target.averageUtilization 9:27 Invalid value: 0: must be greater than 0",
            "invalid-metric-name spec.metrics[1].pods.metric.name 11:12 Required value: must specify a metric name",
            // The server converted a missing `targetValue` to 0, and rejected it.
            "invalid-metric-target spec.metrics[2].object.target.value 13:5 Invalid value: \"0\": must be positive",
        ]
    );
    let (_, removed) = lint(hpa, "1.25", &[]);
    assert_eq!(
        server_findings(&removed),
        [
            "deprecated-api-version apiVersion 1:1 `autoscaling/v2beta1` is not served since Kubernetes 1.25: a 1.25 API server rejects the HPA"
        ]
    );
}

/// Unknown fields and wrong types are `BadRequest`s in the served betas too,
/// named in the beta's own fields and Go types; nothing else is validated.
#[test]
fn served_betas_decode_strictly() {
    let beta1 = "apiVersion: autoscaling/v2beta1
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 5
  maxReplicas: \"3\"
  metrics:
  - type: Resource
    resource: {name: cpu, targetAverageUtilisation: 50}
";
    let (code, report) = lint(beta1, "1.24", &[]);
    assert_eq!(code, 1);
    assert_eq!(
        server_findings(&report)[1..],
        [
            "invalid-field-type spec.maxReplicas 7:3 json: cannot unmarshal string into Go struct field HorizontalPodAutoscalerSpec.spec.maxReplicas of type int32",
            "unknown-field spec.metrics[0].resource.targetAverageUtilisation 10:27 unknown field \"spec.metrics[0].resource.targetAverageUtilisation\"",
        ]
    );
    let beta2 = REJECTED
        .replace("autoscaling/v2", "autoscaling/v2beta2")
        .replace(
            "    scaleUp:",
            "    scaleUp: {}\n    scaleDown: []\n    scaleUpp:",
        );
    let (_, report) = lint(&beta2, "1.25", &[]);
    assert_eq!(
        server_findings(&report)[1..],
        [
            "invalid-field-type spec.behavior.scaleDown 10:5 json: cannot unmarshal array into Go struct field HorizontalPodAutoscalerBehavior.spec.behavior.scaleDown of type v2beta2.HPAScalingRules",
            "unknown-field spec.behavior.scaleUpp 11:5 unknown field \"spec.behavior.scaleUpp\"",
        ]
    );
}

/// A `kubectl get hpa -o yaml` of a `v2beta1` HPA: its status
/// (`currentAverageUtilization`, `currentValue`, ...) is read as converted,
/// so the live rules see every current value.
#[test]
fn saved_v2beta1_status_is_read_by_the_live_rules() {
    let saved = "apiVersion: autoscaling/v2beta1
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 10
  metrics:
  - type: Resource
    resource: {name: cpu, targetAverageUtilization: 70}
  - type: Resource
    resource: {name: memory, targetAverageValue: 400Mi}
  - type: Pods
    pods: {metricName: rps, targetAverageValue: \"100\"}
  - type: Object
    object: {target: {kind: Service, name: main}, metricName: hits, targetValue: 2k}
  - type: External
    external: {metricName: queue, targetAverageValue: \"30\"}
  - type: External
    external: {metricName: backlog, targetValue: \"30\"}
status:
  currentReplicas: 4
  desiredReplicas: 4
  currentMetrics:
  - type: Resource
    resource: {name: cpu, currentAverageUtilization: 35, currentAverageValue: 175m}
  - type: Resource
    resource: {name: memory, currentAverageValue: 300Mi}
  - type: Pods
    pods: {metricName: rps, currentAverageValue: \"50\"}
  - type: Object
    object: {target: {kind: Service, name: main}, metricName: hits, currentValue: 1k}
  - type: External
    external: {metricName: queue, currentValue: \"60\", currentAverageValue: \"15\"}
  - type: External
    external: {metricName: backlog, currentValue: \"20\"}
  conditions:
  - {type: AbleToScale, status: \"True\", reason: ReadyForNewScale, message: recommended size matches current size}
  - {type: ScalingActive, status: \"True\", reason: ValidMetricFound, message: ok}
";
    for kube_version in ["1.24", "1.36"] {
        let (_, report) = lint(saved, kube_version, &["--select", "live"]);
        assert_eq!(rules_of(&report), Vec::<String>::new(), "at {kube_version}");
    }
    // A metric without a value is still told.
    let missing = saved.replace("currentAverageUtilization: 35, ", "");
    let (_, report) = lint(&missing, "1.24", &["--select", "live"]);
    assert_eq!(rules_of(&report), ["unknown-metric-value"]);
    assert!(
        report["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("cpu utilization is `<unknown>/70%`")
    );
}

/// `resource: {name: cpu, targetAverageUtilization: 50}` in `autoscaling/v2`:
/// one finding that names the habit, whose safe fix writes the `v2` shape.
#[test]
fn v2beta1_fields_in_v2_are_one_finding_with_a_safe_fix() {
    let hpa = "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 3
  metrics:
  - type: Resource
    resource: {name: cpu, targetAverageUtilization: 50}
";
    let (code, report) = lint(&with_target(hpa), "1.36", &[]);
    assert_eq!(code, 1);
    assert_eq!(
        server_findings(&report),
        [
            "unknown-field spec.metrics[0].resource 9:5 unknown field \"spec.metrics[0].resource.targetAverageUtilization\""
        ]
    );
    let finding = &report["diagnostics"][0];
    assert!(
        finding["help"]
            .as_str()
            .unwrap()
            .contains("`targetAverageUtilization` is an `autoscaling/v2beta1` field: in `autoscaling/v2` this metric is `resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}`"),
        "{finding}"
    );
    assert_eq!(finding["fix"]["applicability"], "safe");

    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "hpa.yaml", with_target(hpa));
    hpa_lint().arg("--fix").arg(dir.path()).assert().code(0);
    let fixed = std::fs::read_to_string(dir.path().join("hpa.yaml")).unwrap();
    assert!(
        fixed.contains(
            "    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}\n"
        ),
        "{fixed}"
    );
}

/// The real-world corpus at the last release that served each beta: what
/// the API server rejected in the beta HPAs of public projects (placeholder
/// values in kubernetes/api's round-trip data, and a `v2beta1` metric in a
/// `v2beta2` HPA in Argo Rollouts' test data).
#[test]
fn real_world_betas_where_they_were_served() {
    let mut found = String::new();
    for kube_version in ["1.24", "1.25"] {
        let output = hpa_lint()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["--format", "json", "--kube-version", kube_version])
            .arg("tests/corpus/realworld")
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        found.push_str(&format!("# {kube_version}\n"));
        for d in report["diagnostics"].as_array().unwrap() {
            let version = d["object"]["apiVersion"].as_str().unwrap_or_default();
            if version.starts_with("autoscaling/v2beta") && !d["reason"].is_null() {
                found.push_str(&format!(
                    "{}:{} {} {}: {}\n",
                    d["file"]
                        .as_str()
                        .unwrap()
                        .trim_start_matches("tests/corpus/realworld/"),
                    d["line"],
                    d["rule"].as_str().unwrap(),
                    d["field"].as_str().unwrap(),
                    d["message"].as_str().unwrap()
                ));
            }
        }
    }
    insta::assert_snapshot!("realworld_betas", found);
}
