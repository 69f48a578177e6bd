//! Command-line arguments, as typed; [`hpa_lint::settings`] resolves them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use hpa_lint::options::LintArgs;

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
        /// `text` for a terminal, `markdown` for a table (the rules reference's, docs/rules/).
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
    Simulate(Box<hpa_lint::simulate::SimulateArgs>),
    /// Compare two specs of an HPA on the same demand: cost, size, time at
    /// the ceiling, under-provisioning, churn, lag.
    Compare(Box<hpa_lint::compare::CompareArgs>),
    /// What a change does to the HPAs of a repository: each one added,
    /// removed or changed between two git revisions or directories.
    Diff(Box<crate::diff::DiffArgs>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RulesFormat {
    Text,
    Markdown,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Files and directories to lint (`.yaml`, `.yml`, `.json`, recursively;
    /// `.gitignore` is respected); `-` reads standard input. Default: `.`.
    pub paths: Vec<PathBuf>,

    /// Also read the objects under DIR (repeatable) for lookups (targets, other
    /// HPAs, budgets); what is found there is reported only when an object of
    /// the linted files causes it (a linted HPA's target without requests): for
    /// pre-commit, which passes only the changed files (`--context .`).
    #[arg(long, value_name = "DIR")]
    pub context: Vec<PathBuf>,

    /// Namespace of objects that name none [default: default].
    #[arg(long, short = 'n')]
    pub namespace: Option<String>,

    /// Make the safe fixes in the files, then report what is left. With `-`,
    /// the fixed text goes to standard output and the findings to standard error.
    #[arg(long)]
    pub fix: bool,

    /// Count unsafe fixes as fixable too: `--fix` and `--diff` make them. They
    /// change what runs: review them.
    #[arg(long)]
    pub unsafe_fixes: bool,

    /// Print what `--fix` would change as a unified diff, and change nothing;
    /// exit with 1 when there is a change.
    #[arg(long)]
    pub diff: bool,

    #[command(flatten)]
    pub lint: LintArgs,
}
