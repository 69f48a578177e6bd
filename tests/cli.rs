//! End-to-end tests of the `hpa-lint` binary: inputs, exit codes, formats.

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

mod common;

use common::*;

#[test]
fn exit_codes_follow_the_findings() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "clean.yaml", CLEAN);
    hpa_lint()
        .arg(dir.path())
        .assert()
        .code(0)
        .stdout(predicate::str::contains("No problems found"));
    write(dir.path(), "bad.yaml", HPA_MAX_ZERO);
    hpa_lint().arg(dir.path()).assert().code(1);
    hpa_lint()
        .arg(dir.path().join("missing.yaml"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no such file"));
    hpa_lint()
        .arg("--select")
        .arg("no-such-rule")
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown rule"));
}

#[test]
fn warnings_fail_only_with_deny_warnings() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "pinned.yaml",
        HPA_MAX_ZERO.replace("maxReplicas: 1", "maxReplicas: 2"),
    );
    let select = ["--select", "min-equals-max"];
    hpa_lint()
        .args(select)
        .arg(dir.path())
        .assert()
        .code(0)
        .stdout(predicate::str::contains("min-equals-max"));
    hpa_lint()
        .args(select)
        .arg("--deny-warnings")
        .arg(dir.path())
        .assert()
        .code(1);
}

#[test]
fn reads_standard_input() {
    let report = json_output(hpa_lint().arg("-").write_stdin(with_target(HPA_MAX_ZERO)));
    assert_eq!(report["diagnostics"][0]["file"], "<stdin>");
    assert_eq!(report["diagnostics"][0]["field"], "spec.maxReplicas");
    assert_eq!(report["diagnostics"][0]["line"], 7);
}

#[test]
fn json_has_the_documented_shape() {
    let report = json_output(
        hpa_lint()
            .arg("-")
            .write_stdin(format!("{CLEAN}---\n{}", with_target(HPA_MAX_ZERO))),
    );
    let keys = |v: &Value| {
        let mut keys: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        keys
    };
    assert_eq!(keys(&report), ["diagnostics", "summary"]);
    assert_eq!(
        keys(&report["summary"]),
        [
            "documents",
            "errors",
            "files",
            "objects",
            "unread",
            "warnings"
        ]
    );
    assert_eq!(report["summary"]["documents"], 3);
    assert_eq!(report["summary"]["objects"], 3);
    let diagnostic = &report["diagnostics"][0];
    let mut expected = [
        "column",
        "document",
        "field",
        "file",
        "fix",
        "fixNotMade",
        "help",
        "line",
        "message",
        "object",
        "reason",
        "rule",
        "severity",
    ];
    expected.sort_unstable();
    assert_eq!(keys(diagnostic), expected);
    assert_eq!(diagnostic["document"], 1);
    assert_eq!(diagnostic["reason"], "Invalid");
    assert_eq!(
        diagnostic["object"],
        serde_json::json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "namespace": "default", "name": "web"})
    );
}

#[test]
fn a_broken_document_does_not_hide_the_others() {
    let text = format!(
        "{HPA_MAX_ZERO}---\nspec: [unclosed\n---\n{}",
        with_target(HPA_MAX_ZERO)
    );
    let report = json_output(hpa_lint().arg("-").write_stdin(text));
    let rules = rules_of(&report);
    assert_eq!(
        rules,
        ["invalid-replicas", "invalid-yaml", "invalid-replicas"]
    );
    let broken = &report["diagnostics"][1];
    assert_eq!(
        (broken["line"].as_u64(), broken["column"].as_u64()),
        (Some(9), Some(7))
    );
}

/// kubectl reads a file that starts with `{` with a JSON decoder, one
/// object after another: each is linted, at its own line.
#[test]
fn every_object_of_a_json_stream_is_linted() {
    let hpa = |name: &str, max: u32| {
        format!(
            r#"{{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{{"name":"{name}"}},"spec":{{"scaleTargetRef":{{"apiVersion":"apps/v1","kind":"Deployment","name":"{name}"}},"maxReplicas":{max}}}}}"#
        )
    };
    let text = format!("{}\n\n{}\n", hpa("ok", 3), hpa("zero", 0));
    let report = json_output(
        hpa_lint()
            .args(["--ignore", "target-not-found", "-"])
            .write_stdin(text),
    );
    assert_eq!(report["summary"]["documents"], 2, "{report}");
    let replicas = &report["diagnostics"][0];
    assert_eq!(replicas["rule"], "invalid-replicas", "{report}");
    assert_eq!(
        (replicas["document"].as_u64(), replicas["line"].as_u64()),
        (Some(1), Some(3))
    );
}

