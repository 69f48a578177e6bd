//! A generated cluster history for the tests and the benchmark that replay
//! from a real Prometheus: the cAdvisor and kube-state-metrics series of a
//! Deployment whose pods come and go (scale-ups and scale-downs, a rolling
//! update to a new ReplicaSet, a pod that ends early and is replaced), with
//! a known total demand, written as OpenMetrics for
//! `promtool tsdb create-blocks-from openmetrics`.
//!
//! Sync k is at `start + 15 s × k`, and its interval is the 15 s before it.
//! Scrapes fall inside intervals, never on their bounds, so Prometheus 2
//! (closed range windows) and 3 (open on the left) see the same samples.
//! During interval k the pods alive all through it share the demand of
//! sync k: a `rate(…[15s])` or `last_over_time(…[15s])` at sync k, summed
//! over them, gives that demand exactly.

use std::io::{self, Write};

/// Seconds between syncs.
pub const SYNC: i64 = 15;

/// The HPA the replays run, and the Deployment whose pods the history
/// holds: CPU utilization over both containers, the memory of the `web`
/// container.
pub const MANIFESTS: &str = "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 12
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
  - type: ContainerResource
    containerResource: {name: memory, container: web, target: {type: AverageValue, averageValue: 300Mi}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: web, resources: {requests: {cpu: 400m, memory: 256Mi}}}
      - {name: sidecar, image: proxy, resources: {requests: {cpu: 100m, memory: 64Mi}}}
";

/// The random characters of generated names (no vowels, no 0, 1 or 3).
const NAME_CHARS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// A name's random part of `length` characters, from `seed`.
fn random_part(mut seed: u64, length: usize) -> String {
    (0..length)
        .map(|_| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            char::from(NAME_CHARS[(seed >> 33) as usize % NAME_CHARS.len()])
        })
        .collect()
}

/// A demand that rises, peaks and falls over `syncs` syncs, millicores of
/// cpu; memory follows it, bytes: the history the replay tests know.
pub fn rising_demand(syncs: usize) -> (Vec<i64>, Vec<i64>) {
    let cpu: Vec<i64> = (0..syncs)
        .map(|k| match k {
            0..40 => 900,
            40..120 => 900 + 40 * (k as i64 - 40),
            120..140 => 8_100,
            _ => 1_700,
        })
        .collect();
    let memory = cpu.iter().map(|c| (150 << 20) + c * 100_000).collect();
    (cpu, memory)
}

/// One pod: alive all through the intervals `first..=last` (sync indices).
#[derive(Clone, Debug)]
pub struct Pod {
    pub namespace: String,
    pub name: String,
    pub replicaset: String,
    pub first: i64,
    pub last: i64,
    /// Whether it belongs to the scaled Deployment (and shares its demand).
    pub scaled: bool,
}

/// What the history holds.
pub struct History {
    pub namespace: String,
    pub deployment: String,
    pub hpa: String,
    /// Unix seconds of sync 0.
    pub start: i64,
    /// Total CPU of the Deployment's containers at each sync, millicores.
    pub cpu: Vec<i64>,
    /// Total memory of the Deployment's `web` containers at each sync, bytes.
    pub memory: Vec<i64>,
    pub pods: Vec<Pod>,
    /// `status.currentReplicas` as kube-state-metrics scraped it at each sync.
    pub observed: Vec<i32>,
    /// Seconds before each sync at which every target is scraped.
    pub scrapes: Vec<i64>,
    /// Series that the built-in queries must leave out: the pod-level
    /// (`container=""`) and pause (`POD`) containers, a `sidecar` container's
    /// memory, another Deployment whose name starts alike, and a Deployment
    /// of the same name in another namespace.
    pub noise: bool,
    /// Whether kube-state-metrics is scraped (its owner and HPA series).
    pub kube_state_metrics: bool,
}

/// How the Deployment changes besides scaling.
pub struct Events {
    /// From this sync on, one old pod per sync is replaced by a pod of a new
    /// ReplicaSet; each old pod lives two more syncs (a surge).
    pub rolling_update: Option<i64>,
    /// At this sync the oldest pod ends (killed) and a replacement starts.
    pub pod_ends: Option<i64>,
}

