//! rustc-like text: the source line with a caret under the field, the rule
//! name, the help line, and a one-line summary.

use std::io::{self, Write};

use annotate_snippets::{AnnotationKind, Level, Renderer, Snippet};
use hpa_lint_rules::Severity;

use crate::check::{Finding, Outcome, Summary};

fn level(severity: Severity) -> Level<'static> {
    match severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
        Severity::Info => Level::INFO,
    }
}

/// The title: API-server findings read like kubectl's `<path>: <message>`.
pub fn title(finding: &Finding) -> String {
    let diagnostic = &finding.diagnostic;
    if diagnostic.reason.is_some() {
        diagnostic.field_message()
    } else {
        diagnostic.message.clone()
    }
}

fn label(finding: &Finding) -> String {
    let key = &finding.diagnostic.subject.key;
    let object = if key.kind.is_empty() {
        String::new()
    } else {
        format!("{} {}/{}", key.kind, key.namespace, key.name)
    };
    let field = finding.diagnostic.path.to_string();
    match (field.is_empty(), object.is_empty()) {
        (true, _) => object,
        (false, true) => field,
        (false, false) => format!("{field} ({object})"),
    }
}

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

pub fn summary_line(summary: &Summary) -> String {
    let scope = format!(
        "{} ({}, {})",
        plural(summary.files, "file"),
        plural(summary.documents, "document"),
        plural(summary.objects, "object")
    );
    if summary.errors + summary.warnings + summary.infos == 0 {
        format!("No problems found in {scope}.")
    } else {
        format!(
            "Found {}, {} and {} in {scope}.",
            plural(summary.errors, "error"),
            plural(summary.warnings, "warning"),
            plural(summary.infos, "info")
        )
    }
}

pub fn emit(outcome: &Outcome, color: bool, out: &mut dyn Write) -> io::Result<()> {
    let renderer = if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    for finding in &outcome.findings {
        let diagnostic = &finding.diagnostic;
        let title = title(finding);
        let label = label(finding);
        let snippet = Snippet::source(finding.source_line.as_str())
            .line_start(finding.line)
            .path(&*finding.file)
            .annotation(
                AnnotationKind::Primary
                    .span(finding.highlight.clone())
                    .label(label.as_str()),
            );
        let mut group = level(diagnostic.severity)
            .primary_title(title.as_str())
            .id(diagnostic.rule.name)
            .element(snippet);
        if let Some(help) = &diagnostic.help {
            group = group.element(Level::HELP.message(help.as_str()));
        }
        writeln!(out, "{}\n", renderer.render(&[group]))?;
    }
    writeln!(out, "{}", summary_line(&outcome.summary))
}
