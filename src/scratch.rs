//! A temporary file written through a buffer of its own: when a write fails
//! (a full disk, a file size limit), what the file took is known, and every
//! byte written can still be read back, from the file or the buffer. The
//! findings spilled ([`crate::spill`]), the HPAs kept whole
//! ([`crate::kept`]) and standard input read from a pipe
//! ([`crate::input`]) go to one each, and are held in memory when it fails.

use std::fs::File;
use std::io::{self, Write};
use std::sync::Once;

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

/// What is held in memory when writing its temporary file failed.
#[derive(Clone, Copy)]
pub enum Held {
    Findings = 0,
    Hpas,
    Input,
}

/// Tells once per run, for each kind of data, that it is held in memory
/// because writing it to a temporary file failed (a full disk, a file size
/// limit): the run works, with more memory than usual.
pub fn note_held_in_memory(held: Held, error: &io::Error) {
    static NOTED: [Once; 3] = [Once::new(), Once::new(), Once::new()];
    let (what, them) = match held {
        Held::Findings => ("findings are", "them"),
        Held::Hpas => ("the HPAs read are", "them"),
        Held::Input => ("standard input is", "it"),
    };
    NOTED[held as usize].call_once(|| {
        eprintln!(
            "hpa-lint: note: {what} held in memory: writing {them} to a temporary file failed: {error}"
        );
    });
}

#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// Writes to a file, and fails once it took `left` more bytes.
    struct Failing {
        file: File,
        left: usize,
    }

    impl Write for Failing {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            if self.left == 0 {
                return Err(io::Error::other("the disk is full"));
            }
            let taken = self.file.write(&bytes[..bytes.len().min(self.left)])?;
            self.left -= taken;
            Ok(taken)
        }

        fn flush(&mut self) -> io::Result<()> {
            self.file.flush()
        }
    }

    /// A temporary file written `capacity` bytes at a time, whose writes
    /// fail once it took `fails_after` bytes, if given.
    pub fn scratch(capacity: usize, fails_after: Option<usize>) -> io::Result<Scratch> {
        let file = tempfile::tempfile()?;
        let writer: Box<dyn Write + Send> = match fails_after {
            Some(left) => Box::new(Failing {
                file: file.try_clone()?,
                left,
            }),
            None => Box::new(file.try_clone()?),
        };
        Ok(Scratch::new(file, writer, capacity))
    }
}
