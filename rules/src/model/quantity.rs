//! Kubernetes resource quantities (`500m`, `1.5Gi`, `2e3`), parsed the way the API
//! server's `resource.ParseQuantity` does, quirks included (apiserver-hpa-rules.md §3).
//!
//! Only what the rules need is kept: the sign, whether the value is zero, and an
//! approximate magnitude for ratios. Canonical formatting is not reproduced.

use std::fmt;

/// Why a quantity string was rejected; the texts are the API server's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuantityError {
    /// Empty string or stray characters.
    Format,
    /// An unknown suffix such as `K` or `mi`.
    Suffix,
    /// The number could not be read.
    Numeric,
}

impl fmt::Display for QuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            QuantityError::Format => {
                "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
            }
            QuantityError::Suffix => "unable to parse quantity's suffix",
            QuantityError::Numeric => "unable to parse numeric part of quantity",
        })
    }
}

/// A parsed quantity.
#[derive(Clone, Debug, PartialEq)]
pub struct Quantity {
    /// The text as written (trimmed).
    pub text: String,
    negative: bool,
    zero: bool,
    approx: f64,
}

impl Quantity {
    /// Parses a quantity string (surrounding whitespace is trimmed, as the server does).
    pub fn parse(input: &str) -> Result<Self, QuantityError> {
        let text = input.trim();
        let parts = scan(text)?;
        let (base, exponent) = interpret_suffix(parts.suffix).ok_or(QuantityError::Suffix)?;
        // The server takes a fast integer path when the digits fit; otherwise it
        // parses the text before the suffix as a decimal, which fails without digits.
        let digits = parts.num.len() + parts.denom.len();
        let fast = match base {
            Base::Decimal => 18 >= digits && i64::from(exponent) - parts.denom.len() as i64 >= -9,
            Base::Binary => {
                exponent >= 0
                    && parts.denom.is_empty()
                    && 15 - parts.num.len() as i64 - i64::from(exponent) * 3 / 10 > 0
            }
        };
        if !fast && !parts.value.bytes().any(|b| b.is_ascii_digit()) {
            return Err(QuantityError::Numeric);
        }
        let zero = parts
            .num
            .bytes()
            .chain(parts.denom.bytes())
            .all(|b| b == b'0');
        let mantissa: f64 = format!("0{}.{}0", parts.num, parts.denom)
            .parse()
            .unwrap_or(0.0);
        let scale = match base {
            Base::Decimal => 10f64.powi(exponent),
            Base::Binary => 2f64.powi(exponent),
        };
        Ok(Self {
            text: text.to_owned(),
            negative: parts.negative,
            zero,
            approx: if parts.negative { -1.0 } else { 1.0 } * mantissa * scale,
        })
    }

    /// Strictly greater than zero (every non-zero value stays non-zero: the server
    /// rounds away from zero to the next nano).
    pub fn is_positive(&self) -> bool {
        !self.zero && !self.negative
    }

    /// Less than zero.
    pub fn is_negative(&self) -> bool {
        !self.zero && self.negative
    }

    /// The value as a float, for ratios and comparisons only.
    pub fn approx(&self) -> f64 {
        self.approx
    }

    /// A quantity as it appears in a manifest's JSON: a string, or a bare
    /// number (YAML `cpu: 1`); `None` for anything else or a bad string.
    pub fn from_json(value: &serde_json::Value) -> Option<Self> {
        match value {
            serde_json::Value::String(text) => Self::parse(text).ok(),
            serde_json::Value::Number(number) => Self::parse(&number.to_string()).ok(),
            _ => None,
        }
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

struct Parts<'a> {
    negative: bool,
    /// Text before the suffix, sign included.
    value: &'a str,
    /// Integer digits without leading zeros (`"0"` when there are none).
    num: &'a str,
    denom: &'a str,
    suffix: &'a str,
}

/// `parseQuantityString` from k8s.io/apimachinery: a byte scanner, not a regex.
fn scan(text: &str) -> Result<Parts<'_>, QuantityError> {
    if text.is_empty() {
        return Err(QuantityError::Format);
    }
    let bytes = text.as_bytes();
    let end = bytes.len();
    let mut pos = 0;
    let negative = bytes[0] == b'-';
    if matches!(bytes[0], b'-' | b'+') {
        pos += 1;
    }
    while pos < end && bytes[pos] == b'0' {
        pos += 1;
    }
    let zero_parts = |value| Parts {
        negative,
        value,
        num: "0",
        denom: "",
        suffix: "",
    };
    if pos == end {
        // Only a sign and zeros: the server returns zero without looking further.
        return Ok(zero_parts("0"));
    }
    let num_start = pos;
    while pos < end && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    let num = if pos == num_start {
        "0"
    } else {
        &text[num_start..pos]
    };
    let mut denom = "";
    if pos < end && bytes[pos] == b'.' {
        pos += 1;
        let denom_start = pos;
        while pos < end && bytes[pos].is_ascii_digit() {
            pos += 1;
        }
        denom = &text[denom_start..pos];
    }
    let value = &text[..pos];
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&bytes[pos]) {
        pos += 1;
    }
    if pos < end && matches!(bytes[pos], b'-' | b'+') {
        pos += 1;
    }
    while pos < end && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return Err(QuantityError::Format);
    }
    Ok(Parts {
        negative,
        value,
        num,
        denom,
        suffix: &text[suffix_start..],
    })
}

