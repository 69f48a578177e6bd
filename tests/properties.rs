//! A mutation fuzzer over the real-world corpus and the examples, run through
//! the binary: whatever the input, hpa-lint never crashes, every position is on
//! a character of the file, text and JSON report the same places, the output
//! is the same twice, and every object a full read sees is counted.
//!
//! The test command runs a bounded number of mutants; a longer run (see the
//! docs/development.md) sets `HPA_LINT_FUZZ_CASES` and `HPA_LINT_FUZZ_SEED`.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::*;
use hpa_lint_rules::FieldPath;
use hpa_lint_rules::fix::{Edit, Fix};
use hpa_lint_rules::source::{ALL, read_document, split_documents};
use serde_json::Value;

/// A small deterministic generator (xorshift64*), so a seed reproduces a run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Text that has broken parsers and renderers before.
const INSERTS: [&str; 24] = [
    "é",
    "🦀",
    "\u{2028}",
    "\u{feff}",
    "：",
    "\r",
    "\r\n",
    "\t",
    "&a ",
    "*a",
    "!!int ",
    "!!str ",
    "!custom ",
    "<<: ",
    "{{ .Values.x }}",
    "---\n",
    "...\n",
    "- ",
    ": ",
    "[",
    "{",
    "\"",
    "'",
    "#",
];
const NUMBERS: [&str; 8] = [
    "99999999999999999999999",
    "18446744073709551615",
    "-9223372036854775809",
    "1e400",
    ".inf",
    "0x7fffffff",
    "010",
    "1_000",
];

fn char_boundary_at(text: &str, rng: &mut Rng) -> usize {
    let mut at = rng.below(text.len() + 1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Keys written as empty flow mappings beside others: where fixes add
/// entries (`behavior: {}` gets its defaults written in).
const EMPTY_MAPPINGS: [&str; 4] = [
    "behavior: {}",
    "scaleUp: { }",
    "scaleDown: {\n}",
    "labels: {}",
];

/// Writes one `key: value` line of `text` in another YAML form: the value as
/// a block scalar, the key as a complex key, the value anchored or tagged, a
/// comment line after it, or an empty flow mapping beside it. Most keep the
/// meaning; all are forms that fixes must edit without breaking them.
fn restyle(text: &str, rng: &mut Rng) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    // (line, indentation, `- ` or nothing, key, value)
    let entries: Vec<(usize, &str, &str, &str, &str)> = lines
        .iter()
        .enumerate()
        .filter_map(|(i, line)| {
            let line = line.trim_end_matches(['\n', '\r']);
            let body = line.trim_start_matches(' ');
            let indent = &line[..line.len() - body.len()];
            let (dash, body) = match body.strip_prefix("- ") {
                Some(body) => ("- ", body),
                None => ("", body),
            };
            let (key, value) = body.split_once(':')?;
            let plain_key = !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c));
            let value = value.strip_prefix(' ').unwrap_or(value);
            (plain_key && (value.is_empty() || body[key.len() + 1..].starts_with(' ')))
                .then_some((i, indent, dash, key, value))
        })
        .collect();
    if entries.is_empty() {
        return text.to_owned();
    }
    let (i, indent, dash, key, value) = *rng.pick(&entries);
    let eol = if lines[i].ends_with("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    // The column of the key, for what goes under it.
    let inner = " ".repeat(indent.len() + dash.len() + 2);
    let plain = !value.is_empty()
        && !value.starts_with(['{', '[', '"', '\'', '&', '*', '!', '|', '>', '#']);
    let line = match rng.below(6) {
        0 if plain => {
            let style = rng.pick(&[">-", "|-", ">", "|+"]);
            format!("{indent}{dash}{key}: {style}{eol}{inner}{value}{eol}")
        }
        1 if dash.is_empty() => format!("{indent}? {key}{eol}{indent}: {value}{eol}"),
        2 if plain => format!("{indent}{dash}{key}: &a{i} {value}{eol}"),
        3 if plain => format!("{indent}{dash}{key}: !!str {value}{eol}"),
        4 => format!("{}{indent}# about {key}{eol}", lines[i]),
        _ => {
            let empty = rng
                .pick(&EMPTY_MAPPINGS)
                .replace('\n', &format!("{eol}{indent}"));
            let sibling = " ".repeat(indent.len() + dash.len());
            format!("{}{sibling}{empty}{eol}", lines[i])
        }
    };
    let mut out: String = lines[..i].concat();
    out.push_str(&line);
    out.extend(lines[i + 1..].iter().copied());
    out
}

