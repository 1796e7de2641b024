"""One ReadWriteOnce (or ReadWriteOncePod) claim mounted by pods that may run on several nodes.

A ReadWriteOnce volume attaches to one node at a time: a second node's pod waits with a
``Multi-Attach error``; a ReadWriteOncePod volume admits one pod in the whole cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.input.objects import dig
from kubelint_ml.templates._cluster import cluster_of

UNIT = "object"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}
_SHARED_MODES = {"ReadWriteMany", "ReadOnlyMany"}
_REMEDY = (
    "Use a ReadWriteMany storage class for shared data and checkpoints, or one claim per pod (volumeClaimTemplates)"
)
_JOBSET_REMEDY = (
    "Give {where} accessModes [ReadWriteMany] and a storage class that provides it (NFS, CephFS, Filestore, "
    "EFS, FSx for Lustre)"
)


def _pinned(spec: Mapping) -> bool:
    """Every pod lands on one node: nodeName, or a nodeSelector on the hostname."""
    selector = spec.get("nodeSelector")
    return bool(spec.get("nodeName")) or (isinstance(selector, dict) and "kubernetes.io/hostname" in selector)


def active(params: dict, ctx: Any) -> bool:
    """Always: a JobSet's volumeClaimPolicies make claims of their own; without a known
    PersistentVolumeClaim, :func:`check` looks at JobSets only."""
    return True


def _is_jobset(obj) -> bool:
    return obj.kind == "JobSet" and obj.group == "jobset.x-k8s.io"


def _jobset_claims(obj) -> dict[str, tuple[tuple[str, ...], str, tuple]]:
    """The claims a JobSet's ``volumeClaimPolicies`` make (jobset ``GeneratePVCName``:
    ``<template>-<jobset>``), by the volume name JobSet gives them in each pod template whose
    containers mount that name (``addVolumes``): name -> (access modes, where, path of the modes)."""
    if not _is_jobset(obj):
        return {}
    policies = obj.data.get("spec", {}).get("volumeClaimPolicies") if isinstance(obj.data.get("spec"), dict) else None
    found: dict[str, tuple[tuple[str, ...], str, tuple]] = {}
    for i, policy in enumerate(policies if isinstance(policies, list) else ()):
        templates = policy.get("templates") if isinstance(policy, dict) else None
        for j, t in enumerate(templates if isinstance(templates, list) else ()):
            name = dig(t, "metadata", "name")
            modes = dig(t, "spec", "accessModes")
            if isinstance(name, str) and name and isinstance(modes, list):
                where = f"spec.volumeClaimPolicies[{i}].templates[{j}]"
                path = ("spec", "volumeClaimPolicies", i, "templates", j, "spec", "accessModes")
                found[name] = (tuple(m for m in modes if isinstance(m, str)), where, path)
    return found


def _jobset_after(obj) -> dict[int, set[int]]:
    """For each replicated job (by index), the replicated jobs it starts only after they complete:
    ``dependsOn`` with status Complete, reached from it by any chain of dependencies (a job that waits
    for another to be Ready runs alongside it)."""
    jobs = dig(obj.data, "spec", "replicatedJobs")
    jobs = jobs if isinstance(jobs, list) else []
    index = {j.get("name"): i for i, j in enumerate(jobs) if isinstance(j, dict)}
    edges: dict[int, list[tuple[int, bool]]] = {}
    for i, j in enumerate(jobs):
        deps = j.get("dependsOn") if isinstance(j, dict) else None
        for d in deps if isinstance(deps, list) else ():
            if isinstance(d, dict) and d.get("name") in index:
                edges.setdefault(i, []).append((index[d["name"]], d.get("status") == "Complete"))
    after: dict[int, set[int]] = {}
    for i in range(len(jobs)):
        reach, todo = {i}, [i]
        while todo:
            for dep, _ in edges.get(todo.pop(), ()):
                if dep not in reach:
                    reach.add(dep)
                    todo.append(dep)
        after[i] = {dep for x in reach for dep, complete in edges.get(x, ()) if complete}
    return after


def _at_once(uses: list, after: dict[int, set[int]]) -> int:
    """The most pods that mount the claim at one time: all of them, but for a JobSet's replicated
    jobs that run one after another (``dependsOn`` Complete), those of the ones that may overlap."""
    if not after:
        return sum(p for _, _, p, _ in uses)
    by_job: dict[int, int] = {}
    for tpl, _, pods, _ in uses:
        by_job[tpl.path[2]] = by_job.get(tpl.path[2], 0) + pods
    return max(
        n + sum(m for k, m in by_job.items() if k != j and k not in after.get(j, ()) and j not in after.get(k, ()))
        for j, n in by_job.items()
    )


def _mounts(spec: Mapping, name: str) -> bool:
    """A container or init container of the pod spec mounts the volume ``name``."""
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or ():
            mounts = c.get("volumeMounts") if isinstance(c, dict) else None
            if any(isinstance(m, dict) and m.get("name") == name for m in mounts or ()):
                return True
    return False


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    obj = unit.obj
    policies = _jobset_claims(obj)
    cluster = cluster_of(ctx)
    ns = obj.ref.namespace or "default"
    known = cluster is not None and bool(cluster.pvcs) and ns in cluster.pvc_namespaces()
    if not known and not policies:
        return None
    daemon = obj.kind == "DaemonSet"
    mounts: dict[str, list[tuple[Any, tuple, int, bool]]] = {}
    claims: dict[str, tuple[tuple[str, ...], str, str]] = {}  # name -> (access modes, where it is defined, remedy)
    for tpl in unit.templates():
        if tpl.shared:
            continue
        pods = tpl.replicas if tpl.replicas is not None else 1
        volumes = tpl.spec.get("volumes")
        for i, v in enumerate(volumes if isinstance(volumes, list) else ()):
            claim = v.get("persistentVolumeClaim") if isinstance(v, dict) else None
            name = claim.get("claimName") if isinstance(claim, dict) else None
            if known and isinstance(name, str) and (ns, name) in cluster.pvcs:
                modes, _, source = cluster.pvcs[(ns, name)]
                claims[name] = (modes, source, _REMEDY)
                path = tpl.spec_path + ("volumes", i, "persistentVolumeClaim", "claimName")
                mounts.setdefault(name, []).append((tpl, path, pods, _pinned(tpl.spec)))
        for volume, (modes, where, path) in policies.items():
            if _mounts(tpl.spec, volume):
                name = f"{volume}-{obj.ref.name}"
                claims[name] = (modes, f"made by JobSet from its {where}", _JOBSET_REMEDY.format(where=where))
                mounts.setdefault(name, []).append((tpl, path, pods, _pinned(tpl.spec)))
    after = _jobset_after(obj) if _is_jobset(obj) else {}
    hits = []
    for name, uses in mounts.items():
        modes, source, remedy = claims[name]
        if not modes or _SHARED_MODES & set(modes):
            continue
        pods = _at_once(uses, after)
        tpl, path = uses[0][0], uses[0][1]
        if "ReadWriteOncePod" in modes and "ReadWriteOnce" not in modes:
            if pods > 1 or daemon:
                hits.append(
                    Hit(
                        path,
                        f"PVC '{name}' is ReadWriteOncePod but {'every node' if daemon else f'{pods} pods'} mount it",
                        at_value=True,
                        severity="error",
                        detail=f"{obj.ref.display()}: PersistentVolumeClaim {ns}/{name} ({source}) allows a single "
                        f"pod in the whole cluster; the others stay Pending. Give each pod its own claim, or use a "
                        f"ReadWriteMany volume (NFS, CephFS, Filestore, EFS, Lustre)",
                    )
                )
            continue
        if (pods > 1 or daemon) and not all(pinned for _, _, _, pinned in uses):
            hits.append(
                Hit(
                    path,
                    f"PVC '{name}' is ReadWriteOnce but {'every node' if daemon else f'{pods} pods'} mount it: "
                    f"pods on a second node fail with a Multi-Attach error",
                    at_value=True,
                    detail=f"{obj.ref.display()}: PersistentVolumeClaim {ns}/{name} ({source}) has access modes "
                    f"{', '.join(modes)}: one node mounts it at a time, so the workload runs only when every pod "
                    f"lands on one node. {remedy}",
                )
            )
    return hits or None
