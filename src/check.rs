//! The `check` command's pipeline, over [`hpa_lint_rules::workspace`]:
//!
//! 1. every file is read and cut into documents; each document is read once
//!    ([`scan_document`]): its problems are found and located, and of each
//!    object only what lookups need is kept;
//!    HPAs are kept whole, packed, in a store ([`crate::kept`]);
//! 2. the HPAs are linted against an index of everything kept
//!    ([`lint_kept`]); only the documents they have findings in are read
//!    again, to place them, and findings about other objects (an HPA's
//!    target) in those objects' documents.
//!
//! Documents of one file are read in parallel, like files; no document's tree
//! outlives its reading, and a finding keeps only a short excerpt of its line.
//! The output is sorted, so it does not depend on the number of threads.

use std::collections::BTreeMap;
use std::iter::Peekable;
use std::ops::{Deref, Range};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, OnceLock, PoisonError};

use std::io;

use crate::kept::{Kept, Record, Store};
use crate::report::{Excerpt, FileEdit, Finding, Location, Outcome, Position, Summary};
use crate::spill::{Gather, Own, Sorted, Stage};
use hpa_lint_rules::fix::{Fix, TextEdit};
use hpa_lint_rules::lint::Enabled;
use hpa_lint_rules::reads::Needs;
use hpa_lint_rules::rules::{is_rejection, reads};
use hpa_lint_rules::source::lines::positions;
use hpa_lint_rules::source::{Chunk, Pos};
use hpa_lint_rules::workspace::{
    Catalog, Scan, kept_hpa, kept_object, lint_kept, place, scan_document, template_finding,
};
use hpa_lint_rules::{Diagnostic, FieldPath, MemoryIndex, Object, Origin, Settings};
use rayon::prelude::*;

use crate::input::{Opened, SourceFile};

/// Where a document (and possibly a `List` item in it) is. One is held
/// for each object looked up until the end of a run: small.
#[derive(Clone, Debug)]
struct Place {
    offset: usize,
    len: usize,
    file: u32,
    document: u32,
    line_offset: u32,
    /// Path of the object inside its document (`items[i]` in a `List`),
    /// when it is not the whole document.
    item: Option<Box<FieldPath>>,
}

/// The path of a whole document's object.
static ROOT: LazyLock<FieldPath> = LazyLock::new(FieldPath::root);

/// A count or position as a [`Place`] holds it.
fn small(n: usize) -> u32 {
    u32::try_from(n).expect("fewer than 2³² files, documents and lines")
}

impl Place {
    fn new(file: usize, document: usize, chunk: &Chunk<'_>) -> Self {
        Self {
            file: small(file),
            document: small(document),
            offset: chunk.offset,
            len: chunk.text.len(),
            line_offset: small(chunk.line_offset),
            item: None,
        }
    }

    /// The same document, at the object at `prefix` in it.
    fn at(&self, prefix: &FieldPath) -> Self {
        Self {
            item: (*prefix != *ROOT).then(|| Box::new(prefix.clone())),
            ..self.clone()
        }
    }

    /// The input file.
    fn file(&self) -> usize {
        self.file as usize
    }

    /// The document's number in its file.
    fn document(&self) -> usize {
        self.document as usize
    }

    /// Path of the object inside its document (`items[i]` in a `List`).
    fn prefix(&self) -> &FieldPath {
        self.item.as_deref().unwrap_or(&ROOT)
    }

    /// The document's text, read again.
    fn text(&self, file: &Opened<'_>) -> Result<String, String> {
        file.range(self.offset, self.len)
    }

    fn finding(&self, diagnostic: Diagnostic, name: &Arc<str>, text: &str, pos: Pos) -> Finding {
        Finding {
            diagnostic,
            location: Some(Location {
                file: Arc::clone(name),
                input: self.file(),
                document: self.document(),
                line: self.line_offset as usize + pos.line.max(1),
                column: pos.column.max(1),
                excerpt: Excerpt::at(text, pos.offset, pos.len),
                document_range: self.offset..self.offset + self.len,
                object_path: self.prefix().clone(),
                edits: Vec::new(),
                fix_not_made: None,
            }),
        }
    }

    /// Text edits of the document here as changes to the file, placed by
    /// `at` (an offset's line and column in the document).
    fn file_edits(
        &self,
        edits: Vec<TextEdit>,
        at: &mut impl Iterator<Item = (usize, usize)>,
    ) -> Vec<FileEdit> {
        let mut at = || {
            let (line, column) = at.next().expect("a position for each offset");
            Position {
                line: self.line_offset as usize + line,
                column,
            }
        };
        edits
            .into_iter()
            .map(|e| FileEdit {
                start: at(),
                end: at(),
                content: e.text,
            })
            .collect()
    }
}

/// What step 1 gives for one file.
#[derive(Default)]
struct FileScan {
    documents: usize,
    objects: usize,
    findings: Vec<Finding>,
    found: Catalog<Place>,
    /// Where its HPAs are kept whole, in the order of `found`'s.
    kept: Vec<Record>,
    error: Option<String>,
}

