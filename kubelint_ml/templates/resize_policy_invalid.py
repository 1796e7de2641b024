"""Container resizePolicy entries the API server rejects (in-place resize, KEP-1287, GA 1.35).

Followed: ``validateResizePolicy`` (pkg/apis/core/validation/validation.go): the
resource is cpu or memory, named once; the policy NotRequired or RestartContainer; both
written (an entry's fields are required, nothing defaults them); with the pod's
``restartPolicy: Never`` every entry must be NotRequired. From 1.36 a regular (non-sidecar) init
container may not ask for RestartContainer either: it is never resized (``validateInitContainers``,
k/k PR 137458, "Disallow setting a resize restart policy of `RestartContainer` on non-sidecar
initContainers").

A Kubeflow training-operator job's pods take their replica's ``restartPolicy``, which the operator
writes over the template's (``setRestartPolicy`` in kubeflow/training-operator
``pkg/controller.v1``: ``ExitCode`` becomes Never), defaulted per kind when left out
(``pkg/apis/kubeflow.org/v1``: ``PytorchJobDefaultRestartPolicy`` and ``PaddleJob``'s OnFailure,
TFJob's, XGBoostJob's, JAXJob's and MXJob's Never).
"""

from __future__ import annotations

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.input.kinds.kubeflow import KUBEFLOW_REPLICA_SPECS
from kubelint_ml.input.workloads import PodTemplate
from kubelint_ml.k8s.gates import enabled
from kubelint_ml.k8s.gates import of as gates_of

UNIT = "podTemplate"
INIT_RESTART_CONTAINER_REJECTED = (1, 36)  # RestartContainer on a regular init container
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    tpl = unit.tpl
    if not any(c.data.get("resizePolicy") is not None for c in tpl.all_containers):
        return None
    version, overrides = gates_of(ctx)
    if not enabled("InPlacePodVerticalScaling", version, overrides):
        return None  # the field is dropped
    pod_policy: tuple[object, str] | None = None  # the pods' restartPolicy, looked up when it matters
    init_checked = version is None or version >= INIT_RESTART_CONTAINER_REJECTED
    out: list[Hit] = []
    for c in tpl.all_containers:
        entries = c.data.get("resizePolicy")
        if not isinstance(entries, list):
            continue
        seen: set[str] = set()
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict):
                continue
            name = entry.get("resourceName")
            path = c.path + ("resizePolicy", i)
            for field in ("resourceName", "restartPolicy"):
                if entry.get(field) in (None, ""):
                    out.append(
                        Hit(
                            path,
                            f"{c.describe()} resizePolicy entry without {field}",
                            detail=(
                                f"{tpl.describe()}: {c.describe()} has a resizePolicy entry with no {field}, which "
                                "nothing defaults; the API server rejects the pod (Required value). Write "
                                + (
                                    "resourceName: cpu or memory"
                                    if field == "resourceName"
                                    else "restartPolicy: NotRequired or RestartContainer"
                                )
                            ),
                            container=c.name,
                            at_value=True,
                        )
                    )
            if isinstance(name, str) and name in seen:
                out.append(
                    Hit(
                        path + ("resourceName",),
                        f"{c.describe()} resizePolicy names {name} twice",
                        detail=(
                            f"{tpl.describe()}: {c.describe()} has two resizePolicy entries for {name}; the API "
                            f'server rejects the pod (Duplicate value: "{name}"). Keep one'
                        ),
                        container=c.name,
                        at_value=True,
                    )
                )
            if isinstance(name, str):
                seen.add(name)
            policy = entry.get("restartPolicy")
            if isinstance(policy, str) and policy not in ("NotRequired", "RestartContainer"):
                out.append(
                    Hit(
                        path + ("restartPolicy",),
                        f"{c.describe()} resizePolicy restartPolicy {policy}: only NotRequired or RestartContainer",
                        detail=(
                            f"{tpl.describe()}: {c.describe()} asks for {policy} on resize; the API server rejects "
                            f'the pod (Unsupported value: "{policy}": supported values: "NotRequired", '
                            '"RestartContainer"). Write NotRequired or RestartContainer (the case matters)'
                        ),
                        container=c.name,
                        at_value=True,
                    )
                )
            if isinstance(name, str) and name not in ("cpu", "memory"):
                out.append(
                    Hit(
                        path + ("resourceName",),
                        f"{c.describe()} resizePolicy names {name}: only cpu and memory resize in place",
                        detail=(
                            f"{tpl.describe()}: {c.describe()} has a resizePolicy for {name}; the API server rejects "
                            f'the pod (Unsupported value: "{name}": supported values: "cpu", "memory"): only cpu and '
                            "memory can be resized in place. Remove the entry"
                        ),
                        container=c.name,
                        at_value=True,
                    )
                )
            if policy == "RestartContainer" and c.role == "initContainer" and init_checked:
                out.append(
                    Hit(
                        path + ("restartPolicy",),
                        f"{c.describe()} resizePolicy {policy}: an init container that is not a sidecar is never "
                        "resized",
                        detail=(
                            f"{tpl.describe()}: {c.describe()} (no restartPolicy: Always, so not a sidecar) asks for "
                            f"{policy} on resize of {name if isinstance(name, str) else 'a resource'}; such a "
                            "container runs to completion and is never resized, and from Kubernetes 1.36 the API "
                            f'server rejects the pod (Invalid value: "{policy}"). Use NotRequired or leave the '
                            "entry out (or make the container a sidecar with restartPolicy: Always)"
                        ),
                        container=c.name,
                        at_value=True,
                    )
                )
                continue  # one finding for the entry, whatever the pod's restartPolicy
            if policy == "RestartContainer" and pod_policy is None:
                pod_policy = pod_restart_policy(tpl)
            if policy == "RestartContainer" and pod_policy is not None and pod_policy[0] == "Never":
                whence = pod_policy[1]
                out.append(
                    Hit(
                        path + ("restartPolicy",),
                        f"{c.describe()} resizePolicy {policy} in a restartPolicy: Never pod",
                        detail=(
                            f"{tpl.describe()}: {c.describe()} asks for {policy} on resize of "
                            f"{name if isinstance(name, str) else 'a resource'}, but the pod's restartPolicy is "
                            f"Never{whence}; the API server rejects the pod (Invalid value: \"{policy}\": must be 'NotRequired' "
                            f"when `restartPolicy` is 'Never'). Use NotRequired (or leave the entry out), or a pod that may restart "
                            "its containers"
                        ),
                        container=c.name,
                        at_value=True,
                    )
                )
    return out


