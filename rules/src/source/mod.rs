//! YAML text → the JSON objects kubectl would send, with positions.
//!
//! - [`split_documents`] cuts a stream at its `---` / `...` lines, so documents
//!   are read one by one (and in parallel);
//! - [`read_document`] reads one document in a single pass over the parser's
//!   events ([`compose`]): every document is checked whole (syntax, repeated
//!   keys, what kubectl cannot convert), and only the fields a [`Keep`]
//!   selects are built, as a [`Tree`] of the text ([`read_tree`]), made
//!   `serde_json` values for the callers that want them;
//! - [`locate`] finds fields again when a finding needs their position.
//!
//! Most documents are read by a quick reader for the YAML manifests are
//! written in (`quick`); the rest, and every document with a problem, by
//! granit-parser after go-yaml v2's scanner (`goyaml`), which find the
//! problem and its position.
//!
//! Lines end at LF, CRLF or a lone CR everywhere ([`lines`]). Scalars resolve
//! as kubectl's YAML library resolves them (go-yaml v2, YAML 1.1: `010` is 8,
//! `yes` is true).

use serde_json::Value;

mod compose;
mod edit;
mod goyaml;
mod keep;
pub mod lines;
mod locate;
mod quick;
mod scalar;
mod split;
mod template;
mod tree;

pub use compose::{Choose, Composed, MAX_ALIAS_NODES, MAX_DEPTH, compose, compose_tree};
pub use edit::{Edit, EditError, Editor, TextEdit, apply, flow_yaml, text_edits};
pub use keep::{ALL, Keep};
pub use locate::locate;
pub use quick::count_events as quick_event_count;
pub use split::{Chunk, split_documents};
pub use template::find_action;
pub use tree::Tree;

use crate::path::{FieldPath, Json};

/// A position in a document: 1-based line and column (in characters), and the
/// byte range of the node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pos {
    /// 1-based line, relative to the text that was read.
    pub line: usize,
    /// 1-based column in characters.
    pub column: usize,
    /// Byte offset of the node's start.
    pub offset: usize,
    /// Byte length of the node.
    pub len: usize,
}

pub(crate) fn pos_of(span: &granit_parser::Span) -> Pos {
    let start = span.start.byte_offset().unwrap_or_default();
    Pos {
        line: span.start.line(),
        column: span.start.col() + 1,
        offset: start,
        len: span
            .end
            .byte_offset()
            .unwrap_or(start)
            .saturating_sub(start),
    }
}

/// What kind of problem a document has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProblemKind {
    /// Not YAML: the parser stopped.
    Syntax,
    /// YAML that kubectl cannot turn into JSON (`.inf`, a null or mapping key,
    /// an alias bomb, too deep, a bad merge or tag); reading stopped.
    Conversion,
    /// A mapping key given twice: only the last value counts.
    DuplicateKey,
    /// A Helm template action where YAML would read syntax
    /// ([`Document::template`]): the file is a template, not YAML. Front ends
    /// report it once for the whole file.
    Template,
}

/// A problem found while reading a document.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    /// What kind.
    pub kind: ProblemKind,
    /// What is wrong, in a sentence.
    pub message: String,
    /// The field, when there is one.
    pub path: FieldPath,
    /// Where, relative to the document.
    pub pos: Pos,
}

/// A document read into JSON values (serde_json's, or [`Tree`]s of its text:
/// [`read_tree`]): the document itself, or the items of a `List` (with
/// their path, `items[i]`).
#[derive(Debug, Default)]
pub struct Document<V = Value> {
    /// The values and their paths in the document.
    pub values: Vec<(V, FieldPath)>,
    /// What is wrong with it.
    pub problems: Vec<Problem>,
    /// Where a Helm template action makes it unreadable, if one does.
    pub template: Option<usize>,
    /// When it cannot be read: what was read of it before the problem.
    pub partial: Option<V>,
}

