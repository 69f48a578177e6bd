//! The cluster as the rules see it at admission: one kube-runtime reflector
//! store per kind (and per watched namespace), kept current by watchers, and
//! [`ClusterIndex`], which answers the rules' [`Index`] questions from them.
//! Nothing here calls the API server on the request path.
//!
//! The kinds watched are those the rules in force read ([`Kind::needed`]);
//! a kind the API server does not serve (a CRD that is not installed) is
//! looked up as unknown, and readiness does not wait for it.
//!
//! Each store keeps [`Cached`] objects: only the fields rules read, as compact
//! JSON text, parsed when a request looks one up. Measured on 10,000 typical
//! Deployments (11 KB each as served), the live heap per object was 30 KB as a
//! trimmed k8s-openapi `Deployment`, 12 KB as a pruned `DynamicObject`, 9.4 KB
//! as a pruned `serde_json::Value` (the rules' own `Object`) and 0.9 KB as
//! compact JSON text; parsing one back takes about 7 µs.

use std::borrow::Cow;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use futures::{FutureExt, StreamExt, TryStreamExt};
use hpa_lint_rules::cluster::Cluster;
use hpa_lint_rules::model::autoscaler::{AUTOSCALERS, Autoscalers, scale_target};
use hpa_lint_rules::object::{Kind as RuleKind, ObjectRef as RuleRef};
use hpa_lint_rules::reads::{LIVE_FIELDS, Needs, OBJECT_FIELDS};
use hpa_lint_rules::rules::{self, ALL};
use hpa_lint_rules::source::Keep;
use hpa_lint_rules::{Index, Lookup, Object, Origin};
use kube::api::{ApiResource, DynamicObject};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher::{self, Event, watcher};
use kube::runtime::{WatchStreamExt, reflector::store::Writer};
use kube::{Api, Client};
use serde_json::Value;

use crate::changes::Changes;
use crate::policy::Policy;

/// The kinds the webhook knows how to watch: what the rules may read. The
/// Helm chart grants get, list and watch on all of them. `APIService`s are
/// read by the live rules only, which never run at admission: they are
/// watched for the reporting mode ([`crate::report`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    HorizontalPodAutoscaler,
    Deployment,
    StatefulSet,
    ReplicaSet,
    ReplicationController,
    PodDisruptionBudget,
    LimitRange,
    VerticalPodAutoscaler,
    ScaledObject,
    Namespace,
    ApiService,
}

/// How the rules read each kind, whichever rules are enabled: a kind is
/// watched only when an enabled rule reads it.
static EVERY_READ: LazyLock<Needs> =
    LazyLock::new(|| Needs::of(ALL.iter().flat_map(|rule| rule.reads)));

impl Kind {
    /// Every kind the webhook can watch.
    pub const ALL: [Kind; 11] = [
        Kind::HorizontalPodAutoscaler,
        Kind::Deployment,
        Kind::StatefulSet,
        Kind::ReplicaSet,
        Kind::ReplicationController,
        Kind::PodDisruptionBudget,
        Kind::LimitRange,
        Kind::VerticalPodAutoscaler,
        Kind::ScaledObject,
        Kind::Namespace,
        Kind::ApiService,
    ];

    /// Group, version, kind and plural of the version the webhook watches.
    const fn gvkp(self) -> (&'static str, &'static str, &'static str, &'static str) {
        match self {
            Kind::HorizontalPodAutoscaler => (
                "autoscaling",
                "v2",
                "HorizontalPodAutoscaler",
                "horizontalpodautoscalers",
            ),
            Kind::Deployment => ("apps", "v1", "Deployment", "deployments"),
            Kind::StatefulSet => ("apps", "v1", "StatefulSet", "statefulsets"),
            Kind::ReplicaSet => ("apps", "v1", "ReplicaSet", "replicasets"),
            Kind::ReplicationController => {
                ("", "v1", "ReplicationController", "replicationcontrollers")
            }
            Kind::PodDisruptionBudget => (
                "policy",
                "v1",
                "PodDisruptionBudget",
                "poddisruptionbudgets",
            ),
            Kind::LimitRange => ("", "v1", "LimitRange", "limitranges"),
            Kind::VerticalPodAutoscaler => (
                "autoscaling.k8s.io",
                "v1",
                "VerticalPodAutoscaler",
                "verticalpodautoscalers",
            ),
            Kind::ScaledObject => ("keda.sh", "v1alpha1", "ScaledObject", "scaledobjects"),
            Kind::Namespace => ("", "v1", "Namespace", "namespaces"),
            Kind::ApiService => ("apiregistration.k8s.io", "v1", "APIService", "apiservices"),
        }
    }

