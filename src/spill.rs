//! The findings of a run in the order they are written, without holding them
//! all. The findings located in each linted document (step 2) are encoded
//! compactly where they were found, and the documents come in the order of
//! the output; the findings its HPAs caused about other objects, placed in
//! those objects' documents, come in the order of the HPAs and are sorted a
//! chunk at a time. Records are kept in memory up to a bound, beyond it in an
//! unnamed temporary file (in the system's temporary directory, gone when the
//! run ends); when that file cannot be made, or writing to it fails (a full
//! disk, a file size limit), they are all held in memory instead. At the end
//! they are read back and merged with the findings held in memory
//! ([`Sorted`]).

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read, Seek, SeekFrom};
use std::ops::Range;
use std::sync::Arc;

use hpa_lint_rules::fix::{Applicability, Fix};
use hpa_lint_rules::rules::ALL;
use hpa_lint_rules::{
    Diagnostic, FieldPath, ObjectKey, Origin, Reason, Segment, Severity, Subject,
};
use serde::{Deserialize, Serialize};

use crate::report::{Excerpt, FileEdit, Finding, Location, Outcome, Position, SortKey};
use crate::scratch::{Held, Scratch, Written};

/// Which part of the run a finding comes from. Of findings equal in their
/// sort key, the first in this order is kept: reading (step 1), linting an
/// HPA's document (step 2; by input and document), and placing a finding
/// about another object (by the input and document of the HPA).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    Read,
    Linted(usize, usize),
    Elsewhere(usize, usize),
}

/// The order findings are written in: by sort key, then stage.
fn order(finding: &Finding, stage: Stage) -> (SortKey<'_>, Stage) {
    #[cfg(test)]
    tests::ORDERED.with(|n| n.set(n.get() + 1));
    (finding.sort_key(), stage)
}

/// The findings located in one document, by the stage each comes from.
pub enum Own {
    /// As they are: all is kept (to be fixed).
    Kept(Vec<(Stage, Finding)>),
    /// Only to be reported: sorted and encoded, by the thread that found
    /// them (a thread that frees what another allocated slows the
    /// allocator of that other).
    Records(Records),
}

impl Own {
    /// Findings to be reported only.
    pub fn reported(mut findings: Vec<(Stage, Finding)>) -> Self {
        crate::report::sort_by(&mut findings, |(a_stage, a), (b_stage, b)| {
            order(a, *a_stage).cmp(&order(b, *b_stage))
        });
        // Of repeats, the first is written.
        findings.dedup_by(|(_, a), (_, b)| a.sort_key() == b.sort_key());
        let mut records = Records {
            // Most records are shorter.
            bytes: Vec::with_capacity(findings.len() * 512),
            last: 0,
        };
        for (stage, finding) in &findings {
            records.push(*stage, finding);
        }
        Own::Records(records)
    }
}

/// Findings as records, each after its length.
#[derive(Default)]
pub struct Records {
    bytes: Vec<u8>,
    /// Where the last record starts.
    last: usize,
}

impl Records {
    fn push(&mut self, stage: Stage, finding: &Finding) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(&[0; 4]);
        let bytes = std::mem::take(&mut self.bytes);
        self.bytes = postcard::to_extend(&Record::of(stage, finding), bytes)
            .expect("postcard writes any record into a vector");
        let len = u32::try_from(self.bytes.len() - start - 4).expect("a record under 4 GiB");
        self.bytes[start..start + 4].copy_from_slice(&len.to_le_bytes());
        self.last = start;
    }

    /// The records, without their lengths.
    fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let mut rest = &self.bytes[..];
        std::iter::from_fn(move || {
            let (len, tail) = rest.split_first_chunk::<4>()?;
            let (record, tail) = tail.split_at(u32::from_le_bytes(*len) as usize);
            rest = tail;
            Some(record)
        })
    }

    /// The last record, after its length.
    fn last(&self) -> &[u8] {
        &self.bytes[self.last..]
    }
}

/// A run's findings as they are found: the records of the linted documents
/// (step 2), which come in order, are spilled; those placed in other
/// objects' documents, which come in the order of the HPAs, are spilled in
/// sorted chunks; the others are held, and sorted at the end.
pub struct Gather {
    spill: Spill,
    placed: Placed,
    held: Vec<(Stage, Finding)>,
}

impl Gather {
    /// Keeps at most `bound` bytes of records of each kind in memory.
    pub fn new(bound: usize) -> Self {
        Self::spilling_to(bound, Arc::new(|| Scratch::temporary(Held::Findings)))
    }

    /// [`Gather::new`], spilling to the files `make` makes.
    fn spilling_to(bound: usize, make: MakeScratch) -> Self {
        Self {
            spill: Spill::new(bound, Arc::clone(&make)),
            placed: Placed::new(bound, make),
            held: Vec::new(),
        }
    }

    /// Holds findings till the end.
    pub fn hold(&mut self, findings: impl IntoIterator<Item = (Stage, Finding)>) {
        self.held.extend(findings);
    }

    /// Adds the findings located in a linted document. Documents come in
    /// the order of the output: files by name, then by input, documents in
    /// order.
    pub fn linted(&mut self, own: Own) -> io::Result<()> {
        match own {
            Own::Kept(findings) => self.hold(findings),
            Own::Records(records) if records.bytes.is_empty() => {}
            Own::Records(records) if self.spill.follows(&records)? => self.spill.push(&records)?,
            // Findings that go before some spilled (files share a name, or
            // documents a line) are held.
            Own::Records(records) => {
                let mut names = LastRead::default();
                for record in records.iter() {
                    let record = Record::read(record)?;
                    self.held
                        .push((record.stage(), record.finding(&mut names)?));
                }
            }
        }
        Ok(())
    }

