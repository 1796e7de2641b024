"""Pod resource semantics: defaulting, QoS class, effective pod requests.

Pure functions over raw pod-spec mappings as loaded from YAML. Wrong types
and invalid quantities are treated as absent here; other code reports them.

Sources followed: ``SetDefaults_Pod`` / ``SetDefaults_ResourceList``
(pkg/apis/core/v1/defaults.go), ``ComputePodQOS`` (pkg/apis/core/helper/qos),
``AggregateContainerRequests`` / ``PodRequests`` / ``PodLimits``
(component-helpers/resource/helpers.go) and the resource-name helpers of
pkg/apis/core/helper/helpers.go.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator, Mapping
from contextvars import ContextVar, Token
from fractions import Fraction
from functools import lru_cache

from .quantity import QuantityError, is_placeholder, milli_round_up, parse_manifest_quantity

__all__ = [
    "ACCELERATOR_AMOUNT_PATTERNS",
    "ACCELERATOR_PATTERNS",
    "GPU_SHARE_ANNOTATIONS",
    "BEST_EFFORT",
    "BURSTABLE",
    "GUARANTEED",
    "accelerator_requests",
    "container_requests_limits",
    "defaulted_requests",
    "effective_pod_limit",
    "effective_pod_request",
    "hugepages_without_cpu_or_memory",
    "is_accelerator_pod",
    "is_accelerator_resource",
    "is_extended_resource",
    "is_hugepages",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_native_resource",
    "is_qualified_name",
    "is_sidecar",
    "pod_level_resources",
    "pod_requests",
    "qos_class",
]

GUARANTEED = "Guaranteed"
BURSTABLE = "Burstable"
BEST_EFFORT = "BestEffort"

ResourceList = dict[str, Fraction]

# Resources counted in devices (or in slices of one: MIG, time-sliced, vNPU templates): the vendors'
# device plugins and HAMi's (charts/hami/values.yaml and its device ConfigMap: the count resource
# of each vendor; older HAMi releases named Enflame's enflame.com/vgcu, Iluvatar's iluvatar.ai/vgpu).
ACCELERATOR_PATTERNS: tuple[str, ...] = (
    "nvidia.com/gpu",
    "nvidia.com/gpu.shared",
    "nvidia.com/mig-*",
    "nvidia.com/pgpu",  # NVIDIA/sandbox-device-plugin: a GPU passed through to a Kata VM (P_GPU_ALIAS=pgpu)
    "amd.com/gpu",
    "gpu.intel.com/*",
    "habana.ai/gaudi",
    "npu.intel.com/accel",  # Intel NPU device plugin (intel-device-plugins-for-kubernetes cmd/npu_plugin)
    "aws.amazon.com/neuron*",
    "google.com/tpu",
    "huawei.com/Ascend*",  # Ascend device plugin and HAMi: Ascend910, Ascend910B3, Ascend310P, Ascend910-4c (vNPU)
    "hygon.com/dcu",  # Hygon DCU device plugin
    "hygon.com/dcunum",  # HAMi
    "cambricon.com/mlu",
    "cambricon.com/vmlu",  # HAMi
    "mthreads.com/gpu",
    "mthreads.com/vgpu",  # HAMi
    "metax-tech.com/gpu",
    "metax-tech.com/sgpu",  # HAMi
    "iluvatar.ai/gpu",
    "iluvatar.ai/vgpu",  # HAMi before 2.6
    "iluvatar.ai/*-vgpu",  # HAMi: iluvatar.ai/BI-V150-vgpu
    "enflame.com/gcu",
    "enflame.com/vgcu",  # HAMi before 2.7
    "enflame.com/drs-gcu",  # HAMi
    "kunlunxin.com/xpu",
    "kunlunxin.com/vxpu",  # HAMi
    "vastaitech.com/va",
    "birentech.com/gpu",
    "volcano.sh/vgpu-number",  # Volcano's vGPU (HAMi-core; docs/user-guide/how_to_use_volcano_vgpu.md)
    "volcano.sh/gpu-number",  # the Volcano device plugin's whole GPUs (--gpu-strategy=number)
)
# Names the patterns above also match that are amounts of a device (its memory, a share of its cores),
# not devices: huawei.com/Ascend910B-memory, gpu.intel.com/millicores; and the Intel GPU plugin's
# monitoring access (gpu.intel.com/i915_monitoring: every GPU, for a monitor). The other vendors' amounts
# (nvidia.com/gpumem, enflame.com/vgcu-percentage, hygon.com/dcumem...) match no pattern above.
ACCELERATOR_AMOUNT_PATTERNS: tuple[str, ...] = (
    "huawei.com/Ascend*-memory",
    "huawei.com/Ascend*-core",
    "gpu.intel.com/millicores",
    "gpu.intel.com/memory.max",
    "gpu.intel.com/tiles",
    "gpu.intel.com/*_monitoring",
)
# The annotations with which a pod asks NVIDIA's KAI Scheduler (and Run:ai) for a share of a GPU
# instead of an nvidia.com/gpu count (NVIDIA/KAI-Scheduler pkg/common/resources/gpu_sharing.go,
# RequestsGPUFraction: `gpu-fraction: "0.5"`, `gpu-memory: "2000"` MiB).
GPU_SHARE_ANNOTATIONS = ("gpu-fraction", "gpu-memory")
_ACCELERATOR_RE = re.compile("|".join(fnmatch.translate(p) for p in ACCELERATOR_PATTERNS))
_AMOUNT_RE = re.compile("|".join(fnmatch.translate(p) for p in ACCELERATOR_AMOUNT_PATTERNS))

_QOS_RESOURCES = ("cpu", "memory")
_HUGEPAGES_PREFIX = "hugepages-"

# validation.IsQualifiedName / IsDNS1123Subdomain / IsDNS1123Label
_QUALIFIED_NAME_RE = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL)
_DNS1123_SUBDOMAIN_RE = re.compile(rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*")


# --- resource names -------------------------------------------------------


def is_native_resource(name: str) -> bool:
    """No domain, or a ``kubernetes.io/`` one (``IsNativeResource``)."""
    return "/" not in name or "kubernetes.io/" in name


def is_hugepages(name: str) -> bool:
    return name.startswith(_HUGEPAGES_PREFIX)


def is_dns1123_label(value: str) -> bool:
    """``validation.IsDNS1123Label``: at most 63 lower-case alphanumerics or '-', alphanumeric at both ends."""
    return len(value) <= 63 and _DNS1123_LABEL_RE.fullmatch(value) is not None


def is_dns1123_subdomain(value: str) -> bool:
    """``validation.IsDNS1123Subdomain``: at most 253 characters of dot-separated DNS labels."""
    return len(value) <= 253 and _DNS1123_SUBDOMAIN_RE.fullmatch(value) is not None


def is_qualified_name(value: str) -> bool:
    """``validation.IsQualifiedName``: a name of at most 63 characters, optionally behind a DNS subdomain
    prefix and '/' (``example.com/MyName``)."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix or not is_dns1123_subdomain(prefix):
            return False
    else:
        return False
    return 0 < len(name) <= 63 and _QUALIFIED_NAME_RE.fullmatch(name) is not None


