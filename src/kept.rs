//! The HPAs step 1 keeps whole for step 2 (packed values, see
//! [`hpa_lint_rules::workspace::Found::whole`]), so that step 2 does not read
//! their documents again: in memory up to a bound, beyond it in an unnamed
//! temporary file, which step 2 reads at the records' offsets. Without a
//! temporary file, or once writing to it fails (a full disk, a file size
//! limit), they are all held in memory, as standard input is.

use std::borrow::Cow;
use std::fs::File;
use std::io;
use std::ops::Range;
use std::sync::{Mutex, PoisonError};

use crate::input::read_exact_at;
use crate::scratch::{Held, Scratch, Written};

/// Where a record is in the store.
#[derive(Clone, Copy, Debug)]
pub struct Record {
    at: u64,
    len: u32,
}

impl Record {
    /// Its size in bytes.
    pub fn size(&self) -> usize {
        self.len as usize
    }

    fn end(&self) -> u64 {
        self.at + u64::from(self.len)
    }
}

/// Makes the file to spill to (in tests, one that fails).
type MakeScratch = Box<dyn Fn() -> io::Result<Scratch> + Send + Sync>;

/// Records being added, from several threads.
pub struct Store {
    writing: Mutex<Writing>,
    make: MakeScratch,
}

struct Writing {
    /// At most this many bytes are held in memory.
    bound: usize,
    /// The first records.
    memory: Vec<u8>,
    /// Once the memory is full, the records that follow.
    file: Option<Scratch>,
    /// Why records were lost, if they were: the file could not be read
    /// back after a write to it failed.
    lost: Option<io::Error>,
}

impl Writing {
    fn len(&self) -> u64 {
        self.memory.len() as u64 + self.file.as_ref().map_or(0, Scratch::written)
    }

    fn add(&mut self, record: &[u8], make: &MakeScratch) -> Record {
        let at = self.len();
        if self.file.is_none() && self.memory.len() + record.len() > self.bound {
            match make() {
                Ok(file) => self.file = Some(file),
                Err(_) => self.bound = usize::MAX,
            }
        }
        match &mut self.file {
            Some(file) => {
                if let Err(lost) = file.write(record) {
                    self.lost = Some(lost);
                }
            }
            None => self.memory.extend_from_slice(record),
        }
        Record {
            at,
            len: u32::try_from(record.len()).expect("a record of less than 4 GiB"),
        }
    }
}

impl Store {
    /// Holds at most `bound` bytes of records in memory.
    pub fn new(bound: usize) -> Self {
        Self::spilling_to(bound, Box::new(|| Scratch::temporary(Held::Hpas)))
    }

    /// [`Store::new`], spilling to the file `make` makes.
    fn spilling_to(bound: usize, make: MakeScratch) -> Self {
        Self {
            make,
            writing: Mutex::new(Writing {
                bound,
                memory: Vec::new(),
                file: None,
                lost: None,
            }),
        }
    }

    /// Adds records; gives where each is.
    pub fn add(&self, records: &[impl AsRef<[u8]>]) -> Vec<Record> {
        let mut writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        records
            .iter()
            .map(|record| writing.add(record.as_ref(), &self.make))
            .collect()
    }

    /// The records, to be read; an error if some were lost.
    pub fn finish(self) -> io::Result<Kept> {
        let mut writing = self
            .writing
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(error) = writing.lost {
            return Err(error);
        }
        let file = match writing.file.map(Scratch::finish).transpose()? {
            Some(Written::File(file)) => Some(file),
            // Writing failed: the records in memory follow those before them.
            Some(Written::Memory(mut bytes)) => {
                writing.memory.append(&mut bytes);
                None
            }
            None => None,
        };
        writing.memory.shrink_to_fit();
        Ok(Kept {
            memory: writing.memory,
            file,
        })
    }
}

/// The records added to a [`Store`], read from several threads.
pub struct Kept {
    memory: Vec<u8>,
    file: Option<File>,
}

/// Records in the file at most this far apart are read at once: a read of
/// the bytes between costs less than a system call of its own (the records
/// of a block of documents, written as their files were read in parallel,
/// lie close together but not in order). A read so holds at most this many
/// bytes more than the records asked for, for each record.
const GAP: u64 = 16 << 10;

