//! Finding and reading the input files.
//!
//! Directories are walked as `ignore` walks them ([`crate::walk`]: hidden
//! files, `.gitignore` and `.ignore` respected, also outside git
//! repositories); files given explicitly
//! are read whatever their extension. `ignorePaths` from the configuration
//! applies to both. Unreadable input is an error of its own and never stops
//! the run. A directory is walked in the order the output sorts files in, so
//! its files need no sort, and a check of one directory reads them while the
//! walk goes on ([`walk_in_order`]).

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::{BTreeSet, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use hpa_lint_rules::source::{Chunk, split_documents};
use ignore::overrides::{Override, OverrideBuilder};
use rayon::iter::{IntoParallelIterator, ParallelIterator};

use crate::scratch::{Held, Scratch, Written};
use crate::walk::walked_name;

/// A single document larger than this is refused (documents are held whole
/// while they are read; files of any size are read in blocks).
pub const MAX_DOCUMENT_BYTES: usize = 256 << 20;

/// Files are read in blocks of whole documents of at least this size.
const BLOCK_BYTES: usize = 1 << 20;

const EXTENSIONS: [&str; 3] = ["yaml", "yml", "json"];

/// Where an input's bytes are.
enum Bytes {
    /// A file, opened when read, whose path is valid UTF-8 (shared with its
    /// name when they are the same).
    Named(Arc<str>),
    /// A file whose path is not valid UTF-8, opened when read.
    Path(PathBuf),
    /// Standard input as a file, never held whole and read again by
    /// ranges: the file itself when it is a regular file read from its
    /// start (`- < file`), otherwise a copy in an unnamed temporary file.
    Spooled(std::fs::File),
    /// Standard input held in memory, when no temporary file can be made,
    /// or a file of a git revision.
    Memory(Vec<u8>),
    /// Standard input that could not be read.
    Failed(String),
}

/// One input: a file, or standard input.
pub struct SourceFile {
    /// The name shown in output.
    pub name: Arc<str>,
    /// Read for lookups only (`--context`): nothing is reported about it.
    pub context: bool,
    bytes: Bytes,
    /// The text with the fixes made so far (`--fix`), read instead of `bytes`.
    fixed: Option<String>,
}

/// A piece of a file cut between documents: whole documents only.
pub struct Block {
    /// The text of the documents.
    pub text: String,
    /// Byte offset of the text in the file.
    pub offset: usize,
    /// Lines before the text in the file.
    pub line_offset: usize,
    /// The documents of `text`, when cutting it found them (those of the
    /// last block are found when asked for).
    documents: Option<Vec<Span>>,
}

/// Where a document is in its block: bytes, and lines before it.
struct Span {
    start: usize,
    end: usize,
    lines: usize,
}

/// The spans of documents cut from a block's text.
fn spans(chunks: &[Chunk<'_>]) -> Vec<Span> {
    chunks
        .iter()
        .map(|chunk| Span {
            start: chunk.offset,
            end: chunk.offset + chunk.text.len(),
            lines: chunk.line_offset,
        })
        .collect()
}

impl Block {
    /// The documents, placed in the file (as [`split_documents`] cuts them).
    pub fn documents<'a>(&'a self) -> Vec<Chunk<'a>> {
        let placed = |chunk: Chunk<'a>| Chunk {
            offset: self.offset + chunk.offset,
            line_offset: self.line_offset + chunk.line_offset,
            ..chunk
        };
        match &self.documents {
            Some(spans) => spans
                .iter()
                .map(|span| Chunk {
                    text: &self.text[span.start..span.end],
                    offset: span.start,
                    line_offset: span.lines,
                })
                .map(placed)
                .collect(),
            None => split_documents(&self.text)
                .into_iter()
                .map(placed)
                .collect(),
        }
    }
}

/// An input's blocks, read in order ([`SourceFile::blocks`]).
pub struct Blocks<'a> {
    /// The input, read in order.
    reader: Opened<'a>,
    /// Read and not yet handed over.
    buf: Vec<u8>,
    offset: usize,
    line_offset: usize,
    /// Where to look for a cut next: after a failed look, once the buffer
    /// has doubled, so a huge document is not split over and over.
    next_look: usize,
    /// Bytes left to read, when the size is known.
    left: Option<usize>,
    first: bool,
    /// Whether the last block was handed over, or an error.
    done: bool,
    /// A block's buffer given back, to read into.
    spare: Option<Vec<u8>>,
}

