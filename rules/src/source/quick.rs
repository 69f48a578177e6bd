//! A fast reader for the YAML manifests are nearly always written in: block
//! mappings and sequences, plain and quoted scalars (folded over several
//! lines too, as `kubectl get -o yaml` writes long ones), literal and folded
//! block scalars (with their chomping and indentation indicators), and flow
//! collections (JSON). Anything else (anchors, aliases, tags, directives,
//! explicit keys, tabs, carriage returns, line breaks or characters that YAML
//! 1.1 and 1.2 read differently, a key on a plain scalar's next line, a
//! folded scalar's more-indented lines) is [`Unsupported`]: the caller reads
//! the document with the full reader (granit-parser after go-yaml v2's
//! scanner) instead. (A document with CR LF line ends is read here too,
//! with its line ends made line feeds: [`super::lines::LineFeeds`] places
//! what is found back in the original text.)
//!
//! Within what it reads, go-yaml v2 (kubectl's YAML 1.1) and granit-parser
//! (YAML 1.2) give the same events, and so does this reader: a property test
//! compares it with the full reader ([`super::compose`]). It reads each line
//! once, scalars are slices of the text unless an escape, a fold or a block
//! scalar makes them new, and it feeds a [`Sink`] as it goes. It reports no errors:
//! a document that is not valid YAML is unsupported, and the full reader
//! says what is wrong with it.

use std::borrow::Cow;
use std::ops::Range;

use granit_parser::ScalarStyle;

/// This reader does not read the document (or the sink refused an event):
/// read it with the full reader.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Unsupported;

type Step<T = ()> = Result<T, Unsupported>;

/// What the events go to, with where they are in the text: a scalar's
/// bytes (a quoted one's with its quotes; a block scalar's are its indicator
/// and no more, and an empty value's none, at the start of the line after its
/// key); a collection's start (the first key of a block mapping, the first
/// `-` of a block sequence, the bracket of a flow collection).
pub(crate) trait Sink<'t> {
    fn on_scalar(&mut self, value: Cow<'t, str>, style: ScalarStyle, at: Range<usize>) -> Step;
    /// Whether the next scalar's value is read. A sink that drops it is
    /// given an empty one where making it costs (a block scalar's lines
    /// joined into a new string).
    fn wants_value(&self) -> bool {
        true
    }
    fn on_open(&mut self, is_map: bool, at: usize) -> Step;
    fn on_close(&mut self, at: usize) -> Step;
}

/// Deeper documents are left to the full reader, which knows the limits.
const MAX_DEPTH: usize = 64;
/// Longer keys are left to the full reader (go-yaml stops at 1024 characters).
const MAX_KEY: usize = 1000;

/// Reads one document (a [`super::Chunk`]'s text) into `sink`.
pub(crate) fn read<'t>(text: &'t str, sink: &mut impl Sink<'t>) -> Step {
    if !common_characters(text.as_bytes()) {
        return Err(Unsupported);
    }
    let mut reader = Reader {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        depth: 0,
        sink,
        counted: (usize::MAX, 0),
    };
    reader.document()
}

/// How many events the quick reader reads from a document; `None` when it
/// leaves the document to the full reader. For comparing readers
/// (`bench/src/bin/yaml-readers.rs`).
pub fn count_events(text: &str) -> Option<usize> {
    struct Count(usize);
    impl Sink<'_> for Count {
        fn on_scalar(&mut self, _: Cow<'_, str>, _: ScalarStyle, _: Range<usize>) -> Step {
            self.0 += 1;
            Ok(())
        }
        fn on_open(&mut self, _: bool, _: usize) -> Step {
            self.0 += 1;
            Ok(())
        }
        fn on_close(&mut self, _: usize) -> Step {
            self.0 += 1;
            Ok(())
        }
    }
    let mut count = Count(0);
    read(text, &mut count).ok()?;
    Some(count.0)
}

