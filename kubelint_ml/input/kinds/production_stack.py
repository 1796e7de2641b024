"""vLLM production-stack operator (``production-stack.vllm.ai/v1alpha1`` VLLMRuntime, CacheServer,
VLLMRouter; vllm-project/production-stack a6c01db05f65 (August 2026), ``operator/api/v1alpha1`` and
``operator/internal/controller/vllmruntime_controller.go`` ``deploymentForVLLMRuntime``,
``cacheserver_controller.go``, ``vllmrouter_controller.go``).

A VLLMRuntime is a Deployment of ``deploymentConfig.replicas`` pods (1 by default; KEDA scales that
field when ``autoscalingConfig`` is enabled). Its container ``vllm`` runs
``deploymentConfig.image.registry/name`` as ``vllm serve <modelURL> --host 0.0.0.0 --port <port>``
with the flags the controller derives from ``model`` and ``vllmConfig`` (``--tensor-parallel-size``
from ``vllmConfig.tensorParallelSize`` when > 0, then ``vllmConfig.extraArgs``), and env
``VLLM_USE_V1``, the LMCache variables, ``vllmConfig.env`` and ``HF_TOKEN``. Its resources are
``deploymentConfig.resources``: ``cpu`` and ``memory`` each become both the request and the limit,
``gpu`` the request and limit of ``gpuType`` (``nvidia.com/gpu`` by default). ``/dev/shm`` is a
Memory emptyDir ``dshm`` sized ``deploymentConfig.shmSize`` only when that is set: without it the
controller mounts nothing there. The pod gets ``runtimeClassName`` ``runtimeClass`` (the CRD's
default ``nvidia``), required node affinity from ``nodeSelectorTerms``, ``toleration``, the
``podAnnotations``, the labels ``app: <name>`` and the VLLMRuntime's own labels, the PVC
``storageConfig`` asks for and the chat-template ConfigMap; no priority class (the CRD has no field
for one). With ``sidecarConfig.enabled`` a second container runs ``sidecarConfig.image`` with its
``resources`` (cpu 0.5 and memory 128Mi by default, gpu 0 of its ``gpuType``).

A CacheServer and a VLLMRouter are one CPU container each (``cache-server``, ``router``) whose
``resources`` cpu and memory are both the request and the limit (their ``gpu`` is not read); the
router's pod gets ``serviceAccountName`` and required node affinity from ``nodeSelectorTerms``.
"""

from __future__ import annotations

from typing import Any

from kubelint_ml.input.kinds.base import KindInfo, Pod, integer, none, text
from kubelint_ml.input.objects import K8sObject, dig

_GPU = "nvidia.com/gpu"
_REQUIRED = ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
_DEFAULT_RUNTIME_CLASS = "nvidia"  # DeploymentConfig.RuntimeClass, +kubebuilder:default=nvidia


