//! `gen-corpus`: writes a synthetic GitOps repository to benchmark hpa-lint on.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use hpa_lint_bench::corpus::Layout;

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
    /// One object per file (a few KB each) instead of multi-document files.
    #[arg(long)]
    one_per_file: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let layout = if args.one_per_file {
        Layout::OnePerFile
    } else {
        Layout::Monorepo
    };
    match hpa_lint_bench::corpus::generate(&args.out, args.size_mb, args.seed, layout) {
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
