//! Go's `time.Parse(time.RFC3339, s)`, which `metav1.Time` decodes with: what
//! it accepts and the error it returns. It is more lenient than RFC 3339 (a
//! one-digit hour, a comma before the fraction, an offset of 24 hours), and
//! its errors name the layout element where the text stopped matching.

/// The layout, as Go's errors quote it.
const RFC3339: &str = "2006-01-02T15:04:05Z07:00";

/// The elements of [`RFC3339`] in order: a literal text to skip, then a
/// value to parse.
const ELEMENTS: [(&str, Element); 7] = [
    ("", Element::Year),
    ("-", Element::Month),
    ("-", Element::Day),
    ("T", Element::Hour),
    (":", Element::Minute),
    (":", Element::Second),
    ("", Element::Zone),
];

#[derive(Clone, Copy)]
enum Element {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    Zone,
}

impl Element {
    /// The element as the layout writes it.
    fn layout(self) -> &'static str {
        match self {
            Element::Year => "2006",
            Element::Month => "01",
            Element::Day => "02",
            Element::Hour => "15",
            Element::Minute => "04",
            Element::Second => "05",
            Element::Zone => "Z07:00",
        }
    }
}

/// Why Go's `time.Parse(time.RFC3339, text)` fails, in its words; `None`
/// when it parses.
pub(crate) fn rfc3339_error(text: &str) -> Option<String> {
    let (mut year, mut month, mut day) = (0, 0, 0);
    let mut rest = text;
    for (literal, element) in ELEMENTS {
        // Each literal is one byte: Go reports the text from it on.
        let Some(after) = rest.strip_prefix(literal) else {
            return Some(cannot_parse(text, rest, literal));
        };
        rest = after;
        let hold = rest;
        let parsed = match element {
            Element::Year => digits(rest, 4, 4).map(|(n, r)| {
                year = n;
                (r, None)
            }),
            Element::Month => digits(rest, 2, 2).map(|(n, r)| {
                month = n;
                (r, (!(1..=12).contains(&n)).then_some("month"))
            }),
            // Any day of two digits: checked against the month at the end.
            Element::Day => digits(rest, 2, 2).map(|(n, r)| {
                day = n;
                (r, None)
            }),
            Element::Hour => digits(rest, 1, 2).map(|(n, r)| (r, (n >= 24).then_some("hour"))),
            Element::Minute => digits(rest, 2, 2).map(|(n, r)| (r, (n >= 60).then_some("minute"))),
            Element::Second => digits(rest, 2, 2).map(|(n, r)| {
                if n >= 60 {
                    (r, Some("second"))
                } else {
                    (fraction(r), None)
                }
            }),
            Element::Zone => zone(rest),
        };
        match parsed {
            None => return Some(cannot_parse(text, hold, element.layout())),
            Some((_, Some(range))) => {
                return Some(format!(
                    "parsing time {}: {range} out of range",
                    quote(text)
                ));
            }
            Some((after, None)) => rest = after,
        }
    }
    if !rest.is_empty() {
        return Some(format!(
            "parsing time {}: extra text: {}",
            quote(text),
            quote(rest)
        ));
    }
    (day < 1 || day > days_in(month, year))
        .then(|| format!("parsing time {}: day out of range", quote(text)))
}

fn cannot_parse(text: &str, rest: &str, element: &str) -> String {
    format!(
        "parsing time {} as {}: cannot parse {} as {}",
        quote(text),
        quote(RFC3339),
        quote(rest),
        quote(element)
    )
}

/// A number of `min` to `max` ASCII digits at the start of `text` (Go's
/// `getnum`; the year is four bytes read with `atoi`).
fn digits(text: &str, min: usize, max: usize) -> Option<(u32, &str)> {
    let count = text
        .bytes()
        .take(max)
        .take_while(u8::is_ascii_digit)
        .count();
    if count < min {
        return None;
    }
    let (number, rest) = text.split_at(count);
    Some((number.parse().ok()?, rest))
}

/// After the seconds: a fraction (a period or comma, then digits) is read
/// though the layout has none.
fn fraction(text: &str) -> &str {
    let bytes = text.as_bytes();
    if bytes.len() >= 2 && matches!(bytes[0], b'.' | b',') && bytes[1].is_ascii_digit() {
        let end = 1 + bytes[1..].iter().take_while(|b| b.is_ascii_digit()).count();
        &text[end..]
    } else {
        text
    }
}

/// `Z`, or `±hh:mm`. Go's offset checks use `>` (24 hours and 60 minutes
/// pass), and come before its check of the sign.
#[allow(clippy::type_complexity)]
fn zone(text: &str) -> Option<(&str, Option<&'static str>)> {
    if let Some(rest) = text.strip_prefix('Z') {
        return Some((rest, None));
    }
    let bytes = text.as_bytes();
    if bytes.len() < 6 || bytes[3] != b':' {
        return None;
    }
    let two = |b: &[u8]| {
        (b[0].is_ascii_digit() && b[1].is_ascii_digit())
            .then(|| u32::from(b[0] - b'0') * 10 + u32::from(b[1] - b'0'))
    };
    let hours = two(&bytes[1..3]);
    let minutes = hours.and_then(|_| two(&bytes[4..6]));
    if minutes.is_some_and(|m| m > 60) {
        return Some(("", Some("time zone offset minute")));
    }
    if hours.is_some_and(|h| h > 24) {
        return Some(("", Some("time zone offset hour")));
    }
    (minutes.is_some() && matches!(bytes[0], b'+' | b'-')).then(|| (&text[6..], None))
}

