//! YAML text → documents with positions.
//!
//! Three tools, from cheapest to dearest, so front ends can parse only what the
//! rules need:
//! - [`split_documents`] cuts a file at its `---` / `...` lines (a column-0
//!   document marker always ends a document, even inside a scalar, per YAML 1.2);
//! - [`scan_header`] reads `apiVersion`, `kind`, `metadata.name` and
//!   `metadata.namespace` of a block-style document line by line, and answers
//!   [`Header::Unknown`] whenever it is not sure;
//! - [`parse`] builds the full tree with a position for every node
//!   (serde-saphyr, with limits against alias bombs and deep nesting), from
//!   which [`Node::to_value`] makes JSON and [`Node::locate`] finds a field.
//!
//! [`find_template`] spots Helm template actions where YAML would read them as syntax.

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_saphyr::Spanned;

use crate::path::{FieldPath, Segment};
use crate::registry::Rule;
use crate::rules::{duplicate_key, invalid_yaml};

mod prune;
pub use prune::{Keep, prune_text};

/// A position in a document: 1-based line and column (in characters), and the
/// byte range of the node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pos {
    /// 1-based line, relative to the text that was parsed.
    pub line: usize,
    /// 1-based column in characters.
    pub column: usize,
    /// Byte offset of the node's start.
    pub offset: usize,
    /// Byte length of the node.
    pub len: usize,
}

impl Pos {
    fn from_location(location: &serde_saphyr::Location) -> Self {
        let span = location.span();
        Self {
            line: location.line() as usize,
            column: location.column() as usize,
            offset: span.byte_offset().unwrap_or_default() as usize,
            len: span.byte_len().unwrap_or_default() as usize,
        }
    }
}

// ---------------------------------------------------------------------------
// Splitting

/// One document of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk<'a> {
    /// The document's text, including its `---` line.
    pub text: &'a str,
    /// Byte offset of the text in the file.
    pub offset: usize,
    /// Number of lines before the text in the file.
    pub line_offset: usize,
}

fn is_marker(line: &str, marker: &str) -> bool {
    line.strip_prefix(marker)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '\r']))
}

/// Whether a line carries no content: blank, a comment, a directive or a bare marker.
fn is_empty_line(line: &str) -> bool {
    let content = if is_marker(line, "---") || is_marker(line, "...") {
        &line[3..]
    } else if line.starts_with('%') {
        ""
    } else {
        line
    };
    let content = content.trim_start();
    content.is_empty() || content.starts_with('#')
}

/// Splits a YAML stream into its non-empty documents.
pub fn split_documents(text: &str) -> Vec<Chunk<'_>> {
    let mut chunks = Vec::new();
    let mut start = 0;
    let mut start_line = 0;
    let mut empty = true;
    let mut offset = 0;
    let mut push = |start: usize, end: usize, line: usize, empty: bool| {
        if !empty {
            chunks.push(Chunk {
                text: &text[start..end],
                offset: start,
                line_offset: line,
            });
        }
    };
    for (line_number, line) in text.split_inclusive('\n').enumerate() {
        let bare = line.trim_end_matches(['\n', '\r']);
        // Only lines starting with `-` or `.` can be markers; only the first
        // content line of a document needs a closer look.
        if bare.starts_with(['-', '.']) && (is_marker(bare, "---") || is_marker(bare, "...")) {
            push(start, offset, start_line, empty);
            start = offset;
            start_line = line_number;
            empty = true;
        }
        if empty {
            empty = is_empty_line(bare);
        }
        offset += line.len();
    }
    push(start, text.len(), start_line, empty);
    chunks
}

// ---------------------------------------------------------------------------
// Header scanning

/// What [`scan_header`] could tell about a document without parsing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Header<'a> {
    /// A Kubernetes object.
    Object {
        /// `apiVersion`.
        api_version: &'a str,
        /// `kind`.
        kind: &'a str,
        /// `metadata.name`, if set.
        name: Option<&'a str>,
        /// `metadata.namespace`, if set.
        namespace: Option<&'a str>,
    },
    /// A block mapping without `apiVersion` and `kind`: not an object.
    NotAnObject,
    /// Not sure: parse the document to find out.
    Unknown,
}

