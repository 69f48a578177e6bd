//! The cross-object path: real kube-runtime reflector stores, filled with
//! watcher events the way the watchers fill them in a cluster, behind the
//! webhook's router (no sockets, no cluster).

mod common;

use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use common::fixture;
use hpa_lint_webhook::app::{AppState, app};
use hpa_lint_webhook::cache::{Cache, Cached, ClusterIndex, Kind};
use hpa_lint_webhook::policy::{Policy, SharedPolicy};
use http_body_util::BodyExt;
use kube::api::DynamicObject;
use kube::runtime::reflector::store::Writer;
use kube::runtime::watcher::Event;
use serde_json::{Value, json};
use tower::ServiceExt;

/// The live HPA that scales Deployment shop/web on CPU utilization.
fn live_hpa(name: &str) -> Value {
    json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": "shop", "resourceVersion": "40001", "managedFields": []},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                 "minReplicas": 2, "maxReplicas": 10,
                 "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}]},
        "status": {"currentReplicas": 6, "desiredReplicas": 6},
    })
}

/// The stored version of the Deployment the `deployment-update.json`
/// request changes (6 replicas, with CPU requests).
fn live_deployment() -> Value {
    fixture("deployment-update.json")["request"]["oldObject"].clone()
}

fn cached(kind: Kind, value: Value) -> Cached {
    let object: DynamicObject = serde_json::from_value(value).unwrap();
    Cached::new(kind, &object)
}

/// A store of `kind` that received its first list, as a watcher delivers it.
fn listed(kind: Kind, namespace: Option<&str>, objects: Vec<Value>) -> Cache {
    let (cache, mut writer) = Cache::new(kind, namespace);
    writer.apply_watcher_event(&Event::Init);
    for object in objects {
        writer.apply_watcher_event(&Event::InitApply(cached(kind, object)));
    }
    writer.apply_watcher_event(&Event::InitDone);
    cache
}

/// A store for each cached kind, all listed; `objects` go to their kind's store.
fn cluster(objects: Vec<(Kind, Value)>) -> ClusterIndex {
    ClusterIndex::new(
        Kind::ALL
            .into_iter()
            .map(|kind| {
                let of_kind = objects
                    .iter()
                    .filter(|(k, _)| *k == kind)
                    .map(|(_, o)| o.clone())
                    .collect();
                listed(kind, None, of_kind)
            })
            .collect(),
    )
}

async fn call(index: ClusterIndex, config: &str, path: &str, body: &Value) -> Value {
    let state = AppState::new(
        SharedPolicy::new(Policy::parse(config).unwrap()),
        Arc::new(index),
    );
    call_state(state, path, body).await
}

