//! Policy reports: one per namespace, named `hpa-lint`, in the report API the
//! cluster serves (discovery): the OpenReports `openreports.io/v1alpha1`
//! `Report` where it is installed, else the wg-policy
//! `wgpolicyk8s.io/v1alpha2` `PolicyReport` (Kyverno's default). The two
//! schemas hold the same results; `Report` adds `source` and
//! `configuration.limits`.
//!
//! A report holds a result per HPA and rule that found something (`fail` for
//! errors, `warn` for warnings and infos, with the severity and the first
//! message; the HPA is the first subject, the object at fault the second
//! when it is another), and one `pass` per HPA with no finding. Its size is
//! bounded: most severe first, at most `max_results` results and
//! [`MAX_REPORT_BYTES`] of them; what is left out is counted in the
//! `hpa-lint.io/omitted-results` annotation. A result keeps the timestamp of
//! the same result in the report it replaces, so that an unchanged report
//! is byte for byte the same and is not written again.

use std::collections::HashMap;

use hpa_lint_rules::Severity;
use hpa_lint_rules::quote::truncate;
use kube::api::{ApiResource, DynamicObject};
use serde_json::{Map, Value, json};

use super::evaluate::HpaFindings;

/// Every report's name.
pub const NAME: &str = "hpa-lint";

/// The label that marks the reports (and nothing else) as hpa-lint's.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "hpa-lint");

/// How many results were left out of a report.
pub const OMITTED: &str = "hpa-lint.io/omitted-results";

/// The most a report's results take as JSON: etcd stores objects up to
/// 1.5 MiB by default, and the rest of the object (metadata, managed
/// fields, summary) is small.
pub const MAX_REPORT_BYTES: usize = 1024 * 1024;

/// The most of a finding's message a result keeps.
const MAX_RESULT_MESSAGE_BYTES: usize = 1024;

/// The report APIs, in the order `auto` prefers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportApi {
    /// `openreports.io/v1alpha1` `Report`.
    #[value(name = "openreports")]
    OpenReports,
    /// `wgpolicyk8s.io/v1alpha2` `PolicyReport`.
    #[value(name = "wgpolicyk8s")]
    PolicyReport,
}

impl ReportApi {
    /// Every API, preferred first.
    pub const ALL: [ReportApi; 2] = [ReportApi::OpenReports, ReportApi::PolicyReport];

    /// Group, version, kind and plural.
    pub const fn gvkp(self) -> (&'static str, &'static str, &'static str, &'static str) {
        match self {
            ReportApi::OpenReports => ("openreports.io", "v1alpha1", "Report", "reports"),
            ReportApi::PolicyReport => (
                "wgpolicyk8s.io",
                "v1alpha2",
                "PolicyReport",
                "policyreports",
            ),
        }
    }

    /// `group/version`.
    pub fn api_version(self) -> String {
        let (group, version, _, _) = self.gvkp();
        format!("{group}/{version}")
    }

    /// The resource, for kube's dynamic API.
    pub fn resource(self) -> ApiResource {
        let (group, version, kind, plural) = self.gvkp();
        ApiResource {
            group: group.to_owned(),
            version: version.to_owned(),
            api_version: self.api_version(),
            kind: kind.to_owned(),
            plural: plural.to_owned(),
        }
    }

    /// `Report.openreports.io/v1alpha1`, for logs.
    pub fn describe(self) -> String {
        let (_, _, kind, _) = self.gvkp();
        format!("{kind} ({})", self.api_version())
    }
}

/// How large a report may grow.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The most results one report holds.
    pub max_results: usize,
    /// The most bytes its results take as JSON.
    pub max_bytes: usize,
}

/// The result fields that tell one result from another, for keeping
/// timestamps: policy, HPA, outcome and message.
type Identity = (String, String, String, String);

