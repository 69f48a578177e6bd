//! The replica calculator (C5): one metric's proposal from pods, samples and
//! requests, with the readiness rules, the missing-pod fills and the integer
//! and float arithmetic of `replica_calculator.go` and `metrics/utilization.go`.

use super::flags::{ControllerFlags, Millis};
use crate::cluster::FeatureGates;
use crate::model::go::{ceil_i32, f64_to_i64};
use crate::model::quantity::Quantity;
use crate::model::workload::{DefaultRequests, PodTemplate};
use crate::path::Json;

/// A pod's `status.phase`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// `Pending`: always unready (C5.3).
    Pending,
    /// `Running`.
    Running,
    /// `Succeeded`: no special treatment.
    Succeeded,
    /// `Failed`: ignored.
    Failed,
    /// `Unknown`: no special treatment.
    Unknown,
}

/// The pod's `Ready` condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadyCondition {
    /// `status == True`.
    pub ready: bool,
    /// `status == False` (`Unknown` is neither).
    pub not_ready: bool,
    /// `lastTransitionTime`.
    pub since: Millis,
}

impl ReadyCondition {
    /// `status: True` or `False` since `since`.
    pub fn new(ready: bool, since: Millis) -> Self {
        Self {
            ready,
            not_ready: !ready,
            since,
        }
    }
}

/// What the controller reads of a pod.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PodState {
    /// `status.phase`.
    pub phase: Phase,
    /// `metadata.deletionTimestamp` is set.
    pub deleting: bool,
    /// `status.startTime`.
    pub start: Option<Millis>,
    /// The `Ready` condition.
    pub ready: Option<ReadyCondition>,
}

/// A resource metrics sample (metrics-server): usage with its time and window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    /// Usage in milli-units.
    pub value: i64,
    /// `timestamp`.
    pub timestamp: Millis,
    /// `window`.
    pub window: Millis,
}

/// The pods the selector lists and the samples the metrics API returned.
#[derive(Clone, Copy, Debug)]
pub struct PodMetrics<'a> {
    /// Listed pods.
    pub pods: &'a [PodState],
    /// The sample of each listed pod (`None`: no sample).
    pub samples: &'a [Option<Sample>],
    /// Samples of pods that are not listed (they still count in some sums).
    pub unlisted: &'a [i64],
    /// Each listed pod's request (utilization only), or the request error.
    pub requests: Result<&'a [i64], &'a str>,
}

/// `Tolerances.isWithin`: inclusive at both ends (C5.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerances {
    /// Scale-down tolerance.
    pub down: f64,
    /// Scale-up tolerance.
    pub up: f64,
}

impl Tolerances {
    /// Whether `ratio` is too close to 1 to act on.
    pub fn is_within(self, ratio: f64) -> bool {
        1.0 - self.down <= ratio && ratio <= 1.0 + self.up
    }
}

/// A proposal from a per-pod metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proposal {
    /// Replicas.
    pub replicas: i32,
    /// `averageUtilization` reported in the status (utilization targets).
    pub utilization: Option<i32>,
    /// `averageValue` reported in the status, in milli-units.
    pub average: i64,
}

/// How `groupPods` files a pod (C5.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Group {
    Ready,
    Unready,
    Missing,
    Ignored,
}

/// `groupPods` (C5.3): readiness is judged only for the `cpu` resource.
pub(crate) fn group(
    pod: &PodState,
    sample: Option<&Sample>,
    cpu: bool,
    flags: &ControllerFlags,
    now: Millis,
) -> Group {
    if pod.deleting || pod.phase == Phase::Failed {
        return Group::Ignored;
    }
    if pod.phase == Phase::Pending {
        return Group::Unready;
    }
    let Some(sample) = sample else {
        return Group::Missing;
    };
    if cpu {
        let unready = match (pod.ready, pod.start) {
            (Some(condition), Some(start)) => {
                if start + flags.cpu_initialization_period > now {
                    condition.not_ready || sample.timestamp < condition.since + sample.window
                } else {
                    condition.not_ready && start + flags.initial_readiness_delay > condition.since
                }
            }
            _ => true,
        };
        if unready {
            return Group::Unready;
        }
    }
    Group::Ready
}

/// The usage values the calculation works on: per listed pod (`None`: left
/// out) plus the unlisted samples.
struct Usage<'a> {
    listed: Vec<Option<i64>>,
    unlisted: &'a [i64],
}

