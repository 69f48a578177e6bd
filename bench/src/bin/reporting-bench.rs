//! `reporting-bench`: the release `hpa-webhook` in its reporting mode against
//! a cluster of `--hpas` HPAs with their Deployments (and a PDB and a
//! LimitRange per namespace) on the changing API-server stand-in
//! (`kube_standin::live`), with OpenReports installed. Measures the first
//! reports, one change of a target until its report says so, the CPU of a
//! round (one namespace after a change; every HPA on the period), memory,
//! and the requests a round makes, next to a floor measured in the same run:
//! the rules over the same objects in this process, from memory, with
//! nothing else (see `bench/README.md`).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use hpa_lint_bench::webhook::apiserver::{self, Counts};
use hpa_lint_rules::{MemoryIndex, Object, Operation, Origin, Settings, lint};
use kube_standin::live::Live;
use serde_json::{Value, json};

/// Measures the reporting mode on a cluster of `--hpas` HPAs.
#[derive(Parser)]
struct Args {
    /// The webhook binary [default: hpa-webhook next to this one].
    #[arg(long)]
    webhook: Option<PathBuf>,
    /// HPAs (HPA `i` scales Deployment `i`, 11 KB as served).
    #[arg(long, default_value_t = 5_000)]
    hpas: usize,
    /// Namespaces the objects are spread over.
    #[arg(long, default_value_t = 50)]
    namespaces: usize,
    /// The debounce the webhook runs with (its default: 2000).
    #[arg(long, default_value_t = 2000)]
    quiet_ms: u64,
    /// Changes of a target measured (the median is reported).
    #[arg(long, default_value_t = 5)]
    changes: usize,
    /// Where the kubeconfig and the webhook's log go.
    #[arg(long, default_value = "target/reporting-bench")]
    work_dir: PathBuf,
    /// Also write the Markdown report to this file.
    #[arg(long)]
    out: Option<PathBuf>,
}

type Result<T, E = String> = std::result::Result<T, E>;

const REPORT: (&str, &str) = ("openreports.io/v1alpha1", "Report");

/// The webhook, killed when dropped.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Process {
    fn proc_file(&self, name: &str) -> Result<String> {
        std::fs::read_to_string(format!("/proc/{}/{name}", self.0.id())).map_err(|e| e.to_string())
    }

    /// CPU time so far (user + system).
    fn cpu(&self) -> Result<Duration> {
        let stat = self.proc_file("stat")?;
        // Fields after the command's closing parenthesis; utime and stime
        // are the 14th and 15th of the line.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .ok_or("bad stat")?
            .1
            .split_whitespace()
            .collect();
        let ticks: u64 = fields[11].parse::<u64>().map_err(|e| e.to_string())?
            + fields[12].parse::<u64>().map_err(|e| e.to_string())?;
        // USER_HZ is 100 on Linux.
        Ok(Duration::from_millis(ticks * 10))
    }

    /// `(VmRSS, VmHWM)` in MiB.
    fn memory(&self) -> Result<(f64, f64)> {
        let status = self.proc_file("status")?;
        let field = |name: &str| -> Result<f64> {
            let kib: f64 = status
                .lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
                .ok_or(format!("no {name}"))?;
            Ok(kib / 1024.0)
        };
        Ok((field("VmRSS:")?, field("VmHWM:")?))
    }
}

