//! `hpa-lint`: lints Kubernetes HorizontalPodAutoscalers in files and directories.

mod args;
mod behavior;
mod commands;
mod diff;
mod fix;

use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use clap::Parser;
use hpa_lint::check::Purpose;
use hpa_lint::report::{FINDINGS, Finding, Outcome, Summary, TROUBLE};
use hpa_lint::spill::Sorted;
use hpa_lint::{check, compare, emit, input, report, settings, simulate};
use hpa_lint_rules::Settings;

use crate::args::{CheckArgs, Cli, Command};
use hpa_lint::input::SourceFile;

fn main() -> ExitCode {
    survive_file_size_limits();
    let cli = Cli::parse();
    let result = match cli.command {
        None => check(&cli.check),
        Some(Command::Check(args)) => check(&args),
        Some(Command::Rules { format }) => commands::rules(format),
        Some(Command::Explain { rule }) => commands::explain(&rule),
        Some(Command::Behavior(args)) => behavior::run(&args),
        Some(Command::Simulate(args)) => simulate::run(&args, report::stdout()),
        Some(Command::Compare(args)) => compare::run(&args, report::stdout()),
        Some(Command::Diff(args)) => diff::run(&args),
    };
    report::exit("hpa-lint", result)
}

/// A write past a file size limit (`ulimit -f`) fails (EFBIG) instead of
/// killing the run (SIGXFSZ; Rust already makes a broken pipe an error):
/// findings spilled to a temporary file are then held in memory, and other
/// writes fail with an error. Programs the run starts do not inherit the
/// handler.
fn survive_file_size_limits() {
    #[cfg(unix)]
    {
        static EXCEEDED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        // Without the handler the run goes on as before: killed at the limit.
        let _ = signal_hook::flag::register(signal_hook::consts::SIGXFSZ, &EXCEEDED);
    }
}

fn check(args: &CheckArgs) -> Result<u8> {
    let resolved = settings::resolve(&args.lint, args.namespace.as_deref(), None)?;
    if !args.diff
        && !args.fix
        && let Some(dir) = input::one_directory(&args.paths, &args.context)
    {
        return check_walking(args, dir, &resolved);
    }
    let (mut sources, input_errors) = input::collect(
        &args.paths,
        &args.context,
        &resolved.ignore_paths,
        &resolved.config_dir,
        input::Order::Sorted,
    )
    .map_err(anyhow::Error::msg)?;
    let settings = &resolved.settings;
    if args.diff {
        return diff(&mut sources, settings, args.unsafe_fixes, input_errors);
    }
    let stdin = sources.iter().position(|s| s.path().is_none());
    if args.fix {
        let (outcome, unwritten) = fix_files(&mut sources, settings, args.unsafe_fixes, stdin)?;
        let Outcome {
            findings,
            summary,
            input_errors: more_errors,
        } = outcome;
        let input_errors = unread(input_errors, more_errors);
        // With `--fix -`, standard output carries the fixed text.
        let code = report(
            args,
            summary,
            findings.into_iter().map(Ok),
            &input_errors,
            stdin.is_some(),
        )?;
        return Ok(if unwritten { TROUBLE } else { code });
    }
    let outcome = check::run(&sources, settings, Purpose::Report)?;
    report_check(args, outcome, sources, input_errors)
}

/// A check of one directory: its files are read while the walk, on a
/// thread of its own, finds the next.
fn check_walking(args: &CheckArgs, dir: &Path, resolved: &settings::Resolved) -> Result<u8> {
    // Not bounded: what the walk finds is held all run anyway.
    let (send, found) = std::sync::mpsc::channel();
    let walk = move || {
        input::walk_in_order(
            dir,
            &resolved.ignore_paths,
            &resolved.config_dir,
            check::FILES_AT_ONCE,
            // A run that stopped reads no more.
            |files| send.send(files).is_ok(),
        )
    };
    let (walked, run) = std::thread::scope(|scope| {
        let walker = scope.spawn(walk);
        let run = check::run_found(found.into_iter(), &resolved.settings, Purpose::Report);
        (walker.join(), run)
    });
    let input_errors = match walked {
        Ok(walked) => walked.map_err(anyhow::Error::msg)?,
        Err(panic) => std::panic::resume_unwind(panic),
    };
    let (outcome, sources) = run?;
    report_check(args, outcome, sources, input_errors)
}

