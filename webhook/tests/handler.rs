//! The router without sockets: every kind of bad input, the requests the
//! webhook lets through without work, and a panicking handler.

mod common;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{Request, StatusCode};
use axum::routing::get;
use common::fixture;
use hpa_lint_webhook::app::{AppState, app, harden};
use hpa_lint_webhook::cache::ClusterIndex;
use hpa_lint_webhook::policy::{Policy, SharedPolicy};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

fn state(config: &str) -> AppState {
    AppState::new(
        SharedPolicy::new(Policy::parse(config).unwrap()),
        Arc::new(ClusterIndex::offline()),
    )
}

async fn send(router: Router, path: &str, body: Body) -> (StatusCode, String) {
    let response = router
        .oneshot(Request::post(path).body(body).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

async fn post(body: impl Into<Body>) -> (StatusCode, String) {
    send(app(state("")), "/validate", body.into()).await
}

#[tokio::test]
async fn unreadable_bodies_are_http_errors() {
    let (status, text) = post("{\"apiVersion\": ").await;
    assert_eq!(status, 400);
    assert_eq!(
        text,
        "hpa-lint: malformed AdmissionReview: EOF while parsing a value at line 1 column 15\n"
    );

    let (status, text) = post("[1, 2]").await;
    assert_eq!(status, 400);
    assert!(
        text.starts_with("hpa-lint: malformed AdmissionReview: invalid type: sequence"),
        "{text}"
    );

    let no_request = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"});
    assert_eq!(
        post(no_request.to_string()).await,
        (
            StatusCode::BAD_REQUEST,
            "hpa-lint: the AdmissionReview has no `request`\n".to_owned()
        )
    );

    for uid in [Value::Null, json!("")] {
        let mut review = fixture("hpa-create.json");
        if uid.is_null() {
            review["request"].as_object_mut().unwrap().remove("uid");
        } else {
            review["request"]["uid"] = uid;
        }
        assert_eq!(
            post(review.to_string()).await,
            (
                StatusCode::BAD_REQUEST,
                "hpa-lint: the AdmissionReview request has no `uid`\n".to_owned()
            )
        );
    }
}

#[tokio::test]
async fn only_admission_k8s_io_v1_reviews_are_answered() {
    let expected = |kind: &str, api_version: &str| {
        format!(
            "hpa-lint: expected an AdmissionReview of admission.k8s.io/v1, got kind {kind} and apiVersion {api_version}\n"
        )
    };
    for (kind, api_version, message) in [
        (
            json!("AdmissionReview"),
            json!("admission.k8s.io/v1beta1"),
            expected("`AdmissionReview`", "`admission.k8s.io/v1beta1`"),
        ),
        (
            json!("ConversionReview"),
            json!("admission.k8s.io/v1"),
            expected("`ConversionReview`", "`admission.k8s.io/v1`"),
        ),
        (Value::Null, Value::Null, expected("missing", "missing")),
        (
            json!("x".repeat(100_000)),
            json!(7),
            expected(&format!("`{}…` (100000 bytes)", "x".repeat(64)), "missing"),
        ),
    ] {
        let mut review = fixture("hpa-update.json");
        review["kind"] = kind;
        review["apiVersion"] = api_version;
        for path in ["/validate", "/mutate"] {
            let (status, text) = send(app(state("")), path, review.to_string().into()).await;
            assert_eq!((status, &text), (StatusCode::BAD_REQUEST, &message));
        }
    }
}

/// An empty `scaleTargetRef` is denied with the API server's three errors,
/// in its order.
#[tokio::test]
async fn an_empty_target_reference_is_denied_as_the_api_server_denies_it() {
    let mut review = fixture("hpa-create.json");
    review["request"]["object"]["spec"]["scaleTargetRef"] = json!({});
    let (status, text) = post(review.to_string()).await;
    assert_eq!(status, 200);
    let response: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        response["response"]["status"]["message"],
        "hpa-lint denied HorizontalPodAutoscaler shop/web: \
         invalid-object-reference: spec.scaleTargetRef.kind: Required value; \
         invalid-object-reference: spec.scaleTargetRef.name: Required value; \
         invalid-object-reference: spec.scaleTargetRef.apiVersion: Invalid value: \"\": apiVersion must specify API group. \
         To accept a finding, annotate the object it is about with `hpa-lint.io/ignore.<rule>: <reason>`."
    );
}

#[tokio::test]
async fn a_request_with_a_uid_gets_a_denial_with_the_reason() {
    for (field, value, reason) in [
        (
            "object",
            json!({"metadata": {"labels": ["web"]}}),
            "invalid type: sequence, expected a map",
        ),
        ("operation", json!("PATCH"), "unknown variant `PATCH`"),
    ] {
        let mut review = fixture("hpa-create.json");
        review["request"][field] = value;
        let (status, text) = post(review.to_string()).await;
        assert_eq!(status, 200);
        let response: Value = serde_json::from_str(&text).unwrap();
        let response = &response["response"];
        assert_eq!(response["uid"], "0df28fbd-5f5e-4c25-9e0b-6c1b1d3c0a01");
        assert_eq!(response["allowed"], false);
        assert_eq!(response["status"]["code"], 400);
        assert_eq!(response["status"]["reason"], "BadRequest");
        let message = response["status"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("hpa-lint cannot read the request: "),
            "{message}"
        );
        assert!(message.contains(reason), "{message}");
    }

    // A CREATE without an object.
    let mut review = fixture("hpa-create.json");
    review["request"]["object"] = Value::Null;
    let (status, text) = post(review.to_string()).await;
    assert_eq!(status, 200);
    assert!(
        text.contains(
            "\"message\":\"hpa-lint cannot read the request: the request has no object\""
        ),
        "{text}"
    );
}

#[tokio::test]
async fn bodies_over_the_limit_are_refused() {
    let body = fixture("hpa-create.json").to_string();
    assert!(body.len() > 1024);
    let (status, text) = send(
        app(state("webhook:\n  maxBodyBytes: 1024\n")),
        "/validate",
        body.into(),
    )
    .await;
    assert_eq!(
        (status, text.as_str()),
        (
            StatusCode::PAYLOAD_TOO_LARGE,
            "hpa-lint: request body larger than 1024 bytes\n"
        )
    );
}

#[tokio::test]
async fn slow_bodies_time_out() {
    let mut state = state("");
    state.body_timeout = Duration::from_millis(100);
    // Half a body, then nothing.
    let chunks = futures::StreamExt::chain(
        futures::stream::iter([Ok::<_, Infallible>(Bytes::from_static(b"{\"request\":"))]),
        futures::stream::pending(),
    );
    let (status, text) = send(app(state), "/mutate", Body::from_stream(chunks)).await;
    assert_eq!(
        (status, text.as_str()),
        (
            StatusCode::REQUEST_TIMEOUT,
            "hpa-lint: request body not received within 100ms\n"
        )
    );
}

#[tokio::test]
async fn a_panic_is_answered_with_a_500() {
    let router = harden(Router::new().route(
        "/boom",
        get(|| async {
            if true {
                panic!("rule blew up");
            }
            "unreachable"
        }),
    ));
    let response = router
        .oneshot(Request::get("/boom").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), 500);
}

