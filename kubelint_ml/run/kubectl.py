"""`audit --kubectl`: `kubectl get -o json` for each kind audit reads, with the user's kubeconfig.

Only `kubectl get` is run (read-only), once per kind so that a kind the user may not list (RBAC)
or the cluster does not serve (a CRD not installed) is named and skipped, never fatal. Cluster
facts come first (Nodes, LimitRanges, queues...), then the workloads, then the pods. kubectl's
own messages are passed on cut to one line; nothing of the kubeconfig is printed.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from typing import IO

# (resource, namespaced), in the order they are read
RESOURCES = (
    ("nodes", False),
    ("namespaces", False),
    ("priorityclasses.scheduling.k8s.io", False),
    ("limitranges", True),
    ("resourcequotas", True),
    ("persistentvolumeclaims", True),
    # DRA: what a pod's claims hold (served from 1.34; an older cluster does not serve the kinds: skipped)
    ("deviceclasses.resource.k8s.io", False),
    ("resourceslices.resource.k8s.io", False),
    ("resourceclaimtemplates.resource.k8s.io", True),
    ("resourceclaims.resource.k8s.io", True),
    ("computedomains.resource.nvidia.com", True),
    ("resourceflavors.kueue.x-k8s.io", False),
    ("clusterqueues.kueue.x-k8s.io", False),
    ("localqueues.kueue.x-k8s.io", True),
    ("workloadpriorityclasses.kueue.x-k8s.io", False),
    ("queues.scheduling.volcano.sh", False),
    ("podgroups.scheduling.volcano.sh", True),
    ("deployments.apps", True),
    ("statefulsets.apps", True),
    ("daemonsets.apps", True),
    ("replicasets.apps", True),
    ("cronjobs.batch", True),
    ("jobs.batch", True),
    ("jobsets.jobset.x-k8s.io", True),
    ("pytorchjobs.kubeflow.org", True),
    ("tfjobs.kubeflow.org", True),
    ("mpijobs.kubeflow.org", True),
    ("jobs.batch.volcano.sh", True),
    ("rayjobs.ray.io", True),
    ("rayclusters.ray.io", True),
    ("rayservices.ray.io", True),
    ("inferenceservices.serving.kserve.io", True),
    ("leaderworkersets.leaderworkerset.x-k8s.io", True),
    ("pods", True),
)


class KubectlError(Exception):
    """kubectl is missing or cannot reach the cluster (exit 2)."""


def _one_line(text: str) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line[:300]


def command(resource: str, namespaced: bool, context: str | None, namespace: str | None, all_ns: bool) -> list[str]:
    cmd = ["kubectl", "get", resource, "-o", "json"]
    if context:
        cmd += ["--context", context]
    if namespaced and all_ns:
        cmd.append("--all-namespaces")
    elif namespaced and namespace:
        cmd += ["--namespace", namespace]  # neither: kubectl's current namespace
    return cmd


def dumps(
    context: str | None, namespace: str | None, all_ns: bool, notes: list[str], warnings: list[str]
) -> Iterator[tuple[IO[bytes], str]]:
    """Each kind's `kubectl get -o json` output as a stream, with a display name; kinds that cannot
    be listed are skipped (RBAC: a warning; not served: a note)."""
    if shutil.which("kubectl") is None:
        raise KubectlError("kubectl is not on PATH: --kubectl runs `kubectl get`; install it, or pass dumps")
    reached = False
    for resource, namespaced in RESOURCES:
        cmd = command(resource, namespaced, context, namespace, all_ns)
        with tempfile.TemporaryFile() as err:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL)
            assert proc.stdout is not None
            try:
                yield proc.stdout, f"kubectl get {resource}"
                proc.stdout.read()  # whatever the reader left
            finally:
                proc.stdout.close()
                code = proc.wait()
            if code == 0:
                reached = True
                continue
            err.seek(0)
            message = _one_line(err.read().decode("utf-8", "replace"))
        low = message.lower()
        if "forbidden" in low:
            warnings.append(f"cannot list {resource} (RBAC: forbidden); skipped")
        elif "doesn't have a resource type" in low or "the server could not find" in low:
            notes.append(f"kubectl: the cluster does not serve {resource}; skipped")
        elif not reached:
            raise KubectlError(f"kubectl get {resource} failed: {message or f'exit {code}'}")
        else:
            warnings.append(f"kubectl get {resource} failed ({message or f'exit {code}'}); skipped")
