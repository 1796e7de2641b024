"""API objects as a cluster returns them (admitted: defaults filled in, status, ownerReferences,
the service-account token volume), and the `kubectl get -o json` List that holds them.

kubectl prints a List as ``{"apiVersion": "v1", "items": [...], "kind": "List", "metadata": {...}}``
indented by four spaces (its JSON printer is ``json.MarshalIndent(obj, "", "    ")``)."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def uid(name: str) -> str:
    h = hashlib.sha1(name.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def owner(api: str, kind: str, name: str) -> dict:
    return {
        "apiVersion": api,
        "blockOwnerDeletion": True,
        "controller": True,
        "kind": kind,
        "name": name,
        "uid": uid(f"{kind}/{name}"),
    }


def container(name: str, image: str, resources: dict, env: list | None = None, token: str = "abcde") -> dict:
    c: dict[str, Any] = {"image": image, "imagePullPolicy": "IfNotPresent", "name": name}
    if env:
        c["env"] = env
    c.update(
        {
            "resources": resources,
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
            "volumeMounts": [
                {
                    "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                    "name": f"kube-api-access-{token}",
                    "readOnly": True,
                }
            ],
        }
    )
    return c


def pod(
    name: str,
    namespace: str,
    containers: list[dict],
    *,
    owned_by: dict | None = None,
    labels: dict | None = None,
    node: str = "node-1",
    token: str = "abcde",
    priority_class: str | None = None,
    restart: str = "Always",
    extra_spec: dict | None = None,
) -> dict:
    meta: dict[str, Any] = {"creationTimestamp": "2026-11-20T10:00:00Z"}
    if labels:
        meta["labels"] = labels
    meta.update({"name": name, "namespace": namespace})
    if owned_by:
        meta["ownerReferences"] = [owned_by]
    meta.update({"resourceVersion": "123456", "uid": uid(f"{namespace}/{name}")})
    spec: dict[str, Any] = {
        "containers": containers,
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": True,
        "nodeName": node,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
    }
    if priority_class:
        spec["priorityClassName"] = priority_class
    spec.update(
        {
            "restartPolicy": restart,
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "serviceAccount": "default",
            "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30,
            "tolerations": [
                {
                    "effect": "NoExecute",
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "tolerationSeconds": 300,
                },
                {
                    "effect": "NoExecute",
                    "key": "node.kubernetes.io/unreachable",
                    "operator": "Exists",
                    "tolerationSeconds": 300,
                },
            ],
            "volumes": [
                {
                    "name": f"kube-api-access-{token}",
                    "projected": {
                        "defaultMode": 420,
                        "sources": [
                            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                            {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
                        ],
                    },
                }
            ],
        }
    )
    if extra_spec:
        spec.update(extra_spec)
    status = {
        "conditions": [
            {"lastProbeTime": None, "lastTransitionTime": "2026-11-20T10:00:05Z", "status": "True", "type": "Ready"}
        ],
        "containerStatuses": [
            {
                "containerID": f"containerd://{hashlib.sha256(name.encode()).hexdigest()}",
                "image": c["image"],
                "imageID": f"{c['image']}@sha256:{hashlib.sha256(c['image'].encode()).hexdigest()}",
                "name": c["name"],
                "ready": True,
                "restartCount": 0,
                "started": True,
                "state": {"running": {"startedAt": "2026-11-20T10:00:04Z"}},
            }
            for c in containers
        ],
        "hostIP": "10.0.0.1",
        "phase": "Running",
        "podIP": "10.1.0.7",
        "qosClass": "Burstable",
        "startTime": "2026-11-20T10:00:00Z",
    }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def obj(api: str, kind: str, name: str, namespace: str | None, spec: dict, **meta: Any) -> dict:
    m: dict[str, Any] = {"creationTimestamp": "2026-11-20T09:59:00Z", "generation": 1}
    m.update(meta)
    m["name"] = name
    if namespace:
        m["namespace"] = namespace
    m.update({"resourceVersion": "1000", "uid": uid(f"{namespace}/{kind}/{name}")})
    return {"apiVersion": api, "kind": kind, "metadata": m, "spec": spec}


def node(name: str, labels: dict, allocatable: dict, taints: list | None = None) -> dict:
    n = obj("v1", "Node", name, None, {"podCIDR": "10.1.0.0/24", **({"taints": taints} if taints else {})})
    n["metadata"]["labels"] = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", **labels}
    n["status"] = {"allocatable": allocatable, "capacity": allocatable}
    return n


def kubectl_list(items: list[dict]) -> str:
    """What `kubectl get ... -o json` prints for these items."""
    return (
        json.dumps({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}, indent=4)
        + "\n"
    )