/// Blocks with at least this many documents have them read in parallel.
const PARALLEL_DOCUMENTS: usize = 8;

/// Step 1 for one document; `needs`: what the enabled rules read
/// ([`reads`]), worked out once for a run.
fn scan_chunk<'t>(
    (file, document): (usize, usize),
    chunk: &Chunk<'t>,
    settings: &Settings,
    needs: &Needs,
) -> (Place, &'t str, Scan) {
    let place = Place::new(file, document, chunk);
    let scan = scan_document(chunk.text, settings, needs);
    (place, chunk.text, scan)
}

/// Takes one document's scan into `file`, its HPAs' whole values into
/// `wholes`. A template is not YAML: the file is reported once and skipped;
/// what it is reported with is given back (`None` inside when the rule is
/// off).
fn take_scan(
    file: &mut FileScan,
    wholes: &mut Vec<Box<[u8]>>,
    (place, text, scan): (Place, &str, Scan),
    source: &SourceFile,
    settings: &Settings,
) -> Option<Option<Finding>> {
    if let Some(at) = scan.template {
        let [(line, column)] = positions(text, &[at])[..] else {
            unreachable!("one position for one offset")
        };
        let pos = Pos {
            line,
            column,
            offset: at,
            len: 2,
        };
        return Some(template_finding(settings).map(|d| place.finding(d, &source.name, text, pos)));
    }
    file.objects += scan.objects;
    for (diagnostic, pos) in scan.findings {
        file.findings
            .push(place.finding(diagnostic, &source.name, text, pos));
    }
    // Room for the document's objects, at most, rather than for four: a
    // pending object is some hundred bytes, and most files hold one.
    file.found.reserve(scan.found.len());
    for found in scan.found {
        wholes.extend(file.found.add(place.at(&found.prefix), found));
    }
    None
}

/// Step 1 for one file, block by block: the next block is read while one
/// is scanned; its HPAs are kept in `store`.
fn scan_file(
    id: usize,
    source: &SourceFile,
    settings: &Settings,
    needs: &Needs,
    store: &Store,
) -> FileScan {
    let mut file = FileScan::default();
    let mut template = None;
    let mut scan_blocks = || -> Result<(), String> {
        let mut blocks = source.blocks()?;
        let mut next = blocks.next().transpose()?;
        while let Some(block) = next {
            if template.is_some() {
                // Read on: an unreadable file is reported as such.
                next = blocks.next().transpose()?;
                continue;
            }
            let chunks = block.documents();
            let first = file.documents;
            file.documents += chunks.len();
            let read = |(i, chunk)| scan_chunk((id, first + i), chunk, settings, needs);
            // The block's HPAs, kept together.
            let mut wholes = Vec::new();
            let after = if chunks.len() >= PARALLEL_DOCUMENTS {
                let scan = || -> Vec<_> { chunks.par_iter().enumerate().map(read).collect() };
                let (scans, after) = if blocks.is_done() {
                    (scan(), blocks.next().transpose())
                } else {
                    rayon::join(scan, || blocks.next().transpose())
                };
                template = scans.into_iter().find_map(|scanned| {
                    take_scan(&mut file, &mut wholes, scanned, source, settings)
                });
                after
            } else {
                // Taken as each is scanned: a few documents (most often
                // one) are not collected first.
                template = chunks.iter().enumerate().map(read).find_map(|scanned| {
                    take_scan(&mut file, &mut wholes, scanned, source, settings)
                });
                blocks.next().transpose()
            };
            if template.is_none() && !wholes.is_empty() {
                file.kept.extend(store.add(&wholes));
            }
            blocks.give_back(block);
            next = after?;
        }
        Ok(())
    };
    let read = scan_blocks();
    match (read, template) {
        (Err(error), _) => FileScan {
            error: Some(format!("{}: {error}", source.name)),
            ..FileScan::default()
        },
        (Ok(()), Some(finding)) => FileScan {
            documents: file.documents,
            findings: finding.into_iter().collect(),
            ..FileScan::default()
        },
        (Ok(()), None) => file,
    }
}

