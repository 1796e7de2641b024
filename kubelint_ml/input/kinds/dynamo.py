"""NVIDIA Dynamo (``nvidia.com/v1alpha1`` DynamoGraphDeployment; ai-dynamo/dynamo
``deploy/cloud/operator/api/v1alpha1``, v0.4): each ``spec.services.<name>`` is a pod whose main
container gets the service's ``resources``."""

from __future__ import annotations

from typing import Any

from kubelint_ml.input.kinds.base import KindInfo, Pod, integer, listed, none, text
from kubelint_ml.input.objects import K8sObject, dig


def _dynamo_resources(res: Any) -> dict:
    """Dynamo's ``resources`` ({requests, limits}: cpu, memory, gpu, custom) as a container's."""
    out: dict = {}
    if not isinstance(res, dict):
        return out
    for part in ("requests", "limits"):
        given = res.get(part)
        if not isinstance(given, dict):
            continue
        found = {}
        for k, v in given.items():
            if k == "gpu":
                found["nvidia.com/gpu"] = v
            elif k == "custom" and isinstance(v, dict):
                found.update(v)
            elif k in ("cpu", "memory", "ephemeral-storage"):
                found[k] = v
        out[part] = found
    return out


def _dynamo(obj: K8sObject) -> list[Pod]:
    services = dig(obj.data, "spec", "services")
    if not isinstance(services, dict):
        return []
    out = []
    for name in sorted(services, key=str):
        svc = services[name]
        if not isinstance(svc, dict):
            continue
        path = ("spec", "services", name)
        extra: Any = svc.get("extraPodSpec") if isinstance(svc.get("extraPodSpec"), dict) else {}
        main: Any = extra.get("mainContainer") if isinstance(extra.get("mainContainer"), dict) else {}
        container = {**main, "name": text(main.get("name"), "main")}
        container.setdefault("image", "the Dynamo runtime image")
        own = main.get("resources") if isinstance(main.get("resources"), dict) else {}
        res = _dynamo_resources(svc.get("resources"))
        for part in ("requests", "limits"):
            if isinstance(own.get(part), dict):
                res[part] = {**res.get(part, {}), **own[part]}
        container["resources"] = res
        renames = [
            (path + ("resources", "requests", "nvidia.com/gpu"), path + ("resources", "requests", "gpu")),
            (path + ("resources", "limits", "nvidia.com/gpu"), path + ("resources", "limits", "gpu")),
            (path + ("resources",), path + ("resources",)),
            (path + ("metadata",), path + ("extraPodSpec",)),
        ]
        spec = {k: v for k, v in extra.items() if k not in ("mainContainer", "containers", "volumes", "initContainers")}
        containers = [(container, path)] + listed(extra.get("containers"), path + ("extraPodSpec", "containers"))
        out.append(
            Pod(
                path,
                spec,
                str(name),
                integer(svc.get("replicas"), 1),
                containers,
                init=listed(extra.get("initContainers"), path + ("extraPodSpec", "initContainers")),
                volumes=listed(extra.get("volumes"), path + ("extraPodSpec", "volumes")),
                renames=renames + [(path + (k,), path + ("extraPodSpec", k)) for k in spec],
                fix_note="the Dynamo operator builds the main container's resources from the service's resources "
                "(gpu, cpu, memory): change those",
            )
        )
    return out


KINDS: dict[tuple[str, str], KindInfo] = {
    ("nvidia.com", "DynamoGraphDeployment"): KindInfo(none, False, _dynamo),
}
