//! The scanner of go-yaml v2 (the YAML library under sigs.k8s.io/yaml, with
//! which kubectl reads manifests), run over a document for what it decides
//! differently from granit-parser's YAML 1.2:
//!
//! - a `#` right after a token, without whitespace before it (`'a'#c`,
//!   `[a]#c`, `|#c`), starts a comment;
//! - a tab cannot start a token where a simple key may begin in the block
//!   context (at the start of a line, after `- `, `? ` or the `:` of an
//!   explicit key): `found character that cannot start any token`;
//! - anchor and alias names are `[0-9A-Za-z_-]+`, followed by a blank or one
//!   of `?:,]}%@``; tags are made of URI characters (`,`, `[` and `]`
//!   included, `#` not) and end at a blank;
//! - characters outside YAML's printable set are refused.
//!
//! It follows go-yaml's `scannerc.go` (branch v2, v2.4.0) function by
//! function, but only for where tokens begin and end and where scanning
//! stops: the values are still granit's. Its result says which bytes granit
//! must see as blanks, which tags it must see as go-yaml reads them, and
//! where go-yaml stops with which error.

use std::borrow::Cow;
use std::ops::Range;

/// What go-yaml v2's scanner made of a document.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Scanned {
    /// Comments that start right after a token, which YAML 1.2 refuses.
    pub comments: Vec<Range<usize>>,
    /// Tags with characters that end a tag in YAML 1.2 (`,`, `[`, `]`).
    pub tags: Vec<Range<usize>>,
    /// Where scanning stopped with an error, and the error.
    pub error: Option<Stopped>,
}

/// Where go-yaml's scanner stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stopped {
    /// The start of the token it was scanning.
    pub token: usize,
    /// Where it stopped.
    pub at: usize,
    /// Its error.
    pub message: &'static str,
}

/// The text granit-parser must read to see what go-yaml v2 sees (comments
/// right after a token blanked, tags it would end early reduced to `!`, all
/// in place so that every offset stays), and where go-yaml stops with which
/// error. kubectl reads a document that starts with `{` as JSON, not YAML:
/// that one is left as it is.
pub(crate) fn as_kubectl_reads(text: &str) -> (Cow<'_, str>, Option<Stopped>) {
    if text.trim_start().starts_with('{') {
        return (Cow::Borrowed(text), None);
    }
    let Scanned {
        comments,
        tags,
        error,
    } = scan(text);
    if comments.is_empty() && tags.is_empty() {
        return (Cow::Borrowed(text), error);
    }
    let mut bytes = text.as_bytes().to_vec();
    for range in comments.into_iter().chain(tags.iter().cloned()) {
        bytes[range].fill(b' ');
    }
    // A tag that is not one of YAML's own reads as the text it tags, as `!` does.
    for range in tags {
        bytes[range.start] = b'!';
    }
    let readable = String::from_utf8(bytes).expect("whole characters were replaced by spaces");
    (Cow::Owned(readable), error)
}

/// How far go-yaml's reader decodes ahead of its scanner (its raw buffer).
const READ_AHEAD: usize = 512;
/// The longest a simple key may be, in characters, up to its `:`.
const MAX_SIMPLE_KEY: usize = 1024;
/// The deepest nesting of flow collections or indentation go-yaml accepts.
const MAX_DEPTH: usize = 10_000;

/// A position: characters from the start, line and column.
#[derive(Clone, Copy, Debug, Default)]
struct Mark {
    index: usize,
    line: usize,
    column: usize,
}

/// A place where a simple key (one without `?`) may start.
#[derive(Clone, Copy, Debug, Default)]
struct SimpleKey {
    possible: bool,
    required: bool,
    mark: Mark,
}

/// Scanning stopped: go-yaml's error text.
type Stop = &'static str;

struct Scanner<'t> {
    text: &'t [u8],
    /// Where the reader refuses a character (or the end): scanning sees the
    /// end of the input there.
    limit: usize,
    pos: usize,
    /// Where the token being scanned starts.
    token: usize,
    index: usize,
    line: usize,
    column: usize,
    flow_level: usize,
    indent: isize,
    indents: Vec<isize>,
    simple_key_allowed: bool,
    /// One per flow level, the block context first.
    simple_keys: Vec<SimpleKey>,
    found: Scanned,
}

