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
from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import Any

from kubelint_ml.k8s.resources import DRA_EXTENDED_PREFIX, is_accelerator_resource
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
# Compute slices of a MIG-capable GPU (A100, H100, H200, GH200, B200): a "3g.40gb" partition is 3/7
# of one (NVIDIA MIG user guide, "Supported MIG profiles"; the A30's 4 slices are not told apart).
MIG_SLICES = 7


class ClassInfo(Record):
    """What a device class is: ``kind`` (GPU, SLICE, ACCELERATOR, OTHER, or None: unknown), the
    device-plugin resource it counts as (for GPU), and how that was decided."""

    kind: str | None
    resource: str | None
    how: str
    fraction: Fraction | None  # a MIG partition's share of its GPU, when the class names its profile
    __slots__ = _fields = ("kind", "resource", "how", "fraction")

    def __init__(self, kind: str | None, resource: str | None, how: str, fraction: Fraction | None = None) -> None:
        self.kind = kind
        self.resource = resource
        self.how = how
        self.fraction = fraction

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
    "mig.nvidia.com": (SLICE, None),
    "vfio.gpu.nvidia.com": (GPU, "nvidia.com/gpu"),
    # NVIDIA's IMEX channels and their daemons: multi-node NVLink plumbing, not GPUs.
    "compute-domain-default-channel.nvidia.com": (OTHER, None),
    "compute-domain-daemon.nvidia.com": (OTHER, None),
    "compute-domain.nvidia.com": (OTHER, None),
}
# Words that name an accelerator as the first label of a class or driver name (gpu.example.com).
_ACCELERATOR_WORDS = frozenset(("gpu", "gpus", "tpu", "npu", "neuron", "gaudi", "accelerator"))
_SLICE_WORDS = ("mig",)
# ... and words that name something else (NICs, storage).
_OTHER_WORDS = frozenset(("nic", "net", "netdev", "rdma", "sriov", "dranet", "network", "storage", "fpga", "imex"))

_DRIVER_RE = LazyPattern(r"""device\.driver\s*==\s*['"]([^'"]+)['"]""")
_MIG_RE = LazyPattern(r"""\.type\s*==\s*['"]mig['"]""")
_PROFILE_RE = LazyPattern(r"""\.profile\s*==\s*['"](\d+g\.\d+gb)['"]""")


def _mapping(value: object) -> Mapping:
    return value if isinstance(value, dict) else {}


def _items(value: object) -> Iterator[Mapping]:
    if isinstance(value, list):
        for item in value:
            if isinstance(item, dict):
                yield item


def _by_word(name: str) -> ClassInfo | None:
    first = name.split(".", 1)[0].lower()
    if any(w in first for w in _SLICE_WORDS):
        return ClassInfo(SLICE, None, f"'{name}' names MIG partitions")
    words = set(first.replace("_", "-").split("-"))
    if words & _OTHER_WORDS:
        return ClassInfo(OTHER, None, f"'{name}' names a non-accelerator device")
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
    """A DeviceClass among the inputs: the driver its selectors name, and what it says of MIG."""

    name: str
    driver: str | None
    mig: bool
    profile: str | None  # MIG profile (1g.12gb)
    extended: str | None  # spec.extendedResourceName
    __slots__ = _fields = ("name", "driver", "mig", "profile", "extended")

    def __init__(self, name: str, driver: str | None, mig: bool, profile: str | None, extended: str | None) -> None:
        self.name = name
        self.driver = driver
        self.mig = mig
        self.profile = profile
        self.extended = extended


class SubRequest(Record):
    """One way to satisfy a device request: a class, ExactCount with ``count`` or All (count None)."""

    device_class: str
    count: int | None
    __slots__ = _fields = ("device_class", "count")

    def __init__(self, device_class: str, count: int | None) -> None:
        self.device_class = device_class
        self.count = count


def _sub(raw: Mapping) -> SubRequest | None:
    cls = raw.get("deviceClassName")
    if not isinstance(cls, str) or not cls:
        return None
    if raw.get("allocationMode") == "All":
        return SubRequest(cls, None)
    count = raw.get("count", 1)
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        count = 1
    return SubRequest(cls, count)


