//! Changes to a document, said once on field paths ([`Edit`]) and carried out
//! on its text with the fewest bytes changed ([`text_edits`]): comments, key
//! order, quoting, indentation, flow or block style and line breaks outside the
//! edited spans stay as they were.

use std::borrow::Cow;
use std::ops::Range;

use granit_parser::{Event, Parser, ScalarStyle};
use serde_json::Value;

use super::compose::parser_options;
use super::goyaml;
use super::lines::{LineFeeds, LineStarts, line_around};
use super::quick;
use super::scalar::{self, Scalar};
use super::{Pos, pos_of};
use crate::path::{FieldPath, Segment};

/// A change to a document, on a path of the document as written.
#[derive(Clone, Debug, PartialEq)]
pub enum Edit {
    /// Sets a field, adding it (and any missing parent mapping) when absent.
    Set {
        /// The field.
        path: FieldPath,
        /// Its new value.
        value: Value,
    },
    /// Removes a field.
    Remove {
        /// The field.
        path: FieldPath,
    },
    /// Renames a mapping key, keeping its value and place.
    Rename {
        /// The key's field.
        path: FieldPath,
        /// The new key.
        to: String,
    },
}

impl Edit {
    /// The fields the edit writes: the one it sets, removes or renames, and
    /// the new name of a renamed one.
    pub fn written(&self) -> Vec<FieldPath> {
        match self {
            Edit::Rename { path, to } => {
                let parent = path.parent().unwrap_or_default();
                let renamed = match path.segments().last() {
                    Some(Segment::Key(_)) => parent.key(to),
                    _ => parent.field(to),
                };
                vec![path.clone(), renamed]
            }
            _ => vec![self.path().clone()],
        }
    }

    /// The field the edit changes.
    pub fn path(&self) -> &FieldPath {
        match self {
            Edit::Set { path, .. } | Edit::Remove { path } | Edit::Rename { path, .. } => path,
        }
    }

