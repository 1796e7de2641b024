"""A request larger than its limit: the API server rejects the pod."""

from __future__ import annotations

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.k8s.quantity import rational_lt
from kubelint_ml.templates._common import quantity_fields, show

UNIT = "podTemplate"
DEFAULTS = {"resources": ["cpu", "memory", "ephemeral-storage"]}
PARAMS = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"resources": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
}


def check(unit: Unit, params: dict, ctx) -> list[Hit]:
    out: list[Hit] = []
    tpl = unit.tpl
    wanted = set(params["resources"])
    # (container path or pod) -> resource -> {part: field}
    groups: dict[tuple, dict[str, dict]] = {}
    for f in quantity_fields(tpl):
        if f.part == "sizeLimit" or f.resource not in wanted or f.parsed is None:
            continue
        key = f.container.path if f.container else ("pod",)
        groups.setdefault(key, {}).setdefault(f.resource, {})[f.part] = f
    for key in groups:
        for resource in sorted(groups[key]):
            parts = groups[key][resource]
            req, lim = parts.get("requests"), parts.get("limits")
            if req is None or lim is None or not rational_lt(lim.parsed.value, req.parsed.value):
                continue
            out.append(
                Hit(
                    req.path,
                    f"{req.where} {resource} request {show(resource, req.parsed.value)} > limit "
                    f"{show(resource, lim.parsed.value)}",
                    detail=f"{tpl.describe()}: {req.where} requests {show(resource, req.parsed.value)} {resource} "
                    f"but limits it to {show(resource, lim.parsed.value)}; the API server rejects a request above "
                    f"its limit. Lower the request to at most the limit (or raise the limit)",
                    container=req.container.name if req.container else None,
                    at_value=True,
                )
            )
    return out
