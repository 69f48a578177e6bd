//! A stand-in for the parts of kube-apiserver that `kubectl hpa-lint` and the
//! webhook's watchers read, served over HTTP on loopback: `/version`,
//! discovery (`/apis`, `/apis/{group}/{version}` with `/scale`
//! subresources), and lists, cluster wide or in a namespace, with the list
//! protocol of the real server: `limit` and `continue` pages with
//! `remainingItemCount`, `labelSelector` (equality terms), a `403 Forbidden`
//! `Status` for a resource the caller may not list, `404 NotFound` for
//! anything not served (an absent CRD), `410 Gone` for an expired `continue`
//! token, and slow pages; single objects (`get`, `404 NotFound` for one
//! that is not there); and watches, which stay open and silent (nothing
//! changes). Items are rendered to JSON once, up front, so the server costs
//! little next to the client it measures. [`hostile`] answers as a broken or
//! malicious server would, path by path, and can require credentials.
//! [`Cluster::start`] serves plain HTTP; [`Cluster::start_tls`] HTTPS with a
//! certificate authority made for the run ([`tls`]), whose client
//! certificates are credentials too. [`proxy`] is a proxy to reach it by.
//!
//! For tests and benchmarks only.

/// A stand-in whose objects change, for the webhook's reporting mode.
pub mod live;

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::service::TowerToHyperService;
use serde_json::{Map, Value, json};

pub mod hostile;
pub mod proxy;
pub mod tls;

/// One object, ready to serve.
struct Item {
    namespace: String,
    name: String,
    labels: Map<String, Value>,
    /// The object without `apiVersion` and `kind`, as list items come.
    json: String,
}

/// A served resource.
struct Served {
    group: String,
    version: String,
    kind: String,
    plural: String,
    namespaced: bool,
    scalable: bool,
    items: Vec<Item>,
}

/// What the stand-in serves and how it misbehaves.
pub struct Cluster {
    version: String,
    served: Vec<Served>,
    /// `plural.group` of resources whose lists answer 403.
    forbidden: HashSet<String>,
    /// Delay of every page after the first, by plural.
    slow: HashMap<String, Duration>,
    /// Plurals whose first `continue` token has expired (410 once).
    expire: HashSet<String>,
    /// Whether discovery (`/apis`) answers 403.
    hide_discovery: bool,
    /// Paths answered badly, and the token required.
    hostile: hostile::Rules,
}

/// The stand-in, listening.
pub struct Running {
    /// Where it listens (127.0.0.1).
    pub address: SocketAddr,
    requests: Arc<Mutex<Vec<String>>>,
    credentials: Arc<Mutex<Vec<String>>>,
    authority: Option<Arc<tls::Authority>>,
}

impl Running {
    /// Every request so far, as `path?query`, in order.
    pub fn requests(&self) -> Vec<String> {
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The credentials of every request so far, in order: `none`, or its
    /// `Authorization` header, `certificate USER` for a client certificate
    /// and `impersonate USER` for `Impersonate-User`, joined by `, `.
    pub fn credentials(&self) -> Vec<String> {
        self.credentials
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// `http://127.0.0.1:PORT`, or `https://…` when it serves TLS.
    pub fn url(&self) -> String {
        let scheme = if self.authority.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.address)
    }

    /// The certificate authority of a stand-in that serves TLS.
    pub fn authority(&self) -> Option<&tls::Authority> {
        self.authority.as_deref()
    }

    /// The kubeconfig keys of the cluster: `server`, and the CA's
    /// `certificate-authority-data` when it serves TLS, in flow style.
    pub fn cluster_keys(&self, server: &str) -> String {
        match &self.authority {
            Some(authority) => format!(
                "server: \"{server}\", certificate-authority-data: {}",
                base64(authority.ca_pem())
            ),
            None => format!("server: \"{server}\""),
        }
    }

    /// A kubeconfig for the stand-in, with `namespace` as the context's
    /// namespace.
    pub fn kubeconfig(&self, context: &str, namespace: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: {context}\nclusters:\n- name: standin\n  cluster: {{{}}}\ncontexts:\n- name: {context}\n  context: {{cluster: standin, user: auditor, namespace: {namespace}}}\nusers:\n- name: auditor\n  user: {{token: standin-token}}\n",
            self.cluster_keys(&self.url())
        )
    }
}

/// Base64, as kubeconfigs carry certificates and keys.
pub fn base64(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}

impl Cluster {
    /// A cluster that reports `git_version` (e.g. `v1.31.2`) and serves nothing yet.
    pub fn new(git_version: &str) -> Self {
        Self {
            version: git_version.to_owned(),
            served: Vec::new(),
            forbidden: HashSet::new(),
            slow: HashMap::new(),
            expire: HashSet::new(),
            hide_discovery: false,
            hostile: hostile::Rules::default(),
        }
    }