    /// Makes the edit to a value, as the document's text will read once it is
    /// made; `false` when it cannot be made (a field to remove or rename is
    /// missing, the path goes through something that is not a mapping).
    pub fn apply_to(&self, value: &mut Value) -> bool {
        let Some((last, parents)) = self.path().segments().split_last() else {
            return false;
        };
        let creates = matches!(self, Edit::Set { .. });
        let mut node = value;
        for segment in parents {
            let child = match (segment, node) {
                (Segment::Field(name) | Segment::Key(name), Value::Object(map)) => {
                    if creates {
                        Some(
                            map.entry(name.to_string())
                                .or_insert_with(|| Value::Object(serde_json::Map::new())),
                        )
                    } else {
                        map.get_mut(&**name)
                    }
                }
                (Segment::Index(i), Value::Array(items)) => items.get_mut(*i),
                _ => None,
            };
            match child {
                Some(child) => node = child,
                None => return false,
            }
        }
        match (self, last, node) {
            (
                Edit::Set { value, .. },
                Segment::Field(name) | Segment::Key(name),
                Value::Object(map),
            ) => {
                map.insert(name.to_string(), value.clone());
                true
            }
            (Edit::Set { value, .. }, Segment::Index(i), Value::Array(items)) => items
                .get_mut(*i)
                .map(|item| *item = value.clone())
                .is_some(),
            (
                Edit::Remove { .. },
                Segment::Field(name) | Segment::Key(name),
                Value::Object(map),
            ) => map.remove(&**name).is_some(),
            (
                Edit::Rename { to, .. },
                Segment::Field(name) | Segment::Key(name),
                Value::Object(map),
            ) => match map.remove(&**name) {
                Some(moved) if !map.contains_key(to) => {
                    map.insert(to.clone(), moved);
                    true
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// The same edit on the object at `prefix` of a document.
    pub fn under(&self, prefix: &FieldPath) -> Edit {
        match self {
            Edit::Set { path, value } => Edit::Set {
                path: prefix.join(path),
                value: value.clone(),
            },
            Edit::Remove { path } => Edit::Remove {
                path: prefix.join(path),
            },
            Edit::Rename { path, to } => Edit::Rename {
                path: prefix.join(path),
                to: to.clone(),
            },
        }
    }
}

/// A change to text: `range` is replaced by `text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextEdit {
    /// The bytes replaced.
    pub range: Range<usize>,
    /// What replaces them.
    pub text: String,
}

/// Why an edit cannot be made to a text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    /// The document is not YAML that can be read.
    #[error("the document cannot be read")]
    Unreadable,
    /// The path goes through something that is not a mapping.
    #[error("`{0}` is not inside a mapping")]
    NotAMapping(String),
    /// The field to remove or rename is not there.
    #[error("`{0}` is not in the document")]
    Missing(String),
    /// A key would be renamed to one its mapping already has.
    #[error("`{0}` is already in the document")]
    Exists(String),
}

/// A node of a document, with where it is.
#[derive(Debug, PartialEq)]
struct Node {
    /// The node's own bytes: for a block scalar from its `|` or `>` to the
    /// end of its last line with content, for a block collection up to its
    /// last child's end.
    span: Range<usize>,
    /// Where its properties (tag, anchor) written before it on its line
    /// start; `span.start` when it has none.
    props: usize,
    kind: Kind,
}

#[derive(Debug, PartialEq)]
enum Kind {
    Scalar,
    /// A literal (`|`) or folded (`>`) scalar.
    BlockScalar,
    Map {
        flow: bool,
        entries: Vec<Entry>,
    },
    Seq {
        flow: bool,
        items: Vec<Node>,
    },
}

#[derive(Debug, PartialEq)]
struct Entry {
    key: String,
    key_span: Range<usize>,
    /// Where the entry starts: its key, or the key's tag or anchor before it
    /// on its line (`!t &a key: v`).
    start: usize,
    /// Column (in bytes from its line's start) of the entry's start.
    indent: usize,
    value: Node,
}

/// The start of the token that ends `before`: after the last space, line
/// break or flow indicator (tags and anchors hold none of them).
fn last_token(before: &str) -> usize {
    before
        .rfind([' ', '\t', '\n', '\r', ',', '[', '{'])
        .map_or(0, |i| i + 1)
}

/// Where the properties (tag, anchor) written before `at` on its line start.
fn props_start(text: &str, at: usize) -> usize {
    let mut start = at;
    loop {
        let before = text[..start].trim_end_matches([' ', '\t']);
        let token = last_token(before);
        if before[token..].starts_with(['!', '&']) {
            start = token;
        } else {
            return start;
        }
    }
}

/// Where an entry whose key starts at `key` starts: before the tag and
/// anchor of the key, and the `?` of a complex key, when they are on its line.
fn entry_start(text: &str, key: usize) -> usize {
    let start = props_start(text, key);
    let before = text[..start].trim_end_matches([' ', '\t']);
    if before.ends_with('?') && last_token(before) == before.len() - 1 {
        before.len() - 1
    } else {
        start
    }
}

/// Where the `|` or `>` of a block scalar whose content starts at `content`
/// is: the first indicator after `from` (the end of what came before it: its
/// key, or the sequence's previous item), past the `:` or `-` before it, its
/// properties and comments. `content` if there is none.
fn block_header(text: &str, from: usize, content: usize) -> usize {
    let bytes = text.as_bytes();
    let mut at = from;
    while at < content {
        match bytes[at] {
            b'|' | b'>' => return at,
            b'#' => at = line_around(text, at).end,
            b'!' | b'&' => {
                at += text[at..content]
                    .find([' ', '\t', '\n', '\r'])
                    .unwrap_or(content - at);
            }
            b' ' | b'\t' | b'\n' | b'\r' | b':' | b'-' | b'?' => at += 1,
            _ => return content,
        }
    }
    content
}

/// The end of a block scalar's header: its indicator with the chomping and
/// indentation indicators after it.
fn header_end(text: &str, header: usize) -> usize {
    let rest = &text[header..];
    if !rest.starts_with(['|', '>']) {
        return header;
    }
    header + 1 + rest[1..].len()
        - rest[1..]
            .trim_start_matches(|c: char| matches!(c, '+' | '-' | '1'..='9'))
            .len()
}

/// Reads a document into its tree of spans: with the quick reader where it
/// reads the document and places its nodes as granit-parser does, else with
/// granit-parser.
fn read_tree(text: &str) -> Result<Node, EditError> {
    quick_tree(text).map_or_else(|| full_tree(text), Ok)
}

/// The tree as the quick reader reads it; `None` where it leaves the
/// document to the full reader, or meets a node that granit-parser places
/// elsewhere than the quick reader (a block scalar at its content, an empty
/// value after it) or that kubectl cannot read (a collection as a key).
fn quick_tree(text: &str) -> Option<Node> {
    // Windows line ends: read with line feeds alone, and placed back.
    if memchr::memchr(b'\r', text.as_bytes()).is_some() {
        let lf = LineFeeds::of(text)?;
        return quick_tree(&lf.text).map(|root| root.placed(&lf));
    }
    let mut tree = QuickTree::new(text);
    quick::read(text, &mut tree).ok()?;
    tree.root
}

/// The places of `paths` and the tree, as the quick reader gives them in
/// one read of `text`: `None` each where it leaves the document to the full
/// reader.
fn quick_placing(text: &str, paths: &[FieldPath]) -> (Option<Vec<Pos>>, Option<Node>) {
    // Windows line ends: read with line feeds alone, and placed back.
    if memchr::memchr(b'\r', text.as_bytes()).is_some() {
        let Some(lf) = LineFeeds::of(text) else {
            return (None, None);
        };
        let (positions, root) = quick_placing(&lf.text, paths);
        let positions =
            positions.map(|positions| positions.into_iter().map(|pos| lf.place(pos)).collect());
        return (positions, root.map(|root| root.placed(&lf)));
    }
    let (positions, tree) = super::locate::quick_locate_along(text, paths, QuickTree::new(text));
    (positions, tree.and_then(|tree| tree.root))
}

impl Node {
    /// The node, read in `lf`'s text with line feeds alone, placed in the
    /// original text.
    fn placed(mut self, lf: &LineFeeds) -> Self {
        self.place(lf);
        self
    }

    fn place(&mut self, lf: &LineFeeds) {
        let at = |offset| lf.original(offset);
        self.span = at(self.span.start)..at(self.span.end);
        self.props = at(self.props);
        match &mut self.kind {
            Kind::Map { entries, .. } => {
                for entry in entries {
                    entry.key_span = at(entry.key_span.start)..at(entry.key_span.end);
                    entry.start = at(entry.start);
                    entry.value.place(lf);
                }
            }
            Kind::Seq { items, .. } => items.iter_mut().for_each(|item| item.place(lf)),
            Kind::Scalar | Kind::BlockScalar => {}
        }
    }
}

/// A collection being read by [`QuickTree`].
enum OpenNode {
    Map {
        flow: bool,
        start: usize,
        entries: Vec<Entry>,
        key: Option<(String, Range<usize>)>,
    },
    Seq {
        flow: bool,
        start: usize,
        /// A block sequence whose `-` are in the column of its mapping's
        /// keys: granit-parser places it at its first item.
        indentless: bool,
        items: Vec<Node>,
    },
}

impl OpenNode {
    /// Adds a finished node: an item, or the value of the key read last;
    /// `None` when a mapping has no key waiting.
    fn add(&mut self, node: Node, text: &str, starts: &LineStarts) -> Option<()> {
        match self {
            OpenNode::Seq { items, .. } => items.push(node),
            OpenNode::Map { entries, key, .. } => {
                let (key, key_span) = key.take()?;
                let start = entry_start(text, key_span.start);
                entries.push(Entry {
                    key,
                    key_span,
                    start,
                    indent: start - starts.start_of(start),
                    value: node,
                });
            }
        }
        Some(())
    }
}

/// A collection's node from `start` to `end`: a flow collection's
/// properties (anchor, tag) come before its bracket.
fn collection(text: &str, flow: bool, span: Range<usize>, kind: Kind) -> Node {
    Node {
        props: if flow {
            props_start(text, span.start)
        } else {
            span.start
        },
        span,
        kind,
    }
}

/// A mapping key as written to a field path: its resolved text, or the
/// scalar as written when it does not resolve to a key (a merge key `<<`).
fn key_name(value: Cow<'_, str>, style: ScalarStyle, tag: Option<&granit_parser::Tag>) -> String {
    scalar::resolve(value.clone(), style, tag)
        .ok()
        .and_then(|s| match s {
            Scalar::Merge => None,
            s => scalar::key_text(s).ok().map(|k| k.into_owned()),
        })
        .unwrap_or_else(|| value.into_owned())
}

struct QuickTree<'t> {
    text: &'t str,
    starts: LineStarts,
    stack: Vec<OpenNode>,
    root: Option<Node>,
}

impl<'t> QuickTree<'t> {
    fn new(text: &'t str) -> Self {
        Self {
            text,
            starts: LineStarts::new(text),
            stack: Vec::new(),
            root: None,
        }
    }

    /// Whether the open collection waits for a key.
    fn expects_key(&self) -> bool {
        matches!(self.stack.last(), Some(OpenNode::Map { key: None, .. }))
    }

    /// Hands a finished node to the open collection (or makes it the root).
    fn add(&mut self, node: Node) -> Result<(), quick::Unsupported> {
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(open) => open
                .add(node, self.text, &self.starts)
                .ok_or(quick::Unsupported)?,
        }
        Ok(())
    }
}

