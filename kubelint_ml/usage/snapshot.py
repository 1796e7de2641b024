"""The usage snapshot: a versioned JSON file of per-workload summaries.

``kubelint-ml usage export PATH... --prometheus URL -o FILE`` writes it;
``check --usage FILE`` and ``usage report --usage FILE`` read it, so CI needs
no network path to Prometheus. The format (version 2)::

    {
      "kind": "kubelint-ml/usage-snapshot",
      "version": 2,
      "cluster": "prod-eu",              # usage.cluster when exported, else null
      "source": "https://prometheus.example:9090",
      "window": {"lookback": "14d", "step": "5m", "end": 1763856000},   # end: unix seconds
      "workloads": [
        {"namespace": "ml", "group": "kubeflow.org", "kind": "PyTorchJob", "name": "llama",
         "template": "Worker",           # the pod template's role; "" for single-template kinds
         "pods": 8,
         "containers": {
           "pytorch": {
             "pods": 8,
             "memory": {"samples": 32256, "median": 2.99e10, "p90": 3.1e10, "p99": 3.2e10, "max": 3.3e10},  # bytes
             "cpu": {"samples": 32256, "median": 7.1, "p90": 7.8, "p99": 7.9, "max": 8.0},                     # cores
             "gpuMemory": {"samples": 161280, "devices": 8, "peak": 6.1e10, "deviceMemory": 8.5e10},          # bytes
             "restarts": 0,               # absent without kube-state-metrics
             "oomKilled": false
           }
         }}
      ],
      "missing": [{"namespace": "ml", "group": "batch", "kind": "Job", "name": "eval", "template": "",
                   "reason": "no pods in namespace ml over the lookback"}]
    }

``samples``, ``median``, ``p90`` and ``p99`` are over the samples at the window's
step (each series' value at every multiple of the step in the lookback); ``max``
of memory is over every raw sample. Version 1 (written before the step applied
to memory) had the memory quantiles and counts over the raw samples; it is still
read, with the same fields.

Reading checks every field; a file that does not follow this, or names
another cluster than the config's ``usage.cluster``, is refused (exit 2).
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

from kubelint_ml.usage.model import (
    ContainerUsage,
    GpuStats,
    Stats,
    Usage,
    UsageError,
    Window,
    WorkloadUsage,
    parse_duration,
)

KIND = "kubelint-ml/usage-snapshot"
VERSION = 2
READS = (1, 2)  # version 1: memory quantiles over raw samples; same fields
# A snapshot is about 600 bytes per workload container: 32 MiB holds some 50,000 of them, and
# decodes in well under half a GiB. A larger file is refused before it is decoded.
MAX_BYTES = 32 * 1024 * 1024


def to_dict(usage: Usage) -> dict[str, Any]:
    workloads = []
    for key in sorted(usage.workloads):
        w = usage.workloads[key]
        workloads.append(
            {
                "namespace": w.namespace,
                "group": w.group,
                "kind": w.kind,
                "name": w.name,
                "template": w.role,
                "pods": w.pods,
                "containers": {n: w.containers[n].to_dict() for n in sorted(w.containers)},
            }
        )
    missing = [
        {"namespace": k[0], "group": k[1], "kind": k[2], "name": k[3], "template": k[4], "reason": why}
        for k, why in sorted(usage.missing.items())
    ]
    return {
        "kind": KIND,
        "version": VERSION,
        "cluster": usage.cluster,
        "source": usage.source,
        "window": usage.window.to_dict(),
        "workloads": workloads,
        "missing": missing,
    }


def write(usage: Usage, path: str) -> None:
    text = json.dumps(to_dict(usage), indent=1, sort_keys=False, allow_nan=False) + "\n"
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise UsageError(f"cannot write {path}: {e.strerror}") from None


class _Bad(Exception):
    pass


def _get(d: Any, key: str, kind: type | tuple, where: str, optional: bool = False) -> Any:
    if not isinstance(d, dict):
        raise _Bad(f"{where}: must be an object")
    if key not in d:
        if optional:
            return None
        raise _Bad(f"{where}.{key}: missing")
    v = d[key]
    if v is None and optional:
        return None
    if isinstance(v, bool) and kind is not bool and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise _Bad(f"{where}.{key}: must be a {_name(kind)}, found {v!r}")
    if not isinstance(v, kind):
        raise _Bad(f"{where}.{key}: must be a {_name(kind)}, found {type(v).__name__}")
    return v


def _name(kind: type | tuple) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(
        {int: "integer", float: "number", str: "string", bool: "boolean", dict: "object", list: "list"}[k]
        for k in kinds
    )


def _number(d: dict, key: str, where: str) -> float:
    v = _get(d, key, (int, float), where)
    if not math.isfinite(v) or v < 0:
        raise _Bad(f"{where}.{key}: must be a finite number >= 0, found {v!r}")
    return float(v)


def _count(d: dict, key: str, where: str) -> int:
    v = _get(d, key, int, where)
    if v < 0:
        raise _Bad(f"{where}.{key}: must be >= 0")
    return v


def _stats(d: Any, where: str) -> Stats:
    s = Stats(_count(d, "samples", where), *(_number(d, k, where) for k in ("median", "p90", "p99", "max")))
    if not s.median <= s.p90 <= s.p99 <= s.max:
        raise _Bad(f"{where}: median <= p90 <= p99 <= max does not hold")
    return s


def _only(d: dict, keys: set[str], where: str) -> None:
    extra = sorted(set(d) - keys)
    if extra:
        raise _Bad(f"{where}: unknown field {extra[0]!r}")


def from_dict(doc: Any, **settings: Any) -> Usage:
    if not isinstance(doc, dict) or doc.get("kind") != KIND:
        raise _Bad(f'not a usage snapshot ("kind": "{KIND}" expected)')
    version = doc.get("version")
    if version not in READS or isinstance(version, bool):
        raise _Bad(f"version {version!r}: this kubelint-ml reads versions {', '.join(map(str, READS))}")
    _only(doc, {"kind", "version", "cluster", "source", "window", "workloads", "missing"}, "(top level)")
    win = _get(doc, "window", dict, "(top level)")
    lookback = _get(win, "lookback", str, "window")
    step = _get(win, "step", str, "window")
    try:
        window = Window(
            parse_duration(lookback, "window.lookback"),
            parse_duration(step, "window.step"),
            _number(win, "end", "window"),
        )
    except UsageError as e:
        raise _Bad(str(e)) from None
    usage = Usage(
        window=window,
        cluster=_get(doc, "cluster", str, "(top level)", optional=True),
        source=_get(doc, "source", str, "(top level)", optional=True) or "",
        **settings,
    )
    for i, w in enumerate(_get(doc, "workloads", list, "(top level)")):
        where = f"workloads[{i}]"
        _only(
            w if isinstance(w, dict) else {},
            {"namespace", "group", "kind", "name", "template", "pods", "containers"},
            where,
        )
        ns, group, kind, name_, role = (
            _get(w, k, str, where) for k in ("namespace", "group", "kind", "name", "template")
        )
        wu = WorkloadUsage(ns, group, kind, name_, role, pods=_count(w, "pods", where))
        for name, c in _get(w, "containers", dict, where).items():
            cw = f"{where}.containers.{name}"
            if not isinstance(c, dict):
                raise _Bad(f"{cw}: must be an object")
            _only(c, {"pods", "memory", "cpu", "gpuMemory", "restarts", "oomKilled"}, cw)
            cu = ContainerUsage(pods=_count(c, "pods", cw))
            if "memory" in c:
                cu.memory = _stats(c["memory"], cw + ".memory")
            if "cpu" in c:
                cu.cpu = _stats(c["cpu"], cw + ".cpu")
            if "gpuMemory" in c:
                g = c["gpuMemory"]
                gw = cw + ".gpuMemory"
                cu.gpu = GpuStats(
                    _count(g, "samples", gw),
                    _count(g, "devices", gw),
                    _number(g, "peak", gw),
                    _number(g, "deviceMemory", gw),
                )
                _only(g, {"samples", "devices", "peak", "deviceMemory"}, gw)
            if "restarts" in c:
                cu.restarts = _count(c, "restarts", cw)
            if "oomKilled" in c:
                cu.oom_killed = _get(c, "oomKilled", bool, cw)
            wu.containers[name] = cu
        if wu.key in usage.workloads:
            raise _Bad(f"{where}: {wu.describe()} appears twice")
        usage.workloads[wu.key] = wu
    for i, m in enumerate(_get(doc, "missing", list, "(top level)", optional=True) or []):
        where = f"missing[{i}]"
        key = tuple(_get(m, k, str, where) for k in ("namespace", "group", "kind", "name", "template"))
        usage.missing[key] = _get(m, "reason", str, where)  # type: ignore[index]
    return usage


def read(path: str, cluster: str | None = None, name: str = "--usage", **settings: Any) -> Usage:
    """The snapshot at ``path``; errors name it as ``name`` gave it (``--usage``, ``usage.snapshot``)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except OSError as e:
        raise UsageError(f"{name} {path}: cannot read: {e.strerror}") from None
    if len(data) > MAX_BYTES:
        raise UsageError(f"{name} {path}: over {MAX_BYTES} bytes; not a usage snapshot")
    try:
        doc = json.loads(data, parse_constant=_no_constant)
    except RecursionError:
        raise UsageError(f"{name} {path}: not a usage snapshot: nested too deeply") from None
    except (ValueError, _Bad) as e:
        raise UsageError(f"{name} {path}: not valid JSON: {_cut(str(e))}") from None
    try:
        usage = from_dict(doc, **settings)
    except _Bad as e:
        raise UsageError(f"{name} {path}: malformed snapshot: {_cut(str(e))}") from None
    if cluster and usage.cluster and usage.cluster != cluster:
        raise UsageError(
            f"{name} {path}: the snapshot is from cluster {_cut(usage.cluster)!r}, not {cluster!r} "
            "(usage.cluster); export one from this cluster"
        )
    if cluster and not usage.cluster:
        raise UsageError(
            f"{name} {path}: the snapshot names no cluster, and usage.cluster is {cluster!r}; "
            "export it with usage.cluster set"
        )
    usage.origin, usage.source = usage.source, path
    return usage


def _cut(text: str, most: int = 300) -> str:
    return text if len(text) <= most else text[:most] + "..."


def _no_constant(name: str) -> Any:
    raise _Bad(f"{name} is not a number a snapshot may hold")


def example_usage(doc: Any) -> Usage:
    """A rule example's ``usage``: a snapshot document whose kind, version and window may be left
    out (a 14-day window at a 5-minute step). Raises ValueError when it is malformed."""
    if not isinstance(doc, dict):
        raise ValueError("example usage: must be a mapping")
    full = {
        "kind": KIND,
        "version": VERSION,
        "window": {"lookback": "14d", "step": "5m", "end": 0},
        "workloads": [],
        **doc,
    }
    try:
        usage = from_dict(full)
    except _Bad as e:
        raise ValueError(f"example usage: {e}") from None
    usage.source = "example"
    return usage