#[test]
fn unreadable_files_are_errors_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a-binary.yaml", b"\x00\x01\x02apiVersion");
    write(dir.path(), "b-latin1.yaml", b"metadata: {name: caf\xe9}\n");
    write(dir.path(), "c-utf16.yaml", b"\xff\xfea\x00");
    write(dir.path(), "d-bad.yaml", HPA_MAX_ZERO);
    hpa_lint()
        .arg(dir.path())
        .assert()
        .code(2)
        .stdout(predicate::str::contains("invalid-replicas"))
        .stderr(
            predicate::str::contains("a-binary.yaml: binary file")
                .and(predicate::str::contains(
                    "b-latin1.yaml: file is not valid UTF-8",
                ))
                .and(predicate::str::contains("c-utf16.yaml: file is UTF-16")),
        );
}

#[test]
fn hostile_yaml_ends_with_a_clear_error() {
    // A billion laughs inside an HPA, which is always parsed in full.
    let mut bomb = String::from(
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: lol\n  labels:\n    a: &a [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]\n",
    );
    for (prev, next) in ('a'..='h').zip('b'..='i') {
        bomb.push_str(&format!("    {next}: &{next} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
    }
    let deep = format!(
        "apiVersion: v1\nkind: List\nitems: {}{}\n",
        "[".repeat(5000),
        "]".repeat(5000)
    );
    for text in [bomb, deep] {
        let report = json_output(hpa_lint().arg("-").write_stdin(text));
        assert_eq!(rules_of(&report), ["invalid-yaml"]);
    }
}

#[test]
fn reports_duplicate_keys_and_still_lints_the_document() {
    let text = with_target(
        &HPA_MAX_ZERO.replace("  minReplicas: 2\n", "  minReplicas: 2\n  minReplicas: 3\n"),
    );
    let report = json_output(hpa_lint().arg("-").write_stdin(text));
    assert_eq!(rules_of(&report), ["duplicate-key", "invalid-replicas"]);
    assert_eq!(
        report["diagnostics"][0]["message"],
        "mapping key \"minReplicas\" already defined"
    );
}

#[test]
fn skips_helm_templates_with_a_note() {
    let template = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nspec:\n  maxReplicas: {{ .Values.max }}\n";
    let report = json_output(hpa_lint().arg("-").write_stdin(template));
    assert_eq!(rules_of(&report), ["helm-template"]);
    assert_eq!(
        (
            report["diagnostics"][0]["line"].as_u64(),
            report["diagnostics"][0]["column"].as_u64()
        ),
        (Some(4), Some(16))
    );
    assert_eq!(report["diagnostics"][0]["severity"], "info");
}

#[test]
fn reads_lists_json_crlf_and_anchors() {
    let dir = tempfile::tempdir().unwrap();
    let list = format!("apiVersion: v1\nkind: List\nitems:\n- {}\n", serde_json::to_string(&serde_json::json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "in-list"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 0}
    })).unwrap());
    write(dir.path(), "list.yaml", list);
    write(
        dir.path(),
        "hpa.json",
        r#"{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "json"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "minReplicas": 3, "maxReplicas": 2}}"#,
    );
    write(dir.path(), "crlf.yaml", HPA_MAX_ZERO.replace('\n', "\r\n"));
    write(
        dir.path(),
        "anchors.yaml",
        "defaults: &ref {apiVersion: apps/v1, kind: Deployment, name: web}\n---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: anchored}\nspec:\n  scaleTargetRef: &target {apiVersion: apps/v1, kind: Deployment, name: web}\n  maxReplicas: 0\n",
    );
    let report = json_output(hpa_lint().arg(dir.path()));
    let names: Vec<(&str, &str, u64)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["file"].as_str().unwrap().rsplit('/').next().unwrap(),
                d["object"]["name"].as_str().unwrap(),
                d["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(names.contains(&("list.yaml", "in-list", 4)), "{names:?}");
    assert!(names.contains(&("hpa.json", "json", 2)), "{names:?}");
    assert!(names.contains(&("crlf.yaml", "web", 7)), "{names:?}");
    assert!(
        names.contains(&("anchors.yaml", "anchored", 8)),
        "{names:?}"
    );
}

#[test]
fn respects_gitignore_hidden_directories_and_ignore_paths() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".gitignore", "generated/\n");
    write(dir.path(), "generated/bad.yaml", HPA_MAX_ZERO);
    write(dir.path(), ".hidden/bad.yaml", HPA_MAX_ZERO);
    write(dir.path(), "vendor/bad.yaml", HPA_MAX_ZERO);
    write(dir.path(), "notes.txt", HPA_MAX_ZERO);
    write(dir.path(), "apps/ok.yml", CLEAN);
    // Globs follow .gitignore: anchored with a leading slash to the config's directory.
    write(
        dir.path(),
        "config/.hpa-lint.yaml",
        "ignorePaths: [\"/vendor/\"]\n",
    );
    let mut command = Command::cargo_bin("hpa-lint").unwrap();
    command
        .current_dir(dir.path())
        .arg("--config")
        .arg("config/.hpa-lint.yaml")
        .arg(".")
        .assert()
        .code(1);
    // The config's directory is the root of its globs: there `/vendor/` was `config/vendor/`.
    write(
        dir.path(),
        ".hpa-lint.yaml",
        "ignorePaths: [\"/vendor/\"]\n",
    );
    let mut command = Command::cargo_bin("hpa-lint").unwrap();
    command
        .current_dir(dir.path())
        .arg(".")
        .assert()
        .code(0)
        .stdout(predicate::str::contains("1 file"));
}

