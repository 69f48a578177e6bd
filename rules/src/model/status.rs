//! The status the HPA controller writes into a live HPA: its conditions and
//! the current value of each metric (hpa-controller-algorithm.md C3.2), as
//! the `live` rules read them; and the `APIService`s that serve the metrics
//! APIs, which explain most failing metrics.
//!
//! Manifests rarely carry a status; an HPA read from a cluster has one as
//! soon as the controller has synced it once.

use std::borrow::Cow;

use serde_json::Value;

use crate::cluster::Millis;
use crate::model::hpa::{Hpa, HpaVersion, MetricSource, MetricSpec, v2beta1_status_member_to_v2};
use crate::model::linted::Linted;
use crate::model::quantity::Quantity;
use crate::object::{Kind, Object};
use crate::path::Json;
use crate::path::{FieldPath, get};

/// `AbleToScale`: whether the controller can read and update the target's scale.
pub const ABLE_TO_SCALE: &str = "AbleToScale";
/// `ScalingActive`: whether the controller can compute a replica count.
pub const SCALING_ACTIVE: &str = "ScalingActive";
/// `ScalingLimited`: whether `minReplicas`, `maxReplicas` or a policy held
/// the replica count back.
pub const SCALING_LIMITED: &str = "ScalingLimited";

/// One entry of `status.conditions`.
#[derive(Clone, Copy, Debug)]
pub struct Condition<'a> {
    /// Its index in `status.conditions`.
    pub index: usize,
    /// `type`.
    pub type_: &'a str,
    /// `status`: `True`, `False` or `Unknown`.
    pub status: &'a str,
    /// `reason`, the controller's CamelCase word.
    pub reason: &'a str,
    /// `message`.
    pub message: &'a str,
    /// `lastTransitionTime`, in milliseconds since the Unix epoch.
    pub since: Option<Millis>,
}

impl Condition<'_> {
    /// `status.conditions[i]`.
    pub fn path(&self) -> FieldPath {
        FieldPath::fields("status.conditions").index(self.index)
    }

    /// How long the condition has held at `now`; `None` when either is unknown.
    pub fn held(&self, now: Option<Millis>) -> Option<Millis> {
        Some(now? - self.since?).filter(|held| *held >= 0)
    }

    /// `Type is Status (Reason)`, with how long it has held when known.
    pub fn describe(&self, now: Option<Millis>) -> String {
        let held = self
            .held(now)
            .map(|held| format!(" for {}", age(held)))
            .unwrap_or_default();
        format!(
            "`{}` is {} ({}){held}",
            self.type_, self.status, self.reason
        )
    }
}

/// The status of an HPA the controller has synced at least once.
#[derive(Clone, Copy, Debug)]
pub struct Status<'a> {
    value: &'a Value,
    /// Written in the `autoscaling/v2beta1` shape (`currentAverageUtilization`).
    v2beta1: bool,
}

impl<'a> Status<'a> {
    /// The status of `object`, when it is current: the controller has written
    /// conditions, and has seen the latest `spec` (`status.observedGeneration`
    /// is not behind `metadata.generation`). A status older than the spec
    /// describes an HPA that no longer exists.
    pub fn of(object: &'a Object) -> Option<Self> {
        Self::current(object)
    }

    /// [`Status::of`] the HPA being linted: most manifests have none, and
    /// are not made a serde_json value to find out.
    pub fn of_linted(object: &'a Linted<'_>) -> Option<Self> {
        object.value.member("status")?;
        Self::current(object.whole())
    }

    fn current(object: &'a Object) -> Option<Self> {
        let value = object.value.get("status")?;
        value.get("conditions")?.as_array()?;
        let generation = get(&object.value, &["metadata", "generation"]);
        let observed = value.get("observedGeneration");
        if let (Some(generation), Some(observed)) = (
            generation.and_then(Value::as_i64),
            observed.and_then(Value::as_i64),
        ) && observed < generation
        {
            return None;
        }
        let version = HpaVersion::from_api_version(&object.key.api_version);
        let v2beta1 = matches!(version, Some(HpaVersion::V2beta1 | HpaVersion::V2alpha1));
        Some(Self { value, v2beta1 })
    }

