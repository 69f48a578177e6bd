//! A blocking Prometheus client for `query_range`: HTTP or HTTPS (rustls with
//! ring; Mozilla's roots or `--prometheus-ca-file`), bearer token or basic
//! auth read from files, extra headers, a timeout per request, retries with
//! backoff on 429, 502 and 503, and ranges split into requests of at most
//! 11,000 points (Prometheus' limit per series), a few at a time on threads
//! (no async runtime). `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY` apply.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use base64::prelude::{BASE64_STANDARD, Engine as _};
use clap::Args;
use hpa_lint_rules::controller::flags::format_duration;
use hpa_lint_rules::controller::{Millis, parse_duration};
use ureq::Agent;
use ureq::tls::{Certificate, PemItem, RootCerts, TlsConfig};

use super::matrix::{self, Matrix, ParseError};
use super::time::Range;
use crate::emit::escaped;

/// Prometheus answers at most this many points per series (`query_range`'s
/// "exceeded maximum resolution of 11,000 points per timeseries").
pub const MAX_POINTS: i64 = 11_000;

/// The requests of one query under way at once: a range's chunks come
/// faster from a Prometheus with cores to spare, and no server is flooded.
pub const PARALLEL_REQUESTS: usize = 4;

/// Larger answers are refused rather than read into memory.
pub const MAX_RESPONSE_BYTES: u64 = 256 << 20;

/// The longest wait a `Retry-After` gets.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// Where Prometheus is and how to reach it; the names follow Prometheus'
/// `http_config` (which `promtool --http.config.file` and Grafana's data
/// sources offer), with a `prometheus-` prefix so that they never mean the
/// cluster's API server.
#[derive(Clone, Debug, Args)]
pub struct ClientArgs {
    /// Prometheus' URL (or a compatible API: Thanos, Mimir, VictoriaMetrics),
    /// e.g. `http://localhost:9090` or `https://example.com/prometheus`.
    #[arg(long, value_name = "URL")]
    pub prometheus: Option<String>,
    /// A file with the bearer token to send (`Authorization: Bearer …`).
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "prometheus_basic_auth_user"
    )]
    pub prometheus_bearer_token_file: Option<PathBuf>,
    /// The user for HTTP basic auth (with --prometheus-basic-auth-password-file).
    #[arg(
        long,
        value_name = "USER",
        requires = "prometheus_basic_auth_password_file"
    )]
    pub prometheus_basic_auth_user: Option<String>,
    /// A file with the password for HTTP basic auth.
    #[arg(long, value_name = "FILE", requires = "prometheus_basic_auth_user")]
    pub prometheus_basic_auth_password_file: Option<PathBuf>,
    /// An extra header for every request, e.g. `X-Scope-OrgID=team-a`
    /// (repeatable).
    #[arg(long, value_name = "NAME=VALUE")]
    pub prometheus_header: Vec<String>,
    /// A PEM file with the certificate authorities to trust instead of
    /// Mozilla's.
    #[arg(long, value_name = "FILE")]
    pub prometheus_ca_file: Option<PathBuf>,
    /// Do not verify Prometheus' certificate (the connection is still encrypted).
    #[arg(long)]
    pub prometheus_insecure_skip_tls_verify: bool,
    /// The longest a request may take, from connecting to the last byte.
    #[arg(long, value_name = "DURATION", default_value = "2m", value_parser = parse_duration)]
    pub prometheus_timeout: Millis,
    /// Retries of a request answered 429, 502 or 503 (after 1 s, 2 s, 4 s, …,
    /// or the `Retry-After` the server asks for, up to a minute).
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub prometheus_retries: u32,
}

impl Default for ClientArgs {
    /// No URL, and the command line's defaults.
    fn default() -> Self {
        ClientArgs {
            prometheus: None,
            prometheus_bearer_token_file: None,
            prometheus_basic_auth_user: None,
            prometheus_basic_auth_password_file: None,
            prometheus_header: Vec::new(),
            prometheus_ca_file: None,
            prometheus_insecure_skip_tls_verify: false,
            prometheus_timeout: 120_000,
            prometheus_retries: 4,
        }
    }
}

