"""Dynamic Resource Allocation: which devices a pod's claims ask for, and whether they are accelerators.

A pod names its claims in ``spec.resourceClaims[]`` (``resourceClaimTemplateName``
or ``resourceClaimName``); the devices are in the ResourceClaimTemplate or
ResourceClaim (``spec.devices.requests[]``: ``exactly`` {``deviceClassName``,
``allocationMode`` ExactCount (``count``, default 1) | All} or ``firstAvailable``
alternatives; before ``resource.k8s.io/v1`` the ``exactly`` fields sit on the
request itself), and what a device *is* is the DeviceClass's business (its
selectors name the driver). A pod can also ask for DRA devices as extended
resources (KEP-5004): ``deviceclass.resource.kubernetes.io/<class>``, or the
``extendedResourceName`` a DeviceClass declares.

Sources: ``staging/src/k8s.io/api/resource/v1/types.go`` (the request forms and
defaults), ``pkg/scheduler/framework/plugins/dynamicresources`` (every entry of
``spec.resourceClaims`` is allocated before the pod binds, and a missing claim
or template keeps it unschedulable), ``k8s.io/api/resource/v1.ResourceDeviceClassPrefix``.

The claim objects are read once per run (the first pass, and ``--context``) into
:class:`DraFacts`; a pod template's answer, :class:`PodDevices`, is worked out
once per template.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from fractions import Fraction
from typing import Any

from kubelint_ml.k8s.gates import enabled, setting
from kubelint_ml.k8s.quantity import QuantityError, parse_manifest_quantity
from kubelint_ml.k8s.resources import (
    DRA_EXTENDED_PREFIX,
    is_accelerator_resource,
    is_dns1123_label,
    is_extended_resource,
    is_label_value,
    is_qualified_name,
)
from kubelint_ml.k8s.version import parse_version
from kubelint_ml.lazyre import LazyPattern
from kubelint_ml.records import Record

__all__ = [
    "ANY_GPU",
    "DRA_CLAIM_KINDS",
    "DRA_EXTENDED_PREFIX",
    "ClassInfo",
    "DraFacts",
    "PodDevices",
    "pod_devices",
]

RESOURCE_GROUP = "resource.k8s.io"
# (DRA_EXTENDED_PREFIX, k8s.io/api/resource/v1 ResourceDeviceClassPrefix, the name any class is asked
# for by as an extended resource, lives in resources.py, which tells such names from the others.)

# Feature gates' defaults (k/k pkg/features/kube_features.go): DynamicResourceAllocation is beta and
# off in 1.32-1.33 (alpha from 1.26), GA and on from 1.34; off, the API server drops a pod's
# spec.resourceClaims and its containers' resources.claims (pkg/api/pod/util.go
# dropDisabledDynamicResourceAllocationFields). DRAExtendedResource (KEP-5004) is alpha and off in
# 1.34-1.35, beta and on from 1.36. DRADeviceTaints (KEP-5055): alpha and off in 1.33-1.35
# (dropDisabledDRADeviceTaintsFields, pkg/registry/resource/resourceclaim, drops a request's
# tolerations), beta and on in 1.36, GA in 1.37. The defaults and the profile's featureGates over
# them: k8s/gates.py.
# The releases whose API server serves ResourceClaimTemplates and ResourceClaims in each version of
# resource.k8s.io (first, last; None: still served): v1alpha1 1.26, v1alpha2 1.27-1.30, v1alpha3
# 1.31-1.33, v1beta1 from 1.32, v1beta2 from 1.33, v1 from 1.34 (the built-in OpenAPI of each release;
# tests/test_dra_versions.py holds this table to the bundled schemas). An object of a version its
# cluster does not serve is refused ("no matches for kind ... in version ...") and never exists.
CLAIM_API_SERVED: dict[str, tuple[tuple[int, int], tuple[int, int] | None]] = {
    "v1alpha1": ((1, 26), (1, 26)),
    "v1alpha2": ((1, 27), (1, 30)),
    "v1alpha3": ((1, 31), (1, 33)),
    "v1beta1": ((1, 32), None),
    "v1beta2": ((1, 33), None),
    "v1": ((1, 34), None),
}


def served_claim_versions(version: tuple[int, int]) -> list[str]:
    """The resource.k8s.io versions Kubernetes ``version`` serves claims and templates in, newest first."""
    order = ("v1", "v1beta2", "v1beta1", "v1alpha3", "v1alpha2", "v1alpha1")
    out = []
    for v in order:
        first, last = CLAIM_API_SERVED[v]
        if first <= version and (last is None or version <= last):
            out.append(v)
    return out


# The kinds the first pass reads (ComputeDomain: NVIDIA's driver makes the template it names).
DRA_CLAIM_KINDS = ("ResourceClaimTemplate", "ResourceClaim", "DeviceClass", "ComputeDomain")

# What a class of devices is. GPU-like classes map to the device-plugin resource a node
# catalog counts (so a claimed GPU is judged as `nvidia.com/gpu: 1` is).
GPU = "gpu"  # whole accelerators, counted per node as `resource`
SLICE = "slice"  # partitions of one (MIG): how many a node offers depends on its layout
ACCELERATOR = "accelerator"  # an accelerator whose count per node is not known here
OTHER = "other"  # known not to be an accelerator (IMEX channels, NICs)
# The resource of a GPU class whose vendor resource is not known (gpu.example.com, Intel's): on a node
# it is one of that node's GPUs, counted as the node's GPU resource (our inference: a GPU node's
# DRA driver publishes the GPUs its device plugin would).
ANY_GPU = "gpu"
# MIG partitions: a "<g>g.<memory>gb" profile takes g of its GPU's compute slices, 7 on A100, A800,
# H100, H800, H20, H200, GH200, B200 and GB200, 4 on A30 and RTX PRO 6000, 2 on RTX PRO 5000 and 4500
# (NVIDIA MIG user guide, "Supported GPUs" and "Supported MIG Profiles"; NVIDIA/gpu-operator
# assets/state-mig-manager/0400_configmap.yaml, the default mig-parted layouts per GPU). Which GPU,
# when the claim does not say, is told by the profile (1g.6gb exists on A30 only), else by the node
# type; failing both, the fewest slices of a GPU that can have a g-slice profile (the largest share
# the partition can be, so a GPU-share finding holds on any of them), and -v says so.
MIG_SLICES = 7
_FEWEST_SLICES = {1: 2, 2: 2, 3: 7, 4: 4}  # g -> the fewest slices of a MIG GPU with a g-slice profile
_MIG_PROFILE_SLICES: dict[str, tuple[int, str]] = {
    # 4 compute slices
    "1g.6gb": (4, "A30"),
    "2g.12gb": (4, "A30"),
    "4g.24gb": (4, "A30"),
    "2g.48gb": (4, "RTX PRO 6000"),
    "4g.96gb": (4, "RTX PRO 6000"),
    # 7 compute slices
    **{
        p: (7, m)
        for m, ps in (
            ("A100 40GB", ("1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb")),
            ("A100/H100 80GB", ("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb")),
            ("H100 NVL", ("1g.12gb", "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb")),
            ("H100 96GB", ("3g.48gb", "4g.48gb", "7g.96gb")),
            ("H200", ("1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb")),
            ("GH200 144GB", ("1g.36gb", "2g.36gb", "3g.72gb", "4g.72gb", "7g.144gb")),
            ("B200", ("1g.23gb", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb")),
            ("GB200", ("1g.47gb", "2g.47gb", "3g.93gb", "4g.93gb", "7g.186gb")),
        )
        for p in ps
    },
}
# A profile two GPUs share: 1g.24gb is 1 of 7 slices on H100 NVL, H100 96GB and GH200, 1 of 4 on RTX PRO 6000.
_MIG_AMBIGUOUS = {"1g.24gb": "H100 NVL, H100 96GB and GH200 (7 slices) and RTX PRO 6000 (4 slices)"}
# GPU models (product names as NVML, GPU Feature Discovery and the node catalog write them).
_MIG_MODEL_RE = LazyPattern(
    r"(?<![a-z0-9])(a30|rtx pro 6000|rtx pro 5000|rtx pro 4500|a100|a800|h100|h800|h200|h20|gh200|b200|gb200)"
    r"(?![a-z0-9])"
)
_MIG_MODEL_SLICES = {"a30": 4, "rtx pro 6000": 4, "rtx pro 5000": 2, "rtx pro 4500": 2}


def model_mig_slices(product: str | None) -> int | None:
    """The compute slices of a MIG-capable GPU named by its product name (NVIDIA A30, NVIDIA-A100-SXM4-40GB),
    else None."""
    if not product:
        return None
    m = _MIG_MODEL_RE.search(product.lower().replace("-", " ").replace("_", " "))
    return _MIG_MODEL_SLICES.get(m.group(1), MIG_SLICES) if m else None


def profile_slices(profile: str) -> int:
    """A MIG profile's compute slices: the g of "<g>g.<memory>gb"."""
    return int(profile.split("g.", 1)[0])


def mig_slices(profile: str, product: str | None) -> tuple[int | None, str]:
    """The compute slices of the GPU a ``profile`` partition is cut from, and how that is known;
    None when neither the product name nor the profile tells."""
    by_model = model_mig_slices(product)
    if by_model is not None:
        return by_model, f"{product} has {by_model} compute slices"
    base = _base_profile(profile)
    known = _MIG_PROFILE_SLICES.get(base)
    if known is not None:
        return known[0], f"{base} is a profile of {known[1]} ({known[0]} compute slices)"
    if base in _MIG_AMBIGUOUS:
        return None, f"{base} exists on {_MIG_AMBIGUOUS[base]}"
    g = profile_slices(base)
    if g == 3 or g > 4:  # 2- and 4-slice GPUs have 1g, 2g and 4g profiles only
        return MIG_SLICES, f"a {g}g profile exists on 7-slice GPUs only"
    return None, f"{base} is not a profile kubelint-ml knows"


def fewest_slices(g: int) -> int:
    """The fewest compute slices of a MIG GPU that can have a g-slice profile: the largest share of
    a GPU such a partition can be."""
    return _FEWEST_SLICES.get(g, MIG_SLICES)


def _base_profile(profile: str) -> str:
    """1g.10gb+me -> 1g.10gb; 1g.24gb-me -> 1g.24gb."""
    m = _PROFILE_NAME_RE.match(profile)
    return m.group(0) if m else profile


