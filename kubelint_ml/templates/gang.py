"""A gang that can never form: its minimum is more pods than the workload ever creates.

Volcano's webhook (``pkg/webhooks/admission/jobs/validate``) rejects a Job whose
``spec.minAvailable`` exceeds the sum of its tasks' ``replicas``, or a task whose
``minAvailable`` exceeds its ``replicas``; a Kubeflow job's
``runPolicy.schedulingPolicy.minAvailable`` above its replicas makes a PodGroup that is never
satisfied; a workload whose pods join a PodGroup (``scheduling.k8s.io/group-name``) with a
``minMember`` above the pods it creates waits forever; a Volcano Job or PodGroup whose gang needs
more of a resource at once than its Volcano Queue's ``capability`` never starts. Kubernetes' own
gang (KEP-4671): pods that name a Workload's pod group (``spec.workloadRef``, 1.35) or a PodGroup
(``spec.schedulingGroup``, from 1.36) whose ``gang.minCount`` is more than the pods the workload
creates for it wait at the scheduler's PreEnqueue barrier forever.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.k8s.quantity import QuantityError, parse_manifest_quantity
from kubelint_ml.k8s.resources import accelerator_requests, effective_pod_request
from kubelint_ml.k8s.version import parse_version
from kubelint_ml.k8s.workload import JOB_SCHEDULING, WORKLOAD_REF, field_served, gang_refs
from kubelint_ml.templates._cluster import cluster_of
from kubelint_ml.templates._common import show
from kubelint_ml.templates._priority import is_batch_job, job_spec, job_spec_path

UNIT = "object"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}
GROUP_ANNOTATIONS = ("scheduling.k8s.io/group-name", "scheduling.volcano.sh/group-name")


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    obj = unit.obj
    spec = obj.data.get("spec")
    if not isinstance(spec, dict):
        return None
    cluster = cluster_of(ctx)
    if obj.group == "batch.volcano.sh" and obj.kind == "Job":
        hits = _volcano(obj, spec) or []
        if cluster is not None and not hits and _capability(spec, cluster):
            where = ("spec", "queue") if spec.get("queue") else ("spec",)
            hits = _over_capability(obj, spec, _job_gang(unit), cluster, where)
        return hits or None
    if obj.group == "scheduling.volcano.sh" and obj.kind == "PodGroup":
        if cluster is None:
            return None
        needs = {str(k): q for k, q in _quantities(spec.get("minResources")).items()}
        return _over_capability(obj, spec, needs, cluster, ("spec", "minResources")) or None
    if is_batch_job(obj) or (obj.group, obj.kind) == ("jobset.x-k8s.io", "JobSet"):
        # (a Trainer runtime's Jobs take their parallelism from each TrainJob: not judged)
        job_gang = _job_scheduling(unit, ctx)
        if job_gang:
            return job_gang
    if cluster is not None and (cluster.workloads or cluster.native_pod_groups):
        native = _native(unit, cluster, ctx)
        if native:
            return native
    policy = spec.get("runPolicy")
    policy = policy.get("schedulingPolicy") if isinstance(policy, dict) else None
    gang_policy = isinstance(policy, dict) and obj.group == "kubeflow.org"
    if not gang_policy and (cluster is None or not cluster.pod_groups):
        return None  # no gang asked for, and no PodGroup to join
    templates = [t for t in unit.templates() if not t.shared]
    total = sum(t.replicas or 0 for t in templates)
    if gang_policy:
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
    if cluster is None or not cluster.pod_groups or not templates:
        return None
    for tpl in templates:
        notes = tpl.metadata.get("annotations") if isinstance(tpl.metadata, dict) else None
        labels = tpl.metadata.get("labels") if isinstance(tpl.metadata, dict) else None
        for field, values in (("annotations", notes), ("labels", labels)):
            group = next((values.get(k) for k in GROUP_ANNOTATIONS if isinstance(values, dict) and values.get(k)), None)
            if not isinstance(group, str):
                continue
            key = next(k for k in GROUP_ANNOTATIONS if values.get(k) == group)  # type: ignore[union-attr]
            minimum = cluster.pod_groups.get((obj.ref.namespace or "default", group))
            if minimum is not None and minimum > total:
                return [
                    Hit(
                        tpl.path + ("metadata", field, key),
                        f"PodGroup '{group}' needs {minimum} pods (minMember) but this workload creates {total}",
                        at_value=True,
                        detail=f"{obj.ref.display()}: its pods join PodGroup '{group}', whose minMember is "
                        f"{minimum}: the gang never forms and no pod starts; lower minMember or raise the replicas",
                    )
                ]
    return None


def _pods(tpl: Any) -> int | None:
    """The pods a template's controller runs at once: its replicas, a Job's parallelism capped by its
    completions (the Job controller starts no more pods than completions remain)."""
    count = tpl.replicas
    obj = tpl.obj
    if count is not None and obj.group == "batch" and obj.kind == "Job" and isinstance(obj.data.get("spec"), dict):
        completions = _int(obj.data["spec"].get("completions"))
        if completions is not None and completions < count:
            return completions
    return count


def _job_scheduling(unit: Unit, ctx: Any) -> list[Hit]:
    """A Job's own gang (``spec.scheduling.schedulingPolicy.gang.minCount``, 1.37) above its parallelism:
    the API server rejects it (``validateGangMinCount``)."""
    version = parse_version(getattr(getattr(ctx, "profile", None), "kubernetes_version", None))
    if version is not None and version < JOB_SCHEDULING:
        return []  # not a Job field yet
    out = []
    for tpl in unit.templates():
        js = job_spec(tpl)
        scheduling = js.get("scheduling")
        policy = scheduling.get("schedulingPolicy") if isinstance(scheduling, dict) else None
        gang = policy.get("gang") if isinstance(policy, dict) else None
        minimum = _int(gang.get("minCount")) if isinstance(gang, dict) else None
        parallelism = _int(js.get("parallelism")) if "parallelism" in js else 1
        if minimum is None or parallelism is None or minimum <= parallelism:
            continue
        out.append(
            Hit(
                job_spec_path(tpl) + ("scheduling", "schedulingPolicy", "gang", "minCount"),
                f"gang minCount {minimum} is more than the Job's parallelism {parallelism}",
                at_value=True,
                detail=f"{unit.obj.ref.display()}: a gang larger than the Job's pods never forms; the API server "
                "rejects a Job whose spec.scheduling gang minCount exceeds spec.parallelism (with the WorkloadWithJob "
                "gate on; off, its default, it drops spec.scheduling and there is no gang). Set minCount to at most "
                f"{parallelism}, or leave it out: it defaults to the parallelism",
            )
        )
    return out


def _native(unit: Unit, cluster: Any, ctx: Any) -> list[Hit]:
    """Pods that join a Kubernetes Workload's pod group or a PodGroup (scheduling.k8s.io) whose gang
    minCount is more than the pods this workload creates for it."""
    obj = unit.obj
    if obj.kind == "Pod" and obj.group == "":
        return []  # a gang of bare pods is many Pod objects: one of them says nothing of the count
    namespace = obj.ref.namespace or "default"
    version = parse_version(getattr(getattr(ctx, "profile", None), "kubernetes_version", None))
    gangs: dict[tuple, list] = {}
    for tpl in unit.templates():
        for ref in gang_refs(tpl.spec):
            if ref.name and (ref.group or ref.field != WORKLOAD_REF) and field_served(ref.field, version):
                gangs.setdefault((ref.field, ref.name, ref.group, ref.replica_key), []).append((tpl, ref))
    for (field, name, group, _), members in gangs.items():
        if field == WORKLOAD_REF:
            minimum = cluster.workloads.get((namespace, name), {}).get(group)
        else:
            minimum = cluster.native_pod_groups.get((namespace, name))
        counts = [_pods(tpl) for tpl, _ in members]
        if minimum is None or any(c is None for c in counts):
            continue
        total = sum(c for c in counts if c is not None)
        if minimum > total:
            tpl, ref = members[0]
            return [
                Hit(
                    tpl.spec_path + (field, ref.name_key),
                    f"{ref.describe()} needs {minimum} pods (gang minCount) but this workload creates {total}",
                    at_value=True,
                    detail=f"{obj.ref.display()}: its pods join {ref.describe()}, whose gang minCount is {minimum}: "
                    f"the scheduler holds them until {minimum} pods of the group exist, so the gang never forms "
                    f"and no pod starts; lower minCount to at most {total} or raise the pods",
                )
            ]
    return []


def _quantities(raw: Any) -> dict[str, Fraction]:
    out = {}
    for k, v in raw.items() if isinstance(raw, dict) else ():
        try:
            out[str(k)] = parse_manifest_quantity(v).value
        except (QuantityError, ValueError, TypeError):
            continue
    return out


def _job_gang(unit: Unit) -> dict[str, Fraction]:
    """What a Volcano Job's gang needs at once when it is the whole job (minAvailable unset or the sum
    of the replicas): every pod's request."""
    spec = unit.obj.data.get("spec")
    tasks = spec.get("tasks") if isinstance(spec, dict) else None
    tasks = [t for t in tasks if isinstance(t, dict)] if isinstance(tasks, list) else []
    total = sum(_int(t.get("replicas")) or 0 for t in tasks)
    wanted = _int(spec.get("minAvailable")) if isinstance(spec, dict) else None
    if wanted is not None and wanted != total:
        return {}  # Volcano picks which pods make the gang: not judged
    needs: dict[str, Fraction] = {}
    for tpl in unit.templates():
        count = tpl.replicas or 0
        for res in _RESOURCES:
            per = effective_pod_request(tpl.spec, res)
            if per and count:
                needs[res] = needs.get(res, Fraction(0)) + per * count
    for name in sorted({n for tpl in unit.templates() for n in accelerator_requests(tpl.spec)}):
        needs[name] = Fraction(
            sum(accelerator_requests(t.spec).get(name, 0) * (t.replicas or 0) for t in unit.templates())
        )
    return needs


