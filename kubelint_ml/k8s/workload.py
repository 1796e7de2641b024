"""Kubernetes' own gang scheduling (KEP-4671, the Workload API): how a pod names its gang, by version.

1.35 (``scheduling.k8s.io/v1alpha1``): a Workload lists ``spec.podGroups[]`` (``name``,
``policy.gang.minCount`` or ``policy.basic``) and a pod names one by ``spec.workloadRef``
(``name``: the Workload, ``podGroup``, optional ``podGroupReplicaKey``: one gang per key).

1.36 (``v1alpha2``) and 1.37 (``v1beta1``): the Workload holds ``spec.podGroupTemplates[]``
(``schedulingPolicy``), a separate PodGroup object holds the runtime gang
(``spec.schedulingPolicy.gang.minCount``), and a pod names it by ``spec.schedulingGroup.podGroupName``;
``workloadRef`` is gone from the pod API.

Both are behind the GenericWorkload gate (GangScheduling for the scheduler plugin in 1.35 and 1.36,
merged into GenericWorkload in 1.37), alpha from 1.35 and beta from 1.37, off by default in every
version: with it off the API server drops the pod's field (``dropDisabledWorkloadRef``,
pkg/api/pod/util.go) and serves no Workload or PodGroup.
"""

from __future__ import annotations

from typing import Any

from kubelint_ml.records import Record

WORKLOAD_REF = "workloadRef"
SCHEDULING_GROUP = "schedulingGroup"
# The Kubernetes versions whose pod API has the field (None: open-ended).
FIELD_VERSIONS: dict[str, tuple[tuple[int, int], tuple[int, int] | None]] = {
    WORKLOAD_REF: ((1, 35), (1, 35)),
    SCHEDULING_GROUP: ((1, 36), None),
}
# A Job's own gang, batch/v1 JobSpec.scheduling (KEP-5547, the WorkloadWithJob gate, alpha and off by default)
JOB_SCHEDULING = (1, 37)


class GangRef(Record):
    """A pod spec's reference to its gang."""

    field: str  # WORKLOAD_REF or SCHEDULING_GROUP
    name: str | None  # the Workload (workloadRef) or the PodGroup (schedulingGroup)
    group: str | None  # workloadRef.podGroup; None for schedulingGroup
    replica_key: str  # workloadRef.podGroupReplicaKey ("" when unset)
    data: dict  # the field's mapping as written
    __slots__ = _fields = ("field", "name", "group", "replica_key", "data")

    def __init__(self, field: str, name: str | None, group: str | None, replica_key: str, data: dict) -> None:
        self.field = field
        self.name = name
        self.group = group
        self.replica_key = replica_key
        self.data = data

    @property
    def name_key(self) -> str:
        """The key that names the gang: ``workloadRef.podGroup`` or ``schedulingGroup.podGroupName``."""
        return "podGroup" if self.field == WORKLOAD_REF else "podGroupName"

    def describe(self) -> str:
        if self.field == WORKLOAD_REF:
            return f"Workload '{self.name}' pod group '{self.group}'"
        return f"PodGroup '{self.name}'"


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def gang_refs(spec: Any) -> list[GangRef]:
    """The gang references a pod spec writes (either field, or both when both are written)."""
    if not isinstance(spec, dict):
        return []
    out = []
    ref = spec.get(WORKLOAD_REF)
    if isinstance(ref, dict):
        key = ref.get("podGroupReplicaKey")
        out.append(GangRef(WORKLOAD_REF, _str(ref.get("name")), _str(ref.get("podGroup")), str(key or ""), ref))
    group = spec.get(SCHEDULING_GROUP)
    if isinstance(group, dict):
        out.append(GangRef(SCHEDULING_GROUP, _str(group.get("podGroupName")), None, "", group))
    return out


def field_served(field: str, version: tuple[int, int] | None) -> bool:
    """Whether the pod API of ``version`` has ``field`` (an unknown version: either, as written)."""
    if version is None:
        return True
    first, last = FIELD_VERSIONS[field]
    return version >= first and (last is None or version <= last)


def field_versions(field: str) -> str:
    first, last = FIELD_VERSIONS[field]
    if last is None:
        return f"from Kubernetes {first[0]}.{first[1]}"
    return f"only in Kubernetes {first[0]}.{first[1]}" if first == last else f"in {first}..{last}"
