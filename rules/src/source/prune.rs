//! Keeping only some fields of a document, before or after parsing.
//!
//! Workloads are big (env, volumes, probes) and the rules read a handful of their
//! fields. [`prune_text`] drops the other lines of a block-style document before
//! the parser sees them, which is far cheaper than parsing them; [`Keep::prune`]
//! does the same to a parsed value. Both keep exactly the same fields, so rules
//! cannot tell which one ran.

use std::borrow::Cow;

use serde_json::Value;

use super::{block_key, closes_on_line, indentation, is_compact_sequence_entry, is_empty_line};

/// Which fields of a value to keep.
#[derive(Debug)]
pub enum Keep {
    /// The whole value.
    All,
    /// These keys of a mapping, each pruned in turn; other values are kept whole.
    Fields(&'static [(&'static str, Keep)]),
    /// Every item of a sequence, pruned in turn.
    Items(&'static Keep),
    /// The entries of a mapping whose key starts with this prefix.
    Prefixed(&'static str),
}

impl Keep {
    /// What to keep of the value at `key` below a mapping kept with `self`;
    /// `None` when it is dropped.
    fn child(&self, key: &str) -> Option<&Keep> {
        match self {
            Keep::All => Some(&Keep::All),
            Keep::Fields(fields) => fields.iter().find(|(k, _)| *k == key).map(|(_, keep)| keep),
            Keep::Prefixed(prefix) => key.starts_with(prefix).then_some(&Keep::All),
            Keep::Items(_) => None,
        }
    }

    /// `value` with only the kept fields.
    pub fn prune(&self, mut value: Value) -> Value {
        self.prune_in_place(&mut value);
        value
    }

    fn prune_in_place(&self, value: &mut Value) {
        match (self, value) {
            (Keep::Fields(_) | Keep::Prefixed(_), Value::Object(map)) => {
                map.retain(|key, value| match self.child(key) {
                    Some(keep) => {
                        keep.prune_in_place(value);
                        true
                    }
                    None => false,
                });
            }
            (Keep::Items(item), Value::Array(items)) => {
                items.iter_mut().for_each(|v| item.prune_in_place(v));
            }
            _ => {}
        }
    }
}

/// A mapping or sequence whose lines are being kept selectively.
struct Frame<'k> {
    /// Column of the mapping's keys, or of the sequence's `-`; `None` until the
    /// first line inside it.
    indent: Option<usize>,
    keep: &'k Keep,
    is_sequence: bool,
    /// The output line that opened the frame, and how many lines there were then:
    /// if nothing is kept inside, that line gets an empty `{}` or `[]`.
    opener: Option<(usize, String)>,
    lines_at_open: usize,
}

/// What happens to the lines below the current key.
#[derive(Clone, Copy, PartialEq)]
enum Region {
    /// Interpret them against the frames.
    Frames,
    /// Copy every line indented deeper than this (and compact `- ` entries at it).
    Copy(usize),
    /// Drop them likewise.
    Skip(usize),
}

struct Pruner<'t, 'k> {
    out: Vec<Cow<'t, str>>,
    frames: Vec<Frame<'k>>,
    region: Region,
}

impl<'t, 'k> Pruner<'t, 'k> {
    fn open(&mut self, keep: &'k Keep, is_sequence: bool, opener: Option<(usize, String)>) {
        self.frames.push(Frame {
            indent: None,
            keep,
            is_sequence,
            opener,
            lines_at_open: self.out.len(),
        });
    }

    fn close(&mut self) {
        let Some(frame) = self.frames.pop() else {
            return;
        };
        if let Some((line, head)) = frame.opener
            && self.out.len() == frame.lines_at_open
        {
            let empty = if frame.is_sequence { "[]" } else { "{}" };
            self.out[line] = Cow::Owned(format!("{head} {empty}\n"));
        }
    }

    /// Handles `key: value` at column `indent` of the innermost (mapping) frame.
    fn entry(&mut self, indent: usize, content: &'t str, line: Cow<'t, str>) -> Option<()> {
        let (key, value) = block_key(content)?;
        if !closes_on_line(value) {
            return None;
        }
        let frame = self.frames.last()?;
        let Some(keep) = frame.keep.child(key) else {
            self.region = Region::Skip(indent);
            return Some(());
        };
        let value = super::strip_comment(value).trim();
        let partial = !matches!(keep, Keep::All);
        if partial && value.is_empty() {
            let head = format!("{}{key}:", " ".repeat(indent));
            self.out.push(Cow::Owned(format!("{head}\n")));
            self.open(
                keep,
                matches!(keep, Keep::Items(_)),
                Some((self.out.len() - 1, head)),
            );
        } else {
            // A whole value, or a partial one written in flow style: kept as written.
            self.out.push(line);
            self.region = Region::Copy(indent);
        }
        Some(())
    }