def _mapping(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _image(image: Any) -> str:
    image = _mapping(image)
    return f"{text(image.get('registry'), '')}/{text(image.get('name'), '')}"


def _resources(given: Any, gpu: bool, defaults: dict | None = None) -> tuple[dict, str | None]:
    """A ``ResourceRequirements`` (cpu, memory, gpu, gpuType: strings) as the controller makes the
    container's: each value both its request and its limit. Returns the resources and the name of
    the GPU resource (None when ``gpu`` is not read or not given)."""
    given = _mapping(given)
    defaults = defaults or {}
    found: dict = {}
    for key in ("cpu", "memory"):
        value = given.get(key) if given.get(key) not in (None, "") else defaults.get(key)
        if value is not None:
            found[key] = value
    name = None
    if gpu:
        kind = given.get("gpuType")
        name = kind if isinstance(kind, str) and kind.strip() else _GPU
        count = given.get("gpu") if given.get("gpu") not in (None, "") else defaults.get("gpu")
        if count is not None:
            found[name] = count
        else:
            name = None
    return {"requests": dict(found), "limits": dict(found)}, name


def _resource_renames(cpath: tuple, rpath: tuple, gpu_name: str | None) -> list[tuple[tuple, tuple]]:
    """The container's requests and limits are written once, in ``rpath``'s cpu, memory and gpu."""
    out: list[tuple[tuple, tuple]] = []
    for part in ("requests", "limits"):
        if gpu_name is not None:
            out.append((cpath + ("resources", part, gpu_name), rpath + ("gpu",)))
        out += [(cpath + ("resources", part, key), rpath + (key,)) for key in ("cpu", "memory")]
        out.append((cpath + ("resources", part), rpath))
    out.append((cpath + ("resources",), rpath))
    return out


def _env(items: Any) -> list[dict]:
    return (
        [{"name": e.get("name"), "value": e.get("value")} for e in items if isinstance(e, dict)]
        if isinstance(items, list)
        else []
    )


def _args(spec: dict) -> list[Any]:
    """``vllm serve``'s arguments as ``deploymentForVLLMRuntime`` builds them."""
    model, vllm, cache = (
        _mapping(spec.get("model")),
        _mapping(spec.get("vllmConfig")),
        _mapping(spec.get("lmCacheConfig")),
    )
    port = integer(vllm.get("port"), 8000)
    args: list[Any] = [text(model.get("modelURL"), ""), "--host", "0.0.0.0", "--port", str(port)]
    if model.get("enableLoRA") is True:
        args.append("--enable-lora")
    if model.get("enableTool") is True:
        args.append("--enable-auto-tool-choice")
    if text(model.get("toolCallParser"), ""):
        args += ["--tool-call-parser", model["toolCallParser"]]
    args.append(
        "--enable-chunked-prefill" if vllm.get("enableChunkedPrefill") is True else "--no-enable-chunked-prefill"
    )
    args.append("--enable-prefix-caching" if vllm.get("enablePrefixCaching") is True else "--no-enable-prefix-caching")
    for key, flag, where in (
        ("maxModelLen", "--max-model-len", model),
        ("dtype", "--dtype", model),
        ("tensorParallelSize", "--tensor-parallel-size", vllm),
        ("maxNumSeqs", "--max-num-seqs", model),
        ("gpuMemoryUtilization", "--gpu_memory_utilization", vllm),
        ("maxLoras", "--max_loras", vllm),
    ):
        value = where.get(key)
        if isinstance(value, str) and value or (integer(value, 0) or 0) > 0:
            args += [flag, str(value)]
    if isinstance(vllm.get("extraArgs"), list):
        args += vllm["extraArgs"]
    if text(model.get("chatTemplate"), ""):
        args += ["--chat-template", "/etc/chat-template.json"]
    if cache.get("enabled") is True:
        connector = "LMCacheConnectorV1" if vllm.get("v1") is True else "LMCacheConnector"
        args += ["--kv-transfer-config", f'{{"kv_connector":"{connector}","kv_role":"kv_both"}}']
    return args


def _lmcache_env(cache: dict) -> list[dict]:
    """The LMCache variables the controller sets with ``lmCacheConfig.enabled``."""
    env = [
        {"name": "LMCACHE_LOG_LEVEL", "value": "DEBUG"},
        {"name": "LMCACHE_USE_EXPERIMENTAL", "value": "True"},
        {"name": "VLLM_RPC_TIMEOUT", "value": "1000000"},
    ]
    for key, flag, size in (
        ("cpuOffloadingBufferSize", "LMCACHE_LOCAL_CPU", "LMCACHE_MAX_LOCAL_CPU_SIZE"),
        ("diskOffloadingBufferSize", "LMCACHE_LOCAL_DISK", "LMCACHE_MAX_LOCAL_DISK_SIZE"),
    ):
        if cache.get(key) not in (None, ""):
            env += [{"name": flag, "value": "True"}, {"name": size, "value": str(cache[key])}]
    if text(cache.get("remoteUrl"), ""):
        env += [
            {"name": "LMCACHE_REMOTE_URL", "value": cache["remoteUrl"]},
            {"name": "LMCACHE_REMOTE_SERDE", "value": text(cache.get("remoteSerde"), "")},
        ]
    return env


def _affinity(terms: Any) -> dict:
    if terms is None:
        return {}
    return {
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}
    }


def _labels(obj: K8sObject) -> dict:
    own = dig(obj.data, "metadata", "labels")
    return {"app": text(dig(obj.data, "metadata", "name"), ""), **(own if isinstance(own, dict) else {})}


