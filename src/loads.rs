//! `--load step|spike|ramp|daily`: standard demands for HPAs without a load
//! history, scaled to the HPAs they drive.
//!
//! A load is a *level* over time, a share of the HPAs' span: 0 % is the
//! demand `minReplicas` pods serve at the metric's target, 100 % the demand
//! that needs `maxReplicas` of them. With two specs (a comparison), the span
//! covers both: from the lower of their `minReplicas` demands to the higher of
//! their `maxReplicas` ones, so that each spec meets its own bounds. Times
//! left unset are scaled too: a level is held long enough for the slower spec
//! to finish its fastest scale-up (or scale-down), as `hpa-lint behavior`
//! computes it.

use std::fmt;

use anyhow::{Result, bail};
use hpa_lint_rules::controller::flags::{format_duration, thousandths};
use hpa_lint_rules::controller::reconcile::{MetricKind, ResourceTarget};
use hpa_lint_rules::controller::velocity::{self, End};
use hpa_lint_rules::controller::{Autoscaler, Millis, parse_duration};
use serde_json::{Map, Value, json};

use crate::simulate::trace::{Columns, Trace, metric_keys};

const MINUTE: Millis = 60_000;
const DAY: Millis = 24 * 60 * MINUTE;
/// The longest a level is held when its length is scaled to the HPAs.
const MAX_SCALED: Millis = 6 * 60 * MINUTE;
/// Added to a scaled length: the level holds a while after the slower spec
/// arrived, so that the figures see both at rest.
const MARGIN: Millis = 5 * MINUTE;
/// The shortest a scaled length is.
const MIN_SCALED: Millis = 10 * MINUTE;
/// The most days `daily` runs (a day is 5,760 syncs at 15 s).
const MAX_DAYS: i64 = 60;
/// The finest step of a load's values.
const RESOLUTION: Millis = 15_000;
/// The most spikes.
const MAX_SPIKES: i64 = 1000;

/// The shape of a standard load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `low` until `at`, `high` for `hold`, then `low` for `settle`.
    Step,
    /// `count` spikes to `high`, each `width` long, every `every` from `at`.
    Spike,
    /// From `at`, `low` to `high` over `rise`, `hold`, back over `fall`, `settle`.
    Ramp,
    /// A day's curve, `days` times: `low` at 0h, `high` at 12h.
    Daily,
}

impl Shape {
    const ALL: [(&'static str, Shape); 4] = [
        ("step", Shape::Step),
        ("spike", Shape::Spike),
        ("ramp", Shape::Ramp),
        ("daily", Shape::Daily),
    ];

    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, s)| *s == self)
            .map_or("", |(n, _)| n)
    }

    /// The parameters the shape takes besides `low` and `high`.
    fn parameters(self) -> &'static [&'static str] {
        match self {
            Shape::Step => &["at", "hold", "settle"],
            Shape::Spike => &["at", "width", "every", "count", "settle"],
            Shape::Ramp => &["at", "rise", "hold", "fall", "settle"],
            Shape::Daily => &["days"],
        }
    }
}

/// A standard load as given: `KIND[:KEY=VALUE,…]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Load {
    pub shape: Shape,
    /// Levels in per-mille of the span.
    low: i64,
    high: i64,
    /// The parameters given, durations in ms (`count` and `days` as numbers).
    given: Vec<(&'static str, i64)>,
}

impl Load {
    /// Every standard load with its defaults, in the order `diff` runs them.
    pub fn standard() -> Vec<Load> {
        Shape::ALL
            .iter()
            .map(|&(_, shape)| Load {
                shape,
                low: 0,
                high: 1000,
                given: Vec::new(),
            })
            .collect()
    }

    fn get(&self, key: &str) -> Option<i64> {
        self.given.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }
}