/// A line of an ignore file that is not a glob is told, once, as a warning
/// (git warns of what it cannot use): the rest of the file still applies,
/// whether it is in the tree or above it, and no input counts as unread.
#[test]
fn an_ignore_file_line_that_is_not_a_glob_is_told_once_and_the_rest_applies() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".gitignore", "up{\n");
    write(dir.path(), "tree/.ignore", "a{b\ngenerated/\n");
    write(dir.path(), "tree/generated/bad.yaml", HPA_MAX_ZERO);
    write(dir.path(), "tree/apps/ok.yaml", CLEAN);
    // `tree/.ignore` is reached in the tree and, spelled otherwise, above
    // `./tree/apps`.
    let output = hpa_lint()
        .current_dir(dir.path())
        .args(["tree", "./tree/apps"])
        .output()
        .unwrap();
    let tree = Path::new("tree");
    assert_eq!(output.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("No problems found in 1 file"),
        "{output:?}"
    );
    // A file given under three spellings is one file.
    let ok = dir.path().join("tree/apps/ok.yaml");
    let once = hpa_lint()
        .current_dir(dir.path())
        .arg("tree/apps/ok.yaml")
        .arg("./tree/apps")
        .arg(&ok)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&once.stdout).contains("No problems found in 1 file"),
        "{once:?}"
    );
    let line = |file: &Path, line: usize, glob: &str| {
        format!(
            "hpa-lint: warning: {}: line {line}: error parsing glob '{glob}': \
             unclosed alternate group; missing '}}' (maybe escape '{{' with '[{{]'?); \
             the line is not used",
            file.display()
        )
    };
    let above = dir.path().canonicalize().unwrap().join(".gitignore");
    let mut told: Vec<String> = String::from_utf8_lossy(&output.stderr)
        .lines()
        .map(str::to_owned)
        .collect();
    told.sort();
    assert_eq!(
        told,
        [
            line(&above, 1, "up{"),
            line(&tree.join(".ignore"), 1, "a{b")
        ]
    );
}

#[test]
fn finds_the_configuration_upwards_and_reports_its_errors_with_positions() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        ".hpa-lint.yaml",
        "kubeVersion: \"1.35\"\nrules:\n  invalid-replicas: warning\n",
    );
    write(dir.path(), "apps/web/hpa.yaml", HPA_MAX_ZERO);
    let mut command = Command::cargo_bin("hpa-lint").unwrap();
    let report = json_output(
        command
            .current_dir(dir.path().join("apps/web"))
            .arg("hpa.yaml"),
    );
    assert_eq!(report["diagnostics"][0]["severity"], "warning");

    write(
        dir.path(),
        ".hpa-lint.yaml",
        "kubeVersion: \"1.35\"\nrulez: {}\n",
    );
    let mut command = Command::cargo_bin("hpa-lint").unwrap();
    command
        .current_dir(dir.path())
        .arg(".")
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains(".hpa-lint.yaml:2:1").and(predicate::str::contains("rulez")),
        );
}

#[test]
fn configuration_errors_are_all_reported_in_file_order() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        ".hpa-lint.yaml",
        "kubeVersion: \"1.35\"\nrules:\n  target-not-fund: off\n  min-equals-max: loud\n",
    );
    let output = Command::cargo_bin("hpa-lint")
        .unwrap()
        .current_dir(dir.path())
        .arg(".")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(
        lines[0].starts_with("hpa-lint: ")
            && lines[0].contains(".hpa-lint.yaml:3:20: unknown rule `target-not-fund`"),
        "{stderr}"
    );
    assert!(
        lines[1].contains(".hpa-lint.yaml:4:19: invalid rule level `loud`"),
        "{stderr}"
    );
}

#[test]
fn kube_version_and_feature_gates_change_parity() {
    let hpa = HPA_MAX_ZERO
        .replace("minReplicas: 2", "minReplicas: 0")
        .replace("maxReplicas: 1", "maxReplicas: 3");
    let with = |args: &[&str]| {
        rules_of(&json_output(
            hpa_lint().args(args).arg("-").write_stdin(hpa.clone()),
        ))
    };
    assert_eq!(
        with(&["--select", "invalid-replicas"]),
        ["invalid-replicas"]
    );
    assert!(
        with(&[
            "--select",
            "invalid-replicas",
            "--feature-gates",
            "HPAScaleToZero=true"
        ])
        .is_empty()
    );
    hpa_lint()
        .args(["--kube-version", "1.99", "-"])
        .write_stdin(hpa)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("1.23"));
}

