//! Regression tests for what outside measurement found wrong with reading
//! input (issue 7): one test per class, each built from the description of the
//! failure, run through the real binary.

mod common;

use common::*;
use serde_json::Value;

/// Runs the binary on standard input in a format; (exit code, stdout).
fn run(text: impl Into<Vec<u8>>, format: &str) -> (i32, String) {
    let output = hpa_lint()
        .args(["--format", format, "--color", "never", "-"])
        .write_stdin(text.into())
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stdout).unwrap(),
    )
}

/// (line, column, rule) of each JSON diagnostic.
fn places(report: &Value) -> Vec<(u64, u64, String)> {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["line"].as_u64().unwrap(),
                d["column"].as_u64().unwrap(),
                d["rule"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// (line, column) of each `--> <stdin>:line:column` of text output.
fn text_places(text: &str) -> Vec<(u64, u64)> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("--> <stdin>:"))
        .map(|place| {
            let (line, column) = place.split_once(':').unwrap();
            (line.parse().unwrap(), column.parse().unwrap())
        })
        .collect()
}

/// Every position lies on a character of the text it points into.
fn assert_positions_in(text: &str, report: &Value) {
    let lines: Vec<&str> = text.split_inclusive(['\n', '\r']).collect();
    for (line, column, rule) in places(report) {
        let content = lines
            .get(line as usize - 1)
            .unwrap_or_else(|| panic!("{rule}: line {line} is past the end"));
        let width = content.trim_end_matches(['\n', '\r']).chars().count() as u64;
        assert!(
            column <= width + 1,
            "{rule}: column {column} past line {line}"
        );
    }
}

