//! A proxy to reach the stand-in by, as a corporate one would be: HTTP
//! `CONNECT` tunnels, requests in absolute form (`GET http://host/path`)
//! forwarded one per connection, and SOCKS5; over TLS too (a certificate
//! of a stand-in's [`Authority`]); with a user and password required when
//! asked (`Proxy-Authorization: Basic …`, SOCKS5's user/password method).
//! It resolves made-up names ([`Proxy::resolve`], e.g. `apiserver.test`)
//! to addresses, so that a test can reach a loopback stand-in through it
//! under a name no resolver knows, and it records what it was asked.
//!
//! For tests only.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

use crate::tls::Authority;

/// A proxy, before it starts.
#[derive(Default)]
pub struct Proxy {
    names: HashMap<String, IpAddr>,
    password: Option<(String, String)>,
    tls: Option<TlsAcceptor>,
}

/// A proxy, listening.
pub struct RunningProxy {
    /// Where it listens (127.0.0.1).
    pub address: SocketAddr,
    log: Arc<Mutex<Vec<String>>>,
}

impl RunningProxy {
    /// What it was asked, in order: `CONNECT host:port`,
    /// `GET http://host:port/path`, `SOCKS5 host:port`, each followed by
    /// ` refused` when the credentials were missing or wrong.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

struct Shared {
    names: HashMap<String, IpAddr>,
    password: Option<(String, String)>,
    log: Arc<Mutex<Vec<String>>>,
}

impl Proxy {
    pub fn new() -> Self {
        Self::default()
    }

    /// Connections to `name` go to `ip` (the port as asked).
    pub fn resolve(mut self, name: &str, ip: IpAddr) -> Self {
        self.names.insert(name.to_owned(), ip);
        self
    }

    /// Requires this user and password of every client.
    pub fn require_password(mut self, user: &str, password: &str) -> Self {
        self.password = Some((user.to_owned(), password.to_owned()));
        self
    }

    /// Speaks TLS, with a certificate of `authority` (for 127.0.0.1).
    pub fn tls(mut self, authority: &Authority) -> Self {
        self.tls = Some(TlsAcceptor::from(authority.server_config()));
        self
    }

    /// Serves on a free port of 127.0.0.1 until the runtime ends.
    pub async fn start(self) -> std::io::Result<RunningProxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let log = Arc::new(Mutex::new(Vec::new()));
        let shared = Arc::new(Shared {
            names: self.names,
            password: self.password,
            log: Arc::clone(&log),
        });
        let tls = self.tls;
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let (shared, tls) = (Arc::clone(&shared), tls.clone());
                tokio::spawn(async move {
                    match tls {
                        Some(acceptor) => {
                            if let Ok(stream) = acceptor.accept(stream).await {
                                shared.http(stream).await;
                            }
                        }
                        None => {
                            let mut first = [0];
                            if stream.peek(&mut first).await.is_ok_and(|n| n == 1) && first[0] == 5
                            {
                                shared.socks5(stream).await;
                            } else {
                                shared.http(stream).await;
                            }
                        }
                    }
                });
            }
        });
        Ok(RunningProxy { address, log })
    }
}

impl Shared {
    fn record(&self, entry: String) {
        self.log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(entry);
    }

    /// Where `host:port` is, `None` for a name it does not know.
    fn address(&self, host: &str, port: u16) -> Option<SocketAddr> {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let ip = self
            .names
            .get(host)
            .copied()
            .or_else(|| host.parse().ok())?;
        Some(SocketAddr::new(ip, port))
    }

    async fn connect(&self, host: &str, port: u16) -> Option<TcpStream> {
        TcpStream::connect(self.address(host, port)?).await.ok()
    }

