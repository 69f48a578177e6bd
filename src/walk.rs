//! The walk of a directory: its entries sorted by name, depth first, without
//! hidden entries and what ignore files ignore, as `ignore`'s walker skips
//! them (`.ignore`, `.gitignore` and `.git/info/exclude` of the directory
//! and of those above it, and git's global excludes; also outside git
//! repositories). The rules are `ignore`'s own matchers, applied as its
//! walker applies them; what differs is the work around them:
//!
//! - a directory's ignore files are found in its listing, which the walk
//!   reads anyway, rather than looked for one by one (`ignore`'s walker in
//!   order tries four names in every directory, a failed `statx` each);
//! - the rules of the directories above the walk are matched against each
//!   entry's absolute path made in a buffer, rather than in a new one for
//!   each entry (made as `ignore` makes it, odd spellings such as `./.`
//!   included);
//! - directories without rules are not visited when matching.
//!
//! A test walks random trees with both and compares what they find, skip
//! and report.

use std::ffi::OsString;
use std::fs::FileType;
use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{Error, Match};

/// The rules of one directory's ignore files.
struct Rules {
    /// `.ignore`.
    ignore: Gitignore,
    /// `.gitignore`.
    git: Gitignore,
    /// `.git/info/exclude` (of a repository's top directory).
    exclude: Gitignore,
}

/// Which ignore files a directory's listing names.
#[derive(Clone, Copy)]
struct Listed {
    ignore: bool,
    git: bool,
    dot_git: bool,
}

impl Listed {
    /// All of them: to be looked for (a directory whose listing is not read).
    const ALL: Listed = Listed {
        ignore: true,
        git: true,
        dot_git: true,
    };
}

impl Rules {
    /// The rules of `dir`'s ignore files among `listed`, and what is wrong
    /// with them (lines that are not globs; files that cannot be read are
    /// skipped), as `ignore` reads them.
    fn read(dir: &Path, listed: Listed, errors: &mut Vec<Error>) -> Rules {
        let mut rules = Rules {
            ignore: Gitignore::empty(),
            git: Gitignore::empty(),
            exclude: Gitignore::empty(),
        };
        if listed.ignore {
            rules.ignore = gitignore(dir, dir, ".ignore", errors);
        }
        if listed.git {
            rules.git = gitignore(dir, dir, ".gitignore", errors);
        }
        if listed.dot_git {
            let dot_git = dir.join(".git");
            let git_type = dot_git.metadata().ok().map(|m| m.file_type());
            match common_dir(dot_git, git_type) {
                Ok(git_dir) => rules.exclude = gitignore(dir, &git_dir, "info/exclude", errors),
                Err(error) => errors.extend(error),
            }
        }
        rules
    }

    fn is_empty(&self) -> bool {
        self.ignore.is_empty() && self.git.is_empty() && self.exclude.is_empty()
    }
}

/// The matcher of the ignore file `name` in `file_dir`, for paths below
/// `dir` (`ignore`'s `create_gitignore`).
fn gitignore(dir: &Path, file_dir: &Path, name: &str, errors: &mut Vec<Error>) -> Gitignore {
    let mut builder = GitignoreBuilder::new(dir);
    let path = file_dir.join(name);
    if path.exists()
        && let Some(error) = builder.add(path)
        && !error.is_io()
    {
        errors.push(error);
    }
    builder.build().unwrap_or_else(|error| {
        errors.push(error);
        Gitignore::empty()
    })
}

/// The directory of a repository's `info/exclude`: `.git` itself, or for a
/// worktree (`.git` a file naming its git directory) the common one
/// (`ignore`'s `resolve_git_commondir`).
fn common_dir(dot_git: PathBuf, git_type: Option<FileType>) -> Result<PathBuf, Option<Error>> {
    use std::io::BufRead;
    let first_line = |path: &Path| -> Result<Option<String>, Error> {
        let with_path = |error| Error::WithPath {
            path: path.to_path_buf(),
            err: Box::new(Error::Io(error)),
        };
        let file = std::fs::File::open(path).map_err(with_path)?;
        std::io::BufReader::new(file)
            .lines()
            .next()
            .transpose()
            .map_err(with_path)
    };
    if !git_type.is_some_and(|t| t.is_file()) {
        return Ok(dot_git);
    }
    let line = first_line(&dot_git).map_err(Some)?.ok_or(None)?;
    let real_git_dir = PathBuf::from(line.strip_prefix("gitdir: ").ok_or(None)?);
    let commondir_file = real_git_dir.join("commondir");
    if std::fs::File::open(&commondir_file).is_err() {
        return Err(None);
    }
    let commondir = first_line(&commondir_file).map_err(Some)?.ok_or(None)?;
    let commondir = if commondir.starts_with('.') {
        real_git_dir.join(commondir)
    } else {
        PathBuf::from(commondir)
    };
    Ok(commondir)
}

