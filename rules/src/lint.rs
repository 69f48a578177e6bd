//! The driver: runs the enabled rules on one object, stage by stage (see
//! [`Check`]). Front ends call [`lint`] for every object they have; which rule
//! runs, at which severity, and what is suppressed is decided here.

use std::cell::OnceCell;
use std::sync::{Arc, LazyLock};

use crate::context::{Check, Context, Findings, MeantTarget, Operation, Report, Subjects};
use crate::diagnostic::{Diagnostic, Severity};
use crate::fix::Edit;
use crate::index::{Index, Lookup};
use crate::model::autoscaler::Autoscalers;
use crate::model::decode::DecodeErrorKind;
use crate::model::disruption::Block;
use crate::model::hpa::Hpa;
use crate::model::linted::Linted;
use crate::model::workload::Target;
use crate::object::{ANNOTATION_PREFIX, Object, ObjectRef};
use crate::path::{Json, Shape};
use crate::quote::code;
use crate::registry::{Category, Rule};
use crate::rules::{CHECKS, unknown_field};
use crate::settings::Settings;

/// Lints one object: the object-stage rules for any object, and for HPAs
/// decoding and every enabled check. Findings suppressed by an annotation on the
/// HPA or on the object a finding is about are left out.
pub fn lint(
    object: &Object,
    operation: Operation<'_>,
    index: &dyn Index,
    settings: &Settings,
) -> Vec<Diagnostic> {
    lint_at_most(object, operation, index, settings, usize::MAX).0
}

/// [`lint`], keeping the first `max` findings and counting the others: an
/// admission webhook lists a bounded number, and holds no more while it
/// works, however many problems a hostile object has.
pub fn lint_at_most(
    object: &Object,
    operation: Operation<'_>,
    index: &dyn Index,
    settings: &Settings,
    max: usize,
) -> (Vec<Diagnostic>, usize) {
    let mut findings = Findings::new(max);
    run_object_checks(object, settings, &mut findings);
    let enabled = Enabled::of(settings);
    let linted = Linted::of(object);
    run_hpa_checks(&linted, operation, index, settings, &enabled, &mut findings);
    (findings.kept, findings.more)
}

/// The object-stage rules on any object (its hpa-lint annotations).
pub fn lint_object(object: &Object, settings: &Settings) -> Vec<Diagnostic> {
    let mut findings = Findings::new(usize::MAX);
    run_object_checks(object, settings, &mut findings);
    findings.kept
}

/// The decode- and HPA-stage rules on an HPA ([`lint`] without
/// [`lint_object`]): nothing for other objects.
pub fn lint_hpa(
    object: &Object,
    operation: Operation<'_>,
    index: &dyn Index,
    settings: &Settings,
) -> Vec<Diagnostic> {
    let linted = Linted::of(object);
    lint_hpa_with(&linted, operation, index, settings, &Enabled::of(settings))
}

/// [`lint_hpa`] of an HPA read as a tree, with the checks that run worked
/// out already, once for many HPAs ([`Enabled::of`] the same `settings`).
pub fn lint_hpa_with(
    object: &Linted<'_>,
    operation: Operation<'_>,
    index: &dyn Index,
    settings: &Settings,
    enabled: &Enabled,
) -> Vec<Diagnostic> {
    let mut findings = Findings::new(usize::MAX);
    run_hpa_checks(object, operation, index, settings, enabled, &mut findings);
    findings.kept
}

/// The checks of each stage, in the order of [`CHECKS`].
struct Stages {
    object: Vec<(&'static Rule, Check)>,
    decode: Vec<(&'static Rule, Check)>,
    hpa: Vec<(&'static Rule, Check)>,
}

static STAGES: LazyLock<Stages> = LazyLock::new(|| {
    let mut stages = Stages {
        object: Vec::new(),
        decode: Vec::new(),
        hpa: Vec::new(),
    };
    for &(rule, check) in CHECKS {
        match check {
            Check::Object(_) => stages.object.push((rule, check)),
            Check::Decode(_) => stages.decode.push((rule, check)),
            Check::Hpa(_) => stages.hpa.push((rule, check)),
            Check::Document(_) => {}
        }
    }
    stages
});

/// A rule that runs, with one of its checks, its severity and whether the
/// configuration pinned it.
#[derive(Clone, Copy)]
struct Running {
    rule: &'static Rule,
    check: Check,
    severity: Severity,
    pinned: bool,
}

/// Those of `checks` whose rules run with `settings`.
fn running<'a>(
    checks: &'a [(&'static Rule, Check)],
    settings: &'a Settings,
) -> impl Iterator<Item = Running> + 'a {
    checks.iter().filter_map(|&(rule, check)| {
        Some(Running {
            rule,
            check,
            severity: settings.severity(rule)?,
            pinned: settings.is_pinned(rule),
        })
    })
}