#[test]
fn positions_next_to_multibyte_characters_never_crash() {
    let hpa = |metadata: &str| {
        format!(
            "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {metadata}\nspec:\n  maxReplicas: 0\n"
        )
    };
    let cases = [
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: é}\ndata: {é: [é\n".to_owned(),
        hpa("\u{feff}\n  name: x"),
        hpa("{name: \"a\u{2028}b\"}"),
        "apiVersion： v1\nkind: ConfigMap\n".to_owned(),
        hpa("{name: 🦀🦀}\n  x: [🦀"),
        hpa("{name: x, 🦀: 1}"),
    ];
    for text in cases {
        for format in ["text", "json", "sarif", "github"] {
            let (code, _) = run(text.clone(), format);
            assert!(code == 0 || code == 1, "{format} exited {code} on {text:?}");
        }
        let (_, json) = run(text.clone(), "json");
        let report: Value = serde_json::from_str(&json).unwrap();
        assert_positions_in(&text, &report);
        let (_, text_output) = run(text.clone(), "text");
        let json_places: Vec<(u64, u64)> = places(&report)
            .into_iter()
            .map(|(l, c, _)| (l, c))
            .collect();
        assert_eq!(text_places(&text_output), json_places, "{text:?}");
    }
}

#[test]
fn findings_on_one_long_line_stay_small() {
    // 1,000 HPAs with an unknown field each, as one line of JSON.
    let hpa = r#"{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"}, "spec": {"maxReplicas": 2, "zzz": 1, "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "w"}}}"#;
    let items: Vec<String> = (0..1000)
        .map(|i| hpa.replace("\"h\"", &format!("\"h{i}\"")))
        .collect();
    let list = format!(
        r#"{{"apiVersion": "v1", "kind": "List", "items": [{}]}}"#,
        items.join(", ")
    );
    let (code, text) = run(list.clone(), "text");
    assert_eq!(code, 1);
    let unknown = text.matches("error[unknown-field]").count();
    assert_eq!(unknown, 1000);
    // Each finding shows a window of the line, not the line (200 KB).
    assert!(text.len() < 1000 * 2000, "{} bytes of output", text.len());
    assert!(text.lines().all(|line| line.len() < 1000));
}

#[test]
fn fixes_on_one_long_line_are_each_their_own() {
    // 1,000 HPAs with a quoted `maxReplicas` each, as one line of JSON: each
    // finding's fix edits its own item, and `--fix` makes them all.
    let hpa = r#"{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"}, "spec": {"maxReplicas": "2", "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "w"}}}"#;
    let items: Vec<String> = (0..1000)
        .map(|i| hpa.replace("\"h\"", &format!("\"h{i}\"")))
        .collect();
    let list = format!(
        r#"{{"apiVersion": "v1", "kind": "List", "items": [{}]}}"#,
        items.join(", ")
    );
    let (_, json) = run(list.clone(), "json");
    let report: Value = serde_json::from_str(&json).unwrap();
    let edits: Vec<(u64, u64, &str)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["rule"] == "invalid-field-type")
        .flat_map(|d| d["fix"]["edits"].as_array().unwrap())
        .map(|e| {
            let end = &e["end"];
            (
                end["line"].as_u64().unwrap(),
                end["column"].as_u64().unwrap(),
                e["content"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(edits.len(), 1000);
    assert!(
        edits
            .iter()
            .all(|&(line, _, content)| line == 1 && content == "2")
    );
    let mut columns: Vec<u64> = edits.iter().map(|&(_, column, _)| column).collect();
    columns.sort_unstable();
    columns.dedup();
    assert_eq!(columns.len(), 1000, "each fix edits its own item");
    let output = hpa_lint()
        .args(["--fix", "-"])
        .write_stdin(list.clone())
        .output()
        .unwrap();
    let fixed = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        fixed,
        list.replace(r#""maxReplicas": "2""#, r#""maxReplicas": 2"#)
    );
}

#[test]
fn many_autoscalers_of_one_workload_are_each_reported_once() {
    let hpa = |name: String| {
        format!(
            "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {{name: {name}}}\nspec:\n  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}\n  maxReplicas: 3\n---\n"
        )
    };
    let text: String = (0..1000).map(|i| hpa(format!("h{i}"))).collect::<String>() + TARGET;
    let (_, json) = run(text, "json");
    let report: Value = serde_json::from_str(&json).unwrap();
    let duplicates: Vec<&Value> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["rule"] == "duplicate-target")
        .collect();
    assert_eq!(duplicates.len(), 1000);
    for d in duplicates {
        let message = d["message"].as_str().unwrap();
        assert!(message.ends_with("and 996 more"), "{message}");
        assert!(message.len() < 200, "{message}");
    }
}

#[test]
fn repeated_identical_objects_count_once_in_lookups() {
    // Overlays concatenated into one stream repeat the same objects.
    let pair = with_target(&HPA_MAX_ZERO.replace("maxReplicas: 1", "maxReplicas: 3"));
    let text = format!("{pair}---\n").repeat(2000);
    let (code, json) = run(text, "json");
    let report: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["summary"]["objects"], 4000);
    // The same HPA twice is not two autoscalers.
    assert!(
        places(&report)
            .iter()
            .all(|(_, _, rule)| rule != "duplicate-target")
    );
    assert_eq!(code, 0);
}

#[test]
fn unread_input_is_never_called_clean() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "utf16.yaml", b"\xff\xfea\x00");
    let output = hpa_lint().arg(dir.path()).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(!stdout.contains("No problems found"), "{stdout}");
    assert!(stdout.contains("Could not read 1 input"), "{stdout}");
    let report = json_output(hpa_lint().arg(dir.path()));
    assert_eq!(report["summary"]["unread"], 1);
}

#[test]
fn the_summary_counts_only_the_files_read() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "hpa.yaml", HPA_MAX_ZERO.as_bytes());
    write(dir.path(), "utf16.yaml", b"\xff\xfea\x00");
    write(dir.path(), "latin1.yaml", b"a: \xff\n");
    write(dir.path(), "nul.json", b"{\"a\": \x00}");
    let stdout = String::from_utf8(hpa_lint().arg(dir.path()).output().unwrap().stdout).unwrap();
    assert!(stdout.contains("Could not read 3 inputs"), "{stdout}");
    assert!(
        stdout.contains("in the 1 file (1 document, 1 object) read"),
        "{stdout}"
    );
    let report = json_output(hpa_lint().arg(dir.path()));
    assert_eq!(report["summary"]["files"], 1);
    assert_eq!(report["summary"]["unread"], 3);
}

#[test]
fn a_tab_in_indentation_is_reported_at_the_tab() {
    let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: x\n";
    let (code, out) = run(text, "json");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(code, 1);
    let finding = &report["diagnostics"][0];
    assert_eq!(
        (finding["line"].as_u64(), finding["column"].as_u64()),
        (Some(4), Some(1))
    );
    assert!(run(text, "text").1.contains("--> <stdin>:4:1"));
}

