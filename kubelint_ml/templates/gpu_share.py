"""A pod's share of a GPU node's memory, cpu or local storage against its
share of the node's GPUs.

A pod using g of a node's G GPUs and more than g/G of its memory leaves the
other GPUs without the memory to run anything; one asking for more than the
node's allocatable, or for more GPUs than the node has, never schedules.

When the node constraints allow several node types, the scheduler or the
autoscaler picks one the pod fits, so a finding is reported only when it
holds on every candidate with enough GPUs, and is worded for the one that
comes closest.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from fractions import Fraction

from kubelint_ml.engine.api import Hit, SkipUnit, Unit, template_devices
from kubelint_ml.input.workloads import ContainerView, PodTemplate
from kubelint_ml.k8s.nodes import GI, MI, NEURON_RESOURCES, NodeType, neuron_node_as
from kubelint_ml.k8s.resources import defaulted_requests, effective_pod_request
from kubelint_ml.records import Record, replace
from kubelint_ml.templates._accel import Placement, count_text, devices_label, is_slice, percent, placement
from kubelint_ml.templates._common import (
    accelerators,
    counts_on,
    gates,
    param_fraction,
    pod_level,
    requests_limits,
    show,
    uncounted_accelerators,
    why_resources_unknown,
)

UNIT = "podTemplate"
RESOURCES = ("memory", "ephemeral-storage", "cpu")
DEFAULTS = {"tolerance": 0.10, "resources": list(RESOURCES)}
PARAMS = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "tolerance": {"type": "number", "minimum": 0},
        "resources": {"type": "array", "items": {"enum": list(RESOURCES)}, "minItems": 1, "uniqueItems": True},
    },
}


# --------------------------------------------------------------------------
# Amounts


def _node_amount(node: NodeType, resource: str) -> Fraction | None:
    if resource == "memory":
        return node.memory
    if resource == "cpu":
        return node.cpu
    return node.ephemeral_storage


def _approx(resource: str, value: Fraction) -> str:
    """Readable text for a computed amount (node allocatable, a share)."""
    if resource == "cpu":
        text = f"{float(value):.2f}".rstrip("0").rstrip(".")
        return text if value >= 1 else f"{math.floor(value * 1000)}m"
    if value >= 100 * GI:
        return f"{math.floor(value / GI + Fraction(1, 2))}Gi"
    if value >= GI:
        return f"{float(value / GI):.1f}".rstrip("0").rstrip(".") + "Gi"
    return f"{math.floor(value / MI)}Mi"


def _at_most(resource: str, value: Fraction) -> str:
    """``value`` rounded down to a round amount, for advice: 264Gi, 800Mi, 11, 500m."""
    if resource == "cpu":
        return show("cpu", Fraction(math.floor(value)) if value >= 2 else Fraction(math.floor(value * 1000), 1000))
    if value >= 10 * GI:
        return f"{math.floor(value / GI)}Gi"
    return f"{math.floor(value / MI)}Mi"


def _exact(resource: str, value: Fraction) -> str:
    """A request as a person would write it: 1152Gi rather than ~1.13Ti."""
    if resource != "cpu" and value.denominator == 1:
        for unit, suffix in ((1024 * GI, "Ti"), (GI, "Gi"), (MI, "Mi")):
            if value >= unit and value % unit == 0:
                return f"{value // unit}{suffix}"
    return show(resource, value)


def _of_node(resource: str) -> str:
    return "local storage" if resource == "ephemeral-storage" else "allocatable"


def _node_label(node: NodeType) -> str:
    return f"node pool {node.name}" if node.source == "profile" else node.name


def _choices(place: Placement, among: int, gpus: int = 0, label: str = "GPUs") -> str:
    """``8 node types nodeSelector ... allows``, ``2 node types with 4 or more GPUs that ... allows``
    or ``2 matching profile node pools``."""
    enough = f" with {gpus} or more {label}" if gpus > 1 else ""
    if place.source == "profile":
        return f"{among} matching profile node pools{enough}"
    return f"{among} node types{enough}{' that' if enough else ''} {place.how} allows"


def _on(node: NodeType, place: Placement, among: int, gpus: int) -> str:
    """``p4d.24xlarge``, or ``g2-standard-96 (the closest fit among 2 node types with ...)``."""
    if among <= 1:
        return _node_label(node)
    label = devices_label(node.gpu_resource)
    return f"{_node_label(node)} (the closest fit among {_choices(place, among, gpus, label)})"


# --------------------------------------------------------------------------
# Where the request comes from


class _Source(Record):
    path: tuple
    where: str  # "container 'pytorch'", "pod-level resources"
    container: str | None
    value: Fraction
    __slots__ = _fields = ("path", "where", "container", "value")

    def __init__(self, path: tuple, where: str, container: str | None, value: Fraction) -> None:
        self.path = path
        self.where = where
        self.container = container
        self.value = value


def _container_request(c: ContainerView, resource: str) -> _Source:
    requests, limits = requests_limits(c)
    value = defaulted_requests(requests, limits).get(resource, Fraction(0))
    part = "requests" if resource in requests or resource not in limits else "limits"
    return _Source(c.path + ("resources", part, resource), c.describe(), c.name, value)


def _largest_source(tpl: PodTemplate, resource: str) -> _Source | None:
    """The field that contributes most to the pod's effective request."""
    pod = pod_level(tpl)
    if pod is not None and resource in pod[0] and resource in ("cpu", "memory"):
        raw = tpl.spec.get("resources") or {}
        part = "requests" if resource in (raw.get("requests") or {}) else "limits"
        return _Source(tpl.spec_path + ("resources", part, resource), "pod-level resources", None, pod[0][resource])
    running = [_container_request(c, resource) for c in tpl.containers]
    sidecars: list[_Source] = []
    app_total = sum((s.value for s in running), Fraction(0))
    peak: tuple[Fraction, _Source] | None = None
    for c in tpl.init_containers:
        src = _container_request(c, resource)
        if c.role == "sidecar":
            sidecars.append(src)
            app_total += src.value
            continue
        during = src.value + sum((s.value for s in sidecars), Fraction(0))
        if peak is None or during > peak[0]:
            peak = (during, max([src, *sidecars], key=lambda s: s.value))
    if peak is not None and peak[0] > app_total:
        return peak[1]
    everyone = running + sidecars
    best = max(everyone, key=lambda s: s.value, default=None)
    return best if best is not None and best.value > 0 else None


