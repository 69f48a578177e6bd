//! One document's events → its JSON value, as kubectl would send it, as a
//! [`Tree`] of the text (or a `serde_json` value: [`compose`]).
//!
//! A single pass over the parser's events checks the whole document (syntax,
//! repeated keys, anchors, merge keys, values kubectl cannot convert) while
//! building only the fields a [`Keep`] selects. The pass keeps an explicit
//! stack, so hostile nesting cannot overflow the thread's stack; aliases are
//! expanded under a node budget, so alias bombs end quickly.

use std::borrow::Cow;
use std::cell::Cell;
use std::collections::HashSet;

use granit_parser::{Event, Parser, ScalarStyle, ScanError, Tag};
use serde_json::Value;

use super::keep::{ALL, Keep};
use super::lines::LineFeeds;
use super::quick::{self, Unsupported};
use super::scalar::{self, Scalar};
use super::tree::{Entries, Tree, unique};
use super::{Pos, Problem, ProblemKind, goyaml, lines, pos_of};
use crate::path::{FieldPath, Json};

/// Deepest nesting read, counting the levels that aliases add.
pub const MAX_DEPTH: usize = 100;
/// Most nodes that aliases may add to one document.
pub const MAX_ALIAS_NODES: usize = 1_000_000;

/// Chooses what to build of an object from its `apiVersion` and `kind`.
pub type Choose<'c> = &'c dyn Fn(&str, &str) -> &'static Keep;

/// The outcome of reading a document: its value as a serde_json [`Value`],
/// or as a [`Tree`] of its text ([`compose_tree`]).
#[derive(Debug, Default, PartialEq)]
pub struct Composed<V = Value> {
    /// The value, pruned; `None` when the document cannot be read (a problem
    /// says why) or holds nothing.
    pub value: Option<V>,
    /// What is wrong with it: at most one problem that stops reading, after
    /// any number of repeated keys.
    pub problems: Vec<Problem>,
    /// When reading stopped: what was read of the root up to there (its
    /// `apiVersion`, `kind` and name, often), to tell what the document was.
    pub partial: Option<V>,
}

impl<V> Composed<V> {
    /// The same outcome with `convert` made of its values.
    fn map<W>(self, convert: impl Fn(V) -> W) -> Composed<W> {
        Composed {
            value: self.value.map(&convert),
            problems: self.problems,
            partial: self.partial.map(&convert),
        }
    }
}

/// Parser settings for a document. kubectl reads a stream that starts with `{`
/// as JSON, where keys of any length are fine; YAML limits implicit keys to
/// 1024 characters, as kubectl's YAML parser does.
pub(crate) fn parser_options(text: &str) -> granit_parser::Options {
    let mut options = granit_parser::options! {
        flow_nesting_limit: MAX_DEPTH + 1,
        block_nesting_limit: MAX_DEPTH + 1,
        emit_comments: false,
    };
    if text.trim_start().starts_with('{') {
        options.simple_key_max_lookahead = usize::MAX;
    }
    options
}

/// Reads one document (a [`super::Chunk`]'s text), building what `choose`
/// keeps of it.
pub fn compose(text: &str, choose: Choose<'_>) -> Composed {
    compose_tree(text, choose).map(Tree::into_value)
}

/// [`compose`], building a [`Tree`] of the text rather than a [`Value`].
pub fn compose_tree<'t>(text: &'t str, choose: Choose<'_>) -> Composed<Tree<'t>> {
    quick_compose(text, choose).unwrap_or_else(|| full_compose(text, choose))
}

/// The document read by the quick reader ([`quick`]), when it can read it
/// and nothing is wrong with it; otherwise the full reader reads it, and
/// says what is wrong.
fn quick_compose<'t>(text: &'t str, choose: Choose<'_>) -> Option<Composed<Tree<'t>>> {
    // Windows line ends: a CR LF is one line break to both YAML versions,
    // as a line feed alone is, in scalars too. The document is read with
    // line feeds alone, and what is built is copied out of that text.
    if memchr::memchr(b'\r', text.as_bytes()).is_some() {
        let lf = LineFeeds::of(text)?;
        return quick_compose(&lf.text, choose).map(|read| read.map(Tree::into_owned));
    }
    let mut composer = Composer::new(choose, None);
    quick::read(text, &mut composer).ok()?;
    let value = composer.root.take();
    // Without repeated keys (a problem) the identity the keep was chosen by
    // is the document's, unless a merge key at the root may have changed it.
    let last = match composer.chosen {
        Some(chosen) if !composer.merged_at_root => chosen,
        _ => value.as_ref().map_or(&ALL, |v| keep_of(v, choose)),
    };
    let rechosen = composer
        .chosen
        .is_some_and(|chosen| !std::ptr::eq(chosen, last));
    if !composer.problems.is_empty() || rechosen {
        return None;
    }
    // Without merge keys at the root, the entries read after the choice
    // were built as kept.
    let value = match composer.chosen {
        Some(chosen) if !composer.merged_at_root => {
            value.map(|v| chosen.prune_front(v, composer.built_before_choice))
        }
        _ => value.map(|v| last.prune_tree(v)),
    };
    Some(Composed {
        value,
        problems: Vec::new(),
        partial: None,
    })
}

/// Reads a document with granit-parser, where go-yaml v2's scanner lets it
/// (see [`goyaml`]).
fn full_compose<'t>(text: &'t str, choose: Choose<'_>) -> Composed<Tree<'t>> {
    let (readable, stop) = goyaml::as_kubectl_reads(text);
    // Where kubectl's YAML library stops with an error.
    let stop = stop.map(|stopped| {
        let offset = stopped.at;
        let (line, column) = lines::positions(text, &[offset])[0];
        let line_start = text[..offset].rfind(['\n', '\r']).map_or(0, |i| i + 1);
        let indents = text[line_start..offset]
            .bytes()
            .all(|b| b == b' ' || b == b'\t');
        let message = if !text[offset..].starts_with('\t') {
            stopped.message.to_owned()
        } else if indents {
            "a tab indents this line: YAML indents with spaces only".to_owned()
        } else {
            format!(
                "a tab where kubectl's YAML reader wants a space ({})",
                stopped.message
            )
        };
        let problem = Problem {
            kind: ProblemKind::Syntax,
            message,
            path: FieldPath::root(),
            pos: Pos {
                line,
                column,
                offset,
                len: 1,
            },
        };
        (stopped.token, problem)
    });
    match readable {
        Cow::Borrowed(text) => compose_readable(text, choose, stop),
        // Text changed for granit-parser: what it reads is not the
        // document's, and is copied out of it.
        Cow::Owned(text) => compose_readable(&text, choose, stop).map(Tree::into_owned),
    }
}

