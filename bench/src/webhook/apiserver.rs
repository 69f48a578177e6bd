//! A stand-in for the parts of kube-apiserver the webhook's watchers use:
//! paginated lists and (idle) watches of the cached kinds (empty for those it
//! has no objects of, such as VPAs), with objects
//! shaped as a cluster serves them (managed fields, the last-applied
//! annotation, status). The webhook fills its caches from it through the real
//! kube-runtime watcher and reflector path. Benchmark only.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

/// How many objects of each kind the stub serves.
#[derive(Clone, Copy, Debug)]
pub struct Counts {
    pub namespaces: usize,
    pub deployments: usize,
    pub replica_sets: usize,
    pub hpas: usize,
    pub pdbs: usize,
    pub limit_ranges: usize,
}

/// The namespace of object number `i`.
pub fn namespace_of(i: usize, counts: &Counts) -> String {
    format!("team-{}", i % counts.namespaces.max(1))
}

/// The resource version every list reports.
const RESOURCE_VERSION: &str = "1000";

pub fn deployment(i: usize, counts: &Counts) -> Value {
    let namespace = namespace_of(i, counts);
    let name = format!("app-{i}");
    let labels = json!({
        "app.kubernetes.io/name": name, "app.kubernetes.io/part-of": format!("product-{}", i % 7),
        "app.kubernetes.io/managed-by": "argocd", "team": namespace, "env": "production"
    });
    let env: Vec<Value> = (0..12)
        .map(|k| json!({"name": format!("SETTING_{k}_NAME"), "value": format!("value-{i}-{k}-some-text")}))
        .collect();
    let container = |cname: &str, cpu: &str, mem: &str| {
        json!({
            "name": cname,
            "image": format!("registry.example.com/{namespace}/{cname}:1.{}.{}", i % 20, i % 9),
            "imagePullPolicy": "IfNotPresent",
            "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
            "env": env,
            "resources": {"requests": {"cpu": cpu, "memory": mem}, "limits": {"memory": mem}},
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"}, "initialDelaySeconds": 10, "periodSeconds": 10, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
            "readinessProbe": {"httpGet": {"path": "/ready", "port": "http", "scheme": "HTTP"}, "periodSeconds": 5, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
            "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}, {"name": "tmp", "mountPath": "/tmp"}],
            "securityContext": {"runAsNonRoot": true, "readOnlyRootFilesystem": true, "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}},
            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"
        })
    };
    let spec = json!({
        "replicas": 3,
        "revisionHistoryLimit": 10,
        "progressDeadlineSeconds": 600,
        "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
        "template": {
            "metadata": {"labels": labels, "annotations": {"prometheus.io/scrape": "true", "checksum/config": format!("{:064x}", i * 7919)}},
            "spec": {
                "containers": [container("app", "250m", "256Mi"), container("proxy", "50m", "64Mi")],
                "volumes": [{"name": "config", "configMap": {"name": format!("{name}-config"), "defaultMode": 420}}, {"name": "tmp", "emptyDir": {}}],
                "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
                "serviceAccountName": name, "serviceAccount": name, "schedulerName": "default-scheduler",
                "securityContext": {"fsGroup": 2000}
            }
        }
    });
    let last_applied = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": labels}, "spec": spec})
    .to_string();
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name, "namespace": namespace,
            "uid": format!("{:08x}-1234-4abc-8def-{:012x}", i, i * 31),
            "resourceVersion": (1000 + i).to_string(), "generation": 4,
            "creationTimestamp": "2026-01-02T03:04:05Z",
            "labels": labels,
            "annotations": {"deployment.kubernetes.io/revision": "4", "kubectl.kubernetes.io/last-applied-configuration": last_applied},
            "managedFields": [
                {"manager": "argocd-controller", "operation": "Apply", "apiVersion": "apps/v1", "time": "2026-01-02T03:04:05Z", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app.kubernetes.io/name": {}, "f:team": {}, "f:env": {}}}, "f:spec": {"f:replicas": {}, "f:selector": {}, "f:template": {"f:metadata": {"f:labels": {}}, "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:env": {}, "f:image": {}, "f:name": {}, "f:ports": {}, "f:resources": {}}, "k:{\"name\":\"proxy\"}": {".": {}, "f:image": {}, "f:name": {}}}, "f:volumes": {}}}}}},
                {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "apps/v1", "time": "2026-01-02T03:05:05Z", "fieldsType": "FieldsV1", "subresource": "status",
                 "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:deployment.kubernetes.io/revision": {}}}, "f:status": {"f:availableReplicas": {}, "f:conditions": {}, "f:observedGeneration": {}, "f:readyReplicas": {}, "f:replicas": {}, "f:updatedReplicas": {}}}}
            ]
        },
        "spec": spec,
        "status": {
            "observedGeneration": 4, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 3,
            "conditions": [
                {"type": "Available", "status": "True", "lastUpdateTime": "2026-01-02T03:05:05Z", "lastTransitionTime": "2026-01-02T03:05:05Z", "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability."},
                {"type": "Progressing", "status": "True", "lastUpdateTime": "2026-01-02T03:05:05Z", "lastTransitionTime": "2026-01-02T03:04:05Z", "reason": "NewReplicaSetAvailable", "message": format!("ReplicaSet \"{name}-5d8f7c9b6\" has successfully progressed.")}
            ]
        }
    })
}

