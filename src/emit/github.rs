//! `--format github`: GitHub Actions workflow commands, which the runner turns
//! into annotations on the pull request.

use std::io::{self, Write};

use hpa_lint_rules::Severity;

use crate::emit::text::{message, object_field, summary_line};
use crate::report::{Finding, Summary};

/// Escapes a workflow command's message.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow command's property value.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// A finding as a workflow command.
pub fn write(finding: &Finding, out: &mut dyn Write) -> io::Result<()> {
    let command = match finding.diagnostic.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "notice",
    };
    let mut message = message(finding);
    // An object read from a cluster has no file: name it in the message.
    let place = match &finding.location {
        Some(l) => format!(
            "file={},line={},col={},",
            escape_property(&l.file),
            l.line,
            l.column
        ),
        None => {
            message = format!("{}: {message}", object_field(finding));
            String::new()
        }
    };
    writeln!(
        out,
        "::{command} {place}title={}::{}",
        escape_property(&format!("hpa-lint {}", finding.diagnostic.rule.name)),
        escape_data(&message),
    )
}

/// The summary line, after the findings.
pub fn finish(summary: &Summary, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}", summary_line(summary))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_like_the_actions_toolkit() {
        assert_eq!(escape_data("50%\nnext"), "50%25%0Anext");
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
    }
}
