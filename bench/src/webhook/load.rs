//! A small HTTPS load generator: keep-alive HTTP/1.1 connections over rustls
//! (verifying the benchmark's CA), driven either at a fixed concurrency
//! (closed loop: as fast as the server answers) or at a fixed rate (open
//! loop: latency counts from when a request was due, so a slow server is not
//! hidden by sending less).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::sync::Semaphore;
use tokio_rustls::TlsConnector;

/// Where requests go.
#[derive(Clone)]
pub struct Target {
    pub address: SocketAddr,
    tls: TlsConnector,
}

impl Target {
    /// A target whose certificate is issued by `ca_pem` for `localhost`.
    pub fn new(address: SocketAddr, ca_pem: &str) -> Result<Self, String> {
        let mut roots = rustls::RootCertStore::empty();
        let ca = CertificateDer::from_pem_slice(ca_pem.as_bytes()).map_err(|e| e.to_string())?;
        roots.add(ca).map_err(|e| e.to_string())?;
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
        Ok(Self {
            address,
            tls: TlsConnector::from(Arc::new(config)),
        })
    }

    /// One keep-alive connection.
    pub async fn connect(&self) -> Result<Connection, String> {
        let tcp = tokio::net::TcpStream::connect(self.address)
            .await
            .map_err(|e| e.to_string())?;
        tcp.set_nodelay(true).map_err(|e| e.to_string())?;
        let server = ServerName::try_from("localhost").map_err(|e| e.to_string())?;
        let tls = self
            .tls
            .connect(server, tcp)
            .await
            .map_err(|e| e.to_string())?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(connection);
        Ok(Connection(sender))
    }
}

/// One connection.
pub struct Connection(SendRequest<Full<Bytes>>);

impl Connection {
    /// Sends a request; the status and body.
    pub async fn send(
        &mut self,
        method: &str,
        path: &str,
        body: Bytes,
    ) -> Result<(u16, Bytes), String> {
        let request = hyper::Request::builder()
            .method(method)
            .uri(path)
            .header("host", "localhost")
            .header("content-type", "application/json")
            .body(Full::new(body))
            .map_err(|e| e.to_string())?;
        let response = self
            .0
            .send_request(request)
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?;
        Ok((status, body.to_bytes()))
    }
}

/// What a run measured.
#[derive(Default)]
pub struct Sample {
    /// Latency of each answered request, in microseconds.
    latencies: Vec<u32>,
    /// Requests that failed or were not answered `200` with an AdmissionReview.
    pub errors: usize,
    /// How long the run took.
    pub elapsed: Duration,
}

impl Sample {
    /// Answered requests per second.
    pub fn throughput(&self) -> f64 {
        self.latencies.len() as f64 / self.elapsed.as_secs_f64()
    }

    /// The latency at quantile `q` (0..1), in milliseconds.
    pub fn quantile_ms(&mut self, q: f64) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        self.latencies.sort_unstable();
        let i = ((self.latencies.len() - 1) as f64 * q).round() as usize;
        f64::from(self.latencies[i]) / 1000.0
    }

    fn record(&mut self, result: Result<(u16, Bytes), String>, latency: Duration) {
        match result {
            Ok((200, body)) if body.starts_with(b"{\"apiVersion\":\"admission.k8s.io/v1\"") => {
                self.latencies
                    .push(u32::try_from(latency.as_micros()).unwrap_or(u32::MAX));
            }
            _ => self.errors += 1,
        }
    }

    fn merge(&mut self, other: Sample) {
        self.latencies.extend(other.latencies);
        self.errors += other.errors;
    }
}

/// `connections` connections, each sending the next request as soon as the
/// previous one is answered, for `duration`.
pub async fn closed_loop(
    target: &Target,
    path: &'static str,
    body: Bytes,
    connections: usize,
    duration: Duration,
) -> Result<Sample, String> {
    let mut tasks = Vec::new();
    let start = Instant::now();
    for _ in 0..connections {
        let mut connection = target.connect().await?;
        let body = body.clone();
        tasks.push(tokio::spawn(async move {
            let mut sample = Sample::default();
            while start.elapsed() < duration {
                let sent = Instant::now();
                let result = connection.send("POST", path, body.clone()).await;
                sample.record(result, sent.elapsed());
            }
            sample
        }));
    }
    let mut total = Sample::default();
    for task in tasks {
        total.merge(task.await.map_err(|e| e.to_string())?);
    }
    total.elapsed = start.elapsed();
    Ok(total)
}

/// `rate` requests per second for `duration`, each on an idle connection of a
/// pool of `connections`; latency counts from when the request was due.
pub async fn open_loop(
    target: &Target,
    path: &'static str,
    body: Bytes,
    rate: u32,
    connections: usize,
    duration: Duration,
) -> Result<Sample, String> {
    let mut pool = Vec::new();
    for _ in 0..connections {
        pool.push(target.connect().await?);
    }
    let pool = Arc::new(Mutex::new(pool));
    let idle = Arc::new(Semaphore::new(connections));
    let sample = Arc::new(Mutex::new(Sample::default()));
    let interval = Duration::from_secs(1) / rate;
    let count =
        u32::try_from((duration.as_secs_f64() * f64::from(rate)) as u64).unwrap_or(u32::MAX);
    // The schedule comes from a thread of its own: tokio's timer has a
    // resolution of 1 ms, which would show up as latency.
    let (due_tx, mut due_rx) = tokio::sync::mpsc::unbounded_channel::<Instant>();
    let start = Instant::now();
    let ticker = std::thread::spawn(move || {
        for i in 0..count {
            let due = start + interval * i;
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
            if due_tx.send(due).is_err() {
                break;
            }
        }
    });
    let mut tasks = Vec::new();
    while let Some(due) = due_rx.recv().await {
        let (pool, idle, sample, body) = (pool.clone(), idle.clone(), sample.clone(), body.clone());
        tasks.push(tokio::spawn(async move {
            let Ok(_permit) = idle.acquire().await else {
                return;
            };
            let taken = pool.lock().map(|mut p| p.pop()).ok().flatten();
            let Some(mut connection) = taken else {
                return;
            };
            let result = connection.send("POST", path, body).await;
            let latency = due.elapsed();
            if let Ok(mut pool) = pool.lock() {
                pool.push(connection);
            }
            if let Ok(mut sample) = sample.lock() {
                sample.record(result, latency);
            }
        }));
    }
    ticker
        .join()
        .map_err(|_| "the schedule thread panicked".to_owned())?;
    for task in tasks {
        task.await.map_err(|e| e.to_string())?;
    }
    let elapsed = start.elapsed();
    let mut sample = std::mem::take(&mut *sample.lock().map_err(|e| e.to_string())?);
    sample.elapsed = elapsed;
    Ok(sample)
}
