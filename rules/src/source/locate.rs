//! Positions of fields in a document's text, found by walking its events
//! again: no tree is kept, so locating costs no more memory than reading.

use std::borrow::Cow;
use std::ops::Range;

use granit_parser::{Event, Parser, ScalarStyle};

use super::compose::parser_options;
use super::goyaml;
use super::lines::LineFeeds;
use super::quick;
use super::scalar;
use super::{Pos, pos_of};
use crate::path::{FieldPath, Segment};

/// The next step of a path: a key or an index.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Next<'a> {
    Key(&'a str),
    Index(usize),
}

/// Wanted paths (by their place in the list given) that lead into a node,
/// with their next steps, sorted: each child finds its own by a binary
/// search however many paths there are.
type Onward<'p> = Vec<(Next<'p>, usize)>;

/// The paths of `through` that lead on from `depth`; `None` when none
/// does: most nodes, which then cost a small frame.
fn onward<'p>(
    paths: &'p [FieldPath],
    through: &[(Next<'p>, usize)],
    depth: usize,
) -> Option<Onward<'p>> {
    let mut onward: Onward<'p> = through
        .iter()
        .filter_map(|&(_, i)| {
            let next = match paths[i].segments().get(depth)? {
                Segment::Field(name) | Segment::Key(name) => Next::Key(name),
                Segment::Index(index) => Next::Index(*index),
            };
            Some((next, i))
        })
        .collect();
    onward.sort_unstable();
    (!onward.is_empty()).then_some(onward)
}

