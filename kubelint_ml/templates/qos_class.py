"""The pod template's QoS class, computed as the kubelet computes it."""

from __future__ import annotations

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.k8s.gates import of as gates_of
from kubelint_ml.k8s.resources import pod_level_resources, qos_class
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
    raw = tpl.spec.get("resources")
    if (
        qos == "BestEffort"
        and enabled
        and not qos_fix
        and isinstance(raw, dict)
        and pod_level_resources(tpl.spec) is None
    ):
        # An empty spec.resources decides the class before PodLevelResourcesFixKubeletQOSClass (1.36).
        containers_qos = qos_class(tpl.spec, pod_level_enabled=False)
        if containers_qos != "BestEffort":
            return [
                Hit(
                    tpl.spec_path + ("resources",),
                    "BestEffort QoS: the empty spec.resources decides it "
                    + (
                        "with PodLevelResourcesFixKubeletQOSClass off"
                        if "PodLevelResourcesFixKubeletQOSClass" in gates_of(ctx)[1]
                        else "before Kubernetes 1.36"
                    )
                    + accelerator_note(tpl),
                    detail=(
                        f"{tpl.describe()} has spec.resources with no cpu, memory or hugepages value; before 1.36 "
                        "(PodLevelResourcesFixKubeletQOSClass off) such a block decides the pod's QoS class, "
                        f"BestEffort, though its containers make it {containers_qos} (k/k issue 135082): its pods "
                        "are the first evicted and OOM-killed under node memory pressure. Remove the empty "
                        "spec.resources, or give it cpu and memory"
                    ),
                )
            ]
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