def claim_requests(claim_spec: object) -> tuple[tuple[SubRequest, ...], ...]:
    """A ResourceClaimSpec's device requests, each as its alternatives (one unless ``firstAvailable``)."""
    out = []
    for req in _items(_mapping(_mapping(claim_spec).get("devices")).get("requests")):
        alternatives: list[SubRequest] = []
        if isinstance(req.get("exactly"), dict):  # resource.k8s.io/v1, v1beta2
            sub = _sub(req["exactly"])
            alternatives = [sub] if sub else []
        elif isinstance(req.get("firstAvailable"), list):
            alternatives = [s for s in map(_sub, _items(req["firstAvailable"])) if s is not None]
        else:  # v1beta1 and v1alpha3: the fields on the request itself
            sub = _sub(req)
            alternatives = [sub] if sub else []
        if alternatives:
            out.append(tuple(alternatives))
    return tuple(out)


class DraFacts:
    """The DRA objects of a run (inputs and ``--context``) and the profile's own classes.

    ``templates`` / ``claims``: name -> [(namespace or "", requests)]; ``classes``: DeviceClasses
    by name; ``extended``: extendedResourceName -> class name. Answers about classes are kept
    until the next object arrives.
    """

    __slots__ = ("templates", "claims", "classes", "extended", "profile_classes", "files", "from_context", "_memo")

    def __init__(self) -> None:
        self.templates: dict[str, list[tuple[str, tuple]]] = {}
        self.claims: dict[str, list[tuple[str, tuple]]] = {}
        self.classes: dict[str, ClassFact] = {}
        self.extended: dict[str, str] = {}
        self.profile_classes: dict[str, ClassInfo] = {}
        self.files: set[str] = set()  # the files that define claims or templates
        self.from_context = False  # some came from --context files
        self._memo: dict[str, ClassInfo | None] = {}

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
            if kind == "ResourceClaimTemplate":
                self.templates.setdefault(name, []).append((namespace or "", claim_requests(spec.get("spec"))))
            elif kind == "ResourceClaim":
                self.claims.setdefault(name, []).append((namespace or "", claim_requests(spec)))
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
        self._memo.clear()
        return True

    def _add_class(self, name: str, spec: Mapping) -> None:
        driver, mig, profile = None, False, None
        for sel in _items(spec.get("selectors")):
            expr = _mapping(sel.get("cel")).get("expression")
            if not isinstance(expr, str):
                continue
            m = _DRIVER_RE.search(expr)
            if m and driver is None:
                driver = m.group(1)
            mig = mig or _MIG_RE.search(expr) is not None
            p = _PROFILE_RE.search(expr)
            if p and profile is None:
                profile = p.group(1)
        extended = spec.get("extendedResourceName")
        fact = ClassFact(name, driver, mig, profile, extended if isinstance(extended, str) and extended else None)
        self.classes.setdefault(name, fact)
        if fact.extended:
            self.extended.setdefault(fact.extended, name)

    def add_profile(self, entries: Any) -> None:
        """``profile.acceleratorDeviceClasses``: names, or {name, resource, extendedResourceName}: the
        device-plugin resource a node counts its devices as, and the extended resource the class serves."""
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
        if fact is not None and fact.driver:
            by_driver = classify_name(fact.driver)
            if by_driver is not None:
                if by_driver.accelerator and fact.mig:
                    # "<g>g.<memory>gb": g of the GPU's 7 compute slices (A100, H100, H200, GH200, B200)
                    fraction = Fraction(int(fact.profile.split("g.")[0]), MIG_SLICES) if fact.profile else None
                    return ClassInfo(
                        SLICE,
                        by_driver.resource if fraction is not None and fraction <= 1 else None,
                        f"DeviceClass '{name}' selects MIG devices of {fact.driver}",
                        fraction if fraction is not None and fraction <= 1 else None,
                    )
                return ClassInfo(by_driver.kind, by_driver.resource, f"DeviceClass '{name}' selects {fact.driver}")
        return classify_name(name)

    def find(self, kind: str, name: str, namespace: str) -> tuple | None:
        """The requests of the named template (``kind`` "template") or claim in ``namespace``.

        An object without a namespace matches any (``kubectl apply -n`` puts both in one)."""
        table = self.templates if kind == "template" else self.claims
        for ns, requests in table.get(name, ()):
            if not ns or not namespace or ns == namespace:
                return requests
        return None


