//! `webhook-bench`: the release `hpa-webhook` under load over TLS, next to
//! `webhook-floor` (the same server answering a canned review) measured in
//! the same run; and the webhook's memory with its caches filled from a stub
//! API server through the real watcher path (see `bench/README.md`).

use std::fmt::Write as _;
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use hpa_lint_bench::webhook::apiserver::{self, Counts};
use hpa_lint_bench::webhook::load::{self, Sample, Target};
use hpa_lint_bench::webhook::phases;
use hyper::body::Bytes;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use serde_json::{Value, json};

/// Measures hpa-webhook: requests/s, p50 and p99 latency and RSS, next to a
/// floor measured in the same run.
#[derive(Parser)]
struct Args {
    /// The webhook binary [default: hpa-webhook next to this one].
    #[arg(long)]
    webhook: Option<PathBuf>,
    /// The floor binary [default: webhook-floor next to this one].
    #[arg(long)]
    floor: Option<PathBuf>,
    /// Seconds per measurement (after one second of warm-up).
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// Connections of the fixed-concurrency runs.
    #[arg(long, default_value_t = 16)]
    connections: usize,
    /// Requests per second of the fixed-rate runs.
    #[arg(long, default_value_t = 1000)]
    rate: u32,
    /// Deployments the stub API server serves.
    #[arg(long, default_value_t = 10_000)]
    deployments: usize,
    /// ReplicaSets it serves (one per Deployment's current revision at most).
    #[arg(long, default_value_t = 0)]
    replica_sets: usize,
    /// HPAs it serves (HPA `i` scales Deployment `i`).
    #[arg(long, default_value_t = 1_000)]
    hpas: usize,
    /// Where the certificates, kubeconfig and webhook log go.
    #[arg(long, default_value = "target/webhook-bench")]
    work_dir: PathBuf,
    /// Also write the Markdown report to this file.
    #[arg(long)]
    out: Option<PathBuf>,
}

type Result<T, E = String> = std::result::Result<T, E>;

fn main() -> ExitCode {
    let args = Args::parse();
    hpa_lint_bench::report_main("webhook-bench", args.out.as_deref(), run(&args))
}

/// A child process, killed when dropped.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Process {
    /// `(VmRSS, VmHWM)` in MiB, from /proc.
    fn memory(&self) -> Result<(f64, f64)> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.0.id()))
            .map_err(|e| e.to_string())?;
        let field = |name: &str| -> Result<f64> {
            let line = status
                .lines()
                .find(|l| l.starts_with(name))
                .ok_or(format!("no {name} in /proc/PID/status"))?;
            let kib: f64 = line
                .split_whitespace()
                .nth(1)
                .and_then(|v| v.parse().ok())
                .ok_or(format!("bad {name} line"))?;
            Ok(kib / 1024.0)
        };
        Ok((field("VmRSS:")?, field("VmHWM:")?))
    }
}

fn free_port() -> Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    listener.local_addr().map_err(|e| e.to_string())
}

fn sibling(name: &str) -> Result<PathBuf> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    Ok(exe.with_file_name(name))
}

/// A CA and a server certificate for localhost, written to `dir`; the CA's PEM.
fn certificates(dir: &Path) -> Result<String> {
    let error = |e: rcgen::Error| e.to_string();
    let mut ca = CertificateParams::new(Vec::new()).map_err(error)?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "webhook-bench CA");
    let ca_key = KeyPair::generate().map_err(error)?;
    let ca_pem = ca.self_signed(&ca_key).map_err(error)?.pem();
    let issuer = Issuer::new(ca, ca_key);
    let server = CertificateParams::new(vec!["localhost".to_owned()]).map_err(error)?;
    let key = KeyPair::generate().map_err(error)?;
    let cert = server.signed_by(&key, &issuer).map_err(error)?;
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).map_err(|e| format!("{name}: {e}"))
    };
    write("tls.crt", &cert.pem())?;
    write("tls.key", &key.serialize_pem())?;
    Ok(ca_pem)
}