    /// Adds findings about objects elsewhere that a linted document's HPAs
    /// caused, placed in those objects' documents; only to be reported.
    pub fn placed(&mut self, findings: Vec<(Stage, Finding)>) -> io::Result<()> {
        self.placed.add(findings)
    }

    /// All, in order.
    pub fn sorted(self) -> io::Result<Sorted> {
        Sorted::new(self.spill, self.placed, self.held)
    }
}

/// Findings placed in other objects' documents, found in the order of the
/// HPAs that caused them: gathered a chunk at a time, each chunk sorted and
/// encoded, in memory up to a bound, beyond it in an unnamed temporary
/// file; the chunks are merged at the end.
struct Placed {
    /// Findings per chunk.
    per_chunk: usize,
    pending: Vec<(Stage, Finding)>,
    chunks: Vec<Chunk>,
    /// Bytes of chunks kept in memory, at most.
    bound: usize,
    in_memory: usize,
    make: MakeScratch,
    file: Option<Scratch>,
}

/// A sorted chunk of records.
enum Chunk {
    Memory(Vec<u8>),
    /// Where it is in the file.
    File(u64, u64),
}

impl Placed {
    fn new(bound: usize, make: MakeScratch) -> Self {
        Self {
            // Some 1 MiB of records; small bounds (in tests) make many chunks.
            per_chunk: (bound / 512).clamp(1, 2048),
            pending: Vec::new(),
            chunks: Vec::new(),
            bound,
            in_memory: 0,
            make,
            file: None,
        }
    }

    /// Adds the findings one document caused (they stay in one chunk).
    fn add(&mut self, findings: Vec<(Stage, Finding)>) -> io::Result<()> {
        self.pending.extend(findings);
        if self.pending.len() >= self.per_chunk {
            self.flush()?;
        }
        Ok(())
    }

    /// Sorts the pending findings into a chunk, stably: findings in the same
    /// place in the order come from one HPA, which placed them in the order
    /// of their documents.
    fn flush(&mut self) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let mut pending = std::mem::take(&mut self.pending);
        crate::report::sort_by(&mut pending, |(a_stage, a), (b_stage, b)| {
            order(a, *a_stage).cmp(&order(b, *b_stage))
        });
        let mut records = Records::default();
        for (stage, finding) in &pending {
            records.push(*stage, finding);
        }
        drop(pending);
        if self.file.is_none() && self.in_memory + records.bytes.len() > self.bound {
            self.file = temporary_file(&self.make, &mut self.bound);
        }
        match &mut self.file {
            Some(file) => {
                let start = file.written();
                let written = file.write(&records.bytes).map_err(read_back);
                self.chunks.push(Chunk::File(start, file.written()));
                written
            }
            None => {
                self.in_memory += records.bytes.len();
                self.chunks.push(Chunk::Memory(records.bytes));
                Ok(())
            }
        }
    }

    /// Each chunk's findings, in order.
    fn read(mut self) -> io::Result<Vec<Spilled>> {
        self.flush()?;
        let written = self
            .file
            .map(Scratch::finish)
            .transpose()
            .map_err(read_back)?;
        let written = written.map(|written| match written {
            Written::File(file) => Ok(Arc::new(file)),
            Written::Memory(bytes) => Err(Arc::new(bytes)),
        });
        Ok(self
            .chunks
            .into_iter()
            .map(|chunk| {
                let records: Box<dyn BufRead> = match (chunk, &written) {
                    (Chunk::Memory(bytes), _) => Box::new(Cursor::new(bytes)),
                    (Chunk::File(at, end), Some(Ok(file))) => Box::new(BufReader::with_capacity(
                        CHUNK_BUFFER,
                        Section {
                            file: Arc::clone(file),
                            at,
                            end,
                        },
                    )),
                    // Writing to the file failed: its chunks are in memory.
                    (Chunk::File(at, end), Some(Err(bytes))) => Box::new(Cursor::new(Shared {
                        bytes: Arc::clone(bytes),
                        range: at as usize..end as usize,
                    })),
                    (Chunk::File(..), None) => unreachable!("a chunk in a file has a file"),
                };
                Spilled::of(records)
            })
            .collect())
    }
}

/// An unnamed temporary file to spill to. Without a temporary directory to
/// write in, records stay in memory (`bound` is lifted), as standard input
/// does: the run still works.
fn temporary_file(make: &MakeScratch, bound: &mut usize) -> Option<Scratch> {
    let file = make().ok();
    if file.is_none() {
        *bound = usize::MAX;
    }
    file
}

/// Makes a temporary file to spill to (in tests, one that fails).
type MakeScratch = Arc<dyn Fn() -> io::Result<Scratch> + Send + Sync>;

/// Bytes read at once from each chunk in the file.
const CHUNK_BUFFER: usize = 8 << 10;

/// A range of bytes shared with other chunks.
struct Shared {
    bytes: Arc<Vec<u8>>,
    range: Range<usize>,
}

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        &self.bytes[self.range.clone()]
    }
}

/// A range of the temporary file, read on its own (the chunks of one file
/// are read in turns).
struct Section {
    file: Arc<File>,
    at: u64,
    end: u64,
}

impl Read for Section {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = usize::try_from(self.end - self.at).unwrap_or(usize::MAX);
        let len = buf.len().min(left);
        if len == 0 {
            return Ok(0);
        }
        let mut file = &*self.file;
        file.seek(SeekFrom::Start(self.at))?;
        let n = file.read(&mut buf[..len])?;
        self.at += n as u64;
        Ok(n)
    }
}

