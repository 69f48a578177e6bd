//! Helm templates: text that YAML cannot read because of a template action.
//!
//! `{{` is ordinary text in quoted strings, block scalars, comments and in
//! the middle of plain scalars, and a chart's plain YAML files may well contain
//! it. A document is a template only when an action stands where YAML reads
//! syntax ([`find_action`]) *and* the document cannot be read from there on.

use super::lines::lines;

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

/// The byte offset of the first template action (`{{`) in a document that YAML
/// would read as syntax: at the start of a value, a list item or a line.
pub fn find_action(text: &str) -> Option<usize> {
    memchr::memmem::find(text.as_bytes(), b"{{")?;
    let mut block_indent: Option<usize> = None;
    for line in lines(text) {
        let content = line.text;
        let indent = content.len() - content.trim_start_matches(' ').len();
        if let Some(block) = block_indent {
            if content.trim().is_empty() || indent > block {
                continue;
            }
            block_indent = None;
        }
        if let Some(at) = action_in_line(content) {
            return Some(line.start + at);
        }
        if starts_block_scalar(content) {
            block_indent = Some(indent);
        }
    }
    None
}

fn action_in_line(line: &str) -> Option<usize> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_actions_where_yaml_sees_syntax() {
        fn action(text: &str) -> Option<&str> {
            find_action(text).map(|at| &text[at..at + 2])
        }
        assert_eq!(action("a: {{ .Values.x }}\n"), Some("{{"));
        assert_eq!(action("{{- if .Values.enabled }}\nkind: X\n"), Some("{{"));
        assert_eq!(action("items:\n  - {{ .x }}\n"), Some("{{"));
        assert_eq!(find_action("a: \"{{ .Values.x }}\"\n"), None);
        assert_eq!(find_action("a: 'x {{ y }}'\n"), None);
        assert_eq!(find_action("a: text-{{ y }}\n"), None);
        assert_eq!(find_action("# {{ y }}\n"), None);
        assert_eq!(find_action("a: |\n  {{ y }}\nb: 1\n"), None);
        assert_eq!(find_action("a: |\r  {{ y }}\rb: 1\r"), None);
        assert_eq!(find_action("a: |\n  x\nb: {{ y }}\n"), Some(12));
    }
}
