//! Applications: workloads with realistic pod templates and what goes with
//! them (HPA, Service, ConfigMaps, secrets, RBAC, Ingress, monitoring).

use std::collections::BTreeSet;
use std::io;

use serde_json::json;

use super::text::{self, BASE64, HEX, Yaml};
use super::{Doc, Form, TEAMS, Writer};
use crate::rng::Rng;

/// Where the images come from.
const REGISTRIES: &[&str] = &[
    "europe-docker.pkg.dev/acme-prod/services",
    "123456789012.dkr.ecr.eu-west-1.amazonaws.com",
    "ghcr.io/acme",
    "registry.acme.internal",
];

const NOUNS: &[&str] = &[
    "api",
    "worker",
    "gateway",
    "scheduler",
    "indexer",
    "ingester",
    "router",
    "notifier",
    "exporter",
    "consumer",
    "publisher",
    "renderer",
    "resolver",
    "syncer",
    "web",
    "backend",
];

/// A sidecar: name, image, arguments and an optional port.
struct Sidecar {
    name: &'static str,
    image: &'static str,
    args: &'static [&'static str],
    port: Option<(&'static str, u16)>,
}

const SIDECARS: &[Sidecar] = &[
    Sidecar {
        name: "envoy",
        image: "envoyproxy/envoy:v1.31.2",
        args: &["-c", "/etc/envoy/envoy.yaml", "--log-level", "warn"],
        port: Some(("envoy-admin", 9901)),
    },
    Sidecar {
        name: "cloud-sql-proxy",
        image: "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1",
        args: &[
            "--structured-logs",
            "--port=5432",
            "acme-prod:europe-west1:main",
        ],
        port: None,
    },
    Sidecar {
        name: "oauth2-proxy",
        image: "quay.io/oauth2-proxy/oauth2-proxy:v7.7.1",
        args: &[
            "--provider=oidc",
            "--upstream=http://127.0.0.1:8080",
            "--http-address=0.0.0.0:4180",
        ],
        port: Some(("oauth", 4180)),
    },
    Sidecar {
        name: "fluent-bit",
        image: "fluent/fluent-bit:3.1.9",
        args: &["-c", "/fluent-bit/etc/fluent-bit.conf"],
        port: Some(("fluent-metrics", 2020)),
    },
    Sidecar {
        name: "otel-agent",
        image: "otel/opentelemetry-collector-contrib:0.111.0",
        args: &["--config=/conf/agent.yaml"],
        port: Some(("otlp", 4317)),
    },
];

/// How an app scales.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scaler {
    Fixed,
    /// An HPA of this `apiVersion`.
    Hpa(&'static str),
    Keda,
}

/// A deliberate mistake, at a low rate.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Defect {
    /// The HPA scales on CPU utilization but the main container requests nothing.
    NoRequests,
    /// The workload sets `replicas` although an HPA owns it.
    Replicas,
    /// A scaling policy period or stabilization window out of bounds.
    Behavior,
    /// The HPA targets a workload that does not exist.
    MissingTarget,
}

impl Defect {
    fn name(self) -> &'static str {
        match self {
            Defect::NoRequests => "target-without-requests",
            Defect::Replicas => "replicas-on-target",
            Defect::Behavior => "behavior-out-of-bounds",
            Defect::MissingTarget => "missing-target",
        }
    }
}

/// The choices made once per app, shared by all its environments.
struct App {
    team: &'static str,
    name: String,
    /// Seeds the details (env vars, config, ...) that are the same in every environment.
    seed: u64,
    stateful: bool,
    scaler: Scaler,
    defect: Option<Defect>,
    sidecars: Vec<usize>,
    native_sidecar: Option<usize>,
    image: String,
}

/// An environment: `base` has no namespace (kustomize sets it).
struct Env<'a> {
    name: &'a str,
    namespace: Option<String>,
    /// 1 for small environments, up to 4 for production.
    scale: u64,
}

/// An app and the environments it is deployed to, for the Argo CD Applications.
pub(crate) struct Deployed {
    team: &'static str,
    name: String,
    envs: Vec<&'static str>,
}

impl App {
    fn new(rng: &mut Rng, team: &'static str, name: String) -> App {
        let scaler = match rng.range(0, 99) {
            0..=21 => Scaler::Fixed,
            22..=24 => Scaler::Keda,
            25..=32 => Scaler::Hpa("autoscaling/v1"),
            33..=35 => Scaler::Hpa("autoscaling/v2beta2"),
            _ => Scaler::Hpa("autoscaling/v2"),
        };
        let defect = match (scaler, rng.range(0, 199)) {
            (Scaler::Hpa(_), 0..=2) => Some(Defect::NoRequests),
            (Scaler::Hpa(_), 3..=5) => Some(Defect::Replicas),
            (Scaler::Hpa(api), 6..=8) if api != "autoscaling/v1" => Some(Defect::Behavior),
            (Scaler::Hpa(_), 9..=10) => Some(Defect::MissingTarget),
            _ => None,
        };
        let native_sidecar = rng.chance(0.2).then(|| rng.below(SIDECARS.len()));
        // Container names must differ, init containers included.
        let sidecars = (0..rng.range(0, 2))
            .map(|_| rng.below(SIDECARS.len()))
            .filter(|&i| Some(i) != native_sidecar)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        App {
            team,
            seed: rng.next_u64(),
            stateful: rng.chance(0.15),
            scaler,
            defect,
            sidecars,
            native_sidecar,
            image: format!("{}/{team}/{name}", rng.pick(REGISTRIES)),
            name,
        }
    }

    fn kind(&self) -> &'static str {
        if self.stateful {
            "StatefulSet"
        } else {
            "Deployment"
        }
    }

    /// A generator for the details that do not depend on the environment.
    fn rng(&self) -> Rng {
        Rng::new(self.seed)
    }
}

