"""A pod with a disk emptyDir for which the scheduler reserves no local storage."""

from __future__ import annotations

from fractions import Fraction

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.templates import _fixes
from kubelint_ml.templates._common import resources_unknown
from kubelint_ml.templates._volumes import DISK, empty_dirs, names, requests_ephemeral_storage, size

UNIT = "podTemplate"
DEFAULTS: dict = {}
PARAMS = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "fixSizeLimit": _fixes.DISK_SIZE_PARAM,
    },
}


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    tpl = unit.tpl
    disk = [e for e in empty_dirs(tpl) if e.medium == DISK and e.mounts]
    if not disk or resources_unknown(tpl):
        return None
    if any(requests_ephemeral_storage(c) for c in tpl.all_containers):
        return None
    # Point at the first app container that mounts one (else the first mounting container).
    mounting = [m.container for e in disk for m in e.mounts]
    target = next((c for c in mounting if c.role == "container"), mounting[0])
    sized = [e for e in disk if e.size_limit is not None]
    total = sum((e.size_limit or 0 for e in sized), Fraction(0))
    vols = names([e.name for e in disk])
    noun = "volumes" if len(disk) > 1 else "volume"
    if sized:
        detail = (
            f"the scheduler never looks at sizeLimit ({size(total)} in all), so the pod can land on a node "
            f"without that much free disk and be evicted when the node runs short"
        )
        fix = f"set resources.requests.ephemeral-storage on {target.describe()} (at least {size(total)})"
    else:
        detail = (
            "the scheduler reserves no local disk for it, so the pod can land on a node without the space it "
            "needs and be evicted when the node runs short"
        )
        fix = f"set resources.requests.ephemeral-storage on {target.describe()} to what the emptyDirs will hold"
    return [
        Hit(
            target.path + ("resources", "requests", "ephemeral-storage"),
            f"{target.describe()} requests no ephemeral-storage for disk emptyDir {vols}"
            + (f" (sizeLimits {size(total)})" if sized else ""),
            detail=f"{tpl.describe()}: disk emptyDir {noun} {vols} but no container requests ephemeral-storage: {detail}; {fix}",
            container=target.name,
            fix=_fixes.ephemeral_request(target, total, len(disk) - len(sized), params),
        )
    ]