/// A `scaleTargetRef` without `kind` and `name`: the API server reports both
/// (`Required value` twice, at one position in the file), and so does hpa-lint.
#[test]
fn missing_kind_and_name_are_both_reported() {
    for reference in ["{}", "{apiVersion: apps/v1}"] {
        let hpa = HPA_MAX_ZERO
            .replace(
                "{apiVersion: apps/v1, kind: Deployment, name: web}",
                reference,
            )
            .replace("minReplicas: 2", "minReplicas: 1");
        let report = json_output(
            hpa_lint()
                .args(["--select", "invalid-object-reference", "-"])
                .write_stdin(hpa),
        );
        let fields: Vec<(&str, &str)> = report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| (d["field"].as_str().unwrap(), d["message"].as_str().unwrap()))
            .filter(|(field, _)| !field.ends_with("apiVersion"))
            .collect();
        assert_eq!(
            fields,
            [
                ("spec.scaleTargetRef.kind", "Required value"),
                ("spec.scaleTargetRef.name", "Required value")
            ],
            "{reference}"
        );
    }
}

#[test]
fn text_output_points_at_the_field() {
    hpa_lint()
        .arg("-")
        .write_stdin(HPA_MAX_ZERO)
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains("error[invalid-replicas]: spec.maxReplicas: Invalid value: 1: must be greater than or equal to `minReplicas`")
                .and(predicate::str::contains("--> <stdin>:7:3"))
                .and(predicate::str::contains("7 |   maxReplicas: 1"))
                .and(predicate::str::contains("  |   ^^^^^^^^^^^^^^")),
        );
}

#[test]
fn github_format_writes_workflow_commands() {
    hpa_lint()
        .args(["--format", "github", "-"])
        .write_stdin(with_target(HPA_MAX_ZERO))
        .assert()
        .code(1)
        .stdout(predicate::str::starts_with(
            "::error file=<stdin>,line=7,col=3,title=hpa-lint invalid-replicas::spec.maxReplicas: Invalid value: 1",
        ));
}