/// An input opened for reading ranges of it again.
pub enum Opened<'a> {
    File(std::fs::File),
    Borrowed(&'a std::fs::File),
    Memory(&'a [u8]),
}

impl<'a> Opened<'a> {
    /// The text at `offset..offset + len`, as [`Block`] offsets count.
    pub fn range(&self, offset: usize, len: usize) -> Result<String, String> {
        let mut buf = vec![0; len];
        match self {
            Opened::File(file) => read_exact_at(file, &mut buf, offset),
            Opened::Borrowed(file) => read_exact_at(file, &mut buf, offset),
            Opened::Memory(bytes) => match bytes.get(offset..offset + len) {
                Some(range) => {
                    buf.copy_from_slice(range);
                    Ok(())
                }
                None => Err(std::io::ErrorKind::UnexpectedEof.into()),
            },
        }
        .map_err(|e| e.to_string())?;
        String::from_utf8(buf).map_err(|e| e.to_string())
    }

    /// The input's size in bytes, when it is known: not for a device, nor
    /// for a file that says it is empty (`/proc` files do). A pipe or a
    /// socket is refused: its ranges cannot be read again.
    fn size(&self) -> Result<Option<usize>, String> {
        let file = match self {
            Opened::File(file) => file,
            Opened::Borrowed(file) => file,
            Opened::Memory(bytes) => return Ok(Some(bytes.len())),
        };
        let Ok(metadata) = file.metadata() else {
            return Ok(None);
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            let kind = metadata.file_type();
            if kind.is_fifo() || kind.is_socket() {
                return Err(NOT_REGULAR.into());
            }
        }
        let len = metadata.len() as usize;
        Ok((metadata.is_file() && len > 0).then_some(len))
    }

    /// The input from its start, to be read whole in order (as a reader).
    fn at_start(self) -> std::io::Result<Self> {
        use std::io::{Seek, SeekFrom};
        if let Opened::Borrowed(mut file) = self {
            // A spooled input is shared: its position is wherever it was left.
            file.seek(SeekFrom::Start(0))?;
        }
        // A file just opened is at its start, bytes are read from theirs.
        Ok(self)
    }

    /// The input as a reader, from where it is: nothing boxed for each
    /// file, and a file reads as `File` does, into a buffer not zeroed
    /// first (a `Read` of this enum would zero it).
    fn reader(&mut self) -> &mut dyn Read {
        match self {
            Opened::File(file) => file,
            Opened::Borrowed(file) => file,
            Opened::Memory(bytes) => bytes,
        }
    }
}

/// Reads at an offset without moving a shared file position, so threads can
/// read one file at once.
fn read_at(file: &std::fs::File, buf: &mut [u8], offset: usize) -> std::io::Result<usize> {
    #[cfg(unix)]
    return std::os::unix::fs::FileExt::read_at(file, buf, offset as u64);
    #[cfg(windows)]
    return std::os::windows::fs::FileExt::seek_read(file, buf, offset as u64);
}

pub(crate) fn read_exact_at(
    file: &std::fs::File,
    mut buf: &mut [u8],
    mut offset: usize,
) -> std::io::Result<()> {
    while !buf.is_empty() {
        match read_at(file, buf, offset)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n;
            }
        }
    }
    Ok(())
}

/// Checks the start of a file: not UTF-16, not binary; a UTF-8 byte-order
/// mark is skipped (its length is returned).
fn check_start(head: &[u8]) -> Result<usize, String> {
    if head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF]) {
        return Err("file is UTF-16; convert it to UTF-8".to_owned());
    }
    if memchr::memchr(0, &head[..head.len().min(8192)]).is_some() {
        return Err("binary file (contains NUL bytes), not YAML or JSON".to_owned());
    }
    Ok(if head.starts_with(&[0xEF, 0xBB, 0xBF]) {
        3
    } else {
        0
    })
}

impl SourceFile {
    /// A file whose bytes are held in memory (one of a git revision's), shown as `name`.
    pub fn in_memory(name: &str, bytes: Vec<u8>) -> Self {
        Self {
            name: Arc::from(name),
            context: false,
            bytes: Bytes::Memory(bytes),
            fixed: None,
        }
    }

    /// The file's path; `None` for standard input.
    pub fn path(&self) -> Option<&Path> {
        match &self.bytes {
            Bytes::Named(path) => Some(Path::new(&**path)),
            Bytes::Path(path) => Some(path),
            _ => None,
        }
    }

