"""KServe (``serving.kserve.io``; kserve/kserve v0.20): InferenceService components
(``pkg/apis/serving/v1beta1``), ServingRuntime and ClusterServingRuntime, LLMInferenceService and
LLMInferenceServiceConfig (``v1alpha1``/``v1alpha2``; the controller is
``pkg/controller/v1alpha2/llmisvc``, its presets ``config/llmisvcconfig``). What is modelled, kind by
kind, is in docs/kinds.md."""

from __future__ import annotations

from typing import Any

from kubelint_ml.input.kinds.base import (
    DEVICE_CLASS_RESOURCE,
    KindInfo,
    Pod,
    integer,
    listed,
    none,
    pod_spec_at,
    strategic_merge,
    with_device_class,
    with_resources,
)
from kubelint_ml.input.objects import K8sObject, dig

# The model-framework specs of a v1beta1 component: one container each (KServe names it
# kserve-container). The webhook's defaulter sets the inferenceservice-config `resource`
# defaults on these (pkg/apis/serving/v1beta1/predictor_*.go, explainer_art.go) and on the
# first container of a custom component; not on `model` (the runtime's resources apply: see
# KSERVE_RUNTIME_RESOURCES).
KSERVE_FRAMEWORKS = (
    "sklearn",
    "xgboost",
    "tensorflow",
    "pytorch",
    "triton",
    "onnx",
    "huggingface",
    "pmml",
    "lightgbm",
    "paddle",
    "model",
    "art",
    "alibi",
)


_KSERVE_DEFAULTED = frozenset(KSERVE_FRAMEWORKS) - {"model", "alibi"}


# config/configmap/inferenceservice.yaml `inferenceService.resource` as KServe ships it.
KSERVE_REQUESTS = {"cpu": "1", "memory": "2Gi"}


KSERVE_LIMITS = {"cpu": "1", "memory": "2Gi"}


# A `model` spec's container is merged over the serving runtime's `kserve-container` by the
# controller (MergeServingRuntimeAndInferenceServiceSpecs, MergeRuntimeContainers: the service's
# fields over the runtime's, resources key by key). The runtimes KServe ships (config/runtimes,
# kserve-*) all set requests and limits of 1 cpu and 2Gi, but the multi-node one.
KSERVE_RUNTIME_RESOURCES = {
    "kserve-huggingfaceserver-multinode": ({"cpu": "2", "memory": "6Gi"}, {"cpu": "4", "memory": "12Gi"}),
}


def _runtime_resources(runtime: Any, name: str = "kserve-container") -> tuple[dict, dict] | None:
    """The requests and limits of a serving runtime's ``kserve-container`` (the container KServe merges
    a ``model`` spec over: constants.InferenceServiceContainerName; its workerSpec's
    ``worker-container``), or None without one."""
    containers = runtime.get("containers") if isinstance(runtime, dict) else None
    for c in containers if isinstance(containers, list) else []:
        if isinstance(c, dict) and c.get("name") == name:
            res: Any = c.get("resources") if isinstance(c.get("resources"), dict) else {}
            requests, limits = (res.get(k) for k in ("requests", "limits"))
            return (requests if isinstance(requests, dict) else {}), (limits if isinstance(limits, dict) else {})
    return None


