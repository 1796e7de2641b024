"""OOM-kill settings a kubelet does not use: ``singleProcessOOMKill`` before
1.32 or on non-Linux nodes, ``failCgroupV1`` before 1.31."""

from __future__ import annotations

from typing import Iterator

from kubelint_ml.engine import Hit, SkipUnit, Unit
from kubelint_ml.templates._kubelet import (
    FAIL_CGROUP_V1_MIN,
    GROUP_KILL_MIN,
    SINGLE_PROCESS_MIN,
    Nodes,
    at_least,
    config_name,
    nodes_for_config,
)

UNIT = "object"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}

_UNKNOWN_FIELD = (
    "the kubelet's strict decoding fails on the unknown field, it falls back to lenient decoding, logs it and "
    "ignores the setting"
)


def _old_kill(nodes: Nodes) -> str:
    if nodes.cgroup == 2 and at_least(nodes.version, GROUP_KILL_MIN):
        return "; containers keep group OOM kill (memory.oom.group)"
    return ""


def check(unit: Unit, params: dict, ctx) -> Iterator[Hit]:
    obj = unit.obj
    data = obj.data
    spok, fcg = data.get("singleProcessOOMKill"), data.get("failCgroupV1")
    if spok is None and fcg is None:
        return
    name = config_name(obj)
    unknown: list[str] = []
    found = False
    for nodes in nodes_for_config(obj, ctx):
        if spok is not None:
            if nodes.os is not None and not nodes.linux:
                found = True
                yield Hit(
                    ("singleProcessOOMKill",),
                    f"{name} sets singleProcessOOMKill: {_show(spok)} for {nodes.describe()}: the field is used "
                    f"only on Linux (the only allowed value elsewhere is null), so it has no effect. Remove it",
                    at_value=True,
                )
            elif nodes.version is None:
                unknown.append(nodes.label())
            elif nodes.version < SINGLE_PROCESS_MIN:
                found = True
                yield Hit(
                    ("singleProcessOOMKill",),
                    f"{name} sets singleProcessOOMKill: {_show(spok)} for {nodes.describe()}, but the field "
                    f"exists only from kubelet 1.32: {_UNKNOWN_FIELD}{_old_kill(nodes)}. Upgrade these nodes' "
                    "kubelet to 1.32+, or remove the field",
                    at_value=True,
                )
        if fcg is not None:
            if nodes.version is None:
                unknown.append(nodes.label())
            elif nodes.version < FAIL_CGROUP_V1_MIN:
                found = True
                yield Hit(
                    ("failCgroupV1",),
                    f"{name} sets failCgroupV1: {_show(fcg)} for {nodes.describe()}, but the field exists only "
                    f"from kubelet 1.31: {_UNKNOWN_FIELD}. Upgrade these nodes' kubelet to 1.31+, or remove "
                    "the field",
                    at_value=True,
                )
    if not found and unknown:
        labels = ", ".join(dict.fromkeys(unknown))
        raise SkipUnit(f"no kubelet or Kubernetes version for {labels} in the profile")


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)
