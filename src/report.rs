//! The findings of a run, where they are, the counts of the summary line,
//! and the exit code they make.

use std::fmt;
use std::io::{self, Write};
use std::ops::Range;
use std::process::ExitCode;
use std::sync::Arc;

use hpa_lint_rules::fix::{Applicability, Fix};
use hpa_lint_rules::source::lines::{ceil_char_boundary, floor_char_boundary, line_around};
use hpa_lint_rules::{Diagnostic, FieldPath, Severity};
use serde::Serialize;

/// Exit code when a finding fails the run.
pub const FINDINGS: u8 = 1;
/// Exit code for usage errors, bad configuration or unreadable input.
pub const TROUBLE: u8 = 2;

/// A diagnostic, and where it is in the input when the input is text.
#[derive(Debug)]
pub struct Finding {
    pub diagnostic: Diagnostic,
    /// `None` for objects read from a cluster: the diagnostic's object names them.
    pub location: Option<Location>,
}

/// A place in a file.
#[derive(Debug)]
pub struct Location {
    pub file: Arc<str>,
    /// Index of the file among the inputs of the run.
    pub input: usize,
    /// 0-based index of the document in its file.
    pub document: usize,
    /// 1-based line and column (in characters).
    pub line: usize,
    pub column: usize,
    /// The source line around the finding, for rendering.
    pub excerpt: Excerpt,
    /// Where the diagnostic's fix applies: the byte range of the document in
    /// the file, and the path of the finding's object in the document
    /// (`items[i]` in a `List`).
    pub document_range: Range<usize>,
    pub object_path: FieldPath,
    /// The diagnostic's fix as changes to this file, in order; empty when it
    /// has none, or none that `--fix` may make here.
    pub edits: Vec<FileEdit>,
    /// Why `--fix` could not make the diagnostic's fix, when it tried and
    /// could not (its edits are then left out).
    pub fix_not_made: Option<String>,
}

/// A 1-based line and column (in characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// A change to a file: the text from `start` up to `end` is replaced by `content`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileEdit {
    pub start: Position,
    /// Just after the last character replaced.
    pub end: Position,
    pub content: String,
}

/// At most this many bytes of a line are kept on each side of a finding.
const EXCERPT_REACH: usize = 80;

/// A finding's source line, cut around the finding when it is long (one-line
/// JSON would otherwise put the whole file into every finding).
#[derive(Debug)]
pub struct Excerpt {
    /// The text shown: the line, or a window of it marked with `…` where cut.
    pub text: String,
    /// Byte range within `text` to underline (always on character boundaries).
    pub highlight: Range<usize>,
}

impl Excerpt {
    /// The line of `text` at byte `offset`, underlining `len` bytes from there.
    pub fn at(text: &str, offset: usize, len: usize) -> Self {
        // Only a window around the caret is shown: the line is looked for no
        // further (one byte more each side tells whether the line goes on).
        let window = floor_char_boundary(text, offset.saturating_sub(EXCERPT_REACH + 1))
            ..ceil_char_boundary(text, offset.saturating_add(2 * EXCERPT_REACH + 1));
        let (text, offset) = (&text[window.clone()], offset.min(window.end) - window.start);
        let offset = floor_char_boundary(text, offset);
        let line = line_around(text, offset);
        let caret = offset - line.start;
        let line = &text[line];
        let end = ceil_char_boundary(line, caret + len.max(1)).max(caret);
        let from = floor_char_boundary(line, caret.saturating_sub(EXCERPT_REACH));
        let to = ceil_char_boundary(
            line,
            end.max(caret + EXCERPT_REACH)
                .min(caret + 2 * EXCERPT_REACH),
        );
        let (open, close) = (
            if from > 0 { "…" } else { "" },
            if to < line.len() { "…" } else { "" },
        );
        let shift = open.len() + caret - from;
        let mut text = format!("{open}{}{close}", &line[from..to]);
        // Kept with every finding: no spare room.
        text.shrink_to_fit();
        Self {
            text,
            highlight: shift..shift + (end.min(to) - caret),
        }
    }
}