def is_label_value(value: str) -> bool:
    """``validation.IsValidLabelValue``: empty, or at most 63 alphanumerics, '-', '_' or '.', alphanumeric
    at both ends."""
    return not value or (len(value) <= 63 and _QUALIFIED_NAME_RE.fullmatch(value) is not None)


@lru_cache(maxsize=4096)  # a few names recur in every container; hostile input cannot grow it
def is_extended_resource(name: str) -> bool:
    """A domain-prefixed, non-native name such as ``nvidia.com/gpu`` (``IsExtendedResourceName``)."""
    return not (is_native_resource(name) or name.startswith("requests.")) and is_qualified_name("requests." + name)


@lru_cache(maxsize=4096)
def is_accelerator_resource(name: str) -> bool:
    """An extended resource from the accelerator list (GPUs, TPUs, Gaudi, Neuron...)."""
    return _ACCELERATOR_RE.match(name) is not None and _AMOUNT_RE.match(name) is None and is_extended_resource(name)


def _is_pod_level_resource(name: str) -> bool:
    """cpu, memory and hugepages-* (``IsSupportedPodLevelResource``)."""
    return name in _QOS_RESOURCES or is_hugepages(name)


def _overcommit_allowed(name: str) -> bool:
    return is_native_resource(name) and not is_hugepages(name)


