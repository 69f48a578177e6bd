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
}
