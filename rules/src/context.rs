//! What a rule's check sees and where its findings go, at each stage of
//! reading an object ([`Check`]): the document, the decoding of an HPA, any
//! object, and the decoded HPA with the other objects ([`Context`]).

use std::borrow::Cow;
use std::cell::{Cell, OnceCell};
use std::sync::Arc;

use crate::cluster::Cluster;
use crate::controller::{Autoscaler, ControllerFlags};
use crate::diagnostic::{Diagnostic, Reason, Severity, Subject};
use crate::index::{Index, Lookup};
use crate::model::decode::DecodeError;
use crate::model::hpa::{Hpa, MetricSource, SourcePath};
use crate::model::linted::Linted;
use crate::model::workload::{Target, TargetKind, meant_target};
use crate::object::{Object, ObjectKey, ObjectRef, Origin};
use crate::path::FieldPath;
use crate::quote::{MAX_MESSAGE_BYTES, code, truncate};
use crate::registry::Rule;
use crate::settings::Settings;
use crate::source::Problem;

/// How and when a rule finds its problems. Every rule's file has
/// `pub(crate) const CHECK: Check`.
#[derive(Clone, Copy)]
pub enum Check {
    /// A problem met while reading a document (bad syntax, a repeated key, a
    /// template): the finding the rule makes of it, if it is the rule's kind.
    Document(fn(&Problem) -> Option<DocumentFinding>),
    /// A field of an HPA that does not decode into the API's types.
    Decode(fn(&DecodeError, &Object, &mut Report<'_>)),
    /// Any object, HPA or not, that has hpa-lint annotations: those are
    /// what it checks ([`crate::lint::object_stage_reads`]).
    Object(fn(&Object, &mut Report<'_>)),
    /// Every decoded HPA, with the other objects.
    Hpa(fn(&Context<'_>, &mut Report<'_>)),
}

/// What a document-stage rule says about a problem.
#[derive(Debug)]
pub struct DocumentFinding {
    /// What is wrong.
    pub message: String,
    /// What to do about it, when it is always the same.
    pub help: Option<&'static str>,
}

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
    pub object: &'a Linted<'a>,
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
    /// The object `spec.scaleTargetRef` points to: several rules ask.
    pub(crate) target_ref: ObjectRef,
    /// The target, looked up once: several rules ask, and an index may have to
    /// read it.
    pub(crate) target: OnceCell<Lookup<Target<'a>>>,
    /// The target `scaleTargetRef` means, when it names it without its group.
    pub(crate) meant: Option<&'a MeantTarget>,
    /// [`Context::autoscaler`], made once: several rules simulate it.
    pub(crate) autoscaler: OnceCell<Autoscaler>,
}

/// The object `scaleTargetRef` means when it names a scalable kind with a
/// group the kind does not live in (`kind: Deployment` without `apiVersion`).
/// The controller finds nothing there, and `target-not-scalable` says so; the
/// rules about the target check the object meant, so that the next run does
/// not fail again on its problems, and their findings say which object that is.
pub(crate) struct MeantTarget {
    target: ObjectRef,
    /// Whether the rule being run has looked at it.
    pub(crate) used: Cell<bool>,
}

impl MeantTarget {
    /// What `target`, as `scaleTargetRef` names it, means.
    pub(crate) fn of(target: &ObjectRef, cluster: &Cluster) -> Option<Self> {
        Some(Self {
            target: meant_target(cluster, target)?,
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

impl<'a> Context<'a> {
    /// Each metric's member that the API server validates, with its path
    /// (see [`Hpa::validated_sources`]).
    pub fn validated_sources(&self) -> impl Iterator<Item = (SourcePath, MetricSource<'a>)> {
        self.hpa.validated_sources()
    }

    /// The HPA as the controller sees it, with the controller's default
    /// flags.
    pub fn autoscaler(&self) -> &Autoscaler {
        self.autoscaler.get_or_init(|| {
            Autoscaler::new(self.hpa, ControllerFlags::default(), &self.settings.cluster)
        })
    }

    /// The object `spec.scaleTargetRef` points to, as written.
    pub fn target_ref(&self) -> &ObjectRef {
        &self.target_ref
    }

    /// The object `spec.scaleTargetRef` means: as written, or in the group
    /// its kind lives in when it names it without (see [`MeantTarget`]; the
    /// rule's findings then say so).
    pub fn meant_ref(&self) -> &ObjectRef {
        match self.meant {
            Some(meant) => {
                meant.used.set(true);
                &meant.target
            }
            None => &self.target_ref,
        }
    }

    /// The target `spec.scaleTargetRef` means, looked up in the index.
    pub fn target(&self) -> &Lookup<Target<'a>> {
        let target = self.meant_ref();
        self.target.get_or_init(|| self.index.get_target(target))
    }

    /// The target as found in the index, `None` when missing or unknown.
    pub fn found_target(&self) -> Option<&Target<'a>> {
        match self.target() {
            Lookup::Found(target) => Some(target),
            Lookup::Missing | Lookup::Unreadable | Lookup::Unknown => None,
        }
    }

    /// The target when the index has it and its kind can be scaled: what the
    /// rules about the target's pods and fields look at.
    pub fn workload(&self) -> Option<&Target<'a>> {
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

    /// What another rule's check finds on this HPA, whether that rule is
    /// enabled or not: for a rule that explains a failure with the finding that
    /// causes it.
    pub fn findings_of(&self, rule: &'static Rule, check: Check) -> Vec<Diagnostic> {
        let Check::Hpa(check) = check else {
            return Vec::new();
        };
        let mut findings = Findings::new(usize::MAX);
        check(
            self,
            &mut Report {
                rule,
                severity: rule.severity,
                pinned: false,
                subject: &Subjects::of(&self.object.key, self.object.origin),
                hpa: Some(self.hpa),
                meant: self.meant,
                findings: &mut findings,
            },
        );
        findings.kept
    }
}

/// Where a rule's findings on one object go.
pub struct Report<'a> {
    pub(crate) rule: &'static Rule,
    pub(crate) severity: Severity,
    /// Whether the configuration set the severity (see [`Report::report_at`]).
    pub(crate) pinned: bool,
    /// The object being linted.
    pub(crate) subject: &'a Subjects<'a>,
    /// The object decoded, when it is an HPA: findings on its fields are
    /// located where the fields are written (see [`Hpa::source_path`]).
    pub(crate) hpa: Option<&'a Hpa>,
    pub(crate) meant: Option<&'a MeantTarget>,
    pub(crate) findings: &'a mut Findings,
}

/// Where the findings of one object go: the first `max` are kept, the others
/// only counted.
pub(crate) struct Findings {
    pub(crate) kept: Vec<Diagnostic>,
    max: usize,
    pub(crate) more: usize,
    /// The last finding not kept, for its reporter to finish (help, fix).
    spare: Option<Diagnostic>,
}

impl Findings {
    pub(crate) fn new(max: usize) -> Self {
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

/// An object other than the one linted that findings may be about: one
/// read whole, or a scale target as rules read it.
pub trait OtherObject {
    /// The subject of findings on it.
    fn subject(&self) -> Subject;
    /// Whether it suppresses `rule`.
    fn suppresses(&self, rule: &str) -> bool;
}

impl OtherObject for Object {
    fn subject(&self) -> Subject {
        subject(&self.key, self.origin)
    }

    fn suppresses(&self, rule: &str) -> bool {
        self.suppression(rule).is_some()
    }
}

impl OtherObject for Target<'_> {
    fn subject(&self) -> Subject {
        subject(&self.key, self.origin)
    }

    fn suppresses(&self, rule: &str) -> bool {
        self.suppression(rule).is_some()
    }
}

/// The subject of findings on `object`. Its findings share one copy of its key,
/// however long the name and however many the findings.
pub(crate) fn subject(key: &ObjectKey, origin: Origin) -> Subject {
    Subject {
        key: Arc::new(key.clone()),
        origin,
    }
}

/// The subject of the findings on the object being linted, made with its
/// first finding: most objects have none.
pub(crate) struct Subjects<'a> {
    key: &'a ObjectKey,
    origin: Origin,
    made: OnceCell<Subject>,
}

impl<'a> Subjects<'a> {
    pub(crate) fn of(key: &'a ObjectKey, origin: Origin) -> Self {
        Self {
            key,
            origin,
            made: OnceCell::new(),
        }
    }

    /// The subject, made now if it was not.
    pub(crate) fn get(&self) -> &Subject {
        self.made.get_or_init(|| subject(self.key, self.origin))
    }

    /// The subject, if a finding was made.
    pub(crate) fn made(&self) -> Option<&Subject> {
        self.made.get()
    }
}

impl Report<'_> {
    /// Reports a finding on a field of the object being linted.
    pub fn report(&mut self, path: FieldPath, message: impl Into<String>) -> &mut Diagnostic {
        let source_path = match self.hpa {
            Some(hpa) => hpa.source_path(&path),
            None => path.clone(),
        };
        let diagnostic = self.diagnostic(
            self.subject.get().clone(),
            path,
            source_path,
            message.into(),
        );
        self.findings.keep(diagnostic)
    }

    /// Reports a finding at a severity other than the rule's default (e.g. an
    /// error once an API version is removed); a severity the user configured
    /// for the rule still wins.
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
        object: &impl OtherObject,
        path: FieldPath,
        message: impl Into<String>,
    ) -> &mut Diagnostic {
        let source_path = path.clone();
        let suppressed = object.suppresses(self.rule.name);
        let diagnostic = self.diagnostic(object.subject(), path, source_path, message.into());
        if suppressed {
            self.findings.discard(diagnostic)
        } else {
            self.findings.keep(diagnostic)
        }
    }

    /// Reports a field that does not decode, as the server's strict decoding
    /// reports it (a `BadRequest`).
    pub fn decode_error(&mut self, error: &DecodeError) -> &mut Diagnostic {
        // Decoding comes before conversion: the path is the one written.
        let (path, message) = (error.path.clone(), error.message.clone());
        let diagnostic = self.diagnostic(self.subject.get().clone(), path.clone(), path, message);
        let diagnostic = self.findings.keep(diagnostic);
        diagnostic.reason = Some(Reason::BadRequest);
        diagnostic
    }

    /// Reports an API-server field error: the message is rendered the way the
    /// server renders it, e.g. `Invalid value: 3600: must be ...`.
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

impl DocumentFinding {
    /// The finding as a diagnostic of `rule`, about the document's object as
    /// far as it was read.
    pub(crate) fn diagnostic(
        self,
        rule: &'static Rule,
        severity: Severity,
        subject: Subject,
        path: FieldPath,
    ) -> Diagnostic {
        Diagnostic {
            rule,
            severity,
            subject,
            source_path: path.clone(),
            path,
            reason: None,
            message: self.message,
            help: self.help.map(Cow::Borrowed),
            fix: None,
        }
    }
}
