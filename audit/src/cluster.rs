//! Talking to the API server: `/version`, discovery, paginated lists whose
//! items are cut to what the rules read while they are parsed, and single
//! objects (a replay's HPA and target).
//! Read-only: `get` and `list`, nothing else. Every request is bounded in
//! time (`--request-timeout`) and size ([`MAX_ANSWER_BYTES`]), every list in
//! pages; an answer that is not what was asked for is an error that says what
//! the server answered.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::hash::{BuildHasher as _, RandomState};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, bail};
use hpa_lint_rules::cluster::KubeVersion;
use hpa_lint_rules::controller::flags::format_duration;
use hpa_lint_rules::source::Keep;
use http::{HeaderMap, StatusCode};
use http_body_util::BodyExt as _;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{APIGroupList, APIResourceList};
use k8s_openapi::apimachinery::pkg::version::Info;
use kube::Client;
use kube::client::Body;
use serde::Deserialize;
use serde::de::{
    DeserializeOwned, DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess, SeqAccess,
    Visitor,
};
use serde_json::{Map, Value};

use crate::args::Args;
use crate::kubeconfig::{self, Chosen};
use crate::progress::Progress;
use crate::transport;

/// A resource the audit lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resource {
    /// API group, `""` for core.
    pub group: String,
    /// The version listed.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// The resource's plural, as in URLs.
    pub plural: String,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
}

impl Resource {
    /// A resource of a known group and version.
    pub fn new(api_version: &str, kind: &str, plural: &str, namespaced: bool) -> Self {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        Self {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: kind.to_owned(),
            plural: plural.to_owned(),
            namespaced,
        }
    }

    /// `group/version`, or `version` for core.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The collection's path, in one namespace or across all.
    fn path(&self, namespace: Option<&str>) -> String {
        let base = if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        };
        match namespace.filter(|_| self.namespaced) {
            Some(namespace) => format!("{base}/namespaces/{namespace}/{}", self.plural),
            None => format!("{base}/{}", self.plural),
        }
    }
}

impl fmt::Display for Resource {
    /// `deployments.apps`, as kubectl names resources.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            f.write_str(&self.plural)
        } else {
            write!(f, "{}.{}", self.plural, self.group)
        }
    }
}

/// Why a request did not give what was asked.
#[derive(Clone, Debug)]
pub enum Failure {
    /// 404 with a `Status`: the resource is not served (an absent CRD).
    Absent,
    /// 403, with the server's message.
    Forbidden(String),
    /// 410 with a `Status`: a `continue` token expired.
    Gone,
    /// No complete answer: the connection failed or the request timed out.
    Unanswered(String),
    /// Anything else, saying what the server answered.
    Failed(String),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Absent => f.write_str("not served"),
            Failure::Gone => f.write_str("the continue token expired"),
            Failure::Forbidden(message)
            | Failure::Unanswered(message)
            | Failure::Failed(message) => f.write_str(message),
        }
    }
}

/// A transport error: what failed is said only in its causes.
fn unanswered(error: &kube::Error) -> Failure {
    let mut message = error.to_string();
    let mut cause = std::error::Error::source(error);
    while let Some(error) = cause {
        let text = error.to_string();
        if !message.contains(&text) {
            message = format!("{message}: {text}");
        }
        cause = error.source();
    }
    Failure::Unanswered(message)
}

/// The most a single answer may hold. A page of 500 objects is 5 MB as a
/// cluster serves Deployments (11 KB each, managed fields and all): this
/// allows 128 KB an object, and bounds what a hostile answer costs (every
/// byte of it kept as a string, say a name, is copied a few times over).
pub const MAX_ANSWER_BYTES: usize = 64 << 20;
/// The most pages a list may take (5 million objects at 500 a page).
pub const MAX_PAGES: usize = 10_000;
/// The most objects of one list the audit holds (HPAs, the targets they
/// name, the budgets of their namespaces; about 1 KB each): three times the
/// 150,000 pods of the largest cluster Kubernetes is tested at, and an HPA
/// scales at least one pod.
pub const MAX_KEPT: usize = 500_000;