def _gpu_field(tpl: PodTemplate, resource: str) -> _Source | None:
    """The container field asking for the most devices of ``resource``; else, for GPUs claimed
    through DRA, the pod's first claim that was followed to its devices."""
    best: _Source | None = None
    for c in tpl.all_containers:
        requests, limits = requests_limits(c)
        value = limits.get(resource, requests.get(resource, Fraction(0)))
        if value > 0 and (best is None or value > best.value):
            part = "limits" if resource in limits else "requests"
            best = _Source(c.path + ("resources", part, resource), c.describe(), c.name, value)
    if best is None:
        devices = template_devices(tpl)
        claim = next((c for c in devices.claims if c.found), None) if devices is not None else None
        if claim is not None:
            best = _Source(tpl.spec_path + claim.path, f"{claim.kind} {claim.name}", None, Fraction(0))
    return best


# --------------------------------------------------------------------------
# The check


def check(unit: Unit, params: dict, ctx) -> Iterator[Hit]:
    tpl = unit.tpl
    why = why_resources_unknown(tpl)
    if why:
        raise SkipUnit(why)
    uncounted = uncounted_accelerators(tpl)
    if uncounted:
        raise SkipUnit(uncounted)
    accel = accelerators(tpl)
    if not accel:
        raise SkipUnit("no counted accelerator devices")
    place, how = placement(tpl, ctx)
    if place is None:
        raise SkipUnit(f"node type not resolved: {how}")

    fits: list[NodeType] = []
    too_small: list[NodeType] = []
    wrong: list[NodeType] = []
    sliced = neuron_unknown = False
    for node in place.nodes:
        most = node.gpus
        seen = neuron_node_as(node, list(accel))
        if seen is not None:
            node, most = seen
        others = [
            r for r in counts_on(tpl, accel, node.gpu_resource, node.gpus, node.gpu_model) if r != node.gpu_resource
        ]
        if others:
            if node.gpu_resource == "nvidia.com/gpu" and all(is_slice(r) for r in others):
                sliced = True
            elif node.gpu_resource in NEURON_RESOURCES and all(r in NEURON_RESOURCES for r in others):
                neuron_unknown = True  # cores and devices of a Neuron node whose generation is not known
            else:
                wrong.append(node)
        elif _count(tpl, accel, node, fewest=True) > most and not _mig_at_most(tpl):
            too_small.append(replace(node, gpus=most))
        else:
            fits.append(node)
    if sliced:
        raise SkipUnit("the pod requests MIG slices or shared GPUs; how many a node offers depends on its partitioning")
    if neuron_unknown:
        raise SkipUnit(
            "the pod asks for Neuron cores or devices of a node whose Neuron generation (NeuronCores per device) "
            "is not known: give the pool its instance type"
        )
    if not fits:
        yield from _never_fits(tpl, place, accel, too_small, wrong)
        return

    tolerance = param_fraction(params["tolerance"])
    for resource in params["resources"]:
        hit = _share_hit(tpl, place, accel, fits, resource, tolerance)
        if hit is not None:
            yield hit


