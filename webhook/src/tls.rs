//! The serving certificate: read from the mounted Secret's files, turned into
//! a rustls configuration (ring provider, TLS 1.2 and 1.3, the only versions
//! rustls speaks), and its expiry time for the metrics.

use std::path::PathBuf;

use anyhow::Context;
use axum_server::tls_rustls::RustlsConfig;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

/// The certificate and key files.
#[derive(Clone, Debug)]
pub struct TlsFiles {
    /// PEM certificate chain, server certificate first.
    pub cert: PathBuf,
    /// PEM private key.
    pub key: PathBuf,
}

impl TlsFiles {
    /// Both paths, certificate first.
    pub fn paths(&self) -> Vec<PathBuf> {
        vec![self.cert.clone(), self.key.clone()]
    }
}

/// A configuration from PEM contents; fails when either does not parse or
/// the key does not belong to the certificate.
pub async fn config(cert: &[u8], key: &[u8]) -> anyhow::Result<RustlsConfig> {
    RustlsConfig::from_pem(cert.to_vec(), key.to_vec())
        .await
        .context("loading the TLS certificate and key")
}

/// When the first certificate in a PEM chain expires, in seconds since the
/// epoch.
pub fn expiry(cert: &[u8]) -> Option<i64> {
    let der = CertificateDer::pem_slice_iter(cert).next()?.ok()?;
    let (_, parsed) = x509_parser::parse_x509_certificate(&der).ok()?;
    Some(parsed.validity().not_after.timestamp())
}
