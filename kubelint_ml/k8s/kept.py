"""Gated fields an object kept through the API server, and so the gates they show on.

With its feature gate off the API server drops a field on create (``dropDisabledFields`` in
pkg/api/pod/util.go for a Pod and, through ``DropDisabledTemplateFields``, for the pod template of a
Deployment, StatefulSet, DaemonSet, ReplicaSet, Job or CronJob; pkg/api/job/util.go for a Job's own
fields) before validation and before validating admission webhooks see the object. So a stored object
(``audit``) or one under review (``serve``) that still has the field shows the gate on, whatever the
profile's version defaults it to, and a rule should not say the field is dropped. Only the built-in kinds
count: a custom resource's pod template is stored as its CRD's schema keeps it, and the gate acts only
when its controller creates the pods.

Each key is the ``ctx.cache`` flag the rules read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _containers(spec: Mapping) -> list:
    return [c for key in ("containers", "initContainers") for c in _list(spec.get(key)) if isinstance(c, Mapping)]


def _pod_pids(spec: Mapping) -> bool:
    resources = spec.get("resources")
    return isinstance(resources, Mapping) and any(
        isinstance(resources.get(part), Mapping) and "pids" in resources[part] for part in ("limits", "requests")
    )


# ctx.cache flag -> whether a pod spec kept the field its gate guards
POD_FIELDS: dict[str, Callable[[Mapping], bool]] = {
    # GenericWorkload (dropDisabledWorkloadRef)
    "generic_workload": lambda spec: bool(spec.get("workloadRef") or spec.get("schedulingGroup")),
    # PerPodPIDLimit (alpha in 1.37)
    "per_pod_pid_limit": _pod_pids,
    # ContainerRestartRules (dropContainerRestartRules)
    "container_restart_rules": lambda spec: any(c.get("restartPolicyRules") for c in _containers(spec)),
    # ContainerStopSignals (a container's lifecycle.stopSignal)
    "container_stop_signals": lambda spec: any(
        isinstance(c.get("lifecycle"), Mapping) and c["lifecycle"].get("stopSignal") for c in _containers(spec)
    ),
    # ImageVolume (dropImageVolumes)
    "image_volume": lambda spec: any(isinstance(v, Mapping) and v.get("image") for v in _list(spec.get("volumes"))),
}
_BUILTIN_TEMPLATES = {"apps", "batch", ""}  # the groups whose workloads' pod templates are dropped as pods


def pod_spec_kept(spec: Any) -> set[str]:
    """The :data:`POD_FIELDS` flags a pod spec shows on."""
    if not isinstance(spec, Mapping):
        return set()
    return {key for key, test in POD_FIELDS.items() if test(spec)}


def object_kept(group: str, kind: str, data: Mapping) -> set[str]:
    """The flags a built-in object (a Pod, a workload's pod template, a Job's own spec) shows on."""
    if group not in _BUILTIN_TEMPLATES:
        return set()
    spec = data.get("spec")
    if not isinstance(spec, Mapping):
        return set()
    if kind == "Pod" and group == "":
        return pod_spec_kept(spec)
    job = spec
    if kind == "CronJob" and isinstance(spec.get("jobTemplate"), Mapping):
        job = spec["jobTemplate"].get("spec")
        job = job if isinstance(job, Mapping) else {}
    template = job.get("template")
    found = pod_spec_kept(template.get("spec")) if isinstance(template, Mapping) else set()
    if group == "batch" and kind in ("Job", "CronJob") and job.get("scheduling"):
        found.add("workload_with_job")  # WorkloadWithJob: a Job's own gang (pkg/api/job/util.go)
    return found
