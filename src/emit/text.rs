//! rustc-like text: the source line with a caret under the field, the rule
//! name, the help line, and a one-line summary.

use std::io::{self, Write};

use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};
use hpa_lint_rules::Severity;
use hpa_lint_rules::fix::Applicability;
use hpa_lint_rules::quote::shown;

use crate::report::{Finding, Location, Summary};

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

/// The title with the help line and why a fix was not made, for formats
/// with one message per finding.
pub fn message(finding: &Finding) -> String {
    let mut message = title(finding);
    if let Some(help) = &finding.diagnostic.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    if let Some(note) = finding.fix_not_made() {
        message.push_str("\nnote: ");
        message.push_str(note);
    }
    message
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

/// `namespace/kind/name: field`: how findings about objects read from a
/// cluster are placed.
pub fn object_field(finding: &Finding) -> String {
    let diagnostic = &finding.diagnostic;
    let key = &diagnostic.subject.key;
    let object = format!(
        "{}/{}/{}",
        shown(&key.namespace),
        shown(&key.kind),
        shown(&key.name)
    );
    if diagnostic.path.segments().is_empty() {
        object
    } else {
        format!("{object}: {}", diagnostic.path)
    }
}

/// `text` with its control characters (a carriage return, an escape
/// sequence) escaped, so that a message shows them rather than obeys them.
pub fn escaped(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            shown.extend(c.escape_default());
        } else {
            shown.push(c);
        }
    }
    shown
}

/// `1 file`, `2 files`.
pub fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

pub fn summary_line(summary: &Summary) -> String {
    let scope = match &summary.context {
        Some(context) => format!(
            "{} ({}) of context `{context}`",
            plural(summary.hpas, "HPA"),
            plural(summary.objects, "object")
        ),
        None => format!(
            "{} ({}, {})",
            plural(summary.files, "file"),
            plural(summary.documents, "document"),
            plural(summary.objects, "object")
        ),
    };
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

/// The source line of a finding with a caret under the field.
fn snippet<'a>(
    location: &'a Location,
    label: &'a str,
) -> Snippet<'a, annotate_snippets::Annotation<'a>> {
    let excerpt = &location.excerpt;
    Snippet::source(excerpt.text.as_str())
        .line_start(location.line)
        .path(&*location.file)
        .annotation(
            AnnotationKind::Primary
                .span(excerpt.highlight.clone())
                .label(label),
        )
}

fn render(renderer: &Renderer, group: Group<'_>, location: Option<&Location>) -> String {
    let rendered = renderer.render(&[group]);
    let Some(location) = location else {
        return rendered;
    };
    // The renderer counts columns within the excerpt; a long line's excerpt
    // is a window of it, so put the real column back.
    let excerpt = &location.excerpt;
    let shown = excerpt.text[..excerpt.highlight.start].chars().count() + 1;
    if shown == location.column {
        return rendered;
    }
    let place = |column| format!("{}:{}:{column}", location.file, location.line);
    rendered.replacen(&place(shown), &place(location.column), 1)
}

/// Findings as rustc-like snippets, then the summary line and what `--fix`
/// can make of them.
pub struct Writer {
    renderer: Renderer,
    /// Fixes of the findings written, safe and unsafe.
    safe: usize,
    unsafe_: usize,
}

impl Writer {
    pub fn new(color: bool) -> Self {
        let renderer = if color {
            Renderer::styled()
        } else {
            Renderer::plain()
        };
        Self {
            renderer,
            safe: 0,
            unsafe_: 0,
        }
    }

    pub fn write(
        &mut self,
        finding: &Finding,
        summary: &Summary,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let diagnostic = &finding.diagnostic;
        // ruff's mark of what `--fix` makes.
        let title = match finding.applicable_fix(summary.unsafe_fixes) {
            Some(_) => format!("[*] {}", title(finding)),
            None => title(finding),
        };
        let label = label(finding);
        let place = object_field(finding);
        let group = level(diagnostic.severity)
            .primary_title(title.as_str())
            .id(diagnostic.rule.name);
        let mut group = match &finding.location {
            Some(location) => group.element(snippet(location, &label)),
            None => group.element(Origin::path(place.as_str())),
        };
        if let Some(help) = &diagnostic.help {
            group = group.element(Level::HELP.message(help.as_ref()));
        }
        if let Some((fix, _)) = finding.fix() {
            let name = match fix.applicability {
                Applicability::Safe => {
                    self.safe += 1;
                    "fix"
                }
                Applicability::Unsafe => {
                    self.unsafe_ += 1;
                    "unsafe fix"
                }
            };
            group = group.element(Level::HELP.with_name(name).message(fix.title.as_ref()));
        }
        if let Some(note) = finding.fix_not_made() {
            group = group.element(Level::NOTE.message(note));
        }
        let rendered = render(&self.renderer, group, finding.location.as_ref());
        writeln!(out, "{rendered}\n")
    }

    pub fn finish(self, summary: &Summary, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "{}", summary_line(summary))?;
        for line in self.fix_lines(summary) {
            writeln!(out, "{line}")?;
        }
        Ok(())
    }

    /// What `--fix` made, and what it can make of the findings shown.
    fn fix_lines(&self, summary: &Summary) -> Vec<String> {
        let mut lines: Vec<String> = summary
            .fixed
            .map(|n| format!("Fixed {}.", plural(n, "finding")))
            .into_iter()
            .collect();
        let (now, more) = if summary.unsafe_fixes {
            (self.safe + self.unsafe_, 0)
        } else {
            (self.safe, self.unsafe_)
        };
        let command = if summary.unsafe_fixes {
            "`--fix --unsafe-fixes`"
        } else {
            "`--fix`"
        };
        lines.extend(match (now, more) {
            (0, 0) => None,
            (0, more) => Some(format!("{more} fixable with `--fix --unsafe-fixes`.")),
            (now, 0) => Some(format!("[*] {now} fixable with {command}.")),
            (now, more) => Some(format!(
                "[*] {now} fixable with `--fix` ({more} more with `--unsafe-fixes`)."
            )),
        });
        lines
    }
}
