//! The kubeconfig's credentials through the real binary: resolved as kubectl
//! resolves them (a token file trimmed, an exec plugin run once, a token an
//! HTTP header cannot carry refused without a panic), sent over TLS only,
//! and never printed. Every secret below is marked `SECRET`; no output of
//! any run holds it.

mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Output;

use common::{Stage, audit_command, run, shop, stderr};
use kube_standin::{Running, base64};

/// The token the stand-in requires.
const TOKEN: &str = "SECRET-token-accepted";

/// How the user `auditor` authenticates, and what else a case needs.
struct Case {
    name: &'static str,
    /// The YAML of `users[0].user`, indented by four spaces.
    user: String,
    /// More keys of `clusters[0].cluster`, in flow style, each after `, `.
    cluster: &'static str,
    /// `plugin.sh` in the kubeconfig's directory, when set.
    plugin: Option<String>,
    /// `token` in the kubeconfig's directory, when set.
    token_file: Option<String>,
    /// Environment of the run.
    env: Vec<(&'static str, &'static str)>,
}

impl Case {
    fn new(name: &'static str, user: &str) -> Self {
        Self {
            name,
            user: user.to_owned(),
            cluster: "",
            plugin: None,
            token_file: None,
            env: Vec::new(),
        }
    }

    /// An exec plugin (`plugin.sh`, writing `stdout` with `exit` status),
    /// with secrets in its arguments and environment.
    fn exec(name: &'static str, script: &str) -> Self {
        let mut case = Self::new(
            name,
            "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: ./plugin.sh\n      args: [--password, SECRET-argument]\n      env: [{name: PLUGIN_PASSWORD, value: SECRET-environment}]\n      interactiveMode: Never\n      installHint: install it from https://example.com/plugin\n",
        );
        case.plugin = Some(script.to_owned());
        case
    }

    /// Writes the case's files for the stand-in, and runs the audit with
    /// `args`.
    fn run(&self, dir: &Path, standin: &Running, args: &[&str]) -> Output {
        self.run_at(dir, &standin.cluster_keys(&standin.url()), args)
    }

    /// Writes the case's files for a cluster with these keys (flow style),
    /// and runs the audit with `args`.
    fn run_at(&self, dir: &Path, cluster: &str, args: &[&str]) -> Output {
        let kubeconfig = format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: shop-prod\nclusters:\n- name: standin\n  cluster: {{{cluster}{}}}\ncontexts:\n- name: shop-prod\n  context: {{cluster: standin, user: auditor, namespace: shop}}\nusers:\n- name: auditor\n  user:\n{}",
            self.cluster, self.user
        );
        std::fs::write(dir.join("kubeconfig"), kubeconfig).unwrap();
        if let Some(script) = &self.plugin {
            let path = dir.join("plugin.sh");
            std::fs::write(&path, format!("#!/bin/sh\n{script}")).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        if let Some(token) = &self.token_file {
            std::fs::write(dir.join("token"), token).unwrap();
        }
        let mut command = audit_command(dir, args);
        command.envs(self.env.iter().copied());
        run(command)
    }
}

/// `{"apiVersion": …, "kind": "ExecCredential", "status": STATUS}` on
/// standard output, as a plugin writes it.
fn credential(status: &str) -> String {
    format!(
        "printf '%s' '{{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{status}}}'\n"
    )
}

fn leak(text: &str) -> bool {
    text.contains("SECRET")
}