/// Why a query got no answer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("--prometheus {url}: expected an http:// or https:// URL")]
    Url { url: String },
    #[error("{option} {}: {cause}", path.display())]
    File {
        option: &'static str,
        path: PathBuf,
        cause: String,
    },
    #[error("--prometheus-header {header}: expected NAME=VALUE, e.g. X-Scope-OrgID=team-a")]
    Header { header: String },
    #[error("--prometheus-timeout must be longer than 0s")]
    NoTimeout,
    #[error("cannot reach Prometheus at {url}: {cause}")]
    Unreachable { url: String, cause: String },
    #[error(
        "TLS with Prometheus at {url} failed: {cause} (trust its certificate authority with --prometheus-ca-file)"
    )]
    Tls { url: String, cause: String },
    #[error("Prometheus at {url} did not answer within --prometheus-timeout {}", format_duration(*.timeout))]
    Timeout { url: String, timeout: Millis },
    #[error("Prometheus at {url} answered {status}{hint}: {body}")]
    Status {
        url: String,
        status: u16,
        hint: &'static str,
        body: String,
    },
    #[error("Prometheus at {url} refused the query: {error}\n  the query: {query}")]
    Query {
        url: String,
        error: String,
        query: String,
    },
    #[error("Prometheus at {url}: {error}{start}")]
    Answer {
        url: String,
        error: ParseError,
        /// The start of an answer that is not JSON (a login page, a proxy's error).
        start: String,
    },
    #[error(
        "Prometheus at {url} answered more than {} MiB for one request: sum the series in the query",
        MAX_RESPONSE_BYTES >> 20
    )]
    TooLarge { url: String },
    #[error("Prometheus at {url}: {cause}")]
    Http { url: String, cause: String },
}

/// A connection to one Prometheus.
pub struct Client {
    agent: Agent,
    /// Whether the server refused POST (405): then the query goes in the URL.
    get: AtomicBool,
    /// `…/api/v1/query_range`.
    endpoint: String,
    /// The URL as given, for messages.
    url: String,
    headers: Vec<(String, String)>,
    timeout: Millis,
    retries: u32,
}

fn read_secret(option: &'static str, path: &Path) -> Result<String, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::File {
        option,
        path: path.to_owned(),
        cause: e.to_string(),
    })?;
    // As Prometheus reads `bearer_token_file` and `password_file`.
    Ok(text.trim().to_owned())
}

fn read_certificates(path: &Path) -> Result<Vec<Certificate<'static>>, Error> {
    let error = |cause: String| Error::File {
        option: "--prometheus-ca-file",
        path: path.to_owned(),
        cause,
    };
    let pem = std::fs::read(path).map_err(|e| error(e.to_string()))?;
    let mut certificates = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        match item {
            Ok(PemItem::Certificate(certificate)) => certificates.push(certificate),
            Ok(_) => {}
            Err(e) => return Err(error(format!("not a PEM file: {e}"))),
        }
    }
    if certificates.is_empty() {
        return Err(error("no PEM certificate in the file".to_owned()));
    }
    Ok(certificates)
}

/// Seconds as Prometheus takes them (`1735689600.5`).
fn seconds(ms: i64) -> String {
    if ms % 1000 == 0 {
        (ms / 1000).to_string()
    } else {
        format!("{}", ms as f64 / 1000.0)
    }
}

/// The requests a range is split into: at most [`MAX_POINTS`] points each.
pub fn chunks(range: Range) -> Vec<Range> {
    let span = (MAX_POINTS - 1) * range.step;
    let mut chunks = Vec::new();
    let mut start = range.start;
    while start <= range.end {
        let end = (start + span).min(range.end);
        chunks.push(Range {
            start,
            end,
            ..range
        });
        start = end + range.step;
    }
    chunks
}

/// The text of an error body: Prometheus' `errorType: error`, or the start
/// of whatever else came (a proxy's page), on one line.
fn error_text(body: &[u8]) -> String {
    if let Err(ParseError::Prometheus { error_type, error }) = matrix::parse(body) {
        return format!("{error_type}: {error}");
    }
    let text = String::from_utf8_lossy(body);
    let line = escaped(&text.split_whitespace().collect::<Vec<_>>().join(" "));
    let line: String = line.chars().take(300).collect();
    if line.is_empty() {
        "(no body)".to_owned()
    } else {
        line
    }
}

