//! Kubernetes resource quantities (`500m`, `1.5Gi`, `2e3`), parsed the way the API
//! server's `resource.ParseQuantity` does, quirks included (apiserver-hpa-rules.md §3).
//!
//! Only what the rules need is kept: the sign, whether the value is zero, and an
//! approximate magnitude for ratios. Canonical formatting is not reproduced.

use std::fmt;

use crate::path::{Json, Shape};
use crate::quote::shown;

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
        let Read {
            parts,
            base,
            exponent,
        } = read(text)?;
        let zero = parts
            .num
            .bytes()
            .chain(parts.denom.bytes())
            .all(|b| b == b'0');
        // The digits as written: leading zeros change nothing, and the text
        // fails to read only when it holds no digit, that is when it is zero.
        let mantissa: f64 = parts
            .value
            .trim_start_matches(['+', '-'])
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

    /// [`Quantity::parse`] then [`Quantity::milli_value`], without keeping
    /// the text: `None` when either fails.
    pub fn milli_of(input: &str) -> Option<i64> {
        i64::try_from(read(input.trim()).ok()?.scaled(3)?).ok()
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

    /// `MilliValue()`: the value in thousandths, rounded away from zero as the
    /// API server rounds (`1.0001m` is 2); `None` when it does not fit an int64.
    pub fn milli_value(&self) -> Option<i64> {
        i64::try_from(self.scaled(3)?).ok()
    }

    /// `AsApproximateFloat64()` of the quantity as the controller reads it: the
    /// API server stores the canonical form (`0.3` becomes `300m`, read as
    /// `300 × 10⁻³`), whose float can differ from the written one's.
    pub fn stored_f64(&self) -> Option<f64> {
        // Canonical form: the value at nano precision without trailing zeros,
        // its exponent lowered to a multiple of 3 (`AsCanonicalBytes`).
        let nano = self.scaled(9)?;
        let (mut amount, mut exponent) = (nano, -9_i32);
        while amount != 0 && amount % 10 == 0 {
            amount /= 10;
            exponent += 1;
        }
        match exponent.rem_euclid(3) {
            1 => (amount, exponent) = (amount * 10, exponent - 1),
            2 => (amount, exponent) = (amount * 100, exponent - 2),
            _ => {}
        }
        let base = amount as f64;
        Some(if exponent == 0 {
            base
        } else {
            base * crate::model::go::pow10(exponent)
        })
    }

    /// `ceil(|value| × 10^exp10)` with the value's sign, exactly.
    fn scaled(&self, exp10: i32) -> Option<i128> {
        read(&self.text).ok()?.scaled(exp10)
    }

    /// A quantity as it appears in a manifest's JSON: a string, or a bare
    /// number (YAML `cpu: 1`); `None` for anything else or a bad string.
    pub fn from_json<V: Json>(value: &V) -> Option<Self> {
        with_json_text(value, |text| Self::parse(text).ok())
    }

    /// [`Quantity::from_json`] then [`Quantity::milli_value`], without
    /// keeping the text.
    pub fn milli_from_json<V: Json>(value: &V) -> Option<i64> {
        with_json_text(value, Self::milli_of)
    }
}

/// `read` of a quantity's text in a manifest's JSON: a string, or a bare
/// number as written back.
fn with_json_text<V: Json, T>(value: &V, read: impl FnOnce(&str) -> Option<T>) -> Option<T> {
    match value.shape() {
        Shape::String(text) => read(text),
        Shape::Number(number) => read(&number.to_string()),
        _ => None,
    }
}

/// The text as written, for messages.
impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&shown(&self.text))
    }
}

/// A quantity string the API server accepts, taken apart.
struct Read<'a> {
    parts: Parts<'a>,
    base: Base,
    exponent: i32,
}

/// What the API server accepts (the text trimmed already).
fn read(text: &str) -> Result<Read<'_>, QuantityError> {
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
    Ok(Read {
        parts,
        base,
        exponent,
    })
}