#[tokio::test]
async fn other_requests_are_allowed_without_work() {
    let allowed = |review: Value| async move {
        let (status, text) = post(review.to_string()).await;
        assert_eq!(status, 200);
        let response: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(response["response"]["allowed"], true, "{response}");
        assert_eq!(response["response"].get("warnings"), None, "{response}");
    };
    // The invalid HPA of hpa-update.json, deleted, as a status update, and as
    // another kind.
    let invalid = fixture("hpa-update.json");
    let mut delete = fixture("hpa-delete.json");
    delete["request"]["oldObject"] = invalid["request"]["object"].clone();
    allowed(delete).await;
    let mut status = invalid.clone();
    status["request"]["subResource"] = json!("status");
    allowed(status).await;
    let mut other = invalid.clone();
    other["request"]["kind"] =
        json!({"group": "autoscaling.k8s.io", "version": "v1", "kind": "HorizontalPodAutoscaler"});
    allowed(other).await;
    // Switched off.
    let (_, text) = send(
        app(state("webhook:\n  mode: off\n")),
        "/validate",
        invalid.to_string().into(),
    )
    .await;
    assert!(text.contains("\"allowed\":true"), "{text}");
}

/// Every distinct label value is a series kept for good: kinds the webhook
/// is not registered for are all `other`, however many and however long.
#[tokio::test]
async fn metric_labels_come_from_fixed_sets() {
    let state = state("");
    let router = app(state.clone());
    let before = state.metrics.render(&state.index).len();
    for i in 0..200 {
        let mut review = fixture("hpa-update.json");
        review["request"]["kind"]["kind"] = json!(format!("{i}{}", "K".repeat(10_000)));
        send(router.clone(), "/validate", review.to_string().into()).await;
    }
    let text = state.metrics.render(&state.index);
    assert!(
        text.contains("hpa_webhook_requests_total{endpoint=\"validate\",operation=\"UPDATE\",kind=\"other\",decision=\"skipped\"} 200"),
        "{text}"
    );
    assert!(!text.contains("KKK"), "{text}");
    // The one new series and the latency histogram.
    assert!(text.len() < before + 4096, "{} bytes", text.len());
}

#[tokio::test]
async fn metrics_count_reviews_and_bad_requests() {
    let state = state("");
    let router = app(state.clone());
    send(
        router.clone(),
        "/validate",
        fixture("hpa-update.json").to_string().into(),
    )
    .await;
    send(router.clone(), "/validate", "nope".into()).await;
    let text = state.metrics.render(&state.index);
    assert!(text.contains("hpa_webhook_requests_total{endpoint=\"validate\",operation=\"\",kind=\"\",decision=\"invalid\"} 1"), "{text}");
    assert!(
        text.contains("hpa_webhook_findings_total{rule=\"min-equals-max\",action=\"warn\"} 1"),
        "{text}"
    );
}
