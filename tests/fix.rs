//! End-to-end tests of `--fix`, `--unsafe-fixes` and `--diff`: each rule's
//! fix on a file, every byte outside the edits kept (comments, CRLF, flow
//! style, JSON, document markers), fixing twice the same as once, and what is
//! never written.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

mod common;

use common::*;

/// Two safe fixes in an HPA (the second is found once the first is made)
/// and an unsafe one in its Deployment, between comments.
const MULTI: &str = "# Shop: the web tier.
---
# The HPA, written for 1.22.
apiVersion: autoscaling/v2beta2 # old
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: web
  minReplicas: 2
  maxReplicas: \"10\"   # quoted by a template once
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3 # set before the HPA existed
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: nginx, resources: {requests: {cpu: 100m}}}
";

/// Runs hpa-lint in `dir`.
fn run(dir: &Path, args: &[&str], stdin: &str) -> Output {
    hpa_lint()
        .current_dir(dir)
        .args(args)
        .write_stdin(stdin)
        .output()
        .unwrap()
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

/// `files` in a new directory, fixed with `args`: their text afterwards and
/// the JSON report. A second run finds nothing more to fix.
fn fixed(files: &[(&str, &str)], args: &[&str]) -> (Vec<String>, Value) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        write(dir.path(), name, text);
    }
    let args = [args, &["--fix", "--format", "json", "."]].concat();
    let output = run(dir.path(), &args, "");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let texts = || -> Vec<String> {
        files
            .iter()
            .map(|(name, _)| read(dir.path(), name))
            .collect()
    };
    let fixed = texts();
    let again = run(dir.path(), &args, "");
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(again["summary"]["fixed"], 0, "{again:#}");
    assert_eq!(texts(), fixed);
    (fixed, report)
}

#[test]
fn safe_fixes_change_only_their_spans_of_a_multi_document_file() {
    let (texts, report) = fixed(&[("shop.yaml", MULTI)], &[]);
    // The version is converted, then (a second pass: the server validates
    // only served versions) the quoted number is unquoted.
    let expected = MULTI
        .replace("v2beta2 # old", "v2 # old")
        .replace("\"10\"   #", "10   #");
    assert_eq!(texts[0], expected);
    assert_eq!(report["summary"]["fixed"], 2);
    // The unsafe fix is left, and said to be fixable with `--unsafe-fixes`.
    assert_eq!(rules_of(&report), ["target-replicas-conflict"]);
    assert_eq!(report["diagnostics"][0]["fix"]["applicability"], "unsafe");

    let (texts, _) = fixed(&[("shop.yaml", MULTI)], &["--unsafe-fixes"]);
    assert_eq!(
        texts[0],
        expected.replace("  replicas: 3 # set before the HPA existed\n", "")
    );
}

#[test]
fn v2beta1_metrics_are_converted_in_crlf() {
    let text = "apiVersion: autoscaling/v2beta1\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: api\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}\n  maxReplicas: 4\n  metrics:\n  - type: Resource\n    resource:\n      name: cpu\n      targetAverageUtilization: 70\n  - type: Pods\n    pods:\n      metricName: rps\n      targetAverageValue: 100\n";
    let (texts, report) = fixed(&[("api.yaml", &text.replace('\n', "\r\n"))], &[]);
    let expected = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: api\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}\n  maxReplicas: 4\n  metrics:\n  - type: Resource\n    resource:\n      name: cpu\n      target:\n        type: Utilization\n        averageUtilization: 70\n  - type: Pods\n    pods:\n      metric:\n        name: rps\n      target:\n        type: AverageValue\n        averageValue: 100\n";
    assert_eq!(texts[0], expected.replace('\n', "\r\n"));
    assert_eq!(rules_of(&report), ["target-not-found"]);
}

