//! A stand-in for a kube-apiserver whose objects change: what the webhook's
//! reporting mode needs besides lists. Objects are created, replaced,
//! patched (JSON merge patch; strategic merge patches are applied as merge
//! patches, which is exact for maps of scalars such as Lease and Event
//! fields), server-side applied with field ownership and conflicts
//! ([`ssa`]), and deleted; watches replay the changes after their
//! `resourceVersion` and then stream new ones. Discovery lists what is served
//! now: a CRD can be installed or removed while clients run. Namespaces are
//! real enough for the faults that matter: writing into a missing namespace
//! answers 404, into a terminating one 403.
//!
//! Faults, switched on and off while clients run: `403 Forbidden` for a
//! resource, `409 Conflict` for the next writes of a resource, and the whole
//! server down (connections refused and open watches cut).
//!
//! Not covered: authentication and RBAC beyond [`Live::forbid`], admission,
//! defaulting and validation (an object is stored as sent), field and label
//! selectors beyond equality, JSON patches, associative lists in apply,
//! bookmarks, and a network that drops packets (down means refused, never a
//! timeout).

mod ssa;

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header::{CONTENT_TYPE, USER_AGENT};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::service::TowerToHyperService;
use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, watch};

use crate::{decode, json_response, not_found, selects, status};
use ssa::Owners;

/// A resource the stand-in serves.
#[derive(Clone, Debug)]
struct Resource {
    group: String,
    version: String,
    kind: String,
    plural: String,
    namespaced: bool,
    /// Whether `status` is a subresource: writes to the object leave it alone.
    has_status: bool,
}

impl Resource {
    fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// `plural.group`, as the server names resources in its messages.
    fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }
}

/// Where an object lives.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Key {
    group: String,
    plural: String,
    namespace: String,
    name: String,
}

/// One change, as watches see it.
#[derive(Clone, Debug)]
struct Change {
    revision: u64,
    group: String,
    plural: String,
    namespace: String,
    kind: &'static str,
    object: Arc<Value>,
}

/// The objects, and every change since the start.
#[derive(Default)]
struct Store {
    revision: u64,
    objects: BTreeMap<Key, (Value, Owners)>,
    log: Vec<Change>,
}

/// Faults in force.
#[derive(Default)]
struct Faults {
    /// `plural.group` of resources that answer 403 to everything.
    forbidden: Vec<String>,
    /// `plural.group` → how many more writes answer 409.
    conflicts: HashMap<String, usize>,
    /// How long a deleted namespace stays terminating.
    terminating: Duration,
}

struct Shared {
    version: String,
    resources: Mutex<Vec<Resource>>,
    store: Mutex<Store>,
    faults: Mutex<Faults>,
    changes: broadcast::Sender<Change>,
    requests: Mutex<Vec<String>>,
    down: watch::Sender<bool>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Kinds every cluster serves, with their version, plural, scope and whether
/// `status` is a subresource.
const BUILT_IN: [(&str, &str, &str, bool, bool); 12] = [
    ("v1", "Namespace", "namespaces", false, true),
    ("v1", "LimitRange", "limitranges", true, false),
    (
        "v1",
        "ReplicationController",
        "replicationcontrollers",
        true,
        true,
    ),
    ("v1", "Event", "events", true, false),
    ("apps/v1", "Deployment", "deployments", true, true),
    ("apps/v1", "StatefulSet", "statefulsets", true, true),
    ("apps/v1", "ReplicaSet", "replicasets", true, true),
    (
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        true,
        true,
    ),
    (
        "policy/v1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        true,
        true,
    ),
    (
        "apiregistration.k8s.io/v1",
        "APIService",
        "apiservices",
        false,
        true,
    ),
    ("coordination.k8s.io/v1", "Lease", "leases", true, false),
    ("events.k8s.io/v1", "Event", "events", true, false),
];

/// The stand-in, listening. Clones share the server.
#[derive(Clone)]
pub struct Live {
    /// Where it listens (127.0.0.1).
    pub address: SocketAddr,
    shared: Arc<Shared>,
}

fn resource(
    api_version: &str,
    kind: &str,
    plural: &str,
    namespaced: bool,
    has_status: bool,
) -> Resource {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    Resource {
        group: group.to_owned(),
        version: version.to_owned(),
        kind: kind.to_owned(),
        plural: plural.to_owned(),
        namespaced,
        has_status,
    }
}

fn now() -> String {
    jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .unwrap_or_default()
        .to_string()
}

impl Live {
    /// Serves the built-in kinds of a cluster that reports `git_version`
    /// (e.g. `v1.33.4`), with no objects yet, on a free port of 127.0.0.1,
    /// until the runtime ends.
    pub async fn start(git_version: &str) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            version: git_version.to_owned(),
            resources: Mutex::new(
                BUILT_IN
                    .iter()
                    .map(|&(v, k, p, n, s)| resource(v, k, p, n, s))
                    .collect(),
            ),
            store: Mutex::default(),
            faults: Mutex::default(),
            changes: broadcast::channel(1 << 16).0,
            requests: Mutex::default(),
            down: watch::channel(false).0,
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let router = Router::new()
            .fallback(answer)
            .with_state(Arc::clone(&shared));
        tokio::spawn(serve(listener, router, shared.down.clone()));
        Ok(Self { address, shared })
    }

