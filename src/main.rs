//! `hpa-lint`: lints Kubernetes HorizontalPodAutoscalers in files and directories.

mod args;
mod behavior;
mod check;
mod commands;
mod hpas;
mod input;
mod simulate;

use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;
use hpa_lint::{emit, report, settings};

use crate::args::{CheckArgs, Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        None => check(&cli.check),
        Some(Command::Check(args)) => check(&args),
        Some(Command::Rules { format }) => commands::rules(format),
        Some(Command::Explain { rule }) => commands::explain(&rule),
        Some(Command::Behavior(args)) => behavior::run(&args),
        Some(Command::Simulate(args)) => simulate::run(&args),
    };
    report::exit("hpa-lint", result)
}

fn check(args: &CheckArgs) -> Result<u8> {
    let resolved = settings::resolve(&args.lint, args.namespace.as_deref(), None)?;
    let (sources, mut input_errors) = input::collect(
        &args.paths,
        &args.context,
        &resolved.ignore_paths,
        &resolved.config_dir,
    )
    .map_err(anyhow::Error::msg)?;
    let mut outcome = check::run(&sources, &resolved.settings);
    input_errors.extend(outcome.input_errors.iter().cloned());
    input_errors.sort();
    outcome.summary.unread = input_errors.len();

    emit::print(&args.lint, &outcome)?;
    for error in &input_errors {
        eprintln!("hpa-lint: {error}");
    }
    Ok(outcome.exit_code(args.lint.deny_warnings))
}