# --- raw spec access ------------------------------------------------------


def _mapping(value: object) -> Mapping:
    return value if isinstance(value, dict) else {}


def _items(value: object) -> Iterator[Mapping]:
    """The mapping items of a list field; anything else yields nothing."""
    if isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, dict):
                yield item


# A ResourceList's entries, by value: ((name, type of the value, value), ...) -> its parsed
# entries. The type is part of the key (True == 1 == 1.0, but only 1 is a quantity). The
# same requests recur across containers and files; the table is cleared when full.
_RESOURCE_LISTS: dict[tuple, ResourceList] = {}
_RESOURCE_LISTS_MAX = 256


def _resource_list(raw: object) -> ResourceList:
    """Valid entries of a ResourceList, rounded up to milli as API defaulting does (a fresh dict)."""
    if not isinstance(raw, dict):
        return {}
    key = tuple((name, type(value), value) for name, value in raw.items())
    try:
        hit = _RESOURCE_LISTS.get(key)
    except TypeError:  # a value that is a mapping or a list: not a quantity, nothing to remember
        return _parse_resource_list(raw)
    if hit is not None:
        return dict(hit)
    out = _parse_resource_list(raw)
    if len(_RESOURCE_LISTS) >= _RESOURCE_LISTS_MAX:
        _RESOURCE_LISTS.clear()
    _RESOURCE_LISTS[key] = out
    return dict(out)


def _parse_resource_list(raw: Mapping) -> ResourceList:
    out: ResourceList = {}
    for name, raw_value in raw.items():
        if not isinstance(name, str):
            continue
        try:
            value = parse_manifest_quantity(raw_value).value
        except QuantityError:
            continue
        if value < 0:
            continue
        value = milli_round_up(value)
        if value.denominator != 1 and is_extended_resource(name):
            continue  # extended resources must be whole numbers
        out[name] = value
    return out


def container_requests_limits(container: Mapping) -> tuple[ResourceList, ResourceList]:
    """(requests, limits) as written, valid non-negative quantities only.

    Values are rounded up to milli precision (``SetDefaults_ResourceList``,
    which applies to templates too); requests are not defaulted from limits.
    """
    resources = _mapping(_mapping(container).get("resources"))
    return _resource_list(resources.get("requests")), _resource_list(resources.get("limits"))


def defaulted_requests(requests: Mapping[str, Fraction], limits: Mapping[str, Fraction]) -> ResourceList:
    """Requests after ``SetDefaults_Pod``: a missing request takes its limit."""
    out = dict(requests)
    for name, value in limits.items():
        out.setdefault(name, value)
    return out


def is_sidecar(init_container: Mapping) -> bool:
    """An init container with ``restartPolicy: Always`` (KEP-753 sidecar)."""
    return isinstance(init_container, dict) and init_container.get("restartPolicy") == "Always"


# HAMi's admission webhook gives a container that asks only for an amount of a device (its memory,
# its cores) the device itself: NVIDIA's count resource, defaultGPUNum of them (1 in HAMi's chart), when
# the limits name no count (pkg/device/nvidia/device.go mutateContainerResource); one Enflame DRS slice
# for gcu-memory or gcu-core in the limits or requests (pkg/device/enflame/device.go MutateAdmission,
# GenerateResourceRequests). Names of this table that no other webhook reads: a pod that uses them runs
# where HAMi does. The other vendors' amounts count for nothing without their count resource.
HAMI_IMPLIED_DEVICES: dict[str, str] = {
    "nvidia.com/gpumem": "nvidia.com/gpu",
    "nvidia.com/gpumem-percentage": "nvidia.com/gpu",
    "nvidia.com/gpucores": "nvidia.com/gpu",
    "enflame.com/gcu-memory": "enflame.com/drs-gcu",
    "enflame.com/gcu-core": "enflame.com/drs-gcu",
}
HAMI_FROM_REQUESTS = frozenset(n for n in HAMI_IMPLIED_DEVICES if n.startswith("enflame.com/"))