# Kubeflow training-operator v1: a replica's restartPolicy when it sets none (<kind>DefaultRestartPolicy).
_REPLICA_DEFAULT = {
    "PyTorchJob": "OnFailure",
    "PaddleJob": "OnFailure",
    "TFJob": "Never",
    "XGBoostJob": "Never",
    "JAXJob": "Never",
    "MXJob": "Never",
}


def pod_restart_policy(tpl: PodTemplate) -> tuple[object, str]:
    """The restartPolicy the template's pods get, and where it comes from when not from the template
    (`` (the replica's restartPolicy, which the operator copies into the pod)``)."""
    obj = tpl.obj
    default = _REPLICA_DEFAULT.get(obj.kind) if obj.group == "kubeflow.org" else None
    if default is not None and obj.ref.apiVersion == "kubeflow.org/v1" and len(tpl.path) == 4:
        field = KUBEFLOW_REPLICA_SPECS[obj.kind]
        specs = obj.data.get("spec")
        replicas = specs.get(field) if isinstance(specs, dict) else None
        replica = replicas.get(tpl.path[2]) if isinstance(replicas, dict) and tpl.path[1] == field else None
        if isinstance(replica, dict):
            policy = replica.get("restartPolicy") or default
            if policy == "ExitCode":
                return "Never", " (the replica's restartPolicy ExitCode, which the operator runs as Never)"
            if replica.get("restartPolicy"):
                return policy, " (the replica's restartPolicy, which the operator copies into the pod)"
            return policy, f" ({obj.kind}'s default replica restartPolicy, which the operator copies into the pod)"
    return tpl.spec.get("restartPolicy"), ""