    /// One HTTP request: `CONNECT`, or a request in absolute form.
    async fn http<S: AsyncRead + AsyncWrite + Unpin>(&self, mut client: S) {
        let Some((head, rest)) = read_head(&mut client).await else {
            return;
        };
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut request = httparse::Request::new(&mut headers);
        if !matches!(request.parse(&head), Ok(httparse::Status::Complete(_))) {
            return;
        }
        let (Some(method), Some(target)) = (request.method, request.path) else {
            return;
        };
        let asked = format!("{method} {target}");
        let authorization = request
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case("proxy-authorization"))
            .map(|h| h.value.to_vec());
        if let Some((user, password)) = &self.password {
            let expected = format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
            );
            if authorization.as_deref() != Some(expected.as_bytes()) {
                self.record(format!("{asked} refused"));
                let _ = client
                    .write_all(b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"standin\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    .await;
                return;
            }
        }
        self.record(asked);
        if method == "CONNECT" {
            let upstream = match target.rsplit_once(':') {
                Some((host, port)) => match port.parse() {
                    Ok(port) => self.connect(host, port).await,
                    Err(_) => None,
                },
                None => None,
            };
            let Some(mut upstream) = upstream else {
                let _ = client
                    .write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                    .await;
                return;
            };
            if client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await
                .is_ok()
            {
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            }
            return;
        }
        // `http://host[:port]/path`: the request goes on in origin form,
        // without the proxy's headers, and the connection ends with it.
        let Some(rest_of_url) = target.strip_prefix("http://") else {
            let _ = client
                .write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                .await;
            return;
        };
        let (authority, path) = rest_of_url
            .find('/')
            .map_or((rest_of_url, "/"), |slash| rest_of_url.split_at(slash));
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if port.parse::<u16>().is_ok() => (host, port.parse().unwrap_or(80)),
            _ => (authority, 80),
        };
        let Some(mut upstream) = self.connect(host, port).await else {
            let _ = client
                .write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                .await;
            return;
        };
        let mut forwarded = format!("{method} {path} HTTP/1.1\r\n");
        for header in request.headers.iter() {
            let name = header.name.to_ascii_lowercase();
            if !matches!(
                name.as_str(),
                "proxy-authorization" | "proxy-connection" | "connection"
            ) {
                forwarded.push_str(&format!(
                    "{}: {}\r\n",
                    header.name,
                    String::from_utf8_lossy(header.value)
                ));
            }
        }
        forwarded.push_str("Connection: close\r\n\r\n");
        if upstream.write_all(forwarded.as_bytes()).await.is_ok()
            && upstream.write_all(&rest).await.is_ok()
        {
            let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
        }
    }

    /// One SOCKS5 `CONNECT` (RFC 1928), with the user/password method
    /// (RFC 1929) when a password is required.
    async fn socks5(&self, mut client: TcpStream) {
        let _ = self.socks5_handshake(&mut client).await;
    }

    async fn socks5_handshake(&self, client: &mut TcpStream) -> std::io::Result<()> {
        let mut greeting = [0; 2];
        client.read_exact(&mut greeting).await?;
        let mut methods = vec![0; usize::from(greeting[1])];
        client.read_exact(&mut methods).await?;
        let method = if self.password.is_some() { 2 } else { 0 };
        if !methods.contains(&method) {
            return client.write_all(&[5, 0xff]).await;
        }
        client.write_all(&[5, method]).await?;
        let mut refused = false;
        if let Some((user, password)) = &self.password {
            let mut version_and_length = [0; 2];
            client.read_exact(&mut version_and_length).await?;
            let mut given_user = vec![0; usize::from(version_and_length[1])];
            client.read_exact(&mut given_user).await?;
            let mut length = [0];
            client.read_exact(&mut length).await?;
            let mut given_password = vec![0; usize::from(length[0])];
            client.read_exact(&mut given_password).await?;
            refused = given_user != user.as_bytes() || given_password != password.as_bytes();
            // Recorded before the client is told, as the HTTP proxy does: a
            // client that gives up at once must find the refusal logged.
            if refused {
                self.record("SOCKS5 refused".to_owned());
            }
            client.write_all(&[1, u8::from(refused)]).await?;
        }
        if refused {
            return Ok(());
        }
        let mut request = [0; 4];
        client.read_exact(&mut request).await?;
        let host = match request[3] {
            1 => {
                let mut ip = [0; 4];
                client.read_exact(&mut ip).await?;
                IpAddr::from(ip).to_string()
            }
            4 => {
                let mut ip = [0; 16];
                client.read_exact(&mut ip).await?;
                IpAddr::from(ip).to_string()
            }
            _ => {
                let mut length = [0];
                client.read_exact(&mut length).await?;
                let mut name = vec![0; usize::from(length[0])];
                client.read_exact(&mut name).await?;
                String::from_utf8_lossy(&name).into_owned()
            }
        };
        let mut port = [0; 2];
        client.read_exact(&mut port).await?;
        let port = u16::from_be_bytes(port);
        self.record(format!("SOCKS5 {host}:{port}"));
        let Some(mut upstream) = self.connect(&host, port).await else {
            return client.write_all(&[5, 4, 0, 1, 0, 0, 0, 0, 0, 0]).await;
        };
        client.write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0]).await?;
        tokio::io::copy_bidirectional(client, &mut upstream).await?;
        Ok(())
    }
}

/// A request's head (to its blank line, at most 64 KiB), and what came
/// after it.
async fn read_head<S: AsyncRead + Unpin>(stream: &mut S) -> Option<(Vec<u8>, Vec<u8>)> {
    let mut buffer = Vec::new();
    let mut chunk = [0; 4096];
    loop {
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buffer.split_off(end + 4);
            return Some((buffer, rest));
        }
        if buffer.len() > 64 << 10 {
            return None;
        }
    }
}
