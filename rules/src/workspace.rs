//! Reading manifests for linting, the same for every front end that reads
//! files (the CLI, the rule tests): pure, document by document, so a front end
//! chooses how to read, hold and parallelise.
//!
//! 1. [`scan_document`] reads one document: its problems and its objects'
//!    suppression annotations become findings at once; of every object only
//!    what the enabled rules look up is kept ([`crate::reads::Needs`]): the
//!    index of a whole repository stays small;
//! 2. a [`Catalog`] gathers what all documents kept, numbers the objects
//!    and indexes them ([`crate::MemoryIndex`]);
//! 3. [`lint_kept`] runs the rules on the HPAs, kept whole by the scan
//!    ([`Found::whole`]); [`place`] places their findings and fixes in
//!    their documents, read again (once) for that.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use serde_json::Value;

use crate::context::{Check, Operation};
use crate::diagnostic::{Diagnostic, Subject};
use crate::fix::{Edit, EditError, Editor, Fix, TextEdit};
use crate::index::{Entries, Index, MemoryIndex, Stored};
use crate::lint::{Enabled, lint_hpa_with, lint_object, object_stage_reads};
use crate::model::autoscaler::{SCALED_OBJECT, Scaler};
use crate::model::linted::Linted;
use crate::object::{
    ANNOTATION_PREFIX, HPA, Identity, KeyRef, Object, ObjectKey, Origin, group_of,
};
use crate::packed;
use crate::path::{FieldPath, Json, Shape};
use crate::reads::{IDENTITY_FIELDS, Needs};
use crate::rules::CHECKS;
use crate::settings::Settings;
use crate::source::{self, ALL, Keep, Pos, Problem, ProblemKind, Tree};

/// An object found in a document.
#[derive(Debug)]
pub struct Found {
    /// Where it is in its document (`items[i]` in a `List`).
    pub prefix: FieldPath,
    /// What lookups keep of it.
    pub stored: Stored,
    /// What its autoscaler group reads of it, when it is an autoscaler.
    pub scaler: Option<Scaler>,
    /// An HPA, which the rules lint ([`lint_kept`]): its whole value,
    /// packed ([`crate::packed`]), for the front end to keep until the index
    /// is complete.
    pub whole: Option<Box<[u8]>>,
}

/// What reading one document gives.
#[derive(Debug, Default)]
pub struct Scan {
    /// Findings located in the document (positions relative to its text):
    /// syntax errors, repeated keys, bad suppression annotations.
    pub findings: Vec<(Diagnostic, Pos)>,
    /// Its objects.
    pub found: Vec<Found>,
    /// How many Kubernetes objects it holds (what could be read of them).
    pub objects: usize,
    /// Where a Helm template action makes it unreadable, if one does: the
    /// whole file is a template then, and nothing else of it counts.
    pub template: Option<usize>,
}

/// A finding made while reading has no object to look up: its subject is the
/// document's object as far as it was read.
fn read_subject(key: ObjectKey) -> Subject {
    Subject {
        key: key.into(),
        origin: Origin::default(),
    }
}