#[test]
fn indented_documents_are_read() {
    let broken = HPA_MAX_ZERO.replace("maxReplicas: 1", "maxReplicas: 0");
    let indented: String = broken.lines().map(|l| format!("  {l}\n")).collect();
    let json = r#" {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "j"}, "spec": {"maxReplicas": 0}}"#.to_owned();
    for text in [indented, json] {
        let (code, out) = run(text, "json");
        let report: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(code, 1);
        assert!(rules_of(&report).contains(&"invalid-replicas".to_owned()));
        assert_eq!(report["summary"]["objects"], 1);
    }
}

#[test]
fn template_syntax_inside_yaml_text_is_not_a_template() {
    let greeting = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: greeting}\ndata:\n  greeting: \"Hello\n    {{ .Name }}\"\n---\n";
    let (code, out) = run(format!("{greeting}{HPA_MAX_ZERO}"), "json");
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(code, 1);
    assert!(!rules_of(&report).contains(&"helm-template".to_owned()));
    assert!(rules_of(&report).contains(&"invalid-replicas".to_owned()));
    // A real template is still one.
    let chart = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n";
    let report: Value = serde_json::from_str(&run(chart, "json").1).unwrap();
    assert_eq!(rules_of(&report), ["helm-template"]);
}

#[test]
fn a_lone_carriage_return_ends_a_line_everywhere() {
    let text = format!("# c\r{}---\r{CLEAN}", HPA_MAX_ZERO.replace('\n', "\r"));
    let (_, json) = run(text.clone(), "json");
    let report: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["summary"]["documents"], 2);
    assert_eq!(report["summary"]["objects"], 2);
    assert!(places(&report).contains(&(8, 3, "invalid-replicas".to_owned())));
    assert_positions_in(&text, &report);
    let (_, text_output) = run(text, "text");
    let json_places: Vec<(u64, u64)> = places(&report)
        .into_iter()
        .map(|(l, c, _)| (l, c))
        .collect();
    assert_eq!(text_places(&text_output), json_places);
}

