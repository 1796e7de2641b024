"""A pod's reference to its Kubernetes gang (KEP-4671) that the API server rejects or drops, or that
names a pod group its Workload lacks.

Followed: the pod API by version (``spec.workloadRef`` only in 1.35, ``spec.schedulingGroup`` from
1.36: :mod:`kubelint_ml.k8s.workload`), ``dropDisabledWorkloadRef`` (pkg/api/pod/util.go: with the
GenericWorkload gate off, its default in every version, the field is dropped), the
``WorkloadReference`` validation (``name`` a DNS subdomain, ``podGroup`` a DNS label, both required;
``podGroupReplicaKey`` a DNS label when set; ``schedulingGroup`` a union whose one member,
``podGroupName``, a DNS subdomain, must be set) and the scheduler's GangScheduling plugin (a pod whose
pod group is not in its Workload stays unschedulable until the Workload is recreated).

A Job's own gang, ``spec.scheduling`` (KEP-5547), is a ``batch/v1`` JobSpec field only from 1.37 (the
released OpenAPI), behind the WorkloadWithJob gate (alpha, off by default): before 1.37 kubectl's strict
field validation rejects the Job; with the gate off the API server drops the field on create and the
Job's pods are scheduled one by one.
"""

from __future__ import annotations

from collections.abc import Mapping

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.findings import is_builtin_group
from kubelint_ml.k8s.gates import decided, enabled, setting
from kubelint_ml.k8s.gates import of as gates_of
from kubelint_ml.k8s.resources import is_dns1123_label, is_dns1123_subdomain
from kubelint_ml.k8s.workload import (
    JOB_SCHEDULING,
    SCHEDULING_GROUP,
    WORKLOAD_REF,
    GangRef,
    field_served,
    field_versions,
    gang_refs,
)
from kubelint_ml.templates._cluster import cluster_of
from kubelint_ml.templates._priority import is_batch_job, job_spec, job_spec_path

UNIT = "podTemplate"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}

_OTHER = {WORKLOAD_REF: SCHEDULING_GROUP, SCHEDULING_GROUP: WORKLOAD_REF}


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    tpl = unit.tpl
    spec = tpl.spec
    own = is_batch_job(unit.obj) and job_spec(tpl).get("scheduling") is not None
    if WORKLOAD_REF not in spec and SCHEDULING_GROUP not in spec and not own:
        return None
    refs = gang_refs(spec)
    if not refs and not own:
        return None
    raw = getattr(getattr(ctx, "profile", None), "kubernetes_version", None)
    version, overrides = gates_of(ctx)
    cluster = cluster_of(ctx)
    cache = getattr(ctx, "cache", None)
    # the API serves them: the GenericWorkload gate on (profile.featureGates), a Workload or PodGroup among the
    # inputs or the context, or (audit) stored pods that kept the field
    seen = (cluster is not None and bool(cluster.workloads or cluster.native_pod_groups)) or (
        isinstance(cache, dict) and cache.get("generic_workload") is True
    )
    served = seen or enabled("GenericWorkload", version, overrides)
    who = tpl.describe()
    out: list[Hit] = []
    if own:  # (audit) stored Jobs that kept their spec.scheduling show WorkloadWithJob on
        job_served = (
            enabled("WorkloadWithJob", version, overrides)
            or (seen and "WorkloadWithJob" not in overrides)
            or (isinstance(cache, dict) and cache.get("workload_with_job") is True)
        )
        out = _job_scheduling(unit, raw, version, job_served, overrides)
    for ref in refs:
        path = tpl.spec_path + (ref.field,)
        if not field_served(ref.field, version):
            strict = is_builtin_group(unit.obj.group)
            effect = (
                "the API server rejects the object (strict field validation)"
                if strict
                else "it is not applied to the pods"
            )
            other = _OTHER[ref.field]
            out.append(
                Hit(
                    path,
                    f"spec.{ref.field} is not a pod field in Kubernetes {raw} ({field_versions(ref.field)})",
                    severity="error" if strict else "warning",
                    detail=f"{who}: spec.{ref.field} is a pod field {field_versions(ref.field)}; on {raw} it is "
                    f"unknown: {effect}, and no gang is formed"
                    + (
                        f"; write spec.{other} ({field_versions(other)}) instead"
                        if field_served(other, version)
                        else ""
                    ),
                )
            )
            continue
        if decided("GenericWorkload", version, overrides) and not served:
            out.append(
                Hit(
                    path,
                    f"spec.{ref.field} is dropped unless the GenericWorkload gate is on "
                    f"({setting('GenericWorkload', version, overrides, raw)})",
                    severity="warning",
                    detail=f"{who}: the Workload API and the pod's spec.{ref.field} are alpha (beta from 1.37) and "
                    f"off by default; with the GenericWorkload gate off the API server drops the field and the "
                    f"pods are scheduled one by one, without a gang. Enable GenericWorkload on the API server and "
                    f"the scheduler (and GangScheduling before 1.37), or pass the cluster's Workloads and "
                    f"PodGroups with --context",
                )
            )
            continue
        out.extend(_invalid(ref, path, who))
        if ref.field == WORKLOAD_REF and cluster is not None and ref.name and ref.group:
            groups = cluster.workloads.get((unit.obj.ref.namespace or "default", ref.name))
            if groups is not None and ref.group not in groups:
                known = ", ".join(f"'{g}'" for g in sorted(groups)) or "none"
                out.append(
                    Hit(
                        path + ("podGroup",),
                        f"Workload '{ref.name}' has no pod group '{ref.group}' (it has {known})",
                        at_value=True,
                        detail=f"{who}: spec.workloadRef names pod group '{ref.group}' of Workload '{ref.name}', "
                        f"which lists {known}; the scheduler keeps the pods unschedulable until a Workload with "
                        f"that pod group exists. Name one of its pod groups",
                    )
                )
    return out or None


