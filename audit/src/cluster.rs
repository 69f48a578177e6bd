//! Talking to the API server: the kubeconfig, `/version`, discovery, and
//! paginated lists whose items are cut to what the rules read while they are
//! parsed. Read-only: `get` and `list`, nothing else.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use anyhow::{Context as _, Result};
use hpa_lint_rules::cluster::KubeVersion;
use hpa_lint_rules::source::Keep;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::args::Args;
use crate::progress::Progress;

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

/// Why a list did not give the objects.
#[derive(Clone, Debug)]
pub enum Failure {
    /// 404: the resource is not served (an absent CRD): there are none.
    Absent,
    /// 403, with the server's message.
    Forbidden(String),
    /// Anything else.
    Failed(String),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Absent => f.write_str("not served"),
            Failure::Forbidden(message) | Failure::Failed(message) => f.write_str(message),
        }
    }
}

fn failure(error: kube::Error) -> Failure {
    match error {
        kube::Error::Api(status) if status.code == 404 => Failure::Absent,
        kube::Error::Api(status) if status.code == 403 => Failure::Forbidden(status.message),
        kube::Error::Api(status) => {
            Failure::Failed(format!("{} ({})", status.message, status.code))
        }
        // Transport errors say what failed only in their causes.
        other => {
            let mut message = other.to_string();
            let mut cause = std::error::Error::source(&other);
            while let Some(error) = cause {
                let text = error.to_string();
                if !message.contains(&text) {
                    message = format!("{message}: {text}");
                }
                cause = error.source();
            }
            Failure::Failed(message)
        }
    }
}

/// The cluster the kubeconfig points at.
pub struct Cluster {
    client: Client,
    /// The kubeconfig context, for the report.
    pub context: String,
    /// The context's namespace.
    pub namespace: String,
    chunk_size: u32,
    progress: Arc<Progress>,
}

/// Whether the user has a kubeconfig file, as kubectl looks for one.
fn has_kubeconfig() -> bool {
    std::env::var_os("KUBECONFIG").is_some_and(|v| !v.is_empty())
        || std::env::var_os("HOME")
            .is_some_and(|home| std::path::Path::new(&home).join(".kube/config").is_file())
}

impl Cluster {
    /// Connects as kubectl would: `--kubeconfig`, else `$KUBECONFIG` or
    /// `~/.kube/config`, else the pod's service account; `--context`,
    /// `--cluster` and `--user` pick from the kubeconfig.
    pub async fn connect(args: &Args, progress: Arc<Progress>) -> Result<Self> {
        let options = KubeConfigOptions {
            context: args.context.clone(),
            cluster: args.cluster.clone(),
            user: args.user.clone(),
        };
        let kubeconfig = match &args.kubeconfig {
            Some(path) => Some(
                Kubeconfig::read_from(path)
                    .with_context(|| format!("reading kubeconfig {}", path.display()))?,
            ),
            None if has_kubeconfig() => Some(Kubeconfig::read().context("reading kubeconfig")?),
            None => None,
        };
        let (config, context) = match kubeconfig {
            Some(kubeconfig) => {
                let context = options
                    .context
                    .clone()
                    .or_else(|| kubeconfig.current_context.clone())
                    .unwrap_or_default();
                let config = Config::from_custom_kubeconfig(kubeconfig, &options)
                    .await
                    .context("loading the kubeconfig context")?;
                (config, context)
            }
            None => (
                Config::incluster()
                    .context("no kubeconfig ($KUBECONFIG, ~/.kube/config) and not in a pod")?,
                "in-cluster".to_owned(),
            ),
        };
        let namespace = config.default_namespace.clone();
        Ok(Self {
            client: Client::try_from(config).context("configuring the client")?,
            context,
            namespace,
            chunk_size: args.chunk_size,
            progress,
        })
    }

    /// The Kubernetes release the API server reports, when it is one the
    /// rules know.
    pub async fn version(&self) -> Option<KubeVersion> {
        let info = self.client.apiserver_version().await.ok()?;
        info.git_version.parse().ok()
    }