fn head(api_version: &str, kind: &str) -> Yaml {
    let mut y = Yaml::default();
    y.line(0, format!("apiVersion: {api_version}"));
    y.line(0, format!("kind: {kind}"));
    y
}

fn doc(kind: &'static str, y: Yaml) -> Doc {
    Doc { kind, text: y.0 }
}

/// `metadata:` with the name, the namespace if any and the usual labels.
fn metadata(y: &mut Yaml, app: &App, env: &Env, name: &str) {
    y.line(0, "metadata:");
    y.line(2, format!("name: {name}"));
    if let Some(namespace) = &env.namespace {
        y.line(2, format!("namespace: {namespace}"));
    }
    labels(y, 2, app, env);
}

fn labels(y: &mut Yaml, indent: usize, app: &App, env: &Env) {
    y.line(indent, "labels:");
    y.line(indent + 2, format!("app.kubernetes.io/name: {}", app.name));
    y.line(
        indent + 2,
        format!("app.kubernetes.io/part-of: {}", app.team),
    );
    y.line(indent + 2, "app.kubernetes.io/managed-by: kustomize");
    if env.name != "base" {
        y.line(indent + 2, format!("environment: {}", env.name));
    }
}

fn env_var_name(rng: &mut Rng) -> String {
    let words: Vec<&str> = (0..rng.range(2, 3)).map(|_| text::word(rng)).collect();
    words.join("_").to_uppercase()
}

fn container_env(y: &mut Yaml, app: &App, env: &Env) {
    let mut rng = app.rng();
    y.line(10, "env:");
    y.line(12, "- name: APP_ENV");
    y.line(14, format!("value: {}", env.name));
    for (name, path) in [("POD_NAME", "metadata.name"), ("POD_IP", "status.podIP")] {
        y.line(12, format!("- name: {name}"));
        y.block(
            14,
            &format!("valueFrom:\n  fieldRef:\n    fieldPath: {path}"),
        );
    }
    y.line(12, "- name: GOMEMLIMIT");
    y.block(
        14,
        "valueFrom:\n  resourceFieldRef:\n    resource: limits.memory\n    divisor: 1Mi",
    );
    for _ in 0..rng.range(4, 30) {
        y.line(12, format!("- name: {}", env_var_name(&mut rng)));
        match rng.range(0, 9) {
            0 | 1 => y.block(
                14,
                &format!(
                    "valueFrom:\n  secretKeyRef:\n    name: {}-secrets\n    key: {}",
                    app.name,
                    text::word(&mut rng)
                ),
            ),
            2 => y.block(
                14,
                &format!(
                    "valueFrom:\n  configMapKeyRef:\n    name: {}-env\n    key: {}\n    optional: true",
                    app.name,
                    text::word(&mut rng)
                ),
            ),
            3 => y.line(14, format!("value: \"{}\"", rng.range(1, 5000))),
            4 => y.line(14, format!("value: \"{}\"", rng.chance(0.5))),
            _ => y.line(
                14,
                format!(
                    "value: {}.{}.svc.cluster.local:{}",
                    text::word(&mut rng),
                    env.namespace.as_deref().unwrap_or(app.team),
                    rng.pick(&[80, 443, 5432, 6379, 9092])
                ),
            ),
        }
    }
    y.line(10, "envFrom:");
    y.line(12, "- configMapRef:");
    y.line(16, format!("name: {}-env", app.name));
}

fn probes(y: &mut Yaml, rng: &mut Rng) {
    y.block(
        10,
        "livenessProbe:\n  httpGet:\n    path: /healthz\n    port: http\n  initialDelaySeconds: 10\n  \
         periodSeconds: 10\n  timeoutSeconds: 2\n  failureThreshold: 3\n\
         readinessProbe:\n  httpGet:\n    path: /readyz\n    port: http\n  periodSeconds: 5\n  \
         successThreshold: 1\n  failureThreshold: 3",
    );
    if rng.chance(0.4) {
        y.block(
            10,
            "startupProbe:\n  httpGet:\n    path: /healthz\n    port: http\n  periodSeconds: 5\n  \
             failureThreshold: 60",
        );
    }
}

fn resources(y: &mut Yaml, indent: usize, cpu_milli: u64, memory_mi: u64) {
    y.line(indent, "resources:");
    y.line(indent + 2, "requests:");
    y.line(indent + 4, format!("cpu: {cpu_milli}m"));
    y.line(indent + 4, format!("memory: {memory_mi}Mi"));
    y.line(indent + 2, "limits:");
    y.line(indent + 4, format!("memory: {}Mi", memory_mi * 2));
}

const SECURITY_CONTEXT: &str = "securityContext:\n  allowPrivilegeEscalation: false\n  \
    readOnlyRootFilesystem: true\n  capabilities:\n    drop:\n      - ALL";

fn main_container(y: &mut Yaml, app: &App, env: &Env, tag: &str) {
    let mut rng = app.rng();
    y.line(8, format!("- name: {}", app.name));
    y.line(10, format!("image: {}:{tag}", app.image));
    y.line(10, "imagePullPolicy: IfNotPresent");
    y.line(10, "args:");
    y.line(12, format!("- --config=/etc/{}/application.yaml", app.name));
    y.line(12, "- --log-format=json");
    y.line(10, "ports:");
    y.block(12, "- name: http\n  containerPort: 8080\n  protocol: TCP");
    y.block(
        12,
        "- name: metrics\n  containerPort: 9090\n  protocol: TCP",
    );
    if rng.chance(0.3) {
        y.block(12, "- name: grpc\n  containerPort: 9000\n  protocol: TCP");
    }
    container_env(y, app, env);
    if app.defect == Some(Defect::NoRequests) {
        y.line(10, "# resources: set by the VPA recommender (not yet)");
    } else {
        resources(
            y,
            10,
            rng.range(1, 10) * 50 * env.scale,
            rng.range(2, 16) * 64 * env.scale,
        );
    }
    probes(y, &mut rng);
    y.line(10, "volumeMounts:");
    y.block(
        12,
        &format!(
            "- name: config\n  mountPath: /etc/{}\n  readOnly: true\n- name: tmp\n  mountPath: /tmp",
            app.name
        ),
    );
    if app.stateful {
        y.block(12, "- name: data\n  mountPath: /var/lib/data");
    }
    y.block(10, SECURITY_CONTEXT);
    y.block(
        10,
        "lifecycle:\n  preStop:\n    exec:\n      command: [\"sh\", \"-c\", \"sleep 10\"]",
    );
}

