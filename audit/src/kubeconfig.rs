//! The kubeconfig, chosen and read as kubectl (client-go's `clientcmd`)
//! chooses and reads it: the cluster, the user's credentials made ready
//! ([`credentials`]) and used only over TLS, and the proxy to the server
//! ([`hpa_lint::proxy`]); with errors that never show a secret (kube-rs's
//! YAML errors quote the lines around the error, `token: …`).
//!
//! kube's own loader is not used for the kubeconfig: it takes `$HTTPS_PROXY`
//! for every server, applies `$NO_PROXY` to the proxy's URL, and fails on a
//! `NO_PROXY` kubectl reads (a trailing comma).

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use hpa_lint::proxy::{self, Environment, ProxyUrl};
use kube::Config;
use kube::config::{AuthInfo, ExecAuthCluster, Kubeconfig, KubeconfigError, LoadDataError};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject as _;
use serde_saphyr::Error as YamlError;

use crate::args::Args;
use crate::credentials;

/// The cluster and user chosen, credentials ready for kube.
pub struct Chosen {
    pub config: Config,
    /// The kubeconfig context, or `in-cluster`.
    pub context: String,
    /// The proxy to the server, when kubectl would take one.
    pub proxy: Option<ProxyUrl>,
}

/// The kubeconfig files kubectl reads: those of `$KUBECONFIG` that exist
/// (several, merged), else `~/.kube/config` when it exists; none means in a
/// pod.
fn kubeconfig_paths() -> Vec<PathBuf> {
    if let Some(value) = std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty()) {
        return std::env::split_paths(&value)
            .filter(|path| !path.as_os_str().is_empty() && path.exists())
            .collect();
    }
    std::env::var_os("HOME")
        .map(|home| Path::new(&home).join(".kube/config"))
        .filter(|path| path.is_file())
        .into_iter()
        .collect()
}

/// Chooses as kubectl does: `--kubeconfig`, else `$KUBECONFIG` or
/// `~/.kube/config`, else the pod's service account; `--context`,
/// `--cluster` and `--user` pick from the kubeconfig. The user's
/// credentials are read (a token file, an exec plugin run) only for an
/// `https://` server: client-go sends none over plain HTTP.
pub async fn choose(args: &Args) -> Result<Chosen> {
    let paths = match &args.kubeconfig {
        Some(path) => vec![path.clone()],
        None => kubeconfig_paths(),
    };
    let (mut config, context, user, proxy_url) = if paths.is_empty() {
        let config = Config::incluster().map_err(|e| {
            if std::env::var_os("KUBERNETES_SERVICE_HOST").is_none() {
                anyhow!(
                    "no cluster: no kubeconfig ($KUBECONFIG is not set or names no file, and ~/.kube/config does not exist) and not in a pod ($KUBERNETES_SERVICE_HOST is not set); give one with --kubeconfig FILE"
                )
            } else {
                // Its message only: kube repeats it in its causes.
                anyhow!("no kubeconfig, and the pod's service account cannot be used: {e}")
            }
        })?;
        (
            config,
            "in-cluster".to_owned(),
            "the pod's service account".to_owned(),
            None,
        )
    } else {
        let mut kubeconfig = Kubeconfig::default();
        for path in &paths {
            let read = Kubeconfig::read_from(path)
                .map_err(|e| anyhow!("reading kubeconfig {}: {}", path.display(), describe(&e)))?;
            kubeconfig = kubeconfig
                .merge(read)
                .map_err(|e| anyhow!("{}", describe(&e)))?;
        }
        select(&kubeconfig, args).map_err(|e| anyhow!("loading the kubeconfig context: {e}"))?
    };
    let url = &config.cluster_url;
    let host = url.host().unwrap_or_default();
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .map_or_else(|| host.to_owned(), |h| h.replace("%25", "%"));
    let server = proxy::Server {
        scheme: url.scheme_str().unwrap_or_default(),
        host: &host,
        port: url.port_u16(),
    };
    let proxy = proxy::for_cluster(&server, proxy_url.as_deref(), &Environment::from_env())?;
    if config.cluster_url.scheme_str() == Some("https") {
        credentials::resolve(&mut config.auth_info, &user)?;
    } else {
        // client-go's `DirectClientConfig.ClientConfig`: "only try to read
        // the auth information if we are secure". Impersonation stays.
        let auth = std::mem::take(&mut config.auth_info);
        config.auth_info = AuthInfo {
            impersonate: auth.impersonate,
            impersonate_uid: auth.impersonate_uid,
            impersonate_groups: auth.impersonate_groups,
            impersonate_user_extra: auth.impersonate_user_extra,
            ..AuthInfo::default()
        };
    }
    Ok(Chosen {
        config,
        context,
        proxy,
    })
}

