//! Serving a router: over TLS, or plain HTTP for local development, until a
//! graceful shutdown. The benchmark serves its floor with the same function.

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum_server::Handle;
use axum_server::tls_rustls::RustlsConfig;

/// How long in-flight requests may take to finish after SIGTERM: the API
/// server's default webhook timeout.
pub const GRACE: Duration = Duration::from_secs(10);

/// How a server talks.
pub enum Transport {
    /// HTTPS with this (reloadable) configuration.
    Tls(RustlsConfig),
    /// Plain HTTP.
    Plain,
}

/// Serves `router` on `listen` until `handle` shuts it down.
pub async fn serve(
    router: Router,
    listen: SocketAddr,
    transport: Transport,
    handle: Handle<SocketAddr>,
) -> std::io::Result<()> {
    let service = router.into_make_service();
    match transport {
        Transport::Tls(config) => {
            axum_server::bind_rustls(listen, config)
                .handle(handle)
                .serve(service)
                .await
        }
        Transport::Plain => {
            axum_server::bind(listen)
                .handle(handle)
                .serve(service)
                .await
        }
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
