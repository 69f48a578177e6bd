//! Every rule, one per file. [`ALL`] is the registry: input rules first, then the
//! API-server rules in the order the server emits its errors, then the rest.

mod live;

use thiserror::Error;

use crate::context::Check;
use crate::diagnostic::{Diagnostic, Severity};
use crate::reads::Needs;
use crate::registry::{Category, Rule};
use crate::settings::{Level, Settings};

/// Declares the rule modules and the registry of them, in documentation order.
macro_rules! rules {
    ($($rule:ident),* $(,)?) => {
        $(pub mod $rule;)*

        /// Every rule, in documentation order.
        pub static ALL: &[&Rule] = &[$(&$rule::RULE),*];

        /// Every rule's check, in the same order.
        pub(crate) static CHECKS: &[(&Rule, Check)] = &[$((&$rule::RULE, $rule::CHECK)),*];
    };
}

rules! {
    invalid_yaml,
    duplicate_key,
    helm_template,
    invalid_suppression,
    unknown_field,
    invalid_field_type,
    invalid_quantity,
    invalid_name,
    invalid_namespace,
    invalid_labels,
    invalid_annotations,
    invalid_metadata,
    invalid_replicas,
    invalid_object_reference,
    invalid_metric_source,
    invalid_metric_name,
    invalid_resource_name,
    invalid_container_name,
    invalid_metric_target,
    invalid_scale_to_zero,
    invalid_stabilization_window,
    invalid_select_policy,
    invalid_scaling_policy,
    invalid_tolerance,
    min_equals_max,
    scaling_disabled,
    slow_scale_up,
    ineffective_policy,
    target_not_found,
    target_not_scalable,
    target_missing_requests,
    container_not_found,
    target_replicas_conflict,
    duplicate_target,
    pdb_blocks_eviction,
    deprecated_api_version,
    tolerance_dropped,
    metric_target_type_mismatch,
    metric_target_overflow,
    utilization_target_unreachable,
    vpa_conflict,
    single_replica_floor,
    implicit_behavior,
    scaling_inactive,
    unknown_metric_value,
    pinned_at_max_replicas,
    overprovisioned_min_replicas,
}

/// The rule with this name.
pub fn by_name(name: &str) -> Option<&'static Rule> {
    ALL.iter().copied().find(|r| r.name == name)
}

/// What the rules enabled in `settings` read besides the objects they check:
/// what a front end must hold for them.
pub fn reads(settings: &Settings) -> Needs {
    Needs::of(
        ALL.iter()
            .filter(|rule| !rule.reads.is_empty() && settings.severity(rule).is_some())
            .flat_map(|rule| rule.reads),
    )
}

/// How many typing mistakes a misspelt rule name may have.
const MAX_MISTAKES: usize = 3;

/// The registered name nearest to a misspelt one, if one is close.
pub fn closest_name(name: &str) -> Option<&'static str> {
    crate::suggest::closest(name, ALL.iter().map(|r| r.name), MAX_MISTAKES)
}

/// A `--select` or `--ignore` value that names no rule or category.
#[derive(Debug, Error)]
#[error("unknown rule or category `{selector}`{}", crate::suggest::did_you_mean(*.closest))]
pub struct UnknownSelector {
    /// The value given.
    pub selector: String,
    /// The rule name it is nearest to, if one is close.
    pub closest: Option<&'static str>,
}

/// The rules a selector names: a rule name, a category name or `all`.
pub fn matching(selector: &str) -> Result<Vec<&'static Rule>, UnknownSelector> {
    let selector = selector.trim();
    if selector == "all" {
        return Ok(ALL.to_vec());
    }
    if let Some(category) = Category::ALL.iter().find(|c| c.as_str() == selector) {
        return Ok(ALL
            .iter()
            .copied()
            .filter(|r| r.category == *category)
            .collect());
    }
    by_name(selector)
        .map(|r| vec![r])
        .ok_or_else(|| UnknownSelector {
            selector: selector.to_owned(),
            closest: closest_name(selector),
        })
}

