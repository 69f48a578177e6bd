//! What the audit reads, and the index the rules see it through.
//!
//! First the HPAs; then, at the same time, what the rules look up for them:
//! their targets (only those, of every kind they name, custom kinds found by
//! discovery with their `/scale` subresource), the PodDisruptionBudgets,
//! LimitRanges, VerticalPodAutoscalers and KEDA ScaledObjects of their
//! namespaces (the CRDs when they exist), and the metrics `APIService`s when
//! an HPA's status shows failing metrics. Each object is cut to what the
//! rules read while it is parsed.
//!
//! What is read follows what the enabled rules read ([`rules::reads`]): a
//! resource no enabled rule reads is not listed, so turning its rules off
//! also spares the permission.
//!
//! A list the server refuses (403) or fails is reported once, as unread;
//! lookups of that kind then answer "unknown", so the rules that need it
//! stay silent. A resource that is not served (404, an absent CRD) simply has
//! no objects.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use anyhow::{Result, bail};
use hpa_lint_rules::cluster::GroupKind;
use hpa_lint_rules::index::{Index, Lookup, MemoryIndex, Stored};
use hpa_lint_rules::model::autoscaler::{Autoscalers, SCALED_OBJECT, VPA, scale_target};
use hpa_lint_rules::model::disruption::{Block, PDB};
use hpa_lint_rules::model::status::{API_SERVICE, Status, metrics_api_of};
use hpa_lint_rules::model::workload::{Target, TargetKind};
use hpa_lint_rules::object::{Object, ObjectKey, ObjectRef, Origin};
use hpa_lint_rules::reads::{LIVE_FIELDS, Reads};
use hpa_lint_rules::rules::{self, ALL};
use hpa_lint_rules::settings::Settings;
use serde_json::Value;
use tokio::task::JoinSet;

use crate::cluster::{Cluster, Failure, Resource};

/// The version, kind, plural and scope of each built-in kind the rules may
/// read; other kinds are found by discovery.
const BUILT_IN: [(&str, &str, &str, bool); 7] = [
    ("apps/v1", "Deployment", "deployments", true),
    ("apps/v1", "StatefulSet", "statefulsets", true),
    ("apps/v1", "ReplicaSet", "replicasets", true),
    (
        "v1",
        "ReplicationController",
        "replicationcontrollers",
        true,
    ),
    (
        "policy/v1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        true,
    ),
    ("v1", "LimitRange", "limitranges", true),
    (
        "apiregistration.k8s.io/v1",
        "APIService",
        "apiservices",
        false,
    ),
];

/// The built-in resource of `group` and `kind`, if it is one.
pub fn built_in(group: &str, kind: &str) -> Option<Resource> {
    BUILT_IN
        .into_iter()
        .map(|(api_version, kind, plural, namespaced)| {
            Resource::new(api_version, kind, plural, namespaced)
        })
        .find(|resource| resource.group == group && resource.kind == kind)
}

/// Which HPAs to audit.
pub struct Scope {
    /// The namespace, or `None` for all of them.
    pub namespace: Option<String>,
    /// A label selector on the HPAs.
    pub selector: Option<String>,
    /// HPA names (all when empty).
    pub names: Vec<String>,
}

/// A resource the audit could not read.
pub struct Unread {
    /// e.g. `poddisruptionbudgets.policy`.
    pub resource: String,
    /// What the server said.
    pub error: String,
    /// What the audit does without it.
    pub consequence: String,
}

/// What was read.
pub struct Inventory {
    /// The HPAs to lint, in the server's order, held compact: thousands
    /// of HPAs held parsed, status and all, would take ten times the memory.
    pub hpas: Vec<Stored>,
    /// Everything the rules look up.
    pub index: AuditIndex,
    /// Objects listed, all resources together (before those the rules do
    /// not need were dropped).
    pub objects: usize,
    /// What could not be read.
    pub unread: Vec<Unread>,
}

/// The rules' [`Index`] over what was read. Lookups of a kind the audit did
/// not read (refused, failed, or outside the namespace audited) answer
/// [`Lookup::Unknown`].
pub struct AuditIndex {
    objects: MemoryIndex,
    /// (group, kind) of every resource read in full (or known to be absent).
    read: HashSet<(String, String)>,
    namespace: Option<String>,
}

