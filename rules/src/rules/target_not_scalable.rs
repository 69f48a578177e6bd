//! `target-not-scalable`: `scaleTargetRef` names a kind without a `/scale` subresource.

use crate::diagnostic::Severity;
use crate::fix::{Edit, Fix};
use crate::context::{Check, Context, Report};
use crate::model::workload::{NotScalable, TargetKind};
use crate::path::FieldPath;
use crate::quote::code;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "target-not-scalable",
    category: Category::Correctness,
    severity: Severity::Error,
    summary: "`scaleTargetRef` names a kind the HPA controller cannot scale",
    docs: r#"## What it does
Checks the group and kind of `spec.scaleTargetRef`. The HPA controller scales
through the target's `/scale` subresource, which only some kinds have:
- in Kubernetes itself, Deployment, StatefulSet and ReplicaSet (group `apps`)
  and ReplicationController (core group); DaemonSet, Job, CronJob, Pod,
  Service and the rest have none;
- a kind must be named with its own group: `extensions/v1beta1` Deployments
  are no longer served, an empty or `v1` `apiVersion` means the core group,
  and `apps/v1` has no `Rollout`. The rules about the target then check the
  object meant (the `apps` Deployment), and their findings say so, so that
  fixing `apiVersion` does not uncover new errors;
- custom resources may have one (Argo Rollout, KEDA-free operators, your own
  CRDs); any kind of a group that Kubernetes does not serve itself is accepted.
  Kinds configured under `scalableKinds` are known to be scalable, which helps
  the messages when such a kind is named with a built-in group.