class ClassInfo(Record):
    """What a device class is: ``kind`` (GPU, SLICE, ACCELERATOR, OTHER, or None: unknown), the
    device-plugin resource it counts as (for GPU), and how that was decided."""

    kind: str | None
    resource: str | None
    how: str
    profile: str | None  # MIG: the profile the class's selectors (or its name) name
    product: str | None  # MIG: the GPU product name the class's selectors name
    __slots__ = _fields = ("kind", "resource", "how", "profile", "product")

    def __init__(
        self, kind: str | None, resource: str | None, how: str, profile: str | None = None, product: str | None = None
    ) -> None:
        self.kind = kind
        self.resource = resource
        self.how = how
        self.profile = profile
        self.product = product

    @property
    def accelerator(self) -> bool:
        return self.kind in (GPU, SLICE, ACCELERATOR)


# Drivers (and the classes their charts install) whose devices are accelerators: driver -> resource.
_ACCELERATOR_DRIVERS: dict[str, tuple[str, str | None]] = {
    "gpu.nvidia.com": (GPU, "nvidia.com/gpu"),
    "gpu.amd.com": (GPU, "amd.com/gpu"),
    "gpu.intel.com": (GPU, ANY_GPU),  # i915 or xe: the node's own GPU resource
    "gaudi.intel.com": (ACCELERATOR, "habana.ai/gaudi"),
    "neuron.aws.com": (ACCELERATOR, None),  # devices or cores
    "tpu.google.com": (ACCELERATOR, "google.com/tpu"),
}
_KNOWN_CLASSES: dict[str, tuple[str, str | None]] = {
    **_ACCELERATOR_DRIVERS,
    "mig.nvidia.com": (SLICE, "nvidia.com/gpu"),
    "vfio.gpu.nvidia.com": (GPU, "nvidia.com/gpu"),
    # NVIDIA's IMEX channels and their daemons: multi-node NVLink plumbing, not GPUs.
    "compute-domain-default-channel.nvidia.com": (OTHER, None),
    "compute-domain-daemon.nvidia.com": (OTHER, None),
    "compute-domain.nvidia.com": (OTHER, None),
}
# Words that name an accelerator as a whole part of the first label of a class or driver name
# (gpu.example.com, mig-1g-10gb.example.com; parts are split at '-' and '_', so data-migration,
# gpudirect-rdma and livemigration name none) ...
_ACCELERATOR_WORDS = frozenset(("gpu", "gpus", "tpu", "npu", "neuron", "gaudi", "accelerator"))
_SLICE_WORD = "mig"
# ... and words that name something else (NICs, storage), which win over the accelerator words
# (gpu-nic, mig-storage, rdma-gpu).
_OTHER_WORDS = frozenset(("nic", "net", "netdev", "rdma", "sriov", "dranet", "network", "storage", "fpga", "imex"))

_DRIVER_RE = LazyPattern(r"""device\.driver\s*==\s*['"]([^'"]+)['"]|device\.driver\s+in\s*\[([^\]]*)\]""")
_QUOTED_RE = LazyPattern(r"""['"]([^'"]+)['"]""")
_MIG_RE = LazyPattern(r"""\.type\s*==\s*['"]mig['"]""")
# A device attribute `type` compared with a word (device.attributes["driver.example.com"].type == "gpu"):
# what the devices are, where the driver alone does not say (the DRA example driver's devices).
_TYPE_RE = LazyPattern(r"""\.type\s*==\s*['"]([A-Za-z][A-Za-z0-9_-]*)['"]""")
_PROFILE_RE = LazyPattern(r"""(?:\.profile|\[\s*['"]profile['"]\s*\])\s*==\s*['"](\d+g\.\d+gb(?:[+-][a-z.+-]*)?)['"]""")
_PRODUCT_RE = LazyPattern(r"""(?:\.productName|\[\s*['"]productName['"]\s*\])\s*==\s*['"]([^'"]+)['"]""")
_PROFILE_NAME_RE = LazyPattern(r"\d+g\.\d+gb")
_CLASS_PROFILE_RE = LazyPattern(r"(?<![0-9])(\d)g[.-](\d+)gb")  # mig-1g-12gb.gpu.nvidia.com


def _mapping(value: object) -> Mapping:
    return value if isinstance(value, dict) else {}


def _items(value: object) -> Iterator[Mapping]:
    if isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                yield item


def _by_word(name: str) -> ClassInfo | None:
    words = set(name.split(".", 1)[0].lower().replace("_", "-").split("-"))
    if words & _OTHER_WORDS:
        return ClassInfo(OTHER, None, f"'{name}' names a non-accelerator device")
    if _SLICE_WORD in words:
        m = _CLASS_PROFILE_RE.search(name)
        profile = f"{m.group(1)}g.{m.group(2)}gb" if m else None
        return ClassInfo(SLICE, "nvidia.com/gpu", f"'{name}' names MIG partitions", profile)
    if words & {"gpu", "gpus"}:
        return ClassInfo(GPU, ANY_GPU, f"'{name}' names GPUs")
    if words & _ACCELERATOR_WORDS:
        return ClassInfo(ACCELERATOR, None, f"'{name}' names an accelerator")
    return None


def classify_name(name: str) -> ClassInfo | None:
    """A class (or driver) known by its name, else None."""
    known = _KNOWN_CLASSES.get(name)
    if known is not None:
        kind, resource = known
        return ClassInfo(kind, resource, f"'{name}' is a known device class")
    if name.endswith(".gpu.nvidia.com"):  # classes made over NVIDIA's GPU driver (mig-1g-12gb.gpu.nvidia.com)
        found = _by_word(name)
        if found is not None and found.kind == SLICE:
            return found
        return ClassInfo(GPU, "nvidia.com/gpu", f"'{name}' is a class of NVIDIA's GPU driver")
    return _by_word(name)


class ClassFact(Record):
    """A DeviceClass among the inputs: the drivers its selectors name, and what it says of MIG."""

    name: str
    drivers: tuple[str, ...]  # every driver a selector pins (device.driver == 'x', device.driver in [...])
    mig: bool
    profile: str | None  # MIG profile (1g.12gb)
    extended: str | None  # spec.extendedResourceName
    product: str | None  # the GPU's productName (NVIDIA A30)
    device_type: str | None  # the device type its selectors compare a `type` attribute with
    __slots__ = _fields = ("name", "drivers", "mig", "profile", "extended", "product", "device_type")

    def __init__(
        self,
        name: str,
        drivers: tuple[str, ...],
        mig: bool,
        profile: str | None,
        extended: str | None,
        product: str | None = None,
        device_type: str | None = None,
    ) -> None:
        self.name = name
        self.drivers = drivers
        self.mig = mig
        self.profile = profile
        self.extended = extended
        self.product = product
        self.device_type = device_type


def _selectors(value: object) -> tuple[tuple[str, ...], bool, str | None, str | None]:
    """What CEL selectors say of a device: (the drivers named, MIG, MIG profile, productName; the
    first named of the last two)."""
    drivers: list[str] = []
    profile = product = None
    mig = False
    for sel in _items(value):
        expr = _mapping(sel.get("cel")).get("expression")
        if not isinstance(expr, str):
            continue
        for d in _DRIVER_RE.finditer(expr):
            named = [d.group(1)] if d.group(1) else _QUOTED_RE.findall(d.group(2))
            drivers.extend(n for n in named if n not in drivers)
        mig = mig or _MIG_RE.search(expr) is not None
        if profile is None and (m := _PROFILE_RE.search(expr)):
            profile = m.group(1)
        if product is None and (m := _PRODUCT_RE.search(expr)):
            product = m.group(1)
    return tuple(drivers), mig, profile, product


class SubRequest(Record):
    """One way to satisfy a device request: a class, ExactCount with ``count`` or All (count None)."""

    device_class: str
    count: int | None
    profile: str | None  # the MIG profile the request's own selectors name
    product: str | None  # ... and the GPU's productName
    device_type: str | None  # ... and the device type they compare an attribute with (see _TYPE_RE)
    share: bool  # it asks for part of each device's capacity (capacity.requests, KEP-5075)
    devices: tuple[tuple[str, str, str], ...]  # (driver, pool, device) allocated for it (a claim's status)
    # per allocated device, the capacity its result consumed (consumedCapacity: name -> quantity)
    consumed: tuple[dict[str, Fraction], ...]
    __slots__ = _fields = (
        "device_class",
        "count",
        "profile",
        "product",
        "device_type",
        "share",
        "devices",
        "consumed",
    )

    def __init__(
        self,
        device_class: str,
        count: int | None,
        profile: str | None = None,
        product: str | None = None,
        device_type: str | None = None,
        share: bool = False,
        devices: tuple[tuple[str, str, str], ...] = (),
        consumed: tuple[dict[str, Fraction], ...] = (),
    ) -> None:
        self.device_class = device_class
        self.count = count
        self.profile = profile
        self.product = product
        self.device_type = device_type
        self.share = share
        self.devices = devices
        self.consumed = consumed


def _device_type(value: object) -> str | None:
    """The first device type CEL selectors compare a ``type`` attribute with (``mig`` aside)."""
    for sel in _items(value):
        expr = _mapping(sel.get("cel")).get("expression")
        if isinstance(expr, str):
            for m in _TYPE_RE.finditer(expr):
                if m.group(1).lower() != _SLICE_WORD:
                    return m.group(1)
    return None


def _sub(raw: Mapping) -> SubRequest | None:
    cls = raw.get("deviceClassName")
    if not isinstance(cls, str) or not cls:
        return None
    profile = product = device_type = None
    if raw.get("selectors"):
        _, _, profile, product = _selectors(raw["selectors"])
        device_type = _device_type(raw["selectors"])
    share = bool(_mapping(_mapping(raw.get("capacity")).get("requests")))
    if raw.get("allocationMode") == "All":
        return SubRequest(cls, None, profile, product, device_type, share)
    count = raw.get("count", 1)
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        count = 1
    return SubRequest(cls, count, profile, product, device_type, share)


def _partition(device_type: str | None) -> bool:
    """A device type that names a partition of a GPU (AMD's ``amdgpu-partition``)."""
    return device_type is not None and "partition" in device_type.lower()


_Allocated = list[tuple[tuple[str, str, str], dict[str, Fraction]]]


