"""Shared helpers of the accelerator rules: where a pod template can land.

``resolve_node_type`` answers with the *smallest* node type a pod's hard
node constraints allow.  A share check needs every candidate: a selector
such as ``cloud.google.com/gke-accelerator: nvidia-l4`` allows machine
types from one to eight GPUs, and the scheduler (or the autoscaler) puts
the pod on one that fits.  A finding must hold on every candidate the pod
fits, so the candidates are listed here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubelint_ml.k8s import nodes
from kubelint_ml.k8s.nodes import NodePool, NodeType, pools_for_pod, resolve_node_type
from kubelint_ml.workloads import PodTemplate

# Accelerator resources that are slices or shares of a node's GPUs: how many
# of them a node offers depends on its MIG layout or time-slicing config.
SLICE_PREFIXES = ("nvidia.com/mig-", "nvidia.com/gpu.shared")


@dataclass(frozen=True, slots=True)
class Placement:
    """The node types a pod template may land on (smallest first) and how
    they were found."""

    nodes: tuple[NodeType, ...]
    how: str  # "nodeSelector node.kubernetes.io/instance-type=p4d.24xlarge", "profile pool a100"
    source: str  # "catalog" | "profile"


def pools_of(ctx: Any) -> Sequence[NodePool]:
    profile = getattr(ctx, "profile", None)
    return tuple(getattr(profile, "node_pools", None) or ())


def _selector_text(how: str) -> str:
    """``how`` without the resolver's choice of the smallest candidate."""
    return how.split(" -> ", 1)[0].split(" (smallest of ", 1)[0]


def _catalog_candidates(spec: Mapping[str, Any]) -> list[NodeType]:
    terms = nodes._pod_terms(spec)  # noqa: SLF001 - the resolver's own reading of the constraints
    found: dict[str, NodeType] = {}
    for term in terms or ():
        entries, reason = nodes._resolve_term(term)  # noqa: SLF001
        if reason is not None:
            return []
        for entry in entries:
            found[entry.node.name] = entry.node
    return list(found.values())


def _pool_candidates(spec: Mapping[str, Any], pools: Sequence[NodePool]) -> list[NodeType]:
    out = []
    for pool in pools_for_pod(spec, pools):
        node, _ = resolve_node_type(spec, [pool])
        if node is not None and node.source == "profile":
            out.append(node)
    return out


def _pinned_pools(spec: Mapping[str, Any], pools: Sequence[NodePool]) -> list[NodeType]:
    """Profile pools with GPUs that the pod's own node constraints select."""
    if not pools or nodes._pod_terms(spec) is None:  # noqa: SLF001
        return []
    out = []
    for pool in pools_for_pod(spec, pools):
        node = nodes._pool_node_type(pool)  # noqa: SLF001
        if node is not None:
            out.append(node)
    return out


def placement(tpl: PodTemplate, ctx: Any) -> tuple[Placement | None, str]:
    """(Placement, how) or (None, why not); cached on the template."""
    found = tpl.cache.get("accel.placement")
    if found is not None:
        return found
    spec = tpl.spec
    pools = pools_of(ctx)
    best, how = resolve_node_type(spec, pools)
    if best is None:
        result: tuple[Placement | None, str] = (None, how)
        # The resolver passes over pools that offer another accelerator than
        # the pod asks for; a pod pinned to such pools never schedules.
        pinned = _pinned_pools(spec, pools)
        if pinned:
            result = (Placement(tuple(pinned), "", "profile"), f"profile pool {pinned[0].name}")
    else:
        if best.source == "profile":
            candidates = _pool_candidates(spec, pools)
            text = f"profile pool {best.name}" if len(candidates) <= 1 else "the profile pools the pod can use"
        else:
            candidates = _catalog_candidates(spec)
            text = _selector_text(how)
        if not candidates or best.name not in {n.name for n in candidates}:
            candidates = [best]
        candidates.sort(key=nodes._size_key)  # noqa: SLF001 - same order as the resolver
        result = (Placement(tuple(candidates), text, best.source), how)
    tpl.cache["accel.placement"] = result
    return result


def is_slice(resource: str) -> bool:
    return resource.startswith(SLICE_PREFIXES)


def devices_label(resource: str) -> str:
    """``GPUs`` for the usual GPU resources, else the resource name."""
    return "GPUs" if resource in ("nvidia.com/gpu", "amd.com/gpu") else resource


def percent(share: Any) -> str:
    """12.5%, 25%, 66.2%."""
    text = f"{float(share) * 100:.1f}".rstrip("0").rstrip(".")
    return f"{text}%"
