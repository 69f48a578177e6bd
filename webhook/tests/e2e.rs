//! End to end: the `hpa-webhook` binary (`--offline`) over real TLS, with
//! certificates made at test time and a client that verifies them, answering
//! AdmissionReviews shaped as kube-apiserver sends them (tests/fixtures).

mod common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{Ca, Client, PATIENCE, ServerCert, Webhook, connect_tls, decoded_patch, fixture};
use serde_json::{Value, json};
use tempfile::TempDir;

/// A webhook serving a fresh certificate from a directory laid out as the
/// kubelet lays out a Secret volume: `tls.crt -> ..data/tls.crt`, where
/// `..data` is a symlink to the current version's directory.
struct Setup {
    ca: Ca,
    first: ServerCert,
    dir: TempDir,
    webhook: Webhook,
}

/// Makes `version` the current content of the volume in `dir`, swapping the
/// `..data` symlink atomically as the kubelet does.
fn publish(dir: &Path, version: &str, write: impl FnOnce(&Path)) {
    let target = dir.join(version);
    std::fs::create_dir(&target).unwrap();
    write(&target);
    let staged = dir.join("..data_tmp");
    std::os::unix::fs::symlink(version, &staged).unwrap();
    std::fs::rename(&staged, dir.join("..data")).unwrap();
    for file in ["tls.crt", "tls.key"] {
        let link = dir.join(file);
        if !link.exists() {
            std::os::unix::fs::symlink(Path::new("..data").join(file), link).unwrap();
        }
    }
}