/// One kind of ignore file's verdict: the nearest directory's that has one.
fn nearest(verdict: &mut Match<()>, rules: &Gitignore, path: &Path, is_dir: bool) {
    if verdict.is_none() {
        *verdict = rules.matched(path, is_dir).map(|_| ());
    }
}

/// The verdicts of the three kinds of ignore file, gathered from the
/// nearest directory up.
struct Verdicts {
    ignore: Match<()>,
    git: Match<()>,
    exclude: Match<()>,
}

impl Verdicts {
    const NONE: Verdicts = Verdicts {
        ignore: Match::None,
        git: Match::None,
        exclude: Match::None,
    };

    fn add(&mut self, rules: &Rules, path: &Path, is_dir: bool) {
        nearest(&mut self.ignore, &rules.ignore, path, is_dir);
        nearest(&mut self.git, &rules.git, path, is_dir);
        nearest(&mut self.exclude, &rules.exclude, path, is_dir);
    }
}

/// A directory being walked.
struct Open {
    /// Its path.
    path: PathBuf,
    /// Its rules, when it has some.
    rules: Option<Rules>,
    /// Its entries not yet walked (their names), last first.
    entries: Vec<(OsString, std::io::Result<FileType>)>,
}

/// The rules that apply below a directory walked.
struct Walker<'f> {
    /// The directory walked, as given.
    root: &'f Path,
    /// The directories above it, nearest first, with their rules, and its
    /// absolute path, which the paths they match start with (when there are
    /// such rules).
    above: Vec<Rules>,
    absolute_root: Option<PathBuf>,
    /// The global excludes (`core.excludesFile`).
    global: Gitignore,
    /// `ignorePaths`: whether a path (and whether it is a directory) is kept.
    keep: &'f dyn Fn(&Path, bool) -> bool,
}

/// Walks `dir`: hands each file to `found` (its path and type) in the order
/// of [`Path`]'s ordering, until it says to stop (returns `false`); what
/// the ignore files have that is not used goes to `warn`, what cannot be
/// read to `errors` (as `path: what happened`). `cwd`: where global
/// excludes are matched from; `keep`: whether `ignorePaths` keeps a path.
pub fn walk(
    dir: &Path,
    cwd: &Path,
    keep: &dyn Fn(&Path, bool) -> bool,
    errors: &mut Vec<String>,
    warn: &mut dyn FnMut(&Error),
    found: &mut dyn FnMut(&Path, FileType) -> bool,
) {
    // What is not a directory is walked as itself, as `ignore` walks it: a
    // file is handed over whatever its name, standard input (`-`) is not.
    if dir.as_os_str() == "-" {
        return;
    }
    match dir.metadata() {
        Err(error) => {
            errors.push(format!("{}: {error}", dir.display()));
            return;
        }
        Ok(metadata) if !metadata.is_dir() => {
            found(dir, metadata.file_type());
            return;
        }
        Ok(_) => {}
    }
    // The directories above, as `ignore` reads them: from the root down,
    // looked for (not listed), their problems told together; kept nearest
    // first, those with rules.
    let absolute = dir.canonicalize().ok();
    let mut problems = Vec::new();
    let mut above: Vec<Rules> = absolute
        .iter()
        .flat_map(|absolute| absolute.ancestors().skip(1).collect::<Vec<_>>())
        .rev()
        .map(|ancestor| Rules::read(ancestor, Listed::ALL, &mut problems))
        .collect();
    above.reverse();
    above.retain(|rules| !rules.is_empty());
    if let Some(error) = together(problems) {
        if is_in_ignore_file(&error) {
            warn(&error);
        } else {
            errors.push(walk_error(&error));
        }
    }
    let (global, _) = GitignoreBuilder::new(cwd).build_global();
    let walker = Walker {
        root: dir,
        absolute_root: absolute.filter(|_| !above.is_empty()),
        above,
        global,
        keep,
    };
    let root = walker.open(dir, errors, warn);
    let mut open: Vec<Open> = root.into_iter().collect();
    let mut absolute = PathBuf::new();
    // Each entry's path, made in one buffer: only a directory's is kept.
    let mut path = PathBuf::new();
    while let Some(top) = open.last_mut() {
        let Some((name, file_type)) = top.entries.pop() else {
            open.pop();
            continue;
        };
        // As [`std::fs::DirEntry::path`] makes it.
        path.clone_from(&top.path);
        path.push(name);
        let file_type = match file_type {
            Ok(file_type) => file_type,
            Err(error) => {
                errors.push(format!("{}: {error}", path.display()));
                continue;
            }
        };
        let is_dir = file_type.is_dir();
        if walker.skips(&open, &path, &mut absolute, is_dir) {
            continue;
        }
        if is_dir {
            open.extend(walker.open(&path, errors, warn));
        } else if !found(&path, file_type) {
            return;
        }
    }
}