def _runtime(obj: K8sObject) -> list[Pod]:
    spec = obj.data.get("spec")
    if not isinstance(spec, dict):
        return []
    dpath = ("spec", "deploymentConfig")
    deploy = _mapping(spec.get("deploymentConfig"))
    vllm = _mapping(spec.get("vllmConfig"))
    # The container is written at deploymentConfig too (its resources, image, and shmSize for its
    # /dev/shm); its flags and env come from vllmConfig.
    cpath = dpath
    vpath = ("spec", "vllmConfig")
    resources: Any
    resources, gpu_name = _resources(deploy.get("resources"), True)
    if deploy.get("resources") is not None and not isinstance(deploy.get("resources"), dict):
        resources = deploy["resources"]  # the wrong type: reported at deploymentConfig.resources
    env: list[dict] = [{"name": "VLLM_USE_V1", "value": "1" if vllm.get("v1") is True else "0"}]
    if dig(spec, "model", "enableLoRA") is True:
        env.append({"name": "VLLM_ALLOW_RUNTIME_LORA_UPDATING", "value": "True"})
    cache = _mapping(spec.get("lmCacheConfig"))
    if cache.get("enabled") is True:
        env += _lmcache_env(cache)
    own_env = _env(vllm.get("env"))
    renames: list[tuple[tuple, tuple]] = [
        (cpath + ("env", len(env) + i), vpath + ("env", i)) for i in range(len(own_env))
    ]
    env += own_env
    secret = dig(spec, "model", "hfTokenSecret", "hfTokenSecretName")
    if isinstance(secret, str) and secret:
        key = dig(spec, "model", "hfTokenSecret", "hfTokenKeyName")
        env.append({"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": secret, "key": text(key, "token")}}})
    volumes: list[tuple[Any, tuple]] = []
    mounts: list[dict] = []
    storage = _mapping(spec.get("storageConfig"))
    if storage.get("enabled") is True:
        name = text(storage.get("volumeName"), "") or "pvc-storage"
        claim = {"claimName": text(dig(obj.data, "metadata", "name"), "")}
        volumes.append(({"name": name, "persistentVolumeClaim": claim}, ("spec", "storageConfig")))
        mounts.append({"name": name, "mountPath": text(storage.get("mountPath"), "") or "/data"})
    chat = dig(spec, "model", "chatTemplate")
    if isinstance(chat, str) and chat:
        config_map = {"name": text(dig(obj.data, "metadata", "name"), "") + "-chat-template"}
        volumes.append(({"name": "chat-template", "configMap": config_map}, ("spec", "model", "chatTemplate")))
        mounts.append({"name": "chat-template", "mountPath": "/etc/chat-template.json"})
    shm = deploy.get("shmSize")
    shm_at = dpath + ("volumes", "dshm")  # the operator's volume, under a path the file cannot have
    if shm not in (None, ""):
        volumes.append(({"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": shm}}, shm_at))
        mounts.append({"name": "dshm", "mountPath": "/dev/shm"})
        renames += [(shm_at, dpath + ("shmSize",)), (cpath + ("volumeMounts",), dpath + ("shmSize",))]
    else:
        renames.append((cpath + ("volumeMounts",), dpath))
    container: dict = {
        "name": "vllm",
        "image": _image(deploy.get("image")),
        "command": ["/opt/venv/bin/vllm", "serve"],
        "args": _args(spec),
        "env": env,
        "resources": resources,
    }
    if mounts:
        container["volumeMounts"] = mounts
    containers: list[tuple[Any, tuple]] = [(container, cpath)]
    renames += _resource_renames(cpath, dpath + ("resources",), gpu_name)
    renames += [
        (cpath + ("args",), vpath),
        (cpath + ("command",), vpath),
        (cpath + ("env",), vpath + ("env",)),
    ]
    sidecar = _mapping(deploy.get("sidecarConfig"))
    if sidecar.get("enabled") is True:
        spath = dpath + ("sidecarConfig",)
        side_res, side_gpu = _resources(sidecar.get("resources"), True, {"cpu": "0.5", "memory": "128Mi", "gpu": "0"})
        # the sidecar mounts the storage PVC (at its own mountPath) when there is one
        side_at = (text(sidecar.get("mountPath"), "") or "/data") if storage.get("enabled") is True else "/data"
        side: dict = {
            "name": text(sidecar.get("name"), "") or "sidecar",
            "image": _image(sidecar.get("image")),
            "env": [
                {"name": "PORT", "value": "30090"},
                {"name": "LORA_DOWNLOAD_BASE_DIR", "value": side_at + "/lora-adapters"},
                *_env(sidecar.get("env")),
            ],
            "resources": side_res,
        }
        if storage.get("enabled") is True:
            side["volumeMounts"] = [{"name": volumes[0][0]["name"], "mountPath": side_at}]
        for key in ("command", "args"):
            if key in sidecar:
                side[key] = sidecar[key]
        containers.append((side, spath))
        renames += _resource_renames(spath, spath + ("resources",), side_gpu)
    pod_spec: dict = {"runtimeClassName": text(deploy.get("runtimeClass"), "") or _DEFAULT_RUNTIME_CLASS}
    pod_spec.update(_affinity(deploy.get("nodeSelectorTerms")))
    if "toleration" in deploy:
        pod_spec["tolerations"] = deploy["toleration"]
    renames += [
        (dpath + _REQUIRED, dpath + ("nodeSelectorTerms",)),
        (dpath + ("affinity",), dpath + ("nodeSelectorTerms",)),
        (dpath + ("tolerations",), dpath + ("toleration",)),
        (dpath + ("runtimeClassName",), dpath + ("runtimeClass",)),
        (dpath + ("metadata", "annotations"), dpath + ("podAnnotations",)),
        (dpath + ("metadata", "labels"), ("metadata", "labels")),
        (dpath + ("metadata",), dpath),
    ]
    pod = Pod(
        dpath,
        pod_spec,
        "",
        integer(deploy.get("replicas"), 1),
        containers,
        volumes=volumes,
        metadata={"labels": _labels(obj), "annotations": deploy.get("podAnnotations")},
        renames=renames,
        fix_note="the production-stack operator builds the container's resources from deploymentConfig.resources "
        "(cpu, memory and gpu, each both request and limit) and /dev/shm from deploymentConfig.shmSize: set "
        "those (the VLLMRuntime has no field for a priority class)",
    )
    # What the rules rely on that the file does not show: the controller writes each of
    # deploymentConfig.resources as both request and limit, and mounts /dev/shm only for shmSize.
    shm_said = f"/dev/shm a Memory emptyDir of {shm}" if shm not in (None, "") else "no /dev/shm mount without shmSize"
    pod.cache["assumed"] = f"as the production-stack operator builds it: resources as requests and limits, {shm_said}"
    return [pod]


