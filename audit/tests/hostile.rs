//! `kubectl hpa-lint` against a hostile API server (the stand-in's
//! `hostile` answers): every request is bounded in time and size, every
//! list in pages, and an answer that is not what was asked for is an error
//! that says what the server answered. Exit 2 each time, never a hang, a
//! panic, or "No problems found".

mod common;

use std::time::Duration;

use common::{Stage, findings, shop, stderr, stdout};
use kube_standin::Cluster;
use kube_standin::hostile::{Hostile, Loop};
use serde_json::json;

const HPAS: &str = "/apis/autoscaling/v2/horizontalpodautoscalers";
const HPA_LIST: &str = "HorizontalPodAutoscalerList";

/// The shop with `hostile` answering every request to `path`.
fn hostile_shop(path: &str, hostile: Hostile) -> Stage {
    let mut cluster = shop();
    cluster.hostile(path, hostile);
    Stage::new(cluster)
}

/// The audit's standard error, where the stand-in's port is `PORT`.
fn errors(stage: &Stage, output: &std::process::Output) -> String {
    stderr(output).replace(&stage.standin.address.port().to_string(), "PORT")
}

/// A byte every 100 ms: a timeout per read would never fire.
fn trickle(head: &str) -> Hostile {
    Hostile::Trickle {
        head: head.to_owned(),
        interval: Duration::from_millis(100),
    }
}