/// Counts for the summary line (those by severity are made as the findings
/// are written).
#[derive(Default)]
pub struct Summary {
    /// Fixes `--fix` made (`None` when it was not given).
    pub fixed: Option<usize>,
    /// Whether unsafe fixes are applicable (`--unsafe-fixes`).
    pub unsafe_fixes: bool,
    /// For objects read from a cluster: the kubeconfig context.
    pub context: Option<String>,
    /// For objects read from a cluster: how many HPAs were audited.
    pub hpas: usize,
    /// Files read: not those that could not be read, nor `--context` files.
    pub files: usize,
    pub documents: usize,
    pub objects: usize,
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    /// Inputs that could not be read: the counts above leave them out.
    pub unread: usize,
}

/// The outcome of a run: its findings in order (in a vector, or read back
/// as they are written: [`crate::spill::Sorted`]).
pub struct Outcome<F = Vec<Finding>> {
    pub findings: F,
    pub summary: Summary,
    /// Inputs that could not be read.
    pub input_errors: Vec<String>,
}

/// Standard output or error as a run writes them: a reader that stops
/// early (`hpa-lint … | head`) ends the writing, not the run, so that its
/// exit code and what it tells on the other stream are those of the whole
/// output. Other errors (a full disk) still fail the write.
pub struct Closable<W> {
    out: W,
    closed: bool,
}

impl<W: Write> Write for Closable<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.closed {
            match self.out.write(buf) {
                Err(error) if error.kind() == io::ErrorKind::BrokenPipe => self.closed = true,
                written => return written,
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.closed {
            match self.out.flush() {
                Err(error) if error.kind() == io::ErrorKind::BrokenPipe => self.closed = true,
                flushed => return flushed,
            }
        }
        Ok(())
    }
}

/// Standard output, for a run's output ([`Closable`]).
pub fn stdout() -> Closable<io::StdoutLock<'static>> {
    Closable {
        out: io::stdout().lock(),
        closed: false,
    }
}

/// Standard error, for findings written there ([`Closable`]).
pub fn stderr() -> Closable<io::StderrLock<'static>> {
    Closable {
        out: io::stderr().lock(),
        closed: false,
    }
}

/// Writes a line on standard error, as `eprintln!` does, but a standard
/// error that cannot be written (closed: `2>&1 | head`; full) does not end
/// the run or change its exit code: nothing else could be told of it. Used
/// through [`crate::tell!`].
pub fn tell(line: fmt::Arguments) {
    let _ = writeln!(io::stderr(), "{line}");
}

/// The process's exit code for the result of a run; an error is printed on
/// standard error after `program: `, and exits with [`TROUBLE`].
pub fn exit(program: &str, result: anyhow::Result<u8>) -> ExitCode {
    match result {
        Ok(code) => ExitCode::from(code),
        // A reader that closed standard output or error is not an error:
        // [`Closable`] took it, and the run went on. Any other broken pipe
        // (a connection, a child process) is.
        Err(error) => {
            crate::tell!("{program}: {error:#}");
            ExitCode::from(TROUBLE)
        }
    }
}

/// Sorts findings by place (file and position, or object) and drops
/// repeats (an HPA and its twin can report the same about a target).
/// Findings on missing fields share their parent's position (and API-server
/// messages such as `Required value` name no field): the path tells them apart.
pub fn sort_findings(findings: &mut Vec<Finding>) {
    sort_by(findings, |a, b| a.sort_key().cmp(&b.sort_key()));
    findings.dedup_by(|a, b| a.sort_key() == b.sort_key());
}

/// Sorts `items` stably. The positions are sorted, not the items: sorting
/// large values would take a scratch copy of half of them.
pub fn sort_by<T>(items: &mut [T], compare: impl Fn(&T, &T) -> std::cmp::Ordering) {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&a, &b| compare(&items[a], &items[b]));
    permute(items, &mut order);
}

/// Puts `items[order[i]]` at `i`, in place, cycle by cycle (`order` is
/// spent: each entry is marked done as its place is filled).
fn permute<T>(items: &mut [T], order: &mut [usize]) {
    const DONE: usize = usize::MAX;
    for start in 0..items.len() {
        let mut i = start;
        while order[i] != DONE {
            let from = std::mem::replace(&mut order[i], DONE);
            if from == start {
                break;
            }
            items.swap(i, from);
            i = from;
        }
    }
}