async fn call_state(state: AppState, path: &str, body: &Value) -> Value {
    let response = app(state)
        .oneshot(
            Request::post(path)
                .header("content-type", "application/json")
                .body(Body::from(body.to_string()))
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    serde_json::from_slice::<Value>(&bytes).unwrap()["response"].clone()
}

fn warnings(response: &Value) -> Vec<String> {
    response["warnings"]
        .as_array()
        .map(|w| w.iter().map(|s| s.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

fn rules(response: &Value) -> Vec<String> {
    warnings(response)
        .iter()
        .map(|w| w.split(':').next().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_deployment_update_is_checked_against_the_live_hpa() {
    let index = || {
        cluster(vec![
            (Kind::HorizontalPodAutoscaler, live_hpa("web")),
            (Kind::Deployment, live_deployment()),
        ])
    };
    let request = fixture("deployment-update.json");
    // By default, findings about an admitted workload only warn.
    let response = call(index(), "", "/validate", &request).await;
    assert_eq!(response["allowed"], true, "{response}");
    assert_eq!(
        rules(&response),
        ["target-missing-requests", "target-replicas-conflict"]
    );
    let warnings = warnings(&response);
    assert!(
        warnings[0].starts_with(
            "target-missing-requests: spec.template.spec.containers[0].resources.requests.cpu: "
        ),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().all(|w| w.chars().count() <= 120),
        "{warnings:?}"
    );

    // `targets: deny` makes the error finding deny.
    let response = call(
        index(),
        "webhook:\n  targets: deny\n",
        "/validate",
        &request,
    )
    .await;
    assert_eq!(response["allowed"], false);
    assert_eq!(response["status"]["code"], 422);
    let message = response["status"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("hpa-lint denied Deployment shop/web: target-missing-requests: spec.template.spec.containers[0].resources.requests.cpu: "),
        "{message}"
    );
    assert_eq!(rules(&response), ["target-replicas-conflict"]);

    // Keeping the live replica count is no conflict.
    let mut same = request.clone();
    same["request"]["object"]["spec"]["replicas"] = json!(6);
    let response = call(index(), "", "/validate", &same).await;
    assert_eq!(rules(&response), ["target-missing-requests"]);

    // Without an HPA scaling it, a Deployment is nobody's business.
    let response = call(
        cluster(vec![(Kind::Deployment, live_deployment())]),
        "",
        "/validate",
        &request,
    )
    .await;
    assert_eq!(
        (response["allowed"].clone(), response.get("warnings")),
        (json!(true), None)
    );
}

#[tokio::test]
async fn an_hpa_is_checked_against_the_cached_target_and_other_autoscalers() {
    let request = fixture("hpa-create.json");
    let mut no_requests = live_deployment();
    no_requests["spec"]["template"]["spec"]["containers"][0]["resources"] = json!({});
    let response = call(
        cluster(vec![(Kind::Deployment, no_requests)]),
        "",
        "/validate",
        &request,
    )
    .await;
    assert_eq!(response["allowed"], false);
    let message = response["status"]["message"].as_str().unwrap();
    // A finding about the target names it.
    assert!(
        message.starts_with(
            "hpa-lint denied HorizontalPodAutoscaler shop/web: target-missing-requests: Deployment shop/web: spec.template.spec.containers[0].resources.requests.cpu: "
        ),
        "{message}"
    );
    assert_eq!(rules(&response), ["target-replicas-conflict"]);
    assert!(
        warnings(&response)[0]
            .starts_with("target-replicas-conflict: Deployment shop/web: spec.replicas: ")
    );

    // A second HPA on the same Deployment (found through `scalers_of`).
    let response = call(
        cluster(vec![
            (Kind::Deployment, live_deployment()),
            (Kind::HorizontalPodAutoscaler, live_hpa("web-legacy")),
        ]),
        "",
        "/validate",
        &request,
    )
    .await;
    assert_eq!(
        response["status"]["message"],
        "hpa-lint denied HorizontalPodAutoscaler shop/web: duplicate-target: spec.scaleTargetRef: Deployment `web` is also scaled by HorizontalPodAutoscaler `web-legacy`. To accept a finding, annotate the object it is about with `hpa-lint.io/ignore.<rule>: <reason>`."
    );

    // A target that is not in the (synced) cache.
    let response = call(cluster(vec![]), "", "/validate", &request).await;
    assert_eq!(response["allowed"], true);
    assert_eq!(rules(&response), ["target-not-found"]);
}

#[tokio::test]
async fn lookups_are_unknown_until_every_store_is_synced() {
    // Every store listed but the Deployments', which has seen objects but no
    // end of its first list.
    let mut writer: Option<Writer<Cached>> = None;
    let caches = Kind::ALL
        .into_iter()
        .map(|kind| {
            if kind != Kind::Deployment {
                return listed(kind, None, Vec::new());
            }
            let (cache, mut w) = Cache::new(kind, None);
            w.apply_watcher_event(&Event::Apply(cached(
                kind,
                json!({
                    "apiVersion": "apps/v1", "kind": "Deployment",
                    "metadata": {"name": "other", "namespace": "shop"}, "spec": {}
                }),
            )));
            writer = Some(w);
            cache
        })
        .collect();
    let state = AppState::new(SharedPolicy::default(), Arc::new(ClusterIndex::new(caches)));
    let ready = |state: AppState| async move {
        app(state)
            .oneshot(Request::get("/readyz").body(Body::empty()).unwrap())
            .await
            .unwrap()
            .status()
    };
    let request = fixture("hpa-create.json");
    assert_eq!(ready(state.clone()).await, 503);
    // Unknown: the target is not reported missing.
    let response = call_state(state.clone(), "/validate", &request).await;
    assert_eq!(
        (response["allowed"].clone(), response.get("warnings")),
        (json!(true), None)
    );

    writer.unwrap().apply_watcher_event(&Event::InitDone);
    assert_eq!(ready(state.clone()).await, 200);
    let response = call_state(state, "/validate", &request).await;
    assert_eq!(rules(&response), ["target-not-found"]);
}

#[tokio::test]
async fn namespaces_outside_watch_namespaces_are_unknown() {
    let index = || {
        ClusterIndex::new(
            Kind::ALL
                .into_iter()
                .map(|kind| listed(kind, Some("shop"), Vec::new()))
                .collect(),
        )
    };
    let request = fixture("hpa-create.json");
    let response = call(index(), "", "/validate", &request).await;
    assert_eq!(rules(&response), ["target-not-found"]);

    let mut elsewhere = request.clone();
    elsewhere["request"]["namespace"] = json!("billing");
    elsewhere["request"]["object"]["metadata"]["namespace"] = json!("billing");
    let response = call(index(), "", "/validate", &elsewhere).await;
    assert_eq!(response.get("warnings"), None, "{response}");
}

#[tokio::test]
async fn the_namespace_labels_choose_the_mutation_defaults() {
    let config = "webhook:\n  defaults:\n  - namespaceSelector: {matchLabels: {env: production}}\n    behavior:\n      scaleDown:\n        stabilizationWindowSeconds: 600\n        policies: [{type: Percent, value: 10, periodSeconds: 60}]\n";
    let namespace = |labels: Value| {
        cluster(vec![(
            Kind::Namespace,
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop", "labels": labels}}),
        )])
    };
    let request = fixture("hpa-create.json");
    let window = |response: &Value| {
        let mut object = request["request"]["object"].clone();
        json_patch::patch(&mut object, &common::decoded_patch(response)).unwrap();
        object["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"].clone()
    };
    let production = call(
        namespace(json!({"env": "production"})),
        config,
        "/mutate",
        &request,
    )
    .await;
    assert_eq!(window(&production), 600);
    let staging = call(
        namespace(json!({"env": "staging"})),
        config,
        "/mutate",
        &request,
    )
    .await;
    assert_eq!(window(&staging), 300);
    // Offline the labels are unknown: the built-in defaults apply.
    let offline = call(ClusterIndex::offline(), config, "/mutate", &request).await;
    assert_eq!(window(&offline), 300);
}

/// A VerticalPodAutoscaler that resizes Deployment shop/web (mode `Auto`).
fn vpa() -> Value {
    json!({
        "apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "shop", "resourceVersion": "7"},
        "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}},
        "status": {"recommendation": {}},
    })
}

#[tokio::test]
async fn an_hpa_whose_target_a_cached_vpa_resizes_is_warned() {
    let request = fixture("hpa-create.json");
    let response = call(
        cluster(vec![
            (Kind::Deployment, live_deployment()),
            (Kind::VerticalPodAutoscaler, vpa()),
        ]),
        "",
        "/validate",
        &request,
    )
    .await;
    assert_eq!(
        rules(&response),
        ["target-replicas-conflict", "vpa-conflict"],
        "{response}"
    );

    // Turned off, the rule is not run, and the VPAs are not watched.
    let config = "rules:\n  vpa-conflict: off\n";
    let response = call(
        cluster(vec![
            (Kind::Deployment, live_deployment()),
            (Kind::VerticalPodAutoscaler, vpa()),
        ]),
        config,
        "/validate",
        &request,
    )
    .await;
    assert_eq!(rules(&response), ["target-replicas-conflict"]);
    let policy = Policy::parse(config).unwrap();
    assert!(!Kind::needed(&policy, false).contains(&Kind::VerticalPodAutoscaler));
}

#[tokio::test]
async fn vpas_not_cached_or_not_served_are_unknown() {
    let request = fixture("hpa-create.json");
    // No VPA store: neither found nor absent, so no finding.
    let caches = Kind::ALL
        .into_iter()
        .filter(|kind| *kind != Kind::VerticalPodAutoscaler)
        .map(|kind| {
            let objects = if kind == Kind::Deployment {
                vec![live_deployment()]
            } else {
                Vec::new()
            };
            listed(kind, None, objects)
        });
    let response = call(
        ClusterIndex::new(caches.collect()),
        "",
        "/validate",
        &request,
    )
    .await;
    assert_eq!(rules(&response), ["target-replicas-conflict"]);

    // A store whose watcher was told 404 (the CRD is not installed): the
    // webhook is ready, and VPAs are unknown.
    let (absent, _writer) = Cache::new(Kind::VerticalPodAutoscaler, None);
    let caches = Kind::ALL
        .into_iter()
        .filter(|kind| *kind != Kind::VerticalPodAutoscaler)
        .map(|kind| listed(kind, None, Vec::new()))
        .chain([absent.clone()])
        .collect();
    let state = AppState::new(SharedPolicy::default(), Arc::new(ClusterIndex::new(caches)));
    let ready = || async {
        app(state.clone())
            .oneshot(Request::get("/readyz").body(Body::empty()).unwrap())
            .await
            .unwrap()
            .status()
    };
    assert_eq!(ready().await, 503);
    absent.set_absent(true);
    assert_eq!(ready().await, 200);
    let response = call_state(state.clone(), "/validate", &request).await;
    assert_eq!(rules(&response), ["target-not-found"]);
}

/// The KEDA ScaledObject `web` on Deployment shop/web (KEDA's default kind).
fn scaled_object() -> Value {
    json!({
        "apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
        "metadata": {"name": "web", "namespace": "shop", "uid": "so-1"},
        "spec": {"scaleTargetRef": {"name": "web"}, "triggers": [{"type": "cpu", "metadata": {"value": "60"}}]},
    })
}

/// The HPA KEDA creates for [`scaled_object`], which owns it.
fn keda_hpa() -> Value {
    let mut hpa = live_hpa("keda-hpa-web");
    hpa["metadata"]["ownerReferences"] = json!([{
        "apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject", "name": "web",
        "uid": "so-1", "controller": true, "blockOwnerDeletion": true,
    }]);
    hpa
}

#[tokio::test]
async fn a_cached_scaled_object_is_another_autoscaler_but_not_its_own_hpa() {
    let index = || {
        cluster(vec![
            (Kind::Deployment, live_deployment()),
            (Kind::ScaledObject, scaled_object()),
            (Kind::HorizontalPodAutoscaler, keda_hpa()),
        ])
    };
    // A second autoscaler on the Deployment: the ScaledObject, once (its
    // own HPA is part of it).
    let request = fixture("hpa-create.json");
    let response = call(index(), "", "/validate", &request).await;
    assert_eq!(
        response["status"]["message"],
        "hpa-lint denied HorizontalPodAutoscaler shop/web: duplicate-target: spec.scaleTargetRef: Deployment `web` is also scaled by ScaledObject `web` (KEDA, which creates an HPA of its own). To accept a finding, annotate the object it is about with `hpa-lint.io/ignore.<rule>: <reason>`."
    );

    // KEDA creating its own HPA is no conflict.
    let mut own = request.clone();
    own["request"]["name"] = json!("keda-hpa-web");
    let metadata = &mut own["request"]["object"]["metadata"];
    metadata["name"] = json!("keda-hpa-web");
    metadata["ownerReferences"] = keda_hpa()["metadata"]["ownerReferences"].clone();
    let response = call(index(), "", "/validate", &own).await;
    assert_eq!(response["allowed"], true, "{response}");
    assert_eq!(rules(&response), ["target-replicas-conflict"]);
}
