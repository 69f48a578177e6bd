//! HTTP-level failures: requests that cannot be answered with an
//! `AdmissionReview` because there is no readable review or no uid to answer
//! to. A denial is not one of these: every readable review gets `200`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// Why a request got no `AdmissionReview` back.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The body is larger than `webhook.maxBodyBytes`.
    #[error("request body larger than {limit} bytes")]
    TooLarge {
        /// The limit in force.
        limit: usize,
    },
    /// The client did not send the whole body in time.
    #[error("request body not received within {timeout:?}")]
    SlowBody {
        /// The time allowed.
        timeout: std::time::Duration,
    },
    /// The connection failed while the body was read.
    #[error("reading the request body: {0}")]
    Body(String),
    /// The body is not JSON.
    #[error("malformed AdmissionReview: {0}")]
    Malformed(String),
    /// The body is not an `AdmissionReview` of `admission.k8s.io/v1`.
    #[error(
        "expected an AdmissionReview of admission.k8s.io/v1, got kind {kind} and apiVersion {api_version}"
    )]
    NotAReview {
        /// The body's `kind`, quoted, or `missing`.
        kind: String,
        /// The body's `apiVersion`, quoted, or `missing`.
        api_version: String,
    },
    /// The review has no `request`.
    #[error("the AdmissionReview has no `request`")]
    NoRequest,
    /// The request has no `uid`, so no answer could be matched to it.
    #[error("the AdmissionReview request has no `uid`")]
    NoUid,
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let status = match self {
            AppError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            AppError::SlowBody { .. } => StatusCode::REQUEST_TIMEOUT,
            AppError::Body(_)
            | AppError::Malformed(_)
            | AppError::NotAReview { .. }
            | AppError::NoRequest
            | AppError::NoUid => StatusCode::BAD_REQUEST,
        };
        (status, format!("hpa-lint: {self}\n")).into_response()
    }
}
