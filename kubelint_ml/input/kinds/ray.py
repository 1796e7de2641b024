"""KubeRay (``ray.io/v1`` RayCluster, RayJob, RayService, RayCronJob; ray-project/kuberay
``ray-operator/apis/ray/v1``, v1.7, RayCronJob at feeaf72f): the head group's template (one pod) and each
worker group's (``replicas`` x ``numOfHosts``); a RayJob's ``submitterPodTemplate`` too. A RayCronJob's
``jobTemplate`` is the RayJobSpec of the RayJob each run creates (``constructRayJob``: its spec copied,
none of the RayCronJob's labels)."""

from __future__ import annotations

from collections.abc import Iterator

from kubelint_ml.input.kinds.base import Finder, KindInfo, TemplateSpot, at, chain, integer, text
from kubelint_ml.input.objects import dig


def ray_groups(prefix: tuple) -> Finder:
    """The head group's template (one pod) and each worker group's (replicas x numOfHosts) of the
    RayClusterSpec at ``prefix``."""

    def find(obj: dict) -> Iterator[TemplateSpot]:
        cluster = dig(obj, *prefix)
        if not isinstance(cluster, dict):
            return
        if isinstance(dig(cluster, "headGroupSpec"), dict):
            yield prefix + ("headGroupSpec", "template"), "head", 1
        groups = cluster.get("workerGroupSpecs")
        if isinstance(groups, list):
            for i, g in enumerate(groups):
                if not isinstance(g, dict):
                    continue
                name = text(g.get("groupName"), f"workerGroupSpecs[{i}]")
                reps = integer(g.get("replicas"), 0)
                hosts = integer(g.get("numOfHosts"), 1)
                yield (
                    prefix + ("workerGroupSpecs", i, "template"),
                    name,
                    None if reps is None or hosts is None else reps * hosts,
                )

    return find


KINDS: dict[tuple[str, str], KindInfo] = {
    ("ray.io", "RayCluster"): KindInfo(ray_groups(("spec",)), True),
    ("ray.io", "RayJob"): KindInfo(
        chain(ray_groups(("spec", "rayClusterSpec")), at("spec", "submitterPodTemplate")), True
    ),
    ("ray.io", "RayService"): KindInfo(ray_groups(("spec", "rayClusterConfig")), False),
    ("ray.io", "RayCronJob"): KindInfo(
        chain(ray_groups(("spec", "jobTemplate", "rayClusterSpec")), at("spec", "jobTemplate", "submitterPodTemplate")),
        True,
    ),
}
