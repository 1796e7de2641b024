"""The providers' documented reservation formulas, which the GPU catalog's numbers follow.

The catalog (kubelint_ml/data/gpu-catalog.yaml) records allocatable memory and
cpu per node type; for providers that publish only RAM, those numbers were
produced by these formulas, and tests/test_nodes.py checks every row against
them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction


def _tiered(total: Fraction, tiers: Sequence[tuple[Fraction | None, Fraction]]) -> Fraction:
    """Sum of rate x amount over consecutive tiers (width None = the rest)."""
    reserved = Fraction(0)
    left = total
    for width, rate in tiers:
        part = left if width is None else min(left, width)
        if part <= 0:
            break
        reserved += part * rate
        left -= part
    return reserved


_MEMORY_TIERS_GIB = (
    (Fraction(4), Fraction(25, 100)),
    (Fraction(4), Fraction(20, 100)),
    (Fraction(8), Fraction(10, 100)),
    (Fraction(112), Fraction(6, 100)),
    (None, Fraction(2, 100)),
)

_CPU_TIERS_CORES = (
    (Fraction(1), Fraction(6, 100)),
    (Fraction(1), Fraction(1, 100)),
    (Fraction(2), Fraction(5, 1000)),
    (None, Fraction(25, 10000)),
)


def gke_allocatable_memory_mib(ram_gib: int | Fraction) -> int:
    """GKE Standard: capacity minus kube-reserved (25% of the first 4 GiB,
    20% of the next 4, 10% of the next 8, 6% of the next 112, 2% above
    128 GiB) minus the 100 MiB eviction threshold; floored to whole MiB."""
    ram = Fraction(ram_gib)
    if ram < 1:
        reserved_mib = Fraction(255)
    else:
        reserved_mib = _tiered(ram, _MEMORY_TIERS_GIB) * 1024
    return math.floor(ram * 1024 - reserved_mib - 100)


def tiered_reserved_cpu_millicores(vcpu: int) -> Fraction:
    """kube-reserved cpu documented by GKE and by the EKS AMIs (Karpenter
    uses the same): 6% of the first core, 1% of the second, 0.5% of the
    next two, 0.25% of every core above four."""
    return _tiered(Fraction(vcpu), _CPU_TIERS_CORES) * 1000


def aks_reserved_cpu_millicores(vcpu: int) -> int:
    """AKS kube-reserved cpu.  AKS publishes a table for 1/2/4/8/16/32/64
    cores (60/100/140/180/260/420/740m); every point above four cores lies
    on 140m + 10m per core above four, which is used for other sizes."""
    table = {1: 60, 2: 100, 4: 140}
    if vcpu in table:
        return table[vcpu]
    if vcpu < 4:
        return 100 if vcpu < 2 else 140
    return 140 + 10 * (vcpu - 4)


AKS_MAX_PODS = 110


def aks_allocatable_memory_mib(ram_gib: int | Fraction, max_pods: int = AKS_MAX_PODS) -> int:
    """AKS >= 1.29: kube-reserved = min(20 MiB x max pods + 50 MiB, 25% of
    RAM), plus the 100 MiB eviction threshold; floored to whole MiB."""
    ram_mib = Fraction(ram_gib) * 1024
    reserved = min(Fraction(20 * max_pods + 50), ram_mib / 4)
    return math.floor(ram_mib - reserved - 100)
