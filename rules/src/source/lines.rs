//! Lines as YAML reads them: a line ends at LF, CRLF or a lone CR. Every
//! position this crate reports counts lines this way, whatever the output format.

use std::ops::Range;

use super::Pos;

/// One line of a text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line<'a> {
    /// The line without its line break.
    pub text: &'a str,
    /// Byte offset of the line's start.
    pub start: usize,
    /// Byte offset just after the line break (the next line's start).
    pub end: usize,
}

/// The lines of `text`, line breaks excluded; a final line without a break is included.
pub fn lines(text: &str) -> impl Iterator<Item = Line<'_>> {
    let bytes = text.as_bytes();
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= bytes.len() {
            return None;
        }
        let line_start = start;
        let (content_end, end) = match memchr::memchr2(b'\n', b'\r', &bytes[start..]) {
            Some(i) => {
                let at = start + i;
                let crlf = bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n');
                (at, at + 1 + usize::from(crlf))
            }
            None => (bytes.len(), bytes.len()),
        };
        start = end;
        Some(Line {
            text: &text[line_start..content_end],
            start: line_start,
            end,
        })
    })
}

/// The number of line breaks in `text`.
pub fn count_breaks(text: &str) -> usize {
    let bytes = text.as_bytes();
    memchr::memchr2_iter(b'\n', b'\r', bytes)
        .filter(|&i| !(bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n')))
        .count()
}

/// The offsets at which a text's lines start, for finding the line of many
/// offsets without reading the text again for each.
pub struct LineStarts(Vec<usize>);

impl LineStarts {
    pub fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        let breaks = memchr::memchr2_iter(b'\n', b'\r', bytes)
            .filter(|&i| !(bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n')));
        Self(std::iter::once(0).chain(breaks.map(|i| i + 1)).collect())
    }

    /// The line (from 0) `offset` is on; an offset inside a CRLF is on the
    /// line the CRLF ends.
    pub fn line(&self, offset: usize) -> usize {
        self.0.partition_point(|&start| start <= offset) - 1
    }

    /// The start of the line `offset` is on.
    pub fn start_of(&self, offset: usize) -> usize {
        self.0[self.line(offset)]
    }
}

/// A text with each CR LF made a line feed, for the quick reader, which
/// reads line feeds alone: both YAML versions read a CR LF as one line
/// break, in scalars too. What is found in it is placed back in the
/// original text with [`LineFeeds::original`]; lines and columns are the
/// same in both.
pub(crate) struct LineFeeds {
    /// The text with line feeds alone.
    pub text: String,
    /// Where each CR was taken out: the offset in `text` of the line feed
    /// it stood before.
    taken: Vec<usize>,
}

impl LineFeeds {
    /// `text` with line feeds alone; `None` if a CR stands alone (a line
    /// break of its own, which the quick reader leaves to the full one).
    pub fn of(text: &str) -> Option<Self> {
        let bytes = text.as_bytes();
        let mut lf = String::with_capacity(text.len());
        let mut taken = Vec::new();
        let mut from = 0;
        for cr in memchr::memchr_iter(b'\r', bytes) {
            if bytes.get(cr + 1) != Some(&b'\n') {
                return None;
            }
            lf.push_str(&text[from..cr]);
            taken.push(lf.len());
            from = cr + 1;
        }
        lf.push_str(&text[from..]);
        Some(Self { text: lf, taken })
    }

    /// The offset in the original text of `offset` in [`LineFeeds::text`]:
    /// at a line feed, the CR before it (where the line's content ends).
    pub fn original(&self, offset: usize) -> usize {
        offset + self.taken.partition_point(|&at| at < offset)
    }

    /// `pos` (found in [`LineFeeds::text`]) in the original text.
    pub fn place(&self, pos: Pos) -> Pos {
        let start = self.original(pos.offset);
        Pos {
            offset: start,
            len: self.original(pos.offset + pos.len) - start,
            ..pos
        }
    }
}

/// The (line, column) of each offset in `text`, both from 1, the column in
/// characters; in one pass however many offsets share a line.
pub fn positions(text: &str, offsets: &[usize]) -> Vec<(usize, usize)> {
    if offsets.is_empty() {
        return Vec::new();
    }
    let starts = LineStarts::new(text);
    let mut order: Vec<usize> = (0..offsets.len()).collect();
    order.sort_by_key(|&i| offsets[i]);
    let mut out = vec![(0, 0); offsets.len()];
    // The last offset placed: (offset, line, column).
    let mut last: Option<(usize, usize, usize)> = None;
    for i in order {
        let offset = offsets[i];
        let line = starts.line(offset);
        let (from, column) = match last {
            Some((at, on, column)) if on == line => (at, column),
            _ => (starts.0[line], 1),
        };
        let column = column + text[from..offset].chars().count();
        last = Some((offset, line, column));
        out[i] = (line + 1, column);
    }
    out
}

/// The byte range of the line around `offset`, without its line break.
pub fn line_around(text: &str, offset: usize) -> Range<usize> {
    let offset = floor_char_boundary(text, offset.min(text.len()));
    let bytes = text.as_bytes();
    let start = memchr::memrchr2(b'\n', b'\r', &bytes[..offset]).map_or(0, |i| i + 1);
    let end = memchr::memchr2(b'\n', b'\r', &bytes[offset..]).map_or(text.len(), |i| offset + i);
    start..end
}

/// The largest character boundary at or before `offset`.
pub fn floor_char_boundary(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// The smallest character boundary at or after `offset`.
pub fn ceil_char_boundary(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset += 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_break_style_ends_a_line() {
        let text = "a\nb\r\nc\rd";
        let found: Vec<(&str, usize, usize)> =
            lines(text).map(|l| (l.text, l.start, l.end)).collect();
        assert_eq!(found, [("a", 0, 2), ("b", 2, 5), ("c", 5, 7), ("d", 7, 8)]);
        assert_eq!(count_breaks(text), 3);
        assert_eq!(count_breaks("x\r\n\r\n"), 2);
        assert_eq!(line_around(text, 5), 5..6);
        assert_eq!(line_around(text, 3), 2..3);
        assert_eq!(line_around(text, 8), 7..8);
    }

    #[test]
    fn positions_count_lines_and_characters() {
        let text = "a\nbé\r\nc\rdé€x";
        let offsets = [16, 0, 12, 2, 7, 5, 10, 3, 9, 15];
        assert_eq!(
            positions(text, &offsets),
            [
                (4, 5),
                (1, 1),
                (4, 3),
                (2, 1),
                (3, 1),
                (2, 3),
                (4, 2),
                (2, 2),
                (4, 1),
                (4, 4)
            ]
        );
        let starts = LineStarts::new(text);
        // Inside a CRLF is on the line it ends.
        assert_eq!(starts.start_of(6), 2);
        assert_eq!(starts.line(text.len()), 3);
        // After a final line break, a new (empty) line starts.
        assert_eq!(positions("a\n", &[2]), [(2, 1)]);
    }

    #[test]
    fn line_feeds_place_back_in_the_original() {
        let text = "a: b\r\nc:\r\n  - \"d\r\n  e\"\r\n";
        let lf = LineFeeds::of(text).unwrap();
        assert_eq!(lf.text, "a: b\nc:\n  - \"d\n  e\"\n");
        // `b`, the line feed after it (the CR), `c`, `d` in the quoted
        // scalar, and the end.
        for (offset, original) in [(3, 3), (4, 4), (5, 6), (13, 15), (20, 24)] {
            assert_eq!(lf.original(offset), original, "{offset}");
        }
        let quoted = Pos {
            line: 3,
            column: 5,
            offset: 12,
            len: 7,
        };
        let placed = lf.place(quoted);
        assert_eq!(
            &text[placed.offset..placed.offset + placed.len],
            "\"d\r\n  e\""
        );
        assert_eq!((placed.line, placed.column), (3, 5));
        assert!(LineFeeds::of("a\rb\r\n").is_none());
        assert_eq!(LineFeeds::of("a\n").unwrap().original(2), 2);
    }

    #[test]
    fn boundaries_are_characters() {
        let text = "aé€";
        assert_eq!(floor_char_boundary(text, 2), 1);
        assert_eq!(ceil_char_boundary(text, 2), 3);
        assert_eq!(floor_char_boundary(text, 99), text.len());
        assert_eq!(line_around(text, 2), 0..text.len());
    }
}