/// The ReplicaSet of Deployment `i`'s current revision.
fn replica_set(i: usize, counts: &Counts) -> Value {
    let mut object = deployment(i, counts);
    let name = format!("app-{i}-5d8f7c9b6");
    object["kind"] = json!("ReplicaSet");
    object["metadata"]["name"] = json!(name);
    object["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "Deployment",
        "name": format!("app-{i}"), "uid": "0000", "controller": true, "blockOwnerDeletion": true}]);
    object
}

/// The HPA that scales Deployment `i`.
pub fn hpa(i: usize, counts: &Counts) -> Value {
    json!({
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {
            "name": format!("app-{i}"), "namespace": namespace_of(i, counts),
            "uid": format!("{i:08x}-5678-4abc-8def-000000000000"), "resourceVersion": (900 + i).to_string(),
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
            "managedFields": [{"manager": "argocd-controller", "operation": "Apply", "apiVersion": "autoscaling/v2", "time": "2026-01-02T03:04:05Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:maxReplicas": {}, "f:metrics": {}, "f:minReplicas": {}, "f:scaleTargetRef": {}}}}]
        },
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": format!("app-{i}")},
            "minReplicas": 2, "maxReplicas": 20,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]
        },
        "status": {"currentReplicas": 3, "desiredReplicas": 3, "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 41, "averageValue": "102m"}}}]}
    })
}

fn pdb(i: usize, counts: &Counts) -> Value {
    json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": format!("app-{i}"), "namespace": namespace_of(i, counts)},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app.kubernetes.io/name": format!("app-{i}")}}},
        "status": {"currentHealthy": 3, "desiredHealthy": 2, "disruptionsAllowed": 1, "expectedPods": 3}
    })
}

fn limit_range(i: usize, counts: &Counts) -> Value {
    json!({
        "apiVersion": "v1", "kind": "LimitRange",
        "metadata": {"name": "defaults", "namespace": namespace_of(i, counts)},
        "spec": {"limits": [{"type": "Container", "defaultRequest": {"memory": "128Mi"}, "default": {"memory": "256Mi"}}]}
    })
}

fn namespace(i: usize) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": format!("team-{i}"), "labels": {"kubernetes.io/metadata.name": format!("team-{i}"), "env": if i.is_multiple_of(2) { "production" } else { "staging" }}},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"}
    })
}

/// How many objects of a resource (the plural in the URL) the stub serves;
/// none of the kinds it does not generate (StatefulSets).
fn total(resource: &str, counts: &Counts) -> usize {
    match resource {
        "deployments" => counts.deployments,
        "replicasets" => counts.replica_sets,
        "horizontalpodautoscalers" => counts.hpas,
        "poddisruptionbudgets" => counts.pdbs,
        "limitranges" => counts.limit_ranges,
        "namespaces" => counts.namespaces,
        _ => 0,
    }
}

/// Every object the stub serves of a resource (its plural).
pub fn objects<'a>(resource: &'a str, counts: &'a Counts) -> impl Iterator<Item = Value> + 'a {
    (0..total(resource, counts)).map(move |i| object(resource, i, counts))
}

/// Object `i` of a resource.
fn object(resource: &str, i: usize, counts: &Counts) -> Value {
    match resource {
        "deployments" => deployment(i, counts),
        "replicasets" => replica_set(i, counts),
        "horizontalpodautoscalers" => hpa(i, counts),
        "poddisruptionbudgets" => pdb(i, counts),
        "limitranges" => limit_range(i, counts),
        _ => namespace(i),
    }
}

/// A list page, or an idle watch, as the API server answers them.
async fn serve(counts: Arc<Counts>, resource: String, query: HashMap<String, String>) -> Response {
    if query.get("watch").is_some_and(|w| w == "true" || w == "1") {
        // Nothing changes: keep the watch open and silent.
        let stream = futures::stream::pending::<Result<axum::body::Bytes, std::io::Error>>();
        return (
            [(CONTENT_TYPE, "application/json")],
            Body::from_stream(stream),
        )
            .into_response();
    }
    let start: usize = query
        .get("continue")
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let limit: usize = query
        .get("limit")
        .and_then(|l| l.parse().ok())
        .unwrap_or(usize::MAX);
    let total = total(&resource, &counts);
    let end = start.saturating_add(limit).min(total);
    let items: Vec<Value> = (start..end)
        .map(|i| object(&resource, i, &counts))
        .map(|mut item| {
            // List items come without apiVersion and kind.
            if let Some(map) = item.as_object_mut() {
                map.remove("apiVersion");
                map.remove("kind");
            }
            item
        })
        .collect();
    let mut metadata = json!({"resourceVersion": RESOURCE_VERSION});
    if end < total {
        metadata["continue"] = json!(end.to_string());
    }
    let list = json!({"apiVersion": "v1", "kind": "List", "metadata": metadata, "items": items});
    ([(CONTENT_TYPE, "application/json")], list.to_string()).into_response()
}

/// Serves the stub on 127.0.0.1 until the process ends; its address.
pub async fn start(counts: Counts) -> std::io::Result<SocketAddr> {
    let counts = Arc::new(counts);
    let core =
        |State(counts): State<Arc<Counts>>,
         Path(resource): Path<String>,
         Query(query): Query<HashMap<String, String>>| { serve(counts, resource, query) };
    let grouped =
        |State(counts): State<Arc<Counts>>,
         Path((_group, _version, resource)): Path<(String, String, String)>,
         Query(query): Query<HashMap<String, String>>| { serve(counts, resource, query) };
    let router = Router::new()
        .route("/api/v1/{resource}", get(core))
        .route("/apis/{group}/{version}/{resource}", get(grouped))
        .with_state(counts);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, router).await });
    Ok(address)
}
