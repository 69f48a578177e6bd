//! Test support: lint YAML the way the CLI does (through [`crate::workspace`]),
//! check fixtures against their `# expect: <rule>` markers, and find the
//! real-world manifests.

use std::sync::{Arc, Mutex, PoisonError};

use crate::fix::{Fix, TextEdit, apply};
use crate::index::{Index, Lookup};
use crate::lint::Enabled;
use crate::model::autoscaler::Autoscalers;
use crate::model::linted::Linted;
use crate::object::{Object, ObjectRef, Origin};
use crate::path::FieldPath;
use crate::registry::{Category, Rule};
use crate::settings::Settings;
use crate::source::{ALL, read_document, split_documents};
use crate::workspace::{
    Catalog, fix_document, kept_hpa, lint_kept, locate, scan_document, template_finding,
};

/// One located finding.
#[derive(Debug)]
pub(crate) struct Finding {
    pub line: usize,
    pub column: usize,
    pub rule: &'static str,
    pub text: String,
}

/// A finding with its fix, where the fix applies: the document (index of
/// its chunk) and the path of the object in it.
struct Fixable {
    chunk: usize,
    prefix: FieldPath,
    fix: Fix,
}

/// Lints a multi-document YAML text; findings sorted by position.
pub(crate) fn lint_yaml(text: &str, settings: &Settings) -> Vec<Finding> {
    lint_with_fixes(text, settings).0
}

/// [`lint_yaml`], with the fixes the findings carry.
fn lint_with_fixes(text: &str, settings: &Settings) -> (Vec<Finding>, Vec<Fixable>) {
    let chunks = split_documents(text);
    let needs = crate::rules::reads(settings);
    let scans: Vec<_> = chunks
        .iter()
        .map(|c| scan_document(c.text, settings, &needs))
        .collect();
    let line_of = |i: usize, line: usize| chunks[i].line_offset + line;
    if let Some((i, at)) = scans
        .iter()
        .enumerate()
        .find_map(|(i, s)| Some((i, s.template?)))
    {
        let (line, column) = crate::source::lines::positions(chunks[i].text, &[at])[0];
        let findings = template_finding(settings)
            .map(|d| Finding {
                line: line_of(i, line),
                column,
                rule: d.rule.name,
                text: d.message,
            })
            .into_iter()
            .collect();
        return (findings, Vec::new());
    }
    let mut findings = Vec::new();
    let mut fixes = Vec::new();
    let mut catalog = Catalog::default();
    let mut kept = Vec::new();
    for (i, scan) in scans.into_iter().enumerate() {
        for (d, pos) in scan.findings {
            findings.push(Finding {
                line: line_of(i, pos.line),
                column: pos.column,
                rule: d.rule.name,
                text: d.field_message(),
            });
        }
        for found in scan.found {
            kept.extend(catalog.add((i, found.prefix.clone()), found));
        }
    }
    let (index, places, hpas) = catalog.finish();
    let hpas: Vec<Linted<'_>> = hpas
        .into_iter()
        .zip(&kept)
        .filter_map(|(origin, whole)| kept_hpa(whole, origin, settings))
        .collect();
    for d in lint_kept(&hpas, &index, settings, &Enabled::of(settings)) {
        let (j, prefix) = &places[d.subject.origin.0 as usize];
        let pos = locate(chunks[*j].text, &[(prefix, &d)])[0];
        findings.push(Finding {
            line: line_of(*j, pos.line),
            column: pos.column,
            rule: d.rule.name,
            text: d.field_message(),
        });
        if let Some(fix) = d.fix {
            fixes.push(Fixable {
                chunk: *j,
                prefix: prefix.clone(),
                fix,
            });
        }
    }
    findings.sort_by(|a, b| {
        (a.line, a.column, a.rule, &a.text).cmp(&(b.line, b.column, b.rule, &b.text))
    });
    (findings, fixes)
}

/// How many findings `text` gives with only `rule` on, and how many of them
/// carry a fix.
pub(crate) fn count_fixes(rule: &Rule, text: &str, settings: Settings) -> (usize, usize) {
    let (findings, fixes) = lint_with_fixes(text, &only_with(rule, settings));
    (findings.len(), fixes.len())
}

/// Most passes [`fix_yaml`] makes.
const MAX_PASSES: usize = 10;

