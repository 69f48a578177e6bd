//! Corpus generator and end-to-end benchmark for hpa-lint (see `README.md`).

pub mod corpus;
pub mod rng;
pub mod webhook;

use std::path::Path;
use std::process::ExitCode;

/// The end of an async benchmark's `main`: runs `run` on a Tokio runtime,
/// prints its report and writes it to `out` too, or says what failed as
/// `name: error`.
pub fn report_main(
    name: &str,
    out: Option<&Path>,
    run: impl Future<Output = Result<String, String>>,
) -> ExitCode {
    let result = tokio::runtime::Runtime::new()
        .map_err(|e| e.to_string())
        .and_then(|runtime| runtime.block_on(run));
    let report = match result {
        Ok(report) => report,
        Err(error) => {
            eprintln!("{name}: {error}");
            return ExitCode::FAILURE;
        }
    };
    print!("{report}");
    if let Some(out) = out
        && let Err(error) = std::fs::write(out, &report)
    {
        eprintln!("{name}: {}: {error}", out.display());
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