def _never_fits(
    tpl: PodTemplate, place: Placement, accel: dict[str, int], too_small: list[NodeType], wrong: list[NodeType]
) -> Iterator[Hit]:
    if too_small:
        node = max(too_small, key=lambda n: n.gpus)
        resource = node.gpu_resource
        g, label = _count(tpl, accel, node, fewest=True), devices_label(resource)
        n = len(place.nodes)
        biggest = "" if n == 1 else f" (the largest of {_choices(place, n)})"
        src = _gpu_field(tpl, resource)
        devices = template_devices(tpl)
        smallest = (
            " (with the smallest of its firstAvailable alternatives)"
            if devices is not None and devices.alternatives
            else ""
        )
        yield _at_source(
            tpl,
            src,
            f"requests {g} {label} but {_node_label(node)} has only {node.gpus}",
            f"{tpl.describe()}: the pod requests {g} {label}{smallest} but {_node_label(node)}{biggest} has only "
            f"{node.gpus}: the pod can never be scheduled. Request at most {node.gpus} {label} per pod "
            f"(and more replicas), or select a node type with {g} or more",
        )
        return
    node = wrong[0]
    accel = counts_on(tpl, accel, node.gpu_resource, node.gpus, node.gpu_model)
    asked = sorted(r for r in accel if r != node.gpu_resource)
    src = _gpu_field(tpl, asked[0])
    names = ", ".join(f"{accel[r]} {r}" for r in asked)
    n = len(place.nodes)
    where = _node_label(node) if n == 1 else f"each of the {_choices(place, n)}"
    yield _at_source(
        tpl,
        src,
        f"requests {names} but {_node_label(node)} offers {node.gpu_resource} only",
        f"{tpl.describe()}: the pod requests {names} but {where} offers {node.gpu_resource} only: "
        f"the pod can never be scheduled there. Request {node.gpu_resource}, or select nodes that "
        f"offer {asked[0]}",
    )


def _at_source(tpl: PodTemplate, src, message: str, detail: str | None = None) -> Hit:
    """A hit at the request ``src`` names (a value), else at the pod spec."""
    if src is None:
        return Hit(tpl.spec_path, message, detail=detail)
    return Hit(src.path, message, container=src.container, at_value=True, detail=detail)


