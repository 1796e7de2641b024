"""The kinds kubelint-ml knows, one module per controller family, and the one table the search
(``kubelint_ml.input.workloads``) reads: (API group, kind) -> :class:`~.base.KindInfo`.

Each family module's docstring names the controller's source and the version it follows, and
ends with its ``KINDS``; a new family is a module here and a line in ``FAMILIES``.
docs/kinds.md says, kind by kind, what is modelled.
"""

from __future__ import annotations

from kubelint_ml.input.kinds import (
    aibrix,
    argo,
    core,
    dynamo,
    jobset,
    kserve,
    kubeai,
    kubeflow,
    lws,
    nim,
    ome,
    production_stack,
    ray,
    seldon,
    spark,
    tekton,
    volcano,
)
from kubelint_ml.input.kinds.base import KindInfo

# Kubernetes and the training operators first, then the platforms whose controllers build pods
# from other fields.
FAMILIES = (
    core,
    jobset,
    kubeflow,
    ray,
    volcano,
    lws,
    aibrix,
    kserve,
    seldon,
    spark,
    dynamo,
    nim,
    kubeai,
    ome,
    production_stack,
    argo,
    tekton,
)

KINDS: dict[tuple[str, str], KindInfo] = {}
for _family in FAMILIES:
    KINDS.update(_family.KINDS)

# The inference and pipeline platforms (docs/kinds.md).
PLATFORM_KINDS: dict[tuple[str, str], KindInfo] = {
    key: info
    for family in (kserve, seldon, spark, dynamo, nim, kubeai, ome, production_stack, aibrix, argo, tekton)
    for key, info in family.KINDS.items()
}


def configure(settings: dict | None) -> None:
    """What the config's ``kinds:`` section says of the controllers (each run sets it, so one run's
    settings never leak into another's)."""
    kubeai.configure(((settings or {}).get("kubeai") or {}).get("resourceProfiles"))