    /// The whole text, with the fixes made so far; a byte-order mark is
    /// included (offsets count from it).
    pub fn text(&self) -> Result<Cow<'_, str>, String> {
        match &self.fixed {
            Some(fixed) => Ok(Cow::Borrowed(fixed)),
            None => self.original_text().map(Cow::Owned),
        }
    }

    /// The whole text, as the input has it.
    pub fn original_text(&self) -> Result<String, String> {
        String::from_utf8(self.original_bytes()?).map_err(|e| e.to_string())
    }

    /// The input's bytes, as they are, whatever they hold.
    pub fn original_bytes(&self) -> Result<Vec<u8>, String> {
        let mut bytes = Vec::new();
        self.open_original()?
            .at_start()
            .and_then(|mut r| r.reader().read_to_end(&mut bytes))
            .map_err(|e| e.to_string())?;
        Ok(bytes)
    }

    /// The text with the fixes made so far, if some were.
    pub fn fixed(&self) -> Option<&str> {
        self.fixed.as_deref()
    }

    /// Reads `fixed` from now on instead of the input; `None`: the input again.
    pub fn set_fixed(&mut self, fixed: Option<String>) {
        self.fixed = fixed;
    }

    /// Opens the input for reading (ranges of it, or blocks).
    pub fn open(&self) -> Result<Opened<'_>, String> {
        match &self.fixed {
            Some(fixed) => Ok(Opened::Memory(fixed.as_bytes())),
            None => self.open_original(),
        }
    }

    fn open_original(&self) -> Result<Opened<'_>, String> {
        Ok(match &self.bytes {
            Bytes::Named(_) | Bytes::Path(_) => {
                let path = self.path().expect("a file has a path");
                Opened::File(std::fs::File::open(path).map_err(|e| e.to_string())?)
            }
            Bytes::Spooled(file) => Opened::Borrowed(file),
            Bytes::Memory(bytes) => Opened::Memory(bytes),
            Bytes::Failed(error) => return Err(error.clone()),
        })
    }

    /// Reads the input in blocks of whole documents, checked to be UTF-8,
    /// in order. Memory holds the block read (and a document that is larger
    /// than a block).
    pub fn blocks(&self) -> Result<Blocks<'_>, String> {
        let opened = self.open()?;
        let left = opened.size()?;
        Ok(Blocks {
            reader: opened.at_start().map_err(|e| e.to_string())?,
            buf: SPARE.take(),
            offset: 0,
            line_offset: 0,
            next_look: BLOCK_BYTES,
            left,
            first: true,
            done: false,
            spare: None,
        })
    }
}

/// The largest buffer kept for the next file: most files are smaller.
const SPARE_BYTES: usize = 64 << 10;

thread_local! {
    /// The buffer the last file read on this thread was read into, for the
    /// next: most files are small, and a buffer made for each is a large
    /// allocation (glibc's malloc consolidates its free chunks for those).
    static SPARE: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

impl Drop for Blocks<'_> {
    fn drop(&mut self) {
        let spare = self.spare.take().unwrap_or_default();
        let mut buffer = if spare.capacity() >= self.buf.capacity() {
            spare
        } else {
            std::mem::take(&mut self.buf)
        };
        if buffer.capacity() <= SPARE_BYTES {
            buffer.clear();
            SPARE.set(buffer);
        }
    }
}

impl Iterator for Blocks<'_> {
    type Item = Result<Block, String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let block = self.read();
        self.done = !matches!(block, Ok(Some(_)));
        block.transpose()
    }
}

impl Blocks<'_> {
    /// Whether no block is left.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Gives back a block read, whose buffer the next block is read into.
    pub fn give_back(&mut self, block: Block) {
        self.spare = Some(block.text.into_bytes());
    }

    /// The next block; `None` at the end.
    fn read(&mut self) -> Result<Option<Block>, String> {
        let buf = &mut self.buf;
        loop {
            // A file of known size is read up to its size, not on to a read
            // that finds its end; room for it is made at once, as reading to
            // an unknown end would grow it in small steps.
            let want = self.left.map_or(BLOCK_BYTES, |left| {
                buf.reserve(left.min(BLOCK_BYTES));
                left.min(BLOCK_BYTES)
            });
            let n = self
                .reader
                .reader()
                .take(want as u64)
                .read_to_end(buf)
                .map_err(|e| e.to_string())?;
            self.left = self.left.map(|left| left.saturating_sub(n));
            if self.first {
                self.first = false;
                // Offsets count from the file's start, a byte-order mark included.
                self.offset = check_start(buf)?;
                buf.drain(..self.offset);
            }
            let end = n == 0 || self.left == Some(0);
            let offset = self.offset;
            let invalid =
                |at: usize| format!("file is not valid UTF-8 (invalid byte at offset {at})");
            if end {
                self.done = true;
                if buf.is_empty() {
                    return Ok(None);
                }
                // The rest is whole documents: handed over without a copy.
                let text = String::from_utf8(std::mem::take(buf))
                    .map_err(|e| invalid(offset + e.utf8_error().valid_up_to()))?;
                let block = Block {
                    text,
                    offset,
                    line_offset: self.line_offset,
                    documents: None,
                };
                return Ok(Some(block));
            }
            if buf.len() < self.next_look {
                continue;
            }
            // Checked once, as it is handed over; a character cut by the read
            // is completed by the next.
            let (mut text, cut_short) = match String::from_utf8(std::mem::take(buf)) {
                Ok(text) => (text, Vec::new()),
                Err(e) if e.utf8_error().error_len().is_none() => {
                    let valid = e.utf8_error().valid_up_to();
                    let mut bytes = e.into_bytes();
                    let cut_short = bytes.split_off(valid);
                    let text = String::from_utf8(bytes).expect("valid up to there");
                    (text, cut_short)
                }
                Err(e) => return Err(invalid(offset + e.utf8_error().valid_up_to())),
            };
            // Up to the start of the last document, which may go on.
            let chunks = split_documents(&text);
            let Some(&last) = chunks.last().filter(|last| last.offset > 0) else {
                *buf = text.into_bytes();
                buf.extend_from_slice(&cut_short);
                self.next_look = buf.len() * 2;
                if buf.len() > MAX_DOCUMENT_BYTES {
                    return Err(format!(
                        "a document at line {} is larger than {} MiB",
                        self.line_offset + 1,
                        MAX_DOCUMENT_BYTES >> 20
                    ));
                }
                continue;
            };
            let (cut, lines) = (last.offset, last.line_offset);
            // The documents before the last are those of the text up to it.
            let documents = Some(spans(&chunks[..chunks.len() - 1]));
            // The block is the text read, but for the last document: only
            // that is copied, to be read on (into a block given back: a
            // few buffers serve a whole stream).
            let mut rest = self.spare.take().unwrap_or_default();
            rest.clear();
            rest.extend_from_slice(&text.as_bytes()[cut..]);
            rest.extend_from_slice(&cut_short);
            text.truncate(cut);
            *buf = rest;
            let block = Block {
                text,
                offset,
                line_offset: self.line_offset,
                documents,
            };
            self.offset += cut;
            self.line_offset += lines;
            self.next_look = BLOCK_BYTES;
            return Ok(Some(block));
        }
    }
}