    /// The kinds to watch for a policy: those the rules of `/validate` and
    /// of `/mutate` read, and HPAs (admitting a workload lints the HPAs that
    /// scale it); when `reporting`, also those the rules read of live
    /// objects.
    pub fn needed(policy: &Policy, reporting: bool) -> Vec<Kind> {
        let live = reporting.then(|| policy.live_settings(None));
        let read: Vec<RuleKind> = [&policy.settings, &policy.mutation]
            .into_iter()
            .chain(&live)
            .flat_map(|settings| rules::reads(settings).kinds())
            .collect();
        Kind::ALL
            .into_iter()
            .filter(|kind| {
                *kind == Kind::HorizontalPodAutoscaler
                    || read.iter().any(|k| k.is(kind.group(), kind.name()))
            })
            .collect()
    }

    /// The kind the webhook can watch with this group and kind (any version).
    pub fn of(group: &str, kind: &str) -> Option<Kind> {
        Kind::ALL
            .into_iter()
            .find(|k| k.group() == group && k.name() == kind)
    }

    /// The API group, e.g. `apps`.
    pub fn group(self) -> &'static str {
        self.gvkp().0
    }

    /// The kind's name, e.g. `Deployment`.
    pub fn name(self) -> &'static str {
        self.gvkp().2
    }

    /// The resource's plural, e.g. `deployments`.
    pub fn plural(self) -> &'static str {
        self.gvkp().3
    }

    /// `group/version`, or `version` for core.
    pub fn api_version(self) -> String {
        match self.gvkp() {
            ("", version, _, _) => version.to_owned(),
            (group, version, _, _) => format!("{group}/{version}"),
        }
    }

    /// Whether its objects live in namespaces.
    pub fn is_namespaced(self) -> bool {
        !matches!(self, Kind::Namespace | Kind::ApiService)
    }

    fn api_resource(self) -> ApiResource {
        let (group, version, kind, plural) = self.gvkp();
        ApiResource {
            group: group.to_owned(),
            version: version.to_owned(),
            api_version: self.api_version(),
            kind: kind.to_owned(),
            plural: plural.to_owned(),
        }
    }

    /// What is kept of the kind's objects: what the rules read of them.
    /// Managed fields and foreign annotations (often a whole
    /// `last-applied-configuration`) go.
    fn keep(self, live: bool) -> &'static Keep {
        match self {
            // Linted again, spec and all, when a workload they scale is
            // admitted; their status is for the live rules, which only the
            // reporting mode runs.
            Kind::HorizontalPodAutoscaler if live => &LIVE_FIELDS,
            Kind::HorizontalPodAutoscaler => &OBJECT_FIELDS,
            _ => EVERY_READ.keep_for(&Cluster::default(), &self.api_version(), self.name()),
        }
    }
}

/// One cached object.
#[derive(Clone, Debug)]
pub struct Cached {
    namespace: Box<str>,
    name: Box<str>,
    /// The trimmed object as compact JSON.
    json: Box<str>,
    /// For an autoscaler, a fingerprint of what it scales: `scalers_of`
    /// compares it, with no pointer to follow, and parses only the matches.
    scales: Option<u64>,
    /// An HPA's uid, which Events name (kept for HPAs only).
    uid: Option<Box<str>>,
}

/// A reference's fingerprint (`DefaultHasher::new` is keyed the same in
/// every process run, which the stores rely on only within one run).
fn fingerprint(reference: &RuleRef) -> u64 {
    let mut hasher = DefaultHasher::new();
    reference.hash(&mut hasher);
    hasher.finish()
}

impl Cached {
    /// Trims an object of `kind` as the watcher delivers it to what is
    /// kept of the kind at admission.
    pub fn new(kind: Kind, object: &DynamicObject) -> Self {
        Self::trimmed(kind, false, object)
    }