    /// A kubeconfig for the stand-in, with `namespace` as the context's namespace.
    pub fn kubeconfig(&self, namespace: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: standin\nclusters:\n- name: standin\n  cluster: {{server: \"http://{}\"}}\ncontexts:\n- name: standin\n  context: {{cluster: standin, user: tester, namespace: {namespace}}}\nusers:\n- name: tester\n  user: {{token: standin-token}}\n",
            self.address
        )
    }

    /// Serves a custom resource from now on (its CRD is installed).
    pub fn install(&self, api_version: &str, kind: &str, plural: &str, namespaced: bool) {
        lock(&self.shared.resources).push(resource(api_version, kind, plural, namespaced, false));
    }

    /// Stops serving a custom resource (its CRD is removed), and its objects go.
    pub fn uninstall(&self, api_version: &str, kind: &str) {
        let Some(gone) = self.resource_of(api_version, kind) else {
            return;
        };
        lock(&self.shared.resources)
            .retain(|r| !(r.group == gone.group && r.plural == gone.plural));
        let mut store = lock(&self.shared.store);
        let keys: Vec<Key> = store
            .objects
            .keys()
            .filter(|k| k.group == gone.group && k.plural == gone.plural)
            .cloned()
            .collect();
        for key in keys {
            self.shared.remove(&mut store, &gone, &key);
        }
    }

    fn resource_of(&self, api_version: &str, kind: &str) -> Option<Resource> {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        lock(&self.shared.resources)
            .iter()
            .find(|r| r.group == group && r.version == version && r.kind == kind)
            .cloned()
    }

    fn located(&self, object: &Value) -> (Resource, Key) {
        let text = |pointer: &str| {
            object
                .pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        let resource = self
            .resource_of(text("/apiVersion"), text("/kind"))
            .unwrap_or_else(|| panic!("not served: {} {}", text("/apiVersion"), text("/kind")));
        let key = Key {
            group: resource.group.clone(),
            plural: resource.plural.clone(),
            namespace: text("/metadata/namespace").to_owned(),
            name: text("/metadata/name").to_owned(),
        };
        (resource, key)
    }

    /// Creates or replaces an object (status included), as another client would.
    pub fn put(&self, object: Value) {
        let (resource, key) = self.located(&object);
        let mut store = lock(&self.shared.store);
        let old = store.objects.get(&key).map(|(v, _)| v.clone());
        self.shared
            .store_object(&mut store, &resource, &key, old.as_ref(), object, "test");
    }

    /// Replaces an object's `status`, as its controller would.
    pub fn set_status(
        &self,
        api_version: &str,
        kind: &str,
        namespace: &str,
        name: &str,
        status: Value,
    ) {
        let mut object = self
            .get(api_version, kind, namespace, name)
            .unwrap_or_else(|| panic!("no {kind} {namespace}/{name}"));
        object["status"] = status;
        self.put(object);
    }

    /// Creates a namespace.
    pub fn namespace(&self, name: &str) {
        self.put(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}, "status": {"phase": "Active"}}));
    }

    /// An object, as stored.
    pub fn get(&self, api_version: &str, kind: &str, namespace: &str, name: &str) -> Option<Value> {
        let resource = self.resource_of(api_version, kind)?;
        let key = Key {
            group: resource.group,
            plural: resource.plural,
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        };
        lock(&self.shared.store)
            .objects
            .get(&key)
            .map(|(v, _)| v.clone())
    }

    /// Every object of a kind, in all namespaces.
    pub fn list(&self, api_version: &str, kind: &str) -> Vec<Value> {
        let Some(resource) = self.resource_of(api_version, kind) else {
            return Vec::new();
        };
        lock(&self.shared.store)
            .objects
            .iter()
            .filter(|(k, _)| k.group == resource.group && k.plural == resource.plural)
            .map(|(_, (v, _))| v.clone())
            .collect()
    }

    /// Deletes an object, as another client would (a namespace terminates
    /// first, see [`Live::terminate_for`]).
    pub fn delete(&self, api_version: &str, kind: &str, namespace: &str, name: &str) {
        let resource = self
            .resource_of(api_version, kind)
            .unwrap_or_else(|| panic!("not served: {api_version} {kind}"));
        let key = Key {
            group: resource.group.clone(),
            plural: resource.plural.clone(),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        };
        Arc::clone(&self.shared).delete(&resource, &key);
    }

    /// Every request so far, as `METHOD path?query`, in order.
    pub fn requests(&self) -> Vec<String> {
        lock(&self.shared.requests).clone()
    }

    /// Every request of a resource (`plural.group`, or `plural` for core)
    /// so far.
    pub fn requests_of(&self, qualified: &str) -> Vec<String> {
        let (plural, group) = qualified.split_once('.').unwrap_or((qualified, ""));
        let base = if group.is_empty() {
            "/api/v1/".to_owned()
        } else {
            format!("/apis/{group}/")
        };
        self.requests()
            .into_iter()
            .filter(|r| {
                let path = r.split(['?', ' ']).nth(1).unwrap_or_default();
                path.starts_with(&base) && path.split('/').any(|s| s == plural)
            })
            .collect()
    }

    /// Answers 403 Forbidden to every request of a resource until
    /// [`Live::allow`].
    pub fn forbid(&self, group: &str, plural: &str) {
        lock(&self.shared.faults)
            .forbidden
            .push(format!("{plural}.{group}"));
    }

    /// Ends [`Live::forbid`].
    pub fn allow(&self, group: &str, plural: &str) {
        let name = format!("{plural}.{group}");
        lock(&self.shared.faults).forbidden.retain(|f| *f != name);
    }

    /// The next `count` writes of a resource answer 409 Conflict.
    pub fn conflict_next(&self, group: &str, plural: &str, count: usize) {
        lock(&self.shared.faults)
            .conflicts
            .insert(format!("{plural}.{group}"), count);
    }

    /// How long a deleted namespace stays terminating before its objects
    /// and itself go (none by default).
    pub fn terminate_for(&self, duration: Duration) {
        lock(&self.shared.faults).terminating = duration;
    }

    /// Takes the server down: connections are refused and open watches cut,
    /// until [`Live::up`].
    pub fn down(&self) {
        self.shared.down.send_replace(true);
    }

    /// Brings the server back.
    pub fn up(&self) {
        self.shared.down.send_replace(false);
    }
}