/// Standard input: the file itself when it is a regular file read from its
/// start; otherwise copied to a temporary file, or held in memory when none
/// can be made or writing to it fails.
fn read_stdin() -> Bytes {
    if let Some(file) = stdin_file() {
        return Bytes::Spooled(file);
    }
    spool(
        &mut std::io::stdin().lock(),
        Scratch::temporary(Held::Input),
    )
}

/// Bytes read from standard input at once.
const SPOOL_READ: usize = 1 << 20;

/// Copies `input` to `scratch`, or into memory when there is none.
fn spool(input: &mut impl Read, scratch: std::io::Result<Scratch>) -> Bytes {
    let spooled = match scratch {
        Ok(mut scratch) => copy_into(input, &mut scratch).and_then(|()| scratch.finish()),
        Err(_) => {
            let mut bytes = Vec::new();
            input
                .read_to_end(&mut bytes)
                .map(|_| Written::Memory(bytes))
        }
    };
    match spooled {
        Ok(Written::File(file)) => Bytes::Spooled(file),
        Ok(Written::Memory(bytes)) => Bytes::Memory(bytes),
        Err(e) => Bytes::Failed(e.to_string()),
    }
}

/// Copies `input` to its end into `scratch`.
fn copy_into(input: &mut impl Read, scratch: &mut Scratch) -> std::io::Result<()> {
    let mut chunk = vec![0; SPOOL_READ];
    loop {
        match input.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(read) => scratch.write(&chunk[..read])?,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Standard input when it is a regular file at its start (`- < file`): read
/// where it is, like a named file, rather than copied first.
fn stdin_file() -> Option<std::fs::File> {
    use std::io::Seek;
    #[cfg(unix)]
    let stdin = std::os::fd::AsFd::as_fd(&std::io::stdin()).try_clone_to_owned();
    #[cfg(windows)]
    let stdin = std::os::windows::io::AsHandle::as_handle(&std::io::stdin()).try_clone_to_owned();
    let mut file = std::fs::File::from(stdin.ok()?);
    let regular = file.metadata().ok()?.is_file();
    (regular && file.stream_position().ok()? == 0).then_some(file)
}

pub fn ignore_matcher(globs: &[String], root: &Path) -> Result<Override, String> {
    let mut builder = OverrideBuilder::new(root);
    for glob in globs {
        builder
            .add(&format!("!{glob}"))
            .map_err(|e| format!("invalid ignorePaths glob `{glob}`: {e}"))?;
    }
    builder.build().map_err(|e| e.to_string())
}

/// Whether `ignorePaths` excludes a path (given relative to the current directory).
pub fn is_ignored(ignored: &Override, cwd: &Path, path: &Path, is_dir: bool) -> bool {
    if ignored.is_empty() {
        return false;
    }
    // Collecting the components drops `.` segments (`./vendor`), which would
    // otherwise keep the path from matching the globs' root.
    let absolute: PathBuf = cwd.join(path).components().collect();
    ignored.matched(absolute, is_dir).is_ignore()
}

pub fn has_manifest_extension(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|name| has_manifest_name(name.as_encoded_bytes()))
}

/// Whether a file name ends with a manifest extension, as
/// [`Path::extension`] finds it: after the last dot, unless the name starts
/// there.
fn has_manifest_name(name: &[u8]) -> bool {
    match name.iter().rposition(|&b| b == b'.') {
        Some(dot) if dot > 0 => {
            let extension = &name[dot + 1..];
            EXTENSIONS
                .iter()
                .any(|x| extension.eq_ignore_ascii_case(x.as_bytes()))
        }
        _ => false,
    }
}

/// Walks `dir` in the order the output sorts files in: each directory's
/// entries by name, depth first, which is [`Path`]'s order ([`crate::walk`]).
/// Hands each manifest to `found` as it is found, until it says to stop
/// (returns `false`); what cannot be read goes to `errors`.
fn walk(
    dir: &Path,
    ignored: &Override,
    cwd: &Path,
    errors: &mut Vec<String>,
    mut found: impl FnMut(&Path) -> bool,
) {
    let keep = |path: &Path, is_dir: bool| !is_ignored(ignored, cwd, path, is_dir);
    crate::walk::walk(
        dir,
        cwd,
        &keep,
        errors,
        &mut warn_of_ignore_file,
        &mut |path, file_type| {
            !(file_type.is_file() && has_manifest_name(walked_name(path))) || found(path)
        },
    );
}

/// Tells on standard error, once per run however many walks read it, what
/// an ignore file has that is not used, as git warns of what it cannot use:
/// it is not an input that could not be read.
fn warn_of_ignore_file(error: &ignore::Error) {
    static TOLD: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    if let ignore::Error::Partial(errors) = error {
        errors.iter().for_each(warn_of_ignore_file);
        return;
    }
    // The same file may be reached by several paths (`dir` and `./dir`, a
    // directory walked and the parent of another).
    let file_and_problem = match error {
        ignore::Error::WithPath { path, err } => {
            let file = path.canonicalize().unwrap_or_else(|_| path.clone());
            format!("{}: {err}", file.display())
        }
        error => error.to_string(),
    };
    let told = TOLD
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(file_and_problem);
    if told {
        crate::tell!("hpa-lint: warning: {error}; the line is not used");
    }
}

/// The order of the files [`collect`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Sorted by path (the linter's: its output is sorted anyway), standard
    /// input last.
    Sorted,
    /// As the paths are given, a directory's files sorted, standard input
    /// where `-` is: `behavior` and `simulate` list the HPAs in this order.
    Given,
}