def _allocated_results(status: object) -> dict[str, _Allocated]:
    """The requests an allocated ResourceClaim's devices were allocated for
    (``status.allocation.devices.results[].request``: ``<request>`` or ``<request>/<subrequest>``), each
    with the devices allocated for it, (driver, pool, device), one result per device, and the capacity
    each result consumed of its device (``consumedCapacity``, KEP-5075)."""
    results = _mapping(_mapping(_mapping(status).get("allocation")).get("devices")).get("results")
    out: dict[str, _Allocated] = {}
    for r in _items(results):
        if isinstance(r.get("request"), str) and r.get("adminAccess") is not True:
            device = (str(r.get("driver") or ""), str(r.get("pool") or ""), str(r.get("device") or ""))
            out.setdefault(r["request"], []).append((device, _quantities(r.get("consumedCapacity"))))
    return out


def _quantities(value: object) -> dict[str, Fraction]:
    """A map of quantities (``consumedCapacity``), those that parse."""
    out: dict[str, Fraction] = {}
    for name, raw in _mapping(value).items():
        try:
            out[str(name)] = parse_manifest_quantity(raw).value
        except (QuantityError, TypeError, ValueError):
            continue
    return out


def _as_allocated(sub: SubRequest | None, allocated: _Allocated | None) -> SubRequest | None:
    """A request as allocated: its devices (from the claim's results); an ``allocationMode: All``
    request holds as many as its results name (all the node's devices its selectors match, which may be
    fewer than the node's GPUs)."""
    if sub is None or not allocated:
        return sub
    count = len(allocated) if sub.count is None else sub.count
    return SubRequest(
        sub.device_class,
        count,
        sub.profile,
        sub.product,
        sub.device_type,
        sub.share,
        tuple(d for d, _ in allocated),
        tuple(c for _, c in allocated),
    )


_EXACT_FIELDS = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations", "capacity")


def _allocation_rejection(raw: Mapping, at: str) -> str | None:
    """What ``validateDeviceClass`` and ``validateDeviceAllocationMode`` reject of one request's (or
    subrequest's) exact fields, after defaulting (``allocationMode`` ExactCount, a zero ``count`` 1)."""
    cls = raw.get("deviceClassName")
    if not isinstance(cls, str) or not cls:
        return f"{at}.deviceClassName: Required value"  # (validateDeviceClass)
    mode = raw.get("allocationMode", "ExactCount")
    count = raw.get("count", 0)
    if mode not in ("ExactCount", "All"):
        return f'{at}.allocationMode: Unsupported value: "{mode}": supported values: "All", "ExactCount"'
    if isinstance(count, int) and not isinstance(count, bool):
        if mode == "All" and count != 0:
            return f"{at}.count: Invalid value: {count}: must not be specified when allocationMode is 'All'"
        if mode == "ExactCount" and count < 0:
            return f"{at}.count: Invalid value: {count}: must be greater than zero"
    return None


def _name_rejection(raw: Mapping, at: str, seen: set[str]) -> str | None:
    """``validateRequestName`` of a request or subrequest: a DNS label, unique among its siblings."""
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        return f"{at}.name: Required value"
    if not is_dns1123_label(name):
        return f"{at}.name: Invalid value: \"{name}\": must be a DNS label (lower-case letters, digits, '-')"
    if name in seen:
        return f'{at}.name: Duplicate value: "{name}"'
    seen.add(name)
    return None


_TOLERATION_EFFECTS = ("NoExecute", "NoSchedule", "None")  # validDeviceTaintEffects, as sets.List sorts them


def _toleration_rejection(raw: Mapping, at: str) -> str | None:
    """``validateDeviceToleration`` of one request's (or subrequest's) ``tolerations``, after defaulting
    (``operator`` Equal). It checks no ``tolerationSeconds`` (ignored unless the effect is NoExecute) and,
    unlike a pod's, lets an empty key go with Equal."""
    for k, tol in enumerate(_items(raw.get("tolerations"))):
        here = f"{at}.tolerations[{k}]"
        key, value, effect = tol.get("key"), tol.get("value"), tol.get("effect")
        if isinstance(key, str) and key and not is_qualified_name(key):
            return (
                f'{here}.key: Invalid value: "{key}": must be a label name (an optional DNS subdomain prefix and '
                "'/', and a name of at most 63 alphanumerics, '-', '_' or '.')"
            )
        operator = tol.get("operator") or "Equal"
        if operator == "Exists":
            if isinstance(value, str) and value:
                return f'{here}.value: Invalid value: "{value}": must be empty for operator `Exists`'
        elif operator == "Equal":
            if isinstance(value, str) and not is_label_value(value):
                return (
                    f'{here}.value: Invalid value: "{value}": must be a label value (at most 63 alphanumerics, '
                    "'-', '_' or '.', alphanumeric at both ends)"
                )
        elif isinstance(operator, str):
            return f'{here}.operator: Unsupported value: "{operator}": supported values: "Equal", "Exists"'
        if isinstance(effect, str) and effect and effect not in _TOLERATION_EFFECTS:
            listed = ", ".join(f'"{e}"' for e in _TOLERATION_EFFECTS)
            return f'{here}.effect: Unsupported value: "{effect}": supported values: {listed}'
    return None


def claim_toleration_rejection(claim_spec: object, api_version: object) -> str | None:
    """The API server's reason for rejecting a ResourceClaimSpec's device tolerations (the first), or None:
    what :func:`_toleration_rejection` finds in each exact request and each ``firstAvailable`` subrequest.
    Only while DRADeviceTaints is on (k8s/gates.py); off, the tolerations are dropped."""
    version = api_version.rpartition("/")[2] if isinstance(api_version, str) else ""
    if version not in ("v1", "v1beta2", "v1beta1", "v1alpha3"):
        return None
    nested = version in ("v1", "v1beta2")
    for i, req in enumerate(_items(_mapping(_mapping(claim_spec).get("devices")).get("requests"))):
        at = f"devices.requests[{i}]"
        exact = _mapping(req.get("exactly")) if nested else req
        reason = _toleration_rejection(exact, f"{at}.exactly" if nested else at)
        for j, sub in enumerate(_items(req.get("firstAvailable"))):
            reason = reason or _toleration_rejection(sub, f"{at}.firstAvailable[{j}]")
        if reason:
            return reason
    return None


def claim_spec_rejection(claim_spec: object, api_version: object) -> str | None:
    """The API server's reason for rejecting a ResourceClaimSpec's device requests (the first), or None.

    ``validateDeviceRequest`` (k/k ``pkg/apis/resource/validation``): a request is exactly one of
    ``exactly`` and ``firstAvailable``. In ``resource.k8s.io/v1`` and ``v1beta2`` the exact fields sit
    under ``exactly``: written on the request itself, as ``v1beta1`` has them, they are unknown fields
    (kubectl's strict field validation rejects them; decoded without it, they are dropped and the
    request names neither)."""
    version = api_version.rpartition("/")[2] if isinstance(api_version, str) else ""
    if version not in ("v1", "v1beta2", "v1beta1", "v1alpha3"):
        return None  # (v1alpha2's claims, of 1.26-1.30, named a class of another kind: not judged)
    nested = version in ("v1", "v1beta2")
    requests = _mapping(_mapping(claim_spec).get("devices")).get("requests")
    names: set[str] = set()
    for i, req in enumerate(requests if isinstance(requests, list) else ()):
        if not isinstance(req, dict):
            continue  # (the schema's to say)
        at = f"devices.requests[{i}]"
        reason = _name_rejection(req, at, names)
        if reason:
            return reason
        first = req.get("firstAvailable")
        has_first = isinstance(first, list) and bool(first)
        if nested:
            flat = [k for k in _EXACT_FIELDS if k in req]
            if flat:
                verb = "belongs" if len(flat) == 1 else "belong"
                return f"{at}: {', '.join(flat)} {verb} under `exactly` in {api_version}"
            has_exact = isinstance(req.get("exactly"), dict)
        else:  # (any exact field on the request makes it one, Convert_v1beta1_DeviceRequest_To_resource_...)
            has_exact = any(k in req for k in _EXACT_FIELDS)
        if has_exact == has_first:
            return f"{at}: exactly one of `exactly` or `firstAvailable` is required" + (
                ", but multiple fields are set" if has_exact else ""
            )
        if has_first:
            subnames: set[str] = set()
            for j, sub in enumerate(_items(first)):
                sub_at = f"{at}.firstAvailable[{j}]"
                reason = _name_rejection(sub, sub_at, subnames) or _allocation_rejection(sub, sub_at)
                if reason:
                    return reason
            names.update(f"{req['name']}/{n}" for n in subnames)
        else:
            reason = _allocation_rejection(req["exactly"] if nested else req, f"{at}.exactly" if nested else at)
            if reason:
                return reason
    # validateDeviceConstraint, validateDeviceClaimConfiguration: the requests they name are the claim's
    devices = _mapping(_mapping(claim_spec).get("devices"))
    for part in ("constraints", "config"):
        entries = devices.get(part)
        for i, entry in enumerate(entries if isinstance(entries, list) else ()):
            named = entry.get("requests") if isinstance(entry, dict) else None
            for j, ref in enumerate(named if isinstance(named, list) else ()):
                if isinstance(ref, str) and ref not in names:
                    return (
                        f'devices.{part}[{i}].requests[{j}]: Invalid value: "{ref}": must be the name of a request '
                        "in the claim or the name of a request and a subrequest separated by '/'"
                    )
    return None


class ClaimRequests(tuple):
    """A claim's device requests (see :func:`claim_requests`), with ``names``: the names of all its
    top-level requests (those for administrative access too), the names a container's
    ``resources.claims[].request`` may give."""

    names: frozenset[str] = frozenset()
    subrequests: frozenset[tuple[str, str]] = frozenset()  # (request, subrequest) of firstAvailable requests
    admin: bool = False  # some request asks for administrative access
    order: tuple[str, ...] = ()  # the name of the request each entry is (in order)


