//! `simulate-bench`: the HPA controller simulator on a 30-day trace at 15 s
//! syncs (172,800 syncs) for one HPA, in metric mode (CPU utilization through
//! the pod model and the replica calculator) and in `replicas` mode
//! (normalization only). Reports syncs per second; see `bench/README.md`.

use std::f64::consts::TAU;
use std::time::{Duration, Instant};

use clap::Parser;
use hpa_lint_rules::controller::simulate::{Demand, Model, Simulation};
use hpa_lint_rules::controller::{Autoscaler, ControllerFlags};
use hpa_lint_rules::model::hpa::Hpa;
use hpa_lint_rules::{Object, Origin, Settings};
use serde_json::json;

/// Times the simulator on a 30-day trace.
#[derive(Parser)]
struct Args {
    /// Runs of each mode; the report gives the fastest and the median.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Days of trace.
    #[arg(long, default_value_t = 30)]
    days: i64,
}

const SYNC: i64 = 15_000;
const DAY: i64 = 86_400_000;

/// A day-night cycle of 5 to 25 cores with ±10 % of deterministic noise.
fn demand(step: i64, seed: &mut u64) -> i64 {
    *seed = seed
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    let noise = ((*seed >> 33) % 2001) as f64 / 10_000.0 - 0.1;
    let phase = (step * SYNC % DAY) as f64 / DAY as f64;
    let cores = 5.0 + 20.0 * (1.0 - (TAU * phase).cos()) / 2.0;
    (cores * (1.0 + noise) * 1000.0) as i64
}

fn autoscaler() -> Autoscaler {
    let value = json!({
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "bench"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 2,
            "maxReplicas": 60,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}],
            "behavior": {"scaleDown": {"policies": [{"type": "Percent", "value": 10, "periodSeconds": 60}]}},
        },
    });
    let settings = Settings::default();
    let object = Object::new(value, Origin::default(), "default").expect("an object");
    let hpa = Hpa::decode(&object, &settings.cluster, None).expect("an HPA");
    Autoscaler::new(&hpa, ControllerFlags::default(), &settings.cluster)
}

/// One run: the time and the replica-seconds (so the work cannot be skipped).
fn run(autoscaler: &Autoscaler, demands: &[Demand]) -> (Duration, i64) {
    let model = Model {
        replicas: 2,
        pod_startup: 30_000,
        metric_window: 15_000,
    };
    let start = Instant::now();
    let mut simulation = Simulation::new(autoscaler, model, vec![Ok(500)]);
    let mut total = 0;
    for (i, demand) in demands.iter().enumerate() {
        total += i64::from(
            simulation
                .sync(i as i64 * SYNC, demand)
                .expect("the trace stays within the pods a cluster holds")
                .outcome
                .desired,
        );
    }
    (start.elapsed(), total)
}

fn main() {
    let args = Args::parse();
    let autoscaler = autoscaler();
    let steps = args.days * DAY / SYNC;
    let mut seed = 1;
    let cpu: Vec<i64> = (0..steps).map(|i| demand(i, &mut seed)).collect();
    let metric: Vec<Demand> = cpu.iter().map(|&c| Demand::Metrics(vec![c])).collect();
    // The recommendation a 60 % target at 500m per pod gives for that demand.
    let replicas: Vec<Demand> = cpu
        .iter()
        .map(|&c| Demand::Replicas(i32::try_from((c + 299) / 300).unwrap_or(i32::MAX)))
        .collect();
    println!(
        "simulate-bench: {} days at 15 s syncs = {steps} syncs, one HPA (CPU 60 %, 2 to 60 replicas), {} runs each",
        args.days, args.runs
    );
    println!("| mode | fastest | median | syncs/s (median) | replica-hours |");
    println!("|---|---|---|---|---|");
    for (name, demands) in [
        ("metrics (pod model + replica calculator)", &metric),
        ("replicas (normalization only)", &replicas),
    ] {
        let mut times = Vec::new();
        let mut work = 0;
        for _ in 0..args.runs.max(1) {
            let (time, total) = run(&autoscaler, demands);
            times.push(time);
            work = total;
        }
        times.sort();
        let median = times[times.len() / 2];
        println!(
            "| {name} | {:.1} ms | {:.1} ms | {:.0} | {} |",
            times[0].as_secs_f64() * 1000.0,
            median.as_secs_f64() * 1000.0,
            steps as f64 / median.as_secs_f64(),
            work * SYNC / 3_600_000,
        );
    }
}
