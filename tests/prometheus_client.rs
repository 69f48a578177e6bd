//! The Prometheus client (`hpa_lint::prometheus::client`) against a real
//! Prometheus (Debian's package, `.ci/install-tools`): a 30-day range at
//! 15 s split under the 11,000-point limit, HTTPS with basic auth (and what
//! happens without the CA or the password), Prometheus' own errors; and
//! against a scripted server, what a real Prometheus does not do on demand:
//! 429 and 503 with retries, the headers sent.

use std::io::Write;
use std::net::TcpListener;

use hpa_lint::prometheus::client::{Client, ClientArgs, Error};
use hpa_lint::prometheus::time::Range;
use hpa_lint_test_support::prometheus::{Certificates, PASSWORD, Prometheus, USER, scripted};

/// 2025-01-01T00:00:00Z.
const START: i64 = 1_735_689_600;
const DAY: i64 = 86_400;

fn args(url: &str) -> ClientArgs {
    ClientArgs {
        prometheus: Some(url.to_owned()),
        ..ClientArgs::default()
    }
}

fn range(seconds: i64) -> Range {
    Range {
        start: START * 1000,
        end: (START + seconds) * 1000,
        step: 15_000,
    }
}

/// `demand{series="a"}` = k at sync k, for `syncs` syncs; `demand{series="b"}` = 1.
fn two_series(syncs: i64) -> impl FnOnce(&mut dyn Write) -> std::io::Result<()> {
    move |out| {
        for k in 0..syncs {
            writeln!(out, "demand{{series=\"a\"}} {k} {}", START + 15 * k)?;
        }
        for k in 0..syncs {
            writeln!(out, "demand{{series=\"b\"}} 1 {}", START + 15 * k)?;
        }
        writeln!(out, "# EOF")
    }
}

#[test]
fn a_thirty_day_range_at_fifteen_seconds_comes_in_sixteen_requests() {
    // `time()` needs no stored data (`promtool` backfills a 2 h block per pass
    // over its whole input: 30 days would take minutes).
    let prometheus = Prometheus::start(two_series(1));
    let client = Client::new(&args(&prometheus.url)).unwrap();
    let mut requests = Vec::new();
    let matrix = client
        .query_range("time()", range(30 * DAY), &mut |done, total| {
            requests.push((done, total));
        })
        .unwrap();
    assert_eq!(requests.len(), 16);
    assert_eq!(requests.last(), Some(&(16, 16)));
    let samples = &matrix.series[0].samples;
    assert_eq!(samples.len(), 172_801);
    assert!(samples.iter().enumerate().all(|(k, &(time, value))| {
        let expected = START + 15 * k as i64;
        time == expected * 1000 && value == expected as f64
    }));
}

#[test]
fn prometheus_errors_come_with_its_message_and_the_query() {
    let prometheus = Prometheus::start(two_series(20));
    let client = Client::new(&args(&prometheus.url)).unwrap();
    let bad = client.query_range("sum(rate(demand[1m])", range(60), &mut |_, _| {});
    let message = bad.unwrap_err().to_string();
    assert!(
        message.starts_with(&format!(
            "Prometheus at {} refused the query: bad_data: ",
            prometheus.url
        )) && message.contains("parse error")
            && message.ends_with("the query: sum(rate(demand[1m])"),
        "{message}"
    );
    // Matching two series to one label set fails when the query runs (422).
    let execution = client.query_range("demand * on () demand", range(60), &mut |_, _| {});
    let message = execution.unwrap_err().to_string();
    assert!(
        message.contains("refused the query: execution: "),
        "{message}"
    );
    // A query that matches nothing is an empty answer, not an error.
    let nothing = client
        .query_range("nothing_here", range(60), &mut |_, _| {})
        .unwrap();
    assert!(nothing.series.is_empty());
    // A URL with the API path already in it.
    let wrong = Client::new(&args(&format!("{}/api/v1", prometheus.url))).unwrap();
    let message = wrong
        .query_range("demand", range(60), &mut |_, _| {})
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("answered 404 (no Prometheus API under this URL"),
        "{message}"
    );
}

#[test]
fn https_with_basic_auth() {
    let certificates = Certificates::generate();
    let prometheus = Prometheus::start_tls(two_series(20), &certificates);
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &certificates.ca).unwrap();
    let password = dir.path().join("password");
    std::fs::write(&password, format!("{PASSWORD}\n")).unwrap();
    let authenticated = ClientArgs {
        prometheus_ca_file: Some(ca.clone()),
        prometheus_basic_auth_user: Some(USER.to_owned()),
        prometheus_basic_auth_password_file: Some(password.clone()),
        ..args(&prometheus.url)
    };
    let query = |args: &ClientArgs| {
        Client::new(args)
            .unwrap()
            .query_range("demand{series=\"a\"}", range(60), &mut |_, _| {})
    };
    let matrix = query(&authenticated).unwrap();
    assert_eq!(matrix.series[0].samples.len(), 5);

    // Mozilla's roots do not know the test CA.
    let untrusted = ClientArgs {
        prometheus_ca_file: None,
        ..authenticated.clone()
    };
    let message = query(&untrusted).unwrap_err().to_string();
    assert!(
        message.starts_with(&format!(
            "TLS with Prometheus at {} failed: ",
            prometheus.url
        )) && message.contains("UnknownIssuer")
            && message.ends_with("(trust its certificate authority with --prometheus-ca-file)"),
        "{message}"
    );
    let unverified = ClientArgs {
        prometheus_insecure_skip_tls_verify: true,
        ..untrusted
    };
    assert!(query(&unverified).is_ok());

    std::fs::write(&password, "wrong").unwrap();
    let message = query(&authenticated).unwrap_err().to_string();
    assert_eq!(
        message,
        format!(
            "Prometheus at {} answered 401 (not authorized: check --prometheus-bearer-token-file or --prometheus-basic-auth-user): Unauthorized",
            prometheus.url
        )
    );
    // Plain HTTP to an HTTPS port.
    let plain = prometheus.url.replace("https://", "http://");
    let message = query(&args(&plain)).unwrap_err().to_string();
    assert!(message.contains("answered 400"), "{message}");
}