fn days_in(month: u32, year: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Go's `time.quote`: in double quotes, `"` and `\` escaped, and each byte
/// of a control or non-ASCII character as `\xhh`.
fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if c < ' ' || !c.is_ascii() {
            let mut buffer = [0; 4];
            for byte in c.encode_utf8(&mut buffer).bytes() {
                out.push_str(&format!("\\x{byte:02x}"));
            }
        } else {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::rfc3339_error;

    #[test]
    fn accepts_what_go_accepts() {
        for text in [
            "2024-01-01T00:00:00Z",
            "2024-02-29T23:59:59Z",
            "2024-01-01T00:00:00.123456789123Z",
            "2024-01-01T00:00:00,5Z",
            "2024-01-01T7:00:00Z",
            "2024-01-01T00:00:00+24:00",
            "2024-01-01T00:00:00-05:60",
            "0000-01-01T00:00:00Z",
        ] {
            assert_eq!(rfc3339_error(text), None, "{text}");
        }
    }

    /// The errors of `time.Parse(time.RFC3339, …)` in Go 1.23 and later (Go
    /// 1.19 differs: it quotes an element from where it stopped, and checks
    /// no offset's range).
    #[test]
    fn refuses_with_go_errors() {
        let layout = "\"2006-01-02T15:04:05Z07:00\"";
        let cases = [
            (
                "",
                format!("parsing time \"\" as {layout}: cannot parse \"\" as \"2006\""),
            ),
            (
                "garbage",
                format!(
                    "parsing time \"garbage\" as {layout}: cannot parse \"garbage\" as \"2006\""
                ),
            ),
            (
                "2024-01-01",
                format!("parsing time \"2024-01-01\" as {layout}: cannot parse \"\" as \"T\""),
            ),
            (
                "2024-1-01T00:00:00Z",
                format!(
                    "parsing time \"2024-1-01T00:00:00Z\" as {layout}: cannot parse \"1-01T00:00:00Z\" as \"01\""
                ),
            ),
            (
                "2024-01-01 00:00:00Z",
                format!(
                    "parsing time \"2024-01-01 00:00:00Z\" as {layout}: cannot parse \" 00:00:00Z\" as \"T\""
                ),
            ),
            (
                "2024-01-01T00:00:00",
                format!(
                    "parsing time \"2024-01-01T00:00:00\" as {layout}: cannot parse \"\" as \"Z07:00\""
                ),
            ),
            (
                "2024-01-01T00:00:00+0100",
                format!(
                    "parsing time \"2024-01-01T00:00:00+0100\" as {layout}: cannot parse \"+0100\" as \"Z07:00\""
                ),
            ),
            (
                "2024-13-01T00:00:00Z",
                "parsing time \"2024-13-01T00:00:00Z\": month out of range".to_owned(),
            ),
            (
                "2023-02-29T00:00:00Z",
                "parsing time \"2023-02-29T00:00:00Z\": day out of range".to_owned(),
            ),
            (
                "2024-01-01T24:00:00Z",
                "parsing time \"2024-01-01T24:00:00Z\": hour out of range".to_owned(),
            ),
            (
                "2024-01-01T00:00:60Z",
                "parsing time \"2024-01-01T00:00:60Z\": second out of range".to_owned(),
            ),
            (
                "2024-01-01T00:00:00+25:00",
                "parsing time \"2024-01-01T00:00:00+25:00\": time zone offset hour out of range"
                    .to_owned(),
            ),
            (
                "2024-01-01T00:00:00+01:61",
                "parsing time \"2024-01-01T00:00:00+01:61\": time zone offset minute out of range"
                    .to_owned(),
            ),
            // An element that fails is quoted from its start.
            (
                "20a4-01-01T00:00:00Z",
                format!(
                    "parsing time \"20a4-01-01T00:00:00Z\" as {layout}: cannot parse \"20a4-01-01T00:00:00Z\" as \"2006\""
                ),
            ),
            // The offset's range is checked before its sign.
            (
                "2024-01-01T00:00:00*25:00",
                "parsing time \"2024-01-01T00:00:00*25:00\": time zone offset hour out of range"
                    .to_owned(),
            ),
            (
                "2024-01-01T00:00:00*01:00",
                format!(
                    "parsing time \"2024-01-01T00:00:00*01:00\" as {layout}: cannot parse \"*01:00\" as \"Z07:00\""
                ),
            ),
            (
                "2024-01-01T00:00:00Zjunk",
                "parsing time \"2024-01-01T00:00:00Zjunk\": extra text: \"junk\"".to_owned(),
            ),
            (
                "2024-01-01t00:00:00Z",
                format!(
                    "parsing time \"2024-01-01t00:00:00Z\" as {layout}: cannot parse \"t00:00:00Z\" as \"T\""
                ),
            ),
            (
                "é",
                format!(
                    "parsing time \"\\xc3\\xa9\" as {layout}: cannot parse \"\\xc3\\xa9\" as \"2006\""
                ),
            ),
        ];
        for (text, error) in cases {
            assert_eq!(
                rfc3339_error(text).as_deref(),
                Some(error.as_str()),
                "{text}"
            );
        }
    }
}
