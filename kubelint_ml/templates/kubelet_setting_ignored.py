"""OOM-kill settings a kubelet does not use: ``singleProcessOOMKill`` before
1.32 or on non-Linux nodes, ``failCgroupV1`` before 1.31."""

from __future__ import annotations

from collections.abc import Iterator

from kubelint_ml.engine.api import Hit, SkipUnit, Unit
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
                    f"singleProcessOOMKill has no effect off Linux ({nodes.label()})",
                    detail=f"{name} sets singleProcessOOMKill: {_show(spok)} for {nodes.describe()}: the field is used "
                    f"only on Linux (the only allowed value elsewhere is null), so it has no effect. Remove it",
                    at_value=True,
                )
            elif (
                hit := _too_old(
                    name, "singleProcessOOMKill", spok, nodes, SINGLE_PROCESS_MIN, unknown, _old_kill(nodes)
                )
            ) is not None:
                found = True
                yield hit
        if fcg is not None and (hit := _too_old(name, "failCgroupV1", fcg, nodes, FAIL_CGROUP_V1_MIN, unknown)):
            found = True
            yield hit
    if not found and unknown:
        labels = ", ".join(dict.fromkeys(unknown))
        raise SkipUnit(f"no kubelet or Kubernetes version for {labels} in the profile")


def _too_old(
    name: str, key: str, value: object, nodes: Nodes, minimum: tuple[int, int], unknown: list[str], extra: str = ""
) -> Hit | None:
    """The field set for nodes whose kubelet predates it; nodes without a version go to ``unknown``."""
    if nodes.version is None:
        unknown.append(nodes.label())
        return None
    if nodes.version >= minimum:
        return None
    since = f"{minimum[0]}.{minimum[1]}"
    return Hit(
        (key,),
        f"{key} is ignored by kubelets before {since} ({nodes.label()})",
        detail=f"{name} sets {key}: {_show(value)} for {nodes.describe()}, but the field exists only from kubelet "
        f"{since}: {_UNKNOWN_FIELD}{extra}. Upgrade these nodes' kubelet to {since}+, or remove the field",
        at_value=True,
    )


def _show(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)
