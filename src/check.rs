//! The `check` command's pipeline. Only what the rules need is parsed:
//!
//! 1. every file is read and split into documents; a line scanner reads each
//!    document's `apiVersion`, `kind`, name and namespace. Autoscalers, budgets
//!    and documents the scanner is unsure about are parsed right away; every
//!    other object is only remembered by its identity and position;
//! 2. the documents that HPAs (or KEDA ScaledObjects) target are parsed;
//! 3. every parsed object is linted against an index of all of them;
//! 4. findings are located: the documents that have findings are parsed once
//!    more with positions, so no position tree is kept in memory meanwhile.
//!
//! Each step runs on all cores; the output is sorted, so it does not depend on
//! the number of threads.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Range;
use std::sync::Arc;

use hpa_lint_rules::diagnostic::Subject;
use hpa_lint_rules::index::Stored;
use hpa_lint_rules::lint::input_finding;
use hpa_lint_rules::model::autoscaler::scale_target;
use hpa_lint_rules::model::workload::{
    TargetKind, WORKLOAD_FIELDS, is_listed, is_read_whole, keep_what_rules_read,
};
use hpa_lint_rules::rules::helm_template;
use hpa_lint_rules::source::{self, Chunk, Header, Node, Pos};
use hpa_lint_rules::{
    Diagnostic, FieldPath, MemoryIndex, Object, ObjectKey, ObjectRef, Operation, Origin, Settings,
    Severity, lint,
};
use rayon::prelude::*;
use serde_json::Value;

use crate::input::SourceFile;

/// A diagnostic with its place in the input.
pub struct Finding {
    pub diagnostic: Diagnostic,
    pub file: Arc<str>,
    /// 0-based index of the document in its file.
    pub document: usize,
    /// 1-based line and column.
    pub line: usize,
    pub column: usize,
    /// The source line, for rendering.
    pub source_line: String,
    /// Byte range within `source_line` to underline.
    pub highlight: Range<usize>,
}

/// Counts for the summary line.
#[derive(Default)]
pub struct Summary {
    pub files: usize,
    pub documents: usize,
    pub objects: usize,
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
}

/// The outcome of a run.
pub struct Outcome {
    pub findings: Vec<Finding>,
    pub summary: Summary,
    /// Inputs that could not be read.
    pub input_errors: Vec<String>,
}

/// Where a document (and possibly a `List` item in it) is.
#[derive(Clone, Debug)]
struct Place {
    file: usize,
    document: usize,
    offset: usize,
    len: usize,
    line_offset: usize,
    /// Path of the object inside its document (`items[i]` in a `List`).
    prefix: FieldPath,
}

impl Place {
    fn chunk<'t>(&self, text: &'t str) -> Chunk<'t> {
        Chunk {
            text: &text[self.offset..self.offset + self.len],
            offset: self.offset,
            line_offset: self.line_offset,
        }
    }
}

/// An object known only by its header until an HPA turns out to target it.
struct Deferred {
    key: ObjectKey,
    /// Whether the header scan found the name (else any object of the kind may be it).
    has_name: bool,
    place: Place,
    /// For kinds an HPA can scale, the lines the rules read, cut while the file
    /// was in memory (`None`: read the file again if an HPA targets it).
    cut: Option<String>,
}

/// A parsed object waiting to be indexed, held compactly unless rules list it
/// for every HPA: the many HPAs and workloads of a repository would otherwise
/// hold most of the memory.
struct Held {
    stored: Stored,
    /// Its scale target, when it is an autoscaler.
    target: Option<ObjectRef>,
    place: Place,
}

impl Held {
    fn new(value: Value, place: Place, settings: &Settings) -> Option<Self> {
        let object = Object::new(value, Origin::default(), &settings.default_namespace)?;
        let target = scale_target(&object);
        let stored = if is_listed(&object.key.api_version, &object.key.kind) {
            Stored::Parsed(Arc::new(object))
        } else {
            Stored::text(&object)
        };
        Some(Self {
            stored,
            target,
            place,
        })
    }
}

#[derive(Default)]
struct Scan {
    /// Whether the file is read for lookups only.
    context: bool,
    documents: usize,
    objects: usize,
    parsed: Vec<Held>,
    deferred: Vec<Deferred>,
    findings: Vec<Finding>,
    error: Option<String>,
}

