//! End-to-end: the binary reads YAML as kubectl does (go-yaml v2 under
//! sigs.k8s.io/yaml), where a YAML 1.2 reader would read it differently.
//! The full set of vectors is `rules/tests/kubectl_yaml.rs`.

mod common;

use common::*;
use serde_json::Value;

fn lint(text: &str, args: &[&str]) -> Value {
    json_output(hpa_lint().args(args).arg("-").write_stdin(text.to_owned()))
}

/// `(rule, line, column, message)` of each finding.
fn findings(report: &Value) -> Vec<(String, u64, u64, String)> {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["rule"].as_str().unwrap().to_owned(),
                d["line"].as_u64().unwrap(),
                d["column"].as_u64().unwrap(),
                d["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// `apiVersion: 'autoscaling/v2'#c`: go-yaml v2 reads a `#` right after a
/// quoted scalar or a flow collection as a comment; the HPA is linted.
#[test]
fn a_comment_right_after_a_quoted_value_is_a_comment() {
    let hpa = with_target(
        "apiVersion: 'autoscaling/v2'#the version\nkind: \"HorizontalPodAutoscaler\"#kind\nmetadata: {name: web}#name\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}#target\n  minReplicas: 5\n  maxReplicas: '3'#quoted\n",
    );
    let report = lint(&hpa, &[]);
    let rules: Vec<String> = findings(&report).into_iter().map(|f| f.0).collect();
    assert_eq!(rules, ["invalid-field-type"], "{report}");
    assert_eq!(report["summary"]["objects"], 2);

    // The fix unquotes the number and keeps the comment a comment.
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "hpa.yaml", &hpa);
    hpa_lint().arg("--fix").arg(dir.path()).assert().code(1);
    let fixed = std::fs::read_to_string(dir.path().join("hpa.yaml")).unwrap();
    assert!(fixed.contains("  maxReplicas: 3 #quoted\n"), "{fixed}");
    let report = json_output(hpa_lint().arg(dir.path()));
    assert_eq!(
        findings(&report)
            .into_iter()
            .map(|f| f.0)
            .collect::<Vec<_>>(),
        ["invalid-replicas"]
    );
}

/// A tab where go-yaml v2 wants a token (after `- `, at the start of a
/// line) is kubectl's `found character that cannot start any token`; after
/// `key:` it is a blank.
#[test]
fn tabs_are_read_as_kubectl_reads_them() {
    let hpa = |metrics: &str| {
        format!(
            "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name:\tweb\nspec:\n  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}\n  maxReplicas: 3\n  metrics:\n{metrics}"
        )
    };
    let fine = hpa(
        "  - type:\tResource\n    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}\n",
    );
    assert_eq!(findings(&lint(&with_target(&fine), &[])), []);
    let tabbed = hpa(
        "  -\ttype: Resource\n    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}\n",
    );
    assert_eq!(
        findings(&lint(&tabbed, &[])),
        [(
            "invalid-yaml".to_owned(),
            9,
            4,
            "a tab where kubectl's YAML reader wants a space (found character that cannot start any token)"
                .to_owned()
        )]
    );
}

/// Tags on mappings are dropped (go-yaml keeps no tag on a collection); a
/// tag holds URI characters up to a blank; anchors are `[0-9A-Za-z_-]+`.
#[test]
fn tags_and_anchors_are_read_as_kubectl_reads_them() {
    let tagged = with_target(
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: !meta {name: web}\nspec: !spec\n  scaleTargetRef: !!map {apiVersion: apps/v1, kind: Deployment, name: web}\n  maxReplicas: 3\n  metrics: [!t, {type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]\n",
    );
    // `!t,` is one tag (a `,` is a URI character): one metric, not two.
    assert_eq!(findings(&lint(&tagged, &[])), []);
    let anchored = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: &web.name web}\n";
    assert_eq!(
        findings(&lint(anchored, &[])),
        [(
            "invalid-yaml".to_owned(),
            3,
            22,
            "did not find expected alphabetic or numeric character".to_owned()
        )]
    );
}