def claim_requests(claim_spec: object, status: object = None) -> ClaimRequests:
    """A ResourceClaimSpec's device requests, each as its alternatives (one unless ``firstAvailable``);
    requests for administrative access are left out (they allocate no device). With the claim's
    ``status``, a ``firstAvailable`` request the scheduler allocated is the alternative it chose
    (the results name ``<request>/<subrequest>``)."""
    out = []
    names: set[str] = set()
    subrequests: set[tuple[str, str]] = set()
    order: list[str] = []
    admin = False
    allocated = _allocated_results(status) if status else {}
    for req in _items(_mapping(_mapping(claim_spec).get("devices")).get("requests")):
        alternatives: list[SubRequest] = []
        if isinstance(req.get("name"), str):
            names.add(req["name"])
        if _mapping(req.get("exactly")).get("adminAccess") is True or req.get("adminAccess") is True:
            # Administrative access (monitoring, management: DCGM, a device health agent) ignores
            # every ordinary claim and allocation of the devices: it holds none of them.
            admin = True
            continue
        if isinstance(req.get("exactly"), dict):  # resource.k8s.io/v1, v1beta2
            sub = _as_allocated(_sub(req["exactly"]), allocated.get(str(req.get("name"))))
            alternatives = [sub] if sub else []
        elif isinstance(req.get("firstAvailable"), list):
            subs = list(_items(req["firstAvailable"]))
            if isinstance(req.get("name"), str):
                subrequests.update((req["name"], x["name"]) for x in subs if isinstance(x.get("name"), str))
            chosen = [x for x in subs if f"{req.get('name')}/{x.get('name')}" in allocated]
            alternatives = [
                s
                for x in chosen or subs
                if (s := _as_allocated(_sub(x), allocated.get(f"{req.get('name')}/{x.get('name')}"))) is not None
            ]
        else:  # v1beta1 and v1alpha3: the fields on the request itself
            sub = _as_allocated(_sub(req), allocated.get(str(req.get("name"))))
            alternatives = [sub] if sub else []
        if alternatives:
            out.append(tuple(alternatives))
            order.append(str(req.get("name")))
    found = ClaimRequests(out)
    found.order = tuple(order)
    found.names = frozenset(names)
    found.subrequests = frozenset(subrequests)
    found.admin = admin
    return found


