//! The kubeconfig, chosen and read as kubectl chooses and reads it, with its
//! credentials made ready ([`credentials`]) and errors that never show a
//! secret: kube-rs's YAML errors quote the lines around the error (`token:
//! …`), its proxy errors the proxy URL with its password.

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};
use kube::Config;
use kube::config::{KubeConfigOptions, Kubeconfig, KubeconfigError, LoadDataError};
use serde_saphyr::Error as YamlError;

use crate::args::Args;
use crate::credentials;

/// The cluster and user chosen, credentials ready for kube.
pub struct Chosen {
    pub config: Config,
    /// The kubeconfig context, or `in-cluster`.
    pub context: String,
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
/// `--cluster` and `--user` pick from the kubeconfig.
pub async fn choose(args: &Args) -> Result<Chosen> {
    let options = KubeConfigOptions {
        context: args.context.clone(),
        cluster: args.cluster.clone(),
        user: args.user.clone(),
    };
    let paths = match &args.kubeconfig {
        Some(path) => vec![path.clone()],
        None => kubeconfig_paths(),
    };
    let (mut config, context, user) = if paths.is_empty() {
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
        let context = options
            .context
            .clone()
            .or_else(|| kubeconfig.current_context.clone())
            .unwrap_or_default();
        let user = options
            .user
            .clone()
            .or_else(|| {
                let named = kubeconfig.contexts.iter().find(|c| c.name == context)?;
                named.context.as_ref()?.user.clone()
            })
            .unwrap_or_default();
        let config = Config::from_custom_kubeconfig(kubeconfig, &options)
            .await
            .map_err(|e| anyhow!("loading the kubeconfig context: {}", describe(&e)))?;
        (config, context, user)
    };
    if let Some(proxy) = &config.proxy_url {
        bail!(
            "a proxy is configured ({}, from the cluster's proxy-url or $HTTPS_PROXY): kubectl hpa-lint cannot use one yet",
            redacted(proxy)
        );
    }
    credentials::resolve(&mut config.auth_info, &user)?;
    Ok(Chosen { config, context })
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
