"""LimitRange and ResourceQuota as the API server applies them to a pod at admission.

The order is Kubernetes': API defaulting first (a missing request takes its limit,
``SetDefaults_Pod``), then the LimitRanger plugin
(``plugin/pkg/admission/limitranger/admission.go``) fills in, per container (init
containers too), a missing limit from ``default`` and a missing request from
``defaultRequest``, and then rejects a pod outside ``min``/``max``/
``maxLimitRequestRatio`` (type ``Container`` per container, type ``Pod`` on the
sums). A LimitRange item is itself defaulted when stored
(``SetDefaults_LimitRangeItem``): for type ``Container`` a missing ``default``
takes ``max``, a missing ``defaultRequest`` takes ``default``, then ``min``.
Each LimitRange of the namespace mutates the pod in turn (by name here), so the
first one that has a default for a resource sets it.

A ResourceQuota whose ``spec.hard`` names ``cpu``/``memory``, ``requests.*`` or
``limits.*`` of those makes the API server reject a pod whose containers lack
that value after the LimitRange defaults (``enforcePodContainerConstraints``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from fractions import Fraction
from typing import Any

from kubelint_ml.k8s.quantity import QuantityError, format_bytes, format_cpu, parse_manifest_quantity
from kubelint_ml.k8s.resources import container_requests_limits, defaulted_requests
from kubelint_ml.records import Frozen

Raw = dict[str, tuple[Fraction, str]]  # resource -> (value, as written)


def _raw_list(value: Any) -> Raw:
    out: Raw = {}
    if not isinstance(value, dict):
        return out
    for name, raw in value.items():
        if not isinstance(name, str):
            continue
        try:
            q = parse_manifest_quantity(raw).value
        except (QuantityError, ValueError, TypeError):
            continue
        out[name] = (q, str(raw))
    return out


class LimitRangeItem(Frozen):
    type: str
    max: Raw
    min: Raw
    default: Raw
    default_request: Raw
    ratio: Raw
    _fields = ("type", "max", "min", "default", "default_request", "ratio")

    def __init__(self, type: str, max: Raw, min: Raw, default: Raw, default_request: Raw, ratio: Raw) -> None:
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "max", max)
        object.__setattr__(self, "min", min)
        object.__setattr__(self, "default", default)
        object.__setattr__(self, "default_request", default_request)
        object.__setattr__(self, "ratio", ratio)


class LimitRange(Frozen):
    namespace: str
    name: str
    source: str  # the file it was read from
    items: tuple[LimitRangeItem, ...]
    _fields = ("namespace", "name", "source", "items")

    def __init__(self, namespace: str, name: str, source: str, items: tuple[LimitRangeItem, ...]) -> None:
        object.__setattr__(self, "namespace", namespace)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "items", items)

    @property
    def ref(self) -> str:
        return f"LimitRange {self.namespace}/{self.name}"


def parse_limit_range(data: Mapping, namespace: str, name: str, source: str) -> LimitRange:
    """A LimitRange object's items, defaulted as the API server stores them."""
    items = []
    spec = data.get("spec")
    limits = spec.get("limits") if isinstance(spec, dict) else None
    for raw in limits if isinstance(limits, list) else ():
        if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
            continue
        kind = raw["type"]
        mx, mn = _raw_list(raw.get("max")), _raw_list(raw.get("min"))
        default, request = _raw_list(raw.get("default")), _raw_list(raw.get("defaultRequest"))
        if kind == "Container":  # SetDefaults_LimitRangeItem
            for key, value in mx.items():
                default.setdefault(key, value)
            for key, value in default.items():
                request.setdefault(key, value)
            for key, value in mn.items():
                request.setdefault(key, value)
        items.append(LimitRangeItem(kind, mx, mn, default, request, _raw_list(raw.get("maxLimitRequestRatio"))))
    return LimitRange(namespace, name, source, tuple(items))


class Applied(Frozen):
    """One value LimitRanger filled in: ``container``'s ``part`` (requests/limits) of ``resource``."""

    container: str
    part: str
    resource: str
    text: str
    origin: LimitRange
    _fields = ("container", "part", "resource", "text", "origin")

    def __init__(self, container: str, part: str, resource: str, text: str, origin: LimitRange) -> None:
        object.__setattr__(self, "container", container)
        object.__setattr__(self, "part", part)
        object.__setattr__(self, "resource", resource)
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "origin", origin)

    def describe(self) -> str:
        what = "limit" if self.part == "limits" else "request"
        return f"{self.resource} {what} {self.text} from {self.origin.ref}"