    /// [`Cached::new`], keeping an HPA's status when `live`.
    pub fn trimmed(kind: Kind, live: bool, object: &DynamicObject) -> Self {
        let uid = (kind == Kind::HorizontalPodAutoscaler)
            .then(|| object.metadata.uid.as_deref().map(Box::from))
            .flatten();
        // Serializing a `DynamicObject` cannot fail: its maps have string keys.
        let mut value = serde_json::to_value(object).unwrap_or_default();
        // List items come without apiVersion and kind.
        if let Some(map) = value.as_object_mut() {
            map.insert("apiVersion".into(), kind.api_version().into());
            map.insert("kind".into(), kind.name().into());
        }
        let value = kind.keep(live).prune(value);
        let text = |field: &str| -> Box<str> {
            value
                .pointer(&format!("/metadata/{field}"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .into()
        };
        let (namespace, name) = (text("namespace"), text("name"));
        let scales = Object::new(value.clone(), Origin::default(), &namespace)
            .and_then(|object| scale_target(&object))
            .map(|target| fingerprint(&target));
        Self {
            namespace,
            name,
            json: value.to_string().into_boxed_str(),
            scales,
            uid,
        }
    }

    /// Its namespace (empty for cluster-scoped objects).
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// An HPA's uid.
    pub fn uid(&self) -> Option<&str> {
        self.uid.as_deref()
    }

    /// The object as the rules read it; `None` if the text does not parse,
    /// which cannot happen for text this type wrote.
    pub fn object(&self) -> Option<Arc<Object>> {
        let value = serde_json::from_str(&self.json).ok()?;
        Object::new(value, Origin::default(), &self.namespace).map(Arc::new)
    }
}

impl reflector::Lookup for Cached {
    type DynamicType = Kind;

    fn kind(kind: &Kind) -> Cow<'_, str> {
        kind.gvkp().2.into()
    }

    fn group(kind: &Kind) -> Cow<'_, str> {
        kind.gvkp().0.into()
    }

    fn version(kind: &Kind) -> Cow<'_, str> {
        kind.gvkp().1.into()
    }

    fn plural(kind: &Kind) -> Cow<'_, str> {
        kind.gvkp().3.into()
    }

    fn name(&self) -> Option<Cow<'_, str>> {
        Some(Cow::Borrowed(&self.name))
    }

    fn namespace(&self) -> Option<Cow<'_, str>> {
        (!self.namespace.is_empty()).then_some(Cow::Borrowed(&self.namespace))
    }

    // Left out of the store's keys: nothing reads them, and they cost memory.
    fn resource_version(&self) -> Option<Cow<'_, str>> {
        None
    }

    fn uid(&self) -> Option<Cow<'_, str>> {
        None
    }
}

/// One store: a kind, in one namespace or (`None`) in all of them.
#[derive(Clone)]
pub struct Cache {
    kind: Kind,
    namespace: Option<String>,
    store: Store<Cached>,
    /// Set while the API server does not serve the kind (its CRD is not
    /// installed): the store then answers nothing, and readiness does not
    /// wait for it.
    absent: Arc<AtomicBool>,
    /// Whether HPAs keep their status (for the reporting mode).
    live: bool,
    /// Where changes the rules can see are noted.
    changes: Arc<Changes>,
}

impl Cache {
    /// An empty store and the writer that fills it.
    pub fn new(kind: Kind, namespace: Option<&str>) -> (Self, Writer<Cached>) {
        Self::noting(kind, namespace, false, Arc::default())
    }

    /// [`Cache::new`], keeping HPAs' status when `live`, noting changes in
    /// `changes`.
    pub fn noting(
        kind: Kind,
        namespace: Option<&str>,
        live: bool,
        changes: Arc<Changes>,
    ) -> (Self, Writer<Cached>) {
        let writer = Writer::new(kind);
        let cache = Self {
            kind,
            namespace: namespace
                .filter(|_| kind.is_namespaced())
                .map(str::to_owned),
            store: writer.as_reader(),
            absent: Arc::default(),
            live,
            changes,
        };
        (cache, writer)
    }

    /// Notes a watcher event that is about to reach the store, if the rules
    /// can see a difference: a new object, one whose kept fields changed, a
    /// deleted one, or a whole list (after a restart of the watch).
    pub fn note(&self, event: &Event<Cached>) {
        let touched = match event {
            Event::Apply(object) => {
                let old = self.get(&object.namespace, &object.name);
                old.is_none_or(|old| old.json != object.json)
                    .then_some(object)
            }
            Event::Delete(object) => Some(object),
            Event::InitDone => {
                self.changes.everything();
                None
            }
            Event::Init | Event::InitApply(_) => None,
        };
        match (touched, self.kind) {
            (None, _) => {}
            (Some(_), Kind::ApiService) => self.changes.everything(),
            (Some(namespace), Kind::Namespace) => self.changes.namespace(&namespace.name),
            (Some(object), _) => self.changes.namespace(&object.namespace),
        }
    }

