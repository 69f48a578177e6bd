//! The HTTP side: routes, reading and parsing reviews, one log line and the
//! metrics per review. Decisions are [`crate::admission`]'s.

use std::any::Any;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Json, Response};
use axum::routing::{get, post};
use hpa_lint_rules::quote::{code, shown, truncate};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use kube::api::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionReview, Operation};
use serde_json::Value;
use tower_http::catch_panic::CatchPanicLayer;

use crate::admission::{self, Reviewed};
use crate::cache::ClusterIndex;
use crate::error::AppError;
use crate::metrics::Metrics;
use crate::policy::SharedPolicy;

/// How long a client may take to send a request body. The API server gives
/// up on a webhook after `timeoutSeconds` (10 s by default).
pub const BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    /// The configuration in force.
    pub policy: SharedPolicy,
    /// The cluster caches.
    pub index: Arc<ClusterIndex>,
    /// The metrics registry.
    pub metrics: Arc<Metrics>,
    /// How long a client may take to send a body.
    pub body_timeout: Duration,
    /// Set on SIGTERM: requests are still served during the drain delay,
    /// but `/readyz` fails.
    pub draining: Arc<AtomicBool>,
}

impl AppState {
    /// State with a fresh metrics registry.
    pub fn new(policy: SharedPolicy, index: Arc<ClusterIndex>) -> Self {
        Self {
            policy,
            index,
            metrics: Arc::new(Metrics::default()),
            body_timeout: BODY_TIMEOUT,
            draining: Arc::default(),
        }
    }
}

/// The webhook's routes.
pub fn app(state: AppState) -> Router {
    harden(
        Router::new()
            .route("/validate", post(validate))
            .route("/mutate", post(mutate))
            .route("/healthz", get(healthz))
            .route("/readyz", get(readyz))
            .route("/metrics", get(metrics))
            .with_state(state),
    )
}

/// The routes of the separate metrics port (`--metrics-listen`).
pub fn metrics_app(state: AppState) -> Router {
    harden(
        Router::new()
            .route("/metrics", get(metrics))
            .with_state(state),
    )
}

/// What every router of this server gets: a panic in a handler is answered
/// with a 500 (and logged) instead of dropping the connection.
pub fn harden(router: Router) -> Router {
    router.layer(CatchPanicLayer::custom(on_panic))
}

fn on_panic(panic: Box<dyn Any + Send + 'static>) -> Response {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    tracing::error!(panic = %message, "handler panicked");
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        "hpa-lint: internal error\n",
    )
        .into_response()
}

async fn healthz() -> &'static str {
    "ok\n"
}

/// Ready once every cache has its first list (at once offline), until
/// shutdown starts. The server listens only after its certificate loaded, so
/// that needs no check here.
async fn readyz(State(state): State<AppState>) -> (StatusCode, &'static str) {
    if state.draining.load(Ordering::Relaxed) {
        (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n")
    } else if state.index.is_synced() {
        (StatusCode::OK, "ok\n")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "caches not synced\n")
    }
}

async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(
            CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics.render(&state.index),
    )
}

async fn validate(State(state): State<AppState>, body: Body) -> Response {
    review(&state, Endpoint::Validate, body).await
}

async fn mutate(State(state): State<AppState>, body: Body) -> Response {
    review(&state, Endpoint::Mutate, body).await
}

#[derive(Clone, Copy)]
enum Endpoint {
    Validate,
    Mutate,
}

impl Endpoint {
    fn as_str(self) -> &'static str {
        match self {
            Endpoint::Validate => "validate",
            Endpoint::Mutate => "mutate",
        }
    }
}

/// A review as read from the body.
enum Parsed {
    Request(Box<AdmissionRequest<DynamicObject>>),
    /// A review with a uid whose request could not be read otherwise (its
    /// object, say): answered with a denial that says why.
    Unreadable {
        uid: String,
        reason: String,
    },
}

async fn review(state: &AppState, endpoint: Endpoint, body: Body) -> Response {
    let started = Instant::now();
    let policy = state.policy.current();
    let parsed = match read_body(body, policy.max_body_bytes, state.body_timeout).await {
        Ok(bytes) => parse(&bytes),
        Err(error) => Err(error),
    };
    let reviewed = match parsed {
        Ok(Parsed::Request(mut request)) => {
            let reviewed = match endpoint {
                Endpoint::Validate => admission::validate(&policy, &state.index, &mut request),
                Endpoint::Mutate => admission::mutate(&policy, &state.index, &mut request),
            };
            record(state, endpoint, Some(&request), &reviewed, started);
            reviewed
        }
        Ok(Parsed::Unreadable { uid, reason }) => {
            let response = admission::unreadable(&uid, &reason);
            tracing::warn!(endpoint = endpoint.as_str(), uid = %shown(&uid), %reason, "unreadable admission request");
            let reviewed = Reviewed::new(response, admission::Decision::Invalid);
            record(state, endpoint, None, &reviewed, started);
            reviewed
        }
        Err(error) => {
            tracing::warn!(endpoint = endpoint.as_str(), %error, "bad admission request");
            state.metrics.review(
                endpoint.as_str(),
                "",
                "",
                admission::Decision::Invalid,
                &[],
                started.elapsed(),
            );
            return error.into_response();
        }
    };
    Json(admission::review_json(reviewed.response)).into_response()
}