/// Scans a document as go-yaml v2 does.
pub(crate) fn scan(text: &str) -> Scanned {
    let limit = unreadable(text);
    let mut scanner = Scanner {
        text: text.as_bytes(),
        limit: limit.unwrap_or(text.len()),
        pos: 0,
        token: 0,
        index: 0,
        line: 0,
        column: 0,
        flow_level: 0,
        indent: -1,
        indents: Vec::new(),
        simple_key_allowed: true,
        simple_keys: vec![SimpleKey::default()],
        found: Scanned::default(),
    };
    // The reader drops a byte order mark at the start.
    if text.starts_with('\u{feff}') {
        scanner.pos = 3;
    }
    let outcome = scanner.run();
    let mut found = scanner.found;
    let stopped = |at, message| Stopped {
        token: scanner.token.min(at),
        at,
        message,
    };
    found.error = match (outcome, limit) {
        // Scanning reached a character the reader refuses; the reader
        // decodes up to 512 bytes ahead of the scanner, and stops there.
        (_, Some(at)) if scanner.pos >= at => Some(Stopped {
            token: at.saturating_sub(READ_AHEAD),
            at,
            message: "control characters are not allowed",
        }),
        (Err(message), _) => Some(stopped(scanner.pos, message)),
        (Ok(()), _) => None,
    };
    found
}

/// The first character go-yaml's reader refuses: one outside YAML's
/// printable set (a byte order mark at the start is dropped before).
fn unreadable(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        // Most of a manifest is printable ASCII: only the rest is decoded.
        let ascii = bytes[at..]
            .iter()
            .position(|&b| !matches!(b, b' '..=b'~' | b'\t' | b'\n' | b'\r'));
        at += ascii.unwrap_or(bytes.len() - at);
        let c = text[at..].chars().next()?;
        let allowed = c == '\u{85}'
            || ('\u{a0}'..='\u{d7ff}').contains(&c)
            || ('\u{e000}'..='\u{fffd}').contains(&c)
            || c >= '\u{10000}';
        let leading_bom = at == 0 && c == '\u{feff}';
        if !(allowed || leading_bom) {
            return Some(at);
        }
        at += c.len_utf8();
    }
    None
}