#[test]
fn flow_style_and_json_documents_are_edited_in_place() {
    let flow = "{apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, metadata: {name: flow}, spec: {scaleTargetRef: {apiVersion: extensions/v1beta1, kind: deployment, name: web}, minReplica: 2, maxReplicas: 5}}\n";
    let json = "{\n  \"apiVersion\": \"autoscaling/v2\",\n  \"kind\": \"HorizontalPodAutoscaler\",\n  \"metadata\": {\"name\": \"json\"},\n  \"spec\": {\n    \"scaleTargetRef\": {\"apiVersion\": \"apps/v1\", \"kind\": \"Deployment\", \"name\": \"web\"},\n    \"maxReplicas\": \"6\"\n  }\n}\n";
    let files = [
        ("flow.yaml", flow),
        ("hpa.json", json),
        ("web.yaml", TARGET),
    ];
    let (texts, report) = fixed(&files, &[]);
    let scalable = flow.replace(
        "apiVersion: extensions/v1beta1, kind: deployment",
        "apiVersion: apps/v1, kind: Deployment",
    );
    assert_eq!(texts[0], scalable);
    assert_eq!(texts[1], json.replace("\"6\"", "6"));
    assert!(rules_of(&report).contains(&"unknown-field".to_owned()));

    let (texts, report) = fixed(&files, &["--unsafe-fixes"]);
    assert_eq!(
        texts[0],
        scalable.replace("minReplica: 2", "minReplicas: 2")
    );
    assert!(!rules_of(&report).contains(&"unknown-field".to_owned()));
}

/// What the admission webhook's `/mutate` injects, written into the manifest.
#[test]
fn implicit_behavior_is_written_out_when_selected() {
    let hpa = "# web\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  maxReplicas: 5\n  behavior:\n    scaleDown:\n      stabilizationWindowSeconds: 600   # ten minutes\n";
    let (texts, report) = fixed(&[("hpa.yaml", hpa)], &["--select", "implicit-behavior"]);
    let written = "      selectPolicy: Max\n      policies:\n      - type: Percent\n        value: 100\n        periodSeconds: 15\n    scaleUp:\n      stabilizationWindowSeconds: 0\n      selectPolicy: Max\n      policies:\n      - type: Pods\n        value: 4\n        periodSeconds: 15\n      - type: Percent\n        value: 100\n        periodSeconds: 15\n";
    assert_eq!(texts[0], format!("{hpa}{written}"));
    assert_eq!(report["summary"]["fixed"], 1);
}

#[cfg(unix)]
#[test]
fn an_unsafe_fix_changes_the_target_in_its_own_file() {
    use std::os::unix::fs::{PermissionsExt, symlink};

    let dir = tempfile::tempdir().unwrap();
    let hpa = HPA_MAX_ZERO.replace("maxReplicas: 1", "maxReplicas: 5");
    write(dir.path(), "hpa.yaml", &hpa);
    let deployment = TARGET.replace("spec:\n  selector", "spec:\n  replicas: 2\n  selector");
    write(dir.path(), "real/deployment.yaml", &deployment);
    let real = dir.path().join("real/deployment.yaml");
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    std::fs::create_dir(dir.path().join("apps")).unwrap();
    symlink(&real, dir.path().join("apps/deployment.yaml")).unwrap();

    let output = run(
        dir.path(),
        &[
            "--fix",
            "--unsafe-fixes",
            "hpa.yaml",
            "apps/deployment.yaml",
        ],
        "",
    );
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(read(dir.path(), "hpa.yaml"), hpa);
    assert_eq!(read(dir.path(), "real/deployment.yaml"), TARGET);
    // The link stays a link, and the file keeps its permissions.
    let link = dir.path().join("apps/deployment.yaml");
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    let mode = std::fs::metadata(&real).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o640);
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.contains("Fixed 1 finding."), "{stdout}");
}

#[test]
fn diff_prints_the_changes_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "shop.yaml", MULTI);
    let output = run(dir.path(), &["--diff", "shop.yaml"], "");
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(read(dir.path(), "shop.yaml"), MULTI);
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "--- shop.yaml
+++ shop.yaml
@@ -1,7 +1,7 @@
 # Shop: the web tier.
 ---
 # The HPA, written for 1.22.
-apiVersion: autoscaling/v2beta2 # old
+apiVersion: autoscaling/v2 # old
 kind: HorizontalPodAutoscaler
 metadata:
   name: web
@@ -11,7 +11,7 @@
     kind: Deployment
     name: web
   minReplicas: 2
