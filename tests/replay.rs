//! Replays from a real Prometheus (Debian's package, `.ci/install-tools`)
//! loaded with a generated history: the built-in queries give the known
//! demand exactly, whichever way pods are matched; `hpa-lint simulate
//! --prometheus` equals the CSV simulation of the same demand sync for sync,
//! with the observed replicas beside it; and bad input, each a clear error,
//! exit code 2 and nothing written.

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

use hpa_lint::prometheus::client::{Client, ClientArgs};
use hpa_lint::prometheus::demand::{Column, table};
use hpa_lint::prometheus::query::{PodMatch, Target, builtin};
use hpa_lint::prometheus::time::Range;
use hpa_lint_rules::controller::reconcile::{MetricKind, ResourceTarget};
use hpa_lint_test_support::history::{Events, History, MANIFESTS, rising_demand};
use hpa_lint_test_support::prometheus::{Certificates, Prometheus, scripted};

/// 2025-01-01T00:00:00Z.
const START: i64 = 1_735_689_600;

fn history(desired: &[i32], noise: bool) -> History {
    let (cpu, memory) = rising_demand(desired.len());
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
        kube_state_metrics: true,
    }
}

#[test]
fn builtin_queries_give_the_known_demand() {
    let syncs: i32 = 200;
    let desired: Vec<i32> = (0..syncs).map(|k| 2 + (k / 30) % 5).collect();
    let history = history(&desired, true);
    let prometheus = Prometheus::start(|out| history.write_openmetrics(out));
    let client = Client::new(&ClientArgs {
        prometheus: Some(prometheus.url.clone()),
        ..ClientArgs::default()
    })
    .unwrap();
    let range = Range {
        start: START * 1000,
        end: (START + 15 * (i64::from(syncs) - 1)) * 1000,
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

fn simulate(dir: &Path) -> Command {
    let mut command = Command::cargo_bin("hpa-lint").expect("the binary is built");
    command
        .arg("simulate")
        .arg("--isolated")
        .env_remove("HPA_LINT_KUBE_VERSION")
        .arg(dir.join("hpa.yaml"));
    command
}

fn stdout(command: &mut Command) -> String {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// `--since` and `--until` for `syncs` syncs from [`START`].
fn range_args(syncs: usize) -> [String; 4] {
    let end = jiff::Timestamp::from_second(START + 15 * (syncs as i64 - 1)).unwrap();
    let start = jiff::Timestamp::from_second(START).unwrap();
    [
        "--since".into(),
        start.to_string(),
        "--until".into(),
        end.to_string(),
    ]
}

/// The syncs where the observed replicas differ from the simulated ones (a
/// controller that lagged), and by how much.
const LAGGED: std::ops::Range<usize> = 150..162;

#[test]
fn the_replay_equals_the_csv_simulation_sync_for_sync() {
    let syncs = 240;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hpa.yaml"), MANIFESTS).unwrap();
    let (cpu, memory) = rising_demand(syncs);
    let mut csv = String::from("time,cpu,memory\n");
    for (k, (cpu, memory)) in cpu.iter().zip(&memory).enumerate() {
        csv += &format!("{},{cpu}m,{memory}\n", k * 15);
    }
    std::fs::write(dir.path().join("demand.csv"), csv).unwrap();
    let expected = stdout(
        simulate(dir.path())
            .args(["--trace", "demand.csv", "--format", "csv"])
            .current_dir(dir.path()),
    );
    let rows: Vec<Vec<&str>> = expected
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), syncs);
    let column = |name: &str| {
        expected
            .lines()
            .next()
            .unwrap()
            .split(',')
            .position(|c| c == name)
            .unwrap()
    };
    let (current, desired) = (column("currentReplicas"), column("desiredReplicas"));
    let desired: Vec<i32> = rows.iter().map(|r| r[desired].parse().unwrap()).collect();
    let current: Vec<i32> = rows.iter().map(|r| r[current].parse().unwrap()).collect();
    assert!(
        desired.iter().max() > desired.iter().min(),
        "the HPA scales"
    );
    // The cluster's pods follow the simulation; kube-state-metrics saw it too,
    // except for a few syncs.
    let mut history = history(&desired, true);
    history.observed = current.clone();
    for k in LAGGED {
        history.observed[k] += 1;
    }
    let prometheus = Prometheus::start(|out| history.write_openmetrics(out));
    let replay = |extra: &[&str], format: &str| {
        stdout(
            simulate(dir.path())
                .args([
                    "--prometheus",
                    &prometheus.url,
                    "--rate-interval",
                    "15s",
                    "--format",
                    format,
                ])
                .args(range_args(syncs))
                .args(extra),
        )
    };
    for pods in ["owner", "name"] {
        let replayed = replay(&["--pod-match", pods], "csv");
        let mut lines = replayed.lines();
        assert_eq!(
            lines.next().unwrap(),
            format!("{},observedReplicas", expected.lines().next().unwrap())
        );
        for (k, (line, expected)) in lines.zip(expected.lines().skip(1)).enumerate() {
            let (simulated, observed) = line.rsplit_once(',').unwrap();
            assert_eq!(simulated, expected, "sync {k} ({pods})");
            assert_eq!(observed, history.observed[k].to_string(), "sync {k}");
        }
    }
    let document: Value = serde_json::from_str(&replay(&[], "json")).unwrap();
    assert_eq!(document["start"], "2025-01-01T00:00:00Z");
    let lagged = LAGGED.len() as f64 / syncs as f64;
    assert_eq!(document["fidelity"]["syncs"], syncs);
    assert_eq!(document["fidelity"]["equal"], 1.0 - lagged);
    assert_eq!(document["fidelity"]["meanAbsoluteDifference"], lagged);
    assert_eq!(
        document["steps"][LAGGED.start]["observedReplicas"],
        current[LAGGED.start] + 1
    );
    let plot = dir.path().join("replay.svg");
    let text = replay(&["--plot", plot.to_str().unwrap()], "text");
    assert!(text.contains(" (0s is 2025-01-01T00:00:00Z)\n"), "{text}");
    assert!(text.contains("  replicas  observed  reason\n"), "{text}");
    assert!(
        text.contains("\nobserved (kube-state-metrics): the simulated replicas equal the observed at 95.0 % of 240 syncs; mean absolute difference 0.05 replicas\n"),
        "{text}"
    );
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(
        svg.contains("\nobserved\n</text>"),
        "the plot has the observed replicas"
    );
}

/// Runs `simulate` with `args`, expecting exit code 2, an error containing
/// `expected`, nothing on standard output and no plot.
fn fails(dir: &Path, args: &[&str], expected: &str) {
    let plot = dir.join("failed.svg");
    let output = simulate(dir)
        .args(args)
        .args(["--plot", plot.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(
        stderr.contains(expected),
        "{args:?}: expected {expected:?} in {stderr}"
    );
    assert!(
        output.stdout.is_empty(),
        "{args:?}: wrote {}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert!(!plot.exists(), "{args:?} left a plot");
}

/// `--since`/`--until` of [`START`] plus `minutes`.
fn minutes(minutes: i64) -> Vec<String> {
    let at = |s| jiff::Timestamp::from_second(s).unwrap().to_string();
    vec![
        "--since".into(),
        at(START),
        "--until".into(),
        at(START + 60 * minutes),
    ]
}

#[test]
fn bad_input_is_a_clear_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hpa.yaml"), MANIFESTS).unwrap();
    let desired = vec![2; 80];
    let history = history(&desired, false);
    let prometheus = Prometheus::start(|out| history.write_openmetrics(out));
    let url = prometheus.url.as_str();
    let range = minutes(15);
    let with = |extra: &[&'static str]| -> Vec<String> {
        let mut args: Vec<String> = vec!["--prometheus".into(), url.into()];
        args.extend(range.iter().cloned());
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        args
    };
    let check = |extra: &[&'static str], expected: &str| {
        let args = with(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        fails(dir.path(), &args, expected);
    };
    // A query that matches nothing, one that Prometheus cannot run, and
    // samples that are no demand.
    check(
        &["--query", "cpu=nothing_here"],
        &format!(
            "`cpu` matches nothing in Prometheus at {url} from 2025-01-01T00:00:00Z to 2025-01-01T00:15:00Z (check it in Prometheus over the same range)\n  the query: nothing_here"
        ),
    );
    check(
        &[
            "--query",
            "cpu=container_memory_working_set_bytes * on (namespace) container_memory_working_set_bytes",
        ],
        &format!("Prometheus at {url} refused the query: execution: "),
    );
    check(
        &["--query", "cpu=sum(rate(x[1m]"],
        "refused the query: bad_data: ",
    );
    check(
        &["--query", "cpu=vector(1) / 0"],
        "`cpu`: the series {} is +Inf at 2025-01-01T00:00:00Z: a demand is a finite number\n  the query: vector(1) / 0",
    );
    check(
        &["--query", "cpu=vector(0) / 0"],
        &format!(
            "`cpu` is NaN at every time from 2025-01-01T00:00:00Z to 2025-01-01T00:15:00Z in Prometheus at {url}\n  the query: vector(0) / 0"
        ),
    );
    check(
        &["--query", "cpu=vector(-2)"],
        "`cpu` is -2 at 2025-01-01T00:00:00Z: a demand cannot be negative\n  the query: vector(-2)",
    );
    // NaN for 75 s every 10 minutes: gaps, held up to --max-gap.
    let gaps = "cpu=2 + vector(0) / (time() % 600 > bool 60)";
    check(
        &["--query", gaps, "--max-gap", "1m"],
        "`cpu` has no samples from 2025-01-01T00:10:00Z to 2025-01-01T00:11:00Z (1m15s), longer than --max-gap 1m",
    );
    let args = with(&["--query", gaps, "--format", "csv"]);
    let output = simulate(dir.path()).args(&args).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("hpa-lint: note: `cpu` misses 5 samples in one gap of 1m15s from 2025-01-01T00:10:00Z; the value before each gap holds (up to --max-gap 5m)"),
        "{stderr}"
    );
    // The first gap moves the start.
    assert!(
        stderr.contains(
            "hpa-lint: note: no demand before 2025-01-01T00:01:15Z: the replay starts there"
        ),
        "{stderr}"
    );
    let csv = String::from_utf8(output.stdout).unwrap();
    let header = csv.lines().next().unwrap();
    let column = header.split(',').position(|c| c == "cpu.demand").unwrap();
    let demand: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(column).unwrap())
        .collect();
    assert_eq!(demand.len(), 56);
    assert!(demand.iter().all(|d| *d == "2"), "{demand:?}");

    // A metric without a built-in query.
    let pods = MANIFESTS.replace(
        "  - type: Resource\n    resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}",
        "  - type: Pods\n    pods: {metric: {name: http_requests}, target: {type: AverageValue, averageValue: \"10\"}}",
    );
    std::fs::write(dir.path().join("hpa.yaml"), pods).unwrap();
    check(
        &[],
        r#"the Pods metric `http_requests` needs a query: give its total over the target's pods (adapter rules are site-specific) with --query, e.g. --query 'http_requests=sum(rate(http_requests_total{namespace="shop"}[2m]))'"#,
    );
    std::fs::write(dir.path().join("hpa.yaml"), MANIFESTS).unwrap();
    check(
        &["--query", "rps=up"],
        "--query rps=…: unknown metric `rps`: the HPA's metrics are cpu, memory",
    );

    // Unreachable, an HTTPS server without its CA, then without credentials.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let closed = format!("http://127.0.0.1:{port}");
    let args: Vec<String> = [vec!["--prometheus".into(), closed.clone()], range.clone()].concat();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    fails(
        dir.path(),
        &args,
        &format!("hpa-lint: cannot reach Prometheus at {closed}: "),
    );
    let certificates = Certificates::generate();
    let tls = Prometheus::start_tls(|out| history.write_openmetrics(out), &certificates);
    let args: Vec<String> = [vec!["--prometheus".into(), tls.url.clone()], range.clone()].concat();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    fails(
        dir.path(),
        &args,
        &format!("hpa-lint: TLS with Prometheus at {} failed: ", tls.url),
    );
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &certificates.ca).unwrap();
    let args = [args, vec!["--prometheus-ca-file", ca.to_str().unwrap()]].concat();
    fails(
        dir.path(),
        &args,
        &format!(
            "hpa-lint: Prometheus at {} answered 401 (not authorized",
            tls.url
        ),
    );

    // 403 and 5xx with the server's body (a proxy's, or Prometheus').
    for (status, body, expected) in [
        (
            403,
            "denied by policy",
            "answered 403 (forbidden: the credentials may not query): denied by policy",
        ),
        (
            500,
            r#"{"status":"error","errorType":"internal","error":"unexpected error"}"#,
            "answered 500: internal: unexpected error",
        ),
        (
            503,
            "<html><body>upstream unavailable</body></html>",
            "answered 503 (after retries with backoff): <html><body>upstream unavailable</body></html>",
        ),
    ] {
        let answers = (0..2)
            .map(|_| (status, "retry-after: 0\r\n", body.to_owned()))
            .collect();
        let (url, _) = scripted(answers);
        let args: Vec<String> = [
            vec![
                "--prometheus".into(),
                url,
                "--prometheus-retries".into(),
                "1".into(),
            ],
            range.clone(),
        ]
        .concat();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        fails(dir.path(), &args, expected);
    }
}

#[test]
fn thirty_days_at_fifteen_seconds() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hpa.yaml"), MANIFESTS).unwrap();
    let prometheus =
        Prometheus::start(|out| out.write_all(format!("up 1 {START}\n# EOF\n").as_bytes()));
    let output = simulate(dir.path())
        .args([
            "--prometheus",
            &prometheus.url,
            "--since",
            "30d",
            "--format",
            "csv",
        ])
        .args(["--query", "cpu=vector(2)", "--query", "memory=vector(1e9)"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let rows = output.stdout.iter().filter(|b| **b == b'\n').count() - 1;
    assert_eq!(rows, 172_801);
    // Too long a range is refused before anything is fetched.
    let output = simulate(dir.path())
        .args([
            "--prometheus",
            "http://127.0.0.1:9",
            "--since",
            "5w",
            "--sync-period",
            "0.3s",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("syncs (one every 300ms), more than the limit of 10000000; shorten --since or lengthen --sync-period"), "{stderr}");
}

/// The raw answer of Prometheus' `query_range` API (as `curl` saves it).
fn query_range_json(url: &str, query: &str, syncs: usize) -> Vec<u8> {
    use std::io::{Read, Write};
    let encoded: String = query
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    let end = START + 15 * (syncs as i64 - 1);
    let address = url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "GET /api/v1/query_range?query={encoded}&start={START}&end={end}&step=15 HTTP/1.0\r\nHost: {address}\r\n\r\n"
    )
    .unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let body = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    answer.split_off(body)
}

#[test]
fn prometheus_files_follow_the_same_rules() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hpa.yaml"), MANIFESTS).unwrap();
    // The answers of a live replay saved in files give the same simulation.
    let syncs = 120;
    let desired = vec![3; syncs];
    let history = history(&desired, true);
    let prometheus = Prometheus::start(|out| history.write_openmetrics(out));
    let target = Target {
        namespace: "shop",
        kind: "Deployment",
        name: "web",
    };
    let mut traces = Vec::new();
    for (name, metric) in [
        (
            "cpu",
            MetricKind::Resource {
                resource: "cpu".to_owned(),
                container: None,
                target: ResourceTarget::Utilization(60),
            },
        ),
        (
            "memory",
            MetricKind::Resource {
                resource: "memory".to_owned(),
                container: Some("web".to_owned()),
                target: ResourceTarget::AverageValue(1),
            },
        ),
    ] {
        let query = builtin(&metric, &target, PodMatch::Owner, 60_000).unwrap();
        let path = dir.path().join(format!("{name}.json"));
        std::fs::write(&path, query_range_json(&prometheus.url, &query, syncs)).unwrap();
        traces.extend(["--trace".to_owned(), format!("{name}={}", path.display())]);
    }
    let from_files = stdout(simulate(dir.path()).args(&traces).args(["--format", "csv"]));
    let live = stdout(
        simulate(dir.path())
            .args([
                "--prometheus",
                &prometheus.url,
                "--format",
                "csv",
                "--replicas",
                "2",
            ])
            .args(range_args(syncs)),
    );
    let without_observed: Vec<&str> = live
        .lines()
        .map(|l| l.rsplit_once(',').unwrap().0)
        .collect();
    assert_eq!(from_files.lines().collect::<Vec<_>>(), without_observed);
    assert_eq!(from_files.lines().count(), syncs + 1);

    // Several series summed where they have numbers: `b` starts late (it does
    // not move the start), `a` is NaN at 30 s and gone after 45 s, and at
    // 60 s nothing has a number: a gap, held.
    let file = dir.path().join("cpu.json");
    std::fs::write(
        &file,
        r#"{"status":"success","data":{"resultType":"matrix","result":[
            {"metric":{"pod":"a"},"values":[[1735689600,"1"],[1735689615,"1"],[1735689630,"NaN"],[1735689645,"1"]]},
            {"metric":{"pod":"b"},"values":[[1735689615,"0.5"],[1735689630,"0.5"],[1735689645,"0.5"],[1735689660,"NaN"],[1735689675,"2"]]}]}}"#,
    )
    .unwrap();
    let cart = "examples/shop/cart/cart.yaml";
    let run = |args: &[&str]| {
        Command::cargo_bin("hpa-lint")
            .unwrap()
            .args(["simulate", "--isolated", cart])
            .args(args)
            .output()
            .unwrap()
    };
    let output = run(&[
        "--trace",
        &format!("cpu={}", file.display()),
        "--format",
        "json",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let document: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["start"], "2025-01-01T00:00:00Z");
    let demand: Vec<f64> = document["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["metrics"]["cpu"]["demand"].as_f64().unwrap())
        .collect();
    assert_eq!(demand, [1.0, 1.5, 0.5, 1.5, 1.5, 2.0]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "hpa-lint: note: `cpu` misses 1 sample in one gap of 15s from 2025-01-01T00:01:00Z"
        ),
        "{stderr}"
    );

    // Prometheus' own error, and a file without the metric's name.
    std::fs::write(&file, r#"{"status":"error","errorType":"bad_data","error":"invalid parameter \"query\": 1:5: parse error"}"#).unwrap();
    let output = run(&["--trace", &format!("cpu={}", file.display())]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "hpa-lint: {}: Prometheus answered with an error: bad_data: invalid parameter \"query\": 1:5: parse error\n",
            file.display()
        )
    );
    let output = run(&["--trace", file.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "hpa-lint: {0}: a Prometheus `query_range` answer, not a CSV trace: name the metric it gives, e.g. --trace cpu={0} (the HPA's metrics are cpu)\n",
            file.display()
        )
    );
}