/// How often a request the server asks to retry later is tried again
/// (client-go's `maxRetries`).
const MAX_RETRIES: u32 = 10;

/// How long to wait before trying again, when the server says (client-go's
/// `checkWait`: a 429 or 5xx answer with `Retry-After` in seconds).
fn retry_after(code: StatusCode, headers: &HeaderMap) -> Option<Duration> {
    if code != StatusCode::TOO_MANY_REQUESTS && !code.is_server_error() {
        return None;
    }
    let seconds = headers.get(http::header::RETRY_AFTER)?.to_str().ok()?;
    Some(Duration::from_secs(seconds.trim().parse().ok()?))
}

/// The beginning of an answer, on one line, for an error message.
fn excerpt(text: &str) -> String {
    const SHOWN: usize = 160;
    let flat: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect();
    match flat.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("`{}…`", &flat[..cut]),
        None if flat.is_empty() => "nothing".to_owned(),
        None => format!("`{flat}`"),
    }
}

/// What a non-2xx answer says: its `Status` when it is one, else the status
/// line, where it redirects to, and the beginning of the body.
fn refusal(code: StatusCode, location: Option<&str>, body: &str) -> Failure {
    let status = serde_json::from_str::<StatusAnswer>(body)
        .ok()
        .filter(|s| s.kind == "Status");
    match (code.as_u16(), status) {
        (404, Some(_)) => Failure::Absent,
        (410, Some(_)) => Failure::Gone,
        (403, Some(status)) => Failure::Forbidden(status.message),
        (_, Some(status)) => Failure::Failed(format!("{} ({})", status.message, code.as_u16())),
        (_, None) if code.is_redirection() => Failure::Failed(format!(
            "the server answered {code}, redirecting to {}: an API server does not redirect (is the kubeconfig's server a login page or a proxy?)",
            location.map_or("nowhere".to_owned(), excerpt)
        )),
        (_, None) => Failure::Failed(format!("the server answered {code} with {}", excerpt(body))),
    }
}
/// A `Status`: how the API server says a request failed.
#[derive(Deserialize)]
struct StatusAnswer {
    kind: String,
    #[serde(default)]
    message: String,
}

/// The cluster the kubeconfig points at.
pub struct Cluster {
    client: Client,
    /// The kubeconfig context, for the report.
    pub context: String,
    /// The context's namespace.
    pub namespace: String,
    /// The API server's URL, without user information, for messages.
    server: String,
    chunk_size: u32,
    /// `--request-timeout`: `None` for no limit.
    timeout: Option<Duration>,
    progress: Arc<Progress>,
}

impl Cluster {
    /// Connects as kubectl would ([`kubeconfig::choose`]).
    pub async fn connect(args: &Args, progress: Arc<Progress>) -> Result<Self> {
        let Chosen {
            config,
            context,
            proxy,
        } = kubeconfig::choose(args).await?;
        let namespace = config.default_namespace.clone();
        let mut server = kubeconfig::redacted(&config.cluster_url);
        if let Some(proxy) = &proxy {
            server = format!("{server} through the proxy {proxy}");
        }
        // Without kube's retries (429, 503 and 504 fifteen times over
        // minutes, the error unsaid): requests are retried here as client-go
        // retries them.
        let client = transport::client(config, proxy.as_ref())?;
        Ok(Self {
            client,
            context,
            namespace,
            server,
            chunk_size: args.chunk_size,
            timeout: (args.request_timeout > 0)
                .then(|| Duration::from_millis(args.request_timeout.unsigned_abs())),
            progress,
        })
    }