def hami_implied_devices(requests: Mapping, limits: Mapping) -> dict[str, int]:
    """The devices HAMi's webhook adds to a container with these requests and limits (as written)."""
    out: dict[str, int] = {}
    for name, device in HAMI_IMPLIED_DEVICES.items():
        from_requests = name in HAMI_FROM_REQUESTS  # Enflame reads the requests too, NVIDIA the limits only
        asked = name in limits or (from_requests and name in requests)
        if asked and device not in limits and not (from_requests and device in requests):
            out[device] = 1
    return out


class _Container:
    __slots__ = ("requests", "limits", "sidecar")

    def __init__(self, raw: Mapping, init: bool) -> None:
        requests, self.limits = container_requests_limits(raw)
        if not HAMI_IMPLIED_DEVICES.keys().isdisjoint(self.limits) or not HAMI_FROM_REQUESTS.isdisjoint(requests):
            implied = hami_implied_devices(requests, self.limits)
            if implied:  # as the pod is admitted where HAMi runs: the limit, and the request defaulted from it
                self.limits = {**self.limits, **{n: Fraction(v) for n, v in implied.items()}}
        self.requests = defaulted_requests(requests, self.limits)
        self.sidecar = init and is_sidecar(raw)


def _containers(spec: Mapping) -> tuple[list[_Container], list[_Container]]:
    """(init containers, app containers), defaulted. Ephemeral ones never have resources.

    The rules ask this of the same pod spec several times in a row (QoS, pod-level resources,
    accelerators, limits): within :func:`remember` (one object's evaluation), the answers are
    kept, by identity (the entry holds the spec, so its id cannot
    be reused while it is there), and dropped when it ends.
    """
    inits_raw, apps_raw = spec.get("initContainers"), spec.get("containers")
    memo = _MEMO.get()
    if memo is None:
        return _build_containers(inits_raw, apps_raw)
    size = (len(inits_raw) if isinstance(inits_raw, list) else 0) + (len(apps_raw) if isinstance(apps_raw, list) else 0)
    if size < _MEMO_MIN:
        return _build_containers(inits_raw, apps_raw)
    hit = memo.get(id(spec))
    if hit is not None and hit[0] is spec and hit[1] is inits_raw and hit[2] is apps_raw and hit[3] == size:
        return hit[4]
    found = _build_containers(inits_raw, apps_raw)
    memo[id(spec)] = (spec, inits_raw, apps_raw, size, found)
    return found


def _build_containers(inits_raw: object, apps_raw: object) -> tuple[list[_Container], list[_Container]]:
    return [_Container(c, True) for c in _items(inits_raw)], [_Container(c, False) for c in _items(apps_raw)]


# Pod specs with at least _MEMO_MIN containers, within one evaluation (per thread: a context variable).
# A lookup costs less than defaulting even one container, which a dozen rules ask for.
_MEMO: ContextVar[dict | None] = ContextVar("kubelint_ml_defaulted_containers", default=None)
_MEMO_MIN = 1


def remember() -> Token:
    """Start keeping defaulted containers (see :func:`_containers`); give the token to :func:`forget`."""
    return _MEMO.set({})


def forget(token: Token) -> None:
    _MEMO.reset(token)


def _aggregate(inits: list[_Container], apps: list[_Container], limits: bool) -> ResourceList:
    """``aggregateContainerResourcesByFn``: max(apps + sidecars, each init + sidecars before it)."""

    def pick(c: _Container) -> ResourceList:
        return c.limits if limits else c.requests

    def add(into: dict, extra: ResourceList) -> None:
        # whole values are added as ints (a Fraction's addition costs ten times more): many containers
        for name, value in extra.items():
            into[name] = into.get(name, 0) + (value.numerator if value.denominator == 1 else value)

    result: ResourceList = {}
    for c in apps:
        add(result, pick(c))
    sidecars: ResourceList = {}
    init_peak: ResourceList = {}
    for c in inits:
        if c.sidecar:
            add(result, pick(c))
            add(sidecars, pick(c))
            during = sidecars
        else:
            during = dict(pick(c))
            add(during, sidecars)
        for name, value in during.items():
            if name not in init_peak or value > init_peak[name]:
                init_peak[name] = value
    for name, value in init_peak.items():
        if name not in result or value > result[name]:
            result[name] = value
    return {name: value if value.__class__ is Fraction else Fraction(value) for name, value in result.items()}


