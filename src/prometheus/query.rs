//! The PromQL of each metric: built in for `Resource` and `ContainerResource`
//! `cpu` and `memory`, from the cAdvisor series that metrics-server serves
//! too, summed over the target's pods; and the replicas kube-state-metrics
//! saw the HPA run.

use clap::ValueEnum;
use hpa_lint_rules::controller::Millis;
use hpa_lint_rules::controller::reconcile::MetricKind;

/// How the built-in queries find the pods of the HPA's target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PodMatch {
    /// kube-state-metrics' owner series: `kube_pod_owner`, and for a
    /// Deployment `kube_replicaset_owner`.
    Owner,
    /// The pod names the workload controllers give: `NAME-HASH-XXXXX` for a
    /// Deployment, `NAME-N` for a StatefulSet, `NAME-XXXXX` for a ReplicaSet.
    Name,
}

/// The HPA's scale target.
#[derive(Clone, Copy, Debug)]
pub struct Target<'a> {
    pub namespace: &'a str,
    pub kind: &'a str,
    pub name: &'a str,
}

/// A metric without a built-in query.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error(
    "the {kind} metric `{name}` needs a query: give its {what} with --query, e.g. --query '{name}={example}'"
)]
pub struct NoQuery {
    pub name: String,
    pub kind: &'static str,
    pub what: &'static str,
    pub example: String,
}

