"""A memory request far above what the container uses: memory (and the GPUs beside it) idle."""

from __future__ import annotations

import math
from fractions import Fraction

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.k8s.dra import ANY_GPU
from kubelint_ml.k8s.resources import effective_pod_request, is_accelerator_resource
from kubelint_ml.templates._accel import count_text, placement
from kubelint_ml.templates._common import accelerators, gates, param_fraction, show
from kubelint_ml.templates._usage import PERCENTILES, memory_request_limit, observed, over, request_path

UNIT = "container"
DEFAULTS = {"factor": 2.0, "percentile": "median"}
PARAMS = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "factor": {"type": "number", "exclusiveMinimum": 1},
        "percentile": {"enum": PERCENTILES},
    },
}


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    # only runs with a usage source load it
    from kubelint_ml.usage.model import recommended_memory, show_bytes, show_quantity

    found = observed(unit, ctx)
    if found is None or found[1] is None:
        return None
    mem = found[1]
    request, _ = memory_request_limit(unit)
    pct = params["percentile"]
    used = Fraction(mem.at(pct))
    factor = param_fraction(params["factor"])
    if request is None or used <= 0 or request <= used * factor:
        return None
    c, tpl = unit.container, unit.tpl
    want, _ = recommended_memory(mem, ctx.usage.headroom)
    ratio = float(request / used)
    message = (
        f"{c.describe()}: memory request {show('memory', request)} is {ratio:.1f}x the observed {pct} "
        f"{show_bytes(float(used))} {over(ctx)} (above {float(factor):g}x); request {show_quantity(want)}"
    )
    idle = _idle_gpus(tpl, ctx, request, Fraction(want))
    if idle:
        message += f"; {idle}"
    return [
        Hit(
            request_path(unit),
            message,
            detail="The scheduler reserves the request whether or not it is used: what is reserved and unused "
            "keeps other pods (and the accelerators beside the memory) off the node.",
            data={"ratio": round(ratio, 3), "percentile": pct, "observed": float(used)},
        )
    ]


def _idle_gpus(tpl, ctx, request: Fraction, wanted: Fraction) -> str:
    """What the request costs in GPUs on the node type, when it is known: how many such pods fit
    by memory, against how many the node's GPUs would hold."""
    gpus = sum(n for r, n in accelerators(tpl).items() if is_accelerator_resource(r) or r == ANY_GPU)
    if gpus <= 0:
        return ""
    place, _ = placement(tpl, ctx)
    if place is None or not place.nodes:
        return ""
    node = place.nodes[0]
    if not node.gpus or not node.memory:
        return ""
    pod = effective_pod_request(tpl.spec, "memory", pod_level_enabled=gates(tpl)[0])
    if pod <= 0:
        return ""
    by_gpu = node.gpus // gpus
    fit = min(by_gpu, math.floor(node.memory / pod))
    sized = pod - request + wanted
    fit_sized = min(by_gpu, math.floor(node.memory / sized)) if sized > 0 else by_gpu
    idle = node.gpus - fit * gpus
    if fit >= by_gpu or idle <= 0:
        return ""
    pods = f"{fit} such pod{'s' if fit != 1 else ''} fit{'s' if fit == 1 else ''}"
    return (
        f"on a {node.name} only {pods} by memory: {count_text(idle)} of {node.gpus} GPUs idle "
        f"({fit_sized} at the recommended request)"
    )