fn sidecar(y: &mut Yaml, sidecar: &Sidecar, native: bool) {
    y.line(8, format!("- name: {}", sidecar.name));
    y.line(10, format!("image: {}", sidecar.image));
    if native {
        y.line(10, "restartPolicy: Always");
    }
    y.line(10, "args:");
    for arg in sidecar.args {
        y.line(12, format!("- \"{arg}\""));
    }
    if let Some((name, port)) = sidecar.port {
        y.line(10, "ports:");
        y.line(12, format!("- name: {name}"));
        y.line(14, format!("containerPort: {port}"));
    }
    resources(y, 10, 50, 64);
    y.block(10, SECURITY_CONTEXT);
}

fn pod_template(y: &mut Yaml, app: &App, env: &Env, tag: &str) {
    let mut rng = app.rng();
    y.line(2, "template:");
    y.line(4, "metadata:");
    labels(y, 6, app, env);
    y.line(6, "annotations:");
    y.line(8, "prometheus.io/scrape: \"true\"");
    y.line(8, "prometheus.io/port: \"9090\"");
    y.line(
        8,
        format!("checksum/config: {}", text::chars(&mut rng, HEX, 64)),
    );
    y.line(4, "spec:");
    y.line(6, format!("serviceAccountName: {}", app.name));
    y.line(6, "automountServiceAccountToken: false");
    y.line(6, "enableServiceLinks: false");
    y.line(6, "terminationGracePeriodSeconds: 60");
    y.block(
        6,
        "securityContext:\n  runAsNonRoot: true\n  runAsUser: 10001\n  fsGroup: 10001\n  \
         seccompProfile:\n    type: RuntimeDefault",
    );
    let selector = format!(
        "labelSelector:\n  matchLabels:\n    app.kubernetes.io/name: {}",
        app.name
    );
    y.line(6, "topologySpreadConstraints:");
    y.block(
        8,
        "- maxSkew: 1\n  topologyKey: topology.kubernetes.io/zone\n  whenUnsatisfiable: ScheduleAnyway",
    );
    y.block(10, &selector);
    y.block(
        6,
        "affinity:\n  podAntiAffinity:\n    preferredDuringSchedulingIgnoredDuringExecution:\n      \
         - weight: 100\n        podAffinityTerm:\n          topologyKey: kubernetes.io/hostname",
    );
    y.block(16, &selector);
    let pool = rng.pick(&["general", "memory-optimized", "compute", "spot"]);
    y.line(6, "nodeSelector:");
    y.line(8, "kubernetes.io/os: linux");
    y.line(8, format!("node.acme.io/pool: {pool}"));
    y.line(6, "tolerations:");
    y.block(
        8,
        &format!("- key: dedicated\n  operator: Equal\n  value: {pool}\n  effect: NoSchedule"),
    );
    if app.native_sidecar.is_some() || rng.chance(0.3) {
        y.line(6, "initContainers:");
        if let Some(i) = app.native_sidecar {
            sidecar(y, &SIDECARS[i], true);
        } else {
            y.line(8, "- name: migrate");
            y.line(10, format!("image: {}:{tag}", app.image));
            y.line(10, "command: [\"/app/migrate\", \"up\"]");
            resources(y, 10, 100, 128);
        }
    }
    y.line(6, "containers:");
    main_container(y, app, env, tag);
    for &i in &app.sidecars {
        sidecar(y, &SIDECARS[i], false);
    }
    y.line(6, "volumes:");
    y.block(
        8,
        &format!(
            "- name: config\n  configMap:\n    name: {0}-config\n- name: tmp\n  emptyDir:\n    \
             sizeLimit: 1Gi\n- name: secrets\n  secret:\n    secretName: {0}-secrets\n    defaultMode: 420",
            app.name
        ),
    );
}

fn workload(app: &App, env: &Env, rng: &mut Rng) -> Doc {
    let tag = format!(
        "v{}.{}.{}",
        rng.range(1, 4),
        rng.range(0, 40),
        rng.range(0, 20)
    );
    let mut y = head("apps/v1", app.kind());
    metadata(&mut y, app, env, &app.name);
    y.line(2, "annotations:");
    y.line(4, "reloader.stakater.com/auto: \"true\"");
    y.line(0, "spec:");
    if app.scaler == Scaler::Fixed {
        y.line(2, format!("replicas: {}", env.scale));
    } else if app.defect == Some(Defect::Replicas) {
        y.line(2, format!("replicas: {} # TODO: remove?", env.scale + 1));
    } else {
        y.line(2, "# replicas: managed by the autoscaler");
    }
    y.line(2, "revisionHistoryLimit: 5");
    y.line(2, "selector:");
    y.line(4, "matchLabels:");
    y.line(6, format!("app.kubernetes.io/name: {}", app.name));
    if app.stateful {
        y.line(2, format!("serviceName: {}-headless", app.name));
        y.line(2, "podManagementPolicy: Parallel");
        y.block(
            2,
            "updateStrategy:\n  type: RollingUpdate\n  rollingUpdate:\n    partition: 0",
        );
    } else {
        y.block(
            2,
            "strategy:\n  type: RollingUpdate\n  rollingUpdate:\n    maxSurge: 25%\n    maxUnavailable: 0",
        );
    }
    pod_template(&mut y, app, env, &tag);
    if app.stateful {
        y.block(
            2,
            &format!(
                "volumeClaimTemplates:\n  - metadata:\n      name: data\n    spec:\n      \
                 accessModes: [\"ReadWriteOnce\"]\n      storageClassName: premium-rwo\n      \
                 resources:\n        requests:\n          storage: {}Gi",
                10 * env.scale
            ),
        );
    }
    doc(app.kind(), y)
}