fn kubeconfig(dir: &Path, server: SocketAddr) -> Result<PathBuf> {
    let path = dir.join("kubeconfig");
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: stub\n  cluster: {{server: \"http://{server}\"}}\nusers:\n- name: bench\n  user: {{}}\ncontexts:\n- name: stub\n  context: {{cluster: stub, user: bench}}\ncurrent-context: stub\n"
    );
    std::fs::write(&path, text).map_err(|e| e.to_string())?;
    Ok(path)
}

/// Waits until `path` answers 200.
async fn wait_ok(target: &Target, path: &str, timeout: Duration) -> Result<Duration> {
    let start = Instant::now();
    loop {
        if let Ok(mut connection) = target.connect().await
            && let Ok((200, _)) = connection.send("GET", path, Bytes::new()).await
        {
            return Ok(start.elapsed());
        }
        if start.elapsed() > timeout {
            return Err(format!("{path} on {} did not answer 200", target.address));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The request bodies: a `kubectl apply` update of HPA `app-3` (which the
/// caches hold, with its target) for `/validate`, and a create of an HPA
/// without behavior for `/mutate`.
fn bodies(counts: &Counts) -> (Bytes, Bytes) {
    let old = apiserver::hpa(3, counts);
    let mut new = old.clone();
    new["spec"]["maxReplicas"] = json!(30);
    let review = |uid: &str, operation: &str, object: &Value, old: Option<&Value>| {
        json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {
                "uid": uid,
                "kind": {"group": "autoscaling", "version": "v2", "kind": "HorizontalPodAutoscaler"},
                "resource": {"group": "autoscaling", "version": "v2", "resource": "horizontalpodautoscalers"},
                "requestKind": {"group": "autoscaling", "version": "v2", "kind": "HorizontalPodAutoscaler"},
                "requestResource": {"group": "autoscaling", "version": "v2", "resource": "horizontalpodautoscalers"},
                "name": object["metadata"]["name"], "namespace": object["metadata"]["namespace"],
                "operation": operation,
                "userInfo": {"username": "system:serviceaccount:argocd:argocd-application-controller", "groups": ["system:serviceaccounts", "system:authenticated"]},
                "object": object, "oldObject": old, "dryRun": false,
                "options": {"kind": format!("{}Options", if operation == "CREATE" { "Create" } else { "Update" }), "apiVersion": "meta.k8s.io/v1", "fieldManager": "argocd-controller"}
            }
        })
        .to_string()
    };
    let validate = review(
        "2f0c6d1e-8a4b-4c3d-9e2f-1a0b9c8d7e6f",
        "UPDATE",
        &new,
        Some(&old),
    );
    let mut created = apiserver::hpa(3, counts);
    created["metadata"]["name"] = json!("app-3-canary");
    let mutate = review(
        "7b1d2c3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e",
        "CREATE",
        &created,
        None,
    );
    (Bytes::from(validate), Bytes::from(mutate))
}

struct Row {
    server: &'static str,
    endpoint: &'static str,
    mode: String,
    sample: Sample,
}

async fn measure(
    args: &Args,
    server: &'static str,
    target: &Target,
    endpoint: &'static str,
    body: &Bytes,
    rows: &mut Vec<Row>,
) -> Result<()> {
    let seconds = Duration::from_secs(args.seconds);
    // Warm-up: connections, caches, allocator.
    load::closed_loop(
        target,
        endpoint,
        body.clone(),
        args.connections,
        Duration::from_secs(1),
    )
    .await?;
    let sample =
        load::closed_loop(target, endpoint, body.clone(), args.connections, seconds).await?;
    rows.push(Row {
        server,
        endpoint,
        mode: format!("{} connections", args.connections),
        sample,
    });
    let sample = load::open_loop(target, endpoint, body.clone(), args.rate, 32, seconds).await?;
    rows.push(Row {
        server,
        endpoint,
        mode: format!("{} requests/s", args.rate),
        sample,
    });
    Ok(())
}

async fn run(args: &Args) -> Result<String> {
    std::fs::create_dir_all(&args.work_dir).map_err(|e| e.to_string())?;
    let dir = &args.work_dir;
    let ca = certificates(dir)?;
    let counts = Counts {
        namespaces: 50,
        deployments: args.deployments,
        replica_sets: args.replica_sets,
        hpas: args.hpas,
        pdbs: args.hpas / 5,
        limit_ranges: 10,
    };
    let stub = apiserver::start(counts).await.map_err(|e| e.to_string())?;
    let kubeconfig = kubeconfig(dir, stub)?;
    let webhook_path = match &args.webhook {
        Some(path) => path.clone(),
        None => sibling("hpa-webhook")?,
    };
    let floor_path = match &args.floor {
        Some(path) => path.clone(),
        None => sibling("webhook-floor")?,
    };

    let webhook_address = free_port()?;
    let log = std::fs::File::create(dir.join("webhook.log")).map_err(|e| e.to_string())?;
    let webhook = Process(
        Command::new(&webhook_path)
            .arg("--listen")
            .arg(webhook_address.to_string())
            .arg("--tls-cert")
            .arg(dir.join("tls.crt"))
            .arg("--tls-key")
            .arg(dir.join("tls.key"))
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .stdout(log)
            .stdin(Stdio::null())
            .spawn()
            .map_err(|e| format!("{}: {e}", webhook_path.display()))?,
    );
    let webhook_target = Target::new(webhook_address, &ca)?;
    let sync = wait_ok(&webhook_target, "/readyz", Duration::from_secs(120)).await?;
    // Let the allocator settle after the lists.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (rss_synced, _) = webhook.memory()?;

    let start_floor = |parse: bool| -> Result<(Process, Target)> {
        let address = free_port()?;
        let mut command = Command::new(&floor_path);
        command
            .arg("--listen")
            .arg(address.to_string())
            .arg("--tls-cert")
            .arg(dir.join("tls.crt"))
            .arg("--tls-key")
            .arg(dir.join("tls.key"))
            .stdin(Stdio::null());
        if parse {
            command.arg("--parse");
        }
        let process = command
            .spawn()
            .map_err(|e| format!("{}: {e}", floor_path.display()))?;
        Ok((Process(process), Target::new(address, &ca)?))
    };
    let (floor, floor_target) = start_floor(false)?;
    let (parse_floor, parse_target) = start_floor(true)?;
    wait_ok(&floor_target, "/healthz", Duration::from_secs(30)).await?;
    wait_ok(&parse_target, "/healthz", Duration::from_secs(30)).await?;

    let (validate, mutate) = bodies(&counts);
    let mut rows = Vec::new();
    for (endpoint, body) in [("/validate", &validate), ("/mutate", &mutate)] {
        measure(args, "floor", &floor_target, endpoint, body, &mut rows).await?;
        measure(
            args,
            "parse floor",
            &parse_target,
            endpoint,
            body,
            &mut rows,
        )
        .await?;
        measure(
            args,
            "hpa-webhook",
            &webhook_target,
            endpoint,
            body,
            &mut rows,
        )
        .await?;
    }
    let (rss_loaded, hwm) = webhook.memory()?;
    let (floor_rss, _) = floor.memory()?;
    drop((floor, parse_floor, webhook));

    let mut report = String::new();
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let _ = writeln!(
        report,
        "## hpa-webhook benchmark ({cores} cores; load generator in the same machine)\n"
    );
    let _ = writeln!(
        report,
        "Caches: {} Deployments, {} ReplicaSets, {} HPAs, {} PDBs, {} LimitRanges, {} namespaces; synced {:.1} s after start.\n",
        counts.deployments,
        counts.replica_sets,
        counts.hpas,
        counts.pdbs,
        counts.limit_ranges,
        counts.namespaces,
        sync.as_secs_f64()
    );
    let _ = writeln!(
        report,
        "| server | endpoint | load | requests/s | p50 ms | p99 ms | errors | of floor | of parse floor |"
    );
    let _ = writeln!(report, "|---|---|---|---:|---:|---:|---:|---:|---:|");
    let throughput_of = |server: &str, endpoint: &str, mode: &str| {
        rows.iter()
            .find(|r| r.server == server && r.endpoint == endpoint && r.mode == mode)
            .map(|r| r.sample.throughput())
    };
    let floors: Vec<(Option<f64>, Option<f64>)> = rows
        .iter()
        .map(|r| {
            (
                throughput_of("floor", r.endpoint, &r.mode),
                throughput_of("parse floor", r.endpoint, &r.mode),
            )
        })
        .collect();
    for (row, (floor, parse_floor)) in rows.iter_mut().zip(floors) {
        let throughput = row.sample.throughput();
        let ratio = |floor: Option<f64>, applies: bool| match floor {
            Some(floor) if applies => format!("{:.0} %", throughput / floor * 100.0),
            _ => String::new(),
        };
        let _ = writeln!(
            report,
            "| {} | {} | {} | {:.0} | {:.2} | {:.2} | {} | {} | {} |",
            row.server,
            row.endpoint,
            row.mode,
            throughput,
            row.sample.quantile_ms(0.5),
            row.sample.quantile_ms(0.99),
            row.sample.errors,
            ratio(floor, row.server != "floor"),
            ratio(parse_floor, row.server == "hpa-webhook"),
        );
    }
    let _ = writeln!(
        report,
        "\nhpa-webhook RSS: {rss_synced:.1} MiB with the caches synced, {rss_loaded:.1} MiB after the load (peak {hwm:.1} MiB). Floor RSS: {floor_rss:.1} MiB."
    );

    // After the servers are gone, so that nothing competes for the cores.
    let index = phases::cluster(&counts)?;
    let _ = writeln!(
        report,
        "\nIn-process, per review (one thread, no TLS or HTTP; same caches and bodies):\n\n| endpoint | parse µs | decide µs | answer µs | total µs | decision |\n|---|---:|---:|---:|---:|---|"
    );
    for (endpoint, body, mutating) in [("/validate", &validate, false), ("/mutate", &mutate, true)]
    {
        phases::measure(&index, mutating, body, 1_000)?;
        let p = phases::measure(&index, mutating, body, 20_000)?;
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        let _ = writeln!(
            report,
            "| {endpoint} | {:.1} | {:.1} | {:.1} | {:.1} | {} |",
            us(p.parse),
            us(p.decide),
            us(p.answer),
            us(p.parse + p.decide + p.answer),
            p.decision.as_str()
        );
    }
    Ok(report)
}