/// One random change to `text`, keeping it UTF-8.
fn mutate(text: &str, seeds: &[String], rng: &mut Rng) -> String {
    let at = char_boundary_at(text, rng);
    match rng.below(12) {
        9..=11 => restyle(text, rng),
        0 => format!("{}{}{}", &text[..at], rng.pick(&INSERTS), &text[at..]),
        1 => {
            let end = char_boundary_at(&text[at..], rng) + at;
            format!("{}{}", &text[..at], &text[end..])
        }
        2 => {
            let other = rng.pick(seeds);
            let from = char_boundary_at(other, rng);
            let to = from + char_boundary_at(&other[from..], rng).min(400);
            let to = (to..=other.len())
                .find(|&i| other.is_char_boundary(i))
                .unwrap_or(other.len());
            format!("{}{}{}", &text[..at], &other[from..to], &text[at..])
        }
        3 => text.replace('\n', "\r"),
        4 => text.replace('\n', "\r\n"),
        5 => {
            let digits = text[at..]
                .find(|c: char| c.is_ascii_digit())
                .map(|i| at + i);
            match digits {
                Some(start) => {
                    let end = text[start..]
                        .find(|c: char| !c.is_ascii_digit())
                        .map_or(text.len(), |i| start + i);
                    format!("{}{}{}", &text[..start], rng.pick(&NUMBERS), &text[end..])
                }
                None => text.to_owned(),
            }
        }
        6 => format!("{text}\n---\n{text}"),
        7 => text.lines().map(|l| format!("  {l}\n")).collect(),
        _ => {
            // Swap a character for another one.
            let Some(c) = text[at..].chars().next() else {
                return text.to_owned();
            };
            let replacement = rng.pick(&INSERTS).chars().next().unwrap_or('x');
            format!("{}{replacement}{}", &text[..at], &text[at + c.len_utf8()..])
        }
    }
}

fn seeds() -> Vec<String> {
    let mut paths = Vec::new();
    let mut dirs = vec![
        repo_root().join("tests/corpus/realworld"),
        repo_root().join("examples"),
    ];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path
                .extension()
                .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
            {
                paths.push(path);
            }
        }
    }
    paths.sort();
    paths
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// What a full read of a file counts: objects, or none for a template.
fn objects_in(text: &str) -> usize {
    let documents: Vec<_> = split_documents(text)
        .iter()
        .map(|chunk| read_document(chunk.text, &|_, _| &ALL))
        .collect();
    if documents.iter().any(|d| d.template.is_some()) {
        return 0;
    }
    documents
        .iter()
        .flat_map(|d| &d.values)
        .filter(|(v, _)| v["apiVersion"].is_string() && v["kind"].is_string())
        .count()
}

fn run(dir: &Path, format: &str) -> (i32, String) {
    let output = hpa_lint()
        .args(["--format", format, "--color", "never", "--select", "all"])
        .arg(dir)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8(output.stdout).unwrap(),
    )
}

/// Writes `HPA_LINT_FUZZ_CASES` mutants (seeded by `HPA_LINT_FUZZ_SEED`) to a
/// fresh directory named after `purpose`, under target/ so that a failure can
/// be replayed: the directory, the texts, and how to find them again.
fn mutants(purpose: &str) -> (PathBuf, Vec<String>, String) {
    mutants_of(purpose, &seeds())
}

/// [`mutants`] of some of the seeds.
fn mutants_of(purpose: &str, seeds: &[String]) -> (PathBuf, Vec<String>, String) {
    let cases = env_number("HPA_LINT_FUZZ_CASES", 300) as usize;
    let seed = env_number("HPA_LINT_FUZZ_SEED", 0x5eed);
    let mut rng = Rng(seed | 1);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{purpose}-{seed}"));
    let _ = std::fs::remove_dir_all(&dir);
    let mut texts = Vec::with_capacity(cases);
    for i in 0..cases {
        let mut text = rng.pick(seeds).clone();
        for _ in 0..=rng.below(3) {
            text = mutate(&text, seeds, &mut rng);
        }
        write(&dir, &format!("m{i:05}.yaml"), &text);
        texts.push(text);
    }
    let keep = format!("mutants kept in {} (seed {seed})", dir.display());
    (dir, texts, keep)
}