    /// Every condition, in order.
    pub fn conditions(&self) -> Vec<Condition<'a>> {
        let text = |item: &'a Value, field: &str| -> &'a str {
            item.get(field).and_then(Value::as_str).unwrap_or_default()
        };
        self.value["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(index, item)| Condition {
                index,
                type_: text(item, "type"),
                status: text(item, "status"),
                reason: text(item, "reason"),
                message: text(item, "message"),
                since: parse_time(text(item, "lastTransitionTime")),
            })
            .collect()
    }

    /// The condition of a type, if present.
    pub fn condition(&self, type_: &str) -> Option<Condition<'a>> {
        self.conditions().into_iter().find(|c| c.type_ == type_)
    }

    /// The condition that says the HPA does not work: `AbleToScale` False,
    /// else `ScalingActive` False. While the scale cannot be read, the
    /// controller leaves `ScalingActive` as the sync before set it (C3.2), so
    /// `AbleToScale` comes first.
    pub fn failure(&self) -> Option<Condition<'a>> {
        [ABLE_TO_SCALE, SCALING_ACTIVE]
            .into_iter()
            .find_map(|type_| self.condition(type_).filter(|c| c.status == "False"))
    }

    /// `status.currentReplicas`.
    pub fn current_replicas(&self) -> Option<i64> {
        self.value.get("currentReplicas")?.as_i64()
    }

    /// `status.currentMetrics[i]` in the `autoscaling/v2` shape: a `v2beta1`
    /// one (`currentAverageUtilization`, `currentValue`, ...) converted the way
    /// the server converted it.
    pub fn current_metric(&self, i: usize) -> Option<Cow<'a, Value>> {
        let written = self.value.get("currentMetrics")?.get(i)?;
        let Some(members) = written.as_object().filter(|_| self.v2beta1) else {
            return Some(Cow::Borrowed(written));
        };
        let converted = members
            .iter()
            .map(|(member, value)| {
                let converted = v2beta1_status_member_to_v2(member, value);
                (member.clone(), converted.unwrap_or_else(|| value.clone()))
            })
            .collect();
        Some(Cow::Owned(Value::Object(converted)))
    }
}

/// One metric of the spec next to its current value, as `kubectl get hpa`
/// shows it (`41%/70%`, `<unknown>/70%`).
#[derive(Clone, Debug)]
pub struct Reading {
    /// What is measured, e.g. `cpu utilization`, `external metric queue_depth`.
    pub name: String,
    /// The target, as written (`70%`, `500m`).
    pub target: String,
    /// The current value as written, `None` when the status has none.
    pub current: Option<String>,
    /// current / target, when both are numbers.
    pub ratio: Option<f64>,
    /// The metric's path in the spec.
    pub path: FieldPath,
    /// The metrics API the controller reads it from.
    pub api: &'static str,
}

impl Reading {
    /// `current/target`, as kubectl prints it.
    pub fn shown(&self) -> String {
        let current = self.current.as_deref().unwrap_or("<unknown>");
        format!("{current}/{}", self.target)
    }
}

