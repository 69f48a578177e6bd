//! Shared by the end-to-end tests: certificates made at test time, the
//! `hpa-webhook` binary as a child process, and an HTTPS client that
//! verifies the test CA.

#![allow(dead_code)] // Each test file uses a different part.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// How long a test waits for what must happen soon (a log line, a
/// connection refused, a report written): long enough for a loaded CI
/// machine; a test that passes waits only as long as it takes.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// A certificate authority made for one test.
pub struct Ca {
    issuer: Issuer<'static, KeyPair>,
    /// The CA certificate, PEM.
    pub pem: String,
}

/// A server certificate and its key, PEM.
pub struct ServerCert {
    pub cert: String,
    pub key: String,
}

impl ServerCert {
    /// The certificate's DER bytes, to compare with what a server presents.
    pub fn der(&self) -> Vec<u8> {
        CertificateDer::from_pem_slice(self.cert.as_bytes())
            .unwrap()
            .to_vec()
    }

    /// Writes the pair as `tls.crt` and `tls.key` into `dir`.
    pub fn write(&self, dir: &Path) {
        std::fs::write(dir.join("tls.crt"), &self.cert).unwrap();
        std::fs::write(dir.join("tls.key"), &self.key).unwrap();
    }
}

impl Ca {
    pub fn new() -> Self {
        let mut params = CertificateParams::new(Vec::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "hpa-lint test CA");
        let key = KeyPair::generate().unwrap();
        let pem = params.self_signed(&key).unwrap().pem();
        Self {
            issuer: Issuer::new(params, key),
            pem,
        }
    }

    /// A certificate for `localhost` and 127.0.0.1, named `name`.
    pub fn server_cert(&self, name: &str) -> ServerCert {
        let mut params =
            CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        ServerCert {
            cert: cert.pem(),
            key: key.serialize_pem(),
        }
    }
}

/// The `hpa-webhook` binary, running; killed when dropped.
pub struct Webhook {
    child: Child,
    pub address: SocketAddr,
    logs: Arc<Mutex<Vec<Value>>>,
}

impl Webhook {
    /// Starts the binary on a free port of 127.0.0.1 with JSON logs and
    /// `args`, and waits until it listens.
    pub fn start(args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_hpa-webhook"))
            .args(["--listen", "127.0.0.1:0", "--log-format", "json"])
            .args(args)
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let logs = Arc::new(Mutex::new(Vec::new()));
        let (found, address) = std::sync::mpsc::channel();
        let lines = Arc::clone(&logs);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let Ok(entry) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if entry["message"] == "listening" {
                    let _ = found.send(entry["address"].as_str().unwrap().to_owned());
                }
                lines.lock().unwrap().push(entry);
            }
        });
        let address = address
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("hpa-webhook did not start: {:?}", child.try_wait()))
            .parse()
            .unwrap();
        Self {
            child,
            address,
            logs,
        }
    }

    /// The log lines so far.
    pub fn logs(&self) -> Vec<Value> {
        self.logs.lock().unwrap().clone()
    }

    /// Waits until a log line has this message.
    pub fn wait_for_log(&self, message: &str, timeout: Duration) -> Value {
        self.wait_for_line(|l| l["message"] == message, timeout)
    }

    /// Waits until a log line matches.
    pub fn wait_for_line(&self, matches: impl Fn(&Value) -> bool, timeout: Duration) -> Value {
        let start = Instant::now();
        loop {
            if let Some(line) = self.logs().into_iter().find(&matches) {
                return line;
            }
            assert!(
                start.elapsed() < timeout,
                "no such log line in {:#?}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends SIGTERM.
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits for the process to exit; its exit code.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(start.elapsed() < timeout, "hpa-webhook did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Webhook {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One keep-alive HTTPS connection that verifies the server against a CA.
pub struct Client {
    sender: SendRequest<Full<Bytes>>,
    /// The certificate the server presented.
    pub peer_certificate: Vec<u8>,
}

/// What came back.
pub struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

fn client_config(ca_pem: &str) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(ca_pem.as_bytes()).unwrap())
        .unwrap();
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    Arc::new(config)
}

/// A TLS connection, verifying the server's certificate for `localhost`.
pub async fn connect_tls(address: SocketAddr, ca_pem: &str) -> std::io::Result<TlsStream> {
    connect_tls_to(address, ca_pem, "localhost").await
}

/// A TLS connection, verifying the server's certificate for `name` (a DNS
/// name or an IP address).
pub async fn connect_tls_to(
    address: SocketAddr,
    ca_pem: &str,
    name: &str,
) -> std::io::Result<TlsStream> {
    let tcp = TcpStream::connect(address).await?;
    TlsConnector::from(client_config(ca_pem))
        .connect(ServerName::try_from(name.to_owned()).unwrap(), tcp)
        .await
}

/// A client's TLS connection.
pub type TlsStream = tokio_rustls::client::TlsStream<TcpStream>;

impl Client {
    /// Connects, verifying the server's certificate for `localhost`.
    pub async fn connect(address: SocketAddr, ca_pem: &str) -> std::io::Result<Self> {
        Self::connect_to(address, ca_pem, "localhost").await
    }

    /// Connects, verifying the server's certificate for `name`.
    pub async fn connect_to(
        address: SocketAddr,
        ca_pem: &str,
        name: &str,
    ) -> std::io::Result<Self> {
        let tls = connect_tls_to(address, ca_pem, name).await?;
        let peer_certificate = tls.get_ref().1.peer_certificates().unwrap()[0].to_vec();
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .map_err(std::io::Error::other)?;
        tokio::spawn(connection);
        Ok(Self {
            sender,
            peer_certificate,
        })
    }

    /// Connects over plain HTTP (the metrics port).
    pub async fn connect_plain(address: SocketAddr) -> std::io::Result<Self> {
        let tcp = TcpStream::connect(address).await?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
            .await
            .map_err(std::io::Error::other)?;
        tokio::spawn(connection);
        Ok(Self {
            sender,
            peer_certificate: Vec::new(),
        })
    }

    pub async fn request(
        &mut self,
        method: &str,
        path: &str,
        body: impl Into<Bytes>,
    ) -> Result<Reply, hyper::Error> {
        let request = hyper::Request::builder()
            .method(method)
            .uri(path)
            .header("host", "localhost")
            .header("content-type", "application/json")
            .body(Full::new(body.into()))
            .unwrap();
        let response = self.sender.send_request(request).await?;
        let status = response.status().as_u16();
        let body = response.into_body().collect().await?.to_bytes().to_vec();
        Ok(Reply { status, body })
    }

    pub async fn post(&mut self, path: &str, body: impl Into<Bytes>) -> Reply {
        self.request("POST", path, body).await.unwrap()
    }

    pub async fn get(&mut self, path: &str) -> Reply {
        self.request("GET", path, Bytes::new()).await.unwrap()
    }
}

/// A fixture from tests/fixtures.
pub fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The JSON Patch of an admission response, base64-decoded.
pub fn decoded_patch(response: &Value) -> json_patch::Patch {
    use base64::Engine;
    let encoded = response["patch"]
        .as_str()
        .unwrap_or_else(|| panic!("patch is not a base64 string: {response}"));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}
