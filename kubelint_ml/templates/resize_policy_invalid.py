"""Container resizePolicy entries the API server rejects (in-place resize, KEP-1287, GA 1.35).

Followed: ``validateResizePolicy`` (pkg/apis/core/validation/validation.go): the
resource is cpu or memory; with the pod's ``restartPolicy: Never`` every entry
must be NotRequired (the default).
"""

from __future__ import annotations

from kubelint_ml.engine.api import Hit, Unit
from kubelint_ml.k8s.version import parse_version

UNIT = "podTemplate"
DEFAULTS: dict = {}
PARAMS = {"type": "object", "additionalProperties": False, "properties": {}}


def check(unit: Unit, params: dict, ctx) -> list[Hit] | None:
    tpl = unit.tpl
    version = parse_version(getattr(getattr(ctx, "profile", None), "kubernetes_version", None))
    if version is not None and version < (1, 33):
        return None  # InPlacePodVerticalScaling off by default: the field is dropped
    never = tpl.spec.get("restartPolicy") == "Never"
    out: list[Hit] = []
    for c in tpl.all_containers:
        entries = c.data.get("resizePolicy")
        if not isinstance(entries, list):
            continue
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict):
                continue
            name = entry.get("resourceName")
            path = c.path + ("resizePolicy", i)
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
            policy = entry.get("restartPolicy")
            if never and isinstance(policy, str) and policy != "NotRequired":
                out.append(
                    Hit(
                        path + ("restartPolicy",),
                        f"{c.describe()} resizePolicy {policy} in a restartPolicy: Never pod",
                        detail=(
                            f"{tpl.describe()}: {c.describe()} asks for {policy} on resize of "
                            f"{name if isinstance(name, str) else 'a resource'}, but the pod's restartPolicy is "
                            f"Never; the API server rejects the pod (must be 'NotRequired' when `restartPolicy` is "
                            f"'Never'). Use NotRequired (the default), or a pod that may restart its containers"
                        ),
                        container=c.name,
                        at_value=True,
                    )
                )
    return out