impl<'t> quick::Sink<'t> for QuickTree<'t> {
    fn on_scalar(
        &mut self,
        value: Cow<'t, str>,
        style: ScalarStyle,
        at: Range<usize>,
    ) -> Result<(), quick::Unsupported> {
        if self.expects_key() {
            let name = key_name(value, style, None);
            if let Some(OpenNode::Map { key, .. }) = self.stack.last_mut() {
                *key = Some((name, at));
            }
            return Ok(());
        }
        if at.is_empty() || matches!(style, ScalarStyle::Literal | ScalarStyle::Folded) {
            return Err(quick::Unsupported);
        }
        let node = Node {
            props: props_start(self.text, at.start),
            span: at,
            kind: Kind::Scalar,
        };
        self.add(node)
    }

    fn on_open(&mut self, is_map: bool, at: usize) -> Result<(), quick::Unsupported> {
        if self.expects_key() {
            return Err(quick::Unsupported);
        }
        let flow = matches!(self.text.as_bytes()[at], b'[' | b'{');
        let column = |offset: usize| offset - self.starts.start_of(offset);
        let indentless = !is_map
            && !flow
            && matches!(
                self.stack.last(),
                Some(OpenNode::Map { flow: false, key: Some((_, key)), .. })
                    if column(key.start) == column(at)
            );
        self.stack.push(if is_map {
            OpenNode::Map {
                flow,
                start: at,
                entries: Vec::new(),
                key: None,
            }
        } else {
            OpenNode::Seq {
                flow,
                start: at,
                indentless,
                items: Vec::new(),
            }
        });
        Ok(())
    }

    fn on_close(&mut self, at: usize) -> Result<(), quick::Unsupported> {
        let node = match self.stack.pop().ok_or(quick::Unsupported)? {
            OpenNode::Map {
                flow,
                start,
                entries,
                key: None,
            } => {
                let end = if flow {
                    at
                } else {
                    entries.last().ok_or(quick::Unsupported)?.value.span.end
                };
                collection(self.text, flow, start..end, Kind::Map { flow, entries })
            }
            OpenNode::Seq {
                flow,
                start,
                indentless,
                items,
            } => {
                let end = if flow {
                    at
                } else {
                    items.last().ok_or(quick::Unsupported)?.span.end
                };
                let start = if indentless {
                    items.first().ok_or(quick::Unsupported)?.span.start
                } else {
                    start
                };
                collection(self.text, flow, start..end, Kind::Seq { flow, items })
            }
            OpenNode::Map { key: Some(_), .. } => return Err(quick::Unsupported),
        };
        self.add(node)
    }
}

/// Reads a document into its tree of spans with granit-parser.
fn full_tree(text: &str) -> Result<Node, EditError> {
    let mut stack: Vec<OpenNode> = Vec::new();
    let mut root = None;
    let starts = LineStarts::new(text);
    // Read as kubectl reads it (comments right after a token, long tags).
    let (readable, _) = goyaml::as_kubectl_reads(text);
    // The end of the last event read: what a block scalar's header follows.
    let mut last_end = 0;
    for next in Parser::new_from_str_with_options(&readable, parser_options(&readable)) {
        let (event, span) = next.map_err(|_| EditError::Unreadable)?;
        let at = pos_of(&span);
        let range = at.offset..at.offset + at.len;
        let before = std::mem::replace(&mut last_end, range.end);
        let node = match event {
            Event::MappingStart(style, ..) => {
                stack.push(OpenNode::Map {
                    flow: style == granit_parser::StructureStyle::Flow,
                    start: range.start,
                    entries: Vec::new(),
                    key: None,
                });
                continue;
            }
            Event::SequenceStart(style, ..) => {
                stack.push(OpenNode::Seq {
                    flow: style == granit_parser::StructureStyle::Flow,
                    start: range.start,
                    indentless: false,
                    items: Vec::new(),
                });
                continue;
            }
            Event::MappingEnd => match stack.pop() {
                Some(OpenNode::Map {
                    flow,
                    start,
                    entries,
                    ..
                }) => {
                    let end = if flow {
                        range.end
                    } else {
                        entries.last().map_or(range.start, |e| e.value.span.end)
                    };
                    collection(text, flow, start..end, Kind::Map { flow, entries })
                }
                _ => return Err(EditError::Unreadable),
            },
            Event::SequenceEnd => match stack.pop() {
                Some(OpenNode::Seq {
                    flow, start, items, ..
                }) => {
                    let end = if flow {
                        range.end
                    } else {
                        items.last().map_or(range.start, |i| i.span.end)
                    };
                    collection(text, flow, start..end, Kind::Seq { flow, items })
                }
                _ => return Err(EditError::Unreadable),
            },
            Event::Scalar(value, style, _, tag) => {
                if let Some(OpenNode::Map {
                    key: key @ None, ..
                }) = stack.last_mut()
                {
                    *key = Some((key_name(value, style, tag.as_deref()), range));
                    continue;
                }
                if matches!(style, ScalarStyle::Literal | ScalarStyle::Folded) {
                    // The parser's span starts at the content and runs into the
                    // next line's indentation.
                    let header = block_header(text, before, range.start);
                    let content = text[range.clone()].trim_end_matches([' ', '\t', '\n', '\r']);
                    Node {
                        span: header..(range.start + content.len()).max(header_end(text, header)),
                        props: props_start(text, header),
                        kind: Kind::BlockScalar,
                    }
                } else {
                    Node {
                        props: props_start(text, range.start),
                        span: range,
                        kind: Kind::Scalar,
                    }
                }
            }
            Event::Alias(_) => Node {
                props: range.start,
                span: range,
                kind: Kind::Scalar,
            },
            Event::DocumentEnd | Event::StreamEnd => break,
            _ => continue,
        };
        match stack.last_mut() {
            None => root = Some(node),
            Some(open) => open.add(node, text, &starts).ok_or(EditError::Unreadable)?,
        }
    }
    root.ok_or(EditError::Unreadable)
}

impl Node {
    /// The node at `segments` below this one, with the entry holding it.
    fn get(&self, segment: &Segment) -> Option<&Node> {
        match (&self.kind, segment) {
            (Kind::Map { entries, .. }, Segment::Field(name) | Segment::Key(name)) => entries
                .iter()
                .rev()
                .find(|e| e.key == **name)
                .map(|e| &e.value),
            (Kind::Seq { items, .. }, Segment::Index(i)) => items.get(*i),
            _ => None,
        }
    }

    fn entry(&self, name: &str) -> Option<(usize, &Entry)> {
        match &self.kind {
            Kind::Map { entries, .. } => entries
                .iter()
                .enumerate()
                .rev()
                .find(|(_, e)| e.key == name),
            _ => None,
        }
    }
}