fn target_ref(y: &mut Yaml, app: &App, keda: bool) {
    let name = if app.defect == Some(Defect::MissingTarget) {
        format!("{}-v2", app.name)
    } else {
        app.name.clone()
    };
    y.line(2, "scaleTargetRef:");
    y.line(4, "apiVersion: apps/v1");
    if !keda || app.stateful {
        y.line(4, format!("kind: {}", app.kind()));
    }
    y.line(4, format!("name: {name}"));
}

fn replicas_range(env: &Env, rng: &mut Rng) -> (u64, u64) {
    match env.scale {
        1 => (1, 3),
        2 => (2, 6),
        _ => (3, rng.range(3, 12) * 5),
    }
}

fn hpa(app: &App, env: &Env, api_version: &'static str, rng: &mut Rng) -> Doc {
    let mut y = head(api_version, "HorizontalPodAutoscaler");
    metadata(&mut y, app, env, &app.name);
    y.line(0, "spec:");
    target_ref(&mut y, app, false);
    let (min, max) = replicas_range(env, rng);
    y.line(2, format!("minReplicas: {min}"));
    y.line(2, format!("maxReplicas: {max}"));
    if api_version == "autoscaling/v1" {
        y.line(
            2,
            format!("targetCPUUtilizationPercentage: {}", rng.range(5, 16) * 5),
        );
        return doc("HorizontalPodAutoscaler", y);
    }
    let mut details = app.rng();
    y.line(2, "metrics:");
    if details.chance(0.85) || app.defect == Some(Defect::NoRequests) {
        y.block(
            4,
            &format!(
                "- type: Resource\n  resource:\n    name: cpu\n    target:\n      \
                 type: Utilization\n      averageUtilization: {}",
                details.range(10, 16) * 5
            ),
        );
    }
    if details.chance(0.3) {
        y.block(
            4,
            &format!(
                "- type: Resource\n  resource:\n    name: memory\n    target:\n      \
                 type: AverageValue\n      averageValue: {}Mi",
                details.range(2, 16) * 64
            ),
        );
    }
    if details.chance(0.2) {
        y.block(
            4,
            &format!(
                "- type: Pods\n  pods:\n    metric:\n      name: http_requests_per_second\n    \
                 target:\n      type: AverageValue\n      averageValue: \"{}\"",
                details.range(5, 50) * 10
            ),
        );
    }
    if details.chance(0.15) {
        y.block(
            4,
            &format!(
                "- type: External\n  external:\n    metric:\n      \
                 name: pubsub.googleapis.com|subscription|num_undelivered_messages\n      \
                 selector:\n        matchLabels:\n          resource.labels.subscription_id: {}-events\n    \
                 target:\n      type: AverageValue\n      averageValue: \"{}\"",
                app.name,
                details.range(1, 20) * 5
            ),
        );
    }
    if api_version == "autoscaling/v2" && details.chance(0.15) {
        y.block(
            4,
            &format!(
                "- type: ContainerResource\n  containerResource:\n    name: cpu\n    container: {}\n    \
                 target:\n      type: Utilization\n      averageUtilization: 70",
                app.name
            ),
        );
    }
    if details.chance(0.6) || app.defect == Some(Defect::Behavior) {
        let (period, window) = match (app.defect, details.chance(0.5)) {
            (Some(Defect::Behavior), true) => (3600, 300),
            (Some(Defect::Behavior), false) => (60, 7200),
            _ => (60, details.range(1, 10) * 60),
        };
        y.block(
            2,
            &format!(
                "behavior:\n  scaleDown:\n    stabilizationWindowSeconds: {window}\n    policies:\n      \
                 - type: Percent\n        value: {}\n        periodSeconds: {period}\n    \
                 selectPolicy: Min\n  scaleUp:\n    stabilizationWindowSeconds: 0\n    policies:\n      \
                 - type: Percent\n        value: 100\n        periodSeconds: 15\n      \
                 - type: Pods\n        value: 4\n        periodSeconds: 15\n    selectPolicy: Max",
                details.range(1, 5) * 10
            ),
        );
    }
    doc("HorizontalPodAutoscaler", y)
}

fn scaled_object(app: &App, env: &Env, rng: &mut Rng) -> Doc {
    let mut y = head("keda.sh/v1alpha1", "ScaledObject");
    metadata(&mut y, app, env, &app.name);
    y.line(0, "spec:");
    target_ref(&mut y, app, true);
    let (min, max) = replicas_range(env, rng);
    y.line(2, format!("minReplicaCount: {min}"));
    y.line(2, format!("maxReplicaCount: {max}"));
    y.line(2, "pollingInterval: 30");
    y.line(2, "cooldownPeriod: 300");
    y.block(
        2,
        &format!(
            "triggers:\n  - type: kafka\n    metadata:\n      bootstrapServers: kafka-bootstrap.kafka:9092\n      \
             consumerGroup: {0}\n      topic: {0}-events\n      lagThreshold: \"50\"",
            app.name
        ),
    );
    doc("ScaledObject", y)
}