impl Walker<'_> {
    /// Lists a directory and reads its ignore files; `None` (and an error)
    /// when it cannot be listed.
    fn open(
        &self,
        path: &Path,
        errors: &mut Vec<String>,
        warn: &mut dyn FnMut(&Error),
    ) -> Option<Open> {
        let mut problems = Vec::new();
        let listing = std::fs::read_dir(path).and_then(|listing| {
            listing
                .map(|entry| entry.map(|entry| (entry.file_name(), entry.file_type())))
                .collect::<std::io::Result<Vec<_>>>()
        });
        let listed = match &listing {
            Ok(entries) => {
                let has = |name: &str| entries.iter().any(|(entry, _)| entry == name);
                Listed {
                    ignore: has(".ignore"),
                    git: has(".gitignore"),
                    dot_git: has(".git"),
                }
            }
            // `ignore` reads them (and tells of them) before it lists.
            Err(_) => Listed::ALL,
        };
        let rules = Rules::read(path, listed, &mut problems);
        if let Some(error) = together(problems) {
            warn(&error);
        }
        let mut entries = match listing {
            Ok(entries) => entries,
            Err(error) => {
                errors.push(format!("{}: {error}", path.display()));
                return None;
            }
        };
        // Last first: taken from the end.
        // A directory's paths differ by their names only: they sort as the
        // names' bytes do.
        entries.sort_unstable_by(|(a, _), (b, _)| b.as_encoded_bytes().cmp(a.as_encoded_bytes()));
        Some(Open {
            path: path.to_path_buf(),
            rules: (!rules.is_empty()).then_some(rules),
            entries,
        })
    }

    /// Whether the entry at `path` of the innermost of `open` is skipped:
    /// ignored, hidden, or not kept by `ignorePaths`. `absolute`: room for
    /// its absolute path.
    fn skips(&self, open: &[Open], path: &Path, absolute: &mut PathBuf, is_dir: bool) -> bool {
        let matched_path = without_dot_slash(path);
        let mut verdicts = Verdicts::NONE;
        for rules in open.iter().rev().filter_map(|o| o.rules.as_ref()) {
            verdicts.add(rules, matched_path, is_dir);
        }
        if let Some(absolute_root) = &self.absolute_root {
            absolute.clone_from(absolute_root);
            absolute.push(self.below_root(matched_path));
            for rules in &self.above {
                verdicts.add(rules, absolute, is_dir);
            }
        }
        let global = self.global.matched(matched_path, is_dir).map(|_| ());
        let verdict = verdicts
            .ignore
            .or(verdicts.git)
            .or(verdicts.exclude)
            .or(global);
        if verdict.is_ignore() {
            return true;
        }
        let hidden = walked_name(path).first() == Some(&b'.');
        (verdict.is_none() && hidden) || !(self.keep)(path, is_dir)
    }

    /// What of `path` (without a leading `./`) follows the directory
    /// walked, as `ignore` finds it to join to that directory's absolute
    /// path: cut by bytes, and not cut at all when the directory is `.`
    /// however spelled (`./.` leaves a `./` in the path joined, which the
    /// rules then do not match as they match the path of `.`).
    fn below_root<'p>(&self, path: &'p Path) -> &'p Path {
        if self.root == Path::new(".") {
            return path;
        }
        let below = cut(without_dot_slash(self.root), path);
        cut(Path::new("/"), below)
    }
}

