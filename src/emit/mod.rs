//! Output formats. Each is written finding by finding, then the summary:
//! the findings of a large run are never all in memory. None re-reads input.

mod github;
mod json;
mod sarif;
mod text;

use std::io::{self, Write};

use crate::options::{Format, LintArgs};
use crate::report::{Finding, Summary};

pub use text::{escaped, plural};

/// Writes findings in a format as they come, and the summary at the end.
struct Emitter<W: Write> {
    writer: Writer,
    /// Counted by severity as the findings pass.
    summary: Summary,
    out: W,
}

/// What each format keeps between findings.
enum Writer {
    Text(text::Writer),
    Json(json::Writer),
    Sarif(sarif::Writer),
    Github,
}

impl<W: Write> Emitter<W> {
    /// Starts the output. `color` applies to text only; the summary's counts
    /// by severity are made by [`Emitter::write`].
    fn new(format: Format, color: bool, summary: Summary, mut out: W) -> io::Result<Self> {
        let writer = match format {
            Format::Text => Writer::Text(text::Writer::new(color)),
            Format::Json => Writer::Json(json::Writer::start(&mut out)?),
            Format::Sarif => Writer::Sarif(sarif::Writer::start(&mut out)?),
            Format::Github => Writer::Github,
        };
        Ok(Self {
            writer,
            summary,
            out,
        })
    }

    /// Writes the next finding (findings come in order).
    fn write(&mut self, finding: &Finding) -> io::Result<()> {
        self.summary.count(finding);
        let out = &mut self.out;
        match &mut self.writer {
            Writer::Text(writer) => writer.write(finding, &self.summary, out),
            Writer::Json(writer) => writer.write(finding, out),
            Writer::Sarif(writer) => writer.write(finding, out),
            Writer::Github => github::write(finding, out),
        }
    }

    /// Writes the end of the output, with the summary; returns the summary.
    fn finish(mut self) -> io::Result<Summary> {
        let (summary, out) = (&self.summary, &mut self.out);
        match self.writer {
            Writer::Text(writer) => writer.finish(summary, out)?,
            Writer::Json(writer) => writer.finish(summary, out)?,
            Writer::Sarif(writer) => writer.finish(out)?,
            Writer::Github => github::finish(summary, out)?,
        }
        self.out.flush()?;
        Ok(self.summary)
    }
}

/// Writes findings in a format with the summary, all of them; returns the
/// summary with its counts by severity.
pub fn emit(
    format: Format,
    color: bool,
    summary: Summary,
    findings: impl IntoIterator<Item = io::Result<Finding>>,
    out: impl Write,
) -> io::Result<Summary> {
    let mut emitter = Emitter::new(format, color, summary, out)?;
    for finding in findings {
        emitter.write(&finding?)?;
    }
    emitter.finish()
}

/// Writes findings on standard output, in the format and colours the
/// options ask for.
pub fn print(
    options: &LintArgs,
    summary: Summary,
    findings: impl IntoIterator<Item = io::Result<Finding>>,
) -> io::Result<Summary> {
    let out = io::BufWriter::new(crate::report::stdout());
    emit(
        options.format,
        options.color.is_on(),
        summary,
        findings,
        out,
    )
}

/// Writes findings on standard error: for when standard output carries
/// something else (the fixed text of standard input).
pub fn eprint(
    options: &LintArgs,
    summary: Summary,
    findings: impl IntoIterator<Item = io::Result<Finding>>,
) -> io::Result<Summary> {
    let stderr = io::stderr();
    let color = options.color.is_on_for(&stderr);
    let out = io::BufWriter::new(crate::report::stderr());
    emit(options.format, color, summary, findings, out)
}