/// Whether the text holds only characters both YAML versions read alike:
/// printable ASCII, line feeds, and other Unicode characters but the C1
/// controls (with NEL), the line and paragraph separators, byte order marks
/// and the noncharacters U+FFFE and U+FFFF.
fn common_characters(bytes: &[u8]) -> bool {
    /// Printable ASCII and line feeds, a block at a time (vectorised: no
    /// early exit), as manifests are nearly all made of.
    const BLOCK: usize = 16;
    let simple = |block: &[u8]| {
        block.iter().fold(true, |all, &b| {
            all & ((b.wrapping_sub(b' ') < 95) | (b == b'\n'))
        })
    };
    let mut i = 0;
    while i < bytes.len() {
        if let Some(block) = bytes.get(i..i + BLOCK)
            && simple(block)
        {
            i += BLOCK;
            continue;
        }
        let b = bytes[i];
        let next = |k: usize| bytes.get(i + k).copied().unwrap_or(0);
        let refused = match b {
            b' '..=b'~' | b'\n' => false,
            0xc2 => next(1) < 0xa0,
            0xe2 => next(1) == 0x80 && matches!(next(2), 0xa8 | 0xa9),
            0xef => (next(1) == 0xbb && next(2) == 0xbf) || (next(1) == 0xbf && next(2) >= 0xbe),
            0x80.. => false,
            _ => true,
        };
        if refused {
            return false;
        }
        i += 1;
    }
    true
}

/// A scalar read on one line.
struct Scalar<'t> {
    value: Cow<'t, str>,
    style: ScalarStyle,
    at: Range<usize>,
}

struct Reader<'t, 's, S> {
    text: &'t str,
    bytes: &'t [u8],
    pos: usize,
    depth: usize,
    sink: &'s mut S,
    /// A line whose indentation was counted already (its start and its
    /// spaces): after a plain scalar, to see whether it goes on there.
    counted: (usize, usize),
}

/// Characters that cannot start a plain scalar (or that start something this
/// reader leaves to the full one).
fn is_indicator(b: u8) -> bool {
    matches!(
        b,
        b'-' | b'?'
            | b':'
            | b','
            | b'['
            | b']'
            | b'{'
            | b'}'
            | b'#'
            | b'&'
            | b'*'
            | b'!'
            | b'|'
            | b'>'
            | b'\''
            | b'"'
            | b'%'
            | b'@'
            | b'`'
    )
}

fn is_flow_indicator(b: u8) -> bool {
    matches!(b, b',' | b'[' | b']' | b'{' | b'}')
}

impl<'t, S: Sink<'t>> Reader<'t, '_, S> {
    /// The byte at `i`; 0 past the end (the text holds no NUL).
    fn at(&self, i: usize) -> u8 {
        self.bytes.get(i).copied().unwrap_or(0)
    }

    fn is_blankz(&self, i: usize) -> bool {
        matches!(self.at(i), b' ' | b'\n' | 0)
    }

    fn line_end(&self, from: usize) -> usize {
        memchr::memchr(b'\n', &self.bytes[from..]).map_or(self.bytes.len(), |i| from + i)
    }

    fn skip_spaces(&mut self) {
        while self.at(self.pos) == b' ' {
            self.pos += 1;
        }
    }

