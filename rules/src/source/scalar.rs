//! Scalars as kubectl sends them. kubectl reads YAML with sigs.k8s.io/yaml,
//! which resolves scalars with go-yaml v2 (YAML 1.1: `010` is 8, `0x10` is 16,
//! `yes`, `on` and `y` are booleans, `1_000` is 1000) and writes the result as
//! JSON with Go's encoding/json (a float with an integral value is written as an
//! integer, `.inf` and `.nan` cannot be written at all). Keys that are not
//! strings become strings; null keys and keys of other kinds cannot.

use std::borrow::Cow;

use granit_parser::{ScalarStyle, Tag};
use serde_json::Number;

use super::tree::Tree;

const CORE: &str = "tag:yaml.org,2002:";

/// A scalar resolved the way go-yaml v2 resolves it into an `interface{}`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Scalar<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    /// An integer beyond 64 bits (kept as its nearest float).
    BigInt(f64),
    Float(f64),
    Str(Cow<'a, str>),
    /// The merge key `<<`.
    Merge,
}

/// The types go-yaml v2 resolves scalars to, by their short tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Null,
    Bool,
    Int,
    Float,
    Str,
    Timestamp,
    Merge,
}

impl Kind {
    fn short_tag(self) -> &'static str {
        match self {
            Kind::Null => "!!null",
            Kind::Bool => "!!bool",
            Kind::Int => "!!int",
            Kind::Float => "!!float",
            Kind::Str => "!!str",
            Kind::Timestamp => "!!timestamp",
            Kind::Merge => "!!merge",
        }
    }

    fn of_tag(name: &str) -> Option<Kind> {
        Some(match name {
            "null" => Kind::Null,
            "bool" => Kind::Bool,
            "int" => Kind::Int,
            "float" => Kind::Float,
            "str" => Kind::Str,
            "timestamp" => Kind::Timestamp,
            _ => return None,
        })
    }
}

/// What a tag asks of a scalar.
enum Wanted {
    /// No tag on a plain scalar: resolve implicitly.
    Implicit,
    /// A type go-yaml v2 checks the scalar against.
    Kind(Kind),
    /// `!!binary`: base64 text.
    Binary,
    /// `!!merge`: a merge key when the text is `<<`, quoted or not.
    Merge,
    /// Quoted or block scalars without a tag, and tags go-yaml cannot resolve
    /// (`!`, `!custom`, `!!set`): the text as it is.
    Text,
}

fn wanted(style: ScalarStyle, tag: Option<&Tag>) -> Wanted {
    let Some(tag) = tag else {
        return if style == ScalarStyle::Plain {
            Wanted::Implicit
        } else {
            Wanted::Text
        };
    };
    match tag.suffix_in_namespace(CORE).as_deref() {
        Some("binary") => Wanted::Binary,
        Some("merge") => Wanted::Merge,
        Some(name) => Kind::of_tag(name).map_or(Wanted::Text, Wanted::Kind),
        None => Wanted::Text,
    }
}

/// Resolves a scalar, or says why kubectl cannot read it.
pub(crate) fn resolve<'a>(
    value: Cow<'a, str>,
    style: ScalarStyle,
    tag: Option<&Tag>,
) -> Result<Scalar<'a>, String> {
    match wanted(style, tag) {
        Wanted::Text => Ok(Scalar::Str(value)),
        Wanted::Binary => decode_base64(&value)
            .map(|bytes| Scalar::Str(Cow::Owned(String::from_utf8_lossy(&bytes).into_owned())))
            .ok_or_else(|| "!!binary value contains invalid base64 data".to_owned()),
        Wanted::Implicit => Ok(implicit(value).1),
        Wanted::Merge if value == "<<" => Ok(Scalar::Merge),
        Wanted::Merge => Ok(Scalar::Str(value)),
        Wanted::Kind(kind) => {
            let (found, scalar) = if kind == Kind::Str {
                (Kind::Str, Scalar::Str(value.clone()))
            } else {
                implicit(value.clone())
            };
            match (kind, found, scalar) {
                (_, _, scalar) if found == kind => Ok(scalar),
                (Kind::Float, Kind::Int, Scalar::Int(i)) => Ok(Scalar::Float(i as f64)),
                // Timestamps decode as their text (go-yaml v2 keeps them strings
                // in an `interface{}`); an explicit `!!str` takes anything.
                (Kind::Str, _, _) | (Kind::Timestamp, Kind::Timestamp, _) => Ok(Scalar::Str(value)),
                _ => Err(format!(
                    "cannot decode {} `{}` as a {}",
                    found.short_tag(),
                    crate::quote::shown(&value),
                    kind.short_tag()
                )),
            }
        }
    }
}