def container_limits(pod_spec: Mapping) -> ResourceList:
    """``PodLimits`` from the containers alone: apps plus sidecars, or an init container plus the
    sidecars started before it when larger (containers without a limit add nothing)."""
    return _aggregate(*_containers(_mapping(pod_spec)), limits=True)


# --- pod-level resources --------------------------------------------------


# The PodLevelResources gates for a cluster version and its --feature-gates (k8s/gates.py):
# (PodLevelResources, on from 1.34 (off, the API server drops spec.resources);
# PodLevelResourcesFixKubeletQOSClass, on from 1.36 (an empty block no longer decides QoS);
# PodLevelResourcesFixUpdateDefaulting, on from 1.36 (pod limits default from the containers' limits)).
# An unknown version: the newest behaviour.
PodLevelGates = tuple[bool, bool, bool]
NEWEST_GATES: PodLevelGates = (True, True, True)
POD_LEVEL_GATE_NAMES = (
    "PodLevelResources",
    "PodLevelResourcesFixKubeletQOSClass",
    "PodLevelResourcesFixUpdateDefaulting",
)


def pod_level_gates(version: tuple[int, int] | None, overrides: Mapping[str, bool] | None = None) -> PodLevelGates:
    from kubelint_ml.k8s.gates import enabled

    on = [enabled(name, version, overrides) for name in POD_LEVEL_GATE_NAMES]
    return on[0], on[1], on[2]


def _defaulted_pod_level(
    spec: Mapping, inits: list[_Container], apps: list[_Container], limit_defaulting: bool = True
) -> tuple[ResourceList, ResourceList] | None:
    """``spec.resources`` after pod-level defaulting, or None when it is absent.

    ``limit_defaulting``: pod limits default from the containers' limits
    (PodLevelResourcesFixUpdateDefaulting)."""
    raw = spec.get("resources")
    if not isinstance(raw, dict):
        return None
    requests = _resource_list(raw.get("requests"))
    limits = _resource_list(raw.get("limits"))
    everyone = inits + apps

    # defaultHugePagePodLimits
    if requests or limits:
        for name, value in _aggregate(inits, apps, limits=True).items():
            if is_hugepages(name) and name not in requests:
                limits.setdefault(name, value)
    # defaultPodRequests
    if limits:
        for name, value in _aggregate(inits, apps, limits=False).items():
            if name not in requests and _is_pod_level_resource(name) and _overcommit_allowed(name):
                requests[name] = value
        for name, value in limits.items():
            if name not in requests and _is_pod_level_resource(name):
                requests[name] = value
    # defaultPodLimits
    if limit_defaulting and not any(map(_is_pod_level_resource, limits)) and any(map(_is_pod_level_resource, requests)):
        for name, value in _aggregate(inits, apps, limits=True).items():
            if (
                name not in limits
                and _is_pod_level_resource(name)
                and _overcommit_allowed(name)
                and all(name in c.limits for c in everyone)
            ):
                limits[name] = value
    return requests, limits


def hugepages_without_cpu_or_memory(requests: Mapping, limits: Mapping) -> list[str]:
    """The hugepages names of a requests/limits pair that has no cpu or memory in either (sorted), which
    ``validateResourceRequirements`` rejects ("HugePages require cpu or memory"); [] when it holds."""
    names = [n for part in (requests, limits) for n in part if isinstance(n, str)]
    if any(n in _QOS_RESOURCES for n in names):
        return []
    return sorted({n for n in names if is_hugepages(n)})


def _pod_level_set(requests: ResourceList, limits: ResourceList) -> bool:
    """``IsPodLevelResourcesSet``: some cpu/memory/hugepages entry exists."""
    return any(map(_is_pod_level_resource, requests)) or any(map(_is_pod_level_resource, limits))


