"""An accelerator pod whose node type neither the profile nor the built-in
catalog resolves: the share checks cannot run for it."""

from __future__ import annotations

from collections.abc import Iterator

from kubelint_ml.engine.api import Hit, SkipUnit, Unit
from kubelint_ml.k8s.nodes import catalog
from kubelint_ml.templates._accel import placement
from kubelint_ml.templates._common import accelerators

UNIT = "podTemplate"
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}


def _where(tpl) -> tuple:
    """The node selection that did not resolve, or where a nodeSelector would go."""
    spec = tpl.spec
    if isinstance(spec.get("nodeSelector"), dict) and spec["nodeSelector"]:
        return tpl.spec_path + ("nodeSelector",)
    affinity = spec.get("affinity")
    if isinstance(affinity, dict) and isinstance(affinity.get("nodeAffinity"), dict):
        return tpl.spec_path + ("affinity", "nodeAffinity")
    return tpl.spec_path + ("nodeSelector",)


def check(unit: Unit, params: dict, ctx) -> Iterator[Hit]:
    tpl = unit.tpl
    accel = accelerators(tpl)
    if not accel:
        raise SkipUnit("DRA resource claims only: the share check does not judge them, wherever the pod runs")
    place, why = placement(tpl, ctx)
    if place is not None:
        return
    devices = ", ".join(f"{n} {r}" for r, n in accel.items())
    in_catalog = {n.gpu_resource for n in catalog().values()}
    if accel and all(r not in in_catalog for r in accel):
        first = next(iter(accel))
        advice = (f"The built-in catalog has no node type offering {first}: describe the node pool (labels, gpus, "
                  f"gpuResource: {first}, memory, cpu) under profile.nodePools in the config")
    else:
        advice = ("Pin the node type (e.g. nodeSelector node.kubernetes.io/instance-type) or describe the node "
                  "pool under profile.nodePools in the config")
    yield Hit(
        _where(tpl),
        f"node type unknown for {devices}: GPU-share checks skipped",
        detail=f"{tpl.describe()}: accelerator pod ({devices}) on a node type that cannot be resolved: {why}; "
        f"the GPU-share checks did not run. {advice}",
    )