#[test]
fn an_unreachable_prometheus_is_named() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let error = Client::new(&args(&url))
        .unwrap()
        .query_range("up", range(60), &mut |_, _| {})
        .unwrap_err();
    assert!(matches!(error, Error::Unreachable { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .starts_with(&format!("cannot reach Prometheus at {url}: ")),
        "{error}"
    );
    let missing = ClientArgs {
        prometheus_bearer_token_file: Some("/nonexistent/token".into()),
        ..args(&url)
    };
    let message = Client::new(&missing).err().unwrap().to_string();
    assert!(
        message.starts_with("--prometheus-bearer-token-file /nonexistent/token: "),
        "{message}"
    );
}

const ANSWER: &str = r#"{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1735689600,"1"]]}]}}"#;

#[test]
fn retries_429_and_503_then_gives_up_with_the_body() {
    let (url, requests) = scripted(vec![
        (429, "retry-after: 0\r\n", "too many requests".to_owned()),
        (503, "retry-after: 0\r\n", "Service Unavailable".to_owned()),
        (200, "", ANSWER.to_owned()),
    ]);
    let matrix = Client::new(&args(&url))
        .unwrap()
        .query_range("up", range(0), &mut |_, _| {})
        .unwrap();
    assert_eq!(matrix.series[0].samples, [(START * 1000, 1.0)]);
    assert_eq!(requests.lock().unwrap().len(), 3);

    let busy = || (503, "retry-after: 0\r\n", "Service Unavailable".to_owned());
    let (url, requests) = scripted(vec![busy(), busy(), busy()]);
    let once = ClientArgs {
        prometheus_retries: 2,
        ..args(&url)
    };
    let message = Client::new(&once)
        .unwrap()
        .query_range("up", range(0), &mut |_, _| {})
        .unwrap_err()
        .to_string();
    assert_eq!(
        message,
        format!(
            "Prometheus at {url} answered 503 (after retries with backoff): Service Unavailable"
        )
    );
    assert_eq!(requests.lock().unwrap().len(), 3);

    // A query that timed out in Prometheus is not run again.
    let timeout = r#"{"status":"error","errorType":"timeout","error":"query timed out in expression evaluation"}"#;
    let (url, requests) = scripted(vec![(503, "", timeout.to_owned())]);
    let message = Client::new(&args(&url))
        .unwrap()
        .query_range("up", range(0), &mut |_, _| {})
        .unwrap_err()
        .to_string();
    assert_eq!(
        message,
        format!(
            "Prometheus at {url} answered 503: timeout: query timed out in expression evaluation"
        )
    );
    assert_eq!(requests.lock().unwrap().len(), 1);
}

#[test]
fn sends_the_token_the_headers_and_the_range() {
    let (url, requests) = scripted(vec![(200, "", ANSWER.to_owned())]);
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "s3cr3t\n").unwrap();
    let client = Client::new(&ClientArgs {
        prometheus_bearer_token_file: Some(token),
        prometheus_header: vec!["X-Scope-OrgID=team-a".to_owned()],
        ..args(&format!("{url}/prometheus/"))
    })
    .unwrap();
    client
        .query_range("sum(up{job=\"a b\"})", range(30), &mut |_, _| {})
        .unwrap();
    let request = requests.lock().unwrap()[0].to_lowercase();
    assert!(
        request.starts_with("post /prometheus/api/v1/query_range http/1.1\r\n"),
        "{request}"
    );
    for expected in [
        "authorization: bearer s3cr3t\r\n",
        "x-scope-orgid: team-a\r\n",
        "content-type: application/x-www-form-urlencoded\r\n",
        "accept-encoding: gzip\r\n",
        "user-agent: hpa-lint/",
        "\r\n\r\nquery=sum(up%7bjob%3d%22a+b%22%7d)&start=1735689600&end=1735689630&step=15",
    ] {
        assert!(request.contains(expected), "{expected:?} in {request}");
    }
}

#[test]
fn a_server_that_refuses_post_gets_the_query_in_the_url() {
    let (url, requests) = scripted(vec![
        (405, "", "method not allowed".to_owned()),
        (200, "", ANSWER.to_owned()),
        (200, "", ANSWER.to_owned()),
    ]);
    let client = Client::new(&args(&url)).unwrap();
    for _ in 0..2 {
        client.query_range("up", range(0), &mut |_, _| {}).unwrap();
    }
    let requests = requests.lock().unwrap();
    assert!(
        requests[0].starts_with("POST /api/v1/query_range HTTP/1.1\r\n"),
        "{}",
        requests[0]
    );
    for request in &requests[1..] {
        assert!(
            request.starts_with("GET /api/v1/query_range?query=up&start=1735689600&end=1735689600&step=15 HTTP/1.1\r\n"),
            "{request}"
        );
    }
}
