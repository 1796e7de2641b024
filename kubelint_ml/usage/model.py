"""Observed usage as the rules see it: per workload template and container, a summary
of what its pods used over the lookback (from Prometheus or a snapshot file).

A workload is identified by (namespace, API group, kind, name) and a template by
its role within it ("Worker", a replicated job's name, "head"; "" for
single-template kinds); a container by its name. The namespace is the
manifest's ``metadata.namespace``, else the default namespace of the run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from kubelint_ml.usage import USAGE_FAMILY  # noqa: F401 - the family of the rules that judge with observed usage

MI = 1024 * 1024

Key = tuple[str, str, str, str, str]  # namespace, group, kind, name, role


class UsageError(Exception):
    """A usage source that cannot be used (exit 2); the message says why."""


@dataclass(frozen=True, slots=True)
class Stats:
    """One metric of one container, pooled over all its pods' samples."""

    samples: int
    median: float
    p90: float
    p99: float
    max: float

    def to_dict(self) -> dict[str, Any]:
        return {"samples": self.samples, "median": self.median, "p90": self.p90, "p99": self.p99, "max": self.max}

    def at(self, percentile: str) -> float:
        return {"median": self.median, "p50": self.median, "p90": self.p90, "p99": self.p99, "max": self.max}[
            percentile
        ]


@dataclass(frozen=True, slots=True)
class GpuStats:
    """GPU framebuffer memory (DCGM) of one container: per device, its peak and its size."""

    samples: int
    devices: int  # device series seen (a device used by several pods in turn counts once per pod)
    peak: float  # the largest per-device peak, bytes
    device_memory: float  # the smallest device's memory (used + free), bytes

    def to_dict(self) -> dict[str, Any]:
        return {"samples": self.samples, "devices": self.devices, "peak": self.peak, "deviceMemory": self.device_memory}


@dataclass(slots=True)
class ContainerUsage:
    pods: int  # pods of the workload template that ran this container in the lookback
    memory: Stats | None = None  # working set, bytes
    cpu: Stats | None = None  # cores
    gpu: GpuStats | None = None
    restarts: int | None = None  # None: kube-state-metrics has no series for it
    oom_killed: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"pods": self.pods}
        for name in ("memory", "cpu", "gpu"):
            part = getattr(self, name)
            if part is not None:
                out["gpuMemory" if name == "gpu" else name] = part.to_dict()
        if self.restarts is not None:
            out["restarts"] = self.restarts
        if self.oom_killed is not None:
            out["oomKilled"] = self.oom_killed
        return out


@dataclass(slots=True)
class WorkloadUsage:
    namespace: str
    group: str
    kind: str
    name: str
    role: str
    pods: int
    containers: dict[str, ContainerUsage] = field(default_factory=dict)

    @property
    def key(self) -> Key:
        return (self.namespace, self.group, self.kind, self.name, self.role)

    def describe(self) -> str:
        kind = f"{self.kind}.{self.group}" if self.group else self.kind
        text = f"{kind}/{self.namespace}/{self.name}"
        return text + (f" ({self.role})" if self.role else "")


def describe_key(key: Key) -> str:
    ns, group, kind, name, role = key
    return WorkloadUsage(ns, group, kind, name, role, 0).describe()


@dataclass
class Window:
    """The time the summaries cover."""

    lookback: float  # seconds
    step: float  # seconds (CPU rate subqueries, and the resolution a range covers)
    end: float  # unix seconds

    def to_dict(self) -> dict[str, Any]:
        end = int(self.end) if self.end == int(self.end) else self.end
        return {"lookback": duration_text(self.lookback), "step": duration_text(self.step), "end": end}