    /// The preferred version of each served API group.
    pub async fn groups(&self) -> Result<Vec<(String, String)>, Failure> {
        let list = self.client.list_api_groups().await.map_err(failure)?;
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
        let list = self
            .client
            .list_api_group_resources(&format!("{group}/{version}"))
            .await
            .map_err(failure)?;
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

    /// Every object of `resource` (in `namespace` when it is namespaced and
    /// one is given, with labels matching `selector`), cut to `keep` while it
    /// is parsed, as `take` turns it into what the audit holds (`None` drops
    /// it), page by page: a list never holds more than a page of parsed
    /// objects. Lists with `limit` and `continue`; a list whose `continue`
    /// token expired (410) starts over, twice at most. Also returns how many
    /// objects were listed in all.
    pub async fn list<T>(
        &self,
        resource: &Resource,
        namespace: Option<&str>,
        selector: Option<&str>,
        keep: &'static Keep,
        take: &(dyn Fn(Value) -> Option<T> + Sync),
    ) -> Result<(Vec<T>, usize), Failure> {
        let mut restarts = 0;
        'list: loop {
            let mut objects = Vec::new();
            let mut token: Option<String> = None;
            let mut read = 0;
            loop {
                let mut query = Vec::new();
                if self.chunk_size > 0 {
                    query.push(format!("limit={}", self.chunk_size));
                }
                if let Some(token) = &token {
                    query.push(format!("continue={}", encode(token)));
                }
                if let Some(selector) = selector {
                    query.push(format!("labelSelector={}", encode(selector)));
                }
                let mut uri = resource.path(namespace);
                if !query.is_empty() {
                    uri = format!("{uri}?{}", query.join("&"));
                }
                let request = http::Request::get(uri)
                    .body(Vec::new())
                    .map_err(|e| Failure::Failed(e.to_string()))?;
                let text = match self.client.request_text(request).await {
                    Ok(text) => text,
                    Err(kube::Error::Api(status))
                        if status.code == 410 && token.is_some() && restarts < 2 =>
                    {
                        restarts += 1;
                        continue 'list;
                    }
                    Err(error) => return Err(failure(error)),
                };
                let page = Page::parse(&text, keep)
                    .map_err(|e| Failure::Failed(format!("reading the list: {e}")))?;
                read += page.items.len();
                self.progress.update(&resource.plural, read, page.remaining);
                for mut item in page.items {
                    // List items come without apiVersion and kind.
                    if let Some(map) = item.as_object_mut() {
                        map.insert("apiVersion".into(), resource.api_version().into());
                        map.insert("kind".into(), resource.kind.clone().into());
                    }
                    objects.extend(take(item));
                }
                match page.next {
                    Some(next) if !next.is_empty() => token = Some(next),
                    _ => return Ok((objects, read)),
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

impl Page {
    fn parse(text: &str, keep: &'static Keep) -> serde_json::Result<Self> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let page = PageSeed(keep).deserialize(&mut deserializer)?;
        deserializer.end()?;
        Ok(page)
    }
}

struct PageSeed(&'static Keep);

impl<'de> DeserializeSeed<'de> for PageSeed {
    type Value = Page;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Page, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for PageSeed {
    type Value = Page;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Page, A::Error> {
        let mut page = Page {
            items: Vec::new(),
            next: None,
            remaining: None,
        };
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match &*key {
                "metadata" => {
                    let meta: ListMeta = map.next_value()?;
                    page.next = meta.next;
                    page.remaining = meta.remaining;
                }
                "items" => page.items = map.next_value_seed(Items(self.0))?.unwrap_or_default(),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(page)
    }
}

/// `items` (or `null`), each cut to a [`Keep`].
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
        while let Some(item) = seq.next_element_seed(Pruned(self.0))? {
            items.push(item);
        }
        Ok(Some(items))
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
        let text = json!({"metadata": {"continue": "next", "remainingItemCount": 7}, "items": [deployment]}).to_string();
        let page = Page::parse(&text, &WORKLOAD_FIELDS).unwrap();
        assert_eq!(page.items, [WORKLOAD_FIELDS.prune(deployment)]);
        assert_eq!(
            (page.next.as_deref(), page.remaining),
            (Some("next"), Some(7))
        );
        let empty = Page::parse(r#"{"metadata": {}, "items": null}"#, &WORKLOAD_FIELDS).unwrap();
        assert!(empty.items.is_empty() && empty.next.is_none());
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