impl AuditIndex {
    fn covers(&self, group: &str, kind: &str, namespace: &str) -> bool {
        // Cluster-scoped objects have no namespace.
        let in_scope =
            namespace.is_empty() || self.namespace.as_deref().is_none_or(|ns| ns == namespace);
        in_scope && self.read.contains(&(group.to_owned(), kind.to_owned()))
    }
}

impl Index for AuditIndex {
    fn get(&self, target: &ObjectRef) -> Lookup<Arc<Object>> {
        if self.covers(&target.group, &target.kind, &target.namespace) {
            self.objects.get(target)
        } else {
            Lookup::Unknown
        }
    }

    // Read from the packed bytes, as the CLI reads them, not unpacked.
    fn get_target(&self, target: &ObjectRef) -> Lookup<Target<'_>> {
        if self.covers(&target.group, &target.kind, &target.namespace) {
            self.objects.get_target(target)
        } else {
            Lookup::Unknown
        }
    }

    fn scalers_of(&self, target: &ObjectRef) -> Arc<Autoscalers> {
        self.objects.scalers_of(target)
    }

    fn list(&self, namespace: &str, group: &str, kind: &str) -> Lookup<Vec<Arc<Object>>> {
        if self.covers(group, kind, namespace) {
            self.objects.list(namespace, group, kind)
        } else {
            Lookup::Unknown
        }
    }

    // The objects lent, not copied into a list for each HPA.
    fn visit_list(
        &self,
        namespace: &str,
        group: &str,
        kind: &str,
        visit: &mut dyn FnMut(&Arc<Object>),
    ) -> Lookup<()> {
        if self.covers(group, kind, namespace) {
            self.objects.visit_list(namespace, group, kind, visit)
        } else {
            Lookup::Unknown
        }
    }

    fn visit_budgets(&self, namespace: &str, visit: &mut dyn FnMut(&Arc<Object>, Block)) {
        if self.covers(PDB.group, PDB.kind, namespace) {
            self.objects.visit_budgets(namespace, visit);
        }
    }

    fn visit_vpas(&self, target: &ObjectRef, visit: &mut dyn FnMut(&Arc<Object>)) {
        if self.covers(VPA.group, VPA.kind, &target.namespace) {
            self.objects.visit_vpas(target, visit);
        }
    }
}

/// An HPA as listed: compact, with what the rest of the reading needs.
struct Hpa {
    key: ObjectKey,
    stored: Stored,
    target: Option<ObjectRef>,
    /// Its status shows failing or unknown metrics.
    trouble: bool,
}

/// Why the audit lists a resource.
#[derive(Clone, Copy, PartialEq)]
enum Role {
    /// The targets of HPAs.
    Targets,
    /// Listed by rules per namespace.
    Listed,
    /// KEDA ScaledObjects.
    Scalers,
    /// Metrics `APIService`s.
    ApiServices,
}

impl Role {
    /// What the audit does without the resource.
    fn consequence(self, resource: &Resource, settings: &Settings) -> String {
        match self {
            Role::Targets => format!(
                "the HPAs that scale a {} are not checked against it",
                resource.kind
            ),
            Role::Listed => format!(
                "the rules that read them say nothing that depends on them: {}",
                readers(settings, |read| matches!(
                    read,
                    Reads::Listed(kind) if kind.is(&resource.group, &resource.kind)
                ))
            ),
            Role::Scalers => format!(
                "KEDA ScaledObjects are left out of the rules that read autoscalers: {}",
                readers(settings, |read| *read == Reads::Autoscalers)
            ),
            Role::ApiServices => {
                "failing metrics are reported without the state of their metrics API".to_owned()
            }
        }
    }
}

/// The enabled rules with a read that `reads` matches, as `a`, `b`.
fn readers(settings: &Settings, reads: impl Fn(&Reads) -> bool) -> String {
    let names: Vec<String> = ALL
        .iter()
        .filter(|rule| settings.severity(rule).is_some() && rule.reads.iter().any(&reads))
        .map(|rule| format!("`{}`", rule.name))
        .collect();
    names.join(", ")
}

/// A resource to list, found or not.
struct Job {
    resource: Resource,
    role: Role,
}

