"""Kubeflow's training kinds: the training-operator v1 jobs (``kubeflow.org/v1`` TFJob, PyTorchJob,
XGBoostJob, PaddleJob, JAXJob, MXJob, MPIJob, whose ``v2beta1`` of kubeflow/mpi-operator caa3c47f has
the same shape; kubeflow/training-operator ``pkg/apis/kubeflow.org/v1``, its examples at kubeflow/trainer
3a3a1da8: ``spec.<x>ReplicaSpecs.<Role>.template``, a Worker's replicas default 1, an MPIJob's 0), and
Kubeflow Trainer v2's runtimes (``trainer.kubeflow.org/v1alpha1`` TrainingRuntime and
ClusterTrainingRuntime, kubeflow/trainer ``pkg/apis/trainer/v1alpha1`` at 8c0f5059: a JobSet template
at ``spec.template``; the trainer's job is the one labelled ``trainer.kubeflow.org/trainjob-ancestor-step:
trainer``, or named ``node``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kubelint_ml.input.kinds.base import Finder, KindInfo, Pod, TemplateSpot, integer
from kubelint_ml.input.kinds.jobset import jobset_jobs
from kubelint_ml.input.objects import K8sObject, dig


def _replica_specs(field_name: str, worker_default: int = 1) -> Finder:
    """Kubeflow ``spec.<x>ReplicaSpecs.<Role>.template``."""

    def find(obj: dict) -> Iterator[TemplateSpot]:
        specs = dig(obj, "spec", field_name)
        if not isinstance(specs, dict):
            return
        for role in sorted(specs, key=str):
            rs = specs[role]
            if not isinstance(rs, dict):
                continue
            default = worker_default if str(role) == "Worker" else 1
            yield ("spec", field_name, role, "template"), str(role), integer(rs.get("replicas"), default)

    return find


# Kubeflow training-operator v1 kinds and the field that holds their replica specs.
KUBEFLOW_REPLICA_SPECS = {
    "TFJob": "tfReplicaSpecs",
    "PyTorchJob": "pytorchReplicaSpecs",
    "XGBoostJob": "xgbReplicaSpecs",
    "PaddleJob": "paddleReplicaSpecs",
    "JAXJob": "jaxReplicaSpecs",
    "MXJob": "mxReplicaSpecs",
    "MPIJob": "mpiReplicaSpecs",
}


TRAINER_ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"


def is_runtime_trainer_job(job: Any) -> bool:
    """Whether a (Cluster)TrainingRuntime's replicated job runs the trainer: its template's
    ancestor-step label says ``trainer``; without that label, it is the job named ``node``."""
    if not isinstance(job, dict):
        return False
    labels = dig(job, "template", "metadata", "labels")
    step = labels.get(TRAINER_ANCESTOR_LABEL) if isinstance(labels, dict) else None
    return step == "trainer" if step is not None else job.get("name") == "node"


# The TrainJob fields that patch the runtime's pods (v2.0 podSpecOverrides, then podTemplateOverrides,
# then runtimePatches).
_OVERRIDES = ("runtimePatches", "podTemplateOverrides", "podSpecOverrides")
# The pod fields of the runtime's trainer job that place it (kept in a TrainJob's pod; the rest of the
# pod, its volumes, command and env are the runtime's own, judged on the runtime).
_PLACEMENT = ("nodeSelector", "affinity", "tolerations", "priorityClassName", "schedulerName", "runtimeClassName")


# What Trainer's pod patches may set of a pod's placement (PodSpecPatch; v2.0's PodSpecOverride).
_PATCHED_PLACEMENT = ("nodeSelector", "affinity", "tolerations")


# Where a kind's TrainJobSpec is: a TrainJob's ``spec``; an OptimizationJob's (Trainer's hyperparameter
# search, ``optimizationjob_types.go``) ``spec.trainJobTemplate.spec``, the TrainJob each trial runs.
TRAIN_JOB_SPECS = {
    "TrainJob": ("spec",),
    "OptimizationJob": ("spec", "trainJobTemplate", "spec"),
}


def train_job_spec_path(kind: str) -> tuple | None:
    return TRAIN_JOB_SPECS.get(kind)


def _placement_patches(spec: dict, job_name: Any, base: tuple = ("spec",)) -> list[tuple[tuple, dict]] | None:
    """The pod-spec patches the TrainJob's overrides make to the runtime's replicated job ``job_name``, with
    their paths, in the order they apply (``podSpecOverrides``, ``podTemplateOverrides``, then
    ``runtimePatches``); None when an override that may target it cannot be read."""
    out: list[tuple[tuple, dict]] = []
    for key in ("podSpecOverrides", "podTemplateOverrides"):
        items = spec.get(key)
        if items is None:
            continue
        if not isinstance(items, list):
            return None
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                return None
            targets = item.get("targetJobs")
            names = [t.get("name") for t in targets if isinstance(t, dict)] if isinstance(targets, list) else None
            if names is None:
                return None
            if job_name not in names:
                continue
            patch = item if key == "podSpecOverrides" else item.get("spec")
            where: tuple = base + ((key, i) if key == "podSpecOverrides" else (key, i, "spec"))
            if patch is None:
                continue
            if not isinstance(patch, dict):
                return None
            out.append((where, patch))
    patches = spec.get("runtimePatches")
    if patches is None:
        return out
    if not isinstance(patches, list):
        return None
    for i, item in enumerate(patches):
        jobs = dig(item, "trainingRuntimeSpec", "template", "spec", "replicatedJobs")
        if jobs is None:
            continue
        if not isinstance(jobs, list):
            return None
        for j, rjob in enumerate(jobs):
            if not isinstance(rjob, dict) or rjob.get("name") != job_name:
                continue
            patch = dig(rjob, "template", "spec", "template", "spec")
            if patch is None:
                continue
            if not isinstance(patch, dict):
                return None
            at = base + ("runtimePatches", i, "trainingRuntimeSpec", "template", "spec", "replicatedJobs", j)
            out.append((at + ("template", "spec", "template", "spec"), patch))
    return out


def _merged(old: Any, new: Any) -> Any:
    """A strategic merge of ``new`` over ``old`` for maps (lists and values replaced), as the patches apply."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return new
    out = dict(old)
    for k, v in new.items():
        out[k] = _merged(old.get(k), v)
    return out