/// Reads one document (a [`source::Chunk`]'s text). `needs` is what the
/// rules enabled in `settings` read ([`crate::rules::reads`]), worked out
/// once for all the documents of a run.
pub fn scan_document(text: &str, settings: &Settings, needs: &Needs) -> Scan {
    // The role of the kind chosen last: a document of one object chooses
    // last by its final `apiVersion` and `kind` (a `List` of one, by its
    // item's), so that object is not classified again.
    let chosen = Cell::new(None);
    // HPAs are read whole, to be linted; lookups keep what they read of them.
    let choose = |api_version: &str, kind: &str| {
        let role = needs.role(&settings.cluster, api_version, kind);
        chosen.set(Some(role));
        if HPA.is(group_of(api_version), kind) {
            &ALL
        } else {
            role.keep
        }
    };
    let source::Read {
        objects,
        problems,
        template,
        partial,
    } = source::read_objects(text, &choose);
    let count = objects.len();
    let chosen = chosen.get().filter(|_| count == 1);
    let namespace = &settings.cluster.default_namespace;
    // The document's object as far as it was read: what its problems are
    // about, and how it is known if it could not be read; most documents
    // need neither.
    let key = if problems.is_empty() && count > 0 {
        ObjectKey::default()
    } else {
        objects
            .first()
            .or(partial.as_ref())
            .and_then(|value| ObjectKey::of(value, namespace))
            .unwrap_or_default()
    };
    let mut scan = Scan {
        template,
        ..Scan::default()
    };
    for problem in &problems {
        for d in document_findings(problem, &key, settings) {
            scan.findings.push((d, problem.pos));
        }
    }
    // A document that could not be read is still known by name: an HPA that
    // targets it is told so, rather than that it is missing.
    if count == 0 && !key.kind.is_empty() {
        scan.found.push(Found {
            prefix: FieldPath::root(),
            stored: Stored::Unreadable { key },
            scaler: None,
            whole: None,
        });
    }
    let mut suppressions = Vec::new();
    for (i, (tree, prefix)) in objects.enumerate() {
        // Borrowed: most objects are held by identity, or not at all.
        let Some(key) = KeyRef::of(&tree, namespace) else {
            continue;
        };
        scan.objects += 1;
        let group = group_of(key.api_version);
        let is_hpa = HPA.is(group, key.kind);
        let whole = is_hpa.then(|| packed::pack(&tree));
        let role =
            chosen.unwrap_or_else(|| needs.role(&settings.cluster, key.api_version, key.kind));
        let read = role.is_read();
        // An HPA read whole is held as lookups read it: cut to that when it
        // is held as a value (listed, or looked up by reference); its
        // identity and its group read the same cut or not.
        let cut = is_hpa && read;
        let origin = Origin::default();
        let mut object_stage = |object: &Object| {
            for d in lint_object(object, settings) {
                suppressions.push((prefix.join(&d.source_path), d));
            }
        };
        let (stored, scaler) = if read && role.listed {
            // Listed for every HPA of its namespace: held as a value.
            let key = key.to_key();
            let tree = if cut {
                role.keep.prune_tree(tree)
            } else {
                tree
            };
            let object = Object {
                key,
                value: tree.into_value(),
                origin,
            };
            object_stage(&object);
            let scaler = Scaler::of(&object);
            (Stored::Parsed(object.into()), scaler)
        } else {
            // Most objects have nothing the object stage reads, and are
            // not made a value for it.
            let stage_reads = if cut {
                kept_reads_object_stage(&tree, role.keep)
            } else {
                object_stage_reads(&tree)
            };
            if stage_reads {
                // The same value, cut or not: an HPA's cut keeps these.
                object_stage(&Object {
                    key: key.to_key(),
                    value: tree.kept_value(&IDENTITY_FIELDS),
                    origin,
                });
            }
            if !read {
                continue;
            }
            // Only autoscalers are grouped ([`Scaler::read`] is `None` for
            // other kinds).
            let scaler = (is_hpa || SCALED_OBJECT.is(group, key.kind))
                .then(|| Scaler::read(&key.to_key(), &tree))
                .flatten();
            let stored = if role.got {
                let key = Identity::new(key);
                let tree = if cut {
                    role.keep.prune_tree(tree)
                } else {
                    tree
                };
                Stored::Compact {
                    packed: packed::pack(&tree),
                    key,
                    origin,
                }
            } else {
                // An autoscaler read only with its target's others: its
                // identity is all that is read of it (an HPA is kept whole
                // apart, to be linted).
                Stored::Grouped {
                    key: Identity::new(key),
                }
            };
            (stored, scaler)
        };
        // Room for the objects left, at most, rather than for four: four
        // `Found`s are more than a kilobyte, which glibc's malloc serves
        // only after consolidating its small free chunks.
        if scan.found.len() == scan.found.capacity() {
            scan.found.reserve_exact(count - i);
        }
        scan.found.push(Found {
            prefix,
            stored,
            scaler,
            whole,
        });
    }
    if !suppressions.is_empty() {
        let paths: Vec<FieldPath> = suppressions.iter().map(|(path, _)| path.clone()).collect();
        let positions = source::locate(text, &paths);
        scan.findings
            .extend(suppressions.into_iter().map(|(_, d)| d).zip(positions));
    }
    scan
}