class AdmittedContainer:
    """A container's requests and limits as the pod is admitted: API defaulting, then LimitRange defaults."""

    __slots__ = ("name", "group", "index", "init", "requests", "limits", "applied")

    def __init__(self, raw: Mapping, group: str, index: int, ranges: tuple[LimitRange, ...]) -> None:
        self.name = str(raw.get("name", f"{group}[{index}]"))
        self.group, self.index, self.init = group, index, group == "initContainers"
        requests, limits = container_requests_limits(raw)
        self.requests = defaulted_requests(requests, limits)
        self.limits = dict(limits)
        self.applied: list[Applied] = []
        for lr in ranges:
            default: Raw = {}
            default_request: Raw = {}
            for item in lr.items:
                if item.type == "Container":  # a later item of one LimitRange overrides an earlier one
                    default.update(item.default)
                    default_request.update(item.default_request)
            for part, values, have in (("limits", default, self.limits), ("requests", default_request, self.requests)):
                for res, (value, text) in values.items():
                    if res not in have:
                        have[res] = value
                        self.applied.append(Applied(self.name, part, res, text, lr))

    @property
    def path(self) -> tuple:
        return (self.group, self.index)


def admitted_containers(spec: Mapping, ranges: tuple[LimitRange, ...]) -> list[AdmittedContainer]:
    out = []
    for group in ("initContainers", "containers"):
        items = spec.get(group)
        for i, raw in enumerate(items if isinstance(items, list) else ()):
            if isinstance(raw, dict):
                out.append(AdmittedContainer(raw, group, i, ranges))
    return out


def admitted_spec(spec: Mapping, containers: list[AdmittedContainer]) -> dict:
    """A copy of ``spec`` whose containers carry their admitted requests and limits (for QoS and sums)."""
    out = dict(spec)
    for group in ("initContainers", "containers"):
        items = spec.get(group)
        if not isinstance(items, list):
            continue
        copies = list(items)
        for c in containers:
            if c.group == group and c.applied:
                raw = dict(copies[c.index])
                raw["resources"] = {
                    "requests": {k: _text(v) for k, v in c.requests.items()},
                    "limits": {k: _text(v) for k, v in c.limits.items()},
                }
                copies[c.index] = raw
        out[group] = copies
    return out