def train_job_pod(job: K8sObject, runtime: Any) -> Pod | None:
    """The trainer pod a TrainJob makes from its (Cluster)TrainingRuntime ``runtime`` (kubeflow/trainer
    ``pkg/runtime/framework/plugins/jobset``): the trainer job's container ``node`` with the TrainJob's
    ``trainer.image``, and ``trainer.resourcesPerNode`` as its resources where it sets limits or
    requests (``WithResources``: they replace the runtime's); ``trainer.numNodes`` (else the runtime's
    ``mlPolicy.numNodes``) pods. Only what the TrainJob sets or what places the pod is kept: the
    runtime's own fields are judged on the runtime. None when the runtime has no trainer container. An
    OptimizationJob's trials are such TrainJobs (its ``trainJobTemplate``), ``parallelTrials`` at a time."""
    base = train_job_spec_path(job.kind) or ("spec",)
    spec: Any = dig(job.data, *base)
    trainer: Any = spec.get("trainer") if isinstance(spec, dict) else None
    trainer = trainer if isinstance(trainer, dict) else {}
    jobs = dig(runtime, "spec", "template", "spec", "replicatedJobs")
    rjob = next((j for j in (jobs if isinstance(jobs, list) else []) if is_runtime_trainer_job(j)), None)
    found = dig(rjob, "template", "spec", "template", "spec") if rjob is not None else None
    pod_spec: dict = found if isinstance(found, dict) else {}
    containers = pod_spec.get("containers")
    node = next(
        (
            c
            for c in (containers if isinstance(containers, list) else [])
            if isinstance(c, dict) and c.get("name") == "node"
        ),
        None,
    )
    if node is None:
        return None
    path = base + ("trainer",)
    ref = base + ("runtimeRef",)
    container: dict = {"name": "node", "image": trainer.get("image", node.get("image"))}
    renames: list[tuple[tuple, tuple]] = [(path + ("metadata",), ref)]
    given: Any = trainer.get("resourcesPerNode")
    if isinstance(given, dict) and (given.get("limits") is not None or given.get("requests") is not None):
        container["resources"] = {k: given[k] for k in ("limits", "requests") if given.get(k) is not None}
        renames.append((path + ("resources",), path + ("resourcesPerNode",)))
    elif node.get("resources") is not None:  # the runtime's, inherited: said at the runtime it names
        container["resources"] = node["resources"]
        renames.append((path + ("resources",), ref))
    # else neither sets any: said at the trainer, where resourcesPerNode would set them
    pod = {k: v for k, v in pod_spec.items() if k in _PLACEMENT}
    renames += [(path + (k,), ref) for k in pod]
    # The TrainJob's overrides patch the trainer pod's placement (nodeSelector, affinity, tolerations):
    # applied in order; one whose shape is not known leaves the placement unknown.
    job_name = rjob.get("name") if isinstance(rjob, dict) else None
    patches = _placement_patches(spec, job_name, base) if isinstance(spec, dict) else []
    if patches is None:
        pod = {}
    else:
        for where, patch in patches:
            for key in _PATCHED_PLACEMENT:
                if key not in patch:
                    continue
                old, new = pod.get(key), patch[key]
                pod[key] = _merged(old, new) if key != "tolerations" else new  # a list without a merge key
                renames.append((path + (key,), where + (key,)))
    nodes = integer(trainer.get("numNodes"), None)
    if nodes is None:
        nodes = integer(dig(runtime, "spec", "mlPolicy", "numNodes"), 1)
    trials = ""
    if job.kind == "OptimizationJob":
        parallel = integer(dig(job.data, "spec", "parallelTrials"), 1) or 1
        nodes = None if nodes is None else nodes * max(parallel, 1)
        trials = "trials' "
    name = dig(runtime, "metadata", "name")
    out = Pod(
        path,
        pod,
        f"{trials}trainer, from runtime '{name}'" if isinstance(name, str) else f"{trials}trainer",
        nodes,
        [(container, path)],
        renames=renames,
        fix_note="the trainer's node container takes its resources from spec.trainer.resourcesPerNode (else from "
        "the runtime): change those",
    )
    if "resources" in container and (path + ("resources",), path + ("resourcesPerNode",)) in renames:
        # resourcesPerNode is the container's resources as written (a ResourceRequirements): a fix of them
        # is the user's edit; without it the runtime's are, and setting it would replace them all
        out.cache["fixable"] = (path + ("resources",),)
    return out


KINDS: dict[tuple[str, str], KindInfo] = {
    ("trainer.kubeflow.org", "TrainingRuntime"): KindInfo(jobset_jobs(("spec", "template", "spec")), True),
    ("trainer.kubeflow.org", "ClusterTrainingRuntime"): KindInfo(jobset_jobs(("spec", "template", "spec")), True),
}
for _kind, _field in KUBEFLOW_REPLICA_SPECS.items():
    KINDS[("kubeflow.org", _kind)] = KindInfo(_replica_specs(_field, 0 if _kind == "MPIJob" else 1), True)