#[test]
fn mutants_of_real_manifests_keep_every_promise() {
    let (dir, texts, kept) = mutants("mutants");
    let keep = || kept.clone();

    let (code, json) = run(&dir, "json");
    assert!(code == 0 || code == 1, "exit {code}; {}", keep());
    let report: Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}; {}", keep()));
    assert_eq!(run(&dir, "json").1, json, "two runs differ; {}", keep());

    // Every position is on a character of its line.
    let name_of = |file: &str| {
        Path::new(file)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    };
    let mut json_places = Vec::new();
    for d in report["diagnostics"].as_array().unwrap() {
        let file = name_of(d["file"].as_str().unwrap());
        let i: usize = file[1..6].parse().unwrap();
        let (line, column) = (
            d["line"].as_u64().unwrap() as usize,
            d["column"].as_u64().unwrap() as usize,
        );
        // The end of a file that ends with a line break is on a last, empty line.
        let lines: Vec<&str> = hpa_lint_rules::source::lines::lines(&texts[i])
            .map(|l| l.text)
            .chain([""])
            .collect();
        let width = lines.get(line - 1).map_or(0, |l| l.chars().count());
        assert!(
            line <= lines.len() && column <= width + 1,
            "{file}:{line}:{column} is outside the file; {}",
            keep()
        );
        json_places.push(format!("{file}:{line}:{column}"));
    }

    // Text output points at the same places.
    let (text_code, text) = run(&dir, "text");
    assert_eq!(text_code, code, "{}", keep());
    let text_places: Vec<String> = text
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("--> "))
        .map(name_of)
        .collect();
    assert_eq!(
        text_places,
        json_places,
        "text and JSON disagree; {}",
        keep()
    );

    // Every object a full read sees is counted.
    let objects: usize = texts.iter().map(|t| objects_in(t)).sum();
    assert_eq!(report["summary"]["objects"], objects, "{}", keep());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// How many findings of each file of a JSON report are of a kind: syntax
/// (unreadable YAML, repeated keys) or what the API server would reject (the
/// findings with a `reason`).
fn findings_per_file(report: &Value, of_kind: fn(&Value) -> bool) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for d in report["diagnostics"].as_array().unwrap() {
        if of_kind(d) {
            let file = d["file"].as_str().unwrap().to_owned();
            *counts.entry(file).or_default() += 1;
        }
    }
    counts
}

fn syntax(d: &Value) -> bool {
    d["rule"] == "invalid-yaml" || d["rule"] == "duplicate-key"
}

fn api_server(d: &Value) -> bool {
    !d["reason"].is_null()
}

fn stops_the_server(d: &Value) -> bool {
    d["reason"] == "BadRequest" || d["rule"] == "deprecated-api-version"
}

#[test]
fn fixing_mutants_never_breaks_them() {
    let (dir, texts, keep) = mutants("fixed-mutants");
    // The mutants as they were, for replaying a failure.
    let originals = dir.with_extension("original");
    let _ = std::fs::remove_dir_all(&originals);
    for (i, text) in texts.iter().enumerate() {
        write(&originals, &format!("m{i:05}.yaml"), text);
    }
    let report = |args: &[&str]| -> Value {
        let output = hpa_lint()
            .args(["--format", "json", "--select", "all"])
            .args(args)
            .arg(&dir)
            .output()
            .unwrap();
        let code = output.status.code().unwrap_or(-1);
        assert!(code == 0 || code == 1, "exit {code}; {keep}");
        // With --fix the findings go to standard error when fixing stdin
        // only; for files they are on standard output.
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}; {keep}"))
    };
    let before = report(&[]);
    let fixed = report(&["--fix", "--unsafe-fixes"]);
    assert!(fixed["summary"]["fixed"].as_u64().unwrap() > 0, "{keep}");
    // A fix never makes a file unreadable, repeats a key, or adds what the
    // API server would reject. (Where the server stopped before validating,
    // at a version it does not serve or a body it cannot decode, fixing that
    // lets it validate, and what it finds then was there before.)
    let unvalidated = findings_per_file(&before, stops_the_server);
    for (what, kind) in [
        ("syntax", syntax as fn(&Value) -> bool),
        ("api-server", api_server),
    ] {
        let was = findings_per_file(&before, kind);
        for (file, after) in findings_per_file(&fixed, kind) {
            if what == "api-server" && unvalidated.contains_key(&file) {
                continue;
            }
            let was = was.get(&file).copied().unwrap_or(0);
            assert!(
                after <= was,
                "{file}: {was} {what} findings became {after}; {keep}"
            );
        }
    }
    // Every file keeps its documents, each as readable as it was, and its
    // objects.
    for (i, original) in texts.iter().enumerate() {
        let name = format!("m{i:05}.yaml");
        let fixed = std::fs::read_to_string(dir.join(&name)).unwrap();
        let (before, after) = (split_documents(original), split_documents(&fixed));
        assert_eq!(before.len(), after.len(), "{name}: documents; {keep}");
        for (old, new) in before.iter().zip(&after) {
            let readable = |text: &str| read_document(text, &|_, _| &ALL).problems.is_empty();
            assert!(
                !readable(old.text) || readable(new.text),
                "{name}: a document became unreadable:\n{}; {keep}",
                new.text
            );
        }
        assert_eq!(
            objects_in(original),
            objects_in(&fixed),
            "{name}: objects; {keep}"
        );
    }
    // Fixing runs until nothing changes: a second run finds nothing to fix.
    let again = report(&["--fix", "--unsafe-fixes"]);
    assert_eq!(again["summary"]["fixed"], 0, "{keep}");
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&originals).unwrap();
}

