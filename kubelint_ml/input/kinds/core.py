"""Kubernetes' own kinds with a pod template (``core/v1`` Pod, PodTemplate, ReplicationController;
``batch/v1`` Job, CronJob; ``apps/v1`` Deployment, StatefulSet, ReplicaSet, DaemonSet), as the API
defines them (kubernetes/api, ``core/v1/types.go``, ``batch/v1/types.go``, ``apps/v1/types.go``,
stable API). A Job's pods are its ``parallelism``; a DaemonSet's, one per node (unknown here)."""

from __future__ import annotations

from collections.abc import Iterator

from kubelint_ml.input.kinds.base import KindInfo, TemplateSpot, at


def _pod(obj: dict) -> Iterator[TemplateSpot]:
    yield (), "", 1


KINDS: dict[tuple[str, str], KindInfo] = {
    ("", "Pod"): KindInfo(_pod, True),
    ("", "PodTemplate"): KindInfo(at("template"), False),
    ("", "ReplicationController"): KindInfo(at("spec", "template", replicas_key=("spec", "replicas")), False),
    ("batch", "Job"): KindInfo(at("spec", "template", replicas_key=("spec", "parallelism")), True),
    ("batch", "CronJob"): KindInfo(
        at("spec", "jobTemplate", "spec", "template", replicas_key=("spec", "jobTemplate", "spec", "parallelism")),
        True,
    ),
    ("apps", "Deployment"): KindInfo(at("spec", "template", replicas_key=("spec", "replicas")), False),
    ("apps", "StatefulSet"): KindInfo(at("spec", "template", replicas_key=("spec", "replicas")), False),
    ("apps", "ReplicaSet"): KindInfo(at("spec", "template", replicas_key=("spec", "replicas")), False),
    ("apps", "DaemonSet"): KindInfo(at("spec", "template", default=None), False),
}
