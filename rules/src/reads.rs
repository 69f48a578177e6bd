//! What rules read besides the object they check, and what front ends keep of
//! the other objects for them.
//!
//! Each rule declares its reads ([`crate::registry::Rule::reads`]);
//! [`Needs`] gathers those of the enabled rules (`crate::rules::reads`), and
//! every front end derives what it holds from it: the CLI which objects of its
//! input it keeps and how much of each ([`Needs::keep_for`]), the webhook which
//! kinds it watches, the audit which it lists. The rule tests prune their
//! fixtures by the rule's own declaration and record every lookup, so a rule
//! cannot read what it does not declare.

use crate::cluster::Cluster;
use crate::model::autoscaler::SCALED_OBJECT;
use crate::model::workload::{SCALABLE_KINDS, TargetKind};
use crate::object::{ANNOTATION_PREFIX, HPA, Kind, SUPPRESSION_PREFIX, group_of};
use crate::source::{ALL, Keep};

/// Something a rule reads besides the object it checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// The object an HPA's `scaleTargetRef` points to ([`WORKLOAD_FIELDS`]).
    ScaleTarget,
    /// The autoscalers of that object: HPAs and KEDA ScaledObjects
    /// ([`SCALER_FIELDS`]).
    Autoscalers,
    /// Every object of a kind in the target's namespace ([`OBJECT_FIELDS`]).
    Listed(Kind),
    /// Objects of a kind looked up by name, with their status
    /// ([`LIVE_FIELDS`]).
    Named(Kind),
}

/// What the objects a set of rules reads are, gathered from their [`Reads`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    /// Some rule reads an HPA's scale target.
    pub scale_targets: bool,
    /// Some rule reads the autoscalers of a scale target.
    pub autoscalers: bool,
    /// The kinds rules list, each once.
    pub listed: Vec<Kind>,
    /// The kinds rules look up by name, each once.
    pub named: Vec<Kind>,
}