/// The decode- and HPA-stage checks that run with some settings, with their
/// severities: worked out once for the many HPAs linted with them.
pub struct Enabled {
    decode: Vec<Running>,
    hpa: Vec<Running>,
}

impl Enabled {
    /// The checks that run with `settings`.
    pub fn of(settings: &Settings) -> Self {
        Self {
            decode: running(&STAGES.decode, settings).collect(),
            hpa: running(&STAGES.hpa, settings).collect(),
        }
    }
}

/// Whether the object-stage rules (`Check::Object`) have anything to
/// check on an object (a serde_json value or a document's tree): they check
/// hpa-lint's own annotations (`hpa-lint.io/…`), and are not run on an
/// object without any, whichever front end lints it.
pub fn object_stage_reads<V: Json>(value: &V) -> bool {
    let annotations = value
        .member("metadata")
        .and_then(|metadata| metadata.member("annotations"));
    match annotations.map(Json::shape) {
        Some(Shape::Object(_, mut keys)) => keys.any(|(key, _)| key.starts_with(ANNOTATION_PREFIX)),
        _ => false,
    }
}

fn run_object_checks(object: &Object, settings: &Settings, findings: &mut Findings) {
    if object_stage_reads(&object.value) {
        run_object_stage(object, settings, findings);
    }
}

/// The object-stage checks, whether or not [`object_stage_reads`] says
/// they have anything to check.
fn run_object_stage(object: &Object, settings: &Settings, findings: &mut Findings) {
    let object_subject = Subjects::of(&object.key, object.origin);
    let linted = Shared {
        subject: &object_subject,
        hpa: None,
        meant: None,
    };
    for running in running(&STAGES.object, settings) {
        if let Check::Object(check) = running.check {
            check(object, &mut linted.report(&running, findings));
        }
    }
}

/// What the findings of the rules on one object share.
struct Shared<'a> {
    subject: &'a Subjects<'a>,
    hpa: Option<&'a Hpa>,
    meant: Option<&'a MeantTarget>,
}

impl Shared<'_> {
    fn report<'r>(&'r self, running: &Running, findings: &'r mut Findings) -> Report<'r> {
        Report {
            rule: running.rule,
            severity: running.severity,
            pinned: running.pinned,
            subject: self.subject,
            hpa: self.hpa,
            meant: self.meant,
            findings,
        }
    }
}

fn run_hpa_checks(
    object: &Linted<'_>,
    operation: Operation<'_>,
    index: &dyn Index,
    settings: &Settings,
    enabled: &Enabled,
    findings: &mut Findings,
) {
    let old_hpa = match operation {
        // The old object is what the server stored, with nothing left to drop:
        // decoding it with the tolerance gate off would lose the `tolerance`
        // that the ratchet in `Hpa::decode` must see.
        Operation::Update { old } => {
            let mut stored = settings.cluster.clone();
            stored.feature_gates.configurable_tolerance = true;
            Hpa::decode(old, &stored, None)
        }
        Operation::Create => None,
    };
    let Some(mut hpa) = Hpa::read(
        &object.key,
        &object.value,
        &settings.cluster,
        old_hpa.as_ref(),
    ) else {
        return;
    };
    if settings.live {
        hpa.forget_status_errors();
    }
    let target_ref = hpa.target(&object.key.namespace);
    let meant = MeantTarget::of(&target_ref, &settings.cluster);
    let hpa_subject = Subjects::of(&object.key, object.origin);
    let cx = Context {
        object,
        hpa: &hpa,
        old_hpa: old_hpa.as_ref(),
        operation,
        index,
        settings,
        target_ref,
        target: OnceCell::new(),
        meant: meant.as_ref(),
        autoscaler: OnceCell::new(),
    };
    // The HPA's annotation suppresses a rule, whichever object its findings
    // are about.
    let suppressed: Vec<&str> = object.suppressions().map(|(rule, _)| rule).collect();
    let unsuppressed = |running: &&Running| !suppressed.contains(&running.rule.name);
    let linted = Shared {
        subject: &hpa_subject,
        hpa: Some(&hpa),
        meant: meant.as_ref(),
    };
    let first = findings.kept.len();
    // Decoding errors in the order they are met, as the server lists them.
    for error in &hpa.decode_errors {
        for running in enabled.decode.iter().filter(unsuppressed) {
            if let Check::Decode(check) = running.check {
                check(error, object.whole(), &mut linted.report(running, findings));
            }
        }
    }
    // The server validates only what it could decode, and only served versions.
    let validated = hpa.served && hpa.decodable;
    for running in enabled.hpa.iter().filter(unsuppressed) {
        let Check::Hpa(check) = running.check else {
            continue;
        };
        if running.rule.category == Category::ApiServer && !validated {
            continue;
        }
        if let Some(meant) = &meant {
            meant.used.set(false);
        }
        check(&cx, &mut linted.report(running, findings));
    }
    for diagnostic in &mut findings.kept[first..] {
        if hpa_subject
            .made()
            .is_some_and(|hpa| Arc::ptr_eq(&diagnostic.subject.key, &hpa.key))
        {
            hold_back_beside_unknown_fields(diagnostic, object, &hpa);
        }
    }
}

