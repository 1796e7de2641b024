"""AIBrix orchestration (``orchestration.aibrix.ai/v1alpha1`` StormService, RoleSet, RayClusterFleet,
RayClusterReplicaSet; vllm-project/aibrix v0.7, ``api/orchestration/v1alpha1``).

A StormService keeps ``replicas`` RoleSets of its ``spec.template.spec``; a RoleSet's
``roles[]`` each hold a native pod template, ``replicas`` pods (times ``podGroupSize`` when the
role runs pod groups). A RayClusterFleet (and a RayClusterReplicaSet) keeps ``replicas`` Ray
clusters of its ``spec.template.spec``, a KubeRay RayClusterSpec (head and worker groups).
"""

from __future__ import annotations

from collections.abc import Iterator

from kubelint_ml.input.kinds.base import Finder, KindInfo, TemplateSpot, integer, text
from kubelint_ml.input.kinds.ray import ray_groups
from kubelint_ml.input.objects import dig


def _roles(prefix: tuple, sets_key: tuple | None) -> Finder:
    def find(obj: dict) -> Iterator[TemplateSpot]:
        roles = dig(obj, *prefix, "roles")
        if not isinstance(roles, list):
            return
        sets = integer(dig(obj, *sets_key), 1) if sets_key else 1
        for i, role in enumerate(roles):
            if not isinstance(role, dict) or not isinstance(role.get("template"), dict):
                continue
            pods = integer(role.get("replicas"), 1)
            group = integer(role.get("podGroupSize"), 1)
            count = None if pods is None or group is None or sets is None else sets * pods * max(group, 1)
            yield prefix + ("roles", i, "template"), text(role.get("name"), f"roles[{i}]"), count

    return find


def _fleet(obj: dict) -> Iterator[TemplateSpot]:
    clusters = integer(dig(obj, "spec", "replicas"), 1)
    for path, role, pods in ray_groups(("spec", "template", "spec"))(obj):
        yield path, role, None if pods is None or clusters is None else pods * clusters


KINDS: dict[tuple[str, str], KindInfo] = {
    ("orchestration.aibrix.ai", "StormService"): KindInfo(
        _roles(("spec", "template", "spec"), ("spec", "replicas")), False
    ),
    ("orchestration.aibrix.ai", "RoleSet"): KindInfo(_roles(("spec",), None), False),
    ("orchestration.aibrix.ai", "RayClusterFleet"): KindInfo(_fleet, False),
    ("orchestration.aibrix.ai", "RayClusterReplicaSet"): KindInfo(_fleet, False),
}