impl Needs {
    /// What these reads need.
    pub fn of<'r>(reads: impl IntoIterator<Item = &'r Reads>) -> Self {
        let mut needs = Self::default();
        for read in reads {
            let (kinds, kind) = match *read {
                Reads::ScaleTarget => {
                    needs.scale_targets = true;
                    continue;
                }
                Reads::Autoscalers => {
                    needs.autoscalers = true;
                    continue;
                }
                Reads::Listed(kind) => (&mut needs.listed, kind),
                Reads::Named(kind) => (&mut needs.named, kind),
            };
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
        needs
    }

    /// The kinds whose objects rules look up: for scale targets the
    /// built-in scalable kinds (custom ones each front end finds its own way:
    /// the CLI reads whatever it is given, the audit asks discovery), the
    /// autoscalers, and the kinds listed or looked up by name.
    pub fn kinds(&self) -> Vec<Kind> {
        let mut kinds = Vec::new();
        if self.scale_targets {
            kinds.extend(SCALABLE_KINDS.map(|(group, kind)| Kind::new(group, kind)));
        }
        if self.autoscalers {
            kinds.extend([HPA, SCALED_OBJECT]);
        }
        kinds.extend(self.listed.iter().chain(&self.named));
        kinds
    }

    /// Whether the rules list objects of this kind for every HPA of a
    /// namespace: an index had better keep them parsed rather than compact.
    pub fn is_listed(&self, api_version: &str, kind: &str) -> bool {
        self.lists(group_of(api_version), kind)
    }

    /// What to keep of an object of this kind: what the rules read of it, or
    /// [`IDENTITY_FIELDS`] when no rule looks it up (only its suppressions
    /// are checked then, and a front end need not keep it at all).
    pub fn keep_for(&self, cluster: &Cluster, api_version: &str, kind: &str) -> &'static Keep {
        let group = group_of(api_version);
        self.keep_with(
            group,
            kind,
            self.lists(group, kind),
            has(&self.named, group, kind),
            || TargetKind::classify(cluster, group, kind).is_scalable(),
        )
    }

    /// [`Needs::keep_for`], given whether the kind is listed, looked up by
    /// name, and (asked only if it matters) scalable.
    fn keep_with(
        &self,
        group: &str,
        kind: &str,
        listed: bool,
        named: bool,
        scalable: impl FnOnce() -> bool,
    ) -> &'static Keep {
        // HPAs are kept whatever the rules read: the front ends find them
        // again to lint them.
        if HPA.is(group, kind) || (self.autoscalers && SCALED_OBJECT.is(group, kind)) {
            &SCALER_FIELDS
        } else if kind.ends_with("List") {
            // Split into its items, which are kept each by its own kind.
            &ALL
        } else if listed {
            &OBJECT_FIELDS
        } else if named {
            &LIVE_FIELDS
        } else if self.scale_targets && scalable() {
            &WORKLOAD_FIELDS
        } else {
            &IDENTITY_FIELDS
        }
    }

    /// [`Needs::keep_for`], [`Needs::is_listed`] and [`Needs::is_got`] at
    /// once, for a front end that asks all three of every object.
    pub fn role(&self, cluster: &Cluster, api_version: &str, kind: &str) -> Role {
        let group = group_of(api_version);
        let listed = self.lists(group, kind);
        let named = has(&self.named, group, kind);
        let scalable = !named && TargetKind::classify(cluster, group, kind).is_scalable();
        Role {
            keep: self.keep_with(group, kind, listed, named, || scalable),
            listed,
            got: named || scalable,
        }
    }

    fn lists(&self, group: &str, kind: &str) -> bool {
        has(&self.listed, group, kind)
    }

    /// Whether objects of this kind may be looked up by reference: by name,
    /// or as scale targets (any kind the controller may scale, see
    /// [`TargetKind::classify`]; front ends look targets up too, whatever
    /// the rules). Autoscalers that are not are read only as one of their
    /// target's autoscalers.
    pub fn is_got(&self, cluster: &Cluster, api_version: &str, kind: &str) -> bool {
        let group = group_of(api_version);
        has(&self.named, group, kind) || TargetKind::classify(cluster, group, kind).is_scalable()
    }

    /// Whether rules look objects of this kind up at all.
    pub fn is_read(&self, cluster: &Cluster, api_version: &str, kind: &str) -> bool {
        !std::ptr::eq(self.keep_for(cluster, api_version, kind), &IDENTITY_FIELDS)
    }
}

/// Whether `kinds` holds the kind `kind` of `group`.
fn has(kinds: &[Kind], group: &str, kind: &str) -> bool {
    kinds.iter().any(|k| k.is(group, kind))
}

/// How the rules read the objects of one kind ([`Needs::role`]).
#[derive(Clone, Copy, Debug)]
pub struct Role {
    /// What to keep of them ([`Needs::keep_for`]).
    pub keep: &'static Keep,
    /// Whether they are listed ([`Needs::is_listed`]).
    pub listed: bool,
    /// Whether they may be looked up by reference ([`Needs::is_got`]).
    pub got: bool,
}

impl Role {
    /// Whether rules look them up at all ([`Needs::is_read`]).
    pub fn is_read(&self) -> bool {
        !std::ptr::eq(self.keep, &IDENTITY_FIELDS)
    }
}

/// The pod-template annotations that turn a sidecar's injection on or off
/// (`container-not-found`, whose fixture has each).
const INJECTION: Keep = Keep::Fields(&[
    ("sidecar.istio.io/inject", Keep::All),
    ("linkerd.io/inject", Keep::All),
    ("dapr.io/enabled", Keep::All),
    ("vault.hashicorp.com/agent-inject", Keep::All),
]);