/// [`object_stage_reads`] of what `keep` keeps of `tree`, without cutting
/// it.
fn kept_reads_object_stage(tree: &Tree<'_>, keep: &'static Keep) -> bool {
    let Some(kept) = keep.field("metadata").and_then(|m| m.field("annotations")) else {
        return false;
    };
    let annotations = tree
        .member("metadata")
        .and_then(|metadata| metadata.member("annotations"));
    match annotations.map(Json::shape) {
        Some(Shape::Object(_, mut keys)) => {
            keys.any(|(key, _)| key.starts_with(ANNOTATION_PREFIX) && kept.field(key).is_some())
        }
        _ => false,
    }
}

/// What the enabled document-stage rules make of a problem, about the
/// document's object as far as it was read.
fn document_findings(problem: &Problem, key: &ObjectKey, settings: &Settings) -> Vec<Diagnostic> {
    CHECKS
        .iter()
        .filter_map(|&(rule, check)| {
            let Check::Document(check) = check else {
                return None;
            };
            let severity = settings.severity(rule)?;
            let finding = check(problem)?;
            Some(finding.diagnostic(
                rule,
                severity,
                read_subject(key.clone()),
                problem.path.clone(),
            ))
        })
        .collect()
}

/// The finding that says a file is a Helm template; `None` when the rule is off.
pub fn template_finding(settings: &Settings) -> Option<Diagnostic> {
    let template = Problem {
        kind: ProblemKind::Template,
        message: String::new(),
        path: FieldPath::root(),
        pos: Pos::default(),
    };
    document_findings(&template, &ObjectKey::default(), settings).pop()
}

/// Everything step 1 found in an input, gathered for step 2: each object
/// kept for lookups under its [`Origin`] (its number here), the front end's
/// place for it (`P`: where it is), and the HPAs. Objects are added document
/// by document, in the order of the input; catalogs of parts of the input
/// (files read in parallel) are put together with [`Catalog::append`].
pub struct Catalog<P> {
    places: Vec<P>,
    entries: Entries,
    /// The last objects added, with their places, not yet in `entries` and
    /// `places`: a catalog of a few objects (one file's, most often) is
    /// appended to another without building tables of its own, and its
    /// identities are held once, in the catalog they are appended to; it
    /// holds one vector.
    pending: Vec<(P, Stored, Option<Scaler>)>,
    hpas: Vec<Origin>,
}

/// Objects a catalog holds as they were added, at most.
const PENDING: usize = 64;

impl<P> Default for Catalog<P> {
    fn default() -> Self {
        Self {
            places: Vec::new(),
            entries: Entries::default(),
            pending: Vec::new(),
            hpas: Vec::new(),
        }
    }
}

impl<P> Catalog<P> {
    /// Adds an object found at `place`. Gives back an HPA's whole value
    /// ([`Found::whole`]): the caller keeps it, in the order of
    /// [`Catalog::finish`]'s HPAs, to lint it.
    pub fn add(&mut self, place: P, found: Found) -> Option<Box<[u8]>> {
        if found.whole.is_some() {
            self.hpas.push(self.origin());
        }
        if self.pending.len() == PENDING {
            self.settle();
        }
        self.pending.push((place, found.stored, found.scaler));
        found.whole
    }

    /// Puts the pending objects into the entries, their places into `places`.
    fn settle(&mut self) {
        self.places.reserve(self.pending.len());
        for (place, stored, scaler) in self.pending.drain(..) {
            self.places.push(place);
            self.entries.push(stored, scaler);
        }
    }

    /// Room for `additional` more objects: a file's, made at once, are not
    /// grown by pushing (and given back when it is held).
    pub fn reserve(&mut self, additional: usize) {
        // Objects that fit pending are never in `places` until appended.
        let held = self.pending.len() + additional;
        if held > PENDING {
            self.places.reserve(held);
        }
        self.pending.reserve(additional.min(PENDING));
    }

    /// The origin the next object added gets.
    fn origin(&self) -> Origin {
        Origin(u32::try_from(self.len()).expect("fewer than 2³² objects"))
    }

