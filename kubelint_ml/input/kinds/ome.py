"""OME (``ome.io/v1beta1`` InferenceService, ServingRuntime, ClusterServingRuntime; sgl-project/ome
v0.1.5, commit 17b77eda: the types in ``pkg/apis/ome/v1beta1`` (``inference_service.go``,
``servingruntime_types.go``, ``podspec.go``) and the pods the controller builds in
``pkg/controller/v1beta1/inferenceservice``: ``components/engine.go``, ``decoder.go``, ``router.go``,
``reconcilers/common/podspec_reconciler.go`` and ``utils/merging.go``; the deprecated ``predictor`` as
``pkg/webhook/admission/isvc/inference_service_defaults.go`` migrates it).

Each component is one pod: the engine (``engine``; a runtime's ``engineConfig``), the decoder of a
prefill/decode split (``decoder``; ``decoderConfig``) and the router (``router``; ``routerConfig``).
The component inlines a PodSpec (``containers``, ``volumes``, ``priorityClassName``, ``nodeSelector``,
...) and its ``runner`` is the serving container: merged over the container of the same name, else
added after the component's containers (``resolveContainer``, ``MergeRuntimeContainers``: the runner's
fields over the container's, their ``args`` concatenated). ``labels`` and ``annotations`` are the
pod's; replicas are ``minReplicas`` (1 when unset). With a ``leader`` or a ``worker`` the engine or
decoder is multi-node (a LeaderWorkerSet): the leader pod is ``leader`` (its PodSpec and runner; the
component's own when there is no leader) and each replica has ``worker.size`` worker pods of
``worker`` (``reconcileWorkerPodSpec``; size 1 when unset). A runtime's legacy top-level
``containers`` (``ServingRuntimePodSpec``) and ``workers`` are judged as written.

A (Cluster)ServingRuntime is a shared definition: the InferenceServices that select it set the
priority, and one that sets no resources leaves them to the services too (as KServe's ServingRuntime).
An InferenceService's components are merged over those of the runtime ``spec.runtime.name`` names
when it is among the inputs (:func:`service_with_runtime`); without it, a component is the user's
override of the runtime's: where the runner has no image the runtime completes it, so the pod is partial
and only said (``accelerator-workload-not-judged`` when it asks for an accelerator). Not modelled: the
runtime OME selects by the model (``SelectRuntime``), the AcceleratorClass resources and node selectors
the controller adds (``MergeResource``, ``MergeNodeSelector``), the BaseModel's volume mounts, and the
model-config ``acceleratorConfig`` argument overrides.
"""

from __future__ import annotations

from typing import Any

from kubelint_ml.input.kinds.base import KindInfo, Pod, integer, listed, none, strategic_merge
from kubelint_ml.input.objects import K8sObject, dig

# The fields of a component that are not its pod's (ComponentExtensionSpec, the runner, the
# multi-node parts, the router's config, the accelerator selection; WorkerPodSpec's size).
_NOT_POD = frozenset(
    {
        "minReplicas",
        "maxReplicas",
        "scaleTarget",
        "scaleMetric",
        "containerConcurrency",
        "timeoutSeconds",
        "canaryTrafficPercent",
        "labels",
        "annotations",
        "minAvailable",
        "maxUnavailable",
        "deploymentStrategy",
        "kedaConfig",
        "runner",
        "leader",
        "worker",
        "acceleratorOverride",
        "config",
        "size",
        "workerSpec",  # the deprecated predictor's worker
        "model",
    }
)


def _merged(container: dict, runner: dict) -> dict:
    """MergeRuntimeContainers: the runner's fields over the container's, args concatenated."""
    out = {**container, **runner}
    if isinstance(container.get("args"), list) and isinstance(runner.get("args"), list):
        out["args"] = [*container["args"], *runner["args"]]
    return out


def _part(node: Any, path: tuple, role: str, replicas: int | None, shared: bool, meta: Any = None) -> Pod | None:
    """The pod of a component (or of its leader or worker) at ``path``: its PodSpec with its runner."""
    if not isinstance(node, dict):
        return None
    containers = listed(node.get("containers"), path + ("containers",))
    runner = node.get("runner")
    if isinstance(runner, dict):
        name = runner.get("name")
        same = [i for i, (c, _) in enumerate(containers) if isinstance(c, dict) and c.get("name") == name]
        if same:
            containers[same[0]] = (_merged(containers[same[0]][0], runner), path + ("runner",))
        else:
            containers.append((runner, path + ("runner",)))
    meta = node if meta is None else meta
    pod = Pod(
        path,
        {k: v for k, v in node.items() if k not in _NOT_POD},
        role,
        replicas,
        containers,
        init=listed(node.get("initContainers"), path + ("initContainers",)),
        volumes=listed(node.get("volumes"), path + ("volumes",)),
        metadata={"labels": meta.get("labels"), "annotations": meta.get("annotations")},
        renames=[(path + ("metadata",), path)],
        shared=shared,
    )
    return pod if pod.has_containers else None