/// How the document writes things.
struct Style<'t> {
    text: &'t str,
    /// The line break the document uses.
    eol: &'static str,
    /// The indentation step of block mappings.
    step: usize,
    /// A JSON document: everything is written as JSON.
    json: bool,
}

impl<'t> Style<'t> {
    fn of(text: &'t str, root: &Node) -> Self {
        let eol = match memchr::memchr2(b'\n', b'\r', text.as_bytes()) {
            Some(i) if text[i..].starts_with("\r\n") => "\r\n",
            Some(i) if text.as_bytes()[i] == b'\r' => "\r",
            _ => "\n",
        };
        Self {
            text,
            eol,
            step: indent_step(root).unwrap_or(2),
            json: is_json(text, root),
        }
    }

    /// The end of the line `offset` is on, after its line break.
    fn line_end(&self, offset: usize) -> usize {
        let end = line_around(self.text, offset).end;
        let rest = &self.text[end..];
        end + if rest.starts_with("\r\n") {
            2
        } else {
            usize::from(rest.starts_with(['\n', '\r']))
        }
    }
}

/// Whether the document is JSON: a flow mapping whose first key is
/// double-quoted (YAML's own flow style leaves keys plain).
fn is_json(text: &str, root: &Node) -> bool {
    match &root.kind {
        Kind::Map {
            flow: true,
            entries,
        } => entries
            .first()
            .is_none_or(|first| text[first.key_span.start..].starts_with('"')),
        _ => false,
    }
}

/// The indentation step of the first nested block mapping found.
fn indent_step(node: &Node) -> Option<usize> {
    let Kind::Map {
        flow: false,
        entries,
    } = &node.kind
    else {
        return None;
    };
    entries.iter().find_map(|e| match &e.value.kind {
        Kind::Map {
            flow: false,
            entries: inner,
        } => inner
            .first()
            .and_then(|i| i.indent.checked_sub(e.indent))
            .filter(|s| *s > 0)
            .or_else(|| indent_step(&e.value)),
        _ => None,
    })
}

/// A scalar written so that kubectl reads it back as `value`: plain when that
/// is unambiguous (inside a flow collection, `,[]{}` end a plain scalar), else
/// double-quoted (JSON's escapes are YAML's).
fn scalar_text(value: &Value, json: bool, in_flow: bool) -> String {
    let Value::String(s) = value else {
        return value.to_string();
    };
    let plain_safe = !json
        && !s.is_empty()
        && s.trim() == s
        && !s.starts_with([
            '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%',
            '@', '`',
        ])
        && !s.contains(": ")
        && !s.contains(" #")
        && !(in_flow && s.contains([',', '[', ']', '{', '}']))
        && !s.ends_with(':')
        && !s
            .chars()
            .any(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}'))
        && matches!(
            scalar::resolve(std::borrow::Cow::Borrowed(s.as_str()), granit_parser::ScalarStyle::Plain, None),
            Ok(Scalar::Str(ref read)) if read == s
        );
    if plain_safe {
        s.clone()
    } else {
        Value::from(s.as_str()).to_string()
    }
}

/// A key as written: plain when it reads back as itself.
fn key_text(key: &str, json: bool, in_flow: bool) -> String {
    scalar_text(&Value::from(key), json, in_flow)
}

/// A value in flow style (JSON, which is YAML too); `in_flow` when the value
/// itself is inside a flow collection.
fn flow_text(value: &Value, json: bool, in_flow: bool) -> String {
    match value {
        Value::Object(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", key_text(k, json, true), flow_text(v, json, true)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(|v| flow_text(v, json, true)).collect();
            format!("[{}]", items.join(", "))
        }
        scalar => scalar_text(scalar, json, in_flow),
    }
}

/// A value as one line of YAML, the way fixes write values in flow style.
pub fn flow_yaml(value: &Value) -> String {
    flow_text(value, false, false)
}

/// `key: value` as lines of a block mapping whose keys are at `indent`.
fn block_entry(key: &str, value: &Value, indent: usize, style: &Style<'_>) -> String {
    let pad = " ".repeat(indent);
    let eol = style.eol;
    let key = key_text(key, false, false);
    match value {
        Value::Object(map) if !map.is_empty() => {
            let inner: String = map
                .iter()
                .map(|(k, v)| block_entry(k, v, indent + style.step, style))
                .collect();
            format!("{pad}{key}:{eol}{inner}")
        }
        Value::Array(items) if !items.is_empty() => {
            // Kubernetes manifests put a list's dashes under its key.
            let inner: String = items
                .iter()
                .map(|item| block_item(item, indent, style))
                .collect();
            format!("{pad}{key}:{eol}{inner}")
        }
        _ => format!("{pad}{key}: {}{eol}", flow_text(value, false, false)),
    }
}

/// `- item` as lines of a block sequence whose dashes are at `indent`.
fn block_item(item: &Value, indent: usize, style: &Style<'_>) -> String {
    let pad = " ".repeat(indent);
    match item {
        Value::Object(map) if !map.is_empty() => {
            // The first entry goes on the dash's line, the others under it.
            let mut lines = String::new();
            for (i, (k, v)) in map.iter().enumerate() {
                let entry = block_entry(k, v, indent + 2, style);
                if i == 0 {
                    lines.push_str(&format!("{pad}- {}", &entry[indent + 2..]));
                } else {
                    lines.push_str(&entry);
                }
            }
            lines
        }
        _ => format!("{pad}- {}{}", flow_text(item, false, false), style.eol),
    }
}

/// The value to write for `rest` of a path below an existing mapping: `value`
/// wrapped in the mappings that are missing.
fn nest(rest: &[Segment], value: &Value) -> Result<(String, Value), EditError> {
    let name = |segment: &Segment| match segment {
        Segment::Field(name) | Segment::Key(name) => Ok(name.to_string()),
        Segment::Index(_) => Err(EditError::NotAMapping(format!("[{segment:?}]"))),
    };
    let (first, tail) = rest.split_first().ok_or(EditError::Unreadable)?;
    let mut inner = value.clone();
    for segment in tail.iter().rev() {
        let mut map = serde_json::Map::new();
        map.insert(name(segment)?, inner);
        inner = Value::Object(map);
    }
    Ok((name(first)?, inner))
}

/// The text edits that make `edits` to a document's `text`. Edits must not
/// overlap (the caller applies overlapping ones in a later round).
pub fn text_edits(text: &str, edits: &[Edit]) -> Result<Vec<TextEdit>, EditError> {
    Editor::new(text).text_edits(edits)
}

/// A document read once, for the edits of many fixes: reading is what costs.
pub struct Editor<'t> {
    read: Result<(Node, Style<'t>), EditError>,
}

