//! The cluster the objects are for: its Kubernetes release, feature gates,
//! default namespace and custom scalable kinds. The model reads these; which
//! rules run is [`crate::settings`]' business.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// A time or duration in milliseconds (times: since the Unix epoch).
pub type Millis = i64;

/// Oldest and newest Kubernetes minor versions whose rules we know.
pub const SUPPORTED_MINORS: std::ops::RangeInclusive<u32> = 23..=37;
/// The default `--kube-version`.
pub const DEFAULT_MINOR: u32 = 36;

/// A Kubernetes release `1.<minor>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct KubeVersion {
    minor: u32,
}

impl KubeVersion {
    /// `1.<minor>`.
    pub const fn new(minor: u32) -> Self {
        Self { minor }
    }

    /// The minor version.
    pub fn minor(self) -> u32 {
        self.minor
    }

    /// Whether this is `1.<minor>` or newer.
    pub fn at_least(self, minor: u32) -> bool {
        self.minor >= minor
    }
}

impl Default for KubeVersion {
    fn default() -> Self {
        Self::new(DEFAULT_MINOR)
    }
}

impl fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "1.{}", self.minor)
    }
}

/// A Kubernetes version or feature gate that is not one.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum ClusterError {
    /// Not a supported release.
    #[error(
        "invalid Kubernetes version `{0}`: expected 1.{first}..1.{last} such as `1.{DEFAULT_MINOR}`",
        first = SUPPORTED_MINORS.start(),
        last = SUPPORTED_MINORS.end()
    )]
    KubeVersion(String),
    /// A gate name hpa-lint does not know.
    #[error("unknown feature gate `{0}`: expected one of {gates}", gates = FEATURE_GATES.join(", "))]
    UnknownGate(String),
    /// A gate the release locks to its default, or no longer has.
    #[error("feature gate `{name}` {why}")]
    GateFixed {
        /// The gate.
        name: String,
        /// Why it cannot be set.
        why: String,
    },
    /// Not `Name=true|false`.
    #[error("invalid feature gate `{0}`: expected Name=true|false")]
    GateSyntax(String),
    /// A value other than `true` or `false`.
    #[error("invalid value for feature gate `{name}`: `{value}`")]
    GateValue {
        /// The gate.
        name: String,
        /// What was given.
        value: String,
    },
}

impl FromStr for KubeVersion {
    type Err = ClusterError;

    /// Accepts `1.31`, `v1.31` and `1.31.2`, and a server's `gitVersion`
    /// with a vendor's build after the patch (`v1.31.2-gke.1014001`,
    /// `v1.31.2+k3s1`, `v1.31.2-eks-a737599`).
    fn from_str(s: &str) -> Result<Self, ClusterError> {
        let error = || ClusterError::KubeVersion(s.to_owned());
        let release = s.trim().trim_start_matches('v');
        let release = release.split_once(['-', '+']).map_or(release, |(r, _)| r);
        let mut parts = release.split('.');
        let (Some("1"), Some(minor)) = (parts.next(), parts.next()) else {
            return Err(error());
        };
        let minor: u32 = minor.parse().map_err(|_| error())?;
        if parts
            .next()
            .is_some_and(|patch| patch.parse::<u32>().is_err())
            || !SUPPORTED_MINORS.contains(&minor)
        {
            return Err(error());
        }
        Ok(Self::new(minor))
    }
}

/// The feature gates that change how the API server treats HPAs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeatureGates {
    /// `HPAScaleToZero`: allows `minReplicas: 0` (alpha, off in every release).
    pub scale_to_zero: bool,
    /// `HPAConfigurableTolerance`: keeps `behavior.*.tolerance` (1.33 alpha, 1.35 beta on).
    pub configurable_tolerance: bool,
    /// `HPAContainerMetrics`: keeps `containerResource` metrics (1.27 beta on, GA 1.30).
    pub container_metrics: bool,
    /// `PodLevelResources`: keeps a pod template's pod-level `resources`,
    /// which the controller then divides `Resource` utilization by (1.32
    /// alpha, 1.34 beta on).
    pub pod_level_resources: bool,
}

