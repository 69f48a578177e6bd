//! `hpa-webhook`: the admission webhook's binary. Reads flags and the
//! configuration, starts the caches and the certificate and configuration
//! reloaders, serves until SIGTERM and for the drain delay after it, then
//! lets in-flight requests finish.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum_server::Handle;
use clap::{Parser, ValueEnum};
use hpa_lint_webhook::app::{AppState, app, metrics_app};
use hpa_lint_webhook::cache::{ClusterIndex, Kind};
use hpa_lint_webhook::policy::{Policy, SharedPolicy};
use hpa_lint_webhook::reload::{self, Watched};
use hpa_lint_webhook::report::lease::LeaseOptions;
use hpa_lint_webhook::report::reports::{Limits, MAX_REPORT_BYTES, ReportApi};
use hpa_lint_webhook::report::writer::WriterOptions;
use hpa_lint_webhook::report::{self, Reporting};
use hpa_lint_webhook::self_signed;
use hpa_lint_webhook::server::{
    GRACE, HEADER_READ_TIMEOUT, Transport, drain, serve, shutdown_signal,
};
use hpa_lint_webhook::tls::{self, TlsFiles};
use kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError};

/// Admission webhook for HorizontalPodAutoscalers: validates HPAs and the
/// workloads they scale with the hpa-lint rules, and injects default
/// scaling behavior.
#[derive(Parser)]
#[command(name = "hpa-webhook", version)]
struct Args {
    /// Address to serve the webhook on.
    #[arg(long, env = "HPA_WEBHOOK_LISTEN", default_value = "0.0.0.0:8443")]
    listen: SocketAddr,
    /// PEM certificate chain, re-read when it changes.
    #[arg(
        long,
        env = "HPA_WEBHOOK_TLS_CERT",
        required_unless_present_any = ["insecure_http", "self_signed"]
    )]
    tls_cert: Option<PathBuf>,
    /// PEM private key, re-read when it changes.
    #[arg(
        long,
        env = "HPA_WEBHOOK_TLS_KEY",
        required_unless_present_any = ["insecure_http", "self_signed"]
    )]
    tls_key: Option<PathBuf>,
    /// Serve HTTPS with a self-signed certificate kept in DIR, for trying the
    /// webhook on a laptop: DIR/ca.crt (what clients trust: `curl --cacert
    /// DIR/ca.crt`), DIR/tls.crt and DIR/tls.key, made on the first start
    /// for localhost, 127.0.0.1 and ::1, and used again while valid.
    #[arg(
        long,
        env = "HPA_WEBHOOK_SELF_SIGNED",
        value_name = "DIR",
        conflicts_with_all = ["tls_cert", "tls_key", "insecure_http"]
    )]
    self_signed: Option<PathBuf>,
    /// Another DNS name or IP address for the --self-signed certificate
    /// (repeatable), e.g. `host.docker.internal` for a kind cluster.
    #[arg(long, value_name = "NAME", requires = "self_signed")]
    self_signed_host: Vec<String>,
    /// Configuration file (the `.hpa-lint.yaml` schema), re-read when it changes.
    #[arg(long, env = "HPA_WEBHOOK_CONFIG")]
    config: Option<PathBuf>,
    /// Kubeconfig file [default: in-cluster configuration, else the usual kubeconfig].
    #[arg(long, env = "HPA_WEBHOOK_KUBECONFIG")]
    kubeconfig: Option<PathBuf>,
    /// No cluster access: single-object rules only.
    #[arg(long, env = "HPA_WEBHOOK_OFFLINE")]
    offline: bool,
    /// Also serve /metrics over plain HTTP on this address.
    #[arg(long, env = "HPA_WEBHOOK_METRICS_LISTEN")]
    metrics_listen: Option<SocketAddr>,
    /// Serve plain HTTP instead of HTTPS: for local development only.
    #[arg(long, env = "HPA_WEBHOOK_INSECURE_HTTP")]
    insecure_http: bool,
    /// Log format.
    #[arg(long, env = "HPA_WEBHOOK_LOG_FORMAT", value_enum, default_value_t = LogFormat::Json)]
    log_format: LogFormat,
    /// Seconds between checks of the certificate and configuration files.
    #[arg(long, env = "HPA_WEBHOOK_RELOAD_INTERVAL", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    reload_interval: u64,
    /// Seconds to go on serving after SIGTERM, while the pod leaves the
    /// Service's endpoints; `/readyz` fails meanwhile.
    #[arg(long, env = "HPA_WEBHOOK_DRAIN_DELAY", default_value_t = 5)]
    drain_delay: u64,
    /// Seconds a client may take to send a request's headers (HTTP/1).
    #[arg(long, env = "HPA_WEBHOOK_HEADER_READ_TIMEOUT", default_value_t = HEADER_READ_TIMEOUT.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    header_read_timeout: u64,
    #[command(flatten)]
    reporting: ReportArgs,
}