    /// Number of objects.
    pub fn len(&self) -> usize {
        self.places.len() + self.pending.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds the objects of `next`, which follows these in the input.
    pub fn append(&mut self, mut next: Catalog<P>) {
        if self.is_empty() {
            // Taken whole: one large file is not copied.
            *self = next;
            return;
        }
        let shift = self.origin().0;
        self.hpas
            .extend(next.hpas.iter().map(|origin| Origin(origin.0 + shift)));
        self.settle();
        self.places.append(&mut next.places);
        self.entries.append(next.entries);
        self.pending = next.pending;
    }

    /// Lets go of spare room, once all is added: a catalog is held until
    /// the end of a run.
    pub fn shrink_to_fit(&mut self) {
        self.places.shrink_to_fit();
        self.hpas.shrink_to_fit();
        self.entries.shrink_to_fit();
        self.pending.shrink_to_fit();
    }

    /// The index the rules look objects up in, the places by origin, and the
    /// HPAs' origins in input order (those of one document together).
    pub fn finish(mut self) -> (MemoryIndex, Vec<P>, Vec<Origin>) {
        self.settle();
        self.entries.number();
        (MemoryIndex::of(self.entries), self.places, self.hpas)
    }
}

/// An HPA the scan kept whole ([`Found::whole`]), with its origin.
pub fn kept_object(whole: &[u8], origin: Origin, settings: &Settings) -> Option<Object> {
    Object::new(
        packed::unpack(whole),
        origin,
        &settings.cluster.default_namespace,
    )
}

/// [`kept_object`] as the rules read it: a tree borrowing its strings from
/// the packed bytes.
pub fn kept_hpa<'a>(whole: &'a [u8], origin: Origin, settings: &Settings) -> Option<Linted<'a>> {
    let value = packed::unpack_tree(whole);
    let key = ObjectKey::of(&value, &settings.cluster.default_namespace)?;
    Some(Linted::new(key, origin, value))
}

/// Lints HPAs the scan kept whole (the findings of [`crate::lint::lint_hpa`]). Findings
/// about these are located in their documents by [`locate`]; the others are
/// about objects elsewhere.
/// `enabled`: the checks that run with `settings`, worked out once for a run.
pub fn lint_kept(
    hpas: &[Linted<'_>],
    index: &dyn Index,
    settings: &Settings,
    enabled: &Enabled,
) -> Vec<Diagnostic> {
    hpas.iter()
        .flat_map(|hpa| lint_hpa_with(hpa, Operation::Create, index, settings, enabled))
        .collect()
}

/// Where findings are in their document's text, each about the object at the
/// given path of the document.
pub fn locate(text: &str, findings: &[(&FieldPath, &Diagnostic)]) -> Vec<Pos> {
    source::locate(text, &paths_of(findings))
}

fn paths_of(findings: &[(&FieldPath, &Diagnostic)]) -> Vec<FieldPath> {
    findings
        .iter()
        .map(|(prefix, d)| prefix.join(&d.source_path))
        .collect()
}

/// What [`locate`] and [`fix_edits`] give, with the document read once for
/// both.
pub fn place(
    text: &str,
    findings: &[(&FieldPath, &Diagnostic)],
    fixes: &[(&FieldPath, &Fix)],
) -> (Vec<Pos>, Vec<Result<Vec<TextEdit>, EditError>>) {
    if fixes.is_empty() {
        return (locate(text, findings), Vec::new());
    }
    let (editor, positions) = Editor::placing(text, &paths_of(findings));
    (positions, edits_of(&editor, fixes))
}

/// What one pass of [`fix_document`] did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Fixed {
    /// The text edits made, on the text given (in order, not overlapping).
    pub edits: Vec<TextEdit>,
    /// Fixes made (by their place in the list given).
    pub made: Vec<usize>,
    /// Fixes left for the next pass: their edits overlap one made in this
    /// pass, or they could be made alone but not with it.
    pub deferred: usize,
    /// Fixes that cannot be made to this text (by their place in the list
    /// given), and why.
    pub unmade: Vec<(usize, Unmade)>,
}