impl Client {
    /// A client for `args.prometheus` (which must be set).
    pub fn new(args: &ClientArgs) -> Result<Client, Error> {
        let url = args.prometheus.clone().unwrap_or_default();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(Error::Url { url });
        }
        if args.prometheus_timeout <= 0 {
            return Err(Error::NoTimeout);
        }
        let mut headers = Vec::new();
        if let Some(path) = &args.prometheus_bearer_token_file {
            let token = read_secret("--prometheus-bearer-token-file", path)?;
            headers.push(("Authorization".to_owned(), format!("Bearer {token}")));
        }
        if let (Some(user), Some(path)) = (
            &args.prometheus_basic_auth_user,
            &args.prometheus_basic_auth_password_file,
        ) {
            let password = read_secret("--prometheus-basic-auth-password-file", path)?;
            let credentials = BASE64_STANDARD.encode(format!("{user}:{password}"));
            headers.push(("Authorization".to_owned(), format!("Basic {credentials}")));
        }
        for header in &args.prometheus_header {
            let Some((name, value)) = header.split_once('=') else {
                return Err(Error::Header {
                    header: header.clone(),
                });
            };
            let name = name.trim();
            let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
            if name.is_empty() || !name.chars().all(token) || value.contains(['\r', '\n']) {
                return Err(Error::Header {
                    header: header.clone(),
                });
            }
            headers.push((name.to_owned(), value.trim().to_owned()));
        }
        let root_certs = match &args.prometheus_ca_file {
            Some(path) => RootCerts::Specific(Arc::new(read_certificates(path)?)),
            None => RootCerts::WebPki,
        };
        let tls = TlsConfig::builder()
            .root_certs(root_certs)
            .disable_verification(args.prometheus_insecure_skip_tls_verify)
            .build();
        let timeout = Duration::from_millis(u64::try_from(args.prometheus_timeout).unwrap_or(0));
        let agent: Agent = Agent::config_builder()
            .tls_config(tls)
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .user_agent(concat!("hpa-lint/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Ok(Client {
            agent,
            get: AtomicBool::new(false),
            endpoint: format!("{}/api/v1/query_range", url.trim_end_matches('/')),
            url,
            headers,
            timeout: args.prometheus_timeout,
            retries: args.prometheus_retries,
        })
    }

    /// The URL as given.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// `query` over `range`, in as many requests as the 11,000-point limit
    /// needs, [`PARALLEL_REQUESTS`] at a time; `progress` hears
    /// `(done, total)` after each request. The first error ends the query.
    pub fn query_range(
        &self,
        query: &str,
        range: Range,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Matrix, Error> {
        let chunks = chunks(range);
        let next = AtomicUsize::new(0);
        let mut answers: Vec<Option<Matrix>> = chunks.iter().map(|_| None).collect();
        let mut failure = None;
        std::thread::scope(|scope| {
            let (sender, receiver) = mpsc::channel();
            for _ in 0..PARALLEL_REQUESTS.min(chunks.len()) {
                let (sender, next, chunks) = (sender.clone(), &next, &chunks);
                scope.spawn(move || {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(chunk) = chunks.get(i) else {
                            break;
                        };
                        let answer = self.post(query, *chunk).and_then(|body| {
                            matrix::parse(&body).map_err(|error| self.answer_error(error, &body))
                        });
                        let failed = answer.is_err();
                        if sender.send((i, answer)).is_err() || failed {
                            break;
                        }
                    }
                });
            }
            drop(sender);
            for (done, (i, answer)) in receiver.into_iter().enumerate() {
                match answer {
                    Ok(matrix) => answers[i] = Some(matrix),
                    Err(error) => {
                        // No more requests; those under way end on their own.
                        next.store(chunks.len(), Ordering::Relaxed);
                        failure.get_or_insert(error);
                    }
                }
                progress(done + 1, chunks.len());
            }
        });
        if let Some(error) = failure {
            return Err(error);
        }
        let mut matrix = Matrix::default();
        for answer in answers.into_iter().flatten() {
            matrix.extend(answer);
        }
        Ok(matrix)
    }

    fn answer_error(&self, error: ParseError, body: &[u8]) -> Error {
        let start = if matches!(error, ParseError::NotJson { .. }) {
            let text: String = error_text(body).chars().take(80).collect();
            format!(" (the answer starts with `{text}`; is the URL Prometheus' API?)")
        } else {
            String::new()
        };
        Error::Answer {
            url: self.url.clone(),
            error,
            start,
        }
    }

    /// One request, retried on 429, 502 and 503; the body of a 200. The
    /// form is POSTed (long queries do not fit every URL), or sent as a GET
    /// to a server that refuses POST (some proxies allow GET only).
    fn post(&self, query: &str, range: Range) -> Result<Vec<u8>, Error> {
        let form = [
            ("query", query.to_owned()),
            ("start", seconds(range.start)),
            ("end", seconds(range.end)),
            ("step", seconds(range.step)),
        ];
        let fields = || form.iter().map(|(k, v)| (*k, v.as_str()));
        let mut attempt = 0;
        loop {
            let response = if self.get.load(Ordering::Relaxed) {
                let mut request = self.agent.get(&self.endpoint).query_pairs(fields());
                for (name, value) in &self.headers {
                    request = request.header(name, value);
                }
                request.call()
            } else {
                let mut request = self.agent.post(&self.endpoint);
                for (name, value) in &self.headers {
                    request = request.header(name, value);
                }
                request.send_form(fields())
            };
            let mut response = response.map_err(|e| self.transport_error(e))?;
            let status = response.status().as_u16();
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(|s| Duration::from_secs(s).min(MAX_RETRY_AFTER));
            let body = self.read_body(response.body_mut())?;
            if status == 200 {
                return Ok(body);
            }
            if status == 405 && !self.get.swap(true, Ordering::Relaxed) {
                continue;
            }
            // Prometheus answers 503 to a query that ran out of time too: no use
            // running it again.
            let timed_out = matches!(matrix::parse(&body), Err(ParseError::Prometheus { ref error_type, .. }) if error_type == "timeout");
            if matches!(status, 429 | 502 | 503) && !timed_out && attempt < self.retries {
                let backoff = Duration::from_secs(1 << attempt.min(5));
                std::thread::sleep(retry_after.unwrap_or(backoff));
                attempt += 1;
                continue;
            }
            return Err(self.status_error(status, &body, query, attempt));
        }
    }

    fn read_body(&self, body: &mut ureq::Body) -> Result<Vec<u8>, Error> {
        let mut bytes = Vec::new();
        body.with_config()
            .limit(MAX_RESPONSE_BYTES)
            .reader()
            .read_to_end(&mut bytes)
            .map_err(|e| match ureq::Error::from(e) {
                ureq::Error::BodyExceedsLimit(_) => Error::TooLarge {
                    url: self.url.clone(),
                },
                other => self.transport_error(other),
            })?;
        Ok(bytes)
    }

    fn status_error(&self, status: u16, body: &[u8], query: &str, retries: u32) -> Error {
        let url = self.url.clone();
        if let (400 | 422, Err(ParseError::Prometheus { error_type, error })) =
            (status, matrix::parse(body))
        {
            return Error::Query {
                url,
                error: format!("{error_type}: {error}"),
                query: query.to_owned(),
            };
        }
        let hint = match status {
            401 => {
                " (not authorized: check --prometheus-bearer-token-file or --prometheus-basic-auth-user)"
            }
            403 => " (forbidden: the credentials may not query)",
            404 => " (no Prometheus API under this URL: give the URL without `/api/v1`)",
            429 | 502 | 503 if retries > 0 => " (after retries with backoff)",
            _ => "",
        };
        Error::Status {
            url,
            status,
            hint,
            body: error_text(body),
        }
    }

    fn transport_error(&self, error: ureq::Error) -> Error {
        let url = self.url.clone();
        let io_cause = |e: &std::io::Error| {
            e.get_ref()
                .map_or_else(|| e.to_string(), ToString::to_string)
        };
        match error {
            ureq::Error::Timeout(_) => Error::Timeout {
                url,
                timeout: self.timeout,
            },
            ureq::Error::HostNotFound => Error::Unreachable {
                url,
                cause: "host not found".to_owned(),
            },
            ureq::Error::Io(e) if e.kind() == std::io::ErrorKind::InvalidData => Error::Tls {
                url,
                cause: io_cause(&e),
            },
            ureq::Error::Io(e) => Error::Unreachable {
                url,
                cause: io_cause(&e),
            },
            ureq::Error::ConnectionFailed => Error::Unreachable {
                url,
                cause: "connection failed".to_owned(),
            },
            ureq::Error::Tls(cause) => Error::Tls {
                url,
                cause: cause.to_owned(),
            },
            ureq::Error::Rustls(e) => Error::Tls {
                url,
                cause: e.to_string(),
            },
            other => Error::Http {
                url,
                cause: other.to_string(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_ranges_at_eleven_thousand_points() {
        let day = 86_400_000;
        let range = Range {
            start: 0,
            end: 30 * day,
            step: 15_000,
        };
        let chunks = chunks(range);
        assert_eq!(range.points(), 172_801);
        assert_eq!(chunks.len(), 16);
        assert!(chunks.iter().all(|c| c.points() <= MAX_POINTS));
        assert_eq!(
            chunks.iter().map(Range::points).sum::<i64>(),
            range.points()
        );
        for pair in chunks.windows(2) {
            assert_eq!(pair[1].start, pair[0].end + 15_000);
        }
        assert_eq!(chunks.last().unwrap().end, 30 * day);
        let one = Range {
            start: 0,
            end: 0,
            step: 15_000,
        };
        assert_eq!(super::chunks(one), [one]);
    }

    #[test]
    fn refuses_bad_urls_and_headers() {
        let args = ClientArgs {
            prometheus: Some("localhost:9090".to_owned()),
            ..ClientArgs::default()
        };
        assert!(matches!(Client::new(&args), Err(Error::Url { .. })));
        for header in ["X-Scope-OrgID", "Bad Name=1", "X=a\nb"] {
            let args = ClientArgs {
                prometheus: Some("http://localhost:9090".to_owned()),
                prometheus_header: vec![header.to_owned()],
                ..ClientArgs::default()
            };
            assert!(
                matches!(Client::new(&args), Err(Error::Header { .. })),
                "{header}"
            );
        }
    }
}