/// Why a pipe or a socket is not read by its path: its ranges cannot be
/// read again.
const NOT_REGULAR: &str = "not a regular file (a pipe): give it on standard input (`-`)";

/// Whether `path` is a pipe or a socket. Checked before opening it: opening
/// a named pipe waits for a writer.
fn is_pipe(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo() || m.file_type().is_socket())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// The files to lint in `order`, without duplicates, then the files under
/// the `context` directories that are not among them (sorted), plus the
/// errors met while looking for them. `-` reads standard input (once).
pub fn collect(
    paths: &[PathBuf],
    context: &[PathBuf],
    ignore_paths: &[String],
    config_dir: &Path,
    order: Order,
) -> Result<(Vec<SourceFile>, Vec<String>), String> {
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let ignored = ignore_matcher(ignore_paths, config_dir)?;
    let mut files = Vec::new();
    let mut errors = Vec::new();
    // Standard input's bytes, and how many files come before it.
    let mut stdin = None;
    let default = [PathBuf::from(".")];
    let paths = if paths.is_empty() {
        &default[..]
    } else {
        paths
    };
    for path in paths {
        if path.as_os_str() == "-" {
            stdin.get_or_insert_with(|| (read_stdin(), files.len()));
        } else if path.is_dir() {
            walk(path, &ignored, &cwd, &mut errors, |file| {
                files.push(file.to_path_buf());
                true
            });
        } else if !path.exists() {
            errors.push(format!("{}: no such file or directory", path.display()));
        } else if is_pipe(path) {
            errors.push(format!("{}: {NOT_REGULAR}", path.display()));
        } else if !is_ignored(&ignored, &cwd, path, false) {
            files.push(path.clone());
        }
    }
    let mut context_files = Vec::new();
    for dir in context {
        walk(dir, &ignored, &cwd, &mut errors, |file| {
            context_files.push(file.to_path_buf());
            true
        });
    }
    let stdin_at = stdin.as_ref().map(|(_, before)| match order {
        Order::Sorted => usize::MAX,
        Order::Given => {
            let before: HashSet<_> = files[..*before].iter().map(|p| file_key(&cwd, p)).collect();
            before.len()
        }
    });
    // One path walked or read: its files are sorted and unique already.
    let given = paths.iter().filter(|path| path.as_os_str() != "-").count();
    let mut sources = to_sources(files, false, order, given <= 1, &cwd);
    if let (Some((bytes, _)), Some(at)) = (stdin, stdin_at) {
        let source = SourceFile {
            name: Arc::from("<stdin>"),
            context: false,
            bytes,
            fixed: None,
        };
        sources.insert(at.min(sources.len()), source);
    }
    if context_files.is_empty() {
        return Ok((sources, errors));
    }
    // A file given both ways is linted.
    let linted: HashSet<PathBuf> = sources
        .iter()
        .filter_map(|s| s.path().map(|path| file_key(&cwd, path)))
        .collect();
    context_files.retain(|path| !linted.contains(&file_key(&cwd, path)));
    let one_path = context.len() <= 1;
    sources.extend(to_sources(
        context_files,
        true,
        Order::Sorted,
        one_path,
        &cwd,
    ));
    Ok((sources, errors))
}