/// What one edit does to the text: a change of its own, or entries added to
/// a mapping, which are written together with the others added to it.
enum Planned<'n> {
    Change(TextEdit),
    Add {
        mapping: &'n Node,
        /// How deep the mapping is in the document.
        depth: usize,
        key: String,
        value: Value,
    },
}

/// The entries an edit adds to one mapping.
struct Additions<'n> {
    mapping: &'n Node,
    depth: usize,
    entries: serde_json::Map<String, Value>,
}

impl<'t> Editor<'t> {
    /// Reads `text`.
    pub fn new(text: &'t str) -> Self {
        Self::of(text, read_tree(text))
    }

    /// Reads `text`, and places `paths` in it in the same read: as
    /// [`super::locate`] places them.
    pub fn placing(text: &'t str, paths: &[FieldPath]) -> (Self, Vec<Pos>) {
        let (positions, root) = quick_placing(text, paths);
        (
            Self::of(text, root.map_or_else(|| full_tree(text), Ok)),
            positions.unwrap_or_else(|| super::locate::full_locate(text, paths)),
        )
    }

    fn of(text: &'t str, read: Result<Node, EditError>) -> Self {
        Self {
            read: read.map(|root| {
                let style = Style::of(text, &root);
                (root, style)
            }),
        }
    }

    /// The text edits that make `edits` ([`text_edits`]). Entries added to
    /// one mapping are written as one edit, with the separators between
    /// them; where several mappings end at one place, the inner one's
    /// entries come first.
    pub fn text_edits(&self, edits: &[Edit]) -> Result<Vec<TextEdit>, EditError> {
        let (root, style) = self.read.as_ref().map_err(Clone::clone)?;
        let mut changes = Vec::new();
        let mut additions: Vec<Additions<'_>> = Vec::new();
        for edit in edits {
            match plan(root, style, edit)? {
                Planned::Change(change) => changes.push(change),
                Planned::Add {
                    mapping,
                    depth,
                    key,
                    value,
                } => {
                    let at = match additions
                        .iter()
                        .position(|a| std::ptr::eq(a.mapping, mapping))
                    {
                        Some(at) => at,
                        None => {
                            additions.push(Additions {
                                mapping,
                                depth,
                                entries: serde_json::Map::new(),
                            });
                            additions.len() - 1
                        }
                    };
                    merge(&mut additions[at].entries, key, value);
                }
            }
        }
        additions.sort_by_key(|a| std::cmp::Reverse(a.depth));
        for added in additions {
            changes.push(insert(added.mapping, &added.entries, style));
        }
        Ok(changes)
    }
}

/// Adds `key: value` to `entries`; mappings given for one key are merged.
fn merge(entries: &mut serde_json::Map<String, Value>, key: String, value: Value) {
    match (entries.get_mut(&key), value) {
        (Some(Value::Object(old)), Value::Object(new)) => {
            for (key, value) in new {
                merge(old, key, value);
            }
        }
        (_, value) => {
            entries.insert(key, value);
        }
    }
}

fn plan<'n>(root: &'n Node, style: &Style<'_>, edit: &Edit) -> Result<Planned<'n>, EditError> {
    let segments = edit.path().segments();
    let missing = || EditError::Missing(edit.path().to_string());
    // The deepest node on the path, and how many segments it took.
    let mut node = root;
    let mut depth = 0;
    for segment in segments {
        match node.get(segment) {
            Some(child) => {
                node = child;
                depth += 1;
            }
            None => break,
        }
    }
    let (parent_segments, last) = segments.split_at(segments.len().saturating_sub(1));
    let parent = parent_segments
        .iter()
        .try_fold(root, |n, s| n.get(s))
        .ok_or_else(missing);
    let last_name = match last.first() {
        Some(Segment::Field(name) | Segment::Key(name)) => Some(name.to_string()),
        _ => None,
    };
    let change = match edit {
        Edit::Set { value, .. } if depth == segments.len() => {
            set_existing(node, value, parent?, last_name.as_deref(), style)
        }
        Edit::Set { value, .. } => {
            if !matches!(node.kind, Kind::Map { .. }) {
                return Err(EditError::NotAMapping(edit.path().to_string()));
            }
            let (key, value) = nest(&segments[depth..], value)?;
            return Ok(Planned::Add {
                mapping: node,
                depth,
                key,
                value,
            });
        }
        Edit::Remove { .. } => {
            let name = last_name.ok_or_else(missing)?;
            let parent = parent?;
            let (i, _) = parent.entry(&name).ok_or_else(missing)?;
            remove(parent, i, style)
        }
        Edit::Rename { to, .. } => {
            let name = last_name.ok_or_else(missing)?;
            let parent = parent?;
            let (_, entry) = parent.entry(&name).ok_or_else(missing)?;
            if parent.entry(to).is_some() {
                return Err(EditError::Exists(to.clone()));
            }
            let in_flow = matches!(parent.kind, Kind::Map { flow: true, .. });
            TextEdit {
                range: entry.key_span.clone(),
                text: key_text(to, style.json, in_flow),
            }
        }
    };
    Ok(Planned::Change(change))
}

/// Replaces an existing value. A scalar, or anything in flow style, is
/// replaced in place, with its tag (which would retype the new value) but
/// not its anchor; a block collection's entry is rewritten whole (in block
/// style, unless the value is a scalar or empty).
fn set_existing(
    node: &Node,
    value: &Value,
    parent: &Node,
    name: Option<&str>,
    style: &Style<'_>,
) -> TextEdit {
    let in_flow = matches!(parent.kind, Kind::Map { flow: true, .. }) || style.json;
    // An empty value (`key:` and nothing) has no text of its own.
    let empty = node.span.is_empty();
    let block_collection = matches!(
        node.kind,
        Kind::Map { flow: false, .. } | Kind::Seq { flow: false, .. }
    );
    let block_value = !matches!(value, Value::Object(m) if m.is_empty())
        && !matches!(value, Value::Array(a) if a.is_empty())
        && (value.is_object() || value.is_array());
    match (name, parent.entry(name.unwrap_or_default())) {
        (Some(name), Some((_, entry)))
            if (block_collection || empty && block_value) && !in_flow =>
        {
            // The whole entry, from the key to its value's last line.
            let end = style.line_end(node.span.end.saturating_sub(1).max(entry.key_span.end));
            let text = block_entry(name, value, entry.indent, style);
            TextEdit {
                range: entry.key_span.start..end,
                text: text[entry.indent..].to_owned(),
            }
        }
        (_, Some((_, entry))) if empty => {
            // Written after the key's colon, or with one (`{key}` in flow).
            let after_key = &style.text[entry.key_span.end..];
            let gap = after_key.len() - after_key.trim_start_matches([' ', '\t']).len();
            let value = flow_text(value, style.json, in_flow);
            match after_key[gap..].strip_prefix(':') {
                Some(_) => {
                    let at = entry.key_span.end + gap + 1;
                    TextEdit {
                        range: at..at,
                        text: format!(" {value}"),
                    }
                }
                None => TextEdit {
                    range: entry.key_span.end..entry.key_span.end,
                    text: format!(": {value}"),
                },
            }
        }
        _ => {
            let text = style.text;
            let anchors: String = text[node.props..node.span.start]
                .split_ascii_whitespace()
                .filter(|token| token.starts_with('&'))
                .map(|anchor| format!("{anchor} "))
                .collect();
            // A block scalar's header may carry a comment: it stays.
            let comment = match node.kind {
                Kind::BlockScalar => {
                    let header = header_end(text, node.span.start);
                    let line = &text[header..line_around(text, header).end];
                    line.find('#')
                        .map(|at| format!(" {}", line[at..].trim_end()))
                        .unwrap_or_default()
                }
                _ => String::new(),
            };
            let mut written = flow_text(value, style.json, in_flow);
            // A `#` right after a quoted or flow value is a comment to
            // kubectl; after a plain one it would be part of it.
            if text[node.span.end..].starts_with('#') {
                written.push(' ');
            }
            TextEdit {
                range: node.props..node.span.end,
                text: format!("{anchors}{written}{comment}"),
            }
        }
    }
}

