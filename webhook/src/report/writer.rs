//! What the replica that holds the Lease writes after each evaluation round:
//! the reports of the namespaces whose findings changed (server-side apply
//! with the field manager `hpa-lint`, only when the content differs from the
//! report in the cluster; deleted when a namespace holds no HPA any more),
//! and an Event per finding that appeared.
//!
//! The reports in the cluster are watched (label `app.kubernetes.io/managed-by=hpa-lint`)
//! by every replica, so a new leader compares with them and writes nothing
//! that is already there, keeps their timestamps, and announces no finding
//! they already hold. A write that fails is retried with backoff, and never
//! lost: the namespace stays pending until its report is right. A namespace
//! that is gone or terminating is dropped. A 403 (RBAC missing) is logged
//! once; admission never waits for any of this.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use std::sync::atomic::{AtomicBool, Ordering};

use futures::StreamExt;
use hpa_lint_rules::Severity;
use hpa_lint_rules::quote::truncate;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::Client;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams};
use kube::runtime::WatchStreamExt;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher::{self, watcher};
use tokio::sync::watch;
use tokio::task::AbortHandle;
use tokio::time::Instant;

use super::Round;
use super::evaluate::{Findings, HpaFindings};
use super::reports::{self, Limits, ReportApi};
use crate::metrics::Metrics;

/// What the writer does.
#[derive(Clone, Debug)]
pub struct WriterOptions {
    /// The report API to write, `None` for the first one served.
    pub api: Option<ReportApi>,
    /// How large a report may grow.
    pub limits: Limits,
    /// How often to look for a report API when none is served.
    pub rediscover: Duration,
    /// Events per minute at most (also the burst); 0: no Events.
    pub events_per_minute: u32,
    /// This replica's identity, as Events name their reporter.
    pub identity: String,
}

/// Why a write failed, and what to do about it.
enum Failure {
    /// The namespace is gone or terminating: nothing to write any more.
    NamespaceGone,
    /// The report API is not served any more: look for one again.
    ApiGone,
    /// RBAC refuses it.
    Forbidden(String),
    /// Anything else (a conflict, the API server unreachable): retry.
    Retry(String),
}

fn failure(error: kube::Error) -> Failure {
    match error {
        kube::Error::Api(status)
            if status.code == 404 && status.message.starts_with("namespaces ") =>
        {
            Failure::NamespaceGone
        }
        kube::Error::Api(status) if status.code == 404 => Failure::ApiGone,
        kube::Error::Api(status)
            if status.code == 403 && status.message.contains("is being terminated") =>
        {
            Failure::NamespaceGone
        }
        kube::Error::Api(status) if status.code == 403 => Failure::Forbidden(status.message),
        other => Failure::Retry(other.to_string()),
    }
}

/// The reports in the cluster, watched.
struct Watched {
    api: ReportApi,
    store: Store<DynamicObject>,
    /// Set while the watch fails (a 403, say) until it delivers again.
    failing: Arc<AtomicBool>,
    task: AbortHandle,
}

/// How far the watch of the reports got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reading {
    /// The reports in the cluster are known.
    Synced,
    /// Not yet.
    Waiting,
    /// The watch fails: they cannot be known.
    Failing,
}

