"""A memory request below the container's median use: first in line for eviction."""

from __future__ import annotations

from fractions import Fraction

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.templates._common import show
from kubelint_ml.templates._usage import memory_request_limit, observed, over, request_path

UNIT = "container"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    # only runs with a usage source load it
    from kubelint_ml.usage.model import recommended_memory, show_bytes, show_quantity

    found = observed(unit, ctx)
    if found is None or found[1] is None:
        return None
    mem = found[1]
    request, _ = memory_request_limit(unit)
    if request is None or request >= Fraction(mem.median):
        return None  # no request at all is missing-memory-request's finding
    c = unit.container
    want, _ = recommended_memory(mem, ctx.usage.headroom)
    return [
        Hit(
            request_path(unit),
            f"{c.describe()}: memory request {show('memory', request)} is below the observed median "
            f"{show_bytes(mem.median)} {over(ctx)}; request {show_quantity(want)}",
            detail="Most of the time the container uses more than the node reserved for it: under memory "
            "pressure the kubelet evicts pods by how far their usage exceeds their request, so this "
            "one goes first.",
            data={"median": mem.median, "request": float(request)},
        )
    ]