/// What the rules read of a scale target: identity, suppressions, replicas,
/// and the pod template's labels, annotations that turn a sidecar's
/// injection on or off, containers and resources. Workloads are big (labels,
/// env, volumes, probes) and the rest of them goes.
pub static WORKLOAD_FIELDS: Keep = Keep::Fields(&[
    ("apiVersion", Keep::All),
    ("kind", Keep::All),
    (
        "metadata",
        Keep::Fields(&[
            ("name", Keep::All),
            ("generateName", Keep::All),
            ("namespace", Keep::All),
            ("annotations", Keep::Prefixed(SUPPRESSION_PREFIX)),
        ]),
    ),
    (
        "spec",
        Keep::Fields(&[
            ("replicas", Keep::All),
            (
                "template",
                Keep::Fields(&[
                    (
                        "metadata",
                        Keep::Fields(&[("labels", Keep::All), ("annotations", INJECTION)]),
                    ),
                    (
                        "spec",
                        Keep::Fields(&[
                            ("containers", Keep::Items(&CONTAINER_FIELDS)),
                            ("initContainers", Keep::Items(&CONTAINER_FIELDS)),
                            ("resources", Keep::All),
                        ]),
                    ),
                ]),
            ),
        ]),
    ),
]);

static CONTAINER_FIELDS: Keep = Keep::Fields(&[
    ("name", Keep::All),
    ("resources", Keep::All),
    ("restartPolicy", Keep::All),
]);

/// What the rules read of an autoscaler looked up (an HPA is read whole only
/// when it is linted itself): identity, suppressions, owners (KEDA marks the
/// HPA it creates with one) and scale target.
pub static SCALER_FIELDS: Keep = Keep::Fields(&[
    ("apiVersion", Keep::All),
    ("kind", Keep::All),
    (
        "metadata",
        Keep::Fields(&[
            ("name", Keep::All),
            ("generateName", Keep::All),
            ("namespace", Keep::All),
            ("annotations", Keep::Prefixed(SUPPRESSION_PREFIX)),
            ("ownerReferences", Keep::All),
        ]),
    ),
    ("spec", Keep::Fields(&[("scaleTargetRef", Keep::All)])),
]);

/// What the rules read of an object no rule looks up: identity and
/// suppression annotations (which are checked on every object).
pub static IDENTITY_FIELDS: Keep = Keep::Fields(&[
    ("apiVersion", Keep::All),
    ("kind", Keep::All),
    (
        "metadata",
        Keep::Fields(&[
            ("name", Keep::All),
            ("generateName", Keep::All),
            ("namespace", Keep::All),
            ("annotations", Keep::Prefixed(SUPPRESSION_PREFIX)),
        ]),
    ),
]);

/// The metadata of objects read whole: identity, generation (which a live
/// status is compared with), labels, owners and hpa-lint's annotations.
/// Managed fields and other annotations (often a whole
/// `last-applied-configuration`) go.
const METADATA: Keep = Keep::Fields(&[
    ("name", Keep::All),
    ("generateName", Keep::All),
    ("namespace", Keep::All),
    ("generation", Keep::All),
    ("labels", Keep::All),
    ("annotations", Keep::Prefixed(ANNOTATION_PREFIX)),
    ("ownerReferences", Keep::All),
]);

/// What the rules read of an object they read whole (budgets, LimitRanges,
/// VPAs): its metadata and `spec`.
pub static OBJECT_FIELDS: Keep = Keep::Fields(&[
    ("apiVersion", Keep::All),
    ("kind", Keep::All),
    ("metadata", METADATA),
    ("spec", Keep::All),
]);

