//! The rule library's modules form layers: a module uses only modules of
//! lower layers, so that each can be read, tested and changed knowing only
//! what is below it. The one exception is the pair `registry` ↔ `diagnostic`
//! (a finding names its rule; a rule has a default severity).
//!
//! The test reads every `crate::<module>` path outside test code and checks
//! it against [`LAYERS`].

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

/// Top-level modules of `rules/src`, lowest layer first.
const LAYERS: &[&[&str]] = &[
    &["quote", "suggest"],
    &["path"],
    &["object"],
    &["names"],
    &["source"],
    &["packed", "cluster"],
    &["model"],
    &["controller", "index"],
    &["fix", "reads"],
    &["defaults"],
    &["registry", "diagnostic"],
    &["settings"],
    &["context"],
    &["rules"],
    &["lint"],
    &["config", "workspace"],
    &["mutate"],
    &["testing"],
];

/// Same-layer uses that are allowed.
const PAIRS: &[(&str, &str)] = &[("registry", "diagnostic"), ("diagnostic", "registry")];

fn layer(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|layer| layer.contains(&module))
        .unwrap_or_else(|| panic!("module `{module}` is missing from LAYERS"))
}

/// The top-level module a source file belongs to (`model/hpa/v2.rs` → `model`).
fn module_of(relative: &Path) -> String {
    let first = relative.components().next().expect("a path in src");
    let name = first.as_os_str().to_string_lossy();
    name.trim_end_matches(".rs").to_owned()
}

/// The modules named by `crate::<module>` in code, before any test module.
fn uses(text: &str) -> BTreeSet<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    let mut found = BTreeSet::new();
    for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for (i, _) in line.match_indices("crate::") {
            let rest = &line[i + "crate::".len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
                .unwrap_or(rest.len());
            if end > 0 {
                found.insert(rest[..end].to_owned());
            }
        }
    }
    found
}

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).expect("readable src") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn modules_use_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut wrong = Vec::new();
    for file in files {
        let relative = file.strip_prefix(&src).expect("under src");
        if relative == Path::new("lib.rs") {
            continue;
        }
        let module = module_of(relative);
        let text = fs::read_to_string(&file).expect("readable source");
        for used in uses(&text) {
            if used == module {
                continue;
            }
            let allowed =
                layer(&used) < layer(&module) || PAIRS.contains(&(module.as_str(), used.as_str()));
            if !allowed {
                wrong.push(format!("{}: `{module}` uses `{used}`", relative.display()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "uses against the layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_module_is_in_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for entry in fs::read_dir(src).expect("readable src") {
        let name = entry.expect("an entry").file_name();
        let module = name.to_string_lossy().trim_end_matches(".rs").to_owned();
        if module != "lib" {
            layer(&module);
        }
    }
}
