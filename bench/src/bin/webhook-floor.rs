//! `webhook-floor`: the webhook's server (same TLS setup, same
//! `hpa_lint_webhook::server::serve`, same middleware) answering every review
//! without running rules: with a canned AdmissionResponse (the floor nothing
//! can beat), or with `--parse` the least a correct webhook does: parse the
//! `AdmissionReview` and allow it under its uid. The benchmark measures both
//! next to `hpa-webhook`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use axum::Router;
use axum::body::Bytes;
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum_server::Handle;
use clap::Parser;
use hpa_lint_webhook::app::harden;
use hpa_lint_webhook::server::{HEADER_READ_TIMEOUT, Transport, serve};
use hpa_lint_webhook::tls;
use kube::api::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview};

#[derive(Parser)]
struct Args {
    #[arg(long)]
    listen: SocketAddr,
    #[arg(long)]
    tls_cert: PathBuf,
    #[arg(long)]
    tls_key: PathBuf,
    /// Parse each review and answer for its uid.
    #[arg(long)]
    parse: bool,
}

const CANNED: &str = r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"00000000-0000-0000-0000-000000000000","allowed":true,"status":{}}}"#;

/// Reads the body (as the webhook must) and answers without looking at it.
async fn canned(_body: Bytes) -> impl IntoResponse {
    ([(CONTENT_TYPE, "application/json")], CANNED)
}

/// Parses the review as kube-rs webhooks do and allows it.
async fn parsed(body: Bytes) -> axum::response::Response {
    let request: Option<AdmissionRequest<DynamicObject>> =
        serde_json::from_slice::<AdmissionReview<_>>(&body)
            .ok()
            .and_then(|review| review.try_into().ok());
    let Some(request) = request else {
        return (StatusCode::BAD_REQUEST, "bad review").into_response();
    };
    axum::Json(AdmissionResponse::from(&request).into_review()).into_response()
}

#[tokio::main]
async fn main() -> ExitCode {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let args = Args::parse();
    let result = async {
        let cert = std::fs::read(&args.tls_cert).map_err(|e| e.to_string())?;
        let key = std::fs::read(&args.tls_key).map_err(|e| e.to_string())?;
        let config = tls::config(&cert, &key)
            .await
            .map_err(|e| format!("{e:#}"))?;
        let answer = if args.parse {
            post(parsed)
        } else {
            post(canned)
        };
        let router = harden(
            Router::new()
                .route("/validate", answer.clone())
                .route("/mutate", answer)
                .route("/healthz", get(|| async { "ok\n" })),
        );
        let handle = Handle::new();
        serve(
            router,
            args.listen,
            Transport::Tls(config),
            handle,
            HEADER_READ_TIMEOUT,
        )
        .await
        .map_err(|e| e.to_string())
    }
    .await;
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("webhook-floor: {error}");
            ExitCode::FAILURE
        }
    }
}
