"""Kueue and Volcano queues: a workload that no queue admits, or that its queue never can.

* ``missing``: an accelerator workload without ``kueue.x-k8s.io/queue-name`` in a namespace that
  has LocalQueues: Kueue ignores it (unless ``manageJobsWithoutQueueName``), so it bypasses quota.
* ``unknown``: the label names a LocalQueue the namespace does not have (or whose ClusterQueue does
  not exist); a Volcano Job or PodGroup names a Volcano Queue that does not exist.
* ``quota``: the Workload's total request of a resource (every pod set × its count, as Kueue
  computes it, LimitRange defaults in) is above what the ClusterQueue can ever provide: nominal
  quota plus borrowing limit over the flavors that cover the resource (a single pod set gets one
  flavor); nothing when a cohort may lend without limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from kubelint_ml.engine.api import Hit, Unit, is_accelerator_template
from kubelint_ml.engine.cluster import QUEUE_LABEL, VOLCANO, ClusterQueueFact
from kubelint_ml.k8s.resources import effective_pod_request
from kubelint_ml.templates._cluster import admitted_pod_spec, cluster_of
from kubelint_ml.templates._common import show

UNIT = "object"
MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"
DEFAULTS = {"check": "missing"}
PARAMS = {
    "type": "object",
    "additionalProperties": False,
    "required": ["check"],
    "properties": {"check": {"enum": ["missing", "unknown", "quota"]}},
}
# Kueue's own objects and shared runtimes: not workloads a queue admits.
_NOT_WORKLOADS = {("trainer.kubeflow.org", "TrainingRuntime"), ("trainer.kubeflow.org", "ClusterTrainingRuntime")}


def queue_label(obj: Any, templates: list) -> tuple[str | None, tuple]:
    """The LocalQueue the workload names, and the path of the label (object, CronJob job or pod template)."""
    places: list[tuple[Any, tuple]] = [(obj.data.get("metadata"), ("metadata",))]
    if obj.kind == "CronJob":
        places.append((_dig(obj.data, "spec", "jobTemplate", "metadata"), ("spec", "jobTemplate", "metadata")))
    places += [(tpl.metadata, tpl.path + ("metadata",)) for tpl in templates]
    for meta, path in places:
        if not isinstance(meta, dict):
            continue
        for field in ("labels", "annotations"):  # the annotation is Kueue's older spelling
            values = meta.get(field)
            if isinstance(values, dict) and isinstance(values.get(QUEUE_LABEL), str) and values[QUEUE_LABEL]:
                return values[QUEUE_LABEL], path + (field, QUEUE_LABEL)
    return None, ()


def _dig(data: Any, *keys: str) -> Any:
    for k in keys:
        data = data.get(k) if isinstance(data, dict) else None
    return data


def _managed(ctx: Any) -> tuple[str, ...]:
    """The profile's ``kueueNamespaces``."""
    return tuple(getattr(getattr(ctx, "profile", None), "kueue_namespaces", None) or ())