    /// Records whether the API server serves the kind; `true` when that
    /// changed.
    pub fn set_absent(&self, absent: bool) -> bool {
        self.absent.swap(absent, Ordering::Relaxed) != absent
    }

    fn is_absent(&self) -> bool {
        self.absent.load(Ordering::Relaxed)
    }

    fn covers(&self, namespace: &str) -> bool {
        self.namespace.as_deref().is_none_or(|ns| ns == namespace)
    }

    fn is_listed(&self) -> bool {
        // Resolves at once when the first list has been stored.
        self.store
            .wait_until_ready()
            .now_or_never()
            .is_some_and(|ready| ready.is_ok())
    }

    /// Whether lookups may trust the store: it holds its first list, and
    /// the kind is served.
    fn answers(&self) -> bool {
        self.is_listed() && !self.is_absent()
    }

    /// Whether the store has settled: listed, or known not to be served.
    fn is_settled(&self) -> bool {
        self.is_listed() || self.is_absent()
    }

    fn get(&self, namespace: &str, name: &str) -> Option<Arc<Cached>> {
        let key = ObjectRef::new_with(name, self.kind);
        let key = if self.kind.is_namespaced() {
            key.within(namespace)
        } else {
            key
        };
        self.store.get(&key)
    }
}

/// Whether a watcher failed because the API server does not serve the
/// resource: a 404 to the list or the watch request, as for a CRD that is
/// not installed. The code, not `Status::is_not_found`: a 404 may come with
/// a plain-text body (kube-client's `handle_api_errors` names a path of a
/// CRD that is not installed among them), which keeps its code but no reason.
fn is_not_served(error: &watcher::Error) -> bool {
    match error {
        watcher::Error::InitialListFailed(kube::Error::Api(status))
        | watcher::Error::WatchStartFailed(kube::Error::Api(status)) => status.code == 404,
        _ => false,
    }
}

/// Keeps a store current: lists and watches its kind (in its namespace when
/// it has one) until the process ends, retrying with backoff. While the kind
/// is not served, the store is marked absent: said once, not at every retry
/// (the CRD may be installed later, and is then picked up).
async fn watch(client: Client, cache: Cache, writer: Writer<Cached>) {
    let kind = cache.kind;
    let resource = kind.api_resource();
    let api = match &cache.namespace {
        Some(namespace) => Api::<DynamicObject>::namespaced_with(client, namespace, &resource),
        None => Api::<DynamicObject>::all_with(client, &resource),
    };
    // Small pages bound the memory a list takes before its objects are
    // trimmed: with 10,000 Deployments of 11 KB, pages of 100 / 50 / 25 gave
    // an RSS of about 40 / 34 / 31 MiB once synced (glibc keeps what the
    // parsed pages fragmented). The default (most recent) list semantic is
    // kept: API servers may serve `resourceVersion=0` lists whole from their
    // watch cache, ignoring the page size.
    let config = watcher::Config::default().page_size(50);
    let live = cache.live;
    let cache = &cache;
    let events = watcher(api, config)
        .default_backoff()
        .map_ok(move |event| to_cached(kind, live, event))
        .inspect_ok(|event| cache.note(event));
    reflector::reflector(writer, events)
        .for_each(|event| async move {
            match event {
                // A (re)list starts with `Init` before the list is asked for:
                // not yet a sign that the kind is served.
                Ok(Event::Init) => {}
                Ok(_) => {
                    if cache.set_absent(false) {
                        tracing::info!(kind = kind.name(), "now served: watching it");
                    }
                }
                Err(error) if is_not_served(&error) => {
                    if cache.set_absent(true) {
                        tracing::warn!(
                            kind = kind.name(),
                            "not served by the API server (CRD not installed?): the rules that read it say nothing about it"
                        );
                    }
                }
                Err(error) => {
                    tracing::warn!(kind = kind.name(), %error, "watch failed; retrying");
                }
            }
        })
        .await;
}

fn to_cached(kind: Kind, live: bool, event: Event<DynamicObject>) -> Event<Cached> {
    let trim = |object: &DynamicObject| Cached::trimmed(kind, live, object);
    match event {
        Event::Apply(object) => Event::Apply(trim(&object)),
        Event::Delete(object) => Event::Delete(trim(&object)),
        Event::Init => Event::Init,
        Event::InitApply(object) => Event::InitApply(trim(&object)),
        Event::InitDone => Event::InitDone,
    }
}