/// A located finding at a byte offset of `text`.
fn finding_at(
    diagnostic: Diagnostic,
    file: &Arc<str>,
    document: usize,
    text: &str,
    chunk: &Chunk<'_>,
    pos: Pos,
) -> Finding {
    let start = (chunk.offset + pos.offset).min(text.len());
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let source_line = text[line_start..line_end].trim_end_matches('\r').to_owned();
    let from = start - line_start;
    let to = (from + pos.len.max(1)).min(source_line.len()).max(from);
    Finding {
        diagnostic,
        file: Arc::clone(file),
        document,
        line: chunk.line_offset + pos.line.max(1),
        column: pos.column.max(1),
        source_line,
        highlight: from..to,
    }
}

/// The subject of a finding made while reading: located right away, so its
/// origin is never looked up.
fn read_subject(key: ObjectKey) -> Subject {
    Subject {
        key,
        origin: Origin::default(),
    }
}

/// Parses one document into its objects (the items of a `List`), reporting
/// syntax errors and duplicate keys. Scale targets (`is_target`) are cut to what
/// the rules read before parsing; other objects are parsed whole and cut after.
fn read_document(
    file: &Arc<str>,
    text: &str,
    place: &Place,
    header_key: ObjectKey,
    is_target: bool,
    settings: &Settings,
    scan: &mut Scan,
) {
    let chunk = place.chunk(text);
    let document = if is_target {
        source::read_document_pruned(chunk.text, &WORKLOAD_FIELDS)
    } else {
        source::read_document(chunk.text)
    };
    let key = document
        .values
        .first()
        .and_then(|(value, _)| ObjectKey::of(value, &settings.default_namespace))
        .unwrap_or(header_key);
    for problem in document.problems {
        let diagnostic = input_finding(
            settings,
            problem.rule,
            read_subject(key.clone()),
            problem.path,
            problem.message,
            None,
        );
        if let Some(d) = diagnostic {
            scan.findings.push(finding_at(
                d,
                file,
                place.document,
                text,
                &chunk,
                problem.pos,
            ));
        }
    }
    for (value, prefix) in document.values {
        let place = Place {
            prefix,
            ..place.clone()
        };
        let value = if is_target {
            value
        } else {
            keep_what_rules_read(value)
        };
        scan.parsed.extend(Held::new(value, place, settings));
    }
}

fn header_key(header: &Header<'_>, settings: &Settings) -> ObjectKey {
    match *header {
        Header::Object {
            api_version,
            kind,
            name,
            namespace,
        } => ObjectKey {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            namespace: namespace.unwrap_or(&settings.default_namespace).to_owned(),
            name: name.unwrap_or_default().to_owned(),
        },
        _ => ObjectKey::default(),
    }
}

/// A JSON document's identity, read with the fast JSON parser.
fn json_header(text: &str) -> Option<Value> {
    let body = text
        .trim_start()
        .strip_prefix("---")
        .unwrap_or(text)
        .trim_start();
    if !body.starts_with('{') {
        return None;
    }
    serde_json::from_str(body).ok()
}

