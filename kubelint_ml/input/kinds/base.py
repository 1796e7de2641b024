"""What every family of kinds shares: the table's entry (:class:`KindInfo`), the finders of pod
templates at fixed places, and :class:`Pod`, a pod a controller builds from fields that are not a
pod template, as the family describes it (``kubelint_ml.input.workloads`` makes it the view the
rules read). A family module imports this one and ``kubelint_ml.input.objects``, nothing else of
the package."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from kubelint_ml.input.objects import K8sObject, dig
from kubelint_ml.records import Frozen, Record

TemplateSpot = tuple[tuple, str, "int | None"]  # (path, role, replicas)
Finder = Callable[[dict], Iterator[TemplateSpot]]


class Pod(Record):
    """A pod put together from the user's fields: its spec (read by the rules), each container and
    volume with the path it has in the file, and where the pod's fields are written
    (``renames``: pod path prefix -> file path prefix)."""

    spec_path: tuple
    spec: dict
    role: str
    replicas: int | None
    containers: list[tuple[Any, tuple]]
    init: list[tuple[Any, tuple]]
    volumes: list[tuple[Any, tuple]]
    metadata: Any
    renames: list[tuple[tuple, tuple]]
    fix_note: str | None
    shared: bool
    # Facts for the rules, copied into the template's cache (e.g. "defaults": what a controller
    # filled in; "foreign": (path prefix, why) of what the controller adds that the file has no field
    # for, where a fix is not offered; "fix_renames": the renames a fix follows where they differ, a
    # default shared by other pods being set in the pod's own field instead; "pod_fields": where a
    # pod-level field the file lacks is written, when not at the pod's path, e.g. Dynamo's extraPodSpec;
    # "fixable": the pod paths where a fix is the user's edit though ``fix_note`` says the pod's are
    # not, the fields the controller copies into the pod as they are, e.g. a TrainJob's resourcesPerNode).
    cache: dict
    __slots__ = _fields = (
        "spec_path",
        "spec",
        "role",
        "replicas",
        "containers",
        "init",
        "volumes",
        "metadata",
        "renames",
        "fix_note",
        "shared",
        "cache",
    )

    def __init__(
        self,
        spec_path: tuple,
        spec: dict,
        role: str,
        replicas: int | None,
        containers: list[tuple[Any, tuple]],
        *,
        init: list[tuple[Any, tuple]] | None = None,
        volumes: list[tuple[Any, tuple]] | None = None,
        metadata: Any = None,
        renames: list[tuple[tuple, tuple]] | None = None,
        fix_note: str | None = None,
        shared: bool = False,
    ) -> None:
        self.spec_path = spec_path
        self.spec = spec
        self.role = role
        self.replicas = replicas
        self.containers = containers
        self.init = [] if init is None else init
        self.volumes = [] if volumes is None else volumes
        self.metadata = metadata
        self.renames = [] if renames is None else list(renames)
        self.fix_note = fix_note
        self.shared = shared
        self.cache = {}

    @property
    def has_containers(self) -> bool:
        return any(isinstance(c, dict) for c, _ in self.containers)


Builder = Callable[[K8sObject], list[Pod]]


class KindInfo(Frozen):
    finder: Finder
    training: bool  # a training workload whatever its pods request
    # Kinds whose pods a controller builds from fields that are not a pod template (the
    # platform kinds): the pods, described as that controller builds them.
    builder: Builder | None
    __slots__ = _fields = ("finder", "training", "builder")

    def __init__(self, finder: Finder, training: bool, builder: Builder | None = None) -> None:
        object.__setattr__(self, "finder", finder)
        object.__setattr__(self, "training", training)
        object.__setattr__(self, "builder", builder)


def text(value: Any, fallback: str) -> str:
    """``value`` when it is a string, else ``fallback``."""
    return value if isinstance(value, str) else fallback


def integer(value: Any, default: int | None) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return default
    return value


def at(*path: Any, replicas_key: tuple | None = None, default: int | None = 1) -> Finder:
    """The template at ``path``; its replicas at ``replicas_key`` (else ``default``)."""

    def find(obj: dict) -> Iterator[TemplateSpot]:
        if dig(obj, *path) is None:
            return
        replicas = integer(dig(obj, *replicas_key), default) if replicas_key else default
        yield tuple(path), "", replicas

    return find


def chain(*finders: Finder) -> Finder:
    def find(obj: dict) -> Iterator[TemplateSpot]:
        for f in finders:
            yield from f(obj)

    return find


def none(obj: dict) -> Iterator[TemplateSpot]:
    """No template at a fixed place (the kind's builder makes its pods)."""
    return iter(())


def listed(node: Any, path: tuple) -> list[tuple[Any, tuple]]:
    """The items of the list at ``node`` with their paths (nothing when it is not a list)."""
    return [(item, path + (i,)) for i, item in enumerate(node)] if isinstance(node, list) else []


def with_resources(container: dict, requests: dict, limits: dict) -> dict:
    """A copy of ``container`` whose resources have these requests and limits added where it
    sets none (a controller's defaults)."""
    res = container.get("resources")
    res = dict(res) if isinstance(res, dict) else {}
    for part, defaults in (("requests", requests), ("limits", limits)):
        have = res.get(part)
        merged = dict(have) if isinstance(have, dict) else {}
        for k, v in defaults.items():
            merged.setdefault(k, v)
        if merged:
            res[part] = merged
    out = dict(container)
    out["resources"] = res
    return out


# A DRA device class asked for as an extended resource (KEP-5004; k8s.io/api/resource/v1
# ResourceDeviceClassPrefix): how a pod is described whose controller makes the claim template
# itself, from a device class and a count it was given (the devices are the same to the rules).
DEVICE_CLASS_RESOURCE = "deviceclass.resource.kubernetes.io/"


def with_device_class(container: dict, device_class: str, count: int) -> dict:
    """A copy of ``container`` that asks for ``count`` devices of ``device_class``."""
    res = dict(container["resources"]) if isinstance(container.get("resources"), dict) else {}
    for part in ("requests", "limits"):
        have = res.get(part)
        res[part] = {**(have if isinstance(have, dict) else {}), DEVICE_CLASS_RESOURCE + device_class: count}
    return {**container, "resources": res}


def pod_spec_at(obj: K8sObject, path: tuple, role: str, replicas: int | None, shared: bool = False) -> Pod | None:
    """A PodSpec written directly at ``path`` (no template metadata around it)."""
    spec = dig(obj.data, *path)
    if not isinstance(spec, dict):
        return None
    return Pod(
        path,
        spec,
        role,
        replicas,
        listed(spec.get("containers"), path + ("containers",)),
        init=listed(spec.get("initContainers"), path + ("initContainers",)),
        volumes=listed(spec.get("volumes"), path + ("volumes",)),
        metadata={"labels": spec.get("labels"), "annotations": spec.get("annotations")},
        renames=[(path + ("metadata",), path)],
        shared=shared,
    )


# The lists of a pod spec that a strategic merge patch merges by key (k8s.io/api/core/v1
# patchMergeKey); every other list is replaced whole.
_MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "env": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "ports": "containerPort",
    "imagePullSecrets": "name",
    "resourceClaims": "name",
    "hostAliases": "ip",
}


def strategic_merge(base: Any, over: Any, key: str = "") -> Any:
    """``over`` strategic-merged over ``base`` as the controllers' mergeSpecs do (k8s strategicpatch): mappings key
    by key, the keyed lists of a pod by their merge key (``over``'s items first, in its order, so
    they keep their place in the file; then those only ``base`` has), other values replaced."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            out[k] = strategic_merge(base[k], v, k) if k in base else v
        return out
    mk = _MERGE_KEYS.get(key)
    if mk and isinstance(base, list) and isinstance(over, list):
        keyed = {b[mk]: b for b in base if isinstance(b, dict) and isinstance(b.get(mk), (str, int))}
        seen = set()
        merged = []
        for o in over:
            name = o.get(mk) if isinstance(o, dict) else None
            if isinstance(name, (str, int)) and name in keyed:
                merged.append(strategic_merge(keyed[name], o))
                seen.add(name)
            else:
                merged.append(o)
        return merged + [b for b in base if not (isinstance(b, dict) and b.get(mk) in seen)]
    return over
