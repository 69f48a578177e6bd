//! Positions of fields in a document's text, found by walking its events
//! again: no tree is kept, so locating costs no more memory than reading.

use std::borrow::Cow;
use std::collections::HashMap;

use granit_parser::{Event, Parser};

use super::compose::parser_options;
use super::goyaml;
use super::scalar;
use super::{Pos, pos_of};
use crate::path::{FieldPath, Segment};

/// The wanted paths that lead into a node, grouped by their next step (a
/// key or an index), so that each child finds its own in one lookup however
/// many paths there are.
#[derive(Default)]
struct Onward<'p> {
    keys: HashMap<&'p str, Vec<usize>>,
    indices: HashMap<usize, Vec<usize>>,
}

impl<'p> Onward<'p> {
    fn new(paths: &'p [FieldPath], through: &[usize], depth: usize) -> Self {
        let mut onward = Self::default();
        for &i in through {
            match paths[i].segments().get(depth) {
                Some(Segment::Field(name) | Segment::Key(name)) => {
                    onward.keys.entry(name).or_default().push(i);
                }
                Some(Segment::Index(index)) => onward.indices.entry(*index).or_default().push(i),
                None => {}
            }
        }
        onward
    }
}

struct Frame<'t, 'p> {
    is_map: bool,
    onward: Onward<'p>,
    /// The key waiting for its value (mappings).
    key: Option<(Cow<'t, str>, Pos)>,
    index: usize,
}

/// For each path, where it is in `text` (a document): the key of the deepest
/// existing node on the path (the field itself when it exists, else its
/// nearest existing parent), spanning the value too when it is a scalar on
/// the same line; the document's start for the root. A key given twice is
/// found at its last occurrence, the one that counts.
pub fn locate(text: &str, paths: &[FieldPath]) -> Vec<Pos> {
    if paths.is_empty() {
        return Vec::new();
    }
    let mut found: Vec<Option<(usize, Pos)>> = vec![None; paths.len()];
    let everything: Vec<usize> = (0..paths.len()).collect();
    let mut frames: Vec<Frame<'_, '_>> = Vec::new();
    // Read as kubectl reads it (comments right after a token, long tags).
    let (readable, _) = goyaml::as_kubectl_reads(text);
    for next in Parser::new_from_str_with_options(&readable, parser_options(&readable)) {
        let Ok((event, span)) = next else { break };
        let at = pos_of(&span);
        let is_node = matches!(
            event,
            Event::Scalar(..)
                | Event::Alias(_)
                | Event::MappingStart(..)
                | Event::SequenceStart(..)
        );
        if is_node {
            if let Some(frame) = frames.last_mut()
                && frame.is_map
                && frame.key.is_none()
            {
                let key = match event {
                    Event::Scalar(value, style, _, tag) => {
                        scalar::resolve(value.clone(), style, tag.as_deref())
                            .ok()
                            .and_then(|s| scalar::key_text(s).ok())
                            .unwrap_or(value)
                    }
                    Event::Alias(_) => Cow::Borrowed("*"),
                    // A mapping or list as a key: kubectl cannot read the document.
                    _ => break,
                };
                frame.key = Some((key, at));
                continue;
            }
            let depth = frames.len();
            let (through, anchor_pos) = match frames.last_mut() {
                None => (Some(&everything), at),
                Some(frame) if frame.is_map => {
                    let (key, key_pos) = frame.key.take().expect("checked above");
                    (frame.onward.keys.get(key.as_ref()), key_pos)
                }
                Some(frame) => {
                    frame.index += 1;
                    (frame.onward.indices.get(&(frame.index - 1)), at)
                }
            };
            let through = through.map_or(&[][..], Vec::as_slice);
            let is_scalar = matches!(event, Event::Scalar(..) | Event::Alias(_));
            let mut here = anchor_pos;
            if is_scalar && at.line == anchor_pos.line && at.offset >= anchor_pos.offset {
                here.len = at.offset + at.len - anchor_pos.offset;
            }
            for &i in through {
                if found[i].is_none_or(|(d, _)| depth >= d) {
                    found[i] = Some((depth, here));
                }
            }
            if !is_scalar {
                let onward = Onward::new(paths, through, depth);
                frames.push(Frame {
                    is_map: matches!(event, Event::MappingStart(..)),
                    onward,
                    key: None,
                    index: 0,
                });
            }
        } else if matches!(event, Event::MappingEnd | Event::SequenceEnd) {
            frames.pop();
        } else if matches!(event, Event::DocumentEnd) {
            break;
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

    #[test]
    fn positions_count_every_line_break_style() {
        let text = "a: 1\rb:\r\n  c: é\r";
        assert_eq!(
            at(text, &FieldPath::fields("b.c")),
            (3, 3, "c: é".to_owned())
        );
    }
}
