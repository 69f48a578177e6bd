//! The fastest paths that `hpa-lint behavior`, `slow-scale-up` and
//! `ineffective-policy` report are what `hpa-lint simulate` shows under a
//! step of demand: both drive the same reconcile, and this keeps them so.

use serde_json::json;

use crate::cluster::Cluster;
use crate::controller::simulate::{Demand, Model, Simulation};
use crate::controller::velocity::fastest;
use crate::controller::{Autoscaler, ControllerFlags, Millis};
use crate::model::hpa::Hpa;
use crate::object::{Object, Origin};

fn autoscaler(min: i32, max: i32, behavior: Option<serde_json::Value>) -> Autoscaler {
    let mut spec = json!({
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": min,
        "maxReplicas": max,
        "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}],
    });
    if let Some(behavior) = behavior {
        spec["behavior"] = behavior;
    }
    let value = json!({
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": spec,
    });
    let object = Object::new(value, Origin(0), "default").expect("an object");
    let hpa = Hpa::decode(&object, &Cluster::default(), None).expect("an HPA");
    Autoscaler::new(&hpa, ControllerFlags::default(), &Cluster::default())
}

/// The changes of replicas a simulation makes when the raw recommendation is
/// `from` at time 0 and `to` from the next sync on.
fn simulated(autoscaler: &Autoscaler, from: i32, to: i32, until: Millis) -> Vec<(Millis, i32)> {
    let model = Model {
        replicas: from,
        pod_startup: 0,
        metric_window: 15_000,
    };
    let mut simulation = Simulation::new(autoscaler, model, Vec::new());
    let period = autoscaler.flags.sync_period;
    let mut changes = Vec::new();
    let mut now = 0;
    while now <= until {
        let demand = Demand::Replicas(if now == 0 { from } else { to });
        let step = simulation.sync(now, &demand).expect("few pods");
        if step.outcome.desired != step.current {
            changes.push((now, step.outcome.desired));
        }
        now += period;
    }
    changes
}

#[test]
fn fastest_paths_are_what_the_simulation_does() {
    let behaviors = [
        // The legacy path: no behavior.
        None,
        // The API server's defaults written out.
        Some(json!({})),
        // The docs' example: Pods 4 or Percent 100 % every 15 s (Max), and
        // a scale-down of one pod a minute after a 10-minute window.
        Some(json!({
            "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
                {"type": "Pods", "value": 4, "periodSeconds": 15},
                {"type": "Percent", "value": 100, "periodSeconds": 15}]},
            "scaleDown": {"stabilizationWindowSeconds": 600, "policies": [
                {"type": "Pods", "value": 1, "periodSeconds": 60}]},
        })),
        // Min of two policies over different periods, with an up window.
        Some(json!({
            "scaleUp": {"stabilizationWindowSeconds": 120, "selectPolicy": "Min", "policies": [
                {"type": "Pods", "value": 5, "periodSeconds": 60},
                {"type": "Percent", "value": 50, "periodSeconds": 30}]},
            "scaleDown": {"stabilizationWindowSeconds": 60, "selectPolicy": "Max", "policies": [
                {"type": "Percent", "value": 20, "periodSeconds": 45},
                {"type": "Pods", "value": 3, "periodSeconds": 90}]},
        })),
    ];
    for behavior in behaviors {
        for (min, max) in [(1, 10), (2, 50), (3, 200)] {
            let autoscaler = autoscaler(min, max, behavior.clone());
            for up in [true, false] {
                let path = fastest(&autoscaler, up);
                let until = path.arrival().expect("the bound is reached");
                let (from, to) = if up { (min, max) } else { (max, min) };
                assert_eq!(
                    simulated(&autoscaler, from, to, until),
                    path.steps,
                    "{behavior:?} {min}..{max} up: {up}"
                );
            }
        }
    }
}