/// Step 1 for one file.
fn scan_file(id: usize, source: &SourceFile, settings: &Settings) -> Scan {
    let mut scan = Scan::default();
    let text = match source.read() {
        Ok(text) => text,
        Err(error) => {
            scan.error = Some(format!("{}: {error}", source.name));
            return scan;
        }
    };
    let chunks = source::split_documents(&text);
    scan.documents = chunks.len();
    if let Some(at) = source::find_template(&text) {
        let document = chunks.iter().rposition(|c| c.offset <= at).unwrap_or(0);
        let chunk = chunks.get(document).copied().unwrap_or(Chunk {
            text: &text,
            offset: 0,
            line_offset: 0,
        });
        let line = text[chunk.offset..at].matches('\n').count() + 1;
        let column = text[..at]
            .rsplit('\n')
            .next()
            .map_or(0, |l| l.chars().count())
            + 1;
        if let Some(d) = input_finding(
            settings,
            &helm_template::RULE,
            read_subject(ObjectKey::default()),
            FieldPath::root(),
            helm_template::MESSAGE.to_owned(),
            Some(helm_template::HELP),
        ) {
            let pos = Pos {
                line,
                column,
                offset: at - chunk.offset,
                len: 2,
            };
            scan.findings
                .push(finding_at(d, &source.name, document, &text, &chunk, pos));
        }
        return scan;
    }
    for (document, chunk) in chunks.iter().enumerate() {
        let place = Place {
            file: id,
            document,
            offset: chunk.offset,
            len: chunk.text.len(),
            line_offset: chunk.line_offset,
            prefix: FieldPath::root(),
        };
        let header = source::scan_header(chunk.text);
        let known = match header {
            Header::NotAnObject => continue,
            Header::Object {
                api_version,
                kind,
                name,
                namespace,
            } => Some((
                api_version.to_owned(),
                kind.to_owned(),
                name.map(str::to_owned),
                namespace.map(str::to_owned),
            )),
            Header::Unknown => json_header(chunk.text).and_then(|value| {
                let object = Object::new(value, Origin(0), &settings.default_namespace)?;
                let key = object.key;
                Some((
                    key.api_version,
                    key.kind,
                    Some(key.name),
                    Some(key.namespace),
                ))
            }),
        };
        match known {
            Some((api_version, kind, name, namespace)) if !is_read_whole(&api_version, &kind) => {
                scan.objects += 1;
                // No rule reads an object an HPA cannot scale, even when an HPA
                // points at it (target-not-scalable judges the reference alone).
                let group = hpa_lint_rules::object::group_of(&api_version);
                if !TargetKind::classify(settings, group, &kind).is_scalable() {
                    continue;
                }
                let cut = source::prune_text(chunk.text, &WORKLOAD_FIELDS);
                scan.deferred.push(Deferred {
                    cut,
                    has_name: name.is_some(),
                    key: ObjectKey {
                        api_version,
                        kind,
                        namespace: namespace.unwrap_or_else(|| settings.default_namespace.clone()),
                        name: name.unwrap_or_default(),
                    },
                    place,
                });
            }
            _ => {
                let before = scan.parsed.len();
                read_document(
                    &source.name,
                    &text,
                    &place,
                    header_key(&header, settings),
                    false,
                    settings,
                    &mut scan,
                );
                scan.objects += scan.parsed.len() - before;
            }
        }
    }
    scan
}

/// Step 2: which deferred documents some autoscaler targets.
fn is_targeted(
    deferred: &Deferred,
    targets: &HashSet<ObjectRef>,
    kinds: &HashSet<(&str, &str)>,
) -> bool {
    let key = &deferred.key;
    kinds.contains(&(key.group(), key.kind.as_str()))
        && (!deferred.has_name || targets.contains(&key.to_ref()))
}