/// Locates findings about objects of one document in its text, with their
/// fixes (files read only for lookups are never changed).
fn locate_in(
    document: &str,
    diagnostics: Vec<Diagnostic>,
    places: &[Place],
    source: &SourceFile,
) -> Vec<Finding> {
    // Most HPAs have no finding: their document is not read for places.
    if diagnostics.is_empty() {
        return Vec::new();
    }
    let about: Vec<(&FieldPath, &Diagnostic)> = diagnostics
        .iter()
        .map(|d| (places[d.subject.origin.0 as usize].prefix(), d))
        .collect();
    // Files read only for lookups are never changed: no edits for theirs.
    let fixable = |d: &Diagnostic| d.fix.is_some() && !source.context;
    let fixes: Vec<(&FieldPath, &Fix)> = about
        .iter()
        .filter(|(_, d)| fixable(d))
        .filter_map(|(prefix, d)| Some((*prefix, d.fix.as_ref()?)))
        .collect();
    // All findings and fixes of the document at once: it is read once.
    let (located, edits) = place(document, &about, &fixes);
    let mut edits = edits.into_iter();
    let edits: Vec<Vec<TextEdit>> = diagnostics
        .iter()
        .map(|d| {
            if fixable(d) {
                edits.next().and_then(Result::ok).unwrap_or_default()
            } else {
                Vec::new()
            }
        })
        .collect();
    let offsets: Vec<usize> = edits
        .iter()
        .flatten()
        .flat_map(|e| [e.range.start, e.range.end])
        .collect();
    let mut at = positions(document, &offsets).into_iter();
    diagnostics
        .into_iter()
        .zip(located)
        .zip(edits)
        .map(|((d, pos), edits)| {
            let place = &places[d.subject.origin.0 as usize];
            let edits = place.file_edits(edits, &mut at);
            let mut finding = place.finding(d, &source.name, document, pos);
            if let Some(location) = &mut finding.location {
                location.edits = edits;
            }
            finding
        })
        .collect()
}

/// What a run's findings are for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// To be reported only.
    Report,
    /// To be fixed (`--fix`, `--diff`): their fixes' edits on field paths
    /// are made again to the fixed text.
    Fix,
}

impl Purpose {
    /// A document's findings as this purpose keeps them.
    fn own(self, findings: Vec<(Stage, Finding)>) -> Own {
        match self {
            Purpose::Report => Own::reported(findings),
            // Fixes need what records leave out (edits on field paths).
            Purpose::Fix => Own::Kept(findings),
        }
    }
}

/// Every object of the input (step 1), indexed as the rules see it, with
/// what reading found: what the `behavior` and `simulate` commands read.
pub struct Inventory {
    pub index: MemoryIndex,
    places: Vec<Place>,
    /// The HPAs, in input order.
    hpas: Vec<Origin>,
    /// Where each HPA is kept whole.
    records: Vec<Record>,
    kept: Kept,
    findings: Vec<Finding>,
    summary: Summary,
    pub input_errors: Vec<String>,
}

impl Inventory {
    /// The HPAs of the input, whole (the index keeps only what lookups read
    /// of them), with the file each is in.
    pub fn hpas<'s>(
        &self,
        sources: &'s [SourceFile],
        settings: &Settings,
    ) -> io::Result<Vec<(Object, &'s str)>> {
        let wholes = self.kept.read(&self.records)?;
        Ok(self
            .hpas
            .iter()
            .zip(wholes.iter())
            .filter_map(|(&origin, whole)| {
                let file = &sources[self.places[origin.0 as usize].file()].name;
                Some((kept_object(whole, origin, settings)?, &**file))
            })
            .collect())
    }
}

impl Inventory {
    /// What kubectl or the API server stops at in the document of the object
    /// at `origin`, found while reading it (a repeated key), as `field:
    /// message`: the object never reaches a controller.
    pub fn document_errors(&self, origin: Origin) -> Vec<String> {
        let place = &self.places[origin.0 as usize];
        self.findings
            .iter()
            .filter(|f| {
                f.location
                    .as_ref()
                    .is_some_and(|l| l.input == place.file() && l.document == place.document())
            })
            .map(|f| &f.diagnostic)
            .filter(|d| is_rejection(d))
            .map(Diagnostic::field_message)
            .collect()
    }
}

/// The HPAs of each file that has some (their places in `hpas`, the HPAs'
/// origins in input order), the files in the order of the output: by name,
/// then as given.
fn hpa_files_by_name(
    sources: &[SourceFile],
    places: &[Place],
    hpas: &[Origin],
) -> Vec<(usize, Range<usize>)> {
    let file = |origin: &Origin| places[origin.0 as usize].file();
    let mut files: Vec<_> = runs(hpas, |a, b| file(a) == file(b))
        .map(|run| (file(&hpas[run.start]), run))
        .collect();
    files.sort_by_key(|(file, _)| (&*sources[*file].name, *file));
    files
}

/// The HPAs of one file (`file`: their places in `hpas`) document by
/// document.
fn hpa_documents_of<'a>(
    places: &'a [Place],
    hpas: &'a [Origin],
    file: Range<usize>,
) -> impl Iterator<Item = Range<usize>> + 'a {
    let document = |origin: &Origin| places[origin.0 as usize].document;
    let start = file.start;
    runs(&hpas[file], move |a, b| document(a) == document(b))
        .map(move |run| start + run.start..start + run.end)
}

/// The ranges of `items` that `same` keeps together, as `chunk_by` does.
fn runs<'a, T>(
    items: &'a [T],
    same: impl FnMut(&T, &T) -> bool + 'a,
) -> impl Iterator<Item = Range<usize>> + 'a {
    let mut next = 0;
    items.chunk_by(same).map(move |run| {
        next += run.len();
        next - run.len()..next
    })
}

