//! `--format json`: one JSON document. This is a contract other tools read;
//! the keys are documented in docs/lint.md and must stay stable.

use std::borrow::Cow;
use std::io::{self, Write};

use hpa_lint_rules::ObjectKey;
use hpa_lint_rules::quote::shown;
use serde::Serialize;

use crate::report::{self, Finding, Position};

#[derive(Serialize)]
struct Entry<'a> {
    rule: &'static str,
    severity: &'static str,
    /// `null` (and so are the position keys) for objects read from a cluster.
    file: Option<&'a str>,
    document: Option<usize>,
    line: Option<usize>,
    column: Option<usize>,
    object: Shown<'a>,
    field: String,
    reason: Option<&'static str>,
    message: &'a str,
    help: Option<&'a str>,
    /// What `--fix` (or `--fix --unsafe-fixes`) changes in `file`.
    fix: Option<Fix<'a>>,
    /// Why `--fix` could not make the finding's fix, when it could not.
    #[serde(rename = "fixNotMade")]
    fix_not_made: Option<&'a str>,
}

#[derive(Serialize)]
struct Fix<'a> {
    title: &'a str,
    applicability: &'static str,
    edits: Vec<Edit<'a>>,
}

#[derive(Serialize)]
struct Edit<'a> {
    start: Position,
    end: Position,
    content: &'a str,
}

impl<'a> Entry<'a> {
    fn of(f: &'a Finding) -> Self {
        Entry {
            rule: f.diagnostic.rule.name,
            severity: f.diagnostic.severity.as_str(),
            file: f.location.as_ref().map(|l| &*l.file),
            document: f.location.as_ref().map(|l| l.document),
            line: f.location.as_ref().map(|l| l.line),
            column: f.location.as_ref().map(|l| l.column),
            object: Shown::of(&f.diagnostic.subject.key),
            field: f.diagnostic.path.to_string(),
            reason: f.diagnostic.reason.map(|r| r.as_str()),
            message: &f.diagnostic.message,
            help: f.diagnostic.help.as_deref(),
            fix: Fix::of(f),
            fix_not_made: f.fix_not_made(),
        }
    }
}

impl<'a> Fix<'a> {
    fn of(finding: &'a Finding) -> Option<Self> {
        let (fix, edits) = finding.fix()?;
        Some(Self {
            title: &fix.title,
            applicability: fix.applicability.as_str(),
            edits: edits
                .iter()
                .map(|e| Edit {
                    start: e.start,
                    end: e.end,
                    content: &e.content,
                })
                .collect(),
        })
    }
}

/// An object's identity, long values cut as messages cut them.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Shown<'a> {
    api_version: Cow<'a, str>,
    kind: Cow<'a, str>,
    namespace: Cow<'a, str>,
    name: Cow<'a, str>,
}

impl<'a> Shown<'a> {
    fn of(key: &'a ObjectKey) -> Self {
        Self {
            api_version: shown(&key.api_version),
            kind: shown(&key.kind),
            namespace: shown(&key.namespace),
            name: shown(&key.name),
        }
    }
}

#[derive(Serialize)]
struct Summary<'a> {
    files: usize,
    documents: usize,
    objects: usize,
    errors: usize,
    warnings: usize,
    /// Inputs that could not be read (their errors go to standard error).
    unread: usize,
    /// Fixes made, with `--fix`.
    #[serde(skip_serializing_if = "Option::is_none")]
    fixed: Option<usize>,
    /// For objects read from a cluster: the kubeconfig context.
    #[serde(skip_serializing_if = "Option::is_none")]
    context: Option<&'a str>,
    /// For objects read from a cluster: the HPAs audited.
    #[serde(skip_serializing_if = "Option::is_none")]
    hpas: Option<usize>,
}

/// The document, written entry by entry: `{"diagnostics": [...], "summary":
/// {...}}`, pretty-printed as serde_json prints it whole.
pub struct Writer {
    diagnostics: Array,
}

impl Writer {
    pub fn start(out: &mut dyn Write) -> io::Result<Self> {
        out.write_all(b"{\n  \"diagnostics\": ")?;
        Ok(Self {
            diagnostics: Array::new(1),
        })
    }

    pub fn write(&mut self, finding: &Finding, out: &mut dyn Write) -> io::Result<()> {
        self.diagnostics.push(&Entry::of(finding), out)
    }

    pub fn finish(self, summary: &report::Summary, out: &mut dyn Write) -> io::Result<()> {
        self.diagnostics.close(out)?;
        out.write_all(b",\n  \"summary\": ")?;
        let summary = Summary {
            files: summary.files,
            documents: summary.documents,
            objects: summary.objects,
            errors: summary.errors,
            warnings: summary.warnings,
            unread: summary.unread,
            fixed: summary.fixed,
            context: summary.context.as_deref(),
            hpas: summary.context.is_some().then_some(summary.hpas),
        };
        pretty(&summary, 1, &mut Vec::new(), out)?;
        out.write_all(b"\n}\n")
    }
}

/// A pretty-printed JSON array written value by value, as serde_json prints
/// it `depth` levels into a document (two spaces a level).
pub struct Array {
    depth: usize,
    empty: bool,
    /// A value's text before it is indented.
    buf: Vec<u8>,
}

impl Array {
    pub fn new(depth: usize) -> Self {
        Self {
            depth,
            empty: true,
            buf: Vec::new(),
        }
    }

    pub fn push(&mut self, value: &impl Serialize, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(if self.empty { b"[\n" } else { b",\n" })?;
        self.empty = false;
        out.write_all(indent(self.depth + 1))?;
        pretty(value, self.depth + 1, &mut self.buf, out)
    }

    pub fn close(self, out: &mut dyn Write) -> io::Result<()> {
        if self.empty {
            return out.write_all(b"[]");
        }
        out.write_all(b"\n")?;
        out.write_all(indent(self.depth))?;
        out.write_all(b"]")
    }
}

/// The indentation of a line `depth` levels in.
fn indent(depth: usize) -> &'static [u8] {
    const SPACES: &[u8] = b"                ";
    &SPACES[..2 * depth]
}

/// Writes `value` pretty-printed `depth` levels in: each line after the
/// first is indented (JSON strings hold no raw line breaks). `buf` holds its
/// text before.
fn pretty(
    value: &impl Serialize,
    depth: usize,
    buf: &mut Vec<u8>,
    out: &mut dyn Write,
) -> io::Result<()> {
    buf.clear();
    serde_json::to_writer_pretty(&mut *buf, value)?;
    let mut line = 0;
    for end in memchr::memchr_iter(b'\n', buf) {
        out.write_all(&buf[line..=end])?;
        out.write_all(indent(depth))?;
        line = end + 1;
    }
    out.write_all(&buf[line..])
}