-  maxReplicas: \"10\"   # quoted by a template once
+  maxReplicas: 10   # quoted by a template once
 ---
 apiVersion: apps/v1
 kind: Deployment
"
    );
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        "Would fix 2 findings in 1 file.\n"
    );
    // Nothing to fix: no diff, exit code 0, whatever the findings.
    write(dir.path(), "bad.yaml", HPA_MAX_ZERO);
    let output = run(dir.path(), &["--diff", "bad.yaml"], "");
    assert_eq!(output.status.code(), Some(0));
    assert!(output.stdout.is_empty() && output.stderr.is_empty());
}

#[test]
fn standard_input_is_fixed_onto_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let output = run(dir.path(), &["--fix", "--format", "json", "-"], MULTI);
    let fixed = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        fixed,
        MULTI.replace("v2beta2", "v2").replace("\"10\"", "10")
    );
    // The findings go to standard error.
    let report: Value = serde_json::from_slice(&output.stderr).unwrap();
    assert_eq!(rules_of(&report), ["target-replicas-conflict"]);
    assert_eq!(report["summary"]["fixed"], 2);
    assert_eq!(output.status.code(), Some(0));
    // Text without fixes comes out as it went in; the findings still count.
    let output = run(dir.path(), &["--fix", "-"], HPA_MAX_ZERO);
    assert_eq!(String::from_utf8(output.stdout).unwrap(), HPA_MAX_ZERO);
    assert!(
        String::from_utf8(output.stderr)
            .unwrap()
            .contains("error[invalid-replicas]")
    );
    assert_eq!(output.status.code(), Some(1));
    let output = run(dir.path(), &["--diff", "-"], MULTI);
    assert!(
        String::from_utf8(output.stdout)
            .unwrap()
            .starts_with("--- <stdin>\n+++ <stdin>\n")
    );
}

/// Whether the tests run as root, whom file permissions do not stop.
fn is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

#[cfg(unix)]
#[test]
fn a_file_that_cannot_be_written_is_an_error_and_the_others_are_fixed() {
    use std::os::unix::fs::PermissionsExt;

    let dir = tempfile::tempdir().unwrap();
    // Other names: two Deployments `web` would be one target for both HPAs.
    let api = MULTI.replace("web", "api");
    write(dir.path(), "locked/shop.yaml", &api);
    write(dir.path(), "open/shop.yaml", MULTI);
    let locked = dir.path().join("locked");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    let binary = env!("CARGO_BIN_EXE_hpa-lint");
    // Root writes anywhere: run as root without that privilege (util-linux's setpriv).
    let mut command = if is_root() {
        let mut command = std::process::Command::new("setpriv");
        command.args(["--bounding-set=-dac_override,-dac_read_search", binary]);
        command
    } else {
        std::process::Command::new(binary)
    };
    let output = command
        .current_dir(dir.path())
        .args(["--isolated", "--fix", "--format", "json", "locked", "open"])
        .output()
        .unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    if stderr.starts_with("setpriv:") {
        eprintln!("skipped: {stderr}");
        return;
    }
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with("hpa-lint: locked/shop.yaml: cannot write the fixes: "),
        "{stderr}"
    );
    assert_eq!(read(dir.path(), "locked/shop.yaml"), api);
    assert_ne!(read(dir.path(), "open/shop.yaml"), MULTI);
    // The report is about the files as they are now.
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let files: Vec<(&str, &str)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["file"].as_str().unwrap(), d["rule"].as_str().unwrap()))
        .collect();
    assert_eq!(
        files,
        [
            ("locked/shop.yaml", "deprecated-api-version"),
            ("locked/shop.yaml", "target-replicas-conflict"),
            ("open/shop.yaml", "target-replicas-conflict"),
        ]
    );
    assert_eq!(report["summary"]["fixed"], 2);
}

