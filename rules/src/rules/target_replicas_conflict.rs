//! `target-replicas-conflict`: the target sets `spec.replicas` while an HPA scales it.

use serde_json::Value;

use crate::diagnostic::Severity;
use crate::fix::{Edit, Fix};
use crate::context::{Check, Context, Operation, Report};
use crate::model::workload::{Target, TargetKind};
use crate::object::Object;
use crate::path::{FieldPath, Json, get};
use crate::quote::{code, shown};
use crate::reads::Reads;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "target-replicas-conflict",
    category: Category::Correctness,
    severity: Severity::Warning,
    summary: "the target sets `spec.replicas`, which every apply or GitOps sync resets",
    docs: r#"## What it does
Reports `spec.replicas` on a workload that an HPA scales: Deployments,
StatefulSets, ReplicaSets, ReplicationControllers and the known scalable
custom kinds (Argo Rollout, OpenKruise CloneSet, …, plus `scalableKinds` from
the configuration). The finding is on the workload's `spec.replicas`.

When the webhook checks an update of the workload itself, it reports only
when the update changes `spec.replicas`: an update that keeps the live value
resets nothing.

## Why is this bad?
The HPA owns the replica count. Every `kubectl apply`, Helm upgrade or Argo CD
/ Flux sync of a manifest with `spec.replicas` writes the manifest's value
back, and the workload jumps to it, scaling down under load or up for nothing,
until the HPA corrects it a few seconds or minutes later. GitOps tools then
report the workload as out of sync forever.

To migrate without a dip, follow the Kubernetes documentation: removing the
field from the manifest makes a client-side `kubectl apply` delete it, and the
live object briefly falls back to 1 replica. Remove it from the last-applied
configuration first (`kubectl apply edit-last-applied deployment/<name>`), or
with server-side apply let the HPA's field manager own the field. If a custom
resource requires the field, tell the GitOps tool to ignore it instead (Argo
CD `ignoreDifferences` on `/spec/replicas`).

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 10
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: web:1.0}]
```

Use instead:
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 10
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: web:1.0}]
```

## Fix safety
`--unsafe-fixes` removes `spec.replicas` from the workload. It is unsafe: with
client-side apply, the next `kubectl apply` that no longer sets the field drops
the live workload to 1 replica once, unless the field is first removed from the
last-applied configuration (see the help line).
"#,
    fix: FixAvailability::Always,
    manifests_only: true,
    reads: &[Reads::ScaleTarget],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

/// The Kubernetes documentation's migration steps.
const DOCS_URL: &str = "https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/#migrating-deployments-and-statefulsets-to-horizontal-autoscaling";

/// `spec.replicas` when set.
fn replicas(object: &Object) -> Option<&Value> {
    get(&object.value, &["spec", "replicas"]).filter(|v| !v.is_null())
}

/// Whether an update of the target itself leaves `spec.replicas` as it was
/// (`replicas`): applying the same value again resets nothing.
fn keeps_replicas(operation: Operation<'_>, target: &Target<'_>, replicas_now: &Value) -> bool {
    match operation {
        Operation::Update { old } => {
            old.key.to_ref() == target.key.to_ref() && replicas(old) == Some(replicas_now)
        }
        Operation::Create => false,
    }
}

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    let Some(target) = cx.workload() else {
        return;
    };
    let key = &target.key;
    if !TargetKind::classify(&cx.settings.cluster, key.group(), &key.kind).is_known_workload() {
        return;
    }
    let Some(written) = target.value.at(&["spec", "replicas"]).filter(|v| !v.is_null()) else {
        return;
    };
    // A number or a string: as a serde_json value, to be shown as written.
    let value = written.clone().into_value();
    if keeps_replicas(cx.operation, target, &value) {
        return;
    }
    let mut message = format!(
        "{} sets {} while {} scales it: every `kubectl apply` or GitOps sync resets the \
         replica count to {}",
        key.describe(),
        code(&format!("spec.replicas: {value}")),
        cx.hpa_name(),
        shown(&value.to_string()),
    );
    if let Some(n) = value.as_i64() {
        if let Some(min) = cx.hpa.min_replicas.filter(|min| n < i64::from(*min)) {
            message.push_str(&format!(", below `minReplicas` {min}"));
        } else if let Some(max) = cx.hpa.max_replicas.filter(|max| n > i64::from(*max)) {
            message.push_str(&format!(", above `maxReplicas` {max}"));
        }
    }
    out.report_on(target, FieldPath::fields("spec.replicas"), message)
        .help(format!(
            "remove `spec.replicas` from the manifest; so that the live object does not drop to \
             1 replica when the field disappears, first remove it from the last-applied \
             configuration (`kubectl apply edit-last-applied {}/{}`) with client-side apply, or \
             let the HPA's field manager own it with server-side apply: {DOCS_URL}",
            shown(&key.kind.to_lowercase()),
            shown(&key.name)
        ))
        .fix(Fix::unsafe_edit(
            "remove `spec.replicas` from the workload",
            vec![Edit::Remove {
                path: FieldPath::fields("spec.replicas"),
            }],
        ));
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::RULE;
    use crate::index::MemoryIndex;
    use crate::context::Operation;
    use crate::lint::lint;
    use crate::testing::{check_fix_fixture, check_fixture, objects, only};

    #[test]
    fn fixture() {
        insta::assert_snapshot!(check_fixture(&RULE));
    }

    #[test]
    fn fix() {
        insta::assert_snapshot!(check_fix_fixture(&RULE));
    }

    const HPA: &str = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  maxReplicas: 5\n";

    fn deployment(replicas: &str) -> Arc<crate::object::Object> {
        let text = format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web}}\nspec:\n  {replicas}\n  template: {{spec: {{containers: [{{name: app}}]}}}}\n"
        );
        objects(&text).remove(0)
    }

    /// Lints the HPA as the webhook does for an update of its target: the index
    /// holds the new Deployment, the operation the old one.
    fn update(old: &str, new: &str) -> usize {
        let hpa = objects(HPA).remove(0);
        let (old, new) = (deployment(old), deployment(new));
        let index = MemoryIndex::new([Arc::clone(&hpa), new]);
        lint(&hpa, Operation::Update { old: &old }, &index, &only(&RULE)).len()
    }

    #[test]
    fn an_update_of_the_target_reports_only_a_changed_replica_count() {
        assert_eq!(update("replicas: 3", "replicas: 3"), 0);
        assert_eq!(update("replicas: 3", "replicas: 4"), 1);
        assert_eq!(update("paused: false", "replicas: 4"), 1);
        assert_eq!(update("replicas: 3", "paused: false"), 0);
    }

    #[test]
    fn an_update_of_another_object_still_reports() {
        let hpa = objects(HPA).remove(0);
        let target = deployment("replicas: 3");
        let index = MemoryIndex::new([Arc::clone(&hpa), target]);
        // An update of the HPA itself (its old version) does not hide the finding.
        assert_eq!(
            lint(&hpa, Operation::Update { old: &hpa }, &index, &only(&RULE)).len(),
            1
        );
    }
}
