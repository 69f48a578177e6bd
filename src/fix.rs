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

use hpa_lint::report::{Finding, Outcome};
use hpa_lint_rules::fix::{Fix, TextEdit, apply};
use hpa_lint_rules::workspace::fix_document;
use hpa_lint_rules::{FieldPath, Settings};

use hpa_lint::check;
use hpa_lint::input::SourceFile;

/// Passes that make fixes, at most: fixes whose results keep bringing up
/// other fixes stop there.
const MAX_PASSES: usize = 10;

/// A finding's fix, known again in the next pass: the finding's input,
/// document, rule, object and field, and the fix's title.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct FixKey {
    input: usize,
    document: usize,
    rule: &'static str,
    object: FieldPath,
    field: FieldPath,
    title: String,
}

impl FixKey {
    fn of(finding: &Finding, fix: &Fix) -> Option<Self> {
        let location = finding.location.as_ref()?;
        Some(Self {
            input: location.input,
            document: location.document,
            rule: finding.diagnostic.rule.name,
            object: location.object_path.clone(),
            field: finding.diagnostic.path.clone(),
            title: fix.title.to_string(),
        })
    }
}

/// What `--fix` made: how many fixes in each input that has fixes, and the
/// fixes it could not make, with why.
#[derive(Default)]
pub struct Made {
    pub counts: BTreeMap<usize, usize>,
    unmade: BTreeMap<FixKey, String>,
}

impl Made {
    /// Says in the findings of `outcome` whose fix could not be made why,
    /// and leaves their edits out.
    pub fn mark(&self, outcome: &mut Outcome) {
        if self.unmade.is_empty() {
            return;
        }
        for finding in &mut outcome.findings {
            let Some(fix) = &finding.diagnostic.fix else {
                continue;
            };
            let Some(why) = FixKey::of(finding, fix).and_then(|key| self.unmade.get(&key)) else {
                continue;
            };
            let note = format!("`--fix` could not make its fix ({}): {why}", fix.title);
            if let Some(location) = &mut finding.location {
                location.edits.clear();
                location.fix_not_made = Some(note);
            }
        }
    }
}

/// Lints and fixes until no applicable fix is left (or [`MAX_PASSES`]
/// passes made fixes); `sources` read the fixed text from then on. A fix
/// that cannot be made is not tried again. Returns the last lint's outcome,
/// its findings marked where their fix could not be made, and what was made.
pub fn fix(
    sources: &mut [SourceFile],
    settings: &Settings,
    unsafe_fixes: bool,
) -> io::Result<(Outcome, Made)> {
    let mut made = Made::default();
    let mut passes = 0;
    loop {
        let mut outcome = check::run(sources, settings, check::Purpose::Fix)?.collect()?;
        let fixes = by_document(&outcome, unsafe_fixes, &made.unmade);
        if fixes.is_empty() || passes == MAX_PASSES {
            made.mark(&mut outcome);
            return Ok((outcome, made));
        }
        passes += 1;
        for (input, documents) in fixes {
            let Ok(text) = sources[input].text() else {
                continue;
            };
            let (fixed, count, unmade) = fix_text(&text, &documents);
            made.unmade.extend(unmade);
            *made.counts.entry(input).or_default() += count;
            sources[input].set_fixed(Some(fixed));
        }
    }
}

/// The fixes of one document: its byte range in the file, and each fix with
/// the path of its object in the document and its key.
type DocumentFixes<'a> = (Range<usize>, Vec<(&'a FieldPath, &'a Fix)>, Vec<FixKey>);

/// The applicable fixes of the findings, by input and document, but those
/// that could not be made before.
fn by_document<'a>(
    outcome: &'a Outcome,
    unsafe_fixes: bool,
    unmade: &BTreeMap<FixKey, String>,
) -> BTreeMap<usize, BTreeMap<usize, DocumentFixes<'a>>> {
    let mut fixes: BTreeMap<usize, BTreeMap<usize, DocumentFixes<'_>>> = BTreeMap::new();
    for finding in &outcome.findings {
        let (Some(fix), Some(location)) = (finding.applicable_fix(unsafe_fixes), &finding.location)
        else {
            continue;
        };
        let Some(key) = FixKey::of(finding, fix).filter(|key| !unmade.contains_key(key)) else {
            continue;
        };
        let (_, document, keys) = fixes
            .entry(location.input)
            .or_default()
            .entry(location.document)
            .or_insert_with(|| (location.document_range.clone(), Vec::new(), Vec::new()));
        document.push((&location.object_path, fix));
        keys.push(key);
    }
    fixes
}

/// `text` with the fixes made, document by document, in one pass (those that
/// overlap one made before wait for the next), how many were made, and the
/// fixes that cannot be made, with why.
fn fix_text(
    text: &str,
    documents: &BTreeMap<usize, DocumentFixes<'_>>,
) -> (String, usize, Vec<(FixKey, String)>) {
    let mut edits = Vec::new();
    let mut count = 0;
    let mut unmade = Vec::new();
    for (range, fixes, keys) in documents.values() {
        // A document not where it was read (the file changed since) is left alone.
        let Some(document) = text.get(range.clone()) else {
            continue;
        };
        let fixed = fix_document(document, fixes);
        count += fixed.made.len();
        unmade.extend(
            fixed
                .unmade
                .into_iter()
                .map(|(i, why)| (keys[i].clone(), why.to_string())),
        );
        edits.extend(fixed.edits.into_iter().map(|e| TextEdit {
            range: range.start + e.range.start..range.start + e.range.end,
            text: e.text,
        }));
    }
    (apply(text, &edits), count, unmade)
}

/// The original and fixed text of each input the fixes changed, with how
/// many fixes were made in it.
pub fn changes<'s>(
    sources: &'s [SourceFile],
    made: &'s Made,
) -> impl Iterator<Item = (usize, String, usize)> + 's {
    made.counts.iter().filter_map(|(&input, &count)| {
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