async fn read_body(body: Body, limit: usize, timeout: Duration) -> Result<Bytes, AppError> {
    match tokio::time::timeout(timeout, Limited::new(body, limit).collect()).await {
        Err(_) => Err(AppError::SlowBody { timeout }),
        Ok(Err(error)) if error.is::<LengthLimitError>() => Err(AppError::TooLarge { limit }),
        Ok(Err(error)) => Err(AppError::Body(reason(&error))),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
    }
}

/// The review version the webhook speaks (`admissionReviewVersions: [v1]`).
const REVIEW_API_VERSION: &str = "admission.k8s.io/v1";

/// Whether a body declares itself an `AdmissionReview` of [`REVIEW_API_VERSION`]:
/// anything else is not answered as one.
fn check_type(api_version: Option<&str>, kind: Option<&str>) -> Result<(), AppError> {
    if (api_version, kind) == (Some(REVIEW_API_VERSION), Some("AdmissionReview")) {
        return Ok(());
    }
    let show = |value: Option<&str>| value.map_or_else(|| "missing".to_owned(), code);
    Err(AppError::NotAReview {
        kind: show(kind),
        api_version: show(api_version),
    })
}

/// Reads an `AdmissionReview`. When it does not parse, the request may still
/// have a uid to answer to (rust-stack.md P3): then the answer is a denial
/// with the reason, else an HTTP error.
fn parse(bytes: &[u8]) -> Result<Parsed, AppError> {
    let error = match serde_json::from_slice::<AdmissionReview<DynamicObject>>(bytes) {
        Ok(review) => {
            check_type(Some(&review.types.api_version), Some(&review.types.kind))?;
            let request: AdmissionRequest<DynamicObject> =
                review.try_into().map_err(|_| AppError::NoRequest)?;
            if request.uid.is_empty() {
                return Err(AppError::NoUid);
            }
            return Ok(Parsed::Request(Box::new(request)));
        }
        Err(error) => error,
    };
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| AppError::Malformed(reason(&e)))?;
    if !value.is_object() {
        return Err(AppError::Malformed(reason(&error)));
    }
    check_type(
        value.get("apiVersion").and_then(Value::as_str),
        value.get("kind").and_then(Value::as_str),
    )?;
    let request = value
        .get("request")
        .filter(|r| !r.is_null())
        .ok_or(AppError::NoRequest)?;
    let uid = request
        .get("uid")
        .and_then(Value::as_str)
        .filter(|uid| !uid.is_empty())
        .ok_or(AppError::NoUid)?;
    Ok(Parsed::Unreadable {
        uid: uid.to_owned(),
        reason: reason(&error),
    })
}

/// The most of a parser's message an answer or a log line keeps: the
/// message may quote the input (`invalid type: string "…"`).
const MAX_REASON_BYTES: usize = 1024;

fn reason(error: &dyn std::fmt::Display) -> String {
    let mut text = error.to_string();
    truncate(&mut text, MAX_REASON_BYTES);
    text
}

fn operation_name(operation: &Operation) -> &'static str {
    match operation {
        Operation::Create => "CREATE",
        Operation::Update => "UPDATE",
        Operation::Delete => "DELETE",
        Operation::Connect => "CONNECT",
    }
}

/// One log line and the metrics of an answered review.
fn record(
    state: &AppState,
    endpoint: Endpoint,
    request: Option<&AdmissionRequest<DynamicObject>>,
    reviewed: &Reviewed,
    started: Instant,
) {
    let elapsed = started.elapsed();
    let (operation, kind) = request.map_or(("", ""), |r| {
        (operation_name(&r.operation), admission::kind_label(r))
    });
    let tally = admission::tally(&reviewed.findings);
    state.metrics.review(
        endpoint.as_str(),
        operation,
        kind,
        reviewed.decision,
        &tally,
        elapsed,
    );
    let Some(request) = request else {
        return;
    };
    // One entry per rule and action, so that the line stays short however
    // many findings there were.
    let mut findings: Vec<String> = tally
        .iter()
        .map(|(f, count)| match count {
            1 => format!("{}={}", f.rule, f.action.as_str()),
            _ => format!("{}={}*{count}", f.rule, f.action.as_str()),
        })
        .collect();
    if reviewed.unkept > 0 {
        findings.push(format!("+{} more", reviewed.unkept));
    }
    // The request's own strings, cut as messages cut them.
    tracing::info!(
        endpoint = endpoint.as_str(),
        uid = %shown(&request.uid),
        kind = %shown(&request.kind.kind),
        namespace = %shown(request.namespace.as_deref().unwrap_or_default()),
        name = %shown(&request.name),
        operation,
        dry_run = request.dry_run,
        decision = reviewed.decision.as_str(),
        findings = %findings.join(","),
        latency_us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
        "admission review"
    );
}