/// Reports a check of `sources`, with the inputs that could not be found.
fn report_check(
    args: &CheckArgs,
    outcome: Outcome<Sorted>,
    sources: Vec<SourceFile>,
    input_errors: Vec<String>,
) -> Result<u8> {
    let Outcome {
        findings,
        summary,
        input_errors: more_errors,
    } = outcome;
    // Not freed, a name and a path for each of many files: the process
    // ends once the findings are written, which gives back its memory.
    std::mem::forget(sources);
    let input_errors = unread(input_errors, more_errors);
    report(args, summary, findings, &input_errors, false)
}

/// Writes the inputs that could not be read, then the findings and the
/// summary (on standard error with `to_stderr`); returns the exit code.
fn report(
    args: &CheckArgs,
    mut summary: Summary,
    findings: impl IntoIterator<Item = io::Result<Finding>>,
    input_errors: &[String],
    to_stderr: bool,
) -> Result<u8> {
    summary.unread = input_errors.len();
    summary.unsafe_fixes = args.unsafe_fixes;
    // Before the findings, which may be many: the first thing a reader sees.
    for error in input_errors {
        hpa_lint::tell!("hpa-lint: {error}");
    }
    let summary = if to_stderr {
        emit::eprint(&args.lint, summary, findings)?
    } else {
        emit::print(&args.lint, summary, findings)?
    };
    Ok(summary.exit_code(args.lint.deny_warnings))
}

/// The inputs that could not be read: while looking for them, and while
/// linting.
fn unread(mut errors: Vec<String>, more: Vec<String>) -> Vec<String> {
    errors.extend(more);
    errors.sort();
    errors
}

/// `--fix`: makes the fixes and writes the files; standard input's text, fixed
/// or not, goes to standard output. Returns what is left to report, and
/// whether a file could not be written (it is reported as it is on disk).
fn fix_files(
    sources: &mut [SourceFile],
    settings: &Settings,
    unsafe_fixes: bool,
    stdin: Option<usize>,
) -> Result<(Outcome, bool)> {
    let (mut outcome, made) = fix::fix(sources, settings, unsafe_fixes)?;
    let mut fixed = 0;
    let mut unwritten = Vec::new();
    for (input, _, count) in fix::changes(sources, &made) {
        let source = &sources[input];
        // Standard input's text is written out below.
        let written = match (source.path(), source.fixed()) {
            (Some(path), Some(text)) => fix::write_file(path, text),
            _ => Ok(()),
        };
        match written {
            Ok(()) => fixed += count,
            Err(error) => {
                hpa_lint::tell!("hpa-lint: {}: cannot write the fixes: {error}", source.name);
                unwritten.push(input);
            }
        }
    }
    if let Some(input) = stdin {
        // Input that is not text (not UTF-8) has no fixes: it goes out as it came.
        match sources[input].text() {
            Ok(text) => report::stdout().write_all(text.as_bytes())?,
            Err(_) => {
                report::stdout().write_all(&sources[input].original_bytes().unwrap_or_default())?
            }
        }
    }
    if !unwritten.is_empty() {
        for &input in &unwritten {
            sources[input].set_fixed(None);
        }
        outcome = check::run(sources, settings, Purpose::Report)?.collect()?;
        made.mark(&mut outcome);
    }
    outcome.summary.fixed = Some(fixed);
    Ok((outcome, !unwritten.is_empty()))
}

/// `--diff`: prints what `--fix` would change and changes nothing. Exits
/// with 1 when there is a change.
fn diff(
    sources: &mut [SourceFile],
    settings: &Settings,
    unsafe_fixes: bool,
    input_errors: Vec<String>,
) -> Result<u8> {
    let (outcome, made) = fix::fix(sources, settings, unsafe_fixes)?;
    for finding in &outcome.findings {
        if let (Some(note), Some(location)) = (finding.fix_not_made(), &finding.location) {
            hpa_lint::tell!(
                "hpa-lint: {}:{}:{}: {}: {note}",
                location.file,
                location.line,
                location.column,
                finding.diagnostic.rule.name
            );
        }
    }
    let mut out = io::BufWriter::new(report::stdout());
    let (mut files, mut fixes) = (0, 0);
    for (input, original, count) in fix::changes(sources, &made) {
        fix::write_diff(&sources[input], &original, &mut out)?;
        files += 1;
        fixes += count;
    }
    out.flush()?;
    if files > 0 {
        hpa_lint::tell!(
            "Would fix {} in {}.",
            emit::plural(fixes, "finding"),
            emit::plural(files, "file")
        );
    }
    let input_errors = unread(input_errors, outcome.input_errors);
    for error in &input_errors {
        hpa_lint::tell!("hpa-lint: {error}");
    }
    Ok(if !input_errors.is_empty() {
        TROUBLE
    } else if files == 0 {
        0
    } else {
        FINDINGS
    })
}