/// The rules' [`Index`] over the stores. Until every store has settled, and
/// for kinds or namespaces it does not watch or kinds the API server does not
/// serve, lookups answer [`Lookup::Unknown`] (and autoscalers leave them out),
/// so the cross-object rules stay silent rather than guess. With no stores at
/// all (`--offline`) that is every answer.
pub struct ClusterIndex {
    caches: Vec<Cache>,
    synced: AtomicBool,
    changes: Arc<Changes>,
}

impl ClusterIndex {
    /// An index over these stores.
    pub fn new(caches: Vec<Cache>) -> Self {
        let changes = caches
            .first()
            .map(|c| Arc::clone(&c.changes))
            .unwrap_or_default();
        Self {
            caches,
            synced: AtomicBool::new(false),
            changes,
        }
    }

    /// An index without stores: single-object rules only.
    pub fn offline() -> Self {
        Self::new(Vec::new())
    }

    /// Stores for `kinds` (in each of `namespaces`, or in all namespaces when
    /// none is given; namespaces themselves are cluster-wide), each kept
    /// current by its own watcher task; HPAs with their status when `live`.
    pub fn watch(client: &Client, kinds: &[Kind], namespaces: &[String], live: bool) -> Self {
        let changes = Arc::<Changes>::default();
        let mut caches = Vec::new();
        for &kind in kinds {
            let scopes: Vec<Option<&str>> = if namespaces.is_empty() || !kind.is_namespaced() {
                vec![None]
            } else {
                namespaces.iter().map(|ns| Some(ns.as_str())).collect()
            };
            for namespace in scopes {
                let (cache, writer) = Cache::noting(kind, namespace, live, Arc::clone(&changes));
                tokio::spawn(watch(client.clone(), cache.clone(), writer));
                caches.push(cache);
            }
        }
        Self::new(caches)
    }

    /// Whether every store has received its first full list, or learnt that
    /// its kind is not served.
    pub fn is_synced(&self) -> bool {
        if self.synced.load(Ordering::Relaxed) {
            return true;
        }
        let synced = self.caches.iter().all(Cache::is_settled);
        self.synced.store(synced, Ordering::Relaxed);
        synced
    }

    /// Waits until [`ClusterIndex::is_synced`].
    pub async fn wait_until_synced(&self) {
        // A 404 comes as a watcher error, not a store event: polled.
        while !self.is_synced() {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Where the stores note changes.
    pub fn changes(&self) -> &Arc<Changes> {
        &self.changes
    }

    /// Every cached HPA.
    pub fn hpas(&self) -> Vec<Arc<Cached>> {
        self.caches
            .iter()
            .filter(|c| c.kind == Kind::HorizontalPodAutoscaler)
            .flat_map(|c| c.store.state())
            .collect()
    }

    /// Number of cached objects per kind, for the metrics.
    pub fn sizes(&self) -> Vec<(Kind, usize)> {
        let mut sizes: Vec<(Kind, usize)> = Vec::new();
        for cache in &self.caches {
            match sizes.iter_mut().find(|(kind, _)| *kind == cache.kind) {
                Some((_, size)) => *size += cache.store.len(),
                None => sizes.push((cache.kind, cache.store.len())),
            }
        }
        sizes
    }

    /// The stores that hold the objects of `group` and `kind` in
    /// `namespace`; `None` when they cannot tell: none does, the kind is not
    /// served, or the stores have not all settled.
    fn stores_for(&self, group: &str, kind: &str, namespace: &str) -> Option<Vec<&Cache>> {
        let kind = Kind::of(group, kind)?;
        let stores: Vec<&Cache> = self
            .caches
            .iter()
            .filter(|c| c.kind == kind && c.covers(namespace))
            .collect();
        let answers = self.is_synced() && !stores.is_empty() && stores.iter().all(|c| c.answers());
        answers.then_some(stores)
    }
}

fn parse_all(cached: Vec<Arc<Cached>>) -> Vec<Arc<Object>> {
    cached.iter().filter_map(|c| c.object()).collect()
}

impl Index for ClusterIndex {
    fn get(&self, target: &RuleRef) -> Lookup<Arc<Object>> {
        let Some(stores) = self.stores_for(&target.group, &target.kind, &target.namespace) else {
            return Lookup::Unknown;
        };
        match stores
            .iter()
            .find_map(|c| c.get(&target.namespace, &target.name))
        {
            Some(cached) => cached.object().map_or(Lookup::Unknown, Lookup::Found),
            None => Lookup::Missing,
        }
    }

    /// The HPAs and, where KEDA is installed, ScaledObjects that scale
    /// `target`.
    fn scalers_of(&self, target: &RuleRef) -> Arc<Autoscalers> {
        let wanted = Some(fingerprint(target));
        let scalers: Vec<Arc<Object>> = AUTOSCALERS
            .iter()
            .filter_map(|kind| self.stores_for(kind.group, kind.kind, &target.namespace))
            .flatten()
            .flat_map(|c| parse_all(c.store.state_filter(|o| o.scales == wanted)))
            // A fingerprint can collide; the reference cannot.
            .filter(|o| scale_target(o).as_ref() == Some(target))
            .collect();
        Arc::new(Autoscalers::new(scalers.iter().map(Arc::as_ref)))
    }

    fn list(&self, namespace: &str, group: &str, kind: &str) -> Lookup<Vec<Arc<Object>>> {
        let Some(stores) = self.stores_for(group, kind, namespace) else {
            return Lookup::Unknown;
        };
        Lookup::Found(
            stores
                .iter()
                .flat_map(|c| parse_all(c.store.state_filter(|o| &*o.namespace == namespace)))
                .collect(),
        )
    }
}

/// Answers computed once per request.
struct Memo<K, V>(Mutex<Vec<(K, V)>>);

impl<K: PartialEq, V: Clone> Memo<K, V> {
    fn new() -> Self {
        Self(Mutex::new(Vec::new()))
    }

    fn get_or(&self, key: K, compute: impl FnOnce() -> V) -> V {
        // Only one request uses the lock and nothing panics while it is held.
        let mut seen = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, value)) = seen.iter().find(|(k, _)| *k == key) {
            return value.clone();
        }
        let value = compute();
        seen.push((key, value.clone()));
        value
    }
}