/// Files read at once (in parallel): what they kept is put together before
/// more are read, so that many small files do not each hold their own
/// tables until the end of step 1.
pub const FILES_AT_ONCE: usize = 256;

/// Bytes of HPAs kept whole that step 1 holds in memory (an HPA takes some
/// 1,000 packed); those beyond go to a temporary file.
const KEPT_BYTES: usize = 64 << 10;

/// Step 1: reads every file. Fails only if the HPAs kept whole cannot be
/// read back from the temporary file they were spilled to.
pub fn read(sources: &[SourceFile], settings: &Settings) -> io::Result<Inventory> {
    read_keeping(sources, settings, KEPT_BYTES)
}

/// What step 1 read, put together in the files' order.
#[derive(Default)]
struct Gathered {
    summary: Summary,
    findings: Vec<Finding>,
    input_errors: Vec<String>,
    catalog: Catalog<Place>,
    records: Vec<Record>,
}

impl Gathered {
    /// Puts together what the files of `batch` gave.
    fn add(&mut self, scans: Vec<FileScan>, batch: &[SourceFile]) {
        for (scan, source) in scans.into_iter().zip(batch) {
            // Context files only feed the lookups; their problems are not this run's.
            if !source.context {
                self.summary.documents += scan.documents;
                self.summary.objects += scan.objects;
                self.findings.extend(scan.findings);
                if let Some(error) = scan.error {
                    self.summary.unread += 1;
                    self.input_errors.push(error);
                } else {
                    self.summary.files += 1;
                }
            }
            self.catalog.append(scan.found);
            if self.records.is_empty() {
                // Taken whole: one large file's are not copied.
                self.records = scan.kept;
            } else {
                self.records.extend(scan.kept);
            }
        }
    }
}

/// Batches worked on or waiting to be taken at once: while the last items
/// of one are worked on, the next keeps the pool busy (a pool that waits for
/// each batch to end idles, spins and sleeps once a batch).
const BATCHES_AT_ONCE: usize = 2;

/// Works on `batches` on the pool, at most [`BATCHES_AT_ONCE`] at once, and
/// hands what each gives to `take` in the batches' order, until it says to
/// stop. The task that ends a batch takes the batches done up to where none
/// is missing and starts the next, so no thread waits for another.
fn in_order<B: Send, R: Send>(
    batches: impl Iterator<Item = B> + Send,
    work: impl Fn(B) -> R + Sync,
    take: impl FnMut(R) -> Flow + Send,
) {
    let pipeline = Pipeline {
        work,
        state: Mutex::new(Progress {
            batches: batches.fuse(),
            take,
            done: BTreeMap::new(),
            taken: 0,
            started: 0,
            stopped: false,
        }),
    };
    rayon::scope(|scope| pipeline.start(scope, &mut pipeline.lock()));
}

/// Whether [`in_order`] goes on after a batch is taken.
#[derive(PartialEq, Eq)]
enum Flow {
    Continue,
    Stop,
}

/// Batches worked on by [`in_order`].
struct Pipeline<W, P> {
    work: W,
    state: Mutex<P>,
}

/// How far [`in_order`] is: batches are done in any order, taken in theirs.
struct Progress<I, T, R> {
    batches: I,
    take: T,
    /// Batches done and waiting for those before them, by number.
    done: BTreeMap<usize, R>,
    taken: usize,
    started: usize,
    stopped: bool,
}

impl<B, R, I, W, T> Pipeline<W, Progress<I, T, R>>
where
    B: Send,
    R: Send,
    I: Iterator<Item = B> + Send,
    W: Fn(B) -> R + Sync,
    T: FnMut(R) -> Flow + Send,
{
    fn lock(&self) -> MutexGuard<'_, Progress<I, T, R>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Works on batch `number`, takes what can be, starts what may be.
    fn run<'s>(&'s self, scope: &rayon::Scope<'s>, number: usize, batch: B)
    where
        B: 's,
    {
        let result = (self.work)(batch);
        let mut progress = self.lock();
        let progress = &mut *progress;
        progress.done.insert(number, result);
        while !progress.stopped
            && let Some(result) = progress.done.remove(&progress.taken)
        {
            progress.stopped = (progress.take)(result) == Flow::Stop;
            progress.taken += 1;
        }
        self.start(scope, progress);
    }

    /// Starts the next batches, as many as may be worked on at once.
    fn start<'s>(&'s self, scope: &rayon::Scope<'s>, progress: &mut Progress<I, T, R>)
    where
        B: 's,
    {
        while !progress.stopped && progress.started < progress.taken + BATCHES_AT_ONCE {
            let Some(batch) = progress.batches.next() else {
                return;
            };
            let number = progress.started;
            progress.started += 1;
            scope.spawn(move |scope| self.run(scope, number, batch));
        }
    }
}

/// [`read`], holding at most `bound` bytes of HPAs kept whole in memory.
fn read_keeping(
    sources: &[SourceFile],
    settings: &Settings,
    bound: usize,
) -> io::Result<Inventory> {
    read_batches(sources.chunks(FILES_AT_ONCE), settings, bound, |_| {})
}

