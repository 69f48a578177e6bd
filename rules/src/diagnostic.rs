//! What a rule reports: [`Diagnostic`], its [`Severity`] and API-server [`Reason`].
//!
//! A diagnostic has no source position: the webhook's objects have none. Front ends
//! turn [`Diagnostic::source_path`] into a position when they have a source text.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use crate::fix::Fix;
use crate::object::{ObjectKey, Origin};
use crate::path::FieldPath;
use crate::quote::{MAX_MESSAGE_BYTES, truncate};
use crate::registry::Rule;

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The object is rejected or cannot work. Fails the run.
    Error,
    /// Probably a mistake. Fails the run only with `--deny-warnings`.
    Warning,
    /// Worth knowing; never fails the run.
    Info,
}

impl Severity {
    /// The lowercase name used in output and configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The API server's error type for a rejected field.
///
/// `BadRequest` stands for decoding failures (unknown fields, wrong JSON types,
/// int32 overflow, bad quantities): the server rejects those with HTTP 400 before it
/// validates anything. The others are field error types of HTTP 422 responses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Reason {
    /// `Required value`.
    Required,
    /// `Invalid value`.
    Invalid,
    /// `Unsupported value`.
    NotSupported,
    /// `Forbidden`.
    Forbidden,
    /// `Too long`.
    TooLong,
    /// The request body could not be decoded (HTTP 400).
    BadRequest,
}

impl Reason {
    /// The name used in output, e.g. `NotSupported`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Required => "Required",
            Reason::Invalid => "Invalid",
            Reason::NotSupported => "NotSupported",
            Reason::Forbidden => "Forbidden",
            Reason::TooLong => "TooLong",
            Reason::BadRequest => "BadRequest",
        }
    }

    /// The text the API server prints for this type, e.g. `Unsupported value`.
    fn server_text(self) -> Option<&'static str> {
        match self {
            Reason::Required => Some("Required value"),
            Reason::Invalid => Some("Invalid value"),
            Reason::NotSupported => Some("Unsupported value"),
            Reason::Forbidden => Some("Forbidden"),
            Reason::TooLong => Some("Too long"),
            Reason::BadRequest => None,
        }
    }

    /// Renders a field error the way the API server does:
    /// `<Type text>[: <bad value>][: <detail>]`. Required, Forbidden and TooLong never
    /// print the value.
    pub fn render(self, value: Option<&str>, detail: &str) -> String {
        let Some(text) = self.server_text() else {
            return detail.to_owned();
        };
        let mut out = text.to_owned();
        if let (Some(value), Reason::Invalid | Reason::NotSupported) = (value, self) {
            out.push_str(": ");
            out.push_str(value);
        }
        if !detail.is_empty() {
            out.push_str(": ");
            out.push_str(detail);
        }
        out
    }
}

/// The object a diagnostic is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subject {
    /// Identity of the object, shared by its findings.
    pub key: Arc<ObjectKey>,
    /// Where the front end got it from.
    pub origin: Origin,
}

/// One finding.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    /// The rule that found it.
    pub rule: &'static Rule,
    /// Severity after configuration.
    pub severity: Severity,
    /// The object whose field is at fault (an HPA, or the workload it targets).
    pub subject: Subject,
    /// The field, in the API server's syntax.
    pub path: FieldPath,
    /// The same field in the document as written (differs for converted
    /// `autoscaling/v1` and `v2beta*` fields). Front ends locate this one.
    pub source_path: FieldPath,
    /// The API server's error type, for API-server parity rules only.
    pub reason: Option<Reason>,
    /// What is wrong. For API-server rules, the server's text after the path.
    pub message: String,
    /// What to do about it (most help texts are fixed: they are not copied
    /// into every finding).
    pub help: Option<Cow<'static, str>>,
    /// What would fix it, when the rule knows.
    pub fix: Option<Fix>,
}

impl Diagnostic {
    /// `path: message`, the form the API server uses in its error lists.
    /// Decoding errors name their field in the message already.
    pub fn field_message(&self) -> String {
        if self.path.segments().is_empty() || self.reason == Some(Reason::BadRequest) {
            self.message.clone()
        } else {
            format!("{}: {}", self.path, self.message)
        }
    }

    /// Sets the help line.
    pub fn help(&mut self, text: impl Into<Cow<'static, str>>) -> &mut Self {
        let mut text = text.into();
        // A help line made for this finding may quote the input: cut like a message.
        if let Cow::Owned(owned) = &mut text {
            truncate(owned, MAX_MESSAGE_BYTES);
        }
        self.help = Some(text);
        self
    }

    /// Attaches a fix.
    pub fn fix(&mut self, fix: Fix) -> &mut Self {
        self.fix = Some(fix);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_the_api_server() {
        assert_eq!(
            Reason::Invalid.render(Some("3600"), "must be less than or equal to 1800"),
            "Invalid value: 3600: must be less than or equal to 1800"
        );
        assert_eq!(
            Reason::Required.render(Some("0"), "must be set and greater than 0"),
            "Required value: must be set and greater than 0"
        );
        assert_eq!(Reason::Required.render(None, ""), "Required value");
        assert_eq!(
            Reason::NotSupported.render(Some("\"Fast\""), "supported values: \"Max\""),
            "Unsupported value: \"Fast\": supported values: \"Max\""
        );
    }
}