impl History {
    /// The pods of a Deployment that has `desired[k]` replicas after sync k
    /// (the simulation's `desiredReplicas`), starting with `initial`.
    pub fn pods(
        namespace: &str,
        deployment: &str,
        initial: i32,
        desired: &[i32],
        events: &Events,
    ) -> Vec<Pod> {
        let syncs = i64::try_from(desired.len()).unwrap();
        let mut hashes = vec![random_part(1, 9)];
        let mut pods: Vec<Pod> = Vec::new();
        let mut alive: Vec<usize> = Vec::new();
        let create = |pods: &mut Vec<Pod>, hash: &str, created: i64| {
            let seed = 1000 + pods.len() as u64;
            pods.push(Pod {
                namespace: namespace.to_owned(),
                name: format!("{deployment}-{hash}-{}", random_part(seed, 5)),
                replicaset: format!("{deployment}-{hash}"),
                first: created + 1,
                last: syncs - 1,
                scaled: true,
            });
            pods.len() - 1
        };
        for _ in 0..initial {
            let pod = create(&mut pods, &hashes[0], -1);
            alive.push(pod);
        }
        let mut replaced = 0;
        for (k, &count) in desired.iter().enumerate() {
            let k = i64::try_from(k).unwrap();
            if events.rolling_update == Some(k) {
                hashes.push(random_part(2, 10));
            }
            let hash = hashes.last().unwrap().clone();
            if events.rolling_update.is_some_and(|r| k >= r) && replaced < alive.len() {
                let old = alive[replaced];
                if !pods[old].replicaset.ends_with(&hash) {
                    pods[old].last = k + 2;
                    alive[replaced] = create(&mut pods, &hash, k);
                }
                replaced += 1;
            }
            if events.pod_ends == Some(k) {
                let oldest = alive.remove(0);
                pods[oldest].last = k;
                let pod = create(&mut pods, &hash, k);
                alive.insert(0, pod);
            }
            while alive.len() < usize::try_from(count).unwrap() {
                let pod = create(&mut pods, &hash, k);
                alive.push(pod);
            }
            while alive.len() > usize::try_from(count).unwrap() {
                let newest = alive.pop().unwrap();
                pods[newest].last = k;
            }
        }
        pods.retain(|p| p.first <= p.last);
        pods
    }

    /// The other workloads' pods, when `noise` is on: always there.
    fn noise_pods(&self) -> Vec<Pod> {
        let syncs = i64::try_from(self.cpu.len()).unwrap();
        let pod = |namespace: &str, workload: &str, i: u64| {
            let hash = random_part(7, 8);
            Pod {
                namespace: namespace.to_owned(),
                name: format!("{workload}-{hash}-{}", random_part(70 + i, 5)),
                replicaset: format!("{workload}-{hash}"),
                first: 0,
                last: syncs - 1,
                scaled: false,
            }
        };
        let api = format!("{}-api", self.deployment);
        vec![
            pod(&self.namespace, &api, 1),
            pod(&self.namespace, &api, 2),
            pod("staging", &self.deployment, 3),
        ]
    }

    /// The history as OpenMetrics text.
    pub fn write_openmetrics(&self, out: &mut (impl Write + ?Sized)) -> io::Result<()> {
        let syncs = i64::try_from(self.cpu.len()).unwrap();
        self.writer().write(out, 0..syncs)
    }

    /// A writer of consecutive windows of the history, each a complete
    /// OpenMetrics text (`promtool` reads its whole input once per 2 h
    /// block: one file per block keeps long histories quick to load).
    pub fn writer(&self) -> Writer<'_> {
        let mut pods = self.pods.clone();
        if self.noise {
            pods.extend(self.noise_pods());
        }
        let mut containers = vec!["web", "sidecar"];
        if self.noise {
            containers.extend(["", "POD"]);
        }
        let mut replicasets: Vec<(String, String)> = pods
            .iter()
            .map(|p| (p.namespace.clone(), p.replicaset.clone()))
            .collect();
        replicasets.sort_unstable();
        replicasets.dedup();
        Writer {
            counters: vec![vec![(0.0, None); containers.len()]; pods.len()],
            history: self,
            pods,
            containers,
            replicasets,
        }
    }
    /// The same demand as a CSV trace: `time,cpu,memory`.
    pub fn csv(&self) -> String {
        let mut csv = String::from("time,cpu,memory\n");
        for (k, (cpu, memory)) in self.cpu.iter().zip(&self.memory).enumerate() {
            csv += &format!("{},{cpu}m,{memory}\n", k as i64 * SYNC);
        }
        csv
    }
}

/// A pod alive through an interval, with its shares of the demand
/// (millicores, bytes).
type Alive = (usize, (i64, i64));

/// Writes a history window by window; CPU counters carry over.
pub struct Writer<'h> {
    history: &'h History,
    pods: Vec<Pod>,
    containers: Vec<&'static str>,
    replicasets: Vec<(String, String)>,
    /// Per pod and container: CPU seconds so far, and the last sample's time.
    counters: Vec<Vec<(f64, Option<i64>)>>,
}

