"""Volume helpers shared by the emptyDir and /dev/shm rules.

Which containers mount a volume and where, the storage medium of an
emptyDir, its ``sizeLimit``, per-container memory / ephemeral-storage
limits, and whether a pod template is a KubeRay head or worker pod.

Decisions:

* medium ``""`` (or absent) is node disk, exactly ``Memory`` is tmpfs,
  ``HugePages``/``HugePages-<size>`` are huge pages; any other value fails
  at mount time and is left alone here.
* A ``sizeLimit`` of 0 sets no limit (the kubelet only acts on a positive
  one), so it counts as absent; an unparsable one is left to
  ``invalid-quantity`` (rules skip such templates).
* An emptyDir that no container mounts cannot be written; the rules ignore it.
"""

from __future__ import annotations

import posixpath
from fractions import Fraction
from typing import Any

from kubelint_ml.input.objects import dig
from kubelint_ml.input.workloads import ContainerView, PodTemplate, VolumeView
from kubelint_ml.k8s.quantity import QuantityError, parse_manifest_quantity
from kubelint_ml.k8s.resources import container_limits
from kubelint_ml.records import Record
from kubelint_ml.templates._common import pod_level, requests_limits, show

DISK = "disk"
MEMORY = "memory"
HUGEPAGES = "hugepages"
OTHER = "other"

SHM_PATH = "/dev/shm"


class Mount(Record):
    container: ContainerView
    index: int  # in the container's volumeMounts
    path: str  # mountPath as written
    __slots__ = _fields = ("container", "index", "path")

    def __init__(self, container: ContainerView, index: int, path: str) -> None:
        self.container = container
        self.index = index
        self.path = path


class EmptyDir(Record):
    volume: VolumeView
    medium: str  # DISK | MEMORY | HUGEPAGES | OTHER
    size_limit: Fraction | None  # positive sizeLimit, else None
    raw_size: Any  # sizeLimit as written (None when absent)
    mounts: list[Mount]
    __slots__ = _fields = ("volume", "medium", "size_limit", "raw_size", "mounts")

    def __init__(
        self,
        volume: VolumeView,
        medium: str,
        size_limit: Fraction | None,
        raw_size: Any,
        mounts: list[Mount] | None = None,
    ) -> None:
        self.volume = volume
        self.medium = medium
        self.size_limit = size_limit
        self.raw_size = raw_size
        self.mounts = [] if mounts is None else mounts

    @property
    def name(self) -> str:
        return self.volume.name

    @property
    def size_path(self) -> tuple:
        return self.volume.path + ("emptyDir", "sizeLimit")

    def mounted_by(self) -> list[ContainerView]:
        """Distinct containers that mount it, in pod order."""
        seen: list[ContainerView] = []
        for m in self.mounts:
            if all(c is not m.container for c in seen):
                seen.append(m.container)
        return seen

    def describe_mounts(self, limit: int = 3) -> str:
        """``mounted at /scratch by container 'trainer'``, grouped by path."""
        by_path: dict[str, list[ContainerView]] = {}
        for m in self.mounts:
            seen = by_path.setdefault(m.path, [])
            if all(c is not m.container for c in seen):
                seen.append(m.container)
        parts = []
        for path, containers in list(by_path.items())[:limit]:
            if len(containers) == 1:
                parts.append(f"at {path} by {containers[0].describe()}")
            else:
                parts.append(f"at {path} by containers {names([c.name for c in containers])}")
        more = len(by_path) - limit
        return "mounted " + ", ".join(parts) + (f" and {more} more paths" if more > 0 else "")


def _medium(value: Any) -> str:
    if value is None or value == "":
        return DISK
    if value == "Memory":
        return MEMORY
    if isinstance(value, str) and (value == "HugePages" or value.startswith("HugePages-")):
        return HUGEPAGES
    return OTHER


def _positive_quantity(raw: Any) -> Fraction | None:
    if raw is None or isinstance(raw, bool):
        return None
    try:
        value = parse_manifest_quantity(raw).value
    except QuantityError:
        return None
    return value if value > 0 else None


def normalize_mount_path(path: Any) -> str | None:
    if not isinstance(path, str) or not path.strip():
        return None
    return posixpath.normpath(path.strip())


def container_mounts(c: ContainerView) -> list[tuple[int, str, str]]:
    """(index, volume name, mountPath) of a container's well-formed volumeMounts."""
    out: list[tuple[int, str, str]] = []
    mounts = c.data.get("volumeMounts")
    if not isinstance(mounts, list):
        return out
    for i, m in enumerate(mounts):
        if isinstance(m, dict) and isinstance(m.get("name"), str):
            path = m.get("mountPath")
            out.append((i, m["name"], path if isinstance(path, str) else ""))
    return out


def empty_dirs(tpl: PodTemplate) -> list[EmptyDir]:
    """The template's emptyDir volumes with their mounts (cached)."""
    found = tpl.cache.get("emptydir:volumes")
    if found is not None:
        return found
    out: list[EmptyDir] = []
    by_name: dict[str, EmptyDir] = {}
    for v in tpl.volumes:
        ed = v.data.get("emptyDir")
        if not isinstance(ed, dict):
            continue
        raw = ed.get("sizeLimit")
        item = EmptyDir(v, _medium(ed.get("medium")), _positive_quantity(raw), raw)
        out.append(item)
        by_name.setdefault(v.name, item)
    if by_name:
        for c in tpl.all_containers:
            for i, name, path in container_mounts(c):
                mounted = by_name.get(name)
                if mounted is not None:
                    mounted.mounts.append(Mount(c, i, path))
    tpl.cache["emptydir:volumes"] = out
    return out