impl std::str::FromStr for Load {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (kind, parameters) = text.split_once(':').unwrap_or((text, ""));
        let names = || {
            Shape::ALL
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some(&(_, shape)) = Shape::ALL.iter().find(|(n, _)| *n == kind) else {
            return Err(format!(
                "unknown load `{kind}`: expected one of {}",
                names()
            ));
        };
        let mut load = Load {
            shape,
            low: 0,
            high: 1000,
            given: Vec::new(),
        };
        for parameter in parameters.split(',').filter(|p| !p.is_empty()) {
            let Some((key, value)) = parameter.split_once('=') else {
                return Err(format!("`{parameter}`: expected KEY=VALUE, e.g. at=5m"));
            };
            let (key, value) = (key.trim(), value.trim());
            match key {
                "low" => load.low = per_mille(value)?,
                "high" => load.high = per_mille(value)?,
                _ => {
                    let Some(&key) = shape.parameters().iter().find(|k| **k == key) else {
                        return Err(format!(
                            "`{key}`: {kind} takes {}, low and high",
                            shape.parameters().join(", ")
                        ));
                    };
                    let number = if matches!(key, "count" | "days") {
                        let limit = if key == "days" { MAX_DAYS } else { MAX_SPIKES };
                        value
                            .parse::<i64>()
                            .ok()
                            .filter(|n| (1..=limit).contains(n))
                            .ok_or_else(|| {
                                format!("{key}={value}: expected a whole number from 1 to {limit}")
                            })?
                    } else {
                        let duration = parse_duration(value).map_err(|e| format!("{key}: {e}"))?;
                        if duration > MAX_DAYS * DAY {
                            return Err(format!(
                                "{key}={value}: longer than {MAX_DAYS} days, the longest load"
                            ));
                        }
                        duration
                    };
                    if load.get(key).is_some() {
                        return Err(format!("`{key}` given twice"));
                    }
                    load.given.push((key, number));
                }
            }
        }
        if load.high < load.low {
            return Err(format!(
                "high={} is below low={}",
                percent(load.high),
                percent(load.low)
            ));
        }
        for key in ["width", "every", "rise", "fall"] {
            if load.get(key) == Some(0) {
                return Err(format!("{key} must be longer than 0s"));
            }
        }
        if let (Some(width), Some(every)) = (load.get("width"), load.get("every"))
            && width > every
        {
            return Err(format!(
                "width={} is longer than every={}: the spikes would overlap",
                format_duration(width),
                format_duration(every)
            ));
        }
        Ok(load)
    }
}

/// `40%` as per-mille; from 0 % to 1000 %.
fn per_mille(value: &str) -> Result<i64, String> {
    let number = value
        .strip_suffix('%')
        .and_then(|n| n.trim().parse::<f64>().ok())
        .filter(|n| (0.0..=1000.0).contains(n))
        .ok_or_else(|| {
            format!("`{value}`: expected a percentage of the span from 0% to 1000%, e.g. 40%")
        })?;
    Ok((number * 10.0).round() as i64)
}

fn percent(per_mille: i64) -> String {
    format!("{}%", per_mille as f64 / 10.0)
}

/// Why no standard load fits an HPA: a limit of the loads, not an error of
/// the input.
#[derive(Debug)]
pub struct NotApplicable(pub String);

impl fmt::Display for NotApplicable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotApplicable {}

/// What one spec contributes to the scale of a load.
pub struct Scale<'a> {
    pub autoscaler: &'a Autoscaler,
    /// Per metric of the HPA, its per-pod request (utilization targets).
    pub requests: &'a [Result<i64, String>],
}

impl Scale<'_> {
    /// Why the HPA never scales, if the controller fails every one of its
    /// metrics at every sync: the first one's reason.
    pub fn never_scales(&self) -> Option<String> {
        let metrics = self.autoscaler.metrics.iter().zip(self.requests);
        let mut reasons = metrics.map(|(kind, request)| fails_every_sync(kind, request));
        let first = reasons.next()??;
        reasons.all(|reason| reason.is_some()).then_some(first)
    }
}

/// Why the controller fails a metric at every sync, if it does: one it
/// cannot evaluate, or a utilization without the pods' requests or of
/// requests of 0.
fn fails_every_sync(kind: &MetricKind, request: &Result<i64, String>) -> Option<String> {
    match (kind, request) {
        (MetricKind::Invalid { name, message, .. }, _) => Some(format!(
            "the controller cannot evaluate the {name} metric ({message})"
        )),
        (_, Err(error)) => Some(format!(
            "the controller cannot compute the {} utilization ({error})",
            kind.name()
        )),
        (
            MetricKind::Resource {
                resource,
                target: ResourceTarget::Utilization(_),
                ..
            },
            Ok(0),
        ) => Some(format!(
            "the pods request 0 {resource}, so the controller cannot compute its utilization (no metrics returned matched known pods)"
        )),
        (_, Ok(_)) => None,
    }
}

