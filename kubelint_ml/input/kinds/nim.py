"""NVIDIA NIM Operator (``apps.nvidia.com/v1alpha1`` NIMService, NIMPipeline, NIMCache;
NVIDIA/k8s-nim-operator v3.1, ``api/apps/v1alpha1/nimservice_types.go`` and
``internal/controller/platform/standalone/nimservice.go``).

A NIMService is one pod (a Deployment, or a LeaderWorkerSet of ``multiNode.parallelism.pipeline``
pods per replica): the container ``<name>-ctr`` runs ``image.repository:tag`` with the service's
``command``, ``args``, ``env`` and ``resources``; ``sidecarContainers`` and ``initContainers`` are
the pod's; ``nodeSelector``, ``tolerations``, ``affinity``, ``priorityClassName``, ``schedulerName``
and ``runtimeClassName`` are the pod's. ``/dev/shm`` is the memory-backed emptyDir ``dshm`` sized by
``storage.sharedMemorySizeLimit`` (unbounded without it). Where the service names no GPU and no
``draResources``, the operator assigns ``nvidia.com/gpu``: the profile's tensor parallelism (1 when
the profile does not say; the profile is not read here, so 1 is assumed), or
``multiNode.parallelism.tensor``. A ``draResources`` entry naming a ResourceClaim or
ResourceClaimTemplate is a pod claim the container uses; one with ``claimCreationSpec`` asks for its
``devices`` (class and count; the CRD defaults them to ``gpu.nvidia.com`` and 1), the template the
operator makes. A multi-node service's container gets the operator's ``NIM_TENSOR_PARALLEL_SIZE`` and
``NIM_PIPELINE_PARALLEL_SIZE`` after its own env. Replicas are ``replicas`` (``scale.hpa.minReplicas`` with autoscaling). A NIMPipeline is
the NIMServices of its enabled ``services[].spec``. A NIMCache's caching Job asks for cpu and memory
only: no pod is judged.
"""

from __future__ import annotations

from typing import Any

from kubelint_ml.input.kinds.base import KindInfo, Pod, integer, none, text, with_device_class
from kubelint_ml.input.objects import K8sObject, dig

_POD_FIELDS = ("nodeSelector", "tolerations", "affinity", "priorityClassName", "schedulerName", "runtimeClassName")
_GPU = "nvidia.com/gpu"


def _image(image: Any) -> str:
    if isinstance(image, dict):
        repo = text(image.get("repository"), "")
        tag = image.get("tag")
        return f"{repo}:{tag}" if repo and isinstance(tag, (str, int, float)) and str(tag) else repo
    return text(image, "")


def _side(items: Any, path: tuple) -> list[tuple[Any, tuple]]:
    """NIMContainerSpec entries (image as repository and tag) as containers."""
    out: list[tuple[Any, tuple]] = []
    for i, c in enumerate(items if isinstance(items, list) else []):
        if isinstance(c, dict):
            c = {**c, "image": _image(c.get("image"))}
        out.append((c, path + (i,)))
    return out


def _claims(dra: Any) -> list[tuple[int, dict, list[dict]]]:
    """The pod claims of ``draResources`` entries that name a ResourceClaim or ResourceClaimTemplate,
    each with its index and the container's claims of it: the whole claim, or one per name of its ``requests``
    (internal/shared/resourceclaims.go, UpdateContainerResourceClaims)."""
    out = []
    for i, d in enumerate(dra if isinstance(dra, list) else []):
        if not isinstance(d, dict):
            continue
        for key in ("resourceClaimName", "resourceClaimTemplateName"):
            if isinstance(d.get(key), str):
                name = f"dra-{i}"
                requests = d.get("requests")
                named = [r for r in requests if isinstance(r, str)] if isinstance(requests, list) else []
                uses = [{"name": name, "request": r} for r in named] or [{"name": name}]
                out.append((i, {"name": name, key: d[key]}, uses))
                break
    return out


# DRADeviceSpec's defaults (api/apps/v1alpha1/dra_types.go: +kubebuilder:default=gpu.nvidia.com, count 1)
_DEFAULT_DEVICE_CLASS = "gpu.nvidia.com"