/// Ways a kubeconfig fails, each with its first line of standard error
/// (after `kubectl hpa-lint: `) when it says something a test guards.
fn failures() -> Vec<(Case, Option<&'static str>)> {
    let mut proxied = Case::new(
        "proxy-url with a password",
        &format!("    token: {TOKEN}\n"),
    );
    // Nothing listens on port 1: the proxy cannot be reached.
    proxied.cluster = ", proxy-url: \"http://admin:SECRET-proxy@127.0.0.1:1\"";
    let mut unparsable_proxy = Case::new(
        "proxy-url that is not a URL",
        &format!("    token: {TOKEN}\n"),
    );
    unparsable_proxy.cluster = ", proxy-url: \"http://admin:SECRET-proxy@127.0.0.1:3128 x\"";
    let mut control_in_file = Case::new("token file with a bell", "    tokenFile: token\n");
    control_in_file.token_file = Some("SECRET-token\x07file\n".to_owned());
    vec![
        (
            Case::new(
                "YAML error next to the token",
                "    token: SECRET-token\n    password: [SECRET-password\n",
            ),
            Some(
                "reading kubeconfig KUBECONFIG: not valid YAML: line 14, column 15: expected string scalar",
            ),
        ),
        (
            Case::new("a secret where a mapping belongs", "    SECRET-token\n"),
            None,
        ),
        (
            Case::new(
                "the token twice",
                "    token: SECRET-token\n    token: SECRET-token2\n",
            ),
            Some("reading kubeconfig KUBECONFIG: not valid YAML: line 14, column 5: duplicate key"),
        ),
        (
            Case::new(
                "token with a line break",
                "    token: \"SECRET-token\\nline\"\n",
            ),
            Some(
                "the token of user `auditor` holds a line break or another control character, which an HTTP header cannot carry (kubectl fails on it too)",
            ),
        ),
        (
            Case::new("token with a NUL", "    token: \"SECRET-token\\0\"\n"),
            None,
        ),
        (control_in_file, None),
        (
            Case::new(
                "oidc id-token with a line break",
                "    auth-provider:\n      name: oidc\n      config: {id-token: \"SECRET-id\\ntoken\", refresh-token: SECRET-refresh}\n",
            ),
            None,
        ),
        (
            Case::new(
                "the removed gcp auth-provider",
                "    auth-provider:\n      name: gcp\n      config: {access-token: SECRET-access, cmd-path: /bin/echo, cmd-args: SECRET-argument}\n",
            ),
            Some(
                "the gcp auth plugin has been removed (user `auditor`): use the \"gke-gcloud-auth-plugin\" kubectl/client-go credential plugin instead",
            ),
        ),
        (
            Case::exec(
                "exec plugin that fails",
                &format!(
                    "{}echo 'plugin says: please log in' >&2\nexit 3\n",
                    credential("{\"token\":\"SECRET-stdout\"}")
                ),
            ),
            Some("the exec plugin `DIR/plugin.sh` of user `auditor` failed with exit code 3"),
        ),
        (
            Case::exec(
                "exec plugin killed",
                &format!(
                    "{}kill -9 $$\n",
                    credential("{\"token\":\"SECRET-stdout\"}")
                ),
            ),
            Some("the exec plugin `DIR/plugin.sh` of user `auditor` failed (signal: 9 (SIGKILL))"),
        ),
        (
            Case::exec(
                "exec plugin that writes garbage",
                "echo 'token: [SECRET-garbage'\n",
            ),
            Some(
                "the exec plugin `DIR/plugin.sh` of user `auditor`: its standard output is not an ExecCredential (line 1, column 8: ",
            ),
        ),
        (
            Case::exec(
                "exec plugin of another version",
                &credential("{\"token\":\"SECRET-stdout\"}").replace("/v1", "/v1beta1"),
            ),
            Some(
                "the exec plugin `DIR/plugin.sh` of user `auditor`: it is configured to use API version client.authentication.k8s.io/v1, and returned version client.authentication.k8s.io/v1beta1",
            ),
        ),
        (
            Case::exec(
                "exec plugin token with a line break",
                &credential("{\"token\":\"SECRET-stdout\\nline\"}"),
            ),
            Some(
                "the exec plugin `DIR/plugin.sh` of user `auditor`: the token it returned holds a line break or another control character, which an HTTP header cannot carry (kubectl fails on it too)",
            ),
        ),
        (
            Case::exec(
                "exec plugin key without certificate",
                &credential("{\"clientKeyData\":\"SECRET-key\"}"),
            ),
            None,
        ),
        (
            Case::exec(
                "exec plugin certificate and key that are not PEM",
                &credential(
                    "{\"clientCertificateData\":\"SECRET-certificate\",\"clientKeyData\":\"SECRET-key\"}",
                ),
            ),
            None,
        ),
        (
            Case::new(
                "exec plugin that is not there",
                "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: ./missing-plugin\n      args: [SECRET-argument]\n      env: [{name: PLUGIN_PASSWORD, value: SECRET-environment}]\n      interactiveMode: Never\n      installHint: install it from https://example.com/plugin\n",
            ),
            Some(
                "cannot run the exec plugin `DIR/missing-plugin` of user `auditor`: No such file or directory (os error 2)",
            ),
        ),
        (
            Case::new(
                "exec plugin that needs a terminal",
                "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: ./plugin.sh\n      env: [{name: PLUGIN_PASSWORD, value: SECRET-environment}]\n      interactiveMode: Always\n",
            ),
            Some(
                "the exec plugin `DIR/plugin.sh` of user `auditor` needs a terminal (interactiveMode: Always) and standard input is not one",
            ),
        ),
        (
            proxied,
            Some("cannot read /version from https://127.0.0.1:"),
        ),
        (
            unparsable_proxy,
            Some("the cluster's proxy-url is not a URL"),
        ),
        (
            Case::new(
                "client key that is not base64",
                "    client-certificate-data: Y2VydGlmaWNhdGU=\n    client-key-data: SECRET-key\n",
            ),
            Some("configuring the client: the user's client-key-data is not base64"),
        ),
        (
            Case::new(
                "a password the server refuses",
                "    username: admin\n    password: SECRET-password\n",
            ),
            Some("cannot list horizontalpodautoscalers.autoscaling: Unauthorized (401)"),
        ),
        (
            Case::new(
                "a token the server refuses",
                "    token: SECRET-token-refused\n",
            ),
            Some("cannot list horizontalpodautoscalers.autoscaling: Unauthorized (401)"),
        ),
    ]
}

