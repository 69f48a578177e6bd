//! Serving a router: over TLS, or plain HTTP for local development, until a
//! graceful shutdown. The benchmark serves its floor with the same function.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use axum_server::Handle;
use axum_server::tls_rustls::RustlsConfig;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use hyper_util::server::conn::auto::Builder;

use crate::deadline::FirstBytesAcceptor;

/// How long in-flight requests may take to finish after SIGTERM (and the
/// drain delay): the API server's default webhook timeout.
pub const GRACE: Duration = Duration::from_secs(10);

/// How long a client may take to send a request's headers, by default.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How a server talks.
pub enum Transport {
    /// HTTPS with this (reloadable) configuration.
    Tls(RustlsConfig),
    /// Plain HTTP.
    Plain,
}

/// Serves `router` on `listen` until `handle` shuts it down. A client that
/// has not sent its first bytes within `header_read_timeout` of connecting,
/// or (HTTP/1) a request's headers within that time from the end of the
/// previous request, is disconnected.
pub async fn serve(
    router: Router,
    listen: SocketAddr,
    transport: Transport,
    handle: Handle<SocketAddr>,
    header_read_timeout: Duration,
) -> std::io::Result<()> {
    let service = router.into_make_service();
    match transport {
        Transport::Tls(config) => {
            let mut server = axum_server::bind_rustls(listen, config)
                .handle(handle)
                .map(|tls| FirstBytesAcceptor::new(tls, header_read_timeout));
            limit(server.http_builder(), header_read_timeout);
            server.serve(service).await
        }
        Transport::Plain => {
            let mut server = axum_server::bind(listen)
                .handle(handle)
                .map(|plain| FirstBytesAcceptor::new(plain, header_read_timeout));
            limit(server.http_builder(), header_read_timeout);
            server.serve(service).await
        }
    }
}

/// hyper has a header-read timeout but applies it only with a timer, which
/// axum-server does not set: without one, a client trickling header bytes
/// holds its connection for good.
fn limit(builder: &mut Builder<TokioExecutor>, header_read_timeout: Duration) {
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout);
}

/// The first phase of shutdown: after SIGTERM, the Service's endpoints still
/// list this pod for a few seconds (until the API server and every kube-proxy
/// have seen it go), so requests keep coming. Serves them for `delay` with
/// `/readyz` failing (`draining`); a second signal ends the wait.
pub async fn drain(delay: Duration, draining: &AtomicBool) {
    draining.store(true, Ordering::Relaxed);
    if delay.is_zero() {
        return;
    }
    tracing::info!(
        delay_seconds = delay.as_secs(),
        "shutting down: serving new requests for the drain delay"
    );
    tokio::select! {
        () = tokio::time::sleep(delay) => {}
        () = shutdown_signal() => tracing::info!("second signal: drain delay cut short"),
    }
}

/// Resolves on SIGTERM or Ctrl-C.
pub async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = ctrl_c => {}
            }
        }
        Err(error) => {
            tracing::error!(%error, "cannot listen for SIGTERM; stopping on Ctrl-C only");
            let _ = ctrl_c.await;
        }
    }
}