#[test]
fn sarif_output_is_valid_against_the_schema() {
    // With a fix (a quoted number), which SARIF carries as a replacement.
    let hpa = HPA_MAX_ZERO.replace("minReplicas: 2", "minReplicas: \"2\"");
    let output = hpa_lint()
        .args(["--format", "sarif", "-"])
        .write_stdin(with_target(&hpa))
        .output()
        .unwrap();
    let sarif: Value = serde_json::from_slice(&output.stdout).unwrap();
    let schema: Value =
        serde_json::from_str(include_str!("schemas/sarif-schema-2.1.0.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&sarif)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let result = &sarif["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], "invalid-field-type");
    assert_eq!(
        result["locations"][0]["physicalLocation"]["region"]["startLine"],
        6
    );
    assert_eq!(
        result["fixes"][0]["artifactChanges"][0]["replacements"][0],
        serde_json::json!({
            "deletedRegion": {"startLine": 6, "startColumn": 16, "endLine": 6, "endColumn": 19},
            "insertedContent": {"text": "2"},
        })
    );
    let rules = sarif["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    assert_eq!(rules.len(), hpa_lint_rules::rules::ALL.len());
}

#[test]
fn rules_and_explain_document_every_rule() {
    let output = Command::cargo_bin("hpa-lint")
        .unwrap()
        .arg("rules")
        .output()
        .unwrap();
    let listing = String::from_utf8(output.stdout).unwrap();
    // A header names the columns, and every row's columns start under it.
    let header = listing.lines().next().unwrap();
    let starts: Vec<usize> = ["DEFAULT", "CATEGORY", "SUMMARY"]
        .map(|name| header.find(name).unwrap())
        .into();
    assert!(header.starts_with("RULE "), "{header}");
    for line in listing.lines().skip(1) {
        for &at in &starts {
            let (before, from) = line.split_at(at);
            assert!(
                before.ends_with("  ") && !from.starts_with(' '),
                "a column out of line: {line}"
            );
        }
    }
    for rule in hpa_lint_rules::rules::ALL {
        assert!(
            listing.lines().any(|l| l.starts_with(rule.name)),
            "{} missing",
            rule.name
        );
        Command::cargo_bin("hpa-lint")
            .unwrap()
            .args(["explain", rule.name])
            .assert()
            .code(0)
            .stdout(predicate::str::contains("## What it does"));
    }
    Command::cargo_bin("hpa-lint")
        .unwrap()
        .args(["explain", "min-equal-max"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did you mean `min-equals-max`"));
}

fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// hpa-lint on a directory of the repository, as the README runs it.
fn lint_dir(dir: &str, format: &str) -> (i32, String) {
    let output = hpa_lint()
        .current_dir(repo_root())
        .args(["--format", format, "--color", "never", dir])
        .output()
        .unwrap();
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
    )
}

#[test]
fn examples_in_every_format() {
    let (code, text) = lint_dir("examples", "text");
    assert_eq!(code, 1);
    insta::assert_snapshot!("examples_text", text);
    insta::assert_snapshot!("examples_json", lint_dir("examples", "json").1);
    insta::assert_snapshot!("examples_github", lint_dir("examples", "github").1);
    let sarif = lint_dir("examples", "sarif")
        .1
        .replace(env!("CARGO_PKG_VERSION"), "[version]");
    insta::assert_snapshot!("examples_sarif", sarif);
}

/// Every manifest of tests/corpus/realworld (public projects, see SOURCES.tsv): no
/// crash, every object read, templates recognised, and the API-server findings are
/// the ones reviewed against the server's rules (all real defects: placeholder
/// values in kubernetes/api round-trip data, metrics without `type`, removed versions).
#[test]
fn lints_the_real_world_corpus() {
    use hpa_lint_rules::source::{ALL, read_document, split_documents};

    let corpus = repo_root().join("tests/corpus/realworld");
    let (code, json) = lint_dir("tests/corpus/realworld", "json");
    assert_eq!(code, 1);
    let report: Value = serde_json::from_str(&json).unwrap();

    let mut objects = 0;
    let mut templates = Vec::new();
    for line in std::fs::read_to_string(corpus.join("SOURCES.tsv"))
        .unwrap()
        .lines()
        .skip(1)
    {
        let columns: Vec<&str> = line.split('\t').collect();
        let text = std::fs::read_to_string(corpus.join(columns[0])).unwrap();
        let documents: Vec<_> = split_documents(&text)
            .iter()
            .map(|chunk| read_document(chunk.text, &|_, _| &ALL))
            .collect();
        if columns[5] == "y" {
            assert!(
                documents.iter().any(|d| d.template.is_some()),
                "{} is a template",
                columns[0]
            );
            templates.push(format!("tests/corpus/realworld/{}", columns[0]));
            continue;
        }
        for document in documents {
            objects += document
                .values
                .iter()
                .filter(|(v, _)| v["apiVersion"].is_string() && v["kind"].is_string())
                .count();
        }
    }
    assert_eq!(
        report["summary"]["objects"], objects,
        "the lazy pipeline sees every object a full parse sees"
    );

    let diagnostics = report["diagnostics"].as_array().unwrap();
    let mut noted: Vec<String> = diagnostics
        .iter()
        .filter(|d| d["rule"] == "helm-template")
        .map(|d| d["file"].as_str().unwrap().to_owned())
        .collect();
    noted.sort();
    templates.sort();
    assert_eq!(noted, templates);

    let api_server: String = diagnostics
        .iter()
        .filter(|d| !d["reason"].is_null())
        .map(|d| {
            let file = d["file"]
                .as_str()
                .unwrap()
                .trim_start_matches("tests/corpus/realworld/");
            format!(
                "{file}:{} {} {}: {}\n",
                d["line"],
                d["rule"].as_str().unwrap(),
                d["field"].as_str().unwrap(),
                d["message"].as_str().unwrap()
            )
        })
        .collect();
    insta::assert_snapshot!("realworld_api_server_findings", api_server);
}

/// pre-commit passes only changed files: `--context` supplies the rest of the
/// repository for lookups. Findings count when they are located in a changed
/// file or caused by one; nothing else from the context is reported.
#[test]
fn context_serves_lookups_without_reporting_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let deployment = TARGET.replace(", resources: {requests: {cpu: 100m}}", "");
    write(dir.path(), "apps/deployment.yaml", &deployment);
    write(
        dir.path(),
        "apps/hpa.yaml",
        HPA_MAX_ZERO.replace("maxReplicas: 1", "maxReplicas: 4"),
    );
    write(
        dir.path(),
        "other/pinned.yaml",
        HPA_MAX_ZERO
            .replace("maxReplicas: 1", "maxReplicas: 2")
            .replace("name: web}", "name: pinned}"),
    );
    write(dir.path(), "other/broken.yaml", "apiVersion: v1\nkind: [\n");
    let run = |changed: &[&str], context: bool| {
        let mut command = Command::cargo_bin("hpa-lint").unwrap();
        command.current_dir(dir.path()).arg("--isolated");
        if context {
            command.args(["--context", "."]);
        }
        let report = json_output(command.args(changed));
        let found: Vec<(String, String)> = report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                (
                    d["rule"].as_str().unwrap().to_owned(),
                    d["file"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        (found, report["summary"]["files"].clone())
    };
    // A changed HPA is checked against the unchanged Deployment it targets.
    let (found, files) = run(&["apps/hpa.yaml"], true);
    assert_eq!(
        found,
        [(
            "target-missing-requests".to_owned(),
            "apps/deployment.yaml".to_owned()
        )]
    );
    assert_eq!(files, 1);
    // A changed Deployment is checked against the unchanged HPA that scales it.
    let (found, _) = run(&["apps/deployment.yaml"], true);
    assert_eq!(
        found,
        [(
            "target-missing-requests".to_owned(),
            "apps/deployment.yaml".to_owned()
        )]
    );
    // Without context the HPA's target is simply not in the input.
    let (found, _) = run(&["apps/hpa.yaml"], false);
    assert_eq!(
        found,
        [("target-not-found".to_owned(), "apps/hpa.yaml".to_owned())]
    );
}

/// Files are read a few hundred at a time, and what each batch keeps for
/// lookups is put together: objects of the first and the last batch still
/// find each other, as autoscalers of one target and as an HPA's target.
#[test]
fn objects_of_files_read_in_different_batches_find_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let scaling = |name: &str| {
        HPA_MAX_ZERO
            .replace("maxReplicas: 1", "maxReplicas: 4")
            .replace(
                "metadata: {name: web}",
                &format!("metadata: {{name: {name}}}"),
            )
    };
    write(dir.path(), "f000.yaml", scaling("first"));
    for i in 1..299 {
        write(dir.path(), &format!("f{i:03}.yaml"), CLEAN);
    }
    let deployment = TARGET.replace(", resources: {requests: {cpu: 100m}}", "");
    write(
        dir.path(),
        "f299.yaml",
        format!("{}---\n{deployment}", scaling("last")),
    );
    let report = json_output(hpa_lint().arg(dir.path()));
    let found: Vec<(String, String)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let file = d["file"].as_str().unwrap();
            let file = Path::new(file).file_name().unwrap().to_string_lossy();
            (d["rule"].as_str().unwrap().to_owned(), file.into_owned())
        })
        .collect();
    // The Deployment's missing request, once for each HPA that scales it.
    let expected = [
        ("duplicate-target", "f000.yaml"),
        ("duplicate-target", "f299.yaml"),
        ("target-missing-requests", "f299.yaml"),
        ("target-missing-requests", "f299.yaml"),
    ];
    assert_eq!(
        found,
        expected.map(|(rule, file)| (rule.to_owned(), file.to_owned()))
    );
}

