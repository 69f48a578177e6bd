//! `audit-bench`: the release `kubectl-hpa_lint -A` against a large cluster
//! on the API-server stand-in (`kube-standin`), next to two floors measured
//! in the same run on the same lists: fetching every page, and fetching and
//! parsing every page into `serde_json::Value` (see `bench/README.md`).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use hpa_lint_bench::webhook::apiserver::{self, Counts};
use kube::Client;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube_standin::{Cluster, Running};
use nix::sys::resource::{UsageWho, getrusage};
use serde_json::{Value, json};

/// Measures `kubectl hpa-lint -A` on a cluster of `--hpas` HPAs and
/// `--deployments` Deployments: objects/s and peak RSS, next to floors.
#[derive(Parser)]
struct Args {
    /// The plugin binary [default: kubectl-hpa_lint next to this one].
    #[arg(long)]
    plugin: Option<PathBuf>,
    /// HPAs (HPA `i` scales Deployment `i`).
    #[arg(long, default_value_t = 5_000)]
    hpas: usize,
    /// Deployments (11 KB each, as served).
    #[arg(long, default_value_t = 20_000)]
    deployments: usize,
    /// Namespaces the objects are spread over.
    #[arg(long, default_value_t = 50)]
    namespaces: usize,
    /// Timed runs of each line (the median is reported).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Where the kubeconfig goes.
    #[arg(long, default_value = "target/audit-bench")]
    work_dir: PathBuf,
    /// Also write the Markdown report to this file.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Internal: run this command, pass its output through, and end
    /// standard error with its peak RSS. A fresh small process, so the
    /// child's RSS is its own (a child forked from this large process
    /// counts the parent's pages until it execs).
    #[arg(long, hide = true, num_args = 1.., allow_hyphen_values = true)]
    measure: Option<Vec<String>>,
}

type Result<T, E = String> = std::result::Result<T, E>;

/// The line a `--measure` wrapper ends its standard error with.
const MARK: &str = "audit-bench peak RSS KiB:";

fn measure(command: &[String]) -> ExitCode {
    let status = Command::new(&command[0]).args(&command[1..]).status();
    let code = status.ok().and_then(|s| s.code()).unwrap_or(2);
    let peak = getrusage(UsageWho::RUSAGE_CHILDREN).map_or(0, |u| u.max_rss());
    eprintln!("{MARK} {peak}");
    ExitCode::from(u8::try_from(code).unwrap_or(2))
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(command) = &args.measure {
        return measure(command);
    }
    hpa_lint_bench::report_main("audit-bench", args.out.as_deref(), run(&args))
}

