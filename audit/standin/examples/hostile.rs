//! Serves a small cluster with one hostile path, for trying `kubectl
//! hpa-lint` by hand against a broken or malicious API server:
//!
//! ```sh
//! cargo run --release -p kube-standin --example hostile -- MODE KUBECONFIG
//! KUBECONFIG=KUBECONFIG kubectl-hpa_lint -A
//! ```
//!
//! MODE is one of `silent-version`, `silent-hpas`, `trickle-version`,
//! `trickle-hpas`, `trickle-deployments`, `endless-same-token`,
//! `endless-same-items`, `endless-new-items` (500 HPAs a page),
//! `huge-page:MB`, `huge-name:MB`, `status-200`, `bad-items`,
//! `duplicate-items`, `redirect`, or `none`. It serves until killed.

use std::time::Duration;

use kube_standin::Cluster;
use kube_standin::hostile::{Hostile, Loop};
use serde_json::{Value, json};

const HPAS: &str = "/apis/autoscaling/v2/horizontalpodautoscalers";
const LIST: &str = "HorizontalPodAutoscalerList";

fn hpa(name: &str) -> Value {
    json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": "shop"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                 "minReplicas": 2, "maxReplicas": 10}})
}

fn deployment(name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "shop"},
        "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "1"}}}]}}}})
}

fn hostile(mode: &str) -> Result<Option<(&'static str, Hostile)>, String> {
    let trickle = |head: &str| Hostile::Trickle {
        head: head.to_owned(),
        interval: Duration::from_secs(2),
    };
    let megabytes = |text: &str| {
        text.parse::<usize>()
            .map(|mb| mb * 1_000_000)
            .map_err(|e| format!("{text}: {e}"))
    };
    let page: Vec<Value> = (0..500).map(|i| hpa(&format!("web-{i}"))).collect();
    Ok(Some(match mode.split_once(':').unwrap_or((mode, "")) {
        ("none", _) => return Ok(None),
        ("silent-version", _) => ("/version", Hostile::Silent),
        ("silent-hpas", _) => (HPAS, Hostile::Silent),
        ("trickle-version", _) => ("/version", trickle("{")),
        ("trickle-hpas", _) => (
            HPAS,
            trickle(r#"{"kind":"HorizontalPodAutoscalerList","items":["#),
        ),
        ("trickle-deployments", _) => (
            "/apis/apps/v1/deployments",
            trickle(r#"{"kind":"DeploymentList","items":["#),
        ),
        ("endless-same-token", _) => (HPAS, Hostile::endless(LIST, page, Loop::SameToken)),
        ("endless-same-items", _) => (HPAS, Hostile::endless(LIST, page, Loop::SameItems)),
        ("endless-new-items", _) => (HPAS, Hostile::endless(LIST, page, Loop::NewItems)),
        ("huge-page", mb) => (HPAS, Hostile::huge_page(LIST, megabytes(mb)?)),
        ("huge-name", mb) => (HPAS, Hostile::huge_name(LIST, "shop", megabytes(mb)?)),
        ("status-200", _) => (
            HPAS,
            Hostile::ok(
                json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                "message": "the server is currently unable to handle the request", "reason": "ServiceUnavailable", "code": 503}),
            ),
        ),
        ("bad-items", _) => (
            HPAS,
            Hostile::ok(json!({"kind": LIST, "metadata": {}, "items": [1, "x", null]})),
        ),
        ("duplicate-items", _) => (
            HPAS,
            Hostile::raw(&format!(
                r#"{{"kind":"{LIST}","metadata":{{}},"items":[{}],"items":[]}}"#,
                hpa("web")
            )),
        ),
        ("redirect", _) => (HPAS, Hostile::redirect("https://login.example.com/sso")),
        _ => return Err(format!("unknown mode `{mode}`")),
    }))
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mode, kubeconfig] = args.as_slice() else {
        return Err("usage: hostile MODE KUBECONFIG".to_owned());
    };
    let mut cluster = Cluster::new("v1.33.4");
    cluster
        .serve(
            "autoscaling/v2",
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
            true,
            vec![hpa("web")],
        )
        .serve(
            "apps/v1",
            "Deployment",
            "deployments",
            true,
            vec![deployment("web")],
        );
    if let Some((path, hostile)) = hostile(mode)? {
        cluster.hostile(path, hostile);
    }
    let running = cluster.start().await.map_err(|e| e.to_string())?;
    std::fs::write(kubeconfig, running.kubeconfig("hostile", "shop")).map_err(|e| e.to_string())?;
    eprintln!("serving on {} ({mode})", running.address);
    std::future::pending::<()>().await;
    Ok(())
}