class DraFacts:
    """The DRA objects of a run (inputs and ``--context``) and the profile's own classes.

    ``templates`` / ``claims``: name -> [(namespace or "", requests)]; ``classes``: DeviceClasses
    by name; ``extended``: extendedResourceName -> class name. Answers about classes are kept
    until the next object arrives.
    """

    __slots__ = (
        "templates",
        "claims",
        "classes",
        "extended",
        "profile_classes",
        "files",
        "from_context",
        "class_files",
        "classes_from_context",
        "version",
        "gates",
        "exists",
        "kept",
        "kept_extended",
        "stored",
        "allocated",
        "rejected",
        "taint_rejected",
        "api_versions",
        "api_version_in_file",
        "mig_devices",
        "shared_devices",
        "in_file",
        "reserved",
        "_memo",
    )

    def __init__(self) -> None:
        self.templates: dict[str, list[tuple[str, tuple]]] = {}
        self.claims: dict[str, list[tuple[str, tuple]]] = {}
        self.classes: dict[str, ClassFact] = {}
        self.extended: dict[str, str] = {}
        self.profile_classes: dict[str, ClassInfo] = {}
        self.files: set[str] = set()  # the files that define claims or templates
        self.from_context = False  # some came from --context files
        self.class_files: set[str] = set()  # the files that define DeviceClasses
        self.classes_from_context = False  # some DeviceClasses came from --context files
        self.version: tuple[int, int] | None = None  # profile.kubernetesVersion (None: the newest)
        self.gates: Mapping[str, bool] = {}  # profile.featureGates
        # (namespace, "template" | "claim", name) known to exist without their devices: the claims of a
        # pod bound to a node (audit: the scheduler allocated every claim before binding it)
        self.exists: set[tuple[str, str, str]] = set()
        # Pods as the API server stored them carry claims (audit): the cluster keeps them, whatever its version
        self.kept = False
        # Pods the scheduler gave extended resources through DRA (status.extendedResourceClaimStatus, audit):
        # the cluster serves them, whatever its version
        self.kept_extended = False
        # The objects are as the API server stored them (audit): it admitted every one
        self.stored = False
        # class -> the drivers allocated ResourceClaims got their devices of it from (status.allocation)
        self.allocated: dict[str, set[str]] = {}
        self.rejected: dict[tuple[str, str, str], str] = {}  # (kind, name, namespace) -> the API server's reason
        self.taint_rejected: dict[tuple[str, str, str], str] = {}  # the same, for tolerations (from 1.36)
        # (kind, name, namespace) -> the resource.k8s.io versions the templates or claims of that name are
        # written in; (kind, name, file) -> the version of the one a file defines
        self.api_versions: dict[tuple[str, str, str], set[str]] = {}
        self.api_version_in_file: dict[tuple[str, str, str], str] = {}
        # (driver, pool, device) -> (profile, productName) of the MIG devices ResourceSlices publish
        self.mig_devices: dict[tuple[str, str, str], tuple[str, str | None]] = {}
        # (driver, pool, device) -> capacities of the devices several claims may share (allowMultipleAllocations)
        self.shared_devices: dict[tuple[str, str, str], dict[str, Fraction]] = {}
        # (kind, name, file) -> the entry of the object of that name the file defines (its first)
        self.in_file: dict[tuple[str, str, str], tuple[str, tuple]] = {}
        # (name, namespace) -> how many consumers an allocated ResourceClaim is reserved for (status.reservedFor)
        self.reserved: dict[tuple[str, str], int] = {}
        self._memo: dict[str, ClassInfo | None] = {}

    @property
    def claims_enabled(self) -> bool:
        """The cluster keeps pods' claims (DynamicResourceAllocation on by default, from 1.34)."""
        return self.kept or enabled("DynamicResourceAllocation", self.version, self.gates)

    @property
    def extended_enabled(self) -> bool:
        """The scheduler serves extended resources through DRA (DRAExtendedResource, on from 1.36)."""
        return self.kept_extended or enabled("DRAExtendedResource", self.version, self.gates)

    @property
    def consumable_capacity(self) -> bool:
        """Claims may ask for part of a device's capacity (DRAConsumableCapacity, beta and on from 1.36;
        before, the API server drops capacity.requests and a request takes whole devices)."""
        return enabled("DRAConsumableCapacity", self.version, self.gates)

    @property
    def knows_claims(self) -> bool:
        """Some ResourceClaimTemplate or ResourceClaim is known (so a missing one is missing)."""
        return bool(self.templates or self.claims)

    def add_object(
        self, kind: str, group: str, data: Mapping, name: str | None, namespace: str | None, file: str = ""
    ) -> bool:
        """Take a DRA object; False when it is not one."""
        if not name or not isinstance(data, dict):
            return kind in DRA_CLAIM_KINDS and (group == RESOURCE_GROUP or kind == "ComputeDomain")
        spec = _mapping(data.get("spec"))
        if group == RESOURCE_GROUP:
            if kind in ("ResourceClaimTemplate", "ResourceClaim"):
                claim_spec = spec.get("spec") if kind == "ResourceClaimTemplate" else spec
                table, key = (self.templates, "template") if kind == "ResourceClaimTemplate" else (self.claims, "claim")
                reason = claim_spec_rejection(claim_spec, data.get("apiVersion"))
                prefix = "spec.spec." if kind == "ResourceClaimTemplate" else "spec."
                toleration = claim_toleration_rejection(claim_spec, data.get("apiVersion"))
                api_version = data.get("apiVersion")
                if isinstance(api_version, str) and api_version.rpartition("/")[2] in CLAIM_API_SERVED:
                    written = api_version.rpartition("/")[2]
                    self.api_versions.setdefault((key, name, namespace or ""), set()).add(written)
                    if file:
                        self.api_version_in_file.setdefault((key, name, file), written)
                if reason is None and toleration is not None:
                    # Rejected only where DRADeviceTaints is on: judged by version in rejection().
                    self.taint_rejected[(key, name, namespace or "")] = prefix + toleration
                if reason is not None:
                    reason = prefix + reason
                    # The API server rejects it: it never exists, and holds no device.
                    self.rejected[(key, name, namespace or "")] = reason
                    entry: tuple[str, tuple] = (namespace or "", ())
                else:
                    entry = (namespace or "", claim_requests(claim_spec, data.get("status")))
                table.setdefault(name, []).append(entry)
                if file:
                    self.in_file.setdefault((key, name, file), entry)
                if kind == "ResourceClaim":
                    self._allocated(spec, data.get("status"))
                    consumers = _mapping(data.get("status")).get("reservedFor")
                    if isinstance(consumers, list) and len(consumers) > 1:
                        self.reserved[(name, namespace or "")] = len(consumers)
            elif kind == "DeviceClass":
                self._add_class(name, spec)
            else:
                return False
        elif kind == "ComputeDomain" and group == "resource.nvidia.com":
            # The driver's controller creates the channel's template: IMEX channels, not GPUs.
            tname = _mapping(_mapping(spec.get("channel")).get("resourceClaimTemplate")).get("name")
            if isinstance(tname, str) and tname:
                channel = (SubRequest("compute-domain-default-channel.nvidia.com", 1),)
                self.templates.setdefault(tname, []).append((namespace or "", (channel,)))
        else:
            return False
        if kind != "DeviceClass":
            self.files.add(file)
        else:
            self.class_files.add(file)
        self._memo.clear()
        return True

    def add_slice(self, spec: Mapping) -> None:
        """A ResourceSlice's MIG devices (NVIDIA's driver: attributes ``type: mig``, ``profile``,
        ``productName``, cmd/gpu-kubelet-plugin/deviceinfo.go), by (driver, pool, device), so that an
        allocated claim's results say which partitions it holds."""
        driver = spec.get("driver")
        pool = _mapping(spec.get("pool")).get("name")
        if not isinstance(driver, str) or not isinstance(pool, str):
            return
        for device in _items(spec.get("devices")):
            attributes = device.get("attributes")
            if not isinstance(attributes, dict):  # v1beta1: under basic
                attributes = _mapping(_mapping(device.get("basic")).get("attributes"))

            def text(key: str, attributes: Mapping = attributes) -> str | None:
                value = _mapping(attributes.get(key, attributes.get(f"{driver}/{key}"))).get("string")
                return value if isinstance(value, str) else None

            profile, name = text("profile"), device.get("name")
            if not isinstance(name, str):
                continue
            if (text("type") or "").lower() == _SLICE_WORD and profile:
                self.mig_devices[(driver, pool, name)] = (profile, text("productName"))
            basic = device.get("basic")
            body: Mapping = basic if isinstance(basic, dict) else device  # (v1beta1: under basic)
            if body.get("allowMultipleAllocations") is True:
                capacity = {k: _mapping(v).get("value") for k, v in _mapping(body.get("capacity")).items()}
                self.shared_devices[(driver, pool, name)] = {k: v for k, v in _quantities(capacity).items() if v > 0}

    def _allocated(self, spec: Mapping, status: object) -> None:
        """The drivers an allocated claim's devices come from (``status.allocation.devices.results``:
        request, driver), by the class each request names (a ``firstAvailable`` result names
        ``<request>/<subrequest>``)."""
        results = _mapping(_mapping(_mapping(status).get("allocation")).get("devices")).get("results")
        if not results:
            return
        classes: dict[str, object] = {}
        for req in _items(_mapping(spec.get("devices")).get("requests")):
            name = req.get("name")
            if isinstance(req.get("firstAvailable"), list):
                for sub in _items(req["firstAvailable"]):
                    classes[f"{name}/{sub.get('name')}"] = sub.get("deviceClassName")
            else:
                classes[str(name)] = _mapping(req.get("exactly")).get("deviceClassName", req.get("deviceClassName"))
        for result in _items(results):
            cls, driver = classes.get(str(result.get("request"))), result.get("driver")
            if isinstance(cls, str) and isinstance(driver, str) and driver:
                self.allocated.setdefault(cls, set()).add(driver)

    def _add_class(self, name: str, spec: Mapping) -> None:
        drivers, mig, profile, product = _selectors(spec.get("selectors"))
        extended = spec.get("extendedResourceName")
        fact = ClassFact(
            name,
            drivers,
            mig,
            profile,
            extended if isinstance(extended, str) and extended else None,
            product,
            _device_type(spec.get("selectors")),
        )
        self.classes.setdefault(name, fact)
        if fact.extended:
            self.extended.setdefault(fact.extended, name)

    def add_profile(
        self, entries: Any, kubernetes_version: str | None = None, feature_gates: Mapping[str, bool] | None = None
    ) -> None:
        """``profile.acceleratorDeviceClasses``: names, or {name, resource, extendedResourceName}: the
        device-plugin resource a node counts its devices as, and the extended resource the class serves;
        ``profile.kubernetesVersion``, whose gates decide whether claims and DRA extended resources exist."""
        self.version = parse_version(kubernetes_version)
        self.gates = dict(feature_gates or {})
        for entry in entries or ():
            if isinstance(entry, str):
                self.profile_classes[entry] = ClassInfo(ACCELERATOR, None, f"'{entry}' is listed in the profile")
            elif isinstance(entry, dict) and isinstance(entry.get("name"), str):
                resource = entry.get("resource")
                kind = GPU if isinstance(resource, str) and resource else ACCELERATOR
                self.profile_classes[entry["name"]] = ClassInfo(
                    kind, resource if kind == GPU else None, f"'{entry['name']}' is listed in the profile"
                )
                extended = entry.get("extendedResourceName")
                if isinstance(extended, str) and extended:
                    self.extended.setdefault(extended, entry["name"])
        self._memo.clear()

    def class_device_type(self, name: str) -> str | None:
        """The device type a DeviceClass among the inputs selects (``type == "..."``), or None."""
        fact = self.classes.get(name)
        return fact.device_type if fact is not None else None

    def class_missing(self, name: str) -> bool:
        """DeviceClasses are among the inputs or context, but not ``name`` (nor is it in the profile, or a
        class a known driver installs): the scheduler cannot allocate a claim of it unless the cluster has it."""
        return (
            bool(self.classes)
            and name not in self.classes
            and name not in self.profile_classes
            and name not in _KNOWN_CLASSES
            and not name.endswith(".gpu.nvidia.com")
        )

    def classify(self, name: str) -> ClassInfo | None:
        """What devices of class ``name`` are; None when that cannot be known."""
        if name in self._memo:
            return self._memo[name]
        found = self._classify(name)
        if len(self._memo) < 4096:
            self._memo[name] = found
        return found

    def _classify(self, name: str) -> ClassInfo | None:
        listed = self.profile_classes.get(name)
        if listed is not None:
            return listed
        fact = self.classes.get(name)
        if fact is not None and fact.drivers:
            # The class's devices are what its selectors select: the driver decides, whatever the name.
            for driver in fact.drivers:
                by_driver = classify_name(driver)
                if by_driver is None or not by_driver.accelerator:
                    continue
                if fact.mig or fact.profile:
                    # MIG partitions: their profile and GPU decide their share (mig_slices)
                    return ClassInfo(
                        SLICE,
                        by_driver.resource,
                        f"DeviceClass '{name}' selects MIG devices of {driver}",
                        fact.profile,
                        fact.product,
                    )
                return ClassInfo(
                    by_driver.kind, by_driver.resource, f"DeviceClass '{name}' selects {driver}", None, fact.product
                )
            drivers = " or ".join(fact.drivers)
            typed = self._by_type(fact.device_type, name)
            if typed is not None:
                return ClassInfo(typed.kind, typed.resource, f"DeviceClass '{name}' selects {typed.how} of {drivers}")
            return ClassInfo(
                OTHER,
                None,
                f"DeviceClass '{name}' selects devices of {drivers}, not an accelerator driver (list the class in "
                "profile.acceleratorDeviceClasses if it is one)",
            )
        found = classify_name(name)
        if found is None and name in self.allocated:
            # Not known by its DeviceClass or its name: what running claims of it were allocated from.
            for driver in sorted(self.allocated[name]):
                by_driver = classify_name(driver)
                if by_driver is not None and by_driver.accelerator:
                    return ClassInfo(
                        by_driver.kind, by_driver.resource, f"claims of class '{name}' were allocated {driver} devices"
                    )
            drivers = ", ".join(sorted(self.allocated[name]))
            if all(classify_name(d) is not None for d in self.allocated[name]):
                return ClassInfo(OTHER, None, f"claims of class '{name}' were allocated devices of {drivers}")
        return found

    def _by_type(self, device_type: str | None, cls: str) -> ClassInfo | None:
        """What a selector's device ``type`` says, where class ``cls`` is not known otherwise: not listed in
        the profile, no driver of it known (an accelerator's or another device's) and no word of its name
        naming another device."""
        if not device_type or cls in self.profile_classes:
            return None
        fact = self.classes.get(cls)
        if fact is not None and any(classify_name(d) is not None for d in fact.drivers):
            return None
        if (fact is None or not fact.drivers) and classify_name(cls) is not None:
            return None
        found = _by_word(device_type)
        if found is None or not found.accelerator:
            return None
        return ClassInfo(found.kind, found.resource, f"devices of type '{device_type}'")

    def classify_request(self, s: SubRequest) -> ClassInfo | None:
        """:meth:`classify` of the request's class, or, where that does not know it, what the request's own
        selectors say of the device type (``device.attributes[...].type == "gpu"``)."""
        info = self.classify(s.device_class)
        if s.device_type is None or (info is not None and info.kind != OTHER):
            return info
        typed = self._by_type(s.device_type, s.device_class)
        if typed is None:
            return info
        return ClassInfo(typed.kind, typed.resource, f"its request for class '{s.device_class}' selects {typed.how}")

    def generated_claims(self, template: str, namespace: str, claims: Iterable[str]) -> bool:
        """Running pods' claims made from ``template`` are the ResourceClaims ``claims`` of their namespace
        (``status.resourceClaimStatuses``): the resourceclaim controller copies the template's spec into
        each, and the pods run with what they allocated, whether the template is still there (or the same)
        or not. Their requests answer for the template in that namespace; False when no claim is known.
        Where the pods were allocated different ``firstAvailable`` alternatives, each request is any of
        those they got."""
        found = [r for r in (self._claim_in(c, namespace) for c in claims) if r is not None]
        if not found:
            return False
        requests = found[0]
        alike = [r for r in found if len(r) == len(requests)]  # (a template changed in shape: the first pod's)
        if any(r != requests for r in alike):
            merged = []
            for i in range(len(requests)):
                alternatives: list[SubRequest] = []
                for r in alike:
                    alternatives += [s for s in r[i] if s not in alternatives]
                merged.append(tuple(alternatives))
            requests = tuple(merged)
        self.templates.setdefault(template, []).insert(0, (namespace, requests))
        for key in [k for k in self.in_file if k[0] == "template" and k[1] == template]:
            del self.in_file[key]  # (what the pods were allocated answers, not a file's template of the name)
        return True

    def _claim_in(self, claim: str, namespace: str) -> tuple | None:
        return next((r for ns, r in self.claims.get(claim, ()) if ns == namespace), None)

    def find(self, kind: str, name: str, namespace: str, file: str = "") -> tuple | None:
        """The requests of the named template (``kind`` "template") or claim in ``namespace``.

        An object without a namespace matches any (``kubectl apply -n`` puts both in one). Where several
        files define one of that name, the pod's own ``file``'s is the one applied with it."""
        found = self._entry(kind, name, namespace, file)
        return None if found is None else found[1]

    def _entry(self, kind: str, name: str, namespace: str, file: str = "") -> tuple[str, tuple] | None:
        if file and self.in_file:
            own = self.in_file.get((kind, name, file))
            if own is not None and (not own[0] or not namespace or own[0] == namespace):
                return own
        table = self.templates if kind == "template" else self.claims
        for ns, requests in table.get(name, ()):
            if not ns or not namespace or ns == namespace:
                return ns, requests
        return None

    def admin_namespace(self, kind: str, name: str, namespace: str, file: str = "") -> str | None:
        """The namespace the template or claim :meth:`find` finds is created in (its own, else the pod's)
        where some request of it asks for administrative access (``adminAccess``), else None."""
        found = self._entry(kind, name, namespace, file)
        if found is None or not getattr(found[1], "admin", False):
            return None
        return found[0] or namespace or None

    def rejection(self, kind: str, name: str, namespace: str, file: str = "") -> str | None:
        """Why the API server rejects the template or claim :meth:`find` finds, or None."""
        if not self.rejected and not self.taint_rejected and not self.api_versions:
            return None
        found = self._entry(kind, name, namespace, file)
        if found is None:
            return None
        own = (
            self.api_version_in_file.get((kind, name, file))
            if file and found is self.in_file.get((kind, name, file))
            else None
        )
        return self.rejection_at(kind, name, found[0], own)

    def rejection_at(self, kind: str, name: str, namespace: str, own: str | None = None) -> str | None:
        """Why the API server rejects the template or claim of ``name`` defined in ``namespace`` ("" for
        none), or None; ``own``: the version of the one the pod's own file defines."""
        at = (kind, name, namespace)
        taints = self.taint_rejected if enabled("DRADeviceTaints", self.version, self.gates) else None
        reason = self.rejected.get(at) or (taints.get(at) if taints else None)
        if reason is None and self.version is not None and not self.stored and self.api_versions:
            served = served_claim_versions(self.version)
            # the pod's own file's object, else every object of the name unserved (one may be the cluster's)
            versions = {own} if own is not None else self.api_versions.get(at, set())
            written = min(versions) if versions and not versions & set(served) else None
            if written is not None:
                major, minor = self.version
                what = "ResourceClaimTemplate" if kind == "template" else "ResourceClaim"
                reason = (
                    f'no matches for kind "{what}" in version "{RESOURCE_GROUP}/{written}": Kubernetes '
                    f"{major}.{minor} serves it in {', '.join(RESOURCE_GROUP + '/' + v for v in served)}"
                )
        return reason