fn identity(result: &Value) -> Identity {
    let text = |pointer: &str| {
        result
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    (
        text("/policy"),
        text("/resources/0/name"),
        text("/result"),
        text("/message"),
    )
}

/// `fail`/`warn` and the severity of a finding: errors fail with a high
/// severity; warnings warn (medium), infos too (info).
fn outcome(severity: Severity) -> (&'static str, &'static str) {
    match severity {
        Severity::Error => ("fail", "high"),
        Severity::Warning => ("warn", "medium"),
        Severity::Info => ("warn", "info"),
    }
}

/// Every result of a namespace's HPAs, most severe first.
fn results(namespace: &str, hpas: &[HpaFindings]) -> Vec<Value> {
    let mut results: Vec<(u8, Value)> = Vec::new();
    for hpa in hpas {
        let mut subject = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "namespace": namespace, "name": hpa.name});
        if let Some(uid) = &hpa.uid {
            subject["uid"] = json!(uid);
        }
        if hpa.found.is_empty() {
            results.push((
                3,
                json!({"source": NAME, "policy": NAME, "result": "pass",
                       "message": "no enabled rule found anything", "resources": [subject]}),
            ));
            continue;
        }
        for found in &hpa.found {
            let (result, severity) = outcome(found.severity);
            let mut message = found.message.clone();
            truncate(&mut message, MAX_RESULT_MESSAGE_BYTES);
            let mut resources = vec![subject.clone()];
            if let Some((api_version, kind, name)) = &found.object {
                resources.push(json!({"apiVersion": api_version, "kind": kind, "namespace": namespace, "name": name}));
            }
            let mut value = json!({
                "source": NAME, "policy": found.rule.name, "rule": found.rule.name,
                "category": found.rule.category.as_str(), "severity": severity, "result": result,
                "message": message, "resources": resources,
            });
            if found.count > 1 {
                value["properties"] = json!({"findings": found.count.to_string()});
            }
            let rank = match found.severity {
                Severity::Error => 0,
                Severity::Warning => 1,
                Severity::Info => 2,
            };
            results.push((rank, value));
        }
    }
    // Stable: within a rank, in HPA and rule order.
    results.sort_by_key(|(rank, _)| *rank);
    results.into_iter().map(|(_, result)| result).collect()
}

