"""LeaderWorkerSet (``leaderworkerset.x-k8s.io/v1``, kubernetes-sigs/lws ``api/leaderworkerset/v1`` at
060ab4da): per group (``replicas``) one leader (``leaderTemplate``, or the worker template when absent)
and ``size`` - 1 workers. DisaggregatedSet (``disaggregatedset.x-k8s.io/v1``, the same repository,
``api/disaggregatedset/v1``, ``pkg/controllers/disaggregatedset``): each of ``roles[]`` (prefill, decode)
is a LeaderWorkerSet's ``spec`` inline, made once per slice (``slices``, 1 by default)."""

from __future__ import annotations

from collections.abc import Iterator

from kubelint_ml.input.kinds.base import KindInfo, TemplateSpot, integer
from kubelint_ml.input.objects import dig


def _groups(spec: dict, path: tuple, role: str = "", copies: int | None = 1) -> Iterator[TemplateSpot]:
    """The leader and worker templates of the LeaderWorkerSetSpec ``spec`` at ``path``, made ``copies`` times."""
    lwt = spec.get("leaderWorkerTemplate")
    if not isinstance(lwt, dict):
        return
    size = integer(lwt.get("size"), 1)
    groups = integer(spec.get("replicas"), 1)
    groups = None if groups is None or copies is None else groups * copies
    at = path + ("leaderWorkerTemplate",)
    if isinstance(lwt.get("leaderTemplate"), dict):
        yield at + ("leaderTemplate",), f"{role} leader" if role else "leader", groups
    if isinstance(lwt.get("workerTemplate"), dict):
        workers = None if size is None or groups is None else groups * (size - (1 if "leaderTemplate" in lwt else 0))
        yield at + ("workerTemplate",), f"{role} worker" if role else "worker", workers


def _lws(obj: dict) -> Iterator[TemplateSpot]:
    spec = obj.get("spec")
    if isinstance(spec, dict):
        yield from _groups(spec, ("spec",))


def _disaggregated(obj: dict) -> Iterator[TemplateSpot]:
    roles = dig(obj, "spec", "roles")
    slices = integer(dig(obj, "spec", "slices"), 1)
    for i, role in enumerate(roles if isinstance(roles, list) else []):
        spec = role.get("spec") if isinstance(role, dict) else None
        if isinstance(spec, dict):
            name = role["name"] if isinstance(role.get("name"), str) else f"roles[{i}]"
            yield from _groups(spec, ("spec", "roles", i, "spec"), name, slices)


KINDS: dict[tuple[str, str], KindInfo] = {
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): KindInfo(_lws, False),
    ("disaggregatedset.x-k8s.io", "DisaggregatedSet"): KindInfo(_disaggregated, False),
}
