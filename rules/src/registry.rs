//! What a rule is: its metadata and documentation. A rule is a `static`
//! [`Rule`] in its own file under `rules/`, next to its check; the list of
//! them all is [`crate::rules::ALL`]. `hpa-lint rules`, `explain`, SARIF rule
//! metadata and the configuration read from here.

use std::fmt;

use crate::diagnostic::Severity;
use crate::reads::Reads;

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
    /// Whether it is only about manifests, and off on objects read from a
    /// cluster (where every workload has `spec.replicas`, and objects come
    /// at the version asked for).
    pub manifests_only: bool,
    /// What it reads besides the object it checks: what the front ends
    /// must hold for it (see [`crate::reads`]).
    pub reads: &'static [Reads],
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