def _text(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    return f"{int(value * 1000)}m"


class Violation(Frozen):
    """What the API server would say rejecting the pod; ``container`` None for a pod-wide one."""

    container: AdmittedContainer | None
    part: str  # "limits" | "requests"
    resource: str
    message: str
    origin: str  # "LimitRange ns/name" or "ResourceQuota ns/name"
    _fields = ("container", "part", "resource", "message", "origin")

    def __init__(
        self, container: AdmittedContainer | None, part: str, resource: str, message: str, origin: str
    ) -> None:
        object.__setattr__(self, "container", container)
        object.__setattr__(self, "part", part)
        object.__setattr__(self, "resource", resource)
        object.__setattr__(self, "message", message)
        object.__setattr__(self, "origin", origin)


def _show(resource: str, value: Fraction) -> str:
    if resource == "cpu":
        return format_cpu(value)
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return format_bytes(value)
    return _text(value)


def _bounds(
    kind: str, item: LimitRangeItem, requests: Mapping[str, Fraction], limits: Mapping[str, Fraction]
) -> Iterator[tuple[str, str, str]]:
    """(part, resource, message) for each bound broken, worded as LimitRanger words it."""
    for res, (value, text) in item.min.items():
        req, lim = requests.get(res), limits.get(res)
        if req is None:
            yield "requests", res, f"minimum {res} usage per {kind} is {text}, but no request is specified"
        elif req < value:
            yield "requests", res, f"minimum {res} usage per {kind} is {text}, but request is {_show(res, req)}"
        elif lim is not None and lim < value:
            yield "limits", res, f"minimum {res} usage per {kind} is {text}, but limit is {_show(res, lim)}"
    for res, (value, text) in item.max.items():
        req, lim = requests.get(res), limits.get(res)
        if lim is None:
            yield "limits", res, f"maximum {res} usage per {kind} is {text}, but no limit is specified"
        elif lim > value:
            yield "limits", res, f"maximum {res} usage per {kind} is {text}, but limit is {_show(res, lim)}"
        elif req is not None and req > value:
            yield "requests", res, f"maximum {res} usage per {kind} is {text}, but request is {_show(res, req)}"
    for res, (value, text) in item.ratio.items():
        req, lim = requests.get(res), limits.get(res)
        if not req:
            yield "requests", res, f"{res} max limit to request ratio per {kind} is {text}, but no request is specified"
        elif not lim:
            yield "limits", res, f"{res} max limit to request ratio per {kind} is {text}, but no limit is specified"
        elif lim / req > value:
            yield (
                "limits",
                res,
                f"{res} max limit to request ratio per {kind} is {text}, but provided ratio is {float(lim / req):.2f}",
            )


def _pod_sums(containers: list[AdmittedContainer], limits: bool) -> dict[str, Fraction]:
    """LimitRanger's pod totals: the sum over the app containers of the resources every one of them
    states (``sum`` leaves out a resource one lacks), then the largest init container where larger."""
    apps = [(c.limits if limits else c.requests) for c in containers if not c.init]
    keys = {k for values in apps for k in values}
    total = {k: sum((v[k] for v in apps), Fraction(0)) for k in keys if all(k in v for v in apps)}
    for c in containers:
        if c.init:
            for k, v in (c.limits if limits else c.requests).items():
                if k not in total or v > total[k]:
                    total[k] = v
    return total


def limit_range_violations(containers: list[AdmittedContainer], ranges: tuple[LimitRange, ...]) -> list[Violation]:
    out = []
    for lr in ranges:
        for item in lr.items:
            if item.type == "Container":
                for c in containers:
                    for part, res, msg in _bounds("Container", item, c.requests, c.limits):
                        out.append(Violation(c, part, res, msg, lr.ref))
            elif item.type == "Pod":
                requests, limits = _pod_sums(containers, False), _pod_sums(containers, True)
                for part, res, msg in _bounds("Pod", item, requests, limits):
                    out.append(Violation(None, part, res, msg, lr.ref))
    return out


# enforcePodContainerConstraints: what a quota on these makes every container state.
QUOTA_CHECKED = {
    "cpu": ("requests", "cpu"),
    "memory": ("requests", "memory"),
    "requests.cpu": ("requests", "cpu"),
    "requests.memory": ("requests", "memory"),
    "limits.cpu": ("limits", "cpu"),
    "limits.memory": ("limits", "memory"),
}


def quota_required(data: Mapping) -> tuple[str, ...]:
    """The names of ``spec.hard`` that every container must state (unscoped quotas only)."""
    spec = data.get("spec")
    if not isinstance(spec, dict) or spec.get("scopes") or spec.get("scopeSelector"):
        return ()
    hard = spec.get("hard")
    return tuple(sorted(k for k in hard if k in QUOTA_CHECKED)) if isinstance(hard, dict) else ()


def quota_violations(containers: list[AdmittedContainer], required: list[tuple[str, str]]) -> list[Violation]:
    """``required``: (hard name, "ResourceQuota ns/name")."""
    out = []
    for c in containers:
        seen = set()
        for hard, origin in required:
            part, res = QUOTA_CHECKED[hard]
            if (part, res) in seen or res in (c.limits if part == "limits" else c.requests):
                continue
            seen.add((part, res))
            what = "limit" if part == "limits" else "request"
            out.append(Violation(c, part, res, f"must specify {part}.{res}: no {res} {what}", origin))
    return out


# Quota names that bound what pods ask for: compute resources of the requests or limits.
_QUOTA_PARTS = {
    "cpu": ("requests", "cpu"),
    "memory": ("requests", "memory"),
    "ephemeral-storage": ("requests", "ephemeral-storage"),
}


def quota_hard(data: Mapping) -> dict[str, tuple[Fraction, str]]:
    """``spec.hard`` of an unscoped quota: name -> (value, as written)."""
    spec = data.get("spec")
    if not isinstance(spec, dict) or spec.get("scopes") or spec.get("scopeSelector"):
        return {}
    return _raw_list(spec.get("hard"))


def _quota_part(name: str) -> tuple[str, str] | None:
    if name in _QUOTA_PARTS:
        return _QUOTA_PARTS[name]
    for part in ("requests", "limits"):
        if name.startswith(part + "."):
            return part, name[len(part) + 1 :]
    return None


def _pod_total(containers: list[AdmittedContainer], limits: bool) -> dict[str, Fraction]:
    """What the quota charges one pod: the app containers' sum, or the largest init container when more."""
    total: dict[str, Fraction] = {}
    for c in containers:
        if not c.init:
            for k, v in (c.limits if limits else c.requests).items():
                total[k] = total.get(k, Fraction(0)) + v
    for c in containers:
        if c.init:
            for k, v in (c.limits if limits else c.requests).items():
                if v > total.get(k, Fraction(0)):
                    total[k] = v
    return total


def quota_total_violations(
    containers: list[AdmittedContainer], hards: list[tuple[str, dict[str, tuple[Fraction, str]]]]
) -> list[Violation]:
    """A single pod that asks for more than a quota's hard limit in all: it is never admitted."""
    out = []
    totals = {"requests": _pod_total(containers, False), "limits": _pod_total(containers, True)}
    for origin, hard in hards:
        for name, (value, text) in sorted(hard.items()):
            where = _quota_part(name)
            if where is None:
                continue
            part, res = where
            asked = totals[part].get(res)
            if asked is not None and asked > value:
                what = "" if part == "requests" else " in limits"
                message = f"asks for {_show(res, asked)} {res}{what}, above the quota's {name}: {text}"
                out.append(Violation(None, part, res, message, origin))
    return out