/// [`full_compose`] of the text as granit-parser must read it, with where
/// go-yaml stops.
fn compose_readable<'t>(
    text: &'t str,
    choose: Choose<'_>,
    stop: Option<(usize, Problem)>,
) -> Composed<Tree<'t>> {
    let mut composer = Composer::new(choose, stop);
    let outcome = composer.run(text);
    let mut value = match outcome {
        Ok(value) => value,
        Err(problem) => {
            let partial = composer.unwind();
            let mut problems = std::mem::take(&mut composer.problems);
            problems.push(problem);
            return Composed {
                value: None,
                problems,
                partial,
            };
        }
    };
    let (problems, chosen) = (std::mem::take(&mut composer.problems), composer.chosen);
    // The choice made on the way may differ from the final `apiVersion` and
    // `kind` (a repeated key): then build the document whole and cut it again.
    let last = value.as_ref().map_or(&ALL, |v| keep_of(v, choose));
    if chosen.is_some_and(|chosen| !std::ptr::eq(chosen, last)) {
        let mut whole = Composer::new(&|_, _| &ALL, None);
        value = whole.run(text).unwrap_or_default();
    }
    Composed {
        value: value.map(|v| last.prune_tree(v)),
        problems,
        partial: None,
    }
}

fn keep_of(value: &Tree<'_>, choose: Choose<'_>) -> &'static Keep {
    match (
        value.member("apiVersion").and_then(Json::text),
        value.member("kind").and_then(Json::text),
    ) {
        (Some(api_version), Some(kind)) => choose(api_version, kind),
        _ => &ALL,
    }
}

/// A completed anchored node, for its aliases.
struct Anchored<'a> {
    value: Tree<'a>,
    nodes: usize,
    height: usize,
}

/// The keys of the open mappings, for repeated keys: one stack for all of
/// them (a mapping's keys sit above its parent's), so that most mappings cost
/// no allocation; a mapping with many keys moves its own to a set.
struct Keys<'a> {
    stack: Vec<Cow<'a, str>>,
}

/// Beyond this many keys, a mapping looks them up in a set.
const FEW_KEYS: usize = 16;

impl<'a> Keys<'a> {
    /// Adds a key of the top mapping (whose keys start at `start`); `false`
    /// when it was there already.
    fn insert(
        &mut self,
        start: usize,
        many: &mut Option<HashSet<Cow<'a, str>>>,
        key: Cow<'a, str>,
    ) -> bool {
        if let Some(set) = many {
            return set.insert(key);
        }
        if self.stack[start..].contains(&key) {
            return false;
        }
        self.stack.push(key);
        if self.stack.len() - start > FEW_KEYS {
            *many = Some(self.stack.drain(start..).collect());
        }
        true
    }
}

/// Where a node sits in its parent.
enum Step<'a> {
    Key(Cow<'a, str>),
    Index(usize),
}

/// What a mapping waits for.
enum Pending<'a> {
    Key,
    Value(Cow<'a, str>),
    Merge,
}

/// An open mapping or sequence.
struct Frame<'a> {
    is_map: bool,
    /// What is built of it; `None`: only checked.
    keep: Option<&'static Keep>,
    /// What its parent keeps of it (differs from `keep` for anchored nodes,
    /// which are built whole for their aliases).
    kept_by_parent: Option<&'static Keep>,
    /// Whether it is built (`keep` is set, or it is an anchored node).
    builds: bool,
    /// Where its entries (a mapping's) or items (a sequence's) start on the
    /// composer's stacks of them.
    built_start: usize,
    /// Where its keys start on the composer's key stack.
    keys_start: usize,
    /// Its keys, once it has many.
    many_keys: Option<HashSet<Cow<'a, str>>>,
    /// Whether a key was given twice (a repeated key, or one a merge key
    /// added): a mapping holds each key once.
    repeats: bool,
    pending: Pending<'a>,
    /// Items so far (sequences).
    length: usize,
    /// Where it sits in its parent, for paths.
    segment: Option<Step<'a>>,
    anchor: usize,
    nodes: usize,
    height: usize,
}

/// A finished node on its way to its parent.
struct Node<'a> {
    value: Option<Tree<'a>>,
    nodes: usize,
    height: usize,
}

struct Composer<'a, 'c> {
    choose: Choose<'c>,
    /// Where go-yaml v2 stops reading (see [`goyaml`]), and the start of the
    /// token it stops in: no event from there on counts.
    stop: Option<(usize, Problem)>,
    frames: Vec<Frame<'a>>,
    keys: Keys<'a>,
    /// The entries of the open mappings that are built, and the items of the
    /// open sequences, each above its parent's: a node's are gathered first
    /// and become its map or vector when it ends, made at their size.
    entries: Entries<'a>,
    items: Vec<Tree<'a>>,
    anchors: Vec<Option<Anchored<'a>>>,
    alias_nodes: usize,
    problems: Vec<Problem>,
    /// The keep chosen from the root's `apiVersion` and `kind`, once both were read.
    chosen: Option<&'static Keep>,
    /// Whether a merge key added entries to the root (its identity among them, maybe).
    merged_at_root: bool,
    /// How many entries the root had when the keep was chosen: built whole.
    built_before_choice: usize,
    /// Where the root's `apiVersion` and `kind` are in `entries`, until the
    /// keep is chosen (the root's values are all built until then).
    api_version: Option<usize>,
    kind: Option<usize>,
    root: Option<Tree<'a>>,
}