/// Adds `entries` at the end of a mapping.
fn insert(node: &Node, entries: &serde_json::Map<String, Value>, style: &Style<'_>) -> TextEdit {
    let Kind::Map {
        flow,
        entries: existing,
    } = &node.kind
    else {
        unreachable!("entries are only added to mappings")
    };
    if *flow || style.json {
        let added: Vec<String> = entries
            .iter()
            .map(|(key, value)| {
                format!(
                    "{}: {}",
                    key_text(key, style.json, true),
                    flow_text(value, style.json, true)
                )
            })
            .collect();
        let added = added.join(", ");
        return match existing.last() {
            Some(last) => TextEdit {
                range: last.value.span.end..last.value.span.end,
                text: format!(", {added}"),
            },
            // Between the braces of `{}`.
            None => TextEdit {
                range: node.span.start + 1..node.span.start + 1,
                text: added,
            },
        };
    }
    let last = existing
        .last()
        .expect("a block mapping has an entry (`{}` is flow)");
    let end = style.line_end(last.value.span.end.saturating_sub(1).max(last.key_span.end));
    let mut text: String = entries
        .iter()
        .map(|(key, value)| block_entry(key, value, last.indent, style))
        .collect();
    // A last line without a line break gets one first.
    if end == style.text.len() && !style.text.ends_with(['\n', '\r']) {
        text.insert_str(0, style.eol);
    }
    TextEdit {
        range: end..end,
        text,
    }
}

/// Removes entry `i` of a mapping.
fn remove(parent: &Node, i: usize, style: &Style<'_>) -> TextEdit {
    let Kind::Map { flow, entries } = &parent.kind else {
        unreachable!("entries are only found in mappings")
    };
    let entry = &entries[i];
    if *flow || style.json {
        // With the comma before it, or after it for the first entry.
        let range = match (i.checked_sub(1).map(|p| &entries[p]), entries.get(i + 1)) {
            (Some(previous), _) => previous.value.span.end..entry.value.span.end,
            (None, Some(next)) => entry.start..next.start,
            (None, None) => entry.start..entry.value.span.end,
        };
        return TextEdit {
            range,
            text: String::new(),
        };
    }
    let line_start = entry.start - entry.indent;
    let own_line = style.text[line_start..entry.start].trim().is_empty();
    let end = style.line_end(
        entry
            .value
            .span
            .end
            .saturating_sub(1)
            .max(entry.key_span.end),
    );
    match (own_line, entries.get(i + 1)) {
        // The only entry: the mapping stays, empty.
        (true, _) if entries.len() == 1 => TextEdit {
            range: line_start..end,
            text: format!("{}{{}}{}", &style.text[line_start..entry.start], style.eol),
        },
        (true, _) => TextEdit {
            range: line_start..end,
            text: String::new(),
        },
        // The first key of a list item (`- name: x`): the next key moves up.
        (false, Some(next)) => TextEdit {
            range: entry.start..next.start,
            text: String::new(),
        },
        (false, None) => TextEdit {
            range: entry.start..end,
            text: format!("{{}}{}", style.eol),
        },
    }
}

