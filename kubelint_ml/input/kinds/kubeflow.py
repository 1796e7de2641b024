"""Kubeflow's training kinds: the training-operator v1 jobs (``kubeflow.org/v1`` TFJob, PyTorchJob,
XGBoostJob, PaddleJob, JAXJob, MXJob, MPIJob; kubeflow/training-operator ``pkg/apis/kubeflow.org/v1``:
``spec.<x>ReplicaSpecs.<Role>.template``, a Worker's replicas default 1, an MPIJob's 0), and
Kubeflow Trainer v2's runtimes (``trainer.kubeflow.org/v1alpha1`` TrainingRuntime and
ClusterTrainingRuntime, kubeflow/trainer ``pkg/apis/trainer/v1alpha1``: a JobSet template at
``spec.template``; the trainer's job is the one labelled ``trainer.kubeflow.org/trainjob-ancestor-step:
trainer``, or named ``node``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kubelint_ml.input.kinds.base import Finder, KindInfo, TemplateSpot, integer
from kubelint_ml.input.kinds.jobset import jobset_jobs
from kubelint_ml.input.objects import dig


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


KINDS: dict[tuple[str, str], KindInfo] = {
    ("trainer.kubeflow.org", "TrainingRuntime"): KindInfo(jobset_jobs(("spec", "template", "spec")), True),
    ("trainer.kubeflow.org", "ClusterTrainingRuntime"): KindInfo(jobset_jobs(("spec", "template", "spec")), True),
}
for _kind, _field in KUBEFLOW_REPLICA_SPECS.items():
    KINDS[("kubeflow.org", _kind)] = KindInfo(_replica_specs(_field, 0 if _kind == "MPIJob" else 1), True)