/// Accepts connections, refusing them while the server is down and cutting
/// the open ones when it goes down.
async fn serve(listener: tokio::net::TcpListener, router: Router, down: watch::Sender<bool>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        if *down.borrow() {
            drop(stream);
            continue;
        }
        let service = TowerToHyperService::new(router.clone());
        let mut cut = down.subscribe();
        tokio::spawn(async move {
            let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                _ = connection => {}
                _ = cut.wait_for(|down| *down) => {}
            }
        });
    }
}

/// What a request addresses.
struct Target {
    resource: Resource,
    namespace: Option<String>,
    name: Option<String>,
    subresource: Option<String>,
}

fn forbidden(resource: &Resource, verb: &str, namespace: Option<&str>) -> Response {
    let scope = namespace.map_or("at the cluster scope".to_owned(), |ns| {
        format!("in the namespace \"{ns}\"")
    });
    status(
        StatusCode::FORBIDDEN,
        "Forbidden",
        &format!(
            "{} is forbidden: User \"system:serviceaccount:hpa-lint:hpa-lint\" cannot {verb} resource \"{}\" in API group \"{}\" {scope}",
            resource.qualified(),
            resource.plural,
            resource.group
        ),
    )
}

fn missing(resource: &Resource, name: &str) -> Response {
    status(
        StatusCode::NOT_FOUND,
        "NotFound",
        &format!("{} \"{name}\" not found", resource.qualified()),
    )
}

