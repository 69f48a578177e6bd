//! Output formats. Each emitter writes the whole outcome; none re-reads input.

mod github;
mod json;
mod sarif;
mod text;

use std::io::{self, Write};

use crate::options::{Format, LintArgs};
use crate::report::Outcome;

pub use text::{escaped, plural};

/// Writes the outcome in a format. `color` applies to text only.
pub fn emit(format: Format, outcome: &Outcome, color: bool, out: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Text => text::emit(outcome, color, out),
        Format::Json => json::emit(outcome, out),
        Format::Sarif => sarif::emit(outcome, out),
        Format::Github => github::emit(outcome, out),
    }
}

/// Writes the outcome on standard output, in the format and colours the
/// options ask for.
pub fn print(options: &LintArgs, outcome: &Outcome) -> io::Result<()> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    emit(options.format, outcome, options.color.is_on(), &mut out)?;
    out.flush()
}

/// Writes the outcome on standard error: for when standard output carries
/// something else (the fixed text of standard input).
pub fn eprint(options: &LintArgs, outcome: &Outcome) -> io::Result<()> {
    let stderr = io::stderr();
    let color = options.color.is_on_for(&stderr);
    let mut out = io::BufWriter::new(stderr.lock());
    emit(options.format, outcome, color, &mut out)?;
    out.flush()
}
