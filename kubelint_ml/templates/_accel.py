"""Shared helpers of the accelerator rules: where a pod template can land.

``resolve_node_type`` answers with the *smallest* node type a pod's hard
node constraints allow.  A share check needs every candidate: a selector
such as ``cloud.google.com/gke-accelerator: nvidia-l4`` allows machine
types from one to eight GPUs, and the scheduler (or the autoscaler) puts
the pod on one that fits.  A finding must hold on every candidate the pod
fits, so the candidates are listed here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubelint_ml.engine.api import template_devices
from kubelint_ml.input.workloads import PodTemplate
from kubelint_ml.k8s.nodes import NodePool, NodeType, node_type_candidates, pinned_pool_types
from kubelint_ml.records import Frozen

# Accelerator resources that are slices or shares of a node's GPUs: how many
# of them a node offers depends on its MIG layout or time-slicing config, or on
# the Volcano device plugins' configuration (vGPUs split from each GPU; whole GPUs
# under --gpu-strategy=number), which register these on NVIDIA nodes instead of
# nvidia.com/gpu.
SLICE_PREFIXES = ("nvidia.com/mig-", "nvidia.com/gpu.shared", "volcano.sh/vgpu-number", "volcano.sh/gpu-number")


class Placement(Frozen):
    """The node types a pod template may land on (smallest first) and how
    they were found."""

    nodes: tuple[NodeType, ...]
    how: str  # "nodeSelector node.kubernetes.io/instance-type=p4d.24xlarge", "profile pool a100"
    source: str  # "catalog" | "profile"
    __slots__ = _fields = ("nodes", "how", "source")

    def __init__(self, nodes: tuple[NodeType, ...], how: str, source: str) -> None:
        object.__setattr__(self, "nodes", nodes)
        object.__setattr__(self, "how", how)
        object.__setattr__(self, "source", source)


def pools_of(ctx: Any) -> Sequence[NodePool]:
    profile = getattr(ctx, "profile", None)
    return tuple(getattr(profile, "node_pools", None) or ())


def placement(tpl: PodTemplate, ctx: Any) -> tuple[Placement | None, str]:
    """(Placement, how) or (None, why not); cached on the template.

    Every candidate is kept: a selector such as ``gke-accelerator: nvidia-l4``
    allows machine types from one to eight GPUs.
    """
    found = tpl.cache.get("accel.placement")
    if found is not None:
        return found
    spec = tpl.spec
    pools = pools_of(ctx)
    devices = template_devices(tpl) if pools else None
    cands, how = node_type_candidates(spec, pools, devices.counts if devices is not None else ())
    if cands is None:
        result: tuple[Placement | None, str] = (None, how)
        pinned = pinned_pool_types(spec, pools)
        if pinned:
            result = (Placement(tuple(pinned), "", "profile"), f"profile pool {pinned[0].name}")
    else:
        result = (Placement(cands.nodes, how, cands.source), how)
    tpl.cache["accel.placement"] = result
    return result


def is_slice(resource: str) -> bool:
    return resource.startswith(SLICE_PREFIXES)


def devices_label(resource: str) -> str:
    """``GPUs`` for the usual GPU resources, else the resource name."""
    return "GPUs" if resource in ("nvidia.com/gpu", "amd.com/gpu") else resource


def count_text(n: Any) -> str:
    """A number of devices: 3, or 7.86 where claimed MIG partitions make a fraction of a GPU."""
    if n == int(n):
        return str(int(n))
    return f"{float(n):.2f}".rstrip("0").rstrip(".")


def percent(share: Any) -> str:
    """12.5%, 25%, 66.2%."""
    text = f"{float(share) * 100:.1f}".rstrip("0").rstrip(".")
    return f"{text}%"
