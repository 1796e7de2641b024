"""Extended resources (GPUs, EFA, RDMA...) must have request == limit.

``validateResourceRequirements`` rejects, for resources that cannot be
overcommitted, a request without a limit ("Limit must be set for non
overcommitable resources") and a request that differs from its limit ("must
be equal to ... limit of ...").  A limit alone is fine: defaulting copies it
into the request.
"""

from __future__ import annotations

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.k8s.resources import is_extended_resource
from kubelint_ml.templates import _fixes
from kubelint_ml.templates._common import QuantityField, container_quantity, show

UNIT = "podTemplate"
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}


def _judged(f: QuantityField | None) -> bool:
    """A value this rule may compare: parsed, whole, non-negative, not a placeholder."""
    return (
        f is not None
        and f.parsed is not None
        and not f.placeholder
        and not f.empty
        and f.parsed.value.numerator >= 0  # (the sign of a Fraction)
        and f.parsed.value.denominator == 1
    )


def check(unit: Unit, params: dict, ctx) -> list[Hit]:
    out: list[Hit] = []
    tpl = unit.tpl
    # container path -> resource -> part -> field; only containers that request an extended resource
    # (a limit alone is fine), so a pod of many containers costs a dict lookup each
    groups: dict[tuple, dict[str, dict[str, QuantityField]]] = {}
    for c in tpl.all_containers:
        requests = c.resources.get("requests")
        if not isinstance(requests, dict) or not requests:
            continue
        for name in requests:
            resource = str(name)
            if not is_extended_resource(resource):
                continue
            parts = groups.setdefault(c.path, {}).setdefault(resource, {})
            for part in ("requests", "limits"):
                found = container_quantity(c, part, name)
                if found is not None:
                    parts[part] = found
    for by_resource in groups.values():
        for resource in sorted(by_resource):
            parts = by_resource[resource]
            req, lim = parts.get("requests"), parts.get("limits")
            if req is None or not _judged(req):
                continue
            c = req.container
            amount = show(resource, req.parsed.value)
            if lim is None:
                out.append(
                    Hit(
                        c.path + ("resources", "limits", resource),
                        f"{c.describe()} requests {amount} {resource} without a limit (API server rejects it)",
                        detail=f"{tpl.describe()}: {c.describe()} requests {amount} {resource} but sets no limit for it; "
                        f'the API server rejects the pod ("Limit must be set for non overcommitable resources"). '
                        f"Set limits.{resource}: {amount} (the request may then be dropped: it defaults to the limit)",
                        container=c.name,
                        fix=_fixes.accelerator_limit(c, resource, req.raw),
                    )
                )
            elif _judged(lim) and lim.parsed.value != req.parsed.value:
                limit = show(resource, lim.parsed.value)
                out.append(
                    Hit(
                        req.path,
                        f"{c.describe()} {resource} request {amount} != limit {limit} (API server rejects it)",
                        detail=f"{tpl.describe()}: {c.describe()} requests {amount} {resource} but limits it to {limit}; "
                        f'the API server rejects the pod ("must be equal to {resource} limit of {limit}"). '
                        f"Make the request equal to the limit, or drop the request (it defaults to the limit)",
                        container=c.name,
                        at_value=True,
                    )
                )
    return out