/// Takes a fix off a finding on the HPA when it would add a key to a mapping
/// that holds a field the API version does not define, and leave that field
/// there: it may be a misspelling of the key the fix writes, and the value
/// the author gave it would be shadowed for good. The help line says what to
/// do first; once the field is renamed or removed, the fix is offered again.
fn hold_back_beside_unknown_fields(diagnostic: &mut Diagnostic, object: &Linted<'_>, hpa: &Hpa) {
    let Some(fix) = &diagnostic.fix else {
        return;
    };
    let unknown = hpa
        .decode_errors
        .iter()
        .filter(|e| e.kind == DecodeErrorKind::UnknownField)
        .find(|e| fix.adds_beside(&e.path, &object.whole().value));
    let Some(unknown) = unknown else {
        return;
    };
    let rename = unknown_field::fix(unknown, &object.whole().value)
        .and_then(|fix| match fix.edits.first() {
            Some(Edit::Rename { to, .. }) => Some(format!(
                " to {} (the unsafe fix of `{}`)",
                code(to),
                unknown_field::RULE.name
            )),
            _ => None,
        })
        .unwrap_or_default();
    diagnostic.fix = None;
    diagnostic.help(format!(
        "its fix waits: it would write beside {}, which the API version does not define; rename it{rename} or remove it, and the fix is offered again",
        code(&unknown.path.to_string())
    ));
}

/// An index in which one object replaces its stored version: the cluster as
/// it will be once a workload update is admitted.
struct WithObject<'a> {
    inner: &'a dyn Index,
    object: Arc<Object>,
}

impl Index for WithObject<'_> {
    fn get(&self, target: &ObjectRef) -> Lookup<Arc<Object>> {
        if *target == self.object.key.to_ref() {
            Lookup::Found(Arc::clone(&self.object))
        } else {
            self.inner.get(target)
        }
    }

    fn get_target(&self, target: &ObjectRef) -> Lookup<Target<'_>> {
        if *target == self.object.key.to_ref() {
            Lookup::Found(Target::of(&self.object))
        } else {
            self.inner.get_target(target)
        }
    }

    fn scalers_of(&self, target: &ObjectRef) -> Arc<Autoscalers> {
        self.inner.scalers_of(target)
    }

    fn list(&self, namespace: &str, group: &str, kind: &str) -> Lookup<Vec<Arc<Object>>> {
        self.inner.list(namespace, group, kind)
    }

    fn visit_list(
        &self,
        namespace: &str,
        group: &str,
        kind: &str,
        visit: &mut dyn FnMut(&Arc<Object>),
    ) -> Lookup<()> {
        self.inner.visit_list(namespace, group, kind, visit)
    }

    fn visit_budgets(&self, namespace: &str, visit: &mut dyn FnMut(&Arc<Object>, Block)) {
        self.inner.visit_budgets(namespace, visit);
    }

    fn visit_vpas(&self, target: &ObjectRef, visit: &mut dyn FnMut(&Arc<Object>)) {
        self.inner.visit_vpas(target, visit);
    }
}