#[test]
fn progress_shows_on_a_terminal_only() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hpa.yaml"), MANIFESTS).unwrap();
    let history = history(&[2; 20], false);
    let prometheus = Prometheus::start(|out| history.write_openmetrics(out));
    let binary = assert_cmd::cargo::cargo_bin("hpa-lint");
    let mut args = vec![
        binary.display().to_string(),
        "simulate".into(),
        "--isolated".into(),
        dir.path().join("hpa.yaml").display().to_string(),
        "--prometheus".into(),
        prometheus.url.clone(),
        "--format".into(),
        "csv".into(),
    ];
    args.extend(minutes(4));
    // `script` (util-linux, on every Debian) runs it on a pseudo-terminal.
    let output = std::process::Command::new("script")
        .args([
            "--quiet",
            "--return",
            "--command",
            &args.join(" "),
            "/dev/null",
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let terminal = String::from_utf8_lossy(&output.stdout);
    for shown in [
        "\r\x1b[Khpa-lint: fetching `cpu` from Prometheus: 1/1\r\x1b[K",
        "\r\x1b[Khpa-lint: fetching `memory` from Prometheus: 1/1\r\x1b[K",
        "\r\x1b[Khpa-lint: fetching the observed replicas from Prometheus: 1/1\r\x1b[K",
    ] {
        assert!(terminal.contains(shown), "{shown:?} in {terminal:?}");
    }
    let piped = simulate(dir.path())
        .args(["--prometheus", &prometheus.url, "--format", "csv"])
        .args(minutes(4))
        .output()
        .unwrap();
    assert!(piped.status.success());
    assert_eq!(String::from_utf8_lossy(&piped.stderr), "");
}

#[test]
fn without_kube_state_metrics_pods_are_matched_by_name() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hpa.yaml"), MANIFESTS).unwrap();
    let syncs = 40;
    let history = History {
        kube_state_metrics: false,
        ..history(&vec![3; syncs], true)
    };
    let prometheus = Prometheus::start(|out| history.write_openmetrics(out));
    let replay = |pods: &str| {
        simulate(dir.path())
            .args([
                "--prometheus",
                &prometheus.url,
                "--rate-interval",
                "15s",
                "--format",
                "csv",
            ])
            .args(["--pod-match", pods])
            .args(range_args(syncs))
            .output()
            .unwrap()
    };
    let by_owner = replay("owner");
    assert_eq!(by_owner.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&by_owner.stderr);
    assert!(
        stderr.contains("(Prometheus has cAdvisor series in namespace `shop` but no `kube_pod_owner`: is kube-state-metrics scraped, keeping its own `namespace` label (`honor_labels`)? --pod-match name needs cAdvisor only; --query NAME=PROMQL sets another query)"),
        "{stderr}"
    );
    let by_name = replay("name");
    assert!(
        by_name.status.success(),
        "{}",
        String::from_utf8_lossy(&by_name.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&by_name.stderr),
        "hpa-lint: note: kube-state-metrics' `kube_horizontalpodautoscaler_status_current_replicas` has no samples of shop/web in the range: no observed replicas\n"
    );
    let csv = String::from_utf8(by_name.stdout).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(!header.contains("observedReplicas"), "{header}");
    let demand = header.split(',').position(|c| c == "cpu.demand").unwrap();
    let cpu: Vec<String> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(demand).unwrap().to_owned())
        .collect();
    let expected: Vec<String> = history
        .cpu
        .iter()
        .map(|c| (*c as f64 / 1000.0).to_string())
        .collect();
    assert_eq!(cpu, expected);

    // Another namespace has no cAdvisor series; another workload no pods.
    let elsewhere = MANIFESTS.replace("namespace: shop", "namespace: elsewhere");
    std::fs::write(dir.path().join("hpa.yaml"), elsewhere).unwrap();
    let stderr = String::from_utf8(replay("name").stderr).unwrap();
    assert!(stderr.contains("(Prometheus has no cAdvisor series (`container_cpu_usage_seconds_total`) in namespace `elsewhere` over the range"), "{stderr}");
    let other = MANIFESTS.replace(
        "name: web}\n  minReplicas",
        "name: shop-front}\n  minReplicas",
    );
    std::fs::write(dir.path().join("hpa.yaml"), other).unwrap();
    let stderr = String::from_utf8(replay("name").stderr).unwrap();
    assert!(
        stderr.contains("(no pod in namespace `shop` is named as Deployment `shop-front`'s are;"),
        "{stderr}"
    );
}

