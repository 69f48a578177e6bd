//! Test support: lint YAML the way the CLI does (every document parsed), and
//! check fixtures against their `# expect: <rule>` markers.

use std::sync::Arc;

use crate::index::{Index, Lookup, MemoryIndex};
use crate::lint::{Operation, lint};
use crate::model::workload::keep_what_rules_read;
use crate::object::{Object, ObjectRef, Origin};
use crate::registry::Rule;
use crate::rules::helm_template;
use crate::settings::Settings;
use crate::source::{find_template, parse, read_document, split_documents};

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
    let mut findings = Vec::new();
    if let Some(at) = find_template(text) {
        if settings.severity(&helm_template::RULE).is_some() {
            findings.push(Finding {
                line: text[..at].matches('\n').count() + 1,
                column: 1,
                rule: helm_template::RULE.name,
                text: helm_template::MESSAGE.to_owned(),
            });
        }
        return findings;
    }
    let chunks = split_documents(text);
    let mut objects = Vec::new();
    let mut places = Vec::new();
    for (i, chunk) in chunks.iter().enumerate() {
        let document = read_document(chunk.text);
        for problem in document.problems {
            if settings.severity(problem.rule).is_some() {
                findings.push(Finding {
                    line: chunk.line_offset + problem.pos.line,
                    column: problem.pos.column,
                    rule: problem.rule.name,
                    text: problem.message,
                });
            }
        }
        for (value, prefix) in document.values {
            let origin = Origin(u32::try_from(places.len()).unwrap());
            // Rules see of a workload only what the CLI keeps of it.
            let value = keep_what_rules_read(value);
            if let Some(object) = Object::new(value, origin, &settings.default_namespace) {
                places.push((i, prefix));
                objects.push(Arc::new(object));
            }
        }
    }
    let index = MemoryIndex::new(objects.iter().cloned());
    for object in &objects {
        for diagnostic in lint(object, Operation::Create, &index, settings) {
            let (i, prefix) = &places[diagnostic.subject.origin.0 as usize];
            let chunk = chunks[*i];
            let pos = parse(chunk.text)
                .expect("a linted document parses")
                .locate(&prefix.join(&diagnostic.source_path));
            findings.push(Finding {
                line: chunk.line_offset + pos.line,
                column: pos.column,
                rule: diagnostic.rule.name,
                text: diagnostic.field_message(),
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
    settings
        .select(&[rule.name.to_owned()])
        .expect("a registered rule");
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

    fn scalers_of(&self, _: &ObjectRef) -> Vec<Arc<Object>> {
        Vec::new()
    }

    fn list(&self, _: &str, _: &str, _: &str) -> Vec<Arc<Object>> {
        Vec::new()
    }
}

/// The objects of a multi-document YAML text (no `List`s, no templates).
pub(crate) fn objects(text: &str) -> Vec<Arc<Object>> {
    split_documents(text)
        .iter()
        .flat_map(|chunk| read_document(chunk.text).values)
        .filter_map(|(value, _)| Object::new(value, Origin(0), "default"))
        .map(Arc::new)
        .collect()
}
