//! A temporary file written through a buffer of its own: when a write fails
//! (a full disk, a file size limit), what the file took is known, and every
//! byte written can still be read back, from the file or the buffer. The
//! findings spilled ([`crate::spill`]) and the HPAs kept whole
//! ([`crate::kept`]) go to one each, and are held in memory when it fails.

use std::fs::File;
use std::io::{self, Write};

use crate::input::read_exact_at;

pub struct Scratch {
    file: File,
    /// Writes to `file` (in tests, a writer that fails).
    writer: Box<dyn Write + Send>,
    /// Bytes written to the buffer that the file has not taken yet: they
    /// follow those in the file.
    buffer: Vec<u8>,
    /// Bytes the file took.
    in_file: u64,
    /// The buffer is written out once it holds this many bytes.
    capacity: usize,
}

/// Writes `bytes`, and tells how many were taken before an error.
fn write_some(writer: &mut impl Write, bytes: &[u8]) -> (usize, io::Result<()>) {
    let mut taken = 0;
    while taken < bytes.len() {
        match writer.write(&bytes[taken..]) {
            Ok(0) => return (taken, Err(io::ErrorKind::WriteZero.into())),
            Ok(n) => taken += n,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return (taken, Err(error)),
        }
    }
    (taken, Ok(()))
}

/// Bytes a [`Scratch`] gathers before writing them out.
const BUFFER: usize = 64 << 10;

impl Scratch {
    /// An unnamed temporary file in the system's temporary directory.
    pub fn temporary() -> io::Result<Self> {
        let file = tempfile::tempfile()?;
        let writer = Box::new(file.try_clone()?);
        Ok(Self::new(file, writer, BUFFER))
    }

    /// Writes to `file` through `writer`, `capacity` bytes at a time.
    pub fn new(file: File, writer: Box<dyn Write + Send>, capacity: usize) -> Self {
        Self {
            file,
            writer,
            buffer: Vec::new(),
            in_file: 0,
            capacity,
        }
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.in_file + self.buffer.len() as u64
    }

    /// Writes `bytes`; when writing out fails they are kept all the same.
    pub fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.buffer.len() + bytes.len() < self.capacity {
            self.buffer.extend_from_slice(bytes);
            return Ok(());
        }
        if let Err(error) = self.flush() {
            self.buffer.extend_from_slice(bytes);
            return Err(error);
        }
        // The buffer is empty: the bytes go out as they are, not copied.
        let (taken, written) = write_some(&mut self.writer, bytes);
        self.in_file += taken as u64;
        if written.is_err() {
            self.buffer.extend_from_slice(&bytes[taken..]);
        }
        written
    }

    /// Writes out the buffer; what the file does not take stays in it.
    pub fn flush(&mut self) -> io::Result<()> {
        let (taken, written) = write_some(&mut self.writer, &self.buffer);
        self.in_file += taken as u64;
        self.buffer.drain(..taken);
        written
    }

    /// The bytes written from `start` to `end` (from several threads at once).
    pub fn read(&self, start: u64, end: u64) -> io::Result<Vec<u8>> {
        let mut bytes = vec![0; usize::try_from(end - start).map_err(io::Error::other)?];
        let from_file = usize::try_from(end.min(self.in_file).saturating_sub(start))
            .map_err(io::Error::other)?;
        if from_file > 0 {
            read_exact_at(&self.file, &mut bytes[..from_file], start as usize)?;
        }
        let buffered = |at: u64| (at.max(self.in_file) - self.in_file) as usize;
        bytes[from_file..].copy_from_slice(&self.buffer[buffered(start)..buffered(end)]);
        Ok(bytes)
    }

    /// The file, once all was written out to it.
    pub fn into_file(self) -> File {
        debug_assert!(self.buffer.is_empty(), "written out first");
        self.file
    }
}
