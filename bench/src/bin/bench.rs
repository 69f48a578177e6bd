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
use hpa_lint_rules::source::{Keep, compose, split_documents};
use nix::sys::resource::{UsageWho, getrusage};
use serde_json::Value;

/// Measures hpa-lint on generated inputs of three shapes, next to floors
/// measured in the same run.
#[derive(Parser)]
struct Args {
    /// The shapes to measure [default: all three].
    #[arg(long, value_enum)]
    profile: Vec<Profile>,
    /// Where the generated inputs are kept (generated when absent)
    /// [default: target/bench-corpora].
    #[arg(long)]
    corpora: Option<PathBuf>,
    /// The hpa-lint binary [default: target/release/hpa-lint].
    #[arg(long)]
    hpa_lint: Option<PathBuf>,
    /// Another hpa-lint binary measured the same way (an earlier release).
    #[arg(long)]
    baseline: Option<PathBuf>,
    /// Runs of each measurement.
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

/// The shapes of input.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Profile {
    /// A GitOps monorepo: multi-document files, Lists, JSON, large CRDs (120 MB).
    Gitops,
    /// One object per file, a few KB each (100 MB).
    SmallFiles,
    /// One 50 MB stream on standard input, as `helm template | hpa-lint -`.
    Stream,
    /// One 50 MB stream of nothing but HPAs (those of small-files, renamed
    /// round after round), on standard input: the most hpa-lint keeps.
    HpaStream,
}

impl Profile {
    const ALL: [Profile; 4] = [
        Profile::Gitops,
        Profile::SmallFiles,
        Profile::Stream,
        Profile::HpaStream,
    ];

    fn name(self) -> &'static str {
        match self {
            Profile::Gitops => "gitops",
            Profile::SmallFiles => "small-files",
            Profile::Stream => "stream",
            Profile::HpaStream => "hpa-stream",
        }
    }

    /// Whether the input is one stream on standard input.
    fn is_stream(self) -> bool {
        matches!(self, Profile::Stream | Profile::HpaStream)
    }
}

/// What this binary runs as in the child processes.
#[derive(Subcommand)]
enum Role {
    /// Run a command (with standard input from a file) and report its wall
    /// time, peak RSS and exit code on stderr.
    #[command(hide = true)]
    Measure {
        #[arg(long)]
        stdin: Option<PathBuf>,
        #[arg(trailing_var_arg = true, required = true)]
        command: Vec<OsString>,
    },
    /// Run a floor on an input (a directory or a file) and print `files bytes documents`.
    #[command(hide = true)]
    Floor { floor: Floor, input: PathBuf },
}

