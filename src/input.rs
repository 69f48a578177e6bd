//! Finding and reading the input files.
//!
//! Directories are walked with `ignore` (hidden files, `.gitignore` and
//! `.ignore` respected, also outside git repositories); files given explicitly
//! are read whatever their extension. `ignorePaths` from the configuration
//! applies to both. Unreadable input is an error of its own and never stops
//! the run.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use std::sync::{Mutex, PoisonError};

use ignore::overrides::{Override, OverrideBuilder};
use ignore::{WalkBuilder, WalkState};

/// Larger files are refused rather than read into memory.
pub const MAX_FILE_BYTES: u64 = 256 << 20;

const EXTENSIONS: [&str; 3] = ["yaml", "yml", "json"];

/// One input: a file, or standard input (held in memory).
pub struct SourceFile {
    /// The name shown in output.
    pub name: Arc<str>,
    /// Read for lookups only (`--context`): nothing is reported about it.
    pub context: bool,
    path: Option<PathBuf>,
    stdin: Option<Result<Arc<str>, String>>,
}

impl SourceFile {
    /// The file's text, checked to be UTF-8 text and not too large.
    pub fn read(&self) -> Result<Arc<str>, String> {
        match (&self.stdin, &self.path) {
            (Some(text), _) => text.clone(),
            (None, Some(path)) => read_file(path).map(Arc::from),
            (None, None) => Err("no input".to_owned()),
        }
    }
}

fn read_file(path: &Path) -> Result<String, String> {
    let size = std::fs::metadata(path).map_err(|e| e.to_string())?.len();
    if size > MAX_FILE_BYTES {
        return Err(format!(
            "file is {} MiB, larger than the limit of {} MiB",
            size >> 20,
            MAX_FILE_BYTES >> 20
        ));
    }
    decode(std::fs::read(path).map_err(|e| e.to_string())?)
}

/// Checks that bytes are UTF-8 text (a BOM is dropped).
fn decode(mut bytes: Vec<u8>) -> Result<String, String> {
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        bytes.drain(..3);
    }
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return Err("file is UTF-16; convert it to UTF-8".to_owned());
    }
    let head = &bytes[..bytes.len().min(8192)];
    if memchr::memchr(0, head).is_some() {
        return Err("binary file (contains NUL bytes), not YAML or JSON".to_owned());
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "file is not valid UTF-8 (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

fn ignore_matcher(globs: &[String], root: &Path) -> Result<Override, String> {
    let mut builder = OverrideBuilder::new(root);
    for glob in globs {
        builder
            .add(&format!("!{glob}"))
            .map_err(|e| format!("invalid ignorePaths glob `{glob}`: {e}"))?;
    }
    builder.build().map_err(|e| e.to_string())
}

/// Whether `ignorePaths` excludes a path (given relative to the current directory).
fn is_ignored(ignored: &Override, cwd: &Path, path: &Path, is_dir: bool) -> bool {
    // Collecting the components drops `.` segments (`./vendor`), which would
    // otherwise keep the path from matching the globs' root.
    let absolute: PathBuf = cwd.join(path).components().collect();
    ignored.matched(absolute, is_dir).is_ignore()
}

fn has_manifest_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| EXTENSIONS.iter().any(|x| e.eq_ignore_ascii_case(x)))
}

/// Walks a directory on all cores (it is mostly system calls); the caller sorts.
fn walk(
    dir: &Path,
    ignored: &Override,
    cwd: &Path,
    files: &mut Vec<PathBuf>,
    errors: &mut Vec<String>,
) {
    let (ignored, cwd) = (ignored.clone(), cwd.to_path_buf());
    let found = Mutex::new((Vec::new(), Vec::new()));
    WalkBuilder::new(dir)
        .require_git(false)
        .filter_entry(move |entry| {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            !is_ignored(&ignored, &cwd, entry.path(), is_dir)
        })
        .build_parallel()
        .run(|| {
            Box::new(|entry| {
                let mut found = found.lock().unwrap_or_else(PoisonError::into_inner);
                match entry {
                    Ok(entry) if entry.file_type().is_some_and(|t| t.is_file()) => {
                        if has_manifest_extension(entry.path()) {
                            found.0.push(entry.into_path());
                        }
                    }
                    Ok(_) => {}
                    Err(error) => found.1.push(error.to_string()),
                }
                WalkState::Continue
            })
        });
    let (walked, walk_errors) = found.into_inner().unwrap_or_else(PoisonError::into_inner);
    files.extend(walked);
    errors.extend(walk_errors);
}

/// The files to lint, sorted and without duplicates, then the files under the
/// `context` directories that are not among them, plus the errors met while
/// looking for them. `-` reads standard input (once).
pub fn collect(
    paths: &[PathBuf],
    context: &[PathBuf],
    ignore_paths: &[String],
    config_dir: &Path,
) -> Result<(Vec<SourceFile>, Vec<String>), String> {
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let ignored = ignore_matcher(ignore_paths, config_dir)?;
    let mut files = Vec::new();
    let mut errors = Vec::new();
    let mut stdin = None;
    let default = [PathBuf::from(".")];
    let paths = if paths.is_empty() {
        &default[..]
    } else {
        paths
    };
    for path in paths {
        if path.as_os_str() == "-" {
            stdin.get_or_insert_with(|| {
                let mut bytes = Vec::new();
                std::io::stdin()
                    .read_to_end(&mut bytes)
                    .map_err(|e| e.to_string())
                    .and_then(|_| decode(bytes))
                    .map(Arc::from)
            });
        } else if path.is_dir() {
            walk(path, &ignored, &cwd, &mut files, &mut errors);
        } else if !path.exists() {
            errors.push(format!("{}: no such file or directory", path.display()));
        } else if !is_ignored(&ignored, &cwd, path, false) {
            files.push(path.clone());
        }
    }
    let mut context_files = Vec::new();
    for dir in context {
        walk(dir, &ignored, &cwd, &mut context_files, &mut errors);
    }
    let mut sources = to_sources(files, false);
    if let Some(text) = stdin {
        sources.push(SourceFile {
            name: Arc::from("<stdin>"),
            context: false,
            path: None,
            stdin: Some(text),
        });
    }
    // A file given both ways is linted; `./a.yaml` and `a.yaml` are the same file.
    let absolute = |path: &Path| -> PathBuf { cwd.join(path).components().collect() };
    let linted: std::collections::HashSet<PathBuf> = sources
        .iter()
        .filter_map(|s| s.path.as_deref())
        .map(absolute)
        .collect();
    context_files.retain(|path| !linted.contains(&absolute(path)));
    sources.extend(to_sources(context_files, true));
    Ok((sources, errors))
}

fn to_sources(mut files: Vec<PathBuf>, context: bool) -> Vec<SourceFile> {
    files.sort();
    files.dedup();
    files
        .into_iter()
        .map(|path| SourceFile {
            // `./apps/x.yaml` (from walking `.`) reads better as `apps/x.yaml`.
            name: Arc::from(
                path.strip_prefix(".")
                    .unwrap_or(&path)
                    .display()
                    .to_string(),
            ),
            context,
            path: Some(path),
            stdin: None,
        })
        .collect()
}