    /// GETs `uri`: the whole answer, status line to last byte, within the
    /// request timeout (a server that trickles a byte at a time gets no
    /// longer), and at most [`MAX_ANSWER_BYTES`] of it. As client-go, a 429
    /// or 5xx answer with `Retry-After` is tried again after that many
    /// seconds, [`MAX_RETRIES`] times at most, within the same timeout;
    /// nothing else is.
    async fn get(&self, uri: &str) -> Result<String, Failure> {
        let exchange = async {
            let mut retries = 0;
            loop {
                let (code, headers, bytes) = self.exchange(uri).await?;
                match retry_after(code, &headers) {
                    Some(wait) if retries < MAX_RETRIES => {
                        retries += 1;
                        tokio::time::sleep(wait).await;
                    }
                    _ => return Ok((code, headers, bytes)),
                }
            }
        };
        let (code, headers, bytes) = match self.timeout {
            None => exchange.await?,
            Some(limit) => tokio::time::timeout(limit, exchange).await.map_err(|_| {
                Failure::Unanswered(format!(
                    "no complete answer within {} (--request-timeout)",
                    format_duration(i64::try_from(limit.as_millis()).unwrap_or(i64::MAX))
                ))
            })??,
        };
        let text = String::from_utf8(bytes).map_err(|_| {
            Failure::Failed("the server answered with text that is not UTF-8".to_owned())
        })?;
        if code.is_success() {
            Ok(text)
        } else {
            let location = headers
                .get(http::header::LOCATION)
                .map(|l| String::from_utf8_lossy(l.as_bytes()).into_owned());
            Err(refusal(code, location.as_deref(), &text))
        }
    }

