"""A pod outside its namespace's LimitRange bounds, or lacking what a ResourceQuota requires:
the API server rejects it when it is created (kubelint_ml/k8s/limitrange.py)."""

from __future__ import annotations

from typing import Any

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.k8s.limitrange import limit_range_violations, quota_total_violations, quota_violations
from kubelint_ml.templates._cluster import admitted, admitted_pod, cluster_of, limit_ranges, namespace_of
from kubelint_ml.templates._common import resources_unknown

UNIT = "podTemplate"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}


def active(params: dict, ctx: Any) -> bool:
    """Whether the run knows a LimitRange or ResourceQuota (asked once per run)."""
    cluster = cluster_of(ctx)
    return cluster is not None and bool(cluster.limit_ranges or cluster.quotas or cluster.quota_hard)


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    tpl = unit.tpl
    cluster = cluster_of(ctx)
    if cluster is None or tpl.shared or resources_unknown(tpl) or admitted_pod(tpl):
        return None  # a running pod was admitted: judged as it is
    ranges = limit_ranges(tpl, ctx)
    required = cluster.quotas_in(namespace_of(tpl))
    hards = cluster.quota_hard_in(namespace_of(tpl))
    if not ranges and not required and not hards:
        return None
    containers = admitted(tpl, ctx)
    found = (
        limit_range_violations(containers, ranges)
        + quota_violations(containers, required)
        + quota_total_violations(containers, hards)
    )
    hits = []
    for v in found:
        if v.container is None:
            path = tpl.spec_path
            who = "the pod"
        else:
            path = tpl.spec_path + (*v.container.path, "resources", v.part, v.resource)
            who = f"{'init container' if v.container.init else 'container'} '{v.container.name}'"
        hits.append(
            Hit(
                path,
                f"{who}: {v.message} ({v.origin})",
                container=v.container.name if v.container is not None else None,
                detail=f"{tpl.describe()}: {who}: {v.message}, after the namespace's LimitRange defaults; "
                f"{v.origin} makes the API server reject the pod when it is created",
            )
        )
    return hits
