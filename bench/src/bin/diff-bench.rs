//! `diff-bench`: `hpa-lint diff` on a git repository of 1,000 HPAs with
//! their Deployments, 50 of them changed, beside its floors: git reading both
//! trees (what `diff` cannot avoid) and `hpa-lint` linting the work tree
//! once. See `bench/README.md`.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use nix::sys::resource::{UsageWho, getrusage};

/// Times `hpa-lint diff` on a generated repository.
#[derive(Parser)]
struct Args {
    /// Runs of each measurement; the report gives the median and the fastest.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// HPAs in the repository.
    #[arg(long, default_value_t = 1000)]
    hpas: usize,
    /// HPAs the pull request changes.
    #[arg(long, default_value_t = 50)]
    changed: usize,
    /// Where the repository is made (once; kept between runs).
    #[arg(long, default_value = "target/diff-bench")]
    work_dir: PathBuf,
    /// The binary measured.
    #[arg(long, default_value = "target/release/hpa-lint")]
    hpa_lint: PathBuf,
    /// Internal: run this command and end standard error with its peak RSS.
    #[arg(long, hide = true, num_args = 1.., allow_hyphen_values = true)]
    measure: Option<Vec<String>>,
}

const MARK: &str = "diff-bench peak RSS KiB, CPU ms:";

fn measure(command: &[String]) -> ExitCode {
    let status = Command::new(&command[0])
        .args(&command[1..])
        .stdout(Stdio::null())
        .status();
    let code = status.ok().and_then(|s| s.code()).unwrap_or(2);
    let (peak, cpu) = getrusage(UsageWho::RUSAGE_CHILDREN).map_or((0, 0), |u| {
        let ms = |t: nix::sys::time::TimeVal| t.tv_sec() * 1000 + t.tv_usec() / 1000;
        (u.max_rss(), ms(u.user_time()) + ms(u.system_time()))
    });
    eprintln!("{MARK} {peak} {cpu}");
    ExitCode::from(u8::try_from(code).unwrap_or(2))
}

/// The CPU time of the children waited for so far.
fn children_cpu() -> Duration {
    getrusage(UsageWho::RUSAGE_CHILDREN).map_or(Duration::ZERO, |u| {
        let d = |t: nix::sys::time::TimeVal| {
            Duration::from_secs(t.tv_sec() as u64) + Duration::from_micros(t.tv_usec() as u64)
        };
        d(u.user_time()) + d(u.system_time())
    })
}

/// SplitMix64, so a run makes the same repository everywhere.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

const METRICS: [&str; 4] = [
    "  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 65}}
",
    "  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
  - type: Resource
    resource: {name: memory, target: {type: Utilization, averageUtilization: 80}}
",
    "  metrics:
  - type: Pods
    pods:
      metric: {name: http_requests_per_second}
      target: {type: AverageValue, averageValue: '100'}
",
    "  metrics:
  - type: External
    external:
      metric: {name: queue_messages_ready, selector: {matchLabels: {queue: work}}}
      target: {type: AverageValue, averageValue: '30'}
",
];

const BEHAVIORS: [&str; 3] = [
    "",
    "  behavior:
    scaleDown:
      stabilizationWindowSeconds: 600
      policies: [{type: Pods, value: 1, periodSeconds: 120}]
",
    "  behavior:
    scaleUp:
      policies: [{type: Percent, value: 100, periodSeconds: 30}]
",
];

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `apps/NAMESPACE/NAME/{deployment.yaml,hpa.yaml}` per app: a Deployment
/// and a Service, and the HPA.
fn generate(root: &Path, hpas: usize) {
    let mut rng = Rng(15);
    for i in 0..hpas {
        let (namespace, name) = (format!("team-{:02}", i % 25), format!("app-{i:04}"));
        let cpu = [100, 250, 500, 1000][rng.below(4) as usize];
        let min = 1 + rng.below(3);
        let max = min + 2 + rng.below(20);
        let dir = format!("apps/{namespace}/{name}");
        write(
            root,
            &format!("{dir}/deployment.yaml"),
            &format!(
                "apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}, namespace: {namespace}, labels: {{app: {name}}}}}
spec:
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers:
      - name: app
        image: registry.example.com/{namespace}/{name}:1.0.{i}
        ports: [{{containerPort: 8080}}]
        resources:
          requests: {{cpu: {cpu}m, memory: 256Mi}}
          limits: {{memory: 512Mi}}
---
apiVersion: v1
kind: Service
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  selector: {{app: {name}}}
  ports: [{{port: 80, targetPort: 8080}}]
"
            ),
        );
        write(
            root,
            &format!("{dir}/hpa.yaml"),
            &format!(
                "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: {name}}}
  minReplicas: {min}
  maxReplicas: {max}
{}{}",
                METRICS[rng.below(4) as usize],
                BEHAVIORS[rng.below(3) as usize]
            ),
        );
    }
}

