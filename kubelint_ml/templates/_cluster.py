"""What the cluster's own objects (LimitRanges, quotas, queues, PVCs: kubelint_ml/engine/cluster.py)
say about a pod template, computed once per template for every rule that asks."""

from __future__ import annotations

from typing import Any

from kubelint_ml.input.workloads import ContainerView, PodTemplate
from kubelint_ml.k8s.limitrange import AdmittedContainer, Applied, LimitRange, admitted_containers, admitted_spec

_CLUSTER = "cluster:facts"


def cluster_of(ctx: Any) -> Any:
    """The run's ClusterFacts, or None when it has none (asked by many rules of every pod: kept in
    the file's cache)."""
    cache = getattr(ctx, "cache", None)
    if cache is not None:
        found = cache.get(_CLUSTER, cache)
        if found is not cache:
            return found
    facts = getattr(ctx, "facts", None) if ctx is not None else None
    cluster = getattr(facts, "cluster", None)
    found = cluster if cluster else None
    if cache is not None:
        cache[_CLUSTER] = found
    return found


def namespace_of(tpl: PodTemplate) -> str | None:
    """The namespace the pods are created in: the object's (a manifest without one says nothing)."""
    return tpl.obj.ref.namespace or None


def admitted_pod(tpl: PodTemplate) -> bool:
    """A Pod read from a cluster (it has a creation time): admitted already, LimitRange defaults in."""
    obj = tpl.obj
    if obj.kind != "Pod":
        return False
    meta = obj.data.get("metadata")
    return isinstance(meta, dict) and bool(meta.get("creationTimestamp"))


def limit_ranges(tpl: PodTemplate, ctx: Any) -> tuple[LimitRange, ...]:
    """The LimitRanges of the template's namespace. A running pod carries their defaults already; one
    that lacks a value they default (admitted before the LimitRange) is judged as the controller's
    next pod will be created: with it."""
    cluster = cluster_of(ctx)
    if cluster is None or not cluster.limit_ranges:
        return ()
    return cluster.limit_ranges_in(namespace_of(tpl))


def admitted(tpl: PodTemplate, ctx: Any) -> list[AdmittedContainer]:
    """The template's containers as the pods are admitted in its namespace (LimitRange defaults in)."""
    found = tpl.cache.get("admitted")
    if found is None:
        found = tpl.cache["admitted"] = admitted_containers(tpl.spec, limit_ranges(tpl, ctx))
    return found


def admitted_pod_spec(tpl: PodTemplate, ctx: Any) -> dict:
    """``tpl.spec`` with the LimitRange defaults in (the spec itself when none apply)."""
    if not limit_ranges(tpl, ctx):
        return tpl.spec
    found = tpl.cache.get("admitted_spec")
    if found is None:
        found = tpl.cache["admitted_spec"] = admitted_spec(tpl.spec, admitted(tpl, ctx))
    return found


def default_for(tpl: PodTemplate, c: ContainerView, ctx: Any, part: str, resource: str) -> Applied | None:
    """The value a LimitRange fills in for ``c``'s ``part`` ("limits"/"requests") of ``resource``."""
    if not limit_ranges(tpl, ctx):
        return None
    for a in admitted(tpl, ctx):
        if a.path == tuple(c.path[-2:]):
            return next((x for x in a.applied if x.part == part and x.resource == resource), None)
    return None


def applied_defaults(tpl: PodTemplate, ctx: Any) -> list[Applied]:
    return [x for a in admitted(tpl, ctx) for x in a.applied] if limit_ranges(tpl, ctx) else []