/// `text` with `edits` applied (they must not overlap).
pub fn apply(text: &str, edits: &[TextEdit]) -> String {
    let mut sorted: Vec<&TextEdit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.range.start, e.range.end));
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for edit in sorted {
        out.push_str(&text[at..edit.range.start]);
        out.push_str(&edit.text);
        at = edit.range.end;
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {

    /// Where the quick reader reads a document, its tree is granit-parser's.
    fn quick_tree_is_full_tree(text: &str) -> bool {
        let mut compared = false;
        for chunk in super::super::split_documents(text) {
            // With Windows line ends too.
            for text in [chunk.text.to_owned(), chunk.text.replace('\n', "\r\n")] {
                if let Some(quick) = quick_tree(&text) {
                    assert_eq!(Ok(quick), full_tree(&text), "{text:?}");
                    compared = true;
                }
            }
        }
        compared
    }

    /// One read for places and edits gives what two give: [`locate`]'s
    /// positions of every path and [`read_tree`]'s tree. Whether the quick
    /// reader placed the paths, and whether it read the tree; `None` for a
    /// text that is not one document.
    fn placing_is_locate_and_read_tree(text: &str) -> Option<(bool, bool)> {
        let value = crate::source::compose(text, &|_, _| &ALL).value?;
        let paths = super::super::locate::every_path(&value);
        let (editor, positions) = Editor::placing(text, &paths);
        assert_eq!(positions, super::super::locate(text, &paths), "{text:?}");
        let tree = editor.read.map(|(root, _)| root);
        assert_eq!(tree, read_tree(text), "{text:?}");
        let quickly = super::super::locate::placed_quickly(text, &paths);
        Some((quickly, quick_tree(text).is_some()))
    }

    #[test]
    fn placing_reads_once_for_places_and_edits() {
        // Either reading can leave the document to the full reader while
        // the other goes on: a block scalar, a list at the top.
        for (text, quick) in [
            ("a: 1\nb: [x, {c: d}]\n", (true, true)),
            ("a: 1\r\nb: [x,\r\n  {c: d}]\r\n", (true, true)),
            ("a: |\n  x\nb: 2\n", (true, false)),
            ("- a\n- b: c\n", (false, true)),
            ("a: &x {b: 1}\nc: *x\n", (false, false)),
        ] {
            assert_eq!(
                placing_is_locate_and_read_tree(text),
                Some(quick),
                "{text:?}"
            );
        }
        let mut both = 0;
        for file in crate::testing::manifest_files() {
            let text = std::fs::read_to_string(&file).unwrap();
            for chunk in crate::source::split_documents(&text) {
                both +=
                    usize::from(placing_is_locate_and_read_tree(chunk.text) == Some((true, true)));
            }
        }
        assert!(both > 100, "{both}");
    }

    #[test]
    fn the_quick_tree_is_the_full_one_on_real_manifests() {
        let files = crate::testing::manifest_files();
        let compared = files
            .iter()
            .filter(|file| quick_tree_is_full_tree(&std::fs::read_to_string(file).unwrap()))
            .count();
        assert!(compared * 2 > files.len(), "{compared} of {}", files.len());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(5000))]

        #[test]
        fn the_quick_tree_is_the_full_one(text in super::super::compose::tests::manifest_like()) {
            quick_tree_is_full_tree(&text);
        }

        #[test]
        fn placing_is_locate_and_read_tree_on_any_document(text in super::super::compose::tests::manifest_like()) {
            for chunk in super::super::split_documents(&text) {
                placing_is_locate_and_read_tree(chunk.text);
                placing_is_locate_and_read_tree(&chunk.text.replace('\n', "\r\n"));
            }
        }
    }
    use super::*;
    use crate::source::{ALL, read_document};
    use serde_json::json;

    fn edited(text: &str, edits: &[Edit]) -> String {
        apply(text, &text_edits(text, edits).unwrap())
    }

    fn value_of(text: &str) -> Value {
        read_document(text, &|_, _| &ALL).values.remove(0).0
    }

    fn set(path: &str, value: Value) -> Edit {
        Edit::Set {
            path: FieldPath::fields(path),
            value,
        }
    }

    #[test]
    fn flow_scalars_are_quoted_only_when_flow_syntax_would_end_them() {
        let set = |path: &str, value: Value| Edit::Set {
            path: FieldPath::fields(path),
            value,
        };
        assert_eq!(
            edited(
                "ref: {kind: Deployment}\n",
                &[
                    set("ref.apiVersion", json!("apps/v1")),
                    set("ref.name", json!("a,b"))
                ]
            ),
            "ref: {kind: Deployment, apiVersion: apps/v1, name: \"a,b\"}\n"
        );
        // In block style a comma is plain text.
        assert_eq!(
            edited("name: x\n", &[set("name", json!("a,b"))]),
            "name: a,b\n"
        );
    }

    #[test]
    fn replaces_scalars_in_place() {
        let text = "# keep\nspec:\n  maxReplicas: \"5\"   # five\n  minReplicas: 1\n";
        assert_eq!(
            edited(text, &[set("spec.maxReplicas", json!(5))]),
            "# keep\nspec:\n  maxReplicas: 5   # five\n  minReplicas: 1\n"
        );
        let flow = "spec: {scaleTargetRef: {kind: Deployment, name: web}}\n";
        assert_eq!(
            edited(
                flow,
                &[set("spec.scaleTargetRef.apiVersion", json!("apps/v1"))]
            ),
            "spec: {scaleTargetRef: {kind: Deployment, name: web, apiVersion: apps/v1}}\n"
        );
    }

    /// kubectl reads `'5'#five` as `5` and a comment; a plain `5#five` would
    /// be the text `5#five`.
    #[test]
    fn a_comment_right_after_a_replaced_value_stays_a_comment() {
        let text = "spec:\n  maxReplicas: '5'#five\n  minReplicas: 1\n";
        let out = edited(text, &[set("spec.maxReplicas", json!(5))]);
        assert_eq!(out, "spec:\n  maxReplicas: 5 #five\n  minReplicas: 1\n");
        assert_eq!(value_of(&out)["spec"]["maxReplicas"], json!(5));
    }

    #[test]
    fn adds_fields_and_missing_parents_in_block_style() {
        let text = "spec:\r\n    maxReplicas: 3\r\n    metrics:\r\n    - type: Resource\r\n";
        let out = edited(
            text,
            &[set(
                "spec.behavior.scaleDown",
                json!({"stabilizationWindowSeconds": 300, "policies": [{"type": "Percent", "value": 100}]}),
            )],
        );
        assert_eq!(
            out,
            "spec:\r\n    maxReplicas: 3\r\n    metrics:\r\n    - type: Resource\r\n    behavior:\r\n        scaleDown:\r\n            stabilizationWindowSeconds: 300\r\n            policies:\r\n            - type: Percent\r\n              value: 100\r\n"
        );
        assert_eq!(
            value_of(&out)["spec"]["behavior"]["scaleDown"]["policies"][0]["value"],
            json!(100)
        );
    }

    #[test]
    fn removes_and_renames_keys() {
        let text = "spec:\n  replicas: 3  # gone\n  selector:\n    matchLabels: {app: web}\n  template: {}\n";
        assert_eq!(
            edited(
                text,
                &[Edit::Remove {
                    path: FieldPath::fields("spec.replicas")
                }]
            ),
            "spec:\n  selector:\n    matchLabels: {app: web}\n  template: {}\n"
        );
        assert_eq!(
            edited(
                text,
                &[Edit::Remove {
                    path: FieldPath::fields("spec.selector")
                }]
            ),
            "spec:\n  replicas: 3  # gone\n  template: {}\n"
        );
        let items = "m:\n- name: a\n  value: 1\n";
        assert_eq!(
            edited(
                items,
                &[Edit::Remove {
                    path: FieldPath::fields("m").index(0).field("name")
                }]
            ),
            "m:\n- value: 1\n"
        );
        let flow = "s: {a: 1, b: 2, c: 3}\n";
        for (field, expected) in [
            ("a", "s: {b: 2, c: 3}\n"),
            ("b", "s: {a: 1, c: 3}\n"),
            ("c", "s: {a: 1, b: 2}\n"),
        ] {
            assert_eq!(
                edited(
                    flow,
                    &[Edit::Remove {
                        path: FieldPath::fields("s").field(field)
                    }]
                ),
                expected
            );
        }
        assert_eq!(
            edited(
                "a:\n  stabilizationWindowSecond: 60\n",
                &[Edit::Rename {
                    path: FieldPath::fields("a.stabilizationWindowSecond"),
                    to: "stabilizationWindowSeconds".into()
                }]
            ),
            "a:\n  stabilizationWindowSeconds: 60\n"
        );
    }

    #[test]
    fn a_tag_or_anchor_before_a_key_starts_its_entry() {
        let text = "spec:\n  a: 1\n  !t &x  b: 2\n";
        assert_eq!(
            edited(text, &[set("spec.c", json!(3))]),
            "spec:\n  a: 1\n  !t &x  b: 2\n  c: 3\n"
        );
        let remove = Edit::Remove {
            path: FieldPath::fields("spec.b"),
        };
        assert_eq!(edited(text, &[remove]), "spec:\n  a: 1\n");
        let nested = "spec:\n  !t b:\n      d: 4\n";
        assert_eq!(
            edited(nested, &[set("spec.b", json!({"e": 5}))]),
            "spec:\n  !t b:\n    e: 5\n"
        );
    }

    #[test]
    fn an_empty_value_is_set_after_its_colon() {
        for eol in ["\n", "\r\n", "\r"] {
            let text = "a:\n  b:\n  # note\n  c: 1\n".replace('\n', eol);
            assert_eq!(
                edited(&text, &[set("a.b", json!({"x": 1}))]),
                "a:\n  b:\n    x: 1\n  # note\n  c: 1\n".replace('\n', eol),
                "{eol:?}"
            );
        }
    }

    #[test]
    fn an_empty_scalar_value_is_set_after_its_colon() {
        assert_eq!(
            edited("a:\n  b:\n", &[set("a.b", json!(3))]),
            "a:\n  b: 3\n"
        );
        assert_eq!(
            edited("a: {b: , c: 1}\n", &[set("a.b", json!(3))]),
            "a: {b: 3 , c: 1}\n"
        );
        assert_eq!(
            edited("a: {b, c: 1}\n", &[set("a.b", json!(3))]),
            "a: {b: 3, c: 1}\n"
        );
    }

    #[test]
    fn entries_added_to_one_mapping_are_written_together() {
        let added = [
            set("a.b.x", json!(1)),
            set("a.b.p", json!(2)),
            set("a.c.z", json!(3)),
            set("a.c.w", json!(4)),
        ];
        for (text, expected) in [
            ("a: {}\n", "a: {b: {x: 1, p: 2}, c: {z: 3, w: 4}}\n"),
            ("a: { }\n", "a: {b: {x: 1, p: 2}, c: {z: 3, w: 4} }\n"),
            ("a: {\n}\n", "a: {b: {x: 1, p: 2}, c: {z: 3, w: 4}\n}\n"),
            ("a: {b: {}}\n", "a: {b: {x: 1, p: 2}, c: {z: 3, w: 4}}\n"),
            (
                "a:\n  b: {}\n  v: 0\n",
                "a:\n  b: {x: 1, p: 2}\n  v: 0\n  c:\n    z: 3\n    w: 4\n",
            ),
        ] {
            assert_eq!(edited(text, &added), expected, "{text:?}");
        }
        // Under a missing parent, in block style: one parent, inner entries first.
        assert_eq!(
            edited(
                "a:\n  v: 0\n",
                &[set("a.b.x", json!(1)), set("a.b.p", json!(2))]
            ),
            "a:\n  v: 0\n  b:\n    x: 1\n    p: 2\n"
        );
    }

    #[test]
    fn a_block_scalar_is_replaced_from_its_header_to_its_last_line() {
        for (text, expected) in [
            ("a: >-\n  5\nb: 1\n", "a: 7\nb: 1\n"),
            ("a: |\n  5\n\n# c\nb: 1\n", "a: 7\n\n# c\nb: 1\n"),
            ("a: !!str &x >- # five\n  5\n", "a: &x 7 # five\n"),
            ("- |-\n  5\n- 6\n", "- 7\n- 6\n"),
        ] {
            let path = if text.starts_with('-') {
                FieldPath::root().index(0)
            } else {
                FieldPath::fields("a")
            };
            let edit = Edit::Set {
                path,
                value: json!(7),
            };
            assert_eq!(edited(text, &[edit]), expected, "{text:?}");
        }
        // A tag would retype the value: it goes; an anchor stays.
        assert_eq!(
            edited("a: !!str &n \"5\"\n", &[set("a", json!(5))]),
            "a: &n 5\n"
        );
    }

    #[test]
    fn a_complex_key_starts_at_its_question_mark() {
        let text = "spec:\n  ? replicas\n  : 3\n  ? min\n  : 1\n";
        let remove = Edit::Remove {
            path: FieldPath::fields("spec.replicas"),
        };
        assert_eq!(edited(text, &[remove]), "spec:\n  ? min\n  : 1\n");
        let rename = Edit::Rename {
            path: FieldPath::fields("spec.min"),
            to: "minReplicas".into(),
        };
        assert_eq!(
            edited(text, &[rename, set("spec.max", json!(5))]),
            "spec:\n  ? replicas\n  : 3\n  ? minReplicas\n  : 1\n  max: 5\n"
        );
    }

    #[test]
    fn block_collections_are_rewritten_with_their_key() {
        let text = "a:\n  s:\n  - x: 1\n    y: 2\n  m:\n    k: v\n";
        assert_eq!(
            edited(text, &[set("a.s", json!("one"))]),
            "a:\n  s: one\n  m:\n    k: v\n"
        );
        assert_eq!(
            edited(text, &[set("a.m", json!([]))]),
            "a:\n  s:\n  - x: 1\n    y: 2\n  m: []\n"
        );
        // The only entry of a mapping leaves it empty, not null.
        let remove = Edit::Remove {
            path: FieldPath::fields("a.m.k"),
        };
        assert_eq!(
            edited(text, &[remove]),
            "a:\n  s:\n  - x: 1\n    y: 2\n  m:\n    {}\n"
        );
    }

    #[test]
    fn a_key_is_never_renamed_onto_another() {
        let rename = Edit::Rename {
            path: FieldPath::fields("a.polices"),
            to: "policies".into(),
        };
        assert_eq!(
            text_edits("a:\n  polices: []\n  policies: []\n", &[rename]),
            Err(EditError::Exists("policies".into()))
        );
    }

    #[test]
    fn writes_json_in_json_documents() {
        let text = "{\n  \"spec\": {\n    \"maxReplicas\": \"3\"\n  }\n}\n";
        let out = edited(
            text,
            &[
                set("spec.maxReplicas", json!(3)),
                set("spec.minReplicas", json!(1)),
            ],
        );
        assert_eq!(
            out,
            "{\n  \"spec\": {\n    \"maxReplicas\": 3, \"minReplicas\": 1\n  }\n}\n"
        );
        serde_json::from_str::<Value>(&out).unwrap();
    }

    #[test]
    fn quotes_what_would_read_back_differently() {
        for (value, text) in [
            ("yes", "\"yes\""),
            ("010", "\"010\""),
            ("a: b", "\"a: b\""),
            ("web", "web"),
            ("", "\"\""),
        ] {
            assert_eq!(scalar_text(&json!(value), false, false), text);
        }
    }
}
