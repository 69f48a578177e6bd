//! The example of docs/diff.md: a GitOps repository of 20 HPAs over 7 teams, and
//! a pull request that changes three of them (one moved to another file).

use std::path::Path;

/// One app: a Deployment with its requests and an HPA.
struct App {
    namespace: &'static str,
    name: &'static str,
    /// The main container's requests, and a sidecar's CPU request if any.
    cpu: &'static str,
    memory: &'static str,
    sidecar: Option<&'static str>,
    /// The HPA's spec after `scaleTargetRef`.
    spec: &'static str,
}

const CPU_70: &str = "  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
";

fn apps() -> Vec<App> {
    let app = |namespace, name, cpu, memory, spec| App {
        namespace,
        name,
        cpu,
        memory,
        sidecar: None,
        spec,
    };
    vec![
        app("shop", "storefront", "500m", "512Mi", "  minReplicas: 3
  maxReplicas: 30
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 65}}
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 600
      policies: [{type: Percent, value: 20, periodSeconds: 60}]
"),
        app("shop", "cart", "250m", "256Mi", "  minReplicas: 2
  maxReplicas: 12
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 75}}
"),
        app("shop", "checkout", "500m", "512Mi", "  minReplicas: 3
  maxReplicas: 12
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
  behavior:
    scaleUp:
      stabilizationWindowSeconds: 60
      policies: [{type: Pods, value: 2, periodSeconds: 60}]
    scaleDown:
      stabilizationWindowSeconds: 300
"),
        app("shop", "catalog", "250m", "1Gi", "  minReplicas: 2
  maxReplicas: 10
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
  - type: Resource
    resource: {name: memory, target: {type: Utilization, averageUtilization: 80}}
"),
        app("shop", "recommendations", "1", "2Gi", "  minReplicas: 1
  maxReplicas: 6
  metrics:
  - type: Pods
    pods:
      metric: {name: inference_requests_per_second}
      target: {type: AverageValue, averageValue: '20'}
"),
        App {
            sidecar: Some("100m"),
            ..app("payments", "gateway", "500m", "512Mi", "  minReplicas: 3
  maxReplicas: 15
  metrics:
  - type: ContainerResource
    containerResource: {name: cpu, container: app, target: {type: Utilization, averageUtilization: 60}}
")
        },
        app("payments", "ledger", "1", "1Gi", "  minReplicas: 2
  maxReplicas: 8
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 600
      policies: [{type: Pods, value: 1, periodSeconds: 120}]
"),
        app("payments", "fraud-check", "750m", "1Gi", "  minReplicas: 2
  maxReplicas: 10
" ),
        app("search", "api", "500m", "512Mi", "  minReplicas: 2
  maxReplicas: 20
  metrics:
  - type: Pods
    pods:
      metric: {name: http_requests_per_second}
      target: {type: AverageValue, averageValue: '150'}
"),
        app("search", "indexer", "500m", "2Gi", "  minReplicas: 1
  maxReplicas: 6
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
"),
        app("search", "suggest", "250m", "256Mi", "  minReplicas: 2
  maxReplicas: 8
"),
        app("platform", "auth", "250m", "256Mi", "  minReplicas: 3
  maxReplicas: 9
"),
        app("platform", "notifications", "100m", "128Mi", "  minReplicas: 1
  maxReplicas: 5
  metrics:
  - type: External
    external:
      metric: {name: sqs_messages_visible, selector: {matchLabels: {queue: notifications}}}
      target: {type: AverageValue, averageValue: '50'}
"),
        app("platform", "image-resizer", "1", "1Gi", "  minReplicas: 1
  maxReplicas: 10
  behavior:
    scaleUp:
      policies: [{type: Percent, value: 100, periodSeconds: 30}]
"),
        app("media", "thumbnailer", "500m", "512Mi", "  minReplicas: 1
  maxReplicas: 20
  metrics:
  - type: External
    external:
      metric: {name: rabbitmq_queue_messages_ready, selector: {matchLabels: {queue: thumbnails}}}
      target: {type: AverageValue, averageValue: '30'}
"),
        app("media", "transcoder", "2", "4Gi", "  minReplicas: 1
  maxReplicas: 8
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 900
"),
        app("analytics", "events-collector", "250m", "256Mi", "  minReplicas: 2
  maxReplicas: 16
  metrics:
  - type: Pods
    pods:
      metric: {name: events_per_second}
      target: {type: AverageValue, averageValue: '500'}
"),
        app("analytics", "reports", "500m", "1Gi", "  minReplicas: 1
  maxReplicas: 4
"),
        app("identity", "sessions", "250m", "512Mi", "  minReplicas: 2
  maxReplicas: 10
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
  - type: Resource
    resource: {name: memory, target: {type: Utilization, averageUtilization: 75}}
"),
        app("identity", "directory", "250m", "256Mi", CPU_70),
    ]
}

fn deployment(app: &App) -> String {
    let sidecar = app.sidecar.map_or_else(String::new, |cpu| {
        format!("      - name: istio-proxy\n        image: istio/proxyv2:1.24.2\n        resources: {{requests: {{cpu: {cpu}, memory: 128Mi}}}}\n")
    });
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: {namespace}
spec:
  selector:
    matchLabels: {{app: {name}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      containers:
      - name: app
        image: registry.example.com/{namespace}/{name}:1.8.2
        resources:
          requests: {{cpu: {cpu}, memory: {memory}}}
          limits: {{memory: {memory}}}
{sidecar}",
        name = app.name,
        namespace = app.namespace,
        cpu = app.cpu,
        memory = app.memory,
    )
}

fn hpa(app: &App) -> String {
    format!(
        "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {name}
  namespace: {namespace}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: {name}}}
{spec}",
        name = app.name,
        namespace = app.namespace,
        spec = app.spec,
    )
}

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The repository before the pull request: `apps/NAMESPACE/NAME/` with a
/// `deployment.yaml` and an `hpa.yaml`, plus a README that is no manifest.
pub fn base(root: &Path) {
    write(root, "README.md", "# Platform manifests\n");
    for app in apps() {
        let dir = format!("apps/{}/{}", app.namespace, app.name);
        write(root, &format!("{dir}/deployment.yaml"), &deployment(&app));
        write(root, &format!("{dir}/hpa.yaml"), &hpa(&app));
    }
}

fn edit(root: &Path, path: &str, from: &str, to: &str) {
    let path = root.join(path);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{}: no `{from}`", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

/// The pull request: checkout gets ready for a sale (twice the ceiling, a
/// fast scale-up); ledger's HPA moves into `autoscaling.yaml` with a short
/// scale-down window; indexer runs hotter on pods twice as large.
pub fn pull_request(root: &Path) {
    edit(
        root,
        "apps/shop/checkout/hpa.yaml",
        "  maxReplicas: 12",
        "  maxReplicas: 24",
    );
    edit(
        root,
        "apps/shop/checkout/hpa.yaml",
        "      stabilizationWindowSeconds: 60
      policies: [{type: Pods, value: 2, periodSeconds: 60}]",
        "      stabilizationWindowSeconds: 0
      policies: [{type: Percent, value: 100, periodSeconds: 15}]",
    );
    let ledger = "apps/payments/ledger";
    std::fs::rename(
        root.join(format!("{ledger}/hpa.yaml")),
        root.join(format!("{ledger}/autoscaling.yaml")),
    )
    .unwrap();
    edit(
        root,
        &format!("{ledger}/autoscaling.yaml"),
        "      stabilizationWindowSeconds: 600
      policies: [{type: Pods, value: 1, periodSeconds: 120}]",
        "      stabilizationWindowSeconds: 60
      policies: [{type: Percent, value: 50, periodSeconds: 30}]",
    );
    edit(
        root,
        "apps/search/indexer/deployment.yaml",
        "cpu: 500m",
        "cpu: \"1\"",
    );
    edit(
        root,
        "apps/search/indexer/hpa.yaml",
        "averageUtilization: 60",
        "averageUtilization: 85",
    );
    // Written out as the API server defaults it: no change in effect.
    edit(
        root,
        "apps/platform/auth/hpa.yaml",
        "  minReplicas: 3\n",
        "  minReplicas: 3\n  metrics:\n  - type: Resource\n    resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}\n",
    );
}
