//! The command-line options of every lint run, files or cluster: output,
//! configuration, rule selection and the Kubernetes release.

use std::io::{self, IsTerminal};
use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// Output format of findings.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// rustc-like: the source line with a caret under the field.
    #[default]
    Text,
    /// One JSON document: `{"diagnostics": [...], "summary": {...}}`.
    Json,
    /// SARIF 2.1.0, for code-scanning tools.
    Sarif,
    /// GitHub Actions workflow commands (annotations).
    Github,
}

/// When to colour text output.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour when writing to a terminal (and `NO_COLOR` is unset).
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether to colour standard output.
    pub fn is_on(self) -> bool {
        self.is_on_for(&io::stdout())
    }

    /// Whether to colour what is written to `stream`.
    pub fn is_on_for(self, stream: &impl IsTerminal) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                stream.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        }
    }
}

/// Options shared by `hpa-lint` and `kubectl hpa-lint`.
#[derive(Debug, Default, Args)]
pub struct LintArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Configuration file (default: the nearest `.hpa-lint.yaml` from the
    /// current directory upwards).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Ignore any configuration file.
    #[arg(long, conflicts_with = "config")]
    pub isolated: bool,

    /// Kubernetes version the manifests are for (1.23 to 1.37) [default: 1.36].
    #[arg(long, value_name = "VERSION", env = "HPA_LINT_KUBE_VERSION")]
    pub kube_version: Option<String>,

    /// Feature gate overrides, e.g. `HPAScaleToZero=true,HPAConfigurableTolerance=false`.
    #[arg(long, value_name = "GATES")]
    pub feature_gates: Option<String>,

    /// Run only these rules or categories (comma-separated; `all` for every rule).
    #[arg(long, value_delimiter = ',', value_name = "RULES")]
    pub select: Vec<String>,

    /// Skip these rules or categories (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "RULES")]
    pub ignore: Vec<String>,

    /// Exit with 1 on warnings too.
    #[arg(long)]
    pub deny_warnings: bool,

    /// When to colour text output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}
