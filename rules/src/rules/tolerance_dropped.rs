//! `tolerance-dropped`: the API server silently drops `behavior.*.tolerance` while its feature gate is off.

use crate::diagnostic::Severity;
use crate::context::{Check, Context, Report};
use crate::path::FieldPath;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "tolerance-dropped",
    category: Category::Suspicious,
    severity: Severity::Warning,
    summary: "`tolerance` is set, but the API server drops it while `HPAConfigurableTolerance` is off",
    docs: r#"## What it does
Reports `spec.behavior.scaleUp.tolerance` and `spec.behavior.scaleDown.tolerance`
(also in the behavior annotation of an `autoscaling/v1` HPA) when the
configured cluster has the field but not its feature gate:
`HPAConfigurableTolerance` is alpha and off by default in Kubernetes 1.33 and
1.34, and on from 1.35 (tell hpa-lint about a cluster that differs with
`--feature-gates`). With the gate off the API server removes the field
without an error or a warning, except on an update of an HPA that already
has a tolerance.

Before 1.33 the field does not exist and `unknown-field` reports it instead.

## Why is this bad?
The HPA is stored without the tolerance, and the controller keeps using the
cluster-wide `--horizontal-pod-autoscaler-tolerance` (10 % by default). The
manifest says the HPA reacts to a 2 % change; it does not. The next
`kubectl diff` or GitOps sync shows the field as missing forever.

## Example
With `--kube-version 1.34`:
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
  behavior:
    scaleUp:
      tolerance: 20m
```

Use instead, until the cluster runs 1.35 or enables the gate:
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
```
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    let kube = cx.settings.cluster.kube_version;
    // Before 1.33 the field is unknown (`unknown-field`); with the gate on it is
    // kept; an unserved version is rejected whole (`deprecated-api-version`).
    if !kube.at_least(33)
        || cx.settings.cluster.feature_gates.configurable_tolerance
        || !cx.hpa.served
    {
        return;
    }
    let Some(stored) = &cx.hpa.behavior else {
        return;
    };
    let gate = if kube.at_least(35) {
        "the `HPAConfigurableTolerance` feature gate is turned off".to_owned()
    } else {
        format!(
            "the `HPAConfigurableTolerance` feature gate is off by default in Kubernetes {kube}"
        )
    };
    // What was written (the `v1` annotation and the update ratchet handled
    // as the server handles them): a tolerance the stored object lacks was
    // dropped by the strategy.
    for (direction, stored) in stored.directions() {
        let Some(tolerance) = cx.hpa.written.tolerance(direction) else {
            continue;
        };
        if stored.is_some_and(|r| r.tolerance.is_some()) {
            continue;
        }
        out.report(
            FieldPath::fields("spec.behavior")
                .field(direction)
                .field("tolerance"),
            format!(
                "the API server drops `tolerance: {tolerance}` without a warning: {gate}, so \
                 the HPA uses the cluster-wide tolerance (10 % by default)"
            ),
        )
        .help(
            "enable `HPAConfigurableTolerance` on the API server and controller manager (on by \
             default from 1.35) and tell hpa-lint with `--feature-gates \
             HPAConfigurableTolerance=true`, or remove `tolerance`",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::RULE;
    use crate::cluster::KubeVersion;
    use crate::index::MemoryIndex;
    use crate::context::Operation;
    use crate::lint::lint;
    use crate::settings::Settings;
    use crate::testing::{check_fixture_with, objects, only_with, rule_fixture};

    fn at(minor: u32) -> Settings {
        Settings::new(KubeVersion::new(minor))
    }

    #[test]
    fn fixture() {
        insta::assert_snapshot!(check_fixture_with(&RULE, &rule_fixture(RULE.name), at(34)));
    }

    fn findings(text: &str, settings: Settings) -> usize {
        let hpa = objects(text);
        lint(
            &hpa[0],
            Operation::Create,
            &MemoryIndex::default(),
            &only_with(&RULE, settings),
        )
        .len()
    }

    const WITH_TOLERANCE: &str = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  maxReplicas: 3\n  behavior:\n    scaleDown: {tolerance: 50m}\n";

    #[test]
    fn only_while_the_field_exists_and_the_gate_is_off() {
        assert_eq!(
            findings(WITH_TOLERANCE, at(32)),
            0,
            "unknown-field's business"
        );
        assert_eq!(findings(WITH_TOLERANCE, at(33)), 1);
        assert_eq!(findings(WITH_TOLERANCE, at(34)), 1);
        assert_eq!(findings(WITH_TOLERANCE, at(35)), 0);
        let mut off = at(36);
        off.cluster.feature_gates.configurable_tolerance = false;
        assert_eq!(findings(WITH_TOLERANCE, off), 1);
        let mut on = at(34);
        on.cluster.feature_gates.configurable_tolerance = true;
        assert_eq!(findings(WITH_TOLERANCE, on), 0);
    }

    #[test]
    fn an_update_keeps_the_tolerance_of_an_hpa_that_had_one() {
        let new = objects(WITH_TOLERANCE).remove(0);
        let old_with = objects(&WITH_TOLERANCE.replace("50m", "10m")).remove(0);
        let old_without = objects(&WITH_TOLERANCE.replace("{tolerance: 50m}", "{}")).remove(0);
        let settings = only_with(&RULE, at(34));
        let index = MemoryIndex::default();
        let update = |old| lint(&new, Operation::Update { old }, &index, &settings).len();
        assert_eq!(update(&old_with), 0);
        assert_eq!(update(&old_without), 1);
    }
}
