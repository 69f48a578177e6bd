//! Positions of fields in a document's text, found by walking its events
//! again: no tree is kept, so locating costs no more memory than reading.

use std::borrow::Cow;

use granit_parser::{Event, Parser};

use super::compose::parser_options;
use super::scalar;
use super::{Pos, pos_of};
use crate::path::{FieldPath, Segment};

/// One step of the path being walked.
#[derive(Debug, PartialEq)]
enum Step<'a> {
    Key(Cow<'a, str>),
    Index(usize),
}

impl Step<'_> {
    fn matches(&self, segment: &Segment) -> bool {
        match (self, segment) {
            (Step::Key(key), Segment::Field(name) | Segment::Key(name)) => key.as_ref() == &**name,
            (Step::Index(i), Segment::Index(j)) => i == j,
            _ => false,
        }
    }
}

struct Frame<'a> {
    is_map: bool,
    /// Whether its path leads to some wanted path (else nothing inside matters).
    relevant: bool,
    /// The key waiting for its value (mappings).
    key: Option<(Step<'a>, Pos)>,
    index: usize,
}

fn leads_to(steps: &[Step<'_>], next: Option<&Step<'_>>, path: &FieldPath) -> bool {
    let segments = path.segments();
    let len = steps.len() + usize::from(next.is_some());
    len <= segments.len()
        && steps
            .iter()
            .chain(next)
            .zip(segments)
            .all(|(step, segment)| step.matches(segment))
}

/// For each path, where it is in `text` (a document): the key of the deepest
/// existing node on the path (the field itself when it exists, else its
/// nearest existing parent), spanning the value too when it is a scalar on
/// the same line; the document's start for the root. A key given twice is
/// found at its last occurrence, the one that counts.
pub fn locate(text: &str, paths: &[FieldPath]) -> Vec<Pos> {
    let mut found: Vec<Option<(usize, Pos)>> = vec![None; paths.len()];
    let mut frames: Vec<Frame<'_>> = Vec::new();
    let mut steps: Vec<Step<'_>> = Vec::new();
    for next in Parser::new_from_str_with_options(text, parser_options(text)) {
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
                frame.key = Some((Step::Key(key), at));
                continue;
            }
            let (step, anchor_pos) = match frames.last_mut() {
                None => (None, at),
                Some(frame) if frame.is_map => {
                    let (step, key_pos) = frame.key.take().expect("checked above");
                    (Some(step), key_pos)
                }
                Some(frame) => {
                    frame.index += 1;
                    (Some(Step::Index(frame.index - 1)), at)
                }
            };
            let relevant = frames.last().is_none_or(|f| f.relevant);
            let is_scalar = matches!(event, Event::Scalar(..) | Event::Alias(_));
            let mut here = anchor_pos;
            if is_scalar && at.line == anchor_pos.line && at.offset >= anchor_pos.offset {
                here.len = at.offset + at.len - anchor_pos.offset;
            }
            let mut leads_anywhere = false;
            if relevant {
                let depth = steps.len() + usize::from(step.is_some());
                for (path, best) in paths.iter().zip(&mut found) {
                    if leads_to(&steps, step.as_ref(), path) {
                        leads_anywhere = true;
                        if best.is_none_or(|(d, _)| depth >= d) {
                            *best = Some((depth, here));
                        }
                    }
                }
            }
            if !is_scalar {
                frames.push(Frame {
                    is_map: matches!(event, Event::MappingStart(..)),
                    relevant: leads_anywhere,
                    key: None,
                    index: 0,
                });
                steps.extend(step);
            }
        } else if matches!(event, Event::MappingEnd | Event::SequenceEnd) {
            frames.pop();
            if !frames.is_empty() {
                steps.pop();
            }
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