def _job_scheduling(
    unit: Unit, raw: str | None, version: tuple[int, int] | None, served: bool, overrides: Mapping[str, bool]
) -> list[Hit]:
    """A Job's ``spec.scheduling``: not a Job field before 1.37 (rejected), dropped with WorkloadWithJob off."""
    if not decided("WorkloadWithJob", version, overrides):
        return []
    tpl = unit.tpl
    path = job_spec_path(tpl) + ("scheduling",)
    who = unit.obj.ref.display()
    if version is not None and version < JOB_SCHEDULING:
        return [
            Hit(
                path,
                f"spec.scheduling is not a Job field in Kubernetes {raw} (from Kubernetes 1.37)",
                detail=f"{who}: a Job's own gang (spec.scheduling, KEP-5547) is a batch/v1 field from 1.37; on {raw} "
                "it is unknown and the API server rejects the Job (strict field validation). Join the pods to a "
                "gang through the pod template's "
                + (f"spec.{SCHEDULING_GROUP} and a PodGroup" if version >= (1, 36) else f"spec.{WORKLOAD_REF}")
                + " instead, or remove spec.scheduling",
            )
        ]
    if served:
        return []
    return [
        Hit(
            path,
            "spec.scheduling is dropped unless the WorkloadWithJob gate is on ("
            + ("" if "WorkloadWithJob" in overrides else "alpha, ")
            + f"{setting('WorkloadWithJob', version, overrides, raw)})",
            severity="warning",
            detail=f"{who}: with the WorkloadWithJob gate off (its default) the API server drops the Job's "
            "spec.scheduling on create: no Workload or PodGroup is made and the pods are scheduled one by one, "
            "without a gang. Enable WorkloadWithJob and GenericWorkload on the API server, the controller manager "
            "and the scheduler, or pass the cluster's Workloads and PodGroups with --context",
        )
    ]


def _invalid(ref: GangRef, path: tuple, who: str) -> list[Hit]:
    """The pod validation's rejections of the reference's names."""
    if ref.field == SCHEDULING_GROUP:
        # PodSchedulingGroup: "Exactly one field must be specified", and podGroupName is its one field
        checks = [("podGroupName", True, is_dns1123_subdomain, "a DNS subdomain")]
    else:
        checks = [
            ("name", True, is_dns1123_subdomain, "a DNS subdomain"),
            ("podGroup", True, is_dns1123_label, "a DNS label"),
            ("podGroupReplicaKey", False, is_dns1123_label, "a DNS label"),
        ]
    out = []
    for key, required, valid, what in checks:
        value = ref.data.get(key)
        if value is None or value == "":
            if required:
                out.append(
                    Hit(
                        path,
                        f"spec.{ref.field}.{key} is required",
                        detail=f"{who}: the API server rejects the pod (spec.{ref.field}.{key}: Required value)",
                    )
                )
            continue
        if not isinstance(value, str) or not valid(value):
            out.append(
                Hit(
                    path + (key,),
                    f"spec.{ref.field}.{key} {value!r} is not {what}",
                    at_value=True,
                    detail=f"{who}: the API server rejects the pod (spec.{ref.field}.{key}: Invalid value: "
                    f"must be {what}: lower-case letters, digits and '-'"
                    + (", dot-separated" if what == "a DNS subdomain" else "")
                    + ")",
                )
            )
    return out
