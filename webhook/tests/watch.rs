//! The watchers against an API-server stand-in (kube-standin): stores filled
//! through the real kube-runtime list and watch, for the kinds the enabled
//! rules read, and a 404 for a CRD that is not installed.

mod common;

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use common::fixture;
use hpa_lint_rules::{Index, Lookup};
use hpa_lint_webhook::app::{AppState, app};
use hpa_lint_webhook::cache::{ClusterIndex, Kind};
use hpa_lint_webhook::policy::{Policy, SharedPolicy};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

#[tokio::test]
async fn a_crd_that_is_not_installed_is_unknown_and_does_not_hold_readiness() {
    let mut cluster = kube_standin::Cluster::new("v1.33.4");
    for kind in Kind::ALL {
        let objects = match kind {
            // Not installed: the stand-in answers 404.
            Kind::VerticalPodAutoscaler => continue,
            Kind::Deployment => {
                vec![fixture("deployment-update.json")["request"]["oldObject"].clone()]
            }
            Kind::ScaledObject => vec![json!({
                "apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
                "metadata": {"name": "web", "namespace": "shop"},
                "spec": {"scaleTargetRef": {"name": "web"}},
            })],
            _ => Vec::new(),
        };
        cluster.serve(
            &kind.api_version(),
            kind.name(),
            kind.plural(),
            kind.is_namespaced(),
            objects,
        );
    }
    let standin = cluster.start().await.unwrap();
    let url = format!("http://{}", standin.address).parse().unwrap();
    let client = kube::Client::try_from(kube::Config::new(url)).unwrap();
    let policy = Policy::default();
    let kinds = Kind::needed(&policy, false);
    assert!(kinds.contains(&Kind::VerticalPodAutoscaler));
    let index = Arc::new(ClusterIndex::watch(&client, &kinds, &[], false));
    tokio::time::timeout(Duration::from_secs(20), index.wait_until_synced())
        .await
        .expect("synced, the VPAs' 404 included");
    assert!(
        standin
            .requests()
            .iter()
            .any(|r| r.starts_with("/apis/autoscaling.k8s.io/v1/verticalpodautoscalers?")),
        "{:?}",
        standin.requests()
    );
    assert!(matches!(
        index.list("shop", "autoscaling.k8s.io", "VerticalPodAutoscaler"),
        Lookup::Unknown
    ));

    let state = AppState::new(SharedPolicy::new(policy), Arc::clone(&index));
    let ready = app(state.clone())
        .oneshot(Request::get("/readyz").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(ready.status(), 200);
    // The Deployment and the ScaledObject came through the watchers.
    let response = app(state)
        .oneshot(
            Request::post("/validate")
                .header("content-type", "application/json")
                .body(Body::from(fixture("hpa-create.json").to_string()))
                .unwrap(),
        )
        .await
        .unwrap();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let response: Value = serde_json::from_slice::<Value>(&bytes).unwrap()["response"].clone();
    assert_eq!(
        response["status"]["message"],
        "hpa-lint denied HorizontalPodAutoscaler shop/web: duplicate-target: spec.scaleTargetRef: Deployment `web` is also scaled by ScaledObject `web` (KEDA, which creates an HPA of its own). To accept a finding, annotate the object it is about with `hpa-lint.io/ignore.<rule>: <reason>`."
    );
}
