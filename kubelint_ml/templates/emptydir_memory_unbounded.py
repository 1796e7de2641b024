"""A medium: Memory emptyDir that nothing bounds."""

from __future__ import annotations

from fractions import Fraction

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.input.workloads import ContainerView
from kubelint_ml.k8s.resources import is_accelerator_resource
from kubelint_ml.templates import _fixes
from kubelint_ml.templates._cluster import default_for
from kubelint_ml.templates._common import requests_limits, resources_unknown, signals_of
from kubelint_ml.templates._volumes import (
    MEMORY,
    empty_dir_of,
    memory_limit,
    names,
    pod_level_memory_limit,
    ray_shm_floor,
    shm_mount,
)

UNIT = "volume"
DEFAULTS: dict = {}
PARAMS = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "fixSizeLimit": _fixes.MEMORY_SIZE_PARAM,
    },
}


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    """Fires when the tmpfs has no sizeLimit, no pod-level memory limit
    applies, and some container that mounts it has no memory limit.

    The kubelet sizes the tmpfs to the smallest of node allocatable memory,
    the pod's memory limit (which exists only when every container has one,
    or from pod-level resources) and sizeLimit; pages written there are
    charged to the writing container's memory limit. When every container
    that mounts it has a memory limit, its writers are bounded.
    """
    tpl, v = unit.tpl, unit.volume
    ed = empty_dir_of(tpl, v)
    if ed is None or ed.medium != MEMORY or ed.size_limit is not None or not ed.mounts:
        return None
    if resources_unknown(tpl) or pod_level_memory_limit(tpl) is not None:
        return None
    # A LimitRange default fills a missing limit in when the pod is created.
    unlimited = [
        c for c in ed.mounted_by() if memory_limit(c) is None and default_for(tpl, c, ctx, "limits", "memory") is None
    ]
    if not unlimited:
        return None
    who = names([c.name for c in unlimited])
    plural = len(unlimited) > 1
    size_note = "has sizeLimit 0, which sets no limit" if ed.raw_size is not None else "has no sizeLimit"
    return [
        Hit(
            ed.size_path,
            f"Memory emptyDir '{ed.name}' has no sizeLimit and {who} no memory limit",
            detail=f"{tpl.describe()}: medium: Memory emptyDir '{ed.name}' ({ed.describe_mounts()}) {size_note}, and "
            f"container{'s' if plural else ''} {who} {'have' if plural else 'has'} no memory limit: the tmpfs is sized "
            f"to the node's allocatable memory (the kubelet caps it at the pod's memory limit only when every "
            f"container has one), so what is written there is RAM nothing bounds and can exhaust the node. Set "
            f"emptyDir.sizeLimit, and a memory limit on {who} that leaves room for it",
            fix=_fixes.memory_size_limit(tpl, v.path, ed.mounted_by(), params, _floor(tpl, v, ed.mounted_by())),
        )
    ]


def _floor(tpl, v, mounted_by: list) -> tuple[Fraction, str] | None:
    """The least sizeLimit the fix gives, and why: what Ray's object store needs, or, where containers
    mount the volume at /dev/shm, shm-too-small-for-workers' size (shmPerProcess a process, at most
    shmMax) for the processes they start (a model-parallel server, a launcher, loader workers) or
    for one process per accelerator device they ask for, whichever is more: a multi-GPU job runs a
    rank per GPU (started by its own launcher, or by a leader's mpirun over ssh) whatever its command
    says."""
    ray = ray_shm_floor(tpl, v)
    if ray is not None:  # a KubeRay node's /dev/shm: its object store's size
        return ray, "the /dev/shm Ray's object store needs (it is put on disk in a smaller one)"
    users = [c for c in mounted_by if (shm_mount(c) or ("", ""))[1] == v.name]
    processes = max((s.processes or 0 for c in users for s in signals_of(c, tpl)), default=0)
    devices = sum(_devices(c) for c in users)
    if processes > 1 and processes >= devices:
        return (
            _fixes.shm_size(processes, {}),
            f"shm-too-small-for-workers' size for {processes} processes sharing /dev/shm",
        )
    if devices > 1:
        return (
            _fixes.shm_size(devices, {}),
            f"shm-too-small-for-workers' size for {devices} processes sharing /dev/shm (one per "
            f"accelerator device of the containers that mount it)",
        )
    return None


def _devices(c: ContainerView) -> int:
    """The accelerator devices the container asks for (its limits, else its requests), Cloud TPU chips
    aside: a TPU host runs one program, where a job on GPUs (or Neuron, Gaudi...) runs a process per
    device."""
    requests, limits = requests_limits(c)
    for part in (limits, requests):
        n = sum(
            (q for name, q in part.items() if name != "google.com/tpu" and q > 0 and is_accelerator_resource(name)),
            Fraction(0),
        )
        if n:
            return int(n)
    return 0