impl Read<'_> {
    /// `ceil(|value| × 10^exp10)` with the value's sign, exactly.
    fn scaled(&self, exp10: i32) -> Option<i128> {
        let Read {
            parts,
            base,
            exponent,
        } = self;
        let denom = parts.denom.trim_end_matches('0');
        let mut digits: i128 = 0;
        for digit in parts.num.bytes().chain(denom.bytes()) {
            digits = digits
                .checked_mul(10)?
                .checked_add(i128::from(digit - b'0'))?;
        }
        let denom_len = i32::try_from(denom.len()).ok()?;
        let (numerator, shift) = match base {
            Base::Decimal => (digits, exponent.checked_add(exp10)?.checked_sub(denom_len)?),
            Base::Binary => (
                digits.checked_mul(1_i128.checked_shl(u32::try_from(*exponent).ok()?)?)?,
                exp10.checked_sub(denom_len)?,
            ),
        };
        let magnitude = if shift >= 0 {
            numerator.checked_mul(10_i128.checked_pow(shift.unsigned_abs())?)?
        } else {
            ceil_div_pow10(numerator, shift.unsigned_abs())
        };
        Some(if parts.negative {
            -magnitude
        } else {
            magnitude
        })
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

/// `ceil(n / 10^p)` for `n ≥ 0`.
fn ceil_div_pow10(n: i128, p: u32) -> i128 {
    match 10_i128.checked_pow(p) {
        Some(divisor) => n / divisor + i128::from(n % divisor != 0),
        // 10^p exceeds every i128: a non-zero value rounds up to one unit.
        None => i128::from(n != 0),
    }
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
    fn converts_to_milli_units_rounding_up() {
        let milli = |t| Quantity::parse(t).unwrap().milli_value();
        assert_eq!(milli("500m"), Some(500));
        assert_eq!(milli("1"), Some(1000));
        assert_eq!(milli("1.5Gi"), Some(1_610_612_736_000));
        assert_eq!(milli("256Mi"), Some(268_435_456_000));
        assert_eq!(milli("0.0001"), Some(1));
        assert_eq!(milli("1.0001m"), Some(2));
        assert_eq!(milli("1e-20"), Some(1));
        assert_eq!(milli("2e3"), Some(2_000_000));
        assert_eq!(milli("3200m"), Some(3200));
        assert_eq!(milli("0"), Some(0));
        assert_eq!(milli("-1.5"), Some(-1500));
        assert_eq!(milli("10E"), None);
        // Without the quantity kept, the same answers, failures included.
        for text in [
            "500m", " 1.5Gi ", "0.0001", "1e-20", "-1.5", "10E", "1K", ".Ei", ".e-20", "", "+",
        ] {
            let kept = Quantity::parse(text).ok().and_then(|q| q.milli_value());
            assert_eq!(Quantity::milli_of(text), kept, "{text:?}");
        }
        let json = |v| Quantity::milli_from_json(&v);
        assert_eq!(json(serde_json::json!("250m")), Some(250));
        assert_eq!(json(serde_json::json!(2)), Some(2000));
        assert_eq!(json(serde_json::json!(0.25)), Some(250));
        assert_eq!(json(serde_json::json!(true)), None);
    }

    #[test]
    fn reads_floats_as_the_controller_does() {
        let stored = |t| Quantity::parse(t).unwrap().stored_f64().unwrap();
        // `0.3` is stored as `300m`: 300 × 0.001 rounds to 0.3, not 3 × 0.1.
        assert_eq!(stored("0.3"), 0.3);
        assert_eq!(stored("300m"), 0.3);
        assert_eq!(stored("0.05"), 50.0 * 0.001);
        assert_eq!(stored("2"), 2.0);
        assert_eq!(stored("1500m"), 1.5);
    }

    #[test]
    fn approximates_magnitudes() {
        let approx = |t| Quantity::parse(t).unwrap().approx();
        assert!((approx("250m") - 0.25).abs() < 1e-12);
        assert!((approx("1Ki") - 1024.0).abs() < 1e-9);
        assert!((approx("1.5Gi") - 1.5 * 1024f64.powi(3)).abs() < 1.0);
        assert!((approx("2e3") - 2000.0).abs() < 1e-9);
        assert!((approx("-2") + 2.0).abs() < 1e-12);
        // Read from the digits as written, without their sign or leading zeros.
        assert_eq!(approx("1."), 1.0);
        assert_eq!(approx(".5"), 0.5);
        assert_eq!(approx("-007.25m"), -0.00725);
        assert_eq!(approx("."), 0.0);
        assert_eq!(approx("+"), 0.0);
    }
}
