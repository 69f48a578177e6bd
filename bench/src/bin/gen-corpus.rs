//! `gen-corpus`: writes a synthetic GitOps repository to benchmark hpa-lint on.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// Writes a synthetic GitOps repository (clusters, teams, apps with base and
/// overlays, large CRDs) of about the given size; the same seed gives the same bytes.
#[derive(Parser)]
struct Args {
    /// Directory to create (it must not exist).
    #[arg(long)]
    out: PathBuf,
    /// Approximate size in MB (10^6 bytes).
    #[arg(long, default_value_t = 120)]
    size_mb: u64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match hpa_lint_bench::corpus::generate(&args.out, args.size_mb, args.seed) {
        Ok(stats) => {
            println!("{}\n{stats}", args.out.display());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("gen-corpus: {error}");
            ExitCode::FAILURE
        }
    }
}