/// The context, cluster and user `args` pick from `kubeconfig`, as a kube
/// `Config`, with the context's and the user's names and the cluster's
/// `proxy-url`. The server's identification (CA, `tls-server-name`,
/// `insecure-skip-tls-verify`) is read for an `https://` server only, as
/// client-go reads it.
fn select(
    kubeconfig: &Kubeconfig,
    args: &Args,
) -> Result<(Config, String, String, Option<String>)> {
    let context_name = args
        .context
        .clone()
        .or_else(|| kubeconfig.current_context.clone())
        .filter(|name| !name.is_empty())
        .ok_or_else(|| {
            anyhow!("the kubeconfig has no current-context: choose one with --context")
        })?;
    let context = kubeconfig
        .contexts
        .iter()
        .find(|named| named.name == context_name)
        .and_then(|named| named.context.clone())
        .ok_or_else(|| anyhow!("context `{context_name}` does not exist"))?;
    let cluster_name = args.cluster.as_ref().unwrap_or(&context.cluster);
    let cluster = kubeconfig
        .clusters
        .iter()
        .find(|named| &named.name == cluster_name)
        .and_then(|named| named.cluster.clone())
        .ok_or_else(|| anyhow!("cluster `{cluster_name}` does not exist"))?;
    // client-go takes a user that is not there as one without credentials.
    let user = args.user.clone().or(context.user).unwrap_or_default();
    let mut auth = kubeconfig
        .auth_infos
        .iter()
        .find(|named| named.name == user)
        .and_then(|named| named.auth_info.clone())
        .unwrap_or_default();
    let server = cluster
        .server
        .as_deref()
        .filter(|server| !server.is_empty())
        .ok_or_else(|| anyhow!("the cluster has no server"))?;
    let mut config = Config::new(server_url(server)?);
    config.default_namespace = context.namespace.unwrap_or_else(|| "default".to_owned());
    config.disable_compression = cluster.disable_compression.unwrap_or(false);
    if config.cluster_url.scheme_str() == Some("https") {
        config.accept_invalid_certs = cluster.insecure_skip_tls_verify.unwrap_or(false);
        config.tls_server_name.clone_from(&cluster.tls_server_name);
        // The CA, read from `certificate-authority(-data)`, as an exec
        // plugin is also told it.
        let identification =
            ExecAuthCluster::try_from(&cluster).map_err(|e| anyhow!("{}", describe(&e)))?;
        if let Some(pem) = &identification.certificate_authority_data {
            config.root_cert = Some(certificates(pem)?);
        }
        if let Some(exec) = auth.exec.as_mut().filter(|exec| exec.provide_cluster_info) {
            exec.cluster = Some(identification);
        }
    }
    config.auth_info = auth;
    Ok((config, context_name, user, cluster.proxy_url.clone()))
}

/// The server's URL as client-go reads it: one without a scheme
/// (`10.0.0.1:6443`) is `http://` (its `DefaultServerURL` before any TLS
/// is configured). Never quoted: it may hold a user and password.
fn server_url(server: &str) -> Result<http::Uri> {
    let not_a_url = || anyhow!("the cluster's server is not a URL");
    match server.parse::<http::Uri>() {
        Ok(uri) if uri.scheme().is_some() && uri.host().is_some() => Ok(uri),
        _ => format!("http://{server}").parse().map_err(|_| not_a_url()),
    }
}

