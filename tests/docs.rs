//! The reference pages under `docs/` that are generated from the rules' own
//! documentation stay current: `UPDATE_DOCS=1 cargo test --test docs` writes them.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use hpa_lint_rules::rules::ALL;

fn rules_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules")
}

fn hpa_lint(args: &[&str]) -> String {
    let output = Command::cargo_bin("hpa-lint")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "{args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// The index: what the rules are, and the table of `hpa-lint rules`, each
/// name linking to its page.
fn index() -> String {
    let mut table = hpa_lint(&["rules", "--format", "markdown"]);
    for rule in ALL {
        table = table.replacen(
            &format!("| `{}` |", rule.name),
            &format!("| [`{0}`]({0}.md) |", rule.name),
            1,
        );
    }
    format!(
        "# Rules\n\n\
         <!-- Generated from the rules' own documentation by `UPDATE_DOCS=1 cargo test --test docs`; do not edit. -->\n\n\
         Every finding names its rule. `hpa-lint explain RULE` prints a rule's page;\n\
         `--select` and `--ignore` take rule names or categories, and the configuration's\n\
         `rules:` sets a rule's level ([configuration](../../README.md#configuration)).\n\n\
         {table}"
    )
}

/// Every generated page, by path.
fn pages() -> Vec<(PathBuf, String)> {
    let dir = rules_dir();
    let mut pages = vec![(dir.join("README.md"), index())];
    for rule in ALL {
        let page = hpa_lint(&["explain", rule.name]);
        pages.push((dir.join(format!("{}.md", rule.name)), page));
    }
    pages
}

#[test]
fn rule_pages_are_current() {
    let pages = pages();
    let update = std::env::var_os("UPDATE_DOCS").is_some();
    if update {
        std::fs::create_dir_all(rules_dir()).unwrap();
    }
    let mut stale = Vec::new();
    for (path, text) in &pages {
        if update {
            std::fs::write(path, text).unwrap();
        } else if std::fs::read_to_string(path).ok().as_deref() != Some(text.as_str()) {
            stale.push(path.display().to_string());
        }
    }
    // Pages of rules that no longer exist.
    for entry in std::fs::read_dir(rules_dir()).unwrap() {
        let path = entry.unwrap().path();
        if !pages.iter().any(|(page, _)| *page == path) {
            if update {
                std::fs::remove_file(&path).unwrap();
            } else {
                stale.push(path.display().to_string());
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale rule pages (run `UPDATE_DOCS=1 cargo test --test docs`): {stale:#?}"
    );
}
