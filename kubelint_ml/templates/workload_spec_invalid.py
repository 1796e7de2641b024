"""A Kubernetes Workload or PodGroup (``scheduling.k8s.io``, KEP-4671) that the API server rejects.

Followed: ``ValidateWorkload`` (pkg/apis/scheduling/validation/validation.go): one to 8 pod groups
(``spec.podGroups`` in v1alpha1, ``spec.podGroupTemplates`` from v1alpha2), each named by a DNS
label, no name twice, and exactly one of ``basic`` and ``gang`` in its policy, whose ``minCount`` is
required and positive; a PodGroup's ``spec.schedulingPolicy`` likewise. The structure itself (types,
unknown fields) is ``--schema``'s.
"""

from __future__ import annotations

from typing import Any

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.k8s.resources import is_dns1123_label

UNIT = "object"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}

MAX_POD_GROUPS = 8  # scheduling.WorkloadMaxPodGroups
_GROUPS = (("podGroups", "policy"), ("podGroupTemplates", "schedulingPolicy"))


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    obj = unit.obj
    if obj.group != "scheduling.k8s.io" or obj.kind not in ("Workload", "PodGroup"):
        return None
    spec = obj.data.get("spec")
    if not isinstance(spec, dict):
        return None
    who = obj.ref.display()
    if obj.kind == "PodGroup":
        return _policy(spec.get("schedulingPolicy"), ("spec", "schedulingPolicy"), who) or None
    key, policy_key = next(((k, p) for k, p in _GROUPS if k in spec), _GROUPS[0])
    groups = spec.get(key)
    if not isinstance(groups, list):
        return None  # absent or not a list: the schema's business
    out: list[Hit] = []
    if not groups or len(groups) > MAX_POD_GROUPS:
        out.append(
            Hit(
                ("spec", key),
                f"spec.{key} has {len(groups)} pod groups: a Workload has 1 to {MAX_POD_GROUPS}",
                detail=f"{who}: the API server rejects the Workload (spec.{key}: "
                + (
                    "Required value: must have at least one item)"
                    if not groups
                    else f"Too many: must have at most {MAX_POD_GROUPS} items)"
                ),
            )
        )
    seen: set[str] = set()
    for i, group in enumerate(groups):
        if not isinstance(group, dict):
            continue
        path = ("spec", key, i)
        name = group.get("name")
        if not isinstance(name, str) or not name:
            out.append(Hit(path, f"spec.{key}[{i}] has no name", detail=f"{who}: spec.{key}[{i}].name: Required value"))
        elif not is_dns1123_label(name):
            out.append(
                Hit(
                    path + ("name",),
                    f"pod group name {name!r} is not a DNS label",
                    at_value=True,
                    detail=f"{who}: the API server rejects the Workload (spec.{key}[{i}].name: Invalid value: "
                    "must be a DNS label: at most 63 lower-case letters, digits and '-')",
                )
            )
        elif name in seen:
            out.append(
                Hit(
                    path + ("name",),
                    f"pod group '{name}' is listed twice",
                    at_value=True,
                    detail=f"{who}: the API server rejects the Workload (spec.{key}[{i}]: Duplicate value)",
                )
            )
        if isinstance(name, str):
            seen.add(name)
        out.extend(_policy(group.get(policy_key), path + (policy_key,), who))
    return out or None


def _policy(policy: Any, path: tuple, who: str) -> list[Hit]:
    """Exactly one of basic and gang; a gang's minCount required and positive."""
    if not isinstance(policy, dict):
        return [
            Hit(
                path[:-1],
                f"{path[-1]} must set one of basic, gang",
                detail=f"{who}: the API server rejects it ({path[-1]}: Invalid value: must specify one of: "
                "`basic`, `gang`)",
            )
        ]
    set_ = [k for k in ("basic", "gang") if policy.get(k) is not None]
    if len(set_) != 1:
        return [
            Hit(
                path,
                f"{path[-1]} must set exactly one of basic, gang" + (f" (sets {', '.join(set_)})" if set_ else ""),
                detail=f"{who}: the API server rejects it ({path[-1]}: Invalid value: exactly one of `basic`, "
                "`gang` is required)",
            )
        ]
    gang = policy.get("gang")
    if not isinstance(gang, dict):
        return []
    count = gang.get("minCount")
    if count is None or count == 0:
        return [
            Hit(
                path + ("gang",),
                "gang minCount is required (at least 1)",
                detail=f"{who}: the API server rejects it (gang.minCount: Required value)",
            )
        ]
    if isinstance(count, int) and not isinstance(count, bool) and count < 0:
        return [
            Hit(
                path + ("gang", "minCount"),
                f"gang minCount {count} is negative",
                at_value=True,
                detail=f"{who}: the API server rejects it (gang.minCount: Invalid value: {count}: must be greater "
                "than zero)",
            )
        ]
    return []