/// The certificates (DER) of a PEM bundle.
fn certificates(pem: &[u8]) -> Result<Vec<Vec<u8>>> {
    let certificates = CertificateDer::pem_slice_iter(pem)
        .map(|certificate| certificate.map(|der| der.to_vec()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| anyhow!("the cluster's certificate authority is not PEM"))?;
    if certificates.is_empty() {
        return Err(anyhow!(
            "the cluster's certificate authority holds no PEM certificate"
        ));
    }
    Ok(certificates)
}

/// A kube kubeconfig error, without what it would quote of the file.
pub fn describe(error: &KubeconfigError) -> String {
    match error {
        KubeconfigError::CurrentContextNotSet => {
            "the kubeconfig has no current-context: choose one with --context".to_owned()
        }
        KubeconfigError::LoadContext(name) => format!("context `{name}` does not exist"),
        KubeconfigError::LoadClusterOfContext(name) => format!("cluster `{name}` does not exist"),
        KubeconfigError::MissingClusterUrl => "the cluster has no server".to_owned(),
        KubeconfigError::Parse(error) => format!("not valid YAML: {}", yaml_error(error)),
        KubeconfigError::LoadClientKey(LoadDataError::DecodeBase64(_)) => {
            "the user's client-key-data is not base64".to_owned()
        }
        KubeconfigError::LoadCertificateAuthority(LoadDataError::DecodeBase64(_)) => {
            "the cluster's certificate-authority-data is not base64".to_owned()
        }
        other => other.to_string(),
    }
}

/// A YAML error's position and kind, without the text around it or the
/// value it found, either of which may be a secret.
pub fn yaml_error(error: &YamlError) -> String {
    let error = error.without_snippet();
    let what = match error {
        YamlError::AliasError { error, .. } => return yaml_error(error),
        YamlError::SerdeInvalidType { expected, .. } => format!("expected {expected}"),
        YamlError::SerdeInvalidValue { expected, .. } => {
            format!("invalid value, expected {expected}")
        }
        YamlError::SerdeInvalidLength { len, expected, .. } => {
            format!("{len} elements, expected {expected}")
        }
        YamlError::SerdeUnknownVariant { expected, .. } => {
            format!("unknown value, expected one of {}", expected.join(", "))
        }
        YamlError::SerdeMissingField { field, .. } => format!("missing field `{field}`"),
        YamlError::Unexpected { expected, .. } => format!("expected {expected}"),
        YamlError::DuplicateMappingKey { .. } => "duplicate key".to_owned(),
        YamlError::Eof { .. } => "unexpected end".to_owned(),
        YamlError::MultipleDocuments { .. } => "more than one document".to_owned(),
        YamlError::NullIntoString { .. } => "expected a string, found null".to_owned(),
        // The parser's own messages are fixed texts ("did not find expected key").
        YamlError::ExternalMessage { msg, .. } => msg.clone(),
        _ => "not readable".to_owned(),
    };
    match error.location().filter(|at| at.line() > 0) {
        Some(at) => format!("line {}, column {}: {what}", at.line(), at.column()),
        None => what,
    }
}

/// A URL without its user information (`user:password@`), path or query.
pub fn redacted(uri: &http::Uri) -> String {
    let authority = uri.authority().map_or("", |a| a.as_str());
    let (userinfo, host) = match authority.rsplit_once('@') {
        Some((_, host)) => ("…@", host),
        None => ("", authority),
    };
    format!("{}://{userinfo}{host}", uri.scheme_str().unwrap_or("?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_errors_give_the_place_not_the_text() {
        let text =
            "users:\n- name: u\n  user:\n    token: SECRET-token\n    password: [SECRET-password\n";
        let error = Kubeconfig::from_yaml(text).unwrap_err();
        let message = describe(&error);
        assert!(message.starts_with("not valid YAML: line "), "{message}");
        assert!(!message.contains("SECRET"), "{message}");
        // A value of the wrong type is named by its place only.
        let error = Kubeconfig::from_yaml("users: SECRET-token\n").unwrap_err();
        assert_eq!(
            describe(&error),
            "not valid YAML: line 1, column 8: expected sequence start"
        );
    }

    #[test]
    fn urls_lose_their_password() {
        let uri: http::Uri = "http://admin:SECRET@proxy.corp:3128/path?q=SECRET"
            .parse()
            .unwrap();
        assert_eq!(redacted(&uri), "http://…@proxy.corp:3128");
        let plain: http::Uri = "socks5://10.0.0.1:1080".parse().unwrap();
        assert_eq!(redacted(&plain), "socks5://10.0.0.1:1080");
    }
}
