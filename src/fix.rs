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
use std::path::Path;

use hpa_lint::report::{FileEdit, Outcome};
use hpa_lint_rules::Settings;
use hpa_lint_rules::fix::{TextEdit, apply};

use crate::check;
use crate::input::SourceFile;

/// Passes that make fixes, at most: fixes whose results keep bringing up
/// other fixes stop there.
const MAX_PASSES: usize = 10;

/// Lints and fixes until no applicable fix is left (or [`MAX_PASSES`]
/// passes made fixes); `sources` read the fixed text from then on. Returns
/// the last lint's outcome and how many fixes were made in each input that
/// has fixes.
pub fn fix(
    sources: &mut [SourceFile],
    settings: &Settings,
    unsafe_fixes: bool,
) -> (Outcome, BTreeMap<usize, usize>) {
    let mut made: BTreeMap<usize, usize> = BTreeMap::new();
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
            return (outcome, made);
        }
        passes += 1;
        for (input, fixes) in fixes {
            let Ok((fixed, count)) = sources[input].text().map(|t| apply_fixes(&t, fixes)) else {
                continue;
            };
            *made.entry(input).or_default() += count;
            sources[input].set_fixed(Some(fixed));
        }
    }
}

/// The original and fixed text of each input the fixes changed, with how
/// many fixes were made in it.
pub fn changes(
    sources: &[SourceFile],
    made: &BTreeMap<usize, usize>,
) -> impl Iterator<Item = (usize, String, usize)> {
    made.iter().filter_map(|(&input, &count)| {
        let original = sources[input].original_text().ok()?;
        (sources[input].fixed()? != original).then_some((input, original, count))
    })
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

/// Writes the change to an input as a unified diff, with its name on both
/// sides (`patch -p0` applies it).
pub fn write_diff(source: &SourceFile, original: &str, out: &mut dyn Write) -> io::Result<()> {
    let fixed = source.fixed().unwrap_or(original);
    similar::TextDiff::from_lines(original, fixed)
        .unified_diff()
        .header(&source.name, &source.name)
        .to_writer(out)
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
