"""A gang that can never form: its minimum is more pods than the workload ever creates.

Volcano's webhook (``pkg/webhooks/admission/jobs/validate``) rejects a Job whose
``spec.minAvailable`` exceeds the sum of its tasks' ``replicas``, or a task whose
``minAvailable`` exceeds its ``replicas``; a Kubeflow job's
``runPolicy.schedulingPolicy.minAvailable`` above its replicas makes a PodGroup that is never
satisfied; a workload whose pods join a PodGroup (``scheduling.k8s.io/group-name``) with a
``minMember`` above the pods it creates waits forever.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.templates._cluster import cluster_of

UNIT = "object"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}
GROUP_ANNOTATIONS = ("scheduling.k8s.io/group-name", "scheduling.volcano.sh/group-name")


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    obj = unit.obj
    spec = obj.data.get("spec")
    if not isinstance(spec, Mapping):
        return None
    if obj.group == "batch.volcano.sh" and obj.kind == "Job":
        return _volcano(obj, spec)
    policy = spec.get("runPolicy")
    policy = policy.get("schedulingPolicy") if isinstance(policy, Mapping) else None
    templates = [t for t in unit.templates() if not t.shared]
    total = sum(t.replicas or 0 for t in templates)
    if isinstance(policy, Mapping) and obj.group == "kubeflow.org":
        wanted = _int(policy.get("minAvailable"))
        if wanted is not None and templates and wanted > total:
            return [
                Hit(
                    ("spec", "runPolicy", "schedulingPolicy", "minAvailable"),
                    f"gang minAvailable {wanted} is more than the {total} pods the job creates",
                    at_value=True,
                    detail=f"{obj.ref.display()}: the PodGroup made for this job waits for {wanted} pods, "
                    f"but its replicas add up to {total}: the gang never forms and no pod starts; "
                    f"set minAvailable to at most {total}",
                )
            ]
    cluster = cluster_of(ctx)
    if cluster is None or not cluster.pod_groups or not templates:
        return None
    for tpl in templates:
        notes = tpl.metadata.get("annotations") if isinstance(tpl.metadata, Mapping) else None
        labels = tpl.metadata.get("labels") if isinstance(tpl.metadata, Mapping) else None
        for where, values in (("annotations", notes), ("labels", labels)):
            group = next(
                (values.get(k) for k in GROUP_ANNOTATIONS if isinstance(values, Mapping) and values.get(k)), None
            )
            if not isinstance(group, str):
                continue
            key = next(k for k in GROUP_ANNOTATIONS if values.get(k) == group)  # type: ignore[union-attr]
            minimum = cluster.pod_groups.get((obj.ref.namespace or "default", group))
            if minimum is not None and minimum > total:
                return [
                    Hit(
                        tpl.path + ("metadata", where, key),
                        f"PodGroup '{group}' needs {minimum} pods (minMember) but this workload creates {total}",
                        at_value=True,
                        detail=f"{obj.ref.display()}: its pods join PodGroup '{group}', whose minMember is "
                        f"{minimum}: the gang never forms and no pod starts; lower minMember or raise the replicas",
                    )
                ]
    return None


def _volcano(obj: Any, spec: Mapping) -> list[Hit] | None:
    tasks = spec.get("tasks")
    tasks = [t for t in tasks if isinstance(t, Mapping)] if isinstance(tasks, list) else []
    hits = []
    for i, task in enumerate(tasks):
        replicas, minimum = _int(task.get("replicas")) or 0, _int(task.get("minAvailable"))
        if minimum is not None and minimum > replicas:
            hits.append(
                Hit(
                    ("spec", "tasks", i, "minAvailable"),
                    f"task '{task.get('name', i)}' minAvailable {minimum} is more than its {replicas} replicas",
                    at_value=True,
                    detail=f"{obj.ref.display()}: Volcano rejects a task whose minAvailable is greater than its "
                    f"replicas; set it to at most {replicas}",
                )
            )
    total = sum(_int(t.get("replicas")) or 0 for t in tasks)
    wanted = _int(spec.get("minAvailable"))
    if wanted is not None and tasks and wanted > total:
        hits.append(
            Hit(
                ("spec", "minAvailable"),
                f"gang minAvailable {wanted} is more than the {total} replicas of its tasks",
                at_value=True,
                detail=f"{obj.ref.display()}: Volcano rejects a job whose minAvailable is greater than the sum of "
                f"its tasks' replicas ({total}); the gang can never form",
            )
        )
    return hits or None
