//! `--self-signed DIR`: a certificate authority and a serving certificate
//! made on the spot, for running the webhook on a laptop. `DIR` keeps
//! `ca.crt` (what a client trusts), `tls.crt` and `tls.key` (0600); they are
//! used again while a client trusting `ca.crt` accepts `tls.crt` for every
//! host asked for, with a day of validity left. The CA's key is never
//! written: nothing else can be signed with it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::RootCertStore;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::ServerCertVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};

use crate::tls::TlsFiles;

/// The hosts every certificate is for: this machine.
pub const LOCAL_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// How long a new certificate is valid.
const VALIDITY: Duration = Duration::from_secs(365 * 24 * 3600);

/// The validity a certificate must have left to be used again.
const LEFT_AT_LEAST: Duration = Duration::from_secs(24 * 3600);

/// The files in `DIR`.
#[derive(Debug)]
pub struct SelfSigned {
    /// What a client trusts.
    pub ca: PathBuf,
    pub files: TlsFiles,
    /// Whether they were made now (else found and used again).
    pub made: bool,
}

/// The certificate in `dir` for `LOCAL_HOSTS` and `hosts`: the one there
/// when it is still good, else a new one (and `dir` is made if needed).
pub fn ensure(dir: &Path, hosts: &[String]) -> Result<SelfSigned> {
    let hosts: Vec<String> = LOCAL_HOSTS
        .iter()
        .map(|h| (*h).to_owned())
        .chain(hosts.iter().cloned())
        .collect();
    for host in &hosts {
        if ServerName::try_from(host.as_str()).is_err() {
            anyhow::bail!("--self-signed-host `{host}` is not a DNS name or an IP address");
        }
    }
    let ca = dir.join("ca.crt");
    let files = TlsFiles {
        cert: dir.join("tls.crt"),
        key: dir.join("tls.key"),
    };
    let made = match usable(&ca, &files, &hosts) {
        Ok(()) => false,
        Err(why) => {
            let reason = format!("{why:#}");
            tracing::info!(dir = %dir.display(), %reason, "making a self-signed certificate");
            make(dir, &ca, &files, &hosts)?;
            true
        }
    };
    Ok(SelfSigned { ca, files, made })
}

/// Why the files cannot be used again, if they cannot: a client trusting
/// only `ca` must accept the certificate for each host a day from now, and
/// the key must be the certificate's.
fn usable(ca: &Path, files: &TlsFiles, hosts: &[String]) -> Result<()> {
    let read = |path: &Path| std::fs::read(path).with_context(|| path.display().to_string());
    let (ca, cert, key) = (read(ca)?, read(&files.cert)?, read(&files.key)?);
    let mut roots = RootCertStore::empty();
    for der in CertificateDer::pem_slice_iter(&ca) {
        roots.add(der.context("ca.crt")?).context("ca.crt")?;
    }
    let verifier = WebPkiServerVerifier::builder(Arc::new(roots))
        .build()
        .context("ca.crt")?;
    let chain = CertificateDer::pem_slice_iter(&cert)
        .collect::<Result<Vec<_>, _>>()
        .context("tls.crt")?;
    let (leaf, intermediates) = chain
        .split_first()
        .context("tls.crt holds no certificate")?;
    let later = UnixTime::since_unix_epoch(
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            + LEFT_AT_LEAST,
    );
    for host in hosts {
        let name = ServerName::try_from(host.as_str())?;
        verifier
            .verify_server_cert(leaf, intermediates, &name, &[], later)
            .with_context(|| format!("tls.crt for {host} in a day"))?;
    }
    // Fails when the key is not the certificate's.
    rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(
            chain,
            rustls::pki_types::PrivateKeyDer::from_pem_slice(&key).context("tls.key")?,
        )
        .context("tls.key")?;
    Ok(())
}

