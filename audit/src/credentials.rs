//! The user's credentials, made ready as kubectl (client-go) makes them,
//! before kube sees them: kube gets a plain token, a client certificate, or
//! a user name and password, never a command to run.
//!
//! kube-rs would panic on a token an HTTP header cannot carry, send a token
//! file's trailing line break, run an exec plugin three times while building
//! its client, and print the plugin's environment and standard output (which
//! holds the token) when it fails. Here, as in client-go:
//!
//! - a readable `tokenFile` wins over `token`, trimmed of surrounding
//!   white space; an empty one is an error;
//! - `exec` runs once, its standard error passed through to the user (the
//!   plugin speaks to them there), its standard output read as an
//!   `ExecCredential` of the `apiVersion` configured; the credential serves
//!   the whole run, which lasts seconds;
//! - the `oidc` auth-provider's `id-token` is a token; `gcp` and `azure`
//!   are refused with kubectl's message;
//! - a token with a control character (a line break, …) is an error, as it
//!   is for kubectl (`invalid header field value for "Authorization"`).
//!
//! No message quotes a token, a password, an exec plugin's arguments,
//! environment or standard output.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Result, anyhow, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use http::HeaderValue;
use kube::config::{AuthInfo, AuthProviderConfig, ExecConfig, ExecInteractiveMode};
use secrecy::{ExposeSecret as _, SecretString};
use serde::Deserialize;
use serde_json::json;

use crate::kubeconfig::yaml_error;

/// Resolves the credentials of `user` (its name, for messages) in place.
pub fn resolve(auth: &mut AuthInfo, user: &str) -> Result<()> {
    if let Some(path) = auth.token_file.take() {
        let read = std::fs::read_to_string(&path);
        match read.as_deref().map(str::trim) {
            Ok(token) if !token.is_empty() => auth.token = Some(SecretString::from(token)),
            // client-go keeps the inline token when the file gives none.
            _ if auth.token.is_some() => {}
            Ok(_) => bail!("the token file {path} of user `{user}` is empty"),
            Err(error) => bail!("cannot read the token file {path} of user `{user}`: {error}"),
        }
    }
    if let Some(token) = &auth.token {
        check_token(
            token.expose_secret(),
            &format!("the token of user `{user}`"),
        )?;
        // A token is used alone: kube would otherwise also run the provider.
        auth.exec = None;
        auth.auth_provider = None;
        return Ok(());
    }
    if let Some(exec) = auth.exec.take() {
        let credential = run(&exec, user)?;
        if let Some(token) = credential.token {
            auth.token = Some(SecretString::from(token));
        }
        if let (Some(certificate), Some(key)) = (credential.certificate, credential.key) {
            auth.client_certificate_data = Some(STANDARD.encode(certificate));
            auth.client_key_data = Some(SecretString::from(STANDARD.encode(key)));
        }
        auth.auth_provider = None;
        return Ok(());
    }
    if let Some(provider) = auth.auth_provider.take() {
        let token = provider_token(&provider, user)?;
        auth.token = Some(SecretString::from(token));
    }
    Ok(())
}

/// A token goes into an `Authorization` header: control characters other
/// than a tab cannot (Go's `net/http` and Rust's `http` agree).
fn check_token(token: &str, whose: &str) -> Result<()> {
    if HeaderValue::from_str(token).is_err() {
        bail!(
            "{whose} holds a line break or another control character, which an HTTP header cannot carry (kubectl fails on it too)"
        );
    }
    Ok(())
}

fn provider_token(provider: &AuthProviderConfig, user: &str) -> Result<String> {
    match provider.name.as_str() {
        "oidc" => {
            let token = provider.config.get("id-token").ok_or_else(|| {
                anyhow!("the oidc auth-provider of user `{user}` has no id-token")
            })?;
            check_token(token, &format!("the oidc id-token of user `{user}`"))?;
            Ok(token.clone())
        }
        // kubectl's words since 1.26.
        "gcp" => bail!(
            "the gcp auth plugin has been removed (user `{user}`): use the \"gke-gcloud-auth-plugin\" kubectl/client-go credential plugin instead"
        ),
        "azure" => bail!(
            "the azure auth plugin has been removed (user `{user}`): use the https://github.com/Azure/kubelogin kubectl/client-go credential plugin instead"
        ),
        name => bail!("no auth-provider named `{name}` (user `{user}`)"),
    }
}