/// Reads one document, building what `choose` keeps of each object, and
/// splitting `*List` kinds (which `choose` must keep whole) into their items.
pub fn read_document(text: &str, choose: Choose<'_>) -> Document {
    let document = read_tree(text, choose);
    Document {
        values: document
            .values
            .into_iter()
            .map(|(tree, path)| (tree.into_value(), path))
            .collect(),
        problems: document.problems,
        template: document.template,
        partial: document.partial.map(Tree::into_value),
    }
}

/// [`read_document`], building [`Tree`]s of the text rather than
/// [`Value`]s.
pub fn read_tree<'t>(text: &'t str, choose: Choose<'_>) -> Document<Tree<'t>> {
    let Read {
        objects,
        problems,
        template,
        partial,
    } = read_objects(text, choose);
    Document {
        values: objects.collect(),
        problems,
        template,
        partial,
    }
}

/// [`read_tree`], its objects handed out one by one.
pub(crate) struct Read<'t> {
    /// The values and their paths in the document ([`Document::values`]).
    pub objects: Objects<'t>,
    /// What is wrong with it.
    pub problems: Vec<Problem>,
    /// Where a Helm template action makes it unreadable, if one does.
    pub template: Option<usize>,
    /// When it cannot be read: what was read of it before the problem.
    pub partial: Option<Tree<'t>>,
}

/// [`read_tree`], without gathering the objects into a vector: most
/// documents hold one, which a vector would cost an allocation. Of a
/// document that holds one, `choose` is asked last by that object's final
/// `apiVersion` and `kind`.
pub(crate) fn read_objects<'t>(text: &'t str, choose: Choose<'_>) -> Read<'t> {
    let Composed {
        value,
        problems,
        partial,
    } = compose_tree(text, choose);
    let stopped_at = problems
        .iter()
        .find(|p| p.kind != ProblemKind::DuplicateKey)
        .map(|p| p.pos.offset);
    let template = stopped_at.and_then(|stop| find_action(text).filter(|&action| action <= stop));
    Read {
        objects: Objects::of(value, choose),
        problems,
        template,
        partial,
    }
}

/// A document's objects: its value, or the items of a `List`, each cut to
/// what `choose` keeps of it (with its path, `items[i]`).
pub(crate) enum Objects<'t> {
    /// The document's value, until it is handed out.
    One(Option<Tree<'t>>),
    /// A list's items, and how many were handed out.
    Items(std::vec::IntoIter<Tree<'t>>, usize),
}

impl<'t> Objects<'t> {
    fn of(value: Option<Tree<'t>>, choose: Choose<'_>) -> Self {
        let is_list = value
            .as_ref()
            .and_then(|v| v.member("kind"))
            .and_then(Json::text)
            .is_some_and(|kind| kind.ends_with("List"));
        let Some(mut value) = value else {
            return Self::One(None);
        };
        let items = match &mut value {
            Tree::Object(entries) if is_list => entries
                .iter()
                .position(|(key, value)| key == "items" && matches!(value, Tree::Array(_)))
                .map(|at| entries.remove(at).1),
            _ => None,
        };
        let Some(Tree::Array(items)) = items else {
            return Self::One(Some(value));
        };
        let items: Vec<Tree<'t>> = items
            .into_iter()
            .map(|item| {
                let keep = match (
                    item.member("apiVersion").and_then(Json::text),
                    item.member("kind").and_then(Json::text),
                ) {
                    (Some(api_version), Some(kind)) => choose(api_version, kind),
                    _ => &ALL,
                };
                keep.prune_tree(item)
            })
            .collect();
        Self::Items(items.into_iter(), 0)
    }

    /// The next object, without handing it out.
    pub(crate) fn first(&self) -> Option<&Tree<'t>> {
        match self {
            Self::One(value) => value.as_ref(),
            Self::Items(items, _) => items.as_slice().first(),
        }
    }
}