#[derive(Clone, Copy, ValueEnum)]
enum Floor {
    /// Walk the input and read every file as UTF-8 text.
    Read,
    /// The same, and check every document's syntax: one pass of the YAML
    /// parser over every byte, building nothing.
    Syntax,
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
        Some(Role::Measure { stdin, command }) => measure_role(stdin.as_deref(), command),
        Some(Role::Floor { floor, input }) => floor_role(*floor, input),
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

fn measure_role(stdin: Option<&Path>, command: &[OsString]) -> Result<()> {
    let input = match stdin {
        Some(path) => {
            Stdio::from(fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?)
        }
        None => Stdio::null(),
    };
    let start = Instant::now();
    let status = Command::new(&command[0])
        .args(&command[1..])
        .stdin(input)
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

/// A keep that builds nothing: reading a document with it is the syntax
/// check alone.
static NOTHING: Keep = Keep::Fields(&[]);

fn floor_role(floor: Floor, input: &Path) -> Result<()> {
    let mut files = Vec::new();
    if input.is_dir() {
        walk(input, &mut files)?;
    } else {
        files.push(input.to_path_buf());
    }
    let next = AtomicUsize::new(0);
    let threads = thread::available_parallelism().map_or(2, |n| n.get());
    // Each thread reads (and checks) the next file until none is left; a
    // single file's documents are shared out the same way.
    let texts: Vec<String> = if files.len() == 1 {
        vec![fs::read_to_string(&files[0]).map_err(|e| format!("{}: {e}", files[0].display()))?]
    } else {
        Vec::new()
    };
    let chunks = texts
        .first()
        .map(|t| split_documents(t))
        .unwrap_or_default();
    let work = || -> Result<(usize, usize)> {
        let (mut bytes, mut documents) = (0, 0);
        if !texts.is_empty() {
            while let Some(chunk) = chunks.get(next.fetch_add(1, Ordering::Relaxed)) {
                if let Floor::Syntax = floor {
                    compose(chunk.text, &|_, _| &NOTHING);
                }
                documents += 1;
            }
            return Ok((bytes, documents));
        }
        while let Some(path) = files.get(next.fetch_add(1, Ordering::Relaxed)) {
            let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            bytes += text.len();
            for chunk in split_documents(&text) {
                if let Floor::Syntax = floor {
                    compose(chunk.text, &|_, _| &NOTHING);
                }
                documents += 1;
            }
        }
        Ok((bytes, documents))
    };
    let totals = thread::scope(|scope| {
        let workers: Vec<_> = (0..threads).map(|_| scope.spawn(work)).collect();
        workers
            .into_iter()
            .map(|w| w.join().map_err(|_| "a worker panicked".to_owned())?)
            .collect::<Result<Vec<_>>>()
    })?;
    let bytes = match texts.first() {
        Some(text) => text.len(),
        None => totals.iter().map(|t| t.0).sum(),
    };
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

/// Runs `command` as a child of a `measure` child, with standard input from
/// `stdin` if given; its stdout is kept or discarded.
fn measure(
    exe: &Path,
    stdin: Option<&Path>,
    command: &[&std::ffi::OsStr],
    keep_stdout: bool,
) -> Result<Sample> {
    let mut child = Command::new(exe);
    child.arg("measure");
    if let Some(stdin) = stdin {
        child.arg("--stdin").arg(stdin);
    }
    let output = child
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
fn run_floor(exe: &Path, floor: &str, input: &Path) -> Result<(Sample, [u64; 3])> {
    let command = [
        exe.as_os_str(),
        "floor".as_ref(),
        floor.as_ref(),
        input.as_os_str(),
    ];
    let sample = measure(exe, None, &command, true)?;
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

    fn median(&self) -> f64 {
        self.quantile(0.5).as_secs_f64()
    }

    fn min(&self) -> Duration {
        self.walls.iter().copied().min().unwrap_or_default()
    }

    fn peak_mib(&self) -> f64 {
        self.peak_kib as f64 / 1024.0
    }
}

/// Generates a profile's input under `corpora` unless it is there.
fn prepare(profile: Profile, corpora: &Path) -> Result<PathBuf> {
    let path = |name: &str| corpora.join(name);
    let generate = |dir: &Path, size_mb, seed, layout| -> Result<()> {
        if dir.exists() {
            return Ok(());
        }
        eprintln!("generating {} ...", dir.display());
        let stats = hpa_lint_bench::corpus::generate(dir, size_mb, seed, layout)
            .map_err(|e| format!("generating {}: {e}", dir.display()))?;
        eprintln!("{stats}");
        Ok(())
    };
    fs::create_dir_all(corpora).map_err(|e| format!("{}: {e}", corpora.display()))?;
    match profile {
        Profile::Gitops => {
            generate(&path("gitops"), 120, 1, Layout::Monorepo)?;
            Ok(path("gitops"))
        }
        Profile::SmallFiles => {
            generate(&path("small-files"), 100, 2, Layout::OnePerFile)?;
            Ok(path("small-files"))
        }
        Profile::Stream => {
            let stream = path("stream.yaml");
            if !stream.exists() {
                generate(&path("small-files"), 100, 2, Layout::OnePerFile)?;
                write_stream(&path("small-files"), &stream, 50_000_000)?;
            }
            Ok(stream)
        }
        Profile::HpaStream => {
            let stream = path("hpa-stream.yaml");
            if !stream.exists() {
                generate(&path("small-files"), 100, 2, Layout::OnePerFile)?;
                write_hpa_stream(&path("small-files"), &stream, 50_000_000)?;
            }
            Ok(stream)
        }
    }
}

/// A stream of about `bytes` of nothing but the HPAs of `dir`, again and
/// again, each round's renamed (`name: web` becomes `name: web-2`).
fn write_hpa_stream(dir: &Path, out: &Path, bytes: usize) -> Result<()> {
    let mut files = Vec::new();
    walk(dir, &mut files)?;
    files.sort();
    let mut hpas = Vec::new();
    for file in files {
        let text = fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        if text.contains("\nkind: HorizontalPodAutoscaler") && !text.contains("\n---") {
            hpas.push(text.replace("\r\n", "\n"));
        }
    }
    if hpas.is_empty() {
        return Err(format!("no HPA in {}", dir.display()));
    }
    let mut stream = String::with_capacity(bytes + (1 << 20));
    'rounds: for round in 1.. {
        for hpa in &hpas {
            if stream.len() >= bytes {
                break 'rounds;
            }
            stream.push_str("---\n");
            match hpa.split_once("\n  name: ") {
                Some((head, tail)) if round > 1 => {
                    let (name, rest) = tail.split_once('\n').unwrap_or((tail, ""));
                    stream.push_str(&format!("{head}\n  name: {name}-{round}\n{rest}"));
                }
                _ => stream.push_str(hpa),
            }
            if !stream.ends_with('\n') {
                stream.push('\n');
            }
        }
    }
    let partial = out.with_extension("partial");
    fs::write(&partial, stream).map_err(|e| format!("{}: {e}", partial.display()))?;
    fs::rename(&partial, out).map_err(|e| format!("{}: {e}", out.display()))
}

/// Concatenates the documents of `dir` (in path order) into one stream of
/// about `bytes`, as a rendered chart or kustomization is.
fn write_stream(dir: &Path, out: &Path, bytes: usize) -> Result<()> {
    let mut files = Vec::new();
    walk(dir, &mut files)?;
    files.sort();
    let mut stream = String::with_capacity(bytes + (1 << 20));
    for file in files {
        if stream.len() >= bytes {
            break;
        }
        let text = fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        // JSON files are one object each; a stream holds YAML documents.
        if text.trim_start().starts_with('{') {
            continue;
        }
        stream.push_str("---\n");
        stream.push_str(&text.replace("\r\n", "\n"));
        if !stream.ends_with('\n') {
            stream.push('\n');
        }
    }
    let partial = out.with_extension("partial");
    fs::write(&partial, stream).map_err(|e| format!("{}: {e}", partial.display()))?;
    fs::rename(&partial, out).map_err(|e| format!("{}: {e}", out.display()))
}

/// The measurements of one profile.
struct Measured {
    profile: Profile,
    input: PathBuf,
    files: u64,
    bytes: u64,
    documents: u64,
    summary: Value,
    /// floor 1, floor 2, hpa-lint, and the baseline if one was given.
    lines: Vec<(String, Line)>,
}

fn run(args: &Args) -> Result<()> {
    let exe = env::current_exe().map_err(|e| e.to_string())?;
    let bin_dir = exe.parent().ok_or("no directory for this executable")?;
    let target_dir = bin_dir.parent().unwrap_or(bin_dir);
    let corpora = args
        .corpora
        .clone()
        .unwrap_or_else(|| target_dir.join("bench-corpora"));
    let hpa_lint = args
        .hpa_lint
        .clone()
        .unwrap_or_else(|| bin_dir.join("hpa-lint"));
    if !hpa_lint.is_file() {
        return Err(format!(
            "{} not found: build it with `cargo build --release -p hpa-lint`",
            hpa_lint.display()
        ));
    }
    let profiles = if args.profile.is_empty() {
        Profile::ALL.to_vec()
    } else {
        args.profile.clone()
    };
    let mut measured = Vec::new();
    for profile in profiles {
        let input = prepare(profile, &corpora)?;
        measured.push(measure_profile(&exe, args, &hpa_lint, profile, input)?);
    }
    let one = measure_one_file(&exe, args, &hpa_lint)?;
    let report = report(args, &measured, &one).map_err(|e| e.to_string())?;
    print!("{report}");
    if let Some(out) = &args.out {
        fs::write(out, &report).map_err(|e| format!("{}: {e}", out.display()))?;
    }
    Ok(())
}

/// The command that lints `input`: a directory as arguments, a stream on stdin.
fn lint_command<'a>(
    hpa_lint: &'a Path,
    profile: Profile,
    input: &'a Path,
) -> (Vec<&'a std::ffi::OsStr>, Option<&'a Path>) {
    let mut command = vec![hpa_lint.as_os_str(), "--format".as_ref(), "json".as_ref()];
    if profile.is_stream() {
        command.push("-".as_ref());
        (command, Some(input))
    } else {
        command.push(input.as_os_str());
        (command, None)
    }
}

/// The command that makes the fixes in `input`, and its name in the report:
/// `--fix` on a copy of a directory (made afresh before each run, untimed),
/// or `--diff` on a stream (`--fix` would write the fixed stream on standard
/// output and the findings on standard error, which `measure` passes on).
fn fix_command<'a>(
    hpa_lint: &'a Path,
    profile: Profile,
    input: &'a Path,
    copy: &'a Path,
) -> (String, Vec<&'a std::ffi::OsStr>, Option<&'a Path>) {
    let (args, stdin): (&[&str], _) = if profile.is_stream() {
        (&["--unsafe-fixes", "--diff", "-"], Some(input))
    } else {
        (&["--unsafe-fixes", "--fix", "--format", "json"], None)
    };
    let mut command = vec![hpa_lint.as_os_str()];
    command.extend(args.iter().map(std::ffi::OsStr::new));
    let mut name = format!("hpa-lint {}", args.join(" "));
    if stdin.is_none() {
        command.push(copy.as_os_str());
        name.push_str(" (on a fresh copy)");
    }
    (name, command, stdin)
}

/// Replaces `to` with a copy of the directory `from`.
fn fresh_copy(from: &Path, to: &Path) -> Result<()> {
    if to.exists() {
        fs::remove_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    }
    let mut files = Vec::new();
    walk(from, &mut files)?;
    for file in files {
        let target = to.join(file.strip_prefix(from).map_err(|e| e.to_string())?);
        if let Some(dir) = target.parent() {
            fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        fs::copy(&file, &target).map_err(|e| format!("{}: {e}", target.display()))?;
    }
    Ok(())
}

fn measure_profile(
    exe: &Path,
    args: &Args,
    hpa_lint: &Path,
    profile: Profile,
    input: PathBuf,
) -> Result<Measured> {
    // Warm the page cache, count, and check that hpa-lint reads the same input.
    eprintln!("{}: warming up ...", profile.name());
    let (_, [files, bytes, documents]) = run_floor(exe, "syntax", &input)?;
    let mut binaries = vec![("hpa-lint --format json".to_owned(), hpa_lint.to_path_buf())];
    if let Some(baseline) = &args.baseline {
        binaries.push((
            format!("baseline: {}", baseline.display()),
            baseline.clone(),
        ));
    }
    let (command, stdin) = lint_command(hpa_lint, profile, &input);
    let summary = check_summary(&measure(exe, stdin, &command, true)?, profile, files)?;
    let mut lines: Vec<(String, Line)> = vec![
        ("floor 1: read every file".to_owned(), Line::default()),
        (
            "floor 2: check every document's syntax (one parser pass, nothing built)".to_owned(),
            Line::default(),
        ),
    ];
    lines.extend(
        binaries
            .iter()
            .map(|(name, _)| (name.clone(), Line::default())),
    );
    let copy = input.with_file_name(format!("{}-fixed", profile.name()));
    let (fix_name, fix, fix_stdin) = fix_command(hpa_lint, profile, &input, &copy);
    lines.push((fix_name.clone(), Line::default()));
    for run in 1..=args.runs {
        eprintln!("{}: run {run}/{} ...", profile.name(), args.runs);
        lines[0].1.add(&run_floor(exe, "read", &input)?.0);
        lines[1].1.add(&run_floor(exe, "syntax", &input)?.0);
        for (i, (_, binary)) in binaries.iter().enumerate() {
            let (command, stdin) = lint_command(binary, profile, &input);
            let sample = measure(exe, stdin, &command, false)?;
            if sample.code > 1 {
                return Err(format!("{} exited with {}", binary.display(), sample.code));
            }
            lines[2 + i].1.add(&sample);
        }
        if fix_stdin.is_none() {
            fresh_copy(&input, &copy)?;
        }
        let sample = measure(exe, fix_stdin, &fix, false)?;
        if sample.code > 1 {
            return Err(format!("{fix_name} exited with {}", sample.code));
        }
        lines.last_mut().expect("the fix line").1.add(&sample);
    }
    if fix_stdin.is_none() {
        fs::remove_dir_all(&copy).map_err(|e| format!("{}: {e}", copy.display()))?;
    }
    Ok(Measured {
        profile,
        input,
        files,
        bytes,
        documents,
        summary,
        lines,
    })
}

fn measure_one_file(exe: &Path, args: &Args, hpa_lint: &Path) -> Result<Line> {
    let one_file = env::temp_dir().join("hpa-lint-bench-one-file.yaml");
    fs::write(&one_file, ONE_FILE).map_err(|e| format!("{}: {e}", one_file.display()))?;
    let mut one = Line::default();
    for _ in 0..args.one_file_runs {
        let sample = measure(
            exe,
            None,
            &[hpa_lint.as_os_str(), one_file.as_os_str()],
            false,
        )?;
        if sample.code > 1 {
            return Err(format!("hpa-lint exited with {} on one file", sample.code));
        }
        one.add(&sample);
    }
    Ok(one)
}

/// Checks the exit code and the summary of hpa-lint's JSON output, and returns the summary.
fn check_summary(sample: &Sample, profile: Profile, files: u64) -> Result<Value> {
    if sample.code > 1 {
        return Err(format!("hpa-lint exited with {}", sample.code));
    }
    let output: Value = serde_json::from_str(&sample.stdout)
        .map_err(|e| format!("hpa-lint's output is not JSON: {e}"))?;
    let summary = &output["summary"];
    let expected_files = if profile.is_stream() { 1 } else { files };
    let count = |field: &str| summary[field].as_u64();
    if count("files") != Some(expected_files) || count("objects").is_none_or(|o| o == 0) {
        return Err(format!(
            "hpa-lint's summary does not match the input ({expected_files} files): {summary}"
        ));
    }
    Ok(summary.clone())
}

/// The ratios of `line`'s runs to `floor`'s of the same round (the runs are
/// interleaved, so each pair met the same state of the machine): the least,
/// the median and the greatest. A single bench's ratio of medians moves by
/// about 0.1 from one bench to the next; these show the spread within one.
fn paired_ratios(line: &Line, floor: &Line) -> (f64, f64, f64) {
    let mut ratios: Vec<f64> = (line.walls.iter().zip(&floor.walls))
        .map(|(run, floor)| run.as_secs_f64() / floor.as_secs_f64())
        .collect();
    ratios.sort_by(f64::total_cmp);
    let median = ratios[(ratios.len() - 1) / 2];
    (ratios[0], median, ratios[ratios.len() - 1])
}

fn report(args: &Args, measured: &[Measured], one: &Line) -> Result<String, std::fmt::Error> {
    let cores = thread::available_parallelism().map_or(0, |n| n.get());
    let mut out = String::new();
    writeln!(out, "# hpa-lint benchmark\n")?;
    writeln!(
        out,
        "Machine: {cores} cores. Wall time: median (min) of {} runs; peak RSS: the largest.\n",
        args.runs
    )?;
    for m in measured {
        let mb = m.bytes as f64 / 1e6;
        writeln!(out, "## {}\n", m.profile.name())?;
        writeln!(
            out,
            "`{}`: {} files, {mb:.1} MB, {} documents. hpa-lint's summary: `{}`.\n",
            m.input.display(),
            m.files,
            m.documents,
            m.summary
        )?;
        writeln!(
            out,
            "| Run | Wall time | MB/s | Documents/s | Peak RSS | × floor 1 | × floor 2 |"
        )?;
        writeln!(out, "|---|---:|---:|---:|---:|---:|---:|")?;
        let (floor1, floor2) = (m.lines[0].1.median(), m.lines[1].1.median());
        for (name, line) in &m.lines {
            let median = line.median();
            writeln!(
                out,
                "| {name} | {median:.3} s ({:.3} s) | {:.0} | {:.0} | {:.0} MiB | {:.2} | {:.2} |",
                line.min().as_secs_f64(),
                mb / median,
                m.documents as f64 / median,
                line.peak_mib(),
                median / floor1,
                median / floor2,
            )?;
        }
        let lint = &m.lines[2].1;
        let fix = &m.lines[m.lines.len() - 1];
        writeln!(
            out,
            "\n`{}`: {:.2}× the time of the plain run.",
            fix.0,
            fix.1.median() / lint.median()
        )?;
        let verdict = |met: bool| if met { "met" } else { "not met" };
        let peak_mb = lint.peak_kib as f64 * 1024.0 / 1e6;
        writeln!(out, "\nGoals:")?;
        writeln!(
            out,
            "- ≥ 100 MB/s: {:.0} MB/s, {}",
            mb / lint.median(),
            verdict(mb / lint.median() >= 100.0)
        )?;
        let syntax = lint.median() / floor2;
        let (low, paired, high) = paired_ratios(lint, &m.lines[1].1);
        writeln!(
            out,
            "- ≤ 1.2× floor 2: {syntax:.2}×, {} (each run against the floor of its own \
             round: median {paired:.2}×, from {low:.2}× to {high:.2}×)",
            verdict(syntax <= 1.2)
        )?;
        if m.profile == Profile::SmallFiles {
            let ratio = lint.median() / floor1;
            writeln!(
                out,
                "- ≤ 1.5× floor 1: {ratio:.2}×, {}",
                verdict(ratio <= 1.5)
            )?;
        }
        writeln!(
            out,
            "- peak memory under half the input ({mb:.0} MB): {peak_mb:.0} MB, {}\n",
            verdict(peak_mb < mb / 2.0)
        )?;
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    writeln!(
        out,
        "One small HPA file ({} runs): {:.1} ms (p95 {:.1} ms), {:.0} MiB; goal under 20 ms: {}.",
        args.one_file_runs,
        ms(one.quantile(0.5)),
        ms(one.quantile(0.95)),
        one.peak_mib(),
        if one.quantile(0.95) < Duration::from_millis(20) {
            "met"
        } else {
            "not met"
        },
    )?;
    Ok(out)
}
