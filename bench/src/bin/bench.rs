//! `bench`: hpa-lint end to end on a generated corpus, next to two floors
//! measured in the same run (see `bench/README.md`).
//!
//! Every run is a child process started through this binary's `measure` role,
//! which reports the child's wall time and peak RSS (`getrusage` of its only
//! child), so each run's memory is its own.

use std::env;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand, ValueEnum};
use hpa_lint_bench::corpus::Layout;
use nix::sys::resource::{UsageWho, getrusage};
use serde_json::Value;

/// Measures hpa-lint on a generated GitOps corpus: MB/s, documents/s and peak
/// memory, next to floors measured in the same run.
#[derive(Parser)]
struct Args {
    /// The corpus (generated there, 120 MB, seed 1, if absent)
    /// [default: target/bench-corpus].
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// The hpa-lint binary [default: target/release/hpa-lint].
    #[arg(long)]
    hpa_lint: Option<PathBuf>,
    /// Runs of each corpus measurement.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Runs of the one-file measurement.
    #[arg(long, default_value_t = 50)]
    one_file_runs: usize,
    /// Also write the Markdown report to this file.
    #[arg(long)]
    out: Option<PathBuf>,
    #[command(subcommand)]
    role: Option<Role>,
}

/// What this binary runs as in the child processes.
#[derive(Subcommand)]
enum Role {
    /// Run a command and report its wall time, peak RSS and exit code on stderr.
    #[command(hide = true)]
    Measure {
        #[arg(trailing_var_arg = true, required = true)]
        command: Vec<OsString>,
    },
    /// Run a floor on a corpus and print `files bytes documents`.
    #[command(hide = true)]
    Floor { floor: Floor, corpus: PathBuf },
}

#[derive(Clone, Copy, ValueEnum)]
enum Floor {
    /// Walk the corpus and read every file as UTF-8 text.
    Read,
    /// The same, and parse every document into `serde_json::Value`.
    Parse,
}

/// The line a `measure` child ends its stderr with.
const MARK: &str = "hpa-lint-bench:";

const ONE_FILE: &str = "\
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  namespace: shop
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: web
  minReplicas: 2
  maxReplicas: 10
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: 70
";

type Result<T, E = String> = std::result::Result<T, E>;

fn main() -> ExitCode {
    let args = Args::parse();
    let result = match &args.role {
        Some(Role::Measure { command }) => measure_role(command),
        Some(Role::Floor { floor, corpus }) => floor_role(*floor, corpus),
        None => run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("bench: {error}");
            ExitCode::FAILURE
        }
    }
}

fn measure_role(command: &[OsString]) -> Result<()> {
    let start = Instant::now();
    let status = Command::new(&command[0])
        .args(&command[1..])
        .stdin(Stdio::null())
        .status()
        .map_err(|e| format!("{}: {e}", command[0].to_string_lossy()))?;
    let wall = start.elapsed();
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).map_err(|e| e.to_string())?;
    let code = status.code().unwrap_or(-1);
    eprintln!("{MARK} {} {} {code}", wall.as_nanos(), usage.max_rss());
    Ok(())
}

/// The manifest files under `dir`, as the CLI finds them (hidden entries skipped).
fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    let entries = fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| e.to_string())?;
        let path = entry.path();
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        if entry.file_type().map_err(|e| e.to_string())?.is_dir() {
            walk(&path, files)?;
        } else if path
            .extension()
            .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
        {
            files.push(path);
        }
    }
    Ok(())
}

/// Parser limits like the CLI's (which sets them per document).
fn parse_options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_depth: 100,
            max_nodes: 2_000_000,
            max_events: 8_000_000,
        },
    }
}

fn floor_role(floor: Floor, corpus: &Path) -> Result<()> {
    let mut files = Vec::new();
    walk(corpus, &mut files)?;
    let next = AtomicUsize::new(0);
    let threads = thread::available_parallelism().map_or(2, |n| n.get());
    // Each thread reads (and parses) the next file until none is left.
    let work = || -> Result<(usize, usize)> {
        let (mut bytes, mut documents) = (0, 0);
        while let Some(path) = files.get(next.fetch_add(1, Ordering::Relaxed)) {
            let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            bytes += text.len();
            if let Floor::Parse = floor {
                let values: Vec<Value> =
                    serde_saphyr::from_multiple_with_options(&text, parse_options())
                        .map_err(|e| format!("{}: {e}", path.display()))?;
                documents += values.len();
            }
        }
        Ok((bytes, documents))
    };
    let totals = thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                thread::Builder::new()
                    // Parsing recurses per nesting level, as in the CLI.
                    .stack_size(16 << 20)
                    .spawn_scoped(scope, work)
                    .map_err(|e| e.to_string())
            })
            .collect::<Result<_>>()?;
        workers
            .into_iter()
            .map(|w| w.join().map_err(|_| "a worker panicked".to_owned())?)
            .collect::<Result<Vec<_>>>()
    })?;
    let bytes: usize = totals.iter().map(|t| t.0).sum();
    let documents: usize = totals.iter().map(|t| t.1).sum();
    println!("{} {bytes} {documents}", files.len());
    Ok(())
}