/// The demand per pod at a metric's target, in milli-units: `None` for a
/// metric whose value does not follow the pods (an Object or External
/// `value` target) or that the controller cannot evaluate (a utilization of
/// requests of 0 among them).
pub fn per_pod_target(kind: &MetricKind, request: Option<&Result<i64, String>>) -> Option<f64> {
    match kind {
        MetricKind::Resource {
            target: ResourceTarget::Utilization(u),
            ..
        } => match request {
            // With requests of 0 the controller fails the metric.
            Some(Ok(request)) if *request > 0 => Some(*request as f64 * f64::from(*u) / 100.0),
            _ => None,
        },
        MetricKind::Resource {
            target: ResourceTarget::AverageValue(t),
            ..
        }
        | MetricKind::Pods { target: t, .. }
        | MetricKind::AverageOfTotal { target: t, .. } => Some(*t as f64),
        MetricKind::Value { .. } | MetricKind::Invalid { .. } => None,
    }
}

/// A load made concrete for some specs: its times and each column's span.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub shape: Shape,
    low: i64,
    high: i64,
    /// Every parameter's value, scaled ones included.
    parameters: Vec<(&'static str, i64)>,
    /// Per trace column: its name and the demand at 0 % and at 100 %, in
    /// milli-units (`None`: held at 0, a `value` target).
    pub spans: Vec<(String, Option<(f64, f64)>)>,
    pub end: Millis,
}

