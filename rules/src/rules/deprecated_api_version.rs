//! `deprecated-api-version`: the HPA is written in a deprecated or removed `autoscaling` version.

use serde_json::Value;

use crate::diagnostic::Severity;
use crate::fix::{Edit, Fix};
use crate::context::{Check, Context, Report};
use crate::cluster::KubeVersion;
use crate::model::hpa::{
    Hpa, HpaVersion, V1_BEHAVIOR_ANNOTATION, v2beta1_member_to_v2, v2beta1_status_member_to_v2,
};
use crate::path::FieldPath;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "deprecated-api-version",
    category: Category::Suspicious,
    severity: Severity::Warning,
    summary: "the HPA uses `autoscaling/v2beta1`, `v2beta2`, `v2alpha1` or an `autoscaling` version that never existed instead of `autoscaling/v2`",
    docs: r#"## What it does
Reports HPAs written in a beta or alpha version of the `autoscaling` API:
- `autoscaling/v2beta1`: deprecated in 1.22, not served from 1.25;
- `autoscaling/v2beta2`: deprecated in 1.23, not served from 1.26;
- `autoscaling/v2alpha1`: removed in 1.8;
- any other `autoscaling/…` version, such as the typo `autoscaling/v3`: never
  served, always an error, with no fix (what was meant is a guess). The other
  rules check the HPA as `autoscaling/v2`.

The finding is a warning while the configured Kubernetes version
(`--kube-version`) still serves the version, and an error once it does not.
While it is served, the API server decodes the HPA as strictly as
`autoscaling/v2`, converts it to the `v2` shape, defaults and validates it: the
API-server rules report what it rejects, at the server's (`v2`) field paths.
Once it is not served, the server rejects the HPA before any of that, and only
this finding is the server's; the other rules still check the HPA, converted the
way the API server converted it while it was served.

## Why is this bad?
Once the version is no longer served, `kubectl apply` fails with `no matches
for kind "HorizontalPodAutoscaler" in version "autoscaling/v2beta2"`, and a
Helm upgrade or GitOps sync stops at the first such manifest, often during a
cluster upgrade. `autoscaling/v2` is served since 1.23.

## Example
```yaml
apiVersion: autoscaling/v2beta2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
```

