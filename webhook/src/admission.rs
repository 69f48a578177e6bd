//! The admission decisions: an `AdmissionRequest` in, an `AdmissionResponse`
//! out. Pure (no I/O, no clock): the rules decide, [`Policy`] says what each
//! finding does, and this module renders the answer the way the API server
//! shows its own errors. It never decides what is wrong with an object.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hpa_lint_rules::Operation as LintOperation;
use hpa_lint_rules::lint::{lint_at_most, lint_workload};
use hpa_lint_rules::mutate::mutation;
use hpa_lint_rules::quote::truncate;
use hpa_lint_rules::reads::WORKLOAD_FIELDS;
use hpa_lint_rules::{Diagnostic, Object, Origin};
use kube::api::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
use kube::core::{Status, TypeMeta};
use serde_json::{Map, Value};

use crate::cache::{ClusterIndex, RequestIndex};
use crate::policy::{Action, Admitted, Policy};

/// Warnings longer than this are shortened: kube-core's documentation of
/// `warnings` asks for 120 characters where possible.
const WARNING_LIMIT: usize = 120;

/// The end of a denial: how to accept a finding.
const SUPPRESSION_HINT: &str = "To accept a finding, annotate the object it is about with \
                                `hpa-lint.io/ignore.<rule>: <reason>`.";

/// How many findings a denial message lists, and how many warnings an answer
/// carries; the rest are counted in a last item. 25 warnings of 120
/// characters stay within the 4,096 the API server passes on to clients.
const MAX_LISTED: usize = 25;

/// The most one finding takes in a denial message; with [`MAX_LISTED`], this
/// bounds an answer whatever the request held.
const MAX_DENIAL_BYTES: usize = 1024;

/// How many findings of one object are kept while a request is checked; the
/// others are only counted. No real object comes near; a hostile one with
/// tens of thousands of invalid metrics would otherwise hold a finding each.
const MAX_FINDINGS: usize = 1000;

/// The kinds the webhook is registered for (docs/webhook.md), and what each gets.
const KINDS: [(&str, &str, Admitted); 4] = [
    ("autoscaling", "HorizontalPodAutoscaler", Admitted::Hpa),
    ("apps", "Deployment", Admitted::Workload),
    ("apps", "StatefulSet", Admitted::Workload),
    ("apps", "ReplicaSet", Admitted::Workload),
];

/// What the webhook did with a request, for logs and metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Not a request the webhook checks (DELETE, another kind, a subresource).
    Skipped,
    /// Checked and allowed as is.
    Allowed,
    /// Allowed with warnings.
    Warned,
    /// Rejected.
    Denied,
    /// Allowed with a patch.
    Patched,
    /// The request could not be read.
    Invalid,
}

impl Decision {
    /// The name used in logs and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Skipped => "skipped",
            Decision::Allowed => "allowed",
            Decision::Warned => "warned",
            Decision::Denied => "denied",
            Decision::Patched => "patched",
            Decision::Invalid => "invalid",
        }
    }
}

/// One finding and what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The rule's name.
    pub rule: &'static str,
    /// What it did.
    pub action: Action,
}

/// The answer to one request.
pub struct Reviewed {
    /// The response to send.
    pub response: AdmissionResponse,
    /// What happened.
    pub decision: Decision,
    /// Every finding kept, including those only logged.
    pub findings: Vec<Finding>,
    /// How many more findings there were (see [`MAX_FINDINGS`]).
    pub unkept: usize,
}

impl Reviewed {
    /// An answer with no findings.
    pub fn new(response: AdmissionResponse, decision: Decision) -> Self {
        Self {
            response,
            decision,
            findings: Vec::new(),
            unkept: 0,
        }
    }
}

/// Each finding and what it did, counted: one entry per rule and action, in
/// the order first found.
pub fn tally(findings: &[Finding]) -> Vec<(Finding, u64)> {
    let mut counts: Vec<(Finding, u64)> = Vec::new();
    for finding in findings {
        match counts.iter_mut().find(|(seen, _)| seen == finding) {
            Some((_, count)) => *count += 1,
            None => counts.push((*finding, 1)),
        }
    }
    counts
}