#[test]
fn no_secret_of_a_kubeconfig_is_ever_printed() {
    let mut cluster = shop();
    cluster.require_token(TOKEN);
    let stage = Stage::tls(cluster);
    let mut found = Vec::new();
    let mut expected = Vec::new();
    for (case, first_line) in failures() {
        let dir = tempfile::tempdir().unwrap();
        for format in ["text", "json"] {
            let output = case.run(dir.path(), &stage.standin, &["-A", "--format", format]);
            let (out, err) = (common::stdout(&output), stderr(&output));
            assert!(!leak(&out) && !leak(&err), "{}: {out}{err}", case.name);
            assert!(!err.contains("panicked"), "{}: {err}", case.name);
            let line = err
                .lines()
                .find(|line| line.starts_with("kubectl hpa-lint: "))
                .unwrap_or_default()
                .replace(
                    &dir.path().join("kubeconfig").display().to_string(),
                    "KUBECONFIG",
                )
                .replace(&dir.path().display().to_string(), "DIR");
            found.push((case.name, output.status.code(), line.clone()));
            let line = match first_line {
                Some(prefix) if line.starts_with(&format!("kubectl hpa-lint: {prefix}")) => line,
                Some(prefix) => format!("kubectl hpa-lint: {prefix}…"),
                None if line.starts_with("kubectl hpa-lint: ") => line,
                None => "kubectl hpa-lint: …".to_owned(),
            };
            expected.push((case.name, Some(2), line));
        }
    }
    assert_eq!(found, expected);
}

#[test]
fn a_failing_exec_plugin_speaks_on_standard_error_as_with_kubectl() {
    // Nothing listens on port 9; the plugin fails before that matters.
    let cluster = "server: \"https://127.0.0.1:9\"";
    let (case, _) = failures().remove(8);
    let dir = tempfile::tempdir().unwrap();
    let output = case.run_at(dir.path(), cluster, &["-A"]);
    assert_eq!(
        stderr(&output).replace(&dir.path().display().to_string(), "DIR"),
        "plugin says: please log in\nkubectl hpa-lint: the exec plugin `DIR/plugin.sh` of user `auditor` failed with exit code 3\n"
    );
    let (case, _) = failures().remove(15);
    let output = case.run_at(dir.path(), cluster, &["-A"]);
    assert!(
        stderr(&output).ends_with(
            ": No such file or directory (os error 2)\ninstall it from https://example.com/plugin\n"
        ),
        "{}",
        stderr(&output)
    );
}