    /// Handles `- ...` at column `indent` of the innermost (sequence) frame.
    fn item(&mut self, indent: usize, content: &'t str, line: Cow<'t, str>) -> Option<()> {
        let Keep::Items(item) = self.frames.last()?.keep else {
            return None;
        };
        let rest = content[1..].trim_start();
        let rest_column = indent + (content.len() - rest.len());
        if rest.is_empty() || rest.starts_with('#') || block_key(rest).is_some() {
            // A mapping item: `-` on a line of its own, its keys below it.
            let head = format!("{}-", " ".repeat(indent));
            self.out.push(Cow::Owned(format!("{head}\n")));
            self.open(item, false, Some((self.out.len() - 1, head)));
            if rest.is_empty() || rest.starts_with('#') {
                return Some(());
            }
            self.frames.last_mut()?.indent = Some(rest_column);
            let rebuilt = Cow::Owned(format!(
                "{}{}\n",
                " ".repeat(rest_column),
                rest.trim_end_matches('\r')
            ));
            return self.entry(rest_column, rest, rebuilt);
        }
        if rest.starts_with('-') {
            return None;
        }
        self.out.push(line);
        self.region = Region::Copy(indent);
        Some(())
    }

    fn line(&mut self, raw: &'t str) -> Option<()> {
        let bare = raw.trim_end_matches(['\n', '\r']);
        let empty = is_empty_line(bare);
        if let Region::Copy(depth) | Region::Skip(depth) = self.region {
            let inside = empty || {
                let indent = indentation(bare)?;
                indent > depth || (indent == depth && is_compact_sequence_entry(&bare[indent..]))
            };
            if inside {
                // Blank and comment-like lines may be content of a block scalar: copy them.
                if matches!(self.region, Region::Copy(_)) {
                    self.out.push(Cow::Borrowed(raw));
                }
                return Some(());
            }
            self.region = Region::Frames;
        }
        if empty {
            return Some(());
        }
        let indent = indentation(bare)?;
        let content = &bare[indent..];
        self.enter_frame_of(indent, content)?;
        let frame = self.frames.last()?;
        let raw = Cow::Borrowed(raw);
        if frame.is_sequence {
            self.item(indent, content, raw)
        } else {
            self.entry(indent, content, raw)
        }
    }

    /// Closes the frames a line at `indent` is not inside of; the innermost open
    /// frame is then the one it belongs to, at its column.
    fn enter_frame_of(&mut self, indent: usize, content: &str) -> Option<()> {
        loop {
            let len = self.frames.len();
            let (own, is_sequence) = self.frames.last().map(|f| (f.indent, f.is_sequence))?;
            let parent = len.checked_sub(2).and_then(|i| self.frames[i].indent);
            let column = match own {
                Some(column) => column,
                // The first line decides the column, if it is inside at all:
                // deeper than the parent's keys, or a compact `- ` at their column.
                None if parent.is_none_or(|p| {
                    indent > p || (is_sequence && indent == p && content.starts_with('-'))
                }) =>
                {
                    self.frames.last_mut()?.indent = Some(indent);
                    indent
                }
                None => {
                    self.close();
                    continue;
                }
            };
            if indent < column || (indent == column && is_sequence && !content.starts_with('-')) {
                self.close();
                continue;
            }
            return (indent == column).then_some(());
        }
    }
}

/// The lines of a block-style document that hold the fields `keep` names, as a
/// smaller document; `None` when the document is not plain enough to cut by
/// lines (flow collections over several lines, aliases to dropped parts, merge
/// keys, tabs, ...): parse it whole then.
pub fn prune_text(text: &str, keep: &Keep) -> Option<String> {
    let mut pruner = Pruner {
        out: Vec::new(),
        frames: Vec::new(),
        region: Region::Frames,
    };
    pruner.open(keep, false, None);
    let mut lines = text.split_inclusive('\n').peekable();
    if lines.peek().is_some_and(|line| line.starts_with("---")) {
        let marker = lines.next()?;
        if !is_empty_line(marker.trim_end_matches(['\n', '\r'])) {
            return None;
        }
    }
    for line in lines {
        if line.starts_with('%') {
            return None;
        }
        pruner.line(line)?;
    }
    while pruner.frames.len() > 1 {
        pruner.close();
    }
    let pruned: String = pruner.out.concat();
    // An alias into a dropped part would not resolve: parse the whole document then.
    (!pruned.contains('*') || !has_alias(&pruned)).then_some(pruned)
}