def _kserve_component(
    obj: K8sObject, path: tuple, role: str, runtime: tuple[str, tuple[dict, dict]] | None = None
) -> Pod | None:
    comp = dig(obj.data, *path)
    if not isinstance(comp, dict):
        return None
    containers: list[tuple[Any, tuple]] = []
    defaulted = False
    for fw in KSERVE_FRAMEWORKS:
        c = comp.get(fw)
        if isinstance(c, dict):
            data = dict(c)
            data.setdefault("name", "kserve-container")
            # The image is the ServingRuntime's (the model's format picks it): the pod is whole.
            data.setdefault("image", f"{fw} serving runtime")
            if fw in _KSERVE_DEFAULTED:
                data = with_resources(data, KSERVE_REQUESTS, KSERVE_LIMITS)
                defaulted = True
            named = c.get("runtime")
            if fw == "model" and runtime is not None:
                # the runtime among the inputs, merged as KServe merges it (its resources, key by key)
                data = with_resources(data, *runtime[1])
            elif fw == "model" and (named is None or (isinstance(named, str) and named.startswith("kserve-"))):
                # the runtime's resources where the service sets none: one KServe ships (named, or the
                # one it selects for the model's format, the multi-node one for a workerSpec); a
                # runtime of the user's own is not known here
                if named is None and isinstance(comp.get("workerSpec"), dict):
                    named = _MULTINODE_RUNTIME
                requests, limits = KSERVE_RUNTIME_RESOURCES.get(str(named), (KSERVE_REQUESTS, KSERVE_LIMITS))
                data = with_resources(data, requests, limits)
            containers.append((data, path + (fw,)))
            break
    for i, c in enumerate(comp.get("containers") or [] if isinstance(comp.get("containers"), list) else []):
        if i == 0 and not containers and isinstance(c, dict):
            c = with_resources(c, KSERVE_REQUESTS, KSERVE_LIMITS)
            defaulted = True
        containers.append((c, path + ("containers", i)))
    if not containers:
        return None
    spec = {k: v for k, v in comp.items() if k not in KSERVE_FRAMEWORKS}
    replicas = integer(comp.get("minReplicas"), 1)
    tpl = Pod(
        path,
        spec,
        role,
        replicas,
        containers,
        init=listed(comp.get("initContainers"), path + ("initContainers",)),
        volumes=listed(comp.get("volumes"), path + ("volumes",)),
        metadata={"labels": comp.get("labels"), "annotations": comp.get("annotations")},
        renames=[(path + ("metadata",), path)],
    )
    if defaulted:
        tpl.cache["defaults"] = "KServe's webhook sets the inferenceservice-config resource defaults"
    return tpl


def _inference_service(obj: K8sObject) -> list[Pod]:
    out = []
    for comp in ("predictor", "transformer", "explainer"):
        tpl = _kserve_component(obj, ("spec", comp), comp)
        if tpl is not None:
            out.append(tpl)
            if comp == "predictor":
                out.extend(_multinode(obj, tpl, None))
    return out


# A multi-node InferenceService (predictor.workerSpec) runs on the only runtimes with workers
# (predictor_model.go GetSupportingRuntimes); of those KServe ships, kserve-huggingfaceserver-multinode,
# whose workerSpec's worker-container has the same resources as its kserve-container. The controller
# (components/predictor.go computeRayNodeAndGPUs, the ray executor, the default) spreads
# tensorParallelSize x pipelineParallelSize GPUs over the head and ceil(total / worker GPUs) - 1
# workers, and reconcilers/deployment addGPUResourceToDeployment sets each container's GPU requests and
# limits to its count (of the GPU type the container names, nvidia.com/gpu by default).
_MULTINODE_RUNTIME = "kserve-huggingfaceserver-multinode"
_KSERVE_GPU_TYPES = ("nvidia.com/gpu", "amd.com/gpu", "gpu.intel.com/i915", "habana.ai/gaudi")


def _gpus(value: Any) -> int:
    """A GPU count as written (2 or "2"); 0 for anything else."""
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return integer(value, 0) or 0


def _gpu_request(container: Any) -> int:
    """The GPUs a container's requests give (GetGPUResourceQtyByType "Request")."""
    requests = dig(container, "resources", "requests") if isinstance(container, dict) else None
    for name in _KSERVE_GPU_TYPES:
        if isinstance(requests, dict) and name in requests:
            return _gpus(requests[name])
    return 0


def _gpu_type(container: Any) -> str:
    for part in ("limits", "requests"):
        have = dig(container, "resources", part) if isinstance(container, dict) else None
        for name in _KSERVE_GPU_TYPES:
            if isinstance(have, dict) and _gpus(have.get(name)) > 0:
                return name
    return "nvidia.com/gpu"


