"""GPU memory that is never used: a smaller MIG profile or fewer GPUs would do."""

from __future__ import annotations

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.k8s.resources import is_accelerator_resource
from kubelint_ml.templates._common import requests_limits
from kubelint_ml.templates._usage import observed, over

UNIT = "container"
DEFAULTS = {"fraction": 0.5}
PARAMS = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"fraction": {"type": "number", "exclusiveMinimum": 0, "maximum": 1}},
}


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    # only runs with a usage source load it
    from kubelint_ml.usage.model import show_bytes

    found = observed(unit, ctx)
    if found is None:
        return None
    cu = found[0]
    g = cu.gpu
    if g is None or g.samples < ctx.usage.min_samples or g.device_memory <= 0:
        return None
    _, limits = requests_limits(unit.container)
    resource = next((r for r in sorted(limits) if is_accelerator_resource(r) and limits[r] > 0), None)
    if resource is None:
        return None
    fraction = params["fraction"]
    share = g.peak / g.device_memory
    if share >= fraction:
        return None
    c = unit.container
    return [
        Hit(
            c.path + ("resources", "limits", resource),
            f"{c.describe()}: GPU memory peaked at {show_bytes(g.peak)} of {show_bytes(g.device_memory)} "
            f"({share:.0%}) on every device {over(ctx)} (below {fraction:.0%}); a smaller MIG profile or fewer "
            "GPUs would do",
            detail=f"DCGM's framebuffer use, per device, over {g.devices} device series and {g.samples} samples: "
            "no device ever held more than this.",
            data={"peak": g.peak, "deviceMemory": g.device_memory, "share": round(share, 4)},
        )
    ]