def _created_devices(dra: Any) -> list[tuple[str, int]]:
    """(device class, count) of the templates the operator creates (``claimCreationSpec.devices``); a
    device naming no class is of the CRD's default class, ``gpu.nvidia.com``."""
    out = []
    for d in dra if isinstance(dra, list) else []:
        devices = dig(d, "claimCreationSpec", "devices") if isinstance(d, dict) else None
        for dev in devices if isinstance(devices, list) else []:
            if not isinstance(dev, dict):
                continue
            device_class = dev.get("deviceClassName", _DEFAULT_DEVICE_CLASS)
            if isinstance(device_class, str):
                count = integer(dev.get("count"), 1)
                out.append((device_class, count if count and count > 0 else 1))
    return out


# The parallel sizes the operator gives a multi-node service's pods (getLWSCommonEnv), after the
# service's own env (utils.MergeEnvVars: a name the service sets is its own), and the field each is of.
_MULTI_NODE_ENV = (("NIM_TENSOR_PARALLEL_SIZE", "tensor"), ("NIM_PIPELINE_PARALLEL_SIZE", "pipeline"))


def _multi_node_env(container: dict, path: tuple, spec: dict) -> list[tuple[tuple, tuple]]:
    """A multi-node service (``multiNode.parallelism.pipeline`` above 1, IsMultiNode): the operator's
    parallel sizes added to the container's env (a size not given is 0, as GetMultiNode*Parallelism
    says); the renames that point them at ``multiNode.parallelism``."""
    parallelism = dig(spec, "multiNode", "parallelism")
    pipeline = dig(parallelism, "pipeline")
    own = container.get("env")
    if not (isinstance(pipeline, int) and pipeline > 1) or (own is not None and not isinstance(own, list)):
        return []
    env = list(own or [])
    named = {e.get("name") for e in env if isinstance(e, dict)}
    renames = []
    for name, field in _MULTI_NODE_ENV:
        if name in named:
            continue
        size = dig(parallelism, field)
        renames.append((path + ("env", len(env)), path + ("multiNode", "parallelism", field)))
        env.append({"name": name, "value": str(size if isinstance(size, int) and size > 0 else 0)})
    container["env"] = env
    return renames