/// Waits until `check` holds, at most `limit`; how long it took.
async fn until(what: &str, limit: Duration, check: impl Fn() -> bool) -> Result<Duration> {
    let start = Instant::now();
    while !check() {
        if start.elapsed() > limit {
            return Err(format!("timed out waiting for {what}"));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Ok(start.elapsed())
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

/// Requests by what they do: report writes, Events, and the rest (without
/// Lease renewals, which run on their own clock), as `METHOD path` each.
struct Requests {
    reports: usize,
    events: usize,
    others: Vec<String>,
}

fn requests(all: &[String]) -> Requests {
    let is = |r: &&String, method: &str, part: &str| r.starts_with(method) && r.contains(part);
    Requests {
        reports: all
            .iter()
            .filter(|r| is(r, "PATCH", "/reports/") || is(r, "DELETE", "/reports/"))
            .count(),
        events: all.iter().filter(|r| r.contains("events.k8s.io")).count(),
        others: all
            .iter()
            .filter(|r| {
                !r.contains("/reports") && !r.contains("events.k8s.io") && !r.contains("/leases/")
            })
            .map(|r| r.split('?').next().unwrap_or_default().to_owned())
            .collect(),
    }
}

impl Requests {
    fn row(&self) -> String {
        format!("{} / {} / {}", self.reports, self.events, self.others.len())
    }
}

/// The floor: the same rules over the same HPAs and Deployments, parsed and
/// in memory, in this process (one thread, like the webhook's round).
fn floor(objects: &[Value]) -> Duration {
    let parsed: Vec<Arc<Object>> = objects
        .iter()
        .filter_map(|o| Object::new(o.clone(), Origin::default(), "").map(Arc::new))
        .collect();
    let index = MemoryIndex::new(parsed.iter().cloned());
    let mut settings = Settings::default();
    settings.live = true;
    let started = Instant::now();
    let mut found = 0;
    for object in parsed.iter().filter(|o| o.is_hpa()) {
        found += lint(object, Operation::Create, &index, &settings).len();
    }
    std::hint::black_box(found);
    started.elapsed()
}

async fn run(args: &Args) -> Result<String> {
    let counts = Counts {
        namespaces: args.namespaces,
        deployments: args.hpas,
        replica_sets: 0,
        hpas: args.hpas,
        pdbs: args.namespaces,
        limit_ranges: args.namespaces,
    };
    let standin = Live::start("v1.33.4").await.map_err(|e| e.to_string())?;
    standin.install(REPORT.0, REPORT.1, "reports", true);
    standin.namespace("hpa-lint");
    let mut linted = Vec::new();
    for resource in [
        "namespaces",
        "deployments",
        "horizontalpodautoscalers",
        "poddisruptionbudgets",
        "limitranges",
    ] {
        for object in apiserver::objects(resource, &counts) {
            if resource != "namespaces" && resource != "limitranges" {
                linted.push(object.clone());
            }
            standin.put(object);
        }
    }
    standin.put(json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": "v1beta1.metrics.k8s.io"},
                       "status": {"conditions": [{"type": "Available", "status": "True", "reason": "Passed", "message": "all checks passed"}]}}));
    let floor = median((0..3).map(|_| floor(&linted)).collect());

    std::fs::create_dir_all(&args.work_dir).map_err(|e| e.to_string())?;
    let kubeconfig = args.work_dir.join("kubeconfig");
    std::fs::write(&kubeconfig, standin.kubeconfig("hpa-lint")).map_err(|e| e.to_string())?;
    let log =
        std::fs::File::create(args.work_dir.join("webhook.log")).map_err(|e| e.to_string())?;
    let binary = args.webhook.clone().unwrap_or_else(|| {
        std::env::current_exe()
            .unwrap_or_default()
            .with_file_name("hpa-webhook")
    });
    let webhook = Process(
        Command::new(&binary)
            .args(["--listen", "127.0.0.1:0", "--insecure-http", "--kubeconfig"])
            .arg(&kubeconfig)
            .args([
                "--report-quiet-ms",
                &args.quiet_ms.to_string(),
                "--report-period",
                "3600",
            ])
            // The first round announces every finding: no Events limit in the way.
            .args(["--events-per-minute", "100000"])
            .stdout(log)
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{}: {e}", binary.display()))?,
    );
    let reports = || standin.list(REPORT.0, REPORT.1).len();
    let first = until("the first reports", Duration::from_secs(600), || {
        reports() == args.namespaces
    })
    .await?;
    let first_requests = requests(&standin.requests());
    let (rss_first, _) = webhook.memory()?;

    // Settle, then one change of a target at a time: a container loses its
    // CPU request (target-missing-requests), or gets it back.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut latencies = Vec::new();
    let mut change_cpu = Vec::new();
    let mut change_requests = Vec::new();
    for change in 0..args.changes {
        let i = (change * 997) % args.hpas;
        let namespace = apiserver::namespace_of(i, &counts);
        let mut target = apiserver::deployment(i, &counts);
        let broken = change % 2 == 0;
        if broken {
            target["spec"]["template"]["spec"]["containers"][1]["resources"] = json!({});
        }
        let hpa = format!("app-{i}");
        let says = |report: &Value| {
            report["results"].as_array().into_iter().flatten().any(|r| {
                r["policy"] == "target-missing-requests"
                    && r["resources"][0]["name"] == hpa.as_str()
            }) == broken
        };
        let before = standin.requests().len();
        let cpu = webhook.cpu()?;
        standin.put(target);
        let took = until("the report", Duration::from_secs(60), || {
            standin
                .get(REPORT.0, REPORT.1, &namespace, "hpa-lint")
                .is_some_and(|r| says(&r))
        })
        .await?;
        tokio::time::sleep(Duration::from_millis(300)).await;
        change_cpu.push(webhook.cpu()? - cpu);
        latencies.push(took);
        change_requests.push(requests(&standin.requests()[before..]));
    }

    // A round over every HPA with nothing changed: the period, forced by a
    // change of the metrics APIService (which every HPA's live rules read).
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = standin.requests().len();
    let cpu = webhook.cpu()?;
    let mut service = standin
        .get(
            "apiregistration.k8s.io/v1",
            "APIService",
            "",
            "v1beta1.metrics.k8s.io",
        )
        .ok_or("no APIService")?;
    service["status"]["conditions"][0]["message"] = json!("all checks passed again");
    standin.put(service);
    tokio::time::sleep(Duration::from_millis(args.quiet_ms) + Duration::from_secs(5)).await;
    let full_cpu = webhook.cpu()? - cpu;
    let full_requests = requests(&standin.requests()[before..]);
    let (rss, hwm) = webhook.memory()?;

    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Reporting mode: {} HPAs and their Deployments in {} namespaces, debounce {} ms, {} cores\n",
        args.hpas,
        args.namespaces,
        args.quiet_ms,
        std::thread::available_parallelism().map_or(1, usize::from)
    );
    let _ = writeln!(out, "| measurement | value | × floor |");
    let _ = writeln!(out, "|---|---|---|");
    let ratio = |d: Duration| d.as_secs_f64() / floor.as_secs_f64();
    let _ = writeln!(
        out,
        "| floor: the rules over every HPA, in memory, one thread | {:.0} ms | 1 |",
        floor.as_secs_f64() * 1000.0
    );
    let _ = writeln!(
        out,
        "| start to every namespace's first report | {:.1} s | {:.0} |",
        first.as_secs_f64(),
        ratio(first)
    );
    let latency = median(latencies.clone());
    let _ = writeln!(
        out,
        "| one change of a target → its report updated (median of {}) | {:.0} ms ({:.0} ms past the debounce) | |",
        latencies.len(),
        latency.as_secs_f64() * 1000.0,
        (latency.saturating_sub(Duration::from_millis(args.quiet_ms))).as_secs_f64() * 1000.0
    );
    let cpu = median(change_cpu);
    let _ = writeln!(
        out,
        "| CPU of a change's round (its namespace, {} HPAs) | {:.0} ms | {:.2} |",
        args.hpas / args.namespaces,
        cpu.as_secs_f64() * 1000.0,
        ratio(cpu)
    );
    let _ = writeln!(
        out,
        "| CPU of a round over every HPA, nothing to write | {:.0} ms | {:.2} |",
        full_cpu.as_secs_f64() * 1000.0,
        ratio(full_cpu)
    );
    for (what, counted) in [
        ("up to the first reports", &first_requests),
        ("of a change's round", &change_requests[0]),
        ("of a round over every HPA", &full_requests),
    ] {
        let _ = writeln!(
            out,
            "| requests {what}: report writes / Events / anything else | {} | |",
            counted.row()
        );
    }
    let _ = writeln!(
        out,
        "| RSS after the first reports / at the end (peak) | {rss_first:.0} / {rss:.0} ({hwm:.0}) MiB | |"
    );
    let mut others: Vec<String> = change_requests
        .iter()
        .chain([&full_requests])
        .flat_map(|r| r.others.clone())
        .collect();
    others.sort();
    others.dedup();
    let _ = writeln!(
        out,
        "\nThe other requests of those rounds: {}.",
        others.join(", ")
    );
    let _ = writeln!(
        out,
        "The webhook's log: `{}`.",
        args.work_dir.join("webhook.log").display()
    );
    drop(webhook);
    Ok(out)
}

fn main() -> ExitCode {
    let args = Args::parse();
    hpa_lint_bench::report_main("reporting-bench", args.out.as_deref(), run(&args))
}