def _ray_gpus(total: int, head: int, worker: int) -> tuple[int, int, int]:
    """computeRayNodeAndGPUs: (nodes, worker GPUs, head GPUs)."""
    if worker > 0:
        nodes = -(-total // worker)
        new_head = total - worker * (nodes - 1)
        if head > 0:
            if -(-total // head) == 1:
                nodes = 1
        else:
            head = new_head
        if nodes == 1:
            return 1, 0, total
        return nodes, worker, head
    if head > 0:
        remaining = total - head
        return (remaining + 1 if remaining > 0 else 1), 1, head
    return total, 1, 1


def _with_gpus(container: dict, count: int) -> dict:
    gpu = _gpu_type(container)
    out = dict(container)
    res = dict(out["resources"]) if isinstance(out.get("resources"), dict) else {}
    for part in ("requests", "limits"):
        have = res.get(part)
        res[part] = {**(have if isinstance(have, dict) else {}), gpu: str(count)}
    out["resources"] = res
    return out


def _multinode(obj: K8sObject, head: Pod, runtime: Any, executor: str = "ray") -> list[Pod]:
    """A multi-node predictor: the head's GPUs set as the controller sets them, and the workers' pod
    (the service's workerSpec over the runtime's worker-container, ``runtime`` its spec when among the
    inputs, else the one KServe ships)."""
    path = ("spec", "predictor", "workerSpec")
    spec = dig(obj.data, *path)
    if not isinstance(spec, dict) or not isinstance(dig(obj.data, "spec", "predictor", "model"), dict):
        return []  # the controller runs workers for a model spec only (reconcileModel, reconcileWorker)
    if not head.containers or not isinstance(head.containers[0][0], dict):
        return []
    if runtime is not None:
        found = _runtime_resources(runtime.get("workerSpec"), "worker-container")
        if found is None:
            return []
        worker_res = found
    else:
        named = dig(obj.data, "spec", "predictor", "model", "runtime")
        if named is not None and named != _MULTINODE_RUNTIME:
            # A runtime of the user's own, not among the inputs: its worker container and its executor
            # (ray or mp: how the GPUs are spread) are not known, so the workers are not built; said by
            # accelerator-workload-not-judged, at the field that sizes the GPUs.
            head.cache["unjudged"] = _unknown_runtime(obj, spec, named)
            return []
        worker_res = KSERVE_RUNTIME_RESOURCES[_MULTINODE_RUNTIME]
    total = (integer(spec.get("tensorParallelSize"), 1) or 1) * (integer(spec.get("pipelineParallelSize"), 1) or 1)
    containers = spec.get("containers")
    own = containers[0] if isinstance(containers, list) and containers and isinstance(containers[0], dict) else None
    worker = with_resources(dict(own or {}), *worker_res)
    worker.setdefault("name", "worker-container")
    worker.setdefault("image", "multi-node serving runtime")
    if executor == "mp":  # computeMpNodeAndGPUs: a node per pipeline stage, tensorParallelSize GPUs each
        tp = integer(spec.get("tensorParallelSize"), 1) or 1
        nodes, worker_gpus, head_gpus = total // tp, tp, tp
    else:
        nodes, worker_gpus, head_gpus = _ray_gpus(total, _gpu_request(head.containers[0][0]), _gpu_request(worker))
    head.containers[0] = (_with_gpus(head.containers[0][0], head_gpus), head.containers[0][1])
    assumed = (
        f"as KServe spreads tensorParallelSize x pipelineParallelSize = {total} GPU{'' if total == 1 else 's'} "
        f"over the head and {nodes - 1} worker{'' if nodes == 2 else 's'}"
    )
    before = head.cache.get("assumed")
    head.cache["assumed"] = f"{before}; {assumed}" if before else assumed
    if nodes < 2:
        return []
    tpl = Pod(
        path,
        {k: v for k, v in spec.items() if k not in ("pipelineParallelSize", "tensorParallelSize")},
        "worker",
        nodes - 1,
        [(_with_gpus(worker, worker_gpus), path + (("containers", 0) if own is not None else ()))],
        volumes=listed(spec.get("volumes"), path + ("volumes",)),
        renames=[(path + ("metadata",), path)],
    )
    tpl.cache["assumed"] = assumed
    return [tpl]


def _unknown_runtime(obj: K8sObject, spec: dict, named: Any) -> tuple[tuple, str, str]:
    """(path, message, why) of a multi-node predictor whose runtime is not among the inputs."""
    path = ("spec", "predictor", "workerSpec")
    sizes = [k for k in ("tensorParallelSize", "pipelineParallelSize") if k in spec]
    total = (integer(spec.get("tensorParallelSize"), 1) or 1) * (integer(spec.get("pipelineParallelSize"), 1) or 1)
    name = named if isinstance(named, str) else str(named)
    return (
        path + (sizes[0],) if sizes else path,
        f"runs {total} GPU{'' if total == 1 else 's'} over a head and workers of runtime '{name}': workers not judged",
        f"KServe spreads tensorParallelSize x pipelineParallelSize = {total} GPU{'' if total == 1 else 's'} over "
        f"the head and the workers of the serving runtime '{name}', as its worker container's GPUs and its "
        "multinode/executor-backend annotation (ray by default, or mp) say; the runtime is not among the inputs, "
        "so the workers' pods were not built and the head was judged as written, without the GPUs KServe gives "
        "it; no rule judged the workers (memory limits, QoS, /dev/shm, priority): pass the runtime's file with "
        "--context.",
    )


def inference_service_with_runtime(obj: K8sObject, name: str, runtime: Any, executor: str = "ray") -> list[Pod]:
    """The pods of an InferenceService whose ``predictor.model`` names the (Cluster)ServingRuntime
    ``runtime`` (its spec) among the inputs: the model's container over the runtime's
    ``kserve-container`` (MergeServingRuntimeAndInferenceServiceSpecs: its resources key by key);
    findings on what the runtime gives say so."""
    found = _runtime_resources(runtime)
    if found is None:
        return _inference_service(obj)
    out = []
    for comp in ("predictor", "transformer", "explainer"):
        tpl = _kserve_component(obj, ("spec", comp), comp, (name, found) if comp == "predictor" else None)
        if tpl is not None:
            if comp == "predictor":
                tpl.cache["assumed"] = f"as KServe merges its model over the runtime {name}"
            out.append(tpl)
            if comp == "predictor":
                out.extend(_multinode(obj, tpl, runtime, executor))
    return out


def _serving_runtime(obj: K8sObject) -> list[Pod]:
    out = [
        pod_spec_at(obj, ("spec",), "", 1, shared=True),
        pod_spec_at(obj, ("spec", "workerSpec"), "worker", None, shared=True),
    ]
    return [t for t in out if t is not None and t.has_containers]


# --- LLMInferenceService -----------------------------------------------------------
#
# The controller (pkg/controller/v1alpha2/llmisvc/config_merge.go, combineBaseRefsConfig) merges
# well-known LLMInferenceServiceConfig presets, then the user's baseRefs, then the service itself
# (strategic merge: containers and volumes by name). Which preset a part gets depends on the
# layout: prefill/decode or not, a worker or not, data parallel or pipeline parallel. What the
# rules need of the presets, as config/llmisvcconfig/*.yaml ships them: the main container's name
# and image, and its /dev/shm (a memory-backed emptyDir "dshm"). No preset sets resources on the
# main container or a priorityClassName.
LLM_IMAGE = "ghcr.io/llm-d/llm-d-cuda:v0.9.0"
LLM_PRESETS = {  # preset -> the /dev/shm sizeLimit of its pods
    "kserve-config-llm-template": "1Gi",
    "kserve-config-llm-decode-template": "1Gi",
    "kserve-config-llm-prefill-template": "1Gi",
    "kserve-config-llm-worker-data-parallel": "8Gi",
    "kserve-config-llm-decode-worker-data-parallel": "8Gi",
    "kserve-config-llm-prefill-worker-data-parallel": "8Gi",
}
# Managed DRA (pkg/controller/v1alpha2/llmisvc/managed_dra.go): this annotation makes the controller
# add a ResourceClaimTemplate "<name>-managed-dra" (exp-dra-device-count devices of the class, 1 by
# default) and a pod claim "managed-device", consumed by the container named in
# exp-dra-container-name, else the first one.
MANAGED_DRA = "serving.kserve.io/exp-dra-device-class"
MANAGED_DRA_CONTAINER = "serving.kserve.io/exp-dra-container-name"
MANAGED_DRA_COUNT = "serving.kserve.io/exp-dra-device-count"


def _parallel(parallelism: Any) -> str:
    """``data``, ``pipeline`` or "" as ParallelismSpec.IsDataParallel / IsPipelineParallel decide."""
    if not isinstance(parallelism, dict):
        return ""
    if any(isinstance(parallelism.get(k), int) and parallelism[k] > 0 for k in ("data", "dataLocal")):
        return "data"
    pipeline = parallelism.get("pipeline")
    return "pipeline" if isinstance(pipeline, int) and pipeline > 0 else ""


def _llm_preset(part: Any, parallelism: Any, which: str) -> str | None:
    """The well-known preset of a part (``spec`` or ``spec.prefill``) for ``which`` ("" single-node,
    "decode", "prefill"); None where the controller ships none (pipeline parallel)."""
    if not isinstance(part, dict) or part.get("worker") is None:
        return f"kserve-config-llm-{which + '-' if which else ''}template"
    if _parallel(parallelism) == "data":
        return f"kserve-config-llm-{which + '-' if which else ''}worker-data-parallel"
    return None


def _llm_pod(
    obj: K8sObject,
    path: tuple,
    role: str,
    replicas: int | None,
    preset: str | None,
    bases: tuple[str, ...] = (),
    own: Any = None,
) -> Pod | None:
    """One part of the service (``path``: its template or worker) with its preset; ``bases``: the
    baseRefs merged into ``obj`` (``own``: the service's spec as written, before that merge)."""
    spec = dig(obj.data, *path)
    if spec is None and path[-1] != "template":
        return None  # a worker the user did not ask for
    if not isinstance(spec, dict):
        spec = {} if spec is None else spec
    if not isinstance(spec, dict):
        return pod_spec_at(obj, path, role, replicas)  # the wrong type: reported as written
    containers = listed(spec.get("containers"), path + ("containers",))
    assumed: list[str] = []
    shm = LLM_PRESETS.get(preset or "")
    # What the preset adds is named under paths the file cannot have (renamed to the template for
    # the findings); a fix there is not the user's edit.
    preset_main, preset_shm = path + ("containers", "main"), path + ("volumes", "dshm")
    renames: list[tuple[tuple, tuple]] = [(path + ("metadata",), path)]
    foreign: list[tuple[tuple, str]] = []
    if preset is not None:
        main = next((i for i, (c, _) in enumerate(containers) if isinstance(c, dict) and c.get("name") == "main"), None)
        base = {"name": "main", "image": LLM_IMAGE}
        if main is None:
            containers.insert(0, (base, preset_main))
            renames.append((preset_main, path))
            foreign.append(
                (
                    preset_main,
                    f"the main container is {preset}'s: the file has no container 'main' whose fields "
                    "KServe merges over it",
                )
            )
            assumed.append("its main container")
        else:
            c, cpath = containers[main]
            if not c.get("image"):
                assumed.append(f"image {LLM_IMAGE}")
            containers[main] = ({**base, **c}, cpath)
        c, cpath = containers[0 if main is None else main]
        mounts = c.get("volumeMounts") if isinstance(c.get("volumeMounts"), list) else []
        if not any(isinstance(m, dict) and m.get("mountPath") == "/dev/shm" for m in mounts):
            c = {**c, "volumeMounts": [*mounts, {"name": "dshm", "mountPath": "/dev/shm"}]}
            containers[0 if main is None else main] = (c, cpath)
    volumes = listed(spec.get("volumes"), path + ("volumes",))
    if shm and not any(isinstance(v, dict) and v.get("name") == "dshm" for v, _ in volumes):
        volumes.append(({"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": shm}}, preset_shm))
        renames.append((preset_shm, path))
        foreign.append(
            (
                preset_shm,
                f"the /dev/shm emptyDir 'dshm' is {preset}'s: the file has no volume 'dshm' whose fields KServe "
                "merges over it",
            )
        )
    pod_spec = dict(spec)
    annotations = dig(obj.data, "metadata", "annotations")
    device_class = annotations.get(MANAGED_DRA) if isinstance(annotations, dict) else None
    if isinstance(device_class, str) and device_class.strip():
        # KServe makes a ResourceClaimTemplate "<name>-managed-dra" of exp-dra-device-count devices of
        # the class and has the container use it: described here as the devices it asks for.
        where = ("metadata", "annotations", MANAGED_DRA)
        count = annotations.get(MANAGED_DRA_COUNT)
        devices = int(count) if isinstance(count, str) and count.strip().isdigit() else 1
        want = annotations.get(MANAGED_DRA_CONTAINER)
        target = next(
            (i for i, (c, _) in enumerate(containers) if isinstance(c, dict) and (not want or c.get("name") == want)),
            None,
        )
        if target is not None:
            c, cpath = containers[target]
            containers[target] = (with_device_class(c, device_class.strip(), devices), cpath)
            for part in ("requests", "limits"):
                renames.append((cpath + ("resources", part, DEVICE_CLASS_RESOURCE + device_class.strip()), where))
        assumed.append(f"a DRA claim of device class {device_class.strip()}")
    if bases:
        assumed.append("its baseRefs " + ", ".join(bases))
        # containers and volumes only a config has: after the service's own, named at spec.baseRefs
        written = dig(own, *path[1:])
        for key, items in (("containers", containers), ("volumes", volumes)):
            have = listed(written.get(key) if isinstance(written, dict) else None, ())
            for item, ipath in items:
                if ipath[:-1] == path + (key,) and isinstance(ipath[-1], int) and ipath[-1] >= len(have):
                    renames.append((ipath, ("spec", "baseRefs")))
                    name = item.get("name") if isinstance(item, dict) else None
                    foreign.append((ipath, f"{key[:-1]} '{name}' comes from the baseRefs {', '.join(bases)}"))
    elif isinstance(dig(obj.data, "spec", "baseRefs"), list) and dig(obj.data, "spec", "baseRefs"):
        assumed.append("its baseRefs not read")
    pod = Pod(
        path,
        pod_spec,
        role,
        replicas,
        containers,
        init=listed(spec.get("initContainers"), path + ("initContainers",)),
        volumes=volumes,
        renames=renames,
    )
    if assumed:
        pod.cache["assumed"] = f"as KServe completes it{' with ' + preset if preset else ''}: " + ", ".join(assumed)
    if foreign:
        pod.cache["foreign"] = foreign
    return pod


def _llm_inference_service(obj: K8sObject, bases: tuple[str, ...] = (), own: Any = None) -> list[Pod]:
    spec: Any = obj.data.get("spec") if isinstance(obj.data.get("spec"), dict) else {}
    replicas = integer(spec.get("replicas"), 1)
    prefill: Any = spec.get("prefill")
    pd = isinstance(prefill, dict)
    decode = _llm_preset(spec, spec.get("parallelism"), "decode" if pd else "")
    out = [
        _llm_pod(obj, ("spec", "template"), "decode" if pd else "", replicas, decode, bases, own),
        _llm_pod(obj, ("spec", "worker"), "worker", None, decode, bases, own),
    ]
    if pd:
        pre = _llm_preset(prefill, prefill.get("parallelism"), "prefill")
        replicas = integer(prefill.get("replicas"), 1)
        out.append(_llm_pod(obj, ("spec", "prefill", "template"), "prefill", replicas, pre, bases, own))
        out.append(_llm_pod(obj, ("spec", "prefill", "worker"), "prefill-worker", None, pre, bases, own))
    return [t for t in out if t is not None and t.has_containers]


def llm_service_with_bases(obj: K8sObject, configs: list[tuple[str, Any]]) -> list[Pod]:
    """The pods of an LLMInferenceService whose ``baseRefs`` name the LLMInferenceServiceConfigs
    ``configs`` (name, spec), in order: their specs merged in that order, the service's over them
    (combineBaseRefsConfig; the well-known presets under all of them as without baseRefs). Paths are
    the service's: what only a config has is found at the service's nearest field, a container or
    volume only a config has at ``spec.baseRefs``."""
    spec: Any = obj.data.get("spec") if isinstance(obj.data.get("spec"), dict) else {}
    merged: Any = {}
    for _, cfg in configs:
        merged = strategic_merge(merged, cfg if isinstance(cfg, dict) else {})
    merged = strategic_merge(merged, spec)
    view = K8sObject({**obj.data, "spec": merged}, obj.root, obj.base, obj.ref, obj.file, obj.document)
    return _llm_inference_service(view, tuple(name for name, _ in configs), spec)


def _llm_inference_service_config(obj: K8sObject) -> list[Pod]:
    """A preset or a user's config: its parts as written, shared (the service sets the priority)."""
    out = [
        pod_spec_at(obj, ("spec", "template"), "", None, shared=True),
        pod_spec_at(obj, ("spec", "worker"), "worker", None, shared=True),
        pod_spec_at(obj, ("spec", "prefill", "template"), "prefill", None, shared=True),
        pod_spec_at(obj, ("spec", "prefill", "worker"), "prefill-worker", None, shared=True),
    ]
    return [t for t in out if t is not None and t.has_containers]


KINDS: dict[tuple[str, str], KindInfo] = {
    ("serving.kserve.io", "InferenceService"): KindInfo(none, False, _inference_service),
    ("serving.kserve.io", "ServingRuntime"): KindInfo(none, False, _serving_runtime),
    ("serving.kserve.io", "ClusterServingRuntime"): KindInfo(none, False, _serving_runtime),
    ("serving.kserve.io", "LLMInferenceService"): KindInfo(none, False, _llm_inference_service),
    ("serving.kserve.io", "LLMInferenceServiceConfig"): KindInfo(none, False, _llm_inference_service_config),
}