/// Gate names accepted by `--feature-gates` and `featureGates:`.
pub const FEATURE_GATES: [&str; 4] = [
    "HPAScaleToZero",
    "HPAConfigurableTolerance",
    "HPAContainerMetrics",
    "PodLevelResources",
];

impl FeatureGates {
    /// The defaults of a release.
    pub fn defaults(version: KubeVersion) -> Self {
        Self {
            scale_to_zero: false,
            configurable_tolerance: version.at_least(35),
            container_metrics: version.at_least(27),
            pod_level_resources: version.at_least(34),
        }
    }

    /// Sets one gate by name, as the API server of `release` takes it:
    /// `HPAContainerMetrics` is locked on from its GA (1.30) and gone from
    /// 1.32 (apiserver-hpa-rules.md §5); `PodLevelResources` comes in 1.32.
    pub fn set(
        &mut self,
        release: KubeVersion,
        name: &str,
        enabled: bool,
    ) -> Result<(), ClusterError> {
        let fixed = |why| ClusterError::GateFixed {
            name: name.to_owned(),
            why,
        };
        let gate = match name {
            "HPAScaleToZero" => &mut self.scale_to_zero,
            "HPAConfigurableTolerance" => &mut self.configurable_tolerance,
            "HPAContainerMetrics" if release.at_least(32) => {
                return Err(fixed(format!(
                    "does not exist in Kubernetes {release}: it was removed in 1.32 \
                     (`containerResource` metrics are always on)"
                )));
            }
            "HPAContainerMetrics" if release.at_least(30) && !enabled => {
                return Err(fixed(format!(
                    "is GA and locked to true in Kubernetes {release}"
                )));
            }
            "HPAContainerMetrics" => &mut self.container_metrics,
            "PodLevelResources" if !release.at_least(32) => {
                return Err(fixed(format!(
                    "does not exist in Kubernetes {release}: it was added in 1.32"
                )));
            }
            "PodLevelResources" => &mut self.pod_level_resources,
            _ => return Err(ClusterError::UnknownGate(name.to_owned())),
        };
        *gate = enabled;
        Ok(())
    }

    /// Applies `Name=true,Other=false` overrides, as the API server of
    /// `release` takes them.
    pub fn apply_overrides(
        &mut self,
        release: KubeVersion,
        list: &str,
    ) -> Result<(), ClusterError> {
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let Some((name, value)) = item.split_once('=') else {
                return Err(ClusterError::GateSyntax(item.to_owned()));
            };
            let enabled = value.trim().parse().map_err(|_| ClusterError::GateValue {
                name: name.to_owned(),
                value: value.to_owned(),
            })?;
            self.set(release, name.trim(), enabled)?;
        }
        Ok(())
    }
}

impl Default for FeatureGates {
    fn default() -> Self {
        Self::defaults(KubeVersion::default())
    }
}

/// A kind known to have a `/scale` subresource, matched on group and kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupKind {
    /// API group.
    pub group: String,
    /// Kind.
    pub kind: String,
}

/// What the rules know of the cluster the objects are for.
#[derive(Clone, Debug)]
pub struct Cluster {
    /// The Kubernetes release the objects are for.
    pub kube_version: KubeVersion,
    /// Feature gates of that release (defaults plus overrides).
    pub feature_gates: FeatureGates,
    /// Namespace of objects that do not name one.
    pub default_namespace: String,
    /// Custom kinds with a `/scale` subresource (besides the built-in list).
    pub scalable_kinds: Vec<GroupKind>,
}

impl Cluster {
    /// A release with its default gates, namespace `default`.
    pub fn new(kube_version: KubeVersion) -> Self {
        Self {
            kube_version,
            feature_gates: FeatureGates::defaults(kube_version),
            default_namespace: "default".to_owned(),
            scalable_kinds: Vec::new(),
        }
    }

