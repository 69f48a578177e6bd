//! One evaluation round: the enabled rules, the live ones included, over the
//! HPAs the caches hold in the namespaces that changed, with the caches as
//! the only source (no request to the API server). The result per HPA is one
//! [`Found`] per rule that found something.

use std::collections::BTreeMap;
use std::sync::Arc;

use hpa_lint_rules::cluster::Millis;
use hpa_lint_rules::registry::Rule;
use hpa_lint_rules::{Diagnostic, Operation, Settings, Severity, lint};

use crate::cache::{ClusterIndex, RequestIndex};
use crate::changes::Dirty;

/// What one rule found on one HPA.
#[derive(Clone, Debug, PartialEq)]
pub struct Found {
    /// The rule.
    pub rule: &'static Rule,
    /// Its severity, as configured.
    pub severity: Severity,
    /// The first finding: `field: message`.
    pub message: String,
    /// The object it is about when that is not the HPA (its target, say):
    /// `apiVersion`, `kind` and name.
    pub object: Option<(String, String, String)>,
    /// How many findings the rule made on the HPA.
    pub count: usize,
}

/// One HPA and what the rules found on it.
#[derive(Clone, Debug, PartialEq)]
pub struct HpaFindings {
    /// The HPA's name.
    pub name: String,
    /// Its uid, which Events and report results name.
    pub uid: Option<String>,
    /// One entry per rule that found something, most severe first.
    pub found: Vec<Found>,
}

/// The findings of every HPA of a namespace, by HPA name.
pub type NamespaceFindings = Vec<HpaFindings>;

/// Every namespace's findings, by namespace.
pub type Findings = BTreeMap<String, NamespaceFindings>;

fn found(diagnostics: Vec<Diagnostic>, hpa: &str) -> Vec<Found> {
    let mut found: Vec<Found> = Vec::new();
    for diagnostic in diagnostics {
        if let Some(same) = found
            .iter_mut()
            .find(|f| f.rule.name == diagnostic.rule.name)
        {
            same.count += 1;
            same.severity = same.severity.min(diagnostic.severity);
            continue;
        }
        let key = &diagnostic.subject.key;
        let object = (key.kind != "HorizontalPodAutoscaler" || key.name != hpa)
            .then(|| (key.api_version.clone(), key.kind.clone(), key.name.clone()));
        found.push(Found {
            rule: diagnostic.rule,
            severity: diagnostic.severity,
            message: diagnostic.field_message(),
            object,
            count: 1,
        });
    }
    found.sort_by(|a, b| (a.severity, a.rule.name).cmp(&(b.severity, b.rule.name)));
    found
}

/// The findings of the HPAs in the namespaces `dirty` names (and in those
/// `known` has that no longer hold any HPA, which come back empty), judged
/// as of `now` with `settings` (live).
pub fn evaluate(
    index: &ClusterIndex,
    settings: &Settings,
    dirty: &Dirty,
    known: &Findings,
) -> Findings {
    let mut out: Findings = known
        .keys()
        .filter(|ns| dirty.covers(ns))
        .map(|ns| (ns.clone(), Vec::new()))
        .collect();
    let mut hpas = index.hpas();
    hpas.retain(|hpa| dirty.covers(hpa.namespace()));
    hpas.sort_by(|a, b| (a.namespace(), a.name()).cmp(&(b.namespace(), b.name())));
    for hpa in hpas {
        let Some(object) = hpa.object() else {
            continue;
        };
        let view = RequestIndex::new(index);
        let diagnostics = lint(&object, Operation::Create, &view, settings);
        out.entry(hpa.namespace().to_owned())
            .or_default()
            .push(HpaFindings {
                name: hpa.name().to_owned(),
                uid: hpa.uid().map(str::to_owned),
                found: found(diagnostics, hpa.name()),
            });
    }
    out
}

/// The time now, in milliseconds since the epoch, as the rules take it.
pub fn now() -> Millis {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Millis::try_from(since_epoch.as_millis()).unwrap_or(Millis::MAX)
}

/// Shared by the tasks that read the findings.
pub type SharedFindings = Arc<std::sync::RwLock<Findings>>;
