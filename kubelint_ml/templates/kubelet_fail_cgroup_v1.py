"""``failCgroupV1`` on cgroup v1 nodes: true, or unset from kubelet 1.35 (where
it defaults to true), makes the kubelet refuse to start."""

from __future__ import annotations

from collections.abc import Iterator

from kubelint_ml.engine.api import Hit, SkipUnit, Unit
from kubelint_ml.templates._kubelet import (
    FAIL_CGROUP_V1_DEFAULT_TRUE,
    FAIL_CGROUP_V1_MIN,
    cgroup_v1_nodes,
    config_name,
)

UNIT = "object"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}


def check(unit: Unit, params: dict, ctx) -> Iterator[Hit]:
    obj = unit.obj
    value = obj.data.get("failCgroupV1")
    if value is False:
        return
    v1, no_cgroup = cgroup_v1_nodes(obj, ctx)
    unknown = [f"no cgroup version for {n.label()}" for n in no_cgroup]
    found = False
    for nodes in v1:
        if value is True:
            # An older kubelet does not know the field (oom-kill-setting-ignored).
            if nodes.version is not None and nodes.version < FAIL_CGROUP_V1_MIN:
                continue
            found = True
            yield Hit(
                ("failCgroupV1",),
                f"failCgroupV1: true stops the kubelet on cgroup v1 ({nodes.label()})",
                detail=f"{config_name(obj)} sets failCgroupV1: true for {nodes.describe()}: the kubelet refuses to "
                "start on a cgroup v1 host. Set failCgroupV1: false for these nodes, or move them to cgroup v2",
                at_value=True,
            )
        elif value is None:
            if nodes.version is None:
                unknown.append(f"no kubelet or Kubernetes version for {nodes.label()}")
                continue
            if nodes.version < FAIL_CGROUP_V1_DEFAULT_TRUE:
                continue
            found = True
            written = "sets failCgroupV1: null" if "failCgroupV1" in obj.data else "does not set failCgroupV1"
            yield Hit(
                ("failCgroupV1",),
                f"failCgroupV1 unset is true from kubelet 1.35: it stops on cgroup v1 ({nodes.label()})",
                detail=f"{config_name(obj)} {written}, which defaults to true from kubelet 1.35: on "
                f"{nodes.describe()} the kubelet refuses to start. Set failCgroupV1: false explicitly to keep "
                "these nodes on cgroup v1 (deprecated), or move them to cgroup v2",
            )
    if not found and unknown:
        raise SkipUnit("; ".join(unknown) + " in the profile")
