//! `replay-bench`: `hpa-lint simulate --prometheus` on 30 days of one HPA
//! from a real Prometheus (Debian's package from `.ci/install-tools`), beside
//! the fetch alone (the same requests, bodies read and dropped: the floor),
//! the simulation alone (the same demand from a CSV file) and `kubectl
//! hpa-lint replay` of the same HPA served by the API-server stand-in. See
//! `bench/README.md`.

use std::f64::consts::TAU;
use std::io::{BufWriter, Read as _};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use hpa_lint::prometheus::client::{PARALLEL_REQUESTS, chunks};
use hpa_lint::prometheus::query::{self, PodMatch, Target};
use hpa_lint::prometheus::time::{Range, format};
use hpa_lint_rules::controller::reconcile::{MetricKind, ResourceTarget};
use hpa_lint_test_support::history::{Events, History, MANIFESTS, SYNC};
use nix::sys::resource::{UsageWho, getrusage};

/// Times a 30-day replay from a real Prometheus.
#[derive(Parser)]
struct Args {
    /// Runs of each measurement; the report gives the median and the fastest.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Days of history.
    #[arg(long, default_value_t = 30)]
    days: i64,
    /// Where the history's TSDB is kept between runs (made once).
    #[arg(long, default_value = "target/replay-bench")]
    work_dir: PathBuf,
    /// The binary measured.
    #[arg(long, default_value = "target/release/hpa-lint")]
    hpa_lint: PathBuf,
    /// The plugin measured (`kubectl hpa-lint replay`).
    #[arg(long, default_value = "target/release/kubectl-hpa_lint")]
    kubectl_hpa_lint: PathBuf,
    /// Internal: run this command, pass its output through, and end
    /// standard error with its peak RSS (a fresh small process, so the
    /// child's RSS is its own).
    #[arg(long, hide = true, num_args = 1.., allow_hyphen_values = true)]
    measure: Option<Vec<String>>,
}

/// The line a `--measure` wrapper ends its standard error with.
const MARK: &str = "replay-bench peak RSS KiB:";

/// 2025-01-01T00:00:00Z, a 2-hour boundary.
const START: i64 = 1_735_689_600;
/// Syncs in a 2-hour block.
const BLOCK: i64 = 7_200 / SYNC;

fn measure(command: &[String]) -> ExitCode {
    let status = Command::new(&command[0]).args(&command[1..]).status();
    let code = status.ok().and_then(|s| s.code()).unwrap_or(2);
    let peak = getrusage(UsageWho::RUSAGE_CHILDREN).map_or(0, |u| u.max_rss());
    eprintln!("{MARK} {peak}");
    ExitCode::from(u8::try_from(code).unwrap_or(2))
}

/// A day-night cycle of 0.6 to 3 cores with ±10 % of deterministic noise;
/// memory follows.
fn history(days: i64) -> History {
    let syncs = days * 86_400 / SYNC;
    let mut seed = 1_u64;
    let cycle = |k: i64| {
        let phase = (k * SYNC % 86_400) as f64 / 86_400.0;
        0.6 + 2.4 * (1.0 - (TAU * phase).cos()) / 2.0
    };
    let cpu: Vec<i64> = (0..syncs)
        .map(|k| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let noise = ((seed >> 33) % 2001) as f64 / 10_000.0 - 0.1;
            (cycle(k) * (1.0 + noise) * 1000.0) as i64
        })
        .collect();
    let memory: Vec<i64> = cpu.iter().map(|c| (150 << 20) + c * 100_000).collect();
    // The pods that carried it: what a 60 % target at 500m asks for under
    // the cycle without its noise (which the controller's tolerance and
    // stabilization ride out).
    let desired: Vec<i32> = (0..syncs)
        .map(|k| ((cycle(k) / 0.3).ceil() as i32).clamp(2, 12))
        .collect();
    let events = Events {
        rolling_update: Some(syncs / 2),
        pod_ends: Some(syncs / 3),
    };
    History {
        pods: History::pods("shop", "web", 2, &desired, &events),
        namespace: "shop".to_owned(),
        deployment: "web".to_owned(),
        hpa: "web".to_owned(),
        start: START,
        cpu,
        memory,
        observed: desired,
        // cAdvisor and kube-state-metrics scraped every 15 s.
        scrapes: vec![5],
        noise: false,
        kube_state_metrics: true,
    }
}

fn tool(name: &str) -> Result<PathBuf, String> {
    let installed = Path::new(".tools/bin").join(name);
    if installed.is_file() {
        return Ok(installed);
    }
    Err(format!(
        "{} is missing: run .ci/install-tools from the repository's root",
        installed.display()
    ))
}