    /// Serves `objects` as a resource. `api_version` and `kind` are taken
    /// from the first object when there is one, else from the arguments.
    pub fn serve(
        &mut self,
        api_version: &str,
        kind: &str,
        plural: &str,
        namespaced: bool,
        objects: Vec<Value>,
    ) -> &mut Self {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let items = objects
            .into_iter()
            .map(|mut object| {
                if let Some(map) = object.as_object_mut() {
                    map.remove("apiVersion");
                    map.remove("kind");
                }
                let text = |field: &str| object.pointer(field).cloned().unwrap_or(Value::Null);
                Item {
                    namespace: text("/metadata/namespace")
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                    name: text("/metadata/name")
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                    labels: text("/metadata/labels")
                        .as_object()
                        .cloned()
                        .unwrap_or_default(),
                    json: object.to_string(),
                }
            })
            .collect();
        self.served.push(Served {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: kind.to_owned(),
            plural: plural.to_owned(),
            namespaced,
            scalable: false,
            items,
        });
        self
    }

    /// Marks the last served resource as having a `/scale` subresource.
    pub fn with_scale(&mut self) -> &mut Self {
        if let Some(last) = self.served.last_mut() {
            last.scalable = true;
        }
        self
    }

    /// Lists and gets of this resource answer `403 Forbidden`.
    pub fn forbid(&mut self, group: &str, plural: &str) -> &mut Self {
        self.forbidden.insert(format!("{plural}.{group}"));
        self
    }

    /// Every page of this resource after the first takes `delay`.
    pub fn slow(&mut self, plural: &str, delay: Duration) -> &mut Self {
        self.slow.insert(plural.to_owned(), delay);
        self
    }

    /// The first `continue` token of this resource has expired: `410 Gone`.
    pub fn expire_first_continue(&mut self, plural: &str) -> &mut Self {
        self.expire.insert(plural.to_owned());
        self
    }

    /// Discovery (`/apis`) answers `403 Forbidden`.
    pub fn hide_discovery(&mut self) -> &mut Self {
        self.hide_discovery = true;
        self
    }

    /// Serves plain HTTP on a free port of 127.0.0.1 until the runtime ends.
    pub async fn start(self) -> std::io::Result<Running> {
        self.listen(None).await
    }

    /// Serves HTTPS on a free port of 127.0.0.1 until the runtime ends, with
    /// a certificate authority of its own ([`Running::authority`]).
    pub async fn start_tls(self) -> std::io::Result<Running> {
        self.listen(Some(Arc::new(tls::Authority::new()))).await
    }

    async fn listen(self, authority: Option<Arc<tls::Authority>>) -> std::io::Result<Running> {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let credentials = Arc::new(Mutex::new(Vec::new()));
        let state = Arc::new(Shared {
            cluster: self,
            requests: Arc::clone(&requests),
            credentials: Arc::clone(&credentials),
            expired: Mutex::new(HashSet::new()),
        });
        let router = Router::new().fallback(answer).with_state(state);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        match &authority {
            None => {
                tokio::spawn(async move { axum::serve(listener, router).await });
            }
            Some(authority) => {
                tokio::spawn(serve_tls(listener, router, Arc::clone(authority)));
            }
        }
        Ok(Running {
            address,
            requests,
            credentials,
            authority,
        })
    }
}

/// The user of the client certificate a connection presented, verified.
#[derive(Clone)]
struct Peer(Option<String>);