#[test]
fn context_files_and_helm_templates_are_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let deployment = MULTI.split("---\n").last().unwrap();
    write(dir.path(), "base/deployment.yaml", deployment);
    let hpa = HPA_MAX_ZERO.replace("maxReplicas: 1", "maxReplicas: 5");
    write(dir.path(), "apps/hpa.yaml", &hpa);
    let template = "apiVersion: autoscaling/v2beta2\nkind: HorizontalPodAutoscaler\nmetadata: {name: {{ .Release.Name }}}\nspec:\n  maxReplicas: \"5\"\n";
    write(dir.path(), "chart/templates/hpa.yaml", template);
    let report = json_output(hpa_lint().current_dir(dir.path()).args([
        "--fix",
        "--unsafe-fixes",
        "--context",
        ".",
        "apps/hpa.yaml",
        "chart/templates/hpa.yaml",
    ]));
    assert_eq!(read(dir.path(), "base/deployment.yaml"), deployment);
    assert_eq!(read(dir.path(), "chart/templates/hpa.yaml"), template);
    assert_eq!(
        rules_of(&report),
        ["target-replicas-conflict", "helm-template"]
    );
    // A finding in a context file comes without the fix `--fix` would not make.
    assert!(report["diagnostics"][0]["fix"].is_null());
    assert_eq!(report["summary"]["fixed"], 0);
}

/// `--context` given a file reads it for lookups, as a directory's files
/// are read (and `-` reads nothing, as in a walk).
#[test]
fn a_context_file_is_read_for_lookups() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "base/deployment.yaml",
        MULTI.split("---\n").last().unwrap(),
    );
    let hpa = HPA_MAX_ZERO.replace("maxReplicas: 1", "maxReplicas: 5");
    write(dir.path(), "apps/hpa.yaml", &hpa);
    for context in ["base/deployment.yaml", "./base/deployment.yaml", "base"] {
        let report = json_output(hpa_lint().current_dir(dir.path()).args([
            "--context",
            context,
            "apps/hpa.yaml",
        ]));
        assert_eq!(rules_of(&report), ["target-replicas-conflict"], "{context}");
        assert_eq!(report["summary"]["unread"], 0, "{context}");
    }
    let report =
        json_output(
            hpa_lint()
                .current_dir(dir.path())
                .args(["--context", "-", "apps/hpa.yaml"]),
        );
    assert_eq!(rules_of(&report), ["target-not-found"]);
    assert_eq!(report["summary"]["unread"], 0);
}

#[test]
fn json_and_text_show_the_fixes() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "shop.yaml", MULTI);
    let report = json_output(hpa_lint().current_dir(dir.path()).arg("shop.yaml"));
    let fixes: Vec<&Value> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| &d["fix"])
        .collect();
    assert_eq!(
        fixes,
        [
            &serde_json::json!({"title": "convert to `autoscaling/v2`", "applicability": "safe", "edits": [
                {"start": {"line": 4, "column": 13}, "end": {"line": 4, "column": 32}, "content": "autoscaling/v2"}
            ]}),
            &serde_json::json!({"title": "remove `spec.replicas` from the workload", "applicability": "unsafe", "edits": [
                {"start": {"line": 20, "column": 1}, "end": {"line": 21, "column": 1}, "content": ""}
            ]}),
        ]
    );
    let output = run(dir.path(), &["shop.yaml"], "");
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("error[deprecated-api-version]: [*] `autoscaling/v2beta2`"));
    assert!(text.contains("= fix: convert to `autoscaling/v2`"));
    assert!(text.contains("warning[target-replicas-conflict]: Deployment"));
    assert!(text.contains("= unsafe fix: remove `spec.replicas` from the workload"));
    assert!(text.ends_with("[*] 1 fixable with `--fix` (1 more with `--unsafe-fixes`).\n"));
    let output = run(dir.path(), &["--unsafe-fixes", "shop.yaml"], "");
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("warning[target-replicas-conflict]: [*] Deployment"));
    assert!(text.ends_with("[*] 2 fixable with `--fix --unsafe-fixes`.\n"));
}

/// The files under `dir`, as paths relative to it.
fn files_under(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().unwrap().is_dir() {
            files.extend(
                files_under(&entry.path())
                    .iter()
                    .map(|f| format!("{name}/{f}")),
            );
        } else {
            files.push(name);
        }
    }
    files
}