/// The paths of `onward` whose next step is `next`.
fn through<'o, 'p>(onward: &'o Onward<'p>, next: Next<'_>) -> &'o [(Next<'p>, usize)] {
    let start = onward.partition_point(|(step, _)| *step < next);
    let len = onward[start..].partition_point(|(step, _)| *step == next);
    &onward[start..start + len]
}

struct Frame<'t, 'p> {
    is_map: bool,
    onward: Option<Onward<'p>>,
    /// The key waiting for its value (mappings).
    key: Option<(Cow<'t, str>, Pos)>,
    index: usize,
}

/// For each path, where it is in `text` (a document): the key of the deepest
/// existing node on the path (the field itself when it exists, else its
/// nearest existing parent), spanning the value too when it is a scalar on
/// the same line; the document's start for the root. A key given twice is
/// found at its last occurrence, the one that counts.
///
/// The quick reader finds them where it reads the document, the full reader
/// (go-yaml v2's scanner and granit-parser) elsewhere; both give the same
/// positions (a test compares them).
pub fn locate(text: &str, paths: &[FieldPath]) -> Vec<Pos> {
    if paths.is_empty() {
        return Vec::new();
    }
    quick_locate(text, paths).unwrap_or_else(|| full_locate(text, paths))
}

pub(super) fn full_locate(text: &str, paths: &[FieldPath]) -> Vec<Pos> {
    let mut locator = Locator::new(paths, None);
    // Read as kubectl reads it (comments right after a token, long tags).
    let (readable, _) = goyaml::as_kubectl_reads(text);
    for next in Parser::new_from_str_with_options(&readable, parser_options(&readable)) {
        let Ok((event, span)) = next else { break };
        let at = pos_of(&span);
        match event {
            Event::Scalar(value, style, _, tag) => locator.scalar(Some(at), || {
                scalar::resolve(value.clone(), style, tag.as_deref())
                    .ok()
                    .and_then(|s| scalar::key_text(s).ok())
                    .unwrap_or(value)
            }),
            Event::Alias(_) => locator.scalar(Some(at), || Cow::Borrowed("*")),
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                let is_map = matches!(event, Event::MappingStart(..));
                // A mapping or list as a key: kubectl cannot read the document.
                if !locator.open(at, is_map) {
                    break;
                }
            }
            Event::MappingEnd | Event::SequenceEnd => locator.close(),
            Event::DocumentEnd => break,
            _ => {}
        }
    }
    locator.finish()
}

/// The positions as the quick reader finds them; `None` where it leaves the
/// document to the full reader, or where its events are not placed as
/// granit-parser places them and the place would count.
fn quick_locate(text: &str, paths: &[FieldPath]) -> Option<Vec<Pos>> {
    // Windows line ends: read with line feeds alone, and placed back.
    if memchr::memchr(b'\r', text.as_bytes()).is_some() {
        let lf = LineFeeds::of(text)?;
        let positions = quick_locate(&lf.text, paths)?;
        return Some(positions.into_iter().map(|pos| lf.place(pos)).collect());
    }
    let mut sink = QuickLocator::new(text, paths);
    quick::read(text, &mut sink).ok()?;
    Some(sink.locator.finish())
}

/// [`quick_locate`] of a text with line feeds alone, with the document read
/// once for `other` too, another reader's sink. Each is given back when the
/// quick reader read the whole document into it, `None` where it leaves the
/// document (or the sink left it) to the full reader.
pub(super) fn quick_locate_along<'t, S: quick::Sink<'t>>(
    text: &'t str,
    paths: &[FieldPath],
    other: S,
) -> (Option<Vec<Pos>>, Option<S>) {
    let mut both = Both {
        first: Some(QuickLocator::new(text, paths)),
        second: Some(other),
    };
    match quick::read(text, &mut both) {
        Ok(()) => (both.first.map(|l| l.locator.finish()), both.second),
        Err(quick::Unsupported) => (None, None),
    }
}

/// Two sinks fed by one read: one that leaves the document to the full
/// reader is dropped, and the read goes on for the other while it is there.
struct Both<A, B> {
    first: Option<A>,
    second: Option<B>,
}

/// Hands an event to `sink`, dropping it when it leaves the document.
fn feed<S>(sink: &mut Option<S>, event: impl FnOnce(&mut S) -> Result<(), quick::Unsupported>) {
    if let Some(reading) = sink
        && event(reading).is_err()
    {
        *sink = None;
    }
}

impl<A, B> Both<A, B> {
    fn going_on(&self) -> Result<(), quick::Unsupported> {
        if self.first.is_none() && self.second.is_none() {
            Err(quick::Unsupported)
        } else {
            Ok(())
        }
    }
}

impl<'t, A: quick::Sink<'t>, B: quick::Sink<'t>> quick::Sink<'t> for Both<A, B> {
    fn on_scalar(
        &mut self,
        value: Cow<'t, str>,
        style: ScalarStyle,
        at: Range<usize>,
    ) -> Result<(), quick::Unsupported> {
        feed(&mut self.first, |s| {
            s.on_scalar(value.clone(), style, at.clone())
        });
        feed(&mut self.second, |s| s.on_scalar(value, style, at));
        self.going_on()
    }

    fn on_open(&mut self, is_map: bool, at: usize) -> Result<(), quick::Unsupported> {
        feed(&mut self.first, |s| s.on_open(is_map, at));
        feed(&mut self.second, |s| s.on_open(is_map, at));
        self.going_on()
    }

    fn on_close(&mut self, at: usize) -> Result<(), quick::Unsupported> {
        feed(&mut self.first, |s| s.on_close(at));
        feed(&mut self.second, |s| s.on_close(at));
        self.going_on()
    }
}

struct QuickLocator<'t, 'p> {
    text: &'t str,
    locator: Locator<'t, 'p>,
}

impl<'t, 'p> QuickLocator<'t, 'p> {
    fn new(text: &'t str, paths: &'p [FieldPath]) -> Self {
        Self {
            text,
            locator: Locator::new(paths, Some(text)),
        }
    }

    /// The position of `len` bytes at `offset`: its line and column are
    /// worked out at the end, for the positions found ([`Locator::finish`]).
    fn pos(offset: usize, len: usize) -> Pos {
        Pos {
            line: 0,
            column: 0,
            offset,
            len,
        }
    }
}

impl<'t> quick::Sink<'t> for QuickLocator<'t, '_> {
    fn on_scalar(
        &mut self,
        value: Cow<'t, str>,
        style: ScalarStyle,
        at: Range<usize>,
    ) -> Result<(), quick::Unsupported> {
        // granit-parser places a block scalar at its content and an empty
        // value elsewhere: right only where the place does not count, as a
        // mapping's value.
        let unplaced = at.is_empty() || matches!(style, ScalarStyle::Literal | ScalarStyle::Folded);
        if unplaced && !self.locator.expects_value() {
            return Err(quick::Unsupported);
        }
        if !self.locator.wants_here() {
            self.locator.scalar(None, || Cow::Borrowed(""));
            return Ok(());
        }
        let at = (!unplaced).then(|| Self::pos(at.start, at.len()));
        self.locator.scalar(at, || {
            scalar::resolve(value.clone(), style, None)
                .ok()
                .and_then(|s| scalar::key_text(s).ok())
                .unwrap_or(value)
        });
        Ok(())
    }

    fn on_open(&mut self, is_map: bool, at: usize) -> Result<(), quick::Unsupported> {
        let flow = matches!(self.text.as_bytes()[at], b'[' | b'{');
        // granit-parser places a block sequence at its first `-` or at its
        // first item: right only where the place does not count.
        if !is_map && !flow && !self.locator.expects_value() {
            return Err(quick::Unsupported);
        }
        let at = if self.locator.wants_here() {
            Self::pos(at, usize::from(flow))
        } else {
            Pos::default()
        };
        if !self.locator.open(at, is_map) {
            return Err(quick::Unsupported);
        }
        Ok(())
    }

    fn on_close(&mut self, _: usize) -> Result<(), quick::Unsupported> {
        self.locator.close();
        Ok(())
    }
}

/// Whether `to` is on the line of `from`, which it follows; `offsets_in`:
/// the text, when positions are offsets only ([`Locator::offsets_in`]).
fn same_line(offsets_in: Option<&str>, from: &Pos, to: &Pos) -> bool {
    match offsets_in {
        Some(text) => memchr::memchr(b'\n', &text.as_bytes()[from.offset..to.offset]).is_none(),
        None => from.line == to.line,
    }
}

/// Finds the paths' positions from a document's events.
struct Locator<'t, 'p> {
    paths: &'p [FieldPath],
    /// Per path, the depth and position of the deepest node found on it.
    found: Vec<Option<(usize, Pos)>>,
    /// Every path, as leading into the document.
    everything: Vec<(Next<'p>, usize)>,
    frames: Vec<Frame<'t, 'p>>,
    /// The text, when the positions given are offsets only (the quick
    /// reader's): the lines and columns of those found are worked out at
    /// the end, in one pass.
    offsets_in: Option<&'t str>,
}

impl<'t, 'p> Locator<'t, 'p> {
    fn new(paths: &'p [FieldPath], offsets_in: Option<&'t str>) -> Self {
        Self {
            paths,
            found: vec![None; paths.len()],
            everything: (0..paths.len()).map(|i| (Next::Index(0), i)).collect(),
            frames: Vec::new(),
            offsets_in,
        }
    }

    fn expects_key(&self) -> bool {
        self.frames
            .last()
            .is_some_and(|frame| frame.is_map && frame.key.is_none())
    }

    /// Whether a wanted path leads into the open node: where none does, no
    /// position or key counts.
    fn wants_here(&self) -> bool {
        self.frames
            .last()
            .is_none_or(|frame| frame.onward.is_some())
    }

    /// Whether the next node is a mapping's value.
    fn expects_value(&self) -> bool {
        self.frames
            .last()
            .is_some_and(|frame| frame.is_map && frame.key.is_some())
    }

    /// A scalar or an alias at `at` (`None`: a mapping's value placed where
    /// it does not count), and its text as a key (called only when it is one).
    fn scalar(&mut self, at: Option<Pos>, key: impl FnOnce() -> Cow<'t, str>) {
        if self.expects_key() {
            let frame = self.frames.last_mut().expect("a key is in a mapping");
            frame.key = Some((key(), at.unwrap_or_default()));
        } else {
            self.node(at, None);
        }
    }

    /// The start of a collection; `false` for one that is a key.
    fn open(&mut self, at: Pos, is_map: bool) -> bool {
        if self.expects_key() {
            return false;
        }
        self.node(Some(at), Some(is_map));
        true
    }

    fn close(&mut self) {
        self.frames.pop();
    }

    /// A node that is no key; `collection`: it starts one, a mapping or not.
    fn node(&mut self, at: Option<Pos>, collection: Option<bool>) {
        let depth = self.frames.len();
        let key;
        let (through, anchor_pos) = match self.frames.last_mut() {
            None => (&self.everything[..], at.unwrap_or_default()),
            Some(frame) if frame.is_map => {
                let key_pos;
                (key, key_pos) = frame.key.take().expect("a value follows its key");
                let next = Next::Key(key.as_ref());
                let through = frame.onward.as_ref().map_or(&[][..], |o| through(o, next));
                (through, key_pos)
            }
            Some(frame) => {
                frame.index += 1;
                let next = Next::Index(frame.index - 1);
                let through = frame.onward.as_ref().map_or(&[][..], |o| through(o, next));
                (through, at.unwrap_or_default())
            }
        };
        if through.is_empty() {
            if let Some(is_map) = collection {
                self.frames.push(Frame {
                    is_map,
                    onward: None,
                    key: None,
                    index: 0,
                });
            }
            return;
        }
        let mut here = anchor_pos;
        if let Some(at) = at
            && collection.is_none()
            && at.offset >= anchor_pos.offset
            && same_line(self.offsets_in, &anchor_pos, &at)
        {
            here.len = at.offset + at.len - anchor_pos.offset;
        }
        for &(_, i) in through {
            if self.found[i].is_none_or(|(d, _)| depth >= d) {
                self.found[i] = Some((depth, here));
            }
        }
        if let Some(is_map) = collection {
            let onward = onward(self.paths, through, depth);
            self.frames.push(Frame {
                is_map,
                onward,
                key: None,
                index: 0,
            });
        }
    }

    fn finish(self) -> Vec<Pos> {
        let mut found = self.found;
        if let Some(text) = self.offsets_in {
            let mut positions: Vec<&mut Pos> =
                found.iter_mut().flatten().map(|(_, pos)| pos).collect();
            positions.sort_unstable_by_key(|pos| pos.offset);
            // Lines end at line feeds only in what the quick reader reads.
            let (mut line, mut line_start, mut counted) = (1, 0, 0);
            for pos in positions {
                let bytes = &text.as_bytes()[counted..pos.offset];
                for i in memchr::memchr_iter(b'\n', bytes) {
                    line += 1;
                    line_start = counted + i + 1;
                }
                counted = pos.offset;
                pos.line = line;
                pos.column = text[line_start..pos.offset].chars().count() + 1;
            }
        }
        found
            .into_iter()
            .map(|best| {
                best.map_or(
                    Pos {
                        line: 1,
                        column: 1,
                        offset: 0,
                        len: 0,
                    },
                    |(_, pos)| pos,
                )
            })
            .collect()
    }
}

/// Every path of `value`, and a missing field under each.
#[cfg(test)]
fn paths_of(value: &serde_json::Value, here: FieldPath, out: &mut Vec<FieldPath>) {
    out.push(here.field("missing"));
    match value {
        serde_json::Value::Object(map) => {
            for (key, value) in map {
                paths_of(value, here.key(key), out);
            }
        }
        serde_json::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                paths_of(item, here.index(i), out);
            }
            out.push(here.index(items.len()));
        }
        _ => {}
    }
    out.push(here);
}

/// Every path of `value`, and a missing field under each.
#[cfg(test)]
pub(super) fn every_path(value: &serde_json::Value) -> Vec<FieldPath> {
    let mut paths = Vec::new();
    paths_of(value, FieldPath::root(), &mut paths);
    paths
}

/// Whether the quick reader places `paths` in `text`.
#[cfg(test)]
pub(super) fn placed_quickly(text: &str, paths: &[FieldPath]) -> bool {
    quick_locate(text, paths).is_some()
}

/// Whether the quick reader places every path of `value` (what `text` reads
/// as), or a missing field under it, as the full reader does (it panics
/// otherwise); `false` where it leaves the document to the full reader.
#[cfg(test)]
pub(super) fn quick_places_as_full(text: &str, value: &serde_json::Value) -> bool {
    let mut paths = Vec::new();
    paths_of(value, FieldPath::root(), &mut paths);
    let Some(placed) = quick_locate(text, &paths) else {
        return false;
    };
    assert_eq!(placed, full_locate(text, &paths), "{text:?}");
    // Fewer paths: the quick reader skips the nodes none leads into.
    for step in [2, 3, 7] {
        let some: Vec<FieldPath> = paths.iter().step_by(step).cloned().collect();
        let placed = quick_locate(text, &some).expect("read quickly with all paths");
        assert_eq!(placed, full_locate(text, &some), "{text:?} {some:?}");
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, path: &FieldPath) -> (usize, usize, String) {
        let pos = locate(text, std::slice::from_ref(path))[0];
        (
            pos.line,
            pos.column,
            text[pos.offset..pos.offset + pos.len].to_owned(),
        )
    }

    #[test]
    fn finds_fields_items_and_nearest_parents() {
        let text = "a: 1\nb:\n  c: [x, y]\n  c: 2\nd:\n- {e: f}\n- g: h\n";
        assert_eq!(at(text, &FieldPath::fields("a")), (1, 1, "a: 1".to_owned()));
        assert_eq!(
            at(text, &FieldPath::fields("b.c")),
            (4, 3, "c: 2".to_owned())
        );
        assert_eq!(
            at(text, &FieldPath::fields("b.c.zz")),
            (4, 3, "c: 2".to_owned())
        );
        assert_eq!(at(text, &FieldPath::fields("b.q")), (2, 1, "b".to_owned()));
        assert_eq!(
            at(text, &FieldPath::fields("d").index(1).field("g")),
            (7, 3, "g: h".to_owned())
        );
        assert_eq!(
            at(text, &FieldPath::fields("d").index(0)),
            (6, 3, "{".to_owned())
        );
        assert_eq!(at(text, &FieldPath::root()).0, 1);
        assert_eq!(at(text, &FieldPath::fields("zzz")).0, 1);
    }

    #[test]
    fn keys_are_read_as_kubectl_reads_them() {
        let text = "m:\n  010: x\n  \"k\": y\n";
        assert_eq!(
            at(text, &FieldPath::fields("m").key("8")),
            (2, 3, "010: x".to_owned())
        );
        assert_eq!(
            at(text, &FieldPath::fields("m").key("k")),
            (3, 3, "\"k\": y".to_owned())
        );
    }

    /// The real-world corpus, the examples and mutants of their documents:
    /// wherever the quick reader places the fields, it places them as the
    /// full reader does, and it places them in most documents.
    #[test]
    fn the_quick_reader_places_fields_as_the_full_reader_does() {
        let (mut documents, mut quick) = (0, 0);
        for file in crate::testing::manifest_files() {
            let text = std::fs::read_to_string(&file).unwrap();
            for chunk in crate::source::split_documents(&text) {
                let mut texts = vec![chunk.text.to_owned()];
                for (i, insert) in ["\n", " ", "- ", ": ", "'", "\"", "|", "  ", "\n\n", ","]
                    .iter()
                    .enumerate()
                {
                    let mut at = (chunk.text.len() * (i + 1) * 7 / 75).min(chunk.text.len());
                    while !chunk.text.is_char_boundary(at) {
                        at -= 1;
                    }
                    texts.push(format!(
                        "{}{insert}{}",
                        &chunk.text[..at],
                        &chunk.text[at..]
                    ));
                }
                for (i, text) in texts.iter().enumerate() {
                    let composed = crate::source::compose(text, &|_, _| &crate::source::ALL);
                    let Some(value) = composed.value else {
                        continue;
                    };
                    let placed = quick_places_as_full(text, &value);
                    if i == 0 {
                        documents += 1;
                        quick += usize::from(placed);
                    }
                }
            }
        }
        assert!(documents > 100, "{documents}");
        assert!(
            quick * 10 >= documents * 8,
            "{quick} of {documents} placed quickly"
        );
    }

    /// The quick reader gives offsets; lines and columns (in characters)
    /// are worked out for the positions found, and a value spans its key's
    /// position only on the key's line.
    #[test]
    fn quick_positions_count_lines_and_characters() {
        let text = "é: x\nb: {ü: é, d: 2}\nc:\n  long\nd: [ä]\n";
        let paths = [
            FieldPath::fields("b").key("d"),
            FieldPath::fields("c"),
            FieldPath::fields("d").index(0),
            FieldPath::fields("é"),
        ];
        assert!(quick_locate(text, &paths).is_some());
        let expected = [(2, 11, "d: 2"), (3, 1, "c"), (5, 5, "ä"), (1, 1, "é: x")];
        for (path, (line, column, span)) in paths.iter().zip(expected) {
            assert_eq!(at(text, path), (line, column, span.to_owned()), "{path}");
        }
    }

    #[test]
    fn positions_count_every_line_break_style() {
        let text = "a: 1\rb:\r\n  c: é\r";
        assert_eq!(
            at(text, &FieldPath::fields("b.c")),
            (3, 3, "c: é".to_owned())
        );
    }
}
