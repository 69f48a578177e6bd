//! Output formats. Each emitter writes the whole outcome; none re-reads input.

mod github;
mod json;
mod sarif;
mod text;

use std::io::{self, Write};

use crate::options::Format;
use crate::report::Outcome;

/// Writes the outcome in a format. `color` applies to text only.
pub fn emit(format: Format, outcome: &Outcome, color: bool, out: &mut dyn Write) -> io::Result<()> {
    match format {
        Format::Text => text::emit(outcome, color, out),
        Format::Json => json::emit(outcome, out),
        Format::Sarif => sarif::emit(outcome, out),
        Format::Github => github::emit(outcome, out),
    }
}