/// The pull request: every `hpas / changed`-th HPA changes, in turn its
/// ceiling, its scale-down window (written anew), its minimum, its target's
/// CPU request, or its file (moved, and its ceiling changed).
fn change(root: &Path, hpas: usize, changed: usize) {
    let every = (hpas / changed.max(1)).max(1);
    for (n, i) in (0..hpas).step_by(every).take(changed).enumerate() {
        let dir = root.join(format!("apps/team-{:02}/app-{i:04}", i % 25));
        let hpa = dir.join("hpa.yaml");
        let text = std::fs::read_to_string(&hpa).unwrap();
        let bump = |text: &str| {
            let line = text
                .lines()
                .find(|l| l.starts_with("  maxReplicas: "))
                .unwrap();
            let max: u64 = line["  maxReplicas: ".len()..].parse().unwrap();
            text.replacen(line, &format!("  maxReplicas: {}", max * 2), 1)
        };
        match n % 5 {
            0 => std::fs::write(&hpa, bump(&text)).unwrap(),
            1 => std::fs::write(
                &hpa,
                text.lines()
                    .take_while(|l| !l.starts_with("  behavior:"))
                    .map(|l| format!("{l}\n"))
                    .collect::<String>()
                    + "  behavior:\n    scaleDown: {stabilizationWindowSeconds: 60}\n",
            )
            .unwrap(),
            2 => {
                // The maximum is at least the minimum + 2.
                let line = text
                    .lines()
                    .find(|l| l.starts_with("  minReplicas: "))
                    .unwrap();
                let min: u64 = line["  minReplicas: ".len()..].parse().unwrap();
                std::fs::write(
                    &hpa,
                    text.replacen(line, &format!("  minReplicas: {}", min + 1), 1),
                )
                .unwrap();
            }
            3 => {
                // Pods twice as large, run hotter on CPU.
                let deployment = dir.join("deployment.yaml");
                let spec = std::fs::read_to_string(&deployment).unwrap();
                let start = spec.find("cpu: ").unwrap() + 5;
                let end = start + spec[start..].find('m').unwrap();
                let cpu: u64 = spec[start..end].parse().unwrap();
                std::fs::write(
                    &deployment,
                    format!("{}{}{}", &spec[..start], cpu * 2, &spec[end..]),
                )
                .unwrap();
                let from = text.find("  metrics:").unwrap();
                let to = text.find("  behavior:").unwrap_or(text.len());
                let hotter = METRICS[0].replace("averageUtilization: 65", "averageUtilization: 80");
                std::fs::write(&hpa, format!("{}{hotter}{}", &text[..from], &text[to..])).unwrap();
            }
            _ => {
                std::fs::remove_file(&hpa).unwrap();
                std::fs::write(dir.join("autoscaling.yaml"), bump(&text)).unwrap();
            }
        }
    }
}

