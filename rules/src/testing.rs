//! Test support: lint YAML the way the CLI does (through [`crate::workspace`]),
//! and check fixtures against their `# expect: <rule>` markers.

use std::sync::{Arc, Mutex, PoisonError};

use crate::index::{Index, Lookup, MemoryIndex};
use crate::model::autoscaler::Autoscalers;
use crate::object::{Object, ObjectRef, Origin};
use crate::path::FieldPath;
use crate::registry::Rule;
use crate::settings::Settings;
use crate::source::{ALL, read_document, split_documents};
use crate::workspace::{lint_document, locate, scan_document, template_finding};

/// One located finding.
#[derive(Debug)]
pub(crate) struct Finding {
    pub line: usize,
    pub column: usize,
    pub rule: &'static str,
    pub text: String,
}

/// Lints a multi-document YAML text; findings sorted by position.
pub(crate) fn lint_yaml(text: &str, settings: &Settings) -> Vec<Finding> {
    let chunks = split_documents(text);
    let scans: Vec<_> = chunks
        .iter()
        .map(|c| scan_document(c.text, settings))
        .collect();
    let line_of = |i: usize, line: usize| chunks[i].line_offset + line;
    if let Some((i, at)) = scans
        .iter()
        .enumerate()
        .find_map(|(i, s)| Some((i, s.template?)))
    {
        let before = &chunks[i].text[..at];
        return template_finding(settings)
            .map(|d| Finding {
                line: line_of(i, crate::source::lines::count_breaks(before) + 1),
                column: 1,
                rule: d.rule.name,
                text: d.message,
            })
            .into_iter()
            .collect();
    }
    let mut findings = Vec::new();
    let mut places = Vec::new();
    let mut entries = Vec::new();
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
            let origin = Origin(u32::try_from(places.len()).unwrap());
            places.push((i, found.prefix, found.is_hpa));
            entries.push((found.stored.with_origin(origin), found.target));
        }
    }
    let index = MemoryIndex::with_scale_targets(entries);
    for (i, chunk) in chunks.iter().enumerate() {
        let hpas: Vec<(&FieldPath, Origin)> = places
            .iter()
            .enumerate()
            .filter(|(_, (j, _, is_hpa))| *j == i && *is_hpa)
            .map(|(n, (_, prefix, _))| (prefix, Origin(u32::try_from(n).unwrap())))
            .collect();
        for d in lint_document(chunk.text, &hpas, &index, settings) {
            let (j, prefix, _) = &places[d.subject.origin.0 as usize];
            let pos = locate(chunks[*j].text, &[(prefix, &d)])[0];
            findings.push(Finding {
                line: line_of(*j, pos.line),
                column: pos.column,
                rule: d.rule.name,
                text: d.field_message(),
            });
        }
    }
    findings.sort_by(|a, b| {
        (a.line, a.column, a.rule, &a.text).cmp(&(b.line, b.column, b.rule, &b.text))
    });
    findings
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
#[derive(Clone, Debug, PartialEq, Eq)]
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