#[derive(Clone, Copy)]
enum Base {
    Decimal,
    Binary,
}

fn interpret_suffix(suffix: &str) -> Option<(Base, i32)> {
    let decimal = |e| Some((Base::Decimal, e));
    let binary = |e| Some((Base::Binary, e));
    match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        _ => {
            let exponent = suffix.strip_prefix(['e', 'E'])?;
            exponent.parse::<i32>().ok().and_then(decimal)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sign(text: &str) -> Result<&'static str, QuantityError> {
        Quantity::parse(text).map(|q| {
            if q.is_positive() {
                "+"
            } else if q.is_negative() {
                "-"
            } else {
                "0"
            }
        })
    }

    #[test]
    fn accepts_the_grammar_of_section_3() {
        for (text, expected) in [
            ("500m", "+"),
            ("1", "+"),
            ("1.5Gi", "+"),
            ("2e3", "+"),
            ("5E-2", "+"),
            ("2e+6", "+"),
            ("1E", "+"),
            ("1.", "+"),
            ("1.G", "+"),
            (".5", "+"),
            ("007", "+"),
            (" 3 ", "+"),
            ("-300m", "-"),
            ("-0.001", "-"),
            ("1e-20", "+"),
            ("-0", "0"),
            ("0", "0"),
            ("0.000", "0"),
        ] {
            assert_eq!(sign(text), Ok(expected), "{text}");
        }
    }

    #[test]
    fn missing_digits_parse_to_zero() {
        for text in ["+", "-", ".", "m", "k", "Mi", "e3", ".Ki"] {
            assert_eq!(sign(text), Ok("0"), "{text}");
        }
    }

    #[test]
    fn rejects_with_the_servers_messages() {
        for (text, error) in [
            ("", QuantityError::Format),
            ("1.2.3", QuantityError::Format),
            ("1e3.5", QuantityError::Format),
            ("0x10", QuantityError::Format),
            ("_", QuantityError::Format),
            ("1 m", QuantityError::Format),
            ("Kb", QuantityError::Format),
            ("K", QuantityError::Suffix),
            ("1K", QuantityError::Suffix),
            ("mi", QuantityError::Suffix),
            ("1e", QuantityError::Suffix),
            ("1ee3", QuantityError::Suffix),
            // Without digits the server's slow path (long or tiny values) fails.
            (".Ei", QuantityError::Numeric),
            (".e-20", QuantityError::Numeric),
        ] {
            assert_eq!(Quantity::parse(text), Err(error), "{text:?}");
        }
        assert_eq!(
            QuantityError::Suffix.to_string(),
            "unable to parse quantity's suffix"
        );
    }

    #[test]
    fn reads_strings_and_numbers_from_json() {
        let approx = |v| Quantity::from_json(&v).map(|q| q.approx());
        assert_eq!(approx(serde_json::json!("500m")), Some(0.5));
        assert_eq!(approx(serde_json::json!(2)), Some(2.0));
        assert_eq!(approx(serde_json::json!(0.25)), Some(0.25));
        assert_eq!(approx(serde_json::json!(true)), None);
        assert_eq!(approx(serde_json::json!("1K")), None);
    }

    #[test]
    fn approximates_magnitudes() {
        let approx = |t| Quantity::parse(t).unwrap().approx();
        assert!((approx("250m") - 0.25).abs() < 1e-12);
        assert!((approx("1Ki") - 1024.0).abs() < 1e-9);
        assert!((approx("1.5Gi") - 1.5 * 1024f64.powi(3)).abs() < 1.0);
        assert!((approx("2e3") - 2000.0).abs() < 1e-9);
        assert!((approx("-2") + 2.0).abs() < 1e-12);
    }
}