/// What an exec plugin wrote on standard output.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecCredential {
    api_version: Option<String>,
    kind: Option<String>,
    status: Option<ExecStatus>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecStatus {
    token: Option<String>,
    client_certificate_data: Option<String>,
    client_key_data: Option<String>,
}

/// What an exec plugin gave.
#[derive(Debug, PartialEq)]
struct Credential {
    token: Option<String>,
    /// Client certificate and key, PEM.
    certificate: Option<String>,
    key: Option<String>,
}

/// Runs the exec plugin of `user` once, as client-go does.
fn run(exec: &ExecConfig, user: &str) -> Result<Credential> {
    let command: PathBuf = Path::new(
        exec.command
            .as_deref()
            .ok_or_else(|| anyhow!("the exec plugin of user `{user}` names no command"))?,
    )
    // kube made `./plugin` absolute as `/dir/./plugin`.
    .components()
    .collect();
    let plugin = format!("the exec plugin `{}` of user `{user}`", command.display());
    let api_version = exec
        .api_version
        .as_deref()
        .ok_or_else(|| anyhow!("{plugin} has no apiVersion"))?;
    let terminal = std::io::stdin().is_terminal();
    let interactive = match exec.interactive_mode {
        Some(ExecInteractiveMode::Never) => false,
        Some(ExecInteractiveMode::Always) if !terminal => bail!(
            "{plugin} needs a terminal (interactiveMode: Always) and standard input is not one"
        ),
        _ => terminal,
    };
    let mut spec = json!({"interactive": interactive});
    if exec.provide_cluster_info {
        spec["cluster"] = serde_json::to_value(&exec.cluster)?;
    }
    let info = json!({"apiVersion": api_version, "kind": "ExecCredential", "spec": spec});
    let mut child = Command::new(&command);
    child.args(exec.args.iter().flatten());
    for variable in exec.env.iter().flatten() {
        if let (Some(name), Some(value)) = (variable.get("name"), variable.get("value")) {
            child.env(name, value);
        }
    }
    for name in exec.drop_env.iter().flatten() {
        child.env_remove(name);
    }
    let output = child
        .env("KUBERNETES_EXEC_INFO", info.to_string())
        .stdin(if interactive {
            Stdio::inherit()
        } else {
            Stdio::null()
        })
        .stderr(Stdio::inherit())
        .output();
    let hint = exec
        .install_hint
        .as_deref()
        .map(|hint| format!("\n{}", hint.trim_end()))
        .unwrap_or_default();
    let output = output.map_err(|error| anyhow!("cannot run {plugin}: {error}{hint}"))?;
    if !output.status.success() {
        let how = match output.status.code() {
            Some(code) => format!("with exit code {code}"),
            None => format!("({})", output.status),
        };
        bail!("{plugin} failed {how}");
    }
    credential(&output.stdout, api_version).map_err(|error| anyhow!("{plugin}: {error}"))
}