    /// Whether a kind is one of the configured scalable custom kinds.
    pub fn is_custom_scalable(&self, group: &str, kind: &str) -> bool {
        self.scalable_kinds
            .iter()
            .any(|k| k.group == group && k.kind == kind)
    }
}

impl Default for Cluster {
    fn default() -> Self {
        Self::new(KubeVersion::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_versions() {
        assert_eq!("1.31".parse::<KubeVersion>(), Ok(KubeVersion::new(31)));
        assert_eq!("v1.23.4".parse::<KubeVersion>(), Ok(KubeVersion::new(23)));
        for vendor in ["v1.30.5-gke.1014001", "v1.30.4-eks-a737599", "v1.30.2+k3s1"] {
            assert_eq!(vendor.parse::<KubeVersion>(), Ok(KubeVersion::new(30)));
        }
        assert!("v1.30.x-gke.1".parse::<KubeVersion>().is_err());
        assert!("1.22".parse::<KubeVersion>().is_err());
        assert!("1.38".parse::<KubeVersion>().is_err());
        assert!("2.1".parse::<KubeVersion>().is_err());
        assert!("1.x".parse::<KubeVersion>().is_err());
    }

    #[test]
    fn gate_defaults_follow_releases() {
        let gates = FeatureGates::defaults(KubeVersion::new(34));
        assert!(!gates.configurable_tolerance && gates.container_metrics && !gates.scale_to_zero);
        assert!(FeatureGates::defaults(KubeVersion::new(35)).configurable_tolerance);
        assert!(!FeatureGates::defaults(KubeVersion::new(26)).container_metrics);
        assert!(!FeatureGates::defaults(KubeVersion::new(33)).pod_level_resources);
        assert!(FeatureGates::defaults(KubeVersion::new(34)).pod_level_resources);
        // `PodLevelResources` comes in 1.32 (alpha).
        let mut gates = FeatureGates::defaults(KubeVersion::new(32));
        gates
            .set(KubeVersion::new(32), "PodLevelResources", true)
            .unwrap();
        assert!(gates.pod_level_resources);
        let before = gates.set(KubeVersion::new(31), "PodLevelResources", true);
        assert!(
            before
                .unwrap_err()
                .to_string()
                .contains("was added in 1.32")
        );
    }

    #[test]
    fn applies_gate_overrides() {
        let release = KubeVersion::default();
        let mut gates = FeatureGates::default();
        gates
            .apply_overrides(
                release,
                "HPAScaleToZero=true, HPAConfigurableTolerance=false",
            )
            .unwrap();
        assert!(gates.scale_to_zero && !gates.configurable_tolerance);
        assert!(
            gates
                .apply_overrides(release, "Nope=true")
                .unwrap_err()
                .to_string()
                .contains("unknown feature gate")
        );
        assert!(gates.apply_overrides(release, "HPAScaleToZero").is_err());
    }

    /// `HPAContainerMetrics` went GA (locked on) in 1.30 and was removed in
    /// 1.32: the API servers of those releases refuse to set it.
    #[test]
    fn the_container_metrics_gate_follows_its_graduation() {
        let set = |minor, enabled| {
            let release = KubeVersion::new(minor);
            let mut gates = FeatureGates::defaults(release);
            gates
                .set(release, "HPAContainerMetrics", enabled)
                .map(|()| gates.container_metrics)
                .map_err(|e| e.to_string())
        };
        assert_eq!(set(29, false), Ok(false));
        assert_eq!(set(31, true), Ok(true));
        assert_eq!(
            set(31, false),
            Err(
                "feature gate `HPAContainerMetrics` is GA and locked to true in Kubernetes 1.31"
                    .to_owned()
            )
        );
        for enabled in [true, false] {
            assert!(
                set(32, enabled)
                    .unwrap_err()
                    .contains("was removed in 1.32")
            );
        }
    }
}
