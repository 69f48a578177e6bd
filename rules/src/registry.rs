//! The rule registry: every rule's metadata and check, in one static list.
//!
//! A rule is a `static` [`Rule`] in its own file under `rules/`; the list
//! [`ALL`] is the single place that names them all. `hpa-lint rules`, `explain`,
//! SARIF rule metadata and the configuration all read from here.

use std::fmt;

use crate::diagnostic::Severity;
use crate::lint::{Context, Report};

pub use crate::rules::ALL;

/// What kind of problem a rule finds; also a selector for `--select`/`--ignore`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    /// The input cannot be read as Kubernetes objects (syntax, templates, suppressions).
    Input,
    /// The API server rejects the object (same paths and messages as the server).
    ApiServer,
    /// Accepted by the API server, but the HPA cannot work as written.
    Correctness,
    /// Probably a mistake.
    Suspicious,
    /// Opinions; off unless selected.
    Pedantic,
    /// What the status of a live HPA shows (it does not scale, its metrics
    /// are unknown, it sits at a bound): on in `kubectl hpa-lint`, off on
    /// manifests unless selected.
    Live,
}

impl Category {
    /// Every category, in documentation order.
    pub const ALL: [Category; 6] = [
        Category::Input,
        Category::ApiServer,
        Category::Correctness,
        Category::Suspicious,
        Category::Pedantic,
        Category::Live,
    ];

    /// The selector name, e.g. `api-server`.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Input => "input",
            Category::ApiServer => "api-server",
            Category::Correctness => "correctness",
            Category::Suspicious => "suspicious",
            Category::Pedantic => "pedantic",
            Category::Live => "live",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a rule finds its problems.
#[derive(Clone, Copy)]
pub enum Check {
    /// Reported while reading the input or the object itself (syntax errors,
    /// templates, decoding, suppressions), not by a per-HPA check.
    Input,
    /// Runs once for every HPA.
    Hpa(fn(&Context<'_>, &mut Report<'_>)),
}

/// Whether a rule's findings carry a [`crate::fix::Fix`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FixAvailability {
    /// Never: the fix needs a decision only the author can make.
    None,
    /// For some findings (when the rule can tell what was meant).
    Sometimes,
    /// For every finding.
    Always,
}

impl FixAvailability {
    /// The lowercase name used in output: `none`, `sometimes`, `always`.
    pub fn as_str(self) -> &'static str {
        match self {
            FixAvailability::None => "none",
            FixAvailability::Sometimes => "sometimes",
            FixAvailability::Always => "always",
        }
    }
}

/// One rule: metadata, documentation and check.
pub struct Rule {
    /// Stable kebab-case name, used in output, configuration and suppressions.
    pub name: &'static str,
    /// Category.
    pub category: Category,
    /// Default severity.
    pub severity: Severity,
    /// One line for `hpa-lint rules` and SARIF.
    pub summary: &'static str,
    /// Markdown documentation for `hpa-lint explain`: what it does, why, an
    /// example that triggers it and one that does not, how to fix it.
    pub docs: &'static str,
    /// Whether its findings carry a fix.
    pub fix: FixAvailability,
    /// The check.
    pub check: Check,
}

impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl PartialEq for Rule {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

/// Index of a rule in [`ALL`].
pub(crate) fn position(rule: &Rule) -> usize {
    ALL.iter()
        .position(|r| r.name == rule.name)
        .expect("every rule is registered in ALL")
}

/// The rule with this name.
pub fn by_name(name: &str) -> Option<&'static Rule> {
    ALL.iter().copied().find(|r| r.name == name)
}

/// The rules a selector names: a rule name, a category name or `all`.
pub fn select(selector: &str) -> Result<Vec<&'static Rule>, String> {
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
    by_name(selector).map(|r| vec![r]).ok_or_else(|| {
        let hint = crate::suggest::did_you_mean(closest_name(selector));
        format!("unknown rule or category `{selector}`{hint}")
    })
}

/// How many typing mistakes a misspelt rule name may have.
const MAX_MISTAKES: usize = 3;

/// The registered name nearest to a misspelt one, if one is close.
pub fn closest_name(name: &str) -> Option<&'static str> {
    crate::suggest::closest(name, ALL.iter().map(|r| r.name), MAX_MISTAKES)
}