/// Why a fix cannot be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unmade {
    /// Its edits cannot be placed in the text.
    #[error(transparent)]
    Edit(#[from] EditError),
    /// The document would stop being YAML that can be read.
    #[error("the document would no longer read as YAML")]
    Unreadable,
    /// The document would repeat a key.
    #[error("the document would repeat a key")]
    RepeatedKey,
    /// The file would have more or fewer documents.
    #[error("the file would have another number of documents")]
    Documents,
    /// A field the fix writes would not read as written.
    #[error("`{0}` would not read as the fix writes it")]
    Written(FieldPath),
    /// A field the fix does not write would change.
    #[error("`{0}`, which the fix does not write, would change")]
    Changed(FieldPath),
}

/// Each fix's text edits on a document's text, read once: each fix given with
/// the path of its object in the document (`items[i]` in a `List`); in
/// order, or why the fix cannot be placed in this text.
pub fn fix_edits(
    text: &str,
    fixes: &[(&FieldPath, &Fix)],
) -> Vec<Result<Vec<TextEdit>, EditError>> {
    if fixes.is_empty() {
        return Vec::new();
    }
    edits_of(&Editor::new(text), fixes)
}

fn edits_of(
    editor: &Editor<'_>,
    fixes: &[(&FieldPath, &Fix)],
) -> Vec<Result<Vec<TextEdit>, EditError>> {
    fixes
        .iter()
        .map(|(prefix, fix)| {
            let edits: Vec<Edit> = fix.edits.iter().map(|e| e.under(prefix)).collect();
            let mut edits = editor.text_edits(&edits)?;
            // Stable: insertions at one place stay in order.
            edits.sort_by_key(|e| (e.range.start, e.range.end));
            Ok(edits)
        })
        .collect()
}

/// A fix chosen for a pass: its place in the list, its text edits and its
/// edits on the document's paths.
struct Chosen {
    index: usize,
    text_edits: Vec<TextEdit>,
    edits: Vec<Edit>,
}

/// Makes fixes to a document's text, in one pass: each given with the path of
/// its object in the document. The text edits of a fix are made only if none
/// overlaps one already taken, so fixes that touch the same field wait for
/// the next pass, where the document is linted again and they are found again
/// if still wanted. The edited document is read again: a pass is made only if
/// the document still reads, as one document, and reads as before except the
/// fields its fixes write, which read as they write them; otherwise each fix
/// is tried in turn, and those that break the document alone are not made.
/// Apply [`Fixed::edits`] with [`crate::fix::apply`].
pub fn fix_document(text: &str, fixes: &[(&FieldPath, &Fix)]) -> Fixed {
    let mut fixed = Fixed::default();
    let mut taken = Taken::default();
    let mut chosen = Vec::new();
    for (index, ((prefix, fix), text_edits)) in fixes.iter().zip(fix_edits(text, fixes)).enumerate()
    {
        let text_edits = match text_edits {
            Ok(text_edits) => text_edits,
            Err(error) => {
                fixed.unmade.push((index, error.into()));
                continue;
            }
        };
        let edits: Vec<Edit> = fix.edits.iter().map(|e| e.under(prefix)).collect();
        let writes: Vec<FieldPath> = edits.iter().flat_map(Edit::written).collect();
        let overlapping = text_edits
            .windows(2)
            .any(|pair| pair[0].range.end > pair[1].range.start);
        if overlapping || taken.clashes(&text_edits, &writes) {
            fixed.deferred += 1;
            continue;
        }
        taken.take(&text_edits, writes);
        chosen.push(Chosen {
            index,
            text_edits,
            edits,
        });
    }
    if chosen.is_empty() {
        return fixed;
    }
    let before = Before::read(text);
    let mut made: Vec<&Chosen> = chosen.iter().collect();
    if before.check(&made).is_err() {
        made.clear();
        for fix in &chosen {
            made.push(fix);
            if before.check(&made).is_ok() {
                continue;
            }
            made.pop();
            match before.check(&[fix]) {
                Err(why) => fixed.unmade.push((fix.index, why)),
                Ok(()) => fixed.deferred += 1,
            }
        }
    }
    fixed.made = made.iter().map(|fix| fix.index).collect();
    fixed.made.sort_unstable();
    fixed.edits = made
        .iter()
        .flat_map(|fix| fix.text_edits.iter().cloned())
        .collect();
    // Stable: insertions of one fix at one place stay in order.
    fixed.edits.sort_by_key(|e| (e.range.start, e.range.end));
    fixed.unmade.sort_by_key(|(index, _)| *index);
    fixed
}

