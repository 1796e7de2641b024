"""NVIDIA Dynamo (``nvidia.com`` DynamoGraphDeployment, DynamoComponentDeployment; ai-dynamo/dynamo
``deploy/operator/api``, v1.3, as its samples for the 1.3.1 runtime use it): in ``v1alpha1`` each ``spec.services.<name>`` is a pod whose main
container gets the service's ``resources``; in ``v1beta1`` (the storage version) each
``spec.components[]`` carries a native ``podTemplate`` whose container ``main`` the operator completes
(command, env, probes; no resources). Both get the operator's ``/dev/shm``: a memory-backed emptyDir
of 8Gi unless ``sharedMemory`` (v1alpha1: ``{disabled, size}``) or ``sharedMemorySize`` (v1beta1:
``"0"`` disables it) says otherwise. A component's ``device`` (vendor-agnostic devices, e.g. HAMi's)
gives the main container its ``resources`` as requests and limits, and the pod its node selector,
tolerations and scheduler. A component's pods are ``replicas`` x ``multinode.nodeCount``."""

from __future__ import annotations

from typing import Any

from kubelint_ml.input.kinds.base import KindInfo, Pod, integer, listed, none, text
from kubelint_ml.input.objects import K8sObject, dig


def _gpu_name(given: Any) -> str:
    """The resource a ``ResourceItem``'s ``gpu`` count asks for: its ``gpuType`` (e.g.
    ``gpu.intel.com/xe``), by default ``nvidia.com/gpu`` (api/v1alpha1/common.go)."""
    kind = given.get("gpuType") if isinstance(given, dict) else None
    return kind if isinstance(kind, str) and kind.strip() else "nvidia.com/gpu"


def _dynamo_resources(res: Any) -> dict:
    """Dynamo's ``resources`` ({requests, limits}: cpu, memory, gpu with gpuType, custom; claims) as a
    container's."""
    out: dict = {}
    if not isinstance(res, dict):
        return out
    if isinstance(res.get("claims"), list):
        out["claims"] = res["claims"]
    for part in ("requests", "limits"):
        given = res.get(part)
        if not isinstance(given, dict):
            continue
        found = {}
        for k, v in given.items():
            if k == "gpu":
                found[_gpu_name(given)] = v
            elif k == "custom" and isinstance(v, dict):
                found.update(v)
            elif k in ("cpu", "memory", "ephemeral-storage"):
                found[k] = v
        out[part] = found
    return out


DEFAULT_SHM = "8Gi"  # the operator's /dev/shm when the component does not size it


def _merged_env(*lists: Any) -> list | None:
    """Env lists merged by name, a later list's variable over an earlier one's (``MergeEnvs``: the graph's
    ``envs``, then the service's, then the main container's own); None when none is a list."""
    given = [x for x in lists if isinstance(x, list)]
    if not given:
        return None
    named: dict = {}
    unnamed = []
    for env in given:
        for item in env:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                named.pop(item["name"], None)
                named[item["name"]] = item
            else:
                unnamed.append(item)
    return [*named.values(), *unnamed]


def _pods(component: dict) -> int | None:
    replicas = integer(component.get("replicas"), 1)
    nodes = integer(dig(component, "multinode", "nodeCount"), 1)
    return None if replicas is None or nodes is None else replicas * max(nodes, 1)


def _with_shm(container: Any, volumes: list[tuple[Any, tuple]], size: Any, where: tuple) -> Any:
    """The operator's /dev/shm (``size`` None or "0": none) added to ``volumes``, and its mount to the
    main container unless it mounts /dev/shm itself; returns the container."""
    if size is None or str(size).strip() in ("0", ""):
        return container
    volumes.append(({"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": size}}, where))
    if not isinstance(container, dict):
        return container
    mounts: Any = container.get("volumeMounts")
    mounts = mounts if isinstance(mounts, list) else []
    if any(isinstance(m, dict) and m.get("mountPath") == "/dev/shm" for m in mounts):
        return container
    return {**container, "volumeMounts": [*mounts, {"name": "shared-memory", "mountPath": "/dev/shm"}]}