def _component(node: Any, path: tuple, role: str, shared: bool, worker_key: str = "worker") -> list[Pod | None]:
    if not isinstance(node, dict):
        return []
    replicas = integer(node.get("minReplicas"), 1)
    leader, worker = node.get("leader"), node.get(worker_key)
    if leader is None and worker is None:
        return [_part(node, path, role, replicas, shared)]
    out = [
        _part(leader, path + ("leader",), f"{role}-leader", replicas, shared, node)
        if isinstance(leader, dict)
        else _part(node, path, f"{role}-leader", replicas, shared)
    ]
    if isinstance(worker, dict):
        size = integer(worker.get("size"), 1)
        count = replicas * size if replicas is not None and size is not None else None
        out.append(_part(worker, path + (worker_key,), f"{role}-worker", count, shared, node))
    return out


def _inference_service(obj: K8sObject) -> list[Pod]:
    spec = obj.data.get("spec")
    if not isinstance(spec, dict):
        return []
    pods = [
        pod for key in ("engine", "decoder", "router") for pod in _component(spec.get(key), ("spec", key), key, False)
    ]
    if spec.get("engine") is None:
        # the deprecated predictor: the defaulting webhook makes it the engine (its PodSpec and containers,
        # the one named like ome-container the runner, its workerSpec the worker; migrateFromPredictorToNewArchitecture)
        pods += _component(spec.get("predictor"), ("spec", "predictor"), "engine", False, "workerSpec")
    return [p for p in pods if p is not None]


# The runtime's component for each of the service's (MergeRuntimeSpecs).
_CONFIGS = (("engine", "engineConfig"), ("decoder", "decoderConfig"), ("router", "routerConfig"))


def service_with_runtime(obj: K8sObject, name: str, runtime: Any) -> list[Pod]:
    """The pods of an InferenceService merged over the (Cluster)ServingRuntime ``runtime`` (its spec)
    that ``spec.runtime.name`` names (MergeEngineSpec, MergeDecoderSpec, MergeRouterSpec: each of the
    service's components strategic-merged over the runtime's; a component the service leaves out is
    not deployed). Paths are the service's: a field only the runtime has is found at the service's
    nearest field, and a container or volume only the runtime has at ``spec.runtime``, with no fix
    offered there (the runtime is shared: fix it there, or override it in the service)."""
    spec = obj.data.get("spec")
    if not isinstance(spec, dict) or not isinstance(runtime, dict):
        return _inference_service(obj)
    merged = dict(spec)
    for key, config in _CONFIGS:
        if isinstance(spec.get(key), dict) and isinstance(runtime.get(config), dict):
            merged[key] = strategic_merge(runtime[config], spec[key])
    view = K8sObject({**obj.data, "spec": merged}, obj.root, obj.base, obj.ref, obj.file, obj.document)
    pods = _inference_service(view)
    where = ("spec", "runtime")
    for pod in pods:
        foreign = []
        for items in (pod.containers, pod.volumes):
            for item, ipath in items:
                if dig(obj.data, *ipath) is None:
                    pod.renames.append((ipath, where))
                    what = item.get("name") if isinstance(item, dict) else None
                    foreign.append(
                        (ipath, f"'{what}' is the runtime {name}'s: fix it there, or override it in the service")
                    )
        pod.cache["assumed"] = f"as OME merges its {pod.role} over the runtime {name}"
        if foreign:
            pod.cache["foreign"] = foreign
        if any(_sets_resources(c) for c, cpath in pod.containers if dig(obj.data, *cpath) is None):
            # the runtime's own containers and volumes are judged in the runtime (it sets resources, so
            # it is judged alone): their findings are not repeated on every service that names it
            pod.cache["elsewhere"] = [p for p, _ in foreign]
    return pods


def _sets_resources(container: Any) -> bool:
    res = container.get("resources") if isinstance(container, dict) else None
    return isinstance(res, dict) and any(isinstance(res.get(k), dict) and res[k] for k in ("requests", "limits"))


def without_runtime(obj: K8sObject) -> str:
    """For ``--verbose``: why a service whose runtime is not among the inputs has no pods judged."""
    name = dig(obj.data, "spec", "runtime", "name")
    if isinstance(name, str) and name:
        return (
            f"its pods are completed by the runtime {name}, not among the inputs: give its (Cluster)ServingRuntime "
            "with --context to judge them"
        )
    return (
        "OME selects its runtime by the model (not modelled here): its pods are judged when spec.runtime names a "
        "runtime given with --context"
    )


def _serving_runtime(obj: K8sObject) -> list[Pod]:
    spec = obj.data.get("spec")
    if not isinstance(spec, dict):
        return []
    pods = [
        pod
        for key, role in (("engineConfig", "engine"), ("decoderConfig", "decoder"), ("routerConfig", "router"))
        for pod in _component(spec.get(key), ("spec", key), role, True)
    ]
    # the legacy ServingRuntimePodSpec at the top of the spec, and its workers
    legacy = {k: v for k, v in spec.items() if k not in ("engineConfig", "decoderConfig", "routerConfig", "workers")}
    pods.append(_part(legacy, ("spec",), "", 1, True))
    workers = spec.get("workers")
    if isinstance(workers, dict):
        pods.append(_part(workers, ("spec", "workers"), "worker", integer(workers.get("size"), 1), True))
    return [p for p in pods if p is not None]


KINDS: dict[tuple[str, str], KindInfo] = {
    ("ome.io", "InferenceService"): KindInfo(none, False, _inference_service),
    ("ome.io", "ServingRuntime"): KindInfo(none, False, _serving_runtime),
    ("ome.io", "ClusterServingRuntime"): KindInfo(none, False, _serving_runtime),
}
