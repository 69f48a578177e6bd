//! Go's numeric conversions where they differ from Rust's (C5.9): the
//! controller's results depend on them at the edges, so they are reproduced,
//! as kube-controller-manager computes them on amd64.

/// `int32(f)` for a float64 `f`: truncation, and on amd64 (`CVTTSD2SL`) the
/// "integer indefinite" `MinInt32` for NaN and values out of range, where Rust's
/// `as` would saturate.
pub(crate) fn f64_to_i32(f: f64) -> i32 {
    if !(-2_147_483_648.0..2_147_483_648.0).contains(&f) {
        i32::MIN
    } else {
        f as i32
    }
}

/// `int64(f)` for a float64 `f`, as [`f64_to_i32`] (`CVTTSD2SQ`).
pub(crate) fn f64_to_i64(f: f64) -> i64 {
    if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
        i64::MIN
    } else {
        f as i64
    }
}

/// `int32(math.Ceil(f))`.
pub(crate) fn ceil_i32(f: f64) -> i32 {
    f64_to_i32(f.ceil())
}

/// `math.Pow10(n)`: products and quotients of exactly rounded powers, not `powi`.
pub(crate) fn pow10(n: i32) -> f64 {
    fn tab(k: u32) -> f64 {
        format!("1e{k}").parse().unwrap_or(f64::INFINITY)
    }
    if (0..=308).contains(&n) {
        let n = n.unsigned_abs();
        tab((n / 32) * 32) * tab(n % 32)
    } else if (-323..0).contains(&n) {
        let n = n.unsigned_abs();
        let big: f64 = format!("1e-{}", (n / 32) * 32).parse().unwrap_or(0.0);
        big / tab(n % 32)
    } else if n > 0 {
        f64::INFINITY
    } else {
        0.0
    }
}

/// A JSON number as the server gets it from kubectl, which writes it with
/// Go's `encoding/json` (the server's errors quote that text): int64s in
/// full, other numbers as float64s in their shortest form, with an exponent
/// below 1e-6 and from 1e21 (`1e+21`, `1e-7`).
pub(crate) fn json_number(number: &serde_json::Number) -> String {
    // kubectl reads the object into `map[string]interface{}` first, where an
    // integer beyond int64 becomes a float64 (`convertNumber`).
    let Some(f) = number.as_f64().filter(|_| !number.is_i64()) else {
        return number.to_string();
    };
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let text = format!("{f:e}");
        match text.split_once('e') {
            Some((mantissa, exponent)) if !exponent.starts_with('-') => {
                format!("{mantissa}e+{exponent}")
            }
            _ => text,
        }
    } else {
        f.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_follow_amd64() {
        assert_eq!(f64_to_i32(2.9), 2);
        assert_eq!(f64_to_i32(-2.9), -2);
        assert_eq!(f64_to_i32(2_147_483_647.0), i32::MAX);
        assert_eq!(f64_to_i32(2_147_483_648.0), i32::MIN);
        assert_eq!(f64_to_i32(f64::NAN), i32::MIN);
        assert_eq!(f64_to_i64(1e19), i64::MIN);
        assert_eq!(ceil_i32(28.000_000_000_000_004), 29);
    }

    #[test]
    fn pow10_matches_go() {
        assert_eq!(pow10(0), 1.0);
        assert_eq!(pow10(-1), 0.1);
        assert_eq!(pow10(-3), 0.001);
        assert_eq!(3.0 * pow10(-1), 0.300_000_000_000_000_04);
        assert_eq!(pow10(40), 1e40);
    }

    /// What `json.Marshal` of these float64s gives in Go.
    #[test]
    fn writes_json_numbers_as_go_does() {
        let cases = [
            (serde_json::json!(1e20), "100000000000000000000"),
            (serde_json::json!(1e21), "1e+21"),
            (
                serde_json::json!(1.2345678901234568e23),
                "1.2345678901234569e+23",
            ),
            (serde_json::json!(2.5), "2.5"),
            (serde_json::json!(1e-7), "1e-7"),
            (serde_json::json!(1.5e-10), "1.5e-10"),
            (serde_json::json!(0.000001), "0.000001"),
            (serde_json::json!(-0.0), "-0"),
            (serde_json::json!(3_000_000_000_u64), "3000000000"),
            (
                serde_json::json!(9_223_372_036_854_775_808_u64),
                "9223372036854776000",
            ),
            (serde_json::json!(-7), "-7"),
        ];
        for (value, go) in cases {
            let serde_json::Value::Number(number) = &value else {
                unreachable!()
            };
            assert_eq!(json_number(number), go, "{value}");
        }
    }
}