fn registered(
    request: &AdmissionRequest<DynamicObject>,
) -> Option<&'static (&'static str, &'static str, Admitted)> {
    let kind = &request.kind;
    KINDS
        .iter()
        .find(|(group, name, _)| kind.group == *group && kind.kind == *name)
}

/// The kind of a request as a metric label: one of the kinds the webhook is
/// registered for, else `other`. Every distinct label value is a series kept
/// for the life of the process, so none may come from the request itself.
pub fn kind_label(request: &AdmissionRequest<DynamicObject>) -> &'static str {
    registered(request).map_or("other", |(_, kind, _)| kind)
}

/// Which checks a request gets, from its kind; `None` for requests the
/// webhook lets through without work: DELETE and CONNECT, subresources
/// (`status`, `scale`) and every other kind.
pub fn admitted(request: &AdmissionRequest<DynamicObject>) -> Option<Admitted> {
    if !matches!(request.operation, Operation::Create | Operation::Update)
        || request.sub_resource.is_some()
    {
        return None;
    }
    registered(request).map(|(_, _, admitted)| *admitted)
}

/// A request's object as the rules read it, taken out of the request. Objects
/// arrive with `apiVersion` and `kind`; they are filled in from the request if
/// not.
fn to_object(
    request: &AdmissionRequest<DynamicObject>,
    object: Option<DynamicObject>,
    policy: &Policy,
) -> Result<Object, String> {
    let object = object.ok_or("the request has no object")?;
    let types = object.types.unwrap_or_else(|| {
        let kind = &request.kind;
        TypeMeta {
            api_version: if kind.group.is_empty() {
                kind.version.clone()
            } else {
                format!("{}/{}", kind.group, kind.version)
            },
            kind: kind.kind.clone(),
        }
    });
    // Built from the parts rather than serialized whole: only the typed
    // metadata needs converting, the rest is moved.
    let mut map = Map::new();
    map.insert("apiVersion".into(), types.api_version.into());
    map.insert("kind".into(), types.kind.into());
    let metadata = serde_json::to_value(&object.metadata).map_err(|e| e.to_string())?;
    // An empty one may stand for none (both parse to the default): left out,
    // so that a patch never assumes a `metadata` the object may not have.
    if metadata.as_object().is_some_and(|m| !m.is_empty()) {
        map.insert("metadata".into(), metadata);
    }
    if let Value::Object(fields) = object.data {
        map.extend(fields);
    }
    let namespace = request
        .namespace
        .as_deref()
        .unwrap_or(&policy.settings.cluster.default_namespace);
    Object::new(Value::Object(map), Origin::default(), namespace)
        .ok_or_else(|| "not an object".to_owned())
}

/// Denies a request that could not be read, saying why.
fn refuse(mut response: AdmissionResponse, reason: &str) -> AdmissionResponse {
    response.allowed = false;
    response.result = Status::failure(
        &format!("hpa-lint cannot read the request: {reason}"),
        "BadRequest",
    )
    .with_code(400);
    response
}

/// Answers a request that could not be read but has a uid: a denial with
/// the reason (the API server discards answers without the request's uid).
/// The review is an `admission.k8s.io/v1` one, as `invalid` answers.
pub fn unreadable(uid: &str, reason: &str) -> AdmissionResponse {
    let mut response = AdmissionResponse::invalid(reason);
    response.uid = uid.to_owned();
    refuse(response, reason)
}

fn invalid(response: AdmissionResponse, reason: &str) -> Reviewed {
    Reviewed::new(refuse(response, reason), Decision::Invalid)
}