/// The reporting mode (docs/reports.md).
#[derive(clap::Args)]
struct ReportArgs {
    /// Run the rules, the live ones included, over the cluster's HPAs
    /// continuously: findings as metrics, and from the replica that holds
    /// the Lease, policy reports and Events. Off with --offline.
    #[arg(long, env = "HPA_WEBHOOK_REPORTING", default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    reporting: bool,
    /// Evaluate once no change came for this many milliseconds...
    #[arg(
        long,
        env = "HPA_WEBHOOK_REPORT_QUIET_MS",
        default_value_t = 2000,
        value_name = "MS"
    )]
    report_quiet_ms: u64,
    /// ...or at most this many milliseconds after the first change.
    #[arg(
        long,
        env = "HPA_WEBHOOK_REPORT_MOST_MS",
        default_value_t = 10_000,
        value_name = "MS"
    )]
    report_most_ms: u64,
    /// Seconds between evaluations of every HPA (for the rules that judge
    /// how long a condition has held).
    #[arg(long, env = "HPA_WEBHOOK_REPORT_PERIOD", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..), value_name = "SECONDS")]
    report_period: u64,
    /// A findings series per HPA; `false` sums them per namespace (for very
    /// large clusters).
    #[arg(long, env = "HPA_WEBHOOK_METRICS_PER_HPA", default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    metrics_per_hpa: bool,
    /// The report API to write [default: the first served of openreports,
    /// wgpolicyk8s].
    #[arg(long, env = "HPA_WEBHOOK_REPORT_API", value_enum)]
    report_api: Option<ReportApi>,
    /// The most results one namespace's report holds (most severe first).
    #[arg(long, env = "HPA_WEBHOOK_REPORT_MAX_RESULTS", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..), value_name = "N")]
    report_max_results: u64,
    /// Seconds between looks for a report API while none is served.
    #[arg(long, env = "HPA_WEBHOOK_REPORT_REDISCOVER", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..), value_name = "SECONDS")]
    report_rediscover: u64,
    /// Events about new findings per minute at most (and at once); 0: none.
    #[arg(
        long,
        env = "HPA_WEBHOOK_EVENTS_PER_MINUTE",
        default_value_t = 20,
        value_name = "N"
    )]
    events_per_minute: u32,
    /// The Lease that chooses the one replica that writes reports and Events.
    #[arg(
        long,
        env = "HPA_WEBHOOK_LEASE_NAME",
        default_value = "hpa-lint-reporter",
        value_name = "NAME"
    )]
    lease_name: String,
    /// The Lease's namespace [default: the pod's, else the kubeconfig's].
    #[arg(long, env = "POD_NAMESPACE", value_name = "NAMESPACE")]
    lease_namespace: Option<String>,
    /// Seconds the holder keeps the Lease without renewing it: how long a
    /// replica that died unannounced holds the others back.
    #[arg(long, env = "HPA_WEBHOOK_LEASE_DURATION", default_value_t = 15, value_parser = clap::value_parser!(u64).range(2..), value_name = "SECONDS")]
    lease_duration: u64,
    /// Seconds before its expiry the holder renews the Lease.
    #[arg(long, env = "HPA_WEBHOOK_LEASE_RENEW", default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..), value_name = "SECONDS")]
    lease_renew: u64,
    /// This replica's identity in the Lease and in Events [default: the pod's name].
    #[arg(long, env = "POD_NAME", value_name = "NAME")]
    identity: Option<String>,
}

impl ReportArgs {
    /// Starts the reporting mode.
    fn start(&self, client: kube::Client, state: &AppState) -> anyhow::Result<Reporting> {
        anyhow::ensure!(
            self.lease_renew < self.lease_duration,
            "--lease-renew ({}) must be shorter than --lease-duration ({})",
            self.lease_renew,
            self.lease_duration
        );
        let identity = self
            .identity
            .clone()
            .or_else(|| std::env::var("HOSTNAME").ok())
            .unwrap_or_else(|| format!("hpa-webhook-{}", std::process::id()));
        let lease = LeaseOptions {
            name: self.lease_name.clone(),
            namespace: self
                .lease_namespace
                .clone()
                .unwrap_or_else(|| client.default_namespace().to_owned()),
            identity: identity.clone(),
            duration: self.lease_duration,
            renew: self.lease_renew,
        };
        let writer = WriterOptions {
            api: self.report_api,
            limits: Limits {
                max_results: usize::try_from(self.report_max_results).unwrap_or(usize::MAX),
                max_bytes: MAX_REPORT_BYTES,
            },
            rediscover: Duration::from_secs(self.report_rediscover),
            events_per_minute: self.events_per_minute,
            identity,
        };
        Ok(Reporting::start(
            client,
            Arc::clone(&state.index),
            state.policy.clone(),
            Arc::clone(&state.metrics),
            self.options(),
            writer,
            lease,
        ))
    }