/// Runs the whole pipeline.
pub fn run(sources: &[SourceFile], settings: &Settings) -> Outcome {
    let scans: Vec<Scan> = sources
        .par_iter()
        .enumerate()
        .map(|(id, source)| scan_file(id, source, settings))
        .collect();

    let mut summary = Summary {
        files: sources.iter().filter(|s| !s.context).count(),
        ..Summary::default()
    };
    let mut findings = Vec::new();
    let mut input_errors = Vec::new();
    let mut parsed = Vec::new();
    let mut deferred = Vec::new();
    for (scan, source) in scans.into_iter().zip(sources) {
        // Context files only feed the lookups; their problems are not this run's.
        if !source.context {
            summary.documents += scan.documents;
            summary.objects += scan.objects;
            findings.extend(scan.findings);
            input_errors.extend(scan.error);
        }
        parsed.extend(scan.parsed);
        deferred.extend(scan.deferred);
    }

    // Step 2: parse the targets of the autoscalers read so far.
    let targets: HashSet<ObjectRef> = parsed.iter().filter_map(|h| h.target.clone()).collect();
    let kinds: HashSet<(&str, &str)> = targets
        .iter()
        .map(|t| (t.group.as_str(), t.kind.as_str()))
        .collect();
    let chosen: Vec<Deferred> = deferred
        .into_iter()
        .filter(|d| is_targeted(d, &targets, &kinds))
        .collect();
    // Targets cut while scanning are parsed from memory; the rest (and cut text
    // with problems, which are reported against the file) read their file again.
    let from_memory: Vec<(Vec<Held>, Option<Deferred>)> = chosen
        .into_par_iter()
        .map(|d| {
            let document = d
                .cut
                .as_deref()
                .and_then(|cut| source::read_cut(cut, &WORKLOAD_FIELDS));
            match document {
                Some(document) => {
                    let held = document.values.into_iter().filter_map(|(value, prefix)| {
                        let place = Place {
                            prefix,
                            ..d.place.clone()
                        };
                        Held::new(value, place, settings)
                    });
                    (held.collect(), None)
                }
                None => (Vec::new(), Some(d)),
            }
        })
        .collect();
    let mut by_file: BTreeMap<usize, Vec<(Place, ObjectKey)>> = BTreeMap::new();
    for (held, reread) in from_memory {
        parsed.extend(held);
        if let Some(d) = reread {
            by_file
                .entry(d.place.file)
                .or_default()
                .push((d.place, d.key));
        }
    }
    let late: Vec<Scan> = by_file
        .into_par_iter()
        .map(|(file, places)| {
            let mut scan = Scan::default();
            let source = &sources[file];
            scan.context = source.context;
            match source.read() {
                Ok(text) => {
                    for (place, key) in &places {
                        let key = key.clone();
                        read_document(&source.name, &text, place, key, true, settings, &mut scan);
                    }
                }
                Err(error) => scan.error = Some(format!("{}: {error}", source.name)),
            }
            scan
        })
        .collect();
    for scan in late {
        if !scan.context {
            findings.extend(scan.findings);
            input_errors.extend(scan.error);
        }
        parsed.extend(scan.parsed);
    }

    // Step 3: lint every object against all of them.
    let mut places = Vec::with_capacity(parsed.len());
    let mut entries = Vec::with_capacity(parsed.len());
    for held in parsed {
        let origin = Origin(u32::try_from(places.len()).unwrap_or(u32::MAX));
        places.push(held.place);
        entries.push((held.stored.with_origin(origin), held.target));
    }
    let index = MemoryIndex::with_scale_targets(entries);
    // A finding counts when it is located in a linted file, or when a linted
    // file's object (an HPA) caused it: with `--context`, a new HPA is checked
    // against the workload it targets, and a changed workload against its HPAs.
    let in_context = |origin: Origin| sources[places[origin.0 as usize].file].context;
    let diagnostics: Vec<Diagnostic> = (0..index.len())
        .into_par_iter()
        .flat_map_iter(|i| {
            let object = index.object(i);
            let linted_in_context = in_context(object.origin);
            lint(&object, Operation::Create, &index, settings)
                .into_iter()
                .filter(move |d| !(linted_in_context && in_context(d.subject.origin)))
        })
        .collect();

    // Step 4: locate them.
    findings.extend(locate(diagnostics, sources, &places));
    findings.sort_by(|a, b| {
        (
            &a.file,
            a.line,
            a.column,
            a.diagnostic.rule.name,
            &a.diagnostic.message,
        )
            .cmp(&(
                &b.file,
                b.line,
                b.column,
                b.diagnostic.rule.name,
                &b.diagnostic.message,
            ))
    });
    findings.dedup_by(|a, b| {
        a.file == b.file
            && a.line == b.line
            && a.column == b.column
            && a.diagnostic.rule.name == b.diagnostic.rule.name
            && a.diagnostic.message == b.diagnostic.message
    });
    for finding in &findings {
        match finding.diagnostic.severity {
            Severity::Error => summary.errors += 1,
            Severity::Warning => summary.warnings += 1,
            Severity::Info => summary.infos += 1,
        }
    }
    input_errors.sort();
    Outcome {
        findings,
        summary,
        input_errors,
    }
}

/// Finds the position of every diagnostic by parsing its document again.
fn locate(diagnostics: Vec<Diagnostic>, sources: &[SourceFile], places: &[Place]) -> Vec<Finding> {
    let mut by_file: HashMap<usize, Vec<(Diagnostic, &Place)>> = HashMap::new();
    for diagnostic in diagnostics {
        let place = &places[diagnostic.subject.origin.0 as usize];
        by_file
            .entry(place.file)
            .or_default()
            .push((diagnostic, place));
    }
    by_file
        .into_par_iter()
        .flat_map_iter(|(file, diagnostics)| {
            let source = &sources[file];
            let text = source.read().unwrap_or_default();
            let mut trees: HashMap<usize, Option<Node>> = HashMap::new();
            diagnostics
                .into_iter()
                .map(|(diagnostic, place)| {
                    let chunk = if place.offset + place.len <= text.len() {
                        place.chunk(&text)
                    } else {
                        Chunk {
                            text: "",
                            offset: 0,
                            line_offset: place.line_offset,
                        }
                    };
                    let tree = trees
                        .entry(place.document)
                        .or_insert_with(|| source::parse(chunk.text).ok());
                    let pos = tree.as_ref().map_or_else(Pos::default, |tree| {
                        tree.locate(&place.prefix.join(&diagnostic.source_path))
                    });
                    finding_at(diagnostic, &source.name, place.document, &text, &chunk, pos)
                })
                .collect::<Vec<_>>()
        })
        .collect()
}