/// `spec.metrics[0].resource` as a JSON Pointer.
fn pointer(field: &str) -> String {
    field
        .replace('[', ".")
        .replace(']', "")
        .split('.')
        .map(|segment| format!("/{segment}"))
        .collect()
}

/// The fields a rule's fix changes, for a finding on `field`; `title` names
/// a renamed key's new name.
fn touched(rule: &str, field: &str, title: &str) -> Vec<String> {
    match rule {
        "deprecated-api-version" => vec![
            "/apiVersion".into(),
            "/spec/metrics".into(),
            "/status/currentMetrics".into(),
        ],
        "target-not-scalable" => vec![
            "/spec/scaleTargetRef/apiVersion".into(),
            "/spec/scaleTargetRef/kind".into(),
        ],
        "target-replicas-conflict" | "invalid-field-type" => vec![pointer(field)],
        "unknown-field" => {
            let to = title.rsplit('`').nth(1).unwrap();
            let parent = pointer(field).rsplit_once('/').unwrap().0.to_owned();
            vec![pointer(field), format!("{parent}/{to}")]
        }
        _ => panic!("which fields does `{rule}` fix?"),
    }
}

fn without(mut value: Value, pointers: &[String]) -> Value {
    for pointer in pointers {
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        if let Some(Value::Object(map)) = value.pointer_mut(parent) {
            map.remove(key);
        }
    }
    value
}

