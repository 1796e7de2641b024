"""KubeAI (``kubeai.org/v1`` Model; kubeai-project/kubeai v0.22, ``internal/modelcontroller``).

A Model is one pod per replica (``replicas``, else ``minReplicas``): the container ``server`` runs
the engine's image (``image`` when given) with ``args`` and ``env``; its resources are the
``resourceProfile`` ``<name>:<count>``: the profile's requests and limits, each multiplied by the
count (``model_controller.go``), and the profile's ``nodeSelector``, ``affinity`` and
``tolerations`` are the pod's; ``priorityClassName`` is the Model's. A Model whose
``resourceProfile`` is not ``<name>:<count>`` (or that has none) gets no pod: the controller refuses
it (``getModelConfig``). ``/dev/shm`` is the
memory-backed emptyDir ``dshm``, without a size (``engine_vllm.go``). The profiles are those the
KubeAI chart ships (``charts/kubeai/values.yaml`` ``resourceProfiles``, chart 0.22.1), and the TPU
profiles only its GKE values (``charts/kubeai/values-gke.yaml``) define; a cluster's own are given in
the config (``kinds.kubeai.resourceProfiles``), merged over these by name.
"""

from __future__ import annotations

import re
from typing import Any

from kubelint_ml.input.kinds.base import KindInfo, Pod, integer, none, text
from kubelint_ml.input.objects import K8sObject

CHART_PROFILES: dict[str, dict] = {
    "cpu": {"requests": {"cpu": 1, "memory": "2Gi"}},
    "nvidia-gpu-t4": {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}},
    "nvidia-gpu-l4": {
        "requests": {"nvidia.com/gpu": "1", "cpu": "6", "memory": "24Gi"},
        "limits": {"nvidia.com/gpu": "1"},
    },
    "nvidia-gpu-l40s": {
        "requests": {"nvidia.com/gpu": "1", "cpu": "6", "memory": "24Gi"},
        "limits": {"nvidia.com/gpu": "1"},
    },
    "nvidia-gpu-h100": {"limits": {"nvidia.com/gpu": "1"}},
    "nvidia-gpu-gh200": {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}},
    "nvidia-gpu-a100-80gb": {"limits": {"nvidia.com/gpu": "1"}},
    "nvidia-gpu-a100-40gb": {"limits": {"nvidia.com/gpu": "1"}},
    "nvidia-gpu-a16": {"limits": {"nvidia.com/gpu": "1"}},
    "nvidia-gpu-rtx4070-8gb": {"limits": {"nvidia.com/gpu": "1"}},
    "amd-gpu-mi300x": {"limits": {"amd.com/gpu": "1"}},
}


# The profiles only the chart's GKE values define (charts/kubeai/values-gke.yaml): Cloud TPU v5e
# slices, one chip per count, on the slice's accelerator and topology (and spot) nodes.
def _tpu_v5e(topology: str) -> dict:
    return {
        "limits": {"google.com/tpu": "1"},
        "nodeSelector": {
            "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
            "cloud.google.com/gke-tpu-topology": topology,
            "cloud.google.com/gke-spot": "true",
        },
    }


GKE_PROFILES: dict[str, dict] = {f"google-tpu-v5e-{t}": _tpu_v5e(t) for t in ("1x1", "2x2", "2x4")}
_configured: dict[str, dict] = {}


def configure(profiles: dict | None) -> None:
    """A cluster's own resource profiles (the config's ``kinds.kubeai.resourceProfiles``), by name
    over the chart's; None: the chart's alone."""
    global _configured
    _configured = dict(profiles) if isinstance(profiles, dict) else {}


def profile(name: str) -> dict | None:
    found = _configured.get(name)
    return found if isinstance(found, dict) else CHART_PROFILES.get(name) or GKE_PROFILES.get(name)


def _defined_by(name: str) -> str:
    if name in _configured:
        return "as the config defines it"
    return "as the KubeAI chart defines it" if name in CHART_PROFILES else "as the KubeAI chart's GKE values define it"


_NUMBER = re.compile(r"(\d+(?:\.\d+)?)([A-Za-z]*)")
# What model_controller.go getModelConfig accepts: one ':' and a count strconv.Atoi reads.
PROFILE = re.compile(r"[^:]*:[+-]?\d+")


def _times(quantity: Any, count: int) -> Any:
    """``quantity`` x ``count`` as resource.Quantity.Mul gives it (a plain number and its suffix)."""
    if isinstance(quantity, bool):
        return quantity
    if isinstance(quantity, int):
        return quantity * count
    m = _NUMBER.fullmatch(str(quantity).strip())
    if m is None:
        return quantity
    number = float(m.group(1)) * count
    return f"{int(number) if number.is_integer() else number}{m.group(2)}"


def _model(obj: K8sObject) -> list[Pod]:
    spec = obj.data.get("spec")
    if not isinstance(spec, dict):
        return []
    path = ("spec",)
    container: dict = {
        "name": "server",
        "image": text(spec.get("image"), f"{text(spec.get('engine'), 'KubeAI')} server image"),
    }
    if isinstance(spec.get("args"), list):
        container["args"] = spec["args"]
    env = spec.get("env")
    if isinstance(env, dict):
        container["env"] = [{"name": str(k), "value": str(v)} for k, v in env.items()]
    pod_spec: dict = {}
    if "priorityClassName" in spec:
        pod_spec["priorityClassName"] = spec["priorityClassName"]
    raw = spec.get("resourceProfile")
    if not isinstance(raw, str) or PROFILE.fullmatch(raw) is None:
        # getModelConfig refuses a Model whose resourceProfile is not <name>:<count> (none included):
        # no pod is made (see accelerator-workload-not-judged)
        return []
    name, _, count = raw.partition(":")
    found = profile(name)
    if found is None:
        return []  # a profile of the cluster's own: what it asks for is unknown (see accelerator-workload-not-judged)
    if count.isdigit():
        container["resources"] = {
            part: {k: _times(v, int(count)) for k, v in found[part].items()}
            for part in ("requests", "limits")
            if isinstance(found.get(part), dict)
        }
        for key in ("nodeSelector", "affinity", "tolerations"):
            if key in found:
                pod_spec[key] = found[key]
    container["volumeMounts"] = [{"name": "dshm", "mountPath": "/dev/shm"}]
    replicas = integer(spec.get("replicas"), None)
    if replicas is None:
        replicas = integer(spec.get("minReplicas"), 1)
    where = path + ("resourceProfile",)
    pod = Pod(
        path,
        pod_spec,
        "",
        replicas,
        [(container, path)],
        volumes=[({"name": "dshm", "emptyDir": {"medium": "Memory"}}, where)],
        renames=[
            (path + ("resources",), where),
            (path + ("nodeSelector",), where),
            (path + ("tolerations",), where),
            (path + ("affinity",), where),
            (path + ("volumes",), where),
            (path + ("metadata",), path),
        ],
    )
    pod.cache["assumed"] = f"resource profile {name} {_defined_by(name)}"
    # The Model has no field for the container's resources or the dshm volume's size: a fix would
    # write into resourceProfile (a string), so none is offered.
    pod.fix_note = (
        "KubeAI builds the container's resources from the resource profile: change resourceProfile or the profile"
    )
    return [pod]


KINDS: dict[tuple[str, str], KindInfo] = {
    ("kubeai.org", "Model"): KindInfo(none, False, _model),
}
