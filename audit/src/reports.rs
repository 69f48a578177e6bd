//! `--from-reports`: the findings the webhook's reporting mode wrote into
//! policy reports (OpenReports `Report` where served, else wg-policy
//! `PolicyReport`), read back as findings: for a user who may list the
//! reports but not the workloads, and without running the rules here.

use std::collections::BTreeSet;
use std::sync::Arc;

use anyhow::{Result, bail};
use hpa_lint::report::{Finding, Outcome, Summary, sort_findings};
use hpa_lint_rules::rules::ALL;
use hpa_lint_rules::{Diagnostic, FieldPath, ObjectKey, Origin, Severity, Subject};
use serde_json::Value;

use crate::cluster::{Cluster, Failure};

/// The report APIs the reporting mode writes, preferred first.
const APIS: [(&str, &str, &str); 2] = [
    ("openreports.io", "v1alpha1", "Report"),
    ("wgpolicyk8s.io", "v1alpha2", "PolicyReport"),
];

/// The label on the reports the webhook writes.
const MANAGED_BY: &str = "app.kubernetes.io/managed-by=hpa-lint";

fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// A report result as a finding; `None` for a pass, or a rule this
/// version does not know.
fn finding(result: &Value) -> Option<Finding> {
    let rule = ALL
        .iter()
        .find(|rule| rule.name == text(result, "/policy"))?;
    let severity = match (text(result, "/result"), text(result, "/severity")) {
        ("fail", _) => Severity::Error,
        ("warn", "info") => Severity::Info,
        ("warn", _) => Severity::Warning,
        _ => return None,
    };
    // The object at fault is the second subject when it is not the HPA.
    let subject = result
        .pointer("/resources/1")
        .or_else(|| result.pointer("/resources/0"))?;
    let key = ObjectKey {
        api_version: text(subject, "/apiVersion").to_owned(),
        kind: text(subject, "/kind").to_owned(),
        namespace: text(subject, "/namespace").to_owned(),
        name: text(subject, "/name").to_owned(),
    };
    Some(Finding {
        diagnostic: Diagnostic {
            rule,
            severity,
            subject: Subject {
                key: Arc::new(key),
                origin: Origin::default(),
            },
            path: FieldPath::default(),
            source_path: FieldPath::default(),
            reason: None,
            // The report holds `field: message` already.
            message: text(result, "/message").to_owned(),
            help: None,
            fix: None,
        },
        location: None,
    })
}

/// The findings of the reports in `namespace` (all when `None`), of the
/// HPAs named in `names` (all when empty).
pub async fn read(cluster: &Cluster, namespace: Option<&str>, names: &[String]) -> Result<Outcome> {
    let mut found = None;
    for (group, version, kind) in APIS {
        match cluster.find_kind(group, version, kind).await {
            Ok(Some((resource, _))) => {
                found = Some(resource);
                break;
            }
            Ok(None) | Err(Failure::Absent) => {}
            Err(failure) => bail!("cannot look for {kind} ({group}/{version}): {failure}"),
        }
    }
    let Some(resource) = found else {
        bail!(
            "no report API is served (openreports.io/v1alpha1 Report, wgpolicyk8s.io/v1alpha2 PolicyReport): the webhook's reporting mode writes none here"
        );
    };
    let take = |report: Value| Some(report);
    let (reports, _) = match cluster
        .list(
            &resource,
            namespace,
            Some(MANAGED_BY),
            &hpa_lint_rules::source::ALL,
            &take,
        )
        .await
    {
        Ok(listed) => listed,
        Err(failure) => bail!("cannot list {resource}: {failure}"),
    };
    let wanted = |result: &Value| {
        names.is_empty() || names.iter().any(|n| n == text(result, "/resources/0/name"))
    };
    let mut hpas = BTreeSet::new();
    let mut findings = Vec::new();
    for report in &reports {
        for result in report["results"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| wanted(r))
        {
            hpas.insert((
                text(result, "/resources/0/namespace"),
                text(result, "/resources/0/name"),
            ));
            findings.extend(finding(result));
        }
    }
    sort_findings(&mut findings);
    let summary = Summary {
        context: Some(cluster.context.clone()),
        hpas: hpas.len(),
        objects: reports.len(),
        ..Summary::default()
    };
    Ok(Outcome {
        findings,
        summary,
        input_errors: Vec::new(),
    })
}