/// `--fix --unsafe-fixes` on copies of the examples and the real-world corpus
/// changes only files with fixes, and in them only the fields the fixes are
/// about: every other value of every object reads the same, no document gets
/// a YAML problem, and no API-server finding appears. Except on the HPAs whose
/// removed version was converted: the API server rejected them whole, so
/// nothing else of them was checked; what their conversion brings to light is
/// the snapshot's.
#[test]
fn fixes_the_corpus_and_changes_nothing_else() {
    use hpa_lint_rules::source::{ALL, read_document, split_documents};

    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let mut revealed = String::new();
    for corpus in ["examples", "tests/corpus/realworld"] {
        let copy = dir.path().join(corpus);
        for file in files_under(&root.join(corpus)) {
            write(
                &copy,
                &file,
                std::fs::read(root.join(corpus).join(&file)).unwrap(),
            );
        }
        let lint = |args: &[&str]| json_output(hpa_lint().current_dir(&copy).args(args).arg("."));
        let before = lint(&["--unsafe-fixes"]);
        let after = lint(&["--fix", "--unsafe-fixes"]);
        let diagnostics = |report: &Value| report["diagnostics"].as_array().unwrap().clone();
        assert!(diagnostics(&after).iter().all(|d| d["fix"].is_null()));

        // (file, document, kind, name) → the fields its fixes change.
        let mut fixed: std::collections::BTreeMap<(String, u64, String, String), Vec<String>> =
            Default::default();
        for d in diagnostics(&before).iter().filter(|d| !d["fix"].is_null()) {
            let str = |v: &Value| v.as_str().unwrap().to_owned();
            let key = (
                str(&d["file"]),
                d["document"].as_u64().unwrap(),
                str(&d["object"]["kind"]),
                str(&d["object"]["name"]),
            );
            let fields = touched(
                &str(&d["rule"]),
                &str(&d["field"]),
                &str(&d["fix"]["title"]),
            );
            fixed.entry(key).or_default().extend(fields);
        }
        let mut changed_files = 0;
        for file in files_under(&root.join(corpus)) {
            let original = std::fs::read_to_string(root.join(corpus).join(&file)).unwrap();
            let text = std::fs::read_to_string(copy.join(&file)).unwrap();
            if !fixed.keys().any(|k| k.0 == file) {
                assert_eq!(original, text, "{file} has no fix");
                continue;
            }
            changed_files += usize::from(original != text);
            let (old, new) = (split_documents(&original), split_documents(&text));
            assert_eq!(old.len(), new.len(), "{file}");
            for (i, (old, new)) in old.iter().zip(&new).enumerate() {
                let (old, new) = (
                    read_document(old.text, &|_, _| &ALL),
                    read_document(new.text, &|_, _| &ALL),
                );
                assert!(
                    new.problems.len() <= old.problems.len(),
                    "{file}: {:?}",
                    new.problems
                );
                assert_eq!(old.values.len(), new.values.len(), "{file}");
                for ((old, _), (new, _)) in old.values.into_iter().zip(new.values) {
                    let kind = old["kind"].as_str().unwrap_or_default().to_owned();
                    let name = old["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    let key = (file.clone(), i as u64, kind, name);
                    let fields = fixed.get(&key).map_or(&[][..], Vec::as_slice);
                    assert_eq!(without(old, fields), without(new, fields), "{key:?}");
                }
            }
        }
        assert!(changed_files > 0, "{corpus}");

        // API-server findings, by object and field.
        let api_server = |report: &Value| -> Vec<(String, String, String, String)> {
            diagnostics(report)
                .iter()
                .filter(|d| !d["reason"].is_null())
                .map(|d| {
                    let str = |v: &Value| v.as_str().unwrap().to_owned();
                    (
                        str(&d["file"]),
                        str(&d["object"]["name"]),
                        str(&d["rule"]),
                        format!("{}: {}", str(&d["field"]), str(&d["message"])),
                    )
                })
                .collect()
        };
        let converted: Vec<(String, String)> = diagnostics(&before)
            .iter()
            .filter(|d| d["rule"] == "deprecated-api-version")
            .map(|d| {
                (
                    d["file"].as_str().unwrap().to_owned(),
                    d["object"]["name"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        let old = api_server(&before);
        for finding in api_server(&after) {
            if converted.contains(&(finding.0.clone(), finding.1.clone())) {
                revealed.push_str(&format!(
                    "{corpus}/{} {} {}: {}\n",
                    finding.0, finding.1, finding.2, finding.3
                ));
            } else {
                assert!(old.contains(&finding), "new: {finding:?}");
            }
        }
    }
    insta::assert_snapshot!("fix_reveals_on_converted_hpas", revealed);
}

/// What `implicit-behavior` writes into an HPA without `behavior`.
fn default_behavior() -> Value {
    serde_json::json!({
        "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15}
        ]},
        "scaleDown": {"stabilizationWindowSeconds": 300, "selectPolicy": "Max", "policies": [
            {"type": "Percent", "value": 100, "periodSeconds": 15}
        ]}
    })
}

/// The one object of a one-document text, read as kubectl reads it; the
/// test fails if the text is not readable.
fn object_of(text: &str) -> Value {
    use hpa_lint_rules::source::{ALL, read_document};
    let document = read_document(text, &|_, _| &ALL);
    assert!(
        document.problems.is_empty(),
        "{:?}\n{text}",
        document.problems
    );
    document.values.into_iter().next().unwrap().0
}

const HPA_HEAD: &str = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n";

/// Without `behavior` the controller runs its legacy path, which the written
/// defaults would replace: that fix changes what runs, so it is unsafe.
#[test]
fn writing_behavior_where_there_is_none_is_an_unsafe_fix() {
    let hpa = format!("{HPA_HEAD}  maxReplicas: 5\n");
    let (texts, report) = fixed(&[("hpa.yaml", &hpa)], &["--select", "implicit-behavior"]);
    assert_eq!(texts[0], hpa);
    assert_eq!(report["summary"]["fixed"], 0);
    let finding = &report["diagnostics"][0];
    assert_eq!(finding["fix"]["applicability"], "unsafe", "{finding}");
    assert!(
        finding["message"].as_str().unwrap().contains("legacy path"),
        "{finding}"
    );
    let (texts, report) = fixed(
        &[("hpa.yaml", &hpa)],
        &["--unsafe-fixes", "--select", "implicit-behavior"],
    );
    assert_eq!(object_of(&texts[0])["spec"]["behavior"], default_behavior());
    assert_eq!(report["summary"]["fixed"], 1);
}

#[test]
fn entries_added_to_an_empty_flow_mapping_are_separated() {
    for behavior in [
        "behavior: {}",
        "behavior: { }",
        "behavior: {\n  }",
        "behavior: {scaleUp: {}}",
        "behavior: {scaleUp: {}, scaleDown: {\n    }}",
    ] {
        let hpa = format!("{HPA_HEAD}  maxReplicas: 5\n  {behavior}\n");
        let (texts, report) = fixed(&[("hpa.yaml", &hpa)], &["--select", "implicit-behavior"]);
        assert_eq!(
            object_of(&texts[0])["spec"]["behavior"],
            default_behavior(),
            "{}",
            texts[0]
        );
        assert_eq!(report["summary"]["fixed"], 1);
        assert_eq!(rules_of(&report), Vec::<String>::new());
    }
    let hpa = format!("{HPA_HEAD}  maxReplicas: 5\n  behavior: {{scaleUp: {{}}}}\n");
    let (texts, _) = fixed(&[("hpa.yaml", &hpa)], &["--select", "implicit-behavior"]);
    assert_eq!(
        texts[0],
        hpa.replace(
            "{scaleUp: {}}",
            "{scaleUp: {stabilizationWindowSeconds: 0, selectPolicy: Max, policies: [{type: Pods, value: 4, periodSeconds: 15}, {type: Percent, value: 100, periodSeconds: 15}]}, scaleDown: {stabilizationWindowSeconds: 300, selectPolicy: Max, policies: [{type: Percent, value: 100, periodSeconds: 15}]}}"
        )
    );
    // JSON stays JSON.
    let json = "{\"apiVersion\": \"autoscaling/v2\", \"kind\": \"HorizontalPodAutoscaler\", \"metadata\": {\"name\": \"web\"},\n \"spec\": {\"scaleTargetRef\": {\"apiVersion\": \"apps/v1\", \"kind\": \"Deployment\", \"name\": \"web\"}, \"maxReplicas\": 5, \"behavior\": {}}}\n";
    let (texts, _) = fixed(&[("hpa.json", json)], &["--select", "implicit-behavior"]);
    let written: Value = serde_json::from_str(&texts[0]).unwrap();
    assert_eq!(written["spec"]["behavior"], default_behavior());
}

#[test]
fn a_number_written_as_a_block_scalar_is_replaced_from_its_header() {
    for (written, rest) in [
        ("maxReplicas: >-\n    5\n", ""),
        ("maxReplicas: >-\n    5\n", "  minReplicas: 2\n"),
        (
            "maxReplicas: |2-\n    5\n",
            "\n  # max, then min\n  minReplicas: 2\n",
        ),
        (
            "maxReplicas: !!str &max >- # five\n    5\n",
            "  minReplicas: 2\n",
        ),
        ("maxReplicas: !!str 5\n", ""),
    ] {
        let hpa = format!("{HPA_HEAD}  {written}{rest}");
        let (texts, report) = fixed(&[("hpa.yaml", &hpa)], &[]);
        let unquoted = if written.contains("&max") {
            "maxReplicas: &max 5 # five\n"
        } else {
            "maxReplicas: 5\n"
        };
        assert_eq!(texts[0], format!("{HPA_HEAD}  {unquoted}{rest}"));
        assert_eq!(report["summary"]["fixed"], 1);
        // Written after it, the behavior goes after it, not into it.
        let (texts, _) = fixed(
            &[("hpa.yaml", &hpa)],
            &["--select", "all", "--unsafe-fixes"],
        );
        let object = object_of(&texts[0]);
        assert_eq!(object["spec"]["maxReplicas"], 5, "{}", texts[0]);
        assert_eq!(
            object["spec"]["behavior"],
            default_behavior(),
            "{}",
            texts[0]
        );
    }
}

#[test]
fn complex_keys_are_removed_and_renamed_whole() {
    let deployment = TARGET.replace(
        "spec:\n  selector",
        "spec:\n  ? replicas\n  : 3\n  selector",
    );
    let hpa = format!("{HPA_HEAD}  maxReplicas: 5\n  ? minReplica\n  : 2\n");
    let files = [
        ("web.yaml", deployment.as_str()),
        ("hpa.yaml", hpa.as_str()),
    ];
    let (texts, report) = fixed(&files, &["--unsafe-fixes", "--select", "all"]);
    assert_eq!(texts[0], TARGET);
    let behavior = "  behavior:\n    scaleUp:\n      stabilizationWindowSeconds: 0\n      selectPolicy: Max\n      policies:\n      - type: Pods\n        value: 4\n        periodSeconds: 15\n      - type: Percent\n        value: 100\n        periodSeconds: 15\n    scaleDown:\n      stabilizationWindowSeconds: 300\n      selectPolicy: Max\n      policies:\n      - type: Percent\n        value: 100\n        periodSeconds: 15\n";
    assert_eq!(
        texts[1],
        format!("{HPA_HEAD}  maxReplicas: 5\n  ? minReplicas\n  : 2\n{behavior}")
    );
    assert_eq!(report["summary"]["fixed"], 3);
}

#[test]
fn a_fix_waits_while_its_mapping_holds_an_unknown_field() {
    let hpa = format!(
        "{HPA_HEAD}  maxReplicas: 5\n  behavior:\n    scaleDown:\n      stabilizationWindowSecond: 900\n"
    );
    // Safe fixes only: the defaults are not written beside the misspelt
    // window, which would shadow the author's 900 for good.
    let (texts, report) = fixed(&[("hpa.yaml", &hpa)], &["--select", "implicit-behavior"]);
    assert_eq!(texts[0], hpa);
    assert_eq!(report["summary"]["fixed"], 0);
    let finding = &report["diagnostics"][0];
    assert_eq!(finding["rule"], "implicit-behavior");
    assert!(finding["fix"].is_null());
    assert_eq!(
        finding["help"],
        "its fix waits: it would write beside `spec.behavior.scaleDown.stabilizationWindowSecond`, which the API version does not define; rename it to `stabilizationWindowSeconds` (the unsafe fix of `unknown-field`) or remove it, and the fix is offered again"
    );
    // With the rename, the rest is written around the author's window.
    let (texts, report) = fixed(
        &[("hpa.yaml", &hpa)],
        &[
            "--unsafe-fixes",
            "--select",
            "implicit-behavior,unknown-field",
        ],
    );
    let mut behavior = default_behavior();
    behavior["scaleDown"]["stabilizationWindowSeconds"] = 900.into();
    assert_eq!(object_of(&texts[0])["spec"]["behavior"], behavior);
    assert_eq!(report["summary"]["fixed"], 2);
}

#[test]
fn standard_input_that_is_not_utf8_is_written_back_as_it_came() {
    let latin1 = b"apiVersion: autoscaling/v2 # caf\xe9\nkind: HorizontalPodAutoscaler\n";
    let output = hpa_lint()
        .args(["--fix", "-"])
        .write_stdin(&latin1[..])
        .output()
        .unwrap();
    assert_eq!(output.stdout, latin1);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("hpa-lint: <stdin>: file is not valid UTF-8 (invalid byte at offset 32)")
    );
}

#[test]
fn a_fix_that_would_change_other_fields_is_not_made_and_says_so() {
    // `minReplicas` is unquoted in place, anchor and all: the alias in the
    // label would become a number too.
    let hpa = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: &min \"2\"\n  maxReplicas: 5\nmetadata: {name: web, labels: {min: *min}}\n";
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "hpa.yaml", hpa);
    let output = run(dir.path(), &["--fix", "--format", "json", "hpa.yaml"], "");
    assert_eq!(read(dir.path(), "hpa.yaml"), hpa);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["summary"]["fixed"], 0);
    let finding = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["rule"] == "invalid-field-type")
        .unwrap();
    assert!(finding["fix"].is_null());
    assert_eq!(
        finding["fixNotMade"],
        "`--fix` could not make its fix (unquote \"2\"): `metadata.labels.min`, which the fix does not write, would change"
    );
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8(run(dir.path(), &["--fix", "hpa.yaml"], "").stdout).unwrap();
    assert!(
        text.contains("= note: `--fix` could not make its fix"),
        "{text}"
    );
    assert!(!text.contains("fixable"), "{text}");
    let output = run(dir.path(), &["--diff", "hpa.yaml"], "");
    assert!(output.stdout.is_empty());
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        "hpa-lint: hpa.yaml:5:3: invalid-field-type: `--fix` could not make its fix (unquote \"2\"): `metadata.labels.min`, which the fix does not write, would change\n"
    );
}