/// Keeps only the rules matched by `selectors` (`--select`), turning on those
/// that are off by default.
pub fn select(settings: &mut Settings, selectors: &[String]) -> Result<(), UnknownSelector> {
    let mut keep = Vec::new();
    for selector in selectors {
        keep.extend(matching(selector)?);
    }
    for rule in ALL {
        if keep.contains(rule) {
            settings.enable(rule);
        } else {
            settings.set_level(rule, Level::Off);
        }
    }
    Ok(())
}

/// Turns off the rules matched by `selectors` (`--ignore`).
pub fn ignore(settings: &mut Settings, selectors: &[String]) -> Result<(), UnknownSelector> {
    for selector in selectors {
        for rule in matching(selector)? {
            settings.set_level(rule, Level::Off);
        }
    }
    Ok(())
}

/// Whether kubectl or the API server stops at what `finding` reports: an
/// error of the server's rules, or of a document kubectl cannot read (a
/// repeated key, bad syntax). Such an object never reaches a controller.
pub fn is_rejection(finding: &Diagnostic) -> bool {
    finding.severity == Severity::Error
        && (finding.rule.category == Category::ApiServer
            || [&duplicate_key::RULE, &invalid_yaml::RULE].contains(&finding.rule))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::{ALL, CHECKS, by_name, reads, select};
    use crate::context::{Check, Operation};
    use crate::diagnostic::Severity;
    use crate::index::MemoryIndex;
    use crate::lint::lint;
    use crate::model::autoscaler::{VPA, scale_target};
    use crate::model::disruption::PDB;
    use crate::model::workload::LIMIT_RANGE;
    use crate::model::workload::meant_target;
    use crate::object::Object;
    use crate::reads::{Needs, Reads};
    use crate::registry::{Category, FixAvailability, Rule};
    use crate::settings::{Level, Settings};
    use crate::testing::{
        Asked, Recording, count_fixes, lint_yaml, objects, only_with, render, rule_fixture,
    };

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

    /// Whether `read` covers a question asked while linting `hpa`.
    fn covers(read: Reads, asked: &Asked, hpa: &Object, settings: &Settings) -> bool {
        match (read, asked) {
            (Reads::ScaleTarget, Asked::Get(reference)) => {
                let target = scale_target(hpa);
                let meant = target
                    .as_ref()
                    .and_then(|t| meant_target(&settings.cluster, t));
                [target, meant].contains(&Some(reference.clone()))
            }
            (Reads::Autoscalers, Asked::ScalersOf) => true,
            (Reads::Listed(kind), Asked::List(group, name)) => kind.is(group, name),
            (Reads::Named(kind), Asked::Get(reference)) => {
                kind.is(&reference.group, &reference.kind)
            }
            _ => false,
        }
    }

    /// Lints the HPAs of each rule's fixture and doc examples, with the
    /// rule alone on, through an index that records every question, and
    /// checks each question against the rule's declared reads, and that each
    /// declared read is asked somewhere: the declarations, from which the
    /// front ends choose what to hold, are exact.
    #[test]
    fn rules_read_what_they_declare() {
        for &(rule, check) in CHECKS {
            let texts = match check {
                Check::Hpa(_) => [
                    rule_fixture(rule.name),
                    yaml_after(rule.docs, "## Example").unwrap().to_owned(),
                    yaml_after(rule.docs, "Use instead").unwrap().to_owned(),
                ],
                _ => {
                    assert!(rule.reads.is_empty(), "`{}` checks one object", rule.name);
                    continue;
                }
            };
            let mut settings = example_settings(rule);
            // The live rules read the cluster's state only on live objects.
            settings.live = rule.category == Category::Live;
            let mut used = vec![false; rule.reads.len()];
            for text in &texts {
                let all = objects(text);
                let index = MemoryIndex::new(all.iter().cloned());
                for hpa in all.iter().filter(|o| o.is_hpa()) {
                    let recording = Recording {
                        inner: &index,
                        asked: Mutex::default(),
                    };
                    lint(hpa, Operation::Create, &recording, &settings);
                    for asked in recording.asked.into_inner().unwrap() {
                        let Some(i) = rule
                            .reads
                            .iter()
                            .position(|&read| covers(read, &asked, hpa, &settings))
                        else {
                            panic!("`{}` asks {asked:?}, which it does not declare", rule.name)
                        };
                        used[i] = true;
                    }
                }
            }
            for (read, used) in rule.reads.iter().zip(used) {
                assert!(used, "`{}` declares {read:?} but never reads it", rule.name);
            }
        }
    }

    #[test]
    fn the_enabled_rules_decide_what_is_read() {
        let mut settings = Settings::default();
        let needs = reads(&settings);
        assert!(needs.scale_targets && needs.autoscalers);
        assert_eq!(needs.listed, [LIMIT_RANGE, PDB, VPA]);
        // The live rules are off on manifests.
        assert!(needs.named.is_empty());
        settings.set_level(by_name("vpa-conflict").unwrap(), Level::Off);
        assert!(!reads(&settings).listed.contains(&VPA));
        select(&mut settings, &["min-equals-max".to_owned()]).unwrap();
        assert_eq!(reads(&settings), Needs::default());
    }

    /// What a rule declares about its fixes is what its findings carry, and
    /// a rule that fixes has a `.fix.yaml` fixture.
    #[test]
    fn fix_availability_is_what_the_findings_carry() {
        for rule in ALL {
            let mut texts = vec![rule_fixture(rule.name)];
            texts.extend(yaml_after(rule.docs, "## Example").map(str::to_owned));
            let fix_fixture = format!(
                "{}/fixtures/{}.fix.yaml",
                env!("CARGO_MANIFEST_DIR"),
                rule.name
            );
            if rule.fix != FixAvailability::None {
                texts.push(std::fs::read_to_string(&fix_fixture).expect("a fix fixture"));
            }
            let (mut found, mut fixed) = (0, 0);
            for text in &texts {
                let (f, x) = count_fixes(rule, text, example_settings(rule));
                found += f;
                fixed += x;
            }
            let expected = match rule.fix {
                FixAvailability::None => fixed == 0,
                FixAvailability::Sometimes => fixed > 0,
                FixAvailability::Always => fixed == found,
            };
            assert!(
                expected,
                "`{}` declares fixes {:?}; {fixed} of {found} findings carry one",
                rule.name, rule.fix
            );
        }
    }

    #[test]
    fn every_rule_has_a_fixture() {
        for rule in ALL {
            let path = format!("{}/fixtures/{}.yaml", env!("CARGO_MANIFEST_DIR"), rule.name);
            assert!(
                std::path::Path::new(&path).is_file(),
                "missing fixture {path}"
            );
        }
    }

    #[test]
    fn live_objects_run_the_live_rules_and_not_the_manifest_ones() {
        let rule = |name| by_name(name).unwrap();
        let mut settings = Settings::default();
        assert_eq!(settings.severity(rule("scaling-inactive")), None);
        assert!(
            settings
                .severity(rule("target-replicas-conflict"))
                .is_some()
        );
        settings.live = true;
        assert_eq!(
            settings.severity(rule("scaling-inactive")),
            Some(Severity::Error)
        );
        for manifest_only in [
            "target-replicas-conflict",
            "deprecated-api-version",
            "invalid-yaml",
        ] {
            assert_eq!(
                settings.severity(rule(manifest_only)),
                None,
                "{manifest_only}"
            );
        }
        // Configured off stays off, selected or not.
        settings.set_level(rule("scaling-inactive"), Level::Off);
        assert_eq!(settings.severity(rule("scaling-inactive")), None);
        select(&mut settings, &["target-replicas-conflict".to_owned()]).unwrap();
        assert_eq!(settings.severity(rule("target-replicas-conflict")), None);
        // On manifests, `--select live` turns them on.
        let mut manifests = Settings::default();
        select(&mut manifests, &["live".to_owned()]).unwrap();
        assert_eq!(
            manifests.severity(rule("pinned-at-max-replicas")),
            Some(Severity::Info)
        );
    }
}