#[test]
fn request_timeout_covers_the_whole_request_of_version_hpas_and_targets() {
    let stage = hostile_shop("/version", Hostile::Silent);
    let output = stage.audit(&["-A", "--request-timeout", "1s"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        errors(&stage, &output),
        "kubectl hpa-lint: cannot read /version from http://127.0.0.1:PORT: no complete answer within 1s (--request-timeout)\n"
    );

    let stage = hostile_shop("/version", trickle("{"));
    let output = stage.audit(&["-A", "--request-timeout", "1s"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(errors(&stage, &output).starts_with("kubectl hpa-lint: cannot read /version from http://127.0.0.1:PORT: no complete answer within 1s"));

    for hostile in [
        Hostile::Silent,
        trickle(r#"{"kind":"HorizontalPodAutoscalerList","items":["#),
    ] {
        let stage = hostile_shop(HPAS, hostile);
        let output = stage.audit(&["-A", "--request-timeout", "1500ms"]);
        assert_eq!(output.status.code(), Some(2));
        assert_eq!(stdout(&output), "");
        assert_eq!(
            stderr(&output),
            "kubectl hpa-lint: cannot list horizontalpodautoscalers.autoscaling: no complete answer within 1.5s (--request-timeout)\n"
        );
    }

    // A target list that never ends: the rest of the audit stands.
    let stage = hostile_shop(
        "/apis/apps/v1/deployments",
        trickle(r#"{"kind":"DeploymentList","items":["#),
    );
    let output = stage.audit(&["-A", "--request-timeout", "1s", "--format", "json"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        "kubectl hpa-lint: cannot read deployments.apps: no complete answer within 1s (--request-timeout); the HPAs that scale a Deployment are not checked against it\n"
    );
    assert!(findings(&output).contains(&(
        "pinned-at-max-replicas".to_owned(),
        "shop/HorizontalPodAutoscaler/cart".to_owned()
    )));
}

#[test]
fn a_list_that_never_ends_fails() {
    let hpa = common::hpa("shop", "web", "Deployment", 2, 10, json!({}));
    let cannot_list = "kubectl hpa-lint: cannot list horizontalpodautoscalers.autoscaling:";
    let stage = hostile_shop(
        HPAS,
        Hostile::endless(HPA_LIST, vec![hpa.clone()], Loop::SameToken),
    );
    let output = stage.audit(&["-A"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        format!(
            "{cannot_list} the server gave the continue token `hostile-again` a second time (page 2): the list would never end\n"
        )
    );

    // New tokens, the same objects: the list starts over and over.
    let stage = hostile_shop(
        HPAS,
        Hostile::endless(HPA_LIST, vec![hpa.clone()], Loop::SameItems),
    );
    let output = stage.audit(&["-A"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        format!(
            "{cannot_list} the server listed `shop/web` twice (page 2): the list repeats itself\n"
        )
    );

    // New objects on every page: stopped after 10,000 pages.
    let mut cluster = Cluster::new("v1.33.4");
    cluster.hostile(HPAS, Hostile::endless(HPA_LIST, vec![hpa], Loop::NewItems));
    let stage = Stage::new(cluster);
    let output = stage.audit(&["-A", "--chunk-size", "1"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        format!("{cannot_list} the list did not end after 10000 pages of at most 1 objects\n")
    );
    assert_eq!(stage.standin.requests().len(), 1 + 10_000);
}

#[test]
fn an_answer_larger_than_the_bound_fails_as_it_arrives() {
    let bound = 64 << 20;
    for hostile in [
        Hostile::huge_page(HPA_LIST, bound + 1),
        Hostile::huge_name(HPA_LIST, "shop", bound),
    ] {
        let stage = hostile_shop(HPAS, hostile);
        let output = stage.audit(&["-A"]);
        assert_eq!(output.status.code(), Some(2));
        assert_eq!(
            stderr(&output),
            "kubectl hpa-lint: cannot list horizontalpodautoscalers.autoscaling: the answer is larger than 64 MiB: lower --chunk-size (now 500)\n"
        );
    }
    // Just under the bound: read.
    let stage = hostile_shop(HPAS, Hostile::huge_page(HPA_LIST, bound));
    let output = stage.audit(&["-A"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn answers_that_are_not_the_list_asked_for_say_what_they_are() {
    let not_a_list = |answer: &str| {
        format!("the server's answer is not a HorizontalPodAutoscalerList: {answer}")
    };
    let cases = [
        (
            Hostile::ok(json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "etcdserver: request timed out", "code": 500})),
            "the server answered a Status, not a HorizontalPodAutoscalerList: etcdserver: request timed out".to_owned(),
        ),
        (
            Hostile::ok(json!({"kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"}})),
            "the server answered a HorizontalPodAutoscaler, not a HorizontalPodAutoscalerList".to_owned(),
        ),
        (
            Hostile::ok(json!({"kind": HPA_LIST, "metadata": {}, "items": [1, "x", null]})),
            not_a_list("invalid type: integer `1`, expected items[0] to be an object at line 1 column 62; it begins `{\"kind\":\"HorizontalPodAutoscalerList\",\"metadata\":{},\"items\":[1,\"x\",null]}`"),
        ),
        (
            Hostile::raw(r#"{"kind":"HorizontalPodAutoscalerList","metadata":{},"items":[{"metadata":{"name":"web"}}],"items":[]}"#),
            not_a_list("`items` is given twice at line 1 column 97; it begins `{\"kind\":\"HorizontalPodAutoscalerList\",\"metadata\":{},\"items\":[{\"metadata\":{\"name\":\"web\"}}],\"items\":[]}`"),
        ),
        (
            Hostile::raw("<html><body>Please sign in</body></html>"),
            not_a_list("expected value at line 1 column 1; it begins `<html><body>Please sign in</body></html>`"),
        ),
        (
            Hostile::redirect("https://login.example.com/sso?from=kubectl"),
            "the server answered 302 Found, redirecting to `https://login.example.com/sso?from=kubectl`: an API server does not redirect (is the kubeconfig's server a login page or a proxy?)".to_owned(),
        ),
        (
            Hostile::Answer { status: 503, headers: Vec::new(), body: "upstream connect error".to_owned() },
            "the server answered 503 Service Unavailable with `upstream connect error`".to_owned(),
        ),
    ];
    let mut found = Vec::new();
    let mut expected = Vec::new();
    for (hostile, message) in cases {
        let output = hostile_shop(HPAS, hostile).audit(&["-A"]);
        found.push((output.status.code(), stdout(&output), stderr(&output)));
        expected.push((
            Some(2),
            String::new(),
            format!(
                "kubectl hpa-lint: cannot list horizontalpodautoscalers.autoscaling: {message}\n"
            ),
        ));
    }
    assert_eq!(found, expected);
}

#[test]
fn a_target_list_that_is_not_one_is_unread_not_empty() {
    let stage = hostile_shop(
        "/apis/apps/v1/deployments",
        Hostile::ok(json!({"kind": "Status", "message": "etcdserver: leader changed"})),
    );
    let output = stage.audit(&["-A", "--format", "json"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).starts_with("kubectl hpa-lint: cannot read deployments.apps: the server answered a Status, not a DeploymentList: etcdserver: leader changed; "),
        "{}",
        stderr(&output)
    );
    // Not "missing": the Deployments are unknown.
    assert!(
        !findings(&output)
            .iter()
            .any(|(rule, _)| rule == "target-not-found")
    );
}

#[test]
fn retries_only_what_the_server_asks_to_retry_as_kubectl() {
    let throttled = Hostile::Answer {
        status: 429,
        headers: vec![("retry-after", "0".to_owned())],
        body: json!({"kind": "Status", "status": "Failure", "message": "Too many requests, please try again later.", "reason": "TooManyRequests", "code": 429}).to_string(),
    };
    let stage = hostile_shop(HPAS, throttled);
    let output = stage.audit(&["-A"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        "kubectl hpa-lint: cannot list horizontalpodautoscalers.autoscaling: Too many requests, please try again later. (429)\n"
    );
    let tries = |stage: &Stage| {
        let requests = stage.standin.requests();
        requests.iter().filter(|r| r.starts_with(HPAS)).count()
    };
    assert_eq!(tries(&stage), 1 + 10);
    // Without `Retry-After`, once.
    let unavailable = Hostile::Answer {
        status: 503,
        headers: Vec::new(),
        body: "no healthy upstream".to_owned(),
    };
    let stage = hostile_shop(HPAS, unavailable);
    let output = stage.audit(&["-A"]);
    assert_eq!(
        stderr(&output),
        "kubectl hpa-lint: cannot list horizontalpodautoscalers.autoscaling: the server answered 503 Service Unavailable with `no healthy upstream`\n"
    );
    assert_eq!(tries(&stage), 1);
}