    /// One GET of `uri`, its body read to the end or to [`MAX_ANSWER_BYTES`].
    async fn exchange(&self, uri: &str) -> Result<(StatusCode, HeaderMap, Vec<u8>), Failure> {
        let request = http::Request::get(uri)
            .body(Body::from(Vec::new()))
            .map_err(|e| Failure::Failed(e.to_string()))?;
        let response = self
            .client
            .send(request)
            .await
            .map_err(|e| unanswered(&e))?;
        let (parts, mut body) = response.into_parts();
        let mut bytes = Vec::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| unanswered(&e))?;
            if let Some(data) = frame.data_ref() {
                if bytes.len() + data.len() > MAX_ANSWER_BYTES {
                    return Err(Failure::Failed(format!(
                        "the answer is larger than {} MiB: lower --chunk-size (now {})",
                        MAX_ANSWER_BYTES >> 20,
                        self.chunk_size
                    )));
                }
                bytes.extend_from_slice(data);
            }
        }
        Ok((parts.status, parts.headers, bytes))
    }

    /// GETs `uri` and reads the answer as a `T`.
    async fn get_json<T: DeserializeOwned>(&self, uri: &str, what: &str) -> Result<T, Failure> {
        let text = self.get(uri).await?;
        serde_json::from_str(&text).map_err(|error| {
            Failure::Failed(format!(
                "the server answered something that is not {what} ({error}): {}",
                excerpt(&text)
            ))
        })
    }

    /// The Kubernetes release the API server reports, when it is one the
    /// rules know. No answer at all ends the run: nothing else would come.
    pub async fn version(&self) -> Result<Option<KubeVersion>> {
        match self.get_json::<Info>("/version", "a version").await {
            Ok(info) => Ok(info.git_version.parse().ok()),
            Err(Failure::Unanswered(message)) => {
                bail!("cannot read /version from {}: {message}", self.server)
            }
            Err(_) => Ok(None),
        }
    }

    /// The preferred version of each served API group.
    pub async fn groups(&self) -> Result<Vec<(String, String)>, Failure> {
        let list: APIGroupList = self.get_json("/apis", "an APIGroupList").await?;
        Ok(list
            .groups
            .into_iter()
            .filter_map(|g| {
                let version = g
                    .preferred_version
                    .or_else(|| g.versions.into_iter().next())?;
                Some((g.name, version.version))
            })
            .collect())
    }

    /// The resource of `kind` in `group/version`, and whether it has a
    /// `/scale` subresource; `None` when the group version does not serve it.
    pub async fn find_kind(
        &self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> Result<Option<(Resource, bool)>, Failure> {
        let list: APIResourceList = self
            .get_json(&format!("/apis/{group}/{version}"), "an APIResourceList")
            .await?;
        let Some(found) = list
            .resources
            .iter()
            .find(|r| r.kind == kind && !r.name.contains('/'))
        else {
            return Ok(None);
        };
        let scale = format!("{}/scale", found.name);
        let scalable = list.resources.iter().any(|r| r.name == scale);
        let resource = Resource {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: kind.to_owned(),
            plural: found.name.clone(),
            namespaced: found.namespaced,
        };
        Ok(Some((resource, scalable)))
    }

    /// The object `name` of `resource` in `namespace`, whole, as `get`
    /// reads it; `Failure::Absent` when the server has no such object (404).
    pub async fn get_object(
        &self,
        resource: &Resource,
        namespace: &str,
        name: &str,
    ) -> Result<Value, Failure> {
        let uri = format!("{}/{}", resource.path(Some(namespace)), encode(name));
        let object: Value = self.get_json(&uri, "an object").await?;
        match object.get("kind").and_then(Value::as_str) {
            Some(kind) if kind == resource.kind => Ok(object),
            Some("Status") => Err(Failure::Failed(format!(
                "the server answered a Status, not a {}: {}",
                resource.kind,
                object["message"].as_str().unwrap_or("(no message)")
            ))),
            Some(kind) => Err(Failure::Failed(format!(
                "the server answered a {kind}, not a {}",
                resource.kind
            ))),
            None => Err(Failure::Failed(format!(
                "the server's answer is not a {}: it has no `kind`; it begins {}",
                resource.kind,
                excerpt(&object.to_string())
            ))),
        }
    }

    /// Every object of `resource` (in `namespace` when it is namespaced and
    /// one is given, with labels matching `selector`), cut to `keep` while it
    /// is parsed, as `take` turns it into what the audit holds (`None` drops
    /// it), page by page: a list never holds more than a page of parsed
    /// objects. Lists with `limit` and `continue`; a list whose `continue`
    /// token expired (410) starts over, twice at most. A list that would not
    /// end (a `continue` token or an object given twice, more than
    /// [`MAX_PAGES`] pages or [`MAX_KEPT`] objects held) fails. Also returns
    /// how many objects were listed in all.
    pub async fn list<T>(
        &self,
        resource: &Resource,
        namespace: Option<&str>,
        selector: Option<&str>,
        keep: &'static Keep,
        take: &(dyn Fn(Value) -> Option<T> + Sync),
    ) -> Result<(Vec<T>, usize), Failure> {
        let list_kind = format!("{}List", resource.kind);
        let mut restarts = 0;
        'list: loop {
            let mut objects = Vec::new();
            let mut token: Option<String> = None;
            let mut tokens = HashSet::new();
            // Hashes of `namespace/name`, 8 bytes an object however many.
            let mut identities = HashSet::new();
            let hasher = RandomState::new();
            let mut read = 0;
            for page_number in 1.. {
                if page_number > MAX_PAGES {
                    return Err(Failure::Failed(format!(
                        "the list did not end after {MAX_PAGES} pages of at most {} objects",
                        self.chunk_size
                    )));
                }
                let mut query = Vec::new();
                if self.chunk_size > 0 {
                    query.push(format!("limit={}", self.chunk_size));
                }
                query.extend(
                    token
                        .iter()
                        .map(|token| format!("continue={}", encode(token))),
                );
                query
                    .extend(selector.map(|selector| format!("labelSelector={}", encode(selector))));
                let mut uri = resource.path(namespace);
                if !query.is_empty() {
                    uri = format!("{uri}?{}", query.join("&"));
                }
                let text = match self.get(&uri).await {
                    Ok(text) => text,
                    Err(Failure::Gone) if token.is_some() && restarts < 2 => {
                        restarts += 1;
                        continue 'list;
                    }
                    Err(failure) => return Err(failure),
                };
                let page = Page::parse(&text, &list_kind, keep)
                    .map_err(|error| error.failure(&list_kind, &text))?;
                let next = page.next.filter(|next| !next.is_empty());
                if let Some(next) = &next
                    && !tokens.insert(next.clone())
                {
                    return Err(Failure::Failed(format!(
                        "the server gave the continue token {} a second time (page {page_number}): the list would never end",
                        excerpt(next)
                    )));
                }
                read += page.items.len();
                self.progress.update(&resource.plural, read, page.remaining);
                for mut item in page.items {
                    // A consistent list (one snapshot, page after page) has
                    // each object once: one seen again means it loops.
                    let identity = ["namespace", "name"]
                        .map(|field| item["metadata"][field].as_str().unwrap_or_default());
                    if !identity[1].is_empty() && !identities.insert(hasher.hash_one(identity)) {
                        return Err(Failure::Failed(format!(
                            "the server listed {} twice (page {page_number}): the list repeats itself",
                            excerpt(&identity.join("/"))
                        )));
                    }
                    // List items come without apiVersion and kind.
                    if let Some(map) = item.as_object_mut() {
                        map.insert("apiVersion".into(), resource.api_version().into());
                        map.insert("kind".into(), resource.kind.clone().into());
                    }
                    objects.extend(take(item));
                }
                if objects.len() > MAX_KEPT {
                    return Err(Failure::Failed(format!(
                        "the server listed more than {MAX_KEPT} objects the audit would hold"
                    )));
                }
                match next {
                    Some(next) => token = Some(next),
                    None => return Ok((objects, read)),
                }
            }
        }
    }
}

