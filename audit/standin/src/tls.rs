//! The stand-in's certificates: a certificate authority made for one run,
//! the server certificate it signs (for 127.0.0.1, `localhost` and
//! `apiserver.test`, the name the test proxy resolves), and client
//! certificates it issues, which the stand-in then takes as credentials
//! (rustls client authentication, optional, as on a real API server).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
};
use rustls::RootCertStore;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::{ServerConfig, WebPkiClientVerifier};

/// The names every server certificate of an [`Authority`] holds.
pub const SERVER_NAMES: [&str; 3] = ["127.0.0.1", "localhost", "apiserver.test"];

/// A certificate authority made for one run.
pub struct Authority {
    issuer: Issuer<'static, KeyPair>,
    ca_pem: String,
    ca_der: CertificateDer<'static>,
    /// The client certificates issued (DER), and their users.
    users: Mutex<HashMap<Vec<u8>, String>>,
}

/// A certificate and its key, PEM.
pub struct Pair {
    pub cert: String,
    pub key: String,
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

impl Authority {
    /// A new authority (`kube-standin test CA`).
    pub fn new() -> Self {
        let mut params = CertificateParams::new(Vec::new()).expect("no names");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "kube-standin test CA");
        let key = KeyPair::generate().expect("a key pair");
        let cert = params.self_signed(&key).expect("a CA certificate");
        Self {
            ca_pem: cert.pem(),
            ca_der: cert.der().clone(),
            issuer: Issuer::new(params, key),
            users: Mutex::new(HashMap::new()),
        }
    }

    /// The CA certificate, PEM: a kubeconfig's `certificate-authority-data`
    /// once in base64.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// A client certificate for `user` (its common name).
    pub fn client_certificate(&self, user: &str) -> Pair {
        let mut params = CertificateParams::new(Vec::new()).expect("no names");
        params.distinguished_name.push(DnType::CommonName, user);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let key = KeyPair::generate().expect("a key pair");
        let cert = params.signed_by(&key, &self.issuer).expect("a certificate");
        self.users
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(cert.der().to_vec(), user.to_owned());
        Pair {
            cert: cert.pem(),
            key: key.serialize_pem(),
        }
    }

    /// The user of a client certificate this authority issued.
    pub fn user_of(&self, der: &[u8]) -> Option<String> {
        self.users
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(der)
            .cloned()
    }

    /// A TLS configuration for a server with a certificate of this
    /// authority for [`SERVER_NAMES`], which asks for a client certificate
    /// of this authority and also serves clients without one.
    pub fn server_config(&self) -> Arc<ServerConfig> {
        let mut params =
            CertificateParams::new(SERVER_NAMES.map(str::to_owned).to_vec()).expect("valid names");
        params
            .distinguished_name
            .push(DnType::CommonName, "kube-standin");
        let key = KeyPair::generate().expect("a key pair");
        let cert = params.signed_by(&key, &self.issuer).expect("a certificate");
        let mut roots = RootCertStore::empty();
        roots.add(self.ca_der.clone()).expect("the CA certificate");
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
            .allow_unauthenticated()
            .build()
            .expect("a client verifier");
        let config = ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_client_cert_verifier(verifier)
            .with_single_cert(
                vec![cert.der().clone()],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
            )
            .expect("a certificate and its key");
        Arc::new(config)
    }
}

impl Default for Authority {
    fn default() -> Self {
        Self::new()
    }
}
