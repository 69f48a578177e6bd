//! `/mutate` as a property: for HPAs of every shape (with and without
//! `metadata`, annotations, `spec`, `behavior` and its parts, `null` in each
//! place), the answer's patch applies to the object it was computed for, keeps
//! what the user set, and a second pass on the patched object gives no patch.

mod common;

use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use common::{decoded_patch, fixture};
use hpa_lint_webhook::app::{AppState, app};
use hpa_lint_webhook::cache::ClusterIndex;
use hpa_lint_webhook::policy::{Policy, SharedPolicy};
use http_body_util::BodyExt;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Value, json};
use tower::ServiceExt;

const INJECTED: &str = "hpa-lint.io/injected-behavior";

/// An optional field: absent (`None`), `null`, or one of `values`.
fn field(values: Vec<Value>) -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        Just(None),
        Just(Some(Value::Null)),
        select(values).prop_map(Some)
    ]
}

/// An object of the fields that are present.
fn object<const N: usize>(fields: [(&str, Option<Value>); N]) -> Value {
    let map: Map<String, Value> = fields
        .into_iter()
        .filter_map(|(name, value)| Some((name.to_owned(), value?)))
        .collect();
    Value::Object(map)
}

/// A field that is absent, `null`, not an object, or an object made by `inner`.
fn member(inner: impl Strategy<Value = Value>) -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        Just(None),
        Just(Some(Value::Null)),
        Just(Some(json!("fast"))),
        inner.prop_map(Some),
    ]
}

fn direction() -> impl Strategy<Value = Option<Value>> {
    member(
        (
            field(vec![json!(0), json!(60), json!(300)]),
            field(vec![json!("Max"), json!("Min"), json!("Disabled")]),
            field(vec![
                json!([]),
                json!([{"type": "Pods", "value": 1, "periodSeconds": 60}]),
            ]),
            field(vec![json!("0.05")]),
        )
            .prop_map(|(window, select, policies, tolerance)| {
                object([
                    ("stabilizationWindowSeconds", window),
                    ("selectPolicy", select),
                    ("policies", policies),
                    ("tolerance", tolerance),
                ])
            }),
    )
}

fn metadata() -> impl Strategy<Value = Option<Value>> {
    member(
        (
            field(vec![json!("web")]),
            field(vec![json!("shop")]),
            field(vec![json!({"team": "shop"})]),
            field(vec![
                json!({}),
                json!({"team": "shop", "a/b~c": "d"}),
                json!({INJECTED: "scaleUp.policies"}),
            ]),
        )
            .prop_map(|(name, namespace, labels, annotations)| {
                object([
                    ("name", name),
                    ("namespace", namespace),
                    ("labels", labels),
                    ("annotations", annotations),
                ])
            }),
    )
}

fn hpa() -> impl Strategy<Value = Value> {
    let behavior = member(
        (direction(), direction())
            .prop_map(|(up, down)| object([("scaleUp", up), ("scaleDown", down)])),
    );
    let spec = member(behavior.prop_map(|behavior| {
        object([
            (
                "scaleTargetRef",
                Some(json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"})),
            ),
            ("maxReplicas", Some(json!(5))),
            ("behavior", behavior),
        ])
    }));
    (any::<bool>(), metadata(), spec).prop_map(|(typed, metadata, spec)| {
        let types = |value: &str| typed.then(|| json!(value));
        object([
            ("apiVersion", types("autoscaling/v2")),
            ("kind", types("HorizontalPodAutoscaler")),
            ("metadata", metadata),
            ("spec", spec),
        ])
    })
}

/// The `/mutate` answer for an HPA create, as the API server would send it.
fn mutate(runtime: &tokio::runtime::Runtime, object: &Value) -> Value {
    let mut review = fixture("hpa-create.json");
    review["request"]["object"] = object.clone();
    let state = AppState::new(
        SharedPolicy::new(Policy::default()),
        Arc::new(ClusterIndex::offline()),
    );
    let request = Request::post("/mutate")
        .body(Body::from(review.to_string()))
        .unwrap();
    runtime.block_on(async {
        let response = app(state).oneshot(request).await.unwrap();
        assert_eq!(response.status(), 200);
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        let review: Value = serde_json::from_slice(&bytes).unwrap();
        review["response"].clone()
    })
}

/// Whether `before`'s non-null value at `pointer` is still there in `after`.
fn kept(before: &Value, after: &Value, pointer: &str) -> bool {
    match before.pointer(pointer) {
        None | Some(Value::Null) => true,
        Some(value) => after.pointer(pointer) == Some(value),
    }
}

proptest! {
    #[test]
    fn every_patch_applies_once_and_keeps_what_was_set(object in hpa()) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let response = mutate(&runtime, &object);
        if response.get("patch").is_none() {
            return Ok(());
        }
        prop_assert_eq!(&response["patchType"], "JSONPatch");
        let mut patched = object.clone();
        json_patch::patch(&mut patched, &decoded_patch(&response))
            .map_err(|e| TestCaseError::fail(format!("{e}: {response}")))?;

        for pointer in ["/apiVersion", "/kind", "/metadata/name", "/metadata/namespace", "/metadata/labels"] {
            prop_assert!(kept(&object, &patched, pointer), "{}", pointer);
        }
        if let Some(Value::Object(annotations)) = object.pointer("/metadata/annotations") {
            for key in annotations.keys().filter(|key| *key != INJECTED) {
                let pointer = format!("/metadata/annotations/{}", key.replace('~', "~0").replace('/', "~1"));
                prop_assert!(kept(&object, &patched, &pointer), "{}", pointer);
            }
        }
        for direction in ["scaleUp", "scaleDown"] {
            for field in ["stabilizationWindowSeconds", "selectPolicy", "policies", "tolerance"] {
                let pointer = format!("/spec/behavior/{direction}/{field}");
                prop_assert!(kept(&object, &patched, &pointer), "{}", pointer);
            }
        }
        let injected = patched.pointer("/metadata/annotations/hpa-lint.io~1injected-behavior");
        prop_assert!(injected.is_some(), "{}", patched);

        let again = mutate(&runtime, &patched);
        prop_assert_eq!(&again["allowed"], true);
        prop_assert!(again.get("patch").is_none(), "second patch: {}", again);
    }
}