/// Percent-encodes a query value.
fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// One page of a list.
struct Page {
    items: Vec<Value>,
    next: Option<String>,
    remaining: Option<usize>,
}

#[derive(Deserialize)]
struct ListMeta {
    #[serde(rename = "continue")]
    next: Option<String>,
    #[serde(rename = "remainingItemCount")]
    remaining: Option<usize>,
}

/// Why an answer is not the page of a list asked for.
#[derive(Debug, PartialEq)]
enum NotAPage {
    /// A `Status` (with its message), as a server says something failed.
    Status(Option<String>),
    /// An object of another kind.
    Kind(String),
    /// Not an object with a `kind` and `items` that are objects.
    Malformed(String),
}

impl NotAPage {
    /// What to tell about `answer`, which is not a `list_kind`.
    fn failure(self, list_kind: &str, answer: &str) -> Failure {
        Failure::Failed(match self {
            NotAPage::Status(message) => format!(
                "the server answered a Status, not a {list_kind}: {}",
                message.as_deref().unwrap_or("(no message)")
            ),
            NotAPage::Kind(kind) => format!("the server answered a {kind}, not a {list_kind}"),
            NotAPage::Malformed(error) => format!(
                "the server's answer is not a {list_kind}: {error}; it begins {}",
                excerpt(answer)
            ),
        })
    }
}

impl Page {
    /// Reads a page of a list of `kind` (e.g. `DeploymentList`): an object
    /// of that kind with `items`, each an object, and no key twice.
    fn parse(text: &str, kind: &str, keep: &'static Keep) -> Result<Self, NotAPage> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let answer = PageSeed(keep)
            .deserialize(&mut deserializer)
            .and_then(|answer| deserializer.end().map(|()| answer))
            .map_err(|error| NotAPage::Malformed(error.to_string()))?;
        match answer.kind.as_deref() {
            Some(found) if found == kind => {}
            Some("Status") => return Err(NotAPage::Status(answer.message)),
            Some(other) => return Err(NotAPage::Kind(other.to_owned())),
            None => return Err(NotAPage::Malformed("it has no `kind`".to_owned())),
        }
        let items = answer
            .items
            .ok_or_else(|| NotAPage::Malformed("it has no `items`".to_owned()))?;
        Ok(Page {
            items: items.unwrap_or_default(),
            next: answer.meta.next,
            remaining: answer.meta.remaining,
        })
    }
}