## Why is this bad?
The API server accepts any kind, so the HPA is created, and then never scales
anything: its status says `FailedGetScale` (`no matches for kind` or `the
server could not find the requested resource`). A DaemonSet in particular runs
one pod per node; no HPA can change that.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: log-agent
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: DaemonSet, name: log-agent}
  maxReplicas: 10
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
```

## Fix safety
When `scaleTargetRef` names Deployment, StatefulSet, ReplicaSet or
ReplicationController without their group (no `apiVersion`, `v1`,
`extensions/...`), or a kind in the wrong letter case, `--fix` writes the
`apiVersion` (`apps/v1`, `v1`) and `kind` that kind has. It is safe: the object
meant is the only one the reference can mean.
"#,
    fix: FixAvailability::Sometimes,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

/// `group `apps``, or `the core group`.
fn group_name(group: &str) -> String {
    if group.is_empty() {
        "the core group".to_owned()
    } else {
        format!("group {}", code(group))
    }
}

/// The `apiVersion` that names a built-in kind's group: `apps/v1`, `v1`.
fn built_in_api_version(group: &str) -> Option<&'static str> {
    match group {
        "" => Some("v1"),
        "apps" => Some("apps/v1"),
        _ => None,
    }
}

/// The fix that writes `kind` (when given) and the `apiVersion` of `group`.
fn naming_fix(kind: Option<&str>, group: &str, version_too: bool) -> Option<Fix> {
    let api_version = if version_too {
        Some(built_in_api_version(group)?)
    } else {
        None
    };
    let mut edits = Vec::new();
    let mut said = Vec::new();
    if let Some(kind) = kind {
        edits.push(Edit::Set {
            path: FieldPath::fields("spec.scaleTargetRef.kind"),
            value: kind.into(),
        });
        said.push(format!("`kind: {kind}`"));
    }
    if let Some(api_version) = api_version {
        edits.push(Edit::Set {
            path: FieldPath::fields("spec.scaleTargetRef.apiVersion"),
            value: api_version.into(),
        });
        said.push(format!("`apiVersion: {api_version}`"));
    }
    Some(Fix::safe(format!("set {}", said.join(" and ")), edits))
}

/// The `apiVersion` to write for a kind of `group`.
fn api_version_hint(group: &str) -> String {
    match group {
        "" => "set `apiVersion: v1`".to_owned(),
        "apps" => "set `apiVersion: apps/v1`".to_owned(),
        _ => format!("set `apiVersion` to a version of group {}", code(group)),
    }
}

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    let reference = &cx.hpa.scale_target_ref;
    let target = cx.target_ref();
    if target.kind.is_empty() {
        return;
    }
    let TargetKind::NotScalable(reason) =
        TargetKind::classify(&cx.settings.cluster, &target.group, &target.kind)
    else {
        return;
    };
    let kind = target.kind.as_str();
    let kind_path = FieldPath::fields("spec.scaleTargetRef.kind");
    let version_path = FieldPath::fields("spec.scaleTargetRef.apiVersion");
    match reason {
        NotScalable::NoScale => {
            let help = match kind {
                "DaemonSet" => {
                    "a DaemonSet runs one pod per node: scale the nodes instead (cluster \
                     autoscaler), or run the pods as a Deployment"
                }
                "Job" | "CronJob" => {
                    "set `parallelism` on the Job, or use KEDA's ScaledJob for queue-driven jobs"
                }
                "Pod" => {
                    "point `scaleTargetRef` at the Deployment or StatefulSet that owns the pods"
                }
                _ => {
                    "point `scaleTargetRef` at the workload behind it (Deployment, StatefulSet, …)"
                }
            };
            out.report(
                kind_path,
                format!("{kind} has no `/scale` subresource: the HPA controller cannot scale it"),
            )
            .help(help);
        }
        NotScalable::WrongGroup { group } => {
            let message = if target.group == "extensions" {
                format!(
                    "group `extensions` no longer serves {kind} (removed in 1.16): it lives in {}",
                    group_name(&group)
                )
            } else if reference.api_version.is_empty() {
                format!(
                    "`apiVersion` is empty, so the controller looks for {kind} in the core group; \
                     it lives in {}",
                    group_name(&group)
                )
            } else {
                format!(
                    "{kind} lives in {}, not in {}",
                    group_name(&group),
                    group_name(&target.group)
                )
            };
            let diagnostic = out.report(version_path, message);
            diagnostic.help(api_version_hint(&group));
            if let Some(fix) = naming_fix(None, &group, true) {
                diagnostic.fix(fix);
            }
        }
        NotScalable::UnknownKind {
            similar: Some((group, similar)),
        } => {
            let mut help = format!("write `kind: {similar}`");
            if group != target.group {
                help = format!("{help} and {}", api_version_hint(group));
            }
            let diagnostic = out.report(
                kind_path,
                format!(
                    "{} has no kind {}: kinds are case-sensitive",
                    group_name(&target.group),
                    code(kind)
                ),
            );
            diagnostic.help(help);
            if let Some(fix) = naming_fix(Some(similar), group, group != target.group) {
                diagnostic.fix(fix);
            }
        }
        NotScalable::UnknownKind { similar: None } => {
            out.report(
                kind_path,
                format!(
                    "{} has no kind {} that can be scaled",
                    group_name(&target.group),
                    code(kind)
                ),
            )
            .help(
                "the built-in kinds that can be scaled are Deployment, StatefulSet, ReplicaSet \
                 (`apps/v1`) and ReplicationController (`v1`); a custom resource needs the \
                 `apiVersion` of its own group",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RULE;
    use crate::cluster::GroupKind;
    use crate::settings::Settings;
    use crate::testing::{check_fix_fixture, check_fixture, check_fixture_with};

    #[test]
    fn fixture() {
        insta::assert_snapshot!(check_fixture(&RULE));
    }

    #[test]
    fn fix() {
        insta::assert_snapshot!(check_fix_fixture(&RULE));
    }

    #[test]
    fn configured_kinds_name_their_group() {
        let text = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: w}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Worker, name: w}  # expect: target-not-scalable\n  maxReplicas: 3\n";
        let mut settings = Settings::default();
        settings.cluster.scalable_kinds.push(GroupKind {
            group: "example.com".into(),
            kind: "Worker".into(),
        });
        assert_eq!(
            check_fixture_with(&RULE, text, settings),
            "5:20 target-not-scalable spec.scaleTargetRef.apiVersion: Worker lives in group `example.com`, not in group `apps`\n"
        );
    }
}
