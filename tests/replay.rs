//! Replays from a real Prometheus (Debian's package, `.ci/install-tools`)
//! loaded with a generated history: the built-in queries give the known
//! demand exactly, whichever way pods are matched.

mod common;

use common::history::{Events, History};
use common::prometheus::Prometheus;
use hpa_lint::prometheus::client::{Client, ClientArgs};
use hpa_lint::prometheus::demand::{Column, table};
use hpa_lint::prometheus::query::{PodMatch, Target, builtin};
use hpa_lint::prometheus::time::Range;
use hpa_lint_rules::controller::reconcile::{MetricKind, ResourceTarget};

/// 2025-01-01T00:00:00Z.
const START: i64 = 1_735_689_600;

/// A demand that rises, peaks and falls, millicores; memory follows it.
fn demand(syncs: usize) -> (Vec<i64>, Vec<i64>) {
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

fn history(desired: &[i32], noise: bool) -> History {
    let (cpu, memory) = demand(desired.len());
    let events = Events {
        rolling_update: Some(100),
        pod_ends: Some(60),
    };
    History {
        pods: History::pods("shop", "web", 2, desired, &events),
        namespace: "shop".to_owned(),
        deployment: "web".to_owned(),
        hpa: "web".to_owned(),
        start: START,
        cpu,
        memory,
        observed: desired.to_vec(),
        scrapes: vec![14, 9, 4],
        noise,
    }
}

#[test]
fn builtin_queries_give_the_known_demand() {
    let syncs = 200;
    let desired: Vec<i32> = (0..syncs).map(|k| 2 + (k as i32 / 30) % 5).collect();
    let history = history(&desired, true);
    let prometheus = Prometheus::start(|out| history.write_openmetrics(out));
    let client = Client::new(&ClientArgs {
        prometheus: Some(prometheus.url.clone()),
        ..ClientArgs::default()
    })
    .unwrap();
    let range = Range {
        start: START * 1000,
        end: (START + 15 * (syncs as i64 - 1)) * 1000,
        step: 15_000,
    };
    let target = Target {
        namespace: "shop",
        kind: "Deployment",
        name: "web",
    };
    let cpu = MetricKind::Resource {
        resource: "cpu".to_owned(),
        container: None,
        target: ResourceTarget::Utilization(60),
    };
    let memory = MetricKind::Resource {
        resource: "memory".to_owned(),
        container: Some("web".to_owned()),
        target: ResourceTarget::AverageValue(200 << 20),
    };
    for pods in [PodMatch::Owner, PodMatch::Name] {
        let columns: Vec<Column> = [("cpu", &cpu), ("memory", &memory)]
            .into_iter()
            .map(|(name, metric)| {
                let query = builtin(metric, &target, pods, 15_000).unwrap();
                let matrix = client.query_range(&query, range, &mut |_, _| {}).unwrap();
                Column {
                    name: name.to_owned(),
                    values: matrix.sum().unwrap(),
                }
            })
            .collect();
        let table = table(&columns, 300_000).unwrap();
        assert_eq!(table.start, START * 1000, "{pods:?}");
        assert!(table.notes.is_empty(), "{:?}", table.notes);
        let cpu: Vec<i64> = table.rows.iter().map(|r| r.1[0]).collect();
        let memory: Vec<i64> = table.rows.iter().map(|r| r.1[1] / 1000).collect();
        assert_eq!(cpu, history.cpu, "{pods:?}");
        assert_eq!(memory, history.memory, "{pods:?}");
    }
    // The series the built-in queries leave out are there.
    let everything = client
        .query_range(
            "sum(rate(container_cpu_usage_seconds_total{namespace=\"shop\"}[15s]))",
            range,
            &mut |_, _| {},
        )
        .unwrap()
        .sum()
        .unwrap();
    assert!(
        everything
            .iter()
            .zip(&history.cpu)
            .all(|((_, all), cpu)| all * 1000.0 > *cpu as f64 + 1000.0)
    );
    // Pods came and went: scale-ups and downs, a rolling update, one ended early.
    let replicasets: std::collections::BTreeSet<&str> =
        history.pods.iter().map(|p| p.replicaset.as_str()).collect();
    assert_eq!(replicasets.len(), 2);
    assert!(history.pods.len() > 12, "{}", history.pods.len());
    assert!(history.pods.iter().any(|p| p.last == 60));
}
