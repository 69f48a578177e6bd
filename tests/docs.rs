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
         `rules:` sets a rule's level ([configuration](../configuration.md)).\n\n\
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

/// The Markdown pages a reader follows: the front page, `docs/` and the
/// examples' and benchmarks' pages.
fn markdown_pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![
        root.join("README.md"),
        root.join("examples/README.md"),
        root.join("bench/README.md"),
    ];
    let mut dirs = vec![root.join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|ext| ext == "md") {
                pages.push(path);
            }
        }
    }
    pages
}

/// The lines of a page outside its fenced code blocks.
fn prose(page: &str) -> impl Iterator<Item = &str> {
    let mut fenced = false;
    page.lines().filter(move |line| {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            return false;
        }
        !fenced
    })
}

/// The anchors GitHub gives a page's headings: lower case, punctuation
/// dropped, spaces as hyphens, and `-1`, `-2`… on repeats.
fn anchors(page: &str) -> Vec<String> {
    let mut anchors: Vec<String> = Vec::new();
    for line in prose(page) {
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        let heading = heading.trim_start_matches('#');
        if !heading.starts_with(' ') {
            continue;
        }
        let slug: String = heading
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let repeats = anchors
            .iter()
            .filter(|a| **a == slug || a.starts_with(&format!("{slug}-")))
            .count();
        anchors.push(match repeats {
            0 => slug,
            n => format!("{slug}-{n}"),
        });
    }
    anchors
}

/// The targets of a page's inline links, `[text](target)`, outside code spans.
fn links(page: &str) -> Vec<String> {
    let mut links = Vec::new();
    let outside_code = prose(page).flat_map(|line| line.split('`').step_by(2));
    for text in outside_code {
        let mut rest = text;
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            if let Some(end) = rest.find(')') {
                links.push(rest[..end].to_owned());
                rest = &rest[end..];
            }
        }
    }
    links
}

/// Every relative link of the documentation leads to a file that exists, and
/// every `#anchor` to a heading of its page.
#[test]
fn documentation_links_resolve() {
    let mut broken = Vec::new();
    for page in markdown_pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for link in links(&text) {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = link.split_once('#').unwrap_or((&link, ""));
            let target = if file.is_empty() {
                page.clone()
            } else {
                page.parent().unwrap().join(file)
            };
            let resolves = target.exists()
                && (anchor.is_empty()
                    || std::fs::read_to_string(&target)
                        .is_ok_and(|target| anchors(&target).iter().any(|a| a == anchor)));
            if !resolves {
                broken.push(format!("{}: {link}", page.display()));
            }
        }
    }
    assert!(broken.is_empty(), "broken links: {broken:#?}");
}