/// A document before a pass, read whole: what its fixes are checked against.
struct Before<'t> {
    text: &'t str,
    documents: usize,
    value: Option<Value>,
    repeated_keys: usize,
}

fn repeated_keys(problems: &[Problem]) -> usize {
    problems
        .iter()
        .filter(|p| p.kind == ProblemKind::DuplicateKey)
        .count()
}

/// Whether text ends with a line break (the next document's `---` must
/// stay at the start of a line).
fn ends_a_line(text: &str) -> bool {
    text.ends_with(['\n', '\r'])
}

impl<'t> Before<'t> {
    fn read(text: &'t str) -> Self {
        let composed = source::compose(text, &|_, _| &ALL);
        Self {
            text,
            documents: source::split_documents(text).len(),
            repeated_keys: repeated_keys(&composed.problems),
            value: composed.value,
        }
    }

    /// Whether the fixes, made together, leave the document as they promise:
    /// readable, one document, and the same but for what they write.
    fn check(&self, fixes: &[&Chosen]) -> Result<(), Unmade> {
        let Some(value) = &self.value else {
            return Err(Unmade::Edit(EditError::Unreadable));
        };
        let mut text_edits: Vec<TextEdit> = fixes
            .iter()
            .flat_map(|fix| fix.text_edits.iter().cloned())
            .collect();
        text_edits.sort_by_key(|e| (e.range.start, e.range.end));
        let after = crate::fix::apply(self.text, &text_edits);
        if source::split_documents(&after).len() != self.documents
            || (ends_a_line(self.text) && !ends_a_line(&after))
        {
            return Err(Unmade::Documents);
        }
        let composed = source::compose(&after, &|_, _| &ALL);
        let Some(read) = composed.value else {
            return Err(Unmade::Unreadable);
        };
        if repeated_keys(&composed.problems) > self.repeated_keys {
            return Err(Unmade::RepeatedKey);
        }
        let mut expected = value.clone();
        let edits = fixes.iter().flat_map(|fix| &fix.edits);
        for edit in edits.clone() {
            if !edit.apply_to(&mut expected) {
                return Err(Unmade::Written(edit.path().clone()));
            }
        }
        match first_difference(&expected, &read, &FieldPath::root()) {
            None => Ok(()),
            Some(path) => {
                let written = edits
                    .flat_map(Edit::written)
                    .any(|w| path.starts_with(&w) || w.starts_with(&path));
                Err(if written {
                    Unmade::Written(path)
                } else {
                    Unmade::Changed(path)
                })
            }
        }
    }
}

/// The first field at which two values differ, if they do.
fn first_difference(a: &Value, b: &Value, path: &FieldPath) -> Option<FieldPath> {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => a
            .iter()
            .map(|(key, value)| (key, Some(value), b.get(key)))
            .chain(
                b.iter()
                    .filter(|(key, _)| !a.contains_key(*key))
                    .map(|(key, value)| (key, None, Some(value))),
            )
            .find_map(|(key, a, b)| match (a, b) {
                (Some(a), Some(b)) => first_difference(a, b, &path.field(key)),
                _ => Some(path.field(key)),
            }),
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (a, b))| first_difference(a, b, &path.index(i))),
        _ => (a != b).then(|| path.clone()),
    }
}

/// What the fixes made so far in a pass hold: their text (each start → the
/// furthest end of the edits starting there) and the fields they write.
#[derive(Default)]
struct Taken {
    spans: BTreeMap<usize, usize>,
    fields: BTreeSet<FieldPath>,
}

