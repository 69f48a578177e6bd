//! Resolves command-line arguments and the configuration file into the rule
//! settings and the paths to skip.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use hpa_lint_rules::Settings;
use hpa_lint_rules::cluster::KubeVersion;
use hpa_lint_rules::config::Config;

use crate::options::LintArgs;

/// The configuration file name looked for from the current directory upwards.
pub const CONFIG_FILE: &str = ".hpa-lint.yaml";

/// Everything a run needs besides the inputs.
pub struct Resolved {
    pub settings: Settings,
    /// `ignorePaths` globs and the directory they are relative to.
    pub ignore_paths: Vec<String>,
    pub config_dir: PathBuf,
}

fn find_config(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .map(|dir| dir.join(CONFIG_FILE))
        .find(|candidate| candidate.is_file())
}

/// Resolves the options, the configuration file and, when given, the
/// namespace of objects that name none, into the rule settings. The
/// Kubernetes version comes from `--kube-version`, else the configuration,
/// else `default_version` (the cluster's, for an audit), else the default.
pub fn resolve(
    args: &LintArgs,
    namespace: Option<&str>,
    default_version: Option<KubeVersion>,
) -> Result<Resolved> {
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let path = match (&args.config, args.isolated) {
        (_, true) => None,
        (Some(path), false) => Some(path.clone()),
        (None, false) => find_config(&cwd),
    };
    let config = match &path {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading configuration {}", path.display()))?;
            Config::parse(&text).map_err(|e| anyhow!("{}:{e}", path.display()))?
        }
        None => Config::default(),
    };
    let version = args
        .kube_version
        .as_deref()
        .map(str::parse::<KubeVersion>)
        .transpose()
        .map_err(|e| anyhow!(e))?;
    let mut settings = config.settings(version, default_version).map_err(|e| {
        let name = path.as_deref().unwrap_or(Path::new(CONFIG_FILE)).display();
        anyhow!(e.lines(&format!("{name}:")))
    })?;
    if let Some(gates) = &args.feature_gates {
        let release = settings.cluster.kube_version;
        settings
            .cluster
            .feature_gates
            .apply_overrides(release, gates)
            .map_err(|e| anyhow!(e))?;
    }
    if let Some(namespace) = namespace {
        namespace.clone_into(&mut settings.cluster.default_namespace);
    }
    if !args.select.is_empty() {
        hpa_lint_rules::rules::select(&mut settings, &args.select)?;
    }
    hpa_lint_rules::rules::ignore(&mut settings, &args.ignore)?;
    let config_dir = path
        .as_deref()
        .and_then(Path::parent)
        .map_or(cwd, Path::to_path_buf);
    Ok(Resolved {
        settings,
        ignore_paths: config.ignore_paths,
        config_dir,
    })
}