def _nim_service(obj: K8sObject, path: tuple, spec: Any, role: str) -> Pod | None:
    if not isinstance(spec, dict):
        return None
    # a pipeline's services are NIMServices named after their entries
    name = role or text(dig(obj.data, "metadata", "name"), "nim")
    container: dict = {k: spec[k] for k in ("command", "args", "env") if k in spec}
    container["name"] = f"{name}-ctr"
    env_renames = _multi_node_env(container, path, spec)
    container["image"] = _image(spec.get("image"))
    res: Any = spec.get("resources")
    assumed = []
    tensor = dig(spec, "multiNode", "parallelism", "tensor")
    dra: Any = spec.get("draResources")
    if res is not None and not isinstance(res, dict):
        container["resources"] = res  # the wrong type: reported
    else:
        res = dict(res or {})
        given = [p for p in ("requests", "limits") if isinstance(res.get(p), dict) and _GPU in res[p]]
        # the operator assigns GPUs only for the model profile a service names (storage.nimCache.profile,
        # internal/controller/platform/standalone/nimservice.go): one naming a device of its own (a Kata
        # passthrough nvidia.com/pgpu) and no profile runs as written
        profile = dig(spec, "storage", "nimCache", "profile")
        own_device = any(
            isinstance(k, str) and "/" in k
            for p in ("requests", "limits")
            if isinstance(res.get(p), dict)
            for k in res[p]
        )
        if not given and not (isinstance(dra, list) and dra) and not (own_device and not profile):
            count = tensor if isinstance(tensor, int) and tensor > 0 else 1
            for part in ("requests", "limits"):
                have = res.get(part)
                res[part] = {**(have if isinstance(have, dict) else {}), _GPU: count}
            if not (isinstance(tensor, int) and tensor > 0):
                assumed.append("nvidia.com/gpu: 1 (the model profile's tensor parallelism is not read here)")
        container["resources"] = res
    claims = _claims(dra)
    claim_renames = []
    if claims:
        own: Any = res.get("claims") if isinstance(res, dict) else None
        used = list(own if isinstance(own, list) else [])
        for i, _, uses in claims:
            for j, use in enumerate(uses):
                at = ("draResources", i, "requests", j) if "request" in use else ("draResources", i)
                claim_renames.append((path + ("resources", "claims", len(used)), path + at))
                used.append(use)
        res["claims"] = used
    for device_class, count in _created_devices(dra):
        container = with_device_class(container, device_class, count)
    mounts: Any = spec.get("volumeMounts")
    container["volumeMounts"] = [
        *(mounts if isinstance(mounts, list) else []),
        {"name": "dshm", "mountPath": "/dev/shm"},
    ]
    shm: dict = {"medium": "Memory"}
    limit = dig(spec, "storage", "sharedMemorySizeLimit")
    if limit is not None:
        shm["sizeLimit"] = limit
    pod_spec = {k: spec[k] for k in _POD_FIELDS if k in spec}
    if claims:
        pod_spec["resourceClaims"] = [claim for _, claim, _ in claims]
    replicas = integer(spec.get("replicas"), 1)
    if dig(spec, "scale", "enabled") is True:
        replicas = integer(dig(spec, "scale", "hpa", "minReplicas"), 1)
    pipeline = dig(spec, "multiNode", "parallelism", "pipeline")
    if isinstance(pipeline, int) and pipeline > 1 and replicas is not None:
        replicas *= pipeline
    shm_path = path + ("storage", "sharedMemorySizeLimit") if limit is not None else path
    pod = Pod(
        path,
        pod_spec,
        role,
        replicas,
        [(container, path), *_side(spec.get("sidecarContainers"), path + ("sidecarContainers",))],
        init=_side(spec.get("initContainers"), path + ("initContainers",)),
        # the operator's volume, named under a path the file cannot have and renamed to the service's fields
        volumes=[({"name": "dshm", "emptyDir": shm}, path + ("volumes", "dshm"))],
        metadata={"labels": spec.get("labels"), "annotations": spec.get("annotations")},
        renames=[
            (path + ("metadata",), path),
            (path + ("resourceClaims",), path + ("draResources",)),
            # the dshm emptyDir's size is the service's storage.sharedMemorySizeLimit
            (path + ("volumes", "dshm", "emptyDir", "sizeLimit"), path + ("storage", "sharedMemorySizeLimit")),
            (path + ("volumes", "dshm"), shm_path),
            *env_renames,
            *claim_renames,
        ],
    )
    if assumed:
        pod.cache["assumed"] = "as the NIM operator completes it: " + ", ".join(assumed)
    # NIMContainerSpec (sidecarContainers, initContainers) has name, image, command, args, env and
    # workingDir only: no resources or volumeMounts for a fix to set.
    side = [
        (path + (key, i), f"a NIMService's {key} entries have no resources or volumeMounts (NIMContainerSpec)")
        for key in ("sidecarContainers", "initContainers")
        for i in range(len(spec[key]) if isinstance(spec.get(key), list) else 0)
    ]
    if side:
        pod.cache["foreign"] = side
    return pod


def _service(obj: K8sObject) -> list[Pod]:
    pod = _nim_service(obj, ("spec",), obj.data.get("spec"), "")
    return [] if pod is None else [pod]


def _pipeline(obj: K8sObject) -> list[Pod]:
    out = []
    services = dig(obj.data, "spec", "services")
    for i, svc in enumerate(services if isinstance(services, list) else []):
        if not isinstance(svc, dict) or svc.get("enabled") is False:
            continue
        pod = _nim_service(
            obj, ("spec", "services", i, "spec"), svc.get("spec"), text(svc.get("name"), f"services[{i}]")
        )
        if pod is not None:
            out.append(pod)
    return out


KINDS: dict[tuple[str, str], KindInfo] = {
    ("apps.nvidia.com", "NIMService"): KindInfo(none, False, _service),
    ("apps.nvidia.com", "NIMPipeline"): KindInfo(none, False, _pipeline),
    ("apps.nvidia.com", "NIMCache"): KindInfo(none, False, lambda o: []),
}