/// Strips a trailing ` # comment` from a value (a `#` after whitespace starts one).
fn strip_comment(value: &str) -> &str {
    let bytes = value.as_bytes();
    for i in 0..bytes.len() {
        if bytes[i] == b'#' && (i == 0 || matches!(bytes[i - 1], b' ' | b'\t')) {
            return value[..i].trim_end();
        }
    }
    value.trim_end()
}

/// A scalar made only of characters that cannot change its meaning (names,
/// versions, kinds), plain or simply quoted. `None` for anything else.
fn simple_scalar(value: &str) -> Option<&str> {
    let value = strip_comment(value.trim_start());
    let inner = match value.as_bytes().first()? {
        b'"' | b'\'' => {
            let quote = &value[..1];
            value.strip_prefix(quote)?.strip_suffix(quote)?
        }
        _ => value,
    };
    let plain = !inner.is_empty()
        && inner
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'/'))
        && !inner.starts_with(['-', '.', '/']);
    plain.then_some(inner)
}

/// Whether a value ends on its own line: quoted scalars and flow collections must
/// close there, or a later line at column 0 could still belong to them.
fn closes_on_line(value: &str) -> bool {
    let value = value.trim();
    match value.as_bytes().first() {
        Some(b'"') => closes_quoted(&value[1..], b'"'),
        Some(b'\'') => closes_quoted(&value[1..], b'\''),
        Some(b'{') => strip_comment(value).ends_with('}'),
        Some(b'[') => strip_comment(value).ends_with(']'),
        _ => true,
    }
}

fn closes_quoted(rest: &str, quote: u8) -> bool {
    let bytes = rest.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 1,
            b'\'' if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 1,
            b if b == quote => return true,
            _ => {}
        }
        i += 1;
    }
    false
}

/// A sequence entry (`- item`) at a mapping key's own indentation: YAML's compact
/// form of a sequence that is the value of the key before it.
fn is_compact_sequence_entry(line: &str) -> bool {
    line == "-" || line.starts_with("- ")
}

/// Splits `key: value` at column 0 of a block mapping; `None` if the line is not
/// a plain key followed by `:`.
fn block_key(line: &str) -> Option<(&str, &str)> {
    let (key, rest) = line.split_once(':')?;
    let plain_key = key
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/'));
    let separated = rest.is_empty() || rest.starts_with([' ', '\t']);
    (plain_key && separated).then_some((key, rest))
}

fn indentation(line: &str) -> Option<usize> {
    let spaces = line.len() - line.trim_start_matches(' ').len();
    // Tabs cannot indent YAML; leave such documents to the parser.
    (!line[spaces..].starts_with('\t')).then_some(spaces)
}

/// Reads the identity of a block-style document without parsing it.
pub fn scan_header(text: &str) -> Header<'_> {
    let mut lines = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .peekable();
    let mut api_version = None;
    let mut kind = None;
    let mut name = None;
    let mut namespace = None;
    let mut seen_metadata = false;
    let mut seen_key = false;
    while let Some(line) = lines.next() {
        // Only column-0 lines matter here; most lines are indented.
        match line.as_bytes().first() {
            None | Some(b' ' | b'#') => continue,
            Some(b'\t') => return Header::Unknown,
            Some(b'-' | b'.' | b'%') if is_empty_line(line) => continue,
            _ => {}
        }
        if is_compact_sequence_entry(line) && seen_key {
            continue;
        }
        let Some((key, value)) = block_key(line) else {
            return Header::Unknown;
        };
        seen_key = true;
        if !closes_on_line(value) {
            return Header::Unknown;
        }
        let slot = match key {
            "apiVersion" => &mut api_version,
            "kind" => &mut kind,
            "metadata" => {
                if seen_metadata || !strip_comment(value).trim().is_empty() {
                    return Header::Unknown;
                }
                seen_metadata = true;
                match scan_metadata(&mut lines) {
                    Some((n, ns)) => {
                        name = n;
                        namespace = ns;
                        continue;
                    }
                    None => return Header::Unknown,
                }
            }
            _ => continue,
        };
        if slot.is_some() {
            return Header::Unknown;
        }
        let Some(value) = simple_scalar(value) else {
            return Header::Unknown;
        };
        *slot = Some(value);
    }
    match (api_version, kind) {
        (Some(api_version), Some(kind)) => Header::Object {
            api_version,
            kind,
            name,
            namespace,
        },
        (None, None) => Header::NotAnObject,
        _ => Header::Unknown,
    }
}