/// A run with more findings than are held in memory spills them to a
/// temporary file; without a temporary directory to write in, it keeps them
/// in memory and gives the same output (as standard input is kept).
#[test]
fn a_run_that_cannot_spill_keeps_its_findings_and_gives_the_same_output() {
    let stream: String = (0..3000)
        .map(|i| {
            HPA_MAX_ZERO.replace(
                "metadata: {name: web}",
                &format!("metadata: {{name: web-{i}}}"),
            ) + "---\n"
        })
        .collect();
    let run = |tmpdir: &Path| {
        hpa_lint()
            .args(["--format", "json", "-"])
            .env("TMPDIR", tmpdir)
            .write_stdin(stream.clone())
            .output()
            .unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let spilled = run(dir.path());
    let kept = run(&dir.path().join("missing"));
    assert_eq!(
        (kept.status.code(), String::from_utf8_lossy(&kept.stderr)),
        (Some(1), "".into())
    );
    assert_eq!(spilled.status.code(), Some(1));
    assert!(kept.stdout == spilled.stdout, "the outputs differ");
    let report: Value = serde_json::from_slice(&kept.stdout).unwrap();
    // Each HPA: maxReplicas below minReplicas, its target missing, and the
    // target shared with the others: more than the 1 MiB held.
    assert!(report["diagnostics"].as_array().unwrap().len() >= 3 * 3000);
}

/// A run whose temporary file cannot grow (a full disk; here a file size
/// limit, `ulimit -f`, at which writing fails with EFBIG instead of the
/// signal killing the run) reads back what the file took and keeps all its
/// findings in memory: the same output, and one note on standard error.
#[cfg(unix)]
#[test]
fn a_run_whose_temporary_file_fills_up_keeps_its_findings_and_gives_the_same_output() {
    // Each HPA has maxReplicas below minReplicas and 20 metrics of an
    // unknown type (step 2's findings) and scales on cpu its Deployment,
    // which sets replicas and has 20 containers without requests (findings
    // placed elsewhere): more than the 1 MiB of each held in memory.
    let metrics = "  - {type: Resource, resource: {name: cpu, target: {type: Utilization, \
                   averageUtilization: 50}}}\n";
    let hpa = format!(
        "{HPA_MAX_ZERO}  metrics:\n{metrics}{}",
        "  - {type: Bogus}\n".repeat(20)
    );
    let containers: String = (0..20)
        .map(|i| format!("      - {{name: c{i}, image: nginx}}\n"))
        .collect();
    let target = TARGET
        .replace("spec:\n  selector", "spec:\n  replicas: 3\n  selector")
        .replace(
            "      - {name: web, image: nginx, resources: {requests: {cpu: 100m}}}\n",
            &containers,
        );
    let stream: String = (0..200)
        .map(|i| {
            // In the HPA's metadata and target, and the Deployment's metadata.
            let name = format!("name: web-{i:0>60}}}");
            let hpa = hpa.replace("name: web}", &name);
            let target = target.replace("name: web}", &name);
            format!("{hpa}---\n{target}---\n")
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("stream.yaml");
    std::fs::write(&input, stream).unwrap();
    // Given by its path, and piped on standard input (copied to a temporary
    // file first).
    let run = |limit: &str, piped: bool| {
        // 64 blocks: 32 KiB in dash's blocks of 512 bytes (POSIX), 64 KiB in bash's.
        let (redirect, given) = if piped {
            ("cat \"$1\" |", "-")
        } else {
            ("", "$1")
        };
        std::process::Command::new("sh")
            .args([
                "-c",
                &format!("{limit} {redirect} exec \"$0\" --isolated --format json {given}"),
            ])
            .arg(assert_cmd::cargo::cargo_bin("hpa-lint"))
            .arg(&input)
            .env("TMPDIR", dir.path())
            .output()
            .unwrap()
    };
    let note = |what: &str| {
        format!(
            "hpa-lint: note: {what} held in memory: writing {} to a temporary file failed: \
             File too large (os error 27)\n",
            if what.ends_with("is") { "it" } else { "them" }
        )
    };
    let spilled = run("", false);
    let full = run("ulimit -f 64;", false);
    let held = [note("the HPAs read are"), note("findings are")].concat();
    assert_eq!(
        (
            spilled.status.code(),
            String::from_utf8_lossy(&spilled.stderr)
        ),
        (Some(1), "".into())
    );
    assert_eq!(
        (full.status.code(), String::from_utf8_lossy(&full.stderr)),
        (Some(1), held.as_str().into())
    );
    assert!(full.stdout == spilled.stdout, "the outputs differ");
    let piped = run("", true);
    let piped_full = run("ulimit -f 64;", true);
    assert_eq!(
        (piped.status.code(), String::from_utf8_lossy(&piped.stderr)),
        (Some(1), "".into())
    );
    assert_eq!(
        (
            piped_full.status.code(),
            String::from_utf8_lossy(&piped_full.stderr)
        ),
        (
            Some(1),
            [note("standard input is"), held].concat().as_str().into()
        )
    );
    assert!(
        piped_full.stdout == piped.stdout,
        "the piped outputs differ"
    );
    let report: Value = serde_json::from_slice(&full.stdout).unwrap();
    let on = |kind: &str| {
        report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["object"]["kind"] == kind)
            .count()
    };
    assert_eq!(
        (on("HorizontalPodAutoscaler"), on("Deployment")),
        (21 * 200, 21 * 200)
    );
}

/// A reader that stops early (`hpa-lint … | head -1`) ends the output, not
/// the run: the inputs that could not be read are still told, and the exit
/// code is the one the whole output would give, whenever the reader stops.
#[test]
fn a_reader_that_stops_early_still_gets_the_unread_inputs_told_and_the_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    // Far more findings than a pipe holds.
    for i in 0..400 {
        let hpa = HPA_MAX_ZERO.replace(
            "metadata: {name: web}",
            &format!("metadata: {{name: web-{i}}}"),
        );
        write(dir.path(), &format!("hpa-{i:03}.yaml"), hpa);
    }
    let check = |format: &str, read: usize| {
        closing_stdout(&["--isolated", "--format", format], dir.path(), read, None)
    };
    for format in ["text", "json", "sarif", "github"] {
        for read in [0, 16] {
            assert_eq!(
                check(format, read),
                (Some(1), String::new()),
                "{format} {read}"
            );
        }
    }
    std::fs::write(dir.path().join("latin1.yaml"), b"name: caf\xe9\n").unwrap();
    for read in [0, 16] {
        let (code, stderr) = check("json", read);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains("latin1.yaml: file is not valid UTF-8"),
            "{stderr}"
        );
    }
}

