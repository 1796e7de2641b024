"""A limit far above the request: Burstable, and first in line for eviction."""

from __future__ import annotations

from fractions import Fraction

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.templates._common import param_fraction, requests_limits, resources_unknown, show

UNIT = "container"
_MAX_SHOWN = Fraction(10**15)
DEFAULTS = {"resource": "memory", "ratio": 2.0}
PARAMS = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "resource": {"type": "string"},
        "ratio": {"type": "number", "exclusiveMinimum": 1},
    },
}


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    tpl, c = unit.tpl, unit.container
    if resources_unknown(tpl):
        return None
    resource = params["resource"]
    ratio = param_fraction(params["ratio"])
    requests, limits = requests_limits(c)
    lim, req = limits.get(resource), requests.get(resource)
    if req is None:
        req = lim  # SetDefaults_Pod: a missing request takes its limit (defaulted_requests)
    if lim is None or req is None or req.numerator <= 0:
        return None
    # lim <= req * ratio, as Fraction compares them, in integers (each denominator is positive)
    if lim.numerator * req.denominator * ratio.denominator <= req.numerator * ratio.numerator * lim.denominator:
        return None
    actual = lim / req
    # Quantities reach 10^1000: cap before converting to float.
    shown = float(min(actual, _MAX_SHOWN))
    return [
        Hit(
            c.path + ("resources", "limits", resource),
            f"{c.describe()} {resource} limit {show(resource, lim)} is {shown:.1f}x its request {show(resource, req)}",
            detail=f"{tpl.describe()}: {c.describe()} limits {resource} to {show(resource, lim)} but requests only "
            f"{show(resource, req)} ({shown:.1f}x, above {float(ratio):g}x): the node reserves the request, "
            f"so under memory pressure this pod is among the first evicted. Raise the request closer to the limit",
            data={"ratio": round(shown, 3)},
        )
    ]
