"""Runs hpa-webhook the way a chart rendering runs it and calls it the way the
API server would: the rendered container arguments, the rendered ConfigMap as
its configuration, the certificate Helm generated, and TLS verified against
the webhook configuration's caBundle for the Service's DNS name. Sends the
check of NOTES.txt (an HPA on a DaemonSet) to /validate and an HPA without
behavior to /mutate, then stops it with SIGTERM.
argv: rendering, hpa-webhook binary, expected mode (deny or warn)."""
import base64
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time

import yaml

path, binary, mode = sys.argv[1], sys.argv[2], sys.argv[3]
with open(path) as f:
    objects = [doc for doc in yaml.safe_load_all(f) if doc is not None]


def one(kind):
    (found,) = [o for o in objects if o["kind"] == kind]
    return found


container = one("Deployment")["spec"]["template"]["spec"]["containers"][0]
secret = one("Secret")["data"]
validating = one("ValidatingWebhookConfiguration")["webhooks"][0]["clientConfig"]
mutating = one("MutatingWebhookConfiguration")["webhooks"][0]["clientConfig"]
service = validating["service"]
hostname = f'{service["name"]}.{service["namespace"]}.svc'


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


work = tempfile.mkdtemp()
mounts = {"/tls/": f"{work}/tls/", "/config/": f"{work}/config/"}
for directory in mounts.values():
    os.makedirs(directory)
for name in ("tls.crt", "tls.key"):
    with open(f"{work}/tls/{name}", "wb") as f:
        f.write(base64.b64decode(secret[name]))
with open(f"{work}/config/config.yaml", "w") as f:
    f.write(one("ConfigMap")["data"]["config.yaml"])

port = free_port()
args = []
for arg in container["args"]:
    flag, _, value = arg.partition("=")
    for mount, local in mounts.items():
        value = value.replace(mount, local)
    if flag == "--listen":
        value = f"127.0.0.1:{port}"
    elif flag == "--metrics-listen":
        value = f"127.0.0.1:{free_port()}"
    args.append(f"{flag}={value}" if value else flag)
if "--offline" not in args:
    args.append("--offline")  # no cluster here: the caches stay empty

context = ssl.create_default_context(cadata=base64.b64decode(validating["caBundle"]).decode())


def call(method, url_path, body=None):
    """One HTTPS request as the API server makes it; (status, body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with context.wrap_socket(raw, server_hostname=hostname) as tls:
            data = json.dumps(body).encode() if body is not None else b""
            head = (
                f"{method} {url_path} HTTP/1.1\r\nHost: {hostname}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
                "Connection: close\r\n\r\n"
            )
            tls.sendall(head.encode() + data)
            response = b""
            while chunk := tls.recv(65536):
                response += chunk
    head, _, payload = response.partition(b"\r\n\r\n")
    return int(head.split()[1]), payload


def review(name, target_kind):
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": target_kind, "name": name},
            "maxReplicas": 3,
        },
    }
    gvk = {"group": "autoscaling", "version": "v2", "kind": "HorizontalPodAutoscaler"}
    gvr = {"group": "autoscaling", "version": "v2", "resource": "horizontalpodautoscalers"}
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "0f2c4e6a-8b1d-4c3e-9f5a-7b9d1e3f5a7c",
            "kind": gvk, "resource": gvr, "requestKind": gvk, "requestResource": gvr,
            "name": name, "namespace": "default", "operation": "CREATE",
            "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters"]},
            "object": hpa, "oldObject": None, "dryRun": True,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
        },
    }


webhook = subprocess.Popen([binary, *args], stdout=subprocess.DEVNULL)
try:
    deadline = time.monotonic() + 30
    while True:
        try:
            if call("GET", "/readyz")[0] == 200:
                break
        except OSError:
            pass
        assert webhook.poll() is None, f"hpa-webhook exited with {webhook.returncode}"
        assert time.monotonic() < deadline, "hpa-webhook not ready after 30 s"
        time.sleep(0.1)

    status, body = call("POST", validating["service"]["path"], review("hpa-lint-check", "DaemonSet"))
    answer = json.loads(body)["response"]
    assert status == 200 and answer["uid"] == "0f2c4e6a-8b1d-4c3e-9f5a-7b9d1e3f5a7c", body
    expected = "spec.scaleTargetRef.kind: DaemonSet has no `/scale` subresource"
    if mode == "deny":
        assert answer["allowed"] is False and answer["status"]["code"] == 422, answer
        assert answer["status"]["message"].startswith(
            f"hpa-lint denied HorizontalPodAutoscaler default/hpa-lint-check: target-not-scalable: {expected}"
        ), answer
    else:
        assert answer["allowed"] is True, answer
        assert any(w.startswith(f"target-not-scalable: {expected}") for w in answer["warnings"]), answer

    status, body = call("POST", mutating["service"]["path"], review("web", "Deployment"))
    answer = json.loads(body)["response"]
    patch = json.loads(base64.b64decode(answer["patch"]))
    assert status == 200 and answer["patchType"] == "JSONPatch", answer
    assert any(op["op"] == "add" and op["path"] == "/spec/behavior" for op in patch), patch

    webhook.send_signal(signal.SIGTERM)
    assert webhook.wait(timeout=15) == 0, f"exit code {webhook.returncode} after SIGTERM"
finally:
    if webhook.poll() is None:
        webhook.kill()
print(f"{os.path.basename(path)}: hpa-webhook ran with the rendered arguments, configuration and certificate ({mode})")
