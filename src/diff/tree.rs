//! The two trees `diff` compares: a git revision, read with the `git` CLI
//! (`ls-tree` and one `cat-file --batch`, which touch neither the work tree
//! nor the index), or a directory read as the linter reads one.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use hpa_lint::input::{self, SourceFile};

/// A side of the diff.
#[derive(Clone, Debug)]
pub enum Tree {
    /// A revision as given, and its commit.
    Revision { name: String, commit: String },
    /// A directory; `.` is the work tree.
    Directory(PathBuf),
}

impl Tree {
    /// A directory when `spec` names one, else a revision of the repository
    /// the current directory is in.
    pub fn resolve(spec: &str) -> Result<Self> {
        if Path::new(spec).is_dir() {
            return Ok(Tree::Directory(PathBuf::from(spec)));
        }
        let output = git()
            .args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
            .arg(format!("{spec}^{{commit}}"))
            .output()
            .context("running git to read a revision (is git installed?)")?;
        if output.status.success() {
            let commit = String::from_utf8_lossy(&output.stdout).trim().to_owned();
            return Ok(Tree::Revision {
                name: spec.to_owned(),
                commit,
            });
        }
        let inside = git()
            .args(["rev-parse", "--is-inside-work-tree"])
            .output()
            .is_ok_and(|o| o.status.success());
        let shown = hpa_lint::simulate::trace::quoted(spec);
        if inside {
            bail!(
                "{shown} is neither a directory nor a revision of this git repository (a branch, tag or commit: `origin/main`, `HEAD~1`); in CI, fetch it first (`git fetch origin main`, or a checkout with `fetch-depth: 0`)"
            );
        }
        bail!("{shown} is not a directory, and the current directory is not in a git repository");
    }

    /// How the outputs name the tree: `origin/main (1a2b3c4)`, `base/`, `the work tree`.
    pub fn label(&self) -> String {
        match self {
            Tree::Revision { name, commit } => {
                format!("{name} ({})", &commit[..commit.len().min(7)])
            }
            Tree::Directory(dir) if dir == Path::new(".") => "the work tree".to_owned(),
            Tree::Directory(dir) => format!("{}/", dir.display()),
        }
    }

    /// The manifests of the tree under `paths` (all of it without), named
    /// by their path in the tree; a revision's file contents come from `blobs`.
    fn read(
        &self,
        paths: &[PathBuf],
        ignore: (&[String], &Path),
        blobs: &mut Blobs,
    ) -> Result<Vec<SourceFile>> {
        match self {
            Tree::Directory(dir) => {
                let roots: Vec<PathBuf> = if paths.is_empty() {
                    vec![dir.clone()]
                } else {
                    paths.iter().map(|p| dir.join(p)).collect()
                };
                let (mut sources, errors) =
                    input::collect(&roots, &[], ignore.0, ignore.1, input::Order::Given)
                        .map_err(anyhow::Error::msg)?;
                if let Some(error) = errors.first() {
                    bail!("{error}");
                }
                for source in &mut sources {
                    let relative = source
                        .path()
                        .and_then(|p| p.strip_prefix(dir).ok())
                        .map(|p| p.display().to_string());
                    if let Some(relative) = relative {
                        source.name = relative.into();
                    }
                }
                Ok(sources)
            }
            Tree::Revision { commit, .. } => {
                let files = list(commit, paths, ignore.0, ignore.1)?;
                blobs.fetch(files.iter().map(|(_, object)| object))?;
                Ok(files
                    .iter()
                    .map(|(name, object)| SourceFile::in_memory(name, blobs.get(object)))
                    .collect())
            }
        }
    }
}

/// The manifests of both trees; a file that is the same in both revisions
/// is read from git once.
pub fn read_both(
    trees: &[Tree; 2],
    paths: &[PathBuf],
    ignore: (&[String], &Path),
) -> Result<[Vec<SourceFile>; 2]> {
    let mut blobs = Blobs::default();
    let mut read = |tree: &Tree| {
        tree.read(paths, ignore, &mut blobs)
            .map_err(|e| e.context(format!("reading {}", tree.label())))
    };
    Ok([read(&trees[0])?, read(&trees[1])?])
}

