//! Command-line arguments, as typed; [`crate::settings`] resolves them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Lints Kubernetes HorizontalPodAutoscalers: everything the API server would
/// reject, plus what it accepts but cannot work (targets, requests, replicas,
/// behavior, API versions).
#[derive(Debug, Parser)]
#[command(name = "hpa-lint", version, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub check: CheckArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Lint files and directories (the default command).
    Check(CheckArgs),
    /// List every rule with its category, default severity and summary.
    Rules {
        /// `text` for a terminal, `markdown` for a table (the README's).
        #[arg(long, value_enum, default_value_t = RulesFormat::Text)]
        format: RulesFormat,
    },
    /// Print a rule's documentation: what it checks, why, an example, the fix.
    Explain {
        /// The rule's name, e.g. `invalid-scaling-policy`.
        rule: String,
    },
    /// Show the behavior the HPA controller will use: every default written
    /// out, the fastest scale-up and scale-down, which policy sets each step.
    Behavior(crate::behavior::BehaviorArgs),
    /// Simulate the HPA controller under a load trace: replicas over time.
    Simulate(Box<crate::simulate::SimulateArgs>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// rustc-like: the source line with a caret under the field.
    Text,
    /// One JSON document: `{"diagnostics": [...], "summary": {...}}`.
    Json,
    /// SARIF 2.1.0, for code-scanning tools.
    Sarif,
    /// GitHub Actions workflow commands (annotations).
    Github,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RulesFormat {
    Text,
    Markdown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour when writing to a terminal (and `NO_COLOR` is unset).
    Auto,
    Always,
    Never,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Files and directories to lint (`.yaml`, `.yml`, `.json`, recursively;
    /// `.gitignore` is respected); `-` reads standard input. Default: `.`.
    pub paths: Vec<PathBuf>,

    /// Also read the objects under DIR (repeatable) for lookups (targets, other
    /// HPAs, budgets) without reporting anything located there: for pre-commit,
    /// which passes only the changed files (`--context .`).
    #[arg(long, value_name = "DIR")]
    pub context: Vec<PathBuf>,

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

    /// Namespace of objects that name none [default: default].
    #[arg(long, short = 'n')]
    pub namespace: Option<String>,

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