/// Whether YAML text may contain an alias (`*name` where a node starts).
fn has_alias(text: &str) -> bool {
    text.lines().any(|line| {
        let content = super::strip_comment(line);
        content
            .split([' ', '[', '{', ','])
            .any(|token| token.starts_with('*') && token.len() > 1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::parse;

    static CONTAINER: Keep = Keep::Fields(&[("name", Keep::All), ("resources", Keep::All)]);
    static KEEP: Keep = Keep::Fields(&[
        ("kind", Keep::All),
        (
            "metadata",
            Keep::Fields(&[
                ("name", Keep::All),
                ("annotations", Keep::Prefixed("hpa-lint.io/")),
            ]),
        ),
        (
            "spec",
            Keep::Fields(&[
                ("replicas", Keep::All),
                ("containers", Keep::Items(&CONTAINER)),
            ]),
        ),
    ]);

    fn value(text: &str) -> Value {
        parse(text).unwrap().to_value().0
    }

    /// Pruning the text keeps everything pruning the value keeps (flow-style values
    /// may keep more: they are not cut).
    fn assert_agrees(text: &str) -> String {
        let pruned = prune_text(text, &KEEP).unwrap_or_else(|| panic!("not prunable:\n{text}"));
        assert_eq!(
            KEEP.prune(value(&pruned)),
            KEEP.prune(value(text)),
            "pruned text:\n{pruned}"
        );
        pruned
    }

    #[test]
    fn keeps_the_named_fields_only() {
        let text = "---\nkind: Deployment # c\nmetadata:\n  name: web\n  labels: {a: b}\n  annotations:\n    hpa-lint.io/ignore.x: \"why\"\n    other: |\n      long\n      text\nspec:\n  replicas: 3\n  containers:\n  - name: a\n    env:\n    - {name: X, value: \"1\"}\n    resources:\n      requests: {cpu: 1}\n  - image: b\n    name: b\n  volumes:\n  - name: v\n";
        let pruned = assert_agrees(text);
        assert!(
            !pruned.contains("env") && !pruned.contains("volumes") && !pruned.contains("other"),
            "{pruned}"
        );
    }

    #[test]
    fn empty_kept_containers_stay_empty_not_null() {
        assert_agrees(
            "kind: Pod\nmetadata:\n  labels: {a: b}\nspec:\n  containers:\n    - image: x\n",
        );
        assert_agrees("spec:\n  volumes: []\n");
    }

    #[test]
    fn keeps_flow_values_whole_and_handles_deep_indentation() {
        assert_agrees(
            "metadata: {name: web, labels: {a: b}}\nspec:\n    containers:\n        -   name: a\n            resources: {}\n            ports: [1, 2]\n",
        );
    }

    /// On every workload of the real-world corpus, cutting lines keeps what the
    /// rules read, and it works for nearly all of them.
    #[test]
    fn agrees_with_value_pruning_on_real_workloads() {
        use crate::model::workload::{WORKLOAD_FIELDS, is_read_whole};
        use crate::source::{Header, find_template, scan_header, split_documents};

        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/corpus/realworld");
        let (mut pruned, mut workloads) = (0, 0);
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            if path.extension().is_none_or(|e| e != "yaml") || find_template(&text).is_some() {
                continue;
            }
            for chunk in split_documents(&text) {
                let Header::Object {
                    api_version, kind, ..
                } = scan_header(chunk.text)
                else {
                    continue;
                };
                if is_read_whole(api_version, kind) {
                    continue;
                }
                workloads += 1;
                let Some(cut) = prune_text(chunk.text, &WORKLOAD_FIELDS) else {
                    continue;
                };
                pruned += 1;
                assert_eq!(
                    WORKLOAD_FIELDS.prune(value(&cut)),
                    WORKLOAD_FIELDS.prune(value(chunk.text)),
                    "{}:\n{cut}",
                    path.display()
                );
            }
        }
        assert!(
            pruned * 20 >= workloads * 19,
            "pruned {pruned} of {workloads}"
        );
    }

    #[test]
    fn gives_up_on_what_lines_cannot_cut() {
        for text in [
            "metadata:\n  name: &n web\nspec:\n  replicas: *n\n",
            "<<: *base\nkind: X\n",
            "spec: {\n  replicas: 3}\n",
            "metadata:\n\tname: x\n",
            "spec:\n  containers:\n  - - a\n",
            "%YAML 1.2\n---\nkind: X\n",
        ] {
            assert_eq!(prune_text(text, &KEEP), None, "{text:?}");
        }
    }
}