/// The API-server findings of each file of `dir` at a release, as
/// `file:line:column rule field message`, with the Go package of the types
/// in decoding errors left out (`v2.MetricTarget`, `v2beta2.MetricTarget`).
fn server_findings(dir: &Path, kube_version: &str, keep: &str) -> Vec<String> {
    let output = hpa_lint()
        .args(["--format", "json", "--select", "api-server"])
        .args(["--kube-version", kube_version])
        .arg(dir)
        .output()
        .unwrap();
    let report: Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}; {keep}"));
    let mut found: Vec<String> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| api_server(d))
        .map(|d| {
            let file = Path::new(d["file"].as_str().unwrap()).file_name().unwrap();
            let message = d["message"]
                .as_str()
                .unwrap()
                .replace(" of type v2beta2.", " of type v2.")
                .replace(" of type []v2beta2.", " of type []v2.");
            format!(
                "{}:{}:{} {} {} {message}",
                file.to_string_lossy(),
                d["line"],
                d["column"],
                d["rule"].as_str().unwrap(),
                d["field"].as_str().unwrap()
            )
        })
        .collect();
    found.sort();
    found
}

/// `autoscaling/v2beta2` has `v2`'s fields (without `tolerance`, which `v2`
/// gets in 1.33): at 1.25, the last release that serves both, the API server
/// decodes, defaults and validates an HPA the same way in either version. So
/// swapping the version of every HPA written `apiVersion: autoscaling/v2` on
/// its own line changes none of the API-server findings of the mutants.
#[test]
fn v2beta2_mutants_get_the_api_server_findings_of_v2_where_served() {
    let with_v2: Vec<String> = seeds()
        .into_iter()
        .filter(|s| s.contains("apiVersion: autoscaling/v2\n"))
        .collect();
    assert!(with_v2.len() > 10, "{}", with_v2.len());
    let (dir, texts, keep) = mutants_of("v2beta2-mutants", &with_v2);
    let betas = dir.with_extension("v2beta2");
    let _ = std::fs::remove_dir_all(&betas);
    let mut swapped = 0;
    for (i, text) in texts.iter().enumerate() {
        let beta = text
            .replace(
                "apiVersion: autoscaling/v2\n",
                "apiVersion: autoscaling/v2beta2\n",
            )
            .replace(
                "apiVersion: autoscaling/v2\r",
                "apiVersion: autoscaling/v2beta2\r",
            );
        swapped += usize::from(beta != *text);
        write(&betas, &format!("m{i:05}.yaml"), beta);
    }
    assert!(swapped > texts.len() / 2, "{swapped}; {keep}");
    let v2 = server_findings(&dir, "1.25", &keep);
    assert!(!v2.is_empty(), "{keep}");
    assert_eq!(server_findings(&betas, "1.25", &keep), v2, "{keep}");
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&betas).unwrap();
}