fn git(dir: &Path, args: &[&str]) -> Vec<u8> {
    let output = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com")
        .env("GIT_AUTHOR_DATE", "2026-11-02T10:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-11-02T10:00:00Z")
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

/// The repository, made once: `main` and `feature` (checked out).
fn repository(args: &Args) -> PathBuf {
    let root = args
        .work_dir
        .join(format!("repo-{}-{}", args.hpas, args.changed));
    if root.join(".git").exists() {
        return root;
    }
    let partial = root.with_extension("partial");
    let _ = std::fs::remove_dir_all(&partial);
    std::fs::create_dir_all(&partial).unwrap();
    git(&partial, &["init", "-q", "-b", "main"]);
    generate(&partial, args.hpas);
    git(&partial, &["add", "-A"]);
    git(&partial, &["commit", "-q", "-m", "base"]);
    git(&partial, &["checkout", "-q", "-b", "feature"]);
    change(&partial, args.hpas, args.changed);
    git(&partial, &["add", "-A"]);
    git(&partial, &["commit", "-q", "-m", "pull request"]);
    // Packed, as a clone is.
    git(&partial, &["gc", "-q"]);
    std::fs::rename(&partial, &root).unwrap();
    root
}

/// What `diff` cannot avoid: both revisions' manifests listed and read
/// through git, the same two commands per revision.
fn read_with_git(root: &Path) -> usize {
    let mut bytes = 0;
    for revision in ["main", "feature"] {
        let listing = git(root, &["ls-tree", "-r", "-z", revision]);
        let objects: Vec<String> = listing
            .split(|b| *b == 0)
            .filter_map(|entry| {
                let entry = String::from_utf8_lossy(entry);
                let (meta, path) = entry.split_once('\t')?;
                path.ends_with(".yaml")
                    .then(|| meta.split(' ').nth(2).unwrap().to_owned())
            })
            .collect();
        let mut child = Command::new("git")
            .current_dir(root)
            .args(["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let count = objects.len();
        let writer = std::thread::spawn(move || {
            for object in objects {
                writeln!(stdin, "{object}").unwrap();
            }
        });
        let mut reader = BufReader::new(child.stdout.take().unwrap());
        for _ in 0..count {
            let mut header = String::new();
            reader.read_line(&mut header).unwrap();
            let size: usize = header
                .trim_end()
                .rsplit(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let mut body = vec![0; size + 1];
            reader.read_exact(&mut body).unwrap();
            bytes += size;
        }
        writer.join().unwrap();
        child.wait().unwrap();
    }
    bytes
}

/// Runs `command` through a `--measure` wrapper: `(wall time, peak RSS
/// KiB, CPU time)`.
fn run(root: &Path, command: &[String]) -> (Duration, u64, Duration) {
    let start = Instant::now();
    let output = Command::new(std::env::current_exe().unwrap())
        .current_dir(root)
        .arg("--measure")
        .args(command)
        .output()
        .unwrap();
    let elapsed = start.elapsed();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let figures: Vec<u64> = stderr
        .lines()
        .find_map(|l| l.strip_prefix(MARK))
        .map(|p| {
            p.split_whitespace()
                .filter_map(|n| n.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    assert!(output.status.success(), "{command:?}: {stderr}");
    let (peak, cpu) = (
        figures.first().copied().unwrap_or(0),
        figures.get(1).copied().unwrap_or(0),
    );
    (elapsed, peak, Duration::from_millis(cpu))
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(command) = &args.measure {
        return measure(command);
    }
    let hpa_lint = std::fs::canonicalize(&args.hpa_lint).expect("the binary measured exists");
    let root = repository(&args);
    let bin = hpa_lint.display().to_string();
    let diff = |extra: &[&str]| -> Vec<String> {
        let mut command = vec![
            bin.clone(),
            "diff".into(),
            "--isolated".into(),
            "main".into(),
        ];
        command.extend(extra.iter().map(|s| (*s).to_owned()));
        command
    };
    let lines: Vec<(&str, Option<Vec<String>>)> = vec![
        ("git ls-tree + cat-file of both revisions (floor)", None),
        (
            "hpa-lint: lint the work tree once",
            Some(vec![
                bin.clone(),
                "--isolated".into(),
                "--format".into(),
                "json".into(),
                ".".into(),
            ]),
        ),
        (
            "diff main main (read, match; nothing to compare)",
            Some(diff(&["main"])),
        ),
        (
            "diff main feature --load step",
            Some(diff(&["feature", "--load", "step"])),
        ),
        (
            "diff main feature (step, spike, ramp, daily)",
            Some(diff(&["feature", "--format", "json"])),
        ),
        (
            "diff main feature --format markdown --plot-dir",
            Some(diff(&[
                "feature",
                "--format",
                "markdown",
                "--plot-dir",
                "../diff-bench-plots",
            ])),
        ),
    ];
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); lines.len()];
    let mut cpus: Vec<Vec<Duration>> = vec![Vec::new(); lines.len()];
    let mut peaks = vec![0_u64; lines.len()];
    let mut bytes = 0;
    // Interleaved, so that a slow moment of the machine spreads over all.
    for _ in 0..args.runs.max(1) {
        for (i, (_, command)) in lines.iter().enumerate() {
            match command {
                None => {
                    let (start, cpu) = (Instant::now(), children_cpu());
                    bytes = read_with_git(&root);
                    times[i].push(start.elapsed());
                    cpus[i].push(children_cpu() - cpu);
                }
                Some(command) => {
                    // `hpa-lint` lints exit 1 on findings; the others must succeed.
                    let (time, peak, cpu) = if i == 1 {
                        let (start, cpu) = (Instant::now(), children_cpu());
                        Command::new(&command[0])
                            .current_dir(&root)
                            .args(&command[1..])
                            .stdout(Stdio::null())
                            .status()
                            .unwrap();
                        (start.elapsed(), 0, children_cpu() - cpu)
                    } else {
                        run(&root, command)
                    };
                    times[i].push(time);
                    cpus[i].push(cpu);
                    peaks[i] = peaks[i].max(peak);
                }
            }
        }
    }
    let floor = median(&mut times[0].clone());
    println!(
        "diff-bench: {} HPAs with their Deployments and Services ({} files, {:.1} MB per revision), {} changed, {} runs, {} cores",
        args.hpas,
        args.hpas * 2,
        bytes as f64 / 2.0 / 1e6,
        args.changed,
        args.runs,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );
    let cpu_floor = median(&mut cpus[0].clone());
    println!(
        "| measurement | median | fastest | × floor | CPU (median) | CPU × floor | peak RSS |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (i, (name, _)) in lines.iter().enumerate() {
        let fastest = *times[i].iter().min().unwrap();
        let middle = median(&mut times[i]);
        let rss = if peaks[i] > 0 {
            format!("{} MiB", peaks[i] / 1024)
        } else {
            "-".to_owned()
        };
        let cpu = median(&mut cpus[i]);
        println!(
            "| {name} | {:.0} ms | {:.0} ms | {:.1} | {:.0} ms | {:.1} | {rss} |",
            middle.as_secs_f64() * 1000.0,
            fastest.as_secs_f64() * 1000.0,
            middle.as_secs_f64() / floor.as_secs_f64(),
            cpu.as_secs_f64() * 1000.0,
            cpu.as_secs_f64() / cpu_floor.as_secs_f64(),
        );
    }
    ExitCode::SUCCESS
}
