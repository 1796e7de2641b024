"""Where a workload names its priority, and Job-spec helpers (docs/k8s-facts.md §5, §8).

Several fields name a PriorityClass, and they reach different schedulers:

* ``priorityClassName`` in a pod template: the pod's own priority, used by
  kube-scheduler preemption (and by Volcano, KAI and Kueue as a fallback).
* Volcano Job ``spec.priorityClassName``: the PodGroup's priority, and
  copied into every pod whose template has none.
* KubeRay label ``ray.io/priority-class-name`` on a RayCluster/RayJob/
  RayService: with KubeRay's Volcano batch-scheduler integration it goes into
  the PodGroup and into each pod's ``priorityClassName``
  (ray-operator ``batchscheduler/volcano`` ``AddMetadataToPod``).
* KAI Scheduler label ``priorityClassName`` on the workload or its pods:
  read by KAI (the pods' scheduler when ``schedulerName: kai-scheduler``).
* Kubeflow ``spec.runPolicy.schedulingPolicy.priorityClass``: copied only
  into the gang-scheduling PodGroup, never into the pods.

The Kueue label ``kueue.x-k8s.io/priority-class`` names a Kueue
WorkloadPriorityClass, not a PriorityClass.
"""

from __future__ import annotations

from typing import Any

from kubelint_ml.engine.context import Facts
from kubelint_ml.input.objects import K8sObject, dig
from kubelint_ml.input.workloads import PodTemplate
from kubelint_ml.k8s.quantity import PLACEHOLDER
from kubelint_ml.records import Frozen

KUEUE_LABEL = "kueue.x-k8s.io/priority-class"
RAY_LABEL = "ray.io/priority-class-name"
KAI_LABEL = "priorityClassName"
KAI_SCHEDULER = "kai-scheduler"

_EMPTY = Facts()


def facts_of(ctx: Any) -> Facts:
    facts = getattr(ctx, "facts", None)
    return facts if facts is not None else _EMPTY


def named(value: Any) -> str | None:
    """A set class name: a non-empty string (possibly an unrendered placeholder)."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    return text or None


def is_placeholder(value: str) -> bool:
    return bool(PLACEHOLDER.match(value))


class PriorityRef(Frozen):
    """One place that names a priority class."""

    source: str  # "pod" | "volcano" | "ray" | "kai" | "kubeflow" | "kueue"
    name: str
    path: tuple  # from the object's root, to the value
    field: str  # human description of the field
    __slots__ = _fields = ("source", "name", "path", "field")

    def __init__(self, source: str, name: str, path: tuple, field: str) -> None:
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "field", field)

    @property
    def placeholder(self) -> bool:
        """An unrendered template variable ($PRIORITY, ${CLASS}): its real value is unknown."""
        return is_placeholder(self.name)


def is_volcano_job(obj: K8sObject) -> bool:
    return (obj.group, obj.kind) in (
        ("batch.volcano.sh", "Job"),
        ("flow.volcano.sh", "JobTemplate"),
        ("batch.volcano.sh", "CronJob"),
    )


def volcano_job_spec_path(obj: K8sObject) -> tuple:
    """Where a Volcano Job's spec is: the object's own, or a Volcano CronJob's jobTemplate."""
    return ("spec", "jobTemplate", "spec") if obj.kind == "CronJob" else ("spec",)


def is_ray(obj: K8sObject) -> bool:
    return obj.group == "ray.io"


def is_kubeflow_v1(obj: K8sObject) -> bool:
    return obj.group == "kubeflow.org"