/// Lints a workload being admitted (a Deployment, StatefulSet, ...) against the
/// HPAs that scale it, as the index knows them: each is linted with `workload`
/// in place of its stored version, and the findings about the workload are
/// returned, once each. On update, `operation` holds the workload's old version.
pub fn lint_workload(
    workload: &Object,
    operation: Operation<'_>,
    index: &dyn Index,
    settings: &Settings,
) -> Vec<Diagnostic> {
    let target = workload.key.to_ref();
    let overlay = WithObject {
        inner: index,
        object: Arc::new(workload.clone()),
    };
    let mut out = lint_object(workload, settings);
    let scalers = index.scalers_of(&target).all();
    let hpas = scalers
        .iter()
        .filter_map(|member| match index.get(&member.key.to_ref()) {
            Lookup::Found(object) if object.is_hpa() => Some(object),
            _ => None,
        });
    for hpa in hpas {
        for diagnostic in lint(&hpa, operation, &overlay, settings) {
            let repeated = out.iter().any(|d| {
                (d.rule.name, &d.path, &d.message)
                    == (diagnostic.rule.name, &diagnostic.path, &diagnostic.message)
            });
            if diagnostic.subject.key.to_ref() == target && !repeated {
                out.push(diagnostic);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::settings::Settings;
    use crate::testing::lint_yaml;

    const TARGET: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations: {ANNOTATION}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: web, resources: {requests: {cpu: 100m}}}]
";
    const HPA: &str = "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  annotations: {ANNOTATION}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 3
  maxReplicas: 3
";

    /// Rules found with one annotation on the HPA and one on its target.
    fn rules(on_hpa: &str, on_target: &str) -> Vec<(&'static str, String)> {
        let text = format!(
            "{}---\n{}",
            HPA.replace("{ANNOTATION}", on_hpa),
            TARGET.replace("{ANNOTATION}", on_target)
        );
        lint_yaml(&text, &Settings::default())
            .into_iter()
            .map(|f| (f.rule, f.text))
            .collect()
    }

    fn names(found: &[(&'static str, String)]) -> Vec<&'static str> {
        found.iter().map(|(rule, _)| *rule).collect()
    }

    #[test]
    fn without_annotations_both_findings_show() {
        assert_eq!(
            names(&rules("{}", "{}")),
            ["min-equals-max", "target-replicas-conflict"]
        );
    }

    #[test]
    fn an_annotation_on_the_hpa_or_on_its_target_suppresses_a_rule() {
        let on_hpa = "{hpa-lint.io/ignore.min-equals-max: \"frozen during the migration\"}";
        assert_eq!(names(&rules(on_hpa, "{}")), ["target-replicas-conflict"]);
        let on_target =
            "{hpa-lint.io/ignore.target-replicas-conflict: \"Argo CD ignores /spec/replicas\"}";
        assert_eq!(names(&rules("{}", on_target)), ["min-equals-max"]);
        // The HPA's annotation also covers findings it causes on its target.
        let on_hpa = "{hpa-lint.io/ignore.target-replicas-conflict: \"see TICKET-7\"}";
        assert_eq!(names(&rules(on_hpa, "{}")), ["min-equals-max"]);
    }

    /// Skipping the object stage on objects without `hpa-lint.io/`
    /// annotations ([`super::object_stage_reads`]) hides no finding: on
    /// every object of the real-world corpus and the examples, and on
    /// objects with and without hpa-lint's annotations, every rule enabled.
    #[test]
    fn skipping_the_object_stage_hides_no_finding() {
        use super::{Findings, lint_object, object_stage_reads, run_object_stage};
        let mut settings = Settings::default();
        crate::rules::ALL
            .iter()
            .for_each(|rule| settings.enable(rule));
        let annotations = [
            "{}",
            "{team: web, hpa-lint.io/ignore.min-equals-max: \"pinned\"}",
            "{hpa-lint.io/ignore.no-such-rule: x, hpa-lint.io/ignore.min-equals-max: \"\"}",
            "{hpa-lint.io/other: x}",
            "{prefix.hpa-lint.io/ignore.min-equals-max: \"\"}",
        ];
        let made = annotations
            .iter()
            .flat_map(|a| [HPA, TARGET].map(|text| object(&text.replace("{ANNOTATION}", a))));
        let corpus = crate::testing::manifest_files()
            .into_iter()
            .flat_map(|file| {
                let text = std::fs::read_to_string(file).unwrap();
                crate::testing::objects(&text)
                    .into_iter()
                    .map(|o| (*o).clone())
            });
        let (mut with, mut without, mut found) = (0, 0, 0);
        for object in made.chain(corpus) {
            let mut all = Findings::new(usize::MAX);
            run_object_stage(&object, &settings, &mut all);
            let shown = |found: &[crate::diagnostic::Diagnostic]| -> Vec<String> {
                found
                    .iter()
                    .map(|d| format!("{} {}", d.rule.name, d.source_path))
                    .collect()
            };
            assert_eq!(
                shown(&lint_object(&object, &settings)),
                shown(&all.kept),
                "{:?}",
                object.key
            );
            found += all.kept.len();
            if object_stage_reads(&object.value) {
                with += 1;
            } else {
                without += 1;
            }
        }
        // Both kinds of object were seen, and the stage found something.
        assert!(
            with >= 6 && without > 100 && found >= 4,
            "{with} {without} {found}"
        );
    }

    fn object(yaml: &str) -> crate::object::Object {
        let value = crate::source::read_document(yaml, &|_, _| &crate::source::ALL)
            .values
            .remove(0)
            .0;
        crate::object::Object::new(value, crate::object::Origin::default(), "default").unwrap()
    }

    /// The checks that run are worked out once for settings ([`Enabled`])
    /// and answer as the settings do: levels set, and `live` turned on.
    #[test]
    fn the_checks_worked_out_once_run_as_the_settings_say() {
        use std::sync::Arc;

        use crate::diagnostic::Severity;
        use crate::index::MemoryIndex;
        use crate::lint::{Enabled, Linted, Operation, lint, lint_hpa_with};
        use crate::rules::{min_equals_max, target_replicas_conflict};
        use crate::settings::Level;

        let hpa = object(&HPA.replace("{ANNOTATION}", "{}"));
        let target = object(&TARGET.replace("{ANNOTATION}", "{}"));
        let index = MemoryIndex::new([Arc::new(hpa.clone()), Arc::new(target)]);
        let found = |settings: &Settings| -> Vec<(&'static str, Severity)> {
            let with = |enabled: &Enabled| -> Vec<(&'static str, Severity)> {
                let linted = Linted::of(&hpa);
                lint_hpa_with(&linted, Operation::Create, &index, settings, enabled)
                    .iter()
                    .map(|d| (d.rule.name, d.severity))
                    .collect()
            };
            let enabled = Enabled::of(settings);
            let found = with(&enabled);
            // Once worked out, the same for every HPA.
            assert_eq!(with(&enabled), found);
            let linted = lint(&hpa, Operation::Create, &index, settings);
            let linted: Vec<_> = linted.iter().map(|d| (d.rule.name, d.severity)).collect();
            assert_eq!(linted, found);
            found
        };
        let (min_max, conflict) = (&min_equals_max::RULE, &target_replicas_conflict::RULE);
        let mut settings = Settings::default();
        assert_eq!(
            found(&settings),
            [
                (min_max.name, min_max.severity),
                (conflict.name, conflict.severity)
            ]
        );
        settings.set_level(min_max, Level::Off);
        assert_eq!(found(&settings), [(conflict.name, conflict.severity)]);
        settings.set_level(conflict, Level::On(Severity::Info));
        assert_eq!(found(&settings), [(conflict.name, Severity::Info)]);
        settings.enable(min_max);
        assert_eq!(found(&settings).len(), 2);
        // Live objects: the rules about manifests are off.
        settings.live = true;
        assert_eq!(found(&settings), [(min_max.name, min_max.severity)]);
    }

    /// A manifest's `status` is decoded as the server decodes it; a live
    /// object's was written by its server, which may know more fields.
    #[test]
    fn status_is_decoded_in_manifests_only() {
        use std::sync::Arc;

        use crate::index::MemoryIndex;
        use crate::lint::{Operation, lint};

        let text = HPA.replace("{ANNOTATION}", "{}")
            + "status:\n  desiredReplicas: \"3\"\n  conditions: [{type: AbleToScale, status: \"True\", observedGeneration: 2}]\n";
        let hpa = object(&text);
        let index = MemoryIndex::new([Arc::new(hpa.clone())]);
        let rules = |settings: &Settings| -> Vec<&'static str> {
            lint(&hpa, Operation::Create, &index, settings)
                .iter()
                .map(|d| d.rule.name)
                .filter(|name| *name != "target-not-found")
                .collect()
        };
        let mut settings = Settings::default();
        assert_eq!(
            rules(&settings),
            ["invalid-field-type", "unknown-field", "min-equals-max"]
        );
        settings.live = true;
        assert_eq!(rules(&settings), ["min-equals-max", "unknown-metric-value"]);
    }

    /// A Deployment update is linted against the live HPA that scales it.
    #[test]
    fn a_workload_is_linted_against_the_hpas_that_scale_it() {
        use std::sync::Arc;

        use crate::index::MemoryIndex;
        use crate::lint::{Operation, lint_workload};

        let hpa = HPA.replace("{ANNOTATION}", "{}");
        let live = TARGET.replace("{ANNOTATION}", "{}");
        let index = MemoryIndex::new([Arc::new(object(&hpa)), Arc::new(object(&live))]);
        let settings = Settings::default();
        let rules = |new: &str, operation: Operation<'_>| -> Vec<&'static str> {
            lint_workload(&object(new), operation, &index, &settings)
                .iter()
                .map(|d| d.rule.name)
                .collect()
        };
        let old = object(&live);
        let same = live.clone();
        let scaled = live.replace("replicas: 3", "replicas: 5");
        let no_requests = live.replace(", resources: {requests: {cpu: 100m}}", "");
        // Findings about the HPA itself (min-equals-max) are not the workload's.
        assert_eq!(
            rules(&same, Operation::Update { old: &old }),
            Vec::<&str>::new()
        );
        assert_eq!(
            rules(&scaled, Operation::Update { old: &old }),
            ["target-replicas-conflict"]
        );
        assert_eq!(
            rules(&same, Operation::Create),
            ["target-replicas-conflict"]
        );
        assert_eq!(
            rules(&no_requests, Operation::Update { old: &old }),
            ["target-missing-requests"]
        );
    }

    /// A megabyte-long name in an HPA with thousands of invalid metrics: every
    /// message quotes a bounded part of it, and the findings share one copy of
    /// the HPA's key instead of one each (which took gigabytes).
    #[test]
    fn long_values_are_quoted_short_and_never_copied_per_finding() {
        use std::sync::Arc;

        use crate::index::MemoryIndex;
        use crate::lint::{Operation, lint};
        use crate::quote::MAX_MESSAGE_BYTES;

        let name = "w".repeat(1 << 20);
        let metrics: Vec<serde_json::Value> = (0..3000)
            .map(|i| serde_json::json!({"type": "Pods", "pods": {"metric": {"name": format!("m/{i}")}, "target": {"type": "Value", "value": "-1"}}}))
            .collect();
        let value = serde_json::json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": name, "labels": {"x": name}},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                     "maxReplicas": 3, "metrics": metrics}
        });
        let hpa =
            crate::object::Object::new(value, crate::object::Origin::default(), "default").unwrap();
        let found = lint(
            &hpa,
            Operation::Create,
            &MemoryIndex::default(),
            &Settings::default(),
        );
        assert!(found.len() > 9000, "{}", found.len());
        for d in &found {
            assert!(Arc::ptr_eq(&d.subject.key, &found[0].subject.key));
            let text = d.field_message();
            assert!(text.len() < MAX_MESSAGE_BYTES, "{}", text.len());
        }
        let head = "w".repeat(64);
        for (path, shown) in [
            ("metadata.name", format!("\"{head}…\" (1048576 bytes)")),
            ("metadata.labels", format!("\"{head}…\" (1048576 bytes)")),
            ("spec.scaleTargetRef", format!("`{head}…` (1048576 bytes)")),
        ] {
            assert!(
                found
                    .iter()
                    .any(|d| d.path.to_string() == path && d.message.contains(&shown)),
                "{path}"
            );
        }
    }

    /// `lint_at_most` keeps the first findings of `lint` and counts the others;
    /// suppressed ones are neither kept nor counted.
    #[test]
    fn lint_at_most_keeps_the_first_findings_and_counts_the_others() {
        use crate::index::MemoryIndex;
        use crate::lint::{Operation, lint, lint_at_most};

        let metrics: Vec<serde_json::Value> = (0..300)
            .map(|i| serde_json::json!({"type": "Pods", "pods": {"metric": {"name": format!("m/{i}")}, "target": {"type": "Value", "value": "-1"}}}))
            .collect();
        let value = serde_json::json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "annotations": {"hpa-lint.io/ignore.invalid-metric-name": "generated"}},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "maxReplicas": 3, "metrics": metrics}
        });
        let hpa =
            crate::object::Object::new(value, crate::object::Origin::default(), "default").unwrap();
        let (index, settings) = (MemoryIndex::default(), Settings::default());
        let all = lint(&hpa, Operation::Create, &index, &settings);
        assert!(all.len() > 500, "{}", all.len());
        assert!(!all.iter().any(|d| d.rule.name == "invalid-metric-name"));
        let (kept, more) = lint_at_most(&hpa, Operation::Create, &index, &settings, 100);
        assert_eq!((kept.len(), more), (100, all.len() - 100));
        let messages = |found: &[crate::Diagnostic]| -> Vec<String> {
            found.iter().map(crate::Diagnostic::field_message).collect()
        };
        assert_eq!(messages(&kept), messages(&all[..100]));
    }

    /// `scaleTargetRef` naming a Deployment without its group: the controller
    /// finds nothing (`target-not-scalable`), and the Deployment it means is
    /// checked too, each finding saying which object that is.
    #[test]
    fn the_target_meant_without_its_group_is_checked_too() {
        let deployment = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: web}]