/// `/validate`: lints an HPA, or a workload against the live HPAs that scale
/// it, and denies or warns as the policy says. Takes the objects out of the
/// request; what stays is what the log line needs.
pub fn validate(
    policy: &Policy,
    index: &ClusterIndex,
    request: &mut AdmissionRequest<DynamicObject>,
) -> Reviewed {
    let response = AdmissionResponse::from(&*request);
    let Some(admitted) = admitted(request) else {
        return Reviewed::new(response, Decision::Skipped);
    };
    if policy.is_off() || (admitted == Admitted::Workload && !policy.checks_workloads()) {
        return Reviewed::new(response, Decision::Skipped);
    }
    let object = request.object.take();
    let object = match to_object(request, object, policy) {
        Ok(object) => object,
        Err(reason) => return invalid(response, &reason),
    };
    let old = match request.old_object.take() {
        Some(old) if request.operation == Operation::Update => {
            match to_object(request, Some(old), policy) {
                Ok(old) => Some(old),
                Err(reason) => return invalid(response, &format!("old object: {reason}")),
            }
        }
        _ => None,
    };
    // The rules read only these fields of a workload; the rest (env, volumes,
    // probes) would be copied for nothing.
    let prepare = |o: Object| match admitted {
        Admitted::Hpa => o,
        Admitted::Workload => Object {
            value: WORKLOAD_FIELDS.prune(o.value),
            ..o
        },
    };
    let (object, old) = (prepare(object), old.map(prepare));
    let operation = old
        .as_ref()
        .map_or(LintOperation::Create, |old| LintOperation::Update { old });
    let index = RequestIndex::new(index);
    let (diagnostics, unkept) = match admitted {
        Admitted::Hpa => lint_at_most(&object, operation, &index, &policy.settings, MAX_FINDINGS),
        // Only findings about the workload: bounded by its containers.
        Admitted::Workload => (
            lint_workload(&object, operation, &index, &policy.settings),
            0,
        ),
    };
    render(policy, admitted, &object, &diagnostics, unkept, response)
}

/// Findings listed in an answer: the first [`MAX_LISTED`], and how many more
/// there were (counted, never rendered).
#[derive(Default)]
struct Listed {
    items: Vec<String>,
    more: usize,
}

impl Listed {
    fn push(&mut self, text: impl FnOnce() -> String) {
        if self.items.len() < MAX_LISTED {
            self.items.push(text());
        } else {
            self.more += 1;
        }
    }

    /// The items, then `… and 3 more findings` (as `tail` words it) when some
    /// were left out.
    fn finish(self, tail: impl FnOnce(String) -> String) -> Vec<String> {
        let mut items = self.items;
        if self.more > 0 {
            let plural = if self.more == 1 { "" } else { "s" };
            items.push(tail(format!("… and {} more finding{plural}", self.more)));
        }
        items
    }
}

/// `unkept` findings were counted but not kept (see [`MAX_FINDINGS`]): they
/// are counted among those the denial, else the warnings, leave out.
fn render(
    policy: &Policy,
    admitted: Admitted,
    object: &Object,
    diagnostics: &[Diagnostic],
    unkept: usize,
    mut response: AdmissionResponse,
) -> Reviewed {
    let this = object.key.to_ref();
    let (mut denials, mut warnings) = (Listed::default(), Listed::default());
    let mut findings = Vec::with_capacity(diagnostics.len());
    for diagnostic in diagnostics {
        let action = policy.action(diagnostic, admitted);
        findings.push(Finding {
            rule: diagnostic.rule.name,
            action,
        });
        // Each finding starts with its rule, the name an `hpa-lint.io/ignore.`
        // annotation needs; findings about another object (the HPA's target)
        // name it next.
        let text = || {
            let subject = &diagnostic.subject.key;
            let about = if subject.to_ref() == this {
                String::new()
            } else {
                format!("{}: ", subject.to_ref())
            };
            format!(
                "{}: {about}{}",
                diagnostic.rule.name,
                diagnostic.field_message()
            )
        };
        match action {
            Action::Deny => denials.push(|| {
                let mut text = text();
                truncate(&mut text, MAX_DENIAL_BYTES);
                text
            }),
            Action::Warn => warnings.push(|| shorten(&text())),
            Action::Log => {}
        }
    }
    if denials.items.is_empty() {
        warnings.more += unkept;
    } else {
        denials.more += unkept;
    }
    let decision = if !denials.items.is_empty() {
        let listed = denials.finish(std::convert::identity);
        let message = format!(
            "hpa-lint denied {this}: {}. {SUPPRESSION_HINT}",
            listed.join("; ")
        );
        response.allowed = false;
        response.result = Status::failure(&message, "Invalid").with_code(422);
        Decision::Denied
    } else if !warnings.items.is_empty() {
        Decision::Warned
    } else {
        Decision::Allowed
    };
    if !warnings.items.is_empty() {
        response.warnings = Some(warnings.finish(|tail| format!("hpa-lint: {tail}")));
    }
    Reviewed {
        response,
        decision,
        findings,
        unkept,
    }
}