impl<'t> Iterator for Objects<'t> {
    type Item = (Tree<'t>, FieldPath);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Self::One(value) => value.take().map(|value| (value, FieldPath::root())),
            Self::Items(items, handed) => {
                let item = items.next()?;
                *handed += 1;
                Some((item, FieldPath::fields("items").index(*handed - 1)))
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = match self {
            Self::One(value) => usize::from(value.is_some()),
            Self::Items(items, _) => items.len(),
        };
        (left, Some(left))
    }
}

impl ExactSizeIterator for Objects<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn whole(text: &str) -> Document {
        read_document(text, &|_, _| &ALL)
    }

    #[test]
    fn reads_lists_into_items() {
        let document = whole("apiVersion: v1\nkind: List\nitems:\n- {kind: A}\n- {kind: B}\n");
        let paths: Vec<String> = document.values.iter().map(|(_, p)| p.to_string()).collect();
        assert_eq!(paths, ["items[0]", "items[1]"]);
        assert!(document.problems.is_empty());
        // Counted before they are handed out, as a scan reserves room for them.
        let text = "apiVersion: v1\nkind: List\nitems:\n- {kind: A}\n- {kind: B}\n- {kind: C}\n";
        let mut objects = read_objects(text, &|_, _| &ALL).objects;
        assert_eq!(objects.len(), 3);
        let kind = |objects: &Objects<'_>| {
            let first = objects.first()?;
            first.member("kind")?.text().map(str::to_owned)
        };
        assert_eq!(kind(&objects).as_deref(), Some("A"));
        objects.next();
        assert_eq!(objects.len(), 2);
        assert_eq!(kind(&objects).as_deref(), Some("B"));
        assert_eq!(objects.next().unwrap().1.to_string(), "items[1]");
        assert_eq!(read_objects("a: 1\n", &|_, _| &ALL).objects.len(), 1);
        assert_eq!(read_objects("# none\n", &|_, _| &ALL).objects.len(), 0);
    }

    #[test]
    fn a_template_is_an_action_that_stops_reading() {
        let chart = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n";
        let document = whole(chart);
        assert_eq!(document.template, chart.find("{{"));
        // Text that only looks like an action is read.
        let greeting =
            "apiVersion: v1\nkind: ConfigMap\ndata:\n  greeting: \"Hello\n    {{ .Name }}\"\n";
        let document = whole(greeting);
        assert_eq!(document.template, None);
        assert_eq!(
            document.values[0].0["data"]["greeting"],
            json!("Hello {{ .Name }}")
        );
        // A syntax error before any action is a syntax error.
        let broken = "a: b: c\nd: {{ x }}\n";
        assert_eq!(whole(broken).template, None);
    }

    /// Text made of YAML's syntax characters, line breaks of every style and
    /// multi-byte characters, where parsers and positions go wrong.
    fn yamlish() -> impl proptest::strategy::Strategy<Value = String> {
        proptest::string::string_regex(
            "([a-z0-9 :\\-\\[\\]{},&*!|>'\"#%@`?~.]|\\n|\\r|\\r\\n|é|🦀|\u{2028}|\u{feff}|\t){0,120}",
        )
        .expect("a valid pattern")
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// Reading and locating never panic; every position is a character
        /// boundary inside the text; the documents cover the text in order.
        #[test]
        fn reading_any_text_is_safe(text in yamlish()) {
            let mut end = 0;
            for chunk in split_documents(&text) {
                proptest::prop_assert!(chunk.offset >= end);
                end = chunk.offset + chunk.text.len();
                let document = whole(chunk.text);
                for problem in &document.problems {
                    proptest::prop_assert!(problem.pos.offset <= chunk.text.len());
                    proptest::prop_assert!(chunk.text.is_char_boundary(problem.pos.offset));
                }
                let paths = [FieldPath::fields("a.b"), FieldPath::fields("a").index(0), FieldPath::root()];
                for pos in locate(chunk.text, &paths) {
                    proptest::prop_assert!(chunk.text.is_char_boundary(pos.offset));
                    proptest::prop_assert!(chunk.text.is_char_boundary(pos.offset + pos.len));
                }
            }
        }
    }
}
