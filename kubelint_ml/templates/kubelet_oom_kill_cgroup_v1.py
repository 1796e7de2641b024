"""``singleProcessOOMKill: false`` on cgroup v1 nodes: the kubelet refuses to start."""

from __future__ import annotations

from typing import Iterator

from kubelint_ml.engine import Hit, SkipUnit, Unit
from kubelint_ml.templates._kubelet import SINGLE_PROCESS_MIN, config_name, nodes_for_config

UNIT = "object"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}


def check(unit: Unit, params: dict, ctx) -> Iterator[Hit]:
    obj = unit.obj
    if obj.data.get("singleProcessOOMKill") is not False:
        return
    unknown: list[str] = []
    found = False
    for nodes in nodes_for_config(obj, ctx):
        if not nodes.linux:
            continue
        if nodes.cgroup is None:
            unknown.append(nodes.label())
            continue
        # An older kubelet does not know the field (oom-kill-setting-ignored).
        if nodes.cgroup != 1 or (nodes.version is not None and nodes.version < SINGLE_PROCESS_MIN):
            continue
        found = True
        yield Hit(
            ("singleProcessOOMKill",),
            f"{config_name(obj)} sets singleProcessOOMKill: false for {nodes.describe()}: on cgroup v1 the "
            "kubelet refuses to start with it (\"must not be explicitly set to false when using cgroup v1\"). "
            "Remove the field (cgroup v1 always kills a single process), or move these nodes to cgroup v2",
            at_value=True,
        )
    if not found and unknown:
        raise SkipUnit(f"no cgroup version for {', '.join(unknown)} in the profile")
