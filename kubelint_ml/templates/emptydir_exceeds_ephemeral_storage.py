"""Disk emptyDir sizeLimits the pod can never reach: above its ephemeral-storage
limits, or above its share of the node's local storage."""

from __future__ import annotations

from fractions import Fraction

from kubelint_ml.engine.api import Hit, SkipUnit, Unit
from kubelint_ml.k8s.nodes import resolve_node_type
from kubelint_ml.templates._accel import count_text
from kubelint_ml.templates._common import accelerators, counts_on, resources_unknown
from kubelint_ml.templates._volumes import DISK, EmptyDir, empty_dirs, pod_ephemeral_storage_limit, size

UNIT = "podTemplate"
DEFAULTS = {"nodeShare": True}
PARAMS = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "nodeShare": {
            "type": "boolean",
            "description": "Compare with the pod's GPU share of the node's local storage (true) "
            "or with the whole node's local storage (false).",
        },
    },
}


def _listing(sized: list[EmptyDir], total: Fraction) -> str:
    if len(sized) == 1:
        return f"disk emptyDir '{sized[0].name}' has sizeLimit {size(total)}"
    parts = ", ".join(f"'{e.name}' {size(e.size_limit)}" for e in sized)
    return f"disk emptyDir sizeLimits add up to {size(total)} ({parts})"


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    tpl = unit.tpl
    sized = [e for e in empty_dirs(tpl) if e.medium == DISK and e.size_limit is not None and e.mounts]
    if not sized or resources_unknown(tpl):
        return None
    total = sum((e.size_limit or 0 for e in sized), Fraction(0))
    largest = max(sized, key=lambda e: e.size_limit or 0)
    listing = _listing(sized, total)
    hits: list[Hit] = []

    limit = pod_ephemeral_storage_limit(tpl)
    if limit is not None and total > limit:
        hits.append(
            Hit(
                largest.size_path,
                f"emptyDir sizeLimits {size(total)} exceed the ephemeral-storage limits {size(limit)}",
                detail=f"{tpl.describe()}: {listing}, but the containers' ephemeral-storage limits add up to {size(limit)}: "
                f"the kubelet evicts the pod once its local storage (disk emptyDirs, writable layers and logs together) "
                f"passes {size(limit)}, so the sizeLimit can never be reached. Raise the containers' "
                f"limits.ephemeral-storage to cover the emptyDirs plus their own writes, or lower sizeLimit",
                at_value=True,
            )
        )

    pools = ctx.profile.node_pools if ctx is not None and ctx.profile is not None else ()
    node, how = resolve_node_type(tpl.spec, pools)
    storage = node.ephemeral_storage if node is not None else None
    if storage is not None and storage > 0:
        gpus = counts_on(tpl, accelerators(tpl), node.gpu_resource, node.gpus, node.gpu_model).get(node.gpu_resource, 0)
        share, whose = storage, f"the node's local storage ({node.name}: {size(storage)})"
        if params["nodeShare"] and 0 < gpus < node.gpus:
            share = storage * gpus / node.gpus
            whose = (
                f"its share of the node's local storage: it uses {count_text(gpus)} of {node.gpus} GPUs of "
                f"{node.name}, and {count_text(gpus)}/{node.gpus} of {size(storage)} is {size(share)}"
            )
        if total > share:
            consequence = (
                "the node's disk fills before the sizeLimit is reached and the kubelet evicts pods under disk pressure"
                if total > storage
                else "pods on the node's other GPUs get less than their share, or the node runs short of disk"
            )
            hits.append(
                Hit(
                    largest.size_path,
                    f"emptyDir sizeLimits {size(total)} exceed {'the' if share == storage else 'its GPU share of the'} "
                    f"node's {size(share)} local storage ({node.name})",
                    detail=f"{tpl.describe()}: {listing}, more than {whose} (node type from {how}): {consequence}. Lower "
                    f"sizeLimit, or use a PersistentVolume or a larger node for the data",
                    at_value=True,
                )
            )
    elif not hits and limit is None:
        why = how if node is None else f"{node.name} has no known local storage size"
        raise SkipUnit(f"no container limits ephemeral-storage and the node type is unknown ({why})")
    return hits