impl Setup {
    fn start(extra: &[&str]) -> Self {
        let ca = Ca::new();
        let dir = TempDir::new().unwrap();
        let first = ca.server_cert("first");
        publish(dir.path(), "..v1", |d| first.write(d));
        let cert = dir.path().join("tls.crt");
        let key = dir.path().join("tls.key");
        let mut args = vec![
            "--offline",
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let webhook = Webhook::start(&args);
        Self {
            ca,
            first,
            dir,
            webhook,
        }
    }

    async fn client(&self) -> Client {
        Client::connect(self.webhook.address, &self.ca.pem)
            .await
            .unwrap()
    }
}

async fn review(client: &mut Client, path: &str, body: &Value) -> Value {
    let reply = client.post(path, body.to_string()).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let review = reply.json();
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(review["kind"], "AdmissionReview");
    assert_eq!(review["response"]["uid"], body["request"]["uid"]);
    review["response"].clone()
}

const DENIAL: &str = "hpa-lint denied HorizontalPodAutoscaler shop/web: target-not-scalable: \
                      spec.scaleTargetRef.kind: DaemonSet has no `/scale` subresource: the HPA \
                      controller cannot scale it. To accept a finding, annotate the object it is \
                      about with `hpa-lint.io/ignore.<rule>: <reason>`.";
const MIN_EQUALS_MAX: &str = "min-equals-max: spec.maxReplicas: `minReplicas` and `maxReplicas` \
                              are both 3: the HPA can never scale";

#[tokio::test]
async fn validate_answers_each_request_as_the_rules_decide() {
    let setup = Setup::start(&[]);
    let mut client = setup.client().await;

    for name in [
        "hpa-create.json",
        "hpa-create-v1.json",
        "deployment-update.json",
        "hpa-delete.json",
    ] {
        let response = review(&mut client, "/validate", &fixture(name)).await;
        // Offline, the Deployment update has nothing to be checked against.
        assert_eq!(response["allowed"], true, "{name}: {response}");
        assert_eq!(response.get("warnings"), None, "{name}: {response}");
        assert_eq!(response["status"], json!({}), "{name}: {response}");
    }

    let denied = review(&mut client, "/validate", &fixture("hpa-update.json")).await;
    assert_eq!(denied["allowed"], false);
    assert_eq!(
        denied["status"],
        json!({"status": "Failure", "code": 422, "reason": "Invalid", "message": DENIAL})
    );
    assert_eq!(denied["warnings"], json!([MIN_EQUALS_MAX]));

    // A dry run gets the same answer.
    let dry_run = review(
        &mut client,
        "/validate",
        &fixture("hpa-create-dry-run.json"),
    )
    .await;
    assert_eq!(dry_run["allowed"], false);
    assert_eq!(dry_run["status"], denied["status"]);
    assert_eq!(dry_run["warnings"], denied["warnings"]);

    // One log line per review.
    let line = setup.webhook.wait_for_log("admission review", PATIENCE);
    for field in [
        "uid",
        "kind",
        "namespace",
        "name",
        "operation",
        "decision",
        "findings",
        "latency_us",
    ] {
        assert!(line.get(field).is_some(), "{field} missing in {line}");
    }
    let update = setup.webhook.wait_for_line(
        |l| l["uid"] == "3b6c9a57-0e43-4e7a-8f1d-9c2e5a7b4d02",
        PATIENCE,
    );
    assert_eq!(update["decision"], "denied");
    assert_eq!(
        update["findings"],
        "min-equals-max=warn,target-not-scalable=deny"
    );
    assert_eq!(update["operation"], "UPDATE");
}

/// Applies a response's patch to the request's object.
fn patched(request: &Value, response: &Value) -> Value {
    assert_eq!(response["patchType"], "JSONPatch");
    let mut object = request["request"]["object"].clone();
    json_patch::patch(&mut object, &decoded_patch(response)).unwrap();
    object
}

#[tokio::test]
async fn mutate_injects_the_default_behavior_once() {
    let setup = Setup::start(&[]);
    let mut client = setup.client().await;

    let request = fixture("hpa-create.json");
    let response = review(&mut client, "/mutate", &request).await;
    assert_eq!(response["allowed"], true);
    let object = patched(&request, &response);
    let mut expected = request["request"]["object"].clone();
    expected["spec"]["behavior"] = json!({
        "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15}]},
        "scaleDown": {"stabilizationWindowSeconds": 300, "selectPolicy": "Max", "policies": [
            {"type": "Percent", "value": 100, "periodSeconds": 15}]},
    });
    expected["metadata"]["annotations"]["hpa-lint.io/injected-behavior"] = json!(
        "scaleUp.stabilizationWindowSeconds,scaleUp.selectPolicy,scaleUp.policies,\
         scaleDown.stabilizationWindowSeconds,scaleDown.selectPolicy,scaleDown.policies"
    );
    assert_eq!(object, expected);

    // Idempotent: the patched object gets no patch; and it passes validation.
    let mut again = request.clone();
    again["request"]["object"] = object;
    let response = review(&mut client, "/mutate", &again).await;
    assert_eq!(response.get("patch"), None, "{response}");
    let response = review(&mut client, "/validate", &again).await;
    assert_eq!(response["allowed"], true, "{response}");

    // The API server filled the rest of a behavior it was given: only the
    // controller's scale-down window is missing.
    let request = fixture("hpa-update.json");
    let response = review(&mut client, "/mutate", &request).await;
    let object = patched(&request, &response);
    assert_eq!(
        object["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"],
        300
    );
    assert_eq!(
        object["metadata"]["annotations"]["hpa-lint.io/injected-behavior"],
        "scaleDown.stabilizationWindowSeconds"
    );

    // A v1 HPA arrives converted to v2 and is patched in that form.
    let request = fixture("hpa-create-v1.json");
    let response = review(&mut client, "/mutate", &request).await;
    assert_eq!(
        patched(&request, &response)["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"],
        300
    );

    for name in ["deployment-update.json", "hpa-delete.json"] {
        let response = review(&mut client, "/mutate", &fixture(name)).await;
        assert_eq!(response["allowed"], true);
        assert_eq!(response.get("patch"), None, "{name}: {response}");
    }
}

#[tokio::test]
async fn bad_requests_get_clear_errors_over_the_wire() {
    let setup = Setup::start(&[]);
    let mut client = setup.client().await;

    let reply = client.post("/validate", "{not json").await;
    assert_eq!(reply.status, 400);
    assert!(
        reply
            .text()
            .starts_with("hpa-lint: malformed AdmissionReview:"),
        "{}",
        reply.text()
    );

    let mut no_uid = fixture("hpa-create.json");
    no_uid["request"]["uid"] = json!("");
    let reply = client.post("/validate", no_uid.to_string()).await;
    assert_eq!(
        (reply.status, reply.text().as_str()),
        (400, "hpa-lint: the AdmissionReview request has no `uid`\n")
    );

    // The object does not parse, but the uid is there to answer to.
    let mut bad_object = fixture("hpa-create.json");
    bad_object["request"]["object"]["metadata"] = json!("web");
    let response = review(&mut client, "/validate", &bad_object).await;
    assert_eq!(response["allowed"], false);
    assert_eq!(response["status"]["code"], 400);
    let message = response["status"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("hpa-lint cannot read the request: invalid type"),
        "{message}"
    );

    // Over the default limit of 3 MiB.
    let mut huge = fixture("hpa-create.json");
    huge["request"]["object"]["metadata"]["annotations"]["padding"] = json!("x".repeat(3 << 20));
    let reply = client.post("/validate", huge.to_string()).await;
    assert_eq!(
        (reply.status, reply.text().as_str()),
        (413, "hpa-lint: request body larger than 3145728 bytes\n")
    );

    // The server is still there.
    let mut client = setup.client().await;
    assert_eq!(client.get("/healthz").await.status, 200);
}

/// A 1 MB name and 3,000 invalid metrics in one 2.4 MB request once took
/// 26 s and 9 GB. Its answer lists a bounded number of findings, quotes a
/// bounded part of each value, and its log line stays short.
#[tokio::test]
async fn a_hostile_request_gets_a_bounded_answer() {
    let setup = Setup::start(&[]);
    let mut client = setup.client().await;
    let name = "w".repeat(1 << 20);
    let mut request = fixture("hpa-create.json");
    request["request"]["name"] = json!(name);
    let object = &mut request["request"]["object"];
    object["metadata"]["name"] = json!(name);
    object["spec"]["metrics"] = (0..3000)
        .map(|i| json!({"type": "Pods", "pods": {"metric": {"name": format!("m/{i}")}, "target": {"type": "Value", "value": "-1"}}}))
        .collect();

    let reply = client.post("/validate", request.to_string()).await;
    assert_eq!(reply.status, 200);
    assert!(reply.body.len() < 40_000, "{} bytes", reply.body.len());
    let response = &reply.json()["response"];
    assert_eq!(response["allowed"], false);
    assert_eq!(response["status"]["code"], 422);
    let message = response["status"]["message"].as_str().unwrap();
    let head = "w".repeat(64);
    let denied = format!("hpa-lint denied HorizontalPodAutoscaler shop/{head}… (1048576 bytes): ");
    assert!(message.starts_with(&denied), "{message}");
    assert!(
        message.contains(&format!(
            "metadata.name: Invalid value: \"{head}…\" (1048576 bytes): must be no more than 253 characters"
        )),
        "{message}"
    );
    // 25 findings, then how many more.
    let listed = message[denied.len()..]
        .strip_suffix(". To accept a finding, annotate the object it is about with `hpa-lint.io/ignore.<rule>: <reason>`.")
        .unwrap_or_else(|| panic!("{message}"));
    let listed: Vec<&str> = listed.split("; ").collect();
    assert_eq!(listed.len(), 26, "{message}");
    let more = listed[25]
        .strip_prefix("… and ")
        .and_then(|rest| rest.strip_suffix(" more findings"))
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or_else(|| panic!("{}", listed[25]));
    assert!(more > 6000, "{more}");

    // One short log line: the name cut, findings counted per rule.
    let line = setup.webhook.wait_for_log("admission review", PATIENCE);
    assert_eq!(line["name"], format!("{head}… (1048576 bytes)"));
    // The first 1,000 findings are kept and counted per rule, the others
    // only counted.
    let logged = line["findings"].as_str().unwrap();
    let kept: usize = logged
        .split(',')
        .filter_map(|entry| entry.split_once('=').map(|(_, action)| action))
        .map(|action| {
            action
                .split_once('*')
                .map_or(1, |(_, n)| n.parse().unwrap())
        })
        .sum();
    assert_eq!(kept, 1000, "{logged}");
    assert!(
        logged.ends_with(&format!(",+{} more", 25 + more - kept)),
        "{logged}"
    );
    assert!(line.to_string().len() < 2048, "{line}");

    // In audit mode the same findings are warnings: 25 and a count.
    let dir = TempDir::new().unwrap();
    let config = dir.path().join("config.yaml");
    std::fs::write(&config, "webhook:\n  mode: warn\n").unwrap();
    let setup = Setup::start(&["--config", config.to_str().unwrap()]);
    let reply = setup
        .client()
        .await
        .post("/validate", request.to_string())
        .await;
    assert!(reply.body.len() < 8192, "{} bytes", reply.body.len());
    let response = &reply.json()["response"];
    assert_eq!(response["allowed"], true);
    let warnings = response["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 26, "{warnings:?}");
    assert!(
        warnings
            .iter()
            .all(|w| w.as_str().unwrap().chars().count() <= 120)
    );
    let tail = warnings[25].as_str().unwrap();
    assert_eq!(tail, format!("hpa-lint: … and {more} more findings"));
}

#[tokio::test]
async fn probes_and_metrics() {
    let metrics_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let metrics_listen = metrics_port.to_string();
    let setup = Setup::start(&["--metrics-listen", &metrics_listen]);
    let mut client = setup.client().await;
    assert_eq!(client.get("/healthz").await.status, 200);
    // Offline there are no caches to wait for.
    assert_eq!(client.get("/readyz").await.status, 200);
    review(&mut client, "/validate", &fixture("hpa-update.json")).await;

    let text = client.get("/metrics").await.text();
    assert!(
        text.contains(
            "hpa_webhook_requests_total{endpoint=\"validate\",operation=\"UPDATE\",kind=\"HorizontalPodAutoscaler\",decision=\"denied\"} 1"
        ),
        "{text}"
    );
    assert!(
        text.contains("hpa_webhook_findings_total{rule=\"target-not-scalable\",action=\"deny\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("hpa_webhook_request_duration_seconds_bucket{"),
        "{text}"
    );
    // rcgen's default validity ends in 4096.
    assert!(
        text.contains("hpa_webhook_certificate_expiry_timestamp_seconds 6"),
        "{text}"
    );

    let mut plain = Client::connect_plain(metrics_port).await.unwrap();
    let reply = plain.get("/metrics").await;
    assert_eq!(reply.status, 200);
    assert!(
        reply.text().contains("hpa_webhook_requests_total{"),
        "{}",
        reply.text()
    );
    assert_eq!(plain.get("/validate").await.status, 404);
}

#[tokio::test]
async fn certificate_rotation_under_traffic() {
    let setup = Setup::start(&["--reload-interval", "1"]);
    let second = setup.ca.server_cert("second");
    let body = fixture("hpa-create.json").to_string();

    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    // Two keep-alive connections and one that reconnects for every request.
    for reconnect in [false, false, true] {
        let (address, ca) = (setup.webhook.address, setup.ca.pem.clone());
        let (stop, done, body) = (Arc::clone(&stop), Arc::clone(&done), body.clone());
        tasks.push(tokio::spawn(async move {
            let mut client = Client::connect(address, &ca).await.unwrap();
            while !stop.load(Ordering::Relaxed) {
                if reconnect {
                    client = Client::connect(address, &ca).await.unwrap();
                }
                let reply = client
                    .request("POST", "/validate", body.clone())
                    .await
                    .unwrap();
                assert_eq!(reply.status, 200);
                done.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(setup.client().await.peer_certificate, setup.first.der());

    publish(setup.dir.path(), "..v2", |d| second.write(d));
    let started = Instant::now();
    while setup.client().await.peer_certificate != second.der() {
        assert!(
            started.elapsed() < PATIENCE,
            "the new certificate was not served"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let before = done.load(Ordering::Relaxed);
    tokio::time::sleep(Duration::from_millis(300)).await;

    // A broken pair is refused and the current one stays.
    publish(setup.dir.path(), "..v3", |d| {
        setup.ca.server_cert("third").write(d);
        std::fs::write(d.join("tls.crt"), "not a certificate").unwrap();
    });
    setup.webhook.wait_for_log(
        "new TLS certificate does not load; keeping the current one",
        PATIENCE,
    );
    assert_eq!(setup.client().await.peer_certificate, second.der());

    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        task.await.unwrap();
    }
    assert!(
        done.load(Ordering::Relaxed) > before,
        "requests continued after the rotation"
    );
}

/// SIGTERM: the server goes on serving new clients for the drain delay (the
/// endpoint is still listed while the change propagates) with `/readyz`
/// failing, then stops accepting, finishes the request in flight and exits 0.
#[tokio::test]
async fn sigterm_drains_then_finishes_the_request_in_flight_and_exits_0() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let mut setup = Setup::start(&["--drain-delay", "2"]);
    let body = fixture("hpa-update.json").to_string();
    let (head, tail) = body.split_at(body.len() / 2);

    // A request whose body is only half sent when SIGTERM arrives.
    let mut tls = connect_tls(setup.webhook.address, &setup.ca.pem)
        .await
        .unwrap();
    let request = format!(
        "POST /validate HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{head}",
        body.len()
    );
    tls.write_all(request.as_bytes()).await.unwrap();
    tls.flush().await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;

    setup.webhook.terminate();
    setup.webhook.wait_for_log(
        "shutting down: serving new requests for the drain delay",
        PATIENCE,
    );
    // A client that connects during the drain delay is served, and told
    // that the pod is going.
    let mut late = setup.client().await;
    let response = review(&mut late, "/validate", &fixture("hpa-update.json")).await;
    assert_eq!(response["status"]["message"], DENIAL);
    assert_eq!(late.get("/readyz").await.status, 503);

    setup
        .webhook
        .wait_for_log("shutting down: finishing in-flight requests", PATIENCE);
    // New connections are refused once the listener is closed (soon after
    // that line, however busy the machine).
    let closing = Instant::now();
    while Client::connect(setup.webhook.address, &setup.ca.pem)
        .await
        .is_ok()
    {
        assert!(closing.elapsed() < PATIENCE, "still accepting connections");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    tls.write_all(tail.as_bytes()).await.unwrap();
    tls.flush().await.unwrap();
    let mut answer = Vec::new();
    tls.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    assert!(
        answer.contains("hpa-lint denied HorizontalPodAutoscaler shop/web"),
        "{answer}"
    );

    assert_eq!(setup.webhook.wait_exit(PATIENCE), Some(0));
}

/// Sends `first`, then one byte every 100 ms (when `trickle`) until the
/// server hangs up (it may answer first); panics if it has not after 30 s.
async fn wait_for_hang_up(setup: &Setup, first: &[u8], trickle: bool) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let tls = connect_tls(setup.webhook.address, &setup.ca.pem)
        .await
        .unwrap();
    let (mut reader, mut writer) = tokio::io::split(tls);
    writer.write_all(first).await.unwrap();
    writer.flush().await.unwrap();
    let keep_on = async {
        for _ in 0..300 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if trickle && (writer.write_all(b"x").await.is_err() || writer.flush().await.is_err()) {
                return;
            }
        }
        panic!("still connected after 30 s, having sent {first:?}");
    };
    let hung_up = async {
        let mut answer = Vec::new();
        let _ = reader.read_to_end(&mut answer).await;
    };
    tokio::select! {
        () = keep_on => {}
        () = hung_up => {}
    }
}

/// A client trickling a request's headers (slowloris), or sending nothing
/// at all after the TLS handshake, is disconnected once the header-read
/// timeout has passed instead of holding its connection for good.
#[tokio::test]
async fn slow_and_silent_clients_are_disconnected() {
    let setup = Setup::start(&["--header-read-timeout", "1"]);
    wait_for_hang_up(
        &setup,
        b"POST /validate HTTP/1.1\r\nhost: localhost\r\nx-slow: ",
        true,
    )
    .await;
    wait_for_hang_up(&setup, b"", false).await;
    // The start of HTTP/2's preface: hyper waits for the rest to choose.
    wait_for_hang_up(&setup, b"PRI * HTTP/2.0", false).await;

    // Other clients are served as before.
    let mut client = setup.client().await;
    assert_eq!(client.get("/healthz").await.status, 200);
}

#[tokio::test]
async fn configuration_changes_apply_without_a_restart() {
    let dir = TempDir::new().unwrap();
    let config = dir.path().join("config.yaml");
    std::fs::write(&config, "webhook:\n  rules: {min-equals-max: off}\n").unwrap();
    let setup = Setup::start(&[
        "--reload-interval",
        "1",
        "--config",
        config.to_str().unwrap(),
    ]);
    let mut client = setup.client().await;
    let request = fixture("hpa-update.json");
    let response = review(&mut client, "/validate", &request).await;
    assert_eq!(
        (response["allowed"].clone(), response.get("warnings")),
        (json!(false), None)
    );

    // Audit mode: the denial becomes a warning.
    std::fs::write(&config, "webhook:\n  mode: warn\n").unwrap();
    setup
        .webhook
        .wait_for_log("configuration reloaded", PATIENCE);
    let response = review(&mut client, "/validate", &request).await;
    assert_eq!(response["allowed"], true);
    assert_eq!(
        response["warnings"].as_array().map(Vec::len),
        Some(2),
        "{response}"
    );

    // A broken file keeps the last good configuration.
    std::fs::write(&config, "webhook:\n  mode: loud\n").unwrap();
    setup.webhook.wait_for_log(
        "new configuration is invalid; keeping the current one",
        PATIENCE,
    );
    let response = review(&mut client, "/validate", &request).await;
    assert_eq!(response["allowed"], true);
}

#[test]
fn an_invalid_configuration_stops_the_start() {
    let dir = TempDir::new().unwrap();
    let config = dir.path().join("config.yaml");
    std::fs::write(&config, "webhook:\n  rules: {min-equal-max: off}\n").unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_hpa-webhook"))
        .args([
            "--offline",
            "--insecure-http",
            "--listen",
            "127.0.0.1:0",
            "--config",
        ])
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("did you mean `min-equals-max`"), "{stdout}");

    // Without --insecure-http, the certificate is required.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_hpa-webhook"))
        .args(["--offline"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--tls-cert"));
}

/// Without a cluster the webhook says what is missing and how to give it,
/// once, in plain text when the log is not a terminal; a broken kubeconfig
/// is placed, never quoted (it holds credentials).
#[test]
fn a_missing_or_broken_kubeconfig_is_explained_without_its_secrets() {
    let home = TempDir::new().unwrap();
    let start = |envs: &[(&str, &std::path::Path)], args: &[&str]| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_hpa-webhook"));
        command
            .args([
                "--insecure-http",
                "--listen",
                "127.0.0.1:0",
                "--log-format",
                "text",
            ])
            .args(args)
            .env_remove("KUBECONFIG")
            .env_remove("KUBERNETES_SERVICE_HOST")
            .env("HOME", home.path());
        for (key, value) in envs {
            command.env(key, value);
        }
        let output = command.output().unwrap();
        assert_eq!(output.status.code(), Some(1));
        String::from_utf8(output.stdout).unwrap()
    };
    let log = start(&[], &[]);
    assert!(!log.contains('\u{1b}'), "{log:?}");
    assert!(log.contains("no cluster to watch"), "{log}");
    assert!(
        log.contains("--kubeconfig FILE") && log.contains("--offline"),
        "{log}"
    );
    assert!(!log.contains("os error"), "{log}");

    let broken = home.path().join("broken");
    std::fs::write(
        &broken,
        "users:\n- name: x\n  user:\n    token: SECRET-TOKEN-1\n  bad: [\n",
    )
    .unwrap();
    for log in [
        start(&[("KUBECONFIG", &broken)], &[]),
        start(&[], &["--kubeconfig", broken.to_str().unwrap()]),
    ] {
        assert!(log.contains("not valid YAML at line 5, column 8"), "{log}");
        assert!(!log.contains("SECRET-TOKEN"), "{log}");
    }
    let missing = home.path().join("missing");
    let log = start(&[], &["--kubeconfig", missing.to_str().unwrap()]);
    assert_eq!(log.matches("No such file").count(), 1, "{log}");
}

/// The quick start: `--self-signed DIR` makes DIR and a certificate in it;
/// a client that trusts only DIR/ca.crt, as `curl --cacert` does, posts
/// examples/admission-review.json to 127.0.0.1 and gets the denial. A second
/// start serves the same certificate.
#[tokio::test]
async fn self_signed_quick_start() {
    use std::os::unix::fs::PermissionsExt;

    let temp = TempDir::new().unwrap();
    let dir = temp.path().join("hpa-webhook");
    let ca_path = dir.join("ca.crt");
    let example: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/admission-review.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let args = ["--self-signed", dir.to_str().unwrap(), "--offline"];
    let mut served = Vec::new();
    for first in [true, false] {
        let webhook = Webhook::start(&args);
        let logged = webhook.wait_for_log(
            "serving a self-signed certificate: clients trust the `ca` file",
            PATIENCE,
        );
        assert_eq!(logged["ca"], ca_path.display().to_string());
        assert_eq!(logged["made"], first, "{logged}");
        let ca = std::fs::read_to_string(&ca_path).unwrap();
        let mut client = Client::connect_to(webhook.address, &ca, "127.0.0.1")
            .await
            .unwrap();
        let response = review(&mut client, "/validate", &example).await;
        assert_eq!(response["allowed"], false, "{response}");
        let message = response["status"]["message"].as_str().unwrap();
        assert!(
            message.starts_with(
                "hpa-lint denied HorizontalPodAutoscaler search/indexer: target-not-scalable: \
                 spec.scaleTargetRef.kind: DaemonSet has no `/scale` subresource"
            ),
            "{message}"
        );
        // The name the certificate is also for.
        Client::connect_to(webhook.address, &ca, "localhost")
            .await
            .unwrap();
        served.push(client.peer_certificate);
    }
    assert_eq!(
        served[0], served[1],
        "the second start made a new certificate"
    );
    let mode = |name: &str| {
        std::fs::metadata(dir.join(name))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(mode("tls.key"), 0o600);
    assert_eq!(mode("tls.crt"), 0o644);
    // The CA's key is not kept.
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    assert_eq!(files, ["ca.crt", "tls.crt", "tls.key"]);
}
