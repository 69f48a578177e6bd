//! The output on the shipped examples and the real-world corpus, byte for
//! byte, in every format: recorded before the reader was rewritten for speed
//! (issue 18), so a faster reader cannot change what users see.
//!
//! The outputs live in `tests/golden/`. A change of a rule or a message that
//! is meant to change them records them again with `UPDATE_GOLDEN=1 cargo test
//! -p hpa-lint --test golden`; a change of the reader never should.

use std::path::Path;

mod common;

use common::*;

/// The runs recorded: a name and the arguments before the input.
const RUNS: &[(&str, &[&str])] = &[
    ("text", &["--format", "text"]),
    ("json", &["--format", "json"]),
    ("sarif", &["--format", "sarif"]),
    ("github", &["--format", "github"]),
    // Every rule, pedantic ones too: they read more of each object.
    ("all-rules.json", &["--format", "json", "--select", "all"]),
    // The fixes, where documents are read again and edited.
    ("diff", &["--unsafe-fixes", "--diff"]),
];

const CORPORA: &[(&str, &str)] = &[
    ("examples", "examples"),
    ("realworld", "tests/corpus/realworld"),
];

/// The output of one run, with what changes from build to build left out.
fn output(dir: &str, args: &[&str]) -> String {
    let output = hpa_lint()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["--color", "never"])
        .args(args)
        .arg(dir)
        .output()
        .unwrap();
    let code = output.status.code().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    format!("exit code: {code}\n--- stderr\n{stderr}--- stdout\n{stdout}")
        .replace(env!("CARGO_PKG_VERSION"), "[version]")
}

#[test]
fn outputs_on_the_examples_and_the_real_world_corpus_are_unchanged() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut changed = Vec::new();
    for (corpus, dir) in CORPORA {
        for (run, args) in RUNS {
            let file = golden.join(format!("{corpus}.{run}"));
            let now = output(dir, args);
            if update {
                std::fs::create_dir_all(&golden).unwrap();
                std::fs::write(&file, &now).unwrap();
                continue;
            }
            let before = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            if before != now {
                changed.push(format!(
                    "{}:\n{}",
                    file.display(),
                    similar::TextDiff::from_lines(&before, &now)
                        .unified_diff()
                        .context_radius(2)
                ));
            }
        }
    }
    assert!(
        changed.is_empty(),
        "outputs changed:\n{}",
        changed.join("\n")
    );
}