# --------------------------------------------------------------------------
# A pod's devices


class ClaimRef(Record):
    """One entry of ``spec.resourceClaims``: what it names, where, and whether it was found."""

    path: tuple  # of the resourceClaimTemplateName / resourceClaimName field, in the pod spec
    kind: str  # "ResourceClaimTemplate" | "ResourceClaim"
    name: str
    found: bool
    rejected: str | None  # why the API server rejects the object found (then ``found`` is False)
    requests: frozenset[str] | None  # the names of its requests, where its spec is known
    subrequests: frozenset[tuple[str, str]]  # (request, subrequest) of its firstAvailable requests
    accelerators: bool  # some request of it holds accelerator devices
    accelerator_requests: list[str]  # the names of those requests
    __slots__ = _fields = (
        "path",
        "kind",
        "name",
        "found",
        "rejected",
        "requests",
        "subrequests",
        "accelerators",
        "accelerator_requests",
    )

    def __init__(
        self,
        path: tuple,
        kind: str,
        name: str,
        found: bool,
        rejected: str | None = None,
        requests: frozenset[str] | None = None,
        subrequests: frozenset[tuple[str, str]] = frozenset(),
    ) -> None:
        self.path = path
        self.kind = kind
        self.name = name
        self.found = found
        self.rejected = rejected
        self.requests = requests
        self.subrequests = subrequests
        self.accelerators = False
        self.accelerator_requests = []


class PodDevices(Record):
    """What a pod template gets through DRA.

    ``accelerator``: some claimed (or DRA extended-resource) device is an accelerator.
    ``counts``: device-plugin resource -> devices (claimed GPUs counted as the plugin counts them);
    ``all_of``: resources claimed with ``allocationMode: All`` (the node's count);
    ``uncounted``: accelerators whose count per node is not known (why, for ``-v``);
    ``held``: the device-plugin resource of every accelerator class the claims reach, counted or
    not (``google.com/tpu`` for TPUs of ``tpu.google.com``); ``claims``: the pod's claim references; ``unknown``: what could not be classified (for ``-v``);
    ``assumed``: what was assumed to count (for ``-v``); ``by_model``: MIG partitions counted as
    ``slices`` of a GPU whose model was not known, (resource, compute slices taken, slices assumed),
    for :meth:`on_model`; ``upper``: resources whose count is an upper bound (MIG devices of no
    named profile, each counted as the whole GPU it may be, and parts of devices other claims share,
    ``capacity.requests``, each counted whole); ``shared``: some are such parts; ``served``: device-plugin MIG names a MIG DeviceClass serves as DRA extended resources, counted in ``counts``
    as its claim would be; ``dropped``: the profile's Kubernetes
    version drops the pod's claims; ``extended_off``: (resource, class) of DRA extended resources
    the version does not serve through DRA; ``alternatives``: ``firstAvailable`` requests of
    different sizes whose every alternative is counted GPUs of one resource, (where, resource, the
    most of them, every alternative's count), counted in ``counts`` as the most (see
    :meth:`most_on`; an alternative of ``allocationMode: All`` is in ``all_of``, with 0 and ()).
    """

    accelerator: bool
    counts: dict[str, Fraction]
    all_of: frozenset
    uncounted: list[str]
    held: frozenset
    claims: list[ClaimRef]
    unknown: list[str]
    assumed: list[str]
    by_model: list[tuple[str, Fraction, int]]
    upper: frozenset
    dropped: bool
    extended_off: list[tuple[str, str]]
    alternatives: list[tuple[str, str, Fraction, tuple[Fraction, ...]]]
    shared: bool
    partitions: bool
    all_part: dict[str, Fraction]
    missing_classes: list[tuple[ClaimRef, str]]
    served: set[str]
    __slots__ = _fields = (
        "accelerator",
        "counts",
        "all_of",
        "uncounted",
        "held",
        "claims",
        "unknown",
        "assumed",
        "by_model",
        "upper",
        "dropped",
        "extended_off",
        "alternatives",
        "shared",
        "partitions",
        "all_part",
        "missing_classes",
        "served",
    )

    def __init__(self) -> None:
        self.accelerator = False
        self.counts = {}
        self.all_of = frozenset()
        self.uncounted = []
        self.held = frozenset()
        self.claims = []
        self.unknown = []
        self.assumed = []
        self.by_model = []
        self.upper = frozenset()
        self.dropped = False  # the cluster's version drops the pod's claims (DynamicResourceAllocation off)
        self.extended_off = []  # (resource, class) asked for as DRA extended resources before DRAExtendedResource
        self.alternatives = []
        self.shared = False  # some counted GPUs are parts of devices other claims share (capacity.requests)
        self.partitions = False  # some counted GPUs are partitions of a GPU of no known size (AMD's)
        self.all_part = {}  # resource -> the part of the node's devices a shared `All` claim leaves each pod
        # (claim, class) where the claim names a DeviceClass absent from the inputs and context, which define others
        self.missing_classes = []
        # device-plugin accelerator names (nvidia.com/mig-1g.12gb) a MIG DeviceClass serves: counted in ``counts``
        self.served = set()

    def most_on(self, counts: dict[str, Any], resource: str, gpus: int) -> dict[str, Any]:
        """``counts`` on a node with ``gpus`` devices of ``resource``: each ``firstAvailable`` request
        of its GPUs counts as the largest alternative the node can hold (the smallest when none fits:
        the pod never fits there)."""
        out = counts
        for _, r, most, each in self.alternatives:
            if (r != resource and r != ANY_GPU) or resource not in out or not each:
                continue
            fitting = [n for n in each if n <= gpus]
            here = max(fitting) if fitting else min(each)
            if here != most:
                total = out[resource] - most + here
                out = {**out, resource: total.numerator if total.denominator == 1 else total}
        return out

    def assumes_on(self, model: str | None) -> bool:
        """Some MIG partition's share is assumed on a node of GPU ``model`` (neither tells the GPU)."""
        return bool(self.by_model) and model_mig_slices(model) is None

    def on_model(self, counts: dict[str, Any], resource: str, model: str | None) -> dict[str, Any]:
        """``counts`` on a node whose GPUs are ``model``: MIG partitions of a profile that did not
        tell the GPU take their share of that model's compute slices."""
        slices = model_mig_slices(model) if self.by_model else None
        if slices is None:
            return counts
        delta = sum(
            (
                taken * (Fraction(1, slices) - Fraction(1, assumed))
                for r, taken, assumed in self.by_model
                if r == resource
            ),
            Fraction(0),
        )
        if not delta:
            return counts
        total = counts.get(resource, 0) + delta
        return {**counts, resource: total.numerator if total.denominator == 1 else total}


_EMPTY_FACTS = DraFacts()


def _claim_entries(spec: Mapping) -> Iterator[tuple[int, Mapping]]:
    entries = spec.get("resourceClaims")
    if isinstance(entries, list):  # anything else is a parse-error of its own
        for i, entry in enumerate(entries):
            if isinstance(entry, dict):
                yield i, entry


def _resource_names(spec: Mapping) -> Iterator[str]:
    """Every resource name the pod's init and app containers request or limit (repeats included)."""
    for key in ("initContainers", "containers"):
        for c in _items(spec.get(key)):
            res = _mapping(c.get("resources"))
            for part in ("limits", "requests"):
                for name in _mapping(res.get(part)):
                    if isinstance(name, str):
                        yield name


def _dra_names(spec: Mapping, facts: DraFacts) -> bool:
    """Some container asks for a DRA-backed extended resource."""
    extended = facts.extended
    return any(name.startswith(DRA_EXTENDED_PREFIX) or name in extended for name in _resource_names(spec))


def unserved_names(spec: Mapping, facts: DraFacts | None) -> list[str]:
    """The pod's extended resources whose name reads as an accelerator's (``example.com/gpu``) but that
    neither a device plugin's known accelerator resources nor a DeviceClass's ``extendedResourceName``
    among the inputs (or the profile) account for: whether they are accelerators is not known."""
    extended = (facts or _EMPTY_FACTS).extended
    out: list[str] = []
    for name in _resource_names(spec):
        if (
            name not in out
            and "/" in name
            and not name.startswith(DRA_EXTENDED_PREFIX)
            and name not in extended
            and is_extended_resource(name)
            and not is_accelerator_resource(name)
        ):
            found = classify_name(name.rsplit("/", 1)[1].lower())
            if found is not None and found.accelerator:
                out.append(name)
    return out


def uses_dra(spec: Mapping, facts: DraFacts | None) -> bool:
    """Cheap test: the pod spec has claims or DRA extended resources (else :func:`pod_devices` is empty)."""
    if spec.get("resourceClaims"):
        return True
    return _dra_names(spec, facts or _EMPTY_FACTS)