/// How long the slowest spec's fastest path takes (up or down), plus a margin,
/// in whole minutes: at least [`MIN_SCALED`], at most [`MAX_SCALED`].
fn scaled(scales: &[Scale<'_>], up: bool) -> Millis {
    let slowest = scales
        .iter()
        .map(|s| match velocity::fastest(s.autoscaler, up).end {
            End::Arrived(t) | End::Stuck(t) | End::Unfinished(t) => t,
        })
        .max()
        .unwrap_or(0);
    let minutes = (slowest + MARGIN + MINUTE - 1) / MINUTE * MINUTE;
    minutes.clamp(MIN_SCALED, MAX_SCALED)
}

impl Load {
    /// The load for these specs, their metrics' keys the trace columns in
    /// `names` ([`crate::simulate::trace::metric_keys`]).
    pub fn resolve(&self, scales: &[Scale<'_>], names: &[String]) -> Result<Resolved> {
        let mut spans = Vec::new();
        for name in names {
            let mut span: Option<(f64, f64)> = None;
            for scale in scales {
                let a = scale.autoscaler;
                let keys = metric_keys(a);
                for ((kind, request), key) in a.metrics.iter().zip(scale.requests).zip(keys) {
                    if key.as_ref() != Some(name) {
                        continue;
                    }
                    let Some(per_pod) = per_pod_target(kind, Some(request)) else {
                        continue;
                    };
                    let (low, high) = (
                        f64::from(a.min_replicas) * per_pod,
                        f64::from(a.max_replicas) * per_pod,
                    );
                    span = Some(span.map_or((low, high), |(l, h)| (l.min(low), h.max(high))));
                }
            }
            spans.push((name.clone(), span));
        }
        if spans.iter().all(|(_, s)| s.is_none()) {
            // A metric the controller fails at every sync says why.
            let failing = scales.iter().find_map(|scale| {
                let metrics = scale.autoscaler.metrics.iter().zip(scale.requests);
                metrics
                    .filter_map(|(kind, request)| fails_every_sync(kind, request))
                    .next()
            });
            return Err(NotApplicable(match failing {
                Some(why) => format!("{why}: every sync fails the metric"),
                None => "a standard load needs a metric whose demand is shared by the pods (Resource, ContainerResource, Pods, or an `averageValue` target); an Object or External `value` does not follow the replicas: give its history with --trace".to_owned(),
            })
            .into());
        }
        let mut parameters = self.given.clone();
        let mut default = |key: &'static str, value: Millis| {
            if !parameters.iter().any(|(k, _)| *k == key) {
                parameters.push((key, value));
            }
        };
        match self.shape {
            Shape::Step => {
                default("at", 5 * MINUTE);
                default("hold", scaled(scales, true));
                default("settle", scaled(scales, false));
            }
            Shape::Spike => {
                default("at", 5 * MINUTE);
                default("width", MINUTE);
                default("every", 10 * MINUTE);
                default("count", 3);
                default("settle", scaled(scales, false));
            }
            Shape::Ramp => {
                default("at", 5 * MINUTE);
                default("rise", 30 * MINUTE);
                default("hold", scaled(scales, true));
                default("fall", 30 * MINUTE);
                default("settle", scaled(scales, false));
            }
            Shape::Daily => default("days", 2),
        }
        let order = |key: &str| {
            self.shape
                .parameters()
                .iter()
                .position(|k| *k == key)
                .unwrap_or(0)
        };
        parameters.sort_by_key(|(k, _)| order(k));
        let mut resolved = Resolved {
            shape: self.shape,
            low: self.low,
            high: self.high,
            parameters,
            spans,
            end: 0,
        };
        resolved.end = resolved.length();
        if let (Some(width), Some(every)) = (resolved.get("width"), resolved.get("every"))
            && width > every
        {
            bail!(
                "--load spike: width={} is longer than every={}: the spikes would overlap",
                format_duration(width),
                format_duration(every)
            );
        }
        Ok(resolved)
    }
}

impl Resolved {
    fn get(&self, key: &str) -> Option<i64> {
        self.parameters
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| *v)
    }

    fn param(&self, key: &str) -> i64 {
        self.get(key).unwrap_or(0)
    }

    fn length(&self) -> Millis {
        let p = |k| self.param(k);
        match self.shape {
            Shape::Step => p("at") + p("hold") + p("settle"),
            Shape::Spike => p("at") + (p("count") - 1) * p("every") + p("width") + p("settle"),
            Shape::Ramp => p("at") + p("rise") + p("hold") + p("fall") + p("settle"),
            Shape::Daily => p("days") * DAY,
        }
    }

    /// The level at `t`, as a share of the span (0.0 at `low`).
    fn level(&self, t: Millis) -> f64 {
        let p = |k| self.param(k);
        let share = |part: Millis, whole: Millis| part as f64 / whole as f64;
        let fraction = match self.shape {
            Shape::Step => f64::from(u8::from(t >= p("at") && t < p("at") + p("hold"))),
            Shape::Spike => {
                let since = t - p("at");
                let spike = since.div_euclid(p("every"));
                let on = since >= 0 && spike < p("count") && since % p("every") < p("width");
                f64::from(u8::from(on))
            }
            Shape::Ramp => {
                let since = t - p("at");
                let (rise, hold, fall) = (p("rise"), p("hold"), p("fall"));
                if since < 0 || since >= rise + hold + fall {
                    0.0
                } else if since < rise {
                    share(since, rise)
                } else if since < rise + hold {
                    1.0
                } else {
                    1.0 - share(since - rise - hold, fall)
                }
            }
            Shape::Daily => {
                let phase = share(t % DAY, DAY);
                0.5 - 0.5 * (2.0 * std::f64::consts::PI * phase).cos()
            }
        };
        let (low, high) = (self.low as f64 / 1000.0, self.high as f64 / 1000.0);
        low + fraction * (high - low)
    }

    /// The trace: a row where a value changes, looked at every sync period,
    /// or every 15 s (metrics-server's resolution) when syncs are more often.
    pub fn trace(&self, period: Millis) -> Trace {
        let period = period.max(RESOLUTION);
        let mut rows: Vec<(Millis, Vec<i64>)> = Vec::new();
        let mut t = 0;
        while t <= self.end {
            let level = self.level(t);
            let values: Vec<i64> = self
                .spans
                .iter()
                .map(|(_, span)| {
                    span.map_or(0, |(low, high)| (low + level * (high - low)).round() as i64)
                })
                .collect();
            if rows.last().is_none_or(|(_, last)| *last != values) {
                rows.push((t, values));
            }
            t += period;
        }
        if rows.last().is_some_and(|(last, _)| *last < self.end) {
            let values = rows.last().map(|(_, v)| v.clone()).unwrap_or_default();
            rows.push((self.end, values));
        }
        Trace {
            columns: Columns::Metrics(self.spans.iter().map(|(n, _)| n.clone()).collect()),
            rows,
        }
    }

    /// The parameters as JSON: durations in seconds, levels as fractions.
    pub fn json(&self) -> Value {
        let mut about = Map::new();
        about.insert("kind".to_owned(), json!(self.shape.name()));
        about.insert("low".to_owned(), thousandths(self.low));
        about.insert("high".to_owned(), thousandths(self.high));
        for (key, value) in &self.parameters {
            let value = if matches!(*key, "count" | "days") {
                json!(value)
            } else {
                thousandths(*value)
            };
            about.insert((*key).to_owned(), value);
        }
        let spans: Map<String, Value> = self
            .spans
            .iter()
            .map(|(name, span)| {
                let span = span.map_or(
                    Value::Null,
                    |(low, high)| json!({"low": units(low), "high": units(high)}),
                );
                (name.clone(), span)
            })
            .collect();
        about.insert("spans".to_owned(), Value::Object(spans));
        Value::Object(about)
    }
}

