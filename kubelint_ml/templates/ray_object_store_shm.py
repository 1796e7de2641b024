"""A Ray node whose object store does not fit the /dev/shm its pod gets.

Ray (python/ray/_private/services.py, ``determine_plasma_store_config``; ray_constants.py) puts the
object store in /dev/shm only when /dev/shm is larger than it. Otherwise, above
``REQUIRE_SHM_SIZE_THRESHOLD`` (10**10 bytes) and without ``RAY_OBJECT_STORE_ALLOW_SLOW_STORAGE``,
the node refuses to start; below it, the store goes to /tmp, on disk. Its size is the
``object-store-memory`` start parameter, else 30% of the memory Ray sees (the container's memory
limit), capped at min(200 GB, max(10**10, 95% of /dev/shm)) (``resolve_object_store_memory``).

The /dev/shm a KubeRay pod gets (ray-operator/controllers/ray/common/pod.go): the Ray container's
own mount there, else the memory-backed emptyDir KubeRay adds, sized by the container's memory
limit, else its memory request (none when ``plasma-directory`` is set: skipped). A tmpfs is capped
at the container's memory limit too.
"""

from __future__ import annotations

from fractions import Fraction

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.input.objects import dig
from kubelint_ml.templates._common import requests_limits
from kubelint_ml.templates._volumes import (
    MEMORY,
    empty_dirs,
    is_kuberay_pod,
    ray_bytes,
    shm_mount,
    size,
    volume_named,
)

UNIT = "podTemplate"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}

_SLOW_STORAGE_THRESHOLD = 10**10  # REQUIRE_SHM_SIZE_THRESHOLD
_DEFAULT_CAP = 200 * 10**9  # DEFAULT_OBJECT_STORE_MAX_MEMORY_BYTES
_DEFAULT_PROPORTION = Fraction(3, 10)  # DEFAULT_OBJECT_STORE_MEMORY_PROPORTION
_ALLOW_SLOW = "RAY_OBJECT_STORE_ALLOW_SLOW_STORAGE"


def _allows_slow_storage(container: dict) -> bool:
    env = container.get("env")
    return isinstance(env, list) and any(
        isinstance(e, dict) and e.get("name") == _ALLOW_SLOW and str(e.get("value", "")).strip() not in ("", "0")
        for e in env
    )


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    tpl = unit.tpl
    if not is_kuberay_pod(tpl) or not tpl.containers:
        return None
    group = tpl.path[:-1]  # headGroupSpec / workerGroupSpecs[i]
    start = dig(tpl.obj.data, *group, "rayStartParams")
    start = start if isinstance(start, dict) else {}
    if "plasma-directory" in start:
        return None  # the user put the store elsewhere
    ray = tpl.containers[0]  # KubeRay's Ray container
    explicit = ray_bytes(start.get("object-store-memory"))
    mount = shm_mount(ray)
    if explicit is None and mount is None:
        # Ray's default store is at most 30% of the memory limit, and KubeRay's /dev/shm is that
        # limit (or, without one, Ray sees the node's memory): it fits
        return None
    requests, limits = requests_limits(ray)
    memory = limits.get("memory")
    memory = memory if memory is not None and memory > 0 else None
    # the /dev/shm the pod gets
    shm_path: tuple
    if mount is None:
        shm = memory if memory is not None else requests.get("memory")
        if not shm:
            return None  # KubeRay's emptyDir without a size: the node's memory
        where = f"KubeRay mounts (the Ray container's memory {'limit' if memory else 'request'})"
        shm_path = ray.path + ("resources", "limits" if memory else "requests", "memory")
    else:
        volume = volume_named(tpl, mount[1])
        ed = next((e for e in empty_dirs(tpl) if e.volume is volume and e.medium == MEMORY), None)
        if volume is None or ed is None:
            return None  # hostPath, a disk emptyDir, another volume: not judged
        bounds = [x for x in (ed.size_limit, memory) if x is not None]
        if not bounds:
            return None  # an unbounded tmpfs: the node's memory
        shm = min(bounds)
        where = f"it mounts ('{volume.name}')"
        shm_path = volume.path + ("emptyDir", "sizeLimit") if ed.size_limit is not None else volume.path
    if explicit is not None:
        store = Fraction(explicit)
        path = group + ("rayStartParams", "object-store-memory")
    else:
        if memory is None:
            return None  # the node's memory: unknown here
        cap = min(Fraction(_DEFAULT_CAP), max(Fraction(_SLOW_STORAGE_THRESHOLD), shm * Fraction(95, 100)))
        store = min(memory * _DEFAULT_PROPORTION, cap)
        path = shm_path
    if store < shm:
        return None
    # the words, only for a finding (sizes are spelled out at some cost)
    shm_text = f"the {size(shm)} /dev/shm {where}"
    if explicit is not None:
        store_text = f"object-store-memory {explicit}"
    else:
        store_text = f"Ray's default object store ({size(store)}: 30% of the {size(memory)} memory limit)"
    refuses = store > _SLOW_STORAGE_THRESHOLD and not _allows_slow_storage(ray.data)
    if refuses:
        outcome = (
            'the Ray node refuses to start ("The configured object store size ... exceeds /dev/shm size"), as '
            f"it does for a store over 10 GB unless {_ALLOW_SLOW} is set"
        )
        short = "Ray refuses to start"
    else:
        outcome = (
            "Ray puts the object store in /tmp instead, on disk: every object put and get is a file write and read"
        )
        short = "the store goes to /tmp, on disk"
    shown = size(store) if explicit is None else f"{size(store)} ({store_text})"
    return [
        Hit(
            path,
            f"Ray object store {size(store)} does not fit the {size(shm)} /dev/shm: {short}",
            severity="error" if refuses else None,
            at_value=True,
            detail=f"{tpl.describe()}: {store_text if explicit is None else shown} is not smaller than {shm_text}: "
            f"{outcome}. Give /dev/shm room for the object store (a memory-backed emptyDir larger than it, within the "
            "memory limit), or lower object-store-memory",
        )
    ]
