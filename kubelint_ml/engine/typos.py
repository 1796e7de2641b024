"""Findings that may follow from a misspelt key (``unknown-field``) say so.

``resouces:`` under a container leaves it without resources: ``besteffort-qos`` and
``missing-memory-limit`` are then about limits the author wrote, under the wrong key. Each
finding of a rule that reads the field the unknown key most resembles, on the mapping that
holds the key or on a mapping around it (the pod spec around a container), gets the unknown
key added to its message (its own finding gives the line)."""

from __future__ import annotations

from kubelint_ml.findings import Finding

UNKNOWN_FIELD = "unknown-field"

_RESOURCES = frozenset(
    {
        "besteffort-qos",
        "missing-memory-limit",
        "missing-memory-request",
        "memory-overcommit-ratio",
        "request-exceeds-limit",
        "accelerator-request-limit-mismatch",
        "accelerator-workload-not-judged",
        "gpu-memory-share-mismatch",
        "gpu-node-unresolved",
        "emptydir-memory-unbounded",
        "emptydir-memory-exceeds-limit",
        "emptydir-exceeds-ephemeral-storage",
        "missing-ephemeral-storage-request",
        "shm-too-small-for-workers",
        "group-oom-kill-multiprocess",
        "memory-limit-below-peak",
        "memory-request-below-median",
        "memory-request-above-usage",
        "gpu-memory-underused",
    }
)
_VOLUMES = frozenset(
    {
        "emptydir-no-size-limit",
        "emptydir-memory-unbounded",
        "emptydir-memory-exceeds-limit",
        "emptydir-exceeds-ephemeral-storage",
        "missing-ephemeral-storage-request",
        "shm-too-small-for-workers",
    }
)
_PRIORITY = frozenset({"missing-priority-class", "unknown-priority-class", "preemption-consumes-backoff"})
_NODES = frozenset({"gpu-memory-share-mismatch", "gpu-node-unresolved"})

# The field an unknown key most resembles -> the rules whose findings may follow from its absence.
AFFECTED = {
    "resources": _RESOURCES,
    "limits": _RESOURCES,
    "requests": _RESOURCES,
    "volumes": _VOLUMES,
    "volumeMounts": _VOLUMES,
    "emptyDir": _VOLUMES,
    "sizeLimit": _VOLUMES,
    "medium": _VOLUMES,
    "priorityClassName": _PRIORITY,
    "restartPolicy": frozenset({"restart-policy-invalid", "preemption-consumes-backoff"}),
    "backoffLimit": frozenset({"preemption-consumes-backoff"}),
    "podFailurePolicy": frozenset({"preemption-consumes-backoff", "restart-policy-invalid"}),
    "nodeSelector": _NODES,
    "affinity": _NODES,
}


def _related(path: str, parent: str) -> bool:
    """``path`` is the mapping ``parent``, inside it, or a mapping around it."""
    if not path:
        return False
    if path == parent:
        return True
    for inner, outer in ((path, parent), (parent, path)):
        if inner.startswith(outer) and inner[len(outer)] in ".[":
            return True
    return False


def annotate(findings: list[Finding]) -> None:
    """One object's findings: those that may follow from an unknown field say which, in place."""
    typos = []
    for f in findings:
        if f.rule == UNKNOWN_FIELD:
            key = f.data.get("unknownField")
            affected = AFFECTED.get(f.data.get("closest", ""))
            if affected and isinstance(key, str) and f.path.endswith("." + key):
                typos.append((f.path[: -len(key) - 1], key, affected))
    if not typos:
        return
    for f in findings:
        if f.rule == UNKNOWN_FIELD:
            continue
        for parent, key, affected in typos:
            if f.rule in affected and _related(f.path, parent):
                f.message += f" (may follow from the unknown field '{key}')"
                break