fn syntax_error(text: &str, error: &ScanError) -> Problem {
    let marker = error.marker();
    let mut pos = Pos {
        line: marker.line(),
        column: marker.col() + 1,
        offset: marker.byte_offset().unwrap_or_default(),
        len: 1,
    };
    let message = match error.kind() {
        granit_parser::ErrorKind::TabInBlockIndentation
        | granit_parser::ErrorKind::TabInIndentation => {
            // The scanner stops where the indentation ends: point at the tab.
            if let Some(tab) = tab_in_indentation(text, pos.offset) {
                pos.column -= pos.offset - tab;
                pos.offset = tab;
            }
            "a tab indents this line: YAML indents with spaces only".to_owned()
        }
        granit_parser::ErrorKind::RecursionLimitExceeded => {
            format!("nested more than {MAX_DEPTH} levels deep")
        }
        granit_parser::ErrorKind::UnknownAnchor => {
            "an alias (`*name`) refers to an anchor that is not defined before it in this document"
                .to_owned()
        }
        kind => kind.to_string(),
    };
    Problem {
        kind: ProblemKind::Syntax,
        message,
        path: FieldPath::root(),
        pos,
    }
}

/// The offset of the first tab in the blanks that start the line of `offset`
/// and reach up to it.
fn tab_in_indentation(text: &str, offset: usize) -> Option<usize> {
    let before = text.get(..offset)?;
    let start = before.rfind(['\n', '\r']).map_or(0, |i| i + 1);
    let indentation = &before[start..];
    if indentation.bytes().all(|b| b == b' ' || b == b'\t') {
        indentation.find('\t').map(|i| start + i)
    } else {
        None
    }
}

/// The stacks of a composer: its open nodes, their keys, and the entries
/// and items of those built (empty, between documents: nothing is borrowed
/// from a text then).
#[derive(Default)]
struct Room {
    frames: Vec<Frame<'static>>,
    keys: Vec<Cow<'static, str>>,
    entries: Entries<'static>,
    items: Vec<Tree<'static>>,
}

thread_local! {
    /// The room of the last composer of this thread for its stacks, for the
    /// next: every document opens nodes and most build some, and growing
    /// the stacks anew for each costs more than reading the document.
    static ROOM: Cell<Room> = const {
        Cell::new(Room {
            frames: Vec::new(),
            keys: Vec::new(),
            entries: Vec::new(),
            items: Vec::new(),
        })
    };
}

/// The most frames, keys, entries or items whose room is kept for the next
/// document.
const ROOM_KEPT: usize = 256;

/// `stack`, emptied, as a stack of another lifetime, keeping its room:
/// empty, it borrows nothing, and is collected in place.
fn emptied<T, U>(mut stack: Vec<T>) -> Vec<U> {
    stack.clear();
    stack.into_iter().map(|_| unreachable!()).collect()
}

impl Drop for Composer<'_, '_> {
    fn drop(&mut self) {
        let frames = std::mem::take(&mut self.frames);
        let keys = std::mem::take(&mut self.keys.stack);
        let entries = std::mem::take(&mut self.entries);
        let items = std::mem::take(&mut self.items);
        let capacities = [
            frames.capacity(),
            keys.capacity(),
            entries.capacity(),
            items.capacity(),
        ];
        if capacities.iter().all(|&c| c <= ROOM_KEPT) {
            ROOM.set(Room {
                frames: emptied(frames),
                keys: emptied(keys),
                entries: emptied(entries),
                items: emptied(items),
            });
        }
    }
}

impl<'a, 'c> Composer<'a, 'c> {
    fn new(choose: Choose<'c>, stop: Option<(usize, Problem)>) -> Self {
        let Room {
            frames,
            keys,
            entries,
            items,
        } = ROOM.take();
        Self {
            choose,
            stop,
            frames: emptied(frames),
            keys: Keys {
                stack: emptied(keys),
            },
            entries: emptied(entries),
            items: emptied(items),
            anchors: Vec::new(),
            alias_nodes: 0,
            problems: Vec::new(),
            chosen: None,
            merged_at_root: false,
            built_before_choice: 0,
            api_version: None,
            kind: None,
            root: None,
        }
    }