fn services(app: &App, env: &Env) -> Vec<Doc> {
    let mut docs = Vec::new();
    let mut y = head("v1", "Service");
    if app.rng().chance(0.05) {
        // Flow style, as some hand-written files have it.
        y.line(
            0,
            format!(
                "metadata: {{name: {0}, labels: {{app.kubernetes.io/name: {0}}}}}",
                app.name
            ),
        );
    } else {
        metadata(&mut y, app, env, &app.name);
    }
    y.line(0, "spec:");
    y.line(2, "type: ClusterIP");
    y.line(2, "selector:");
    y.line(4, format!("app.kubernetes.io/name: {}", app.name));
    y.block(
        2,
        "ports:\n  - name: http\n    port: 80\n    targetPort: http\n  - name: metrics\n    port: 9090\n    \
         targetPort: metrics",
    );
    docs.push(doc("Service", y));
    if app.stateful {
        let mut y = head("v1", "Service");
        metadata(&mut y, app, env, &format!("{}-headless", app.name));
        y.line(0, "spec:");
        y.line(2, "clusterIP: None");
        y.line(2, "publishNotReadyAddresses: true");
        y.line(2, "selector:");
        y.line(4, format!("app.kubernetes.io/name: {}", app.name));
        y.block(2, "ports:\n  - name: http\n    port: 8080");
        docs.push(doc("Service", y));
    }
    docs
}

/// A nested application configuration of about `budget` bytes, as YAML text.
fn app_config(rng: &mut Rng, budget: usize) -> String {
    let mut y = Yaml::default();
    y.block(
        0,
        "server:\n  port: 8080\n  shutdown: graceful\nmanagement:\n  endpoints:\n    web:\n      \
         exposure:\n        include: health,prometheus",
    );
    let mut sections = BTreeSet::from(["server".to_owned(), "management".to_owned()]);
    while y.len() < budget {
        let section = text::field_name(rng);
        if !sections.insert(section.clone()) {
            continue;
        }
        y.line(0, format!("{section}:"));
        let count = rng.range(2, 8);
        for key in text::words(rng, count) {
            match rng.range(0, 4) {
                0 => y.line(2, format!("{key}: {}", rng.range(1, 10_000))),
                1 => y.line(2, format!("{key}: {}", rng.chance(0.5))),
                2 => {
                    y.line(2, format!("{key}:"));
                    for _ in 0..rng.range(1, 5) {
                        y.line(4, format!("- {}", text::word(rng)));
                    }
                }
                _ => y.line(2, format!("{key}: \"{}\"", text::sentence(rng))),
            }
        }
    }
    y.0
}

fn config_maps(app: &App, env: &Env) -> Vec<Doc> {
    let mut rng = app.rng();
    let budget = if rng.chance(0.05) {
        rng.range(50, 400) as usize * 1000
    } else {
        rng.range(1, 8) as usize * 1000
    };
    let mut y = head("v1", "ConfigMap");
    metadata(&mut y, app, env, &format!("{}-config", app.name));
    y.line(0, "data:");
    y.line(2, "application.yaml: |");
    y.block(4, &app_config(&mut rng, budget));
    let config = doc("ConfigMap", y);
    vec![config, env_config_map(app, env)]
}

fn env_config_map(app: &App, env: &Env) -> Doc {
    let mut rng = app.rng();
    let mut y = head("v1", "ConfigMap");
    metadata(&mut y, app, env, &format!("{}-env", app.name));
    y.line(0, "data:");
    y.line(
        2,
        format!(
            "LOG_LEVEL: {}",
            if env.scale == 4 { "info" } else { "debug" }
        ),
    );
    let count = rng.range(3, 15);
    for key in text::words(&mut rng, count) {
        y.line(
            2,
            format!("{}: \"{}\"", key.to_uppercase(), text::word(&mut rng)),
        );
    }
    doc("ConfigMap", y)
}

fn secret(app: &App, env: &Env, rng: &mut Rng) -> Doc {
    let name = format!("{}-secrets", app.name);
    match rng.range(0, 9) {
        0..=4 => {
            let mut y = head("bitnami.com/v1alpha1", "SealedSecret");
            metadata(&mut y, app, env, &name);
            y.line(0, "spec:");
            y.line(2, "encryptedData:");
            let count = rng.range(2, 8);
            for key in text::words(rng, count) {
                let len = rng.range(180, 250) as usize * 4;
                y.line(4, format!("{key}: {}", text::chars(rng, BASE64, len)));
            }
            y.line(2, "template:");
            y.line(4, "type: Opaque");
            doc("SealedSecret", y)
        }
        5..=8 => {
            let mut y = head("external-secrets.io/v1beta1", "ExternalSecret");
            metadata(&mut y, app, env, &name);
            y.line(0, "spec:");
            y.line(2, "refreshInterval: 1h");
            y.block(
                2,
                "secretStoreRef:\n  kind: ClusterSecretStore\n  name: vault-backend\ndata:",
            );
            let count = rng.range(2, 8);
            for key in text::words(rng, count) {
                y.line(4, format!("- secretKey: {key}"));
                y.line(6, "remoteRef:");
                y.line(8, format!("key: {}/{}/{}", env.name, app.name, key));
            }
            doc("ExternalSecret", y)
        }
        _ => {
            let mut y = head("v1", "Secret");
            metadata(&mut y, app, env, &name);
            y.line(0, "type: Opaque");
            y.line(0, "data:");
            let count = rng.range(2, 6);
            for key in text::words(rng, count) {
                let len = rng.range(4, 16) as usize * 4;
                y.line(2, format!("{key}: {}", text::chars(rng, BASE64, len)));
            }
            doc("Secret", y)
        }
    }
}

fn rbac(app: &App, env: &Env) -> Vec<Doc> {
    let mut sa = head("v1", "ServiceAccount");
    metadata(&mut sa, app, env, &app.name);
    sa.line(0, "automountServiceAccountToken: false");
    let mut role = head("rbac.authorization.k8s.io/v1", "Role");
    metadata(&mut role, app, env, &app.name);
    role.block(
        0,
        "rules:\n  - apiGroups: [\"\"]\n    resources: [\"configmaps\", \"secrets\"]\n    \
         verbs: [\"get\", \"list\", \"watch\"]\n  - apiGroups: [\"coordination.k8s.io\"]\n    \
         resources: [\"leases\"]\n    verbs: [\"get\", \"create\", \"update\"]",
    );
    let mut binding = head("rbac.authorization.k8s.io/v1", "RoleBinding");
    metadata(&mut binding, app, env, &app.name);
    binding.block(
        0,
        &format!(
            "roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: {0}\nsubjects:\n  \
             - kind: ServiceAccount\n    name: {0}",
            app.name
        ),
    );
    vec![
        doc("ServiceAccount", sa),
        doc("Role", role),
        doc("RoleBinding", binding),
    ]
}