def pod_devices(
    spec: Mapping,
    namespace: str,
    facts: DraFacts | None,
    requests: Mapping[str, Fraction],
    pods: int = 1,
    file: str = "",
) -> PodDevices:
    """Follow the pod's claims and DRA extended resources to their devices.

    ``requests``: the pod's aggregated (defaulted) container requests, for the extended resources;
    ``pods``: how many pods the workload runs of the template at once (its ``replicas``, a Job's
    ``parallelism``). A ResourceClaim named by
    ``resourceClaimName`` is one claim for all of them: its devices are allocated once, on one node, and
    every pod of the workload runs there and shares them, so each pod holds 1/``pods`` of them;
    ``file``: the pod's, whose own templates and claims are the ones of their names applied with it.
    """
    facts = facts or _EMPTY_FACTS
    out = PodDevices()
    all_of: set[str] = set()
    upper: set[str] = set()
    held: set[str] = set()
    counts: dict[str, Fraction] = {}

    def count(info: ClassInfo, cls: str, n: Fraction | None, where: str, sub: SubRequest | None = None) -> None:
        if info.resource:
            held.add(info.resource)
        if info.kind == GPU and info.resource:
            if n is None:
                all_of.add(info.resource)
                counts.setdefault(info.resource, Fraction(0))
            else:
                counts[info.resource] = counts.get(info.resource, Fraction(0)) + n
                if sub is not None and _partition(sub.device_type or facts.class_device_type(cls)):
                    # A partition of a GPU (AMD's driver publishes pre-partitioned GPUs as devices of type
                    # amdgpu-partition): 1/2 to 1/8 of it, by the GPU's partition mode, not known here.
                    upper.add(info.resource)
                    out.partitions = True
                    out.assumed.append(
                        f"{where} asks for {count_text(n)} GPU partition{'' if n == 1 else 's'} of class '{cls}' "
                        f"(type {sub.device_type or facts.class_device_type(cls)}), each part of a GPU by how the "
                        f"node's GPUs are partitioned: counted as {count_text(n)} whole "
                        f"GPU{'' if n == 1 else 's'}, the most {'it' if n == 1 else 'they'} can be"
                    )
                elif sub is not None and sub.share and facts.consumable_capacity and _consumed_share(sub, facts):
                    # Allocated: each result says the capacity it consumed of its device, whose capacity the
                    # node's ResourceSlice gives; the pod holds the largest part it consumed of each device.
                    share = _consumed_share(sub, facts)
                    assert share is not None
                    counts[info.resource] += share - n
                    out.assumed.append(
                        f"{where} holds part of {count_text(n)} shared device{'' if n == 1 else 's'} of class "
                        f"'{cls}': {count_text(share)} GPU{'' if share == 1 else 's'}, the largest part of each "
                        "capacity its allocation consumed (by the ResourceSlices)"
                    )
                elif sub is not None and sub.share and facts.consumable_capacity:
                    # Several claims may share each device (allowMultipleAllocations): the pod holds part of it.
                    upper.add(info.resource)
                    out.shared = True
                    out.assumed.append(
                        f"{where} asks for part of the capacity of {count_text(n)} device{'' if n == 1 else 's'} "
                        f"of class '{cls}' (capacity.requests), which other claims may share: counted as "
                        f"{count_text(n)} whole GPU{'' if n == 1 else 's'}, the most it can hold"
                    )
        elif info.kind == SLICE and info.resource and n is not None:
            mig(info, info.resource, n, where, sub)
        else:
            what = "MIG partitions" if info.kind == SLICE else "accelerators"
            out.uncounted.append(f"{where} asks for {what} of class '{cls}', whose count per node is not known")

    def mig(info: ClassInfo, resource: str, n: Fraction, where: str, sub: SubRequest | None) -> None:
        profile = (sub.profile if sub else None) or info.profile
        product = (sub.product if sub else None) or info.product
        devices = f"{count_text(n)} MIG device{'' if n == 1 else 's'}"
        if profile is None and sub is not None and sub.devices:
            known = [facts.mig_devices.get(d) for d in sub.devices]
            if all(known):
                # An allocated claim: the ResourceSlices name each partition it holds, with its profile.
                for found in known:
                    assert found is not None
                    mig(info, resource, Fraction(1), where, SubRequest(sub.device_class, 1, found[0], found[1]))
                out.assumed.append(
                    f"{where} holds the MIG device{'' if len(known) == 1 else 's'} "
                    f"{', '.join(found[0] for found in known if found)} (its allocation, by the ResourceSlices)"
                )
                return
        if profile is None:
            # The driver allocates any MIG device of the class: from one compute slice to the whole GPU.
            # Counted as the whole GPU, the most it can be, so a GPU-share finding holds whichever it gets.
            counts[resource] = counts.get(resource, Fraction(0)) + n
            upper.add(resource)
            out.assumed.append(
                f"{where} asks for {devices} of no named profile, which may be anything from one compute slice "
                f"to a whole GPU: counted as {count_text(n)} whole GPU{'' if n == 1 else 's'}, the most "
                f"{'it' if n == 1 else 'they'} can be"
            )
            return
        g = profile_slices(_base_profile(profile))
        slices, how = mig_slices(profile, product)
        if slices is None:
            slices = fewest_slices(g)  # the largest share it can be
            out.by_model.append((resource, n * g, slices))
            out.assumed.append(
                f"{where} asks for {devices} of profile {profile}: {how}, so {g}/{slices} of a GPU each is "
                f"assumed, the most a {g}g partition can be (of a {slices}-slice GPU; the node type's GPU decides "
                "where it is known)"
            )
        if g > slices:
            out.uncounted.append(f"{where} asks for MIG profile {profile}, larger than its GPU's {slices} slices")
            return
        counts[resource] = counts.get(resource, Fraction(0)) + n * Fraction(g, slices)

    entries = _claim_entries(spec)
    if not facts.claims_enabled and spec.get("resourceClaims"):
        out.dropped = True  # the API server drops them: no claim, no device
        out.assumed.append(
            "spec.resourceClaims and resources.claims are dropped by the API server (DynamicResourceAllocation "
            f"{setting('DynamicResourceAllocation', facts.version, facts.gates)}); the claims' devices are not counted"
        )
        entries = iter(())
    for i, entry in entries:
        raw_source = entry.get("source")
        source: Mapping = raw_source if isinstance(raw_source, dict) else entry  # v1alpha2 form
        base = ("resourceClaims", i) + (("source",) if source is not entry else ())
        if isinstance(source.get("resourceClaimTemplateName"), str):
            kind, key, name = "ResourceClaimTemplate", "template", source["resourceClaimTemplateName"]
            path = (*base, "resourceClaimTemplateName")
        elif isinstance(source.get("resourceClaimName"), str):
            kind, key, name = "ResourceClaim", "claim", source["resourceClaimName"]
            path = (*base, "resourceClaimName")
        else:
            continue
        found = facts.find(key, name, namespace, file)
        if found is None and (namespace, key, name) in facts.exists:
            out.claims.append(ClaimRef(path, kind, name, True))
            out.unknown.append(
                f"{kind} '{name}' exists (the pod was scheduled with its claim) but is not among the inputs, so "
                "its devices are not known (dump resourceclaims, resourceclaimtemplates and deviceclasses too)"
            )
            continue
        rejected = facts.rejection(key, name, namespace, file) if found is not None else None
        if rejected is not None:
            out.claims.append(ClaimRef(path, kind, name, False, rejected))
            out.unknown.append(f"{kind} '{name}' is rejected by the API server ({rejected}), so it holds no device")
            continue
        ref = ClaimRef(
            path,
            kind,
            name,
            found is not None,
            requests=getattr(found, "names", None),
            subrequests=getattr(found, "subrequests", frozenset()),
        )
        out.claims.append(ref)
        if found is None:
            out.unknown.append(f"{kind} '{name}' is not among the inputs or --context, so its devices are not known")
            continue
        order = getattr(found, "order", ())
        for index, alternatives in enumerate(found):
            for s in alternatives:
                if facts.class_missing(s.device_class) and (ref, s.device_class) not in out.missing_classes:
                    out.missing_classes.append((ref, s.device_class))
            infos = [(s, facts.classify_request(s)) for s in alternatives]
            accel = [(s, info) for s, info in infos if info is not None and info.accelerator]
            for s, info in infos:
                if info is None:
                    out.unknown.append(
                        f"{kind} '{name}' asks for devices of class '{s.device_class}', which is not known to be "
                        "an accelerator or not (list it in profile.acceleratorDeviceClasses if it is one)"
                    )
            if not accel:
                continue
            out.accelerator = True
            ref.accelerators = True
            if index < len(order):
                ref.accelerator_requests.append(order[index])
            first, info = accel[0]
            if len(alternatives) > 1 and any(
                (s.device_class, s.count, s.profile, s.product)
                != (first.device_class, first.count, first.profile, first.product)
                for s, _ in infos
            ):
                where = f"{kind} '{name}'"
                most = _most_gpus(infos)
                if most is None:
                    out.uncounted.append(
                        f"{where} lists alternatives (firstAvailable) that are not all counted GPUs of one kind; "
                        "the pod gets one of them"
                    )
                    continue
                resource, each = most
                held.add(resource)
                if any(n is None for n in each):  # allocationMode All: every GPU of the node, the most
                    all_of.add(resource)
                    counts.setdefault(resource, Fraction(0))
                    out.alternatives.append((where, resource, Fraction(0), ()))
                    largest = "all of the node's GPUs"
                else:
                    sizes = [n for n in each if n is not None]
                    counts[resource] = counts.get(resource, Fraction(0)) + max(sizes)
                    out.alternatives.append((where, resource, max(sizes), tuple(sizes)))
                    largest = f"the largest the node type can hold (of {', '.join(count_text(n) for n in sizes)})"
                out.assumed.append(
                    f"{where} lists alternatives (firstAvailable): its GPUs are counted as {largest}, so a "
                    "GPU-share finding holds whichever alternative is allocated"
                )
                continue
            n = None if first.count is None else Fraction(first.count)
            if kind == "ResourceClaim" and info.kind == GPU and info.resource:
                n = _shared(out, name, facts.reserved.get((name, namespace)), pods, n, info.resource)
            count(info, first.device_class, n, f"{kind} '{name}'", first)
    # DRA-backed extended resources (KEP-5004).
    for rname, value in requests.items():
        if value <= 0:
            continue
        if rname.startswith(DRA_EXTENDED_PREFIX):
            if value.denominator != 1:
                # The scheduler makes no device request for a quantity that is not a whole number
                # (createResourceRequestAndMappings: AsInt64), so the pod gets none (invalid-quantity says so).
                out.assumed.append(f"{rname}: {count_text(value)} is not a whole number of devices: none is counted")
                continue
            cls = rname[len(DRA_EXTENDED_PREFIX) :]
        elif rname in facts.extended:
            cls = facts.extended[rname]
        else:
            continue
        if not facts.extended_enabled:
            if not rname.startswith(DRA_EXTENDED_PREFIX) and is_accelerator_resource(rname):
                continue  # a device plugin's own resource (nvidia.com/gpu): counted as the plugin's
            out.extended_off.append((rname, cls))
            out.assumed.append(
                f"{rname}: DRA-backed extended resources need Kubernetes 1.36 (DRAExtendedResource off by "
                f"default before); not served through DeviceClass '{cls}'"
            )
            continue
        info = facts.classify(cls)
        if info is None:
            out.unknown.append(f"{rname}: device class '{cls}' is not known to be an accelerator or not")
            continue
        if not info.accelerator:
            continue
        out.accelerator = True
        if rname.startswith(DRA_EXTENDED_PREFIX) or not is_accelerator_resource(rname):
            count(info, cls, value, rname)  # (an accelerator resource's name is counted as the plugin's)
        elif info.kind == SLICE and info.resource and value.denominator == 1:
            # A device plugin's MIG name (nvidia.com/mig-1g.12gb) a MIG class serves: the scheduler makes a
            # claim of the class for it, so it counts as that claim would (a fraction of a GPU), not as the
            # device plugin's partition.
            out.served.add(rname)
            count(info, cls, value, rname)
    out.counts = {r: v for r, v in counts.items()}
    if len(set(out.assumed)) < len(out.assumed):  # requests alike in one claim: said once, with their number
        times: dict[str, int] = {}
        for said in out.assumed:
            times[said] = times.get(said, 0) + 1
        out.assumed = [said if n == 1 else f"{said} ({n} requests alike, each counted so)" for said, n in times.items()]
    out.all_of = frozenset(all_of)
    out.held = frozenset(held)
    out.upper = frozenset(upper)
    return out


