"""Checks a rendering of the hpa-lint chart: every document is a Kubernetes
object, and the combination of values shows in it (argv: combination, file)."""
import sys

import yaml

combination, path = sys.argv[1], sys.argv[2]
with open(path) as f:
    objects = [doc for doc in yaml.safe_load_all(f) if doc is not None]

for obj in objects:
    assert isinstance(obj.get("apiVersion"), str) and isinstance(obj.get("kind"), str), obj
    assert obj.get("metadata", {}).get("name"), obj

by_kind = {}
for obj in objects:
    by_kind.setdefault(obj["kind"], []).append(obj)


def one(kind):
    found = by_kind.get(kind, [])
    assert len(found) == 1, f"{combination}: expected one {kind}, found {len(found)}"
    return found[0]


deployment = one("Deployment")
pod = deployment["spec"]["template"]["spec"]
container = pod["containers"][0]
validating = one("ValidatingWebhookConfiguration")
hooks = validating["webhooks"]

# Always: a hardened pod, probes, both configurations wired to the Service.
assert pod["securityContext"]["runAsNonRoot"] is True
assert pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault"
assert container["securityContext"]["readOnlyRootFilesystem"] is True
assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]
assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
assert container["resources"]["requests"]["cpu"] and container["resources"]["limits"]["memory"]
assert pod["topologySpreadConstraints"][0]["topologyKey"] == "kubernetes.io/hostname"
drain = next(int(a.partition("=")[2]) for a in container["args"] if a.startswith("--drain-delay="))
assert pod["terminationGracePeriodSeconds"] >= drain + 10  # the drain, then requests in flight
for hook in hooks:
    assert hook["sideEffects"] == "None" and hook["admissionReviewVersions"] == ["v1"]
    assert hook["matchPolicy"] == "Equivalent" and hook["timeoutSeconds"] <= 5
    excluded = hook["namespaceSelector"]["matchExpressions"][0]["values"]
    assert "kube-system" in excluded and "hpa-lint" in excluded

# Read-only RBAC for the caches, VPAs and KEDA ScaledObjects included (a cargo
# test checks the whole list against the kinds the webhook can watch); the
# reporting mode's writes in a role of their own (checked against the requests
# it makes by webhook/tests/reporting.rs), its Lease in a Role of the release's
# namespace.
roles = {role["metadata"]["name"]: role["rules"] for role in by_kind.get("ClusterRole", [])}
if roles:
    role_rules = roles["hpa-lint"]
    assert all(rule["verbs"] == ["get", "list", "watch"] for rule in role_rules), role_rules
    granted = {(g, r) for rule in role_rules for g in rule["apiGroups"] for r in rule["resources"]}
    assert {("autoscaling.k8s.io", "verticalpodautoscalers"), ("keda.sh", "scaledobjects")} <= granted
reporting = "--reporting=false" not in container["args"]
assert ("hpa-lint-reporting" in roles) == reporting and ("Role" in by_kind) == reporting, roles
if reporting:
    writes = {(g, r, v) for rule in roles["hpa-lint-reporting"] for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}
    assert ("openreports.io", "reports", "patch") in writes and ("events.k8s.io", "events", "create") in writes, writes
    assert not any(v in ("get", "update", "deletecollection", "*") for _, _, v in writes), writes
    lease = one("Role")
    assert lease["metadata"]["namespace"] == "hpa-lint"
    assert lease["rules"][1]["resourceNames"] == ["hpa-lint"], lease
    assert "--lease-name=hpa-lint" in container["args"]
    env = {e["name"]: e["valueFrom"]["fieldRef"]["fieldPath"] for e in container["env"]}
    assert env == {"POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace"}, env

cert_manager = combination.startswith("cert-manager")
if cert_manager:
    assert "Secret" not in by_kind
    certificate = one("Certificate")
    assert certificate["spec"]["dnsNames"][0] == "hpa-lint.hpa-lint.svc"
    assert validating["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] == "hpa-lint/hpa-lint"
    assert all("caBundle" not in h["clientConfig"] for h in hooks)
else:
    secret = one("Secret")
    assert all(h["clientConfig"]["caBundle"] == secret["data"]["ca.crt"] for h in hooks)
    assert secret["type"] == "kubernetes.io/tls"

expectations = {
    "default": lambda: deployment["spec"]["replicas"] == 2 and one("PodDisruptionBudget") and one("MutatingWebhookConfiguration"),
    "cert-manager": lambda: one("Issuer")["spec"] == {"selfSigned": {}},
    "cert-manager-issuer": lambda: "Issuer" not in by_kind and one("Certificate")["spec"]["issuerRef"]["kind"] == "ClusterIssuer",
    "warn-mode": lambda: "mode: warn" in one("ConfigMap")["data"]["config.yaml"],
    "excluded": lambda: "team-a" in hooks[0]["namespaceSelector"]["matchExpressions"][0]["values"]
    and hooks[0]["namespaceSelector"]["matchExpressions"][1]["key"] == "hpa-lint.io/ignore",
    "autoscaling": lambda: "replicas" not in deployment["spec"] and one("HorizontalPodAutoscaler"),
    "fail-closed": lambda: all(h["failurePolicy"] == "Fail" for h in hooks)
    and one("MutatingWebhookConfiguration")["webhooks"][0]["failurePolicy"] == "Ignore",
    "offline": lambda: "--offline" in container["args"] and "ClusterRole" not in by_kind and "--reporting=false" in container["args"],
    "reporting-off": lambda: "--reporting=false" in container["args"] and len(by_kind["ClusterRole"]) == 1,
    "reports": lambda: {c["spec"]["group"] for c in by_kind["CustomResourceDefinition"]} == {"openreports.io", "wgpolicyk8s.io"}
    and all(c["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep" for c in by_kind["CustomResourceDefinition"])
    and "--report-api=openreports" in container["args"] and "--metrics-per-hpa=false" in container["args"]
    and [r["alert"] for r in one("PrometheusRule")["spec"]["groups"][0]["rules"]] == ["HPAScalingInactive", "HPAPinnedAtMaxReplicas", "HPAMetricUnknown"],
    "monitoring": lambda: one("ServiceMonitor")["spec"]["endpoints"][0]["port"] == "metrics",
    "minimal": lambda: len(hooks) == 1 and "MutatingWebhookConfiguration" not in by_kind,
}
assert expectations[combination](), f"{combination}: expectation failed"
print(f"{combination}: {len(objects)} objects as expected")