/// [`OBJECT_FIELDS`] and `status`: what the rules read of objects whose
/// state matters (an `APIService`'s conditions, a live HPA's status).
pub static LIVE_FIELDS: Keep = Keep::Fields(&[
    ("apiVersion", Keep::All),
    ("kind", Keep::All),
    ("metadata", METADATA),
    ("spec", Keep::All),
    ("status", Keep::All),
]);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::autoscaler::VPA;
    use crate::model::disruption::PDB;
    use crate::model::status::API_SERVICE;

    #[test]
    fn keeps_what_the_reads_need_and_no_more() {
        let cluster = Cluster::default();
        let keep = |needs: &Needs, api_version, kind| {
            let keep = needs.keep_for(&cluster, api_version, kind);
            [
                ("scaler", &SCALER_FIELDS),
                ("object", &OBJECT_FIELDS),
                ("live", &LIVE_FIELDS),
                ("workload", &WORKLOAD_FIELDS),
                ("identity", &IDENTITY_FIELDS),
                ("all", &ALL),
            ]
            .into_iter()
            .find(|(_, k)| std::ptr::eq(keep, *k))
            .map(|(name, _)| name)
            .unwrap()
        };
        let none = Needs::default();
        // HPAs are always kept: they are what is linted.
        assert_eq!(
            keep(&none, "autoscaling/v2", "HorizontalPodAutoscaler"),
            "scaler"
        );
        assert_eq!(keep(&none, "apps/v1", "Deployment"), "identity");
        assert_eq!(keep(&none, "keda.sh/v1alpha1", "ScaledObject"), "identity");
        assert_eq!(keep(&none, "policy/v1", "PodDisruptionBudget"), "identity");
        assert_eq!(keep(&none, "v1", "List"), "all");
        assert!(!none.is_read(&cluster, "apps/v1", "Deployment"));

        let needs = Needs::of(&[
            Reads::ScaleTarget,
            Reads::Autoscalers,
            Reads::Listed(PDB),
            Reads::Listed(PDB),
            Reads::Named(API_SERVICE),
        ]);
        assert_eq!(needs.listed, [PDB]);
        assert_eq!(keep(&needs, "apps/v1", "Deployment"), "workload");
        assert_eq!(keep(&needs, "argoproj.io/v1alpha1", "Rollout"), "workload");
        assert_eq!(keep(&needs, "apps/v1", "DaemonSet"), "identity");
        assert_eq!(keep(&needs, "keda.sh/v1alpha1", "ScaledObject"), "scaler");
        assert_eq!(keep(&needs, "policy/v1", "PodDisruptionBudget"), "object");
        assert!(needs.is_listed("policy/v1", "PodDisruptionBudget"));
        assert_eq!(
            keep(&needs, "apiregistration.k8s.io/v1", "APIService"),
            "live"
        );
        // Not listed, but of a custom group: it may be a scale target.
        assert_eq!(keep(&needs, "autoscaling.k8s.io/v1", VPA.kind), "workload");
        assert_eq!(keep(&none, "autoscaling.k8s.io/v1", VPA.kind), "identity");
        assert!(needs.kinds().contains(&SCALED_OBJECT));
        // All three asked at once answer as each asked alone.
        let kinds = [
            ("autoscaling/v2", "HorizontalPodAutoscaler"),
            ("keda.sh/v1alpha1", "ScaledObject"),
            ("apps/v1", "Deployment"),
            ("apps/v1", "DaemonSet"),
            ("argoproj.io/v1alpha1", "Rollout"),
            ("policy/v1", "PodDisruptionBudget"),
            ("apiregistration.k8s.io/v1", "APIService"),
            ("autoscaling.k8s.io/v1", VPA.kind),
            ("v1", "List"),
            ("v1", "ConfigMap"),
        ];
        for needs in [&none, &needs] {
            for (api_version, kind) in kinds {
                let role = needs.role(&cluster, api_version, kind);
                assert!(std::ptr::eq(
                    role.keep,
                    needs.keep_for(&cluster, api_version, kind)
                ));
                assert_eq!(role.listed, needs.is_listed(api_version, kind));
                assert_eq!(role.got, needs.is_got(&cluster, api_version, kind));
                assert_eq!(role.is_read(), needs.is_read(&cluster, api_version, kind));
            }
        }
        assert!(needs.kinds().contains(&Kind::new("apps", "StatefulSet")));
    }
}