";
        let note =
            " (in Deployment `web`, which `scaleTargetRef` means but does not name with its group)";
        for reference in [
            "{kind: Deployment, name: web}",
            "{apiVersion: v1, kind: Deployment, name: web}",
            "{apiVersion: extensions/v1beta1, kind: Deployment, name: web}",
        ] {
            let hpa = format!(
                "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {{name: web}}
spec:
  scaleTargetRef: {reference}
  maxReplicas: 5
  metrics:
  - {{type: Resource, resource: {{name: cpu, target: {{type: Utilization, averageUtilization: 60}}}}}}
  - {{type: ContainerResource, containerResource: {{name: cpu, container: proxy, target: {{type: Utilization, averageUtilization: 60}}}}}}
"
            );
            let found: Vec<(&str, bool)> =
                lint_yaml(&format!("{hpa}---\n{deployment}"), &Settings::default())
                    .iter()
                    .filter(|f| f.rule != "invalid-object-reference")
                    .map(|f| (f.rule, f.text.ends_with(note)))
                    .collect();
            assert_eq!(
                found,
                [
                    ("target-not-scalable", false),
                    ("container-not-found", true),
                    ("target-replicas-conflict", true),
                    ("target-missing-requests", true),
                ],
                "{reference}"
            );
        }
        // A kind that cannot be scaled in any group means no other object.
        let hpa = HPA
            .replace("{ANNOTATION}", "{}")
            .replace("apiVersion: apps/v1, kind: Deployment", "kind: DaemonSet");
        let daemon_set = deployment.replace("Deployment", "DaemonSet");
        let rules: Vec<&str> = lint_yaml(&format!("{hpa}---\n{daemon_set}"), &Settings::default())
            .iter()
            .map(|f| f.rule)
            .collect();
        assert_eq!(
            rules,
            [
                "invalid-object-reference",
                "target-not-scalable",
                "min-equals-max"
            ]
        );
    }

    /// An empty reason still suppresses (the author meant to), but is reported.
    #[test]
    fn an_empty_reason_or_an_unknown_rule_is_a_warning() {
        let found = rules(
            "{hpa-lint.io/ignore.min-equals-max: \"\"}",
            "{hpa-lint.io/ignore.target-replica-conflict: x}",
        );
        assert_eq!(
            found,
            [
                (
                    "invalid-suppression",
                    "metadata.annotations[hpa-lint.io/ignore.min-equals-max]: suppression of `min-equals-max` gives no reason".to_owned()
                ),
                (
                    "invalid-suppression",
                    "metadata.annotations[hpa-lint.io/ignore.target-replica-conflict]: suppression names unknown rule `target-replica-conflict` (did you mean `target-replicas-conflict`?)".to_owned()
                ),
                ("target-replicas-conflict", found[2].1.clone()),
            ]
        );
    }
}