impl Writer<'_> {
    /// The usage of a container of pod p when the scaled pods' shares are
    /// `cpu` millicores and `memory` bytes: (millicores, bytes).
    fn usage(&self, p: usize, container: &str, (cpu, memory): (i64, i64)) -> (i64, i64) {
        let (cpu, memory) = if self.pods[p].scaled {
            (cpu, memory)
        } else {
            (300, 200 << 20)
        };
        let (sidecar_cpu, sidecar_memory, pause_cpu, pause_memory) =
            (cpu / 5, 30 << 20, 2, 1 << 20);
        match container {
            "web" => (cpu - sidecar_cpu, memory),
            "sidecar" => (sidecar_cpu, sidecar_memory),
            "POD" => (pause_cpu, pause_memory),
            _ => (cpu + pause_cpu, memory + sidecar_memory + pause_memory),
        }
    }

    /// The pods alive through interval k, each with its shares of the
    /// demand of sync k (integer shares that add up to the demand).
    fn alive(&self, k: i64) -> Vec<Alive> {
        let history = self.history;
        let index = usize::try_from(k).unwrap();
        let alive: Vec<usize> = (0..self.pods.len())
            .filter(|&p| (self.pods[p].first..=self.pods[p].last).contains(&k))
            .collect();
        let scaled = alive.iter().filter(|&&p| self.pods[p].scaled).count();
        assert!(scaled > 0, "no pod carries the demand of sync {k}");
        let count = i64::try_from(scaled).unwrap();
        let share = |total: i64, i: usize| {
            total / count + i64::from(i64::try_from(i).unwrap() < total % count)
        };
        let mut i = 0;
        alive
            .into_iter()
            .map(|p| {
                if !self.pods[p].scaled {
                    return (p, (0, 0));
                }
                i += 1;
                (
                    p,
                    (
                        share(history.cpu[index], i - 1),
                        share(history.memory[index], i - 1),
                    ),
                )
            })
            .collect()
    }

    /// The samples of syncs `window` (after those of the windows before).
    pub fn write(
        &mut self,
        out: &mut (impl Write + ?Sized),
        window: std::ops::Range<i64>,
    ) -> io::Result<()> {
        let history = self.history;
        let mut scrapes = history.scrapes.clone();
        scrapes.sort_unstable_by(|a, b| b.cmp(a));
        let times = |k: i64| {
            scrapes
                .iter()
                .map(move |before| history.start + SYNC * k - before)
        };
        let alive: Vec<(i64, Vec<Alive>)> = window.clone().map(|k| (k, self.alive(k))).collect();
        let labels = |pod: &Pod, container: &str| {
            format!(
                "namespace=\"{}\",pod=\"{}\",container=\"{container}\"",
                pod.namespace, pod.name
            )
        };
        for (k, pods) in &alive {
            for time in times(*k) {
                for &(p, shares) in pods {
                    for c in 0..self.containers.len() {
                        let container = self.containers[c];
                        let millicores = self.usage(p, container, shares).0;
                        // A counter that has run before its first sample, so
                        // that Prometheus' extrapolation towards zero does not
                        // cut the first rate.
                        let (seconds, last) = &mut self.counters[p][c];
                        *seconds +=
                            millicores as f64 * last.map_or(5, |t| time - t) as f64 / 1000.0;
                        *last = Some(time);
                        let seconds = *seconds;
                        let labels = labels(&self.pods[p], container);
                        writeln!(
                            out,
                            "container_cpu_usage_seconds_total{{{labels}}} {seconds} {time}"
                        )?;
                    }
                }
            }
        }
        for (k, pods) in &alive {
            for time in times(*k) {
                for &(p, shares) in pods {
                    for &container in &self.containers {
                        let bytes = self.usage(p, container, shares).1;
                        let labels = labels(&self.pods[p], container);
                        writeln!(
                            out,
                            "container_memory_working_set_bytes{{{labels}}} {bytes} {time}"
                        )?;
                    }
                }
            }
        }
        if !history.kube_state_metrics {
            return writeln!(out, "# EOF");
        }
        for (k, pods) in &alive {
            for time in times(*k) {
                for &(p, _) in pods {
                    let pod = &self.pods[p];
                    writeln!(
                        out,
                        "kube_pod_owner{{namespace=\"{}\",pod=\"{}\",owner_kind=\"ReplicaSet\",owner_name=\"{}\",owner_is_controller=\"true\"}} 1 {time}",
                        pod.namespace, pod.name, pod.replicaset
                    )?;
                }
            }
        }
        for (k, _) in &alive {
            for time in times(*k) {
                for (namespace, replicaset) in &self.replicasets {
                    let deployment = replicaset.rsplit_once('-').unwrap().0;
                    writeln!(
                        out,
                        "kube_replicaset_owner{{namespace=\"{namespace}\",replicaset=\"{replicaset}\",owner_kind=\"Deployment\",owner_name=\"{deployment}\",owner_is_controller=\"true\"}} 1 {time}"
                    )?;
                }
            }
        }
        for (k, _) in &alive {
            for time in times(*k) {
                writeln!(
                    out,
                    "kube_horizontalpodautoscaler_status_current_replicas{{namespace=\"{}\",horizontalpodautoscaler=\"{}\"}} {} {time}",
                    history.namespace,
                    history.hpa,
                    history.observed[usize::try_from(*k).unwrap()]
                )?;
            }
        }
        writeln!(out, "# EOF")
    }
}