fn bad_request(message: &str) -> Response {
    status(StatusCode::BAD_REQUEST, "BadRequest", message)
}

async fn answer(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let uri = parts.uri.clone();
    lock(&shared.requests).push(format!("{} {uri}", parts.method));
    let query: HashMap<String, String> = uri
        .query()
        .map(|q| {
            q.split('&')
                .filter_map(|pair| pair.split_once('='))
                .map(|(k, v)| (k.to_owned(), decode(v)))
                .collect()
        })
        .unwrap_or_default();
    let segments: Vec<&str> = uri.path().trim_matches('/').split('/').collect();
    let (group, version, rest) = match segments.as_slice() {
        ["version"] => {
            let minor = shared
                .version
                .trim_start_matches("v1.")
                .split('.')
                .next()
                .unwrap_or_default()
                .to_owned();
            return json_response(
                json!({"major": "1", "minor": minor, "gitVersion": shared.version}).to_string(),
            );
        }
        ["api"] => {
            return json_response(json!({"kind": "APIVersions", "versions": ["v1"]}).to_string());
        }
        ["apis"] => return json_response(shared.groups().to_string()),
        ["api", "v1", rest @ ..] => ("", "v1", rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return not_found(),
    };
    if rest.is_empty() {
        return shared.discovery(group, version);
    }
    let Some(target) = shared.target(group, version, rest) else {
        return not_found();
    };
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let content_type = parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let manager = query.get("fieldManager").cloned().unwrap_or_else(|| {
        let agent = parts
            .headers
            .get(USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("unknown");
        agent.split('/').next().unwrap_or(agent).to_owned()
    });
    let verb = match (&parts.method, &target.name) {
        (&Method::GET, None) if query.get("watch").is_some_and(|w| w == "true" || w == "1") => {
            "watch"
        }
        (&Method::GET, None) => "list",
        (&Method::GET, Some(_)) => "get",
        (&Method::POST, _) => "create",
        (&Method::PUT, _) => "update",
        (&Method::PATCH, _) => "patch",
        (&Method::DELETE, _) => "delete",
        _ => {
            return status(
                StatusCode::METHOD_NOT_ALLOWED,
                "MethodNotAllowed",
                "method not allowed",
            );
        }
    };
    if let Some(refused) = shared.refuse(&target, verb) {
        return refused;
    }
    match verb {
        "watch" => shared.watch(&target, &query),
        "list" => shared.list(&target, &query),
        "get" => shared.get(&target),
        "delete" => {
            let key = shared.key(&target);
            if !lock(&shared.store).objects.contains_key(&key) {
                return missing(&target.resource, &key.name);
            }
            Arc::clone(&shared).delete(&target.resource, &key);
            json_response(
                json!({"kind": "Status", "apiVersion": "v1", "status": "Success"}).to_string(),
            )
        }
        _ => match serde_json::from_slice::<Value>(&body) {
            Ok(sent) if sent.is_object() => {
                shared.write(&target, verb, content_type, sent, &manager, &query)
            }
            _ => bad_request("the body is not a JSON object"),
        },
    }
}

/// RFC 7386: `patch` merged into `object`, `null` removing.
fn merge_patch(object: &mut Value, patch: &Value) {
    let Some(fields) = patch.as_object() else {
        *object = patch.clone();
        return;
    };
    if !object.is_object() {
        *object = Value::Object(Map::new());
    }
    let Some(map) = object.as_object_mut() else {
        return;
    };
    for (key, value) in fields {
        if value.is_null() {
            map.remove(key);
        } else {
            merge_patch(map.entry(key.clone()).or_insert(Value::Null), value);
        }
    }
}

impl Shared {
    fn groups(&self) -> Value {
        let mut seen: Vec<(String, String)> = Vec::new();
        for r in lock(&self.resources).iter().filter(|r| !r.group.is_empty()) {
            if !seen.iter().any(|(g, _)| *g == r.group) {
                seen.push((r.group.clone(), r.version.clone()));
            }
        }
        let groups: Vec<Value> = seen
            .iter()
            .map(|(group, version)| {
                let gv = json!({"groupVersion": format!("{group}/{version}"), "version": version});
                json!({"name": group, "versions": [gv], "preferredVersion": gv})
            })
            .collect();
        json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
    }

    fn discovery(&self, group: &str, version: &str) -> Response {
        let resources: Vec<Value> = lock(&self.resources)
            .iter()
            .filter(|r| r.group == group && r.version == version)
            .flat_map(|r| {
                let verbs = json!(["create", "delete", "get", "list", "patch", "update", "watch"]);
                let mut listed = vec![json!({"name": r.plural, "singularName": r.kind.to_lowercase(), "namespaced": r.namespaced, "kind": r.kind, "verbs": verbs})];
                if r.has_status {
                    listed.push(json!({"name": format!("{}/status", r.plural), "singularName": "", "namespaced": r.namespaced, "kind": r.kind, "verbs": ["get", "patch", "update"]}));
                }
                listed
            })
            .collect();
        if resources.is_empty() {
            return not_found();
        }
        let gv = if group.is_empty() {
            version.to_owned()
        } else {
            format!("{group}/{version}")
        };
        json_response(json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}).to_string())
    }

    fn served(&self, group: &str, version: &str, plural: &str) -> Option<Resource> {
        lock(&self.resources)
            .iter()
            .find(|r| r.group == group && r.version == version && r.plural == plural)
            .cloned()
    }

    fn target(&self, group: &str, version: &str, rest: &[&str]) -> Option<Target> {
        let namespaced =
            |plural: &str| self.served(group, version, plural).filter(|r| r.namespaced);
        let (resource, namespace, rest) = match rest {
            ["namespaces", namespace, plural, rest @ ..] if namespaced(plural).is_some() => {
                (namespaced(plural)?, Some((*namespace).to_owned()), rest)
            }
            [plural, rest @ ..] => (self.served(group, version, plural)?, None, rest),
            [] => return None,
        };
        let (name, subresource) = match rest {
            [] => (None, None),
            [name] => (Some((*name).to_owned()), None),
            [name, sub] => (Some((*name).to_owned()), Some((*sub).to_owned())),
            _ => return None,
        };
        Some(Target {
            resource,
            namespace,
            name,
            subresource,
        })
    }

    fn key(&self, target: &Target) -> Key {
        Key {
            group: target.resource.group.clone(),
            plural: target.resource.plural.clone(),
            namespace: target.namespace.clone().unwrap_or_default(),
            name: target.name.clone().unwrap_or_default(),
        }
    }

    /// The faults' answer to a request, if they have one.
    fn refuse(&self, target: &Target, verb: &str) -> Option<Response> {
        let mut faults = lock(&self.faults);
        let name = format!("{}.{}", target.resource.plural, target.resource.group);
        if faults.forbidden.contains(&name) {
            return Some(forbidden(
                &target.resource,
                verb,
                target.namespace.as_deref(),
            ));
        }
        if matches!(verb, "create" | "update" | "patch")
            && let Some(left) = faults.conflicts.get_mut(&name).filter(|left| **left > 0)
        {
            *left -= 1;
            return Some(status(
                StatusCode::CONFLICT,
                "Conflict",
                &format!(
                    "Operation cannot be fulfilled on {} \"{}\": the object has been modified; please apply your changes to the latest version and try again",
                    target.resource.qualified(),
                    target.name.as_deref().unwrap_or_default()
                ),
            ));
        }
        None
    }

    fn get(&self, target: &Target) -> Response {
        let key = self.key(target);
        match lock(&self.store).objects.get(&key) {
            Some((object, _)) => json_response(object.to_string()),
            None => missing(&target.resource, &key.name),
        }
    }

    fn matching<'a>(
        &self,
        target: &'a Target,
        query: &'a HashMap<String, String>,
    ) -> impl Fn(&str, &str, &str, &Value) -> bool + 'a {
        let selector = query.get("labelSelector").cloned().unwrap_or_default();
        move |group, plural, namespace, object| {
            group == target.resource.group
                && plural == target.resource.plural
                && target.namespace.as_deref().is_none_or(|ns| ns == namespace)
                && selects(
                    &selector,
                    object
                        .pointer("/metadata/labels")
                        .and_then(Value::as_object)
                        .unwrap_or(&Map::new()),
                )
        }
    }

    fn list(&self, target: &Target, query: &HashMap<String, String>) -> Response {
        let matches = self.matching(target, query);
        let store = lock(&self.store);
        let items: Vec<&Value> = store
            .objects
            .iter()
            .filter(|(k, (v, _))| matches(&k.group, &k.plural, &k.namespace, v))
            .map(|(_, (v, _))| v)
            .collect();
        let start: usize = query
            .get("continue")
            .and_then(|t| t.strip_prefix("standin-"))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let limit = query
            .get("limit")
            .and_then(|l| l.parse::<usize>().ok())
            .filter(|l| *l > 0)
            .unwrap_or(usize::MAX);
        let end = start.saturating_add(limit).min(items.len());
        let mut metadata = json!({"resourceVersion": store.revision.to_string()});
        if end < items.len() {
            metadata["continue"] = json!(format!("standin-{end}"));
            metadata["remainingItemCount"] = json!(items.len() - end);
        }
        let page = items.get(start..end).unwrap_or_default();
        json_response(
            json!({"apiVersion": target.resource.api_version(), "kind": format!("{}List", target.resource.kind), "metadata": metadata, "items": page})
                .to_string(),
        )
    }

    fn watch(self: &Arc<Self>, target: &Target, query: &HashMap<String, String>) -> Response {
        let live = self.changes.subscribe();
        let since: Option<u64> = query
            .get("resourceVersion")
            .and_then(|rv| rv.parse().ok())
            .filter(|rv| *rv > 0);
        let matches = self.matching(target, query);
        let store = lock(&self.store);
        let replayed: Vec<Change> = match since {
            Some(since) => store
                .log
                .iter()
                .filter(|c| {
                    c.revision > since && matches(&c.group, &c.plural, &c.namespace, &c.object)
                })
                .cloned()
                .collect(),
            None => Vec::new(),
        };
        let last = store.revision;
        drop(store);
        let (resource, namespace, selector) = (
            target.resource.clone(),
            target.namespace.clone(),
            query.get("labelSelector").cloned().unwrap_or_default(),
        );
        let wanted = move |c: &Change| {
            c.revision > last
                && c.group == resource.group
                && c.plural == resource.plural
                && namespace.as_deref().is_none_or(|ns| ns == c.namespace)
                && selects(
                    &selector,
                    c.object
                        .pointer("/metadata/labels")
                        .and_then(Value::as_object)
                        .unwrap_or(&Map::new()),
                )
        };
        let line = |c: &Change| {
            Ok::<_, std::io::Error>(Bytes::from(format!(
                "{}\n",
                json!({"type": c.kind, "object": *c.object})
            )))
        };
        let first = futures::stream::iter(replayed.iter().map(line).collect::<Vec<_>>());
        let rest = futures::stream::unfold(live, |mut live| async move {
            let received = live.recv().await;
            Some((received, live))
        })
        .filter_map(move |received| {
            let out = match received {
                Ok(change) if wanted(&change) => Some(line(&change)),
                Ok(_) => None,
                // Too far behind: end the watch; the client lists again.
                Err(_) => Some(Err(std::io::Error::other("watch lagged"))),
            };
            async move { out }
        });
        (
            [(CONTENT_TYPE, "application/json")],
            Body::from_stream(first.chain(rest)),
        )
            .into_response()
    }

    /// Creates, replaces, patches or applies.
    fn write(
        &self,
        target: &Target,
        verb: &str,
        content_type: &str,
        sent: Value,
        manager: &str,
        query: &HashMap<String, String>,
    ) -> Response {
        let resource = &target.resource;
        let mut key = self.key(target);
        if verb == "create" {
            key.name = sent
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            if key.name.is_empty() {
                return status(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "Invalid",
                    "metadata.name: Required value: name is required",
                );
            }
        }
        let status_only = target.subresource.as_deref() == Some("status");
        let mut store = lock(&self.store);
        if resource.namespaced
            && let Some(refused) = self.check_namespace(&store, &key.namespace)
        {
            return refused;
        }
        let old = store.objects.get(&key).map(|(v, o)| (v.clone(), o.clone()));
        let mut new = match (verb, &old) {
            ("create", Some(_)) => {
                return status(
                    StatusCode::CONFLICT,
                    "AlreadyExists",
                    &format!("{} \"{}\" already exists", resource.qualified(), key.name),
                );
            }
            ("create", None) => sent,
            ("patch", _) if content_type.starts_with("application/apply-patch") => {
                let Some(manager) = query.get("fieldManager") else {
                    return bad_request(
                        "PATCH requests with apply content type require a fieldManager",
                    );
                };
                let force = query.get("force").is_some_and(|f| f == "true");
                let (current, mut owners) = old
                    .clone()
                    .unwrap_or_else(|| (json!({}), Owners::default()));
                match owners.apply(&current, &sent, manager, force) {
                    Ok(mut applied) => {
                        applied["apiVersion"] = json!(resource.api_version());
                        applied["kind"] = json!(resource.kind);
                        applied["metadata"]["name"] = json!(key.name);
                        self.store_object_with(
                            &mut store,
                            resource,
                            &key,
                            old.as_ref().map(|(v, _)| v),
                            applied,
                            owners,
                        );
                        return json_response(store.objects[&key].0.to_string());
                    }
                    Err(conflicts) => {
                        return status(
                            StatusCode::CONFLICT,
                            "Conflict",
                            &format!(
                                "Apply failed with {} conflict(s): {}",
                                conflicts.len(),
                                conflicts.join(", ")
                            ),
                        );
                    }
                }
            }
            (_, None) => return missing(resource, &key.name),
            ("update", Some((current, _))) => {
                let sent_version = sent
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str);
                let stored_version = current
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str);
                if sent_version.is_some_and(|v| Some(v) != stored_version) {
                    return status(
                        StatusCode::CONFLICT,
                        "Conflict",
                        &format!(
                            "Operation cannot be fulfilled on {} \"{}\": the object has been modified; please apply your changes to the latest version and try again",
                            resource.qualified(),
                            key.name
                        ),
                    );
                }
                sent
            }
            (_, Some((current, _)))
                if content_type.starts_with("application/merge-patch")
                    || content_type.starts_with("application/strategic-merge-patch") =>
            {
                let mut patched = current.clone();
                merge_patch(&mut patched, &sent);
                patched
            }
            _ => {
                return status(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "UnsupportedMediaType",
                    "unsupported patch type",
                );
            }
        };
        // The status subresource writes status only; the object never does.
        if resource.has_status
            && let Some((current, _)) = &old
        {
            if status_only {
                let mut updated = current.clone();
                updated["status"] = new.get("status").cloned().unwrap_or(Value::Null);
                new = updated;
            } else {
                match current.get("status") {
                    Some(status) => new["status"] = status.clone(),
                    None => {
                        if let Some(map) = new.as_object_mut() {
                            map.remove("status");
                        }
                    }
                }
            }
        }
        new["metadata"]["namespace"] = json!(key.namespace);
        if !resource.namespaced
            && let Some(metadata) = new["metadata"].as_object_mut()
        {
            metadata.remove("namespace");
        }
        self.store_object(
            &mut store,
            resource,
            &key,
            old.as_ref().map(|(v, _)| v),
            new,
            manager,
        );
        let code = if old.is_none() {
            StatusCode::CREATED
        } else {
            StatusCode::OK
        };
        (
            code,
            [(CONTENT_TYPE, "application/json")],
            store.objects[&key].0.to_string(),
        )
            .into_response()
    }

    /// Why a write into `namespace` is refused: it does not exist, or it is
    /// terminating.
    fn check_namespace(&self, store: &Store, namespace: &str) -> Option<Response> {
        let key = Key {
            group: String::new(),
            plural: "namespaces".into(),
            namespace: String::new(),
            name: namespace.to_owned(),
        };
        match store.objects.get(&key) {
            None => Some(status(
                StatusCode::NOT_FOUND,
                "NotFound",
                &format!("namespaces \"{namespace}\" not found"),
            )),
            Some((ns, _)) if ns.pointer("/metadata/deletionTimestamp").is_some() => Some(status(
                StatusCode::FORBIDDEN,
                "Forbidden",
                &format!(
                    "unable to create new content in namespace {namespace} because it is being terminated"
                ),
            )),
            Some(_) => None,
        }
    }

    /// Stores `new` as written by `manager` (not an apply).
    fn store_object(
        &self,
        store: &mut Store,
        resource: &Resource,
        key: &Key,
        old: Option<&Value>,
        new: Value,
        manager: &str,
    ) {
        let mut owners = store
            .objects
            .get(key)
            .map(|(_, o)| o.clone())
            .unwrap_or_else(|| Owners::of(&new));
        owners.update(old.unwrap_or(&json!({})), &new, manager);
        self.store_object_with(store, resource, key, old, new, owners);
    }

    fn store_object_with(
        &self,
        store: &mut Store,
        resource: &Resource,
        key: &Key,
        old: Option<&Value>,
        mut new: Value,
        owners: Owners,
    ) {
        store.revision += 1;
        let revision = store.revision;
        let time = now();
        let kept = |field: &str| {
            old.and_then(|o| o.pointer(&format!("/metadata/{field}")))
                .cloned()
        };
        let metadata = &mut new["metadata"];
        metadata["resourceVersion"] = json!(revision.to_string());
        metadata["uid"] = kept("uid").unwrap_or_else(|| json!(format!("uid-{revision}")));
        metadata["creationTimestamp"] = kept("creationTimestamp").unwrap_or_else(|| json!(time));
        owners.write(&mut new, &resource.api_version(), &time);
        let kind = if old.is_some() { "MODIFIED" } else { "ADDED" };
        let object = Arc::new(new.clone());
        store.objects.insert(key.clone(), (new, owners));
        self.record(store, key, kind, object);
    }

    fn record(&self, store: &mut Store, key: &Key, kind: &'static str, object: Arc<Value>) {
        let change = Change {
            revision: store.revision,
            group: key.group.clone(),
            plural: key.plural.clone(),
            namespace: key.namespace.clone(),
            kind,
            object,
        };
        store.log.push(change.clone());
        let _ = self.changes.send(change);
    }

    fn remove(&self, store: &mut Store, _resource: &Resource, key: &Key) {
        if let Some((mut object, _)) = store.objects.remove(key) {
            store.revision += 1;
            object["metadata"]["resourceVersion"] = json!(store.revision.to_string());
            self.record(store, key, "DELETED", Arc::new(object));
        }
    }

    /// Deletes an object; a namespace terminates first (marked, refusing
    /// new objects), then takes its objects with it.
    fn delete(self: Arc<Self>, resource: &Resource, key: &Key) {
        if !(resource.group.is_empty() && resource.plural == "namespaces") {
            self.remove(&mut lock(&self.store), resource, key);
            return;
        }
        {
            let mut store = lock(&self.store);
            let Some((mut namespace, owners)) = store.objects.get(key).cloned() else {
                return;
            };
            namespace["metadata"]["deletionTimestamp"] = json!(now());
            namespace["status"]["phase"] = json!("Terminating");
            self.store_object_with(
                &mut store,
                resource,
                key,
                Some(&namespace.clone()),
                namespace,
                owners,
            );
        }
        let delay = lock(&self.faults).terminating;
        let (resource, key) = (resource.clone(), key.clone());
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let mut store = lock(&self.store);
            let contents: Vec<Key> = store
                .objects
                .keys()
                .filter(|k| k.namespace == key.name)
                .cloned()
                .collect();
            for content in contents {
                self.remove(&mut store, &resource, &content);
            }
            self.remove(&mut store, &resource, &key);
        });
    }
}