/// Makes the TSDB of the history (once): one OpenMetrics file per 2-hour
/// block through promtool, then a Prometheus run until its compaction is
/// done, so that the measured runs read compacted blocks as a server
/// holding 30 days does.
fn make_tsdb(history: &History, dir: &Path) -> Result<(), String> {
    let data = dir.join("data");
    if dir.join("ready").exists() {
        return Ok(());
    }
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(&data).map_err(|e| e.to_string())?;
    let syncs = i64::try_from(history.cpu.len()).unwrap();
    let started = Instant::now();
    let mut writer = history.writer();
    // Sync k is scraped 5 s before it: block b holds syncs 1 + 480 b ..= 480 (b + 1).
    let blocks = (1..syncs).step_by(usize::try_from(BLOCK).unwrap());
    let windows =
        std::iter::once(0..1).chain(blocks.map(|first| first..(first + BLOCK).min(syncs)));
    let file = dir.join("window.om");
    for (i, window) in windows.enumerate() {
        let mut out = BufWriter::new(std::fs::File::create(&file).map_err(|e| e.to_string())?);
        writer.write(&mut out, window).map_err(|e| e.to_string())?;
        drop(out);
        let status = Command::new(tool("promtool")?)
            .args(["tsdb", "create-blocks-from", "openmetrics", "--quiet"])
            .arg(&file)
            .arg(&data)
            .status()
            .map_err(|e| e.to_string())?;
        if !status.success() {
            return Err(format!("promtool failed on block {i}"));
        }
    }
    std::fs::remove_file(&file).map_err(|e| e.to_string())?;
    eprintln!(
        "replay-bench: {syncs} syncs written in {:.0?}; compacting",
        started.elapsed()
    );
    // Prometheus compacts the 2-hour blocks into larger ones, a step a minute.
    let prometheus = Prometheus::start(&data)?;
    let count = || {
        std::fs::read_dir(&data).map_or(0, |d| {
            d.filter_map(Result::ok)
                .filter(|e| e.path().join("meta.json").exists())
                .count()
        })
    };
    let mut last = (count(), Instant::now());
    while last.1.elapsed() < Duration::from_secs(150) {
        std::thread::sleep(Duration::from_secs(5));
        let now = count();
        if now != last.0 {
            last = (now, Instant::now());
        }
    }
    drop(prometheus);
    eprintln!(
        "replay-bench: {} blocks after compaction, {:.0?} in all",
        last.0,
        started.elapsed()
    );
    std::fs::write(dir.join("ready"), "").map_err(|e| e.to_string())
}

struct Prometheus {
    child: Child,
    url: String,
}