def active(params: dict, ctx: Any) -> bool:
    """Whether the run knows anything this check compares with (asked once per run)."""
    cluster = cluster_of(ctx)
    which = params["check"]
    if which == "missing":
        return bool(_managed(ctx)) or (cluster is not None and bool(cluster.local_queues))
    if cluster is None:
        return False
    if which == "unknown":
        return bool(cluster.local_queues or cluster.volcano_queues)
    return bool(cluster.local_queues and cluster.cluster_queues)


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    cluster = cluster_of(ctx)
    obj = unit.obj
    which = params["check"]
    managed = _managed(ctx) if which == "missing" else ()
    if cluster is None and not managed:
        return None
    if (obj.group, obj.kind) in _NOT_WORKLOADS:
        return None
    if which == "unknown" and obj.group in (VOLCANO, "batch.volcano.sh"):
        return _volcano_queue(obj, cluster)
    ns = obj.ref.namespace
    if not ns and "*" not in managed:
        return None  # a workload without a namespace has no LocalQueues to name, nor to miss
    queues = cluster.local_queues_seen_from(ns, obj.file) if ns and cluster is not None else []
    by_profile = which == "missing" and ("*" in managed or (ns and ns in managed))
    # Nothing to miss, name or exceed where the namespace has no LocalQueue (see each part below);
    # a known namespace without one is still asked whether the label names one.
    if not queues and not by_profile and not (which == "unknown" and ns in cluster.namespaces):
        return None
    templates, name, path = _workload(unit, ctx)
    if not templates:
        return None
    if which == "missing":
        if name is not None or not any(is_accelerator_template(t) for t in templates):
            return None
        where = (
            f"namespace '{ns}' has {len(queues)} LocalQueue{'s' if len(queues) > 1 else ''}"
            if queues
            else "the profile's kueueNamespaces"
        )
        return [
            Hit(
                ("metadata",),
                f"no {QUEUE_LABEL} label: Kueue ignores this accelerator workload ({where})",
                detail=f"{obj.ref.display()}: Kueue manages the workloads of {where.replace('has', 'with')}, but this "
                f"one names no LocalQueue: Kueue ignores it unless manageJobsWithoutQueueName is set, so its pods "
                f"bypass the team's quota and fair sharing; add the label {QUEUE_LABEL}: "
                f"{queues[0] if queues else '<local-queue>'}",
            )
        ]
    if name is None or not ns:
        return None
    if which == "unknown":
        # The namespace's LocalQueues are known when it has some, or when its Namespace object is known
        # beside other LocalQueues (a dump of the cluster: the namespace has none).
        known = bool(queues) or (ns in cluster.namespaces and bool(cluster.local_queues))
        if known and name not in queues and (ns, name) not in cluster.local_queues:
            have = f"it has {', '.join(queues)}" if queues else "it has no LocalQueue"
            return [
                Hit(
                    path,
                    f"LocalQueue '{name}' does not exist in namespace '{ns}' ({have})",
                    at_value=True,
                    detail=f"{obj.ref.display()}: Kueue keeps a workload whose LocalQueue does not exist "
                    f"inadmissible, pending forever; "
                    + (f"use one of {', '.join(queues)}" if queues else "create the LocalQueue in this namespace"),
                )
            ]
        cq = cluster.local_queues.get((ns, name))
        if cq and cluster.cluster_queues and cq not in cluster.cluster_queues:
            return [
                Hit(
                    path,
                    f"LocalQueue '{name}' points at ClusterQueue '{cq}', which does not exist",
                    at_value=True,
                    detail=f"{obj.ref.display()}: LocalQueue {ns}/{name} names ClusterQueue '{cq}', not among "
                    f"the known ClusterQueues ({', '.join(sorted(cluster.cluster_queues))}): nothing admits it",
                )
            ]
        return None
    cq_name = cluster.local_queues.get((ns, name))
    cq = cluster.cluster_queues.get(cq_name) if cq_name else None
    if cq is None:
        return None
    return _quota(obj, templates, ctx, cq, path)


def _workload(unit: Unit, ctx: Any) -> tuple[list, str | None, tuple]:
    """The object's own pod templates and the LocalQueue it names (with the label's path), worked out
    once per object for the three queue checks (kept in the file's cache)."""
    obj = unit.obj
    cache = getattr(ctx, "cache", None)
    found = cache.get(("queue:workload", id(obj))) if cache is not None else None
    if found is not None and found[0] is obj:
        return found[1]
    templates = [t for t in unit.templates() if not t.shared]
    name, path = queue_label(obj, templates) if templates else (None, ())
    if cache is not None:
        cache[("queue:workload", id(obj))] = (obj, (templates, name, path))
    return templates, name, path


def _fits(tpl: Any, labels: Mapping[str, str] | None) -> bool:
    """The pod set may use a flavor: its nodeSelector does not contradict the flavor's nodeLabels."""
    selector = tpl.spec.get("nodeSelector")
    if not labels or not isinstance(selector, dict):
        return True
    return all(str(selector[k]) == v for k, v in labels.items() if k in selector)


def _per_pod(tpl: Any, ctx: Any, resource: str) -> Fraction:
    if resource == "pods":  # Kueue's count of pods
        return Fraction(1)
    return effective_pod_request(admitted_pod_spec(tpl, ctx), resource)