impl Kept {
    /// The records' bytes, in the order asked for; those near each other in
    /// the file are read at once ([`GAP`]).
    pub fn read(&self, records: &[Record]) -> io::Result<Read<'_>> {
        let memory = self.memory.len() as u64;
        let mut read = Read {
            runs: vec![Cow::Borrowed(&self.memory[..])],
            records: records
                .iter()
                .map(|record| Ok((0, to_usize(record.at)?..to_usize(record.end())?)))
                .collect::<io::Result<_>>()?,
        };
        let mut in_file: Vec<usize> = (0..records.len())
            .filter(|&i| records[i].at >= memory)
            .collect();
        in_file.sort_unstable_by_key(|&i| records[i].at);
        for span in in_file.chunk_by(|&a, &b| records[b].at <= records[a].end() + GAP) {
            let file = self.file.as_ref().ok_or(io::ErrorKind::UnexpectedEof)?;
            let first = records[span[0]].at;
            let end = span
                .iter()
                .map(|&i| records[i].end())
                .max()
                .unwrap_or(first);
            let mut bytes = vec![0; to_usize(end - first)?];
            read_exact_at(file, &mut bytes, to_usize(first - memory)?)?;
            read.runs.push(Cow::Owned(bytes));
            for &i in span {
                let at = to_usize(records[i].at - first)?;
                read.records[i] = (read.runs.len() - 1, at..at + records[i].size());
            }
        }
        Ok(read)
    }
}

fn to_usize(n: u64) -> io::Result<usize> {
    usize::try_from(n).map_err(io::Error::other)
}

/// Records read from [`Kept`].
pub struct Read<'k> {
    /// The memory, and the runs read from the file.
    runs: Vec<Cow<'k, [u8]>>,
    /// Each record's run and place in it.
    records: Vec<(usize, Range<usize>)>,
}

impl Read<'_> {
    /// Each record's bytes, in the order asked for.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        self.records
            .iter()
            .map(|(run, range)| &self.runs[*run][range.clone()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::testing::scratch;

    /// Records added a few at a time come back as they were, whether they
    /// are held in memory, in the file, or both, and when writing to the
    /// file fails at first or half-way (they are all held in memory then).
    #[test]
    fn records_come_back_as_they_were_added() {
        let records: Vec<Vec<u8>> = (0..300u32)
            .map(|i| (0..i % 37 + 1).map(|j| (i * 7 + j) as u8).collect())
            .collect();
        for bound in [0, 500, usize::MAX] {
            for fails_after in [Some(0), Some(1_000), None] {
                let make: MakeScratch = Box::new(move || scratch(Held::Hpas, 300, fails_after));
                let store = Store::spilling_to(bound, make);
                let mut added = Vec::new();
                for group in records.chunks(3) {
                    added.extend(store.add(group));
                }
                let kept = store.finish().unwrap();
                let case = format!("bound {bound}, failing after {fails_after:?}");
                let spilled = bound < usize::MAX && fails_after.is_none();
                assert_eq!(kept.file.is_some(), spilled, "{case}");
                let read = |added: &[Record]| -> Vec<Vec<u8>> {
                    kept.read(added)
                        .unwrap()
                        .iter()
                        .map(<[u8]>::to_vec)
                        .collect()
                };
                assert_eq!(read(&added), records, "{case}");
                // In any order: read back in the order asked for.
                let backwards: Vec<Record> = added.iter().rev().copied().collect();
                let mut expected = records.clone();
                expected.reverse();
                assert_eq!(read(&backwards), expected, "{case}");
                // Any of them, alone or a few together.
                for (i, window) in added.windows(5).enumerate().step_by(7) {
                    assert_eq!(read(&window[2..3]), records[i + 2..i + 3], "{case}");
                    assert_eq!(read(window), records[i..i + 5], "{case}");
                }
            }
        }
    }

    /// Records far apart in the file are read each on its own, records near
    /// each other at once, over the bytes between; each comes back whole,
    /// in the order asked for.
    #[test]
    fn records_near_each_other_are_read_at_once() {
        // Small records, every other one followed by one larger than the gap.
        let records: Vec<Vec<u8>> = (0..40u8)
            .map(|i| {
                let len = if i % 4 == 1 { 2 * GAP as usize } else { 3 };
                vec![i; len]
            })
            .collect();
        let make: MakeScratch = Box::new(|| scratch(Held::Hpas, 300, None));
        let store = Store::spilling_to(0, make);
        let added = store.add(&records);
        let kept = store.finish().unwrap();
        let reads = |asked: &[usize]| {
            let records_asked: Vec<Record> = asked.iter().map(|&i| added[i]).collect();
            let read = kept.read(&records_asked).unwrap();
            let expected: Vec<&[u8]> = asked.iter().map(|&i| &records[i][..]).collect();
            assert_eq!(read.iter().collect::<Vec<_>>(), expected, "{asked:?}");
            // The memory's run, and one per read of the file.
            read.runs.len() - 1
        };
        assert_eq!(reads(&[0, 2]), 2, "a large record between");
        assert_eq!(reads(&[4, 2]), 1, "a small record between");
        assert_eq!(reads(&[6, 0, 2, 4]), 3, "0; 2 and 4; 6");
        assert_eq!(reads(&[0, 1, 2]), 1, "side by side");
    }
}