/// A PromQL string literal.
pub(crate) fn literal(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// `text` in a regular expression, matched literally (names hold `.`).
fn regex_escape(text: &str) -> String {
    text.chars().fold(String::new(), |mut out, c| {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
        out
    })
}

/// The characters of the random parts of generated names (Kubernetes'
/// `rand.String` and `SafeEncodeString`: no vowels, no 0, 1 or 3).
const NAME_CHARS: &str = "[bcdfghjklmnpqrstvwxz2456789]";

/// The `pod` pattern of the target's pods, by the names their controller
/// gives them. Names longer than 46 characters are cut in pod names: use
/// owner matching for those.
fn pod_name_pattern(target: &Target<'_>) -> String {
    let name = regex_escape(target.name);
    match target.kind {
        "StatefulSet" => format!("{name}-[0-9]+"),
        "ReplicaSet" => format!("{name}-{NAME_CHARS}{{5}}"),
        // Deployments, and resources that own ReplicaSets as they do (Argo
        // Rollouts): the ReplicaSet's pod-template-hash, then the pod's suffix.
        _ => format!("{name}-{NAME_CHARS}{{1,10}}-{NAME_CHARS}{{5}}"),
    }
}

/// One series per pod of the target, of value 1, from kube-state-metrics.
fn owned_pods(target: &Target<'_>) -> String {
    let namespace = literal(target.namespace);
    let kind = literal(target.kind);
    let name = literal(target.name);
    let through_replicasets = format!(
        "label_replace(kube_pod_owner{{namespace={namespace}, owner_kind=\"ReplicaSet\"}}, \"replicaset\", \"$1\", \"owner_name\", \"(.*)\") \
         * on (namespace, replicaset) group_left () \
         max by (namespace, replicaset) (kube_replicaset_owner{{namespace={namespace}, owner_kind={kind}, owner_name={name}}})"
    );
    let direct =
        format!("kube_pod_owner{{namespace={namespace}, owner_kind={kind}, owner_name={name}}}");
    let pods = match target.kind {
        "Deployment" => through_replicasets,
        "StatefulSet" | "ReplicaSet" => direct,
        // Another kind may own its pods, or ReplicaSets (Argo Rollouts).
        _ => format!("{direct} or on (namespace, pod) ({through_replicasets})"),
    };
    format!("max by (namespace, pod) ({pods})")
}

/// `0.25s`-free seconds, as PromQL durations are written.
fn duration(ms: Millis) -> String {
    if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

/// The built-in query of a `Resource` or `ContainerResource` metric on
/// `cpu` or `memory`: the target's total, summed over its pods' containers
/// (or the one container), in cores or bytes, of the containers there at
/// the time: CPU is the rate of `container_cpu_usage_seconds_total` over
/// `rate_interval`, memory the latest `container_memory_working_set_bytes`.
/// A container that is gone stops counting when its series goes stale.
pub fn builtin(
    metric: &MetricKind,
    target: &Target<'_>,
    pods: PodMatch,
    rate_interval: Millis,
) -> Result<String, NoQuery> {
    let (resource, container) = match metric {
        MetricKind::Resource {
            resource,
            container,
            ..
        } if resource == "cpu" || resource == "memory" => (resource.as_str(), container),
        _ => return Err(no_query(metric, target)),
    };
    let mut selector = format!("namespace={}", literal(target.namespace));
    match container {
        Some(container) => selector += &format!(", container={}", literal(container)),
        // The pod's own cgroup (`container=""`) and the pause container
        // (`POD`, with dockershim) would count the usage twice.
        None => selector += ", container!=\"\", container!=\"POD\"",
    }
    if pods == PodMatch::Name {
        selector += &format!(", pod=~{}", literal(&pod_name_pattern(target)));
    }
    let interval = duration(rate_interval);
    // What metrics-server reads at its latest scrape: the containers there
    // now (the series of one that is gone went stale), CPU as a rate.
    let (usage, operand) = if resource == "cpu" {
        let series = format!("container_cpu_usage_seconds_total{{{selector}}}");
        let usage = format!("rate({series}[{interval}]) and {series}");
        (usage.clone(), format!("({usage})"))
    } else {
        let usage = format!("container_memory_working_set_bytes{{{selector}}}");
        (usage.clone(), usage)
    };
    Ok(match pods {
        PodMatch::Name => format!("sum({usage})"),
        PodMatch::Owner => format!(
            "sum({operand} * on (namespace, pod) group_left () {})",
            owned_pods(target)
        ),
    })
}

fn no_query(metric: &MetricKind, target: &Target<'_>) -> NoQuery {
    let name = metric.name().to_owned();
    let namespace = literal(target.namespace);
    let (kind, what, example) = match metric {
        MetricKind::Resource { resource, .. } => (
            "Resource",
            "workload's total (only cpu and memory are built in)",
            format!(
                "sum(kube_pod_container_resource_requests{{namespace={namespace}, resource={}}})",
                literal(resource)
            ),
        ),
        MetricKind::Pods { .. } => (
            "Pods",
            "total over the target's pods (adapter rules are site-specific)",
            format!("sum(rate(http_requests_total{{namespace={namespace}}}[2m]))"),
        ),
        MetricKind::Value {
            external: false, ..
        }
        | MetricKind::AverageOfTotal {
            external: false, ..
        } => (
            "Object",
            "value as the metrics adapter reports it for the object",
            format!(
                "sum(rate(nginx_ingress_controller_requests{{namespace={namespace}, ingress=\"web\"}}[2m]))"
            ),
        ),
        MetricKind::Value { .. } | MetricKind::AverageOfTotal { .. } => (
            "External",
            "value as the metrics adapter reports it",
            "sum(rabbitmq_queue_messages_ready{queue=\"orders\"})".to_owned(),
        ),
        MetricKind::Invalid { .. } => ("invalid", "value", "…".to_owned()),
    };
    NoQuery {
        name,
        kind,
        what,
        example,
    }
}

/// The HPA's `status.currentReplicas` as kube-state-metrics exports it (the
/// `max` folds the copies of several kube-state-metrics replicas).
pub fn observed_replicas(namespace: &str, hpa: &str) -> String {
    format!(
        "max(kube_horizontalpodautoscaler_status_current_replicas{{namespace={}, horizontalpodautoscaler={}}})",
        literal(namespace),
        literal(hpa)
    )
}

#[cfg(test)]
mod tests {
    use hpa_lint_rules::controller::reconcile::ResourceTarget;

    use super::*;

    fn resource(resource: &str, container: Option<&str>) -> MetricKind {
        MetricKind::Resource {
            resource: resource.to_owned(),
            container: container.map(str::to_owned),
            target: ResourceTarget::Utilization(60),
        }
    }

    const WEB: Target<'static> = Target {
        namespace: "shop",
        kind: "Deployment",
        name: "web.v2",
    };

    #[test]
    fn cpu_by_name_is_a_rate_over_the_pods_containers() {
        let query = builtin(&resource("cpu", None), &WEB, PodMatch::Name, 60_000).unwrap();
        assert_eq!(
            query,
            r#"sum(rate(container_cpu_usage_seconds_total{namespace="shop", container!="", container!="POD", pod=~"web\\.v2-[bcdfghjklmnpqrstvwxz2456789]{1,10}-[bcdfghjklmnpqrstvwxz2456789]{5}"}[60s]) and container_cpu_usage_seconds_total{namespace="shop", container!="", container!="POD", pod=~"web\\.v2-[bcdfghjklmnpqrstvwxz2456789]{1,10}-[bcdfghjklmnpqrstvwxz2456789]{5}"})"#
        );
    }

    #[test]
    fn memory_of_a_container_by_owner() {
        let target = Target {
            kind: "StatefulSet",
            name: "cart",
            ..WEB
        };
        let query = builtin(
            &resource("memory", Some("app")),
            &target,
            PodMatch::Owner,
            15_000,
        )
        .unwrap();
        assert_eq!(
            query,
            r#"sum(container_memory_working_set_bytes{namespace="shop", container="app"} * on (namespace, pod) group_left () max by (namespace, pod) (kube_pod_owner{namespace="shop", owner_kind="StatefulSet", owner_name="cart"}))"#
        );
    }

    #[test]
    fn other_metrics_need_a_query_with_an_example() {
        let pods = MetricKind::Pods {
            name: "http_requests".to_owned(),
            target: 10_000,
        };
        let error = builtin(&pods, &WEB, PodMatch::Owner, 60_000).unwrap_err();
        assert_eq!(
            error.to_string(),
            r#"the Pods metric `http_requests` needs a query: give its total over the target's pods (adapter rules are site-specific) with --query, e.g. --query 'http_requests=sum(rate(http_requests_total{namespace="shop"}[2m]))'"#
        );
        let storage = builtin(
            &resource("ephemeral-storage", None),
            &WEB,
            PodMatch::Owner,
            60_000,
        );
        assert!(
            storage
                .unwrap_err()
                .to_string()
                .contains("only cpu and memory are built in")
        );
    }
}