/// The records of step 2, pushed in the order they are written.
struct Spill {
    /// At most this many bytes are kept in memory.
    bound: usize,
    memory: Vec<u8>,
    make: MakeScratch,
    /// Once more than `bound` came, all are here.
    file: Option<Scratch>,
    /// The last record pushed, after its length.
    last: Vec<u8>,
}

impl Spill {
    fn new(bound: usize, make: MakeScratch) -> Self {
        Self {
            bound,
            memory: Vec::new(),
            make,
            file: None,
            last: Vec::new(),
        }
    }

    /// Whether a document's records can follow those pushed: whether its
    /// first comes after the last pushed.
    fn follows(&self, records: &Records) -> io::Result<bool> {
        let Some(first) = records.iter().next() else {
            return Ok(true);
        };
        let Some(last) = self.last.get(4..) else {
            return Ok(true);
        };
        let (last, first) = (Record::read(last)?, Record::read(first)?);
        Ok(last.order()? <= first.order()?)
    }

    fn push(&mut self, records: &Records) -> io::Result<()> {
        self.last.clear();
        self.last.extend_from_slice(records.last());
        if self.file.is_none() && self.memory.len() + records.bytes.len() > self.bound {
            self.file = temporary_file(&self.make, &mut self.bound);
            if self.file.is_some() {
                let memory = std::mem::take(&mut self.memory);
                self.write(&memory)?;
            }
        }
        self.write(&records.bytes)
    }

    /// Writes records to the file, or holds them in memory.
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        match &mut self.file {
            Some(file) => file.write(bytes).map_err(read_back),
            None => {
                self.memory.extend_from_slice(bytes);
                Ok(())
            }
        }
    }

    /// The findings pushed, in order.
    fn read(self) -> io::Result<Spilled> {
        let written = self
            .file
            .map(Scratch::finish)
            .transpose()
            .map_err(read_back)?;
        let records: Box<dyn BufRead> = match written {
            None => Box::new(Cursor::new(self.memory)),
            Some(Written::Memory(bytes)) => Box::new(Cursor::new(bytes)),
            Some(Written::File(mut file)) => {
                file.rewind().map_err(read_back)?;
                Box::new(BufReader::new(file))
            }
        };
        Ok(Spilled::of(records))
    }
}

/// The findings of a [`Spill`], read back.
struct Spilled {
    records: Box<dyn BufRead>,
    buf: Vec<u8>,
    names: LastRead,
}

impl Spilled {
    fn of(records: Box<dyn BufRead>) -> Self {
        Self {
            records,
            buf: Vec::new(),
            names: LastRead::default(),
        }
    }
}

impl Iterator for Spilled {
    type Item = io::Result<(Stage, Finding)>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.records.fill_buf() {
            Ok([]) => return None,
            Ok(_) => {}
            Err(error) => return Some(Err(read_back(error))),
        }
        let mut len = [0; 4];
        let read = self.records.read_exact(&mut len).and_then(|()| {
            self.buf.resize(u32::from_le_bytes(len) as usize, 0);
            self.records.read_exact(&mut self.buf)
        });
        Some(read.map_err(read_back).and_then(|()| {
            let record = Record::read(&self.buf)?;
            Ok((record.stage(), record.finding(&mut self.names)?))
        }))
    }
}

/// An error reading the temporary file back, told as one.
fn read_back(error: io::Error) -> io::Error {
    io::Error::new(
        error.kind(),
        format!("reading findings back from a temporary file: {error}"),
    )
}

fn invalid(error: impl std::error::Error + Send + Sync + 'static) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, error)
}

/// Findings in order, by their stage.
type Stream = Box<dyn Iterator<Item = io::Result<(Stage, Finding)>>>;

/// The next finding of one stream, waiting in the merge's heap.
struct Head {
    stage: Stage,
    finding: Finding,
    stream: usize,
}

impl Head {
    /// Where it goes: by order, then stream (of equal findings, the first
    /// stream's comes first).
    fn cmp_place(&self, other: &Self) -> Ordering {
        order(&self.finding, self.stage)
            .cmp(&order(&other.finding, other.stage))
            .then(self.stream.cmp(&other.stream))
    }
}

/// Reversed: the heap gives its greatest first, the merge wants the least.
impl Ord for Head {
    fn cmp(&self, other: &Self) -> Ordering {
        other.cmp_place(self)
    }
}

impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Head {}

/// A run's findings in the order they are written, repeats (equal sort
/// keys) dropped: those of steps 2 and 3, each spilled in order, merged with
/// the others, sorted in memory. Ties go as a stable sort of all would put
/// them.
pub struct Sorted {
    /// Step 2's spilled findings, the chunks of those placed elsewhere, then
    /// the held ones (of findings in the same place in the order, the first
    /// of these came first).
    streams: Vec<Stream>,
    /// The next finding of each stream that has one: each finding out costs
    /// a logarithm of the number of chunks, however many there are.
    heads: BinaryHeap<Head>,
    /// Errors read, by stream, given before any finding.
    failed: VecDeque<(usize, io::Error)>,
    /// The next finding, read while looking for repeats.
    ahead: Option<io::Result<Finding>>,
}