/// [`read_keeping`] of files given in batches (of [`FILES_AT_ONCE`]), in
/// order; each batch is handed to `done` once read.
fn read_batches<B: Deref<Target = [SourceFile]> + Send>(
    batches: impl Iterator<Item = B> + Send,
    settings: &Settings,
    bound: usize,
    mut done: impl FnMut(B) + Send,
) -> io::Result<Inventory> {
    let store = Store::new(bound);
    let needs = reads(settings);
    let mut gathered = Gathered::default();
    let batches = batches.scan(0, |first, batch| {
        let at = *first;
        *first += batch.len();
        Some((batch, at))
    });
    let scan = |(batch, first): (B, usize)| {
        let scans: Vec<FileScan> = batch
            .par_iter()
            .enumerate()
            .map(|(i, source)| scan_file(first + i, source, settings, &needs, &store))
            .collect();
        (scans, batch)
    };
    in_order(batches, scan, |(scans, batch)| {
        gathered.add(scans, &batch);
        done(batch);
        Flow::Continue
    });
    let Gathered {
        summary,
        findings,
        input_errors,
        mut catalog,
        records,
    } = gathered;
    // Held until the end of the run.
    catalog.shrink_to_fit();
    let (index, places, hpas) = catalog.finish();
    Ok(Inventory {
        index,
        places,
        hpas,
        records,
        kept: store.finish()?,
        findings,
        summary,
        input_errors,
    })
}

/// Bytes of encoded findings a plain check keeps in memory (a finding takes
/// some 300); those beyond go to a temporary file, read back as they are
/// written.
const HELD_BYTES: usize = 1 << 20;

/// Documents linted at once (in parallel) in step 2 (with the next batch:
/// see [`BATCHES_AT_ONCE`]).
const BATCH: usize = 256;

/// Bytes of packed HPAs read back at once in step 2 (256 documents of
/// common HPAs take some 0.25 MB).
const BATCH_BYTES: usize = 2 << 20;

/// Runs the whole pipeline. The findings come out in order; a plain check's
/// beyond [`HELD_BYTES`] are spilled to a temporary file.
pub fn run(
    sources: &[SourceFile],
    settings: &Settings,
    purpose: Purpose,
) -> io::Result<Outcome<Sorted>> {
    run_holding(sources, settings, purpose, HELD_BYTES)
}

/// [`run`] on files found while they are read: `found` gives them in
/// order, in batches of [`FILES_AT_ONCE`] (a walk of a directory, which
/// goes on while the first are read). Returns them too.
pub fn run_found(
    found: impl Iterator<Item = Vec<SourceFile>> + Send,
    settings: &Settings,
    purpose: Purpose,
) -> io::Result<(Outcome<Sorted>, Vec<SourceFile>)> {
    let mut sources = Vec::new();
    let bound = HELD_BYTES.min(KEPT_BYTES);
    let inventory = read_batches(found, settings, bound, |batch| sources.extend(batch))?;
    let outcome = lint_read(&sources, inventory, settings, purpose, HELD_BYTES)?;
    Ok((outcome, sources))
}

/// [`run`], holding at most `held` bytes of findings of step 2 (and of
/// HPAs kept whole, at most [`KEPT_BYTES`]) in memory.
fn run_holding(
    sources: &[SourceFile],
    settings: &Settings,
    purpose: Purpose,
    held: usize,
) -> io::Result<Outcome<Sorted>> {
    let inventory = read_keeping(sources, settings, held.min(KEPT_BYTES))?;
    lint_read(sources, inventory, settings, purpose, held)
}