/// The API server validated a `v2beta1` HPA in its `v2` shape, which is what
/// `deprecated-api-version`'s fix writes: at 1.24, the mutants of `v2beta1`
/// manifests and the same mutants converted get the same validation findings
/// (rule, field path, message; the positions move with the rewritten text).
/// Bodies that do not decode are left out: their errors name what was
/// written, and the conversion leaves out what it does not know.
#[test]
fn v2beta1_mutants_are_validated_as_their_conversion() {
    let with_v2beta1: Vec<String> = seeds()
        .into_iter()
        .filter(|s| s.contains("autoscaling/v2beta1"))
        .collect();
    assert!(with_v2beta1.len() >= 5, "{}", with_v2beta1.len());
    let (dir, texts, keep) = mutants_of("v2beta1-mutants", &with_v2beta1);
    let converted = dir.with_extension("converted");
    let _ = std::fs::remove_dir_all(&converted);
    for (i, text) in texts.iter().enumerate() {
        write(&converted, &format!("m{i:05}.yaml"), text);
    }
    let output = hpa_lint()
        .args([
            "--kube-version",
            "1.24",
            "--select",
            "deprecated-api-version",
        ])
        .arg("--fix")
        .arg(&converted)
        .output()
        .unwrap();
    assert!(output.status.code().is_some_and(|c| c < 2), "{keep}");
    // file → its validation findings, without positions.
    let validation = |dir: &Path| -> BTreeMap<String, Vec<String>> {
        let mut files: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for finding in server_findings(dir, "1.24", &keep) {
            let (place, rest) = finding.split_once(' ').unwrap();
            let file = place.split(':').next().unwrap().to_owned();
            files.entry(file).or_default().push(rest.to_owned());
        }
        for findings in files.values_mut() {
            findings.sort();
        }
        files
    };
    let (before, after) = (validation(&dir), validation(&converted));
    let decodes = |findings: &Vec<String>| {
        let decoding = ["unknown-field ", "invalid-field-type ", "invalid-quantity "];
        !findings
            .iter()
            .any(|f| decoding.iter().any(|rule| f.starts_with(rule)))
    };
    let none = Vec::new();
    let mut compared = 0;
    for i in 0..texts.len() {
        let file = format!("m{i:05}.yaml");
        let was = before.get(&file).unwrap_or(&none);
        if decodes(was) {
            compared += usize::from(!was.is_empty());
            assert_eq!(after.get(&file).unwrap_or(&none), was, "{file}; {keep}");
        }
    }
    assert!(compared > 10, "{compared}; {keep}");
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&converted).unwrap();
}

/// Every field of a value, outermost first.
fn fields_of(value: &Value, path: FieldPath, out: &mut Vec<FieldPath>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                let field = path.field(key);
                out.push(field.clone());
                fields_of(value, field, out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let index = path.index(i);
                out.push(index.clone());
                fields_of(item, index, out);
            }
        }
        _ => {}
    }
}

/// Values a fix may write: ones YAML reads otherwise unless quoted, text
/// with flow and block syntax, empty and nested collections.
fn any_value(rng: &mut Rng) -> Value {
    rng.pick(&[
        serde_json::json!(5),
        serde_json::json!(-1.5),
        serde_json::json!(true),
        serde_json::json!(null),
        serde_json::json!("web"),
        serde_json::json!("yes"),
        serde_json::json!("010"),
        serde_json::json!("a: b, c"),
        serde_json::json!("- x # y"),
        serde_json::json!(""),
        serde_json::json!("é 🦀\nline"),
        serde_json::json!({}),
        serde_json::json!([]),
        serde_json::json!({"type": "Pods", "value": 4, "periodSeconds": 15}),
        serde_json::json!([{"type": "Percent", "value": 100}, "x", [1]]),
    ])
    .clone()
}

const NEW_KEYS: [&str; 6] = ["x", "name", "behavior", "scaleUp", "selectPolicy", "a b"];