/// Whether kubectl can read a scalar, without building its value: only the
/// infinite and NaN floats and tags that do not fit fail.
pub(crate) fn check(value: &str, style: ScalarStyle, tag: Option<&Tag>) -> Result<(), String> {
    match wanted(style, tag) {
        Wanted::Text | Wanted::Merge => Ok(()),
        Wanted::Implicit => match known_word(value) {
            Some((_, Scalar::Float(f))) => json_float(f).map(drop),
            _ => Ok(()),
        },
        Wanted::Binary | Wanted::Kind(_) => resolve(Cow::Borrowed(value), style, tag)
            .and_then(to_tree)
            .map(drop),
    }
}

/// go-yaml v2's `resolve` for a plain scalar without a tag.
fn implicit(value: Cow<'_, str>) -> (Kind, Scalar<'_>) {
    if let Some(known) = known_word(&value) {
        return known;
    }
    match value.as_bytes().first() {
        Some(b'.') => {
            if let Some(f) = parse_dot_float(&value) {
                return (Kind::Float, Scalar::Float(f));
            }
        }
        Some(b'0'..=b'9' | b'+' | b'-') => {
            if is_timestamp(&value) {
                return (Kind::Timestamp, Scalar::Str(value));
            }
            let plain = if value.contains('_') {
                Cow::Owned(value.replace('_', ""))
            } else {
                Cow::Borrowed(value.as_ref())
            };
            if let Some(number) = number(&plain) {
                return number;
            }
        }
        _ => {}
    }
    (Kind::Str, Scalar::Str(value))
}

/// The words go-yaml v2 looks up before anything else.
fn known_word(value: &str) -> Option<(Kind, Scalar<'static>)> {
    Some(match value {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            (Kind::Bool, Scalar::Bool(true))
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            (Kind::Bool, Scalar::Bool(false))
        }
        "" | "~" | "null" | "Null" | "NULL" => (Kind::Null, Scalar::Null),
        ".nan" | ".NaN" | ".NAN" => (Kind::Float, Scalar::Float(f64::NAN)),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            (Kind::Float, Scalar::Float(f64::INFINITY))
        }
        "-.inf" | "-.Inf" | "-.INF" => (Kind::Float, Scalar::Float(f64::NEG_INFINITY)),
        "<<" => (Kind::Merge, Scalar::Merge),
        _ => return None,
    })
}