fn identity(value: &Value, field: &str) -> String {
    value
        .pointer(&format!("/metadata/{field}"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// Whether an HPA's status shows failing or unknown metrics: then the
/// metrics `APIService`s may explain them.
fn shows_metric_trouble(hpa: &Object) -> bool {
    let Some(status) = Status::of(hpa) else {
        return false;
    };
    let failing = status
        .failure()
        .is_some_and(|c| metrics_api_of(c.reason).is_some());
    let written = hpa.value["spec"]["metrics"].as_array().map_or(1, Vec::len);
    let current = hpa.value["status"]["currentMetrics"].as_array();
    let unknown = current.is_none_or(|metrics| {
        metrics.len() < written
            || metrics
                .iter()
                .any(|m| m["type"].as_str().is_none_or(str::is_empty))
    });
    failing || unknown
}

/// Reads the HPAs in `scope` and everything their rules look up. Custom
/// scalable kinds found by discovery are added to `settings`.
pub async fn read(
    cluster: Arc<Cluster>,
    scope: &Scope,
    settings: &mut Settings,
) -> Result<Inventory> {
    let namespace = scope.namespace.as_deref();
    let hpa_resource = Resource::new(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        "horizontalpodautoscalers",
        true,
    );
    let names: HashSet<&str> = scope.names.iter().map(String::as_str).collect();
    let take = |value: Value| {
        let hpa = Object::new(value, Origin::default(), "")?;
        if !names.is_empty() && !names.contains(hpa.key.name.as_str()) {
            return None;
        }
        Some(Hpa {
            trouble: shows_metric_trouble(&hpa),
            target: scale_target(&hpa),
            key: hpa.key.clone(),
            stored: Stored::compact(hpa),
        })
    };
    let (hpas, mut objects) = match cluster
        .list(
            &hpa_resource,
            namespace,
            scope.selector.as_deref(),
            // The live rules read an HPA's status.
            &LIVE_FIELDS,
            &take,
        )
        .await
    {
        Ok(found) => found,
        Err(Failure::Absent) => bail!(
            "the server does not serve autoscaling/v2 HorizontalPodAutoscalers (Kubernetes 1.23 or newer does)"
        ),
        Err(failure) => bail!("cannot list {hpa_resource}: {failure}"),
    };
    for name in &scope.names {
        if !hpas.iter().any(|hpa| &hpa.key.name == name) {
            bail!("HorizontalPodAutoscaler `{name}` not found");
        }
    }

    let targets: HashSet<ObjectRef> = hpas.iter().filter_map(|hpa| hpa.target.clone()).collect();
    let namespaces: Arc<BTreeSet<String>> =
        Arc::new(hpas.iter().map(|hpa| hpa.key.namespace.clone()).collect());
    let mut read = HashSet::from([(
        "autoscaling".to_owned(),
        "HorizontalPodAutoscaler".to_owned(),
    )]);
    let mut unread = Vec::new();
    let needs = rules::reads(settings);
    // Built-in kinds are listed at once; custom ones (VPAs, KEDA, custom
    // targets) once discovery has found them, in the group's preferred version.
    let mut jobs = Vec::new();
    let mut custom: Vec<(String, String, Role)> = Vec::new();
    let mut want = |group: &str, kind: &str, role: Role| match built_in(group, kind) {
        Some(resource) => jobs.push(Job { resource, role }),
        None => custom.push((group.to_owned(), kind.to_owned(), role)),
    };
    for kind in &needs.listed {
        want(kind.group, kind.kind, Role::Listed);
    }
    if needs.autoscalers {
        want(SCALED_OBJECT.group, SCALED_OBJECT.kind, Role::Scalers);
    }
    // The metrics `APIService`s explain failing metrics only.
    if needs.named.contains(&API_SERVICE) && hpas.iter().any(|hpa| hpa.trouble) {
        want(API_SERVICE.group, API_SERVICE.kind, Role::ApiServices);
    }
    if needs.scale_targets {
        let target_kinds: BTreeSet<(&str, &str)> = targets
            .iter()
            .map(|t| (t.group.as_str(), t.kind.as_str()))
            .collect();
        for (group, kind) in target_kinds {
            if TargetKind::classify(&settings.cluster, group, kind).is_scalable() {
                want(group, kind, Role::Targets);
            }
        }
    }
    let groups = if custom.is_empty() {
        Ok(Vec::new())
    } else {
        cluster.groups().await
    };
    match groups {
        Ok(groups) => {
            let preferred: HashMap<String, String> = groups.into_iter().collect();
            for (group, kind, role) in custom {
                let Some(version) = preferred.get(&group) else {
                    read.insert((group, kind));
                    continue;
                };
                match cluster.find_kind(&group, version, &kind).await {
                    Ok(Some((resource, scalable))) => {
                        if role == Role::Targets && scalable && !settings.cluster.is_custom_scalable(&group, &kind) {
                            settings.cluster.scalable_kinds.push(GroupKind { group, kind });
                        }
                        jobs.push(Job { resource, role });
                    }
                    Ok(None) | Err(Failure::Absent) => {
                        read.insert((group, kind));
                    }
                    Err(failure) => unread.push(Unread {
                        resource: format!("{group}/{version}"),
                        error: failure.to_string(),
                        consequence: format!("{kind}s are not read"),
                    }),
                }
            }
        }
        Err(failure) => unread.push(Unread {
            resource: "API discovery (/apis)".to_owned(),
            error: failure.to_string(),
            consequence: "custom kinds (VerticalPodAutoscalers, KEDA ScaledObjects, custom targets) are not read".to_owned(),
        }),
    }

    let targets = Arc::new(targets);
    let mut running = JoinSet::new();
    for job in jobs {
        let keep = needs.keep_for(
            &settings.cluster,
            &job.resource.api_version(),
            &job.resource.kind,
        );
        let cluster = Arc::clone(&cluster);
        let namespace = scope.namespace.clone();
        let targets = Arc::clone(&targets);
        let namespaces = Arc::clone(&namespaces);
        running.spawn(async move {
            let Job { resource, role } = job;
            let take = |value: Value| {
                let wanted = match role {
                    Role::Targets => targets.contains(&ObjectRef {
                        group: resource.group.clone(),
                        kind: resource.kind.clone(),
                        namespace: identity(&value, "namespace"),
                        name: identity(&value, "name"),
                    }),
                    Role::Listed | Role::Scalers => {
                        namespaces.contains(&identity(&value, "namespace"))
                    }
                    Role::ApiServices => true,
                };
                let object = Object::new(value, Origin::default(), "").filter(|_| wanted)?;
                // Targets are looked up once per HPA: compact; the rest is
                // listed for every HPA of its namespace: parsed.
                let target = scale_target(&object);
                let stored = if role == Role::Targets {
                    Stored::compact(object)
                } else {
                    Stored::Parsed(Arc::new(object))
                };
                Some((stored, target))
            };
            let result = cluster
                .list(&resource, namespace.as_deref(), None, keep, &take)
                .await;
            (resource, role, result)
        });
    }
    let mut entries: Vec<(Stored, Option<ObjectRef>)> = hpas
        .iter()
        .map(|hpa| (hpa.stored.clone(), hpa.target.clone()))
        .collect();
    let mut finished = Vec::new();
    while let Some(done) = running.join_next().await {
        finished.push(done?);
    }
    // In a fixed order, whatever order the lists finished in.
    finished.sort_by(|a, b| (&a.0.group, &a.0.kind).cmp(&(&b.0.group, &b.0.kind)));
    for (resource, role, result) in finished {
        let listed = match result {
            Ok((listed, count)) => {
                objects += count;
                listed
            }
            Err(Failure::Absent) => Vec::new(),
            Err(failure) => {
                unread.push(Unread {
                    resource: resource.to_string(),
                    error: failure.to_string(),
                    consequence: role.consequence(&resource, settings),
                });
                continue;
            }
        };
        read.insert((resource.group.clone(), resource.kind.clone()));
        entries.extend(listed);
    }
    Ok(Inventory {
        hpas: hpas.into_iter().map(|hpa| hpa.stored).collect(),
        index: AuditIndex {
            objects: MemoryIndex::with_scale_targets(entries),
            read,
            namespace: scope.namespace.clone(),
        },
        objects,
        unread,
    })
}
