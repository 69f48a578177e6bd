//! `--fix` and `--diff`: the findings' fixes, made to the text of the inputs.
//!
//! Fixes are made in memory, pass by pass. Each pass lints the current text
//! (so a fix sees what the others did, in its file and in the files it looks
//! up), then makes every applicable fix that does not overlap one made before
//! it in the same document ([`fix_document`]); the others wait for the next
//! pass. Only the edited byte ranges change, and each lies in the document
//! of its finding. Files are written once, at the end. What a fix changes is
//! the rules' business: nothing here knows about HPAs.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::ops::Range;
use std::path::Path;

use hpa_lint::report::Outcome;
use hpa_lint_rules::fix::{Fix, TextEdit, apply};
use hpa_lint_rules::workspace::fix_document;
use hpa_lint_rules::{FieldPath, Settings};

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
        let fixes = by_document(&outcome, unsafe_fixes);
        if fixes.is_empty() || passes == MAX_PASSES {
            return (outcome, made);
        }
        passes += 1;
        for (input, documents) in fixes {
            let Ok((fixed, count)) = sources[input].text().map(|t| fix_text(&t, &documents)) else {
                continue;
            };
            *made.entry(input).or_default() += count;
            sources[input].set_fixed(Some(fixed));
        }
    }
}

/// The fixes of one document: its byte range in the file, and each fix with
/// the path of its object in the document.
type DocumentFixes<'a> = (Range<usize>, Vec<(&'a FieldPath, &'a Fix)>);

/// The applicable fixes of the findings, by input and document.
fn by_document(
    outcome: &Outcome,
    unsafe_fixes: bool,
) -> BTreeMap<usize, BTreeMap<usize, DocumentFixes<'_>>> {
    let mut fixes: BTreeMap<usize, BTreeMap<usize, DocumentFixes<'_>>> = BTreeMap::new();
    for finding in &outcome.findings {
        let (Some(fix), Some(location)) = (finding.applicable_fix(unsafe_fixes), &finding.location)
        else {
            continue;
        };
        fixes
            .entry(location.input)
            .or_default()
            .entry(location.document)
            .or_insert_with(|| (location.document_range.clone(), Vec::new()))
            .1
            .push((&location.object_path, fix));
    }
    fixes
}

/// `text` with the fixes made, document by document, in one pass (those that
/// overlap one made before wait for the next), and how many were made.
fn fix_text(text: &str, documents: &BTreeMap<usize, DocumentFixes<'_>>) -> (String, usize) {
    let mut edits = Vec::new();
    let mut count = 0;
    for (range, fixes) in documents.values() {
        // A document not where it was read (the file changed since) is left alone.
        let Some(document) = text.get(range.clone()) else {
            continue;
        };
        let fixed = fix_document(document, fixes);
        count += fixed.applied;
        edits.extend(fixed.edits.into_iter().map(|e| TextEdit {
            range: range.start + e.range.start..range.start + e.range.end,
            text: e.text,
        }));
    }
    (apply(text, &edits), count)
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
