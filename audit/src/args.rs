//! Command-line arguments: kubectl's way of choosing the cluster and the
//! namespaces, and the lint options `hpa-lint` takes.

use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use hpa_lint::options::LintArgs;
use hpa_lint_rules::controller::{Millis, parse_duration};
use hpa_lint_rules::model::status::parse_time;

/// The help heading of kubectl's options that choose the cluster.
const CONNECTION: &str = "Cluster options";

/// Audits the HorizontalPodAutoscalers running in a cluster with the
/// hpa-lint rules, plus what only their status shows: an HPA that does not
/// scale, metrics shown as `<unknown>`, an HPA held at a bound for days.
/// Read-only: it lists objects and changes nothing.
#[derive(Debug, Parser)]
#[command(name = "kubectl-hpa_lint", bin_name = "kubectl hpa-lint", version)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// HPAs to audit, by name (default: every HPA in the namespaces audited).
    pub names: Vec<String>,

    /// Namespace to audit [default: the context's namespace].
    #[arg(short = 'n', long)]
    pub namespace: Option<String>,

    /// Audit every namespace.
    #[arg(short = 'A', long, conflicts_with = "namespace")]
    pub all_namespaces: bool,

    /// Only HPAs whose labels match this selector, e.g. `team=shop,tier!=batch`.
    #[arg(short = 'l', long, value_name = "SELECTOR")]
    pub selector: Option<String>,

    /// The kubeconfig file [default: $KUBECONFIG, else ~/.kube/config, else
    /// the pod's service account].
    #[arg(long, value_name = "FILE", global = true, help_heading = CONNECTION)]
    pub kubeconfig: Option<PathBuf>,

    /// The kubeconfig context [default: the current context].
    #[arg(long, value_name = "NAME", global = true, help_heading = CONNECTION)]
    pub context: Option<String>,

    /// The kubeconfig cluster [default: the context's].
    #[arg(long, value_name = "NAME", global = true, help_heading = CONNECTION)]
    pub cluster: Option<String>,

    /// The kubeconfig user [default: the context's].
    #[arg(long, value_name = "NAME", global = true, help_heading = CONNECTION)]
    pub user: Option<String>,

    /// Objects per list request, as kubectl's `--chunk-size` (0: all at once).
    #[arg(long, value_name = "N", default_value_t = 500)]
    pub chunk_size: u32,

    /// How long one request to the API server may take, from sending it to
    /// the last byte of the answer, as kubectl's `--request-timeout` (`0`:
    /// no limit). The API server itself gives up on a request after 60 s.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration, global = true, help_heading = CONNECTION)]
    pub request_timeout: Millis,

    /// Judge how long conditions have held as of this time (RFC 3339, e.g.
    /// `2026-03-04T08:00:00Z`) instead of the clock: for reproducible reports.
    #[arg(long, value_name = "TIME", value_parser = parse_now)]
    pub now: Option<Millis>,

    /// Read the findings from the policy reports the webhook's reporting
    /// mode writes instead of from the objects: needs `list` on the reports
    /// only (no rule runs here).
    #[arg(long, conflicts_with = "selector")]
    pub from_reports: bool,

    /// No progress on standard error (it is shown only on a terminal).
    #[arg(short = 'q', long)]
    pub quiet: bool,

    #[command(flatten)]
    pub lint: LintArgs,
}

/// What else the plugin does: the audit is the default.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Replay a live HPA on the demand Prometheus recorded: replicas over
    /// time as the controller decides them, beside those observed; with
    /// `--with PROPOSED.yaml`, a proposed spec beside the live one (see
    /// docs/audit.md).
    Replay(Box<crate::replay::LiveReplayArgs>),
}

/// Parses the command line. kubectl's connection options (global) go
/// before or after a subcommand; the audit's own options are refused beside
/// one, which has its own (clap's `args_conflicts_with_subcommands` would
/// refuse the connection options before it too).
pub fn parse() -> Args {
    let mut command = Args::command();
    let matches = command.get_matches_mut();
    if let Some(subcommand) = matches.subcommand_name() {
        let global = |id: &str| {
            command
                .get_arguments()
                .any(|arg| arg.get_id() == id && arg.is_global_set())
        };
        let stray = matches
            .ids()
            .map(|id| id.as_str())
            .find(|id| matches.value_source(id) == Some(ValueSource::CommandLine) && !global(id));
        if let Some(stray) = stray {
            let shown = command
                .get_arguments()
                .find(|arg| arg.get_id() == stray)
                .map_or(stray.to_owned(), |arg| match arg.get_long() {
                    Some(long) => format!("--{long}"),
                    None => format!("`{}`", arg.get_id()),
                });
            command
                .error(
                    ErrorKind::ArgumentConflict,
                    format!("{shown} is an option of the audit, not of `{subcommand}` (see `kubectl hpa-lint {subcommand} --help`)"),
                )
                .exit();
        }
    }
    Args::from_arg_matches(&matches).unwrap_or_else(|error| error.exit())
}

fn parse_now(text: &str) -> Result<Millis, String> {
    parse_time(text).ok_or_else(|| {
        format!("invalid time `{text}`: expected RFC 3339 in UTC, e.g. 2026-03-04T08:00:00Z")
    })
}