/// Step 2 of [`run_holding`], on what step 1 read of `sources`.
fn lint_read(
    sources: &[SourceFile],
    inventory: Inventory,
    settings: &Settings,
    purpose: Purpose,
    held: usize,
) -> io::Result<Outcome<Sorted>> {
    let Inventory {
        index,
        places,
        hpas,
        records,
        kept,
        findings,
        summary,
        mut input_errors,
    } = inventory;
    let mut gathered = Gather::new(held);
    gathered.hold(findings.into_iter().map(|f| (Stage::Read, f)));

    // Step 2: lint the HPAs in the order of the output (files by name,
    // documents in order), a batch at a time, in parallel within a batch.
    // A finding counts when it is located in a linted file, or when a linted
    // file's object (an HPA) caused it: with `--context`, a new HPA is
    // checked against the workload it targets, and a changed workload
    // against its HPAs.
    let in_context = |origin: Origin| sources[places[origin.0 as usize].file()].context;
    let enabled = Enabled::of(settings);
    // The HPAs of a document (their places in `hpas`), with their values;
    // the document is read again (`text`) only to place their findings.
    let lint = |source: &SourceFile,
                text: &(dyn Fn(&Place) -> Result<String, String> + Sync),
                document: Range<usize>,
                wholes: &[&[u8]]| {
        let origins = &hpas[document];
        let place = &places[origins[0].0 as usize];
        let objects: Vec<_> = origins
            .iter()
            .zip(wholes)
            .filter_map(|(&origin, whole)| kept_hpa(whole, origin, settings))
            .collect();
        // The document's HPAs, in input order: their origins ascend.
        let here = |origin: &Origin| origins.binary_search(origin).is_ok();
        let (own, others): (Vec<Diagnostic>, Vec<Diagnostic>) =
            lint_kept(&objects, &index, settings, &enabled)
                .into_iter()
                .filter(|d| !(source.context && in_context(d.subject.origin)))
                .partition(|d| here(&d.subject.origin));
        drop(objects);
        let mut unread = Vec::new();
        let own = if own.is_empty() {
            Vec::new()
        } else {
            match text(place) {
                Ok(text) => locate_in(&text, own, &places, source),
                Err(error) => {
                    unread.push(unread_again(source, &error));
                    Vec::new()
                }
            }
        };
        let stage = Stage::Linted(place.file(), place.document());
        let own = own.into_iter().map(|finding| (stage, finding)).collect();
        let stage = Stage::Elsewhere(place.file(), place.document());
        let others = place_elsewhere(others, &places, sources, &mut unread)
            .into_iter()
            .map(|finding| (stage, finding))
            .collect();
        Linted {
            own: purpose.own(own),
            others,
            unread,
        }
    };
    let mut documents = hpa_files_by_name(sources, &places, &hpas)
        .into_iter()
        .flat_map(|(file, its_hpas)| {
            hpa_documents_of(&places, &hpas, its_hpas).map(move |d| (file, d))
        })
        .peekable();
    let size = |document: &Range<usize>| -> usize {
        records[document.clone()].iter().map(Record::size).sum()
    };
    let batches = std::iter::from_fn(|| {
        Some(next_batch(&mut documents, size)).filter(|batch| !batch.is_empty())
    });
    let lint_batch = |batch: Vec<(usize, Range<usize>)>| -> io::Result<Vec<Vec<Linted>>> {
        let files: Vec<&[(usize, Range<usize>)]> = batch.chunk_by(|a, b| a.0 == b.0).collect();
        // The file's HPAs in this batch follow each other in `hpas`.
        let hpas_of = |documents: &[(usize, Range<usize>)]| {
            documents[0].1.start..documents[documents.len() - 1].1.end
        };
        // The batch's HPAs, read back at once, file after file.
        let asked: Vec<Record> = files
            .iter()
            .flat_map(|documents| &records[hpas_of(documents)])
            .copied()
            .collect();
        let read = kept.read(&asked)?;
        let all: Vec<&[u8]> = read.iter().collect();
        let mut rest = &all[..];
        let files: Vec<_> = files
            .into_iter()
            .map(|documents| {
                let (wholes, after) = rest.split_at(hpas_of(documents).len());
                rest = after;
                (documents, wholes)
            })
            .collect();
        Ok(files
            .into_par_iter()
            .map(|(documents, wholes)| {
                let source = &sources[documents[0].0];
                let first = documents[0].1.start;
                // Opened once, if some finding is to be placed in it.
                let opened = OnceLock::new();
                let text = |place: &Place| {
                    let opened = opened.get_or_init(|| source.open()).as_ref()?;
                    place.text(opened)
                };
                documents
                    .par_iter()
                    .map(|(_, document)| {
                        let range = document.start - first..document.end - first;
                        lint(source, &text, document.clone(), &wholes[range])
                    })
                    .collect()
            })
            .collect())
    };
    let mut failed = None;
    let mut gather = |linted: io::Result<Vec<Vec<Linted>>>| -> io::Result<()> {
        for Linted {
            own,
            others,
            unread,
        } in linted?.into_iter().flatten()
        {
            input_errors.extend(unread);
            gathered.linted(own)?;
            match purpose {
                Purpose::Report => gathered.placed(others)?,
                Purpose::Fix => gathered.hold(others),
            }
        }
        Ok(())
    };
    in_order(batches, lint_batch, |linted| match gather(linted) {
        Ok(()) => Flow::Continue,
        Err(error) => {
            failed = Some(error);
            Flow::Stop
        }
    });
    if let Some(error) = failed {
        return Err(error);
    }
    // The index is not looked in from here on: it is freed while the
    // findings are written.
    rayon::spawn(move || drop(index));
    input_errors.sort();
    // A file read again for several documents failed for each.
    input_errors.dedup();
    Ok(Outcome {
        findings: gathered.sorted()?,
        summary,
        input_errors,
    })
}

/// The next documents to lint (with their files): at most [`BATCH`], and at
/// most [`BATCH_BYTES`] of their packed HPAs, which are read back at once
/// (but always one document, however large).
fn next_batch(
    documents: &mut Peekable<impl Iterator<Item = (usize, Range<usize>)>>,
    size: impl Fn(&Range<usize>) -> usize,
) -> Vec<(usize, Range<usize>)> {
    let mut batch = Vec::new();
    let mut bytes = 0;
    while let Some((file, document)) = documents.next_if(|(_, document)| {
        batch.is_empty() || (batch.len() < BATCH && bytes + size(document) <= BATCH_BYTES)
    }) {
        bytes += size(&document);
        batch.push((file, document));
    }
    batch
}