/// The same for the other outputs: the diffs of `--diff`, the fixed text of
/// `--fix -`, the reports of `behavior`; what they tell on standard error is
/// still told.
#[test]
fn a_reader_that_stops_early_changes_no_other_exit_code() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let checkout = std::fs::read(examples.join("shop/checkout/hpa.yaml")).unwrap();
    for read in [0, 16] {
        let (code, stderr) = closing_stdout(&["--isolated", "--diff"], &examples, read, None);
        assert_eq!(code, Some(1), "{stderr}");
        assert!(stderr.starts_with("Would fix "), "{stderr}");
        let (code, stderr) = closing_stdout(
            &["--isolated", "--fix"],
            Path::new("-"),
            read,
            Some(&checkout),
        );
        assert_eq!(code, Some(1), "{stderr}");
        assert!(stderr.contains("error["), "{stderr}");
        let (code, stderr) = closing_stdout(&["behavior", "--isolated"], &examples, read, None);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains("shop/checkout: refused, the API server would reject it"),
            "{stderr}"
        );
    }
}

/// Runs hpa-lint with `args` and `path`, reads `read` bytes of its output
/// (none: closed before the run writes) and closes it as `head` does; gives
/// the exit code and standard error.
fn closing_stdout(
    args: &[&str],
    path: &Path,
    read: usize,
    stdin: Option<&[u8]>,
) -> (Option<i32>, String) {
    use std::io::{Read, Write};
    use std::process::Stdio;
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("hpa-lint"))
        .args(args)
        .arg(path)
        .env_remove("HPA_LINT_KUBE_VERSION")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or_default()).unwrap();
    drop(input);
    let mut stdout = child.stdout.take().unwrap();
    stdout.read_exact(&mut vec![0; read]).unwrap();
    drop(stdout);
    let output = child.wait_with_output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A standard error that is closed (`2>&1 | head`) ends what is told there,