/// An answer to a list request, before its kind is checked.
struct Answer {
    kind: Option<String>,
    /// A `Status`'s message.
    message: Option<String>,
    /// `items`, when given (`null` is `Some(None)`).
    items: Option<Option<Vec<Value>>>,
    meta: ListMeta,
}

struct PageSeed(&'static Keep);

impl<'de> DeserializeSeed<'de> for PageSeed {
    type Value = Answer;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Answer, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for PageSeed {
    type Value = Answer;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Answer, A::Error> {
        let mut seen = HashSet::new();
        let mut answer = Answer {
            kind: None,
            message: None,
            items: None,
            meta: ListMeta {
                next: None,
                remaining: None,
            },
        };
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if !seen.insert(key.clone()) {
                return Err(A::Error::custom(format_args!("`{key}` is given twice")));
            }
            match &*key {
                "kind" => answer.kind = map.next_value()?,
                "message" => {
                    answer.message = map.next_value::<Value>()?.as_str().map(str::to_owned)
                }
                "metadata" => answer.meta = map.next_value()?,
                "items" => answer.items = Some(map.next_value_seed(Items(self.0))?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(answer)
    }
}

/// `items` (or `null`), each an object cut to a [`Keep`].
struct Items(&'static Keep);

impl<'de> DeserializeSeed<'de> for Items {
    type Value = Option<Vec<Value>>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Items {
    type Value = Option<Vec<Value>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of objects")
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(Item {
            keep: self.0,
            index: items.len(),
        })? {
            items.push(item);
        }
        Ok(Some(items))
    }
}

/// One of `items`: an object, cut to a [`Keep`].
struct Item {
    keep: &'static Keep,
    index: usize,
}

impl<'de> DeserializeSeed<'de> for Item {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Item {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "items[{}] to be an object", self.index)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Value, A::Error> {
        Pruned(self.keep).visit_map(map)
    }
}

/// A JSON value with only what a [`Keep`] selects: what it drops is skipped
/// by the parser, never built (an 11 KB Deployment becomes its few hundred
/// bytes of containers and resources).
struct Pruned(&'static Keep);

impl<'de> DeserializeSeed<'de> for Pruned {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        match self.0 {
            Keep::All => Value::deserialize(deserializer),
            _ => deserializer.deserialize_any(self),
        }
    }
}

impl<'de> Visitor<'de> for Pruned {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match self.0.field(&key) {
                Some(keep) => {
                    let value = map.next_value_seed(Pruned(keep))?;
                    out.insert(key.into_owned(), value);
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(out))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let item = self.0.item();
        let mut out = Vec::new();
        while let Some(value) = seq.next_element_seed(Pruned(item))? {
            out.push(value);
        }
        Ok(Value::Array(out))
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(v.into())
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use hpa_lint_rules::reads::WORKLOAD_FIELDS;
    use serde_json::json;

    use super::*;

    #[test]
    fn items_are_cut_while_parsed_as_keep_prunes_them() {
        let deployment = json!({
            "metadata": {"name": "web", "namespace": "shop", "managedFields": [{"manager": "kubectl"}],
                          "annotations": {"a": "b", "hpa-lint.io/ignore.x": "why"}},
            "spec": {"replicas": 2, "strategy": {"type": "Recreate"},
                     "template": {"spec": {"containers": [{"name": "web", "env": [], "resources": {"requests": {"cpu": "1"}}}]}}},
            "status": {"replicas": 2},
        });
        let text = json!({"kind": "DeploymentList", "metadata": {"continue": "next", "remainingItemCount": 7}, "items": [deployment]}).to_string();
        let page = Page::parse(&text, "DeploymentList", &WORKLOAD_FIELDS).unwrap();
        assert_eq!(page.items, [WORKLOAD_FIELDS.prune(deployment)]);
        assert_eq!(
            (page.next.as_deref(), page.remaining),
            (Some("next"), Some(7))
        );
        let empty = Page::parse(
            r#"{"kind": "DeploymentList", "metadata": {}, "items": null}"#,
            "DeploymentList",
            &WORKLOAD_FIELDS,
        )
        .unwrap();
        assert!(empty.items.is_empty() && empty.next.is_none());
    }

    #[test]
    fn a_page_must_be_a_list_of_the_kind_asked_with_objects_for_items() {
        let malformed = |message: &str| NotAPage::Malformed(message.to_owned());
        let cases = [
            (
                r#"{"kind": "Status", "message": "etcd is down", "items": []}"#,
                NotAPage::Status(Some("etcd is down".to_owned())),
            ),
            (
                r#"{"kind": "PodList", "items": []}"#,
                NotAPage::Kind("PodList".to_owned()),
            ),
            (r#"{"items": []}"#, malformed("it has no `kind`")),
            (
                r#"{"kind": "DeploymentList", "metadata": {}}"#,
                malformed("it has no `items`"),
            ),
            (
                r#"{"kind": "DeploymentList", "items": [{}], "items": []}"#,
                malformed("`items` is given twice at line 1 column 49"),
            ),
            (
                r#"{"kind": "DeploymentList", "items": [{}, 1, "x", null]}"#,
                malformed(
                    "invalid type: integer `1`, expected items[1] to be an object at line 1 column 42",
                ),
            ),
            (
                r#"{"kind": "DeploymentList", "items": [null]}"#,
                malformed(
                    "invalid type: null, expected items[0] to be an object at line 1 column 41",
                ),
            ),
            (
                r#"{"kind": "DeploymentList", "items": []} {}"#,
                malformed("trailing characters at line 1 column 41"),
            ),
        ];
        let found: Vec<NotAPage> = cases
            .iter()
            .map(|(text, _)| {
                Page::parse(text, "DeploymentList", &WORKLOAD_FIELDS)
                    .err()
                    .unwrap()
            })
            .collect();
        let expected: Vec<NotAPage> = cases.into_iter().map(|(_, error)| error).collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn refusals_say_what_the_server_answered() {
        let status = |code: u16, body: &str, location: Option<&str>| {
            refusal(http::StatusCode::from_u16(code).unwrap(), location, body).to_string()
        };
        let forbidden = r#"{"kind": "Status", "message": "pods is forbidden", "code": 403}"#;
        assert_eq!(status(403, forbidden, None), "pods is forbidden");
        assert!(matches!(
            refusal(http::StatusCode::NOT_FOUND, None, r#"{"kind": "Status"}"#),
            Failure::Absent
        ));
        assert_eq!(
            status(302, "", Some("https://login.example.com/sso")),
            "the server answered 302 Found, redirecting to `https://login.example.com/sso`: an API server does not redirect (is the kubeconfig's server a login page or a proxy?)"
        );
        assert_eq!(
            status(404, "<html>\n<body>Not  here</body>\n</html>", None),
            "the server answered 404 Not Found with `<html> <body>Not here</body> </html>`"
        );
        assert_eq!(
            status(502, &"x".repeat(500), None),
            format!(
                "the server answered 502 Bad Gateway with `{}…`",
                "x".repeat(160)
            )
        );
    }

    #[test]
    fn paths_follow_the_api_layout() {
        let deployments = Resource::new("apps/v1", "Deployment", "deployments", true);
        assert_eq!(
            deployments.path(Some("shop")),
            "/apis/apps/v1/namespaces/shop/deployments"
        );
        assert_eq!(deployments.path(None), "/apis/apps/v1/deployments");
        let services = Resource::new(
            "apiregistration.k8s.io/v1",
            "APIService",
            "apiservices",
            false,
        );
        assert_eq!(
            services.path(Some("shop")),
            "/apis/apiregistration.k8s.io/v1/apiservices"
        );
        let ranges = Resource::new("v1", "LimitRange", "limitranges", true);
        assert_eq!(
            ranges.path(Some("shop")),
            "/api/v1/namespaces/shop/limitranges"
        );
        assert_eq!(ranges.to_string(), "limitranges");
        assert_eq!(
            encode("team=shop,tier!=batch"),
            "team%3Dshop%2Ctier%21%3Dbatch"
        );
    }
}