impl Sorted {
    /// The spilled findings merged with `held` (in any order).
    fn new(spill: Spill, placed: Placed, mut held: Vec<(Stage, Finding)>) -> io::Result<Self> {
        crate::report::sort_by(&mut held, |(a_stage, a), (b_stage, b)| {
            order(a, *a_stage).cmp(&order(b, *b_stage))
        });
        let mut streams: Vec<Stream> = vec![Box::new(spill.read()?)];
        for chunk in placed.read()? {
            streams.push(Box::new(chunk));
        }
        streams.push(Box::new(held.into_iter().map(Ok)));
        let mut sorted = Self {
            heads: BinaryHeap::with_capacity(streams.len()),
            streams,
            failed: VecDeque::new(),
            ahead: None,
        };
        for stream in 0..sorted.streams.len() {
            sorted.pull(stream);
        }
        Ok(sorted)
    }

    /// Reads the next finding of a stream into the heap (or its error).
    fn pull(&mut self, stream: usize) {
        match self.streams[stream].next() {
            Some(Ok((stage, finding))) => self.heads.push(Head {
                stage,
                finding,
                stream,
            }),
            Some(Err(error)) => self.failed.push_back((stream, error)),
            None => {}
        }
    }

    /// The next finding of any stream, repeats included; an error first.
    fn merged(&mut self) -> Option<io::Result<Finding>> {
        if let Some((stream, error)) = self.failed.pop_front() {
            self.pull(stream);
            return Some(Err(error));
        }
        let Head {
            finding, stream, ..
        } = self.heads.pop()?;
        self.pull(stream);
        Some(Ok(finding))
    }
}

impl Iterator for Sorted {
    type Item = io::Result<Finding>;

    fn next(&mut self) -> Option<Self::Item> {
        let current = match self.ahead.take().or_else(|| self.merged())? {
            Ok(finding) => finding,
            Err(error) => return Some(Err(error)),
        };
        loop {
            match self.merged() {
                Some(Ok(next)) if next.sort_key() == current.sort_key() => {}
                next => {
                    self.ahead = next;
                    return Some(Ok(current));
                }
            }
        }
    }
}

impl Outcome<Sorted> {
    /// The outcome with its findings in memory.
    pub fn collect(self) -> io::Result<Outcome> {
        Ok(Outcome {
            findings: self.findings.collect::<io::Result<_>>()?,
            summary: self.summary,
            input_errors: self.input_errors,
        })
    }
}

fn malformed() -> io::Error {
    invalid(io::Error::other("a malformed finding"))
}

/// A [`SortKey`] read from a record: its path's steps order as a path's
/// segments do.
type RecordKey<'a> = (
    (Option<&'a str>, usize, usize),
    (&'a str, &'a str, &'a str),
    (&'static str, &'a str, &'a [Step<'a>]),
);

/// A finding as it is written to the file. The edits of its fix on field
/// paths, and the path it was located by, are not kept: a finding that is
/// only reported does not need them.
#[derive(Serialize, Deserialize)]
struct Record<'a> {
    /// The input and document of the HPA that caused it, when it is located
    /// elsewhere; a finding of step 2 is in that document.
    elsewhere: Option<(usize, usize)>,
    /// Position in [`ALL`].
    rule: u16,
    severity: u8,
    #[serde(borrow)]
    key: [&'a str; 4],
    origin: u32,
    #[serde(borrow)]
    path: Vec<Step<'a>>,
    reason: Option<u8>,
    message: &'a str,
    #[serde(borrow)]
    help: Option<&'a str>,
    /// Title, and whether it is safe.
    #[serde(borrow)]
    fix: Option<(&'a str, bool)>,
    #[serde(borrow)]
    location: Option<Place<'a>>,
}

#[derive(PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
enum Step<'a> {
    Field(&'a str),
    Key(&'a str),
    Index(usize),
}

#[derive(Serialize, Deserialize)]
struct Place<'a> {
    file: &'a str,
    input: usize,
    document: usize,
    line: usize,
    column: usize,
    excerpt: &'a str,
    highlight: (usize, usize),
    document_range: (usize, usize),
    #[serde(borrow)]
    object_path: Vec<Step<'a>>,
    #[serde(borrow)]
    edits: Vec<Edit<'a>>,
    #[serde(borrow)]
    fix_not_made: Option<&'a str>,
}

/// A [`FileEdit`]: where it starts and ends (line and column), and the new text.
#[derive(Serialize, Deserialize)]
struct Edit<'a>((usize, usize), (usize, usize), &'a str);

const SEVERITIES: [Severity; 3] = [Severity::Error, Severity::Warning, Severity::Info];
const REASONS: [Reason; 6] = [
    Reason::Required,
    Reason::Invalid,
    Reason::NotSupported,
    Reason::Forbidden,
    Reason::TooLong,
    Reason::BadRequest,
];

/// Position of `item` in `all` (each list names every value of its type).
fn code<T: PartialEq>(all: &[T], item: &T) -> u8 {
    all.iter().position(|x| x == item).expect("listed") as u8
}

fn steps(path: &FieldPath) -> Vec<Step<'_>> {
    path.segments()
        .iter()
        .map(|segment| match segment {
            Segment::Field(name) => Step::Field(name),
            Segment::Key(key) => Step::Key(key),
            Segment::Index(i) => Step::Index(*i),
        })
        .collect()
}