Use instead:
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
```

From `v2beta1`, the metric targets change shape as well: `targetAverageUtilization: 70`
becomes `target: {type: Utilization, averageUtilization: 70}`,
`targetAverageValue` becomes `target: {type: AverageValue, averageValue: ...}`,
`targetValue` becomes `target: {type: Value, value: ...}`, `metricName`
becomes `metric: {name: ...}`, and an object metric's `target` becomes
`describedObject`.

## Fix safety
`--fix` changes `apiVersion` to `autoscaling/v2` and, from `v2beta1`, rewrites
each metric source the way the API server converted it while it served
`v2beta1` (a missing `targetValue` of an object metric, or `targetAverageValue`
of a pods metric, becomes `"0"`, as it did then). A `behavior` that `v2beta1`
carried in the `autoscaling.alpha.kubernetes.io/behavior` annotation (as
`kubectl get` through `v2beta1` writes it) becomes `spec.behavior`, with what the
server read of it: `autoscaling/v2` drops that annotation. It is safe: the HPA
the server runs is the same; only the version it is written in changes.
"#,
    fix: FixAvailability::Sometimes,
    manifests_only: true,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

const HELP_V2BETA1: &str = "migrate to `autoscaling/v2`: `targetAverageUtilization: N` becomes \
    `target: {type: Utilization, averageUtilization: N}`, `targetAverageValue` becomes `target: \
    {type: AverageValue, averageValue: ...}`, `targetValue` becomes `target: {type: Value, value: \
    ...}`, `metricName` becomes `metric: {name: ...}`, and an object metric's `target` becomes \
    `describedObject`";

const HELP_UNKNOWN: &str = "write `apiVersion: autoscaling/v2` (or `autoscaling/v1`), the \
    versions the API server serves";

const HELP_V2BETA2: &str =
    "change `apiVersion` to `autoscaling/v2`: `v2beta2` has the same fields, nothing else changes";

/// The members of a metric whose shape changed after `v2beta1`.
const MEMBERS: [&str; 5] = [
    "object",
    "pods",
    "resource",
    "containerResource",
    "external",
];

/// `autoscaling/v2`, with `v2beta1` metrics converted as the API server
/// converted them: the same HPA in the version that is served.
fn upgrade(cx: &Context<'_>) -> Fix {
    let mut edits = vec![Edit::Set {
        path: FieldPath::fields("apiVersion"),
        value: "autoscaling/v2".into(),
    }];
    if matches!(cx.hpa.version, HpaVersion::V2beta1 | HpaVersion::V2alpha1) {
        // `v2beta1` carried `behavior` in an annotation, which `v2` drops.
        let annotation = FieldPath::fields("metadata.annotations").key(V1_BEHAVIOR_ANNOTATION);
        if cx.object.whole().value.pointer(&annotation.pointer()).is_some() {
            if let Some(behavior) = &cx.hpa.behavior {
                edits.push(Edit::Set {
                    path: FieldPath::fields("spec.behavior"),
                    value: behavior.to_json(),
                });
            }
            edits.push(Edit::Remove { path: annotation });
        }
        // A manifest saved from a cluster carries its status, converted too.
        let lists = [
            ("spec.metrics", v2beta1_member_to_v2 as Convert),
            ("status.currentMetrics", v2beta1_status_member_to_v2),
        ];
        for (list, convert) in lists {
            let path = FieldPath::fields(list);
            let items = (cx.object.whole().value)
                .pointer(&path.pointer())
                .and_then(Value::as_array);
            for (i, item) in items.into_iter().flatten().enumerate() {
                for member in MEMBERS {
                    if let Some(converted) = item.get(member).and_then(|m| convert(member, m)) {
                        edits.push(Edit::Set {
                            path: path.index(i).field(member),
                            value: converted,
                        });
                    }
                }
            }
        }
    }
    Fix::safe("convert to `autoscaling/v2`", edits)
}

/// Why the API server of release `kube` rejects `hpa`, written in
/// `api_version`, a version it does not serve.
pub fn not_served(api_version: &str, hpa: &Hpa, kube: KubeVersion) -> String {
    if hpa.version == HpaVersion::Unknown {
        return format!(
            "`{api_version}` was never a version of `autoscaling`: a {kube} API server rejects the \
             HPA (no matches for kind \"HorizontalPodAutoscaler\" in version \"{api_version}\")"
        );
    }
    let removed = hpa.version.last_served().map_or(0, |last| last + 1);
    format!(
        "`{api_version}` is not served since Kubernetes 1.{removed}: a {kube} API server \
         rejects the HPA"
    )
}

/// A `v2beta1` metric member (or its status) in the `v2` shape.
type Convert = fn(&str, &Value) -> Option<Value>;

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    let version = cx.hpa.version;
    let api_version = &cx.object.key.api_version;
    // Made for findings only: most HPAs have none.
    let path = || FieldPath::fields("apiVersion");
    let kube = cx.settings.cluster.kube_version;
    if version == HpaVersion::Unknown {
        // What was meant is a guess: no fix.
        out.report_at(Severity::Error, path(), not_served(api_version, cx.hpa, kube))
            .help(HELP_UNKNOWN);
        return;
    }
    let Some(last_served) = version.last_served() else {
        return;
    };
    let removed = last_served + 1;
    let help = if version == HpaVersion::V2beta2 {
        HELP_V2BETA2
    } else {
        HELP_V2BETA1
    };
    if !cx.hpa.served {
        out.report_at(Severity::Error, path(), not_served(api_version, cx.hpa, kube))
        .help(help)
        .fix(upgrade(cx));
    } else {
        let since = version
            .deprecated_in()
            .map_or_else(String::new, |d| format!(" since Kubernetes 1.{d}"));
        out.report(
            path(),
            format!("`{api_version}` is deprecated{since} and not served from 1.{removed}"),
        )
        .help(help)
        .fix(upgrade(cx));
    }
}

#[cfg(test)]
mod tests {
    use super::RULE;
    use crate::cluster::KubeVersion;
    use crate::diagnostic::Severity;
    use crate::index::MemoryIndex;
    use crate::context::Operation;
    use crate::lint::lint;
    use crate::settings::{Level, Settings};
    use crate::testing::{check_fix_fixture, check_fixture, check_fixture_with, objects, only_with, rule_fixture};

    #[test]
    fn fixture() {
        insta::assert_snapshot!(check_fixture(&RULE));
    }

    #[test]
    fn fix() {
        insta::assert_snapshot!(check_fix_fixture(&RULE));
    }

    #[test]
    fn fixture_while_still_served() {
        // 1.24 serves both betas: warnings only, same lines.
        insta::assert_snapshot!(check_fixture_with(
            &RULE,
            &rule_fixture(RULE.name),
            Settings::new(KubeVersion::new(24))
        ));
    }

    fn severity(api_version: &str, settings: Settings) -> Vec<Severity> {
        let hpa = objects(&format!(
            "apiVersion: {api_version}\nkind: HorizontalPodAutoscaler\nmetadata: {{name: web}}\nspec:\n  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}\n  maxReplicas: 3\n"
        ));
        let settings = only_with(&RULE, settings);
        lint(
            &hpa[0],
            Operation::Create,
            &MemoryIndex::default(),
            &settings,
        )
        .iter()
        .map(|d| d.severity)
        .collect()
    }

    #[test]
    fn a_removed_version_is_an_error() {
        let at = |minor| Settings::new(KubeVersion::new(minor));
        assert_eq!(severity("autoscaling/v2beta1", at(24)), [Severity::Warning]);
        assert_eq!(severity("autoscaling/v2beta1", at(25)), [Severity::Error]);
        assert_eq!(severity("autoscaling/v2beta2", at(25)), [Severity::Warning]);
        assert_eq!(severity("autoscaling/v2beta2", at(26)), [Severity::Error]);
        assert_eq!(severity("autoscaling/v2alpha1", at(23)), [Severity::Error]);
        assert!(severity("autoscaling/v2", at(23)).is_empty());
        assert!(severity("autoscaling/v1", at(36)).is_empty());
    }

    #[test]
    fn a_configured_severity_wins() {
        let mut settings = Settings::new(KubeVersion::new(36));
        settings.set_level(&RULE, Level::On(Severity::Info));
        assert_eq!(severity("autoscaling/v2beta1", settings), [Severity::Info]);
    }
}