def _consumed_share(sub: SubRequest, facts: DraFacts) -> Fraction | None:
    """What an allocated request of shared devices holds of them, in devices: for each device, the largest
    part of one of its capacities its result consumed (``consumedCapacity`` over the ResourceSlice's
    ``capacity``), at most the whole; None unless every device and the capacities it consumed are known."""
    if not sub.devices or len(sub.consumed) != len(sub.devices):
        return None
    total = Fraction(0)
    for device, consumed in zip(sub.devices, sub.consumed):
        capacity = facts.shared_devices.get(device)
        parts = [used / capacity[k] for k, used in consumed.items() if capacity and k in capacity]
        if not parts:
            return None
        total += min(max(parts), Fraction(1))
    return total


def _shared(
    out: PodDevices, name: str, reserved: int | None, pods: int, n: Fraction | None, resource: str
) -> Fraction | None:
    """What one pod holds of a ResourceClaim's ``n`` GPUs (None: all of the node's) when several pods share
    the claim: those it is reserved for (a running claim's ``status.reservedFor``), else the workload's
    ``pods`` at once. They all run on the node it is allocated on; each holds its part."""
    sharers = reserved or pods
    if sharers <= 1:
        return n
    who = f"its {sharers} consumers (status.reservedFor)" if reserved else f"the workload's {sharers} pods at once"
    if n is None:
        out.all_part[resource] = Fraction(1, sharers)
        out.assumed.append(
            f"ResourceClaim '{name}' (allocationMode: All) is one claim for {who}, which all run on the node it is "
            f"allocated on and share its GPUs: each pod is counted as holding 1/{sharers} of them"
        )
        return n
    out.assumed.append(
        f"ResourceClaim '{name}' is one claim for {who}, which all run on the node it is allocated on and share "
        f"its {count_text(n)} GPU{'' if n == 1 else 's'}: each pod is counted as holding {count_text(n / sharers)}"
    )
    return n / sharers


def _most_gpus(infos: list[tuple[SubRequest, ClassInfo | None]]) -> tuple[str, list[Fraction | None]] | None:
    """The device-plugin resource of a ``firstAvailable`` request's alternatives and what each holds
    of it, in GPUs (None: all of the node's), when every alternative is GPUs (or MIG partitions,
    each at the most it can be) of that one resource; else None."""
    resources: set[str] = set()
    each: list[Fraction | None] = []
    for s, info in infos:
        if info is None or info.kind not in (GPU, SLICE) or not info.resource:
            return None
        resources.add(info.resource)
        if s.count is None:
            if info.kind == SLICE:
                return None  # every MIG device of the node: how many depends on its layout
            each.append(None)
            continue
        if info.kind == GPU:
            each.append(Fraction(s.count))
            continue
        profile = s.profile or info.profile
        if profile is None:
            each.append(Fraction(s.count))  # any MIG device: at most a whole GPU each
            continue
        g = profile_slices(_base_profile(profile))
        slices = mig_slices(profile, s.product or info.product)[0] or fewest_slices(g)
        if g > slices:
            return None
        each.append(s.count * Fraction(g, slices))
    return (resources.pop(), each) if len(resources) == 1 else None


def count_text(n: Fraction) -> str:
    return str(n.numerator) if n.denominator == 1 else f"{float(n):.3g}"


# --------------------------------------------------------------------------
# What a policy that sees one object can be told (kubelint_ml/admission/vapbuiltin.py)


def _re2_escape(text: str) -> str:
    return re.sub(r"([.\\+*?()|\[\]{}^$])", r"\\\1", text)


def _alternatives(names: list[str]) -> str:
    return "|".join(_re2_escape(n) for n in sorted(names))


_NOTHING = "^$"  # matches no resource name
_WORDS_RE = "^{prefix}([^./]*[-_])?({words})([-_][^./]*)?(\\.[^/]*)?$"


class AdmissionDra(Record):
    """The DRA facts a ValidatingAdmissionPolicy is built with: the names of the templates and
    claims that hold accelerators, and RE2 patterns over a container's resource names for the DRA
    extended resources that count as accelerators. ``whole``: the DeviceClasses'
    extendedResourceNames (whole numbers, as extended resources); for
    ``deviceclass.resource.kubernetes.io/<class>``: ``accel``/``other`` the classes known by name
    or object, and for the rest ``by_name`` (classes of NVIDIA's GPU driver), else ``words`` and not
    ``not_words``, as :func:`classify_name` decides."""

    templates: dict[str, bool]  # "<pod namespace>/<name>" ("" none, "*" any other) -> holds accelerators
    claims: dict[str, bool]
    whole: str | None
    accel: str
    other: str
    by_name: str
    words: str
    not_words: str
    __slots__ = _fields = ("templates", "claims", "whole", "accel", "other", "by_name", "words", "not_words")

    def __init__(
        self,
        templates: dict[str, bool],
        claims: dict[str, bool],
        whole: str | None,
        accel: str,
        other: str,
        by_name: str,
        words: str,
        not_words: str,
    ) -> None:
        self.templates = templates
        self.claims = claims
        self.whole = whole
        self.accel = accel
        self.other = other
        self.by_name = by_name
        self.words = words
        self.not_words = not_words


def admission_dra(facts: DraFacts | None) -> AdmissionDra:
    """:class:`AdmissionDra` for the run's DRA facts: the same answers :func:`pod_devices` gives."""
    facts = facts or _EMPTY_FACTS

    def holds_accelerators(requests: tuple) -> bool:
        for alternatives in requests:
            for s in alternatives:
                info = facts.classify_request(s)
                if info is not None and info.accelerator:
                    return True
        return False

    def accelerator_names(table: dict[str, list[tuple[str, tuple]]], kind: str) -> dict[str, bool]:
        # "<pod namespace>/<name>" -> whether it holds accelerators, as find() resolves it for a pod
        # in any namespace not listed ("*"), and, where the answer differs, for a pod without a
        # namespace ("") and in each namespace listed; a name absent answers False (the policy looks a
        # pod's namespace up first, then "*"). Names that hold none anywhere are left out.
        out: dict[str, bool] = {}
        for name, entries in table.items():
            answers = {}
            for pod_ns in ["*", "", *(ns for ns, _ in entries if ns)]:
                first = next(
                    ((ns, r) for ns, r in entries if not ns or not pod_ns or (pod_ns != "*" and ns == pod_ns)), None
                )
                # (one the API server rejects, or does not serve at the profile's version, holds none)
                answers[f"{pod_ns}/{name}"] = (
                    first is not None
                    and holds_accelerators(first[1])
                    and facts.rejection_at(kind, name, first[0]) is None
                )
            anywhere = answers[f"*/{name}"]
            out.update((k, v) for k, v in answers.items() if v != anywhere or (v and k.startswith("*/")))
        return out

    # The profile's version: claims dropped before 1.34, no DRA extended resources before 1.36 (a
    # class's extendedResourceName that is a device plugin's resource counts as the plugin's anyway).
    templates = accelerator_names(facts.templates, "template") if facts.claims_enabled else {}
    claims = accelerator_names(facts.claims, "claim") if facts.claims_enabled else {}
    extended = []
    for name, cls in facts.extended.items() if facts.extended_enabled else ():
        info = facts.classify(cls)
        if info is not None and info.accelerator:
            extended.append(name)
    # Classes decided by the profile, a DeviceClass's driver or the known table; the rest by their names.
    explicit = set(_KNOWN_CLASSES) | set(facts.profile_classes) | {n for n, f in facts.classes.items() if f.drivers}
    accel: list[str] = []
    other: list[str] = []
    for name in explicit:
        info = facts.classify(name)
        (accel if info is not None and info.accelerator else other).append(name)
    prefix = _re2_escape(DRA_EXTENDED_PREFIX)
    if not facts.extended_enabled:  # no deviceclass.resource.kubernetes.io/<class> is served
        return AdmissionDra(templates, claims, None, _NOTHING, _NOTHING, _NOTHING, _NOTHING, _NOTHING)
    return AdmissionDra(
        templates,
        claims,
        f"^({_alternatives(extended)})$" if extended else None,
        f"^{prefix}({_alternatives(accel)})$",
        f"^{prefix}({_alternatives(other)})$",
        f"^{prefix}[^/]*\\.gpu\\.nvidia\\.com$",
        _WORDS_RE.format(prefix=prefix, words="|".join(sorted(_ACCELERATOR_WORDS | {_SLICE_WORD}))),
        _WORDS_RE.format(prefix=prefix, words="|".join(sorted(_OTHER_WORDS))),
    )