impl Prometheus {
    fn start(data: &Path) -> Result<Self, String> {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let config = data.with_file_name("prometheus.yml");
        std::fs::write(&config, "global: {}\n").map_err(|e| e.to_string())?;
        let log = data.with_file_name("prometheus.log");
        let child = Command::new(tool("prometheus")?)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", data.display()))
            .arg("--storage.tsdb.retention.time=100y")
            // No staleness markers in backfilled series: three scrapes end them.
            .arg("--query.lookback-delta=45s")
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).map_err(|e| e.to_string())?)
            .spawn()
            .map_err(|e| e.to_string())?;
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if text.contains("Server is ready to receive web requests.") {
                return Ok(Self {
                    child,
                    url: format!("http://127.0.0.1:{port}"),
                });
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(format!("prometheus did not start; see {}", log.display()))
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The floor: the requests `hpa-lint` makes (its built-in queries and the
/// observed replicas, chunked alike and as many at once, gzip on), bodies
/// read and dropped. Returns the bytes read.
fn fetch(agent: &ureq::Agent, url: &str, queries: &[String], range: Range) -> Result<u64, String> {
    let seconds = |ms: i64| (ms / 1000).to_string();
    let mut bytes = 0;
    for query in queries {
        let chunks = chunks(range);
        let next = AtomicUsize::new(0);
        let read = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..PARALLEL_REQUESTS.min(chunks.len()))
                .map(|_| {
                    scope.spawn(|| -> Result<u64, String> {
                        let mut bytes = 0;
                        while let Some(chunk) = chunks.get(next.fetch_add(1, Ordering::Relaxed)) {
                            let mut response = agent
                                .post(format!("{url}/api/v1/query_range"))
                                .send_form([
                                    ("query", query.as_str()),
                                    ("start", &seconds(chunk.start)),
                                    ("end", &seconds(chunk.end)),
                                    ("step", &seconds(chunk.step)),
                                ])
                                .map_err(|e| e.to_string())?;
                            let mut body = Vec::new();
                            response
                                .body_mut()
                                .with_config()
                                .limit(1 << 30)
                                .reader()
                                .read_to_end(&mut body)
                                .map_err(|e| e.to_string())?;
                            bytes += body.len() as u64;
                        }
                        Ok(bytes)
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| {
                    w.join()
                        .map_err(|_| "a request thread panicked".to_owned())?
                })
                .sum::<Result<u64, String>>()
        })?;
        bytes += read;
    }
    Ok(bytes)
}

/// Runs `command` through the `--measure` wrapper: (wall time, peak RSS KiB).
fn timed(command: &[String]) -> Result<(Duration, u64), String> {
    let started = Instant::now();
    let output = Command::new(std::env::current_exe().map_err(|e| e.to_string())?)
        .arg("--measure")
        .args(command)
        .stdout(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    let elapsed = started.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        return Err(format!("{}: {stderr}", command.join(" ")));
    }
    let peak = stderr
        .lines()
        .find_map(|l| l.strip_prefix(MARK))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    Ok((elapsed, peak))
}

/// The standard output of `command`, which must succeed.
fn output_of(command: &[String]) -> Result<Vec<u8>, String> {
    let output = Command::new(&command[0])
        .args(&command[1..])
        .output()
        .map_err(|e| format!("{}: {e}", command[0]))?;
    if !output.status.success() {
        return Err(format!(
            "{}: {}",
            command.join(" "),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(output.stdout)
}

/// A 1.36 cluster serving [`MANIFESTS`]' HPA and Deployment (and no LimitRanges).
fn live_cluster() -> kube_standin::Cluster {
    let objects: Vec<serde_json::Value> = MANIFESTS
        .split("---\n")
        .map(|document| serde_saphyr::from_str(document).expect("the manifests are YAML"))
        .collect();
    let mut cluster = kube_standin::Cluster::new("v1.36.2");
    cluster
        .serve(
            "autoscaling/v2",
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
            true,
            vec![objects[0].clone()],
        )
        .serve(
            "apps/v1",
            "Deployment",
            "deployments",
            true,
            vec![objects[1].clone()],
        )
        .serve("v1", "LimitRange", "limitranges", true, Vec::new());
    cluster
}

fn median(mut times: Vec<Duration>) -> (Duration, Duration) {
    times.sort();
    (times[times.len() / 2], times[0])
}

fn run(args: &Args) -> Result<String, String> {
    let history = history(args.days);
    let syncs = i64::try_from(history.cpu.len()).unwrap();
    let dir = args.work_dir.join(format!("days-{}", args.days));
    make_tsdb(&history, &dir)?;
    std::fs::write(dir.join("hpa.yaml"), MANIFESTS).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("demand.csv"), history.csv()).map_err(|e| e.to_string())?;
    let prometheus = Prometheus::start(&dir.join("data"))?;
    let range = Range {
        start: START * 1000,
        end: (START + SYNC * (syncs - 1)) * 1000,
        step: SYNC * 1000,
    };
    let target = Target {
        namespace: "shop",
        kind: "Deployment",
        name: "web",
    };
    let metrics = [
        MetricKind::Resource {
            resource: "cpu".to_owned(),
            container: None,
            target: ResourceTarget::Utilization(60),
        },
        MetricKind::Resource {
            resource: "memory".to_owned(),
            container: Some("web".to_owned()),
            target: ResourceTarget::AverageValue(300 << 20),
        },
    ];
    let mut queries: Vec<String> = metrics
        .iter()
        .map(|m| query::builtin(m, &target, PodMatch::Owner, 60_000).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    queries.push(query::observed_replicas("shop", "web"));
    let hpa_lint = args.hpa_lint.display().to_string();
    let yaml = dir.join("hpa.yaml").display().to_string();
    let replay: Vec<String> = [
        &hpa_lint,
        "simulate",
        "--isolated",
        &yaml,
        "--prometheus",
        &prometheus.url,
        "--since",
        &format(range.start),
        "--until",
        &format(range.end),
        "--format",
        "csv",
    ]
    .map(str::to_owned)
    .to_vec();
    let by_name: Vec<String> = [
        replay.clone(),
        vec!["--pod-match".to_owned(), "name".to_owned()],
    ]
    .concat();
    let csv = dir.join("demand.csv").display().to_string();
    let simulation: Vec<String> = [
        &hpa_lint,
        "simulate",
        "--isolated",
        &yaml,
        "--trace",
        &csv,
        "--format",
        "csv",
    ]
    .map(str::to_owned)
    .to_vec();
    // The same HPA and Deployment live, served by the API-server stand-in.
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let standin = runtime
        .block_on(live_cluster().start())
        .map_err(|e| e.to_string())?;
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(&kubeconfig, standin.kubeconfig("bench", "shop")).map_err(|e| e.to_string())?;
    let live: Vec<String> = [
        vec![
            args.kubectl_hpa_lint.display().to_string(),
            "replay".to_owned(),
            "shop/web".to_owned(),
            "--kubeconfig".to_owned(),
            kubeconfig.display().to_string(),
            "--isolated".to_owned(),
        ],
        replay[4..].to_vec(),
    ]
    .concat();
    let agent: ureq::Agent = ureq::Agent::config_builder().build().into();
    // Warm the server's caches (and check everything works) untimed; the
    // replay of the live HPA writes what simulate writes of its file.
    let bytes = fetch(&agent, &prometheus.url, &queries, range)?;
    if output_of(&replay)? != output_of(&live)? {
        return Err("kubectl hpa-lint replay and hpa-lint simulate differ".to_owned());
    }
    let (mut floor, mut full, mut alone, mut named, mut plugin) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut plugin_rss = 0;
    let (mut full_rss, mut alone_rss) = (0, 0);
    for _ in 0..args.runs.max(1) {
        let started = Instant::now();
        fetch(&agent, &prometheus.url, &queries, range)?;
        floor.push(started.elapsed());
        let (time, rss) = timed(&replay)?;
        full.push(time);
        full_rss = full_rss.max(rss);
        named.push(timed(&by_name)?.0);
        let (time, rss) = timed(&live)?;
        plugin.push(time);
        plugin_rss = plugin_rss.max(rss);
        let (time, rss) = timed(&simulation)?;
        alone.push(time);
        alone_rss = alone_rss.max(rss);
    }
    let requests = queries.len() * chunks(range).len();
    let (floor, floor_min) = median(floor);
    let (full, full_min) = median(full);
    let (alone, alone_min) = median(alone);
    let (named, named_min) = median(named);
    let (plugin, plugin_min) = median(plugin);
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let mut report = format!(
        "replay-bench: {} days at 15 s = {syncs} syncs of one HPA (CPU and a container's memory, built-in queries by owner), {} pods over the history; {requests} requests, {:.1} MB of JSON; {} runs each, {} cores\n\n",
        args.days,
        history.pods.len(),
        bytes as f64 / 1e6,
        args.runs.max(1),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );
    report += "| | median | fastest | × floor | peak RSS |\n|---|---|---|---|---|\n";
    report += &format!(
        "| floor: the same requests, bodies read and dropped | {:.0} ms | {:.0} ms | 1.00 | |\n",
        ms(floor),
        ms(floor_min)
    );
    report += &format!(
        "| `hpa-lint simulate --prometheus` (fetch, parse, simulate, CSV out) | {:.0} ms | {:.0} ms | {:.2} | {:.0} MiB |\n",
        ms(full),
        ms(full_min),
        full.as_secs_f64() / floor.as_secs_f64(),
        full_rss as f64 / 1024.0
    );
    report += &format!(
        "| the same with `--pod-match name` (no join with kube-state-metrics) | {:.0} ms | {:.0} ms | {:.2} | |\n",
        ms(named),
        ms(named_min),
        named.as_secs_f64() / floor.as_secs_f64(),
    );
    report += &format!(
        "| `kubectl hpa-lint replay shop/web` (the same, the HPA and Deployment read from the API-server stand-in) | {:.0} ms | {:.0} ms | {:.2} | {:.0} MiB |\n",
        ms(plugin),
        ms(plugin_min),
        plugin.as_secs_f64() / floor.as_secs_f64(),
        plugin_rss as f64 / 1024.0
    );
    report += &format!(
        "| `hpa-lint simulate --trace demand.csv` (the simulation alone) | {:.0} ms | {:.0} ms | {:.2} | {:.0} MiB |\n",
        ms(alone),
        ms(alone_min),
        alone.as_secs_f64() / floor.as_secs_f64(),
        alone_rss as f64 / 1024.0
    );
    Ok(report)
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(command) = &args.measure {
        return measure(command);
    }
    match run(&args) {
        Ok(report) => {
            print!("{report}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("replay-bench: {error}");
            ExitCode::FAILURE
        }
    }
}