/// Accepts TLS connections, each request told its connection's client
/// certificate ([`Peer`]).
async fn serve_tls(
    listener: tokio::net::TcpListener,
    router: Router,
    authority: Arc<tls::Authority>,
) {
    let acceptor = tokio_rustls::TlsAcceptor::from(authority.server_config());
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let (acceptor, router, authority) =
            (acceptor.clone(), router.clone(), Arc::clone(&authority));
        tokio::spawn(async move {
            let Ok(stream) = acceptor.accept(stream).await else {
                return;
            };
            let user = stream
                .get_ref()
                .1
                .peer_certificates()
                .and_then(|chain| chain.first())
                .and_then(|certificate| authority.user_of(certificate));
            let service = TowerToHyperService::new(router.layer(axum::Extension(Peer(user))));
            let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            let _ = builder
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

struct Shared {
    cluster: Cluster,
    requests: Arc<Mutex<Vec<String>>>,
    credentials: Arc<Mutex<Vec<String>>>,
    /// Plurals whose expired token was already refused.
    expired: Mutex<HashSet<String>>,
}

pub(crate) fn status(code: StatusCode, reason: &str, message: &str) -> Response {
    let body = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code.as_u16(),
    });
    (code, [(CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

pub(crate) fn not_found() -> Response {
    status(
        StatusCode::NOT_FOUND,
        "NotFound",
        "the server could not find the requested resource",
    )
}

pub(crate) fn json_response(body: String) -> Response {
    ([(CONTENT_TYPE, "application/json")], body).into_response()
}

async fn answer(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let uri = request.uri();
    let path = uri.path().to_owned();
    let query: HashMap<String, String> = uri
        .query()
        .map(|q| {
            q.split('&')
                .filter_map(|pair| pair.split_once('='))
                .map(|(k, v)| (k.to_owned(), decode(v)))
                .collect()
        })
        .unwrap_or_default();
    shared
        .requests
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(uri.to_string());
    let certificate = request
        .extensions()
        .get::<Peer>()
        .and_then(|peer| peer.0.clone());
    let mut carried: Vec<String> = request
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
        .into_iter()
        .collect();
    carried.extend(certificate.iter().map(|user| format!("certificate {user}")));
    carried.extend(
        request
            .headers()
            .get("impersonate-user")
            .map(|user| format!("impersonate {}", String::from_utf8_lossy(user.as_bytes()))),
    );
    shared
        .credentials
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(if carried.is_empty() {
            "none".to_owned()
        } else {
            carried.join(", ")
        });
    let cluster = &shared.cluster;
    let answered = cluster
        .hostile
        .answer(&path, request.headers(), certificate.is_some())
        .await;
    if let Some(response) = answered {
        return response;
    }
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    match segments.as_slice() {
        ["version"] => json_response(
            json!({"major": "1", "minor": cluster.version.trim_start_matches("v1.").split('.').next(), "gitVersion": cluster.version})
                .to_string(),
        ),
        ["apis"] if cluster.hide_discovery => status(
            StatusCode::FORBIDDEN,
            "Forbidden",
            "forbidden: User \"auditor\" cannot get path \"/apis\"",
        ),
        ["apis"] => json_response(cluster.groups().to_string()),
        ["apis", group, version] => cluster.resources(group, version),
        ["api", "v1", plural] => list(&shared, "", "v1", None, plural, &query).await,
        ["api", "v1", "namespaces", ns, plural] => {
            list(&shared, "", "v1", Some(ns), plural, &query).await
        }
        ["apis", group, version, plural] => {
            list(&shared, group, version, None, plural, &query).await
        }
        ["apis", group, version, "namespaces", ns, plural] => {
            list(&shared, group, version, Some(ns), plural, &query).await
        }
        ["api", "v1", "namespaces", ns, plural, name] => cluster.get("", "v1", ns, plural, name),
        ["apis", group, version, "namespaces", ns, plural, name] => {
            cluster.get(group, version, ns, plural, name)
        }
        _ => not_found(),
    }
}

/// Percent-decoding of a query value (`%3D`, `%2C`, `+`).
pub(crate) fn decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            byte => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Cluster {
    fn groups(&self) -> Value {
        let mut seen = Vec::new();
        for served in self.served.iter().filter(|s| !s.group.is_empty()) {
            if !seen.iter().any(|(g, _)| g == &served.group) {
                seen.push((served.group.clone(), served.version.clone()));
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

    fn resources(&self, group: &str, version: &str) -> Response {
        let mut resources = Vec::new();
        for served in self
            .served
            .iter()
            .filter(|s| s.group == group && s.version == version)
        {
            let verbs = json!(["get", "list", "watch"]);
            resources.push(json!({"name": served.plural, "singularName": served.kind.to_lowercase(), "namespaced": served.namespaced, "kind": served.kind, "verbs": verbs}));
            if served.scalable {
                resources.push(json!({"name": format!("{}/scale", served.plural), "singularName": "", "namespaced": served.namespaced, "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]}));
            }
        }
        if resources.is_empty() {
            return not_found();
        }
        json_response(
            json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": format!("{group}/{version}"), "resources": resources})
                .to_string(),
        )
    }

    /// One object, with its `apiVersion` and `kind` as a get answers.
    fn get(
        &self,
        group: &str,
        version: &str,
        namespace: &str,
        plural: &str,
        name: &str,
    ) -> Response {
        let Some(served) = self
            .served
            .iter()
            .find(|s| s.group == group && s.version == version && s.plural == plural)
        else {
            return not_found();
        };
        let qualified = if group.is_empty() {
            plural.to_owned()
        } else {
            format!("{plural}.{group}")
        };
        if self.forbidden.contains(&format!("{plural}.{group}")) {
            return status(
                StatusCode::FORBIDDEN,
                "Forbidden",
                &format!(
                    "{qualified} \"{name}\" is forbidden: User \"auditor\" cannot get resource \"{plural}\" in API group \"{group}\" in the namespace \"{namespace}\""
                ),
            );
        }
        let name = decode(name);
        let Some(item) = served
            .items
            .iter()
            .find(|item| item.namespace == namespace && item.name == name)
        else {
            return status(
                StatusCode::NOT_FOUND,
                "NotFound",
                &format!("{qualified} \"{name}\" not found"),
            );
        };
        let api_version = if group.is_empty() {
            version.to_owned()
        } else {
            format!("{group}/{version}")
        };
        let fields = item.json.trim_start_matches('{').trim_start();
        let separator = if fields.starts_with('}') { "" } else { "," };
        json_response(format!(
            "{{\"apiVersion\":\"{api_version}\",\"kind\":\"{}\"{separator}{fields}",
            served.kind
        ))
    }
}

/// Whether `labels` match an equality selector (`a=b,c==d,e!=f`).
pub(crate) fn selects(selector: &str, labels: &Map<String, Value>) -> bool {
    selector
        .split(',')
        .filter(|term| !term.is_empty())
        .all(|term| {
            if let Some((key, value)) = term.split_once("!=") {
                labels.get(key).and_then(Value::as_str) != Some(value)
            } else {
                let (key, value) = term
                    .split_once("==")
                    .or_else(|| term.split_once('='))
                    .unwrap_or((term, ""));
                labels.get(key).and_then(Value::as_str) == Some(value)
            }
        })
}

async fn list(
    shared: &Shared,
    group: &str,
    version: &str,
    namespace: Option<&str>,
    plural: &str,
    query: &HashMap<String, String>,
) -> Response {
    let cluster = &shared.cluster;
    let Some(served) = cluster
        .served
        .iter()
        .find(|s| s.group == group && s.version == version && s.plural == plural)
    else {
        return not_found();
    };
    let qualified = if group.is_empty() {
        plural.to_owned()
    } else {
        format!("{plural}.{group}")
    };
    if cluster.forbidden.contains(&format!("{plural}.{group}")) {
        let scope = namespace.map_or("at the cluster scope".to_owned(), |ns| {
            format!("in the namespace \"{ns}\"")
        });
        return status(
            StatusCode::FORBIDDEN,
            "Forbidden",
            &format!(
                "{qualified} is forbidden: User \"auditor\" cannot list resource \"{plural}\" in API group \"{group}\" {scope}"
            ),
        );
    }
    if query.get("watch").is_some_and(|w| w == "true" || w == "1") {
        let nothing = futures::stream::pending::<Result<Bytes, std::io::Error>>();
        return (
            [(CONTENT_TYPE, "application/json")],
            Body::from_stream(nothing),
        )
            .into_response();
    }
    let start: usize = match query.get("continue") {
        None => 0,
        Some(token) => {
            if cluster.expire.contains(plural)
                && shared
                    .expired
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(plural.to_owned())
            {
                return status(
                    StatusCode::GONE,
                    "Expired",
                    "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
                );
            }
            let Some(start) = token.strip_prefix("standin-").and_then(|s| s.parse().ok()) else {
                return status(
                    StatusCode::BAD_REQUEST,
                    "BadRequest",
                    "continue key is not valid",
                );
            };
            if let Some(delay) = cluster.slow.get(plural) {
                tokio::time::sleep(*delay).await;
            }
            start
        }
    };
    let selector = query.get("labelSelector").map_or("", String::as_str);
    let matching: Vec<&Item> = served
        .items
        .iter()
        .filter(|item| namespace.is_none_or(|ns| item.namespace == ns))
        .filter(|item| selects(selector, &item.labels))
        .collect();
    let limit = query
        .get("limit")
        .and_then(|l| l.parse::<usize>().ok())
        .filter(|l| *l > 0)
        .unwrap_or(usize::MAX);
    let end = start.saturating_add(limit).min(matching.len());
    let page = matching.get(start..end).unwrap_or_default();
    let mut metadata = json!({"resourceVersion": "4242"});
    if end < matching.len() {
        metadata["continue"] = json!(format!("standin-{end}"));
        metadata["remainingItemCount"] = json!(matching.len() - end);
    }
    let mut body = format!(
        "{{\"apiVersion\":\"{}\",\"kind\":\"{}List\",\"metadata\":{metadata},\"items\":[",
        if group.is_empty() {
            version.to_owned()
        } else {
            format!("{group}/{version}")
        },
        served.kind
    );
    for (i, item) in page.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(&item.json);
    }
    body.push_str("]}");
    json_response(body)
}