/// Readings as `kubectl get hpa` lists them: `cpu utilization 97%/70%, ...`.
pub fn list_readings(readings: &[Reading]) -> String {
    readings
        .iter()
        .map(|r| format!("{} {}", r.name, r.shown()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The metrics of `hpa` with their current values in `status`. The
/// controller writes `status.currentMetrics` in the order of `spec.metrics`
/// and leaves an empty entry for a metric it could not read.
pub fn readings(hpa: &Hpa, status: &Status<'_>) -> Vec<Reading> {
    hpa.metrics
        .iter()
        .enumerate()
        .filter_map(|(i, spec)| {
            let path = if hpa.metrics_defaulted {
                FieldPath::fields("spec.metrics")
            } else {
                FieldPath::fields("spec.metrics").index(i)
            };
            reading(spec, status.current_metric(i).as_deref(), path)
        })
        .collect()
}

fn reading(spec: &MetricSpec, status: Option<&Value>, path: FieldPath) -> Option<Reading> {
    let source = spec.source()?;
    let target = source.target();
    // The target field the controller uses (C5.1), and the matching current field.
    let (field, wanted, shown) = if let Some(percent) = target
        .average_utilization
        .filter(|_| target.average_value.is_none() && is_resource(&source))
    {
        (
            "averageUtilization",
            f64::from(percent),
            format!("{percent}%"),
        )
    } else if let Some(value) = target
        .value
        .as_ref()
        .filter(|_| target.type_ == "Value" || target.average_value.is_none())
    {
        ("value", value.approx(), value.to_string())
    } else {
        let value = target.average_value.as_ref()?;
        ("averageValue", value.approx(), value.to_string())
    };
    let current = status
        .and_then(|s| s.get(source.member()))
        .and_then(|m| m.get("current"))
        .and_then(|c| c.get(field));
    let number = |v: &Value| match v {
        Value::Number(n) => n.as_f64(),
        _ => Quantity::from_json(v).map(|q| q.approx()),
    };
    let current_text = current.map(|v| match v {
        Value::String(s) => s.clone(),
        Value::Number(n) if field == "averageUtilization" => format!("{n}%"),
        other => other.to_string(),
    });
    let ratio = current
        .and_then(number)
        .filter(|_| wanted > 0.0)
        .map(|c| c / wanted);
    let api = match source {
        MetricSource::Resource(_) | MetricSource::ContainerResource(_) => "metrics.k8s.io",
        MetricSource::Pods(_) | MetricSource::Object(_) => "custom.metrics.k8s.io",
        MetricSource::External(_) => "external.metrics.k8s.io",
    };
    Some(Reading {
        name: metric_name(&source, field),
        target: shown,
        current: current_text,
        ratio,
        path,
        api,
    })
}

fn is_resource(source: &MetricSource<'_>) -> bool {
    matches!(
        source,
        MetricSource::Resource(_) | MetricSource::ContainerResource(_)
    )
}

/// What a metric measures, for messages.
fn metric_name(source: &MetricSource<'_>, field: &str) -> String {
    let per = if field == "averageUtilization" {
        "utilization"
    } else {
        "usage"
    };
    match source {
        MetricSource::Resource(m) => format!("{} {per}", m.name),
        MetricSource::ContainerResource(m) => {
            format!("{} {per} of container `{}`", m.name, m.container)
        }
        MetricSource::Pods(m) => format!("pods metric `{}`", m.metric.name),
        MetricSource::Object(m) => format!(
            "metric `{}` of {} `{}`",
            m.metric.name, m.described_object.kind, m.described_object.name
        ),
        MetricSource::External(m) => format!("external metric `{}`", m.metric.name),
    }
}

/// `APIService`: what serves an aggregated API, such as a metrics API.
pub const API_SERVICE: Kind = Kind::new("apiregistration.k8s.io", "APIService");

/// The metrics API a failing metric reason points at: `metrics.k8s.io` for
/// resource metrics, `custom.metrics.k8s.io` for Pods and Object metrics,
/// `external.metrics.k8s.io` for External ones.
pub fn metrics_api_of(reason: &str) -> Option<&'static str> {
    match reason {
        "FailedGetResourceMetric" | "FailedGetContainerResourceMetric" => Some("metrics.k8s.io"),
        "FailedGetPodsMetric" | "FailedGetObjectMetric" => Some("custom.metrics.k8s.io"),
        "FailedGetExternalMetric" => Some("external.metrics.k8s.io"),
        _ => None,
    }
}

/// Parses a timestamp as the API server writes them (RFC 3339 in UTC,
/// `2026-01-02T03:04:05Z`, fractions of a second allowed) into milliseconds
/// since the Unix epoch.
pub fn parse_time(text: &str) -> Option<Millis> {
    let (date, time) = text.strip_suffix('Z')?.split_once('T')?;
    let mut date = date.splitn(3, '-').map(str::parse::<i64>);
    let (year, month, day) = (date.next()?.ok()?, date.next()?.ok()?, date.next()?.ok()?);
    let (time, fraction) = time.split_once('.').unwrap_or((time, ""));
    let mut time = time.splitn(3, ':').map(str::parse::<i64>);
    let (hour, minute, second) = (time.next()?.ok()?, time.next()?.ok()?, time.next()?.ok()?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    let millis = format!("{fraction:0<3}")
        .get(..3)
        .and_then(|ms| ms.parse::<i64>().ok())?;
    let days = days_from_civil(year, month, day);
    Some(((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// A duration the way `kubectl get` shows ages: `45s`, `12m`, `5h12m`, `3d4h`.
pub fn age(ms: Millis) -> String {
    let seconds = ms / 1000;
    let (days, hours, minutes) = (seconds / 86_400, seconds / 3600 % 24, seconds / 60 % 60);
    match (days, hours, minutes) {
        (0, 0, 0) => format!("{seconds}s"),
        (0, 0, m) => format!("{m}m"),
        (0, h, 0) => format!("{h}h"),
        (0, h, m) => format!("{h}h{m}m"),
        (d, 0, _) => format!("{d}d"),
        (d, h, _) => format!("{d}d{h}h"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_api_server_timestamps() {
        assert_eq!(parse_time("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_time("2000-03-01T00:00:01Z"), Some(951_868_801_000));
        assert_eq!(
            parse_time("2026-01-02T03:04:05.5Z"),
            Some(1_767_323_045_500)
        );
        for bad in [
            "",
            "2026-01-02",
            "2026-01-02T03:04:05",
            "2026-13-02T03:04:05Z",
        ] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn shows_ages_like_kubectl() {
        let cases = [
            (45_000, "45s"),
            (12 * 60_000, "12m"),
            (2 * 3_600_000, "2h"),
            (5 * 3_600_000 + 12 * 60_000, "5h12m"),
            (3 * 86_400_000, "3d"),
            (3 * 86_400_000 + 4 * 3_600_000 + 60_000, "3d4h"),
        ];
        for (ms, shown) in cases {
            assert_eq!(age(ms), shown);
        }
    }
}