impl Usage<'_> {
    fn len(&self) -> usize {
        self.listed.iter().flatten().count() + self.unlisted.len()
    }

    /// `GetResourceUtilizationRatio`: only samples of listed pods (which have
    /// requests) count; the percentage is truncated to an int32.
    fn utilization(&self, requests: &[i64], target: i32) -> Result<(f64, i32, i64), String> {
        let (mut usage, mut request, mut count) = (0_i64, 0_i64, 0_i64);
        for (value, req) in self.listed.iter().zip(requests) {
            if let Some(value) = value {
                usage = usage.wrapping_add(*value);
                request = request.wrapping_add(*req);
                count += 1;
            }
        }
        if request == 0 {
            return Err("no metrics returned matched known pods".to_owned());
        }
        let utilization = (usage.wrapping_mul(100) / request) as i32;
        Ok((
            f64::from(utilization) / f64::from(target),
            utilization,
            usage / count,
        ))
    }

    /// `GetMetricUsageRatio`: the truncated average of every sample.
    fn average(&self, target: i64) -> (f64, i64) {
        let total = self
            .listed
            .iter()
            .flatten()
            .chain(self.unlisted)
            .fold(0_i64, |sum, v| sum.wrapping_add(*v));
        let average = total / self.len() as i64;
        (average as f64 / target as f64, average)
    }
}

/// What the two per-pod algorithms differ in.
enum Target<'a> {
    /// Utilization in percent of the requests (C5.5).
    Utilization {
        percent: i32,
        requests: Result<&'a [i64], &'a str>,
    },
    /// A plain average (C5.6).
    Average(i64),
}

impl Target<'_> {
    fn ratio(&self, usage: &Usage<'_>) -> Result<(f64, Option<i32>, i64), String> {
        match *self {
            Target::Utilization { percent, requests } => usage
                .utilization(requests.map_err(str::to_owned)?, percent)
                .map(|(ratio, utilization, raw)| (ratio, Some(utilization), raw)),
            Target::Average(target) => {
                let (ratio, average) = usage.average(target);
                Ok((ratio, None, average))
            }
        }
    }

    /// What a missing pod is taken to use on a scale-down.
    fn fill(&self, pod: usize) -> i64 {
        match *self {
            Target::Utilization { percent, requests } => {
                let request = requests.map_or(0, |r| r[pod]);
                request.wrapping_mul(i64::from(percent.max(100))) / 100
            }
            Target::Average(target) => target,
        }
    }
}

/// The shared algorithm of C5.5 and C5.6.
fn per_pod(
    input: &PodMetrics<'_>,
    current: i32,
    target: &Target<'_>,
    cpu: bool,
    tolerances: Tolerances,
    flags: &ControllerFlags,
    now: Millis,
) -> Result<Proposal, String> {
    if input.samples.iter().all(Option::is_none) && input.unlisted.is_empty() {
        return Err("no metrics returned from the metrics API".to_owned());
    }
    if input.pods.is_empty() {
        return Err("no pods returned by selector while calculating replica count".to_owned());
    }
    let groups: Vec<Group> = input
        .pods
        .iter()
        .zip(input.samples)
        .map(|(pod, sample)| group(pod, sample.as_ref(), cpu, flags, now))
        .collect();
    let ready_count = groups.iter().filter(|g| **g == Group::Ready).count();
    let mut usage = Usage {
        listed: groups
            .iter()
            .zip(input.samples)
            .map(|(g, s)| s.filter(|_| *g == Group::Ready).map(|s| s.value))
            .collect(),
        unlisted: input.unlisted,
    };
    if usage.len() == 0 {
        return Err("did not receive metrics for targeted pods (pods might be unready)".to_owned());
    }
    let (ratio, utilization, average) = target.ratio(&usage)?;
    let proposal = |replicas| Proposal {
        replicas,
        utilization,
        average,
    };
    let has = |wanted: Group| groups.contains(&wanted);
    let up_with_unready = has(Group::Unready) && ratio > 1.0;
    if !up_with_unready && !has(Group::Missing) {
        if tolerances.is_within(ratio) {
            return Ok(proposal(current));
        }
        return Ok(proposal(ceil_i32(ratio * ready_count as f64)));
    }
    for (i, g) in groups.iter().enumerate() {
        match g {
            Group::Missing if ratio < 1.0 => usage.listed[i] = Some(target.fill(i)),
            Group::Missing if ratio > 1.0 => usage.listed[i] = Some(0),
            Group::Unready if up_with_unready => usage.listed[i] = Some(0),
            _ => {}
        }
    }
    let (new_ratio, _, _) = target.ratio(&usage)?;
    if tolerances.is_within(new_ratio)
        || (ratio < 1.0 && new_ratio > 1.0)
        || (ratio > 1.0 && new_ratio < 1.0)
    {
        return Ok(proposal(current));
    }
    let replicas = ceil_i32(new_ratio * usage.len() as f64);
    if (new_ratio < 1.0 && replicas > current) || (new_ratio > 1.0 && replicas < current) {
        return Ok(proposal(current));
    }
    Ok(proposal(replicas))
}