    fn run(&mut self, text: &'a str) -> Result<Option<Tree<'a>>, Problem> {
        let mut parser = Parser::new_from_str_with_options(text, parser_options(text));
        loop {
            let (event, span) = match parser.next_event() {
                Some(Ok(next)) => next,
                Some(Err(error)) => return Err(self.first_error(syntax_error(text, &error))),
                None => return self.finish(),
            };
            let at = pos_of(&span);
            if let Some((_, stop)) = self.stop.take_if(|(_, stop)| at.offset >= stop.pos.offset) {
                return Err(stop);
            }
            match event {
                // kubectl reads the first document only: what follows `...` is not read.
                Event::DocumentEnd if text[at.offset..].starts_with("...") => {
                    return Ok(self.root.take());
                }
                Event::DocumentEnd | Event::StreamEnd => return self.finish(),
                Event::Scalar(value, style, anchor, tag) => {
                    self.scalar(value, style, anchor, tag.as_deref(), at)?;
                }
                Event::Alias(id) => self.alias(id, at)?,
                Event::MappingStart(_, anchor, _) => self.start(true, anchor, at)?,
                Event::SequenceStart(_, anchor, _) => self.start(false, anchor, at)?,
                Event::MappingEnd | Event::SequenceEnd => self.end(at)?,
                _ => {}
            }
        }
    }

    fn scalar(
        &mut self,
        value: Cow<'a, str>,
        style: ScalarStyle,
        anchor: usize,
        tag: Option<&Tag>,
        at: Pos,
    ) -> Result<(), Problem> {
        if self.expects_key() {
            let key = scalar::resolve(value, style, tag)
                .and_then(|s| match s {
                    Scalar::Merge => Ok(None),
                    s => scalar::key_text(s).map(Some),
                })
                .map_err(|message| self.conversion(message, at))?;
            if anchor != 0 {
                self.record_anchor(anchor, key.clone().map(Tree::String), 1, 0);
            }
            self.accept_key(key, at);
            return Ok(());
        }
        let build = anchor != 0 || self.slot_keep().is_some();
        let value = if build {
            let resolved = scalar::resolve(value, style, tag)
                .and_then(scalar::to_tree)
                .map_err(|message| self.conversion(message, at))?;
            if anchor != 0 {
                self.record_anchor(anchor, Some(resolved.clone()), 1, 0);
            }
            Some(resolved)
        } else {
            if let Err(message) = scalar::check(&value, style, tag) {
                return Err(self.conversion(message, at));
            }
            None
        };
        self.deliver(
            Node {
                value,
                nodes: 1,
                height: 0,
            },
            at,
        )
    }

    fn alias(&mut self, id: usize, at: Pos) -> Result<(), Problem> {
        let Some(Some(anchored)) = self.anchors.get(id) else {
            return Err(self.conversion(
                "an alias refers to the node that contains it (anchor value contains itself)"
                    .to_owned(),
                at,
            ));
        };
        let (nodes, height) = (anchored.nodes, anchored.height);
        self.alias_nodes += nodes;
        if self.alias_nodes > MAX_ALIAS_NODES {
            return Err(self.conversion(
                format!("aliases expand to more than {MAX_ALIAS_NODES} nodes (an alias bomb?)"),
                at,
            ));
        }
        if self.frames.len() + height > MAX_DEPTH {
            return Err(self.too_deep(at));
        }
        let value = anchored.value.clone();
        if self.expects_key() {
            let key = alias_key(value).map_err(|message| self.conversion(message, at))?;
            self.accept_key(Some(key), at);
            return Ok(());
        }
        self.deliver(
            Node {
                value: Some(value),
                nodes,
                height,
            },
            at,
        )
    }

    fn start(&mut self, is_map: bool, anchor: usize, at: Pos) -> Result<(), Problem> {
        if self.expects_key() {
            return Err(self.conversion(
                "a mapping key is itself a mapping or a list, which kubectl cannot convert to JSON (invalid map key)"
                    .to_owned(),
                at,
            ));
        }
        if self.frames.len() >= MAX_DEPTH {
            return Err(self.too_deep(at));
        }
        self.open(is_map, anchor);
        Ok(())
    }

    fn end(&mut self, at: Pos) -> Result<(), Problem> {
        let frame = self.frames.pop().expect("the parser balances collections");
        self.keys.stack.truncate(frame.keys_start);
        let value = self.built(&frame);
        let nodes = frame.nodes + 1;
        let height = frame.height + 1;
        let value = if frame.anchor != 0 {
            self.record_anchor(frame.anchor, value.clone(), nodes, height);
            value
                .zip(frame.kept_by_parent)
                .map(|(v, keep)| keep.prune_tree(v))
        } else {
            value
        };
        self.deliver(
            Node {
                value,
                nodes,
                height,
            },
            at,
        )
    }

    /// granit-parser's error, unless go-yaml stops in a token that starts
    /// there or before: then kubectl's error is go-yaml's.
    fn first_error(&mut self, error: Problem) -> Problem {
        match self.stop.take() {
            Some((token, stop)) if token <= error.pos.offset => stop,
            _ => error,
        }
    }

    /// The document's value, unless go-yaml stopped in it.
    fn finish(&mut self) -> Result<Option<Tree<'a>>, Problem> {
        match self.stop.take() {
            Some((_, stop)) => Err(stop),
            None => Ok(self.root.take()),
        }
    }

