//! Where a review's time goes, without TLS or HTTP: parsing the
//! `AdmissionReview`, deciding (rules, patch) and writing the answer, timed
//! in-process on one thread. The caches hold the stub API server's objects,
//! stored through reflector writers as the watchers store them.

use std::time::{Duration, Instant};

use hpa_lint_webhook::admission::{self, Decision};
use hpa_lint_webhook::cache::{Cache, Cached, ClusterIndex, Kind};
use hpa_lint_webhook::policy::Policy;
use kube::api::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionReview};
use kube::runtime::watcher::Event;

use super::apiserver::{self, Counts};

/// Mean time per review of each phase.
pub struct Phases {
    pub parse: Duration,
    pub decide: Duration,
    pub answer: Duration,
    /// What the last review decided, to show the work was done.
    pub decision: Decision,
}

/// The webhook's caches, synced, holding what the stub serves.
pub fn cluster(counts: &Counts) -> Result<ClusterIndex, String> {
    let mut caches = Vec::new();
    for kind in Kind::ALL {
        let (cache, mut writer) = Cache::new(kind, None);
        writer.apply_watcher_event(&Event::Init);
        for value in apiserver::objects(kind.plural(), counts) {
            let object: DynamicObject = serde_json::from_value(value).map_err(|e| e.to_string())?;
            writer.apply_watcher_event(&Event::InitApply(Cached::new(kind, &object)));
        }
        writer.apply_watcher_event(&Event::InitDone);
        caches.push(cache);
    }
    Ok(ClusterIndex::new(caches))
}

/// Reviews `body` `reviews` times at `/validate` or `/mutate` with the default
/// policy, as `hpa-webhook` does without `--config`.
pub fn measure(
    index: &ClusterIndex,
    mutate: bool,
    body: &[u8],
    reviews: u32,
) -> Result<Phases, String> {
    let policy = Policy::default();
    let (mut parse, mut decide, mut answer) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let mut decision = Decision::Invalid;
    for _ in 0..reviews {
        let started = Instant::now();
        let review: AdmissionReview<DynamicObject> =
            serde_json::from_slice(body).map_err(|e| e.to_string())?;
        let mut request: AdmissionRequest<DynamicObject> =
            review.try_into().map_err(|_| "no request".to_owned())?;
        let parsed = Instant::now();
        let reviewed = if mutate {
            admission::mutate(&policy, index, &mut request)
        } else {
            admission::validate(&policy, index, &mut request)
        };
        let decided = Instant::now();
        let json = admission::review_json(reviewed.response);
        std::hint::black_box(serde_json::to_vec(&json).map_err(|e| e.to_string())?);
        drop((request, json));
        parse += parsed - started;
        decide += decided - parsed;
        answer += decided.elapsed();
        decision = reviewed.decision;
    }
    Ok(Phases {
        parse: parse / reviews,
        decide: decide / reviews,
        answer: answer / reviews,
        decision,
    })
}