def _with_device(
    pod_spec: dict, spath: tuple, container: Any, cpath: tuple, device: Any, dpath: tuple
) -> tuple[dict, Any, list[tuple[tuple, tuple]]]:
    """A component's ``device`` (``applyDeviceSpec``, deploy/operator/internal/dynamo/device.go): each
    of its ``resources`` is the main container's request and limit (over what the container says);
    its ``nodeSelector`` keys the pod lacks, its ``tolerations``, and its ``schedulerName`` unless the
    pod names one are the pod's. Returns (pod spec, container, renames to the ``device`` fields)."""
    if not isinstance(device, dict):
        return pod_spec, container, []
    renames: list[tuple[tuple, tuple]] = []
    pod_spec = dict(pod_spec)
    for key in ("nodeSelector", "tolerations", "schedulerName"):
        value, own = device.get(key), pod_spec.get(key)
        if not value or not isinstance(value, (dict, list, str)):
            continue
        if not own:
            pod_spec[key] = value
            renames.append((spath + (key,), dpath + (key,)))
        elif isinstance(value, dict) and isinstance(own, dict):
            pod_spec[key] = {**value, **own}
        elif isinstance(value, list) and isinstance(own, list):
            pod_spec[key] = [*own, *(t for t in value if t not in own)]
    resources = device.get("resources")
    if isinstance(resources, dict) and resources and isinstance(container, dict):
        res: Any = container.get("resources")
        res = dict(res) if isinstance(res, dict) else {}
        for part in ("requests", "limits"):
            have = res.get(part)
            res[part] = {**(have if isinstance(have, dict) else {}), **resources}
            for name in resources:
                renames.append((cpath + ("resources", part, name), dpath + ("resources", name)))
        container = {**container, "resources": res}
    return pod_spec, container, renames


def _component(obj: K8sObject, path: tuple, comp: dict, role: str) -> Pod | None:
    """A v1beta1 component: its ``podTemplate`` with the operator's /dev/shm."""
    tpl = comp.get("podTemplate")
    spec = tpl.get("spec") if isinstance(tpl, dict) else None
    if not isinstance(spec, dict):
        return None
    spath = path + ("podTemplate", "spec")
    containers = listed(spec.get("containers"), spath + ("containers",))
    volumes = listed(spec.get("volumes"), spath + ("volumes",))
    main = next((i for i, (c, _) in enumerate(containers) if isinstance(c, dict) and c.get("name") == "main"), 0)
    size = comp.get("sharedMemorySize", DEFAULT_SHM)
    where = path + ("sharedMemorySize",) if "sharedMemorySize" in comp else path
    pod_spec = dict(spec)
    renames: list[tuple[tuple, tuple]] = [(spath + ("metadata",), path + ("podTemplate", "metadata"))]
    # The operator's volume is named under a path the file cannot have: a finding on it points at
    # sharedMemorySize (else the component), and so does a fix of its size.
    shm_at = spath + ("volumes", "shared-memory")
    renames += [(shm_at + ("emptyDir", "sizeLimit"), path + ("sharedMemorySize",)), (shm_at, where)]
    if containers:
        c, cpath = containers[main]
        graph_env = dig(obj.data, "spec", "env")
        if isinstance(c, dict) and isinstance(graph_env, list) and graph_env:
            # the graph's env is prepended to each component's; the component's of a name wins
            c = {**c, "env": _merged_env(graph_env, c.get("env"))}
        pod_spec, c, from_device = _with_device(pod_spec, spath, c, cpath, comp.get("device"), path + ("device",))
        renames += from_device
        engines = _failover_engines(_with_shm(c, volumes, size, shm_at), comp)
        containers[main : main + 1] = [(e, cpath) for e in engines]
    graph_priority = dig(obj.data, "spec", "priorityClassName")
    if "priorityClassName" not in spec and isinstance(graph_priority, str) and graph_priority:
        pod_spec["priorityClassName"] = graph_priority  # Grove's PodCliqueSet gives it to the pods
        renames.append((spath + ("priorityClassName",), ("spec", "priorityClassName")))
    meta = tpl.get("metadata") if isinstance(tpl, dict) else None
    pod = Pod(
        spath,
        pod_spec,
        role,
        _pods(comp),
        containers,
        init=listed(spec.get("initContainers"), spath + ("initContainers",)),
        volumes=volumes,
        metadata=meta if isinstance(meta, dict) else {},
        renames=renames,
    )
    if len(containers) > len(listed(spec.get("containers"), spath + ("containers",))):
        pod.cache["assumed"] = f"as intra-pod failover runs the main container as {len(engines)} engines"
    return pod


