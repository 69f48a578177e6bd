//! Runs the rules on one object. Front ends call [`lint`] for every object they
//! have; everything about which rule runs, at which severity, and what is
//! suppressed happens here.

use std::borrow::Cow;
use std::cell::{Cell, OnceCell};
use std::sync::Arc;

use crate::diagnostic::{Diagnostic, Reason, Severity, Subject};
use crate::index::{Index, Lookup};
use crate::model::autoscaler::Autoscalers;
use crate::model::decode::DecodeErrorKind;
use crate::model::hpa::Hpa;
use crate::model::workload::{TargetKind, meant_target};
use crate::object::{Object, ObjectRef};
use crate::path::FieldPath;
use crate::quote::{MAX_MESSAGE_BYTES, code, truncate};
use crate::registry::{ALL, Category, Check, Rule};
use crate::rules::{invalid_field_type, invalid_quantity, invalid_suppression, unknown_field};
use crate::settings::Settings;

/// Annotation prefix that suppresses a rule on an object:
/// `hpa-lint.io/ignore.<rule-name>: "<reason>"`.
pub const SUPPRESSION_PREFIX: &str = "hpa-lint.io/ignore.";

/// The admission operation. The CLI lints everything as a create.
#[derive(Clone, Copy, Debug)]
pub enum Operation<'a> {
    /// A new object.
    Create,
    /// A change to `old`.
    Update {
        /// The object before the change.
        old: &'a Object,
    },
}

/// What a per-HPA check sees.
pub struct Context<'a> {
    /// The HPA as written.
    pub object: &'a Object,
    /// The HPA decoded, converted and defaulted.
    pub hpa: &'a Hpa,
    /// On update, the previous HPA (for the API server's ratchets).
    pub old_hpa: Option<&'a Hpa>,
    /// The operation.
    pub operation: Operation<'a>,
    /// Other objects.
    pub index: &'a dyn Index,
    /// Settings.
    pub settings: &'a Settings,
    /// The target, looked up once: several rules ask, and an index may have to
    /// parse it.
    target: OnceCell<Lookup<Arc<Object>>>,
    /// The target `scaleTargetRef` means, when it names it without its group.
    meant: Option<&'a MeantTarget>,
}

/// The object `scaleTargetRef` means when it names a scalable kind with a
/// group the kind does not live in (`kind: Deployment` without `apiVersion`).
/// The controller finds nothing there, and `target-not-scalable` says so; the
/// rules about the target check the object meant, so that the next run does
/// not fail again on its problems, and their findings say which object that is.
pub(crate) struct MeantTarget {
    target: ObjectRef,
    /// Whether the rule being run has looked at it.
    used: Cell<bool>,
}

impl MeantTarget {
    fn of(hpa: &Hpa, namespace: &str, settings: &Settings) -> Option<Self> {
        Some(Self {
            target: meant_target(&settings.cluster, &hpa.target(namespace))?,
            used: Cell::new(false),
        })
    }

    fn note(&self) -> String {
        format!(
            " (in {}, which `scaleTargetRef` means but does not name with its group)",
            self.target.describe()
        )
    }
}

impl Context<'_> {
    /// The object `spec.scaleTargetRef` points to, as written.
    pub fn target_ref(&self) -> ObjectRef {
        self.hpa.target(&self.object.key.namespace)
    }

    /// The object `spec.scaleTargetRef` means: as written, or in the group
    /// its kind lives in when it names it without (see [`MeantTarget`]; the
    /// rule's findings then say so).
    pub fn meant_ref(&self) -> ObjectRef {
        match self.meant {
            Some(meant) => {
                meant.used.set(true);
                meant.target.clone()
            }
            None => self.target_ref(),
        }
    }

    /// The target `spec.scaleTargetRef` means, looked up in the index.
    pub fn target(&self) -> Lookup<Arc<Object>> {
        let target = self.meant_ref();
        self.target.get_or_init(|| self.index.get(&target)).clone()
    }

    /// The target as found in the index, `None` when missing or unknown.
    pub fn found_target(&self) -> Option<Arc<Object>> {
        match self.target() {
            Lookup::Found(target) => Some(target),
            Lookup::Missing | Lookup::Unreadable | Lookup::Unknown => None,
        }
    }

    /// The target when the index has it and its kind can be scaled: what the
    /// rules about the target's pods and fields look at.
    pub fn workload(&self) -> Option<Arc<Object>> {
        let target = self.meant_ref();
        let kind = TargetKind::classify(&self.settings.cluster, &target.group, &target.kind);
        if target.kind.is_empty() || target.name.is_empty() || !kind.is_scalable() {
            return None;
        }
        self.found_target()
    }

    /// `Kind "name"` of the HPA, for messages.
    pub fn hpa_name(&self) -> String {
        format!("HorizontalPodAutoscaler {}", code(&self.object.key.name))
    }

    /// What another rule finds on this HPA, whether it is enabled or not: for
    /// a rule that explains a failure with the finding that causes it.
    pub fn findings_of(&self, rule: &'static Rule) -> Vec<Diagnostic> {
        let Check::Hpa(check) = rule.check else {
            return Vec::new();
        };
        let mut findings = Findings::new(usize::MAX);
        check(
            self,
            &mut Report {
                rule,
                severity: rule.severity,
                pinned: false,
                hpa_subject: &subject(self.object),
                hpa: self.hpa,
                meant: self.meant,
                findings: &mut findings,
            },
        );
        findings.kept
    }
}