/// The name of an entry the walk found: what follows the last separator of
/// its path, which is its directory's joined to it (read from the bytes:
/// [`Path::file_name`] splits the whole path into components).
pub fn walked_name(path: &Path) -> &[u8] {
    let path = path.as_os_str().as_encoded_bytes();
    // The separators are `/` and the platform's own, both ASCII.
    let start = memchr::memrchr2(b'/', std::path::MAIN_SEPARATOR as u8, path).map_or(0, |i| i + 1);
    &path[start..]
}

/// `path` without a leading `./`, cut from its bytes as `ignore` cuts it
/// before matching.
fn without_dot_slash(path: &Path) -> &Path {
    cut(Path::new("./"), path)
}

/// `path` without `prefix` if its bytes start with those of `prefix`.
fn cut<'p>(prefix: &Path, path: &'p Path) -> &'p Path {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let bytes = path.as_os_str().as_bytes();
        bytes
            .strip_prefix(prefix.as_os_str().as_bytes())
            .map_or(path, |rest| Path::new(std::ffi::OsStr::from_bytes(rest)))
    }
    #[cfg(not(unix))]
    {
        path.strip_prefix(prefix).unwrap_or(path)
    }
}

/// Several problems as one error, as `ignore` gathers them.
fn together(mut problems: Vec<Error>) -> Option<Error> {
    match problems.len() {
        0 => None,
        1 => problems.pop(),
        _ => Some(Error::Partial(problems)),
    }
}

/// Whether an error is a line of an ignore file (`.gitignore`, `.ignore`)
/// that is not a glob: the walk goes on without the line.
fn is_in_ignore_file(error: &Error) -> bool {
    match error {
        Error::Partial(errors) => errors.iter().all(is_in_ignore_file),
        Error::WithPath { err, .. } | Error::WithDepth { err, .. } => is_in_ignore_file(err),
        Error::WithLineNumber { .. } | Error::Glob { .. } => true,
        _ => false,
    }
}