/// `GetResourceReplicas` (C5.5): a utilization target in percent.
pub fn resource_utilization(
    input: &PodMetrics<'_>,
    current: i32,
    target_percent: i32,
    cpu: bool,
    tolerances: Tolerances,
    flags: &ControllerFlags,
    now: Millis,
) -> Result<Proposal, String> {
    // The requests are read (and fail) once the samples are grouped.
    let target = Target::Utilization {
        percent: target_percent,
        requests: input.requests,
    };
    per_pod(input, current, &target, cpu, tolerances, flags, now)
}

/// `GetRawResourceReplicas` and `GetMetricReplicas` (C5.6): a per-pod average
/// target in milli-units (`cpu` only for a cpu resource metric).
pub fn average_value(
    input: &PodMetrics<'_>,
    current: i32,
    target: i64,
    cpu: bool,
    tolerances: Tolerances,
    flags: &ControllerFlags,
    now: Millis,
) -> Result<Proposal, String> {
    per_pod(
        input,
        current,
        &Target::Average(target),
        cpu,
        tolerances,
        flags,
        now,
    )
}

/// `getReadyPodsCount`: Running pods whose `Ready` is `True`.
pub fn ready_pods(pods: &[PodState]) -> Result<i64, String> {
    if pods.is_empty() {
        return Err("no pods returned by selector while calculating replica count".to_owned());
    }
    Ok(pods
        .iter()
        .filter(|p| p.phase == Phase::Running && p.ready.is_some_and(|r| r.ready))
        .count() as i64)
}

/// `GetObjectMetricReplicas` / `GetExternalMetricReplicas` (C5.7): a `Value`
/// target, scaled by the number of ready pods.
pub fn value(
    usage: i64,
    target: i64,
    current: i32,
    pods: &[PodState],
    tolerances: Tolerances,
) -> Result<i32, String> {
    let ratio = usage as f64 / target as f64;
    if current == 0 {
        // Only reachable through HPAScaleToZero: no tolerance, no pods.
        return Ok(ceil_i32(ratio));
    }
    if tolerances.is_within(ratio) {
        return Ok(current);
    }
    let replicas = ratio * ready_pods(pods)? as f64;
    Ok(if replicas > f64::from(i32::MAX) {
        i32::MAX
    } else {
        ceil_i32(replicas)
    })
}

/// `GetObjectPerPodMetricReplicas` / `GetExternalPerPodMetricReplicas`
/// (C5.8): an `AverageValue` target against `status.replicas`. Returns the
/// replicas and the average reported in the status.
pub fn average_of_total(
    usage: i64,
    target: i64,
    status_replicas: i32,
    tolerances: Tolerances,
    external: bool,
) -> (i32, i64) {
    let ratio = usage as f64 / (target as f64 * f64::from(status_replicas));
    let mut replicas = status_replicas;
    if !tolerances.is_within(ratio) {
        let wanted = (usage as f64 / target as f64).ceil();
        replicas = if external && wanted > f64::from(i32::MAX) {
            i32::MAX
        } else {
            crate::model::go::f64_to_i32(wanted)
        };
    }
    let average = if external && usage as f64 >= i64::MAX as f64 {
        i64::MAX
    } else {
        f64_to_i64((usage as f64 / f64::from(status_replicas)).ceil())
    };
    (replicas, average)
}

