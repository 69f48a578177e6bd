//! `--fix` and `--diff`: the findings' fixes, made to the text of the inputs.
//!
//! Fixes are made in memory, pass by pass. Each pass lints the current text
//! (so a fix sees what the others did, in its file and in the files it looks
//! up), then makes every applicable fix that does not overlap one made before
//! it in the same file; the others wait for the next pass. Only the edited
//! byte ranges change, and each lies in the document of its finding. Files
//! are written once, at the end. What a fix changes is the rules' business
//! (`hpa_lint_rules::fix`): nothing here knows about HPAs.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use hpa_lint::report::{FileEdit, Outcome};
use hpa_lint_rules::Settings;
use hpa_lint_rules::fix::{TextEdit, apply};

use crate::check;
use crate::input::SourceFile;

/// Passes that make fixes, at most: fixes whose results keep bringing up
/// other fixes stop there.
const MAX_PASSES: usize = 10;

/// An input whose text the fixes changed.
pub struct Change {
    /// Index among the inputs.
    pub input: usize,
    /// `None` for standard input.
    pub path: Option<PathBuf>,
    pub original: String,
    pub fixed: String,
    /// How many fixes were made.
    pub fixes: usize,
}

/// Lints and fixes until no applicable fix is left (or [`MAX_PASSES`]
/// passes made fixes); `sources` read the fixed text from then on. Returns
/// the last lint's outcome and the inputs whose text changed.
pub fn fix(
    sources: &mut [SourceFile],
    settings: &Settings,
    unsafe_fixes: bool,
) -> (Outcome, Vec<Change>) {
    let mut changes: BTreeMap<usize, Change> = BTreeMap::new();
    let mut passes = 0;
    loop {
        let outcome = check::run(sources, settings);
        let mut fixes: BTreeMap<usize, Vec<&[FileEdit]>> = BTreeMap::new();
        for finding in &outcome.findings {
            if let (Some(edits), Some(location)) =
                (finding.applicable_fix(unsafe_fixes), &finding.location)
            {
                fixes.entry(location.input).or_default().push(edits);
            }
        }
        if fixes.is_empty() || passes == MAX_PASSES {
            let changes = changes
                .into_values()
                .filter(|c| c.fixed != c.original)
                .collect();
            return (outcome, changes);
        }
        passes += 1;
        for (input, fixes) in fixes {
            let source = &mut sources[input];
            let Ok(text) = source.text() else {
                continue;
            };
            let (fixed, made) = apply_fixes(&text, fixes);
            let change = changes.entry(input).or_insert_with(|| Change {
                input,
                path: source.path().map(Path::to_path_buf),
                original: text,
                fixed: String::new(),
                fixes: 0,
            });
            change.fixes += made;
            change.fixed.clone_from(&fixed);
            source.set_text(fixed);
        }
    }
}

/// From the first edit's start to the last one's end.
fn hull(edits: &[FileEdit]) -> (usize, usize) {
    (edits[0].range.start, edits[edits.len() - 1].range.end)
}

/// `text` with the fixes (each its edits, in order) made, and how many were
/// made: each whole or not at all, in the order of the text; one that
/// overlaps or touches an earlier one is left for the next pass.
fn apply_fixes(text: &str, mut fixes: Vec<&[FileEdit]>) -> (String, usize) {
    fixes.sort_by_key(|edits| hull(edits));
    let mut made = Vec::new();
    let mut count = 0;
    let mut end = None;
    for edits in fixes {
        let (start, stop) = hull(edits);
        // A fix computed on other text (the file changed since) does not fit.
        let fits = edits.iter().all(|e| text.get(e.range.clone()).is_some());
        if end.is_some_and(|end| start <= end) || !fits {
            continue;
        }
        end = Some(stop);
        count += 1;
        made.extend(edits.iter().map(|e| TextEdit {
            range: e.range.clone(),
            text: e.content.clone(),
        }));
    }
    (apply(text, &made), count)
}

/// Replaces the file at `path` with `text` at once: writes a temporary file
/// in its directory, with its permissions, and renames it over the file. A
/// symbolic link stays a link: the file it names is replaced.
pub fn write_file(path: &Path, text: &str) -> io::Result<()> {
    let path = std::fs::canonicalize(path)?;
    let permissions = std::fs::metadata(&path)?.permissions();
    let mut file = tempfile::NamedTempFile::new_in(path.parent().unwrap_or(Path::new(".")))?;
    file.write_all(text.as_bytes())?;
    file.as_file().set_permissions(permissions)?;
    file.persist(&path).map_err(|e| e.error)?;
    Ok(())
}

/// Writes the changes as a unified diff, each input's name on both sides
/// (`patch -p0` applies it).
pub fn write_diff(
    changes: &[Change],
    sources: &[SourceFile],
    out: &mut dyn Write,
) -> io::Result<()> {
    for change in changes {
        let name = &sources[change.input].name;
        similar::TextDiff::from_lines(&change.original, &change.fixed)
            .unified_diff()
            .header(name, name)
            .to_writer(&mut *out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hpa_lint::report::Position;

    fn edit(range: std::ops::Range<usize>, content: &str) -> FileEdit {
        let at = Position { line: 1, column: 1 };
        FileEdit {
            range,
            start: at,
            end: at,
            content: content.to_owned(),
        }
    }

    #[test]
    fn overlapping_and_touching_fixes_wait_for_the_next_pass() {
        let text = "a: 1\nb: 2\nc: 3\n";
        let first = [edit(3..4, "10"), edit(13..14, "30")];
        let inside = [edit(8..9, "20")];
        let touching = [edit(14..14, " # three")];
        let (fixed, made) = apply_fixes(text, vec![&inside, &first, &touching]);
        // `first` spans `inside` and comes first in the text: `inside` waits.
        assert_eq!((fixed.as_str(), made), ("a: 10\nb: 2\nc: 30\n", 1));
        let (fixed, made) = apply_fixes(text, vec![&inside, &touching]);
        assert_eq!((fixed.as_str(), made), ("a: 1\nb: 20\nc: 3 # three\n", 2));
    }

    #[test]
    fn fixes_that_do_not_fit_the_text_are_dropped() {
        let (fixed, made) = apply_fixes("a: é\n", vec![&[edit(4..5, "e")], &[edit(9..10, "x")]]);
        assert_eq!((fixed.as_str(), made), ("a: é\n", 0));
    }
}