/// File contents by git object id, fetched as they are first needed.
#[derive(Default)]
struct Blobs(HashMap<String, Vec<u8>>);

impl Blobs {
    /// Reads the objects not read yet, with one `git cat-file --batch`.
    fn fetch<'o>(&mut self, objects: impl Iterator<Item = &'o String>) -> Result<()> {
        let mut missing: Vec<&String> = objects.filter(|o| !self.0.contains_key(*o)).collect();
        missing.sort();
        missing.dedup();
        for (object, bytes) in missing.iter().zip(cat(&missing)?) {
            self.0.insert((*object).clone(), bytes);
        }
        Ok(())
    }

    fn get(&self, object: &str) -> Vec<u8> {
        self.0.get(object).cloned().unwrap_or_default()
    }
}

fn git() -> Command {
    let mut command = Command::new("git");
    // Paths as bytes, not quoted; no pager, no prompt.
    command
        .args(["-c", "core.quotePath=false"])
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null());
    command
}

/// The manifests of a commit under `paths` (the current directory's subtree
/// without): `(path, object)`, paths relative to the current directory.
/// Symbolic links and submodules are left out, as a walk of the work tree
/// leaves them out.
fn list(
    commit: &str,
    paths: &[PathBuf],
    ignore_paths: &[String],
    config_dir: &Path,
) -> Result<Vec<(String, String)>> {
    let output = git()
        .args(["ls-tree", "-r", "-z", commit, "--"])
        .args(paths)
        .output()
        .context("running git ls-tree")?;
    if !output.status.success() {
        bail!(
            "git ls-tree {commit}: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let ignored = input::ignore_matcher(ignore_paths, config_dir).map_err(anyhow::Error::msg)?;
    let cwd = std::env::current_dir()?;
    let mut files = Vec::new();
    for entry in output.stdout.split(|b| *b == 0).filter(|e| !e.is_empty()) {
        let entry = String::from_utf8_lossy(entry);
        let Some((meta, path)) = entry.split_once('\t') else {
            bail!("git ls-tree: unexpected line `{entry}`");
        };
        let mut fields = meta.split(' ');
        let (Some(mode), Some(kind), Some(object)) = (fields.next(), fields.next(), fields.next())
        else {
            bail!("git ls-tree: unexpected line `{entry}`");
        };
        let path_ref = Path::new(path);
        if kind != "blob"
            || mode == "120000"
            || !input::has_manifest_extension(path_ref)
            || input::is_ignored(&ignored, &cwd, path_ref, false)
        {
            continue;
        }
        files.push((path.to_owned(), object.to_owned()));
    }
    files.sort();
    Ok(files)
}

/// The contents of `objects`, in order, from one `git cat-file --batch`.
fn cat(objects: &[&String]) -> Result<Vec<Vec<u8>>> {
    let mut child = git()
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("running git cat-file")?;
    let mut stdin = child.stdin.take().context("git cat-file's input")?;
    let asked: Vec<String> = objects.iter().map(|o| (*o).clone()).collect();
    // Asked for from another thread, so that neither pipe fills up.
    let asking = std::thread::spawn(move || -> std::io::Result<()> {
        for object in asked {
            writeln!(stdin, "{object}")?;
        }
        Ok(())
    });
    let mut reader = BufReader::new(child.stdout.take().context("git cat-file's output")?);
    let mut contents = Vec::with_capacity(objects.len());
    for object in objects {
        let mut header = String::new();
        reader.read_line(&mut header)?;
        let size = header
            .trim_end()
            .strip_prefix(object.as_str())
            .and_then(|rest| rest.strip_prefix(" blob "))
            .and_then(|size| size.parse::<usize>().ok())
            .with_context(|| {
                format!(
                    "git cat-file {object}: unexpected answer `{}`",
                    header.trim_end()
                )
            })?;
        let mut bytes = vec![0; size];
        reader.read_exact(&mut bytes)?;
        let mut newline = [0; 1];
        reader.read_exact(&mut newline)?;
        contents.push(bytes);
    }
    asking
        .join()
        .map_err(|_| anyhow::anyhow!("git cat-file: the writer failed"))??;
    let output = child.wait_with_output()?;
    if !output.status.success() {
        bail!(
            "git cat-file: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(contents)
}