def _quota(obj: Any, templates: list, ctx: Any, cq: ClusterQueueFact, path: tuple) -> list[Hit] | None:
    flavor_labels = cluster_of(ctx).flavors
    hits = []
    for resource, quotas in sorted(cq.quotas.items()):
        sets = []
        for tpl in templates:
            count, per = _count(obj, tpl), _per_pod(tpl, ctx, resource)
            if count and per:
                usable = [q for q in quotas if _fits(tpl, flavor_labels.get(q.flavor))]
                sets.append((tpl, count, per, usable))
        usable_all = {id(q): q for *_, usable in sets for q in usable}.values()
        if cq.cohort and any(q.borrowing is None for q in usable_all):
            continue  # the cohort may lend any amount of its unused quota
        cap = {id(q): q.nominal + ((q.borrowing or 0) if cq.cohort else 0) for q in quotas}
        total = sum((Fraction(count) * per for _, count, per, _ in sets), Fraction(0))
        most = sum((cap[id(q)] for q in usable_all), Fraction(0))
        if total > most:
            flavors = ", ".join(q.flavor for q in usable_all) or "none"
            borrow = f" plus borrowing limits in cohort '{cq.cohort}'" if cq.cohort else " (no cohort to borrow from)"
            parts = " + ".join(f"{count} × {show(resource, per)}" for _, count, per, _ in sets)
            hits.append(
                Hit(
                    path,
                    f"needs {show(resource, total)} {resource} in all ({parts}) but ClusterQueue '{cq.name}' "
                    f"can provide at most {show(resource, most)}",
                    at_value=True,
                    detail=f"{obj.ref.display()}: Kueue admits a Workload only when all its pod sets fit; "
                    f"ClusterQueue '{cq.name}' ({cq.source}) has nominal quota{borrow} of "
                    f"{show(resource, most)} {resource} over the flavors the pods may use ({flavors}): the "
                    f"workload stays pending forever; lower the replicas or the request, or raise the quota",
                )
            )
            continue
        for tpl, count, per, usable in sets:  # a pod set gets one flavor of the resource group
            largest = max((cap[id(q)] for q in usable), default=Fraction(0))
            if Fraction(count) * per > largest:
                hits.append(
                    Hit(
                        path,
                        f"pod set {tpl.role or tpl.obj.ref.name} needs {show(resource, count * per)} {resource} "
                        f"({count} × {show(resource, per)}) but no flavor of ClusterQueue '{cq.name}' it may use "
                        f"provides more than {show(resource, largest)}",
                        at_value=True,
                        detail=f"{tpl.describe()}: Kueue assigns each pod set one flavor per resource group (one "
                        f"whose nodeLabels agree with its nodeSelector); the largest it may use in ClusterQueue "
                        f"'{cq.name}' gives {show(resource, largest)}: the workload stays pending forever",
                    )
                )
                break
    return hits or None


def _count(obj: Any, tpl: Any) -> int:
    """The pods Kueue counts for a pod set (a Job: its parallelism, or its completions when fewer), the
    fewest it may admit with partial admission."""
    count = tpl.replicas if tpl.replicas is not None else 1
    if obj.kind == "Job" and obj.group == "batch":
        completions = _dig(obj.data, "spec", "completions")
        if isinstance(completions, int) and not isinstance(completions, bool) and 0 <= completions < count:
            count = completions  # Kueue's podsCount: parallelism, or completions when fewer
        notes = _dig(obj.data, "metadata", "annotations")
        least = notes.get(MIN_PARALLELISM) if isinstance(notes, dict) else None
        if isinstance(least, str) and least.isdigit():
            count = min(count, int(least))
    return count


def _volcano_queue(obj: Any, cluster: Any) -> list[Hit] | None:
    if not cluster.volcano_queues or obj.kind not in ("Job", "PodGroup"):
        return None
    queue = _dig(obj.data, "spec", "queue")
    # Volcano makes the queue "default" when it is installed.
    if not isinstance(queue, str) or not queue or queue == "default" or queue in cluster.volcano_queues:
        return None
    names = sorted(cluster.volcano_queues)
    known = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return [
        Hit(
            ("spec", "queue"),
            f"Volcano Queue '{queue}' does not exist (known: {known})",
            at_value=True,
            detail=f"{obj.ref.display()}: Volcano rejects a job whose queue does not exist, and a PodGroup in an "
            f"unknown queue is never scheduled; use one of {known}",
        )
    ]