/// What is said of a file that could not be read again to place findings
/// in it (it was read once: it was removed or cut short since, or the process
/// ran out of file descriptors). Its findings are not reported: without
/// the text they cannot be placed.
fn unread_again(source: &SourceFile, error: &str) -> String {
    format!(
        "{}: cannot be read again to place findings: {error}",
        source.name
    )
}

/// Places findings about objects elsewhere (an HPA's target) in those
/// objects' documents, each read again; what cannot be read again goes to
/// `unread`.
fn place_elsewhere(
    diagnostics: Vec<Diagnostic>,
    places: &[Place],
    sources: &[SourceFile],
    unread: &mut Vec<String>,
) -> Vec<Finding> {
    let mut by_document: BTreeMap<(usize, usize), Vec<Diagnostic>> = BTreeMap::new();
    for diagnostic in diagnostics {
        let place = &places[diagnostic.subject.origin.0 as usize];
        by_document
            .entry((place.file(), place.document()))
            .or_default()
            .push(diagnostic);
    }
    let mut placed = Vec::new();
    for ((file, _), diagnostics) in by_document {
        let source = &sources[file];
        let place = &places[diagnostics[0].subject.origin.0 as usize];
        match source.open().and_then(|opened| place.text(&opened)) {
            Ok(document) => placed.extend(locate_in(&document, diagnostics, places, source)),
            Err(error) => unread.push(unread_again(source, &error)),
        }
    }
    placed
}

/// What step 2 gives for a document: findings located in it, and findings
/// about objects elsewhere, placed in their documents.
struct Linted {
    own: Own,
    others: Vec<(Stage, Finding)>,
    /// Files that could not be read again ([`unread_again`]).
    unread: Vec<String>,
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::input::{Order, collect, walk_in_order};
    use crate::options::{Format, LintArgs};
    use crate::{emit, settings};

    /// Step 2's batches hold at most BATCH documents and BATCH_BYTES of
    /// packed HPAs, and a document larger than that alone.
    #[test]
    fn batches_are_bounded_in_documents_and_bytes() {
        let cut = |sizes: &[usize]| -> Vec<usize> {
            let mut documents = sizes
                .iter()
                .enumerate()
                .map(|(i, _)| (0, i..i + 1))
                .peekable();
            let mut lengths = Vec::new();
            loop {
                let batch = next_batch(&mut documents, |d| sizes[d.start]);
                if batch.is_empty() {
                    return lengths;
                }
                lengths.push(batch.len());
            }
        };
        assert_eq!(cut(&[1_000; 2 * BATCH + 76]), [BATCH, BATCH, 76]);
        let unit = BATCH_BYTES / 4;
        assert_eq!(cut(&[unit; 10]), [4, 4, 2]);
        assert_eq!(
            cut(&[3 * unit, 2 * unit, 9 * unit, unit, 3 * unit]),
            [1, 1, 1, 2]
        );
        assert_eq!(cut(&[]), Vec::<usize>::new());
    }

    /// The HPAs of files read in several batches (done in any order) come
    /// out of step 1 in the files' order, each file counted once.
    #[test]
    fn step_one_keeps_the_order_of_files_over_batches() {
        let dir = tempfile::tempdir().unwrap();
        let count = FILES_AT_ONCE * (BATCHES_AT_ONCE + 1) + 7;
        write_hpas(dir.path(), count);
        let resolved = settings::resolve(&LintArgs::default(), None, None).unwrap();
        let sources = collected(dir.path(), &resolved);
        let inventory = read(&sources, &resolved.settings).unwrap();
        assert_eq!(inventory.summary.files, count);
        let hpas = inventory.hpas(&sources, &resolved.settings).unwrap();
        let names: Vec<&str> = hpas.iter().map(|(hpa, _)| &*hpa.key.name).collect();
        let expected: Vec<String> = (0..count).map(|i| format!("hpa-{i:04}")).collect();
        assert_eq!(names, expected);
    }

    /// The files [`collect`] finds in `dir`, which it all can read.
    fn collected(dir: &Path, resolved: &settings::Resolved) -> Vec<SourceFile> {
        let (sources, errors) = collect(
            &[dir.to_path_buf()],
            &[],
            &resolved.ignore_paths,
            &resolved.config_dir,
            Order::Sorted,
        )
        .unwrap();
        assert!(errors.is_empty(), "{errors:?}");
        sources
    }

    /// One file of an HPA (of a Deployment not there) for each of `count`.
    fn write_hpas(dir: &Path, count: usize) {
        for i in 0..count {
            let hpa = format!(
                "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  \
                 name: hpa-{i:04}\nspec:\n  scaleTargetRef: {{kind: Deployment, name: app}}\n  \
                 maxReplicas: 3\n"
            );
            std::fs::write(dir.join(format!("{i:04}.yaml")), hpa).unwrap();
        }
    }

