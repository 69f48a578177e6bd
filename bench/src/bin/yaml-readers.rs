//! `yaml-readers`: YAML readers on the bench's corpora, events only (nothing
//! built), on one core: the one hpa-lint uses and the alternatives, so that
//! a switch is decided on figures (see README.md).
//!
//! Every document of a profile is read into memory first (cut as hpa-lint
//! cuts streams), then each reader drains its events from every document,
//! `--runs` times, the readers interleaved; MB/s from the median run. Then
//! each reader reads mutants of the real-world corpus and the examples and
//! the panics are counted.

use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Parser;
use hpa_lint_bench::rng::Rng;
use hpa_lint_rules::source::{Keep, compose, quick_event_count, split_documents};

#[derive(Parser)]
struct Args {
    /// Where `bench` generated its inputs.
    #[arg(long, default_value = "target/bench-corpora")]
    corpora: PathBuf,
    /// Timed runs per reader and profile.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Mutants read by each reader, looking for panics.
    #[arg(long, default_value_t = 20_000)]
    mutants: usize,
    /// Only these readers (by the start of their name).
    #[arg(long)]
    reader: Vec<String>,
}

/// A reader: drains the events of one document; how many it read.
type Read = fn(&str) -> usize;

/// A keep that builds nothing: the syntax check alone.
static NOTHING: Keep = Keep::Fields(&[]);

const READERS: &[(&str, Read)] = &[
    ("hpa-lint syntax check (floor 2)", |text| {
        usize::from(compose(text, &|_, _| &NOTHING).problems.is_empty())
    }),
    (
        "hpa-lint quick reader (events only; None: left to the full reader)",
        |text| quick_event_count(text).unwrap_or_default(),
    ),
    ("granit-parser 2.1", |text| {
        granit_parser::Parser::new_from_str(text)
            .take_while(Result::is_ok)
            .count()
    }),
    ("saphyr-parser 0.3", |text| {
        saphyr_parser::Parser::new_from_str(text)
            .take_while(Result::is_ok)
            .count()
    }),
    ("yaml-rust2 0.13", |text| {
        let mut parser = yaml_rust2::parser::Parser::new_from_str(text);
        let mut events = 0;
        while let Ok((event, _)) = parser.next_token() {
            events += 1;
            if event == yaml_rust2::parser::Event::StreamEnd {
                break;
            }
        }
        events
    }),
    ("libyaml-safer 0.3", |text| {
        let mut parser = libyaml_safer::Parser::new();
        let mut bytes = text.as_bytes();
        parser.set_input_string(&mut bytes);
        parser.take_while(Result::is_ok).count()
    }),
    ("rlsp-yaml-parser 0.11", |text| {
        rlsp_yaml_parser::parse_events(text)
            .take_while(Result::is_ok)
            .count()
    }),
];

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, out);
        } else if path
            .extension()
            .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
        {
            out.push(path);
        }
    }
}

/// The documents of every file under `input` (or of the one file).
fn documents(input: &Path) -> Vec<String> {
    let mut files = Vec::new();
    if input.is_dir() {
        files_under(input, &mut files);
    } else {
        files.push(input.to_path_buf());
    }
    files.sort();
    let mut documents = Vec::new();
    for file in files {
        let Ok(text) = fs::read_to_string(&file) else {
            continue;
        };
        documents.extend(split_documents(&text).iter().map(|c| c.text.to_owned()));
    }
    documents
}

fn time(read: Read, documents: &[String]) -> Duration {
    let start = Instant::now();
    let events: usize = documents.iter().map(|d| read(d)).sum();
    std::hint::black_box(events);
    start.elapsed()
}

/// Text that breaks parsers (as the fuzz test of the CLI inserts).
const INSERTS: [&str; 16] = [
    "é", "\u{2028}", "\u{feff}", "\r", "\t", "&a ", "*a", "!!int ", "<<: ", "{{ x }}", "- ", ": ",
    "[", "{", "\"", "#",
];

/// One random change of `text`, keeping it UTF-8.
fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut at = rng.below(text.len() + 1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let insert = rng.pick(&INSERTS);
    match rng.below(4) {
        0 => format!("{}{insert}{}", &text[..at], &text[at..]),
        1 => {
            let mut end = (at + 1 + rng.below(40)).min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            format!("{}{}", &text[..at], &text[end..])
        }
        2 => text.lines().map(|l| format!("{insert}{l}\n")).collect(),
        _ => format!("{}\n{insert}{}", &text[..at], &text[at..]),
    }
}

fn main() {
    let args = Args::parse();
    let readers: Vec<(&str, Read)> = READERS
        .iter()
        .copied()
        .filter(|(name, _)| {
            args.reader.is_empty() || args.reader.iter().any(|r| name.starts_with(r.as_str()))
        })
        .collect();
    println!("| reader | gitops MB/s | small-files MB/s | stream MB/s | panics on mutants |");
    println!("|---|---|---|---|---|");
    let mut rows: Vec<Vec<String>> = readers
        .iter()
        .map(|(name, _)| vec![name.to_string()])
        .collect();
    for profile in ["gitops", "small-files", "stream.yaml"] {
        let documents = documents(&args.corpora.join(profile));
        let bytes: usize = documents.iter().map(String::len).sum();
        let quick: usize = documents
            .iter()
            .filter(|d| quick_event_count(d).is_some())
            .map(String::len)
            .sum();
        eprintln!(
            "{profile}: {} documents, {bytes} bytes, {:.1} % of them read by the quick reader",
            documents.len(),
            quick as f64 * 100.0 / bytes as f64
        );
        let mut times: Vec<Vec<Duration>> = vec![Vec::new(); readers.len()];
        for _ in 0..args.runs {
            for (i, (_, read)) in readers.iter().enumerate() {
                times[i].push(time(*read, &documents));
            }
        }
        for (row, mut times) in rows.iter_mut().zip(times) {
            times.sort();
            let median = times[times.len() / 2].as_secs_f64();
            row.push(format!("{:.0}", bytes as f64 / 1e6 / median));
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut seeds = documents(&root.join("tests/corpus/realworld"));
    seeds.extend(documents(&root.join("examples")));
    // Silence the panic messages: they are counted.
    std::panic::set_hook(Box::new(|_| {}));
    for (row, (_, read)) in rows.iter_mut().zip(&readers) {
        let mut rng = Rng::new(18);
        let mut panics = 0;
        for _ in 0..args.mutants {
            let seed = &seeds[rng.below(seeds.len())];
            let mutant = mutate(seed, &mut rng);
            if catch_unwind(AssertUnwindSafe(|| read(&mutant))).is_err() {
                panics += 1;
            }
        }
        row.push(format!("{panics} of {}", args.mutants));
    }
    for row in rows {
        println!("| {} |", row.join(" | "));
    }
}