fn pdb(app: &App, env: &Env) -> Doc {
    let mut y = head("policy/v1", "PodDisruptionBudget");
    metadata(&mut y, app, env, &app.name);
    y.line(0, "spec:");
    y.line(2, "maxUnavailable: 1");
    y.line(2, "selector:");
    y.line(4, "matchLabels:");
    y.line(6, format!("app.kubernetes.io/name: {}", app.name));
    doc("PodDisruptionBudget", y)
}

fn ingress(app: &App, env: &Env) -> Doc {
    let host = format!("{}.{}.acme.example", app.name, app.team);
    let mut y = head("networking.k8s.io/v1", "Ingress");
    metadata(&mut y, app, env, &app.name);
    y.line(2, "annotations:");
    y.line(4, "cert-manager.io/cluster-issuer: letsencrypt-prod");
    y.line(4, "nginx.ingress.kubernetes.io/proxy-body-size: 8m");
    y.line(4, "nginx.ingress.kubernetes.io/proxy-read-timeout: \"120\"");
    y.block(
        0,
        &format!(
            "spec:\n  ingressClassName: nginx\n  tls:\n    - hosts:\n        - {host}\n      \
             secretName: {0}-tls\n  rules:\n    - host: {host}\n      http:\n        paths:\n          \
             - path: /\n            pathType: Prefix\n            backend:\n              service:\n                \
             name: {0}\n                port:\n                  name: http",
            app.name
        ),
    );
    doc("Ingress", y)
}

fn service_monitor(app: &App, env: &Env) -> Doc {
    let mut y = head("monitoring.coreos.com/v1", "ServiceMonitor");
    metadata(&mut y, app, env, &app.name);
    y.block(
        0,
        &format!(
            "spec:\n  selector:\n    matchLabels:\n      app.kubernetes.io/name: {}\n  endpoints:\n    \
             - port: metrics\n      interval: 30s\n      path: /metrics\n      metricRelabelings:\n        \
             - sourceLabels: [__name__]\n          regex: \"go_gc_.*|process_.*\"\n          action: drop",
            app.name
        ),
    );
    doc("ServiceMonitor", y)
}

fn prometheus_rule(app: &App, env: &Env) -> Doc {
    let mut y = head("monitoring.coreos.com/v1", "PrometheusRule");
    metadata(&mut y, app, env, &app.name);
    y.block(
        0,
        &format!(
            "spec:\n  groups:\n    - name: {0}.rules\n      rules:\n        - alert: {0}HighErrorRate\n          \
             expr: |\n            sum(rate(http_requests_total{{app=\"{0}\",code=~\"5..\"}}[5m]))\n              \
             / sum(rate(http_requests_total{{app=\"{0}\"}}[5m])) > 0.05\n          for: 10m\n          \
             labels:\n            severity: page\n          annotations:\n            \
             summary: \"{0}: more than 5% of requests fail\"\n            \
             runbook_url: https://runbooks.acme.example/{0}/high-error-rate\n        \
             - alert: {0}HighLatency\n          expr: |\n            histogram_quantile(0.99, \
             sum by (le) (rate(http_request_duration_seconds_bucket{{app=\"{0}\"}}[5m]))) > 1\n          \
             for: 15m\n          labels:\n            severity: ticket",
            app.name
        ),
    );
    doc("PrometheusRule", y)
}

fn vpa(app: &App, env: &Env) -> Doc {
    let mut y = head("autoscaling.k8s.io/v1", "VerticalPodAutoscaler");
    metadata(&mut y, app, env, &app.name);
    y.block(
        0,
        &format!(
            "spec:\n  targetRef:\n    apiVersion: apps/v1\n    kind: {}\n    name: {}\n  updatePolicy:\n    \
             updateMode: \"Off\"",
            app.kind(),
            app.name
        ),
    );
    doc("VerticalPodAutoscaler", y)
}

fn kustomization(env: &Env, files: &[String], app: &App, tag_rng: &mut Rng) -> Doc {
    let mut y = head("kustomize.config.k8s.io/v1beta1", "Kustomization");
    if let Some(namespace) = &env.namespace {
        y.line(0, format!("namespace: {namespace}"));
    }
    if env.name == "base" {
        y.line(0, "resources:");
        for file in files {
            y.line(2, format!("- {file}"));
        }
    } else {
        y.line(0, "resources:");
        y.line(2, "- ../../base");
        y.line(0, "patches:");
        for file in files {
            y.line(2, format!("- path: {file}"));
        }
        y.line(0, "images:");
        y.line(2, format!("- name: {}", app.image));
        y.line(4, format!("newTag: v1.{}.0", tag_rng.range(0, 60)));
    }
    y.block(
        0,
        &format!(
            "labels:\n  - includeSelectors: false\n    pairs:\n      team: {}",
            app.team
        ),
    );
    doc("Kustomization", y)
}