/// The report of a namespace as it is to be applied, or `None` when it
/// holds no HPA (then any report goes). `previous` is the report in the
/// cluster, whose timestamps are kept for unchanged results; `now` is in
/// seconds since the epoch.
pub fn report(
    api: ReportApi,
    namespace: &str,
    hpas: &[HpaFindings],
    previous: Option<&DynamicObject>,
    now: i64,
    limits: Limits,
) -> Option<Value> {
    if hpas.is_empty() {
        return None;
    }
    let found_at: HashMap<Identity, Value> = previous
        .and_then(|p| p.data.get("results"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| Some((identity(r), r.get("timestamp")?.clone())))
        .collect();
    let all = results(namespace, hpas);
    let total = all.len();
    let mut kept = Vec::new();
    let mut bytes = 2;
    let mut summary: Map<String, Value> = ["pass", "fail", "warn", "error", "skip"]
        .into_iter()
        .map(|outcome| (outcome.to_owned(), json!(0)))
        .collect();
    for mut result in all {
        let timestamp = found_at
            .get(&identity(&result))
            .cloned()
            .unwrap_or_else(|| json!({"seconds": now, "nanos": 0}));
        result["timestamp"] = timestamp;
        let size = result.to_string().len() + 1;
        if kept.len() == limits.max_results || bytes + size > limits.max_bytes {
            break;
        }
        bytes += size;
        if let Some(count) = result["result"].as_str().and_then(|r| summary.get_mut(r)) {
            *count = json!(count.as_u64().unwrap_or(0) + 1);
        }
        kept.push(result);
    }
    let (_, _, kind, _) = api.gvkp();
    let mut metadata =
        json!({"name": NAME, "namespace": namespace, "labels": {MANAGED_BY.0: MANAGED_BY.1}});
    if kept.len() < total {
        metadata["annotations"] = json!({OMITTED: (total - kept.len()).to_string()});
    }
    let mut report = json!({
        "apiVersion": api.api_version(), "kind": kind, "metadata": metadata,
        "summary": summary, "results": kept,
    });
    if api == ReportApi::OpenReports {
        report["source"] = json!(NAME);
        report["configuration"] = json!({"limits": {"maxResults": limits.max_results}});
    }
    Some(report)
}

/// Whether the report in the cluster already says what `report` says.
pub fn is_current(report: &Value, existing: &DynamicObject) -> bool {
    let fields = report.as_object().into_iter().flatten();
    let same_fields = fields
        .filter(|(key, _)| !matches!(key.as_str(), "apiVersion" | "kind" | "metadata"))
        .all(|(key, value)| existing.data.get(key) == Some(value));
    let labels = existing.metadata.labels.clone().unwrap_or_default();
    let annotations = existing.metadata.annotations.clone().unwrap_or_default();
    let omitted = report.pointer(&format!(
        "/metadata/annotations/{}",
        OMITTED.replace('/', "~1")
    ));
    same_fields
        && labels.get(MANAGED_BY.0).map(String::as_str) == Some(MANAGED_BY.1)
        && annotations.get(OMITTED).map(|v| json!(v)) == omitted.cloned()
}

/// The findings a report in the cluster holds: (HPA, rule) of its `fail`
/// and `warn` results, which were announced already.
pub fn standing(existing: &DynamicObject) -> Vec<(String, String)> {
    existing
        .data
        .get("results")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|r| matches!(r["result"].as_str(), Some("fail" | "warn")))
        .map(|r| {
            let (policy, hpa, _, _) = identity(r);
            (hpa, policy)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use hpa_lint_rules::rules::ALL;

    use super::*;
    use crate::report::evaluate::Found;

    fn rule(name: &str) -> &'static hpa_lint_rules::registry::Rule {
        ALL.iter().find(|r| r.name == name).unwrap()
    }

    fn hpas() -> Vec<HpaFindings> {
        vec![
            HpaFindings {
                name: "api".into(),
                uid: Some("u-1".into()),
                found: vec![Found {
                    rule: rule("target-not-found"),
                    severity: Severity::Warning,
                    message: "spec.scaleTargetRef.name: Deployment `api` does not exist".into(),
                    object: None,
                    count: 1,
                }],
            },
            HpaFindings {
                name: "web".into(),
                uid: None,
                found: Vec::new(),
            },
            HpaFindings {
                name: "checkout".into(),
                uid: None,
                found: vec![Found {
                    rule: rule("target-missing-requests"),
                    severity: Severity::Error,
                    message: "x".repeat(5000),
                    object: Some(("apps/v1".into(), "Deployment".into(), "checkout".into())),
                    count: 2,
                }],
            },
        ]
    }

    const LIMITS: Limits = Limits {
        max_results: 1000,
        max_bytes: MAX_REPORT_BYTES,
    };

    fn as_existing(report: &Value) -> DynamicObject {
        serde_json::from_value(report.clone()).unwrap()
    }

    #[test]
    fn a_result_per_finding_rule_and_a_pass_per_clean_hpa_most_severe_first() {
        let report = report(
            ReportApi::OpenReports,
            "shop",
            &hpas(),
            None,
            1_700_000_000,
            LIMITS,
        )
        .unwrap();
        let results = report["results"].as_array().unwrap();
        let brief: Vec<(&str, &str, &str)> = results
            .iter()
            .map(|r| {
                (
                    r["resources"][0]["name"].as_str().unwrap(),
                    r["policy"].as_str().unwrap(),
                    r["result"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            brief,
            [
                ("checkout", "target-missing-requests", "fail"),
                ("api", "target-not-found", "warn"),
                ("web", "hpa-lint", "pass")
            ]
        );
        assert_eq!(
            report["summary"],
            json!({"pass": 1, "fail": 1, "warn": 1, "error": 0, "skip": 0})
        );
        let checkout = &results[0];
        assert_eq!(checkout["severity"], "high");
        assert_eq!(checkout["category"], "correctness");
        assert_eq!(
            checkout["resources"][1],
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "shop", "name": "checkout"})
        );
        assert_eq!(checkout["properties"], json!({"findings": "2"}));
        assert!(checkout["message"].as_str().unwrap().len() < 1100);
        assert_eq!(results[1]["resources"][0]["uid"], "u-1");
        assert_eq!(
            results[1]["timestamp"],
            json!({"seconds": 1_700_000_000, "nanos": 0})
        );
        assert_eq!(report["source"], "hpa-lint");
        assert_eq!(
            report["metadata"]["labels"],
            json!({"app.kubernetes.io/managed-by": "hpa-lint"})
        );
        // The wg-policy schema has neither `source` nor `configuration`.
        let policy_report =
            super::report(ReportApi::PolicyReport, "shop", &hpas(), None, 0, LIMITS).unwrap();
        assert_eq!(policy_report["kind"], "PolicyReport");
        assert_eq!(policy_report.get("source"), None);
        assert_eq!(policy_report.get("configuration"), None);
        assert_eq!(
            super::report(ReportApi::PolicyReport, "shop", &[], None, 0, LIMITS),
            None
        );
    }

    #[test]
    fn an_unchanged_report_keeps_its_timestamps_and_is_current() {
        let first = report(ReportApi::OpenReports, "shop", &hpas(), None, 100, LIMITS).unwrap();
        let existing = as_existing(&first);
        let again = report(
            ReportApi::OpenReports,
            "shop",
            &hpas(),
            Some(&existing),
            200,
            LIMITS,
        )
        .unwrap();
        assert_eq!(again, first);
        assert!(is_current(&again, &existing));
        // A new finding gets the new time; the others keep theirs.
        let mut changed = hpas();
        changed[1].found = changed[0].found.clone();
        let next = report(
            ReportApi::OpenReports,
            "shop",
            &changed,
            Some(&existing),
            300,
            LIMITS,
        )
        .unwrap();
        assert!(!is_current(&next, &existing));
        let times: Vec<i64> = next["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["timestamp"]["seconds"].as_i64().unwrap())
            .collect();
        assert_eq!(times, [100, 100, 300]);
        assert_eq!(
            standing(&existing),
            [
                ("checkout".to_owned(), "target-missing-requests".to_owned()),
                ("api".to_owned(), "target-not-found".to_owned())
            ]
        );
    }

    #[test]
    fn the_size_is_bounded_most_severe_first_and_the_rest_counted() {
        let many: Vec<HpaFindings> = (0..3000)
            .map(|i| {
                let mut hpa = hpas()[i % 3].clone();
                hpa.name = format!("hpa-{i:04}");
                hpa
            })
            .collect();
        let by_count = report(
            ReportApi::OpenReports,
            "shop",
            &many,
            None,
            0,
            Limits {
                max_results: 500,
                ..LIMITS
            },
        )
        .unwrap();
        let results = by_count["results"].as_array().unwrap();
        assert_eq!(results.len(), 500);
        assert!(results.iter().all(|r| r["result"] == "fail"));
        assert_eq!(by_count["metadata"]["annotations"][OMITTED], "2500");
        assert_eq!(by_count["summary"]["fail"], 500);
        assert_eq!(by_count["configuration"]["limits"]["maxResults"], 500);
        let by_bytes = report(
            ReportApi::OpenReports,
            "shop",
            &many,
            None,
            0,
            Limits {
                max_bytes: 64 * 1024,
                ..LIMITS
            },
        )
        .unwrap();
        let size = by_bytes["results"].to_string().len();
        assert!(size <= 64 * 1024, "{size}");
        let kept = by_bytes["results"].as_array().unwrap().len();
        assert_eq!(
            by_bytes["metadata"]["annotations"][OMITTED],
            (3000 - kept).to_string()
        );
    }
}