_RESOURCES = ("cpu", "memory")


def _capability(spec: Mapping, cluster: Any) -> dict[str, Fraction] | None:
    """The capability of the Volcano Queue the job or PodGroup names (``default`` when none)."""
    queue = spec.get("queue") if isinstance(spec.get("queue"), str) and spec.get("queue") else "default"
    return cluster.volcano_queues.get(queue)


def _over_capability(obj: Any, spec: Mapping, needs: dict[str, Fraction], cluster: Any, path: tuple) -> list[Hit]:
    """The gang needs more of a resource at once than its Volcano Queue's capability ever allows."""
    queue = spec.get("queue") if isinstance(spec.get("queue"), str) and spec.get("queue") else "default"
    capability = _capability(spec, cluster)
    if not capability:
        return []
    for res in sorted(needs):
        cap = capability.get(res)
        if cap is not None and needs[res] > cap:
            return [
                Hit(
                    path + ((res,) if path[-1] == "minResources" else ()),
                    f"the gang needs {show(res, needs[res])} {res} at once, above Volcano Queue '{queue}' "
                    f"capability {show(res, cap)}",
                    at_value=True,
                    detail=f"{obj.ref.display()}: Volcano starts a gang only when all of it fits in its queue; "
                    f"Queue '{queue}' is capped at {show(res, cap)} {res}, so the gang never forms; shrink the "
                    f"job or raise the queue's capability",
                )
            ]
    return []


def _volcano(obj: Any, spec: Mapping) -> list[Hit] | None:
    tasks = spec.get("tasks")
    tasks = [t for t in tasks if isinstance(t, dict)] if isinstance(tasks, list) else []
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