/// Where a rule's findings go.
pub struct Report<'a> {
    rule: &'static Rule,
    severity: Severity,
    pinned: bool,
    hpa_subject: &'a Subject,
    hpa: &'a Hpa,
    meant: Option<&'a MeantTarget>,
    findings: &'a mut Findings,
}

/// Where the findings of one object go: the first `max` are kept, the others
/// only counted.
struct Findings {
    kept: Vec<Diagnostic>,
    max: usize,
    more: usize,
    /// The last finding not kept, for its reporter to finish (help, fix).
    spare: Option<Diagnostic>,
}

impl Findings {
    fn new(max: usize) -> Self {
        Self {
            kept: Vec::new(),
            max,
            more: 0,
            spare: None,
        }
    }

    fn keep(&mut self, diagnostic: Diagnostic) -> &mut Diagnostic {
        if self.kept.len() < self.max {
            self.kept.push(diagnostic);
            self.kept.last_mut().expect("just pushed")
        } else {
            self.more += 1;
            self.discard(diagnostic)
        }
    }

    fn discard(&mut self, diagnostic: Diagnostic) -> &mut Diagnostic {
        self.spare.insert(diagnostic)
    }
}

/// The subject of findings on `object`. Its findings share one copy of its key,
/// however long the name and however many the findings.
fn subject(object: &Object) -> Subject {
    Subject {
        key: Arc::new(object.key.clone()),
        origin: object.origin,
    }
}

impl Report<'_> {
    /// Reports a finding on a field of the HPA.
    pub fn report(&mut self, path: FieldPath, message: impl Into<String>) -> &mut Diagnostic {
        let source_path = self.hpa.source_path(&path);
        self.push(self.hpa_subject.clone(), path, source_path, message.into())
    }

    /// Reports a finding on the HPA at a severity other than the rule's default
    /// (e.g. an error once an API version is removed); a severity the user
    /// configured for the rule still wins.
    pub fn report_at(
        &mut self,
        severity: Severity,
        path: FieldPath,
        message: impl Into<String>,
    ) -> &mut Diagnostic {
        let pinned = self.pinned;
        let diagnostic = self.report(path, message);
        if !pinned {
            diagnostic.severity = severity;
        }
        diagnostic
    }

    /// Reports a finding on a field of another object (e.g. the target
    /// workload); left out when that object suppresses the rule.
    pub fn report_on(
        &mut self,
        object: &Object,
        path: FieldPath,
        message: impl Into<String>,
    ) -> &mut Diagnostic {
        let source_path = path.clone();
        let suppressed = suppression(object, self.rule).is_some();
        let diagnostic = self.diagnostic(subject(object), path, source_path, message.into());
        if suppressed {
            self.findings.discard(diagnostic)
        } else {
            self.findings.keep(diagnostic)
        }
    }

    /// Reports an API-server field error on the HPA: the message is rendered the
    /// way the server renders it, e.g. `Invalid value: 3600: must be ...`.
    pub fn field_error(
        &mut self,
        path: FieldPath,
        reason: Reason,
        value: Option<String>,
        detail: &str,
    ) -> &mut Diagnostic {
        let message = reason.render(value.as_deref(), detail);
        let diagnostic = self.report(path, message);
        diagnostic.reason = Some(reason);
        diagnostic
    }

    fn push(
        &mut self,
        subject: Subject,
        path: FieldPath,
        source_path: FieldPath,
        message: String,
    ) -> &mut Diagnostic {
        let diagnostic = self.diagnostic(subject, path, source_path, message);
        self.findings.keep(diagnostic)
    }

    fn diagnostic(
        &self,
        subject: Subject,
        path: FieldPath,
        source_path: FieldPath,
        mut message: String,
    ) -> Diagnostic {
        if let Some(meant) = self.meant.filter(|meant| meant.used.get()) {
            message.push_str(&meant.note());
        }
        truncate(&mut message, MAX_MESSAGE_BYTES);
        Diagnostic {
            rule: self.rule,
            severity: self.severity,
            subject,
            path,
            source_path,
            reason: None,
            message,
            help: None,
            fix: None,
        }
    }
}

/// A finding of an input rule (`invalid-yaml`, `duplicate-key`, `helm-template`)
/// that a front end detects while reading; `None` when the rule is off.
pub fn input_finding(
    settings: &Settings,
    rule: &'static Rule,
    subject: Subject,
    path: FieldPath,
    message: String,
    help: Option<&'static str>,
) -> Option<Diagnostic> {
    Some(Diagnostic {
        rule,
        severity: settings.severity(rule)?,
        subject,
        source_path: path.clone(),
        path,
        reason: None,
        message,
        help: help.map(Cow::Borrowed),
        fix: None,
    })
}

