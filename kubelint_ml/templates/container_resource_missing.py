"""A container without a request or limit for a resource."""

from __future__ import annotations

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.templates import _fixes
from kubelint_ml.templates._cluster import default_for
from kubelint_ml.templates._common import (
    LIMITRANGE_NOTE,
    accelerator_note,
    pod_level,
    requests_limits,
    resources_unknown,
)

UNIT = "container"
DEFAULTS = {"resource": "memory", "missing": "limit"}
PARAMS = {
    "type": "object",
    "additionalProperties": False,
    "required": ["resource", "missing"],
    "properties": {
        "resource": {"type": "string", "minLength": 1},
        "missing": {
            "enum": ["limit", "request", "requestAndLimit"],
            "description": "limit: no limit; request: no request (after defaulting from the limit); "
            "requestAndLimit: neither a request nor a limit.",
        },
        "fixHeadroom": _fixes.HEADROOM_PARAM,
    },
}


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    tpl, c = unit.tpl, unit.container
    if resources_unknown(tpl):
        return None
    resource, missing = params["resource"], params["missing"]
    requests, limits = requests_limits(c)
    pod = pod_level(tpl)
    pod_requests, pod_limits = pod if pod else ({}, {})
    if missing == "limit":
        if resource in limits or resource in pod_limits:
            return None
        what = f"no {resource} limit"
        fix = f"set resources.limits.{resource}"
        consequence = (
            "it can use all of the node's memory and is OOM-killed or evicted unpredictably"
            if resource == "memory"
            else "its use is unbounded"
        )
    elif missing == "request":
        if resource in requests or resource in limits or resource in pod_requests:
            return None
        what = f"no {resource} request"
        fix = f"set resources.requests.{resource}"
        consequence = "the scheduler reserves nothing for it"
    else:
        if resource in requests or resource in limits or resource in pod_requests or resource in pod_limits:
            return None
        what = f"neither a {resource} request nor a {resource} limit"
        fix = f"set resources.requests.{resource} (and a limit)"
        consequence = "the scheduler reserves nothing for it"
    applied = default_for(tpl, c, ctx, "limits" if missing == "limit" else "requests", resource)
    if applied is None and missing == "requestAndLimit":
        applied = default_for(tpl, c, ctx, "limits", resource)
    if applied is not None:  # LimitRanger fills it in when the pod is created
        ctx.note(f"{tpl.obj.file}: {tpl.describe()}: {c.describe()}: {applied.describe()}")
        return None
    return [
        Hit(
            c.path + ("resources", "limits" if missing == "limit" else "requests", resource),
            f"{c.describe()} has {'no ' + resource + ' request or limit' if missing == 'requestAndLimit' else what}"
            f"{accelerator_note(tpl)}",
            detail=f"{tpl.describe()}: {c.describe()} has {what} ({LIMITRANGE_NOTE}): {consequence}; {fix}",
            fix=_fixes.container_memory(tpl, c, ctx, params) if resource == "memory" and _fixes.wanted(ctx) else None,
        )
    ]