/// Cuts a warning to [`WARNING_LIMIT`] characters at a word boundary, marking
/// the cut with an ellipsis.
fn shorten(text: &str) -> String {
    if text.chars().count() <= WARNING_LIMIT {
        return text.to_owned();
    }
    let cut = text
        .char_indices()
        .nth(WARNING_LIMIT - 1)
        .map_or(text.len(), |(i, _)| i);
    let head = &text[..cut];
    // Back to the last space, unless that drops more than a quarter.
    let head = match head.rfind(' ') {
        Some(space) if space > cut * 3 / 4 => &head[..space],
        _ => head,
    };
    format!("{}…", head.trim_end_matches([' ', ',', ':', ';']))
}

/// `/mutate`: writes the default behavior into `autoscaling/v2` HPAs that
/// leave it, or parts of it, unset; takes the object out of the request. The namespace's labels choose the
/// defaults (unknown offline or before the caches sync: then only entries
/// without a namespace selector apply).
pub fn mutate(
    policy: &Policy,
    index: &ClusterIndex,
    request: &mut AdmissionRequest<DynamicObject>,
) -> Reviewed {
    let response = AdmissionResponse::from(&*request);
    if admitted(request) != Some(Admitted::Hpa) || request.kind.version != "v2" || policy.is_off() {
        return Reviewed::new(response, Decision::Skipped);
    }
    let object = request.object.take();
    let object = match to_object(request, object, policy) {
        Ok(object) => object,
        Err(reason) => return invalid(response, &reason),
    };
    let ops = mutation(&object, &RequestIndex::new(index), &policy.mutation);
    if ops.is_empty() {
        return Reviewed::new(response, Decision::Allowed);
    }
    let patch = serde_json::to_value(&ops)
        .and_then(serde_json::from_value::<json_patch::Patch>)
        .map_err(|e| e.to_string())
        .and_then(|patch| {
            response
                .clone()
                .with_patch(patch)
                .map_err(|e| e.to_string())
        });
    match patch {
        Ok(response) => Reviewed::new(response, Decision::Patched),
        // Cannot happen (the ops are valid RFC 6902); the HPA is then admitted
        // as is, which is what it would be without this webhook.
        Err(error) => {
            let mut response = response;
            response.warnings = Some(vec![shorten(&format!(
                "hpa-lint: default behavior not injected: {error}"
            ))]);
            Reviewed::new(response, Decision::Allowed)
        }
    }
}

/// The review to send back, as JSON. kube-core 5 serializes the patch as an
/// array of numbers; the API server's documented format is a base64 string
/// (rust-stack.md P1), so it is replaced.
pub fn review_json(mut response: AdmissionResponse) -> Value {
    let patch = response.patch.take();
    let review: AdmissionReview<DynamicObject> = response.into_review();
    let mut json = serde_json::to_value(review).unwrap_or_default();
    if let (Some(patch), Some(response)) = (patch, json.get_mut("response")) {
        response["patch"] = STANDARD.encode(patch).into();
    }
    json
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_warnings_are_cut_at_a_word() {
        let short = "min-equals-max: spec.minReplicas: equals `maxReplicas`";
        assert_eq!(shorten(short), short);
        let long = format!(
            "target-replicas-conflict: spec.replicas: {}",
            "word ".repeat(40)
        );
        let cut = shorten(&long);
        assert!(cut.chars().count() <= WARNING_LIMIT, "{cut}");
        assert!(cut.ends_with("word…"), "{cut}");
        let unbroken = "x".repeat(300);
        assert_eq!(shorten(&unbroken).chars().count(), WARNING_LIMIT);
        // Multi-byte characters are never split.
        assert_eq!(shorten(&"é".repeat(300)).chars().count(), WARNING_LIMIT);
    }
}
