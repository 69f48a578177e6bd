//! Cutting a YAML stream into its documents, so each can be read on its own
//! (and in parallel). A column-0 `---` or `...` line is a document marker even
//! inside a scalar (YAML 1.2 forbids them there), so the cut needs no parser.

use super::lines::{Line, count_breaks, lines};

/// One document of a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk<'a> {
    /// The document's text: directives and comments before its `---`, the
    /// marker, the content, and a closing `...` if there is one.
    pub text: &'a str,
    /// Byte offset of the text in the stream.
    pub offset: usize,
    /// Number of lines before the text in the stream.
    pub line_offset: usize,
}

fn after_marker<'a>(line: &'a str, marker: &str) -> Option<&'a str> {
    line.strip_prefix(marker)
        .filter(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
}

/// Whether text carries no content: blank or a comment.
fn is_blank(text: &str) -> bool {
    let text = text.trim_start_matches([' ', '\t']);
    text.is_empty() || text.starts_with('#')
}

/// Whether a line before any content of its document carries none: blank, a
/// comment or a directive.
fn is_preamble(line: &str) -> bool {
    line.starts_with('%') || is_blank(line)
}

/// Splits a stream into its documents, leaving out those without content (a
/// lone `---`, comments only).
pub fn split_documents(text: &str) -> Vec<Chunk<'_>> {
    if let Some(values) = json_values(text) {
        return values;
    }
    let mut chunks = Vec::new();
    let mut start = 0;
    let mut start_line = 0;
    let mut has_content = false;
    // Whether the current document has its `---` (a preamble of comments and
    // directives before it belongs to it).
    let mut has_marker = false;
    let mut push = |end: usize, start: usize, start_line: usize, has_content: bool| {
        if has_content {
            chunks.push(Chunk {
                text: &text[start..end],
                offset: start,
                line_offset: start_line,
            });
        }
    };
    for (
        number,
        Line {
            text: line,
            start: line_start,
            end,
        },
    ) in lines(text).enumerate()
    {
        if let Some(rest) = after_marker(line, "---") {
            if has_content || has_marker {
                push(line_start, start, start_line, has_content);
                start = line_start;
                start_line = number;
            }
            has_content = !is_blank(rest);
            has_marker = true;
        } else if let Some(rest) = after_marker(line, "...") {
            push(end, start, start_line, has_content || !is_blank(rest));
            start = end;
            start_line = number + 1;
            has_content = false;
            has_marker = false;
        } else if !has_content {
            has_content = !is_preamble(line);
        }
    }
    push(text.len(), start, start_line, has_content);
    chunks
}

/// The values of a stream kubectl reads as JSON (it starts with `{`), when
/// it holds several: kubectl's JSON decoder reads one object after another,
/// each a document. A value that does not read ends the cut: the rest is one
/// more document, whose reading reports why. `None` for one value.
fn json_values(text: &str) -> Option<Vec<Chunk<'_>>> {
    if !text.trim_start().starts_with('{') {
        return None;
    }
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<serde::de::IgnoredAny>();
    let mut ends = Vec::new();
    while let Some(Ok(_)) = values.next() {
        ends.push(values.byte_offset());
    }
    // The rest of the text belongs to the last value when blank, else it
    // is one document more.
    match ends.last_mut() {
        Some(last) if text[*last..].trim().is_empty() => *last = text.len(),
        _ => ends.push(text.len()),
    }
    if ends.len() < 2 {
        return None;
    }
    let mut start = 0;
    let mut line_offset = 0;
    Some(
        ends.into_iter()
            .map(|end| {
                let chunk = Chunk {
                    text: &text[start..end],
                    offset: start,
                    line_offset,
                };
                line_offset += count_breaks(chunk.text);
                start = end;
                chunk
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<(&str, usize)> {
        split_documents(text)
            .iter()
            .map(|c| {
                assert_eq!(&text[c.offset..c.offset + c.text.len()], c.text);
                (c.text, c.line_offset)
            })
            .collect()
    }

    #[test]
    fn splits_on_markers_and_skips_empty_documents() {
        let text = "# header\n---\na: 1\n---   # c\n\n---\r\nb: 2\r\n...\n%YAML 1.2\n--- {c: 3}\n";
        assert_eq!(
            texts(text),
            [
                ("# header\n---\na: 1\n", 0),
                ("---\r\nb: 2\r\n...\n", 5),
                ("%YAML 1.2\n--- {c: 3}\n", 8)
            ]
        );
    }

    #[test]
    fn a_lone_carriage_return_is_a_line_break() {
        let text = "# c\rkind: A\r---\rkind: B\r";
        assert_eq!(texts(text), [("# c\rkind: A\r", 0), ("---\rkind: B\r", 2)]);
    }

    #[test]
    fn a_marker_needs_a_separator() {
        assert_eq!(texts("a: |\n  x\n---b\n").len(), 1);
        assert_eq!(texts("a: 1\n--- \tb: 2\n").len(), 2);
    }

    /// kubectl reads a stream that starts with `{` with a JSON decoder, one
    /// object after another.
    #[test]
    fn a_json_stream_is_one_document_a_value() {
        let text = "{\"kind\": \"A\"}\n{\"kind\":\n \"B\"}\n\n{\"kind\": \"C\"}\n";
        assert_eq!(
            texts(text),
            [
                ("{\"kind\": \"A\"}", 0),
                ("\n{\"kind\":\n \"B\"}", 0),
                ("\n\n{\"kind\": \"C\"}\n", 2)
            ]
        );
        // What follows a value that does not read is one document more.
        assert_eq!(
            texts("{\"kind\": \"A\"}\n{\"garbage\":\n"),
            [("{\"kind\": \"A\"}", 0), ("\n{\"garbage\":\n", 0)]
        );
        // One value, or YAML: cut at markers only.
        assert_eq!(texts("{\"kind\": \"A\"}\n").len(), 1);
        assert_eq!(texts("kind: A\n{\"kind\": \"B\"}\n").len(), 1);
    }

    #[test]
    fn indented_documents_have_content() {
        assert_eq!(texts("  kind: A\n").len(), 1);
        assert_eq!(texts(" {\"kind\": \"A\"}").len(), 1);
        assert!(texts("   # only a comment\n\n").is_empty());
    }
}