/// The objects of a kind in a namespace, as [`Index::list`] answers.
type Listed = Lookup<Vec<Arc<Object>>>;

/// The index as one request sees it: what several rules ask for is looked
/// up, and parsed, once.
pub struct RequestIndex<'a> {
    index: &'a ClusterIndex,
    objects: Memo<RuleRef, Lookup<Arc<Object>>>,
    scalers: Memo<RuleRef, Arc<Autoscalers>>,
    lists: Memo<(String, String, String), Listed>,
}

impl<'a> RequestIndex<'a> {
    /// A view of `index` for one request.
    pub fn new(index: &'a ClusterIndex) -> Self {
        Self {
            index,
            objects: Memo::new(),
            scalers: Memo::new(),
            lists: Memo::new(),
        }
    }
}

impl Index for RequestIndex<'_> {
    fn get(&self, target: &RuleRef) -> Lookup<Arc<Object>> {
        self.objects
            .get_or(target.clone(), || self.index.get(target))
    }

    fn scalers_of(&self, target: &RuleRef) -> Arc<Autoscalers> {
        self.scalers
            .get_or(target.clone(), || self.index.scalers_of(target))
    }

    fn list(&self, namespace: &str, group: &str, kind: &str) -> Lookup<Vec<Arc<Object>>> {
        let key = (namespace.to_owned(), group.to_owned(), kind.to_owned());
        self.lists
            .get_or(key, || self.index.list(namespace, group, kind))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use hpa_lint_rules::source::ALL as ALL_FIELDS;

    use super::*;

    fn dynamic(value: Value) -> DynamicObject {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn keeps_only_what_rules_read() {
        let deployment = dynamic(json!({
            "metadata": {
                "name": "web", "namespace": "shop", "uid": "u-1", "resourceVersion": "7",
                "labels": {"app": "web"},
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}", "hpa-lint.io/ignore.target-missing-requests": "batch"},
                "managedFields": [{"manager": "kubectl"}],
            },
            "spec": {"replicas": 2, "strategy": {"type": "Recreate"}, "template": {"spec": {"containers": [{"name": "web", "image": "web", "env": [{"name": "A"}], "resources": {"requests": {"cpu": "1"}}}]}}},
            "status": {"replicas": 2},
        }));
        let cached = Cached::new(Kind::Deployment, &deployment);
        assert_eq!(
            cached.object().unwrap().value,
            json!({
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "shop", "annotations": {"hpa-lint.io/ignore.target-missing-requests": "batch"}},
                "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "web", "resources": {"requests": {"cpu": "1"}}}]}}},
            })
        );
        let hpa = dynamic(json!({
            "metadata": {"name": "web", "namespace": "shop", "annotations": {"note": "x"}, "ownerReferences": [{"kind": "ScaledObject", "name": "web"}]},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 3},
            "status": {"currentReplicas": 1},
        }));
        let cached = Cached::new(Kind::HorizontalPodAutoscaler, &hpa);
        let object = cached.object().unwrap();
        assert_eq!(object.value["metadata"]["annotations"], json!({}));
        assert_eq!(
            object.value["metadata"]["ownerReferences"][0]["name"],
            "web"
        );
        assert_eq!(object.value.get("status"), None);
        assert_eq!(
            cached.scales,
            Some(fingerprint(&reference("apps", "Deployment", "web")))
        );
    }

    fn reference(group: &str, kind: &str, name: &str) -> RuleRef {
        RuleRef {
            group: group.to_owned(),
            kind: kind.to_owned(),
            namespace: "shop".to_owned(),
            name: name.to_owned(),
        }
    }

    #[test]
    fn answers_unknown_for_what_it_does_not_watch() {
        let (cache, mut writer) = Cache::new(Kind::Deployment, None);
        writer.apply_watcher_event(&Event::Init);
        let web = json!({"metadata": {"name": "web", "namespace": "shop"}, "spec": {}});
        writer.apply_watcher_event(&Event::InitApply(Cached::new(
            Kind::Deployment,
            &dynamic(web),
        )));
        writer.apply_watcher_event(&Event::InitDone);
        let index = ClusterIndex::new(vec![cache]);
        assert!(index.is_synced());
        let found = |r: &RuleRef| match index.get(r) {
            Lookup::Found(o) => format!("found {}", o.key.to_ref()),
            Lookup::Missing => "missing".to_owned(),
            Lookup::Unreadable => "unreadable".to_owned(),
            Lookup::Unknown => "unknown".to_owned(),
        };
        assert_eq!(
            found(&reference("apps", "Deployment", "web")),
            "found Deployment shop/web"
        );
        assert_eq!(found(&reference("apps", "Deployment", "api")), "missing");
        // No store for these kinds: neither found nor missing.
        assert_eq!(found(&reference("apps", "StatefulSet", "web")), "unknown");
        assert_eq!(
            found(&reference("argoproj.io", "Rollout", "web")),
            "unknown"
        );
        // A kind it does not watch is unknown, not empty.
        assert!(matches!(
            index.list("shop", "autoscaling.k8s.io", "VerticalPodAutoscaler"),
            Lookup::Unknown
        ));

        let offline = ClusterIndex::offline();
        assert!(offline.is_synced());
        assert!(matches!(
            offline.get(&reference("apps", "Deployment", "web")),
            Lookup::Unknown
        ));
    }

    #[test]
    fn watches_what_the_rules_in_force_read() {
        let needed = |config: &str| Kind::needed(&Policy::parse(config).unwrap(), false);
        // `APIService`s only for the live rules of the reporting mode.
        assert_eq!(needed(""), Kind::ALL[..Kind::ALL.len() - 1]);
        assert_eq!(Kind::needed(&Policy::default(), true), Kind::ALL);
        let without_vpas = needed("rules:\n  vpa-conflict: off\n");
        assert!(
            !without_vpas.contains(&Kind::VerticalPodAutoscaler),
            "{without_vpas:?}"
        );
        assert!(
            without_vpas.contains(&Kind::ScaledObject),
            "{without_vpas:?}"
        );
        // `implicit-behavior`, which `/mutate` applies, reads namespaces.
        assert!(!needed("webhook:\n  mutate: []\n").contains(&Kind::Namespace));
        // No rule that looks anything up: only HPAs.
        let mut policy = Policy::parse("webhook:\n  mutate: []\n").unwrap();
        rules::select(&mut policy.settings, &["min-equals-max".to_owned()]).unwrap();
        assert_eq!(
            Kind::needed(&policy, false),
            [Kind::HorizontalPodAutoscaler]
        );
    }

    #[test]
    fn every_kind_a_rule_reads_can_be_watched() {
        let mut settings = hpa_lint_rules::Settings::default();
        rules::select(&mut settings, &["all".to_owned()]).unwrap();
        settings.live = true;
        for kind in rules::reads(&settings).kinds() {
            assert!(Kind::of(kind.group, kind.kind).is_some(), "{kind:?}");
        }
    }

    /// The Helm chart's ClusterRole grants get, list and watch on every kind
    /// the webhook may watch.
    #[test]
    fn the_chart_grants_every_watch() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../charts/hpa-lint/templates/rbac.yaml"
        );
        let text = std::fs::read_to_string(path).unwrap();
        // The ClusterRole's rules, which hold no template actions.
        let start = text.find("\nrules:\n").unwrap();
        let rules = &text[start..start + text[start..].find("\n---").unwrap()];
        let document = hpa_lint_rules::source::read_document(rules, &|_, _| &ALL_FIELDS);
        let granted = &document.values[0].0["rules"];
        let grants = |kind: Kind, verb: &str| {
            granted.as_array().unwrap().iter().any(|rule| {
                let has = |field: &str, value: &str| {
                    rule[field].as_array().unwrap().iter().any(|v| v == value)
                };
                has("apiGroups", kind.group())
                    && has("resources", kind.plural())
                    && has("verbs", verb)
            })
        };
        for kind in Kind::ALL {
            for verb in ["get", "list", "watch"] {
                assert!(
                    grants(kind, verb),
                    "the chart does not grant {verb} on {kind:?}"
                );
            }
        }
    }

    #[test]
    fn a_404_means_not_served() {
        let error = |reason: &str, code: u16| {
            let status = kube::core::Status::failure("…", reason).with_code(code);
            watcher::Error::InitialListFailed(kube::Error::Api(status.boxed()))
        };
        assert!(is_not_served(&error("NotFound", 404)));
        // A plain-text 404 (no `Status` body) has no reason.
        assert!(is_not_served(&error("", 404)));
        assert!(!is_not_served(&error("Forbidden", 403)));
        assert!(!is_not_served(&watcher::Error::NoResourceVersion));
    }

    /// A store of `kind` that received its first list.
    fn listed(kind: Kind, objects: Vec<Value>) -> Cache {
        let (cache, mut writer) = Cache::new(kind, None);
        writer.apply_watcher_event(&Event::Init);
        for object in objects {
            writer.apply_watcher_event(&Event::InitApply(Cached::new(kind, &dynamic(object))));
        }
        writer.apply_watcher_event(&Event::InitDone);
        cache
    }

    #[test]
    fn a_kind_not_served_is_unknown_and_settled() {
        let (vpas, _writer) = Cache::new(Kind::VerticalPodAutoscaler, None);
        let index = ClusterIndex::new(vec![listed(Kind::Deployment, Vec::new()), vpas.clone()]);
        assert!(!index.is_synced());
        // The watcher's first list answered 404.
        assert!(vpas.set_absent(true));
        assert!(!vpas.set_absent(true), "a change only once");
        assert!(index.is_synced());
        assert!(matches!(
            index.list("shop", "autoscaling.k8s.io", "VerticalPodAutoscaler"),
            Lookup::Unknown
        ));
        assert!(matches!(
            index.list("shop", "apps", "Deployment"),
            Lookup::Found(found) if found.is_empty()
        ));
    }

    #[test]
    fn scaled_objects_are_autoscalers() {
        let scaled_object = json!({
            "metadata": {"name": "web", "namespace": "shop", "managedFields": [{"manager": "keda"}]},
            "spec": {"scaleTargetRef": {"name": "web"}, "triggers": [{"type": "cron"}]},
        });
        // Only what lookups of autoscalers read is kept.
        let cached = Cached::new(Kind::ScaledObject, &dynamic(scaled_object.clone()));
        assert_eq!(
            cached.object().unwrap().value,
            json!({
                "apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
                "metadata": {"name": "web", "namespace": "shop"},
                "spec": {"scaleTargetRef": {"name": "web"}},
            })
        );
        let index = ClusterIndex::new(vec![
            listed(Kind::HorizontalPodAutoscaler, Vec::new()),
            listed(Kind::ScaledObject, vec![scaled_object]),
        ]);
        // KEDA defaults the target's kind to an apps/v1 Deployment.
        let scalers = index.scalers_of(&reference("apps", "Deployment", "web"));
        let found: Vec<String> = scalers
            .all()
            .iter()
            .map(|m| m.key.to_ref().to_string())
            .collect();
        assert_eq!(found, ["ScaledObject shop/web"]);
    }
}
