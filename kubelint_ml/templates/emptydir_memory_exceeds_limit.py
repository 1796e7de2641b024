"""medium: Memory emptyDirs larger than the memory limit of a container that mounts them."""

from __future__ import annotations

from fractions import Fraction

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.templates._common import resources_unknown
from kubelint_ml.templates._volumes import MEMORY, EmptyDir, empty_dirs, memory_limit, pod_level_memory_limit, size

UNIT = "container"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    """The sizeLimits of the distinct Memory emptyDirs one container mounts,
    added up, against that container's memory limit (or the pod-level
    memory limit when the container has none). Equal is not reported."""
    tpl, c = unit.tpl, unit.container
    mine: list[EmptyDir] = [
        e
        for e in empty_dirs(tpl)
        if e.medium == MEMORY and e.size_limit is not None and any(m.container is c for m in e.mounts)
    ]
    if not mine or resources_unknown(tpl):
        return None
    limit = memory_limit(c)
    whose = "its memory limit"
    if limit is None:
        limit = pod_level_memory_limit(tpl)
        whose = "the pod-level memory limit"
    if limit is None:
        return None  # missing-memory-limit reports it; nothing to compare with
    total = sum((e.size_limit or 0 for e in mine), Fraction(0))
    if total <= limit:
        return None
    largest = max(mine, key=lambda e: e.size_limit or 0)
    if len(mine) == 1:
        what = f"medium: Memory emptyDir '{largest.name}' with sizeLimit {size(total)}"
    else:
        parts = ", ".join(f"'{e.name}' ({size(e.size_limit)})" for e in mine)
        what = f"medium: Memory emptyDirs {parts}, {size(total)} together,"
    return [
        Hit(
            largest.size_path,
            f"{c.describe()} Memory emptyDir sizeLimit {size(total)} exceeds {whose} {size(limit)}",
            detail=f"{tpl.describe()}: {c.describe()} mounts {what} but {whose} is {size(limit)}: pages written to a "
            f"Memory emptyDir count against the writing container's memory limit, so filling it OOM-kills "
            f"{c.describe()} well before the sizeLimit is reached (and the kubelet caps the tmpfs at the pod's "
            f"memory limit anyway). Lower sizeLimit below the memory limit, leaving room for the process "
            f"itself, or raise the limit",
            at_value=True,
        )
    ]