@dataclass
class Usage:
    """``Context.usage``: what the usage rules judge against and fixes take their values from."""

    window: Window
    default_namespace: str = "default"
    min_samples: int = 60
    headroom: float = 0.2
    source: str = ""  # a URL or a snapshot path: said in recommendations, never in findings
    origin: str = ""  # a snapshot's own "source": the server it was exported from (reports say both)
    cluster: str | None = None
    workloads: dict[Key, WorkloadUsage] = field(default_factory=dict)
    # Workload templates linted but not found in the source, with why (for -v).
    missing: dict[Key, str] = field(default_factory=dict)
    # Series left out because they cannot be sized from (a NaN, infinite or negative sample, samples
    # that are not [time, value] pairs): per workload template and container, why (for -v and reports).
    excluded: dict[Key, dict[str, list[str]]] = field(default_factory=dict)
    queries: int = 0

    @property
    def lookback_text(self) -> str:
        return duration_text(self.window.lookback)

    # ------------------------------------------------------------------
    # Lookups (objects are kubelint_ml.input objects; only their identity is read here)

    def key_of(self, obj: Any, tpl: Any) -> Key:
        ref = obj.ref
        return (ref.namespace or self.default_namespace, obj.group, ref.kind, ref.name, tpl.role if tpl else "")

    def container(self, obj: Any, tpl: Any, container: Any) -> ContainerUsage | None:
        found = self.workloads.get(self.key_of(obj, tpl))
        if found is None:
            return None
        name = container if isinstance(container, str) else container.name
        return found.containers.get(name)

    def memory(self, obj: Any, tpl: Any, container: Any) -> tuple[ContainerUsage | None, Stats | None]:
        """The container's usage and its memory stats when there are enough samples to judge."""
        cu = self.container(obj, tpl, container)
        if cu is None or cu.memory is None or cu.memory.samples < self.min_samples:
            return cu, None
        return cu, cu.memory

    def recommend(self, obj: Any, tpl: Any, container: Any) -> tuple[int, int, str] | None:
        """(request bytes, limit bytes, where from) for a container's memory: the request at the
        observed median, the limit at the observed peak plus the headroom, both rounded up to
        whole MiB; None without enough samples."""
        _, mem = self.memory(obj, tpl, container)
        if mem is None:
            return None
        request, limit = recommended_memory(mem, self.headroom)
        source = (
            f"observed median {show_bytes(mem.median)} and peak {show_bytes(mem.max)} over "
            f"{duration_text(self.window.lookback)} ({mem.samples} samples, {self.source}); "
            f"limit = peak + {self.headroom:.0%}"
        )
        return request, limit, source

    def notes(self) -> list[str]:
        """For -v: workloads without series, or with too few samples to judge."""
        out = [f"usage: {describe_key(k)}: {why}" for k, why in sorted(self.missing.items())]
        for key, containers in sorted(self.excluded.items()):
            for name, whys in sorted(containers.items()):
                for why in whys:
                    out.append(f"usage: {describe_key(key)}: container '{name}': series left out: {why}")
        for _, w in sorted(self.workloads.items()):
            for name, cu in sorted(w.containers.items()):
                if cu.memory is None:
                    out.append(f"usage: {w.describe()}: container '{name}': no memory series; not judged")
                if cu.gpu is not None and cu.gpu.device_memory <= 0:
                    out.append(
                        f"usage: {w.describe()}: container '{name}': no DCGM_FI_DEV_FB_FREE beside "
                        "DCGM_FI_DEV_FB_USED, so the GPU's memory is unknown; GPU memory not judged"
                    )
                if cu.memory is None:
                    continue
                if cu.memory.samples < self.min_samples:
                    out.append(
                        f"usage: {w.describe()}: container '{name}': {cu.memory.samples} memory samples, "
                        f"fewer than {self.min_samples} (usage.minSamples); not judged"
                    )
        return out


def recommended_memory(mem: Stats, headroom: float) -> tuple[int, int]:
    """(request, limit) in bytes: the median, and the peak plus ``headroom``, each rounded up to
    an amount a person would write (:func:`round_up`)."""
    request = round_up(mem.median)
    return request, max(request, round_up(mem.max * (1 + headroom)))


def round_up(value: float) -> int:
    """Bytes rounded up: to a whole GiB from 4Gi, to 64Mi from 256Mi, else to a MiB (at least 1Mi)."""
    gi = 1024 * MI
    for floor, unit in ((4 * gi, gi), (256 * MI, 64 * MI), (0, MI)):
        if value >= floor:
            return max(MI, math.ceil(value / unit) * unit)
    return MI


def show_bytes(value: float) -> str:
    """Observed bytes for people: 27.9Gi, 812Mi, 20Ki."""
    for unit, suffix in ((1024**4, "Ti"), (1024**3, "Gi"), (MI, "Mi"), (1024, "Ki")):
        if value >= unit:
            text = f"{value / unit:.1f}".rstrip("0").rstrip(".")
            return text + suffix
    return f"{value:.0f}"


def show_quantity(value: int) -> str:
    """A recommended amount as a manifest value: 28Gi when whole, else 28672Mi."""
    for unit, suffix in ((1024**3, "Gi"), (MI, "Mi")):
        if value % unit == 0:
            return f"{value // unit}{suffix}"
    return str(value)


def show_cores(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") if value >= 1 else f"{math.ceil(value * 1000)}m"


_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}


def parse_duration(text: Any, what: str) -> float:
    """A Prometheus duration (``14d``, ``1h30m``, ``90s``) in seconds."""
    import re

    if isinstance(text, (int, float)) and not isinstance(text, bool) and text > 0:
        return float(text)
    if not isinstance(text, str):
        raise UsageError(f"{what}: {text!r} is not a duration (e.g. 14d, 6h, 1m)")
    parts = re.findall(r"(\d+)(ms|[smhdwy])", text.strip())
    if not parts or "".join(n + u for n, u in parts) != text.strip():
        raise UsageError(f"{what}: {text!r} is not a duration (e.g. 14d, 6h, 1m)")
    seconds = sum(int(n) * _UNITS[u] for n, u in parts)
    if seconds <= 0:
        raise UsageError(f"{what}: {text!r} must be longer than zero")
    return float(seconds)


def duration_text(seconds: float) -> str:
    """``1209600`` -> ``14d``; the largest units that divide it."""
    if seconds != int(seconds):
        return f"{int(round(seconds * 1000))}ms"
    s = int(seconds)
    out = ""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if s >= size:
            out += f"{s // size}{unit}"
            s %= size
    return out or "0s"