/// A random fix of `value`'s fields: a value set, entries added to a mapping
/// (some under one new key, which the editor writes as one), a field removed
/// or renamed.
fn any_fix(value: &Value, fields: &[FieldPath], rng: &mut Rng) -> Fix {
    let field = rng.pick(fields).clone();
    let edits = match rng.below(4) {
        0 => vec![Edit::Set {
            path: field,
            value: any_value(rng),
        }],
        1 => {
            // Into the field if it is a mapping, else beside it.
            let mapping = if field.lookup(value).is_some_and(Value::is_object) {
                field
            } else {
                field.parent().unwrap_or_default()
            };
            let key = *rng.pick(&NEW_KEYS);
            let under = mapping.field(key);
            (0..=rng.below(3))
                .map(|i| Edit::Set {
                    path: if i % 2 == 0 {
                        under.field(&format!("k{i}"))
                    } else {
                        mapping.field(&format!("k{i}"))
                    },
                    value: any_value(rng),
                })
                .collect()
        }
        2 => vec![Edit::Remove { path: field }],
        _ => vec![Edit::Rename {
            path: field,
            to: (*rng.pick(&NEW_KEYS)).to_owned(),
        }],
    };
    Fix::safe("any", edits)
}

/// The promise of `--fix` at the engine's depth, for any fix on the mutants
/// (block scalars, empty flow mappings, complex keys, anchors, tags and
/// comments between keys among them): a pass either makes a fix or says why
/// not, and what it makes leaves each document readable, one document, and
/// reading as before except the fields the fixes write, which read as written.
#[test]
fn fixes_never_break_a_document() {
    use hpa_lint_rules::fix::apply;
    use hpa_lint_rules::source::compose;
    use hpa_lint_rules::workspace::fix_document;

    let cases = env_number("HPA_LINT_FUZZ_CASES", 300) as usize;
    let seed = env_number("HPA_LINT_FUZZ_SEED", 0x5eed);
    let seeds = seeds();
    let mut rng = Rng(seed ^ 0xf1c5 | 1);
    let (mut made, mut unmade) = (0, Vec::new());
    for case in 0..cases {
        let mut text = rng.pick(&seeds).clone();
        for _ in 0..=rng.below(3) {
            text = mutate(&text, &seeds, &mut rng);
        }
        for chunk in split_documents(&text) {
            let Some(before) = compose(chunk.text, &|_, _| &ALL).value else {
                continue;
            };
            let mut fields = Vec::new();
            fields_of(&before, FieldPath::root(), &mut fields);
            if fields.is_empty() {
                continue;
            }
            let fixes: Vec<Fix> = (0..=rng.below(3))
                .map(|_| any_fix(&before, &fields, &mut rng))
                .collect();
            let root = FieldPath::root();
            let given: Vec<(&FieldPath, &Fix)> = fixes.iter().map(|fix| (&root, fix)).collect();
            let fixed = fix_document(chunk.text, &given);
            let replay = || format!("case {case} (seed {seed}):\n{}\n{fixes:#?}", chunk.text);
            assert_eq!(
                fixed.made.len() + fixed.deferred + fixed.unmade.len(),
                fixes.len(),
                "{}",
                replay()
            );
            let after_text = apply(chunk.text, &fixed.edits);
            let replay = || format!("{}\nbecame:\n{after_text}", replay());
            assert_eq!(split_documents(&after_text).len(), 1, "{}", replay());
            let composed = compose(&after_text, &|_, _| &ALL);
            let after = composed
                .value
                .unwrap_or_else(|| panic!("unreadable: {:?}\n{}", composed.problems, replay()));
            let mut expected = before.clone();
            for &i in &fixed.made {
                for edit in &fixes[i].edits {
                    assert!(edit.apply_to(&mut expected), "{}", replay());
                    // And each field reads as the fix writes it.
                    match edit {
                        Edit::Set { path, value } => {
                            assert_eq!(path.lookup(&after), Some(value), "{}", replay());
                        }
                        Edit::Remove { path } => {
                            assert_eq!(path.lookup(&after), None, "{}", replay());
                        }
                        Edit::Rename { path, to } => {
                            let renamed = path.parent().unwrap_or_default().field(to);
                            assert_eq!(
                                renamed.lookup(&after),
                                path.lookup(&before),
                                "{}",
                                replay()
                            );
                        }
                    }
                }
            }
            assert_eq!(after, expected, "{}", replay());
            made += fixed.made.len();
            unmade.extend(fixed.unmade.into_iter().map(|(_, why)| why.to_string()));
        }
    }
    // Fixes of fields that are there are made, mostly: the editor is not
    // kept safe by refusing.
    eprintln!("{made} fixes made, {} not: {unmade:#?}", unmade.len());
    assert!(made > 4 * unmade.len(), "{made} made, {} not", unmade.len());
}
