"""A disk-backed emptyDir without a sizeLimit."""

from __future__ import annotations

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.templates import _fixes
from kubelint_ml.templates._common import resources_unknown
from kubelint_ml.templates._volumes import DISK, empty_dir_of, pod_ephemeral_storage_limit

UNIT = "volume"
DEFAULTS: dict = {}
PARAMS = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "fixSizeLimit": _fixes.DISK_SIZE_PARAM,
    },
}


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    tpl, v = unit.tpl, unit.volume
    ed = empty_dir_of(tpl, v)
    if ed is None or ed.medium != DISK or ed.size_limit is not None or not ed.mounts:
        return None
    if resources_unknown(tpl):
        return None
    # Any container ephemeral-storage limit makes the kubelet evict the pod
    # once its total local storage (emptyDirs included) passes their sum:
    # the volume is bounded even without a sizeLimit.
    if pod_ephemeral_storage_limit(tpl) is not None:
        return None
    what = "has sizeLimit 0, which sets no limit" if ed.raw_size is not None else "has no sizeLimit"
    return [
        Hit(
            ed.size_path,
            f"disk emptyDir '{ed.name}' {'has sizeLimit 0 (no limit)' if ed.raw_size is not None else 'has no sizeLimit'}"
            " and no ephemeral-storage limit",
            detail=f"{tpl.describe()}: emptyDir volume '{ed.name}' ({ed.describe_mounts()}) is on the node's disk and {what}, "
            f"and no container limits ephemeral-storage: it can grow until the node runs short of disk, and the "
            f"kubelet then evicts this pod or its neighbours. Set emptyDir.sizeLimit to the most it should hold "
            f"(and request that much ephemeral-storage)",
            fix=_fixes.disk_size_limit(v.path, params),
        )
    ]