    fn options(&self) -> report::Options {
        report::Options {
            quiet: Duration::from_millis(self.report_quiet_ms),
            most: Duration::from_millis(self.report_most_ms.max(self.report_quiet_ms)),
            period: Duration::from_secs(self.report_period),
            per_hpa_metrics: self.metrics_per_hpa,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum LogFormat {
    /// One JSON object per line.
    Json,
    /// Human-readable lines.
    Text,
}

fn init_tracing(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        // kube's watchers log every failed retry; the webhook says once
        // what a failure means.
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,kube_runtime::watcher=error"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    match format {
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .init(),
        // Colour only for a person at a terminal, not in a log file.
        LogFormat::Text => builder
            .with_ansi(std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none())
            .init(),
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    // First: ring as the process's only TLS provider, before anything builds
    // a rustls configuration (rust-stack.md §3). It fails only when a
    // provider is installed already, which nothing has done yet.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let args = Args::parse();
    init_tracing(args.log_format);
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(error = format!("{error:#}"), "hpa-webhook failed");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> anyhow::Result<()> {
    let interval = Duration::from_secs(args.reload_interval);
    let (policy, watched_config) = match &args.config {
        Some(path) => {
            let (watched, contents) = Watched::read(vec![path.clone()])
                .await
                .with_context(|| format!("reading {}", path.display()))?;
            let policy = Policy::parse(&String::from_utf8_lossy(&contents.concat()))
                .map_err(|e| anyhow::anyhow!("{}:{e}", path.display()))?;
            (policy, Some(watched))
        }
        None => (Policy::default(), None),
    };
    let reporting = args.reporting.reporting && !args.offline;
    let (index, client) = if args.offline {
        tracing::info!("offline: no cluster access; cross-object rules stay silent");
        (ClusterIndex::offline(), None)
    } else {
        let client = connect(&args).await?;
        (start_caches(&client, &policy, reporting), Some(client))
    };
    let state = AppState::new(SharedPolicy::new(policy), Arc::new(index));
    let reporter = match client {
        Some(client) if reporting => Some(args.reporting.start(client, &state)?),
        _ => None,
    };
    if let Some(watched) = watched_config {
        tokio::spawn(reload::policy(watched, state.policy.clone(), interval));
    }
    if !args.offline {
        let index = Arc::clone(&state.index);
        tokio::spawn(async move {
            index.wait_until_synced().await;
            let sizes: Vec<String> = index
                .sizes()
                .iter()
                .map(|(kind, size)| format!("{}={size}", kind.name()))
                .collect();
            tracing::info!(objects = %sizes.join(","), "caches synced");
        });
    }
    let tls_files = match (&args.self_signed, &args.tls_cert, &args.tls_key) {
        (Some(dir), _, _) => {
            let made = self_signed::ensure(dir, &args.self_signed_host)?;
            tracing::info!(
                ca = %made.ca.display(),
                made = made.made,
                "serving a self-signed certificate: clients trust the `ca` file"
            );
            Some(made.files)
        }
        (None, Some(cert), Some(key)) => Some(TlsFiles {
            cert: cert.clone(),
            key: key.clone(),
        }),
        _ => None,
    };
    let transport = match (tls_files, args.insecure_http) {
        (_, true) => {
            tracing::warn!(
                "--insecure-http: serving PLAIN HTTP without TLS; the API server calls webhooks over HTTPS only; use this for local development, never in a cluster"
            );
            Transport::Plain
        }
        (Some(files), false) => {
            let (watched, contents) = Watched::read(files.paths())
                .await
                .context("reading the TLS certificate and key")?;
            let config = tls::config(&contents[0], &contents[1]).await?;
            if let Some(expiry) = tls::expiry(&contents[0]) {
                state.metrics.certificate_expires_at(expiry);
            }
            tokio::spawn(reload::certificate(
                watched,
                config.clone(),
                Arc::clone(&state.metrics),
                interval,
            ));
            Transport::Tls(config)
        }
        // clap requires both unless --insecure-http or --self-signed.
        (None, false) => anyhow::bail!(
            "--tls-cert and --tls-key are required unless --self-signed or --insecure-http"
        ),
    };

    let handle = Handle::new();
    let metrics_handle = Handle::new();
    let header_read_timeout = Duration::from_secs(args.header_read_timeout);
    if let Some(address) = args.metrics_listen {
        let router = metrics_app(state.clone());
        let metrics_handle = metrics_handle.clone();
        tokio::spawn(async move {
            let served = serve(
                router,
                address,
                Transport::Plain,
                metrics_handle,
                header_read_timeout,
            );
            if let Err(error) = served.await {
                tracing::error!(%error, %address, "metrics server failed");
            }
        });
    }
    tokio::spawn({
        let handle = handle.clone();
        async move {
            if let Some(address) = handle.listening().await {
                tracing::info!(%address, "listening");
            }
        }
    });
    tokio::spawn({
        let handle = handle.clone();
        let draining = Arc::clone(&state.draining);
        let delay = Duration::from_secs(args.drain_delay);
        async move {
            shutdown_signal().await;
            // Another replica takes over the reports while this one drains.
            if let Some(reporter) = reporter {
                reporter.stop().await;
            }
            drain(delay, &draining).await;
            tracing::info!("shutting down: finishing in-flight requests");
            handle.graceful_shutdown(Some(GRACE));
            metrics_handle.graceful_shutdown(Some(GRACE));
        }
    });
    serve(
        app(state),
        args.listen,
        transport,
        handle,
        header_read_timeout,
    )
    .await
    .with_context(|| format!("serving on {}", args.listen))?;
    tracing::info!("stopped");
    Ok(())
}

/// A kubeconfig error, without the file's text: a YAML error would quote the
/// lines around it, which can hold tokens and passwords.
fn kubeconfig_error(error: &KubeconfigError) -> String {
    match error {
        KubeconfigError::Parse(parse) => match parse.location() {
            Some(at) => format!(
                "the kubeconfig is not valid YAML at line {}, column {} (its text is not shown: it can hold credentials)",
                at.line(),
                at.column()
            ),
            None => {
                "the kubeconfig is not valid YAML (its text is not shown: it can hold credentials)"
                    .to_owned()
            }
        },
        other => other.to_string(),
    }
}

/// What is missing when there is neither an in-cluster configuration nor a
/// kubeconfig to infer one from: `None` when there is one of them.
fn no_cluster_configured() -> Option<String> {
    if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some()
        || std::env::var_os("KUBECONFIG").is_some()
    {
        return None;
    }
    let default = std::env::home_dir()?.join(".kube/config");
    (!default.exists()).then(|| {
        format!(
            "not running in a pod (KUBERNETES_SERVICE_HOST is not set), KUBECONFIG is not set and {} does not exist",
            default.display()
        )
    })
}

/// A client for the cluster.
async fn connect(args: &Args) -> anyhow::Result<kube::Client> {
    let config = match &args.kubeconfig {
        Some(path) => {
            let reading = || format!("reading kubeconfig {}", path.display());
            let text = std::fs::read_to_string(path).with_context(reading)?;
            let kubeconfig = Kubeconfig::from_yaml(&text)
                .map_err(|e| anyhow::anyhow!("{}: {}", reading(), kubeconfig_error(&e)))?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await?
        }
        None => {
            if let Some(missing) = no_cluster_configured() {
                anyhow::bail!(
                    "no cluster to watch: {missing}; give a kubeconfig with --kubeconfig FILE, or run with --offline (single-object rules only)"
                );
            }
            // One message, not the chain (kube repeats its causes in each);
            // outside a pod only the kubeconfig's error says something.
            kube::Config::infer().await.map_err(|e| {
                let kubeconfig = std::error::Error::source(&e)
                    .and_then(|source| source.downcast_ref::<KubeconfigError>())
                    .map_or_else(|| e.to_string(), kubeconfig_error);
                match kube::Config::incluster() {
                    Err(in_cluster) if std::env::var_os("KUBERNETES_SERVICE_HOST").is_some() => {
                        anyhow::anyhow!(
                            "finding the cluster: in-cluster configuration: {in_cluster}; kubeconfig: {kubeconfig}"
                        )
                    }
                    _ => anyhow::anyhow!("finding the cluster: {kubeconfig}"),
                }
            })?
        }
    };
    kube::Client::try_from(config).context("creating the Kubernetes client")
}

/// The stores of the kinds the enabled rules read, in the watched
/// namespaces (with what the live rules read when `reporting`).
fn start_caches(client: &kube::Client, policy: &Policy, reporting: bool) -> ClusterIndex {
    let kinds = Kind::needed(policy, reporting);
    let names: Vec<&str> = kinds.iter().map(|kind| kind.name()).collect();
    tracing::info!(kinds = %names.join(","), "watching");
    ClusterIndex::watch(client, &kinds, &policy.watch_namespaces, reporting)
}