/// One measured run.
struct Sample {
    wall: Duration,
    peak_kib: u64,
    code: i32,
    stdout: String,
}

/// Runs `command` as a child of a `measure` child; its stdout is kept or discarded.
fn measure(exe: &Path, command: &[&std::ffi::OsStr], keep_stdout: bool) -> Result<Sample> {
    let output = Command::new(exe)
        .arg("measure")
        .args(command)
        .stdin(Stdio::null())
        .stdout(if keep_stdout {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    let (before, report) = stderr.rsplit_once(MARK).unwrap_or((&stderr, ""));
    eprint!("{before}");
    let fields: Vec<i64> = report
        .split_whitespace()
        .map(|f| f.parse().map_err(|_| format!("bad report `{report}`")))
        .collect::<Result<_>>()?;
    let &[nanos, peak_kib, code] = fields.as_slice() else {
        return Err(format!("{exe:?} measure: no report"));
    };
    Ok(Sample {
        wall: Duration::from_nanos(nanos as u64),
        peak_kib: peak_kib as u64,
        code: code as i32,
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
    })
}

/// A floor's run, with the `files bytes documents` it printed.
fn run_floor(exe: &Path, floor: &str, corpus: &Path) -> Result<(Sample, [u64; 3])> {
    let sample = measure(
        exe,
        &[
            exe.as_os_str(),
            "floor".as_ref(),
            floor.as_ref(),
            corpus.as_os_str(),
        ],
        true,
    )?;
    let counts: Vec<u64> = sample
        .stdout
        .split_whitespace()
        .filter_map(|c| c.parse().ok())
        .collect();
    match (sample.code, counts.as_slice()) {
        (0, &[files, bytes, documents]) => Ok((sample, [files, bytes, documents])),
        _ => Err(format!("floor {floor} failed (exit code {})", sample.code)),
    }
}

/// The samples of one line of the report.
#[derive(Default)]
struct Line {
    walls: Vec<Duration>,
    peak_kib: u64,
}

impl Line {
    fn add(&mut self, sample: &Sample) {
        self.walls.push(sample.wall);
        self.peak_kib = self.peak_kib.max(sample.peak_kib);
    }

    /// The wall time at quantile `q` (0.5: the median).
    fn quantile(&self, q: f64) -> Duration {
        let mut walls = self.walls.clone();
        walls.sort();
        let rank = (q * walls.len() as f64).ceil() as usize;
        walls[rank.clamp(1, walls.len()) - 1]
    }

    fn min(&self) -> Duration {
        self.walls.iter().copied().min().unwrap_or_default()
    }

    fn peak_mib(&self) -> f64 {
        self.peak_kib as f64 / 1024.0
    }
}

fn run(args: &Args) -> Result<()> {
    let exe = env::current_exe().map_err(|e| e.to_string())?;
    let bin_dir = exe.parent().ok_or("no directory for this executable")?;
    let corpus = match &args.corpus {
        Some(corpus) => corpus.clone(),
        // target/release/bench → target/bench-corpus
        None => bin_dir.parent().unwrap_or(bin_dir).join("bench-corpus"),
    };
    if !corpus.exists() {
        eprintln!("generating {} ...", corpus.display());
        let stats = hpa_lint_bench::corpus::generate(&corpus, 120, 1, Layout::Monorepo)
            .map_err(|e| format!("generating {}: {e}", corpus.display()))?;
        eprintln!("{stats}");
    }
    let hpa_lint = match &args.hpa_lint {
        Some(path) => path.clone(),
        None => bin_dir.join("hpa-lint"),
    };
    if !hpa_lint.is_file() {
        return Err(format!(
            "{} not found: build it with `cargo build --release -p hpa-lint`",
            hpa_lint.display()
        ));
    }
    let one_file = env::temp_dir().join("hpa-lint-bench-one-file.yaml");
    fs::write(&one_file, ONE_FILE).map_err(|e| format!("{}: {e}", one_file.display()))?;
    let lint_corpus = [
        hpa_lint.as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
        corpus.as_os_str(),
    ];

    // Warm the page cache, count, and check that hpa-lint reads the same corpus.
    eprintln!("warming up ...");
    let (_, [files, bytes, _]) = run_floor(&exe, "read", &corpus)?;
    let (_, [_, _, documents]) = run_floor(&exe, "parse", &corpus)?;
    let summary = check_summary(&measure(&exe, &lint_corpus, true)?, files, documents)?;
    let facts = Facts {
        corpus: corpus.clone(),
        files,
        bytes,
        documents,
        summary,
    };

    let mut lines: [Line; 3] = Default::default();
    for run in 1..=args.runs {
        eprintln!("run {run}/{} ...", args.runs);
        lines[0].add(&run_floor(&exe, "read", &corpus)?.0);
        lines[1].add(&run_floor(&exe, "parse", &corpus)?.0);
        let sample = measure(&exe, &lint_corpus, false)?;
        if sample.code > 1 {
            return Err(format!("hpa-lint exited with {}", sample.code));
        }
        lines[2].add(&sample);
    }
    let mut one = Line::default();
    for _ in 0..args.one_file_runs {
        let sample = measure(&exe, &[hpa_lint.as_os_str(), one_file.as_os_str()], false)?;
        if sample.code > 1 {
            return Err(format!("hpa-lint exited with {} on one file", sample.code));
        }
        one.add(&sample);
    }

    let report = report(&facts, args, &lines, &one).map_err(|e| e.to_string())?;
    print!("{report}");
    if let Some(out) = &args.out {
        fs::write(out, &report).map_err(|e| format!("{}: {e}", out.display()))?;
    }
    Ok(())
}

/// Checks the exit code and the summary of hpa-lint's JSON output, and returns the summary.
fn check_summary(sample: &Sample, files: u64, documents: u64) -> Result<Value> {
    if sample.code > 1 {
        return Err(format!("hpa-lint exited with {}", sample.code));
    }
    let output: Value = serde_json::from_str(&sample.stdout)
        .map_err(|e| format!("hpa-lint's output is not JSON: {e}"))?;
    let summary = &output["summary"];
    let count = |field: &str| summary[field].as_u64();
    if count("files") != Some(files) || count("objects").is_none_or(|o| o == 0) {
        return Err(format!(
            "hpa-lint's summary does not match the corpus ({files} files): {summary}"
        ));
    }
    if count("documents") != Some(documents) {
        eprintln!("note: hpa-lint counts other documents than the parser ({documents}): {summary}");
    }
    Ok(summary.clone())
}

/// What the warm-up found out about the corpus.
struct Facts {
    corpus: PathBuf,
    files: u64,
    bytes: u64,
    documents: u64,
    /// hpa-lint's summary of it.
    summary: Value,
}

fn report(
    facts: &Facts,
    args: &Args,
    lines: &[Line; 3],
    one: &Line,
) -> Result<String, std::fmt::Error> {
    let Facts {
        corpus,
        files,
        bytes,
        documents,
        summary,
    } = facts;
    let cores = thread::available_parallelism().map_or(0, |n| n.get());
    let mb = *bytes as f64 / 1e6;
    let mut out = String::new();
    writeln!(out, "# hpa-lint benchmark\n")?;
    writeln!(
        out,
        "Corpus `{}`: {files} files, {mb:.1} MB, {documents} documents. \
         Machine: {cores} cores. Wall time: median (min) of {} runs; \
         peak RSS: the largest. hpa-lint's summary: `{summary}`.\n",
        corpus.display(),
        args.runs,
    )?;
    writeln!(out, "| Run | Wall time | MB/s | Documents/s | Peak RSS |")?;
    writeln!(out, "|---|---:|---:|---:|---:|")?;
    let names = [
        "floor 1: read every file",
        "floor 2: parse every document (serde-saphyr → `serde_json::Value`)",
        "hpa-lint --format json",
    ];
    for (name, line) in names.iter().zip(lines) {
        let median = line.quantile(0.5).as_secs_f64();
        writeln!(
            out,
            "| {name} | {median:.3} s ({:.3} s) | {:.0} | {:.0} | {:.0} MiB |",
            line.min().as_secs_f64(),
            mb / median,
            *documents as f64 / median,
            line.peak_mib(),
        )?;
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    writeln!(
        out,
        "| hpa-lint, one small HPA file ({} runs) | {:.1} ms (p95 {:.1} ms) | | | {:.0} MiB |\n",
        args.one_file_runs,
        ms(one.quantile(0.5)),
        ms(one.quantile(0.95)),
        one.peak_mib(),
    )?;
    let lint = lines[2].quantile(0.5).as_secs_f64();
    writeln!(
        out,
        "hpa-lint takes {:.1}× the time of floor 1 and {:.2}× the time of floor 2.\n",
        lint / lines[0].quantile(0.5).as_secs_f64(),
        lint / lines[1].quantile(0.5).as_secs_f64(),
    )?;
    let verdict = |met: bool| if met { "met" } else { "not met" };
    let peak_mb = lines[2].peak_kib as f64 * 1024.0 / 1e6;
    writeln!(out, "Goals:")?;
    writeln!(
        out,
        "- end to end ≥ 100 MB/s: {:.0} MB/s, {}",
        mb / lint,
        verdict(mb / lint >= 100.0)
    )?;
    writeln!(
        out,
        "- peak memory under half the corpus size ({mb:.0} MB): {peak_mb:.0} MB, {}",
        verdict(peak_mb < mb / 2.0)
    )?;
    writeln!(
        out,
        "- one file under 20 ms: p95 {:.1} ms, {}",
        ms(one.quantile(0.95)),
        verdict(one.quantile(0.95) < Duration::from_millis(20))
    )?;
    Ok(out)
}