/// A Grafana dashboard: a ConfigMap holding a large JSON document.
fn dashboard(app: &App, rng: &mut Rng) -> Doc {
    let panels: Vec<serde_json::Value> = (0..rng.range(30, 150))
        .map(|i| {
            let metric = format!("{}_{}_total", text::word(rng), text::word(rng));
            json!({
                "id": i,
                "type": rng.pick(&["timeseries", "stat", "gauge", "table", "heatmap"]),
                "title": text::sentence(rng),
                "datasource": { "type": "prometheus", "uid": "${datasource}" },
                "gridPos": { "h": 8, "w": 12, "x": (i % 2) * 12, "y": (i / 2) * 8 },
                "fieldConfig": {
                    "defaults": {
                        "unit": rng.pick(&["short", "s", "bytes", "percentunit", "reqps"]),
                        "thresholds": { "mode": "absolute", "steps": [
                            { "color": "green", "value": null },
                            { "color": "red", "value": rng.range(50, 1000) }
                        ]}
                    },
                    "overrides": []
                },
                "targets": [{
                    "expr": format!(
                        "sum by (pod) (rate({metric}{{namespace=~\"$namespace\", app=\"{}\"}}[$__rate_interval]))",
                        app.name
                    ),
                    "legendFormat": "{{pod}}",
                    "refId": "A"
                }],
                "options": { "legend": { "displayMode": "list", "placement": "bottom" } }
            })
        })
        .collect();
    let dashboard = json!({
        "title": format!("{} / {}", app.team, app.name),
        "uid": text::chars(rng, HEX, 9),
        "schemaVersion": 39,
        "tags": [app.team, "generated"],
        "templating": { "list": [{ "name": "namespace", "type": "query", "query": "label_values(up, namespace)" }] },
        "panels": panels
    });
    let json = serde_json::to_string_pretty(&dashboard).expect("a JSON value serializes");
    let mut y = head("v1", "ConfigMap");
    y.line(0, "metadata:");
    y.line(2, format!("name: {}-dashboard", app.name));
    y.line(2, "namespace: monitoring");
    y.line(2, "labels:");
    y.line(4, "grafana_dashboard: \"1\"");
    y.line(0, "data:");
    y.line(2, format!("{}.json: |", app.name));
    y.block(4, &json);
    doc("ConfigMap", y)
}

/// How an app's files are laid out.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// One file per kind of object.
    Split,
    /// Everything in one multi-document file.
    Bundle,
    /// Everything in one `kind: List`.
    List,
    /// One JSON file per object.
    Json,
}

/// Writes the files of one directory: `(file name, documents)` pairs laid out
/// as the app's layout says, plus a kustomization.
fn write_dir(
    w: &mut Writer,
    dir: &str,
    app: &App,
    env: &Env,
    layout: Layout,
    files: Vec<(&str, Vec<Doc>)>,
) -> io::Result<()> {
    let mut names = Vec::new();
    match layout {
        Layout::Split => {
            for (name, docs) in files {
                let name = format!("{name}.yaml");
                w.write(&format!("{dir}/{name}"), Form::Yaml, docs)?;
                names.push(name);
            }
        }
        Layout::Bundle | Layout::List => {
            let (name, form) = match layout {
                Layout::List => ("resources.yaml", Form::List),
                _ => ("all.yaml", Form::Yaml),
            };
            let docs = files.into_iter().flat_map(|(_, docs)| docs).collect();
            w.write(&format!("{dir}/{name}"), form, docs)?;
            names.push(name.to_owned());
        }
        Layout::Json => {
            for (name, docs) in files {
                for (i, doc) in docs.into_iter().enumerate() {
                    let name = match i {
                        0 => format!("{name}.json"),
                        _ => format!("{name}-{i}.json"),
                    };
                    w.write(&format!("{dir}/{name}"), Form::Json, vec![doc])?;
                    names.push(name);
                }
            }
        }
    }
    let kustomization = kustomization(env, &names, app, &mut w.rng);
    w.write(
        &format!("{dir}/kustomization.yaml"),
        Form::Yaml,
        vec![kustomization],
    )
}

/// The workload and its autoscaler, if any, as files.
fn scaled_workload(app: &App, env: &Env, rng: &mut Rng) -> Vec<(&'static str, Vec<Doc>)> {
    let kind = if app.stateful {
        "statefulset"
    } else {
        "deployment"
    };
    let mut files = vec![(kind, vec![workload(app, env, rng)])];
    match app.scaler {
        Scaler::Hpa(api_version) => files.push(("hpa", vec![hpa(app, env, api_version, rng)])),
        Scaler::Keda => files.push(("scaledobject", vec![scaled_object(app, env, rng)])),
        Scaler::Fixed => {}
    }
    files
}

/// The objects of a complete app (base or platform component) in one environment.
fn full_app(w: &mut Writer, app: &App, env: &Env) -> Vec<(&'static str, Vec<Doc>)> {
    let rng = &mut w.rng;
    let mut files = scaled_workload(app, env, rng);
    files.push(("service", services(app, env)));
    files.push(("configmap", config_maps(app, env)));
    if rng.chance(0.4) {
        files.push(("rbac", rbac(app, env)));
    } else {
        files.push((
            "serviceaccount",
            rbac(app, env).into_iter().take(1).collect(),
        ));
    }
    if rng.chance(0.3) {
        files.push(("pdb", vec![pdb(app, env)]));
    }
    if rng.chance(0.4) {
        files.push(("ingress", vec![ingress(app, env)]));
    }
    if rng.chance(0.5) {
        files.push(("servicemonitor", vec![service_monitor(app, env)]));
    }
    if rng.chance(0.25) {
        files.push(("prometheusrule", vec![prometheus_rule(app, env)]));
    }
    if app.scaler != Scaler::Keda && rng.chance(0.05) {
        files.push(("vpa", vec![vpa(app, env)]));
    }
    files
}

fn record_defect(w: &mut Writer, app: &App) {
    if let Some(defect) = app.defect {
        w.defect(defect.name());
    }
}