/// An error of the walk, as `path: what happened`.
fn walk_error(error: &Error) -> String {
    match error {
        Error::WithDepth { err, .. } => walk_error(err),
        Error::WithPath { path, err } => format!("{}: {}", path.display(), walk_error(err)),
        error => error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a walk gives: the paths of the files found, in order;
    /// the errors; the problems of ignore files told.
    #[derive(Debug, PartialEq)]
    struct Walked {
        found: Vec<PathBuf>,
        errors: Vec<String>,
        warned: Vec<String>,
    }

    fn walked(dir: &Path) -> Walked {
        let cwd = std::env::current_dir().unwrap();
        let (mut found, mut errors, mut warned) = (Vec::new(), Vec::new(), Vec::new());
        walk(
            dir,
            &cwd,
            &|path, _| !path.ends_with("kept-out"),
            &mut errors,
            &mut |error| warned.push(error.to_string()),
            &mut |path, file_type| {
                if file_type.is_file() {
                    found.push(path.to_path_buf());
                }
                true
            },
        );
        Walked {
            found,
            errors,
            warned,
        }
    }

    /// The same walk by `ignore`'s walker in order.
    fn walked_by_ignore(dir: &Path) -> Walked {
        let (mut found, mut errors, mut warned) = (Vec::new(), Vec::new(), Vec::new());
        let mut builder = ignore::WalkBuilder::new(dir);
        builder
            .require_git(false)
            .filter_entry(|entry| !entry.path().ends_with("kept-out"))
            .sort_by_file_path(|a, b| {
                a.as_os_str()
                    .as_encoded_bytes()
                    .cmp(b.as_os_str().as_encoded_bytes())
            });
        for entry in builder.build() {
            match entry {
                Ok(entry) => {
                    if let Some(error) = entry.error() {
                        warned.push(error.to_string());
                    }
                    if entry.file_type().is_some_and(|t| t.is_file()) {
                        found.push(entry.into_path());
                    }
                }
                Err(error) if is_in_ignore_file(&error) => warned.push(error.to_string()),
                Err(error) => errors.push(ignore_error(error)),
            }
        }
        Walked {
            found,
            errors,
            warned,
        }
    }

    /// `ignore`'s error as `path: what happened`, walkdir's unwrapped.
    fn ignore_error(error: Error) -> String {
        match error {
            Error::WithDepth { err, .. } => ignore_error(*err),
            Error::WithPath { path, err } => format!("{}: {}", path.display(), ignore_error(*err)),
            Error::Io(error) => match error
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<walkdir::Error>())
                .and_then(walkdir::Error::io_error)
            {
                Some(inner) => inner.to_string(),
                None => error.to_string(),
            },
            error => error.to_string(),
        }
    }

    /// Lines of ignore files: globs, negations, anchors, directories only,
    /// hidden names, comments and lines that are not globs.
    const LINES: &[&str] = &[
        "*.yml",
        "!d.yml",
        "/a",
        "b/",
        "a/**/c.yaml",
        "!.h",
        ".h",
        "!b",
        "*.txt",
        "c.yaml",
        "!c.yaml",
        "a{b",
        "# c.yaml",
        "",
        "**/b/c.yaml",
        "s/a",
        "/c.yaml",
        "*",
        "!*/",
        "!*.yaml",
        "\\!x",
        "a/",
        "!/a/",
        "s",
        "!s/b",
        "[",
        "top/s/c.yaml",
    ];
    const FILES: &[&str] = &[
        "c.yaml", "d.yml", "e.txt", ".h", "g h.json", "kept-out", "!x",
    ];
    const DIRS: &[&str] = &["a", "b", "s", ".hd", "kept-out"];

    /// Writes a random tree below `dir`, `depth` levels deep, from `seed`.
    fn write_tree(dir: &Path, depth: usize, seed: &mut u64) {
        let mut next = |n: usize| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (*seed >> 33) as usize % n
        };
        std::fs::create_dir_all(dir).unwrap();
        for file in FILES {
            if next(2) == 0 {
                std::fs::write(dir.join(file), "a: 1\n").unwrap();
            }
        }
        for name in [".gitignore", ".ignore"] {
            if next(3) == 0 {
                let lines: Vec<&str> = (0..1 + next(4)).map(|_| LINES[next(LINES.len())]).collect();
                std::fs::write(dir.join(name), lines.join("\n")).unwrap();
            }
        }
        if next(6) == 0 {
            let info = dir.join(".git/info");
            std::fs::create_dir_all(&info).unwrap();
            std::fs::write(info.join("exclude"), LINES[next(LINES.len())]).unwrap();
        }
        let subdirs: Vec<&str> = DIRS.iter().copied().filter(|_| next(2) == 0).collect();
        if depth > 0 {
            // A name already a file's stays a file.
            for sub in subdirs.into_iter().filter(|sub| !dir.join(sub).exists()) {
                write_tree(&dir.join(sub), depth - 1, seed);
            }
        }
    }

    /// Random trees walked from their top and from a directory below it
    /// (whose ignore files above are matched by absolute paths), by several
    /// spellings: the walk finds, skips and reports what `ignore`'s walker
    /// does, in its order.
    #[test]
    fn walks_as_ignores_walker_does() {
        let mut seed = 7;
        let mut compared = 0;
        for _ in 0..150 {
            let temp = tempfile::tempdir().unwrap();
            let top = temp.path().join("top");
            write_tree(&top, 3, &mut seed);
            let s = top.join("s");
            let roots = [
                top.clone(),
                s.clone(),
                s.join("a"),
                PathBuf::from(format!("{}/", s.display())),
                s.join("."),
                top.join("./s"),
                top.join("s/../s"),
            ];
            for root in roots.iter().filter(|root| root.is_dir()) {
                assert_eq!(walked(root), walked_by_ignore(root), "{}", root.display());
                compared += 1;
            }
        }
        assert!(compared > 300, "{compared} walks compared");
    }

    /// Random trees walked by relative spellings (`./top`, `././top`,
    /// `top/./s`, `.`, `./.`), whose leading `./` `ignore` cuts before
    /// matching: in a child process of this test, run in the trees'
    /// directory.
    #[test]
    fn walks_relative_paths_as_ignores_walker_does() {
        const TREE: &str = "HPA_LINT_WALK_TREES";
        let roots = [
            ".",
            "./",
            "./.",
            ".//",
            "././",
            ".//.",
            "top/.",
            "top//.",
            "top",
            "./top",
            "././top",
            ".//top",
            "top/",
            "top/./s",
            "./top/s/a",
            "top/s/..",
            "top//s",
            "d",
            "./d",
            "././d",
            ".//d",
            "d/.",
            "d//",
            "./a/",
        ];
        if let Some(trees) = std::env::var_os(TREE) {
            let trees: usize = trees.to_str().unwrap().parse().unwrap();
            let home = std::env::current_dir().unwrap();
            // From a tree's directory, and from a directory in it (the
            // ignore files of `top` then are above the walk).
            let places = (0..trees).flat_map(|tree| [format!("{tree}"), format!("{tree}/top/s")]);
            for place in places.map(|place| home.join(place)).filter(|p| p.is_dir()) {
                std::env::set_current_dir(&place).unwrap();
                for root in roots.iter().map(Path::new).filter(|root| root.is_dir()) {
                    let root_in = format!("{} in {}", root.display(), place.display());
                    assert_eq!(walked(root), walked_by_ignore(root), "{root_in}");
                }
            }
            return;
        }
        let temp = tempfile::tempdir().unwrap();
        let (mut seed, trees) = (11, 40);
        for tree in 0..trees {
            write_tree(
                &temp.path().join(tree.to_string()).join("top"),
                3,
                &mut seed,
            );
        }
        // The last: rules above `top/s` with paths in them, which `ignore`
        // matches by a wrong absolute path for some spellings of `.`.
        let last = temp.path().join(trees.to_string()).join("top");
        std::fs::create_dir_all(last.join("s/d")).unwrap();
        std::fs::write(
            last.join(".gitignore"),
            "s/a.yaml\n/s/b.yaml\nc.yaml\ns/d/*.yaml\n",
        )
        .unwrap();
        for file in [
            "a.yaml", "b.yaml", "c.yaml", "e.yaml", "d/x.yaml", "d/y.yml",
        ] {
            std::fs::write(last.join("s").join(file), "a: 1\n").unwrap();
        }
        let trees = trees + 1;
        let child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "walk::tests::walks_relative_paths_as_ignores_walker_does",
            ])
            .env(TREE, trees.to_string())
            .current_dir(temp.path())
            .output()
            .unwrap();
        let output = String::from_utf8_lossy(&child.stdout);
        assert!(child.status.success(), "{output}");
        assert!(output.contains("1 passed"), "{output}");
    }

    /// Unreadable directories and ignore files, broken symbolic links and
    /// a worktree's `.git` file are reported or skipped as `ignore`'s walker
    /// does.
    #[cfg(unix)]
    #[test]
    fn unreadable_entries_are_reported_as_ignores_walker_does() {
        use std::os::unix::fs::{PermissionsExt, symlink};
        let temp = tempfile::tempdir().unwrap();
        let top = temp.path().join("top");
        for dir in ["locked", "closed", "w/a", "links"] {
            std::fs::create_dir_all(top.join(dir)).unwrap();
        }
        std::fs::write(top.join("locked/a.yaml"), "a: 1\n").unwrap();
        std::fs::write(top.join("locked/.gitignore"), "a{b\n").unwrap();
        std::fs::write(top.join("closed/.gitignore"), "*.yaml\n").unwrap();
        std::fs::write(top.join("w/.git"), "gitdir: /nowhere/at/all\n").unwrap();
        std::fs::write(top.join("w/a/b.yaml"), "a: 1\n").unwrap();
        symlink(top.join("missing"), top.join("links/gone.yaml")).unwrap();
        symlink(top.join("w"), top.join("links/w")).unwrap();
        symlink(top.join("missing"), top.join("links/.gitignore")).unwrap();
        let mode = |path: &str, mode: u32| {
            std::fs::set_permissions(top.join(path), std::fs::Permissions::from_mode(mode))
                .unwrap();
        };
        // Listed but not entered, and entered but not listed.
        mode("locked", 0o311);
        mode("closed/.gitignore", 0o000);
        let result = std::panic::catch_unwind(|| {
            let ours = walked(&top);
            assert_eq!(ours, walked_by_ignore(&top));
            ours
        });
        mode("locked", 0o755);
        mode("closed/.gitignore", 0o644);
        let ours = result.unwrap();
        // Paths that are not directories are walked as themselves.
        std::fs::write(top.join("hpa.txt"), "a: 1\n").unwrap();
        symlink(top.join("hpa.txt"), top.join("linked.yaml")).unwrap();
        for path in [
            "hpa.txt",
            "linked.yaml",
            "missing",
            "links/gone.yaml",
            "links/w",
        ] {
            let path = top.join(path);
            assert_eq!(walked(&path), walked_by_ignore(&path), "{}", path.display());
        }
        assert_eq!(walked(Path::new("-")), walked_by_ignore(Path::new("-")));
        // Running as root reads everything: nothing to report then.
        if !ours.errors.is_empty() {
            assert!(ours.errors[0].contains("locked"), "{:?}", ours.errors);
        }
    }
}