def empty_dir_of(tpl: PodTemplate, volume: VolumeView) -> EmptyDir | None:
    """The :class:`EmptyDir` of ``volume`` (a dict lookup: volume rules run once per volume)."""
    found = tpl.cache.get("emptydir:by-volume")
    if found is None:
        found = tpl.cache["emptydir:by-volume"] = {id(e.volume): e for e in empty_dirs(tpl)}
    return found.get(id(volume))


def volume_named(tpl: PodTemplate, name: str) -> VolumeView | None:
    for v in tpl.volumes:
        if v.name == name:
            return v
    return None


def shm_mount(c: ContainerView) -> tuple[int, str] | None:
    """(volumeMounts index, volume name) of the container's mount at /dev/shm."""
    for i, name, path in container_mounts(c):
        if normalize_mount_path(path) == SHM_PATH:
            return i, name
    return None


# --------------------------------------------------------------------------
# Limits


def memory_limit(c: ContainerView) -> Fraction | None:
    """The container's positive memory limit."""
    value = requests_limits(c)[1].get("memory")
    return value if value is not None and value > 0 else None


def pod_level_memory_limit(tpl: PodTemplate) -> Fraction | None:
    """A positive pod-level ``spec.resources.limits.memory`` (after pod-level defaulting)."""
    pod = pod_level(tpl)
    if pod is None:
        return None
    value = pod[1].get("memory")
    return value if value is not None and value > 0 else None


def pod_ephemeral_storage_limit(tpl: PodTemplate) -> Fraction | None:
    """What the kubelet's pod-level local-storage eviction compares usage with.

    ``podEphemeralStorageLimitEviction`` takes ``PodLimits``: the sum of the
    limits of app containers and sidecars, or an init container's (plus the
    sidecars started before it) when larger. Containers without the limit
    add nothing, and one container with a limit is enough for the check to
    run. None when no container has a positive limit.
    """
    value = container_limits(tpl.spec).get("ephemeral-storage")
    return value if value else None


def requests_ephemeral_storage(c: ContainerView) -> bool:
    """A positive ephemeral-storage request, or a limit it defaults from."""
    requests, limits = requests_limits(c)
    value = requests.get("ephemeral-storage", limits.get("ephemeral-storage"))
    return value is not None and value > 0


# --------------------------------------------------------------------------
# Pods


_KUBERAY = {
    ("ray.io", "RayCluster"),
    ("ray.io", "RayJob"),
    ("ray.io", "RayService"),
    ("ray.io", "RayCronJob"),
    # AIBrix keeps RayClusters of these templates: KubeRay builds their pods
    ("orchestration.aibrix.ai", "RayClusterFleet"),
    ("orchestration.aibrix.ai", "RayClusterReplicaSet"),
}


def is_kuberay_pod(tpl: PodTemplate) -> bool:
    """A KubeRay head or worker pod (not a RayJob's submitter pod)."""
    obj = tpl.obj
    if (obj.group, obj.kind) not in _KUBERAY:
        return False
    return "headGroupSpec" in tpl.path or "workerGroupSpecs" in tpl.path


def ray_bytes(value: Any) -> int | None:
    """``object-store-memory`` as Ray's CLI reads it: a whole number of bytes."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    if isinstance(value, str) and value.strip().isdigit():
        n = int(value.strip())
        return n if n > 0 else None
    return None


# Ray's default object store is at most max(10 GB, 95% of /dev/shm) (ray_object_store_shm): a /dev/shm
# of 11Gi (11.8 GB) always holds it.
RAY_DEFAULT_SHM = 11 * 2**30


def ray_shm_floor(tpl: PodTemplate, volume: VolumeView) -> Fraction | None:
    """The least size of ``volume`` that holds Ray's object store, when a KubeRay pod's Ray container
    mounts it at /dev/shm (Ray puts the store on disk, or does not start, when /dev/shm is not larger
    than it); None otherwise."""
    if not is_kuberay_pod(tpl) or not tpl.containers:
        return None
    mount = shm_mount(tpl.containers[0])
    if mount is None or mount[1] != volume.name:
        return None
    start = dig(tpl.obj.data, *tpl.path[:-1], "rayStartParams")
    start = start if isinstance(start, dict) else {}
    if "plasma-directory" in start:
        return None
    explicit = ray_bytes(start.get("object-store-memory"))
    if explicit is None:
        return Fraction(RAY_DEFAULT_SHM)
    return Fraction((explicit // 2**30 + 1) * 2**30)  # whole Gi, larger than the store


def names(items: list[str], limit: int = 3) -> str:
    """``'a'``, ``'a' and 'b'``, ``'a', 'b', 'c' and 2 more``."""
    quoted = [f"'{x}'" for x in items[:limit]]
    more = len(items) - limit
    if more > 0:
        return ", ".join(quoted) + f" and {more} more"
    if len(quoted) <= 1:
        return "".join(quoted)
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
_DECIMAL = (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3))


def size(value: Fraction) -> str:
    """The shortest exact byte text ("3500Gi", "8T", "1.5Gi"), else an approximation."""
    text = show("memory", value)
    candidates = [] if text.startswith("~") else [text]
    if value.denominator == 1 and value > 0:
        for table in (_BINARY, _DECIMAL):
            for suffix, unit in table:
                if value % unit == 0:
                    candidates.append(f"{value // unit}{suffix}")
                    break
    return min(candidates, key=len) if candidates else text