/// Reads `name` and `namespace` from the indented block after `metadata:`, up to
/// the next column-0 line (left for the caller). `None` when unsure.
#[allow(clippy::type_complexity)]
fn scan_metadata<'a>(
    lines: &mut std::iter::Peekable<impl Iterator<Item = &'a str>>,
) -> Option<(Option<&'a str>, Option<&'a str>)> {
    let mut child_indent = None;
    let mut name = None;
    let mut namespace = None;
    while let Some(line) = lines.peek().copied() {
        if is_empty_line(line) {
            lines.next();
            continue;
        }
        let indent = indentation(line)?;
        if indent == 0 {
            break;
        }
        lines.next();
        let child = *child_indent.get_or_insert(indent);
        if indent < child {
            return None;
        }
        if indent > child || is_compact_sequence_entry(&line[indent..]) {
            continue;
        }
        let (key, value) = block_key(&line[indent..])?;
        if !closes_on_line(value) {
            return None;
        }
        let slot = match key {
            "name" => &mut name,
            "namespace" => &mut namespace,
            _ => continue,
        };
        if slot.is_some() {
            return None;
        }
        *slot = Some(simple_scalar(value)?);
    }
    Some((name, namespace))
}

// ---------------------------------------------------------------------------
// Helm templates

/// The byte offset of the first template action (`{{`) that YAML would read as
/// syntax: at the start of a value, a list item or a line. Actions inside quoted
/// strings, plain scalars, block scalars and comments are text, not templates.
pub fn find_template(text: &str) -> Option<usize> {
    memchr::memmem::find(text.as_bytes(), b"{{")?;
    let mut block_indent: Option<usize> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let line = line.trim_end_matches(['\n', '\r']);
        let indent = line.len() - line.trim_start_matches(' ').len();
        if let Some(block) = block_indent {
            if line.trim().is_empty() || indent > block {
                continue;
            }
            block_indent = None;
        }
        if let Some(at) = template_in_line(line) {
            return Some(start + at);
        }
        if starts_block_scalar(line) {
            block_indent = Some(indent);
        }
    }
    None
}

fn template_in_line(line: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut at_value_start = true;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b' ' | b'\t' => {}
            b'#' if i == 0 || matches!(bytes[i - 1], b' ' | b'\t') => return None,
            b'{' if at_value_start && bytes.get(i + 1) == Some(&b'{') => return Some(i),
            b'"' | b'\'' if at_value_start => {
                let quote = bytes[i];
                i += 1;
                while i < bytes.len() && bytes[i] != quote {
                    i += usize::from(bytes[i] == b'\\' && quote == b'"') + 1;
                }
                at_value_start = false;
            }
            b'-' | b'?' if at_value_start && matches!(bytes.get(i + 1), None | Some(b' ')) => {}
            b':' if matches!(bytes.get(i + 1), None | Some(b' ')) => at_value_start = true,
            b'[' | b'{' | b',' => at_value_start = true,
            _ => at_value_start = false,
        }
        i += 1;
    }
    None
}

fn starts_block_scalar(line: &str) -> bool {
    let content = strip_comment(line);
    let indicator = content.trim_end_matches(|c: char| c.is_ascii_digit() || c == '-' || c == '+');
    (indicator.ends_with('|') || indicator.ends_with('>'))
        && matches!(
            indicator[..indicator.len() - 1].trim_end().chars().last(),
            None | Some(':' | '-')
        )
}

// ---------------------------------------------------------------------------
// Full parse

/// A YAML node with its position.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Where the node is.
    pub pos: Pos,
    /// What it holds.
    pub kind: NodeKind,
}

/// The content of a [`Node`].
#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind {
    /// `null`, `~` or nothing.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float (or an integer too large for i64).
    Float(f64),
    /// A string.
    Str(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, keys in document order, duplicates kept.
    Map(Vec<(Key, Node)>),
}

/// A mapping key with its position.
#[derive(Clone, Debug, PartialEq)]
pub struct Key {
    /// The key as text (non-string scalar keys are written out).
    pub name: String,
    /// Where the key is.
    pub pos: Pos,
}

