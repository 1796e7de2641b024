"""``singleProcessOOMKill: false`` on cgroup v1 nodes: the kubelet refuses to start."""

from __future__ import annotations

from collections.abc import Iterator

from kubelint_ml.engine.api import Hit, SkipUnit, Unit
from kubelint_ml.templates._kubelet import SINGLE_PROCESS_MIN, cgroup_v1_nodes, config_name

UNIT = "object"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}


def check(unit: Unit, params: dict, ctx) -> Iterator[Hit]:
    obj = unit.obj
    if obj.data.get("singleProcessOOMKill") is not False:
        return
    v1, unknown = cgroup_v1_nodes(obj, ctx)
    found = False
    for nodes in v1:
        # An older kubelet does not know the field (oom-kill-setting-ignored).
        if nodes.version is not None and nodes.version < SINGLE_PROCESS_MIN:
            continue
        found = True
        yield Hit(
            ("singleProcessOOMKill",),
            f"singleProcessOOMKill: false stops the kubelet on cgroup v1 ({nodes.label()})",
            detail=f"{config_name(obj)} sets singleProcessOOMKill: false for {nodes.describe()}: on cgroup v1 the "
            'kubelet refuses to start with it ("must not be explicitly set to false when using cgroup v1"). '
            "Remove the field (cgroup v1 always kills a single process), or move these nodes to cgroup v2",
            at_value=True,
        )
    if not found and unknown:
        raise SkipUnit(f"no cgroup version for {', '.join(n.label() for n in unknown)} in the profile")