/// The sum of external values (C5.7, C5.8): capped at `MaxInt64` before an
/// overflow for a `Value` target, and set to it once the sum has wrapped
/// negative for an `AverageValue` target, as the two Go functions do.
pub fn external_sum(values: &[i64], average_value: bool) -> i64 {
    let mut sum = 0_i64;
    for &v in values {
        if average_value {
            sum = sum.wrapping_add(v);
            if sum < 0 {
                return i64::MAX;
            }
        } else if v > 0 && sum > i64::MAX - v {
            return i64::MAX;
        } else {
            sum += v;
        }
    }
    sum
}

/// The request a pod has for a resource, and where it is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PodRequest {
    /// In thousandths.
    pub milli: i64,
    pub from: RequestFrom,
}

/// Where [`template_request`] reads a pod's request from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestFrom {
    /// The pod-level request as written.
    PodLevelRequest,
    /// The pod-level limit, which `defaultPodRequests` copies.
    PodLevelLimit,
    /// What every container (plain init containers too) requests together
    /// at the pod level: as written (`defaultPodRequests`), or `admitted`,
    /// with what the namespace's LimitRanges give those that request nothing.
    AllContainers { admitted: bool },
    /// The counted containers' requests, or the named container's.
    CountedContainers,
}

/// The request a pod of `template` has for `resource` (`calculateRequests`):
/// from the pod level for a Resource metric while `PodLevelResources` is on
/// and the pod sets a pod-level request or limit, else the named container's,
/// else the sum over containers and sidecars; an error where the controller
/// finds one missing. A container that requests nothing gets what `defaults`
/// (its namespace's LimitRanges) give it; the pod level was worked out
/// before they apply.
pub fn template_request<V: Json>(
    template: &PodTemplate<'_, V>,
    resource: &str,
    container: Option<&str>,
    gates: &FeatureGates,
    defaults: &DefaultRequests,
) -> Result<PodRequest, String> {
    let quantity = |v: Option<&V>| v.and_then(Quantity::milli_from_json);
    let default = defaults.get(resource).and_then(Quantity::milli_from_json);
    let from = |from| move |milli| PodRequest { milli, from };
    if container.is_none() && template.uses_pod_level(gates) {
        // `calculatePodLevelRequests`: the pod-level request as written, or
        // as `defaultPodRequests` fills it at decoding when the pod sets
        // pod-level limits (from what the containers request together, for
        // cpu and memory, else from the limit); otherwise `PodRequests` adds
        // up what the admitted containers request, LimitRange defaults
        // included.
        let defaulted = || {
            let overcommitted = matches!(resource, "cpu" | "memory");
            let written = RequestFrom::AllContainers { admitted: false };
            overcommitted
                .then(|| template.aggregate_request(resource, None))
                .flatten()
                .map(from(written))
                .or_else(|| {
                    quantity(template.pod_level_limit(resource, gates))
                        .map(from(RequestFrom::PodLevelLimit))
                })
        };
        let admitted = RequestFrom::AllContainers { admitted: true };
        return quantity(template.pod_level_request(resource, gates))
            .map(from(RequestFrom::PodLevelRequest))
            .or_else(|| {
                template
                    .has_pod_level_limits(gates)
                    .then(defaulted)
                    .flatten()
            })
            .or_else(|| {
                template
                    .aggregate_request(resource, defaults.get(resource))
                    .map(from(admitted))
            })
            .ok_or_else(|| format!("missing pod-level request for {resource} of the target"));
    }
    let requests = template.counted_containers().map(|c| {
        let request = match c.effective_request(resource) {
            Some(request) => quantity(Some(request)),
            None => default,
        };
        (c.name, request)
    });
    pod_request(requests, container, resource, "of the target")
        .map(from(RequestFrom::CountedContainers))
}

/// The per-pod requests (`calculatePodRequestsFromContainers`): the named
/// container's, else the sum over regular containers and sidecars.
pub fn pod_request<'a>(
    containers: impl IntoIterator<Item = (&'a str, Option<i64>)>,
    container: Option<&str>,
    resource: &str,
    pod: &str,
) -> Result<i64, String> {
    let mut total = 0_i64;
    for (name, request) in containers {
        if container.is_none_or(|c| c == name) {
            let Some(request) = request else {
                return Err(format!(
                    "missing request for {resource} in container {name} of Pod {pod}"
                ));
            };
            total = total.wrapping_add(request);
        }
        if container == Some(name) {
            return Ok(total);
        }
    }
    match container {
        Some(c) => Err(format!("container {c} not found in Pod {pod}")),
        None => Ok(total),
    }
}
