"""One ReadWriteOnce (or ReadWriteOncePod) claim mounted by pods that may run on several nodes.

A ReadWriteOnce volume attaches to one node at a time: a second node's pod waits with a
``Multi-Attach error``; a ReadWriteOncePod volume admits one pod in the whole cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.templates._cluster import cluster_of

UNIT = "object"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}
_SHARED_MODES = {"ReadWriteMany", "ReadOnlyMany"}


def _pinned(spec: Mapping) -> bool:
    """Every pod lands on one node: nodeName, or a nodeSelector on the hostname."""
    selector = spec.get("nodeSelector")
    return bool(spec.get("nodeName")) or (isinstance(selector, dict) and "kubernetes.io/hostname" in selector)


def active(params: dict, ctx: Any) -> bool:
    """Whether the run knows a PersistentVolumeClaim (asked once per run)."""
    cluster = cluster_of(ctx)
    return cluster is not None and bool(cluster.pvcs)


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    cluster = cluster_of(ctx)
    if cluster is None or not cluster.pvcs:
        return None
    obj = unit.obj
    ns = obj.ref.namespace or "default"
    if ns not in cluster.pvc_namespaces():
        return None
    daemon = obj.kind == "DaemonSet"
    mounts: dict[str, list[tuple[Any, tuple, int, bool]]] = {}
    for tpl in unit.templates():
        if tpl.shared:
            continue
        volumes = tpl.spec.get("volumes")
        for i, v in enumerate(volumes if isinstance(volumes, list) else ()):
            claim = v.get("persistentVolumeClaim") if isinstance(v, dict) else None
            name = claim.get("claimName") if isinstance(claim, dict) else None
            if isinstance(name, str) and (ns, name) in cluster.pvcs:
                pods = tpl.replicas if tpl.replicas is not None else 1
                path = tpl.spec_path + ("volumes", i, "persistentVolumeClaim", "claimName")
                mounts.setdefault(name, []).append((tpl, path, pods, _pinned(tpl.spec)))
    hits = []
    for name, uses in mounts.items():
        modes, _, source = cluster.pvcs[(ns, name)]
        if not modes or _SHARED_MODES & set(modes):
            continue
        pods = sum(p for _, _, p, _ in uses)
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
                    f"lands on one node. Use a ReadWriteMany storage class for shared data and checkpoints, or "
                    f"one claim per pod (volumeClaimTemplates)",
                )
            )
    return hits or None