/// `files` as inputs, in `order`, each file once (the first of its
/// spellings, [`file_key`]); `one_path`: they are one directory's or one
/// file, sorted and without duplicates already.
fn to_sources(
    mut files: Vec<PathBuf>,
    context: bool,
    order: Order,
    one_path: bool,
    cwd: &Path,
) -> Vec<SourceFile> {
    if !one_path {
        let mut seen = HashSet::new();
        files.retain(|path| seen.insert(file_key(cwd, path)));
        if order == Order::Sorted {
            files.sort_by(|a, b| shown(a).cmp(shown(b)));
        }
    }
    // On all cores: a name made for each of many files, with nothing
    // else to do at once.
    files
        .into_par_iter()
        .map(|path| source_file(&path, context))
        .collect()
}

/// What tells files apart: `a.yaml`, `./a.yaml` and `$PWD/a.yaml` are the
/// same file. Symbolic links and `..` are not resolved: that would take a
/// system call for each file.
fn file_key(cwd: &Path, path: &Path) -> PathBuf {
    cwd.join(path).components().collect()
}

/// `path` as it is shown: `./apps/x.yaml` (from walking `.`) reads better
/// as `apps/x.yaml`.
fn shown(path: &Path) -> &Path {
    // Only a path starting with a dot can start with `.` as a component.
    match path.as_os_str().as_encoded_bytes().first() {
        Some(b'.') => path.strip_prefix(".").unwrap_or(path),
        _ => path,
    }
}

/// The input read from the file at `path`.
fn source_file(path: &Path, context: bool) -> SourceFile {
    let shown = shown(path);
    // Held all run, for each of many files: a path that is its name
    // is held once, shared with it (the name may change: `diff`).
    let (name, bytes) = match path.to_str() {
        Some(original) => {
            let original: Arc<str> = Arc::from(original);
            // Most often the path itself, not checked again; otherwise a
            // part of it, text too.
            let name = if shown.as_os_str().len() == original.len() {
                original.clone()
            } else {
                Arc::from(shown.to_string_lossy())
            };
            (name, Bytes::Named(original))
        }
        None => (
            Arc::from(shown.display().to_string()),
            Bytes::Path(path.to_path_buf()),
        ),
    };
    SourceFile {
        name,
        context,
        bytes,
        fixed: None,
    }
}

/// The one directory `paths` name (none is `.`), when that is all that is
/// read: its files can be read while they are found ([`walk_in_order`]).
pub fn one_directory<'p>(paths: &'p [PathBuf], context: &[PathBuf]) -> Option<&'p Path> {
    let dir = match paths {
        [] => Path::new("."),
        [path] => path,
        _ => return None,
    };
    (context.is_empty() && dir.as_os_str() != "-" && dir.is_dir()).then_some(dir)
}