fn is_alpha(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Characters of a tag URI (besides `%` escapes).
fn is_uri(b: u8) -> bool {
    is_alpha(b) || b";/?:@&=+$,.!~*'()[]".contains(&b)
}

/// The length of a UTF-8 sequence from its leading byte; 0 if it is none.
fn utf8_width(b: u8) -> usize {
    match b {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 0,
    }
}

impl Scanner<'_> {
    /// The byte `k` ahead; 0 past the end (go-yaml's buffer ends in NULs).
    fn at(&self, k: usize) -> u8 {
        let i = self.pos + k;
        if i < self.limit { self.text[i] } else { 0 }
    }

    fn is_z(&self, k: usize) -> bool {
        self.at(k) == 0
    }

    fn is_blank(&self, k: usize) -> bool {
        matches!(self.at(k), b' ' | b'\t')
    }

    /// A line break: CR, LF, NEL, LS or PS.
    fn is_break(&self, k: usize) -> bool {
        match self.at(k) {
            b'\r' | b'\n' => true,
            0xc2 => self.at(k + 1) == 0x85,
            0xe2 => self.at(k + 1) == 0x80 && matches!(self.at(k + 2), 0xa8 | 0xa9),
            _ => false,
        }
    }

    fn is_breakz(&self, k: usize) -> bool {
        self.is_break(k) || self.is_z(k)
    }

    fn is_blankz(&self, k: usize) -> bool {
        self.is_blank(k) || self.is_breakz(k)
    }

    fn mark(&self) -> Mark {
        Mark {
            index: self.index,
            line: self.line,
            column: self.column,
        }
    }

    /// Moves over one character (never past the end).
    fn skip(&mut self) {
        if self.pos >= self.limit {
            return;
        }
        self.pos += utf8_width(self.at(0)).max(1);
        self.index += 1;
        self.column += 1;
    }

    /// Moves over one line break (CRLF counts as one).
    fn skip_line(&mut self) {
        if self.at(0) == b'\r' && self.at(1) == b'\n' {
            self.pos += 2;
            self.index += 2;
        } else if self.is_break(0) {
            self.pos += utf8_width(self.at(0));
            self.index += 1;
        } else {
            return;
        }
        self.column = 0;
        self.line += 1;
    }

    /// Moves over a comment that starts here, to the end of its line.
    /// Moves over ASCII characters while `keep` holds; how many.
    fn skip_ascii_while(&mut self, keep: impl Fn(u8) -> bool) -> usize {
        let rest = &self.text[self.pos..self.limit];
        let n = rest
            .iter()
            .position(|&b| b >= 0x80 || !keep(b))
            .unwrap_or(rest.len());
        self.advance_ascii(n);
        n
    }

    /// Moves over `n` ASCII characters of the current line.
    fn advance_ascii(&mut self, n: usize) {
        self.pos += n;
        self.index += n;
        self.column += n;
    }

    /// Moves to the end of the line.
    fn skip_to_break(&mut self) {
        loop {
            self.skip_ascii_while(|b| b != b'\n' && b != b'\r');
            if self.is_breakz(0) {
                return;
            }
            self.skip();
        }
    }

    fn skip_comment(&mut self) {
        let start = self.pos;
        self.skip_to_break();
        let separated = start == 0 || matches!(self.text[start - 1], b' ' | b'\t' | b'\n' | b'\r');
        if !separated {
            self.found.comments.push(start..self.pos);
        }
    }

    fn run(&mut self) -> Result<(), Stop> {
        loop {
            self.scan_to_next_token();
            self.token = self.pos;
            self.stale_simple_keys()?;
            self.unroll_indent(self.column as isize);
            if self.is_z(0) {
                // STREAM-END.
                self.unroll_indent(-1);
                return self.remove_simple_key();
            }
            self.fetch_next_token()?;
        }
    }

    fn fetch_next_token(&mut self) -> Result<(), Stop> {
        let c = self.at(0);
        let document_indicator = |s: &Self, mark: u8| {
            s.column == 0 && s.at(0) == mark && s.at(1) == mark && s.at(2) == mark && s.is_blankz(3)
        };
        if self.column == 0 && c == b'%' {
            return self.fetch_directive();
        }
        if document_indicator(self, b'-') || document_indicator(self, b'.') {
            self.unroll_indent(-1);
            self.remove_simple_key()?;
            self.simple_key_allowed = false;
            for _ in 0..3 {
                self.skip();
            }
            return Ok(());
        }
        match c {
            b'[' | b'{' => return self.fetch_flow_collection_start(),
            b']' | b'}' => return self.fetch_flow_collection_end(),
            b',' => return self.fetch_flow_entry(),
            b'-' if self.is_blankz(1) => return self.fetch_block_entry(),
            b'?' if self.flow_level > 0 || self.is_blankz(1) => return self.fetch_key(),
            b':' if self.flow_level > 0 || self.is_blankz(1) => return self.fetch_value(),
            b'*' | b'&' => return self.fetch_anchor(),
            b'!' => return self.fetch_tag(),
            b'|' | b'>' if self.flow_level == 0 => return self.fetch_block_scalar(),
            b'\'' | b'"' => return self.fetch_flow_scalar(c == b'\''),
            _ => {}
        }
        // A plain scalar may start with any non-blank character but the
        // indicators; with `-`, `?` and `:` too when a non-blank follows (in
        // the flow context only `-`).
        let indicator = b"-?:,[]{}#&*!|>'\"%@`".contains(&c);
        if !(self.is_blankz(0) || indicator)
            || (c == b'-' && !self.is_blank(1))
            || (self.flow_level == 0 && matches!(c, b'?' | b':') && !self.is_blankz(1))
        {
            return self.fetch_plain_scalar();
        }
        Err("found character that cannot start any token")
    }

    /// Eats blanks, comments and line breaks up to the next token. A tab is
    /// a blank only in the flow context or where no simple key may start.
    fn scan_to_next_token(&mut self) {
        loop {
            let tabs = self.flow_level > 0 || !self.simple_key_allowed;
            self.skip_ascii_while(|b| b == b' ' || (tabs && b == b'\t'));
            if self.at(0) == b'#' {
                self.skip_comment();
            }
            if !self.is_break(0) {
                return;
            }
            self.skip_line();
            if self.flow_level == 0 {
                self.simple_key_allowed = true;
            }
        }
    }

    /// A simple key is limited to one line and 1024 characters; one that is
    /// required and can no longer be completed is an error.
    fn stale_simple_keys(&mut self) -> Result<(), Stop> {
        let now = self.mark();
        for key in &mut self.simple_keys {
            if key.possible
                && (key.mark.line < now.line || key.mark.index + MAX_SIMPLE_KEY < now.index)
            {
                if key.required {
                    return Err("could not find expected ':'");
                }
                key.possible = false;
            }
        }
        Ok(())
    }

    fn last_key(&mut self) -> &mut SimpleKey {
        self.simple_keys
            .last_mut()
            .expect("the block context has a simple key slot")
    }

    fn save_simple_key(&mut self) -> Result<(), Stop> {
        let required = self.flow_level == 0 && self.indent == self.column as isize;
        if self.simple_key_allowed {
            self.remove_simple_key()?;
            let mark = self.mark();
            *self.last_key() = SimpleKey {
                possible: true,
                required,
                mark,
            };
        }
        Ok(())
    }

    fn remove_simple_key(&mut self) -> Result<(), Stop> {
        let key = self.last_key();
        if key.possible && key.required {
            return Err("could not find expected ':'");
        }
        key.possible = false;
        Ok(())
    }

    fn roll_indent(&mut self, column: usize) -> Result<(), Stop> {
        if self.flow_level == 0 && self.indent < column as isize {
            self.indents.push(self.indent);
            self.indent = column as isize;
            if self.indents.len() > MAX_DEPTH {
                return Err("exceeded max depth of 10000");
            }
        }
        Ok(())
    }

    fn unroll_indent(&mut self, column: isize) {
        if self.flow_level > 0 {
            return;
        }
        while self.indent > column {
            self.indent = self.indents.pop().unwrap_or(-1);
        }
    }

    fn fetch_directive(&mut self) -> Result<(), Stop> {
        self.unroll_indent(-1);
        self.remove_simple_key()?;
        self.simple_key_allowed = false;
        self.skip();
        let name = self.pos;
        while is_alpha(self.at(0)) {
            self.skip();
        }
        let name = &self.text[name..self.pos];
        if name.is_empty() {
            return Err("could not find expected directive name");
        }
        if !self.is_blankz(0) {
            return Err("found unexpected non-alphabetical character");
        }
        match name {
            b"YAML" => {
                self.skip_blanks();
                self.scan_version_number()?;
                if self.at(0) != b'.' {
                    return Err("did not find expected digit or '.' character");
                }
                self.skip();
                self.scan_version_number()?;
            }
            b"TAG" => {
                self.skip_blanks();
                self.scan_tag_handle(true)?;
                if !self.is_blank(0) {
                    return Err("did not find expected whitespace");
                }
                self.skip_blanks();
                self.scan_tag_uri(false)?;
                if !self.is_blankz(0) {
                    return Err("did not find expected whitespace or line break");
                }
            }
            _ => return Err("found unknown directive name"),
        }
        self.skip_blanks();
        if self.at(0) == b'#' {
            self.skip_comment();
        }
        if !self.is_breakz(0) {
            return Err("did not find expected comment or line break");
        }
        self.skip_line();
        Ok(())
    }

    fn skip_blanks(&mut self) {
        while self.is_blank(0) {
            self.skip();
        }
    }

    fn scan_version_number(&mut self) -> Result<(), Stop> {
        let mut length = 0;
        while self.at(0).is_ascii_digit() {
            length += 1;
            if length > 2 {
                return Err("found extremely long version number");
            }
            self.skip();
        }
        if length == 0 {
            return Err("did not find expected version number");
        }
        Ok(())
    }

    fn fetch_flow_collection_start(&mut self) -> Result<(), Stop> {
        self.save_simple_key()?;
        self.simple_keys.push(SimpleKey::default());
        self.flow_level += 1;
        if self.flow_level > MAX_DEPTH {
            return Err("exceeded max depth of 10000");
        }
        self.simple_key_allowed = true;
        self.skip();
        Ok(())
    }

    fn fetch_flow_collection_end(&mut self) -> Result<(), Stop> {
        self.remove_simple_key()?;
        if self.flow_level > 0 {
            self.flow_level -= 1;
            self.simple_keys.pop();
        }
        self.simple_key_allowed = false;
        self.skip();
        Ok(())
    }

    fn fetch_flow_entry(&mut self) -> Result<(), Stop> {
        self.remove_simple_key()?;
        self.simple_key_allowed = true;
        self.skip();
        Ok(())
    }

    fn fetch_block_entry(&mut self) -> Result<(), Stop> {
        if self.flow_level == 0 {
            if !self.simple_key_allowed {
                return Err("block sequence entries are not allowed in this context");
            }
            self.roll_indent(self.column)?;
        }
        self.remove_simple_key()?;
        self.simple_key_allowed = true;
        self.skip();
        Ok(())
    }

    fn fetch_key(&mut self) -> Result<(), Stop> {
        if self.flow_level == 0 {
            if !self.simple_key_allowed {
                return Err("mapping keys are not allowed in this context");
            }
            self.roll_indent(self.column)?;
        }
        self.remove_simple_key()?;
        self.simple_key_allowed = self.flow_level == 0;
        self.skip();
        Ok(())
    }

    fn fetch_value(&mut self) -> Result<(), Stop> {
        let key = *self.last_key();
        if key.possible {
            // The simple key was a key: KEY (and BLOCK-MAPPING-START) go before it.
            self.roll_indent(key.mark.column)?;
            self.last_key().possible = false;
            // A simple key cannot follow another simple key.
            self.simple_key_allowed = false;
        } else {
            // The `:` of an explicit (`?`) key.
            if self.flow_level == 0 {
                if !self.simple_key_allowed {
                    return Err("mapping values are not allowed in this context");
                }
                self.roll_indent(self.column)?;
            }
            self.simple_key_allowed = self.flow_level == 0;
        }
        self.skip();
        Ok(())
    }

    fn fetch_anchor(&mut self) -> Result<(), Stop> {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        self.skip();
        let start = self.pos;
        while is_alpha(self.at(0)) {
            self.skip();
        }
        let ends_well = self.is_blankz(0) || b"?:,]}%@`".contains(&self.at(0));
        if self.pos == start || !ends_well {
            return Err("did not find expected alphabetic or numeric character");
        }
        Ok(())
    }

    fn fetch_tag(&mut self) -> Result<(), Stop> {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let start = self.pos;
        if self.at(1) == b'<' {
            // Verbatim: `!<...>`, read alike.
            self.skip();
            self.skip();
            self.scan_tag_uri(false)?;
            if self.at(0) != b'>' {
                return Err("did not find the expected '>'");
            }
            self.skip();
            return self.expect_tag_end();
        } else {
            let handle = self.scan_tag_handle(false)?;
            let is_handle = handle.len() > 1 && handle.ends_with(b"!");
            // Not a handle after all: it is the start of the suffix.
            self.scan_tag_uri(!is_handle)?;
        }
        self.expect_tag_end()?;
        if self.text[start..self.pos]
            .iter()
            .any(|b| matches!(b, b',' | b'[' | b']'))
        {
            self.found.tags.push(start..self.pos);
        }
        Ok(())
    }

    fn expect_tag_end(&self) -> Result<(), Stop> {
        if !self.is_blankz(0) {
            return Err("did not find expected whitespace or line break");
        }
        Ok(())
    }

    /// `!`, `!name!` or `!name` (the start of a suffix); its text.
    fn scan_tag_handle(&mut self, directive: bool) -> Result<&[u8], Stop> {
        if self.at(0) != b'!' {
            return Err("did not find expected '!'");
        }
        let start = self.pos;
        self.skip();
        while is_alpha(self.at(0)) {
            self.skip();
        }
        if self.at(0) == b'!' {
            self.skip();
        } else if directive && self.pos - start != 1 {
            return Err("did not find expected '!'");
        }
        Ok(&self.text[start..self.pos])
    }

    /// A tag's URI; `has_head` when part of it was scanned as a handle.
    fn scan_tag_uri(&mut self, has_head: bool) -> Result<(), Stop> {
        let mut has_tag = has_head;
        while is_uri(self.at(0)) || self.at(0) == b'%' {
            if self.at(0) == b'%' {
                self.scan_uri_escapes()?;
            } else {
                self.skip();
            }
            has_tag = true;
        }
        if !has_tag {
            return Err("did not find expected tag URI");
        }
        Ok(())
    }

    /// `%XX` escapes that together make one UTF-8 character.
    fn scan_uri_escapes(&mut self) -> Result<(), Stop> {
        let mut width = None;
        loop {
            let hex = |b: u8| char::from(b).to_digit(16);
            let (Some(high), Some(low)) = (hex(self.at(1)), hex(self.at(2))) else {
                return Err("did not find URI escaped octet");
            };
            if self.at(0) != b'%' {
                return Err("did not find URI escaped octet");
            }
            let octet = (high << 4 | low) as u8;
            let left = match width {
                None => match utf8_width(octet) {
                    0 => return Err("found an incorrect leading UTF-8 octet"),
                    w => w,
                },
                Some(left) => {
                    if octet & 0xc0 != 0x80 {
                        return Err("found an incorrect trailing UTF-8 octet");
                    }
                    left
                }
            };
            for _ in 0..3 {
                self.skip();
            }
            if left == 1 {
                return Ok(());
            }
            width = Some(left - 1);
        }
    }

    fn fetch_block_scalar(&mut self) -> Result<(), Stop> {
        self.remove_simple_key()?;
        self.simple_key_allowed = true;
        self.skip();
        // Chomping and indentation indicators, in either order.
        let mut increment = 0;
        let mut chomping = false;
        for _ in 0..2 {
            match self.at(0) {
                b'+' | b'-' if !chomping => {
                    chomping = true;
                    self.skip();
                }
                b'0' if increment == 0 => return Err("found an indentation indicator equal to 0"),
                d @ b'1'..=b'9' if increment == 0 => {
                    increment = isize::from(d - b'0');
                    self.skip();
                }
                _ => break,
            }
        }
        self.skip_blanks();
        if self.at(0) == b'#' {
            self.skip_comment();
        }
        if !self.is_breakz(0) {
            return Err("did not find expected comment or line break");
        }
        self.skip_line();
        let mut indent = if increment > 0 {
            if self.indent >= 0 {
                self.indent + increment
            } else {
                increment
            }
        } else {
            0
        };
        self.block_scalar_breaks(&mut indent)?;
        while self.column as isize == indent && !self.is_z(0) {
            self.skip_to_break();
            self.skip_line();
            self.block_scalar_breaks(&mut indent)?;
        }
        Ok(())
    }

    /// Indentation and empty lines of a block scalar; sets its indentation
    /// when no indicator did.
    fn block_scalar_breaks(&mut self, indent: &mut isize) -> Result<(), Stop> {
        let mut max_indent = 0;
        loop {
            let room = if *indent == 0 {
                usize::MAX
            } else {
                (*indent - self.column as isize).max(0) as usize
            };
            let spaces = self.text[self.pos..self.limit]
                .iter()
                .take(room)
                .take_while(|&&b| b == b' ')
                .count();
            self.advance_ascii(spaces);
            max_indent = max_indent.max(self.column as isize);
            if (*indent == 0 || (self.column as isize) < *indent) && self.at(0) == b'\t' {
                return Err("found a tab character where an indentation space is expected");
            }
            if !self.is_break(0) {
                break;
            }
            self.skip_line();
        }
        if *indent == 0 {
            *indent = max_indent.max(self.indent + 1).max(1);
        }
        Ok(())
    }

    fn is_document_indicator(&self) -> bool {
        self.column == 0
            && ((self.at(0) == b'-' && self.at(1) == b'-' && self.at(2) == b'-')
                || (self.at(0) == b'.' && self.at(1) == b'.' && self.at(2) == b'.'))
            && self.is_blankz(3)
    }

    fn fetch_flow_scalar(&mut self, single: bool) -> Result<(), Stop> {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        self.skip();
        loop {
            if self.is_document_indicator() {
                return Err("found unexpected document indicator");
            }
            if self.is_z(0) {
                return Err("found unexpected end of stream");
            }
            while !self.is_blankz(0) {
                self.skip_ascii_while(|b| {
                    !matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\'' | b'"' | b'\\')
                });
                if self.is_blankz(0) {
                    break;
                }
                let c = self.at(0);
                if single && c == b'\'' && self.at(1) == b'\'' {
                    self.skip();
                    self.skip();
                } else if (single && c == b'\'') || (!single && c == b'"') {
                    break;
                } else if !single && c == b'\\' && self.is_break(1) {
                    self.skip();
                    self.skip_line();
                    break;
                } else if !single && c == b'\\' {
                    let code_length = match self.at(1) {
                        b'0' | b'a' | b'b' | b't' | b'\t' | b'n' | b'v' | b'f' | b'r' | b'e'
                        | b' ' | b'"' | b'\'' | b'\\' | b'N' | b'_' | b'L' | b'P' => 0,
                        b'x' => 2,
                        b'u' => 4,
                        b'U' => 8,
                        _ => return Err("found unknown escape character"),
                    };
                    self.skip();
                    self.skip();
                    let mut value: u32 = 0;
                    for k in 0..code_length {
                        let Some(digit) = char::from(self.at(k)).to_digit(16) else {
                            return Err("did not find expected hexdecimal number");
                        };
                        value = (value << 4) + digit;
                    }
                    if (0xd800..=0xdfff).contains(&value) || value > 0x10ffff {
                        return Err("found invalid Unicode character escape code");
                    }
                    for _ in 0..code_length {
                        self.skip();
                    }
                } else {
                    self.skip();
                }
            }
            if (single && self.at(0) == b'\'') || (!single && self.at(0) == b'"') {
                break;
            }
            while self.is_blank(0) || self.is_break(0) {
                if self.is_blank(0) {
                    self.skip();
                } else {
                    self.skip_line();
                }
            }
        }
        self.skip();
        Ok(())
    }

    fn fetch_plain_scalar(&mut self) -> Result<(), Stop> {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let indent = self.indent + 1;
        let mut leading_blanks = false;
        loop {
            if self.is_document_indicator() || self.at(0) == b'#' {
                break;
            }
            let flow = self.flow_level > 0;
            while !self.is_blankz(0) {
                let plain = |b: u8| {
                    let ends = matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b':');
                    !(ends || flow && b",?[]{}".contains(&b))
                };
                if self.skip_ascii_while(plain) > 0 {
                    leading_blanks = false;
                }
                if self.is_blankz(0) {
                    break;
                }
                let c = self.at(0);
                if (c == b':' && self.is_blankz(1)) || (flow && b",?[]{}".contains(&c)) {
                    break;
                }
                leading_blanks = false;
                self.skip();
            }
            if !(self.is_blank(0) || self.is_break(0)) {
                break;
            }
            while self.is_blank(0) || self.is_break(0) {
                if self.is_blank(0) {
                    if leading_blanks && (self.column as isize) < indent && self.at(0) == b'\t' {
                        return Err("found a tab character that violates indentation");
                    }
                    self.skip();
                } else {
                    leading_blanks = true;
                    self.skip_line();
                }
            }
            if self.flow_level == 0 && (self.column as isize) < indent {
                break;
            }
        }
        if leading_blanks {
            self.simple_key_allowed = true;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_granit_must_read_otherwise() {
        let found = scan("a: 'x'#c\nb: [!t, c] # d\n");
        assert_eq!(found.comments, vec![6..8]);
        assert_eq!(found.tags, vec![13..16]);
        assert_eq!(found.error, None);
        let (readable, stopped) = as_kubectl_reads("a: 'x'#c\nb: [!t, c] # d\n");
        assert_eq!(readable, "a: 'x'  \nb: [!   c] # d\n");
        assert_eq!(stopped, None);
    }

    #[test]
    fn stops_where_go_yaml_stops() {
        let stopped = scan("- a\n-\tb\n").error.unwrap();
        assert_eq!(
            stopped,
            Stopped {
                token: 5,
                at: 5,
                message: "found character that cannot start any token"
            }
        );
        // The reader refuses a control character before the scanner gets there.
        let control = scan("a: b\u{1}").error.unwrap();
        assert_eq!((control.token, control.at), (0, 4));
        assert_eq!(
            scan(&"[".repeat(10_001)).error.unwrap().message,
            "exceeded max depth of 10000"
        );
    }

    #[test]
    fn leaves_json_alone() {
        let json = "{\"a\": 1,#x\n\t\"b\": 2}";
        assert!(matches!(as_kubectl_reads(json), (Cow::Borrowed(_), None)));
    }
}
