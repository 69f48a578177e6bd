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
        key.to_ref().to_string()
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
    let counts = format!(
        "{}, {} and {}",
        plural(summary.errors, "error"),
        plural(summary.warnings, "warning"),
        plural(summary.infos, "info")
    );
    // Never call a run clean when some input was not read.
    if summary.unread > 0 {
        let unread = plural(summary.unread, "input");
        return format!("Could not read {unread}; found {counts} in the {scope} read.");
    }
    if summary.errors + summary.warnings + summary.infos == 0 {
        format!("No problems found in {scope}.")
    } else {
        format!("Found {counts} in {scope}.")
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
        let excerpt = &finding.excerpt;
        let snippet = Snippet::source(excerpt.text.as_str())
            .line_start(finding.line)
            .path(&*finding.file)
            .annotation(
                AnnotationKind::Primary
                    .span(excerpt.highlight.clone())
                    .label(label.as_str()),
            );
        let mut group = level(diagnostic.severity)
            .primary_title(title.as_str())
            .id(diagnostic.rule.name)
            .element(snippet);
        if let Some(help) = &diagnostic.help {
            group = group.element(Level::HELP.message(help.as_ref()));
        }
        let mut rendered = renderer.render(&[group]);
        // The renderer counts columns within the excerpt; a long line's excerpt
        // is a window of it, so put the real column back.
        let shown = excerpt.text[..excerpt.highlight.start].chars().count() + 1;
        if shown != finding.column {
            let place = |column| format!("{}:{}:{column}", finding.file, finding.line);
            rendered = rendered.replacen(&place(shown), &place(finding.column), 1);
        }
        writeln!(out, "{rendered}\n")?;
    }
    writeln!(out, "{}", summary_line(&outcome.summary))
}
