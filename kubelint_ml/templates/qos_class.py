"""The pod template's QoS class, computed as the kubelet computes it."""

from __future__ import annotations

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.k8s.resources import qos_class
from kubelint_ml.templates import _fixes
from kubelint_ml.templates._cluster import admitted_pod_spec, applied_defaults
from kubelint_ml.templates._common import accelerator_note, gates, resources_unknown

UNIT = "podTemplate"
DEFAULTS = {"classes": ["BestEffort"]}
PARAMS = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "classes": {
            "type": "array",
            "minItems": 1,
            "items": {"enum": ["BestEffort", "Burstable", "Guaranteed"]},
            "description": "QoS classes that produce a finding.",
        },
        "fixHeadroom": _fixes.HEADROOM_PARAM,
    },
}


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    tpl = unit.tpl
    if resources_unknown(tpl):
        return None
    enabled, qos_fix, defaulting = gates(tpl)
    qos = qos_class(
        tpl.spec, pod_level_enabled=enabled, pod_level_qos_fix=qos_fix, pod_level_limit_defaulting=defaulting
    )
    if qos not in params["classes"]:
        return None
    applied = applied_defaults(tpl, ctx)
    if applied:  # the namespace's LimitRange defaults, in as the pods are created
        admitted_qos = qos_class(
            admitted_pod_spec(tpl, ctx),
            pod_level_enabled=enabled,
            pod_level_qos_fix=qos_fix,
            pod_level_limit_defaulting=defaulting,
        )
        if admitted_qos != qos:
            ctx.note(
                f"{tpl.obj.file}: {tpl.describe()}: QoS class {admitted_qos} once admitted: "
                + "; ".join(f"{a.container}: {a.describe()}" for a in applied)
            )
            qos = admitted_qos
            if qos not in params["classes"]:
                return None
    detail = None
    if qos == "BestEffort":
        accel = ""
        names = sorted(
            {
                str(k)
                for c in tpl.all_containers
                for part in ("requests", "limits")
                for k in (c.resources.get(part) or {})
                if isinstance(c.resources.get(part), dict)
            }
        )
        if names:
            accel = f" (it sets only {', '.join(names)}, which do not count for QoS)"
        message = f"BestEffort QoS: no cpu or memory requests or limits{accelerator_note(tpl)}"
        detail = (
            f"{tpl.describe()} is BestEffort: no container requests or limits cpu or memory{accel}; "
            "its pods are the first evicted and OOM-killed under node memory pressure. "
            "Set resources.requests and resources.limits for memory (and cpu)"
        )
    else:
        message = f"QoS class {qos}"
        detail = f"{tpl.describe()} has QoS class {qos}"
    return [
        Hit(
            tpl.spec_path,
            message,
            detail=detail,
            fix=_fixes.pod_memory(tpl, ctx, params) if qos == "BestEffort" and _fixes.wanted(ctx) else None,
        )
    ]