/// Milli-units as units, to the milli-unit.
fn units(milli: f64) -> Value {
    thousandths(milli.round() as i64)
}

impl fmt::Display for Resolved {
    /// `step: 0% to 100% at 5m for 10m, then 0% for 10m`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = |k| format_duration(self.param(k));
        let (low, high) = (percent(self.low), percent(self.high));
        write!(f, "{}: ", self.shape.name())?;
        match self.shape {
            Shape::Step => write!(
                f,
                "{low}, {high} from {} for {}, then {low} for {}",
                d("at"),
                d("hold"),
                d("settle")
            ),
            Shape::Spike => write!(
                f,
                "{low}, {} spikes to {high} of {} every {} from {}, then {low} for {}",
                self.param("count"),
                d("width"),
                d("every"),
                d("at"),
                d("settle")
            ),
            Shape::Ramp => write!(
                f,
                "{low}, from {} up to {high} over {}, held {}, down over {}, then {low} for {}",
                d("at"),
                d("rise"),
                d("hold"),
                d("fall"),
                d("settle")
            ),
            Shape::Daily => write!(
                f,
                "{} days from {low} at 0h to {high} at 12h and back",
                self.param("days")
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(text: &str) -> Resolved {
        let load: Load = text.parse().unwrap();
        let mut parameters = load.given.clone();
        for (key, value) in [
            ("at", 60_000),
            ("hold", 120_000),
            ("settle", 60_000),
            ("width", 30_000),
            ("every", 60_000),
            ("count", 2),
            ("rise", 60_000),
            ("fall", 60_000),
            ("days", 1),
        ] {
            if !parameters.iter().any(|(k, _)| *k == key) {
                parameters.push((key, value));
            }
        }
        let mut r = Resolved {
            shape: load.shape,
            low: load.low,
            high: load.high,
            parameters,
            spans: vec![("cpu".to_owned(), Some((1000.0, 5000.0)))],
            end: 0,
        };
        r.end = r.length();
        r
    }

    fn values(r: &Resolved) -> Vec<(Millis, i64)> {
        r.trace(15_000)
            .rows
            .into_iter()
            .map(|(t, v)| (t, v[0]))
            .collect()
    }

    #[test]
    fn step_rises_and_falls_once() {
        let r = resolved("step");
        assert_eq!(
            values(&r),
            [(0, 1000), (60_000, 5000), (180_000, 1000), (240_000, 1000)]
        );
        let half = resolved("step:low=25%,high=50%");
        assert_eq!(values(&half)[..2], [(0, 2000), (60_000, 3000)]);
    }

    #[test]
    fn spikes_repeat() {
        let r = resolved("spike");
        assert_eq!(
            values(&r),
            [
                (0, 1000),
                (60_000, 5000),
                (90_000, 1000),
                (120_000, 5000),
                (150_000, 1000),
                (210_000, 1000)
            ]
        );
    }

    #[test]
    fn ramp_and_day_reach_the_top() {
        let ramp = values(&resolved("ramp"));
        assert_eq!(ramp.iter().map(|v| v.1).max(), Some(5000));
        assert!(ramp.contains(&(90_000, 3000)), "{ramp:?}");
        let day = values(&resolved("daily"));
        // A row holds until the next one.
        let at = |t: Millis| day.iter().rev().find(|r| r.0 <= t).map(|r| r.1);
        assert_eq!(at(0), Some(1000));
        assert_eq!(at(12 * 3_600_000), Some(5000));
        assert_eq!(at(6 * 3_600_000), Some(3000));
        assert_eq!(day.last().map(|r| r.0), Some(DAY));
    }

    #[test]
    fn bad_parameters_are_refused() {
        for (text, wanted) in [
            ("wave", "unknown load `wave`"),
            ("step:at", "expected KEY=VALUE"),
            ("step:width=1m", "step takes at, hold, settle"),
            ("step:low=20", "expected a percentage"),
            ("step:low=80%,high=20%", "below low=80%"),
            ("spike:count=0", "from 1 to 1000"),
            ("spike:width=5m,every=1m", "overlap"),
            ("ramp:rise=0s", "longer than 0s"),
            ("daily:days=61", "from 1 to 60"),
            ("step:at=1m,at=2m", "given twice"),
        ] {
            let error = text.parse::<Load>().unwrap_err();
            assert!(error.contains(wanted), "{text}: {error}");
        }
    }
}
