//! Words, sentences and a line-by-line YAML writer.

use std::collections::BTreeSet;

use crate::rng::Rng;

/// Words for descriptions, comments and field names.
const WORDS: &[&str] = &[
    "access",
    "address",
    "alert",
    "annotation",
    "api",
    "backoff",
    "batch",
    "bearer",
    "bucket",
    "cache",
    "certificate",
    "channel",
    "client",
    "cluster",
    "condition",
    "config",
    "connection",
    "container",
    "controller",
    "credential",
    "default",
    "delay",
    "endpoint",
    "entry",
    "event",
    "expression",
    "field",
    "filter",
    "group",
    "header",
    "host",
    "identity",
    "image",
    "interval",
    "issuer",
    "key",
    "label",
    "limit",
    "listener",
    "metric",
    "mode",
    "name",
    "namespace",
    "network",
    "node",
    "object",
    "path",
    "peer",
    "policy",
    "pool",
    "port",
    "prefix",
    "priority",
    "probe",
    "protocol",
    "provider",
    "proxy",
    "queue",
    "quota",
    "range",
    "reference",
    "region",
    "relabel",
    "remote",
    "replica",
    "request",
    "resource",
    "retention",
    "role",
    "route",
    "rule",
    "sample",
    "scheme",
    "scrape",
    "secret",
    "selector",
    "server",
    "service",
    "session",
    "shard",
    "size",
    "source",
    "storage",
    "stream",
    "subject",
    "target",
    "template",
    "threshold",
    "timeout",
    "tls",
    "token",
    "topology",
    "tracing",
    "user",
    "value",
    "version",
    "volume",
    "webhook",
    "window",
    "write",
    "zone",
];

/// Filler words that make sentences read like API documentation.
const GLUE: &[&str] = &[
    "the",
    "of",
    "to",
    "is",
    "for",
    "when",
    "if",
    "and",
    "or",
    "with",
    "must",
    "be",
    "can",
    "defines",
    "specifies",
    "controls",
    "sets",
    "used",
    "by",
    "this",
    "that",
    "each",
    "every",
    "not",
    "only",
    "all",
    "in",
    "on",
    "defaults",
    "empty",
    "ignored",
    "applied",
    "configured",
];

/// Up to `count` different words, sorted: keys of one mapping must differ.
pub fn words(rng: &mut Rng, count: u64) -> BTreeSet<&'static str> {
    (0..count).map(|_| word(rng)).collect()
}

pub fn word(rng: &mut Rng) -> &'static str {
    rng.pick(WORDS)
}

/// A camelCase field name of one to three words.
pub fn field_name(rng: &mut Rng) -> String {
    let mut name = word(rng).to_owned();
    for _ in 0..rng.range(0, 2) {
        let next = word(rng);
        name.push_str(&next[..1].to_uppercase());
        name.push_str(&next[1..]);
    }
    name
}

/// A sentence of plain words (safe as a plain YAML scalar).
pub fn sentence(rng: &mut Rng) -> String {
    let len = rng.range(6, 18);
    let mut words = Vec::with_capacity(len as usize);
    for i in 0..len {
        words.push(if i % 2 == 0 {
            word(rng)
        } else {
            rng.pick(GLUE)
        });
    }
    let text = words.join(" ");
    format!("{}{}.", text[..1].to_uppercase(), &text[1..])
}

pub fn sentences(rng: &mut Rng, count: u64) -> String {
    (0..count)
        .map(|_| sentence(rng))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Random characters from `alphabet` (hex digits, base64 ...).
pub fn chars(rng: &mut Rng, alphabet: &[u8], len: usize) -> String {
    (0..len).map(|_| char::from(rng.pick(alphabet))).collect()
}

pub const HEX: &[u8] = b"0123456789abcdef";
pub const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Block-style YAML, written a line at a time.
#[derive(Default)]
pub struct Yaml(pub String);

impl Yaml {
    /// Writes `text` indented by `indent` spaces, then a newline.
    pub fn line(&mut self, indent: usize, text: impl AsRef<str>) {
        self.0.extend(std::iter::repeat_n(' ', indent));
        self.0.push_str(text.as_ref());
        self.0.push('\n');
    }

    /// Writes each line of `block` indented by `indent` more spaces.
    pub fn block(&mut self, indent: usize, block: &str) {
        for line in block.lines() {
            if line.is_empty() {
                self.0.push('\n');
            } else {
                self.line(indent, line);
            }
        }
    }

    /// `key: |-` followed by `text` wrapped at about 80 columns, or `key: text`
    /// when it is short.
    pub fn text(&mut self, indent: usize, key: &str, text: &str) {
        if text.len() + indent + key.len() < 80 {
            return self.line(indent, format!("{key}: {text}"));
        }
        self.line(indent, format!("{key}: |-"));
        let mut line = String::new();
        for word in text.split(' ') {
            if !line.is_empty() && line.len() + word.len() > 80 {
                self.line(indent + 2, &line);
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        self.line(indent + 2, &line);
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }
}
