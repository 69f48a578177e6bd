//! Proxies as kubectl takes them, through the real binary and a real proxy
//! (`kube_standin::proxy`): a cluster's `proxy-url` as given, else
//! `HTTPS_PROXY` or `HTTP_PROXY` by the server's scheme, with `NO_PROXY` and
//! the loopback rule as Go reads them; `CONNECT` tunnels to `https://`
//! servers, forwarded requests to `http://` ones, SOCKS5, a proxy over TLS,
//! and proxy passwords that no output ever shows.
//!
//! The proxy resolves `apiserver.test`, a name no resolver knows, to the
//! stand-in's loopback address: a server under that name is reached only
//! through it, and Go never proxies loopback addresses.

mod common;

use std::net::{IpAddr, Ipv4Addr};
use std::process::Output;

use common::{Stage, audit_command, findings, run, shop, stderr, stdout};
use kube_standin::proxy::{Proxy, RunningProxy};

const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// A proxy that knows `apiserver.test`.
fn resolving() -> Proxy {
    Proxy::new().resolve("apiserver.test", LOOPBACK)
}

/// The stage's kubeconfig with the server under `host` and, when given,
/// the cluster's `proxy-url`.
fn kubeconfig(stage: &Stage, host: &str, proxy_url: Option<&str>) {
    let port = stage.standin.address.port();
    let url = stage.standin.url().replace("127.0.0.1", host);
    let mut keys = stage.standin.cluster_keys(&url);
    if let Some(proxy_url) = proxy_url {
        keys.push_str(&format!(", proxy-url: \"{proxy_url}\""));
    }
    let text = stage
        .standin
        .kubeconfig("shop-prod", "shop")
        .replace(&stage.standin.cluster_keys(&stage.standin.url()), &keys);
    assert!(text.contains(&format!("{host}:{port}")));
    std::fs::write(stage.dir.path().join("kubeconfig"), text).unwrap();
}

/// Runs the audit (`-A --format json`) with these environment variables.
fn audit(stage: &Stage, env: &[(&str, &str)]) -> Output {
    let mut command = audit_command(
        stage.dir.path(),
        &["-A", "--format", "json", "--request-timeout", "20s"],
    );
    command.envs(env.iter().copied());
    run(command)
}