/// Reads a plugin's standard output as client-go does, JSON or YAML.
fn credential(stdout: &[u8], api_version: &str) -> Result<Credential> {
    let text = std::str::from_utf8(stdout)
        .map_err(|_| anyhow!("its standard output is not UTF-8 text"))?;
    if text.trim().is_empty() {
        bail!("it wrote nothing on standard output");
    }
    let credential: ExecCredential = serde_saphyr::from_str(text).map_err(|error| {
        anyhow!(
            "its standard output is not an ExecCredential ({})",
            yaml_error(&error)
        )
    })?;
    let answered = credential.api_version.as_deref().unwrap_or("none");
    if answered != api_version {
        bail!("it is configured to use API version {api_version}, and returned version {answered}");
    }
    if credential.kind.as_deref() != Some("ExecCredential") {
        bail!("it returned no ExecCredential");
    }
    let status = credential
        .status
        .ok_or_else(|| anyhow!("it returned no status"))?;
    let nonempty = |value: Option<String>| value.filter(|v| !v.is_empty());
    let token = nonempty(status.token);
    let certificate = nonempty(status.client_certificate_data);
    let key = nonempty(status.client_key_data);
    match (&token, &certificate, &key) {
        (None, None, None) => bail!("it returned neither a token nor a client certificate and key"),
        (_, Some(_), None) | (_, None, Some(_)) => {
            bail!("it returned a client certificate or key without the other")
        }
        _ => {}
    }
    if let Some(token) = &token {
        check_token(token, "the token it returned")?;
    }
    Ok(Credential {
        token,
        certificate,
        key,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1: &str = "client.authentication.k8s.io/v1";

    #[test]
    fn reads_json_and_yaml_credentials_of_the_configured_version() {
        let json = r#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"abc"}}"#;
        assert_eq!(
            credential(json.as_bytes(), V1).unwrap().token.as_deref(),
            Some("abc")
        );
        let yaml = b"apiVersion: client.authentication.k8s.io/v1\nkind: ExecCredential\nstatus:\n  clientCertificateData: CERT\n  clientKeyData: KEY\n";
        let pair = credential(yaml, V1).unwrap();
        assert_eq!(
            (pair.certificate.as_deref(), pair.key.as_deref()),
            (Some("CERT"), Some("KEY"))
        );
        let beta = json.replace("/v1", "/v1beta1");
        assert_eq!(
            credential(beta.as_bytes(), V1).unwrap_err().to_string(),
            "it is configured to use API version client.authentication.k8s.io/v1, and returned version client.authentication.k8s.io/v1beta1"
        );
    }

    #[test]
    fn refuses_what_client_go_refuses_without_quoting_it() {
        let cases: [(&[u8], &str); 6] = [
            (b"\n", "it wrote nothing on standard output"),
            (
                br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential"}"#,
                "it returned no status",
            ),
            (
                br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":""}}"#,
                "it returned neither a token nor a client certificate and key",
            ),
            (
                br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"clientKeyData":"SECRET"}}"#,
                "it returned a client certificate or key without the other",
            ),
            (
                br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"SECRET\nline"}}"#,
                "the token it returned holds a line break or another control character, which an HTTP header cannot carry (kubectl fails on it too)",
            ),
            (
                b"status: {token: [SECRET",
                "its standard output is not an ExecCredential (line 1, column ",
            ),
        ];
        for (stdout, message) in cases {
            let error = credential(stdout, V1).unwrap_err().to_string();
            assert!(error.starts_with(message), "{error}");
            assert!(!error.contains("SECRET"), "{error}");
        }
    }

    #[test]
    fn a_readable_token_file_wins_trimmed_as_kubectl_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, "  from-file\n\n").unwrap();
        let path = file.to_string_lossy().into_owned();
        let mut auth = AuthInfo {
            token: Some(SecretString::from("inline")),
            token_file: Some(path.clone()),
            ..AuthInfo::default()
        };
        resolve(&mut auth, "u").unwrap();
        assert_eq!(auth.token.unwrap().expose_secret(), "from-file");
        // Unreadable: the inline token stands; without one, an error.
        std::fs::remove_file(&file).unwrap();
        let mut auth = AuthInfo {
            token: Some(SecretString::from("inline")),
            token_file: Some(path.clone()),
            ..AuthInfo::default()
        };
        resolve(&mut auth, "u").unwrap();
        assert_eq!(auth.token.unwrap().expose_secret(), "inline");
        std::fs::write(&file, "\n").unwrap();
        let mut auth = AuthInfo {
            token_file: Some(path.clone()),
            ..AuthInfo::default()
        };
        assert_eq!(
            resolve(&mut auth, "u").unwrap_err().to_string(),
            format!("the token file {path} of user `u` is empty")
        );
    }
}
