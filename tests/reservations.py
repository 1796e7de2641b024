"""The providers' documented reservation formulas, which the GPU catalog's numbers follow.

They live with the catalog's generator (kubelint_ml/k8s/catalog.py); tests/test_nodes.py checks
every row against them.
"""

from __future__ import annotations

from kubelint_ml.k8s.catalog import (  # noqa: F401
    AKS_MAX_PODS,
    aks_allocatable_memory_mib,
    aks_reserved_cpu_millicores,
    gke_allocatable_memory_mib,
    karpenter_allocatable_memory_mib,
    tiered_reserved_cpu_millicores,
)