# --------------------------------------------------------------------------
# A pod's devices


class ClaimRef(Record):
    """One entry of ``spec.resourceClaims``: what it names, where, and whether it was found."""

    path: tuple  # of the resourceClaimTemplateName / resourceClaimName field, in the pod spec
    kind: str  # "ResourceClaimTemplate" | "ResourceClaim"
    name: str
    found: bool
    __slots__ = _fields = ("path", "kind", "name", "found")

    def __init__(self, path: tuple, kind: str, name: str, found: bool) -> None:
        self.path = path
        self.kind = kind
        self.name = name
        self.found = found


class PodDevices(Record):
    """What a pod template gets through DRA.

    ``accelerator``: some claimed (or DRA extended-resource) device is an accelerator.
    ``counts``: device-plugin resource -> devices (claimed GPUs counted as the plugin counts them);
    ``all_of``: resources claimed with ``allocationMode: All`` (the node's count);
    ``uncounted``: accelerators whose count per node is not known (why, for ``-v``);
    ``claims``: the pod's claim references; ``unknown``: what could not be classified (for ``-v``).
    """

    accelerator: bool
    counts: dict[str, Fraction]
    all_of: frozenset
    uncounted: list[str]
    claims: list[ClaimRef]
    unknown: list[str]
    __slots__ = _fields = ("accelerator", "counts", "all_of", "uncounted", "claims", "unknown")

    def __init__(self) -> None:
        self.accelerator = False
        self.counts = {}
        self.all_of = frozenset()
        self.uncounted = []
        self.claims = []
        self.unknown = []


_EMPTY_FACTS = DraFacts()


def _claim_entries(spec: Mapping) -> Iterator[tuple[int, Mapping]]:
    entries = spec.get("resourceClaims")
    if isinstance(entries, list):  # anything else is a parse-error of its own
        for i, entry in enumerate(entries):
            if isinstance(entry, dict):
                yield i, entry


def _dra_names(spec: Mapping, facts: DraFacts) -> bool:
    """Some container asks for a DRA-backed extended resource."""
    extended = facts.extended
    for key in ("initContainers", "containers"):
        for c in _items(spec.get(key)):
            res = _mapping(c.get("resources"))
            for part in ("limits", "requests"):
                for name in _mapping(res.get(part)):
                    if isinstance(name, str) and (name.startswith(DRA_EXTENDED_PREFIX) or name in extended):
                        return True
    return False


def uses_dra(spec: Mapping, facts: DraFacts | None) -> bool:
    """Cheap test: the pod spec has claims or DRA extended resources (else :func:`pod_devices` is empty)."""
    if spec.get("resourceClaims"):
        return True
    return _dra_names(spec, facts or _EMPTY_FACTS)


def pod_devices(spec: Mapping, namespace: str, facts: DraFacts | None, requests: Mapping[str, Fraction]) -> PodDevices:
    """Follow the pod's claims and DRA extended resources to their devices.

    ``requests``: the pod's aggregated (defaulted) container requests, for the extended resources.
    """
    facts = facts or _EMPTY_FACTS
    out = PodDevices()
    all_of: set[str] = set()
    counts: dict[str, Fraction] = {}

    def count(info: ClassInfo, cls: str, n: Fraction | None, where: str) -> None:
        if info.kind == GPU and info.resource:
            if n is None:
                all_of.add(info.resource)
                counts.setdefault(info.resource, Fraction(0))
            else:
                counts[info.resource] = counts.get(info.resource, Fraction(0)) + n
        elif info.kind == SLICE and info.resource and info.fraction and n is not None:
            # MIG partitions of a known profile: their share of one GPU each
            counts[info.resource] = counts.get(info.resource, Fraction(0)) + n * info.fraction
        else:
            what = "MIG partitions" if info.kind == SLICE else "accelerators"
            out.uncounted.append(f"{where} asks for {what} of class '{cls}', whose count per node is not known")

    for i, entry in _claim_entries(spec):
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
        found = facts.find(key, name, namespace)
        out.claims.append(ClaimRef(path, kind, name, found is not None))
        if found is None:
            out.unknown.append(f"{kind} '{name}' is not among the inputs or --context, so its devices are not known")
            continue
        for alternatives in found:
            infos = [(s, facts.classify(s.device_class)) for s in alternatives]
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
            first, info = accel[0]
            if len(alternatives) > 1 and any(
                (s.device_class, s.count) != (first.device_class, first.count) for s, _ in infos
            ):
                out.uncounted.append(f"{kind} '{name}' lists alternatives (firstAvailable); the pod gets one of them")
                continue
            count(info, first.device_class, None if first.count is None else Fraction(first.count), f"{kind} '{name}'")
    # DRA-backed extended resources (KEP-5004).
    for rname, value in requests.items():
        if value <= 0:
            continue
        if rname.startswith(DRA_EXTENDED_PREFIX):
            cls = rname[len(DRA_EXTENDED_PREFIX) :]
        elif rname in facts.extended:
            cls = facts.extended[rname]
        else:
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
    out.counts = {r: v for r, v in counts.items()}
    out.all_of = frozenset(all_of)
    return out