def object_refs(obj: K8sObject) -> list[PriorityRef]:
    """Object-level priority fields (not per pod template)."""
    out: list[PriorityRef] = []
    data = obj.data
    if is_volcano_job(obj):
        at = volcano_job_spec_path(obj) + ("priorityClassName",)
        name = named(dig(data, *at))
        if name:
            out.append(PriorityRef("volcano", name, at, ".".join(at)))
    if is_kubeflow_v1(obj):
        name = named(dig(data, "spec", "runPolicy", "schedulingPolicy", "priorityClass"))
        if name:
            out.append(
                PriorityRef(
                    "kubeflow",
                    name,
                    ("spec", "runPolicy", "schedulingPolicy", "priorityClass"),
                    "spec.runPolicy.schedulingPolicy.priorityClass",
                )
            )
    # A RayCronJob's RayJobs carry none of its labels (KubeRay constructRayJob): neither KubeRay's nor
    # Kueue's priority label on it reaches the pods.
    labels = {} if (obj.group, obj.kind) == ("ray.io", "RayCronJob") else obj.labels
    if is_ray(obj):
        name = named(labels.get(RAY_LABEL))
        if name:
            out.append(PriorityRef("ray", name, ("metadata", "labels", RAY_LABEL), f"label {RAY_LABEL}"))
    name = named(labels.get(KUEUE_LABEL))
    if name:
        out.append(PriorityRef("kueue", name, ("metadata", "labels", KUEUE_LABEL), f"label {KUEUE_LABEL}"))
    if obj.kind == "CronJob" and obj.group == "batch":
        jlabels = dig(data, "spec", "jobTemplate", "metadata", "labels")
        name = named(jlabels.get(KUEUE_LABEL)) if isinstance(jlabels, dict) else None
        if name:
            out.append(
                PriorityRef(
                    "kueue", name, ("spec", "jobTemplate", "metadata", "labels", KUEUE_LABEL), f"label {KUEUE_LABEL}"
                )
            )
    return out


def origin(fact: Any, here: str) -> str:
    """``", from FILE"`` (or the profile) for a PriorityClass fact defined outside ``here``, the file
    being linted, else nothing: linting unrelated trees together mixes their clusters' classes."""
    if fact.source == here:
        return ""
    return ", from the profile" if fact.source == "profile" else f", from {fact.source}"


def uses_kai(tpl: PodTemplate) -> bool:
    return tpl.spec.get("schedulerName") == KAI_SCHEDULER


def template_refs(tpl: PodTemplate, kueue: bool = True) -> list[PriorityRef]:
    """Priority fields on one pod template (its spec and its labels; the Kueue label only with ``kueue``)."""
    out: list[PriorityRef] = []
    name = named(tpl.spec.get("priorityClassName"))
    if name:
        out.append(PriorityRef("pod", name, tpl.spec_path + ("priorityClassName",), "priorityClassName"))
    if tpl.path == ():  # a Pod: its labels are the object's, reported once by object_refs
        if uses_kai(tpl):
            name = named(tpl.labels.get(KAI_LABEL))
            if name:
                out.append(PriorityRef("kai", name, ("metadata", "labels", KAI_LABEL), f"label {KAI_LABEL}"))
        return out
    labels = tpl.labels
    name = named(labels.get(KUEUE_LABEL)) if kueue else None
    if name:
        out.append(PriorityRef("kueue", name, tpl.path + ("metadata", "labels", KUEUE_LABEL), f"label {KUEUE_LABEL}"))
    if uses_kai(tpl):
        name = named(labels.get(KAI_LABEL))
        if name:
            out.append(PriorityRef("kai", name, tpl.path + ("metadata", "labels", KAI_LABEL), f"label {KAI_LABEL}"))
    return out


def kai_object_ref(obj: K8sObject, tpl: PodTemplate) -> PriorityRef | None:
    """KAI's ``priorityClassName`` label on the workload object, when the template runs on KAI."""
    if tpl.path == () or not uses_kai(tpl):
        return None
    name = named(obj.labels.get(KAI_LABEL))
    if not name:
        return None
    return PriorityRef("kai", name, ("metadata", "labels", KAI_LABEL), f"label {KAI_LABEL}")


# ----------------------------------------------------------------------------
# batch/v1 Job specs


def job_spec_path(tpl: PodTemplate) -> tuple:
    """The JobSpec around a Job-like pod template (``spec.template`` -> ``spec``)."""
    return tpl.path[:-1]


def job_spec(tpl: PodTemplate) -> dict:
    node = dig(tpl.obj.data, *job_spec_path(tpl))
    return node if isinstance(node, dict) else {}


def is_batch_job(obj: K8sObject) -> bool:
    return obj.group == "batch" and obj.kind in ("Job", "CronJob")


def is_jobset_like(obj: K8sObject) -> bool:
    """Kinds whose templates become batch/v1 Jobs through a JobSet (defaulted by JobSet's webhook)."""
    return (obj.group, obj.kind) in (
        ("jobset.x-k8s.io", "JobSet"),
        ("trainer.kubeflow.org", "TrainingRuntime"),
        ("trainer.kubeflow.org", "ClusterTrainingRuntime"),
    )
