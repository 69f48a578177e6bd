//! `kubectl hpa-lint`: audits the HorizontalPodAutoscalers running in a
//! cluster with the rules of `hpa-lint`, plus the `live` rules that read
//! their status; `kubectl hpa-lint replay` simulates one on the demand
//! Prometheus recorded. Read-only; exit codes as `hpa-lint`'s: 0 clean, 1
//! findings, 2 when something could not be read or the run failed.

mod args;
mod cluster;
mod credentials;
mod inventory;
mod kubeconfig;
mod progress;
mod replay;
mod reports;
mod transport;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, Result};
use hpa_lint::report::{self, Finding, Outcome, Summary, sort_findings};
use hpa_lint::{emit, settings};
use hpa_lint_rules::controller::Millis;
use hpa_lint_rules::index::Stored;
use hpa_lint_rules::{Operation, lint};
use rayon::prelude::*;

use crate::args::{Args, Command};
use crate::cluster::Cluster;
use crate::inventory::{Inventory, Scope};
use crate::progress::Progress;

fn main() -> ExitCode {
    let args = args::parse();
    // kube's TLS uses the process's provider: ring, as the webhook does.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let result = tokio::runtime::Runtime::new()
        .context("starting the runtime")
        .and_then(|runtime| match &args.command {
            Some(Command::Replay(replay)) => replay::run(&runtime, &args, replay),
            None => runtime.block_on(run(&args)),
        });
    report::exit("kubectl hpa-lint", result)
}

fn clock() -> Millis {
    let since_epoch = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    Millis::try_from(since_epoch.as_millis()).unwrap_or(Millis::MAX)
}

async fn run(args: &Args) -> Result<u8> {
    let progress = Progress::new(args.quiet);
    let cluster = Arc::new(Cluster::connect(args, Arc::clone(&progress)).await?);
    if args.from_reports {
        let namespace = (!args.all_namespaces).then(|| {
            args.namespace
                .clone()
                .unwrap_or_else(|| cluster.namespace.clone())
        });
        let outcome = reports::read(&cluster, namespace.as_deref(), &args.names).await?;
        let summary = emit::print(
            &args.lint,
            outcome.summary,
            outcome.findings.into_iter().map(Ok),
        )?;
        return Ok(summary.exit_code(args.lint.deny_warnings));
    }
    let scope = Scope {
        namespace: (!args.all_namespaces).then(|| {
            args.namespace
                .clone()
                .unwrap_or_else(|| cluster.namespace.clone())
        }),
        selector: args.selector.clone(),
        names: args.names.clone(),
    };
    // The rules judge the objects at the cluster's release unless told otherwise.
    let version = cluster.version().await?;
    let mut settings = settings::resolve(&args.lint, None, version)?.settings;
    settings.live = true;
    settings.now = Some(args.now.unwrap_or_else(clock));
    let inventory = progress
        .show_until(inventory::read(Arc::clone(&cluster), &scope, &mut settings))
        .await?;
    let outcome = audit(&inventory, &settings, &cluster.context);

    let summary = emit::print(
        &args.lint,
        outcome.summary,
        outcome.findings.into_iter().map(Ok),
    )?;
    for unread in &inventory.unread {
        hpa_lint::tell!(
            "kubectl hpa-lint: cannot read {}: {}; {}",
            unread.resource,
            unread.error,
            unread.consequence
        );
    }
    Ok(summary.exit_code(args.lint.deny_warnings))
}

/// Lints every HPA read, as a create at the cluster's release.
fn audit(inventory: &Inventory, settings: &hpa_lint_rules::Settings, context: &str) -> Outcome {
    let mut findings: Vec<Finding> = inventory
        .hpas
        .par_iter()
        .filter_map(Stored::object)
        .flat_map_iter(|hpa| lint(&hpa, Operation::Create, &inventory.index, settings))
        .map(|diagnostic| Finding {
            diagnostic,
            location: None,
        })
        .collect();
    sort_findings(&mut findings);
    let summary = Summary {
        context: Some(context.to_owned()),
        hpas: inventory.hpas.len(),
        objects: inventory.objects,
        unread: inventory.unread.len(),
        ..Summary::default()
    };
    Outcome {
        findings,
        summary,
        input_errors: Vec::new(),
    }
}
