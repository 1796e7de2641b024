"""An init container with probes or lifecycle hooks but no ``restartPolicy: Always``: the API server
rejects the pod.

Followed: ``validateInitContainers`` (pkg/apis/core/validation/validation.go): a regular init container
(no ``restartPolicy: Always``, which makes it a sidecar) may not set ``lifecycle``, ``livenessProbe``,
``readinessProbe`` or ``startupProbe`` ("Forbidden: may not be set for init containers without
restartPolicy=Always"), in every version with sidecars (GA since 1.33; beta and on from 1.29). From 1.35
(ContainerRestartRules) an init container's ``restartPolicy`` may also be ``Never`` or ``OnFailure``; it is
still not a sidecar. With the gate off (1.34) such a ``restartPolicy`` is dropped
(``dropContainerRestartRules``), with the same result. A pod whose templates a controller builds from
other fields (a guess by search) is not judged.
"""

from __future__ import annotations

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.templates._common import is_fragment

UNIT = "podTemplate"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}

SIDECAR_ONLY = ("livenessProbe", "readinessProbe", "startupProbe", "lifecycle")


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    tpl = unit.tpl
    if tpl.found_by_search:
        return None
    out = []
    for c in tpl.init_containers:
        if c.data.get("restartPolicy") == "Always":
            continue
        fields = [key for key in SIDECAR_ONLY if c.data.get(key) is not None]
        if not fields or (c.data.get("restartPolicy") is None and is_fragment(tpl)):
            continue  # (a kustomize patch may leave the restartPolicy to the base it patches)
        policy = c.data.get("restartPolicy")
        has = " and ".join(", ".join(fields).rsplit(", ", 1))
        out.append(
            Hit(
                c.path + (fields[0],),
                f"{c.describe()} has {'a ' if len(fields) == 1 else ''}{has} but no restartPolicy: Always",
                detail=f"{tpl.describe()}: {c.describe()} sets {has}, which only a sidecar (an init container with "
                f"restartPolicy: Always) may have"
                + (f"; its restartPolicy is {policy}" if isinstance(policy, str) else "")
                + ": the API server rejects the pod (Forbidden: may not be set for init containers without "
                "restartPolicy=Always), for a workload every pod its controller creates. Add restartPolicy: Always "
                "if it should run beside the main containers (a proxy, a log shipper, a model server helper), or "
                "remove the probes and hooks if it should run to completion first",
                container=c.name,
            )
        )
    return out or None