fn path(steps: &[Step<'_>]) -> FieldPath {
    FieldPath::from_segments(
        steps
            .iter()
            .map(|step| match *step {
                Step::Field(name) => Segment::Field(name.into()),
                Step::Key(key) => Segment::Key(key.into()),
                Step::Index(i) => Segment::Index(i),
            })
            .collect(),
    )
}

impl<'a> Record<'a> {
    fn read(bytes: &'a [u8]) -> io::Result<Self> {
        postcard::from_bytes(bytes).map_err(invalid)
    }

    /// Where the finding goes in the output, as [`order`] has it.
    fn order(&self) -> io::Result<(RecordKey<'_>, Stage)> {
        let rule = ALL.get(usize::from(self.rule)).ok_or_else(malformed)?;
        let [_, kind, namespace, name] = self.key;
        let place = match &self.location {
            Some(l) => (Some(l.file), l.line, l.column),
            None => (None, 0, 0),
        };
        let key = (
            place,
            (namespace, name, kind),
            (rule.name, self.message, &self.path[..]),
        );
        Ok((key, self.stage()))
    }

    /// The stage the finding comes from.
    fn stage(&self) -> Stage {
        match (self.elsewhere, &self.location) {
            (Some((input, document)), _) => Stage::Elsewhere(input, document),
            (None, Some(l)) => Stage::Linted(l.input, l.document),
            (None, None) => Stage::Linted(0, 0),
        }
    }

    /// A finding of step 2 or 3 (never of step 1: those are held).
    fn of(stage: Stage, finding: &'a Finding) -> Self {
        let d = &finding.diagnostic;
        let key = &d.subject.key;
        Record {
            elsewhere: match stage {
                Stage::Elsewhere(input, document) => Some((input, document)),
                Stage::Read | Stage::Linted(..) => None,
            },
            rule: ALL
                .iter()
                .position(|r| *r == d.rule)
                .expect("every rule is in ALL") as u16,
            severity: code(&SEVERITIES, &d.severity),
            key: [&key.api_version, &key.kind, &key.namespace, &key.name],
            origin: d.subject.origin.0,
            path: steps(&d.path),
            reason: d.reason.map(|r| code(&REASONS, &r)),
            message: &d.message,
            help: d.help.as_deref(),
            fix: d
                .fix
                .as_ref()
                .map(|f| (&*f.title, f.applicability == Applicability::Safe)),
            location: finding.location.as_ref().map(|l| Place {
                file: &l.file,
                input: l.input,
                document: l.document,
                line: l.line,
                column: l.column,
                excerpt: &l.excerpt.text,
                highlight: (l.excerpt.highlight.start, l.excerpt.highlight.end),
                document_range: (l.document_range.start, l.document_range.end),
                object_path: steps(&l.object_path),
                edits: l
                    .edits
                    .iter()
                    .map(|e| {
                        let at = |p: Position| (p.line, p.column);
                        Edit(at(e.start), at(e.end), &e.content)
                    })
                    .collect(),
                fix_not_made: l.fix_not_made.as_deref(),
            }),
        }
    }

    fn finding(self, names: &mut LastRead) -> io::Result<Finding> {
        let rule = *ALL.get(usize::from(self.rule)).ok_or_else(malformed)?;
        let severity = *SEVERITIES
            .get(usize::from(self.severity))
            .ok_or_else(malformed)?;
        let reason = match self.reason {
            Some(code) => Some(*REASONS.get(usize::from(code)).ok_or_else(malformed)?),
            None => None,
        };
        let [api_version, kind, namespace, name] = self.key;
        let diagnostic = Diagnostic {
            rule,
            severity,
            subject: Subject {
                key: names.key([api_version, kind, namespace, name]),
                origin: Origin(self.origin),
            },
            path: path(&self.path),
            source_path: FieldPath::root(),
            reason,
            message: self.message.to_owned(),
            help: self.help.map(|help| Cow::Owned(help.to_owned())),
            fix: self.fix.map(|(title, safe)| Fix {
                title: Cow::Owned(title.to_owned()),
                applicability: if safe {
                    Applicability::Safe
                } else {
                    Applicability::Unsafe
                },
                edits: Vec::new(),
            }),
        };
        let location = self.location.map(|l| Location {
            file: names.file(l.file),
            input: l.input,
            document: l.document,
            line: l.line,
            column: l.column,
            excerpt: Excerpt {
                text: l.excerpt.to_owned(),
                highlight: l.highlight.0..l.highlight.1,
            },
            document_range: l.document_range.0..l.document_range.1,
            object_path: path(&l.object_path),
            edits: l
                .edits
                .into_iter()
                .map(|Edit(start, end, content)| {
                    let at = |(line, column)| Position { line, column };
                    FileEdit {
                        start: at(start),
                        end: at(end),
                        content: content.to_owned(),
                    }
                })
                .collect(),
            fix_not_made: l.fix_not_made.map(str::to_owned),
        });
        Ok(Finding {
            diagnostic,
            location,
        })
    }
}

/// The file and object of the last finding read: the next is most often in
/// the same, and shares them.
#[derive(Default)]
struct LastRead {
    file: Option<Arc<str>>,
    key: Option<Arc<ObjectKey>>,
}

impl LastRead {
    fn file(&mut self, name: &str) -> Arc<str> {
        match &self.file {
            Some(file) if **file == *name => Arc::clone(file),
            _ => Arc::clone(self.file.insert(name.into())),
        }
    }

    fn key(&mut self, [api_version, kind, namespace, name]: [&str; 4]) -> Arc<ObjectKey> {
        let same = |k: &ObjectKey| {
            (&*k.api_version, &*k.kind, &*k.namespace, &*k.name)
                == (api_version, kind, namespace, name)
        };
        match &self.key {
            Some(key) if same(key) => Arc::clone(key),
            _ => Arc::clone(self.key.insert(Arc::new(ObjectKey {
                api_version: api_version.to_owned(),
                kind: kind.to_owned(),
                namespace: namespace.to_owned(),
                name: name.to_owned(),
            }))),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::Mutex;
    use std::sync::atomic::AtomicUsize;
    use std::sync::atomic::Ordering::Relaxed;

    use super::*;

    /// A finding of `rule` about `name`, placed at `line` of `file`; its help
    /// line tells it apart.
    fn finding(
        rule: usize,
        file: &str,
        (input, document): (usize, usize),
        line: usize,
        name: &str,
        help: &str,
    ) -> Finding {
        Finding {
            diagnostic: Diagnostic {
                rule: ALL[rule],
                severity: Severity::Warning,
                subject: Subject {
                    key: Arc::new(ObjectKey {
                        api_version: "autoscaling/v2".into(),
                        kind: "HorizontalPodAutoscaler".into(),
                        namespace: "default".into(),
                        name: name.into(),
                    }),
                    origin: Origin(7),
                },
                path: FieldPath::fields("spec.maxReplicas"),
                source_path: FieldPath::root(),
                reason: None,
                message: "too many".into(),
                help: Some(Cow::Owned(help.into())),
                fix: None,
            },
            location: Some(Location {
                file: file.into(),
                input,
                document,
                line,
                column: 3,
                excerpt: Excerpt::at("  maxReplicas: 300\n", 2, 11),
                document_range: 10..40,
                object_path: FieldPath::root(),
                edits: Vec::new(),
                fix_not_made: None,
            }),
        }
    }

    thread_local! {
        /// Times this thread worked out a finding's place in the order.
        pub static ORDERED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    fn written(findings: &[Finding]) -> Vec<String> {
        findings.iter().map(|f| format!("{f:?}")).collect()
    }

    #[test]
    fn findings_come_back_from_the_file_as_they_went_in() {
        let mut findings = Vec::new();
        // Every rule, severity and reason; fixes of both kinds, with edits
        // and without; a path of every kind of step; findings without a place.
        for rule in 0..ALL.len() {
            let mut f = finding(
                rule,
                "dir/ä.yaml",
                (rule, rule * 3),
                rule + 1,
                "web",
                "help",
            );
            let d = &mut f.diagnostic;
            d.severity = SEVERITIES[rule % 3];
            d.reason = (rule % 7 < 6).then(|| REASONS[rule % 7]);
            d.path = FieldPath::fields("spec.metrics")
                .index(rule)
                .key("a.b/c")
                .field("name");
            d.help = (rule % 2 == 0).then_some(Cow::Borrowed("a fixed help line"));
            d.fix = (rule % 3 > 0).then(|| Fix {
                title: Cow::Owned(format!("set it to {rule}")),
                applicability: if rule % 3 == 1 {
                    Applicability::Safe
                } else {
                    Applicability::Unsafe
                },
                edits: Vec::new(),
            });
            let location = f.location.as_mut().unwrap();
            location.object_path = FieldPath::root().field("items").index(rule);
            if rule % 3 > 0 {
                location.edits = vec![FileEdit {
                    start: Position {
                        line: 4,
                        column: 16,
                    },
                    end: Position {
                        line: 4,
                        column: 19,
                    },
                    content: "100\n€".into(),
                }];
            }
            location.fix_not_made = (rule % 4 == 0).then(|| "overlaps another fix".to_owned());
            if rule % 5 == 0 {
                f.location = None;
            }
            findings.push(f);
        }
        let expected = written(&findings);
        // Findings placed elsewhere tell the HPA's document; the others are in it.
        let stages: Vec<Stage> = findings
            .iter()
            .enumerate()
            .map(|(rule, f)| match &f.location {
                _ if rule % 2 == 0 => Stage::Elsewhere(rule, rule + 1),
                Some(l) => Stage::Linted(l.input, l.document),
                None => Stage::Linted(0, 0),
            })
            .collect();
        let mut records = Records::default();
        for (stage, finding) in stages.iter().zip(&findings) {
            records.push(*stage, finding);
        }
        // Held in memory, and in the file.
        for bound in [usize::MAX, 0] {
            let mut spill = Spill::new(bound, Arc::new(|| Scratch::temporary(Held::Findings)));
            spill.push(&records).unwrap();
            assert_eq!(spill.file.is_some(), bound == 0);
            let read: Vec<(Stage, Finding)> =
                spill.read().unwrap().collect::<io::Result<_>>().unwrap();
            let (read_stages, read): (Vec<Stage>, Vec<Finding>) = read.into_iter().unzip();
            assert_eq!(read_stages, stages, "bound {bound}");
            assert_eq!(written(&read), expected, "bound {bound}");
        }
    }

    /// A pseudo-random sequence (a linear congruential generator).
    struct Random(u64);

    impl Random {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) as usize % n
        }

        /// A finding in document `at` (input and document) of an input named
        /// `names[input]`, from few rules, lines, objects and messages: many
        /// share a sort key.
        fn finding(&mut self, names: &[&str], at: (usize, usize), id: usize) -> Finding {
            let name = ["x", "y"][self.below(2)];
            let mut f = finding(
                self.below(2),
                names[at.0],
                at,
                1 + self.below(3),
                name,
                &id.to_string(),
            );
            f.diagnostic.message = ["m", "n"][self.below(2)].into();
            f
        }
    }

    impl Random {
        /// A document's findings kept as they are (to be fixed), or as records.
        fn own(&mut self, findings: Vec<(Stage, Finding)>) -> Own {
            match self.below(3) {
                0 => Own::Kept(findings),
                _ => Own::reported(findings),
            }
        }
    }

    /// A finding's copy.
    fn copy(f: &Finding) -> Finding {
        Finding {
            diagnostic: f.diagnostic.clone(),
            location: f.location.as_ref().map(|l| Location {
                file: Arc::clone(&l.file),
                excerpt: Excerpt {
                    text: l.excerpt.text.clone(),
                    highlight: l.excerpt.highlight.clone(),
                },
                object_path: l.object_path.clone(),
                edits: l.edits.clone(),
                fix_not_made: l.fix_not_made.clone(),
                document_range: l.document_range.clone(),
                ..*l
            }),
        }
    }

    /// Which findings these are.
    fn ids<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> Vec<&'a str> {
        findings
            .into_iter()
            .map(|f| f.diagnostic.help.as_deref().unwrap())
            .collect()
    }

    /// A run's findings: made while reading, in the linted documents, and
    /// caused by them elsewhere.
    struct Run {
        read: Vec<Finding>,
        /// Input and document, in the order given.
        documents: Vec<(usize, usize)>,
        /// Each input's name.
        names: Vec<&'static str>,
        own: Vec<Vec<Finding>>,
        caused: Vec<Vec<Finding>>,
        /// Picks how each document's findings are gathered.
        seed: u64,
    }

    impl Run {
        fn random(seed: u64) -> Self {
            let mut random = Random(seed);
            let mut id = 0..;
            // Four inputs, with two names.
            let names: Vec<&str> = (0..4)
                .map(|_| ["a.yaml", "b.yaml"][random.below(2)])
                .collect();
            let mut documents = Vec::new();
            for input in 0..4 {
                for document in 0..random.below(3) {
                    documents.push((input, document));
                }
            }
            let read: Vec<Finding> = (0..random.below(4))
                .map(|_| {
                    let at = (random.below(4), 0);
                    random.finding(&names, at, id.next().unwrap())
                })
                .collect();
            let own: Vec<Vec<Finding>> = documents
                .iter()
                .map(|&at| {
                    (0..random.below(4))
                        .map(|_| random.finding(&names, at, id.next().unwrap()))
                        .collect()
                })
                .collect();
            // Located in any document, caused by a linted one; placed by
            // the input and document they are in.
            let caused: Vec<Vec<Finding>> = documents
                .iter()
                .map(|_| {
                    let mut found: Vec<(usize, usize)> = (0..random.below(3))
                        .map(|_| (random.below(4), 1 + random.below(2)))
                        .collect();
                    found.sort();
                    found
                        .into_iter()
                        .map(|at| random.finding(&names, at, id.next().unwrap()))
                        .collect()
                })
                .collect();
            Run {
                read,
                documents,
                names,
                own,
                caused,
                seed: random.0,
            }
        }

        /// Which findings a stable sort of all puts out (step 1's, each
        /// linted document's in order of input and document, those located
        /// elsewhere), repeats dropped.
        fn expected(&self) -> Vec<&str> {
            let mut all: Vec<&Finding> =
                self.read.iter().chain(self.own.iter().flatten()).collect();
            let mut located: Vec<(Stage, &Finding)> = self
                .documents
                .iter()
                .zip(&self.caused)
                .flat_map(|(&(input, document), found)| {
                    found
                        .iter()
                        .map(move |f| (Stage::Elsewhere(input, document), f))
                })
                .collect();
            // Equal findings of one HPA in files of one name: the first
            // input's and document's is kept.
            let within = |f: &Finding| f.location.as_ref().map(|l| (l.input, l.document));
            located.sort_by_key(|(stage, f)| (*stage, within(f)));
            all.extend(located.iter().map(|(_, f)| f));
            all.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
            all.dedup_by(|a, b| a.sort_key() == b.sort_key());
            ids(all)
        }

        /// The findings `gather` puts out, given them in the order of the
        /// output (documents linted by file name).
        fn gathered(&self, mut gather: Gather) -> Vec<Finding> {
            let mut random = Random(self.seed);
            gather.hold(self.read.iter().map(|f| (Stage::Read, copy(f))));
            let mut by_name: Vec<usize> = (0..self.documents.len()).collect();
            by_name.sort_by_key(|&i| (self.names[self.documents[i].0], self.documents[i]));
            for i in by_name {
                let (input, document) = self.documents[i];
                let stage = Stage::Linted(input, document);
                let findings = self.own[i].iter().map(|f| (stage, copy(f))).collect();
                gather.linted(random.own(findings)).unwrap();
                let stage = Stage::Elsewhere(input, document);
                let placed = self.caused[i].iter().map(|f| (stage, copy(f))).collect();
                // Placed and spilled in chunks (reported), or held (to be fixed).
                match random.below(3) {
                    0 => gather.hold(placed),
                    _ => gather.placed(placed).unwrap(),
                }
            }
            gather.sorted().unwrap().collect::<io::Result<_>>().unwrap()
        }
    }

    /// The findings of a run come out as a stable sort of all would put them,
    /// repeats dropped, wherever they were held: for documents linted in any
    /// order of file names, names that repeat, and any bound.
    #[test]
    fn findings_come_out_as_a_stable_sort_of_all_orders_them() {
        for seed in 0..500 {
            let run = Run::random(seed);
            let bound = [0, 200, usize::MAX][Random(seed).below(3)];
            let sorted = run.gathered(Gather::new(bound));
            assert_eq!(ids(&sorted), run.expected(), "seed {seed}");
        }
    }

    /// Takes at most `room` bytes into a file, then fails as a full disk
    /// does; every other write is interrupted first (by a signal).
    struct Full {
        file: File,
        room: u64,
        interrupt: bool,
        /// The bytes each file of a test took, and the writes refused.
        taken: Arc<Mutex<Vec<Vec<u8>>>>,
        this: usize,
        refused: Arc<AtomicUsize>,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.interrupt = !self.interrupt;
            if self.interrupt {
                return Err(io::ErrorKind::Interrupted.into());
            }
            if self.room == 0 {
                self.refused.fetch_add(1, Relaxed);
                return Err(io::ErrorKind::StorageFull.into());
            }
            let n = self.file.write(&buf[..buf.len().min(self.room as usize)])?;
            self.room -= n as u64;
            self.taken.lock().unwrap()[self.this].extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Temporary files that take at most `room` bytes each, written out
    /// `capacity` bytes at a time.
    fn full_files(
        room: u64,
        capacity: usize,
        taken: &Arc<Mutex<Vec<Vec<u8>>>>,
        refused: &Arc<AtomicUsize>,
    ) -> MakeScratch {
        let (taken, refused) = (Arc::clone(taken), Arc::clone(refused));
        Arc::new(move || {
            let file = tempfile::tempfile()?;
            taken.lock().unwrap().push(Vec::new());
            let writer = Full {
                file: file.try_clone()?,
                room,
                interrupt: false,
                this: taken.lock().unwrap().len() - 1,
                taken: Arc::clone(&taken),
                refused: Arc::clone(&refused),
            };
            Ok(Scratch::new(
                file,
                Box::new(writer),
                capacity,
                Held::Findings,
            ))
        })
    }

    /// Where each record starts in bytes written, and where they end.
    fn record_starts(mut bytes: &[u8]) -> Vec<u64> {
        let mut starts = vec![0];
        while let Some((len, rest)) = bytes.split_first_chunk::<4>() {
            bytes = &rest[u32::from_le_bytes(*len) as usize..];
            starts.push(starts.last().unwrap() + 4 + u64::from(u32::from_le_bytes(*len)));
        }
        starts
    }

    /// When writing to the temporary file fails (a full disk, a file size
    /// limit) after any number of bytes (at every record's start, in its
    /// length, just before and after), of step 2's records or of a chunk of
    /// placed ones, while the records held in memory are moved to the file
    /// or later, or when the last are written out, what the file took is
    /// read back and all is held in memory: the findings come out as they
    /// do when nothing fails.
    #[test]
    fn findings_written_to_a_temporary_file_that_fails_are_not_lost() {
        let mut failed_runs = 0;
        for seed in 0..300 {
            let run = Run::random(seed);
            let mut random = Random(seed);
            let bound = [0, 200][random.below(2)];
            let capacity = [1, 40, 300, 64 << 10][random.below(4)];
            let taken = Arc::new(Mutex::new(Vec::new()));
            let refused = Arc::new(AtomicUsize::new(0));
            let gather =
                |room| Gather::spilling_to(bound, full_files(room, capacity, &taken, &refused));
            let expected = written(&run.gathered(gather(u64::MAX)));
            assert_eq!(refused.load(Relaxed), 0);
            let files = std::mem::take(&mut *taken.lock().unwrap());
            let most = files.iter().map(Vec::len).max().unwrap_or(0) as u64;
            let mut rooms: Vec<u64> = files
                .iter()
                .flat_map(|bytes| record_starts(bytes))
                .flat_map(|start| [start.saturating_sub(1), start, start + 1, start + 3])
                .filter(|&room| room < most)
                .collect();
            rooms.sort();
            rooms.dedup();
            for room in rooms {
                refused.store(0, Relaxed);
                let sorted = run.gathered(gather(room));
                assert_eq!(written(&sorted), expected, "seed {seed}, room {room}");
                assert!(refused.load(Relaxed) > 0, "seed {seed}, room {room}");
                failed_runs += 1;
            }
        }
        // Runs long enough to spill, and fail, at many places.
        assert!(failed_runs > 5_000, "{failed_runs} runs failed");
    }

    /// An error reading the temporary file back says what failed.
    #[test]
    fn an_error_reading_findings_back_tells_where() {
        struct Failing;
        impl Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::ErrorKind::Other.into())
            }
        }
        let mut spilled = Spilled::of(Box::new(BufReader::new(Failing)));
        let error = spilled.next().unwrap().unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("reading findings back from a temporary file: "),
            "{error}"
        );
    }

    /// Findings placed elsewhere in thousands of chunks (each document's
    /// own, as with a small bound) come out at the cost of a logarithm of
    /// the number of chunks each: a merge that looked at every chunk for
    /// each finding made a stream of shuffled HPA + target pairs slow down
    /// with the square of its length.
    #[test]
    fn merging_many_chunks_costs_a_logarithm_per_finding() {
        let documents = 4000;
        let mut random = Random(7);
        let mut gather = Gather::new(0);
        for document in 0..documents {
            // In a target's document anywhere in the stream, as when HPAs
            // and their targets are shuffled.
            let at = (0, random.below(2 * documents));
            let name = format!("web{document}");
            let placed = finding(0, "s.yaml", at, at.1 * 20, &name, "help");
            gather
                .placed(vec![(Stage::Elsewhere(0, document), placed)])
                .unwrap();
        }
        ORDERED.with(|n| n.set(0));
        let sorted: Vec<Finding> = gather.sorted().unwrap().collect::<io::Result<_>>().unwrap();
        let ordered = ORDERED.with(std::cell::Cell::get);
        assert_eq!(sorted.len(), documents);
        assert!(
            sorted.is_sorted_by(|a, b| a.sort_key() <= b.sort_key()),
            "in order"
        );
        // Each finding is ordered some twice per level of the heap of the
        // chunks' next findings, some 2 × 12 levels here; a look at every
        // chunk would take 4,000.
        let levels = documents.ilog2() as usize + 1;
        assert!(
            ordered <= documents * 4 * levels,
            "{ordered} findings ordered to merge {documents} in as many chunks"
        );
    }
}