/// The credentials the stand-in saw in the requests of `run`.
fn seen(standin: &Running, run: impl FnOnce()) -> Vec<String> {
    let before = standin.credentials().len();
    run();
    standin.credentials().split_off(before)
}

#[test]
fn credentials_reach_the_server_as_kubectl_sends_them() {
    let mut cluster = shop();
    cluster.require_token(TOKEN);
    let stage = Stage::tls(cluster);
    let bearer = format!("Bearer {TOKEN}");
    let mut from_file = Case::new(
        "token file ending in a line break",
        "    tokenFile: token\n",
    );
    from_file.token_file = Some(format!("{TOKEN}\n"));
    let mut file_wins = Case::new(
        "a readable token file wins over the token",
        "    token: SECRET-token-stale\n    tokenFile: token\n",
    );
    file_wins.token_file.clone_from(&from_file.token_file);
    let inline_stands = Case::new(
        "the token stands when the token file cannot be read",
        &format!("    token: {TOKEN}\n    tokenFile: missing\n"),
    );
    // The plugin counts its runs; its environment and arguments reach it.
    let plugin = Case::exec(
        "exec plugin",
        &format!(
            "echo run >> runs\n[ \"$PLUGIN_PASSWORD\" = SECRET-environment ] && [ \"$2\" = SECRET-argument ] || exit 9\n{}",
            credential(&format!(
                "{{\"token\":\"{TOKEN}\",\"expirationTimestamp\":\"2099-01-01T00:00:00Z\"}}"
            ))
        ),
    );
    // Client certificates of the stand-in's CA, in the kubeconfig and from
    // an exec plugin.
    let authority = stage.standin.authority().unwrap();
    let pair = authority.client_certificate("auditor");
    let certificate = Case::new(
        "client certificate",
        &format!(
            "    client-certificate-data: {}\n    client-key-data: {}\n",
            base64(&pair.cert),
            base64(&pair.key)
        ),
    );
    let pair = authority.client_certificate("plugin-user");
    let json = |pem: &str| pem.replace('\n', "\\n");
    let plugin_certificate = Case::exec(
        "exec plugin giving a client certificate",
        &format!(
            "echo run >> runs\n{}",
            credential(&format!(
                "{{\"clientCertificateData\":\"{}\",\"clientKeyData\":\"{}\"}}",
                json(&pair.cert),
                json(&pair.key)
            ))
        ),
    );
    let cases = [
        (from_file, bearer.as_str()),
        (file_wins, &bearer),
        (inline_stands, &bearer),
        (plugin, &bearer),
        (certificate, "certificate auditor"),
        (plugin_certificate, "certificate plugin-user"),
    ];
    for (case, sent) in cases {
        let dir = tempfile::tempdir().unwrap();
        let credentials = seen(&stage.standin, || {
            for format in ["text", "json", "sarif", "github"] {
                let output = case.run(dir.path(), &stage.standin, &["-A", "--format", format]);
                let (out, err) = (common::stdout(&output), stderr(&output));
                assert_eq!(output.status.code(), Some(1), "{}: {err}", case.name);
                assert!(!leak(&out) && !leak(&err), "{}: {out}{err}", case.name);
            }
        });
        assert!(!credentials.is_empty());
        assert!(
            credentials.iter().all(|seen| seen == sent),
            "{}: {credentials:?}",
            case.name
        );
        if case.plugin.is_some() {
            let runs = std::fs::read_to_string(dir.path().join("runs")).unwrap();
            assert_eq!(runs, "run\n".repeat(4), "once a run");
        }
    }
}