    /// Closes the open nodes after a problem, keeping what was built of them.
    fn unwind(&mut self) -> Option<Tree<'a>> {
        while let Some(frame) = self.frames.pop() {
            let value = self.built(&frame);
            let Some(parent) = self.frames.last_mut() else {
                return value;
            };
            match (std::mem::replace(&mut parent.pending, Pending::Key), value) {
                (Pending::Value(key), Some(value)) if parent.builds && parent.is_map => {
                    self.entries.push((key, value));
                }
                (Pending::Key, Some(value)) if parent.builds && !parent.is_map => {
                    self.items.push(value);
                }
                _ => {}
            }
        }
        self.root.take()
    }

    /// The value of a node that ended, from its entries or items; `None`
    /// when it is not built.
    // Asked at the end of every node, most not built: inlined, the building
    // not.
    #[inline]
    fn built(&mut self, frame: &Frame<'_>) -> Option<Tree<'a>> {
        frame.builds.then(|| self.build(frame))
    }

    /// The value of a node that ended and is built.
    fn build(&mut self, frame: &Frame<'_>) -> Tree<'a> {
        // Split off: copied at once, into a vector of their size.
        if frame.is_map {
            let entries = self.entries.split_off(frame.built_start);
            Tree::Object(if frame.repeats {
                unique(entries)
            } else {
                entries
            })
        } else {
            Tree::Array(self.items.split_off(frame.built_start))
        }
    }

    fn expects_key(&self) -> bool {
        matches!(self.frames.last(), Some(f) if f.is_map && matches!(f.pending, Pending::Key))
    }

    /// What the open node's parent keeps of the next node; `None`: dropped.
    // Asked for every node: inlined, whatever the partition into codegen
    // units (out of line, it costs some 2 % of a run).
    #[inline]
    fn slot_keep(&self) -> Option<&'static Keep> {
        let Some(frame) = self.frames.last() else {
            return Some(&ALL);
        };
        // Merge values are built whatever is kept, to merge and to check them.
        if matches!(frame.pending, Pending::Merge) {
            return Some(&ALL);
        }
        let keep = frame.keep?;
        match &frame.pending {
            Pending::Value(key) => keep.field(key),
            Pending::Key | Pending::Merge => Some(keep.item()),
        }
    }

    fn open(&mut self, is_map: bool, anchor: usize) {
        let kept_by_parent = self.slot_keep();
        // Anchored nodes are built whole: their aliases may be kept anywhere.
        let keep = if anchor != 0 {
            Some(&ALL)
        } else {
            kept_by_parent
        };
        let segment = self.frames.last().map(|parent| match &parent.pending {
            Pending::Value(key) => Step::Key(key.clone()),
            Pending::Merge => Step::Key(Cow::Borrowed("<<")),
            Pending::Key => Step::Index(parent.length),
        });
        self.frames.push(Frame {
            is_map,
            keep,
            kept_by_parent,
            builds: keep.is_some(),
            built_start: if is_map {
                self.entries.len()
            } else {
                self.items.len()
            },
            keys_start: self.keys.stack.len(),
            many_keys: None,
            repeats: false,
            pending: Pending::Key,
            length: 0,
            segment,
            anchor,
            nodes: 0,
            height: 0,
        });
    }

    fn accept_key(&mut self, key: Option<Cow<'a, str>>, at: Pos) {
        let frame = self.frames.last_mut().expect("a key has a mapping");
        let Some(key) = key else {
            frame.pending = Pending::Merge;
            return;
        };
        let repeated = !self
            .keys
            .insert(frame.keys_start, &mut frame.many_keys, key.clone());
        frame.pending = Pending::Value(key.clone());
        frame.repeats |= repeated;
        if repeated {
            let path = self.path().field(&key);
            self.problems.push(Problem {
                kind: ProblemKind::DuplicateKey,
                message: format!(
                    "key `{}` is repeated: only its last value counts",
                    crate::quote::shown(&key)
                ),
                path,
                pos: at,
            });
        }
    }

    /// Hands a finished node to its parent (or makes it the document's value).
    fn deliver(&mut self, node: Node<'a>, at: Pos) -> Result<(), Problem> {
        let depth = self.frames.len();
        let Some(frame) = self.frames.last_mut() else {
            self.root = node.value;
            return Ok(());
        };
        frame.nodes += node.nodes;
        frame.height = frame.height.max(node.height);
        match std::mem::replace(&mut frame.pending, Pending::Key) {
            Pending::Key => {
                frame.length += 1;
                if let (true, Some(value)) = (frame.builds, node.value) {
                    self.items.push(value);
                }
            }
            Pending::Value(key) => {
                let frame = self.frames.last().expect("checked above");
                if let (true, Some(value)) = (frame.builds, node.value) {
                    self.entries.push((key, value));
                    if depth == 1 && self.chosen.is_none() {
                        self.note_identity();
                    }
                }
            }
            Pending::Merge => {
                self.merged_at_root |= depth == 1;
                frame.repeats = true;
                let merged = node.value.expect("merge values are built");
                let frame = self.frames.last().expect("checked above");
                merge(frame, merged, &mut self.entries).map_err(|message| Problem {
                    kind: ProblemKind::Conversion,
                    message,
                    path: FieldPath::root(),
                    pos: at,
                })?;
            }
        }
        Ok(())
    }

    /// Chooses what to build of the root once its `apiVersion` and `kind`
    /// are known, the root's entry just built among them.
    fn note_identity(&mut self) {
        let last = self.entries.len() - 1;
        match self.entries[last].0.as_ref() {
            "apiVersion" => self.api_version = Some(last),
            "kind" => self.kind = Some(last),
            _ => return,
        }
        let text = |at: Option<usize>| at.and_then(|at| self.entries[at].1.text());
        if let (Some(api_version), Some(kind)) = (text(self.api_version), text(self.kind)) {
            let keep = (self.choose)(api_version, kind);
            self.chosen = Some(keep);
            let root = &mut self.frames[0];
            self.built_before_choice = self.entries.len() - root.built_start;
            if root.anchor == 0 {
                root.keep = Some(keep);
            }
        }
    }

    /// Records an anchored node (`anchor` is not 0) for its aliases.
    fn record_anchor(
        &mut self,
        anchor: usize,
        value: Option<Tree<'a>>,
        nodes: usize,
        height: usize,
    ) {
        if self.anchors.len() <= anchor {
            self.anchors.resize_with(anchor + 1, || None);
        }
        self.anchors[anchor] = value.map(|value| Anchored {
            value,
            nodes,
            height,
        });
    }

    /// The path of the open node, for a problem's report.
    fn path(&self) -> FieldPath {
        let mut path = FieldPath::root();
        for segment in self.frames.iter().filter_map(|f| f.segment.as_ref()) {
            path = match segment {
                Step::Index(i) => path.index(*i),
                Step::Key(name) => path.field(name),
            };
        }
        path
    }

    fn conversion(&self, message: String, pos: Pos) -> Problem {
        Problem {
            kind: ProblemKind::Conversion,
            message,
            path: self.path(),
            pos,
        }
    }

    fn too_deep(&self, pos: Pos) -> Problem {
        self.conversion(format!("nested more than {MAX_DEPTH} levels deep"), pos)
    }
}

/// The quick reader's events; a problem sends the document to the full
/// reader, which finds it again with its position.
impl<'a> quick::Sink<'a> for Composer<'a, '_> {
    fn on_scalar(
        &mut self,
        value: Cow<'a, str>,
        style: ScalarStyle,
        at: std::ops::Range<usize>,
    ) -> Result<(), Unsupported> {
        self.scalar(value, style, 0, None, offset(at.start))
            .map_err(|_| Unsupported)
    }

    /// A key's value, and a value that is built; the quick reader has no
    /// anchors and no tags, and a value not built is only checked, which a
    /// block scalar always passes (it is a string).
    fn wants_value(&self) -> bool {
        self.expects_key() || self.slot_keep().is_some()
    }

    fn on_open(&mut self, is_map: bool, at: usize) -> Result<(), Unsupported> {
        self.start(is_map, 0, offset(at)).map_err(|_| Unsupported)
    }

    fn on_close(&mut self, at: usize) -> Result<(), Unsupported> {
        self.end(offset(at)).map_err(|_| Unsupported)
    }
}

fn offset(at: usize) -> Pos {
    Pos {
        offset: at,
        ..Pos::default()
    }
}

/// A merge key's value applied to a mapping as go-yaml v2 applies it: entries
/// overwrite what is there; in a list of mappings, earlier ones win.
fn merge<'a>(frame: &Frame<'_>, merged: Tree<'a>, entries: &mut Entries<'a>) -> Result<(), String> {
    const NEEDS_MAP: &str = "a merge key (`<<`) needs a mapping or a list of mappings as its value";
    let sources = match merged {
        Tree::Object(map) => vec![map],
        Tree::Array(items) => items
            .into_iter()
            .rev()
            .map(|item| match item {
                Tree::Object(map) => Ok(map),
                _ => Err(NEEDS_MAP.to_owned()),
            })
            .collect::<Result<_, _>>()?,
        _ => return Err(NEEDS_MAP.to_owned()),
    };
    // A mapping is built when it is kept (merge keys are in mappings only).
    let Some(keep) = frame.keep else {
        return Ok(());
    };
    for source in sources {
        for (key, value) in source {
            if let Some(field) = keep.field(&key) {
                entries.push((key, field.prune_tree(value)));
            }
        }
    }
    Ok(())
}

