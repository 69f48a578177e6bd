//! Suggestions for misspelt names: rule names in configuration and
//! suppressions, field names in manifests.

/// The candidate nearest to `name` within `max` typing mistakes (letters
/// added, removed, replaced or swapped); `None` when none is that close or two
/// are equally close. A different letter case alone counts as the closest.
pub fn closest<'c>(
    name: &str,
    candidates: impl IntoIterator<Item = &'c str>,
    max: usize,
) -> Option<&'c str> {
    // The distance is at least the difference in length: skipping the far ones
    // keeps a megabyte-long name from costing a quadratic comparison.
    let length = name.chars().count();
    let mut close: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter(|c| length.abs_diff(c.chars().count()) <= max)
        .filter_map(|c| {
            let mistakes = if c.eq_ignore_ascii_case(name) {
                0
            } else {
                strsim::osa_distance(name, c) + 1
            };
            (mistakes <= max + 1).then_some((mistakes, c))
        })
        .collect();
    close.sort_unstable();
    match close.as_slice() {
        [(best, found), rest @ ..] if rest.first().is_none_or(|(d, _)| d > best) => Some(found),
        _ => None,
    }
}

/// ` (did you mean `x`?)`, or nothing.
pub fn did_you_mean(suggestion: Option<&str>) -> String {
    suggestion
        .map(|name| format!(" (did you mean `{name}`?)"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_one_close_name() {
        let fields = [
            "stabilizationWindowSeconds",
            "selectPolicy",
            "policies",
            "tolerance",
        ];
        assert_eq!(
            closest("stabilizationWindowSecond", fields, 2),
            Some("stabilizationWindowSeconds")
        );
        assert_eq!(closest("SelectPolicy", fields, 2), Some("selectPolicy"));
        assert_eq!(closest("tolerence", fields, 2), Some("tolerance"));
        assert_eq!(closest("replicas", fields, 2), None);
        assert_eq!(closest("ab", ["ac", "ad"], 1), None);
        assert_eq!(closest(&"x".repeat(1_000_000), fields, 2), None);
        assert_eq!(did_you_mean(Some("a")), " (did you mean `a`?)");
        assert_eq!(did_you_mean(None), "");
    }
}