/// A document that could not be parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct SyntaxError {
    /// What went wrong.
    pub message: String,
    /// Where, when the parser knows.
    pub pos: Option<Pos>,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A mapping key that appears more than once.
#[derive(Clone, Debug, PartialEq)]
pub struct Duplicate {
    /// Path of the repeated key.
    pub path: FieldPath,
    /// Position of the repeated (later) key.
    pub pos: Pos,
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spanned = Spanned::<NodeKind>::deserialize(deserializer)?;
        Ok(Node {
            pos: Pos::from_location(&spanned.referenced),
            kind: spanned.value,
        })
    }
}

struct KeyText(String);

impl<'de> Deserialize<'de> for KeyText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = KeyText;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a scalar mapping key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<KeyText, E> {
                Ok(KeyText(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<KeyText, E> {
                Ok(KeyText(v))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<KeyText, E> {
                Ok(KeyText("null".to_owned()))
            }
        }
        deserializer.deserialize_any(KeyVisitor)
    }
}

impl<'de> Deserialize<'de> for NodeKind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KindVisitor;
        impl<'de> Visitor<'de> for KindVisitor {
            type Value = NodeKind;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any YAML value")
            }
            fn visit_unit<E: de::Error>(self) -> Result<NodeKind, E> {
                Ok(NodeKind::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<NodeKind, E> {
                Ok(NodeKind::Null)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<NodeKind, D::Error> {
                NodeKind::deserialize(d)
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<NodeKind, E> {
                Ok(NodeKind::Bool(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<NodeKind, E> {
                Ok(NodeKind::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<NodeKind, E> {
                Ok(i64::try_from(v).map_or(NodeKind::Float(v as f64), NodeKind::Int))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<NodeKind, E> {
                Ok(NodeKind::Float(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<NodeKind, E> {
                Ok(NodeKind::Str(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<NodeKind, E> {
                Ok(NodeKind::Str(v))
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<NodeKind, E> {
                Ok(NodeKind::Str(String::from_utf8_lossy(v).into_owned()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NodeKind, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Node>()? {
                    items.push(item);
                }
                Ok(NodeKind::Seq(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NodeKind, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<Spanned<KeyText>>()? {
                    let value = map.next_value::<Node>()?;
                    let pos = Pos::from_location(&key.referenced);
                    entries.push((
                        Key {
                            name: key.value.0,
                            pos,
                        },
                        value,
                    ));
                }
                Ok(NodeKind::Map(entries))
            }
        }
        deserializer.deserialize_any(KindVisitor)
    }
}

/// A stack size that is enough for [`parse`] at the depth limit, even in debug builds.
pub const PARSER_STACK_SIZE: usize = 16 << 20;

/// A value read without positions, noting whether some mapping repeats a key
/// (positions are then needed to report it: see [`read_document`]).
struct Plain {
    value: Value,
    has_duplicates: bool,
}

impl<'de> Deserialize<'de> for Plain {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PlainVisitor;
        fn plain(value: impl Into<Value>) -> Plain {
            Plain {
                value: value.into(),
                has_duplicates: false,
            }
        }
        impl<'de> Visitor<'de> for PlainVisitor {
            type Value = Plain;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any YAML value")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Plain, E> {
                Ok(plain(Value::Null))
            }
            fn visit_none<E: de::Error>(self) -> Result<Plain, E> {
                Ok(plain(Value::Null))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Plain, D::Error> {
                Plain::deserialize(d)
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Plain, E> {
                Ok(plain(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Plain, E> {
                Ok(plain(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Plain, E> {
                Ok(plain(v))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Plain, E> {
                Ok(plain(serde_json::Number::from_f64(v).map_or_else(
                    || Value::String(v.to_string()),
                    Value::Number,
                )))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Plain, E> {
                Ok(plain(v))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Plain, E> {
                Ok(plain(v))
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Plain, E> {
                Ok(plain(String::from_utf8_lossy(v).into_owned()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Plain, A::Error> {
                let mut items = Vec::new();
                let mut has_duplicates = false;
                while let Some(item) = seq.next_element::<Plain>()? {
                    has_duplicates |= item.has_duplicates;
                    items.push(item.value);
                }
                Ok(Plain {
                    value: Value::Array(items),
                    has_duplicates,
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Plain, A::Error> {
                let mut entries = Vec::new();
                let mut has_duplicates = false;
                while let Some(KeyText(key)) = map.next_key::<KeyText>()? {
                    let value = map.next_value::<Plain>()?;
                    has_duplicates |= value.has_duplicates;
                    entries.push((key, value.value));
                }
                let mut object = serde_json::Map::with_capacity(entries.len());
                for (key, value) in entries {
                    has_duplicates |= object.insert(key, value).is_some();
                }
                Ok(Plain {
                    value: Value::Object(object),
                    has_duplicates,
                })
            }
        }
        deserializer.deserialize_any(PlainVisitor)
    }
}

/// Parser limits: far above any real manifest, low enough that hostile input
/// (alias bombs, deep nesting) ends quickly with an error.
fn options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_depth: 100,
            max_nodes: 2_000_000,
            max_events: 8_000_000,
        },
        alias_limits: serde_saphyr::alias_limits! {
            max_total_replayed_events: 1_000_000,
        },
        duplicate_keys: serde_saphyr::DuplicateKeyPolicy::PassThrough,
        with_snippet: false,
    }
}

/// The parser's message without the positions it adds (ours are reported apart,
/// relative to the file rather than the document).
fn plain_message(error: &serde_saphyr::Error) -> String {
    let text = error.without_snippet().to_string();
    let text = text.strip_prefix("error: ").unwrap_or(&text);
    let text = match text.split_once(": ") {
        Some((head, rest)) if head.starts_with("line ") && head.contains(" column ") => rest,
        _ => text,
    };
    let text = text.lines().next().unwrap_or_default().trim();
    match text.rsplit_once(" at line ") {
        Some((message, position)) if position.contains(", column ") => message.to_owned(),
        _ => text.to_owned(),
    }
}

/// The byte offset of a 1-based line and character column.
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let line_start = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum::<usize>();
    let rest = &text[line_start.min(text.len())..];
    line_start
        + rest
            .char_indices()
            .nth(column.saturating_sub(1))
            .map_or(rest.len(), |(i, _)| i)
}

/// A syntax error with its position (error locations carry character offsets only).
fn syntax_error(text: &str, error: &serde_saphyr::Error) -> SyntaxError {
    SyntaxError {
        message: plain_message(error),
        pos: error.location().map(|location| {
            let mut pos = Pos::from_location(&location);
            pos.offset = offset_of(text, pos.line, pos.column);
            pos.len = 1;
            pos
        }),
    }
}

/// Parses one document (a [`Chunk`]'s text) into a tree with positions.
///
/// Parsing recurses once per nesting level; at the depth limit (100) it needs
/// about 0.5 MiB of stack in release builds and 4 MiB in debug builds, so call it
/// from threads with a large stack ([`PARSER_STACK_SIZE`]).
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    serde_saphyr::from_str_with_options::<Node>(text, options())
        .map_err(|error| syntax_error(text, &error))
}

impl Node {
    /// The JSON value (as kubectl's YAML-to-JSON conversion makes it, last
    /// duplicate key winning) and every repeated key.
    pub fn to_value(&self) -> (Value, Vec<Duplicate>) {
        let mut duplicates = Vec::new();
        let value = self.value_at(&FieldPath::root(), &mut duplicates);
        (value, duplicates)
    }

    fn value_at(&self, path: &FieldPath, duplicates: &mut Vec<Duplicate>) -> Value {
        match &self.kind {
            NodeKind::Null => Value::Null,
            NodeKind::Bool(b) => Value::Bool(*b),
            NodeKind::Int(i) => Value::from(*i),
            NodeKind::Float(f) => serde_json::Number::from_f64(*f)
                .map_or_else(|| Value::String(f.to_string()), Value::Number),
            NodeKind::Str(s) => Value::String(s.clone()),
            NodeKind::Seq(items) => Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| item.value_at(&path.index(i), duplicates))
                    .collect(),
            ),
            NodeKind::Map(entries) => {
                let mut seen = HashSet::with_capacity(entries.len());
                let mut map = serde_json::Map::with_capacity(entries.len());
                for (key, value) in entries {
                    let child = path.field(&key.name);
                    if !seen.insert(key.name.as_str()) {
                        duplicates.push(Duplicate {
                            path: child.clone(),
                            pos: key.pos,
                        });
                    }
                    map.insert(key.name.clone(), value.value_at(&child, duplicates));
                }
                Value::Object(map)
            }
        }
    }

    /// Where a field is: the key of the deepest existing node on `path` (the
    /// field itself when it exists, else its nearest existing parent), spanning
    /// the value too when it is a scalar on the same line.
    pub fn locate(&self, path: &FieldPath) -> Pos {
        let mut node = self;
        let mut pos = self.pos;
        for segment in path.segments() {
            let next = match (segment, &node.kind) {
                (Segment::Field(name) | Segment::Key(name), NodeKind::Map(entries)) => entries
                    .iter()
                    .rev()
                    .find(|(key, _)| *key.name == **name)
                    .map(|(key, value)| (key.pos, value)),
                (Segment::Index(i), NodeKind::Seq(items)) => {
                    items.get(*i).map(|item| (item.pos, item))
                }
                _ => None,
            };
            let Some((start, child)) = next else {
                break;
            };
            pos = start;
            let scalar = !matches!(child.kind, NodeKind::Map(_) | NodeKind::Seq(_));
            if scalar && child.pos.line == start.line && child.pos.offset >= start.offset {
                pos.len = child.pos.offset + child.pos.len - start.offset;
            }
            node = child;
        }
        pos
    }
}

/// A problem found while reading a document, already located.
#[derive(Debug)]
pub struct Problem {
    /// `invalid-yaml` or `duplicate-key`.
    pub rule: &'static Rule,
    /// The field, when there is one.
    pub path: FieldPath,
    /// Where, relative to the document.
    pub pos: Pos,
    /// What is wrong.
    pub message: String,
}

/// A document read into JSON values: the document itself, or the items of a
/// `List` (with their path, `items[i]`).
#[derive(Debug, Default)]
pub struct Document {
    /// The values and their paths in the document.
    pub values: Vec<(Value, FieldPath)>,
    /// Syntax errors and duplicate keys.
    pub problems: Vec<Problem>,
}

impl Document {
    fn invalid(error: SyntaxError) -> Self {
        Self {
            values: Vec::new(),
            problems: vec![Problem {
                rule: &invalid_yaml::RULE,
                path: FieldPath::root(),
                pos: error.pos.unwrap_or_default(),
                message: error.message,
            }],
        }
    }

    fn pruned(self, keep: &Keep) -> Self {
        Self {
            values: self
                .values
                .into_iter()
                .map(|(value, path)| (keep.prune(value), path))
                .collect(),
            problems: self.problems,
        }
    }
}

/// Parses one document, splitting `*List` kinds into their items.
pub fn read_document(text: &str) -> Document {
    // Positions cost a third of the parsing time: only a repeated key needs them.
    let (value, duplicates) = match serde_saphyr::from_str_with_options::<Plain>(text, options()) {
        Ok(plain) if !plain.has_duplicates => (plain.value, Vec::new()),
        Ok(_) => match parse(text) {
            Ok(tree) => tree.to_value(),
            Err(error) => return Document::invalid(error),
        },
        Err(error) => return Document::invalid(syntax_error(text, &error)),
    };
    let problems = duplicates
        .into_iter()
        .map(|duplicate| {
            let key = match duplicate.path.segments().last() {
                Some(Segment::Field(name)) => name.to_string(),
                _ => String::new(),
            };
            Problem {
                rule: &duplicate_key::RULE,
                message: duplicate_key::message(&key),
                path: duplicate.path,
                pos: duplicate.pos,
            }
        })
        .collect();
    let is_list = value
        .get("kind")
        .and_then(Value::as_str)
        .is_some_and(|kind| kind.ends_with("List"));
    let values = match value {
        Value::Object(mut map) if is_list && map.get("items").is_some_and(Value::is_array) => {
            let Some(Value::Array(items)) = map.remove("items") else {
                unreachable!("checked to be an array above")
            };
            items
                .into_iter()
                .enumerate()
                .map(|(i, item)| (item, FieldPath::fields("items").index(i)))
                .collect()
        }
        value => vec![(value, FieldPath::root())],
    };
    Document { values, problems }
}

/// Reads text cut by [`prune_text`] with `keep`; `None` when it has problems,
/// which must be reported against the full text ([`read_document_pruned`]).
pub fn read_cut(cut: &str, keep: &Keep) -> Option<Document> {
    let document = read_document(cut);
    document.problems.is_empty().then(|| document.pruned(keep))
}

/// Reads a document of which only `keep` matters: its lines are cut before
/// parsing when they can be, otherwise it is parsed whole. Syntax errors and
/// duplicate keys are always reported against the full text.
pub fn read_document_pruned(text: &str, keep: &Keep) -> Document {
    prune_text(text, keep)
        .and_then(|cut| read_cut(&cut, keep))
        .unwrap_or_else(|| read_document(text).pruned(keep))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scanner may give up, but when it answers it must agree with a full
    /// parse, on every document of the real-world corpus.
    #[test]
    fn header_scan_agrees_with_a_full_parse_on_real_manifests() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/corpus/realworld");
        let mut answered = 0;
        let mut documents = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "yaml") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            if find_template(&text).is_some() {
                continue;
            }
            for chunk in split_documents(&text) {
                documents += 1;
                let header = scan_header(chunk.text);
                let Ok(tree) = parse(chunk.text) else {
                    assert_eq!(header, Header::Unknown, "{}", path.display());
                    continue;
                };
                let (value, _) = tree.to_value();
                let field = |pointer: &str| value.pointer(pointer).and_then(Value::as_str);
                match header {
                    Header::Object {
                        api_version,
                        kind,
                        name,
                        namespace,
                    } => {
                        answered += 1;
                        let found = (
                            field("/apiVersion"),
                            field("/kind"),
                            field("/metadata/name"),
                            field("/metadata/namespace"),
                        );
                        assert_eq!(
                            (Some(api_version), Some(kind), name, namespace),
                            found,
                            "{}",
                            path.display()
                        );
                    }
                    Header::NotAnObject => {
                        answered += 1;
                        assert!(
                            field("/apiVersion").is_none() || field("/kind").is_none(),
                            "{}",
                            path.display()
                        );
                    }
                    Header::Unknown => {}
                }
            }
        }
        // Most real documents are block style: the scanner must answer for 98 % of them
        // (322 of 327 when this was written; the rest are flow-style JSON and oddities).
        assert!(
            answered * 50 >= documents * 49,
            "answered {answered} of {documents}"
        );
    }

    #[test]
    fn reads_lists_into_items() {
        let document =
            read_document("apiVersion: v1\nkind: List\nitems:\n- {kind: A}\n- {kind: B}\n");
        let paths: Vec<String> = document.values.iter().map(|(_, p)| p.to_string()).collect();
        assert_eq!(paths, ["items[0]", "items[1]"]);
        assert!(document.problems.is_empty());
    }

    #[test]
    fn splits_on_markers_and_skips_empty_documents() {
        let text = "# header\n---\na: 1\n---   # c\n\n---\r\nb: 2\r\n...\n%YAML 1.2\n--- {c: 3}\n";
        let chunks = split_documents(text);
        let texts: Vec<&str> = chunks.iter().map(|c| c.text).collect();
        assert_eq!(texts, ["---\na: 1\n", "---\r\nb: 2\r\n", "--- {c: 3}\n"]);
        assert_eq!(chunks[1].line_offset, 5);
        assert_eq!(&text[chunks[2].offset..], "--- {c: 3}\n");
    }

    #[test]
    fn a_marker_needs_a_separator() {
        let chunks = split_documents("a: |\n  x\n---b\n");
        assert_eq!(chunks.len(), 1);
    }

    #[test]
    fn scans_block_style_headers() {
        let text = "---\n# comment\napiVersion: apps/v1 # trailing\nkind: \"Deployment\"\nmetadata:\n  labels:\n    name: not-this\n  finalizers:\n  - name: x\n  name: web\n  namespace: 'prod'\nrules:\n- kind: NotThis\nspec:\n  replicas: 3\n";
        assert_eq!(
            scan_header(text),
            Header::Object {
                api_version: "apps/v1",
                kind: "Deployment",
                name: Some("web"),
                namespace: Some("prod")
            }
        );
        assert_eq!(scan_header("foo: bar\nbaz:\n  - 1\n"), Header::NotAnObject);
    }

    #[test]
    fn gives_up_when_unsure() {
        for text in [
            "{\"apiVersion\": \"v1\", \"kind\": \"List\"}",
            "apiVersion: v1\nkind: &k Service\n",
            "apiVersion: v1\nkind: Service\nmetadata: {name: x}\n",
            "apiVersion: v1\nkind: Service\nkind: Pod\n",
            "<<: *base\nkind: Service\n",
            "apiVersion: v1\ndata: \"open\nkind: x\"\n",
            "- a\n- b\n",
            "- kind: Service\n",
            "apiVersion: v1\nkind: Service\nmetadata:\n\tname: x\n",
            "apiVersion: v1\nkind: Service\nmetadata:\n    name: x\n  namespace: y\n",
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: \"a b\"\n",
            "kind: Service\n",
        ] {
            assert_eq!(scan_header(text), Header::Unknown, "{text:?}");
        }
    }

    #[test]
    fn finds_template_actions_where_yaml_sees_syntax() {
        fn template(text: &str) -> Option<&str> {
            find_template(text).map(|at| &text[at..at + 2])
        }
        assert_eq!(template("a: {{ .Values.x }}\n"), Some("{{"));
        assert_eq!(template("{{- if .Values.enabled }}\nkind: X\n"), Some("{{"));
        assert_eq!(template("items:\n  - {{ .x }}\n"), Some("{{"));
        assert_eq!(find_template("a: \"{{ .Values.x }}\"\n"), None);
        assert_eq!(find_template("a: 'x {{ y }}'\n"), None);
        assert_eq!(find_template("a: text-{{ y }}\n"), None);
        assert_eq!(find_template("# {{ y }}\n"), None);
        assert_eq!(find_template("a: |\n  {{ y }}\nb: 1\n"), None);
        assert_eq!(find_template("a: |\n  x\nb: {{ y }}\n"), Some(12));
    }

    #[test]
    fn parses_with_positions_and_duplicates() {
        let text = "a: 1\nb:\n  c: [x, y]\n  c: 2\n";
        let node = parse(text).unwrap();
        let (value, duplicates) = node.to_value();
        assert_eq!(value, serde_json::json!({"a": 1, "b": {"c": 2}}));
        assert_eq!(duplicates.len(), 1);
        assert_eq!(duplicates[0].path.to_string(), "b.c");
        assert_eq!((duplicates[0].pos.line, duplicates[0].pos.column), (4, 3));
        let pos = node.locate(&FieldPath::fields("a"));
        assert_eq!(
            (
                pos.line,
                pos.column,
                &text[pos.offset..pos.offset + pos.len]
            ),
            (1, 1, "a: 1")
        );
        let missing = node.locate(&FieldPath::fields("b.c.d"));
        assert_eq!((missing.line, missing.column), (4, 3));
        let root = node.locate(&FieldPath::fields("zzz"));
        assert_eq!(root.line, 1);
    }

    #[test]
    fn reports_syntax_errors_with_positions() {
        let text = "---\nname: é\na: [1, 2\n";
        let error = parse(text).unwrap_err();
        let pos = error.pos.unwrap();
        assert_eq!((pos.line, pos.column), (3, 4));
        assert_eq!(&text[pos.offset..pos.offset + 1], "[");
        assert_eq!(error.message, "unclosed bracket '['");
    }

    #[test]
    fn stops_alias_bombs_and_deep_nesting() {
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
        for i in 0..9u8 {
            let (prev, next) = ((b'a' + i) as char, (b'b' + i) as char);
            bomb.push_str(&format!("{next}: &{next} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
        }
        assert!(parse(&bomb).is_err());
        let deep = "[".repeat(10_000) + &"]".repeat(10_000);
        let deep_block: String = (0..300)
            .map(|i| format!("{}k:\n", "  ".repeat(i)))
            .collect();
        let near_limit = "[".repeat(95) + &"]".repeat(95);
        std::thread::Builder::new()
            .stack_size(PARSER_STACK_SIZE)
            .spawn(move || {
                assert!(parse(&deep).is_err());
                assert!(parse(&deep_block).is_err());
                assert!(parse(&near_limit).is_ok());
            })
            .unwrap()
            .join()
            .unwrap();
    }
}