impl Taken {
    /// Whether a fix clashes with those taken: its text overlaps theirs, it
    /// inserts where they do (the order would be a guess), or it writes a
    /// field they write, or one inside or around it (a renamed key and the
    /// same key added touch different text).
    fn clashes(&self, edits: &[TextEdit], writes: &[FieldPath]) -> bool {
        let text = edits.iter().any(|edit| {
            let Range { start, end } = edit.range;
            let before = self.spans.range(..=start).next_back();
            before.is_some_and(|(&s, &e)| e > start || s == start)
                || self.spans.range(start..end.max(start + 1)).next().is_some()
        });
        let fields = writes.iter().any(|field| {
            let around = (0..=field.segments().len()).any(|n| {
                self.fields
                    .contains(&FieldPath::from_segments(field.segments()[..n].to_vec()))
            });
            let inside = self
                .fields
                .range(field.clone()..)
                .next()
                .is_some_and(|taken| taken.starts_with(field));
            around || inside
        });
        text || fields
    }

    fn take(&mut self, edits: &[TextEdit], writes: Vec<FieldPath>) {
        for edit in edits {
            // An insertion and a replacement of one fix may start together.
            let end = self.spans.entry(edit.range.start).or_default();
            *end = (*end).max(edit.range.end);
        }
        self.fields.extend(writes);
    }
}

#[cfg(test)]
mod tests {
    use super::{Scan, Unmade, fix_document};
    use crate::cluster::GroupKind;
    use crate::fix::{Edit, Fix};
    use crate::index::Stored;
    use crate::path::FieldPath;
    use crate::rules::{by_name, reads, select};
    use crate::settings::{Level, Settings};

    fn scan_document(text: &str, settings: &Settings) -> Scan {
        super::scan_document(text, settings, &reads(settings))
    }

    /// The kinds of the objects a document's scan keeps for lookups.
    fn kept(text: &str, settings: &Settings) -> Vec<String> {
        scan_document(text, settings)
            .found
            .iter()
            .map(|found| found.stored.key().kind.to_owned())
            .collect()
    }

    #[test]
    fn keeps_only_what_the_enabled_rules_read() {
        let text = "apiVersion: v1\nkind: List\nitems:\n\
            - {apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, metadata: {name: web}}\n\
            - {apiVersion: apps/v1, kind: Deployment, metadata: {name: web}}\n\
            - {apiVersion: autoscaling.k8s.io/v1, kind: VerticalPodAutoscaler, metadata: {name: web}}\n\
            - {apiVersion: v1, kind: ConfigMap, metadata: {name: web}}\n";
        let mut settings = Settings::default();
        assert_eq!(
            kept(text, &settings),
            [
                "HorizontalPodAutoscaler",
                "Deployment",
                "VerticalPodAutoscaler"
            ]
        );
        let hpa = |settings: &Settings| scan_document(text, settings).found.remove(0).stored;
        // Read only as one of its target's autoscalers: by identity.
        assert!(matches!(hpa(&settings), Stored::Grouped { .. }));
        // A kind an HPA may scale is looked up by reference: kept whole.
        let mut scaling_hpas = settings.clone();
        scaling_hpas.cluster.scalable_kinds.push(GroupKind {
            group: "autoscaling".into(),
            kind: "HorizontalPodAutoscaler".into(),
        });
        assert!(matches!(hpa(&scaling_hpas), Stored::Compact { .. }));
        let vpa = |settings: &Settings| scan_document(text, settings).found.remove(2).stored;
        // Listed for every HPA of its namespace: parsed once.
        assert!(matches!(vpa(&settings), Stored::Parsed(_)));
        // Without `vpa-conflict`, only as a custom kind that may be a scale
        // target: compact.
        settings.set_level(by_name("vpa-conflict").unwrap(), Level::Off);
        assert!(matches!(vpa(&settings), Stored::Compact { .. }));
        // No rule looks anything up: only the HPAs, which are linted.
        select(&mut settings, &["min-equals-max".to_owned()]).unwrap();
        assert_eq!(kept(text, &settings), ["HorizontalPodAutoscaler"]);
    }