/// The parts of a finding it is sorted by, in order: its place (file, line
/// and column), its object (namespace, name and kind), and what it says.
pub type SortKey<'a> = (
    (Option<&'a str>, usize, usize),
    (&'a str, &'a str, &'a str),
    (&'static str, &'a str, &'a FieldPath),
);

impl Finding {
    /// Borrowed: a key made for every finding at once would copy them all.
    pub fn sort_key(&self) -> SortKey<'_> {
        let (file, line, column) = self
            .location
            .as_ref()
            .map_or((None, 0, 0), |l| (Some(&*l.file), l.line, l.column));
        let d = &self.diagnostic;
        let subject = &d.subject.key;
        (
            (file, line, column),
            (&subject.namespace, &subject.name, &subject.kind),
            (d.rule.name, &d.message, &d.path),
        )
    }

    /// The finding's fix and its changes to the finding's file, when `--fix`
    /// can make them.
    pub fn fix(&self) -> Option<(&Fix, &[FileEdit])> {
        let edits = &self.location.as_ref()?.edits;
        let fix = self.diagnostic.fix.as_ref()?;
        (!edits.is_empty()).then_some((fix, edits.as_slice()))
    }

    /// Why `--fix` could not make the finding's fix, if it could not.
    pub fn fix_not_made(&self) -> Option<&str> {
        self.location.as_ref()?.fix_not_made.as_deref()
    }

    /// The fix `--fix` makes: a safe one, or any with `--unsafe-fixes`.
    pub fn applicable_fix(&self, unsafe_fixes: bool) -> Option<&Fix> {
        self.fix()
            .map(|(fix, _)| fix)
            .filter(|fix| unsafe_fixes || fix.applicability == Applicability::Safe)
    }
}

impl Summary {
    /// Counts a finding by severity.
    pub fn count(&mut self, finding: &Finding) {
        match finding.diagnostic.severity {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
            Severity::Info => self.infos += 1,
        }
    }

    /// The exit code: [`TROUBLE`] when some input was not read, else
    /// [`FINDINGS`] for an error (or a warning, with `deny_warnings`), else 0.
    pub fn exit_code(&self, deny_warnings: bool) -> u8 {
        if self.unread > 0 {
            TROUBLE
        } else if self.errors > 0 || (deny_warnings && self.warnings > 0) {
            FINDINGS
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permute_puts_each_item_where_its_order_says() {
        let mut items = vec!['a', 'b', 'c', 'd', 'e', 'f'];
        // Two cycles (0 → 2 → 4 → 0, 1 → 5 → 1) and an item in its place (3).
        permute(&mut items, &mut [2, 5, 4, 3, 0, 1]);
        assert_eq!(items, ['c', 'f', 'e', 'd', 'a', 'b']);
    }

    #[test]
    fn excerpts_are_short_and_cut_on_characters() {
        let excerpt = Excerpt::at("a: é\nb: [x\n", 3, 2);
        assert_eq!(
            (excerpt.text.as_str(), excerpt.highlight.clone()),
            ("a: é", 3..5)
        );
        let long = format!(
            "{{{}\"k\": 1{}}}",
            "\"é\": 0, ".repeat(500),
            ", \"x\": 2".repeat(500)
        );
        let at = long.find("\"k\"").unwrap();
        let excerpt = Excerpt::at(&long, at, 3);
        assert!(
            excerpt.text.len() < 2 * EXCERPT_REACH + 16,
            "{}",
            excerpt.text
        );
        assert!(excerpt.text.starts_with('…') && excerpt.text.ends_with('…'));
        assert_eq!(&excerpt.text[excerpt.highlight.clone()], "\"k\"");
        // An offset inside a character, or past the end, still gives boundaries.
        for offset in 0..12 {
            let excerpt = Excerpt::at("é€\u{2028}x", offset, 1);
            assert!(excerpt.text.is_char_boundary(excerpt.highlight.start));
            assert!(excerpt.text.is_char_boundary(excerpt.highlight.end));
        }
    }
}