def _failover_engines(main: Any, comp: dict) -> list[Any]:
    """The main container, or with intra-pod failover (``experimental.failover``, mode ``IntraPod`` or
    unset: ``buildFailoverPod``) its clones ``engine-0`` .. ``engine-<numShadows>`` (1 shadow by default,
    at most 2), each with the main container's memory and cpu; the GPUs, which the operator turns into a
    DRA claim the engines share, are counted once (on ``engine-0``)."""
    failover = dig(comp, "experimental", "failover")
    if (
        not isinstance(main, dict)
        or not isinstance(failover, dict)
        or failover.get("mode") not in (None, "", "IntraPod")
    ):
        return [main]
    shadows = integer(failover.get("numShadows"), 1) or 1
    if not 1 <= shadows <= 2:
        return [main]
    engines = []
    for i in range(shadows + 1):
        engine = {**main, "name": f"engine-{i}"}
        res = main.get("resources")
        if i and isinstance(res, dict):  # the shared devices (extended resources) stay with engine-0
            engine["resources"] = {
                part: ({k: v for k, v in val.items() if "/" not in str(k)} if isinstance(val, dict) else val)
                for part, val in res.items()
                if part != "claims"
            }
        engines.append(engine)
    return engines


def _components(obj: K8sObject) -> list[Pod]:
    comps = dig(obj.data, "spec", "components")
    out = []
    for i, comp in enumerate(comps if isinstance(comps, list) else []):
        if isinstance(comp, dict):
            pod = _component(obj, ("spec", "components", i), comp, text(comp.get("name"), f"components[{i}]"))
            if pod is not None:
                out.append(pod)
    return out


def _component_deployment(obj: K8sObject) -> list[Pod]:
    spec = obj.data.get("spec")
    if not isinstance(spec, dict):
        return []
    if "podTemplate" not in spec and str(obj.data.get("apiVersion")).endswith("/v1alpha1"):
        return [_service(("spec",), spec, text(spec.get("serviceName"), ""), None)]  # a v1alpha1 service's fields
    pod = _component(obj, ("spec",), spec, text(spec.get("name"), ""))
    return [] if pod is None else [pod]


def _dynamo(obj: K8sObject) -> list[Pod]:
    if isinstance(dig(obj.data, "spec", "components"), list):
        return _components(obj)  # v1beta1
    services = dig(obj.data, "spec", "services")
    if not isinstance(services, dict):
        return []
    graph_envs = dig(obj.data, "spec", "envs")
    return [
        _service(("spec", "services", name), services[name], str(name), graph_envs)
        for name in sorted(services, key=str)
        if isinstance(services[name], dict)
    ]


