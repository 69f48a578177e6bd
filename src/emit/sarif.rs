//! `--format sarif`: SARIF 2.1.0 with the rule metadata, for GitHub code
//! scanning and other SARIF consumers.

use std::io::{self, Write};

use hpa_lint_rules::Severity;
use hpa_lint_rules::quote::shown;
use hpa_lint_rules::rules::ALL;
use serde_json::{Value, json};

use crate::emit::json::Array;
use crate::emit::text::message;
use crate::report::Finding;

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";
const INFORMATION_URI: &str = "https://github.com/hpa-lint/hpa-lint";

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// A relative URI reference for a path (forward slashes, percent-encoded).
fn uri(path: &str) -> String {
    let path = path.strip_prefix("./").unwrap_or(path).replace('\\', "/");
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// A finding's fix as a SARIF `fix`: its edits as replacements of regions
/// (the end column is the one after the region, as SARIF counts).
fn fix(finding: &Finding) -> Option<Value> {
    let ((fix, edits), location) = finding.fix().zip(finding.location.as_ref())?;
    let replacements: Vec<Value> = edits
        .iter()
        .map(|edit| {
            json!({
                "deletedRegion": {
                    "startLine": edit.start.line,
                    "startColumn": edit.start.column,
                    "endLine": edit.end.line,
                    "endColumn": edit.end.column,
                },
                "insertedContent": {"text": edit.content},
            })
        })
        .collect();
    Some(json!({
        "description": {"text": fix.title},
        "artifactChanges": [{
            "artifactLocation": {"uri": uri(&location.file)},
            "replacements": replacements,
        }],
        "properties": {"applicability": fix.applicability.as_str()},
    }))
}

/// The log, written result by result: the rules and the frame around the
/// results are written whole, as serde_json prints them.
pub struct Writer {
    results: Array,
    /// What follows the results.
    end: String,
}

impl Writer {
    pub fn start(out: &mut dyn Write) -> io::Result<Self> {
        let rules: Vec<Value> = ALL
            .iter()
            .map(|rule| {
                json!({
                    "id": rule.name,
                    "name": rule.name,
                    "shortDescription": {"text": rule.summary},
                    "fullDescription": {"text": rule.summary},
                    "help": {"text": rule.docs, "markdown": rule.docs},
                    "defaultConfiguration": {"level": level(rule.severity)},
                    "properties": {"category": rule.category.as_str()},
                })
            })
            .collect();
        let log = json!({
            "$schema": SCHEMA,
            "version": "2.1.0",
            "runs": [{
                "tool": {"driver": {
                    "name": "hpa-lint",
                    "version": env!("CARGO_PKG_VERSION"),
                    "informationUri": INFORMATION_URI,
                    "rules": rules,
                }},
                // Columns count characters, in locations and fixes alike.
                "columnKind": "unicodeCodePoints",
                "results": [],
            }],
        });
        let frame = serde_json::to_string_pretty(&log)?;
        // The last key of the log (a key, not in a string: there its quotes
        // would be escaped), followed by its empty array.
        let results = frame.rfind("\"results\": []").expect("the log has results");
        let (start, end) = frame.split_at(results + "\"results\": ".len());
        out.write_all(start.as_bytes())?;
        Ok(Self {
            // In `runs[0]`: three levels in.
            results: Array::new(3),
            end: end["[]".len()..].to_owned(),
        })
    }

    pub fn write(&mut self, finding: &Finding, out: &mut dyn Write) -> io::Result<()> {
        self.results.push(&result(finding), out)
    }

    pub fn finish(self, out: &mut dyn Write) -> io::Result<()> {
        self.results.close(out)?;
        out.write_all(self.end.as_bytes())?;
        writeln!(out)
    }
}

/// A finding as a SARIF result.
fn result(finding: &Finding) -> Value {
    let diagnostic = &finding.diagnostic;
    let rule_index = ALL.iter().position(|r| r.name == diagnostic.rule.name);
    let text = message(finding);
    let key = &diagnostic.subject.key;
    // Objects read from a cluster have only a logical location.
    let mut location = match &finding.location {
        Some(l) => json!({
            "physicalLocation": {
                "artifactLocation": {"uri": uri(&l.file)},
                "region": {"startLine": l.line, "startColumn": l.column},
            },
        }),
        None => json!({}),
    };
    // Findings made while reading (a template, a syntax error) may have no object.
    if !key.kind.is_empty() {
        location["logicalLocations"] = json!([{
            "name": diagnostic.path.to_string(),
            "fullyQualifiedName": format!("{}/{}/{}:{}", shown(&key.kind), shown(&key.namespace), shown(&key.name), diagnostic.path),
            "kind": "member",
        }]);
    }
    let mut result = json!({
        "ruleId": diagnostic.rule.name,
        "ruleIndex": rule_index,
        "level": level(diagnostic.severity),
        "message": {"text": text},
        "locations": [location],
        "partialFingerprints": {
            "hpaLintObjectField/v1": format!("{}/{}/{}/{}/{}", diagnostic.rule.name, shown(&key.kind), shown(&key.namespace), shown(&key.name), diagnostic.path),
        },
    });
    if let Some(fix) = fix(finding) {
        result["fixes"] = json!([fix]);
    }
    result
}