/// Makes a CA and a certificate it signs for `hosts`, and writes them.
fn make(dir: &Path, ca_path: &Path, files: &TlsFiles, hosts: &[String]) -> Result<()> {
    let now = SystemTime::now();
    // A minute back, for clocks a little behind this one.
    let not_before = (now - Duration::from_secs(60)).into();
    let not_after = (now + VALIDITY).into();

    let mut ca = CertificateParams::new(Vec::new())?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    ca.distinguished_name
        .push(DnType::CommonName, "hpa-webhook self-signed CA");
    (ca.not_before, ca.not_after) = (not_before, not_after);
    let ca_key = KeyPair::generate()?;
    let ca_pem = ca.self_signed(&ca_key)?.pem();
    let issuer = Issuer::new(ca, ca_key);

    let mut server = CertificateParams::new(hosts.to_vec())?;
    server
        .distinguished_name
        .push(DnType::CommonName, "hpa-webhook");
    server.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    (server.not_before, server.not_after) = (not_before, not_after);
    let key = KeyPair::generate()?;
    let cert = server.signed_by(&key, &issuer)?;

    create_dir(dir)?;
    write(&files.key, key.serialize_pem().as_bytes(), 0o600)?;
    write(&files.cert, cert.pem().as_bytes(), 0o644)?;
    write(ca_path, ca_pem.as_bytes(), 0o644)
}

fn create_dir(dir: &Path) -> Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .with_context(|| format!("creating {}", dir.display()))
}

/// Writes `path` whole or not at all: a temporary file (created 0600) in the
/// same directory, given `mode`, renamed over it.
fn write(path: &Path, contents: &[u8], mode: u32) -> Result<()> {
    let writing = || format!("writing {}", path.display());
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir).with_context(writing)?;
    file.write_all(contents).with_context(writing)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))
            .with_context(writing)?;
    }
    #[cfg(not(unix))]
    let _ = mode;
    file.as_file().sync_all().with_context(writing)?;
    file.persist(path).with_context(writing)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_once_then_used_again_until_asked_for_another_host() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("certs");
        assert!(ensure(&dir, &[]).unwrap().made);
        let cert = std::fs::read(dir.join("tls.crt")).unwrap();
        assert!(!ensure(&dir, &[]).unwrap().made);
        assert_eq!(std::fs::read(dir.join("tls.crt")).unwrap(), cert);
        // Every local name and address is covered, and one more when asked.
        let hosts = ["kind.internal".to_owned()];
        let all: Vec<String> = LOCAL_HOSTS
            .iter()
            .map(|h| (*h).to_owned())
            .chain(hosts.iter().cloned())
            .collect();
        let files = |dir: &Path| TlsFiles {
            cert: dir.join("tls.crt"),
            key: dir.join("tls.key"),
        };
        assert!(usable(&dir.join("ca.crt"), &files(&dir), &all).is_err());
        assert!(ensure(&dir, &hosts).unwrap().made);
        usable(&dir.join("ca.crt"), &files(&dir), &all).unwrap();
    }

    #[test]
    fn a_key_of_another_certificate_or_a_broken_file_is_replaced() {
        let temp = tempfile::tempdir().unwrap();
        let (one, two) = (temp.path().join("one"), temp.path().join("two"));
        ensure(&one, &[]).unwrap();
        ensure(&two, &[]).unwrap();
        std::fs::copy(two.join("tls.key"), one.join("tls.key")).unwrap();
        assert!(ensure(&one, &[]).unwrap().made);
        std::fs::write(two.join("ca.crt"), "not a certificate").unwrap();
        assert!(ensure(&two, &[]).unwrap().made);
        assert!(!ensure(&two, &[]).unwrap().made);
    }

    #[test]
    fn a_host_that_is_no_name_is_an_error() {
        let temp = tempfile::tempdir().unwrap();
        let error = ensure(temp.path(), &["not a name".to_owned()]).unwrap_err();
        assert!(
            format!("{error:#}")
                .contains("--self-signed-host `not a name` is not a DNS name or an IP address"),
            "{error:#}"
        );
    }
}