def pod_level_resources(
    pod_spec: Mapping, *, enabled: bool = True, limit_defaulting: bool = True
) -> tuple[ResourceList, ResourceList] | None:
    """Pod-level (requests, limits) after pod-level defaulting.

    None when ``spec.resources`` is absent or holds no cpu/memory/hugepages
    entry (``{}``, ``{requests: {}}`` count as not set), or when the
    PodLevelResources feature is not ``enabled``.
    """
    if not enabled:
        return None
    spec = _mapping(pod_spec)
    if not isinstance(spec.get("resources"), dict):
        return None  # the common case: no need to look at every container
    inits, apps = _containers(spec)
    pod_level = _defaulted_pod_level(spec, inits, apps, limit_defaulting)
    if pod_level is None or not _pod_level_set(*pod_level):
        return None
    return pod_level


# --- QoS ------------------------------------------------------------------


def _requirements_qos(requests: ResourceList, limits: ResourceList) -> str:
    """``requirementsQOS``: per-resource shapes of cpu and memory."""
    if not requests and not limits:
        return BEST_EFFORT
    shapes = set()
    for name in _QOS_RESOURCES:
        # Compared as numerator and denominator (Fractions are kept in lowest terms; an int is n/1):
        # Fraction's own comparison of two Fractions asks an ABC first, a few times the cost.
        request, limit = requests.get(name, 0), limits.get(name, 0)
        if request.numerator != limit.numerator or request.denominator != limit.denominator:
            return BURSTABLE
        shapes.add(BEST_EFFORT if request.numerator == 0 else GUARANTEED)
    return shapes.pop() if len(shapes) == 1 else BURSTABLE


def qos_class(
    pod_spec: Mapping,
    *,
    pod_level_enabled: bool = True,
    pod_level_qos_fix: bool = True,
    pod_level_limit_defaulting: bool = True,
) -> str:
    """The pod's QoS class, computed as ``ComputePodQOS`` on the defaulted pod.

    ``pod_level_enabled``: the PodLevelResources gate (on from v1.34).
    ``pod_level_qos_fix``: the PodLevelResourcesFixKubeletQOSClass gate; without
    it an empty ``spec.resources: {}`` makes the pod BestEffort.
    ``pod_level_limit_defaulting``: PodLevelResourcesFixUpdateDefaulting (see :func:`pod_level_gates`).
    """
    spec = _mapping(pod_spec)
    inits, apps = _containers(spec)
    if pod_level_enabled:
        pod_level = _defaulted_pod_level(spec, inits, apps, pod_level_limit_defaulting)
        if pod_level is not None and (not pod_level_qos_fix or _pod_level_set(*pod_level)):
            return _requirements_qos(*pod_level)
    pod_qos = ""
    for c in inits + apps:
        container_qos = _requirements_qos(c.requests, c.limits)
        if container_qos == BURSTABLE:
            return BURSTABLE
        if not pod_qos:
            pod_qos = container_qos
        elif pod_qos != container_qos:
            return BURSTABLE
    return pod_qos or BEST_EFFORT


# --- effective pod requests and limits ------------------------------------


def effective_pod_request(pod_spec: Mapping, resource: str, *, pod_level_enabled: bool = True) -> Fraction:
    """What the scheduler reserves for the pod (``PodRequests``, overhead excluded).

    max(sum of app containers + all sidecars, max over init containers i of
    (init_i + sidecars declared before i)), after defaulting; a pod-level
    request for cpu/memory/hugepages replaces it (when ``pod_level_enabled``).
    """
    spec = _mapping(pod_spec)
    inits, apps = _containers(spec)
    pod_level = _defaulted_pod_level(spec, inits, apps) if pod_level_enabled else None
    if pod_level is not None and resource in pod_level[0] and _is_pod_level_resource(resource):
        return pod_level[0][resource]
    return Fraction(_aggregate(inits, apps, limits=False).get(resource, 0))


