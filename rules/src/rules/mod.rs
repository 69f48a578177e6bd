//! Every rule, one per file. [`ALL`] is the registry: input rules first, then the
//! API-server rules in the order the server emits its errors, then the rest.

pub mod container_not_found;
pub mod deprecated_api_version;
pub mod duplicate_key;
pub mod duplicate_target;
pub mod helm_template;
pub mod ineffective_policy;
pub mod invalid_annotations;
pub mod invalid_container_name;
pub mod invalid_field_type;
pub mod invalid_labels;
pub mod invalid_metadata;
pub mod invalid_metric_name;
pub mod invalid_metric_source;
pub mod invalid_metric_target;
pub mod invalid_name;
pub mod invalid_namespace;
pub mod invalid_object_reference;
pub mod invalid_quantity;
pub mod invalid_replicas;
pub mod invalid_resource_name;
pub mod invalid_scale_to_zero;
pub mod invalid_scaling_policy;
pub mod invalid_select_policy;
pub mod invalid_stabilization_window;
pub mod invalid_suppression;
pub mod invalid_tolerance;
pub mod invalid_yaml;
pub mod metric_target_type_mismatch;
pub mod min_equals_max;
pub mod overprovisioned_min_replicas;
pub mod pdb_blocks_eviction;
pub mod pinned_at_max_replicas;
pub mod scaling_disabled;
pub mod scaling_inactive;
pub mod single_replica_floor;
pub mod slow_scale_up;
pub mod target_missing_requests;
pub mod target_not_found;
pub mod target_not_scalable;
pub mod target_replicas_conflict;
pub mod tolerance_dropped;
pub mod unknown_field;
pub mod unknown_metric_value;
pub mod utilization_target_unreachable;
pub mod vpa_conflict;

use crate::registry::Rule;

/// Every rule, in documentation order.
pub static ALL: &[&Rule] = &[
    &invalid_yaml::RULE,
    &duplicate_key::RULE,
    &helm_template::RULE,
    &invalid_suppression::RULE,
    &unknown_field::RULE,
    &invalid_field_type::RULE,
    &invalid_quantity::RULE,
    &invalid_name::RULE,
    &invalid_namespace::RULE,
    &invalid_labels::RULE,
    &invalid_annotations::RULE,
    &invalid_metadata::RULE,
    &invalid_replicas::RULE,
    &invalid_object_reference::RULE,
    &invalid_metric_source::RULE,
    &invalid_metric_name::RULE,
    &invalid_resource_name::RULE,
    &invalid_container_name::RULE,
    &invalid_metric_target::RULE,
    &invalid_scale_to_zero::RULE,
    &invalid_stabilization_window::RULE,
    &invalid_select_policy::RULE,
    &invalid_scaling_policy::RULE,
    &invalid_tolerance::RULE,
    &min_equals_max::RULE,
    &scaling_disabled::RULE,
    &slow_scale_up::RULE,
    &ineffective_policy::RULE,
    &target_not_found::RULE,
    &target_not_scalable::RULE,
    &target_missing_requests::RULE,
    &container_not_found::RULE,
    &target_replicas_conflict::RULE,
    &duplicate_target::RULE,
    &pdb_blocks_eviction::RULE,
    &deprecated_api_version::RULE,
    &tolerance_dropped::RULE,
    &metric_target_type_mismatch::RULE,
    &utilization_target_unreachable::RULE,
    &vpa_conflict::RULE,
    &single_replica_floor::RULE,
    &scaling_inactive::RULE,
    &unknown_metric_value::RULE,
    &pinned_at_max_replicas::RULE,
    &overprovisioned_min_replicas::RULE,
];

#[cfg(test)]
mod tests {
    use super::ALL;
    use crate::registry::{Category, Check, Rule};
    use crate::settings::Settings;
    use crate::testing::{lint_yaml, only_with, render};

    /// The first fenced YAML block after `marker` in a rule's docs.
    fn yaml_after<'d>(docs: &'d str, marker: &str) -> Option<&'d str> {
        let rest = &docs[docs.find(marker)?..];
        let start = rest.find("```yaml\n")? + "```yaml\n".len();
        let end = rest[start..].find("```")?;
        Some(&rest[start..start + end])
    }

    fn is_kebab_case(name: &str) -> bool {
        !name.is_empty()
            && !name.starts_with('-')
            && !name.ends_with('-')
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    }

    #[test]
    fn names_are_unique_kebab_case_and_short() {
        let mut names: Vec<&str> = ALL.iter().map(|r| r.name).collect();
        assert!(
            names.iter().all(|n| is_kebab_case(n) && n.len() <= 63),
            "{names:?}"
        );
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ALL.len(), "duplicate rule names");
    }

    #[test]
    fn every_rule_is_documented() {
        for rule in ALL {
            let why = if rule.category == Category::Pedantic {
                "## Why might you want this?"
            } else {
                "## Why is this bad?"
            };
            for section in ["## What it does", why, "## Example", "Use instead"] {
                assert!(
                    rule.docs.contains(section),
                    "`{}` docs lack {section:?}",
                    rule.name
                );
            }
            assert_eq!(
                rule.docs.contains("## API server"),
                rule.category == Category::ApiServer,
                "`{}`: API-server rules, and only they, document the server's message",
                rule.name
            );
            let summary = rule.summary;
            assert!(
                !summary.is_empty() && !summary.ends_with('.'),
                "`{}` summary",
                rule.name
            );
        }
    }

    /// The settings a rule's examples are linted with: the default ones, or
    /// those of the release the example names (`With `--kube-version 1.34`:`
    /// right below `## Example`) when the rule depends on it.
    fn example_settings(rule: &Rule) -> Settings {
        let version = rule
            .docs
            .split_once("## Example\nWith `--kube-version ")
            .and_then(|(_, rest)| rest.split_once('`'))
            .map(|(version, _)| version.parse().expect("a supported version"));
        let mut settings = only_with(rule, version.map_or_else(Settings::default, Settings::new));
        // The moment live examples are read at, after their timestamps.
        settings.now = crate::model::status::parse_time(crate::testing::LIVE_NOW);
        settings
    }

    #[test]
    fn doc_examples_trigger_their_rule_and_the_fix_does_not() {
        for rule in ALL {
            let example = yaml_after(rule.docs, "## Example")
                .unwrap_or_else(|| panic!("`{}` example", rule.name));
            let fixed = yaml_after(rule.docs, "Use instead")
                .unwrap_or_else(|| panic!("`{}` fix", rule.name));
            let settings = example_settings(rule);
            let findings = lint_yaml(example, &settings);
            assert!(
                findings.iter().any(|f| f.rule == rule.name),
                "`{}`: the example does not trigger the rule",
                rule.name
            );
            let findings = lint_yaml(fixed, &settings);
            assert!(
                findings.is_empty(),
                "`{}`: the fixed example still triggers it:\n{}",
                rule.name,
                render(&findings)
            );
        }
    }

    #[test]
    fn every_checked_rule_has_a_fixture() {
        let checked = ALL
            .iter()
            .filter(|r: &&&Rule| matches!(r.check, Check::Hpa(_)));
        for rule in checked {
            let path = format!("{}/fixtures/{}.yaml", env!("CARGO_MANIFEST_DIR"), rule.name);
            assert!(
                std::path::Path::new(&path).is_file(),
                "missing fixture {path}"
            );
        }
    }
}
