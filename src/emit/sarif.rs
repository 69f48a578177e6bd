//! `--format sarif`: SARIF 2.1.0 with the rule metadata, for GitHub code
//! scanning and other SARIF consumers.

use std::io::{self, Write};

use hpa_lint_rules::Severity;
use hpa_lint_rules::quote::shown;
use hpa_lint_rules::rules::ALL;
use serde_json::{Value, json};

use crate::emit::text::message;
use crate::report::{Finding, Outcome};

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

pub fn emit(outcome: &Outcome, out: &mut dyn Write) -> io::Result<()> {
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
    let results: Vec<Value> = outcome
        .findings
        .iter()
        .map(|finding| {
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
            "results": results,
        }],
    });
    serde_json::to_writer_pretty(&mut *out, &log)?;
    writeln!(out)
}