    fn open(&mut self, is_map: bool, at: usize) -> Step {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Unsupported);
        }
        self.sink.on_open(is_map, at)
    }

    fn close(&mut self) -> Step {
        self.depth -= 1;
        self.sink.on_close(self.pos)
    }

    /// After a node: blanks and a comment may end its line; moves to the next
    /// line.
    fn end_of_line(&mut self) -> Step {
        self.skip_spaces();
        match self.at(self.pos) {
            b'#' if self.pos > 0 && self.at(self.pos - 1) == b' ' => {}
            b'\n' | 0 => {}
            _ => return Err(Unsupported),
        }
        self.pos = (self.line_end(self.pos) + 1).min(self.bytes.len());
        Ok(())
    }

    /// From the start of a line, the next line with content: its indentation,
    /// with `self.pos` left at its start; `None` at the end. A document marker
    /// is unsupported there (a stream's documents are cut at them before).
    fn next_content(&mut self) -> Step<Option<usize>> {
        loop {
            let start = self.pos;
            let mut i = start;
            if self.counted.0 == start {
                i += self.counted.1;
            }
            while self.at(i) == b' ' {
                i += 1;
            }
            match self.at(i) {
                0 => {
                    self.pos = i;
                    return Ok(None);
                }
                b'\n' => self.pos = i + 1,
                b'#' => self.pos = (self.line_end(i) + 1).min(self.bytes.len()),
                _ => {
                    let marker = &self.bytes[start..];
                    if i == start
                        && (marker.starts_with(b"---") || marker.starts_with(b"..."))
                        && self.is_blankz(start + 3)
                    {
                        return Err(Unsupported);
                    }
                    return Ok(Some(i - start));
                }
            }
        }
    }

    fn document(&mut self) -> Step {
        // Comments, and the `---` line with nothing after it but a comment.
        let mut indent = self.next_content();
        if indent == Err(Unsupported) && self.bytes[self.pos..].starts_with(b"---") {
            self.pos += 3;
            self.end_of_line()?;
            indent = self.next_content();
        }
        let Some(indent) = indent? else {
            return Err(Unsupported);
        };
        self.pos += indent;
        self.node(indent, -1)?;
        match self.next_content()? {
            None => Ok(()),
            Some(_) => Err(Unsupported),
        }
    }

    /// A node that is the first thing on its line (or after `- `), at
    /// `column`, in a block collection indented by `parent` (-1: none).
    fn node(&mut self, column: usize, parent: isize) -> Step {
        match self.at(self.pos) {
            b'-' if self.is_blankz(self.pos + 1) => self.sequence(column),
            b'[' | b'{' => self.flow_in_block(parent),
            b'|' | b'>' => self.block_scalar(parent),
            _ => {
                let (scalar, is_key) = self.scalar_on_line(parent)?;
                if is_key {
                    self.mapping(column, scalar)
                } else {
                    self.sink.on_scalar(scalar.value, scalar.style, scalar.at)?;
                    self.end_of_line()
                }
            }
        }
    }

    /// A block mapping at `column` whose first key was read.
    fn mapping(&mut self, column: usize, first: Scalar<'t>) -> Step {
        self.open(true, first.at.start)?;
        let mut key = first;
        loop {
            self.sink.on_scalar(key.value, key.style, key.at)?;
            self.value(column)?;
            match self.next_content()? {
                Some(indent) if indent == column => {
                    self.pos += indent;
                    let (next, is_key) = self.scalar_on_line(column as isize)?;
                    if !is_key {
                        return Err(Unsupported);
                    }
                    key = next;
                }
                Some(indent) if indent > column => return Err(Unsupported),
                _ => break,
            }
        }
        self.close()
    }

    /// A mapping value, after its key's `:`; `column` is the mapping's.
    fn value(&mut self, column: usize) -> Step {
        self.skip_spaces();
        match self.at(self.pos) {
            b'\n' | 0 | b'#' => {
                self.end_of_line()?;
                let at = self.pos;
                match self.next_content()? {
                    Some(indent) if indent > column => {
                        self.pos += indent;
                        self.node(indent, column as isize)
                    }
                    // A sequence may sit at its key's indentation.
                    Some(indent) if indent == column && self.is_entry(self.pos + indent) => {
                        self.pos += indent;
                        self.sequence(column)
                    }
                    _ => self
                        .sink
                        .on_scalar(Cow::Borrowed(""), ScalarStyle::Plain, at..at),
                }
            }
            b'|' | b'>' => self.block_scalar(column as isize),
            b'[' | b'{' => self.flow_in_block(column as isize),
            _ => {
                let (scalar, is_key) = self.scalar_on_line(column as isize)?;
                if is_key {
                    return Err(Unsupported);
                }
                self.sink.on_scalar(scalar.value, scalar.style, scalar.at)?;
                self.end_of_line()
            }
        }
    }

    fn is_entry(&self, i: usize) -> bool {
        self.at(i) == b'-' && self.is_blankz(i + 1)
    }

    /// A block sequence at `column`, from its first `-`.
    fn sequence(&mut self, column: usize) -> Step {
        self.open(false, self.pos)?;
        loop {
            let dash = self.pos;
            self.pos += 1;
            self.skip_spaces();
            if matches!(self.at(self.pos), b'\n' | 0 | b'#') {
                self.end_of_line()?;
                let at = self.pos;
                match self.next_content()? {
                    Some(indent) if indent > column => {
                        self.pos += indent;
                        self.node(indent, column as isize)?;
                    }
                    _ => self
                        .sink
                        .on_scalar(Cow::Borrowed(""), ScalarStyle::Plain, at..at)?,
                }
            } else {
                self.node(column + (self.pos - dash), column as isize)?;
            }
            match self.next_content()? {
                Some(indent) if indent == column && self.is_entry(self.pos + indent) => {
                    self.pos += indent;
                }
                Some(indent) if indent > column => return Err(Unsupported),
                _ => break,
            }
        }
        self.close()
    }

    /// A plain or quoted scalar on one line, in the block context, and
    /// whether it is a key (a `:` and a blank follow it, and `self.pos` is
    /// past them).
    fn scalar_on_line(&mut self, parent: isize) -> Step<(Scalar<'t>, bool)> {
        let scalar = match self.at(self.pos) {
            b'\'' | b'"' => {
                let scalar = self.quoted(parent)?;
                self.skip_spaces();
                scalar
            }
            b'-' if !self.is_blankz(self.pos + 1) => self.plain_in_block(),
            b if is_indicator(b) || b == b' ' => return Err(Unsupported),
            _ => self.plain_in_block(),
        };
        if scalar.style == ScalarStyle::Plain
            && self.at(self.pos) == b'\n'
            && let Some(next) = self.plain_continuation(self.pos, parent)
        {
            return Ok((self.folded_plain(scalar.at, next, parent)?, false));
        }
        let is_key = self.at(self.pos) == b':' && self.is_blankz(self.pos + 1);
        if is_key {
            // A plain scalar ends at its line's end; a quoted one may not.
            let one_line = scalar.style == ScalarStyle::Plain
                || !self.bytes[scalar.at.start..self.pos].contains(&b'\n');
            if scalar.value.len() > MAX_KEY || !one_line {
                return Err(Unsupported);
            }
            self.pos += 1;
        }
        Ok((scalar, is_key))
    }

    /// A plain scalar in the block context, to the end of its line, a comment
    /// or a `:` and a blank; `self.pos` is left there.
    fn plain_in_block(&mut self) -> Scalar<'t> {
        let start = self.pos;
        let (stop, end) = self.plain_line(start);
        self.pos = stop;
        Scalar {
            value: Cow::Borrowed(&self.text[start..end]),
            style: ScalarStyle::Plain,
            at: start..end,
        }
    }

    /// A plain scalar whose first line is `first` and that goes on at `next`
    /// (where that line's text starts, and the empty lines before it), over
    /// the lines indented more than `parent`: folded as both YAML versions
    /// fold them (one line break becomes a space, each empty line a line
    /// feed). `self.pos` is left where it ends.
    #[cold]
    fn folded_plain(
        &mut self,
        first: Range<usize>,
        mut next: (usize, usize),
        parent: isize,
    ) -> Step<Scalar<'t>> {
        let mut value = self.text[first.clone()].to_owned();
        let mut end;
        loop {
            let (line, breaks) = next;
            // A key is left to the full reader (an error); a comment ends
            // the scalar. Indicators are text here, past a node's start.
            let (stop, line_end) = self.plain_line(line);
            if self.at(stop) == b':' {
                return Err(Unsupported);
            }
            match breaks {
                0 => value.push(' '),
                n => value.extend(std::iter::repeat_n('\n', n)),
            }
            value.push_str(&self.text[line..line_end]);
            self.pos = stop;
            end = line_end;
            if self.at(stop) != b'\n' {
                break;
            }
            match self.plain_continuation(stop, parent) {
                Some(line) => next = line,
                None => break,
            }
        }
        Ok(Scalar {
            value: Cow::Owned(value),
            style: ScalarStyle::Plain,
            at: first.start..end,
        })
    }

    /// A plain scalar's text on the line from `from`: where it stops (the
    /// line's end, a comment, or a `:` and a blank), and where its text ends
    /// (without the blanks before that).
    fn plain_line(&self, from: usize) -> (usize, usize) {
        let mut end = from;
        let mut i = from;
        loop {
            match self.at(i) {
                b'\n' | 0 => break,
                b':' if self.is_blankz(i + 1) => break,
                b'#' if self.at(i - 1) == b' ' => break,
                b' ' => {}
                _ => end = i + 1,
            }
            i += 1;
        }
        (i, end)
    }

    /// From the line break at `newline`, after a plain scalar's text: where
    /// the next line that goes on with the scalar starts, and how many empty
    /// lines come before it; `None` where the scalar ends (a line indented
    /// no more than `parent`, a comment, a document marker, the end).
    fn plain_continuation(&mut self, newline: usize, parent: isize) -> Option<(usize, usize)> {
        let (line, spaces, breaks) = self.next_filled_line(newline)?;
        if self.at(line + spaces) == b'#' {
            return None;
        }
        if !self.goes_on(line, spaces, parent) {
            self.counted = (line, spaces);
            return None;
        }
        Some((line + spaces, breaks))
    }

    /// From the line break at `newline`: the next line that is not empty
    /// (its start and its spaces), and how many empty lines come before it;
    /// `None` at the end.
    fn next_filled_line(&self, newline: usize) -> Option<(usize, usize, usize)> {
        let mut breaks = 0;
        let mut line = newline + 1;
        loop {
            let spaces = self.spaces_at(line);
            match self.at(line + spaces) {
                0 => return None,
                b'\n' => {
                    breaks += 1;
                    line += spaces + 1;
                }
                _ => return Some((line, spaces, breaks)),
            }
        }
    }

    /// Whether the line at `line`, indented by `spaces`, may go on with a
    /// scalar in a block collection indented by `parent`: it is indented
    /// more, and is no document marker.
    fn goes_on(&self, line: usize, spaces: usize, parent: isize) -> bool {
        let marker = &self.bytes[line..];
        let is_marker = spaces == 0
            && (marker.starts_with(b"---") || marker.starts_with(b"..."))
            && self.is_blankz(line + 3);
        (spaces as isize) > parent && !is_marker
    }

    /// A single- or double-quoted scalar, in a block collection indented by
    /// `parent`. Its line breaks fold as both YAML versions fold them: one
    /// becomes a space, each empty line a line feed, and the blanks around
    /// them go.
    fn quoted(&mut self, parent: isize) -> Step<Scalar<'t>> {
        let at = self.pos;
        let quote = self.at(at);
        let start = at + 1;
        let mut owned: Option<String> = None;
        let mut copied = start;
        let mut i = start;
        loop {
            match self.at(i) {
                0 => return Err(Unsupported),
                b'\n' => {
                    let out = owned.get_or_insert_with(String::new);
                    out.push_str(self.text[copied..i].trim_end_matches(' '));
                    let (next, breaks) = self.continuation(i, parent)?;
                    match breaks {
                        0 => out.push(' '),
                        n => out.extend(std::iter::repeat_n('\n', n)),
                    }
                    i = next;
                    copied = i;
                }
                b'\'' if quote == b'\'' && self.at(i + 1) == b'\'' => {
                    let out = owned.get_or_insert_with(String::new);
                    out.push_str(&self.text[copied..=i]);
                    i += 2;
                    copied = i;
                }
                b if b == quote => break,
                b'\\' if quote == b'"' && self.at(i + 1) == b'\n' => {
                    // An escaped line break joins the lines; an empty line
                    // after it is read differently.
                    let out = owned.get_or_insert_with(String::new);
                    out.push_str(&self.text[copied..i]);
                    let (next, breaks) = self.continuation(i + 1, parent)?;
                    if breaks > 0 {
                        return Err(Unsupported);
                    }
                    i = next;
                    copied = i;
                }
                b'\\' if quote == b'"' => {
                    let out = owned.get_or_insert_with(String::new);
                    out.push_str(&self.text[copied..i]);
                    i = self.escape(i, out)?;
                    copied = i;
                }
                _ => i += 1,
            }
        }
        self.pos = i + 1;
        let value = match owned {
            Some(mut out) => {
                out.push_str(&self.text[copied..i]);
                Cow::Owned(out)
            }
            None => Cow::Borrowed(&self.text[start..i]),
        };
        let style = if quote == b'"' {
            ScalarStyle::DoubleQuoted
        } else {
            ScalarStyle::SingleQuoted
        };
        Ok(Scalar {
            value,
            style,
            at: at..self.pos,
        })
    }

    /// From a line break inside a quoted scalar: where its next line's text
    /// starts, and how many empty lines came before it. That line must be
    /// indented more than `parent` and be no document marker.
    fn continuation(&self, newline: usize, parent: isize) -> Step<(usize, usize)> {
        let (line, spaces, breaks) = self.next_filled_line(newline).ok_or(Unsupported)?;
        if !self.goes_on(line, spaces, parent) {
            return Err(Unsupported);
        }
        Ok((line + spaces, breaks))
    }

    /// The escape at `i` (a backslash) decoded into `out`; where it ends.
    /// Only the escapes both YAML versions know.
    fn escape(&self, i: usize, out: &mut String) -> Step<usize> {
        let (c, digits) = match self.at(i + 1) {
            b'0' => ('\0', 0),
            b'a' => ('\x07', 0),
            b'b' => ('\x08', 0),
            b't' => ('\t', 0),
            b'n' => ('\n', 0),
            b'v' => ('\x0b', 0),
            b'f' => ('\x0c', 0),
            b'r' => ('\r', 0),
            b'e' => ('\x1b', 0),
            b' ' => (' ', 0),
            b'"' => ('"', 0),
            b'\\' => ('\\', 0),
            b'N' => ('\u{85}', 0),
            b'_' => ('\u{a0}', 0),
            b'L' => ('\u{2028}', 0),
            b'P' => ('\u{2029}', 0),
            b'x' => ('\0', 2),
            b'u' => ('\0', 4),
            b'U' => ('\0', 8),
            _ => return Err(Unsupported),
        };
        if digits == 0 {
            out.push(c);
            return Ok(i + 2);
        }
        let hex = self
            .text
            .get(i + 2..i + 2 + digits)
            .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or(Unsupported)?;
        let code = u32::from_str_radix(hex, 16).map_err(|_| Unsupported)?;
        out.push(char::from_u32(code).ok_or(Unsupported)?);
        Ok(i + 2 + digits)
    }

    /// A literal or folded block scalar, from its indicator, in a block
    /// collection indented by `parent`.
    fn block_scalar(&mut self, parent: isize) -> Step {
        let at = self.pos;
        let folded = self.at(at) == b'>';
        self.pos += 1;
        // How trailing line breaks are kept (`-`: none, `+`: all, else
        // one), and an indentation indicator, in either order.
        let (mut chomping, mut increment) = (None, None);
        loop {
            match self.at(self.pos) {
                b @ (b'-' | b'+') if chomping.is_none() => chomping = Some(b),
                b @ b'1'..=b'9' if increment.is_none() => increment = Some(usize::from(b - b'0')),
                _ => break,
            }
            self.pos += 1;
        }
        let strip = chomping == Some(b'-');
        if parent < 0 {
            return Err(Unsupported);
        }
        self.end_of_line()?;
        // The indentation is the indicator's, counted from the parent's, or
        // else the first content line's; leading empty lines may not have
        // more spaces, nor (rarer, left to the full reader) the first
        // content line fewer.
        let mut line = self.pos;
        let mut longest_blank = 0;
        let first = loop {
            let spaces = self.spaces_at(line);
            match self.at(line + spaces) {
                b'\n' => {
                    longest_blank = longest_blank.max(spaces);
                    line += spaces + 1;
                }
                0 => return Err(Unsupported),
                _ => break spaces,
            }
        };
        let indent = increment.map_or(first, |n| parent as usize + n);
        if (indent as isize) <= parent || longest_blank > indent || first < indent {
            return Err(Unsupported);
        }
        // Its lines are checked whether or not the value is made.
        let mut value = self.sink.wants_value().then(String::new);
        // Line breaks after the last content line.
        let mut breaks = 0;
        let mut content = false;
        let mut line = self.pos;
        loop {
            let spaces = self.spaces_at(line);
            let end = self.line_end(line);
            if line + spaces == end {
                // An empty line; one with more spaces than the indentation
                // would be content.
                if end == self.bytes.len() {
                    break;
                }
                if spaces > indent {
                    return Err(Unsupported);
                }
                breaks += 1;
                line = end + 1;
                continue;
            }
            if spaces < indent {
                break;
            }
            let text = &self.text[line + indent..end];
            if folded && (spaces > indent || text.ends_with(' ')) {
                // More-indented lines and trailing blanks fold differently.
                return Err(Unsupported);
            }
            // Leading empty lines are line feeds; between lines, folding
            // makes one line break a space.
            if let Some(value) = &mut value {
                match (content, folded, breaks) {
                    (false, _, n) => value.extend(std::iter::repeat_n('\n', n)),
                    (true, true, 0) => value.push(' '),
                    (true, true, n) => value.extend(std::iter::repeat_n('\n', n)),
                    (true, false, n) => value.extend(std::iter::repeat_n('\n', n + 1)),
                }
                value.push_str(text);
            }
            content = true;
            breaks = 0;
            if end == self.bytes.len() {
                // Without a final line break, chomping reads differently.
                if !strip {
                    return Err(Unsupported);
                }
                line = end;
                break;
            }
            line = end + 1;
        }
        if let Some(value) = value.as_mut().filter(|_| !strip) {
            value.push('\n');
            if chomping == Some(b'+') {
                value.extend(std::iter::repeat_n('\n', breaks));
            }
        }
        // The line that ended the scalar is read again by its parent.
        self.pos = line;
        let style = if folded {
            ScalarStyle::Folded
        } else {
            ScalarStyle::Literal
        };
        let value = value.map_or(Cow::Borrowed(""), Cow::Owned);
        self.sink.on_scalar(value, style, at..at + 1)
    }

    fn spaces_at(&self, i: usize) -> usize {
        self.bytes[i..].iter().take_while(|&&b| b == b' ').count()
    }

    /// A flow collection in the block context, the last thing on its line.
    fn flow_in_block(&mut self, parent: isize) -> Step {
        self.flow(parent)?;
        self.skip_spaces();
        if self.at(self.pos) == b':' {
            // A flow collection as a key.
            return Err(Unsupported);
        }
        self.end_of_line()
    }

    /// Blanks, line breaks and comments inside a flow collection; whether a
    /// line break was crossed. Lines must be indented more than `parent`.
    fn flow_space(&mut self, parent: isize) -> Step<bool> {
        let mut crossed = false;
        loop {
            match self.at(self.pos) {
                b' ' => self.pos += 1,
                b'\n' => {
                    self.pos += 1;
                    crossed = true;
                    let spaces = self.spaces_at(self.pos);
                    let blank = matches!(self.at(self.pos + spaces), b'\n' | b'#' | 0);
                    if !blank && (spaces as isize) <= parent {
                        return Err(Unsupported);
                    }
                    self.pos += spaces;
                }
                b'#' if self.pos > 0 && matches!(self.at(self.pos - 1), b' ' | b'\n') => {
                    self.pos = self.line_end(self.pos);
                }
                _ => return Ok(crossed),
            }
        }
    }

    /// A flow collection, from its bracket, nested in a block collection
    /// indented by `parent`.
    fn flow(&mut self, parent: isize) -> Step {
        let is_map = self.at(self.pos) == b'{';
        let close = if is_map { b'}' } else { b']' };
        self.open(is_map, self.pos)?;
        self.pos += 1;
        self.flow_space(parent)?;
        if self.at(self.pos) == close {
            self.pos += 1;
            return self.close();
        }
        loop {
            if is_map {
                let key = self.flow_scalar(parent)?.ok_or(Unsupported)?;
                let quoted = key.style != ScalarStyle::Plain;
                if key.value.len() > MAX_KEY {
                    return Err(Unsupported);
                }
                self.sink.on_scalar(key.value, key.style, key.at)?;
                if self.flow_space(parent)? || self.at(self.pos) != b':' {
                    return Err(Unsupported);
                }
                // After a plain key, `:` needs a blank; JSON keys need none.
                if !quoted && !self.is_blankz(self.pos + 1) {
                    return Err(Unsupported);
                }
                self.pos += 1;
                self.flow_space(parent)?;
                if matches!(self.at(self.pos), b',' | b'}') {
                    return Err(Unsupported);
                }
            }
            if let Some(scalar) = self.flow_scalar(parent)? {
                self.sink.on_scalar(scalar.value, scalar.style, scalar.at)?;
            }
            self.flow_space(parent)?;
            match self.at(self.pos) {
                b',' => {
                    self.pos += 1;
                    self.flow_space(parent)?;
                    // A trailing comma.
                    if self.at(self.pos) == close {
                        self.pos += 1;
                        return self.close();
                    }
                }
                b if b == close => {
                    self.pos += 1;
                    return self.close();
                }
                _ => return Err(Unsupported),
            }
        }
    }

    /// A flow node: a nested collection (read into the sink, `None`) or a
    /// scalar on one line.
    fn flow_scalar(&mut self, parent: isize) -> Step<Option<Scalar<'t>>> {
        let b = self.at(self.pos);
        match b {
            b'[' | b'{' => {
                self.flow(parent)?;
                Ok(None)
            }
            b'\'' | b'"' => self.quoted(parent).map(Some),
            b'-' if !self.is_blankz(self.pos + 1) && !is_flow_indicator(self.at(self.pos + 1)) => {
                self.plain_in_flow().map(Some)
            }
            b if is_indicator(b) || b == b' ' || b == b'\n' || b == 0 => Err(Unsupported),
            _ => self.plain_in_flow().map(Some),
        }
    }

    /// A plain scalar in a flow collection: it ends at a flow indicator, a
    /// `:` and a blank, or its line's end (only a flow indicator may follow
    /// then); `#`, `?` and other `:` are left to the full reader.
    fn plain_in_flow(&mut self) -> Step<Scalar<'t>> {
        let start = self.pos;
        let mut end = start;
        let mut i = start;
        loop {
            match self.at(i) {
                b',' | b'[' | b']' | b'{' | b'}' | b'\n' | 0 => break,
                b':' if self.is_blankz(i + 1) => break,
                b':' | b'#' | b'?' => return Err(Unsupported),
                b' ' => {}
                _ => end = i + 1,
            }
            i += 1;
        }
        self.pos = i;
        if self.at(i) == b'\n' || self.at(i) == 0 {
            // What comes next must end the scalar.
            let mut next = i;
            while matches!(self.at(next), b' ' | b'\n') {
                next += 1;
            }
            if !matches!(self.at(next), b',' | b']' | b'}') {
                return Err(Unsupported);
            }
        }
        Ok(Scalar {
            value: Cow::Borrowed(&self.text[start..end]),
            style: ScalarStyle::Plain,
            at: start..end,
        })
    }
}