/// Lints one object: the suppression annotations of any object, and for HPAs
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
    for diagnostic in check_suppressions(object, settings) {
        findings.keep(diagnostic);
    }
    run_hpa_checks(object, operation, index, settings, &mut findings);
    (findings.kept, findings.more)
}

/// The checks of an HPA ([`lint`] without [`check_suppressions`]): nothing
/// for other objects.
pub fn lint_hpa(
    object: &Object,
    operation: Operation<'_>,
    index: &dyn Index,
    settings: &Settings,
) -> Vec<Diagnostic> {
    let mut findings = Findings::new(usize::MAX);
    run_hpa_checks(object, operation, index, settings, &mut findings);
    findings.kept
}

fn run_hpa_checks(
    object: &Object,
    operation: Operation<'_>,
    index: &dyn Index,
    settings: &Settings,
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
    let Some(hpa) = Hpa::decode(object, &settings.cluster, old_hpa.as_ref()) else {
        return;
    };
    let meant = MeantTarget::of(&hpa, &object.key.namespace, settings);
    let hpa_subject = subject(object);
    let mut report = |rule: &'static Rule, f: &mut dyn FnMut(&mut Report<'_>)| {
        // The HPA's annotation suppresses the rule, whichever object its
        // findings are about.
        if suppression(object, rule).is_some() {
            return;
        }
        if let Some(severity) = settings.severity(rule) {
            f(&mut Report {
                rule,
                severity,
                pinned: settings.is_pinned(rule),
                hpa_subject: &hpa_subject,
                hpa: &hpa,
                meant: meant.as_ref(),
                findings: &mut *findings,
            });
        }
    };
    for error in &hpa.decode_errors {
        let (rule, fix) = match error.kind {
            DecodeErrorKind::UnknownField => (
                &unknown_field::RULE,
                unknown_field::fix(error, &object.value),
            ),
            DecodeErrorKind::Type => (
                &invalid_field_type::RULE,
                invalid_field_type::fix(error, &object.value),
            ),
            DecodeErrorKind::Quantity => (&invalid_quantity::RULE, None),
        };
        report(rule, &mut |r| {
            let d = r.report(error.path.clone(), error.message.clone());
            d.reason = Some(Reason::BadRequest);
            d.fix = fix.clone();
        });
    }
    let cx = Context {
        object,
        hpa: &hpa,
        old_hpa: old_hpa.as_ref(),
        operation,
        index,
        settings,
        target: OnceCell::new(),
        meant: meant.as_ref(),
    };
    // The server validates only what it could decode, and only served versions.
    let validated = hpa.decodable && hpa.version.is_validated();
    for rule in ALL {
        let Check::Hpa(check) = rule.check else {
            continue;
        };
        if rule.category == Category::ApiServer && !validated {
            continue;
        }
        if let Some(meant) = &meant {
            meant.used.set(false);
        }
        report(rule, &mut |r| check(&cx, r));
    }
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

    fn scalers_of(&self, target: &ObjectRef) -> Arc<Autoscalers> {
        self.inner.scalers_of(target)
    }

    fn list(&self, namespace: &str, group: &str, kind: &str) -> Vec<Arc<Object>> {
        self.inner.list(namespace, group, kind)
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
    let mut out: Vec<Diagnostic> = check_suppressions(workload, settings).collect();
    let scalers = index.scalers_of(&target);
    let hpas = scalers
        .all()
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

/// The reason given in `hpa-lint.io/ignore.<rule>` on `object`, if any.
fn suppression<'o>(object: &'o Object, rule: &Rule) -> Option<&'o str> {
    object.annotation(&format!("{SUPPRESSION_PREFIX}{}", rule.name))
}

/// Findings about the suppression annotations themselves: no reason, or an
/// unknown rule name.
pub fn check_suppressions<'o>(
    object: &'o Object,
    settings: &Settings,
) -> impl Iterator<Item = Diagnostic> + 'o {
    let rule = &invalid_suppression::RULE;
    let severity = settings.severity(rule);
    let annotations = object
        .value
        .pointer("/metadata/annotations")
        .and_then(serde_json::Value::as_object)
        .filter(|_| severity.is_some());
    let object_subject = subject(object);
    annotations
        .into_iter()
        .flatten()
        .filter_map(move |(key, value)| {
            let name = key.strip_prefix(SUPPRESSION_PREFIX)?;
            let message = invalid_suppression::problem(name, value)?;
            let path = FieldPath::fields("metadata.annotations").key(key);
            Some(Diagnostic {
                rule,
                severity: severity?,
                subject: object_subject.clone(),
                source_path: path.clone(),
                path,
                reason: None,
                message,
                help: Some(Cow::Borrowed(invalid_suppression::HELP)),
                fix: None,
            })
        })
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

    fn object(yaml: &str) -> crate::object::Object {
        let value = crate::source::read_document(yaml, &|_, _| &crate::source::ALL)
            .values
            .remove(0)
            .0;
        crate::object::Object::new(value, crate::object::Origin::default(), "default").unwrap()
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