def _service(path: tuple, svc: dict, name: str, graph_envs: Any) -> Pod:
    """A v1alpha1 service (a DynamoGraphDeployment's ``spec.services.<name>``, or a
    DynamoComponentDeployment's ``spec``): the main container from ``extraPodSpec.mainContainer`` with
    the service's ``resources`` and its env over the service's ``envs`` over the graph's ``envs``
    (``graph_envs``; ``GenerateBasePodSpec``, ``MergeEnvs``), the pod from the rest of ``extraPodSpec``."""
    extra: Any = svc.get("extraPodSpec") if isinstance(svc.get("extraPodSpec"), dict) else {}
    main: Any = extra.get("mainContainer") if isinstance(extra.get("mainContainer"), dict) else {}
    container = {**main, "name": text(main.get("name"), "main")}
    env = _merged_env(graph_envs, svc.get("envs"), main.get("env"))
    if env is not None:
        container["env"] = env
    container.setdefault("image", "the Dynamo runtime image")
    own = main.get("resources") if isinstance(main.get("resources"), dict) else {}
    res = _dynamo_resources(svc.get("resources"))
    for part in ("requests", "limits"):
        if isinstance(own.get(part), dict):
            res[part] = {**res.get(part, {}), **own[part]}
    if isinstance(own.get("claims"), list):
        res["claims"] = [*res.get("claims", []), *own["claims"]]
    container["resources"] = res
    renames = [
        *(
            (path + ("resources", part, _gpu_name(dig(svc, "resources", part))), path + ("resources", part, "gpu"))
            for part in ("requests", "limits")
        ),
        (path + ("resources",), path + ("resources",)),
        (path + ("metadata",), path + ("extraPodSpec",)),
        (path + ("sharedMemory", "emptyDir", "sizeLimit"), path + ("sharedMemory", "size")),
    ]
    spec = {k: v for k, v in extra.items() if k not in ("mainContainer", "containers", "volumes", "initContainers")}
    renames += [(path + (k,), path + ("extraPodSpec", k)) for k in spec]
    spec, container, from_device = _with_device(spec, path, container, path, svc.get("device"), path + ("device",))
    renames = from_device + renames
    containers = [(container, path)] + listed(extra.get("containers"), path + ("extraPodSpec", "containers"))
    shm: Any = svc.get("sharedMemory") if isinstance(svc.get("sharedMemory"), dict) else {}
    size = None if shm.get("disabled") is True else shm.get("size", DEFAULT_SHM)
    volumes = listed(extra.get("volumes"), path + ("extraPodSpec", "volumes"))
    containers[0] = (_with_shm(container, volumes, size, path + ("sharedMemory",)), path)
    pod = Pod(
        path,
        spec,
        str(name),
        _pods(svc),
        containers,
        init=listed(extra.get("initContainers"), path + ("extraPodSpec", "initContainers")),
        volumes=volumes,
        renames=renames,
        fix_note="the Dynamo operator builds the main container's resources from the service's resources "
        "(gpu, cpu, memory) and device.resources: change those",
    )
    pod.cache["pod_fields"] = path + ("extraPodSpec",)  # a service has no priorityClassName of its own
    # A fix is the user's edit where it sets the service's memory (a ResourceItem's cpu, memory, gpu
    # strings, which the operator copies into the main container's requests and limits) and no
    # mainContainer.resources competes with it, the size of the operator's /dev/shm, or the native
    # containers and volumes of extraPodSpec.
    fixable = [path + ("sharedMemory", "emptyDir", "sizeLimit")]
    fixable += [path + ("extraPodSpec", key) for key in ("containers", "initContainers", "volumes")]
    service_res = svc.get("resources")
    if "resources" not in main and (
        service_res is None
        or (
            isinstance(service_res, dict)
            and all(isinstance(service_res.get(p), (dict, type(None))) for p in ("requests", "limits"))
        )
    ):
        fixable += [path + ("resources", part, "memory") for part in ("requests", "limits")]
    pod.cache["fixable"] = tuple(fixable)
    return pod


KINDS: dict[tuple[str, str], KindInfo] = {
    ("nvidia.com", "DynamoGraphDeployment"): KindInfo(none, False, _dynamo),
    ("nvidia.com", "DynamoComponentDeployment"): KindInfo(none, False, _component_deployment),
}