    /// Files read while a walk finds them, batch by batch, give the
    /// findings and counts the same files give when given at once.
    #[test]
    fn files_read_while_found_give_what_files_given_give() {
        let dir = tempfile::tempdir().unwrap();
        write_hpas(dir.path(), FILES_AT_ONCE * (BATCHES_AT_ONCE + 1) + 7);
        std::fs::write(dir.path().join("bad.yaml"), "a: [").unwrap();
        let resolved = settings::resolve(&LintArgs::default(), None, None).unwrap();
        let sources = collected(dir.path(), &resolved);
        let mut found = Vec::new();
        let walked = walk_in_order(
            dir.path(),
            &resolved.ignore_paths,
            &resolved.config_dir,
            FILES_AT_ONCE,
            |files| {
                found.push(files);
                true
            },
        );
        assert_eq!(walked, Ok(Vec::new()));
        let given = run(&sources, &resolved.settings, Purpose::Report)
            .unwrap()
            .collect()
            .unwrap();
        let (read, walked) =
            run_found(found.into_iter(), &resolved.settings, Purpose::Report).unwrap();
        let read = read.collect().unwrap();
        let names = |sources: &[SourceFile]| -> Vec<String> {
            sources.iter().map(|s| s.name.to_string()).collect()
        };
        assert_eq!(names(&walked), names(&sources));
        let counts = |o: &Outcome| (o.summary.files, o.summary.documents, o.summary.objects);
        assert_eq!(counts(&read), counts(&given));
        let findings =
            |o: &Outcome| -> Vec<String> { o.findings.iter().map(|f| format!("{f:?}")).collect() };
        // Findings on each file, over several batches.
        assert!(findings(&read).len() > FILES_AT_ONCE * (BATCHES_AT_ONCE + 1));
        assert_eq!(findings(&read), findings(&given));
    }

    /// A file that cannot be read again to place its findings (removed
    /// since step 1 read it) is reported as unread rather than its findings
    /// silently dropped; the other files' findings are placed.
    #[test]
    fn a_file_not_read_again_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        write_hpas(dir.path(), 3);
        let resolved = settings::resolve(&LintArgs::default(), None, None).unwrap();
        let sources = collected(dir.path(), &resolved);
        let inventory = read(&sources, &resolved.settings).unwrap();
        let removed = dir.path().join("0001.yaml");
        std::fs::remove_file(&removed).unwrap();
        let outcome = lint_read(
            &sources,
            inventory,
            &resolved.settings,
            Purpose::Report,
            HELD_BYTES,
        )
        .unwrap()
        .collect()
        .unwrap();
        assert_eq!(
            outcome.input_errors,
            [format!(
                "{}: cannot be read again to place findings: No such file or directory (os error 2)",
                removed.display()
            )]
        );
        let files: BTreeSet<String> = outcome
            .findings
            .iter()
            .filter_map(|f| Some(f.location.as_ref()?.file.to_string()))
            .collect();
        let kept =
            ["0000.yaml", "0002.yaml"].map(|name| dir.path().join(name).display().to_string());
        assert_eq!(files, BTreeSet::from(kept));
    }

    /// The outputs on the examples and the real-world corpus with the
    /// findings of step 2 spilled to the temporary file (all, or all but the
    /// first 2,000 bytes of them), in every format, are those
    /// `tests/golden.rs` recorded (it runs the binary, which keeps these in
    /// memory).
    #[test]
    fn spilled_findings_give_the_recorded_outputs() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let resolved = settings::resolve(&LintArgs::default(), None, None).unwrap();
        for (corpus, dir) in [
            ("examples", "examples"),
            ("realworld", "tests/corpus/realworld"),
        ] {
            let (sources, errors) = collect(
                &[PathBuf::from(dir)],
                &[],
                &resolved.ignore_paths,
                &resolved.config_dir,
                Order::Sorted,
            )
            .unwrap();
            for (format, run) in [
                (Format::Text, "text"),
                (Format::Json, "json"),
                (Format::Sarif, "sarif"),
                (Format::Github, "github"),
            ] {
                let golden = root.join(format!("tests/golden/{corpus}.{run}"));
                let golden = std::fs::read_to_string(golden).unwrap();
                let (_, recorded) = golden.split_once("--- stdout\n").unwrap();
                for held in [0, 2000] {
                    let outcome =
                        run_holding(&sources, &resolved.settings, Purpose::Report, held).unwrap();
                    let mut summary = outcome.summary;
                    summary.unread = errors.len() + outcome.input_errors.len();
                    let mut out = Vec::new();
                    emit::emit(format, false, summary, outcome.findings, &mut out).unwrap();
                    let out = String::from_utf8(out)
                        .unwrap()
                        .replace(env!("CARGO_PKG_VERSION"), "[version]");
                    assert!(out == recorded, "{corpus}.{run}, {held} held:\n{out}");
                }
            }
        }
    }
}
