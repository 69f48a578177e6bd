//! A real Prometheus for the tests: Debian's package, which `.ci/install-tools`
//! unpacks into `.tools/`, started on 127.0.0.1 (a free port) with a
//! temporary data directory that `promtool tsdb create-blocks-from openmetrics`
//! filled with a history. Never skipped: without the tools the tests fail,
//! saying how to install them.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use tempfile::TempDir;

/// `prometheus` or `promtool`: from the workspace's `.tools/bin`, else from
/// the PATH, else installed into `.tools/` by `.ci/install-tools prometheus`
/// (once, under a lock, as test processes run in parallel), so that `cargo
/// test` alone works on a fresh clone.
pub fn tool(name: &str) -> PathBuf {
    // This crate is `tests/support` of the workspace.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root.as_path();
    let installed = root.join(".tools/bin").join(name);
    if installed.is_file() {
        return installed;
    }
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    });
    if let Some(found) = on_path {
        return found;
    }
    install_prometheus(root);
    assert!(
        installed.is_file(),
        "`.ci/install-tools prometheus` did not install {}; the tests against a real Prometheus are never skipped",
        installed.display()
    );
    installed
}

fn install_prometheus(root: &Path) {
    std::fs::create_dir_all(root.join(".tools")).unwrap();
    let lock = std::fs::File::create(root.join(".tools/install.lock")).unwrap();
    lock.lock().unwrap();
    let status = Command::new(root.join(".ci/install-tools"))
        .arg("prometheus")
        .stdout(Stdio::null())
        .status()
        .unwrap_or_else(|error| panic!("cannot run .ci/install-tools: {error}"));
    assert!(
        status.success(),
        "`.ci/install-tools prometheus` failed ({status}): it unpacks Debian's prometheus package into .tools/; the tests against a real Prometheus are never skipped"
    );
}

/// A certificate authority and a certificate of 127.0.0.1 and localhost
/// signed by it, PEM.
pub struct Certificates {
    pub ca: String,
    pub cert: String,
    pub key: String,
}

impl Certificates {
    /// New keys and certificates.
    pub fn generate() -> Self {
        let mut params = CertificateParams::new(Vec::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "hpa-lint test CA");
        let ca_key = KeyPair::generate().unwrap();
        let ca = params.self_signed(&ca_key).unwrap().pem();
        let issuer = Issuer::new(params, ca_key);
        let mut params =
            CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, "prometheus");
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &issuer).unwrap().pem();
        Self {
            ca,
            cert,
            key: key.serialize_pem(),
        }
    }
}

/// Basic auth of the TLS server: this user, this password (bcrypt cost 4,
/// made with Python's `crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16))`).
pub const USER: &str = "hpa-lint";
pub const PASSWORD: &str = "hpa-lint-test-password";
const PASSWORD_BCRYPT: &str = "$2b$04$N6JYcIpx4cooWmbNz5AdtuAwARR7Qlc35x4i9sYUqQ8qdFNKZJMlC";

/// A running Prometheus; stopped when dropped.
pub struct Prometheus {
    child: Child,
    pub url: String,
    pub dir: TempDir,
}

impl Prometheus {
    /// Plain HTTP, with the history loaded.
    pub fn start(history: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>) -> Self {
        Self::start_with(history, None)
    }

    /// HTTPS with basic auth (the certificates' CA, [`USER`], [`PASSWORD`]).
    pub fn start_tls(
        history: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
        certificates: &Certificates,
    ) -> Self {
        Self::start_with(history, Some(certificates))
    }

    fn start_with(
        history: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
        tls: Option<&Certificates>,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let openmetrics = dir.path().join("history.om");
        {
            let mut file = std::io::BufWriter::new(std::fs::File::create(&openmetrics).unwrap());
            history(&mut file).unwrap();
        }
        let output = Command::new(tool("promtool"))
            .args(["tsdb", "create-blocks-from", "openmetrics", "--quiet"])
            .arg(&openmetrics)
            .arg(&data)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "promtool: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        std::fs::remove_file(&openmetrics).unwrap();
        std::fs::write(dir.path().join("prometheus.yml"), "global: {}\n").unwrap();
        let mut web_config = None;
        if let Some(certificates) = tls {
            std::fs::write(dir.path().join("tls.crt"), &certificates.cert).unwrap();
            std::fs::write(dir.path().join("tls.key"), &certificates.key).unwrap();
            let path = dir.path().join("web.yml");
            std::fs::write(
                &path,
                format!(
                    "tls_server_config:\n  cert_file: {}\n  key_file: {}\nbasic_auth_users:\n  {USER}: {PASSWORD_BCRYPT}\n",
                    dir.path().join("tls.crt").display(),
                    dir.path().join("tls.key").display()
                ),
            )
            .unwrap();
            web_config = Some(path);
        }
        let scheme = if tls.is_some() { "https" } else { "http" };
        // A free port can be taken between the check and the start: try again then.
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let log = dir.path().join("prometheus.log");
            let mut command = Command::new(tool("prometheus"));
            command
                .arg(format!(
                    "--config.file={}",
                    dir.path().join("prometheus.yml").display()
                ))
                .arg(format!("--storage.tsdb.path={}", data.display()))
                .arg("--storage.tsdb.retention.time=100y")
                // Backfilled series have no staleness markers, which a live
                // Prometheus writes when a pod's series end: a lookback of
                // three scrapes (5 s apart) ends them as soon.
                .arg("--query.lookback-delta=15s")
                .arg(format!("--web.listen-address=127.0.0.1:{port}"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).unwrap());
            if let Some(path) = &web_config {
                command.arg(format!("--web.config.file={}", path.display()));
            }
            let mut child = command.spawn().unwrap();
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                if text.contains("Server is ready to receive web requests.") {
                    return Self {
                        child,
                        url: format!("{scheme}://127.0.0.1:{port}"),
                        dir,
                    };
                }
                let exited = child.try_wait().unwrap().is_some();
                if exited && text.contains("address already in use") {
                    break;
                }
                assert!(
                    !exited && Instant::now() < deadline,
                    "prometheus did not start:\n{text}"
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        panic!("no free port for prometheus");
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A server that answers each request with the next of `answers` (status,
/// extra headers, body) and records the requests it got.
pub fn scripted(answers: Vec<(u16, &'static str, String)>) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&requests);
    std::thread::spawn(move || {
        for (status, headers, body) in answers {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream);
            let mut request = String::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if let Some((name, value)) = line.split_once(':')
                    && name.eq_ignore_ascii_case("content-length")
                {
                    length = value.trim().parse().unwrap();
                }
                request += &line;
                if line == "\r\n" {
                    break;
                }
            }
            let mut form = vec![0; length];
            reader.read_exact(&mut form).unwrap();
            request += &String::from_utf8(form).unwrap();
            seen.lock().unwrap().push(request);
            let mut stream = reader.into_inner();
            write!(
                stream,
                "HTTP/1.1 {status} Whatever\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n{headers}\r\n{body}",
                body.len()
            )
            .unwrap();
        }
    });
    (url, requests)
}