/// Two External metrics of one name with other selectors are two series:
/// each key has a query of its own; a query of the shared name gives both.
#[test]
fn metrics_of_one_name_are_replayed_apart() {
    let syncs = 4;
    let prometheus = Prometheus::start(|out| {
        writeln!(out, "# TYPE queue_depth gauge")?;
        for (queue, depth) in [("orders", 50), ("emails", 900)] {
            for k in 0..syncs {
                writeln!(
                    out,
                    "queue_depth{{queue=\"{queue}\"}} {depth} {}",
                    START + 15 * k
                )?;
            }
        }
        writeln!(out, "# EOF")
    });
    let dir = tempfile::tempdir().unwrap();
    let external = |queue: &str, average: u32| {
        format!(
            "  - type: External\n    external:\n      metric: {{name: queue, selector: {{matchLabels: {{q: {queue}}}}}}}\n      target: {{type: AverageValue, averageValue: \"{average}\"}}\n"
        )
    };
    std::fs::write(
        dir.path().join("hpa.yaml"),
        format!(
            "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {{name: web, namespace: shop}}\nspec:\n  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web}}\n  maxReplicas: 20\n  metrics:\n{}{}",
            external("orders", 10),
            external("emails", 100)
        ),
    )
    .unwrap();
    let replay = |queries: &[&str]| {
        let mut command = simulate(dir.path());
        command
            .args(["--prometheus", &prometheus.url, "--format", "json"])
            .args(range_args(syncs as usize));
        for query in queries {
            command.args(["--query", query]);
        }
        command.output().unwrap()
    };
    let demand = |output: std::process::Output| -> Vec<Value> {
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let document: Value = serde_json::from_slice(&output.stdout).unwrap();
        ["queue[0]", "queue[1]"]
            .iter()
            .map(|key| document["steps"][0]["metrics"][key]["demand"].clone())
            .collect()
    };
    let apart = replay(&[
        r#"queue[0]=sum(queue_depth{queue="orders"})"#,
        r#"queue[1]=sum(queue_depth{queue="emails"})"#,
    ]);
    assert_eq!(demand(apart), [50, 900]);
    let shared = replay(&[r#"queue=sum(queue_depth{queue="orders"})"#]);
    assert_eq!(demand(shared), [50, 50]);
    // An External metric has no built-in query: the error names its key.
    let missing = replay(&[r#"queue[0]=sum(queue_depth{queue="orders"})"#]);
    assert_eq!(missing.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(
        stderr.contains("the External metric `queue[1]` needs a query"),
        "{stderr}"
    );
}