    #[test]
    fn an_object_is_kept_by_its_final_kind() {
        let settings = Settings::default();
        // Read again for the repeated key: chosen first as a ConfigMap.
        let repeated =
            "apiVersion: apps/v1\nkind: ConfigMap\nmetadata: {name: web}\nkind: Deployment\n";
        assert_eq!(kept(repeated, &settings), ["Deployment"]);
        let merged = "apiVersion: apps/v1\nkind: ConfigMap\n<<: {kind: Deployment}\n";
        assert_eq!(kept(merged, &settings), ["Deployment"]);
        let one_item =
            "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: apps/v1, kind: Deployment}\n";
        assert_eq!(kept(one_item, &settings), ["Deployment"]);
    }

    #[test]
    fn the_object_stage_reads_an_uncut_object_as_it_reads_it_cut() {
        use crate::lint::object_stage_reads;
        use crate::reads::{IDENTITY_FIELDS, OBJECT_FIELDS, SCALER_FIELDS, WORKLOAD_FIELDS};
        use crate::source::{ALL, compose_tree};
        let mut differ = 0;
        for metadata in [
            "{name: h, annotations: {hpa-lint.io/ignore.min-equals-max: x}}",
            "{name: h, annotations: {hpa-lint.io/other: x, a: b}}",
            "{name: h, annotations: {a: b}}",
            "{name: h, annotations: [hpa-lint.io/other]}",
            "{name: h}",
            "hpa-lint.io/other",
        ] {
            let text = format!(
                "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {metadata}\n"
            );
            let tree = compose_tree(&text, &|_, _| &ALL).value.unwrap();
            let read: Vec<bool> = [
                &SCALER_FIELDS,
                &IDENTITY_FIELDS,
                &OBJECT_FIELDS,
                &WORKLOAD_FIELDS,
                &ALL,
            ]
            .into_iter()
            .map(|keep| {
                let cut = object_stage_reads(&keep.prune_tree(tree.clone()));
                assert_eq!(super::kept_reads_object_stage(&tree, keep), cut, "{text}");
                cut
            })
            .collect();
            differ += usize::from(read.contains(&true) && read.contains(&false));
        }
        // hpa-lint's own annotations that are not suppressions are cut
        // with the rest of an HPA's.
        assert_eq!(differ, 1);
    }

    #[test]
    fn a_fix_that_would_change_more_than_it_writes_is_not_made() {
        // The anchored value is read again through its alias.
        let text = "a: &n \"2\"\nb: *n\nc: \"3\"\n";
        let set = |path: &str, value: i32| {
            Fix::safe(
                "unquote",
                vec![Edit::Set {
                    path: FieldPath::fields(path),
                    value: value.into(),
                }],
            )
        };
        let (anchored, plain) = (set("a", 2), set("c", 3));
        let root = FieldPath::root();
        let fixed = fix_document(text, &[(&root, &anchored), (&root, &plain)]);
        assert_eq!(fixed.made, [1]);
        assert_eq!(fixed.unmade, [(0, Unmade::Changed(FieldPath::fields("b")))]);
        assert_eq!(
            crate::fix::apply(text, &fixed.edits),
            "a: &n \"2\"\nb: *n\nc: 3\n"
        );
        assert_eq!(
            fixed.unmade[0].1.to_string(),
            "`b`, which the fix does not write, would change"
        );
    }

    #[test]
    fn fixes_that_write_one_field_wait_for_the_next_pass() {
        // A misspelt key renamed, and the same key added by another fix:
        // their text does not overlap, but made together they repeat a key.
        let text = "a:\n  polices: [x]\n";
        let rename = Fix::unsafe_edit(
            "rename",
            vec![Edit::Rename {
                path: FieldPath::fields("a.polices"),
                to: "policies".into(),
            }],
        );
        let add = Fix::safe(
            "add",
            vec![Edit::Set {
                path: FieldPath::fields("a.policies"),
                value: serde_json::json!([]),
            }],
        );
        let around = Fix::safe(
            "replace the parent",
            vec![Edit::Set {
                path: FieldPath::fields("a"),
                value: serde_json::json!({}),
            }],
        );
        let root = FieldPath::root();
        let fixed = fix_document(text, &[(&root, &rename), (&root, &add), (&root, &around)]);
        assert_eq!((fixed.made, fixed.deferred), (vec![0], 2));
        assert_eq!(
            crate::fix::apply(text, &fixed.edits),
            "a:\n  policies: [x]\n"
        );
    }
}