/// Writes one team app: its base and an overlay per environment.
pub(crate) fn write_team_app(
    w: &mut Writer,
    team: &'static str,
    taken: &[Deployed],
) -> io::Result<Deployed> {
    let mut name = format!("{}-{}", text::word(&mut w.rng), w.rng.pick(NOUNS));
    while taken.iter().any(|a| a.name == name) {
        name = format!("{name}-{}", w.rng.range(2, 9));
    }
    let app = App::new(&mut w.rng, team, name);
    let layout = match w.rng.range(0, 99) {
        0..=1 => Layout::List,
        2..=3 => Layout::Json,
        4..=18 => Layout::Bundle,
        _ => Layout::Split,
    };
    let root = format!("teams/{team}/{}", app.name);
    let base = Env {
        name: "base",
        namespace: None,
        scale: 2,
    };
    let files = full_app(w, &app, &base);
    write_dir(w, &format!("{root}/base"), &app, &base, layout, files)?;
    record_defect(w, &app);
    let envs: Vec<&'static str> = if w.rng.chance(0.2) {
        vec!["staging", "prod"]
    } else {
        vec!["dev", "staging", "prod"]
    };
    for &env_name in &envs {
        let env = Env {
            name: env_name,
            namespace: Some(format!("{team}-{env_name}")),
            scale: match env_name {
                "dev" => 1,
                "staging" => 2,
                _ => 4,
            },
        };
        let rng = &mut w.rng;
        let mut files = scaled_workload(&app, &env, rng);
        files.push(("configmap", vec![env_config_map(&app, &env)]));
        files.push(("secret", vec![secret(&app, &env, rng)]));
        let layout = if layout == Layout::List {
            Layout::Split
        } else {
            layout
        };
        write_dir(
            w,
            &format!("{root}/overlays/{env_name}"),
            &app,
            &env,
            layout,
            files,
        )?;
        record_defect(w, &app);
    }
    if w.rng.chance(0.1) {
        let dashboard = dashboard(&app, &mut w.rng);
        w.write(
            &format!("teams/{team}/dashboards/{}.yaml", app.name),
            Form::Yaml,
            vec![dashboard],
        )?;
    }
    Ok(Deployed {
        team,
        name: app.name,
        envs,
    })
}

const PLATFORM: &[&str] = &[
    "ingress-nginx-controller",
    "external-dns",
    "metrics-server",
    "keda-operator",
    "cert-manager",
    "prometheus-operator",
    "grafana",
    "loki-gateway",
    "argocd-repo-server",
    "external-secrets",
];

/// Writes each cluster's namespaces and add-ons; an add-on is the same app
/// (scaling, containers, ...) in every cluster.
pub(crate) fn write_platform(w: &mut Writer, clusters: &[(&str, &str)]) -> io::Result<()> {
    let apps: Vec<App> = PLATFORM
        .iter()
        .map(|name| App::new(&mut w.rng, "platform", (*name).to_owned()))
        .collect();
    for &(cluster, env_name) in clusters {
        let mut docs = Vec::new();
        for team in TEAMS {
            let namespace = format!("{team}-{env_name}");
            let mut y = head("v1", "Namespace");
            y.line(0, "metadata:");
            y.line(2, format!("name: {namespace}"));
            y.line(2, "labels:");
            y.line(4, format!("team: {team}"));
            y.line(4, "pod-security.kubernetes.io/enforce: restricted");
            docs.push(doc("Namespace", y));
            let mut y = head("v1", "ResourceQuota");
            y.line(0, "metadata:");
            y.line(2, "name: compute");
            y.line(2, format!("namespace: {namespace}"));
            y.block(
                0,
                "spec:\n  hard:\n    requests.cpu: \"200\"\n    requests.memory: 400Gi\n    \
                 limits.memory: 800Gi\n    pods: \"1000\"",
            );
            docs.push(doc("ResourceQuota", y));
        }
        let path = format!("clusters/{cluster}/namespaces.yaml");
        w.write(&path, Form::Yaml, docs)?;
        for app in &apps {
            let env = Env {
                name: env_name,
                namespace: Some(app.name.trim_end_matches("-controller").to_owned()),
                scale: if env_name == "prod" { 4 } else { 2 },
            };
            let files = full_app(w, app, &env);
            let dir = format!("clusters/{cluster}/platform/{}", app.name);
            write_dir(w, &dir, app, &env, Layout::Split, files)?;
            record_defect(w, app);
        }
    }
    Ok(())
}

/// Writes a cluster's Argo CD Applications: one file per team.
pub(crate) fn write_argo_applications(
    w: &mut Writer,
    cluster: &str,
    env_name: &str,
    apps: &[Deployed],
) -> io::Result<()> {
    for team in TEAMS {
        let docs: Vec<Doc> = apps
            .iter()
            .filter(|a| a.team == *team && a.envs.contains(&env_name))
            .map(|a| {
                let mut y = head("argoproj.io/v1alpha1", "Application");
                y.line(0, "metadata:");
                y.line(2, format!("name: {}-{}-{env_name}", a.team, a.name));
                y.line(2, "namespace: argocd");
                y.line(2, "finalizers:");
                y.line(4, "- resources-finalizer.argocd.argoproj.io");
                y.block(
                    0,
                    &format!(
                        "spec:\n  project: {0}\n  source:\n    repoURL: https://github.com/acme/gitops.git\n    \
                         targetRevision: main\n    path: teams/{0}/{1}/overlays/{env_name}\n  destination:\n    \
                         name: {cluster}\n    namespace: {0}-{env_name}\n  syncPolicy:\n    automated:\n      \
                         prune: true\n      selfHeal: true\n    syncOptions:\n      - CreateNamespace=true\n      \
                         - ServerSideApply=true\n  ignoreDifferences:\n    - group: apps\n      kind: Deployment\n      \
                         jsonPointers:\n        - /spec/replicas",
                        a.team, a.name
                    ),
                );
                doc("Application", y)
            })
            .collect();
        if !docs.is_empty() {
            w.write(
                &format!("clusters/{cluster}/apps/{team}.yaml"),
                Form::Yaml,
                docs,
            )?;
        }
    }
    Ok(())
}