/// `text` with the fixes of the findings made, pass after pass until none is
/// left, as `--fix --unsafe-fixes` makes them. Checks on the way that every
/// byte outside the text edits is kept.
pub(crate) fn fix_yaml(text: &str, settings: &Settings) -> String {
    let mut text = text.to_owned();
    for _ in 0..MAX_PASSES {
        let (_, fixes) = lint_with_fixes(&text, settings);
        if fixes.is_empty() {
            return text;
        }
        let chunks = split_documents(&text);
        let mut edits = Vec::new();
        for (i, chunk) in chunks.iter().enumerate() {
            let here: Vec<(&FieldPath, &Fix)> = fixes
                .iter()
                .filter(|f| f.chunk == i)
                .map(|f| (&f.prefix, &f.fix))
                .collect();
            let fixed = fix_document(chunk.text, &here);
            assert!(
                fixed.unmade.is_empty(),
                "a fix cannot be made ({:?}) to:\n{}",
                fixed.unmade,
                chunk.text
            );
            edits.extend(fixed.edits.into_iter().map(|e| TextEdit {
                range: e.range.start + chunk.offset..e.range.end + chunk.offset,
                text: e.text,
            }));
        }
        let next = apply(&text, &edits);
        assert_kept_outside(&text, &edits, &next);
        text = next;
    }
    panic!("fixes still found after {MAX_PASSES} passes:\n{text}");
}

/// Every byte of `before` outside the edits' ranges is in `after`, in place.
fn assert_kept_outside(before: &str, edits: &[TextEdit], after: &str) {
    let (mut at, mut shift) = (0usize, 0isize);
    for edit in edits {
        let kept = &before[at..edit.range.start];
        let moved = at.checked_add_signed(shift).unwrap();
        assert_eq!(
            &after[moved..moved + kept.len()],
            kept,
            "bytes outside the edits changed"
        );
        shift += edit.text.len() as isize - edit.range.len() as isize;
        at = edit.range.end;
    }
    let moved = at.checked_add_signed(shift).unwrap();
    assert_eq!(
        &after[moved..],
        &before[at..],
        "bytes after the last edit changed"
    );
}

/// Fixes `fixtures/<rule>.fix.yaml` with only `rule` on and checks that the
/// fixed text no longer triggers it and that fixing again changes nothing.
/// Returns the fixed text, for a snapshot of exactly what changed.
/// The same holds with CRLF line ends, which the fixes keep.
pub(crate) fn check_fix_fixture(rule: &'static Rule) -> String {
    let text = rule_fixture(&format!("{}.fix", rule.name));
    let fixed = check_fixes(rule, &text, Settings::default());
    let crlf = check_fixes(rule, &text.replace('\n', "\r\n"), Settings::default());
    assert_eq!(
        crlf,
        fixed.replace('\n', "\r\n"),
        "fixing CRLF text differs"
    );
    fixed
}

/// [`check_fix_fixture`] for any text and settings.
pub(crate) fn check_fixes(rule: &'static Rule, text: &str, settings: Settings) -> String {
    let settings = only_with(rule, settings);
    let (_, fixes) = lint_with_fixes(text, &settings);
    assert!(!fixes.is_empty(), "`{}` proposes no fix here", rule.name);
    let fixed = fix_yaml(text, &settings);
    let left = lint_yaml(&fixed, &settings);
    assert!(
        left.is_empty(),
        "`{}` still finds problems after fixing:\n{}",
        rule.name,
        render(&left)
    );
    assert_eq!(
        fix_yaml(&fixed, &settings),
        fixed,
        "fixing twice changes more"
    );
    let broken = |text: &str| -> Vec<String> {
        lint_yaml(text, &Settings::default())
            .iter()
            .filter(|f| {
                let category = crate::rules::by_name(f.rule).expect("a rule").category;
                matches!(category, Category::Input | Category::ApiServer)
            })
            .map(|f| format!("{} {}", f.rule, f.text))
            .collect()
    };
    let (was, is) = (broken(text), broken(&fixed));
    let added: Vec<&String> = is.iter().filter(|f| !was.contains(f)).collect();
    assert!(
        added.is_empty(),
        "fixing `{}` broke the text: {added:?}\n{fixed}",
        rule.name
    );
    fixed
}

/// Default settings with only `rule` enabled.
pub(crate) fn only(rule: &Rule) -> Settings {
    only_with(rule, Settings::default())
}

/// `settings` with only `rule` enabled.
pub(crate) fn only_with(rule: &Rule, mut settings: Settings) -> Settings {
    crate::rules::select(&mut settings, &[rule.name.to_owned()]).expect("a registered rule");
    settings
}

/// One finding per line: `line:column rule text`.
pub(crate) fn render(findings: &[Finding]) -> String {
    findings
        .iter()
        .map(|f| format!("{}:{} {} {}\n", f.line, f.column, f.rule, f.text))
        .collect()
}