def effective_pod_limit(pod_spec: Mapping, resource: str) -> Fraction | None:
    """The pod's limit for ``resource`` (``PodLimits``), or None when unlimited.

    A positive pod-level limit wins. Otherwise every container (init, sidecar,
    app) must have a positive limit, as the kubelet requires before it sets a
    pod cgroup limit; then the aggregate of container limits is returned.
    """
    spec = _mapping(pod_spec)
    inits, apps = _containers(spec)
    pod_level = _defaulted_pod_level(spec, inits, apps)
    if pod_level is not None and _pod_level_set(*pod_level) and _is_pod_level_resource(resource):
        limit = pod_level[1].get(resource, Fraction(0))
        if limit > 0:
            return limit
    everyone = inits + apps
    if not everyone or any(c.limits.get(resource, 0) <= 0 for c in everyone):
        return None
    return _aggregate(inits, apps, limits=True)[resource]


# --- accelerators ---------------------------------------------------------


def accelerator_requests(pod_spec: Mapping) -> dict[str, int]:
    """Accelerator resource -> devices the pod gets (same aggregation, defaulted); positive only."""
    spec = _mapping(pod_spec)
    inits, apps = _containers(spec)
    totals = _aggregate(inits, apps, limits=False)
    out = {}
    for name in sorted(totals):
        if is_accelerator_resource(name) and totals[name].numerator > 0:
            out[name] = int(totals[name])
    return out


def pod_requests(pod_spec: Mapping) -> ResourceList:
    """``PodRequests`` of every resource from the containers (defaulted, sidecars and init containers
    aggregated as the scheduler does)."""
    return _aggregate(*_containers(_mapping(pod_spec)), limits=False)


# What a pod's resource names say of its devices (see :func:`accelerator_use`).
NO_DEVICES, MAYBE_DRA, ACCELERATOR = 0, 1, 2
DRA_EXTENDED_PREFIX = "deviceclass.resource.kubernetes.io/"  # k8s.io/api/resource/v1 ResourceDeviceClassPrefix


@lru_cache(maxsize=4096)
def _name_use(name: str) -> int:
    if is_accelerator_resource(name):
        return ACCELERATOR
    # a DRA extended resource: a class's implicit name, or any extended name a DeviceClass may declare
    return MAYBE_DRA if name.startswith(DRA_EXTENDED_PREFIX) or is_extended_resource(name) else NO_DEVICES


def accelerator_use(pod_spec: Mapping) -> int:
    """ACCELERATOR when some container requests or limits a positive amount of an accelerator
    resource; else MAYBE_DRA when some container names a resource a DRA DeviceClass may serve
    (``deviceclass.resource.kubernetes.io/<class>``, another extended resource); else NO_DEVICES."""
    inits, apps = _containers(_mapping(pod_spec))  # the defaulted containers the other rules share
    use = NO_DEVICES
    for c in inits + apps:
        for values in (c.requests, c.limits):  # requests defaulted from limits: both as written
            for n, v in values.items():
                found = _name_use(n)
                if found == ACCELERATOR and v.numerator > 0:
                    return ACCELERATOR
                if found == MAYBE_DRA:
                    use = MAYBE_DRA
    return use


def placeholder_accelerators(pod_spec: Mapping) -> list[str]:
    """The accelerator resources some container asks for with an unrendered placeholder count
    (``nvidia.com/gpu: "{{inputs.parameters.gpus}}"``, ``$GPUS``): devices asked for, how many not
    known until the value is filled in."""
    spec = _mapping(pod_spec)
    out: list[str] = []
    for key in ("initContainers", "containers"):
        for c in _items(spec.get(key)):
            resources = _mapping(c.get("resources"))
            for part in ("requests", "limits"):
                for name, raw in _mapping(resources.get(part)).items():
                    if (
                        name not in out
                        and isinstance(name, str)
                        and is_placeholder(raw)
                        and is_accelerator_resource(name)
                    ):
                        out.append(name)
    return out


def is_accelerator_pod(pod_spec: Mapping) -> bool:
    """Some container requests or limits a positive amount of an accelerator resource.

    DRA claims are not judged here: what they hold is in other objects (kubelint_ml/k8s/dra.py)."""
    return accelerator_use(pod_spec) == ACCELERATOR