/// not the run: its exit code is the same.
#[test]
fn a_closed_standard_error_changes_no_exit_code() {
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".gitignore", "a{b\n");
    write(dir.path(), "ok.yaml", CLEAN);
    let run = || {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("hpa-lint"))
            .arg("--isolated")
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stderr.take());
        child.wait().unwrap().code()
    };
    // A warning (the ignore file's line), then an unread input.
    assert_eq!(run(), Some(0));
    std::fs::write(dir.path().join("latin1.yaml"), b"name: caf\xe9\n").unwrap();
    assert_eq!(run(), Some(2));
}

/// Standard input that is a file is read where it is, and a pipe is copied
/// first: both give the same findings, at the lines they are on, over a
/// stream cut into several blocks (LF and CRLF documents); a file given
/// part-way through is read from there, as the same text piped.
#[test]
fn standard_input_reads_the_same_from_a_file_as_from_a_pipe() {
    use std::io::{Seek, SeekFrom};
    let padding = "# padding\n".repeat(60);
    let documents: Vec<String> = (0..3000)
        .map(|i| {
            let hpa = HPA_MAX_ZERO.replace(
                "metadata: {name: web}",
                &format!("metadata: {{name: web-{i}}}"),
            );
            let document = format!("{padding}{hpa}");
            if i % 3 == 0 {
                document.replace('\n', "\r\n")
            } else {
                document
            }
        })
        .collect();
    let stream = documents.join("---\n");
    assert!(stream.len() > 2 << 20, "more than two blocks");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stream.yaml");
    std::fs::write(&path, &stream).unwrap();
    let lint = |stdin: std::fs::File| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_hpa-lint"))
            .args(["--isolated", "--format", "json", "-"])
            .env_remove("HPA_LINT_KUBE_VERSION")
            .stdin(stdin)
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&output.stdout).unwrap()
    };
    let piped = |text: &str| json_output(hpa_lint().arg("-").write_stdin(text));
    // Each HPA's `maxReplicas` line, counted in the text.
    let lines = |text: &str| -> Vec<(String, u64)> {
        let mut name = String::new();
        let mut found = Vec::new();
        for (number, line) in text.lines().enumerate() {
            if let Some(rest) = line.strip_prefix("metadata: {name: ") {
                name = rest.trim_end_matches(['}', '\r']).to_owned();
            }
            if line.starts_with("  maxReplicas: 1") {
                found.push((name.clone(), number as u64 + 1));
            }
        }
        found
    };
    let reported = |report: &Value| -> Vec<(String, u64)> {
        report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["rule"] == "invalid-replicas")
            .map(|d| {
                let name = d["object"]["name"].as_str().unwrap().to_owned();
                (name, d["line"].as_u64().unwrap())
            })
            .collect()
    };
    let from_file = lint(std::fs::File::open(&path).unwrap());
    assert_eq!(reported(&from_file), lines(&stream));
    assert!(from_file == piped(&stream), "file and pipe differ");
    // Part-way: from the 2,000th document on.
    let at = documents[..2000].join("---\n").len();
    let rest = &stream[at..];
    let mut file = std::fs::File::open(&path).unwrap();
    file.seek(SeekFrom::Start(at as u64)).unwrap();
    let from_middle = lint(file);
    assert_eq!(reported(&from_middle).len(), 1000);
    assert_eq!(reported(&from_middle), lines(rest));
    assert!(from_middle == piped(rest), "file and pipe differ part-way");
}