/// A scalar starting with a digit or sign, underscores removed: Go's
/// `ParseInt(s, 0, 64)`, then `ParseUint`, then a YAML-style float, then `0b`
/// binary, then a big integer.
fn number(plain: &str) -> Option<(Kind, Scalar<'static>)> {
    let uint = parse_uint(plain);
    // Unsigned, `ParseInt` reads what `ParseUint` read.
    let int = match plain.as_bytes().first() {
        Some(b'-' | b'+') => parse_int(plain),
        _ => uint.ok().and_then(|u| i64::try_from(u).ok()),
    };
    if let Some(i) = int {
        return Some((Kind::Int, Scalar::Int(i)));
    }
    if let Ok(u) = uint {
        return Some((Kind::Int, Scalar::Uint(u)));
    }
    if is_yaml_float(plain)
        && let Some(f) = plain.parse::<f64>().ok().filter(|f| f.is_finite())
    {
        return Some((Kind::Float, Scalar::Float(f)));
    }
    if let Some(binary) = plain.strip_prefix("0b") {
        return digits(binary, 2).ok().map(|u| match i64::try_from(u) {
            Ok(i) => (Kind::Int, Scalar::Int(i)),
            Err(_) => (Kind::Int, Scalar::Uint(u)),
        });
    }
    if let Some(binary) = plain.strip_prefix("-0b") {
        return digits(binary, 2)
            .ok()
            .filter(|&u| u <= 1 << 63)
            .map(|u| (Kind::Int, Scalar::Int((u as i64).wrapping_neg())));
    }
    if uint == Err(NumError::Range) {
        return big_int(plain).map(|f| (Kind::Int, Scalar::BigInt(f)));
    }
    None
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NumError {
    Syntax,
    Range,
}

/// Go's `strconv.ParseUint(s, 0, 64)` (no underscores: they were removed).
fn parse_uint(s: &str) -> Result<u64, NumError> {
    let (base, rest) = base_prefix(s);
    digits(rest, base)
}

fn base_prefix(s: &str) -> (u32, &str) {
    let bytes = s.as_bytes();
    if bytes.first() != Some(&b'0') {
        return (10, s);
    }
    if bytes.len() >= 3 {
        match bytes[1].to_ascii_lowercase() {
            b'b' => return (2, &s[2..]),
            b'o' => return (8, &s[2..]),
            b'x' => return (16, &s[2..]),
            _ => {}
        }
    }
    (8, &s[1..])
}

fn digits(s: &str, base: u32) -> Result<u64, NumError> {
    if s.is_empty() && base != 8 {
        return Err(NumError::Syntax);
    }
    let mut n: u64 = 0;
    let mut overflow = false;
    // Bytes: a byte of a character beyond ASCII is no digit, as the
    // character is not.
    for b in s.bytes() {
        let d = char::from(b).to_digit(base).ok_or(NumError::Syntax)?;
        match n
            .checked_mul(u64::from(base))
            .and_then(|n| n.checked_add(u64::from(d)))
        {
            Some(next) => n = next,
            None => overflow = true,
        }
    }
    if overflow {
        Err(NumError::Range)
    } else {
        Ok(n)
    }
}

/// Go's `strconv.ParseInt(s, 0, 64)`.
fn parse_int(s: &str) -> Option<i64> {
    let (negative, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest.is_empty() {
        return None;
    }
    let magnitude = parse_uint(rest).ok()?;
    if negative {
        (magnitude <= 1 << 63).then(|| (magnitude as i64).wrapping_neg())
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`
fn is_yaml_float(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let all_digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", fraction)) => all_digits(fraction),
        Some((whole, fraction)) => {
            all_digits(whole) && fraction.bytes().all(|b| b.is_ascii_digit())
        }
        None => all_digits(mantissa),
    };
    mantissa_ok && exponent.is_none_or(|e| all_digits(e.strip_prefix(['-', '+']).unwrap_or(e)))
}

/// Go's `ParseFloat` on a scalar starting with `.` (underscores allowed between
/// digits, as in Go literals).
fn parse_dot_float(s: &str) -> Option<f64> {
    let separated_ok = |t: &str| {
        let bytes = t.as_bytes();
        !t.is_empty()
            && bytes.iter().enumerate().all(|(i, &b)| {
                b.is_ascii_digit()
                    || (b == b'_'
                        && i > 0
                        && bytes[i - 1].is_ascii_digit()
                        && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
            })
    };
    let rest = s.strip_prefix('.')?;
    let (fraction, exponent) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let ok = separated_ok(fraction)
        && exponent.is_none_or(|e| separated_ok(e.strip_prefix(['-', '+']).unwrap_or(e)));
    ok.then(|| s.replace('_', "").parse::<f64>().ok())
        .flatten()
        .filter(|f| f.is_finite())
}

/// `math/big`'s `SetString(s, 0)` for an integer too large for 64 bits.
fn big_int(s: &str) -> Option<f64> {
    let (negative, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (base, body) = base_prefix(rest);
    if body.is_empty() {
        return None;
    }
    let mut value = 0f64;
    for c in body.chars() {
        value = value * f64::from(base) + f64::from(c.to_digit(base)?);
    }
    Some(if negative { -value } else { value })
}

/// go-yaml v2 tries timestamps only on text that starts with a four-digit year.
fn is_timestamp(s: &str) -> bool {
    let bytes = s.as_bytes();
    if bytes.len() < 6 || !bytes[..4].iter().all(u8::is_ascii_digit) || bytes[4] != b'-' {
        return false;
    }
    let (date, time) = match s.find(['T', 't', ' ']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let mut parts = date.split('-');
    let (Some(year), Some(month), Some(day), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let number = |t: &str, max: u32| {
        (1..=2).contains(&t.len())
            && t.bytes().all(|b| b.is_ascii_digit())
            && t.parse::<u32>().is_ok_and(|n| n <= max)
    };
    let date_ok = year.len() == 4
        && number(month, 12)
        && month != "0"
        && month != "00"
        && number(day, 31)
        && day != "0"
        && day != "00";
    date_ok && time.is_none_or(is_clock)
}

/// `15:4:5.999999999` with an optional zone (`Z07:00`).
fn is_clock(time: &str) -> bool {
    let (clock, zone) = match time.find(['Z', '+', '-']) {
        Some(i) => (&time[..i], Some(&time[i..])),
        None => (time, None),
    };
    let (clock, fraction) = clock.split_once('.').unwrap_or((clock, "0"));
    let mut parts = clock.split(':');
    let field = |t: Option<&str>, max: u32| {
        t.is_some_and(|t| {
            (1..=2).contains(&t.len())
                && t.bytes().all(|b| b.is_ascii_digit())
                && t.parse::<u32>().is_ok_and(|n| n <= max)
        })
    };
    let clock_ok = field(parts.next(), 23)
        && field(parts.next(), 59)
        && field(parts.next(), 59)
        && parts.next().is_none()
        && !fraction.is_empty()
        && fraction.bytes().all(|b| b.is_ascii_digit());
    clock_ok
        && zone.is_none_or(|zone| {
            zone == "Z"
                || (zone.len() == 6
                    && zone.as_bytes()[3] == b':'
                    && zone[1..3]
                        .bytes()
                        .chain(zone[4..].bytes())
                        .all(|b| b.is_ascii_digit()))
        })
}

fn decode_base64(text: &str) -> Option<Vec<u8>> {
    fn sextet(b: u8) -> Option<u32> {
        Some(u32::from(match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        }))
    }
    // Go's StdEncoding skips line breaks; the text must be padded to whole quanta.
    let clean: Vec<u8> = text
        .bytes()
        .filter(|b| !matches!(b, b'\n' | b'\r'))
        .collect();
    if !clean.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(clean.len() / 4 * 3);
    for (i, quantum) in clean.chunks(4).enumerate() {
        let last = i + 1 == clean.len() / 4;
        let padding = quantum.iter().rev().take_while(|&&b| b == b'=').count();
        if padding > 2 || (padding > 0 && !last) {
            return None;
        }
        let mut bits = 0u32;
        for &b in &quantum[..4 - padding] {
            bits = bits << 6 | sextet(b)?;
        }
        bits <<= 6 * padding as u32;
        let bytes = bits.to_be_bytes();
        out.extend_from_slice(&bytes[1..4 - padding]);
    }
    Some(out)
}

/// The JSON value Go's encoding/json writes for a resolved scalar, as the API
/// server then reads it.
pub(crate) fn to_tree(scalar: Scalar<'_>) -> Result<Tree<'_>, String> {
    Ok(match scalar {
        Scalar::Null => Tree::Null,
        Scalar::Bool(b) => Tree::Bool(b),
        Scalar::Int(i) => Tree::Number(i.into()),
        Scalar::Uint(u) => Tree::Number(u.into()),
        Scalar::BigInt(f) | Scalar::Float(f) => Tree::Number(json_float(f)?),
        Scalar::Str(s) => Tree::String(s),
        Scalar::Merge => Tree::String(Cow::Borrowed("<<")),
    })
}

fn json_float(f: f64) -> Result<Number, String> {
    if !f.is_finite() {
        let go = if f.is_nan() {
            "NaN"
        } else if f > 0.0 {
            "+Inf"
        } else {
            "-Inf"
        };
        return Err(format!(
            "`{go}` is not a number JSON can hold, so kubectl cannot convert this document \
             (json: unsupported value: {go}); quote it if it is text"
        ));
    }
    // encoding/json writes integral floats below 1e21 without a fraction or
    // exponent, so they arrive as integers.
    if f.fract() == 0.0 && f.abs() < 1e21 {
        // Not -2^63 itself: Go writes it `-9223372036854776000`, beyond int64.
        if f > -9.223_372_036_854_776e18 && f < 9.223_372_036_854_776e18 {
            return Ok((f as i64).into());
        }
        if (0.0..1.844_674_407_370_955_2e19).contains(&f) {
            return Ok((f as u64).into());
        }
    }
    Ok(Number::from_f64(f).expect("a finite float"))
}

/// A resolved mapping key as sigs.k8s.io/yaml turns it into a JSON key.
pub(crate) fn key_text(scalar: Scalar<'_>) -> Result<Cow<'_, str>, String> {
    Ok(match scalar {
        Scalar::Str(s) => s,
        Scalar::Bool(b) => Cow::Borrowed(if b { "true" } else { "false" }),
        Scalar::Int(i) => Cow::Owned(i.to_string()),
        Scalar::Float(f) => Cow::Owned(go_float32_g(f)),
        Scalar::Merge => Cow::Borrowed("<<"),
        Scalar::Null => return Err("a mapping key is null, which kubectl cannot convert to JSON (unsupported map key of type: <nil>)".to_owned()),
        Scalar::Uint(_) | Scalar::BigInt(_) => {
            return Err("a mapping key is an integer beyond 63 bits, which kubectl cannot convert to JSON".to_owned());
        }
    })
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 32)`, with `.inf`/`.nan` for the
/// special values as sigs.k8s.io/yaml writes them.
fn go_float32_g(f: f64) -> String {
    if f.is_nan() {
        return ".nan".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.to_owned();
    }
    let single = f as f32;
    if single.is_infinite() {
        return if single > 0.0 { ".inf" } else { "-.inf" }.to_owned();
    }
    // `{:e}` gives the shortest digits that round-trip the f32: `d.ddde±x`.
    let scientific = format!("{single:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if single == 0.0 {
        return format!("{sign}0");
    }
    // %g with the shortest digits switches to an exponent below 1e-4 and from 1e6.
    if !(-4..6).contains(&exponent) {
        let fraction = if digits.len() > 1 {
            format!(".{}", &digits[1..])
        } else {
            String::new()
        };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        return format!(
            "{sign}{}{fraction}e{exp_sign}{:02}",
            &digits[..1],
            exponent.abs()
        );
    }
    let point = exponent + 1;
    if point <= 0 {
        format!("{sign}0.{}{digits}", "0".repeat((-point) as usize))
    } else if point as usize >= digits.len() {
        format!(
            "{sign}{digits}{}",
            "0".repeat(point as usize - digits.len())
        )
    } else {
        format!(
            "{sign}{}.{}",
            &digits[..point as usize],
            &digits[point as usize..]
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn plain(text: &str) -> Result<Value, String> {
        to_tree(resolve(Cow::Borrowed(text), ScalarStyle::Plain, None)?).map(Tree::into_value)
    }

    #[test]
    fn resolves_plain_scalars_as_go_yaml_v2() {
        for (text, expected) in [
            ("010", json!(8)),
            ("0x10", json!(16)),
            ("0o17", json!(15)),
            ("0b101", json!(5)),
            ("-0b101", json!(-5)),
            ("+0x10", json!(16)),
            ("08", json!(8)),
            ("1_000", json!(1000)),
            ("0", json!(0)),
            ("-0", json!(0)),
            ("3.0", json!(3)),
            ("1e3", json!(1000)),
            ("1.5", json!(1.5)),
            (".5", json!(0.5)),
            ("1.", json!(1)),
            ("9223372036854775808", json!(9_223_372_036_854_775_808u64)),
            ("yes", json!(true)),
            ("On", json!(true)),
            ("y", json!(true)),
            ("N", json!(false)),
            ("off", json!(false)),
            ("~", Value::Null),
            ("", Value::Null),
            ("Null", Value::Null),
            ("yEs", json!("yEs")),
            ("0x", json!("0x")),
            ("1e400", json!("1e400")),
            ("-", json!("-")),
            ("2001-12-14", json!("2001-12-14")),
            ("1.2.3", json!("1.2.3")),
            ("_1", json!("_1")),
            ("<<", json!("<<")),
            ("0x1p3", json!("0x1p3")),
            ("100m", json!("100m")),
            ("256Mi", json!("256Mi")),
            ("1٣", json!("1٣")),
            ("0é", json!("0é")),
            ("9223372036854775807", json!(i64::MAX)),
            ("+9223372036854775807", json!(i64::MAX)),
            ("18446744073709551615", json!(u64::MAX)),
            ("18446744073709551616", json!(18_446_744_073_709_551_616f64)),
            ("-9223372036854775808", json!(i64::MIN)),
        ] {
            assert_eq!(plain(text), Ok(expected), "{text}");
        }
        // Read as a float (beyond int64), it stays one: -2^63 as Go writes
        // it, `-9223372036854776000`, is beyond int64 too.
        let below = plain("-9223372036854775809").unwrap();
        assert!(
            below.is_f64() && below.as_f64() == Some(-(2f64.powi(63))),
            "{below}"
        );
    }

    #[test]
    fn infinity_and_nan_cannot_be_sent() {
        for text in [".inf", "-.Inf", ".NaN", "+.INF"] {
            assert!(
                plain(text).unwrap_err().contains("kubectl cannot convert"),
                "{text}"
            );
        }
        assert_eq!(plain(".Nan"), Ok(json!(".Nan")));
    }

    #[test]
    fn quoted_and_tagged_scalars() {
        let int_tag = Tag::new(CORE, "int");
        let float_tag = Tag::new(CORE, "float");
        let str_tag = Tag::new(CORE, "str");
        let resolve_json = |text: &str, style, tag: Option<&Tag>| {
            resolve(Cow::Borrowed(text), style, tag)
                .and_then(to_tree)
                .map(Tree::into_value)
        };
        assert_eq!(
            resolve_json("010", ScalarStyle::DoubleQuoted, None),
            Ok(json!("010"))
        );
        assert_eq!(
            resolve_json("10", ScalarStyle::DoubleQuoted, Some(&int_tag)),
            Ok(json!(10))
        );
        assert_eq!(
            resolve_json("10", ScalarStyle::Plain, Some(&str_tag)),
            Ok(json!("10"))
        );
        assert_eq!(
            resolve_json("2", ScalarStyle::Plain, Some(&float_tag)),
            Ok(json!(2))
        );
        assert_eq!(
            resolve_json("abc", ScalarStyle::Plain, Some(&int_tag)),
            Err("cannot decode !!str `abc` as a !!int".to_owned())
        );
        assert_eq!(
            resolve_json("010", ScalarStyle::Plain, Some(&Tag::new("", "!"))),
            Ok(json!("010"))
        );
        assert_eq!(
            resolve_json("aGk=", ScalarStyle::Plain, Some(&Tag::new(CORE, "binary"))),
            Ok(json!("hi"))
        );
    }

    #[test]
    fn keys_become_strings_as_sigs_yaml_writes_them() {
        let key = |text: &str| {
            key_text(resolve(Cow::Borrowed(text), ScalarStyle::Plain, None).unwrap())
                .map(Cow::into_owned)
        };
        assert_eq!(key("010"), Ok("8".to_owned()));
        assert_eq!(key("yes"), Ok("true".to_owned()));
        assert_eq!(key("1.5"), Ok("1.5".to_owned()));
        assert_eq!(key("0.1"), Ok("0.1".to_owned()));
        assert_eq!(key("1e22"), Ok("1e+22".to_owned()));
        assert_eq!(key("1e6"), Ok("1e+06".to_owned()));
        assert_eq!(key("100000"), Ok("100000".to_owned()));
        assert_eq!(key("123456.7"), Ok("123456.7".to_owned()));
        assert_eq!(key("0.00001"), Ok("1e-05".to_owned()));
        assert_eq!(key(".inf"), Ok(".inf".to_owned()));
        assert!(key("~").is_err());
        assert!(key("18446744073709551615").is_err());
    }
}