# --------------------------------------------------------------------------
# What a policy that sees one object can be told (kubelint_ml/admission/vapbuiltin.py)


def _re2_escape(text: str) -> str:
    return re.sub(r"([.\\+*?()|\[\]{}^$])", r"\\\1", text)


def _alternatives(names: list[str]) -> str:
    return "|".join(_re2_escape(n) for n in sorted(names))


_WORDS_RE = "^{prefix}([^./]*[-_])?({words})([-_][^./]*)?(\\.[^/]*)?$"


class AdmissionDra(Record):
    """The DRA facts a ValidatingAdmissionPolicy is built with: the names of the templates and
    claims that hold accelerators, and RE2 patterns over a container's resource names for the DRA
    extended resources that count as accelerators. ``whole``: the DeviceClasses'
    extendedResourceNames (whole numbers, as extended resources); for
    ``deviceclass.resource.kubernetes.io/<class>``: ``accel``/``other`` the classes known by name
    or object, and for the rest ``by_name`` (MIG, NVIDIA's GPU driver), else ``words`` and not
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
                info = facts.classify(s.device_class)
                if info is not None and info.accelerator:
                    return True
        return False

    def accelerator_names(table: dict[str, list[tuple[str, tuple]]]) -> dict[str, bool]:
        # "<pod namespace>/<name>" -> whether it holds accelerators, as find() resolves it for a pod
        # without a namespace (""), in each namespace listed, and in any other ("*"); names that
        # hold none anywhere are left out.
        out: dict[str, bool] = {}
        for name, entries in table.items():
            answers = {}
            for pod_ns in ["", *(ns for ns, _ in entries if ns), "*"]:
                first = next((r for ns, r in entries if not ns or not pod_ns or (pod_ns != "*" and ns == pod_ns)), None)
                answers[f"{pod_ns}/{name}"] = first is not None and holds_accelerators(first)
            if any(answers.values()):
                out.update(answers)
        return out

    templates = accelerator_names(facts.templates)
    claims = accelerator_names(facts.claims)
    extended = []
    for name, cls in facts.extended.items():
        info = facts.classify(cls)
        if info is not None and info.accelerator:
            extended.append(name)
    # Classes decided by the profile, a DeviceClass's driver or the known table; the rest by their names.
    explicit = set(_KNOWN_CLASSES) | set(facts.profile_classes) | {n for n, f in facts.classes.items() if f.driver}
    accel: list[str] = []
    other: list[str] = []
    for name in explicit:
        info = facts.classify(name)
        (accel if info is not None and info.accelerator else other).append(name)
    prefix = _re2_escape(DRA_EXTENDED_PREFIX)
    return AdmissionDra(
        templates,
        claims,
        f"^({_alternatives(extended)})$" if extended else None,
        f"^{prefix}({_alternatives(accel)})$",
        f"^{prefix}({_alternatives(other)})$",
        f"^{prefix}([^./]*mig[^/]*|[^/]*\\.gpu\\.nvidia\\.com)$",
        _WORDS_RE.format(prefix=prefix, words="|".join(sorted(_ACCELERATOR_WORDS))),
        _WORDS_RE.format(prefix=prefix, words="|".join(sorted(_OTHER_WORDS))),
    )
