"""A memory limit below what the container was seen to use: it will be OOM-killed."""

from __future__ import annotations

from collections.abc import Iterator
from fractions import Fraction

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.templates._common import show
from kubelint_ml.templates._usage import memory_request_limit, observed, over

UNIT = "container"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}


def check(unit: Unit, params: dict, ctx) -> Iterator[Hit]:
    # only runs with a usage source load it
    from kubelint_ml.usage.model import recommended_memory, show_bytes, show_quantity

    found = observed(unit, ctx)
    if found is None:
        return
    cu, mem = found
    _, limit = memory_request_limit(unit)
    if limit is None:
        return  # missing-memory-limit's finding
    c = unit.container
    path = c.path + ("resources", "limits", "memory")
    advice = ""
    if mem is not None:
        _, want = recommended_memory(mem, ctx.usage.headroom)
        advice = f"; set it to {show_quantity(want)} (peak + {ctx.usage.headroom:.0%})"
    if mem is not None and limit < Fraction(mem.max):
        yield Hit(
            path,
            f"{c.describe()}: memory limit {show('memory', limit)} is below the observed peak "
            f"{show_bytes(mem.max)} {over(ctx)}{advice}",
            detail=f"The working set reached {show_bytes(mem.max)} (p99 {show_bytes(mem.p99)}, median "
            f"{show_bytes(mem.median)}, {mem.samples} samples from {cu.pods} pods); with this limit "
            "the kernel OOM-kills the container when it gets there again.",
            data={"peak": mem.max, "limit": float(limit)},
        )
    elif cu.oom_killed:
        yield Hit(
            path,
            f"{c.describe()}: OOM-killed in the last {ctx.usage.lookback_text} with memory limit {show('memory', limit)}"
            + (advice or "; raise the limit"),
            detail="kube-state-metrics reports OOMKilled as the container's last termination in the lookback: "
            "the working set reached the limit between two scrapes.",
            data={"oomKilled": True, "limit": float(limit)},
        )