/// Walks `dir` as [`collect`] does, handing its files to `found` in batches
/// of `batch` as they are found, until it says to stop (it returns `false`);
/// returns what could not be read.
pub fn walk_in_order(
    dir: &Path,
    ignore_paths: &[String],
    config_dir: &Path,
    batch: usize,
    mut found: impl FnMut(Vec<SourceFile>) -> bool,
) -> Result<Vec<String>, String> {
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let ignored = ignore_matcher(ignore_paths, config_dir)?;
    let mut files = Vec::with_capacity(batch);
    let mut errors = Vec::new();
    let mut going = true;
    walk(dir, &ignored, &cwd, &mut errors, |path| {
        files.push(source_file(path, false));
        if files.len() == batch {
            going = found(std::mem::replace(&mut files, Vec::with_capacity(batch)));
        }
        going
    });
    if going && !files.is_empty() {
        found(files);
    }
    Ok(errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A walked file is shown without its leading `./`, and keeps its path as
    /// given: `diff` names files by their path below the directory walked.
    #[test]
    fn files_keep_their_paths_and_are_shown_without_dot_slash() {
        let paths = ["./base/apps/a.yaml", "base/b.yaml", "/abs/c.json"].map(PathBuf::from);
        let sources = to_sources(paths.to_vec(), false, Order::Given, true, Path::new("/"));
        let shown: Vec<(&str, &Path)> = sources
            .iter()
            .map(|s| (&*s.name, s.path().unwrap()))
            .collect();
        assert_eq!(
            shown,
            [
                ("base/apps/a.yaml", Path::new("./base/apps/a.yaml")),
                ("base/b.yaml", Path::new("base/b.yaml")),
                ("/abs/c.json", Path::new("/abs/c.json")),
            ]
        );
        assert_eq!(
            sources[0].path().unwrap().strip_prefix("./base").unwrap(),
            Path::new("apps/a.yaml")
        );
    }

    /// The blocks of a file as `blocks` hands them over.
    fn read_blocks(path: &Path) -> Result<Vec<(String, usize, usize)>, String> {
        let sources = to_sources(
            vec![path.to_path_buf()],
            false,
            Order::Sorted,
            true,
            Path::new("/"),
        );
        let mut blocks = Vec::new();
        for block in sources[0].blocks()? {
            let block = block?;
            blocks.push((block.text, block.offset, block.line_offset));
        }
        Ok(blocks)
    }

    /// A file is read whole, up to the size it has, in blocks of whole
    /// documents; an empty file has no block.
    #[test]
    fn files_are_read_whole_in_blocks_of_documents() {
        let dir = tempfile::tempdir().unwrap();
        let document = format!("a: {}\n", "x".repeat(999));
        let cases = [
            ("empty.yaml", String::new()),
            ("small.yaml", "\u{feff}a: 1\n---\nb: 2".to_owned()),
            ("large.yaml", format!("---\n{document}").repeat(3000)),
        ];
        for (name, text) in cases {
            let path = dir.path().join(name);
            std::fs::write(&path, &text).unwrap();
            let blocks = read_blocks(&path).unwrap();
            let start = text.len() - text.trim_start_matches('\u{feff}').len();
            let mut read = text[..start].to_owned();
            for (block, offset, line_offset) in &blocks {
                assert_eq!(*offset, read.len(), "{name}");
                let breaks = hpa_lint_rules::source::lines::count_breaks(&read);
                assert_eq!(*line_offset, breaks, "{name}");
                read += block;
            }
            assert_eq!(read, text, "{name}");
            let expected = match name {
                "empty.yaml" => 0,
                "small.yaml" => 1,
                _ => text.len().div_ceil(BLOCK_BYTES),
            };
            assert_eq!(blocks.len(), expected, "{name}");
        }
    }

    /// A pipe given by its path is refused with a clear error (its ranges
    /// cannot be read again), rather than read once and then lost.
    #[cfg(target_os = "linux")]
    /// Standard input copied to a temporary file comes back whole, whether
    /// writing to the file works, fails at once or part-way (the input is
    /// held in memory then), or no file can be made.
    #[test]
    fn standard_input_is_kept_whole_when_its_temporary_file_fills_up() {
        /// Gives `step` bytes at a time, as a pipe gives what it holds.
        struct Trickle<'a> {
            bytes: &'a [u8],
            step: usize,
        }
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = self.step.min(buf.len()).min(self.bytes.len());
                buf[..n].copy_from_slice(&self.bytes[..n]);
                self.bytes = &self.bytes[n..];
                Ok(n)
            }
        }
        let input: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
        let capacity = 1000;
        for step in [7, 1000, 4096, 1 << 20] {
            for fails_after in [
                None,
                Some(0),
                Some(1),
                Some(capacity - 1),
                Some(capacity),
                Some(5003),
                Some(input.len() - 1),
                Some(input.len()),
            ] {
                let case = format!("{step} bytes at a time, failing after {fails_after:?}");
                let mut reader = Trickle {
                    bytes: &input,
                    step,
                };
                let scratch = crate::scratch::testing::scratch(Held::Input, capacity, fails_after);
                let kept = match spool(&mut reader, scratch) {
                    Bytes::Spooled(file) => {
                        assert!(fails_after.is_none_or(|n| n >= input.len()), "{case}");
                        let mut kept = vec![0; input.len()];
                        read_exact_at(&file, &mut kept, 0).unwrap();
                        assert_eq!(file.metadata().unwrap().len() as usize, input.len());
                        kept
                    }
                    Bytes::Memory(kept) => {
                        assert!(fails_after.is_some_and(|n| n < input.len()), "{case}");
                        kept
                    }
                    _ => panic!("{case}: not read"),
                };
                assert!(kept == input, "{case}");
            }
        }
        let mut reader = Trickle {
            bytes: &input,
            step: 7,
        };
        let no_file = Err(std::io::Error::other("no temporary directory"));
        assert!(matches!(spool(&mut reader, no_file), Bytes::Memory(kept) if kept == input));
    }

    #[test]
    fn a_pipe_given_as_a_path_is_an_error() {
        use std::io::Write;
        use std::os::fd::AsRawFd;
        let (reader, mut writer) = std::io::pipe().unwrap();
        writer.write_all(b"a: 1\n").unwrap();
        drop(writer);
        let path = PathBuf::from(format!("/proc/self/fd/{}", reader.as_raw_fd()));
        let error = read_blocks(&path).unwrap_err();
        assert!(error.contains("not a regular file"), "{error}");
    }

    /// A named pipe given by its path is refused before it is opened:
    /// opening it would wait for a writer that may never come.
    #[cfg(unix)]
    #[test]
    fn a_named_pipe_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("hpa.yaml");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let (sources, errors) = collect(
            std::slice::from_ref(&fifo),
            &[],
            &[],
            dir.path(),
            Order::Sorted,
        )
        .unwrap();
        assert!(sources.is_empty());
        assert_eq!(errors, [format!("{}: {NOT_REGULAR}", fifo.display())]);
    }

    /// The names of the files [`walk_in_order`] finds under `dir`, in the
    /// batches it hands them over in, until `wanted` batches are taken.
    fn walked_in_order(dir: &Path, batch: usize, wanted: usize) -> Vec<Vec<String>> {
        let mut batches = Vec::new();
        let errors = walk_in_order(dir, &[], dir, batch, |files| {
            batches.push(files.iter().map(|f| f.name.to_string()).collect());
            batches.len() < wanted
        })
        .unwrap();
        assert_eq!(errors, Vec::<String>::new());
        batches
    }

    /// A directory the walk cannot read is reported once, by its path and
    /// what happened (walkdir's error names the path a second time).
    #[cfg(target_os = "linux")]
    #[test]
    fn a_directory_that_cannot_be_read_is_named_once() {
        let dir = tempfile::tempdir().unwrap();
        // Deeper than a path can name (4,096 bytes): the deepest directories
        // cannot be read. Made by a shell going down one name at a time.
        let name = "d".repeat(250);
        let made = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "for i in $(seq 20); do mkdir {name} && cd -P {name} || exit 1; done"
            ))
            .current_dir(dir.path())
            .status()
            .unwrap();
        assert!(made.success());
        let (_, errors) = collect(
            &[dir.path().to_path_buf()],
            &[],
            &[],
            dir.path(),
            Order::Sorted,
        )
        .unwrap();
        let walked = walk_in_order(dir.path(), &[], dir.path(), 8, |_| true).unwrap();
        assert_eq!(walked, errors);
        let [error] = &errors[..] else {
            panic!("one error: {errors:?}")
        };
        let (path, what) = error.split_once(": ").unwrap();
        assert!(path.starts_with(&*dir.path().to_string_lossy()), "{error}");
        assert_eq!(what, "File name too long (os error 36)");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// A walk in order finds the files `collect` finds in a directory
        /// (not hidden, not ignored, with a manifest extension), in `Path`'s
        /// order, in full batches but for the last, and stops when told to.
        #[test]
        fn a_walk_in_order_finds_what_collect_finds_in_paths_order(
            names in proptest::collection::vec(
                "[ab\\-_ ][ab.\\-_ ]{0,2}(/[ab\\-_ ][ab.\\-_ ]{0,2}){0,2}\\.(yaml|yml|json|txt)",
                1..24,
            ),
            batch in 1usize..5,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let written = names.iter().map(String::as_str).chain([".hidden/a.yaml", "b_/x.yaml", ".gitignore"]);
            for name in written {
                let path = dir.path().join(name);
                // A name may be another's directory already, or the reverse.
                if std::fs::create_dir_all(path.parent().unwrap()).is_ok() {
                    let _ = std::fs::write(&path, "a: 1\n");
                }
            }
            std::fs::write(dir.path().join(".gitignore"), "b_/\n").unwrap();
            let (sources, errors) =
                collect(&[dir.path().to_path_buf()], &[], &[], dir.path(), Order::Sorted).unwrap();
            proptest::prop_assert!(errors.is_empty());
            let collected: Vec<String> = sources.iter().map(|s| s.name.to_string()).collect();
            let mut in_paths_order: Vec<&Path> = collected.iter().map(Path::new).collect();
            in_paths_order.sort();
            proptest::prop_assert!(collected.iter().map(Path::new).eq(in_paths_order));
            let walked = |name: &String| {
                let below = Path::new(name).strip_prefix(dir.path()).unwrap().to_string_lossy().into_owned();
                has_manifest_extension(Path::new(name)) && !below.starts_with('.') && !below.starts_with("b_/")
            };
            proptest::prop_assert!(collected.iter().all(walked));
            let batches = walked_in_order(dir.path(), batch, usize::MAX);
            proptest::prop_assert!(batches[..batches.len().saturating_sub(1)].iter().all(|b| b.len() == batch));
            proptest::prop_assert_eq!(batches.concat(), collected.clone());
            let first = walked_in_order(dir.path(), batch, 1);
            proptest::prop_assert_eq!(first.concat(), &collected[..batch.min(collected.len())]);
        }
    }

    proptest::proptest! {
        /// A walked file's extension is read from its path's bytes as
        /// `Path::extension` reads it.
        #[test]
        fn walked_names_have_extensions_as_paths_do(
            root in "(\\./|/|)[a-z.]{0,2}(/[a-z.]{1,2}){0,2}",
            name in "[a-z.]{0,3}(\\.?(yaml|YML|json|jso|yml\\.)?)",
        ) {
            // Names as a directory lists them: never empty, `.` or `..`.
            proptest::prop_assume!(!matches!(name.as_str(), "" | "." | ".."));
            let path = Path::new(&root).join(&name);
            let by_path = path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| EXTENSIONS.iter().any(|x| e.eq_ignore_ascii_case(x)));
            proptest::prop_assert_eq!(has_manifest_name(walked_name(&path)), by_path);
            proptest::prop_assert_eq!(has_manifest_extension(&path), by_path);
        }
    }
}