#[test]
fn every_document_is_checked_for_syntax_and_repeated_keys() {
    let config_map =
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  a: [unclosed\n";
    let (code, out) = run(config_map, "json");
    assert_eq!(code, 1);
    assert_eq!(
        rules_of(&serde_json::from_str(&out).unwrap()),
        ["invalid-yaml"]
    );
    // A repeated key in a field no rule reads, in a target and elsewhere.
    let repeated = "      volumes: []\n      volumes: []\n";
    let target = TARGET.replace(
        "      containers:\n",
        &format!("{repeated}      containers:\n"),
    );
    for text in [
        with_target(
            HPA_MAX_ZERO
                .replace("maxReplicas: 1", "maxReplicas: 3")
                .as_str(),
        )
        .replace(TARGET, &target),
        target.clone(),
    ] {
        let report: Value = serde_json::from_str(&run(text, "json").1).unwrap();
        assert!(
            rules_of(&report).contains(&"duplicate-key".to_owned()),
            "{report}"
        );
    }
}

#[test]
fn scalars_resolve_as_kubectl_sends_them() {
    let hpa = |spec: &str| {
        format!(
            "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {{name: web}}\nspec:\n  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}\n{spec}---\n{TARGET}"
        )
    };
    let findings = |text: String| rules_of(&serde_json::from_str(&run(text, "json").1).unwrap());
    // go-yaml v2: 010 is octal 8, below maxReplicas 9; read as decimal it would be 10.
    assert!(findings(hpa("  minReplicas: 010\n  maxReplicas: 9\n")).is_empty());
    assert_eq!(
        findings(hpa("  minReplicas: 0x10\n  maxReplicas: 9\n")),
        ["invalid-replicas"]
    );
    assert!(findings(hpa("  minReplicas: 2.0\n  maxReplicas: 3e0\n")).is_empty());
    // `yes` is a boolean, which a name cannot be.
    let named_yes =
        hpa("  maxReplicas: 3\n").replace("metadata: {name: web}", "metadata: {name: yes}");
    assert!(findings(named_yes).contains(&"invalid-field-type".to_owned()));
    // Not objects: `apiVersion: 1`, `kind: true`.
    for header in [
        "apiVersion: 1\nkind: Deployment\n",
        "apiVersion: v1\nkind: true\n",
    ] {
        let report: Value = serde_json::from_str(&run(header, "json").1).unwrap();
        assert_eq!(report["summary"]["objects"], 0);
    }
}

#[test]
fn a_target_that_cannot_be_read_is_named_as_such() {
    let broken_target = format!("{TARGET}status: {{a: .inf}}\n");
    let text = format!(
        "{}---\n{broken_target}",
        HPA_MAX_ZERO.replace("maxReplicas: 1", "maxReplicas: 3")
    );
    let report: Value = serde_json::from_str(&run(text, "json").1).unwrap();
    let messages: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    assert!(
        messages.iter().any(|m| m.contains("could not be read")),
        "{messages:?}"
    );
    assert!(
        !messages.iter().any(|m| m.contains("is not in the input")),
        "{messages:?}"
    );
}

#[test]
fn messages_say_what_is_wrong_in_the_file() {
    let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
    for (prev, next) in ('a'..='i').zip('b'..='j') {
        bomb.push_str(&format!("{next}: &{next} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
    }
    let cases = [
        (bomb, "alias bomb"),
        ("a: &a [*a]\n".to_owned(), "contains itself"),
        ("a: .inf\n".to_owned(), "not a number JSON can hold"),
        (
            "a: 1\n--- {b: 2}\n---\nc: [\n".to_owned(),
            "unclosed bracket",
        ),
    ];
    for (text, expected) in cases {
        let (_, out) = run(text, "json");
        let report: Value = serde_json::from_str(&out).unwrap();
        let message = report["diagnostics"][0]["message"].as_str().unwrap();
        assert!(message.contains(expected), "{message}");
        for library in [
            "budget",
            "weak recursion",
            "configured policy",
            "from_str_multiple",
        ] {
            assert!(!message.contains(library), "{message}");
        }
    }
}

#[test]
fn streams_larger_than_a_block_keep_exact_positions() {
    // About 3 MB: documents cross the 1 MiB reading blocks, with multi-byte
    // characters and every line-break style around the cuts.
    let mut text = String::new();
    let mut expected = Vec::new();
    let breaks = ["\n", "\r\n", "\r"];
    for i in 0..6000 {
        let br = breaks[i % 3];
        let doc = format!(
            "---{br}apiVersion: v1{br}kind: ConfigMap{br}metadata: {{name: c{i}}}{br}data: {{text: \"{}\"}}{br}",
            "é".repeat(150 + i % 50)
        );
        text.push_str(&doc);
        if i % 997 == 0 {
            let line = hpa_lint_rules::source::lines::count_breaks(&text) + 2;
            expected.push(line as u64);
            text.push_str(&format!("---{br}a: [unclosed{br}"));
        }
    }
    assert!(text.len() > 2_500_000, "{}", text.len());
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "stream.yaml", &text);
    let from_file = json_output(hpa_lint().arg(dir.path().join("stream.yaml")));
    let lines: Vec<u64> = from_file["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, expected);
    assert_eq!(from_file["summary"]["documents"], 6000 + expected.len());
    let (_, from_stdin) = run(text, "json");
    let from_stdin: Value = serde_json::from_str(&from_stdin).unwrap();
    assert_eq!(
        from_stdin["diagnostics"],
        from_file["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                let mut d = d.clone();
                d["file"] = "<stdin>".into();
                d
            })
            .collect::<Value>()
    );
}

#[test]
fn long_values_are_quoted_short_in_every_format() {
    // A 200 KB name on an HPA with 300 unknown fields: each finding names the
    // object, but none may repeat the name in full.
    let name = "n".repeat(200_000);
    let fields: String = (0..300).map(|i| format!("  zz{i}: 1\n")).collect();
    let text = format!(
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {{name: {name}}}\nspec:\n  maxReplicas: 3\n{fields}"
    );
    for format in ["text", "json", "sarif", "github"] {
        let (code, out) = run(text.clone(), format);
        assert_eq!(code, 1, "{format}");
        assert!(out.len() < 1_000_000, "{format}: {} bytes", out.len());
        assert!(
            !out.contains(&"n".repeat(1000)),
            "{format} quotes the name whole"
        );
    }
}

/// A `minReplicas` of the wrong type is that error alone: no rule reads it
/// as the default 1 (which once made `min-equals-max` say "both 1" of an HPA
/// whose author wrote 3 and 1).
#[test]
fn an_undecodable_floor_is_not_read_as_the_default() {
    let text = format!(
        "{}---\n{TARGET}",
        HPA_MAX_ZERO.replace("minReplicas: 2", "minReplicas: \"3\"")
    );
    let report: Value = serde_json::from_str(&run(text, "json").1).unwrap();
    let rules: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["invalid-field-type"], "{report}");
}
