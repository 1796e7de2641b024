"""What the usage rules share: the container's observed usage, its memory request and limit."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from kubelint_ml.engine.api import Unit
from kubelint_ml.k8s.resources import defaulted_requests
from kubelint_ml.templates._common import requests_limits, resources_unknown

PERCENTILES = ["median", "p90", "p99", "max"]


def observed(unit: Unit, ctx: Any) -> tuple[Any, Any] | None:
    """(ContainerUsage, memory Stats or None) when the run has usage for this container
    (the usage module says under -v which containers it has none for or too few samples)."""
    usage = getattr(ctx, "usage", None)
    if usage is None or unit.tpl is None or unit.container is None or resources_unknown(unit.tpl):
        return None
    cu, mem = usage.memory(unit.obj, unit.tpl, unit.container)
    if cu is None:
        return None
    return cu, mem


def memory_request_limit(unit: Unit) -> tuple[Fraction | None, Fraction | None]:
    requests, limits = requests_limits(unit.container)
    return defaulted_requests(requests, limits).get("memory"), limits.get("memory")


def request_path(unit: Unit) -> tuple:
    """Where a memory request finding points: the request, else the limit it defaults from."""
    c = unit.container
    part = "requests" if "memory" in (c.resources.get("requests") or {}) else "limits"
    return c.path + ("resources", part, "memory")


def over(ctx: Any) -> str:
    from kubelint_ml.usage.model import duration_text

    return f"over {duration_text(ctx.usage.window.lookback)}"