/// The findings of a run straight to the stand-in, to compare with.
fn direct(stage: &Stage) -> Vec<(String, String)> {
    kubeconfig(stage, "127.0.0.1", None);
    let output = audit(stage, &[]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    findings(&output)
}

/// Asserts that the run read the cluster, and every request of it went
/// through `proxy` as `asked` (e.g. `CONNECT apiserver.test:PORT`).
fn through(proxy: &RunningProxy, output: &Output, expected: &[(String, String)], asked: &str) {
    assert_eq!(output.status.code(), Some(1), "{}", stderr(output));
    assert_eq!(&findings(output), expected);
    let log = proxy.log();
    assert!(!log.is_empty());
    assert!(
        log.iter().all(|entry| entry.starts_with(asked)),
        "{asked}: {log:?}"
    );
}

#[test]
fn a_cluster_proxy_url_is_used_as_given() {
    let stage = Stage::tls(shop());
    let expected = direct(&stage);
    let proxy = stage.proxy(resolving());
    let port = stage.standin.address.port();
    // For a loopback server too, whatever NO_PROXY says, and instead of
    // HTTPS_PROXY (nothing listens on port 1).
    let url = format!("http://{}", proxy.address);
    kubeconfig(&stage, "127.0.0.1", Some(&url));
    let output = audit(
        &stage,
        &[("NO_PROXY", "*"), ("HTTPS_PROXY", "http://127.0.0.1:1")],
    );
    through(
        &proxy,
        &output,
        &expected,
        &format!("CONNECT 127.0.0.1:{port}"),
    );
    // A proxy-url kubectl refuses.
    kubeconfig(&stage, "127.0.0.1", Some("ftp://127.0.0.1:21"));
    let output = audit(&stage, &[]);
    assert_eq!(
        stderr(&output),
        "kubectl hpa-lint: the cluster's proxy-url has the scheme `ftp`: it must be http, https or socks5\n"
    );
}

#[test]
fn https_proxy_from_the_environment_for_an_https_server() {
    let stage = Stage::tls(shop());
    let expected = direct(&stage);
    let proxy = stage.proxy(resolving());
    let port = stage.standin.address.port();
    kubeconfig(&stage, "apiserver.test", None);
    // Without a scheme, http:// is meant; HTTP_PROXY is for http servers.
    let address = proxy.address.to_string();
    let env = [
        ("https_proxy", address.as_str()),
        ("HTTP_PROXY", "http://127.0.0.1:1"),
    ];
    let output = audit(&stage, &env);
    through(
        &proxy,
        &output,
        &expected,
        &format!("CONNECT apiserver.test:{port}"),
    );
    // An entry of NO_PROXY for another port or name changes nothing.
    let other = [
        ("HTTPS_PROXY", address.as_str()),
        ("NO_PROXY", "apiserver.test:1,test.example,10.0.0.0/8"),
    ];
    through(
        &proxy,
        &audit(&stage, &other),
        &expected,
        "CONNECT apiserver.test",
    );
}

#[test]
fn no_proxy_and_loopback_servers_go_direct() {
    let stage = Stage::tls(shop());
    let proxy = stage.proxy(resolving());
    let port = stage.standin.address.port();
    let address = format!("http://{}", proxy.address);
    kubeconfig(&stage, "apiserver.test", None);
    for no_proxy in [
        "apiserver.test",
        ".test",
        "*.test",
        "TEST",
        &format!("example.com, apiserver.test:{port}"),
        "*",
    ] {
        let output = audit(
            &stage,
            &[("HTTPS_PROXY", address.as_str()), ("no_proxy", no_proxy)],
        );
        // Straight to a name no resolver knows.
        assert_eq!(output.status.code(), Some(2), "{no_proxy}");
        let expected =
            format!("kubectl hpa-lint: cannot read /version from https://apiserver.test:{port}: ");
        assert!(
            stderr(&output).starts_with(&expected),
            "{no_proxy}: {}",
            stderr(&output)
        );
    }
    // Loopback, by name or address, is never proxied.
    for host in ["127.0.0.1", "localhost"] {
        kubeconfig(&stage, host, None);
        let output = audit(&stage, &[("HTTPS_PROXY", address.as_str())]);
        assert_eq!(output.status.code(), Some(1), "{host}: {}", stderr(&output));
    }
    assert_eq!(proxy.log(), Vec::<String>::new());
}

#[test]
fn http_proxy_forwards_requests_to_an_http_server() {
    let stage = Stage::new(shop());
    let expected = direct(&stage);
    let proxy = stage.proxy(resolving());
    let port = stage.standin.address.port();
    kubeconfig(&stage, "apiserver.test", None);
    let address = format!("http://{}", proxy.address);
    let env = [
        ("HTTP_PROXY", address.as_str()),
        ("HTTPS_PROXY", "http://127.0.0.1:1"),
    ];
    let output = audit(&stage, &env);
    // In absolute form, as to a forward proxy: no tunnel.
    through(
        &proxy,
        &output,
        &expected,
        &format!("GET http://apiserver.test:{port}/"),
    );
    // HTTP_PROXY is refused in a CGI program, where a request can set it.
    let cgi = [("HTTP_PROXY", address.as_str()), ("REQUEST_METHOD", "GET")];
    assert_eq!(
        stderr(&audit(&stage, &cgi)),
        "kubectl hpa-lint: refusing to use $HTTP_PROXY where $REQUEST_METHOD is set, as in a CGI program (see golang.org/s/cgihttpproxy)\n"
    );
}

/// What no output of a run may show.
const PASSWORD: &str = "SECRET-p@ss word";
/// [`PASSWORD`] in a URL.
const ENCODED: &str = "SECRET-p%40ss%20word";

fn leaks(output: &Output) -> bool {
    stdout(output).contains("SECRET") || stderr(output).contains("SECRET")
}

#[test]
fn proxy_passwords_are_sent_and_never_shown() {
    let stage = Stage::tls(shop());
    let expected = direct(&stage);
    let port = stage.standin.address.port();
    let proxy = stage.proxy(resolving().require_password("auditor", PASSWORD));
    kubeconfig(&stage, "apiserver.test", None);
    let good = format!("http://auditor:{ENCODED}@{}", proxy.address);
    for format in ["text", "json"] {
        let mut command = audit_command(stage.dir.path(), &["-A", "--format", format]);
        command.env("HTTPS_PROXY", &good);
        let output = run(command);
        assert!(!leaks(&output), "{}{}", stdout(&output), stderr(&output));
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    }
    through(
        &proxy,
        &audit(&stage, &[("HTTPS_PROXY", &good)]),
        &expected,
        "CONNECT apiserver.test",
    );
    // A wrong password: refused, and said so without either password.
    let bad = format!("http://auditor:SECRET-wrong@{}", proxy.address);
    for format in ["text", "json"] {
        let mut command = audit_command(stage.dir.path(), &["-A", "--format", format]);
        command.env("HTTPS_PROXY", &bad);
        let output = run(command);
        assert!(!leaks(&output), "{}{}", stdout(&output), stderr(&output));
        assert_eq!(output.status.code(), Some(2));
        let said = format!(
            "kubectl hpa-lint: cannot read /version from https://apiserver.test:{port} through the proxy http://…@{}: ",
            proxy.address
        );
        assert!(stderr(&output).starts_with(&said), "{}", stderr(&output));
        assert!(
            stderr(&output).contains("proxy authorization required"),
            "{}",
            stderr(&output)
        );
    }
    assert!(proxy.log().last().unwrap().ends_with(" refused"));
    // To an http:// server, the password goes with each request.
    let plain = Stage::new(shop());
    let expected = direct(&plain);
    let proxy = plain.proxy(resolving().require_password("auditor", PASSWORD));
    kubeconfig(&plain, "apiserver.test", None);
    let good = format!("http://auditor:{ENCODED}@{}", proxy.address);
    let output = audit(&plain, &[("HTTP_PROXY", &good)]);
    assert!(!leaks(&output));
    through(&proxy, &output, &expected, "GET http://apiserver.test:");
}

#[test]
fn socks5_proxies_with_and_without_a_password() {
    let stage = Stage::tls(shop());
    let expected = direct(&stage);
    let port = stage.standin.address.port();
    let open = stage.proxy(resolving());
    kubeconfig(
        &stage,
        "apiserver.test",
        Some(&format!("socks5://{}", open.address)),
    );
    through(
        &open,
        &audit(&stage, &[]),
        &expected,
        &format!("SOCKS5 apiserver.test:{port}"),
    );
    let guarded = stage.proxy(resolving().require_password("auditor", PASSWORD));
    let url = format!("socks5://auditor:{ENCODED}@{}", guarded.address);
    kubeconfig(&stage, "apiserver.test", Some(&url));
    let output = audit(&stage, &[]);
    assert!(!leaks(&output));
    through(&guarded, &output, &expected, "SOCKS5 apiserver.test");
    let url = format!("socks5://auditor:SECRET-wrong@{}", guarded.address);
    kubeconfig(&stage, "apiserver.test", Some(&url));
    let output = audit(&stage, &[]);
    assert!(!leaks(&output));
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(
        guarded.log().last().map(String::as_str),
        Some("SOCKS5 refused")
    );
    // To an http:// server as well (its port written out for SOCKS).
    let plain = Stage::new(shop());
    let expected = direct(&plain);
    let port = plain.standin.address.port();
    let open = plain.proxy(resolving());
    kubeconfig(
        &plain,
        "apiserver.test",
        Some(&format!("socks5://{}", open.address)),
    );
    through(
        &open,
        &audit(&plain, &[]),
        &expected,
        &format!("SOCKS5 apiserver.test:{port}"),
    );
}

#[test]
fn an_https_proxy_is_trusted_through_the_cluster_ca() {
    let stage = Stage::tls(shop());
    let expected = direct(&stage);
    let authority = stage.standin.authority().unwrap();
    let proxy = stage.proxy(resolving().tls(authority));
    kubeconfig(
        &stage,
        "apiserver.test",
        Some(&format!("https://{}", proxy.address)),
    );
    through(
        &proxy,
        &audit(&stage, &[]),
        &expected,
        "CONNECT apiserver.test",
    );
}

#[test]
fn proxies_it_cannot_use_are_named_without_their_password() {
    let stage = Stage::tls(shop());
    kubeconfig(&stage, "apiserver.test", None);
    let cases = [
        (
            "ftp://user:SECRET@proxy.corp:21",
            "kubectl hpa-lint: the proxy ftp://…@proxy.corp:21 has the scheme `ftp`: kubectl hpa-lint connects through http, https and socks5 proxies\n",
        ),
        // Go reads `a b` as a URL without a host, and fails to connect.
        (
            "a b",
            "kubectl hpa-lint: the proxy configured (the cluster's proxy-url, $HTTPS_PROXY or $HTTP_PROXY) has no host\n",
        ),
    ];
    for (value, said) in cases {
        let output = audit(&stage, &[("HTTPS_PROXY", value)]);
        assert_eq!(stderr(&output), said);
    }
}
