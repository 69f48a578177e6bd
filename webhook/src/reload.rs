//! Mounted files re-read by polling: Kubernetes updates Secret and ConfigMap
//! volumes by swapping a `..data` symlink, which file-event watchers miss or
//! see twice (rust-stack.md P6). Comparing contents catches each change once.
//! A new version that does not load is logged and the old one stays.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum_server::tls_rustls::RustlsConfig;

use crate::cache::Kind;
use crate::metrics::Metrics;
use crate::policy::{Policy, SharedPolicy};
use crate::tls;

/// Files whose contents are compared between polls.
pub struct Watched {
    paths: Vec<PathBuf>,
    last: u64,
}

fn digest(contents: &[Vec<u8>]) -> u64 {
    let mut hasher = DefaultHasher::new();
    contents.hash(&mut hasher);
    hasher.finish()
}

impl Watched {
    /// Reads the files once; later calls to [`Watched::changed`] compare with
    /// these contents.
    pub async fn read(paths: Vec<PathBuf>) -> std::io::Result<(Self, Vec<Vec<u8>>)> {
        let contents = read_all(&paths).await?;
        let last = digest(&contents);
        Ok((Self { paths, last }, contents))
    }

    /// The contents, when they differ from what the previous call saw.
    pub async fn changed(&mut self) -> std::io::Result<Option<Vec<Vec<u8>>>> {
        let contents = read_all(&self.paths).await?;
        let digest = digest(&contents);
        if digest == self.last {
            return Ok(None);
        }
        self.last = digest;
        Ok(Some(contents))
    }
}

async fn read_all(paths: &[PathBuf]) -> std::io::Result<Vec<Vec<u8>>> {
    let mut contents = Vec::with_capacity(paths.len());
    for path in paths {
        contents.push(tokio::fs::read(path).await?);
    }
    Ok(contents)
}

/// Polls the certificate and key; a new pair is swapped in for new
/// connections (open ones keep theirs). Runs until the process ends.
pub async fn certificate(
    mut watched: Watched,
    config: RustlsConfig,
    metrics: Arc<Metrics>,
    interval: Duration,
) {
    loop {
        tokio::time::sleep(interval).await;
        let (cert, key) = match watched
            .changed()
            .await
            .map(|c| c.map(<[Vec<u8>; 2]>::try_from))
        {
            Ok(Some(Ok([cert, key]))) => (cert, key),
            Ok(_) => continue,
            Err(error) => {
                tracing::error!(%error, "reading the TLS certificate; keeping the current one");
                continue;
            }
        };
        match config.reload_from_pem(cert.clone(), key).await {
            Ok(()) => {
                if let Some(expiry) = tls::expiry(&cert) {
                    metrics.certificate_expires_at(expiry);
                }
                tracing::info!("TLS certificate reloaded");
            }
            Err(error) => {
                tracing::error!(%error, "new TLS certificate does not load; keeping the current one");
            }
        }
    }
}

/// Polls the configuration file; a new version that resolves replaces the
/// policy for the requests that start after it. Runs until the process ends.
pub async fn policy(mut watched: Watched, shared: SharedPolicy, interval: Duration) {
    loop {
        tokio::time::sleep(interval).await;
        let text = match watched.changed().await {
            Ok(Some(contents)) => String::from_utf8_lossy(&contents.concat()).into_owned(),
            Ok(None) => continue,
            Err(error) => {
                tracing::error!(%error, "reading the configuration; keeping the current one");
                continue;
            }
        };
        match Policy::parse(&text) {
            Ok(policy) => {
                let current = shared.current();
                if policy.watch_namespaces != current.watch_namespaces {
                    tracing::warn!(
                        "webhook.watchNamespaces changed: the caches keep watching the old namespaces until a restart"
                    );
                }
                if Kind::needed(&policy, true) != Kind::needed(&current, true) {
                    tracing::warn!(
                        "the rules now enabled read other kinds: the caches keep watching the old ones until a restart"
                    );
                }
                shared.replace(policy);
                tracing::info!("configuration reloaded");
            }
            Err(error) => {
                tracing::error!(%error, "new configuration is invalid; keeping the current one");
            }
        }
    }
}
