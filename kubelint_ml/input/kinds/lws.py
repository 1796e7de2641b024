"""LeaderWorkerSet (``leaderworkerset.x-k8s.io/v1``, kubernetes-sigs/lws ``api/leaderworkerset/v1`` at
060ab4da): per group (``replicas``) one leader (``leaderTemplate``, or the worker template when absent)
and ``size`` - 1 workers."""

from __future__ import annotations

from collections.abc import Iterator

from kubelint_ml.input.kinds.base import KindInfo, TemplateSpot, integer
from kubelint_ml.input.objects import dig


def _lws(obj: dict) -> Iterator[TemplateSpot]:
    lwt = dig(obj, "spec", "leaderWorkerTemplate")
    if not isinstance(lwt, dict):
        return
    size = integer(lwt.get("size"), 1)
    groups = integer(dig(obj, "spec", "replicas"), 1)
    if isinstance(lwt.get("leaderTemplate"), dict):
        yield ("spec", "leaderWorkerTemplate", "leaderTemplate"), "leader", groups
    if isinstance(lwt.get("workerTemplate"), dict):
        workers = None if size is None or groups is None else groups * (size - (1 if "leaderTemplate" in lwt else 0))
        yield ("spec", "leaderWorkerTemplate", "workerTemplate"), "worker", workers


KINDS: dict[tuple[str, str], KindInfo] = {
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): KindInfo(_lws, False),
}
