//! A temporary file written through a buffer of its own: when a write fails
//! (a full disk, a file size limit), what the file took is read back and
//! everything is held in memory from then on, with a note on standard error;
//! no byte written is lost. The findings spilled ([`crate::spill`]), the
//! HPAs kept whole ([`crate::kept`]) and standard input read from a pipe
//! ([`crate::input`]) go to one each.

use std::fs::File;
use std::io::{self, Write};
use std::sync::Once;

use crate::input::read_exact_at;

pub struct Scratch {
    /// `None` once writing to it failed: every byte is in `buffer` then.
    file: Option<File>,
    /// Writes to `file` (in tests, a writer that fails).
    writer: Box<dyn Write + Send>,
    /// Bytes written to the buffer that the file has not taken yet: they
    /// follow those in the file.
    buffer: Vec<u8>,
    /// Bytes the file took.
    in_file: u64,
    /// The buffer is written out once it holds this many bytes.
    capacity: usize,
    /// What it holds, for the note when it falls back to memory.
    held: Held,
}

/// Where the bytes written to a [`Scratch`] are, once all are written.
pub enum Written {
    File(File),
    /// Writing to the file failed.
    Memory(Vec<u8>),
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
    pub fn temporary(held: Held) -> io::Result<Self> {
        let file = tempfile::tempfile()?;
        let writer = Box::new(file.try_clone()?);
        Ok(Self::new(file, writer, BUFFER, held))
    }

    /// Writes to `file` through `writer`, `capacity` bytes at a time.
    pub fn new(file: File, writer: Box<dyn Write + Send>, capacity: usize, held: Held) -> Self {
        Self {
            file: Some(file),
            writer,
            buffer: Vec::new(),
            in_file: 0,
            capacity,
            held,
        }
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.in_file + self.buffer.len() as u64
    }

    /// Writes `bytes`. When writing out fails, they are held in memory with
    /// all before them; an error only when what the file took cannot be read
    /// back.
    pub fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.file.is_none() || self.buffer.len() + bytes.len() < self.capacity {
            self.buffer.extend_from_slice(bytes);
            return Ok(());
        }
        let written = match self.write_out() {
            Err(error) => {
                self.buffer.extend_from_slice(bytes);
                Err(error)
            }
            Ok(()) => {
                // The buffer is empty: the bytes go out as they are, not copied.
                let (taken, written) = write_some(&mut self.writer, bytes);
                self.in_file += taken as u64;
                if written.is_err() {
                    self.buffer.extend_from_slice(&bytes[taken..]);
                }
                written
            }
        };
        self.hold_if_failed(written)
    }

    /// Writes out the buffer; what the file does not take stays in it.
    fn write_out(&mut self) -> io::Result<()> {
        let (taken, written) = write_some(&mut self.writer, &self.buffer);
        self.in_file += taken as u64;
        self.buffer.drain(..taken);
        written
    }

    /// After a write: if it failed, what the file took is read back before
    /// the buffer, and the file is let go.
    fn hold_if_failed(&mut self, written: io::Result<()>) -> io::Result<()> {
        let (Err(error), Some(file)) = (written, &self.file) else {
            return Ok(());
        };
        let mut bytes = vec![0; usize::try_from(self.in_file).map_err(io::Error::other)?];
        read_exact_at(file, &mut bytes, 0)?;
        bytes.append(&mut self.buffer);
        self.buffer = bytes;
        self.in_file = 0;
        self.file = None;
        note_held_in_memory(self.held, &error);
        Ok(())
    }

    /// Where everything written is, written out.
    pub fn finish(mut self) -> io::Result<Written> {
        if self.file.is_some() {
            let written = self.write_out();
            self.hold_if_failed(written)?;
        }
        Ok(match self.file {
            Some(file) => Written::File(file),
            None => Written::Memory(self.buffer),
        })
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
fn note_held_in_memory(held: Held, error: &io::Error) {
    static NOTED: [Once; 3] = [Once::new(), Once::new(), Once::new()];
    let (what, them) = match held {
        Held::Findings => ("findings are", "them"),
        Held::Hpas => ("the HPAs read are", "them"),
        Held::Input => ("standard input is", "it"),
    };
    NOTED[held as usize].call_once(|| {
        crate::tell!(
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

    /// A temporary file of `held` written `capacity` bytes at a time, whose
    /// writes fail once it took `fails_after` bytes, if given.
    pub fn scratch(held: Held, capacity: usize, fails_after: Option<usize>) -> io::Result<Scratch> {
        let file = tempfile::tempfile()?;
        let writer: Box<dyn Write + Send> = match fails_after {
            Some(left) => Box::new(Failing {
                file: file.try_clone()?,
                left,
            }),
            None => Box::new(file.try_clone()?),
        };
        Ok(Scratch::new(file, writer, capacity, held))
    }
}