def _share_hit(
    tpl: PodTemplate, place: Placement, accel: dict[str, int], fits: list[NodeType], resource: str, tolerance: Fraction
) -> Hit | None:
    request = effective_pod_request(tpl.spec, resource, pod_level_enabled=gates(tpl)[0])
    if request <= 0:
        return None
    # (node, allocatable, fair share) for every node type the pod fits
    rows: list[tuple[NodeType, Fraction, Fraction]] = []
    for node in fits:
        alloc = _node_amount(node, resource)
        if alloc is None or alloc <= 0:
            return None  # unknown on some candidate: it may fit there
        share = alloc * _count(tpl, accel, node) / node.gpus
        if request <= alloc and request <= share * (1 + tolerance):
            return None  # fine on this candidate
        rows.append((node, alloc, share))
    src = _largest_source(tpl, resource)
    origin = ""
    if src is not None:
        origin = (
            f", set by {src.where}" if src.value == request else f", {_exact(resource, src.value)} of it by {src.where}"
        )
    placeable = [r for r in rows if request <= r[1]]
    if not placeable:
        node, alloc, _ = max(rows, key=lambda r: r[1])
        on = _on(node, place, len(fits), _count(tpl, accel, node))
        message = (
            f"requests {_exact(resource, request)} {resource} but {_node_label(node)} has "
            f"{_approx(resource, alloc)} {_of_node(resource)}"
        )
        detail = (
            f"{tpl.describe()}: the pod requests {_exact(resource, request)} {resource}{origin}, but {on} has "
            f"only {_approx(resource, alloc)} {_of_node(resource)}: the pod can never be scheduled. Request at "
            f"most {_at_most(resource, alloc)} {resource} (less what the node's DaemonSets request), or select "
            f"a larger node type"
        )
    else:
        node, alloc, share = max(placeable, key=lambda r: r[2])
        g, big_g = _count(tpl, accel, node), node.gpus
        label = devices_label(node.gpu_resource)
        fitting = math.floor(alloc / request)
        if fitting * g < (big_g // g) * g:
            effect = (
                f"at most {fitting} such pod{'s' if fitting != 1 else ''} fit{'s' if fitting == 1 else ''} "
                f"on one node, leaving {count_text(big_g - fitting * g)} of its {big_g} {label} idle"
            )
        else:
            effect = (
                f"the node's other {count_text(big_g - g)} {label} are left {_approx(resource, alloc - request)} "
                f"{resource} between them"
            )
        message = (
            f"{g} of {big_g} {label} but {percent(request / alloc)} of {_node_label(node)} {resource} "
            f"({_exact(resource, request)})"
        )
        detail = (
            f"{tpl.describe()}: uses {g} of {big_g} {label} ({percent(Fraction(g, big_g))}) on "
            f"{_on(node, place, len(fits), g)} but requests {_exact(resource, request)} {resource} "
            f"({percent(request / alloc)} of {_approx(resource, alloc)} {_of_node(resource)}){origin}: {effect}. "
            f"Request at most about {_at_most(resource, share)} {resource} (its GPU share), more {label} per pod, "
            f"or a node type with more {resource} per GPU"
        )
        detail += _at_most_said(tpl, g, label)
    return _at_source(tpl, src, message, detail)


def _mig_at_most(tpl: PodTemplate) -> bool:
    """Some claimed MIG devices of no named profile are counted as whole GPUs: the pod may hold fewer."""
    devices = template_devices(tpl)
    return devices is not None and bool(devices.upper)


def _at_most_said(tpl: PodTemplate, g: Fraction | int, label: str) -> str:
    """What the detail says of GPUs counted at the most the pod can hold, or ""."""
    devices = template_devices(tpl)
    if devices is None:
        return ""
    out = ""
    if devices.upper:
        what = "its MIG devices name no profile" if not devices.partitions else "it asks for GPU partitions"
        out += (
            f" ({what}, so each is counted as the whole GPU it may be: {count_text(g)} "
            f"{label} is the most the pod can hold)"
        )
    if devices.alternatives:
        claims = sorted({where for where, *_ in devices.alternatives})
        out += (
            f" ({', '.join(claims)} list{'s' if len(claims) == 1 else ''} alternatives (firstAvailable); judged "
            f"with the one that takes the most of this node type's {label}, {count_text(g)} {label} in all, so "
            "this holds for every alternative)"
        )
    return out


def _count(tpl: PodTemplate, accel: dict, node: NodeType, fewest: bool = False) -> Fraction | int:
    """The pod's devices of the node's GPU resource (a DRA claim of them all: the node's count);
    ``fewest``: the fewest they may be there (Neuron cores whose devices depend on the node's
    configuration), else the most."""
    return counts_on(tpl, accel, node.gpu_resource, node.gpus, node.gpu_model, fewest)[node.gpu_resource]
