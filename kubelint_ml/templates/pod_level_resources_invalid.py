"""Pod-level resources (``spec.resources``) the API server rejects, or drops.

Followed: ``validatePodResourceName`` and ``validatePodResourceConsistency``
(pkg/apis/core/validation/validation.go: only cpu, memory and hugepages at pod
level; the aggregate of the containers' requests, defaulted, at most the pod's
request; no container limit above the pod's limit) and ``dropDisabledPodLevelResources``
(pkg/api/pod/util.go: before 1.34 the gate is off and the field is dropped).
"""

from __future__ import annotations

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.input.workloads import PodTemplate
from kubelint_ml.k8s.resources import is_hugepages, pod_requests
from kubelint_ml.templates._common import gates, pod_level, requests_limits, show

UNIT = "podTemplate"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}

_SUPPORTED = '"cpu", "hugepages-", "memory"'


def _supported(name: str) -> bool:
    return name in ("cpu", "memory") or is_hugepages(name)


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    tpl = unit.tpl
    raw = tpl.spec.get("resources")
    if not isinstance(raw, dict):
        return None
    base = tpl.spec_path + ("resources",)
    who = tpl.describe()
    if not gates(tpl)[0]:
        names = [str(n) for part in ("requests", "limits") if isinstance(raw.get(part), dict) for n in raw[part] if n]
        if not names:
            return None
        version = getattr(getattr(ctx, "profile", None), "kubernetes_version", None)
        return [
            Hit(
                base,
                f"pod-level resources are dropped before Kubernetes 1.34 (profile: {version})",
                detail=(
                    f"{who}: spec.resources ({', '.join(sorted(set(names)))}) needs the PodLevelResources gate, "
                    f"on from Kubernetes 1.34; on {version} the API server drops the field, so only the containers' "
                    "requests and limits count (QoS, scheduling, limits). Set the containers' resources instead"
                ),
                severity="warning",
            )
        ]
    out: list[Hit] = []
    for part in ("requests", "limits"):
        values = raw.get(part)
        if not isinstance(values, dict):
            continue
        for name in values:
            if isinstance(name, str) and not _supported(name):
                out.append(
                    Hit(
                        base + (part, name),
                        f"pod-level {part} cannot hold {name}: only cpu, memory and hugepages",
                        detail=(
                            f"{who}: spec.resources.{part} names {name}; the API server rejects it "
                            f'(Unsupported value: "{name}": supported values: {_SUPPORTED}). Ask for it in the '
                            "containers' resources (extended resources and GPUs are per container)"
                        ),
                    )
                )
    out.extend(_consistency(tpl, raw, base))
    return out


def _consistency(tpl: PodTemplate, raw: dict, base: tuple) -> list[Hit]:
    found = pod_level(tpl)
    if found is None:
        return []
    pod_requests_, pod_limits = found
    written_requests = raw.get("requests") if isinstance(raw.get("requests"), dict) else {}
    out: list[Hit] = []
    aggregate = pod_requests(tpl.spec)
    for name in sorted(written_requests):
        if not isinstance(name, str) or not _supported(name) or name not in pod_requests_ or name not in aggregate:
            continue
        value, total = pod_requests_[name], aggregate[name]
        if value < total:
            out.append(
                Hit(
                    base + ("requests", name),
                    f"pod {name} request {show(name, value)} < the containers' {show(name, total)}",
                    detail=(
                        f"{tpl.describe()}: the pod-level {name} request {show(name, value)} is below the aggregate "
                        f"of the containers' requests, {show(name, total)}; the API server rejects the pod (must be "
                        f"greater than or equal to aggregate container requests of {show(name, total)}). Raise the "
                        "pod-level request or lower the containers'"
                    ),
                    at_value=True,
                )
            )
    for c in tpl.containers:
        _, limits = requests_limits(c)
        for name in sorted(limits):
            if name not in pod_limits or not _supported(name):
                continue
            limit, pod_limit = limits[name], pod_limits[name]
            if limit > pod_limit:
                out.append(
                    Hit(
                        c.path + ("resources", "limits", name),
                        f"{c.describe()} {name} limit {show(name, limit)} > pod limit {show(name, pod_limit)}",
                        detail=(
                            f"{tpl.describe()}: {c.describe()} limits {name} to {show(name, limit)}, above the "
                            f"pod-level limit {show(name, pod_limit)}; the API server rejects the pod (must be less "
                            f"than or equal to pod limits of {show(name, pod_limit)}). Lower the container's limit "
                            "or raise the pod's"
                        ),
                        container=c.name,
                        at_value=True,
                    )
                )
    return out
