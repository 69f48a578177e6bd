//! `hpa-lint`: lints Kubernetes HorizontalPodAutoscalers in files and directories.

mod args;
mod behavior;
mod check;
mod commands;
mod emit;
mod hpas;
mod input;
mod settings;
mod simulate;

use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;
use hpa_lint_rules::Severity;

use crate::args::{CheckArgs, Cli, ColorChoice, Command};

/// Exit codes: 0 clean, 1 findings, 2 usage errors, bad configuration or unreadable input.
const FINDINGS: u8 = 1;
const TROUBLE: u8 = 2;

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
    match result {
        Ok(code) => ExitCode::from(code),
        // A closed pipe (`hpa-lint | head`) is not an error.
        Err(error)
            if error
                .downcast_ref::<io::Error>()
                .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("hpa-lint: {error:#}");
            ExitCode::from(TROUBLE)
        }
    }
}

fn use_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

fn check(args: &CheckArgs) -> Result<u8> {
    let resolved = settings::resolve(args)?;
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

    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    emit::emit(args.format, &outcome, use_color(args.color), &mut out)?;
    out.flush()?;
    for error in &input_errors {
        eprintln!("hpa-lint: {error}");
    }
    let fails = |f: &&check::Finding| match f.diagnostic.severity {
        Severity::Error => true,
        Severity::Warning => args.deny_warnings,
        Severity::Info => false,
    };
    Ok(if !input_errors.is_empty() {
        TROUBLE
    } else if outcome.findings.iter().any(|f| fails(&f)) {
        FINDINGS
    } else {
        0
    })
}