/// client-go neither reads nor sends credentials for a plain `http://`
/// server ("only try to read the auth information if we are secure"):
/// no token, token file, password, client certificate, auth-provider or
/// exec plugin, and none of them is an error. Impersonation is still sent.
#[test]
fn no_credential_is_read_or_sent_over_plain_http() {
    let stage = Stage::new(shop());
    let cases = [
        (Case::new("token", "    token: SECRET-token\n"), "none"),
        (
            Case::new(
                "token file that is not there",
                "    tokenFile: SECRET-missing\n",
            ),
            "none",
        ),
        (
            Case::new(
                "user and password",
                "    username: admin\n    password: SECRET-password\n",
            ),
            "none",
        ),
        (
            Case::new(
                "client certificate that is not one",
                "    client-certificate-data: Y2VydA==\n    client-key-data: SECRET-key\n",
            ),
            "none",
        ),
        (
            Case::new(
                "the removed gcp auth-provider",
                "    auth-provider:\n      name: gcp\n      config: {access-token: SECRET-access}\n",
            ),
            "none",
        ),
        (
            Case::exec("exec plugin", "echo run >> runs\nexit 3\n"),
            "none",
        ),
        (
            Case::new(
                "impersonation",
                "    token: SECRET-token\n    as: someone\n",
            ),
            "impersonate someone",
        ),
    ];
    for (case, sent) in cases {
        let dir = tempfile::tempdir().unwrap();
        let credentials = seen(&stage.standin, || {
            let output = case.run(dir.path(), &stage.standin, &["-A", "--format", "json"]);
            let (out, err) = (common::stdout(&output), stderr(&output));
            assert_eq!(output.status.code(), Some(1), "{}: {err}", case.name);
            assert!(!leak(&out) && !leak(&err), "{}: {out}{err}", case.name);
        });
        assert!(!credentials.is_empty());
        assert!(
            credentials.iter().all(|seen| seen == sent),
            "{}: {credentials:?}",
            case.name
        );
        assert!(
            !dir.path().join("runs").exists(),
            "{}: the plugin ran",
            case.name
        );
    }
    // A server without a scheme is plain HTTP, as kubectl reads it.
    let case = Case::new("token", "    token: SECRET-token\n");
    let dir = tempfile::tempdir().unwrap();
    let cluster = format!("server: \"{}\"", stage.standin.address);
    let credentials = seen(&stage.standin, || {
        let output = case.run_at(dir.path(), &cluster, &["-A", "--format", "json"]);
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    });
    assert!(!credentials.is_empty());
    assert!(
        credentials.iter().all(|seen| seen == "none"),
        "{credentials:?}"
    );
}

#[test]
fn kubeconfig_files_and_contexts_are_chosen_as_kubectl_chooses() {
    let stage = Stage::new(shop());
    let dir = stage.dir.path();
    // The stand-in's kubeconfig split in two, with a missing file between
    // them: kubectl skips it.
    let whole = std::fs::read_to_string(dir.join("kubeconfig")).unwrap();
    let (head, users) = whole.split_once("users:").unwrap();
    std::fs::write(dir.join("first"), head).unwrap();
    std::fs::write(dir.join("second"), format!("users:{users}")).unwrap();
    let files =
        std::env::join_paths([dir.join("first"), dir.join("gone"), dir.join("second")]).unwrap();
    let mut command = audit_command(dir, &["-A", "--quiet"]);
    command.env("KUBECONFIG", &files);
    let output = run(command);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let mut command = audit_command(dir, &["-A", "--context", "nope"]);
    command.env("KUBECONFIG", &files);
    assert_eq!(
        stderr(&run(command)),
        "kubectl hpa-lint: loading the kubeconfig context: context `nope` does not exist\n"
    );
    // Named with --kubeconfig, a missing file is an error.
    let output = stage.audit(&["-A", "--kubeconfig", "gone"]);
    assert!(
        stderr(&output)
            .starts_with("kubectl hpa-lint: reading kubeconfig gone: failed to read kubeconfig"),
        "{}",
        stderr(&output)
    );
}