def _cpu_server(name: str, extra: tuple[str, ...]) -> Any:
    """A CacheServer's or a VLLMRouter's one container, ``name``; ``extra``: the spec fields that are
    the pod's too."""

    def build(obj: K8sObject) -> list[Pod]:
        spec = obj.data.get("spec")
        if not isinstance(spec, dict):
            return []
        path = ("spec",)
        resources: Any
        resources, _ = _resources(spec.get("resources"), False)
        if spec.get("resources") is not None and not isinstance(spec.get("resources"), dict):
            resources = spec["resources"]  # the wrong type: reported at resources
        container: dict = {"name": name, "image": _image(spec.get("image")), "resources": resources}
        if "env" in spec:
            container["env"] = _env(spec.get("env"))
        pod_spec: dict = {}
        if "serviceAccountName" in extra and isinstance(spec.get("serviceAccountName"), str):
            pod_spec["serviceAccountName"] = spec["serviceAccountName"]
        if "nodeSelectorTerms" in extra:
            pod_spec.update(_affinity(spec.get("nodeSelectorTerms")))
        return [
            Pod(
                path,
                pod_spec,
                "",
                integer(spec.get("replicas"), 1),
                [(container, path)],
                metadata={"labels": _labels(obj)},
                renames=[
                    *_resource_renames(path, path + ("resources",), None),
                    (path + _REQUIRED, path + ("nodeSelectorTerms",)),
                    (path + ("affinity",), path + ("nodeSelectorTerms",)),
                    (path + ("metadata", "labels"), ("metadata", "labels")),
                    (path + ("metadata",), path),
                ],
                fix_note="the production-stack operator builds the container's resources from resources.cpu and "
                "resources.memory (each both request and limit): change those",
            )
        ]

    return build


KINDS: dict[tuple[str, str], KindInfo] = {
    ("production-stack.vllm.ai", "VLLMRuntime"): KindInfo(none, False, _runtime),
    ("production-stack.vllm.ai", "CacheServer"): KindInfo(none, False, _cpu_server("cache-server", ())),
    ("production-stack.vllm.ai", "VLLMRouter"): KindInfo(
        none, False, _cpu_server("router", ("serviceAccountName", "nodeSelectorTerms"))
    ),
}