/// Lines that carry `# expect: a, b` markers naming `rule`, once per mention.
fn expected_lines(text: &str, rule: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some((_, names)) = line.split_once("# expect: ") {
            let count = names.split(',').filter(|n| n.trim() == rule).count();
            lines.extend(std::iter::repeat_n(i + 1, count));
        }
    }
    lines
}

/// Lints `fixtures/<rule>.yaml` with only `rule` on (default settings) and
/// checks that its findings sit exactly on the lines marked for it. Returns the
/// rendered findings, for a snapshot of the messages.
pub(crate) fn check_fixture(rule: &'static Rule) -> String {
    check_fixture_with(rule, &rule_fixture(rule.name), Settings::default())
}

/// When the `live` rules' fixtures and doc examples were read from a cluster.
pub(crate) const LIVE_NOW: &str = "2026-03-04T08:00:00Z";

/// [`check_fixture`] for a `live` rule that measures durations: the
/// fixture's objects are read at [`LIVE_NOW`].
pub(crate) fn check_live_fixture(rule: &'static Rule) -> String {
    let mut settings = Settings::default();
    settings.now = crate::model::status::parse_time(LIVE_NOW);
    check_fixture_with(rule, &rule_fixture(rule.name), settings)
}

/// The text of `fixtures/<name>.yaml`.
pub(crate) fn rule_fixture(name: &str) -> String {
    let path = format!("{}/fixtures/{name}.yaml", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// [`check_fixture`] for any text and settings.
pub(crate) fn check_fixture_with(rule: &'static Rule, text: &str, settings: Settings) -> String {
    let findings = lint_yaml(text, &only_with(rule, settings));
    let rendered = render(&findings);
    let actual: Vec<usize> = findings.iter().map(|f| f.line).collect();
    assert_eq!(
        actual,
        expected_lines(text, rule.name),
        "lines of `{}` findings differ from the `# expect:` markers; findings:\n{rendered}",
        rule.name
    );
    rendered
}

/// An index that cannot tell anything, like the webhook's before its caches sync.
pub(crate) struct UnknownIndex;

impl Index for UnknownIndex {
    fn get(&self, _: &ObjectRef) -> Lookup<Arc<Object>> {
        Lookup::Unknown
    }

    fn scalers_of(&self, _: &ObjectRef) -> Arc<Autoscalers> {
        Arc::default()
    }

    fn list(&self, _: &str, _: &str, _: &str) -> Lookup<Vec<Arc<Object>>> {
        Lookup::Unknown
    }
}

/// A question a rule asked an [`Index`].
#[derive(Debug)]
pub(crate) enum Asked {
    /// [`Index::get`].
    Get(ObjectRef),
    /// [`Index::scalers_of`].
    ScalersOf,
    /// [`Index::list`]: group and kind.
    List(String, String),
}

/// An index that records what it is asked, and answers from another.
pub(crate) struct Recording<'a> {
    pub inner: &'a dyn Index,
    pub asked: Mutex<Vec<Asked>>,
}

impl Recording<'_> {
    fn record(&self, asked: Asked) {
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(asked);
    }
}

impl Index for Recording<'_> {
    fn get(&self, target: &ObjectRef) -> Lookup<Arc<Object>> {
        self.record(Asked::Get(target.clone()));
        self.inner.get(target)
    }

    fn scalers_of(&self, target: &ObjectRef) -> Arc<Autoscalers> {
        self.record(Asked::ScalersOf);
        self.inner.scalers_of(target)
    }

    fn list(&self, namespace: &str, group: &str, kind: &str) -> Lookup<Vec<Arc<Object>>> {
        self.record(Asked::List(group.to_owned(), kind.to_owned()));
        self.inner.list(namespace, group, kind)
    }
}

/// The objects of a multi-document YAML text (no `List`s, no templates).
pub(crate) fn objects(text: &str) -> Vec<Arc<Object>> {
    split_documents(text)
        .iter()
        .flat_map(|chunk| read_document(chunk.text, &|_, _| &ALL).values)
        .filter_map(|(value, _)| Object::new(value, Origin(0), "default"))
        .map(Arc::new)
        .collect()
}

/// The YAML files of the real-world corpus and the examples: manifests
/// nobody wrote for a test.
pub(crate) fn manifest_files() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    let mut dirs = vec![root.join("tests/corpus/realworld"), root.join("examples")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                files.push(path);
            }
        }
    }
    files
}
