//! How messages show values taken from the input.
//!
//! A message quotes what it is about, but a value can be as large as the input
//! (a 1 MB name in an admission request, a 100 MB scalar in a file). Every
//! message therefore shows at most [`SHOWN_CHARS`] characters of a value, then
//! `…` and the value's size, so that what a finding weighs does not grow with
//! the input. Rules and front ends quote values only through these functions.

use std::borrow::Cow;

/// How many characters of a value a message shows.
pub const SHOWN_CHARS: usize = 64;

/// The most a finding's message or help line takes. Longer ones (a message
/// listing every owner reference or every container of a huge object) are cut.
pub const MAX_MESSAGE_BYTES: usize = 4096;

/// The first [`SHOWN_CHARS`] characters of `value` when it is longer, cut on
/// a character boundary; `None` when it is shown whole.
fn head(value: &str) -> Option<&str> {
    value
        .char_indices()
        .nth(SHOWN_CHARS)
        .map(|(end, _)| &value[..end])
}

/// `value` unquoted, as paths and object names show it: `web`, or
/// `www… (1048576 bytes)` for a long one.
pub fn shown(value: &str) -> Cow<'_, str> {
    match head(value) {
        None => Cow::Borrowed(value),
        Some(head) => Cow::Owned(format!("{head}… ({} bytes)", value.len())),
    }
}

/// `value` quoted and escaped as the API server renders bad values
/// (`"Web_HPA"`); a long one as `"Www…" (1048576 bytes)`.
pub fn quoted(value: &str) -> String {
    let json = |text: &str| serde_json::Value::from(text).to_string();
    match head(value) {
        None => json(value),
        Some(head) => format!("{} ({} bytes)", json(&format!("{head}…")), value.len()),
    }
}

/// Cuts `text` to at most `max_bytes` bytes, on a character boundary, ending
/// it with `…` when anything was cut.
pub fn truncate(text: &mut String, max_bytes: usize) {
    if text.len() <= max_bytes {
        return;
    }
    let mut end = max_bytes.saturating_sub('…'.len_utf8());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push('…');
}

/// `value` in backticks, as messages name things (`` `web` ``); a long one as
/// `` `www…` (1048576 bytes) ``.
pub fn code(value: &str) -> String {
    match head(value) {
        None => format!("`{value}`"),
        Some(head) => format!("`{head}…` ({} bytes)", value.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_values_are_shown_whole() {
        let value = "w".repeat(SHOWN_CHARS);
        assert_eq!(shown(&value), value);
        assert_eq!(quoted("Web_HPA"), r#""Web_HPA""#);
        assert_eq!(quoted("a\"b\n"), r#""a\"b\n""#);
        assert_eq!(code("web"), "`web`");
    }

    #[test]
    fn long_values_show_their_head_and_size() {
        let value = "w".repeat(1 << 20);
        let head = "w".repeat(SHOWN_CHARS);
        assert_eq!(shown(&value), format!("{head}… (1048576 bytes)"));
        assert_eq!(quoted(&value), format!("\"{head}…\" (1048576 bytes)"));
        assert_eq!(code(&value), format!("`{head}…` (1048576 bytes)"));
    }

    #[test]
    fn truncated_texts_fit_their_limit() {
        let mut short = "web".to_owned();
        truncate(&mut short, 3);
        assert_eq!(short, "web");
        for limit in 3..12 {
            let mut text = "éé🦀abc".repeat(3);
            truncate(&mut text, limit);
            assert!(
                text.len() <= limit && text.ends_with('…'),
                "{limit}: {text}"
            );
        }
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        // Two-byte characters: the cut is after 64 characters, 128 bytes.
        let value = "é".repeat(100);
        assert_eq!(
            shown(&value),
            format!("{}… (200 bytes)", "é".repeat(SHOWN_CHARS))
        );
        let emoji = format!("{}{}", "a".repeat(SHOWN_CHARS - 1), "🦀".repeat(3));
        assert_eq!(
            code(&emoji),
            format!("`{}🦀…` (75 bytes)", "a".repeat(SHOWN_CHARS - 1))
        );
    }
}