/// The cluster: HPAs and Deployments as the webhook bench generates them,
/// a PodDisruptionBudget for every fifth HPA, a LimitRange per namespace.
fn cluster(counts: &Counts) -> Cluster {
    let mut cluster = Cluster::new("v1.33.4");
    let pdbs = (0..counts.hpas / 5)
        .map(|i| json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": format!("app-{i}"), "namespace": apiserver::namespace_of(i, counts)},
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app.kubernetes.io/name": format!("app-{i}")}}}}))
        .collect();
    let limit_ranges = (0..counts.namespaces)
        .map(|i| {
            json!({"apiVersion": "v1", "kind": "LimitRange",
            "metadata": {"name": "defaults", "namespace": apiserver::namespace_of(i, counts)},
            "spec": {"limits": [{"type": "Container", "defaultRequest": {"memory": "128Mi"}}]}})
        })
        .collect();
    cluster
        .serve(
            "autoscaling/v2",
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
            true,
            (0..counts.hpas)
                .map(|i| apiserver::hpa(i, counts))
                .collect(),
        )
        .serve(
            "apps/v1",
            "Deployment",
            "deployments",
            true,
            (0..counts.deployments)
                .map(|i| apiserver::deployment(i, counts))
                .collect(),
        )
        .serve(
            "policy/v1",
            "PodDisruptionBudget",
            "poddisruptionbudgets",
            true,
            pdbs,
        )
        .serve("v1", "LimitRange", "limitranges", true, limit_ranges);
    cluster
}

/// The lists the audit makes, as paths.
const LISTS: [&str; 4] = [
    "/apis/apps/v1/deployments",
    "/apis/policy/v1/poddisruptionbudgets",
    "/api/v1/limitranges",
    "/apis/autoscaling/v2/horizontalpodautoscalers",
];

/// Fetches every page of a list, 500 at a time; parses each when `parse`.
/// Returns the items parsed (0 without `parse`).
async fn fetch(client: &Client, path: &str, parse: bool) -> Result<usize> {
    let mut token: Option<String> = None;
    let mut items = 0;
    loop {
        let uri = match &token {
            Some(token) => format!("{path}?limit=500&continue={token}"),
            None => format!("{path}?limit=500"),
        };
        let request = http::Request::get(uri)
            .body(Vec::new())
            .map_err(|e| e.to_string())?;
        let text = client
            .request_text(request)
            .await
            .map_err(|e| e.to_string())?;
        // The stand-in writes `metadata` first: its token is found without parsing.
        token = text
            .split_once("\"continue\":\"")
            .and_then(|(_, rest)| rest.split_once('"'))
            .map(|(token, _)| token.to_owned())
            .filter(|_| text.find("\"continue\"") < text.find("\"items\""));
        if parse {
            let page: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
            items += page["items"].as_array().map_or(0, Vec::len);
        }
        if token.is_none() {
            return Ok(items);
        }
    }
}

/// A floor: the HPAs first, then the other lists at once, as the audit reads.
async fn floor(client: &Client, parse: bool) -> Result<(Duration, usize)> {
    let start = Instant::now();
    let hpas = fetch(client, LISTS[3], parse).await?;
    let (deployments, pdbs, ranges) = tokio::join!(
        fetch(client, LISTS[0], parse),
        fetch(client, LISTS[1], parse),
        fetch(client, LISTS[2], parse),
    );
    Ok((start.elapsed(), hpas + deployments? + pdbs? + ranges?))
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Runs the plugin once, in a `--measure` wrapper: its wall time, its
/// peak RSS in KiB and the summary of its report.
fn audit(plugin: &PathBuf, kubeconfig: &PathBuf) -> Result<(Duration, i64, Value)> {
    let start = Instant::now();
    let output = Command::new(std::env::current_exe().map_err(|e| e.to_string())?)
        .arg("--measure")
        .arg(plugin)
        .args(["-A", "--format", "json", "--quiet", "--isolated"])
        .env("KUBECONFIG", kubeconfig)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{}: {e}", plugin.display()))?;
    let wall = start.elapsed();
    if !matches!(output.status.code(), Some(0 | 1)) {
        return Err(format!(
            "{} failed: {}",
            plugin.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let report: Value = serde_json::from_slice(&output.stdout).map_err(|e| e.to_string())?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    let peak = stderr
        .lines()
        .find_map(|line| line.strip_prefix(MARK))
        .and_then(|kib| kib.trim().parse().ok())
        .ok_or("no peak RSS from the wrapper")?;
    Ok((wall, peak, report["summary"].clone()))
}

async fn run(args: &Args) -> Result<String> {
    let plugin = match &args.plugin {
        Some(path) => path.clone(),
        None => std::env::current_exe()
            .map_err(|e| e.to_string())?
            .with_file_name("kubectl-hpa_lint"),
    };
    let counts = Counts {
        namespaces: args.namespaces,
        deployments: args.deployments,
        replica_sets: 0,
        hpas: args.hpas,
        pdbs: args.hpas / 5,
        limit_ranges: args.namespaces,
    };
    eprintln!(
        "audit-bench: generating {} HPAs and {} Deployments",
        counts.hpas, counts.deployments
    );
    let standin: Running = cluster(&counts).start().await.map_err(|e| e.to_string())?;
    std::fs::create_dir_all(&args.work_dir).map_err(|e| e.to_string())?;
    let kubeconfig = args.work_dir.join("kubeconfig");
    let text = standin.kubeconfig("bench", "default");
    std::fs::write(&kubeconfig, &text).map_err(|e| e.to_string())?;
    let config = kube::Config::from_custom_kubeconfig(
        Kubeconfig::from_yaml(&text).map_err(|e| e.to_string())?,
        &KubeConfigOptions::default(),
    )
    .await
    .map_err(|e| e.to_string())?;
    let client = Client::try_from(config).map_err(|e| e.to_string())?;

    // One untimed run of each, to warm up and to check the audit read everything.
    let (_, _, summary) = tokio::task::block_in_place(|| audit(&plugin, &kubeconfig))?;
    let (_, objects) = floor(&client, true).await?;
    if summary["objects"] != json!(objects) || summary["hpas"] != json!(counts.hpas) {
        return Err(format!(
            "the audit read {summary}, the floor {objects} objects"
        ));
    }
    let mut times = [Vec::new(), Vec::new(), Vec::new()];
    let mut peak = 0;
    for _ in 0..args.runs {
        times[0].push(floor(&client, false).await?.0);
        times[1].push(floor(&client, true).await?.0);
        let (wall, rss, _) = tokio::task::block_in_place(|| audit(&plugin, &kubeconfig))?;
        times[2].push(wall);
        peak = peak.max(rss);
    }
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let mut report = String::new();
    let _ = writeln!(
        report,
        "kubectl hpa-lint -A on {} HPAs, {} Deployments (11 KB each as served), {} PodDisruptionBudgets and {} LimitRanges in {} namespaces ({objects} objects), {cores} cores, median of {} runs; the stand-in shares the cores.\n",
        counts.hpas,
        counts.deployments,
        counts.pdbs,
        counts.limit_ranges,
        counts.namespaces,
        args.runs
    );
    let _ = writeln!(report, "| line | wall time | objects/s | peak RSS |");
    let _ = writeln!(report, "|---|---|---|---|");
    let lines = [
        "floor 1: fetch every page",
        "floor 2: fetch and parse every page into `serde_json::Value`",
        "kubectl hpa-lint -A --format json",
    ];
    let medians: Vec<Duration> = times.into_iter().map(median).collect();
    for (i, (line, time)) in lines.iter().zip(&medians).enumerate() {
        #[allow(clippy::cast_precision_loss)]
        let rate = objects as f64 / time.as_secs_f64();
        let rss = if i == 2 {
            #[allow(clippy::cast_precision_loss)]
            let mib = peak as f64 / 1024.0;
            format!("{mib:.0} MiB")
        } else {
            "–".to_owned()
        };
        let _ = writeln!(
            report,
            "| {line} | {:.2} s | {rate:.0} | {rss} |",
            time.as_secs_f64()
        );
    }
    let _ = writeln!(
        report,
        "\nThe audit takes {:.1}× floor 1 and {:.1}× floor 2.",
        medians[2].as_secs_f64() / medians[0].as_secs_f64(),
        medians[2].as_secs_f64() / medians[1].as_secs_f64()
    );
    Ok(report)
}