impl Watched {
    fn reading(&self) -> Reading {
        use futures::FutureExt;
        // Once listed, the store stays right while the watch is cut: this
        // replica is the only writer of these reports.
        if self
            .store
            .wait_until_ready()
            .now_or_never()
            .is_some_and(|r| r.is_ok())
        {
            Reading::Synced
        } else if self.failing.load(Ordering::Relaxed) {
            Reading::Failing
        } else {
            Reading::Waiting
        }
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Keeps `writer`'s store of the reports current, logging a refusal (403)
/// once and other failures once until the watch works again.
async fn watch_reports(
    client: Client,
    api: ReportApi,
    writer: reflector::store::Writer<DynamicObject>,
    failing: Arc<AtomicBool>,
) {
    let reports: Api<DynamicObject> = Api::all_with(client, &api.resource());
    let config = watcher::Config::default().labels(&format!(
        "{}={}",
        reports::MANAGED_BY.0,
        reports::MANAGED_BY.1
    ));
    reflector::reflector(writer, watcher(reports, config).default_backoff())
        .for_each(|event| {
            match event {
                // A (re)list starts with `Init` before the list is asked for.
                Ok(watcher::Event::Init) => {}
                Ok(_) => {
                    if failing.swap(false, Ordering::Relaxed) {
                        tracing::info!(api = %api.describe(), "reading reports again");
                    }
                }
                Err(error) => {
                    if !failing.swap(true, Ordering::Relaxed) {
                        tracing::warn!(api = %api.describe(), %error, "cannot read reports (RBAC missing?): reports wait, admission is unaffected");
                    }
                }
            }
            async {}
        })
        .await;
}

/// A token bucket for Events.
struct Bucket {
    tokens: f64,
    per_minute: f64,
    at: Instant,
}

impl Bucket {
    fn take(&mut self) -> bool {
        let now = Instant::now();
        let refill = now.duration_since(self.at).as_secs_f64() * self.per_minute / 60.0;
        self.tokens = (self.tokens + refill).min(self.per_minute);
        self.at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// The writer's state across rounds.
pub struct Writer {
    client: Client,
    options: WriterOptions,
    metrics: Arc<Metrics>,
    leading: watch::Receiver<bool>,
    /// Whether this replica led in the round before.
    led: bool,
    watched: Option<Watched>,
    /// When to look for a report API again.
    rediscover_at: Instant,
    /// Namespaces whose report may be wrong.
    pending: BTreeSet<String>,
    /// Namespaces whose findings were not compared for Events yet.
    unannounced: BTreeSet<String>,
    /// The findings announced, per namespace: (HPA, rule).
    announced: HashMap<String, HashSet<(String, String)>>,
    /// Whether `announced` was taken from the reports in the cluster.
    announced_from_reports: bool,
    /// Delay before retrying failed writes.
    backoff: Duration,
    forbidden_logged: bool,
    absent_logged: bool,
    recorder: Recorder,
    bucket: Bucket,
}

const FIRST_RETRY: Duration = Duration::from_secs(1);
const LAST_RETRY: Duration = Duration::from_secs(30);

impl Writer {
    /// A writer that writes while `leading` is true.
    pub fn new(
        client: Client,
        options: WriterOptions,
        metrics: Arc<Metrics>,
        leading: watch::Receiver<bool>,
    ) -> Self {
        let recorder = Recorder::new(
            client.clone(),
            Reporter {
                controller: "hpa-lint".into(),
                instance: Some(options.identity.clone()),
            },
        );
        let per_minute = f64::from(options.events_per_minute);
        Self {
            client,
            metrics,
            leading,
            led: false,
            watched: None,
            rediscover_at: Instant::now(),
            pending: BTreeSet::new(),
            unannounced: BTreeSet::new(),
            announced: HashMap::new(),
            announced_from_reports: false,
            backoff: FIRST_RETRY,
            forbidden_logged: false,
            absent_logged: false,
            recorder,
            bucket: Bucket {
                tokens: per_minute,
                per_minute,
                at: Instant::now(),
            },
            options,
        }
    }

    /// Writes what a round changed; how soon to be called again when
    /// something is left to write.
    pub async fn after(&mut self, round: Round<'_>) -> Option<Duration> {
        self.pending.extend(round.changed.iter().cloned());
        self.unannounced.extend(round.changed.iter().cloned());
        let leading = *self.leading.borrow();
        self.metrics.leading(leading);
        if !leading {
            self.led = false;
            return None;
        }
        if !self.led {
            // A new term: every namespace is compared with the cluster.
            self.led = true;
            self.pending.extend(round.findings.keys().cloned());
            self.unannounced.extend(round.findings.keys().cloned());
            self.announced.clear();
            self.announced_from_reports = false;
        }
        if self.watch_reports().await {
            // Reports to compare with: every namespace is compared.
            self.pending.extend(round.findings.keys().cloned());
        }
        let reading = self.watched.as_ref().map(Watched::reading);
        if !self.announced_from_reports && reading != Some(Reading::Waiting) {
            self.take_announced();
        }
        if self.announced_from_reports {
            self.announce(round.findings).await;
        }
        match reading {
            Some(Reading::Synced) => self.write(round.findings).await,
            // The reports cannot be compared with yet: later.
            Some(Reading::Waiting | Reading::Failing) => Some(self.back_off()),
            // No API: look again later.
            None => Some(self.rediscover_at.saturating_duration_since(Instant::now())),
        }
    }

    /// The next delay before a retry, longer each time.
    fn back_off(&mut self) -> Duration {
        let delay = self.backoff;
        self.backoff = (self.backoff * 2).min(LAST_RETRY);
        delay
    }

    /// Finds the report API and watches its reports, when that is not
    /// done; whether it started watching.
    async fn watch_reports(&mut self) -> bool {
        if self.watched.is_some() || Instant::now() < self.rediscover_at {
            return false;
        }
        self.rediscover_at = Instant::now() + self.options.rediscover;
        let Some(api) = self.discover().await else {
            if !self.absent_logged {
                self.absent_logged = true;
                tracing::info!(
                    every_seconds = self.options.rediscover.as_secs(),
                    "no report API served (neither openreports.io/v1alpha1 Report nor wgpolicyk8s.io/v1alpha2 PolicyReport): findings go to metrics and Events only; looking again periodically"
                );
            }
            return false;
        };
        self.absent_logged = false;
        tracing::info!(api = %api.describe(), "writing policy reports");
        let writer = reflector::store::Writer::new(api.resource());
        let store = writer.as_reader();
        let failing = Arc::<AtomicBool>::default();
        let task = tokio::spawn(watch_reports(
            self.client.clone(),
            api,
            writer,
            Arc::clone(&failing),
        ))
        .abort_handle();
        self.watched = Some(Watched {
            api,
            store,
            failing,
            task,
        });
        true
    }

    /// The report API to write: the one configured, or the first served.
    async fn discover(&self) -> Option<ReportApi> {
        let candidates: Vec<ReportApi> = match self.options.api {
            Some(api) => vec![api],
            None => ReportApi::ALL.to_vec(),
        };
        for api in candidates {
            let (_, _, _, plural) = api.gvkp();
            match self
                .client
                .list_api_group_resources(&api.api_version())
                .await
            {
                Ok(list) if list.resources.iter().any(|r| r.name == plural) => return Some(api),
                Ok(_) => {}
                Err(error) => tracing::debug!(api = %api.describe(), %error, "report API"),
            }
        }
        None
    }

    /// Takes the findings the reports in the cluster hold as announced.
    fn take_announced(&mut self) {
        self.announced_from_reports = true;
        let Some(watched) = &self.watched else {
            return;
        };
        for report in watched.store.state() {
            let namespace = report.metadata.namespace.clone().unwrap_or_default();
            self.announced
                .entry(namespace)
                .or_default()
                .extend(reports::standing(&report));
        }
    }

    /// Publishes an Event for every finding that appeared in the namespaces
    /// not compared yet.
    async fn announce(&mut self, findings: &Findings) {
        for namespace in std::mem::take(&mut self.unannounced) {
            let hpas = findings
                .get(&namespace)
                .map(Vec::as_slice)
                .unwrap_or_default();
            let now: HashSet<(String, String)> = hpas
                .iter()
                .flat_map(|hpa| {
                    hpa.found
                        .iter()
                        .map(|f| (hpa.name.clone(), f.rule.name.to_owned()))
                })
                .collect();
            let before = self.announced.remove(&namespace).unwrap_or_default();
            for hpa in hpas {
                for found in &hpa.found {
                    if !before.contains(&(hpa.name.clone(), found.rule.name.to_owned())) {
                        self.event(&namespace, hpa, found).await;
                    }
                }
            }
            if !now.is_empty() {
                self.announced.insert(namespace, now);
            }
        }
    }

    async fn event(&mut self, namespace: &str, hpa: &HpaFindings, found: &super::evaluate::Found) {
        if self.options.events_per_minute == 0 {
            return;
        }
        if !self.bucket.take() {
            self.metrics.event("dropped");
            tracing::debug!(namespace, hpa = %hpa.name, rule = found.rule.name, "Event dropped by the rate limit");
            return;
        }
        let reference = ObjectReference {
            api_version: Some("autoscaling/v2".into()),
            kind: Some("HorizontalPodAutoscaler".into()),
            namespace: Some(namespace.to_owned()),
            name: Some(hpa.name.clone()),
            uid: hpa.uid.clone(),
            ..ObjectReference::default()
        };
        let related = found
            .object
            .as_ref()
            .map(|(api_version, kind, name)| ObjectReference {
                api_version: Some(api_version.clone()),
                kind: Some(kind.clone()),
                namespace: Some(namespace.to_owned()),
                name: Some(name.clone()),
                ..ObjectReference::default()
            });
        let mut note = found.message.clone();
        truncate(&mut note, 1000);
        let event = Event {
            type_: match found.severity {
                Severity::Error | Severity::Warning => EventType::Warning,
                Severity::Info => EventType::Normal,
            },
            reason: found.rule.name.to_owned(),
            note: Some(note),
            action: "Lint".into(),
            secondary: related,
        };
        match self.recorder.publish(&event, &reference).await {
            Ok(()) => self.metrics.event("published"),
            Err(error) => {
                self.metrics.event("failed");
                tracing::debug!(namespace, hpa = %hpa.name, %error, "Event not published");
            }
        }
    }

    /// Writes the pending reports; when to retry those that failed.
    async fn write(&mut self, findings: &Findings) -> Option<Duration> {
        let Some(watched) = &self.watched else {
            return None;
        };
        let api = watched.api;
        // Reports of namespaces that hold no HPA any more go too.
        for report in watched.store.state() {
            let namespace = report.metadata.namespace.clone().unwrap_or_default();
            if !findings.contains_key(&namespace) {
                self.pending.insert(namespace);
            }
        }
        let mut retry = false;
        for namespace in self.pending.clone() {
            let existing = self.watched.as_ref().and_then(|w| {
                w.store
                    .get(&ObjectRef::new_with(reports::NAME, api.resource()).within(&namespace))
            });
            let hpas = findings
                .get(&namespace)
                .map(Vec::as_slice)
                .unwrap_or_default();
            let now = super::evaluate::now() / 1000;
            let desired = reports::report(
                api,
                &namespace,
                hpas,
                existing.as_deref(),
                now,
                self.options.limits,
            );
            let reports: Api<DynamicObject> =
                Api::namespaced_with(self.client.clone(), &namespace, &api.resource());
            let written = match (&desired, &existing) {
                (None, None) => Ok(None),
                (Some(desired), Some(existing)) if reports::is_current(desired, existing) => {
                    Ok(None)
                }
                (Some(desired), _) => reports
                    .patch(
                        reports::NAME,
                        &PatchParams::apply("hpa-lint").force(),
                        &Patch::Apply(desired),
                    )
                    .await
                    .map(|_| Some("applied")),
                (None, Some(_)) => match reports
                    .delete(reports::NAME, &DeleteParams::default())
                    .await
                {
                    Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
                    other => other.map(|_| Some("deleted")),
                },
            };
            match written.map_err(failure) {
                Ok(outcome) => {
                    self.pending.remove(&namespace);
                    if let Some(outcome) = outcome {
                        self.metrics.report_write(outcome);
                        tracing::debug!(namespace, outcome, "report");
                    }
                    self.forbidden_logged = false;
                }
                Err(Failure::NamespaceGone) => {
                    self.pending.remove(&namespace);
                    tracing::debug!(namespace, "namespace gone: its report with it");
                }
                Err(Failure::ApiGone) => {
                    self.metrics.report_write("failed");
                    tracing::warn!(api = %api.describe(), "the report API is not served any more; looking for one again");
                    self.watched = None;
                    self.rediscover_at = Instant::now();
                    return Some(FIRST_RETRY);
                }
                Err(Failure::Forbidden(message)) => {
                    self.metrics.report_write("failed");
                    retry = true;
                    if !std::mem::replace(&mut self.forbidden_logged, true) {
                        tracing::warn!(namespace, %message, "cannot write reports (RBAC missing?); retrying, admission is unaffected");
                    }
                }
                Err(Failure::Retry(message)) => {
                    self.metrics.report_write("failed");
                    retry = true;
                    tracing::debug!(namespace, %message, "report not written; retrying");
                }
            }
        }
        if retry {
            Some(self.back_off())
        } else {
            self.backoff = FIRST_RETRY;
            None
        }
    }
}