/// An aliased node used as a mapping key.
fn alias_key(value: Tree<'_>) -> Result<Cow<'_, str>, String> {
    let scalar = match value {
        Tree::String(s) => Scalar::Str(s),
        Tree::Bool(b) => Scalar::Bool(b),
        Tree::Null => Scalar::Null,
        Tree::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Scalar::Int(i),
            (None, Some(u), _) => Scalar::Uint(u),
            (_, _, f) => Scalar::Float(f.unwrap_or_default()),
        },
        Tree::Array(_) | Tree::Object(_) => {
            return Err("a mapping key is an alias of a mapping or a list, which kubectl cannot convert to JSON (invalid map key)".to_owned());
        }
    };
    scalar::key_text(scalar)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use serde_json::json;

    fn whole(text: &str) -> Composed {
        compose(text, &|_, _| &ALL)
    }

    fn value(text: &str) -> Value {
        let composed = whole(text);
        assert!(composed.problems.is_empty(), "{:?}", composed.problems);
        composed.value.unwrap()
    }

    fn problem(text: &str) -> Problem {
        let mut composed = whole(text);
        assert!(composed.value.is_none(), "{text}");
        composed.problems.pop().unwrap()
    }

    #[test]
    fn builds_values_as_kubectl_sends_them() {
        assert_eq!(
            value("a: 010\nb: '010'\nc: [yes, \"on\", 1.0]\nd: {e: ~}\n1: x\ny: n\n"),
            json!({"a": 8, "b": "010", "c": [true, "on", 1], "d": {"e": null}, "1": "x", "true": false})
        );
        assert_eq!(
            value("{\"a\": 1, \"b\": [1.5, \"x\"]}"),
            json!({"a": 1, "b": [1.5, "x"]})
        );
        assert_eq!(value("- a\n- b\n"), json!(["a", "b"]));
        assert_eq!(whole("# nothing\n").value, None);
    }

    #[test]
    fn merges_and_aliases_like_go_yaml_v2() {
        assert_eq!(
            value("base: &b {x: 1, w: 2}\nm:\n  x: 0\n  <<: *b\n  z: *b\n"),
            json!({"base": {"x": 1, "w": 2}, "m": {"x": 1, "w": 2, "z": {"x": 1, "w": 2}}})
        );
        assert_eq!(
            value("m:\n  <<: [{a: 1}, {a: 2, b: 2}]\n  b: 3\n"),
            json!({"m": {"a": 1, "b": 3}})
        );
        assert_eq!(
            value("k: &k key\n*k : v\n"),
            json!({"k": "key", "key": "v"})
        );
        assert!(problem("m:\n  <<: 3\n").message.contains("merge key"));
        assert!(problem("a: &a [*a]\n").message.contains("contains itself"));
    }

    #[test]
    fn reports_repeated_keys_and_keeps_the_last() {
        let composed = whole("a: 1\nb:\n  c: 1\n  c: 2\na: 3\n");
        assert_eq!(composed.value, Some(json!({"a": 3, "b": {"c": 2}})));
        let found: Vec<(String, usize, usize)> = composed
            .problems
            .iter()
            .map(|p| (p.path.to_string(), p.pos.line, p.pos.column))
            .collect();
        assert_eq!(found, [("b.c".to_owned(), 4, 3), ("a".to_owned(), 5, 1)]);
        assert!(
            composed
                .problems
                .iter()
                .all(|p| p.kind == ProblemKind::DuplicateKey)
        );
    }

    #[test]
    fn builds_only_what_is_kept_but_checks_everything() {
        static KEEP: Keep = Keep::Fields(&[
            ("apiVersion", Keep::All),
            ("kind", Keep::All),
            ("spec", Keep::Fields(&[("replicas", Keep::All)])),
        ]);
        let choose = |_: &str, kind: &str| if kind == "Deployment" { &KEEP } else { &ALL };
        let text = "apiVersion: apps/v1\nkind: Deployment\nspec:\n  replicas: 2\n  template: {a: 1, a: 2}\nstatus: {}\n";
        let composed = compose(text, &choose);
        assert_eq!(
            composed.value,
            Some(json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 2}}))
        );
        assert_eq!(composed.problems.len(), 1);
        assert_eq!(composed.problems[0].path.to_string(), "spec.template.a");
        let broken = compose(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nstatus: {a: .inf}\n",
            &|_, _| &ALL,
        );
        assert_eq!(broken.value, None);
        assert_eq!(broken.partial.unwrap()["metadata"]["name"], "web");
        assert!(broken.problems[0].message.contains("+Inf"));
        // A kind read late still chooses: fields before it are cut afterwards.
        let late = compose(
            "spec: {replicas: 1, paused: true}\nkind: Deployment\napiVersion: apps/v1\n",
            &choose,
        );
        assert_eq!(
            late.value,
            Some(json!({"spec": {"replicas": 1}, "kind": "Deployment", "apiVersion": "apps/v1"}))
        );
        // A repeated `kind` that changes the choice rebuilds the document.
        let changed = compose(
            "apiVersion: v1\nkind: Deployment\nspec: {replicas: 1, paused: true}\nkind: Other\n",
            &choose,
        );
        assert_eq!(
            changed.value,
            Some(
                json!({"apiVersion": "v1", "kind": "Other", "spec": {"replicas": 1, "paused": true}})
            )
        );
        // So does a merge key at the root that changes the `kind`.
        let merged = compose(
            "apiVersion: v1\nkind: Deployment\n<<: {kind: Other}\nspec: {replicas: 1, paused: true}\n",
            &choose,
        );
        assert_eq!(
            merged.value,
            Some(
                json!({"apiVersion": "v1", "kind": "Other", "spec": {"replicas": 1, "paused": true}})
            )
        );
    }

    #[test]
    fn reports_syntax_errors_at_their_position() {
        let text = "---\nname: é\na: [1, 2\n";
        let error = problem(text);
        assert_eq!((error.pos.line, error.pos.column), (3, 4));
        assert_eq!(&text[error.pos.offset..error.pos.offset + 1], "[");
        assert_eq!(error.message, "unclosed bracket '['");
        let bom = problem("metadata: \u{feff}\n  name: x\n");
        assert_eq!((bom.pos.line, bom.pos.column, bom.pos.offset), (1, 11, 10));
        let cr = problem("a: 1\rb: [\r");
        assert_eq!(cr.pos.line, 2);
    }

    #[test]
    fn a_tab_in_indentation_is_reported_at_the_tab() {
        for text in ["metadata:\n\tname: x\n", "a:\r\tb: 1\n"] {
            let error = problem(text);
            assert_eq!(&text[error.pos.offset..=error.pos.offset], "\t", "{text:?}");
            let line_start = text[..error.pos.offset].rfind(['\n', '\r']).unwrap() + 1;
            assert_eq!(
                error.pos.column,
                error.pos.offset - line_start + 1,
                "{text:?}"
            );
            assert!(error.message.contains("spaces only"), "{}", error.message);
        }
    }

    #[test]
    fn refuses_what_kubectl_cannot_convert() {
        assert!(problem("? [a]\n: 1\n").message.contains("invalid map key"));
        assert!(problem("~: 1\n").message.contains("null"));
        assert!(
            problem("{{ .Values.x }}: 1\n")
                .message
                .contains("invalid map key")
        );
        assert!(problem("a: !!int abc\n").message.contains("cannot decode"));
    }

    #[test]
    fn stops_alias_bombs_and_deep_nesting() {
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
        for i in 0..9u8 {
            let (prev, next) = ((b'a' + i) as char, (b'b' + i) as char);
            bomb.push_str(&format!("{next}: &{next} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
        }
        assert!(problem(&bomb).message.contains("alias bomb"));
        assert!(
            problem(&("[".repeat(10_000) + &"]".repeat(10_000)))
                .message
                .contains("nest")
        );
        let block: String = (0..300)
            .map(|i| format!("{}k:\n", "  ".repeat(i)))
            .collect();
        assert!(whole(&block).value.is_none());
        let near_limit = "[".repeat(95) + &"]".repeat(95);
        assert!(whole(&near_limit).value.is_some());
        // Aliases cannot nest deeper than the text does.
        let mut chain = String::from("a0: &a0 [[[[[[[[[[x]]]]]]]]]]\n");
        for i in 1..20 {
            chain.push_str(&format!("a{i}: &a{i} [[[[[[[[[[*a{}]]]]]]]]]]\n", i - 1));
        }
        assert!(problem(&chain).message.contains("nested more than"));
    }

    /// The quick reader's value, or `None` when it leaves the document to
    /// the full reader; when it reads one, the full reader agrees, and
    /// places its fields alike.
    fn quick_agrees(text: &str) -> Option<Value> {
        let choose = &|_: &str, _: &str| &ALL;
        // With Windows line ends too: read quickly as often, as the full
        // reader reads them.
        if text.contains('\n') && !text.contains('\r') {
            let crlf = text.replace('\n', "\r\n");
            assert_eq!(
                quick_agrees(&crlf).is_some(),
                quick_compose(text, choose).is_some(),
                "{crlf:?}"
            );
        }
        let quick = quick_compose(text, choose)?.map(Tree::into_value);
        let full = full_compose(text, choose).map(Tree::into_value);
        assert_eq!(quick, full, "{text:?}");
        // And finds fields where the full reader finds them.
        if let Some(value) = &quick.value {
            super::super::locate::quick_places_as_full(text, value);
        }
        quick.value
    }

    #[test]
    fn the_quick_reader_cuts_what_it_built_before_the_choice() {
        static KEEP: Keep = Keep::Fields(&[
            ("kind", Keep::All),
            ("metadata", Keep::Fields(&[("name", Keep::All)])),
            ("spec", Keep::Fields(&[("replicas", Keep::All)])),
        ]);
        let choose = |_: &str, kind: &str| if kind == "Deployment" { &KEEP } else { &ALL };
        for text in [
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a, labels: {x: y}}\nspec: {replicas: 1, paused: true}\n",
            "metadata: {name: a, labels: {x: y}}\nkind: Deployment\nspec: {replicas: 1, paused: true}\napiVersion: apps/v1\n",
            "spec: {replicas: 1, paused: true}\napiVersion: apps/v1\nmetadata:\n  name: a\n  uid: u\nkind: Deployment\nstatus: {}\n",
        ] {
            let quick = quick_compose(text, &choose)
                .expect("read quickly")
                .map(Tree::into_value);
            assert_eq!(quick.value, Some(KEEP.prune(value(text))), "{text:?}");
            let full = full_compose(text, &choose).map(Tree::into_value);
            assert_eq!(quick, full, "{text:?}");
        }
    }

    #[test]
    fn the_quick_reader_reads_manifests_as_the_full_reader_does() {
        let documents = [
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x # c\n  labels: {a: b, 'c': \"d\"}\ndata:\n  a: |\n    line\n\n      more\n    last\n  b: >-\n    folded\n    text\n\n    para\n",
            "---\n# c\nspec:\n  containers:\n  - name: a\n    args: [\"-x\", -y, '1']\n    env:\n    -   name: A\n        value: '010'\n  - - nested\n    - 2\n  -\n  - |-\n    x\n",
            "{\"a\": 1, \"b\": [1.5, \"x\\u00e9\\n\", true, null], \"c\": {}}",
            " {\"kind\":\"A\",\n  \"x\": [\n    1,\n    2\n  ]\n }\n",
            "a:\nb: ~\nc: yes\nd: 0x1F\ne: -x\nf: \"q\\\"uote\" # c\ng: 'it''s'\nh: http://x:80/#frag\n",
            "list:\n- a\n- b\nkey: 1\n",
            "- a\n- b: c\n  d: e\n- [x]\n",
            "plain\n",
            "a: |\n  x\n  # not a comment\nb: 1\n",
            "a: [b, {c: d}]   # c\n",
            "é: ü\n",
            "a: |\n\n  x\nb: >-\n\n\n  y\n  z\n",
            "a: 'long\n  folded  \n\n  text'\nb: \"x\\\n  y\"\nc: {\"k\": 1,\n  }\n",
            "a: 1\r\nb: |\r\n  x\r\n\r\n  y\r\nc: 'q\r\n  r'\r\n",
            "message: the HPA was able to\n  go on  \n\n\n  and on\nb: 1\n",
            "- a\n  b\n-   c\n   d\n- - e\n    f\n",
            "a:\n  b: one\n    two # c\n\n  c: x-y\n   z\n",
            "multi\nline\n",
            "a: multi\n  - line &x `y` [z] *w\n",
            "a: |+\n  x\n\n",
            "a: |2\n   x\n",
            "a:\n  b: |2-\n        x\n      y\n\n  c: |+1\n   z\n\n\n# c\n",
        ];
        for text in documents {
            assert!(quick_agrees(text).is_some(), "not read quickly: {text:?}");
        }
    }

    #[test]
    fn the_quick_reader_leaves_the_rest_to_the_full_reader() {
        let documents = [
            "a: &x 1\nb: *x\n",
            "a: !!str 1\n",
            "a:\tb\n",
            "a: 1\rb: 2\n",
            "a: 1\r\n\rb: 2\r\n",
            "a: |\r\n  x\r\r\n",
            "a: multi\n  line: x\n",
            "a: multi\n  # c\n  line\n",
            "a: \"multi\nline\"\n",
            "? a\n: b\n",
            "%YAML 1.1\n---\na: 1\n",
            "--- a: 1\n",
            "a: 1\n...\n",
            "a: 'x'#c\n",
            "a: [a?b]\n",
            "a: b: c\n",
            "a: 1\na: 2\n",
            "a: .inf\n",
            "a: \"\\/\"\n",
            "a: \u{2028}\n",
            "[a]: b\n",
            "a: 1\n b: 2\n",
            "a:\n  - x\n  y: 1\n",
        ];
        for text in documents {
            assert_eq!(quick_agrees(text), None, "read quickly: {text:?}");
        }
    }

    /// Documents made of lines that manifests have, and of the lines where
    /// YAML readers differ.
    /// Documents made of lines that manifests (and broken ones) are made of.
    pub(in crate::source) fn manifest_like() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let key = prop::sample::select(vec![
            "a",
            "b",
            "c d",
            "'k'",
            "\"k\"",
            "1",
            "y",
            "<<",
            "-k",
            "k#x",
            "é",
            "\"a\\tb\"",
        ]);
        let value = prop::sample::select(vec![
            "",
            "x",
            "'y'",
            "\"z\\n\"",
            "010",
            "yes",
            "~",
            "[a, b]",
            "{a: 1, b: [c]}",
            "|",
            "|-",
            ">",
            ">-",
            "a: b",
            "x # c",
            "'it''s'",
            "\"\\u00e9\"",
            "http://x:80/y",
            "[",
            "{\"a\":1}",
            "- x",
            "&a x",
            "*a",
            "!t x",
            "1e3",
            ".inf",
            "0x1f",
            "-1",
            "{a: b,",
            "c]",
            "#c",
            "--- x",
            "[a,\n b]",
            "|\n  text\n\n  more",
            ">-\n   fold\n   ed",
            "[a, b,]",
            "{a: 1, }",
            "'q\n  uo\n\n ted'",
            "\"d\\\n  q\"",
            "\"e\n---\n\"",
            "'x\n'",
            "\"y\\\n\n z\"",
            "x\n  y",
            "x y  \n   z\n\n   w",
            "x\n# c\n  y",
            "x\n  - y",
            "x\n  y: z",
            "x\n   y #c",
            "x\n\n",
            "-x\n  -y",
            "x\n  &a *b !c",
            "x\n  `d` %e @f",
            "x\n  ? g\n  | h",
            "x\n  > i\n  'j' \"k\"",
            "x\n  {l: m}, [n]",
            "x\n  :o\n  p:q",
            "x\n  ---\n  ...",
            "x\n---\n",
            "|+\n  x\n\n",
            "|2\n    x\n   y\n",
            "|-1\n  x\n\n   y",
            ">+2\n    x\n\n",
            "|0\n x",
            "|+-\n x",
            "|22\n x",
            "|2\n x",
            "|+\n\n  x\n \n",
        ]);
        let line = (
            0..5usize,
            prop::sample::select(vec!["", "- ", "- - ", "-"]),
            prop::option::of(key),
            value,
        )
            .prop_map(|(indent, dash, key, value)| {
                let key = key.map(|k| format!("{k}: ")).unwrap_or_default();
                format!("{}{dash}{key}{value}", " ".repeat(indent * 2))
            });
        prop::collection::vec(line, 1..8).prop_map(|lines| lines.join("\n") + "\n")
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(10000))]

        /// Whatever the quick reader reads, it reads as the full reader does.
        #[test]
        fn the_quick_reader_agrees_with_the_full_reader(text in manifest_like()) {
            quick_agrees(&text);
        }
    }

    /// Every document of the real-world corpus and the examples: the quick
    /// reader reads as the full reader does, and reads most of them.
    #[test]
    fn the_quick_reader_reads_most_real_documents() {
        let (mut documents, mut quick) = (0, 0);
        for file in crate::testing::manifest_files() {
            let text = std::fs::read_to_string(&file).unwrap();
            for chunk in super::super::split_documents(&text) {
                documents += 1;
                quick += usize::from(quick_agrees(chunk.text).is_some());
                // And mutants of it: whatever the quick reader reads of them,
                // it reads as the full reader does.
                for (i, insert) in [
                    "\n", " ", "- ", ": ", "'", "\"", " #", "|", ">-", "  ", "\n\n", ",", "\r",
                    "\r\n",
                ]
                .iter()
                .enumerate()
                {
                    let mut at = (chunk.text.len() * (i + 1) * 7 / 85).min(chunk.text.len());
                    while !chunk.text.is_char_boundary(at) {
                        at -= 1;
                    }
                    quick_agrees(&format!(
                        "{}{insert}{}",
                        &chunk.text[..at],
                        &chunk.text[at..]
                    ));
                }
            }
        }
        assert!(documents > 100, "{documents}");
        assert!(
            quick * 10 >= documents * 9,
            "{quick} of {documents} read quickly"
        );
    }
}
